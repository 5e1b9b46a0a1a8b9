//! XGrammar's structural tag: `{"type": "structural_tag", "format": F}` where F nests
//! `const_string`, `any_text` (with `excludes`), `regex`, `json_schema`, `sequence`, `or` and
//! `tag` (`begin`, `content`, `end`). What the format has no word for (an optional or repeated
//! part, a JSON spelling other than JSON, a named rule) is written as a `grammar` format
//! holding that part's EBNF, so the language stays exactly the other outputs'.

use serde_json::{Value as Json, json};

use crate::ir::{Dialect, Grammar, Node};

pub(crate) fn emit(g: &Grammar) -> String {
    let format = format_of(g, &g.start);
    let tag = json!({"type": "structural_tag", "format": format});
    serde_json::to_string_pretty(&tag).unwrap_or_default()
}

fn format_of(g: &Grammar, node: &Node) -> Json {
    match node {
        Node::Lit(s) if !s.is_empty() => json!({"type": "const_string", "value": s}),
        Node::TextWithout {
            excludes,
            not_start: None,
            not_json: false,
            ..
        } => json!({"type": "any_text", "excludes": excludes}),
        Node::Regex(re) => json!({"type": "regex", "pattern": xgrammar_regex(&re.to_regex())}),
        Node::Json {
            schema,
            dialect: Dialect::Json,
            excludes,
        } if excludes.is_empty() => json!({"type": "json_schema", "json_schema": schema}),
        Node::Seq(items) if items.len() > 1 => {
            // `begin content end` with literal ends is a tag.
            if let [Node::Lit(begin), content, Node::Lit(end)] = items.as_slice()
                && !begin.is_empty()
                && !end.is_empty()
            {
                return json!({
                    "type": "tag",
                    "begin": begin,
                    "content": format_of(g, content),
                    "end": end,
                });
            }
            let elements: Vec<Json> = items.iter().map(|i| format_of(g, i)).collect();
            json!({"type": "sequence", "elements": elements})
        }
        Node::Alt(items) if items.len() > 1 && items.iter().all(|i| !i.is_empty()) => {
            let elements: Vec<Json> = items.iter().map(|i| format_of(g, i)).collect();
            json!({"type": "or", "elements": elements})
        }
        Node::Ref(name) => match g.rules.iter().find(|(n, _)| n == name) {
            // A rule used once in the structure: inline it when it is structural itself.
            Some((_, rule)) if !refers_to(g, rule, name) => format_of(g, rule),
            _ => grammar_format(g, node),
        },
        other => grammar_format(g, other),
    }
}

/// Whether `node` refers (directly or through rules) to `name`.
fn refers_to(g: &Grammar, node: &Node, name: &str) -> bool {
    fn walk(g: &Grammar, node: &Node, name: &str, seen: &mut Vec<String>) -> bool {
        match node {
            Node::Ref(n) => {
                if n == name {
                    return true;
                }
                if seen.contains(n) {
                    return false;
                }
                seen.push(n.clone());
                g.rules
                    .iter()
                    .find(|(r, _)| r == n)
                    .is_some_and(|(_, r)| walk(g, r, name, seen))
            }
            Node::Seq(items) | Node::Alt(items) => items.iter().any(|i| walk(g, i, name, seen)),
            Node::Repeat { node, .. } => walk(g, node, name, seen),
            _ => false,
        }
    }
    walk(g, node, name, &mut Vec::new())
}

/// A pattern in the escapes XGrammar's regex reader knows: `\x{HEX}` (which it reads as an `x`)
/// becomes `\uXXXX`, or `\UXXXXXXXX` beyond the basic plane.
fn xgrammar_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(hex) = after.strip_prefix("x{")
            && let Some(end) = hex.find('}')
            && let Ok(cp) = u32::from_str_radix(&hex[..end], 16)
        {
            if cp <= 0xFFFF {
                out.push_str(&format!("\\u{cp:04X}"));
            } else {
                out.push_str(&format!("\\U{cp:08X}"));
            }
            rest = &hex[end + 1..];
            continue;
        }
        // Any other escape: the backslash and the character it escapes, as they are, but for
        // characters XGrammar does not take escaped (they stand for themselves).
        let mut chars = after.chars();
        match chars.next() {
            Some(c @ ('~' | '#' | '&' | ' ')) => out.push(c),
            Some(c) => {
                out.push('\\');
                out.push(c);
            }
            None => out.push('\\'),
        }
        rest = chars.as_str();
    }
    out.push_str(rest);
    out
}

fn grammar_format(g: &Grammar, node: &Node) -> Json {
    json!({"type": "grammar", "grammar": super::bnf::emit_node(g, node)})
}
