//! The analysis's per-region records, held compactly: a sample of many small regions (a
//! hundred thousand tool calls) has several segments and one region per call, so their size
//! per record is what the analysis costs beyond its text and its message.
//!
//! - [`Segments`]: the painted document, 16 bytes a segment (its end, region, capture, paint
//!   and marks; its start is the previous segment's end, as segments cover the document in
//!   order), instead of a 48-byte [`Segment`].
//! - [`Regions`]: the engine's regions, a region whose values are all in the message (no
//!   captures, no value of its own) held in about 70 bytes instead of a 264-byte [`Region`].
//!
//! Both give the engine's and the painting's own types back on reading, so every view reads
//! what it read before. Offsets past `u32::MAX` (a document over 4 GiB) keep the wide records.

use std::borrow::Cow;
use std::ops::Range;

use rtbench_engine::event::Step;
use rtbench_engine::region::{Ending, Region};
use rtbench_engine::value::{Dict, Place, Value};
use rtbench_tooling::paint::{self, Paint, Segment};

/// The painted document: segments in order, covering it (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Segments {
    store: SegmentStore,
}

#[derive(Clone, Debug)]
enum SegmentStore {
    Narrow(Vec<Cell>),
    Wide(Vec<Segment>),
}

impl Default for SegmentStore {
    fn default() -> SegmentStore {
        SegmentStore::Narrow(Vec::new())
    }
}

/// A segment in 16 bytes: its start is the previous cell's end (0 for the first).
#[derive(Clone, Copy, Debug)]
struct Cell {
    end: u32,
    region: u32,
    capture: u32,
    paint: u8,
    marks: u8,
}

const HELD: u8 = 1;
const ERROR: u8 = 2;
const LOST: u8 = 4;

impl Cell {
    /// The cell of `s`, when its numbers fit.
    fn of(s: &Segment) -> Option<Cell> {
        let (paint, region, capture) = match s.paint {
            Paint::Cut => (0, 0, 0),
            Paint::Open { region } => (1, region, 0),
            Paint::Close { region } => (2, region, 0),
            Paint::Capture { region, capture } => (3, region, capture),
            Paint::Body { region } => (4, region, 0),
            Paint::Discarded => (5, 0, 0),
            Paint::Unrouted => (6, 0, 0),
            Paint::Unfed => (7, 0, 0),
        };
        let marks = [(s.held, HELD), (s.error, ERROR), (s.lost, LOST)]
            .into_iter()
            .filter(|(on, _)| *on)
            .fold(0, |m, (_, bit)| m | bit);
        Some(Cell {
            end: u32::try_from(s.range.end).ok()?,
            region: u32::try_from(region).ok()?,
            capture: u32::try_from(capture).ok()?,
            paint,
            marks,
        })
    }

    /// The segment of this cell, starting at `start`.
    fn segment(self, start: usize) -> Segment {
        let region = self.region as usize;
        let paint = match self.paint {
            0 => Paint::Cut,
            1 => Paint::Open { region },
            2 => Paint::Close { region },
            3 => Paint::Capture {
                region,
                capture: self.capture as usize,
            },
            4 => Paint::Body { region },
            5 => Paint::Discarded,
            6 => Paint::Unrouted,
            _ => Paint::Unfed,
        };
        Segment {
            range: start..self.end as usize,
            paint,
            held: self.marks & HELD != 0,
            error: self.marks & ERROR != 0,
            lost: self.marks & LOST != 0,
        }
    }
}

impl Segments {
    /// Segments as [`paint::cover_sorted`] paints them: `marks` in order of their start, over
    /// `0..len`, gaps [`Paint::Cut`] before `origin` and [`Paint::Unrouted`] after it. Built
    /// as they come, without the wide list.
    pub(crate) fn cover_sorted(
        marks: impl IntoIterator<Item = (Range<usize>, Paint)>,
        origin: usize,
        len: usize,
    ) -> Segments {
        let mut out = Segments::default();
        let gap = |out: &mut Segments, from: usize, to: usize| {
            let cut = origin.clamp(from, to.max(from));
            if from < cut {
                out.push(Segment::new(from..cut, Paint::Cut));
            }
            if cut < to {
                out.push(Segment::new(cut..to, Paint::Unrouted));
            }
        };
        let mut at = 0;
        for (r, paint) in marks {
            if r.is_empty() || r.end > len {
                continue;
            }
            let start = r.start.max(at);
            if start >= r.end {
                continue;
            }
            gap(&mut out, at, start);
            out.push(Segment::new(start..r.end, paint));
            at = r.end;
        }
        gap(&mut out, at, len);
        out.shrink_to_fit();
        out
    }

    /// Appends a segment that starts where the last one ended.
    fn push(&mut self, s: Segment) {
        if let SegmentStore::Narrow(cells) = &mut self.store {
            match Cell::of(&s) {
                Some(c) => return cells.push(c),
                None => self.widen(),
            }
        }
        if let SegmentStore::Wide(v) = &mut self.store {
            v.push(s);
        }
    }

    /// Turns the cells into wide segments (a number did not fit).
    fn widen(&mut self) {
        if let SegmentStore::Narrow(_) = self.store {
            let wide: Vec<Segment> = self.iter().collect();
            self.store = SegmentStore::Wide(wide);
        }
    }

    fn shrink_to_fit(&mut self) {
        match &mut self.store {
            SegmentStore::Narrow(v) => v.shrink_to_fit(),
            SegmentStore::Wide(v) => v.shrink_to_fit(),
        }
    }

    /// The number of segments.
    pub fn len(&self) -> usize {
        match &self.store {
            SegmentStore::Narrow(v) => v.len(),
            SegmentStore::Wide(v) => v.len(),
        }
    }

    /// Whether there is none (an empty document).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Segment `i`.
    pub fn get(&self, i: usize) -> Option<Segment> {
        match &self.store {
            SegmentStore::Narrow(v) => {
                let start = if i == 0 {
                    0
                } else {
                    v.get(i - 1)?.end as usize
                };
                Some(v.get(i)?.segment(start))
            }
            SegmentStore::Wide(v) => v.get(i).cloned(),
        }
    }

    /// Segment `i`, which must exist (as indexing a list).
    pub fn at(&self, i: usize) -> Segment {
        self.get(i).expect("a segment index within the painting")
    }

    /// Every segment, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Segment> + '_ {
        (0..self.len()).map(|i| self.at(i))
    }

    /// The number of segments that end at or before `at`: the index of the one holding byte
    /// `at`, if any.
    fn ending_by(&self, at: usize) -> usize {
        match &self.store {
            SegmentStore::Narrow(v) => v.partition_point(|c| (c.end as usize) <= at),
            SegmentStore::Wide(v) => v.partition_point(|s| s.range.end <= at),
        }
    }

    /// Index of the segment holding byte `at`.
    pub fn index_of(&self, at: usize) -> Option<usize> {
        let i = self.ending_by(at);
        self.get(i).filter(|s| s.range.start <= at).map(|_| i)
    }

    /// Applies `f` to the part of the segments inside `r`, splitting segments at its edges
    /// (as [`paint::overlay`] does to a list of segments).
    pub(crate) fn overlay(&mut self, r: &Range<usize>, f: impl Fn(&mut Segment)) {
        if r.is_empty() {
            return;
        }
        let cells = match &mut self.store {
            SegmentStore::Wide(v) => return paint::overlay(v, r, f),
            SegmentStore::Narrow(cells) => cells,
        };
        let first = cells.partition_point(|c| (c.end as usize) <= r.start);
        // Segments start where the one before ends: the first ending at or after `r.end`
        // is the last to start before it.
        let last = (cells.partition_point(|c| (c.end as usize) < r.end) + 1).min(cells.len());
        if first >= last {
            return;
        }
        let mut start = if first == 0 {
            0
        } else {
            cells[first - 1].end as usize
        };
        let mut replaced = Vec::with_capacity(last - first + 2);
        for c in &cells[first..last] {
            let s = c.segment(start);
            start = s.range.end;
            paint::overlay_one(s, r, &f, &mut replaced);
        }
        let narrow: Option<Vec<Cell>> = replaced.iter().map(Cell::of).collect();
        match narrow {
            Some(narrow) => {
                cells.splice(first..last, narrow);
            }
            None => {
                // Not reached while the document fits in `u32` (the numbers come from it).
                self.widen();
                if let SegmentStore::Wide(v) = &mut self.store {
                    v.splice(first..last, replaced);
                }
            }
        }
    }
}

impl From<Vec<Segment>> for Segments {
    fn from(segments: Vec<Segment>) -> Segments {
        let narrow: Option<Vec<Cell>> = segments.iter().map(Cell::of).collect();
        Segments {
            store: match narrow {
                Some(cells) => SegmentStore::Narrow(cells),
                None => SegmentStore::Wide(segments),
            },
        }
    }
}

/// The regions of an analysis (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Regions {
    entries: Vec<Entry>,
    /// The regions that hold something of their own, whole.
    full: Vec<Region>,
}

#[derive(Clone, Copy, Debug)]
enum Entry {
    Slim(Slim),
    /// An index into [`Regions::full`].
    Full(u32),
}

/// A region with no captures and no value of its own: its value (if any) is an item of the
/// message's list under its field.
#[derive(Clone, Copy, Debug)]
struct Slim {
    field: u32,
    open: [u32; 2],
    body: [u32; 2],
    /// The close delimiter, when `closed`.
    close: [u32; 2],
    /// `u32::MAX` for none.
    close_event: u32,
    open_event: u32,
    /// `u32::MAX` for none.
    value_item: u32,
    /// The field of an [`Ending::Open`].
    ending_field: u32,
    parsed_at: Option<Place>,
    ending: u8,
    kept: u8,
    closed: bool,
}

const NONE: u32 = u32::MAX;

/// `n` as a `u32` below [`NONE`].
fn narrow(n: usize) -> Option<u32> {
    u32::try_from(n).ok().filter(|&n| n != NONE)
}

fn narrow_range(r: &Range<usize>) -> Option<[u32; 2]> {
    Some([narrow(r.start)?, narrow(r.end)?])
}

impl Slim {
    /// The slim record of `g`, when it holds nothing of its own and its numbers fit.
    fn of(g: &Region) -> Option<Slim> {
        if g.holds_values() {
            return None;
        }
        let (ending, ending_field) = match g.ending {
            None => (0, 0),
            Some(Ending::Close) => (1, 0),
            Some(Ending::Open(f)) => (2, narrow(f)?),
            Some(Ending::EndOfStream) => (3, 0),
            Some(Ending::Failed) => (4, 0),
        };
        Some(Slim {
            field: narrow(g.field)?,
            open: narrow_range(&g.open)?,
            body: narrow_range(&g.body)?,
            close: match &g.close {
                Some(c) => narrow_range(c)?,
                None => [0, 0],
            },
            close_event: match g.close_event {
                Some(e) => narrow(e)?,
                None => NONE,
            },
            open_event: narrow(g.open_event)?,
            value_item: match g.value_item {
                Some(i) => narrow(i)?,
                None => NONE,
            },
            ending_field,
            parsed_at: g.parsed_at,
            ending,
            kept: match g.kept_as_value {
                Step::None => 0,
                Step::Parsed => 1,
                Step::Transformed => 2,
            },
            closed: g.close.is_some(),
        })
    }

    fn kept(&self) -> Step {
        match self.kept {
            1 => Step::Parsed,
            2 => Step::Transformed,
            _ => Step::None,
        }
    }

    fn value_item(&self) -> Option<usize> {
        (self.value_item != NONE).then_some(self.value_item as usize)
    }

    /// The engine's region of this record (nothing to copy: it holds no value).
    fn region(&self) -> Region {
        let range = |r: [u32; 2]| r[0] as usize..r[1] as usize;
        let mut g = Region::opened(
            self.field as usize,
            range(self.open),
            self.open_event as usize,
        );
        g.body = range(self.body);
        g.close = self.closed.then(|| range(self.close));
        g.ending = match self.ending {
            1 => Some(Ending::Close),
            2 => Some(Ending::Open(self.ending_field as usize)),
            3 => Some(Ending::EndOfStream),
            4 => Some(Ending::Failed),
            _ => None,
        };
        g.kept_as_value = self.kept();
        g.parsed_at = self.parsed_at;
        g.value_item = self.value_item();
        g.close_event = (self.close_event != NONE).then_some(self.close_event as usize);
        g
    }

    /// [`Region::value_in`] of this record.
    fn value_in<'a>(&self, message: Option<&'a Dict>, field_name: &str) -> Option<&'a Value> {
        message?.get(field_name)?.as_list()?.get(self.value_item()?)
    }
}

impl From<Vec<Region>> for Regions {
    fn from(regions: Vec<Region>) -> Regions {
        let mut out = Regions {
            entries: Vec::with_capacity(regions.len()),
            full: Vec::new(),
        };
        for g in regions {
            out.push(g);
        }
        out.full.shrink_to_fit();
        out
    }
}

impl Regions {
    fn push(&mut self, g: Region) {
        let entry = match (Slim::of(&g), narrow(self.full.len())) {
            (Some(s), _) => Entry::Slim(s),
            (None, Some(i)) => {
                self.full.push(g);
                Entry::Full(i)
            }
            // More regions holding values than fit in `u32`: not reached (each region has
            // text, and offsets past that are held wide by the slim test above).
            (None, None) => return,
        };
        self.entries.push(entry);
    }

    /// The number of regions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Region `r` (a slim one rebuilt, which copies no value).
    pub fn get(&self, r: usize) -> Option<Cow<'_, Region>> {
        Some(match self.entries.get(r)? {
            Entry::Slim(s) => Cow::Owned(s.region()),
            Entry::Full(i) => Cow::Borrowed(self.full.get(*i as usize)?),
        })
    }

    /// Region `r`, which must exist (as indexing a list).
    pub fn at(&self, r: usize) -> Cow<'_, Region> {
        self.get(r).expect("a region index within the analysis")
    }

    /// Every region, in the order they opened.
    pub fn iter(
        &self,
    ) -> impl ExactSizeIterator<Item = Cow<'_, Region>> + DoubleEndedIterator + '_ {
        (0..self.len()).map(|r| self.at(r))
    }

    /// The field of region `r`.
    pub fn field(&self, r: usize) -> Option<usize> {
        match self.entries.get(r)? {
            Entry::Slim(s) => Some(s.field as usize),
            Entry::Full(i) => self.full.get(*i as usize).map(|g| g.field),
        }
    }

    /// [`Region::value_in`] of region `r`.
    pub fn value_in<'a>(
        &'a self,
        r: usize,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        match self.entries.get(r)? {
            Entry::Slim(s) => s.value_in(message, field_name),
            Entry::Full(i) => self.full.get(*i as usize)?.value_in(message, field_name),
        }
    }

    /// [`Region::parsed_in`] of region `r`.
    pub fn parsed_in<'a>(
        &'a self,
        r: usize,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        match self.entries.get(r)? {
            // A slim region's parsed content is its value, or a place inside it.
            Entry::Slim(s) => match (s.kept(), s.parsed_at) {
                (Step::Parsed, _) => s.value_in(message, field_name),
                (_, Some(place)) => place.get(s.value_in(message, field_name)?),
                _ => None,
            },
            Entry::Full(i) => self.full.get(*i as usize)?.parsed_in(message, field_name),
        }
    }

    /// [`Region::transformed_in`] of region `r`.
    pub fn transformed_in<'a>(
        &'a self,
        r: usize,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        match self.entries.get(r)? {
            Entry::Slim(s) => match s.kept() {
                Step::Transformed => s.value_in(message, field_name),
                _ => None,
            },
            Entry::Full(i) => self
                .full
                .get(*i as usize)?
                .transformed_in(message, field_name),
        }
    }

    /// Sets what the content parser made of region `r` (the region pane shows what a failed
    /// transform was given).
    pub(crate) fn set_parsed(&mut self, r: usize, parsed: Option<Value>) {
        let Some(entry) = self.entries.get_mut(r) else {
            return;
        };
        match *entry {
            Entry::Full(i) => {
                if let Some(g) = self.full.get_mut(i as usize) {
                    g.set_own_parsed(parsed);
                }
            }
            Entry::Slim(s) => {
                let Some(i) = narrow(self.full.len()) else {
                    return;
                };
                let mut g = s.region();
                g.set_own_parsed(parsed);
                self.full.push(g);
                *entry = Entry::Full(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(r: Range<usize>, paint: Paint) -> Segment {
        Segment::new(r, paint)
    }

    #[test]
    fn segments_read_back_as_painted_and_overlay_as_the_wide_list() {
        let marks = vec![
            (3..7, Paint::Open { region: 0 }),
            (7..12, Paint::Body { region: 0 }),
            (12..15, Paint::Close { region: 0 }),
            (18..20, Paint::Discarded),
        ];
        let mut wide = paint::cover_sorted(marks.clone(), marks.len(), 2, 24);
        let mut narrow = Segments::cover_sorted(marks, 2, 24);
        assert_eq!(narrow.iter().collect::<Vec<_>>(), wide);
        let capture = |s: &mut Segment| {
            if matches!(s.paint, Paint::Open { .. }) {
                s.paint = Paint::Capture {
                    region: 0,
                    capture: 3,
                }
            }
        };
        for (r, f) in [
            (4..6, &capture as &dyn Fn(&mut Segment)),
            (10..19, &|s: &mut Segment| s.held = true),
            (0..1, &|s: &mut Segment| s.error = true),
            (23..24, &|s: &mut Segment| s.lost = true),
            (5..5, &|s: &mut Segment| s.lost = true),
        ] {
            paint::overlay(&mut wide, &r, f);
            narrow.overlay(&r, f);
            assert_eq!(narrow.iter().collect::<Vec<_>>(), wide, "after {r:?}");
        }
        for at in 0..26 {
            let i = wide.iter().position(|s| s.range.contains(&at));
            assert_eq!(narrow.index_of(at), i, "at {at}");
        }
        assert_eq!(narrow.get(narrow.len()), None);
        let error = Segment {
            error: true,
            ..seg(0..1, Paint::Cut)
        };
        assert_eq!(narrow.at(0), error);
    }

    #[test]
    fn a_region_without_values_of_its_own_reads_back_whole() {
        let mut g = Region::opened(2, 5..16, 3);
        g.body = 16..40;
        g.close = Some(40..52);
        g.ending = Some(Ending::Open(1));
        g.kept_as_value = Step::Transformed;
        g.value_item = Some(7);
        g.close_event = Some(9);
        let mut held = g.clone();
        held.set_value(Some(Value::from("x")));
        held.value_item = None;
        let mut regions = Regions::from(vec![g.clone(), held.clone()]);
        assert!(matches!(regions.get(0), Some(Cow::Owned(_))));
        assert_eq!(*regions.at(0), g);
        assert_eq!(*regions.at(1), held);
        assert_eq!(regions.field(1), Some(2));
        regions.set_parsed(0, Some(Value::Int(1)));
        assert_eq!(regions.at(0).own_parsed(), Some(&Value::Int(1)));
        assert_eq!(regions.len(), 2);
    }
}
