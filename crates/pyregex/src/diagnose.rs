//! Diagnostics for patterns that did not match: which element of the pattern source could not
//! match next, and which top-level alternative a match took.
//!
//! This is a separate, slow path for explanations. It never touches the matcher: it cuts the
//! pattern source into elements (atoms with their quantifiers, groups, alternatives), compiles
//! growing prefixes of a sequence of elements and matches each at the start position. The first
//! prefix that no longer matches ends with the element that could not match; a group is then
//! searched inside the same way.

use std::ops::Range;
use std::time::Instant;

use crate::{Regex, RegexError};

/// Where a match attempt at one position got stuck.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// The byte range in the pattern source of the element that could not match next.
    pub element: Range<usize>,
    /// The byte offset in the text where that element was tried (the end of what the elements
    /// before it matched).
    pub at: usize,
}

/// One element of a sequence: an atom with its quantifier, or a group.
#[derive(Clone, Debug)]
struct Elem {
    span: Range<usize>,
    /// For a group whose body may be searched inside: the opener's end and the body.
    body: Option<Range<usize>>,
}

impl Regex {
    /// For a match attempt at `start` that fails: the pattern element that could not match
    /// next and where in `hay` it was tried. `None` when the pattern matches at `start`, or when
    /// `deadline` passed before an answer (the probes are compiled and run one after another).
    pub fn stuck_at(
        &self,
        hay: &str,
        start: usize,
        deadline: Instant,
    ) -> Result<Option<Stuck>, RegexError> {
        if self.match_at(hay, start)?.is_some() {
            return Ok(None);
        }
        let src = self.as_str();
        let probe = Probe {
            re: self,
            hay,
            start,
            deadline,
        };
        probe.alternatives(src, 0..src.len(), "", 0)
    }

    /// The byte ranges in the pattern source of its top-level alternatives (one range, the
    /// whole source, when the pattern has no top-level `|`).
    pub fn alternatives(&self) -> Vec<Range<usize>> {
        let src = self.as_str();
        split(src, 0..src.len())
            .into_iter()
            .map(|(r, _)| r)
            .collect()
    }

    /// Which top-level alternative (an index into [`Regex::alternatives`]) matches at `start`
    /// with exactly the span `start..end`, trying them in order; `None` when the pattern has a
    /// single alternative or no alternative alone reproduces the match.
    pub fn matching_alternative(&self, hay: &str, start: usize, end: usize) -> Option<usize> {
        let alts = self.alternatives();
        if alts.len() < 2 {
            return None;
        }
        alts.iter().position(|r| {
            Regex::new(&self.as_str()[r.clone()], self.inner.flags)
                .ok()
                .and_then(|re| re.match_at(hay, start).ok().flatten())
                .is_some_and(|m| m.end() == end)
        })
    }
}

struct Probe<'a> {
    re: &'a Regex,
    hay: &'a str,
    start: usize,
    deadline: Instant,
}

impl Probe<'_> {
    /// The stuck point of the alternatives in `range`, probed after `head` inside `depth`
    /// unclosed groups: the alternative that got farthest (the first of those).
    fn alternatives(
        &self,
        src: &str,
        range: Range<usize>,
        head: &str,
        depth: usize,
    ) -> Result<Option<Stuck>, RegexError> {
        let mut best: Option<Stuck> = None;
        for (_, elems) in split(src, range) {
            if Instant::now() > self.deadline {
                return Ok(None);
            }
            if let Some(s) = self.sequence(src, &elems, head, depth)?
                && best.as_ref().is_none_or(|b| s.at > b.at)
            {
                best = Some(s);
            }
        }
        Ok(best)
    }

    /// Where the sequence `elems` stops matching; `None` when it matches whole.
    fn sequence(
        &self,
        src: &str,
        elems: &[Elem],
        head: &str,
        depth: usize,
    ) -> Result<Option<Stuck>, RegexError> {
        let Some(first) = elems.first() else {
            return Ok(None);
        };
        let mut at = self.start;
        for e in elems {
            if Instant::now() > self.deadline {
                return Ok(None);
            }
            let pattern = format!(
                "{head}{}{}",
                &src[first.span.start..e.span.end],
                ")".repeat(depth)
            );
            match self.try_match(&pattern)? {
                Some(end) => at = end,
                None => {
                    if let Some(body) = &e.body {
                        let inner = format!("{head}{}", &src[first.span.start..body.start]);
                        if let Some(s) = self.alternatives(src, body.clone(), &inner, depth + 1)? {
                            return Ok(Some(s));
                        }
                    }
                    return Ok(Some(Stuck {
                        element: e.span.clone(),
                        at,
                    }));
                }
            }
        }
        Ok(None)
    }

    /// The end of the match of `pattern` at the start, if it compiles and matches.
    fn try_match(&self, pattern: &str) -> Result<Option<usize>, RegexError> {
        let Ok(re) = Regex::new(pattern, self.re.inner.flags) else {
            return Ok(None);
        };
        Ok(re.match_at(self.hay, self.start)?.map(|m| m.end()))
    }
}

/// The alternatives of `src[range]`, each with its elements.
fn split(src: &str, range: Range<usize>) -> Vec<(Range<usize>, Vec<Elem>)> {
    let b = src.as_bytes();
    let end = range.end;
    let mut alts = Vec::new();
    let mut alt_start = range.start;
    let mut elems = Vec::new();
    let mut i = range.start;
    while i < end {
        let (j, body) = match b[i] {
            b'|' => {
                alts.push((alt_start..i, std::mem::take(&mut elems)));
                i += 1;
                alt_start = i;
                continue;
            }
            b'(' => {
                let j = group_end(b, i, end);
                let body = group_body(src, i, j);
                (j, body)
            }
            b'[' => (class_end(b, i, end), None),
            b'\\' => (escape_end(src, i, end), None),
            _ => (next_char(src, i), None),
        };
        let j = quantifier_end(b, j, end);
        elems.push(Elem { span: i..j, body });
        i = j;
    }
    alts.push((alt_start..end, elems));
    alts
}

fn next_char(src: &str, i: usize) -> usize {
    i + src[i..].chars().next().map_or(1, char::len_utf8)
}

/// Just past the `)` closing the group opened at `i` (or `end` when it is unclosed).
fn group_end(b: &[u8], i: usize, end: usize) -> usize {
    let mut depth = 0usize;
    let mut k = i;
    while k < end {
        match b[k] {
            b'\\' => k += 2,
            b'[' => k = class_end(b, k, end),
            b'(' => {
                depth += 1;
                k += 1;
            }
            b')' => {
                depth -= 1;
                k += 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => k += 1,
        }
    }
    end
}

/// The body of a group spanning `i..j` that matches text in sequence (capturing, non-capturing,
/// named, atomic, scoped flags); lookarounds, comments and the like are not searched inside.
fn group_body(src: &str, i: usize, j: usize) -> Option<Range<usize>> {
    let s = &src[i..j];
    if !s.ends_with(')') || s.len() < 2 {
        return None;
    }
    let close = j - 1;
    let rest = &s[1..];
    let opener = if !rest.starts_with('?') {
        1
    } else if rest.starts_with("?:") || rest.starts_with("?>") {
        3
    } else if let Some(name) = rest.strip_prefix("?P<").or_else(|| {
        rest.strip_prefix("?<")
            .filter(|r| !r.starts_with(['=', '!']))
    }) {
        let gt = name.find('>')?;
        s.len() - name.len() + gt + 1
    } else {
        // Scoped flags: `(?i:...)`, `(?-s:...)`.
        let flags = rest[1..].find(|c: char| !(c.is_ascii_alphabetic() || c == '-'))?;
        if rest[1 + flags..].starts_with(':') && flags > 0 {
            2 + flags + 1
        } else {
            return None;
        }
    };
    (i + opener <= close).then(|| i + opener..close)
}

/// Just past the character class opened at `i`.
fn class_end(b: &[u8], i: usize, end: usize) -> usize {
    let mut k = i + 1;
    if k < end && b[k] == b'^' {
        k += 1;
    }
    if k < end && b[k] == b']' {
        k += 1;
    }
    while k < end {
        match b[k] {
            b'\\' => k += 2,
            b']' => return k + 1,
            _ => k += 1,
        }
    }
    end
}

/// Just past the escape at `i`.
fn escape_end(src: &str, i: usize, end: usize) -> usize {
    let b = src.as_bytes();
    if i + 1 >= end {
        return end;
    }
    let c = src[i + 1..].chars().next().unwrap_or('\\');
    let mut k = i + 1 + c.len_utf8();
    let hex = |k: usize, n: usize| {
        let mut k = k;
        let mut taken = 0;
        while k < end && taken < n && b[k].is_ascii_hexdigit() {
            k += 1;
            taken += 1;
        }
        k
    };
    let until = |k: usize, open: u8, close: u8| {
        if k < end && b[k] == open {
            b[k..end]
                .iter()
                .position(|&x| x == close)
                .map_or(end, |p| k + p + 1)
        } else {
            k
        }
    };
    match c {
        'x' => k = hex(k, 2),
        'u' => k = hex(k, 4),
        'U' => k = hex(k, 8),
        'N' | 'p' | 'P' => k = until(k, b'{', b'}'),
        'g' => k = until(k, b'<', b'>'),
        '0'..='9' => {
            let mut n = 0;
            while k < end && n < 2 && b[k].is_ascii_digit() {
                k += 1;
                n += 1;
            }
        }
        _ => {}
    }
    k.min(end)
}

/// Just past the quantifier (if any) after an atom ending at `j`.
fn quantifier_end(b: &[u8], j: usize, end: usize) -> usize {
    let mut k = j;
    if k >= end {
        return k;
    }
    match b[k] {
        b'*' | b'+' | b'?' => k += 1,
        b'{' => {
            let mut m = k + 1;
            while m < end && (b[m].is_ascii_digit() || b[m] == b',') {
                m += 1;
            }
            if m < end && b[m] == b'}' {
                k = m + 1;
            } else {
                return k;
            }
        }
        _ => return k,
    }
    if k < end && (b[k] == b'?' || b[k] == b'+') {
        k += 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::{Flags, Regex};

    fn stuck(pattern: &str, hay: &str, start: usize) -> Option<(String, usize)> {
        let re = Regex::new(pattern, Flags { dotall: true }).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        re.stuck_at(hay, start, deadline)
            .unwrap()
            .map(|s| (pattern[s.element].to_string(), s.at))
    }

    #[test]
    fn the_element_that_could_not_match_is_named() {
        assert_eq!(
            stuck(
                r"<tool_call>\s*(?P<x>\{.*?\})\s*</tool_call>",
                "<tool_cal>{}",
                0
            ),
            Some(("l".into(), 9))
        );
        // Inside a group: the element of the body that failed.
        assert_eq!(
            stuck(r"<a>(?P<x>\{\d+\})", "<a>{12x}", 0),
            Some((r"\}".into(), 6))
        );
        // The alternative that got farthest.
        assert_eq!(stuck("ab|acd", "acx", 0), Some(("d".into(), 2)));
        assert_eq!(stuck("ab", "ab", 0), None);
    }

    #[test]
    fn elements_keep_escapes_classes_and_quantifiers_whole() {
        assert_eq!(
            stuck(r"\x41[\]x]{2,3}?\u0042", "A]]C", 0),
            Some((r"\u0042".into(), 3))
        );
        assert_eq!(stuck(r"(?:ab)+c", "ababd", 0), Some(("c".into(), 4)));
    }

    #[test]
    fn alternatives_and_the_one_that_matched() {
        let re = Regex::new("<|tool_call_begin|>", Flags { dotall: true }).unwrap();
        let src = re.as_str();
        let alts: Vec<&str> = re.alternatives().into_iter().map(|r| &src[r]).collect();
        assert_eq!(alts, ["<", "tool_call_begin", ">"]);
        assert_eq!(re.matching_alternative("a<b", 1, 2), Some(0));
        assert_eq!(re.matching_alternative("a>b", 1, 2), Some(2));
        let re = Regex::new("a(b|c)", Flags { dotall: true }).unwrap();
        assert_eq!(re.alternatives(), vec![0..6]);
        assert_eq!(re.matching_alternative("ab", 0, 2), None);
    }
}
