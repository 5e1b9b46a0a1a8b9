//! The search behind a literal delimiter: the leftmost match, the longest at that start, of
//! any of its literals.
//!
//! Most delimiters are one literal, searched with `memchr`'s substring finder: it keeps little
//! more than the literal, however long (an Aho-Corasick automaton keeps a state per byte, some
//! 80 bytes each, so a 5 MB delimiter held hundreds of MB). Several literals use Aho-Corasick,
//! in automata of at most [`SHARD`] literals each: the automaton's construction moves its match
//! states to the front by pairwise swaps whose bookkeeping is quadratic in their number (seconds
//! for 50,000 literals), so a huge list is split and the shards' matches are compared, which
//! keeps the build linear. The leftmost-longest match over all shards is the leftmost of the
//! shards' leftmost-longest matches, the longest at a tie.

use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};
use memchr::memmem;

/// The most literals one Aho-Corasick automaton holds.
const SHARD: usize = 512;

/// Total literal bytes past which an automaton is a contiguous NFA rather than a DFA: the DFA's
/// construction follows failure links from every state, quadratic in a literal's length when
/// it repeats itself ("xxxx…"), while the contiguous NFA is built in linear time.
const LARGE_LITERALS: usize = 4096;

/// A compiled search for a list of non-empty literals.
#[derive(Clone, Debug)]
pub(super) enum Matcher {
    /// A single literal.
    One(Box<memmem::Finder<'static>>),
    /// Several (or none): automata of at most [`SHARD`] literals.
    Many(Vec<AhoCorasick>),
}

impl Matcher {
    /// The search for `literals` (non-empty strings).
    pub(super) fn new(literals: &[&str]) -> Matcher {
        if let [one] = literals {
            return Matcher::One(Box::new(memmem::Finder::new(one.as_bytes()).into_owned()));
        }
        Matcher::Many(
            literals
                .chunks(SHARD)
                .map(|shard| {
                    let total: usize = shard.iter().map(|l| l.len()).sum();
                    let kind = (total > LARGE_LITERALS).then_some(AhoCorasickKind::ContiguousNFA);
                    AhoCorasick::builder()
                        .match_kind(MatchKind::LeftmostLongest)
                        .kind(kind)
                        .build(shard)
                        .expect("a shard of literals always fits an Aho-Corasick automaton")
                })
                .collect(),
        )
    }

    /// The leftmost-longest match in `hay` that starts at or after `pos`.
    pub(super) fn find(&self, hay: &str, pos: usize) -> Option<Range<usize>> {
        match self {
            Matcher::One(finder) => {
                let start = pos + finder.find(&hay.as_bytes()[pos..])?;
                Some(start..start + finder.needle().len())
            }
            Matcher::Many(shards) => shards
                .iter()
                .filter_map(|ac| ac.find(Input::new(hay).range(pos..)))
                .map(|m| m.start()..m.end())
                .min_by_key(|r| (r.start, std::cmp::Reverse(r.end))),
        }
    }

    /// Every match in `text`, non-overlapping, left to right.
    pub(super) fn find_iter<'a>(
        &'a self,
        text: &'a str,
    ) -> impl Iterator<Item = Range<usize>> + 'a {
        let mut at = 0;
        std::iter::from_fn(move || {
            let found = self.find(text, at)?;
            at = found.end;
            Some(found)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One literal, a few, and more than a shard's worth: each finds what one leftmost-longest
    /// automaton over all of them finds, from every position.
    #[test]
    fn shards_and_the_single_finder_find_what_one_automaton_finds() {
        let many: Vec<String> = (0..SHARD * 2 + 7).map(|i| format!("<{i}")).collect();
        let lists: [Vec<&str>; 4] = [
            vec!["</think>"],
            vec!["<a>", "<a>b", "b"],
            many.iter().map(String::as_str).collect(),
            vec!["ab", "abc", "b", "bcd", "c"],
        ];
        let hay = "x<a>bcd <1<10<1000 </think> abcd <1030b";
        for literals in &lists {
            let matcher = Matcher::new(literals);
            let whole = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(literals)
                .expect("a small automaton");
            for pos in 0..=hay.len() {
                let want = whole
                    .find(Input::new(hay).range(pos..))
                    .map(|m| m.start()..m.end());
                assert_eq!(matcher.find(hay, pos), want, "{literals:?} from {pos}");
            }
            let want: Vec<_> = whole.find_iter(hay).map(|m| m.start()..m.end()).collect();
            assert_eq!(matcher.find_iter(hay).collect::<Vec<_>>(), want);
        }
    }
}
