//! The workbench: a full-screen terminal app that shows how a response template parses its
//! samples, live as the files change.
//!
//! State -> update -> view: [`state`] holds everything drawn, [`update`] changes it on keys,
//! mouse and worker reports, [`view`] draws it (a pure function, so screens can be tested).
//! Background work runs on the lanes of one [`runtime`] (newest request wins, a panic is a
//! message): parsing in [`worker`], explanations and chunking checks in [`jobs`], long replays
//! in [`replay`], corpus scans in [`corpus`]; [`watch`] reports file changes. The UI thread
//! never parses.
//! The engine knows nothing of this module.

pub mod analysis;
pub mod bless;
pub mod config;
pub mod corpus;
pub mod editor;
pub mod highlight;
pub mod inputs;
pub mod jobs;
pub mod keys;
pub mod layout;
pub mod replay;
pub mod runtime;
pub mod search;
pub mod signals;
pub mod state;
pub mod terminal;
pub mod theme;
pub mod update;
pub mod view;
pub mod watch;
pub mod worker;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use crossterm::event::{self, Event};

use crate::failure::Failure;
use crate::workbench::inputs::Inputs;
use crate::workbench::state::{Live, State};
use crate::workbench::theme::Theme;
use crate::workbench::update::Cmd;
use crate::workbench::watch::WatchEvent;
use crate::workbench::worker::{Request, Worker};
use rtbench_engine::value::Value;

/// Options of the workbench from the command line.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `TEMPLATE [SAMPLE...]`; empty for the bundled sample.
    pub paths: Vec<PathBuf>,
    /// `--theme NAME|PATH`.
    pub theme: Option<String>,
    /// `--config FILE` (default: see [`config::default_path`]).
    pub config: Option<PathBuf>,
    /// The reference version to start under (resolved by the command line from `--reference`,
    /// `RTBENCH_REFERENCE` and the config file; a key switches it).
    pub reference: rtbench_engine::Reference,
}

/// Everything the run loop hears about.
enum Msg {
    Input(Event),
    Report(Box<state::Report>),
    /// An explanation or a chunking check is done.
    Job(Box<jobs::Done>),
    Watch(WatchEvent),
    /// Groups of a corpus being scanned.
    Corpus(corpus::Batch),
    /// `SIGTSTP` or `SIGCONT`.
    JobControl(signals::JobControl),
    /// Background work panicked (a bug): shown, and the workbench goes on.
    Panicked(runtime::BackgroundPanic),
}

/// The theme asked for, without colours when `NO_COLOR` is set.
pub fn theme(options: &Options) -> Result<Theme, String> {
    let theme = Theme::load(options.theme.as_deref().unwrap_or("dark"))?;
    Ok(if Theme::no_color_requested() {
        theme.without_color()
    } else {
        theme
    })
}

/// A request for the state's current selection.
pub fn request_for(state: &mut State) -> Request {
    state.requested += 1;
    state.busy = true;
    Request {
        seq: state.requested,
        selected_name: state
            .samples
            .get(state.selected_sample)
            .map(|s| s.name.clone()),
        selected_index: state.selected_sample,
        record: state
            .corpus
            .as_ref()
            .and_then(corpus::CorpusView::selected_record),
        syntect_theme: state.theme.syntect_theme.clone(),
        no_color: state.theme.no_color,
        reference: state.reference,
    }
}

/// Runs the workbench (or, when stdout is not a terminal, prints each sample's message).
pub fn run(options: &Options) -> Result<(), Failure> {
    let inputs = Inputs::from_args(&options.paths).map_err(Failure::usage)?;
    let theme = theme(options).map_err(Failure::usage)?;
    let config = match options.config.clone().or_else(config::default_path) {
        Some(p) => config::load(&p).map_err(Failure::usage)?,
        None => config::Config::default(),
    };
    if !std::io::stdout().is_terminal() {
        return print_headless(&inputs, options.reference);
    }
    let inputs = Arc::new(inputs);
    let (tx, rx) = mpsc::channel::<Msg>();

    // The background runtime: one lane each for the parse, tooling jobs, replay builds and
    // corpus scans; each replies with a message, and a panic on any of them is a message too.
    let to_ui = |tx: &mpsc::Sender<Msg>| {
        let tx = tx.clone();
        move |m: Msg| {
            let _ = tx.send(m);
        }
    };
    let (send, panicked) = (to_ui(&tx), to_ui(&tx));
    let worker = Worker::start(
        Arc::clone(&inputs),
        move |r| send(Msg::Report(Box::new(r))),
        move |p| panicked(Msg::Panicked(p)),
    );
    let (send, panicked) = (to_ui(&tx), to_ui(&tx));
    let runner = jobs::Runner::start(
        move |d| send(Msg::Job(Box::new(d))),
        move |p| panicked(Msg::Panicked(p)),
    );

    let mut guard = terminal::Guard::enter()
        .map_err(|e| Failure::usage(format!("cannot set up the terminal: {e}")))?;
    let size = guard
        .terminal
        .size()
        .map_err(|e| Failure::usage(e.to_string()))?;
    let mut state = State::new(theme, (size.width, size.height));
    state.reference = options.reference;
    state.runner = Some(runner);
    let panicked = to_ui(&tx);
    state.replays = replay::lane(move |p| panicked(Msg::Panicked(p)));
    state.inputs = Some(Arc::clone(&inputs));
    // A corpus: its groups are scanned on the corpus lane, again after each change.
    let (send, panicked) = (to_ui(&tx), to_ui(&tx));
    let scanner = corpus::Scanner::new(
        Arc::clone(&inputs),
        move |b| send(Msg::Corpus(b)),
        move |p| panicked(Msg::Panicked(p)),
    );
    let mut scans = 0;
    let mut rescan = |state: &mut State| {
        let Some(view) = state.corpus.as_mut() else {
            return;
        };
        scans += 1;
        view.restart(scans);
        scanner.scan(scans, state.reference);
    };
    if !inputs.corpora.is_empty() {
        state.open_corpus(inputs.corpora.clone());
        rescan(&mut state);
    }
    state.keys = config.keys.clone();
    state.replay_max_steps = config.replay_max_steps;
    // What is known before the first parse arrives.
    state.template_name = inputs.template.name();
    state.samples = inputs
        .sample_sources()
        .iter()
        .map(|s| state::SampleEntry::new(s.name(), analysis::Status::Unknown))
        .collect();

    // Live refresh (kept alive until the end).
    let watcher = if inputs.is_bundled() {
        state.live = Live::Off("bundled sample".into());
        None
    } else {
        let watch_tx = tx.clone();
        match watch::start(&inputs.watched_paths(), move |e| {
            let _ = watch_tx.send(Msg::Watch(e));
        }) {
            Ok(w) => Some(w),
            Err(e) => {
                state.live = Live::Off(e);
                None
            }
        }
    };

    // Job control from outside (`kill -TSTP`, the shell's `fg`).
    let signal_tx = tx.clone();
    if let Err(e) =
        signals::forward_job_control(move |j| signal_tx.send(Msg::JobControl(j)).is_ok())
    {
        state.note = Some(format!("job control signals unavailable: {e}"));
    }

    // Terminal input on its own thread, so the loop can block on one channel. It polls in
    // short steps so that it can stop reading while the editor runs.
    let input_tx = tx.clone();
    let gate = terminal::InputGate::default();
    let input_gate = gate.clone();
    std::thread::Builder::new()
        .name(terminal::INPUT_THREAD.into())
        .spawn(move || {
            loop {
                input_gate.wait_open();
                match event::poll(Duration::from_millis(50)) {
                    Ok(false) => continue,
                    Ok(true) => {}
                    Err(_) => break,
                }
                let Ok(ev) = event::read() else { break };
                if input_tx.send(Msg::Input(ev)).is_err() {
                    break;
                }
            }
        })
        .map_err(|e| Failure::usage(e.to_string()))?;

    worker.request(request_for(&mut state));
    let draw = |guard: &mut terminal::Guard, state: &State| {
        guard
            .terminal
            .draw(|f| view::draw(f, state))
            .map(|_| ())
            .map_err(|e| Failure::usage(format!("cannot draw: {e}")))
    };
    draw(&mut guard, &state)?;
    // How long the replay's clock has waited through spinner ticks since its last tick (any
    // message restarts the wait, as the replay's steps always have).
    let mut replay_waited = Duration::ZERO;
    loop {
        // While a replay plays, wake up for its next step.
        let replay_wake = state.replay.as_ref().and_then(|r| {
            if r.is_building() {
                // Look for the replay being built a few times a second.
                Some(r.interval().min(Duration::from_millis(50)))
            } else {
                r.playing.then(|| r.interval())
            }
        });
        if replay_wake.is_none() {
            replay_waited = Duration::ZERO;
        }
        let replay_left = replay_wake.map(|d| d.saturating_sub(replay_waited));
        // While a job runs, wake up to turn the spinner.
        let spinner_wake = state.job.is_some().then_some(update::SPINNER_INTERVAL);
        let wake = match (replay_left, spinner_wake) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let first = match wake {
            Some(timeout) => match rx.recv_timeout(timeout) {
                Ok(m) => m,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let mut changed = false;
                    match replay_left {
                        Some(left) if left <= timeout => {
                            replay_waited = Duration::ZERO;
                            changed |= update::on_tick(&mut state);
                        }
                        Some(_) => replay_waited += timeout,
                        None => {}
                    }
                    if spinner_wake.is_some() {
                        changed |= update::on_spinner_tick(&mut state);
                    }
                    if changed {
                        draw(&mut guard, &state)?;
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(m) => m,
                Err(_) => break,
            },
        };
        replay_waited = Duration::ZERO;
        // Handle everything that is waiting, then draw once (the newest frame wins).
        let mut pending = Some(first);
        let mut reparse = false;
        while let Some(msg) = pending.take().or_else(|| rx.try_recv().ok()) {
            let cmd = match msg {
                Msg::Input(Event::Key(k)) if state.prompt.is_some() => {
                    update::on_prompt_key(&mut state, k)
                }
                Msg::Input(Event::Key(k)) => state
                    .keys
                    .action(k)
                    .map_or(Cmd::None, |a| update::on_action(&mut state, a)),
                Msg::Input(Event::Mouse(m)) => update::on_mouse(&mut state, m),
                Msg::Input(Event::Resize(w, h)) => {
                    update::on_resize(&mut state, w, h);
                    Cmd::None
                }
                Msg::Input(_) => Cmd::None,
                Msg::Report(r) => {
                    update::on_report(&mut state, *r);
                    Cmd::None
                }
                Msg::Job(d) => {
                    update::on_job_done(&mut state, *d);
                    Cmd::None
                }
                Msg::Panicked(p) => {
                    update::on_background_panic(&mut state, p);
                    Cmd::None
                }
                Msg::Corpus(batch) => update::on_corpus_batch(&mut state, batch),
                Msg::JobControl(signals::JobControl::Suspend) => Cmd::Suspend,
                Msg::JobControl(signals::JobControl::Continued) => {
                    // Stopped by something else (`SIGSTOP`): the shell may have reset the modes.
                    if let Err(e) = guard.take_back(state.mouse) {
                        state.note = Some(format!("cannot take the terminal back: {e}"));
                    }
                    Cmd::None
                }
                Msg::Watch(WatchEvent::Changed) => {
                    rescan(&mut state);
                    Cmd::Reparse
                }
                Msg::Watch(WatchEvent::Failed(e)) => {
                    state.live = Live::Off(format!("watching failed: {e}"));
                    Cmd::None
                }
                Msg::Watch(WatchEvent::Lost(what)) => {
                    state.live = Live::Off(what);
                    Cmd::None
                }
                Msg::Watch(WatchEvent::Restored(what)) => {
                    state.live = Live::On;
                    state.note = Some(what);
                    Cmd::None
                }
            };
            match cmd {
                Cmd::Quit => {
                    // Quit at once: the terminal is restored first, and what the workbench
                    // holds (a long replay is millions of allocations, a worker may be busy
                    // with a parse) is left to the process's exit instead of being freed or
                    // joined piece by piece.
                    drop(guard);
                    std::mem::forget(state);
                    std::mem::forget(worker);
                    std::mem::forget(watcher);
                    return Ok(());
                }
                Cmd::Reparse => reparse = true,
                Cmd::ReparseAll => {
                    // Another reference version: the corpus is scanned again under it too.
                    rescan(&mut state);
                    reparse = true;
                }
                Cmd::OpenEditor(place) => {
                    state.note = Some(open_editor(&mut guard, &gate, &state, &config, &place));
                    // The watcher sees a save; a re-read also covers an editor that wrote
                    // nothing the watcher reports (or no watcher at all).
                    reparse = true;
                }
                Cmd::ProposeBless => {
                    if let Some(a) = state.analysis().cloned() {
                        update::show_proposal(&mut state, bless::propose(&a));
                    }
                }
                Cmd::WriteBless(p) => {
                    state.note = Some(bless::write(&p).unwrap_or_else(|e| e));
                    reparse = true;
                }
                Cmd::Suspend => {
                    gate.pause();
                    let back = guard.suspended(state.mouse, signals::stop_self);
                    gate.resume();
                    if let Err(e) = back {
                        state.note = Some(format!("cannot take the terminal back: {e}"));
                    }
                }
                Cmd::Mouse(on) => {
                    if let Err(e) = terminal::capture_mouse(on) {
                        state.note = Some(format!("cannot change mouse capture: {e}"));
                    }
                }
                Cmd::None => {}
            }
        }
        if reparse {
            // Also look again at what is watched: a folder may have been replaced.
            if let Some(w) = &watcher {
                w.recheck();
            }
            worker.request(request_for(&mut state));
        }
        draw(&mut guard, &state)?;
    }
    Ok(())
}

/// Opens the editor at `place` with the screen suspended; returns the note to show.
fn open_editor(
    guard: &mut terminal::Guard,
    gate: &terminal::InputGate,
    state: &State,
    config: &config::Config,
    place: &editor::Place,
) -> String {
    let at = match editor::resolve(place) {
        Ok(at) => at,
        Err(e) => return e,
    };
    let words = editor::command(config.editor.as_deref(), &editor::fallback_from_env(), &at);
    gate.pause();
    let ran = guard.suspended(state.mouse, || editor::run(&words));
    gate.resume();
    let file = at.file.display().to_string();
    let name = view::raw::short_name(&file);
    let where_ = format!("{name}:{}:{}", at.line, at.column);
    match ran {
        Ok(Ok(())) => format!("edited {where_}"),
        Ok(Err(e)) => e,
        Err(e) => format!("cannot take the terminal back: {e}"),
    }
}

/// Without a terminal: each sample's message (or error) as JSON, like `rtbench parse`.
fn print_headless(inputs: &Inputs, reference: rtbench_engine::Reference) -> Result<(), Failure> {
    let loaded = inputs
        .load_template(reference)
        .map_err(|d| Failure::invalid(d.to_string()))?;
    let mut failed = false;
    let mut out = std::io::stdout().lock();
    // Conversations and token ids need the model's files (and ids are parsed as ids).
    let model = inputs
        .model_dir()
        .map(|d| rtbench_tooling::model::Model::open(&d));
    for source in inputs.sample_sources() {
        let f = inputs::read_prepared(&source, model.as_ref());
        let result = match &f.sample {
            Err(e) => Err(e.clone()),
            Ok(s) => rtbench_tooling::model::parse_sample(&loaded.template, s, model.as_ref())
                .map_err(|e| e.text()),
        };
        let text = match result {
            Ok(m) => format!("{}:\n{}", f.name, analysis::pretty_json(&Value::Dict(m))),
            Err(e) => {
                failed = true;
                format!("{}:\nerror: {e}", f.name)
            }
        };
        // A closed pipe (`| head`) just ends the output.
        if writeln!(out, "{text}").is_err() {
            return Ok(());
        }
    }
    if failed {
        Err(Failure::invalid("some samples failed to parse"))
    } else {
        Ok(())
    }
}
