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

pub(crate) mod analysis;
pub(crate) mod bless;
pub(crate) mod clock;
pub(crate) mod compact;
pub(crate) mod config;
pub(crate) mod corpus;
pub(crate) mod editor;
pub(crate) mod exec;
pub(crate) mod grammar;
pub(crate) mod highlight;
pub(crate) mod inputs;
pub(crate) mod jobs;
pub(crate) mod json_lines;
pub(crate) mod keys;
pub(crate) mod layout;
pub(crate) mod pane;
pub(crate) mod protocol;
pub(crate) mod replay;
pub(crate) mod runtime;
pub(crate) mod search;
pub(crate) mod signals;
pub(crate) mod state;
pub(crate) mod terminal;
pub(crate) mod theme;
pub(crate) mod update;
pub(crate) mod view;
pub(crate) mod watch;
pub(crate) mod worker;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;

use crate::failure::Failure;
use crate::workbench::clock::Wait;
use crate::workbench::exec::{Executor, Flow};
use crate::workbench::inputs::Inputs;
use crate::workbench::protocol::Msg;
use crate::workbench::state::State;
use crate::workbench::theme::Theme;
pub use crate::workbench::worker::request_for;
use rtbench_engine::value::Value;

/// Options of the workbench from the command line.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
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

/// The theme asked for, without colours when `NO_COLOR` is set.
pub(crate) fn theme(options: &Options) -> Result<Theme, String> {
    let theme = Theme::load(options.theme.as_deref().unwrap_or("dark"))?;
    Ok(if Theme::no_color_requested() {
        theme.without_color()
    } else {
        theme
    })
}

/// Runs the workbench (or, when stdout is not a terminal, prints each sample's message): reads
/// a message, lets [`update::update`] change the state, carries out the command it returns
/// ([`exec`]), and draws the newest state once nothing is waiting.
pub(crate) fn run(options: &Options) -> Result<(), Failure> {
    let inputs = Inputs::from_args(&options.paths).map_err(Failure::usage)?;
    let theme = theme(options).map_err(Failure::usage)?;
    let config = match options.config.clone().or_else(config::default_path) {
        Some(p) => config::load(&p).map_err(Failure::usage)?,
        None => config::Config::default(),
    };
    if !std::io::stdout().is_terminal() {
        return print_headless(&inputs, options.reference);
    }
    crate::allocator::commit_arenas_as_used();
    crate::allocator::return_freed_memory_at_once();
    let (tx, rx) = mpsc::channel::<Msg>();
    let mut guard = terminal::Guard::enter()
        .map_err(|e| Failure::usage(format!("cannot set up the terminal: {e}")))?;
    let size = guard
        .terminal
        .size()
        .map_err(|e| Failure::usage(e.to_string()))?;
    let mut state = State::new(theme, (size.width, size.height));
    state.session.reference = options.reference;
    let mut exec = Executor::start(Arc::new(inputs), config, &tx, &mut state)?;
    draw(&mut guard, &state)?;
    let mut clock = clock::Clock::default();
    loop {
        let first = match clock.wait(&rx, &mut state) {
            Wait::Msg(m) => m,
            Wait::Redraw => {
                draw(&mut guard, &state)?;
                continue;
            }
            Wait::Idle => continue,
            Wait::Closed => return Ok(()),
        };
        // Handle everything that is waiting, then draw once (the newest frame wins).
        let mut pending = Some(first);
        let mut reparse = false;
        while let Some(msg) = pending.take().or_else(|| rx.try_recv().ok()) {
            let cmd = update::update(&mut state, msg);
            match exec.execute(cmd, &mut guard, &mut state) {
                Flow::Continue => {}
                Flow::Reparse => reparse = true,
                Flow::Quit => {
                    // Quit at once: the terminal is restored first, and what the workbench
                    // holds (a long replay is millions of allocations, a lane may be busy
                    // with a parse) is left to the process's exit instead of being freed or
                    // joined piece by piece.
                    drop(guard);
                    std::mem::forget(state);
                    std::mem::forget(exec);
                    return Ok(());
                }
            }
        }
        if reparse {
            exec.reparse(&mut state);
        }
        draw(&mut guard, &state)?;
    }
}

/// Draws `state` on the terminal.
fn draw(guard: &mut terminal::Guard, state: &State) -> Result<(), Failure> {
    guard
        .terminal
        .draw(|f| view::draw(f, state))
        .map(|_| ())
        .map_err(|e| Failure::usage(format!("cannot draw: {e}")))
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
