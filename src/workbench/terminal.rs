//! The terminal: raw mode, alternate screen and mouse capture on start, and always restored on
//! exit, on error and on a panic of the UI (the panic hook restores the terminal, then prints
//! the panic; background work's panics are shown on screen instead).

use std::io::{self, Stdout};

use crossterm::cursor::{Hide, Show};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

pub(crate) type Term = Terminal<CrosstermBackend<Stdout>>;

/// The terminal's modes when the workbench started, which every restore puts back.
static ORIGINAL: std::sync::OnceLock<Option<rustix::termios::Termios>> = std::sync::OnceLock::new();

/// The terminal device: standard input when it is one, else the controlling terminal.
fn tty() -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::AsFd;
    let stdin = io::stdin();
    if rustix::termios::isatty(stdin.as_fd()) {
        return stdin.as_fd().try_clone_to_owned().ok();
    }
    std::fs::File::open("/dev/tty").ok().map(Into::into)
}

/// Remembers the terminal's modes as they are now (once: when the workbench starts).
fn save_original() {
    ORIGINAL.get_or_init(|| tty().and_then(|fd| rustix::termios::tcgetattr(&fd).ok()));
}

/// Puts the terminal's modes back as they were when the workbench started, whatever another
/// program (an editor that leaves the terminal raw) or a stop from outside left.
fn put_back_original() {
    if let (Some(Some(t)), Some(fd)) = (ORIGINAL.get(), tty()) {
        let _ = rustix::termios::tcsetattr(&fd, rustix::termios::OptionalActions::Now, t);
    }
}

/// Puts the terminal back as it was. Safe to call more than once.
pub(crate) fn restore() {
    let _ = disable_raw_mode();
    put_back_original();
    let _ = execute!(
        io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        Show
    );
}

/// The thread that draws the screen and the one that reads the terminal: a panic on either
/// ends the workbench, so the terminal is restored before the panic is printed.
static UI_THREAD: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

/// The terminal-reading thread's name.
pub(crate) const INPUT_THREAD: &str = "rtbench-input";

/// Restores the terminal before the default panic message is printed, for a panic on the UI or
/// input thread. Every other thread's work runs on the background runtime, which catches its
/// panics and shows them on screen (see [`crate::workbench::runtime`]): restoring the terminal
/// there would leave a live screen on a cooked terminal, so the hook leaves it alone (and
/// prints nothing over the screen).
fn install_panic_hook() {
    let _ = UI_THREAD.set(std::thread::current().id());
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let here = std::thread::current();
        let ends_the_workbench =
            UI_THREAD.get() == Some(&here.id()) || here.name() == Some(INPUT_THREAD);
        if !ends_the_workbench {
            return;
        }
        restore();
        previous(info);
    }));
}

/// Lets the run loop stop the input thread from reading the terminal while another program
/// (the editor) owns it: the thread polls in short steps and parks while paused.
#[derive(Clone, Default)]
pub(crate) struct InputGate {
    inner: std::sync::Arc<(std::sync::Mutex<GateState>, std::sync::Condvar)>,
}

#[derive(Default)]
struct GateState {
    paused: bool,
    parked: bool,
}

impl InputGate {
    /// On the input thread: waits while paused (saying it has parked).
    pub(crate) fn wait_open(&self) {
        let (lock, cvar) = &*self.inner;
        let mut g = lock.lock().unwrap_or_else(|e| e.into_inner());
        while g.paused {
            g.parked = true;
            cvar.notify_all();
            g = cvar.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        g.parked = false;
    }

    /// On the run loop: asks the input thread to stop reading and waits until it has.
    pub(crate) fn pause(&self) {
        let (lock, cvar) = &*self.inner;
        let mut g = lock.lock().unwrap_or_else(|e| e.into_inner());
        g.paused = true;
        while !g.parked {
            let (next, timeout) = cvar
                .wait_timeout(g, std::time::Duration::from_millis(500))
                .unwrap_or_else(|e| e.into_inner());
            g = next;
            if timeout.timed_out() {
                // The thread is gone (or stuck): go on without it.
                break;
            }
        }
    }

    /// Lets the input thread read again.
    pub(crate) fn resume(&self) {
        let (lock, cvar) = &*self.inner;
        let mut g = lock.lock().unwrap_or_else(|e| e.into_inner());
        g.paused = false;
        cvar.notify_all();
    }
}

/// Turns mouse capture on or off.
pub(crate) fn capture_mouse(on: bool) -> io::Result<()> {
    if on {
        execute!(io::stdout(), EnableMouseCapture)
    } else {
        execute!(io::stdout(), DisableMouseCapture)
    }
}

/// The terminal while the workbench runs; dropping it restores the terminal.
pub(crate) struct Guard {
    pub terminal: Term,
}

impl Guard {
    pub(crate) fn enter() -> io::Result<Guard> {
        install_panic_hook();
        crate::workbench::signals::install_restore_on_fatal();
        save_original();
        enable_raw_mode()?;
        let setup = execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture, Hide);
        if let Err(e) = setup {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(terminal) => Ok(Guard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Guard {
    /// Gives the terminal to another program (`run`), as if the workbench had exited, and
    /// takes it back after; the next draw repaints everything.
    pub(crate) fn suspended<T>(&mut self, mouse: bool, run: impl FnOnce() -> T) -> io::Result<T> {
        restore();
        let out = run();
        self.take_back(mouse)?;
        Ok(out)
    }

    /// Sets the terminal up again (raw mode, alternate screen, mouse as asked) after another
    /// program or the shell had it; the next draw repaints everything. The modes start again
    /// from the ones saved at start: after a stop from outside (`SIGSTOP`, then `fg`) raw mode
    /// still counts as on though the shell reset it, and an editor may leave the terminal raw
    /// (raw mode would then remember that as the modes to restore at exit).
    pub(crate) fn take_back(&mut self, mouse: bool) -> io::Result<()> {
        let _ = disable_raw_mode();
        put_back_original();
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen, Hide)?;
        if mouse {
            execute!(io::stdout(), EnableMouseCapture)?;
        }
        self.terminal.clear()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}
