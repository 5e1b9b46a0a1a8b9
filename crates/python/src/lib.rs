//! The native half of the `rtbench` Python package: rtbench's engine behind transformers'
//! response-parsing API (`parse_response`, `ResponseParser`), with the reference's results for
//! transformers 5.24 and 5.25.
//!
//! The pure-Python half (`python/rtbench/`) gives the reference's signatures, argument checks
//! and the drop-in for transformers (`rtbench.install()`); this crate loads templates, parses
//! (with the GIL released), and builds the reference's Python objects directly from the
//! engine's values (`convert`). The corpus functions (`corpus`) let a worker process run
//! batches of corpus records exactly as `rtbench corpus` does and merge their reports.
//!
//! # Building
//!
//! `pip install ./crates/python` builds the wheel with maturin (a stable-ABI `abi3` wheel for
//! CPython 3.10 and newer). maturin turns on the `extension-module` feature, so the module
//! leaves Python's symbols to the interpreter that loads it.
//!
//! The crate is a workspace member but not a default member: the workspace's `cargo test`,
//! `cargo clippy` and `cargo doc` at the top stay free of PyO3, and the behaviour is tested from
//! Python (`tests/python`, run by `.ci/python`), where the reference can be compared with.
//! `cargo clippy --workspace` and `cargo doc --workspace` check it (they do not link it); its
//! library has no Rust test target, which would have to link libpython.

mod convert;
mod corpus;
mod errors;
mod parse;
mod tokenizer;

use pyo3::prelude::*;

// The Rust side allocates with mimalloc rather than the system allocator: a parse builds and
// frees a value tree of many small blocks (every string and dict of a message) before the
// Python objects are made, and mimalloc's small blocks cost a fraction of the system
// allocator's. Python's own objects keep Python's allocator; no block crosses between them.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The `rtbench._native` module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse::parse_text, m)?)?;
    m.add_function(wrap_pyfunction!(parse::parse_ids, m)?)?;
    m.add_function(wrap_pyfunction!(parse::check_template, m)?)?;
    m.add_function(wrap_pyfunction!(parse::coerce_arguments, m)?)?;
    m.add_class::<parse::StreamParser>()?;
    m.add_class::<tokenizer::TokenizerHandle>()?;
    corpus::register(m)?;
    Ok(())
}
