//! The reference's entry points on the engine: a one-shot parse of text or token ids, and a
//! streaming parser (`StreamParser`) whose `feed` and `finalize` return the reference's event
//! dicts. The Python layer (`rtbench._api`) gives them the reference's signatures and argument
//! checks; what arrives here is already a template value, a prefix, tools and text or ids.
//!
//! The GIL is released while the engine parses, so other Python threads run meanwhile.

use std::ops::Range;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::{IntoPyObjectExt, intern};
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::parser::{Events, ParseError, Parser, parse_response_owned};
use rtbench_engine::{Reference, Template, Value};
use rtbench_tokenize::ids::{IdParser, Prefix};

use crate::convert::{
    ReadError, dict_to_py, read_ids, read_str, str_to_py, to_py, to_value, type_name,
};
use crate::errors::{exception, unsupported};
use crate::tokenizer::TokenizerHandle;
use pyo3::exceptions::{PyRuntimeError, PyTypeError};

/// The reference version a name (`"5.24"`, `"5.25"`) stands for.
pub(crate) fn reference_of(name: &str) -> PyResult<Reference> {
    name.parse::<Reference>().map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "unknown reference version {name:?}: rtbench follows transformers 5.24 and 5.25 \
             (pass reference=\"5.24\" or \"5.25\")"
        ))
    })
}

/// A Python value read for the engine, or the error that hands the call to the reference.
pub(crate) fn read_value(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    to_value(obj, 0).map_err(|e| match e {
        ReadError::Py(e) => e,
        ReadError::Unsupported(u) => unsupported(py, u),
    })
}

/// Loads a template (a Python dict) as the reference's `load_response_template` does, with its
/// errors.
pub(crate) fn load(py: Python<'_>, spec: &Bound<'_, PyAny>, reference: &str) -> PyResult<Template> {
    let reference = reference_of(reference)?;
    let value = read_value(py, spec)?;
    Template::from_value(&value)
        .map(|t| t.with_reference(reference))
        .map_err(|e| exception(py, e.kind, &e.message))
}

/// The optional tools list as an engine value.
fn read_tools(py: Python<'_>, tools: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Value>> {
    tools
        .filter(|t| !t.is_none())
        .map(|t| read_value(py, t))
        .transpose()
}

/// A parse error as the reference's exception.
fn raise(py: Python<'_>, e: ParseError) -> PyErr {
    exception(py, e.kind, &e.message)
}

/// The optional prefix text.
fn read_prefix(prefix: Option<&Bound<'_, PyString>>) -> PyResult<Option<String>> {
    prefix.map(read_str).transpose()
}

/// `parse_response(text, template, prefix=..., tools=...)` on text: the message dict.
#[pyfunction]
#[pyo3(signature = (spec, text, prefix, tools, reference))]
pub(crate) fn parse_text<'py>(
    py: Python<'py>,
    spec: &Bound<'py, PyAny>,
    text: &Bound<'py, PyString>,
    prefix: Option<&Bound<'py, PyString>>,
    tools: Option<&Bound<'py, PyAny>>,
    reference: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let template = load(py, spec, reference)?;
    let prefix = read_prefix(prefix)?;
    let tools = read_tools(py, tools)?;
    let text = read_str(text)?;
    let result =
        py.detach(|| parse_response_owned(&template, prefix.as_deref(), text, tools.as_ref()));
    match result {
        Ok(message) => dict_to_py(py, &message),
        Err(e) => Err(raise(py, e)),
    }
}

/// `parse_response(ids, template, prefix=ids, tools=..., tokenizer=tok)`: the message dict.
#[pyfunction]
#[pyo3(signature = (spec, ids, prefix, tools, tokenizer, reference))]
pub(crate) fn parse_ids<'py>(
    py: Python<'py>,
    spec: &Bound<'py, PyAny>,
    ids: &Bound<'py, PyAny>,
    prefix: Option<&Bound<'py, PyAny>>,
    tools: Option<&Bound<'py, PyAny>>,
    tokenizer: &TokenizerHandle,
    reference: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let template = load(py, spec, reference)?;
    let prefix = prefix.map(read_ids).transpose()?;
    let tools = read_tools(py, tools)?;
    let ids = read_ids(ids)?;
    let (model, control) = tokenizer.parts();
    let result = py.detach(|| {
        let mut parser = IdParser::new(
            &template,
            prefix.as_deref().map(Prefix::Ids),
            tools.as_ref(),
            model,
            control,
            Events::None,
            true,
        )?;
        parser.feed(&ids)?;
        parser.finalize().map(|(message, _, _)| message)
    });
    match result {
        Ok(message) => dict_to_py(py, &message),
        Err(e) => Err(raise(py, e)),
    }
}

/// Feeds shorter than this many bytes, onto a held buffer shorter than [`SHORT_HELD`], are
/// parsed without releasing the GIL: their work is a few delimiter checks, shorter than the
/// release and the retaking. Anything longer releases it.
const SHORT_FEED: usize = 256;

/// See [`SHORT_FEED`].
const SHORT_HELD: usize = 4096;

/// The engine's parser, fed text or (through the tokenizer's decoder) token ids.
// The text parser, the common case, is held inline: the Python object is one allocation either way.
#[allow(clippy::large_enum_variant)]
enum Inner {
    Text(Parser),
    Ids(Box<IdParser<'static>>),
}

impl Inner {
    fn parser(&self) -> &Parser {
        match self {
            Inner::Text(p) => p,
            Inner::Ids(p) => p.parser(),
        }
    }
}

/// The base class of `rtbench.ResponseParser`: the reference's `ResponseParser` state and its
/// `feed`, `finalize` and `_output`, native so that a streamed token costs one native call.
/// The Python subclass checks the constructor's arguments and calls [`StreamParser::_start`]
/// (or [`StreamParser::_hand_to`] for inputs the engine does not model).
#[pyclass(module = "rtbench._native", subclass)]
pub(crate) struct StreamParser {
    inner: Option<Inner>,
    /// The field names as Python strs, by field index (events name their field).
    names: Vec<Py<PyString>>,
    /// By field index, the dict a chunk of that field starts from (`{"type": "region_chunk",
    /// "field": name, "text": None, "dirty": False}`): copying a dict clones its key table in
    /// one piece, where building it inserts key by key, and a stream is mostly chunks.
    chunk_dicts: Vec<Py<PyDict>>,
    /// The events of one feed, kept to reuse their buffer.
    scratch: Vec<Event>,
    /// The finalized message (`finalize` succeeded).
    message: Option<Py<PyDict>>,
    /// Turns token ids given as arrays or tensors into a list (`rtbench._api._ids`).
    ids_of: Option<Py<PyAny>>,
    /// The reference's own parser, when the inputs hold objects the engine does not model.
    fallback: Option<Py<PyAny>>,
}

#[pymethods]
impl StreamParser {
    /// An empty parser: the subclass's `__init__` starts it.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> StreamParser {
        StreamParser {
            inner: None,
            names: Vec::new(),
            chunk_dicts: Vec::new(),
            scratch: Vec::new(),
            message: None,
            ids_of: None,
            fallback: None,
        }
    }

    /// Loads `spec`, reads `tools` and runs the prefix (text, or ids with a tokenizer; then
    /// `ids_of` turns fed ids into a list).
    #[pyo3(signature = (spec, prefix, tools, reference, tokenizer=None, ids_of=None))]
    // The arguments of the Python call, one for one.
    #[allow(clippy::too_many_arguments)]
    fn _start(
        &mut self,
        py: Python<'_>,
        spec: &Bound<'_, PyAny>,
        prefix: Option<&Bound<'_, PyAny>>,
        tools: Option<&Bound<'_, PyAny>>,
        reference: &str,
        tokenizer: Option<&TokenizerHandle>,
        ids_of: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let template = load(py, spec, reference)?;
        let tools = read_tools(py, tools)?;
        let names: Vec<Py<PyString>> = template
            .fields()
            .iter()
            .map(|f| PyString::new(py, &f.name).unbind())
            .collect();
        let chunk_dicts = names
            .iter()
            .map(|name| {
                let d = PyDict::new(py);
                d.set_item(intern!(py, "type"), intern!(py, "region_chunk"))?;
                d.set_item(intern!(py, "field"), name)?;
                d.set_item(intern!(py, "text"), py.None())?;
                d.set_item(intern!(py, "dirty"), false)?;
                Ok(d.unbind())
            })
            .collect::<PyResult<_>>()?;
        let inner = match tokenizer {
            None => {
                let prefix = prefix
                    .map(|p| read_str(p.cast::<PyString>()?))
                    .transpose()?;
                // Chunks are read by their spans: a chunk's text is copied once, into its str.
                let made = py.detach(|| {
                    Parser::with_events(
                        &template,
                        prefix.as_deref(),
                        tools.as_ref(),
                        Events::ReferenceSpans,
                    )
                });
                Inner::Text(made.map_err(|e| raise(py, e))?)
            }
            Some(tokenizer) => {
                let prefix = prefix.map(read_ids).transpose()?;
                let (model, control) = tokenizer.parts();
                let made = py.detach(|| {
                    IdParser::new(
                        &template,
                        prefix.as_deref().map(Prefix::Ids),
                        tools.as_ref(),
                        model,
                        control,
                        Events::Reference,
                        false,
                    )
                });
                Inner::Ids(Box::new(made.map_err(|e| raise(py, e))?))
            }
        };
        self.inner = Some(inner);
        self.names = names;
        self.chunk_dicts = chunk_dicts;
        self.ids_of = ids_of;
        Ok(())
    }

    /// Hands every call to `parser` (the reference's own).
    fn _hand_to(&mut self, parser: Py<PyAny>) {
        self.fallback = Some(parser);
    }

    /// The events of the prefix, as a new list.
    fn _initial_events<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let events = match self.started()? {
            Inner::Text(p) => p.initial_events(),
            Inner::Ids(p) => p.initial_events(),
        };
        self.events_to_py(py, events, None)
    }

    /// Feeds more text (or token ids, for a parser made with a tokenizer); returns the events
    /// it completed, as the reference's `feed` does (with its errors, in its order).
    fn feed<'py>(
        &mut self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(fallback) = &self.fallback {
            return fallback.bind(py).call_method1(intern!(py, "feed"), (text,));
        }
        let finalized = self.message.is_some();
        let ids_of = self.ids_of.as_ref().map(|f| f.clone_ref(py));
        let mut events = std::mem::take(&mut self.scratch);
        events.clear();
        let inner = self.inner.as_mut().ok_or_else(not_started)?;
        let mut fed = None;
        let result = match inner {
            Inner::Text(parser) => {
                if let Ok(s) = text.cast::<PyString>() {
                    // Its UTF-8, read once; a chunk that is all of it is the same str.
                    let utf8 = s.to_str().ok();
                    let start = parser.held().end;
                    fed = utf8.map(|t| (s, start..start + t.len()));
                    feed_text(py, parser, s, utf8, &mut events)
                } else if finalized {
                    return Err(PyRuntimeError::new_err("ResponseParser already finalized"));
                } else if !text.is_truthy()? {
                    parser.feed_into("", &mut events)
                } else {
                    return Err(PyTypeError::new_err(format!(
                        "can only concatenate str (not \"{}\") to str",
                        type_name(text)
                    )));
                }
            }
            Inner::Ids(parser) => {
                if finalized {
                    return Err(PyRuntimeError::new_err("ResponseParser already finalized"));
                }
                if text.is_instance_of::<PyString>() {
                    return Err(PyTypeError::new_err(
                        "This parser was created with a `tokenizer`, so `feed` takes token ids, not text.",
                    ));
                }
                let list = match ids_of {
                    Some(f) => f.bind(py).call1((text,))?,
                    None => text.clone(),
                };
                let ids = read_ids(&list)?;
                py.detach(|| parser.feed(&ids)).map(|(e, _)| {
                    events = e;
                })
            }
        };
        let out = match result {
            Ok(()) => self.events_to_py(py, &events, fed).map(Bound::into_any),
            Err(e) => Err(raise(py, e)),
        };
        self.scratch = events;
        out
    }

    /// Ends the stream: `(message, final_events)`.
    fn finalize<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(fallback) = &self.fallback {
            return fallback.bind(py).call_method0(intern!(py, "finalize"));
        }
        let result = match self.inner.as_mut().ok_or_else(not_started)? {
            Inner::Text(p) => py.detach(|| p.finalize()),
            Inner::Ids(p) => py.detach(|| p.finalize().map(|(m, e, _)| (m, e))),
        };
        match result {
            Ok((message, events)) => {
                let message = dict_to_py(py, &message)?;
                let events = self.events_to_py(py, &events, None)?;
                self.message = Some(message.clone().unbind());
                Ok((message, events).into_pyobject(py)?.into_any())
            }
            Err(e) => Err(raise(py, e)),
        }
    }

    /// The message so far, as the reference's `_output`: the finalized message once
    /// `finalize` succeeded.
    #[getter]
    fn _output<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(fallback) = &self.fallback {
            return fallback.bind(py).getattr(intern!(py, "_output"));
        }
        if let Some(message) = &self.message {
            return Ok(message.bind(py).clone().into_any());
        }
        Ok(dict_to_py(py, self.started()?.parser().output())?.into_any())
    }
}

/// Feeds a Python str to a text parser; a short feed keeps the GIL (see [`SHORT_FEED`]).
fn feed_text(
    py: Python<'_>,
    parser: &mut Parser,
    text: &Bound<'_, PyString>,
    utf8: Option<&str>,
    events: &mut Vec<Event>,
) -> Result<(), ParseError> {
    match utf8 {
        Some(text) if text.len() < SHORT_FEED && parser.held().len() < SHORT_HELD => {
            parser.feed_into(text, events)
        }
        Some(text) => py.detach(|| parser.feed_into(text, events)),
        // Lone surrogates: read through `surrogatepass`.
        None => match read_str(text) {
            Ok(owned) => py.detach(|| parser.feed_into(&owned, events)),
            Err(e) => Err(ParseError {
                kind: rtbench_engine::ExceptionType::Exception,
                message: e.to_string(),
                field: None,
                span: None,
                body: None,
            }),
        },
    }
}

/// The error for a parser used before `_start` (a subclass that did not start it).
fn not_started() -> PyErr {
    PyRuntimeError::new_err("this ResponseParser was not started: its __init__ did not run")
}

impl StreamParser {
    /// The started parser.
    fn started(&self) -> PyResult<&Inner> {
        self.inner.as_ref().ok_or_else(not_started)
    }

    /// The reference's event dicts for `events`, in order. `fed` is the str the events came
    /// from and its document range: a chunk that is all of it is that same str object, not a
    /// copy (a token that falls wholly inside a region, most of a stream's feeds).
    fn events_to_py<'py>(
        &self,
        py: Python<'py>,
        events: &[Event],
        fed: Option<(&Bound<'py, PyString>, Range<usize>)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let fed = fed.as_ref().map(|(s, r)| (*s, r));
        // A feed completes one event more often than not: its list is made at its size.
        if let [e] = events {
            return match self.event_to_py(py, e, fed)? {
                Some(d) => PyList::new(py, [d]),
                None => Ok(PyList::empty(py)),
            };
        }
        let list = PyList::empty(py);
        for e in events {
            if let Some(d) = self.event_to_py(py, e, fed)? {
                list.append(d)?;
            }
        }
        Ok(list)
    }

    /// A chunk's text: a token-id parser's chunks hold theirs (their markers stripped), a text
    /// parser's is read at the chunk's span.
    fn chunk_text<'a>(&'a self, e: &Event, text: &'a str) -> &'a str {
        match &self.inner {
            Some(Inner::Text(p)) if text.is_empty() => p.text_at(e.span.clone()).unwrap_or(text),
            _ => text,
        }
    }

    /// One event as the reference builds it: `{"type", "field"}` and `"text"`/`"dirty"` for a
    /// chunk, `"value"` for a close.
    fn event_to_py<'py>(
        &self,
        py: Python<'py>,
        e: &Event,
        fed: Option<(&Bound<'py, PyString>, &Range<usize>)>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        if let (EventKind::Chunk { text, dirty }, Some(proto)) =
            (&e.kind, self.chunk_dicts.get(e.field))
        {
            let d = proto.bind(py).copy()?;
            match fed {
                Some((s, fed)) if *fed == e.span => d.set_item(intern!(py, "text"), s)?,
                _ => d.set_item(
                    intern!(py, "text"),
                    str_to_py(py, self.chunk_text(e, text))?,
                )?,
            }
            if *dirty {
                d.set_item(intern!(py, "dirty"), true)?;
            }
            return Ok(Some(d));
        }
        let kind = match &e.kind {
            EventKind::Open => intern!(py, "region_open"),
            EventKind::Chunk { .. } => intern!(py, "region_chunk"),
            EventKind::Close { .. } => intern!(py, "region_close"),
            EventKind::Discard { .. } => return Ok(None),
        };
        let d = PyDict::new(py);
        d.set_item(intern!(py, "type"), kind)?;
        let name = match self.names.get(e.field) {
            Some(n) => n.bind(py).clone().into_any(),
            None => py.None().into_bound_py_any(py)?,
        };
        d.set_item(intern!(py, "field"), name)?;
        match &e.kind {
            EventKind::Chunk { text, dirty } => {
                d.set_item(
                    intern!(py, "text"),
                    str_to_py(py, self.chunk_text(e, text))?,
                )?;
                d.set_item(intern!(py, "dirty"), *dirty)?;
            }
            EventKind::Close { value } => {
                d.set_item(intern!(py, "value"), to_py(py, value)?)?;
            }
            _ => {}
        }
        Ok(Some(d))
    }
}

/// Loads `spec` and raises the reference's error if it is not a valid template.
#[pyfunction]
pub(crate) fn check_template(
    py: Python<'_>,
    spec: &Bound<'_, PyAny>,
    reference: &str,
) -> PyResult<()> {
    load(py, spec, reference).map(|_| ())
}

/// The tool-call arguments `arguments` (str values, lists of str and None) of a call to the
/// tool `name`, cast by the tools' schemas as the engine casts a region's tool calls: with
/// `typed`, as after a content parser whose syntax types its values (5.25's `json`), where a
/// `string` type keeps the text.
#[pyfunction]
pub(crate) fn coerce_arguments<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyString>,
    arguments: &Bound<'py, PyDict>,
    tools: &Bound<'py, PyAny>,
    typed: bool,
    reference: &str,
) -> PyResult<Bound<'py, PyAny>> {
    use rtbench_engine::py::json_dumps_str;
    let reference = reference_of(reference)?;
    // 5.24 casts every string; so does 5.25 after a content parser that does not type values.
    let reference = if typed { reference } else { Reference::V5_24 };
    let tools = read_value(py, tools)?;
    // The call as a JSON region of a one-field template: the engine casts it on close.
    let mut text = String::from("\u{1}{\"type\": \"function\", \"function\": {\"name\": ");
    text.push_str(&json_dumps_str(&read_str(name)?));
    text.push_str(", \"arguments\": {");
    for (i, (key, value)) in arguments.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&json_dumps_str(&read_str(key.cast::<PyString>()?)?));
        text.push_str(": ");
        push_json_item(&mut text, &value)?;
    }
    text.push_str("}}}");
    let template = Template::from_json_str(
        r#"{"start_anchor": "\u0002", "fields": {"v": {"open": "\u0001", "content": "json"}}}"#,
    )
    .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?
    .with_reference(reference);
    let message =
        parse_response_owned(&template, Some(""), text, Some(&tools)).map_err(|e| raise(py, e))?;
    let arguments = message
        .get("v")
        .and_then(|v| v.as_dict())
        .and_then(|call| call.get("function"))
        .and_then(|f| f.as_dict())
        .and_then(|f| f.get("arguments"))
        .cloned()
        .unwrap_or(Value::Null);
    to_py(py, &arguments)
}

/// Appends a str, a list of str and None, or None, as JSON.
fn push_json_item(text: &mut String, value: &Bound<'_, PyAny>) -> PyResult<()> {
    use rtbench_engine::py::json_dumps_str;
    if let Ok(s) = value.cast::<PyString>() {
        text.push_str(&json_dumps_str(&read_str(s)?));
    } else if let Ok(list) = value.cast::<PyList>() {
        text.push('[');
        for (i, item) in list.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            push_json_item(text, &item)?;
        }
        text.push(']');
    } else {
        text.push_str("null");
    }
    Ok(())
}
