//! Template validation errors, located by their JSON path so that the file layer can turn them
//! into `file:line:col` diagnostics with the offending line and a caret.

use std::fmt;

use crate::py::ExceptionType;
pub use crate::py::PathSeg;

/// A path from the template's root to a node (`["fields", "thinking", "open"]`).
pub type JsonPath = Vec<PathSeg>;

/// Which part of a dict entry an error points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The key token of the entry (unknown keys, conflicting keys).
    Key,
    /// The value (wrong type, bad regex, bad literal).
    Value,
}

/// A template the reference would refuse to load.
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateError {
    /// The exception the reference raises (most often `ValueError`), or rtbench's own for a
    /// pattern rtbench cannot match exactly.
    pub kind: ExceptionType,
    /// What is wrong: the reference's exact message.
    pub message: String,
    /// Where in the template it is (relative to the template object itself).
    pub path: JsonPath,
    /// Whether the key or its value is at fault.
    pub target: Target,
    /// For errors inside a string value (a bad regex), the byte offset inside the decoded string.
    pub inner_offset: Option<usize>,
    /// What to do about it.
    pub help: Option<String>,
}

impl TemplateError {
    /// A `ValueError` about the node at `path`.
    pub fn new(message: impl Into<String>, path: JsonPath, target: Target) -> TemplateError {
        TemplateError {
            kind: ExceptionType::ValueError,
            message: message.into(),
            path,
            target,
            inner_offset: None,
            help: None,
        }
    }

    /// The error is raised as `kind` rather than `ValueError`.
    pub fn kind(mut self, kind: ExceptionType) -> TemplateError {
        self.kind = kind;
        self
    }

    /// The error as the reference prints it: `ValueError: <message>`.
    pub fn text(&self) -> String {
        format!("{}: {}", self.kind, self.message)
    }

    /// Adds advice on how to fix it.
    pub fn help(mut self, help: impl Into<String>) -> TemplateError {
        self.help = Some(help.into());
        self
    }

    /// Points at a character inside the string value (a regex syntax error's position).
    pub fn at_offset(mut self, offset: usize) -> TemplateError {
        self.inner_offset = Some(offset);
        self
    }
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TemplateError {}

/// Builds a path from string keys and indices: `path!["fields", name, "open"]`.
pub fn key_path<I, S>(keys: I) -> JsonPath
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    keys.into_iter().map(|k| PathSeg::Key(k.into())).collect()
}
