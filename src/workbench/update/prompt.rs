//! The status bar prompt: chunk sizes typed in replay mode (`:`) and searches of the raw text
//! (`/`). Enter applies; a mistake keeps the prompt open with the reason, so Esc then closes
//! only the prompt; Esc cancels.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind};

use crate::workbench::replay::{ChunkKind, parse_sizes};
use crate::workbench::search::Search;
use crate::workbench::state::{PromptKind, State};

use super::Cmd;
use super::motion::cursor_moved;

/// A key typed at the prompt.
pub fn on_prompt_key(state: &mut State, key: KeyEvent) -> Cmd {
    if key.kind == KeyEventKind::Release {
        return Cmd::None;
    }
    let Some(prompt) = state.modes.prompt.as_mut() else {
        return Cmd::None;
    };
    match key.code {
        KeyCode::Esc => state.modes.prompt = None,
        KeyCode::Backspace => {
            prompt.text.pop();
            prompt.error = None;
        }
        KeyCode::Tab => {
            if let PromptKind::Search { regex } = &mut prompt.kind {
                *regex = !*regex;
                prompt.error = None;
            }
        }
        KeyCode::Char(c) if prompt.text.len() < 200 => {
            prompt.text.push(c);
            prompt.error = None;
        }
        KeyCode::Enter => {
            let kind = prompt.kind;
            let typed = prompt.text.clone();
            let outcome = match kind {
                PromptKind::ChunkSizes => apply_sizes(state, &typed),
                PromptKind::Search { regex } => apply_search(state, &typed, regex),
            };
            match outcome {
                Ok(()) => state.modes.prompt = None,
                Err(e) => {
                    if let Some(p) = state.modes.prompt.as_mut() {
                        p.error = Some(e);
                    }
                }
            }
        }
        _ => {}
    }
    Cmd::None
}

fn apply_sizes(state: &mut State, typed: &str) -> Result<(), String> {
    let sizes = parse_sizes(typed)?;
    let analysis = state.analysis().cloned();
    if let (Some(rs), Some(a)) = (state.modes.replay.as_mut(), analysis) {
        rs.sizes = sizes;
        rs.kind = ChunkKind::Sizes;
        rs.rebuild(&a);
    }
    Ok(())
}

/// Runs a search and moves the cursor to the first match after it; an empty query clears
/// the search.
fn apply_search(state: &mut State, typed: &str, regex: bool) -> Result<(), String> {
    if typed.is_empty() {
        state.ui.search = None;
        return Ok(());
    }
    let Some(a) = state.analysis().cloned() else {
        return Err("nothing to search yet".into());
    };
    let search = Search::run(typed, regex, &a.document, &a.sample_name)?;
    if search.matches.is_empty() {
        return Err(format!("no match for {typed:?}"));
    }
    state.ui.search = Some(search);
    jump_to_match(state, true);
    Ok(())
}

/// Moves the cursor to the next (or previous) match of the search, unfolding the prompt if
/// the match is in it.
pub(super) fn jump_to_match(state: &mut State, forward: bool) {
    let Some(s) = state.ui.search.as_mut() else {
        return;
    };
    let Some(i) = s.next_from(state.ui.cursor, forward) else {
        state.ui.note = Some(format!("no match for {:?}", s.query));
        return;
    };
    s.current = Some(i);
    let at = s.matches[i].start;
    let label = s.position_label();
    state.ui.cursor = at;
    if let Some(a) = state.analysis().cloned() {
        super::fold::reveal(state, &a, at);
        super::motion::remember_col(state, &a);
    }
    cursor_moved(state);
    state.ui.note = Some(format!("match {label}"));
}

#[cfg(test)]
mod tests {
    use crossterm::event::KeyModifiers;
    use rtbench_tooling::chunking::Chunking;

    use super::super::on_action;
    use super::super::testing::loaded;
    use super::*;
    use crate::workbench::keys::Action;
    use crate::workbench::state::{Mode, PromptKind};

    fn text(state: &State) -> Option<&str> {
        state.modes.prompt.as_ref().map(|p| p.text.as_str())
    }

    fn typed(state: &mut State, text: &str) {
        for c in text.chars() {
            on_prompt_key(state, KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
    }

    fn press(state: &mut State, code: KeyCode) -> Cmd {
        on_prompt_key(state, KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn prompting() -> State {
        let mut state = loaded(0, (80, 24));
        on_action(&mut state, Action::Replay);
        on_action(&mut state, Action::Prompt);
        assert_eq!(text(&state), Some(""));
        state
    }

    #[test]
    fn enter_streams_with_the_typed_sizes() {
        let mut state = prompting();
        typed(&mut state, "3,55");
        press(&mut state, KeyCode::Backspace);
        assert_eq!(text(&state), Some("3,5"));
        typed(&mut state, " 1");
        assert_eq!(press(&mut state, KeyCode::Enter), Cmd::None);
        assert!(state.modes.prompt.is_none());
        let rs = state.modes.replay.as_ref().unwrap();
        assert_eq!(rs.kind, ChunkKind::Sizes);
        assert_eq!(rs.chunking(), Chunking::CodePoints(vec![3, 5, 1]));
    }

    #[test]
    fn a_bad_size_keeps_the_prompt_open_so_esc_closes_only_the_prompt() {
        let mut state = prompting();
        typed(&mut state, "3,0");
        press(&mut state, KeyCode::Enter);
        let p = state.modes.prompt.as_ref().expect("still open");
        assert!(p.error.as_deref().unwrap().contains("'0'"), "{p:?}");
        assert_eq!(
            state.modes.replay.as_ref().unwrap().kind,
            ChunkKind::CodePoints
        );
        press(&mut state, KeyCode::Backspace);
        assert_eq!(
            state.modes.prompt.as_ref().unwrap().error,
            None,
            "editing clears it"
        );
        typed(&mut state, "7");
        press(&mut state, KeyCode::Esc);
        assert!(state.modes.prompt.is_none());
        assert_eq!(
            state.modes.replay.as_ref().unwrap().kind,
            ChunkKind::CodePoints
        );
        assert_eq!(state.modes.mode, Mode::Replay, "Esc closed only the prompt");
    }

    #[test]
    fn releases_and_keys_without_a_prompt_do_nothing() {
        let mut state = prompting();
        let mut release = KeyEvent::new(KeyCode::Char('9'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        on_prompt_key(&mut state, release);
        assert_eq!(text(&state), Some(""));
        press(&mut state, KeyCode::Esc);
        assert_eq!(press(&mut state, KeyCode::Char('4')), Cmd::None);
        assert!(state.modes.prompt.is_none());
    }

    #[test]
    fn a_search_moves_to_the_next_match_and_n_and_shift_n_step_through_them() {
        let mut state = loaded(0, (80, 24));
        let a = std::sync::Arc::clone(state.analysis().unwrap());
        on_action(&mut state, Action::Top);
        on_action(&mut state, Action::Search);
        assert_eq!(
            state.modes.prompt.as_ref().map(|p| p.kind),
            Some(PromptKind::Search { regex: false })
        );
        typed(&mut state, "tool_call");
        press(&mut state, KeyCode::Enter);
        assert!(state.modes.prompt.is_none());
        let s = state.ui.search.clone().expect("a search");
        let first = a.document.to_lowercase().find("tool_call").unwrap();
        assert_eq!(s.matches[0].start, first);
        assert!(s.matches.len() >= 2, "{:?}", s.matches);
        assert_eq!(state.ui.cursor, first);
        on_action(&mut state, Action::NextRegion);
        assert_eq!(state.ui.cursor, s.matches[1].start, "n: the next match");
        on_action(&mut state, Action::SearchPrev);
        assert_eq!(state.ui.cursor, first, "N: the previous one");
        // Esc clears the search; then n moves between regions again.
        on_action(&mut state, Action::Back);
        assert!(state.ui.search.is_none());
    }

    #[test]
    fn a_bad_regex_or_no_match_keeps_the_search_prompt_open() {
        let mut state = loaded(0, (80, 24));
        on_action(&mut state, Action::Search);
        press(&mut state, KeyCode::Tab);
        assert_eq!(
            state.modes.prompt.as_ref().map(|p| p.kind),
            Some(PromptKind::Search { regex: true })
        );
        typed(&mut state, "(unclosed");
        press(&mut state, KeyCode::Enter);
        let err = state.modes.prompt.as_ref().unwrap().error.clone().unwrap();
        assert!(err.contains("not a regex"), "{err}");
        for _ in 0.."(unclosed".len() {
            press(&mut state, KeyCode::Backspace);
        }
        typed(&mut state, "zzz-nowhere");
        press(&mut state, KeyCode::Enter);
        let err = state.modes.prompt.as_ref().unwrap().error.clone().unwrap();
        assert!(err.contains("no match"), "{err}");
        assert!(state.ui.search.is_none());
    }
}
