//! The stream replay mode: entering and leaving it, its keys (steps, playback, chunking) and
//! its mouse (the timeline and the wheel).

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::workbench::keys::Action;
use crate::workbench::replay::ReplayState;
use crate::workbench::state::{Mode, Prompt, PromptKind, State};

use super::Cmd;
use super::motion::select_sample;
use super::overlay::open_help;

/// Starts the stream replay of the sample on screen.
pub(super) fn enter_replay(state: &mut State) {
    let Some(a) = state.analysis().cloned() else {
        state.ui.note = Some("nothing to replay: no sample parsed yet".into());
        return;
    };
    let rs = ReplayState::new(&a, state.ui.replay_max_steps, state.work.replays.as_ref());
    if rs.size > 1 {
        state.ui.note = Some(format!(
            "{} code points: streamed {} at a time to stay under {} steps \
             (replay_max_steps in the config); - or :1 for smaller chunks",
            a.sample.generation.chars().count(),
            rs.size,
            state.ui.replay_max_steps
        ));
    }
    state.modes.replay = Some(rs);
    state.modes.mode = Mode::Replay;
}

/// Keys in replay mode: steps, playback, chunking and the timeline.
pub(super) fn on_replay_action(state: &mut State, action: Action) -> Cmd {
    let analysis = state.analysis().cloned();
    let Some(rs) = state.modes.replay.as_mut() else {
        state.modes.mode = Mode::Inspect;
        return Cmd::None;
    };
    let mut rebuild = false;
    match action {
        Action::Quit => {
            return Cmd::Quit;
        }
        Action::Back if rs.is_building() && !rs.placeholder => {
            // Esc stops a build; the replay shown before it stays.
            rs.cancel();
            state.ui.note = Some("stopped streaming the replay".into());
        }
        Action::Back | Action::Replay => {
            // During a first build nothing but the prefix was shown: leaving stops it.
            if rs.is_building() {
                state.ui.note = Some("stopped streaming the replay".into());
            }
            state.modes.mode = Mode::Inspect;
            // Dropping the state stops a build (a replay is a few large allocations: freeing
            // even a ten-million-step one takes milliseconds).
            state.modes.replay = None;
            return Cmd::None;
        }
        Action::Help => open_help(state),
        Action::Right => rs.forward(1),
        Action::Left => rs.forward(-1),
        Action::PageDown => rs.forward(10),
        Action::PageUp => rs.forward(-10),
        Action::Top | Action::LineStart => rs.go(0),
        Action::Bottom | Action::LineEnd => rs.go(isize::MAX),
        Action::Down => rs.move_selection(1),
        Action::Up => rs.move_selection(-1),
        Action::PlayPause => rs.toggle_play(),
        Action::Wider => rs.faster(true),
        Action::Narrower => rs.faster(false),
        Action::Taller => rebuild = rs.adjust(1),
        Action::Shorter => rebuild = rs.adjust(-1),
        Action::NextChunking => {
            rs.next_kind();
            rebuild = true;
        }
        Action::Prompt => state.modes.prompt = Some(Prompt::new(PromptKind::ChunkSizes)),
        Action::NextSample => return select_sample(state, state.ui.selected_sample + 1),
        Action::PrevSample => {
            return select_sample(state, state.ui.selected_sample.saturating_sub(1));
        }
        Action::Reload => {
            state.ui.note = Some("re-reading files".into());
            return Cmd::Reparse;
        }
        _ => {}
    }
    if rebuild
        && let Some(a) = analysis
        && let Some(rs) = state.modes.replay.as_mut()
    {
        rs.rebuild(&a);
    }
    Cmd::None
}

/// Mouse in replay mode: a click on a timeline row selects that event; the wheel steps the
/// stream over the text and scrolls the timeline's selection over the timeline.
pub(super) fn on_replay_mouse(state: &mut State, ev: MouseEvent) {
    use crate::workbench::view::replay::{ReplayPane, layout, timeline_top};
    let main = Rect::new(0, 0, state.ui.size.0, state.ui.size.1.saturating_sub(1));
    let Some((pane, rect)) = layout(main, state.ui.bottom).into_iter().find(|(_, r)| {
        ev.column >= r.x && ev.column < r.x + r.width && ev.row >= r.y && ev.row < r.y + r.height
    }) else {
        return;
    };
    let Some(rs) = state.modes.replay.as_mut() else {
        return;
    };
    let down = match ev.kind {
        MouseEventKind::ScrollDown => Some(true),
        MouseEventKind::ScrollUp => Some(false),
        _ => None,
    };
    match (pane, ev.kind, down) {
        (ReplayPane::Timeline, MouseEventKind::Down(MouseButton::Left), _)
            if ev.row > rect.y && ev.row + 1 < rect.y + rect.height =>
        {
            let h = usize::from(rect.height.saturating_sub(2));
            let i = timeline_top(rs, h) + usize::from(ev.row - rect.y - 1);
            if i < rs.replay.timeline_len() {
                rs.select_event(i);
            }
        }
        (ReplayPane::Timeline, _, Some(d)) => rs.move_selection(if d { 3 } else { -3 }),
        (_, _, Some(d)) => rs.forward(if d { 1 } else { -1 }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;
    use rtbench_tooling::chunking::Chunking;

    use super::super::testing::loaded;
    use super::super::{on_action, on_mouse};
    use super::*;
    use crate::workbench::replay::ChunkKind;

    fn replaying() -> State {
        let mut state = loaded(0, (120, 40));
        assert_eq!(on_action(&mut state, Action::Replay), Cmd::None);
        assert_eq!(state.modes.mode, Mode::Replay);
        state
    }

    fn mouse(kind: MouseEventKind, column: u16, row: u16) -> MouseEvent {
        MouseEvent {
            kind,
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }
    }

    #[test]
    fn s_opens_the_replay_at_the_first_step_and_esc_leaves_it() {
        let mut state = replaying();
        let rs = state.modes.replay.as_ref().unwrap();
        assert_eq!(rs.step, 0);
        assert_eq!(rs.chunking(), Chunking::CodePoints(vec![1]));
        assert_eq!(on_action(&mut state, Action::Back), Cmd::None);
        assert_eq!(state.modes.mode, Mode::Inspect);
        assert!(state.modes.replay.is_none());
        // s toggles too; q quits from the replay.
        on_action(&mut state, Action::Replay);
        on_action(&mut state, Action::Replay);
        assert_eq!(state.modes.mode, Mode::Inspect);
        on_action(&mut state, Action::Replay);
        assert_eq!(on_action(&mut state, Action::Quit), Cmd::Quit);
    }

    #[test]
    fn nothing_to_replay_before_the_first_parse() {
        let mut state = State::new(crate::workbench::theme::Theme::dark(), (80, 24));
        on_action(&mut state, Action::Replay);
        assert_eq!(state.modes.mode, Mode::Inspect);
        assert_eq!(
            state.ui.note.as_deref(),
            Some("nothing to replay: no sample parsed yet")
        );
    }

    #[test]
    fn steps_playback_and_chunking_keys() {
        let mut state = replaying();
        on_action(&mut state, Action::Right);
        on_action(&mut state, Action::PageDown);
        assert_eq!(state.modes.replay.as_ref().unwrap().step, 11);
        on_action(&mut state, Action::Left);
        assert_eq!(state.modes.replay.as_ref().unwrap().step, 10);
        on_action(&mut state, Action::Bottom);
        let rs = state.modes.replay.as_ref().unwrap();
        assert_eq!(rs.step, rs.replay.last_step());
        // Space at the end plays from the start.
        on_action(&mut state, Action::PlayPause);
        let rs = state.modes.replay.as_ref().unwrap();
        assert!(rs.playing);
        assert_eq!(rs.step, 0);
        on_action(&mut state, Action::PlayPause);
        on_action(&mut state, Action::Wider);
        assert_eq!(state.modes.replay.as_ref().unwrap().speed, 4);
        // + streams again with a bigger size; c goes to the next kind.
        on_action(&mut state, Action::Taller);
        assert_eq!(
            state.modes.replay.as_ref().unwrap().chunking(),
            Chunking::CodePoints(vec![2])
        );
        on_action(&mut state, Action::NextChunking);
        assert_eq!(state.modes.replay.as_ref().unwrap().kind, ChunkKind::Sizes);
        // : opens the prompt.
        on_action(&mut state, Action::Prompt);
        assert_eq!(
            state.modes.prompt.as_ref().map(|p| p.text.as_str()),
            Some("")
        );
    }

    #[test]
    fn the_mouse_selects_timeline_events_and_the_wheel_steps() {
        use crate::workbench::view::replay::{ReplayPane, layout};
        let mut state = replaying();
        let main = Rect::new(0, 0, 120, 39);
        let panes = layout(main, state.ui.bottom);
        let (_, timeline) = panes
            .iter()
            .find(|(p, _)| *p == ReplayPane::Timeline)
            .copied()
            .unwrap();
        let (_, other) = panes
            .iter()
            .find(|(p, _)| *p != ReplayPane::Timeline)
            .copied()
            .unwrap();
        // The wheel over the text steps the stream.
        on_mouse(
            &mut state,
            mouse(MouseEventKind::ScrollDown, other.x + 1, other.y + 1),
        );
        on_mouse(
            &mut state,
            mouse(MouseEventKind::ScrollDown, other.x + 1, other.y + 1),
        );
        assert_eq!(state.modes.replay.as_ref().unwrap().step, 2);
        on_mouse(
            &mut state,
            mouse(MouseEventKind::ScrollUp, other.x + 1, other.y + 1),
        );
        assert_eq!(state.modes.replay.as_ref().unwrap().step, 1);
        // A click on the timeline's first row selects the first event shown there.
        on_action(&mut state, Action::Top);
        on_mouse(
            &mut state,
            mouse(
                MouseEventKind::Down(MouseButton::Left),
                timeline.x + 2,
                timeline.y + 1,
            ),
        );
        let rs = state.modes.replay.as_ref().unwrap();
        assert_eq!(rs.selected_event, Some(0));
        assert_eq!(rs.step, rs.replay.step_of_event(0));
        // The wheel over the timeline moves the selection by 3.
        on_mouse(
            &mut state,
            mouse(MouseEventKind::ScrollDown, timeline.x + 2, timeline.y + 1),
        );
        assert_eq!(state.modes.replay.as_ref().unwrap().selected_event, Some(3));
    }
}
