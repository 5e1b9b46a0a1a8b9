//! Errors from compiling or running a pattern.

use std::fmt;

/// Why a pattern could not be compiled or a search could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegexError {
    /// The reference rejects the pattern. `message` is the reference's wording without the
    /// position; `offset` is the byte offset in the pattern the reference points at.
    Syntax { message: String, offset: usize },
    /// The pattern uses a construct this engine deliberately does not implement (it would rather
    /// refuse than match differently). `construct` names it; `offset` is its byte offset.
    Unsupported { construct: String, offset: usize },
    /// The compiled program would be too large.
    TooLarge { message: String },
    /// The search needed more work than its budget allows (a pathological pattern on a long
    /// input); no result is reported rather than a wrong one.
    Budget,
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegexError::Syntax { message, offset } => write!(f, "{message} at position {offset}"),
            RegexError::Unsupported { construct, offset } => {
                write!(f, "unsupported construct at position {offset}: {construct}")
            }
            RegexError::TooLarge { message } => write!(f, "pattern too large: {message}"),
            RegexError::Budget => f.write_str(
                "the search was stopped: it exceeded its work budget (pathological pattern)",
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
            offset: 4,
        };
        assert_eq!(e.to_string(), "missing ) at position 4");
        let e = RegexError::Unsupported {
            construct: "recursion (?R)".into(),
            offset: 0,
        };
        assert!(e.to_string().contains("recursion"));
        assert!(RegexError::Budget.to_string().contains("budget"));
    }
}
