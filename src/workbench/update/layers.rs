//! The layer stack keys go through, top first, in the manner of a compositor: each layer looks
//! at the action and either takes it (returning the command it leads to) or passes it on to
//! the layer below. The order is the whole input policy:
//!
//! 1. **terminal**: Ctrl-Z suspends whatever is on screen;
//! 2. **help**: while the help is shown, it takes every key (scrolling, closing);
//! 3. **overlay**: an explanation, a check or a bless confirmation takes every key;
//! 4. **jobs**: Esc cancels a running job; the keys that start a job, open the editor or
//!    switch the reference version work in every mode;
//! 5. **replay**: in replay mode, the replay takes every remaining key;
//! 6. **panes**: inspecting, the panes take the rest (see [`super::base`]).
//!
//! The prompt is not a layer of actions: while it is open it takes keys as typed, before the
//! key map sees them (see [`super::on_key`]).

use super::{Cmd, base, goto, overlay, replay, switch_reference};
use crate::workbench::keys::Action;
use crate::workbench::state::{Mode, State};

/// A layer: takes the action (`Some`) or passes it on (`None`).
type Layer = fn(&mut State, Action) -> Option<Cmd>;

/// The layers, top first.
const LAYERS: [(&str, Layer); 6] = [
    ("terminal", terminal),
    ("help", help),
    ("overlay", overlay_layer),
    ("jobs", jobs),
    ("replay", replay_layer),
    ("panes", panes),
];

/// Sends `action` down the stack; the bottom layer takes everything.
pub(super) fn dispatch(state: &mut State, action: Action) -> Cmd {
    LAYERS
        .iter()
        .find_map(|(_, layer)| layer(state, action))
        .unwrap_or(Cmd::None)
}

/// The names of the layers, top first.
#[cfg(test)]
fn names() -> impl Iterator<Item = &'static str> {
    LAYERS.iter().map(|(name, _)| *name)
}

fn terminal(_: &mut State, action: Action) -> Option<Cmd> {
    (action == Action::Suspend).then_some(Cmd::Suspend)
}

fn help(state: &mut State, action: Action) -> Option<Cmd> {
    if !state.modes.help {
        return None;
    }
    overlay::on_help_action(state, action);
    Some(Cmd::None)
}

fn overlay_layer(state: &mut State, action: Action) -> Option<Cmd> {
    state.modes.overlay.as_ref()?;
    Some(overlay::on_overlay_action(state, action))
}

fn jobs(state: &mut State, action: Action) -> Option<Cmd> {
    match action {
        // Esc first cancels a running explanation or check.
        Action::Back if overlay::cancel_job(state) => Some(Cmd::None),
        Action::Explain => {
            overlay::explain_field(state, None);
            Some(Cmd::None)
        }
        Action::CheckChunkings => {
            overlay::check_chunkings(state);
            Some(Cmd::None)
        }
        Action::Portability => {
            overlay::check_portability(state);
            Some(Cmd::None)
        }
        Action::OpenEditor => Some(goto::open_editor(state)),
        Action::SwitchReference => Some(switch_reference(state)),
        _ => None,
    }
}

fn replay_layer(state: &mut State, action: Action) -> Option<Cmd> {
    (state.modes.mode == Mode::Replay).then(|| replay::on_replay_action(state, action))
}

fn panes(state: &mut State, action: Action) -> Option<Cmd> {
    Some(base::on_base_action(state, action))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::update::testing::loaded;

    #[test]
    fn the_stack_is_ordered_top_first() {
        assert_eq!(
            names().collect::<Vec<_>>(),
            ["terminal", "help", "overlay", "jobs", "replay", "panes"]
        );
    }

    #[test]
    fn the_help_takes_every_key_above_the_panes_and_suspend_passes_through_it() {
        let mut state = loaded(0, (80, 24));
        super::super::on_action(&mut state, Action::Help);
        assert!(state.modes.help);
        // Quit in the help closes it instead of quitting.
        assert_eq!(super::super::on_action(&mut state, Action::Quit), Cmd::None);
        assert!(!state.modes.help);
        super::super::on_action(&mut state, Action::Help);
        assert_eq!(
            super::super::on_action(&mut state, Action::Suspend),
            Cmd::Suspend
        );
        assert!(state.modes.help, "suspending leaves the help on screen");
    }
}
