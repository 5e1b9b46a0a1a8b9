//! The response-template engine: everything between a template file plus generated text and the
//! parsed message with its streaming events. No terminal code lives here.

pub mod content;
pub mod py;
pub mod regex;
pub mod value;
