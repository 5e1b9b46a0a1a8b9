//! State changes: key actions, mouse events, worker reports and the clock. Each returns what
//! the run loop must do next (nothing, ask for a new parse, quit); none of them draws, does
//! I/O or runs a parse (explanations and chunking checks are sent to the tooling thread, see
//! [`overlay`]).
//!
//! This module dispatches; the changes themselves are by mode and kind of input:
//! [`motion`] (cursor, scrolls, sample selection), [`panes`] (focus and layout), [`overlay`]
//! (help, explanation and chunking-check overlays, and their jobs), [`replay`] (the stream
//! replay's keys and mouse), [`prompt`] (the status bar prompt) and [`mouse`].

mod fold;
mod goto;
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
use crate::workbench::runtime::BackgroundPanic;
use crate::workbench::state::{Mode, Pane, Prompt, PromptKind, Report, State};
use crate::workbench::view::raw;

pub use mouse::on_mouse;
pub use overlay::show_proposal;
pub use prompt::on_prompt_key;

/// How often the spinner turns while a job runs.
pub const SPINNER_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// A command: what only the run loop may do after an update (it owns the terminal, the files
/// and the lanes), with what it needs to do it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cmd {
    None,
    /// Files or the selected sample changed: parse again.
    Reparse,
    /// The reference version changed: parse everything again (a corpus too).
    ReparseAll,
    /// Open the editor at this place (the run loop suspends the screen for it).
    OpenEditor(Place),
    /// Capture the mouse (true) or release it.
    Mouse(bool),
    /// Read the sample on screen and show what blessing it would write.
    ProposeBless,
    /// Write this confirmed bless.
    WriteBless(Arc<Proposal>),
    /// Stop as a shell job; the run loop gives the terminal back first.
    Suspend,
    Quit,
}

fn screen(state: &State) -> layout::Screen {
    layout::compute(Rect::new(0, 0, state.size.0, state.size.1), state)
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
    state.reference = rtbench_tooling::versions::other(state.reference);
    for e in &mut state.samples {
        e.versions = None;
    }
    state.note = Some(format!(
        "following transformers {}",
        state.reference.release()
    ));
    Cmd::ReparseAll
}

/// Applies a key action.
pub fn on_action(state: &mut State, action: Action) -> Cmd {
    let cmd = apply_action(state, action);
    motion::clamp_scrolls(state);
    cmd
}

fn apply_action(state: &mut State, action: Action) -> Cmd {
    state.note = None;
    if action == Action::Suspend {
        return Cmd::Suspend;
    }
    if state.help {
        overlay::on_help_action(state, action);
        return Cmd::None;
    }
    if state.overlay.is_some() {
        return overlay::on_overlay_action(state, action);
    }
    match action {
        // Esc first cancels a running explanation or check.
        Action::Back if overlay::cancel_job(state) => return Cmd::None,
        Action::Explain => {
            overlay::explain_field(state, None);
            return Cmd::None;
        }
        Action::CheckChunkings => {
            overlay::check_chunkings(state);
            return Cmd::None;
        }
        Action::Portability => {
            overlay::check_portability(state);
            return Cmd::None;
        }
        Action::OpenEditor => return goto::open_editor(state),
        Action::SwitchReference => return switch_reference(state),
        _ => {}
    }
    if state.mode == Mode::Replay {
        return replay::on_replay_action(state, action);
    }
    match action {
        Action::Quit => Cmd::Quit,
        // Esc cancels or goes back, never quits (as in gitui, lazygit, yazi): with nothing to
        // go back from, it says how to quit.
        // In a corpus's open group: back to the list of groups.
        Action::Back
            if state.focus == Pane::Samples
                && state.corpus.as_ref().is_some_and(|c| c.open.is_some()) =>
        {
            if let Some(view) = state.corpus.as_mut() {
                view.selected = view.open.take().unwrap_or(0);
            }
            motion::keep_corpus_row_visible(state);
            Cmd::None
        }
        Action::Back if state.search.is_some() => {
            state.search = None;
            state.note = Some("search cleared".into());
            Cmd::None
        }
        Action::Back => {
            state.note = Some(format!(
                "nothing to close: {} quits",
                state.keys.hint(Action::Quit)
            ));
            Cmd::None
        }
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
            state.note = Some("re-reading files".into());
            Cmd::Reparse
        }
        Action::Bless => {
            if state.analysis().is_some() {
                Cmd::ProposeBless
            } else {
                state.note = Some("nothing to bless yet".into());
                Cmd::None
            }
        }
        Action::Activate => goto::activate(state),
        Action::ToggleMouse => {
            state.mouse = !state.mouse;
            state.note = Some(if state.mouse {
                "mouse captured".into()
            } else {
                format!(
                    "mouse released: the terminal selects text ({} captures)",
                    state.keys.hint(Action::ToggleMouse)
                )
            });
            Cmd::Mouse(state.mouse)
        }
        Action::Fold => {
            fold::toggle(state);
            Cmd::None
        }
        Action::ToggleTokens => {
            let has = state.analysis().is_some_and(|a| !a.tokens.is_empty());
            if has {
                state.tokens_shown = !state.tokens_shown;
                state.note = Some(if state.tokens_shown {
                    "model tokens shaded in turn (the cursor line gives the token's id)".into()
                } else {
                    "model tokens hidden".into()
                });
            } else {
                state.note =
                    Some("no model tokens: the template's folder has no tokenizer.json".into());
            }
            Cmd::None
        }
        Action::Search => {
            state.prompt = Some(Prompt::new(PromptKind::Search { regex: false }));
            Cmd::None
        }
        Action::NextRegion if state.search.is_some() => {
            prompt::jump_to_match(state, true);
            Cmd::None
        }
        Action::SearchPrev => {
            if state.search.is_some() {
                prompt::jump_to_match(state, false);
            } else {
                state.note = Some(format!(
                    "no search: {} searches",
                    state.keys.hint(Action::Search)
                ));
            }
            Cmd::None
        }
        Action::NextSample => motion::select_sample(state, state.selected_sample + 1),
        Action::PrevSample => motion::select_sample(state, state.selected_sample.saturating_sub(1)),
        _ => motion::on_motion(state, action),
    }
}

/// A clock tick of the replay (playback, or a replay being built in the background); true
/// when something changed on screen.
pub fn on_tick(state: &mut State) -> bool {
    state.replay.as_mut().is_some_and(|rs| rs.tick())
}

/// Background work panicked (a bug): the note says so, and what waited for it stops waiting
/// (the parse's busy mark, the job's spinner, the replay being built, the corpus scan's
/// progress); what is on screen stays.
pub fn on_background_panic(state: &mut State, p: BackgroundPanic) {
    match p.lane {
        crate::workbench::worker::LANE if p.seq == state.requested => state.busy = false,
        crate::workbench::jobs::LANE if state.job.as_ref().is_some_and(|j| j.seq == p.seq) => {
            state.job = None;
        }
        crate::workbench::replay::REPLAY_LANE => {
            if let Some(rs) = state.replay.as_mut() {
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
    state.note = Some(p.to_string());
}

/// A clock tick while a job runs: the spinner turns (true: redraw).
pub fn on_spinner_tick(state: &mut State) -> bool {
    match state.job.as_mut() {
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
pub fn on_resize(state: &mut State, width: u16, height: u16) {
    state.size = (width, height);
    motion::cursor_moved(state);
}

/// Takes a worker report: a newer result replaces the shown one; when the files cannot be
/// used, the shown result stays and is marked stale.
/// Groups of the corpus scan arrive: the list fills in (the record shown stays).
pub fn on_corpus_batch(state: &mut State, batch: crate::workbench::corpus::Batch) -> Cmd {
    let Some(view) = state.corpus.as_mut() else {
        return Cmd::None;
    };
    view.add(batch);
    motion::clamp_scrolls(state);
    Cmd::None
}

pub fn on_report(state: &mut State, report: Report) {
    if report.seq < state.requested {
        // An answer to an older request: a newer one is on its way.
        return;
    }
    state.busy = false;
    state.template_name = report.template_name;
    state.model_files = report.model_files;
    state.template_error = report.template_error;
    state.sample_error = report.sample_error;
    // With an unusable template the list follows the files (a deleted sample goes, a new
    // one comes), but the statuses of the last good parse stay (stale).
    if state.template_error.is_none() {
        state.samples = report.samples;
        state.never_matched = report.never_matched;
        state.lint = report.lint;
    } else {
        let mut old = std::mem::take(&mut state.samples);
        state.samples = report
            .samples
            .into_iter()
            .map(|new| match old.iter().position(|o| o.name == new.name) {
                Some(i) => old.swap_remove(i),
                None => new,
            })
            .collect();
    }
    if state.selected_sample >= state.samples.len() {
        state.selected_sample = state.samples.len().saturating_sub(1);
    }
    let Some(shown) = report.shown else {
        // A sample that cannot be read at all: never leave another sample's result on screen.
        let selected = state.samples.get(state.selected_sample).map(|e| &e.name);
        if state.sample_error.is_some()
            && state
                .analysis()
                .is_some_and(|a| Some(&a.sample_name) != selected)
        {
            state.shown = None;
            state.last_good = None;
        }
        return;
    };
    let same_sample = state
        .analysis()
        .is_some_and(|a| a.sample_name == shown.analysis.sample_name);
    if shown.analysis.message.is_some() {
        state.last_good = Some(shown.clone());
    } else if state
        .last_good
        .as_ref()
        .is_some_and(|g| g.analysis.sample_name != shown.analysis.sample_name)
    {
        state.last_good = None;
    }
    let a: Arc<Analysis> = Arc::clone(&shown.analysis);
    state.shown = Some(shown);
    motion::clamp_scrolls(state);
    if !same_sample {
        state.fold = None;
        if let Some((w, h)) = raw_geometry(state) {
            fold::decide(state, &a, w, h);
        }
    }
    if let Some(s) = state.search.as_ref()
        && s.searched != (a.sample_name.clone(), a.document.len())
    {
        // The text changed: search it again (a search that now fails just ends).
        state.search =
            crate::workbench::search::Search::run(&s.query, s.regex, &a.document, &a.sample_name)
                .ok()
                .filter(|s| !s.matches.is_empty());
    }
    if !same_sample {
        // A new sample: start where the generation starts, or at the error.
        state.cursor = a
            .problem
            .as_ref()
            .and_then(|p| p.at)
            .unwrap_or(a.prefix_len.max(a.origin));
        // Show a little of what comes before the cursor.
        state.raw_top = match raw_geometry(state) {
            Some((w, h)) => {
                let back = (h / 3) as isize;
                let top = raw::step_rows(&a, w, raw::position_of(&a, state.cursor, w), -back);
                raw::fill_to_end(&a, w, h, top)
            }
            None => (0, 0),
        };
        state.region = None;
        state.scroll.message = 0;
        state.scroll.region = 0;
        state.scroll.diagnostics = 0;
        motion::remember_col(state, &a);
    } else if state.region.is_some_and(|r| r >= a.regions.len()) {
        state.region = None;
    }
    if !same_sample {
        state.diagnostic = 0;
    }
    motion::cursor_moved(state);
    if let Some(rs) = state.replay.as_mut() {
        // The file or the sample changed: stream the new text with the same chunking.
        rs.rebuild(&a);
    }
    if state.region.is_none() {
        // Select the first explicit region so the region pane shows something useful.
        state.region = a
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
    pub fn loaded(sample: usize, size: (u16, u16)) -> State {
        let mut state = State::new(Theme::dark(), size);
        state.selected_sample = sample;
        let req = request_for(&mut state);
        super::on_report(&mut state, worker::compute(&Inputs::bundled(), &req));
        state
    }

    /// Jobs sent to a test runner, kept for the test to run when it likes.
    pub type Queue = Arc<Mutex<Vec<Job>>>;

    /// `state` with a runner that only collects the jobs sent to it.
    pub fn with_queue(state: &mut State) -> Queue {
        let queue: Queue = Arc::default();
        let q = Arc::clone(&queue);
        state.runner = Some(Runner::new(move |job| q.lock().unwrap().push(job)));
        queue
    }

    /// Takes the jobs sent so far.
    pub fn take(queue: &Queue) -> Vec<Job> {
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
        assert_eq!(state.note.as_deref(), Some("nothing to close: q quits"));
        assert_eq!(on_action(&mut state, Action::Quit), Cmd::Quit);
    }

    #[test]
    fn with_an_invalid_template_the_list_follows_the_files_and_keeps_old_statuses() {
        let mut state = loaded(0, (80, 24));
        let before = state.samples.clone();
        assert!(before.len() >= 2);
        let mut report = Report {
            seq: state.requested,
            template_name: state.template_name.clone(),
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
        let names: Vec<&str> = state.samples.iter().map(|e| e.name.as_str()).collect();
        assert!(
            !names.contains(&before[0].name.as_str()),
            "the deleted sample is gone"
        );
        assert_eq!(
            state.samples[0], before[1],
            "a kept sample keeps its last status"
        );
        assert_eq!(state.samples.last().unwrap().status, Status::Unknown);
    }

    #[test]
    fn reload_asks_for_a_parse_and_says_so() {
        let mut state = loaded(0, (80, 24));
        assert_eq!(on_action(&mut state, Action::Reload), Cmd::Reparse);
        assert_eq!(state.note.as_deref(), Some("re-reading files"));
        // The note lasts until the next key.
        on_action(&mut state, Action::Down);
        assert_eq!(state.note, None);
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
        let running = state.job.as_ref().unwrap();
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
        assert_eq!(state.cursor, a.prefix_len.max(a.origin));
        let r = state.region.expect("a region is selected");
        assert!(!a.regions[r].open.is_empty(), "the first explicit region");
    }

    #[test]
    fn a_resize_keeps_the_cursor_on_screen() {
        let mut state = loaded(0, (120, 40));
        on_action(&mut state, Action::Bottom);
        on_resize(&mut state, 60, 16);
        assert_eq!(state.size, (60, 16));
        let a = Arc::clone(state.analysis().unwrap());
        let (w, h) = raw_geometry(&state).unwrap();
        assert_eq!(
            raw::ensure_visible(&a, w, h, state.raw_top, state.cursor),
            state.raw_top
        );
    }
}
