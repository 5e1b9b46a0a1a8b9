//! Errors from compiling or running a pattern.

use std::fmt;

/// Why a pattern could not be compiled or a search could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegexError {
    /// The reference rejects the pattern. `message` is the reference's wording without the
    /// position; `offset` is the byte offset in the pattern the reference points at (for
    /// locating it in a file) and `position` the same place in code points (what the
    /// reference's message says).
    Syntax {
        /// The reference's error message, without its position.
        message: String,
        /// Where the error is, as a byte offset in the pattern.
        offset: usize,
        /// Where the error is, in code points (the position the reference reports).
        position: usize,
    },
    /// The pattern uses a construct this engine deliberately does not implement (it would rather
    /// refuse than match differently). `construct` names it; `offset` is its byte offset and
    /// `position` its code-point offset.
    Unsupported {
        /// The construct refused, with its syntax (for example `named group call (?&name)`).
        construct: String,
        /// Where the construct starts, as a byte offset in the pattern.
        offset: usize,
        /// Where the construct starts, in code points.
        position: usize,
    },
    /// The pattern nests groups so deeply that the reference's recursive parser or compiler
    /// gives up with `RecursionError` (at a depth of a few hundred groups, measured on the
    /// reference as transformers loads a template). `offset` (bytes) and `position` (code
    /// points) point at the group that crosses the limit.
    TooDeep {
        /// The group that crosses the limit, as a byte offset in the pattern.
        offset: usize,
        /// The group that crosses the limit, in code points.
        position: usize,
    },
    /// The compiled program would be too large.
    TooLarge {
        /// What was too large: more instructions than the limit, or nesting too deep for any
        /// thread that could be started to compile it.
        message: String,
    },
    /// The search needed more work than its budget allows, or more memory (a pathological
    /// pattern on a long input); no result is reported rather than a wrong one.
    Budget,
    /// The text is longer than a search accepts (4 GiB less a byte: the matcher stores
    /// positions in four bytes).
    TextTooLong {
        /// The text's length in bytes.
        len: usize,
    },
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegexError::Syntax {
                message, position, ..
            } => write!(f, "{message} at position {position}"),
            RegexError::Unsupported {
                construct,
                position,
                ..
            } => {
                write!(
                    f,
                    "unsupported construct at position {position}: {construct}"
                )
            }
            RegexError::TooDeep { position, .. } => write!(
                f,
                "groups nested too deeply at position {position} (the reference fails with \
                 RecursionError: maximum recursion depth exceeded)"
            ),
            RegexError::TooLarge { message } => write!(f, "pattern too large: {message}"),
            RegexError::Budget => f.write_str(
                "the search was stopped: it exceeded its work budget (pathological pattern)",
            ),
            RegexError::TextTooLong { len } => write!(
                f,
                "the text is {len} bytes long; a search reads at most 4 GiB of text"
            ),
        }
    }
}

impl std::error::Error for RegexError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_python_like() {
        let e = RegexError::Syntax {
            message: "missing )".into(),
            offset: 7,
            position: 4,
        };
        assert_eq!(e.to_string(), "missing ) at position 4");
        let e = RegexError::Unsupported {
            construct: "recursion (?R)".into(),
            offset: 0,
            position: 0,
        };
        assert!(e.to_string().contains("recursion"));
        assert!(RegexError::Budget.to_string().contains("budget"));
    }
}
