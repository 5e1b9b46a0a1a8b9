//! The pattern parser: a faithful port of the reference `regex` module's parser
//! (`_regex_core.py`), so that the same patterns are accepted, rejected (with the same message at
//! the same position) and given the same structure. VERSION1 (`(?V1)`, a global flag: the whole
//! pattern is parsed again with it) brings full case folding under `(?i)` by default, nested sets
//! and set operations, Unicode whitespace under VERBOSE and references to open groups.
//!
//! Positions are counted in characters while parsing, as the reference does; the public error
//! converts them to byte offsets.

use std::collections::HashMap;

use super::ast::{Assertion, Enc, GroupName, Node, RepeatKind, SetItem, SetOp};
use super::names::{self, Named};
use super::props::{self, Lookup};
use super::unicode::py_isdigit;

// Flag bits, as in the reference.
pub(crate) const F_ASCII: u32 = 0x80;
pub(crate) const F_BESTMATCH: u32 = 0x1000;
pub(crate) const F_ENHANCEMATCH: u32 = 0x8000;
pub(crate) const F_FULLCASE: u32 = 0x4000;
pub(crate) const F_IGNORECASE: u32 = 0x2;
pub(crate) const F_LOCALE: u32 = 0x4;
pub(crate) const F_MULTILINE: u32 = 0x8;
pub(crate) const F_POSIX: u32 = 0x10000;
pub(crate) const F_REVERSE: u32 = 0x400;
pub(crate) const F_DOTALL: u32 = 0x10;
pub(crate) const F_UNICODE: u32 = 0x20;
pub(crate) const F_VERSION0: u32 = 0x2000;
pub(crate) const F_VERSION1: u32 = 0x100;
pub(crate) const F_WORD: u32 = 0x800;
pub(crate) const F_VERBOSE: u32 = 0x40;
pub(crate) const F_DEBUG: u32 = 0x200;

const ALL_ENCODINGS: u32 = F_ASCII | F_LOCALE | F_UNICODE;
const GLOBAL_FLAGS: u32 =
    F_VERSION0 | F_VERSION1 | F_BESTMATCH | F_DEBUG | F_ENHANCEMATCH | F_POSIX | F_REVERSE;

/// The reference's repeat limit (`UNLIMITED` for 4-byte codes).
const UNLIMITED: u64 = 0xFFFF_FFFF;

/// A parse failure, with the position in characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParseError {
    Syntax {
        message: String,
        pos: usize,
    },
    Unsupported {
        construct: String,
        pos: usize,
    },
    /// Nested deeper than the reference's recursion limit allows (see [`PARSE_FRAME_LIMIT`]).
    TooDeep {
        pos: usize,
    },
    /// Internal: a global flag was turned on inline; the reference parses the whole pattern
    /// again with it on from the start. Never leaves [`parse_with`].
    Restart {
        global_flags: u32,
    },
}

/// The reference parses groups by recursion and fails with `RecursionError` once its Python
/// stack (1,000 frames) runs out. This parser mirrors the reference's recursive functions, so it
/// counts the frames the reference would be using: 2 per subpattern (`_parse_pattern`,
/// `parse_sequence`), 1 for `parse_paren`, and 1 more for lookarounds, atomic groups, flag
/// groups (`parse_flags_subpattern` and `parse_subpattern`: 2), `(?P<name>` and conditionals.
/// The limit was measured with transformers loading a template whose `open_pattern` is nested:
/// `(((…a…)))` is accepted up to 327 levels, `(?:`, `(?i:` and `(?:a|` up to 196, `(?=`,
/// `(?<=` and `(?>` up to 245; one level more fails.
const PARSE_FRAME_LIMIT: usize = 984;

/// The reference compiles the parsed tree recursively too (`compile` and `_compile`, two frames
/// per node); a chain of groups and sequences (`(b(b(b…a…)))`) fails there, past 247 levels
/// (494 nested nodes). The limit on nested nodes that have children.
pub(crate) const NODE_DEPTH_LIMIT: usize = 495;

type PResult<T> = Result<T, ParseError>;

/// The case flags a node is built with (`make_case_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Case {
    ign: bool,
    full: bool,
}

fn char_node(c: u32, case: Case) -> Node {
    Node::Char {
        c,
        positive: true,
        ign: case.ign,
        full: case.full,
    }
}

fn err<T>(message: impl Into<String>, pos: usize) -> PResult<T> {
    Err(ParseError::Syntax {
        message: message.into(),
        pos,
    })
}

fn unsupported<T>(construct: impl Into<String>, pos: usize) -> PResult<T> {
    Err(ParseError::Unsupported {
        construct: construct.into(),
        pos,
    })
}

/// The result of parsing a whole pattern.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub node: Node,
    pub group_count: u32,
    /// Group names in order of first appearance, with their numbers.
    pub names: Vec<(String, u32)>,
    /// Whether the pattern as a whole uses the ASCII encoding (a top-level `(?a)`).
    pub ascii: bool,
    /// The pattern's flags as the parse leaves them (positional flags included): the reference
    /// reads IGNORECASE and FULLCASE here when it decides how to search for the required
    /// string and which characters count as cased.
    pub flags: u32,
}

/// The pattern scanner (`Source` in the reference).
struct Source {
    s: Vec<char>,
    pos: usize,
    ignore_space: bool,
    /// What VERBOSE skips as whitespace: Python's `str.isspace` under VERSION1, only the six
    /// ASCII whitespace characters under VERSION0.
    unicode_space: bool,
}

/// What skipping whitespace and comments found.
enum Skip {
    At(usize),
    /// Ran off the end of the pattern (IndexError in the reference).
    End(usize),
    /// A comment ran to the end of the pattern (ValueError in the reference).
    CommentToEnd,
}

impl Source {
    fn is_space(&self, c: char) -> bool {
        if self.unicode_space {
            pyunicode::isspace(c)
        } else {
            matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0C' | '\x0B')
        }
    }

    fn skip(&self, mut pos: usize) -> Skip {
        loop {
            match self.s.get(pos) {
                None => return Skip::End(pos),
                Some(&c) if self.is_space(c) => pos += 1,
                Some('#') => match self.s[pos..].iter().position(|&c| c == '\n') {
                    Some(i) => pos += i,
                    None => return Skip::CommentToEnd,
                },
                Some(_) => return Skip::At(pos),
            }
        }
    }

    fn peek(&self) -> Option<char> {
        if self.ignore_space {
            match self.skip(self.pos) {
                Skip::At(p) => Some(self.s[p]),
                _ => None,
            }
        } else {
            self.s.get(self.pos).copied()
        }
    }

    fn get(&mut self) -> Option<char> {
        self.get_ex(false)
    }

    fn get_ex(&mut self, override_ignore: bool) -> Option<char> {
        let pos = if self.ignore_space && !override_ignore {
            match self.skip(self.pos) {
                Skip::At(p) => p,
                Skip::End(p) => {
                    self.pos = p;
                    return None;
                }
                Skip::CommentToEnd => {
                    self.pos = self.s.len();
                    return None;
                }
            }
        } else {
            self.pos
        };
        match self.s.get(pos) {
            Some(&c) => {
                self.pos = pos + 1;
                Some(c)
            }
            None => {
                self.pos = pos;
                None
            }
        }
    }

    fn get_while(
        &mut self,
        test: impl Fn(char) -> bool,
        include: bool,
        keep_spaces: bool,
    ) -> String {
        let mut pos = self.pos;
        if self.ignore_space && !keep_spaces {
            let mut out = String::new();
            loop {
                match self.s.get(pos) {
                    None => {
                        self.pos = self.s.len();
                        return out;
                    }
                    Some(&c) if self.is_space(c) => pos += 1,
                    Some('#') => match self.s[pos..].iter().position(|&c| c == '\n') {
                        Some(i) => pos += i,
                        None => {
                            self.pos = self.s.len();
                            return out;
                        }
                    },
                    Some(&c) if test(c) == include => {
                        out.push(c);
                        pos += 1;
                    }
                    Some(_) => {
                        self.pos = pos;
                        return out;
                    }
                }
            }
        } else {
            while let Some(&c) = self.s.get(pos) {
                if test(c) != include {
                    break;
                }
                pos += 1;
            }
            let out: String = self.s[self.pos..pos].iter().collect();
            self.pos = pos;
            out
        }
    }

    fn match_str(&mut self, sub: &str) -> bool {
        if self.ignore_space {
            let mut pos = self.pos;
            for c in sub.chars() {
                match self.skip(pos) {
                    Skip::At(p) => pos = p,
                    _ => return false,
                }
                if self.s[pos] != c {
                    return false;
                }
                pos += 1;
            }
            self.pos = pos;
            true
        } else {
            let n = sub.chars().count();
            if self.pos + n <= self.s.len()
                && self.s[self.pos..self.pos + n]
                    .iter()
                    .copied()
                    .eq(sub.chars())
            {
                self.pos += n;
                true
            } else {
                false
            }
        }
    }

    fn expect(&mut self, sub: &str) -> PResult<()> {
        if self.match_str(sub) {
            Ok(())
        } else {
            err(format!("missing {sub}"), self.pos)
        }
    }

    fn at_end(&self) -> bool {
        if self.ignore_space {
            !matches!(self.skip(self.pos), Skip::At(_))
        } else {
            self.pos >= self.s.len()
        }
    }
}

/// Parser state (`Info` in the reference).
struct Info {
    flags: u32,
    global_flags: u32,
    group_count: u32,
    group_index: HashMap<String, u32>,
    group_order: Vec<(String, u32)>,
    group_name: HashMap<u32, String>,
    open_groups: Vec<u32>,
    /// Python frames the reference would have on its stack here (see [`PARSE_FRAME_LIMIT`]).
    frames: usize,
    /// Where the innermost group being parsed opens (for [`ParseError::TooDeep`]).
    open_pos: usize,
    /// The most frames seen so far, and where the group that reached them opens.
    max_frames: usize,
    deepest_open: usize,
    /// Where the caller's stand-ins for lone surrogates start (see [`parse_with`]).
    stand_in_base: Option<u32>,
}

impl Info {
    fn open_group(&mut self, name: Option<&str>) -> u32 {
        let existing = name.and_then(|n| self.group_index.get(n).copied());
        let group = match existing {
            Some(g) => g,
            None => {
                loop {
                    self.group_count += 1;
                    if name.is_none() || !self.group_name.contains_key(&self.group_count) {
                        break;
                    }
                }
                let g = self.group_count;
                if let Some(n) = name {
                    self.group_index.insert(n.to_string(), g);
                    self.group_order.push((n.to_string(), g));
                    self.group_name.insert(g, n.to_string());
                }
                g
            }
        };
        self.open_groups.push(group);
        group
    }

    fn close_group(&mut self) {
        self.open_groups.pop();
    }

    /// The code point a literal pattern character stands for.
    fn code(&self, c: char) -> u32 {
        let cp = c as u32;
        match self.stand_in_base {
            Some(base) if (base..base + 0x800).contains(&cp) => 0xD800 + (cp - base),
            _ => cp,
        }
    }

    /// Runs `f` as the reference would run a nested call costing `n` frames, refusing (like
    /// the reference's `RecursionError`) when that exceeds the limit.
    fn framed<T>(&mut self, n: usize, f: impl FnOnce(&mut Info) -> PResult<T>) -> PResult<T> {
        if self.frames + n > PARSE_FRAME_LIMIT {
            return Err(ParseError::TooDeep { pos: self.open_pos });
        }
        self.frames += n;
        if self.frames > self.max_frames {
            self.max_frames = self.frames;
            self.deepest_open = self.open_pos;
        }
        let r = f(self);
        self.frames -= n;
        r
    }

    fn is_open_group(&self, name: &str) -> bool {
        if self.version1() {
            // VERSION1 lets a reference name an open group (it sees the previous capture).
            return false;
        }
        let group = if py_isdigit(name) {
            match super::unicode::py_int(name) {
                Some(g) => Some(g),
                None => return false,
            }
        } else {
            self.group_index.get(name).map(|&g| u64::from(g))
        };
        match group {
            Some(g) => self.open_groups.iter().any(|&o| u64::from(o) == g),
            None => false,
        }
    }

    /// `make_case_flags`: IGNORECASE, and full case folding when FULLCASE is on too (FULLCASE
    /// alone changes nothing; it is dropped under ASCII).
    fn case(&self) -> Case {
        let ign = self.flags & F_IGNORECASE != 0;
        Case {
            ign,
            full: ign && self.flags & F_FULLCASE != 0 && self.flags & F_ASCII == 0,
        }
    }

    fn version1(&self) -> bool {
        self.flags & F_VERSION1 != 0
    }

    fn enc(&self) -> Enc {
        if self.flags & F_ASCII != 0 {
            Enc::Ascii
        } else if self.flags & F_UNICODE != 0 {
            Enc::Unicode
        } else {
            Enc::Default
        }
    }
}

/// Parses `pattern` with the given initial flags (`F_DOTALL` and friends).
pub(crate) fn parse(pattern: &str, flags: u32) -> PResult<Parsed> {
    parse_with(pattern, flags, None)
}

/// [`parse`], reading the pattern's characters from `stand_in_base` to `stand_in_base + 0x7FF`
/// as the lone surrogates U+D800..U+DFFF they stand for (so that they match no text).
pub(crate) fn parse_with(pattern: &str, flags: u32, stand_in_base: Option<u32>) -> PResult<Parsed> {
    let mut global_flags = flags;
    loop {
        match parse_once(pattern, global_flags, stand_in_base) {
            Err(ParseError::Restart { global_flags: g }) => global_flags = g,
            other => return other,
        }
    }
}

/// One parse of the whole pattern with the given global flags (see [`ParseError::Restart`]).
fn parse_once(pattern: &str, mut flags: u32, stand_in_base: Option<u32>) -> PResult<Parsed> {
    if flags & (F_VERSION0 | F_VERSION1) == F_VERSION0 | F_VERSION1 {
        // A ValueError in the reference, raised before parsing: it has no position.
        return err("VERSION0 and VERSION1 flags are mutually incompatible", 0);
    }
    if flags & F_VERSION1 != 0 {
        // VERSION1's default flags.
        flags |= F_FULLCASE;
    }
    let mut source = Source {
        s: pattern.chars().collect(),
        pos: 0,
        ignore_space: false,
        unicode_space: flags & F_VERSION1 != 0,
    };
    let mut info = Info {
        flags,
        global_flags: flags,
        group_count: 0,
        group_index: HashMap::new(),
        group_order: Vec::new(),
        group_name: HashMap::new(),
        open_groups: Vec::new(),
        frames: 0,
        open_pos: 0,
        max_frames: 0,
        deepest_open: 0,
        stand_in_base,
    };
    source.ignore_space = info.flags & F_VERBOSE != 0;
    let mut node = parse_pattern(&mut source, &mut info)?;
    if !source.at_end() {
        return err("unbalanced parenthesis", source.pos);
    }
    let enc = info.flags & ALL_ENCODINGS;
    if !matches!(enc, 0 | F_ASCII | F_LOCALE | F_UNICODE) {
        return err(
            "ASCII, LOCALE and UNICODE flags are mutually incompatible",
            0,
        );
    }
    if node_depth(&node) > NODE_DEPTH_LIMIT {
        return Err(ParseError::TooDeep {
            pos: info.deepest_open,
        });
    }
    fix_groups(&mut node, &info, pattern)?;
    Ok(Parsed {
        node,
        group_count: info.group_count,
        names: info.group_order,
        ascii: enc == F_ASCII,
        flags: info.flags,
    })
}

fn parse_pattern(source: &mut Source, info: &mut Info) -> PResult<Node> {
    info.framed(2, |info| parse_branches(source, info))
}

fn parse_branches(source: &mut Source, info: &mut Info) -> PResult<Node> {
    let mut branches = vec![parse_sequence(source, info)?];
    while source.match_str("|") {
        branches.push(parse_sequence(source, info)?);
    }
    if branches.len() == 1 {
        Ok(branches.pop().expect("one branch"))
    } else {
        Ok(Node::Alt(branches))
    }
}

fn is_special(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => "()|?*+{^$.[\\#".contains(c),
    }
}

/// One slot of a sequence under construction: `None` marks "a quantifier may not follow".
type Slot = Option<Node>;

fn parse_sequence(source: &mut Source, info: &mut Info) -> PResult<Node> {
    let mut sequence: Vec<Slot> = vec![None];
    let mut case = info.case();
    loop {
        let saved_pos = source.pos;
        let ch = source.get();
        if is_special(ch) {
            match ch {
                None | Some(')') | Some('|') => {
                    source.pos = saved_pos;
                    break;
                }
                Some('\\') => sequence.push(Some(parse_escape(source, info, false)?.into_node())),
                Some('(') => match open_paren(source, info, saved_pos)? {
                    Some(element) => sequence.push(Some(element)),
                    None => case = info.case(),
                },
                Some('.') => {
                    if info.flags & F_DOTALL != 0 {
                        sequence.push(Some(Node::AnyAll));
                    } else if info.flags & F_WORD != 0 {
                        return unsupported("the WORD flag (?w)", saved_pos);
                    } else {
                        sequence.push(Some(Node::Any));
                    }
                }
                Some('[') => sequence.push(Some(parse_set(source, info)?)),
                Some('^') => {
                    let a = if info.flags & F_MULTILINE != 0 {
                        Assertion::StartOfLine
                    } else {
                        Assertion::StartOfString
                    };
                    sequence.push(Some(Node::Assert(a)));
                }
                Some('$') => {
                    let a = if info.flags & F_MULTILINE != 0 {
                        Assertion::EndOfLine
                    } else {
                        Assertion::EndOfStringLine
                    };
                    sequence.push(Some(Node::Assert(a)));
                }
                Some(c @ ('?' | '*' | '+' | '{')) => {
                    if let Some(counts) = parse_quantifier(source, c)? {
                        apply_quantifier(source, counts, saved_pos, &mut sequence)?;
                        sequence.push(None);
                    } else {
                        match parse_fuzzy(source, info, c)? {
                            Some(actually_fuzzy) => {
                                if actually_fuzzy {
                                    let element = sequence.pop().flatten();
                                    if element.is_none() {
                                        return err("nothing for fuzzy constraint", saved_pos);
                                    }
                                    return unsupported("fuzzy matching", saved_pos);
                                }
                            }
                            None => sequence.push(Some(char_node(c as u32, case))),
                        }
                    }
                }
                Some(c) => sequence.push(Some(char_node(c as u32, case))),
            }
        } else {
            let c = ch.expect("not the end");
            sequence.push(Some(char_node(info.code(c), case)));
        }
    }
    let items: Vec<Node> = sequence.into_iter().flatten().collect();
    Ok(make_sequence(items))
}

/// `parse_paren` for the `(` at `at`, counted as the reference's frame.
fn open_paren(source: &mut Source, info: &mut Info, at: usize) -> PResult<Option<Node>> {
    info.open_pos = at;
    info.framed(1, |info| parse_paren(source, info))
}

fn make_sequence(items: Vec<Node>) -> Node {
    if items.is_empty() {
        Node::Empty
    } else {
        Node::Seq(items)
    }
}

fn apply_quantifier(
    source: &mut Source,
    (min, max): (u32, Option<u32>),
    saved_pos: usize,
    sequence: &mut Vec<Slot>,
) -> PResult<()> {
    let element = sequence.pop().expect("sequence starts with a marker");
    let Some(element) = element else {
        if !sequence.is_empty() {
            return err("multiple repeat", saved_pos);
        }
        return err("nothing to repeat", saved_pos);
    };
    if element.is_repeat() {
        return err("multiple repeat", saved_pos);
    }
    let saved = source.pos;
    let kind = match source.get() {
        Some('?') => RepeatKind::Lazy,
        Some('+') => RepeatKind::Possessive,
        _ => {
            source.pos = saved;
            RepeatKind::Greedy
        }
    };
    let element = if !element.is_empty() && (min != 1 || max != Some(1)) {
        Node::Repeat {
            node: Box::new(element),
            min,
            max,
            kind,
        }
    } else {
        element
    };
    sequence.push(Some(element));
    Ok(())
}

fn parse_quantifier(source: &mut Source, ch: char) -> PResult<Option<(u32, Option<u32>)>> {
    match ch {
        '?' => Ok(Some((0, Some(1)))),
        '*' => Ok(Some((0, None))),
        '+' => Ok(Some((1, None))),
        '{' => parse_limited_quantifier(source),
        _ => Ok(None),
    }
}

fn parse_count(source: &mut Source) -> String {
    source.get_while(|c| c.is_ascii_digit(), true, false)
}

fn count_value(digits: &str) -> u64 {
    // Digits are ASCII; saturate absurd values (they are "too big" anyway).
    digits.parse::<u64>().unwrap_or(u64::MAX)
}

fn parse_limited_quantifier(source: &mut Source) -> PResult<Option<(u32, Option<u32>)>> {
    let saved_pos = source.pos;
    let min_count = parse_count(source);
    let (min, max);
    if source.match_str(",") {
        let max_count = parse_count(source);
        min = if min_count.is_empty() {
            0
        } else {
            count_value(&min_count)
        };
        max = if max_count.is_empty() {
            None
        } else {
            Some(count_value(&max_count))
        };
    } else {
        if min_count.is_empty() {
            source.pos = saved_pos;
            return Ok(None);
        }
        min = count_value(&min_count);
        max = Some(min);
    }
    if !source.match_str("}") {
        source.pos = saved_pos;
        return Ok(None);
    }
    if min >= UNLIMITED || max.is_some_and(|m| m >= UNLIMITED) {
        return err("repeat count too big", saved_pos);
    }
    if let Some(m) = max
        && min > m
    {
        return err("min repeat greater than max repeat", saved_pos);
    }
    Ok(Some((min as u32, max.map(|m| m as u32))))
}

/// Internal signal for "not a fuzzy constraint after all" (ParseError in the reference).
struct NotFuzzy;

/// Parses a fuzzy constraint after `{`. `Ok(None)`: it is a literal `{`. `Ok(Some(actual))`: it
/// is a constraint; `actual` tells whether it really allows errors.
fn parse_fuzzy(source: &mut Source, info: &mut Info, ch: char) -> PResult<Option<bool>> {
    let saved_pos = source.pos;
    if ch != '{' {
        return Ok(None);
    }
    let mut constraints: HashMap<char, (u64, Option<u64>)> = HashMap::new();
    let mut has_cost = false;
    let mut r = parse_fuzzy_item(source, &mut constraints, &mut has_cost);
    while matches!(r, Ok(Ok(()))) && source.match_str(",") {
        r = parse_fuzzy_item(source, &mut constraints, &mut has_cost);
    }
    match r {
        Err(e) => return Err(e),
        Ok(Err(NotFuzzy)) => {
            source.pos = saved_pos;
            return Ok(None);
        }
        Ok(Ok(())) => {}
    }
    if source.match_str(":") {
        parse_fuzzy_test(source, info)?;
    }
    if !source.match_str("}") {
        return err("expected }", source.pos);
    }
    // is_actually_fuzzy
    if constraints.get(&'e') == Some(&(0, Some(0))) {
        return Ok(Some(false));
    }
    let zero = Some(&(0, Some(0)));
    if constraints.get(&'s') == zero
        && constraints.get(&'i') == zero
        && constraints.get(&'d') == zero
    {
        return Ok(Some(false));
    }
    Ok(Some(true))
}

type FuzzyResult = PResult<Result<(), NotFuzzy>>;

fn parse_fuzzy_item(
    source: &mut Source,
    constraints: &mut HashMap<char, (u64, Option<u64>)>,
    has_cost: &mut bool,
) -> FuzzyResult {
    let saved_pos = source.pos;
    match parse_cost_constraint(source, constraints)? {
        Ok(()) => Ok(Ok(())),
        Err(NotFuzzy) => {
            source.pos = saved_pos;
            parse_cost_equation(source, has_cost)
        }
    }
}

fn parse_cost_constraint(
    source: &mut Source,
    constraints: &mut HashMap<char, (u64, Option<u64>)>,
) -> FuzzyResult {
    let saved_pos = source.pos;
    let ch = source.get();
    match ch {
        Some(c) if c.is_ascii_alphabetic() => {
            let Some(constraint) = parse_constraint(constraints, Some(c)) else {
                return Ok(Err(NotFuzzy));
            };
            match parse_fuzzy_compare(source) {
                None => {
                    constraints.insert(constraint, (0, None));
                }
                Some(max_inc) => {
                    let cost_pos = source.pos;
                    let mut max_cost = parse_cost_limit(source)? as i128;
                    if !max_inc {
                        max_cost -= 1;
                    }
                    if !(0..=0xFFFF_FFFF).contains(&max_cost) {
                        return err("bad fuzzy cost limit", cost_pos);
                    }
                    constraints.insert(constraint, (0, Some(max_cost as u64)));
                }
            }
            Ok(Ok(()))
        }
        Some(c) if c.is_ascii_digit() => {
            source.pos = saved_pos;
            let mut min_cost = parse_cost_limit(source)? as i128;
            let Some(min_inc) = parse_fuzzy_compare(source) else {
                return Ok(Err(NotFuzzy));
            };
            let c2 = source.get();
            let Some(constraint) = parse_constraint(constraints, c2) else {
                return Ok(Err(NotFuzzy));
            };
            let Some(max_inc) = parse_fuzzy_compare(source) else {
                return Ok(Err(NotFuzzy));
            };
            let cost_pos = source.pos;
            let mut max_cost = parse_cost_limit(source)? as i128;
            if !min_inc {
                min_cost += 1;
            }
            if !max_inc {
                max_cost -= 1;
            }
            if !(0 <= min_cost && min_cost <= max_cost) {
                return err("bad fuzzy cost limit", cost_pos);
            }
            constraints.insert(constraint, (min_cost as u64, Some(max_cost as u64)));
            Ok(Ok(()))
        }
        _ => Ok(Err(NotFuzzy)),
    }
}

fn parse_cost_limit(source: &mut Source) -> PResult<u64> {
    let cost_pos = source.pos;
    let digits = parse_count(source);
    if digits.is_empty() {
        return err("bad fuzzy cost limit", cost_pos);
    }
    Ok(count_value(&digits))
}

fn parse_constraint(
    constraints: &HashMap<char, (u64, Option<u64>)>,
    ch: Option<char>,
) -> Option<char> {
    match ch {
        Some(c) if "deis".contains(c) && !constraints.contains_key(&c) => Some(c),
        _ => None,
    }
}

fn parse_fuzzy_compare(source: &mut Source) -> Option<bool> {
    if source.match_str("<=") {
        Some(true)
    } else if source.match_str("<") {
        Some(false)
    } else {
        None
    }
}

fn parse_cost_equation(source: &mut Source, has_cost: &mut bool) -> FuzzyResult {
    if *has_cost {
        return err("more than one cost equation", source.pos);
    }
    let mut cost: Vec<char> = Vec::new();
    if let Err(e) = parse_cost_term(source, &mut cost)? {
        return Ok(Err(e));
    }
    while source.match_str("+") {
        if let Err(e) = parse_cost_term(source, &mut cost)? {
            return Ok(Err(e));
        }
    }
    let Some(max_inc) = parse_fuzzy_compare(source) else {
        return Ok(Err(NotFuzzy));
    };
    let digits = parse_count(source);
    if digits.is_empty() {
        // int('') raises ValueError in the reference, which escapes as a compile failure.
        return err("invalid literal for int() with base 10: ''", source.pos);
    }
    let mut max_cost = count_value(&digits) as i128;
    if !max_inc {
        max_cost -= 1;
    }
    if !(0..=0xFFFF_FFFF).contains(&max_cost) {
        return err("bad fuzzy cost limit", source.pos);
    }
    *has_cost = true;
    Ok(Ok(()))
}

fn parse_cost_term(source: &mut Source, cost: &mut Vec<char>) -> FuzzyResult {
    let _coeff = parse_count(source);
    let ch = source.get();
    match ch {
        Some(c) if "dis".contains(c) => {
            if cost.contains(&c) {
                return err("repeated fuzzy cost", source.pos);
            }
            cost.push(c);
            Ok(Ok(()))
        }
        _ => Ok(Err(NotFuzzy)),
    }
}

fn parse_fuzzy_test(source: &mut Source, info: &mut Info) -> PResult<()> {
    let saved_pos = source.pos;
    let ch = source.get();
    if is_special(ch) {
        match ch {
            Some('\\') => {
                parse_escape(source, info, false)?;
            }
            Some('.') => {}
            Some('[') => {
                parse_set(source, info)?;
            }
            _ => return err("expected character set", saved_pos),
        }
    }
    Ok(())
}

fn parse_paren(source: &mut Source, info: &mut Info) -> PResult<Option<Node>> {
    let saved_pos = source.pos;
    let ch = source.get_ex(true);
    if ch == Some('?') {
        let saved_pos_2 = source.pos;
        let ch = source.get_ex(true);
        match ch {
            Some('<') => {
                let saved_pos_3 = source.pos;
                let ch = source.get();
                if ch == Some('=') || ch == Some('!') {
                    let positive = ch == Some('=');
                    return info
                        .framed(1, |info| parse_lookaround(source, info, true, positive))
                        .map(Some);
                }
                source.pos = saved_pos_3;
                let name = parse_name(source, false, false)?;
                return parse_named_group_body(source, info, &name).map(Some);
            }
            Some('=') | Some('!') => {
                let positive = ch == Some('=');
                return info
                    .framed(1, |info| parse_lookaround(source, info, false, positive))
                    .map(Some);
            }
            Some('P') => return info.framed(1, |info| parse_extension(source, info)),
            Some('#') => {
                parse_comment(source)?;
                return Ok(None);
            }
            Some('(') => {
                return info.framed(1, |info| parse_conditional(source, info, saved_pos_2 - 1));
            }
            Some('>') => return info.framed(1, |info| parse_atomic(source, info)).map(Some),
            Some('|') => return unsupported("branch reset group (?|...)", saved_pos - 1),
            Some(c) if c == 'R' || c.is_ascii_digit() => {
                // Validate like the reference before refusing.
                if c != 'R' {
                    source.get_while(|c| c.is_ascii_digit(), true, false);
                }
                source.expect(")")?;
                return unsupported("recursive group call (?R)/(?n)", saved_pos - 1);
            }
            Some('&') => {
                parse_name(source, false, false)?;
                source.expect(")")?;
                return unsupported("named group call (?&name)", saved_pos - 1);
            }
            Some(c @ ('+' | '-')) if source.peek().is_some_and(|p| p.is_ascii_digit()) => {
                let _ = c;
                let digits = source.get_while(|c| c.is_ascii_digit(), true, false);
                if digits.is_empty() {
                    return err("missing relative group number", source.pos);
                }
                let offset = count_value(&digits) as i128;
                let group = if c == '+' {
                    i128::from(info.group_count) + offset
                } else {
                    i128::from(info.group_count) - offset + 1
                };
                if group <= 0 {
                    return err("invalid relative group number", source.pos);
                }
                source.expect(")")?;
                return unsupported("relative group call (?+n)/(?-n)", saved_pos - 1);
            }
            _ => {}
        }
        source.pos = saved_pos_2;
        return info.framed(1, |info| {
            parse_flags_subpattern(source, info, saved_pos - 1)
        });
    }
    if ch == Some('*') {
        let saved_pos_2 = source.pos;
        let word = source.get_while(|c| c == ')' || c == '>', false, false);
        if word.chars().next().is_some_and(pyunicode::isalpha) {
            match word.as_str() {
                "FAIL" | "F" => {
                    source.expect(")")?;
                    return Ok(Some(Node::Fail));
                }
                "PRUNE" | "SKIP" => {
                    source.expect(")")?;
                    return unsupported(format!("backtracking verb (*{word})"), saved_pos - 1);
                }
                _ => return err("unknown verb", saved_pos_2),
            }
        }
    }
    // An unnamed capture group.
    source.pos = saved_pos;
    let group = info.open_group(None);
    let saved_flags = info.flags;
    let r = parse_pattern(source, info).and_then(|p| source.expect(")").map(|_| p));
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_VERBOSE != 0;
    let subpattern = r?;
    info.close_group();
    Ok(Some(Node::Group {
        index: group,
        node: Box::new(subpattern),
    }))
}

fn parse_named_group_body(source: &mut Source, info: &mut Info, name: &str) -> PResult<Node> {
    let group = info.open_group(Some(name));
    source.expect(">")?;
    let saved_flags = info.flags;
    let r = parse_pattern(source, info).and_then(|p| source.expect(")").map(|_| p));
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_VERBOSE != 0;
    let subpattern = r?;
    info.close_group();
    Ok(Node::Group {
        index: group,
        node: Box::new(subpattern),
    })
}

fn parse_extension(source: &mut Source, info: &mut Info) -> PResult<Option<Node>> {
    let saved_pos = source.pos;
    let ch = source.get();
    match ch {
        Some('<') => {
            let name = parse_name(source, false, false)?;
            parse_named_group_body(source, info, &name).map(Some)
        }
        Some('=') => {
            let name = parse_name(source, true, false)?;
            source.expect(")")?;
            if info.is_open_group(&name) {
                return err("cannot refer to an open group", saved_pos);
            }
            Ok(Some(make_ref_group(info, &name, saved_pos)))
        }
        Some('>') | Some('&') => {
            parse_name(source, false, false)?;
            source.expect(")")?;
            unsupported("named group call (?P>name)", saved_pos - 3)
        }
        _ => {
            source.pos = saved_pos;
            err("unknown extension", saved_pos)
        }
    }
}

fn make_ref_group(info: &Info, name: &str, pos: usize) -> Node {
    let group = if py_isdigit(name) {
        match super::unicode::py_int(name) {
            Some(n) if n <= u64::from(u32::MAX) => GroupName::Number(n as u32),
            // int() of a non-decimal digit raises in the reference; keep the name so that
            // resolution fails.
            _ => GroupName::Name(name.to_string()),
        }
    } else {
        GroupName::Name(name.to_string())
    };
    let case = info.case();
    Node::Backref {
        group,
        ign: case.ign,
        full: case.full,
        pos,
    }
}

fn parse_comment(source: &mut Source) -> PResult<()> {
    let mut saved_pos;
    loop {
        saved_pos = source.pos;
        let c = source.get_ex(true);
        match c {
            None | Some(')') => break,
            Some('\\') => {
                source.get_ex(true);
            }
            _ => {}
        }
    }
    source.pos = saved_pos;
    source.expect(")")
}

fn parse_lookaround(
    source: &mut Source,
    info: &mut Info,
    behind: bool,
    positive: bool,
) -> PResult<Node> {
    let saved_flags = info.flags;
    let r = parse_pattern(source, info).and_then(|p| source.expect(")").map(|_| p));
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_VERBOSE != 0;
    let subpattern = r?;
    Ok(Node::Look {
        behind,
        positive,
        node: Box::new(subpattern),
    })
}

fn parse_conditional(source: &mut Source, info: &mut Info, start: usize) -> PResult<Option<Node>> {
    // Parse it like the reference (to report the same syntax errors), then refuse it.
    let saved_flags = info.flags;
    let saved_pos = source.pos;
    let ch = source.get();
    if ch == Some('?') {
        let ch = source.get();
        let look = match ch {
            Some('=') | Some('!') => true,
            Some('<') => matches!(source.get(), Some('=') | Some('!')),
            _ => false,
        };
        if !look {
            source.pos = saved_pos;
            return err("expected lookaround conditional", source.pos);
        }
        let r = parse_pattern(source, info).and_then(|_| source.expect(")"));
        info.flags = saved_flags;
        source.ignore_space = info.flags & F_VERBOSE != 0;
        r?;
        parse_sequence(source, info)?;
        if source.match_str("|") {
            parse_sequence(source, info)?;
        }
        source.expect(")")?;
        return unsupported("lookaround conditional (?(?=...)...)", start);
    }
    source.pos = saved_pos;
    let r = (|| {
        parse_name(source, true, false)?;
        source.expect(")")?;
        let yes = parse_sequence(source, info)?;
        let no = if source.match_str("|") {
            parse_sequence(source, info)?
        } else {
            Node::Empty
        };
        source.expect(")")?;
        Ok(yes.is_empty() && no.is_empty())
    })();
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_VERBOSE != 0;
    if r? {
        // The reference drops a conditional whose branches are both empty.
        return Ok(Some(Node::Empty));
    }
    unsupported("conditional group (?(name)...)", start)
}

fn parse_atomic(source: &mut Source, info: &mut Info) -> PResult<Node> {
    let saved_flags = info.flags;
    let r = parse_pattern(source, info).and_then(|p| source.expect(")").map(|_| p));
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_VERBOSE != 0;
    Ok(Node::Atomic(Box::new(r?)))
}

fn flag_bit(s: &str) -> Option<u32> {
    Some(match s {
        "a" => F_ASCII,
        "b" => F_BESTMATCH,
        "e" => F_ENHANCEMATCH,
        "f" => F_FULLCASE,
        "i" => F_IGNORECASE,
        "L" => F_LOCALE,
        "m" => F_MULTILINE,
        "p" => F_POSIX,
        "r" => F_REVERSE,
        "s" => F_DOTALL,
        "u" => F_UNICODE,
        "V0" => F_VERSION0,
        "V1" => F_VERSION1,
        "w" => F_WORD,
        "x" => F_VERBOSE,
        _ => return None,
    })
}

fn parse_flag_set(source: &mut Source) -> u32 {
    let mut flags = 0;
    loop {
        let saved_pos = source.pos;
        let mut s = String::new();
        if let Some(c) = source.get() {
            s.push(c);
            if c == 'V'
                && let Some(c2) = source.get()
            {
                s.push(c2);
            }
        }
        match flag_bit(&s) {
            Some(b) => flags |= b,
            None => {
                source.pos = saved_pos;
                return flags;
            }
        }
    }
}

fn parse_flags_subpattern(
    source: &mut Source,
    info: &mut Info,
    start: usize,
) -> PResult<Option<Node>> {
    let flags_on = parse_flag_set(source);
    let flags_off = if source.match_str("-") {
        let off = parse_flag_set(source);
        if off == 0 {
            return err("bad inline flags: no flags after '-'", source.pos);
        }
        off
    } else {
        0
    };
    if flags_off & GLOBAL_FLAGS != 0 {
        return err("bad inline flags: cannot turn off global flag", source.pos);
    }
    if flags_on & flags_off != 0 {
        return err("bad inline flags: flag turned on and off", source.pos);
    }
    let unsupported_on = [
        (F_REVERSE, "the REVERSE flag (?r)"),
        (F_POSIX, "the POSIX flag (?p)"),
        (F_LOCALE, "the LOCALE flag (?L)"),
        (F_WORD, "the WORD flag (?w)"),
    ];
    for (bit, what) in unsupported_on {
        if flags_on & bit != 0 {
            return unsupported(what, start);
        }
    }
    let new_global = (flags_on & !info.global_flags) & GLOBAL_FLAGS;
    if new_global != 0 {
        // Like the reference, parse everything again with the global flag on from the start
        // (only VERSION1 changes the parse; BESTMATCH, ENHANCEMATCH and VERSION0 change
        // nothing this engine does).
        return Err(ParseError::Restart {
            global_flags: info.global_flags | new_global,
        });
    }
    let flags_on = flags_on & !GLOBAL_FLAGS;
    if source.match_str(":") {
        return info
            .framed(1, |info| {
                parse_subpattern(source, info, flags_on, flags_off)
            })
            .map(Some);
    }
    if source.match_str(")") {
        info.flags = (info.flags | flags_on) & !flags_off;
        source.ignore_space = info.flags & F_VERBOSE != 0;
        return Ok(None);
    }
    err("unknown extension", source.pos)
}

fn parse_subpattern(
    source: &mut Source,
    info: &mut Info,
    flags_on: u32,
    flags_off: u32,
) -> PResult<Node> {
    let saved_flags = info.flags;
    info.flags = (info.flags | flags_on) & !flags_off;
    if info.flags & ALL_ENCODINGS != 0 {
        info.flags = (info.flags & !ALL_ENCODINGS) | flags_on;
    }
    source.ignore_space = info.flags & F_VERBOSE != 0;
    let r = parse_pattern(source, info).and_then(|p| source.expect(")").map(|_| p));
    info.flags = saved_flags;
    source.ignore_space = info.flags & F_VERBOSE != 0;
    r
}

fn parse_name(source: &mut Source, allow_numeric: bool, allow_group_0: bool) -> PResult<String> {
    let name = source.get_while(|c| c == ')' || c == '>', false, false);
    if name.is_empty() {
        return err("missing group name", source.pos);
    }
    if py_isdigit(&name) {
        let min_group = if allow_group_0 { 0 } else { 1 };
        let ok = allow_numeric && super::unicode::py_int(&name).is_some_and(|v| v >= min_group);
        if !ok {
            if allow_numeric && super::unicode::py_int(&name).is_none() {
                // int() raises ValueError in the reference (a non-decimal digit such as `²`).
                return err(
                    format!("invalid literal for int() with base 10: '{name}'"),
                    source.pos,
                );
            }
            return err("bad character in group name", source.pos);
        }
    } else if !pyunicode::isidentifier(&name) {
        return err("bad character in group name", source.pos);
    }
    Ok(name)
}

/// What an escape produced: a node, or (inside a set) a set member.
enum Escaped {
    Node(Node),
    Item(SetItem),
}

impl Escaped {
    fn into_node(self) -> Node {
        match self {
            Escaped::Node(n) => n,
            Escaped::Item(_) => unreachable!("set items only come from escapes inside sets"),
        }
    }
}

/// `make_character`: a literal outside a set carries the case flag; inside a set it does not.
fn make_character(info: &Info, value: u32, in_set: bool) -> Escaped {
    if in_set {
        Escaped::Item(SetItem::Char(value))
    } else {
        Escaped::Node(char_node(value, info.case()))
    }
}

fn make_property(info: &Info, key: u32, positive: bool, enc: Enc, in_set: bool) -> Escaped {
    if in_set {
        Escaped::Item(SetItem::Prop { key, positive, enc })
    } else {
        let case = info.case();
        Escaped::Node(Node::Prop {
            key,
            positive,
            ign: case.ign,
            full: case.full,
            enc,
        })
    }
}

/// An escape after its backslash (the reference's `parse_escape`): outside a set a node, inside
/// one a set member.
fn parse_escape(source: &mut Source, info: &mut Info, in_set: bool) -> PResult<Escaped> {
    let saved_ignore = source.ignore_space;
    source.ignore_space = false;
    let ch = source.get();
    source.ignore_space = saved_ignore;
    let Some(ch) = ch else {
        return err("bad escape (end of pattern)", source.pos);
    };
    let escape_pos = source.pos - 2;
    match ch {
        'x' => parse_hex_escape(source, info, 'x', 2, in_set),
        'u' => parse_hex_escape(source, info, 'u', 4, in_set),
        'U' => parse_hex_escape(source, info, 'U', 8, in_set),
        'g' if !in_set => parse_g_escape(source, info),
        'G' if !in_set => unsupported("search anchor \\G", escape_pos),
        'L' if !in_set => {
            source.expect("<")?;
            parse_name(source, true, false)?;
            source.expect(">")?;
            err("undefined named list", source.pos)
        }
        'N' => parse_named_char(source, info, in_set),
        'p' | 'P' => parse_property(source, info, ch == 'p', in_set),
        'R' if !in_set => Ok(Escaped::Node(line_ending())),
        'X' if !in_set => unsupported("grapheme cluster \\X", escape_pos),
        c if c.is_ascii_alphabetic() => parse_letter_escape(source, info, c, escape_pos, in_set),
        c if c.is_ascii_digit() => parse_numeric_escape(source, info, c, in_set),
        c => Ok(make_character(info, info.code(c), in_set)),
    }
}

/// `\g<name>` outside a set: a group reference, or (when what follows is not one) the letter
/// `g` itself.
fn parse_g_escape(source: &mut Source, info: &mut Info) -> PResult<Escaped> {
    let saved_pos = source.pos;
    match parse_group_ref(source, info) {
        Ok(node) => Ok(Escaped::Node(node)),
        // Only the reference's own `error`s are caught; `int()` failures escape.
        Err(ParseError::Syntax { message, .. }) if !message.starts_with("invalid literal") => {
            source.pos = saved_pos;
            Ok(make_character(info, 'g' as u32, false))
        }
        Err(e) => Err(e),
    }
}

/// `\R`: a line ending, `\r\n` or one of `\n \v \f \r \x85 \u2028 \u2029`, atomically.
fn line_ending() -> Node {
    let crlf = Node::Seq(vec![
        Node::Char {
            c: 0x0D,
            positive: true,
            ign: false,
            full: false,
        },
        Node::Char {
            c: 0x0A,
            positive: true,
            ign: false,
            full: false,
        },
    ]);
    let set = Node::Set {
        items: [0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029]
            .iter()
            .map(|&c| SetItem::Char(c))
            .collect(),
        positive: true,
        ign: false,
        full: false,
    };
    Node::Atomic(Box::new(Node::Alt(vec![crlf, set])))
}

/// The class escapes (`\d`, `\w`, `\s`, ...): the binary property and whether it is positive.
fn class_escape(c: char) -> Option<(&'static str, bool)> {
    match c {
        'd' => Some(("DIGIT", true)),
        'D' => Some(("DIGIT", false)),
        'h' => Some(("BLANK", true)),
        's' => Some(("SPACE", true)),
        'S' => Some(("SPACE", false)),
        'w' => Some(("WORD", true)),
        'W' => Some(("WORD", false)),
        _ => None,
    }
}

/// The control-character escapes (`\n`, `\t`, ...): the code point.
fn control_escape(c: char) -> Option<u32> {
    match c {
        'a' => Some(0x07),
        'b' => Some(0x08),
        'f' => Some(0x0C),
        'n' => Some(0x0A),
        'r' => Some(0x0D),
        't' => Some(0x09),
        'v' => Some(0x0B),
        _ => None,
    }
}

/// An ASCII letter after the backslash that is not a special escape: a position (outside a
/// set), a class, a control character, or an error.
fn parse_letter_escape(
    source: &Source,
    info: &Info,
    c: char,
    escape_pos: usize,
    in_set: bool,
) -> PResult<Escaped> {
    if !in_set && let Some(node) = position_escape(info, c, escape_pos)? {
        return Ok(Escaped::Node(node));
    }
    if let Some((name, positive)) = class_escape(c) {
        // `\h` has no ASCII/Unicode variant in the reference tables.
        let enc = if c == 'h' { Enc::Default } else { info.enc() };
        // The escapes `\d`, `\w`, `\s`, ... are prebuilt nodes in the reference: they never
        // carry the case-insensitive flag.
        let key = props::binary_key(name);
        return Ok(if in_set {
            Escaped::Item(SetItem::Prop { key, positive, enc })
        } else {
            Escaped::Node(Node::Prop {
                key,
                positive,
                ign: false,
                full: false,
                enc,
            })
        });
    }
    if let Some(v) = control_escape(c) {
        // CHARACTER_ESCAPES produce a plain Character (no case flag).
        return Ok(if in_set {
            Escaped::Item(SetItem::Char(v))
        } else {
            Escaped::Node(Node::Char {
                c: v,
                positive: true,
                ign: false,
                full: false,
            })
        });
    }
    err(format!("bad escape \\{c}"), source.pos)
}

fn position_escape(info: &Info, c: char, pos: usize) -> PResult<Option<Node>> {
    if info.flags & F_WORD != 0 && "bBmM".contains(c) {
        return unsupported("the WORD flag (?w)", pos);
    }
    let enc = if info.flags & F_ASCII != 0 {
        Enc::Ascii
    } else if info.flags & F_UNICODE != 0 {
        Enc::Unicode
    } else {
        Enc::Default
    };
    Ok(match c {
        'A' => Some(Node::Assert(Assertion::StartOfString)),
        'b' => Some(Node::Assert(Assertion::Boundary {
            positive: true,
            enc,
        })),
        'B' => Some(Node::Assert(Assertion::Boundary {
            positive: false,
            enc,
        })),
        'K' => return unsupported("keep \\K", pos),
        'm' => Some(Node::Assert(Assertion::StartOfWord { enc })),
        'M' => Some(Node::Assert(Assertion::EndOfWord { enc })),
        'Z' | 'z' => Some(Node::Assert(Assertion::EndOfString)),
        _ => None,
    })
}

fn parse_numeric_escape(
    source: &mut Source,
    info: &mut Info,
    ch: char,
    in_set: bool,
) -> PResult<Escaped> {
    if in_set || ch == '0' {
        return parse_octal_escape(source, info, vec![ch], in_set);
    }
    let mut digits = String::from(ch);
    let mut saved_pos = source.pos;
    let c = source.get();
    if let Some(c) = c.filter(|c| c.is_ascii_digit()) {
        digits.push(c);
        saved_pos = source.pos;
        let c3 = source.get();
        if digits.chars().all(|d| d.is_digit(8)) && c3.is_some_and(|d| d.is_digit(8)) {
            let mut s = digits.clone();
            s.push(c3.expect("checked"));
            let enc = info.flags & ALL_ENCODINGS;
            let mask = if enc == F_ASCII || enc == F_LOCALE {
                0xFF
            } else {
                0x1FF
            };
            let value = u32::from_str_radix(&s, 8).expect("octal digits") & mask;
            return Ok(make_character(info, value, false));
        }
    }
    source.pos = saved_pos;
    if info.is_open_group(&digits) {
        return err("cannot refer to an open group", source.pos);
    }
    Ok(Escaped::Node(make_ref_group(info, &digits, source.pos)))
}

fn parse_octal_escape(
    source: &mut Source,
    info: &mut Info,
    mut digits: Vec<char>,
    in_set: bool,
) -> PResult<Escaped> {
    let mut saved_pos = source.pos;
    let mut ch = source.get();
    while digits.len() < 3 && ch.is_some_and(|c| c.is_digit(8)) {
        digits.push(ch.expect("checked"));
        saved_pos = source.pos;
        ch = source.get();
    }
    source.pos = saved_pos;
    let s: String = digits.iter().collect();
    match u32::from_str_radix(&s, 8) {
        Ok(value) => Ok(make_character(info, value, in_set)),
        Err(_) => {
            if digits[0].is_digit(8) {
                err(format!("incomplete escape \\{s}"), source.pos)
            } else {
                err(format!("bad escape \\{}", digits[0]), source.pos)
            }
        }
    }
}

fn parse_hex_escape(
    source: &mut Source,
    info: &mut Info,
    esc: char,
    expected_len: usize,
    in_set: bool,
) -> PResult<Escaped> {
    let saved_pos = source.pos;
    let mut digits = String::new();
    for _ in 0..expected_len {
        let ch = source.get();
        match ch {
            Some(c) if c.is_ascii_hexdigit() => digits.push(c),
            _ => return err(format!("incomplete escape \\{esc}{digits}"), saved_pos),
        }
    }
    let value = u32::from_str_radix(&digits, 16).expect("hex digits");
    if value < 0x110000 {
        // Surrogates are accepted; they can never match a Rust `str`.
        return Ok(make_character(info, value, in_set));
    }
    err(format!("bad hex escape \\{esc}{digits}"), saved_pos)
}

fn parse_group_ref(source: &mut Source, info: &mut Info) -> PResult<Node> {
    source.expect("<")?;
    let saved_pos = source.pos;
    let name = parse_name(source, true, false)?;
    source.expect(">")?;
    if info.is_open_group(&name) {
        return err("cannot refer to an open group", source.pos);
    }
    Ok(make_ref_group(info, &name, saved_pos))
}

fn parse_named_char(source: &mut Source, info: &mut Info, in_set: bool) -> PResult<Escaped> {
    let saved_pos = source.pos;
    if source.match_str("{") {
        let name = source.get_while(
            |c| c.is_ascii_alphanumeric() || c == ' ' || c == '-',
            true,
            true,
        );
        if source.match_str("}") {
            return match names::lookup(&name) {
                Some(Named::Char(c)) => Ok(make_character(info, c, in_set)),
                // The reference's `ord()` of a named sequence raises TypeError, which escapes as
                // a compile failure.
                Some(Named::Sequence(len)) => err(
                    format!("ord() expected a character, but string of length {len} found"),
                    source.pos,
                ),
                None => err("undefined character name", source.pos),
            };
        }
    }
    source.pos = saved_pos;
    Ok(make_character(info, 'N' as u32, in_set))
}

fn parse_property(
    source: &mut Source,
    info: &mut Info,
    positive: bool,
    in_set: bool,
) -> PResult<Escaped> {
    let saved_pos = source.pos;
    let ch = source.get();
    let enc = info.enc();
    if ch == Some('{') {
        let negate = source.match_str("^");
        let (prop_name, name) = parse_property_name(source);
        if source.match_str("}") {
            return match props::lookup(prop_name.as_deref(), &name, positive != negate, false) {
                Lookup::Found { key, positive } => {
                    Ok(make_property(info, key, positive, enc, in_set))
                }
                Lookup::Unknown(msg) => err(msg, source.pos),
            };
        }
    } else if let Some(c) = ch.filter(|c| "CLMNPSZ".contains(*c)) {
        return match props::lookup(None, &c.to_string(), positive, false) {
            Lookup::Found { key, positive } => Ok(make_property(info, key, positive, enc, in_set)),
            Lookup::Unknown(msg) => err(msg, source.pos),
        };
    }
    source.pos = saved_pos;
    Ok(make_character(
        info,
        if positive { 'p' } else { 'P' } as u32,
        in_set,
    ))
}

fn is_property_name_part(c: char) -> bool {
    c.is_ascii_alphanumeric() || " &_-.".contains(c)
}

fn parse_property_name(source: &mut Source) -> (Option<String>, String) {
    let name = source.get_while(is_property_name_part, true, false);
    let mut saved_pos = source.pos;
    let ch = source.get();
    let result = if ch == Some(':') || ch == Some('=') {
        let value = source.get_while(
            |c| c.is_ascii_alphanumeric() || " &_-./".contains(c),
            true,
            false,
        );
        let value = value.trim_matches(pyunicode::isspace).to_string();
        if !value.is_empty() {
            saved_pos = source.pos;
            (Some(name), value)
        } else {
            (None, name)
        }
    } else {
        (None, name)
    };
    source.pos = saved_pos;
    result
}

fn parse_set(source: &mut Source, info: &mut Info) -> PResult<Node> {
    let saved_ignore = source.ignore_space;
    source.ignore_space = false;
    let negate = source.match_str("^");
    let v1 = info.version1();
    let r = (|| {
        let item = if v1 {
            parse_set_union(source, info)?
        } else {
            union_of(parse_set_imp_union(source, info)?)
        };
        if !source.match_str("]") {
            return err("missing ]", source.pos);
        }
        Ok(item)
    })();
    source.ignore_space = saved_ignore;
    let item = r?;
    let item = if negate { negated(item) } else { item };
    Ok(set_node(item, info.case()))
}

/// The node for the item a bracketed set parses to (the reference's parser returns a lone
/// member as itself, so `[a]` is the character `a` and `[^\w]` is `\W`).
fn set_node(item: SetItem, case: Case) -> Node {
    let (items, positive) = match item {
        SetItem::Char(c) => return char_node(c, case),
        SetItem::Prop { key, positive, enc } => {
            return Node::Prop {
                key,
                positive,
                ign: case.ign,
                full: case.full,
                enc,
            };
        }
        SetItem::Range(..) => (vec![item], true),
        SetItem::Union(items) => (vec![SetItem::Union(items)], true),
        SetItem::Nested {
            op: SetOp::Union,
            items,
            positive,
        } => {
            if let [SetItem::Char(c)] = items.as_slice() {
                // A negated character (`[^a]`).
                return Node::Char {
                    c: *c,
                    positive,
                    ign: case.ign,
                    full: case.full,
                };
            }
            (items, positive)
        }
        SetItem::Nested {
            op,
            items,
            positive,
        } => (
            vec![SetItem::Nested {
                op,
                items,
                positive: true,
            }],
            positive,
        ),
    };
    if super::sets::union_is_everything(&items) {
        // The reference turns a union holding a property and its negation (or two negated
        // characters) into "any character", whatever the set's own negation.
        return Node::AnyAll;
    }
    Node::Set {
        items,
        positive,
        ign: case.ign,
        full: case.full,
    }
}

/// A list of set members as one item (the reference's `SetUnion`, or the lone member).
fn union_of(mut items: Vec<SetItem>) -> SetItem {
    if items.len() == 1 {
        return items.pop().expect("one item");
    }
    SetItem::Nested {
        op: SetOp::Union,
        items,
        positive: true,
    }
}

/// `item` negated, as the reference's `with_flags(positive=not item.positive)`.
fn negated(item: SetItem) -> SetItem {
    match item {
        SetItem::Prop { key, positive, enc } => SetItem::Prop {
            key,
            positive: !positive,
            enc,
        },
        SetItem::Nested {
            op,
            mut items,
            positive,
        } => {
            if op == SetOp::Union
                && !positive
                && items.len() == 1
                && matches!(items[0], SetItem::Char(_) | SetItem::Range(..))
            {
                // A negated character or range negated again is itself.
                return items.pop().expect("one item");
            }
            SetItem::Nested {
                op,
                items,
                positive: !positive,
            }
        }
        SetItem::Union(items) => SetItem::Nested {
            op: SetOp::Union,
            items,
            positive: false,
        },
        single @ (SetItem::Char(_) | SetItem::Range(..)) => SetItem::Nested {
            op: SetOp::Union,
            items: vec![single],
            positive: false,
        },
    }
}

/// VERSION1: `x||y`.
fn parse_set_union(source: &mut Source, info: &mut Info) -> PResult<SetItem> {
    parse_set_operation(source, info, SetOp::Union)
}

/// VERSION1's set operators by increasing precedence: `||`, `~~`, `&&`, `--`, then the implicit
/// union of adjacent members.
fn parse_set_operation(source: &mut Source, info: &mut Info, op: SetOp) -> PResult<SetItem> {
    let (token, tighter) = match op {
        SetOp::Union => ("||", Some(SetOp::SymDiff)),
        SetOp::SymDiff => ("~~", Some(SetOp::Inter)),
        SetOp::Inter => ("&&", Some(SetOp::Diff)),
        SetOp::Diff => ("--", None),
    };
    let operand = |source: &mut Source, info: &mut Info| match tighter {
        Some(t) => parse_set_operation(source, info, t),
        None => parse_set_imp_union(source, info).map(union_of),
    };
    let mut items = vec![operand(source, info)?];
    while source.match_str(token) {
        items.push(operand(source, info)?);
    }
    if items.len() == 1 {
        return Ok(items.pop().expect("one item"));
    }
    Ok(SetItem::Nested {
        op,
        items,
        positive: true,
    })
}

fn parse_set_imp_union(source: &mut Source, info: &mut Info) -> PResult<Vec<SetItem>> {
    let v1 = info.version1();
    let mut items = vec![parse_set_member(source, info)?];
    loop {
        let saved_pos = source.pos;
        if source.match_str("]") {
            source.pos = saved_pos;
            break;
        }
        if v1
            && ["||", "~~", "&&", "--"]
                .iter()
                .any(|op| source.match_str(op))
        {
            // VERSION1 has set operators.
            source.pos = saved_pos;
            break;
        }
        items.push(parse_set_member(source, info)?);
    }
    Ok(items)
}

fn parse_set_member(source: &mut Source, info: &mut Info) -> PResult<SetItem> {
    let start = parse_set_item(source, info)?;
    let saved_pos1 = source.pos;
    let SetItem::Char(start_c) = start else {
        return Ok(start);
    };
    if !source.match_str("-") {
        return Ok(start);
    }
    let saved_pos2 = source.pos;
    if info.version1() && source.match_str("-") {
        // The set difference operator `--`.
        source.pos = saved_pos1;
        return Ok(start);
    }
    if source.match_str("]") {
        source.pos = saved_pos2;
        return Ok(SetItem::Union(vec![start, SetItem::Char('-' as u32)]));
    }
    let end = parse_set_item(source, info)?;
    let SetItem::Char(end_c) = end else {
        return Ok(SetItem::Union(vec![start, SetItem::Char('-' as u32), end]));
    };
    if start_c > end_c {
        return err("bad character range", source.pos);
    }
    if start_c == end_c {
        return Ok(start);
    }
    Ok(SetItem::Range(start_c, end_c))
}

fn parse_set_item(source: &mut Source, info: &mut Info) -> PResult<SetItem> {
    if source.match_str("\\") {
        return match parse_escape(source, info, true)? {
            Escaped::Item(item) => Ok(item),
            Escaped::Node(_) => unreachable!("escapes inside sets produce set items"),
        };
    }
    let saved_pos = source.pos;
    if source.match_str("[:") {
        match parse_posix_class(source)? {
            Some(item) => return Ok(item),
            None => source.pos = saved_pos,
        }
    }
    if info.version1() && source.match_str("[") {
        // A nested set.
        let negate = source.match_str("^");
        let item = parse_set_union(source, info)?;
        if !source.match_str("]") {
            return err("missing ]", source.pos);
        }
        return Ok(if negate { negated(item) } else { item });
    }
    match source.get() {
        None => err("unterminated character set", source.pos),
        Some(c) => Ok(SetItem::Char(info.code(c))),
    }
}

fn parse_posix_class(source: &mut Source) -> PResult<Option<SetItem>> {
    let negate = source.match_str("^");
    let (prop_name, name) = parse_property_name(source);
    if !source.match_str(":]") {
        return Ok(None);
    }
    match props::lookup(prop_name.as_deref(), &name, !negate, true) {
        Lookup::Found { key, positive } => Ok(Some(SetItem::Prop {
            key,
            positive,
            enc: Enc::Default,
        })),
        Lookup::Unknown(msg) => err(msg, source.pos),
    }
}

/// Resolves group references (the reference's `fix_groups`).
/// How many nodes with children are nested at the deepest point of `node` (computed without
/// recursion: this is what bounds the recursion of every later pass).
pub(crate) fn node_depth(node: &Node) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(node, 0usize)];
    while let Some((node, depth)) = stack.pop() {
        match node {
            // The reference's tree has no node for a one-item sequence.
            Node::Seq(items) | Node::Alt(items) if items.len() == 1 => {
                stack.push((&items[0], depth))
            }
            Node::Seq(items) | Node::Alt(items) | Node::SetOf { members: items, .. } => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|n| (n, depth + 1)));
            }
            Node::Group { node, .. }
            | Node::Repeat { node, .. }
            | Node::Atomic(node)
            | Node::Look { node, .. } => {
                deepest = deepest.max(depth + 1);
                stack.push((node, depth + 1));
            }
            _ => {}
        }
    }
    deepest
}

fn fix_groups(node: &mut Node, info: &Info, pattern: &str) -> PResult<()> {
    let _ = pattern;
    match node {
        Node::Backref { group, pos, .. } => {
            let number = match group {
                GroupName::Number(n) => u64::from(*n),
                GroupName::Name(name) => match info.group_index.get(name.as_str()) {
                    Some(&g) => u64::from(g),
                    None => return err("unknown group", *pos),
                },
            };
            if !(1..=u64::from(info.group_count)).contains(&number) {
                return err("invalid group reference", *pos);
            }
            *group = GroupName::Number(number as u32);
            Ok(())
        }
        Node::Seq(items) | Node::Alt(items) => {
            for item in items {
                fix_groups(item, info, pattern)?;
            }
            Ok(())
        }
        Node::Group { node, .. }
        | Node::Repeat { node, .. }
        | Node::Atomic(node)
        | Node::Look { node, .. } => fix_groups(node, info, pattern),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PResult<Parsed> {
        parse(s, F_DOTALL)
    }

    fn syntax(s: &str) -> (String, usize) {
        match p(s) {
            Err(ParseError::Syntax { message, pos }) => (message, pos),
            other => panic!("expected a syntax error for {s:?}, got {other:?}"),
        }
    }

    #[test]
    fn literals_and_quantifiers() {
        assert!(
            matches!(p("a{,3}").unwrap().node, Node::Seq(ref v) if matches!(v[0], Node::Repeat { min: 0, max: Some(3), .. }))
        );
        // `{name}`, `a{1`, `a{x}` are literals.
        for s in ["{name}", "a{1", "a{x}", "a{}", "x{1,2"] {
            let parsed = p(s).unwrap();
            let Node::Seq(v) = parsed.node else { panic!() };
            assert!(v.iter().all(|n| matches!(n, Node::Char { .. })), "{s}");
        }
        assert_eq!(syntax("a**"), ("multiple repeat".into(), 2));
        assert_eq!(syntax("*a"), ("nothing to repeat".into(), 0));
        assert_eq!(
            syntax("a{3,2}"),
            ("min repeat greater than max repeat".into(), 2)
        );
        // A quantifier on an empty node is dropped, but still counts for "multiple repeat".
        assert!(p("(?:)*").is_ok());
        assert_eq!(syntax("(?:)**"), ("multiple repeat".into(), 5));
        assert_eq!(syntax("a{1}*"), ("multiple repeat".into(), 4));
        assert_eq!(syntax("(?i)*"), ("nothing to repeat".into(), 4));
    }

    #[test]
    fn groups_and_errors() {
        let parsed = p("(?P<a>x)(b)(?<c>y)(?P<a>z)").unwrap();
        assert_eq!(parsed.group_count, 3);
        assert_eq!(parsed.names, vec![("a".into(), 1), ("c".into(), 3)]);
        assert_eq!(syntax("(ab"), ("missing )".into(), 3));
        assert_eq!(syntax("ab)"), ("unbalanced parenthesis".into(), 2));
        assert_eq!(
            syntax("(?P<1a>x)"),
            ("bad character in group name".into(), 6)
        );
        assert_eq!(syntax("(a)\\2"), ("invalid group reference".into(), 5));
        assert_eq!(syntax("(?P=x)"), ("unknown group".into(), 3));
        assert_eq!(
            syntax("(a\\1)"),
            ("cannot refer to an open group".into(), 4)
        );
        assert_eq!(syntax("[a"), ("unterminated character set".into(), 2));
        assert_eq!(syntax("[b-a]"), ("bad character range".into(), 4));
        assert_eq!(syntax("\\q"), ("bad escape \\q".into(), 2));
        assert_eq!(syntax("\\x1"), ("incomplete escape \\x1".into(), 2));
        assert_eq!(syntax("(?z)"), ("unknown extension".into(), 2));
        assert_eq!(
            syntax("(?i-)"),
            ("bad inline flags: no flags after '-'".into(), 4)
        );
    }

    #[test]
    fn unsupported_constructs_are_named() {
        for (s, what) in [
            ("(?R)", "recursive"),
            ("(?1)", "recursive"),
            ("(?|a)", "branch reset"),
            ("a{e<=1}", "fuzzy"),
            ("\\G", "\\G"),
            ("\\X", "\\X"),
            ("\\K", "\\K"),
            ("(?(1)a|b)", "conditional"),
        ] {
            match p(s) {
                Err(ParseError::Unsupported { construct, .. }) => {
                    assert!(construct.contains(what), "{s}: {construct}")
                }
                other => panic!("{s}: {other:?}"),
            }
        }
    }

    #[test]
    fn verbose_and_flags() {
        let parsed = parse("(?x) a b # comment\n c", 0).unwrap();
        let Node::Seq(v) = parsed.node else { panic!() };
        assert_eq!(v.len(), 3);
        assert!(p("a(?i)b").is_ok());
        assert!(p("(?a)\\w").unwrap().ascii);
        assert!(matches!(p("(?a)(?u)"), Err(ParseError::Syntax { .. })));
    }
}
