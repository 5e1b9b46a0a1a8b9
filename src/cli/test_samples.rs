//! `rtbench test`: regression tests for templates. Every sample with an expected message is
//! parsed and compared with it; `--bless` writes the current results as the expected ones.
//!
//! A sample's template is `template.json` (or `tokenizer_config.json`) in the sample's folder,
//! unless `--template` names one (a file, or a folder holding one).
//!
//! Without paths, the samples are those of the `--template` folder; without `--template`, those
//! of the current folder and its sub-folders when the current folder holds samples itself, else
//! `samples/` (as before), else the current folder's sub-folders.
//!
//! `--bless` writes each changed sample with [`rtbench_tooling::atomic::replace_file`] (never
//! over a file saved since it was read, nor over another bless of it running at the same time;
//! CRLF files stay CRLF; a symbolic link is written through to its file, and other hard links
//! are warned about) and prints, per sample, the structural change of its expected message;
//! `--dry-run` prints the same and writes nothing.
//!
//! With `--reference all`, every sample is judged under each reference version (a line with
//! the verdict under each where they are not all `ok`), and a section lists the samples whose
//! result depends on the version, with the difference.
//!
//! A template that cannot be loaded is reported once, where it is first needed, and each of
//! its samples fails with a line pointing at that report. A failing sample whose prefix lacks
//! the start anchor says so first (what differs may be an earlier turn's). With
//! `--chunkings`, a sample whose result depends on how the stream is cut fails too, with the
//! chunking report (`rtbench_tooling::chunk_samples`) naming the delimiter to blame.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::{Failure, inputs, output};
use rtbench_engine::Reference;
use rtbench_engine::py;
use rtbench_engine::template::Template;
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::Dict;
use rtbench_tooling::atomic::{links_of, replace_file};
use rtbench_tooling::chunk_samples::check_sample;
use rtbench_tooling::chunking::CheckPlan;
use rtbench_tooling::diff::diff;
use rtbench_tooling::findings::{Finding, anchor_not_found, sample_findings};
use rtbench_tooling::inputs::{Overrides, model_dir, prepare_sample, template_beside};
use rtbench_tooling::model::Model;
use rtbench_tooling::sample::{self, expand, replace_expected};
use rtbench_tooling::testing::{Verdict, expected_section, keeps_loose_expectation, verdict};
use rtbench_tooling::versions::compare_sample;

/// Sample files under `path`: the file itself, the samples of a folder, and those of its
/// sub-folders (sorted, so that runs are reproducible). Symbolic links to folders are not
/// followed: a link back up (`loop -> .`) would test, and bless, the same samples again and
/// again, or never end.
fn collect(path: &Path, out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    if !path.exists() {
        return Err(Failure::usage(format!(
            "{}: no such file or folder",
            path.display()
        )));
    }
    if !path.is_dir() {
        out.push(path.to_path_buf());
        return Ok(());
    }
    let io = |e: std::io::Error| Failure::usage(format!("cannot read {}: {e}", path.display()));
    out.extend(expand(path).map_err(io)?);
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for d in subdirs {
        collect(&d, out)?;
    }
    Ok(())
}

/// What blessing changes in a sample: the structural differences between its old expected
/// message and the new one, or that the section is new.
fn bless_change(sample: &sample::Sample, section: &str) -> String {
    let Some(old) = &sample.expected else {
        // The whole section is the change: shown, so that a dry run says what it would write.
        let shown = section.trim_end().replace('\n', "\n  ");
        return format!("new expected section:\n  {shown}");
    };
    let new = match py::json_loads(section) {
        Ok(v) => v,
        Err(_) => return "expected section rewritten".to_string(),
    };
    let lines: Vec<String> = diff(old, &new).iter().map(ToString::to_string).collect();
    match lines.len() {
        0 => "expected section reformatted (same message)".to_string(),
        n if n <= 20 => format!("expected section changed:\n  {}", lines.join("\n  ")),
        n => format!(
            "expected section changed:\n  {}\n  ... {} more differences",
            lines[..20].join("\n  "),
            n - 20
        ),
    }
}

/// The paths `rtbench test` runs on without PATH arguments: the folder of `--template` (the
/// folder itself when it is one); else the current folder and its sub-folders when the current
/// folder holds samples itself; else `samples/` (as before), or the current folder's
/// sub-folders when there is no `samples/`.
fn default_paths(template: Option<&Path>) -> Vec<PathBuf> {
    if let Some(t) = template {
        let dir = if t.is_dir() {
            t.to_path_buf()
        } else {
            t.parent()
                .filter(|d| !d.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        };
        return vec![dir];
    }
    let here = Path::new(".");
    if expand(here).is_ok_and(|files| !files.is_empty()) {
        return vec![here.to_path_buf()];
    }
    let samples = PathBuf::from("samples");
    if samples.is_dir() {
        return vec![samples];
    }
    vec![here.to_path_buf()]
}

/// The verdicts under one reference version (with `--reference all`).
struct Tally {
    reference: Reference,
    passed: usize,
    failed: usize,
    unchecked: usize,
}

/// What `--reference all` says of one sample.
struct UnderEach {
    /// The status after `... ` (with the lines under it).
    status: String,
    /// Its warnings, as lines under the status.
    warnings: String,
    /// How its result differs between the versions, if it does.
    depends: Option<String>,
}

/// One sample to judge, with what locates what is said of it.
struct Subject<'a> {
    /// The template's file (its keys locate the anchor's warning and a chunking's culprit).
    source: Option<&'a TemplateSource>,
    sample: &'a sample::Sample,
    /// The sample file as the user named it, and its text.
    name: &'a str,
    file_text: &'a str,
    model: Option<&'a Model>,
    /// `--chunkings`: the chunking check every sample must pass.
    chunkings: Option<&'a CheckPlan>,
}

impl Subject<'_> {
    /// The sample parsed with `template`: the result, its warnings, and the verdict on it,
    /// which a failure's explanation heads (the start anchor missing from the prefix) and a
    /// result that depends on the chunking fails (with `--chunkings`).
    fn judge(&self, template: &Template) -> (Result<Dict, String>, Vec<Finding>, Verdict) {
        let (audit, findings) = sample_findings(
            template,
            self.source,
            self.sample,
            self.name,
            self.file_text,
            self.model,
        );
        let result = audit.result.map_err(|e| e.text());
        let mut verdict = verdict(self.sample, &result);
        // The author should not chase a region of an earlier turn the whole prompt brought in.
        if let Verdict::Fail(lines) = &mut verdict
            && anchor_not_found(template, self.sample)
        {
            lines.insert(
                0,
                "the start anchor is not found in the prefix, so the whole prefix was parsed: \
                 what differs may come from an earlier turn (the warning below says where)"
                    .to_string(),
            );
        }
        if let Some(plan) = self.chunkings {
            let mut report = check_sample(template, self.sample, self.model, plan);
            if let Some(source) = self.source {
                report.locate(source);
            }
            if !report.agrees() {
                let said = report.describe(self.name, &self.sample.generation);
                let mut lines = vec!["the result depends on the chunking:".to_string()];
                lines.extend(said.lines().map(|l| format!("  {l}")));
                if let Verdict::Fail(before) = verdict {
                    lines.splice(0..0, before);
                }
                verdict = Verdict::Fail(lines);
            }
        }
        (result, findings, verdict)
    }
}

/// Judges a sample under every version of `tallies` (counting each verdict there) and compares
/// the versions' results.
fn under_each_version(
    template: &Template,
    subject: &Subject<'_>,
    tallies: &mut [Tally],
) -> UnderEach {
    let (sample, name, model) = (subject.sample, subject.name, subject.model);
    let mut verdicts = Vec::new();
    // Each warning with the versions that give it, in the order first given.
    let mut warnings: Vec<(String, Vec<Reference>)> = Vec::new();
    for tally in tallies.iter_mut() {
        let v = tally.reference;
        let (_, findings, verdict) = subject.judge(&template.clone().with_reference(v));
        match &verdict {
            Verdict::Pass => tally.passed += 1,
            Verdict::Fail(_) => tally.failed += 1,
            Verdict::NoExpectation => tally.unchecked += 1,
        }
        verdicts.push((v, verdict));
        for f in &findings {
            let at = f.diagnostic.position().unwrap_or_default();
            let w = format!("\n  warning: {at}: {}", f.diagnostic.message);
            match warnings.iter_mut().find(|(seen, _)| *seen == w) {
                Some((_, under)) => under.push(v),
                None => warnings.push((w, vec![v])),
            }
        }
    }
    // A warning every version gives is said once; another says under which.
    let warnings: String = warnings
        .into_iter()
        .map(|(w, under)| {
            if under.len() == tallies.len() {
                w
            } else {
                let names: Vec<&str> = under.iter().map(|r| r.name()).collect();
                format!("{w} (under {} only)", names.join(", "))
            }
        })
        .collect();
    let word = |v: &Verdict| match v {
        Verdict::Pass => "ok",
        Verdict::Fail(_) => "FAILED",
        Verdict::NoExpectation => "no expected message",
    };
    let status = if verdicts.iter().all(|(_, v)| matches!(v, Verdict::Pass)) {
        "ok".to_string()
    } else if verdicts
        .iter()
        .all(|(_, v)| matches!(v, Verdict::NoExpectation))
    {
        "no expected message".to_string()
    } else {
        let each: Vec<String> = verdicts
            .iter()
            .map(|(r, v)| format!("{r} {}", word(v)))
            .collect();
        let mut out = vec![each.join(" · ")];
        for (r, v) in &verdicts {
            if let Verdict::Fail(lines) = v {
                out.extend(lines.iter().take(20).map(|l| format!("  {r}: {l}")));
                if lines.len() > 20 {
                    out.push(format!("  {r}: ... {} more differences", lines.len() - 20));
                }
            }
        }
        out.join("\n")
    };
    let base = tallies.last().map_or(Reference::NEWEST, |t| t.reference);
    let divergences = compare_sample(template, sample, model).divergences(base);
    let depends = (!divergences.is_empty()).then(|| {
        let said: Vec<String> = divergences
            .iter()
            .map(|d| d.summary().replace('\n', "\n  "))
            .collect();
        format!("{name}: {}", said.join("\n  "))
    });
    UnderEach {
        status,
        warnings,
        depends,
    }
}

/// What `rtbench test` does besides judging: bless, and the chunking check.
pub(super) struct Mode {
    /// `--bless`: write the current results into the expected sections.
    pub bless: bool,
    /// `--dry-run`: with `--bless`, write nothing.
    pub dry_run: bool,
    /// `--chunkings`: the chunking check every sample must pass.
    pub chunkings: Option<CheckPlan>,
}

/// `rtbench test`.
pub(super) fn run(paths: &[PathBuf], template: Option<&Path>, mode: Mode) -> Result<(), Failure> {
    let Mode {
        bless,
        dry_run,
        chunkings,
    } = mode;
    // `--reference all`: each sample under every version.
    let versions = crate::cli::selection().versions();
    if bless && versions.len() > 1 {
        return Err(Failure::usage(
            "--bless writes one version's results: give --reference 5.24 or 5.25 (or leave it \
             out for the newest), not all",
        ));
    }
    if bless && chunkings.is_some() {
        return Err(Failure::usage(
            "--bless writes the samples and --chunkings checks them: run `rtbench test --bless`, \
             then `rtbench test --chunkings`",
        ));
    }
    let files = sample_files(paths, template)?;
    let mut run = Run {
        template,
        chunkings,
        bless: bless.then_some(Bless { dry_run }),
        tallies: versions
            .iter()
            .map(|&reference| Tally {
                reference,
                passed: 0,
                failed: 0,
                unchecked: 0,
            })
            .collect(),
        versions,
        ..Run::default()
    };
    for file in &files {
        run.file(file)?;
    }
    run.finish()
}

/// The sample files `rtbench test` runs on: those under `paths`, or under the default paths
/// ([`default_paths`]) when none are given.
fn sample_files(paths: &[PathBuf], template: Option<&Path>) -> Result<Vec<PathBuf>, Failure> {
    let default = default_paths(template);
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    if let Some(t) = template {
        // A folder without a template, or a missing file, is a usage error before any sample.
        inputs::template_path(t)?;
    }
    let mut files = Vec::new();
    for p in paths {
        collect(p, &mut files)?;
    }
    if files.is_empty() {
        return Err(Failure::usage("no sample files found (.sample or .txt)"));
    }
    Ok(files)
}

/// `--bless`, and whether it is a dry run.
#[derive(Clone, Copy)]
struct Bless {
    dry_run: bool,
}

/// What a run of `rtbench test` has seen so far: the report, the counts, and the templates
/// and model folders read (each once).
#[derive(Default)]
struct Run<'a> {
    /// `--template`.
    template: Option<&'a Path>,
    bless: Option<Bless>,
    /// `--chunkings`: the chunking check every sample must pass.
    chunkings: Option<CheckPlan>,
    versions: Vec<Reference>,
    /// With `--reference all`, the verdicts under each version.
    tallies: Vec<Tally>,
    /// Samples whose result depends on the version (with `--reference all`).
    depends: Vec<String>,
    /// Each template read, with its file (for locating what the findings say of it), or why
    /// it cannot be loaded.
    templates: BTreeMap<PathBuf, Result<(Template, TemplateSource), String>>,
    models: BTreeMap<PathBuf, Model>,
    passed: usize,
    failed: usize,
    unchecked: usize,
    blessed: usize,
    warned: usize,
    report: String,
}

/// A sample ready to judge: its template, and the model folder its inputs needed.
struct Ready {
    template: Template,
    /// The template's file (its text locates what the findings say of it).
    template_path: PathBuf,
    sample: sample::Sample,
    model_dir: Option<PathBuf>,
}

impl Run<'_> {
    /// A sample that cannot be judged: counted as failed, with why (indented under it).
    fn cannot(&mut self, file: &Path, why: &str) {
        self.failed += 1;
        self.report
            .push_str(&format!("{} ... FAILED\n  {why}\n", file.display()));
    }

    /// Judges (or blesses) one sample file and adds its line to the report.
    fn file(&mut self, file: &Path) -> Result<(), Failure> {
        // Read once: the verdict, and the text a bless rewrites, are of the same bytes.
        let file_text = match sample::read_sample_text(file) {
            Ok(text) => text,
            Err(e) => {
                self.cannot(file, &e.to_string());
                return Ok(());
            }
        };
        let Some(ready) = self.ready(file, &file_text)? else {
            return Ok(());
        };
        // The audit's traced parse gives the same result as `parse_response`.
        let name = file.display().to_string();
        let subject = Subject {
            source: self
                .templates
                .get(&ready.template_path)
                .and_then(|t| t.as_ref().ok())
                .map(|(_, source)| source),
            sample: &ready.sample,
            name: &name,
            file_text: &file_text,
            model: ready.model_dir.as_ref().and_then(|d| self.models.get(d)),
            chunkings: self.chunkings.as_ref(),
        };
        if self.versions.len() > 1 {
            let each = under_each_version(&ready.template, &subject, &mut self.tallies);
            self.warned += usize::from(!each.warnings.is_empty());
            self.depends.extend(each.depends);
            self.report
                .push_str(&format!("{name} ... {}{}\n", each.status, each.warnings));
            return Ok(());
        }
        let (result, findings, verdict) = subject.judge(&ready.template);
        let warnings: String = findings
            .iter()
            .map(|f| {
                let at = f.diagnostic.position().unwrap_or_default();
                format!("\n  warning: {at}: {}", f.diagnostic.message)
            })
            .collect();
        self.warned += usize::from(!findings.is_empty());
        let (status, after) = match self.bless {
            Some(how) => (
                self.bless_one(file, file_text, &ready.sample, &result, how)?,
                String::new(),
            ),
            None => self.count(verdict),
        };
        self.report
            .push_str(&format!("{name} ... {status}{warnings}\n{after}"));
        Ok(())
    }

    /// The sample in `file` read, its template loaded and its inputs prepared as the input
    /// policy prepares samples; `None` (reported as failed) when one of them cannot be.
    fn ready(&mut self, file: &Path, text: &str) -> Result<Option<Ready>, Failure> {
        let sample = match sample::sample_of_text(file, text) {
            Ok(s) => s,
            Err(e) => {
                self.cannot(file, &e.to_string());
                return Ok(None);
            }
        };
        let tpl_path = match self.template {
            Some(t) => Some(inputs::template_path(t)?),
            None => file.parent().and_then(template_beside),
        };
        let Some(tpl_path) = tpl_path else {
            self.cannot(
                file,
                "no template.json beside the sample (give one with --template)",
            );
            return Ok(None);
        };
        if !self.templates.contains_key(&tpl_path) {
            let loaded = inputs::template(&tpl_path).map_err(|f| f.message);
            // A template that cannot be loaded is reported once, where it is first needed;
            // each of its samples then fails with a line pointing at it.
            if let Err(e) = &loaded {
                self.report.push_str(e.trim_end());
                self.report.push_str("\n\n");
            }
            self.templates.insert(tpl_path.clone(), loaded);
        }
        let template = match &self.templates[&tpl_path] {
            Ok((t, _)) => t.clone(),
            Err(_) => {
                self.failed += 1;
                self.report.push_str(&format!(
                    "{} ... FAILED (its template {} cannot be loaded: the error above)\n",
                    file.display(),
                    tpl_path.display()
                ));
                return Ok(None);
            }
        };
        // A conversation or token ids become text with the model files beside the template
        // (and token ids are parsed as the reference parses ids); the chunking check also
        // cuts the text as the model's tokenizer does, as `rtbench chunks` does.
        if !sample.model.is_needed() && self.chunkings.is_none() {
            return Ok(Some(Ready {
                template,
                template_path: tpl_path,
                sample,
                model_dir: None,
            }));
        }
        let dir = model_dir(&tpl_path);
        let model = self
            .models
            .entry(dir.clone())
            .or_insert_with(|| Model::open(&dir));
        match prepare_sample(&sample, &Overrides::default(), Some(model)) {
            Ok(sample) => Ok(Some(Ready {
                template,
                template_path: tpl_path,
                sample,
                model_dir: Some(dir),
            })),
            Err(e) => {
                self.cannot(file, &e.to_string().replace('\n', "\n  "));
                Ok(None)
            }
        }
    }

    /// The verdict on one sample, counted: the status after `... `, and the lines after the
    /// sample's warnings (how many differences were not shown).
    fn count(&mut self, verdict: Verdict) -> (String, String) {
        match verdict {
            Verdict::Pass => {
                self.passed += 1;
                ("ok".to_string(), String::new())
            }
            Verdict::NoExpectation => {
                self.unchecked += 1;
                ("no expected message".to_string(), String::new())
            }
            Verdict::Fail(lines) => {
                self.failed += 1;
                let shown: Vec<String> = lines.iter().take(20).map(|l| format!("  {l}")).collect();
                let more = match lines.len() {
                    n if n > 20 => format!("  ... {} more differences\n", n - 20),
                    _ => String::new(),
                };
                (format!("FAILED\n{}", shown.join("\n")), more)
            }
        }
    }

    /// Writes one sample's result as its expected section (`--bless`), counted; the status
    /// after `... `.
    fn bless_one(
        &mut self,
        file: &Path,
        text: String,
        sample: &sample::Sample,
        result: &Result<Dict, String>,
        how: Bless,
    ) -> Result<String, Failure> {
        if file.extension().is_none_or(|e| e != sample::EXTENSION) {
            self.unchecked += 1;
            return Ok("skipped (a bare .txt sample cannot hold an expected message; rename it to .sample)".to_string());
        }
        // A deliberately loose expected error (`true`, a type alone) that still holds is the
        // author's choice: blessing does not narrow it to this very error.
        if keeps_loose_expectation(sample, result) {
            self.passed += 1;
            return Ok("ok (unchanged: its expected error still holds)".to_string());
        }
        let section = expected_section(result).map_err(Failure::invalid)?;
        let updated =
            replace_expected(file, &text, &section).map_err(|e| Failure::invalid(e.to_string()))?;
        if updated == text {
            self.passed += 1;
            return Ok("ok (unchanged)".to_string());
        }
        let change = bless_change(sample, &section);
        let name = file.display().to_string();
        // A link is written through to its file; other hard links keep the old text.
        let notes = if how.dry_run {
            links_of(file).warnings(&name)
        } else {
            replace_file(file, text.as_bytes(), updated.as_bytes())
                .map_err(|e| Failure::usage(e.to_string()))?
                .notes(&name)
        };
        self.blessed += 1;
        let verb = if how.dry_run {
            "would bless"
        } else {
            "blessed"
        };
        let notes: String = notes
            .iter()
            .map(|n| format!("\n  {}", n.replace('\n', "\n  ")))
            .collect();
        Ok(format!("{verb}: {change}{notes}"))
    }

    /// Prints the report and its summary; an error when a sample failed.
    fn finish(mut self) -> Result<(), Failure> {
        let mut summary = format!(
            "{} passed, {} failed, {} without expected message",
            self.passed, self.failed, self.unchecked
        );
        if self.versions.len() > 1 {
            summary = self.versions_summary();
        }
        match self.bless {
            Some(Bless { dry_run: true }) => {
                summary = format!(
                    "{} would be blessed (dry run: nothing written), {summary}",
                    self.blessed
                );
            }
            Some(Bless { dry_run: false }) => {
                summary = format!("{} blessed, {summary}", self.blessed);
            }
            None => {}
        }
        if self.warned > 0 {
            summary.push_str(&format!(
                "; {} with warnings (`rtbench lint --template T SAMPLE` shows them in full)",
                self.warned
            ));
        }
        self.report.push_str(&summary);
        output::print_line(&self.report)?;
        if self.failed > 0 {
            return Err(Failure::invalid(format!(
                "{} sample(s) failed",
                self.failed
            )));
        }
        Ok(())
    }

    /// With `--reference all`: the section on samples whose result depends on the version
    /// (added to the report), and the summary under each version. The samples that failed
    /// under some version count as failed.
    fn versions_summary(&mut self) -> String {
        // Samples that could not be judged at all fail under every version.
        let summary = self
            .tallies
            .iter()
            .map(|t| {
                format!(
                    "{}: {} passed, {} failed, {} without expected message",
                    t.reference,
                    t.passed,
                    t.failed + self.failed,
                    t.unchecked
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let names: Vec<&str> = self.versions.iter().map(|r| r.name()).collect();
        if self.depends.is_empty() {
            self.report.push_str(&format!(
                "no sample's result depends on the reference version ({})\n",
                names.join(", ")
            ));
        } else {
            self.report.push_str(&format!(
                "samples whose result depends on the reference version ({}):\n",
                names.join(", ")
            ));
            for d in &self.depends {
                self.report
                    .push_str(&format!("  {}\n", d.replace('\n', "\n  ")));
            }
        }
        self.failed += self.tallies.iter().map(|t| t.failed).max().unwrap_or(0);
        summary
    }
}
