//! `rtbench test`: regression tests for templates. Every sample with an expected message is
//! parsed and compared with it; `--bless` writes the current results as the expected ones.
//!
//! A sample's template is `template.json` (or `tokenizer_config.json`) in the sample's folder,
//! unless `--template` names one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::{Failure, inputs, output};
use rtbench_engine::template::Template;
use rtbench_tooling::findings::sample_findings;
use rtbench_tooling::sample::{self, expand, read_sample, replace_expected};
use rtbench_tooling::testing::{Verdict, expected_section, template_beside, verdict};

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
    let mut templates: BTreeMap<PathBuf, Result<Template, String>> = BTreeMap::new();
    let (mut passed, mut failed, mut unchecked, mut blessed, mut warned) = (0, 0, 0, 0, 0);
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
            Ok(t) => t.clone(),
            Err(e) => {
                failed += 1;
                line(
                    &mut report,
                    &format!("FAILED\n  {}", e.replace('\n', "\n  ")),
                );
                continue;
            }
        };
        // The audit's traced parse gives the same result as `parse_response`.
        let file_text = std::fs::read_to_string(file)
            .map_err(|e| Failure::usage(format!("cannot read {}: {e}", file.display())))?;
        let (audit, findings) =
            sample_findings(&template, &sample, &file.display().to_string(), &file_text);
        let result = audit.result.map_err(|e| e.message);
        let warnings: String = findings
            .iter()
            .map(|f| {
                let at = f.diagnostic.position().unwrap_or_default();
                format!("\n  warning: {at}: {}", f.diagnostic.message)
            })
            .collect();
        warned += usize::from(!findings.is_empty());
        let line = |report: &mut String, status: &str| {
            report.push_str(&format!("{} ... {status}{warnings}\n", file.display()))
        };
        if bless {
            if file.extension().is_some_and(|e| e == sample::EXTENSION) {
                let text = file_text;
                let updated = replace_expected(
                    file,
                    &text,
                    &expected_section(&result).map_err(Failure::invalid)?,
                )
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
    if warned > 0 {
        summary.push_str(&format!(
            "; {warned} with warnings (`rtbench lint --template T SAMPLE` shows them in full)"
        ));
    }
    report.push_str(&summary);
    output::print_line(&report)?;
    if failed > 0 {
        return Err(Failure::invalid(format!("{failed} sample(s) failed")));
    }
    Ok(())
}
