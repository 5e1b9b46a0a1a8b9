//! Debugging tools on top of the response-template engine, shared by rtbench's command line and
//! its workbench. Nothing here draws on a terminal.
//!
//! The root API, by what a caller wants:
//! - **Reading inputs**: [`inputs`] (the one input policy: the file reader, the template
//!   resolver, samples, ids and messages prepared alike for every command and the workbench),
//!   [`sample`] (the `.sample` format), [`model`] (a model folder: tokenizer, chat template,
//!   control tokens).
//! - **Looking at one parse**: [`explain`], [`findings`] (silent losses), [`paint`] (regions as
//!   spans), [`place`] (naming a place: `file:line:col`, with the generation's own `line:col`),
//!   [`defusing`] and [`injection`] (control tokens), [`versions`] (5.24 against 5.25),
//!   [`transform_error`] (a failed transform located at its placeholder in the template).
//! - **Streaming**: [`chunking`] (chunkings and the check that they agree), [`chunk_cause`]
//!   (the delimiter that made a chunking differ), [`chunk_samples`] (the check of a
//!   sample), [`replay`] (a stream replayed step by step), [`progress`] (how far a long task
//!   got; cancelling it).
//! - **Many samples**: [`testing`] (expected sections, `test`), [`lint`], [`corpus`] (JSON
//!   Lines of generations), [`diff`].
//! - **Writing**: [`atomic`] (replace a file atomically, never losing a concurrent change) and
//!   [`export`].

pub mod atomic;
pub mod chunk_cause;
pub mod chunk_samples;
pub mod chunking;
pub mod corpus;
pub mod defusing;
pub mod diff;
pub mod explain;
pub mod export;
mod files;
pub mod findings;
pub mod infer;
pub mod injection;
pub mod inputs;
pub mod lint;
pub mod model;
pub mod paint;
mod partial_json;
pub mod place;
pub mod progress;
pub mod replay;
pub mod sample;
pub mod testing;
pub mod transform_error;
pub mod versions;
