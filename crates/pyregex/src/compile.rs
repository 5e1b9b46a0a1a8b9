//! Lowering of the parsed tree into a program: character classes become code point sets (with the
//! reference's case-insensitive and set-optimisation rules), repeats become loops of the cheapest
//! form that keeps the reference's semantics, lookbehinds are compiled right-to-left. Under full
//! case folding a character that expands (`ß`) is itself or its folding (`ss`), and strings
//! compare the text's full case folding.

use std::collections::HashMap;

use super::ast::{Assertion, Enc, GroupName, Node, RepeatKind, SetItem, SetOp};
use super::charset::CharSet;
use super::error::RegexError;
use super::optimise::{Ctx, optimise_and_pack};
use super::parse::{F_FULLCASE, F_IGNORECASE, Parsed};
use super::prog::{FoldLead, Inst, LitCase, Look, NextTest, Pc, Program, Required, StartTest};
use super::props::{property_set, property_set_enc};
use super::sets::{PyMatcher, eval_op, flatten_union, set_operation};
use super::unicode::full_fold;
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
    folded: Vec<Box<[u32]>>,
    slot_count: u32,
    slot_group: Vec<u32>,
    rep_count: u32,
    /// Per general repeat: its bounds.
    rep_bounds: Vec<(u32, u32)>,
    /// Per instruction: the general repeats enclosing it within its body (bit 63: "more").
    rep_masks: Vec<u64>,
    cur_reps: u64,
    /// Nesting depth of progress-bit loops in the body being compiled: a loop's bit is its
    /// depth, since only nested loops are active at the same time.
    loop_depth: u32,
    referenced: Vec<bool>,
    has_backrefs: bool,
    ascii: bool,
    /// Which characters count as cased (see [`Ctx`]).
    ctx: Ctx,
    /// The node the required string comes from (null when none).
    req_node: *const Node,
    /// Whether a required string under full case folding is searched with full case folding:
    /// only when the pattern's final flags include IGNORECASE (and the encoding is Unicode);
    /// otherwise the reference searches for its folded characters with simple case folding.
    req_fold: bool,
    cur_mask: u32,
}

/// Compiles a parsed pattern.
pub(crate) fn compile(parsed: &Parsed) -> Result<Program, RegexError> {
    let mut referenced = vec![false; parsed.group_count as usize + 1];
    let mut has_backrefs = false;
    mark_references(&parsed.node, &mut referenced, &mut has_backrefs);
    let final_ign = parsed.flags & F_IGNORECASE != 0;
    let ctx = Ctx {
        ascii: parsed.ascii,
        cased_full: !parsed.ascii && final_ign && parsed.flags & F_FULLCASE != 0,
    };
    let mut b = Builder {
        insts: Vec::new(),
        masks: Vec::new(),
        sets: Vec::new(),
        set_index: HashMap::new(),
        strings: Vec::new(),
        folded: Vec::new(),
        slot_count: 0,
        slot_group: Vec::new(),
        rep_count: 0,
        rep_bounds: Vec::new(),
        rep_masks: Vec::new(),
        cur_reps: 0,
        loop_depth: 0,
        referenced,
        has_backrefs,
        ascii: parsed.ascii,
        ctx,
        req_fold: !parsed.ascii && final_ign,
        req_node: std::ptr::null(),
        cur_mask: 0,
    };
    let m = b.push(Inst::Match)?;
    let node =
        optimise_and_pack(parsed.node.clone(), &b.ctx).map_err(|_| RegexError::Unsupported {
            construct: "a VERSION1 set operation with a member that matches every character, \
                        under full case folding (the reference fails with AttributeError)"
                .into(),
            offset: 0,
            position: 0,
        })?;
    if let Some(r) = b.required_node(&node) {
        b.req_node = r;
    }
    let start = b.compile(&node, m, false)?;
    let firstset = if has_simple_start(&node) {
        None
    } else {
        b.firstset(&node)
    };
    let required = b.required(&node);
    let mut mandatory = Vec::new();
    b.mandatory(&node, &mut mandatory);
    mandatory.sort();
    mandatory.dedup();
    let must_contain: Vec<String> = mandatory
        .into_iter()
        .filter(|l| !l.is_empty())
        .take(8)
        .collect();
    let reach = b.reach(&node, false);
    let partial_reach = (!b.has_backrefs && !reach.0.is_full()).then_some(reach);
    let start_test = match &firstset {
        Some(fs) => StartTest::Class(fs.clone()),
        None => b.locate(&node, &|| StartTest::Anywhere),
    };
    // When the start test is the required string itself, the reference never runs it: it
    // tries every position the required string leaves (see `Prefilter::next`).
    let start_is_required = firstset.is_none()
        && match (b.start_source(&node, &|| None), b.required_node(&node)) {
            (Some(a), Some(r)) => {
                std::ptr::eq(a, r)
                    && !matches!(
                        a,
                        Node::Char { full: true, .. } | Node::Literal { full: true, .. }
                    )
            }
            _ => false,
        };
    let fold_lead = b.fold_lead(&node);
    let stateful = b.has_backrefs || b.rep_count > 0;
    let backref_ahead = backref_reachability(&b.insts);
    let fold_tails = fold_tails(&b.insts);
    let lead_run = lead_run(&b.insts, start, &b.sets, &b.strings).filter(|&(pc, set)| {
        let run = &b.sets[set as usize];
        // The search must offer the start position (its start test allows the run's
        // characters, and a required string cannot move it: its offset is unbounded after
        // the run), must not skip it as out of reach of the end, and must not treat the
        // repeat specially.
        let start_ok = match &start_test {
            StartTest::Anywhere => true,
            StartTest::Class(fs) => run.is_subset(fs),
            _ => false,
        };
        start_ok
            && required.as_ref().is_none_or(|r| r.offset.is_none())
            && partial_reach
                .as_ref()
                .is_none_or(|(loops, _)| run.is_subset(loops))
            && fold_lead.is_none()
            && !fold_tails.iter().any(|&(p, _)| p == pc)
    });
    Ok(Program {
        insts: b.insts,
        start,
        sets: b.sets,
        strings: b.strings,
        folded: b.folded,
        group_count: parsed.group_count as usize,
        slot_count: b.slot_count as usize,
        rep_count: b.rep_count as usize,
        rep_bounds: b.rep_bounds,
        rep_mask: b.rep_masks,
        loop_mask: b.masks,
        referenced: b.referenced,
        slot_group: b.slot_group,
        backref_ahead,
        stateful,
        firstset,
        required,
        start_test,
        start_is_required,
        fold_lead,
        fold_tails,
        partial_reach,
        min_width: min_width(&node),
        must_contain,
        ascii: b.ascii,
        lead_run: lead_run.map(|(_, set)| set),
    })
}

/// The greedy unbounded forward repeat every match begins with (past group marks), as its
/// instruction and set, when what follows it can neither match without consuming nor begin
/// with a character of its set: the repeat's run then never ends where a match could go on.
fn lead_run(
    insts: &[Inst],
    start: Pc,
    sets: &[CharSet],
    strings: &[Box<str>],
) -> Option<(Pc, u32)> {
    let code = Code {
        insts,
        sets,
        strings,
    };
    let mut pc = start;
    for _ in 0..64 {
        match insts[pc as usize] {
            Inst::Mark { next, .. } => pc = next,
            Inst::RepOne {
                set,
                max: u32::MAX,
                greedy: true,
                rev: false,
                next,
                ..
            } => {
                let mut visits = 256;
                let first = code.first_consumed(next, &mut visits)?;
                return first
                    .intersect(&sets[set as usize])
                    .ranges()
                    .is_empty()
                    .then_some((pc, set));
            }
            _ => return None,
        }
    }
    None
}

/// The parts of a program [`Code::first_consumed`] reads.
struct Code<'a> {
    insts: &'a [Inst],
    sets: &'a [CharSet],
    strings: &'a [Box<str>],
}

impl Code<'_> {
    /// The characters a forward path from `pc` can consume first, when every path consumes
    /// one before it can succeed (`None` when one may not, or when the program there is too
    /// involved to tell within `visits` instructions). Zero-width tests are looked past: they
    /// consume nothing, so the first character consumed comes after them.
    fn first_consumed(&self, pc: Pc, visits: &mut u32) -> Option<CharSet> {
        *visits = visits.checked_sub(1)?;
        match self.insts[pc as usize] {
            Inst::Char { c, rev: false, .. } => Some(CharSet::single(c as u32)),
            Inst::Str { s, rev: false, .. } => {
                let c = self.strings[s as usize].chars().next()?;
                Some(CharSet::single(c as u32))
            }
            Inst::Set {
                set, rev: false, ..
            } => Some(self.sets[set as usize].clone()),
            Inst::Any { rev: false, .. } => Some(CharSet::full()),
            Inst::Mark { next, .. }
            | Inst::Close {
                rev: false, next, ..
            }
            | Inst::Assert { next, .. }
            | Inst::Lookaround { next, .. } => self.first_consumed(next, visits),
            Inst::Split { first, second } => Some(
                self.first_consumed(first, visits)?
                    .union(&self.first_consumed(second, visits)?),
            ),
            Inst::RepOne {
                set,
                min,
                rev: false,
                next,
                ..
            } => {
                let own = self.sets[set as usize].clone();
                if min > 0 {
                    Some(own)
                } else {
                    Some(own.union(&self.first_consumed(next, visits)?))
                }
            }
            _ => None,
        }
    }
}

fn mark_references(node: &Node, referenced: &mut [bool], has: &mut bool) {
    match node {
        Node::Backref {
            group: GroupName::Number(g),
            ..
        } => {
            *has = true;
            if let Some(r) = referenced.get_mut(*g as usize) {
                *r = true;
            }
        }
        Node::Seq(items) | Node::Alt(items) => {
            items
                .iter()
                .for_each(|n| mark_references(n, referenced, has));
        }
        Node::Group { node, .. }
        | Node::Repeat { node, .. }
        | Node::Atomic(node)
        | Node::Look { node, .. } => mark_references(node, referenced, has),
        _ => {}
    }
}

/// The fewest characters `node` can consume on a successful match (`u64::MAX`: never matches).
/// Under full case folding one character of the text can match up to three of a string, and
/// the reference counts a string of `n` folded characters as `max(1, n / 3)` characters.
pub(crate) fn min_width(node: &Node) -> u64 {
    let unfolded = |n: usize| -> u64 {
        match n {
            0 => 0,
            1 | 2 => 1,
            n => (n / 3) as u64,
        }
    };
    match node {
        Node::Empty | Node::Assert(_) | Node::Look { .. } | Node::Backref { .. } => 0,
        Node::Seq(items) => items
            .iter()
            .map(min_width)
            .fold(0u64, |a, b| a.saturating_add(b)),
        Node::Alt(branches) => branches.iter().map(min_width).min().unwrap_or(0),
        Node::Literal { chars, full, .. } => {
            if *full {
                unfolded(folded_string(chars).len())
            } else {
                chars.len() as u64
            }
        }
        Node::Char { .. }
        | Node::Set { .. }
        | Node::SetOf { .. }
        | Node::Prop { .. }
        | Node::AnyAll
        | Node::Any => 1,
        Node::Group { node, .. } | Node::Atomic(node) => min_width(node),
        Node::Repeat { node, min, .. } => {
            let w = min_width(node);
            if *min == 0 {
                0
            } else {
                w.saturating_mul(u64::from(*min))
            }
        }
        Node::Fail => u64::MAX,
    }
}

/// The full case folding of a literal's characters (as the reference folds a string's).
fn folded_string(chars: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(chars.len());
    for &c in chars {
        out.extend_from_slice(full_fold(c, false).chars());
    }
    out
}

/// The full case folding of a positive character when it expands (the reference then matches
/// the character or that string).
fn expansion(c: u32, positive: bool, ign: bool, full: bool) -> Option<Vec<u32>> {
    if !(positive && ign && full) {
        return None;
    }
    let f = full_fold(c, false);
    (f.chars().len() > 1).then(|| f.chars().to_vec())
}

/// A rough instruction count for `node`, used to decide whether to unroll repeats.
fn size_estimate(node: &Node) -> usize {
    match node {
        Node::Seq(items) | Node::Alt(items) => {
            items.iter().map(size_estimate).sum::<usize>() + items.len()
        }
        Node::Group { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => {
            size_estimate(node) + 2
        }
        Node::Repeat { node, min, max, .. } => {
            let copies = max.unwrap_or(*min).max(1) as usize;
            size_estimate(node)
                .saturating_mul(copies.min(MAX_UNROLL + 1))
                .saturating_add(3)
        }
        _ => 1,
    }
}

impl Builder {
    fn push(&mut self, inst: Inst) -> Result<Pc, RegexError> {
        if self.insts.len() >= MAX_INSTS {
            return Err(RegexError::TooLarge {
                message: format!("more than {MAX_INSTS} instructions"),
            });
        }
        self.insts.push(inst);
        self.masks.push(self.cur_mask);
        self.rep_masks.push(self.cur_reps);
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
            Node::Char {
                c,
                positive,
                ign,
                full,
            } => {
                if expansion(*c, *positive, *ign, *full).is_some() {
                    // The character or its folding: not a one-character item.
                    return None;
                }
                let mut s = CharSet::single(*c);
                if *ign {
                    s = self.closure(&s);
                }
                if *positive { s } else { s.complement() }
            }
            Node::Prop {
                key,
                positive,
                ign,
                enc,
                ..
            } => {
                let s = self.prop_node_set(*key, *enc, *ign);
                if *positive { s } else { s.complement() }
            }
            Node::Set {
                items,
                positive,
                ign,
                ..
            } => self.set_node(items, *positive, *ign),
            Node::SetOf { members, ign, .. } => self.set_of(members, *ign),
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
        let flat = flattened(items);
        // Complementary properties make the set match anything (even when negated).
        for a in &flat {
            if let SetItem::Prop {
                key,
                positive: true,
                ..
            } = a
                && flat.iter().any(
                    |b| matches!(b, SetItem::Prop { key: k2, positive: false, .. } if k2 == key),
                )
            {
                return CharSet::full();
            }
        }
        if flat.len() == 1 {
            let item = flat[0].clone();
            return match item {
                SetItem::Char(c) => {
                    let node = Node::Char {
                        c,
                        positive,
                        ign,
                        full: false,
                    };
                    self.class_of(&node).expect("character node")
                }
                SetItem::Range(a, b) => {
                    let mut s = CharSet::range(a, b);
                    if ign {
                        s = self.closure(&s);
                    }
                    if positive { s } else { s.complement() }
                }
                SetItem::Prop {
                    key,
                    positive: p,
                    enc,
                } => {
                    let s = self.prop_node_set(key, enc, ign);
                    if p == positive { s } else { s.complement() }
                }
                SetItem::Nested {
                    op,
                    items,
                    positive: p,
                } => {
                    // A VERSION1 set: its operation is the top level.
                    let closure = |s: &CharSet| self.closure(s);
                    let s = eval_op(
                        op,
                        &items,
                        self.ascii,
                        if ign { Some(&closure) } else { None },
                    );
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
                SetItem::Prop {
                    key,
                    positive: p,
                    enc,
                } => {
                    let s = if ign {
                        // The case-insensitive member test uses the pattern's encoding.
                        self.closure(&property_set(*key, self.ascii))
                    } else {
                        property_set_enc(*key, *enc, self.ascii)
                    };
                    if *p { s } else { s.complement() }
                }
                SetItem::Nested { .. } => {
                    // A nested set, tested case-sensitively as a member.
                    let closure = |s: &CharSet| self.closure(s);
                    eval_op(
                        SetOp::Union,
                        std::slice::from_ref(item),
                        self.ascii,
                        if ign { Some(&closure) } else { None },
                    )
                }
                SetItem::Union(_) => unreachable!("flattened"),
            };
            acc = acc.union(&member);
        }
        if positive { acc } else { acc.complement() }
    }

    /// Merged one-character alternatives: a union whose members follow the set-member rules.
    fn set_of(&self, members: &[Node], ign: bool) -> CharSet {
        for a in members {
            if let Node::Prop {
                key,
                positive: true,
                ..
            } = a
                && members
                    .iter()
                    .any(|b| matches!(b, Node::Prop { key: k2, positive: false, .. } if k2 == key))
            {
                return CharSet::full();
            }
        }
        let mut acc = CharSet::empty();
        for m in members {
            let (raw, positive) = match m {
                Node::Char { c, positive, .. } => (CharSet::single(*c), *positive),
                Node::Prop {
                    key, positive, enc, ..
                } => {
                    let raw = if ign {
                        property_set(*key, self.ascii)
                    } else {
                        property_set_enc(*key, *enc, self.ascii)
                    };
                    (raw, *positive)
                }
                Node::Set {
                    items, positive, ..
                } => (self.set_node(items, true, false), *positive),
                _ => unreachable!("only one-character nodes are merged"),
            };
            let s = if ign { self.closure(&raw) } else { raw };
            acc = acc.union(&if positive { s } else { s.complement() });
        }
        acc
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
            Assertion::Boundary { positive, enc } => Look::Boundary {
                positive,
                ascii: ascii(enc),
            },
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

    /// Emits a string under full case folding.
    fn emit_fold(
        &mut self,
        folded: Vec<u32>,
        req: bool,
        rev: bool,
        next: Pc,
    ) -> Result<Pc, RegexError> {
        let s = self.folded.len() as u32;
        self.folded.push(folded.into_boxed_slice());
        self.push(Inst::StrFold { s, req, rev, next })
    }

    /// Emits code for `node` followed by `next` (right to left when `rev`), and returns its
    /// entry.
    fn compile(&mut self, node: &Node, next: Pc, rev: bool) -> Result<Pc, RegexError> {
        if let Some(set) = self.class_of(node) {
            return self.emit_class(set, rev, next);
        }
        match node {
            Node::Empty => Ok(next),
            Node::Seq(items) => self.compile_seq(items, next, rev),
            Node::Char {
                c,
                positive,
                ign,
                full,
            } => self.compile_expanding_char(*c, *positive, *ign, *full, next, rev),
            Node::Literal { chars, ign, full } => {
                if *full {
                    let req = !rev && std::ptr::eq(node, self.req_node);
                    return self.emit_fold(folded_string(chars), req, rev, next);
                }
                let items: Vec<Node> = chars
                    .iter()
                    .map(|&c| Node::Char {
                        c,
                        positive: true,
                        ign: *ign,
                        full: false,
                    })
                    .collect();
                self.compile_seq(&items, next, rev)
            }
            Node::Alt(branches) if branches.len() == 1 => self.compile(&branches[0], next, rev),
            Node::Alt(branches) => self.compile_alt(branches, next, rev),
            Node::Group { index, node } => self.compile_group(*index, node, next, rev),
            Node::Repeat {
                node,
                min,
                max,
                kind,
            } => self.compile_repeat(node, *min, *max, *kind, next, rev),
            Node::Atomic(inner) => {
                let body = self.compile_sub(inner, rev)?;
                self.push(Inst::Atomic { body, next })
            }
            Node::Look {
                behind,
                positive,
                node,
            } => {
                let body = self.compile_sub(node, *behind)?;
                self.push(Inst::Lookaround {
                    body,
                    positive: *positive,
                    next,
                })
            }
            Node::Backref {
                group, ign, full, ..
            } => {
                let GroupName::Number(g) = group else {
                    unreachable!("resolved by the parser")
                };
                self.push(Inst::Backref {
                    group: *g,
                    ign: *ign,
                    // Full case folding needs the Unicode encoding at the pattern level.
                    full: *ign && *full && !self.ascii,
                    rev,
                    next,
                })
            }
            Node::Assert(a) => {
                let look = self.look_of(*a);
                self.push(Inst::Assert { look, next })
            }
            Node::Fail => self.push(Inst::Fail),
            Node::Set { .. }
            | Node::SetOf { .. }
            | Node::Prop { .. }
            | Node::AnyAll
            | Node::Any => {
                unreachable!("handled as classes")
            }
        }
    }

    /// A character that is not a class (its full case folding expands): the character itself
    /// under simple case folding, else its full case folding.
    fn compile_expanding_char(
        &mut self,
        c: u32,
        positive: bool,
        ign: bool,
        full: bool,
        next: Pc,
        rev: bool,
    ) -> Result<Pc, RegexError> {
        let folded = expansion(c, positive, ign, full).expect("not a class");
        let second = self.emit_fold(folded, false, rev, next)?;
        let simple = Node::Char {
            c,
            positive: true,
            ign: true,
            full: false,
        };
        let first = self.compile(&simple, next, rev)?;
        self.push(Inst::Split { first, second })
    }

    /// Two or more branches, tried in order: a chain of splits.
    fn compile_alt(&mut self, branches: &[Node], next: Pc, rev: bool) -> Result<Pc, RegexError> {
        let mut entries = Vec::with_capacity(branches.len());
        for b in branches {
            entries.push(self.compile(b, next, rev)?);
        }
        let mut cur = entries.pop().expect("at least two branches");
        while let Some(e) = entries.pop() {
            cur = self.push(Inst::Split {
                first: e,
                second: cur,
            })?;
        }
        Ok(cur)
    }

    /// A capture group: its body between a mark and a close of a fresh slot.
    fn compile_group(
        &mut self,
        index: u32,
        node: &Node,
        next: Pc,
        rev: bool,
    ) -> Result<Pc, RegexError> {
        let slot = self.slot_count;
        self.slot_count += 1;
        self.slot_group.push(index);
        let close = self.push(Inst::Close {
            slot,
            group: index,
            rev,
            next,
        })?;
        let body = self.compile(node, close, rev)?;
        // The body's instructions are those pushed since the close.
        let choice_free = self.insts[close as usize + 1..].iter().all(|i| {
            !matches!(
                i,
                Inst::Split { .. }
                    | Inst::RepOne { .. }
                    | Inst::RepStart { .. }
                    | Inst::RepEnd { .. }
                    | Inst::LoopBack { .. }
                    | Inst::LoopEnd { .. }
                    | Inst::Atomic { .. }
                    | Inst::Lookaround { .. }
            )
        });
        let referenced = self.referenced.get(index as usize).copied().unwrap_or(true);
        self.push(Inst::Mark {
            slot,
            undo: referenced || !choice_free,
            next: body,
        })
    }

    /// The body of an atomic group or a lookaround: a subprogram ending in `SubEnd`, compiled
    /// outside the enclosing loops (their progress bits and repeat registers do not reach it).
    fn compile_sub(&mut self, node: &Node, rev: bool) -> Result<Pc, RegexError> {
        let saved = (self.cur_mask, self.loop_depth, self.cur_reps);
        (self.cur_mask, self.loop_depth, self.cur_reps) = (0, 0, 0);
        let end = self.push(Inst::SubEnd)?;
        let body = self.compile(node, end, rev);
        (self.cur_mask, self.loop_depth, self.cur_reps) = saved;
        body
    }

    fn compile_seq(&mut self, items: &[Node], next: Pc, rev: bool) -> Result<Pc, RegexError> {
        // Runs of exact characters become one string instruction.
        let mut chunks: Vec<Result<String, &Node>> = Vec::new();
        for item in items {
            let exact: Option<&[u32]> = match item {
                Node::Char {
                    c,
                    positive: true,
                    ign: false,
                    ..
                } => Some(std::slice::from_ref(c)),
                Node::Literal {
                    chars, ign: false, ..
                } => Some(chars),
                _ => None,
            };
            if let Some(cs) = exact
                && let Some(text) = cs
                    .iter()
                    .map(|&c| char::from_u32(c))
                    .collect::<Option<String>>()
            {
                if let Some(Ok(s)) = chunks.last_mut() {
                    s.push_str(&text);
                } else if !text.is_empty() {
                    chunks.push(Ok(text));
                }
                continue;
            }
            chunks.push(Err(item));
        }
        let mut cur = next;
        let order: Vec<usize> = if rev {
            (0..chunks.len()).collect()
        } else {
            (0..chunks.len()).rev().collect()
        };
        for i in order {
            cur = match &chunks[i] {
                Ok(s) if s.chars().count() == 1 => {
                    let c = s.chars().next().expect("one char");
                    self.push(Inst::Char { c, rev, next: cur })?
                }
                Ok(s) => {
                    let id = self.strings.len() as u32;
                    self.strings.push(s.clone().into_boxed_str());
                    self.push(Inst::Str {
                        s: id,
                        rev,
                        next: cur,
                    })?
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
            let saved = (self.cur_mask, self.loop_depth, self.cur_reps);
            (self.cur_mask, self.loop_depth, self.cur_reps) = (0, 0, 0);
            let end = self.push(Inst::SubEnd)?;
            let body = self.compile_repeat(node, min, max, RepeatKind::Greedy, end, rev);
            (self.cur_mask, self.loop_depth, self.cur_reps) = saved;
            let body = body?;
            return self.push(Inst::Atomic { body, next });
        }
        let greedy = kind == RepeatKind::Greedy;
        if let Some(set) = self.class_of(node) {
            let set = self.set_id(set);
            let max = max.unwrap_or(u32::MAX);
            return self.push(Inst::RepOne {
                set,
                min,
                max,
                greedy,
                rev,
                next,
            });
        }
        // The reference unrolls the minimum of a general repeat: `X{n,m}` is n copies of `X`
        // followed by `X{0,m-n}` (so the mandatory copies run even when they match empty).
        let guard = greedy && self.test_consumes(node);
        if min > 1
            && min_width(node) > 0
            && size_estimate(node).saturating_mul(min as usize) > MAX_UNROLL * 16
        {
            // Too many copies to unroll; for a body that always consumes, counting is the same.
            return self.general_repeat(
                node,
                min,
                max.unwrap_or(u32::MAX),
                greedy,
                guard,
                next,
                rev,
            );
        }
        let mut cur = self.compile_rest(node, max.map(|m| m - min), greedy, guard, next, rev)?;
        for _ in 0..min {
            cur = self.compile(node, cur, rev)?;
        }
        Ok(cur)
    }

    /// Whether `node` contains a capture group that a backreference reads: setting it counts as
    /// progress for an enclosing repeat in the reference, which a progress bit cannot track.
    fn sets_referenced_group(&self, node: &Node) -> bool {
        match node {
            Node::Group { index, node } => {
                self.referenced
                    .get(*index as usize)
                    .copied()
                    .unwrap_or(false)
                    || self.sets_referenced_group(node)
            }
            Node::Seq(items) | Node::Alt(items) => {
                items.iter().any(|n| self.sets_referenced_group(n))
            }
            Node::Repeat { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => {
                self.sets_referenced_group(node)
            }
            _ => false,
        }
    }

    /// `X{0,max}` for a general (not one-character) `X`.
    fn compile_rest(
        &mut self,
        node: &Node,
        max: Option<u32>,
        greedy: bool,
        guard: bool,
        next: Pc,
        rev: bool,
    ) -> Result<Pc, RegexError> {
        if max == Some(0) {
            return Ok(next);
        }
        let nullable = min_width(node) == 0;
        let small = |k: u32| {
            (k as usize) <= MAX_UNROLL
                && size_estimate(node).saturating_mul(k as usize) <= MAX_UNROLL * 4
        };
        if !nullable {
            match max {
                None => {
                    let back = self.push(Inst::Fail)?;
                    let body = self.compile(node, back, rev)?;
                    self.insts[back as usize] = Inst::LoopBack {
                        body,
                        exit: next,
                        greedy,
                        guard,
                    };
                    return self.split(greedy, body, next);
                }
                Some(k) if small(k) => {
                    // copy_j continues to the decision after it; after the last copy: `next`.
                    let mut decision = next;
                    let mut body = next;
                    for j in (1..=k).rev() {
                        body = self.compile(node, decision, rev)?;
                        if j > 1 {
                            decision = self.push(Inst::LoopBack {
                                body,
                                exit: next,
                                greedy,
                                guard,
                            })?;
                        }
                    }
                    return self.split(greedy, body, next);
                }
                Some(_) => {}
            }
        } else if !self.sets_referenced_group(node)
            && self.loop_depth < MAX_LOOP_BITS
            && max.is_none_or(small)
        {
            return self.progress_loop(node, max, greedy, guard, next, rev);
        }
        self.general_repeat(node, 0, max.unwrap_or(u32::MAX), greedy, guard, next, rev)
    }

    fn split(&mut self, greedy: bool, body: Pc, next: Pc) -> Result<Pc, RegexError> {
        self.push(if greedy {
            Inst::Split {
                first: body,
                second: next,
            }
        } else {
            Inst::Split {
                first: next,
                second: body,
            }
        })
    }

    /// `X{0,max}` for a body that may match empty: an empty iteration ends the loop, as in the
    /// reference, tracked by a progress bit. Bounded loops are unrolled.
    fn progress_loop(
        &mut self,
        node: &Node,
        max: Option<u32>,
        greedy: bool,
        guard: bool,
        next: Pc,
        rev: bool,
    ) -> Result<Pc, RegexError> {
        let bit = self.loop_depth;
        self.loop_depth += 1;
        let saved = self.cur_mask;
        self.cur_mask |= 1 << bit;
        let r = (|| -> Result<Pc, RegexError> {
            match max {
                None => {
                    let end = self.push(Inst::Fail)?;
                    let body = self.compile(node, end, rev)?;
                    let iter = self.push(Inst::LoopIter { bit, next: body })?;
                    self.insts[end as usize] = Inst::LoopEnd {
                        bit,
                        greedy,
                        guard,
                        iter,
                        exit: next,
                    };
                    Ok(iter)
                }
                Some(k) => {
                    let mut decision = next;
                    let mut iter = next;
                    for j in (1..=k).rev() {
                        let body = self.compile(node, decision, rev)?;
                        iter = self.push(Inst::LoopIter { bit, next: body })?;
                        if j > 1 {
                            decision = self.push(Inst::LoopEnd {
                                bit,
                                greedy,
                                guard,
                                iter,
                                exit: next,
                            })?;
                        }
                    }
                    Ok(iter)
                }
            }
        })();
        self.cur_mask = saved;
        self.loop_depth -= 1;
        let iter = r?;
        self.split(greedy, iter, next)
    }

    /// Any other repeat: count and iteration start kept in registers.
    #[allow(clippy::too_many_arguments)]
    fn general_repeat(
        &mut self,
        node: &Node,
        min: u32,
        max: u32,
        greedy: bool,
        guard: bool,
        next: Pc,
        rev: bool,
    ) -> Result<Pc, RegexError> {
        let rep = self.rep_count;
        self.rep_count += 1;
        self.rep_bounds.push((min, max));
        let saved = self.cur_reps;
        self.cur_reps |= 1u64 << rep.min(63);
        let r = (|| -> Result<(Pc, Pc), RegexError> {
            let end = self.push(Inst::Fail)?;
            let body = self.compile(node, end, rev)?;
            let iter = self.push(Inst::RepIter { rep, next: body })?;
            Ok((end, iter))
        })();
        self.cur_reps = saved;
        let (end, iter) = r?;
        self.insts[end as usize] = Inst::RepEnd {
            rep,
            min,
            max,
            greedy,
            guard,
            iter,
            exit: next,
        };
        self.push(Inst::RepStart {
            rep,
            min,
            max,
            greedy,
            iter,
            exit: next,
        })
    }

    /// Whether the reference's look-ahead test for `node` (its first node, past group markers)
    /// is a character or string test, which reports "partial" at the end of the text.
    fn test_consumes(&self, node: &Node) -> bool {
        self.first_test(node) == Some(true)
    }

    fn first_test(&self, node: &Node) -> Option<bool> {
        match node {
            Node::Empty => None,
            // A character that expands is a branch in the reference.
            Node::Char {
                c,
                positive,
                ign,
                full,
            } => Some(expansion(*c, *positive, *ign, *full).is_none()),
            Node::Literal { .. }
            | Node::Set { .. }
            | Node::SetOf { .. }
            | Node::Prop { .. }
            | Node::AnyAll
            | Node::Any => Some(true),
            Node::Seq(items) => items.iter().find_map(|n| self.first_test(n)),
            Node::Group { node, .. } => self.first_test(node),
            Node::Repeat { node, min, .. } => {
                if self.class_of(node).is_some() || *min == 0 {
                    Some(false)
                } else {
                    self.first_test(node).or(Some(false))
                }
            }
            _ => Some(false),
        }
    }
}

/// Per instruction: whether a backreference can still execute after it (so that captured spans
/// can still change the outcome).
fn backref_reachability(insts: &[Inst]) -> Vec<bool> {
    let n = insts.len();
    let mut preds: Vec<Vec<Pc>> = vec![Vec::new(); n];
    for (i, inst) in insts.iter().enumerate() {
        let i = i as Pc;
        let succ: Vec<Pc> = match *inst {
            Inst::Char { next, .. }
            | Inst::Str { next, .. }
            | Inst::StrFold { next, .. }
            | Inst::Set { next, .. }
            | Inst::Any { next, .. }
            | Inst::Assert { next, .. }
            | Inst::Mark { next, .. }
            | Inst::Close { next, .. }
            | Inst::RepOne { next, .. }
            | Inst::RepIter { next, .. }
            | Inst::LoopIter { next, .. }
            | Inst::Backref { next, .. } => vec![next],
            Inst::Split { first, second } => vec![first, second],
            Inst::LoopBack { body, exit, .. } => vec![body, exit],
            Inst::LoopEnd { iter, exit, .. }
            | Inst::RepStart { iter, exit, .. }
            | Inst::RepEnd { iter, exit, .. } => vec![iter, exit],
            Inst::Atomic { body, next } | Inst::Lookaround { body, next, .. } => vec![body, next],
            Inst::SubEnd | Inst::Match | Inst::Fail => vec![],
        };
        for s in succ {
            preds[s as usize].push(i);
        }
    }
    let mut ahead = vec![false; n];
    let mut work: Vec<Pc> = (0..n as Pc)
        .filter(|&i| matches!(insts[i as usize], Inst::Backref { .. }))
        .collect();
    for &i in &work {
        ahead[i as usize] = true;
    }
    while let Some(i) = work.pop() {
        for &p in &preds[i as usize] {
            if !ahead[p as usize] {
                ahead[p as usize] = true;
                work.push(p);
            }
        }
    }
    ahead
}

/// The greedy forward single-character repeats whose tail starts (past group edges) with a
/// string under full case folding, with that string.
fn fold_tails(insts: &[Inst]) -> Vec<(Pc, u32)> {
    let mut out = Vec::new();
    for (pc, inst) in insts.iter().enumerate() {
        let Inst::RepOne {
            greedy: true,
            rev: false,
            next,
            ..
        } = *inst
        else {
            continue;
        };
        let mut at = next;
        for _ in 0..64 {
            match insts[at as usize] {
                Inst::Mark { next, .. }
                | Inst::Close {
                    rev: false, next, ..
                } => at = next,
                Inst::StrFold { s, rev: false, .. } => {
                    out.push((pc as Pc, s));
                    break;
                }
                _ => break,
            }
        }
    }
    out
}

/// The reference's `has_simple_start`: the pattern begins with a one-character test.
fn has_simple_start(node: &Node) -> bool {
    if node.is_range() {
        return false;
    }
    match node {
        Node::Seq(items) => items.first().is_some_and(has_simple_start),
        Node::Char { .. }
        | Node::Literal { .. }
        | Node::Prop { .. }
        | Node::Set { .. }
        | Node::SetOf { .. }
        | Node::Any
        | Node::AnyAll => true,
        Node::Group { node, .. } | Node::Atomic(node) => has_simple_start(node),
        _ => false,
    }
}

/// The reference's first-set items of a node: one-character nodes, plus whether the node can
/// start without consuming (`None` in the reference). `Err` when it has no first set.
struct FirstSet {
    items: Vec<Node>,
    none: bool,
}

fn first_items(node: &Node) -> Result<FirstSet, ()> {
    if node.is_range() {
        return Err(());
    }
    Ok(match node {
        Node::Empty | Node::Assert(_) | Node::Fail => FirstSet {
            items: vec![],
            none: true,
        },
        // Under full case folding a character or string has no first set.
        Node::Char {
            ign: true,
            full: true,
            positive: true,
            ..
        }
        | Node::Literal {
            ign: true,
            full: true,
            ..
        } => return Err(()),
        Node::Literal { chars, ign, .. } => match chars.first() {
            Some(&c) => FirstSet {
                items: vec![Node::Char {
                    c,
                    positive: true,
                    ign: *ign,
                    full: false,
                }],
                none: false,
            },
            None => return Err(()),
        },
        Node::Char { .. } | Node::Prop { .. } | Node::Set { .. } | Node::SetOf { .. } => {
            if let Node::Set {
                items, positive, ..
            } = node
            {
                let flat = flattened(items);
                if complementary(&flat) {
                    // The reference made this set "any character", which has no first set.
                    return Err(());
                }
                if let [SetItem::Char(c)] = flat.as_slice() {
                    // A one-character set is a plain (possibly negated) character.
                    return Ok(FirstSet {
                        items: vec![Node::Char {
                            c: *c,
                            positive: *positive,
                            ign: false,
                            full: false,
                        }],
                        none: false,
                    });
                }
            }
            FirstSet {
                items: vec![node.clone()],
                none: false,
            }
        }
        Node::Any | Node::AnyAll | Node::Backref { .. } => return Err(()),
        Node::Seq(items) => {
            let mut acc = Vec::new();
            for item in items {
                let f = first_items(item)?;
                acc.extend(f.items);
                if !f.none {
                    return Ok(FirstSet {
                        items: acc,
                        none: false,
                    });
                }
            }
            FirstSet {
                items: acc,
                none: true,
            }
        }
        Node::Alt(branches) => {
            let mut acc = Vec::new();
            let mut none = false;
            for b in branches {
                let f = first_items(b)?;
                acc.extend(f.items);
                none |= f.none;
            }
            if acc.is_empty() {
                none = true;
            }
            FirstSet { items: acc, none }
        }
        Node::Group { node, .. } | Node::Atomic(node) => first_items(node)?,
        Node::Repeat { node, min, .. } => {
            let mut f = first_items(node)?;
            if *min == 0 {
                f.none = true;
            }
            f
        }
        Node::Look {
            behind,
            positive,
            node,
        } => {
            if *positive && !*behind {
                first_items(node)?
            } else {
                FirstSet {
                    items: vec![],
                    none: true,
                }
            }
        }
    })
}

fn complementary(flat: &[SetItem]) -> bool {
    flat.iter().any(|a| {
        matches!(a, SetItem::Prop { key, positive: true, .. }
            if flat.iter().any(|b| matches!(b, SetItem::Prop { key: k2, positive: false, .. } if k2 == key)))
    })
}

/// The reference's repeat limit: widths at or above it mean "unbounded".
const UNLIMITED: u64 = 0xFFFF_FFFF;

impl Builder {
    /// The reference's `max_width` (in characters, saturating at `UNLIMITED`). Under full case
    /// folding it counts folded characters: a character's folding, a string's, and for a set
    /// the longest folding among the characters it holds that expand.
    fn max_width(&self, node: &Node) -> u64 {
        match node {
            Node::Empty | Node::Assert(_) | Node::Look { .. } | Node::Fail => 0,
            Node::Char {
                c,
                positive: true,
                ign: true,
                full: true,
            } => full_fold(*c, false).chars().len() as u64,
            Node::Literal { chars, full, .. } => {
                if *full {
                    folded_string(chars).len() as u64
                } else {
                    chars.len() as u64
                }
            }
            Node::Set {
                items,
                positive: true,
                ign: true,
                full: true,
            } if !self.ascii && !node.is_range() => {
                let (op, members, positive) = set_operation(items);
                longest_folding(op, &members, positive)
            }
            Node::SetOf {
                members,
                ign: true,
                full: true,
            } if !self.ascii => {
                let items: Vec<SetItem> = members
                    .iter()
                    .filter_map(super::sets::node_as_item)
                    .collect();
                longest_folding(SetOp::Union, &items, true)
            }
            Node::Char { .. }
            | Node::Set { .. }
            | Node::SetOf { .. }
            | Node::Prop { .. }
            | Node::Any
            | Node::AnyAll => 1,
            Node::Seq(items) => items
                .iter()
                .map(|n| self.max_width(n))
                .fold(0, |a: u64, b| a.saturating_add(b)),
            Node::Alt(branches) => branches
                .iter()
                .map(|n| self.max_width(n))
                .max()
                .unwrap_or(0),
            Node::Group { node, .. } | Node::Atomic(node) => self.max_width(node),
            Node::Repeat { node, max, .. } => match max {
                None => UNLIMITED,
                Some(m) => self.max_width(node).saturating_mul(u64::from(*m)),
            },
            Node::Backref { .. } => UNLIMITED,
        }
    }
}

/// The longest full case folding among the expanding characters a set matches (1 if none).
fn longest_folding(op: SetOp, members: &[SetItem], positive: bool) -> u64 {
    let mut py = PyMatcher::new();
    t::EXPAND_ON_FOLDING
        .iter()
        .filter(|&&c| py.set_matches(op, members, positive, c) == Ok(true))
        .map(|&c| full_fold(c, false).chars().len() as u64)
        .max()
        .unwrap_or(1)
}

impl Builder {
    /// The reference's `is_cased_i` with the pattern's final flags.
    fn is_cased(&self, c: u32) -> bool {
        self.ctx.is_cased(c)
    }

    /// The reference's `get_required_string`: (offset, literal (folded under full case
    /// folding) and how it compares).
    fn required_of(&self, node: &Node) -> (u64, Option<(Vec<u32>, LitCase)>) {
        let case = |ign: bool, full: bool| match (ign, full) {
            (false, _) => LitCase::Exact,
            (true, false) => LitCase::Ign,
            (true, true) => LitCase::Fold,
        };
        match node {
            Node::Char {
                c,
                positive: true,
                ign,
                full,
            } => {
                let chars = if *ign && *full {
                    full_fold(*c, false).chars().to_vec()
                } else {
                    vec![*c]
                };
                (0, Some((chars, case(*ign, *full))))
            }
            Node::Char {
                positive: false, ..
            } => (1, None),
            Node::Literal { chars, ign, full } => {
                let chars = if *ign && *full {
                    folded_string(chars)
                } else {
                    chars.clone()
                };
                (0, Some((chars, case(*ign, *full))))
            }
            Node::Seq(items) => {
                let mut offset = 0u64;
                for item in items {
                    let (ofs, req) = self.required_of(item);
                    offset = offset.saturating_add(ofs);
                    if req.is_some() {
                        return (offset, req);
                    }
                }
                (offset, None)
            }
            Node::Group { node, .. } | Node::Atomic(node) => self.required_of(node),
            Node::Repeat { node, min, max, .. } => {
                let count = max.map_or(UNLIMITED, u64::from);
                let w = |node: &Node| self.max_width(node).saturating_mul(count).min(UNLIMITED);
                if *min == 0 {
                    return (w(node), None);
                }
                let (ofs, req) = self.required_of(node);
                if req.is_some() {
                    return (ofs, req);
                }
                (w(node), None)
            }
            other => (self.max_width(other), None),
        }
    }

    /// Literal strings every match consumes (case-sensitive only).
    fn mandatory(&self, node: &Node, out: &mut Vec<String>) {
        // A character that matches only itself (case-insensitively: one with no other case,
        // and no folding to several characters under full case folding).
        let only_itself = |c: u32, ign: bool, full: bool| {
            !ign || {
                let no_cases = if self.ascii {
                    super::unicode::other_cases_ascii(c).is_none()
                } else {
                    super::unicode::other_cases(c).is_empty()
                };
                no_cases && !(full && super::unicode::expands(c))
            }
        };
        match node {
            Node::Char {
                c,
                positive: true,
                ign,
                full,
            } if only_itself(*c, *ign, *full) => {
                if let Some(ch) = char::from_u32(*c) {
                    out.push(ch.to_string());
                }
            }
            // A string under full case folding may match text of other lengths (`ss` is `ß`).
            Node::Literal { chars, ign, full }
                if !full && chars.iter().all(|&c| only_itself(c, *ign, false)) =>
            {
                let text: String = chars.iter().filter_map(|&c| char::from_u32(c)).collect();
                if text.chars().count() == chars.len() {
                    out.push(text);
                }
            }
            Node::Seq(items) => {
                for item in items {
                    self.mandatory(item, out);
                }
            }
            Node::Group { node, .. } | Node::Atomic(node) => self.mandatory(node, out),
            Node::Repeat { node, min, .. } if *min > 0 => self.mandatory(node, out),
            _ => {}
        }
    }

    /// What a path can consume: the characters unbounded loops can take (any number of them)
    /// and an upper bound on the characters taken by everything else, lookarounds included.
    fn reach(&self, node: &Node, in_loop: bool) -> (CharSet, u64) {
        if let Some(set) = self.class_of(node) {
            return if in_loop {
                (set, 0)
            } else {
                (CharSet::empty(), 1)
            };
        }
        match node {
            Node::Seq(items) | Node::Alt(items) => {
                let mut u = CharSet::empty();
                let mut b = 0u64;
                for item in items {
                    let (iu, ib) = self.reach(item, in_loop);
                    u = u.union(&iu);
                    // Summing over alternatives too keeps this an upper bound.
                    b = b.saturating_add(ib);
                }
                (u, b)
            }
            Node::Group { node, .. } | Node::Atomic(node) | Node::Look { node, .. } => {
                self.reach(node, in_loop)
            }
            Node::Repeat { node, max, .. } => match max {
                None => self.reach(node, true),
                Some(m) => {
                    let (u, b) = self.reach(node, in_loop);
                    (u, b.saturating_mul(u64::from(*m)))
                }
            },
            Node::Backref { .. } => (CharSet::full(), 0),
            Node::Char { c, .. } => {
                // A character that expands: its folding takes at most that many characters.
                if in_loop {
                    (CharSet::full(), 0)
                } else {
                    (CharSet::empty(), full_fold(*c, false).chars().len() as u64)
                }
            }
            Node::Literal { chars, full, .. } => {
                if in_loop {
                    (CharSet::full(), 0)
                } else if *full {
                    (CharSet::empty(), folded_string(chars).len() as u64)
                } else {
                    (CharSet::empty(), chars.len() as u64)
                }
            }
            _ => (CharSet::empty(), 0),
        }
    }

    /// The reference's `locate_test_start`: the first test of the pattern past group markers,
    /// lookarounds and the first copy of a repeat; `cont` gives what follows `node`.
    fn locate(&self, node: &Node, cont: &dyn Fn() -> StartTest) -> StartTest {
        match node {
            Node::Empty => cont(),
            Node::Seq(items) => self.locate_seq(items, cont),
            Node::Group { node, .. } => self.locate(node, cont),
            Node::Look { .. } => cont(),
            Node::Repeat { node, min, .. } => {
                if let Some(set) = self.class_of(node) {
                    return if *min == 0 {
                        StartTest::Anywhere
                    } else {
                        StartTest::Class(set)
                    };
                }
                if *min == 0 {
                    return StartTest::Anywhere;
                }
                // The first unrolled copy; past it, more copies and then a repeat (no test).
                self.locate(node, &|| StartTest::Anywhere)
            }
            Node::Assert(a) => match self.look_of(*a) {
                Look::StartOfString => StartTest::Anchored,
                look => StartTest::At(look),
            },
            Node::Char { .. }
            | Node::Set { .. }
            | Node::SetOf { .. }
            | Node::Prop { .. }
            | Node::Any
            | Node::AnyAll => match self.class_of(node) {
                Some(set) => StartTest::Class(set),
                // A character that expands is a branch in the reference: no test.
                None => StartTest::Anywhere,
            },
            Node::Literal { chars, ign, full } => self.literal_test(chars, *ign, *full),
            _ => StartTest::Anywhere,
        }
    }

    fn locate_seq(&self, items: &[Node], cont: &dyn Fn() -> StartTest) -> StartTest {
        let Some(first) = items.first() else {
            return cont();
        };
        let rest = &items[1..];
        match first {
            Node::Assert(a @ super::ast::Assertion::Boundary { .. }) => {
                // A boundary followed directly by a literal string tests for the string.
                if let Some(Node::Literal { chars, ign, full }) = rest.first() {
                    return self.literal_test(chars, *ign, *full);
                }
                StartTest::At(self.look_of(*a))
            }
            n => self.locate(n, &|| self.locate_seq(rest, cont)),
        }
    }

    /// The literal node [`Builder::locate`] takes its test from, if its test is a character or
    /// string.
    fn start_source<'a>(
        &self,
        node: &'a Node,
        cont: &dyn Fn() -> Option<&'a Node>,
    ) -> Option<&'a Node> {
        match node {
            Node::Empty => cont(),
            Node::Seq(items) => self.start_source_seq(items, cont),
            Node::Group { node, .. } => self.start_source(node, cont),
            Node::Look { .. } => cont(),
            Node::Repeat { node, min, .. } => {
                if self.class_of(node).is_some() || *min == 0 {
                    return None;
                }
                self.start_source(node, &|| None)
            }
            Node::Char { .. } if self.class_of(node).is_some() => Some(node),
            Node::Literal { .. } => Some(node),
            _ => None,
        }
    }

    fn start_source_seq<'a>(
        &self,
        items: &'a [Node],
        cont: &dyn Fn() -> Option<&'a Node>,
    ) -> Option<&'a Node> {
        let Some(first) = items.first() else {
            return cont();
        };
        let rest = &items[1..];
        match first {
            Node::Assert(super::ast::Assertion::Boundary { .. }) => match rest.first() {
                Some(lit @ Node::Literal { .. }) => Some(lit),
                _ => None,
            },
            n => self.start_source(n, &|| self.start_source_seq(rest, cont)),
        }
    }

    /// The node [`Builder::required_of`] takes the required string from.
    fn required_node<'a>(&self, node: &'a Node) -> Option<&'a Node> {
        match node {
            Node::Char { positive: true, .. } | Node::Literal { .. } => Some(node),
            Node::Seq(items) => {
                for item in items {
                    if self.required_of(item).1.is_some() {
                        return self.required_node(item);
                    }
                }
                None
            }
            Node::Group { node, .. } | Node::Atomic(node) => self.required_node(node),
            Node::Repeat { node, min, .. } if *min > 0 => self.required_node(node),
            _ => None,
        }
    }

    /// The reference's look-ahead after a leading string under full case folding, when the
    /// pattern's very first node is one (see [`FoldLead`]).
    fn fold_lead(&self, node: &Node) -> Option<FoldLead> {
        let items = self.leading_nodes(node);
        let (first, rest) = items.split_first()?;
        let Node::Literal {
            chars,
            ign: true,
            full: true,
        } = first
        else {
            return None;
        };
        Some(FoldLead {
            chars: folded_string(chars),
            next: self.next_test(rest),
        })
    }

    /// The pattern's top-level nodes as the reference builds them, as far as its first two: a
    /// leading repeat that must match (not of one character) is unrolled into copies of its body
    /// followed by the rest of the repeat.
    fn leading_nodes(&self, node: &Node) -> Vec<Node> {
        let mut items: Vec<Node> = match node {
            Node::Seq(v) => v.clone(),
            other => vec![other.clone()],
        };
        for _ in 0..16 {
            match items.first() {
                Some(Node::Seq(_)) => {
                    let Node::Seq(inner) = items.remove(0) else {
                        unreachable!("checked")
                    };
                    items.splice(0..0, inner);
                }
                Some(Node::Repeat {
                    node: body,
                    min,
                    max,
                    kind,
                }) if *min > 0
                    && *kind != RepeatKind::Possessive
                    && self.class_of(body).is_none() =>
                {
                    let (body, min, max, kind) = ((**body).clone(), *min, *max, *kind);
                    items.remove(0);
                    // Two copies are enough to see the first two nodes.
                    let copies = min.min(2);
                    let mut unrolled: Vec<Node> = (0..copies).map(|_| body.clone()).collect();
                    let rest_min = min - copies;
                    let rest_max = max.map(|m| m - copies);
                    if rest_max != Some(0) {
                        unrolled.push(Node::Repeat {
                            node: Box::new(body),
                            min: rest_min,
                            max: rest_max,
                            kind,
                        });
                    }
                    items.splice(0..0, unrolled);
                }
                _ => break,
            }
        }
        items
    }

    /// The test of the first node in `rest`, looking past group markers, empty items and into
    /// repeats that must match at least once (the reference's `set_test_node`).
    fn next_test(&self, rest: &[Node]) -> NextTest {
        let mut stack: Vec<&[Node]> = vec![rest];
        let mut skipped = false;
        while let Some(top) = stack.last_mut() {
            let Some((n, tail)) = top.split_first() else {
                stack.pop();
                continue;
            };
            *top = tail;
            match n {
                Node::Empty => {}
                Node::Seq(items) => stack.push(items),
                Node::Group { node, .. } => {
                    skipped = true;
                    stack.push(std::slice::from_ref(node));
                }
                Node::Repeat { node, min, .. } => {
                    if let Some(set) = self.class_of(node) {
                        return if *min > 0 {
                            NextTest::Class(set)
                        } else {
                            NextTest::Succeed
                        };
                    }
                    if *min == 0 {
                        return NextTest::Succeed;
                    }
                    skipped = true;
                    stack.push(std::slice::from_ref(node));
                }
                Node::Literal { chars, ign, full } => {
                    let (chars, case) = match (ign, full) {
                        (true, true) => (folded_string(chars), LitCase::Fold),
                        (true, false) => (chars.clone(), LitCase::Ign),
                        _ => (chars.clone(), LitCase::Exact),
                    };
                    return NextTest::Literal {
                        chars,
                        case,
                        skipped,
                    };
                }
                Node::Assert(a) => return NextTest::Assert(self.look_of(*a)),
                other => {
                    return match self.class_of(other) {
                        Some(set) => NextTest::Class(set),
                        None => NextTest::Succeed,
                    };
                }
            }
        }
        NextTest::Succeed
    }

    fn literal_test(&self, chars: &[u32], ign: bool, full: bool) -> StartTest {
        if ign && full {
            return StartTest::Literal {
                chars: folded_string(chars),
                case: LitCase::Fold,
            };
        }
        let ign = ign && chars.iter().any(|&c| self.is_cased(c));
        if chars.len() == 1 {
            let node = Node::Char {
                c: chars[0],
                positive: true,
                ign,
                full: false,
            };
            return StartTest::Class(self.class_of(&node).expect("char"));
        }
        StartTest::Literal {
            chars: chars.to_vec(),
            case: if ign { LitCase::Ign } else { LitCase::Exact },
        }
    }

    fn required(&self, node: &Node) -> Option<Required> {
        let (offset, req) = self.required_of(node);
        let (chars, case) = req?;
        if chars.is_empty() {
            return None;
        }
        let case = match case {
            // A literal of uncased characters is searched case-sensitively.
            LitCase::Ign if !chars.iter().any(|&c| self.is_cased(c)) => LitCase::Exact,
            // Without IGNORECASE in the pattern's final flags, the reference searches for the
            // folded characters with simple case folding.
            LitCase::Fold if !self.req_fold => LitCase::Ign,
            other => other,
        };
        let text: String = chars.iter().filter_map(|&c| char::from_u32(c)).collect();
        if text.chars().count() != chars.len() {
            // A surrogate: such a literal can never be found in a `str`.
            return Some(Required {
                chars,
                text: String::new(),
                case: LitCase::Exact,
                offset: None,
            });
        }
        let offset = if offset >= UNLIMITED {
            None
        } else {
            Some(offset as usize)
        };
        Some(Required {
            chars,
            text,
            case,
            offset,
        })
    }
}

/// A member of the reference's first-set union.
enum Member {
    Item(SetItem),
    /// A negated nested set (its items, evaluated without case folding).
    Negated(Vec<SetItem>),
}

fn push_members(node: &Node, out: &mut Vec<Member>) {
    match node {
        Node::Char {
            c, positive: true, ..
        } => out.push(Member::Item(SetItem::Char(*c))),
        Node::Char {
            c, positive: false, ..
        } => out.push(Member::Negated(vec![SetItem::Char(*c)])),
        Node::Prop {
            key, positive, enc, ..
        } => out.push(Member::Item(SetItem::Prop {
            key: *key,
            positive: *positive,
            enc: *enc,
        })),
        Node::Set {
            items, positive, ..
        } => {
            let flat = flattened(items);
            if *positive {
                out.extend(flat.into_iter().map(Member::Item));
            } else if let [SetItem::Prop { key, positive, enc }] = flat.as_slice() {
                out.push(Member::Item(SetItem::Prop {
                    key: *key,
                    positive: !*positive,
                    enc: *enc,
                }));
            } else {
                out.push(Member::Negated(flat));
            }
        }
        Node::SetOf { members, .. } => members.iter().for_each(|m| push_members(m, out)),
        _ => {}
    }
}

impl Builder {
    /// The characters the reference lets a search start on when the pattern has no simple
    /// start (its "first set"), evaluated the way the reference evaluates it, quirks included.
    fn firstset(&self, node: &Node) -> Option<CharSet> {
        let fs = first_items(node).ok()?;
        if fs.none || fs.items.is_empty() {
            return None;
        }
        if fs.items.iter().any(|i| {
            matches!(
                i,
                Node::Char {
                    positive: false,
                    ..
                }
            )
        }) {
            return None;
        }
        // Items whose case flags matter (sets, and cased characters) must all have the same
        // flags; the union then ignores case simply if any item does.
        let mut case_set: Vec<(bool, bool)> = Vec::new();
        for i in &fs.items {
            let flags = match i {
                Node::Set { ign, full, .. } | Node::SetOf { ign, full, .. } => Some((*ign, *full)),
                Node::Char { c, ign, full, .. } if self.is_cased(*c) => Some((*ign, *full)),
                _ => None,
            };
            if let Some(f) = flags
                && !case_set.contains(&f)
            {
                case_set.push(f);
            }
        }
        if case_set.len() > 1 {
            return None;
        }
        let ign = fs.items.iter().any(|i| {
            matches!(
                i,
                Node::Char { ign: true, .. }
                    | Node::Prop { ign: true, .. }
                    | Node::Set { ign: true, .. }
                    | Node::SetOf { ign: true, .. }
            )
        });
        let mut members = Vec::new();
        for item in &fs.items {
            push_members(item, &mut members);
        }
        let props: Vec<(u32, bool)> = members
            .iter()
            .filter_map(|m| match m {
                Member::Item(SetItem::Prop { key, positive, .. }) => Some((*key, *positive)),
                _ => None,
            })
            .collect();
        if props.iter().any(|&(k, p)| p && props.contains(&(k, false))) {
            // "Any character": no first set.
            return None;
        }
        if members.len() == 1 {
            // A one-member union is that member, with the union's case flag.
            return Some(match members.pop().expect("one member") {
                Member::Item(SetItem::Char(c)) => self
                    .class_of(&Node::Char {
                        c,
                        positive: true,
                        ign,
                        full: false,
                    })
                    .expect("char"),
                Member::Item(SetItem::Prop { key, positive, enc }) => self
                    .class_of(&Node::Prop {
                        key,
                        positive,
                        ign,
                        full: false,
                        enc,
                    })
                    .expect("property"),
                Member::Item(SetItem::Range(a, b)) => {
                    let s = CharSet::range(a, b);
                    if ign { self.closure(&s) } else { s }
                }
                Member::Item(nested @ SetItem::Nested { .. }) => {
                    self.set_node(std::slice::from_ref(&nested), true, ign)
                }
                Member::Item(SetItem::Union(_)) => unreachable!("flattened"),
                Member::Negated(items) => self.set_node(&items, false, ign),
            });
        }
        let mut acc = CharSet::empty();
        for m in &members {
            let (raw, positive) = match m {
                Member::Item(SetItem::Char(c)) => (CharSet::single(*c), true),
                Member::Item(SetItem::Range(a, b)) => (CharSet::range(*a, *b), true),
                Member::Item(SetItem::Prop { key, positive, enc }) => {
                    let raw = if ign {
                        property_set(*key, self.ascii)
                    } else {
                        property_set_enc(*key, *enc, self.ascii)
                    };
                    (raw, *positive)
                }
                Member::Item(SetItem::Nested {
                    op,
                    items,
                    positive,
                }) => (eval_op(*op, items, self.ascii, None), *positive),
                Member::Item(SetItem::Union(_)) => unreachable!("flattened"),
                // The reference tests each case variant against the nested set as a whole.
                Member::Negated(items) => (self.set_node(items, true, false), false),
            };
            let s = if ign { self.closure(&raw) } else { raw };
            acc = acc.union(&if positive { s } else { s.complement() });
        }
        Some(acc)
    }
}

/// The members of a set's union with nested positive unions merged in, owned.
fn flattened(items: &[SetItem]) -> Vec<SetItem> {
    let mut flat = Vec::new();
    flatten_union(items, &mut flat);
    flat.into_iter().cloned().collect()
}
