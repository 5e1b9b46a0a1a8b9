//! How a command fails: a message for the user and the process exit code. Shared by the
//! command line and the workbench, which sits below it.

/// A failed command: what to print on stderr and the exit code.
#[derive(Debug)]
pub(crate) struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// A template or parse error (exit 1).
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// A usage or I/O error (exit 2).
    pub(crate) fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            code: 2,
        }
    }
}

impl Failure {
    /// A parse error (exit 1): `<Type>: <message>` as the reference raises it, then a note
    /// saying where (`  --> field 'tool_calls' at 3:14 of the generation`) when the error
    /// belongs to a field. The error's span counts bytes of the prefix followed by the
    /// generation.
    pub(crate) fn parse(e: &rtbench_engine::ParseError, prefix: &str, generation: &str) -> Failure {
        // Written out in full: the `regex` module's exception is named `error`, and its
        // message must not read as the command line's own prefix.
        let mut message = format!("error: {}", e.text());
        if let Some(field) = &e.field {
            message.push_str(&format!("\n  --> field '{field}'"));
            if let Some(at) = e.span.as_ref().map(|s| s.start) {
                let (text, at, part) = if at < prefix.len() {
                    (prefix, at, "the prefix")
                } else {
                    (generation, at - prefix.len(), "the generation")
                };
                let at = text.floor_char_boundary(at.min(text.len()));
                let before = &text[..at];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
                message.push_str(&format!(" at {line}:{column} of {part}"));
            }
        }
        Failure::invalid(message)
    }
}

/// `text` with the control characters a terminal would act on (BEL, ESC, backspace, C1
/// codes, ...) written as visible escapes (`\x07`, `\x1b`, `\u{9b}`); line breaks and tabs stay.
/// Messages quote template keys and sample text, which may hold anything: printed raw, an ESC
/// in a field name could recolour or rewrite the user's terminal.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(
            super::printable("field 'a'\nnext\tcol"),
            "field 'a'\nnext\tcol"
        );
        assert_eq!(
            super::printable("field '\u{7}\u{1b}[31mred\u{9b}\r'"),
            "field '\\x07\\x1b[31mred\\u{9b}\\x0d'"
        );
    }
}
