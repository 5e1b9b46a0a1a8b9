//! Diagnostics: an error or warning located in a file, rendered the way compilers do it
//! (`file:line:col`, the offending line, a caret under the culprit, and what to do).
//!
//! Rendering here is plain text; views may colour the parts.

use std::fmt;
use std::ops::Range;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The input cannot be used.
    Error,
    /// The input works but probably not as meant.
    Warning,
}

/// A place in a text file.
#[derive(Clone, Debug, PartialEq)]
pub struct Location {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// The byte range the diagnostic points at.
    pub span: Range<usize>,
    /// The text of the line (without its newline).
    pub line_text: String,
    /// How many characters of the line the caret underlines (at least 1).
    pub caret_len: usize,
}

impl Location {
    /// Locates `span` in `source`.
    pub fn new(source: &str, span: Range<usize>) -> Location {
        let start = source.floor_char_boundary(span.start.min(source.len()));
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let line = source[..start].matches('\n').count() + 1;
        let column = source[line_start..start].chars().count() + 1;
        let end = source.floor_char_boundary(span.end.clamp(start, line_end));
        let caret_len = source[start..end].chars().count().max(1);
        Location {
            line,
            column,
            span,
            line_text: source[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
            caret_len,
        }
    }
}

/// A message about a file, optionally located.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, in one line.
    pub message: String,
    /// The file as the user named it.
    pub file: Option<String>,
    /// Where in the file, when known.
    pub location: Option<Location>,
    /// What to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error with no location yet.
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            file: None,
            location: None,
            help: None,
        }
    }

    /// A warning with no location yet.
    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }

    /// Names the file the diagnostic is about.
    pub fn in_file(mut self, file: impl Into<String>) -> Diagnostic {
        self.file = Some(file.into());
        self
    }

    /// Locates the diagnostic at a byte range of the file's text.
    pub fn at(mut self, source: &str, span: Range<usize>) -> Diagnostic {
        self.location = Some(Location::new(source, span));
        self
    }

    /// Adds advice on how to fix it.
    pub fn with_help(mut self, help: Option<String>) -> Diagnostic {
        self.help = help;
        self
    }

    /// `file:line:col` (or as much of it as is known).
    pub fn position(&self) -> Option<String> {
        match (&self.file, &self.location) {
            (Some(f), Some(l)) => Some(format!("{f}:{}:{}", l.line, l.column)),
            (Some(f), None) => Some(f.clone()),
            (None, Some(l)) => Some(format!("{}:{}", l.line, l.column)),
            (None, None) => None,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{label}: {}", self.message)?;
        if let Some(pos) = self.position() {
            write!(f, "\n  --> {pos}")?;
        }
        if let Some(loc) = &self.location {
            let num = loc.line.to_string();
            let pad = " ".repeat(num.len());
            let shown: String = loc
                .line_text
                .chars()
                .map(|c| if c == '\t' { ' ' } else { c })
                .collect();
            write!(
                f,
                "\n{pad} |\n{num} | {shown}\n{pad} | {}{}",
                " ".repeat(loc.column - 1),
                "^".repeat(loc.caret_len)
            )?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  = help: {help}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_line_and_column_in_characters() {
        let src = "{\n  \"é\": 1,\n  \"open\": 5\n}";
        let at = src.find('5').unwrap();
        let loc = Location::new(src, at..at + 1);
        assert_eq!((loc.line, loc.column, loc.caret_len), (3, 11, 1));
        assert_eq!(loc.line_text, "  \"open\": 5");
        let key = src.find("\"é\"").unwrap();
        let loc = Location::new(src, key..key + "\"é\"".len());
        assert_eq!((loc.line, loc.column, loc.caret_len), (2, 3, 3));
    }

    #[test]
    fn renders_caret_under_the_culprit() {
        let src = "{\"a\": [1, 2]}";
        let d = Diagnostic::error("bad").in_file("t.json").at(src, 6..12);
        assert_eq!(
            d.to_string(),
            "error: bad\n  --> t.json:1:7\n  |\n1 | {\"a\": [1, 2]}\n  |       ^^^^^^"
        );
    }
}
