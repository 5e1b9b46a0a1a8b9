//! Byte-to-code-point offset conversion for long texts. Events carry byte offsets; the
//! reference counts code points (chunk sizes, Python string indices), and views count
//! characters.

/// The byte offset of every line start in `text` (0, then just after each `\n`).
pub fn line_starts(text: &str) -> Vec<usize> {
    // Counted first, so that the list is made at its size: grown by doubling, a long text's
    // list could hold twice the room it needs.
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let mut v = Vec::with_capacity(lines + 1);
    v.push(0);
    v.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
    v
}

/// The byte offset of every line start in a text, as [`line_starts`] lists them, held in 4
/// bytes each while the text is under 4 GiB: a sample of many short lines (small tool calls
/// write three lines each) keeps one for every 20 bytes of text or so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineStarts {
    /// Offsets that fit in 32 bits.
    Narrow(Vec<u32>),
    /// Offsets of a text of 4 GiB or more.
    Wide(Vec<usize>),
}

impl Default for LineStarts {
    /// The line starts of an empty text: one line, at 0.
    fn default() -> LineStarts {
        LineStarts::Narrow(vec![0])
    }
}

impl LineStarts {
    /// The line starts of `text` (0, then just after each `\n`), in a list made at its size.
    pub fn of(text: &str) -> LineStarts {
        let bytes = text.as_bytes();
        let starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
        let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
        if u32::try_from(text.len()).is_ok() {
            let mut v = Vec::with_capacity(lines);
            // Every offset is at most the text's length, which fits.
            v.extend(starts.map(|s| s as u32));
            LineStarts::Narrow(v)
        } else {
            let mut v = Vec::with_capacity(lines);
            v.extend(starts);
            LineStarts::Wide(v)
        }
    }

    /// The number of lines (at least 1).
    pub fn len(&self) -> usize {
        match self {
            LineStarts::Narrow(v) => v.len(),
            LineStarts::Wide(v) => v.len(),
        }
    }

    /// Whether there is no line (never, for a list made by [`LineStarts::of`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where line `line` (0-based) starts, if there is such a line.
    pub fn get(&self, line: usize) -> Option<usize> {
        match self {
            LineStarts::Narrow(v) => v.get(line).map(|&s| s as usize),
            LineStarts::Wide(v) => v.get(line).copied(),
        }
    }

    /// Where line `line` (0-based) starts; the line must exist (as indexing a list).
    pub fn at(&self, line: usize) -> usize {
        self.get(line).expect("a line of the text")
    }

    /// The line (0-based) holding byte `at`.
    pub fn line_of(&self, at: usize) -> usize {
        let after = match self {
            LineStarts::Narrow(v) => v.partition_point(|&s| (s as usize) <= at),
            LineStarts::Wide(v) => v.partition_point(|&s| s <= at),
        };
        after.max(1) - 1
    }
}

/// Converts byte offsets of one text into code-point offsets in O(checkpoint) time each.
#[derive(Clone, Debug, Default)]
pub struct CharIndex {
    /// Code-point count at every `STEP`-th byte (rounded down to a char boundary).
    checkpoints: Vec<(usize, usize)>,
}

const STEP: usize = 1024;

impl CharIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> CharIndex {
        let mut checkpoints = vec![(0, 0)];
        let (mut byte, mut chars) = (0, 0);
        while byte + STEP < text.len() {
            let mut next = byte + STEP;
            while !text.is_char_boundary(next) {
                next -= 1;
            }
            chars += text[byte..next].chars().count();
            byte = next;
            checkpoints.push((byte, chars));
        }
        CharIndex { checkpoints }
    }

    /// The code-point offset of `byte` (which must be a char boundary of the indexed text).
    pub fn chars_at(&self, text: &str, byte: usize) -> usize {
        let i = self.checkpoints.partition_point(|&(b, _)| b <= byte) - 1;
        let (b, c) = self.checkpoints[i];
        c + text[b..byte].chars().count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_code_points_across_checkpoints() {
        let text: String = "aé😀".repeat(1000);
        let idx = CharIndex::new(&text);
        for (cp, (byte, _)) in text.char_indices().enumerate().step_by(97) {
            assert_eq!(idx.chars_at(&text, byte), cp);
        }
        assert_eq!(idx.chars_at(&text, text.len()), 3000);
    }

    #[test]
    fn compact_line_starts_are_the_listed_ones() {
        for text in ["", "a", "\n", "a\nb", "ab\n\ncd\n", "é\n😀\n\n"] {
            let listed = line_starts(text);
            let compact = LineStarts::of(text);
            assert!(matches!(compact, LineStarts::Narrow(_)));
            assert_eq!(compact.len(), listed.len(), "{text:?}");
            assert_eq!(
                (0..compact.len())
                    .map(|i| compact.at(i))
                    .collect::<Vec<_>>(),
                listed
            );
            assert_eq!(compact.get(listed.len()), None);
            for at in 0..=text.len() + 1 {
                let line = listed.partition_point(|&s| s <= at).max(1) - 1;
                assert_eq!(compact.line_of(at), line, "{text:?} at {at}");
            }
        }
        let wide = LineStarts::Wide(vec![0, 3, 7]);
        assert_eq!(
            (wide.len(), wide.at(1), wide.line_of(6), wide.line_of(7)),
            (3, 3, 1, 2)
        );
    }
}
