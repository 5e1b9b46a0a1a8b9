//! Stream replay: one generation fed through the parser with a chunking, recorded step by step
//! so that a view can move to any step and show what the stream looked like there.
//!
//! Step 0 is the prefix (the initial events), then one step per feed, then the finalize step.
//! The whole stream is run once, in order, when the replay is built; each step keeps only what
//! it changed, in a few machine words (where its chunk, events and held-back text end, the open
//! region); [`Replay::step`] expands that into a [`Step`]. The message a
//! client would have built is snapshotted now and then, so any step is reconstructed from the
//! nearest snapshot and the events since. A snapshot is taken once at least [`SNAPSHOT_EVERY`]
//! regions closed since the last one *and* the values stored since then outnumber the values in
//! the message: copying snapshots then costs no more than storing the values did (linear in the
//! stream), and rebuilding any step costs about two copies of its message.
//!
//! Offsets are byte offsets into the replay's *document*: the prefix followed by the text that
//! was actually fed (which differs from the generation only for byte chunkings that cut a
//! character in two, see [`FedChunk`]).

mod client;
mod held;
mod paint;

use std::borrow::Cow;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::chunking::Chunking;
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::parser::{Events, ParseError, Parser};
use rtbench_engine::region::RegionBuilder;
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};

pub use crate::paint::{Paint, Segment};
pub use client::{LiveRegion, PartialMessage};
pub use held::{Candidate, CandidateState, Role};
pub use paint::RegionView;

use client::Client;

/// The fewest closed regions between two snapshots of the client's message.
pub const SNAPSHOT_EVERY: usize = 64;

/// How far a replay being built on another thread has got, and a way to stop it.
#[derive(Debug, Default)]
pub struct Progress {
    /// Generation bytes streamed so far (`usize::MAX` once every feed is done).
    pub streamed: AtomicUsize,
    /// Set to stop the build: [`Replay::build`] returns `None` within [`PROGRESS_EVERY`]
    /// feeds.
    pub cancelled: AtomicBool,
}

/// Feeds between two looks at [`Progress`].
pub const PROGRESS_EVERY: usize = 1024;

/// How feeding the generation ended.
enum Fed {
    All,
    Failed,
    Cancelled,
}

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

impl FedChunk {
    /// How the chunk was cut from the generation, when that needs saying: `None` for a chunk
    /// fed as it was written.
    pub fn note(&self) -> Option<String> {
        match self.replaced {
            0 => None,
            1 => Some(
                "a character cut in two by the byte chunking: its piece here was fed as U+FFFD"
                    .into(),
            ),
            n => Some(format!(
                "{n} characters cut by the byte chunking: their pieces here were fed as U+FFFD"
            )),
        }
    }
}

/// One step of the stream and the parser's state after it (built on demand by
/// [`Replay::step`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub index: usize,
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
    pub error: Option<ParseError>,
}

/// What is stored per step: everything a [`Step`] holds, as ends of ranges whose starts are the
/// previous step's ends.
#[derive(Clone, Copy, Debug)]
struct Record {
    kind: Kind,
    /// End of the step's events in the timeline.
    events_end: usize,
    held_start: usize,
    /// End of the fed document (also the end of the held text and of this step's chunk).
    fed_to: usize,
    /// End of the generation bytes consumed so far.
    source_end: usize,
    /// Where the open region's body ends (when `live` is set).
    live_end: usize,
    current: u32,
    live: u32,
    /// Broken characters replaced in this step's chunk.
    replaced: u32,
}

impl Record {
    /// A step that changed nothing yet, with the document fed up to `fed_to`.
    fn empty(kind: Kind, fed_to: usize) -> Record {
        Record {
            kind,
            events_end: 0,
            held_start: fed_to,
            fed_to,
            source_end: 0,
            live_end: 0,
            current: NONE,
            live: NONE,
            replaced: 0,
        }
    }

    /// Takes the parser's held-back text and open field as they are now.
    fn observe(&mut self, parser: &Parser) {
        self.held_start = parser.held().start;
        self.current = pack(parser.current_field());
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Prefix,
    Feed,
    Finalize,
}

/// `None` as a stored index.
const NONE: u32 = u32::MAX;

fn pack(index: Option<usize>) -> u32 {
    index.and_then(|i| u32::try_from(i).ok()).unwrap_or(NONE)
}

fn unpack(index: u32) -> Option<usize> {
    (index != NONE).then_some(index as usize)
}

/// An event with the step that produced it.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEvent {
    pub step: usize,
    pub event: Event,
}

/// One region of the stream (the engine's region model); its open and close event indices
/// are indices into [`Replay::timeline`].
pub use rtbench_engine::region::Region;

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
    template: Template,
    chunking: Chunking,
    document: String,
    prefix_len: usize,
    origin: usize,
    steps: Vec<Record>,
    timeline: Vec<TimelineEvent>,
    regions: RegionBuilder,
    /// Text that went to no region: `(step, range)`, in document order.
    discarded: Vec<(usize, Range<usize>)>,
    /// The client's settled message after `timeline[..upto]`, every few closes.
    snapshots: Vec<(usize, Dict)>,
    /// Closes and work since the last snapshot.
    since_snapshot: (usize, usize),
    outcome: Outcome,
}

impl Replay {
    /// Streams `generation` after `prefix` (`""` opts out of a prefix) with the chunking and
    /// records every step. A parse error is an outcome, not a failure: the replay stops at the
    /// step that failed.
    pub fn new(
        template: Template,
        prefix: &str,
        generation: &str,
        tools: Option<&Value>,
        chunking: Chunking,
    ) -> Replay {
        let never = Progress::default();
        Replay::build(template, prefix, generation, tools, chunking, &never)
            .expect("a replay nobody cancels is built")
    }

    /// [`Replay::new`] for a build on another thread: `progress` tells how many generation
    /// bytes have been streamed, and the build stops (`None`) soon after it is cancelled.
    pub fn build(
        template: Template,
        prefix: &str,
        generation: &str,
        tools: Option<&Value>,
        chunking: Chunking,
        progress: &Progress,
    ) -> Option<Replay> {
        let mut replay = Replay {
            template: template.clone(),
            chunking,
            document: String::with_capacity(prefix.len() + generation.len()),
            prefix_len: prefix.len(),
            origin: 0,
            steps: Vec::new(),
            timeline: Vec::new(),
            regions: RegionBuilder::default(),
            discarded: Vec::new(),
            snapshots: vec![(0, template.defaults().clone())],
            since_snapshot: (0, 0),
            outcome: Outcome::Message(Dict::new()),
        };
        replay.document.push_str(prefix);
        let feeds = feeds(&replay.chunking, generation);
        let fed_len: usize = feeds.iter().map(|(_, text, _)| text.len()).sum();
        replay.regions = RegionBuilder::new(prefix.len() + fed_len);
        let mut client = Client::new(&template);
        let mut parser = match Parser::with_events(&template, Some(prefix), tools, Events::Trace) {
            Ok(p) => p,
            Err(error) => {
                let fed_to = replay.document.len();
                replay.steps.push(Record::empty(Kind::Prefix, fed_to));
                replay.outcome = Outcome::Failed { step: 0, error };
                return Some(replay);
            }
        };
        replay.origin = parser.origin();
        let step = replay.next_record(Kind::Prefix, &parser);
        replay.record(step, parser.initial_events().to_vec(), &mut client);
        match replay.feed_all(&mut parser, feeds, &mut client, progress) {
            Fed::All => replay.finish(&mut parser, &mut client),
            Fed::Failed => {}
            Fed::Cancelled => return None,
        }
        Some(replay)
    }

    /// Feeds the generation chunk by chunk, one step each.
    fn feed_all(
        &mut self,
        parser: &mut Parser,
        feeds: Vec<(Range<usize>, Cow<'_, str>, usize)>,
        client: &mut Client,
        progress: &Progress,
    ) -> Fed {
        let mut failed = false;
        for (i, (source, text, replaced)) in feeds.into_iter().enumerate() {
            if i % PROGRESS_EVERY == 0 {
                if progress.cancelled.load(Ordering::Relaxed) {
                    return Fed::Cancelled;
                }
                progress.streamed.store(source.start, Ordering::Relaxed);
            }
            self.document.push_str(&text);
            if failed {
                // Never fed: kept in the document so that a view shows it as such.
                continue;
            }
            let mut step = self.next_record(Kind::Feed, parser);
            step.source_end = source.end;
            step.replaced = u32::try_from(replaced).unwrap_or(u32::MAX);
            match parser.feed(&text) {
                Ok(events) => {
                    step.observe(parser);
                    self.record(step, events, client);
                }
                Err(error) => {
                    self.fail(step, error, parser);
                    failed = true;
                }
            }
        }
        progress.streamed.store(usize::MAX, Ordering::Relaxed);
        if failed { Fed::Failed } else { Fed::All }
    }

    /// The finalize step and the outcome.
    fn finish(&mut self, parser: &mut Parser, client: &mut Client) {
        let mut step = self.next_record(Kind::Finalize, parser);
        match parser.finalize() {
            Ok((message, events)) => {
                step.observe(parser);
                self.record(step, events, client);
                self.outcome = Outcome::Message(message);
            }
            Err(error) => self.fail(step, error, parser),
        }
    }

    /// The record of the next step before its events: carried over from the previous step,
    /// with the parser's state as it is now.
    fn next_record(&self, kind: Kind, parser: &Parser) -> Record {
        let fed_to = self.document.len();
        let mut record = match self.steps.last() {
            Some(prev) => Record {
                source_end: prev.source_end,
                live_end: prev.live_end,
                live: prev.live,
                ..Record::empty(kind, fed_to)
            },
            None => Record::empty(kind, fed_to),
        };
        record.events_end = self.timeline.len();
        record.observe(parser);
        record
    }

    /// Adds a step with its events, updating the regions and the client's snapshots.
    fn record(&mut self, mut record: Record, events: Vec<Event>, client: &mut Client) {
        let step = self.steps.len();
        for event in events {
            let index = self.timeline.len();
            self.regions.push(index, &event);
            if let EventKind::Discard { .. } = event.kind {
                self.discarded.push((step, event.span.clone()));
            }
            let work = client.apply(&self.template, &event);
            if work > 0 {
                self.since_snapshot.0 += 1;
                self.since_snapshot.1 += work;
                let (closes, work) = self.since_snapshot;
                if closes >= SNAPSHOT_EVERY && work >= client.size {
                    self.snapshots.push((index + 1, client.settled.clone()));
                    self.since_snapshot = (0, 0);
                }
            }
            self.timeline.push(TimelineEvent { step, event });
        }
        record.events_end = self.timeline.len();
        let live = self.regions.live();
        record.live = pack(live);
        record.live_end = live.map_or(0, |r| self.regions.regions()[r].body.end);
        self.steps.push(record);
    }

    /// Adds the step that failed and ends the replay there.
    fn fail(&mut self, mut record: Record, error: ParseError, parser: &Parser) {
        record.observe(parser);
        self.steps.push(record);
        self.outcome = Outcome::Failed {
            step: self.steps.len() - 1,
            error,
        };
    }

    pub fn template(&self) -> &Template {
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

    /// How many steps there are (the prefix, the feeds, finalize; fewer after a failure).
    pub fn step_count(&self) -> usize {
        self.steps.len()
    }

    /// Every step in order.
    pub fn steps(&self) -> impl Iterator<Item = Step> + '_ {
        (0..self.steps.len()).map(|i| self.step(i))
    }

    /// A step with the parser's state after it; panics when out of range, like indexing.
    pub fn step(&self, step: usize) -> Step {
        let r = &self.steps[step];
        let prev = step.checked_sub(1).map(|p| &self.steps[p]);
        let kind = match r.kind {
            Kind::Prefix => StepKind::Prefix,
            Kind::Feed => StepKind::Feed { index: step - 1 },
            Kind::Finalize => StepKind::Finalize,
        };
        let chunk = (r.kind == Kind::Feed).then(|| FedChunk {
            range: prev.map_or(0, |p| p.fed_to)..r.fed_to,
            source: prev.map_or(0, |p| p.source_end)..r.source_end,
            replaced: r.replaced as usize,
        });
        let error = match &self.outcome {
            Outcome::Failed { step: s, error } if *s == step => Some(error.clone()),
            _ => None,
        };
        Step {
            index: step,
            kind,
            chunk,
            events: self.events_range(step),
            held: r.held_start..r.fed_to,
            fed_to: r.fed_to,
            current: unpack(r.current),
            live: unpack(r.live).map(|l| (l, r.live_end)),
            error,
        }
    }

    /// The timeline range of a step's events.
    fn events_range(&self, step: usize) -> Range<usize> {
        let start = step.checked_sub(1).map_or(0, |p| self.steps[p].events_end);
        start..self.steps[step].events_end
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
        &self.timeline[self.events_range(step)]
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
            .fields()
            .get(field)
            .map_or("", |f| f.name.as_str())
    }

    /// Every region of the whole stream, in the order they opened.
    pub fn regions(&self) -> &[Region] {
        self.regions.regions()
    }

    /// The text fed at a step (empty for the prefix and finalize steps).
    pub fn chunk_text(&self, step: usize) -> &str {
        match self.steps[step].kind {
            Kind::Feed => &self.document[self.steps[step - 1].fed_to..self.steps[step].fed_to],
            _ => "",
        }
    }

    /// The text held back after a step.
    pub fn held_text(&self, step: usize) -> &str {
        let r = &self.steps[step];
        &self.document[r.held_start..r.fed_to]
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
