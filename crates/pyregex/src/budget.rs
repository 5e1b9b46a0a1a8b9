//! A work budget shared by every search of one job (a parse, a stream, a replay), and the
//! count of matcher steps taken.
//!
//! Each search also has its own allowance (see `search.rs`), but a stream searches its buffer
//! again on every feed: a pathological pattern would spend a whole per-search allowance on
//! each feed. A [`Budget`] caps the job as a whole: its owner grants steps in proportion to
//! the text it feeds, and runs its searches inside [`Budget::run`]; a search then stops (with
//! [`crate::RegexError::Budget`]) when either its own allowance or the job's runs out.
//!
//! Steps are counted, never timed, so the bound is the same on every machine and in tests.
//! [`REFERENCE_TEN_SECONDS`] sets how many: the reference's own time is the measure.
//!
//! The budget covers memory too: a search's backtrack stack (its choice points and the undo
//! records of captures and repeat counters) may hold at most [`STACK_ENTRIES`] entries plus
//! [`STACK_ENTRIES_PER_BYTE`] per byte of text, and a search that needs more stops with the
//! same error as one that runs out of steps. The stack grows only by allocations that may fail,
//! and a refused one stops the search the same way: a search never aborts the process. The
//! reference's own memory is the measure (see [`STACK_ENTRIES`]). The memo of failed states
//! holds a bounded number of states (see `backtrack.rs`).

use std::cell::Cell;

/// Matcher steps that cover whatever the reference's `regex` module does in ten seconds, so
/// that the budget never turns a result the reference gives in that time into an error.
///
/// Measured with `tools/regex/budget_cases.py` (slow-but-finite delimiter and xml-inline tag
/// patterns, timed on the reference): the most steps this matcher takes per second of the
/// reference's time was about 33 million (a lazy tag pattern with a backreference over tags
/// that never close by their name: the reference scans for the closing literal, as this
/// matcher's lazy repeats now do too); ten seconds of that is 330 million, and this allows
/// about 2.4 times as much. At roughly 30 ns a step, a search that exhausts it has run for
/// 20-30 s: patterns the reference hangs on are still stopped, later than the reference would
/// have given up on by itself only where it would have taken well over ten seconds.
pub const REFERENCE_TEN_SECONDS: u64 = 800_000_000;

/// Backtrack-stack entries (24 bytes each) a search may hold whatever its text: twice what
/// this matcher holds where the reference's own backtracking runs out of memory, so that the
/// limit never stops a search the reference finishes.
///
/// The stack holds a choice point or an undo record for the steps that leave one, so a search
/// that goes deep holds memory in proportion to its work: a repeat of capture groups records
/// every group at every iteration (`((a)()()...)*` over a run of `a`). The reference's
/// `regex` module keeps such records too, and fails with `MemoryError` once they take about
/// 0.6-1 GB (in under a second). Measured with its oracle (`regex.search` over a run of `a`,
/// the longest that does not fail): `(a)*\Z` over 6.5 MB, `(?:a|aa)*\Z` over 8.5 MB,
/// `((a)` + 64 empty groups + `)*\Z` over 220 KB, `((a)(b)?(c)?(d)?)*\Z` over 1.9 MB; the
/// same searches here hold at most 17 million entries (400 MB; 67 entries a byte for the 64
/// groups, where the reference keeps 4.4 KB). This allows 32 million (768 MB), and more for
/// long texts ([`STACK_ENTRIES_PER_BYTE`]).
pub const STACK_ENTRIES: u64 = 32_000_000;

/// Backtrack-stack entries a search may hold per byte of its text, beyond [`STACK_ENTRIES`]:
/// a search that keeps a few entries per byte over a long text (the memo's records of failed
/// states, which the reference does not keep) finishes wherever the reference does.
pub const STACK_ENTRIES_PER_BYTE: u64 = 16;

thread_local! {
    /// Steps left to the innermost [`Budget::run`] on this thread (`None` outside one).
    static SHARED: Cell<Option<u64>> = const { Cell::new(None) };
    /// The tighter stack limit [`with_stack_limit`] set on this thread, if any.
    static STACK_CAP: Cell<Option<u64>> = const { Cell::new(None) };
    /// Every matcher step taken on this thread.
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// A work allowance, in matcher steps, shared by the searches run inside [`Budget::run`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    remaining: u64,
    spent: u64,
}

impl Budget {
    /// A budget of `steps`.
    pub fn new(steps: u64) -> Budget {
        Budget {
            remaining: steps,
            spent: 0,
        }
    }

    /// Adds `steps` (for more text to search).
    pub fn grant(&mut self, steps: u64) {
        self.remaining = self.remaining.saturating_add(steps);
    }

    /// Steps left.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Steps spent by the searches run so far.
    pub fn spent(&self) -> u64 {
        self.spent
    }

    /// Runs `f`, charging every search it makes on this thread to this budget (and to any
    /// enclosing one).
    pub fn run<T>(&mut self, f: impl FnOnce() -> T) -> T {
        /// Puts the enclosing budget back, charged with what was spent, even if `f` unwinds.
        struct Restore<'a> {
            budget: &'a mut Budget,
            outer: Option<u64>,
        }
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                let left = SHARED.get().unwrap_or(0).min(self.budget.remaining);
                let used = self.budget.remaining - left;
                self.budget.remaining = left;
                self.budget.spent += used;
                SHARED.set(self.outer.map(|o| o.saturating_sub(used)));
            }
        }
        let outer = SHARED.get();
        let restore = Restore {
            outer,
            budget: self,
        };
        SHARED.set(Some(match outer {
            Some(o) => o.min(restore.budget.remaining),
            None => restore.budget.remaining,
        }));
        let r = f();
        drop(restore);
        r
    }
}

/// Every matcher step taken on this thread so far (for tests and benchmarks that bound the
/// work of a job without timing it).
pub fn steps_taken() -> u64 {
    STEPS.get()
}

/// The most backtrack-stack entries a search over `len` bytes may hold.
pub(crate) fn stack_limit(len: usize) -> usize {
    let own = STACK_ENTRIES.saturating_add(STACK_ENTRIES_PER_BYTE.saturating_mul(len as u64 + 1));
    let frames = STACK_CAP.get().map_or(own, |cap| own.min(cap));
    usize::try_from(frames).unwrap_or(usize::MAX)
}

/// Runs `f` with every search it makes on this thread limited to `frames` backtrack-stack
/// entries (never more than the usual limit): a search that needs more stops with
/// [`crate::RegexError::Budget`], as when its steps run out. For callers that want to hold
/// less memory than the reference may, and for tests of the limit.
pub fn with_stack_limit<T>(frames: u64, f: impl FnOnce() -> T) -> T {
    /// Puts the previous limit back, even if `f` unwinds.
    struct Restore(Option<u64>);
    impl Drop for Restore {
        fn drop(&mut self) {
            STACK_CAP.set(self.0);
        }
    }
    let previous = STACK_CAP.get();
    let _restore = Restore(previous);
    STACK_CAP.set(Some(previous.map_or(frames, |p| p.min(frames))));
    f()
}

/// The allowance for a search whose own limit is `own`: also within the enclosing budget.
pub(crate) fn limit(own: u64) -> u64 {
    SHARED.get().map_or(own, |left| own.min(left))
}

/// Records `steps` taken by a search.
pub(crate) fn spend(steps: u64) {
    STEPS.set(STEPS.get().saturating_add(steps));
    if let Some(left) = SHARED.get() {
        SHARED.set(Some(left.saturating_sub(steps)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn searches_inside_run_are_charged_to_the_budget_and_enclosing_ones() {
        let mut outer = Budget::new(100);
        let mut inner = Budget::new(30);
        outer.run(|| {
            assert_eq!(limit(1000), 100);
            spend(10);
            inner.run(|| {
                assert_eq!(limit(1000), 30);
                spend(25);
                assert_eq!(limit(1000), 5);
            });
            assert_eq!(limit(1000), 65);
        });
        assert_eq!((outer.remaining(), outer.spent()), (65, 35));
        assert_eq!((inner.remaining(), inner.spent()), (5, 25));
        assert_eq!(limit(1000), 1000);
    }
}
