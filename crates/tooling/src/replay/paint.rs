//! The document as a view colours it after a step: each byte range tagged with what it was at
//! that point of the stream (a region's delimiter or body, discarded, held back, not fed yet).

use std::ops::Range;

use super::Replay;

/// What a stretch of the document was after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    /// Prefix text before the start anchor's cut: never seen by the parser.
    Cut,
    OpenDelimiter(usize),
    Body(usize),
    CloseDelimiter(usize),
    /// Text that went to no region (no implicit field and no region open).
    Discarded,
    /// Consumed by the parser without any event: the implicit field's close delimiter when
    /// that region had not opened (the reference reports no close for it), or text of a step
    /// that failed (its events are lost).
    Unrouted,
    /// Received but held back: a delimiter may start here.
    Held,
    /// Not fed yet.
    Unfed,
}

/// A stretch of the document with its paint; segments are in order and cover the document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub range: Range<usize>,
    pub paint: Paint,
}

/// A region as it stood after a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionView {
    /// Index into [`Replay::regions`].
    pub region: usize,
    pub field: usize,
    pub open: Range<usize>,
    /// The body received so far.
    pub body: Range<usize>,
    /// Set once the region has closed.
    pub close: Option<Range<usize>>,
}

impl Replay {
    /// The regions opened by the end of `step`, open ones with the body received so far.
    pub fn regions_at(&self, step: usize) -> Vec<RegionView> {
        let live = self.step(step).live;
        let n = self.regions.partition_point(|r| r.opened_at <= step);
        self.regions[..n]
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let closed = r.closed_at.is_some_and(|c| c <= step);
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

    /// The whole document painted as it stood after `step`.
    pub fn paint(&self, step: usize) -> Vec<Segment> {
        let s = self.step(step);
        let mut marks: Vec<Segment> = Vec::new();
        for r in self.regions_at(step) {
            marks.push(seg(r.open, Paint::OpenDelimiter(r.field)));
            marks.push(seg(r.body, Paint::Body(r.field)));
            if let Some(close) = r.close {
                marks.push(seg(close, Paint::CloseDelimiter(r.field)));
            }
        }
        let discarded = self.discarded.partition_point(|(st, _)| *st <= step);
        marks.extend(
            self.discarded[..discarded]
                .iter()
                .map(|(_, r)| seg(r.clone(), Paint::Discarded)),
        );
        marks.retain(|m| !m.range.is_empty());
        marks.sort_by_key(|m| m.range.start);
        let mut out = Vec::with_capacity(marks.len() * 2 + 4);
        push(&mut out, 0..self.origin, Paint::Cut);
        let mut at = self.origin;
        for m in marks {
            push(&mut out, at..m.range.start, Paint::Unrouted);
            at = at.max(m.range.end);
            push(&mut out, m.range, m.paint);
        }
        push(&mut out, at..s.held.start.max(at), Paint::Unrouted);
        push(&mut out, s.held.start.max(at)..s.held.end, Paint::Held);
        push(&mut out, s.fed_to..self.document.len(), Paint::Unfed);
        out
    }
}

fn seg(range: Range<usize>, paint: Paint) -> Segment {
    Segment { range, paint }
}

/// Appends a non-empty segment, merging it with the previous one when they touch and match.
fn push(out: &mut Vec<Segment>, range: Range<usize>, paint: Paint) {
    if range.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut()
        && last.paint == paint
        && last.range.end == range.start
    {
        last.range.end = range.end;
        return;
    }
    out.push(seg(range, paint));
}
