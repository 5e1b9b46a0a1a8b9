//! JSON syntax highlighting with syntect, as plain styled runs (what the parse lane sends) or
//! ratatui lines (what the views draw). The syntax and theme sets
//! load once, on first use. Very long lines are cut before highlighting (a message with a
//! 100 KB string stays quick); the cut is marked.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;

/// Longest line highlighted (in bytes); the rest is shown plainly after a marker.
const MAX_LINE: usize = 2000;

/// Text beyond this many bytes is shown without highlighting (a huge message stays quick).
const MAX_TOTAL: usize = 256 * 1024;

struct Sets {
    syntaxes: SyntaxSet,
    themes: ThemeSet,
}

fn sets() -> &'static Sets {
    static SETS: OnceLock<Sets> = OnceLock::new();
    SETS.get_or_init(|| Sets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        themes: ThemeSet::load_defaults(),
    })
}

/// Loads the syntax and theme sets now (call early from a background thread to hide the cost).
pub(crate) fn warm_up() {
    let _ = sets();
}

fn cut(line: &str) -> (&str, Option<usize>) {
    if line.len() <= MAX_LINE {
        return (line, None);
    }
    let at = line.floor_char_boundary(MAX_LINE);
    (&line[..at], Some(line.len() - at))
}

/// JSON text whose every character takes the cells the terminal gives it. A zero-width
/// character that joins or modifies what precedes it (a zero-width joiner inside an emoji
/// sequence, a combining mark after a quote, a variation selector) is measured differently by
/// terminals and by the layout, which shifted the pane's right border; such characters are
/// written as JSON escapes (`\u200d`), which is what they are and what a reader wants to see.
/// A combining mark after a letter or digit stays: every terminal draws that in one cell.
pub(crate) fn cell_safe_json(text: &str) -> std::borrow::Cow<'_, str> {
    use unicode_width::UnicodeWidthChar;
    let zero = |c: char| !c.is_ascii() && c.width() == Some(0);
    if !text.chars().any(zero) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut base = false;
    for c in text.chars() {
        let format = matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fe00}'..='\u{fe0f}' | '\u{e0000}'..='\u{e0fff}');
        if zero(c) && (format || !base) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
            continue;
        }
        base = c.is_alphanumeric() || (base && zero(c));
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// A highlighted line as plain data: runs of text, each with its style. It crosses from the
/// parse lane to the UI thread (no terminal types); [`StyledLine::to_line`] draws it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StyledLine {
    pub runs: Vec<Run>,
}

/// A run of text in one style.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub text: String,
    pub style: RunStyle,
}

/// A run's style: a colour (none: the terminal's) and font attributes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStyle {
    pub rgb: Option<(u8, u8, u8)>,
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    /// Dimmed (the marker of a cut line).
    pub dim: bool,
}

impl RunStyle {
    fn to_style(self) -> Style {
        let mut s = Style::default();
        if let Some((r, g, b)) = self.rgb {
            s = s.fg(Color::Rgb(r, g, b));
        }
        for (on, m) in [
            (self.bold, Modifier::BOLD),
            (self.italic, Modifier::ITALIC),
            (self.underline, Modifier::UNDERLINED),
            (self.dim, Modifier::DIM),
        ] {
            if on {
                s = s.add_modifier(m);
            }
        }
        s
    }
}

impl StyledLine {
    /// The line as the terminal draws it.
    pub fn to_line(&self) -> Line<'static> {
        Line::from(
            self.runs
                .iter()
                .map(|r| Span::styled(r.text.clone(), r.style.to_style()))
                .collect::<Vec<_>>(),
        )
    }

    /// Its width in terminal cells.
    pub fn width(&self) -> usize {
        use unicode_width::UnicodeWidthStr;
        self.runs.iter().map(|r| r.text.width()).sum()
    }

    fn plain(text: String) -> StyledLine {
        StyledLine {
            runs: vec![Run {
                text,
                style: RunStyle::default(),
            }],
        }
    }
}

/// A message's JSON as the message pane shows it: the first [`MAX_TOTAL`] bytes highlighted
/// line by line, and the rest kept as the one plain string it already is. A message can be
/// several times as long as the text it came from; as styled runs each line would cost a
/// vector, a run and a string of its own (more than a hundred bytes per line), while plain
/// lines cost nothing beyond their text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageLines {
    head: Vec<StyledLine>,
    /// The whole JSON; the lines after the head (from `rest_from`) are drawn from it unstyled
    /// (cut and marked when drawn, like long head lines). The head stays in it: removing it
    /// and shrinking the string would hold a second copy of the JSON for a moment, the
    /// analysis's peak with many small regions.
    rest: String,
    /// Where the lines after the head start in `rest`.
    rest_from: usize,
}

/// One line of a [`MessageLines`].
#[derive(Clone, Copy, Debug)]
pub enum MessageLine<'a> {
    /// A highlighted line.
    Styled(&'a StyledLine),
    /// A line past the highlighted head.
    Plain(&'a str),
}

impl MessageLines {
    /// Every line, in order.
    pub fn iter(&self) -> impl Iterator<Item = MessageLine<'_>> {
        self.head.iter().map(MessageLine::Styled).chain(
            self.rest
                .get(self.rest_from..)
                .unwrap_or("")
                .lines()
                .map(MessageLine::Plain),
        )
    }
}

impl MessageLine<'_> {
    /// Its width in terminal cells, as drawn.
    pub fn width(self) -> usize {
        match self {
            MessageLine::Styled(s) => s.width(),
            MessageLine::Plain(p) => {
                use unicode_width::UnicodeWidthStr;
                let (shown, rest) = cut(p);
                shown.width() + rest.map_or(0, |more| cut_marker(more).text.width())
            }
        }
    }

    /// The line as the terminal draws it.
    pub fn to_line(self) -> Line<'static> {
        match self {
            MessageLine::Styled(s) => s.to_line(),
            MessageLine::Plain(p) => plain_line(p).to_line(),
        }
    }
}

/// A line shown without highlighting: cut past [`MAX_LINE`], the cut marked.
fn plain_line(line: &str) -> StyledLine {
    let (shown, rest) = cut(line);
    let mut l = StyledLine::plain(shown.to_string());
    l.runs.extend(rest.map(cut_marker));
    l
}

fn cut_marker(more: usize) -> Run {
    Run {
        text: format!("… ({more} more bytes)"),
        style: RunStyle {
            dim: true,
            ..RunStyle::default()
        },
    }
}

/// The message pane's lines of `json` (indented JSON): see [`MessageLines`].
pub(crate) fn message_lines(json: String, theme_name: &str, no_color: bool) -> MessageLines {
    let json = match cell_safe_json(&json) {
        std::borrow::Cow::Borrowed(_) => json,
        std::borrow::Cow::Owned(safe) => safe,
    };
    // The head: the lines [`json_runs`] highlights (whole lines while the text shown so far,
    // long lines counted as cut, stays within the budget).
    let (mut head_end, mut done) = (0, 0);
    for line in json.split_inclusive('\n') {
        done += cut(line.strip_suffix('\n').unwrap_or(line)).0.len();
        if done > MAX_TOTAL {
            break;
        }
        head_end += line.len();
    }
    let head = json_runs(&json[..head_end], theme_name, no_color);
    MessageLines {
        head,
        rest: json,
        rest_from: head_end,
    }
}

/// Highlights `text` (JSON) line by line, as terminal lines (see [`json_runs`]).
pub(crate) fn json_lines(text: &str, theme_name: &str, no_color: bool) -> Vec<Line<'static>> {
    json_runs(text, theme_name, no_color)
        .iter()
        .map(StyledLine::to_line)
        .collect()
}

/// Highlights `text` (JSON) line by line, as plain data. With `no_color`, colours are dropped
/// but bold, italic and underline are kept. Unknown theme names fall back to plain text.
pub(crate) fn json_runs(text: &str, theme_name: &str, no_color: bool) -> Vec<StyledLine> {
    let text = &*cell_safe_json(text);
    let sets = sets();
    let syntax = sets
        .syntaxes
        .find_syntax_by_extension("json")
        .unwrap_or_else(|| sets.syntaxes.find_syntax_plain_text());
    let Some(theme) = sets.themes.themes.get(theme_name) else {
        return text
            .lines()
            .map(|l| StyledLine::plain(l.to_string()))
            .collect();
    };
    let mut h = HighlightLines::new(syntax, theme);
    let mut out = Vec::new();
    let mut done = 0;
    for line in text.lines() {
        let (shown, rest) = cut(line);
        done += shown.len();
        if done > MAX_TOTAL {
            let mut l = StyledLine::plain(shown.to_string());
            l.runs.extend(rest.map(cut_marker));
            out.push(l);
            continue;
        }
        let with_nl = format!("{shown}\n");
        let mut runs: Vec<Run> = match h.highlight_line(&with_nl, &sets.syntaxes) {
            Ok(ranges) => ranges
                .into_iter()
                .map(|(style, piece)| Run {
                    text: piece.trim_end_matches('\n').to_string(),
                    style: convert(style, no_color),
                })
                .filter(|r| !r.text.is_empty())
                .collect(),
            Err(_) => StyledLine::plain(shown.to_string()).runs,
        };
        if let Some(more) = rest {
            runs.push(cut_marker(more));
            // A cut string leaves the highlighter inside it: start the next line afresh.
            h = HighlightLines::new(syntax, theme);
        }
        out.push(StyledLine { runs });
    }
    out
}

fn convert(style: syntect::highlighting::Style, no_color: bool) -> RunStyle {
    let c = style.foreground;
    RunStyle {
        rgb: (!no_color).then_some((c.r, c.g, c.b)),
        bold: style.font_style.contains(FontStyle::BOLD),
        italic: style.font_style.contains(FontStyle::ITALIC),
        underline: style.font_style.contains(FontStyle::UNDERLINE),
        dim: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joiners_and_marks_without_a_base_are_escaped() {
        assert_eq!(
            cell_safe_json("{\"a\": \"plain é\"}"),
            "{\"a\": \"plain é\"}"
        );
        assert_eq!(
            cell_safe_json(
                "\"\u{301}x e\u{301}\u{302} \u{1f468}\u{200d}\u{1f469} \u{2764}\u{fe0f}\u{e0001}\""
            ),
            "\"\\u0301x e\u{301}\u{302} \u{1f468}\\u200d\u{1f469} \u{2764}\\ufe0f\\udb40\\udc01\""
        );
    }

    #[test]
    fn highlights_keys_and_values_differently() {
        let lines = json_lines("{\n  \"a\": 1\n}", "base16-ocean.dark", false);
        assert_eq!(lines.len(), 3);
        let styles: Vec<Style> = lines[1].spans.iter().map(|s| s.style).collect();
        let runs = json_runs("{\n  \"a\": 1\n}", "base16-ocean.dark", false);
        assert_eq!(
            runs.iter().map(StyledLine::to_line).collect::<Vec<_>>(),
            lines
        );
        assert!(styles.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn a_long_message_is_highlighted_up_to_the_budget_and_drawn_plainly_after() {
        let item = |i: usize| format!("  {{\"name\": \"f\", \"arguments\": {{\"a\": {i}}}}},\n");
        let long = format!(
            "{}  \"{}\"\n",
            (0..20_000).map(item).collect::<String>(),
            "y".repeat(5000)
        );
        let json = format!("[\n{long}]");
        assert!(json.len() > 2 * MAX_TOTAL);
        let lines = message_lines(json.clone(), "base16-ocean.dark", false);
        // What the pane draws is what highlighting the whole text line by line drew.
        let drawn: Vec<Line<'static>> = lines.iter().map(|l| l.to_line()).collect();
        assert_eq!(drawn, json_lines(&json, "base16-ocean.dark", false));
        assert!(lines.iter().all(|l| l.width() == l.to_line().width()));
        // The head is styled; the rest is kept as text, not as a line of runs each.
        assert!(lines.head.len() < json.lines().count() / 2);
        assert!(lines.rest.len() - lines.rest_from > json.len() / 2);
    }

    #[test]
    fn long_lines_are_cut() {
        let long = format!("\"{}\"", "x".repeat(10_000));
        let lines = json_lines(&long, "base16-ocean.dark", true);
        let text: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.len() < 2100 && text.contains("more bytes"));
    }
}
