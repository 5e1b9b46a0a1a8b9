//! The `kv-lines` parser: `key<kv_sep>value` pairs separated by `line_sep`, split at the first
//! `kv_sep`; blank lines and lines without the separator are skipped.

use crate::content::{ContentError, PatternCache, arg, scalar, sub_parse};
use crate::py::ExceptionType;
use crate::value::{Dict, Value};
use pyunicode::isspace;

/// Python's `str.split(sep)`; `sep=None` splits on runs of whitespace.
fn py_split<'a>(text: &'a str, sep: Option<&Value>) -> Result<Vec<&'a str>, ContentError> {
    match sep {
        None => Ok(text.split('\n').collect()),
        Some(Value::Null) => Ok(text.split(isspace).filter(|s| !s.is_empty()).collect()),
        Some(Value::Str(s)) if s.is_empty() => Err(ContentError::value("empty separator")),
        Some(Value::Str(s)) => Ok(text.split(s.as_str()).collect()),
        Some(other) => Err(ContentError::new(
            ExceptionType::TypeError,
            format!("must be str or None, not {}", other.type_name()),
        )),
    }
}

pub(crate) fn parse(
    text: &str,
    args: &Value,
    cache: &mut PatternCache,
) -> Result<Value, ContentError> {
    let line_sep = arg(args, "line_sep")?;
    let kv_sep = arg(args, "kv_sep")?;
    let value_parser = arg(args, "value_parser")?;
    let mut out = Dict::new();
    for line in py_split(text, line_sep)? {
        let line = scalar::text(Some(line), args)?.unwrap_or_default();
        if line.is_empty() {
            continue;
        }
        let sep = match kv_sep {
            None => ":",
            Some(Value::Str(s)) => s.as_str(),
            Some(other) => {
                return Err(ContentError::new(
                    ExceptionType::TypeError,
                    format!(
                        "'in <string>' requires string as left operand, not {}",
                        other.type_name()
                    ),
                ));
            }
        };
        if sep.is_empty() {
            return Err(ContentError::value("empty separator"));
        }
        let Some((k, v)) = line.split_once(sep) else {
            continue;
        };
        let k = scalar::text(Some(k), args)?.unwrap_or_default();
        let v = scalar::text(Some(v), args)?;
        let value = sub_parse(v.as_deref(), value_parser, cache)?;
        out.insert(k, value);
    }
    // The dict is kept (a region's value, the message): no room beyond its entries.
    out.shrink_to_fit();
    Ok(Value::Dict(out))
}
