//! The panes: focus, showing and hiding, zoom and the sizes of the split.

use crate::workbench::keys::Action;
use crate::workbench::state::{Pane, State};

use super::motion::cursor_moved;

/// Tab / Shift-Tab, 1 … 5 (focus), Alt-1 … Alt-5 and H (show / hide), z, < >, + -.
pub(super) fn on_pane_action(state: &mut State, action: Action) {
    match action {
        Action::FocusNext | Action::FocusPrev => {
            let n = Pane::ALL.len();
            let mut i = state.focus.index();
            for _ in 0..n {
                i = if action == Action::FocusNext {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                if state.visible[i] {
                    break;
                }
            }
            state.focus = Pane::ALL[i];
        }
        Action::TogglePane(i) if i < state.visible.len() => {
            let shown = state.visible.iter().filter(|v| **v).count();
            if !(state.visible[i] && shown == 1) {
                state.visible[i] = !state.visible[i];
            }
            if state.visible[i] {
                state.focus = Pane::ALL[i];
            } else if state.focus == Pane::ALL[i] {
                let j = state.visible.iter().position(|v| *v).unwrap_or(0);
                state.focus = Pane::ALL[j];
            }
            cursor_moved(state);
        }
        Action::FocusPane(i) if i < state.visible.len() => {
            state.visible[i] = true;
            state.focus = Pane::ALL[i];
            cursor_moved(state);
        }
        Action::HidePane => on_pane_action(state, Action::TogglePane(state.focus.index())),
        Action::Zoom => {
            state.zoom = !state.zoom;
            cursor_moved(state);
        }
        Action::Wider => {
            state.split = (state.split + 5).min(80);
            cursor_moved(state);
        }
        Action::Narrower => {
            state.split = state.split.saturating_sub(5).max(20);
            cursor_moved(state);
        }
        Action::Taller => {
            state.bottom = (state.bottom + 1).min(state.size.1);
            cursor_moved(state);
        }
        Action::Shorter => {
            state.bottom = state.bottom.saturating_sub(1).max(3);
            cursor_moved(state);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::loaded;
    use super::super::{Cmd, on_action};
    use super::*;

    #[test]
    fn tab_cycles_the_focus_over_the_shown_panes() {
        let mut state = loaded(0, (120, 40));
        assert_eq!(state.focus, Pane::Raw);
        let mut seen = Vec::new();
        for _ in 0..5 {
            assert_eq!(on_action(&mut state, Action::FocusNext), Cmd::None);
            seen.push(state.focus);
        }
        assert_eq!(
            seen,
            [
                Pane::Message,
                Pane::Region,
                Pane::Diagnostics,
                Pane::Samples,
                Pane::Raw
            ]
        );
        on_action(&mut state, Action::FocusPrev);
        assert_eq!(state.focus, Pane::Samples);
        // Hidden panes are skipped.
        on_action(&mut state, Action::TogglePane(1));
        on_action(&mut state, Action::FocusNext);
        on_action(&mut state, Action::FocusNext);
        assert_eq!(
            state.focus,
            Pane::Region,
            "raw, then region: message is hidden"
        );
    }

    #[test]
    fn toggling_a_pane_focuses_it_or_moves_the_focus_away_and_keeps_one_shown() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::TogglePane(0));
        assert!(!state.is_visible(Pane::Raw));
        assert_eq!(state.focus, Pane::Message, "the first pane still shown");
        on_action(&mut state, Action::TogglePane(0));
        assert!(state.is_visible(Pane::Raw));
        assert_eq!(state.focus, Pane::Raw);
        for i in 1..5 {
            on_action(&mut state, Action::TogglePane(i));
        }
        assert_eq!(state.visible, [true, false, false, false, false]);
        on_action(&mut state, Action::TogglePane(0));
        assert!(state.is_visible(Pane::Raw), "the last pane stays");
        // Out of range: nothing.
        on_action(&mut state, Action::TogglePane(9));
        assert_eq!(state.visible, [true, false, false, false, false]);
    }

    #[test]
    fn a_number_focuses_its_pane_and_shows_it_and_h_hides_the_focused_one() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::FocusPane(3));
        assert_eq!(state.focus, Pane::Diagnostics);
        on_action(&mut state, Action::HidePane);
        assert!(!state.is_visible(Pane::Diagnostics));
        assert_ne!(state.focus, Pane::Diagnostics);
        on_action(&mut state, Action::FocusPane(3));
        assert!(
            state.is_visible(Pane::Diagnostics),
            "focusing shows it again"
        );
        assert_eq!(state.focus, Pane::Diagnostics);
    }

    #[test]
    fn zoom_and_the_split_sizes_stay_within_bounds() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::Zoom);
        assert!(state.zoom);
        on_action(&mut state, Action::Zoom);
        assert!(!state.zoom);
        for _ in 0..20 {
            on_action(&mut state, Action::Wider);
        }
        assert_eq!(state.split, 80);
        for _ in 0..20 {
            on_action(&mut state, Action::Narrower);
        }
        assert_eq!(state.split, 20);
        for _ in 0..50 {
            on_action(&mut state, Action::Taller);
        }
        assert_eq!(state.bottom, 40);
        for _ in 0..50 {
            on_action(&mut state, Action::Shorter);
        }
        assert_eq!(state.bottom, 3);
    }
}
