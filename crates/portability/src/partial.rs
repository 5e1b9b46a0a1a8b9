//! Partial matching for engines that have none. The reference decides what text it may emit
//! with partial searches; a runtime whose engine only finds complete matches must hold text
//! back some other way. The simple strategy the reference document suggests: search for
//! complete matches only, and while there is none hold back the tail of the text where a match
//! could still begin: the pattern's longest possible match when it is bounded, or the whole
//! region (everything since the last position searched) when it is not.
//!
//! [`check`] streams a sample both ways, with the same chunks, and compares the events.

use std::collections::HashMap;

use pyregex::ast::Node;
use pyregex::hook::{self, CallKind, Outcome, Override};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};
use rtbench_engine::{Event, ParseError, Parser};

use crate::input::{ReferenceCache, SampleInput, prefix_of};
use crate::report::PartialCheck;
use crate::translate::tree_of;

/// The chunk size (in code points) samples are streamed with: small enough that delimiters
/// arrive split across feeds.
pub const CHUNK: usize = 1;

/// Answers partial searches with complete searches and a bounded hold-back.
struct HoldBack {
    reference: ReferenceCache,
    /// The longest match of each pattern in code points (`None`: unbounded).
    longest: HashMap<String, Option<usize>>,
}

impl Override for HoldBack {
    fn answer(
        &mut self,
        pattern: &str,
        _dotall: bool,
        hay: &str,
        pos: usize,
        kind: CallKind,
    ) -> Option<Outcome> {
        if kind != CallKind::SearchPartial {
            return None;
        }
        let re = self.reference.get(pattern)?.clone();
        if let Some(m) = re.search(hay, pos).ok()? {
            let spans = (0..=re.group_count())
                .map(|i| m.group(i).map(|r| (r.start, r.end)))
                .collect();
            return Some(Outcome::Match(spans));
        }
        let longest = *self
            .longest
            .entry(pattern.to_string())
            .or_insert_with(|| tree_of(pattern).ok().and_then(|t| max_len(&t.node)));
        let start = match longest {
            None => pos,
            Some(n) => {
                let tail = hay
                    .char_indices()
                    .rev()
                    .take(n.saturating_sub(1))
                    .last()
                    .map_or(hay.len(), |(i, _)| i);
                tail.max(pos).min(hay.len())
            }
        };
        Some(Outcome::Partial(start))
    }
}

/// The longest text `n` examines from a match start, in code points (its longest match plus
/// what its lookaheads read); `None` when unbounded.
pub fn max_len(n: &Node) -> Option<usize> {
    match n {
        // A lookahead must see its text before the match can be decided: it counts.
        Node::Look {
            behind: false,
            node,
            ..
        } => max_len(node),
        Node::Empty | Node::Look { .. } | Node::Assert(_) | Node::Fail => Some(0),
        Node::Seq(v) => v
            .iter()
            .try_fold(0usize, |a, m| Some(a.saturating_add(max_len(m)?))),
        Node::Alt(v) => v.iter().try_fold(0usize, |a, m| Some(a.max(max_len(m)?))),
        // Under full case folding one character of the pattern can match the up to three
        // characters whose folding it is (`ß` matches `ss`).
        Node::Char { full: true, .. }
        | Node::Set { full: true, .. }
        | Node::SetOf { full: true, .. }
        | Node::Prop { full: true, .. } => Some(3),
        Node::Literal { chars, full, .. } => {
            Some(if *full { 3 * chars.len() } else { chars.len() })
        }
        Node::Char { .. }
        | Node::Set { .. }
        | Node::SetOf { .. }
        | Node::Prop { .. }
        | Node::AnyAll
        | Node::Any => Some(1),
        Node::Group { node, .. } | Node::Atomic(node) => max_len(node),
        Node::Repeat { node, max, .. } => {
            let one = max_len(node)?;
            if one == 0 {
                return Some(0);
            }
            Some(one.saturating_mul((*max)? as usize))
        }
        Node::Backref { .. } => None,
    }
}

type Stream = (Vec<Vec<Value>>, Result<Dict, ParseError>);

fn stream(template: &Template, input: &SampleInput<'_>) -> Stream {
    let sample = input.sample;
    let names: Vec<String> = template.fields().iter().map(|f| f.name.clone()).collect();
    let values = |events: &[Event]| -> Vec<Value> {
        events
            .iter()
            .filter_map(|e| e.to_value(names.get(e.field).map_or("", String::as_str)))
            .collect()
    };
    let mut feeds = Vec::new();
    let mut parser = match Parser::new(template, Some(prefix_of(sample)), sample.tools.as_ref()) {
        Ok(p) => p,
        Err(e) => return (feeds, Err(e)),
    };
    feeds.push(values(parser.initial_events()));
    let chars: Vec<char> = sample.generation.chars().collect();
    for chunk in chars.chunks(CHUNK) {
        let text: String = chunk.iter().collect();
        match parser.feed(&text) {
            Ok(ev) => feeds.push(values(&ev)),
            Err(e) => return (feeds, Err(e)),
        }
    }
    match parser.finalize() {
        Ok((message, ev)) => {
            feeds.push(values(&ev));
            (feeds, Ok(message))
        }
        Err(e) => (feeds, Err(e)),
    }
}

fn list(v: &[Value]) -> String {
    let r = Value::List(v.to_vec()).py_repr();
    if r.chars().count() > 200 {
        format!("{}...", r.chars().take(197).collect::<String>())
    } else {
        r
    }
}

/// Streams the sample with partial matching and with the hold-back strategy, and compares.
pub fn check(template: &Template, input: &SampleInput<'_>) -> PartialCheck {
    let (ours, our_message) = stream(template, input);
    let over = HoldBack {
        reference: ReferenceCache::default(),
        longest: HashMap::new(),
    };
    let (theirs, their_message) = hook::run_quiet(Some(Box::new(over)), || stream(template, input));
    let n = ours.len().max(theirs.len());
    let first_difference = (0..n).find(|&i| ours.get(i) != theirs.get(i)).map(|i| {
        (
            i,
            list(ours.get(i).map_or(&[][..], Vec::as_slice)),
            list(theirs.get(i).map_or(&[][..], Vec::as_slice)),
        )
    });
    let message_differs = match (&our_message, &their_message) {
        (Ok(a), Ok(b)) => a != b,
        (Err(a), Err(b)) => a.message != b.message,
        _ => true,
    };
    PartialCheck {
        sample: input.name.clone(),
        chunk: CHUNK,
        first_difference,
        message_differs,
    }
}
