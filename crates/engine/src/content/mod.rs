//! Content parsers: how a region's raw text becomes its value (`content` and `content_args`).
//!
//! `content_args` is whatever JSON the template gave; like the reference, a parser only
//! complains about it when it reads it, that is when a region is parsed.

pub(crate) mod json;
pub(crate) mod kv_lines;
pub(crate) mod python_call_list;
pub(crate) mod scalar;
pub(crate) mod xml_inline;

use std::collections::HashMap;
use std::fmt;

use crate::py::ExceptionType;
use crate::reference::Reference;
use crate::value::{Dict, Value};
use pyregex::{Flags, Regex, RegexError};

/// The eight content parsers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContentKind {
    /// The region's text as is.
    Text,
    /// Python `int()` of the stripped text.
    Int,
    /// Python `float()` of the stripped text.
    Float,
    /// `true`/`false` (any case) of the stripped text.
    Bool,
    /// `json.loads`, with the dialect options of `content_args`.
    Json,
    /// Inline XML tags (`<key>value</key>`) as a dict.
    XmlInline,
    /// `key: value` lines as a dict.
    KvLines,
    /// A Python-style call list (`[f(a=1), g()]`) as tool calls.
    PythonCallList,
}

impl ContentKind {
    /// The names a template may give under `content`, in the order the reference lists them.
    pub const NAMES: [&'static str; 8] = [
        "text",
        "int",
        "float",
        "bool",
        "json",
        "xml-inline",
        "kv-lines",
        "python-call-list",
    ];

    /// The parser a template names, if it is one.
    pub fn from_name(name: &str) -> Option<ContentKind> {
        Some(match name {
            "text" => ContentKind::Text,
            "int" => ContentKind::Int,
            "float" => ContentKind::Float,
            "bool" => ContentKind::Bool,
            "json" => ContentKind::Json,
            "xml-inline" => ContentKind::XmlInline,
            "kv-lines" => ContentKind::KvLines,
            "python-call-list" => ContentKind::PythonCallList,
            _ => return None,
        })
    }

    /// The name a template uses for this parser.
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// Structured parsers whose syntax already tells quoted strings from typed literals
    /// (the reference's `TYPED_STRUCTURED_PARSERS`, 5.25): `json`, `python-call-list`.
    pub fn is_typed_structured(self) -> bool {
        matches!(self, ContentKind::Json | ContentKind::PythonCallList)
    }

    /// Text-like parsers whose chunks are already part of the value (`dirty: false`).
    pub fn is_streamable(self) -> bool {
        matches!(
            self,
            ContentKind::Text | ContentKind::Int | ContentKind::Float | ContentKind::Bool
        )
    }
}

/// A region body the reference cannot parse: the exception it raises.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ContentError {
    pub kind: ExceptionType,
    /// The reference's message, exactly.
    pub message: String,
    /// Byte offset inside the region body where the problem is, when known.
    pub offset: Option<usize>,
}

impl ContentError {
    pub(crate) fn new(kind: ExceptionType, message: impl Into<String>) -> ContentError {
        ContentError {
            kind,
            message: message.into(),
            offset: None,
        }
    }

    /// A `ValueError`.
    pub(crate) fn value(message: impl Into<String>) -> ContentError {
        ContentError::new(ExceptionType::ValueError, message)
    }

    pub(crate) fn at(mut self, offset: usize) -> ContentError {
        self.offset = Some(offset);
        self
    }
}

impl fmt::Display for ContentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<RegexError> for ContentError {
    /// A pattern the `regex` module rejects raises its `error`; nesting too deep raises
    /// `RecursionError`; the rest are rtbench's own limits.
    fn from(e: RegexError) -> ContentError {
        let kind = match &e {
            RegexError::Syntax { .. } => ExceptionType::RegexError,
            RegexError::TooDeep { .. } => ExceptionType::RecursionError,
            _ => ExceptionType::Rtbench,
        };
        let message = match &e {
            RegexError::TooDeep { .. } => "maximum recursion depth exceeded".to_string(),
            e => e.to_string(),
        };
        ContentError::new(kind, message)
    }
}

impl From<crate::py::JsonError> for ContentError {
    /// `json.loads`' error, by its class.
    fn from(e: crate::py::JsonError) -> ContentError {
        let kind = match e.kind {
            crate::py::JsonErrorKind::Recursion => ExceptionType::RecursionError,
            _ => ExceptionType::ValueError,
        };
        ContentError::new(kind, e.to_string())
    }
}

/// What content parsers share across regions: patterns compiled at parse time
/// (`tag_pattern`, `string_delims`), how deep JSON may nest at this point of the
/// reference's call stack (its `RecursionError` depends on it) and the reference version
/// whose options the parsers read.
#[derive(Debug)]
pub(crate) struct PatternCache {
    compiled: HashMap<(String, bool), Result<Regex, RegexError>>,
    /// Containers `json.loads` may nest here (see [`crate::py::json_max_depth`]).
    pub json_depth: usize,
    pub reference: Reference,
}

impl Default for PatternCache {
    fn default() -> PatternCache {
        PatternCache {
            compiled: HashMap::new(),
            json_depth: crate::py::JSON_MAX_DEPTH_STREAM,
            reference: Reference::NEWEST,
        }
    }
}

/// Python frames a nested `value_parser` adds (`_sub_parse`, `parse_content` and the parser).
const SUB_PARSE_FRAMES: usize = 3;

impl PatternCache {
    pub(crate) fn get(&mut self, pattern: &str, dotall: bool) -> Result<Regex, RegexError> {
        self.compiled
            .entry((pattern.to_string(), dotall))
            // Lone surrogates in the template's pattern match no text, as in the reference.
            .or_insert_with(|| {
                Regex::with_surrogate_stand_ins(
                    pattern,
                    Flags { dotall },
                    crate::value::SURROGATE_BASE,
                )
            })
            .clone()
    }
}

/// `args.get(key)` where the reference requires `args` to be a dict (it calls `.get` on it).
pub(crate) fn arg<'a>(args: &'a Value, key: &str) -> Result<Option<&'a Value>, ContentError> {
    match args {
        Value::Dict(d) => Ok(d.get(key)),
        other => Err(ContentError::new(
            ExceptionType::AttributeError,
            format!("'{}' object has no attribute 'get'", other.type_name()),
        )),
    }
}

/// Runs the content parser `kind` on `text` (`None` stands for Python's `None`, which a nested
/// `value_parser` can receive when xml-inline's `value` group did not take part).
pub(crate) fn parse_content(
    text: Option<&str>,
    kind: ContentKind,
    args: &Value,
    cache: &mut PatternCache,
) -> Result<Value, ContentError> {
    // What the structured parsers raise when handed `None` (an xml-inline `value` group that
    // did not take part): the first use of the text fails.
    fn need_text<'t>(
        text: Option<&'t str>,
        kind: ContentKind,
        args: &Value,
    ) -> Result<&'t str, ContentError> {
        text.ok_or_else(|| {
            let plain_json = kind == ContentKind::Json
                && !arg(args, "string_delims")
                    .ok()
                    .flatten()
                    .is_some_and(Value::truthy)
                && !arg(args, "unquoted_keys")
                    .ok()
                    .flatten()
                    .is_some_and(Value::truthy);
            match kind {
                ContentKind::KvLines => ContentError::new(
                    ExceptionType::AttributeError,
                    "'NoneType' object has no attribute 'split'",
                ),
                _ if plain_json => ContentError::new(
                    ExceptionType::TypeError,
                    "the JSON object must be str, bytes or bytearray, not NoneType",
                ),
                _ => ContentError::new(
                    ExceptionType::TypeError,
                    "a bytes-like object is required, not 'NoneType'",
                ),
            }
        })
    }
    match kind {
        ContentKind::Text => scalar::text(text, args).map(|t| t.map_or(Value::Null, Value::Str)),
        ContentKind::Int => scalar::int(text, args),
        ContentKind::Float => scalar::float(text, args),
        ContentKind::Bool => scalar::boolean(text, args),
        ContentKind::Json => json::parse(need_text(text, kind, args)?, args, cache),
        ContentKind::XmlInline => xml_inline::parse(need_text(text, kind, args)?, args, cache),
        ContentKind::KvLines => kv_lines::parse(need_text(text, kind, args)?, args, cache),
        ContentKind::PythonCallList => {
            let text = need_text(text, kind, args)?;
            python_call_list::parse_python_call_list(text).map_err(|e| {
                let at = text
                    .char_indices()
                    .nth(e.position)
                    .map_or(text.len(), |(i, _)| i);
                ContentError::value(format!("{e}\nContent: {}", crate::py::py_repr_str(text)))
                    .at(at)
            })
        }
    }
}

/// The reference's `_sub_parse`: a nested `value_parser` (`{"name", "args"}`) applied to one
/// value of an xml-inline or kv-lines region; without one the raw text is kept.
pub(crate) fn sub_parse(
    raw: Option<&str>,
    value_parser: Option<&Value>,
    cache: &mut PatternCache,
) -> Result<Value, ContentError> {
    let Some(vp) = value_parser.filter(|v| !matches!(v, Value::Null)) else {
        return Ok(raw.map_or(Value::Null, Value::from));
    };
    let Value::Dict(vp) = vp else {
        return Err(ContentError::new(
            ExceptionType::AttributeError,
            format!("'{}' object has no attribute 'get'", vp.type_name()),
        ));
    };
    // `CONTENT_PARSERS[name]`: an unknown name is a KeyError, an unhashable one a TypeError.
    let kind = match vp.get("name") {
        None => ContentKind::Text,
        Some(Value::Str(name)) => ContentKind::from_name(name).ok_or_else(|| {
            ContentError::new(ExceptionType::KeyError, crate::py::key_error_message(name))
        })?,
        Some(other @ (Value::List(_) | Value::Dict(_))) => {
            return Err(ContentError::new(
                ExceptionType::TypeError,
                format!("unhashable type: '{}'", other.type_name()),
            ));
        }
        Some(other) => {
            return Err(ContentError::new(ExceptionType::KeyError, other.py_repr()));
        }
    };
    let empty = Value::Dict(Dict::new());
    let args = vp.get("args").unwrap_or(&empty);
    cache.json_depth -= SUB_PARSE_FRAMES;
    let result = parse_content(raw, kind, args, cache);
    cache.json_depth += SUB_PARSE_FRAMES;
    result
}
