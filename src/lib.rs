//! rtbench: a workbench for response templates.
//!
//! The engine ([`rtbench_engine`]) turns a model's generated text into a message dict exactly as the reference
//! runtime (`transformers.utils.chat_parsing`) does: template loading and validation, delimiter
//! matching with Python `regex` semantics, the streaming state machine, content parsers,
//! transforms and tool-argument coercion. It has no terminal code.

pub mod cli;
pub mod failure;
pub mod reference;
pub mod workbench;
