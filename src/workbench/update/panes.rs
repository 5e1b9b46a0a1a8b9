//! The panes: focus, showing and hiding, zoom and the sizes of the split.

use crate::workbench::keys::Action;
use crate::workbench::state::{Pane, State};

use super::motion::cursor_moved;

/// Tab / Shift-Tab, 1 … 5 (focus), Alt-1 … Alt-5 and H (show / hide), z, < >, + -.
pub(super) fn on_pane_action(state: &mut State, action: Action) {
    match action {
        Action::FocusNext | Action::FocusPrev => {
            let n = Pane::ALL.len();
            let mut i = state.ui.focus.index();
            for _ in 0..n {
                i = if action == Action::FocusNext {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                if state.ui.visible[i] {
                    break;
                }
            }
            state.ui.focus = Pane::ALL[i];
        }
        Action::TogglePane(i) if i < state.ui.visible.len() => {
            let shown = state.ui.visible.iter().filter(|v| **v).count();
            if !(state.ui.visible[i] && shown == 1) {
                state.ui.visible[i] = !state.ui.visible[i];
            }
            if state.ui.visible[i] {
                state.ui.focus = Pane::ALL[i];
            } else if state.ui.focus == Pane::ALL[i] {
                let j = state.ui.visible.iter().position(|v| *v).unwrap_or(0);
                state.ui.focus = Pane::ALL[j];
            }
            cursor_moved(state);
        }
        Action::FocusPane(i) if i < state.ui.visible.len() => {
            state.ui.visible[i] = true;
            state.ui.focus = Pane::ALL[i];
            cursor_moved(state);
        }
        Action::HidePane => on_pane_action(state, Action::TogglePane(state.ui.focus.index())),
        Action::Zoom => {
            state.ui.zoom = !state.ui.zoom;
            cursor_moved(state);
        }
        Action::Wider => {
            state.ui.split = (state.ui.split + 5).min(80);
            cursor_moved(state);
        }
        Action::Narrower => {
            state.ui.split = state.ui.split.saturating_sub(5).max(20);
            cursor_moved(state);
        }
        Action::Taller => {
            state.ui.bottom = (state.ui.bottom + 1).min(state.ui.size.1);
            cursor_moved(state);
        }
        Action::Shorter => {
            state.ui.bottom = state.ui.bottom.saturating_sub(1).max(3);
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
        assert_eq!(state.ui.focus, Pane::Raw);
        let mut seen = Vec::new();
        for _ in 0..5 {
            assert_eq!(on_action(&mut state, Action::FocusNext), Cmd::None);
            seen.push(state.ui.focus);
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
        assert_eq!(state.ui.focus, Pane::Samples);
        // Hidden panes are skipped.
        on_action(&mut state, Action::TogglePane(1));
        on_action(&mut state, Action::FocusNext);
        on_action(&mut state, Action::FocusNext);
        assert_eq!(
            state.ui.focus,
            Pane::Region,
            "raw, then region: message is hidden"
        );
    }

    #[test]
    fn toggling_a_pane_focuses_it_or_moves_the_focus_away_and_keeps_one_shown() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::TogglePane(0));
        assert!(!state.is_visible(Pane::Raw));
        assert_eq!(state.ui.focus, Pane::Message, "the first pane still shown");
        on_action(&mut state, Action::TogglePane(0));
        assert!(state.is_visible(Pane::Raw));
        assert_eq!(state.ui.focus, Pane::Raw);
        for i in 1..Pane::ALL.len() {
            on_action(&mut state, Action::TogglePane(i));
        }
        let only_raw = Pane::ALL.map(|p| p == Pane::Raw);
        assert_eq!(state.ui.visible, only_raw);
        on_action(&mut state, Action::TogglePane(0));
        assert!(state.is_visible(Pane::Raw), "the last pane stays");
        // Out of range: nothing.
        on_action(&mut state, Action::TogglePane(Pane::ALL.len()));
        assert_eq!(state.ui.visible, only_raw);
    }

    #[test]
    fn a_number_focuses_its_pane_and_shows_it_and_h_hides_the_focused_one() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::FocusPane(3));
        assert_eq!(state.ui.focus, Pane::Diagnostics);
        on_action(&mut state, Action::HidePane);
        assert!(!state.is_visible(Pane::Diagnostics));
        assert_ne!(state.ui.focus, Pane::Diagnostics);
        on_action(&mut state, Action::FocusPane(3));
        assert!(
            state.is_visible(Pane::Diagnostics),
            "focusing shows it again"
        );
        assert_eq!(state.ui.focus, Pane::Diagnostics);
    }

    #[test]
    fn zoom_and_the_split_sizes_stay_within_bounds() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::Zoom);
        assert!(state.ui.zoom);
        on_action(&mut state, Action::Zoom);
        assert!(!state.ui.zoom);
        for _ in 0..20 {
            on_action(&mut state, Action::Wider);
        }
        assert_eq!(state.ui.split, 80);
        for _ in 0..20 {
            on_action(&mut state, Action::Narrower);
        }
        assert_eq!(state.ui.split, 20);
        for _ in 0..50 {
            on_action(&mut state, Action::Taller);
        }
        assert_eq!(state.ui.bottom, 40);
        for _ in 0..50 {
            on_action(&mut state, Action::Shorter);
        }
        assert_eq!(state.ui.bottom, 3);
    }
}
