//! Python `regex`-module patterns: parsing, matching and partial matching.
//!
//! [`Regex`] reproduces the reference `regex` module (VERSION0 and VERSION1 syntax, compiled with
//! or without DOTALL, Unicode-aware) for the operations response templates need: `search`,
//! `match`, `search(partial=True)`, `finditer`, capture groups and `groupindex`. Positions are
//! byte offsets into the haystack, always on character boundaries (a position inside a character
//! is moved to the next boundary; one past the end is clamped).
//!
//! Partial matching follows the reference: a complete match anywhere from the start position
//! wins; otherwise the leftmost start from which some matching path consumes everything to the
//! end of the text (and needs more) is reported, with assertions at the end evaluated as if the
//! text ended there. The reference only tries starts its "required string" and start test allow,
//! and so does this engine. Where the reference's lazy-repeat fast path departs from that
//! definition, this engine follows the definition: it never reports a start no path can reach
//! (`a*?b` on `xac`), and it does report one a lazy repeat reaches by taking characters up to
//! the end. [`Regex::search_partial_lazy_like_reference`] reproduces the fast path instead, for
//! streams that must hold back exactly what the reference holds back.
//!
//! Full case folding (`(?f)` with `(?i)`, and `(?i)` under VERSION1) matches as the reference
//! does, quirks included: a character that expands (`ß`) matches itself or its folding (`ss`),
//! strings compare the text's full case folding, a set also matches the foldings of the
//! characters in it that expand. Where the reference's search for a pattern that starts with
//! such a string reports partial matches in its own way (see `search.rs`), this engine reports
//! the same starts, even one before the search position.
//!
//! Matching is a backtracking matcher with the reference's repeat semantics (an empty iteration
//! ends a loop; the minimum of a repeat is unrolled), failed-state memoisation (so catastrophic
//! patterns stay polynomial) and a work budget ([`RegexError::Budget`]) as a last resort.
//!
//! Refused with [`RegexError::Unsupported`]: fuzzy matching (`{e<=1}`), recursion and group calls
//! (`(?R)`, `(?1)`, `(?&name)`, `(?P>name)`), conditionals (`(?(1)..)`, `(?(?=..)..)`), branch
//! reset `(?|..)`, `\G`, `\X`, `\K`, the verbs `(*PRUNE)`/`(*SKIP)`, the flags `(?r)`, `(?p)`,
//! `(?L)`, `(?w)`, and a VERSION1 set operation with a member that matches every character
//! under full case folding (the reference fails with `AttributeError`). Every Unicode property
//! and value the reference knows and every `\N{NAME}` its interpreter knows are supported.

pub mod ast;
mod backtrack;
mod budget;
mod charset;
mod compile;
mod diagnose;
mod error;
mod frames;
pub mod hook;
mod names;
mod optimise;
mod parse;
mod prefilter;
mod prog;
mod props;
mod search;
mod sets;
mod stack;
mod unicode;
#[rustfmt::skip]
mod unicode_tables;
mod utf8;

use std::ops::Range;
use std::sync::Arc;

pub use budget::{
    Budget, REFERENCE_TEN_SECONDS, STACK_ENTRIES, STACK_ENTRIES_PER_BYTE, steps_taken,
    with_stack_limit,
};

/// Bytes one backtrack-stack entry takes (see [`STACK_ENTRIES`]).
pub const STACK_ENTRY_BYTES: usize = backtrack::FRAME_BYTES;
pub use diagnose::Stuck;
pub use error::RegexError;

use ast::{Node, RepeatKind};
use parse::ParseError;

/// A pattern's syntax tree as the reference parser builds it (groups resolved), for tools that
/// translate patterns into other engines' syntax.
#[derive(Clone, Debug)]
pub struct Tree {
    /// The root of the tree: the whole pattern.
    pub node: ast::Node,
    /// Number of capture groups.
    pub group_count: u32,
    /// Group names in order of first appearance, with their numbers.
    pub names: Vec<(String, u32)>,
    /// Whether the pattern as a whole uses the ASCII encoding (a top-level `(?a)`).
    pub ascii: bool,
}

/// Parses `pattern` into its [`Tree`], with the same errors as [`Regex::new`].
pub fn parse_tree(pattern: &str, flags: Flags) -> Result<Tree, RegexError> {
    let bits = if flags.dotall { parse::F_DOTALL } else { 0 };
    let parsed = stack::with_room(pattern, || parse::parse(pattern, bits))
        .ok_or_else(no_room)?
        .map_err(|e| to_public(pattern, e))?;
    Ok(Tree {
        node: parsed.node,
        group_count: parsed.group_count,
        names: parsed.names,
        ascii: parsed.ascii,
    })
}

/// The names of a property key found in a [`Tree`] (`ast::SetItem::Prop`, `ast::Node::Prop`):
/// the property's longest standardised name and the value's (for a binary property the value
/// is `"Y"` or `"N"`). `None` for a key no table has.
pub fn property_names(key: u32) -> Option<(&'static str, &'static str)> {
    props::names_of(key)
}

/// The code points of a property key, as inclusive ranges, with the reference's tables (ASCII
/// encoding maps everything above U+007F to the unassigned U+10FFFF).
pub fn property_ranges(key: u32, ascii: bool) -> Vec<(u32, u32)> {
    props::property_set(key, ascii).ranges().to_vec()
}

/// Compile-time options (the reference compiles templates with `regex.DOTALL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags {
    /// `.` matches `\n` too.
    pub dotall: bool,
}

impl Default for Flags {
    fn default() -> Flags {
        Flags { dotall: true }
    }
}

/// Which non-regular constructs a pattern uses (for lint warnings and engine choice).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// Lookaheads, positive or negative (`(?=..)`, `(?!..)`).
    pub lookahead: bool,
    /// Lookbehinds, positive or negative (`(?<=..)`, `(?<!..)`).
    pub lookbehind: bool,
    /// Backreferences to groups (`\1`, `(?P=name)`, `\g<name>`).
    pub backrefs: bool,
    /// Atomic groups (`(?>..)`).
    pub atomic: bool,
    /// Possessive repeats (`*+`, `++`, `?+`, `{m,n}+`).
    pub possessive: bool,
    /// Lazy repeats (`*?`, `+?`, `??`, `{m,n}?`).
    pub lazy: bool,
    /// Word boundaries (`\b`, `\B`, `\m`, `\M`).
    pub word_boundary: bool,
    /// `$` (end or before a final newline) or MULTILINE anchors.
    pub line_anchors: bool,
    /// Some character, set, property or backreference matches case-insensitively (`(?i)`).
    pub case_insensitive: bool,
    /// Every match must start at the very beginning of the text (`\A`, or `^` without
    /// MULTILINE, leads every alternative).
    pub text_start_only: bool,
}

impl Features {
    /// Whether the pattern uses lookaround or backreferences.
    pub fn lookaround(&self) -> bool {
        self.lookahead || self.lookbehind
    }

    /// Whether the pattern is a plain regular expression (no lookaround, backreferences, atomic
    /// groups or possessive quantifiers).
    pub fn is_regular(&self) -> bool {
        !(self.lookaround() || self.backrefs || self.atomic || self.possessive)
    }
}

struct Inner {
    pattern: String,
    flags: Flags,
    prog: prog::Program,
    names: Arc<[(String, usize)]>,
    features: Features,
    prefilter: prefilter::Prefilter,
}

/// A compiled pattern. Cloning is cheap.
#[derive(Clone)]
pub struct Regex {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Regex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Regex")
            .field("pattern", &self.inner.pattern)
            .field("flags", &self.inner.flags)
            .finish()
    }
}

/// A successful match: the overall span and the spans of the groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    spans: Vec<Option<(usize, usize)>>,
    names: Arc<[(String, usize)]>,
}

impl Match {
    /// Where the match starts: a byte offset into the haystack (Python's `m.start()`).
    pub fn start(&self) -> usize {
        self.spans[0].expect("group 0 is set").0
    }

    /// Where the match ends: the byte offset just past it (Python's `m.end()`).
    pub fn end(&self) -> usize {
        self.spans[0].expect("group 0 is set").1
    }

    /// The bytes of the haystack the whole match covers, `start()..end()`.
    pub fn range(&self) -> Range<usize> {
        self.start()..self.end()
    }

    /// The span of group `i` (0 is the whole match); `None` if it did not take part or does
    /// not exist.
    pub fn group(&self, i: usize) -> Option<Range<usize>> {
        self.spans.get(i).copied().flatten().map(|(s, e)| s..e)
    }

    /// The span of the named group.
    pub fn named(&self, name: &str) -> Option<Range<usize>> {
        let i = self.names.iter().find(|(n, _)| n == name)?.1;
        self.group(i)
    }

    /// Number of groups, excluding group 0.
    pub fn group_count(&self) -> usize {
        self.spans.len() - 1
    }
}

/// What [`Regex::search_partial_resuming`] keeps between the searches of one growing text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resume {
    run: search::RunSeen,
}

/// The result of a partial search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Partial {
    /// A complete match (found anywhere from the start position).
    Complete(Match),
    /// No complete match; the text from `start` on is a prefix of a possible match. When nothing
    /// is pending, `start` is the length of the haystack. (For a pattern that starts with a string
    /// under full case folding, the reference sometimes reports a start that is not one, even
    /// before the search position; `start` is then that position.)
    Partial {
        /// Byte offset in the haystack where the possible match starts.
        start: usize,
    },
}

impl Regex {
    /// Compiles `pattern` as the reference's `regex.compile(pattern, flags)` would.
    pub fn new(pattern: &str, flags: Flags) -> Result<Regex, RegexError> {
        stack::with_room(pattern, || Regex::build(pattern, flags, None)).ok_or_else(no_room)?
    }

    /// [`Regex::new`] for a pattern decoded from JSON by a caller that stores lone surrogates
    /// (which Rust strings cannot hold) as the code points `stand_in_base..stand_in_base +
    /// 0x800`: such a character in the pattern is the surrogate U+D800.. it stands for, which no
    /// text contains, so it never matches (as in the reference, where text is a `str` read
    /// from UTF-8), even where the text holds the stand-in code point itself.
    pub fn with_surrogate_stand_ins(
        pattern: &str,
        flags: Flags,
        stand_in_base: u32,
    ) -> Result<Regex, RegexError> {
        let base = Some(stand_in_base);
        stack::with_room(pattern, || Regex::build(pattern, flags, base)).ok_or_else(no_room)?
    }

    fn build(pattern: &str, flags: Flags, stand_in_base: Option<u32>) -> Result<Regex, RegexError> {
        let bits = if flags.dotall { parse::F_DOTALL } else { 0 };
        let parsed =
            parse::parse_with(pattern, bits, stand_in_base).map_err(|e| to_public(pattern, e))?;
        let features = features_of(&parsed.node);
        let prog = compile::compile(&parsed)?;
        let prefilter = prefilter::Prefilter::new(&prog);
        let names: Arc<[(String, usize)]> = parsed
            .names
            .iter()
            .map(|(n, g)| (n.clone(), *g as usize))
            .collect();
        Ok(Regex {
            inner: Arc::new(Inner {
                pattern: pattern.to_string(),
                flags,
                prog,
                names,
                features,
                prefilter,
            }),
        })
    }

    /// The pattern as it was compiled (Python's `pattern.pattern`).
    pub fn as_str(&self) -> &str {
        &self.inner.pattern
    }

    /// Python's `groupindex`: name -> group number, in order of first appearance.
    pub fn names(&self) -> &[(String, usize)] {
        &self.inner.names
    }

    /// Python's `groups`: the number of capture groups.
    pub fn group_count(&self) -> usize {
        self.inner.prog.group_count
    }

    /// The non-regular constructs the pattern uses (for lint warnings and engine choice).
    pub fn features(&self) -> Features {
        self.inner.features
    }

    /// Matcher steps per byte of text a search of this pattern is allowed (its program's
    /// size): what a caller sizing a [`Budget`] for some text should grant per byte.
    pub fn steps_per_byte(&self) -> u64 {
        search::steps_per_byte(&self.inner.prog)
    }

    /// Python `pattern.search(hay, pos)`.
    pub fn search(&self, hay: &str, pos: usize) -> Result<Option<Match>, RegexError> {
        if hook::active() {
            return hook::search(self, hay, pos, hook::CallKind::Search);
        }
        let pos = utf8::ceil_boundary(hay, pos);
        Ok(
            search::search(&self.inner.prog, &self.inner.prefilter, hay, pos, false)?
                .map(|s| self.make_match(s)),
        )
    }

    /// Python `pattern.match(hay, pos)`: a match starting exactly at `pos`.
    pub fn match_at(&self, hay: &str, pos: usize) -> Result<Option<Match>, RegexError> {
        if hook::active() {
            return hook::search(self, hay, pos, hook::CallKind::Match);
        }
        let pos = utf8::ceil_boundary(hay, pos);
        Ok(
            search::match_at(&self.inner.prog, &self.inner.prefilter, hay, pos)?
                .map(|s| self.make_match(s)),
        )
    }

    /// Python `pattern.search(hay, pos, partial=True)`.
    pub fn search_partial(&self, hay: &str, pos: usize) -> Result<Partial, RegexError> {
        if hook::active() {
            return hook::search_partial(self, hay, pos);
        }
        self.partial_with(hay, pos, false)
    }

    /// `search_partial` reproducing the reference's lazy-repeat fast path where it departs from
    /// the definition: a lazy one-character repeat that reaches the end of the text by taking
    /// more characters stops there without reporting partial (unless it started there), and
    /// one followed by a one-character literal reports partial once its scan for that character
    /// reaches the text's last character, even where the repeat could not take it (`|]zz]"`
    /// for `\|\][^<]{0,3}?>`). It can miss a delimiter that more text would complete, and hold
    /// one no text can, as the reference does: streaming delimiter scans use it for parity.
    pub fn search_partial_lazy_like_reference(
        &self,
        hay: &str,
        pos: usize,
    ) -> Result<Partial, RegexError> {
        // A hook (another runtime's engine standing in for this one) answers it as any
        // partial search.
        if hook::active() {
            return hook::search_partial(self, hay, pos);
        }
        self.partial_with(hay, pos, true)
    }

    /// [`Regex::search_partial_lazy_like_reference`] on a text that only grows at its end
    /// between calls made with the same `resume` (a stream's buffer between feeds), which must
    /// start as [`Resume::default`]. Same result; where the pattern begins with a greedy repeat
    /// that its continuation cannot extend (`\s*<tool_call>`) and the repeat's run from `pos`
    /// reaches the end of the text, the answer (partial at `pos`) is known from the text added
    /// since the previous call, so a stream holding back a long stretch of whitespace does not
    /// read it again on every feed.
    pub fn search_partial_resuming(
        &self,
        hay: &str,
        pos: usize,
        resume: &mut Resume,
    ) -> Result<Partial, RegexError> {
        if hook::active() {
            return hook::search_partial(self, hay, pos);
        }
        let pos = utf8::ceil_boundary(hay, pos);
        if let Some(start) = search::partial_over_run(&self.inner.prog, hay, pos, &mut resume.run) {
            return Ok(Partial::Partial { start });
        }
        self.partial_with(hay, pos, true)
    }

    fn partial_with(
        &self,
        hay: &str,
        pos: usize,
        lazy_like_reference: bool,
    ) -> Result<Partial, RegexError> {
        let pos = utf8::ceil_boundary(hay, pos);
        let inner = &self.inner;
        Ok(
            match search::search_partial(
                &inner.prog,
                &inner.prefilter,
                hay,
                pos,
                lazy_like_reference,
            )? {
                search::PartialOutcome::Complete(s) => Partial::Complete(self.make_match(s)),
                search::PartialOutcome::Partial(start) => Partial::Partial { start },
            },
        )
    }

    /// Python `pattern.finditer(hay)`.
    pub fn find_iter<'a>(
        &'a self,
        hay: &'a str,
    ) -> impl Iterator<Item = Result<Match, RegexError>> + 'a {
        let live = FindIter {
            re: self,
            hay,
            pos: 0,
            must_advance: false,
            done: false,
        };
        hook::find_iter(self, hay, live)
    }

    fn make_match(&self, spans: backtrack::Spans) -> Match {
        Match {
            spans,
            names: Arc::clone(&self.inner.names),
        }
    }
}

struct FindIter<'a> {
    re: &'a Regex,
    hay: &'a str,
    pos: usize,
    must_advance: bool,
    done: bool,
}

impl Iterator for FindIter<'_> {
    type Item = Result<Match, RegexError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos > self.hay.len() {
            return None;
        }
        let inner = &self.re.inner;
        match search::search(
            &inner.prog,
            &inner.prefilter,
            self.hay,
            self.pos,
            self.must_advance,
        ) {
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Ok(Some(spans)) => {
                let m = self.re.make_match(spans);
                self.must_advance = m.start() == m.end();
                self.pos = m.end();
                Some(Ok(m))
            }
        }
    }
}

/// Makes every search remember failed states from its first step (normally this starts only
/// once a search has done a lot of work). Results are the same either way; this exists so that
/// tests can exercise that machinery on small inputs.
#[doc(hidden)]
pub fn force_memo(on: bool) {
    backtrack::FORCE_MEMO.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// A pattern that matches `s` literally (the reference's `regex.escape`).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if "()[]{}?*+|^$\\.-#&~".contains(c) || pyunicode::isspace(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// When no thread with room for a deeply nested pattern could be started.
fn no_room() -> RegexError {
    RegexError::TooLarge {
        message: "no thread could be started to compile this deeply nested pattern".into(),
    }
}

fn to_public(pattern: &str, e: ParseError) -> RegexError {
    let byte = |pos: usize| {
        pattern
            .char_indices()
            .nth(pos)
            .map_or(pattern.len(), |(b, _)| b)
    };
    // The reference counts positions in code points; files are located by byte offset.
    match e {
        ParseError::Syntax { message, pos } => RegexError::Syntax {
            message,
            offset: byte(pos),
            position: pos,
        },
        ParseError::Unsupported { construct, pos } => RegexError::Unsupported {
            construct,
            offset: byte(pos),
            position: pos,
        },
        ParseError::TooDeep { pos } => RegexError::TooDeep {
            offset: byte(pos),
            position: pos,
        },
        ParseError::Restart { .. } => unreachable!("the parser restarts itself"),
    }
}

fn features_of(node: &Node) -> Features {
    let mut f = Features::default();
    walk(node, &mut f);
    f.text_start_only = starts_at_text_start(node);
    f
}

/// Whether every match of `node` must begin at position 0.
fn starts_at_text_start(node: &Node) -> bool {
    match node {
        Node::Assert(ast::Assertion::StartOfString) => true,
        Node::Seq(items) => {
            for item in items {
                if starts_at_text_start(item) {
                    return true;
                }
                // Zero-width items before the anchor do not move the match start.
                if !matches!(item, Node::Empty | Node::Look { .. } | Node::Assert(_)) {
                    return false;
                }
            }
            false
        }
        Node::Alt(items) => !items.is_empty() && items.iter().all(starts_at_text_start),
        Node::Group { node, .. } | Node::Atomic(node) => starts_at_text_start(node),
        Node::Repeat { node, min, .. } => *min >= 1 && starts_at_text_start(node),
        // `(?=^…)` checks the match start; `(?<=^)` only when nothing comes after the anchor.
        Node::Look {
            positive: true,
            behind: false,
            node,
        } => starts_at_text_start(node),
        Node::Look {
            positive: true,
            behind: true,
            node,
        } => is_text_start(node),
        _ => false,
    }
}

/// Whether `node` is a start-of-text anchor and nothing else.
fn is_text_start(node: &Node) -> bool {
    match node {
        Node::Assert(ast::Assertion::StartOfString) => true,
        Node::Group { node, .. } => is_text_start(node),
        Node::Seq(items) => {
            let mut items = items.iter().filter(|n| !matches!(n, Node::Empty));
            items.next().is_some_and(is_text_start) && items.next().is_none()
        }
        _ => false,
    }
}

fn walk(node: &Node, f: &mut Features) {
    match node {
        Node::Seq(items) | Node::Alt(items) => items.iter().for_each(|n| walk(n, f)),
        Node::Group { node, .. } => walk(node, f),
        Node::Repeat { node, kind, .. } => {
            match kind {
                RepeatKind::Lazy => f.lazy = true,
                RepeatKind::Possessive => f.possessive = true,
                RepeatKind::Greedy => {}
            }
            walk(node, f)
        }
        Node::Atomic(node) => {
            f.atomic = true;
            walk(node, f)
        }
        Node::Look { behind, node, .. } => {
            if *behind {
                f.lookbehind = true;
            } else {
                f.lookahead = true;
            }
            walk(node, f)
        }
        Node::Backref { ign, .. } => {
            f.backrefs = true;
            f.case_insensitive |= *ign;
        }
        Node::Assert(a) => match a {
            ast::Assertion::Boundary { .. }
            | ast::Assertion::StartOfWord { .. }
            | ast::Assertion::EndOfWord { .. } => f.word_boundary = true,
            ast::Assertion::EndOfStringLine
            | ast::Assertion::EndOfLine
            | ast::Assertion::StartOfLine => f.line_anchors = true,
            _ => {}
        },
        Node::Char { ign, .. } | Node::Set { ign, .. } | Node::Prop { ign, .. } => {
            f.case_insensitive |= *ign
        }
        _ => {}
    }
}

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod tests;

/// Whether `c` is a word character (`\w`) for the reference's `regex` module.
pub fn is_word_char(c: char) -> bool {
    unicode::in_table(unicode_tables::WORD, c as u32)
}
