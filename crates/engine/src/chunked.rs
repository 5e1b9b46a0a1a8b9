//! [`Chunked`]: a list that grows by fixed-size chunks instead of by doubling.
//!
//! A `Vec` that doubles holds up to twice the room its items need, and while it moves to a
//! larger block it holds the old and the new block at once: three times the items' size at
//! that moment. The records a traced parse keeps for every event of a long text (an event's
//! mark, a region's compact record) are built while the text, the parser's copy of it and the
//! message are all held, so that moment was the parse's peak. A chunked list never moves its
//! items: it holds at most one partly filled chunk beyond them.
//!
//! (Written here rather than taken from a crate: it is the part of a segmented vector the
//! engine needs, a push, a length and indexing, in a few lines.)

/// Items per chunk: 4,096 (a chunk of 8-byte records is 32 KiB).
const CHUNK: usize = 4096;

/// A list of `T` in chunks of 4,096 items (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
}

impl<T> Default for Chunked<T> {
    fn default() -> Chunked<T> {
        Chunked { chunks: Vec::new() }
    }
}

impl<T> Chunked<T> {
    /// Appends `item` after the others.
    pub fn push(&mut self, item: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => last.push(item),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(item);
                self.chunks.push(chunk);
            }
        }
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        match self.chunks.last() {
            Some(last) => (self.chunks.len() - 1) * CHUNK + last.len(),
            None => 0,
        }
    }

    /// Whether the list has no item.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// How many items fit before another chunk is made.
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum()
    }

    /// Frees the room the last chunk keeps beyond its items (once no item is to come).
    pub fn shrink_to_fit(&mut self) {
        if let Some(last) = self.chunks.last_mut() {
            last.shrink_to_fit();
        }
        self.chunks.shrink_to_fit();
    }
}

impl<T> std::ops::Index<usize> for Chunked<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl<T: Copy> Chunked<T> {
    /// Item `i`.
    pub fn get(&self, i: usize) -> Option<T> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK).copied()
    }

    /// Every item, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        self.chunks.iter().flatten().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_read_back_in_order_across_chunks() {
        let mut c = Chunked::default();
        assert_eq!((c.len(), c.get(0)), (0, None));
        let n = 3 * CHUNK + 5;
        for i in 0..n {
            c.push(i as u32);
        }
        assert_eq!(c.len(), n);
        assert_eq!(c.get(CHUNK), Some(CHUNK as u32));
        assert_eq!(c.get(n - 1), Some(n as u32 - 1));
        assert_eq!(c.get(n), None);
        assert!(c.iter().eq(0..n as u32));
        assert_eq!((c[CHUNK + 1], c.capacity()), (CHUNK as u32 + 1, 4 * CHUNK));
        c.shrink_to_fit();
        assert_eq!(c.capacity(), 3 * CHUNK + 5);
        assert!(c.iter().eq(0..n as u32));
    }
}
