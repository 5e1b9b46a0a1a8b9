//! The errors of Python's `json.loads`, with their Python class and message.
//!
//! The reference's `json` content parser catches only `json.JSONDecodeError` (to fall back to the
//! raw text with `allow_non_json`); an integer over the digit limit raises a plain `ValueError`
//! and too deep nesting a `RecursionError`, both of which escape. [`JsonErrorKind`] keeps that
//! distinction.

use std::fmt;

/// Which Python exception `json.loads` raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// `json.JSONDecodeError` (a `ValueError` subclass): malformed JSON.
    Decode,
    /// A plain `ValueError`: an integer with more than 4300 digits.
    Value,
    /// `RecursionError`: containers nested deeper than the interpreter's recursion limit allows.
    Recursion,
}

/// An error from decoding JSON the way Python's `json.loads` does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// The Python exception class.
    pub kind: JsonErrorKind,
    /// Python's message without position (`Expecting value`, `Extra data`, ...; for `Value` and
    /// `Recursion` the whole message).
    pub message: String,
    /// Byte offset in the decoded text (for `Value` and `Recursion`: where the offending number
    /// or container starts).
    pub offset: usize,
    /// The same position in code points (Python's `pos`).
    pub char_offset: usize,
    /// 1-based line (Python's `lineno`).
    pub line: usize,
    /// 1-based column in code points (Python's `colno`).
    pub column: usize,
}

impl JsonError {
    pub(crate) fn new(kind: JsonErrorKind, message: String, src: &str, offset: usize) -> JsonError {
        let offset = src.floor_char_boundary(offset);
        let (line, column) = super::json_spans::line_col(src, offset);
        let char_offset = src[..offset].chars().count();
        JsonError {
            kind,
            message,
            offset,
            char_offset,
            line,
            column,
        }
    }

    /// The Python class name: `JSONDecodeError`, `ValueError` or `RecursionError`.
    pub fn python_class(&self) -> &'static str {
        match self.kind {
            JsonErrorKind::Decode => "JSONDecodeError",
            JsonErrorKind::Value => "ValueError",
            JsonErrorKind::Recursion => "RecursionError",
        }
    }

    /// Whether Python raises `json.JSONDecodeError` (what `except json.JSONDecodeError` catches).
    pub fn is_decode_error(&self) -> bool {
        self.kind == JsonErrorKind::Decode
    }
}

impl fmt::Display for JsonError {
    /// Python's `str(e)`: `Expecting value: line 1 column 1 (char 0)` for decode errors, the
    /// plain message otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            JsonErrorKind::Decode => write!(
                f,
                "{}: line {} column {} (char {})",
                self.message, self.line, self.column, self.char_offset
            ),
            JsonErrorKind::Value | JsonErrorKind::Recursion => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for JsonError {}
