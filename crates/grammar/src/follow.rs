//! What may follow a close that ends in a lookahead: `</think>\s*(?:<response>|(?=[^<\s]|<\|))`
//! closes only where the next text begins with a character of `[^<\s]` or with `<|`, and never
//! at the very end of the output (a lookahead needs something to see). The grammar says so by
//! rewriting what comes after such a close into the part of its language that begins that way
//! ([`restrict`]): alternatives that cannot begin so are dropped, optional parts that would
//! leave the output empty are required, and free text begins with one of the allowed
//! characters.
//!
//! The rewrite is exact for literals, patterns, and free text whose first character is
//! allowed by a one-character class and begins no string the text excludes. Otherwise it
//! leaves text out rather than let in what the parser would read differently: free text that
//! begins with a multi-character start (`<|` then ordinary text, which would need the text's
//! exclusion state after it), a literal shorter than such a start, a JSON value that may begin
//! with a character the lookahead refuses, and rules nested deeper than a few levels. The
//! grammar may then refuse an output the parser reads, never accept one it mis-reads.

use crate::ir::Node;
use crate::re::{self, Re};

/// One way the text after the close may begin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// One character among these ranges (sorted, disjoint).
    Class(Vec<(u32, u32)>),
    /// This text (two or more characters).
    Lit(String),
}

/// The ways a lookahead's pattern lets the text begin, when it is an alternation of
/// character classes and literals.
pub(crate) fn starts_of(look: &Re) -> Option<Vec<Start>> {
    let items: Vec<&Re> = match look {
        Re::Alt(items) => items.iter().collect(),
        one => vec![one],
    };
    let mut out = Vec::new();
    for item in items {
        let item = match item {
            Re::Group { re, .. } => re.as_ref(),
            other => other,
        };
        match item {
            Re::Class { .. } | Re::Any => out.push(Start::Class(ranges_of(item)?)),
            Re::Lit(s) if s.chars().count() == 1 => out.push(Start::Class(ranges_of(item)?)),
            Re::Lit(s) if !s.is_empty() => out.push(Start::Lit(s.clone())),
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The characters a one-character expression takes.
pub(crate) fn ranges_of(re: &Re) -> Option<Vec<(u32, u32)>> {
    match re {
        Re::Class {
            ranges,
            negated: false,
        } => Some(ranges.clone()),
        Re::Class {
            ranges,
            negated: true,
        } => Some(re::complement(ranges)),
        Re::Any => Some(vec![(0, 0x10FFFF)]),
        Re::Lit(s) if s.chars().count() == 1 => {
            let c = s.chars().next()? as u32;
            Some(vec![(c, c)])
        }
        Re::Group { re, .. } => ranges_of(re),
        _ => None,
    }
}

/// The characters in both sets.
fn intersect(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for &(a0, a1) in a {
        for &(b0, b1) in b {
            let (lo, hi) = (a0.max(b0), a1.min(b1));
            if lo <= hi {
                out.push((lo, hi));
            }
        }
    }
    re::normalize(out)
}

/// The characters of `a` not in `b`.
fn minus(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    intersect(a, &re::complement(&re::normalize(b.to_vec())))
}

/// A one-character class as a pattern (`None` when it takes nothing).
fn class(ranges: Vec<(u32, u32)>) -> Option<Re> {
    (!ranges.is_empty()).then_some(Re::Class {
        ranges,
        negated: false,
    })
}

/// The rewrite, with the grammar's rules it follows through references.
pub(crate) struct Restricted<'a> {
    rules: &'a [(String, Node)],
}

/// How deep references are followed; deeper ones are left out.
const MAX_DEPTH: usize = 12;

impl<'a> Restricted<'a> {
    pub(crate) fn new(rules: &'a [(String, Node)]) -> Self {
        Restricted { rules }
    }

    fn rule(&self, name: &str) -> Option<&'a Node> {
        self.rules.iter().find(|(n, _)| n == name).map(|(_, n)| n)
    }

    /// Whether `node` can match the empty text.
    fn nullable(&self, node: &Node, depth: usize) -> bool {
        match node {
            Node::Lit(s) => s.is_empty(),
            Node::TextWithout { .. } => true,
            Node::Regex(re) => re.nullable(),
            Node::Json { .. } | Node::StringWithout { .. } => false,
            Node::Seq(items) => items.iter().all(|n| self.nullable(n, depth)),
            Node::Alt(items) => items.iter().any(|n| self.nullable(n, depth)),
            Node::Repeat { node, min, max } => {
                *min == 0 || *max == Some(0) || self.nullable(node, depth)
            }
            Node::Ref(name) => {
                depth < MAX_DEPTH && self.rule(name).is_some_and(|n| self.nullable(n, depth + 1))
            }
        }
    }

    /// The texts of `node` that begin as one of `starts` says (never the empty text).
    pub(crate) fn node(&mut self, node: &Node, starts: &[Start]) -> Node {
        self.restrict(node, starts, 0)
    }

    fn restrict(&mut self, node: &Node, starts: &[Start], depth: usize) -> Node {
        let nothing = Node::Alt(Vec::new());
        match node {
            Node::Lit(s) => {
                if begins(s, starts) {
                    node.clone()
                } else {
                    nothing
                }
            }
            Node::Regex(re) => match self.re(re, starts) {
                Some(r) => Node::Regex(re::simplify(r)),
                None => nothing,
            },
            // Text that must not read as JSON is read from its first character on; it is not
            // cut here (it stands inside tool calls, never right after a close).
            Node::TextWithout { not_json: true, .. } => nothing,
            Node::TextWithout {
                excludes,
                not_start,
                ..
            } => {
                // After a first character that begins no excluded string, the text is free
                // again (the exclusion automaton is back at its start).
                let mut taken: Vec<(u32, u32)> = excludes
                    .iter()
                    .filter_map(|e| e.chars().next())
                    .map(|c| (c as u32, c as u32))
                    .collect();
                if let Some(c) = not_start {
                    taken.push((*c as u32, *c as u32));
                }
                let mut first = Vec::new();
                for st in starts {
                    if let Start::Class(r) = st {
                        first.extend(minus(r, &taken));
                    }
                }
                match class(re::normalize(first)) {
                    Some(c) => Node::seq(vec![
                        Node::Regex(c),
                        Node::TextWithout {
                            excludes: excludes.clone(),
                            not_start: None,
                            not_blank: false,
                            not_json: false,
                        },
                    ]),
                    None => nothing,
                }
            }
            Node::StringWithout { quote, .. } => {
                if begins(&quote.to_string(), starts) {
                    node.clone()
                } else {
                    nothing
                }
            }
            Node::Json { .. } => {
                // A JSON value may begin with many characters; it is kept whole only when every
                // one of them is allowed.
                let firsts = "{[\"-0123456789tfnNI \t\n\r";
                if firsts.chars().all(|c| begins(&c.to_string(), starts)) {
                    node.clone()
                } else {
                    nothing
                }
            }
            Node::Seq(items) => self.seq(items, starts, depth),
            Node::Alt(items) => Node::alt(
                items
                    .iter()
                    .map(|n| self.restrict(n, starts, depth))
                    .filter(|n| *n != Node::Alt(Vec::new()))
                    .collect(),
            ),
            Node::Repeat {
                node: inner,
                min,
                max,
            } => {
                if *max == Some(0) {
                    return nothing;
                }
                let rest = Node::rep((**inner).clone(), min.saturating_sub(1), max.map(|m| m - 1));
                self.seq(&[(**inner).clone(), rest], starts, depth)
            }
            Node::Ref(name) => {
                if depth >= MAX_DEPTH {
                    return nothing;
                }
                match self.rule(name) {
                    Some(body) => self.restrict(body, starts, depth + 1),
                    None => nothing,
                }
            }
        }
    }

    fn seq(&mut self, items: &[Node], starts: &[Start], depth: usize) -> Node {
        let Some((head, rest)) = items.split_first() else {
            return Node::Alt(Vec::new());
        };
        let mut alts = Vec::new();
        let first = self.restrict(head, starts, depth);
        if first != Node::Alt(Vec::new()) {
            let mut seq = vec![first];
            seq.extend(rest.iter().cloned());
            alts.push(Node::seq(seq));
        }
        if self.nullable(head, depth) {
            let later = self.seq(rest, starts, depth);
            if later != Node::Alt(Vec::new()) {
                alts.push(later);
            }
        }
        Node::alt(alts)
    }

    /// The matches of `re` that begin as `starts` says, or `None` when there are none.
    fn re(&mut self, re: &Re, starts: &[Start]) -> Option<Re> {
        match re {
            Re::Empty | Re::Look { .. } | Re::Assert(_) => None,
            Re::Lit(s) if s.is_empty() => None,
            Re::Lit(s) => begins(s, starts).then(|| re.clone()),
            Re::Class { .. } | Re::Any => {
                let r = ranges_of(re)?;
                // One character cannot begin a longer start by itself.
                let mut first = Vec::new();
                for st in starts {
                    if let Start::Class(c) = st {
                        first.extend(intersect(&r, c));
                    }
                }
                class(re::normalize(first))
            }
            Re::Group { re, .. } => self.re(re, starts),
            Re::Alt(items) => {
                let alts: Vec<Re> = items.iter().filter_map(|r| self.re(r, starts)).collect();
                (!alts.is_empty()).then_some(Re::Alt(alts))
            }
            Re::Seq(items) => self.re_seq(items, starts),
            Re::Repeat {
                re: inner,
                min,
                max,
            } => {
                if *max == Some(0) {
                    return None;
                }
                let rest = Re::Repeat {
                    re: inner.clone(),
                    min: min.saturating_sub(1),
                    max: max.map(|m| m - 1),
                };
                self.re_seq(&[(**inner).clone(), rest], starts)
            }
        }
    }

    fn re_seq(&mut self, items: &[Re], starts: &[Start]) -> Option<Re> {
        let (head, rest) = items.split_first()?;
        let mut alts = Vec::new();
        if let Some(first) = self.re(head, starts) {
            let mut seq = vec![first];
            seq.extend(rest.iter().cloned());
            alts.push(Re::Seq(seq));
        }
        if head.nullable()
            && let Some(later) = self.re_seq(rest, starts)
        {
            alts.push(later);
        }
        match alts.len() {
            0 => None,
            1 => alts.pop(),
            _ => Some(Re::Alt(alts)),
        }
    }
}

/// Whether `s` begins as one of `starts` says.
fn begins(s: &str, starts: &[Start]) -> bool {
    starts.iter().any(|st| match st {
        Start::Class(r) => s
            .chars()
            .next()
            .is_some_and(|c| r.iter().any(|&(a, b)| (a..=b).contains(&(c as u32)))),
        Start::Lit(l) => s.starts_with(l.as_str()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> Re {
        crate::plan::whitespace_re()
    }

    fn granite_starts() -> Vec<Start> {
        let (re, _) = re::lower(r"[^<\s]|<\|").unwrap();
        starts_of(&re).unwrap()
    }

    #[test]
    fn a_lookaheads_alternatives_are_its_starts() {
        let s = granite_starts();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1], Start::Lit("<|".into()));
        assert!(begins("a", &s) && begins("<|x", &s));
        assert!(!begins("<r", &s) && !begins(" a", &s) && !begins("", &s));
    }

    #[test]
    fn what_cannot_begin_so_is_dropped_and_free_text_begins_with_an_allowed_character() {
        let text = Node::TextWithout {
            excludes: vec!["</response>".into(), "<|end_of_text|>".into()],
            not_start: None,
            not_blank: false,
            not_json: false,
        };
        let node = Node::seq(vec![
            Node::Regex(ws()),
            Node::alt(vec![
                Node::seq(vec![text.clone(), Node::Lit("<|end_of_text|>".into())]),
                Node::Lit("</response>".into()),
                Node::Lit("<|end_of_text|>".into()),
            ]),
        ]);
        let mut r = Restricted::new(&[]);
        let out = r.node(&node, &granite_starts());
        let g = crate::ir::Grammar {
            start: out,
            rules: Vec::new(),
            approximations: Vec::new(),
        };
        assert!(g.accepts("Hi<|end_of_text|>"));
        assert!(g.accepts("<|end_of_text|>"));
        assert!(!g.accepts("</response>"));
        assert!(!g.accepts(" Hi<|end_of_text|>"));
        assert!(!g.accepts(""));
        // Text that begins with `<|` and is not a delimiter is left out.
        assert!(!g.accepts("<|x<|end_of_text|>"));
    }
}
