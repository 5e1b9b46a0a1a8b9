//! Python's `json.dumps` over template values, byte for byte: `ensure_ascii`, `indent` (an
//! integer or a string), `separators`, `sort_keys`, floats as `float.__repr__`, key order kept.

use minijinja::value::{Value, ValueKind};
use minijinja::{Error, ErrorKind};

pub(crate) struct Options {
    pub ensure_ascii: bool,
    pub indent: Option<String>,
    pub item_sep: String,
    pub key_sep: String,
    pub sort_keys: bool,
}

pub(crate) fn dumps(value: &Value, opts: &Options) -> Result<String, Error> {
    let mut out = String::new();
    encode(value, opts, 0, &mut out)?;
    Ok(out)
}

fn type_error(what: &str) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("Object of type {what} is not JSON serializable"),
    )
}

/// A line break and the indent of `depth`, when indenting; refused once the text would pass
/// the rendering's budget (an indent repeats on every line, at every level).
fn newline(opts: &Options, depth: usize, out: &mut String) -> Result<(), Error> {
    if let Some(ind) = &opts.indent {
        let grown = out.len().saturating_add(ind.len().saturating_mul(depth));
        crate::check_printing(0, grown)?;
        out.push('\n');
        for _ in 0..depth {
            out.push_str(ind);
        }
    }
    Ok(())
}

/// A dict key as Python's encoder turns it into a string.
fn key_string(key: &Value) -> Result<String, Error> {
    Ok(match key.kind() {
        ValueKind::String => key.as_str().unwrap_or_default().to_string(),
        ValueKind::None => "null".into(),
        ValueKind::Bool => if key.is_true() { "true" } else { "false" }.into(),
        ValueKind::Number => float_or_int(key)?,
        _ => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!(
                    "keys must be str, int, float, bool or None, not {}",
                    key.kind()
                ),
            ));
        }
    })
}

fn float_or_int(v: &Value) -> Result<String, Error> {
    if v.is_integer() {
        Ok(v.to_string())
    } else {
        let f = f64::try_from(v.clone())?;
        Ok(if f.is_nan() {
            "NaN".into()
        } else if f.is_infinite() {
            if f > 0.0 { "Infinity" } else { "-Infinity" }.into()
        } else {
            rtbench_engine::Value::Float(f).py_repr()
        })
    }
}

fn encode(v: &Value, opts: &Options, depth: usize, out: &mut String) -> Result<(), Error> {
    match v.kind() {
        ValueKind::Undefined => return Err(type_error("Undefined")),
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
        ValueKind::Number => out.push_str(&float_or_int(v)?),
        ValueKind::String => write_str(v.as_str().unwrap_or_default(), opts.ensure_ascii, out),
        ValueKind::Seq | ValueKind::Iterable => {
            crate::check_printing(depth + 1, out.len())?;
            let items: Vec<Value> = v.try_iter()?.collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_sep);
                }
                newline(opts, depth + 1, out)?;
                encode(item, opts, depth + 1, out)?;
            }
            newline(opts, depth, out)?;
            out.push(']');
        }
        ValueKind::Map => {
            crate::check_printing(depth + 1, out.len())?;
            let mut pairs = Vec::new();
            for key in v.try_iter()? {
                let item = v.get_item(&key)?;
                pairs.push((key_string(&key)?, item));
            }
            if pairs.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            if opts.sort_keys {
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
            }
            out.push('{');
            for (i, (k, item)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(&opts.item_sep);
                }
                newline(opts, depth + 1, out)?;
                write_str(k, opts.ensure_ascii, out);
                out.push_str(&opts.key_sep);
                encode(item, opts, depth + 1, out)?;
            }
            newline(opts, depth, out)?;
            out.push('}');
        }
        other => return Err(type_error(&other.to_string())),
    }
    Ok(())
}

/// A string as `json.dumps` writes it: the engine's encoder (the one the parser's JSON output
/// uses), so both escape alike.
fn write_str(s: &str, ensure_ascii: bool, out: &mut String) {
    rtbench_engine::py::json_write_str(out, s, ensure_ascii);
}
