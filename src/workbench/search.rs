//! Search in the raw text (`/`): literal or regex, with every match found once so the raw pane
//! can highlight them and `n` / `N` can step through them.
//!
//! Both kinds run on rtbench's own Python-compatible regex engine, so a regex search means
//! what it would mean in a template (`\w` is Unicode, `.` crosses lines as with `DOTALL`), and
//! a literal search is the escaped text. A literal without capitals ignores case (smart case,
//! as in vim, ripgrep and lazygit).

use std::ops::Range;

use pyregex::{Flags, Regex, escape};

/// Matches kept at most (a search for `a` in a 10 MB text stays quick to draw).
pub(crate) const MAX_MATCHES: usize = 100_000;

/// A search and its matches in the document searched.
#[derive(Clone, Debug, PartialEq)]
pub struct Search {
    pub query: String,
    pub regex: bool,
    /// Non-empty matches, in order (byte ranges of the document).
    pub matches: Vec<Range<usize>>,
    /// The match the cursor was last moved to.
    pub current: Option<usize>,
    /// More than [`MAX_MATCHES`] matched: only the first ones are kept.
    pub truncated: bool,
    /// The document the matches belong to (its length and name), so a new parse searches again.
    pub searched: (String, usize),
}

impl Search {
    /// Searches `doc` for `query`.
    pub fn run(query: &str, regex: bool, doc: &str, name: &str) -> Result<Search, String> {
        let pattern = if regex {
            query.to_string()
        } else if query.chars().any(char::is_uppercase) {
            escape(query)
        } else {
            format!("(?i){}", escape(query))
        };
        let re = Regex::new(&pattern, Flags::default())
            .map_err(|e| format!("not a regex: {e} (Tab at the prompt: literal search)"))?;
        // The token-id decoder's defusing markers are not text a person reads: the search runs
        // over the text without them, and its matches are mapped back.
        let plain: std::borrow::Cow<'_, str> = if doc.contains(rtbench_engine::MARKER) {
            doc.replace(rtbench_engine::MARKER, "").into()
        } else {
            doc.into()
        };
        let markers: Vec<usize> = doc
            .match_indices(rtbench_engine::MARKER)
            .map(|(i, _)| i)
            .collect();
        // A plain offset's place in `doc`: after every marker that comes before it.
        let back = |p: usize| {
            let mut at = p;
            for &m in &markers {
                if m <= at {
                    at += rtbench_engine::MARKER.len_utf8();
                } else {
                    break;
                }
            }
            at
        };
        let mut matches = Vec::new();
        let mut truncated = false;
        for m in re.find_iter(&plain) {
            let m = m.map_err(|e| format!("search stopped: {e}"))?;
            if m.range().is_empty() {
                continue;
            }
            if matches.len() == MAX_MATCHES {
                truncated = true;
                break;
            }
            let r = m.range();
            matches.push(if markers.is_empty() {
                r
            } else {
                // The end maps through the match's last character (not past a marker after it).
                let (last, c) = plain[..r.end]
                    .char_indices()
                    .next_back()
                    .unwrap_or((r.start, ' '));
                back(r.start)..back(last) + c.len_utf8()
            });
        }
        Ok(Search {
            query: query.to_string(),
            regex,
            matches,
            current: None,
            truncated,
            searched: (name.to_string(), doc.len()),
        })
    }

    /// The index of the first match after `at` (forward) or before it (backward), wrapping
    /// around the ends.
    pub fn next_from(&self, at: usize, forward: bool) -> Option<usize> {
        if self.matches.is_empty() {
            return None;
        }
        let after = self.matches.partition_point(|m| m.start <= at);
        Some(if forward {
            if after == self.matches.len() {
                0
            } else {
                after
            }
        } else {
            let before = self.matches.partition_point(|m| m.start < at);
            if before == 0 {
                self.matches.len() - 1
            } else {
                before - 1
            }
        })
    }

    /// Whether byte `at` is in a match, and whether that match is the current one.
    pub fn at(&self, at: usize) -> Option<bool> {
        let i = self.matches.partition_point(|m| m.end <= at);
        let m = self.matches.get(i)?;
        m.contains(&at).then_some(Some(i) == self.current)
    }

    /// `3/17` (or `3/100000+`), or `no match`.
    pub fn position_label(&self) -> String {
        if self.matches.is_empty() {
            return "no match".into();
        }
        let more = if self.truncated { "+" } else { "" };
        match self.current {
            Some(i) => format!("{}/{}{more}", i + 1, self.matches.len()),
            None => format!("{}{more} matches", self.matches.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_search_is_smart_case_and_escapes_metacharacters() {
        let doc = "<tool_call>{\"a\": 1}</tool_call> Tool_call tool.call";
        let s = Search::run("tool_call", false, doc, "x").unwrap();
        assert_eq!(s.matches, [1..10, 21..30, 32..41]);
        let s = Search::run("Tool_call", false, doc, "x").unwrap();
        assert_eq!(s.matches, vec![32..41]);
        let s = Search::run("tool.call", false, doc, "x").unwrap();
        assert_eq!(s.matches, vec![42..51], "the dot is literal");
    }

    #[test]
    fn regex_search_uses_python_syntax_and_unicode_classes() {
        let doc = "café <think>a\nb</think>";
        let s = Search::run(r"\w+", true, doc, "x").unwrap();
        assert_eq!(&doc[s.matches[0].clone()], "café");
        let s = Search::run("<think>.*</think>", true, doc, "x").unwrap();
        assert_eq!(s.matches, vec![6..doc.len()], "dot crosses lines");
        let s = Search::run("(?P<x>b)<", true, doc, "x").unwrap();
        assert_eq!(s.matches.len(), 1);
        // Empty matches are skipped; bad patterns are an error.
        assert!(Search::run("^", true, doc, "x").unwrap().matches.is_empty());
        assert!(
            Search::run("(", true, doc, "x")
                .unwrap_err()
                .contains("not a regex")
        );
    }

    #[test]
    fn a_defused_spelling_is_found_as_it_reads() {
        let m = rtbench_engine::MARKER;
        let doc = format!("say <{m}t{m}o{m}o{m}l{m}> now, <tool> too");
        let s = Search::run("<tool>", false, &doc, "d").unwrap();
        let found: Vec<String> = s
            .matches
            .iter()
            .map(|r| doc[r.clone()].replace(m, ""))
            .collect();
        assert_eq!(found, ["<tool>", "<tool>"]);
        assert_eq!(s.matches[0].start, 4);
        assert!(doc[s.matches[0].clone()].ends_with('>'));
    }

    #[test]
    fn next_and_previous_wrap_around() {
        let s = Search::run("ab", false, "ab ab ab", "x").unwrap();
        assert_eq!(s.next_from(0, true), Some(1));
        assert_eq!(s.next_from(6, true), Some(0), "wraps to the first");
        assert_eq!(s.next_from(3, false), Some(0));
        assert_eq!(s.next_from(0, false), Some(2), "wraps to the last");
        assert_eq!(s.at(4), Some(false));
        assert_eq!(s.at(2), None);
        let mut s = s;
        s.current = Some(1);
        assert_eq!(s.at(3), Some(true));
        assert_eq!(s.position_label(), "2/3");
    }
}
