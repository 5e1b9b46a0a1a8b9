//! Reading the command line's inputs: template, prefix, tools and generation files, JSON files
//! (messages), `--kwargs` and token id lists, through the input policy of
//! [`rtbench_tooling::inputs`].
//!
//! `--template` is a response template, a `tokenizer_config.json` holding one, or a folder
//! holding either (`template.json` first). The generation (OUTPUT_FILE) is a plain text file
//! (read exactly, as the generated text), a `.sample` file (its generation, with its prefix and
//! tools unless the command line gives them), or a folder of samples (every `.sample` and
//! `.txt` file in it, sorted by name).

use std::path::{Path, PathBuf};

use crate::cli::{Failure, InputArgs};
use rtbench_engine::py;
use rtbench_engine::template::Template;
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::Value;
use rtbench_tooling::inputs::{
    self as policy, Overrides, Pipes, TemplateError, prepare_sample, read_input, tool_warnings,
};
use rtbench_tooling::model::{Conversation, Model, PrepareError};
use rtbench_tooling::place::{Places, TextFile};
use rtbench_tooling::sample::{self, expand, parse_sample, token_ids};

/// Everything `parse` and `stream` need for one generation.
pub(super) struct Inputs {
    pub template: Template,
    pub prefix: Option<String>,
    pub tools: Option<Value>,
    /// The generation's text (decoded, when it was given as token ids).
    pub output: String,
    /// The generation as token ids, when it was given so (`--ids`, or a sample's
    /// `--- generation (ids) ---`), with the prompt's ids when those were given too.
    pub ids: Option<TokenIds>,
    /// The files the prefix and the generation are written in, for naming places.
    pub places: Places,
}

/// A generation given as token ids.
pub(super) struct TokenIds {
    pub generation: Vec<u32>,
    /// The prompt's ids (`--prefix-ids`, or a sample's `--- prefix (ids) ---`); without them
    /// the text prefix is used (the reference encodes it).
    pub prefix: Option<Vec<u32>>,
}

/// The template file `--template` names: the file itself, or a folder's `template.json` (else
/// its `tokenizer_config.json`). A folder with neither is a usage error.
pub(super) fn template_path(path: &Path) -> Result<PathBuf, Failure> {
    policy::template_file(path)
        .map_err(|e| Failure::usage(format!("{e}: give the template file with --template")))
}

/// Loads the template `--template` names, to run under the reference version this run
/// follows ([`crate::cli::reference`]).
pub(super) fn template(path: &Path) -> Result<(Template, TemplateSource), Failure> {
    let path = template_path(path)?;
    policy::load_template_file(&path, Pipes::Read)
        .map(|(t, source)| (t.with_reference(crate::cli::reference()), source))
        .map_err(|e| match e {
            TemplateError::Read(e) => Failure::usage(e.to_string()),
            TemplateError::Invalid(d) => Failure::invalid(d.to_string()),
        })
}

/// Reads a UTF-8 text file exactly (no newline translation), as the input policy reads
/// inputs ([`read_input`]: a folder, a device, a pipe, invalid UTF-8 or more than 1 GiB is a
/// usage error naming the file).
pub(super) fn text_file(path: &Path, what: &str) -> Result<String, Failure> {
    read_input(path, what).map_err(|e| Failure::usage(e.to_string()))
}

/// Reads a `--tools` file: a JSON list of tool schemas. A file that is not JSON is an error
/// (exit 1). A shape the reference reads but partly ignores (a tool that is not an object, a
/// `function` that is not one, `properties` that are not an object, ...) is a warning on
/// stderr naming the file, line and column ([`tool_warnings`]); the parse goes on with the
/// reference's result. What the reference itself raises on (tools that are a number) is the
/// parse's error.
pub(super) fn tools_file(path: &Path) -> Result<Value, Failure> {
    let text = text_file(path, "tools file")?;
    // Read as the reference's command line reads it (`json.load`, its nesting limit included).
    let (value, _) = py::json_loads_with_spans(&text).map_err(|e| {
        Failure::invalid(format!(
            "tools file {}:{}:{}: invalid JSON: {}{}",
            path.display(),
            e.line,
            e.column,
            e.message,
            bom_help(&text)
        ))
    })?;
    for w in tool_warnings(&path.display().to_string(), &text, 0..text.len()) {
        let at = w.position().unwrap_or_default();
        note!("warning: tools file {at}: {}", w.message);
    }
    Ok(value)
}

/// A JSON file's value (Python's json semantics), with the file's line and column on error.
pub(super) fn json_file(path: &Path, what: &str) -> Result<Value, Failure> {
    let text = text_file(path, what)?;
    py::json_loads(&text).map_err(|e| {
        Failure::invalid(format!(
            "{}:{}:{}: {what} is not JSON: {}{}",
            path.display(),
            e.line,
            e.column,
            e.message,
            bom_help(&text)
        ))
    })
}

/// What to do about JSON text that starts with a byte-order mark (refused as Python's json
/// refuses it): `; <help>`, or nothing.
fn bom_help(text: &str) -> String {
    if text.starts_with('\u{feff}') {
        format!("; {}", policy::BOM_HELP)
    } else {
        String::new()
    }
}

/// `--kwargs JSON`: an object.
pub(super) fn kwargs_arg(text: &str) -> Result<Value, Failure> {
    match py::json_loads(text) {
        Ok(v @ Value::Dict(_)) => Ok(v),
        Ok(_) => Err(Failure::usage(
            "--kwargs must be a JSON object, e.g. '{\"enable_thinking\": false}'",
        )),
        Err(e) => Err(Failure::usage(format!(
            "--kwargs is not JSON: {} at column {}",
            e.message, e.column
        ))),
    }
}

/// A chat template or decoding failure: exit 1, located where known.
pub(super) fn prepare_failure(e: PrepareError) -> Failure {
    Failure::invalid(e.to_string())
}

/// Token ids from JSON text: a list of integers from 0.
pub(super) fn ids_from(text: &str, what: &str) -> Result<Vec<u32>, Failure> {
    let bad = || {
        Failure::invalid(format!(
            "{what} must be a JSON list of token ids (integers from 0)"
        ))
    };
    let value = py::json_loads(text).map_err(|e| {
        Failure::invalid(format!(
            "{what} is not JSON: {} at line {}, column {}",
            e.message, e.line, e.column
        ))
    })?;
    token_ids(&value).ok_or_else(bad)
}

/// What a command runs on: the template, the prefix and tools from the command line, and the
/// generation files (one, or a folder's samples).
pub(super) struct Job {
    pub template: Template,
    /// The template's file (what a command says of a template key, and a failed transform's
    /// placeholder, is located in it).
    pub source: TemplateSource,
    /// `--prefix` / `--prefix-file`, `--tools`, `--messages` and `--kwargs` (the prefix is then
    /// their rendering).
    overrides: Overrides,
    /// The model folder (`--model`, else the template's folder), opened when first needed.
    model_dir: PathBuf,
    model: std::sync::OnceLock<Model>,
    /// `--ids`: the generation files hold token ids.
    ids: bool,
    /// `--prefix-ids`: the prompt's token ids.
    prefix_ids: Option<Vec<u32>>,
    /// `--prefix-file`: the file the prefix is written in (for naming places in it).
    prefix_file: Option<PathBuf>,
    /// The generation files, in order.
    pub files: Vec<PathBuf>,
    /// Whether OUTPUT_FILE was a folder (the commands then print one JSON line per sample).
    pub folder: bool,
}

/// Reads the template, prefix and tools options, and lists the generation files.
pub(super) fn job(args: &InputArgs) -> Result<Job, Failure> {
    let (template, source) = template(&args.template)?;
    let model_dir = match &args.model {
        Some(d) if !d.is_dir() => {
            return Err(Failure::usage(format!(
                "{}: no such folder (--model takes a model folder)",
                d.display()
            )));
        }
        Some(d) => d.clone(),
        None => policy::model_dir(&template_path(&args.template)?),
    };
    let overrides = overrides(args)?;
    let prefix_ids = args
        .prefix_ids
        .as_deref()
        .map(|f| ids_from(&text_file(f, "prefix ids file")?, &f.display().to_string()))
        .transpose()?;
    let (files, folder) = generation_files(&args.output)?;
    Ok(Job {
        template,
        source,
        overrides: Overrides {
            // With the prompt's ids, the text prefix is their decoding.
            prefix: overrides
                .prefix
                .or_else(|| prefix_ids.as_ref().map(|_| String::new())),
            ..overrides
        },
        model_dir,
        model: std::sync::OnceLock::new(),
        ids: args.ids,
        prefix_ids,
        prefix_file: args.prefix_file.clone(),
        files,
        folder,
    })
}

/// What the command line gives in place of a sample's prefix, tools and conversation.
fn overrides(args: &InputArgs) -> Result<Overrides, Failure> {
    let messages = args
        .messages
        .as_deref()
        .map(|f| json_file(f, "the messages file"))
        .transpose()?;
    if messages
        .as_ref()
        .is_some_and(|m| !matches!(m, Value::List(_)))
    {
        return Err(Failure::invalid(
            "the messages file must hold a JSON list of messages ({\"role\": ..., \"content\": ...})",
        ));
    }
    let kwargs = args.kwargs.as_deref().map(kwargs_arg).transpose()?;
    let prefix = match (&args.prefix_file, &args.prefix) {
        (Some(f), _) => Some(text_file(f, "prefix file")?),
        (None, Some(s)) => Some(s.clone()),
        (None, None) => None,
    };
    let tools = args.tools.as_deref().map(tools_file).transpose()?;
    Ok(Overrides {
        prefix,
        tools,
        messages,
        kwargs,
    })
}

/// The generation files OUTPUT_FILE stands for (a folder's samples, sorted), and whether it
/// was a folder.
fn generation_files(output: &Path) -> Result<(Vec<PathBuf>, bool), Failure> {
    if !output.is_dir() {
        return Ok((vec![output.to_path_buf()], false));
    }
    let files = expand(output)
        .map_err(|e| Failure::usage(format!("cannot read folder {}: {e}", output.display())))?;
    if files.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no samples (.sample or .txt files) in this folder",
            output.display()
        )));
    }
    Ok((files, true))
}

impl Job {
    /// The inputs for one generation file. A `.sample` file gives its generation, and its
    /// prefix and tools unless the command line gave them; a `.sample` without a prefix section
    /// is parsed with an empty prefix, as the workbench and `rtbench test` do (with a warning
    /// on stderr). Any other file is the generation itself, and has a prefix only from the
    /// command line.
    pub(super) fn inputs(&self, file: &Path) -> Result<Inputs, Failure> {
        if file.extension().is_some_and(|e| e == sample::EXTENSION) {
            self.sample_inputs(file)
        } else {
            self.bare_inputs(file)
        }
    }

    /// The inputs for a generation file that is not a `.sample`: its text, or its token ids
    /// (`--ids`) decoded.
    fn bare_inputs(&self, file: &Path) -> Result<Inputs, Failure> {
        let text = text_file(file, "output file")?;
        let (output, ids) = if self.ids {
            let ids = ids_from(&text, &file.display().to_string())?;
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
        let prefix = match (&self.overrides.messages, &self.prefix_ids) {
            (Some(_), _) => Some(self.rendered_prefix(self.overrides.tools.as_ref())?),
            (None, Some(p)) => Some(
                self.tokenizer()?
                    .decode_lenient(p)
                    .map_err(Failure::invalid)?,
            ),
            (None, None) => self.overrides.prefix.clone(),
        };
        let places = Places {
            prefix: self.prefix_place(),
            generation: ids
                .is_none()
                .then(|| TextFile::whole(file.display().to_string())),
        };
        Ok(Inputs {
            template: self.template.clone(),
            prefix,
            tools: self.overrides.tools.clone(),
            output,
            ids,
            places,
        })
    }

    /// Where the command line's prefix is written: its `--prefix-file` (a prefix given as
    /// `--prefix S`, rendered from `--messages` or decoded from `--prefix-ids` is in no file).
    fn prefix_place(&self) -> Option<TextFile> {
        let given = self.overrides.messages.is_none() && self.prefix_ids.is_none();
        self.prefix_file
            .as_ref()
            .filter(|_| given)
            .map(|f| TextFile::whole(f.display().to_string()))
    }

    /// The inputs for a `.sample` file, prepared as the input policy prepares samples
    /// ([`prepare_sample`]) with the command line's prefix, tools and conversation in place of
    /// the sample's. Warnings about its tools and a prefix the chat template renders otherwise
    /// go to stderr.
    fn sample_inputs(&self, file: &Path) -> Result<Inputs, Failure> {
        let text = text_file(file, "sample file")?;
        let sample = parse_sample(file, &text).map_err(|e| Failure::invalid(e.to_string()))?;
        if self.overrides.tools.is_none() {
            for w in policy::sample_tool_warnings(&sample, &file.display().to_string(), &text) {
                let at = w.position().unwrap_or_default();
                note!("warning: {at}: {}", w.message);
            }
        }
        let sample = prepare_sample(&sample, &self.overrides, Some(self.model()))
            .map_err(prepare_failure)?;
        for w in &sample.warnings {
            if w.message.starts_with("the prefix differs") {
                note!("warning: {}: {}", file.display(), w.message);
            } else if w.old_layout.as_ref().is_some_and(|o| {
                o.section != "prefix"
                    || (self.overrides.prefix.is_none() && self.overrides.messages.is_none())
            }) {
                // A blank line read as layout where older files meant a line break: said with
                // what it changes in this parse, so that a prompt that lost the line break its
                // start anchor needs is never parsed in silence.
                note!(
                    "warning: {}:{}:{}: {}",
                    file.display(),
                    w.line,
                    w.column,
                    rtbench_tooling::findings::layout_message(&self.template, &sample, w)
                );
            }
        }
        let mut places = Places::of_sample(&sample, &file.display().to_string());
        if self.overrides.prefix.is_some() || self.overrides.messages.is_some() {
            places.prefix = self.prefix_place();
        }
        let prefix = sample.prefix.unwrap_or_else(|| {
            note!(
                "warning: {}: the sample has no prefix section; parsing with an empty prefix, as the workbench does (give --prefix or --prefix-file to set one)",
                file.display()
            );
            String::new()
        });
        let ids = sample.model.generation_ids.map(|generation| TokenIds {
            generation,
            prefix: sample.model.prefix_ids,
        });
        Ok(Inputs {
            template: self.template.clone(),
            prefix: Some(prefix),
            tools: sample.tools,
            output: sample.generation.into_string(),
            ids,
            places,
        })
    }
}

impl Job {
    pub(super) fn model(&self) -> &Model {
        self.model.get_or_init(|| Model::open(&self.model_dir))
    }

    /// Where a parse error of `inputs` is located: their files, and the template's.
    pub(super) fn place_of<'a>(&'a self, inputs: &Inputs) -> crate::failure::Where<'a> {
        crate::failure::Where {
            places: inputs.places.clone(),
            template: Some((&self.template, &self.source)),
        }
    }

    /// The model's tokenizer, for token ids.
    pub(super) fn tokenizer(&self) -> Result<&rtbench_tooling::model::ModelTokenizer, Failure> {
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
    pub(super) fn model_chunkings(&self, text: &str) -> Vec<rtbench_tooling::chunking::Chunking> {
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
        let Some(messages) = &self.overrides.messages else {
            return Err(missing_prefix());
        };
        rtbench_tooling::model::render(
            self.model(),
            &Conversation {
                messages,
                tools,
                kwargs: self.overrides.kwargs.as_ref(),
                add_generation_prompt: true,
            },
        )
        .map_err(prepare_failure)
    }
}

/// The error for a missing prefix (a parse error, exit 1, as in the reference).
pub(super) fn missing_prefix() -> Failure {
    Failure::invalid(
        "a prefix is required (--prefix-file FILE or --prefix STRING; --prefix '' opts out): \
         chat templates often pre-write part of the assistant message, such as an opening \
         <think>, which the parser must see",
    )
}
