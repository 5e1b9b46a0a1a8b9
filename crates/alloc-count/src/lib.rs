//! The memory tests' allocator: [`Counting`] forwards every call to the system allocator and
//! counts the bytes held and their peak, both for the calling thread (so that a test measures
//! its own work while other tests run on other threads) and for the whole process (for work
//! that spreads over threads). A test binary installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;
//! ```
//!
//! The count is conservative: a `realloc` counts its new block before it frees the old one,
//! since both may be live while it moves.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `System`, counting (see the crate documentation).
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static BLOCKS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static HELD: Cell<isize> = const { Cell::new(0) };
    static THREAD_PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grew(by: usize) {
    let now = CURRENT.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
    // `try_with`: a thread being torn down frees memory after its locals are gone.
    let _ = HELD.try_with(|held| {
        let now = held.get() + by as isize;
        held.set(now);
        let _ = THREAD_PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrank(by: usize) {
    CURRENT.fetch_sub(by, Ordering::Relaxed);
    let _ = HELD.try_with(|held| held.set(held.get() - by as isize));
}

// SAFETY: every call is forwarded to `System` unchanged; only sizes are counted, in atomics
// and in thread-locals without destructors (usable at any point of a thread's life).
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size());
            BLOCKS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grew(layout.size());
            BLOCKS.fetch_add(1, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
        BLOCKS.fetch_sub(1, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grew(new_size);
            shrank(layout.size());
        }
        p
    }
}

/// The most bytes this thread held above what it held before, while `f` ran.
pub fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = HELD.with(Cell::get);
    THREAD_PEAK.with(|p| p.set(before));
    let out = f();
    (out, (THREAD_PEAK.with(Cell::get) - before).max(0) as usize)
}

/// The bytes the whole process holds now.
pub fn current() -> usize {
    CURRENT.load(Ordering::SeqCst)
}

/// The blocks the whole process holds now (each allocation costs the system allocator some
/// bookkeeping beyond its bytes, so many small blocks cost more than their sum).
pub fn blocks() -> usize {
    BLOCKS.load(Ordering::SeqCst)
}

/// Starts a process-wide measurement: the peak is set to what is held now, which is returned.
pub fn reset_peak() -> usize {
    let now = current();
    PEAK.store(now, Ordering::SeqCst);
    now
}

/// The most the process held at once since [`reset_peak`] returned `baseline`, beyond it.
pub fn peak_since(baseline: usize) -> usize {
    PEAK.load(Ordering::SeqCst).saturating_sub(baseline)
}
