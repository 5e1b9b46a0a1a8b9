//! Does a sample's result depend on the reference version? The generation is parsed under every
//! supported version, one-shot (`parse_response`) and streamed (the whole text in one feed, for
//! the events), and the results are compared: the message (or the error), then the events.
//! Shared by the workbench's sample marks, `rtbench lint --reference all` and
//! `rtbench test --reference all`.

use std::ops::Range;

use crate::chunking::TokenInput;
use crate::diff::{diff, same};
use crate::findings::in_file;
use crate::model::{Model, token_input};
use crate::sample::Sample;
use rtbench_engine::Reference;
use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::parser::{Events, Options, Parser, parse_response};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};
use rtbench_tokenize::ids::{IdParser, parse_ids};

/// One event of a stream: the reference's dict (`{"type": "region_close", "field": ...}`) and
/// where its text lies in the document (prefix + generation).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamEvent {
    /// The event as the reference's dict.
    pub value: Value,
    /// Where the event's text lies in the document, in bytes.
    pub span: Range<usize>,
}

/// What one version makes of a generation.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The version of the reference runtime the outcome is for.
    pub reference: Reference,
    /// The one-shot parse: the message, or the error's text.
    pub message: Result<Dict, String>,
    /// The streamed parse's events, up to its error if it fails.
    pub events: Vec<StreamEvent>,
    /// How the stream ended: its message, or the error that stopped it.
    pub streamed: Result<Dict, String>,
}

/// Every supported version's outcome for one generation, oldest first.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// One outcome per supported version, oldest first.
    pub outcomes: Vec<Outcome>,
}

/// How the result under `other` differs from the one under `base` (the version in force).
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The version in force, compared against.
    pub base: Reference,
    /// The version whose result differs.
    pub other: Reference,
    /// What differs, a line each: the structural differences of the message (or of the error),
    /// else the first event that differs and how the stream ended.
    pub lines: Vec<String>,
    /// Where the first differing event lies in the document (prefix + generation), when the
    /// events differ.
    pub at: Option<Range<usize>>,
}

/// The version a workbench compares with `base` and switches to: the next newer supported
/// version, else the oldest (with two versions, the other one).
pub fn other(base: Reference) -> Reference {
    Reference::ALL
        .into_iter()
        .find(|&r| r > base)
        .unwrap_or(Reference::ALL[0])
}

/// Whether `sample` has the same outcome under `base` and `other`, found without holding
/// either outcome: each version's one-shot result, its stream's events (up to an error, if
/// any) and how its stream ended are hashed as they are made (each value's structure, keys,
/// strings and other scalars' `repr()`, each span, each error's text), one version after the
/// other. `true` only when both versions hash alike, which means the same values, spans and
/// errors: then [`compare_sample`] finds no divergence. `false` says they may differ, and [`compare_sample`] says how.
///
/// [`compare_sample`] keeps every event of both streams and four messages at once, some 60
/// bytes per byte of a sample of small tool calls; this holds one parse at a time. A
/// generation of token ids is left to [`compare_sample`] (`false`).
pub fn agree(
    template: &Template,
    sample: &Sample,
    model: Option<&Model>,
    base: Reference,
    other: Reference,
) -> bool {
    if model.and_then(|m| token_input(sample, m)).is_some() {
        return false;
    }
    agree_on(
        template,
        sample.prefix.as_deref().unwrap_or(""),
        &sample.generation,
        sample.tools.as_ref(),
        [base, other],
    )
}

/// [`agree`] for a generation of text after `prefix`, under the two `versions`.
pub fn agree_on(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
    versions: [Reference; 2],
) -> bool {
    let print = |r: Reference| {
        fingerprint(
            &template.clone().with_reference(r),
            prefix,
            generation,
            tools,
        )
    };
    print(versions[0]) == print(versions[1])
}

/// What [`agree`] compares of one version's outcome: two independent 64-bit hashes of its
/// written form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint([u64; 2]);

/// Hashes what it is given into a [`Fingerprint`]: everything goes into both hashes, each
/// started with its own tag.
struct Hashing {
    hashers: [std::hash::DefaultHasher; 2],
}

impl Hashing {
    fn new() -> Hashing {
        use std::hash::Hasher;
        let mut hashers = [
            std::hash::DefaultHasher::new(),
            std::hash::DefaultHasher::new(),
        ];
        for (tag, h) in hashers.iter_mut().enumerate() {
            h.write_u8(tag as u8);
        }
        Hashing { hashers }
    }

    fn text(&mut self, text: &str) {
        use std::hash::Hash;
        for h in &mut self.hashers {
            text.hash(h);
        }
    }

    fn number(&mut self, n: usize) {
        use std::hash::Hash;
        for h in &mut self.hashers {
            n.hash(h);
        }
    }

    /// A result: its message, or its error's text.
    fn result(&mut self, result: &Result<Dict, String>) {
        match result {
            Ok(message) => {
                self.text("message");
                self.dict(message);
            }
            Err(e) => {
                self.text("error");
                self.text(e);
            }
        }
    }

    /// A value, piece by piece (its structure, keys, strings and every other scalar's
    /// `repr()`), so that a long message is never written out whole.
    fn value(&mut self, v: &Value) {
        match v {
            Value::Dict(d) => self.dict(d),
            Value::List(items) => {
                self.text("[");
                self.number(items.len());
                for item in items {
                    self.value(item);
                }
            }
            Value::Str(s) => {
                self.text("'");
                self.text(s);
            }
            scalar => self.text(&scalar.py_repr()),
        }
    }

    fn dict(&mut self, d: &Dict) {
        self.text("{");
        self.number(d.len());
        for (k, v) in d {
            self.text(k);
            self.value(v);
        }
    }

    fn finish(&self) -> Fingerprint {
        use std::hash::Hasher;
        Fingerprint([self.hashers[0].finish(), self.hashers[1].finish()])
    }
}

/// An [`EventSink`](rtbench_engine::event::EventSink) that hashes each event as the
/// reference's dict and its span, as [`outcome`] would keep it.
struct HashEvents<'a> {
    template: &'a Template,
    hashing: &'a mut Hashing,
}

impl rtbench_engine::event::EventSink for HashEvents<'_> {
    fn record(&mut self, event: rtbench_engine::event::Event) {
        if let Some(value) = event.to_value(&self.template.fields()[event.field].name) {
            self.hashing.value(&value);
            self.hashing.number(event.span.start);
            self.hashing.number(event.span.end);
        }
    }
}

/// One version's [`Fingerprint`] of a generation: its one-shot result, then its streamed
/// events and how the stream ended (the whole text in one feed, as [`outcome`] streams it).
///
/// Each parse hands the values of repeating fields to its events, which are hashed as they
/// come, and keeps `None` in their places in its lists (see
/// [`rtbench_engine::parser::Options::lists_in_events`]): the values and the message's shape
/// are both hashed, so two outcomes hash alike exactly as they would whole, and a sample of
/// many small tool calls is not held a second time beside the analysis that shows it. The
/// one-shot parse is `parse_response`'s (the whole text at once, its nesting limit).
fn fingerprint(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
) -> Fingerprint {
    let mut hashing = Hashing::new();
    for whole_text in [true, false] {
        hashing.text(if whole_text { "one-shot" } else { "streamed" });
        let options = Options {
            whole_text,
            lists_in_events: true,
            ..Options::streamed(Events::Reference)
        };
        let result = (|| {
            let mut parser = Parser::with_options(template, Some(prefix), tools, options)?;
            let mut sink = HashEvents {
                template,
                hashing: &mut hashing,
            };
            for e in parser.initial_events() {
                rtbench_engine::event::EventSink::record(&mut sink, e.clone());
            }
            parser.feed_into(generation, &mut sink)?;
            parser.finalize_into(&mut sink)
        })()
        .map_err(|e: rtbench_engine::parser::ParseError| e.text());
        hashing.result(&result);
    }
    hashing.finish()
}

/// Runs `generation` under one version.
pub fn outcome(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
) -> Outcome {
    let message = parse_response(template, Some(prefix), generation, tools).map_err(|e| e.text());
    let mut events = Vec::new();
    let mut keep = |evs: &[rtbench_engine::event::Event]| keep_events(template, evs, &mut events);
    let streamed = (|| {
        let mut parser = Parser::new(template, Some(prefix), tools)?;
        keep(parser.initial_events());
        keep(&parser.feed(generation)?);
        let (message, last) = parser.finalize()?;
        keep(&last);
        Ok(message)
    })()
    .map_err(|e: rtbench_engine::parser::ParseError| e.text());
    Outcome {
        reference: template.reference(),
        message,
        events,
        streamed,
    }
}

/// Runs `generation` under every supported version (the template's own version is ignored).
pub fn compare(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
) -> Comparison {
    Comparison {
        outcomes: Reference::ALL
            .iter()
            .map(|&r| {
                let t = template.clone().with_reference(r);
                outcome(&t, prefix, generation, tools)
            })
            .collect(),
    }
}

/// [`compare`] for a sample: its generation with its prefix (empty when it has none) and tools;
/// a generation given as token ids (with the model that decodes them) is parsed as each version
/// parses ids: 5.25 through the defusing decoder, 5.24 as the decoded text.
pub fn compare_sample(template: &Template, sample: &Sample, model: Option<&Model>) -> Comparison {
    let Some(t) = model.and_then(|m| token_input(sample, m)) else {
        return compare(
            template,
            sample.prefix.as_deref().unwrap_or(""),
            &sample.generation,
            sample.tools.as_ref(),
        );
    };
    Comparison {
        outcomes: Reference::ALL
            .iter()
            .map(|&r| {
                let template = template.clone().with_reference(r);
                if r.defuses_control_tokens() {
                    outcome_ids(&template, &t, sample.tools.as_ref())
                } else {
                    outcome(
                        &template,
                        sample.prefix.as_deref().unwrap_or(""),
                        &sample.generation,
                        sample.tools.as_ref(),
                    )
                }
            })
            .collect(),
    }
}

/// [`outcome`] of a generation of token ids under a version that parses ids (the events'
/// spans point into the decoded text, defused spellings with their markers).
fn outcome_ids(template: &Template, t: &TokenInput<'_>, tools: Option<&Value>) -> Outcome {
    let message = parse_ids(
        template,
        Some(t.prefix),
        t.ids,
        tools,
        t.tokenizer,
        t.control,
    )
    .map_err(|e| e.text());
    let mut events = Vec::new();
    let mut keep = |evs: &[rtbench_engine::event::Event]| keep_events(template, evs, &mut events);
    let streamed = (|| {
        let mut parser = IdParser::new(
            template,
            Some(t.prefix),
            tools,
            t.tokenizer,
            t.control,
            Events::Reference,
            false,
        )?;
        keep(parser.initial_events());
        keep(&parser.feed(t.ids)?.0);
        let (message, last, _) = parser.finalize()?;
        keep(&last);
        Ok(message)
    })()
    .map_err(|e: rtbench_engine::parser::ParseError| e.text());
    Outcome {
        reference: template.reference(),
        message,
        events,
        streamed,
    }
}

/// The reference's events of `evs`, with their spans.
fn keep_events(
    template: &Template,
    evs: &[rtbench_engine::event::Event],
    out: &mut Vec<StreamEvent>,
) {
    for e in evs {
        if let Some(value) = e.to_value(&template.fields()[e.field].name) {
            out.push(StreamEvent {
                value,
                span: e.span.clone(),
            });
        }
    }
}

impl Comparison {
    /// The outcome under `r`.
    pub fn outcome(&self, r: Reference) -> Option<&Outcome> {
        self.outcomes.iter().find(|o| o.reference == r)
    }

    /// How every other version differs from `base`, oldest first (empty when the result does
    /// not depend on the version).
    pub fn divergences(&self, base: Reference) -> Vec<Divergence> {
        self.outcomes
            .iter()
            .filter(|o| o.reference != base)
            .filter_map(|o| self.divergence(base, o.reference))
            .collect()
    }

    /// How the result under `other` differs from the one under `base`, if it does.
    pub fn divergence(&self, base: Reference, other: Reference) -> Option<Divergence> {
        let (b, o) = (self.outcome(base)?, self.outcome(other)?);
        let names = Names { base, other };
        let mut lines = results(&names, &b.message, &o.message);
        let first = first_event_difference(&names, &b.events, &o.events);
        let at = first.as_ref().map(|(_, at)| at.clone());
        if lines.is_empty() {
            if let Some((line, _)) = first {
                lines.push(line);
            }
            if b.streamed != o.streamed {
                // The events alone do not say it when the streams end differently.
                lines.extend(
                    results(&names, &b.streamed, &o.streamed)
                        .into_iter()
                        .map(|l| format!("at the end of the stream: {l}")),
                );
            }
        }
        (!lines.is_empty()).then_some(Divergence {
            base,
            other,
            lines,
            at,
        })
    }
}

/// The two versions being compared, for the wording of a difference.
struct Names {
    base: Reference,
    other: Reference,
}

/// A value in one line, cut at 120 characters.
fn short(v: &Value) -> String {
    let s = v.py_repr();
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// The differences between two values: `$.a.b: '42' under 5.25, 42 under 5.24`.
fn value_lines(names: &Names, path_prefix: &str, base: &Value, other: &Value) -> Vec<String> {
    let show = |v: &Option<Value>| v.as_ref().map_or_else(|| "nothing".to_string(), short);
    diff(base, other)
        .iter()
        .map(|d| {
            let path = match d.path.strip_prefix('$') {
                Some(rest) if !path_prefix.is_empty() => format!("{path_prefix}{rest}"),
                _ => d.path.clone(),
            };
            format!(
                "{path}: {} under {}, {} under {}",
                show(&d.expected),
                names.base,
                show(&d.got),
                names.other
            )
        })
        .collect()
}

/// The differences between two results (a message or an error's text).
fn results(
    names: &Names,
    base: &Result<Dict, String>,
    other: &Result<Dict, String>,
) -> Vec<String> {
    let (b, o) = (names.base, names.other);
    match (base, other) {
        (Ok(x), Ok(y)) => value_lines(names, "", &Value::Dict(x.clone()), &Value::Dict(y.clone())),
        (Ok(_), Err(e)) => vec![format!("parses under {b}, fails under {o}: {e}")],
        (Err(e), Ok(m)) => vec![format!(
            "fails under {b}: {e}; parses under {o}: {}",
            short(&Value::Dict(m.clone()))
        )],
        (Err(x), Err(y)) if x == y => Vec::new(),
        (Err(x), Err(y)) => vec![format!("fails under {b}: {x}; fails under {o}: {y}")],
    }
}

/// The first event that differs between two streams (a line saying how, and where it lies).
fn first_event_difference(
    names: &Names,
    base: &[StreamEvent],
    other: &[StreamEvent],
) -> Option<(String, Range<usize>)> {
    let describe = |v: &Value| match v {
        Value::Dict(d) => format!(
            "{} of {}",
            d.get("type").and_then(Value::as_str).unwrap_or("event"),
            d.get("field").and_then(Value::as_str).unwrap_or("?")
        ),
        other => short(other),
    };
    let i = (0..base.len().max(other.len())).find(|&i| match (base.get(i), other.get(i)) {
        (Some(x), Some(y)) => !same(&x.value, &y.value),
        _ => true,
    })?;
    let n = i + 1;
    let (b, o) = (names.base, names.other);
    Some(match (base.get(i), other.get(i)) {
        (Some(x), Some(y)) => {
            let what = value_lines(names, "$", &x.value, &y.value).join("; ");
            (
                format!("stream event {n} ({}): {what}", describe(&x.value)),
                x.span.clone(),
            )
        }
        (Some(x), None) => (
            format!(
                "stream event {n} ({}) comes under {b} only: {}",
                describe(&x.value),
                short(&x.value)
            ),
            x.span.clone(),
        ),
        (None, Some(y)) => (
            format!(
                "stream event {n} ({}) comes under {o} only: {}",
                describe(&y.value),
                short(&y.value)
            ),
            y.span.clone(),
        ),
        (None, None) => return None,
    })
}

impl Divergence {
    /// The difference in words: `under 5.24 this sample parses differently: ...`, the further
    /// lines indented under the first.
    pub fn summary(&self) -> String {
        let mut out = format!("under {} this sample parses differently:", self.other);
        match self.lines.as_slice() {
            [one] if !one.contains('\n') => {
                out.push(' ');
                out.push_str(one);
            }
            lines => {
                for l in lines.iter().take(12) {
                    out.push_str("\n  ");
                    out.push_str(&l.replace('\n', "\n    "));
                }
                if lines.len() > 12 {
                    out.push_str(&format!("\n  ... {} more", lines.len() - 12));
                }
            }
        }
        out
    }

    /// The difference as a warning about the sample file `name` (whose text is `file_text`),
    /// located at the first differing event when its text is the file's.
    pub fn diagnostic(&self, sample: &Sample, name: &str, file_text: &str) -> Diagnostic {
        let d = Diagnostic::warning(self.summary())
            .in_file(name)
            .with_help(Some(format!(
                "rtbench follows {} here; the sample's result depends on the reference version \
                 (`rtbench test --reference all` gives the verdict under each)",
                self.base
            )));
        match self
            .at
            .as_ref()
            .and_then(|at| in_file(sample, file_text, at))
        {
            Some(at) => d.at(file_text, at),
            None => d,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hermes-style tool call whose argument schema allows a string or an integer.
    const TEMPLATE: &str = r#"{"start_anchor": "<|im_start|>assistant\n",
      "fields": {"content": {"optional": true},
                 "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json",
                                "repeats": true,
                                "transform": {"type": "function", "function": {
                                  "name": "{content.name}", "arguments": "{content.arguments}"}}}}}"#;
    const TOOLS: &str = r#"[{"type": "function", "function": {"name": "lookup", "parameters":
      {"type": "object", "properties": {"code": {"type": ["string", "integer"]}}}}}]"#;
    const PREFIX: &str = "<|im_start|>assistant\n";

    fn template() -> Template {
        Template::from_json_str(TEMPLATE).unwrap()
    }

    fn tools() -> Value {
        rtbench_engine::py::json_loads(TOOLS).unwrap()
    }

    fn json(text: &str) -> Value {
        rtbench_engine::py::json_loads(text).unwrap()
    }

    /// The reference's messages, recorded with both oracles (the template, tools and generation
    /// above; `parse_response(gen, template, prefix=PREFIX, tools=tools)`):
    ///
    /// ```text
    /// /tmp/oracle524/bin/python check.py   # transformers 5.24.0
    /// {"content": "Looking it up.", "tool_calls": [{"type": "function", "function":
    ///   {"name": "lookup", "arguments": {"code": 42}}}]}
    /// /tmp/oracle525/bin/python check.py   # transformers 5.25.0
    /// {"content": "Looking it up.", "tool_calls": [{"type": "function", "function":
    ///   {"name": "lookup", "arguments": {"code": "42"}}}]}
    /// ```
    ///
    /// 5.24 casts every string argument by the schema; 5.25 leaves a parameter whose schema
    /// allows `string` alone.
    const GENERATION: &str =
        r#"Looking it up.<tool_call>{"name": "lookup", "arguments": {"code": "42"}}</tool_call>"#;
    const UNDER_5_24: &str = r#"{"content": "Looking it up.", "tool_calls": [{"type": "function",
      "function": {"name": "lookup", "arguments": {"code": 42}}}]}"#;
    const UNDER_5_25: &str = r#"{"content": "Looking it up.", "tool_calls": [{"type": "function",
      "function": {"name": "lookup", "arguments": {"code": "42"}}}]}"#;

    fn same(a: &Dict, b: &str) -> bool {
        let a = Value::Dict(a.clone());
        let b = json(b);
        diff(&a, &b).is_empty() && a.py_repr() == b.py_repr()
    }

    #[test]
    fn a_typed_argument_is_cast_under_5_24_and_kept_under_5_25() {
        let tools = tools();
        let c = compare(&template(), PREFIX, GENERATION, Some(&tools));
        let old = c.outcome(Reference::V5_24).unwrap();
        let new = c.outcome(Reference::V5_25).unwrap();
        assert!(same(old.message.as_ref().unwrap(), UNDER_5_24));
        assert!(same(new.message.as_ref().unwrap(), UNDER_5_25));
        // The stream ends with the same message as the one-shot parse under each version.
        assert_eq!(old.streamed, old.message);
        assert_eq!(new.streamed, new.message);

        let d = c.divergence(Reference::V5_25, Reference::V5_24).unwrap();
        assert_eq!(
            d.lines,
            ["$.tool_calls[0].function.arguments.code: '42' under 5.25, 42 under 5.24"]
        );
        assert_eq!(
            d.summary(),
            "under 5.24 this sample parses differently: \
             $.tool_calls[0].function.arguments.code: '42' under 5.25, 42 under 5.24"
        );
        // The first event that differs is the call's close: the open and its raw chunk agree.
        let close = PREFIX.len() + GENERATION.find("</tool_call>").unwrap();
        assert_eq!(d.at, Some(close..close + "</tool_call>".len()));
        // Seen from the other side, the same difference the other way round.
        let back = c.divergences(Reference::V5_24);
        assert_eq!(back.len(), 1);
        assert_eq!(
            back[0].lines,
            ["$.tool_calls[0].function.arguments.code: 42 under 5.24, '42' under 5.25"]
        );
    }

    #[test]
    fn the_versions_agree_without_holding_outcomes_exactly_where_no_divergence_is_found() {
        let tools = tools();
        let both = [Reference::V5_25, Reference::V5_24];
        let calls = r#"Fine.<tool_call>{"name": "lookup", "arguments": {"code": 7}}</tool_call>"#;
        let broken = r#"<tool_call>{"name": "lookup", "arguments": </tool_call>"#;
        for (generation, tools) in [
            (GENERATION, Some(&tools)),
            (calls, Some(&tools)),
            (GENERATION, None),
            (broken, Some(&tools)),
            (broken, None),
        ] {
            let diverges = compare(&template(), PREFIX, generation, tools)
                .divergence(both[0], both[1])
                .is_some();
            assert_eq!(
                agree_on(&template(), PREFIX, generation, tools, both),
                !diverges,
                "{generation:?} with tools: {}",
                tools.is_some()
            );
        }
        // The one that differs differs whichever version is the base.
        assert!(!agree_on(
            &template(),
            PREFIX,
            GENERATION,
            Some(&tools),
            [both[1], both[0]]
        ));
    }

    #[test]
    fn the_other_version_of_each_is_the_other_one() {
        assert_eq!(other(Reference::V5_24), Reference::V5_25);
        assert_eq!(other(Reference::V5_25), Reference::V5_24);
    }

    #[test]
    fn a_sample_whose_versions_agree_has_no_divergence() {
        let tools = tools();
        let agree = r#"Fine.<tool_call>{"name": "lookup", "arguments": {"code": 7}}</tool_call>"#;
        let c = compare(&template(), PREFIX, agree, Some(&tools));
        assert_eq!(c.outcomes.len(), Reference::ALL.len());
        assert!(c.divergences(Reference::V5_25).is_empty());
        assert!(c.divergences(Reference::V5_24).is_empty());
        // The same without tools: no coercion at all.
        let c = compare(&template(), PREFIX, GENERATION, None);
        assert!(c.divergences(Reference::NEWEST).is_empty());
    }

    #[test]
    fn events_that_differ_are_named_when_the_messages_agree() {
        let e = |kind: &str, value: &str| StreamEvent {
            value: json(&format!(
                r#"{{"type": "{kind}", "field": "tool_calls", "value": {value}}}"#
            )),
            span: 3..5,
        };
        let names = Names {
            base: Reference::V5_25,
            other: Reference::V5_24,
        };
        let (line, at) = first_event_difference(
            &names,
            &[e("region_open", "null"), e("region_close", "\"42\"")],
            &[e("region_open", "null"), e("region_close", "42")],
        )
        .unwrap();
        assert_eq!(
            line,
            "stream event 2 (region_close of tool_calls): $.value: '42' under 5.25, 42 under 5.24"
        );
        assert_eq!(at, 3..5);
        let (line, _) = first_event_difference(&names, &[e("region_open", "null")], &[]).unwrap();
        assert!(
            line.starts_with("stream event 1 (region_open of tool_calls) comes under 5.25 only"),
            "{line}"
        );
        assert!(first_event_difference(&names, &[], &[]).is_none());
    }

    #[test]
    fn errors_are_compared_by_their_text() {
        let names = Names {
            base: Reference::V5_25,
            other: Reference::V5_24,
        };
        let m = Dict::from_iter([("content".to_string(), Value::from("x"))]);
        assert_eq!(
            results(&names, &Ok(m.clone()), &Err("ValueError: no".into())),
            ["parses under 5.25, fails under 5.24: ValueError: no"]
        );
        assert_eq!(
            results(&names, &Err("A".into()), &Ok(m)),
            ["fails under 5.25: A; parses under 5.24: {'content': 'x'}"]
        );
        assert!(results(&names, &Err("A".into()), &Err("A".into())).is_empty());
        assert_eq!(
            results(&names, &Err("A".into()), &Err("B".into())),
            ["fails under 5.25: A; fails under 5.24: B"]
        );
    }

    #[test]
    fn the_warning_is_located_at_the_first_differing_event_in_the_file() {
        let text = format!(
            "--- prefix (ends with newline) ---\n{PREFIX}--- generation ---\n{GENERATION}\n--- tools ---\n{}\n",
            TOOLS.replace('\n', " ")
        );
        let sample = crate::sample::parse_sample(std::path::Path::new("s.sample"), &text).unwrap();
        let c = compare_sample(&template(), &sample, None);
        let d = &c.divergences(Reference::V5_25)[0];
        let w = d.diagnostic(&sample, "s.sample", &text);
        let column = GENERATION.find("</tool_call>").unwrap() + 1;
        assert_eq!(w.position(), Some(format!("s.sample:4:{column}")));
        assert!(
            w.message
                .starts_with("under 5.24 this sample parses differently: $.tool_calls[0]")
        );
        assert!(w.help.as_deref().unwrap().contains("--reference all"));
    }
}
