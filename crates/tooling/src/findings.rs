//! Sample findings: what a sample's parse lost without an error (the engine's
//! [`audit`](mod@rtbench_engine::audit)) and what is off in the sample file itself, as warnings
//! located in the sample file; and a start anchor the sample's prefix does not contain, located
//! at the anchor's key in the template. Shared by `rtbench test`, `rtbench lint` and the
//! workbench.

use std::ops::Range;

use crate::diff::{diff, same_dicts};
use crate::model::{Model, audit_sample, decoded_sample};
use crate::place::{Part, Places};
use crate::sample::{Sample, SampleWarning};
use rtbench_engine::audit::{Audit, Loss, LossKind};
use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::offsets::line_starts;
use rtbench_engine::parser::parse_response;
use rtbench_engine::template::Template;
use rtbench_engine::template::error::{Target, TemplateError, key_path};
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::Value;

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

/// A sample-file warning, said for `template`: for a prefix or generation followed by a blank
/// line (files written for earlier versions meant its last line break), what reading it with
/// that line break would change in the parse: a start anchor found only with it (the whole
/// prompt, earlier turns included, is parsed without it), or the message. Costs a parse of the
/// older reading, for such files only.
pub fn layout_message(template: &Template, sample: &Sample, w: &SampleWarning) -> String {
    layout_note(template, sample, w).0
}

/// [`layout_message`], and whether it is about the start anchor.
fn layout_note(template: &Template, sample: &Sample, w: &SampleWarning) -> (String, bool) {
    let Some(old) = &w.old_layout else {
        return (w.message.clone(), false);
    };
    let breaks = "\n".repeat(old.newlines);
    let prefix = sample.prefix.clone().unwrap_or_default();
    let (then_prefix, then_generation) = match old.section {
        "prefix" => (format!("{prefix}{breaks}"), sample.generation.to_string()),
        _ => (prefix.clone(), format!("{}{breaks}", sample.generation)),
    };
    let option = if old.newlines == 1 {
        "ends with newline".to_string()
    } else {
        format!("ends with {} newlines", old.newlines)
    };
    let anchor = template.start_anchor();
    if old.section == "prefix"
        && matches!(anchor.last_match_end(&prefix), Ok(None))
        && matches!(anchor.last_match_end(&then_prefix), Ok(Some(_)))
    {
        let message = format!(
            "the start anchor {} is not in the prefix as read: the blank line after the prefix is layout, so the prefix ends without the line break the anchor needs, and the whole prompt (earlier turns included) was parsed; write `--- prefix ({option}) ---` if the prompt ends with it (files written for earlier versions of rtbench meant that)",
            anchor.describe()
        );
        return (message, true);
    }
    let tools = sample.tools.as_ref();
    let now = parse_response(template, Some(&prefix), &sample.generation, tools);
    let then = parse_response(template, Some(&then_prefix), &then_generation, tools);
    let change = match (&now, &then) {
        (Ok(a), Ok(b)) if same_dicts(a, b) => return (w.message.clone(), false),
        (Ok(a), Ok(b)) => diff(&Value::Dict(a.clone()), &Value::Dict(b.clone()))
            .first()
            .map(|d| {
                let show = |v: &Option<Value>| v.as_ref().map_or("nothing".into(), Value::py_repr);
                format!(
                    "{}: {} as read, {} with it",
                    d.path,
                    show(&d.expected),
                    show(&d.got)
                )
            })
            .unwrap_or_default(),
        (Err(a), Err(b)) if a.text() == b.text() => return (w.message.clone(), false),
        (Err(a), Err(b)) => format!("{} as read, {} with it", a.text(), b.text()),
        (Ok(_), Err(e)) => format!("with it the parse fails ({})", e.text()),
        (Err(e), Ok(_)) => format!(
            "as read the parse fails ({}), with it it does not",
            e.text()
        ),
    };
    (
        format!("{}; it changes the message: {change}", w.message),
        false,
    )
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
/// every warning about the sample: the file's layout first, then a start anchor its prefix does
/// not contain, then the losses in document order. `name` is the sample file as the user named
/// it and `file_text` its text; `source` is the template's file, where the anchor's warning is
/// located (without it, the warning is the sample file's).
pub fn sample_findings(
    template: &Template,
    source: Option<&TemplateSource>,
    sample: &Sample,
    name: &str,
    file_text: &str,
    model: Option<&Model>,
) -> (Audit, Vec<Finding>) {
    // A generation of token ids is parsed as the reference parses ids (5.25: defused).
    let audit = audit_sample(template, sample, model);
    let findings = audit_findings(
        template,
        source,
        sample,
        name,
        file_text,
        model,
        &audit.losses,
    );
    (audit, findings)
}

/// Whether [`audit_findings`] places anything in the sample file's text: a layout warning or a
/// loss. Without either, it reads none of it.
pub fn places_in_file(sample: &Sample, losses: &[Loss]) -> bool {
    !sample.warnings.is_empty() || !losses.is_empty()
}

/// The warnings of [`sample_findings`] about a parse already audited (`losses`, the audit's
/// of `sample`).
pub fn audit_findings(
    template: &Template,
    source: Option<&TemplateSource>,
    sample: &Sample,
    name: &str,
    file_text: &str,
    model: Option<&Model>,
    losses: &[Loss],
) -> Vec<Finding> {
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
    // A blank line that cost the start anchor its line break says so itself, with the header
    // to write: the anchor's own warning would only repeat it.
    let mut explains_anchor = false;
    let mut out: Vec<Finding> = sample
        .warnings
        .iter()
        .map(|w| {
            let (message, anchor) = layout_note(template, sample, w);
            explains_anchor |= anchor;
            let line_start = line_starts.get(w.line - 1).copied().unwrap_or(0);
            // The column counts characters of the line.
            let at = file_text[line_start..]
                .char_indices()
                .nth(w.column.saturating_sub(1))
                .map_or(file_text.len(), |(i, _)| line_start + i);
            Finding {
                diagnostic: Diagnostic::warning(message)
                    .in_file(name)
                    .at(file_text, at..at),
                kind: None,
                region: None,
                span: None,
            }
        })
        .collect();
    if !explains_anchor {
        out.extend(anchor_finding(template, source, sample, name));
    }
    for loss in losses {
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
    out
}

/// Whether the start anchor matches nowhere in the sample's prefix (a prefix was given and is
/// not empty): the whole prompt is then parsed, earlier turns included.
pub fn anchor_not_found(template: &Template, sample: &Sample) -> bool {
    let prefix = sample.prefix.as_deref().unwrap_or("");
    !prefix.is_empty() && matches!(template.start_anchor().last_match_end(prefix), Ok(None))
}

/// The warning for a start anchor the sample's prefix does not contain: the whole prompt is
/// parsed, so a tool call or an answer of an earlier turn becomes this message's. It says where
/// the prefix came closest to the anchor (how much of it matched there, and for a pattern the
/// element that could not match), and is located at the anchor's key in the template.
fn anchor_finding(
    template: &Template,
    source: Option<&TemplateSource>,
    sample: &Sample,
    name: &str,
) -> Option<Finding> {
    if !anchor_not_found(template, sample) {
        return None;
    }
    let prefix = sample.prefix.as_deref().unwrap_or("");
    let anchor = template.start_anchor();
    let mut message = format!(
        "start anchor {} is not found in the prefix of {name}, so the whole prefix was parsed: \
         regions of earlier turns (a tool call, an answer) become this message's",
        anchor.describe()
    );
    message.push_str(&match closest_to_anchor(anchor, prefix, sample, name) {
        Some(closest) => format!("; the closest text in the prefix: {closest}"),
        None => "; no text in the prefix begins like it".to_string(),
    });
    let help = format!(
        "make the anchor match the end of the prompt the chat template writes, or fix the prefix of {name}"
    );
    let key = match anchor {
        Delimiter::Pattern(_) => "start_anchor_pattern",
        Delimiter::Literal(_) => "start_anchor",
    };
    let diagnostic = match source {
        Some(source) => {
            source.warn(&TemplateError::new(message, key_path([key]), Target::Value).help(help))
        }
        None => Diagnostic::warning(message)
            .in_file(name)
            .with_help(Some(help)),
    };
    Some(Finding {
        diagnostic,
        kind: None,
        region: None,
        span: None,
    })
}

/// Where the prefix came closest to the anchor (as `rtbench explain` finds a delimiter's
/// nearest partial match): the text, its place (in the sample file when the prefix is the
/// file's text), how much of the anchor matched and what stopped it.
fn closest_to_anchor(
    anchor: &Delimiter,
    prefix: &str,
    sample: &Sample,
    name: &str,
) -> Option<String> {
    let near = anchor
        .nearest_partial(prefix, 4096)
        .ok()
        .flatten()
        .filter(|r| prefix[r.clone()].chars().nth(1).is_some())?;
    // The prefix is cut after the anchor's last match, so the last place that came as close
    // is the one meant (the latest turn's header); for a literal, the same text anywhere is
    // as close (a pattern's context may differ, so its own choice stands).
    let near = match anchor {
        Delimiter::Literal(_) => prefix
            .rfind(&prefix[near.clone()])
            .map_or(near.clone(), |at| at..at + near.len()),
        Delimiter::Pattern(_) => near,
    };
    // Named as every place is (`x.sample:4:7 (prefix 1:7)`, or `prefix 1:7` in no file).
    let place = Places::of_sample(sample, name).end_of(Part::Prefix, &prefix[..near.start]);
    let stop = match prefix[near.end..].chars().next() {
        Some(c) => format!(
            "then {} did not fit",
            Value::from(c.to_string().as_str()).py_repr()
        ),
        None => "then the prefix ended".to_string(),
    };
    let mut out = format!(
        "{} at {place} ({} characters of the anchor matched, {stop})",
        Value::from(&prefix[near.clone()]).py_repr(),
        prefix[near.clone()].chars().count()
    );
    if let (Delimiter::Pattern(p), Ok(Some(stuck))) = (anchor, anchor.stuck_at(prefix, near.start))
    {
        let element = p.source().get(stuck.element.clone()).unwrap_or("");
        out.push_str(&format!(
            "; the pattern's element {} could not match there",
            Value::from(element).py_repr()
        ));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::parse_sample;
    use std::path::Path;

    /// MiniMax-style turns: the anchor needs the line break after `]~b]ai`.
    const TEMPLATE: &str = r#"{"defaults": {"role": "assistant"}, "start_anchor": "]~b]ai\n",
        "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "content": {"close": "[e~["}}}"#;

    fn findings(text: &str) -> Vec<String> {
        findings_with(TEMPLATE, text)
    }

    fn findings_with(template: &str, text: &str) -> Vec<String> {
        let t = Template::from_json_str(template).unwrap();
        let s = parse_sample(Path::new("x.sample"), text).unwrap();
        let (_, found) = sample_findings(&t, None, &s, "x.sample", text, None);
        // The file's own warnings (not the parse's losses).
        found
            .iter()
            .filter(|f| f.kind.is_none())
            .map(|f| {
                format!(
                    "{}: {}",
                    f.diagnostic.position().unwrap_or_default(),
                    f.diagnostic.message
                )
            })
            .collect()
    }

    /// A blank line before the next header is layout: where the start anchor needed the line
    /// break it stood for, the warning says so (the whole prompt was parsed), at the place in
    /// the header where the option goes.
    #[test]
    fn a_blank_line_the_start_anchor_needed_is_said_at_the_header() {
        let text = "--- prefix ---\n]~b]user\nHi![e~[\n]~b]ai\n\n--- generation ---\nHello![e~[\n";
        let found = findings(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0],
            "x.sample:1:11: the start anchor ']~b]ai\\n' is not in the prefix as read: the blank line after the prefix is layout, so the prefix ends without the line break the anchor needs, and the whole prompt (earlier turns included) was parsed; write `--- prefix (ends with newline) ---` if the prompt ends with it (files written for earlier versions of rtbench meant that)"
        );
        // Written as meant, nothing to say.
        let fixed = text.replace("--- prefix ---", "--- prefix (ends with newline) ---");
        assert!(findings(&fixed).is_empty(), "{:?}", findings(&fixed));
    }

    /// A blank line whose line break would change the message says how.
    #[test]
    fn a_blank_line_that_changes_the_message_says_how() {
        // An anchor without the line break: the prefix needs none.
        let template = TEMPLATE.replace("]~b]ai\\n", "]~b]ai");
        let findings = |text: &str| findings_with(&template, text);
        let text = "--- prefix ---\n]~b]ai\n--- generation ---\n<think>hm</think>Hi[e~[\n\n--- note ---\nn\n";
        let found = findings(text);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("x.sample:3:15: the blank line after the generation is layout"),
            "{found:?}"
        );
        assert!(
            found[0]
                .ends_with("; it changes the message: $.content: 'Hi' as read, nothing with it"),
            "{found:?}"
        );
        // A blank line that changes nothing is the plain warning.
        let same = "--- prefix ---\n]~b]ai\n--- generation ---\nHi\n\n--- note ---\nn\n";
        let found = findings(same);
        assert_eq!(found.len(), 1);
        assert!(!found[0].contains("it changes"), "{found:?}");
    }
}
