//! What token-id parsing changes for a sample, said where it happens: the control-token
//! spellings the model wrote with ordinary tokens (5.25 defuses them, so a delimiter made of
//! them is text), and the places where 5.25's protection does not hold or changes the text:
//! a spelling split between the prompt and the generation (decoded apart, never defused), a
//! U+FDD2 the model wrote itself (deleted from every value). Ids outside the vocabulary are
//! reported when the sample is prepared.
//!
//! The sample here is one whose generation was given as ids and decoded for a reference that
//! defuses ([`crate::model::decoded_sample`]): its text carries the decoder's markers.

use std::ops::Range;

use crate::explain::defused_spellings;
use crate::model::Model;
use crate::sample::Sample;
use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::parser::MARKER;
use rtbench_engine::template::Template;
use rtbench_engine::value::Value;

/// A control-token spelling the decoder defused: where it is in the document (prefix +
/// generation) and its text without the markers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Defused {
    /// Where the spelling is in the document (prefix + generation), in bytes.
    pub span: Range<usize>,
    /// The control token's spelling, without the markers.
    pub spelling: String,
    /// The ids that wrote it (ordinary tokens), when the sample gives ids.
    pub ids: Vec<u32>,
}

/// The defused spellings of a decoded sample's generation, with the ids that wrote each.
pub fn defused(sample: &Sample, model: Option<&Model>) -> Vec<Defused> {
    let prefix_len = sample.prefix.as_ref().map_or(0, String::len);
    let document = format!(
        "{}{}",
        sample.prefix.as_deref().unwrap_or(""),
        sample.generation
    );
    let pieces = id_pieces(sample, model);
    defused_spellings(&document, prefix_len)
        .into_iter()
        .map(|(span, spelling)| {
            // The plain-text range of the spelling: the generation without markers.
            let plain = |at: usize| {
                at - prefix_len
                    - document[prefix_len..at].matches(MARKER).count() * MARKER.len_utf8()
            };
            let (from, to) = (plain(span.start), plain(span.end));
            let ids = pieces
                .iter()
                .filter(|(r, _)| r.start < to && from < r.end)
                .map(|&(_, id)| id)
                .collect();
            Defused {
                span,
                spelling,
                ids,
            }
        })
        .collect()
}

/// The plain text each generation id released (byte ranges of the decoded generation, as an
/// incremental detokenizer releases it), for naming the ids of a spelling.
fn id_pieces(sample: &Sample, model: Option<&Model>) -> Vec<(Range<usize>, u32)> {
    let (Some(ids), Some(tokenizer)) = (
        sample.model.generation_ids.as_deref(),
        model.and_then(Model::tokenizer),
    ) else {
        return Vec::new();
    };
    let Ok(deltas) = tokenizer.stream_deltas(ids) else {
        return Vec::new();
    };
    let mut at = 0;
    deltas
        .iter()
        .zip(ids)
        .map(|(d, &id)| {
            let r = at..at + d.len();
            at = r.end;
            (r, id)
        })
        .collect()
}

/// The delimiters of the template whose text holds `spelling`, as `the open delimiter of
/// 'field'`.
fn delimiters_with(template: &Template, spelling: &str) -> Vec<String> {
    let mut out = Vec::new();
    for f in template.fields() {
        for (which, d) in [("open", &f.open), ("close", &f.close)] {
            let holds = match d {
                Some(Delimiter::Literal(l)) => l.literals.iter().any(|a| a.contains(spelling)),
                Some(Delimiter::Pattern(p)) => p.source().contains(spelling),
                None => false,
            };
            if holds {
                out.push(format!("the {which} delimiter of '{}'", f.name));
            }
        }
    }
    out
}

/// A warning about a decoded sample, located in its document (prefix + generation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// What the warning says, as shown to the user.
    pub message: String,
    /// The text it is about, in bytes of the document.
    pub span: Range<usize>,
}

/// Warnings for a decoded sample (see the module documentation).
pub fn warnings(template: &Template, sample: &Sample, model: Option<&Model>) -> Vec<Warning> {
    let mut out = Vec::new();
    let warn = |message: String, span: Range<usize>| Warning { message, span };
    for d in defused(sample, model) {
        let delimiters = delimiters_with(template, &d.spelling);
        if delimiters.is_empty() {
            continue;
        }
        let ids: Vec<String> = d.ids.iter().map(u32::to_string).collect();
        out.push(warn(
            format!(
                "parsed from text, this {} would be {}; generated as ordinary tokens{} it is \
                 text (5.25 defuses control-token spellings made of ordinary tokens)",
                Value::from(d.spelling.as_str()).py_repr(),
                delimiters.join(" and "),
                if ids.is_empty() {
                    String::new()
                } else {
                    format!(" (ids {})", ids.join(", "))
                }
            ),
            d.span,
        ));
    }
    let prefix = sample.prefix.as_deref().unwrap_or("");
    if let Some((spelling, span)) = split_spelling(prefix, &sample.generation, model) {
        out.push(warn(
            format!(
                "the prompt ends with {} and the generation goes on with {}: the reference \
                 decodes the two apart and does not defuse the {} they spell together, so it \
                 acts as a delimiter here",
                Value::from(&prefix[span.start..]).py_repr(),
                Value::from(&sample.generation[..span.end - prefix.len()]).py_repr(),
                Value::from(spelling.as_str()).py_repr()
            ),
            span,
        ));
    }
    if let Some(at) = own_marker(sample, model) {
        let at = prefix.len() + at;
        out.push(warn(
            "the model wrote U+FDD2 here: parsing ids, 5.25 deletes it from every value (it is \
             the character it defuses control-token spellings with)"
                .into(),
            at..at + MARKER.len_utf8(),
        ));
    }
    out
}

/// A control-token spelling split between the end of the prompt and the start of the
/// generation: its text and its span across the two.
fn split_spelling(
    prefix: &str,
    generation: &str,
    model: Option<&Model>,
) -> Option<(String, Range<usize>)> {
    let control = model?.control_tokens().ok()?;
    control.spellings().iter().find_map(|s| {
        (1..s.len())
            .filter(|&k| s.is_char_boundary(k))
            .find_map(|k| {
                (prefix.ends_with(&s[..k]) && generation.starts_with(&s[k..]))
                    .then(|| (s.clone(), prefix.len() - k..prefix.len() + s.len() - k))
            })
    })
}

/// Where (in the decoded generation) the model wrote U+FDD2 itself, if it did: found in the
/// plain decoding of the ids, then in the decoded text, whose extra markers are the
/// decoder's.
fn own_marker(sample: &Sample, model: Option<&Model>) -> Option<usize> {
    let ids = sample.model.generation_ids.as_deref()?;
    let plain = model?.tokenizer()?.decode_lenient(ids).ok()?;
    let target = plain.find(MARKER)?;
    let marked = &sample.generation;
    let (mut i, mut j) = (0, 0);
    while i < marked.len() && j <= target {
        let (a, b) = (marked[i..].chars().next()?, plain[j..].chars().next()?);
        if a == b {
            if j == target {
                return Some(i);
            }
            j += b.len_utf8();
        }
        i += a.len_utf8();
    }
    None
}
