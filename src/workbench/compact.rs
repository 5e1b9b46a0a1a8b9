//! The analysis's painted document, held compactly: a sample of many small regions (a hundred
//! thousand tool calls) has several segments per call, so their size per record is part of
//! what the analysis costs beyond its text and its message (its regions are held compactly by
//! the engine: see [`rtbench_engine::region::Regions`]).
//!
//! [`Segments`]: 12 bytes a segment (its end, region, capture, paint and marks; its start is
//! the previous segment's end, as segments cover the document in order), instead of a 48-byte
//! [`Segment`]. Reading gives the painting's own type back, so every view reads what it read
//! before. Offsets past `u32::MAX` (a document over 4 GiB), or a capture numbered past `u16::MAX`, keep
//! the wide records.

use std::ops::Range;

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

/// A segment in 12 bytes: its start is the previous cell's end (0 for the first). A capture is
/// a named group of a delimiter's pattern, numbered within it: 16 bits are room enough.
#[derive(Clone, Copy, Debug)]
struct Cell {
    end: u32,
    region: u32,
    capture: u16,
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
            capture: u16::try_from(capture).ok()?,
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
    /// Segments as [`paint::cover_sorted`] paints them: the marks `marks()` gives, in order of
    /// their start, over `0..len`, gaps [`Paint::Cut`] before `origin` and [`Paint::Unrouted`]
    /// after it. Built as they come, without the wide list, into a list of exactly their
    /// number (counted in a first pass over the marks): grown by doubling, the list of a
    /// sample of many small regions would hold up to twice its size, then a second copy while
    /// it shrank.
    pub(crate) fn cover_sorted<I: IntoIterator<Item = (Range<usize>, Paint)>>(
        marks: impl Fn() -> I,
        origin: usize,
        len: usize,
    ) -> Segments {
        let mut count = 0;
        paint::cover_each(marks(), origin, len, |_| count += 1);
        let mut out = Segments {
            store: SegmentStore::Narrow(Vec::with_capacity(count)),
        };
        paint::cover_each(marks(), origin, len, |s| out.push(s));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(r: Range<usize>, paint: Paint) -> Segment {
        Segment::new(r, paint)
    }

    #[test]
    fn a_segment_is_held_in_12_bytes_and_a_capture_past_16_bits_widens_the_list() {
        assert_eq!(size_of::<Cell>(), 12);
        let far = Paint::Capture {
            region: 0,
            capture: 1 << 16,
        };
        let mut s = Segments::from(vec![Segment::new(0..2, Paint::Cut)]);
        assert!(matches!(s.store, SegmentStore::Narrow(_)));
        s.push(Segment::new(2..5, far));
        assert!(matches!(s.store, SegmentStore::Wide(_)));
        assert_eq!(s.at(1).paint, far);
        assert_eq!(s.at(0).range, 0..2);
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
        let mut narrow = Segments::cover_sorted(|| marks.clone(), 2, 24);
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
}
