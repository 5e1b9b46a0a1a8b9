//! What the headless commands print: compact JSON like the reference's `json.dumps(...,
//! ensure_ascii=False, separators=(",", ":"))`, or indented with `--pretty`.
//!
//! Stream output is written straight from the events, without building intermediate values:
//! feeding one code point at a time produces a line per code point.

use crate::failure::Failure;
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::py::{self, DumpOptions};
use rtbench_engine::value::Value;

fn dump_options(pretty: bool) -> DumpOptions {
    let mut opts = DumpOptions::reference_cli();
    if pretty {
        opts.indent = Some(2);
        opts.compact = false;
    }
    opts
}

fn unwritable(message: &str) -> Failure {
    Failure::invalid(format!(
        "the result cannot be written as JSON: {message} (the parsed message holds it; JSON has no way to carry it)"
    ))
}

/// Serializes a value for stdout. NaN and infinities cannot be written as JSON: like the
/// reference's command line, that is an error. A lone surrogate is written as its `\udXXX`
/// escape.
pub(super) fn json(value: &Value, pretty: bool) -> Result<String, Failure> {
    json_nested(value, pretty, 0)
}

/// Like [`json`] for a value printed `nesting` containers deep inside the line (the
/// reference's encoder counts the enclosing containers against its recursion limit).
pub(super) fn json_nested(value: &Value, pretty: bool, nesting: usize) -> Result<String, Failure> {
    let mut opts = dump_options(pretty);
    opts.max_depth = opts.max_depth.map(|d| d.saturating_sub(nesting));
    py::json_dumps(value, &opts).map_err(|e| unwritable(&e.message))
}

/// Writes a line to stderr (warnings, progress, the final error). A closed stderr
/// (`rtbench ... 2>&1 | head`) drops the line: `eprintln!` would panic there.
pub(super) fn note(line: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Writes `text` and a newline to stdout. A closed pipe (`rtbench parse ... | head`) ends the
/// command quietly, as it does for other Unix tools.
pub(super) fn print_line(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    // One write that ends with the newline: stdout's line buffering then finds it at once
    // instead of scanning megabytes of text for one.
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    match out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) => Err(write_failure(e)),
    }
}

/// The failure for an error writing to stdout (quiet for a closed pipe).
pub(super) fn write_failure(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure {
            message: String::new(),
            code: 0,
        }
    } else {
        Failure::usage(format!("cannot write output: {e}"))
    }
}

/// Appends `s` as a JSON string literal (non-ASCII kept as is, like `ensure_ascii=False`; a
/// lone surrogate written as its `\udXXX` escape).
pub(super) fn push_json_str(out: &mut String, s: &str) -> Result<(), Failure> {
    py::json_write_str(out, s, false);
    Ok(())
}

/// Appends one event as the reference's dict (`{"type":...,"field":...}`); `extra` is appended
/// inside the object (already serialized, starting with a comma) when given.
pub(super) fn push_event(
    out: &mut String,
    ev: &Event,
    field: &str,
    extra: Option<&str>,
) -> Result<(), Failure> {
    let kind = match &ev.kind {
        EventKind::Open => "region_open",
        EventKind::Chunk { .. } => "region_chunk",
        EventKind::Close { .. } => "region_close",
        EventKind::Discard { .. } => return Ok(()),
    };
    out.push_str("{\"type\":\"");
    out.push_str(kind);
    out.push_str("\",\"field\":");
    push_json_str(out, field)?;
    match &ev.kind {
        EventKind::Chunk { text, dirty } => {
            out.push_str(",\"text\":");
            push_json_str(out, text)?;
            out.push_str(if *dirty {
                ",\"dirty\":true"
            } else {
                ",\"dirty\":false"
            });
        }
        EventKind::Close { value } => {
            out.push_str(",\"value\":");
            // The value sits in the line object, its event list and the event object.
            out.push_str(&json_nested(value, false, 3)?);
        }
        _ => {}
    }
    if let Some(extra) = extra {
        out.push_str(extra);
    }
    out.push('}');
    Ok(())
}

/// A list of token ids as JSON (`[1,2,3]`).
pub(super) fn json_ids(ids: &[u32]) -> String {
    let items: Vec<String> = ids.iter().map(u32::to_string).collect();
    format!("[{}]", items.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_like_python_with_ensure_ascii_false() {
        let mut s = String::new();
        push_json_str(&mut s, "a\"b\\c\nd\u{1}é😀\u{7f}").unwrap();
        assert_eq!(s, "\"a\\\"b\\\\c\\nd\\u0001é😀\u{7f}\"");
    }

    #[test]
    fn a_lone_surrogate_is_written_as_its_escape() {
        let v = rtbench_engine::py::json_loads(r#"["\udfff", {"\ud800x": "a\udc00"}]"#).unwrap();
        assert_eq!(
            json(&v, false).unwrap(),
            r#"["\udfff",{"\ud800x":"a\udc00"}]"#
        );
        let mut s = String::new();
        let Value::List(items) = &v else {
            unreachable!()
        };
        push_json_str(&mut s, items[0].as_str().unwrap()).unwrap();
        assert_eq!(s, r#""\udfff""#);
    }
}
