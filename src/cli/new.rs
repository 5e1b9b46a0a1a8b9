//! `rtbench new [PATH] [--format F]`: a scaffold for a new model's response template, a
//! template and an example sample that work together from the first run, so that a model
//! author starts from something that parses and changes it toward their model in the
//! workbench.
//!
//! The scaffolds are `schema/scaffolds/<format>/`, compiled into the binary: a template for a
//! common shape of output (thinking, content and tool calls) and a `.sample` holding a
//! prompt, a generation in that shape and the message the reference parses it to (written by
//! `tools/samples/bless_with_reference.py` under 5.25 and checked under 5.24), so that `rtbench
//! test` passes on a fresh scaffold. JSON has no comments: the template's documentation is the
//! schema's (`rtbench schema`), which an editor shows on hover; the sample's note says what to
//! change.
//!
//! Nothing is ever written over a file: when either file exists, nothing is written at all.
//! Each file is written to a temporary name in its folder and then linked to its name, which
//! fails if the name was taken meanwhile, so a reader never sees half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::cli::{Failure, output};

/// The shapes of model output a scaffold can start from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Reasoning in <think> tags, tool calls as JSON objects in <tool_call> tags, the answer up
    /// to <|im_end|> (Qwen 2.5/3, SmolLM3, Hermes).
    JsonInTags,
    /// Reasoning in <think> tags, tool calls as <tool_call><function=NAME> with one
    /// <parameter=KEY> tag per argument (Qwen3-Coder).
    XmlParameters,
    /// A Python-style list of calls `[name(key=value)]` as the whole reply, or a plain answer
    /// (Llama 3.2).
    PythonCalls,
}

impl Format {
    /// The scaffold's template and sample.
    fn files(self) -> (&'static str, &'static str) {
        match self {
            Format::JsonInTags => (
                include_str!("../../schema/scaffolds/json-in-tags/template.json"),
                include_str!("../../schema/scaffolds/json-in-tags/example.sample"),
            ),
            Format::XmlParameters => (
                include_str!("../../schema/scaffolds/xml-parameters/template.json"),
                include_str!("../../schema/scaffolds/xml-parameters/example.sample"),
            ),
            Format::PythonCalls => (
                include_str!("../../schema/scaffolds/python-calls/template.json"),
                include_str!("../../schema/scaffolds/python-calls/example.sample"),
            ),
        }
    }

    /// What the template reads, for the report.
    fn shape(self) -> &'static str {
        match self {
            Format::JsonInTags => "thinking in <think>, tool calls as JSON in <tool_call> tags",
            Format::XmlParameters => {
                "thinking in <think>, tool calls as <function=NAME> with <parameter=KEY> tags"
            }
            Format::PythonCalls => "tool calls as a Python-style list [name(key=value)]",
        }
    }
}

/// `rtbench new [PATH] [--format F]`.
#[derive(Args, Debug)]
pub(crate) struct NewArgs {
    /// A folder to write template.json and example.sample into (created if needed), or the
    /// template's file name ending in .json (the sample goes beside it). Default: the current
    /// folder. Existing files are never replaced.
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// The shape of output the template starts from.
    #[arg(long, value_enum, default_value_t = Format::JsonInTags)]
    pub format: Format,
    /// Infer the template from this model folder's chat template instead of a scaffold:
    /// writes DIR/template.json (or --out) and the probe renders as samples beside it.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["path", "format"])]
    pub model: Option<PathBuf>,
    /// With --model: the template file to write (default: DIR/template.json).
    #[arg(long, value_name = "FILE", requires = "model")]
    pub out: Option<PathBuf>,
    /// With --model: write nothing; compare the inferred template with the folder's own on
    /// the probes and the folder's samples (exit 1 on a difference).
    #[arg(long, requires = "model", conflicts_with = "out")]
    pub check: bool,
}

/// The sample's file name, beside the template.
const SAMPLE: &str = "example.sample";

/// Writes the scaffold and says what was written and what to do next.
pub(crate) fn run(args: &NewArgs) -> Result<(), Failure> {
    if let Some(dir) = &args.model {
        return crate::cli::infer::run(dir, args.out.as_deref(), args.check);
    }
    let (template_path, sample_path) = targets(args.path.as_deref())?;
    for p in [&template_path, &sample_path] {
        // `symlink_metadata`: a dangling link is a name taken too.
        if p.symlink_metadata().is_ok() {
            return Err(Failure::usage(format!(
                "{} already exists: rtbench new never replaces a file (give another folder or \
                 file name, or move it away)",
                p.display()
            )));
        }
    }
    let dir = folder_of(&template_path);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
    let (template, sample) = args.format.files();
    write_new(&template_path, template)?;
    write_new(&sample_path, sample)
        .map_err(|f| Failure::usage(format!("wrote {}; {}", template_path.display(), f.message)))?;

    let t = shell_word(&template_path);
    let test = if template_path
        .file_name()
        .is_some_and(|n| n == "template.json")
    {
        format!("rtbench test {}", shell_word(&dir))
    } else {
        format!("rtbench test --template {t} {}", shell_word(&sample_path))
    };
    let lines = [
        format!(
            "wrote {}: a response template ({})",
            template_path.display(),
            args.format.shape()
        ),
        format!(
            "wrote {}: a prompt, a generation in that shape and the message it parses to",
            sample_path.display()
        ),
        String::new(),
        "next:".to_string(),
        format!("  rtbench {t}"),
        "      open the workbench; put your model's tokens in the template and a real prompt"
            .to_string(),
        "      and reply in the sample, and watch the message as you save".to_string(),
        format!("  {test}"),
        "      check the samples (--bless writes the current messages as expected)".to_string(),
        "  rtbench schema > response-template.schema.json".to_string(),
        "      completion and docs in your editor (README: \"Editor support\")".to_string(),
    ];
    output::print_line(&lines.join("\n"))
}

/// The template's and the sample's paths for `PATH`.
fn targets(path: Option<&Path>) -> Result<(PathBuf, PathBuf), Failure> {
    let Some(path) = path else {
        return Ok((PathBuf::from("template.json"), PathBuf::from(SAMPLE)));
    };
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json && !path.is_dir() {
        let sample = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) => dir.join(SAMPLE),
            None => PathBuf::from(SAMPLE),
        };
        return Ok((path.to_path_buf(), sample));
    }
    if path.exists() && !path.is_dir() {
        return Err(Failure::usage(format!(
            "{} is a file: give a folder, or the template's file name ending in .json",
            path.display()
        )));
    }
    Ok((path.join("template.json"), path.join(SAMPLE)))
}

/// The folder a file is written in (`.` for a bare name).
fn folder_of(file: &Path) -> PathBuf {
    match file.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => dir.to_path_buf(),
        None => PathBuf::from("."),
    }
}

/// Writes `text` to `path`, which must not exist: to a temporary file in the same folder,
/// then hard-linked to its name (which fails if the name exists), so the file appears whole
/// and nothing is replaced. Where the file system has no hard links, the file is created
/// with `create_new` instead (still never replacing anything).
pub(crate) fn write_new(path: &Path, text: &str) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::usage(format!("cannot write {}: {e}", path.display()));
    let exists = || {
        Failure::usage(format!(
            "{} already exists: rtbench new never replaces a file",
            path.display()
        ))
    };
    let dir = folder_of(path);
    let mut temp = None;
    for n in 0..100u32 {
        let candidate = dir.join(format!(".rtbench-new-{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => {
                temp = Some((candidate, f));
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(e)),
        }
    }
    let Some((temp_path, mut file)) = temp else {
        return Err(Failure::usage(format!(
            "cannot write {}: no free temporary name in {}",
            path.display(),
            dir.display()
        )));
    };
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    drop(file);
    let linked = written.and_then(|()| std::fs::hard_link(&temp_path, path));
    let _ = std::fs::remove_file(&temp_path);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
        // No hard links here (some network and FAT file systems): create the file directly.
        Err(e)
            if matches!(e.kind(), std::io::ErrorKind::Unsupported)
                || e.raw_os_error() == Some(libc::EPERM) =>
        {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => exists(),
                    _ => fail(e),
                })?;
            f.write_all(text.as_bytes()).map_err(fail)
        }
        Err(e) => Err(fail(e)),
    }
}

/// A path as one shell word: as it is when it needs no quoting, else in single quotes.
fn shell_word(path: &Path) -> String {
    let s = path.display().to_string();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+' | ','));
    if plain {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
