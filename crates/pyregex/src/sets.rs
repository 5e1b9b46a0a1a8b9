//! Bracketed sets as the reference evaluates them: VERSION1's nested sets and set operations,
//! the optimiser's "any character" rule for unions, the case-sensitive `matches` test its
//! optimiser runs in Python (to find the characters a set matches that expand under full case
//! folding), and the code points the matcher accepts (with its member-wise case-insensitive
//! test at the top level only).

use std::collections::HashMap;

use super::ast::{Node, SetItem, SetOp};
use super::charset::CharSet;
use super::props::{property_set, property_set_enc};

/// Whether the reference's optimiser turns a union with these members into "any character":
/// it holds a property and its negation, two negated characters, or a nested union that is
/// itself "any character" (whatever that union's own negation), counted after nested positive
/// unions are merged into it.
pub(crate) fn union_is_everything(items: &[SetItem]) -> bool {
    let mut props: Vec<(u32, bool)> = Vec::new();
    let mut negated_chars: Vec<u32> = Vec::new();
    if collect_union(items, &mut props, &mut negated_chars) {
        return true;
    }
    negated_chars.sort_unstable();
    negated_chars.dedup();
    negated_chars.len() > 1 || props.iter().any(|&(k, p)| p && props.contains(&(k, false)))
}

/// Gathers a union's merged members; `true` when a member is "any character".
fn collect_union(items: &[SetItem], props: &mut Vec<(u32, bool)>, negated: &mut Vec<u32>) -> bool {
    for item in items {
        match item {
            SetItem::Prop { key, positive, .. } => props.push((*key, *positive)),
            SetItem::Union(inner)
            | SetItem::Nested {
                op: SetOp::Union,
                items: inner,
                positive: true,
            } if collect_union(inner, props, negated) => return true,
            SetItem::Nested {
                op: SetOp::Union,
                items: inner,
                positive: false,
            } => match inner.as_slice() {
                [SetItem::Char(c)] => negated.push(*c),
                _ if union_is_everything(inner) => return true,
                _ => {}
            },
            _ => {}
        }
    }
    false
}

/// Whether `item` is a nested union the optimiser replaces by "any character".
fn is_everything(item: &SetItem) -> bool {
    match item {
        SetItem::Union(inner)
        | SetItem::Nested {
            op: SetOp::Union,
            items: inner,
            ..
        } => union_is_everything(inner),
        _ => false,
    }
}

/// The reference's Python-level `matches` of a set item, which its optimiser evaluates
/// (case-sensitively, Unicode tables) for full case folding. `Err(())` where the reference
/// fails with `AttributeError` (it reaches an "any character" member, which has no such test);
/// Python's `any`/`all`/`and` stop early exactly as here.
pub(crate) struct PyMatcher {
    props: HashMap<u32, CharSet>,
}

impl PyMatcher {
    pub(crate) fn new() -> PyMatcher {
        PyMatcher {
            props: HashMap::new(),
        }
    }

    fn has_property(&mut self, key: u32, c: u32) -> bool {
        self.props
            .entry(key)
            .or_insert_with(|| property_set(key, false))
            .contains(c)
    }

    /// `matches` of a set made of `items` (combined by `op`), negated unless `positive`.
    pub(crate) fn set_matches(
        &mut self,
        op: SetOp,
        items: &[SetItem],
        positive: bool,
        c: u32,
    ) -> Result<bool, ()> {
        if op == SetOp::Union && union_is_everything(items) {
            return Err(());
        }
        let m = match op {
            SetOp::Union => {
                let mut flat = Vec::new();
                flatten_union(items, &mut flat);
                let mut m = false;
                for i in flat {
                    if self.item_matches(i, c)? {
                        m = true;
                        break;
                    }
                }
                m
            }
            SetOp::Inter => {
                let mut m = true;
                for i in items {
                    if !self.item_matches(i, c)? {
                        m = false;
                        break;
                    }
                }
                m
            }
            SetOp::Diff => {
                // The optimiser keeps the first member and the union of the others.
                self.item_matches(&items[0], c)?
                    && !self.set_matches(SetOp::Union, &items[1..], true, c)?
            }
            SetOp::SymDiff => {
                let mut m = false;
                for i in items {
                    m ^= self.item_matches(i, c)?;
                }
                m
            }
        };
        Ok(m == positive)
    }

    /// Whether `item` matches `c` as the reference's `matches` evaluates it (`Err(())` where it
    /// fails with `AttributeError`).
    pub(crate) fn item_matches(&mut self, item: &SetItem, c: u32) -> Result<bool, ()> {
        match item {
            SetItem::Char(v) => Ok(*v == c),
            SetItem::Range(a, b) => Ok((*a..=*b).contains(&c)),
            SetItem::Prop { key, positive, .. } => Ok(self.has_property(*key, c) == *positive),
            SetItem::Union(inner) => self.set_matches(SetOp::Union, inner, true, c),
            SetItem::Nested {
                op,
                items,
                positive,
            } => self.set_matches(*op, items, *positive, c),
        }
    }
}

/// A set as the operation it applies: a set made of one nested operation other than a union
/// is that operation (with its own sign); any other set is the positive union of its items.
pub(crate) fn set_operation(items: &[SetItem]) -> (SetOp, Vec<SetItem>, bool) {
    match items {
        [
            SetItem::Nested {
                op,
                items: inner,
                positive,
            },
        ] if *op != SetOp::Union => (*op, inner.clone(), *positive),
        _ => (SetOp::Union, items.to_vec(), true),
    }
}

/// The members of a union with nested positive unions merged in (the reference's optimiser
/// merges positive unions into the union holding them).
pub(crate) fn flatten_union<'a>(items: &'a [SetItem], out: &mut Vec<&'a SetItem>) {
    for item in items {
        match item {
            SetItem::Union(inner)
            | SetItem::Nested {
                op: SetOp::Union,
                items: inner,
                positive: true,
            } => flatten_union(inner, out),
            other => out.push(other),
        }
    }
}

/// The code points the matcher accepts for a set: `members` combined by `op`. At the top level
/// under IGNORECASE (`closure` given), each member is tested with every case of the character
/// (so it contributes its case closure, complemented for a negated member); nested sets are
/// always tested case-sensitively. A member the optimiser made "any character" accepts
/// everything.
pub(crate) fn eval_op(
    op: SetOp,
    members: &[SetItem],
    ascii: bool,
    closure: Option<&dyn Fn(&CharSet) -> CharSet>,
) -> CharSet {
    // At the top level under IGNORECASE the members are tested one by one, so the optimiser's
    // rewrites of the member list matter: nested positive sets of the same operation merge into
    // it, and a difference keeps its first member and the union of the others.
    let merged;
    let members = if closure.is_some() {
        merged = top_level_members(op, members);
        merged.as_slice()
    } else {
        members
    };
    let effective = |item: &SetItem| -> CharSet {
        if is_everything(item) {
            return CharSet::full();
        }
        let (raw, matches) = raw_member(item, ascii);
        let raw = match closure {
            Some(f) => f(&raw),
            None => raw,
        };
        if matches { raw } else { raw.complement() }
    };
    match op {
        SetOp::Union => members
            .iter()
            .fold(CharSet::empty(), |acc, m| acc.union(&effective(m))),
        SetOp::Inter => members
            .iter()
            .fold(CharSet::full(), |acc, m| acc.intersect(&effective(m))),
        SetOp::Diff => {
            let Some((first, rest)) = members.split_first() else {
                return CharSet::empty();
            };
            let taken = rest
                .iter()
                .fold(CharSet::empty(), |acc, m| acc.union(&effective(m)));
            effective(first).intersect(&taken.complement())
        }
        SetOp::SymDiff => members.iter().fold(CharSet::empty(), |acc, m| {
            let e = effective(m);
            acc.intersect(&e.complement())
                .union(&e.intersect(&acc.complement()))
        }),
    }
}

/// The members of a top-level set operation after the reference's optimiser.
fn top_level_members(op: SetOp, members: &[SetItem]) -> Vec<SetItem> {
    fn merge(op: SetOp, items: &[SetItem], out: &mut Vec<SetItem>) {
        for item in items {
            match item {
                SetItem::Union(inner) if op == SetOp::Union => merge(op, inner, out),
                SetItem::Nested {
                    op: o,
                    items: inner,
                    positive: true,
                } if *o == op => merge(op, inner, out),
                other => out.push(other.clone()),
            }
        }
    }
    match op {
        SetOp::Diff if members.len() > 2 => {
            let mut rest = Vec::new();
            merge(SetOp::Union, &members[1..], &mut rest);
            let rest = if rest.len() == 1 {
                rest.pop().expect("one member")
            } else {
                SetItem::Nested {
                    op: SetOp::Union,
                    items: rest,
                    positive: true,
                }
            };
            vec![members[0].clone(), rest]
        }
        SetOp::Diff => members.to_vec(),
        _ => {
            let mut out = Vec::new();
            merge(op, members, &mut out);
            out
        }
    }
}

/// A member's code points as the matcher tests them (before its own negation) and whether it
/// matches when they contain the character (its "match" flag).
fn raw_member(item: &SetItem, ascii: bool) -> (CharSet, bool) {
    match item {
        SetItem::Char(c) => (CharSet::single(*c), true),
        SetItem::Range(a, b) => (CharSet::range(*a, *b), true),
        SetItem::Prop { key, positive, enc } => (property_set_enc(*key, *enc, ascii), *positive),
        SetItem::Union(inner) => (eval_op(SetOp::Union, inner, ascii, None), true),
        SetItem::Nested {
            op,
            items,
            positive,
        } => (eval_op(*op, items, ascii, None), *positive),
    }
}

/// A one-character node as a member of a set (for merged alternatives).
pub(crate) fn node_as_item(node: &Node) -> Option<SetItem> {
    Some(match node {
        Node::Char { c, positive, .. } => {
            if *positive {
                SetItem::Char(*c)
            } else {
                SetItem::Nested {
                    op: SetOp::Union,
                    items: vec![SetItem::Char(*c)],
                    positive: false,
                }
            }
        }
        Node::Prop {
            key, positive, enc, ..
        } => SetItem::Prop {
            key: *key,
            positive: *positive,
            enc: *enc,
        },
        Node::Set {
            items, positive, ..
        } => match items.as_slice() {
            [
                SetItem::Nested {
                    op,
                    items: inner,
                    positive: p,
                },
            ] if *op != SetOp::Union => SetItem::Nested {
                op: *op,
                items: inner.clone(),
                positive: p == positive,
            },
            _ => SetItem::Nested {
                op: SetOp::Union,
                items: items.clone(),
                positive: *positive,
            },
        },
        Node::SetOf { members, .. } => SetItem::Nested {
            op: SetOp::Union,
            items: members.iter().filter_map(node_as_item).collect(),
            positive: true,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Enc;

    fn ch(c: char) -> SetItem {
        SetItem::Char(c as u32)
    }

    fn not(items: Vec<SetItem>) -> SetItem {
        SetItem::Nested {
            op: SetOp::Union,
            items,
            positive: false,
        }
    }

    #[test]
    fn everything_rules() {
        assert!(union_is_everything(&[
            not(vec![ch('a')]),
            not(vec![ch('b')])
        ]));
        assert!(!union_is_everything(&[not(vec![ch('a')]), ch('b')]));
        let w = crate::props::binary_key("WORD");
        let wp = SetItem::Prop {
            key: w,
            positive: true,
            enc: Enc::Default,
        };
        let wn = SetItem::Prop {
            key: w,
            positive: false,
            enc: Enc::Default,
        };
        assert!(union_is_everything(&[
            ch('x'),
            not(vec![wp.clone(), wn.clone()])
        ]));
        assert!(union_is_everything(&[wp, wn]));
    }

    #[test]
    fn operations() {
        let az = SetItem::Range('a' as u32, 'z' as u32);
        let vowels = SetItem::Nested {
            op: SetOp::Union,
            items: "aeiou".chars().map(ch).collect(),
            positive: true,
        };
        let s = eval_op(SetOp::Diff, &[az.clone(), vowels.clone()], false, None);
        assert!(s.contains('b' as u32) && !s.contains('a' as u32) && !s.contains('B' as u32));
        let s = eval_op(SetOp::Inter, &[az.clone(), vowels.clone()], false, None);
        assert!(s.contains('e' as u32) && !s.contains('b' as u32));
        let s = eval_op(SetOp::SymDiff, &[az, vowels], false, None);
        assert!(s.contains('b' as u32) && !s.contains('e' as u32));
        let mut m = PyMatcher::new();
        let everything = not(vec![not(vec![ch('a')]), not(vec![ch('b')])]);
        assert_eq!(
            m.set_matches(SetOp::Diff, &[everything, ch('a')], true, 'b' as u32),
            Err(())
        );
        assert_eq!(
            m.set_matches(SetOp::Union, &[ch('b'), ch('a')], true, 'b' as u32),
            Ok(true)
        );
    }
}
