//! The workbench's state: everything the views draw from, and nothing else. Pure data; the
//! update functions change it, the views read it.

use std::sync::Arc;

use crate::workbench::analysis::Analysis;
use crate::workbench::jobs::{JobKind, Runner};
use crate::workbench::keys::Keymap;
use crate::workbench::replay::ReplayState;
use crate::workbench::search::Search;
use crate::workbench::theme::Theme;
use rtbench_engine::Reference;
use rtbench_engine::diagnostic::Diagnostic;

// The plain data that crosses threads lives in the protocol module; the state holds it.
pub(crate) use crate::workbench::protocol::{Overlay, Report, SampleEntry, Shown, VersionMark};
use rtbench_tooling::progress::Progress;

/// What the workbench is doing: inspecting the parse of a sample, or replaying its stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The panes show the parse of the sample.
    Inspect,
    /// Stream replay: see `workbench::replay`.
    Replay,
}

pub use crate::workbench::pane::Pane;

/// What the status bar prompt asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptKind {
    /// Chunk sizes for the replay (`:`).
    ChunkSizes,
    /// A search of the raw text (`/`); Tab switches between literal and regex.
    Search { regex: bool },
}

/// Text being typed at the status bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
    /// Why the last Enter did not take it (the prompt stays open to fix it).
    pub error: Option<String>,
}

impl Prompt {
    pub fn new(kind: PromptKind) -> Prompt {
        Prompt {
            kind,
            text: String::new(),
            error: None,
        }
    }
}

/// Whether files are watched.
#[derive(Clone, Debug, PartialEq)]
pub enum Live {
    On,
    /// Watching failed or is impossible: why.
    Off(String),
}

/// A tooling job running off the UI thread (see [`crate::workbench::jobs`]), whose result
/// the screen waits for.
#[derive(Clone, Debug)]
pub struct Running {
    /// The request: only the result with this number is shown.
    pub seq: u64,
    pub kind: JobKind,
    /// Spinner frames shown so far (the run loop's clock turns it).
    pub spin: usize,
    /// How far the job has got; cancelling it stops the job's thread at its next look.
    pub progress: Arc<Progress>,
}

/// Scroll offsets of the panes (rows), one per pane (`scroll[pane]`), and the help's. Text
/// panes scroll by `usize`: a region or a message can be longer than the 65,535 rows a terminal
/// widget scrolls by (see [`crate::workbench::view::window`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scrolls {
    panes: [usize; crate::workbench::pane::COUNT],
    /// The help's scroll.
    pub help: u16,
}

impl std::ops::Index<Pane> for Scrolls {
    type Output = usize;
    fn index(&self, pane: Pane) -> &usize {
        &self.panes[pane.index()]
    }
}

impl std::ops::IndexMut<Pane> for Scrolls {
    fn index_mut(&mut self, pane: Pane) -> &mut usize {
        &mut self.panes[pane.index()]
    }
}

/// What the files say, as the parse lane last reported it: the template, the samples and their
/// verdicts, the result on screen. Replaced by each report (merged where a broken template keeps
/// the last good verdicts); nothing here is about where the user looks.
#[derive(Debug)]
pub struct Session {
    /// The reference version the samples are parsed under (switched with a key).
    pub reference: Reference,
    /// Whether the files are watched.
    pub live: Live,
    /// A parse request is in flight.
    pub busy: bool,
    /// The newest request sent to the worker.
    pub requested: u64,
    /// The template's name (file or model folder) as the status bar shows it.
    pub template_name: String,
    /// The model's own files found beside the template.
    pub model_files: Vec<String>,
    /// Why the template on disk cannot be used (the last good result stays, marked stale).
    pub template_error: Option<Box<Diagnostic>>,
    /// Why the selected sample cannot be read.
    pub sample_error: Option<String>,
    /// The sample list with each sample's verdict.
    pub samples: Vec<SampleEntry>,
    /// Fields whose delimiters no sample ever matched.
    pub never_matched: Vec<String>,
    /// Lint warnings about the template (kept while the template is invalid).
    pub lint: Vec<Diagnostic>,
    /// The result on screen.
    pub shown: Option<Shown>,
    /// The last result with a message for the same sample (shown, marked stale, while the
    /// current one fails to parse).
    pub last_good: Option<Shown>,
    /// The inputs, for jobs that look at every sample (`None` in states drawn by tests).
    pub inputs: Option<std::sync::Arc<crate::workbench::inputs::Inputs>>,
    /// A corpus named as samples: its groups and the record shown.
    pub corpus: Option<crate::workbench::corpus::CorpusView>,
}

/// Where the user is looking and how the screen is arranged: focus, layout, cursor, scrolls, the
/// search, the key map and colours. Survives every report.
#[derive(Debug)]
pub struct Ui {
    /// The colours.
    pub theme: Theme,
    /// The key bindings in force.
    pub keys: Keymap,
    /// Terminal size (columns, rows).
    pub size: (u16, u16),
    /// The pane keys go to.
    pub focus: Pane,
    /// Which panes are shown (indexed like [`Pane::ALL`]).
    pub visible: [bool; crate::workbench::pane::COUNT],
    /// Show only the focused pane.
    pub zoom: bool,
    /// Width of the raw pane in percent of the screen.
    pub split: u16,
    /// Height of the bottom row (diagnostics and samples) in rows.
    pub bottom: u16,
    /// The sample on screen (an index into the session's samples).
    pub selected_sample: usize,
    /// Cursor: a byte offset into the document.
    pub cursor: usize,
    /// Column the cursor tries to keep when moving up and down.
    pub want_col: usize,
    /// First visible row of the raw pane: (line, wrapped row within it).
    pub raw_top: (usize, usize),
    /// The region shown in the region pane.
    pub region: Option<usize>,
    /// The selected diagnostic (an index into the diagnostics pane's items).
    pub diagnostic: usize,
    /// The panes' scroll offsets.
    pub scroll: Scrolls,
    /// A short note for the status bar (e.g. "reloaded").
    pub note: Option<String>,
    /// Whether the prompt before the start anchor is folded away in the raw pane; `None` until
    /// decided for the sample on screen (folded when it would take over a third of the pane).
    pub fold: Option<bool>,
    /// The search of the raw text, while its matches are highlighted.
    pub search: Option<Search>,
    /// Whether the mouse is captured (released, the terminal selects text).
    pub mouse: bool,
    /// Whether the raw pane shades every other model token.
    pub tokens_shown: bool,
    /// The most steps a replay opens with (see [`crate::workbench::config::Config`]).
    pub replay_max_steps: usize,
}

/// What is stacked over the panes, top first as keys reach them (see `update::layers`): the help,
/// an overlay, the status bar prompt, the stream replay.
#[derive(Debug)]
pub struct Modes {
    /// Inspecting or replaying (replay mode has [`Modes::replay`]).
    pub mode: Mode,
    /// Whether the help is shown over everything.
    pub help: bool,
    /// An explanation or a chunking report over the screen.
    pub overlay: Option<Overlay>,
    /// Text being typed at the status bar prompt (chunk sizes, a search).
    pub prompt: Option<Prompt>,
    /// The stream replay (set while in [`Mode::Replay`]).
    pub replay: Option<ReplayState>,
}

/// Background work the screen waits for, and where it is sent (the runtime's lanes; `None` in
/// states drawn by tests and tools, which run work at once).
#[derive(Debug)]
pub struct Work {
    /// The explanation or chunking check being computed (Esc cancels it).
    pub job: Option<Running>,
    /// The newest job requested (each request gets the next number).
    pub jobs_requested: u64,
    /// Where jobs run: the run loop's tooling thread. Without one (a state drawn by tests or
    /// tools), a job runs at once on the calling thread.
    pub runner: Option<Runner>,
    /// Where replays are built: the run loop's replay lane. Without one (a state drawn by
    /// tests or tools), a replay is built at once on the calling thread.
    pub replays: Option<crate::workbench::runtime::Lane<crate::workbench::protocol::ReplayBuilt>>,
    /// A bless asked for a sample whose result is not on screen yet (selected just before):
    /// proposed when its report arrives, dropped when another sample is selected.
    pub pending_bless: Option<String>,
}

/// The whole state, in four parts that change for different reasons.
#[derive(Debug)]
pub struct State {
    /// What the files say.
    pub session: Session,
    /// Where the user looks.
    pub ui: Ui,
    /// What is stacked over the panes.
    pub modes: Modes,
    /// Background work in flight.
    pub work: Work,
}

impl State {
    /// A state before any report: nothing parsed, every pane shown, the raw pane focused.
    pub fn new(theme: Theme, size: (u16, u16)) -> State {
        State {
            session: Session {
                reference: Reference::NEWEST,
                live: Live::On,
                busy: false,
                requested: 0,
                template_name: String::new(),
                model_files: Vec::new(),
                template_error: None,
                sample_error: None,
                samples: Vec::new(),
                never_matched: Vec::new(),
                lint: Vec::new(),
                shown: None,
                last_good: None,
                inputs: None,
                corpus: None,
            },
            ui: Ui {
                theme,
                keys: Keymap::default(),
                size,
                focus: Pane::Raw,
                visible: [true; crate::workbench::pane::COUNT],
                zoom: false,
                split: 50,
                bottom: 8,
                selected_sample: 0,
                cursor: 0,
                want_col: 0,
                raw_top: (0, 0),
                region: None,
                diagnostic: 0,
                scroll: Scrolls::default(),
                note: None,
                fold: None,
                search: None,
                mouse: true,
                tokens_shown: false,
                replay_max_steps: crate::workbench::config::REPLAY_MAX_STEPS,
            },
            modes: Modes {
                mode: Mode::Inspect,
                help: false,
                overlay: None,
                prompt: None,
                replay: None,
            },
            work: Work {
                job: None,
                jobs_requested: 0,
                runner: None,
                replays: None,
                pending_bless: None,
            },
        }
    }

    /// Whether what is on screen is older than the files (the newest version cannot be used).
    pub fn is_stale(&self) -> bool {
        self.session.template_error.is_some() || self.session.sample_error.is_some()
    }

    /// The analysis on screen, if any.
    pub fn analysis(&self) -> Option<&Arc<Analysis>> {
        self.session.shown.as_ref().map(|s| &s.analysis)
    }

    /// Whether `pane` is shown.
    pub fn is_visible(&self, pane: Pane) -> bool {
        self.ui.visible[pane.index()]
    }

    /// Opens the corpora `files` in the samples pane and focuses it: until a record is picked
    /// there, the other panes have nothing to show.
    pub fn open_corpus(&mut self, files: Vec<std::path::PathBuf>) {
        self.session.corpus = Some(crate::workbench::corpus::CorpusView::new(files));
        self.ui.focus = Pane::Samples;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::analysis::Status;

    #[test]
    fn a_sample_entry_says_its_warnings_and_chunking_verdict() {
        let mut e = SampleEntry::new("a.sample".into(), Status::Ok);
        assert_eq!(e.label(), "ok");
        e.unstable = Some(false);
        assert_eq!(e.label(), "ok");
        e.warnings = 2;
        e.unstable = Some(true);
        assert_eq!(e.label(), "ok · 2 warnings · unstable under chunking");
        e.warnings = 1;
        e.unstable = None;
        assert_eq!(e.label(), "ok · 1 warning");
    }

    #[test]
    fn a_sample_that_depends_on_the_version_is_marked_in_full_short_and_tiny() {
        let mut e = SampleEntry::new("a.sample".into(), Status::Ok);
        assert_eq!(e.marks(false), "");
        e.versions = Some(Arc::new(VersionMark {
            other: Reference::V5_24,
            warning: Diagnostic::warning("under 5.24 this sample parses differently: x"),
            at: None,
        }));
        assert_eq!(e.label(), "ok · ≠5.24");
        assert_eq!(e.marks(false), "≠5.24");
        e.warnings = 2;
        e.unstable = Some(true);
        assert_eq!(
            e.label(),
            "ok · 2 warnings · unstable under chunking · ≠5.24"
        );
        assert_eq!(e.marks(false), "⚠2 ≈ ≠5.24");
        assert_eq!(e.marks(true), "⚠2 ≈ ≠");
    }

    #[test]
    fn a_corpus_opens_with_the_samples_pane_focused() {
        let mut s = State::new(Theme::dark(), (80, 24));
        assert_eq!(s.ui.focus, Pane::Raw);
        s.open_corpus(vec!["logs.jsonl".into()]);
        assert_eq!(s.ui.focus, Pane::Samples);
        assert!(s.session.corpus.is_some());
    }
}
