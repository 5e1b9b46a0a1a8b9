//! The other runtimes' regex engines, compiled from a translated pattern and searched the way
//! the reference's `pattern.search(text, pos)` is called: from a start position, with the text
//! before it visible to lookbehinds and `^` meaning the start of the whole text.

use std::sync::mpsc;
use std::time::Duration;

use pyregex::hook::Spans;

use crate::translate::Translated;

/// fancy-regex's backtracking limit per search (its default is a million steps).
const FANCY_BACKTRACK_LIMIT: usize = 200_000;
/// How long one ECMAScript search may run: regress has no step limit, so a search that takes
/// longer is abandoned (its thread is left to finish on its own) and reported as given up.
const ECMASCRIPT_TIME_LIMIT: Duration = Duration::from_millis(500);
/// Compiled-size limit for the Rust `regex` engine (expanded Unicode classes are large).
const REGEX_SIZE_LIMIT: usize = 50 << 20;

pub use crate::kind::EngineKind;

enum Inner {
    Regex(regex::Regex),
    Fancy(fancy_regex::Regex),
    Ecma(std::sync::Arc<regress::Regex>),
    #[cfg(feature = "pcre2")]
    Pcre2(pcre2::bytes::Regex),
}

/// A translated pattern compiled by its engine.
pub struct Compiled {
    inner: Inner,
    /// The reference's group number of each engine group.
    groups: Vec<u32>,
    /// The reference's number of groups (spans are reported in its numbering).
    group_count: u32,
    /// The pattern as written in the engine's syntax (shown in the report's translations).
    pub translated: String,
}

impl Compiled {
    /// Compiles `t` for `engine`; the error is the engine's own message.
    pub fn new(engine: EngineKind, t: &Translated, group_count: u32) -> Result<Compiled, String> {
        let inner = match engine {
            EngineKind::Regex => Inner::Regex(
                regex::RegexBuilder::new(&t.pattern)
                    .size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| e.to_string())?,
            ),
            EngineKind::FancyRegex => Inner::Fancy(
                fancy_regex::RegexBuilder::new(&t.pattern)
                    .backtrack_limit(FANCY_BACKTRACK_LIMIT)
                    .delegate_size_limit(REGEX_SIZE_LIMIT)
                    .build()
                    .map_err(|e| e.to_string())?,
            ),
            EngineKind::Ecmascript => {
                let flags = regress::Flags {
                    icase: t.ignore_case,
                    dot_all: true,
                    unicode: true,
                    ..regress::Flags::default()
                };
                Inner::Ecma(std::sync::Arc::new(
                    regress::Regex::with_flags(&t.pattern, flags).map_err(|e| e.to_string())?,
                ))
            }
            #[cfg(feature = "pcre2")]
            EngineKind::Pcre2 => Inner::Pcre2(
                pcre2::bytes::RegexBuilder::new()
                    .utf(true)
                    .ucp(true)
                    .build(&t.pattern)
                    .map_err(|e| e.to_string())?,
            ),
            #[cfg(not(feature = "pcre2"))]
            EngineKind::Pcre2 => return Err("PCRE2 is not in this build (feature `pcre2`)".into()),
        };
        Ok(Compiled {
            inner,
            groups: t.groups.clone(),
            group_count,
            translated: t.pattern.clone(),
        })
    }

    /// The leftmost match starting at or after `pos`, with spans in the reference's group
    /// numbering. An error means the engine gave up (a limit), not that nothing matched.
    pub fn search(&self, hay: &str, pos: usize) -> Result<Option<Spans>, String> {
        if pos > hay.len() || !hay.is_char_boundary(pos) {
            return Ok(None);
        }
        let engine_spans: Option<Spans> = match &self.inner {
            Inner::Regex(re) => re
                .captures_at(hay, pos)
                .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect()),
            Inner::Fancy(re) => re
                .captures_from_pos(hay, pos)
                .map_err(|e| format!("fancy-regex gave up: {e}"))?
                .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect()),
            Inner::Ecma(re) => ecma_search(re, hay, pos)?,
            #[cfg(feature = "pcre2")]
            Inner::Pcre2(re) => {
                let mut locs = re.capture_locations();
                re.captures_read_at(&mut locs, hay.as_bytes(), pos)
                    .map_err(|e| format!("PCRE2 gave up: {e}"))?
                    .map(|_| (0..locs.len()).map(|i| locs.get(i)).collect())
            }
        };
        Ok(engine_spans.map(|s| self.to_reference(&s)))
    }

    /// A match starting exactly at `pos` (the leftmost match from `pos`, if it starts there).
    pub fn match_at(&self, hay: &str, pos: usize) -> Result<Option<Spans>, String> {
        Ok(self
            .search(hay, pos)?
            .filter(|s| s.first().copied().flatten().is_some_and(|(a, _)| a == pos)))
    }

    /// Every non-overlapping match, as the reference's `finditer` steps (an empty match makes
    /// the next search start one character later).
    pub fn find_all(&self, hay: &str) -> Result<Vec<Spans>, String> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos <= hay.len() {
            let Some(s) = self.search(hay, pos)? else {
                break;
            };
            let Some((a, b)) = s.first().copied().flatten() else {
                break;
            };
            out.push(s);
            pos = if b > a {
                b
            } else {
                match hay[b..].chars().next() {
                    Some(c) => b + c.len_utf8(),
                    None => break,
                }
            };
            if out.len() > hay.len() + 1 {
                break;
            }
        }
        Ok(out)
    }

    fn to_reference(&self, engine: &[Option<(usize, usize)>]) -> Spans {
        let mut spans: Spans = vec![None; self.group_count as usize + 1];
        spans[0] = engine.first().copied().flatten();
        for (k, g) in self.groups.iter().enumerate() {
            if let Some(Some(span)) = engine.get(k + 1)
                && let Some(slot) = spans.get_mut(*g as usize)
            {
                *slot = Some(*span);
            }
        }
        spans
    }
}

/// One regress search, abandoned after [`ECMASCRIPT_TIME_LIMIT`].
fn ecma_search(
    re: &std::sync::Arc<regress::Regex>,
    hay: &str,
    pos: usize,
) -> Result<Option<Spans>, String> {
    let run = move |re: &regress::Regex, hay: &str| {
        re.find_from(hay, pos).next().map(|m| {
            let mut v = vec![Some((m.start(), m.end()))];
            v.extend(
                m.captures
                    .iter()
                    .map(|c| c.as_ref().map(|r| (r.start, r.end))),
            );
            v
        })
    };
    let (tx, rx) = mpsc::channel();
    let re2 = std::sync::Arc::clone(re);
    let owned = hay.to_string();
    std::thread::spawn(move || {
        let _ = tx.send(run(&re2, &owned));
    });
    rx.recv_timeout(ECMASCRIPT_TIME_LIMIT)
        .map_err(|_| "the ECMAScript engine gave up (time limit)".to_string())
}
