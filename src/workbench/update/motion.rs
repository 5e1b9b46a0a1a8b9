//! Cursor and scroll motions: the raw pane's cursor (by characters, lines, pages and regions),
//! the other panes' scrolls, and the sample selection.

use crate::workbench::analysis::Analysis;
use crate::workbench::keys::Action;
use crate::workbench::pane::Motion;
use crate::workbench::state::{Pane, State};
use crate::workbench::view::{diagnostics, raw};

use super::{Cmd, raw_geometry, screen};

/// After the cursor moved: keep it on screen and select the region under it.
pub(super) fn cursor_moved(state: &mut State) {
    let Some(a) = state.analysis().cloned() else {
        return;
    };
    state.ui.cursor = a.document.floor_char_boundary(state.ui.cursor);
    super::fold::clamp(state, &a);
    if let Some((w, h)) = raw_geometry(state) {
        state.ui.raw_top = raw::ensure_visible(&a, w, h, state.ui.raw_top, state.ui.cursor);
        super::fold::clamp(state, &a);
    }
    if let Some(i) = a.segment_index(state.ui.cursor)
        && let Some(r) = a.segments.at(i).paint.region()
    {
        if state.ui.region != Some(r) {
            state.ui.scroll[Pane::Region] = 0;
        }
        state.ui.region = Some(r);
    }
}

pub(super) fn remember_col(state: &mut State, a: &Analysis) {
    state.ui.cursor = a.document.floor_char_boundary(state.ui.cursor);
    let line = raw::line_of(a, state.ui.cursor);
    let start = a.line_starts.at(line);
    state.ui.want_col = a.document[start..state.ui.cursor].chars().count();
}

/// Moves the cursor by whole lines, keeping the wanted column.
fn move_rows(state: &mut State, a: &Analysis, delta: isize) {
    let line = raw::line_of(a, state.ui.cursor);
    let target_line = if delta < 0 {
        line.saturating_sub(delta.unsigned_abs())
    } else {
        (line + delta as usize).min(a.line_starts.len() - 1)
    };
    let r = a.line_range(target_line);
    let at = a.document[r.clone()]
        .char_indices()
        .nth(state.ui.want_col)
        .map_or(r.end, |(i, _)| r.start + i);
    state.ui.cursor = at;
}

fn move_chars(state: &mut State, a: &Analysis, delta: isize) {
    let doc = &a.document;
    // The token-id decoder's defusing markers take no cell: the cursor steps over them.
    let marker = |at: usize| doc[at..].starts_with(rtbench_engine::MARKER);
    if delta > 0 {
        if let Some(c) = doc[state.ui.cursor..].chars().next() {
            state.ui.cursor += c.len_utf8();
        }
        while marker(state.ui.cursor) {
            state.ui.cursor += rtbench_engine::MARKER.len_utf8();
        }
    } else {
        while let Some(c) = doc[..state.ui.cursor].chars().next_back() {
            state.ui.cursor -= c.len_utf8();
            if !marker(state.ui.cursor) {
                break;
            }
        }
    }
    remember_col(state, a);
}

fn jump_region(state: &mut State, a: &Analysis, forward: bool) {
    let starts = a.regions.iter().map(|g| {
        if g.open.is_empty() {
            g.body.start
        } else {
            g.open.start
        }
    });
    let target = if forward {
        starts.filter(|&s| s > state.ui.cursor).min()
    } else {
        starts.filter(|&s| s < state.ui.cursor).max()
    };
    if let Some(t) = target {
        state.ui.cursor = t;
        remember_col(state, a);
    }
}

/// The scroll offset of a pane the motion keys scroll (see [`Motion`]).
pub(super) fn scroll_of(state: &mut State, pane: Pane) -> Option<&mut usize> {
    matches!(pane.spec().motion, Motion::Scroll | Motion::Items).then(|| &mut state.ui.scroll[pane])
}

pub(super) fn select_sample(state: &mut State, to: usize) -> Cmd {
    if state.session.samples.is_empty() {
        return Cmd::None;
    }
    let to = to.min(state.session.samples.len() - 1);
    if to == state.ui.selected_sample {
        return Cmd::None;
    }
    state.ui.selected_sample = to;
    show_sample_row(state, to);
    Cmd::Reparse
}

/// Scrolls the samples pane so that list row `row` shows.
fn show_sample_row(state: &mut State, row: usize) {
    if let Some(r) = screen(state).rect(Pane::Samples) {
        let h = usize::from(r.height.saturating_sub(2)).max(1);
        let top = state.ui.scroll[Pane::Samples];
        if row < top {
            state.ui.scroll[Pane::Samples] = row;
        } else if row >= top + h {
            state.ui.scroll[Pane::Samples] = row + 1 - h;
        }
    }
}

/// The list row a motion goes to from row `s` (unclamped: `Bottom` is `usize::MAX`).
fn list_target(s: usize, action: Action, page: usize) -> usize {
    match action {
        Action::Up => s.saturating_sub(1),
        Action::Down => s.saturating_add(1),
        Action::PageUp => s.saturating_sub(page),
        Action::PageDown => s.saturating_add(page),
        Action::Top => 0,
        Action::Bottom => usize::MAX,
        _ => s,
    }
}

/// Up / Down in a corpus's list: groups, or the open group's records (moving onto a record
/// shows it).
fn corpus_motion(state: &mut State, action: Action) -> Cmd {
    let page = page(state, Pane::Samples);
    let Some(view) = state.session.corpus.as_mut() else {
        return Cmd::None;
    };
    let rows = view.rows();
    if rows == 0 {
        return Cmd::None;
    }
    let to = list_target(view.selected.min(rows - 1), action, page).min(rows - 1);
    if to == view.selected {
        return Cmd::None;
    }
    view.selected = to;
    let shows_records = view.open.is_some();
    keep_corpus_row_visible(state);
    if shows_records {
        Cmd::Reparse
    } else {
        Cmd::None
    }
}

/// Scrolls the samples pane so that the corpus's selected row (below its heading) shows.
pub(super) fn keep_corpus_row_visible(state: &mut State) {
    let Some(view) = state.session.corpus.as_ref() else {
        return;
    };
    // The open group's heading takes the first row.
    let row = view.selected + usize::from(view.open.is_some());
    show_sample_row(state, row);
}

fn page(state: &State, pane: Pane) -> usize {
    screen(state)
        .rect(pane)
        .map_or(10, |r| usize::from(r.height.saturating_sub(3)).max(1))
}

/// Rows that `lines` take when wrapped to `width` (by characters; word wrapping may take a
/// few more, hence the slack).
fn rows_of<R: crate::workbench::view::Rows>(lines: impl Iterator<Item = R>, width: u16) -> usize {
    let w = usize::from(width.max(1));
    let (n, rows) = lines.fold((0, 0), |(n, rows), l| {
        (n + 1, rows + l.width().div_ceil(w).max(1))
    });
    with_slack(rows, n)
}

/// `rows` of `lines` lines wrapped by characters, and room for the rows word wrapping may add:
/// a quarter of the rows wrapping made. Lines that fit take one row however they are wrapped,
/// so a pane of short lines (a message of many small tool calls) ends at its last line.
fn with_slack(rows: usize, lines: usize) -> usize {
    rows + rows.saturating_sub(lines) / 4
}

/// Up / Down in the diagnostics pane: select the previous / next diagnostic and scroll to it.
fn select_diagnostic(state: &mut State, action: Action) {
    let Some(r) = screen(state).rect(Pane::Diagnostics) else {
        return;
    };
    let inner = crate::workbench::view::inner(r);
    let items = diagnostics::items(state, usize::from(inner.width));
    if items.is_empty() {
        return;
    }
    let last = items.len() - 1;
    let d = state.ui.diagnostic.min(last);
    state.ui.diagnostic = match action {
        Action::Up | Action::PageUp => d.saturating_sub(1),
        Action::Down | Action::PageDown => (d + 1).min(last),
        Action::Top => 0,
        Action::Bottom => last,
        _ => d,
    };
    let rows = diagnostics::item_rows(&items, usize::from(inner.width));
    let first = rows[state.ui.diagnostic];
    let end = rows
        .get(state.ui.diagnostic + 1)
        .copied()
        .unwrap_or(first + 1);
    let h = usize::from(inner.height).max(1);
    let top = state.ui.scroll[Pane::Diagnostics];
    let top = if first < top {
        first
    } else if end > top + h {
        // Show the whole item if it fits, else its start.
        if end - first <= h { end - h } else { first }
    } else {
        top
    };
    state.ui.scroll[Pane::Diagnostics] = top;
}

/// Keeps the message and diagnostics scrolls within their text.
pub(super) fn clamp_scrolls(state: &mut State) {
    let sc = screen(state);
    if let Some(r) = sc.rect(Pane::Message) {
        let inner = crate::workbench::view::inner(r);
        let rows = state.session.shown.as_ref().map_or(1, |s| {
            // As [`rows_of`] counts them, from the rows kept for the pane's width.
            let lines = &s.message_lines;
            let rows = s
                .analysis
                .message
                .as_ref()
                .map_or(0, |m| lines.rows(m.into(), inner.width));
            with_slack(rows, lines.len()) + 4
        });
        let max = rows.saturating_sub(usize::from(inner.height));
        state.ui.scroll[Pane::Message] = state.ui.scroll[Pane::Message].min(max);
    }
    if let Some(r) = sc.rect(Pane::Diagnostics) {
        let inner = crate::workbench::view::inner(r);
        let (lines, _, _) =
            crate::workbench::view::diagnostics::lines(state, usize::from(inner.width));
        let max = rows_of(lines.iter(), inner.width).saturating_sub(usize::from(inner.height));
        state.ui.scroll[Pane::Diagnostics] = state.ui.scroll[Pane::Diagnostics].min(max);
    }
    if let Some(r) = sc.rect(Pane::Region) {
        // The body column is the longest: a third of the pane wide.
        let inner = crate::workbench::view::inner(r);
        let width = usize::from(inner.width / 3).max(1);
        let rows = state
            .analysis()
            .zip(state.ui.region)
            .and_then(|(a, r)| a.regions.get(r).map(|g| (a, g)))
            .map_or(1, |(a, g)| {
                let end = g.body.end.min(a.document.len());
                let body = &a.document[g.body.start.min(end)..end];
                // Counted as far as the scroll could reach: a longer body (a model's answer
                // of megabytes) leaves the scroll as it is without being measured whole.
                let enough =
                    state.ui.scroll[Pane::Region].saturating_add(usize::from(inner.height) + 1);
                let mut rows = 0;
                for l in body.split('\n') {
                    rows += unicode_width::UnicodeWidthStr::width(l)
                        .div_ceil(width)
                        .max(1);
                    if rows > enough {
                        break;
                    }
                }
                rows + g.captures().len() + 8
            });
        let max = rows.saturating_sub(usize::from(inner.height));
        state.ui.scroll[Pane::Region] = state.ui.scroll[Pane::Region].min(max);
    }
}

/// Cursor and scroll motions, which act on the focused pane.
pub(super) fn on_motion(state: &mut State, action: Action) -> Cmd {
    let focus = state.ui.focus;
    let motion = focus.spec().motion;
    if motion == Motion::List && state.session.corpus.is_some() {
        return corpus_motion(state, action);
    }
    if motion == Motion::List {
        let to = list_target(state.ui.selected_sample, action, page(state, focus));
        return select_sample(state, to);
    }
    if motion == Motion::Cursor {
        let Some(a) = state.analysis().cloned() else {
            return Cmd::None;
        };
        let pg = page(state, focus) as isize;
        match action {
            Action::Left => move_chars(state, &a, -1),
            Action::Right => move_chars(state, &a, 1),
            Action::Up => move_rows(state, &a, -1),
            Action::Down => move_rows(state, &a, 1),
            Action::PageUp => move_rows(state, &a, -pg),
            Action::PageDown => move_rows(state, &a, pg),
            Action::LineStart => {
                state.ui.cursor = a.line_range(raw::line_of(&a, state.ui.cursor)).start;
                remember_col(state, &a);
            }
            Action::LineEnd => {
                state.ui.cursor = a.line_range(raw::line_of(&a, state.ui.cursor)).end;
                remember_col(state, &a);
            }
            Action::Top => {
                state.ui.cursor = 0;
                remember_col(state, &a);
            }
            Action::Bottom => {
                state.ui.cursor = a.document.len();
                remember_col(state, &a);
            }
            Action::NextRegion => jump_region(state, &a, true),
            Action::PrevRegion => jump_region(state, &a, false),
            _ => {}
        }
        cursor_moved(state);
        return Cmd::None;
    }
    if motion == Motion::Items && !matches!(action, Action::NextRegion | Action::PrevRegion) {
        select_diagnostic(state, action);
        return Cmd::None;
    }
    // Region jumps work from any pane: they move the raw cursor.
    if matches!(action, Action::NextRegion | Action::PrevRegion) {
        if let Some(a) = state.analysis().cloned() {
            jump_region(state, &a, action == Action::NextRegion);
            cursor_moved(state);
        }
        return Cmd::None;
    }
    let pg = page(state, focus);
    if let Some(s) = scroll_of(state, focus) {
        *s = match action {
            Action::Up => s.saturating_sub(1),
            Action::Down => s.saturating_add(1),
            Action::PageUp => s.saturating_sub(pg),
            Action::PageDown => s.saturating_add(pg),
            Action::Top => 0,
            // Cut to the text's length by `clamp_scrolls`.
            Action::Bottom => usize::MAX,
            _ => *s,
        };
    }
    Cmd::None
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::on_action;
    use super::super::testing::loaded;
    use super::*;

    #[test]
    fn only_rows_that_wrapping_made_get_slack() {
        // 2.6 million short lines (10 MB of small tool calls) used to get 650,000 rows of
        // slack: `G` in the message pane scrolled past the end and showed nothing.
        assert_eq!(with_slack(2_600_000, 2_600_000), 2_600_000);
        assert_eq!(with_slack(140, 100), 150);
        assert_eq!(with_slack(0, 0), 0);
    }

    #[test]
    fn arrows_move_the_raw_cursor_by_characters_and_lines_keeping_the_column() {
        let mut state = loaded(0, (120, 40));
        let a = Arc::clone(state.analysis().unwrap());
        on_action(&mut state, Action::Top);
        assert_eq!((state.ui.cursor, state.ui.want_col), (0, 0));
        on_action(&mut state, Action::Right);
        on_action(&mut state, Action::Right);
        assert_eq!((state.ui.cursor, state.ui.want_col), (2, 2));
        on_action(&mut state, Action::Down);
        assert_eq!(raw::line_of(&a, state.ui.cursor), 1);
        let start = a.line_starts.at(1);
        let col = a.document[start..state.ui.cursor].chars().count();
        assert_eq!(col, 2.min(a.line_range(1).len()), "the column is kept");
        on_action(&mut state, Action::Left);
        assert_eq!(state.ui.want_col, col.saturating_sub(1));
        on_action(&mut state, Action::LineEnd);
        assert_eq!(state.ui.cursor, a.line_range(1).end);
        on_action(&mut state, Action::LineStart);
        assert_eq!(state.ui.cursor, start);
        on_action(&mut state, Action::Bottom);
        assert_eq!(state.ui.cursor, a.document.len());
        // At the end, → stays.
        on_action(&mut state, Action::Right);
        assert_eq!(state.ui.cursor, a.document.len());
    }

    #[test]
    fn region_jumps_move_the_cursor_and_select_the_region_from_any_pane() {
        let mut state = loaded(0, (120, 40));
        let a = Arc::clone(state.analysis().unwrap());
        on_action(&mut state, Action::Top);
        on_action(&mut state, Action::NextRegion);
        let start = a
            .regions
            .iter()
            .map(|g| {
                if g.open.is_empty() {
                    g.body.start
                } else {
                    g.open.start
                }
            })
            .filter(|&s| s > 0)
            .min()
            .unwrap();
        assert_eq!(state.ui.cursor, start);
        let r = state.ui.region.expect("a region under the cursor");
        let here = state.ui.cursor;
        // From the message pane too.
        state.ui.focus = Pane::Message;
        on_action(&mut state, Action::NextRegion);
        assert!(state.ui.cursor > here);
        assert_ne!(state.ui.region, Some(r));
        on_action(&mut state, Action::PrevRegion);
        assert_eq!(state.ui.cursor, here);
        assert_eq!(state.ui.region, Some(r));
        assert_eq!(state.ui.focus, Pane::Message, "the focus stays");
    }

    #[test]
    fn in_the_samples_pane_arrows_select_a_sample_and_ask_for_a_parse() {
        let mut state = loaded(0, (120, 40));
        state.ui.focus = Pane::Samples;
        assert_eq!(on_action(&mut state, Action::Down), Cmd::Reparse);
        assert_eq!(state.ui.selected_sample, 1);
        assert_eq!(on_action(&mut state, Action::Bottom), Cmd::Reparse);
        assert_eq!(state.ui.selected_sample, state.session.samples.len() - 1);
        // Already at the bottom: nothing to parse.
        assert_eq!(on_action(&mut state, Action::Down), Cmd::None);
        assert_eq!(on_action(&mut state, Action::Top), Cmd::Reparse);
        assert_eq!(state.ui.selected_sample, 0);
        // ] and [ work from any pane.
        state.ui.focus = Pane::Raw;
        assert_eq!(on_action(&mut state, Action::NextSample), Cmd::Reparse);
        assert_eq!(state.ui.selected_sample, 1);
        assert_eq!(on_action(&mut state, Action::PrevSample), Cmd::Reparse);
        assert_eq!(on_action(&mut state, Action::PrevSample), Cmd::None);
    }

    #[test]
    fn other_panes_scroll_within_their_text() {
        let mut state = loaded(0, (80, 24));
        state.ui.focus = Pane::Message;
        on_action(&mut state, Action::Down);
        assert_eq!(state.ui.scroll[Pane::Message], 1);
        on_action(&mut state, Action::Up);
        on_action(&mut state, Action::Up);
        assert_eq!(state.ui.scroll[Pane::Message], 0);
        // Bottom goes as far as the text goes, no further.
        on_action(&mut state, Action::Bottom);
        let bottom = state.ui.scroll[Pane::Message];
        assert!(bottom > 0 && bottom < 200, "{bottom}");
        on_action(&mut state, Action::Down);
        assert_eq!(state.ui.scroll[Pane::Message], bottom);
        let cursor = state.ui.cursor;
        on_action(&mut state, Action::Top);
        assert_eq!(state.ui.scroll[Pane::Message], 0);
        assert_eq!(state.ui.cursor, cursor, "the raw cursor stays");
    }

    #[test]
    fn space_pages_down_outside_the_replay() {
        let mut state = loaded(0, (80, 24));
        state.ui.fold = Some(false);
        on_action(&mut state, Action::Top);
        on_action(&mut state, Action::PlayPause);
        let a = state.analysis().unwrap();
        assert_eq!(raw::line_of(a, state.ui.cursor), page(&state, Pane::Raw));
    }
}
