//! Response templates: the validated, compiled form of a template's JSON.
//!
//! [`load::load_template`] applies every validation rule of the reference, in the reference's
//! order, and reports the first violation with its JSON path; [`source`] reads template files
//! (a bare template or a `tokenizer_config.json`) and turns paths into `file:line:col`.

pub mod error;
pub mod load;
pub mod source;

use crate::content::ContentKind;
use crate::delimiter::Delimiter;
use crate::transform::Transform;
use crate::value::{Dict, Value};

pub use error::{JsonPath, PathSeg, Target, TemplateError};
pub use load::load_template;

/// A loaded response template.
#[derive(Clone, Debug)]
pub struct Template {
    /// Values the message starts with; their keys are never dropped.
    pub defaults: Dict,
    /// The fields in the template's order (which decides output key order and tie-breaks).
    pub fields: Vec<Field>,
    /// Index of the field without an open delimiter, if any.
    pub implicit: Option<usize>,
    /// Marks where the current assistant message begins inside the prefix.
    pub start_anchor: Delimiter,
}

/// One field of a template: how its region is delimited and how its text is parsed.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub open: Option<Delimiter>,
    pub close: Option<Delimiter>,
    pub content: ContentKind,
    /// `content_args` as written (any JSON value: the reference only complains when a region
    /// is parsed).
    pub content_args: Value,
    /// Python truthiness of `repeats`.
    pub repeats: bool,
    pub join: Option<String>,
    /// Python truthiness of `optional` (default true).
    pub optional: bool,
    pub transform: Option<Transform>,
    pub transform_each: bool,
}

impl Field {
    /// Whether this region's chunks are flagged `dirty` (structured content parsers).
    pub fn dirty(&self) -> bool {
        !self.content.is_streamable()
    }
}

impl Template {
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}
