//! The reference's tree rewrites that can change what a pattern matches: nested sequences and
//! alternations are flattened, a common prefix (suffix inside lookbehinds) is moved out of an
//! alternation (never splitting characters that full case folding could match together), and
//! adjacent one-character branches are merged into one set (whose case-insensitive member
//! semantics differ from a lone property's). Under full case folding a set also matches the
//! foldings of the characters in it that expand (`ß` brings `ss`), as extra alternatives.
//!
//! After the rewrites, [`pack`] turns runs of literal characters into strings as the reference
//! does, splitting a case-insensitive run into the parts that need full case folding (around a
//! folding such as `ss` or `fi`) and the parts that simple case folding serves.

use super::ast::{Node, SetItem, SetOp};
use super::sets::{PyMatcher, set_operation};
use super::unicode::{expands, full_fold, other_cases, other_cases_ascii};
use super::unicode_tables as t;

/// What the rewrites need to know about the pattern as a whole.
pub(crate) struct Ctx {
    /// The pattern uses the ASCII encoding (a top-level `(?a)`); otherwise Unicode.
    pub ascii: bool,
    /// The flags the parse ends with include IGNORECASE and FULLCASE (and the encoding is
    /// Unicode): the reference then counts a character that expands on full case folding as
    /// cased even when it has no other case.
    pub cased_full: bool,
}

impl Ctx {
    /// The reference's `is_cased_i` with the pattern's final flags.
    pub(crate) fn is_cased(&self, c: u32) -> bool {
        if self.ascii {
            other_cases_ascii(c).is_some()
        } else {
            !other_cases(c).is_empty() || (self.cased_full && expands(c))
        }
    }
}

/// A set under full case folding whose expansions cannot be computed the way the reference does
/// (its Python-level test fails with `AttributeError`).
#[derive(Debug)]
pub(crate) struct Unmatchable;

/// Rewrites `node` as the reference's `optimise` then `pack_characters` do.
pub(crate) fn optimise_and_pack(node: Node, ctx: &Ctx) -> Result<Node, Unmatchable> {
    let node = optimise(node, false, ctx)?;
    Ok(pack(node, ctx))
}

/// Rewrites `node` as the reference's `optimise` does. `reverse` is true inside lookbehinds.
fn optimise(node: Node, reverse: bool, ctx: &Ctx) -> Result<Node, Unmatchable> {
    Ok(match node {
        Node::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match optimise(item, reverse, ctx)? {
                    Node::Seq(inner) => out.extend(inner),
                    Node::Empty => {}
                    other => out.push(other),
                }
            }
            make_sequence(out)
        }
        Node::Alt(branches) => optimise_branches(branches, reverse, ctx)?,
        Node::Group { index, node } => Node::Group {
            index,
            node: Box::new(optimise(*node, reverse, ctx)?),
        },
        Node::Repeat {
            node,
            min,
            max,
            kind,
        } => Node::Repeat {
            node: Box::new(optimise(*node, reverse, ctx)?),
            min,
            max,
            kind,
        },
        Node::Atomic(node) => {
            let inner = optimise(*node, reverse, ctx)?;
            if inner.is_empty() {
                inner
            } else {
                Node::Atomic(Box::new(inner))
            }
        }
        Node::Look {
            behind,
            positive,
            node,
        } => Node::Look {
            behind,
            positive,
            node: Box::new(optimise(*node, behind, ctx)?),
        },
        set @ Node::Set { .. } => fold_expand(set, ctx)?,
        other => other,
    })
}

fn make_sequence(mut items: Vec<Node>) -> Node {
    match items.len() {
        0 => Node::Empty,
        1 => items.pop().expect("one item"),
        _ => Node::Seq(items),
    }
}

fn items_of(node: Node) -> Vec<Node> {
    match node {
        Node::Seq(items) => items,
        Node::Empty => Vec::new(),
        other => vec![other],
    }
}

/// Whether the reference may move `node` out of an alternation (`can_be_affix`).
fn can_be_affix(node: &Node) -> bool {
    match node {
        Node::Group { .. } | Node::Repeat { .. } | Node::Seq(_) => false,
        Node::Atomic(n) | Node::Look { node: n, .. } => can_be_affix(n),
        Node::Alt(branches) => branches.iter().all(can_be_affix),
        _ => true,
    }
}

fn optimise_branches(branches: Vec<Node>, reverse: bool, ctx: &Ctx) -> Result<Node, Unmatchable> {
    if branches.is_empty() {
        return Ok(Node::Empty);
    }
    let mut flat = Vec::with_capacity(branches.len());
    for b in branches {
        match optimise(b, reverse, ctx)? {
            Node::Alt(inner) => flat.extend(inner),
            other => flat.push(other),
        }
    }
    let mut alternatives: Vec<Vec<Node>> = flat.into_iter().map(items_of).collect();
    let max_count = alternatives.iter().map(Vec::len).min().unwrap_or(0);
    let mut count = 0;
    let mut affix = Vec::new();
    if reverse {
        while count < max_count {
            let first = &alternatives[0][alternatives[0].len() - 1 - count];
            if !can_be_affix(first)
                || !alternatives
                    .iter()
                    .all(|a| &a[a.len() - 1 - count] == first)
            {
                break;
            }
            count += 1;
        }
        if !ctx.ascii {
            // Never split characters that full case folding could match together.
            while count > 0 && !alternatives.iter().all(|a| can_split_rev(a, count)) {
                count -= 1;
            }
        }
        if count > 0 {
            let n0 = alternatives[0].len();
            affix = alternatives[0][n0 - count..].to_vec();
            for a in &mut alternatives {
                let n = a.len();
                a.truncate(n - count);
            }
        }
    } else {
        while count < max_count {
            let first = &alternatives[0][count];
            if !can_be_affix(first) || !alternatives.iter().all(|a| &a[count] == first) {
                break;
            }
            count += 1;
        }
        if !ctx.ascii {
            while count > 0 && !alternatives.iter().all(|a| can_split(a, count)) {
                count -= 1;
            }
        }
        if count > 0 {
            affix = alternatives[0][..count].to_vec();
            for a in &mut alternatives {
                a.drain(..count);
            }
        }
    }
    let branches: Vec<Node> = alternatives.into_iter().map(make_sequence).collect();
    let branches = reduce_to_set(branches, ctx)?;
    let middle = if branches.len() > 1 {
        vec![Node::Alt(branches)]
    } else {
        branches
    };
    let items: Vec<Node> = if reverse {
        middle.into_iter().chain(affix).collect()
    } else {
        affix.into_iter().chain(middle).collect()
    };
    // `make_sequence` of the rebuilt items, flattening a single-branch sequence.
    let mut out = Vec::new();
    for item in items {
        match item {
            Node::Seq(inner) => out.extend(inner),
            Node::Empty => {}
            other => out.push(other),
        }
    }
    Ok(make_sequence(out))
}

/// The reference's `_is_full_case`: item `i` exists and is a positive character under full
/// case folding.
fn is_full_case(items: &[Node], i: isize) -> bool {
    i >= 0
        && (i as usize) < items.len()
        && matches!(
            items[i as usize],
            Node::Char {
                positive: true,
                ign: true,
                full: true,
                ..
            }
        )
}

/// `items[from..to]` with Python's clamping of slice bounds.
fn slice(items: &[Node], from: isize, to: isize) -> &[Node] {
    let n = items.len() as isize;
    let clamp = |i: isize| i.clamp(0, n) as usize;
    let (a, b) = (clamp(from), clamp(to));
    if a >= b { &[] } else { &items[a..b] }
}

/// The reference's `_is_folded`: at least two positive case-insensitive characters whose full
/// case folding together is the folding of a character that expands.
fn is_folded(items: &[Node]) -> bool {
    if items.len() < 2 {
        return false;
    }
    let mut folded = Vec::new();
    for i in items {
        match i {
            Node::Char {
                c,
                positive: true,
                ign: true,
                ..
            } => folded.extend_from_slice(full_fold(*c, false).chars()),
            _ => return false,
        }
    }
    t::EXPAND_ON_FOLDING
        .iter()
        .any(|&e| full_fold(e, false).chars() == folded.as_slice())
}

/// The reference's `_can_split`: whether a common prefix of `count` items may be moved out.
fn can_split(items: &[Node], count: usize) -> bool {
    let c = count as isize;
    if !is_full_case(items, c - 1) || !is_full_case(items, c) {
        return true;
    }
    if is_folded(slice(items, c - 1, c + 1)) {
        return false;
    }
    // (The reference tests the item after the three it then examines.)
    if is_full_case(items, c + 2) && is_folded(slice(items, c - 1, c + 2)) {
        return false;
    }
    if is_full_case(items, c - 2) && is_folded(slice(items, c - 2, c + 1)) {
        return false;
    }
    true
}

/// The reference's `_can_split_rev`, for a common suffix of `count` items.
fn can_split_rev(items: &[Node], count: usize) -> bool {
    let end = items.len() as isize;
    let c = count as isize;
    if !is_full_case(items, end - c) || !is_full_case(items, end - c - 1) {
        return true;
    }
    if is_folded(slice(items, end - c - 1, end - c + 1)) {
        return false;
    }
    if is_full_case(items, end - c + 2) && is_folded(slice(items, end - c - 1, end - c + 2)) {
        return false;
    }
    if is_full_case(items, end - c - 2) && is_folded(slice(items, end - c - 2, end - c + 1)) {
        return false;
    }
    true
}

/// The case flags of a branch that may merge into a set (`ign`, `full`), or `None`.
fn single_char_case(node: &Node) -> Option<(bool, bool)> {
    if node.is_range() {
        return None;
    }
    match node {
        Node::Char { ign, full, .. }
        | Node::Prop { ign, full, .. }
        | Node::Set { ign, full, .. } => Some((*ign, *full)),
        _ => None,
    }
}

/// Merges runs of adjacent one-character branches with the same case flags into sets. Like the
/// reference, nothing is merged when a branch is a negated character or set.
fn reduce_to_set(branches: Vec<Node>, ctx: &Ctx) -> Result<Vec<Node>, Unmatchable> {
    if branches.iter().any(|b| {
        !b.is_range()
            && matches!(
                b,
                Node::Char {
                    positive: false,
                    ..
                } | Node::Set {
                    positive: false,
                    ..
                }
            )
    }) {
        return Ok(branches);
    }
    let mut out = Vec::new();
    let mut run: Vec<Node> = Vec::new();
    let mut run_case = (false, false);
    for b in branches {
        match single_char_case(&b) {
            Some(case) => {
                if case != run_case {
                    flush_set_members(&mut run, run_case, &mut out, ctx)?;
                    run_case = case;
                }
                run.push(b);
            }
            None => {
                flush_set_members(&mut run, run_case, &mut out, ctx)?;
                out.push(b);
            }
        }
    }
    flush_set_members(&mut run, run_case, &mut out, ctx)?;
    Ok(out)
}

fn flush_set_members(
    run: &mut Vec<Node>,
    (ign, full): (bool, bool),
    out: &mut Vec<Node>,
    ctx: &Ctx,
) -> Result<(), Unmatchable> {
    match run.len() {
        0 => {}
        1 => {
            // The member rebuilt with the run's flags: a set is optimised again, which adds its
            // foldings again under full case folding.
            let member = run.pop().expect("one");
            out.push(if matches!(member, Node::Set { .. }) {
                fold_expand(member, ctx)?
            } else {
                member
            });
        }
        _ => {
            let members = dedup(std::mem::take(run));
            let node = if members.len() == 1 {
                members.into_iter().next().expect("one")
            } else {
                Node::SetOf { members, ign, full }
            };
            out.push(fold_expand(node, ctx)?);
        }
    }
    Ok(())
}

/// The reference collects the members in a Python `set`: duplicates (ignoring case flags)
/// collapse, which can leave a single member.
fn dedup(members: Vec<Node>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for m in members {
        let key = strip_case(&m);
        if !out.iter().any(|o| strip_case(o) == key) {
            out.push(m);
        }
    }
    out
}

fn strip_case(node: &Node) -> Node {
    match node.clone() {
        Node::Char { c, positive, .. } => Node::Char {
            c,
            positive,
            ign: false,
            full: false,
        },
        Node::Prop {
            key, positive, enc, ..
        } => Node::Prop {
            key,
            positive,
            ign: false,
            full: false,
            enc,
        },
        Node::Set {
            items, positive, ..
        } => Node::Set {
            items,
            positive,
            ign: false,
            full: false,
        },
        other => other,
    }
}

/// Under full case folding (Unicode encoding), a positive set also matches the foldings of the
/// characters it holds that expand, as alternatives after it (the reference's
/// `_handle_case_folding`, and for a single range `Range.optimise`, which drops the range
/// itself when every character in it expands).
fn fold_expand(node: Node, ctx: &Ctx) -> Result<Node, Unmatchable> {
    if ctx.ascii {
        return Ok(node);
    }
    let literal = |c: u32| Node::Literal {
        chars: full_fold(c, false).chars().to_vec(),
        ign: true,
        full: true,
    };
    match &node {
        Node::Set {
            items,
            positive: true,
            ign: true,
            full: true,
        } => {
            if let [SetItem::Range(lo, hi)] = items.as_slice() {
                let (lo, hi) = (*lo, *hi);
                let mut alts: Vec<Node> = t::EXPAND_ON_FOLDING
                    .iter()
                    .filter(|&&c| (lo..=hi).contains(&c))
                    .map(|&c| literal(c))
                    .collect();
                if alts.is_empty() {
                    return Ok(node);
                }
                if (alts.len() as u64) < u64::from(hi - lo) + 1 {
                    alts.insert(0, node);
                }
                return Ok(Node::Alt(alts));
            }
            let (op, members, positive) = set_operation(items);
            with_foldings(node, op, &members, positive, &literal)
        }
        Node::SetOf {
            members,
            ign: true,
            full: true,
        } => {
            let items: Vec<SetItem> = members
                .iter()
                .filter_map(super::sets::node_as_item)
                .collect();
            with_foldings(node, SetOp::Union, &items, true, &literal)
        }
        _ => Ok(node),
    }
}

fn with_foldings(
    node: Node,
    op: SetOp,
    members: &[SetItem],
    positive: bool,
    literal: &dyn Fn(u32) -> Node,
) -> Result<Node, Unmatchable> {
    let mut py = PyMatcher::new();
    let mut alts = vec![node];
    let mut seen: Vec<Vec<u32>> = Vec::new();
    for &c in t::EXPAND_ON_FOLDING {
        if py
            .set_matches(op, members, positive, c)
            .map_err(|()| Unmatchable)?
        {
            let folded = full_fold(c, false).chars().to_vec();
            if !seen.contains(&folded) {
                alts.push(literal(c));
                seen.push(folded);
            }
        }
    }
    Ok(if alts.len() == 1 {
        alts.pop().expect("the set")
    } else {
        Node::Alt(alts)
    })
}

/// The reference's `pack_characters`: in every sequence, runs of positive literal characters
/// become strings. A run's case flags come from its first character; an uncased character
/// joins any run, and a run with no cased character is case-sensitive. A run under full case
/// folding is split by [`fix_full_casefold`].
pub(crate) fn pack(node: Node, ctx: &Ctx) -> Node {
    match node {
        Node::Seq(items) => pack_seq(items, ctx),
        Node::Alt(branches) => Node::Alt(branches.into_iter().map(|b| pack(b, ctx)).collect()),
        Node::Group { index, node } => Node::Group {
            index,
            node: Box::new(pack(*node, ctx)),
        },
        Node::Repeat {
            node,
            min,
            max,
            kind,
        } => Node::Repeat {
            node: Box::new(pack(*node, ctx)),
            min,
            max,
            kind,
        },
        Node::Atomic(node) => Node::Atomic(Box::new(pack(*node, ctx))),
        Node::Look {
            behind,
            positive,
            node,
        } => Node::Look {
            behind,
            positive,
            node: Box::new(pack(*node, ctx)),
        },
        other => other,
    }
}

fn pack_seq(items: Vec<Node>, ctx: &Ctx) -> Node {
    let mut out = Vec::new();
    let mut run: Vec<u32> = Vec::new();
    let mut case = (false, false);
    for item in items {
        match item {
            Node::Char {
                c,
                positive: true,
                ign,
                full,
            } => {
                if (ign, full) != case && (ign || ctx.is_cased(c)) {
                    flush_characters(&mut run, case, &mut out, ctx);
                    case = (ign, full);
                }
                run.push(c);
            }
            Node::Literal { chars, ign, full } => {
                // (The reference tests the pending characters here, not the string's.)
                if (ign, full) != case && (ign || run.iter().any(|&c| ctx.is_cased(c))) {
                    flush_characters(&mut run, case, &mut out, ctx);
                    case = (ign, full);
                }
                run.extend(chars);
            }
            other => {
                flush_characters(&mut run, case, &mut out, ctx);
                out.push(pack(other, ctx));
            }
        }
    }
    flush_characters(&mut run, case, &mut out, ctx);
    make_sequence(out)
}

fn flush_characters(run: &mut Vec<u32>, (ign, full): (bool, bool), out: &mut Vec<Node>, ctx: &Ctx) {
    if run.is_empty() {
        return;
    }
    let chars = std::mem::take(run);
    let (ign, full) = if ign && !chars.iter().any(|&c| ctx.is_cased(c)) {
        (false, false)
    } else {
        (ign, full)
    };
    let push = |chars: Vec<u32>, ign: bool, full: bool, out: &mut Vec<Node>| {
        if chars.len() == 1 {
            out.push(Node::Char {
                c: chars[0],
                positive: true,
                ign,
                full,
            });
        } else {
            out.push(Node::Literal { chars, ign, full });
        }
    };
    if ign && full {
        for (part, part_full) in fix_full_casefold(&chars) {
            push(part, true, part_full, out);
        }
    } else {
        push(chars, ign, full, out);
    }
}

/// The reference's `_fix_full_casefold`: the parts of a run that need full case folding are
/// found in the run's folded (and lowercased) text, where each expanding character's folding
/// occurs; the positions found there slice the run's characters (the reference mixes the two
/// indexings, which is reproduced). Returns the parts with whether each needs full folding (an
/// empty part is a string that matches the empty text).
fn fix_full_casefold(chars: &[u32]) -> Vec<(Vec<u32>, bool)> {
    let mut folded: Vec<u32> = Vec::new();
    for &c in chars {
        folded.extend_from_slice(full_fold(c, false).chars());
    }
    let lowered = py_lower(&folded);
    let mut chunks: Vec<(usize, usize)> = Vec::new();
    for &e in t::EXPAND_ON_FOLDING {
        let f = full_fold(e, false);
        let f = f.chars();
        if f.len() > lowered.len() {
            continue;
        }
        for start in 0..=lowered.len() - f.len() {
            if &lowered[start..start + f.len()] == f {
                chunks.push((start, start + f.len()));
            }
        }
    }
    let chunks = merge_chunks(chunks);
    let take = |a: usize, b: usize| -> Vec<u32> {
        let b = b.min(chars.len());
        if a >= b {
            Vec::new()
        } else {
            chars[a..b].to_vec()
        }
    };
    let mut out = Vec::new();
    let mut pos = 0;
    for (start, end) in chunks {
        if pos < start {
            out.push((take(pos, start), false));
        }
        out.push((take(start, end), true));
        pos = end;
    }
    if pos < chars.len() {
        out.push((take(pos, chars.len()), false));
    }
    out
}

fn merge_chunks(mut chunks: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    if chunks.len() < 2 {
        return chunks;
    }
    chunks.sort_unstable();
    let mut out = Vec::new();
    let (mut start, mut end) = chunks[0];
    for &(s, e) in &chunks[1..] {
        if s <= end {
            end = end.max(e);
        } else {
            out.push((start, end));
            (start, end) = (s, e);
        }
    }
    out.push((start, end));
    out
}

/// Python's `str.lower()` of folded text (no capital sigma can occur in it).
fn py_lower(s: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(s.len());
    for &c in s {
        match char::from_u32(c) {
            Some(ch) if ch.is_ascii() => out.push(ch.to_ascii_lowercase() as u32),
            Some(ch) => {
                if let Some(low) = pyunicode::lower_single(ch) {
                    out.push(low as u32);
                } else if let Some(low) = pyunicode::lower_multi(ch) {
                    out.extend(low.iter().map(|&l| l as u32));
                } else if ch == '\u{03A3}' {
                    out.push(0x03C3);
                } else {
                    out.push(c);
                }
            }
            None => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(c: char) -> Node {
        Node::Char {
            c: c as u32,
            positive: true,
            ign: false,
            full: false,
        }
    }

    fn ctx() -> Ctx {
        Ctx {
            ascii: false,
            cased_full: false,
        }
    }

    #[test]
    fn common_prefix_and_sets() {
        let alt = Node::Alt(vec![
            Node::Seq(vec![ch('a'), ch('b')]),
            Node::Seq(vec![ch('a'), ch('c')]),
        ]);
        let got = optimise(alt, false, &ctx()).unwrap();
        let Node::Seq(items) = got else {
            panic!("{got:?}")
        };
        assert_eq!(items[0], ch('a'));
        assert!(matches!(items[1], Node::SetOf { .. }));
        // Inside a lookbehind the common suffix moves instead.
        let alt = Node::Alt(vec![
            Node::Seq(vec![ch('b'), ch('a')]),
            Node::Seq(vec![ch('c'), ch('a')]),
        ]);
        let Node::Seq(items) = optimise(alt, true, &ctx()).unwrap() else {
            panic!()
        };
        assert_eq!(items[1], ch('a'));
    }

    #[test]
    fn identical_branches_keep_an_empty_alternation() {
        let got = optimise(Node::Alt(vec![ch('a'), ch('a')]), false, &ctx()).unwrap();
        assert_eq!(
            got,
            Node::Seq(vec![ch('a'), Node::Alt(vec![Node::Empty, Node::Empty])])
        );
        let got = optimise(Node::Alt(vec![ch('a'), ch('b')]), false, &ctx()).unwrap();
        assert!(matches!(got, Node::SetOf { ref members, .. } if members.len() == 2));
    }

    #[test]
    fn full_casefold_chunks_mix_indexings_like_the_reference() {
        let cps = |s: &str| s.chars().map(|c| c as u32).collect::<Vec<_>>();
        // "xßy" folds to "xssy": `ss` is found at 1..3, which slices "ßy" from the characters.
        assert_eq!(
            fix_full_casefold(&cps("xßy")),
            vec![(cps("x"), false), (cps("ßy"), true)]
        );
        assert_eq!(
            fix_full_casefold(&cps("abcssd")),
            vec![(cps("abc"), false), (cps("ss"), true), (cps("d"), false)]
        );
        assert_eq!(fix_full_casefold(&cps("ab")), vec![(cps("ab"), false)]);
    }
}
