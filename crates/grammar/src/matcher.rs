//! Whether a text is in a grammar's language, decided on the grammar itself (no serving
//! engine needed): every node maps a start position to the set of positions where a match of
//! it can end, memoised per rule and position. JSON values are matched through the schema
//! converter's rules, so the answer is the GBNF and EBNF outputs' answer too. Meant for
//! samples and tests (texts of a few kilobytes), not for decoding.

use std::collections::{BTreeSet, HashMap};

use crate::ir::{Grammar, Node};
use crate::re::Re;

impl Grammar {
    /// Whether the grammar accepts `text` as a whole output.
    pub fn accepts(&self, text: &str) -> bool {
        let (start, rules) = crate::emit::lower_json(self, &|_, _| false);
        let mut m = Matcher {
            text,
            rules: rules.into_iter().collect(),
            memo: HashMap::new(),
            active: Vec::new(),
        };
        m.node(&start, 0).contains(&text.len())
    }
}

struct Matcher<'a> {
    text: &'a str,
    rules: HashMap<String, Node>,
    memo: HashMap<(String, usize), BTreeSet<usize>>,
    /// Rules being matched at a position (left recursion yields nothing there).
    active: Vec<(String, usize)>,
}

type Ends = BTreeSet<usize>;

impl Matcher<'_> {
    fn node(&mut self, node: &Node, at: usize) -> Ends {
        match node {
            Node::Lit(s) => self.lit(s, at),
            Node::TextWithout {
                excludes,
                not_start,
                not_json,
                ..
            } => {
                let rest = &self.text[at..];
                if let Some(c) = not_start
                    && rest.starts_with(*c)
                {
                    return [at].into();
                }
                // The text may end anywhere before the first excluded string is complete.
                let limit = excludes
                    .iter()
                    .filter(|e| !e.is_empty())
                    .filter_map(|e| rest.find(e.as_str()).map(|i| i + e.len() - 1))
                    .min()
                    .unwrap_or(rest.len());
                let mut ends: Ends = BTreeSet::new();
                let keep =
                    |i: usize| !*not_json || !crate::json_text::reads_as_other_json(&rest[..i]);
                for (i, _) in rest.char_indices() {
                    if i > limit {
                        break;
                    }
                    if keep(i) {
                        ends.insert(at + i);
                    }
                }
                if rest.len() <= limit && keep(rest.len()) {
                    ends.insert(at + rest.len());
                }
                ends
            }
            Node::Regex(re) => self.re(re, at),
            Node::StringWithout {
                quote,
                escapes,
                unicode,
                excludes,
            } => {
                let re = crate::ir::string_re(*quote, escapes, *unicode);
                let ends = self.re(&re, at);
                ends.into_iter()
                    .filter(|&e| {
                        let s = &self.text[at..e];
                        !excludes
                            .iter()
                            .any(|x| !x.is_empty() && s.contains(x.as_str()))
                    })
                    .collect()
            }
            // Lowered away before matching.
            Node::Json { .. } => Ends::new(),
            Node::Seq(items) => {
                let mut current: Ends = [at].into();
                for item in items {
                    let mut next = Ends::new();
                    for p in current {
                        next.extend(self.node(item, p));
                    }
                    if next.is_empty() {
                        return next;
                    }
                    current = next;
                }
                current
            }
            Node::Alt(items) => {
                let mut out = Ends::new();
                for i in items {
                    out.extend(self.node(i, at));
                }
                out
            }
            Node::Repeat { node, min, max } => {
                let inner = (**node).clone();
                self.repeat(at, *min, *max, &mut |m, p| m.node(&inner, p))
            }
            Node::Ref(name) => {
                let key = (name.clone(), at);
                if let Some(e) = self.memo.get(&key) {
                    return e.clone();
                }
                if self.active.contains(&key) {
                    return Ends::new();
                }
                let Some(rule) = self.rules.get(name).cloned() else {
                    return Ends::new();
                };
                self.active.push(key.clone());
                let ends = self.node(&rule, at);
                self.active.pop();
                self.memo.insert(key, ends.clone());
                ends
            }
        }
    }

    fn lit(&self, s: &str, at: usize) -> Ends {
        if self.text[at..].starts_with(s) {
            [at + s.len()].into()
        } else {
            Ends::new()
        }
    }

    fn repeat(
        &mut self,
        at: usize,
        min: u32,
        max: Option<u32>,
        one: &mut dyn FnMut(&mut Self, usize) -> Ends,
    ) -> Ends {
        let mut out = Ends::new();
        let mut frontier: Ends = [at].into();
        let mut seen: Ends = Ends::new();
        let mut count = 0u32;
        loop {
            if count >= min {
                out.extend(frontier.iter().copied());
            }
            if max.is_some_and(|m| count >= m) || frontier.is_empty() {
                break;
            }
            let mut next = Ends::new();
            for p in &frontier {
                next.extend(one(self, *p));
            }
            count += 1;
            // Past the minimum, positions already reached add nothing new.
            if count > min {
                next.retain(|p| !seen.contains(p));
                seen.extend(next.iter().copied());
            }
            frontier = next;
        }
        out
    }

    fn re(&mut self, re: &Re, at: usize) -> Ends {
        match re {
            Re::Empty | Re::Look { .. } | Re::Assert(_) => [at].into(),
            Re::Lit(s) => self.lit(s, at),
            Re::Class { ranges, negated } => match self.text[at..].chars().next() {
                Some(c) => {
                    let cp = c as u32;
                    let inside = ranges.iter().any(|&(a, b)| a <= cp && cp <= b);
                    if inside != *negated {
                        [at + c.len_utf8()].into()
                    } else {
                        Ends::new()
                    }
                }
                None => Ends::new(),
            },
            Re::Any => match self.text[at..].chars().next() {
                Some(c) => [at + c.len_utf8()].into(),
                None => Ends::new(),
            },
            Re::Seq(items) => {
                let mut current: Ends = [at].into();
                for item in items {
                    let mut next = Ends::new();
                    for p in current {
                        next.extend(self.re(item, p));
                    }
                    if next.is_empty() {
                        return next;
                    }
                    current = next;
                }
                current
            }
            Re::Alt(items) => {
                let mut out = Ends::new();
                for i in items {
                    out.extend(self.re(i, at));
                }
                out
            }
            Re::Repeat { re, min, max } => {
                let inner = (**re).clone();
                self.repeat(at, *min, *max, &mut |m, p| m.re(&inner, p))
            }
            Re::Group { re, .. } => self.re(re, at),
        }
    }
}
