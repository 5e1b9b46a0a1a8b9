//! Storage for the backtrack stack: a stack kept in chunks, so that it grows without moving
//! what it holds (a vector that doubles holds its old and new blocks at once while it copies,
//! twice the memory of a deep stack), within a limit, by allocations that may fail.

/// Entries a chunk holds at most. The first chunk grows from small by doubling, as most
/// searches keep only a few entries.
const CHUNK: usize = 1 << 16;

/// A stack of `T` in chunks: `full` chunks at the bottom, the top entries in `top`, and empty
/// chunks kept in `spare` for when the stack grows again. Pushes and pops touch `top` alone,
/// as they would a plain vector: the caller makes room beforehand ([`ChunkStack::free`],
/// [`ChunkStack::make_room`]), and a chunk is closed when it has little room left, so chunks
/// below the top may hold a few entries less than they could.
pub(crate) struct ChunkStack<T> {
    full: Vec<Vec<T>>,
    /// Entries in `full`.
    below: usize,
    top: Vec<T>,
    spare: Vec<Vec<T>>,
}

impl<T: Copy> ChunkStack<T> {
    pub(crate) fn new() -> ChunkStack<T> {
        ChunkStack {
            full: Vec::new(),
            below: 0,
            top: Vec::new(),
            spare: Vec::new(),
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.below + self.top.len()
    }

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Pushes `v` into room made beforehand.
    #[inline(always)]
    pub(crate) fn push(&mut self, v: T) {
        self.top.push(v);
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<T> {
        match self.top.pop() {
            Some(v) => Some(v),
            None => self.pop_chunk(),
        }
    }

    /// The top chunk is empty: the chunk below becomes the top, and the empty one a spare.
    #[cold]
    #[inline(never)]
    fn pop_chunk(&mut self) -> Option<T> {
        let below = self.full.pop()?;
        self.below -= below.len();
        let empty = std::mem::replace(&mut self.top, below);
        self.spare.push(empty);
        self.top.pop()
    }

    /// Drops the entries from `n` up.
    #[cfg(test)]
    fn truncate(&mut self, n: usize) {
        while self.below > n {
            let below = self.full.pop().expect("entries below the cut");
            self.below -= below.len();
            let mut empty = std::mem::replace(&mut self.top, below);
            empty.clear();
            self.spare.push(empty);
        }
        self.top.truncate(n - self.below);
    }

    /// Keeps, of the entries from `base` up, those `keep` accepts, in their order.
    pub(crate) fn retain_from(&mut self, base: usize, keep: impl Fn(&T) -> bool) {
        if base >= self.below {
            // Within the top chunk (the usual case): compacted in place.
            let from = base - self.below;
            let mut w = from;
            for r in from..self.top.len() {
                let v = self.top[r];
                if keep(&v) {
                    self.top[w] = v;
                    w += 1;
                }
            }
            self.top.truncate(w);
            return;
        }
        let mut kept = Vec::new();
        while self.len() > base {
            let v = self.pop().expect("entries above the base");
            if keep(&v) {
                kept.push(v);
            }
        }
        // Fewer entries than were there: the chunks they came from have room for them.
        for v in kept.into_iter().rev() {
            if self.top.len() == self.top.capacity()
                && let Some(fresh) = self.spare.pop()
            {
                self.below += self.top.len();
                self.full.push(std::mem::replace(&mut self.top, fresh));
            }
            self.top.push(v);
        }
    }

    /// How many entries can be pushed without allocating or changing chunks.
    #[inline(always)]
    pub(crate) fn free(&self) -> usize {
        self.top.capacity() - self.top.len()
    }

    /// Entries allocated, used or not.
    fn allocated(&self) -> usize {
        self.full.iter().map(Vec::capacity).sum::<usize>()
            + self.spare.iter().map(Vec::capacity).sum::<usize>()
            + self.top.capacity()
    }

    /// Makes room for `n` more entries (at most a few hundred), keeping the entries allocated
    /// within `limit` (rounded up to a whole chunk): `false` when that or the allocation
    /// itself is refused.
    #[cold]
    #[inline(never)]
    pub(crate) fn make_room(&mut self, n: usize, limit: usize) -> bool {
        if self.top.capacity() < CHUNK {
            // The first chunk doubles up to a whole chunk.
            let want = (self.top.capacity() * 2).clamp(1024, CHUNK);
            let more = want - self.top.capacity();
            if self.allocated() + more > limit.max(1024) {
                return false;
            }
            return self.top.try_reserve_exact(want - self.top.len()).is_ok() && self.free() >= n;
        }
        // Close the top chunk and continue in a spare one, or a new one.
        let fresh = match self.spare.pop() {
            Some(chunk) => chunk,
            None => {
                if self.allocated() >= limit {
                    return false;
                }
                let mut chunk = Vec::new();
                if chunk.try_reserve_exact(CHUNK).is_err() {
                    return false;
                }
                chunk
            }
        };
        self.below += self.top.len();
        self.full.push(std::mem::replace(&mut self.top, fresh));
        self.free() >= n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes `v`, making room as a search does before each step.
    fn push(s: &mut ChunkStack<usize>, v: usize) {
        if s.free() < 8 {
            assert!(s.make_room(8, usize::MAX));
        }
        s.push(v);
    }

    fn contents(s: &mut ChunkStack<usize>) -> Vec<usize> {
        let mut out = Vec::new();
        while let Some(v) = s.pop() {
            out.push(v);
        }
        out.reverse();
        for &v in &out {
            push(s, v);
        }
        out
    }

    #[test]
    fn a_stack_in_chunks_behaves_as_a_vector() {
        let mut s = ChunkStack::new();
        let mut v = Vec::new();
        let n = 3 * CHUNK + 17;
        for i in 0..n {
            push(&mut s, i);
            v.push(i);
        }
        assert_eq!(s.len(), n);
        for cut in [2 * CHUNK + 5, 2 * CHUNK, CHUNK - 1, 10, 0] {
            s.truncate(cut);
            v.truncate(cut);
            assert_eq!(s.len(), cut);
            // Regrow past the cut, keep the odd entries above it, pop back to the cut.
            for i in 0..CHUNK + 3 {
                push(&mut s, i);
            }
            s.retain_from(cut, |&x| x % 2 == 1);
            assert_eq!(s.len(), cut + (CHUNK + 3) / 2);
            s.truncate(cut);
            assert_eq!(contents(&mut s), v);
        }
        assert!(s.is_empty());
        assert_eq!(s.pop(), None);
        // Compaction within the top chunk.
        for i in 0..100 {
            push(&mut s, i);
        }
        s.retain_from(50, |&x| x % 10 == 0);
        assert_eq!(
            contents(&mut s)[45..],
            [45, 46, 47, 48, 49, 50, 60, 70, 80, 90]
        );
    }

    #[test]
    fn growth_stops_at_the_limit() {
        let mut s: ChunkStack<u64> = ChunkStack::new();
        let limit = 2 * CHUNK + 1;
        let mut pushed = 0;
        while s.free() >= 8 || s.make_room(8, limit) {
            s.push(0);
            pushed += 1;
        }
        // Whole chunks (the limit rounded up), each closed with fewer than 8 entries free.
        assert!(pushed > 3 * CHUNK - 24 && pushed <= 3 * CHUNK, "{pushed}");
        assert!(s.allocated() <= limit + CHUNK);
    }
}
