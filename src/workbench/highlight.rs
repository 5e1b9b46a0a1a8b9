//! JSON syntax highlighting with syntect, as the message's JSON with its runs' ends and styles
//! (what the parse lane sends) or ratatui lines (what the views draw). The syntax and theme sets
//! load once, on first use. Very long lines are cut before highlighting (a message with a
//! 100 KB string stays quick); the cut is marked.

use std::borrow::Cow;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;

use crate::workbench::json_lines::{Json, LineWriter};

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

/// Lines between two places the message's JSON can be written from: the pane writes at most
/// this many lines before the first it draws.
pub(crate) const CHECKPOINT: usize = 256;

/// A message's JSON as the message pane shows it (indented by two spaces a level): the first
/// [`MAX_TOTAL`] bytes highlighted line by line, and the rest drawn plainly. The JSON itself is
/// not held: each line is written from the message when it is drawn ([`LineWriter`]), so the
/// pane's lines are borrowed from the message they show (see [`MessageLines::iter`]). What is
/// held: the head's styles, as each line's run count and each run's end and style (four bytes
/// a run, the styles themselves in a small palette), and an index for drawing a window deep in
/// a long message without writing the lines before it: the line count, the writer's place
/// every [`CHECKPOINT`] lines and the widest line of each block of that many, and for the
/// width last drawn at, the rows before each block (some 30 bytes a block in all). Held as
/// text without its indentation, the JSON of a message of many small tool calls cost 2.2 bytes
/// per byte of the sample, beside the message; as styled runs each owning its text, the head
/// alone cost some 5 MB.
#[derive(Debug, Default)]
pub struct MessageLines {
    /// How many lines there are.
    count: usize,
    /// The one line shown for a message that cannot be written as JSON (cell-safe).
    unwritable: Option<String>,
    /// Where the writer resumes at line `(c + 1) * CHECKPOINT`: `places` from the end of
    /// checkpoint `c - 1`'s place (or 0) to `place_ends[c]`.
    place_ends: Vec<usize>,
    places: Vec<u32>,
    /// The width in cells of the widest line of each block of [`CHECKPOINT`] lines, as drawn
    /// (lines are cut: a few thousand cells at most).
    widest: Vec<u16>,
    /// How many runs each line of the highlighted head has, in order (one entry a head line).
    line_runs: Vec<u16>,
    /// The head's runs, line after line, in chunks of at most [`RUN_CHUNK`] runs: a line's
    /// runs lie in one chunk, the first whose room they fit (see [`RunCursor`]). Grown by
    /// doubling and then shrunk, one list of them held up to 2.3 times their size at once
    /// while the worker made it, on top of everything the analysis holds.
    runs: Vec<Vec<RunEnd>>,
    /// The distinct styles the runs use.
    styles: Vec<RunStyle>,
    /// The rows the blocks take at the width last asked for.
    rows: Mutex<Option<Arc<BlockRows>>>,
    /// The lines longer than [`LONG_LINE`] bytes, in order, as drawn: writing such a line
    /// (a model's answer of megabytes) again at every redraw took some 20 ms a key.
    long: Vec<LongLine>,
}

/// Lines longer than this (in bytes, cell-safe) keep their shown part in [`MessageLines`].
const LONG_LINE: usize = 1 << 16;

/// A long line's shown part: the start of its cell-safe text, at least [`MAX_LINE`] bytes, and
/// how many bytes follow it.
#[derive(Debug)]
struct LongLine {
    line: usize,
    start: Box<str>,
    more: usize,
}

/// The rows of a [`MessageLines`] wrapped at a width.
#[derive(Debug)]
struct BlockRows {
    width: u16,
    /// The rows before each block of [`CHECKPOINT`] lines.
    before: Vec<usize>,
    /// The rows of every line.
    total: usize,
}

/// A run of a highlighted line: where it ends in the line's shown text, indentation
/// included (it starts where the previous run ended), and its style's place in
/// [`MessageLines::styles`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RunEnd {
    end: u16,
    style: u16,
}

/// A line of the JSON: its indentation and its text (or the start of it, `more` bytes
/// following it).
#[derive(Clone, Copy, Debug)]
struct Indented<'a> {
    indent: usize,
    text: &'a str,
    more: usize,
}

/// Spaces to borrow indentation from.
const SPACES: &str = "                                                                ";

impl<'a> Indented<'a> {
    fn len(self) -> usize {
        self.indent + self.text.len() + self.more
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

/// The indentation of a line at `depth`: two spaces a level.
fn indent_of(depth: usize) -> usize {
    usize::from(u16::try_from(2 * depth).unwrap_or(u16::MAX))
}

/// One line of a [`MessageLines`]: its text, written from the message, and its runs.
#[derive(Clone, Debug)]
pub(crate) struct MessageLine<'a> {
    indent: usize,
    /// The line without its indentation (cell-safe), or its start for a long line.
    text: Cow<'a, str>,
    /// Bytes of a long line after `text`.
    more: usize,
    /// A head line's runs (`None` past the head: one plain run).
    runs: Option<&'a [RunEnd]>,
    styles: &'a [RunStyle],
}

/// A line and its runs, as drawn.
#[derive(Clone, Copy, Debug)]
struct Drawn<'a> {
    line: Indented<'a>,
    runs: Option<&'a [RunEnd]>,
    styles: &'a [RunStyle],
}

impl Drawn<'_> {
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

    fn width(self) -> usize {
        use unicode_width::UnicodeWidthStr;
        let (ranges, marker) = self.ranges();
        ranges.map(|(a, b, _)| self.line.width(a, b)).sum::<usize>()
            + marker.map_or(0, |m| m.text.width())
    }

    fn to_line(self) -> Line<'static> {
        let (ranges, marker) = self.ranges();
        let mut spans: Vec<Span<'static>> = ranges
            .map(|(a, b, style)| Span::styled(self.line.slice(a, b).into_owned(), style.to_style()))
            .collect();
        spans.extend(marker.map(|m| Span::styled(m.text, m.style.to_style())));
        Line::from(spans)
    }
}

impl MessageLine<'_> {
    fn drawn(&self) -> Drawn<'_> {
        Drawn {
            line: Indented {
                indent: self.indent,
                text: &self.text,
                more: self.more,
            },
            runs: self.runs,
            styles: self.styles,
        }
    }

    /// Its width in terminal cells, as drawn.
    pub(crate) fn width(&self) -> usize {
        self.drawn().width()
    }

    /// The line as the terminal draws it.
    pub(crate) fn to_line(&self) -> Line<'static> {
        self.drawn().to_line()
    }
}

/// The lines of a message's JSON as written: each line's indentation and its cell-safe text.
enum Written<'a> {
    Json {
        writer: LineWriter<'a>,
        buf: String,
    },
    /// The line shown for a message that cannot be written as JSON.
    One(Option<&'a str>),
}

impl Written<'_> {
    /// Passes over the next line (its strings not written); its depth, `None` after the last.
    fn pass(&mut self) -> Option<usize> {
        match self {
            Written::Json { writer, buf } => writer.pass_line(buf).ok().flatten(),
            Written::One(line) => line.take().map(|_| 0),
        }
    }
}

impl Iterator for Written<'_> {
    type Item = (usize, String);

    fn next(&mut self) -> Option<(usize, String)> {
        match self {
            Written::One(line) => line.take().map(|l| (0, l.to_string())),
            Written::Json { writer, buf } => {
                // A message that cannot be written is [`Written::One`]: no error comes here.
                let depth = writer.next_line(buf).ok().flatten()?;
                let safe = match cell_safe_json(buf) {
                    Cow::Borrowed(_) => None,
                    Cow::Owned(safe) => Some(safe),
                };
                Some((
                    indent_of(depth),
                    safe.unwrap_or_else(|| std::mem::take(buf)),
                ))
            }
        }
    }
}

/// The lines of a [`MessageLines`] from one on, written from the message as they are drawn.
pub(crate) struct MessageIter<'a> {
    lines: &'a MessageLines,
    written: Written<'a>,
    /// The next line's index, and where its runs start if it is a head line.
    next: usize,
    run_at: RunCursor,
}

/// Runs per chunk of [`MessageLines::runs`]: 8,192 (32 KiB). A line's shown text is at most
/// [`MAX_LINE`] bytes, so its runs always fit in a chunk.
const RUN_CHUNK: usize = 8192;

/// Where the next head line's runs lie in [`MessageLines::runs`]: the chunk, and the offset in
/// it. A line goes to the next chunk when its runs do not fit in what is left of the current
/// one, as they were stored.
#[derive(Clone, Copy, Debug, Default)]
struct RunCursor {
    chunk: usize,
    at: usize,
}

impl RunCursor {
    /// The `n` runs of the next line, and the cursor past them.
    fn take<'a>(&mut self, chunks: &'a [Vec<RunEnd>], n: usize) -> &'a [RunEnd] {
        if chunks
            .get(self.chunk)
            .is_some_and(|c| self.at + n > c.len())
        {
            *self = RunCursor {
                chunk: self.chunk + 1,
                at: 0,
            };
        }
        let runs = chunks
            .get(self.chunk)
            .and_then(|c| c.get(self.at..self.at + n))
            .unwrap_or(&[]);
        self.at += n;
        runs
    }
}

impl<'a> Iterator for MessageIter<'a> {
    type Item = MessageLine<'a>;

    fn next(&mut self) -> Option<MessageLine<'a>> {
        if self.next >= self.lines.count {
            return None;
        }
        let i = self.next;
        let long = self.lines.long_line(i);
        let (indent, text, more) = match long {
            Some(l) => {
                let depth = self.written.pass()?;
                (indent_of(depth), Cow::Borrowed(&*l.start), l.more)
            }
            None => {
                let (indent, text) = self.written.next()?;
                (indent, Cow::Owned(text), 0)
            }
        };
        self.next += 1;
        let runs = (i < self.lines.line_runs.len()).then(|| {
            let n = self.lines.line_runs.get(i).map_or(0, |&n| usize::from(n));
            self.run_at.take(&self.lines.runs, n)
        });
        Some(MessageLine {
            indent,
            text,
            more,
            runs,
            styles: &self.lines.styles,
        })
    }
}

impl MessageLines {
    /// How many lines there are.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are no lines (no message).
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Line `i`'s shown part, when it is long.
    fn long_line(&self, i: usize) -> Option<&LongLine> {
        let at = self.long.binary_search_by_key(&i, |l| l.line).ok()?;
        self.long.get(at)
    }

    /// Every line, in order, written from `message`: the message these lines were made for.
    pub(crate) fn iter<'a>(&'a self, message: Json<'a>) -> MessageIter<'a> {
        self.iter_from(message, 0)
    }

    /// The lines from line `first` on, written from `message` (the message these lines were
    /// made for) from the checkpoint at or before `first`.
    pub(crate) fn iter_from<'a>(&'a self, message: Json<'a>, first: usize) -> MessageIter<'a> {
        let first = first.min(self.count);
        // The checkpoint at or before `first` (the first line's is the start).
        let block = (first / CHECKPOINT).min(self.place_ends.len());
        let mut at = block * CHECKPOINT;
        let mut written = match &self.unwritable {
            Some(line) => {
                at = 0;
                Written::One(Some(line))
            }
            None => {
                let writer = match block.checked_sub(1) {
                    None => LineWriter::new(message),
                    Some(c) => {
                        let start = c.checked_sub(1).map_or(0, |p| self.place_ends[p]);
                        LineWriter::resume(message, &self.places[start..self.place_ends[c]])
                    }
                };
                Written::Json {
                    writer,
                    buf: String::new(),
                }
            }
        };
        while at < first && written.pass().is_some() {
            at += 1;
        }
        let head = first.min(self.line_runs.len());
        let mut run_at = RunCursor::default();
        for &n in &self.line_runs[..head] {
            run_at.take(&self.runs, usize::from(n));
        }
        MessageIter {
            lines: self,
            written,
            next: first,
            run_at,
        }
    }

    /// The rows of every line wrapped at `width` cells (each line at least one), for
    /// `message`, the message these lines were made for.
    pub(crate) fn rows(&self, message: Json<'_>, width: u16) -> usize {
        self.block_rows(message, width).total
    }

    /// Where to start drawing the lines wrapped at `width` to show row `top` and after: the
    /// first line of the block `top` lies in, and the rows before it.
    pub(crate) fn seek(&self, message: Json<'_>, width: u16, top: usize) -> (usize, usize) {
        let rows = self.block_rows(message, width);
        let block = rows.before.partition_point(|&r| r <= top).saturating_sub(1);
        (
            block * CHECKPOINT,
            rows.before.get(block).copied().unwrap_or(0),
        )
    }

    /// The rows before each block at `width`, found once a width: a block whose widest line
    /// fits takes a row a line; the lines of the others are written to be measured.
    fn block_rows(&self, message: Json<'_>, width: u16) -> Arc<BlockRows> {
        let mut cached = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(rows) = cached.as_ref().filter(|r| r.width == width) {
            return Arc::clone(rows);
        }
        let w = usize::from(width.max(1));
        let mut before = Vec::with_capacity(self.widest.len());
        let mut total = 0;
        for (b, &widest) in self.widest.iter().enumerate() {
            before.push(total);
            let first = b * CHECKPOINT;
            let n = CHECKPOINT.min(self.count.saturating_sub(first));
            total += if usize::from(widest) <= w {
                n
            } else {
                self.iter_from(message, first)
                    .take(n)
                    .map(|l| l.width().div_ceil(w).max(1))
                    .sum()
            };
        }
        let rows = Arc::new(BlockRows {
            width,
            before,
            total,
        });
        *cached = Some(Arc::clone(&rows));
        rows
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

/// The message pane's lines of `message` (see [`MessageLines`]): the lines of its JSON written
/// with line breaks and no indentation (`indent=0`), each shown indented two spaces a level, as
/// `indent=2` writes it.
pub(crate) fn message_lines(message: Json<'_>, theme_name: &str, no_color: bool) -> MessageLines {
    let mut lines = MessageLines::default();
    // One pass over the JSON: its lines counted, the writer's place kept every
    // [`CHECKPOINT`] lines and each block's widest line measured. A head line is as wide
    // highlighted as plain: its runs cover its shown part.
    let mut writer = LineWriter::new(message);
    let mut buf = String::new();
    let mut widest = 0;
    let width = |indent: usize, text: &str| {
        let line = Drawn {
            line: Indented {
                indent,
                text,
                more: 0,
            },
            runs: None,
            styles: &[],
        };
        u16::try_from(line.width()).unwrap_or(u16::MAX)
    };
    loop {
        let depth = match writer.next_line(&mut buf) {
            Ok(Some(depth)) => depth,
            Ok(None) => break,
            Err(e) => {
                // Shown as the JSON text would have been: one line saying why.
                let line = cell_safe_json(&format!("<cannot show as JSON: {e}>")).into_owned();
                widest = width(0, &line);
                lines = MessageLines {
                    count: 1,
                    unwritable: Some(line),
                    ..MessageLines::default()
                };
                break;
            }
        };
        let safe = cell_safe_json(&buf);
        widest = widest.max(width(indent_of(depth), &safe));
        if safe.len() > LONG_LINE {
            let start = safe.floor_char_boundary(MAX_LINE + 4);
            lines.long.push(LongLine {
                line: lines.count,
                start: safe[..start].into(),
                more: safe.len() - start,
            });
        }
        lines.count += 1;
        if lines.count % CHECKPOINT == 0 {
            lines.widest.push(widest);
            widest = 0;
            writer.place(&mut lines.places);
            if lines.place_ends.last().copied().unwrap_or(0) < lines.places.len() {
                lines.place_ends.push(lines.places.len());
            }
        }
    }
    if lines.count % CHECKPOINT != 0 {
        lines.widest.push(widest);
    }
    // Its room (as long as the longest line) goes to the head's lines written below.
    drop(buf);
    lines.place_ends.shrink_to_fit();
    lines.places.shrink_to_fit();
    lines.long.shrink_to_fit();
    lines.widest.shrink_to_fit();
    // The head: the lines [`json_runs`] highlights (whole lines while the text shown so far,
    // long lines counted as cut, stays within the budget), written again. Under a theme that
    // is not known, every line is plain (and cut like lines past the head).
    if sets().themes.themes.contains_key(theme_name) {
        let mut done = 0;
        // Only each line's shown part is written out with its indentation (a line can be as
        // long as the text).
        let head = lines.iter(message).map_while(|l| {
            let line = Indented {
                indent: l.indent,
                text: &l.text,
                more: l.more,
            };
            let (shown, more) = line.cut();
            done += shown;
            (done <= MAX_TOTAL).then(|| (line.slice(0, shown).into_owned(), more))
        });
        let (mut line_runs, mut runs, mut styles) = (Vec::new(), Vec::new(), Vec::new());
        highlight_each(head, theme_name, no_color, |_, pieces, _| {
            let mut end = 0;
            let n = pieces.len();
            if runs
                .last()
                .is_none_or(|c: &Vec<RunEnd>| c.len() + n > RUN_CHUNK)
            {
                runs.push(Vec::with_capacity(RUN_CHUNK));
            }
            let chunk = runs.last_mut().expect("a chunk was just made");
            for (style, len) in pieces {
                end += len;
                let at = match styles.iter().position(|s| *s == style) {
                    Some(at) => at,
                    None => {
                        styles.push(style);
                        styles.len() - 1
                    }
                };
                // A highlighted line's shown text is at most [`MAX_LINE`] bytes.
                chunk.push(RunEnd {
                    end: u16::try_from(end).unwrap_or(u16::MAX),
                    style: u16::try_from(at).unwrap_or(u16::MAX),
                });
            }
            line_runs.push(u16::try_from(n).unwrap_or(u16::MAX));
        });
        line_runs.shrink_to_fit();
        if let Some(last) = runs.last_mut() {
            last.shrink_to_fit();
        }
        lines.line_runs = line_runs;
        lines.runs = runs;
        lines.styles = styles;
    }
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
    use rtbench_engine::Value;

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
        use crate::workbench::analysis::{json_with_indent, pretty_json};
        let item = |i: usize| format!(r#"{{"name": "f", "arguments": {{"a": {i}}}}}"#);
        let items: Vec<String> = (0..20_000).map(item).collect();
        let value = rtbench_engine::py::json_loads(&format!(
            "[{}, \"{}\"]",
            items.join(", "),
            "y".repeat(5000)
        ))
        .expect("valid JSON");
        let json = pretty_json(&value);
        assert!(json.len() > 2 * MAX_TOTAL);
        let lines = message_lines((&value).into(), "base16-ocean.dark", false);
        // What the pane draws is what highlighting the whole text line by line drew.
        let drawn: Vec<Line<'static>> = lines.iter((&value).into()).map(|l| l.to_line()).collect();
        assert_eq!(drawn, json_lines(&json, "base16-ocean.dark", false));
        assert!(
            lines
                .iter((&value).into())
                .all(|l| l.width() == l.to_line().width())
        );
        // The head is styled; the rest is written when drawn, not held.
        assert!(lines.line_runs.len() < json.lines().count() / 2);
        assert_eq!(lines.len(), json.lines().count());
        // The head holds its runs' ends and styles, not their text.
        assert!(lines.styles.len() < 16);
        assert_eq!(
            lines.runs.iter().map(Vec::len).sum::<usize>(),
            lines
                .line_runs
                .iter()
                .map(|&n| usize::from(n))
                .sum::<usize>()
        );
        // The index past the head is a small fraction of the JSON it stands for.
        let index = lines.place_ends.len() * size_of::<usize>()
            + lines.places.len() * size_of::<u32>()
            + lines.widest.len() * size_of::<u16>();
        assert!(
            index * 100 < json_with_indent(&value, 0).len(),
            "{index} bytes"
        );
    }

    /// The pane's lines of `v` as they were made from its JSON text: `json_with_indent(v, 0)`
    /// made cell-safe, split at its line breaks, each line's indentation found from the
    /// brackets that open and close on the lines before it.
    fn from_json_text(v: &Value) -> Vec<(usize, String)> {
        use crate::workbench::analysis::json_with_indent;
        let text = cell_safe_json(&json_with_indent(v, 0)).into_owned();
        let mut depth: usize = 0;
        text.split('\n')
            .map(|line| {
                if line.starts_with(['}', ']']) {
                    depth = depth.saturating_sub(1);
                }
                let indent = usize::from(u16::try_from(2 * depth).unwrap_or(u16::MAX));
                if line.ends_with(['{', '[']) {
                    depth += 1;
                }
                (indent, shown(line, 0))
            })
            .collect()
    }

    /// A line as the pane holds it: a long one's start, and how many bytes follow it.
    fn shown(text: &str, more: usize) -> String {
        if text.len() + more <= LONG_LINE {
            return text.to_string();
        }
        let start = text.floor_char_boundary(MAX_LINE + 4);
        format!("{}<+{}>", &text[..start], text.len() - start + more)
    }

    /// The pane's lines of `v`, written from it.
    fn from_value(v: &Value, theme: &str) -> Vec<(usize, String)> {
        let lines = message_lines(v.into(), theme, false);
        let written: Vec<(usize, String)> = lines
            .iter(v.into())
            .map(|l| (l.indent, shown(&l.text, l.more)))
            .collect();
        assert_eq!(written.len(), lines.len());
        written
    }

    /// A number below `n` from a seeded generator.
    fn draw(seed: &mut u64, n: u64) -> u64 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) % n
    }

    /// A string of pieces that need escaping, cell-safing or cutting, and plain ones.
    fn text(seed: &mut u64) -> String {
        use rtbench_engine::value::surrogate_char;
        let pieces = [
            "",
            "a",
            "é",
            "日本",
            "\u{200d}",
            "\u{301}",
            "x\u{301}",
            "\u{1f468}\u{200d}\u{1f469}",
            "\u{2764}\u{fe0f}",
            "\n",
            "\t",
            "\r",
            "\u{1}",
            "\u{1f}",
            "\u{7f}",
            "\"",
            "\\",
            "/",
            "[",
            "{",
            "]",
            "}",
            ",",
            ": ",
            " ",
            "\u{2028}",
            "\u{feff}",
            "\u{e0001}",
            "😀",
        ];
        let mut s = String::new();
        for _ in 0..draw(seed, 6) {
            match draw(seed, 40) {
                0 => s.push(surrogate_char(0xD800 + draw(seed, 0x800) as u16)),
                1 => s.push_str(&"w".repeat(MAX_LINE + draw(seed, 3000) as usize)),
                2 => s.push_str(&"é".repeat(MAX_LINE / 2 + draw(seed, 10) as usize)),
                i => s.push_str(pieces[i as usize % pieces.len()]),
            }
        }
        s
    }

    /// Values of every kind, nested up to `depth` levels, from a seeded generator.
    fn generated(seed: &mut u64, depth: usize) -> Value {
        let kind = if depth == 0 {
            draw(seed, 8)
        } else {
            draw(seed, 11)
        };
        match kind {
            0 => Value::Null,
            1 => Value::Bool(draw(seed, 2) == 0),
            2 => Value::Int([0, -1, i64::MAX, i64::MIN, 137][draw(seed, 5) as usize]),
            3 => rtbench_engine::py::json_loads(
                [
                    "123456789012345678901234567890",
                    "-99999999999999999999",
                    "1e400",
                ][draw(seed, 3) as usize],
            )
            .unwrap_or(Value::Null),
            4 => Value::Float(
                [
                    0.0,
                    -0.0,
                    1.5,
                    1e16,
                    1e-5,
                    1e300,
                    0.1,
                    f64::NAN,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                ][draw(seed, 10) as usize],
            ),
            5..=7 => Value::Str(text(seed)),
            8 | 9 => Value::List(
                (0..draw(seed, 5))
                    .map(|_| generated(seed, depth - 1))
                    .collect(),
            ),
            _ => Value::Dict(
                (0..draw(seed, 5))
                    .map(|_| (text(seed), generated(seed, depth - 1)))
                    .collect(),
            ),
        }
    }

    #[test]
    fn the_pane_shows_the_lines_of_the_messages_json() {
        let mut values: Vec<Value> = Vec::new();
        // The bundled samples' messages (and their expected ones).
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut samples = 0;
        for dir in std::fs::read_dir(root.join("samples"))
            .expect("samples")
            .flatten()
        {
            let Ok(template) = std::fs::read_to_string(dir.path().join("template.json")) else {
                continue;
            };
            let Ok(template) = rtbench_engine::Template::from_json_str(&template) else {
                continue;
            };
            for file in std::fs::read_dir(dir.path()).expect("a folder").flatten() {
                let path = file.path();
                if path.extension().is_none_or(|e| e != "sample") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("readable");
                let Ok(sample) = rtbench_tooling::sample::parse_sample(&path, &text) else {
                    continue;
                };
                if let Ok(m) = rtbench_engine::parse_response(
                    &template,
                    sample.prefix.as_deref(),
                    &sample.generation,
                    sample.tools.as_ref(),
                ) {
                    values.push(Value::Dict(m));
                    samples += 1;
                }
                values.extend(sample.expected);
            }
        }
        assert!(samples > 50, "{samples} bundled samples' messages");
        // The conformance cases, whole and their expected messages.
        let mut cases = 0;
        let mut dirs = vec![root.join("crates/engine/tests/data/conformance")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("a folder").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(&path) else {
                    continue;
                };
                if let Ok(case) = rtbench_engine::py::json_loads(&text) {
                    if let Some(m) = case
                        .as_dict()
                        .and_then(|c| c.get("expect"))
                        .and_then(|e| e.as_dict())
                        .and_then(|e| e.get("message"))
                    {
                        values.push(m.clone());
                    }
                    values.push(case);
                    cases += 1;
                }
            }
        }
        assert!(cases > 300, "{cases} conformance cases");
        // Generated values of every kind.
        let mut seed = 7;
        values.extend((0..3000).map(|_| generated(&mut seed, 5)));
        // Lines long enough that the pane keeps their shown part: wide, joined, escaped and
        // multi-byte characters around where they are cut, and a short line between.
        let long = |unit: &str| unit.repeat(LONG_LINE / unit.len() + 7);
        values.push(Value::Dict(
            [
                ("content", Value::from(long("é\u{200d}x\"\n漢").as_str())),
                ("short", Value::from("ok")),
                ("thinking", Value::from(long("\u{301}a👍🏽").as_str())),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        ));
        values.push(Value::List(vec![Value::from(long("ab").as_str()); 3]));
        for (i, v) in values.iter().enumerate() {
            // The lines do not depend on the theme; an unknown one skips the highlighting.
            assert_eq!(
                from_value(v, "no such theme"),
                from_json_text(v),
                "value {i}: {v:?}"
            );
        }
        for v in values.iter().step_by(97) {
            assert_eq!(from_value(v, "base16-ocean.dark"), from_json_text(v));
        }
    }

    #[test]
    fn a_message_is_drawn_indented_as_its_indented_json() {
        use crate::workbench::analysis::pretty_json;
        let value = rtbench_engine::py::json_loads(&format!(
            r#"{{"role": "assistant", "content": "ends with a bracket [", "e": {{}}, "l": [],
               "tool_calls": [[{{"a": {{"b": ["{{", "]", {{"c": "{long}"}}]}}}}, [[]]], 1.5],
               "z": "x {{"}}"#,
            long = "w".repeat(3 * MAX_LINE)
        ))
        .expect("valid JSON");
        for theme in ["base16-ocean.dark", "no such theme"] {
            let lines = message_lines((&value).into(), theme, false);
            let drawn: Vec<Line<'static>> =
                lines.iter((&value).into()).map(|l| l.to_line()).collect();
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
            assert!(
                lines
                    .iter((&value).into())
                    .all(|l| l.width() == l.to_line().width())
            );
        }
        // No message, no lines.
        assert_eq!(MessageLines::default().iter((&value).into()).count(), 0);
    }

    #[test]
    fn long_lines_are_cut() {
        let long = format!("\"{}\"", "x".repeat(10_000));
        let lines = json_lines(&long, "base16-ocean.dark", true);
        let text: String = lines[0].spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(text.len() < 2100 && text.contains("more bytes"));
    }
}
