//! Where each pane goes for a given screen size and pane settings. Pure, so that the views and
//! the mouse handling agree on every rectangle.
//!
//! ```text
//! +-- raw ----------------+-- message ------------+
//! |                       |                       |
//! |                       +-- region -------------+
//! |                       |                       |
//! +-- samples --+-- diagnostics ------------------+
//! status bar
//! ```

use ratatui::layout::Rect;

use crate::workbench::pane::{PANES, PaneSpec, Place};
use crate::workbench::state::{Pane, State};

/// Below this size only a "terminal too small" message is drawn.
pub(crate) const MIN_WIDTH: u16 = 40;
pub(crate) const MIN_HEIGHT: u16 = 10;

/// The rectangles of one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Screen {
    pub panes: Vec<(Pane, Rect)>,
    pub status: Rect,
    pub too_small: bool,
}

impl Screen {
    pub fn rect(&self, pane: Pane) -> Option<Rect> {
        self.panes.iter().find(|(p, _)| *p == pane).map(|(_, r)| *r)
    }

    /// The pane under a screen position.
    pub fn pane_at(&self, x: u16, y: u16) -> Option<(Pane, Rect)> {
        self.panes
            .iter()
            .copied()
            .find(|(_, r)| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
    }
}

fn split_h(r: Rect, left: u16) -> (Rect, Rect) {
    let left = left.min(r.width);
    (
        Rect::new(r.x, r.y, left, r.height),
        Rect::new(r.x + left, r.y, r.width - left, r.height),
    )
}

fn split_v(r: Rect, top: u16) -> (Rect, Rect) {
    let top = top.min(r.height);
    (
        Rect::new(r.x, r.y, r.width, top),
        Rect::new(r.x, r.y + top, r.width, r.height - top),
    )
}

/// The visible panes of `place`, in their order there.
fn in_place(state: &State, place: Place) -> Vec<&'static PaneSpec> {
    let mut specs: Vec<_> = PANES
        .iter()
        .filter(|s| s.place == place && state.is_visible(s.pane))
        .collect();
    specs.sort_by_key(|s| s.order);
    specs
}

/// Divides `area` among `specs` (one after the other along the axis `split` cuts, whose
/// length `length` gives): each takes its share, the last what is left.
fn stack(
    mut area: Rect,
    specs: &[&PaneSpec],
    split: fn(Rect, u16) -> (Rect, Rect),
    length: fn(Rect) -> u16,
    out: &mut Vec<(Pane, Rect)>,
) {
    for (i, spec) in specs.iter().enumerate() {
        if i + 1 == specs.len() {
            out.push((spec.pane, area));
        } else {
            let (this, rest) = split(area, spec.share.of(length(area)));
            out.push((spec.pane, this));
            area = rest;
        }
    }
}

/// Lays out the screen `area` for `state`, each pane where the pane table (`pane::PANES`) puts it.
pub fn compute(area: Rect, state: &State) -> Screen {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return Screen {
            panes: Vec::new(),
            status: Rect::default(),
            too_small: true,
        };
    }
    let (main, status) = split_v(area, area.height - 1);
    let mut panes = Vec::new();
    if state.ui.zoom {
        panes.push((state.ui.focus, main));
        return Screen {
            panes,
            status,
            too_small: false,
        };
    }
    let left = in_place(state, Place::TopLeft);
    let right = in_place(state, Place::TopRight);
    let below = in_place(state, Place::Bottom);
    let top_panes = !left.is_empty() || !right.is_empty();
    let (top, bottom) = match (top_panes, !below.is_empty()) {
        (true, true) => {
            let max = main.height.saturating_sub(6).max(3);
            // Small terminals keep most rows for the text.
            let wanted = if main.height < 23 {
                state.ui.bottom.min(main.height / 3)
            } else {
                state.ui.bottom
            };
            let b = wanted.clamp(3, max);
            split_v(main, main.height - b)
        }
        (true, false) => (main, Rect::default()),
        (false, true) => (Rect::default(), main),
        (false, false) => (main, Rect::default()),
    };
    if top_panes {
        let (l, r) = match (!left.is_empty(), !right.is_empty()) {
            (true, true) => {
                let w =
                    (u32::from(top.width) * u32::from(state.ui.split.clamp(20, 80)) / 100) as u16;
                split_h(top, w.max(20).min(top.width.saturating_sub(20)))
            }
            (true, false) => (top, Rect::default()),
            (false, _) => (Rect::default(), top),
        };
        stack(l, &left, split_v, |r| r.height, &mut panes);
        stack(r, &right, split_v, |r| r.height, &mut panes);
    }
    stack(bottom, &below, split_h, |r| r.width, &mut panes);
    Screen {
        panes,
        status,
        too_small: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::theme::Theme;

    #[test]
    fn panes_tile_the_screen_at_80x24() {
        let s = State::new(Theme::dark(), (80, 24));
        let screen = compute(Rect::new(0, 0, 80, 24), &s);
        assert_eq!(screen.panes.len(), 5);
        let area: u32 = screen
            .panes
            .iter()
            .map(|(_, r)| u32::from(r.width) * u32::from(r.height))
            .sum();
        assert_eq!(area, 80 * 23);
        assert!(compute(Rect::new(0, 0, 30, 8), &s).too_small);
    }
}
