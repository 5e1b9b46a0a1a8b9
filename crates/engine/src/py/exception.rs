//! The exception an error is raised as: the Python class the reference raises, or rtbench's
//! own for the few errors the reference never raises (it hangs or loops forever instead).
//!
//! An error's text is `"<Type>: <message>"`, as Python's `f"{type(e).__name__}: {e}"` prints
//! it; the message is Python's `str(e)` (for a `KeyError` that is the repr of its argument).

use std::fmt;

/// The class of an error: a Python exception class, or [`ExceptionType::Rtbench`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExceptionType {
    /// `ValueError` (its subclass `json.JSONDecodeError` included).
    ValueError,
    /// `KeyError`: its message is the repr of the missing key.
    KeyError,
    /// `TypeError`.
    TypeError,
    /// `AttributeError`.
    AttributeError,
    /// `RecursionError`: nesting deeper than the interpreter's recursion limit.
    RecursionError,
    /// `RuntimeError` (`feed` or `finalize` after `finalize`).
    RuntimeError,
    /// `IndexError`.
    IndexError,
    /// The `regex` module's `error` (a pattern it cannot compile): its class is named `error`.
    RegexError,
    /// A plain `Exception`: how the tokenizers library raises its errors (a token-id stream it
    /// cannot decode).
    Exception,
    /// rtbench's own error where the reference raises none: a pattern that backtracks
    /// catastrophically (the reference hangs), delimiters that never move on (it loops
    /// forever). Never a reference error in disguise.
    Rtbench,
}

impl ExceptionType {
    /// The class name as Python prints it (`ValueError`), or `rtbench`.
    pub fn name(self) -> &'static str {
        match self {
            ExceptionType::ValueError => "ValueError",
            ExceptionType::KeyError => "KeyError",
            ExceptionType::TypeError => "TypeError",
            ExceptionType::AttributeError => "AttributeError",
            ExceptionType::RecursionError => "RecursionError",
            ExceptionType::RuntimeError => "RuntimeError",
            ExceptionType::IndexError => "IndexError",
            ExceptionType::RegexError => "error",
            ExceptionType::Exception => "Exception",
            ExceptionType::Rtbench => "rtbench",
        }
    }

    /// The type a name stands for (`ValueError`, ..., `rtbench`).
    pub fn from_name(name: &str) -> Option<ExceptionType> {
        [
            ExceptionType::ValueError,
            ExceptionType::KeyError,
            ExceptionType::TypeError,
            ExceptionType::AttributeError,
            ExceptionType::RecursionError,
            ExceptionType::RuntimeError,
            ExceptionType::IndexError,
            ExceptionType::RegexError,
            ExceptionType::Exception,
            ExceptionType::Rtbench,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }

    /// Whether the reference raises errors of this type (everything but [`ExceptionType::Rtbench`]).
    pub fn is_reference(self) -> bool {
        self != ExceptionType::Rtbench
    }
}

impl fmt::Display for ExceptionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Python's `str(KeyError(key))`: the repr of the key string.
pub fn key_error_message(key: &str) -> String {
    super::py_repr_str(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in [
            ExceptionType::ValueError,
            ExceptionType::KeyError,
            ExceptionType::Rtbench,
        ] {
            assert_eq!(ExceptionType::from_name(t.name()), Some(t));
        }
        assert_eq!(key_error_message("yaml"), "'yaml'");
        assert_eq!(key_error_message("it's"), "\"it's\"");
    }
}
