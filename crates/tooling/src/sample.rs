//! Sample files: a generation with the prompt prefix it followed, and optionally the tools and
//! the expected message, in one plain-text file that is pleasant to edit by hand.
//!
//! ```text
//! --- prefix ---
//! <|im_start|>user
//! Hi!<|im_end|>
//! <|im_start|>assistant
//!
//! --- generation ---
//! <think>
//! Greet back.
//! </think>
//! Hello!<|im_end|>
//! --- tools ---
//! [{"type": "function", "function": {"name": "greet", "parameters": {}}}]
//! --- expected ---
//! {"role": "assistant", "thinking": "Greet back.", "content": "Hello!"}
//! ```
//!
//! A section's text is its lines, up to its last line that is not blank: the blank lines
//! people leave between sections and the line break that ends a section's last line (the one
//! every editor adds) are layout, never text. A section that must end with line breaks says so
//! in its header, where it can be seen: `--- prefix (ends with newline) ---`, or
//! `(ends with 2 newlines)`. A generation cut off on purpose (a token limit) says
//! `--- generation (truncated) ---`, so that a region it leaves open is expected rather than
//! reported; options combine with a comma. A header adds at most [`MAX_NEWLINES`] line breaks
//! (a million): more is an error located at the option, since a few bytes of header must not
//! stand for more text than a sane input holds; text that must end with more line breaks is
//! written to a `.txt` file, which is read exactly. A byte-order mark at the start of the file
//! (as some editors save UTF-8) is layout too.
//!
//! Sections: `prefix`, `generation` (required), `tools` (JSON), `expected` (JSON) and `note`
//! (free text). For the model's own files (the `model` module): `messages` (a JSON list: the
//! conversation the chat template renders into the prefix), `kwargs` (a JSON object of the chat
//! template's arguments), `roundtrip` (why rendering the parsed message back is expected to
//! differ), and the header option `ids` on a prefix or generation whose text is a JSON list of
//! token ids. A file with another extension than `.sample` (e.g. `.txt`) is a bare generation
//! with no prefix.
//!
//! The `expected` section is the message, or the error the parse must fail with
//! ([`ExpectedError`]: `{"$error": "<Type>: <message>"}` exactly, `{"$error": {"type": ...}}`
//! any message of that type, `{"$error": true}` any error); another `$error` is an error of
//! the file. A line written like a header whose name is a near miss of a section's
//! (`--- generaton ---`) is text, and is said with the section meant.
//!
//! Files written before this rule ended a section with a line break by leaving a blank line
//! before the next header. They are read with the rule above; where that reads a prefix or
//! generation differently and no header of the file has options, the sample carries a warning
//! that says how to write what was meant.

use std::fmt;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::files::read_input;
use rtbench_engine::py;
use rtbench_engine::value::Value;

/// The file extension of sectioned sample files.
pub const EXTENSION: &str = "sample";

/// The byte-order mark some editors put at the start of a UTF-8 file.
const BOM: char = '\u{feff}';

/// One sample generation.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The sample's file (or the name it is reported under).
    pub path: PathBuf,
    /// `None` when the sample gives no prefix (a bare `.txt` generation).
    pub prefix: Option<String>,
    /// The generated text the template parses (the `generation` section): a stretch of the
    /// file's text shared with it when the section's text is one (see
    /// [`parse_sample_shared`]).
    pub generation: Text,
    /// The `tools` section: the tool definitions given to the parser.
    pub tools: Option<Value>,
    /// The `expected` section: the expected message, or `{"$error": ...}` for an expected
    /// parse error.
    pub expected: Option<Value>,
    /// The `note` section: free text about the sample.
    pub note: Option<String>,
    /// Byte offset of the generation section in the file (for positions in diagnostics).
    pub generation_offset: usize,
    /// Byte offset of the prefix section in the file, when there is one.
    pub prefix_offset: Option<usize>,
    /// The 1-based line of the file the generation's text starts on (column 1 of it): the
    /// line after its header, or 1 for a bare generation.
    pub generation_line: usize,
    /// The 1-based line of the file the prefix's text starts on, when the file has a prefix
    /// section.
    pub prefix_line: Option<usize>,
    /// The header says the generation was cut off: a region left open at its end is expected.
    pub truncated: bool,
    /// Problems with the file itself (an older layout read differently).
    pub warnings: Vec<SampleWarning>,
    /// What the model's own files turn into text: a conversation for the chat template, token
    /// ids for the tokenizer (the `model` module turns them into text).
    pub model: ModelInput,
}

/// A section's text: its own string, or a stretch of the sample file's text shared with it, so
/// that a long generation read verbatim from its file is not held twice. It reads as a `str`
/// either way; cloning a shared stretch copies no text.
#[derive(Clone)]
pub struct Text(TextRepr);

#[derive(Clone)]
enum TextRepr {
    Owned(String),
    /// `file[range]`: the range lies on character boundaries of the file's text.
    Shared {
        file: Arc<String>,
        range: Range<usize>,
    },
}

impl Text {
    /// The stretch `range` of a file's text, sharing it. `None` when `range` is not a stretch
    /// of it (out of bounds or not on character boundaries).
    pub fn shared(file: &Arc<String>, range: Range<usize>) -> Option<Text> {
        file.get(range.clone())?;
        Some(Text(TextRepr::Shared {
            file: Arc::clone(file),
            range,
        }))
    }

    /// The text as a string slice.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            TextRepr::Owned(s) => s,
            TextRepr::Shared { file, range } => &file[range.clone()],
        }
    }

    /// Whether the text is a stretch of a file's text shared with it.
    pub fn is_shared(&self) -> bool {
        matches!(self.0, TextRepr::Shared { .. })
    }

    /// Where the text lies in `file`, when it is a stretch of that very text.
    pub fn range_in(&self, file: &Arc<String>) -> Option<Range<usize>> {
        match &self.0 {
            TextRepr::Shared { file: f, range } if Arc::ptr_eq(f, file) => Some(range.clone()),
            _ => None,
        }
    }

    /// The text as its own string (a shared stretch is copied).
    pub fn into_string(self) -> String {
        match self.0 {
            TextRepr::Owned(s) => s,
            TextRepr::Shared { file, range } => file[range].to_string(),
        }
    }
}

impl Default for Text {
    fn default() -> Text {
        Text(TextRepr::Owned(String::new()))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Text {
        Text(TextRepr::Owned(s))
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The parts of a sample that need the model's files: `messages` (and `kwargs`) rendered by the
/// chat template into the prefix, and a prefix or generation written as token ids
/// (`--- generation (ids) ---`), decoded by the tokenizer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelInput {
    /// The `messages` section: the conversation before the generation.
    pub messages: Option<Value>,
    /// The `kwargs` section: the chat template's keyword arguments (`enable_thinking`, ...).
    pub kwargs: Option<Value>,
    /// The prefix written as token ids (`--- prefix (ids) ---`), decoded by the tokenizer.
    pub prefix_ids: Option<Vec<u32>>,
    /// The generation written as token ids (`--- generation (ids) ---`), decoded by the
    /// tokenizer.
    pub generation_ids: Option<Vec<u32>>,
    /// The `roundtrip` section: why rendering the parsed message back is expected to give
    /// other text (a chat template that drops earlier turns' reasoning, say).
    pub roundtrip: Option<String>,
}

impl ModelInput {
    /// Whether the sample needs the model's files to be read.
    pub fn is_needed(&self) -> bool {
        self.messages.is_some() || self.prefix_ids.is_some() || self.generation_ids.is_some()
    }
}

/// A problem with a sample file that does not stop it from being read.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleWarning {
    /// 1-based line of the file.
    pub line: usize,
    /// 1-based column of the line (characters): where the fix goes, when known (else 1).
    pub column: usize,
    /// What is wrong and what to write instead.
    pub message: String,
    /// For a section whose blank lines files written for earlier versions meant as its last
    /// line breaks: which, and how many (what the reading would change depends on the
    /// template; see `findings::layout_message`).
    pub old_layout: Option<OldLayout>,
}

impl SampleWarning {
    /// A warning at the start of `line`.
    pub fn at_line(line: usize, message: String) -> SampleWarning {
        SampleWarning {
            line,
            column: 1,
            message,
            old_layout: None,
        }
    }
}

/// A prefix or generation followed by blank lines, which files written for earlier versions
/// meant as the section's last line breaks (read now as layout).
#[derive(Clone, Debug, PartialEq)]
pub struct OldLayout {
    /// `prefix` or `generation`.
    pub section: &'static str,
    /// The line breaks the older reading adds.
    pub newlines: usize,
}

impl Sample {
    /// This sample with `generation` as its generation (the same text held elsewhere, say):
    /// every other part copied, the old generation not (a long one read from an unusual
    /// layout is its own string).
    pub fn with_generation(&self, generation: Text) -> Sample {
        // Every field named, so that a new one is not left out.
        Sample {
            path: self.path.clone(),
            prefix: self.prefix.clone(),
            generation,
            tools: self.tools.clone(),
            expected: self.expected.clone(),
            note: self.note.clone(),
            generation_offset: self.generation_offset,
            prefix_offset: self.prefix_offset,
            generation_line: self.generation_line,
            prefix_line: self.prefix_line,
            truncated: self.truncated,
            warnings: self.warnings.clone(),
            model: self.model.clone(),
        }
    }

    /// A bare generation (a `.txt` file): no prefix, nothing expected.
    pub fn bare(path: &Path, generation: String) -> Sample {
        Sample {
            path: path.to_path_buf(),
            prefix: None,
            generation: generation.into(),
            tools: None,
            expected: None,
            note: None,
            generation_offset: 0,
            prefix_offset: None,
            generation_line: 1,
            prefix_line: None,
            truncated: false,
            warnings: Vec::new(),
            model: ModelInput::default(),
        }
    }

    /// Whether the sample is expected to fail: its expected section is `{"$error": ...}`.
    pub fn expects_error(&self) -> bool {
        self.expected.as_ref().is_some_and(is_error_expectation)
    }
}

/// An expected section `{"$error": "<Type>: <message>"}` says that parsing the sample must fail
/// with exactly that error (as `rtbench test --bless` writes it); `{"$error": {"type":
/// "ValueError"}}` that it must fail with an error of that exception type, whatever its message
/// (`{"type": ..., "message": ...}` names both); `{"$error": true}` that it must fail, whatever
/// the error.
pub const EXPECTED_ERROR_KEY: &str = "$error";

/// What an expected section says about the error a parse must fail with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpectedError {
    /// `{"$error": true}`: any error.
    Any,
    /// `{"$error": {"type": "ValueError"}}`: an error of this exception type, any message.
    Type(String),
    /// `{"$error": "ValueError: <message>"}` or `{"$error": {"type": "ValueError", "message":
    /// "<message>"}}`: exactly this error (its text as Python prints it, `<Type>: <message>`).
    Exact(String),
}

impl ExpectedError {
    /// Whether `error` (its text, `<Type>: <message>`) is the error expected.
    pub fn accepts(&self, error: &str) -> bool {
        match self {
            ExpectedError::Any => true,
            ExpectedError::Type(kind) => error_type(error) == kind,
            ExpectedError::Exact(text) => text == error,
        }
    }

    /// The expectation as one line of a difference: the error's text, or what it allows.
    pub fn show(&self) -> String {
        match self {
            ExpectedError::Any => "any error".to_string(),
            ExpectedError::Type(kind) => format!("{kind} (any message)"),
            ExpectedError::Exact(text) => text.replace('\n', "\\n"),
        }
    }
}

/// The exception type of an error's text (`ValueError` of `ValueError: bad`).
pub fn error_type(error: &str) -> &str {
    error.split_once(": ").map_or(error, |(kind, _)| kind)
}

/// Whether an expected section is an error expectation (a dict with `$error`), well formed or
/// not.
fn is_error_expectation(expected: &Value) -> bool {
    expected
        .as_dict()
        .is_some_and(|d| d.contains_key(EXPECTED_ERROR_KEY))
}

/// The error an expected section expects: `None` when it expects a message, else the
/// expectation, or what is wrong with it (it can then match nothing and must not pass for
/// everything).
pub fn expected_error(expected: &Value) -> Option<Result<ExpectedError, String>> {
    let d = expected.as_dict()?;
    let want = d.get(EXPECTED_ERROR_KEY)?;
    Some(error_expectation(want, d.len()))
}

/// Reads the value of `$error` (in a section of `keys` keys).
fn error_expectation(want: &Value, keys: usize) -> Result<ExpectedError, String> {
    const FORMS: &str = "write \"<Type>: <message>\" (what --bless writes), {\"type\": \"ValueError\"} for any message of that type, {\"type\": ..., \"message\": ...}, or true for any error";
    if keys > 1 {
        return Err(format!(
            "an expected error holds \"{EXPECTED_ERROR_KEY}\" alone: remove the other keys"
        ));
    }
    match want {
        Value::Str(text) => Ok(ExpectedError::Exact(text.to_string())),
        Value::Bool(true) => Ok(ExpectedError::Any),
        Value::Dict(d) => {
            if let Some(k) = d.keys().find(|k| *k != "type" && *k != "message") {
                return Err(format!(
                    "unknown key '{k}' in \"{EXPECTED_ERROR_KEY}\" (keys: \"type\", \"message\")"
                ));
            }
            let kind = match d.get("type") {
                Some(Value::Str(kind)) => kind.to_string(),
                Some(_) => return Err(format!("\"type\" must be a string: {FORMS}")),
                None => return Err(format!("\"type\" is missing: {FORMS}")),
            };
            if rtbench_engine::py::ExceptionType::from_name(&kind).is_none() {
                return Err(unknown_type(&kind));
            }
            match d.get("message") {
                None => Ok(ExpectedError::Type(kind)),
                Some(Value::Str(m)) => Ok(ExpectedError::Exact(format!("{kind}: {m}"))),
                Some(_) => Err(format!("\"message\" must be a string: {FORMS}")),
            }
        }
        other => Err(format!(
            "\"{EXPECTED_ERROR_KEY}\" is {}: {FORMS}",
            other.py_repr()
        )),
    }
}

/// The exception types rtbench reports (the reference's, and `rtbench` for its own).
const EXCEPTION_TYPES: [&str; 10] = [
    "ValueError",
    "KeyError",
    "TypeError",
    "AttributeError",
    "RecursionError",
    "RuntimeError",
    "IndexError",
    "error",
    "Exception",
    "rtbench",
];

/// An unknown exception type, with the nearest known one.
fn unknown_type(kind: &str) -> String {
    let nearest = EXCEPTION_TYPES
        .iter()
        .map(|t| {
            (
                strsim::damerau_levenshtein(&kind.to_lowercase(), &t.to_lowercase()),
                *t,
            )
        })
        .filter(|(d, _)| *d <= 3)
        .min();
    let list = EXCEPTION_TYPES.join(", ");
    match nearest {
        Some((_, t)) => {
            format!("unknown exception type '{kind}': did you mean `{t}`? (types: {list})")
        }
        None => format!("unknown exception type '{kind}' (types: {list})"),
    }
}

/// The sample file's text with its `expected` section replaced by `expected` (added at the end
/// when there is none); everything else stays byte for byte. A file whose lines end with CRLF
/// (its first line break is `\r\n`) gets the new section with CRLF line breaks too.
pub fn replace_expected(path: &Path, text: &str, expected: &str) -> Result<String, SampleError> {
    let sections = sections(path, text)?;
    let crlf = text.find('\n').is_some_and(|i| text[..i].ends_with('\r'));
    let nl = if crlf { "\r\n" } else { "\n" };
    let body = expected.trim_end_matches(['\n', '\r']);
    let body = if crlf {
        body.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        body.to_string()
    };
    Ok(match sections.iter().find(|s| s.name == "expected") {
        Some(s) => {
            let end = s.content_end(text);
            let after = &text[end..];
            let brk = if after.starts_with('\n') || after.starts_with("\r\n") {
                ""
            } else {
                nl
            };
            format!("{}{body}{brk}{after}", &text[..s.raw.start])
        }
        None => {
            // A section's last line break is layout, so a new header may follow the text.
            let sep = if text.is_empty() || text.ends_with('\n') {
                ""
            } else {
                nl
            };
            format!("{text}{sep}--- expected ---{nl}{body}{nl}")
        }
    })
}

/// A sample file that cannot be read.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleError {
    /// The sample file.
    pub path: PathBuf,
    /// 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// 1-based column (in characters), when the place is known more closely than its line
    /// (a JSON section's syntax error).
    pub column: Option<usize>,
    /// Byte offset of that place in the file.
    pub offset: Option<usize>,
    /// What is wrong with the file.
    pub message: String,
}

impl SampleError {
    fn new(path: &Path, line: Option<usize>, message: String) -> SampleError {
        SampleError {
            path: path.to_path_buf(),
            line,
            column: None,
            offset: None,
            message,
        }
    }
}

impl std::fmt::Display for SampleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = self.path.display();
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{path}:{l}:{c}: {}", self.message),
            (Some(l), None) => write!(f, "{path}:{l}: {}", self.message),
            _ => write!(f, "{path}: {}", self.message),
        }
    }
}

const SECTIONS: [&str; 8] = [
    "prefix",
    "generation",
    "tools",
    "expected",
    "note",
    "messages",
    "kwargs",
    "roundtrip",
];

/// What a header's parenthesised options say.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Options {
    /// Line breaks the section's text ends with.
    newlines: usize,
    truncated: bool,
    /// The text is a JSON list of token ids (prefix and generation).
    ids: bool,
    /// Whether the header had options at all.
    given: bool,
}

/// The most line breaks a header may add to its section (`ends with N newlines`): a million, a
/// generation as long as the longest model context, so that a few bytes of header never stand
/// for more text than a sane input holds. Text that must end with more is written to a `.txt`
/// file, which is read exactly.
pub const MAX_NEWLINES: usize = 1 << 20;

/// A header's option that cannot be read: what is wrong, and the byte offset of the option in
/// the header's line.
type OptionError = (String, usize);

/// The section name and options if `line` is a header (`--- name ---`, `--- name (options) ---`).
fn header(line: &str) -> Option<(&str, Result<Options, OptionError>)> {
    let inner = line.strip_prefix("--- ")?.strip_suffix(" ---")?;
    let (name, options) = match inner.split_once(" (") {
        Some((name, rest)) => (name, Some(rest.strip_suffix(')')?)),
        None => (inner, None),
    };
    if !SECTIONS.contains(&name) {
        return None;
    }
    let Some(options) = options else {
        return Some((name, Ok(Options::default())));
    };
    let mut out = Options {
        given: true,
        ..Options::default()
    };
    // Where the options start in the line: after `--- `, the name and ` (`.
    let mut at = 4 + name.len() + 2;
    for raw in options.split(',') {
        let option = raw.trim();
        let column = at + (raw.len() - raw.trim_start().len());
        at += raw.len() + 1;
        let newlines = option.strip_prefix("ends with ").and_then(|n| match n {
            "newline" | "a newline" | "1 newline" => Some(Ok(1)),
            _ => n.strip_suffix(" newlines").and_then(|k| {
                let digits = !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit());
                digits
                    .then(|| k.parse::<usize>().ok().filter(|&n| n <= MAX_NEWLINES))
                    .map(|n| n.ok_or(k))
            }),
        });
        match (option, newlines) {
            (_, Some(Ok(n))) => out.newlines = n,
            (_, Some(Err(count))) => {
                return Some((
                    name,
                    Err((
                        format!(
                            "`{option}` asks for {count} line breaks, more than the {MAX_NEWLINES} a header may add: write the text to a .txt file (read exactly, trailing line breaks included) or ask for fewer"
                        ),
                        column,
                    )),
                ));
            }
            ("truncated", _) if name == "generation" => out.truncated = true,
            ("ids", _) if name == "generation" || name == "prefix" => out.ids = true,
            _ => {
                return Some((
                    name,
                    Err((
                        format!(
                            "unknown option '{option}' in the '{name}' header (options: `ends with newline`, `ends with N newlines`{})",
                            match name {
                                "generation" => ", `truncated`, `ids`",
                                "prefix" => ", `ids`",
                                _ => "",
                            }
                        ),
                        column,
                    )),
                ));
            }
        }
    }
    Some((name, Ok(out)))
}

/// One section of a sample file: its name, the 1-based line of its header, its options, and
/// the byte range from the line after its header to the next header's line (line breaks and
/// blank lines included).
#[derive(Clone, Debug, PartialEq)]
struct Section<'a> {
    name: &'a str,
    line: usize,
    options: Options,
    raw: Range<usize>,
    /// Whether another header follows.
    followed: bool,
}

impl Section<'_> {
    /// Where the text ends: after the last line that is not blank, before its line break.
    fn content_end(&self, text: &str) -> usize {
        let raw = &text[self.raw.clone()];
        let mut end = 0;
        let mut offset = 0;
        for line in raw.split_inclusive('\n') {
            let bare = line.trim_end_matches(['\n', '\r']);
            if !bare.trim().is_empty() {
                end = offset + bare.len();
            }
            offset += line.len();
        }
        self.raw.start + end
    }

    /// The section's text: its lines without trailing layout, then the line breaks its header
    /// asks for.
    fn text(&self, text: &str) -> String {
        let mut out = text[self.raw.start..self.content_end(text)].to_string();
        out.extend(std::iter::repeat_n('\n', self.options.newlines));
        out
    }

    /// The section's text as [`Section::text`] gives it, as a stretch of `file` (whose text is
    /// `text`) when it is one: always, but when the line breaks its header asks for are not
    /// those the file has after the text.
    fn shared_text(&self, text: &str, file: Option<&Arc<String>>) -> Text {
        let end = self.content_end(text);
        let full = end + self.options.newlines;
        let verbatim = text
            .as_bytes()
            .get(end..full)
            .is_some_and(|breaks| breaks.iter().all(|&b| b == b'\n'));
        file.filter(|_| verbatim)
            .and_then(|f| Text::shared(f, self.raw.start..full))
            .unwrap_or_else(|| self.text(text).into())
    }

    /// How files written before the layout rule read this section: verbatim up to the line
    /// break before the next header.
    fn old_text<'t>(&self, text: &'t str) -> &'t str {
        let raw = &text[self.raw.clone()];
        if !self.followed {
            return raw;
        }
        raw.strip_suffix("\r\n")
            .or_else(|| raw.strip_suffix('\n'))
            .unwrap_or(raw)
    }
}

/// The name of a line written like a section header (`--- name ---`, `--- name (options)
/// ---`), whether or not the name is a section's.
fn header_name(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("--- ")?.strip_suffix(" ---")?;
    let name = match inner.split_once(" (") {
        Some((name, rest)) => rest.ends_with(')').then_some(name)?,
        None => inner,
    };
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    plain.then_some(name)
}

/// The section a misspelled header name stands for (`generaton`: `generation`): the known
/// name within a small edit distance (one edit for short names, two for longer ones), case
/// aside.
fn meant_section(name: &str) -> Option<&'static str> {
    let lower = name.to_lowercase();
    SECTIONS
        .iter()
        .map(|s| (strsim::damerau_levenshtein(&lower, s), *s))
        .filter(|&(d, s)| d <= if s.len() <= 5 { 1 } else { 2 } && (d > 0 || name != s))
        .min()
        .map(|(_, s)| s)
}

/// A line that looks like the header of a section whose name is misspelled: its 1-based
/// line, what it says, and the section meant.
#[derive(Clone, Debug, PartialEq)]
struct Misspelled {
    line: usize,
    written: String,
    meant: &'static str,
}

impl Misspelled {
    /// What to say of it.
    fn advice(&self) -> String {
        format!(
            "`{}` is not a section header: did you mean `--- {} ---`?",
            self.written, self.meant
        )
    }
}

/// The lines of a `.sample` file written like headers of misspelled sections.
fn misspelled_headers(text: &str) -> Vec<Misspelled> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let bare = line.trim_end_matches('\r').trim_start_matches(BOM);
            let name = header_name(bare)?;
            if SECTIONS.contains(&name) {
                return None;
            }
            Some(Misspelled {
                line: i + 1,
                written: bare.to_string(),
                meant: meant_section(name)?,
            })
        })
        .collect()
}

/// Splits a `.sample` file into its sections.
fn sections<'a>(path: &Path, text: &'a str) -> Result<Vec<Section<'a>>, SampleError> {
    let err = |line: Option<usize>, message: String| SampleError::new(path, line, message);
    let mut sections: Vec<Section<'a>> = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        let bare = bare.strip_suffix('\r').unwrap_or(bare);
        // A byte-order mark (as some editors save UTF-8) is layout, not text.
        let bom = if i == 0 && bare.starts_with(BOM) {
            BOM.len_utf8()
        } else {
            0
        };
        if let Some((name, options)) = header(&bare[bom..]) {
            let options = options.map_err(|(message, at)| {
                let at = offset + bom + at;
                SampleError {
                    column: Some(rtbench_engine::diagnostic::Location::new(text, at..at).column),
                    offset: Some(at),
                    ..err(Some(i + 1), message)
                }
            })?;
            if let Some(last) = sections.last_mut() {
                last.raw.end = offset;
                last.followed = true;
            } else if !text[..offset].trim_start_matches(BOM).trim().is_empty() {
                // A misspelled first header is what usually puts text there.
                return Err(match misspelled_headers(&text[..offset]).first() {
                    Some(m) => err(
                        Some(m.line),
                        format!("text before the first section header: {}", m.advice()),
                    ),
                    None => err(Some(1), "text before the first section header".into()),
                });
            }
            if sections.iter().any(|s| s.name == name) {
                return Err(err(Some(i + 1), format!("section '{name}' appears twice")));
            }
            sections.push(Section {
                name,
                line: i + 1,
                options,
                raw: offset + line.len()..text.len(),
                followed: false,
            });
        }
        offset += line.len();
    }
    Ok(sections)
}

/// Warnings for a file that may be in the older layout: a prefix or generation followed by a
/// blank line that earlier versions read as the section's last line break.
fn layout_warnings(text: &str, sections: &[Section<'_>]) -> Vec<SampleWarning> {
    if sections.iter().any(|s| s.options.given) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for s in sections.iter().filter(|s| s.followed) {
        let old = s.old_text(text);
        let breaks = old.len() - old.trim_end_matches(['\n', '\r']).len();
        let newlines = old[old.len() - breaks..].matches('\n').count();
        if newlines == 0 || old.trim().is_empty() {
            continue;
        }
        let option = if newlines == 1 {
            "ends with newline".to_string()
        } else {
            format!("ends with {newlines} newlines")
        };
        let (section, what) = match s.name {
            "prefix" => ("prefix", "the prompt"),
            "generation" => ("generation", "the model"),
            _ => continue,
        };
        // Where the option goes: after the section's name in its header (a byte-order mark
        // before the first header is a character of its line).
        let bom = usize::from(s.line == 1 && text.starts_with(BOM));
        out.push(SampleWarning {
            line: s.line,
            column: bom + "--- ".len() + s.name.len() + 1,
            message: format!(
                "the blank line{} after the {name} {} layout, so the {name} ends without a line break (files written for earlier versions of rtbench meant one); if {what} ends it with a line break, write `--- {name} ({option}) ---`, else remove the blank line{} to silence this",
                if newlines == 1 { "" } else { "s" },
                if newlines == 1 { "is" } else { "are" },
                if newlines == 1 { "" } else { "s" },
                name = s.name,
            ),
            old_layout: Some(OldLayout { section, newlines }),
        });
    }
    out
}

/// Parses the text of a `.sample` file.
pub fn parse_sample(path: &Path, text: &str) -> Result<Sample, SampleError> {
    strict(parse_sample_lenient(path, text))
}

/// Parses the text of a `.sample` file held shared: a generation that is a stretch of the file
/// shares its text rather than copying it (see [`Text`]).
pub fn parse_sample_shared(path: &Path, file: &Arc<String>) -> Result<Sample, SampleError> {
    strict(parse_sample_lenient_shared(path, file))
}

/// A lenient parse's sample, or the error of its expected section.
fn strict(
    parsed: Result<(Sample, Option<SampleError>), SampleError>,
) -> Result<Sample, SampleError> {
    parsed.and_then(|(sample, bad_expected)| match bad_expected {
        Some(e) => Err(e),
        None => Ok(sample),
    })
}

/// Parses the text of a `.sample` file, keeping the sample when only its `expected` section
/// is bad JSON (the parse never depends on it): the sample without an expected message, and
/// that section's error.
pub fn parse_sample_lenient(
    path: &Path,
    text: &str,
) -> Result<(Sample, Option<SampleError>), SampleError> {
    parse_lenient(path, text, None)
}

/// [`parse_sample_lenient`] of a file's text held shared: a generation that is a stretch of the
/// file shares its text rather than copying it (see [`Text`]).
pub fn parse_sample_lenient_shared(
    path: &Path,
    file: &Arc<String>,
) -> Result<(Sample, Option<SampleError>), SampleError> {
    parse_lenient(path, file, Some(file))
}

/// Parses `text`, which is `file`'s when it is given: the generation then shares the file's
/// text when it is a stretch of it.
fn parse_lenient(
    path: &Path,
    text: &str,
    file: Option<&Arc<String>>,
) -> Result<(Sample, Option<SampleError>), SampleError> {
    let err = |line: Option<usize>, message: String| SampleError::new(path, line, message);
    let sections = sections(path, text)?;
    let section = |name: &str| sections.iter().find(|s| s.name == name);
    let misspelled = misspelled_headers(text);
    let Some(generation) = section("generation") else {
        return Err(match misspelled.iter().find(|m| m.meant == "generation") {
            Some(m) => err(
                Some(m.line),
                format!("no '--- generation ---' section: {}", m.advice()),
            ),
            None => err(
                None,
                "no '--- generation ---' section (a .sample file needs one; see the README)".into(),
            ),
        });
    };
    let json = |name: &str| -> Result<Option<Value>, SampleError> {
        let Some(s) = section(name) else {
            return Ok(None);
        };
        let body = s.text(text);
        if body.trim().is_empty() {
            return Ok(None);
        }
        py::json_loads(&body).map(Some).map_err(|e| {
            let at = (s.raw.start + e.offset).min(text.len());
            SampleError {
                column: Some(rtbench_engine::diagnostic::Location::new(text, at..at).column),
                offset: Some(at),
                ..err(
                    Some(s.line + e.line),
                    format!("invalid JSON in the '{name}' section: {}", e.message),
                )
            }
        })
    };
    let (expected, bad_expected) = match json("expected") {
        Ok(Some(v)) => match expected_error(&v) {
            // An expectation that can match no error must not pass for every one.
            Some(Err(why)) => {
                let s = section("expected").map_or(0..0, |s| s.raw.clone());
                let at = text[s.clone()]
                    .find(&format!("\"{EXPECTED_ERROR_KEY}\""))
                    .map_or(s.start, |i| s.start + i);
                let loc = rtbench_engine::diagnostic::Location::new(text, at..at);
                let e = SampleError {
                    column: Some(loc.column),
                    offset: Some(at),
                    ..err(
                        Some(loc.line),
                        format!("the expected error cannot be read: {why}"),
                    )
                };
                (None, Some(e))
            }
            _ => (Some(v), None),
        },
        Ok(None) => (None, None),
        Err(e) => (None, Some(e)),
    };
    // A prefix or generation written as token ids: its text comes from the tokenizer.
    let ids = |name: &str| -> Result<Option<Vec<u32>>, SampleError> {
        let Some(s) = section(name).filter(|s| s.options.ids) else {
            return Ok(None);
        };
        let list = json(name)?.unwrap_or(Value::List(Vec::new()));
        let bad = || {
            err(
                Some(s.line),
                format!(
                    "the '{name} (ids)' section must be a JSON list of token ids (integers from 0)"
                ),
            )
        };
        token_ids(&list).map(Some).ok_or_else(bad)
    };
    let model = ModelInput {
        messages: json("messages")?,
        kwargs: json("kwargs")?,
        prefix_ids: ids("prefix")?,
        generation_ids: ids("generation")?,
        roundtrip: section("roundtrip").map(|s| s.text(text).trim().to_string()),
    };
    if let Some(m) = &model.messages
        && !matches!(m, Value::List(_))
    {
        let line = section("messages").map(|s| s.line);
        return Err(err(line, "the 'messages' section must be a JSON list of messages ({\"role\": ..., \"content\": ...})".into()));
    }
    if let Some(k) = &model.kwargs
        && !matches!(k, Value::Dict(_))
    {
        let line = section("kwargs").map(|s| s.line);
        return Err(err(line, "the 'kwargs' section must be a JSON object of the chat template's arguments ({\"enable_thinking\": false})".into()));
    }
    let text_of = |s: &Section<'_>| {
        if s.options.ids {
            String::new()
        } else {
            s.text(text)
        }
    };
    let sample = Sample {
        path: path.to_path_buf(),
        prefix: section("prefix").map(text_of),
        generation: if generation.options.ids {
            Text::default()
        } else {
            generation.shared_text(text, file)
        },
        tools: json("tools")?,
        expected,
        note: section("note").map(|s| s.text(text).trim().to_string()),
        generation_offset: generation.raw.start,
        prefix_offset: section("prefix").map(|s| s.raw.start),
        generation_line: generation.line + 1,
        prefix_line: section("prefix").map(|s| s.line + 1),
        truncated: generation.options.truncated,
        warnings: layout_warnings(text, &sections)
            .into_iter()
            .chain(misspelled.iter().map(|m| {
                SampleWarning::at_line(
                    m.line,
                    format!(
                        "{} (it is read as text of the section above it)",
                        m.advice()
                    ),
                )
            }))
            .collect(),
        model,
    };
    Ok((sample, bad_expected))
}

/// A JSON list of token ids (integers from 0 that fit in `u32`), or `None` for anything else.
pub fn token_ids(v: &Value) -> Option<Vec<u32>> {
    let Value::List(items) = v else { return None };
    items
        .iter()
        .map(|v| match v {
            Value::Int(i) => u32::try_from(*i).ok(),
            _ => None,
        })
        .collect()
}

/// Reads one sample file: a `.sample` file, or any other text file as a bare generation (read
/// as [`read_input`] reads inputs).
pub fn read_sample(path: &Path) -> Result<Sample, SampleError> {
    sample_of_text(path, &read_sample_text(path)?)
}

/// The text of a sample file, read as [`read_input`] reads inputs (a folder, a device or a pipe
/// refused).
pub fn read_sample_text(path: &Path) -> Result<String, SampleError> {
    read_input(path, "sample file")
        .map_err(|e| SampleError::new(path, None, format!("cannot read: {}", e.reason())))
}

/// The sample a file's text holds: a `.sample` file's sections, or any other file's text as a
/// bare generation.
pub fn sample_of_text(path: &Path, text: &str) -> Result<Sample, SampleError> {
    if path.extension().is_some_and(|e| e == EXTENSION) {
        parse_sample(path, text)
    } else {
        Ok(Sample::bare(path, text.to_string()))
    }
}

/// Where a section's text lies in a `.sample` file's text (its lines, without the blank lines
/// after them), when the file has the section.
pub fn section_span(text: &str, name: &str) -> Option<Range<usize>> {
    let sections = sections(Path::new(""), text).ok()?;
    let s = sections.iter().find(|s| s.name == name)?;
    Some(s.raw.start..s.content_end(text))
}

/// The sample files a command-line argument stands for: the file itself, or every `.sample`
/// and `.txt` file in a folder (sorted by name).
pub fn expand(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == EXTENSION || e == "txt"))
        .collect();
    out.sort();
    Ok(out)
}

/// A section whose text is `text` exactly: the line breaks it ends with are said in the
/// header, since the layout rule strips them from the body.
pub fn text_section(name: &str, text: &str, out: &mut String) {
    let body = text.trim_end_matches('\n');
    let newlines = text.len() - body.len();
    match newlines {
        0 => out.push_str(&format!("--- {name} ---\n")),
        1 => out.push_str(&format!("--- {name} (ends with newline) ---\n")),
        n => out.push_str(&format!("--- {name} (ends with {n} newlines) ---\n")),
    }
    out.push_str(body);
    out.push('\n');
}

/// A section holding `value` as indented JSON (as the reference's `json.dumps(indent=2)`).
pub fn json_section(name: &str, value: &rtbench_engine::value::Value, out: &mut String) {
    use rtbench_engine::py::{DumpOptions, json_dumps};
    let opts = DumpOptions {
        indent: Some(2),
        compact: false,
        ..DumpOptions::reference_cli()
    };
    if let Ok(text) = json_dumps(value, &opts) {
        out.push_str(&format!("--- {name} ---\n{text}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Sample {
        parse_sample(Path::new("t.sample"), text).unwrap()
    }

    #[test]
    fn blank_lines_and_the_last_line_break_are_layout() {
        let s = parse(
            "--- prefix ---\nP\n\n--- generation ---\n<think>a</think>\nb\n\n\n--- expected ---\n{\"x\": 1}\n",
        );
        assert_eq!(s.prefix.as_deref(), Some("P"));
        assert_eq!(s.generation, "<think>a</think>\nb");
        assert_eq!(s.expected, py::json_loads("{\"x\": 1}").ok());
        let s = parse("--- generation ---\nabc\n");
        assert_eq!(s.generation, "abc");
        assert_eq!(s.prefix, None);
        let s = parse("--- prefix ---\n--- generation ---\nx");
        assert_eq!(s.prefix.as_deref(), Some(""));
        assert_eq!(s.generation, "x");
        // Blank lines inside a section are text; trailing spaces of its last line too.
        let s = parse("--- generation ---\na\n\nb  \n  \n");
        assert_eq!(s.generation, "a\n\nb  ");
    }

    #[test]
    fn a_generation_that_is_a_stretch_of_its_file_shares_the_files_text() {
        // (file, whether the generation is a stretch of it)
        let cases = [
            (
                "--- generation ---\n<think>a</think>\nb\n\n\n--- note ---\nn\n",
                true,
            ),
            ("\u{feff}--- generation ---\r\nab\r\n", true),
            ("--- generation ---\nx", true),
            ("--- generation ---\n", true),
            (
                "--- generation (ends with newline) ---\nx\n\n--- note ---\n",
                true,
            ),
            ("--- generation (ends with 2 newlines) ---\nx\n\n", true),
            // Line breaks the file does not have after the text are the header's own.
            ("--- generation (ends with 2 newlines) ---\nx\n", false),
            ("--- generation (ends with newline) ---\r\nx\r\n", false),
            ("--- generation (ends with newline) ---\nx", false),
            ("--- generation (ids) ---\n[1, 2]\n", false),
        ];
        for (text, shared) in cases {
            let path = Path::new("t.sample");
            let file = Arc::new(text.to_string());
            let s = parse_sample_shared(path, &file).unwrap();
            assert_eq!(s, parse_sample(path, text).unwrap(), "{text:?}");
            assert_eq!(s.generation.is_shared(), shared, "{text:?}");
            assert_eq!(
                format!("{:?}", s.generation),
                format!("{:?}", s.generation.as_str())
            );
        }
        let t = Text::shared(&Arc::new("aé".to_string()), 0..2);
        assert!(t.is_none(), "a range inside a character is not a stretch");
    }

    #[test]
    fn headers_say_how_many_line_breaks_end_a_section() {
        let s = parse(
            "--- prefix (ends with newline) ---\n<|im_start|>assistant\n\n--- generation (ends with 2 newlines, truncated) ---\nx\n",
        );
        assert_eq!(s.prefix.as_deref(), Some("<|im_start|>assistant\n"));
        assert_eq!(s.generation, "x\n\n");
        assert!(s.truncated);
        assert!(s.warnings.is_empty());
        let e = parse_sample(Path::new("t.sample"), "--- generation (trunc) ---\nx").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("unknown option 'trunc'"), "{e}");
        let e = parse_sample(
            Path::new("t.sample"),
            "--- prefix (truncated) ---\n--- generation ---\n",
        )
        .unwrap_err();
        assert!(e.message.contains("'prefix' header"), "{e}");
    }

    /// A few bytes of header never stand for more text than a sane input: the count of line
    /// breaks is capped, and a larger one is an error located at the option, saying what to
    /// do, before any text is made.
    #[test]
    fn a_header_adds_at_most_a_million_line_breaks() {
        let at_cap = format!("--- generation (ends with {MAX_NEWLINES} newlines) ---\nx\n");
        assert_eq!(parse(&at_cap).generation.len(), 1 + MAX_NEWLINES);
        for count in [
            (MAX_NEWLINES + 1).to_string(),
            "1000000000".to_string(),
            "99999999999999999999999999".to_string(),
        ] {
            let text = format!(
                "--- prefix ---\nP\n--- generation (truncated, ends with {count} newlines) ---\nx\n"
            );
            let e = parse_sample(Path::new("big.sample"), &text).unwrap_err();
            let column = "--- generation (truncated, ".chars().count() + 1;
            assert_eq!((e.line, e.column), (Some(3), Some(column)), "{e}");
            assert_eq!(&text[e.offset.unwrap()..][..10], "ends with ");
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!(
                    "big.sample:3:{column}: `ends with {count} newlines`"
                )),
                "{shown}"
            );
            assert!(shown.contains(&MAX_NEWLINES.to_string()), "{shown}");
            assert!(shown.contains("write the text to a .txt file"), "{shown}");
        }
    }

    /// A byte-order mark (as some editors save UTF-8) is layout: the sample reads as without
    /// it, and blessing keeps it.
    #[test]
    fn a_byte_order_mark_is_layout() {
        let plain = "--- prefix ---\nP\n--- generation ---\nx\n--- expected ---\n{}\n";
        let bom = format!("\u{feff}{plain}");
        let a = parse(plain);
        let b = parse(&bom);
        assert_eq!(
            (&b.prefix, &b.generation, &b.expected),
            (&a.prefix, &a.generation, &a.expected)
        );
        assert_eq!(b.generation_offset, a.generation_offset + 3);
        // Before a first header on a later line too.
        assert_eq!(parse("\u{feff}\n--- generation ---\nx").generation, "x");
        let blessed = replace_expected(Path::new("t.sample"), &bom, "{\"a\": 1}").unwrap();
        assert_eq!(
            blessed,
            format!("\u{feff}{}", plain.replace("{}", "{\"a\": 1}"))
        );
        let x = bom.find("x\n").unwrap();
        assert_eq!(section_span(&bom, "generation"), Some(x..x + 1));
        // Only at the start of the file: elsewhere it is text.
        assert!(
            parse_sample(
                Path::new("t.sample"),
                "--- generation ---\n\u{feff}--- note ---\n"
            )
            .unwrap()
            .generation
            .starts_with('\u{feff}')
        );
    }

    #[test]
    fn older_layouts_are_read_with_a_warning_that_says_what_to_write() {
        let s = parse("--- prefix ---\nuser: hi\nassistant:\n\n--- generation ---\nHello\n");
        assert_eq!(s.prefix.as_deref(), Some("user: hi\nassistant:"));
        assert_eq!(s.warnings.len(), 1);
        assert_eq!(s.warnings[0].line, 1);
        assert!(
            s.warnings[0]
                .message
                .contains("write `--- prefix (ends with newline) ---`"),
            "{:?}",
            s.warnings
        );
        // The final line break of the file is no older-layout text worth a warning.
        assert!(parse("--- generation ---\nHello\n").warnings.is_empty());
        // Neither is a file that already uses options.
        let s =
            parse("--- prefix (ends with newline) ---\nA\n--- generation ---\nB\n\n--- note ---\n");
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn replacing_the_expected_section_keeps_everything_else() {
        let p = Path::new("t.sample");
        let text = "--- generation ---\nx\n\n--- expected ---\n{}\n\n--- note ---\nn\n";
        let out = replace_expected(p, text, "{\"a\": 1}\n").unwrap();
        assert_eq!(
            out,
            "--- generation ---\nx\n\n--- expected ---\n{\"a\": 1}\n\n--- note ---\nn\n"
        );
        assert_eq!(parse_sample(p, &out).unwrap().generation, "x");
        let last =
            replace_expected(p, "--- generation ---\nx\n--- expected ---\nold", "{}").unwrap();
        assert_eq!(last, "--- generation ---\nx\n--- expected ---\n{}\n");
        let empty = replace_expected(p, "--- generation ---\nx\n--- expected ---\n", "{}").unwrap();
        assert_eq!(empty, "--- generation ---\nx\n--- expected ---\n{}\n");
        for text in ["--- generation ---\nx", "--- generation ---\nx\n"] {
            let added = replace_expected(p, text, "{}").unwrap();
            assert_eq!(added, "--- generation ---\nx\n--- expected ---\n{}\n");
            assert_eq!(parse_sample(p, &added).unwrap().generation, "x");
        }
    }

    #[test]
    fn replacing_the_expected_section_keeps_crlf_line_breaks() {
        let p = Path::new("t.sample");
        let text = "--- generation ---\r\nx\r\n--- expected ---\r\n{}\r\n--- note ---\r\nn\r\n";
        let out = replace_expected(p, text, "{\n  \"a\": 1\n}\n").unwrap();
        assert_eq!(
            out,
            "--- generation ---\r\nx\r\n--- expected ---\r\n{\r\n  \"a\": 1\r\n}\r\n--- note ---\r\nn\r\n"
        );
        assert_eq!(
            parse_sample(p, &out).unwrap().expected,
            py::json_loads("{\"a\": 1}").ok()
        );
        for text in ["--- generation ---\r\nx", "--- generation ---\r\nx\r\n"] {
            let added = replace_expected(p, text, "{\n}").unwrap();
            assert_eq!(
                added,
                "--- generation ---\r\nx\r\n--- expected ---\r\n{\r\n}\r\n"
            );
            assert!(!added.replace("\r\n", "").contains('\n'), "{added:?}");
        }
        // The last section with no line break after it gets a CRLF one.
        let last = replace_expected(
            p,
            "--- generation ---\r\nx\r\n--- expected ---\r\nold",
            "{}",
        )
        .unwrap();
        assert_eq!(
            last,
            "--- generation ---\r\nx\r\n--- expected ---\r\n{}\r\n"
        );
    }

    #[test]
    fn bad_expected_json_keeps_the_sample_in_the_lenient_parse() {
        let text = "--- generation ---\nhi\n--- expected ---\n{\"role\" \"x\"}\n";
        let (s, e) = parse_sample_lenient(Path::new("t.sample"), text).unwrap();
        assert_eq!((s.generation.as_str(), s.expected.as_ref()), ("hi", None));
        let e = e.expect("the expected section's error");
        assert_eq!((e.line, e.column), (Some(4), Some(9)));
        assert_eq!(&text[e.offset.unwrap()..], "\"x\"}\n");
        assert_eq!(parse_sample(Path::new("t.sample"), text), Err(e));
        // Bad tools JSON is still an error: the parse depends on the tools.
        let bad_tools = "--- generation ---\nhi\n--- tools ---\n[\n";
        assert!(parse_sample_lenient(Path::new("t.sample"), bad_tools).is_err());
    }

    #[test]
    fn conversations_and_token_ids_are_read_for_the_model() {
        let text = "--- messages ---\n[{\"role\": \"user\", \"content\": \"Hi\"}]\n--- kwargs ---\n{\"enable_thinking\": false}\n--- generation (ids) ---\n[1, 22, 333]\n";
        let s = parse(text);
        assert_eq!(s.prefix, None);
        assert_eq!(s.generation, "", "decoded later, by the tokenizer");
        assert_eq!(s.model.generation_ids, Some(vec![1, 22, 333]));
        assert_eq!(s.model.prefix_ids, None);
        assert!(matches!(s.model.messages, Some(Value::List(ref l)) if l.len() == 1));
        assert!(matches!(s.model.kwargs, Some(Value::Dict(_))));
        assert!(s.model.is_needed());
        assert!(!parse("--- generation ---\nx\n").model.is_needed());
        for (bad, what) in [
            ("--- generation (ids) ---\n[1, -2]\n", "list of token ids"),
            ("--- generation (ids) ---\n\"text\"\n", "list of token ids"),
            (
                "--- messages ---\n{}\n--- generation ---\nx\n",
                "list of messages",
            ),
            ("--- kwargs ---\n[]\n--- generation ---\nx\n", "JSON object"),
            (
                "--- tools (ids) ---\n[]\n--- generation ---\nx\n",
                "unknown option 'ids'",
            ),
        ] {
            let e = parse_sample(Path::new("t.sample"), bad).unwrap_err();
            assert!(e.message.contains(what), "{bad:?}: {e}");
        }
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_sample(
            Path::new("t.sample"),
            "--- generation ---\nx\n--- tools ---\n[1,]\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4));
        assert_eq!(
            (e.column, e.offset),
            (Some(4), Some(38)),
            "at the ] of [1,]"
        );
        assert_eq!(
            e.to_string(),
            "t.sample:4:4: invalid JSON in the 'tools' section: Expecting value"
        );
        assert!(parse_sample(Path::new("t.sample"), "--- prefix ---\nx\n").is_err());
        assert!(parse_sample(Path::new("t.sample"), "junk\n--- generation ---\nx").is_err());
    }

    /// A header whose name is a near miss of a section's is no header (a generation may hold
    /// such a line), but it is said, with the section meant: as the reason when the file then
    /// lacks its generation or starts with text, else as a warning.
    #[test]
    fn a_misspelled_header_gets_a_did_you_mean() {
        let e = parse_sample(
            Path::new("t.sample"),
            "--- prefix ---\nP\n--- generaton ---\nhi\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(
            e.message,
            "no '--- generation ---' section: `--- generaton ---` is not a section header: did you mean `--- generation ---`?"
        );
        let e = parse_sample(
            Path::new("t.sample"),
            "--- Prefix (ends with newline) ---\nP\n--- generation ---\nhi\n",
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.sample:1: text before the first section header: `--- Prefix (ends with newline) ---` is not a section header: did you mean `--- prefix ---`?"
        );
        for (written, meant) in [
            ("expectd", "expected"),
            ("tool", "tools"),
            ("notes", "note"),
            ("message", "messages"),
            ("kwarg", "kwargs"),
            ("round-trip", "roundtrip"),
        ] {
            let s = parse(&format!(
                "--- generation ---\nhi\n--- {written} ---\n{{}}\n"
            ));
            assert_eq!(s.warnings.len(), 1, "{written}");
            assert_eq!(s.warnings[0].line, 3);
            assert_eq!(
                s.warnings[0].message,
                format!(
                    "`--- {written} ---` is not a section header: did you mean `--- {meant} ---`? (it is read as text of the section above it)"
                )
            );
        }
        // A line far from every section name is text, and nothing is said.
        let s = parse("--- generation ---\nhi\n--- summary ---\nok\n");
        assert!(s.warnings.is_empty());
        assert_eq!(s.generation, "hi\n--- summary ---\nok");
    }

    /// The types an expected error may name are those rtbench reports.
    #[test]
    fn every_suggested_exception_type_is_known() {
        for t in EXCEPTION_TYPES {
            assert!(
                rtbench_engine::py::ExceptionType::from_name(t).is_some(),
                "{t}"
            );
        }
    }
}
