//! Regex portability of response templates. Runtimes in other languages run a template's
//! patterns with their own regex engines; this crate translates each pattern from the
//! reference's syntax tree into the Rust `regex` crate, `fancy-regex`, ECMAScript (`regress`)
//! and (with the `pcre2` feature) PCRE2, replays every search a sample's parse made on each,
//! and reports where they disagree: the first divergence per engine, pattern and sample, its
//! cause (confirmed by re-running with one idiom replaced) and whether the parsed message
//! changes. It also checks the hold-back strategy engines without partial matching need.
//!
//! [`analyze`] builds a [`PortabilityReport`]; [`render`] turns it into text.

mod analyze;
mod cause;
mod compiled;
pub mod engine;
mod input;
mod kind;
pub mod partial;
pub mod render;
pub mod report;
mod sites;
pub mod translate;

pub use analyze::{analyze, analyze_with};
pub use engine::EngineKind;
pub use input::SampleInput;
pub use report::{
    Cause, Divergence, FieldRow, MessageChange, PartialCheck, PortabilityReport, Verdict,
};
