//! Reading the command line's inputs: template, prefix, tools and generation files.
//!
//! `--template` is a response template, a `tokenizer_config.json` holding one, or a folder
//! holding either (`template.json` first). The generation (OUTPUT_FILE) is a plain text file
//! (read exactly, as the generated text), a `.sample` file (its generation, with its prefix and
//! tools unless the command line gives them), or a folder of samples (every `.sample` and
//! `.txt` file in it, sorted by name).

use std::path::{Path, PathBuf};

use crate::cli::{Failure, InputArgs};
use rtbench_engine::diagnostic::Location;
use rtbench_engine::py::{self, PathSeg};
use rtbench_engine::template::Template;
use rtbench_engine::template::source::{LoadError, TemplateSource, load_file};
use rtbench_engine::value::Value;
use rtbench_tooling::model::{Conversation, Model, prepare};
use rtbench_tooling::sample::{self, expand, parse_sample};
use rtbench_tooling::testing::{TEMPLATE_FILES, template_beside};

/// Everything `parse` and `stream` need for one generation.
pub struct Inputs {
    pub template: Template,
    pub prefix: Option<String>,
    pub tools: Option<Value>,
    /// The generation's text (decoded, when it was given as token ids).
    pub output: String,
    /// The generation as token ids, when it was given so (`--ids`, or a sample's
    /// `--- generation (ids) ---`), with the prompt's ids when those were given too.
    pub ids: Option<TokenIds>,
}

/// A generation given as token ids.
pub struct TokenIds {
    pub generation: Vec<u32>,
    /// The prompt's ids (`--prefix-ids`, or a sample's `--- prefix (ids) ---`); without them
    /// the text prefix is used (the reference encodes it).
    pub prefix: Option<Vec<u32>>,
}

/// The template file `--template` names: the file itself, or a folder's `template.json` (else
/// its `tokenizer_config.json`). A folder with neither is a usage error.
pub fn template_path(path: &Path) -> Result<PathBuf, Failure> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    template_beside(path).ok_or_else(|| {
        Failure::usage(format!(
            "{} is a folder with no {}: give the template file with --template",
            path.display(),
            TEMPLATE_FILES.join(" or ")
        ))
    })
}

/// Loads the template `--template` names, to run under the reference version this run
/// follows ([`crate::cli::reference`]).
pub fn template(path: &Path) -> Result<(Template, TemplateSource), Failure> {
    let path = template_path(path)?;
    load_file(&path)
        .map(|(t, source)| (t.with_reference(crate::cli::reference()), source))
        .map_err(|e| match e {
            LoadError::Io { .. } => Failure::usage(e.to_string()),
            LoadError::Invalid(d) => Failure::invalid(d.to_string()),
        })
}

/// Reads a UTF-8 text file exactly (no newline translation).
/// Input files larger than this are refused (a device like `/dev/zero` never ends).
pub const MAX_INPUT: u64 = 1 << 30;

pub fn text_file(path: &Path, what: &str) -> Result<String, Failure> {
    use std::io::Read;
    let cannot =
        |e: std::io::Error| Failure::usage(format!("cannot read {what} {}: {e}", path.display()));
    let meta = std::fs::metadata(path).map_err(cannot)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() || t.is_block_device() || t.is_socket() {
            return Err(Failure::usage(format!(
                "{what} {} is a device or socket, not a file: give a file (a pipe such as <(...) works too)",
                path.display()
            )));
        }
    }
    if meta.is_dir() {
        return Err(Failure::usage(format!(
            "{what} {} is a folder: give a file",
            path.display()
        )));
    }
    // A pipe has no length: read at most MAX_INPUT (+1 to see that it goes on).
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_INPUT + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(Failure::usage(format!(
            "{what} {} is larger than {} GiB: rtbench reads whole files",
            path.display(),
            MAX_INPUT >> 30
        )));
    }
    // Generations can be large: validate with SIMD, and report the position only on failure.
    if simdutf8::basic::from_utf8(&bytes).is_err() {
        let at = std::str::from_utf8(&bytes).map_or_else(|e| e.valid_up_to(), |_| 0);
        return Err(Failure::usage(format!(
            "{what} {} is not valid UTF-8 (byte {at})",
            path.display()
        )));
    }
    // SAFETY: `bytes` was validated as UTF-8 just above.
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

/// Reads a `--tools` file: a JSON list of tool schemas. A file that is not JSON is an error
/// (exit 1). A shape the reference reads but partly ignores (a tool that is not an object, a
/// `function` that is not one, `properties` that are not an object, ...) is a warning on
/// stderr naming the file, line and column; the parse goes on with the reference's result.
/// What the reference itself raises on (tools that are a number) is the parse's error.
pub fn tools_file(path: &Path) -> Result<Value, Failure> {
    let text = text_file(path, "tools file")?;
    // Read as the reference's command line reads it (`json.load`, its nesting limit included).
    let (value, spans) = py::json_loads_with_spans(&text).map_err(|e| {
        Failure::invalid(format!(
            "tools file {}:{}:{}: invalid JSON: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })?;
    let problems = check_tools(&value);
    if !problems.is_empty() {
        for (at, message) in problems {
            let offset = spans.get(&at).map_or(0, |n| n.value.start);
            let at = Location::new(&text, offset..offset);
            note!(
                "warning: tools file {}:{}:{}: {message}",
                path.display(),
                at.line,
                at.column
            );
        }
    }
    Ok(value)
}

/// What the reference ignores in a tools value (`transformers.utils.chat_parsing` reads a
/// list of tools, OpenAI style `{"type": "function", "function": {"name": ..., "parameters":
/// {...}}}` or flat `{"name": ..., "parameters": {...}}`, and silently skips what it cannot
/// use): the JSON path of each offending node and what happens to it. None of these is an
/// error: the reference parses on without them. (Tools that are a number or `true` make the
/// reference raise `TypeError`; the parser reports that.)
pub fn check_tools(tools: &Value) -> Vec<(Vec<PathSeg>, String)> {
    let mut out = Vec::new();
    let items = match tools {
        Value::Null => return out,
        Value::List(items) => items,
        // Iterating a dict gives its keys, a string its characters: strings, never tools.
        Value::Dict(d) if !d.is_empty() => {
            out.push((
                vec![],
                "expected a list of tools, got an object: the reference reads its keys as tools \
                 and ignores them, so no argument is cast; wrap it in [ ]"
                    .into(),
            ));
            return out;
        }
        Value::Str(s) if !s.is_empty() => {
            out.push((
                vec![],
                "expected a list of tools, got a string: the reference reads its characters as \
                 tools and ignores them, so no argument is cast"
                    .into(),
            ));
            return out;
        }
        _ => return out,
    };
    for (i, tool) in items.iter().enumerate() {
        let n = i + 1;
        let at = |segs: &[&str]| {
            let mut p = vec![PathSeg::Index(i)];
            p.extend(segs.iter().map(|s| PathSeg::Key((*s).to_string())));
            p
        };
        let Value::Dict(tool) = tool else {
            out.push((
                at(&[]),
                format!(
                    "tool {n} is {}, not a tool schema (an object with a `function` object); \
                     the reference ignores it",
                    tool.json_kind()
                ),
            ));
            continue;
        };
        let (func, base): (&rtbench_engine::value::Dict, &[&str]) = match tool.get("function") {
            Some(Value::Dict(f)) => (f, &["function"]),
            Some(other) => {
                out.push((
                    at(&["function"]),
                    format!(
                        "tool {n}: `function` is {}, not an object with `name` and \
                         `parameters`; the reference ignores the tool",
                        other.json_kind()
                    ),
                ));
                continue;
            }
            None if tool.contains_key("name") => (tool, &[]),
            None => {
                out.push((
                    at(&[]),
                    format!(
                        "tool {n} has no `function` object (write {{\"type\": \"function\", \
                         \"function\": {{\"name\": ..., \"parameters\": {{...}}}}}}); the \
                         reference ignores it"
                    ),
                ));
                continue;
            }
        };
        let path = |key: &str| {
            let mut segs = base.to_vec();
            segs.push(key);
            at(&segs)
        };
        let name = match func.get("name") {
            Some(Value::Str(name)) => name,
            Some(other) => {
                out.push((
                    path("name"),
                    format!(
                        "tool {n}: `name` is {}, not a string; the reference ignores the tool",
                        other.json_kind()
                    ),
                ));
                continue;
            }
            None => {
                out.push((
                    at(base),
                    format!(
                        "tool {n}: {} has no `name`; the reference ignores the tool",
                        if base.is_empty() {
                            "the tool"
                        } else {
                            "its `function`"
                        }
                    ),
                ));
                continue;
            }
        };
        match func.get("parameters") {
            None | Some(Value::Null) => {}
            Some(Value::Dict(params)) => match params.get("properties") {
                None | Some(Value::Dict(_)) => {}
                Some(other) => {
                    let mut segs = base.to_vec();
                    segs.extend(["parameters", "properties"]);
                    out.push((
                        at(&segs),
                        format!(
                            "tool {n} ('{name}'): `parameters.properties` is {}, not an \
                             object; its arguments are not cast",
                            other.json_kind()
                        ),
                    ));
                }
            },
            Some(other) => out.push((
                path("parameters"),
                format!(
                    "tool {n} ('{name}'): `parameters` is {}, not a JSON schema object; its \
                     arguments are not cast",
                    other.json_kind()
                ),
            )),
        }
    }
    out
}

/// What a command runs on: the template, the prefix and tools from the command line, and the
/// generation files (one, or a folder's samples).
pub struct Job {
    pub template: Template,
    prefix: Option<String>,
    tools: Option<Value>,
    /// The model folder (`--model`, else the template's folder), opened when first needed.
    model_dir: PathBuf,
    model: std::sync::OnceLock<Model>,
    /// `--messages` and `--kwargs`: the prefix is their rendering.
    messages: Option<Value>,
    kwargs: Option<Value>,
    /// `--ids`: the generation files hold token ids.
    ids: bool,
    /// `--prefix-ids`: the prompt's token ids.
    prefix_ids: Option<Vec<u32>>,
    /// The generation files, in order.
    pub files: Vec<PathBuf>,
    /// Whether OUTPUT_FILE was a folder (the commands then print one JSON line per sample).
    pub folder: bool,
}

/// Reads the template, prefix and tools options, and lists the generation files.
pub fn job(args: &InputArgs) -> Result<Job, Failure> {
    let (template, _) = template(&args.template)?;
    let model_dir = match &args.model {
        Some(d) if !d.is_dir() => {
            return Err(Failure::usage(format!(
                "{}: no such folder (--model takes a model folder)",
                d.display()
            )));
        }
        Some(d) => d.clone(),
        None => template_path(&args.template)?
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    let messages = args
        .messages
        .as_deref()
        .map(|f| crate::cli::model::json_file(f, "the messages file"))
        .transpose()?;
    if messages
        .as_ref()
        .is_some_and(|m| !matches!(m, Value::List(_)))
    {
        return Err(Failure::invalid(
            "the messages file must hold a JSON list of messages ({\"role\": ..., \"content\": ...})",
        ));
    }
    let kwargs = args
        .kwargs
        .as_deref()
        .map(crate::cli::model::kwargs_arg)
        .transpose()?;
    let prefix = match (&args.prefix_file, &args.prefix) {
        (Some(f), _) => Some(text_file(f, "prefix file")?),
        (None, Some(s)) => Some(s.clone()),
        (None, None) => None,
    };
    let tools = args.tools.as_deref().map(tools_file).transpose()?;
    let prefix_ids = args
        .prefix_ids
        .as_deref()
        .map(|f| {
            crate::cli::model::ids_from(&text_file(f, "prefix ids file")?, &f.display().to_string())
        })
        .transpose()?;
    // With the prompt's ids, the text prefix is their decoding.
    let prefix = prefix.or_else(|| prefix_ids.as_ref().map(|_| String::new()));
    let folder = args.output.is_dir();
    let files = if folder {
        let files = expand(&args.output).map_err(|e| {
            Failure::usage(format!("cannot read folder {}: {e}", args.output.display()))
        })?;
        if files.is_empty() {
            return Err(Failure::usage(format!(
                "{}: no samples (.sample or .txt files) in this folder",
                args.output.display()
            )));
        }
        files
    } else {
        vec![args.output.clone()]
    };
    Ok(Job {
        template,
        prefix,
        tools,
        model_dir,
        model: std::sync::OnceLock::new(),
        messages,
        kwargs,
        ids: args.ids,
        prefix_ids,
        files,
        folder,
    })
}

impl Job {
    /// The inputs for one generation file. A `.sample` file gives its generation, and its
    /// prefix and tools unless the command line gave them; a `.sample` without a prefix section
    /// is parsed with an empty prefix, as the workbench and `rtbench test` do (with a warning
    /// on stderr). Any other file is the generation itself, and has a prefix only from the
    /// command line.
    pub fn inputs(&self, file: &Path) -> Result<Inputs, Failure> {
        let is_sample = file.extension().is_some_and(|e| e == sample::EXTENSION);
        if !is_sample {
            let text = text_file(file, "output file")?;
            let (output, ids) = if self.ids {
                let ids = crate::cli::model::ids_from(&text, &file.display().to_string())?;
                let tokenizer = self.tokenizer()?;
                self.warn_unknown(file, tokenizer, &ids);
                let output = tokenizer.decode_lenient(&ids).map_err(Failure::invalid)?;
                (
                    output,
                    Some(TokenIds {
                        generation: ids,
                        prefix: self.prefix_ids.clone(),
                    }),
                )
            } else {
                (text, None)
            };
            let prefix = match (&self.messages, &self.prefix_ids) {
                (Some(_), _) => Some(self.rendered_prefix(self.tools.as_ref())?),
                (None, Some(p)) => Some(
                    self.tokenizer()?
                        .decode_lenient(p)
                        .map_err(Failure::invalid)?,
                ),
                (None, None) => self.prefix.clone(),
            };
            return Ok(Inputs {
                template: self.template.clone(),
                prefix,
                tools: self.tools.clone(),
                output,
                ids,
            });
        }
        let text = text_file(file, "sample file")?;
        let mut sample = parse_sample(file, &text).map_err(|e| Failure::invalid(e.to_string()))?;
        if let Some(m) = &self.messages {
            // The command line's conversation replaces the sample's prefix.
            sample.model.messages = Some(m.clone());
            sample.model.kwargs = self.kwargs.clone();
            sample.model.prefix_ids = None;
            sample.prefix = None;
        }
        if self.tools.is_some() {
            sample.tools = self.tools.clone();
        }
        if self.prefix.is_some() {
            // The command line's prefix replaces the sample's, ids included.
            sample.model.prefix_ids = None;
        }
        let sample =
            prepare(&sample, Some(self.model())).map_err(crate::cli::model::prepare_failure)?;
        for w in &sample.warnings {
            if w.message.starts_with("the prefix differs") {
                note!("warning: {}: {}", file.display(), w.message);
            }
        }
        let prefix = match (&self.prefix, sample.prefix) {
            (Some(p), _) => p.clone(),
            (None, Some(p)) => p,
            (None, None) => {
                note!(
                    "warning: {}: the sample has no prefix section; parsing with an empty prefix, as the workbench does (give --prefix or --prefix-file to set one)",
                    file.display()
                );
                String::new()
            }
        };
        let ids = sample.model.generation_ids.map(|generation| TokenIds {
            generation,
            prefix: sample.model.prefix_ids,
        });
        Ok(Inputs {
            template: self.template.clone(),
            prefix: Some(prefix),
            tools: self.tools.clone().or(sample.tools),
            output: sample.generation,
            ids,
        })
    }
}

impl Job {
    pub fn model(&self) -> &Model {
        self.model.get_or_init(|| Model::open(&self.model_dir))
    }

    /// The model's tokenizer, for token ids.
    pub fn tokenizer(&self) -> Result<&rtbench_tooling::model::ModelTokenizer, Failure> {
        match &self.model().tokenizer {
            Err(e) => Err(Failure::invalid(e.clone())),
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(Failure::usage(format!(
                "--ids: {} has no tokenizer.json (give the model folder with --model)",
                self.model_dir.display()
            ))),
        }
    }

    /// Ids outside the vocabulary decode to nothing, as in the reference: said on stderr.
    fn warn_unknown(
        &self,
        file: &Path,
        tokenizer: &rtbench_tooling::model::ModelTokenizer,
        ids: &[u32],
    ) {
        let unknown = tokenizer.unknown_ids(ids);
        if !unknown.is_empty() {
            note!(
                "warning: {}: {} id(s) outside the vocabulary ({}) decode to nothing: the reference drops them",
                file.display(),
                unknown.len(),
                unknown
                    .iter()
                    .take(5)
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }

    /// The model's own chunkings of `text` (model tokens, streamer words) when the model
    /// folder has a tokenizer; a text that does not survive encode-then-decode gets none, with
    /// a warning on stderr.
    pub fn model_chunkings(&self, text: &str) -> Vec<rtbench_tooling::chunking::Chunking> {
        let Some(tokenizer) = self.model().tokenizer() else {
            return Vec::new();
        };
        rtbench_tooling::model::model_chunkings(tokenizer, text, None).unwrap_or_else(|e| {
            note!("warning: {e}");
            Vec::new()
        })
    }

    /// `--messages` rendered with the model's chat template (with the generation prompt).
    fn rendered_prefix(&self, tools: Option<&Value>) -> Result<String, Failure> {
        let Some(messages) = &self.messages else {
            return Err(missing_prefix());
        };
        rtbench_tooling::model::render(
            self.model(),
            &Conversation {
                messages,
                tools,
                kwargs: self.kwargs.as_ref(),
                add_generation_prompt: true,
            },
        )
        .map_err(crate::cli::model::prepare_failure)
    }
}

/// The error for a missing prefix (a parse error, exit 1, as in the reference).
pub fn missing_prefix() -> Failure {
    Failure::invalid(
        "a prefix is required (--prefix-file FILE or --prefix STRING; --prefix '' opts out): \
         chat templates often pre-write part of the assistant message, such as an opening \
         <think>, which the parser must see",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
