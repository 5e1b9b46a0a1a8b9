//! `rtbench lint`: the template's validation plus warnings about likely mistakes and
//! constructs other runtimes cannot use.

use std::path::Path;

use crate::cli::output;
use crate::cli::{Failure, inputs};
use rtbench_tooling::lint::lint;

/// Prints every warning with its location; exit 0, or 1 with `deny` when there are warnings
/// (and 1 for an invalid template, as `check`).
pub fn run(path: &Path, deny: bool) -> Result<(), Failure> {
    let (template, source) = inputs::template(path)?;
    let findings = lint(&template, source.template_value());
    let mut text = String::new();
    for f in &findings {
        text.push_str(&source.warn(f).to_string());
        text.push_str("\n\n");
    }
    text.push_str(&match findings.len() {
        0 => format!("{}: no warnings", path.display()),
        1 => format!("{}: 1 warning", path.display()),
        n => format!("{}: {n} warnings", path.display()),
    });
    output::print_line(&text)?;
    if deny && !findings.is_empty() {
        return Err(Failure {
            message: String::new(),
            code: 1,
        });
    }
    Ok(())
}
