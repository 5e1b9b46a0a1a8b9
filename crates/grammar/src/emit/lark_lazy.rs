//! Free text followed by its close, as one lazy lexeme: what llguidance needs to read text up
//! to a delimiter.
//!
//! llguidance's lexer is greedy and never backtracks: a terminal for "text without `</think>`"
//! followed by the literal `</think>` reads `a</think>` as text up to `a</think` (which does not
//! contain the close yet) and then finds no `</think>` to match. The idiomatic form is a lazy
//! lexeme that takes the text and the close together and ends at the first close:
//! `lazy_1[lazy]: LAZY_1` with `LAZY_1: TEXT_1? /<\/think>/`, where `TEXT_1` is the text's
//! own terminal (`/(?s:.+)/ & ~/(?s:.*)(?:<tool_call>)(?s:.*)/`).
//!
//! This pass finds each text in a sequence, works out what may follow it (through rules,
//! optional and repeated items and alternations, a few alternatives at most), and where every
//! continuation starts with a literal or a pattern that cannot match the empty text, rewrites
//! the text and its continuation into an alternation of "lazy text ending in that close, then
//! the rest". A close that is one of the model's special tokens needs no such care (no text
//! spells it) and is left as it is, as is a text with nothing after it.

use super::lark::{mentions_special, split_special};
use crate::ir::Node;
use crate::re::Re;
use std::collections::BTreeSet;

/// The most continuations one text is split into before the pass leaves it as it is.
const MAX_CONTINUATIONS: usize = 16;

/// How deep rules are followed to find what comes next.
const MAX_DEPTH: usize = 8;

/// A text fused with the close that ends it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fused {
    /// The strings the text must not hold.
    pub excludes: Vec<String>,
    /// A character the text must not begin with.
    pub not_start: Option<char>,
    /// The text holds something besides whitespace.
    pub not_blank: bool,
    /// The text does not read as JSON other than a string.
    pub not_json: bool,
    /// The close.
    pub close: Re,
}

pub(crate) struct Fuser<'a> {
    rules: &'a [(String, Node)],
    special: &'a BTreeSet<String>,
    /// The fused lexemes made, each referred to as `Node::Ref(lazy_name(i))`.
    pub fused: Vec<Fused>,
}

/// The rule name of fused lexeme `i`.
pub(crate) fn lazy_name(i: usize) -> String {
    format!("lazy_{}", i + 1)
}

impl<'a> Fuser<'a> {
    pub(crate) fn new(rules: &'a [(String, Node)], special: &'a BTreeSet<String>) -> Self {
        Fuser {
            rules,
            special,
            fused: Vec::new(),
        }
    }

    /// `node` with every text that has a known continuation fused with it.
    pub(crate) fn node(&mut self, node: &Node) -> Node {
        match node {
            Node::Seq(items) => self.seq(items),
            Node::Alt(items) => Node::Alt(items.iter().map(|n| self.node(n)).collect()),
            Node::Repeat { node, min, max } => Node::Repeat {
                node: Box::new(self.node(node)),
                min: *min,
                max: *max,
            },
            other => other.clone(),
        }
    }

    fn seq(&mut self, items: &[Node]) -> Node {
        for (i, item) in items.iter().enumerate() {
            let Node::TextWithout {
                excludes,
                not_start,
                not_blank,
                not_json,
            } = item
            else {
                continue;
            };
            let Some(conts) = self.continuations(&items[i + 1..], 0) else {
                continue;
            };
            if conts.iter().all(|(close, _)| close.is_none()) {
                continue;
            }
            let mut alts = Vec::new();
            for (close, rest) in conts {
                // A special token after the text: the text's own lexeme ends where the token
                // begins (no text spells a token).
                let Some(close) = close else {
                    let rest = self.node(&Node::seq(rest));
                    alts.push(Node::seq(vec![item.clone(), rest]));
                    continue;
                };
                let fused = Fused {
                    excludes: excludes.clone(),
                    not_start: *not_start,
                    not_blank: *not_blank,
                    not_json: *not_json,
                    close,
                };
                let k = match self.fused.iter().position(|f| *f == fused) {
                    Some(k) => k,
                    None => {
                        self.fused.push(fused);
                        self.fused.len() - 1
                    }
                };
                let rest = self.node(&Node::seq(rest));
                alts.push(Node::seq(vec![Node::Ref(lazy_name(k)), rest]));
            }
            let head: Vec<Node> = items[..i].iter().map(|n| self.node(n)).collect();
            let head = self.merge_lexical(head);
            return Node::seq(head.into_iter().chain([Node::alt(alts)]).collect());
        }
        let items = items.iter().map(|n| self.node(n)).collect();
        Node::Seq(self.merge_lexical(items))
    }

    /// Adjacent literals and patterns as one pattern: the lexer never backtracks between two
    /// lexemes, so `/[ \n]+/? "\n```"` written as two would refuse ` \n```` (the
    /// whitespace lexeme takes the line break the literal needs), while one lexeme reads it.
    fn merge_lexical(&self, items: Vec<Node>) -> Vec<Node> {
        let mut out: Vec<Node> = Vec::new();
        // The current run: each item with its pattern.
        let mut run: Vec<(Node, Re)> = Vec::new();
        // A literal holding special tokens is its text pieces and its tokens, so that its text
        // can join the patterns beside it.
        let items: Vec<Node> = items
            .into_iter()
            .flat_map(|item| match item {
                Node::Lit(s) if self.is_special(&s) => split_special(&s, self.special)
                    .into_iter()
                    .map(|(piece, _)| Node::Lit(piece.to_string()))
                    .collect(),
                other => vec![other],
            })
            .collect();
        let flush = |run: &mut Vec<(Node, Re)>, out: &mut Vec<Node>| match run.len() {
            0 => {}
            1 => out.extend(run.drain(..).map(|(n, _)| n)),
            _ => out.push(Node::Regex(Re::Seq(
                run.drain(..).map(|(_, r)| r).collect(),
            ))),
        };
        for item in items {
            match self.lexical(&item) {
                Some(re) => {
                    run.push((item, re));
                    // A run that could match nothing is no lexeme: what came before goes alone.
                    if run.len() > 1
                        && Re::Seq(run.iter().map(|p| p.1.clone()).collect()).nullable()
                    {
                        let last = run.pop();
                        flush(&mut run, &mut out);
                        run.extend(last);
                    }
                }
                None => {
                    flush(&mut run, &mut out);
                    out.push(item);
                }
            }
        }
        flush(&mut run, &mut out);
        out
    }

    /// An item as a pattern, when it is one the lexer reads (no special token in it).
    fn lexical(&self, node: &Node) -> Option<Re> {
        match node {
            Node::Lit(s) if !s.is_empty() && !self.is_special(s) => Some(Re::Lit(s.clone())),
            Node::Regex(re) if !self.mentions_special(re) => Some(re.clone()),
            Node::Repeat { node, min, max } => {
                let inner = self.lexical(node)?;
                Some(Re::Repeat {
                    re: Box::new(inner),
                    min: *min,
                    max: *max,
                })
            }
            _ => None,
        }
    }

    /// What may follow, each as (the close it starts with, the rest after it), or (`None`, the
    /// items) for a continuation that starts with a special token; `None` when a continuation
    /// does not start with a close the pass can fuse.
    fn continuations(&self, items: &[Node], depth: usize) -> Option<Vec<(Option<Re>, Vec<Node>)>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let (first, rest) = items.split_first()?;
        let out = match first {
            Node::Lit(s) if !s.is_empty() && !self.is_special(s) => {
                vec![(Some(Re::Lit(s.clone())), rest.to_vec())]
            }
            Node::Regex(re) if !re.nullable() && !self.mentions_special(re) => {
                vec![(Some(re.clone()), rest.to_vec())]
            }
            Node::Lit(s) if self.starts_special(s) => vec![(None, items.to_vec())],
            Node::Seq(inner) => {
                let joined: Vec<Node> = inner.iter().chain(rest).cloned().collect();
                self.continuations(&joined, depth + 1)?
            }
            Node::Ref(name) => {
                let (_, body) = self.rules.iter().find(|(n, _)| n == name)?;
                let joined: Vec<Node> = std::iter::once(body.clone())
                    .chain(rest.iter().cloned())
                    .collect();
                self.continuations(&joined, depth + 1)?
            }
            Node::Alt(alts) => {
                let mut out = Vec::new();
                for a in alts {
                    let joined: Vec<Node> = std::iter::once(a.clone())
                        .chain(rest.iter().cloned())
                        .collect();
                    out.extend(self.continuations(&joined, depth + 1)?);
                }
                out
            }
            Node::Repeat { node, min, max } => {
                let fewer = Node::Repeat {
                    node: node.clone(),
                    min: min.saturating_sub(1),
                    max: max.map(|m| m.saturating_sub(1)),
                };
                let once: Vec<Node> = [(**node).clone(), fewer]
                    .into_iter()
                    .chain(rest.iter().cloned())
                    .collect();
                let mut out = if *max == Some(0) {
                    Vec::new()
                } else {
                    self.continuations(&once, depth + 1)?
                };
                if *min == 0 {
                    out.extend(self.continuations(rest, depth + 1)?);
                }
                out
            }
            _ => return None,
        };
        (out.len() <= MAX_CONTINUATIONS && !out.is_empty()).then_some(out)
    }

    fn is_special(&self, s: &str) -> bool {
        self.special
            .iter()
            .any(|t| !t.is_empty() && s.contains(t.as_str()))
    }

    fn starts_special(&self, s: &str) -> bool {
        self.special
            .iter()
            .any(|t| !t.is_empty() && s.starts_with(t.as_str()))
    }

    fn mentions_special(&self, re: &Re) -> bool {
        mentions_special(re, self.special)
    }
}
