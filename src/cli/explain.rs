//! `rtbench explain`: why a field matched nowhere, or why its region ended where it did.

use crate::cli::inputs::{self, Inputs};
use crate::cli::output;
use crate::cli::run::each_sample;
use crate::cli::{Failure, InputArgs};
use rtbench_tokenize::ids::{Prefix as IdPrefix, decode_for_parse};
use rtbench_tooling::explain::{
    Decoded, Explanation, Options, explain_all, explain_decoded, explain_with, lines_all,
};

/// `rtbench explain ... [FIELD]`: prints the explanation of FIELD, or of every field, as plain
/// text. Exit 0 when the explanation could be made (whatever it says), 1 without a prefix or
/// when the parse ran out of regex work budget (as `parse`), 2 for an unknown field or
/// unreadable inputs. On a folder of samples: one JSON line
/// per sample, `{"path": ..., "lines": ["...", ...]}` (or `"error"`).
pub(super) fn run(
    args: &InputArgs,
    field: Option<&str>,
    prefix_details: bool,
) -> Result<(), Failure> {
    let options = Options { prefix_details };
    let job = inputs::job(args)?;
    if !job.folder {
        let lines = explain_one(&job, job.inputs(&args.output)?, field, options)?;
        return output::print_line(&lines.join("\n"));
    }
    each_sample(&job, |file, line| {
        let lines = explain_one(&job, job.inputs(file)?, field, options)?;
        line.push_str(",\"lines\":[");
        for (i, l) in lines.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            output::push_json_str(line, l)?;
        }
        line.push(']');
        Ok(())
    })
}

fn explain_one(
    job: &inputs::Job,
    inputs: Inputs,
    field: Option<&str>,
    options: Options,
) -> Result<Vec<String>, Failure> {
    let prefix = inputs
        .prefix
        .as_deref()
        .ok_or_else(inputs::missing_prefix)?;
    // Places are named in the files the texts live in.
    let placed = |e: Explanation| e.with_places(inputs.places.clone());
    if let Some(ids) = &inputs.ids {
        // The text the reference parses from the ids (5.25: defused spellings carry markers).
        let d = decode_for_parse(
            &inputs.template,
            Some(match &ids.prefix {
                Some(p) => IdPrefix::Ids(p),
                None => IdPrefix::Text(prefix),
            }),
            &ids.generation,
            job.tokenizer()?,
            job.model().control_tokens().map_err(Failure::invalid)?,
        )
        .map_err(|e| Failure::invalid(format!("error: {}", e.text())))?;
        let decoded = Decoded {
            prefix: d.prefix.as_deref().unwrap_or(""),
            fed: &d.fed,
            tail: &d.tail,
            defused: d.defused,
        };
        let explanations = explain_decoded(
            &inputs.template,
            &decoded,
            inputs.tools.as_ref(),
            field,
            options,
        )
        .map_err(failure)?;
        let explanations: Vec<Explanation> = explanations.into_iter().map(placed).collect();
        return Ok(match field {
            Some(_) => explanations
                .first()
                .map(Explanation::lines)
                .unwrap_or_default(),
            None => lines_all(&explanations),
        });
    }
    Ok(match field {
        Some(field) => placed(
            explain_with(
                &inputs.template,
                prefix,
                &inputs.output,
                inputs.tools.as_ref(),
                field,
                options,
            )
            .map_err(failure)?,
        )
        .lines(),
        None => lines_all(
            &explain_all(
                &inputs.template,
                prefix,
                &inputs.output,
                inputs.tools.as_ref(),
                options,
            )
            .map_err(failure)?
            .into_iter()
            .map(placed)
            .collect::<Vec<_>>(),
        ),
    })
}

/// A parse stopped by the regex work budget fails like `rtbench parse` (exit 1); anything
/// else (an unknown field) is a usage error.
fn failure(message: String) -> Failure {
    if rtbench_engine::parser::is_budget_error(&message) {
        Failure::invalid(message)
    } else {
        Failure::usage(message)
    }
}
