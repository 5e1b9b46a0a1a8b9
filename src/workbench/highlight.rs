//! JSON syntax highlighting with syntect, as the message's JSON with its runs' ends and styles
//! (what the parse lane sends) or ratatui lines (what the views draw). The syntax and theme sets
//! load once, on first use. Very long lines are cut before highlighting (a message with a
//! 100 KB string stays quick); the cut is marked.

use std::borrow::Cow;
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
}

/// A message's JSON as the message pane shows it (indented by two spaces a level): the first
/// [`MAX_TOTAL`] bytes highlighted line by line, and the rest drawn plainly. A message can be
/// several times as long as the text it came from, and its JSON nearly half indentation, so
/// the JSON is held once without its indentation (each line's depth beside it), and the head's
/// styles as each line's run count and each run's end and style (four bytes a run, the styles
/// themselves in a small palette). As styled runs each owning its text, the head alone cost
/// some 5 MB; the indented JSON, 1.75 times its unindented length with many small values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageLines {
    /// The JSON's lines without their indentation (cell-safe), one a line.
    text: String,
    /// Each line's indentation, in spaces.
    indents: Vec<u16>,
    /// How many lines the highlighted head has, and where the lines after it start in `text`.
    head_lines: usize,
    head_end: usize,
    /// How many runs each head line has, in order.
    line_runs: Vec<u16>,
    /// The head's runs, line after line.
    runs: Vec<RunEnd>,
    /// The distinct styles the runs use.
    styles: Vec<RunStyle>,
}

/// A run of a highlighted line: where it ends in the line's shown text, indentation
/// included (it starts where the previous run ended), and its style's place in
/// [`MessageLines::styles`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RunEnd {
    end: u16,
    style: u16,
}

/// A line of the JSON: its indentation and its text.
#[derive(Clone, Copy, Debug)]
struct Indented<'a> {
    indent: usize,
    text: &'a str,
}

/// Spaces to borrow indentation from.
const SPACES: &str = "                                                                ";

impl<'a> Indented<'a> {
    fn len(self) -> usize {
        self.indent + self.text.len()
    }

    /// Bytes `a..b` of the line (on character boundaries).
    fn slice(self, a: usize, b: usize) -> Cow<'a, str> {
        let spaces = b.min(self.indent).saturating_sub(a);
        let text = self
            .text
            .get(a.saturating_sub(self.indent)..b.saturating_sub(self.indent))
            .unwrap_or("");
        match (spaces, text) {
            (n, t) if n <= SPACES.len() && t.is_empty() => Cow::Borrowed(&SPACES[..n]),
            (0, t) => Cow::Borrowed(t),
            (n, t) => Cow::Owned(format!("{}{t}", " ".repeat(n))),
        }
    }

    /// The width in terminal cells of bytes `a..b` of the line.
    fn width(self, a: usize, b: usize) -> usize {
        use unicode_width::UnicodeWidthStr;
        let spaces = b.min(self.indent).saturating_sub(a);
        let text = self
            .text
            .get(a.saturating_sub(self.indent)..b.saturating_sub(self.indent))
            .unwrap_or("");
        spaces + text.width()
    }

    /// Where [`cut`] cuts the line: the end of the part shown, and how many bytes follow.
    fn cut(self) -> (usize, Option<usize>) {
        let len = self.len();
        if len <= MAX_LINE {
            return (len, None);
        }
        let at = if MAX_LINE <= self.indent {
            MAX_LINE
        } else {
            self.indent + self.text.floor_char_boundary(MAX_LINE - self.indent)
        };
        (at, Some(len - at))
    }
}

/// One line of a [`MessageLines`], borrowed from it.
#[derive(Clone, Copy, Debug)]
pub struct MessageLine<'a> {
    line: Indented<'a>,
    /// A head line's runs (`None` past the head: one plain run).
    runs: Option<&'a [RunEnd]>,
    styles: &'a [RunStyle],
}

impl<'a> MessageLine<'a> {
    /// The runs' byte ranges in the line and styles, in order, then the cut marker if the
    /// line is cut.
    fn ranges(self) -> (impl Iterator<Item = (usize, usize, RunStyle)>, Option<Run>) {
        let (shown, more) = self.line.cut();
        let plain = self.runs.is_none().then_some((shown, RunStyle::default()));
        let styled = self.runs.unwrap_or(&[]).iter().map(|r| {
            let style = self.styles.get(usize::from(r.style)).copied();
            (usize::from(r.end), style.unwrap_or_default())
        });
        let mut start = 0;
        let ranges = plain.into_iter().chain(styled).map(move |(end, style)| {
            let a = start;
            start = end.min(shown).max(start);
            (a, start, style)
        });
        (ranges, more.map(cut_marker))
    }

    /// Its width in terminal cells, as drawn.
    pub fn width(self) -> usize {
        use unicode_width::UnicodeWidthStr;
        let (ranges, marker) = self.ranges();
        ranges.map(|(a, b, _)| self.line.width(a, b)).sum::<usize>()
            + marker.map_or(0, |m| m.text.width())
    }

    /// The line as the terminal draws it.
    pub fn to_line(self) -> Line<'static> {
        let (ranges, marker) = self.ranges();
        let mut spans: Vec<Span<'static>> = ranges
            .map(|(a, b, style)| Span::styled(self.line.slice(a, b).into_owned(), style.to_style()))
            .collect();
        spans.extend(marker.map(|m| Span::styled(m.text, m.style.to_style())));
        Line::from(spans)
    }
}

impl MessageLines {
    /// Every line, in order.
    pub fn iter(&self) -> impl Iterator<Item = MessageLine<'_>> {
        let mut first = 0;
        let mut line_runs = self.line_runs.iter();
        self.text
            .split('\n')
            .zip(&self.indents)
            .enumerate()
            .map(move |(i, (text, &indent))| {
                let runs = (i < self.head_lines).then(|| {
                    let n = line_runs.next().map_or(0, |&n| usize::from(n));
                    let end = (first + n).min(self.runs.len());
                    let runs = self.runs.get(first..end).unwrap_or(&[]);
                    first = end;
                    runs
                });
                MessageLine {
                    line: Indented {
                        indent: usize::from(indent),
                        text,
                    },
                    runs,
                    styles: &self.styles,
                }
            })
    }
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

/// The message pane's lines of `json`, JSON written with line breaks and no indentation
/// (`indent=0`): see [`MessageLines`]. Each line is shown indented two spaces a level, as
/// `indent=2` writes it.
pub(crate) fn message_lines(json: String, theme_name: &str, no_color: bool) -> MessageLines {
    let text = match cell_safe_json(&json) {
        Cow::Borrowed(_) => json,
        Cow::Owned(safe) => safe,
    };
    if text.is_empty() {
        return MessageLines::default();
    }
    // Each line's depth: a line that starts with a closing bracket is one level out, one that
    // ends with an opening bracket puts the next one level in (strings hold no line breaks,
    // and a line cannot end inside one with a bracket: it ends with its quote).
    let mut indents = Vec::with_capacity(text.bytes().filter(|&b| b == b'\n').count() + 1);
    let mut depth: usize = 0;
    for line in text.split('\n') {
        if line.starts_with(['}', ']']) {
            depth = depth.saturating_sub(1);
        }
        indents.push(u16::try_from(2 * depth).unwrap_or(u16::MAX));
        if line.ends_with(['{', '[']) {
            depth += 1;
        }
    }
    let mut lines = MessageLines {
        text: String::new(),
        indents,
        head_lines: 0,
        head_end: 0,
        line_runs: Vec::new(),
        runs: Vec::new(),
        styles: Vec::new(),
    };
    // The head: the lines [`json_runs`] highlights (whole lines while the text shown so far,
    // long lines counted as cut, stays within the budget). Under a theme that is not known,
    // every line is plain (and cut like lines past the head).
    if sets().themes.themes.contains_key(theme_name) {
        let mut done = 0;
        for (line, &indent) in text.split('\n').zip(&lines.indents) {
            let line = Indented {
                indent: usize::from(indent),
                text: line,
            };
            done += line.cut().0;
            if done > MAX_TOTAL {
                break;
            }
            lines.head_lines += 1;
            lines.head_end += line.text.len() + 1;
        }
        // Only each line's shown part is written out with its indentation (a line can be as
        // long as the text).
        let head = text
            .split('\n')
            .zip(&lines.indents)
            .take(lines.head_lines)
            .map(|(t, &indent)| {
                let line = Indented {
                    indent: usize::from(indent),
                    text: t,
                };
                let (shown, more) = line.cut();
                (line.slice(0, shown), more)
            });
        highlight_each(head, theme_name, no_color, |_, pieces, _| {
            let mut end = 0;
            let before = lines.runs.len();
            for (style, len) in pieces {
                end += len;
                let at = match lines.styles.iter().position(|s| *s == style) {
                    Some(at) => at,
                    None => {
                        lines.styles.push(style);
                        lines.styles.len() - 1
                    }
                };
                // A highlighted line's shown text is at most [`MAX_LINE`] bytes.
                lines.runs.push(RunEnd {
                    end: u16::try_from(end).unwrap_or(u16::MAX),
                    style: u16::try_from(at).unwrap_or(u16::MAX),
                });
            }
            let n = lines.runs.len() - before;
            lines.line_runs.push(u16::try_from(n).unwrap_or(u16::MAX));
        });
        lines.line_runs.shrink_to_fit();
        lines.runs.shrink_to_fit();
    }
    lines.text = text;
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
    // Lines are cut before highlighting; an unknown theme shows them whole.
    let known = sets().themes.themes.contains_key(theme_name);
    let lines = text.lines().map(|l| if known { cut(l) } else { (l, None) });
    highlight_each(lines, theme_name, no_color, |line, pieces, rest| {
        let mut start = 0;
        let mut runs: Vec<Run> = pieces
            .into_iter()
            .map(|(style, len)| {
                let text = line.get(start..start + len).unwrap_or("").to_string();
                start += len;
                Run { text, style }
            })
            .collect();
        runs.extend(rest.map(cut_marker));
        out.push(StyledLine { runs });
    });
    out
}

/// Highlights `lines` (of cell-safe JSON) one by one, each given as its shown part and how
/// many bytes [`cut`] cut off its end: calls `line` with each shown part, its runs (their
/// styles and lengths, in order, covering it) and the bytes cut. Lines past [`MAX_TOTAL`], and
/// every line under an unknown theme, are one plain run (an unknown theme's lines are given
/// whole).
fn highlight_each<L: AsRef<str>>(
    lines: impl Iterator<Item = (L, Option<usize>)>,
    theme_name: &str,
    no_color: bool,
    mut line: impl FnMut(&str, Vec<(RunStyle, usize)>, Option<usize>),
) {
    let plain = |shown: &str| vec![(RunStyle::default(), shown.len())];
    let sets = sets();
    let syntax = sets
        .syntaxes
        .find_syntax_by_extension("json")
        .unwrap_or_else(|| sets.syntaxes.find_syntax_plain_text());
    let Some(theme) = sets.themes.themes.get(theme_name) else {
        for (l, _) in lines {
            let l = l.as_ref();
            line(l, plain(l), None);
        }
        return;
    };
    let mut h = HighlightLines::new(syntax, theme);
    let mut done = 0;
    for (shown, rest) in lines {
        let shown = shown.as_ref();
        done += shown.len();
        if done > MAX_TOTAL {
            line(shown, plain(shown), rest);
            continue;
        }
        let with_nl = format!("{shown}\n");
        let runs = match h.highlight_line(&with_nl, &sets.syntaxes) {
            Ok(ranges) => {
                // The pieces cover the line and its newline: the same pieces of `shown`,
                // the newline left out.
                let mut start = 0;
                let mut runs = Vec::with_capacity(ranges.len());
                for (style, piece) in ranges {
                    let end = (start + piece.trim_end_matches('\n').len()).min(shown.len());
                    if end > start {
                        runs.push((convert(style, no_color), end - start));
                    }
                    start = end;
                }
                runs
            }
            Err(_) => plain(shown),
        };
        line(shown, runs, rest);
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
        let unindented: Vec<&str> = json.lines().map(str::trim_start).collect();
        let lines = message_lines(unindented.join("\n"), "base16-ocean.dark", false);
        // What the pane draws is what highlighting the whole text line by line drew.
        let drawn: Vec<Line<'static>> = lines.iter().map(|l| l.to_line()).collect();
        assert_eq!(drawn, json_lines(&json, "base16-ocean.dark", false));
        assert!(lines.iter().all(|l| l.width() == l.to_line().width()));
        // The head is styled; the rest is kept as text, not as a line of runs each.
        assert!(lines.line_runs.len() < json.lines().count() / 2);
        assert!(lines.text.len() - lines.head_end > lines.text.len() / 2);
        // The head holds its runs' ends and styles, not their text.
        assert!(lines.styles.len() < 16);
        assert_eq!(
            lines.runs.len(),
            lines
                .line_runs
                .iter()
                .map(|&n| usize::from(n))
                .sum::<usize>()
        );
    }

    #[test]
    fn a_message_is_drawn_indented_as_its_indented_json() {
        use crate::workbench::analysis::{json_with_indent, pretty_json};
        let value = rtbench_engine::py::json_loads(&format!(
            r#"{{"role": "assistant", "content": "ends with a bracket [", "e": {{}}, "l": [],
               "tool_calls": [[{{"a": {{"b": ["{{", "]", {{"c": "{long}"}}]}}}}, [[]]], 1.5],
               "z": "x {{"}}"#,
            long = "w".repeat(3 * MAX_LINE)
        ))
        .expect("valid JSON");
        for theme in ["base16-ocean.dark", "no such theme"] {
            let lines = message_lines(json_with_indent(&value, 0), theme, false);
            let drawn: Vec<Line<'static>> = lines.iter().map(|l| l.to_line()).collect();
            let pretty = pretty_json(&value);
            let expected: Vec<Line<'static>> = if theme == "no such theme" {
                // Without a theme every line is plain, cut like lines past the head.
                pretty
                    .lines()
                    .map(|l| {
                        let (shown, rest) = cut(l);
                        let mut spans = vec![Span::raw(shown.to_string())];
                        spans.extend(rest.map(|m| {
                            let m = cut_marker(m);
                            Span::styled(m.text, m.style.to_style())
                        }));
                        Line::from(spans)
                    })
                    .collect()
            } else {
                json_lines(&pretty, theme, false)
            };
            assert_eq!(drawn, expected, "{theme}");
            assert!(lines.iter().all(|l| l.width() == l.to_line().width()));
        }
        assert_eq!(
            message_lines(String::new(), "base16-ocean.dark", false)
                .iter()
                .count(),
            0
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
