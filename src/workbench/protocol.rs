//! What crosses into the UI thread: every message the run loop hears about, from the terminal,
//! the runtime's lanes, the file watcher and the signal handler. [`crate::workbench::update`]
//! turns each into a state change and at most one [`crate::workbench::update::Cmd`].

use crossterm::event::Event;

use crate::workbench::corpus::Batch;
use crate::workbench::jobs::Done;
use crate::workbench::runtime::BackgroundPanic;
use crate::workbench::signals::JobControl;
use crate::workbench::state::Report;
use crate::workbench::watch::WatchEvent;

/// Everything the run loop hears about.
#[derive(Debug)]
pub enum Msg {
    /// A key, a mouse event or a resize.
    Input(Event),
    /// The parse lane's report for a request.
    Report(Box<Report>),
    /// An explanation or a chunking check is done.
    Job(Box<Done>),
    /// The watched files changed, or watching stopped or came back.
    Watch(WatchEvent),
    /// Groups of a corpus being scanned.
    Corpus(Batch),
    /// `SIGTSTP` or `SIGCONT`.
    JobControl(JobControl),
    /// Background work panicked (a bug): shown, and the workbench goes on.
    Panicked(BackgroundPanic),
}
