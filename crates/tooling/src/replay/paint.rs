//! The document as a view colours it after a step: each byte range tagged with what it was at
//! that point of the stream (a region's delimiter or body, discarded, held back, not fed yet).

use std::ops::Range;

use super::Replay;
use crate::paint::{self, Paint, Segment};

/// A region as it stood after a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionView {
    /// Index into [`Replay::regions`].
    pub region: usize,
    /// The region's field, as an index into the template's fields.
    pub field: usize,
    /// Where the open delimiter is in the document.
    pub open: Range<usize>,
    /// The body received so far.
    pub body: Range<usize>,
    /// Set once the region has closed.
    pub close: Option<Range<usize>>,
}

impl Replay {
    /// The regions opened by the end of `step`, open ones with the body received so far.
    pub fn regions_at(&self, step: usize) -> Vec<RegionView> {
        let s = self.step(step);
        let (live, events_end) = (s.live, s.events.end);
        let regions = self.regions();
        let n = regions.partition_point(|r| r.open_event < events_end);
        regions
            .iter()
            .take(n)
            .enumerate()
            .map(|(i, r)| {
                let closed = r.close_event.is_some_and(|c| c < events_end);
                let body_end = match live {
                    Some((open, end)) if open == i && !closed => end,
                    _ => r.body.end,
                };
                RegionView {
                    region: i,
                    field: r.field,
                    open: r.open.clone(),
                    body: r.body.start..body_end,
                    close: r.close.clone().filter(|_| closed),
                }
            })
            .collect()
    }

    /// The whole document painted as it stood after `step`: regions as far as they had got,
    /// discarded text, the held-back text marked, and the rest [`Paint::Unfed`].
    pub fn paint(&self, step: usize) -> Vec<Segment> {
        let s = self.step(step);
        let mut marks = Vec::new();
        for r in self.regions_at(step) {
            marks.push((r.open, Paint::Open { region: r.region }));
            marks.push((r.body, Paint::Body { region: r.region }));
            if let Some(close) = r.close {
                marks.push((close, Paint::Close { region: r.region }));
            }
        }
        // Contiguous discards are merged: by this step, a merged run had reached the text the
        // parser still held (everything before it was routed, everything after not yet).
        let discarded = self.discarded.partition_point(|(st, _)| *st <= step);
        marks.extend(self.discarded[..discarded].iter().map(|(_, r)| {
            (
                r.start..r.end.min(s.held.start.max(r.start)),
                Paint::Discarded,
            )
        }));
        let mut out = paint::cover(marks, self.origin, self.document.len());
        paint::overlay(&mut out, &(s.fed_to..self.document.len()), |g| {
            g.paint = Paint::Unfed
        });
        paint::overlay(&mut out, &s.held, |g| g.held = true);
        let mut out = paint::merge(out);
        // Views dim the prefix by segment: keep its end a segment boundary.
        paint::overlay(&mut out, &(0..self.prefix_len), |_| {});
        out
    }
}
