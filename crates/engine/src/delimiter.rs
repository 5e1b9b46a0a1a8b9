//! Delimiters: the literal strings or Python patterns that open and close regions, and the
//! reference's rules for deciding, on a growing buffer, whether a delimiter has matched, might
//! still match (pending, so text must be held back), or cannot match.
//!
//! Literal delimiters are matched leftmost-longest (the private `matcher` module), which is what the
//! reference's longest-first alternation of escaped literals does. Pattern delimiters use the
//! Python-pattern engine in [`pyregex`].

use std::ops::Range;

mod matcher;

use crate::value::{SURROGATE_BASE, Value, surrogate_of};
use pyregex::{Flags, Partial, Regex, RegexError};

/// How long [`Delimiter::nearest_partial`] may search a pattern delimiter.
const NEAREST_PARTIAL_TIME: std::time::Duration = std::time::Duration::from_millis(300);

/// A compiled delimiter.
#[derive(Clone, Debug)]
pub enum Delimiter {
    /// One or more literal strings (`open`, `close`, `start_anchor`).
    Literal(LiteralSet),
    /// A Python regular expression (`open_pattern`, `close_pattern`, `start_anchor_pattern`).
    Pattern(PatternDelimiter),
}

/// One or more literal strings, any of which matches.
#[derive(Clone, Debug)]
pub struct LiteralSet {
    /// The literals, duplicates removed, in the order the template gave them.
    pub literals: Vec<String>,
    /// Whether one literal is a strict prefix of another, so that a match at the end of the
    /// buffer could still grow into a longer one.
    pub can_extend: bool,
    matcher: matcher::Matcher,
    max_len: usize,
    /// For each long literal's matchable prefix, its KMP failure table (the length of the
    /// longest proper border of each prefix), so that the partial match at the buffer's end is
    /// found in one pass; short literals are compared directly.
    borders: Vec<Option<Vec<u32>>>,
    /// The length of the longest literal without a failure table (compared directly).
    short_max: usize,
    /// The short literals' matchable prefixes (see [`matchable_prefix`]), non-empty ones only:
    /// what a rest of the buffer may be a proper prefix of.
    short: Vec<Box<str>>,
    /// The bytes that start some short literal's matchable prefix, one bit each: most
    /// positions of the buffer's tail start none, and are passed over without comparing any
    /// literal.
    short_first: ByteSet,
    /// The bytes that start some literal's matchable prefix: text none of whose bytes is among
    /// them holds no match of any literal, nor the start of one.
    first: ByteSet,
}

/// A set of bytes, one bit each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteSet([u64; 4]);

impl ByteSet {
    /// Adds `b`.
    pub fn insert(&mut self, b: u8) {
        self.0[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    /// Whether `b` is in the set.
    pub fn contains(&self, b: u8) -> bool {
        self.0[usize::from(b >> 6)] >> (b & 63) & 1 == 1
    }

    /// Adds every byte of `other`.
    pub fn union(&mut self, other: &ByteSet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }

    /// Whether some byte of `text` is in the set.
    pub fn any_in(&self, text: &[u8]) -> bool {
        text.iter().any(|&b| self.contains(b))
    }
}

/// Literals at least this long get a failure table for the partial match.
const LONG_LITERAL: usize = 64;

/// The KMP failure table of `p`: entry `i` is the length of the longest proper prefix of
/// `p[..=i]` that is also its suffix.
fn failure_table(p: &[u8]) -> Vec<u32> {
    let mut t = vec![0u32; p.len()];
    let mut k = 0usize;
    for i in 1..p.len() {
        while k > 0 && p[i] != p[k] {
            k = t[k - 1] as usize;
        }
        if p[i] == p[k] {
            k += 1;
        }
        t[i] = k as u32;
    }
    t
}

/// The length of the longest suffix of `hay` that is a prefix of `p` (all of it included) and
/// no longer than `max` (the KMP automaton of `p` run over `hay`, then cut back along the
/// borders).
fn border_at_end(hay: &[u8], p: &[u8], table: &[u32], max: usize) -> usize {
    let mut k = 0usize;
    for &b in hay {
        while k > 0 && (k == p.len() || p[k] != b) {
            k = table[k - 1] as usize;
        }
        if k < p.len() && p[k] == b {
            k += 1;
        }
    }
    while k > max {
        k = table[k - 1] as usize;
    }
    k
}

/// A Python `regex` pattern compiled with DOTALL.
#[derive(Clone, Debug)]
pub struct PatternDelimiter {
    /// The compiled pattern.
    pub regex: Regex,
}

/// A complete delimiter match with its named captures (the pattern's `groupdict()`).
#[derive(Clone, Debug, PartialEq)]
pub struct DelimMatch {
    /// Byte offset of the match's start.
    pub start: usize,
    /// Byte offset just past the match.
    pub end: usize,
    /// Every named group in pattern order, `None` when the group did not take part.
    pub captures: Vec<(String, Option<String>)>,
}

impl DelimMatch {
    /// The matched byte range.
    pub fn span(&self) -> Range<usize> {
        self.start..self.end
    }

    /// Whether the match is empty.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

#[cfg(test)]
thread_local! {
    /// Bytes the literal searches of this thread have read (tests bound a stream's work).
    static LITERAL_READ: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What a delimiter's scans of one growing buffer keep between calls (see
/// [`Delimiter::scan_resuming`]).
#[derive(Clone, Debug, Default)]
pub struct ScanResume {
    /// For literals: the position of the last search that found nothing, and the buffer's
    /// length then.
    literal_clean: Option<(usize, usize)>,
    /// For patterns: what the partial search keeps.
    pattern: pyregex::Resume,
}

/// What a search for one delimiter found in the buffer from the current position.
#[derive(Clone, Debug, PartialEq)]
pub enum Scan {
    /// No match at all (only possible at end of stream).
    Nothing,
    /// A match may start here but cannot be committed yet: text from here on must be held.
    Pending(usize),
    /// A match that can be committed now.
    Complete(DelimMatch),
}

impl LiteralSet {
    /// Builds the set; `literals` must be non-empty and contain no empty strings.
    pub fn new(literals: Vec<String>) -> LiteralSet {
        // Whether one literal is a strict prefix of another: in sorted order, the literals that
        // extend one follow it directly, so neighbours tell (comparing all pairs was quadratic
        // in a list of thousands).
        let mut sorted: Vec<&str> = literals.iter().map(String::as_str).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let can_extend = sorted.windows(2).any(|w| w[1].starts_with(w[0]));
        // A literal holding a lone surrogate can never be found in text (the text's stand-in
        // code points are real characters): only its part before the surrogate can be pending.
        let matchable: Vec<&str> = literals
            .iter()
            .map(String::as_str)
            .filter(|l| matchable_prefix(l).len() == l.len())
            .collect();
        let matcher = matcher::Matcher::new(&matchable);
        let max_len = literals.iter().map(String::len).max().unwrap_or(0);
        let borders: Vec<Option<Vec<u32>>> = literals
            .iter()
            .map(|l| {
                let p = matchable_prefix(l);
                (p.len() >= LONG_LITERAL).then(|| failure_table(p.as_bytes()))
            })
            .collect();
        let short_max = literals
            .iter()
            .zip(&borders)
            .filter(|(_, t)| t.is_none())
            .map(|(l, _)| l.len())
            .max()
            .unwrap_or(0);
        let short: Vec<Box<str>> = literals
            .iter()
            .zip(&borders)
            .filter(|(_, t)| t.is_none())
            .map(|(l, _)| matchable_prefix(l))
            .filter(|p| !p.is_empty())
            .map(Box::from)
            .collect();
        let mut short_first = ByteSet::default();
        for p in &short {
            short_first.insert(p.as_bytes()[0]);
        }
        let mut first = ByteSet::default();
        for p in literals.iter().map(|l| matchable_prefix(l)) {
            if let Some(&b) = p.as_bytes().first() {
                first.insert(b);
            }
        }
        LiteralSet {
            literals,
            can_extend,
            matcher,
            max_len,
            borders,
            short_max,
            short,
            short_first,
            first,
        }
    }

    fn find(&self, hay: &str, pos: usize) -> Option<Range<usize>> {
        self.matcher.find(hay, pos)
    }

    /// The leftmost start `>= pos` from which the rest of `hay` is a proper prefix of some
    /// literal (the end of the buffer if there is none: the empty rest always qualifies).
    fn partial_start(&self, hay: &str, pos: usize) -> usize {
        let from = pos.max(hay.len().saturating_sub(self.max_len.saturating_sub(1)));
        let window = &hay.as_bytes()[from.min(hay.len())..];
        // Long literals: the longest suffix of the window that is a proper prefix, in one
        // pass (a suffix starting inside a character cannot be a prefix of a literal).
        let long = self
            .literals
            .iter()
            .zip(&self.borders)
            .filter_map(|(l, t)| {
                let t = t.as_ref()?;
                // The table is as long as the literal's matchable prefix.
                let k = border_at_end(window, &l.as_bytes()[..t.len()], t, window.len());
                (k > 0).then(|| hay.len() - k)
            })
            .min();
        let short_from = from.max(hay.len().saturating_sub(self.short_max));
        let bytes = hay.as_bytes();
        let short = (short_from..hay.len())
            .filter(|&s| self.short_first.contains(bytes[s]))
            .find(|&s| {
                let rest = &bytes[s..];
                self.short.iter().any(|p| p.as_bytes().starts_with(rest))
            });
        match (long, short) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(hay.len()),
        }
    }
}

/// The part of a literal before its first lone surrogate (all of it when it has none): the
/// most of it that text can contain.
fn matchable_prefix(literal: &str) -> &str {
    match literal
        .char_indices()
        .find(|&(_, c)| surrogate_of(c).is_some())
    {
        Some((i, _)) => &literal[..i],
        None => literal,
    }
}

impl PatternDelimiter {
    /// Compiles a pattern as the reference does (Python `regex`, DOTALL). Lone surrogates in
    /// the template's pattern match nothing, as in the reference.
    pub fn new(source: &str) -> Result<PatternDelimiter, RegexError> {
        Ok(PatternDelimiter {
            regex: Regex::with_surrogate_stand_ins(source, Flags { dotall: true }, SURROGATE_BASE)?,
        })
    }

    /// The pattern as the template wrote it.
    pub fn source(&self) -> &str {
        self.regex.as_str()
    }

    fn to_match(&self, hay: &str, m: &pyregex::Match) -> DelimMatch {
        DelimMatch {
            start: m.start(),
            end: m.end(),
            captures: self
                .regex
                .names()
                .iter()
                .map(|(name, idx)| (name.clone(), m.group(*idx).map(|r| hay[r].to_string())))
                .collect(),
        }
    }

    /// The reference's growth test for a complete match that ends before the buffer end: the
    /// stream is pretended to continue with a NUL character; if the match then moves or its
    /// captures change, it was relying on the buffer edge and must wait.
    fn can_grow_inside(&self, buf: &mut String, m: &DelimMatch) -> Result<bool, RegexError> {
        buf.push('\0');
        let extended = self.regex.match_at(buf, m.start);
        buf.pop();
        Ok(match extended? {
            None => true,
            Some(e) => {
                let e = self.to_match(buf, &e);
                e.span() != m.span() || e.captures != m.captures
            }
        })
    }
}

impl Delimiter {
    /// The bytes a match of the delimiter, or the start of one, may begin with: text appended
    /// to a buffer where nothing is pending, none of whose bytes is among them, holds neither.
    /// `None` for a pattern, which may begin anywhere.
    pub fn start_bytes(&self) -> Option<&ByteSet> {
        match self {
            Delimiter::Literal(set) => Some(&set.first),
            Delimiter::Pattern(_) => None,
        }
    }

    /// Searches `buf` from `pos` the way the reference's `_scan` does for one delimiter.
    ///
    /// Not at end of stream, a match that could still change with more input is reported as
    /// [`Scan::Pending`] at its start, as is the leftmost partial match when there is no complete
    /// one. `buf` is only borrowed mutably to append and remove a probe character.
    pub fn scan(&self, buf: &mut String, pos: usize, eos: bool) -> Result<Scan, RegexError> {
        self.scan_resuming(buf, pos, eos, &mut ScanResume::default())
    }

    /// [`Delimiter::scan`] on a buffer that only grows at its end between calls made with the
    /// same `resume` (a stream's buffer between feeds; start with [`ScanResume::default`]):
    /// the same result, without reading again the text the previous scan from the same
    /// position found nothing in. A stream that holds back a long stretch (whitespace that a
    /// `\s*`-led delimiter may still begin with) then scans each byte a bounded number of
    /// times instead of once per feed.
    pub fn scan_resuming(
        &self,
        buf: &mut String,
        pos: usize,
        eos: bool,
        resume: &mut ScanResume,
    ) -> Result<Scan, RegexError> {
        match self {
            Delimiter::Literal(set) => {
                // No literal lies wholly inside the text the last search from `pos` read, so a
                // match starts at most one literal's length before its end.
                let from = match resume.literal_clean {
                    Some((p, clean)) if p == pos && pos <= clean && clean <= buf.len() => {
                        pos.max(clean.saturating_sub(set.max_len.saturating_sub(1)))
                    }
                    _ => pos,
                };
                #[cfg(test)]
                LITERAL_READ.set(LITERAL_READ.get() + (buf.len() - from));
                let found = set.find(buf, from);
                resume.literal_clean = found.is_none().then_some((pos, buf.len()));
                Ok(match found {
                    Some(r) => {
                        // A literal match before the edge has seen its last character; at the
                        // edge it can only grow when one literal extends another.
                        if !eos && r.end == buf.len() && set.can_extend {
                            Scan::Pending(r.start)
                        } else {
                            Scan::Complete(DelimMatch {
                                start: r.start,
                                end: r.end,
                                captures: Vec::new(),
                            })
                        }
                    }
                    None if eos => Scan::Nothing,
                    None => Scan::Pending(set.partial_start(buf, pos)),
                })
            }
            Delimiter::Pattern(p) => {
                if eos {
                    return Ok(match p.regex.search(buf, pos)? {
                        Some(m) => Scan::Complete(p.to_match(buf, &m)),
                        None => Scan::Nothing,
                    });
                }
                // The reference's lazy repeats give up at the end of the text instead of
                // reporting partial when they have taken more than their minimum; holding back
                // what it releases there would differ event for event (and, when a delimiter
                // later completes, in the message), so the delimiter scan does the same.
                match p
                    .regex
                    .search_partial_resuming(buf, pos, &mut resume.pattern)?
                {
                    Partial::Partial { start } => Ok(Scan::Pending(start)),
                    Partial::Complete(m) => {
                        let m = p.to_match(buf, &m);
                        // At the edge a pattern match (zero-width or not) may always change.
                        let grows = m.end == buf.len() || p.can_grow_inside(buf, &m)?;
                        Ok(if grows {
                            Scan::Pending(m.start)
                        } else {
                            Scan::Complete(m)
                        })
                    }
                }
            }
        }
    }

    /// The end of the last of the non-overlapping matches in `text` (Python's `finditer`), used
    /// to cut the prefix after the last start anchor.
    pub fn last_match_end(&self, text: &str) -> Result<Option<usize>, RegexError> {
        match self {
            Delimiter::Literal(set) => Ok(set.matcher.find_iter(text).last().map(|m| m.end)),
            Delimiter::Pattern(p) => {
                let mut last = None;
                for m in p.regex.find_iter(text) {
                    last = Some(m?.end());
                }
                Ok(last)
            }
        }
    }

    /// Every complete match in `text`, non-overlapping, left to right (Python's `finditer`).
    pub fn find_all(&self, text: &str) -> Result<Vec<Range<usize>>, RegexError> {
        match self {
            Delimiter::Literal(set) => Ok(set.matcher.find_iter(text).collect()),
            Delimiter::Pattern(p) => p
                .regex
                .find_iter(text)
                .map(|m| m.map(|m| m.start()..m.end()))
                .collect(),
        }
    }

    /// The longest stretch of `text` that is the beginning of a match without being one (the
    /// earliest of the longest): where a delimiter that never matched came closest. At most
    /// `max_starts` start positions are tried for patterns.
    pub fn nearest_partial(
        &self,
        text: &str,
        max_starts: usize,
    ) -> Result<Option<Range<usize>>, RegexError> {
        let starts = text.char_indices().map(|(i, _)| i);
        let mut best: Option<Range<usize>> = None;
        let mut consider = |r: Range<usize>| {
            if !r.is_empty() && best.as_ref().is_none_or(|b| r.len() > b.len()) {
                best = Some(r);
            }
        };
        match self {
            Delimiter::Literal(set) => {
                for s in starts {
                    let rest = &text[s..];
                    for lit in &set.literals {
                        let common = lit
                            .char_indices()
                            .zip(rest.chars())
                            .take_while(|((_, a), b)| a == b)
                            .last()
                            .map_or(0, |((i, a), _)| i + a.len_utf8());
                        if common < lit.len() {
                            consider(s..s + common);
                        }
                    }
                }
            }
            Delimiter::Pattern(p) => {
                // The text from `s` to `e` is a viable beginning when a partial search over the
                // text cut at `e` reports a partial match starting at `s`; viability shrinks
                // monotonically, so the longest `e` is found by bisection.
                let viable = |s: usize, e: usize| -> Result<bool, RegexError> {
                    Ok(
                        matches!(p.regex.search_partial(&text[..e], s)?, Partial::Partial { start } if start == s),
                    )
                };
                // Bounded in time as well as in starts: a pattern that backtracks heavily
                // makes each test slow, and this is a hint, not a verdict.
                let deadline = std::time::Instant::now() + NEAREST_PARTIAL_TIME;
                for s in starts.take(max_starts) {
                    if std::time::Instant::now() > deadline {
                        break;
                    }
                    let next = text[s..].chars().next().map_or(s, |c| s + c.len_utf8());
                    if !viable(s, next)? {
                        continue;
                    }
                    // Bisect on byte offsets, moved to character boundaries.
                    let (mut lo, mut hi) = (next, text.len());
                    while lo < hi && std::time::Instant::now() <= deadline {
                        let mid = text.ceil_char_boundary(lo + (hi - lo).div_ceil(2));
                        if mid >= hi {
                            if viable(s, hi)? {
                                lo = hi;
                            }
                            break;
                        }
                        if viable(s, mid)? {
                            lo = mid;
                        } else {
                            hi = mid - text[..mid].chars().next_back().map_or(1, char::len_utf8);
                        }
                    }
                    consider(s..lo);
                }
            }
        }
        Ok(best)
    }

    /// For a pattern delimiter that does not match at `start` of `text`: the element of the
    /// pattern source that could not match next and where it was tried
    /// ([`pyregex::Regex::stuck_at`]), searched within the same time budget as
    /// [`Delimiter::nearest_partial`]. `None` for literals, for a match, or out of time.
    pub fn stuck_at(&self, text: &str, start: usize) -> Result<Option<pyregex::Stuck>, RegexError> {
        match self {
            Delimiter::Literal(_) => Ok(None),
            Delimiter::Pattern(p) => {
                let deadline = std::time::Instant::now() + NEAREST_PARTIAL_TIME;
                p.regex.stuck_at(text, start, deadline)
            }
        }
    }

    /// How the template wrote the delimiter: `"<think>"`, `["a", "b"]` or `pattern '<x\d+>'`.
    pub fn describe(&self) -> String {
        match self {
            Delimiter::Literal(set) if set.literals.len() == 1 => {
                Value::from(set.literals[0].as_str()).py_repr()
            }
            Delimiter::Literal(set) => Value::List(
                set.literals
                    .iter()
                    .map(|l| Value::from(l.as_str()))
                    .collect(),
            )
            .py_repr(),
            Delimiter::Pattern(p) => {
                format!("pattern {}", Value::from(p.source()).py_repr())
            }
        }
    }

    /// Named groups the delimiter can capture (empty for literals).
    pub fn capture_names(&self) -> Vec<String> {
        match self {
            Delimiter::Literal(_) => Vec::new(),
            Delimiter::Pattern(p) => p.regex.names().iter().map(|(n, _)| n.clone()).collect(),
        }
    }

    /// Whether this delimiter is a regular expression.
    pub fn is_pattern(&self) -> bool {
        matches!(self, Delimiter::Pattern(_))
    }
}

#[cfg(test)]
mod tests {
    /// The partial start by comparing every literal's matchable prefix at every position.
    fn direct_partial(literals: &[String], hay: &str, pos: usize) -> usize {
        let max_len = literals.iter().map(String::len).max().unwrap_or(0);
        let from = pos.max(hay.len().saturating_sub(max_len.saturating_sub(1)));
        (from..hay.len())
            .filter(|&s| hay.is_char_boundary(s))
            .find(|&s| {
                literals
                    .iter()
                    .any(|l| matchable_prefix(l).starts_with(&hay[s..]))
            })
            .unwrap_or(hay.len())
    }

    /// Seeded draws below `n`.
    fn draws(seed: u64) -> impl Fn(u64) -> u64 {
        let seed = std::cell::Cell::new(seed);
        move |n| {
            let v = seed
                .get()
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed.set(v);
            (v >> 33) % n
        }
    }

    /// The one-pass partial match of long literals finds the start the direct comparison finds.
    #[test]
    fn long_literals_find_the_partial_match_the_direct_comparison_finds() {
        let direct =
            |set: &LiteralSet, hay: &str, pos: usize| direct_partial(&set.literals, hay, pos);
        let next = draws(7);
        let alphabet = ['a', 'b', 'é'];
        let word = |len: u64| -> String { (0..len).map(|_| alphabet[next(3) as usize]).collect() };
        for _ in 0..300 {
            let mut literals = vec![word(64 + next(40)), word(1 + next(6))];
            if next(2) == 0 {
                literals.push(word(70));
            }
            let set = LiteralSet::new(literals.clone());
            let cut = literals[0].floor_char_boundary(next(literals[0].len() as u64) as usize);
            let hay = format!("{}{}", word(next(200)), &literals[0][..cut]);
            let pos = next(hay.len() as u64 + 1) as usize;
            let pos = (0..=pos)
                .rev()
                .find(|&p| hay.is_char_boundary(p))
                .unwrap_or(0);
            assert_eq!(
                set.partial_start(&hay, pos),
                direct(&set, &hay, pos),
                "{literals:?} {hay:?} {pos}"
            );
        }
    }

    /// Short literals, some holding a lone surrogate (whose part after it is never pending),
    /// with text of one- and two-byte characters: the first-byte table passes over exactly the
    /// positions where no literal's matchable prefix can start.
    #[test]
    fn short_literals_find_the_partial_match_the_direct_comparison_finds() {
        let direct = direct_partial;
        let next = draws(11);
        let surrogate = crate::value::surrogate_char(0xD800);
        for _ in 0..2000 {
            let word = |len: u64, alphabet: &[char]| -> String {
                (0..len)
                    .map(|_| alphabet[next(alphabet.len() as u64) as usize])
                    .collect()
            };
            let literals: Vec<String> = (0..1 + next(3))
                .map(|_| word(1 + next(5), &['<', 'a', 'é', surrogate]))
                .collect();
            let set = LiteralSet::new(literals.clone());
            let hay = word(next(12), &['<', 'a', 'é', 'b']);
            let pos = (0..=next(hay.len() as u64 + 1) as usize)
                .rev()
                .find(|&p| hay.is_char_boundary(p))
                .unwrap_or(0);
            assert_eq!(
                set.partial_start(&hay, pos),
                direct(&literals, &hay, pos),
                "{literals:?} {hay:?} {pos}"
            );
        }
    }

    use super::*;

    fn lit(ls: &[&str]) -> Delimiter {
        Delimiter::Literal(LiteralSet::new(ls.iter().map(|s| s.to_string()).collect()))
    }

    fn scan(d: &Delimiter, buf: &str, pos: usize, eos: bool) -> Scan {
        d.scan(&mut buf.to_string(), pos, eos).unwrap()
    }

    fn complete(start: usize, end: usize) -> Scan {
        Scan::Complete(DelimMatch {
            start,
            end,
            captures: vec![],
        })
    }

    #[test]
    fn literal_prefers_longest_at_leftmost_start() {
        let d = lit(&["</think>", "</think>\n\n"]);
        assert_eq!(scan(&d, "a</think>\n\nb", 0, false), complete(1, 11));
        assert_eq!(scan(&d, "a</think>\nb", 0, false), complete(1, 9));
    }

    #[test]
    fn literal_at_edge_waits_only_when_extendable() {
        assert_eq!(scan(&lit(&["</a>"]), "x</a>", 0, false), complete(1, 5));
        let ext = lit(&["</a>", "</a>\n"]);
        assert_eq!(scan(&ext, "x</a>", 0, false), Scan::Pending(1));
        assert_eq!(scan(&ext, "x</a>", 0, true), complete(1, 5));
    }

    #[test]
    fn literal_partial_is_leftmost_proper_prefix() {
        let d = lit(&["<tool_call>"]);
        assert_eq!(scan(&d, "abc<tool", 0, false), Scan::Pending(3));
        assert_eq!(scan(&d, "abc<x", 0, false), Scan::Pending(5));
        assert_eq!(scan(&d, "abc<x", 0, true), Scan::Nothing);
        // Multi-byte text before the partial: starts are on char boundaries.
        assert_eq!(scan(&d, "é<to", 0, false), Scan::Pending(2));
    }

    #[test]
    fn lone_surrogates_match_no_text() {
        // The template's "a\ud800" decodes to 'a' and the stand-in of U+D800; the text's
        // U+10F800 is a real character, which the reference's surrogate never matches.
        let surrogate = crate::value::surrogate_char(0xD800).to_string();
        let text = format!("xa{surrogate}y");
        let d = lit(&[&format!("a{surrogate}")]);
        assert_eq!(scan(&d, &text, 0, true), Scan::Nothing);
        assert_eq!(scan(&d, &text, 0, false), Scan::Pending(text.len()));
        // What comes before the surrogate can still be the start of the delimiter.
        assert_eq!(scan(&d, "xa", 0, false), Scan::Pending(1));
        assert!(d.find_all(&text).unwrap().is_empty());
        let both = lit(&[&format!("a{surrogate}"), "y"]);
        assert_eq!(
            scan(&both, &text, 0, true),
            complete(text.len() - 1, text.len())
        );
        let p = Delimiter::Pattern(PatternDelimiter::new(&format!("a{surrogate}")).unwrap());
        assert_eq!(scan(&p, &text, 0, true), Scan::Nothing);
        assert_eq!(scan(&p, "xa", 0, false), Scan::Pending(1));
        let set = format!("a[{surrogate}-{}]?b", crate::value::surrogate_char(0xDFFF));
        let p = Delimiter::Pattern(PatternDelimiter::new(&set).unwrap());
        assert_eq!(scan(&p, &format!("xa{surrogate}b"), 0, true), Scan::Nothing);
        assert_eq!(scan(&p, "xab", 0, true), complete(1, 3));
    }

    /// Scans a text growing a character at a time, resumed and fresh, from where a stream's
    /// position would be (the start of a pending match, the end of a complete one).
    fn resumed_equals_fresh(d: &Delimiter, text: &str) {
        let mut resume = ScanResume::default();
        let mut pos = 0;
        for (i, c) in text.char_indices() {
            let mut buf = text[..i + c.len_utf8()].to_string();
            let fresh = d.scan(&mut buf, pos, false).unwrap();
            let resumed = d.scan_resuming(&mut buf, pos, false, &mut resume).unwrap();
            assert_eq!(resumed, fresh, "{buf:?} from {pos}");
            pos = match fresh {
                Scan::Pending(s) => s.max(pos),
                Scan::Complete(m) => m.end,
                Scan::Nothing => pos,
            };
        }
    }

    #[test]
    fn resumed_scans_equal_fresh_ones() {
        let texts = [
            "  <think> x </think>\n<tool_call>{}</tool_call> <|im_end|>",
            "<<<thin<think<think>>> </th</think>",
            "   \n\n  <tool_call>\n  <function=f>  </function>\n</tool_call>",
            "é<to<tool_call><|im_end|>",
        ];
        let delimiters = [
            lit(&["<think>"]),
            lit(&["</think>", "</think>\n\n"]),
            lit(&["<tool_call>", "<|im_end|>", "<"]),
            Delimiter::Pattern(PatternDelimiter::new(r"\s*<tool_call>").unwrap()),
            Delimiter::Pattern(
                PatternDelimiter::new(r"\s*(?:<\|im_end\|>|<\|endoftext\|>)").unwrap(),
            ),
            Delimiter::Pattern(PatternDelimiter::new(r"</function>\s*</tool_call>").unwrap()),
        ];
        for d in &delimiters {
            for t in texts {
                resumed_equals_fresh(d, t);
            }
        }
    }

    #[test]
    fn literal_scans_of_a_growing_buffer_read_only_the_new_text() {
        let d = lit(&["<think>", "</tool_call>"]);
        let read = |n: usize| {
            LITERAL_READ.set(0);
            let mut buf = String::new();
            let mut resume = ScanResume::default();
            for _ in 0..n {
                buf.push(' ');
                let scan = d.scan_resuming(&mut buf, 0, false, &mut resume).unwrap();
                assert_eq!(scan, Scan::Pending(buf.len()));
            }
            LITERAL_READ.get()
        };
        let (small, large) = (read(1_000), read(4_000));
        // Reading the whole buffer on every scan would grow 16-fold.
        assert!(large <= 5 * small, "{small} -> {large} bytes read");
    }

    #[test]
    fn start_anchor_takes_last_non_overlapping_match() {
        assert_eq!(lit(&["aa"]).last_match_end("aaa").unwrap(), Some(2));
        assert_eq!(lit(&["<s>"]).last_match_end("x<s>y<s>z").unwrap(), Some(8));
        assert_eq!(lit(&["<s>"]).last_match_end("xyz").unwrap(), None);
    }
}
