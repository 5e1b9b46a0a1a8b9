//! `rtbench new --model DIR [--out FILE] [--check]`: a response template inferred from the
//! model's own chat template (see [`rtbench_tooling::infer`]), written with the probe renders
//! as samples, proven on them (each parses back to its probe's message, under every chunking)
//! and reported with the evidence for each choice. `--check` writes nothing: it compares the
//! inferred template with the folder's own on the probes and on the folder's samples.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rtbench_engine::Template;
use rtbench_engine::value::Value;
use rtbench_tooling::chunk_samples::check_sample;
use rtbench_tooling::chunking::CheckPlan;
use rtbench_tooling::infer::{self, Inference, ProbeSample};
use rtbench_tooling::inputs::template_beside;
use rtbench_tooling::model::{Model, parse_sample, prepare};
use rtbench_tooling::sample::{Sample, expand, json_section, read_sample, text_section};

use crate::cli::model::open_model;
use crate::cli::{Failure, output};

/// The folder the probe samples are written to, beside the template.
const PROBES: &str = "probes";

/// A probe as a sample the engine and the chunking check take.
fn as_sample(dir: &Path, p: &ProbeSample) -> Sample {
    let mut s = Sample::bare(&dir.join(file_name(&p.name)), p.generation.clone());
    s.prefix = Some(p.prefix.clone());
    s.tools = p.tools.as_ref().and_then(|t| Value::try_from(t).ok());
    s.expected = Value::try_from(&p.expected).ok();
    s
}

/// `one tool call` → `one-tool-call.sample`.
fn file_name(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{}.sample", slug.trim_matches('-'))
}

/// The `.sample` text of a probe.
fn sample_text(p: &ProbeSample, from: &Path, with_messages: bool) -> String {
    let mut out = String::new();
    let mut note = format!(
        "A probe of `rtbench new --model`: {}, rendered by {} (prefix: the messages rendered with \
         the generation prompt; generation: the assistant's turn as the chat template writes it).",
        p.name,
        from.display()
    );
    if p.constructed {
        note.push_str(
            "\nThe chat template writes this turn differently in history than a model generates \
             it after the prompt, so the generation was put together from both: check it.",
        );
    }
    out.push_str(&format!("--- note ---\n{note}\n"));
    // The conversation, when the samples sit in the model's folder (where its chat template
    // renders it: `test` then also checks the prefix is still what it renders).
    if with_messages && let Ok(m) = Value::try_from(&p.messages) {
        json_section("messages", &m, &mut out);
    }
    if with_messages
        && p.kwargs.as_object().is_some_and(|k| !k.is_empty())
        && let Ok(k) = Value::try_from(&p.kwargs)
    {
        json_section("kwargs", &k, &mut out);
    }
    text_section("prefix", &p.prefix, &mut out);
    text_section("generation", &p.generation, &mut out);
    if let Some(t) = p.tools.as_ref().and_then(|t| Value::try_from(t).ok()) {
        json_section("tools", &t, &mut out);
    }
    if let Ok(e) = Value::try_from(&p.expected) {
        json_section("expected", &e, &mut out);
    }
    out
}

/// The inference of a model folder, with its template compiled.
fn inferred(model: &Model) -> Result<(Inference, Template, String, f64), Failure> {
    let chat = match &model.chat {
        Ok(Some(chat)) => chat,
        Ok(None) => {
            return Err(Failure::usage(format!(
                "{} has no chat template (chat_template.jinja, or tokenizer_config.json's \
                 chat_template) to infer from: `rtbench new --format F` starts from a scaffold \
                 instead",
                model.dir.display()
            )));
        }
        Err(e) => return Err(Failure::invalid(e.to_string())),
    };
    let start = Instant::now();
    let inference = infer::infer(chat).map_err(|e| {
        Failure::invalid(format!(
            "{}: no response template can be inferred: {e}",
            model.dir.display()
        ))
    })?;
    let text = infer::template_text(&inference.template);
    let template = Template::from_json_str(&text)
        .map_err(|e| Failure::invalid(format!("the inferred template does not load: {e}")))?
        .with_reference(crate::cli::reference());
    Ok((inference, template, text, start.elapsed().as_secs_f64()))
}

/// The chat template's file (the folder's first model file, when it is not a `.jinja`).
fn chat_file(model: &Model) -> PathBuf {
    let files = model.files();
    files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "jinja"))
        .or(files.first())
        .cloned()
        .unwrap_or_else(|| model.dir.clone())
}

/// The report of what was inferred and why.
fn report(model: &Model, inference: &Inference, text: &str, file: &str, secs: f64) -> Vec<String> {
    let mut lines = vec![format!(
        "inferred from {} in {:.0} ms:",
        chat_file(model).display(),
        secs * 1000.0
    )];
    for e in &inference.evidence {
        lines.push(format!("  {:<28} {}", e.what, e.chose));
        lines.push(format!("  {:<28} because {}", "", e.because));
    }
    if !inference.notes.is_empty() {
        lines.push("check:".into());
        for n in &inference.notes {
            let at = match infer::note_place(text, n) {
                Some((l, c)) => format!("{file}:{l}:{c}: "),
                None => format!("{file}: "),
            };
            lines.push(format!("  {at}{}", n.message));
        }
    }
    lines
}

/// The probes parsed back, and the chunking check on each: report lines and whether all held.
fn prove(template: &Template, inference: &Inference, dir: &Path) -> (Vec<String>, bool) {
    let trips = infer::round_trip(template, &inference.samples);
    let ok = trips.iter().filter(|t| t.mismatch.is_none()).count();
    let mut lines = vec![format!(
        "probes: {ok}/{} parse back to the probe's message (render → parse → message)",
        trips.len()
    )];
    for t in trips.iter().filter(|t| t.mismatch.is_some()) {
        lines.push(format!(
            "  {}: got {}",
            t.name,
            t.mismatch.as_deref().unwrap_or("")
        ));
    }
    let plan = CheckPlan::default();
    let mut unstable = Vec::new();
    let mut tried = 0;
    for p in &inference.samples {
        let report = check_sample(template, &as_sample(dir, p), None, &plan);
        tried += report.tried.len();
        if !report.agrees() {
            let cause = report.cause.map(|c| c.name()).unwrap_or_default();
            unstable.push(format!("  {}: streamed results differ ({cause})", p.name));
        }
    }
    lines.push(format!(
        "chunking: {} of {} probes give the one-shot result under all {tried} chunkings tried",
        inference.samples.len() - unstable.len(),
        inference.samples.len()
    ));
    let all = ok == trips.len() && unstable.is_empty();
    lines.extend(unstable);
    (lines, all)
}

/// `rtbench new --model DIR [--out FILE]`.
pub(crate) fn run(dir: &Path, out: Option<&Path>, check: bool) -> Result<(), Failure> {
    let model = open_model(dir)?;
    let (inference, template, text, secs) = inferred(&model)?;
    if check {
        return compare(&model, &inference, &template, &text, secs);
    }
    let out = out.map_or_else(|| dir.join("template.json"), Path::to_path_buf);
    let out_dir = match out.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let probes_dir = out_dir.join(PROBES);
    if out.symlink_metadata().is_ok() {
        return Err(Failure::usage(format!(
            "{} already exists: rtbench new never replaces a file (`rtbench new --model {} \
             --check` compares the inferred template with it; --out FILE writes elsewhere)",
            out.display(),
            dir.display()
        )));
    }
    let names: Vec<PathBuf> = inference
        .samples
        .iter()
        .map(|p| probes_dir.join(file_name(&p.name)))
        .collect();
    if let Some(taken) = names.iter().find(|p| p.symlink_metadata().is_ok()) {
        return Err(Failure::usage(format!(
            "{} already exists: rtbench new never replaces a file (move the {PROBES} folder \
             away, or write elsewhere with --out FILE)",
            taken.display()
        )));
    }
    let file = out.display().to_string();
    let mut lines = report(&model, &inference, &text, &file, secs);
    let (proof, _) = prove(&template, &inference, &probes_dir);
    lines.extend(proof);
    std::fs::create_dir_all(&probes_dir)
        .map_err(|e| Failure::usage(format!("cannot create {}: {e}", probes_dir.display())))?;
    crate::cli::new::write_new(&out, &text)?;
    lines.push(format!("wrote {file}"));
    let source = chat_file(&model);
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let with_messages = same(&out_dir, dir);
    for (p, path) in inference.samples.iter().zip(&names) {
        crate::cli::new::write_new(path, &sample_text(p, &source, with_messages))?;
    }
    lines.push(format!(
        "wrote {} ({} probe sample{})",
        probes_dir.display(),
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    ));
    lines.push(String::new());
    lines.push("next:".into());
    lines.push(format!(
        "  rtbench test --template {file} {}",
        probes_dir.display()
    ));
    lines.push(format!("  rtbench {file}"));
    output::print_line(&lines.join("\n"))
}

/// `--check`: the inferred template against the folder's own, on the probes and the folder's
/// samples. Exit 1 on any difference.
fn compare(
    model: &Model,
    inference: &Inference,
    inferred_t: &Template,
    text: &str,
    secs: f64,
) -> Result<(), Failure> {
    let Some(own_path) = template_beside(&model.dir) else {
        return Err(Failure::usage(format!(
            "{} has no response template to compare with (template.json or \
             tokenizer_config.json): `rtbench new --model {}` writes the inferred one",
            model.dir.display(),
            model.dir.display()
        )));
    };
    let (own, _) = crate::cli::inputs::template(&own_path)?;
    let mut lines = report(model, inference, text, "(inferred template)", secs);
    let (proof, _) = prove(inferred_t, inference, &model.dir);
    lines.extend(proof);
    let parse = |t: &Template, s: &Sample| {
        infer::message_json(
            &parse_sample(t, s, Some(model)).map_err(|e| format!("{:?}: {}", e.kind, e.message)),
        )
    };
    // Each sample parsed with both templates: how many agree, and a line per difference.
    let judge = |samples: Vec<(String, Sample)>| {
        let total = samples.len();
        let diffs: Vec<String> = samples
            .iter()
            .filter_map(|(label, s)| {
                infer::difference(
                    &parse(&own, s),
                    &parse(inferred_t, s),
                    ("folder's", "inferred"),
                )
                .map(|d| format!("  {label}: {d}"))
            })
            .collect();
        (total - diffs.len(), total, diffs)
    };
    let probe_dir = model.dir.join(PROBES);
    let probes = inference
        .samples
        .iter()
        .map(|p| (format!("probe {}", p.name), as_sample(&probe_dir, p)))
        .collect();
    let (same, total, probe_diffs) = judge(probes);
    lines.push(format!(
        "probes: {same}/{total} parse alike with {} and the inferred template",
        own_path.display()
    ));
    let samples = expand(&model.dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "sample"))
        .filter_map(|f| {
            let sample = prepare(&read_sample(&f).ok()?, Some(model)).ok()?;
            Some((f.display().to_string(), sample))
        })
        .collect();
    let (alike, checked, sample_diffs) = judge(samples);
    let differences = probe_diffs.len() + sample_diffs.len();
    lines.extend(probe_diffs);
    lines.push(format!(
        "samples: {alike}/{checked} of {} parse alike",
        model.dir.display()
    ));
    lines.extend(sample_diffs);
    output::print_line(&lines.join("\n"))?;
    if differences > 0 {
        return Err(Failure::invalid(format!(
            "{differences} difference(s) between the folder's template and the inferred one"
        )));
    }
    Ok(())
}
