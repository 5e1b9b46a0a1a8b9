//! `rtbench explain`: why a field matched nowhere, or why its region ended where it did.

use crate::cli::inputs;
use crate::cli::output;
use crate::cli::{Failure, InputArgs};
use rtbench_tooling::explain::explain;

/// `rtbench explain ... FIELD`: prints the explanation as plain text. Exit 0 when the
/// explanation could be made (whatever it says), 1 without a prefix (as `parse`), 2 for an
/// unknown field or unreadable inputs.
pub fn run(args: &InputArgs, field: Option<&str>) -> Result<(), Failure> {
    let inputs = inputs::read(args)?;
    let prefix = inputs
        .prefix
        .as_deref()
        .ok_or_else(inputs::missing_prefix)?;
    let explanation = explain(
        &inputs.template,
        prefix,
        &inputs.output,
        inputs.tools.as_ref(),
        field.ok_or_else(|| Failure::usage("name the FIELD to explain".to_string()))?,
    )
    .map_err(Failure::usage)?;
    output::print_line(&explanation.lines().join("\n"))
}
