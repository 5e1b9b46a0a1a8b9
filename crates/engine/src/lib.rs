//! The response-template runtime: load a template, then parse a model's generation into a
//! message dict, whole or streamed chunk by chunk, with exactly the results of the reference
//! (`transformers.utils.chat_parsing`): the same message, the same events and the same errors.
//!
//! No terminal, file-watching or highlighting code lives here.
//!
//! # One-shot parsing
//!
//! ```
//! use rtbench_engine::{Template, Value, parse_response};
//!
//! let template = Template::from_json_str(r#"{
//!   "start_anchor": "<|im_start|>assistant\n",
//!   "fields": {
//!     "thinking": {"open": "<think>", "close": "</think>"},
//!     "content": {"close": "<|im_end|>"}
//!   }
//! }"#)?;
//! let message = parse_response(
//!     &template,
//!     Some("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"),
//!     "<think>A greeting.</think>Hello!<|im_end|>",
//!     None,
//! )?;
//! assert_eq!(message.get("thinking"), Some(&Value::from("A greeting.")));
//! assert_eq!(message.get("content"), Some(&Value::from("Hello!")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Streaming uses a [`Parser`]: [`Parser::feed`] returns the events each chunk completes and
//! [`Parser::finalize`] the last events and the message. [`Template::load`] reads a template
//! file (or a `tokenizer_config.json`) and reports errors with their file, line and column.

#![warn(missing_docs, unreachable_pub)]

pub mod audit;
pub mod chunked;
mod content;
pub mod delimiter;
pub mod diagnostic;
pub mod event;
pub mod offsets;
pub mod parser;
pub mod py;
pub mod quiet_panic;
pub mod reference;
pub mod region;
#[cfg(feature = "serde")]
mod serde_json_interop;
mod snapshot;
pub mod template;
mod tools;
mod transform;
pub mod value;

pub use audit::{Audit, Loss, LossKind, audit, audit_decoded, audit_owned};
pub use content::ContentKind;
pub use diagnostic::{Diagnostic, Location, Severity};
pub use event::{Event, EventKind, EventSink, Mark, MarkKind, Marks};
pub use parser::{
    Events, MARKER, Options, ParseError, Parser, Suspended, parse_response, parse_response_owned,
};
pub use py::ExceptionType;
pub use reference::Reference;
pub use region::{Ending, Region, Regions, regions};
#[cfg(feature = "serde")]
pub use serde_json_interop::LossyConversion;
pub use template::{Field, LoadError, Template, TemplateError};
pub use value::{Dict, Value};

#[cfg(test)]
mod reference_tests;
