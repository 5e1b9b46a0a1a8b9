//! "Any text in which none of these strings occurs", as a finite automaton: the Aho-Corasick
//! automaton of the excluded strings (KMP's failure function, generalised to several strings)
//! with the states that complete a string removed. GBNF and EBNF have no negation, so their
//! emitters write one rule per state; the language is exact, overlaps included (`aab` is
//! excluded from `aaab` because the failure links remember the `aa` already read).

use std::collections::BTreeMap;

/// One state's way out on a set of characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// The characters (listed), or with `negated` every character but these.
    pub chars: Vec<char>,
    /// The class is the complement of `chars`.
    pub negated: bool,
    /// The state reached.
    pub target: usize,
}

/// The automaton: a character with no transition would complete an excluded string. Every
/// state is accepting (the text may end anywhere) unless it is made with [`not_json`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Automaton {
    /// Each state's transitions.
    pub states: Vec<Vec<Transition>>,
    /// The state to start in.
    pub start: usize,
    /// Whether the text may end in each state.
    pub accepting: Vec<bool>,
}

/// Builds the automaton of texts in which no string of `excludes` occurs and, with
/// `not_start`, that do not begin with that character. Empty strings are ignored.
pub fn automaton(excludes: &[String], not_start: Option<char>) -> Automaton {
    // The trie: children per node, and whether the node completes an excluded string.
    let mut children: Vec<BTreeMap<char, usize>> = vec![BTreeMap::new()];
    let mut terminal = vec![false];
    for word in excludes.iter().filter(|w| !w.is_empty()) {
        let mut node = 0;
        for c in word.chars() {
            node = match children[node].get(&c) {
                Some(&n) => n,
                None => {
                    children.push(BTreeMap::new());
                    terminal.push(false);
                    let n = children.len() - 1;
                    children[node].insert(c, n);
                    n
                }
            };
        }
        terminal[node] = true;
    }
    // Failure links, breadth first; a node whose failure is terminal is terminal too.
    let n = children.len();
    let mut fail = vec![0usize; n];
    let mut order = Vec::with_capacity(n);
    let mut queue: std::collections::VecDeque<usize> = children[0].values().copied().collect();
    while let Some(node) = queue.pop_front() {
        order.push(node);
        let kids: Vec<(char, usize)> = children[node].iter().map(|(c, n)| (*c, *n)).collect();
        for (c, child) in kids {
            let mut f = fail[node];
            let target = loop {
                if let Some(&t) = children[f].get(&c)
                    && t != child
                {
                    break t;
                }
                if f == 0 {
                    break 0;
                }
                f = fail[f];
            };
            fail[child] = target;
            if terminal[target] {
                terminal[child] = true;
            }
            queue.push_back(child);
        }
    }
    let alphabet: Vec<char> = {
        let mut a: Vec<char> = children.iter().flat_map(|m| m.keys().copied()).collect();
        a.sort_unstable();
        a.dedup();
        a
    };
    let delta = |mut node: usize, c: char| -> usize {
        loop {
            if let Some(&t) = children[node].get(&c) {
                return t;
            }
            if node == 0 {
                return 0;
            }
            node = fail[node];
        }
    };
    // Live states renumbered densely, the root first.
    let live: Vec<usize> = (0..n).filter(|s| !terminal[*s]).collect();
    let index: BTreeMap<usize, usize> = live.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    let transitions_of = |state: usize, forbid: Option<char>| -> Vec<Transition> {
        // Alphabet characters grouped by target; everything else goes back to the root.
        let mut by_target: BTreeMap<usize, Vec<char>> = BTreeMap::new();
        let mut not_root: Vec<char> = Vec::new();
        for &c in &alphabet {
            let t = delta(state, c);
            if terminal[t] || Some(c) == forbid {
                not_root.push(c);
                continue;
            }
            if t != 0 {
                not_root.push(c);
                by_target.entry(index[&t]).or_default().push(c);
            }
        }
        let mut out = Vec::new();
        let mut root_excluded = not_root;
        if let Some(f) = forbid
            && !alphabet.contains(&f)
        {
            root_excluded.push(f);
            root_excluded.sort_unstable();
        }
        out.push(Transition {
            chars: root_excluded,
            negated: true,
            target: 0,
        });
        for (target, chars) in by_target {
            out.push(Transition {
                chars,
                negated: false,
                target,
            });
        }
        out
    };
    let mut states: Vec<Vec<Transition>> = live.iter().map(|&s| transitions_of(s, None)).collect();
    let start = match not_start {
        None => 0,
        Some(c) => {
            states.push(transitions_of(0, Some(c)));
            states.len() - 1
        }
    };
    let _ = order;
    let accepting = vec![true; states.len()];
    Automaton {
        states,
        start,
        accepting,
    }
}
/// The automaton of texts in which no string of `excludes` occurs and that `json.loads` does
/// not read as a value other than a string (see [`crate::Node::TextWithout`]'s `not_json`):
/// the exclusion automaton run in step with the JSON reader's, one state per pair reached.
/// Pairs after an array's or object's opening are left out (no text from there is kept).
pub fn not_json(excludes: &[String]) -> Automaton {
    use crate::json_text::{State, alphabet, is_other_json, step};
    let base = automaton(excludes, None);
    let json_chars = alphabet();
    let mut index: BTreeMap<(usize, State), usize> = BTreeMap::new();
    let mut pairs: Vec<(usize, State)> = Vec::new();
    let mut intern = |pair: (usize, State), pairs: &mut Vec<(usize, State)>| -> usize {
        *index.entry(pair).or_insert_with(|| {
            pairs.push(pair);
            pairs.len() - 1
        })
    };
    intern((base.start, State::Start), &mut pairs);
    let mut states: Vec<Vec<Transition>> = Vec::new();
    let mut i = 0;
    while i < pairs.len() {
        let (a, j) = pairs[i];
        let mut out: Vec<Transition> = Vec::new();
        for t in &base.states[a] {
            let takes = |c: char| t.chars.contains(&c) != t.negated;
            // The JSON reader's own characters, grouped by the pair they lead to.
            let mut by_target: BTreeMap<usize, Vec<char>> = BTreeMap::new();
            for &c in json_chars.iter().filter(|&&c| takes(c)) {
                let next = step(j, c);
                if next != State::Structure {
                    let k = intern((t.target, next), &mut pairs);
                    by_target.entry(k).or_default().push(c);
                }
            }
            for (target, chars) in by_target {
                out.push(Transition {
                    chars,
                    negated: false,
                    target,
                });
            }
            // The class's other characters all lead the reader to the same state.
            let other = step(j, '\u{0}');
            if other == State::Structure {
                continue;
            }
            let target = intern((t.target, other), &mut pairs);
            let rest = if t.negated {
                let mut chars = t.chars.clone();
                chars.extend(json_chars.iter().copied());
                chars.sort_unstable();
                chars.dedup();
                Transition {
                    chars,
                    negated: true,
                    target,
                }
            } else {
                Transition {
                    chars: t
                        .chars
                        .iter()
                        .copied()
                        .filter(|c| !json_chars.contains(c))
                        .collect(),
                    negated: false,
                    target,
                }
            };
            if rest.negated || !rest.chars.is_empty() {
                out.push(rest);
            }
        }
        states.push(out);
        i += 1;
    }
    let accepting = pairs.iter().map(|&(_, j)| !is_other_json(j)).collect();
    Automaton {
        states,
        start: 0,
        accepting,
    }
}

impl Automaton {
    /// Whether the automaton accepts `text` (for tests and self-checks).
    pub fn accepts(&self, text: &str) -> bool {
        let mut state = self.start;
        for c in text.chars() {
            let next = self.states[state].iter().find(|t| {
                if t.negated {
                    !t.chars.contains(&c)
                } else {
                    t.chars.contains(&c)
                }
            });
            match next {
                Some(t) => state = t.target,
                None => return false,
            }
        }
        self.accepting[state]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute(text: &str, excludes: &[&str], not_start: Option<char>) -> bool {
        excludes.iter().all(|e| !text.contains(e)) && not_start.is_none_or(|c| !text.starts_with(c))
    }

    #[test]
    fn overlapping_delimiters_are_excluded_exactly() {
        let a = automaton(&["aab".into()], None);
        for text in [
            "", "a", "aa", "aaa", "ab", "aba", "abaab", "aaab", "xaab", "aaaaaa", "baab",
        ] {
            assert_eq!(a.accepts(text), brute(text, &["aab"], None), "{text:?}");
        }
        assert!(!a.accepts("aaab"));
        assert!(a.accepts("abab"));
    }

    #[test]
    fn text_that_reads_as_other_json_is_left_out_with_the_excluded_strings() {
        let a = not_json(&["</v>".into()]);
        let brute = |t: &str| !t.contains("</v>") && !crate::json_text::reads_as_other_json(t);
        // All texts over a few characters up to length 5.
        let chars = ['1', '.', 'e', 't', 'r', ' ', '<', '/', 'v', '>', 'x', '['];
        let mut texts = vec![String::new()];
        for _ in 0..5 {
            texts = texts
                .iter()
                .flat_map(|t| chars.iter().map(move |c| format!("{t}{c}")))
                .collect();
            for t in &texts {
                assert_eq!(a.accepts(t), brute(t), "{t:?}");
            }
        }
        for t in ["-Infinity", "-Inf", "null ", "nul", "NaN", "1e+5", "1e+"] {
            assert_eq!(a.accepts(t), brute(t), "{t:?}");
        }
    }

    #[test]
    fn every_short_text_agrees_with_a_direct_search() {
        let sets: [&[&str]; 4] = [
            &["aab"],
            &["ab", "ba"],
            &["abab", "bab"],
            &["</think>", "<tool_call>", "<|im_end|>"],
        ];
        let chars = ['a', 'b', 'x'];
        for excludes in sets {
            let owned: Vec<String> = excludes.iter().map(|s| s.to_string()).collect();
            for not_start in [None, Some('a')] {
                let a = automaton(&owned, not_start);
                // All texts over {a, b, x} up to length 7.
                let mut texts = vec![String::new()];
                for _ in 0..7 {
                    let next: Vec<String> = texts
                        .iter()
                        .flat_map(|t| chars.iter().map(move |c| format!("{t}{c}")))
                        .collect();
                    for t in &next {
                        assert_eq!(
                            a.accepts(t),
                            brute(t, excludes, not_start),
                            "{t:?} {excludes:?}"
                        );
                    }
                    texts = next;
                }
            }
        }
    }
}
