//! `rtbench lint`: the template's validation plus warnings about likely mistakes and
//! constructs other runtimes cannot use; with samples, also what each sample's parse loses
//! without an error (a value overwritten, text dropped, a region that never closed). With
//! `--engines`, also how the template's patterns fare in other runtimes' regex engines on the
//! samples (see `rtbench_portability`). With `--reference all`, every sample is also parsed
//! under each reference version, and a sample whose message or events depend on the version is
//! a warning located at the first event that differs, with the difference. With
//! `--chunkings`, every sample is streamed with many chunkings, and a sample whose result
//! depends on them is an error (exit 1) located at the key of the delimiter that made the
//! difference. A start anchor a sample's prefix lacks is one of the sample's findings. With
//! `--serve vllm`, what vLLM refuses to load is an error (exit 1) located at the key, and a
//! closing summary says what vLLM refuses at start-up and per request.

use std::path::{Path, PathBuf};

use crate::cli::output;
use crate::cli::{Failure, inputs};
use rtbench_tooling::chunk_samples::check_sample;
use rtbench_tooling::chunking::{CheckPlan, ChunkReport};
use rtbench_tooling::findings::sample_findings;
use rtbench_tooling::inputs::{Overrides, model_dir, prepare_sample};
use rtbench_tooling::lint::{diagnostics, lint_file, serve_vllm};
use rtbench_tooling::model::Model;
use rtbench_tooling::sample::{self, Sample, expand, parse_sample};
use rtbench_tooling::versions::compare_sample;

use rtbench_engine::Reference;
use rtbench_engine::diagnostic::{Diagnostic, Severity};
use rtbench_engine::template::error::{Target, TemplateError};
use rtbench_engine::value::Value;
use rtbench_portability::{EngineKind, SampleInput, analyze, render};

/// What `rtbench lint` checks beyond the template and the samples' parses.
pub(super) struct Checks<'a> {
    /// `--deny-warnings`: exit 1 when there is any warning.
    pub deny: bool,
    /// `--engines`: the regex engines to replay the patterns in.
    pub engines: Option<&'a str>,
    /// `--chunkings`: the chunking check to run on every sample.
    pub chunkings: Option<CheckPlan>,
    /// `--serve vllm`: vLLM's rules for serving the template (refusals exit 1).
    pub vllm: bool,
}

/// Prints every warning with its location; exit 0, or 1 with `deny` when there are warnings
/// (and 1 for an invalid template, as `check`, a malformed sample, or with `--chunkings` a
/// sample whose result depends on the chunking; 2 for a sample that cannot be read).
pub(super) fn run(path: &Path, samples: &[PathBuf], checks: Checks<'_>) -> Result<(), Failure> {
    let Checks {
        deny,
        engines,
        chunkings,
        vllm,
    } = checks;
    let engines = engines.map(parse_engines).transpose()?;
    let all_versions = crate::cli::selection() == crate::reference::Selection::All;
    let (template, source) = inputs::template(path)?;
    let findings = lint_file(&template, &source);
    let mut text = String::new();
    let mut count = findings.len();
    // Located with one index of the file: a template may repeat a key thousands of times.
    for d in diagnostics(&source, &findings) {
        text.push_str(&d.to_string());
        text.push_str("\n\n");
    }
    let serving = vllm.then(|| serve_vllm::vllm(&source));
    if let Some(serving) = &serving {
        for d in serving.errors(&source) {
            text.push_str(&d.to_string());
            text.push_str("\n\n");
        }
    }
    let mut files = Vec::new();
    for s in samples {
        files.extend(
            expand(s).map_err(|e| Failure::usage(format!("cannot read {}: {e}", s.display())))?,
        );
    }
    let mut model: Option<Model> = None;
    // The prepared samples, kept for the portability replay.
    let mut kept: Vec<(String, Sample, String)> = Vec::new();
    // The conversation samples, for the injection check.
    let mut kept_for_injection: Vec<(String, Sample)> = Vec::new();
    // Samples whose result depends on the reference version (with `--reference all`).
    let mut depends = 0;
    // Samples whose result depends on the chunking (with `--chunkings`).
    let mut unstable = 0;
    for file in &files {
        // Unreadable (or not UTF-8) is an I/O error (2); malformed sections an input error (1).
        let file_text = inputs::text_file(file, "sample file")?;
        let sample = if file.extension().is_some_and(|e| e == sample::EXTENSION) {
            parse_sample(file, &file_text).map_err(|e| Failure::invalid(e.to_string()))?
        } else {
            Sample::bare(file, file_text.clone())
        };
        // A conversation or token ids become text with the template folder's model files.
        let sample = if sample.model.is_needed() {
            let dir = model_dir(&inputs::template_path(path)?);
            let model = model.get_or_insert_with(|| Model::open(&dir));
            prepare_sample(&sample, &Overrides::default(), Some(model))
                .map_err(|e| Failure::invalid(format!("{}: {e}", file.display())))?
        } else {
            sample
        };
        let name = file.display().to_string();
        if let Some(plan) = &chunkings {
            // The model's tokens and the TextStreamer's words are chunkings too, as in `chunks`.
            let model = match &model {
                Some(m) => m,
                None => model.insert(Model::open(&model_dir(&inputs::template_path(path)?))),
            };
            let mut report = check_sample(&template, &sample, Some(model), plan);
            report.locate(&source);
            if !report.agrees() {
                unstable += 1;
                text.push_str(&instability(&report, &source, &name, &sample.generation));
                text.push_str("\n\n");
            }
        }
        let (_, found) = sample_findings(
            &template,
            Some(&source),
            &sample,
            &name,
            &file_text,
            model.as_ref(),
        );
        count += found.len();
        for f in found {
            text.push_str(&f.diagnostic.to_string());
            text.push_str("\n\n");
        }
        if all_versions {
            let divergences = compare_sample(&template, &sample, model.as_ref())
                .divergences(template.reference());
            depends += usize::from(!divergences.is_empty());
            count += divergences.len();
            for d in divergences {
                text.push_str(&d.diagnostic(&sample, &name, &file_text).to_string());
                text.push_str("\n\n");
            }
        }
        if sample.model.messages.is_some() {
            kept_for_injection.push((name.clone(), sample.clone()));
        }
        if engines.is_some() {
            kept.push((name, sample, file_text));
        }
    }
    if all_versions {
        let names: Vec<&str> = Reference::ALL.iter().map(|r| r.name()).collect();
        text.push_str(&format!(
            "reference versions {}: {}\n",
            names.join(", "),
            match (depends, files.len()) {
                (_, 0) => "no samples to compare".to_string(),
                (0, n) => format!("no sample of {n} depends on the version"),
                (d, n) => format!(
                    "{d} of {n} sample{} parse{} differently",
                    if n == 1 { "" } else { "s" },
                    if d == 1 { "s" } else { "" }
                ),
            }
        ));
    }
    count += injection(&template, path, &kept_for_injection, &mut text)?;
    if let Some(engines) = &engines {
        count += portability(&template, &source, &kept, engines, &mut text);
    }
    if let Some(serving) = &serving {
        text.push_str(&serving.summary(&source));
    }
    let what = if files.is_empty() {
        path.display().to_string()
    } else {
        format!(
            "{} and {}",
            path.display(),
            match files.len() {
                1 => "1 sample".to_string(),
                n => format!("{n} samples"),
            }
        )
    };
    text.push_str(&match count {
        0 => format!("{what}: no warnings"),
        1 => format!("{what}: 1 warning"),
        n => format!("{what}: {n} warnings"),
    });
    if chunkings.is_some() {
        text.push_str(&match unstable {
            0 => "; every sample's result is the same however the stream is cut".to_string(),
            1 => "; 1 sample's result depends on the chunking".to_string(),
            n => format!("; {n} samples' results depend on the chunking"),
        });
    }
    if let Some(serving) = serving.as_ref().filter(|s| !s.loads()) {
        text.push_str(&match serving.refusals.len() {
            1 => "; vLLM refuses to load it (1 error)".to_string(),
            n => format!("; vLLM refuses to load it ({n} errors)"),
        });
    }
    output::print_line(&text)?;
    if unstable > 0 || serving.is_some_and(|s| !s.loads()) {
        return Err(Failure {
            message: String::new(),
            code: 1,
        });
    }
    if deny && count > 0 {
        return Err(Failure {
            message: String::new(),
            code: 1,
        });
    }
    Ok(())
}

/// The injection check, when the template's folder holds the model's tokenizer: how each
/// delimiter fares when generations are parsed from token ids (what a user or tool can forge),
/// the user and tool strings of the conversation samples that spell a delimiter, and named chat
/// templates that protect different tokens. Returns the number of warnings (the delimiter
/// lines are information).
fn injection(
    template: &rtbench_engine::template::Template,
    path: &Path,
    samples: &[(String, Sample)],
    text: &mut String,
) -> Result<usize, Failure> {
    use rtbench_tooling::injection::{protections, spelled_in_sample, template_gaps};
    let model = Model::open(&model_dir(&inputs::template_path(path)?));
    let Ok(control) = model.control_tokens() else {
        return Ok(0);
    };
    text.push_str(&format!(
        "control tokens: the model's {} ({} special); how each delimiter fares when generations are parsed from token ids:\n",
        control.spellings().len(),
        model
            .tokenizer()
            .map_or(0, |t| t.added_tokens().iter().filter(|a| a.special).count())
    ));
    for p in protections(template, control) {
        text.push_str(&p.line());
        text.push('\n');
    }
    text.push('\n');
    let mut count = 0;
    for (name, gap) in template_gaps(&model) {
        count += 1;
        text.push_str(&format!(
            "warning: chat template '{name}' does not write {}: a prompt sanitized with it encodes them in the user's strings as real tokens\n  --> {}\n  = help: list the control tokens in tokenizer_config.json's \"chat_control_tokens\" so that every template protects them\n\n",
            gap.join(", "),
            model.dir.display()
        ));
    }
    for (name, sample) in samples {
        for s in spelled_in_sample(template, sample) {
            count += 1;
            text.push_str(&format!(
                "warning: {} writes {}, the {} delimiter of '{}': parsed from text, a model that echoes it makes it that delimiter; render the prompt with sanitize_control_tokens=True and parse ids (5.25) to keep it text\n  --> {name} ({})\n\n",
                s.path,
                Value::from(s.text.as_str()).py_repr(),
                s.which,
                s.field,
                s.path
            ));
        }
    }
    Ok(count)
}

/// The engines named by `--engines` (`all` for every built-in one).
fn parse_engines(list: &str) -> Result<Vec<EngineKind>, Failure> {
    if list == "all" {
        return Ok(EngineKind::built_in());
    }
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let Some(e) = EngineKind::from_name(name) else {
            let known: Vec<&str> = EngineKind::ALL.iter().map(|e| e.name()).collect();
            return Err(Failure::usage(format!(
                "unknown engine '{name}' for --engines (known: {}); a bare --engines must be followed by another option, not a SAMPLE",
                known.join(", ")
            )));
        };
        if !e.available() {
            return Err(Failure::usage(format!(
                "engine '{name}' is not in this build (build with --features rtbench-portability/pcre2)"
            )));
        }
        if !out.contains(&e) {
            out.push(e);
        }
    }
    if out.is_empty() {
        return Err(Failure::usage("--engines: no engine named"));
    }
    Ok(out)
}

/// Appends the portability report to `text` and returns its number of warnings: one per
/// (pattern, engine) that differs on some sample or cannot be written, located at the
/// pattern's key in the template, with the first divergence under it.
fn portability(
    template: &rtbench_engine::Template,
    source: &rtbench_engine::template::source::TemplateSource,
    samples: &[(String, Sample, String)],
    engines: &[EngineKind],
    text: &mut String,
) -> usize {
    let inputs: Vec<SampleInput<'_>> = samples
        .iter()
        .map(|(name, sample, file_text)| SampleInput {
            name: name.clone(),
            sample,
            file_text: Some(file_text.as_str()),
        })
        .collect();
    let report = analyze(template, &inputs, engines);
    let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
    text.push_str(&format!(
        "portability: the template's patterns in {} on {}\n",
        names.join(", "),
        match report.samples {
            1 => "1 sample".to_string(),
            n => format!("{n} samples"),
        }
    ));
    if report.fields.is_empty() {
        text.push_str("no patterns (only literal delimiters): portable\n\n");
    } else {
        text.push_str(&render::table(&report));
        text.push_str("\n\n");
    }
    let problems = render::problems(&report);
    for p in &problems {
        let finding = TemplateError::new(p.headline.clone(), p.row.path.clone(), Target::Key);
        text.push_str(&source.warn(&finding).to_string());
        for line in &p.details {
            text.push_str("\n  ");
            text.push_str(line);
        }
        text.push_str("\n\n");
    }
    let partial = render::partial_lines(&report);
    if !partial.is_empty() {
        text.push_str(&partial.join("\n"));
        text.push_str("\n\n");
    }
    problems.len()
}

/// A sample whose result depends on the chunking, as an error: located at the key of the
/// delimiter that made the difference (else in the sample file), with the chunking report
/// under it.
fn instability(
    report: &ChunkReport,
    source: &rtbench_engine::template::source::TemplateSource,
    name: &str,
    generation: &str,
) -> String {
    let changed = format!(
        "{} of {} chunkings change it",
        report.disagreements.len(),
        report.tried.len()
    );
    let message = match &report.cause {
        Some(c) => format!(
            "the result of {name} depends on the chunking: {} matched differently ({changed})",
            c.name()
        ),
        None => format!("the result of {name} depends on the chunking ({changed})"),
    };
    let mut d = match &report.cause {
        Some(c) => source.warn(&TemplateError::new(message, c.path(), Target::Value)),
        None => Diagnostic::warning(message).in_file(name),
    };
    d.severity = Severity::Error;
    let mut out = d.to_string();
    for line in report.describe(name, generation).lines() {
        out.push_str("\n  ");
        out.push_str(line);
    }
    out
}
