//! Stream replay: one generation fed through the parser with a chunking, recorded step by step
//! so that a view can move to any step and show what the stream looked like there.
//!
//! Step 0 is the prefix (the initial events), then one step per feed, then the finalize step.
//! The whole stream is run once, in order, when the replay is built, and what it keeps grows
//! with the text by a small factor whatever the chunking (a chunk-size-1 replay has a step per
//! character):
//! - each step is a few bytes of the `index` (where its chunk, events and held-back text end,
//!   the open field and the open body's end), which [`Replay::step`] expands into a [`Step`];
//! - the regions of the whole stream and the discarded text, merged where it is contiguous. A
//!   region of a field whose values the message appends to a list holds its value there (it
//!   records which item), so a stream of many small regions holds each value once; the others
//!   hold their own;
//! - the parser's state every 1024 (`rebuild::CHECKPOINT_STEPS`) steps, from which `rebuild` feeds
//!   the same chunks again to give any step's events on demand (they are not stored).
//!
//! The message a client shows after a step is rebuilt when asked for, from the values of the
//! regions closed by then: about one copy of that message's work, as copying a stored one would
//! be.
//!
//! Offsets are byte offsets into the replay's *document*: the prefix followed by the text that
//! was actually fed (which differs from the generation only for byte chunkings that cut a
//! character in two, see [`FedChunk`]).

mod client;
mod held;
mod index;
mod paint;
mod rebuild;

use std::borrow::Cow;
use std::ops::Range;

use crate::chunking::Chunking;
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::parser::{Events, Options, ParseError, Parser};
use rtbench_engine::region::{RegionBuilder, Regions};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};

pub use crate::paint::{Paint, Segment};
pub use crate::progress::Progress;
pub use client::{LiveRegion, PartialMessage};
pub use held::{Candidate, CandidateState, Role};
pub use paint::RegionView;

use index::{Entry, StepIndex};
use rebuild::{Checkpoint, Rebuilder, Sources};

/// Feeds between two looks at the [`Progress`] of a build: it counts generation bytes
/// streamed, and a cancelled build stops within this many feeds.
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
    /// A feed of the generation.
    Feed {
        /// The feed's number (0-based).
        index: usize,
    },
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
    /// The step's number in the replay (the prefix's step first).
    pub index: usize,
    /// Whether the step consumed the prefix, a feed, or ended the stream.
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

/// An event with the step that produced it.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineEvent {
    /// The number of the step that produced the event.
    pub step: usize,
    /// The parser's event.
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
    Failed {
        /// The number of the failed step.
        step: usize,
        /// The parser's error.
        error: ParseError,
    },
}

/// How a replay's text reaches the parser, when not as plain text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Feeding {
    /// The text is 5.25's decoding of token ids (defusing markers are stripped from chunks
    /// and values).
    pub token_ids: bool,
    /// Text added at the end of the stream (a token-id decoder's flush), without a step of its
    /// own: the finalize step feeds it.
    pub tail: String,
}

/// A recorded stream.
#[derive(Debug)]
pub struct Replay {
    template: Template,
    chunking: Chunking,
    document: String,
    prefix_len: usize,
    origin: usize,
    index: StepIndex,
    /// The prefix step's events (the only ones stored).
    initial: Vec<TimelineEvent>,
    /// The finalize step, if the stream got that far.
    finalize: Option<usize>,
    regions: Regions,
    /// Text that went to no region: `(step, range)`, in document order, contiguous pieces
    /// merged (the step is the first one's: a step shows the part before its held text).
    discarded: Vec<(usize, Range<usize>)>,
    rebuilder: Rebuilder,
    outcome: Outcome,
    /// After a failure, what the parser had stored (see [`Replay::stored`]).
    stored: Dict,
}

/// The state of a replay being built.
struct Recorder {
    document: String,
    index: StepIndex,
    initial: Vec<TimelineEvent>,
    regions: RegionBuilder,
    discarded: Vec<(usize, Range<usize>)>,
    checkpoints: Vec<Checkpoint>,
    finalize: Option<usize>,
    outcome: Outcome,
    stored: Dict,
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
        let text = Feeding::default();
        Replay::build_with(
            template, prefix, generation, tools, chunking, progress, &text,
        )
    }

    /// [`Replay::build`] of text that is not fed as plain text: a generation of token ids as
    /// 5.25's decoder turned each feed of ids into text (`generation`, cut by `chunking` where
    /// the feeds' texts end), with the text the decoder released when flushed at the end.
    pub fn build_with(
        template: Template,
        prefix: &str,
        generation: &str,
        tools: Option<&Value>,
        chunking: Chunking,
        progress: &Progress,
        feeding: &Feeding,
    ) -> Option<Replay> {
        let fed_len = fed_len(&chunking, generation) + feeding.tail.len();
        let mut rec = Recorder {
            document: String::with_capacity(prefix.len() + fed_len),
            index: StepIndex::default(),
            initial: Vec::new(),
            regions: RegionBuilder::new(prefix.len() + fed_len),
            discarded: Vec::new(),
            checkpoints: Vec::new(),
            finalize: None,
            outcome: Outcome::Message(Dict::new()),
            stored: Dict::new(),
        };
        rec.document.push_str(prefix);
        let mut origin = 0;
        // The build keeps no chunk or discard text (views rebuild the events with theirs), so
        // its parser records spans only; the prefix's events, which are kept, get their texts
        // from the document. A value the message holds as an item of a list is held there
        // only, its region saying which item: a stream of many small regions then holds each
        // value once, not in its region too.
        let options = Options {
            events: Events::Spans,
            whole_text: false,
            token_ids: feeding.token_ids,
            values_once: true,
            lists_in_events: false,
        };
        match Parser::with_options(&template, Some(prefix), tools, options) {
            Err(error) => {
                let fed_to = rec.document.len();
                rec.index.push(Entry {
                    fed_to,
                    held_start: fed_to,
                    live_end: fed_to,
                    ..Entry::default()
                });
                rec.outcome = Outcome::Failed { step: 0, error };
            }
            Ok(mut parser) => {
                parser.reserve(fed_len);
                origin = parser.origin();
                let mut initial = parser.initial_events().to_vec();
                for e in &mut initial {
                    let t = prefix.get(e.span.clone()).unwrap_or_default();
                    match &mut e.kind {
                        // A chunk of decoded token ids is shown without the defusing markers.
                        EventKind::Chunk { text, .. } if feeding.token_ids => {
                            text.push_str(&t.replace(rtbench_engine::MARKER, ""));
                        }
                        EventKind::Chunk { text, .. } | EventKind::Discard { text } => {
                            text.push_str(t);
                        }
                        // Shown with the value the message holds.
                        EventKind::Close { value } => {
                            let item = e.detail.as_ref().and_then(|d| d.value_item);
                            let name = template.fields()[e.field].name.as_str();
                            let held = parser.output().get(name).and_then(Value::as_list);
                            if let Some(v) = item.and_then(|i| held?.get(i)) {
                                *value = v.clone();
                            }
                        }
                        _ => {}
                    }
                }
                let mut entry = rec.next_entry();
                rec.record(&mut entry, initial, &parser);
                rec.checkpoint(&parser);
                match rec.feed_all(&mut parser, &chunking, generation, progress) {
                    Fed::All => rec.finish(&mut parser, &feeding.tail),
                    Fed::Failed => {}
                    Fed::Cancelled => return None,
                }
                if let Outcome::Failed { .. } = rec.outcome {
                    rec.stored = parser.take_output();
                }
            }
        }
        rec.index.shrink();
        Some(Replay {
            rebuilder: Rebuilder::new(tools.cloned(), rec.checkpoints, feeding.token_ids),
            template,
            chunking,
            document: rec.document,
            prefix_len: prefix.len(),
            origin,
            index: rec.index,
            initial: rec.initial,
            finalize: rec.finalize,
            regions: rec.regions.into_regions(),
            discarded: rec.discarded,
            outcome: rec.outcome,
            stored: rec.stored,
        })
    }
}

impl Recorder {
    /// Feeds the generation chunk by chunk, one step each.
    fn feed_all(
        &mut self,
        parser: &mut Parser,
        chunking: &Chunking,
        generation: &str,
        progress: &Progress,
    ) -> Fed {
        let mut failed = false;
        progress.set_total(generation.len());
        for (i, (source, text, replaced)) in feeds(chunking, generation).enumerate() {
            if i % PROGRESS_EVERY == 0 {
                if progress.is_cancelled() {
                    return Fed::Cancelled;
                }
                progress.set_done(source.start);
            }
            self.document.push_str(&text);
            if failed {
                // Never fed: kept in the document so that a view shows it as such.
                continue;
            }
            let mut entry = self.next_entry();
            entry.source_end = source.end;
            entry.replaced = replaced;
            match parser.feed(&text) {
                Ok(events) => {
                    self.record(&mut entry, events, parser);
                    self.checkpoint(parser);
                }
                Err(error) => {
                    self.fail(&mut entry, error, parser);
                    failed = true;
                }
            }
        }
        progress.set_done(generation.len());
        if failed { Fed::Failed } else { Fed::All }
    }

    /// Saves the parser's state after the step just recorded, when the last checkpoint is
    /// far enough behind (the first, after the prefix, always).
    fn checkpoint(&mut self, parser: &Parser) {
        let step = self.index.len() - 1;
        let last = self.checkpoints.last();
        let far = last.is_none_or(|c| {
            step - c.step >= rebuild::CHECKPOINT_STEPS
                || self.document.len() - c.state.fed_to() >= rebuild::CHECKPOINT_BYTES
        });
        if far {
            let state = parser.suspend(last.map(|c| &c.state));
            self.checkpoints.push(Checkpoint { step, state });
        }
    }

    /// The finalize step and the outcome; `tail` (a token-id decoder's flushed text) is added
    /// to the document by that step, as the reference's `finalize` adds it.
    fn finish(&mut self, parser: &mut Parser, tail: &str) {
        self.document.push_str(tail);
        let mut entry = self.next_entry();
        self.finalize = Some(self.index.len());
        let mut events = Vec::new();
        match parser.finalize_with(&mut events, tail) {
            Ok(message) => {
                self.record(&mut entry, events, parser);
                self.outcome = Outcome::Message(message);
            }
            Err(error) => self.fail(&mut entry, error, parser),
        }
    }

    /// The entry of the next step before its events and the parser's state after it: carried
    /// over from the previous step, with the document fed so far.
    fn next_entry(&self) -> Entry {
        Entry {
            fed_to: self.document.len(),
            replaced: 0,
            ..self.index.last()
        }
    }

    /// Takes the parser's held-back text and open field as they are now.
    fn observe(&self, entry: &mut Entry, parser: &Parser) {
        entry.held_start = parser.held().start;
        entry.current = parser.current_field();
        if self.regions.live().is_none() {
            entry.live_end = entry.held_start;
        }
    }

    /// Adds a step with its events and the parser's state after them, updating the regions.
    fn record(&mut self, entry: &mut Entry, events: Vec<Event>, parser: &Parser) {
        self.observe(entry, parser);
        let step = self.index.len();
        let mut index = entry.events_end;
        for mut event in events {
            if let EventKind::Discard { .. } = event.kind {
                match self.discarded.last_mut() {
                    Some((_, r)) if r.end == event.span.start => r.end = event.span.end,
                    _ => self.discarded.push((step, event.span.clone())),
                }
            }
            if step == 0 {
                self.regions.push(index, &event);
                self.initial.push(TimelineEvent { step, event });
            } else {
                // Not kept (rebuilt when shown): its value moves into its region (unless the
                // message holds it, see `values_once`).
                self.regions.take(index, &mut event);
            }
            index += 1;
        }
        entry.events_end = index;
        entry.live_end = match self.regions.live() {
            Some(r) => self.regions.get(r).map_or(entry.held_start, |g| g.body.end),
            None => entry.held_start,
        };
        self.index.push(*entry);
    }

    /// Adds the step that failed and ends the replay there.
    fn fail(&mut self, entry: &mut Entry, error: ParseError, parser: &Parser) {
        self.observe(entry, parser);
        self.index.push(*entry);
        self.outcome = Outcome::Failed {
            step: self.index.len() - 1,
            error,
        };
    }
}

impl Replay {
    /// The response template the stream was parsed with.
    pub fn template(&self) -> &Template {
        &self.template
    }

    /// How the generation was cut into feeds.
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
        self.index.len()
    }

    /// How many steps are feeds.
    pub fn feed_count(&self) -> usize {
        self.index.len() - 1 - usize::from(self.finalize.is_some())
    }

    /// Every step in order.
    pub fn steps(&self) -> impl Iterator<Item = Step> + '_ {
        (0..)
            .zip(self.index.pairs_from(0))
            .map(|(i, (before, after))| self.expand(i, &before, &after))
    }

    /// A step with the parser's state after it; panics when out of range, like indexing.
    pub fn step(&self, step: usize) -> Step {
        let (before, after) = self.index.pair(step);
        self.expand(step, &before, &after)
    }

    /// What a step did, cheaply (no events or held text).
    pub fn step_kind(&self, step: usize) -> StepKind {
        if step == 0 {
            StepKind::Prefix
        } else if Some(step) == self.finalize {
            StepKind::Finalize
        } else {
            StepKind::Feed { index: step - 1 }
        }
    }

    fn expand(&self, step: usize, before: &Entry, after: &Entry) -> Step {
        let kind = self.step_kind(step);
        let chunk = matches!(kind, StepKind::Feed { .. }).then(|| FedChunk {
            range: before.fed_to..after.fed_to,
            source: before.source_end..after.source_end,
            replaced: after.replaced,
        });
        let error = match &self.outcome {
            Outcome::Failed { step: s, error } if *s == step => Some(error.clone()),
            _ => None,
        };
        Step {
            index: step,
            kind,
            chunk,
            events: before.events_end..after.events_end,
            held: after.held_start..after.fed_to,
            fed_to: after.fed_to,
            current: after.current,
            live: self.live_at(after.events_end).map(|r| (r, after.live_end)),
            error,
        }
    }

    /// The region open after the events before timeline index `events_end`: the last one
    /// opened, unless it has closed (regions never nest, and a close ends the last one opened).
    fn live_at(&self, events_end: usize) -> Option<usize> {
        let n = self.regions.partition_point(|r| r.open_event < events_end);
        let last = n.checked_sub(1)?;
        self.regions
            .at(last)
            .close_event
            .is_none_or(|c| c >= events_end)
            .then_some(last)
    }

    /// The number of the last step (finalize, or the step that failed).
    pub fn last_step(&self) -> usize {
        self.index.len() - 1
    }

    /// How the stream ended: the final message, or the failed step and its error.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// How many events the stream had.
    pub fn timeline_len(&self) -> usize {
        self.index.last().events_end
    }

    /// The events with timeline indices in `range` (clamped to the timeline), in order, with
    /// the steps that produced them. Only the prefix's events are stored: the others are
    /// rebuilt from the nearest parser checkpoint (see `rebuild`).
    pub fn timeline(&self, range: Range<usize>) -> Vec<TimelineEvent> {
        let end = range.end.min(self.timeline_len());
        let start = range.start.min(end);
        let initial = self.initial.len();
        let mut out: Vec<TimelineEvent> =
            self.initial[start.min(initial)..end.min(initial)].to_vec();
        if end > initial {
            let sources = Sources {
                template: &self.template,
                index: &self.index,
                document: &self.document,
                prefix_len: self.prefix_len,
                finalize: self.finalize,
                lender: self.stored(),
            };
            out.extend(self.rebuilder.events(&sources, start.max(initial)..end));
        }
        out
    }

    /// One event of the timeline.
    pub fn timeline_event(&self, i: usize) -> Option<TimelineEvent> {
        self.timeline(i..i + 1).pop()
    }

    /// The step that produced the timeline event `i` (the last step for indices past the end).
    pub fn step_of_event(&self, i: usize) -> usize {
        self.index.first(|e| e.events_end > i).min(self.last_step())
    }

    /// The events of one step.
    pub fn events(&self, step: usize) -> Vec<TimelineEvent> {
        self.timeline(self.step(step).events)
    }

    /// One step's events as the reference's dicts (trace-only events left out).
    pub fn reference_events(&self, step: usize) -> Vec<Value> {
        self.events(step)
            .iter()
            .filter_map(|t| t.event.to_value(self.field_name(t.event.field)))
            .collect()
    }

    /// The message, or after a failure what the parser had stored: where the regions' values
    /// held as list items are, and what the checkpoints' grown values start with.
    fn stored(&self) -> &Dict {
        match &self.outcome {
            Outcome::Message(message) => message,
            Outcome::Failed { .. } => &self.stored,
        }
    }

    /// A field's name (`""` for text that went to no field).
    pub fn field_name(&self, field: usize) -> &str {
        self.template
            .fields()
            .get(field)
            .map_or("", |f| f.name.as_str())
    }

    /// Every region of the whole stream, in the order they opened.
    pub fn regions(&self) -> &Regions {
        &self.regions
    }

    /// The text fed at a step (empty for the prefix and finalize steps).
    pub fn chunk_text(&self, step: usize) -> &str {
        let s = self.step(step);
        s.chunk.map_or("", |c| &self.document[c.range])
    }

    /// The text held back after a step.
    pub fn held_text(&self, step: usize) -> &str {
        let e = self.index.get(step);
        &self.document[e.held_start..e.fed_to]
    }

    /// The step that fed the document byte at `offset` (0, the prefix step, for the prefix;
    /// the last feed for offsets past the end).
    pub fn step_feeding(&self, offset: usize) -> usize {
        if offset < self.prefix_len {
            return 0;
        }
        self.index
            .first(|e| e.fed_to > offset)
            .min(self.last_step())
    }
}

/// How long the fed text is: the generation's length, except for a byte chunking that cuts
/// characters, whose broken pieces are each fed as U+FFFD.
fn fed_len(chunking: &Chunking, text: &str) -> usize {
    match chunking {
        Chunking::Bytes(_) => feeds(chunking, text).map(|(_, t, _)| t.len()).sum(),
        _ => text.len(),
    }
}

/// The feeds a chunking makes of the generation, one at a time: the source byte range, the
/// text fed and how many broken characters it replaced.
fn feeds<'a>(
    chunking: &'a Chunking,
    text: &'a str,
) -> Box<dyn Iterator<Item = (Range<usize>, Cow<'a, str>, usize)> + 'a> {
    if let Chunking::Bytes(n) = chunking {
        let n = (*n).max(1);
        return Box::new((0..text.len()).step_by(n).map(move |start| {
            let range = start..(start + n).min(text.len());
            let bytes = &text.as_bytes()[range.clone()];
            let replaced = bytes
                .utf8_chunks()
                .filter(|c| !c.invalid().is_empty())
                .count();
            (range, String::from_utf8_lossy(bytes), replaced)
        }));
    }
    let mut start = 0;
    let mut cuts = chunking.cut_points(text).chain([text.len()]);
    Box::new(std::iter::from_fn(move || {
        loop {
            let end = cuts.next()?;
            // Cuts that go backwards or fall inside a character are ignored.
            if end > start && text.is_char_boundary(end) {
                let range = start..end;
                start = end;
                return Some((range.clone(), Cow::Borrowed(&text[range]), 0));
            }
        }
    }))
}
