//! Whether a grammar compiled from a response template and the template's parser agree.
//!
//! A grammar for constrained decoding and the parser that reads the constrained output must
//! describe the same language: a grammar that allows what the parser then mis-reads yields
//! broken messages, and one that forbids what the model must write yields refusals. This
//! crate checks both directions with llguidance (the grammar engine serving stacks use):
//! sample generations that parse clean must be accepted, and random walks through the grammar
//! must parse clean with every tool call valid against its tool's schema. A disagreement is
//! shrunk to a short string that still shows it.

mod agree;
mod matcher;
mod schema;
mod shrink;
mod walk;

pub use agree::{Case, CheckOptions, Direction, Disagreement, Report, Verdict, check, verdict};
pub use matcher::{Acceptance, Grammar, Vocabulary};
pub use schema::validate;
pub use shrink::shrink;
pub use walk::{WalkOptions, lark_delimiters, lark_literals, walk};
