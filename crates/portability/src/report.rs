//! The portability report: one row per template pattern, one verdict per engine, plus the
//! partial-matching check. Plain data, so that the command line and the workbench can both
//! render it (the `render` module gives the text form).

use rtbench_engine::template::error::JsonPath;

pub use crate::engine::EngineKind;
pub use pyregex::hook::{CallKind, Outcome, Spans};

/// Everything found for one template and its samples.
#[derive(Clone, Debug)]
pub struct PortabilityReport {
    /// The engines compared, in column order.
    pub engines: Vec<EngineKind>,
    /// One row per pattern site of the template.
    pub fields: Vec<FieldRow>,
    /// Number of samples replayed.
    pub samples: usize,
    /// What the hold-back strategy for engines without partial matching does to each sample's
    /// stream.
    pub partial: Vec<PartialCheck>,
}

impl PortabilityReport {
    /// Number of (pattern, engine) cells that differ or cannot be written.
    pub fn problems(&self) -> usize {
        self.fields
            .iter()
            .flat_map(|f| &f.verdicts)
            .filter(|v| v.is_problem())
            .count()
    }

    /// Whether every pattern means the same in every engine on every sample.
    pub fn is_portable(&self) -> bool {
        self.problems() == 0
    }
}

/// One pattern of the template.
#[derive(Clone, Debug)]
pub struct FieldRow {
    /// The field's name; `None` for the start anchor.
    pub field: Option<String>,
    /// The pattern's key: `open_pattern`, `close_pattern`, `start_anchor_pattern` or
    /// `content_args.tag_pattern`.
    pub key: String,
    /// Where the key is in the template (for `file:line:col`).
    pub path: JsonPath,
    /// The pattern as written.
    pub pattern: String,
    /// One per engine of [`PortabilityReport::engines`].
    pub verdicts: Vec<Verdict>,
    /// The pattern in each engine's syntax (`None` when not expressible).
    pub translations: Vec<Option<String>>,
}

/// How one engine fares with one pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Every replayed search agreed.
    Same {
        /// How many searches were replayed (0 when no sample used the pattern).
        calls: usize,
    },
    /// Some searches disagreed.
    Differs {
        /// How many samples have at least one disagreeing search.
        samples: usize,
        /// The first divergence of the first such sample.
        first: Box<Divergence>,
    },
    /// The engine cannot write the pattern.
    NotExpressible {
        /// The construct the engine has no way to write.
        construct: String,
    },
    /// The engine is not in this build.
    Unavailable,
}

impl Verdict {
    /// Whether this verdict is worth a warning.
    pub fn is_problem(&self) -> bool {
        matches!(
            self,
            Verdict::Differs { .. } | Verdict::NotExpressible { .. }
        )
    }

    /// A short cell text: `same`, `differs (2 samples)`, `not expressible`.
    pub fn short(&self) -> String {
        match self {
            Verdict::Same { .. } => "same".into(),
            Verdict::Differs { samples: 1, .. } => "differs (1 sample)".into(),
            Verdict::Differs { samples, .. } => format!("differs ({samples} samples)"),
            Verdict::NotExpressible { .. } => "not expressible".into(),
            Verdict::Unavailable => "not built".into(),
        }
    }
}

/// The first search of a sample where an engine disagrees with the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence {
    /// The sample's name as given.
    pub sample: String,
    /// The entry point the search went through (`search`, partial `search`, `match`,
    /// `finditer`).
    pub kind: CallKind,
    /// The search's start (a document offset when the text could be placed in the document).
    pub pos: usize,
    /// The document offset (prefix + generation) the divergence is at.
    pub doc_offset: Option<usize>,
    /// Line and column (1-based, columns in characters) in the sample file.
    pub line_col: Option<(usize, usize)>,
    /// What the reference's engine found (spans in document offsets where known).
    pub reference: Outcome,
    /// What this engine found.
    pub engine: Outcome,
    /// The matched texts, for display: (reference, engine).
    pub texts: (Option<String>, Option<String>),
    /// Why, as established by re-running the engine with one idiom replaced.
    pub cause: Cause,
    /// How the parsed message changes with this engine's matches; `None` when it does not.
    pub message_change: Option<MessageChange>,
}

/// The likely cause of a divergence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// `\w`, `\d`, `\s` or `\b` mean other characters in this engine (confirmed: with
    /// Python's code points written out the engine agrees).
    UnicodeClasses,
    /// `$` matches only at the very end here, not before a final newline (confirmed: without
    /// the final newline the engine agrees).
    DollarBeforeFinalNewline,
    /// Case-insensitive matching equates other characters (confirmed: with each character's
    /// Python case partners written out the engine agrees).
    CaseFolding,
    /// The engine stopped at a limit.
    EngineLimit(String),
    /// Not established by re-testing; the constructs the pattern uses that are known to vary.
    Unexplained {
        /// The constructs of the pattern known to behave differently across engines.
        constructs: Vec<String>,
    },
}

impl Cause {
    /// One sentence explaining the cause for `engine`, for the report's divergence details.
    pub fn describe(&self, engine: EngineKind) -> String {
        let e = engine.name();
        match self {
            Cause::UnicodeClasses => format!(
                "\\w, \\d, \\s or \\b match other characters in {e} than in Python (Unicode-aware there); with Python's characters written out, {e} agrees"
            ),
            Cause::DollarBeforeFinalNewline => format!(
                "`$` in Python also matches before a final newline; in {e} it matches only at the very end (without the final newline, {e} agrees)"
            ),
            Cause::CaseFolding => format!(
                "case-insensitive matching equates other characters in {e} (with Python's case partners written out, {e} agrees)"
            ),
            Cause::EngineLimit(m) => format!("{e} stopped: {m}"),
            Cause::Unexplained { constructs } if constructs.is_empty() => {
                "not established (no construct known to vary is involved)".into()
            }
            Cause::Unexplained { constructs } => {
                format!(
                    "not established; constructs that vary: {}",
                    constructs.join(", ")
                )
            }
        }
    }
}

/// How the message differs when the parse uses an engine's matches for one pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageChange {
    /// Top-level keys whose values differ, with both values (Python repr, shortened).
    pub keys: Vec<(String, String, String)>,
    /// Set when one of the two parses failed: (reference, engine) outcome.
    pub error: Option<(String, String)>,
}

/// What streaming with the simple hold-back strategy does to one sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialCheck {
    /// The sample's name as given.
    pub sample: String,
    /// The chunk size (code points) the sample was streamed with.
    pub chunk: usize,
    /// `None`: the strategy gives the same events as partial matching. Otherwise the first
    /// difference: (feed number, rtbench's events, the strategy's events), as JSON-ish text.
    pub first_difference: Option<(usize, String, String)>,
    /// Whether the final message differs as well.
    pub message_differs: bool,
}
