//! The run loop's clock: it waits for the next message, but wakes up on its own for what moves
//! by time (the replay playing, a replay being built, a job's spinner).

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use crate::workbench::protocol::Msg;
use crate::workbench::state::State;
use crate::workbench::update;

/// What waiting brought.
pub(crate) enum Wait {
    /// A message to handle.
    Msg(Msg),
    /// Time moved something on screen.
    Redraw,
    /// Time passed and nothing changed.
    Idle,
    /// Every sender is gone.
    Closed,
}

/// How long the replay's clock has waited through spinner ticks since its last tick (any
/// message restarts the wait, as the replay's steps always have).
#[derive(Default)]
pub(crate) struct Clock {
    replay_waited: Duration,
}

impl Clock {
    /// Waits for the next message, or until the replay's next step or the spinner's next
    /// frame is due (and then takes that step).
    pub(crate) fn wait(&mut self, rx: &Receiver<Msg>, state: &mut State) -> Wait {
        // While a replay plays, wake up for its next step.
        let replay_wake = state.modes.replay.as_ref().and_then(|r| {
            if r.is_building() {
                // Redraw the progress of the replay being built a few times a second (the
                // replay itself arrives as a message).
                Some(r.interval().min(Duration::from_millis(50)))
            } else {
                r.playing.then(|| r.interval())
            }
        });
        if replay_wake.is_none() {
            self.replay_waited = Duration::ZERO;
        }
        let replay_left = replay_wake.map(|d| d.saturating_sub(self.replay_waited));
        // While a job runs, wake up to turn the spinner.
        let spinner_wake = state.work.job.is_some().then_some(update::SPINNER_INTERVAL);
        let wake = match (replay_left, spinner_wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let received = match wake {
            Some(timeout) => rx.recv_timeout(timeout),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(m) => {
                self.replay_waited = Duration::ZERO;
                Wait::Msg(m)
            }
            Err(RecvTimeoutError::Disconnected) => Wait::Closed,
            Err(RecvTimeoutError::Timeout) => {
                let timeout = wake.unwrap_or_default();
                let mut changed = false;
                match replay_left {
                    Some(left) if left <= timeout => {
                        self.replay_waited = Duration::ZERO;
                        changed |= update::on_tick(state);
                    }
                    Some(_) => self.replay_waited += timeout,
                    None => {}
                }
                if spinner_wake.is_some() {
                    changed |= update::on_spinner_tick(state);
                }
                if changed { Wait::Redraw } else { Wait::Idle }
            }
        }
    }
}
