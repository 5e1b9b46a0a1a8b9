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

/// What a parse error is located with, beyond its texts: the files the prefix and the
/// generation live in, and the template's file (a failed transform is shown at its
/// placeholder there).
#[derive(Default)]
pub(crate) struct Where<'a> {
    pub places: rtbench_tooling::place::Places,
    pub template: Option<(
        &'a rtbench_engine::template::Template,
        &'a rtbench_engine::template::TemplateSource,
    )>,
}

impl Failure {
    /// A parse error (exit 1): `<Type>: <message>` as the reference raises it, then a note
    /// saying where (`  --> field 'tool_calls' at x.sample:5:14 (generation 1:14)`, places
    /// named as [`rtbench_tooling::place`] names them) when the error belongs to a field. The
    /// error's span counts bytes of the prefix followed by the generation.
    pub(crate) fn parse(e: &rtbench_engine::ParseError, prefix: &str, generation: &str) -> Failure {
        Failure::parse_at(e, prefix, generation, &Where::default())
    }

    /// [`Failure::parse`], with places named in their files, and a failed transform located
    /// at its placeholder in the template file (with what to write, given the parsed value).
    pub(crate) fn parse_at(
        e: &rtbench_engine::ParseError,
        prefix: &str,
        generation: &str,
        at: &Where<'_>,
    ) -> Failure {
        // Written out in full: the `regex` module's exception is named `error`, and its
        // message must not read as the command line's own prefix.
        let mut message = format!("error: {}", e.text());
        let Some(field) = &e.field else {
            return Failure::invalid(message);
        };
        message.push_str(&format!("\n  --> field '{field}'"));
        let document = format!("{prefix}{generation}");
        if let Some(start) = e.span.as_ref().map(|s| s.start) {
            let place = at.places.place(&document, prefix.len(), start);
            message.push_str(&format!(" at {place}"));
        }
        if let Some((template, source)) = at.template
            && let Some(note) =
                rtbench_tooling::transform_error::transform_note(source, template, e, &document)
        {
            // Rendered like a compiler's note: the template's line with a caret, and the help.
            let shown = note.to_string();
            let rest = shown.split_once('\n').map_or("", |(_, rest)| rest);
            message.push_str(&format!("\nnote: {}\n{rest}", note.message));
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
