//! Diagnostics: an error or warning located in a file, rendered the way compilers do it
//! (`file:line:col`, the offending line, a caret under the culprit, and what to do).
//!
//! Rendering here is plain text, laid out by `annotate-snippets` the way rustc does it; views
//! may colour the parts.

use std::fmt;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Group, Level, Origin, Renderer, Snippet};

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

    /// The byte range of [`line_text`](Location::line_text) the caret underlines: from the
    /// character at [`column`](Location::column), [`caret_len`](Location::caret_len)
    /// characters long, cut at the end of the line (empty when the column is past the end).
    pub fn line_span(&self) -> Range<usize> {
        let text = &self.line_text;
        let start = text
            .char_indices()
            .nth(self.column.saturating_sub(1))
            .map_or(text.len(), |(i, _)| i);
        let end = text[start..]
            .char_indices()
            .nth(self.caret_len.max(1))
            .map_or(text.len(), |(i, _)| start + i);
        start..end
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

/// Renders like rustc, in plain text (no colours): the label and message, `--> file:line:col`,
/// the offending line with carets under the culprit (aligned in display cells, so wide
/// characters before it are accounted for; tabs are shown as four spaces), then `= help: ...`.
///
/// A located diagnostic without a file shows `<input>` in place of the file name.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let title = level.primary_title(self.message.as_str());
        let mut group = match (&self.location, &self.file) {
            (Some(loc), file) => title.element(
                Snippet::source(loc.line_text.as_str())
                    .line_start(loc.line)
                    .path(file.as_deref().unwrap_or("<input>"))
                    .annotation(AnnotationKind::Primary.span(loc.line_span())),
            ),
            (None, Some(file)) => title.element(Origin::path(file.as_str())),
            (None, None) => Group::with_title(title),
        };
        if let Some(help) = &self.help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        f.write_str(&Renderer::plain().render(&[group]))
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
            "error: bad\n --> t.json:1:7\n  |\n1 | {\"a\": [1, 2]}\n  |       ^^^^^^"
        );
        let d = d.with_help(Some("close it".into()));
        assert!(
            d.to_string().ends_with("^^^^^^\n  |\n  = help: close it"),
            "{d}"
        );
    }

    /// Display cells of the test's text: every non-ASCII character in these tests is
    /// double-width (CJK ideographs, emoji).
    fn cells(s: &str) -> usize {
        s.chars().map(|c| if c.is_ascii() { 1 } else { 2 }).sum()
    }

    #[test]
    fn caret_is_aligned_in_display_cells_after_wide_characters() {
        let line = "{\"名前\": \"😀\", \"値\": oops}";
        let src = format!("{{\n{line}\n}}");
        let at = src.find("oops").unwrap();
        let d = Diagnostic::warning("not JSON")
            .in_file("t.json")
            .at(&src, at..at + 4);
        let text = d.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "warning: not JSON");
        assert_eq!(lines[1], " --> t.json:2:18", "{text}");
        let shown = lines.iter().position(|l| l.ends_with(line)).expect(&text);
        let caret_line = lines[shown + 1];
        let culprit = lines[shown].find("oops").unwrap();
        let caret = caret_line.find('^').unwrap();
        // The caret line is ASCII: its byte offset is its display offset.
        assert_eq!(caret, cells(&lines[shown][..culprit]), "{text}");
        assert_eq!(&caret_line[caret..], "^^^^", "{text}");
    }

    #[test]
    fn wide_culprits_are_underlined_across_their_cells() {
        let src = "key = 名前";
        let at = src.find('名').unwrap();
        let d = Diagnostic::error("bad key")
            .in_file("k")
            .at(src, at..src.len());
        let text = d.to_string();
        assert!(text.ends_with("1 | key = 名前\n  |       ^^^^"), "{text}");
    }

    #[test]
    fn tabs_and_line_ends_keep_the_caret_aligned() {
        // Tabs are shown as spaces, and the caret moves with them.
        let src = "\tx =\t1";
        let d = Diagnostic::error("bad").in_file("t").at(src, 5..6);
        let text = d.to_string();
        let lines: Vec<&str> = text.lines().collect();
        let shown = lines[3];
        assert!(!shown.contains('\t'), "{text}");
        assert_eq!(lines[4].find('^'), shown.rfind('1'), "{text}");
        // A span at the end of the line gets one caret just past the text.
        let src = "{\"a\": ";
        let d = Diagnostic::error("truncated")
            .in_file("t")
            .at(src, src.len()..src.len());
        let text = d.to_string();
        assert!(text.ends_with("1 | {\"a\": \n  |       ^"), "{text:?}");
    }

    #[test]
    fn renders_what_is_known_without_a_location() {
        let d = Diagnostic::error("cannot read").in_file("t.json");
        let text = d.to_string();
        assert!(text.starts_with("error: cannot read\n"), "{text}");
        assert!(text.contains("--> t.json"), "{text}");
        let d = Diagnostic::warning("odd").with_help(Some("look".into()));
        let text = d.to_string();
        assert!(text.starts_with("warning: odd"), "{text}");
        assert!(text.ends_with("= help: look"), "{text}");
        let d = Diagnostic::error("bad").at("abc", 1..2);
        assert!(d.to_string().contains("--> <input>:1:2"), "{d}");
    }

    #[test]
    fn line_span_covers_the_caret_characters() {
        let loc = Location::new("é名x", 2..5);
        assert_eq!((loc.column, loc.caret_len), (2, 1));
        assert_eq!(loc.line_span(), 2..5);
        let loc = Location::new("ab", 2..2);
        assert_eq!(loc.line_span(), 2..2);
    }
}
