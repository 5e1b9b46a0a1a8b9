//! Regions: a stream's events paired into the stretches of text each field received, with how
//! each one ended. Every view of a parse (explanations, the workbench's colouring and region
//! pane, the stream replay) reads regions from here, so they all agree on what the parser did.
//!
//! Events come from a parser recording them ([`crate::Events::Reference`] or, for the values
//! before and after the transform and the delimiter captures, [`crate::Events::Trace`]).
//!
//! ```
//! use rtbench_engine::region::{Ending, regions};
//! use rtbench_engine::{Events, Parser, Template};
//!
//! let template = Template::from_json_str(r#"{
//!   "start_anchor": "<|assistant|>",
//!   "fields": {
//!     "content": {},
//!     "tool_calls": {"open": "<tool>", "close": "</tool>", "content": "json", "repeats": true}
//!   }
//! }"#)?;
//! let generation = "Let me check.<tool>{\"name\": \"f\"}</tool>";
//! let mut parser = Parser::with_events(&template, Some("<|assistant|>"), None, Events::Trace)?;
//! let mut events = parser.initial_events().to_vec();
//! events.extend(parser.feed(generation)?);
//! events.extend(parser.finalize()?.1);
//!
//! let found = regions(&events, generation.len() + "<|assistant|>".len());
//! let tool = template.field_index("tool_calls").unwrap();
//! assert_eq!(found.len(), 2);
//! assert_eq!(found.at(0).ending, Some(Ending::Open(tool))); // the tool call's open ended the text
//! assert_eq!(found.at(1).ending, Some(Ending::Close));
//! assert_eq!(found.at(1).value().map(|v| v.py_repr()).as_deref(), Some("{'name': 'f'}"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::ops::Range;

use crate::event::{Event, EventKind, MarkKind, Marks, RegionDetail, Step};
use crate::parser::ParseError;
use crate::template::Template;
use crate::value::{Dict, Place, Value};

mod compact;

pub use compact::{IntoIter, Iter, Regions};

/// One region of one field: where it opened, the text it received, where and how it ended,
/// and the values made of it. Ranges are byte ranges of the document (prefix + generation).
///
/// The values a region holds of its own (its value, parsed content, transformed value and
/// captures) sit behind one box allocated only when one is present: an audit's regions mostly
/// hold their values in the message, and a region is then 152 bytes instead of 264. Once such
/// a region has ended, [`Regions`] holds it in a 48-byte record.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    /// Index of the field in the template.
    pub field: usize,
    /// The open delimiter (empty, at its first character, for the implicit region).
    pub open: Range<usize>,
    /// The text routed to the region so far (with tracing, at the close: the body the
    /// content parser saw).
    pub body: Range<usize>,
    /// The close delimiter, or an empty range where the region ended; `None` while open.
    pub close: Option<Range<usize>>,
    /// How it ended; `None` while open.
    pub ending: Option<Ending>,
    /// Which step made the value unchanged (held once, as the value).
    pub kept_as_value: Step,
    /// Where the parsed content lies whole inside the value, when it is held there only.
    pub parsed_at: Option<Place>,
    /// The value is item `n` of the message's list under the field's name, and held there
    /// only (an audit's region of a repeating field).
    pub value_item: Option<usize>,
    /// Index of the open event in the events given.
    pub open_event: usize,
    /// Index of the close event, once closed.
    pub close_event: Option<usize>,
    /// The values held here, `None` when there are none.
    held: Option<Box<Held>>,
}

/// The values a [`Region`] holds of its own.
#[derive(Clone, Debug, Default, PartialEq)]
struct Held {
    captures: Vec<(String, Value)>,
    parsed: Option<Value>,
    transformed: Option<Value>,
    value: Option<Value>,
}

impl Held {
    fn is_empty(&self) -> bool {
        self.captures.is_empty()
            && self.parsed.is_none()
            && self.transformed.is_none()
            && self.value.is_none()
    }
}

/// A region's parsed content, from how its value was kept (`kept`), where the content lies
/// inside the value (`place`), the value and what the region holds of its own: the value
/// itself when it was kept as parsed, the place inside it, or the region's own copy.
pub(crate) fn parsed_of<'a>(
    kept: Step,
    place: Option<Place>,
    value: impl FnOnce() -> Option<&'a Value>,
    own: Option<&'a Value>,
) -> Option<&'a Value> {
    match (kept, place) {
        (Step::Parsed, _) => value(),
        (_, Some(place)) => place.get(value()?),
        _ => own,
    }
}

/// A region's transformed value, as [`parsed_of`] finds its parsed content.
pub(crate) fn transformed_of<'a>(
    kept: Step,
    value: impl FnOnce() -> Option<&'a Value>,
    own: Option<&'a Value>,
) -> Option<&'a Value> {
    match kept {
        Step::Transformed => value(),
        _ => own,
    }
}

/// Why a region ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Its own close delimiter matched.
    Close,
    /// The open delimiter of this field's region matched (the implicit region, or a region
    /// without a close, ends there).
    Open(usize),
    /// The stream ended first.
    EndOfStream,
    /// Its value could not be made; the parse error says why.
    Failed,
}

impl Region {
    /// A region of `field` opened by the delimiter at `open` (event `open_event`), with no
    /// text yet and nothing held.
    pub fn opened(field: usize, open: Range<usize>, open_event: usize) -> Region {
        let end = open.end;
        Region {
            field,
            open,
            body: end..end,
            close: None,
            ending: None,
            kept_as_value: Step::None,
            parsed_at: None,
            value_item: None,
            open_event,
            close_event: None,
            held: None,
        }
    }

    /// Named captures of the open and close delimiters (with tracing).
    pub fn captures(&self) -> &[(String, Value)] {
        self.held.as_deref().map_or(&[], |h| &h.captures)
    }

    /// The value the close event reported, when held here (`None` when it is held in the
    /// message: see [`Region::value_item`]; read it wherever it is with [`Region::value_in`]).
    pub fn value(&self) -> Option<&Value> {
        self.held.as_deref()?.value.as_ref()
    }

    /// What the content parser made of the body, when held here apart from the value (`None`
    /// when it is the value itself or lies inside it: read it with [`Region::parsed`]).
    pub fn own_parsed(&self) -> Option<&Value> {
        self.held.as_deref()?.parsed.as_ref()
    }

    /// The value after the transform, when held here apart from the value (read it with
    /// [`Region::transformed`]).
    pub fn own_transformed(&self) -> Option<&Value> {
        self.held.as_deref()?.transformed.as_ref()
    }

    /// Whether the region holds any value of its own (a value, parsed content, transformed
    /// value or capture).
    pub fn holds_values(&self) -> bool {
        self.held.is_some()
    }

    /// Sets the value held here.
    pub fn set_value(&mut self, value: Option<Value>) {
        self.update(|h| h.value = value);
    }

    /// Sets the parsed content held here apart from the value.
    pub fn set_own_parsed(&mut self, parsed: Option<Value>) {
        self.update(|h| h.parsed = parsed);
    }

    /// Sets the delimiters' captures.
    pub fn set_captures(&mut self, captures: Vec<(String, Value)>) {
        self.update(|h| h.captures = captures);
    }

    /// Changes the held values, allocating them only when something is held.
    fn update(&mut self, f: impl FnOnce(&mut Held)) {
        let mut held = self.held.take().unwrap_or_default();
        f(&mut held);
        if !held.is_empty() {
            self.held = Some(held);
        }
    }

    /// What the content parser made of the body (with tracing), when the region holds its
    /// value (see [`Region::parsed_in`]).
    pub fn parsed(&self) -> Option<&Value> {
        self.parsed_in(None, "")
    }

    /// The value after the transform (with tracing and a transform), when the region holds
    /// its value (see [`Region::transformed_in`]).
    pub fn transformed(&self) -> Option<&Value> {
        self.transformed_in(None, "")
    }

    /// The region's value, wherever it is held: in the region, or as item
    /// [`Region::value_item`] of `message`'s list under `field_name` (the name of the region's
    /// field).
    pub fn value_in<'a>(
        &'a self,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        match self.value_item {
            Some(i) => message?.get(field_name)?.as_list()?.get(i),
            None => self.value(),
        }
    }

    /// What the content parser made of the body (with tracing), `message` and `field_name` as
    /// for [`Region::value_in`].
    pub fn parsed_in<'a>(
        &'a self,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        parsed_of(
            self.kept_as_value,
            self.parsed_at,
            || self.value_in(message, field_name),
            self.own_parsed(),
        )
    }

    /// The value after the transform (with tracing and a transform), `message` and
    /// `field_name` as for [`Region::value_in`].
    pub fn transformed_in<'a>(
        &'a self,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        transformed_of(
            self.kept_as_value,
            || self.value_in(message, field_name),
            self.own_transformed(),
        )
    }

    /// Whether the region has a value (held here or in the message).
    pub fn has_value(&self) -> bool {
        self.value().is_some() || self.value_item.is_some()
    }

    /// Whether the region had closed (or failed).
    pub fn is_closed(&self) -> bool {
        self.ending.is_some()
    }

    /// Where capture `index` lies in `document`: its text found in the open delimiter, else in
    /// the close (`None` for an empty or non-string capture, or one found in neither).
    pub fn capture_span(&self, document: &str, index: usize) -> Option<Range<usize>> {
        let text = self
            .captures()
            .get(index)?
            .1
            .as_str()
            .filter(|t| !t.is_empty())?;
        let close = self.close.clone().unwrap_or(0..0);
        [&self.open, &close].into_iter().find_map(|delim| {
            let at = document.get(delim.clone())?.find(text)?;
            Some(delim.start + at..delim.start + at + text.len())
        })
    }
}

/// Pairs events into regions as they arrive; [`regions`] does it for a finished stream.
///
/// A region is held whole while it may still change: while it is open (it receives text, and
/// [`RegionBuilder::fail`] may end it), and after it ended with an empty close until the event
/// after it tells which open ended it. Regions end in the order they open, so those are the
/// last one or two; the others are settled into [`Regions`], compactly where they can be.
#[derive(Clone, Debug, Default)]
pub struct RegionBuilder {
    doc_len: usize,
    /// The regions that can no longer change.
    settled: Regions,
    /// The regions after them, in order.
    unsettled: Vec<Region>,
    live: Option<usize>,
    /// A region that ended with an empty close span: the open event that follows at the same
    /// place (if any) tells which field's open ended it.
    pending: Option<usize>,
}

impl RegionBuilder {
    /// A builder for a document of `doc_len` bytes (prefix + the whole generation).
    pub fn new(doc_len: usize) -> RegionBuilder {
        RegionBuilder {
            doc_len,
            ..RegionBuilder::default()
        }
    }

    /// Takes the event at `index` of the stream. Returns the region it belongs to, if any
    /// (discarded text belongs to none).
    pub fn push(&mut self, index: usize, event: &Event) -> Option<usize> {
        self.settle_pending(event);
        match &event.kind {
            EventKind::Close { value } => {
                let detail = event.detail.as_deref().cloned();
                self.close(index, event, value.clone(), detail)
            }
            _ => self.route(index, event),
        }
    }

    /// [`RegionBuilder::push`], moving a close event's value and detail into the region
    /// instead of copying them (the event is left with `None` as its value and no detail):
    /// for a caller done with the values in the events, as a long region's value is as long
    /// as its text.
    pub fn take(&mut self, index: usize, event: &mut Event) -> Option<usize> {
        self.settle_pending(event);
        match &mut event.kind {
            EventKind::Close { value } => {
                let value = std::mem::replace(value, Value::Null);
                let detail = event.detail.take().map(|d| *d);
                self.close(index, event, value, detail)
            }
            _ => self.route(index, event),
        }
    }

    /// A region that ended with an empty close: the event after it may say which open ended
    /// it.
    fn settle_pending(&mut self, event: &Event) {
        if let Some(p) = self.pending {
            let close = self.unsettled(p).close.clone().unwrap_or_default();
            if matches!(event.kind, EventKind::Open)
                && event.span.start == close.start
                && !event.span.is_empty()
            {
                self.unsettled(p).ending = Some(Ending::Open(event.field));
                self.pending = None;
            } else if event.span.start > close.start {
                self.pending = None;
            }
            self.settle();
        }
    }

    /// An event other than a close.
    fn route(&mut self, index: usize, event: &Event) -> Option<usize> {
        match &event.kind {
            EventKind::Open => {
                self.unsettled
                    .push(Region::opened(event.field, event.span.clone(), index));
                self.live = Some(self.len() - 1);
                self.live
            }
            EventKind::Chunk { .. } => {
                let r = self.live?;
                let body = &mut self.unsettled(r).body;
                if body.start == body.end {
                    *body = event.span.clone();
                } else {
                    body.end = event.span.end;
                }
                Some(r)
            }
            EventKind::Close { .. } | EventKind::Discard { .. } => None,
        }
    }

    /// A close event (its span) with its value and detail.
    fn close(
        &mut self,
        index: usize,
        event: &Event,
        value: Value,
        detail: Option<RegionDetail>,
    ) -> Option<usize> {
        let r = self.live.take()?;
        let doc_len = self.doc_len;
        let g = self.unsettled(r);
        g.close = Some(event.span.clone());
        g.close_event = Some(index);
        let mut held = Held {
            value: Some(value),
            ..Held::default()
        };
        if let Some(d) = detail {
            g.body = d.body;
            held.captures = d.captures;
            held.parsed =
                (d.kept_as_value != Step::Parsed && d.parsed_at.is_none()).then_some(d.parsed);
            held.transformed = d.transformed;
            g.kept_as_value = d.kept_as_value;
            g.parsed_at = d.parsed_at;
            if d.value_item.is_some() {
                held.value = None;
                g.value_item = d.value_item;
            }
        }
        g.held = (!held.is_empty()).then(|| Box::new(held));
        let pending = event.span.is_empty() && event.span.start < doc_len;
        g.ending = Some(if event.span.is_empty() && !pending {
            Ending::EndOfStream
        } else {
            // An empty close: until an open at the same place says otherwise.
            Ending::Close
        });
        if pending {
            // A region pending before settles as it is.
            self.pending = Some(r);
        }
        self.settle();
        Some(r)
    }

    /// Marks the open region as the one that failed, when the parse error is about its field.
    /// Its body is the one the error names, else the rest of the document (the parser had
    /// taken all the text it received into it).
    pub fn fail(&mut self, template: &Template, error: &ParseError) -> Option<usize> {
        let r = self.live?;
        let doc_len = self.doc_len;
        let g = self.unsettled(r);
        if error.field.as_deref() != Some(template.fields()[g.field].name.as_str()) {
            return None;
        }
        g.body = match &error.body {
            Some(b) => b.clone(),
            None => g.open.end..doc_len.max(g.open.end),
        };
        let end = g.body.end;
        g.close = Some(end..end);
        g.ending = Some(Ending::Failed);
        self.live = None;
        self.settle();
        Some(r)
    }

    /// Region `r`, which has not settled.
    fn unsettled(&mut self, r: usize) -> &mut Region {
        &mut self.unsettled[r - self.settled.len()]
    }

    /// Settles the regions that can no longer change, in order: ended, and not waiting for
    /// the event after them.
    fn settle(&mut self) {
        while self.unsettled.first().is_some_and(|g| g.is_closed())
            && self.pending != Some(self.settled.len())
        {
            let g = self.unsettled.remove(0);
            self.settled.push(g);
        }
    }

    /// The region receiving text, if one is open.
    pub fn live(&self) -> Option<usize> {
        self.live
    }

    /// The number of regions so far.
    pub fn len(&self) -> usize {
        self.settled.len() + self.unsettled.len()
    }

    /// Whether no region has opened yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Region `r` of those so far, in the order they opened (the live one lent, as held
    /// whole; see [`Regions::get`] for the others).
    pub fn get(&self, r: usize) -> Option<Cow<'_, Region>> {
        match r.checked_sub(self.settled.len()) {
            Some(u) => self.unsettled.get(u).map(Cow::Borrowed),
            None => self.settled.get(r),
        }
    }

    /// The regions, in the order they opened.
    pub fn into_regions(self) -> Regions {
        let mut regions = self.settled;
        for g in self.unsettled {
            regions.push(g);
        }
        regions
    }
}

/// The regions of a stream's events over a document of `doc_len` bytes.
pub fn regions(events: &[Event], doc_len: usize) -> Regions {
    let mut b = RegionBuilder::new(doc_len);
    for (i, e) in events.iter().enumerate() {
        b.push(i, e);
    }
    b.into_regions()
}

/// The region each event belongs to, as [`RegionBuilder::push`] (or `take`) answers for it,
/// for a caller that has the regions already: every open starts the next region, chunks go to
/// the open one and a close ends it (discarded text, and text while none is open, belong to
/// none).
pub fn owners(events: &[Event]) -> impl Iterator<Item = Option<usize>> + '_ {
    owned(events.iter().map(|e| e.kind.mark()))
}

/// [`owners`] of the marks an audit keeps (see [`crate::Audit::marks`]).
pub fn mark_owners(marks: &Marks) -> impl Iterator<Item = Option<usize>> + '_ {
    owned(marks.iter().map(|m| m.kind()))
}

fn owned(kinds: impl Iterator<Item = MarkKind>) -> impl Iterator<Item = Option<usize>> {
    let (mut next, mut live) = (0, None);
    kinds.map(move |kind| match kind {
        MarkKind::Open => {
            live = Some(next);
            next += 1;
            live
        }
        MarkKind::Chunk => live,
        MarkKind::Close => live.take(),
        MarkKind::Discard => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::{Events, Parser};

    #[test]
    fn owners_are_the_regions_the_builder_gives_each_event() {
        let t = Template::from_json_str(
            r#"{"start_anchor": "A:", "fields": {
                "content": {"close": "<|end|>"},
                "thinking": {"open": "<t>", "close": "</t>"},
                "tool_calls": {"open": "<c>", "close": "</c>", "repeats": true}
            }}"#,
        )
        .unwrap();
        let text = "hi<t>hm</t>so<c>x</c> tail<|end|>after<c>y";
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        for chunks in [vec![text], pieces] {
            let (events, len) = traced(&t, "A:", &chunks);
            let mut b = RegionBuilder::new(len);
            let built: Vec<Option<usize>> = events
                .iter()
                .enumerate()
                .map(|(i, e)| b.push(i, e))
                .collect();
            assert_eq!(owners(&events).collect::<Vec<_>>(), built);
            assert!(built.iter().flatten().count() > 4);
        }
    }

    fn traced(template: &Template, prefix: &str, chunks: &[&str]) -> (Vec<Event>, usize) {
        let mut p = Parser::with_events(template, Some(prefix), None, Events::Trace).unwrap();
        let mut events = p.initial_events().to_vec();
        for c in chunks {
            events.extend(p.feed(c).unwrap());
        }
        events.extend(p.finalize().unwrap().1);
        (events, prefix.len() + chunks.concat().len())
    }

    #[test]
    fn endings_are_told_apart_whatever_the_chunking() {
        let t = Template::from_json_str(
            r#"{"start_anchor": "A:", "fields": {
                "content": {},
                "thinking": {"open": "<t>", "close": "</t>"},
                "tool_calls": {"open": "<c>", "repeats": true}
            }}"#,
        )
        .unwrap();
        let text = "hi<t>hm</t>so<c>x";
        let whole = traced(&t, "A:", &[text]);
        let pieces: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let split = traced(&t, "A:", &pieces);
        for (events, len) in [whole, split] {
            let r = regions(&events, len);
            let doc = format!("A:{text}");
            let got: Vec<(&str, Option<Ending>, &str)> = r
                .iter()
                .map(|g| {
                    let name = t.fields()[g.field].name.as_str();
                    (name, g.ending.clone(), &doc[g.body.clone()])
                })
                .collect();
            assert_eq!(
                got,
                [
                    ("content", Some(Ending::Open(1)), "hi"),
                    ("thinking", Some(Ending::Close), "hm"),
                    ("content", Some(Ending::Open(2)), "so"),
                    ("tool_calls", Some(Ending::EndOfStream), "x"),
                ]
            );
        }
    }

    #[test]
    fn a_failing_region_is_marked_with_its_body() {
        let t = Template::from_json_str(
            r#"{"start_anchor": "A:", "fields": {"content": {"open": "<j>", "close": "</j>", "content": "json"}}}"#,
        )
        .unwrap();
        let doc = "A:<j>{oops</j>";
        let mut p = Parser::with_events(&t, Some("A:"), None, Events::Trace).unwrap();
        let mut b = RegionBuilder::new(doc.len());
        let events = p.feed("<j>{oo").unwrap();
        for (i, e) in events.iter().enumerate() {
            b.push(i, e);
        }
        assert_eq!(b.live(), Some(0));
        let err = p.feed("ps</j>").unwrap_err();
        assert_eq!(b.fail(&t, &err), Some(0));
        let g = b.get(0).unwrap();
        assert_eq!(
            (g.ending.clone(), g.open.clone()),
            (Some(Ending::Failed), 2..5)
        );
        assert_eq!(&doc[g.body.clone()], "{oops", "{err:?}");
        assert_eq!(b.live(), None);
    }
}

#[cfg(test)]
mod compact_tests {
    use super::*;
    use crate::event::EventSink;
    use crate::parser::{Events, Options, Parser};

    /// A builder fed as the audit feeds it, counting the regions it held whole at most.
    struct Watch {
        model: RegionBuilder,
        events: usize,
        most_unsettled: usize,
    }

    impl EventSink for Watch {
        fn record(&mut self, mut event: Event) {
            self.model.take(self.events, &mut event);
            self.events += 1;
            self.most_unsettled = self.most_unsettled.max(self.model.unsettled.len());
        }
    }

    #[test]
    fn a_closed_region_without_values_of_its_own_is_held_in_its_compact_record() {
        let t = Template::from_json_str(
            r#"{"start_anchor": "<s>", "fields": {
                "content": {"close": "<e>"},
                "calls": {"open": "<c>", "close": "</c>", "content": "json", "repeats": true,
                          "transform": {"type": "function", "function": "{content}"}}}}"#,
        )
        .unwrap();
        let calls: String = (0..1000)
            .map(|i| format!("<c>{{\"a\": {i}}}</c>"))
            .collect();
        let generation = format!("Let me see.{calls}<e>");
        let options = Options {
            events: Events::Spans,
            whole_text: true,
            token_ids: false,
            values_once: true,
            lists_in_events: false,
        };
        let mut p = Parser::with_options(&t, Some("<s>"), None, options).unwrap();
        let mut w = Watch {
            model: RegionBuilder::new(3 + generation.len()),
            events: 0,
            most_unsettled: 0,
        };
        for e in p.initial_events().to_vec() {
            w.record(e);
        }
        p.feed_into(&generation, &mut w).unwrap();
        let message = p.finalize_with(&mut w, "").unwrap();
        // Only the live region (and one waiting to be told how it ended) is held whole while
        // the stream goes on.
        assert!(w.most_unsettled <= 2, "{} held whole", w.most_unsettled);
        let mut regions = w.model.into_regions();
        regions.shrink_to_fit();
        assert_eq!(regions.len(), 1001);
        // The answer holds its value; each call's value is the message's item.
        let whole: Vec<usize> = (0..regions.len())
            .filter(|&r| !regions.is_compact(r))
            .collect();
        assert_eq!(whole, [0]);
        assert!(regions.at(0).holds_values());
        for r in 1..regions.len() {
            let g = regions.at(r);
            assert!(!g.holds_values() && g.is_closed());
            assert_eq!(g.value_item, Some(r - 1));
            let value = regions.value_in(r, Some(&message), "calls").unwrap();
            assert!(std::ptr::eq(
                value,
                &message["calls"].as_list().unwrap()[r - 1]
            ));
        }
        // 48 bytes a compact region (its record and where it is), 156 for the one held whole,
        // and the one place of the calls' parsed content in their values.
        assert_eq!(regions.record_bytes(), 1000 * 48 + 156 + 16);
    }
}

#[cfg(test)]
mod size {
    #[test]
    fn a_region_without_values_of_its_own_is_small() {
        // Regions still open, and those holding values, are held whole: the values a region
        // rarely holds of its own sit behind one optional box.
        assert_eq!(std::mem::size_of::<super::Region>(), 152);
    }
}
