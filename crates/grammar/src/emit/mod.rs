//! The grammar written in each engine's dialect. Every emitter is deterministic (rules in the
//! order they were made, schemas with their keys in the given order), so outputs can be
//! committed and compared.

mod bnf;
mod lark;
mod lark_lazy;
mod structural;

pub use lark::LarkOptions;

use crate::ir::{Dialect, Grammar, Node};
use crate::schema::Converter;

/// The grammar with every JSON node that `keep` does not accept replaced by the schema
/// converter's rules (dialects without a JSON-schema macro, and spellings `%json` lacks).
pub(crate) fn lower_json(
    g: &Grammar,
    keep: &dyn Fn(&Dialect, &[String]) -> bool,
) -> (Node, Vec<(String, Node)>) {
    let mut rules = g.rules.clone();
    let mut extra: Vec<(String, Node)> = Vec::new();
    let start = lower_node(&g.start, keep, &mut extra);
    let mut lowered = Vec::new();
    for (name, node) in rules.drain(..) {
        lowered.push((name, lower_node(&node, keep, &mut extra)));
    }
    // Converter rules (shared JSON pieces, $defs) may themselves hold nothing to lower.
    lowered.extend(extra);
    (start, lowered)
}

/// The rules `start` reaches, in their order (a sub-grammar names only what it uses).
pub(crate) fn reachable(start: &Node, rules: Vec<(String, Node)>) -> Vec<(String, Node)> {
    fn refs(node: &Node, out: &mut Vec<String>) {
        match node {
            Node::Ref(n) => out.push(n.clone()),
            Node::Seq(items) | Node::Alt(items) => items.iter().for_each(|i| refs(i, out)),
            Node::Repeat { node, .. } => refs(node, out),
            _ => {}
        }
    }
    let index: std::collections::HashMap<&str, usize> = rules
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.as_str(), i))
        .collect();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut todo = Vec::new();
    refs(start, &mut todo);
    while let Some(name) = todo.pop() {
        if seen.insert(name.clone())
            && let Some(&i) = index.get(name.as_str())
        {
            refs(&rules[i].1, &mut todo);
        }
    }
    drop(index);
    rules
        .into_iter()
        .filter(|(n, _)| seen.contains(n))
        .collect()
}

fn lower_node(
    node: &Node,
    keep: &dyn Fn(&Dialect, &[String]) -> bool,
    extra: &mut Vec<(String, Node)>,
) -> Node {
    let mut go = |n: &Node| lower_node(n, keep, extra);
    match node {
        Node::Json {
            schema,
            dialect,
            excludes,
        } if !keep(dialect, excludes) => {
            let mut conv = Converter::new(extra, schema).excluding(excludes);
            conv.value(schema, dialect)
        }
        Node::Seq(items) => Node::Seq(items.iter().map(&mut go).collect()),
        Node::Alt(items) => Node::Alt(items.iter().map(&mut go).collect()),
        Node::Repeat { node, min, max } => Node::Repeat {
            node: Box::new(go(node)),
            min: *min,
            max: *max,
        },
        other => other.clone(),
    }
}

impl Grammar {
    /// llguidance's Lark dialect (see [`LarkOptions`] for special tokens).
    pub fn to_lark(&self, options: &LarkOptions) -> String {
        lark::emit(self, options)
    }

    /// llama.cpp's GBNF.
    pub fn to_gbnf(&self) -> String {
        bnf::emit(self, bnf::Flavour::Gbnf)
    }

    /// XGrammar's EBNF.
    pub fn to_ebnf(&self) -> String {
        bnf::emit(self, bnf::Flavour::Ebnf)
    }

    /// XGrammar's structural tag (`{"type": "structural_tag", "format": ...}`), pretty-printed.
    pub fn to_structural_tag(&self) -> String {
        structural::emit(self)
    }
}
