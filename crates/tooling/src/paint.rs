//! The document painted by region: each byte range tagged with what the parser made of it (a
//! region's delimiter, capture or body, text that went nowhere, the prefix the start anchor cut
//! away). The workbench's raw pane and the stream replay colour text with these, so both show
//! the engine's region model ([`rtbench_engine::region`]) the same way.

use std::ops::Range;

/// What a stretch of the document is. Regions are indices into the region list the segments
/// were painted from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    /// Prefix text before the start anchor's cut: the parser never sees it.
    Cut,
    /// An open delimiter.
    Open {
        /// The region it opened.
        region: usize,
    },
    /// A close delimiter.
    Close {
        /// The region it closed.
        region: usize,
    },
    /// A named capture's text inside a delimiter.
    Capture {
        /// The region whose delimiter holds it.
        region: usize,
        /// Index into the region's captures.
        capture: usize,
    },
    /// Body text.
    Body {
        /// The region it went to.
        region: usize,
    },
    /// Text that went to no field (no implicit field and no region open).
    Discarded,
    /// Text the parser consumed without routing it anywhere: after a parse error, the
    /// implicit field's close before its region opened, or a delimiter quirk such as `$`
    /// before a final newline.
    Unrouted,
    /// Not fed to the parser yet (a replay step before the end).
    Unfed,
}

impl Paint {
    /// The region this paint belongs to, if any.
    pub fn region(self) -> Option<usize> {
        match self {
            Paint::Open { region }
            | Paint::Close { region }
            | Paint::Capture { region, .. }
            | Paint::Body { region } => Some(region),
            _ => None,
        }
    }
}

/// A stretch of the document with one look; a painting's segments are in order and cover the
/// document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Byte range in the document.
    pub range: Range<usize>,
    /// What it is.
    pub paint: Paint,
    /// Received but held back: a delimiter might start here.
    pub held: bool,
    /// Where a parse error points.
    pub error: bool,
    /// Where the parse silently lost something (an overwritten value, dropped text).
    pub lost: bool,
}

impl Segment {
    /// A segment with no marks.
    pub fn new(range: Range<usize>, paint: Paint) -> Segment {
        Segment {
            range,
            paint,
            held: false,
            error: false,
            lost: false,
        }
    }
}

/// Paints `0..len` with `marks` (sorted here; where marks overlap the earlier one keeps the
/// text). Gaps are [`Paint::Cut`] before `origin` and [`Paint::Unrouted`] after it.
pub fn cover(mut marks: Vec<(Range<usize>, Paint)>, origin: usize, len: usize) -> Vec<Segment> {
    marks.retain(|(r, _)| !r.is_empty() && r.end <= len);
    marks.sort_by_key(|(r, _)| r.start);
    let count = marks.len();
    cover_sorted(marks, count, origin, len)
}

/// [`cover`] of marks already in order of their start (as a stream's events are), read as
/// they come instead of collected first; `count` is how many there are at most.
pub fn cover_sorted(
    marks: impl IntoIterator<Item = (Range<usize>, Paint)>,
    count: usize,
    origin: usize,
    len: usize,
) -> Vec<Segment> {
    let mut segments = Vec::with_capacity(count * 2 + 2);
    cover_each(marks, origin, len, |s| segments.push(s));
    segments
}

/// The segments [`cover_sorted`] makes of `marks`, given one by one to `emit` (for a caller
/// that stores them its own way).
pub fn cover_each(
    marks: impl IntoIterator<Item = (Range<usize>, Paint)>,
    origin: usize,
    len: usize,
    mut emit: impl FnMut(Segment),
) {
    let gap = |emit: &mut dyn FnMut(Segment), from: usize, to: usize| {
        let cut = origin.clamp(from, to.max(from));
        if from < cut {
            emit(Segment::new(from..cut, Paint::Cut));
        }
        if cut < to {
            emit(Segment::new(cut..to, Paint::Unrouted));
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
        gap(&mut emit, at, start);
        emit(Segment::new(start..r.end, paint));
        at = r.end;
    }
    gap(&mut emit, at, len);
}

/// Applies `f` to the part of the segments inside `r`, splitting segments at its edges.
pub fn overlay(segments: &mut Vec<Segment>, r: &Range<usize>, f: impl Fn(&mut Segment)) {
    if r.is_empty() {
        return;
    }
    let first = segments.partition_point(|s| s.range.end <= r.start);
    let last = segments[first..].partition_point(|s| s.range.start < r.end) + first;
    let mut replaced = Vec::with_capacity(last - first + 2);
    for s in &segments[first..last] {
        overlay_one(s.clone(), r, &f, &mut replaced);
    }
    segments.splice(first..last, replaced);
}

/// One segment that meets `r`, as the pieces [`overlay`] makes of it: the part before `r`,
/// the part inside with `f` applied, and the part after, each where it is not empty.
pub fn overlay_one(s: Segment, r: &Range<usize>, f: impl Fn(&mut Segment), out: &mut Vec<Segment>) {
    if s.range.start < r.start {
        out.push(Segment {
            range: s.range.start..r.start,
            ..s.clone()
        });
    }
    let mut inside = Segment {
        range: s.range.start.max(r.start)..s.range.end.min(r.end),
        ..s.clone()
    };
    f(&mut inside);
    out.push(inside);
    if s.range.end > r.end {
        out.push(Segment {
            range: r.end..s.range.end,
            ..s
        });
    }
}

/// Joins touching segments that look the same.
pub fn merge(segments: Vec<Segment>) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::with_capacity(segments.len());
    for s in segments {
        if let Some(last) = out.last_mut()
            && (last.paint, last.held, last.error, last.lost) == (s.paint, s.held, s.error, s.lost)
            && last.range.end == s.range.start
        {
            last.range.end = s.range.end;
            continue;
        }
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(segments: &[Segment]) -> Vec<(Range<usize>, Paint, bool)> {
        segments
            .iter()
            .map(|s| (s.range.clone(), s.paint, s.held))
            .collect()
    }

    #[test]
    fn cover_fills_gaps_around_the_anchor_and_keeps_the_first_of_overlapping_marks() {
        let body = Paint::Body { region: 0 };
        let open = Paint::Open { region: 0 };
        let s = cover(
            vec![(6..9, body), (4..6, open), (8..10, Paint::Discarded)],
            2,
            12,
        );
        assert_eq!(
            shape(&s),
            [
                (0..2, Paint::Cut, false),
                (2..4, Paint::Unrouted, false),
                (4..6, open, false),
                (6..9, body, false),
                (9..10, Paint::Discarded, false),
                (10..12, Paint::Unrouted, false),
            ]
        );
        // The anchor's cut inside a gap splits it; an origin past the end paints all as cut.
        assert_eq!(
            shape(&cover(Vec::new(), 20, 3)),
            [(0..3, Paint::Cut, false)]
        );
    }

    #[test]
    fn overlay_splits_at_its_edges_and_merge_joins_what_looks_alike() {
        let mut s = cover(vec![(0..4, Paint::Body { region: 1 })], 0, 8);
        overlay(&mut s, &(2..6), |g| g.held = true);
        assert_eq!(
            shape(&s),
            [
                (0..2, Paint::Body { region: 1 }, false),
                (2..4, Paint::Body { region: 1 }, true),
                (4..6, Paint::Unrouted, true),
                (6..8, Paint::Unrouted, false),
            ]
        );
        overlay(&mut s, &(0..8), |g| g.held = false);
        assert_eq!(
            shape(&merge(s)),
            [
                (0..4, Paint::Body { region: 1 }, false),
                (4..8, Paint::Unrouted, false)
            ]
        );
    }
}
