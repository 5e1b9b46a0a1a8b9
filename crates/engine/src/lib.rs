//! The response-template engine: everything between a template file plus generated text and the
//! parsed message with its streaming events. No terminal code lives here.

pub mod content;
pub mod delimiter;
pub mod diagnostic;
pub mod event;
pub mod offsets;
pub mod parser;
pub mod py;
pub mod template;
pub mod tools;
pub mod transform;
pub mod value;
