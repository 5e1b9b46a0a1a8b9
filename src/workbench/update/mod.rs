//! State changes: [`update`] takes each [`Msg`] (key actions, mouse events, lane replies, file
//! changes, signals, the clock) and returns the [`Cmd`] the run loop must carry out (nothing,
//! parse again, open the editor, write a bless, quit); none of them draws, does I/O or runs a
//! parse (explanations and chunking checks are sent to the tooling lane, see `overlay`).
//!
//! This module dispatches; the changes themselves are by mode and kind of input:
//! `motion` (cursor, scrolls, sample selection), `panes` (focus and layout), `overlay`
//! (help, explanation and chunking-check overlays, and their jobs), `replay` (the stream
//! replay's keys and mouse), `prompt` (the status bar prompt) and `mouse`.

mod base;
mod fold;
mod goto;
mod layers;
mod motion;
mod mouse;
mod overlay;
mod panes;
mod prompt;
mod replay;

use std::sync::Arc;

use ratatui::layout::Rect;

use crate::workbench::analysis::Analysis;
use crate::workbench::bless::Proposal;
use crate::workbench::editor::Place;
use crate::workbench::jobs::Done;
use crate::workbench::keys::Action;
use crate::workbench::layout;
use crate::workbench::protocol::Msg;
use crate::workbench::runtime::BackgroundPanic;
use crate::workbench::signals::JobControl;
use crate::workbench::state::{Live, Pane, Report, State};
use crate::workbench::view::raw;
use crate::workbench::watch::WatchEvent;
use crossterm::event::Event;

pub use mouse::on_mouse;
pub(crate) use overlay::show_proposal;
pub use prompt::on_prompt_key;

/// How often the spinner turns while a job runs.
pub(crate) const SPINNER_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// A command: what only the run loop may do after an update (it owns the terminal, the files
/// and the lanes), with what it needs to do it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cmd {
    /// Nothing.
    None,
    /// Files or the selected sample changed: parse again.
    Reparse,
    /// The reference version changed, or the files did: parse everything again (a corpus
    /// too).
    ReparseAll,
    /// Open the editor at this place (the run loop suspends the screen for it).
    OpenEditor(Place),
    /// Capture the mouse (true) or release it.
    Mouse(bool),
    /// Read the sample named (the one on screen when the key was pressed) and show what
    /// blessing it would write.
    ProposeBless(String),
    /// Write these confirmed blesses.
    WriteBless(Arc<Vec<Proposal>>),
    /// Stop as a shell job; the run loop gives the terminal back first.
    Suspend,
    /// Set the terminal up again after something else stopped the workbench (`SIGSTOP`, then
    /// `SIGCONT`): the shell may have reset its modes.
    TakeBack,
    /// Leave the workbench (the terminal is restored).
    Quit,
}

/// Takes one message: changes the state and says what only the run loop may do next (each
/// message leads to at most one command).
pub fn update(state: &mut State, msg: Msg) -> Cmd {
    match msg {
        Msg::Input(Event::Key(k)) => on_key(state, k),
        Msg::Input(Event::Mouse(m)) => on_mouse(state, m),
        Msg::Input(Event::Resize(w, h)) => {
            on_resize(state, w, h);
            Cmd::None
        }
        Msg::Input(_) => Cmd::None,
        Msg::Report(r) => {
            on_report(state, *r);
            pending_bless(state)
        }
        Msg::Job(d) => {
            on_job_done(state, *d);
            Cmd::None
        }
        Msg::Panicked(p) => {
            on_background_panic(state, p);
            Cmd::None
        }
        Msg::Corpus(batch) => on_corpus_batch(state, batch),
        Msg::Replay(b) => {
            if let Some(rs) = state.modes.replay.as_mut() {
                rs.built(b);
            }
            Cmd::None
        }
        Msg::JobControl(JobControl::Suspend) => Cmd::Suspend,
        Msg::JobControl(JobControl::Continued) => Cmd::TakeBack,
        Msg::Watch(w) => on_watch(state, w),
    }
}

/// A bless asked for before its sample's result was on screen: proposed once it is (refused
/// if the template broke meanwhile); dropped when the selection moved on.
fn pending_bless(state: &mut State) -> Cmd {
    let Some(name) = state.work.pending_bless.clone() else {
        return Cmd::None;
    };
    let selected = state
        .session
        .samples
        .get(state.ui.selected_sample)
        .map(|e| &e.name);
    if selected != Some(&name) {
        state.work.pending_bless = None;
        return Cmd::None;
    }
    if state.analysis().is_none_or(|a| a.sample_name != name) {
        // Still another sample's result: wait for the next report.
        return Cmd::None;
    }
    state.work.pending_bless = None;
    if let Some(why) = overlay::bless_refusal(state) {
        state.ui.note = Some(why);
        return Cmd::None;
    }
    Cmd::ProposeBless(name)
}

/// What the file watcher says: a change parses everything again (a corpus is scanned again
/// too); the live mark follows whether watching works.
fn on_watch(state: &mut State, event: WatchEvent) -> Cmd {
    match event {
        WatchEvent::Changed => return Cmd::ReparseAll,
        WatchEvent::Failed(e) => state.session.live = Live::Off(format!("watching failed: {e}")),
        WatchEvent::Lost(what) => state.session.live = Live::Off(what),
        WatchEvent::Restored(what) => {
            state.session.live = Live::On;
            state.ui.note = Some(what);
        }
    }
    Cmd::None
}

fn screen(state: &State) -> layout::Screen {
    layout::compute(Rect::new(0, 0, state.ui.size.0, state.ui.size.1), state)
}

/// Width and height of the raw pane's text area.
fn raw_geometry(state: &State) -> Option<(usize, usize)> {
    let r = screen(state).rect(Pane::Raw)?;
    let t = raw::text_area(r, raw::shows_fold(state));
    Some((usize::from(t.width).max(2), usize::from(t.height).max(1)))
}

/// Follows the other reference version: everything is parsed again under it, keeping the
/// sample, cursor, selection and scrolls (the new report is for the same sample). The marks of
/// the old comparison go until the new one comes.
fn switch_reference(state: &mut State) -> Cmd {
    state.session.reference = rtbench_tooling::versions::other(state.session.reference);
    for e in &mut state.session.samples {
        e.versions = None;
    }
    state.ui.note = Some(format!(
        "following transformers {}",
        state.session.reference.release()
    ));
    Cmd::ReparseAll
}

/// Applies a key action: it goes down the layer stack until a layer takes it (see
/// `layers`).
pub fn on_action(state: &mut State, action: Action) -> Cmd {
    state.ui.note = None;
    let cmd = layers::dispatch(state, action);
    motion::clamp_scrolls(state);
    cmd
}

/// A key: the prompt, while one is open, takes keys as typed; otherwise the key map turns the
/// key into an action for the layer stack.
pub(crate) fn on_key(state: &mut State, key: crossterm::event::KeyEvent) -> Cmd {
    if state.modes.prompt.is_some() {
        return on_prompt_key(state, key);
    }
    state
        .ui
        .keys
        .action(key)
        .map_or(Cmd::None, |a| on_action(state, a))
}

/// A clock tick of the replay (playback, or a replay being built in the background); true
/// when something changed on screen.
pub fn on_tick(state: &mut State) -> bool {
    state.modes.replay.as_mut().is_some_and(|rs| rs.tick())
}

/// Background work panicked (a bug): the note says so, and what waited for it stops waiting
/// (the parse's busy mark, the job's spinner, the replay being built, the corpus scan's
/// progress); what is on screen stays.
pub(crate) fn on_background_panic(state: &mut State, p: BackgroundPanic) {
    match p.lane {
        crate::workbench::worker::LANE if p.seq == state.session.requested => {
            state.session.busy = false
        }
        crate::workbench::jobs::LANE if state.work.job.as_ref().is_some_and(|j| j.seq == p.seq) => {
            state.work.job = None;
        }
        crate::workbench::replay::REPLAY_LANE => {
            if let Some(rs) = state.modes.replay.as_mut() {
                rs.build_failed(p.seq);
            }
        }
        crate::workbench::corpus::LANE => {
            on_corpus_batch(
                state,
                crate::workbench::corpus::Batch {
                    scan: p.seq,
                    records: Vec::new(),
                    read: 0,
                    done: true,
                    error: Some(p.to_string()),
                },
            );
        }
        _ => {}
    }
    state.ui.note = Some(p.to_string());
}

/// A clock tick while a job runs: the spinner turns (true: redraw).
pub fn on_spinner_tick(state: &mut State) -> bool {
    match state.work.job.as_mut() {
        Some(j) => {
            j.spin = j.spin.wrapping_add(1);
            true
        }
        None => false,
    }
}

/// Takes a job's result: shown when it answers the request still awaited; dropped when a
/// newer request replaced it or Esc cancelled it.
pub fn on_job_done(state: &mut State, done: Done) {
    overlay::install(state, done);
}

/// The terminal was resized.
pub(crate) fn on_resize(state: &mut State, width: u16, height: u16) {
    state.ui.size = (width, height);
    motion::cursor_moved(state);
}

/// Groups of the corpus scan arrive: the list fills in (the record shown stays).
pub(crate) fn on_corpus_batch(state: &mut State, batch: crate::workbench::corpus::Batch) -> Cmd {
    let Some(view) = state.session.corpus.as_mut() else {
        return Cmd::None;
    };
    view.add(batch);
    motion::clamp_scrolls(state);
    Cmd::None
}

/// Takes a worker report: a newer result replaces the shown one; when the files cannot be
/// used, the shown result stays and is marked stale.
pub fn on_report(state: &mut State, report: Report) {
    if report.seq < state.session.requested {
        // An answer to an older request: a newer one is on its way.
        return;
    }
    state.session.busy = false;
    state.session.template_name = report.template_name;
    state.session.model_files = report.model_files;
    state.session.template_error = report.template_error;
    state.session.sample_error = report.sample_error;
    // With an unusable template the list follows the files (a deleted sample goes, a new
    // one comes), but the statuses of the last good parse stay (stale).
    if state.session.template_error.is_none() {
        state.session.samples = report.samples;
        state.session.never_matched = report.never_matched;
        state.session.lint = report.lint;
    } else {
        let mut old = std::mem::take(&mut state.session.samples);
        state.session.samples = report
            .samples
            .into_iter()
            .map(|new| match old.iter().position(|o| o.name == new.name) {
                Some(i) => old.swap_remove(i),
                None => new,
            })
            .collect();
    }
    if state.ui.selected_sample >= state.session.samples.len() {
        state.ui.selected_sample = state.session.samples.len().saturating_sub(1);
    }
    let Some(shown) = report.shown else {
        // Nothing to show for the selected sample (it cannot be read, or no template ever
        // loaded): never leave another sample's result on screen.
        let selected = state
            .session
            .samples
            .get(state.ui.selected_sample)
            .map(|e| &e.name);
        if (state.session.sample_error.is_some() || state.session.template_error.is_some())
            && state
                .analysis()
                .is_some_and(|a| Some(&a.sample_name) != selected)
        {
            state.session.shown = None;
            state.session.last_good = None;
        }
        return;
    };
    let same_sample = state
        .analysis()
        .is_some_and(|a| a.sample_name == shown.analysis.sample_name);
    if shown.analysis.message.is_some() {
        state.session.last_good = Some(shown.clone());
    } else if state
        .session
        .last_good
        .as_ref()
        .is_some_and(|g| g.analysis.sample_name != shown.analysis.sample_name)
    {
        state.session.last_good = None;
    }
    let a: Arc<Analysis> = Arc::clone(&shown.analysis);
    state.session.shown = Some(shown);
    motion::clamp_scrolls(state);
    if !same_sample {
        state.ui.fold = None;
        if let Some((w, h)) = raw_geometry(state) {
            fold::decide(state, &a, w, h);
        }
    }
    if let Some(s) = state.ui.search.as_ref()
        && s.searched != (a.sample_name.clone(), a.document.len())
    {
        // The text changed: search it again (a search that now fails just ends).
        state.ui.search =
            crate::workbench::search::Search::run(&s.query, s.regex, &a.document, &a.sample_name)
                .ok()
                .filter(|s| !s.matches.is_empty());
    }
    if !same_sample {
        // A new sample: start where the generation starts, or at the error.
        state.ui.cursor = a
            .problem
            .as_ref()
            .and_then(|p| p.at)
            .unwrap_or(a.prefix_len.max(a.origin));
        // Show a little of what comes before the cursor.
        state.ui.raw_top = match raw_geometry(state) {
            Some((w, h)) => {
                let back = (h / 3) as isize;
                let top = raw::step_rows(&a, w, raw::position_of(&a, state.ui.cursor, w), -back);
                raw::fill_to_end(&a, w, h, top)
            }
            None => (0, 0),
        };
        state.ui.region = None;
        state.ui.scroll[Pane::Message] = 0;
        state.ui.scroll[Pane::Region] = 0;
        state.ui.scroll[Pane::Diagnostics] = 0;
        motion::remember_col(state, &a);
    } else if state.ui.region.is_some_and(|r| r >= a.regions.len()) {
        state.ui.region = None;
    }
    if !same_sample {
        state.ui.diagnostic = 0;
    }
    motion::cursor_moved(state);
    if let Some(rs) = state.modes.replay.as_mut() {
        // The file or the sample changed: stream the new text with the same chunking.
        rs.rebuild(&a);
    }
    if state.ui.region.is_none() {
        // Select the first explicit region so the region pane shows something useful.
        state.ui.region = a
            .regions
            .iter()
            .position(|g| !g.open.is_empty())
            .or(if a.regions.is_empty() { None } else { Some(0) });
    }
}

/// Building states for the tests of the update modules.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::{Arc, Mutex};

    use crate::workbench::inputs::Inputs;
    use crate::workbench::jobs::{Job, Runner};
    use crate::workbench::state::State;
    use crate::workbench::theme::Theme;
    use crate::workbench::{request_for, worker};

    /// A state that has received the worker's answer for the bundled sample number `sample`
    /// (0: the weather tool call, 1: think then answer, 2: a truncated tool call).
    pub(crate) fn loaded(sample: usize, size: (u16, u16)) -> State {
        let mut state = State::new(Theme::dark(), size);
        state.ui.selected_sample = sample;
        let req = request_for(&mut state);
        super::on_report(&mut state, worker::compute(&Inputs::bundled(), &req));
        state
    }

    /// Jobs sent to a test runner, kept for the test to run when it likes.
    pub(crate) type Queue = Arc<Mutex<Vec<Job>>>;

    /// `state` with a runner that only collects the jobs sent to it.
    pub(crate) fn with_queue(state: &mut State) -> Queue {
        let queue: Queue = Arc::default();
        let q = Arc::clone(&queue);
        state.work.runner = Some(Runner::new(move |job| q.lock().unwrap().push(job)));
        queue
    }

    /// Takes the jobs sent so far.
    pub(crate) fn take(queue: &Queue) -> Vec<Job> {
        std::mem::take(&mut *queue.lock().unwrap())
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use crate::workbench::analysis::Status;
    use crate::workbench::state::SampleEntry;

    #[test]
    fn esc_never_quits_and_q_quits_always() {
        let mut state = loaded(0, (80, 24));
        assert_eq!(on_action(&mut state, Action::Back), Cmd::None);
        assert_eq!(state.ui.note.as_deref(), Some("nothing to close: q quits"));
        assert_eq!(on_action(&mut state, Action::Quit), Cmd::Quit);
    }

    #[test]
    fn with_an_invalid_template_the_list_follows_the_files_and_keeps_old_statuses() {
        let mut state = loaded(0, (80, 24));
        let before = state.session.samples.clone();
        assert!(before.len() >= 2);
        let mut report = Report {
            seq: state.session.requested,
            template_name: state.session.template_name.clone(),
            template_error: Some(Box::new(rtbench_engine::diagnostic::Diagnostic::error(
                "broken",
            ))),
            samples: before[1..]
                .iter()
                .map(|e| SampleEntry::new(e.name.clone(), Status::Unknown))
                .collect(),
            sample_error: None,
            shown: None,
            never_matched: Vec::new(),
            lint: Vec::new(),
            model_files: Vec::new(),
            took: std::time::Duration::ZERO,
        };
        report
            .samples
            .push(SampleEntry::new("new.sample".into(), Status::Unknown));
        on_report(&mut state, report);
        let names: Vec<&str> = state
            .session
            .samples
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert!(
            !names.contains(&before[0].name.as_str()),
            "the deleted sample is gone"
        );
        assert_eq!(
            state.session.samples[0], before[1],
            "a kept sample keeps its last status"
        );
        assert_eq!(
            state.session.samples.last().unwrap().status,
            Status::Unknown
        );
    }

    #[test]
    fn reload_asks_for_a_parse_and_says_so() {
        let mut state = loaded(0, (80, 24));
        assert_eq!(on_action(&mut state, Action::Reload), Cmd::Reparse);
        assert_eq!(state.ui.note.as_deref(), Some("re-reading files"));
        // The note lasts until the next key.
        on_action(&mut state, Action::Down);
        assert_eq!(state.ui.note, None);
    }

    #[test]
    fn the_spinner_turns_only_while_a_job_runs() {
        let mut state = loaded(0, (80, 24));
        assert!(!on_spinner_tick(&mut state));
        let queue = with_queue(&mut state);
        on_action(&mut state, Action::CheckChunkings);
        let jobs = take(&queue);
        assert_eq!(jobs.len(), 1);
        assert!(on_spinner_tick(&mut state));
        assert!(on_spinner_tick(&mut state));
        let running = state.work.job.as_ref().unwrap();
        assert_eq!(running.spin, 2);
        // The status says how far the job's own count has got.
        let status = crate::workbench::view::status::running;
        assert_eq!(status(running), "⠹ checking chunkings…");
        jobs[0].progress.set_total(8);
        jobs[0].progress.set_done(2);
        assert_eq!(status(running), "⠹ checking chunkings 25%…");
        // No replay: the replay's clock changes nothing.
        assert!(!on_tick(&mut state));
    }

    #[test]
    fn a_new_sample_puts_the_cursor_at_the_generation_and_selects_a_region() {
        let state = loaded(1, (80, 24));
        let a = state.analysis().unwrap();
        assert_eq!(a.sample_name, "samples/smollm3/think-then-answer.sample");
        assert_eq!(state.ui.cursor, a.prefix_len.max(a.origin));
        let r = state.ui.region.expect("a region is selected");
        assert!(
            !a.regions.at(r).open.is_empty(),
            "the first explicit region"
        );
    }

    #[test]
    fn a_resize_keeps_the_cursor_on_screen() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::Bottom);
        on_resize(&mut state, 60, 16);
        assert_eq!(state.ui.size, (60, 16));
        let a = Arc::clone(state.analysis().unwrap());
        let (w, h) = raw_geometry(&state).unwrap();
        assert_eq!(
            raw::ensure_visible(&a, w, h, state.ui.raw_top, state.ui.cursor),
            state.ui.raw_top
        );
    }
}
