//! The root package's integration tests, linked as one binary (`cargo test --test it`): one
//! module per area, each what used to be a test file of its own. They run the `rtbench` binary,
//! the workbench or the tooling; the engine's and the regex engine's own tests live in their
//! crates (`crates/engine/tests`, `crates/pyregex/tests`). `tests/memory.rs` stays a binary of
//! its own: its counting global allocator would count every other test's allocations.
//!
//! Run one area with `cargo test --test it cli::` (a module path filter).

// The conformance harness lives with the engine, whose tests use it too.
#[path = "../../crates/engine/tests/common/mod.rs"]
mod common;
// So do the assertions on rendered diagnostics.
#[path = "../../crates/engine/tests/carets/mod.rs"]
mod carets;

mod architecture;
mod authoring;
mod chunking_check;
mod chunking_dependent;
mod cli;
mod cli_inputs;
mod control_tokens;
mod corpus;
mod diagnostic_cli;
mod explain;
mod export;
mod grammar;
mod grammar_check;
mod id_conformance;
mod infer;
mod input_safety;
mod lint;
mod lint_engines;
mod losses;
mod model;
mod recursion_cli;
mod replay;
mod samples;
mod scaffold;
mod schema;
mod scratch;
mod serve;
mod trial;
mod workbench;
mod workbench_fuzz;
