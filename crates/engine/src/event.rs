//! Streaming events: the reference's `region_open` / `region_chunk` / `region_close`, each with
//! the spans of text it stands for, so that a view can colour the raw text by region.
//!
//! Offsets are byte offsets into the *document*: the prefix followed by the generation. Text cut
//! off before the start anchor is never seen by the parser, so spans start at the cut point.

use std::ops::Range;

use crate::chunked::Chunked;
use crate::value::{Dict, Place, Value};

/// One event of the stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Index of the field in the template.
    pub field: usize,
    /// What happened.
    pub kind: EventKind,
    /// Where the event's text lies in the document (see [`EventKind`] for each kind).
    pub span: Range<usize>,
    /// For `Close` events when tracing: how the value was made.
    pub detail: Option<Box<RegionDetail>>,
}

/// How a closed region's value was made, step by step (recorded when tracing).
#[derive(Clone, Debug, PartialEq)]
pub struct RegionDetail {
    /// The region body in the document.
    pub body: Range<usize>,
    /// Named captures of the open and close delimiters that took part.
    pub captures: Vec<(String, Value)>,
    /// What the content parser made of the body (`Null` when [`RegionDetail::kept_as_value`]
    /// says it is the value itself).
    pub parsed: Value,
    /// The value after the transform (before tool-argument coercion); `None` without transform,
    /// or when it is the value itself.
    pub transformed: Option<Value>,
    /// Which step made the value unchanged, and is therefore not held a second time here.
    pub kept_as_value: Step,
    /// Where the parsed content lies whole inside the value, when it is marked so instead of
    /// held in `parsed` (then `Null`): a trace that holds values once, as an audit's does.
    pub parsed_at: Option<Place>,
    /// The value is not in the close event (which carries `Null`) but item `n` of the
    /// message's list under the field's name, where it was moved: a repeating field's region
    /// in a trace that holds values once, as an audit's does.
    pub value_item: Option<usize>,
}

/// A step of a region's value: the content parser's output, or the transform's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Step {
    /// No step: each is held as made.
    #[default]
    None,
    /// The parsed content is the value (no transform, and nothing after it changed it).
    Parsed,
    /// The transform's output is the value (nothing after it changed it).
    Transformed,
}

/// The kinds of streaming event: the reference's `region_open`, `region_chunk` and
/// `region_close`, and (when tracing) text that went to no region.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// A region opened. Span: the open delimiter (empty for the implicit region, which opens at
    /// its first character).
    Open,
    /// Text routed to the open region. Span: that text.
    Chunk {
        /// The text.
        text: String,
        /// Set for structured content parsers: the text is raw, the value comes at the close.
        dirty: bool,
    },
    /// A region closed with its parsed value. Span: the close delimiter that ended it, or an
    /// empty span where it ended (an open delimiter of another region, or the end of stream).
    Close {
        /// The region's parsed (and transformed) value.
        value: Value,
    },
    /// Text that went to no field (no implicit field, and no region open). Only produced when
    /// tracing is on; the reference has no such event.
    Discard {
        /// The text.
        text: String,
    },
}

/// Where a parser puts the events it records, as they happen (see
/// [`crate::Parser::feed_into`]): a list keeps them whole; a caller that only needs their places
/// and the regions they make (the audit) folds each one in and keeps a [`Mark`].
pub trait EventSink {
    /// Takes the next event of the stream.
    fn record(&mut self, event: Event);
}

impl EventSink for Vec<Event> {
    fn record(&mut self, event: Event) {
        self.push(event);
    }
}

/// An event without its text and values: which kind it is and where its text lies in the
/// document, in 16 bytes instead of an [`Event`]'s 72 and its boxed detail (what painting the
/// document by region needs; the region module's `mark_owners` says which region each belongs
/// to). An audit holds its marks in [`Marks`], 8 bytes each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    start: usize,
    /// The span's end, with the kind in its top two bits: a document's offsets stay far below
    /// them (an allocation holds at most `isize::MAX` bytes, and address spaces are narrower).
    end_kind: usize,
}

/// Where a [`Mark`]'s kind sits in its end.
const KIND_SHIFT: u32 = usize::BITS - 2;
const END_MASK: usize = (1 << KIND_SHIFT) - 1;

/// The kind of a [`Mark`]'s event: [`EventKind`] without its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkKind {
    /// [`EventKind::Open`].
    Open,
    /// [`EventKind::Chunk`].
    Chunk,
    /// [`EventKind::Close`].
    Close,
    /// [`EventKind::Discard`].
    Discard,
}

impl Mark {
    /// The mark of `event`.
    pub fn of(event: &Event) -> Mark {
        Mark {
            start: event.span.start,
            end_kind: (event.span.end & END_MASK) | (kind_bits(event.kind.mark()) << KIND_SHIFT),
        }
    }

    /// Where the event's text lies in the document (as [`Event::span`]).
    pub fn span(&self) -> Range<usize> {
        self.start..self.end_kind & END_MASK
    }

    /// Which kind of event it was.
    pub fn kind(&self) -> MarkKind {
        kind_of_bits(self.end_kind >> KIND_SHIFT)
    }
}

/// A mark's kind in two bits.
fn kind_bits(kind: MarkKind) -> usize {
    match kind {
        MarkKind::Open => 0,
        MarkKind::Chunk => 1,
        MarkKind::Close => 2,
        MarkKind::Discard => 3,
    }
}

/// The kind of [`kind_bits`] (of the two low bits).
fn kind_of_bits(bits: usize) -> MarkKind {
    match bits & 3 {
        0 => MarkKind::Open,
        1 => MarkKind::Chunk,
        2 => MarkKind::Close,
        _ => MarkKind::Discard,
    }
}

/// The marks of a stream's events, in order, held in 8 bytes each while the document's
/// offsets stay below 2 GiB (a [`Mark`] takes 16): an audit keeps one per event, and 1 MB of
/// small tool calls has three events a call, 46,940 marks, which took 1.1 bytes per byte of
/// text at 16 bytes a mark (the list's growth included) and take 0.5 now. From the first mark
/// past 2 GiB on, every mark is held whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    store: MarkStore,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum MarkStore {
    /// In chunks: the list grows while the parse holds everything else (see [`Chunked`]).
    Narrow(Chunked<NarrowMark>),
    Wide(Vec<Mark>),
}

impl Default for MarkStore {
    fn default() -> MarkStore {
        MarkStore::Narrow(Chunked::default())
    }
}

/// A [`Mark`] in 8 bytes: its span's start and end, each with one bit of its kind in its top
/// bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct NarrowMark {
    start: u32,
    end: u32,
}

/// The top bit of a [`NarrowMark`]'s offsets.
const NARROW_BIT: u32 = 1 << 31;

impl NarrowMark {
    /// The narrow mark of `m`, when its offsets fit.
    fn of(m: &Mark) -> Option<NarrowMark> {
        let span = m.span();
        let (start, end) = (
            u32::try_from(span.start).ok()?,
            u32::try_from(span.end).ok()?,
        );
        if (start | end) & NARROW_BIT != 0 {
            return None;
        }
        let kind = kind_bits(m.kind());
        Some(NarrowMark {
            start: start | if kind & 1 != 0 { NARROW_BIT } else { 0 },
            end: end | if kind & 2 != 0 { NARROW_BIT } else { 0 },
        })
    }

    fn mark(self) -> Mark {
        let kind = usize::from(self.start & NARROW_BIT != 0)
            | usize::from(self.end & NARROW_BIT != 0) << 1;
        Mark {
            start: (self.start & !NARROW_BIT) as usize,
            end_kind: (self.end & !NARROW_BIT) as usize | kind << KIND_SHIFT,
        }
    }
}

impl Marks {
    /// No marks.
    pub fn new() -> Marks {
        Marks::default()
    }

    /// Appends the mark of the event after the others.
    pub fn push(&mut self, mark: Mark) {
        if let MarkStore::Narrow(v) = &mut self.store {
            match NarrowMark::of(&mark) {
                Some(n) => return v.push(n),
                None => {
                    let wide = v.iter().map(NarrowMark::mark).collect();
                    self.store = MarkStore::Wide(wide);
                }
            }
        }
        if let MarkStore::Wide(v) = &mut self.store {
            v.push(mark);
        }
    }

    /// The number of marks.
    pub fn len(&self) -> usize {
        match &self.store {
            MarkStore::Narrow(v) => v.len(),
            MarkStore::Wide(v) => v.len(),
        }
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Mark `i`.
    pub fn get(&self, i: usize) -> Option<Mark> {
        match &self.store {
            MarkStore::Narrow(v) => v.get(i).map(NarrowMark::mark),
            MarkStore::Wide(v) => v.get(i).copied(),
        }
    }

    /// Every mark, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Mark> + DoubleEndedIterator + '_ {
        (0..self.len()).map(|i| self.get(i).expect("an index below the length"))
    }
}

impl FromIterator<Mark> for Marks {
    fn from_iter<I: IntoIterator<Item = Mark>>(marks: I) -> Marks {
        let mut out = Marks::default();
        for m in marks {
            out.push(m);
        }
        out
    }
}

impl EventKind {
    /// This kind without its payload.
    pub fn mark(&self) -> MarkKind {
        match self {
            EventKind::Open => MarkKind::Open,
            EventKind::Chunk { .. } => MarkKind::Chunk,
            EventKind::Close { .. } => MarkKind::Close,
            EventKind::Discard { .. } => MarkKind::Discard,
        }
    }
}

impl Event {
    /// Whether the reference emits this event (everything but [`EventKind::Discard`]).
    pub fn is_reference(&self) -> bool {
        !matches!(self.kind, EventKind::Discard { .. })
    }

    /// The event as the reference's dict (`{"type", "field", ...}`), `None` for trace-only events.
    pub fn to_value(&self, field_name: &str) -> Option<Value> {
        let mut d = Dict::new();
        let kind = match &self.kind {
            EventKind::Open => "region_open",
            EventKind::Chunk { .. } => "region_chunk",
            EventKind::Close { .. } => "region_close",
            EventKind::Discard { .. } => return None,
        };
        d.insert("type", Value::from(kind));
        d.insert("field", Value::from(field_name));
        match &self.kind {
            EventKind::Chunk { text, dirty } => {
                d.insert("text", Value::from(text.as_str()));
                d.insert("dirty", Value::Bool(*dirty));
            }
            EventKind::Close { value } => {
                d.insert("value", value.clone());
            }
            _ => {}
        }
        Some(Value::Dict(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;
    use std::ops::Range;

    #[test]
    fn marks_are_held_in_8_bytes_until_an_offset_needs_more() {
        let kinds = [
            MarkKind::Open,
            MarkKind::Chunk,
            MarkKind::Close,
            MarkKind::Discard,
        ];
        let mark = |span: Range<usize>, kind: MarkKind| Mark {
            start: span.start,
            end_kind: span.end | kind_bits(kind) << KIND_SHIFT,
        };
        let limit = NARROW_BIT as usize;
        let near: Vec<Mark> = (0..12)
            .map(|i| {
                let span = [0..0, 3..7, limit - 2..limit - 1][i % 3].clone();
                mark(span, kinds[i % 4])
            })
            .collect();
        let mut marks: Marks = near.iter().copied().collect();
        assert!(matches!(&marks.store, MarkStore::Narrow(v) if v.len() == 12));
        assert_eq!(std::mem::size_of::<NarrowMark>(), 8);
        assert_eq!(marks.iter().collect::<Vec<_>>(), near);
        let far = [
            mark(limit - 1..limit, MarkKind::Chunk),
            mark(5..6, MarkKind::Close),
        ];
        for m in far {
            marks.push(m);
        }
        assert!(matches!(marks.store, MarkStore::Wide(_)));
        assert_eq!(marks.len(), 14);
        assert_eq!(
            marks.iter().collect::<Vec<_>>(),
            [near, far.to_vec()].concat()
        );
        assert_eq!(
            marks.get(12).map(|m| (m.span(), m.kind())),
            Some((limit - 1..limit, MarkKind::Chunk))
        );
        assert_eq!(marks.get(14), None);
    }

    #[test]
    fn a_mark_keeps_its_events_span_and_kind_in_16_bytes() {
        assert_eq!(std::mem::size_of::<Mark>(), 16);
        let far = END_MASK;
        let kinds = [
            EventKind::Open,
            EventKind::Chunk {
                text: "x".into(),
                dirty: false,
            },
            EventKind::Close { value: Value::Null },
            EventKind::Discard { text: "y".into() },
        ];
        for kind in kinds {
            for span in [0..0, 3..7, far - 1..far] {
                let event = Event {
                    field: 1,
                    kind: kind.clone(),
                    span: span.clone(),
                    detail: None,
                };
                let mark = Mark::of(&event);
                assert_eq!((mark.span(), mark.kind()), (span, kind.mark()));
            }
        }
    }
}
