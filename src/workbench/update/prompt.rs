//! The status bar prompt: chunk sizes typed in replay mode (`:`).

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use crate::workbench::replay::{ChunkKind, parse_sizes};
use crate::workbench::state::State;

use super::Effect;

/// A key typed at the prompt (chunk sizes): Enter applies, Esc cancels.
pub fn on_prompt_key(state: &mut State, key: KeyEvent) -> Effect {
    if key.kind == KeyEventKind::Release {
        return Effect::None;
    }
    let Some(text) = state.prompt.as_mut() else {
        return Effect::None;
    };
    match key.code {
        KeyCode::Esc => state.prompt = None,
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) if text.len() < 200 => text.push(c),
        KeyCode::Enter => {
            let typed = state.prompt.take().unwrap_or_default();
            match parse_sizes(&typed) {
                Ok(sizes) => {
                    let analysis = state.analysis().cloned();
                    if let (Some(rs), Some(a)) = (state.replay.as_mut(), analysis) {
                        rs.sizes = sizes;
                        rs.kind = ChunkKind::Sizes;
                        rs.rebuild(&a);
                    }
                }
                Err(e) => state.note = Some(e),
            }
        }
        _ => {}
    }
    Effect::None
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;
    use rtbench_tooling::chunking::Chunking;

    use super::super::on_action;
    use super::super::testing::loaded;
    use super::*;
    use crate::workbench::keys::Action;
    use crate::workbench::state::Mode;

    fn typed(state: &mut State, text: &str) {
        for c in text.chars() {
            on_prompt_key(state, KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }

    fn press(state: &mut State, code: KeyCode) -> Effect {
        on_prompt_key(state, KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn prompting() -> State {
        let mut state = loaded(0, (80, 24));
        on_action(&mut state, Action::Replay);
        on_action(&mut state, Action::Prompt);
        assert_eq!(state.prompt.as_deref(), Some(""));
        state
    }

    #[test]
    fn enter_streams_with_the_typed_sizes() {
        let mut state = prompting();
        typed(&mut state, "3,55");
        press(&mut state, KeyCode::Backspace);
        assert_eq!(state.prompt.as_deref(), Some("3,5"));
        typed(&mut state, " 1");
        assert_eq!(press(&mut state, KeyCode::Enter), Effect::None);
        assert!(state.prompt.is_none());
        let rs = state.replay.as_ref().unwrap();
        assert_eq!(rs.kind, ChunkKind::Sizes);
        assert_eq!(rs.chunking(), Chunking::CodePoints(vec![3, 5, 1]));
    }

    #[test]
    fn a_bad_size_is_a_note_and_esc_cancels() {
        let mut state = prompting();
        typed(&mut state, "3,0");
        press(&mut state, KeyCode::Enter);
        assert!(state.prompt.is_none());
        assert!(state.note.as_deref().unwrap().contains("'0'"));
        assert_eq!(state.replay.as_ref().unwrap().kind, ChunkKind::CodePoints);
        on_action(&mut state, Action::Prompt);
        typed(&mut state, "7");
        press(&mut state, KeyCode::Esc);
        assert!(state.prompt.is_none());
        assert_eq!(state.replay.as_ref().unwrap().kind, ChunkKind::CodePoints);
        assert_eq!(state.mode, Mode::Replay, "Esc closed only the prompt");
    }

    #[test]
    fn releases_and_keys_without_a_prompt_do_nothing() {
        let mut state = prompting();
        let mut release = KeyEvent::new(KeyCode::Char('9'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        on_prompt_key(&mut state, release);
        assert_eq!(state.prompt.as_deref(), Some(""));
        press(&mut state, KeyCode::Esc);
        assert_eq!(press(&mut state, KeyCode::Char('4')), Effect::None);
        assert!(state.prompt.is_none());
    }
}
