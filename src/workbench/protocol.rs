//! What crosses into the UI thread: every message the run loop hears about, from the terminal,
//! the runtime's lanes, the file watcher and the signal handler, and the plain data they carry
//! (the parse lane's [`Report`], a job's [`Done`] overlay). [`crate::workbench::update`] turns
//! each message into a state change and at most one [`crate::workbench::update::Cmd`].
//!
//! This module is at the bottom of the workbench: it names the data modules it carries
//! (analysis, bless proposals, corpus batches, watch and signal events) and never the state,
//! the update or the views.

use std::sync::Arc;

use crossterm::event::Event;

use crate::workbench::analysis::{Analysis, Status};
use crate::workbench::bless::Proposal;
use crate::workbench::corpus::Batch;
use crate::workbench::highlight::MessageLines;
use crate::workbench::runtime::BackgroundPanic;
use crate::workbench::signals::JobControl;
use crate::workbench::watch::WatchEvent;
use rtbench_engine::Reference;
use rtbench_engine::diagnostic::Diagnostic;

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
    /// A replay built on the replay lane.
    Replay(ReplayBuilt),
    /// `SIGTSTP` or `SIGCONT`.
    JobControl(JobControl),
    /// Background work panicked (a bug): shown, and the workbench goes on.
    Panicked(BackgroundPanic),
}

/// A replay the replay lane built, for the build numbered `seq`.
#[derive(Debug)]
pub struct ReplayBuilt {
    /// The build it answers (only the build awaited is shown).
    pub seq: u64,
    /// The replay.
    pub replay: Box<rtbench_tooling::replay::Replay>,
}

/// The result on screen: one sample analysed with one template, and how its message is shown.
#[derive(Clone, Debug)]
pub struct Shown {
    pub analysis: Arc<Analysis>,
    /// The message pane's highlighted head and the index of its lines, which are written
    /// from `analysis.message` as the view draws them.
    pub message_lines: Arc<MessageLines>,
    /// Whether the grammar compiled from the template accepts the generation (`None`: not
    /// computed).
    pub grammar: Option<Box<crate::workbench::grammar::GrammarMark>>,
}

/// A sample whose result under the other reference version differs from the one in force
/// (see [`rtbench_tooling::versions`]).
#[derive(Clone, Debug, PartialEq)]
pub struct VersionMark {
    /// The version it parses differently under.
    pub other: Reference,
    /// The difference as a warning about the sample file (located at the first event that
    /// differs, when the text there is the file's).
    pub warning: Diagnostic,
    /// Where the first event that differs lies in the document (prefix + generation).
    pub at: Option<usize>,
}

impl VersionMark {
    /// The list's mark: `≠5.24`.
    pub fn label(&self) -> String {
        format!("≠{}", self.other)
    }
}

/// One entry of the sample list.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleEntry {
    pub name: String,
    pub status: Status,
    /// Silent losses and sample-file warnings of its parse.
    pub warnings: usize,
    /// Whether some chunking changes its result; `None` until the background check ran.
    pub unstable: Option<bool>,
    /// How it parses under the other reference version, when that differs (known once the
    /// background comparison ran).
    pub versions: Option<Arc<VersionMark>>,
}

impl SampleEntry {
    /// An entry with a status and nothing else known yet.
    pub fn new(name: String, status: Status) -> SampleEntry {
        SampleEntry {
            name,
            status,
            warnings: 0,
            unstable: None,
            versions: None,
        }
    }

    /// The status word and what else is known:
    /// `ok · 2 warnings · unstable under chunking · ≠5.24`.
    pub fn label(&self) -> String {
        let mut out = self.status.label().to_string();
        match self.warnings {
            0 => {}
            1 => out.push_str(" · 1 warning"),
            n => out.push_str(&format!(" · {n} warnings")),
        }
        if self.unstable == Some(true) {
            out.push_str(" · unstable under chunking");
        }
        if let Some(v) = &self.versions {
            out.push_str(&format!(" · {}", v.label()));
        }
        out
    }

    /// The marks beside the status, short (`⚠2 ≈ ≠5.24`), or with `tiny` one character each
    /// (`⚠2 ≈ ≠`); empty when there are none.
    pub fn marks(&self, tiny: bool) -> String {
        let mut marks = Vec::new();
        if self.warnings > 0 {
            marks.push(format!("⚠{}", self.warnings));
        }
        if self.unstable == Some(true) {
            marks.push("≈".to_string());
        }
        if let Some(v) = &self.versions {
            marks.push(if tiny { "≠".to_string() } else { v.label() });
        }
        marks.join(" ")
    }
}

/// What the background worker last reported.
#[derive(Clone, Debug)]
pub struct Report {
    /// The request this answers.
    pub seq: u64,
    pub template_name: String,
    /// The template cannot be used (the result on screen is stale).
    pub template_error: Option<Box<Diagnostic>>,
    pub samples: Vec<SampleEntry>,
    /// The selected sample cannot be used (the result on screen is stale).
    pub sample_error: Option<String>,
    /// The new result, when there is one.
    pub shown: Option<Shown>,
    /// Fields that no sample matched.
    pub never_matched: Vec<String>,
    /// Lint warnings about the template.
    pub lint: Vec<Diagnostic>,
    /// The model's own files found beside the template (chat template, tokenizer).
    pub model_files: Vec<String>,
    /// How long the analysis took.
    pub took: std::time::Duration,
}

/// A text shown over the screen until Esc.
#[derive(Clone, Debug, PartialEq)]
pub struct Overlay {
    pub title: String,
    pub lines: Vec<OverlayLine>,
    pub scroll: u16,
    /// For an explanation: the field explained (← → switch fields).
    pub field: Option<usize>,
    /// For a bless: the writes that Enter confirms (one sample's, or every changed one's).
    pub confirm: Option<Arc<Vec<Proposal>>>,
}

/// A line of an overlay: a heading (drawn in the key colour), or a detail under one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OverlayLine {
    Heading(String),
    /// Drawn indented by two spaces.
    Detail(String),
}

impl OverlayLine {
    /// A line of the tooling's text reports, where details are indented by two spaces.
    pub fn from_report(line: &str) -> OverlayLine {
        match line.strip_prefix("  ") {
            Some(detail) => OverlayLine::Detail(detail.to_string()),
            None => OverlayLine::Heading(line.to_string()),
        }
    }

    /// The line as drawn.
    pub fn text(&self) -> String {
        match self {
            OverlayLine::Heading(t) => t.clone(),
            OverlayLine::Detail(t) => format!("  {t}"),
        }
    }
}

impl Overlay {
    /// Every line as drawn.
    pub fn texts(&self) -> Vec<String> {
        self.lines.iter().map(OverlayLine::text).collect()
    }
}

/// The lines of a tooling text report.
pub(crate) fn report_lines<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> Vec<OverlayLine> {
    lines
        .into_iter()
        .map(|l| OverlayLine::from_report(l.as_ref()))
        .collect()
}

/// A job's result: the overlay to show.
#[derive(Clone, Debug, PartialEq)]
pub struct Done {
    /// The request this answers.
    pub seq: u64,
    /// What to show.
    pub overlay: Overlay,
}
