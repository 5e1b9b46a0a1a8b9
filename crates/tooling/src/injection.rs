//! The injection check: which of a template's delimiters a user or a tool can forge.
//!
//! A delimiter spelled by a control token (an added token the chat template writes) is safe
//! when generations are parsed from token ids (5.25): the same spelling written with ordinary
//! tokens, by the model echoing a user or by a tool result, is defused. Parsed from text (5.24,
//! or any pipeline that decodes first), every spelling counts. A delimiter that is ordinary text
//! is never protected. This module says which is which for a model folder, which user and tool
//! strings of the samples spell a delimiter, and where the model's named chat templates protect
//! different tokens (a prompt sanitized with one does not protect the tokens of another).

use std::collections::BTreeSet;

use crate::model::Model;
use crate::sample::Sample;
use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::template::Template;
use rtbench_engine::value::Value;
use rtbench_tokenize::ControlTokens;

/// How well a delimiter is protected when generations are parsed from token ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Protection {
    /// Every alternative is exactly a control token.
    ControlToken,
    /// Some text of it is a control token, some is not: only those tokens are protected.
    Partly(Vec<String>),
    /// A pattern that can match these control tokens (and other text, which is not protected).
    PatternOf(Vec<String>),
    /// Ordinary text: anyone who writes it makes it a delimiter, ids or not.
    Plain,
}

/// One delimiter of the template and its protection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DelimiterProtection {
    /// The field the delimiter belongs to (empty for the start anchor).
    pub field: String,
    /// `open`, `close` or `start anchor`.
    pub which: &'static str,
    /// The delimiter as the report shows it (its literals or its pattern, Python repr).
    pub shown: String,
    /// How well control tokens protect the delimiter from text that spells it.
    pub protection: Protection,
}

fn delimiters(template: &Template) -> Vec<(String, &'static str, &Delimiter)> {
    let mut out = vec![(String::new(), "start anchor", template.start_anchor())];
    for f in template.fields() {
        for (which, d) in [("open", &f.open), ("close", &f.close)] {
            if let Some(d) = d {
                out.push((f.name.clone(), which, d));
            }
        }
    }
    out
}

/// The protection of every delimiter of `template` by the model's control tokens.
pub fn protections(template: &Template, control: &ControlTokens) -> Vec<DelimiterProtection> {
    delimiters(template)
        .into_iter()
        .map(|(field, which, d)| {
            let (shown, protection) = match d {
                Delimiter::Literal(l) => {
                    let tokens: BTreeSet<String> = l
                        .literals
                        .iter()
                        .flat_map(|lit| control.find_iter(lit).map(|r| lit[r].to_string()))
                        .collect();
                    let whole = l
                        .literals
                        .iter()
                        .all(|lit| control.spellings().iter().any(|s| s == lit));
                    let protection = if whole {
                        Protection::ControlToken
                    } else if tokens.is_empty() {
                        Protection::Plain
                    } else {
                        Protection::Partly(tokens.into_iter().collect())
                    };
                    (d.describe(), protection)
                }
                Delimiter::Pattern(p) => {
                    let tokens: Vec<String> = control
                        .spellings()
                        .iter()
                        .filter(|s| d.find_all(s).is_ok_and(|m| m.iter().any(|r| !r.is_empty())))
                        .cloned()
                        .collect();
                    let protection = if tokens.is_empty() {
                        Protection::Plain
                    } else {
                        Protection::PatternOf(tokens)
                    };
                    (Value::from(p.source()).py_repr(), protection)
                }
            };
            DelimiterProtection {
                field,
                which,
                shown,
                protection,
            }
        })
        .collect()
}

impl DelimiterProtection {
    /// One line for the report.
    pub fn line(&self) -> String {
        let whose = if self.field.is_empty() {
            "the start anchor".to_string()
        } else {
            format!("'{}' {}", self.field, self.which)
        };
        let said = match &self.protection {
            Protection::ControlToken => {
                "a control token: parsed from ids (5.25), a spelling written with ordinary tokens is defused".to_string()
            }
            Protection::Partly(t) => format!(
                "partly control tokens ({}): the rest is text anyone can write",
                t.join(", ")
            ),
            Protection::PatternOf(t) => format!(
                "a pattern that matches control tokens ({}) and text: what it matches as text is not protected",
                t.join(", ")
            ),
            Protection::Plain => {
                "ordinary text: a user or tool string the model echoes becomes this delimiter, ids or not".to_string()
            }
        };
        format!("  {whose} {}: {said}", self.shown)
    }
}

/// A user or tool string of a sample that spells a delimiter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spelled {
    /// Where in the sample's conversation: `messages[1].content`, `tools[0]...`.
    pub path: String,
    /// The field whose delimiter it spells (empty for the start anchor).
    pub field: String,
    /// Which delimiter of the field: `open`, `close` or `start anchor`.
    pub which: &'static str,
    /// The text of the string that spells the delimiter.
    pub text: String,
}

/// The strings of a sample's conversation (its messages and tools: what users and tools write,
/// not the template's keyword arguments) that spell a delimiter of `template`: what an echo by
/// the model would turn into that delimiter when parsed from text.
pub fn spelled_in_sample(template: &Template, sample: &Sample) -> Vec<Spelled> {
    let mut strings = Vec::new();
    for (root, v) in [
        ("messages", sample.model.messages.as_ref()),
        ("tools", sample.tools.as_ref()),
    ] {
        if let Some(v) = v {
            collect(root.to_string(), v, &mut strings);
        }
    }
    let mut out = Vec::new();
    for (path, s) in strings {
        for (field, which, d) in delimiters(template) {
            if field.is_empty() {
                continue;
            }
            let hits: Vec<String> = match d {
                Delimiter::Literal(l) => l
                    .literals
                    .iter()
                    .filter(|lit| s.contains(lit.as_str()))
                    .cloned()
                    .collect(),
                Delimiter::Pattern(_) => d
                    .find_all(&s)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|r| !r.is_empty())
                    .map(|r| s[r].to_string())
                    .collect(),
            };
            for text in hits.into_iter().take(1) {
                out.push(Spelled {
                    path: path.clone(),
                    field: field.clone(),
                    which,
                    text,
                });
            }
        }
    }
    out
}

fn collect(path: String, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Str(s) => out.push((path, s.clone())),
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(format!("{path}[{i}]"), item, out);
            }
        }
        Value::Dict(d) => {
            for (k, item) in d {
                collect(format!("{path}.{k}"), item, out);
            }
        }
        _ => {}
    }
}

/// Named chat templates that protect different control tokens: `(template, tokens it does not
/// protect that another one does)`. A prompt sanitized with one of them leaves those tokens of
/// the user's strings as real tokens, and a generation parsed from ids treats them as control
/// tokens only if some template writes them.
pub fn template_gaps(model: &Model) -> Vec<(String, Vec<String>)> {
    let (Ok(Some(chat)), Some(tokenizer)) = (&model.chat, model.tokenizer()) else {
        return Vec::new();
    };
    // A config that lists its control tokens protects the same ones whatever the template.
    if model.chat_control_tokens().ok().flatten().is_some() {
        return Vec::new();
    }
    let names = chat.names().unwrap_or_default();
    if names.len() < 2 {
        return Vec::new();
    }
    let added = tokenizer.added_tokens();
    let of = |literal: &str| -> BTreeSet<String> {
        added
            .iter()
            .filter(|t| {
                !t.special
                    && !t.content.chars().all(pyunicode::isspace)
                    && literal.contains(&t.content)
            })
            .map(|t| t.content.clone())
            .collect()
    };
    let per: Vec<(String, BTreeSet<String>)> = chat
        .all()
        .iter()
        .zip(names)
        .map(|(t, n)| (n.to_string(), of(&t.literal_text())))
        .collect();
    let all: BTreeSet<String> = per.iter().flat_map(|(_, s)| s.iter().cloned()).collect();
    per.into_iter()
        .filter_map(|(n, s)| {
            let missing: Vec<String> = all.difference(&s).cloned().collect();
            (!missing.is_empty()).then_some((n, missing))
        })
        .collect()
}
