//! Sets of code points as sorted inclusive ranges, with the operations the lowering of classes
//! needs (union, complement, case closure) and a fast membership test.

use super::unicode::{other_cases, other_cases_ascii};
use super::unicode_tables as t;

const MAX: u32 = 0x10FFFF;

/// A set of code points: sorted, non-overlapping, non-adjacent inclusive ranges, plus a bitmap
/// for ASCII so that the common case is a single lookup.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct CharSet {
    ranges: Vec<(u32, u32)>,
    ascii: [u64; 2],
}

/// Hashes a few ranges only: equal sets still hash equally, and interning a large property
/// set (`\p{L}` has hundreds of ranges) for each of thousands of repeats stays cheap.
impl std::hash::Hash for CharSet {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let n = self.ranges.len();
        n.hash(state);
        self.ascii.hash(state);
        for i in [0, n / 2, n.saturating_sub(1)] {
            self.ranges.get(i).hash(state);
        }
    }
}

impl std::fmt::Debug for CharSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[")?;
        for (i, &(a, b)) in self.ranges.iter().enumerate().take(8) {
            if i > 0 {
                f.write_str(" ")?;
            }
            if a == b {
                write!(f, "{a:X}")?;
            } else {
                write!(f, "{a:X}-{b:X}")?;
            }
        }
        if self.ranges.len() > 8 {
            write!(f, " ...{} ranges", self.ranges.len())?;
        }
        f.write_str("]")
    }
}

impl CharSet {
    pub(crate) fn empty() -> CharSet {
        CharSet::from_sorted(Vec::new())
    }

    pub(crate) fn full() -> CharSet {
        CharSet::from_sorted(vec![(0, MAX)])
    }

    pub(crate) fn single(c: u32) -> CharSet {
        CharSet::from_sorted(vec![(c, c)])
    }

    pub(crate) fn range(lo: u32, hi: u32) -> CharSet {
        CharSet::from_ranges(vec![(lo, hi)])
    }

    /// Builds a set from ranges in any order, overlapping or not.
    pub(crate) fn from_ranges(mut ranges: Vec<(u32, u32)>) -> CharSet {
        ranges.retain(|&(a, b)| a <= b);
        ranges.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
        for (a, b) in ranges {
            if let Some(last) = out.last_mut()
                && a <= last.1.saturating_add(1)
            {
                last.1 = last.1.max(b);
                continue;
            }
            out.push((a, b));
        }
        CharSet::from_sorted(out)
    }

    #[cfg(test)]
    pub(crate) fn from_table(table: &[(u32, u32)]) -> CharSet {
        CharSet::from_ranges(table.to_vec())
    }

    fn from_sorted(ranges: Vec<(u32, u32)>) -> CharSet {
        let mut ascii = [0u64; 2];
        for &(a, b) in &ranges {
            if a > 127 {
                break;
            }
            for c in a..=b.min(127) {
                ascii[(c >> 6) as usize] |= 1 << (c & 63);
            }
        }
        CharSet { ranges, ascii }
    }

    pub(crate) fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }

    pub(crate) fn is_full(&self) -> bool {
        self.ranges == [(0, MAX)]
    }

    /// The single member, if the set has exactly one.
    pub(crate) fn single_char(&self) -> Option<u32> {
        match self.ranges.as_slice() {
            [(a, b)] if a == b => Some(*a),
            _ => None,
        }
    }

    /// Number of code points in the set.
    pub(crate) fn len(&self) -> u64 {
        self.ranges.iter().map(|&(a, b)| u64::from(b - a) + 1).sum()
    }

    #[inline]
    pub(crate) fn contains(&self, c: u32) -> bool {
        if c < 128 {
            return self.ascii[(c >> 6) as usize] & (1 << (c & 63)) != 0;
        }
        let i = self.ranges.partition_point(|&(_, hi)| hi < c);
        i < self.ranges.len() && self.ranges[i].0 <= c
    }

    pub(crate) fn union(&self, other: &CharSet) -> CharSet {
        let mut v = self.ranges.clone();
        v.extend_from_slice(&other.ranges);
        CharSet::from_ranges(v)
    }

    pub(crate) fn complement(&self) -> CharSet {
        let mut out = Vec::with_capacity(self.ranges.len() + 1);
        let mut next = 0u32;
        for &(a, b) in &self.ranges {
            if a > next {
                out.push((next, a - 1));
            }
            next = b + 1;
        }
        if next <= MAX {
            out.push((next, MAX));
        }
        CharSet::from_sorted(out)
    }

    pub(crate) fn intersect(&self, other: &CharSet) -> CharSet {
        self.complement().union(&other.complement()).complement()
    }

    /// Whether every member of this set is in `other`.
    pub(crate) fn is_subset(&self, other: &CharSet) -> bool {
        self.intersect(other) == *self
    }

    /// The code points whose case variants (or themselves) meet the set: what a case-insensitive
    /// set member matches.
    pub(crate) fn case_closure(&self, ascii_only: bool) -> CharSet {
        let mut extra = Vec::new();
        if ascii_only {
            for c in (b'A'..=b'Z').chain(b'a'..=b'z') {
                let c = u32::from(c);
                if let Some(o) = other_cases_ascii(c)
                    && !self.contains(c)
                    && self.contains(o)
                {
                    extra.push((c, c));
                }
            }
        } else {
            // The case relation is symmetric, so the characters to add are the other cases of
            // the members: visit only the table entries inside the set's ranges (a binary
            // search per range), not the whole table, so that a long case-insensitive
            // literal compiles in time linear in its length.
            for &(a, b) in &self.ranges {
                let from = t::CASES.partition_point(|&(k, _)| k < a);
                for &(k, _) in t::CASES[from..].iter().take_while(|&&(k, _)| k <= b) {
                    for &o in other_cases(k) {
                        if !self.contains(o) {
                            extra.push((o, o));
                        }
                    }
                }
            }
        }
        if extra.is_empty() {
            return self.clone();
        }
        extra.extend_from_slice(&self.ranges);
        CharSet::from_ranges(extra)
    }

    /// The set of first bytes of the UTF-8 encodings of the members.
    pub(crate) fn first_bytes(&self) -> [bool; 256] {
        let mut out = [false; 256];
        for &(a, b) in &self.ranges {
            // Walk the range by UTF-8 length classes; within a class the first byte is monotone.
            for (lo, hi) in [(0u32, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, MAX)] {
                let s = a.max(lo);
                let e = b.min(hi);
                if s > e {
                    continue;
                }
                let fs = first_byte(s);
                let fe = first_byte(e);
                for byte in fs..=fe {
                    out[byte as usize] = true;
                }
            }
        }
        out
    }
}

fn first_byte(c: u32) -> u8 {
    let mut buf = [0u8; 4];
    match char::from_u32(c) {
        Some(ch) => ch.encode_utf8(&mut buf).as_bytes()[0],
        // A surrogate: encode as its neighbour would be (never occurs in a `str`).
        None => 0xED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_ops() {
        let a = CharSet::from_ranges(vec![(10, 20), (5, 7), (21, 25), (100, 100)]);
        assert_eq!(a.ranges(), &[(5, 7), (10, 25), (100, 100)]);
        assert!(a.contains(5) && a.contains(25) && !a.contains(26) && a.contains(100));
        let c = a.complement();
        assert!(!c.contains(5) && c.contains(0) && c.contains(MAX) && c.contains(8));
        assert_eq!(c.complement(), a);
        assert!(CharSet::full().is_full());
        assert!(CharSet::empty().complement().is_full());
        let i = a.intersect(&CharSet::range(6, 12));
        assert_eq!(i.ranges(), &[(6, 7), (10, 12)]);
        assert_eq!(CharSet::single(0x1F600).single_char(), Some(0x1F600));
    }

    /// The closure visits the members' entries, which is only right if the relation is
    /// symmetric; check that over the whole table, and the result against the definition.
    #[test]
    fn case_relation_is_symmetric_and_closure_follows_the_definition() {
        for &(c, _) in t::CASES {
            for &o in other_cases(c) {
                assert!(other_cases(o).contains(&c), "{c:X} -> {o:X}");
            }
        }
        let by_definition = |set: &CharSet| {
            let mut extra: Vec<(u32, u32)> = t::CASES
                .iter()
                .map(|&(c, _)| c)
                .filter(|&c| !set.contains(c) && other_cases(c).iter().any(|&o| set.contains(o)))
                .map(|c| (c, c))
                .collect();
            extra.extend_from_slice(set.ranges());
            CharSet::from_ranges(extra)
        };
        for set in [
            CharSet::single('k' as u32),
            CharSet::single('I' as u32),
            CharSet::range('a' as u32, 'z' as u32),
            CharSet::from_ranges(vec![(0x130, 0x131), (0x3A3, 0x3A3), (0x1E9E, 0x1E9E)]),
            CharSet::range(0, 0x2FF),
            CharSet::range(0x400, 0x10FFFF),
            CharSet::empty(),
        ] {
            assert_eq!(set.case_closure(false), by_definition(&set), "{set:?}");
        }
    }

    #[test]
    fn closure_and_bytes() {
        let k = CharSet::single('k' as u32).case_closure(false);
        assert!(k.contains('K' as u32) && k.contains(0x212A) && k.contains('k' as u32));
        let k = CharSet::single('k' as u32).case_closure(true);
        assert!(k.contains('K' as u32) && !k.contains(0x212A));
        let fb = CharSet::from_ranges(vec![
            ('a' as u32, 'a' as u32),
            (0xE9, 0xE9),
            (0x1F600, 0x1F600),
        ])
        .first_bytes();
        assert!(fb[b'a' as usize] && fb[0xC3] && fb[0xF0]);
        assert_eq!(fb.iter().filter(|&&b| b).count(), 3);
    }
}
