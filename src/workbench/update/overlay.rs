//! What is drawn over the screen: the help, and the overlays of an explanation (`e`) or a
//! chunking check (`x`).
//!
//! Explanations and checks parse the sample again (the check, 41 times), so they are jobs for
//! the tooling thread ([`crate::workbench::jobs`]): a request gets the next number and becomes
//! [`State::job`]; the spinner shows while it runs; its result is shown only if it answers
//! the request still awaited. A newer request replaces an older one, and Esc cancels (the
//! result is dropped when it arrives, and a job that has not started is not run).

use std::sync::Arc;

use crate::workbench::analysis::Analysis;
use crate::workbench::bless::Proposal;
use crate::workbench::jobs::{Done, Job, JobKind};
use crate::workbench::keys::Action;
use crate::workbench::protocol::OverlayLine;
use crate::workbench::state::{Overlay, Running, State};
use rtbench_tooling::progress::Progress;

use super::Cmd;

/// Shows what blessing would write and waits for Enter (or the reason it cannot).
pub(crate) fn show_proposal(state: &mut State, proposal: Result<Proposal, String>) {
    match proposal {
        Err(e) => state.ui.note = Some(e),
        Ok(p) => {
            let mut lines = crate::workbench::jobs::proposal_lines(&p);
            lines.push(OverlayLine::Heading(String::new()));
            lines.push(OverlayLine::Heading(format!(
                "{} writes the expected section (the rest of the file stays as it is); {} cancels",
                state.ui.keys.hint(Action::Activate),
                state.ui.keys.hint(Action::Back)
            )));
            state.modes.overlay = Some(Overlay {
                title: "bless: the current result becomes the expected one".into(),
                lines,
                scroll: 0,
                field: None,
                confirm: Some(Arc::new(vec![p])),
            });
        }
    }
}

/// `B`: blesses every sample whose result changed, after a confirmation that lists them; the
/// results are made on the tooling lane. Refused while the result on screen is stale.
pub(super) fn bless_all(state: &mut State) {
    if let Some(why) = bless_refusal(state) {
        state.ui.note = Some(why);
        return;
    }
    let Some(a) = state.analysis().cloned() else {
        state.ui.note = Some("nothing to bless yet".into());
        return;
    };
    start_job(state, JobKind::BlessAll, a);
}

/// Why nothing may be blessed now: the template on disk cannot be used, so every result on
/// screen is the last good template's (STALE), not what the files say.
pub(super) fn bless_refusal(state: &State) -> Option<String> {
    let e = state.session.template_error.as_ref()?;
    let at = e
        .position()
        .unwrap_or_else(|| state.session.template_name.clone());
    Some(format!(
        "cannot bless: the template is invalid ({at}), so the result on screen is the last good template's (STALE); fix the template first"
    ))
}

/// `?` (or F1): shows the help from the top.
pub(super) fn open_help(state: &mut State) {
    state.modes.help = true;
    state.ui.scroll.help = 0;
}

/// Keys while the help is shown: scroll it or close it.
pub(super) fn on_help_action(state: &mut State, action: Action) {
    match action {
        Action::Quit | Action::Help | Action::Back => state.modes.help = false,
        Action::Down => state.ui.scroll.help = state.ui.scroll.help.saturating_add(1).min(60),
        Action::Up => state.ui.scroll.help = state.ui.scroll.help.saturating_sub(1),
        Action::PageDown | Action::PlayPause => {
            state.ui.scroll.help = state.ui.scroll.help.saturating_add(10).min(60)
        }
        Action::PageUp => state.ui.scroll.help = state.ui.scroll.help.saturating_sub(10),
        Action::Top => state.ui.scroll.help = 0,
        _ => {}
    }
}

/// Keys while an overlay is shown: scroll it, switch the explained field, or close it (which
/// also cancels the job that would replace it).
pub(super) fn on_overlay_action(state: &mut State, action: Action) -> Cmd {
    if let Some(o) = state.modes.overlay.as_mut()
        && o.confirm.is_some()
    {
        match action {
            Action::Activate => {
                let Some(proposal) = o.confirm.take() else {
                    unreachable!("checked above")
                };
                state.modes.overlay = None;
                return Cmd::WriteBless(proposal);
            }
            Action::Quit | Action::Back | Action::Bless | Action::BlessAll => {
                state.modes.overlay = None;
                state.ui.note = Some("not blessed: nothing written".into());
                return Cmd::None;
            }
            _ => {}
        }
    }
    // ← → count from the field being explained, if one is on its way.
    let field = match state.work.job.as_ref().map(|j| &j.kind) {
        Some(JobKind::Explain { field, .. }) => Some(*field),
        _ => state.modes.overlay.as_ref().and_then(|o| o.field),
    };
    let fields = state.analysis().map_or(0, |a| a.field_names.len());
    let Some(o) = state.modes.overlay.as_mut() else {
        return Cmd::None;
    };
    match action {
        Action::Down => o.scroll = o.scroll.saturating_add(1),
        Action::Up => o.scroll = o.scroll.saturating_sub(1),
        Action::PageDown | Action::PlayPause => o.scroll = o.scroll.saturating_add(10),
        Action::PageUp => o.scroll = o.scroll.saturating_sub(10),
        Action::Top => o.scroll = 0,
        Action::Bottom => o.scroll = u16::MAX,
        Action::Right | Action::Left if fields > 0 => {
            if let Some(f) = field {
                let next = if action == Action::Right {
                    (f + 1) % fields
                } else {
                    (f + fields - 1) % fields
                };
                explain_field(state, Some(next));
            }
        }
        Action::Quit
        | Action::Back
        | Action::Explain
        | Action::CheckChunkings
        | Action::Portability => {
            state.modes.overlay = None;
            cancel_job(state);
        }
        _ => {}
    }
    // Never past the last row (the view cuts there too).
    let max = crate::workbench::view::overlay::max_scroll(state);
    if let Some(o) = state.modes.overlay.as_mut() {
        o.scroll = o.scroll.min(max);
    }
    Cmd::None
}

/// Explains a field of the current sample: `field`, or the selected region's field, or the
/// first field that matched nothing.
pub(super) fn explain_field(state: &mut State, field: Option<usize>) {
    let Some(a) = state.analysis().cloned() else {
        state.ui.note = Some("nothing to explain: no sample parsed yet".into());
        return;
    };
    let field = field
        .or_else(|| {
            state
                .ui
                .region
                .and_then(|r| a.regions.get(r))
                .map(|g| g.field)
        })
        .or_else(|| a.matched_fields.iter().position(|m| !m))
        .unwrap_or(0);
    let Some(name) = a.field_names.get(field).cloned() else {
        return;
    };
    start_job(state, JobKind::Explain { field, name }, a);
}

/// Streams the current sample with many chunkings and shows whether any changes the result.
pub(super) fn check_chunkings(state: &mut State) {
    let Some(a) = state.analysis().cloned() else {
        state.ui.note = Some("nothing to check: no sample parsed yet".into());
        return;
    };
    start_job(state, JobKind::CheckChunkings, a);
}

/// Runs the template's patterns in other runtimes' regex engines on the samples.
pub(super) fn check_portability(state: &mut State) {
    let Some(a) = state.analysis().cloned() else {
        state.ui.note = Some("nothing to check: no sample parsed yet".into());
        return;
    };
    start_job(state, JobKind::Portability, a);
}

/// Requests a job: it replaces any job still running. Without a runner it runs here, now.
fn start_job(state: &mut State, kind: JobKind, analysis: Arc<Analysis>) {
    state.work.jobs_requested += 1;
    let seq = state.work.jobs_requested;
    let progress = Arc::new(Progress::default());
    // The job replaced stops at its next look.
    if let Some(old) = state.work.job.replace(Running {
        seq,
        kind: kind.clone(),
        spin: 0,
        progress: Arc::clone(&progress),
    }) {
        old.progress.cancel();
    }
    let job = Job {
        seq,
        kind,
        analysis,
        inputs: state.session.inputs.clone(),
        progress,
    };
    match &state.work.runner {
        Some(runner) => runner.submit(job),
        None => {
            let done = job.run();
            install(state, done);
        }
    }
}

/// Esc while a job runs: its result will be dropped. False when none was running.
pub(super) fn cancel_job(state: &mut State) -> bool {
    let Some(job) = state.work.job.take() else {
        return false;
    };
    job.progress.cancel();
    if let Some(runner) = &state.work.runner {
        runner.cancel();
    }
    state.ui.note = Some(match job.kind {
        JobKind::Explain { name, .. } => format!("explanation of {name} cancelled"),
        JobKind::CheckChunkings => "chunking check cancelled".into(),
        JobKind::Portability => "portability check cancelled".into(),
        JobKind::BlessAll => "bless of every changed sample cancelled: nothing written".into(),
    });
    true
}

/// A job's result: shown if it answers the request awaited, else dropped (stale or
/// cancelled).
pub(super) fn install(state: &mut State, done: Done) {
    if state.work.job.as_ref().map(|j| j.seq) != Some(done.seq) {
        return;
    }
    state.work.job = None;
    state.modes.overlay = Some(done.overlay);
}

#[cfg(test)]
mod tests {
    use super::super::testing::{loaded, take, with_queue};
    use super::super::{Cmd, on_action, on_job_done};
    use super::*;
    use crate::workbench::state::{Mode, Pane};

    fn proposal() -> Proposal {
        Proposal {
            path: "a.sample".into(),
            read: b"old".to_vec(),
            new: "new".into(),
            changes: vec!["$.content: expected 'a', got 'b'".into()],
        }
    }

    /// A change of several lines (an error with its `Content:`) keeps its line breaks.
    #[test]
    fn a_multi_line_change_is_shown_on_several_lines() {
        let mut p = proposal();
        p.changes = vec![
            "the sample will expect the error: ValueError: json parser could not parse region as JSON.\nContent: '{oops'\nError: Expecting value".into(),
        ];
        let lines: Vec<String> = crate::workbench::jobs::proposal_lines(&p)
            .iter()
            .map(OverlayLine::text)
            .collect();
        assert_eq!(
            lines,
            [
                "a.sample:",
                "  the sample will expect the error: ValueError: json parser could not parse region as JSON.",
                "    Content: '{oops'",
                "    Error: Expecting value",
            ]
        );
    }

    #[test]
    fn a_bless_is_written_only_on_enter() {
        let mut state = loaded(0, (80, 24));
        show_proposal(&mut state, Ok(proposal()));
        let o = state.modes.overlay.as_ref().unwrap();
        assert!(
            o.lines
                .iter()
                .any(|l| l.text().contains("expected 'a', got 'b'"))
        );
        // Scrolling keeps it open; Esc closes it without writing.
        assert_eq!(on_action(&mut state, Action::Down), Cmd::None);
        assert_eq!(on_action(&mut state, Action::Back), Cmd::None);
        assert!(state.modes.overlay.is_none());
        assert_eq!(
            state.ui.note.as_deref(),
            Some("not blessed: nothing written")
        );
        show_proposal(&mut state, Ok(proposal()));
        assert_eq!(
            on_action(&mut state, Action::Activate),
            Cmd::WriteBless(Arc::new(vec![proposal()]))
        );
        assert!(state.modes.overlay.is_none());
        // A refusal is a note, no overlay.
        show_proposal(&mut state, Err("nothing to bless".into()));
        assert!(state.modes.overlay.is_none());
        assert_eq!(state.ui.note.as_deref(), Some("nothing to bless"));
    }

    /// Field number of the region selected on screen.
    fn selected_field(state: &State) -> usize {
        let a = state.analysis().unwrap();
        a.regions.at(state.ui.region.unwrap()).field
    }

    #[test]
    fn explain_sends_a_job_and_shows_its_result_when_it_arrives() {
        let mut state = loaded(1, (80, 24));
        let queue = with_queue(&mut state);
        let field = selected_field(&state);
        let name = state.analysis().unwrap().field_names[field].clone();
        assert_eq!(on_action(&mut state, Action::Explain), Cmd::None);
        // Requested, not yet shown: nothing ran on this thread.
        let jobs = take(&queue);
        assert_eq!(jobs.len(), 1);
        assert_eq!(
            jobs[0].kind,
            JobKind::Explain {
                field,
                name: name.clone()
            }
        );
        assert!(state.modes.overlay.is_none());
        let running = state.work.job.as_ref().expect("a job is running");
        assert_eq!(running.seq, jobs[0].seq);
        // The screen keeps working meanwhile.
        let cursor = state.ui.cursor;
        on_action(&mut state, Action::Right);
        assert_ne!(state.ui.cursor, cursor);
        on_job_done(&mut state, jobs[0].run());
        assert!(state.work.job.is_none());
        let o = state.modes.overlay.as_ref().expect("the explanation");
        assert_eq!(o.field, Some(field));
        assert!(
            o.title.starts_with(&format!("explain {name} (")),
            "{}",
            o.title
        );
    }

    #[test]
    fn a_result_for_an_older_request_is_dropped() {
        let mut state = loaded(0, (80, 24));
        let queue = with_queue(&mut state);
        on_action(&mut state, Action::Explain);
        // A newer request replaces it.
        on_action(&mut state, Action::CheckChunkings);
        let jobs = take(&queue);
        assert_eq!(jobs.len(), 2);
        assert!(jobs[0].seq < jobs[1].seq);
        // The replaced job is told to stop; the newer one is not.
        assert!(jobs[0].progress.is_cancelled());
        assert!(!jobs[1].progress.is_cancelled());
        on_job_done(&mut state, jobs[0].run());
        assert!(
            state.modes.overlay.is_none(),
            "the older explanation is not shown"
        );
        assert_eq!(state.work.job.as_ref().map(|j| j.seq), Some(jobs[1].seq));
        on_job_done(&mut state, jobs[1].run());
        let o = state.modes.overlay.as_ref().unwrap();
        assert_eq!(o.title, "chunking check: every chunking agrees");
        assert!(state.work.job.is_none());
        // Arriving again (or later) changes nothing.
        let shown = o.clone();
        on_job_done(&mut state, jobs[0].run());
        assert_eq!(state.modes.overlay.as_ref(), Some(&shown));
    }

    #[test]
    fn esc_cancels_a_running_job_without_quitting_and_its_result_is_dropped() {
        let mut state = loaded(0, (80, 24));
        let queue = with_queue(&mut state);
        on_action(&mut state, Action::CheckChunkings);
        let jobs = take(&queue);
        assert_eq!(on_action(&mut state, Action::Back), Cmd::None, "not quit");
        assert!(state.work.job.is_none());
        assert_eq!(state.ui.note.as_deref(), Some("chunking check cancelled"));
        // The job stops at its first look instead of streaming every chunking.
        assert!(jobs[0].progress.is_cancelled());
        on_job_done(&mut state, jobs[0].run());
        assert!(state.modes.overlay.is_none());
        assert_eq!(
            jobs[0].progress.counts().0,
            1,
            "only the one-shot parse ran"
        );
        // Nothing runs now: Esc has nothing to go back from, and still does not quit.
        assert_eq!(on_action(&mut state, Action::Back), Cmd::None);
        assert_eq!(state.ui.note.as_deref(), Some("nothing to close: q quits"));
    }

    #[test]
    fn esc_in_the_replay_cancels_the_job_first_then_leaves_the_replay() {
        let mut state = loaded(0, (80, 24));
        let queue = with_queue(&mut state);
        on_action(&mut state, Action::Replay);
        on_action(&mut state, Action::Explain);
        assert_eq!(take(&queue).len(), 1);
        on_action(&mut state, Action::Back);
        assert!(state.work.job.is_none());
        assert_eq!(state.modes.mode, Mode::Replay);
        on_action(&mut state, Action::Back);
        assert_eq!(state.modes.mode, Mode::Inspect);
    }

    #[test]
    fn arrows_over_an_explanation_ask_for_the_next_fields_in_turn() {
        let mut state = loaded(1, (80, 24));
        let queue = with_queue(&mut state);
        let fields = state.analysis().unwrap().field_names.len();
        let first = selected_field(&state);
        on_action(&mut state, Action::Explain);
        let job = take(&queue).remove(0);
        on_job_done(&mut state, job.run());
        // Two → before the first answer: the second counts from the field on its way.
        on_action(&mut state, Action::Right);
        on_action(&mut state, Action::Right);
        let jobs = take(&queue);
        let asked: Vec<_> = jobs
            .iter()
            .map(|j| match &j.kind {
                JobKind::Explain { field, .. } => *field,
                k => panic!("{k:?}"),
            })
            .collect();
        assert_eq!(asked, [(first + 1) % fields, (first + 2) % fields]);
        // The old explanation stays on screen until the newest arrives.
        assert_eq!(state.modes.overlay.as_ref().unwrap().field, Some(first));
        on_job_done(&mut state, jobs[0].run());
        assert_eq!(state.modes.overlay.as_ref().unwrap().field, Some(first));
        on_job_done(&mut state, jobs[1].run());
        assert_eq!(
            state.modes.overlay.as_ref().unwrap().field,
            Some((first + 2) % fields)
        );
        // ← goes back one.
        on_action(&mut state, Action::Left);
        let job = take(&queue).remove(0);
        on_job_done(&mut state, job.run());
        assert_eq!(
            state.modes.overlay.as_ref().unwrap().field,
            Some((first + 1) % fields)
        );
    }

    #[test]
    fn closing_the_overlay_cancels_the_explanation_on_its_way() {
        let mut state = loaded(1, (80, 24));
        let queue = with_queue(&mut state);
        on_action(&mut state, Action::Explain);
        let job = take(&queue).remove(0);
        on_job_done(&mut state, job.run());
        on_action(&mut state, Action::Right);
        let next = take(&queue).remove(0);
        assert_eq!(on_action(&mut state, Action::Back), Cmd::None);
        assert!(state.modes.overlay.is_none() && state.work.job.is_none());
        on_job_done(&mut state, next.run());
        assert!(state.modes.overlay.is_none(), "the late result is dropped");
        assert_eq!(state.modes.mode, Mode::Inspect);
    }

    #[test]
    fn keys_over_an_overlay_scroll_it_and_do_not_reach_the_panes() {
        let mut state = loaded(0, (80, 24));
        on_action(&mut state, Action::CheckChunkings);
        // No runner: the job ran at once.
        assert!(state.work.job.is_none());
        let (cursor, focus) = (state.ui.cursor, state.ui.focus);
        on_action(&mut state, Action::Down);
        on_action(&mut state, Action::PageDown);
        on_action(&mut state, Action::FocusNext);
        // Scrolled, never past the last row.
        let max = crate::workbench::view::overlay::max_scroll(&state);
        assert_eq!(state.modes.overlay.as_ref().unwrap().scroll, 11.min(max));
        on_action(&mut state, Action::Up);
        on_action(&mut state, Action::PageUp);
        assert_eq!(state.modes.overlay.as_ref().unwrap().scroll, 0);
        assert_eq!((state.ui.cursor, state.ui.focus), (cursor, focus));
        assert_eq!(state.ui.focus, Pane::Raw);
        // x again closes it.
        on_action(&mut state, Action::CheckChunkings);
        assert!(state.modes.overlay.is_none());
    }

    #[test]
    fn the_help_opens_scrolls_and_closes() {
        let mut state = loaded(0, (80, 24));
        on_action(&mut state, Action::Help);
        assert!(state.modes.help);
        on_action(&mut state, Action::Down);
        on_action(&mut state, Action::Down);
        on_action(&mut state, Action::Up);
        assert_eq!(state.ui.scroll.help, 1);
        // Other keys do nothing, Esc closes it (and does not quit).
        on_action(&mut state, Action::Explain);
        assert!(state.modes.overlay.is_none() && state.work.job.is_none());
        assert_eq!(on_action(&mut state, Action::Back), Cmd::None);
        assert!(!state.modes.help);
        on_action(&mut state, Action::Help);
        assert_eq!(state.ui.scroll.help, 0, "opens at the top");
    }

    #[test]
    fn nothing_to_explain_or_check_before_the_first_parse() {
        let mut state = State::new(crate::workbench::theme::Theme::dark(), (80, 24));
        let queue = with_queue(&mut state);
        on_action(&mut state, Action::Explain);
        assert_eq!(
            state.ui.note.as_deref(),
            Some("nothing to explain: no sample parsed yet")
        );
        on_action(&mut state, Action::CheckChunkings);
        assert_eq!(
            state.ui.note.as_deref(),
            Some("nothing to check: no sample parsed yet")
        );
        assert!(take(&queue).is_empty() && state.work.job.is_none());
    }
}
