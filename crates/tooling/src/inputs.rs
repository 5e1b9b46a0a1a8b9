//! One input policy for the command line and the workbench: how a file is read, which template
//! a path names, how a sample's conversation and token ids become the text that is parsed, and
//! what is odd about a tools value.
//!
//! - [`read_input`]: a whole UTF-8 file, at most [`MAX_INPUT`] bytes; anything but a regular
//!   file (a folder, a device, a pipe) is refused before anything is read, and invalid UTF-8
//!   is an error located in the file. [`open_input`] and [`open_stream`] open a file the same
//!   way for a reader that streams it.
//! - [`template_file`], [`model_dir`], [`load_template_file`] and [`load_template_text`]: the
//!   template a path names (a response template, a `tokenizer_config.json` holding one, or a
//!   folder holding either, `template.json` first), the model folder beside it, and the
//!   template loaded from a file or from text built into the binary (the bundled sample).
//! - [`prepare_sample`]: a sample ready to parse (conversation rendered, token ids decoded),
//!   with the command line's [`Overrides`] in place of its own prefix, tools or conversation.
//! - [`check_tools`], [`tool_warnings`] and [`sample_tool_warnings`]: what the reference
//!   silently ignores in tools, as warnings located in the file that holds them (never errors:
//!   the reference parses on without those tools).

use std::ops::Range;
use std::path::{Path, PathBuf};

use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::py::{self, PathSeg};
use rtbench_engine::template::Template;
use rtbench_engine::template::source::{LoadError, TemplateSource, source_from_text};
use rtbench_engine::value::{Dict, Value};

pub use crate::files::{
    MAX_INPUT, Pipes, ReadError, ReadErrorKind, open_input, open_stream, read_input, read_text,
};
use crate::model::{Model, PrepareError, prepare};
use crate::sample::{self, Sample};

/// Template file names looked for in a folder (beside samples, or named as the template), in
/// order.
pub const TEMPLATE_FILES: [&str; 2] = ["template.json", "tokenizer_config.json"];

/// The template file in `dir`, if there is one.
pub fn template_beside(dir: &Path) -> Option<PathBuf> {
    TEMPLATE_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// A folder given as the template that holds none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoTemplate {
    /// The folder given.
    pub folder: PathBuf,
}

impl std::fmt::Display for NoTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is a folder with no {}",
            self.folder.display(),
            TEMPLATE_FILES.join(" or ")
        )
    }
}

/// The template file a path names: the path itself, or a folder's `template.json` (else its
/// `tokenizer_config.json`).
pub fn template_file(path: &Path) -> Result<PathBuf, NoTemplate> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    template_beside(path).ok_or_else(|| NoTemplate {
        folder: path.to_path_buf(),
    })
}

/// The model folder of a template file (its folder, where the chat template and the tokenizer
/// are looked for; `.` for a bare file name).
pub fn model_dir(template_file: &Path) -> PathBuf {
    template_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Why a template cannot be used.
#[derive(Debug)]
pub enum TemplateError {
    /// The file cannot be read (missing, a folder, a device, too large).
    Read(ReadError),
    /// Not JSON, not UTF-8, or not a valid template: located in the file.
    Invalid(Box<Diagnostic>),
}

/// Reads and validates a template file (a response template, or a `tokenizer_config.json`
/// holding one), under the newest reference version. The file is read as [`read_text`] reads
/// inputs for the reader `pipes` names.
pub fn load_template_file(
    path: &Path,
    pipes: Pipes,
) -> Result<(Template, TemplateSource), TemplateError> {
    let name = path.display().to_string();
    let text = match read_text(path, "template", pipes) {
        Ok(text) => text,
        // Not UTF-8 is a fault of the template's text: located there, like bad JSON.
        Err(ReadError {
            kind: ReadErrorKind::NotUtf8 { byte, lossy, .. },
            ..
        }) => {
            let at = lossy.floor_char_boundary(byte);
            let d = Diagnostic::error("template file is not valid UTF-8")
                .in_file(name)
                .at(&lossy, at..lossy.ceil_char_boundary(at + 1))
                .with_help(Some("save it as UTF-8 (iconv -t UTF-8 converts it)".into()));
            return Err(TemplateError::Invalid(Box::new(d)));
        }
        Err(e) => return Err(TemplateError::Read(e)),
    };
    load_template_text(name, text).map_err(TemplateError::Invalid)
}

/// Validates a template given as text (`name` is used in diagnostics): the bundled sample's,
/// or a file's once read.
///
/// A text starting with a byte-order mark is refused, as the reference refuses it (Python's
/// `json.loads` on text, and transformers reading `tokenizer_config.json`, raise "Unexpected
/// UTF-8 BOM"): a template rtbench accepted there would not load in transformers. The error
/// says how to remove it.
pub fn load_template_text(
    name: String,
    text: String,
) -> Result<(Template, TemplateSource), Box<Diagnostic>> {
    let bom = text.starts_with('\u{feff}');
    let invalid = |e: LoadError| match e {
        LoadError::Invalid(d) if bom => Box::new((*d).with_help(Some(BOM_HELP.into()))),
        LoadError::Invalid(d) => d,
        other => Box::new(Diagnostic::error(other.to_string())),
    };
    let source = source_from_text(name, text).map_err(invalid)?;
    let template = source.template().map_err(invalid)?;
    Ok((template, source))
}

/// What to do about a JSON file that starts with a byte-order mark.
pub const BOM_HELP: &str = "the file starts with a byte-order mark (U+FEFF), which JSON does \
    not allow and transformers refuses too: save it as UTF-8 without BOM (sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)";

/// What the command line gives in place of a sample's own inputs.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--prefix` / `--prefix-file`: replaces the sample's prefix, ids included.
    pub prefix: Option<String>,
    /// `--tools`.
    pub tools: Option<Value>,
    /// `--messages` (and `--kwargs`): the conversation whose rendering is the prefix.
    pub messages: Option<Value>,
    /// `--kwargs`: the chat template's keyword arguments for `--messages`.
    pub kwargs: Option<Value>,
}

/// A sample ready to parse: `overrides` in place of its own inputs, its conversation rendered
/// into the prefix and its token ids decoded with the model's files (see [`prepare`], whose
/// warnings it carries). The command line's prefix replaces the sample's, ids included, after
/// the sample's own conversation was rendered (a chat template that fails still fails). A
/// sample that needs no model files is returned as it is.
pub fn prepare_sample(
    sample: &Sample,
    overrides: &Overrides,
    model: Option<&Model>,
) -> Result<Sample, PrepareError> {
    let mut sample = sample.clone();
    if let Some(m) = &overrides.messages {
        // The conversation replaces the sample's prefix.
        sample.model.messages = Some(m.clone());
        sample.model.kwargs = overrides.kwargs.clone();
        sample.model.prefix_ids = None;
        sample.prefix = None;
    }
    if overrides.tools.is_some() {
        sample.tools = overrides.tools.clone();
    }
    if overrides.prefix.is_some() {
        sample.model.prefix_ids = None;
    }
    let mut sample = prepare(&sample, model)?;
    if let Some(p) = &overrides.prefix {
        sample.prefix = Some(p.clone());
    }
    Ok(sample)
}

/// What the reference ignores in a tools value (`transformers.utils.chat_parsing` reads a
/// list of tools, OpenAI style `{"type": "function", "function": {"name": ..., "parameters":
/// {...}}}` or flat `{"name": ..., "parameters": {...}}`, and silently skips what it cannot
/// use): the JSON path of each offending node and what happens to it. None of these is an
/// error: the reference parses on without them. (Tools that are a number or `true` make the
/// reference raise `TypeError`; the parser reports that.)
pub fn check_tools(tools: &Value) -> Vec<ToolProblem> {
    let items = match tools {
        Value::List(items) => items,
        // Iterating a dict gives its keys, a string its characters: strings, never tools.
        Value::Dict(d) if !d.is_empty() => {
            return vec![(vec![], "expected a list of tools, got an object: the reference reads its keys as tools and ignores them, so no argument is cast; wrap it in [ ]".into())];
        }
        Value::Str(s) if !s.is_empty() => {
            return vec![(vec![], "expected a list of tools, got a string: the reference reads its characters as tools and ignores them, so no argument is cast".into())];
        }
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for (i, tool) in items.iter().enumerate() {
        let (func, base) = match tool_function(i, tool) {
            Ok(found) => found,
            Err(problem) => {
                out.push(problem);
                continue;
            }
        };
        let tool = ToolAt { i, base };
        match func.get("name") {
            Some(Value::Str(name)) => out.extend(check_parameters(&tool, name, func)),
            Some(other) => out.push((
                tool.path(&["name"]),
                format!(
                    "tool {}: `name` is {}, not a string; the reference ignores the tool",
                    i + 1,
                    other.json_kind()
                ),
            )),
            None => out.push((
                tool.path(&[]),
                format!(
                    "tool {}: {} has no `name`; the reference ignores the tool",
                    i + 1,
                    if base.is_empty() {
                        "the tool"
                    } else {
                        "its `function`"
                    }
                ),
            )),
        }
    }
    out
}

/// A node of a tools value (its JSON path) and what the reference does with it.
pub type ToolProblem = (Vec<PathSeg>, String);

/// A tool's function object, and its keys' place in the tool (`["function"]`, or none).
type FunctionAt<'a> = (&'a Dict, &'static [&'static str]);

/// Where tool `i` is, and where its function object is in it (`["function"]`, or nothing for
/// a flat tool).
struct ToolAt {
    i: usize,
    base: &'static [&'static str],
}

impl ToolAt {
    /// The JSON path of `keys` under the tool's function object.
    fn path(&self, keys: &[&str]) -> Vec<PathSeg> {
        let mut p = vec![PathSeg::Index(self.i)];
        p.extend(
            self.base
                .iter()
                .chain(keys)
                .map(|s| PathSeg::Key((*s).to_string())),
        );
        p
    }
}

/// Tool `i`'s function object (`{"function": {...}}`, or the flat tool itself) with its
/// place in the tool, or why the reference ignores the tool.
fn tool_function(i: usize, tool: &Value) -> Result<FunctionAt<'_>, ToolProblem> {
    let n = i + 1;
    let at = |keys: &'static [&'static str]| ToolAt { i, base: keys }.path(&[]);
    let Value::Dict(tool) = tool else {
        return Err((
            at(&[]),
            format!(
                "tool {n} is {}, not a tool schema (an object with a `function` object); the \
                 reference ignores it",
                tool.json_kind()
            ),
        ));
    };
    match tool.get("function") {
        Some(Value::Dict(f)) => Ok((f, &["function"])),
        Some(other) => Err((
            at(&["function"]),
            format!(
                "tool {n}: `function` is {}, not an object with `name` and `parameters`; the \
                 reference ignores the tool",
                other.json_kind()
            ),
        )),
        None if tool.contains_key("name") => Ok((tool, &[])),
        None => Err((
            at(&[]),
            format!(
                "tool {n} has no `function` object (write {{\"type\": \"function\", \
                 \"function\": {{\"name\": ..., \"parameters\": {{...}}}}}}); the reference \
                 ignores it"
            ),
        )),
    }
}

/// What keeps a named tool's arguments from being cast: `parameters` (or its `properties`)
/// that are not an object.
fn check_parameters(tool: &ToolAt, name: &str, func: &Dict) -> Option<ToolProblem> {
    let n = tool.i + 1;
    match func.get("parameters") {
        None | Some(Value::Null) => None,
        Some(Value::Dict(params)) => match params.get("properties") {
            None | Some(Value::Dict(_)) => None,
            Some(other) => Some((
                tool.path(&["parameters", "properties"]),
                format!(
                    "tool {n} ('{name}'): `parameters.properties` is {}, not an object; its \
                     arguments are not cast",
                    other.json_kind()
                ),
            )),
        },
        Some(other) => Some((
            tool.path(&["parameters"]),
            format!(
                "tool {n} ('{name}'): `parameters` is {}, not a JSON schema object; its \
                 arguments are not cast",
                other.json_kind()
            ),
        )),
    }
}

/// The problems [`check_tools`] finds in the tools JSON at `json` of `file_text`, as warnings
/// located in that file (named `file`). JSON that does not parse gives none: that is an error
/// said where the tools are read.
pub fn tool_warnings(file: &str, file_text: &str, json: Range<usize>) -> Vec<Diagnostic> {
    let Some(body) = file_text.get(json.clone()) else {
        return Vec::new();
    };
    let Ok((value, spans)) = py::json_loads_with_spans(body) else {
        return Vec::new();
    };
    check_tools(&value)
        .into_iter()
        .map(|(at, message)| {
            let offset = json.start + spans.get(&at).map_or(0, |n| n.value.start);
            Diagnostic::warning(message)
                .in_file(file)
                .at(file_text, offset..offset)
        })
        .collect()
}

/// The problems of a `.sample` file's tools section (see [`tool_warnings`]), located in the
/// file (`file_text`, named `file`). Anything else (a bare generation, a corpus record) has
/// none.
pub fn sample_tool_warnings(sample: &Sample, file: &str, file_text: &str) -> Vec<Diagnostic> {
    let is_sample = sample
        .path
        .extension()
        .is_some_and(|e| e == sample::EXTENSION);
    if sample.tools.is_none() || !is_sample {
        return Vec::new();
    }
    sample::section_span(file_text, "tools")
        .map(|json| tool_warnings(file, file_text, json))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::diagnostic::Location;

    /// The first warning about a tools value, if any.
    fn check(text: &str) -> Result<(), String> {
        match check_tools(&py::json_loads(text).unwrap())
            .into_iter()
            .next()
        {
            None => Ok(()),
            Some((_, m)) => Err(m),
        }
    }

    #[test]
    fn tools_are_checked_as_leniently_as_the_reference_reads_them() {
        assert!(check("null").is_ok());
        assert!(check("[]").is_ok());
        assert!(
            check(r#"[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}}]"#)
                .is_ok()
        );
        // Flat tools and tools without parameters are read by the reference.
        assert!(check(r#"[{"name": "f", "parameters": {}}, {"function": {"name": "g"}}]"#).is_ok());
        // Falsy values are no tools; a number the reference raises on is the parser's error.
        for none in ["0", "false", "\"\"", "{}", "3", "true"] {
            assert!(check(none).is_ok(), "{none}");
        }
        let e = check(r#"{"type": "function", "function": {"name": "f"}}"#).unwrap_err();
        assert!(
            e.starts_with("expected a list of tools, got an object"),
            "{e}"
        );
        assert!(check(r#""f""#).unwrap_err().contains("got a string"));
        let e = check(r#"[{"function": {"name": "f"}}, {"type": "function"}]"#).unwrap_err();
        assert!(e.starts_with("tool 2 has no `function` object"), "{e}");
        let e = check(r#"[{"function": "f"}]"#).unwrap_err();
        assert!(e.contains("`function` is a string"), "{e}");
        let e = check(r#"[{"function": {"parameters": {}}}]"#).unwrap_err();
        assert!(e.contains("its `function` has no `name`"), "{e}");
        let e = check(r#"[{"function": {"name": 3}}]"#).unwrap_err();
        assert!(e.contains("`name` is a number"), "{e}");
        let e = check(r#"[{"function": {"name": "f", "parameters": []}}]"#).unwrap_err();
        assert!(e.contains("`parameters` is a list"), "{e}");
        let e = check(r#"[{"function": {"name": "f", "parameters": {"properties": []}}}]"#)
            .unwrap_err();
        assert!(e.contains("`parameters.properties` is a list"), "{e}");
        assert!(check("[1]").unwrap_err().starts_with("tool 1 is a number"));
        // Every problem is reported, not only the first.
        let all = check_tools(&py::json_loads(r#"[1, {"function": "f"}, {}]"#).unwrap());
        assert_eq!(all.len(), 3);
    }

    #[test]
    fn tool_errors_point_at_the_offending_node() {
        let text = "[\n  {\"function\": {\"name\": \"f\"}},\n  {\"type\": \"function\"}\n]";
        let (at, _) = check_tools(&py::json_loads(text).unwrap()).remove(0);
        let (_, spans) = py::json_loads_with_spans(text).unwrap();
        let start = spans.get(&at).unwrap().value.start;
        let at = Location::new(text, start..start);
        assert_eq!((at.line, at.column), (3, 3));
    }

    /// A fresh folder for one test (the tests run in parallel).
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("rtbench-policy-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_is_read_exactly_and_a_folder_is_refused() {
        let dir = scratch("read");
        let f = dir.join("prefix.txt");
        std::fs::write(&f, "\u{feff}a\r\nb\n").unwrap();
        // Exactly: line breaks, and a byte-order mark, which is text here.
        assert_eq!(read_input(&f, "prefix file").unwrap(), "\u{feff}a\r\nb\n");
        assert_eq!(
            read_text(&f, "prefix file", Pipes::Refuse).unwrap(),
            "\u{feff}a\r\nb\n"
        );
        let e = read_input(&dir.join("missing.txt"), "prefix file").unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::Io(_)));
        assert!(e.to_string().starts_with("cannot read prefix file "), "{e}");
        let e = read_input(&dir, "tools file").unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::Folder));
        assert!(e.to_string().ends_with("is a folder: give a file"), "{e}");
        assert_eq!(e.reason(), "it is a folder: give a file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A device or a pipe never ends (`/dev/zero`, `<(cat /dev/zero)`): refused by every
    /// reader before it is opened, with what to do.
    #[cfg(unix)]
    #[test]
    fn a_device_or_a_pipe_is_refused_by_every_reader() {
        let e = read_text(Path::new("/dev/zero"), "output file", Pipes::Read).unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::Device), "{e}");
        assert!(
            e.to_string().contains("is a device or socket, not a file"),
            "{e}"
        );
        let e = read_text(Path::new("/dev/zero"), "sample file", Pipes::Refuse).unwrap_err();
        assert!(
            e.reason()
                .starts_with("it is a pipe or a device, not a file"),
            "{e}"
        );
        assert!(open_input(Path::new("/dev/zero"), "corpus file").is_err());
        assert!(open_stream(Path::new("/dev/zero"), "corpus file").is_err());
        let dir = scratch("fifo");
        let fifo = dir.join("live.sample");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            // Refused before it is opened: opening a FIFO with no writer would block.
            let e = read_text(&fifo, "sample file", Pipes::Read).unwrap_err();
            assert!(matches!(e.kind, ReadErrorKind::Pipe), "{e}");
            assert!(
                e.reason()
                    .starts_with("it is a pipe, not a file: save its text to a file"),
                "{e}"
            );
            // The workbench's refusal says why it cannot read one even once.
            let e = read_text(&fifo, "sample file", Pipes::Refuse).unwrap_err();
            assert!(matches!(e.kind, ReadErrorKind::NotAFile), "{e}");
            assert!(
                e.reason().contains("reads its files again on every change"),
                "{e}"
            );
            let e = open_stream(&fifo, "corpus file").unwrap_err();
            assert!(matches!(e.kind, ReadErrorKind::Pipe), "{e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_over_the_limit_is_refused_without_being_read() {
        let dir = scratch("large");
        let f = dir.join("huge.txt");
        // Sparse: nothing is written, and nothing would be read.
        std::fs::File::create(&f)
            .unwrap()
            .set_len(MAX_INPUT + 1)
            .unwrap();
        let e = read_text(&f, "output file", Pipes::Read).unwrap_err();
        assert!(matches!(e.kind, ReadErrorKind::TooLarge), "{e}");
        assert!(
            e.to_string()
                .ends_with("is larger than 1 GiB: rtbench reads whole files"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn invalid_utf8_is_located_in_the_file_with_what_to_do() {
        let dir = scratch("utf8");
        let f = dir.join("gen.txt");
        std::fs::write(&f, b"ab\n\xc3\xa9x\xffy").unwrap();
        let e = read_text(&f, "output file", Pipes::Read).unwrap_err();
        let ReadErrorKind::NotUtf8 {
            byte,
            line,
            column,
            lossy,
        } = &e.kind
        else {
            panic!("{e}")
        };
        assert_eq!((*byte, *line, *column), (6, 2, 3));
        assert_eq!(lossy, "ab\néx\u{fffd}y");
        let m = e.to_string();
        assert!(m.starts_with("output file "), "{m}");
        assert!(
            m.contains("gen.txt is not valid UTF-8 (byte 6) at line 2, column 3"),
            "{m}"
        );
        assert!(m.contains("save it as UTF-8"), "{m}");
        // A template's is a located diagnostic of the template.
        let t = dir.join("template.json");
        std::fs::write(&t, b"{\"version\": \"\xff\"}").unwrap();
        let Err(TemplateError::Invalid(d)) = load_template_file(&t, Pipes::Read) else {
            panic!("a template that is not UTF-8 is invalid")
        };
        assert!(d.position().unwrap().ends_with("template.json:1:14"), "{d}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_template_a_path_names_and_its_model_folder() {
        let dir = scratch("resolve");
        let e = template_file(&dir).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} is a folder with no template.json or tokenizer_config.json",
                dir.display()
            )
        );
        let bundled =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/smollm3/template.json");
        let text = std::fs::read_to_string(&bundled).unwrap();
        // A tokenizer_config.json holding the template is found when there is no template.json.
        let config = format!("{{\"response_template\": {text}}}");
        std::fs::write(dir.join("tokenizer_config.json"), &config).unwrap();
        assert_eq!(
            template_file(&dir).unwrap(),
            dir.join("tokenizer_config.json")
        );
        let (_, source) = load_template_file(&template_file(&dir).unwrap(), Pipes::Refuse).unwrap();
        assert!(source.is_tokenizer_config());
        // template.json comes first; a file names itself.
        std::fs::write(dir.join("template.json"), &text).unwrap();
        assert_eq!(template_file(&dir).unwrap(), dir.join("template.json"));
        assert_eq!(template_file(&bundled).unwrap(), bundled);
        assert_eq!(model_dir(&dir.join("template.json")), dir);
        assert_eq!(model_dir(Path::new("template.json")), PathBuf::from("."));
        // Built-in text (the bundled sample) loads as the file does.
        assert!(load_template_text("bundled/template.json".into(), text).is_ok());
        let Err(TemplateError::Read(e)) = load_template_file(&dir.join("none.json"), Pipes::Read)
        else {
            panic!("a missing template is not read")
        };
        assert!(e.to_string().starts_with("cannot read template "), "{e}");
        let d = load_template_text("t.json".into(), "{".into()).unwrap_err();
        assert!(d.message.starts_with("invalid JSON"), "{d}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_samples_tools_are_checked_where_they_are_in_its_file() {
        let text = "--- generation ---\nx\n--- tools ---\n[\n  {\"function\": {\"name\": \"f\"}},\n  7\n]\n";
        let sample = crate::sample::parse_sample(Path::new("t.sample"), text).unwrap();
        let w = sample_tool_warnings(&sample, "t.sample", text);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].position().as_deref(), Some("t.sample:6:3"));
        assert!(
            w[0].message.starts_with("tool 2 is a number"),
            "{}",
            w[0].message
        );
        assert_eq!(w[0].severity, rtbench_engine::diagnostic::Severity::Warning);
        // A bare generation has no tools section; good tools give nothing.
        let bare = Sample::bare(Path::new("t.txt"), text.into());
        assert!(sample_tool_warnings(&bare, "t.txt", text).is_empty());
        let good = "--- generation ---\nx\n--- tools ---\n[{\"name\": \"f\"}]\n";
        let sample = crate::sample::parse_sample(Path::new("g.sample"), good).unwrap();
        assert!(sample_tool_warnings(&sample, "g.sample", good).is_empty());
    }

    #[test]
    fn the_command_lines_inputs_replace_the_samples_own() {
        let text = "--- prefix ---\nP\n--- generation ---\nG\n--- tools ---\n[]\n";
        let sample = crate::sample::parse_sample(Path::new("t.sample"), text).unwrap();
        let same = prepare_sample(&sample, &Overrides::default(), None).unwrap();
        assert_eq!(same, sample);
        let tools = py::json_loads(r#"[{"name": "f"}]"#).unwrap();
        let over = Overrides {
            prefix: Some("Q".into()),
            tools: Some(tools.clone()),
            ..Overrides::default()
        };
        let s = prepare_sample(&sample, &over, None).unwrap();
        assert_eq!(s.prefix.as_deref(), Some("Q"));
        assert_eq!(s.tools, Some(tools));
        assert_eq!(s.generation, "G");
        // A conversation needs the model's files.
        let over = Overrides {
            messages: Some(py::json_loads("[]").unwrap()),
            ..Overrides::default()
        };
        assert!(prepare_sample(&sample, &over, None).is_err());
    }
}
