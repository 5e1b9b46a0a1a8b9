//! What happened to one record: parsed, or the reference's error; whether it matches its
//! expected message; what each field lost without an error; whether chunking changes it. The
//! [`Group`] of an outcome is its cause, so that a viewer can list the records cause by cause.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::reader::Entry;
use super::record::{FieldNames, Location};
use crate::chunking::{CheckPlan, Generation, stable};
use crate::model::{Model, audit_sample, prepare, token_input};
use crate::sample::Sample;
use crate::testing::{Verdict, verdict_of};
use rtbench_engine::audit::LossKind;
use rtbench_engine::parser::ParseError;
use rtbench_engine::template::Template;
use rtbench_engine::value::Dict;

/// What a record is parsed with: the template, the model files of its folder (opened the first
/// time a record needs them: most corpora have neither conversations nor token ids), and the
/// prefix of records that give none.
pub struct Context {
    /// The response template every record is parsed with.
    pub template: Template,
    /// The folder of the template: its chat template and tokenizer.
    pub model_dir: std::path::PathBuf,
    model: OnceLock<Model>,
    /// The prefix of a record without a prefix or messages (`None`: such a record is an input
    /// error, as a missing prefix is for `rtbench parse`).
    pub default_prefix: Option<String>,
    /// The keys records are read from.
    pub names: FieldNames,
}

impl Context {
    /// A context for `template` whose model files are in `model_dir`, with the default field
    /// names; the model files are opened the first time a record needs them.
    pub fn new(
        template: Template,
        model_dir: std::path::PathBuf,
        default_prefix: Option<String>,
    ) -> Context {
        Context {
            template,
            model_dir,
            model: OnceLock::new(),
            default_prefix,
            names: FieldNames::default(),
        }
    }

    fn model(&self) -> &Model {
        self.model.get_or_init(|| Model::open(&self.model_dir))
    }
}

/// How one field fared in one record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldMarks {
    /// The field has a value in the message.
    pub matched: bool,
    /// A region of the field opened, but its value was empty and the message has none.
    pub empty: bool,
    /// A later region replaced the value (also by an empty one).
    pub overwritten: bool,
    /// A region of the field never closed and took the rest of the generation.
    pub truncated: bool,
    /// The parse error is in this field.
    pub error: bool,
}

/// The result of one record.
#[derive(Clone, Debug)]
pub enum Status {
    /// The line is not a record (bad JSON, no generation, ...), or its conversation or token
    /// ids could not be turned into text.
    Input(String),
    /// Parsed: the message.
    Parsed(Dict),
    /// The reference's parse error.
    Error(ParseError),
}

/// Everything the report needs about one record, and what a viewer shows of it.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Position in the corpus (0-based, over every input).
    pub index: u64,
    /// Where the record was read from (file and line, or sample file).
    pub location: Location,
    /// The record's id, when it has one.
    pub id: Option<String>,
    /// Whether the record parsed, failed to parse, or could not be read as a record.
    pub status: Status,
    /// Per template field, in the template's order (empty for input errors).
    pub fields: Vec<FieldMarks>,
    /// The differences from the record's expected message (`None`: it has none, or it
    /// agrees).
    pub differs: Option<Vec<String>>,
    /// Whether the record had an expected message to compare with.
    pub checked: bool,
    /// With a chunking check: whether every chunking gives the one-shot result.
    pub chunk_stable: Option<bool>,
    /// Due a chunking check but too long for it (over a mebibyte): not checked.
    pub chunk_skipped: bool,
    /// Time to prepare, parse and audit the record (not the chunking check).
    pub elapsed: Duration,
    /// The record's sample with its text (prefix rendered, ids decoded), for writing failures.
    pub sample: Option<Sample>,
}

/// The cause a record is grouped under: records with the same group failed (or passed) the
/// same way.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// Not a record, or its model inputs could not be made into text.
    Input(String),
    /// A parse error of this kind in this field.
    Error {
        /// The error's kind (see [`error_kind`]).
        kind: String,
        /// The field the error is in; `None` when it is in none.
        field: Option<String>,
    },
    /// Parsed, but not as expected: the first differing path.
    Differs(String),
    /// Parsed, with a silent loss in this field (`overwritten`, `empty`, `truncated`).
    Loss {
        /// What was lost: `overwritten`, `empty` or `truncated`.
        kind: &'static str,
        /// The field whose value was lost.
        field: String,
    },
    /// Parsed, nothing to say.
    Clean,
}

impl std::fmt::Display for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Group::Input(k) => write!(f, "input: {k}"),
            Group::Error {
                kind,
                field: Some(field),
            } => write!(f, "error in '{field}': {kind}"),
            Group::Error { kind, field: None } => write!(f, "error: {kind}"),
            Group::Differs(path) => write!(f, "differs from expected at {path}"),
            Group::Loss { kind, field } => write!(f, "{kind} '{field}'"),
            Group::Clean => f.write_str("parsed"),
        }
    }
}

impl Outcome {
    /// Whether the record fails: not a record, an error it did not expect, or a message other
    /// than the expected one.
    pub fn is_failure(&self) -> bool {
        match &self.status {
            Status::Input(_) => true,
            Status::Error(_) => self.differs.is_some() || !self.checked,
            Status::Parsed(_) => self.differs.is_some(),
        }
    }

    /// The record's name in the report: its id, else where it is.
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) => format!("{id} ({})", self.location),
            None => self.location.to_string(),
        }
    }

    /// The cause of this outcome (the first that applies: input, error, difference, loss).
    pub fn group(&self, template: &Template) -> Group {
        match &self.status {
            Status::Input(m) => return Group::Input(error_kind(m)),
            Status::Error(e) => {
                return Group::Error {
                    kind: error_kind(&e.message),
                    field: e.field.clone(),
                };
            }
            Status::Parsed(_) => {}
        }
        if let Some(d) = &self.differs {
            let first = d.first().map_or("", String::as_str);
            let path = first.split(':').next().unwrap_or(first).to_string();
            return Group::Differs(path);
        }
        for (i, m) in self.fields.iter().enumerate() {
            let kind = if m.overwritten {
                "overwritten"
            } else if m.truncated {
                "truncated"
            } else if m.empty {
                "empty"
            } else {
                continue;
            };
            let field = template
                .fields()
                .get(i)
                .map_or_else(String::new, |f| f.name.clone());
            return Group::Loss { kind, field };
        }
        Group::Clean
    }
}

/// The kind of an error message: its first line with quoted text and numbers blanked, so that
/// errors that differ only in the text they quote fall together.
pub fn error_kind(message: &str) -> String {
    let first = message.lines().next().unwrap_or("");
    let mut out = String::new();
    let mut chars = first.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                // Skip to the matching quote; an unmatched quote keeps the rest out.
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
                out.push_str("'…'");
            }
            d if d.is_ascii_digit() => {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
                out.push('N');
            }
            _ => out.push(c),
        }
        if out.chars().count() >= 100 {
            out.push('…');
            break;
        }
    }
    out.trim_end_matches(['.', ':', ' ']).to_string()
}

/// The longest generation (bytes) the corpus streams through the chunking check: the check
/// streams a record dozens of times, some of them a character per feed, which for a record of
/// tens of megabytes is minutes and gigabytes for one record of a sample meant to be quick.
/// Longer records are counted as not checked; `rtbench chunks` checks one on its own.
pub(crate) const CHUNK_CHECK_MAX: usize = 1 << 20;

/// Parses one entry. `chunk_check` also streams it through the chunking check's chunkings
/// (not past a mebibyte of generation).
pub fn evaluate(ctx: &Context, index: u64, entry: Entry, chunk_check: bool) -> Outcome {
    let start = Instant::now();
    let location = entry.location.clone();
    let record = entry.record(&ctx.names);
    let mut out = Outcome {
        index,
        location,
        id: None,
        status: Status::Input(String::new()),
        fields: Vec::new(),
        differs: None,
        checked: false,
        chunk_stable: None,
        chunk_skipped: false,
        elapsed: Duration::ZERO,
        sample: None,
    };
    let record = match record {
        Ok(r) => r,
        Err(e) => {
            out.status = Status::Input(e.message);
            return out;
        }
    };
    out.id = record.id;
    let mut sample = record.sample;
    if sample.model.is_needed() {
        match prepare(&sample, Some(ctx.model())) {
            Ok(s) => sample = s,
            Err(e) => {
                out.status = Status::Input(e.to_string());
                out.sample = Some(sample);
                return out;
            }
        }
    }
    if sample.prefix.is_none() {
        match &ctx.default_prefix {
            Some(p) => sample.prefix = Some(p.clone()),
            None => {
                out.status = Status::Input(
                    "no prefix (give the prompt, the messages, or a default with --prefix; --prefix '' opts out)"
                        .into(),
                );
                out.sample = Some(sample);
                return out;
            }
        }
    }
    let template = &ctx.template;
    // A record of token ids is parsed as the reference parses ids (5.25: defused).
    let a = audit_sample(template, &sample, Some(ctx.model()));
    let mut fields = vec![FieldMarks::default(); template.fields().len()];
    for loss in &a.losses {
        let Some(f) = loss.field.and_then(|f| fields.get_mut(f)) else {
            continue;
        };
        match loss.kind {
            LossKind::Overwritten | LossKind::EmptyReplaced => f.overwritten = true,
            LossKind::Unclosed if !sample.truncated => f.truncated = true,
            _ => {}
        }
    }
    match &a.result {
        Ok(message) => {
            for (i, field) in template.fields().iter().enumerate() {
                fields[i].matched = message.contains_key(&field.name);
            }
            for r in &a.regions {
                if let Some(f) = fields.get_mut(r.field)
                    && !f.matched
                {
                    f.empty = true;
                }
            }
        }
        Err(e) => {
            if let Some(i) = e
                .field
                .as_ref()
                .and_then(|n| template.fields().iter().position(|f| &f.name == n))
            {
                fields[i].error = true;
            }
        }
    }
    out.fields = fields;
    out.checked = sample.expected.is_some();
    // Judged where the result is, not copied.
    let error_text = a.result.as_ref().err().map(|e| e.text());
    let judged = match (&a.result, &error_text) {
        (Ok(m), _) => Ok(m),
        (Err(_), Some(text)) => Err(text.as_str()),
        (Err(e), None) => Err(e.message.as_str()),
    };
    if let Verdict::Fail(lines) = verdict_of(&sample, judged) {
        out.differs = Some(lines);
    }
    out.status = match a.result {
        Ok(m) => Status::Parsed(m),
        Err(e) => Status::Error(e),
    };
    out.elapsed = start.elapsed();
    if chunk_check && sample.generation.len() > CHUNK_CHECK_MAX {
        out.chunk_skipped = true;
    } else if chunk_check {
        let mut generation = Generation::of_sample(template.clone(), &sample);
        generation.ids = token_input(&sample, ctx.model());
        out.chunk_stable = Some(stable(&generation, &CheckPlan::default()));
    }
    // Kept to be written as a `.sample` file: only failures are (a long record's text would
    // otherwise travel to the reporting thread and be freed there, one record at a time).
    if out.is_failure() {
        out.sample = Some(sample);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::error_kind;

    #[test]
    fn errors_that_differ_only_in_what_they_quote_have_one_kind() {
        let a = error_kind("json parser could not parse region as JSON.\nContent: '{\"a'");
        assert_eq!(a, "json parser could not parse region as JSON");
        assert_eq!(
            error_kind("Field 'x': expected 12 at 'abc'"),
            error_kind("Field 'y': expected 7 at \"d\"")
        );
    }
}
