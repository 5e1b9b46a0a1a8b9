//! Python's `repr()` of a string, as the reference's error messages show text (`{text!r}`).

use crate::value::{Value, surrogate_of};
use std::fmt::Write;

/// Python `repr(s)`: quoted with `'` unless the text holds `'` and no `"`, with `\\`, the quote,
/// `\t`, `\n`, `\r` escaped and every non-printable character as `\xhh`, `\uhhhh` or
/// `\Uhhhhhhhh`. Lone-surrogate stand-ins print as the surrogates they stand for.
pub fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        push_repr_char(&mut out, c, quote);
    }
    out.push(quote);
    out
}

/// `%.NR` in CPython's `PyUnicode_FromFormat`: the repr cut to its first `max_chars` characters
/// (used by `int()`'s error message with 200).
pub(crate) fn py_repr_str_truncated(s: &str, max_chars: usize) -> String {
    let repr = py_repr_str(s);
    match repr.char_indices().nth(max_chars) {
        Some((cut, _)) => repr[..cut].to_string(),
        None => repr,
    }
}

fn push_repr_char(out: &mut String, c: char, quote: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if c == quote => {
            out.push('\\');
            out.push(c);
        }
        c if pyunicode::isprintable(c) => out.push(c),
        c => {
            let cp = surrogate_of(c).map_or(c as u32, u32::from);
            // Writing to a String cannot fail.
            let _ = match cp {
                0..=0xFF => write!(out, "\\x{cp:02x}"),
                0x100..=0xFFFF => write!(out, "\\u{cp:04x}"),
                _ => write!(out, "\\U{cp:08x}"),
            };
        }
    }
}

// The method lives with the Python semantics it needs, so that values do not depend on them.
impl Value {
    /// Python's `str()` of the value, as an f-string writes it: a string as it is, anything
    /// else as its `repr()`.
    pub fn py_str(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            other => other.py_repr(),
        }
    }

    /// Python's `repr()` of the value, for error messages (`'abc'`, `1.0`, `None`, `[1, 'a']`).
    pub fn py_repr(&self) -> String {
        match self {
            Value::Null => "None".into(),
            Value::Bool(b) => if *b { "True" } else { "False" }.into(),
            Value::Int(i) => i.to_string(),
            Value::BigInt(b) => b.to_string(),
            Value::Float(f) => super::float_repr(*f),
            Value::Str(s) => py_repr_str(s),
            Value::List(items) => {
                let parts: Vec<String> = items.iter().map(Value::py_repr).collect();
                format!("[{}]", parts.join(", "))
            }
            Value::Dict(d) => {
                let parts: Vec<String> = d
                    .iter()
                    .map(|(k, v)| format!("{}: {}", py_repr_str(k), v.py_repr()))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::surrogate_char;

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(py_repr_str("abc"), "'abc'");
        assert_eq!(py_repr_str("it's"), "\"it's\"");
        assert_eq!(py_repr_str("'\""), "'\\'\"'");
        assert_eq!(py_repr_str("a\tb\n\\"), "'a\\tb\\n\\\\'");
        assert_eq!(py_repr_str("\x00\x7f\u{a0}é"), "'\\x00\\x7f\\xa0é'");
        assert_eq!(py_repr_str("\u{200b}\u{e0001}"), "'\\u200b\\U000e0001'");
        // Unassigned in Unicode 14 (U+1E030 only from Unicode 15 on), private use, and a
        // combining mark, which stays as it is.
        assert_eq!(
            py_repr_str("\u{378}\u{1e030}\u{e000}\u{301}"),
            "'\\u0378\\U0001e030\\ue000\u{301}'"
        );
        assert_eq!(
            py_repr_str(&surrogate_char(0xD800).to_string()),
            "'\\ud800'"
        );
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(py_repr_str_truncated("abcdef", 4), "'abc");
        assert_eq!(py_repr_str_truncated("ab", 200), "'ab'");
    }
}
