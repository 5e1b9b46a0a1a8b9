//! `rtbench explain`: why a field matched nowhere, or why its region ended where it did.

use crate::cli::inputs;
use crate::cli::output;
use crate::cli::{Failure, InputArgs};
use rtbench_tooling::explain::{Options, explain_all, explain_with, lines_all};

/// `rtbench explain ... [FIELD]`: prints the explanation of FIELD, or of every field, as plain
/// text. Exit 0 when the explanation could be made (whatever it says), 1 without a prefix (as
/// `parse`), 2 for an unknown field or unreadable inputs.
pub fn run(args: &InputArgs, field: Option<&str>, prefix_details: bool) -> Result<(), Failure> {
    let inputs = inputs::read(args)?;
    let prefix = inputs
        .prefix
        .as_deref()
        .ok_or_else(inputs::missing_prefix)?;
    let options = Options { prefix_details };
    let lines = match field {
        Some(field) => explain_with(
            &inputs.template,
            prefix,
            &inputs.output,
            inputs.tools.as_ref(),
            field,
            options,
        )
        .map_err(Failure::usage)?
        .lines(),
        None => lines_all(
            &explain_all(
                &inputs.template,
                prefix,
                &inputs.output,
                inputs.tools.as_ref(),
                options,
            )
            .map_err(Failure::usage)?,
        ),
    };
    output::print_line(&lines.join("\n"))
}
