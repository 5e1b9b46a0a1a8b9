//! Explanations of a mis-parse: why a field matched nowhere, or why its region ended where it
//! did. Built from the parser's own trace (regions with spans) and from searches of the
//! field's delimiters over the parsed text, so that what it says is what the parser did.

use std::ops::Range;

use pyregex::RegexError;
use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::event::Event;
use rtbench_engine::parser::{Events, ParseError, Parser};
use rtbench_engine::region::{self as model, RegionBuilder};
use rtbench_engine::template::Template;
use rtbench_engine::value::Value;

/// A region of the engine's model ([`rtbench_engine::region`]) with its field named, as
/// document ranges (the document is prefix + generation).
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub field: String,
    /// The open delimiter (empty for the implicit region).
    pub open: Range<usize>,
    pub body: Range<usize>,
    /// The close delimiter, or an empty range where the region ended.
    pub close: Range<usize>,
    pub ended_by: Ending,
}

/// Why a region ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ending {
    /// Its own close delimiter matched.
    Close,
    /// Another field's open delimiter matched (the implicit region ends there).
    Open(String),
    /// The stream ended first.
    EndOfStream,
    /// Its value could not be made (the parse error says why); the region's end is where the
    /// failing body ended.
    Failed,
}

/// One place where the field's open delimiter text appears but did not open the field.
#[derive(Clone, Debug, PartialEq)]
pub struct MissedOpen {
    pub at: Range<usize>,
    pub reason: Missed,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Missed {
    /// The text lay inside another explicit region, where only that region's close is watched.
    InsideRegion(String),
    /// Another delimiter was committed at or over this text first (earliest start wins, then
    /// the longest, then opens before closes, then the field name in alphabetical order).
    Beaten { by: String, at: Range<usize> },
    /// The text was in the prefix before the start anchor's cut.
    BeforeAnchor,
}

/// How the prefix was cut by the start anchor.
#[derive(Clone, Debug, PartialEq)]
pub enum AnchorCut {
    /// No prefix was given (empty): nothing the prompt pre-wrote is known.
    EmptyPrefix,
    /// The anchor was not found: the whole prefix was parsed.
    NotFound { prefix_len: usize },
    /// The prefix was cut after the last anchor match; `kept` is the part that was parsed.
    Cut { at: usize, kept: Range<usize> },
}

/// Everything the explanation knows about one field.
#[derive(Clone, Debug)]
pub struct Explanation {
    pub field: String,
    pub open: Option<String>,
    pub close: Option<String>,
    pub repeats: bool,
    pub regions: Vec<Region>,
    pub missed_opens: Vec<MissedOpen>,
    /// When the open delimiter never matched anywhere: the closest the text came.
    pub nearest_open: Option<Range<usize>>,
    /// For regions that ran to the end of the stream: the closest the text came to the close.
    pub nearest_close: Option<Range<usize>>,
    /// Places where the field's close delimiter appears while none of its regions was open
    /// (a region the prompt opened but the parser never saw, or text taken by another region).
    pub stray_closes: Vec<Range<usize>>,
    pub anchor: AnchorCut,
    pub parse_error: Option<ParseError>,
    /// The document the ranges refer to (prefix + generation).
    pub document: String,
    /// Length of the prefix in the document (bytes).
    pub prefix_len: usize,
}

/// Explains `field` for one generation.
pub fn explain(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
    field: &str,
) -> Result<Explanation, String> {
    let index = template.field_index(field).ok_or_else(|| {
        let names: Vec<&str> = template.fields().iter().map(|f| f.name.as_str()).collect();
        format!(
            "no field '{field}' in the template (fields: {})",
            names.join(", ")
        )
    })?;
    let f = &template.fields()[index];
    let document = format!("{prefix}{generation}");
    let (events, parse_error, origin) = trace(template, prefix, generation, tools);
    let regions = regions(template, &events, parse_error.as_ref(), document.len());
    let regex = |e: RegexError| format!("searching the delimiters failed: {e}");

    let anchor = if prefix.is_empty() {
        AnchorCut::EmptyPrefix
    } else {
        match template
            .start_anchor()
            .last_match_end(prefix)
            .map_err(regex)?
        {
            None => AnchorCut::NotFound {
                prefix_len: prefix.len(),
            },
            Some(at) => AnchorCut::Cut {
                at,
                kept: at..prefix.len(),
            },
        }
    };

    let parsed = &document[origin..];
    let mut missed_opens = Vec::new();
    let mut nearest_open = None;
    if let Some(open) = &f.open {
        let found = open.find_all(parsed).map_err(regex)?;
        for r in &found {
            let at = origin + r.start..origin + r.end;
            if regions.iter().any(|g| g.field == f.name && g.open == at) {
                continue;
            }
            let reason = if let Some(g) = regions
                .iter()
                .find(|g| !g.open.is_empty() && g.body.start <= at.start && at.start < g.body.end)
            {
                Missed::InsideRegion(g.field.clone())
            } else if let Some(g) = regions
                .iter()
                .find(|g| overlaps(&g.open, &at) || overlaps(&g.close, &at))
            {
                let by = if overlaps(&g.open, &at) {
                    g.open.clone()
                } else {
                    g.close.clone()
                };
                Missed::Beaten {
                    by: g.field.clone(),
                    at: by,
                }
            } else {
                continue;
            };
            missed_opens.push(MissedOpen { at, reason });
        }
        // Occurrences cut away with the prefix explain a field the prompt opened.
        if let AnchorCut::Cut { at, .. } = &anchor {
            for r in open.find_all(&prefix[..*at]).map_err(regex)? {
                missed_opens.push(MissedOpen {
                    at: r,
                    reason: Missed::BeforeAnchor,
                });
            }
        }
        if found.is_empty() {
            // A one-character near miss (a lone `<`) says nothing; neither does the beginning
            // of the field's own close delimiter.
            let closes = match &f.close {
                Some(c) => c.find_all(parsed).map_err(regex)?,
                None => Vec::new(),
            };
            // A literal must be matched for a third of its length (at least two characters)
            // to count as a near miss; and the text of another region's delimiter is taken.
            let min_chars = match open {
                Delimiter::Literal(set) => set
                    .literals
                    .iter()
                    .map(|l| l.chars().count())
                    .min()
                    .unwrap_or(0)
                    .div_ceil(3)
                    .max(2),
                Delimiter::Pattern(_) => 2,
            };
            let in_delimiter = |at: usize| {
                regions
                    .iter()
                    .any(|g| g.open.contains(&at) || g.close.contains(&at))
            };
            nearest_open = open
                .nearest_partial(parsed, 4096)
                .map_err(regex)?
                .filter(|r| parsed[r.clone()].chars().count() >= min_chars)
                .filter(|r| !closes.iter().any(|c| c.start <= r.start && r.start < c.end))
                .map(|r| origin + r.start..origin + r.end)
                .filter(|r| !in_delimiter(r.start));
        }
    }
    let mut nearest_close = None;
    if let (Some(close), Some(last)) = (
        &f.close,
        regions.iter().rfind(|g| {
            g.field == f.name
                && (g.ended_by == Ending::EndOfStream
                    || (g.ended_by == Ending::Failed && g.body.end == document.len()))
        }),
    ) {
        // A close that was cut off is near the end: search the last 4096 characters.
        let body = &document[last.body.clone()];
        let from = body.char_indices().rev().nth(4095).map_or(0, |(i, _)| i);
        let base = last.body.start + from;
        nearest_close = close
            .nearest_partial(&body[from..], 4096)
            .map_err(regex)?
            .filter(|r| {
                let t = &body[from..][r.clone()];
                t.chars().nth(1).is_some() && !t.trim().is_empty()
            })
            .map(|r| base + r.start..base + r.end);
    }
    let mut stray_closes = Vec::new();
    if let (Some(_), Some(close)) = (&f.open, &f.close) {
        for r in close.find_all(parsed).map_err(regex)? {
            let at = origin + r.start..origin + r.end;
            let own = regions.iter().any(|g| {
                g.field == f.name
                    && (g.close == at || (g.body.start <= at.start && at.start < g.body.end))
            });
            // Text inside another explicit region, or that is another region's delimiter,
            // was never a candidate for this field's close.
            let inside_other = regions.iter().any(|g| {
                g.field != f.name
                    && ((!g.open.is_empty() && g.body.start <= at.start && at.start < g.body.end)
                        || overlaps(&g.open, &at)
                        || overlaps(&g.close, &at))
            });
            if !own && !inside_other && !at.is_empty() {
                stray_closes.push(at);
            }
        }
    }
    Ok(Explanation {
        field: f.name.clone(),
        open: f.open.as_ref().map(Delimiter::describe),
        close: f.close.as_ref().map(Delimiter::describe),
        repeats: f.repeats,
        regions: regions.into_iter().filter(|g| g.field == f.name).collect(),
        missed_opens,
        nearest_open,
        nearest_close,
        stray_closes,
        anchor,
        parse_error,
        prefix_len: prefix.len(),
        document,
    })
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    !a.is_empty() && a.start < b.end && b.start < a.end
}

/// Runs the parser with tracing; events up to a parse error are kept.
fn trace(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
) -> (Vec<Event>, Option<ParseError>, usize) {
    let mut events = Vec::new();
    let mut p = match Parser::with_events(template, Some(prefix), tools, Events::Trace) {
        Ok(p) => p,
        Err(e) => return (events, Some(e), prefix.len()),
    };
    let origin = p.origin();
    events.extend_from_slice(p.initial_events());
    let error = match p.feed(generation) {
        Ok(evs) => {
            events.extend(evs);
            match p.finalize() {
                Ok((_, evs)) => {
                    events.extend(evs);
                    None
                }
                Err(e) => Some(e),
            }
        }
        Err(e) => Some(e),
    };
    (events, error, origin)
}

/// The closed (or failed) regions of the trace, from the engine's region model, named.
fn regions(
    template: &Template,
    events: &[Event],
    error: Option<&ParseError>,
    doc_len: usize,
) -> Vec<Region> {
    let mut model = RegionBuilder::new(doc_len);
    for (i, e) in events.iter().enumerate() {
        model.push(i, e);
    }
    if let Some(e) = error {
        model.fail(template, e);
    }
    let name = |f: usize| template.fields()[f].name.clone();
    model
        .into_regions()
        .into_iter()
        .filter_map(|g| {
            let ended_by = match g.ending? {
                model::Ending::Close => Ending::Close,
                model::Ending::Open(by) => Ending::Open(name(by)),
                model::Ending::EndOfStream => Ending::EndOfStream,
                model::Ending::Failed => Ending::Failed,
            };
            Some(Region {
                field: name(g.field),
                open: g.open,
                body: g.body,
                close: g.close.unwrap_or_default(),
                ended_by,
            })
        })
        .collect()
}

impl Explanation {
    /// A position for people: code points counted from the start of the generation, or of the
    /// prefix for text in the prefix.
    fn cp(&self, byte: usize) -> String {
        let byte = byte.min(self.document.len());
        if byte >= self.prefix_len {
            format!(
                "generation code point {}",
                self.document[self.prefix_len..byte].chars().count()
            )
        } else {
            format!(
                "prefix code point {}",
                self.document[..byte].chars().count()
            )
        }
    }

    fn quote(&self, r: &Range<usize>) -> String {
        Value::from(shorten(&self.document[r.clone()]).as_str()).py_repr()
    }

    /// Describes a near miss: the text that matched the beginning of a delimiter and the
    /// character after it that did not fit.
    fn near_miss(&self, r: &Range<usize>) -> String {
        let next = self.document[r.end..].chars().next();
        let stop = match next {
            Some(c) => format!(
                "then {} did not fit",
                Value::from(c.to_string().as_str()).py_repr()
            ),
            None => "then the text ended".to_string(),
        };
        format!(
            "{} at {} ({} matched, {stop}) in {}",
            self.quote(r),
            self.cp(r.start),
            characters(self.document[r.clone()].chars().count()),
            self.context(r)
        )
    }

    /// The text around `r`, with `r` bracketed: `…before[r]after…`.
    fn context(&self, r: &Range<usize>) -> String {
        let before: String = self.document[..r.start]
            .chars()
            .rev()
            .take(12)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let after: String = self.document[r.end..].chars().take(12).collect();
        let inside = shorten(&self.document[r.clone()]);
        Value::from(format!("{before}[{inside}]{after}").as_str()).py_repr()
    }

    /// The explanation as plain lines of text.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let delims = match (&self.open, &self.close) {
            (Some(o), Some(c)) => format!("open {o}, close {c}"),
            (Some(o), None) => format!("open {o}, no close (runs to the end of the stream)"),
            (None, Some(c)) => format!("implicit (takes leftover text), close {c}"),
            (None, None) => "implicit (takes leftover text), no close".into(),
        };
        out.push(format!("field '{}': {delims}", self.field));
        if self.regions.is_empty() {
            out.push("  it matched nowhere: the message has no value from this field.".into());
        }
        for (i, g) in self.regions.iter().enumerate() {
            let opened = if g.open.is_empty() {
                format!("opened at {} (first leftover text)", self.cp(g.open.start))
            } else {
                format!(
                    "opened by {} at {}",
                    self.quote(&g.open),
                    self.cp(g.open.start)
                )
            };
            let ended = match &g.ended_by {
                Ending::Close => format!(
                    "closed by {} at {}",
                    self.quote(&g.close),
                    self.cp(g.close.start)
                ),
                Ending::Open(by) => {
                    format!("ended at {} where '{by}' opened", self.cp(g.close.start))
                }
                Ending::EndOfStream => {
                    "ran to the end of the stream (its close never matched)".into()
                }
                Ending::Failed => format!(
                    "its body up to {} could not be parsed (below)",
                    self.cp(g.body.end)
                ),
            };
            out.push(format!(
                "  region {}: {opened}; {ended}; body {}",
                i + 1,
                characters(self.document[g.body.clone()].chars().count())
            ));
        }
        for m in &self.missed_opens {
            let why = match &m.reason {
                Missed::InsideRegion(f) => format!(
                    "it lay inside the '{f}' region, where only that region's close is watched"
                ),
                Missed::Beaten { by, at } => format!(
                    "'{by}' matched {} at {} first (earliest start wins, then the longest match, then opens before closes, then field names in alphabetical order)",
                    self.quote(at),
                    self.cp(at.start)
                ),
                Missed::BeforeAnchor => {
                    "it is in the prefix before the start anchor, which the parser cuts away".into()
                }
            };
            out.push(format!(
                "  the open delimiter appears at {} but did not open the field: {why}",
                self.cp(m.at.start)
            ));
        }
        if let Some(r) = &self.nearest_open {
            out.push(format!(
                "  the open delimiter never appears; the closest: {}",
                self.near_miss(r)
            ));
        } else if self.regions.is_empty() && self.open.is_some() && self.missed_opens.is_empty() {
            out.push("  the open delimiter never appears in the text the parser saw".into());
        }
        if let Some(r) = &self.nearest_close {
            out.push(format!(
                "  the close delimiter never matched after the last open; the closest: {}",
                self.near_miss(r)
            ));
        }
        let count = self.regions.len();
        if count > 1 && !self.repeats {
            out.push(format!(
                "  the field does not repeat, so each region replaced the previous value: the message keeps region {count}'s{}",
                if self.regions.last().is_some_and(|g| self.document[g.body.clone()].trim().is_empty()) {
                    ", which is empty and so dropped from the message (use repeats with join to keep every region)"
                } else {
                    ""
                }
            ));
        }
        for r in &self.stray_closes {
            let hint = if self.regions.iter().all(|g| g.open.start > r.start) {
                ": its open delimiter did not match before it (a typo in the open, or an open that the prompt wrote and the prefix lacks)"
            } else {
                ""
            };
            out.push(format!(
                "  the close delimiter appears at {} ({}) while no region of this field was open{hint}",
                self.cp(r.start),
                self.context(r)
            ));
        }
        match &self.anchor {
            AnchorCut::EmptyPrefix => out.push(
                "  prefix: none was given, so nothing the prompt wrote is known (a chat template that opens a region, such as <think>, for the model leaves this region unopened); pass the prompt as the prefix".into(),
            ),
            AnchorCut::NotFound { prefix_len } => out.push(format!(
                "  prefix: the start anchor was not found in it, so the whole prefix ({}, earlier turns included) was parsed",
                characters(self.document[..*prefix_len].chars().count())
            )),
            AnchorCut::Cut { at, kept } => out.push(format!(
                "  prefix: cut after the last start anchor at prefix code point {}; the parser saw {} of it",
                self.document[..*at].chars().count(),
                if kept.is_empty() { "nothing".to_string() } else { self.quote(kept) }
            )),
        }
        if let Some(e) = &self.parse_error {
            out.push(format!("  parsing failed: {}", e.message));
        }
        out
    }
}

/// Longest quoted stretch of text, in characters.
const QUOTE_CHARS: usize = 60;

/// `text`, or its beginning and end around an ellipsis when it is longer than [`QUOTE_CHARS`].
fn shorten(text: &str) -> String {
    let n = text.chars().count();
    if n <= QUOTE_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(QUOTE_CHARS / 2).collect();
    let tail: String = text.chars().skip(n - QUOTE_CHARS / 2).collect();
    format!("{head}…{tail}")
}

fn characters(n: usize) -> String {
    if n == 1 {
        "1 character".into()
    } else {
        format!("{n} characters")
    }
}
