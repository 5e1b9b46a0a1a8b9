//! The run loop's hands: the handles that carry out [`Cmd`]s (the parse and corpus lanes, the
//! file watcher, the terminal-reading thread and its gate, the editor command), started
//! together by [`Executor::start`]. Nothing here decides anything: `update` did.

use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::Duration;

use crossterm::event;

use crate::failure::Failure;
use crate::workbench::inputs::Inputs;
use crate::workbench::protocol::Msg;
use crate::workbench::state::{Live, State};
use crate::workbench::update::{self, Cmd};
use crate::workbench::worker::Worker;
use crate::workbench::{
    analysis, bless, config, corpus, editor, jobs, replay, signals, state, terminal, view, watch,
};

/// What the run loop does after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// Parse again once every waiting message is handled.
    Reparse,
    /// End the workbench now.
    Quit,
}

/// The handles commands act on.
pub(crate) struct Executor {
    worker: Worker,
    scanner: corpus::Scanner,
    scans: u64,
    /// Kept alive until the end (dropping it stops watching).
    watcher: Option<watch::Watcher>,
    gate: terminal::InputGate,
    config: config::Config,
}

/// A sender of `Msg`s for a lane's callback.
fn to_ui(tx: &Sender<Msg>) -> impl Fn(Msg) + Send + Sync + 'static {
    let tx = tx.clone();
    move |m| {
        let _ = tx.send(m);
    }
}

impl Executor {
    /// Starts the runtime's lanes, the watcher, the job-control forwarding and the input
    /// thread, all sending to `tx`, and sets `state` up for the inputs; then asks for the
    /// first parse.
    pub(crate) fn start(
        inputs: Arc<Inputs>,
        config: config::Config,
        tx: &Sender<Msg>,
        state: &mut State,
    ) -> Result<Executor, Failure> {
        let (send, panicked) = (to_ui(tx), to_ui(tx));
        let worker = Worker::start(
            Arc::clone(&inputs),
            move |r| send(Msg::Report(Box::new(r))),
            move |p| panicked(Msg::Panicked(p)),
        );
        let (send, panicked) = (to_ui(tx), to_ui(tx));
        state.work.runner = Some(jobs::Runner::start(
            move |d| send(Msg::Job(Box::new(d))),
            move |p| panicked(Msg::Panicked(p)),
        ));
        let (send, panicked) = (to_ui(tx), to_ui(tx));
        state.work.replays = Some(replay::lane(
            move |b| send(Msg::Replay(b)),
            move |p| panicked(Msg::Panicked(p)),
        ));
        let (send, panicked) = (to_ui(tx), to_ui(tx));
        let scanner = corpus::Scanner::new(
            Arc::clone(&inputs),
            move |b| send(Msg::Corpus(b)),
            move |p| panicked(Msg::Panicked(p)),
        );
        state.session.inputs = Some(Arc::clone(&inputs));
        state.ui.keys = config.keys.clone();
        state.ui.replay_max_steps = config.replay_max_steps;
        // What is known before the first parse arrives.
        state.session.template_name = inputs.template.name();
        state.session.samples = inputs
            .sample_sources()
            .iter()
            .map(|s| state::SampleEntry::new(s.name(), analysis::Status::Unknown))
            .collect();
        let mut exec = Executor {
            worker,
            scanner,
            scans: 0,
            watcher: watch_files(&inputs, tx, state),
            gate: terminal::InputGate::default(),
            config,
        };
        if !inputs.corpora.is_empty() {
            state.open_corpus(inputs.corpora.clone());
            exec.rescan(state);
        }
        let signal_tx = tx.clone();
        if let Err(e) =
            signals::forward_job_control(move |j| signal_tx.send(Msg::JobControl(j)).is_ok())
        {
            state.ui.note = Some(format!("job control signals unavailable: {e}"));
        }
        read_input(tx, exec.gate.clone())?;
        exec.worker
            .request(crate::workbench::worker::request_for(state));
        Ok(exec)
    }

    /// Carries out `cmd`.
    pub(crate) fn execute(
        &mut self,
        cmd: Cmd,
        guard: &mut terminal::Guard,
        state: &mut State,
    ) -> Flow {
        match cmd {
            Cmd::None => {}
            Cmd::Quit => return Flow::Quit,
            Cmd::Reparse => return Flow::Reparse,
            Cmd::ReparseAll => {
                self.rescan(state);
                return Flow::Reparse;
            }
            Cmd::OpenEditor(place) => {
                state.ui.note = Some(self.open_editor(guard, state.ui.mouse, &place));
                // The watcher sees a save; a re-read also covers an editor that wrote nothing
                // the watcher reports (or no watcher at all).
                return Flow::Reparse;
            }
            Cmd::ProposeBless(name) => match state.analysis().cloned() {
                // Only the sample the key was pressed for.
                Some(a) if a.sample_name == name => {
                    update::show_proposal(state, bless::propose(&a));
                }
                _ => state.ui.note = Some(format!("not blessed: {name} is no longer on screen")),
            },
            Cmd::WriteBless(p) => {
                state.ui.note = Some(bless::write_all(&p));
                return Flow::Reparse;
            }
            Cmd::Suspend => {
                self.gate.pause();
                let back = guard.suspended(state.ui.mouse, signals::stop_self);
                self.gate.resume();
                if let Err(e) = back {
                    state.ui.note = Some(format!("cannot take the terminal back: {e}"));
                }
            }
            Cmd::TakeBack => {
                if let Err(e) = guard.take_back(state.ui.mouse) {
                    state.ui.note = Some(format!("cannot take the terminal back: {e}"));
                }
            }
            Cmd::Mouse(on) => {
                if let Err(e) = terminal::capture_mouse(on) {
                    state.ui.note = Some(format!("cannot change mouse capture: {e}"));
                }
            }
        }
        Flow::Continue
    }

    /// Asks for a new parse of the state's selection; first looks again at what is watched
    /// (a folder may have been replaced).
    pub(crate) fn reparse(&self, state: &mut State) {
        if let Some(w) = &self.watcher {
            w.recheck();
        }
        self.worker
            .request(crate::workbench::worker::request_for(state));
    }

    /// Scans the corpus again (under the reference version in force), if one is open.
    fn rescan(&mut self, state: &mut State) {
        let Some(view) = state.session.corpus.as_mut() else {
            return;
        };
        self.scans += 1;
        view.restart(self.scans);
        self.scanner.scan(self.scans, state.session.reference);
    }

    /// Opens the editor at `place` with the screen suspended; returns the note to show.
    fn open_editor(
        &self,
        guard: &mut terminal::Guard,
        mouse: bool,
        place: &editor::Place,
    ) -> String {
        let at = match editor::resolve(place) {
            Ok(at) => at,
            Err(e) => return e,
        };
        let words = editor::command(
            self.config.editor.as_deref(),
            &editor::fallback_from_env(),
            &at,
        );
        self.gate.pause();
        let ran = guard.suspended(mouse, || editor::run(&words));
        self.gate.resume();
        let file = at.file.display().to_string();
        let name = view::raw::short_name(&file);
        let where_ = format!("{name}:{}:{}", at.line, at.column);
        match ran {
            Ok(Ok(())) => format!("edited {where_}"),
            Ok(Err(e)) => e,
            Err(e) => format!("cannot take the terminal back: {e}"),
        }
    }
}

/// Live refresh: watches the inputs (not the bundled sample); the state's live mark says why
/// when there is none.
fn watch_files(inputs: &Inputs, tx: &Sender<Msg>, state: &mut State) -> Option<watch::Watcher> {
    if inputs.is_bundled() {
        state.session.live = Live::Off("bundled sample".into());
        return None;
    }
    let send = to_ui(tx);
    let paths: Vec<_> = inputs.watched_paths();
    match watch::start(&paths, move |e| send(Msg::Watch(e))) {
        Ok(w) => Some(w),
        Err(e) => {
            state.session.live = Live::Off(e);
            None
        }
    }
}

/// Terminal input on its own thread, so the loop can block on one channel. It polls in short
/// steps so that it can stop reading while the editor runs (the gate).
fn read_input(tx: &Sender<Msg>, gate: terminal::InputGate) -> Result<(), Failure> {
    let tx = tx.clone();
    std::thread::Builder::new()
        .name(terminal::INPUT_THREAD.into())
        .spawn(move || {
            loop {
                gate.wait_open();
                match event::poll(Duration::from_millis(50)) {
                    Ok(false) => continue,
                    Ok(true) => {}
                    Err(_) => break,
                }
                let Ok(ev) = event::read() else { break };
                if tx.send(Msg::Input(ev)).is_err() {
                    break;
                }
            }
        })
        .map(|_| ())
        .map_err(|e| Failure::usage(e.to_string()))
}
