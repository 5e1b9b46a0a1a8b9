//! Best-effort completion of JSON text that is still being streamed: what a live view can show
//! for a `json` region before it closes.
//!
//! The text is cut back to the last point where every value so far is whole (an open string
//! value is kept and closed, a half-typed number keeps its digits, a half-typed key or literal is
//! dropped), then the open arrays and objects are closed. The result is parsed with the
//! engine's `json.loads`; anything it cannot read gives no preview. A preview is a guess about
//! text that is not there yet, never the region's value.

use rtbench_engine::py;
use rtbench_engine::value::Value;

/// A completed reading of partial JSON text.
#[derive(Clone, Debug, PartialEq)]
pub struct Preview {
    /// The value parsed from the completed text.
    pub value: Value,
    /// How many bytes of the original text the preview keeps (the rest was cut as incomplete).
    pub kept: usize,
    /// The text appended to close what was open (quotes, brackets, braces).
    pub closing: String,
}

/// What a container expects next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Right after `{` or `[`: a key (or value) or the closing bracket.
    First,
    Key,
    Colon,
    Value,
    CommaOrEnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Frame {
    object: bool,
    expect: Expect,
}

/// Scanner state: the open containers and where the text could last be cut and closed.
#[derive(Default)]
struct Scan {
    stack: Vec<Frame>,
    /// Byte length of the longest prefix that closing brackets alone turn into whole JSON.
    safe: Option<usize>,
    /// A string value open at the end: its start offset.
    open_string: Option<usize>,
    /// The top-level value is complete.
    done: bool,
}

/// Completes partial JSON text; `None` when the text is not the beginning of a JSON value (or
/// nothing whole can be kept yet).
pub(crate) fn preview(text: &str) -> Option<Preview> {
    let scan = scan(text)?;
    let (kept, quote) = match scan.open_string {
        Some(start) => (drop_partial_escape(text, start), "\""),
        None => (scan.safe?, ""),
    };
    let head = &text[..kept];
    let closers = closers(head)?;
    let closing = format!("{quote}{closers}");
    let value = py::json_loads(&format!("{head}{closing}")).ok()?;
    Some(Preview {
        value,
        kept,
        closing,
    })
}

/// The end of a string's text without a trailing incomplete escape (`\` or `\u12`).
fn drop_partial_escape(text: &str, start: usize) -> usize {
    let body = &text[start..];
    let bytes = body.as_bytes();
    let mut i = 0;
    let mut last_whole = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            let need = if bytes.get(i + 1) == Some(&b'u') {
                6
            } else {
                2
            };
            if i + need > bytes.len() {
                return start + i;
            }
            i += need;
        } else {
            i += 1;
        }
        last_whole = i;
    }
    start + last_whole
}

/// The brackets that close every container left open in `head` (which must scan cleanly).
fn closers(head: &str) -> Option<String> {
    let scan = scan(head)?;
    Some(
        scan.stack
            .iter()
            .rev()
            .map(|f| if f.object { '}' } else { ']' })
            .collect(),
    )
}

/// Scans the text, tracking containers and the last safe cut; `None` on text that cannot begin
/// a JSON value.
fn scan(text: &str) -> Option<Scan> {
    let bytes = text.as_bytes();
    let mut s = Scan::default();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if s.done {
            return None;
        }
        match b {
            b'{' | b'[' => {
                expect_value(&mut s)?;
                s.stack.push(Frame {
                    object: b == b'{',
                    expect: Expect::First,
                });
                i += 1;
                s.safe = Some(i);
            }
            b'}' | b']' => {
                let top = s.stack.last()?;
                let closable = matches!(top.expect, Expect::First | Expect::CommaOrEnd);
                if top.object != (b == b'}') || !closable {
                    return None;
                }
                s.stack.pop();
                i += 1;
                value_done(&mut s, i);
            }
            b',' => {
                let top = s.stack.last_mut()?;
                if top.expect != Expect::CommaOrEnd {
                    return None;
                }
                top.expect = if top.object {
                    Expect::Key
                } else {
                    Expect::Value
                };
                i += 1;
            }
            b':' => {
                let top = s.stack.last_mut()?;
                if top.expect != Expect::Colon {
                    return None;
                }
                top.expect = Expect::Value;
                i += 1;
            }
            b'"' => {
                let is_key = s
                    .stack
                    .last()
                    .is_some_and(|f| f.object && matches!(f.expect, Expect::First | Expect::Key));
                if !is_key {
                    expect_value(&mut s)?;
                }
                let Some(end) = string_end(bytes, i + 1) else {
                    // The text ends inside this string: a value can be closed, a key cannot.
                    s.open_string = (!is_key).then_some(i + 1);
                    return Some(s);
                };
                i = end;
                if is_key {
                    s.stack.last_mut()?.expect = Expect::Colon;
                } else {
                    value_done(&mut s, i);
                }
            }
            _ => {
                expect_value(&mut s)?;
                let end = scalar_end(bytes, i);
                let token = &text[i..end];
                i = end;
                if end == bytes.len() {
                    // The token may still grow: keep the digits of a number, drop the rest.
                    let keep = number_prefix(token);
                    if keep > 0 {
                        value_done(&mut s, i - token.len() + keep);
                    }
                    return Some(s);
                }
                if !is_scalar(token) {
                    return None;
                }
                value_done(&mut s, i);
            }
        }
    }
    Some(s)
}

/// Checks that a value may start here (and marks the slot as being filled).
fn expect_value(s: &mut Scan) -> Option<()> {
    match s.stack.last_mut() {
        None if s.done => None,
        None => Some(()),
        Some(f) if !f.object && matches!(f.expect, Expect::First | Expect::Value) => Some(()),
        Some(f) if f.object && f.expect == Expect::Value => Some(()),
        Some(_) => None,
    }
}

/// A value ended at byte `at`: the enclosing container now expects a comma or its end.
fn value_done(s: &mut Scan, at: usize) {
    match s.stack.last_mut() {
        Some(f) => f.expect = Expect::CommaOrEnd,
        None => s.done = true,
    }
    s.safe = Some(at);
}

/// The offset after the closing quote of a string whose text starts at `from`, if it closes.
fn string_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of a bare token (number or literal).
fn scalar_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len()
        && !bytes[i].is_ascii_whitespace()
        && !matches!(bytes[i], b',' | b':' | b']' | b'}' | b'[' | b'{' | b'"')
    {
        i += 1;
    }
    i
}

/// Whether a whole bare token is a JSON scalar `json.loads` accepts.
fn is_scalar(token: &str) -> bool {
    matches!(
        token,
        "true" | "false" | "null" | "NaN" | "Infinity" | "-Infinity"
    ) || py::json_loads(token)
        .is_ok_and(|v| matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Float(_)))
}

/// The length of the part of a token at the end of the text that is a whole scalar: the token
/// itself, or a number without its unfinished tail (`12.` keeps `12`, `1e-` keeps `1`, `-` and
/// `tru` keep nothing).
fn number_prefix(token: &str) -> usize {
    if is_scalar(token) {
        return token.len();
    }
    let trimmed = token.trim_end_matches(['.', 'e', 'E', '+', '-']);
    if !trimmed.is_empty() && is_scalar(trimmed) {
        trimmed.len()
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> Option<String> {
        preview(text).map(|p| p.value.py_repr())
    }

    #[test]
    fn open_strings_arrays_and_objects_are_closed() {
        assert_eq!(
            shown(r#"{"name": "get_weather", "arguments": {"city": "Pa"#).as_deref(),
            Some("{'name': 'get_weather', 'arguments': {'city': 'Pa'}}")
        );
        assert_eq!(shown("[1, [2, 3").as_deref(), Some("[1, [2, 3]]"));
        assert_eq!(shown(" {").as_deref(), Some("{}"));
    }

    #[test]
    fn incomplete_keys_literals_numbers_and_escapes_are_cut() {
        assert_eq!(shown(r#"{"a": 1, "b"#).as_deref(), Some("{'a': 1}"));
        assert_eq!(shown(r#"{"a": 1, "b": "#).as_deref(), Some("{'a': 1}"));
        assert_eq!(shown(r#"{"a": tr"#).as_deref(), Some("{}"));
        assert_eq!(shown(r#"[12."#).as_deref(), Some("[12]"));
        assert_eq!(shown(r#"[-"#).as_deref(), Some("[]"));
        assert_eq!(shown(r#"["a\"#).as_deref(), Some("['a']"));
        assert_eq!(shown(r#"["a\u00e"#).as_deref(), Some("['a']"));
        assert_eq!(shown(r#"["a\u00e9"#).as_deref(), Some("['a\u{e9}']"));
    }

    #[test]
    fn text_that_is_not_json_has_no_preview() {
        assert_eq!(shown("hello"), None);
        assert_eq!(shown("{]"), None);
        assert_eq!(shown("{} x"), None);
        assert_eq!(shown(""), None);
        assert_eq!(shown("{\"a\" 1"), None);
    }

    #[test]
    fn the_preview_says_what_it_kept_and_added() {
        let p = preview(r#"{"a": [1, "x"#).unwrap();
        assert_eq!(p.kept, r#"{"a": [1, "x"#.len());
        assert_eq!(p.closing, "\"]}");
    }
}
