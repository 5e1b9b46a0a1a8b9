//! The bottom layer of the key stack: inspecting a sample, the panes take every action the
//! layers above passed on (quit, Esc, focus and layout, reload, bless, search, folding, the
//! cursor and the sample list).

use super::{Cmd, fold, goto, motion, overlay, panes, prompt, replay};
use crate::workbench::keys::Action;
use crate::workbench::state::{Pane, Prompt, PromptKind, State};

/// An action for the panes.
pub(super) fn on_base_action(state: &mut State, action: Action) -> Cmd {
    match action {
        Action::Quit => Cmd::Quit,
        Action::Back => back(state),
        Action::Replay => {
            replay::enter_replay(state);
            Cmd::None
        }
        Action::PlayPause => motion::on_motion(state, Action::PageDown),
        Action::NextChunking | Action::Prompt => Cmd::None,
        Action::Help => {
            overlay::open_help(state);
            Cmd::None
        }
        Action::FocusNext
        | Action::FocusPrev
        | Action::TogglePane(_)
        | Action::FocusPane(_)
        | Action::HidePane
        | Action::Zoom
        | Action::Wider
        | Action::Narrower
        | Action::Taller
        | Action::Shorter => {
            panes::on_pane_action(state, action);
            Cmd::None
        }
        Action::Reload => {
            state.ui.note = Some("re-reading files".into());
            Cmd::Reparse
        }
        Action::Bless => bless(state),
        Action::BlessAll => {
            overlay::bless_all(state);
            Cmd::None
        }
        Action::Activate => goto::activate(state),
        Action::ToggleMouse => toggle_mouse(state),
        Action::Fold => {
            fold::toggle(state);
            motion::cursor_moved(state);
            Cmd::None
        }
        Action::ToggleTokens => {
            toggle_tokens(state);
            Cmd::None
        }
        Action::Search => {
            state.modes.prompt = Some(Prompt::new(PromptKind::Search { regex: false }));
            Cmd::None
        }
        Action::NextRegion if state.ui.search.is_some() => {
            prompt::jump_to_match(state, true);
            Cmd::None
        }
        Action::SearchPrev => {
            if state.ui.search.is_some() {
                prompt::jump_to_match(state, false);
            } else {
                state.ui.note = Some(format!(
                    "no search: {} searches",
                    state.ui.keys.hint(Action::Search)
                ));
            }
            Cmd::None
        }
        Action::NextSample => motion::select_sample(state, state.ui.selected_sample + 1),
        Action::PrevSample => {
            motion::select_sample(state, state.ui.selected_sample.saturating_sub(1))
        }
        _ => motion::on_motion(state, action),
    }
}

/// Esc cancels or goes back, never quits (as in gitui, lazygit, yazi): with nothing to go back
/// from, it says how to quit.
fn back(state: &mut State) -> Cmd {
    if state.ui.focus == Pane::Samples
        && state
            .session
            .corpus
            .as_ref()
            .is_some_and(|c| c.open.is_some())
    {
        // In a corpus's open group: back to the list of groups.
        if let Some(view) = state.session.corpus.as_mut() {
            view.selected = view.open.take().unwrap_or(0);
        }
        motion::keep_corpus_row_visible(state);
    } else if state.ui.search.is_some() {
        state.ui.search = None;
        state.ui.note = Some("search cleared".into());
    } else {
        state.ui.note = Some(format!(
            "nothing to close: {} quits",
            state.ui.keys.hint(Action::Quit)
        ));
    }
    Cmd::None
}

/// `b`: blesses the sample selected when the key was pressed. While the screen still shows
/// another sample (its parse is on its way), the bless waits for it (see
/// `super::pending_bless`); while the template is invalid (the result is stale) it is refused.
fn bless(state: &mut State) -> Cmd {
    state.work.pending_bless = None;
    if let Some(why) = overlay::bless_refusal(state) {
        state.ui.note = Some(why);
        return Cmd::None;
    }
    let Some(a) = state.analysis() else {
        state.ui.note = Some("nothing to bless yet".into());
        return Cmd::None;
    };
    // The sample selected now (a corpus shows its record, the list's selection aside).
    let selected = match &state.session.corpus {
        Some(_) => Some(a.sample_name.clone()),
        None => state
            .session
            .samples
            .get(state.ui.selected_sample)
            .map(|e| e.name.clone()),
    };
    match selected {
        Some(name) if name == a.sample_name => Cmd::ProposeBless(name),
        Some(name) => {
            state.ui.note = Some(format!(
                "bless {}: waiting for its result…",
                crate::workbench::analysis::short_name(&name)
            ));
            state.work.pending_bless = Some(name);
            Cmd::None
        }
        None => {
            state.ui.note = Some("nothing to bless: no sample selected".into());
            Cmd::None
        }
    }
}

/// Captures the mouse or releases it (for the terminal's own selection).
fn toggle_mouse(state: &mut State) -> Cmd {
    state.ui.mouse = !state.ui.mouse;
    state.ui.note = Some(if state.ui.mouse {
        "mouse captured".into()
    } else {
        format!(
            "mouse released: the terminal selects text ({} captures)",
            state.ui.keys.hint(Action::ToggleMouse)
        )
    });
    Cmd::Mouse(state.ui.mouse)
}

/// Shades the model's tokens in turn, or stops; says why when there are none.
fn toggle_tokens(state: &mut State) {
    let has = state.analysis().is_some_and(|a| !a.tokens.is_empty());
    state.ui.note = Some(if !has {
        "no model tokens: the template's folder has no tokenizer.json".into()
    } else {
        state.ui.tokens_shown = !state.ui.tokens_shown;
        if state.ui.tokens_shown {
            "model tokens shaded in turn (the cursor line gives the token's id)".into()
        } else {
            "model tokens hidden".into()
        }
    });
}
