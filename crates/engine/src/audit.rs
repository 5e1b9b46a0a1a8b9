//! Silent losses: what a parse lost or changed without an error. The reference accepts all of
//! these without a word (its results are right by its own rules), so an author only learns of
//! them by reading the message closely; the audit reads the region model and says so.
//!
//! - [`LossKind::Overwritten`]: a later region of a non-repeating field replaced a value.
//! - [`LossKind::EmptyReplaced`]: an empty or whitespace-only region replaced a value, and the
//!   empty value is then dropped from the message (the answer disappears).
//! - [`LossKind::Discarded`]: text went to no field (the null sink).
//! - [`LossKind::Unclosed`]: a region ran to the end of the stream because its close never came.
//! - [`LossKind::Coerced`]: tool coercion changed a value in a way its text does not show.
//! - [`LossKind::Unused`]: a transform left out a capture, or the region's text.
//!
//! ```
//! use rtbench_engine::Template;
//! use rtbench_engine::audit::{LossKind, audit};
//!
//! let template = Template::from_json_str(r#"{
//!   "start_anchor": "<|im_start|>assistant\n",
//!   "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "content": {"close": "<|im_end|>"}}
//! }"#)?;
//! // The newline after the end-of-turn token opens the implicit field again, empty.
//! let a = audit(&template, "<|im_start|>assistant\n", "<think>Hm.</think>Hi!<|im_end|>\n", None);
//! assert!(a.result.as_ref().is_ok_and(|m| !m.contains_key("content")));
//! assert_eq!(a.losses[0].kind, LossKind::EmptyReplaced);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::ops::Range;

use crate::event::{Event, EventSink, Mark, MarkKind, Marks};
use crate::parser::{Events, ParseError, Parser};
use crate::py::{DumpOptions, json_dumps, json_loads};
use crate::region::{Ending, Region, RegionBuilder, Regions};
use crate::template::Template;
use crate::transform::Transform;
use crate::value::{Dict, Value};

/// What was lost or changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// A later region of the same non-repeating field replaced this region's value.
    Overwritten,
    /// An empty or whitespace-only region replaced a value (and, being empty, is dropped from
    /// the message, so the field disappears).
    EmptyReplaced,
    /// Text that went to no field.
    Discarded,
    /// A region whose close never came: it took everything to the end of the stream.
    Unclosed,
    /// Tool coercion changed a value beyond what its text says (`"1e3"` became `1000`).
    Coerced,
    /// A transform left out a capture or the region's text.
    Unused,
}

impl LossKind {
    /// A short name for the kind (`overwritten`, `discarded`, ...), for listings and filters.
    pub fn name(self) -> &'static str {
        match self {
            LossKind::Overwritten => "overwritten",
            LossKind::EmptyReplaced => "empty-replaced",
            LossKind::Discarded => "discarded",
            LossKind::Unclosed => "unclosed",
            LossKind::Coerced => "coerced",
            LossKind::Unused => "unused",
        }
    }
}

/// One silent loss, located in the document (prefix + generation).
#[derive(Clone, Debug, PartialEq)]
pub struct Loss {
    /// What happened.
    pub kind: LossKind,
    /// The field concerned (for [`LossKind::Discarded`]: none).
    pub field: Option<usize>,
    /// The region concerned, as an index into the regions the audit was given.
    pub region: Option<usize>,
    /// Where it is: the lost text, the empty region, the unclosed open delimiter.
    pub span: Range<usize>,
    /// What happened, in a sentence that names the field and quotes the text.
    pub message: String,
    /// What to do about it.
    pub help: String,
}

/// Discarded text with fewer non-whitespace characters than this (outside special tokens such
/// as `<|end|>`) is left unmentioned: stray punctuation between structural tokens is common.
pub const DISCARD_THRESHOLD: usize = 3;

/// A traced parse of a whole text with its regions and losses.
#[derive(Clone, Debug)]
pub struct Audit {
    /// The message, or the error, exactly as [`crate::parse_response`] gives them.
    pub result: Result<Dict, ParseError>,
    /// The traced events up to the end, or up to the error, as their kinds and spans (their
    /// texts are the document's text at their spans; a close's value and detail are in
    /// [`Audit::regions`], one copy of a long region's value, not two). A region's
    /// `open_event` and `close_event` index this list.
    pub marks: Marks,
    /// The regions of the events, held compactly (an ended region whose values are all in
    /// the message takes 48 bytes).
    pub regions: Regions,
    /// Where the start anchor cut the prefix (a document offset).
    pub origin: usize,
    /// The text a streaming client would still be waiting on after the whole generation was
    /// fed (held back because a delimiter might start there), before the end of the stream.
    pub held: Range<usize>,
    /// The losses, in document order.
    pub losses: Vec<Loss>,
    /// The document: the prefix, the generation and the tail. The parser's own copy of the
    /// text, taken back once the parse is done, so that the text is held once while the parse
    /// and its records are.
    pub document: String,
}

impl Audit {
    /// Copies into each region the value it holds in the message (see [`Region::value_in`]),
    /// for a caller that keeps the regions without the message.
    pub fn copy_values_to_regions(&mut self, template: &Template) {
        let Ok(message) = &self.result else {
            return;
        };
        let regions = std::mem::take(&mut self.regions);
        self.regions = regions
            .into_iter()
            .map(|mut g| {
                let name = template.fields()[g.field].name.as_str();
                if g.value_item.is_some() {
                    g.set_value(g.value_in(Some(message), name).cloned());
                    g.value_item = None;
                }
                g
            })
            .collect();
    }
}

/// Parses `generation` after `prefix` in one go, like [`crate::parse_response`], and audits
/// the result for silent losses.
pub fn audit(template: &Template, prefix: &str, generation: &str, tools: Option<&Value>) -> Audit {
    audit_fed(
        template,
        prefix,
        Cow::Borrowed(generation),
        "",
        tools,
        false,
    )
}

/// [`audit`] of a generation the caller owns: the parser takes it over instead of copying it
/// (so that a caller can let go of where it read it before the parse), and it becomes
/// [`Audit::document`]. Made with room for the prefix (`prefix.len()` bytes more than the
/// generation and one), the document is made in place.
pub fn audit_owned(
    template: &Template,
    prefix: &str,
    generation: String,
    tools: Option<&Value>,
) -> Audit {
    audit_fed(template, prefix, Cow::Owned(generation), "", tools, false)
}

/// [`audit`] of a generation of token ids, as the reference parses ids in one go: `fed` is the
/// text the token-id decoder released for the one feed of every id and `tail` what it released
/// when flushed at the end (added before the end-of-stream step, without a step of its own);
/// `token_ids` when the decoder defused control-token spellings (5.25), whose markers are then
/// stripped from chunks and values. Spans point into `prefix + fed + tail`.
pub fn audit_decoded(
    template: &Template,
    prefix: &str,
    fed: &str,
    tail: &str,
    tools: Option<&Value>,
    token_ids: bool,
) -> Audit {
    audit_fed(template, prefix, Cow::Borrowed(fed), tail, tools, token_ids)
}

/// The audit's fold of the parser's events: each event is taken into the region model as it
/// comes (its close value and detail moved into the region, so they are never held in a list
/// of events all at once) and kept as its [`Mark`].
struct Fold {
    marks: Marks,
    model: RegionBuilder,
}

impl EventSink for Fold {
    fn record(&mut self, mut event: Event) {
        self.model.take(self.marks.len(), &mut event);
        self.marks.push(Mark::of(&event));
    }
}

fn audit_fed(
    template: &Template,
    prefix: &str,
    generation: Cow<'_, str>,
    tail: &str,
    tools: Option<&Value>,
    token_ids: bool,
) -> Audit {
    let doc_len = prefix.len() + generation.len() + tail.len();
    let mut fold = Fold {
        marks: Marks::new(),
        model: RegionBuilder::new(doc_len),
    };
    let mut origin = prefix.len();
    let mut held = 0..0;
    let options = crate::parser::Options {
        events: Events::Spans,
        whole_text: true,
        token_ids,
        values_once: true,
        lists_in_events: false,
    };
    // What the message held when the parse failed: the values of a repeating field's regions,
    // which go back to their regions (there is no message to hold them).
    let mut partial = None;
    let mut document = String::new();
    let mut generation = Some(generation);
    let result = Parser::with_options(template, Some(prefix), tools, options).and_then(|mut p| {
        origin = p.origin();
        for e in p.initial_events() {
            fold.record(e.clone());
        }
        // Events before an error are folded in too.
        let fed = match generation.take().expect("fed once") {
            // Room for the whole document (and the byte a delimiter's growth probe appends),
            // so that the text is copied into the parser once and the prefix put before it in
            // place.
            Cow::Borrowed(text) => {
                p.reserve(text.len() + tail.len() + origin + 1);
                p.feed_into(text, &mut fold)
            }
            Cow::Owned(text) => p.feed_string_into(text, &mut fold),
        };
        held = p.held();
        let finalized = fed.is_ok();
        let result = fed.and_then(|()| p.finalize_with(&mut fold, tail));
        if result.is_err() {
            partial = Some(p.take_output());
        }
        document = p.take_text();
        document.insert_str(0, &prefix[..origin]);
        if !finalized {
            document.push_str(tail);
        }
        result
    });
    if let Some(generation) = generation {
        // The prefix failed: the parser never had the text.
        document = format!("{prefix}{generation}{tail}");
    }
    debug_assert_eq!(document.len(), doc_len);
    let Fold { marks, mut model } = fold;
    if let Err(e) = &result {
        model.fail(template, e);
    }
    let mut regions = model.into_regions();
    if let Some(mut partial) = partial {
        regions = regions
            .into_iter()
            .map(|mut g| {
                if let Some(i) = g.value_item.take() {
                    let name = template.fields()[g.field].name.as_str();
                    if let Some(Value::List(items)) = partial.get_mut(name) {
                        g.set_value(items.get_mut(i).map(|v| std::mem::replace(v, Value::Null)));
                    }
                }
                g
            })
            .collect();
    }
    let losses = match &result {
        Ok(message) => losses(
            template,
            &document,
            prefix.len(),
            &marks,
            &regions,
            Some(message),
        ),
        // A failed parse has its error; its losses would be about a message that does not exist.
        Err(_) => Vec::new(),
    };
    Audit {
        result,
        marks,
        regions,
        origin,
        held,
        losses,
        document,
    }
}

/// The silent losses of a finished, traced parse. `document` is prefix + generation and
/// `generation_start` its prefix length: text discarded in the prefix is the prompt's, not the
/// model's, and is not reported. `message` holds the values regions refer to (see
/// [`Region::value_in`]).
pub fn losses(
    template: &Template,
    document: &str,
    generation_start: usize,
    marks: &Marks,
    regions: &Regions,
    message: Option<&Dict>,
) -> Vec<Loss> {
    let mut out = Vec::new();
    replacements(template, document, generation_start, regions, &mut out);
    discarded(document, generation_start, marks, &mut out);
    for (i, g) in regions.iter().enumerate() {
        unclosed(template, document, i, &g, &mut out);
        unused(template, document, i, &g, &mut out);
        coerced(template, i, &g, message, &mut out);
    }
    out.sort_by_key(|l| (l.span.start, l.span.end));
    out
}

fn name(template: &Template, field: usize) -> &str {
    &template.fields()[field].name
}

/// Longest quoted text, in characters.
const QUOTE_CHARS: usize = 48;

/// `text` as a Python string literal, shortened around an ellipsis when long.
fn quote(text: &str) -> String {
    let n = text.chars().count();
    let short = if n <= QUOTE_CHARS {
        text.to_string()
    } else {
        let head: String = text.chars().take(QUOTE_CHARS / 2).collect();
        let tail: String = text.chars().skip(n - QUOTE_CHARS / 2).collect();
        format!("{head}…{tail}")
    };
    Value::from(short.as_str()).py_repr()
}

/// A value as the message shows it, shortened.
fn show(v: &Value) -> String {
    match v {
        Value::Str(s) => quote(s),
        other => {
            let r = other.py_repr();
            if r.chars().count() > QUOTE_CHARS {
                let head: String = r.chars().take(QUOTE_CHARS).collect();
                format!("{head}…")
            } else {
                r
            }
        }
    }
}

/// The help for keeping every region of a field.
fn keep_all(template: &Template, field: usize) -> String {
    let f = &template.fields()[field];
    if f.content.name() == "text" && f.transform.is_none() {
        format!(
            "to keep every region's text, give '{}' \"repeats\": true and \"join\": \"\" (join concatenates the regions' strings with its separator; without join the field becomes a list)",
            f.name
        )
    } else {
        format!(
            "to keep every region, give '{}' \"repeats\": true (the field becomes a list)",
            f.name
        )
    }
}

/// Non-repeating fields whose value a later region replaced.
fn replacements(
    template: &Template,
    document: &str,
    generation_start: usize,
    regions: &Regions,
    out: &mut Vec<Loss>,
) {
    let fields = template.fields();
    // The region holding each field's current value.
    let mut holder: Vec<Option<usize>> = vec![None; fields.len()];
    for (i, g) in regions.iter().enumerate() {
        let f = &fields[g.field];
        let Some(value) = g.value() else { continue };
        if f.repeats {
            continue;
        }
        let before = holder[g.field].replace(i);
        let Some(b) = before else { continue };
        let lost = regions.at(b);
        // Values of the prompt's own regions are the prompt's business.
        if lost.body.end <= generation_start && lost.open.end <= generation_start {
            continue;
        }
        let Some(old) = lost.value().filter(|v| !v.is_empty_value()) else {
            continue;
        };
        let field = name(template, g.field);
        if value.is_empty_value() {
            let text = &document[g.body.clone()];
            let what = if text.is_empty() {
                "an empty region".to_string()
            } else {
                format!("a whitespace-only region ({})", quote(text))
            };
            let at_end = g.body.end >= document.len() && g.ending == Some(Ending::EndOfStream);
            let help = if at_end && !text.is_empty() {
                format!(
                    "the generation ends with whitespace after '{field}' closed, and it opened '{field}' again; if the model does not write it, remove it from the sample (a sample file's trailing newlines are not text unless its header says so); {}",
                    keep_all(template, g.field)
                )
            } else {
                keep_all(template, g.field)
            };
            out.push(Loss {
                kind: LossKind::EmptyReplaced,
                field: Some(g.field),
                region: Some(i),
                span: if g.body.is_empty() {
                    g.open.clone()
                } else {
                    g.body.clone()
                },
                message: format!(
                    "{what} of '{field}' replaced its value {} and, being empty, is dropped: the message has no '{field}'",
                    show(old)
                ),
                help,
            });
        } else {
            out.push(Loss {
                kind: LossKind::Overwritten,
                field: Some(g.field),
                region: Some(b),
                span: if lost.body.is_empty() {
                    lost.open.clone()
                } else {
                    lost.body.clone()
                },
                message: format!(
                    "'{field}' is not repeating, so this value {} was overwritten by a later region: the message keeps {}",
                    show(old),
                    show(value)
                ),
                help: keep_all(template, g.field),
            });
        }
    }
}

/// Role names that chat formats write right after a special token (`<|start|>assistant`).
const ROLES: [&str; 6] = ["assistant", "user", "system", "tool", "model", "developer"];

/// The length of the special token at the start of `text`, if one is there: `<|...|>`,
/// DeepSeek's `<｜...｜>` (no whitespace inside), `<s>` or `</s>`.
fn special_token(text: &str) -> Option<usize> {
    for s in ["<s>", "</s>"] {
        if text.starts_with(s) {
            return Some(s.len());
        }
    }
    [("<|", "|>"), ("<｜", "｜>")]
        .iter()
        .find_map(|(open, close)| {
            let after = text.strip_prefix(open)?;
            let end = after.find(close)?;
            (!after[..end].contains(char::is_whitespace)).then_some(open.len() + end + close.len())
        })
}

/// `text` without its special tokens and the role names right after them: they are the chat
/// format's structure, not text the model meant for the reader.
fn without_special_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        match special_token(rest) {
            Some(n) => {
                rest = &rest[n..];
                if let Some(role) = ROLES.iter().find(|r| {
                    rest.strip_prefix(**r)
                        .is_some_and(|after| !after.starts_with(char::is_alphanumeric))
                }) {
                    rest = &rest[role.len()..];
                }
            }
            None => {
                let c = rest.chars().next().unwrap_or_default();
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// Stretches of generation text that went to no field.
fn discarded(document: &str, generation_start: usize, marks: &Marks, out: &mut Vec<Loss>) {
    let mut runs: Vec<Range<usize>> = Vec::new();
    for e in marks.iter() {
        if e.kind() == MarkKind::Discard {
            let span = e.span();
            let span = span.start.max(generation_start)..span.end.max(generation_start);
            if span.is_empty() {
                continue;
            }
            match runs.last_mut() {
                Some(last) if last.end == span.start => last.end = span.end,
                _ => runs.push(span),
            }
        }
    }
    for r in runs {
        let text = &document[r.clone()];
        let words = without_special_tokens(text);
        let visible = words.chars().filter(|c| !c.is_whitespace()).count();
        if visible < DISCARD_THRESHOLD {
            continue;
        }
        out.push(Loss {
            kind: LossKind::Discarded,
            field: None,
            region: None,
            span: r,
            message: format!(
                "{} went to no field and is not in the message (the template has no field that takes leftover text, and no region was open)",
                quote(text.trim())
            ),
            help: "add a field without an open delimiter to take leftover text (e.g. \"content\": {}), or an explicit field whose delimiters surround this text".into(),
        });
    }
}

/// A region with a close delimiter that ran to the end of the stream.
fn unclosed(template: &Template, document: &str, i: usize, g: &Region, out: &mut Vec<Loss>) {
    let f = &template.fields()[g.field];
    let Some(close) = &f.close else { return };
    if g.ending != Some(Ending::EndOfStream) {
        return;
    }
    let body = &document[g.body.clone()];
    if body.trim().is_empty() && g.open.is_empty() {
        // Whitespace after the last close reopened the implicit field: nothing was cut off.
        return;
    }
    let tail: String = {
        let n = body.chars().count();
        body.chars().skip(n.saturating_sub(24)).collect()
    };
    out.push(Loss {
        kind: LossKind::Unclosed,
        field: Some(g.field),
        region: Some(i),
        span: if g.open.is_empty() {
            g.body.start..g.body.start
        } else {
            g.open.clone()
        },
        message: format!(
            "this '{}' region never closed: its close {} never came, so it took everything to the end of the stream (ending {})",
            f.name,
            close.describe(),
            quote(&tail)
        ),
        help: "if the generation was cut off (a token limit or a stop string), this is truncation: mark the sample with `--- generation (truncated) ---`; otherwise the close delimiter does not match what the model writes (`rtbench explain` shows the closest text)".into(),
    });
}

/// Placeholder root names a transform uses.
fn roots(t: &Transform, out: &mut Vec<String>) {
    match t {
        Transform::Literal(_) => {}
        Transform::Placeholder { root, .. } => out.push(root.clone()),
        Transform::List(items) => items.iter().for_each(|t| roots(t, out)),
        Transform::Dict(entries) => entries.iter().for_each(|(_, t)| roots(t, out)),
    }
}

/// Captures (and the region's text) that the field's transform leaves out.
fn unused(template: &Template, document: &str, i: usize, g: &Region, out: &mut Vec<Loss>) {
    let f = &template.fields()[g.field];
    let Some(t) = f.transform.as_ref().filter(|_| g.has_value()) else {
        return;
    };
    let mut used = Vec::new();
    roots(t, &mut used);
    // With transform_each, an element's own keys are in scope and may use the text indirectly.
    if !f.transform_each
        && !used.iter().any(|r| r == "content")
        && !document[g.body.clone()].trim().is_empty()
    {
        out.push(Loss {
            kind: LossKind::Unused,
            field: Some(g.field),
            region: Some(i),
            span: g.body.clone(),
            message: format!(
                "the transform of '{}' does not use {{content}}, so this region's text {} is not in the message",
                f.name,
                quote(document[g.body.clone()].trim())
            ),
            help: "put \"{content}\" where the text belongs in the transform, or drop the text with a delimiter that consumes it".into(),
        });
    }
    for (c, (name, value)) in g.captures().iter().enumerate() {
        if used.iter().any(|r| r == name) || value.as_str().is_some_and(str::is_empty) {
            continue;
        }
        let span = g
            .capture_span(document, c)
            .unwrap_or_else(|| g.open.clone());
        out.push(Loss {
            kind: LossKind::Unused,
            field: Some(g.field),
            region: Some(i),
            span,
            message: format!(
                "the capture '{name}' = {} of '{}' is not used by its transform, so it is not in the message",
                show(value),
                f.name
            ),
            help: format!(
                "add \"{{{name}}}\" to the transform, or make the group non-capturing (?:...) if it is not wanted"
            ),
        });
    }
}

/// Whether a coerced value says no more and no less than the string it came from.
fn faithful(raw: &str, new: &Value) -> bool {
    match new {
        Value::Str(s) => s == raw,
        Value::List(_) | Value::Dict(_) => json_loads(raw).is_ok_and(|v| v.json_eq(new)),
        other => json_dumps(other, &DumpOptions::default()).is_ok_and(|t| t == raw),
    }
}

/// Strings tool coercion turned into values their text does not show, with their paths.
fn changes(
    before: &Value,
    after: &Value,
    path: &mut String,
    out: &mut Vec<(String, String, Value)>,
) {
    match (before, after) {
        (Value::Str(raw), new) if !faithful(raw, new) => {
            out.push((path.clone(), raw.clone(), new.clone()));
        }
        (Value::Dict(a), Value::Dict(b)) => {
            for (k, v) in a {
                if let Some(w) = b.get(k) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(k);
                    changes(v, w, path, out);
                    path.truncate(len);
                }
            }
        }
        (Value::List(a), Value::List(b)) => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                changes(v, w, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Tool coercion that changed a value beyond what its text says.
fn coerced(template: &Template, i: usize, g: &Region, message: Option<&Dict>, out: &mut Vec<Loss>) {
    let field = name(template, g.field);
    let (Some(value), Some(parsed)) = (g.value_in(message, field), g.parsed_in(message, field))
    else {
        return;
    };
    let before = g.transformed_in(message, field).unwrap_or(parsed);
    let mut found = Vec::new();
    changes(before, value, &mut String::new(), &mut found);
    for (path, raw, new) in found {
        out.push(Loss {
            kind: LossKind::Coerced,
            field: Some(g.field),
            region: Some(i),
            span: g.body.clone(),
            message: format!(
                "tool coercion changed {path} of '{}' from {} to {}: the tool schema's type made it so",
                name(template, g.field),
                quote(&raw),
                new.py_repr()
            ),
            help: "if the model meant the text, declare the parameter as a string in the tool schema".into(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls() -> Template {
        Template::from_json_str(
            r#"{"start_anchor": "<s>", "fields": {
                "content": {},
                "calls": {"open": "<c>", "close": "</c>", "content": "json", "repeats": true,
                          "transform": {"type": "function", "function": "{content}"}}}}"#,
        )
        .unwrap()
    }

    fn call(a: u32) -> String {
        format!("{{'type': 'function', 'function': {{'a': {a}}}}}")
    }

    #[test]
    fn the_document_is_the_parsers_text_with_the_prefix_before_it() {
        // A prefix ending at its anchor, one with text after it, none, one that fails (no
        // anchor is not a failure; a missing prefix is), a generation whose feed fails before
        // its tail, and one with a tail.
        let t = calls();
        let cases = [
            ("<s>", "hi<c>{\"a\": 1}</c>", ""),
            ("sys<s>pre ", "hi<c>{\"a\": 1}</c> after", ""),
            ("", "hi there", ""),
            ("no anchor", "text", ""),
            ("<s>", "<c>{bad</c>", "tail"),
            ("<s>", "<c>{\"a\": 1}</c>", " and the tail"),
        ];
        for (prefix, generation, tail) in cases {
            let a = audit_fed(&t, prefix, Cow::Borrowed(generation), tail, None, false);
            assert_eq!(
                a.document,
                format!("{prefix}{generation}{tail}"),
                "{prefix:?} {generation:?} {tail:?}"
            );
            if tail.is_empty() {
                // Given to the parser, with or without room for the prefix: the same audit.
                for room in [0, prefix.len() + 1] {
                    let mut owned = String::with_capacity(generation.len() + room);
                    owned.push_str(generation);
                    let b = audit_owned(&t, prefix, owned, None);
                    assert_eq!(b.document, a.document);
                    assert_eq!(b.result, a.result);
                    assert_eq!(b.losses, a.losses);
                    assert_eq!(b.regions, a.regions);
                }
            }
        }
        let failed = audit_fed(&t, "<s>", Cow::Borrowed("<c>{bad</c>"), "tail", None, false);
        assert!(failed.result.is_err());
    }

    #[test]
    fn a_repeating_fields_values_are_held_once_in_the_message() {
        let a = audit(&calls(), "<s>", r#"hi<c>{"a": 1}</c><c>{"a": 2}</c>"#, None);
        let message = a.result.as_ref().unwrap();
        let regions: Vec<_> = a.regions.iter().filter(|g| g.field == 1).collect();
        assert_eq!(regions.len(), 2);
        for (i, g) in regions.into_iter().enumerate() {
            // The value is the message's item, and the parsed content lies inside it.
            assert_eq!((g.value(), g.value_item), (None, Some(i)));
            assert!(g.own_parsed().is_none() && g.parsed_at.is_some());
            let value = g.value_in(Some(message), "calls").unwrap();
            assert_eq!(value.py_repr(), call(i as u32 + 1));
            let parsed = g.parsed_in(Some(message), "calls").unwrap();
            assert_eq!(parsed.py_repr(), format!("{{'a': {}}}", i + 1));
            assert!(
                g.transformed_in(Some(message), "calls")
                    .unwrap()
                    .identical(value)
            );
            // Without the message the region has none.
            assert_eq!(g.parsed(), None);
        }
        // A field set whole, not appended, keeps its value in its region.
        let content = a.regions.iter().find(|g| g.field == 0).unwrap();
        assert_eq!(content.value().unwrap().py_repr(), "'hi'");
        assert_eq!(content.value_item, None);
    }

    #[test]
    fn a_failed_parse_gives_the_values_back_to_their_regions() {
        let a = audit(&calls(), "<s>", r#"<c>{"a": 1}</c><c>{"a": </c>"#, None);
        assert!(a.result.is_err());
        let g = a.regions.at(0);
        assert_eq!(g.value_item, None);
        assert_eq!(g.value().unwrap().py_repr(), call(1));
        assert_eq!(g.parsed().unwrap().py_repr(), "{'a': 1}");
        assert_eq!(a.regions.at(1).ending, Some(Ending::Failed));
    }

    #[test]
    fn copied_values_make_each_region_whole() {
        let t = calls();
        let mut a = audit(&t, "<s>", r#"<c>{"a": 1}</c><c>{"a": 2}</c>"#, None);
        a.copy_values_to_regions(&t);
        for (i, g) in a.regions.iter().enumerate() {
            assert_eq!(g.value_item, None);
            assert_eq!(g.value().unwrap().py_repr(), call(i as u32 + 1));
            assert_eq!(g.parsed().unwrap().py_repr(), format!("{{'a': {}}}", i + 1));
        }
    }
}
