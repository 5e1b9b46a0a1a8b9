//! The allocator's options for the workbench.
//!
//! The workbench holds a sample's analysis for as long as it is shown, and makes it in steps
//! that each free what the one before made (the parse's copy of the text, the events' marks,
//! the message's spare room). mimalloc, the process's allocator, keeps freed pages for a second
//! before it returns them to the system, so the process held the transient blocks of several
//! steps at once: with 10 MB of small tool calls the workbench's high-water mark was 137 MB
//! against an idle workbench's 33 MB, and is 116 MB against 31 with freed pages returned at
//! once. The command line keeps mimalloc's default delay (corpus mode allocates on every core,
//! where returning pages at once would cost it system calls).
//!
//! mimalloc also commits a new arena's memory whole on Linux (its `arena_eager_commit`
//! default), and what it touched there stays resident. The workbench runs with arenas
//! committed as they are used instead, which takes an idle workbench from 30 to 16 MB and 10 MB
//! of small tool calls from about 78 to 73 MB over it. The option is read when the first arena
//! is made, before `main`, so the workbench starts itself again with it in its environment
//! ([`commit_arenas_as_used`]). The command line keeps the default: committed whole, a 10 MB
//! parse of prose runs in half the time.

/// `mi_option_purge_delay`: its place in mimalloc's `mi_option_e` (mimalloc 3, the version
/// `libmimalloc-sys` builds), which that crate does not name. A test checks that the option
/// there has the default mimalloc gives it.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// `mi_option_arena_eager_commit`, likewise (mimalloc's default 2 commits arenas whole where
/// the system overcommits).
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// The environment variable mimalloc reads that option from.
const ARENA_EAGER_COMMIT_VAR: &str = "MIMALLOC_ARENA_EAGER_COMMIT";

/// Starts this program again, with the same arguments, with arenas committed as they are used
/// (see the module documentation), unless they already are or the environment chose. Returns
/// only when it does not (the option in force, another system, or the program cannot be
/// started again: it then runs as it is).
pub(crate) fn commit_arenas_as_used() {
    #[allow(unsafe_code)]
    // SAFETY: reading an option takes an integer and returns one.
    let eager = unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) };
    if eager == 0 || std::env::var_os(ARENA_EAGER_COMMIT_VAR).is_some() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut args = std::env::args_os();
        let argv0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
        // `exec` returns only on failure: the workbench then runs in this process.
        let _ = std::process::Command::new(exe)
            .arg0(argv0)
            .args(args)
            .env(ARENA_EAGER_COMMIT_VAR, "0")
            .exec();
    }
}

/// Freed memory goes back to the system at once.
pub(crate) fn return_freed_memory_at_once() {
    // SAFETY: `mi_option_set` takes two integers and only stores the value (mimalloc reads
    // options atomically); an option's index out of range is ignored.
    #[allow(unsafe_code)]
    unsafe {
        libmimalloc_sys::mi_option_set(PURGE_DELAY, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_set_is_the_one_mimalloc_calls_purge_delay() {
        // mimalloc 3's default (its options.c): purge_delay 1000 milliseconds, unless the
        // environment set it.
        #[allow(unsafe_code)]
        // SAFETY: reading an option takes an integer and returns one.
        let delay = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            assert_eq!(delay, 1000);
        }
        #[allow(unsafe_code)]
        // SAFETY: as above.
        let eager = unsafe { libmimalloc_sys::mi_option_get(ARENA_EAGER_COMMIT) };
        if std::env::var_os(ARENA_EAGER_COMMIT_VAR).is_none() {
            assert_eq!(eager, 2);
        }
    }
}
