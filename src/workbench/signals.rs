//! Signals: whatever ends the process, the terminal is put back first.
//!
//! - `SIGTERM`, `SIGINT`, `SIGHUP`, `SIGQUIT` and `SIGABRT` (an abort: a stack overflow, an
//!   allocation failure, a failed assertion in a dependency) run a handler that leaves the
//!   alternate screen, turns mouse capture off, shows the cursor and puts back the terminal
//!   modes saved before raw mode, then lets the signal do what it would have done (end the
//!   process with that signal as its status). The handler only calls `write(2)` and
//!   `tcsetattr(3)`, which are async-signal-safe; no lock, no allocation.
//! - `SIGTSTP` (from `kill`, as raw mode turns Ctrl-Z into a key) and `SIGCONT` reach the run
//!   loop as messages: it suspends the way Ctrl-Z does and, on continuing, takes the terminal
//!   back and repaints everything (a shell may have changed the modes meanwhile).

use std::sync::OnceLock;

use signal_hook::consts::{SIGABRT, SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP};

/// The terminal's modes before raw mode, and the descriptor they belong to.
struct Saved {
    fd: libc::c_int,
    modes: libc::termios,
}

static SAVED: OnceLock<Saved> = OnceLock::new();

/// What crossterm writes to disable mouse capture, leave the alternate screen and show the
/// cursor, as bytes a signal handler can write without formatting anything.
const RESTORE: &[u8] =
    b"\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1049l\x1b[?25h";

/// The signals after which the process ends.
const FATAL: [libc::c_int; 5] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT];

/// Saves the terminal's modes (call before raw mode is turned on) and installs the handlers
/// of the fatal signals. Later calls change nothing.
#[allow(unsafe_code)] // SAFETY comments at each block
pub(crate) fn install_restore_on_fatal() {
    if SAVED.get().is_some() {
        return;
    }
    // Raw mode is set on standard input when it is a terminal, else on /dev/tty (as crossterm
    // does); the descriptor opened here stays open for the handler.
    // SAFETY: plain libc calls on a descriptor this function owns or on stdin; `modes` is
    // fully written by tcgetattr before it is read.
    let saved = unsafe {
        let fd = if libc::isatty(libc::STDIN_FILENO) == 1 {
            libc::STDIN_FILENO
        } else {
            libc::open(c"/dev/tty".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC)
        };
        let mut modes: libc::termios = std::mem::zeroed();
        (fd >= 0 && libc::tcgetattr(fd, &mut modes) == 0).then_some(Saved { fd, modes })
    };
    let Some(saved) = saved else { return };
    if SAVED.set(saved).is_err() {
        return;
    }
    for sig in FATAL {
        // SAFETY: the action only calls async-signal-safe functions (see `restore_now`) and
        // `emulate_default_handler`, which signal-hook documents as async-signal-safe.
        let _ = unsafe {
            signal_hook::low_level::register(sig, move || {
                restore_now();
                let _ = signal_hook::low_level::emulate_default_handler(sig);
            })
        };
    }
}

/// Puts the terminal back from inside a signal handler.
#[allow(unsafe_code)] // SAFETY comment at the block
fn restore_now() {
    if let Some(saved) = SAVED.get() {
        // SAFETY: write(2) and tcsetattr(3) are async-signal-safe; the buffer is static.
        unsafe {
            let _ = libc::write(libc::STDOUT_FILENO, RESTORE.as_ptr().cast(), RESTORE.len());
            let _ = libc::tcsetattr(saved.fd, libc::TCSANOW, &saved.modes);
        }
    }
}

/// A job-control signal for the run loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobControl {
    /// Stop as Ctrl-Z does.
    Suspend,
    /// The process was continued: take the terminal back.
    Continued,
}

/// Hands `SIGTSTP` and `SIGCONT` to `send` on a thread of their own.
pub(crate) fn forward_job_control(
    send: impl Fn(JobControl) -> bool + Send + 'static,
) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGTSTP, SIGCONT])?;
    std::thread::Builder::new()
        .name("rtbench-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let msg = if sig == SIGTSTP {
                    JobControl::Suspend
                } else {
                    JobControl::Continued
                };
                if !send(msg) {
                    break;
                }
            }
        })?;
    Ok(())
}

/// Stops the process until a `SIGCONT` (the shell's `fg`). `SIGSTOP` is used because this
/// process handles `SIGTSTP` itself.
pub(crate) fn stop_self() {
    let _ = signal_hook::low_level::raise(libc::SIGSTOP);
}
