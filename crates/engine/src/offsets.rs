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
}
