//! Tooling jobs off the UI thread: the explanation of a field (`e`) and the chunking check
//! (`x`) parse the sample again, many times for the check, so they run on a thread of their
//! own like the parse ([`crate::workbench::worker`]). The newest job wins: jobs that queue up
//! while one runs are skipped but for the newest, a job cancelled (Esc) or replaced before it
//! starts is not run, and the result of one cancelled or replaced while it runs is dropped.
//! The tooling calls cannot be interrupted, so a new job does not wait for a job no longer
//! wanted to finish: that one is left to finish on its thread while a fresh thread takes the
//! new one (at most [`MAX_THREADS`] at once). The UI checks the sequence number again when a
//! result arrives, so a late one never replaces a newer request's.

use std::fmt;
use std::sync::Arc;

use crate::workbench::analysis::Analysis;
use crate::workbench::inputs::{Inputs, read_prepared};
pub(crate) use crate::workbench::protocol::{Done, Overlay};
use crate::workbench::protocol::{OverlayLine, report_lines};
use crate::workbench::runtime::{BackgroundPanic, Lane, Ticket};
use rtbench_tooling::progress::Progress;

/// The tooling lane's name (its threads are `rtbench-tooling`).
pub(crate) const LANE: &str = "tooling";

/// What a job computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobKind {
    /// Explain field number `field` (named `name`) of the sample.
    Explain { field: usize, name: String },
    /// Stream the sample with many chunkings and compare with the one-shot parse.
    CheckChunkings,
    /// Replay the template's patterns in other runtimes' regex engines on the samples.
    Portability,
    /// Parse every sample and propose blessing each one whose result changed.
    BlessAll,
}

impl JobKind {
    /// What the status bar says while the job runs.
    pub fn label(&self) -> String {
        match self {
            JobKind::Explain { name, .. } => format!("explaining {name}"),
            JobKind::CheckChunkings => "checking chunkings".into(),
            JobKind::Portability => "checking portability".into(),
            JobKind::BlessAll => "finding the samples whose result changed".into(),
        }
    }
}

/// A job: what to compute, on which analysed sample.
#[derive(Clone, Debug)]
pub struct Job {
    /// The request this is (see [`crate::workbench::state::State::jobs_requested`]).
    pub seq: u64,
    pub kind: JobKind,
    pub analysis: Arc<Analysis>,
    /// The workbench's inputs, for jobs that look at every sample (without them, only the
    /// analysed one).
    pub inputs: Option<Arc<Inputs>>,
    /// How far the job has got, and its cancel flag (the chunking and portability checks
    /// count their work and stop when cancelled; an explanation is one bounded parse).
    pub progress: Arc<Progress>,
}

impl Job {
    /// Runs the tooling call (on any thread); a panic becomes an overlay saying so.
    pub fn run(&self) -> Done {
        let overlay = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.compute()))
            .unwrap_or_else(|payload| {
                let what = crate::workbench::runtime::panic_message(payload.as_ref());
                Overlay {
                    title: format!("{} failed", self.kind.label()),
                    lines: vec![OverlayLine::Heading(format!(
                        "internal error (a bug; please report it): {what}"
                    ))],
                    scroll: 0,
                    field: match self.kind {
                        JobKind::Explain { field, .. } => Some(field),
                        JobKind::CheckChunkings | JobKind::Portability | JobKind::BlessAll => None,
                    },
                    confirm: None,
                }
            });
        Done {
            seq: self.seq,
            overlay,
        }
    }

    fn compute(&self) -> Overlay {
        match &self.kind {
            JobKind::Explain { field, name } => explain(&self.analysis, *field, name),
            JobKind::CheckChunkings => check_chunkings(&self.analysis, &self.progress),
            JobKind::Portability => {
                portability(&self.analysis, self.inputs.as_deref(), &self.progress)
            }
            JobKind::BlessAll => bless_all(&self.analysis, self.inputs.as_deref(), &self.progress),
        }
    }
}

/// A proposal as overlay lines: the file, then each change; a change of several lines (an
/// error message with its `Content:`) keeps its line breaks, its further lines indented.
pub(crate) fn proposal_lines(p: &crate::workbench::bless::Proposal) -> Vec<OverlayLine> {
    let mut lines = vec![OverlayLine::Heading(format!("{}:", p.path.display()))];
    for change in &p.changes {
        let mut parts = change.lines();
        lines.push(OverlayLine::Detail(parts.next().unwrap_or("").to_string()));
        lines.extend(parts.map(|l| OverlayLine::Detail(format!("  {l}"))));
    }
    lines
}

/// The confirmation of a bless of every sample whose result changed: the list, each with how
/// it changes, then what Enter writes. The template is the one on screen.
fn bless_all(a: &Analysis, inputs: Option<&Inputs>, progress: &Progress) -> Overlay {
    let overlay = |title: String, lines| Overlay {
        title,
        lines,
        scroll: 0,
        field: None,
        confirm: None,
    };
    let Some(inputs) = inputs else {
        return overlay("bless all: no sample files".into(), Vec::new());
    };
    let Some((proposals, refused)) =
        crate::workbench::bless::propose_all(&a.template, inputs, progress)
    else {
        return cancelled("bless of every changed sample");
    };
    let mut lines = Vec::new();
    for p in &proposals {
        lines.extend(proposal_lines(p));
    }
    if !refused.is_empty() {
        lines.push(OverlayLine::Heading("left out:".into()));
        lines.extend(refused.into_iter().map(OverlayLine::Detail));
    }
    let n = proposals.len();
    if n == 0 {
        return overlay(
            "bless all: every sample already expects its result".into(),
            lines,
        );
    }
    lines.push(OverlayLine::Heading(String::new()));
    lines.push(OverlayLine::Heading(format!(
        "Enter writes the expected section of these {n} sample{} (each file atomically, refused if it changed since it was read); Esc cancels",
        if n == 1 { "" } else { "s" }
    )));
    Overlay {
        confirm: Some(Arc::new(proposals)),
        ..overlay(
            format!(
                "bless all: {n} sample{} whose result changed",
                if n == 1 { "" } else { "s" }
            ),
            lines,
        )
    }
}

/// What a cancelled job leaves (never shown: its result is no longer wanted).
fn cancelled(what: &str) -> Overlay {
    Overlay {
        title: format!("{what} cancelled"),
        lines: Vec::new(),
        scroll: 0,
        field: None,
        confirm: None,
    }
}

/// Explains field `field` (named `name`) of the sample: why it matched where it did, or
/// nowhere.
fn explain(a: &Analysis, field: usize, name: &str) -> Overlay {
    let s = &a.sample;
    let lines = match rtbench_tooling::explain::explain(
        &a.template,
        s.prefix.as_deref().unwrap_or(""),
        &s.generation,
        s.tools.as_ref(),
        name,
    ) {
        // Places named in the sample file, as everywhere.
        Ok(e) => report_lines(
            e.with_places(rtbench_tooling::place::Places::of_sample(s, &a.sample_name))
                .lines(),
        ),
        Err(e) => vec![OverlayLine::Heading(e)],
    };
    Overlay {
        title: format!(
            "explain {name} ({}/{}, ← → other fields)",
            field + 1,
            a.field_names.len()
        ),
        lines,
        scroll: 0,
        field: Some(field),
        confirm: None,
    }
}

/// Streams the sample with every chunk size from 1 to 32, 8 random chunkings and
/// tokenizer-like pieces, and reports whether any changes the result (as `rtbench chunks`).
fn check_chunkings(a: &Analysis, progress: &Progress) -> Overlay {
    use rtbench_tooling::chunking::{CheckPlan, Generation, check_with};
    let s = &a.sample;
    let mut generation = Generation::of_sample(a.template.clone(), s);
    // Token ids are cut as ids under a reference that parses them (the model's files again).
    let model = a
        .model_dir
        .as_deref()
        .filter(|_| s.model.generation_ids.is_some())
        .map(rtbench_tooling::model::Model::open);
    generation.ids = model
        .as_ref()
        .and_then(|m| rtbench_tooling::model::token_input(s, m));
    let by_ids = generation.parsed_ids().is_some();
    let plan = CheckPlan {
        // With the model's tokenizer: its tokens and the TextStreamer's pieces too (text only).
        model: if by_ids {
            Vec::new()
        } else {
            a.model_chunkings.clone()
        },
        tokens: !by_ids,
        ..CheckPlan::default()
    };
    let Some(mut report) = check_with(&generation, &plan, progress) else {
        return cancelled("chunking check");
    };
    // The delimiter blamed for a difference is named at its key in the template.
    if let Some(source) = &a.template_source {
        report.locate(source);
    }
    let agrees = report.agrees();
    let text = report.describe(&a.sample_name, &s.generation);
    // The first line is the verdict; every other line is a detail of it.
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| match l.strip_prefix("  ") {
            _ if i == 0 => OverlayLine::Heading(l.to_string()),
            Some(detail) => OverlayLine::Detail(detail.to_string()),
            None => OverlayLine::Detail(l.to_string()),
        })
        .collect();
    Overlay {
        title: if report.stable_error().is_some() {
            "chunking check: the parse fails however it is cut".into()
        } else if agrees {
            "chunking check: every chunking agrees".into()
        } else {
            "chunking check: the result depends on the chunking".into()
        },
        lines,
        scroll: 0,
        field: None,
        confirm: None,
    }
}

/// Runs the template's patterns in every built-in engine on the samples (all of them when the
/// inputs are known, else the analysed one), as `rtbench lint --engines` does: the table of
/// verdicts first, then each problem with its first divergence, then what streaming without
/// partial matching would change.
fn portability(a: &Analysis, inputs: Option<&Inputs>, progress: &Progress) -> Overlay {
    use rtbench_portability::{EngineKind, SampleInput, analyze_with, render};
    let mut samples: Vec<(String, Arc<rtbench_tooling::sample::Sample>, Arc<String>)> = Vec::new();
    let mut skipped = 0;
    if let Some(inputs) = inputs {
        let model = inputs
            .model_dir()
            .map(|d| rtbench_tooling::model::Model::open(&d));
        for source in inputs.sample_sources() {
            let f = read_prepared(&source, model.as_ref());
            match f.sample {
                Ok(s) => samples.push((f.name, s, f.text)),
                Err(_) => skipped += 1,
            }
        }
    }
    if samples.is_empty() {
        samples.push((a.sample_name.clone(), Arc::clone(&a.sample), Arc::default()));
    }
    let engines = EngineKind::built_in();
    let inputs: Vec<SampleInput<'_>> = samples
        .iter()
        .map(|(name, sample, text)| SampleInput {
            name: name.clone(),
            sample,
            file_text: (!text.is_empty()).then_some(text.as_str()),
        })
        .collect();
    let Some(report) = analyze_with(&a.template, &inputs, &engines, progress) else {
        return cancelled("portability check");
    };
    let mut lines: Vec<OverlayLine> = Vec::new();
    let n = report.samples;
    lines.push(OverlayLine::Heading(format!(
        "on {n} sample{}{}",
        if n == 1 { "" } else { "s" },
        if skipped > 0 {
            format!(" ({skipped} that do not read or prepare left out)")
        } else {
            String::new()
        }
    )));
    let problems = render::problems(&report);
    if report.fields.is_empty() {
        lines.push(OverlayLine::Detail(
            "no patterns (only literal delimiters): portable".into(),
        ));
    } else {
        let detail = |l: &str| OverlayLine::Detail(l.to_string());
        lines.extend(render::table(&report).lines().map(detail));
        for p in &problems {
            lines.push(OverlayLine::Heading(p.headline.clone()));
            lines.extend(p.details.iter().map(|l| detail(l)));
        }
    }
    lines.extend(report_lines(render::partial_lines(&report)));
    let problems = problems.len();
    Overlay {
        title: if problems == 0 {
            "portability: every engine agrees".into()
        } else {
            format!(
                "portability: {problems} problem{}",
                if problems == 1 { "" } else { "s" }
            )
        },
        lines,
        scroll: 0,
        field: None,
        confirm: None,
    }
}

/// At most this many tooling threads run at once: the one running the job wanted, and one
/// finishing a job no longer wanted. Beyond that, a new job waits for the older one.
pub(crate) const MAX_THREADS: usize = 2;

/// Where the UI sends jobs. Cloning shares the same destination.
#[derive(Clone)]
pub struct Runner {
    submit: Arc<dyn Fn(Job) + Send + Sync>,
    /// The tooling lane, when jobs run on one (not for a runner made by [`Runner::new`]).
    lane: Option<Lane<Done>>,
}

impl fmt::Debug for Runner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runner")
            .field("lane", &self.lane)
            .finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner that hands every job to `submit` (tests use it to run jobs when they like).
    pub fn new(submit: impl Fn(Job) + Send + Sync + 'static) -> Runner {
        Runner {
            submit: Arc::new(submit),
            lane: None,
        }
    }

    /// Starts the tooling lane: it runs the newest job still wanted and sends its result
    /// through `send` (which should forward it to the UI and wake it), a panic outside the
    /// job's own guard through `panicked`. The threads end when every clone of the runner is
    /// gone.
    pub fn start(
        send: impl Fn(Done) + Send + Sync + 'static,
        panicked: impl Fn(BackgroundPanic) + Send + Sync + 'static,
    ) -> Runner {
        Runner::start_with(Job::run, send, panicked)
    }

    /// [`Runner::start`] with `run` doing the jobs (tests hold it to see what is skipped).
    fn start_with(
        run: impl Fn(&Job) -> Done + Send + Sync + 'static,
        send: impl Fn(Done) + Send + Sync + 'static,
        panicked: impl Fn(BackgroundPanic) + Send + Sync + 'static,
    ) -> Runner {
        let lane = Lane::start(LANE, MAX_THREADS, move |_, d| send(d), panicked);
        let run = Arc::new(run);
        let to = lane.clone();
        Runner {
            submit: Arc::new(move |job: Job| {
                let run = Arc::clone(&run);
                to.submit(job.seq, move |t: &Ticket<Done>| {
                    t.reply(run(&job));
                });
            }),
            lane: Some(lane),
        }
    }

    /// Sends `job`; it replaces any job sent before.
    pub fn submit(&self, job: Job) {
        (self.submit)(job);
    }

    /// No job's result is wanted any more: a queued job is skipped, a running one's result
    /// is dropped.
    pub fn cancel(&self) {
        if let Some(lane) = &self.lane {
            lane.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::runtime::testing::Gates as Gate;
    use crate::workbench::update::testing::loaded;
    use std::sync::mpsc;
    use std::time::Duration;

    fn job(seq: u64, kind: JobKind) -> Job {
        let state = loaded(0, (80, 24));
        Job {
            seq,
            kind,
            analysis: Arc::clone(state.analysis().unwrap()),
            inputs: None,
            progress: Arc::default(),
        }
    }

    #[test]
    fn an_explain_job_shows_the_tooling_explanation() {
        let j = job(
            3,
            JobKind::Explain {
                field: 0,
                name: "thinking".into(),
            },
        );
        let a = &j.analysis;
        let done = j.run();
        assert_eq!(done.seq, 3);
        assert_eq!(done.overlay.field, Some(0));
        assert!(done.overlay.title.starts_with("explain thinking (1/"));
        let s = &a.sample;
        let expected = rtbench_tooling::explain::explain(
            &a.template,
            s.prefix.as_deref().unwrap_or(""),
            &s.generation,
            s.tools.as_ref(),
            "thinking",
        )
        .unwrap()
        .with_places(rtbench_tooling::place::Places::of_sample(s, &a.sample_name))
        .lines();
        assert_eq!(done.overlay.texts(), expected);
        // Places are named in the sample file, with the generation's own position.
        let opened = &done.overlay.texts()[1];
        assert!(
            opened.contains("at samples/smollm3/weather-tool-call.sample:")
                && opened.contains(" (generation 1:1)"),
            "{opened}"
        );
    }

    #[test]
    fn an_unknown_field_is_explained_as_an_error_line() {
        let done = job(
            1,
            JobKind::Explain {
                field: 0,
                name: "nope".into(),
            },
        )
        .run();
        assert_eq!(done.overlay.lines.len(), 1);
        assert!(
            done.overlay.lines[0].text().contains("no field 'nope'"),
            "{:?}",
            done.overlay.lines
        );
    }

    #[test]
    fn the_newest_job_runs_at_once_and_the_others_are_skipped_or_dropped() {
        // Each job says when it starts, then waits for the test to let it finish.
        let (started_tx, started) = mpsc::channel();
        let gate = Arc::new(Gate::default());
        let g = Arc::clone(&gate);
        let (tx, rx) = mpsc::channel();
        let runner = Runner::start_with(
            move |job| {
                started_tx.send(job.seq).unwrap();
                g.wait(job.seq);
                Done {
                    seq: job.seq,
                    overlay: Overlay {
                        title: String::new(),
                        lines: Vec::new(),
                        scroll: 0,
                        field: None,
                        confirm: None,
                    },
                }
            },
            move |d| {
                let _ = tx.send(d.seq);
            },
            |p| panic!("{p}"),
        );
        let wait = Duration::from_secs(30);
        let [j1, j2, j3, j4, j5] = [1, 2, 3, 4, 5].map(|seq| job(seq, JobKind::CheckChunkings));
        // 1 runs; Esc cancels it, and 2 is asked for: 2 starts without waiting for 1.
        runner.submit(j1);
        assert_eq!(started.recv_timeout(wait), Ok(1));
        runner.cancel();
        runner.submit(j2);
        assert_eq!(started.recv_timeout(wait), Ok(2));
        // Two threads are busy: 3 then 4 wait for the second; only 4 is run.
        runner.submit(j3);
        runner.submit(j4);
        gate.release(2);
        assert_eq!(started.recv_timeout(wait), Ok(4));
        gate.release(4);
        assert_eq!(rx.recv_timeout(wait), Ok(4));
        // 1 finishes late: dropped.
        gate.release(1);
        // 5 runs and is cancelled while it runs: dropped.
        runner.submit(j5);
        assert_eq!(started.recv_timeout(wait), Ok(5));
        runner.cancel();
        gate.release(5);
        assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
        assert!(started.try_recv().is_err(), "3 never started");
    }

    #[test]
    fn the_real_thread_sends_the_result() {
        let (tx, rx) = mpsc::channel();
        let runner = Runner::start(
            move |d| {
                let _ = tx.send(d);
            },
            |p| panic!("{p}"),
        );
        runner.submit(job(7, JobKind::CheckChunkings));
        let done = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        assert_eq!(done.seq, 7);
        assert_eq!(done.overlay.title, "chunking check: every chunking agrees");
    }

    #[test]
    fn kinds_have_status_labels() {
        assert_eq!(
            JobKind::Explain {
                field: 1,
                name: "content".into()
            }
            .label(),
            "explaining content"
        );
        assert_eq!(JobKind::CheckChunkings.label(), "checking chunkings");
    }
}
