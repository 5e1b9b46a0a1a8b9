//! The streaming parser: the reference's `ResponseParser` state machine.
//!
//! Text is appended to a buffer; each step searches every watched delimiter from the current
//! position, commits the earliest (then longest, then open-before-close, then alphabetical)
//! complete match that starts before every pending one, and emits text up to the earliest
//! pending delimiter. The rest is held back until more text (or the end of stream) decides it.

use std::ops::Range;
use std::sync::Arc;

use crate::content::{ContentError, PatternCache, parse_content};
use crate::delimiter::{DelimMatch, Delimiter, Scan, ScanResume};
use crate::event::{Event, EventKind, EventSink, RegionDetail, Step};
use crate::py::{self, ExceptionType};
use crate::template::{Field, Template};
use crate::tools::ToolSchemas;
use crate::transform::{Scope, Transform};
use crate::value::{Dict, Place, Value};
use pyregex::RegexError;

/// Why parsing failed: the exception the reference raises (its type and exact message), with
/// rtbench's own context (the field, the span) kept apart from the message.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// The exception's type: the reference's class, or [`ExceptionType::Rtbench`] for an error
    /// the reference never raises (it hangs or loops instead).
    pub kind: ExceptionType,
    /// The reference's exception message, exactly (Python's `str(e)`).
    pub message: String,
    /// The field whose region failed, if any.
    pub field: Option<String>,
    /// Where in the document the problem is: the region body, or a position inside it.
    pub span: Option<Range<usize>>,
    /// The body of the region whose value could not be made, when that is the problem.
    pub body: Option<Range<usize>>,
}

impl ParseError {
    fn new(kind: ExceptionType, message: impl Into<String>) -> ParseError {
        ParseError {
            kind,
            message: message.into(),
            field: None,
            span: None,
            body: None,
        }
    }

    /// The error as the reference prints it: `ValueError: <message>` (`rtbench: <message>`
    /// for rtbench's own errors).
    pub fn text(&self) -> String {
        format!("{}: {}", self.kind, self.message)
    }

    /// Whether this is rtbench's own error (the reference raises none there).
    pub fn is_rtbench(&self) -> bool {
        self.kind == ExceptionType::Rtbench
    }
}

impl std::fmt::Display for ParseError {
    /// `<Type>: <message>`, as [`ParseError::text`].
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A failed delimiter search from buffer offset `at` (the buffer starts at document offset
/// `origin`).
fn regex_failure(
    e: RegexError,
    field: &Field,
    which: &str,
    origin: usize,
    at: usize,
) -> ParseError {
    let delimiter = if which == "open" {
        &field.open
    } else {
        &field.close
    };
    let span = matches!(e, RegexError::Budget).then_some(origin + at..origin + at);
    let message = match (e, delimiter) {
        (RegexError::Budget, Some(Delimiter::Pattern(p))) => format!(
            "Field '{}': {which}_pattern {} backtracks catastrophically on this text, so the \
             search from byte {} of the prefix and generation was stopped (the reference \
             would hang or run out of memory here); avoid nested quantifiers such as (a*)*, \
             alternatives that overlap inside a repeat such as (a|aa)* and many capture groups \
             inside a repeat",
            field.name,
            Value::from(p.source()).py_repr(),
            origin + at,
        ),
        (e, _) => format!("Field '{}': {which} search failed: {e}", field.name),
    };
    ParseError {
        kind: ExceptionType::Rtbench,
        message,
        field: Some(field.name.clone()),
        span,
        body: None,
    }
}

/// Whether a parse error's message is the work-budget error (a pattern that backtracks
/// catastrophically), for tools that should not retry such a parse.
pub fn is_budget_error(message: &str) -> bool {
    message.contains(BUDGET_MARK)
}

/// The words that identify the work-budget error's message.
const BUDGET_MARK: &str = "backtracks catastrophically on this text";

/// Matcher steps every parser may spend whatever its text: whatever the reference does in ten
/// seconds (its parse of the same text would have to take longer for this to run out).
const BUDGET_BASE: u64 = pyregex::REFERENCE_TEN_SECONDS;

/// How many times over each byte a parser's searches may scan with each pattern's own
/// per-byte allowance (a stream re-scans held text on later feeds; normal templates stay far
/// below this).
const BUDGET_SCANS_PER_BYTE: u64 = 4;

/// Matcher steps granted per byte of text: a few scans of it with every pattern delimiter.
/// Computed once per parser: a stream fed one character at a time grants it on every feed.
fn budget_per_byte(template: &Template) -> u64 {
    let per_scan: u64 = template
        .fields()
        .iter()
        .flat_map(|f| [&f.open, &f.close])
        .filter_map(|d| match d {
            Some(Delimiter::Pattern(p)) => Some(p.regex.steps_per_byte()),
            _ => None,
        })
        .sum();
    BUDGET_SCANS_PER_BYTE * (per_scan + 64)
}

/// The reference's message for a missing prefix.
const PREFIX_REQUIRED: &str = "`ResponseParser`/`parse_response` requires `prefix` (the chat prompt \
     sent to the model before generation), because chat templates often pre-write part of the \
     assistant message (e.g. an opening `<think>` tag) that the parser must see to parse the \
     output correctly. If the generation already contains the complete message, pass \
     `prefix=\"\"` to opt out explicitly.";

/// Python frames the reference's constructor adds around prefix processing, compared with a
/// direct `feed` (they lower the nesting depth at which `json.loads` gives up).
const PREFIX_FRAMES: usize = 2;

/// Which events a parser records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Events {
    /// None: only the message is wanted (the reference's `parse_response`).
    None,
    /// The reference's events.
    Reference,
    /// The reference's events plus [`EventKind::Discard`] for text that goes to no field.
    Trace,
    /// [`Events::Trace`] with empty chunk and discard texts, for a caller that reads the text
    /// by span from the document (a long region's chunks are as long as its text).
    Spans,
    /// [`Events::Reference`] with empty chunk texts, for a caller that reads each chunk's text
    /// by its span (see [`Parser::text_at`]): a streaming client that hands every chunk on as
    /// a new object of its own, so that no chunk is copied twice.
    ReferenceSpans,
}

impl Events {
    /// Discards and region details are recorded.
    fn traced(self) -> bool {
        matches!(self, Events::Trace | Events::Spans)
    }

    /// The text of a chunk or discard event, as this kind of events records it.
    fn text(self, text: &str) -> String {
        match self {
            Events::Spans | Events::ReferenceSpans => String::new(),
            _ => text.to_string(),
        }
    }
}

/// The character 5.25 puts between the characters of a control-token spelling that the model
/// wrote with ordinary tokens, so that no delimiter matches it (`token_ids.MARKER`, a Unicode
/// noncharacter). Parsers of token ids strip it from every chunk and value.
pub const MARKER: char = '\u{FDD2}';

/// How a parser is driven: which events it records, whether its text is fed whole (the
/// reference's `parse_response`) or streamed, and whether the text was decoded from token ids
/// by 5.25's decoder (defused spellings carry [`MARKER`]s, stripped from events and values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The events recorded.
    pub events: Events,
    /// The whole text comes in one feed, as `parse_response` feeds it (this sets how deep
    /// `json.loads` may nest before the reference raises RecursionError).
    pub whole_text: bool,
    /// The text is 5.25's decoding of token ids: strip [`MARKER`] from chunks and values.
    pub token_ids: bool,
    /// With tracing, hold each region's values once: a repeating field's value is moved to the
    /// message instead of copied into its close event (the event's detail says which item of
    /// the field's list it is), and parsed content found whole inside the value is marked by
    /// its place instead of copied. A sample of many small regions then holds each value once,
    /// in the message, as the client of a stream would (what an audit records).
    pub values_once: bool,
    /// With events, a value appended to a repeating field's list is handed to its close event
    /// only: the message's list holds `None` in its place (its length and order are kept).
    /// For a caller that reads the values from the events as they come and has no use for
    /// the message's copies of them (a hash of the outcome).
    pub lists_in_events: bool,
}

impl Options {
    /// Streamed text, recording `events`.
    pub fn streamed(events: Events) -> Options {
        Options {
            events,
            whole_text: false,
            token_ids: false,
            values_once: false,
            lists_in_events: false,
        }
    }
}

/// Which delimiter of which field a watched entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Open = 0,
    Close = 1,
}

/// A committable match chosen by one scan step.
struct Best {
    role: Role,
    field: usize,
    m: DelimMatch,
}

/// A number for each parser made (see `Parser::id`).
fn next_parser_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A streaming parser for one generation.
#[derive(Debug)]
pub struct Parser {
    template: Template,
    tools: ToolSchemas,
    buffer: String,
    /// Document offset of `buffer[0]` (where the prefix was cut after the start anchor).
    origin: usize,
    pos: usize,
    output: Dict,
    current: Option<usize>,
    captures: Vec<(String, Value)>,
    /// Buffer range of the current region's body.
    body: Range<usize>,
    opened: bool,
    finalized: bool,
    patterns: PatternCache,
    events: Events,
    initial_events: Vec<Event>,
    /// The last scan of each delimiter (index `2 * field + role`), reused while still valid.
    scans: Vec<Option<CachedScan>>,
    /// The regex work this parser may still do: grows with the text fed (see
    /// [`budget_per_byte`]), so that any input ends in time linear in its length.
    budget: pyregex::Budget,
    /// The error that exhausted the budget: later feeds report it again without searching.
    exhausted: Option<ParseError>,
    /// Matcher steps granted per byte fed (fixed by the template: see [`budget_per_byte`]).
    budget_per_byte: u64,
    /// Bumped whenever `output` changes, so that a [`Suspended`] state can share an unchanged
    /// output with the previous one.
    revision: u64,
    /// When each field of `output` last changed and was last set whole, so that a
    /// [`Suspended`] state holds only what changed since the previous one.
    field_revs: Vec<(String, crate::snapshot::FieldRevs)>,
    /// This parser among all parsers (states lend their output only to states of the same
    /// parser, whose revisions they can compare).
    id: u64,
    /// The text is decoded from token ids: [`MARKER`]s are stripped from chunks and values.
    token_ids: bool,
    /// Traced values are held once (see [`Options::values_once`]).
    values_once: bool,
    /// Appended values are held by their close events only (see [`Options::lists_in_events`]).
    lists_in_events: bool,
}

/// A parser's state without its text: everything [`Parser::restore`] needs to continue as the
/// parser would have, given the text it had received (which only ever grows, so a caller that
/// keeps the document keeps every buffer). The output is shared between states taken while it
/// did not change, and a list or string that only grows is held as its length (restored from
/// a later output, see [`Parser::restore`]), so many states of a long stream cost little more
/// than one.
#[derive(Clone, Debug)]
pub struct Suspended {
    buffer_len: usize,
    origin: usize,
    pos: usize,
    output: Arc<crate::snapshot::Output>,
    revision: u64,
    current: Option<usize>,
    captures: Vec<(String, Value)>,
    body: Range<usize>,
    opened: bool,
    finalized: bool,
    scans: Vec<Option<CachedScan>>,
    budget: pyregex::Budget,
    exhausted: Option<ParseError>,
}

impl Suspended {
    /// Whether the output was taken from parser `id`.
    fn output_of(&self, id: u64) -> bool {
        self.output.parser() == id
    }

    /// Where the parser's text ends in the document.
    pub fn fed_to(&self) -> usize {
        self.origin + self.buffer_len
    }
}

/// A scan result and the conditions under which it was computed. On an unchanged buffer, a
/// search from any position between `from` and the result's start finds the same result, so
/// each delimiter scans each stretch of text once per buffer state instead of once per step.
#[derive(Debug, Clone)]
struct CachedScan {
    from: usize,
    buf_len: usize,
    eos: bool,
    result: Scan,
    /// What the scan learnt for the next scan of the grown buffer.
    resume: ScanResume,
}

impl CachedScan {
    fn reusable(&self, pos: usize, buf_len: usize, eos: bool) -> bool {
        let start = match &self.result {
            Scan::Nothing => usize::MAX,
            Scan::Pending(s) => *s,
            Scan::Complete(m) => m.start,
        };
        self.buf_len == buf_len && self.eos == eos && self.from <= pos && pos <= start
    }
}

/// A streaming parser: feed the generation chunk by chunk, get the events each chunk completes,
/// and finalize for the message. The events and the message are the reference's
/// (`ResponseParser`), whatever the chunking.
///
/// ```
/// use rtbench_engine::{EventKind, Parser, Template, Value};
///
/// let template = Template::from_json_str(r#"{
///   "start_anchor": "<|assistant|>",
///   "fields": {
///     "thinking": {"open": "<think>", "close": "</think>"},
///     "content": {"close": "<|end|>"}
///   }
/// }"#)?;
/// let mut parser = Parser::new(&template, Some("<|user|>Hi<|assistant|>"), None)?;
/// let mut events = parser.initial_events().to_vec();
/// for chunk in ["<thi", "nk>Hm.</th", "ink>Hel", "lo<|end|>"] {
///     events.extend(parser.feed(chunk)?);
/// }
/// let (message, last) = parser.finalize()?;
/// events.extend(last);
///
/// // A delimiter split across chunks is held back until it is known.
/// let thinking: String = events
///     .iter()
///     .filter(|e| e.field == template.field_index("thinking").unwrap())
///     .filter_map(|e| match &e.kind {
///         EventKind::Chunk { text, .. } => Some(text.as_str()),
///         _ => None,
///     })
///     .collect();
/// assert_eq!(thinking, "Hm.");
/// assert_eq!(message.get("content"), Some(&Value::from("Hello")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl Parser {
    /// Creates a parser and runs the prefix through it. `prefix` is required, as in the
    /// reference (`Some("")` opts out); `tools` is the optional list of tool schemas.
    pub fn new(
        template: &Template,
        prefix: Option<&str>,
        tools: Option<&Value>,
    ) -> Result<Parser, ParseError> {
        Parser::with_events(template, prefix, tools, Events::Reference)
    }

    /// Like [`Parser::new`], recording the given kind of events.
    pub fn with_events(
        template: &Template,
        prefix: Option<&str>,
        tools: Option<&Value>,
        events: Events,
    ) -> Result<Parser, ParseError> {
        Parser::with_options(template, prefix, tools, Options::streamed(events))
    }

    /// A parser for a whole text fed at once, like [`parse_response`] (same JSON nesting
    /// limit, hence the same result), but reporting `events` as well.
    pub fn for_whole_text(
        template: &Template,
        prefix: Option<&str>,
        tools: Option<&Value>,
        events: Events,
    ) -> Result<Parser, ParseError> {
        let options = Options {
            whole_text: true,
            ..Options::streamed(events)
        };
        Parser::with_options(template, prefix, tools, options)
    }

    /// A parser driven as `options` say. For token ids, `prefix` is the prompt's ids as 5.25's
    /// decoder turned them into text (fed and flushed).
    pub fn with_options(
        template: &Template,
        prefix: Option<&str>,
        tools: Option<&Value>,
        options: Options,
    ) -> Result<Parser, ParseError> {
        let json_depth = if options.whole_text {
            py::JSON_MAX_DEPTH_PARSE
        } else {
            py::JSON_MAX_DEPTH_STREAM
        };
        let mut parser = Parser::build(template.clone(), tools, options.events, json_depth)?;
        parser.token_ids = options.token_ids;
        parser.values_once = options.values_once && options.events.traced();
        parser.lists_in_events = options.lists_in_events && options.events != Events::None;
        parser.consume_prefix(prefix)?;
        Ok(parser)
    }

    /// A parser before its prefix; `json_depth` is how deep `json.loads` may nest when a
    /// region closes during a feed (it differs between the reference's entry points).
    fn build(
        template: Template,
        tools: Option<&Value>,
        events: Events,
        json_depth: usize,
    ) -> Result<Parser, ParseError> {
        let tools =
            ToolSchemas::from_tools(tools).map_err(|e| ParseError::new(e.kind, e.message))?;
        let mut patterns = PatternCache::default();
        patterns.json_depth = json_depth;
        patterns.reference = template.reference();
        let budget_per_byte = budget_per_byte(&template);
        Ok(Parser {
            output: template.defaults().clone(),
            current: template.implicit(),
            scans: vec![None; 2 * template.fields().len()],
            template,
            tools,
            buffer: String::new(),
            origin: 0,
            pos: 0,
            captures: Vec::new(),
            body: 0..0,
            opened: false,
            finalized: false,
            patterns,
            events,
            initial_events: Vec::new(),
            budget: pyregex::Budget::new(BUDGET_BASE),
            exhausted: None,
            budget_per_byte,
            revision: 0,
            field_revs: Vec::new(),
            id: next_parser_id(),
            token_ids: false,
            values_once: false,
            lists_in_events: false,
        })
    }

    /// The parser's state without its text (see [`Suspended`]); `previous`, a state taken
    /// earlier from this parser, lends its output when the output has not changed since.
    pub fn suspend(&self, previous: Option<&Suspended>) -> Suspended {
        let output = match previous {
            Some(p) if p.revision == self.revision && p.output_of(self.id) => Arc::clone(&p.output),
            _ => Arc::new(crate::snapshot::Output::take(
                &self.output,
                self.id,
                self.revision,
                &self.field_revs,
                previous.map(|p| &*p.output),
            )),
        };
        Suspended {
            buffer_len: self.buffer.len(),
            origin: self.origin,
            pos: self.pos,
            output,
            revision: self.revision,
            current: self.current,
            captures: self.captures.clone(),
            body: self.body.clone(),
            opened: self.opened,
            finalized: self.finalized,
            scans: self.scans.clone(),
            budget: self.budget.clone(),
            exhausted: self.exhausted.clone(),
        }
    }

    /// Puts this parser (made from the same template, prefix and tools) in a suspended state;
    /// `document` is the text the parser had received, from the start of the document (its
    /// part from [`Suspended::fed_to`] on is ignored). Continuing from here gives exactly the
    /// events and errors the suspended parser would have given.
    ///
    /// `lender` is the output of a parser that went through the state, at any later point:
    /// the message its stream finalized with, or what it had stored when it failed
    /// ([`Parser::take_output`]). A state holds a list or string that only grows (a repeating
    /// or joined field's) as its length, and takes the value's start from the lender.
    pub fn restore(&mut self, state: &Suspended, document: &str, lender: &Dict) {
        self.buffer.clear();
        self.buffer
            .push_str(&document[state.origin..state.origin + state.buffer_len]);
        self.origin = state.origin;
        self.pos = state.pos;
        // Always copied: revisions count one history of changes, and the restored one is not
        // the history this parser's earlier states were taken in (nor, after a restore into
        // the parser a state came from, the one its states taken after that state were): the
        // parser continues under a new id, so that no earlier state lends it anything, and
        // every field counts as set whole now.
        self.output = state.output.dict(lender);
        self.revision = state.revision;
        self.id = next_parser_id();
        let now = crate::snapshot::FieldRevs {
            changed: self.revision,
            replaced: self.revision,
        };
        self.field_revs = self.output.keys().map(|k| (k.to_owned(), now)).collect();
        self.current = state.current;
        self.captures.clone_from(&state.captures);
        self.body = state.body.clone();
        self.opened = state.opened;
        self.finalized = state.finalized;
        self.scans.clone_from(&state.scans);
        self.budget = state.budget.clone();
        self.exhausted.clone_from(&state.exhausted);
    }

    /// Makes room for `additional` bytes of text still to be fed, so that a long stream fed
    /// in small chunks grows the buffer once instead of by doubling (which holds the old and
    /// new buffers at once while it copies).
    pub fn reserve(&mut self, additional: usize) {
        self.buffer.reserve(additional);
    }

    /// The text the parser received (the document from [`Parser::origin`] on), taken out of
    /// it: a caller that parsed a whole text makes its document of it instead of another copy.
    pub fn take_text(&mut self) -> String {
        std::mem::take(&mut self.buffer)
    }

    /// Steps of regex work spent so far and still allowed.
    pub fn work(&self) -> (u64, u64) {
        (self.budget.spent(), self.budget.remaining())
    }

    /// Cuts the prefix after the last start anchor and runs the rest through the parser; its
    /// events become the initial events. A missing prefix is an error, as in the reference.
    fn consume_prefix(&mut self, prefix: Option<&str>) -> Result<(), ParseError> {
        let Some(prefix) = prefix else {
            return Err(ParseError::new(ExceptionType::ValueError, PREFIX_REQUIRED));
        };
        if prefix.is_empty() {
            return Ok(());
        }
        let cut = self
            .template
            .start_anchor()
            .last_match_end(prefix)
            .map_err(|e| {
                ParseError::new(
                    ExceptionType::Rtbench,
                    format!("start anchor search failed: {e}"),
                )
            })?
            .unwrap_or(0);
        self.origin = cut;
        if cut == prefix.len() {
            return Ok(());
        }
        self.buffer.push_str(&prefix[cut..]);
        self.budget.grant(
            self.budget_per_byte
                .saturating_mul((prefix.len() - cut) as u64),
        );
        let mut events = Vec::new();
        // The reference consumes the prefix two Python frames deeper than a feed.
        self.patterns.json_depth -= PREFIX_FRAMES;
        let result = self.process(&mut events, false);
        self.patterns.json_depth += PREFIX_FRAMES;
        result?;
        self.initial_events = events;
        Ok(())
    }

    /// Events produced while consuming the prefix.
    pub fn initial_events(&self) -> &[Event] {
        &self.initial_events
    }

    /// The template this parser runs.
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// Document offset where the parsed part of the prefix begins (after the last start anchor).
    pub fn origin(&self) -> usize {
        self.origin
    }

    /// Document range of text received but not yet routed to any region (held back because a
    /// delimiter may be starting there).
    pub fn held(&self) -> Range<usize> {
        self.origin + self.pos..self.origin + self.buffer.len()
    }

    /// The text at `span`, a document range of text the parser has received (an event's span,
    /// [`Parser::held`]); `None` for a range before [`Parser::origin`], past what was fed, or
    /// not on character boundaries.
    pub fn text_at(&self, span: Range<usize>) -> Option<&str> {
        let start = span.start.checked_sub(self.origin)?;
        let end = span.end.checked_sub(self.origin)?;
        self.buffer.get(start..end)
    }

    /// The message built so far (before end-of-stream filtering).
    pub fn output(&self) -> &Dict {
        &self.output
    }

    /// The field whose region is currently receiving text, if any.
    pub fn current_field(&self) -> Option<usize> {
        self.current.filter(|_| self.opened)
    }

    /// Feeds more generated text and returns the events it produced.
    pub fn feed(&mut self, text: &str) -> Result<Vec<Event>, ParseError> {
        let mut events = Vec::new();
        self.feed_into(text, &mut events)?;
        Ok(events)
    }

    /// Like [`Parser::feed`], appending the events to `events` as they happen: when the feed
    /// fails, the events before the error are there (a view can show what led up to it).
    /// `events` may be any [`EventSink`]: a list, or a caller's fold that keeps less.
    pub fn feed_into<S: EventSink>(
        &mut self,
        text: &str,
        events: &mut S,
    ) -> Result<(), ParseError> {
        if self.finalized {
            return Err(ParseError::new(
                ExceptionType::RuntimeError,
                "ResponseParser already finalized",
            ));
        }
        // When the buffer grows anyway, one spare byte: pattern delimiters probe the buffer's
        // growth by appending a character, which would otherwise double a long text's buffer
        // (and hold both while it copies). A buffer the caller reserved is left as it is.
        if self.buffer.capacity() - self.buffer.len() < text.len() {
            self.buffer.reserve(text.len() + 1);
        }
        self.buffer.push_str(text);
        self.budget
            .grant(self.budget_per_byte.saturating_mul(text.len() as u64));
        // Text in which no watched delimiter can begin, after a buffer where nothing was held,
        // goes where a scan would send it (the open region, or nowhere) without a scan: most
        // tokens of a stream.
        if self.exhausted.is_none()
            && self.pos + text.len() == self.buffer.len()
            && self
                .template
                .watched_start_bytes(self.current)
                .is_some_and(|set| !set.any_in(text.as_bytes()))
        {
            let end = self.buffer.len();
            self.accumulate(events, self.pos..end);
            self.pos = end;
            return Ok(());
        }
        self.process(events, false)
    }

    /// Like [`Parser::feed`] for text the caller owns: a first feed takes it over instead of
    /// copying it (one-shot parsing of large generations).
    pub fn feed_string(&mut self, text: String) -> Result<Vec<Event>, ParseError> {
        let mut events = Vec::new();
        self.feed_string_into(text, &mut events)?;
        Ok(events)
    }

    /// [`Parser::feed_string`], giving the events to `events` as they come.
    pub fn feed_string_into<S: EventSink>(
        &mut self,
        mut text: String,
        events: &mut S,
    ) -> Result<(), ParseError> {
        if self.buffer.is_empty() && !self.finalized {
            // The spare byte `feed_into` leaves (a pattern delimiter's growth probe appends
            // one character); a large block grows in place.
            if text.capacity() == text.len() {
                text.reserve_exact(1);
            }
            self.buffer = text;
            self.budget.grant(
                self.budget_per_byte
                    .saturating_mul(self.buffer.len() as u64),
            );
            return self.process(events, false);
        }
        self.feed_into(&text, events)
    }

    /// Ends the stream: flushes held text, closes the open region, checks required fields and
    /// drops empty values. Returns the message and the final events.
    pub fn finalize(&mut self) -> Result<(Dict, Vec<Event>), ParseError> {
        let mut events = Vec::new();
        let message = self.finalize_into(&mut events)?;
        Ok((message, events))
    }

    /// Like [`Parser::finalize`], appending the final events to `events` as they happen (kept
    /// when it fails).
    pub fn finalize_into<S: EventSink>(&mut self, events: &mut S) -> Result<Dict, ParseError> {
        self.finalize_with(events, "")
    }

    /// Ends the stream after appending `tail` without a step of its own: the text a token-id
    /// decoder still held, which the reference's `finalize` adds to the buffer before its
    /// end-of-stream step.
    pub fn finalize_with<S: EventSink>(
        &mut self,
        events: &mut S,
        tail: &str,
    ) -> Result<Dict, ParseError> {
        if self.finalized {
            return Err(ParseError::new(
                ExceptionType::RuntimeError,
                "ResponseParser already finalized",
            ));
        }
        if !tail.is_empty() {
            self.buffer.push_str(tail);
            self.budget
                .grant(self.budget_per_byte.saturating_mul(tail.len() as u64));
        }
        self.process(events, true)?;
        let missing: Vec<Value> = self
            .template
            .fields()
            .iter()
            .filter(|f| !f.optional && !self.output.contains_key(&f.name))
            .map(|f| Value::from(f.name.as_str()))
            .collect();
        if !missing.is_empty() {
            return Err(ParseError::new(
                ExceptionType::ValueError,
                format!(
                    "Required response_template fields missing from parsed output: {}",
                    Value::List(missing).py_repr()
                ),
            ));
        }
        let defaults = &self.template.defaults();
        self.revision += 1;
        let message = std::mem::take(&mut self.output)
            .into_iter()
            .filter(|(k, v)| defaults.contains_key(k) || !v.is_empty_value())
            .collect();
        self.finalized = true;
        Ok(message)
    }

    /// Runs [`Parser::process_text`] within the parser's work budget. Once the budget is
    /// exhausted the parser stays failed: every later feed reports the same error at once
    /// instead of spending the work again.
    fn process(&mut self, events: &mut dyn EventSink, eos: bool) -> Result<(), ParseError> {
        if let Some(e) = &self.exhausted {
            return Err(e.clone());
        }
        let mut budget = std::mem::take(&mut self.budget);
        let result = budget.run(|| self.process_text(events, eos));
        self.budget = budget;
        if let Err(e) = &result
            && self.budget.remaining() == 0
        {
            self.exhausted = Some(e.clone());
        }
        result
    }

    fn process_text(&mut self, events: &mut dyn EventSink, eos: bool) -> Result<(), ParseError> {
        // States seen since the position last moved: coming back to one means empty matches
        // are opening and closing regions at the same place forever.
        let mut still_at = self.pos;
        let mut seen: Vec<(Option<usize>, bool)> = Vec::new();
        loop {
            let (best, hold_start) = self.scan(eos)?;
            if let Some(Best { role, field, m }) = best {
                if m.end == still_at {
                    if seen.contains(&(self.current, self.opened)) {
                        return Err(self.no_progress(field));
                    }
                    seen.push((self.current, self.opened));
                } else {
                    still_at = m.end;
                    seen.clear();
                }
                if m.start > self.pos {
                    self.accumulate(events, self.pos..m.start);
                }
                self.pos = m.end;
                match role {
                    Role::Open => {
                        self.close_current(events, m.start..m.start)?;
                        self.open_explicit(events, field, m);
                    }
                    Role::Close => {
                        let had_content = self.opened;
                        for (name, value) in &m.captures {
                            if let Some(v) = value {
                                self.set_capture(name, Value::Str(v.clone()));
                            }
                        }
                        self.close_current(events, m.start..m.end)?;
                        // A zero-width close on a region that never opened would fire again
                        // at once: stop here, as the reference does.
                        if !had_content && m.is_empty() {
                            break;
                        }
                    }
                }
                continue;
            }
            if eos {
                if self.pos < self.buffer.len() {
                    self.accumulate(events, self.pos..self.buffer.len());
                    self.pos = self.buffer.len();
                }
                let end = self.buffer.len();
                self.close_current(events, end..end)?;
                break;
            }
            if hold_start > self.pos {
                self.accumulate(events, self.pos..hold_start);
                self.pos = hold_start;
            }
            break;
        }
        Ok(())
    }

    /// One pass over the watched delimiters: the committable match, if any, and where held
    /// text begins (the buffer end when nothing is pending).
    fn scan(&mut self, eos: bool) -> Result<(Option<Best>, usize), ParseError> {
        let template = self.template.clone();
        // The winner so far as (role, field, start, end); its match stays in the scan cache
        // and is taken out only if it is committed.
        let mut best: Option<(Role, usize, usize, usize)> = None;
        let mut hold_start = self.buffer.len();
        let mut consider = |role: Role, field: usize, delim: &Delimiter, parser: &mut Parser| {
            let slot = 2 * field + role as usize;
            let (pos, buf_len) = (parser.pos, parser.buffer.len());
            if !matches!(&parser.scans[slot], Some(c) if c.reusable(pos, buf_len, eos)) {
                let mut resume = parser.scans[slot]
                    .take()
                    .map(|c| c.resume)
                    .unwrap_or_default();
                let result = delim
                    .scan_resuming(&mut parser.buffer, pos, eos, &mut resume)
                    .map_err(|e| {
                        let which = if role == Role::Open { "open" } else { "close" };
                        regex_failure(e, &template.fields()[field], which, parser.origin, pos)
                    })?;
                parser.scans[slot] = Some(CachedScan {
                    from: pos,
                    buf_len,
                    eos,
                    result,
                    resume,
                });
            }
            match parser.scans[slot].as_ref().map(|c| &c.result) {
                None | Some(Scan::Nothing) => {}
                Some(Scan::Pending(start)) => hold_start = hold_start.min(*start),
                Some(Scan::Complete(m)) => {
                    let key = |s: usize, e: usize, r: Role, f: usize| {
                        (
                            s,
                            std::cmp::Reverse(e - s),
                            r,
                            template.fields()[f].name.as_str(),
                        )
                    };
                    let better = best.is_none_or(|(r, f, s, e)| {
                        key(m.start, m.end, role, field) < key(s, e, r, f)
                    });
                    if better {
                        best = Some((role, field, m.start, m.end));
                    }
                }
            }
            Ok::<(), ParseError>(())
        };
        for (close, field, delim) in template.watched(self.current) {
            let role = if close { Role::Close } else { Role::Open };
            consider(role, field, delim, self)?;
        }
        // A complete match at or after a pending one must wait: the pending delimiter starts no
        // later and may be the one that fires.
        let best = best
            .filter(|&(_, _, start, _)| start < hold_start)
            .and_then(|(role, field, _, _)| {
                // Committed: its position moves past this scan, so the cached match is spent.
                match self.scans[2 * field + role as usize].take()?.result {
                    Scan::Complete(m) => Some(Best { role, field, m }),
                    _ => None,
                }
            });
        Ok((best, hold_start))
    }

    /// The error for delimiters that match empty text over and over at one position (the
    /// reference loops forever there, storing empty regions).
    fn no_progress(&self, field: usize) -> ParseError {
        let name = &self.template.fields()[field].name;
        let at = self.origin + self.pos;
        ParseError {
            kind: ExceptionType::Rtbench,
            message: format!(
                "Field '{name}': its delimiters match empty text at the same position (document \
                 offset {at}) again and again, so parsing cannot move on (the reference loops \
                 forever here); make the open or close delimiter match at least one character"
            ),
            field: Some(name.clone()),
            span: Some(at..at),
            body: None,
        }
    }

    fn set_capture(&mut self, name: &str, value: Value) {
        match self.captures.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.captures.push((name.to_string(), value)),
        }
    }

    /// Routes buffer text to the current region (or discards it when there is none).
    fn accumulate(&mut self, events: &mut dyn EventSink, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        let span = self.origin + range.start..self.origin + range.end;
        let Some(cur) = self.current else {
            if self.events.traced() {
                let text = self.events.text(&self.buffer[range]);
                events.record(Event {
                    field: usize::MAX,
                    kind: EventKind::Discard { text },
                    span,
                    detail: None,
                });
            }
            return;
        };
        let emit = self.events != Events::None;
        if !self.opened {
            if emit {
                events.record(Event {
                    field: cur,
                    kind: EventKind::Open,
                    span: span.start..span.start,
                    detail: None,
                });
            }
            self.opened = true;
            self.body = range.start..range.start;
        }
        self.body.end = range.end;
        if emit {
            let text = if self.token_ids {
                self.events.text(&strip_markers_str(&self.buffer[range]))
            } else {
                self.events.text(&self.buffer[range])
            };
            let dirty = self.template.fields()[cur].dirty();
            events.record(Event {
                field: cur,
                kind: EventKind::Chunk { text, dirty },
                span,
                detail: None,
            });
        }
    }

    fn open_explicit(&mut self, events: &mut dyn EventSink, field: usize, m: DelimMatch) {
        self.current = Some(field);
        self.captures = m
            .captures
            .into_iter()
            .filter_map(|(n, v)| v.map(|v| (n, Value::Str(v))))
            .collect();
        self.body = m.end..m.end;
        self.opened = true;
        if self.events != Events::None {
            events.record(Event {
                field,
                kind: EventKind::Open,
                span: self.origin + m.start..self.origin + m.end,
                detail: None,
            });
        }
    }

    /// Closes the current region (parsing and storing its value) and returns to the implicit
    /// region. `at` is the buffer range of the delimiter that ends it.
    fn close_current(
        &mut self,
        events: &mut dyn EventSink,
        at: Range<usize>,
    ) -> Result<(), ParseError> {
        let Some(cur) = self.current.filter(|_| self.opened) else {
            self.reset_to_implicit();
            return Ok(());
        };
        let template = self.template.clone();
        let field = &template.fields()[cur];
        let mut detail = self.events.traced().then(|| {
            Box::new(RegionDetail {
                body: self.origin + self.body.start..self.origin + self.body.end,
                captures: self.captures.clone(),
                parsed: Value::Null,
                transformed: None,
                kept_as_value: crate::event::Step::None,
                parsed_at: None,
                value_item: None,
            })
        });
        let value = self.region_value(field, detail.as_deref_mut())?;
        if self.events == Events::None {
            self.store(field, value)?;
        } else if let Some(item) = self.appended_at(field).filter(|_| self.values_once) {
            // The message's list holds the value: the event says where instead of copying it.
            if let Some(d) = detail.as_deref_mut() {
                d.value_item = Some(item);
            }
            self.store(field, value)?;
            events.record(Event {
                field: cur,
                kind: EventKind::Close { value: Value::Null },
                span: self.origin + at.start..self.origin + at.end,
                detail,
            });
        } else {
            // (The field's list is looked up only when the values go to the events alone.)
            let stored = if self.lists_in_events && self.appended_at(field).is_some() {
                Value::Null
            } else {
                value.clone()
            };
            self.store(field, stored)?;
            events.record(Event {
                field: cur,
                kind: EventKind::Close { value },
                span: self.origin + at.start..self.origin + at.end,
                detail,
            });
        }
        self.reset_to_implicit();
        Ok(())
    }

    /// The message made so far, taken out of the parser (what a failed parse had stored).
    pub fn take_output(&mut self) -> Dict {
        std::mem::take(&mut self.output)
    }

    /// The index the field's next value takes in the output's list, when storing it appends to
    /// a list (a repeating field without `join`).
    fn appended_at(&self, field: &Field) -> Option<usize> {
        if !field.repeats || field.join.is_some() {
            return None;
        }
        match self.output.get(field.name.as_str()) {
            None => Some(0),
            Some(Value::List(items)) => Some(items.len()),
            Some(_) => None,
        }
    }

    /// Content parser, then transform, then tool coercion (the reference's `process_field`).
    fn region_value(
        &mut self,
        field: &Field,
        mut detail: Option<&mut RegionDetail>,
    ) -> Result<Value, ParseError> {
        let body_range = self.body.clone();
        let fail = RegionFail {
            field: &field.name,
            body: self.origin + body_range.start..self.origin + body_range.end,
        };
        let body = &self.buffer[body_range];
        let parsed = parse_content(
            Some(body),
            field.content,
            &field.content_args,
            &mut self.patterns,
        )
        .map_err(
            |ContentError {
                 kind,
                 message,
                 offset,
             }| fail.at(kind, message, offset),
        )?;
        // A traced step that nothing changes afterwards is the value itself: it is marked so
        // rather than copied (a sample of many small regions would hold each value twice or
        // three times over). Marker stripping treats the traced steps as it treats the value, so
        // only tool coercion can make the value differ from its last step; where it runs, the
        // step is copied and dropped again if it came out the same.
        let later = !self.tools.is_empty();
        let last_step = if field.transform.is_some() {
            Step::Transformed
        } else {
            Step::Parsed
        };
        let keep_parsed = detail.is_some() && (later || last_step != Step::Parsed);
        // How deep the reference's recursive walks may go depends on the entry point.
        let path = py::Path::of_json_depth(self.patterns.json_depth);
        let budget = py::transform_budget(path);
        let mut value = match &field.transform {
            None => {
                if keep_parsed && let Some(d) = detail.as_deref_mut() {
                    d.parsed = parsed.clone();
                }
                parsed
            }
            // Untraced, a transform that names the whole content once gets it moved into its
            // place rather than copied (a tool call's arguments, say).
            Some(t)
                if !field.transform_each
                    && !keep_parsed
                    && let Some(slot) = &field.content_slot =>
            {
                let mut value = self.transform_whole(t, &Value::Null, budget, &fail)?;
                if let Some(place) = crate::transform::slot_mut(&mut value, slot) {
                    *place = parsed;
                }
                value
            }
            // The transform reads the content without taking it: the trace keeps it as made.
            Some(t) if !field.transform_each => {
                let value = self.transform_whole(t, &parsed, budget, &fail)?;
                if keep_parsed && let Some(d) = detail.as_deref_mut() {
                    d.parsed = parsed;
                }
                value
            }
            Some(t) => {
                if keep_parsed && let Some(d) = detail.as_deref_mut() {
                    d.parsed = parsed.clone();
                }
                self.transformed(field, t, parsed, budget, &fail)?
            }
        };
        if let Some(d) = detail.as_deref_mut()
            && field.transform.is_some()
            && later
        {
            d.transformed = Some(value.clone());
        }
        if self.token_ids {
            strip_region_markers(&mut value, detail.as_deref_mut(), path, &fail)?;
        }
        if !self.tools.is_empty() {
            self.coerce_tool_calls(field, &mut value, path, &fail)?;
        }
        if let Some(d) = detail {
            let same = !later
                || match last_step {
                    Step::Parsed => d.parsed.identical(&value),
                    _ => d.transformed.as_ref().is_some_and(|t| t.identical(&value)),
                };
            if same {
                d.kept_as_value = last_step;
                match last_step {
                    Step::Parsed => d.parsed = Value::Null,
                    _ => d.transformed = None,
                }
            }
            // Parsed content the transform put whole into the value is marked by its place
            // there, and dropped at once (its room goes to the next region's values).
            if self.values_once
                && d.kept_as_value != Step::Parsed
                && let Some(place) = Place::find(&value, &d.parsed)
            {
                d.parsed_at = Some(place);
                d.parsed = Value::Null;
            }
        }
        Ok(value)
    }

    /// The transform applied to the whole parsed content (no `transform_each`).
    fn transform_whole(
        &self,
        t: &Transform,
        parsed: &Value,
        budget: py::Budget,
        fail: &RegionFail<'_>,
    ) -> Result<Value, ParseError> {
        let scope = ContentScope {
            captures: &self.captures,
            content: parsed,
        };
        t.apply_within(&scope, budget)
            .map_err(|e| fail.at(e.kind, e.message, None))
    }

    /// The field's transform applied to the parsed content, or with `transform_each` to each
    /// element of the parsed list (each a dict).
    fn transformed(
        &self,
        field: &Field,
        t: &Transform,
        parsed: Value,
        budget: py::Budget,
        fail: &RegionFail<'_>,
    ) -> Result<Value, ParseError> {
        if !field.transform_each {
            return self.transform_whole(t, &parsed, budget, fail);
        }
        let Value::List(items) = parsed else {
            return Err(fail.at(
                ExceptionType::ValueError,
                format!(
                    "Field '{}': transform_each requires the parsed content to be a list, got {}.",
                    field.name,
                    parsed.type_name()
                ),
                None,
            ));
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Value::Dict(item) = item else {
                return Err(fail.at(
                    ExceptionType::ValueError,
                    format!(
                        "Field '{}': transform_each requires each list element to be a dict, got {}.",
                        field.name,
                        item.type_name()
                    ),
                    None,
                ));
            };
            let scope = EachScope {
                captures: &self.captures,
                item: &item,
            };
            out.push(
                t.apply_within(&scope, budget)
                    .map_err(|e| fail.at(e.kind, e.message, None))?,
            );
        }
        Ok(Value::List(out))
    }

    /// Casts tool-call arguments in `value` to the tool schemas' types (the reference's
    /// `_coerce_tool_calls`), unless 5.25's `value_parser_by` already chose how to read them.
    fn coerce_tool_calls(
        &self,
        field: &Field,
        value: &mut Value,
        path: py::Path,
        fail: &RegionFail<'_>,
    ) -> Result<(), ParseError> {
        let reference = self.template.reference();
        // 5.25: with `value_parser_by` the model's own output says how to read each value,
        // which the tool schema must not undo (`"value_parser_by" not in content_args`).
        let skip = reference.value_parser_by()
            && py_contains(&field.content_args, "value_parser_by")
                .map_err(|e| fail.at(ExceptionType::TypeError, e, None))?;
        if skip {
            return Ok(());
        }
        // `_coerce_tool_calls` sits one frame shallower than the content parser.
        let depth = self.patterns.json_depth + 1;
        let typed = reference.typed_coercion() && field.content.is_typed_structured();
        self.tools
            .coerce(value, depth, typed, py::coerce_budget(path))
            .map_err(|e| fail.at(e.kind, e.message, None))
    }

    /// Stores a closed region's value: joined, appended or replaced.
    fn store(&mut self, field: &Field, value: Value) -> Result<(), ParseError> {
        self.revision += 1;
        let name = field.name.as_str();
        // Joined onto a string or appended to a list the value grows; otherwise (and when the
        // field has no string or list yet) it is set whole.
        let grows = match self.output.get(name) {
            Some(Value::Str(_)) => field.join.is_some(),
            Some(Value::List(_)) => field.repeats && field.join.is_none(),
            _ => false,
        };
        self.mark_changed(name, grows);
        if let Some(sep) = &field.join {
            let Value::Str(s) = value else {
                return Err(ParseError {
                    kind: ExceptionType::ValueError,
                    message: format!(
                        "Field '{name}': 'join' requires each match to parse to a string, got {}.",
                        value.type_name()
                    ),
                    field: Some(name.to_string()),
                    span: None,
                    body: None,
                });
            };
            let joined = match self.output.get(name) {
                None | Some(Value::Null) => s,
                Some(Value::Str(prev)) => format!("{prev}{sep}{s}"),
                // `previous + field.join + value`
                Some(other) => {
                    return Err(ParseError {
                        kind: ExceptionType::TypeError,
                        message: match other {
                            Value::List(_) => {
                                "can only concatenate list (not \"str\") to list".to_string()
                            }
                            _ => format!(
                                "unsupported operand type(s) for +: '{}' and 'str'",
                                other.type_name()
                            ),
                        },
                        field: Some(name.to_string()),
                        span: None,
                        body: None,
                    });
                }
            };
            self.output.insert(name, Value::Str(joined));
        } else if field.repeats {
            match self.output.get_mut(name) {
                None => {
                    self.output.insert(name, Value::List(vec![value]));
                }
                Some(Value::List(items)) => items.push(value),
                Some(other) => {
                    // `self._output.setdefault(name, []).append(value)`
                    return Err(ParseError {
                        kind: ExceptionType::AttributeError,
                        message: format!(
                            "'{}' object has no attribute 'append'",
                            other.type_name()
                        ),
                        field: Some(name.to_string()),
                        span: None,
                        body: None,
                    });
                }
            }
        } else {
            self.output.insert(name, value);
        }
        Ok(())
    }

    /// Records that field `name` changed at the current revision (`grew`: only by appending).
    fn mark_changed(&mut self, name: &str, grew: bool) {
        let rev = self.revision;
        match self.field_revs.iter_mut().find(|(n, _)| n == name) {
            Some((_, r)) => {
                r.changed = rev;
                if !grew {
                    r.replaced = rev;
                }
            }
            None => self.field_revs.push((
                name.to_string(),
                crate::snapshot::FieldRevs {
                    changed: rev,
                    replaced: rev,
                },
            )),
        }
    }

    fn reset_to_implicit(&mut self) {
        self.current = self.template.implicit();
        self.captures.clear();
        self.body = self.pos..self.pos;
        self.opened = false;
    }
}

/// Where a region's errors point: its field and its body's document span.
struct RegionFail<'a> {
    field: &'a str,
    body: Range<usize>,
}

impl RegionFail<'_> {
    /// The region's error: spanning the whole body, or at `offset` into it.
    fn at(&self, kind: ExceptionType, message: String, offset: Option<usize>) -> ParseError {
        ParseError {
            kind,
            message,
            field: Some(self.field.to_string()),
            span: Some(match offset {
                Some(o) => self.body.start + o..self.body.start + o,
                None => self.body.clone(),
            }),
            body: Some(self.body.clone()),
        }
    }
}

/// Strips the decoder's [`MARKER`]s from a region's value and its traced steps, failing as
/// the reference does when the value nests deeper than its walk may go.
fn strip_region_markers(
    value: &mut Value,
    detail: Option<&mut RegionDetail>,
    path: py::Path,
    fail: &RegionFail<'_>,
) -> Result<(), ParseError> {
    let budget = py::strip_markers_budget(path);
    if py::walk_frames(value) > budget.frames {
        return Err(fail.at(
            ExceptionType::RecursionError,
            budget.message.to_string(),
            None,
        ));
    }
    strip_markers(value);
    // The region's steps as a person reads them (the markers are the decoder's).
    if let Some(d) = detail {
        strip_markers(&mut d.parsed);
        if let Some(t) = &mut d.transformed {
            strip_markers(t);
        }
    }
    Ok(())
}

/// `text` without [`MARKER`]s (borrowed when it has none).
fn strip_markers_str(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(MARKER) {
        text.replace(MARKER, "").into()
    } else {
        text.into()
    }
}

/// The reference's `strip_markers`: [`MARKER`]s removed from every string of a value, dict
/// keys included (keys that become equal merge: the last value wins, at the first key's place).
fn strip_markers(value: &mut Value) {
    match value {
        Value::Str(s) if s.contains(MARKER) => *s = s.replace(MARKER, ""),
        Value::List(items) => items.iter_mut().for_each(strip_markers),
        Value::Dict(d) if d.keys().any(|k| k.contains(MARKER)) => {
            *d = std::mem::take(d)
                .into_iter()
                .map(|(k, mut v)| {
                    strip_markers(&mut v);
                    (strip_markers_str(&k).into_owned(), v)
                })
                .collect();
        }
        Value::Dict(d) => d.values_mut().for_each(strip_markers),
        _ => {}
    }
}

/// Python's `needle in container` for a JSON value: a dict's keys, a list's items, a string's
/// substrings; anything else raises TypeError.
fn py_contains(container: &Value, needle: &str) -> Result<bool, String> {
    match container {
        Value::Dict(d) => Ok(d.contains_key(needle)),
        Value::List(items) => Ok(items.iter().any(|v| v.as_str() == Some(needle))),
        Value::Str(s) => Ok(s.contains(needle)),
        other => Err(format!(
            "argument of type '{}' is not iterable",
            other.type_name()
        )),
    }
}

/// Transform scope `{**captures, "content": value}`.
struct ContentScope<'a> {
    captures: &'a [(String, Value)],
    content: &'a Value,
}

/// Transform scope `{**captures, **item}` for `transform_each`.
struct EachScope<'a> {
    captures: &'a [(String, Value)],
    item: &'a Dict,
}

fn capture_value<'a>(captures: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    captures.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

impl Scope for ContentScope<'_> {
    fn get(&self, name: &str) -> Option<&Value> {
        if name == "content" {
            return Some(self.content);
        }
        capture_value(self.captures, name)
    }
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.captures.iter().map(|(n, _)| n.clone()).collect();
        if !v.iter().any(|n| n == "content") {
            v.push("content".into());
        }
        v
    }
}

impl Scope for EachScope<'_> {
    fn get(&self, name: &str) -> Option<&Value> {
        self.item
            .get(name)
            .or_else(|| capture_value(self.captures, name))
    }
    fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.captures.iter().map(|(n, _)| n.clone()).collect();
        for k in self.item.keys() {
            if !v.iter().any(|n| n == k) {
                v.push(k.to_owned());
            }
        }
        v
    }
}

/// Parses a whole generation at once (the reference's `parse_response`). `prefix` is the
/// prompt the generation continues (required, as in the reference: `Some("")` opts out);
/// `tools` the tool schemas that coerce tool-call arguments.
///
/// A failure carries the reference's message, the field and where in the document:
///
/// ```
/// use rtbench_engine::{Template, parse_response};
///
/// let template = Template::from_json_str(r#"{
///   "start_anchor": "<|assistant|>",
///   "fields": {
///     "content": {"close": "<|end|>"},
///     "tool_calls": {"open": "<tool>", "close": "</tool>", "content": "json"}
///   }
/// }"#)?;
/// let err = parse_response(&template, Some("<|assistant|>"), "Hi<tool>{\"name\": </tool>", None)
///     .unwrap_err();
/// assert_eq!(err.field.as_deref(), Some("tool_calls"));
/// assert!(err.message.contains("Expecting value"), "{}", err.message);
///
/// // The prefix is required, as in the reference.
/// assert!(parse_response(&template, None, "Hi", None).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn parse_response(
    template: &Template,
    prefix: Option<&str>,
    text: &str,
    tools: Option<&Value>,
) -> Result<Dict, ParseError> {
    // One spare byte: pattern delimiters probe the buffer's growth by appending a character,
    // which would otherwise copy the whole text once more.
    let mut owned = String::with_capacity(text.len() + 1);
    owned.push_str(text);
    parse_response_owned(template, prefix, owned, tools)
}

/// [`parse_response`] for a generation the caller owns (no copy of it is made).
pub fn parse_response_owned(
    template: &Template,
    prefix: Option<&str>,
    text: String,
    tools: Option<&Value>,
) -> Result<Dict, ParseError> {
    let mut parser = Parser::build(
        template.clone(),
        tools,
        Events::None,
        py::JSON_MAX_DEPTH_PARSE,
    )?;
    parser.consume_prefix(prefix)?;
    parser.feed_string(text)?;
    Ok(parser.finalize()?.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::load_template;

    fn template(json: &str) -> Template {
        load_template(&py::json_loads(json).unwrap()).unwrap()
    }

    fn smollm3() -> Template {
        template(
            r#"{"start_anchor": "<|im_start|>assistant\n", "defaults": {"role": "assistant"},
                "fields": {"thinking": {"open": "<think>", "close": "</think>"},
                           "content": {"close": "<|im_end|>"}}}"#,
        )
    }

    #[test]
    fn feeding_or_finalizing_after_finalize_is_an_error() {
        let mut p = Parser::new(&smollm3(), Some(""), None).unwrap();
        p.feed("hi").unwrap();
        p.finalize().unwrap();
        assert_eq!(
            p.feed("more").unwrap_err().message,
            "ResponseParser already finalized"
        );
        assert_eq!(
            p.finalize().unwrap_err().message,
            "ResponseParser already finalized"
        );
    }

    #[test]
    fn a_missing_prefix_is_an_error_and_an_empty_one_opts_out() {
        assert!(Parser::new(&smollm3(), None, None).is_err());
        assert!(Parser::new(&smollm3(), Some(""), None).is_ok());
    }

    #[test]
    fn partial_delimiters_are_held_until_resolved() {
        let mut p = Parser::new(&smollm3(), Some(""), None).unwrap();
        let evs = p.feed("Hello <thi").unwrap();
        let text: String = evs
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Chunk { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "Hello ");
        assert_eq!(p.held(), 6..10);
        // The held text turns out not to be a delimiter: it is released.
        let evs = p.feed("s is text").unwrap();
        assert!(matches!(&evs[0].kind, EventKind::Chunk { text, .. } if text == "<this is text"));
        assert_eq!(p.held(), 19..19);
    }

    #[test]
    fn prefix_is_cut_after_the_last_anchor_and_its_events_come_first() {
        let prefix = "<|im_start|>assistant\nold<|im_end|><|im_start|>assistant\n<think>";
        let p = Parser::new(&smollm3(), Some(prefix), None).unwrap();
        assert_eq!(p.origin(), prefix.len() - "<think>".len());
        let ev = &p.initial_events()[0];
        assert_eq!(ev.kind, EventKind::Open);
        assert_eq!(ev.span, p.origin()..prefix.len());
        let mut p = p;
        p.feed("plan</think>answer<|im_end|>").unwrap();
        let (message, _) = p.finalize().unwrap();
        assert_eq!(message["thinking"], Value::from("plan"));
        assert_eq!(message["content"], Value::from("answer"));
    }

    #[test]
    fn empty_delimiters_that_never_advance_are_an_error_not_a_hang() {
        for repeats in ["true", "false"] {
            let t = template(&format!(
                r#"{{"start_anchor": "<s>", "fields": {{"t": {{"open_pattern": "", "close_pattern": "", "repeats": {repeats}}}}}}}"#
            ));
            let mut p = Parser::new(&t, Some(""), None).unwrap();
            let err = p.feed("abc").unwrap_err();
            assert!(err.message.contains("again and again"), "{}", err.message);
        }
        // An empty open with a real close makes progress and is fine.
        let t = template(
            r#"{"start_anchor": "<s>", "fields": {"t": {"open_pattern": "", "close": "x", "repeats": true}}}"#,
        );
        let mut p = Parser::new(&t, Some(""), None).unwrap();
        p.feed("axbx").unwrap();
        let (m, _) = p.finalize().unwrap();
        assert_eq!(m["t"], py::json_loads(r#"["a", "b"]"#).unwrap());
    }

    #[test]
    fn trace_mode_reports_discarded_text_and_region_steps() {
        let t = template(
            r#"{"start_anchor": "<s>", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int",
                "transform": {"value": "{content}"}}}}"#,
        );
        let mut p = Parser::with_events(&t, Some(""), None, Events::Trace).unwrap();
        let mut evs = p.feed("noise<n> 7 </n>").unwrap();
        evs.extend(p.finalize().unwrap().1);
        assert!(matches!(&evs[0].kind, EventKind::Discard { text } if text == "noise"));
        let close = evs
            .iter()
            .find(|e| matches!(e.kind, EventKind::Close { .. }))
            .unwrap();
        let d = close.detail.as_ref().unwrap();
        assert_eq!((d.body.clone(), close.span.clone()), (8..11, 11..15));
        assert_eq!(d.parsed, Value::Int(7));
        // The transform's output is the value: marked, not held twice.
        assert_eq!(d.kept_as_value, Step::Transformed);
        assert_eq!(d.transformed, None);
        let EventKind::Close { value } = &close.kind else {
            unreachable!()
        };
        assert_eq!(Some(value), py::json_loads(r#"{"value": 7}"#).ok().as_ref());
        let regions = crate::region::regions(&evs, 100);
        assert_eq!(regions.at(0).transformed(), Some(value));
        assert_eq!(regions.at(0).parsed(), Some(&Value::Int(7)));
    }

    /// With token ids, the traced steps are stripped of markers as the value is: the last
    /// step is the value, held once, and reads back without markers.
    #[test]
    fn with_token_ids_the_last_traced_step_is_the_stripped_value() {
        let t = template(
            r#"{"start_anchor": "<s>", "fields": {"c": {"open": "<c>", "close": "</c>"}}}"#,
        );
        let options = Options {
            events: Events::Trace,
            whole_text: false,
            token_ids: true,
            values_once: false,
            lists_in_events: false,
        };
        let mut p = Parser::with_options(&t, Some("<s>"), None, options).unwrap();
        let evs = p.feed(&format!("<c>a{MARKER}b</c>")).unwrap();
        let close = evs.iter().find(|e| e.detail.is_some()).unwrap();
        let d = close.detail.as_ref().unwrap();
        assert_eq!(d.kept_as_value, Step::Parsed);
        let EventKind::Close { value } = &close.kind else {
            unreachable!()
        };
        assert_eq!(value, &Value::from("ab"));
        let regions = crate::region::regions(&evs, 100);
        assert_eq!(regions.at(0).parsed(), Some(value));
    }

    /// A template with a repeating field, a joined one and the rest as content.
    fn lists() -> Template {
        template(
            r#"{"start_anchor": "<s>", "fields": {
                "c": {"open": "<c>", "close": "</c>", "repeats": true, "content": "json"},
                "j": {"open": "<j>", "close": "</j>", "repeats": true, "join": ","},
                "content": {}}}"#,
        )
    }

    /// With `lists_in_events`, a repeating field's values are in its close events only and its
    /// list holds `None` for each; everything else is as without it.
    #[test]
    fn lists_in_events_hand_appended_values_to_the_events_only() {
        let t = lists();
        let text = "<c>[1]</c>a<j>x</j><c>{}</c> b<j>y</j>.";
        let run = |lists_in_events: bool| {
            let options = Options {
                lists_in_events,
                ..Options::streamed(Events::Reference)
            };
            let mut p = Parser::with_options(&t, Some("<s>"), None, options).unwrap();
            let mut events = p.feed(text).unwrap();
            let (message, last) = p.finalize().unwrap();
            events.extend(last);
            (events, message)
        };
        let (events, message) = run(false);
        let (handed, placeheld) = run(true);
        assert_eq!(handed, events);
        let mut expected = message.clone();
        expected.insert("c", Value::List(vec![Value::Null, Value::Null]));
        assert_eq!(placeheld, expected);
        assert_eq!(message["j"], Value::from("x,y"));
    }

    /// A parser restored to one of its own earlier states takes a different course from
    /// there: states it takes afterwards hold its new output, not the course it left (whose
    /// states have the same revisions).
    #[test]
    fn states_taken_after_a_restore_hold_the_new_course() {
        let t = template(
            r#"{"start_anchor": "<s>", "fields": {
                "c": {"open": "<c>", "close": "</c>", "repeats": true},
                "j": {"open": "<j>", "close": "</j>", "repeats": true, "join": ","}}}"#,
        );
        let output_of = |state: &Suspended, document: &str, lender: &Dict| {
            let mut p = Parser::new(&t, Some("<s>"), None).unwrap();
            p.restore(state, document, lender);
            p.output().clone()
        };
        let mut p = Parser::new(&t, Some("<s>"), None).unwrap();
        let start = "<c>1</c><j>a</j>";
        p.feed(start).unwrap();
        let early = p.suspend(None);
        p.feed("<c>2</c><j>b</j>").unwrap();
        let left = p.suspend(Some(&early));
        let lender = p.output().clone();
        p.restore(&early, &format!("<s>{start}"), &lender);
        let document = format!("<s>{start}<c>3</c><j>x</j>");
        p.feed("<c>3</c><j>x</j>").unwrap();
        let output = p.output().clone();
        // Same revision as `left`, another output.
        let same = p.suspend(Some(&left));
        assert_eq!(output_of(&same, &document, &output), output);
        p.feed("<c>4</c>").unwrap();
        let later = p.suspend(Some(&left));
        let document = format!("{document}<c>4</c>");
        assert_eq!(output_of(&later, &document, p.output()), *p.output());
    }

    /// A parser restored from a state taken at any feed continues exactly as the parser it
    /// was taken from: the same events, held text and message, whatever the cut.
    #[test]
    fn a_restored_parser_continues_like_the_one_suspended() {
        let calls = lists();
        let cases = [
            (
                smollm3(),
                "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
                "<think>\nweighing it</think>\nThe answer <is> 42.<|im_end|>",
            ),
            (
                calls,
                "<s>",
                "<c>[1]</c>a<j>x</j><c>{}</c> b<j>y</j><c>2</c><j>z</j>.",
            ),
        ];
        for (t, prefix, generation) in cases {
            let chunks: Vec<&str> = generation
                .char_indices()
                .map(|(i, c)| &generation[i..i + c.len_utf8()])
                .collect();
            let run = |from: usize, p: &mut Parser| {
                let mut evs = Vec::new();
                for c in &chunks[from..] {
                    evs.extend(p.feed(c).unwrap());
                }
                let (message, last) = p.finalize().unwrap();
                evs.extend(last);
                (evs, message)
            };
            for cut in 0..chunks.len() {
                let mut original =
                    Parser::with_events(&t, Some(prefix), None, Events::Trace).unwrap();
                for c in &chunks[..cut] {
                    original.feed(c).unwrap();
                }
                let state = original.suspend(None);
                let document = format!("{prefix}{}", chunks[..cut].concat());
                assert_eq!(state.fed_to(), document.len(), "cut {cut}");
                // A parser that has been elsewhere (here: fed to the end and finalized), whose
                // message, the end of a stream through the state, lends the grown values.
                let mut restored =
                    Parser::with_events(&t, Some(prefix), None, Events::Trace).unwrap();
                let (_, lender) = run(0, &mut restored);
                restored.restore(&state, &document, &lender);
                assert_eq!(restored.held(), original.held(), "cut {cut}");
                assert_eq!(restored.output(), original.output(), "cut {cut}");
                assert_eq!(
                    run(cut, &mut restored),
                    run(cut, &mut original),
                    "cut {cut}"
                );
            }
        }
    }

    /// Events without their chunk texts are the reference's events, and each chunk's text is
    /// the text at its span, whatever the prefix and however the text is cut.
    #[test]
    fn span_events_read_their_text_where_the_reference_events_hold_it() {
        let prefix = "<|im_start|>assistant\n<think>a";
        let text = "bc</think>Hello <thi there</th<|im_end|>tail";
        for cut in 1..=4 {
            let mut full =
                Parser::with_events(&smollm3(), Some(prefix), None, Events::Reference).unwrap();
            let mut spans =
                Parser::with_events(&smollm3(), Some(prefix), None, Events::ReferenceSpans)
                    .unwrap();
            let mut want = full.initial_events().to_vec();
            let mut got: Vec<Event> = spans.initial_events().to_vec();
            let mut rest = text;
            let mut texts = Vec::new();
            while !rest.is_empty() {
                let n = rest.char_indices().nth(cut).map_or(rest.len(), |(i, _)| i);
                want.extend(full.feed(&rest[..n]).unwrap());
                got.extend(spans.feed(&rest[..n]).unwrap());
                rest = &rest[n..];
            }
            want.extend(full.finalize().unwrap().1);
            got.extend(spans.finalize().unwrap().1);
            assert_eq!(got.len(), want.len(), "cut {cut}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!((g.field, &g.span), (w.field, &w.span), "cut {cut}");
                match (&g.kind, &w.kind) {
                    (EventKind::Chunk { text: t, dirty: d }, EventKind::Chunk { text, dirty }) => {
                        assert!(t.is_empty());
                        assert_eq!(d, dirty);
                        assert_eq!(spans.text_at(g.span.clone()), Some(text.as_str()));
                        texts.push(text.clone());
                    }
                    (g, w) => assert_eq!(g, w, "cut {cut}"),
                }
            }
            assert_eq!(texts.concat(), "abcHello <thi there</thtail", "cut {cut}");
        }
        let p = Parser::new(&smollm3(), Some(prefix), None).unwrap();
        assert_eq!(p.text_at(0..1), None, "before the origin");
        assert_eq!(
            p.text_at(p.origin()..p.origin() + 99),
            None,
            "past the text"
        );
    }
}
