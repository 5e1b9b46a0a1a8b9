//! Storage for the backtrack stack: a stack kept in chunks, so that it grows without moving
//! what it holds (a vector that doubles holds its old and new blocks at once while it copies,
//! twice the memory of a deep stack), within a limit, by allocations that may fail.

/// Entries in each chunk after the first. The first grows from small by doubling, as most
/// searches keep only a few entries.
const CHUNK: usize = 1 << 16;

/// A stack of `T` in chunks: `chunks[..top]` are full, `chunks[top]` holds the top entries,
/// and any after it are empty, kept for when the stack grows again.
pub(crate) struct ChunkStack<T> {
    chunks: Vec<Vec<T>>,
    top: usize,
}

impl<T: Copy> ChunkStack<T> {
    pub(crate) fn new() -> ChunkStack<T> {
        ChunkStack {
            chunks: vec![Vec::new()],
            top: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.top * CHUNK + self.chunks[self.top].len()
    }

    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.top == 0 && self.chunks[0].is_empty()
    }

    /// Pushes `v` into room made beforehand (see [`ChunkStack::room`]).
    #[inline(always)]
    pub(crate) fn push(&mut self, v: T) {
        if self.chunks[self.top].len() == CHUNK {
            self.top += 1;
        }
        self.chunks[self.top].push(v);
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.chunks[self.top].is_empty() {
            if self.top == 0 {
                return None;
            }
            self.top -= 1;
        }
        self.chunks[self.top].pop()
    }

    /// The entry at `i` (from the bottom).
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> T {
        self.chunks[i / CHUNK][i % CHUNK]
    }

    /// Replaces the entry at `i`.
    #[inline(always)]
    pub(crate) fn set(&mut self, i: usize, v: T) {
        self.chunks[i / CHUNK][i % CHUNK] = v;
    }

    /// Drops the entries from `n` up.
    pub(crate) fn truncate(&mut self, n: usize) {
        if n >= self.len() {
            return;
        }
        let (chunk, keep) = (n / CHUNK, n % CHUNK);
        for c in &mut self.chunks[chunk + 1..=self.top] {
            c.clear();
        }
        self.chunks[chunk].truncate(keep);
        self.top = chunk;
    }

    /// How many entries can be pushed without allocating.
    #[inline(always)]
    pub(crate) fn room(&self) -> usize {
        let c = &self.chunks[self.top];
        let here = if c.capacity() < CHUNK {
            // A first chunk still growing: a push beyond its room would move it.
            return c.capacity() - c.len();
        } else {
            CHUNK - c.len()
        };
        here + (self.chunks.len() - self.top - 1) * CHUNK
    }

    /// Entries allocated, used or not.
    fn allocated(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum()
    }

    /// Makes room for more entries, keeping the entries allocated within `limit` (rounded up
    /// to a whole chunk): `false` when that or the allocation itself is refused.
    #[cold]
    #[inline(never)]
    pub(crate) fn grow(&mut self, limit: usize) -> bool {
        let allocated = self.allocated();
        let last = self.chunks.len() - 1;
        let first = &mut self.chunks[last];
        if first.capacity() < CHUNK {
            // The first chunk doubles up to a whole chunk.
            let want = (first.capacity() * 2).clamp(1024, CHUNK);
            let more = want - first.capacity();
            if allocated + more > limit.max(1024) {
                return false;
            }
            return first.try_reserve_exact(want - first.len()).is_ok();
        }
        if allocated >= limit {
            return false;
        }
        let mut chunk = Vec::new();
        if chunk.try_reserve_exact(CHUNK).is_err() {
            return false;
        }
        self.chunks.push(chunk);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_in_chunks_behaves_as_a_vector() {
        let mut s = ChunkStack::new();
        let mut v = Vec::new();
        let n = 3 * CHUNK + 17;
        for i in 0..n {
            if s.room() == 0 {
                assert!(s.grow(usize::MAX));
            }
            s.push(i);
            v.push(i);
        }
        assert_eq!(s.len(), n);
        assert_eq!(s.get(CHUNK), CHUNK);
        s.set(CHUNK + 1, 7);
        v[CHUNK + 1] = 7;
        for cut in [2 * CHUNK + 5, 2 * CHUNK, CHUNK - 1, 0] {
            s.truncate(cut);
            v.truncate(cut);
            assert_eq!(s.len(), cut);
            // Regrow past the cut, then pop back to it.
            for i in 0..CHUNK + 3 {
                if s.room() == 0 {
                    assert!(s.grow(usize::MAX));
                }
                s.push(i);
            }
            for _ in 0..CHUNK + 3 {
                s.pop();
            }
            assert_eq!((0..s.len()).map(|i| s.get(i)).collect::<Vec<_>>(), v);
        }
        assert!(s.is_empty());
        assert_eq!(s.pop(), None);
    }

    #[test]
    fn growth_stops_at_the_limit() {
        let mut s: ChunkStack<u64> = ChunkStack::new();
        let limit = 2 * CHUNK + 1;
        let mut pushed = 0;
        while s.room() > 0 || s.grow(limit) {
            s.push(0);
            pushed += 1;
        }
        // Whole chunks: the limit rounded up.
        assert_eq!(pushed, 3 * CHUNK);
        assert!(s.allocated() <= limit + CHUNK);
    }
}
