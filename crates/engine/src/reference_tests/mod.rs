//! Differential tests against the reference's recorded outputs (the cases under the crate's
//! `tests/data/`). They live inside the crate because they exercise internals (the Python value
//! semantics and the content parsers) that are not part of the public API.

mod content_parsers;
mod py_semantics;
mod python_call_list;

/// The crate's recorded reference data.
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
