//! Which delimiter made a chunking change the result: the one-shot parse and the chunked
//! stream are replayed with their events' spans, paired into regions (the engine's region
//! model), and the first delimiter match where they part (an open or a close of some field,
//! matched at another place, or shorter or longer) is named, with the template key it is
//! written at.
//!
//! The usual culprit is a match the stream committed before the rest of its text arrived: a
//! complete match preferred over a longer partial one (`</invoke>` of
//! `</invoke>(?:\s*</x:tool_call>)?`, `</think>` of `["</think>", "</think>\n\n"]`), or a
//! lookahead that saw an incomplete tag at the end of a feed.

use std::ops::Range;

use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::event::Event;
use rtbench_engine::parser::{Events, Parser};
use rtbench_engine::region::{Ending, regions};
use rtbench_engine::template::Template;
use rtbench_engine::template::error::{PathSeg, Target, TemplateError};
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::Value;

/// Which delimiter of a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The field's open (`open` / `open_pattern`).
    Open,
    /// The field's close (`close` / `close_pattern`).
    Close,
}

/// One delimiter match of a parse: which field's, which side, and where in the document.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mark {
    field: usize,
    side: Side,
    span: Range<usize>,
}

/// The delimiter whose match made a chunking's result differ from the one-shot parse.
#[derive(Clone, Debug, PartialEq)]
pub struct Cause {
    /// The field whose delimiter it is.
    pub field: String,
    /// Its open or its close.
    pub side: Side,
    /// The template key it is written at (`close_pattern`, `open`, ...).
    pub key: String,
    /// The delimiter as the template wrote it (`'<x\\d+>'`, `'<think>'`, `['a', 'b']`).
    pub delimiter: String,
    /// What the chunked stream did at the first difference (one line).
    pub chunked: String,
    /// What the one-shot parse did there (one line).
    pub one_shot: String,
    /// Where the key is in the template file (`template.json:7:24`), once located.
    pub at: Option<String>,
}

impl Cause {
    /// The delimiter named for people: `the close pattern of 'tool_calls'`.
    pub fn name(&self) -> String {
        let kind = match (self.side, self.key.ends_with("_pattern")) {
            (Side::Open, true) => "open pattern",
            (Side::Open, false) => "open",
            (Side::Close, true) => "close pattern",
            (Side::Close, false) => "close",
        };
        format!("the {kind} of '{}'", self.field)
    }

    /// The key's path in the template (`["fields", "tool_calls", "close_pattern"]`).
    pub fn path(&self) -> Vec<PathSeg> {
        ["fields", self.field.as_str(), self.key.as_str()]
            .into_iter()
            .map(|k| PathSeg::Key(k.to_string()))
            .collect()
    }

    /// Finds the key in the template's file (`at`).
    pub fn locate(&mut self, source: &TemplateSource) {
        let found = TemplateError::new(String::new(), self.path(), Target::Value);
        self.at = source.warn(&found).position();
    }

    /// The lines that say it: the delimiter and its key, then what each parse matched.
    pub fn lines(&self) -> Vec<String> {
        let at = self.at.as_ref().map_or_else(
            || format!("key fields.{}.{}", self.field, self.key),
            Clone::clone,
        );
        vec![
            format!(
                "the delimiter that made the difference: {}, {} ({at})",
                self.name(),
                self.delimiter
            ),
            format!("  chunked: {}", self.chunked),
            format!("  one-shot: {}", self.one_shot),
        ]
    }
}

/// What one generation is parsed with (text, not token ids: the cuts are places in the text).
#[derive(Clone, Copy, Debug)]
pub struct Stream<'a> {
    /// The template the generation is parsed with.
    pub template: &'a Template,
    /// The text before the generation (empty when none was given).
    pub prefix: &'a str,
    /// The tool definitions given to the parser, if any.
    pub tools: Option<&'a Value>,
    /// The generated text.
    pub text: &'a str,
}

/// The delimiter that made the stream cut at `cuts` (byte offsets of the generation) give
/// another result than the one-shot parse; `None` when every delimiter matched alike in both
/// (a value differs without a region boundary moving).
pub fn cause(stream: &Stream<'_>, cuts: &[usize]) -> Option<Cause> {
    let one_shot = marks(stream, &[]);
    let chunked = marks(stream, cuts);
    let i = (0..one_shot.len().max(chunked.len())).find(|&i| one_shot.get(i) != chunked.get(i))?;
    let (a, b) = (one_shot.get(i), chunked.get(i));
    // The match that came first (the chunked one at a tie) is the delimiter that parted them.
    let culprit = match (a, b) {
        (Some(a), Some(b)) if a.span.start < b.span.start => a,
        (_, Some(b)) => b,
        (Some(a), None) => a,
        (None, None) => return None,
    };
    let template = stream.template;
    let field = &template.fields()[culprit.field];
    let delimiter = match culprit.side {
        Side::Open => field.open.as_ref(),
        Side::Close => field.close.as_ref(),
    }?;
    let key = match (culprit.side, delimiter) {
        (Side::Open, Delimiter::Pattern(_)) => "open_pattern",
        (Side::Open, Delimiter::Literal(_)) => "open",
        (Side::Close, Delimiter::Pattern(_)) => "close_pattern",
        (Side::Close, Delimiter::Literal(_)) => "close",
    };
    let view = View {
        template,
        document: format!("{}{}", stream.prefix, stream.text),
        prefix_len: stream.prefix.len(),
        culprit,
    };
    // With one cut, the report's own line says where it is.
    let cut = if cuts.len() > 1 {
        cut_near(cuts, b.map_or(culprit.span.start, |b| b.span.start), &view)
    } else {
        String::new()
    };
    Some(Cause {
        field: field.name.clone(),
        side: culprit.side,
        key: key.to_string(),
        delimiter: match delimiter {
            // `name` says it is a pattern already.
            Delimiter::Pattern(p) => Value::from(p.source()).py_repr(),
            Delimiter::Literal(_) => delimiter.describe(),
        },
        chunked: format!("{}{cut}", view.said(b, "chunked")),
        one_shot: view.said(a, "one-shot"),
        at: None,
    })
}

/// The delimiter matches of the stream fed in pieces ending at `cuts` (none: one feed), in
/// the order they committed: each explicit region's open, then its close when its own close
/// ended it. A stream that fails keeps those before the error.
fn marks(stream: &Stream<'_>, cuts: &[usize]) -> Vec<Mark> {
    let template = stream.template;
    let Ok(mut parser) =
        Parser::with_events(template, Some(stream.prefix), stream.tools, Events::Spans)
    else {
        return Vec::new();
    };
    let mut events: Vec<Event> = parser.initial_events().to_vec();
    let text = stream.text;
    let mut start = 0;
    let mut failed = false;
    for end in cuts
        .iter()
        .copied()
        .filter(|&c| c < text.len() && text.is_char_boundary(c))
        .chain([text.len()])
    {
        if end <= start {
            continue;
        }
        match parser.feed(&text[start..end]) {
            Ok(evs) => events.extend(evs),
            Err(_) => {
                failed = true;
                break;
            }
        }
        start = end;
    }
    if !failed && let Ok((_, evs)) = parser.finalize() {
        events.extend(evs);
    }
    let doc_len = stream.prefix.len() + text.len();
    let mut out = Vec::new();
    for g in regions(&events, doc_len) {
        if template.fields()[g.field].open.is_some() {
            out.push(Mark {
                field: g.field,
                side: Side::Open,
                span: g.open.clone(),
            });
        }
        if let (Some(Ending::Close), Some(close)) = (&g.ending, &g.close)
            && template.fields()[g.field].close.is_some()
        {
            out.push(Mark {
                field: g.field,
                side: Side::Close,
                span: close.clone(),
            });
        }
    }
    out
}

/// What the cause's lines quote from: the document and the culprit.
struct View<'a> {
    template: &'a Template,
    document: String,
    prefix_len: usize,
    culprit: &'a Mark,
}

impl View<'_> {
    /// What one parse matched at the first difference: the culprit's delimiter (`it`), or
    /// another one, and where; or that it matched nothing more.
    fn said(&self, mark: Option<&Mark>, who: &str) -> String {
        let Some(m) = mark else {
            return format!("the {who} parse matched no further delimiter");
        };
        let what = if m.field == self.culprit.field && m.side == self.culprit.side {
            "it".to_string()
        } else {
            let side = match m.side {
                Side::Open => "open",
                Side::Close => "close",
            };
            format!("the {side} of '{}'", self.template.fields()[m.field].name)
        };
        format!(
            "{what} matched {} at {}",
            quote(&self.document[m.span.clone()]),
            self.pos(m.span.start)
        )
    }

    /// `line L:C` of the generation (`prefix line L:C` in the prefix).
    fn pos(&self, byte: usize) -> String {
        let (label, text) = if byte >= self.prefix_len {
            ("line", &self.document[self.prefix_len..byte])
        } else {
            ("prefix line", &self.document[..byte])
        };
        let (line, col) = crate::place::line_col(text);
        format!("{label} {line}:{col}")
    }
}

/// The feed boundary the chunked match met: the first cut at or after where it started (in
/// the document), with the text on either side, as `rtbench chunks` shows cuts.
fn cut_near(cuts: &[usize], start: usize, view: &View<'_>) -> String {
    let text = &view.document[view.prefix_len..];
    let from = start.saturating_sub(view.prefix_len);
    let Some(&c) = cuts.iter().find(|&&c| c >= from).or(cuts.last()) else {
        return String::new();
    };
    let c = text.floor_char_boundary(c.min(text.len()));
    let before: String = {
        let mut v: Vec<char> = text[..c].chars().rev().take(16).collect();
        v.reverse();
        v.into_iter().collect()
    };
    let after: String = text[c..].chars().take(16).collect();
    format!(
        ", with a feed ending after code point {}: {} | {}",
        text[..c].chars().count(),
        Value::from(before.as_str()).py_repr(),
        Value::from(after.as_str()).py_repr()
    )
}

/// A delimiter's text, quoted as Python would (long ones shortened).
fn quote(text: &str) -> String {
    let shown: String = if text.chars().count() > 40 {
        let head: String = text.chars().take(40).collect();
        format!("{head}…")
    } else {
        text.to_string()
    };
    Value::from(shown.as_str()).py_repr()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(json: &str) -> Template {
        Template::from_json_str(json).unwrap()
    }

    fn stream<'a>(template: &'a Template, text: &'a str) -> Stream<'a> {
        Stream {
            template,
            prefix: "",
            tools: None,
            text,
        }
    }

    /// A close written as one of two literals, one the beginning of the other: a feed that
    /// ends between them commits the shorter one, and the blank line goes to the answer.
    #[test]
    fn a_shorter_literal_committed_at_a_feed_end_is_named() {
        let t = template(
            r#"{"start_anchor": "<a>", "fields": {
                "thinking": {"open": "<think>", "close": ["</think>", "</think>\n\n"]},
                "content": {}}}"#,
        );
        let text = "<think>plan</think>\n\nanswer";
        let cause = cause(&stream(&t, text), &[5, 20]).expect("named");
        assert_eq!(
            (cause.field.as_str(), cause.side, cause.key.as_str()),
            ("thinking", Side::Close, "close")
        );
        assert_eq!(cause.name(), "the close of 'thinking'");
        assert_eq!(
            cause.chunked,
            "it matched '</think>' at line 1:12, with a feed ending after code point 20: 'nk>plan</think>\\n' | '\\nanswer'"
        );
        assert_eq!(cause.one_shot, "it matched '</think>\\n\\n' at line 1:12");
        assert_eq!(
            cause.lines()[0],
            "the delimiter that made the difference: the close of 'thinking', ['</think>', '</think>\\n\\n'] (key fields.thinking.close)"
        );
        // With the one cut alone, the report's own line says where it is.
        assert_eq!(
            cause_of(&t, text, &[20]).chunked,
            "it matched '</think>' at line 1:12"
        );
    }

    fn cause_of(t: &Template, text: &str, cuts: &[usize]) -> Cause {
        cause(&stream(t, text), cuts).unwrap()
    }

    /// When every delimiter matches alike, nothing is blamed.
    #[test]
    fn the_same_matches_name_nothing() {
        let t = template(r#"{"start_anchor": "<a>", "fields": {"content": {}}}"#);
        assert_eq!(cause(&stream(&t, "plain text"), &[3, 5]), None);
    }
}
