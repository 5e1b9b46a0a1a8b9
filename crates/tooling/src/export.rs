//! Export: put a response template into a `tokenizer_config.json` under `response_template`,
//! changing nothing else in the file.
//!
//! Only the text of the `response_template` value changes (or, when the key is new, one entry
//! is inserted): every other byte of the file stays as it was. The new value is written in the
//! file's own style: its indent unit (spaces or tabs), its `key: value` separator, whether
//! non-ASCII text is escaped, and its line endings. A file whose top-level keys are in sorted
//! order (as `save_pretrained` writes them) gets the new key in its sorted place. The
//! template's own keys keep their order, which decides output key order and tie-breaks.

use std::ops::Range;

use similar::TextDiff;

use rtbench_engine::py::{self, DumpOptions, PathSeg};
use rtbench_engine::template::source::CONFIG_KEY;
use rtbench_engine::value::Value;

/// How a JSON file is laid out.
#[derive(Clone, Debug, PartialEq)]
pub struct Style {
    /// One level of indentation (`"  "`, `"    "`, `"\t"`), or `None` for one-line JSON.
    pub indent: Option<String>,
    /// Between a key and its value: `": "`, `":"`, `" : "`.
    pub key_separator: String,
    /// Between the entries of a one-line object: `", "` or `","`.
    pub item_separator: String,
    /// Whether non-ASCII characters are written as `\u` escapes (as `json.dumps` does by
    /// default).
    pub ensure_ascii: bool,
    /// The file's line ending: `"\n"` or `"\r\n"`.
    pub newline: String,
}

/// Reads the layout of a JSON text from its first indented line and its escapes.
pub fn detect_style(text: &str) -> Style {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let indent = text.lines().skip(1).find_map(|line| {
        let ws: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        (!ws.is_empty()).then_some(ws)
    });
    let key_separator = if text.contains("\":") && !text.contains("\": ") {
        ":"
    } else {
        ": "
    };
    let item_separator = if key_separator == ":" { "," } else { ", " };
    // Escaped non-ASCII (`\u00e9`) and no raw non-ASCII: the file was written with
    // ensure_ascii. Files with neither get raw UTF-8, which stays readable.
    let ensure_ascii = text.is_ascii() && escapes_non_ascii(text);
    Style {
        indent,
        key_separator: key_separator.to_string(),
        item_separator: item_separator.to_string(),
        ensure_ascii,
        newline: newline.to_string(),
    }
}

/// Whether the JSON text has a `\uXXXX` escape of a non-ASCII character (an escaped
/// backslash followed by `u` is not one).
fn escapes_non_ascii(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            if b[i + 1] == b'u'
                && let Some(hex) = text.get(i + 2..i + 6)
                && u32::from_str_radix(hex, 16).is_ok_and(|c| c >= 0x80)
            {
                return true;
            }
            i += 2; // skip the escaped character
        } else {
            i += 1;
        }
    }
    false
}

/// The planned change to the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    /// The file's text as it was read.
    pub old_text: String,
    /// The file's text with the response template written in.
    pub new_text: String,
    /// Whether `response_template` was already in the file (its value is replaced).
    pub replaced: bool,
}

impl Export {
    /// Whether the file already holds exactly this response template (nothing to write).
    pub fn is_unchanged(&self) -> bool {
        self.old_text == self.new_text
    }

    /// A unified diff (computed by `similar`) of the changed lines with `context` lines around
    /// them, one `@@ -old +new @@` hunk per group of changes, numbered as in the old and new
    /// files. Lines are shown without their line ends (a CRLF file diffs like an LF one).
    pub fn diff(&self, name: &str, context: usize) -> String {
        let diff = TextDiff::from_lines(self.old_text.as_str(), self.new_text.as_str());
        let mut out = format!("--- {name}\n+++ {name} (with response_template)\n");
        for hunk in diff.unified_diff().context_radius(context).iter_hunks() {
            out.push_str(&format!("{}\n", hunk.header()));
            for change in hunk.iter_changes() {
                out.push_str(&format!("{}", change.tag()));
                out.push_str(change.value().trim_end_matches(['\n', '\r']));
                out.push('\n');
            }
        }
        out
    }
}

/// Plans writing `template` (the template object) into the config file's text.
pub fn export(config_text: &str, template: &Value) -> Result<Export, String> {
    let (document, spans) = py::json_loads_with_spans(config_text).map_err(|e| {
        format!(
            "the file is not valid JSON ({} at byte {}); fix it first",
            e.message, e.offset
        )
    })?;
    let Value::Dict(top) = &document else {
        return Err(
            "the file's JSON is not an object, so it cannot hold a response_template key".into(),
        );
    };
    let mut style = detect_style(config_text);
    // The file's own separator between a key and its value, read off its first entry.
    if let Some(first) = top.keys().next()
        && let Some(node) = spans.get(&[PathSeg::Key(first.to_owned())])
        && let Some(key) = &node.key
        && let Some(sep) = config_text.get(key.end..node.value.start)
        && sep.contains(':')
        && !sep.contains('\n')
    {
        style.key_separator = sep.to_string();
    }
    let key = PathSeg::Key(CONFIG_KEY.into());
    let new_text = if let Some(node) = spans.get(std::slice::from_ref(&key)) {
        let value = render(template, &style, 1)?;
        splice(config_text, node.value.clone(), &value)
    } else {
        insert(config_text, top, &spans, template, &style)?
    };
    let export = Export {
        old_text: config_text.to_string(),
        new_text,
        replaced: top.contains_key(CONFIG_KEY),
    };
    verify(&document, &export.new_text, template)?;
    Ok(export)
}

fn splice(text: &str, range: Range<usize>, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..range.start]);
    out.push_str(with);
    out.push_str(&text[range.end..]);
    out
}

/// Inserts a new top-level entry: in sorted place when the keys are sorted, else last.
fn insert(
    text: &str,
    top: &rtbench_engine::value::Dict,
    spans: &py::SpanMap,
    template: &Value,
    style: &Style,
) -> Result<String, String> {
    let entry = format!(
        "{}{}{}",
        py::json_dumps_str(CONFIG_KEY),
        style.key_separator,
        render(template, style, 1)?
    );
    let keys: Vec<&str> = top.keys().collect();
    let sorted = keys.len() > 1 && keys.windows(2).all(|w| w[0] <= w[1]);
    let span_of = |k: &str| spans.get(&[PathSeg::Key(k.to_string())]).cloned();
    let (lead, between) = match &style.indent {
        Some(unit) => (
            format!("{}{unit}", style.newline),
            format!(",{}{unit}", style.newline),
        ),
        None => (String::new(), style.item_separator.clone()),
    };
    if sorted && let Some(next) = keys.iter().find(|k| **k > CONFIG_KEY) {
        // Before the first greater key: `"response_template": ..., <newline+indent>"next"`.
        let at = span_of(next)
            .and_then(|n| n.key)
            .ok_or("cannot locate a key")?
            .start;
        let ws_start = text[..at].trim_end_matches([' ', '\t', '\r', '\n']).len();
        let ws = &text[ws_start..at];
        let entry_sep = if style.indent.is_none() {
            // One line: the file's item separator (`,` or `, `) already holds any space.
            format!("{entry}{}", style.item_separator)
        } else {
            format!("{entry},{ws}")
        };
        return Ok(splice(text, at..at, &entry_sep));
    }
    match keys.last() {
        Some(last) => {
            let end = span_of(last).ok_or("cannot locate a key")?.value.end;
            Ok(splice(text, end..end, &format!("{between}{entry}")))
        }
        None => {
            // An empty object: put the entry between its braces.
            let root = spans
                .get(&[])
                .ok_or("cannot locate the object")?
                .value
                .clone();
            let close = root.end - 1;
            Ok(splice(
                text,
                root.start + 1..close,
                &format!(
                    "{lead}{entry}{}",
                    style
                        .newline
                        .as_str()
                        .repeat(usize::from(style.indent.is_some()))
                ),
            ))
        }
    }
}

/// The value as JSON in the file's style, for a value nested `level` deep.
fn render(v: &Value, style: &Style, level: usize) -> Result<String, String> {
    let scalar = |v: &Value| {
        py::json_dumps(
            v,
            &DumpOptions {
                ensure_ascii: style.ensure_ascii,
                ..DumpOptions::default()
            },
        )
        .map_err(|e| format!("the template cannot be written as JSON: {e}"))
    };
    let Some(unit) = &style.indent else {
        return py::json_dumps(
            v,
            &DumpOptions {
                ensure_ascii: style.ensure_ascii,
                compact: style.key_separator == ":",
                ..DumpOptions::default()
            },
        )
        .map_err(|e| format!("the template cannot be written as JSON: {e}"));
    };
    let inner = format!("{}{}", style.newline, unit.repeat(level + 1));
    let outer = format!("{}{}", style.newline, unit.repeat(level));
    Ok(match v {
        Value::Dict(d) if !d.is_empty() => {
            let mut parts = Vec::with_capacity(d.len());
            for (k, v) in d {
                parts.push(format!(
                    "{}{}{}",
                    scalar(&Value::from(k))?,
                    style.key_separator,
                    render(v, style, level + 1)?
                ));
            }
            format!("{{{inner}{}{outer}}}", parts.join(&format!(",{inner}")))
        }
        Value::List(l) if !l.is_empty() => {
            let parts = l
                .iter()
                .map(|v| render(v, style, level + 1))
                .collect::<Result<Vec<_>, _>>()?;
            format!("[{inner}{}{outer}]", parts.join(&format!(",{inner}")))
        }
        other => scalar(other)?,
    })
}

/// The new text must parse, hold exactly the template under the key, and be the old document
/// everywhere else.
fn verify(old: &Value, new_text: &str, template: &Value) -> Result<(), String> {
    let new = py::json_loads(new_text).map_err(|e| {
        format!(
            "internal error: the exported file does not parse ({})",
            e.message
        )
    })?;
    let (Value::Dict(old), Value::Dict(new)) = (old, &new) else {
        return Err("internal error: the exported file is not an object".into());
    };
    // Compared as JSON text, so that NaN (which the files may hold) equals itself.
    let dump = |v: &Value| py::json_dumps(v, &DumpOptions::default()).unwrap_or_default();
    let rest = |d: &rtbench_engine::value::Dict| {
        d.iter()
            .filter(|(k, _)| *k != CONFIG_KEY)
            .map(|(k, v)| format!("{k}={}", dump(v)))
            .collect::<Vec<_>>()
    };
    let same_template = new.get(CONFIG_KEY).map(dump) == Some(dump(template));
    if rest(old) != rest(new) || !same_template {
        return Err("internal error: the exported file would differ from the plan".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(old: &str, new: &str) -> Export {
        Export {
            old_text: old.to_string(),
            new_text: new.to_string(),
            replaced: false,
        }
    }

    #[test]
    fn diff_shows_changed_lines_with_context_numbered_as_in_the_files() {
        let old = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4\n}\n";
        let new = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4,\n  \"response_template\": {}\n}\n";
        assert_eq!(
            plan(old, new).diff("t.json", 2),
            "--- t.json\n+++ t.json (with response_template)\n@@ -3,4 +3,5 @@\n   \"b\": 2,\n   \"c\": 3,\n-  \"d\": 4\n+  \"d\": 4,\n+  \"response_template\": {}\n }\n"
        );
    }

    #[test]
    fn diff_splits_distant_changes_into_hunks_and_drops_line_ends() {
        let old: String = (1..=12).map(|i| format!("l{i}\r\n")).collect();
        let new = old
            .replace("l2\r\n", "L2\r\n")
            .replace("l11\r\n", "L11\r\n");
        let d = plan(&old, &new).diff("c", 1);
        assert_eq!(
            d,
            "--- c\n+++ c (with response_template)\n\
             @@ -1,3 +1,3 @@\n l1\n-l2\n+L2\n l3\n\
             @@ -10,3 +10,3 @@\n l10\n-l11\n+L11\n l12\n"
        );
        assert!(!d.contains('\r'));
        // No change: the header alone.
        assert_eq!(
            plan(&old, &old).diff("c", 2),
            "--- c\n+++ c (with response_template)\n"
        );
    }
}
