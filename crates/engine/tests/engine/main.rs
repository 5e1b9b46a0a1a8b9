//! The engine's integration tests, linked as one binary (`cargo test -p rtbench-engine --test
//! engine`): conformance with the reference's recorded results, the Python semantics, stream
//! properties, no-panic properties, the work budget, pattern limits and diagnostics, a module
//! each. Run one area with a module path filter, e.g. `--test engine semantics::`.

// The conformance harness, shared with the root's tests.
#[path = "../common/mod.rs"]
mod common;
// Assertions on rendered diagnostics, shared with the root's tests.
#[path = "../carets/mod.rs"]
mod carets;

mod budget;
mod conformance;
mod diagnostic_render;
mod no_panic;
mod pattern_limits;
mod semantics;
mod stream_properties;
mod validation_diagnostics;
