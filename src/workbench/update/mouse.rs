//! The mouse while inspecting: a click focuses a pane (and in the raw text puts the cursor
//! there, in the sample list selects a sample); the wheel scrolls the pane under the pointer.
//! The replay's mouse is in [`super::replay`].

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};

use crate::workbench::state::{Mode, Pane, State};
use crate::workbench::view::raw;

use super::motion::{clamp_scrolls, cursor_moved, remember_col, scroll_of, select_sample};
use super::replay::on_replay_mouse;
use super::{Cmd, raw_geometry, screen};

/// Applies a mouse event.
pub fn on_mouse(state: &mut State, ev: MouseEvent) -> Cmd {
    let cmd = apply_mouse(state, ev);
    clamp_scrolls(state);
    cmd
}

fn apply_mouse(state: &mut State, ev: MouseEvent) -> Cmd {
    if state.modes.help {
        if let MouseEventKind::Down(_) = ev.kind {
            state.modes.help = false;
        }
        return Cmd::None;
    }
    if state.modes.mode == Mode::Replay {
        on_replay_mouse(state, ev);
        return Cmd::None;
    }
    let sc = screen(state);
    let Some((pane, rect)) = sc.pane_at(ev.column, ev.row) else {
        return Cmd::None;
    };
    match ev.kind {
        // A press, or a drag across the raw text, moves the cursor to the pointer.
        MouseEventKind::Down(MouseButton::Left) | MouseEventKind::Drag(MouseButton::Left) => {
            state.ui.focus = pane;
            match pane {
                Pane::Raw => {
                    let t = raw::text_area(rect, raw::shows_fold(state));
                    if let Some(a) = state.analysis().cloned()
                        && ev.column >= t.x
                        && ev.row >= t.y
                        && ev.row < t.y + t.height
                    {
                        let w = usize::from(t.width).max(2);
                        state.ui.cursor = raw::hit(
                            &a,
                            w,
                            state.ui.raw_top,
                            usize::from(ev.column - t.x),
                            usize::from(ev.row - t.y),
                        );
                        remember_col(state, &a);
                        cursor_moved(state);
                    }
                }
                Pane::Samples
                    if matches!(ev.kind, MouseEventKind::Down(_))
                        && ev.row > rect.y
                        && ev.row < rect.y + rect.height - 1 =>
                {
                    let i = usize::from(ev.row - rect.y - 1) + state.ui.scroll[Pane::Samples];
                    if i < state.session.samples.len() {
                        return select_sample(state, i);
                    }
                }
                _ => {}
            }
        }
        MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
            let down = ev.kind == MouseEventKind::ScrollDown;
            match pane {
                Pane::Raw => {
                    if let (Some(a), Some((w, _))) =
                        (state.analysis().cloned(), raw_geometry(state))
                    {
                        state.ui.raw_top =
                            raw::step_rows(&a, w, state.ui.raw_top, if down { 3 } else { -3 });
                    }
                }
                Pane::Samples => {
                    let s = &mut state.ui.scroll[Pane::Samples];
                    *s = if down {
                        (*s + 1).min(state.session.samples.len().saturating_sub(1))
                    } else {
                        s.saturating_sub(1)
                    };
                }
                p => {
                    if let Some(s) = scroll_of(state, p) {
                        *s = if down {
                            s.saturating_add(3)
                        } else {
                            s.saturating_sub(3)
                        };
                    }
                }
            }
        }
        _ => {}
    }
    Cmd::None
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;

    use super::super::on_action;
    use super::super::testing::loaded;
    use super::*;
    use crate::workbench::keys::Action;

    fn at(kind: MouseEventKind, (column, row): (u16, u16)) -> MouseEvent {
        MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }
    }

    fn click(state: &mut State, pos: (u16, u16)) -> Cmd {
        on_mouse(state, at(MouseEventKind::Down(MouseButton::Left), pos))
    }

    /// A click `down` rows inside `pane`.
    fn click_in(state: &mut State, pane: Pane, down: u16) -> Cmd {
        let pos = inside(state, pane, down);
        click(state, pos)
    }

    /// A point inside `pane`, `down` rows below its top border.
    fn inside(state: &State, pane: Pane, down: u16) -> (u16, u16) {
        let r = screen(state).rect(pane).unwrap();
        (r.x + 2, r.y + 1 + down)
    }

    #[test]
    fn a_click_focuses_the_pane_under_the_pointer() {
        let mut state = loaded(0, (120, 40));
        let cursor = state.ui.cursor;
        assert_eq!(click_in(&mut state, Pane::Message, 1), Cmd::None);
        assert_eq!(state.ui.focus, Pane::Message);
        assert_eq!(state.ui.cursor, cursor);
        click_in(&mut state, Pane::Diagnostics, 0);
        assert_eq!(state.ui.focus, Pane::Diagnostics);
    }

    #[test]
    fn a_click_in_the_raw_text_moves_the_cursor_there() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::Top);
        state.ui.focus = Pane::Message;
        let t = raw::text_area(
            screen(&state).rect(Pane::Raw).unwrap(),
            raw::shows_fold(&state),
        );
        click(&mut state, (t.x, t.y));
        assert_eq!(state.ui.focus, Pane::Raw);
        assert_eq!(state.ui.cursor, 0, "the first character on screen");
        // A drag keeps moving it.
        on_mouse(
            &mut state,
            at(MouseEventKind::Drag(MouseButton::Left), (t.x + 3, t.y)),
        );
        assert_eq!(state.ui.want_col, 3);
    }

    #[test]
    fn a_click_in_the_sample_list_selects_that_sample() {
        let mut state = loaded(0, (120, 40));
        assert_eq!(click_in(&mut state, Pane::Samples, 2), Cmd::Reparse);
        assert_eq!(state.ui.selected_sample, 2);
        assert_eq!(state.ui.focus, Pane::Samples);
        // Below the last sample: focus only.
        assert_eq!(click_in(&mut state, Pane::Samples, 5), Cmd::None);
        assert_eq!(state.ui.selected_sample, 2);
    }

    #[test]
    fn the_wheel_scrolls_the_pane_under_the_pointer_without_focusing_it() {
        let mut state = loaded(0, (80, 24));
        let pos = inside(&state, Pane::Message, 1);
        on_mouse(&mut state, at(MouseEventKind::ScrollDown, pos));
        assert_eq!(state.ui.scroll[Pane::Message], 3);
        on_mouse(&mut state, at(MouseEventKind::ScrollUp, pos));
        assert_eq!(state.ui.scroll[Pane::Message], 0);
        assert_eq!(state.ui.focus, Pane::Raw);
        let top = state.ui.raw_top;
        let pos = inside(&state, Pane::Raw, 1);
        on_mouse(&mut state, at(MouseEventKind::ScrollDown, pos));
        assert_ne!(state.ui.raw_top, top);
    }

    #[test]
    fn a_click_closes_the_help() {
        let mut state = loaded(0, (80, 24));
        on_action(&mut state, Action::Help);
        let pos = inside(&state, Pane::Message, 1);
        on_mouse(&mut state, at(MouseEventKind::ScrollDown, pos));
        assert!(state.modes.help, "the wheel does not close it");
        click(&mut state, pos);
        assert!(!state.modes.help);
        assert_eq!(state.ui.focus, Pane::Raw, "the click only closed the help");
    }
}
