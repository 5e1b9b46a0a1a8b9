//! JSON syntax highlighting with syntect, as the message's JSON with its runs' ends and styles
//! (what the parse lane sends) or ratatui lines (what the views draw). The syntax and theme sets
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

/// A highlighted line as plain data: runs of text, each with its style;
/// [`StyledLine::to_line`] draws it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StyledLine {
    pub runs: Vec<Run>,
}

/// A run of text in one style.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Run {
    pub text: String,
    pub style: RunStyle,
}

/// A run's style: a colour (none: the terminal's) and font attributes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunStyle {
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
    pub(crate) fn to_line(&self) -> Line<'static> {
        Line::from(
            self.runs
                .iter()
                .map(|r| Span::styled(r.text.clone(), r.style.to_style()))
                .collect::<Vec<_>>(),
        )
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
/// line by line, and the rest drawn plainly from the one string the JSON already is. A
/// message can be several times as long as the text it came from, so nothing is held per
/// line beyond the JSON but the head's styles: each highlighted line's run count and each
/// run's end and style (eight bytes a run, the styles themselves in a small palette), where
/// a line of runs each owning its text cost more than a hundred bytes a line (some 5 MB for
/// the head alone).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageLines {
    /// The whole JSON (cell-safe): the head's runs are slices of its lines, and the lines
    /// from `head_end` on are drawn from it unstyled (cut and marked when drawn, like long
    /// head lines).
    json: String,
    /// Where the lines after the highlighted head start in `json`.
    head_end: usize,
    /// How many runs each head line has, in order.
    line_runs: Vec<u32>,
    /// The head's runs, line after line.
    runs: Vec<RunEnd>,
    /// The distinct styles the runs use.
    styles: Vec<RunStyle>,
}

/// A run of a highlighted line: where it ends in the line's shown text (it starts where the
/// previous run ended) and its style's place in [`MessageLines::styles`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RunEnd {
    end: u32,
    style: u32,
}

/// One line of a [`MessageLines`].
#[derive(Clone, Copy, Debug)]
pub enum MessageLine<'a> {
    /// A highlighted line: its text and its runs.
    Styled(StyledSlice<'a>),
    /// A line past the highlighted head.
    Plain(&'a str),
}

/// A highlighted line of a [`MessageLines`], borrowed from it.
#[derive(Clone, Copy, Debug)]
pub struct StyledSlice<'a> {
    /// The line as written in the JSON (without its newline).
    line: &'a str,
    runs: &'a [RunEnd],
    styles: &'a [RunStyle],
}

impl<'a> StyledSlice<'a> {
    /// The runs' texts and styles, in order, then the cut marker if the line is cut.
    fn pieces(self) -> impl Iterator<Item = (std::borrow::Cow<'a, str>, RunStyle)> {
        let mut start = 0;
        let runs = self.runs.iter().map(move |r| {
            let end = (r.end as usize).min(self.line.len());
            let text = self.line.get(start..end).unwrap_or("");
            start = end;
            let style = self.styles.get(r.style as usize).copied();
            (std::borrow::Cow::Borrowed(text), style.unwrap_or_default())
        });
        let marker = self.runs.last().and_then(|r| {
            let more = self.line.len().checked_sub(r.end as usize)?;
            (more > 0).then(|| {
                let m = cut_marker(more);
                (std::borrow::Cow::Owned(m.text), m.style)
            })
        });
        runs.chain(marker)
    }
}

impl MessageLines {
    /// Every line, in order.
    pub fn iter(&self) -> impl Iterator<Item = MessageLine<'_>> {
        let head = self.json.get(..self.head_end).unwrap_or("");
        let mut first = 0;
        let styled = head.lines().zip(&self.line_runs).map(move |(line, &n)| {
            let end = (first + n as usize).min(self.runs.len());
            let runs = self.runs.get(first..end).unwrap_or(&[]);
            first = end;
            MessageLine::Styled(StyledSlice {
                line,
                runs,
                styles: &self.styles,
            })
        });
        styled.chain(
            self.json
                .get(self.head_end..)
                .unwrap_or("")
                .lines()
                .map(MessageLine::Plain),
        )
    }
}

impl MessageLine<'_> {
    /// Its width in terminal cells, as drawn.
    pub fn width(self) -> usize {
        use unicode_width::UnicodeWidthStr;
        match self {
            MessageLine::Styled(s) => s.pieces().map(|(text, _)| text.width()).sum(),
            MessageLine::Plain(p) => {
                let (shown, rest) = cut(p);
                shown.width() + rest.map_or(0, |more| cut_marker(more).text.width())
            }
        }
    }

    /// The line as the terminal draws it.
    pub fn to_line(self) -> Line<'static> {
        match self {
            MessageLine::Styled(s) => Line::from(
                s.pieces()
                    .map(|(text, style)| Span::styled(text.into_owned(), style.to_style()))
                    .collect::<Vec<_>>(),
            ),
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
    let mut lines = MessageLines {
        line_runs: Vec::new(),
        runs: Vec::new(),
        styles: Vec::new(),
        head_end,
        json: String::new(),
    };
    highlight_each(&json[..head_end], theme_name, no_color, |pieces, _| {
        let mut end = 0;
        let before = lines.runs.len();
        for (style, text) in pieces {
            end += text.len();
            let at = match lines.styles.iter().position(|s| *s == style) {
                Some(at) => at,
                None => {
                    lines.styles.push(style);
                    lines.styles.len() - 1
                }
            };
            lines.runs.push(RunEnd {
                // A line's shown text is at most [`MAX_LINE`] bytes; an unknown theme shows
                // lines whole, whose runs then fit as long as the line does.
                end: u32::try_from(end).unwrap_or(u32::MAX),
                style: u32::try_from(at).unwrap_or(0),
            });
        }
        let n = lines.runs.len() - before;
        lines.line_runs.push(u32::try_from(n).unwrap_or(u32::MAX));
    });
    lines.line_runs.shrink_to_fit();
    lines.runs.shrink_to_fit();
    lines.json = json;
    lines
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
    let mut out = Vec::new();
    highlight_each(text, theme_name, no_color, |pieces, rest| {
        let mut runs: Vec<Run> = pieces
            .into_iter()
            .map(|(style, text)| Run {
                text: text.to_string(),
                style,
            })
            .collect();
        runs.extend(rest.map(cut_marker));
        out.push(StyledLine { runs });
    });
    out
}

/// Highlights `text` (cell-safe JSON) line by line: calls `line` with each line's shown
/// part's runs (in order, covering it) and how many bytes were cut off its end.
/// Lines past [`MAX_TOTAL`], and every line under an unknown theme, are one plain run (an
/// unknown theme's lines are not cut).
fn highlight_each<'t>(
    text: &'t str,
    theme_name: &str,
    no_color: bool,
    mut line: impl FnMut(Vec<(RunStyle, &'t str)>, Option<usize>),
) {
    let plain = |shown: &'t str| vec![(RunStyle::default(), shown)];
    let sets = sets();
    let syntax = sets
        .syntaxes
        .find_syntax_by_extension("json")
        .unwrap_or_else(|| sets.syntaxes.find_syntax_plain_text());
    let Some(theme) = sets.themes.themes.get(theme_name) else {
        for l in text.lines() {
            line(plain(l), None);
        }
        return;
    };
    let mut h = HighlightLines::new(syntax, theme);
    let mut done = 0;
    for l in text.lines() {
        let (shown, rest) = cut(l);
        done += shown.len();
        if done > MAX_TOTAL {
            line(plain(shown), rest);
            continue;
        }
        let with_nl = format!("{shown}\n");
        let runs = match h.highlight_line(&with_nl, &sets.syntaxes) {
            Ok(ranges) => {
                // The pieces cover the line and its newline: the same pieces of `shown`.
                let mut start = 0;
                let mut runs = Vec::with_capacity(ranges.len());
                for (style, piece) in ranges {
                    let end = (start + piece.trim_end_matches('\n').len()).min(shown.len());
                    if end > start {
                        runs.push((convert(style, no_color), &shown[start..end]));
                    }
                    start = end;
                }
                runs
            }
            Err(_) => plain(shown),
        };
        line(runs, rest);
        if rest.is_some() {
            // A cut string leaves the highlighter inside it: start the next line afresh.
            h = HighlightLines::new(syntax, theme);
        }
    }
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
        assert!(lines.line_runs.len() < json.lines().count() / 2);
        assert!(lines.json.len() - lines.head_end > json.len() / 2);
        // The head holds its runs' ends and styles, not their text.
        assert!(lines.styles.len() < 16);
        assert_eq!(
            lines.runs.len(),
            lines.line_runs.iter().sum::<u32>() as usize
        );
    }

    #[test]
    fn long_lines_are_cut() {
        let long = format!("\"{}\"", "x".repeat(10_000));
        let lines = json_lines(&long, "base16-ocean.dark", true);
        let text: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.len() < 2100 && text.contains("more bytes"));
    }
}
