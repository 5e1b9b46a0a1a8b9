//! A replay's events, rebuilt when asked for instead of stored: the parser's state is kept at
//! a checkpoint every [`CHECKPOINT_STEPS`] steps (or [`CHECKPOINT_BYTES`] of fed text), and
//! the events of any step come from restoring the checkpoint before it and feeding the same
//! chunks again. The parser is deterministic and a restored parser continues exactly as the
//! suspended one did, so the rebuilt events are the ones the stream produced. The last few
//! stretches rebuilt are kept, so a view that moves step by step feeds each chunk about once.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use rtbench_engine::parser::{Events, Options, Parser, Suspended};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};

use super::TimelineEvent;
use super::index::StepIndex;

/// The most steps between two checkpoints.
pub(crate) const CHECKPOINT_STEPS: usize = 1024;
/// The most fed text between two checkpoints.
pub(crate) const CHECKPOINT_BYTES: usize = 64 * 1024;
/// How many rebuilt stretches are kept.
const KEPT: usize = 8;

/// The parser's state after a step.
#[derive(Debug)]
pub(super) struct Checkpoint {
    pub step: usize,
    pub state: Suspended,
}

/// The events of the steps after one checkpoint, up to and including the next checkpoint's
/// step.
#[derive(Debug)]
struct Stretch {
    /// Timeline index of the first event.
    first_event: usize,
    events: Vec<TimelineEvent>,
}

/// What a rebuild needs besides what the replay holds anyway ([`Sources`]).
#[derive(Debug)]
pub(super) struct Rebuilder {
    tools: Option<Value>,
    checkpoints: Vec<Checkpoint>,
    /// The stream's text is decoded token ids (see [`super::Feeding`]).
    token_ids: bool,
    work: Mutex<Work>,
}

#[derive(Debug, Default)]
struct Work {
    parser: Option<Parser>,
    kept: VecDeque<(usize, Arc<Stretch>)>,
}

/// What a rebuild reads from the replay.
pub(super) struct Sources<'a> {
    pub template: &'a Template,
    pub index: &'a StepIndex,
    pub document: &'a str,
    pub prefix_len: usize,
    /// The step that finalizes, if the stream got that far.
    pub finalize: Option<usize>,
    /// The stream's message, or what it had stored when it failed: the checkpoints take the
    /// start of their grown lists and strings from it (see [`Parser::restore`]).
    pub lender: &'a Dict,
}

impl Rebuilder {
    pub(crate) fn new(
        tools: Option<Value>,
        checkpoints: Vec<Checkpoint>,
        token_ids: bool,
    ) -> Rebuilder {
        Rebuilder {
            tools,
            checkpoints,
            token_ids,
            work: Mutex::default(),
        }
    }

    /// The events with timeline indices in `range`, which lie after the prefix step.
    pub(crate) fn events(&self, src: &Sources<'_>, range: Range<usize>) -> Vec<TimelineEvent> {
        let mut out = Vec::with_capacity(range.len());
        let mut at = range.start;
        while at < range.end {
            // The step of event `at`, and the checkpoint before it.
            let step = src.index.first(|e| e.events_end > at);
            let Some(k) = self
                .checkpoints
                .partition_point(|c| c.step < step)
                .checked_sub(1)
            else {
                break;
            };
            let stretch = self.stretch(src, k);
            let from = at - stretch.first_event;
            let Some(available) = stretch.events.get(from..) else {
                break;
            };
            let take = available.len().min(range.end - at);
            if take == 0 {
                break;
            }
            out.extend_from_slice(&available[..take]);
            at += take;
        }
        out
    }

    /// The events of the steps after checkpoint `k`, rebuilt or kept from an earlier rebuild.
    fn stretch(&self, src: &Sources<'_>, k: usize) -> Arc<Stretch> {
        let mut work = self.work.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = work.kept.iter().position(|(kk, _)| *kk == k) {
            let kept = work.kept.remove(i).expect("a kept stretch");
            work.kept.push_front(kept.clone());
            return kept.1;
        }
        let stretch = Arc::new(self.rebuild(&mut work, src, k));
        work.kept.push_front((k, Arc::clone(&stretch)));
        work.kept.truncate(KEPT);
        stretch
    }

    fn rebuild(&self, work: &mut Work, src: &Sources<'_>, k: usize) -> Stretch {
        let from = &self.checkpoints[k];
        let end = self
            .checkpoints
            .get(k + 1)
            .map_or(src.index.len() - 1, |c| c.step);
        let first_event = src.index.get(from.step).events_end;
        let mut stretch = Stretch {
            first_event,
            events: Vec::new(),
        };
        if work.parser.is_none() {
            let prefix = &src.document[..src.prefix_len];
            let options = Options {
                events: Events::Trace,
                whole_text: false,
                token_ids: self.token_ids,
                values_once: false,
                lists_in_events: false,
            };
            work.parser =
                Parser::with_options(src.template, Some(prefix), self.tools.as_ref(), options).ok();
        }
        let Some(parser) = work.parser.as_mut() else {
            return stretch;
        };
        parser.restore(&from.state, src.document, src.lender);
        let steps = (from.step + 1..=end).zip(src.index.pairs_from(from.step + 1));
        for (step, (before, after)) in steps {
            let text = &src.document[before.fed_to..after.fed_to];
            let events = if Some(step) == src.finalize {
                // The finalize step adds what it fed (a decoder's flush) without a step of its
                // own.
                let mut events = Vec::new();
                parser.finalize_with(&mut events, text).map(|_| events)
            } else {
                parser.feed(text)
            };
            // A failing step has no events and ends the stream.
            let Ok(events) = events else { break };
            stretch.events.extend(
                events
                    .into_iter()
                    .map(|event| TimelineEvent { step, event }),
            );
        }
        stretch
    }
}
