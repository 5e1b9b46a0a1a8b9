//! Template files: a bare response template or a `tokenizer_config.json` holding one under
//! `response_template`. Reading keeps the byte span of every JSON node so that any validation
//! error, not only a JSON syntax error, points at its file, line and column.

use std::path::Path;

use crate::diagnostic::Diagnostic;
use crate::py::{self, DuplicateKey, NodeSpan, SpanMap};
use crate::template::error::{JsonPath, PathSeg, Target, TemplateError};
use crate::template::{Template, load_template};
use crate::value::Value;

/// The key under which a `tokenizer_config.json` stores the response template.
pub const CONFIG_KEY: &str = "response_template";

/// A template file's text and decoded JSON, with the spans of its nodes.
#[derive(Clone, Debug)]
pub struct TemplateSource {
    /// The file name as the user gave it (used in diagnostics).
    pub name: String,
    /// The file's text.
    pub text: String,
    /// The whole JSON document.
    pub document: Value,
    /// Path of the template inside the document (`[]`, or `["response_template"]`).
    pub base: JsonPath,
    spans: SpanMap,
}

/// Why a template file could not be used.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read.
    Io {
        /// The file name as the user gave it.
        name: String,
        /// Why reading failed.
        error: std::io::Error,
    },
    /// The file is not valid JSON, or not a valid template.
    Invalid(Box<Diagnostic>),
}

impl LoadError {
    /// The located diagnostic, unless the file could not be read.
    pub fn diagnostic(&self) -> Option<&Diagnostic> {
        match self {
            LoadError::Io { .. } => None,
            LoadError::Invalid(d) => Some(d),
        }
    }
}

impl std::error::Error for LoadError {}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Io { name, error } => {
                write!(f, "error: cannot read template {name}: {error}")
            }
            LoadError::Invalid(d) => d.fmt(f),
        }
    }
}

impl TemplateSource {
    /// Validates the template this file holds; an error is located in the file.
    pub fn template(&self) -> Result<Template, LoadError> {
        load_template(self.template_value())
            .map_err(|e| LoadError::Invalid(Box::new(self.diagnose(&e))))
    }

    /// The template value (the document, or its `response_template`).
    pub fn template_value(&self) -> &Value {
        match (&self.document, self.base.first()) {
            (Value::Dict(d), Some(PathSeg::Key(k))) => d.get(k).unwrap_or(&Value::Null),
            _ => &self.document,
        }
    }

    /// Whether the template came from a `tokenizer_config.json`.
    pub fn is_tokenizer_config(&self) -> bool {
        !self.base.is_empty()
    }

    /// Spans of the node at `path` (relative to the template), if it exists in the file.
    pub fn node(&self, path: &[PathSeg]) -> Option<&NodeSpan> {
        let mut full = self.base.clone();
        full.extend_from_slice(path);
        self.spans.get(&full)
    }

    /// Keys written more than once in one object of the template (Python keeps the last value
    /// at the first position), ordered by the position of the repeat. Paths are relative to
    /// the template, like [`TemplateSource::node`]'s; the spans are byte ranges of the quoted
    /// key tokens in [`TemplateSource::text`]. A repeated `response_template` key of a
    /// `tokenizer_config.json` has the empty path.
    pub fn duplicate_keys(&self) -> Vec<DuplicateKey> {
        self.spans
            .duplicate_keys()
            .into_iter()
            .filter(|d| d.path.starts_with(&self.base))
            .map(|mut d| {
                d.path.drain(..self.base.len());
                d
            })
            .collect()
    }

    /// The 1-based line and column (in code points) of a byte offset in the file's text.
    pub fn line_col(&self, byte_offset: usize) -> (usize, usize) {
        py::line_col(&self.text, byte_offset)
    }

    /// Turns a validation error into a located diagnostic.
    pub fn diagnose(&self, err: &TemplateError) -> Diagnostic {
        self.locate(Diagnostic::error(err.text()), err)
    }

    /// Turns a lint finding (located like a validation error) into a located warning.
    pub fn warn(&self, finding: &TemplateError) -> Diagnostic {
        self.locate(Diagnostic::warning(finding.message.clone()), finding)
    }

    fn locate(&self, diag: Diagnostic, err: &TemplateError) -> Diagnostic {
        let diag = diag.in_file(self.name.clone()).with_help(err.help.clone());
        // Walk up the path until a node exists (an error about a missing key points at its
        // parent object).
        let mut path: &[PathSeg] = &err.path;
        loop {
            if let Some(node) = self.node(path) {
                let exact = path.len() == err.path.len();
                let span = match (err.target, exact, &node.key, err.inner_offset) {
                    (Target::Value, true, _, Some(off)) => {
                        let at = py::string_offset_to_source(&self.text, node.value.clone(), off);
                        at..at + 1
                    }
                    (Target::Key, true, Some(key), _) => key.clone(),
                    _ => node.value.clone(),
                };
                return diag.at(&self.text, span);
            }
            match path.split_last() {
                Some((_, parent)) => path = parent,
                None => return diag,
            }
        }
    }
}

/// Reads and decodes a template file (no validation yet).
pub fn read_source(path: &Path) -> Result<TemplateSource, LoadError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| LoadError::Io {
        name: name.clone(),
        error,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        LoadError::Invalid(Box::new(
            Diagnostic::error(format!("template file is not UTF-8: {e}")).in_file(name.clone()),
        ))
    })?;
    source_from_text(name, text)
}

/// Decodes template JSON given as text; `name` is used in diagnostics.
pub fn source_from_text(name: String, text: String) -> Result<TemplateSource, LoadError> {
    let (document, spans) = py::json_loads_with_spans(&text).map_err(|e| {
        let at = e.offset.min(text.len());
        LoadError::Invalid(Box::new(
            Diagnostic::error(format!("invalid JSON: {}", e.message))
                .in_file(name.clone())
                .at(&text, at..at + 1)
                .with_help(Some("fix the JSON syntax there".into())),
        ))
    })?;
    let base = match &document {
        Value::Dict(d) if d.contains_key(CONFIG_KEY) => vec![PathSeg::Key(CONFIG_KEY.into())],
        _ => Vec::new(),
    };
    let source = TemplateSource {
        name,
        text,
        document,
        base,
        spans,
    };
    if let Value::Dict(d) = &source.document
        && source.base.is_empty()
        && looks_like_tokenizer_config(d)
    {
        return Err(LoadError::Invalid(Box::new(
            Diagnostic::error(format!(
                "this looks like a tokenizer_config.json without a '{CONFIG_KEY}' key"
            ))
            .in_file(source.name.clone())
            .with_help(Some(format!(
                "add the template under \"{CONFIG_KEY}\", or pass a file holding the template itself"
            ))),
        )));
    }
    Ok(source)
}

fn looks_like_tokenizer_config(d: &crate::value::Dict) -> bool {
    const TEMPLATE_KEYS: [&str; 5] = [
        "version",
        "defaults",
        "fields",
        "start_anchor",
        "start_anchor_pattern",
    ];
    const CONFIG_HINTS: [&str; 5] = [
        "tokenizer_class",
        "chat_template",
        "added_tokens_decoder",
        "model_max_length",
        "eos_token",
    ];
    !d.keys().any(|k| TEMPLATE_KEYS.contains(&k)) && d.keys().any(|k| CONFIG_HINTS.contains(&k))
}

/// Reads, decodes and validates a template file.
pub fn load_file(path: &Path) -> Result<(Template, TemplateSource), LoadError> {
    let source = read_source(path)?;
    let template = source.template()?;
    Ok((template, source))
}
