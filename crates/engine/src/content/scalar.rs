//! The scalar parsers `text`, `int`, `float` and `bool`: strip (unless `strip` is falsy), then
//! Python's `int()`, `float()` or the reference's `lower() in ("true", "1")` test.

use crate::content::{ContentError, arg};
use crate::py::{self, ExceptionType};
use crate::value::Value;

/// The reference's `_text`: `text.strip()` unless `content_args.strip` is falsy.
pub(crate) fn text(text: Option<&str>, args: &Value) -> Result<Option<String>, ContentError> {
    let strip = arg(args, "strip")?.is_none_or(Value::truthy);
    match text {
        Some(t) if strip => Ok(Some(py::py_strip(t).to_string())),
        Some(t) => Ok(Some(t.to_string())),
        None if strip => Err(ContentError::new(
            ExceptionType::AttributeError,
            "'NoneType' object has no attribute 'strip'",
        )),
        None => Ok(None),
    }
}

fn required(text: Option<String>, what: &str) -> Result<String, ContentError> {
    text.ok_or_else(|| {
        let accepted = if what == "int" {
            "a string, a bytes-like object or a real number"
        } else {
            "a string or a real number"
        };
        ContentError::new(
            ExceptionType::TypeError,
            format!("{what}() argument must be {accepted}, not 'NoneType'"),
        )
    })
}

pub(crate) fn int(t: Option<&str>, args: &Value) -> Result<Value, ContentError> {
    let s = required(text(t, args)?, "int")?;
    py::py_int(&s).map_err(|e| ContentError::value(e.to_string()))
}

pub(crate) fn float(t: Option<&str>, args: &Value) -> Result<Value, ContentError> {
    let s = required(text(t, args)?, "float")?;
    py::py_float(&s)
        .map(Value::Float)
        .map_err(|e| ContentError::value(e.to_string()))
}

pub(crate) fn boolean(t: Option<&str>, args: &Value) -> Result<Value, ContentError> {
    let s = text(t, args)?.ok_or_else(|| {
        ContentError::new(
            ExceptionType::AttributeError,
            "'NoneType' object has no attribute 'lower'",
        )
    })?;
    let lower = py::py_lower(&s);
    Ok(Value::Bool(lower == "true" || lower == "1"))
}
