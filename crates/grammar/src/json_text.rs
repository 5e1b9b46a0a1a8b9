//! Text that Python's `json.loads` reads as something other than a string: what a parameter
//! declared a string must not be written as where the parser reads its text as JSON when it
//! can (`xml-inline` with a `json` value parser and `allow_non_json`), since `123` there reads
//! back as the number 123. See [`crate::ir::Node::TextWithout`]'s `not_json`.
//!
//! The language left out: JSON whitespace (space, tab, line feed, carriage return), then a
//! number (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`), `true`, `false`, `null`, `NaN`,
//! `Infinity` or `-Infinity`, then JSON whitespace; or JSON whitespace then `[` or `{` and
//! anything. It is given as a small automaton ([`step`]) for the BNF outputs, as patterns for
//! Lark ([`LARK_PATTERNS`]) and as a function for the compiler's own matcher.

/// Lark patterns of the text left out (each is excluded with `& ~/.../`).
pub(crate) const LARK_PATTERNS: [&str; 2] = [
    r"[\t\n\r ]*(?:-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null|NaN|-?Infinity)[\t\n\r ]*",
    r"[\t\n\r ]*[\[{](?s:.*)",
];

/// A state of the automaton that reads text and tells whether `json.loads` takes it as a
/// value other than a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum State {
    /// Only JSON whitespace so far.
    Start,
    /// A minus sign.
    Minus,
    /// `0` as the number's integer part.
    Zero,
    /// Integer digits.
    Int,
    /// A decimal point with no digit after it yet.
    Dot,
    /// Fraction digits.
    Frac,
    /// An exponent mark.
    Exp,
    /// An exponent's sign.
    ExpSign,
    /// Exponent digits.
    ExpDigits,
    /// `matched` characters of a keyword (`true`, ..., `Infinity` after an optional minus).
    Word {
        /// Which keyword (an index into [`WORDS`]).
        word: u8,
        /// How many of its characters are read.
        matched: u8,
    },
    /// JSON whitespace after a complete value.
    Trailing,
    /// `[` or `{` after the whitespace: left out whatever follows.
    Structure,
    /// Anything else: the text reads as a string whatever follows.
    Text,
}

/// The keywords `json.loads` reads, `Infinity` last (the one a minus may precede).
const WORDS: [&str; 6] = ["true", "false", "null", "NaN", "Infinity", "Infinity"];

fn json_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// The state after reading `c` in `state`.
pub(crate) fn step(state: State, c: char) -> State {
    use State::*;
    let number_end = |c: char, allow_dot_exp: (bool, bool)| match c {
        '.' if allow_dot_exp.0 => Dot,
        'e' | 'E' if allow_dot_exp.1 => Exp,
        c if json_ws(c) => Trailing,
        _ => Text,
    };
    match state {
        Start => match c {
            c if json_ws(c) => Start,
            '-' => Minus,
            '0' => Zero,
            '1'..='9' => Int,
            '[' | '{' => Structure,
            c => WORDS[..5]
                .iter()
                .position(|w| w.starts_with(c))
                .map_or(Text, |i| Word {
                    word: i as u8,
                    matched: 1,
                }),
        },
        Minus => match c {
            '0' => Zero,
            '1'..='9' => Int,
            'I' => Word {
                word: 5,
                matched: 1,
            },
            _ => Text,
        },
        Zero => number_end(c, (true, true)),
        Int => match c {
            '0'..='9' => Int,
            c => number_end(c, (true, true)),
        },
        Dot => match c {
            '0'..='9' => Frac,
            _ => Text,
        },
        Frac => match c {
            '0'..='9' => Frac,
            c => number_end(c, (false, true)),
        },
        Exp => match c {
            '+' | '-' => ExpSign,
            '0'..='9' => ExpDigits,
            _ => Text,
        },
        ExpSign => match c {
            '0'..='9' => ExpDigits,
            _ => Text,
        },
        ExpDigits => match c {
            '0'..='9' => ExpDigits,
            c => number_end(c, (false, false)),
        },
        Word { word, matched } => {
            let w = WORDS[usize::from(word)];
            if usize::from(matched) == w.len() {
                return if json_ws(c) { Trailing } else { Text };
            }
            if w[usize::from(matched)..].starts_with(c) {
                Word {
                    word,
                    matched: matched + 1,
                }
            } else {
                Text
            }
        }
        Trailing => {
            if json_ws(c) {
                Trailing
            } else {
                Text
            }
        }
        Structure => Structure,
        Text => Text,
    }
}

/// Whether text that ends in `state` is left out (reads as a value other than a string).
pub(crate) fn is_other_json(state: State) -> bool {
    match state {
        State::Zero
        | State::Int
        | State::Frac
        | State::ExpDigits
        | State::Trailing
        | State::Structure => true,
        State::Word { word, matched } => usize::from(matched) == WORDS[usize::from(word)].len(),
        _ => false,
    }
}

/// The characters [`step`] tells apart; every other character leads to [`State::Text`] from
/// every state but [`State::Structure`].
pub(crate) fn alphabet() -> Vec<char> {
    let mut out: Vec<char> = " \t\n\r-+.eE0123456789[{".chars().collect();
    for w in WORDS {
        out.extend(w.chars());
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Whether `text` is left out (see the module docs).
pub(crate) fn reads_as_other_json(text: &str) -> bool {
    is_other_json(text.chars().fold(State::Start, step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_json_loads_reads_as_another_type_is_left_out() {
        for t in [
            "1",
            "-0",
            " 12 ",
            "1.5",
            "1e5",
            "-2.5E-3",
            "true",
            "false\n",
            "null",
            "NaN",
            "Infinity",
            "-Infinity",
            "[1]",
            "{}",
            " [oops",
        ] {
            assert!(reads_as_other_json(t), "{t:?}");
        }
        for t in [
            "",
            " ",
            "abc",
            "01",
            "1.",
            "1e",
            "+1",
            "-",
            "tru",
            "trueish",
            "true x",
            "nan",
            "-NaN",
            "\"1\"",
            "Paris",
            "new york",
            "2024-01-01",
            "1 2",
            "\u{a0}1",
        ] {
            assert!(!reads_as_other_json(t), "{t:?}");
        }
    }
}
