//! The engine's errors as the exceptions the reference raises: the same class and the same
//! `str(e)`.
//!
//! Built-in classes are used as they are (`ValueError`, `KeyError`, `TypeError`, ...). The
//! `regex` module's `error` and rtbench's own error (a pattern that backtracks catastrophically,
//! where the reference hangs) come from `rtbench._errors`, which reuses `regex.error` when the
//! `regex` module is importable.

use pyo3::exceptions::{
    PyAttributeError, PyException, PyIndexError, PyKeyError, PyRecursionError, PyRuntimeError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use rtbench_engine::ExceptionType;

use crate::convert::Unsupported;

/// The exception of `kind` with the message `message` (for a `KeyError`, the message is the
/// repr of the missing key, as Python prints it: the key itself is raised).
pub(crate) fn exception(py: Python<'_>, kind: ExceptionType, message: &str) -> PyErr {
    match kind {
        ExceptionType::ValueError => PyValueError::new_err(message.to_string()),
        ExceptionType::KeyError => match key_of(py, message) {
            Ok(key) => PyKeyError::new_err(key),
            Err(_) => PyKeyError::new_err(message.to_string()),
        },
        ExceptionType::TypeError => PyTypeError::new_err(message.to_string()),
        ExceptionType::AttributeError => PyAttributeError::new_err(message.to_string()),
        ExceptionType::RecursionError => PyRecursionError::new_err(message.to_string()),
        ExceptionType::RuntimeError => PyRuntimeError::new_err(message.to_string()),
        ExceptionType::IndexError => PyIndexError::new_err(message.to_string()),
        ExceptionType::Exception => PyException::new_err(message.to_string()),
        ExceptionType::RegexError => from_errors_module(py, "error", message),
        ExceptionType::Rtbench => from_errors_module(py, "RtbenchError", message),
    }
}

/// The key a `KeyError`'s message is the repr of (`ast.literal_eval` reads it back).
fn key_of(py: Python<'_>, repr: &str) -> PyResult<Py<PyAny>> {
    let ast = py.import("ast")?;
    Ok(ast.call_method1("literal_eval", (repr,))?.unbind())
}

/// An instance of `rtbench._errors.<name>` with `message`.
fn from_errors_module(py: Python<'_>, name: &str, message: &str) -> PyErr {
    let made = py
        .import("rtbench._errors")
        .and_then(|m| m.getattr(name))
        .and_then(|class| class.call1((message,)));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// The error that tells the Python layer to hand the call to the reference: an input holds a
/// Python object the engine does not model.
pub(crate) fn unsupported(py: Python<'_>, u: Unsupported) -> PyErr {
    from_errors_module(py, "Unsupported", &u.0)
}
