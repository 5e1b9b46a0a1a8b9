//! Panics caught quietly: a call into a library that may panic on hostile input (the Jinja
//! engine, the tokenizers library) runs under [`catch_panic`], and its panic becomes an error
//! the caller reports, with nothing printed over the screen or the command's output.

use std::cell::Cell;

/// Runs `f`, turning a panic into `Err` with its message, without printing it (the caller
/// reports the error; the default hook's message would read as a crash).
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    quiet_hook();
    QUIET.with(|q| q.set(q.get() + 1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(q.get() - 1));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string())
    })
}

thread_local! {
    /// How many [`catch_panic`] calls are running on this thread.
    static QUIET: Cell<u32> = const { Cell::new(0) };
}

/// Installs, once, a panic hook that stays silent on a thread inside [`catch_panic`] and
/// hands every other panic to the hook that was there before.
fn quiet_hook() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}
