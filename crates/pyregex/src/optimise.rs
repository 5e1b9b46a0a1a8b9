//! The reference's tree rewrites that can change what a pattern matches: nested sequences and
//! alternations are flattened, a common prefix (suffix inside lookbehinds) is moved out of an
//! alternation, and adjacent one-character branches are merged into one set (whose
//! case-insensitive member semantics differ from a lone property's).

use super::ast::Node;

/// Rewrites `node` as the reference's `optimise` does. `reverse` is true inside lookbehinds.
pub fn optimise(node: Node, reverse: bool) -> Node {
    match node {
        Node::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match optimise(item, reverse) {
                    Node::Seq(inner) => out.extend(inner),
                    Node::Empty => {}
                    other => out.push(other),
                }
            }
            make_sequence(out)
        }
        Node::Alt(branches) => optimise_branches(branches, reverse),
        Node::Group { index, node } => Node::Group {
            index,
            node: Box::new(optimise(*node, reverse)),
        },
        Node::Repeat {
            node,
            min,
            max,
            kind,
        } => Node::Repeat {
            node: Box::new(optimise(*node, reverse)),
            min,
            max,
            kind,
        },
        Node::Atomic(node) => {
            let inner = optimise(*node, reverse);
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
            node: Box::new(optimise(*node, behind)),
        },
        other => other,
    }
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

fn optimise_branches(branches: Vec<Node>, reverse: bool) -> Node {
    if branches.is_empty() {
        return Node::Empty;
    }
    let mut flat = Vec::with_capacity(branches.len());
    for b in branches {
        match optimise(b, reverse) {
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
        if count > 0 {
            affix = alternatives[0][..count].to_vec();
            for a in &mut alternatives {
                a.drain(..count);
            }
        }
    }
    let branches: Vec<Node> = alternatives.into_iter().map(make_sequence).collect();
    let branches = reduce_to_set(branches);
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
    make_sequence(out)
}

fn single_char_ign(node: &Node) -> Option<bool> {
    if node.is_range() {
        return None;
    }
    match node {
        Node::Char { ign, .. } | Node::Prop { ign, .. } | Node::Set { ign, .. } => Some(*ign),
        _ => None,
    }
}

/// Merges runs of adjacent one-character branches with the same case sensitivity into sets.
fn reduce_to_set(branches: Vec<Node>) -> Vec<Node> {
    let mut out = Vec::new();
    let mut run: Vec<Node> = Vec::new();
    let mut run_ign = false;
    let flush = |run: &mut Vec<Node>, ign: bool, out: &mut Vec<Node>| match run.len() {
        0 => {}
        1 => out.push(run.pop().expect("one")),
        _ => {
            let members = std::mem::take(run);
            out.push(Node::SetOf {
                members: dedup(members),
                ign,
            });
        }
    };
    for b in branches {
        match single_char_ign(&b) {
            Some(ign) => {
                if ign != run_ign {
                    flush(&mut run, run_ign, &mut out);
                    run_ign = ign;
                }
                run.push(b);
            }
            None => {
                flush(&mut run, run_ign, &mut out);
                out.push(b);
            }
        }
    }
    flush(&mut run, run_ign, &mut out);
    out
}

/// The reference collects the members in a Python `set`: duplicates (ignoring case flags)
/// collapse, which can leave a single member.
fn dedup(members: Vec<Node>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::new();
    for m in members {
        let key = strip_ign(&m);
        if !out.iter().any(|o| strip_ign(o) == key) {
            out.push(m);
        }
    }
    out
}

fn strip_ign(node: &Node) -> Node {
    match node.clone() {
        Node::Char { c, positive, .. } => Node::Char {
            c,
            positive,
            ign: false,
        },
        Node::Prop {
            key, positive, enc, ..
        } => Node::Prop {
            key,
            positive,
            ign: false,
            enc,
        },
        Node::Set {
            items, positive, ..
        } => Node::Set {
            items,
            positive,
            ign: false,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(c: char) -> Node {
        Node::Char {
            c: c as u32,
            positive: true,
            ign: false,
        }
    }

    #[test]
    fn common_prefix_and_sets() {
        let alt = Node::Alt(vec![
            Node::Seq(vec![ch('a'), ch('b')]),
            Node::Seq(vec![ch('a'), ch('c')]),
        ]);
        let got = optimise(alt, false);
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
        let Node::Seq(items) = optimise(alt, true) else {
            panic!()
        };
        assert_eq!(items[1], ch('a'));
    }

    #[test]
    fn identical_branches_keep_an_empty_alternation() {
        let got = optimise(Node::Alt(vec![ch('a'), ch('a')]), false);
        assert_eq!(
            got,
            Node::Seq(vec![ch('a'), Node::Alt(vec![Node::Empty, Node::Empty])])
        );
        let got = optimise(Node::Alt(vec![ch('a'), ch('b')]), false);
        assert!(matches!(got, Node::SetOf { ref members, .. } if members.len() == 2));
    }
}
