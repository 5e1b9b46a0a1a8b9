//! Sample findings: what a sample's parse lost without an error (the engine's
//! [`audit`](mod@rtbench_engine::audit)) and what is off in the sample file itself, as warnings
//! located in the sample file. Shared by `rtbench test`, `rtbench lint` and the workbench.

use std::ops::Range;

use crate::model::{Model, audit_sample, decoded_sample};
use crate::sample::Sample;
use rtbench_engine::audit::{Audit, LossKind};
use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::offsets::line_starts;
use rtbench_engine::template::Template;

/// One warning about a sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Located in the sample file (when the place is in its prefix or generation).
    pub diagnostic: Diagnostic,
    /// What was lost (`None`: a problem of the file's layout).
    pub kind: Option<LossKind>,
    /// The region concerned, as an index into the audit's regions.
    pub region: Option<usize>,
    /// Where it is in the document (prefix + generation).
    pub span: Option<Range<usize>>,
}

/// Where a document range lies in the sample file, when it lies in a section of it.
pub fn in_file(sample: &Sample, file_text: &str, span: &Range<usize>) -> Option<Range<usize>> {
    let prefix_len = sample.prefix.as_ref().map_or(0, String::len);
    // Text decoded from token ids or rendered from messages is not the file's text.
    let (base, start) = if span.start >= prefix_len {
        if sample.model.generation_ids.is_some() {
            return None;
        }
        (sample.generation_offset, span.start - prefix_len)
    } else {
        if sample.model.prefix_ids.is_some() {
            return None;
        }
        (sample.prefix_offset?, span.start)
    };
    let from = (base + start).min(file_text.len());
    let to = (from + span.len()).min(file_text.len());
    Some(file_text.floor_char_boundary(from)..file_text.floor_char_boundary(to))
}

/// Parses `sample` like `rtbench test` does, with the audit's trace, and returns the audit with
/// every warning about the sample: the file's layout first, then the losses in document order.
/// `name` is the sample file as the user named it and `file_text` its text.
pub fn sample_findings(
    template: &Template,
    sample: &Sample,
    name: &str,
    file_text: &str,
    model: Option<&Model>,
) -> (Audit, Vec<Finding>) {
    // A generation of token ids is parsed as the reference parses ids (5.25: defused).
    let audit = audit_sample(template, sample, model);
    let defusing: Vec<Finding> = decoded_sample(template, sample, model)
        .map(|d| crate::defusing::warnings(template, &d, model))
        .unwrap_or_default()
        .into_iter()
        .map(|w| Finding {
            diagnostic: Diagnostic::warning(w.message).in_file(name),
            kind: None,
            region: None,
            span: Some(w.span),
        })
        .collect();
    let line_starts = if sample.warnings.is_empty() {
        Vec::new()
    } else {
        line_starts(file_text)
    };
    let mut out: Vec<Finding> = sample
        .warnings
        .iter()
        .map(|w| {
            let line_start = line_starts.get(w.line - 1).copied().unwrap_or(0);
            Finding {
                diagnostic: Diagnostic::warning(w.message.clone())
                    .in_file(name)
                    .at(file_text, line_start..line_start),
                kind: None,
                region: None,
                span: None,
            }
        })
        .collect();
    for loss in &audit.losses {
        // A generation declared cut off leaves its last region open on purpose.
        if sample.truncated && loss.kind == LossKind::Unclosed {
            continue;
        }
        let mut d = Diagnostic::warning(loss.message.clone())
            .in_file(name)
            .with_help(Some(loss.help.clone()));
        if let Some(at) = in_file(sample, file_text, &loss.span) {
            d = d.at(file_text, at);
        }
        out.push(Finding {
            diagnostic: d,
            kind: Some(loss.kind),
            region: loss.region,
            span: Some(loss.span.clone()),
        });
    }
    out.extend(defusing);
    (audit, out)
}
