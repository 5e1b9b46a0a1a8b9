//! Stack room for compiling deeply nested patterns.
//!
//! Parsing, lowering, optimising and prefiltering walk the pattern recursively. The nesting is
//! bounded by the reference's own recursion limit (see [`crate::RegexError::TooDeep`]), but at
//! that bound an unoptimised build needs several megabytes of stack, more than a caller's
//! thread may have. A pattern nested more than a few levels is therefore compiled on a helper
//! thread with a stack sized for the deepest accepted pattern; ordinary patterns compile on
//! the caller's thread at no cost.

/// Nesting (open parentheses, counted naively) up to which compiling on the caller's stack is
/// safe on any thread (a few kilobytes per level in an unoptimised build).
const SHALLOW: usize = 24;

/// Stack for the helper thread: ample for the deepest pattern the limits accept, unoptimised
/// (measured about 7 KB per level at most, at most a thousand levels of recursion).
const HELPER_STACK: usize = 64 << 20;

/// The deepest nesting of `(` in `pattern`, counting every unescaped parenthesis outside sets
/// crudely (an overestimate is harmless: it only moves work to the helper thread).
fn rough_depth(pattern: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    for b in pattern.bytes() {
        match b {
            b'(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Runs `f` (which compiles `pattern`) where the stack is large enough for it.
pub(crate) fn with_room<T: Send>(pattern: &str, f: impl FnOnce() -> T + Send) -> Option<T> {
    if rough_depth(pattern) <= SHALLOW {
        return Some(f());
    }
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("pyregex-compile".into())
            .stack_size(HELPER_STACK)
            .spawn_scoped(scope, f)
            .ok()?;
        worker.join().ok()
    })
}
