//! llguidance's Lark dialect: `start:` and lower-case rules; regular expressions as `/.../` in
//! Rust `regex` syntax; JSON values as `%json {schema}`; "text without D" as a terminal made
//! with llguidance's lexeme operators, `/(?s:.+)/ & ~/(?s:.*)D(?s:.*)/` (made optional where
//! used: a lexeme never matches the empty text). With special tokens
//! given, a literal that is (or holds) one is written as that token, so that it matches the
//! token rather than its spelling, as when the check runs on the model's tokenizer: `<|name|>`
//! when it is spelled that way, otherwise by its id, `<[123]>` (llguidance reads only those
//! two forms as tokens; `[THINK]` or `<think>` written as a string would be text).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::ir::{Dialect, Grammar, Node};
use crate::re::Re;

/// How to write the Lark output.
#[derive(Clone, Debug, Default)]
pub struct LarkOptions {
    /// The special tokens of the model's tokenizer, each spelling with its id: a delimiter
    /// that is one is written in llguidance's token syntax (`<|...|>`, or `<[id]>` for any
    /// other spelling) instead of as text.
    pub special_tokens: BTreeMap<String, u32>,
}

impl LarkOptions {
    /// The spellings of the special tokens.
    pub(crate) fn spellings(&self) -> BTreeSet<String> {
        self.special_tokens.keys().cloned().collect()
    }

    /// `tok` (a special token's spelling) in llguidance's token syntax.
    fn token(&self, tok: &str) -> String {
        let shaped = tok.len() > 4
            && tok.starts_with("<|")
            && tok.ends_with("|>")
            && !tok[2..tok.len() - 2].contains(['|', '<', '>', ' ', '\n']);
        match self.special_tokens.get(tok) {
            Some(id) if !shaped => format!("<[{id}]>"),
            _ => tok.to_string(),
        }
    }
}

struct Writer<'a> {
    options: &'a LarkOptions,
    /// The special tokens' spellings.
    specials: BTreeSet<String>,
    /// Terminals made while writing (text exclusions): name and definition.
    terminals: Vec<(String, String)>,
}

pub(crate) fn emit(g: &Grammar, options: &LarkOptions) -> String {
    let specials = options.spellings();
    // `%json` cannot keep strings from holding the close: such values are lowered to rules.
    let (start, rules) = super::lower_json(g, &|d, ex| *d == Dialect::Json && ex.is_empty());
    let rules = super::reachable(&start, rules);
    // Text and the close after it become one lazy lexeme (see `lark_lazy`).
    let mut fuser = super::lark_lazy::Fuser::new(&rules, &specials);
    let start = fuser.node(&start);
    let fused_rules: Vec<(String, Node)> = rules
        .iter()
        .map(|(n, b)| (n.clone(), fuser.node(b)))
        .collect();
    let fused = std::mem::take(&mut fuser.fused);
    let rules = super::reachable(&start, fused_rules);
    let mut w = Writer {
        options,
        specials,
        terminals: Vec::new(),
    };
    let mut out = String::new();
    let root = w.expr(&start, 0);
    let _ = writeln!(out, "start: {root}");
    for (name, node) in &rules {
        let body = w.expr(node, 0);
        let _ = writeln!(out, "{name}: {body}");
    }
    for (k, f) in fused.iter().enumerate() {
        let name = super::lark_lazy::lazy_name(k);
        let text = w.text(&f.excludes, f.not_start, f.not_blank, f.not_json);
        let close = w.expr(&Node::Regex(f.close.clone()), 2);
        let _ = writeln!(out, "{name}[lazy]: {}", name.to_uppercase());
        w.terminals
            .push((name.to_uppercase(), format!("{text} {close}")));
    }
    for (name, def) in &w.terminals {
        let _ = writeln!(out, "{name}: {def}");
    }
    out
}

impl Writer<'_> {
    fn expr(&mut self, node: &Node, prec: u8) -> String {
        match node {
            Node::Lit(s) => self.literal(s, prec),
            Node::TextWithout {
                excludes,
                not_start,
                not_json,
                ..
            } => self.text(excludes, *not_start, false, *not_json),
            Node::StringWithout {
                quote,
                escapes,
                unicode,
                excludes,
            } => self.string(*quote, escapes, *unicode, excludes),
            // llguidance's lexemes must not match the empty text: `x*` is written `(x+)?`.
            Node::Regex(Re::Repeat { re, min: 0, max }) if !re.nullable() => {
                let plus = Node::Regex(Re::Repeat {
                    re: re.clone(),
                    min: 1,
                    max: *max,
                });
                let plus = self.expr(&plus, 2);
                // A repeat written as rule items ends in `+`: Lark reads `x+?` as nothing, so
                // it is parenthesized before it is made optional.
                if !mentions_special(re, &self.specials) {
                    format!("{plus}?")
                } else {
                    format!("({plus})?")
                }
            }
            Node::Regex(re) => {
                if self.specials.is_empty() || !mentions_special(re, &self.specials) {
                    format!("/{}/", re.to_regex())
                } else {
                    self.re_structural(re, prec)
                }
            }
            Node::Json { schema, .. } => format!(
                "%json {}",
                serde_json::to_string(schema).unwrap_or_default()
            ),
            Node::Seq(items) => {
                if items.is_empty() {
                    return "\"\"".into();
                }
                let parts: Vec<String> = items.iter().map(|i| self.expr(i, 1)).collect();
                wrap(parts.join(" "), items.len() > 1 && prec >= 2)
            }
            Node::Alt(items) => {
                if items.is_empty() {
                    return "/[^\\x{0}-\\x{10FFFF}]/".into();
                }
                let parts: Vec<String> = items.iter().map(|i| self.expr(i, 0)).collect();
                wrap(parts.join(" | "), items.len() > 1 && prec >= 1)
            }
            Node::Repeat { node, min, max } => {
                let inner = self.expr(node, 2);
                repeat(&inner, *min, *max)
            }
            Node::Ref(name) => name.clone(),
        }
    }

    /// A literal, with any special tokens in it written as tokens.
    fn literal(&self, s: &str, prec: u8) -> String {
        if s.is_empty() {
            return "\"\"".into();
        }
        let parts: Vec<String> = split_special(s, &self.specials)
            .into_iter()
            .map(|(piece, token)| {
                if token {
                    self.options.token(piece)
                } else {
                    quote(piece)
                }
            })
            .collect();
        wrap(parts.join(" "), parts.len() > 1 && prec >= 2)
    }

    /// A regex written as rule items, so that its literal special tokens can be tokens.
    fn re_structural(&mut self, re: &Re, prec: u8) -> String {
        match re {
            Re::Lit(s) => self.literal(s, prec),
            Re::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.re_structural(i, 1)).collect();
                wrap(parts.join(" "), items.len() > 1 && prec >= 2)
            }
            Re::Alt(items) if !items.is_empty() => {
                let parts: Vec<String> = items.iter().map(|i| self.re_structural(i, 0)).collect();
                wrap(parts.join(" | "), items.len() > 1 && prec >= 1)
            }
            Re::Repeat {
                re: inner,
                min,
                max,
            } if mentions_special(inner, &self.specials) => {
                let inner = self.re_structural(inner, 2);
                repeat(&inner, *min, *max)
            }
            Re::Group { re, .. } => self.re_structural(re, prec),
            // A lexeme must not match the empty text: `x*` is written `(x+)?`.
            Re::Repeat {
                re: inner,
                min: 0,
                max,
            } if !inner.nullable() => {
                let plus = Re::Repeat {
                    re: inner.clone(),
                    min: 1,
                    max: *max,
                };
                format!("(/{}/)?", plus.to_regex())
            }
            other => format!("/{}/", other.to_regex()),
        }
    }

    /// The terminal for a quoted string without `excludes` in its raw text.
    fn string(&mut self, quote: char, escapes: &str, unicode: bool, excludes: &[String]) -> String {
        let mut def = format!(
            "/{}/",
            crate::ir::string_re(quote, escapes, unicode).to_regex()
        );
        exclude(&mut def, excludes);
        self.terminal("STRING", def)
    }

    /// The terminal defined as `def`: the one already written with it, or a new one named
    /// `kind` and a number.
    fn terminal(&mut self, kind: &str, def: String) -> String {
        if let Some((name, _)) = self.terminals.iter().find(|(_, d)| *d == def) {
            return name.clone();
        }
        let name = format!("{kind}_{}", self.terminals.len() + 1);
        self.terminals.push((name.clone(), def));
        name
    }

    /// The terminal for "text without `excludes`".
    fn text(
        &mut self,
        excludes: &[String],
        not_start: Option<char>,
        not_blank: bool,
        not_json: bool,
    ) -> String {
        // A special token's spelling is excluded too: ordinary tokens can spell it, and the
        // parser, which reads text, would cut there.
        // llguidance's lexemes must not match the empty text: the terminal takes at least one
        // character, and the rule makes it optional.
        let mut def = String::from("/(?s:.+)/");
        exclude(&mut def, excludes);
        if let Some(c) = not_start {
            let _ = write!(def, " & ~/{}(?s:.*)/", Re::Lit(c.to_string()).to_regex());
        }
        if not_json {
            for p in crate::json_text::LARK_PATTERNS {
                let _ = write!(def, " & ~/{p}/");
            }
        }
        // Blank text is not this text's: it is required, and not whitespace alone.
        let optional = if not_blank {
            def.push_str(r" & ~/[\t\n\r ]+/");
            ""
        } else {
            "?"
        };
        let name = self.terminal("TEXT", def);
        format!("{name}{optional}")
    }
}

/// Appends to a terminal's definition that its text holds none of `excludes` (empty ones
/// aside).
fn exclude(def: &mut String, excludes: &[String]) {
    let alts: Vec<String> = excludes
        .iter()
        .filter(|e| !e.is_empty())
        .map(|e| Re::Lit(e.clone()).to_regex())
        .collect();
    if !alts.is_empty() {
        let _ = write!(def, " & ~/(?s:.*)(?:{})(?s:.*)/", alts.join("|"));
    }
}

/// `s` cut at the special tokens in it (the longest at each place): its pieces in order, each
/// with whether it is a token.
pub(super) fn split_special<'s>(s: &'s str, tokens: &BTreeSet<String>) -> Vec<(&'s str, bool)> {
    let mut out = Vec::new();
    let mut rest = s;
    'outer: while !rest.is_empty() {
        for (i, _) in rest.char_indices() {
            if let Some(tok) = tokens
                .iter()
                .filter(|t| !t.is_empty() && rest[i..].starts_with(t.as_str()))
                .max_by_key(|t| t.len())
            {
                if i > 0 {
                    out.push((&rest[..i], false));
                }
                out.push((&rest[i..i + tok.len()], true));
                rest = &rest[i + tok.len()..];
                continue 'outer;
            }
        }
        out.push((rest, false));
        break;
    }
    out
}

/// Whether a literal of `re` holds one of the special tokens.
pub(super) fn mentions_special(re: &Re, tokens: &BTreeSet<String>) -> bool {
    match re {
        Re::Lit(s) => tokens
            .iter()
            .any(|t| !t.is_empty() && s.contains(t.as_str())),
        Re::Seq(items) | Re::Alt(items) => items.iter().any(|r| mentions_special(r, tokens)),
        Re::Repeat { re, .. } | Re::Group { re, .. } | Re::Look { re, .. } => {
            mentions_special(re, tokens)
        }
        _ => false,
    }
}

fn wrap(s: String, paren: bool) -> String {
    if paren { format!("({s})") } else { s }
}

/// `inner` repeated `min..=max` times, with Lark's `? * +` and explicit copies for bounds.
fn repeat(inner: &str, min: u32, max: Option<u32>) -> String {
    match (min, max) {
        (0, None) => format!("{inner}*"),
        (1, None) => format!("{inner}+"),
        (0, Some(1)) => format!("{inner}?"),
        (m, max) => {
            let mut parts: Vec<String> = (0..m).map(|_| inner.to_string()).collect();
            match max {
                None => parts.push(format!("{inner}*")),
                Some(n) => {
                    // Nested optionals: (x (x)?)? for up to two more.
                    let extra = n.saturating_sub(m);
                    let mut tail = String::new();
                    for _ in 0..extra {
                        tail = if tail.is_empty() {
                            format!("{inner}?")
                        } else {
                            format!("({inner} {tail})?")
                        };
                    }
                    if !tail.is_empty() {
                        parts.push(tail);
                    }
                }
            }
            if parts.is_empty() {
                "\"\"".into()
            } else {
                format!("({})", parts.join(" "))
            }
        }
    }
}

/// A Lark string literal (JSON escapes, which llguidance reads).
fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}
