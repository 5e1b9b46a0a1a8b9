//! What the workbench looks at: the template and the samples named on the command line (files
//! and folders), or the bundled SmolLM3 sample when nothing is named. Reading happens on every
//! refresh, so edits, deletions and re-creations are always seen as they are now.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rtbench_engine::Reference;
use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::template::Template;
use rtbench_engine::template::source::TemplateSource;
use rtbench_tooling::inputs::{
    self as policy, Overrides, Pipes, ReadErrorKind, TemplateError, prepare_sample, read_text,
};
use rtbench_tooling::model::Model;
use rtbench_tooling::sample::{Sample, SampleError, Text, expand, parse_sample_lenient_shared};

const BUNDLED_DIR: &str = "samples/smollm3";
const BUNDLED_TEMPLATE: &str = include_str!("../../samples/smollm3/template.json");
/// The bundled samples, the richest first (it is the one shown on start).
const BUNDLED_SAMPLES: [(&str, &str); 3] = [
    (
        "weather-tool-call.sample",
        include_str!("../../samples/smollm3/weather-tool-call.sample"),
    ),
    (
        "think-then-answer.sample",
        include_str!("../../samples/smollm3/think-then-answer.sample"),
    ),
    (
        "truncated-tool-call.sample",
        include_str!("../../samples/smollm3/truncated-tool-call.sample"),
    ),
];

/// Where a text comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// A file on disk.
    File(PathBuf),
    /// Built into the binary (the bundled sample).
    Embedded {
        /// The name shown.
        name: String,
        /// Its text.
        text: &'static str,
    },
    /// The response template inferred from a model folder's chat template (the folder has
    /// none of its own): inferred again whenever it is loaded, so a change to the chat
    /// template shows at once. Nothing is written (`rtbench new --model DIR` writes it).
    Inferred(PathBuf),
    /// One record of a corpus (JSON Lines): read by its byte offset when shown.
    Record {
        /// The corpus file.
        path: PathBuf,
        /// The record's line (1-based).
        line: u64,
        /// The byte offset its line starts at.
        offset: u64,
    },
}

impl Source {
    /// The name shown to the user.
    pub fn name(&self) -> String {
        match self {
            // Shown as given: relative to the folder rtbench started in.
            Source::File(p) => START_DIR
                .get()
                .and_then(|d| p.strip_prefix(d).ok())
                .filter(|r| !r.as_os_str().is_empty())
                .unwrap_or(p)
                .display()
                .to_string(),
            Source::Embedded { name, .. } => name.clone(),
            Source::Inferred(dir) => format!(
                "{} (inferred)",
                Source::File(dir.join("template.json")).name()
            ),
            Source::Record { path, line, .. } => {
                format!("{}:{line}", Source::File(path.clone()).name())
            }
        }
    }
}

/// The folder rtbench started in. Paths are made absolute against it once, at the start: a
/// relative path would otherwise follow the process's working folder, which stays the old one
/// when the folder is replaced (`mv proj proj.old; mkdir proj`) and would read `proj.old`.
static START_DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// `p` made absolute against [`START_DIR`] (lexically: links are kept as named).
fn absolute(p: &Path) -> PathBuf {
    match START_DIR.get_or_init(|| std::env::current_dir().unwrap_or_default()) {
        d if p.is_relative() && !d.as_os_str().is_empty() => d.join(p),
        _ => p.to_path_buf(),
    }
}

/// The workbench's inputs as given on the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// The template (a file, a model folder's `tokenizer_config.json`, or the bundled one).
    pub template: Source,
    /// Sample files named one by one.
    pub files: Vec<Source>,
    /// Folders named as samples: every sample in them, re-listed on each refresh.
    pub folders: Vec<PathBuf>,
    /// Corpora (JSON Lines files) named as samples: listed by group in the samples pane, each
    /// record read when it is shown (see `workbench::corpus`).
    pub corpora: Vec<PathBuf>,
}

/// A template file that can be used, with its name.
#[derive(Clone, Debug)]
pub struct LoadedTemplate {
    pub template: Template,
    /// The template's file: what is said of a key (the start anchor a sample's prefix lacks,
    /// the delimiter a chunking check blames) is located in it.
    pub source: Arc<TemplateSource>,
    pub name: String,
    /// Lint warnings about the template, located in its file.
    pub lint: Vec<Diagnostic>,
}

/// One sample as read now: its text and parsed form, or why it cannot be used.
#[derive(Clone, Debug)]
pub(crate) struct SampleFile {
    pub name: String,
    /// The file's text, shared with the sample's generation when that is a stretch of it (the
    /// usual case), so that a long sample's text is held once.
    pub text: Arc<String>,
    /// The sample, or what is wrong with the file (its name first, with line and column);
    /// shared with the analysis of it rather than copied (a long sample is mostly its text).
    pub sample: Result<Arc<Sample>, String>,
    /// Bad JSON in the expected section, as a located warning: the sample is read without it.
    pub bad_expected: Option<Diagnostic>,
    /// Once the analysis let go of `text`: the text before and after the generation, which
    /// with the generation (the analysis's document holds it) make the file's text again.
    pub around: Option<crate::workbench::analysis::Around>,
}

impl Inputs {
    /// The bundled sample (`samples/smollm3`, built into the binary).
    pub fn bundled() -> Inputs {
        Inputs::embedded(BUNDLED_DIR, BUNDLED_TEMPLATE, &BUNDLED_SAMPLES)
    }

    /// Inputs held in memory: a template and samples named as files of the folder `dir`
    /// (`dir/template.json`, `dir/NAME`).
    pub fn embedded(dir: &str, template: &'static str, samples: &[(&str, &'static str)]) -> Inputs {
        Inputs {
            template: Source::Embedded {
                name: format!("{dir}/template.json"),
                text: template,
            },
            files: samples
                .iter()
                .map(|(n, t)| Source::Embedded {
                    name: format!("{dir}/{n}"),
                    text: t,
                })
                .collect(),
            folders: Vec::new(),
            corpora: Vec::new(),
        }
    }

    /// Inputs from the command line's `TEMPLATE [SAMPLE...]`. A folder as TEMPLATE means its
    /// `template.json` (or `tokenizer_config.json`) and its samples; a TEMPLATE alone means the
    /// samples beside it.
    pub fn from_args(args: &[PathBuf]) -> Result<Inputs, String> {
        let args: Vec<PathBuf> = args.iter().map(|p| absolute(p)).collect();
        let Some((first, rest)) = args.split_first() else {
            return Ok(Inputs::bundled());
        };
        for p in &args {
            if !p.exists() {
                return Err(format!("{}: no such file or folder", p.display()));
            }
        }
        let template = match policy::template_file(first) {
            Ok(t) if !lacks_response_template(first, &t) => Source::File(t),
            // A model folder without a response template: the one its chat template implies.
            Ok(_) | Err(_) if has_chat_template(first) => Source::Inferred(first.clone()),
            Ok(t) => Source::File(t),
            Err(e) => return Err(e.to_string()),
        };
        if let Source::Inferred(dir) = &template {
            return Ok(Inputs {
                template: Source::Inferred(dir.clone()),
                files: Vec::new(),
                folders: vec![dir.clone()],
                corpora: Vec::new(),
            });
        }
        let Source::File(template) = template else {
            unreachable!("only a file is left")
        };
        // The samples beside the template: a folder's own, or the template file's folder's.
        let default_dir = policy::model_dir(&template);
        let mut files = Vec::new();
        let mut folders = Vec::new();
        if rest.is_empty() {
            folders.push(default_dir);
        }
        let mut corpora = Vec::new();
        for p in rest {
            if p.is_dir() {
                folders.push(p.clone());
            } else if p.extension().is_some_and(|e| e == "jsonl") {
                corpora.push(p.clone());
            } else {
                files.push(Source::File(p.clone()));
            }
        }
        Ok(Inputs {
            template: Source::File(template),
            files,
            folders,
            corpora,
        })
    }

    /// Whether anything can be watched (embedded inputs cannot change).
    pub fn is_bundled(&self) -> bool {
        matches!(self.template, Source::Embedded { .. })
    }

    /// Every file and folder to watch.
    pub fn watched_paths(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Source::File(p) = &self.template {
            out.push(p.clone());
        }
        // The model's own files beside the template (its chat template and tokenizer).
        if let Some(dir) = self.model_dir() {
            for f in MODEL_FILES {
                let p = dir.join(f);
                if p.exists() {
                    out.push(p);
                }
            }
        }
        for s in &self.files {
            if let Source::File(p) = s {
                out.push(p.clone());
            }
        }
        out.extend(self.folders.iter().cloned());
        out.extend(self.corpora.iter().cloned());
        out
    }

    /// The folder of the template file, where the model's own files are looked for.
    pub fn model_dir(&self) -> Option<PathBuf> {
        match &self.template {
            Source::File(p) => Some(policy::model_dir(p)),
            Source::Inferred(dir) => Some(dir.clone()),
            Source::Embedded { .. } | Source::Record { .. } => None,
        }
    }

    /// The sample sources as they are now (folders listed afresh, the template file skipped).
    pub fn sample_sources(&self) -> Vec<Source> {
        let mut out = self.files.clone();
        for dir in &self.folders {
            if let Ok(paths) = expand(dir) {
                out.extend(paths.into_iter().map(Source::File));
            }
        }
        out
    }

    /// Loads the template as it is now, to be parsed under `reference`.
    pub fn load_template(&self, reference: Reference) -> Result<LoadedTemplate, Box<Diagnostic>> {
        self.load_template_newest().map(|mut loaded| {
            loaded.template = loaded.template.with_reference(reference);
            loaded
        })
    }

    /// Loads the template as it is now (under the newest reference version), as the input
    /// policy loads templates (a pipe refused: it is read again on every change).
    fn load_template_newest(&self) -> Result<LoadedTemplate, Box<Diagnostic>> {
        let name = self.template.name();
        let (template, source) = match &self.template {
            Source::File(p) => {
                policy::load_template_file(p, Pipes::Refuse).map_err(|e| match e {
                    TemplateError::Read(e) => Box::new(
                        Diagnostic::error(format!("cannot read the template: {}", e.reason()))
                            .in_file(name.clone())
                            .with_help(Some(
                                "the last good result stays on screen until the file is back"
                                    .into(),
                            )),
                    ),
                    TemplateError::Invalid(d) => d,
                })?
            }
            Source::Record { .. } => {
                return Err(Box::new(Diagnostic::error(
                    "a corpus record is not a template".to_string(),
                )));
            }
            Source::Embedded { text, .. } => {
                policy::load_template_text(name.clone(), (*text).to_string())?
            }
            Source::Inferred(dir) => policy::load_template_text(name.clone(), inferred_text(dir)?)?,
        };
        Ok(LoadedTemplate {
            lint: lint_warnings(&template, &source),
            source: Arc::new(source),
            template,
            name,
        })
    }
}

impl SampleFile {
    /// The file's text: as read, or made again around the generation after the analysis let
    /// go of it.
    pub(crate) fn file_text(&self) -> std::borrow::Cow<'_, str> {
        match (&self.around, &self.sample) {
            (Some(around), Ok(s)) => std::borrow::Cow::Owned(around.file_text(&s.generation)),
            _ => std::borrow::Cow::Borrowed(self.text.as_str()),
        }
    }

    /// A sample that could not be read, and why.
    fn unreadable(name: String, why: &dyn std::fmt::Display) -> SampleFile {
        SampleFile {
            sample: Err(format!("{name}: cannot read: {why}")),
            name,
            text: Arc::default(),
            bad_expected: None,
            around: None,
        }
    }
}

/// Whether `dir` (a folder given as the template) holds a chat template.
fn has_chat_template(dir: &Path) -> bool {
    dir.is_dir() && matches!(rtbench_tooling::infer::chat_templates(dir), Ok(Some(_)))
}

/// Whether the template file found for a folder is a `tokenizer_config.json` without a
/// `response_template` (a model folder that has none yet).
fn lacks_response_template(given: &Path, file: &Path) -> bool {
    given.is_dir()
        && file
            .file_name()
            .is_some_and(|n| n == "tokenizer_config.json")
        && std::fs::read_to_string(file)
            .ok()
            .and_then(|t| rtbench_engine::py::json_loads(&t).ok())
            .is_some_and(|v| match v {
                rtbench_engine::Value::Dict(d) => d.get("response_template").is_none(),
                _ => false,
            })
}

/// The response template inferred from `dir`'s chat template, as a template file's text.
fn inferred_text(dir: &Path) -> Result<String, Box<Diagnostic>> {
    // The chat template alone: the tokenizer plays no part in the inference.
    let chat = match rtbench_tooling::infer::chat_templates(dir) {
        Ok(Some(chat)) => chat,
        Ok(None) => {
            return Err(Box::new(Diagnostic::error(format!(
                "{} has no chat template to infer a response template from",
                dir.display()
            ))));
        }
        Err(e) => return Err(Box::new(Diagnostic::error(e))),
    };
    rtbench_tooling::infer::infer(&chat)
        .map(|i| rtbench_tooling::infer::template_text(&i.template))
        .map_err(|e| {
            Box::new(
                Diagnostic::error(format!("no response template can be inferred: {e}"))
                    .in_file(dir.display().to_string())
                    .with_help(Some(
                        "the last good result stays on screen while the chat template is fixed"
                            .into(),
                    )),
            )
        })
}

/// Reads one corpus record (its JSON line is the text shown for it).
fn read_record(name: String, path: &Path, line: u64, offset: u64) -> SampleFile {
    use rtbench_tooling::corpus::{Content, FieldNames, read_record_at};
    let entry = match read_record_at(path, offset, line) {
        Ok(e) => e,
        Err(e) => {
            return SampleFile::unreadable(name, &e);
        }
    };
    let text = match &entry.content {
        Content::Line(Ok(t)) => t.clone(),
        _ => String::new(),
    };
    SampleFile {
        sample: entry
            .record(&FieldNames::default())
            .map(|r| Arc::new(r.sample))
            .map_err(|e| format!("{name}: {e}")),
        name,
        text: Arc::new(text),
        bad_expected: None,
        around: None,
    }
}

/// Reads one sample as it is now. Never fails: problems are kept in the result.
pub(crate) fn read_sample(source: &Source) -> SampleFile {
    let name = source.name();
    let (path, text) = match source {
        Source::Embedded { text, .. } => (PathBuf::from(&name), (*text).to_string()),
        Source::Inferred(dir) => match inferred_text(dir) {
            Ok(t) => (PathBuf::from(&name), t),
            Err(d) => return SampleFile::unreadable(name, &d.message),
        },
        Source::Record { path, line, offset } => return read_record(name, path, *line, *offset),
        // As the input policy reads files; a pipe is refused (it is read again on every change).
        Source::File(p) => match read_text(p, "sample file", Pipes::Refuse) {
            Ok(t) => (p.clone(), t),
            Err(e) => match e.kind {
                ReadErrorKind::NotUtf8 { ref lossy, .. } => {
                    return SampleFile {
                        sample: Err(format!("{name}: {}", e.reason())),
                        text: Arc::new(lossy.clone()),
                        name,
                        bad_expected: None,
                        around: None,
                    };
                }
                _ => return SampleFile::unreadable(name, &e.reason()),
            },
        },
    };
    let is_sample = path
        .extension()
        .is_some_and(|e| e == rtbench_tooling::sample::EXTENSION);
    let text = Arc::new(text);
    let (sample, bad_expected) = if is_sample {
        match parse_sample_lenient_shared(&path, &text) {
            Ok((s, bad)) => (
                Ok(Arc::new(s)),
                bad.map(|e| expected_warning(&name, &text, &e)),
            ),
            Err(e) => (Err(error_text(&e)), None),
        }
    } else {
        let whole = Text::shared(&text, 0..text.len()).expect("a text is a stretch of itself");
        let sample = Sample {
            generation: whole,
            ..Sample::bare(&path, String::new())
        };
        (Ok(Arc::new(sample)), None)
    };
    SampleFile {
        name,
        text,
        sample,
        bad_expected,
        around: None,
    }
}

/// Reads one sample as it is now and prepares it to be parsed as the input policy prepares
/// samples ([`prepare_sample`]: its conversation rendered, its token ids decoded with the
/// model's files). Never fails: problems are kept in the result, after the sample's name.
pub(crate) fn read_prepared(source: &Source, model: Option<&Model>) -> SampleFile {
    let mut f = read_sample(source);
    if let Ok(s) = &f.sample
        && s.model.is_needed()
    {
        f.sample = prepare_sample(s, &Overrides::default(), model)
            .map(Arc::new)
            .map_err(|e| format!("{}: {e}", f.name));
    }
    f
}

/// What to do about invalid JSON in a sample's section.
fn json_section_help(section: &str) -> &'static str {
    match section {
        "expected" => {
            "fix the JSON of the expected section (the message as JSON, or {\"$error\": true} for a \
             sample that must fail), or delete the section and run `rtbench test --bless` on the \
             file to write it"
        }
        _ => "fix the JSON of the tools section: a JSON list of tool schemas",
    }
}

/// A sample file's error, said once with its `file:line:col`, and for bad JSON what to do.
fn error_text(e: &SampleError) -> String {
    if e.message.starts_with("invalid JSON in the 'tools' section") {
        format!("{e}\n{}", json_section_help("tools"))
    } else {
        e.to_string()
    }
}

/// Bad JSON in the expected section, as a warning located in the file: the sample is shown and
/// parsed without it (the parse never depends on it); only its verdict is unknown.
fn expected_warning(name: &str, text: &str, e: &SampleError) -> Diagnostic {
    let d = Diagnostic::warning(format!("{} (the sample is parsed without it)", e.message))
        .in_file(name.to_string())
        .with_help(Some(json_section_help("expected").to_string()));
    match e.offset {
        Some(at) => d.at(text, at..(at + 1).min(text.len())),
        None => d,
    }
}

/// The model files beside a template that the workbench reads and watches.
pub(crate) const MODEL_FILES: [&str; 3] = [
    "chat_template.jinja",
    "tokenizer_config.json",
    "tokenizer.json",
];

/// The lint findings of a loaded template as located warnings.
fn lint_warnings(template: &Template, source: &TemplateSource) -> Vec<Diagnostic> {
    // Located from one index of the file (one warning per finding would rescan it).
    rtbench_tooling::lint::diagnostics(source, &rtbench_tooling::lint::lint_file(template, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model folder with a chat template and no response template opens on the inferred
    /// one, which follows the chat template as it changes; nothing is written.
    #[test]
    fn a_model_folder_without_a_response_template_opens_on_the_inferred_one() {
        let dir = std::env::temp_dir().join(format!("rtbench-inferred-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/qwen3");
        for f in [
            "chat_template.jinja",
            "tokenizer_config.json",
            "one-tool-call.sample",
        ] {
            std::fs::copy(root.join(f), dir.join(f)).unwrap();
        }
        let inputs = Inputs::from_args(std::slice::from_ref(&dir)).unwrap();
        assert_eq!(inputs.template, Source::Inferred(dir.clone()));
        assert!(inputs.template.name().ends_with("template.json (inferred)"));
        let anchor = |inputs: &Inputs| match inputs
            .load_template(Reference::NEWEST)
            .unwrap()
            .template
            .start_anchor()
        {
            rtbench_engine::delimiter::Delimiter::Literal(l) => l.literals.clone(),
            other => panic!("a pattern anchor: {other:?}"),
        };
        assert_eq!(anchor(&inputs), ["<|im_start|>assistant\n"]);
        assert!(
            inputs
                .watched_paths()
                .contains(&dir.join("chat_template.jinja"))
        );
        // The chat template changes its header: the inferred anchor follows.
        let chat = std::fs::read_to_string(dir.join("chat_template.jinja")).unwrap();
        std::fs::write(
            dir.join("chat_template.jinja"),
            chat.replace("<|im_start|>assistant", "<|im_start|>model"),
        )
        .unwrap();
        assert_eq!(anchor(&inputs), ["<|im_start|>model\n"]);
        assert!(!dir.join("template.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bundled_inputs_load() {
        let inputs = Inputs::bundled();
        assert!(inputs.load_template(Reference::NEWEST).is_ok());
        let samples = inputs.sample_sources();
        assert_eq!(samples.len(), 3);
        for s in &samples {
            assert!(read_sample(s).sample.is_ok());
        }
    }

    fn read_text(name: &str, text: &str) -> SampleFile {
        // One folder per call: the tests run in parallel.
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("rtbench-inputs-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let f = read_sample(&Source::File(path));
        std::fs::remove_dir_all(&dir).unwrap();
        f
    }

    #[test]
    fn a_samples_generation_is_held_once_with_its_files_text() {
        let f = read_text(
            "shared.sample",
            "--- prefix ---\nP\n--- generation ---\nhello\n\n",
        );
        let s = f.sample.expect("the sample reads");
        assert_eq!(s.generation, "hello");
        let at = f.text.find("hello").unwrap();
        assert!(std::ptr::eq(s.generation.as_ptr(), f.text[at..].as_ptr()));
        let f = read_text("bare.txt", "hello\n");
        let s = f.sample.expect("the sample reads");
        assert_eq!(s.generation, "hello\n");
        assert!(std::ptr::eq(s.generation.as_ptr(), f.text.as_ptr()));
    }

    #[test]
    fn bad_expected_json_is_a_located_warning_and_the_sample_still_reads() {
        let text = "--- prefix (ends with newline) ---\n<|im_start|>assistant\n\n--- generation ---\n\
                    <think>a</think>b<|im_end|>\n\n--- expected ---\n{\"role\": \"assistant\",\n  \
                    \"content\" \"b\"}\n";
        let f = read_text("bad.sample", text);
        let s = f.sample.expect("the sample reads");
        assert_eq!(s.generation, "<think>a</think>b<|im_end|>");
        assert!(s.expected.is_none());
        let d = f.bad_expected.expect("a warning");
        // Line 9, column 13 of the file: the `"b"` where a colon was expected.
        assert!(
            d.position().unwrap().ends_with("bad.sample:9:13"),
            "{:?}",
            d.position()
        );
        assert!(
            d.message.contains("Expecting ':' delimiter"),
            "{}",
            d.message
        );
        assert!(d.help.as_deref().unwrap().contains("--bless"));
    }

    #[test]
    fn a_sample_error_names_the_file_once_with_line_and_column() {
        let f = read_text(
            "bad.sample",
            "--- generation ---\nx\n--- tools ---\n[\n  {\"a\" 1}\n]\n",
        );
        let m = f.sample.unwrap_err();
        assert!(
            m.contains("bad.sample:5:8: invalid JSON in the 'tools' section"),
            "{m}"
        );
        assert_eq!(m.matches("bad.sample").count(), 1, "{m}");
        assert!(m.contains("\nfix the JSON"), "{m}");
        assert!(f.bad_expected.is_none());
    }

    #[cfg(unix)]
    #[test]
    #[allow(unsafe_code)] // SAFETY comment at the call
    fn a_pipe_or_a_device_is_refused_with_a_message_instead_of_read() {
        let dir = std::env::temp_dir().join(format!("rtbench-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("live.sample");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // Reading a FIFO with no writer would block forever.
        let f = read_sample(&Source::File(fifo.clone()));
        let m = f.sample.unwrap_err();
        assert!(
            m.contains("live.sample: cannot read: it is a pipe or a device"),
            "{m}"
        );
        let f = read_sample(&Source::File(PathBuf::from("/dev/zero")));
        assert!(f.sample.unwrap_err().contains("it is a pipe or a device"));
        let inputs = Inputs {
            template: Source::File(fifo),
            files: Vec::new(),
            folders: Vec::new(),
            corpora: Vec::new(),
        };
        let Err(d) = inputs.load_template(Reference::NEWEST) else {
            panic!("a FIFO template is refused")
        };
        assert!(
            d.to_string()
                .contains("cannot read the template: it is a pipe"),
            "{d}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_samples_malformed_tools_are_warnings_in_its_analysis() {
        let dir = std::env::temp_dir().join(format!("rtbench-wb-tools-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("template.json"), BUNDLED_TEMPLATE).unwrap();
        let text = "--- prefix ---\n<|im_start|>assistant\n--- generation ---\nhi<|im_end|>\n\
                    --- tools ---\n[{\"function\": {\"name\": \"f\", \"parameters\": \"x\"}}]\n";
        std::fs::write(dir.join("odd-tools.sample"), text).unwrap();
        let inputs = Inputs::from_args(std::slice::from_ref(&dir)).unwrap();
        let loaded = inputs.load_template(Reference::NEWEST).unwrap();
        let f = read_sample(&inputs.sample_sources()[0]);
        let sample = f
            .sample
            .expect("odd tools are read: the reference parses on");
        let a = crate::workbench::analysis::analyze(&loaded.template, &f.name, sample, &f.text);
        let w = a
            .warnings
            .iter()
            .find(|d| d.message.contains("`parameters` is a string"))
            .unwrap_or_else(|| panic!("no tools warning in {:?}", a.warnings));
        assert!(
            w.position().unwrap().ends_with("odd-tools.sample:6:43"),
            "{:?}",
            w.position()
        );
        // Counted among the sample's warnings (the list shows how many).
        assert!(a.findings.iter().any(|f| f.diagnostic == *w));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
