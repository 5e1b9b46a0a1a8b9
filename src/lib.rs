//! rtbench: a workbench for response templates.
//!
//! The engine ([`rtbench_engine`]) turns a model's generated text into a message dict exactly as the reference
//! runtime (`transformers.utils.chat_parsing`) does: template loading and validation, delimiter
//! matching with Python `regex` semantics, the streaming state machine, content parsers,
//! transforms and tool-argument coercion. It has no terminal code.
//!
//! This crate is the `rtbench` binary: the headless commands and the workbench. Everything in
//! it is private to it but [`main`] and [`testing`], the surface its own integration tests and
//! benches reach.

mod allocator;
mod cli;
mod failure;
mod reference;
mod workbench;

pub use cli::main;

/// What the integration tests (`tests/`) and benches (`benches/`) reach inside the binary:
/// the workbench's state, its update functions, its views and its background workers, under
/// the names they have inside the crate. Nothing else uses this module; it is not an API.
pub mod testing {
    pub use crate::workbench::inputs::{Inputs, Source};
    pub use crate::workbench::keys::Action;
    pub use crate::workbench::protocol::Msg;
    pub use crate::workbench::request_for;
    pub use crate::workbench::state::{Mode, Pane, State};
    pub use crate::workbench::theme::Theme;

    /// State changes on keys, the mouse and lane replies.
    pub mod update {
        pub use crate::workbench::update::{
            Cmd, on_action, on_job_done, on_mouse, on_prompt_key, on_report, on_spinner_tick,
            on_tick, update,
        };
    }

    /// Drawing the screen.
    pub mod view {
        pub use crate::workbench::view::draw;

        /// The raw pane's geometry.
        pub mod raw {
            pub use crate::workbench::view::raw::{rows_of_line, shows_fold, text_area};
        }

        /// The diagnostics pane's items.
        pub mod diagnostics {
            pub use crate::workbench::view::diagnostics::{items, lines};
        }
    }

    /// The screen's layout.
    pub mod layout {
        pub use crate::workbench::layout::compute;
    }

    /// The parse lane.
    pub mod worker {
        pub use crate::workbench::worker::{Request, Worker, compute, compute_with_versions};
    }

    /// The file watcher.
    pub mod watch {
        pub use crate::workbench::watch::{WatchEvent, start};
    }

    /// The replay lane.
    pub mod replay {
        pub use crate::workbench::replay::{ReplayBuilt, lane};
    }

    /// The tooling lane.
    pub mod jobs {
        pub use crate::workbench::jobs::Runner;
        pub use crate::workbench::protocol::Done;
    }
}
