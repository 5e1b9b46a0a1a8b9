//! How far a long job running on another thread has got, and a way to stop it: the job
//! counts its units of work (bytes streamed, chunkings tried, samples checked) and looks at
//! the cancel flag between units; the screen reads the counts whenever it draws.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Shared between a job and whoever watches it.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicUsize,
    total: AtomicUsize,
    cancelled: AtomicBool,
}

impl Progress {
    /// How many units the job has in all (0 until it knows).
    pub fn set_total(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
    }

    /// How many units are done.
    pub fn set_done(&self, done: usize) {
        self.done.store(done, Ordering::Relaxed);
    }

    /// One more unit done.
    pub fn advance(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    /// Units done and in all.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    /// The share done, 0 to 100 (`None` while the total is unknown).
    pub fn percent(&self) -> Option<usize> {
        let (done, total) = self.counts();
        (total > 0).then(|| done.min(total) * 100 / total)
    }

    /// Asks the job to stop; it does at its next look.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether the job was asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_percent() {
        let p = Progress::default();
        assert_eq!(p.percent(), None);
        p.set_total(8);
        p.advance();
        p.advance();
        assert_eq!(p.counts(), (2, 8));
        assert_eq!(p.percent(), Some(25));
        p.set_done(100);
        assert_eq!(p.percent(), Some(100));
        assert!(!p.is_cancelled());
        p.cancel();
        assert!(p.is_cancelled());
    }
}
