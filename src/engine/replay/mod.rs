//! Stream replay: one generation fed through the parser with a chunking, recorded step by step
//! so that a view can move to any step and show what the stream looked like there.
//!
//! Step 0 is the prefix (the initial events), then one step per feed, then the finalize step.
//! The whole stream is run once, in order, when the replay is built; each step keeps only what
//! it changed (its chunk, its events, the held-back range, the open region), and the message a
//! client would have built is snapshotted every [`SNAPSHOT_EVERY`] closed regions, so any step
//! is reconstructed from the nearest snapshot and a handful of events.
//!
//! Offsets are byte offsets into the replay's *document*: the prefix followed by the text that
//! was actually fed (which differs from the generation only for byte chunkings that cut a
//! character in two, see [`FedChunk`]).

mod client;
mod held;
mod paint;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use crate::engine::chunking::Chunking;
use crate::engine::event::{Event, EventKind};
use crate::engine::parser::{Events, ParseError, Parser};
use crate::engine::template::Template;
use crate::engine::value::{Dict, Value};

pub use client::{LiveRegion, PartialMessage};
pub use held::{Candidate, CandidateState, Role};
pub use paint::{Paint, RegionView, Segment};

use client::Client;

/// How many closed regions pass between two snapshots of the client's message.
pub const SNAPSHOT_EVERY: usize = 64;

/// What a step of the stream did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// The parser consumed the prefix (after its last start anchor).
    Prefix,
    /// The `index`-th feed (0-based).
    Feed { index: usize },
    /// End of stream.
    Finalize,
}

/// The text one feed delivered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FedChunk {
    /// Where the fed text lies in the document.
    pub range: Range<usize>,
    /// The bytes of the generation it was made from.
    pub source: Range<usize>,
    /// How many broken characters were replaced by U+FFFD: a byte chunking that cuts a
    /// character in two decodes each piece on its own, so the parser sees U+FFFD instead of
    /// that character (0 for every other chunking, which cut at character boundaries).
    pub replaced: usize,
}

/// One step of the stream and the parser's state after it.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub kind: StepKind,
    /// The text fed at this step (feed steps only).
    pub chunk: Option<FedChunk>,
    /// This step's events: a range of [`Replay::timeline`].
    pub events: Range<usize>,
    /// Text received but held back after the step (a delimiter may start there); after a
    /// failed step, the text the parser had not routed when it stopped.
    pub held: Range<usize>,
    /// How far the document has been fed after the step.
    pub fed_to: usize,
    /// The field receiving text after the step, if a region is open.
    pub current: Option<usize>,
    /// The region open after the step (an index into [`Replay::regions`]) and where its body
    /// ends at this step.
    pub live: Option<(usize, usize)>,
    /// The step failed: the stream stops here.
    pub error: Option<Box<ParseError>>,
}

/// An event with the step that produced it.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEvent {
    pub step: usize,
    pub event: Event,
}

/// One region of the stream: where it opened, what it received and where it closed.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub field: usize,
    /// The open delimiter (empty, at the first character, for the implicit region).
    pub open: Range<usize>,
    /// The text routed to the region by the end of the replay.
    pub body: Range<usize>,
    /// The close delimiter (empty where another region's open or the end of stream ended it).
    pub close: Option<Range<usize>>,
    /// The steps at which it opened and closed.
    pub opened_at: usize,
    pub closed_at: Option<usize>,
    /// Timeline indices of its open and close events.
    pub open_event: usize,
    pub close_event: Option<usize>,
}

/// How the stream ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Finalize returned this message.
    Message(Dict),
    /// A step failed (the prefix, a feed or finalize).
    Failed { step: usize, error: ParseError },
}

/// A recorded stream.
#[derive(Clone, Debug)]
pub struct Replay {
    template: Arc<Template>,
    chunking: Chunking,
    document: String,
    prefix_len: usize,
    origin: usize,
    steps: Vec<Step>,
    timeline: Vec<TimelineEvent>,
    regions: Vec<Region>,
    /// Text that went to no region: `(step, range)`, in document order.
    discarded: Vec<(usize, Range<usize>)>,
    /// The client's settled message after `timeline[..upto]`, every few closes.
    snapshots: Vec<(usize, Dict)>,
    outcome: Outcome,
}

impl Replay {
    /// Streams `generation` after `prefix` (`""` opts out of a prefix) with the chunking and
    /// records every step. A parse error is an outcome, not a failure: the replay stops at the
    /// step that failed.
    pub fn new(
        template: Arc<Template>,
        prefix: &str,
        generation: &str,
        tools: Option<&Value>,
        chunking: Chunking,
    ) -> Replay {
        let mut replay = Replay {
            template: Arc::clone(&template),
            chunking,
            document: String::with_capacity(prefix.len() + generation.len()),
            prefix_len: prefix.len(),
            origin: 0,
            steps: Vec::new(),
            timeline: Vec::new(),
            regions: Vec::new(),
            discarded: Vec::new(),
            snapshots: vec![(0, template.defaults.clone())],
            outcome: Outcome::Message(Dict::new()),
        };
        replay.document.push_str(prefix);
        let mut client = Client::new(&template);
        let mut parser = match Parser::with_events(template, Some(prefix), tools, Events::Trace) {
            Ok(p) => p,
            Err(error) => {
                replay.fail(StepKind::Prefix, None, error, None);
                return replay;
            }
        };
        replay.origin = parser.origin();
        let initial = parser.initial_events().to_vec();
        replay.record(StepKind::Prefix, None, initial, &parser, &mut client);
        for (index, (source, text, replaced)) in
            feeds(&replay.chunking, generation).into_iter().enumerate()
        {
            let start = replay.document.len();
            replay.document.push_str(&text);
            let chunk = FedChunk {
                range: start..replay.document.len(),
                source,
                replaced,
            };
            match parser.feed(&text) {
                Ok(events) => {
                    let kind = StepKind::Feed { index };
                    replay.record(kind, Some(chunk), events, &parser, &mut client);
                }
                Err(error) => {
                    let kind = StepKind::Feed { index };
                    replay.fail(kind, Some(chunk), error, Some(&parser));
                    return replay;
                }
            }
        }
        match parser.finalize() {
            Ok((message, events)) => {
                replay.record(StepKind::Finalize, None, events, &parser, &mut client);
                replay.outcome = Outcome::Message(message);
            }
            Err(error) => replay.fail(StepKind::Finalize, None, error, Some(&parser)),
        }
        replay
    }

    /// Adds a step with its events, updating the regions and the client's snapshots.
    fn record(
        &mut self,
        kind: StepKind,
        chunk: Option<FedChunk>,
        events: Vec<Event>,
        parser: &Parser,
        client: &mut Client,
    ) {
        let step = self.steps.len();
        let first = self.timeline.len();
        let mut live = self.steps.last().and_then(|s| s.live).map(|(r, _)| r);
        for event in events {
            let index = self.timeline.len();
            self.track_region(step, index, &event, &mut live);
            if client.apply(&self.template, &event) && client.closes.is_multiple_of(SNAPSHOT_EVERY)
            {
                self.snapshots.push((index + 1, client.settled.clone()));
            }
            self.timeline.push(TimelineEvent { step, event });
        }
        self.steps.push(Step {
            kind,
            chunk,
            events: first..self.timeline.len(),
            held: parser.held(),
            fed_to: self.document.len(),
            current: parser.current_field(),
            live: live.map(|r| (r, self.regions[r].body.end)),
            error: None,
        });
    }

    /// Follows regions through one event.
    fn track_region(&mut self, step: usize, index: usize, event: &Event, live: &mut Option<usize>) {
        match &event.kind {
            EventKind::Open => {
                let end = event.span.end;
                self.regions.push(Region {
                    field: event.field,
                    open: event.span.clone(),
                    body: end..end,
                    close: None,
                    opened_at: step,
                    closed_at: None,
                    open_event: index,
                    close_event: None,
                });
                *live = Some(self.regions.len() - 1);
            }
            EventKind::Chunk { .. } => {
                if let Some(r) = *live {
                    self.regions[r].body.end = event.span.end;
                }
            }
            EventKind::Close { .. } => {
                if let Some(r) = live.take() {
                    let region = &mut self.regions[r];
                    region.close = Some(event.span.clone());
                    region.closed_at = Some(step);
                    region.close_event = Some(index);
                }
            }
            EventKind::Discard { .. } => self.discarded.push((step, event.span.clone())),
        }
    }

    /// Adds the step that failed and ends the replay there.
    fn fail(
        &mut self,
        kind: StepKind,
        chunk: Option<FedChunk>,
        error: ParseError,
        parser: Option<&Parser>,
    ) {
        let step = self.steps.len();
        let fed_to = self.document.len();
        let at = self.timeline.len();
        let live = self.steps.last().and_then(|s| s.live);
        self.steps.push(Step {
            kind,
            chunk,
            events: at..at,
            held: parser.map_or(fed_to..fed_to, Parser::held),
            fed_to,
            current: parser.and_then(Parser::current_field),
            live,
            error: Some(Box::new(error.clone())),
        });
        self.outcome = Outcome::Failed { step, error };
    }

    pub fn template(&self) -> &Arc<Template> {
        &self.template
    }

    pub fn chunking(&self) -> &Chunking {
        &self.chunking
    }

    /// The prefix followed by the fed text.
    pub fn document(&self) -> &str {
        &self.document
    }

    /// Where the generation starts in the document.
    pub fn prefix_len(&self) -> usize {
        self.prefix_len
    }

    /// Where the parsed text starts (after the prefix's last start anchor).
    pub fn origin(&self) -> usize {
        self.origin
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The step; panics when out of range, like slice indexing.
    pub fn step(&self, step: usize) -> &Step {
        &self.steps[step]
    }

    pub fn last_step(&self) -> usize {
        self.steps.len() - 1
    }

    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Every event of the stream in order, with the step that produced it.
    pub fn timeline(&self) -> &[TimelineEvent] {
        &self.timeline
    }

    /// The events of one step.
    pub fn events(&self, step: usize) -> &[TimelineEvent] {
        &self.timeline[self.steps[step].events.clone()]
    }

    /// One step's events as the reference's dicts (trace-only events left out).
    pub fn reference_events(&self, step: usize) -> Vec<Value> {
        self.events(step)
            .iter()
            .filter_map(|t| t.event.to_value(self.field_name(t.event.field)))
            .collect()
    }

    /// A field's name (`""` for text that went to no field).
    pub fn field_name(&self, field: usize) -> &str {
        self.template
            .fields
            .get(field)
            .map_or("", |f| f.name.as_str())
    }

    /// Every region of the whole stream, in the order they opened.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The text fed at a step (empty for the prefix and finalize steps).
    pub fn chunk_text(&self, step: usize) -> &str {
        self.steps[step]
            .chunk
            .as_ref()
            .map_or("", |c| &self.document[c.range.clone()])
    }

    /// The text held back after a step.
    pub fn held_text(&self, step: usize) -> &str {
        &self.document[self.steps[step].held.clone()]
    }

    /// The step that fed the document byte at `offset` (0, the prefix step, for the prefix;
    /// the last feed for offsets past the end).
    pub fn step_feeding(&self, offset: usize) -> usize {
        if offset < self.prefix_len {
            return 0;
        }
        let i = self.steps.partition_point(|s| s.fed_to <= offset);
        i.min(self.last_step())
    }
}

/// The feeds a chunking makes of the generation: the source byte range, the text fed and how
/// many broken characters it replaced.
fn feeds<'a>(chunking: &Chunking, text: &'a str) -> Vec<(Range<usize>, Cow<'a, str>, usize)> {
    if let Chunking::Bytes(n) = chunking {
        let n = (*n).max(1);
        return (0..text.len())
            .step_by(n)
            .map(|start| {
                let range = start..(start + n).min(text.len());
                let bytes = &text.as_bytes()[range.clone()];
                let replaced = bytes
                    .utf8_chunks()
                    .filter(|c| !c.invalid().is_empty())
                    .count();
                (range, String::from_utf8_lossy(bytes), replaced)
            })
            .collect();
    }
    let mut start = 0;
    let mut out = Vec::new();
    for end in chunking.cuts(text).into_iter().chain([text.len()]) {
        // Cuts that go backwards or fall inside a character are ignored.
        if end > start && text.is_char_boundary(end) {
            out.push((start..end, Cow::Borrowed(&text[start..end]), 0));
            start = end;
        }
    }
    out
}
