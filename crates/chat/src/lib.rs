//! Chat templates (Jinja) rendered like Hugging Face transformers 5.24.0's
//! `tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=..., tokenize=False,
//! **kwargs)`.
//!
//! The environment mirrors `transformers.utils.chat_template_utils._cached_compile_jinja_template`:
//! `trim_blocks` and `lstrip_blocks` on, loop controls (`break`/`continue`), the globals
//! `raise_exception`, `strftime_now`, `namespace` and `dict`, and a `tojson` filter that is
//! Python's `json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
//! Values print as Python's `str()` does (`True`, `None`, `{'a': 1}`), and the Python string
//! and dict methods templates call come from `minijinja-contrib`'s `pycompat` (plus a few it
//! lacks: `rsplit`, `removeprefix`, `removesuffix`, `index`, `rindex`, `partition`).
//!
//! The inputs are prepared as `apply_chat_template` prepares them: `None`-valued message keys
//! are dropped, reasoning given as `reasoning_content`, `thinking` or `reasoning` is copied
//! under `thinking` and `reasoning_content`, and `tools`/`documents` are `none` when not given.

mod json;
mod limits;
mod model;
mod nesting;
mod strftime;

use std::fmt;

use minijinja::value::{Kwargs, Rest, Value};
use minijinja::{Environment, Error, ErrorKind, State};

pub use model::{ModelTemplates, Picked, special_tokens};

/// What went wrong while compiling or rendering a chat template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderError {
    /// What went wrong: the message given to `raise_exception`, or minijinja's error kind and
    /// detail.
    pub message: String,
    /// The template's name (its file) as given to [`ChatTemplate::new`], or the file being read.
    pub file: String,
    /// 1-based line in the template file.
    pub line: Option<usize>,
    /// 1-based column (in characters) in the template file.
    pub column: Option<usize>,
    /// Whether the template does not parse, raised an exception itself, or failed otherwise.
    pub kind: RenderErrorKind,
}

/// The kind of a [`RenderError`], matching the Jinja exception the reference would raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderErrorKind {
    /// The template does not parse (`jinja2.TemplateSyntaxError`).
    Syntax,
    /// The template called `raise_exception(message)` (`jinja2.TemplateError`).
    Raised,
    /// Anything else: undefined attribute access, a bad filter argument, bad inputs, I/O, a
    /// failure inside the Jinja engine.
    Other,
    /// rtbench stopped the template at one of its resource limits (nesting, steps, output or
    /// allocation size; see the message), where the reference would fail on its recursion
    /// limit, run out of memory, or run for very long.
    Limit,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for RenderError {}

impl RenderError {
    pub(crate) fn other(file: &str, message: impl Into<String>) -> RenderError {
        RenderError {
            message: message.into(),
            file: file.to_string(),
            line: None,
            column: None,
            kind: RenderErrorKind::Other,
        }
    }
}

/// The marker `raise_exception` puts in an error's source chain.
#[derive(Debug)]
struct Raised(String);

impl fmt::Display for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Raised {}

/// The inputs of one rendering, as `apply_chat_template` takes them.
#[derive(Clone, Copy, Debug)]
pub struct RenderInput<'a> {
    /// A JSON list of message objects.
    pub messages: &'a serde_json::Value,
    /// The JSON list of tool schemas (`tools=`), or `None` when not given (the template then sees
    /// `tools` as `none`).
    pub tools: Option<&'a serde_json::Value>,
    /// Whether the template should end with the opening of an assistant turn
    /// (`add_generation_prompt=`).
    pub add_generation_prompt: bool,
    /// Extra template variables (enable_thinking, ...) and the special tokens
    /// (bos_token, eos_token, ...) as the reference passes them. A `documents` entry is passed
    /// as the `documents` variable (the reference's `documents=` argument).
    pub kwargs: &'a serde_json::Map<String, serde_json::Value>,
}

/// One compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    name: String,
    source: String,
}

impl fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// `name` is how errors name the file (e.g. "samples/qwen3/chat_template.jinja").
    ///
    /// A template nested deeper than rtbench's limit is refused before it is parsed (see
    /// [`RenderErrorKind::Limit`]); a failure inside the Jinja engine is an error naming it.
    pub fn new(source: &str, name: &str) -> Result<ChatTemplate, RenderError> {
        let prepared = replace_generation_tags(source);
        let deepest = nesting::deepest(&prepared, WHITESPACE);
        if deepest.depth > limits::MAX_NESTING {
            let (line, column) = line_and_column(&prepared, deepest.offset);
            return Err(RenderError {
                message: format!(
                    "this tag nests expressions or blocks about {} levels deep, more than the {} \
                     rtbench accepts (the reference fails beyond a few hundred, with a \
                     RecursionError): split the expression into steps with {{% set %}}, or nest \
                     fewer blocks",
                    deepest.depth,
                    limits::MAX_NESTING
                ),
                file: name.to_string(),
                line: Some(line),
                column: Some(column),
                kind: RenderErrorKind::Limit,
            });
        }
        let compiled = limits::with_room(deepest.depth, || {
            limits::catch_panic(|| {
                let mut env = environment();
                env.add_template_owned(name.to_string(), prepared.clone())
                    .map(|()| env)
                    .map_err(|e| convert_error(&e, name, &prepared, &limits::budget()))
            })
        });
        let env = match compiled {
            Some(Ok(result)) => result?,
            Some(Err(panic)) => {
                return Err(engine_failure(name, &prepared, "compiling", &panic));
            }
            None => {
                return Err(RenderError::other(
                    name,
                    "could not start a thread to compile this deeply nested template",
                ));
            }
        };
        Ok(ChatTemplate {
            env,
            name: name.to_string(),
            source: prepared,
        })
    }

    /// The name errors use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The template's literal text, as transformers' `_get_template_literal_text` collects it:
    /// the raw text between tags and every string constant, joined with NUL characters so that
    /// a substring search cannot match across two of them. Added tokens found in it are the
    /// model's control tokens. A template that does not lex has no literal text.
    pub fn literal_text(&self) -> String {
        use minijinja::machinery::{Token, tokenize};
        let mut literals: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for token in tokenize(&self.source, false, Default::default(), WHITESPACE) {
            let Ok((token, _)) = token else {
                return String::new();
            };
            let literal = match token {
                Token::TemplateData(s) | Token::Str(s) => s.to_string(),
                Token::String(s) => s.to_string(),
                _ => continue,
            };
            if seen.insert(literal.clone()) {
                literals.push(literal);
            }
        }
        literals.join("\0")
    }

    /// Renders the template with the inputs prepared as `apply_chat_template` prepares them;
    /// bad inputs, a raised exception and any other template failure are [`RenderError`]s, and
    /// so is a rendering stopped at one of rtbench's limits (steps, output size, the size of
    /// what a filter builds; [`RenderErrorKind::Limit`]) or a failure inside the Jinja engine.
    pub fn render(&self, input: &RenderInput) -> Result<String, RenderError> {
        let ctx = build_context(input).map_err(|m| RenderError::other(&self.name, m))?;
        let budget = limits::Budget::for_input(input_size(input));
        // The fuel is the environment's: a copy (its templates are shared) carries this
        // rendering's.
        let mut env = self.env.clone();
        env.set_fuel(Some(budget.fuel));
        let tmpl = env
            .get_template(&self.name)
            .map_err(|e| convert_error(&e, &self.name, &self.source, &budget))?;
        let mut out = limits::LimitedOutput {
            text: Vec::new(),
            limit: budget.output,
            exceeded: false,
        };
        let rendered = limits::with_budget(budget, || {
            limits::catch_panic(|| tmpl.render_captured_to(ctx, &mut out).map(drop))
        });
        match rendered {
            Ok(Ok(())) => String::from_utf8(out.text)
                .map_err(|_| RenderError::other(&self.name, "the rendering is not valid UTF-8")),
            Ok(Err(_)) if out.exceeded => Err(RenderError {
                message: format!(
                    "the rendering grew past {} bytes (64 MiB plus 16 times the size of the \
                     messages, tools and keyword arguments), the most rtbench holds: look for a \
                     loop that repeats text without end",
                    budget.output
                ),
                file: self.name.clone(),
                line: None,
                column: None,
                kind: RenderErrorKind::Limit,
            }),
            Ok(Err(e)) => Err(convert_error(&e, &self.name, &self.source, &budget)),
            Err(panic) => Err(engine_failure(
                &self.name,
                &self.source,
                "rendering",
                &panic,
            )),
        }
    }
}

/// The lexer settings of the environment (trim_blocks and lstrip_blocks on, as the reference).
const WHITESPACE: minijinja::machinery::WhitespaceConfig = minijinja::machinery::WhitespaceConfig {
    keep_trailing_newline: false,
    lstrip_blocks: true,
    trim_blocks: true,
};

/// The size of the inputs of a rendering, as compact JSON.
fn input_size(input: &RenderInput) -> usize {
    limits::json_size(input.messages)
        + input.tools.map_or(0, limits::json_size)
        + input
            .kwargs
            .iter()
            .map(|(k, v)| k.len() + limits::json_size(v))
            .sum::<usize>()
}

/// A panic inside the Jinja engine, as an error naming the template. A panic carries no
/// place; the one known cause, `loop.cycle()` called without items (a division by zero in the
/// engine, where the reference raises `TypeError: no items for cycling given`), is located at
/// the first such call in the source.
fn engine_failure(file: &str, source: &str, doing: &str, panic: &str) -> RenderError {
    let mut err = RenderError::other(
        file,
        format!(
            "the Jinja engine (minijinja) failed while {doing} this template ({panic}); rtbench \
             stopped it: look for a call the reference would reject"
        ),
    );
    if panic.contains("divisor of zero")
        && let Some(offset) = empty_cycle_call(source)
    {
        let (line, column) = line_and_column(source, offset);
        err.message = "no items for cycling given: loop.cycle() needs at least one item (the \
                       Jinja engine stopped on a division by zero; the reference raises a \
                       TypeError)"
            .into();
        err.line = Some(line);
        err.column = Some(column);
    }
    err
}

/// The byte offset of the first `cycle()` call without arguments in `source`.
fn empty_cycle_call(source: &str) -> Option<usize> {
    use minijinja::machinery::{Token, tokenize};
    // The last three tokens: whether each was `cycle`, `(` or `)`, and where `cycle` was.
    let mut last: [Option<&str>; 3] = [None; 3];
    let mut cycle_at = 0;
    for token in tokenize(source, false, Default::default(), WHITESPACE) {
        let (token, span) = token.ok()?;
        last.rotate_left(1);
        last[2] = match token {
            Token::Ident("cycle") => {
                cycle_at = span.start_offset as usize;
                Some("cycle")
            }
            Token::ParenOpen => Some("("),
            Token::ParenClose => Some(")"),
            _ => None,
        };
        if last == [Some("cycle"), Some("("), Some(")")] {
            return Some(cycle_at);
        }
    }
    None
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(source: &str, offset: usize) -> (usize, usize) {
    let offset = source.floor_char_boundary(offset.min(source.len()));
    let before = &source[..offset];
    let line_start = before.rfind('\n').map_or(0, |p| p + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// transformers' `AssistantTracker` extension adds a `{% generation %}...{% endgeneration %}`
/// block that renders its body unchanged; it becomes an always-true `if` of the same length
/// (so lines, columns and whitespace control stay as written).
fn replace_generation_tags(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(pos) = rest.find("{%") {
        out.push_str(&rest[..pos]);
        let tag = &rest[pos..];
        let mut i = 2;
        let b = tag.as_bytes();
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let word_start = i;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
        let word = &tag[word_start..i];
        let replacement = match word {
            "generation" => Some("if true   "),
            "endgeneration" => Some("endif        "),
            _ => None,
        };
        match replacement {
            Some(r) => {
                out.push_str(&tag[..word_start]);
                out.push_str(r);
                rest = &tag[i..];
            }
            None => {
                out.push_str("{%");
                rest = &tag[2..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(false);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.set_formatter(|out, _state, value| {
        if value.is_undefined() {
            return Ok(());
        }
        out.write_str(&py_str(value)?)
            .map_err(|_| Error::new(ErrorKind::WriteFailure, "write failed"))
    });
    env.set_unknown_method_callback(unknown_method);
    env.add_filter("tojson", tojson_filter);
    env.add_filter("dictsort", dictsort_filter);
    env.add_filter("items", |v: Value| -> Result<Value, Error> {
        dict_items(&v)
    });
    env.add_filter("wordcount", |s: String| -> usize {
        // Jinja's `len(re.findall(r"\w+", s))`.
        s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .count()
    });
    env.add_filter(
        "center",
        |s: String, width: Option<usize>| -> Result<String, Error> {
            let width = width.unwrap_or(80);
            limits::check_width("a center width", width)?;
            Ok(py_center(&s, width))
        },
    );
    // The builtins below build results that grow with an argument: the argument is checked
    // against the budget first, then the builtin runs unchanged.
    env.add_filter(
        "indent",
        |value: minijinja::value::StringInput,
         width: Option<usize>,
         first: Option<bool>,
         blank: Option<bool>,
         kwargs: Kwargs|
         -> Result<Value, Error> {
            let n = match width {
                Some(n) => n,
                None => kwargs.peek::<Option<usize>>("width")?.unwrap_or(4),
            };
            let lines = value.as_str().matches('\n').count() + 1;
            if n.saturating_mul(lines) > limits::budget().output {
                return Err(limits::too_large(
                    "an indent width",
                    n,
                    limits::budget().output,
                ));
            }
            minijinja::filters::indent(value, width, first, blank, kwargs)
        },
    );
    env.add_filter(
        "format",
        |state: &State, format: &Value, args: Rest<Value>| -> Result<Value, Error> {
            if let Some(f) = format.as_str() {
                limits::check_format_widths(f, limits::FormatStyle::Printf)?;
            }
            minijinja::filters::format(state, format, args)
        },
    );
    env.add_filter(
        "batch",
        |state: &State, value: Value, count: usize, fill_with: Option<Value>| {
            // Without a filler a batch never holds more than the items there are, so a larger
            // count gives the same batches (the builtin reserves `count` places up front).
            let (value, count) = if fill_with.is_some() {
                limits::check_items("a batch count", count)?;
                (value, count)
            } else if let Some(len) = value.len() {
                (value, count.min(len.max(1)))
            } else if value.is_undefined() || value.is_none() {
                (value, count.min(1))
            } else {
                let items: Vec<Value> = value.try_iter()?.collect();
                let len = items.len();
                (Value::from(items), count.min(len.max(1)))
            };
            minijinja::filters::batch(state, value, count, fill_with)
        },
    );
    env.add_filter(
        "slice",
        |state: &State, value: Value, count: usize, fill_with: Option<Value>| {
            limits::check_items("a slice count", count)?;
            minijinja::filters::slice(state, value, count, fill_with)
        },
    );
    env.add_filter("string", |v: Value| -> Result<String, Error> { py_str(&v) });
    env.add_function(
        "raise_exception",
        |message: Value| -> Result<Value, Error> {
            let text = py_str(&message)?;
            Err(Error::new(ErrorKind::InvalidOperation, text.clone()).with_source(Raised(text)))
        },
    );
    env.add_function("strftime_now", |format: String| -> Result<String, Error> {
        Ok(strftime::strftime_now(&format))
    });
    env
}

/// Python's `str(value)`.
pub(crate) fn py_str(value: &Value) -> Result<String, Error> {
    if let Some(s) = value.as_str() {
        return Ok(s.to_string());
    }
    if value.is_undefined() {
        return Ok(String::new());
    }
    let mut out = String::new();
    py_repr(value, &mut out)?;
    Ok(out)
}

/// A Python tuple (what `partition` and `dictsort` give); a sequence that prints as `(a, b)`.
#[derive(Debug)]
pub(crate) struct Tuple(pub Vec<Value>);

impl minijinja::value::Object for Tuple {
    fn repr(self: &std::sync::Arc<Self>) -> minijinja::value::ObjectRepr {
        minijinja::value::ObjectRepr::Seq
    }
    fn get_value(self: &std::sync::Arc<Self>, key: &Value) -> Option<Value> {
        let i = key.as_i64()?;
        let i = if i < 0 { i + self.0.len() as i64 } else { i };
        self.0.get(usize::try_from(i).ok()?).cloned()
    }
    fn enumerate(self: &std::sync::Arc<Self>) -> minijinja::value::Enumerator {
        minijinja::value::Enumerator::Seq(self.0.len())
    }
}

pub(crate) fn tuple(items: Vec<Value>) -> Value {
    Value::from_object(Tuple(items))
}

/// Python's `repr(value)`.
pub(crate) fn py_repr(value: &Value, out: &mut String) -> Result<(), Error> {
    py_repr_at(value, out, 0)
}

/// Checks a container's nesting and the text written so far, before `repr` or `json.dumps`
/// goes one level deeper: a value built in a loop can nest without bound, and Python's
/// recursion limit stops the reference at about a thousand levels.
pub(crate) fn check_printing(depth: usize, written: usize) -> Result<(), Error> {
    if depth > limits::MAX_NESTING {
        return Err(limits::limit_error(format!(
            "a value nested more than {} levels deep cannot be printed (the reference fails \
             with a RecursionError): look for a loop that wraps a value in itself",
            limits::MAX_NESTING
        )));
    }
    let limit = limits::budget().output;
    if written > limit {
        return Err(limits::too_large("printing a value", written, limit));
    }
    Ok(())
}

fn py_repr_at(value: &Value, out: &mut String, depth: usize) -> Result<(), Error> {
    use minijinja::value::ValueKind;
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => {
            if value.is_integer() {
                out.push_str(&value.to_string());
            } else {
                out.push_str(
                    &rtbench_engine::Value::Float(f64::try_from(value.clone())?).py_repr(),
                );
            }
        }
        ValueKind::String => out.push_str(&rtbench_engine::py::py_repr_str(
            value.as_str().unwrap_or_default(),
        )),
        ValueKind::Seq | ValueKind::Iterable => {
            check_printing(depth + 1, out.len())?;
            let is_tuple = value.downcast_object_ref::<Tuple>().is_some();
            out.push(if is_tuple { '(' } else { '[' });
            let mut n = 0;
            for (i, item) in value.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr_at(&item, out, depth + 1)?;
                n += 1;
            }
            if is_tuple && n == 1 {
                out.push(',');
            }
            out.push(if is_tuple { ')' } else { ']' });
        }
        ValueKind::Map => {
            check_printing(depth + 1, out.len())?;
            out.push('{');
            for (i, key) in value.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_repr_at(&key, out, depth + 1)?;
                out.push_str(": ");
                py_repr_at(&value.get_item(&key)?, out, depth + 1)?;
            }
            out.push('}');
        }
        _ => out.push_str(&value.to_string()),
    }
    Ok(())
}

/// Python's `str.center(width)`.
fn py_center(s: &str, width: usize) -> String {
    let len = s.chars().count();
    if width <= len {
        return s.to_string();
    }
    let marg = width - len;
    let left = marg / 2 + (marg & width & 1);
    format!("{}{s}{}", " ".repeat(left), " ".repeat(marg - left))
}

/// `dict.items()` (and the `items` filter): (key, value) tuples.
fn dict_items(value: &Value) -> Result<Value, Error> {
    if value.kind() != minijinja::value::ValueKind::Map {
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "items() needs a mapping",
        ));
    }
    let mut items = Vec::new();
    for key in value.try_iter()? {
        let item = value.get_item(&key)?;
        items.push(tuple(vec![key, item]));
    }
    Ok(Value::from(items))
}

/// `dictsort`, giving tuples as Python's does.
fn dictsort_filter(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let sorted = minijinja::filters::dictsort(&value, kwargs)?;
    let items: Vec<Value> = sorted
        .try_iter()?
        .map(|pair| tuple(pair.try_iter().map(|i| i.collect()).unwrap_or_default()))
        .collect();
    Ok(Value::from(items))
}

/// `tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)`.
fn tojson_filter(value: Value, args: Rest<Value>, kwargs: Kwargs) -> Result<String, Error> {
    let names = ["ensure_ascii", "indent", "separators", "sort_keys"];
    let mut params: [Option<Value>; 4] = [None, None, None, None];
    if args.len() > names.len() {
        return Err(Error::new(
            ErrorKind::TooManyArguments,
            format!(
                "tojson() takes from 1 to 5 positional arguments but {} were given",
                args.len() + 1
            ),
        ));
    }
    for (i, a) in args.iter().enumerate() {
        params[i] = Some(a.clone());
    }
    for (i, name) in names.iter().enumerate() {
        if let Some(v) = kwargs.get::<Option<Value>>(name)? {
            if params[i].is_some() {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("tojson() got multiple values for argument '{name}'"),
                ));
            }
            params[i] = Some(v);
        }
    }
    kwargs.assert_all_used()?;
    let ensure_ascii = params[0].as_ref().is_some_and(|v| v.is_true());
    let indent = match &params[1] {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => {
            if let Some(s) = v.as_str() {
                Some(s.to_string())
            } else if v.is_integer() {
                let n = usize::try_from(v.as_i64().unwrap_or(0).max(0)).unwrap_or(usize::MAX);
                limits::check_width("a tojson indent", n)?;
                Some(" ".repeat(n))
            } else {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "tojson: indent must be an integer or a string",
                ));
            }
        }
    };
    let separators = match &params[2] {
        None => None,
        Some(v) if v.is_none() => None,
        Some(v) => {
            let items: Vec<Value> = v.try_iter()?.collect();
            match items.as_slice() {
                [a, b] if a.as_str().is_some() && b.as_str().is_some() => Some((
                    a.as_str().unwrap_or_default().to_string(),
                    b.as_str().unwrap_or_default().to_string(),
                )),
                _ => {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: separators must be a pair of strings",
                    ));
                }
            }
        }
    };
    let sort_keys = params[3].as_ref().is_some_and(|v| v.is_true());
    let opts = json::Options {
        ensure_ascii,
        item_sep: separators.as_ref().map(|s| s.0.clone()).unwrap_or_else(|| {
            if indent.is_some() {
                ",".into()
            } else {
                ", ".into()
            }
        }),
        key_sep: separators.map(|s| s.1).unwrap_or_else(|| ": ".into()),
        indent,
        sort_keys,
    };
    json::dumps(&value, &opts)
}

fn unknown_method(
    state: &State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    use minijinja::value::ValueKind;
    let arg_str = |i: usize| -> Result<String, Error> {
        args.get(i)
            .and_then(|a| a.as_str())
            .map(str::to_string)
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    format!("{method}() needs a string argument"),
                )
            })
    };
    if let Some(s) = value.as_str() {
        match method {
            "format" => limits::check_format_widths(s, limits::FormatStyle::Braces)?,
            "removeprefix" => {
                let p = arg_str(0)?;
                return Ok(Value::from(s.strip_prefix(p.as_str()).unwrap_or(s)));
            }
            "removesuffix" => {
                let p = arg_str(0)?;
                return Ok(Value::from(s.strip_suffix(p.as_str()).unwrap_or(s)));
            }
            "index" | "rindex" => {
                let p = arg_str(0)?;
                let found = if method == "index" {
                    s.find(p.as_str())
                } else {
                    s.rfind(p.as_str())
                };
                return match found {
                    Some(b) => Ok(Value::from(s[..b].chars().count())),
                    None => Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "substring not found",
                    )),
                };
            }
            "partition" | "rpartition" => {
                let p = arg_str(0)?;
                if p.is_empty() {
                    return Err(Error::new(ErrorKind::InvalidOperation, "empty separator"));
                }
                let found = if method == "partition" {
                    s.find(p.as_str())
                } else {
                    s.rfind(p.as_str())
                };
                let parts = match found {
                    Some(b) => vec![s[..b].to_string(), p.clone(), s[b + p.len()..].to_string()],
                    None if method == "partition" => {
                        vec![s.to_string(), String::new(), String::new()]
                    }
                    None => vec![String::new(), String::new(), s.to_string()],
                };
                return Ok(tuple(parts.into_iter().map(Value::from).collect()));
            }
            "rsplit" => {
                let sep = match args.first() {
                    None => None,
                    Some(v) if v.is_none() => None,
                    Some(_) => Some(arg_str(0)?),
                };
                let maxsplit = args.get(1).and_then(|v| v.as_i64()).unwrap_or(-1);
                return Ok(Value::from(rsplit(s, sep.as_deref(), maxsplit)?));
            }
            _ => {}
        }
    }
    if value.kind() == ValueKind::Map && method == "items" && args.is_empty() {
        return dict_items(value);
    }
    if value.kind() == ValueKind::Seq && method == "index" {
        let needle = args
            .first()
            .ok_or_else(|| Error::new(ErrorKind::MissingArgument, "index() takes an argument"))?;
        for (i, item) in value.try_iter()?.enumerate() {
            if &item == needle {
                return Ok(Value::from(i));
            }
        }
        return Err(Error::new(
            ErrorKind::InvalidOperation,
            "value is not in list",
        ));
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// Python's `str.rsplit(sep, maxsplit)`.
fn rsplit(s: &str, sep: Option<&str>, maxsplit: i64) -> Result<Vec<String>, Error> {
    let mut parts: Vec<String> = Vec::new();
    match sep {
        Some("") => return Err(Error::new(ErrorKind::InvalidOperation, "empty separator")),
        Some(sep) => {
            let mut rest = s;
            let mut n = 0;
            while maxsplit < 0 || n < maxsplit {
                match rest.rfind(sep) {
                    Some(b) => {
                        parts.push(rest[b + sep.len()..].to_string());
                        rest = &rest[..b];
                        n += 1;
                    }
                    None => break,
                }
            }
            parts.push(rest.to_string());
        }
        None => {
            let mut rest = s.trim_end();
            let mut n = 0;
            while !rest.is_empty() {
                if maxsplit >= 0 && n >= maxsplit {
                    parts.push(rest.to_string());
                    break;
                }
                match rest.rfind(char::is_whitespace) {
                    Some(b) => {
                        let ws_len = rest[b..].chars().next().map_or(1, char::len_utf8);
                        parts.push(rest[b + ws_len..].to_string());
                        rest = rest[..b].trim_end();
                        n += 1;
                    }
                    None => {
                        parts.push(rest.to_string());
                        break;
                    }
                }
            }
        }
    }
    parts.reverse();
    Ok(parts)
}

fn convert_error(err: &Error, file: &str, source: &str, budget: &limits::Budget) -> RenderError {
    let mut raised = None;
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(s) = src {
        if let Some(r) = s.downcast_ref::<Raised>() {
            raised = Some(r.0.clone());
            break;
        }
        src = s.source();
    }
    let limit = {
        let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
        let mut found = false;
        while let Some(s) = src {
            found |= s.is::<limits::LimitReached>();
            src = s.source();
        }
        found
    };
    let kind = if raised.is_some() {
        RenderErrorKind::Raised
    } else if limit || err.kind() == ErrorKind::OutOfFuel {
        RenderErrorKind::Limit
    } else if err.kind() == ErrorKind::SyntaxError {
        RenderErrorKind::Syntax
    } else {
        RenderErrorKind::Other
    };
    let message = raised.unwrap_or_else(|| match err.detail() {
        _ if err.kind() == ErrorKind::OutOfFuel => format!(
            "the template ran {} steps without finishing, the most rtbench allows this rendering \
             (4 million plus 64 per byte of the messages, tools and keyword arguments; a real \
             chat template needs a small fraction): look for loops that run too long, such as \
             nested range() loops",
            budget.fuel
        ),
        Some(d) if limit => d.to_string(),
        Some(d) => format!("{}: {}", err.kind(), d),
        None => err.kind().to_string(),
    });
    let column = err.range().and_then(|r| {
        let start = r.start.min(source.len());
        if !source.is_char_boundary(start) {
            return None;
        }
        let line_start = source[..start].rfind('\n').map_or(0, |p| p + 1);
        Some(source[line_start..start].chars().count() + 1)
    });
    RenderError {
        message,
        file: file.to_string(),
        line: err.line(),
        column,
        kind,
    }
}

/// `_alias_reasoning_fields`: the names a message's reasoning is passed under.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "thinking", "reasoning"];

/// The template's variables, as `apply_chat_template` and `render_jinja_template` build them.
fn build_context(input: &RenderInput) -> Result<Value, String> {
    use serde_json::Value as J;
    let messages = match input.messages {
        J::Array(items) => items,
        _ => return Err("messages must be a list of message objects".into()),
    };
    if messages.is_empty() {
        return Err(
            "Cannot apply chat template to an empty conversation. Provide at least one message."
                .into(),
        );
    }
    let mut chat = Vec::with_capacity(messages.len());
    for message in messages {
        let J::Object(m) = message else {
            return Err(format!(
                "Chat messages should be dicts, dataclasses or pydantic models, but got {}.",
                message
            ));
        };
        // `_normalize_chat_messages`: drop the keys whose value is None.
        let m: serde_json::Map<String, J> = m
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        // `_alias_reasoning_fields`: {"thinking": r, **message, "reasoning_content": r}.
        let reasoning = REASONING_FIELDS.iter().find_map(|k| m.get(*k)).cloned();
        let m = match reasoning {
            Some(r) => {
                let mut out = serde_json::Map::new();
                out.insert("thinking".into(), r.clone());
                for (k, v) in m {
                    out.insert(k, v);
                }
                out.insert("reasoning_content".into(), r);
                out
            }
            None => m,
        };
        chat.push(J::Object(m));
    }
    if let Some(J::Array(tools)) = input.tools {
        for tool in tools {
            if !tool.is_object() {
                return Err("Tools should either be a JSON schema, or a callable function with type hints and a docstring suitable for auto-conversion to a schema.".into());
            }
        }
    }
    let mut ctx = serde_json::Map::new();
    ctx.insert("messages".into(), J::Array(chat));
    ctx.insert("tools".into(), input.tools.cloned().unwrap_or(J::Null));
    let documents = input.kwargs.get("documents").cloned().unwrap_or(J::Null);
    if let J::Array(docs) = &documents
        && docs.iter().any(|d| !d.is_object())
    {
        return Err("Documents should be a list of dicts with 'title' and 'text' keys!".into());
    }
    ctx.insert("documents".into(), documents);
    ctx.insert(
        "add_generation_prompt".into(),
        J::Bool(input.add_generation_prompt),
    );
    for (k, v) in input.kwargs {
        if k == "documents" {
            continue;
        }
        if matches!(k.as_str(), "messages" | "tools" | "add_generation_prompt") {
            return Err(format!("got multiple values for keyword argument '{k}'"));
        }
        ctx.insert(k.clone(), v.clone());
    }
    Ok(Value::from_serialize(J::Object(ctx)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str) -> Result<String, RenderError> {
        let messages = serde_json::json!([{"role": "user", "content": "hi"}]);
        let kwargs = serde_json::Map::new();
        let input = RenderInput {
            messages: &messages,
            tools: None,
            add_generation_prompt: false,
            kwargs: &kwargs,
        };
        ChatTemplate::new(source, "t.jinja")?.render(&input)
    }

    #[test]
    fn raise_exception_carries_line_and_column() {
        let err =
            render("ok\n  {{ raise_exception('Bad role: ' ~ messages[0].role) }}\n").unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Raised);
        assert_eq!(err.message, "Bad role: user");
        assert_eq!(err.line, Some(2));
        assert!(err.column.is_some());
        assert!(err.to_string().starts_with("t.jinja:2:"), "{err}");
        assert!(err.to_string().ends_with(": Bad role: user"), "{err}");
    }

    #[test]
    fn syntax_errors_carry_the_line() {
        let err = render("a\nb\n{% endfor %}\n").unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Syntax);
        assert_eq!(err.line, Some(3));
        assert!(err.to_string().starts_with("t.jinja:3:"), "{err}");
    }

    #[test]
    fn generation_tags_keep_positions() {
        let src = "{% generation %}x{% endgeneration %}{{ y.z }}";
        assert_eq!(replace_generation_tags(src).len(), src.len());
        let err = render(src).unwrap_err();
        assert_eq!(
            (err.line, err.column),
            (Some(1), Some(40)),
            "the column of `y.z`"
        );
    }

    #[test]
    fn bad_inputs_are_errors() {
        let messages = serde_json::json!([]);
        let kwargs = serde_json::Map::new();
        let input = RenderInput {
            messages: &messages,
            tools: None,
            add_generation_prompt: false,
            kwargs: &kwargs,
        };
        let err = ChatTemplate::new("x", "t.jinja")
            .unwrap()
            .render(&input)
            .unwrap_err();
        assert_eq!(err.kind, RenderErrorKind::Other);
        assert!(err.message.contains("empty conversation"));
    }
}
