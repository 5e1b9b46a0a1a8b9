//! `rtbench lint`: the template's validation plus warnings about likely mistakes and
//! constructs other runtimes cannot use; with samples, also what each sample's parse loses
//! without an error (a value overwritten, text dropped, a region that never closed).

use std::path::{Path, PathBuf};

use crate::cli::output;
use crate::cli::{Failure, inputs};
use rtbench_tooling::findings::sample_findings;
use rtbench_tooling::lint::lint_file;
use rtbench_tooling::model::{Model, prepare};
use rtbench_tooling::sample::{self, Sample, expand, parse_sample};

/// Prints every warning with its location; exit 0, or 1 with `deny` when there are warnings
/// (and 1 for an invalid template, as `check`, or a malformed sample; 2 for a sample that cannot
/// be read).
pub fn run(path: &Path, samples: &[PathBuf], deny: bool) -> Result<(), Failure> {
    let (template, source) = inputs::template(path)?;
    let findings = lint_file(&template, &source);
    let mut text = String::new();
    let mut count = findings.len();
    for f in &findings {
        text.push_str(&source.warn(f).to_string());
        text.push_str("\n\n");
    }
    let mut files = Vec::new();
    for s in samples {
        files.extend(
            expand(s).map_err(|e| Failure::usage(format!("cannot read {}: {e}", s.display())))?,
        );
    }
    let mut model: Option<Model> = None;
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
            let dir = inputs::template_path(path)?.parent().map_or_else(
                || std::path::PathBuf::from("."),
                std::path::Path::to_path_buf,
            );
            let model = model.get_or_insert_with(|| Model::open(&dir));
            prepare(&sample, Some(model))
                .map_err(|e| Failure::invalid(format!("{}: {e}", file.display())))?
        } else {
            sample
        };
        let name = file.display().to_string();
        let (_, found) = sample_findings(&template, &sample, &name, &file_text);
        count += found.len();
        for f in found {
            text.push_str(&f.diagnostic.to_string());
            text.push_str("\n\n");
        }
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
    output::print_line(&text)?;
    if deny && count > 0 {
        return Err(Failure {
            message: String::new(),
            code: 1,
        });
    }
    Ok(())
}
