//! GBNF (llama.cpp) and XGrammar's EBNF: the same BNF with `root ::=`, quoted literals,
//! character classes and `* + ? {m,n}`. Neither has JSON-schema macros nor negation: JSON
//! values come from the schema converter, and "text without these strings" from the
//! exclusion automaton, one rule per state. GBNF names take letters, digits and `-`; EBNF's
//! take `_` as well, and keep the names the other outputs use.

use std::fmt::Write;

use crate::exclude::automaton;
use crate::ir::{Grammar, Node};
use crate::re::Re;

/// Which BNF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavour {
    /// llama.cpp.
    Gbnf,
    /// XGrammar.
    Ebnf,
}

/// An exclusion set: the excluded strings and the character the text must not begin with.
type TextKey = (Vec<String>, Option<char>);

struct Writer {
    flavour: Flavour,
    /// Rules made while writing (text exclusions), written after the grammar's own.
    extra: Vec<(String, String)>,
    /// Exclusion sets already written, with their start rule.
    texts: Vec<(TextKey, String)>,
}

pub(crate) fn emit(g: &Grammar, flavour: Flavour) -> String {
    let (start, rules) = super::lower_json(g, &|_, _| false);
    let rules = super::reachable(&start, rules);
    let mut w = Writer {
        flavour,
        extra: Vec::new(),
        texts: Vec::new(),
    };
    let mut out = String::new();
    let root = w.expr(&start, 0);
    let _ = writeln!(out, "root ::= {root}");
    for (name, node) in &rules {
        let body = w.expr(node, 0);
        let _ = writeln!(out, "{} ::= {body}", w.name(name));
    }
    for (name, body) in &w.extra {
        let _ = writeln!(out, "{name} ::= {body}");
    }
    if flavour == Flavour::Gbnf {
        out = raw_astral(&out);
    }
    out
}

/// `\UXXXXXXXX` escapes written as the character itself: llguidance's GBNF reader turns them
/// into a pattern its regex engine refuses (leading zeros dropped), and llama.cpp takes the
/// character as well.
fn raw_astral(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(hex) = after.strip_prefix('U')
            && let Some(digits) = hex.get(..8)
            && let Ok(cp) = u32::from_str_radix(digits, 16)
            && let Some(c) = char::from_u32(cp)
        {
            out.push(c);
            rest = &hex[8..];
            continue;
        }
        let mut chars = after.chars();
        out.push('\\');
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out.push_str(rest);
    out
}

/// A sub-grammar rooted at `node` (for the structural tag's `grammar` format).
pub(crate) fn emit_node(g: &Grammar, node: &Node) -> String {
    let sub = Grammar {
        start: node.clone(),
        rules: g.rules.clone(),
        approximations: Vec::new(),
    };
    emit(&sub, Flavour::Ebnf)
}

impl Writer {
    fn name(&self, name: &str) -> String {
        match self.flavour {
            Flavour::Gbnf => name.replace('_', "-"),
            Flavour::Ebnf => name.to_string(),
        }
    }

    /// `prec`: 0 alternation context, 1 sequence item, 2 repetition operand.
    fn expr(&mut self, node: &Node, prec: u8) -> String {
        match node {
            Node::Lit(s) => quote(s),
            Node::TextWithout {
                excludes,
                not_start,
                not_json,
                ..
            } => self.text(excludes, *not_start, *not_json),
            Node::StringWithout {
                quote,
                escapes,
                unicode,
                excludes,
            } => self.string(*quote, escapes, *unicode, excludes),
            Node::Regex(re) => self.re(re, prec),
            Node::Json { .. } => "\"\"".into(),
            Node::Seq(items) => {
                if items.is_empty() {
                    return "\"\"".into();
                }
                let parts: Vec<String> = items.iter().map(|i| self.expr(i, 1)).collect();
                wrap(parts.join(" "), items.len() > 1 && prec >= 2)
            }
            Node::Alt(items) => {
                if items.is_empty() {
                    return nothing();
                }
                let parts: Vec<String> = items.iter().map(|i| self.expr(i, 0)).collect();
                wrap(parts.join(" | "), items.len() > 1 && prec >= 1)
            }
            Node::Repeat { node, min, max } => {
                let inner = self.expr(node, 2);
                format!("{inner}{}", quantifier(*min, *max))
            }
            Node::Ref(name) => self.name(name),
        }
    }

    fn re(&mut self, re: &Re, prec: u8) -> String {
        match re {
            Re::Empty | Re::Look { .. } | Re::Assert(_) => "\"\"".into(),
            Re::Lit(s) => quote(s),
            Re::Class { ranges, negated } => class(ranges, *negated),
            Re::Any => "[\\x00-\\U0010FFFF]".into(),
            Re::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.re(i, 1)).collect();
                wrap(parts.join(" "), items.len() > 1 && prec >= 2)
            }
            Re::Alt(items) => {
                if items.is_empty() {
                    return nothing();
                }
                let parts: Vec<String> = items.iter().map(|i| self.re(i, 0)).collect();
                wrap(parts.join(" | "), items.len() > 1 && prec >= 1)
            }
            Re::Repeat { re, min, max } => {
                let inner = self.re(re, 2);
                format!("{inner}{}", quantifier(*min, *max))
            }
            Re::Group { re, .. } => self.re(re, prec),
        }
    }

    /// The rules of a quoted string without `excludes` in its raw text: the exclusion
    /// automaton run in step with the string's own (plain character, after a backslash, `k`
    /// hex digits still due), one rule per pair reached.
    fn string(&mut self, quote: char, escapes: &str, unicode: bool, excludes: &[String]) -> String {
        let key = (
            excludes
                .iter()
                .cloned()
                .chain([format!("\u{0}{quote}{escapes}{unicode}")])
                .collect::<Vec<_>>(),
            None,
        );
        if let Some((_, name)) = self.texts.iter().find(|(k, _)| *k == key) {
            return name.clone();
        }
        let n = self.texts.len() + 1;
        let base = self.name(&format!("string_{n}"));
        let a = automaton(excludes, None);
        // Inner states: 0 plain, 1 after a backslash, 2..=5 hex digits due (5: four).
        let name_of = |s: usize, j: usize| format!("{base}{}", self.name(&format!("_s{s}_{j}")));
        let step = |s: usize, c: char| -> Option<usize> {
            a.states[s]
                .iter()
                .find(|t| t.chars.contains(&c) != t.negated)
                .map(|t| t.target)
        };
        let special = [quote, '\\'];
        let mut rules: Vec<(String, String)> = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        let mut todo = Vec::new();
        let body = |todo: &mut Vec<(usize, usize)>, s: usize, j: usize| -> String {
            let mut alts: Vec<String> = Vec::new();
            let mut go = |chars: String, t: usize, tj: usize, alts: &mut Vec<String>| {
                todo.push((t, tj));
                alts.push(format!("{chars} {}", name_of(t, tj)));
            };
            match j {
                0 => {
                    if step(s, quote).is_some() {
                        alts.push(quote_lit(quote));
                    }
                    if let Some(t) = step(s, '\\') {
                        go(quote_lit('\\'), t, 1, &mut alts);
                    }
                    for t in &a.states[s] {
                        let mut outside: Vec<(u32, u32)> = vec![(0, 0x1F)];
                        outside.extend(special.iter().map(|c| (*c as u32, *c as u32)));
                        let cls = if t.negated {
                            outside.extend(t.chars.iter().map(|c| (*c as u32, *c as u32)));
                            class(&crate::re::normalize(outside), true)
                        } else {
                            let kept: Vec<(u32, u32)> = t
                                .chars
                                .iter()
                                .filter(|c| !special.contains(c) && (**c as u32) >= 0x20)
                                .map(|c| (*c as u32, *c as u32))
                                .collect();
                            if kept.is_empty() {
                                continue;
                            }
                            class(&crate::re::normalize(kept), false)
                        };
                        go(cls, t.target, 0, &mut alts);
                    }
                }
                1 => {
                    for c in escapes.chars() {
                        if let Some(t) = step(s, c) {
                            go(quote_lit(c), t, 0, &mut alts);
                        }
                    }
                    if unicode && let Some(t) = step(s, 'u') {
                        go(quote_lit('u'), t, 5, &mut alts);
                    }
                }
                due => {
                    for c in "0123456789abcdefABCDEF".chars() {
                        if let Some(t) = step(s, c) {
                            go(
                                quote_lit(c),
                                t,
                                if due == 2 { 0 } else { due - 1 },
                                &mut alts,
                            );
                        }
                    }
                }
            }
            if alts.is_empty() {
                nothing()
            } else {
                alts.join(" | ")
            }
        };
        let Some(first) = step(a.start, quote) else {
            return nothing();
        };
        todo.push((first, 0));
        while let Some((s, j)) = todo.pop() {
            if !seen.insert((s, j)) {
                continue;
            }
            let b = body(&mut todo, s, j);
            rules.push((name_of(s, j), b));
        }
        rules.sort_by(|x, y| x.0.cmp(&y.0));
        let start = format!("{} {}", quote_lit(quote), name_of(first, 0));
        self.extra.push((base.clone(), start));
        self.extra.extend(rules);
        self.texts.push((key, base.clone()));
        base
    }

    /// The rules of "text without `excludes`": one per automaton state.
    fn text(&mut self, excludes: &[String], not_start: Option<char>, not_json: bool) -> String {
        // Not-JSON text is keyed apart by a marker no excluded string holds.
        let mut keyed = excludes.to_vec();
        if not_json {
            keyed.push("\u{0}not-json".into());
        }
        let key = (keyed, not_start);
        if let Some((_, name)) = self.texts.iter().find(|(k, _)| *k == key) {
            return name.clone();
        }
        let n = self.texts.len() + 1;
        let base = self.name(&format!("text_{n}"));
        let a = if not_json {
            crate::exclude::not_json(excludes)
        } else {
            automaton(excludes, not_start)
        };
        let state = |s: usize| {
            if s == 0 {
                base.clone()
            } else {
                format!("{base}{}", self.name(&format!("_s{s}")))
            }
        };
        let mut rules = Vec::new();
        for (s, transitions) in a.states.iter().enumerate() {
            let alts: Vec<String> = transitions
                .iter()
                .map(|t| {
                    let ranges: Vec<(u32, u32)> =
                        t.chars.iter().map(|c| (*c as u32, *c as u32)).collect();
                    let cls = crate::re::normalize(ranges);
                    let chars = if !t.negated && t.chars.len() == 1 {
                        quote(&t.chars[0].to_string())
                    } else {
                        class(&cls, t.negated)
                    };
                    format!("{chars} {}", state(t.target))
                })
                .collect();
            let body = match (alts.is_empty(), a.accepting[s]) {
                (true, true) => "\"\"".to_string(),
                (true, false) => nothing(),
                (false, true) => format!("( {} )?", alts.join(" | ")),
                (false, false) => alts.join(" | "),
            };
            rules.push((state(s), body));
        }
        let start = state(a.start);
        self.extra.extend(rules);
        self.texts.push((key, start.clone()));
        start
    }
}

fn wrap(s: String, paren: bool) -> String {
    if paren { format!("( {s} )") } else { s }
}

/// A class that matches nothing (an empty alternation).
fn nothing() -> String {
    "[^\\x00-\\U0010FFFF]".into()
}

fn quantifier(min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, None) => "*".into(),
        (1, None) => "+".into(),
        (0, Some(1)) => "?".into(),
        (m, None) => format!("{{{m},}}"),
        (m, Some(n)) if m == n => format!("{{{m}}}"),
        (m, Some(n)) => format!("{{{m},{n}}}"),
    }
}

/// One character as a quoted literal.
fn quote_lit(c: char) -> String {
    quote(&c.to_string())
}

/// A quoted literal with BNF escapes.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F || (0x80..0xA0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn class_point(out: &mut String, cp: u32) {
    match char::from_u32(cp) {
        // llguidance's GBNF reader takes no `\-`: a hyphen is written by its code (`class`
        // writes it first instead, since XGrammar reads `\x2D0` as one code).
        Some('-') => out.push_str("\\x2D"),
        Some(c) if "\\]^[".contains(c) => {
            out.push('\\');
            out.push(c);
        }
        Some('\n') => out.push_str("\\n"),
        Some('\r') => out.push_str("\\r"),
        Some('\t') => out.push_str("\\t"),
        Some(c)
            if cp >= 0x20 && cp != 0x7F && !(0x80..0xA0).contains(&cp) && !c.is_whitespace() =>
        {
            out.push(c)
        }
        _ if cp <= 0xFF => {
            let _ = write!(out, "\\x{cp:02X}");
        }
        _ if cp <= 0xFFFF => {
            let _ = write!(out, "\\u{cp:04X}");
        }
        _ => {
            let _ = write!(out, "\\U{cp:08X}");
        }
    }
}

fn class(ranges: &[(u32, u32)], negated: bool) -> String {
    if ranges.is_empty() {
        return if negated {
            "[\\x00-\\U0010FFFF]".into()
        } else {
            nothing()
        };
    }
    let mut out = String::from("[");
    if negated {
        out.push('^');
    }
    // A hyphen stands first, bare: both readers take it there, and an escape would run on
    // into a hex digit after it in XGrammar's (`\x2D0`).
    let hyphen = '-' as u32;
    let mut rest: Vec<(u32, u32)> = Vec::new();
    for &(a, b) in ranges {
        if (a..=b).contains(&hyphen) {
            out.push('-');
            if a < hyphen {
                rest.push((a, hyphen - 1));
            }
            if b > hyphen {
                rest.push((hyphen + 1, b));
            }
        } else {
            rest.push((a, b));
        }
    }
    for &(a, b) in &rest {
        class_point(&mut out, a);
        if b > a {
            out.push('-');
            class_point(&mut out, b);
        }
    }
    out.push(']');
    out
}
