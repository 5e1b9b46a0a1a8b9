//! Lowering of the parsed tree into a program: character classes become code point sets (with the
//! reference's case-insensitive and set-optimisation rules), repeats become loops of the cheapest
//! form that keeps the reference's semantics, lookbehinds are compiled right-to-left.

use std::collections::HashMap;

use super::ast::{Assertion, Enc, GroupName, Node, RepeatKind, SetItem};
use super::charset::CharSet;
use super::error::RegexError;
use super::parse::Parsed;
use super::prog::{Inst, Look, Pc, Program};
use super::props::{property_set, property_set_enc};
use super::unicode_tables as t;

/// Upper bound on program size.
const MAX_INSTS: usize = 1 << 20;
/// Repeats whose unrolled size would exceed this use counters instead.
const MAX_UNROLL: usize = 2000;
/// Number of progress bits available for loops whose body may match empty.
const MAX_LOOP_BITS: u32 = 32;

struct Builder {
    insts: Vec<Inst>,
    masks: Vec<u32>,
    sets: Vec<CharSet>,
    set_index: HashMap<CharSet, u32>,
    strings: Vec<Box<str>>,
    slot_count: u32,
    /// Private slot of each group occurrence, keyed by the node's address.
    rep_count: u32,
    bit_count: u32,
    referenced: Vec<bool>,
    has_backrefs: bool,
    ascii: bool,
    cur_mask: u32,
}

/// Compiles a parsed pattern.
pub fn compile(parsed: &Parsed) -> Result<Program, RegexError> {
    let mut referenced = vec![false; parsed.group_count as usize + 1];
    let mut has_backrefs = false;
    mark_references(&parsed.node, &mut referenced, &mut has_backrefs);
    let mut b = Builder {
        insts: Vec::new(),
        masks: Vec::new(),
        sets: Vec::new(),
        set_index: HashMap::new(),
        strings: Vec::new(),
        slot_count: 0,
        rep_count: 0,
        bit_count: 0,
        referenced,
        has_backrefs,
        ascii: parsed.ascii,
        cur_mask: 0,
    };
    let m = b.push(Inst::Match)?;
    let start = b.compile(&parsed.node, m, false)?;
    let memo_safe = !b.has_backrefs && b.rep_count == 0;
    Ok(Program {
        insts: b.insts,
        start,
        sets: b.sets,
        strings: b.strings,
        group_count: parsed.group_count as usize,
        slot_count: b.slot_count as usize,
        rep_count: b.rep_count as usize,
        memo_safe,
        loop_mask: b.masks,
        referenced: b.referenced,
        has_backrefs: b.has_backrefs,
        ascii: b.ascii,
    })
}

fn mark_references(node: &Node, referenced: &mut [bool], has: &mut bool) {
    match node {
        Node::Backref { group: GroupName::Number(g), .. } => {
            *has = true;
            if let Some(r) = referenced.get_mut(*g as usize) {
                *r = true;
            }
        }
        Node::Seq(items) | Node::Alt(items) => {
            items.iter().for_each(|n| mark_references(n, referenced, has));
        }
        Node::Group { node, .. } | Node::Repeat { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => {
            mark_references(node, referenced, has)
        }
        _ => {}
    }
}

/// The fewest characters `node` can consume on a successful match (`u64::MAX`: never matches).
pub fn min_width(node: &Node) -> u64 {
    match node {
        Node::Empty | Node::Assert(_) | Node::Look { .. } | Node::Backref { .. } => 0,
        Node::Seq(items) => items.iter().map(min_width).fold(0u64, |a, b| a.saturating_add(b)),
        Node::Alt(branches) => branches.iter().map(min_width).min().unwrap_or(0),
        Node::Char { .. } | Node::Set { .. } | Node::Prop { .. } | Node::AnyAll | Node::Any => 1,
        Node::Group { node, .. } | Node::Atomic(node) => min_width(node),
        Node::Repeat { node, min, .. } => {
            let w = min_width(node);
            if *min == 0 { 0 } else { w.saturating_mul(u64::from(*min)) }
        }
        Node::Fail => u64::MAX,
    }
}

/// A rough instruction count for `node`, used to decide whether to unroll repeats.
fn size_estimate(node: &Node) -> usize {
    match node {
        Node::Seq(items) | Node::Alt(items) => items.iter().map(size_estimate).sum::<usize>() + items.len(),
        Node::Group { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => size_estimate(node) + 2,
        Node::Repeat { node, min, max, .. } => {
            let copies = max.unwrap_or(*min).max(1) as usize;
            size_estimate(node).saturating_mul(copies.min(MAX_UNROLL + 1)).saturating_add(3)
        }
        _ => 1,
    }
}

impl Builder {
    fn push(&mut self, inst: Inst) -> Result<Pc, RegexError> {
        if self.insts.len() >= MAX_INSTS {
            return Err(RegexError::TooLarge { message: format!("more than {MAX_INSTS} instructions") });
        }
        self.insts.push(inst);
        self.masks.push(self.cur_mask);
        Ok((self.insts.len() - 1) as Pc)
    }

    fn set_id(&mut self, set: CharSet) -> u32 {
        if let Some(&i) = self.set_index.get(&set) {
            return i;
        }
        let i = self.sets.len() as u32;
        self.sets.push(set.clone());
        self.set_index.insert(set, i);
        i
    }

    fn closure(&self, set: &CharSet) -> CharSet {
        set.case_closure(self.ascii)
    }

    /// The set of characters a character-like node matches, or `None` if it is not one.
    fn class_of(&self, node: &Node) -> Option<CharSet> {
        Some(match node {
            Node::Char { c, positive, ign } => {
                let mut s = CharSet::single(*c);
                if *ign {
                    s = self.closure(&s);
                }
                if *positive { s } else { s.complement() }
            }
            Node::Prop { key, positive, ign, enc } => {
                let s = self.prop_node_set(*key, *enc, *ign);
                if *positive { s } else { s.complement() }
            }
            Node::Set { items, positive, ign } => self.set_node(items, *positive, *ign),
            Node::AnyAll => CharSet::full(),
            Node::Any => CharSet::single('\n' as u32).complement(),
            _ => return None,
        })
    }

    /// A property node's set (before negation), with the reference's case-insensitive rules.
    fn prop_node_set(&self, key: u32, enc: Enc, ign: bool) -> CharSet {
        if ign {
            if key == t::GC_LU || key == t::GC_LL || key == t::GC_LT {
                return property_set(t::GC_LU, false)
                    .union(&property_set(t::GC_LL, false))
                    .union(&property_set(t::GC_LT, false));
            }
            let prop = (key >> 16) as u16;
            if prop == t::PROP_UPPERCASE || prop == t::PROP_LOWERCASE {
                return property_set((u32::from(t::PROP_CASED) << 16) | 1, false);
            }
        }
        property_set_enc(key, enc, self.ascii)
    }

    /// A bracketed set, following the reference's `SetUnion.optimise` and its matchers.
    fn set_node(&self, items: &[SetItem], positive: bool, ign: bool) -> CharSet {
        let mut flat = Vec::new();
        flatten(items, &mut flat);
        // Complementary properties make the set match anything (even when negated).
        for a in &flat {
            if let SetItem::Prop { key, positive: true, .. } = a {
                if flat.iter().any(|b| matches!(b, SetItem::Prop { key: k2, positive: false, .. } if k2 == key)) {
                    return CharSet::full();
                }
            }
        }
        if flat.len() == 1 {
            let item = flat[0].clone();
            return match item {
                SetItem::Char(c) => {
                    let node = Node::Char { c, positive, ign };
                    self.class_of(&node).expect("character node")
                }
                SetItem::Range(a, b) => {
                    let mut s = CharSet::range(a, b);
                    if ign {
                        s = self.closure(&s);
                    }
                    if positive { s } else { s.complement() }
                }
                SetItem::Prop { key, positive: p, enc } => {
                    let s = self.prop_node_set(key, enc, ign);
                    if p == positive { s } else { s.complement() }
                }
                SetItem::Union(_) => unreachable!("flattened"),
            };
        }
        let mut acc = CharSet::empty();
        for item in &flat {
            let member = match item {
                SetItem::Char(c) => {
                    let s = CharSet::single(*c);
                    if ign { self.closure(&s) } else { s }
                }
                SetItem::Range(a, b) => {
                    let s = CharSet::range(*a, *b);
                    if ign { self.closure(&s) } else { s }
                }
                SetItem::Prop { key, positive: p, enc } => {
                    let s = if ign {
                        // The case-insensitive member test uses the pattern's encoding.
                        self.closure(&property_set(*key, self.ascii))
                    } else {
                        property_set_enc(*key, *enc, self.ascii)
                    };
                    if *p { s } else { s.complement() }
                }
                SetItem::Union(_) => unreachable!("flattened"),
            };
            acc = acc.union(&member);
        }
        if positive { acc } else { acc.complement() }
    }

    fn look_of(&self, a: Assertion) -> Look {
        let ascii = |enc: Enc| match enc {
            Enc::Ascii => true,
            Enc::Unicode => false,
            Enc::Default => self.ascii,
        };
        match a {
            Assertion::StartOfString => Look::StartOfString,
            Assertion::StartOfLine => Look::StartOfLine,
            Assertion::EndOfString => Look::EndOfString,
            Assertion::EndOfStringLine => Look::EndOfStringLine,
            Assertion::EndOfLine => Look::EndOfLine,
            Assertion::Boundary { positive, enc } => Look::Boundary { positive, ascii: ascii(enc) },
            Assertion::StartOfWord { enc } => Look::StartOfWord { ascii: ascii(enc) },
            Assertion::EndOfWord { enc } => Look::EndOfWord { ascii: ascii(enc) },
        }
    }

    /// Emits code for a one-character item.
    fn emit_class(&mut self, set: CharSet, rev: bool, next: Pc) -> Result<Pc, RegexError> {
        if set.is_full() {
            return self.push(Inst::Any { rev, next });
        }
        if let Some(c) = set.single_char().and_then(char::from_u32) {
            return self.push(Inst::Char { c, rev, next });
        }
        let set = self.set_id(set);
        self.push(Inst::Set { set, rev, next })
    }

    fn compile(&mut self, node: &Node, next: Pc, rev: bool) -> Result<Pc, RegexError> {
        if let Some(set) = self.class_of(node) {
            return self.emit_class(set, rev, next);
        }
        match node {
            Node::Empty => Ok(next),
            Node::Seq(items) => self.compile_seq(items, next, rev),
            Node::Alt(branches) => {
                let mut entries = Vec::with_capacity(branches.len());
                for b in branches {
                    entries.push(self.compile(b, next, rev)?);
                }
                let mut cur = entries.pop().expect("at least two branches");
                while let Some(e) = entries.pop() {
                    cur = self.push(Inst::Split { first: e, second: cur })?;
                }
                Ok(cur)
            }
            Node::Group { index, node } => {
                let slot = self.slot_count;
                self.slot_count += 1;
                let close = self.push(Inst::Close { slot, group: *index, rev, next })?;
                let body = self.compile(node, close, rev)?;
                self.push(Inst::Mark { slot, next: body })
            }
            Node::Repeat { node, min, max, kind } => self.compile_repeat(node, *min, *max, *kind, next, rev),
            Node::Atomic(inner) => {
                let saved = self.cur_mask;
                self.cur_mask = 0;
                let end = self.push(Inst::SubEnd)?;
                let body = self.compile(inner, end, rev);
                self.cur_mask = saved;
                let body = body?;
                self.push(Inst::Atomic { body, next })
            }
            Node::Look { behind, positive, node } => {
                let saved = self.cur_mask;
                self.cur_mask = 0;
                let end = self.push(Inst::SubEnd)?;
                let body = self.compile(node, end, *behind);
                self.cur_mask = saved;
                let body = body?;
                self.push(Inst::Lookaround { body, behind: *behind, positive: *positive, next })
            }
            Node::Backref { group, ign, .. } => {
                let GroupName::Number(g) = group else { unreachable!("resolved by the parser") };
                self.push(Inst::Backref { group: *g, ign: *ign, rev, next })
            }
            Node::Assert(a) => {
                let look = self.look_of(*a);
                self.push(Inst::Assert { look, next })
            }
            Node::Fail => self.push(Inst::Fail),
            Node::Char { .. } | Node::Set { .. } | Node::Prop { .. } | Node::AnyAll | Node::Any => {
                unreachable!("handled as classes")
            }
        }
    }

    fn compile_seq(&mut self, items: &[Node], next: Pc, rev: bool) -> Result<Pc, RegexError> {
        // Runs of exact characters become one string instruction.
        let mut chunks: Vec<Result<String, &Node>> = Vec::new();
        for item in items {
            if let Node::Char { c, positive: true, ign: false } = item {
                if let Some(ch) = char::from_u32(*c) {
                    if let Some(Ok(s)) = chunks.last_mut() {
                        s.push(ch);
                    } else {
                        chunks.push(Ok(ch.to_string()));
                    }
                    continue;
                }
            }
            chunks.push(Err(item));
        }
        let mut cur = next;
        let order: Vec<usize> = if rev { (0..chunks.len()).collect() } else { (0..chunks.len()).rev().collect() };
        for i in order {
            cur = match &chunks[i] {
                Ok(s) if s.chars().count() == 1 => {
                    let c = s.chars().next().expect("one char");
                    self.push(Inst::Char { c, rev, next: cur })?
                }
                Ok(s) => {
                    let id = self.strings.len() as u32;
                    self.strings.push(s.clone().into_boxed_str());
                    self.push(Inst::Str { s: id, rev, next: cur })?
                }
                Err(node) => self.compile(node, cur, rev)?,
            };
        }
        Ok(cur)
    }

    fn compile_repeat(
        &mut self,
        node: &Node,
        min: u32,
        max: Option<u32>,
        kind: RepeatKind,
        next: Pc,
        rev: bool,
    ) -> Result<Pc, RegexError> {
        if kind == RepeatKind::Possessive {
            let saved = self.cur_mask;
            self.cur_mask = 0;
            let end = self.push(Inst::SubEnd)?;
            let body = self.compile_repeat(node, min, max, RepeatKind::Greedy, end, rev);
            self.cur_mask = saved;
            let body = body?;
            return self.push(Inst::Atomic { body, next });
        }
        let greedy = kind == RepeatKind::Greedy;
        if max == Some(0) {
            return Ok(next);
        }
        if let Some(set) = self.class_of(node) {
            let set = self.set_id(set);
            let max = max.unwrap_or(u32::MAX);
            return self.push(Inst::RepOne { set, min, max, greedy, rev, next });
        }
        let nullable = min_width(node) == 0;
        if max == Some(1) {
            // At most one iteration: `X?` (min 0) or just `X` (min 1 was dropped by the parser).
            let body = self.compile(node, next, rev)?;
            if min == 1 {
                return Ok(body);
            }
            return self.push(if greedy {
                Inst::Split { first: body, second: next }
            } else {
                Inst::Split { first: next, second: body }
            });
        }
        if !nullable {
            if max.is_none() && min <= 1 {
                return self.plain_loop(node, min, greedy, next, rev);
            }
            let copies = max.unwrap_or(min) as usize;
            if copies <= MAX_UNROLL && size_estimate(node).saturating_mul(copies.max(1)) <= MAX_UNROLL * 4 {
                return self.unroll(node, min, max, greedy, next, rev);
            }
        } else if max.is_none() && min <= 1 && !self.has_backrefs && self.bit_count < MAX_LOOP_BITS {
            return self.progress_loop(node, min, greedy, next, rev);
        }
        self.general_repeat(node, min, max.unwrap_or(u32::MAX), greedy, next, rev)
    }

    /// `X*` / `X+` for a body that always consumes: no registers needed.
    fn plain_loop(&mut self, node: &Node, min: u32, greedy: bool, next: Pc, rev: bool) -> Result<Pc, RegexError> {
        let head = self.push(Inst::Fail)?;
        let body = self.compile(node, head, rev)?;
        self.insts[head as usize] = if greedy {
            Inst::Split { first: body, second: next }
        } else {
            Inst::Split { first: next, second: body }
        };
        Ok(if min == 0 { head } else { body })
    }

    /// `X{min,max}` for a body that always consumes, as copies.
    fn unroll(&mut self, node: &Node, min: u32, max: Option<u32>, greedy: bool, next: Pc, rev: bool) -> Result<Pc, RegexError> {
        let mut cur = match max {
            None => self.plain_loop(node, 0, greedy, next, rev)?,
            Some(m) => {
                let mut cur = next;
                for _ in min..m {
                    let body = self.compile(node, cur, rev)?;
                    cur = self.push(if greedy {
                        Inst::Split { first: body, second: next }
                    } else {
                        Inst::Split { first: next, second: body }
                    })?;
                }
                cur
            }
        };
        for _ in 0..min {
            cur = self.compile(node, cur, rev)?;
        }
        Ok(cur)
    }

    /// `X*` / `X+` for a body that may match empty: the loop stops after an empty iteration, as
    /// the reference does, tracked by a progress bit.
    fn progress_loop(&mut self, node: &Node, min: u32, greedy: bool, next: Pc, rev: bool) -> Result<Pc, RegexError> {
        let bit = self.bit_count;
        self.bit_count += 1;
        let saved = self.cur_mask;
        self.cur_mask |= 1 << bit;
        let end = self.push(Inst::Fail)?;
        let body = self.compile(node, end, rev);
        let body = match body {
            Ok(b) => b,
            Err(e) => {
                self.cur_mask = saved;
                return Err(e);
            }
        };
        let iter = self.push(Inst::LoopIter { bit, next: body });
        self.cur_mask = saved;
        let iter = iter?;
        self.insts[end as usize] = Inst::LoopEnd { bit, greedy, iter, exit: next };
        self.push(Inst::LoopStart { bit, min, greedy, iter, exit: next })
    }

    /// Any other repeat: count and iteration start kept in registers.
    fn general_repeat(&mut self, node: &Node, min: u32, max: u32, greedy: bool, next: Pc, rev: bool) -> Result<Pc, RegexError> {
        let rep = self.rep_count;
        self.rep_count += 1;
        let end = self.push(Inst::Fail)?;
        let body = self.compile(node, end, rev)?;
        let iter = self.push(Inst::RepIter { rep, next: body })?;
        self.insts[end as usize] = Inst::RepEnd { rep, min, max, greedy, iter, exit: next };
        self.push(Inst::RepStart { rep, min, max, greedy, iter, exit: next })
    }
}

fn flatten(items: &[SetItem], out: &mut Vec<SetItem>) {
    for item in items {
        match item {
            SetItem::Union(inner) => flatten(inner, out),
            other => out.push(other.clone()),
        }
    }
}
