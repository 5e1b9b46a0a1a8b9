//! `rtbench test`: regression tests for templates. Every sample with an expected message is
//! parsed and compared with it; `--bless` writes the current results as the expected ones.
//!
//! A sample's template is `template.json` (or `tokenizer_config.json`) in the sample's folder,
//! unless `--template` names one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cli::{Failure, inputs, output};
use crate::engine::diff::diff;
use crate::engine::parser::parse_response;
use crate::engine::py::{DumpOptions, json_dumps};
use crate::engine::template::Template;
use crate::engine::value::{Dict, Value};
use crate::sample::{EXPECTED_ERROR_KEY, Sample, expand, read_sample, replace_expected};

/// Template file names looked for beside samples, in order.
pub const TEMPLATE_FILES: [&str; 2] = ["template.json", "tokenizer_config.json"];

/// The template file for samples in `dir`, if there is one.
pub fn template_beside(dir: &Path) -> Option<PathBuf> {
    TEMPLATE_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.is_file())
}

/// Sample files under `path`: the file itself, the samples of a folder, and those of its
/// sub-folders (sorted, so that runs are reproducible).
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
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for d in subdirs {
        collect(&d, out)?;
    }
    Ok(())
}

/// What happened to one sample (also shown by the workbench's sample list).
pub enum Verdict {
    Pass,
    Fail(Vec<String>),
    NoExpectation,
}

/// Parses a sample like the reference's `parse_response` (a sample without a prefix opts out
/// with an empty one).
pub fn parse_sample_with(template: &Arc<Template>, sample: &Sample) -> Result<Dict, String> {
    parse_response(
        Arc::clone(template),
        &sample.generation,
        Some(sample.prefix.as_deref().unwrap_or("")),
        sample.tools.as_ref(),
    )
    .map_err(|e| e.message)
}

/// The `rtbench test` verdict for one sample's parse result.
pub fn verdict(sample: &Sample, result: &Result<Dict, String>) -> Verdict {
    let Some(expected) = &sample.expected else {
        return Verdict::NoExpectation;
    };
    match (sample.expects_error(), result) {
        (true, Err(_)) => Verdict::Pass,
        (true, Ok(m)) => Verdict::Fail(vec![format!(
            "expected parsing to fail, got {}",
            Value::Dict(m.clone()).py_repr()
        )]),
        (false, Err(e)) => Verdict::Fail(vec![format!("expected a message, got an error: {e}")]),
        (false, Ok(m)) => {
            let lines: Vec<String> = diff(expected, &Value::Dict(m.clone()))
                .iter()
                .map(ToString::to_string)
                .collect();
            if lines.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail(lines)
            }
        }
    }
}

/// The expected section for a result: the message, or `{"$error": "..."}`.
fn expected_text(result: &Result<Dict, String>) -> Result<String, Failure> {
    let value = match result {
        Ok(m) => Value::Dict(m.clone()),
        Err(e) => Value::Dict(Dict::from_iter([(
            EXPECTED_ERROR_KEY.to_string(),
            Value::from(e.as_str()),
        )])),
    };
    let opts = DumpOptions {
        indent: Some(2),
        compact: false,
        ..DumpOptions::reference_cli()
    };
    json_dumps(&value, &opts)
        .map_err(|e| Failure::invalid(format!("cannot write the result as JSON: {e}")))
}

/// `rtbench test`.
pub fn run(paths: &[PathBuf], template: Option<&Path>, bless: bool) -> Result<(), Failure> {
    let default = [PathBuf::from("samples")];
    let paths = if paths.is_empty() {
        &default[..]
    } else {
        paths
    };
    let mut files = Vec::new();
    for p in paths {
        collect(p, &mut files)?;
    }
    if files.is_empty() {
        return Err(Failure::usage("no sample files found (.sample or .txt)"));
    }
    let mut templates: BTreeMap<PathBuf, Result<Arc<Template>, String>> = BTreeMap::new();
    let (mut passed, mut failed, mut unchecked, mut blessed) = (0, 0, 0, 0);
    let mut report = String::new();
    for file in &files {
        let line = |report: &mut String, status: &str| {
            report.push_str(&format!("{} ... {status}\n", file.display()))
        };
        let sample = match read_sample(file) {
            Ok(s) => s,
            Err(e) => {
                failed += 1;
                line(&mut report, &format!("FAILED\n  {e}"));
                continue;
            }
        };
        let tpl_path = match template {
            Some(t) => Some(t.to_path_buf()),
            None => file.parent().and_then(template_beside),
        };
        let Some(tpl_path) = tpl_path else {
            failed += 1;
            line(
                &mut report,
                "FAILED\n  no template.json beside the sample (give one with --template)",
            );
            continue;
        };
        let loaded = templates.entry(tpl_path.clone()).or_insert_with(|| {
            inputs::template(&tpl_path)
                .map(|(t, _)| t)
                .map_err(|f| f.message)
        });
        let template = match loaded {
            Ok(t) => Arc::clone(t),
            Err(e) => {
                failed += 1;
                line(
                    &mut report,
                    &format!("FAILED\n  {}", e.replace('\n', "\n  ")),
                );
                continue;
            }
        };
        let result = parse_sample_with(&template, &sample);
        if bless {
            if file
                .extension()
                .is_some_and(|e| e == crate::sample::EXTENSION)
            {
                let text = std::fs::read_to_string(file)
                    .map_err(|e| Failure::usage(format!("cannot read {}: {e}", file.display())))?;
                let updated = replace_expected(file, &text, &expected_text(&result)?)
                    .map_err(|e| Failure::invalid(e.to_string()))?;
                if updated != text {
                    std::fs::write(file, updated).map_err(|e| {
                        Failure::usage(format!("cannot write {}: {e}", file.display()))
                    })?;
                    blessed += 1;
                    line(&mut report, "blessed");
                } else {
                    passed += 1;
                    line(&mut report, "ok (unchanged)");
                }
            } else {
                unchecked += 1;
                line(
                    &mut report,
                    "skipped (a bare .txt sample cannot hold an expected message; rename it to .sample)",
                );
            }
            continue;
        }
        match verdict(&sample, &result) {
            Verdict::Pass => {
                passed += 1;
                line(&mut report, "ok");
            }
            Verdict::NoExpectation => {
                unchecked += 1;
                line(&mut report, "no expected message");
            }
            Verdict::Fail(lines) => {
                failed += 1;
                let shown: Vec<String> = lines.iter().take(20).map(|l| format!("  {l}")).collect();
                line(&mut report, &format!("FAILED\n{}", shown.join("\n")));
                if lines.len() > 20 {
                    report.push_str(&format!("  ... {} more differences\n", lines.len() - 20));
                }
            }
        }
    }
    let mut summary =
        format!("{passed} passed, {failed} failed, {unchecked} without expected message");
    if bless {
        summary = format!("{blessed} blessed, {summary}");
    }
    report.push_str(&summary);
    output::print_line(&report)?;
    if failed > 0 {
        return Err(Failure::invalid(format!("{failed} sample(s) failed")));
    }
    Ok(())
}
