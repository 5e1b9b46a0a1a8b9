//! Differential tests against the reference's recorded outputs (the cases under the project's
//! `tests/data/`). They live inside the crate because they exercise internals (the Python value
//! semantics and the content parsers) that are not part of the public API.

mod content_parsers;
mod py_semantics;
mod python_call_list;

use crate::value::Value;

/// The project's recorded reference data.
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data");

/// Equality as JSON sees it: `True` is not `1`, otherwise Python's `==`.
fn json_eq(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (Bool(x), Bool(y)) => x == y,
        (Bool(_), _) | (_, Bool(_)) => false,
        (List(x), List(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q)),
        (Dict(x), Dict(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a.py_eq(b),
    }
}
