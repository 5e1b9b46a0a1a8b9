//! The raw text pane: prefix (dimmed) and generation, coloured by region, wrapped to the pane
//! width, with the cursor and a line telling what is under it. Also the wrapping geometry the
//! cursor movement and mouse clicks use, so that they agree with what is drawn.

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::workbench::analysis::{Analysis, Paint, Segment};
use crate::workbench::keys::Action;
use crate::workbench::search::Search;
use crate::workbench::state::{Pane, State};
use crate::workbench::theme::Theme;
use crate::workbench::view::pane_block;
use rtbench_tooling::place::{Part, Place, Places};

/// How a character is drawn: its display text and width.
pub(crate) fn shown_char(c: char) -> (char, usize) {
    if c.is_ascii() {
        return if c == '\t' {
            (' ', 1)
        } else if c.is_ascii_control() {
            ('·', 1)
        } else {
            (c, 1)
        };
    }
    match c {
        '\t' => (' ', 1),
        // The token-id decoder's defusing marker: drawn as nothing (the spelling around it
        // is styled as defused instead).
        rtbench_engine::MARKER => ('\u{FDD2}', 0),
        c if c.is_control() => ('·', 1),
        c => {
            let mut buf = [0u8; 4];
            let w = Span::raw(&*c.encode_utf8(&mut buf)).width();
            if w == 0 { ('·', 1) } else { (c, w) }
        }
    }
}

/// The wrapped rows of one line (byte ranges into the document); at least one row.
pub fn rows_of_line(a: &Analysis, line: usize, width: usize) -> Vec<Range<usize>> {
    wrap_rows(&a.document, a.line_range(line), width)
}

/// The rows `line` (a byte range of `text` without its line break) takes when wrapped to
/// `width` cells: byte ranges, at least one.
pub(crate) fn wrap_rows(text: &str, line: Range<usize>, width: usize) -> Vec<Range<usize>> {
    let width = width.max(2);
    let r = line;
    let slice = &text[r.clone()];
    if slice.is_ascii() {
        // Every ASCII character takes one cell.
        if slice.is_empty() {
            return vec![r];
        }
        return (r.start..r.end)
            .step_by(width)
            .map(|s| s..(s + width).min(r.end))
            .collect();
    }
    let mut rows = Vec::new();
    let mut start = r.start;
    let mut used = 0;
    for (i, c) in slice.char_indices() {
        let w = shown_char(c).1;
        if used + w > width {
            rows.push(start..r.start + i);
            start = r.start + i;
            used = 0;
        }
        used += w;
    }
    rows.push(start..r.end);
    rows
}

/// The line holding byte `at`.
pub(crate) fn line_of(a: &Analysis, at: usize) -> usize {
    a.line_starts.line_of(at)
}

/// (line, row) of byte `at`: a position at the end of a row that is not the line's last row
/// belongs to the next row.
pub(crate) fn position_of(a: &Analysis, at: usize, width: usize) -> (usize, usize) {
    let line = line_of(a, at);
    let rows = rows_of_line(a, line, width);
    let row = rows
        .iter()
        .position(|r| at < r.end)
        .unwrap_or(rows.len() - 1);
    (line, row)
}

/// Moves a (line, row) position by `delta` rows, stopping at the ends of the text.
pub(crate) fn step_rows(
    a: &Analysis,
    width: usize,
    from: (usize, usize),
    delta: isize,
) -> (usize, usize) {
    let (mut line, mut row) = from;
    let lines = a.line_starts.len();
    if delta >= 0 {
        for _ in 0..delta {
            let n = rows_of_line(a, line, width).len();
            if row + 1 < n {
                row += 1;
            } else if line + 1 < lines {
                line += 1;
                row = 0;
            } else {
                break;
            }
        }
    } else {
        for _ in 0..delta.unsigned_abs() {
            if row > 0 {
                row -= 1;
            } else if line > 0 {
                line -= 1;
                row = rows_of_line(a, line, width).len() - 1;
            } else {
                break;
            }
        }
    }
    (line, row)
}

/// The first visible row that keeps `cursor` on screen, starting from `top`.
pub(crate) fn ensure_visible(
    a: &Analysis,
    width: usize,
    height: usize,
    top: (usize, usize),
    cursor: usize,
) -> (usize, usize) {
    let height = height.max(1);
    let at = position_of(a, cursor, width);
    let top = (top.0.min(a.line_starts.len() - 1), top.1);
    if at < top {
        return at;
    }
    // Count rows from top to the cursor (stop once past the screen).
    let mut pos = top;
    for _ in 0..height {
        if pos == at {
            return top;
        }
        let next = step_rows(a, width, pos, 1);
        if next == pos {
            break;
        }
        pos = next;
    }
    step_rows(a, width, at, -(height as isize - 1))
}

/// `top` moved back when the rows from it to the end of the text do not fill `height` rows.
pub(crate) fn fill_to_end(
    a: &Analysis,
    width: usize,
    height: usize,
    top: (usize, usize),
) -> (usize, usize) {
    let mut pos = top;
    let mut rows = 1;
    while rows < height {
        let next = step_rows(a, width, pos, 1);
        if next == pos {
            return step_rows(a, width, top, -((height - rows) as isize));
        }
        pos = next;
        rows += 1;
    }
    top
}

/// The byte offset shown at column `x`, row `y` of the text area.
pub(crate) fn hit(a: &Analysis, width: usize, top: (usize, usize), x: usize, y: usize) -> usize {
    let (line, row) = step_rows(a, width, top, y as isize);
    let rows = rows_of_line(a, line, width);
    let r = rows[row.min(rows.len() - 1)].clone();
    let mut used = 0;
    for (i, c) in a.document[r.clone()].char_indices() {
        let w = shown_char(c).1;
        if x < used + w {
            return r.start + i;
        }
        used += w;
    }
    r.end
}

/// The style of a segment of the analysis.
pub(crate) fn segment_style(a: &Analysis, s: &Segment, theme: &Theme) -> Style {
    paint_style(theme, s, a.prefix_len, |r| {
        a.regions.field(r).unwrap_or_default()
    })
}

/// The style of a painted segment, for the raw pane and the replay alike: by what it is (the
/// field of its region for delimiters and bodies), dimmed in the prefix, marked where held back
/// or where a parse error points.
pub(crate) fn paint_style(
    theme: &Theme,
    s: &Segment,
    prefix_len: usize,
    field: impl Fn(usize) -> usize,
) -> Style {
    let mut style = match s.paint {
        Paint::Cut => theme.before_anchor(),
        Paint::Open { region } | Paint::Close { region } => theme.delimiter(field(region)),
        Paint::Capture { .. } => theme.capture(),
        Paint::Body { region } => theme.body(field(region)),
        Paint::Discarded => theme.discarded(),
        // Held-back text is not lost, only waiting: plain text under the held mark.
        Paint::Unrouted if s.held => theme.text(),
        Paint::Unrouted => theme.discarded().add_modifier(Modifier::ITALIC),
        Paint::Unfed => theme.dim(),
    };
    if s.range.start < prefix_len && s.paint != Paint::Cut {
        style = style.add_modifier(Modifier::DIM);
    }
    if s.held {
        style = theme.held(style);
    }
    if s.lost {
        style = theme.lost_mark(style);
    }
    if s.error {
        style = theme.error_mark(style);
    }
    style
}

/// The spans of one row: segment colours, search matches on top, the cursor.
fn row_spans(
    a: &Analysis,
    r: Range<usize>,
    cursor: Option<usize>,
    search: Option<&Search>,
    tokens: bool,
    theme: &Theme,
) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut i = a.segment_index(r.start).unwrap_or(a.segments.len());
    let mut at = r.start;
    let mut piece = String::new();
    let mut piece_style = Style::default();
    let flush = |piece: &mut String, style: Style, spans: &mut Vec<Span<'static>>| {
        if !piece.is_empty() {
            spans.push(Span::styled(std::mem::take(piece), style));
        }
    };
    while at < r.end && i < a.segments.len() {
        let s = &a.segments.at(i);
        let end = s.range.end.min(r.end);
        let base = segment_style(a, s, theme);
        for (j, c) in a.document[at..end].char_indices() {
            let pos = at + j;
            let base = if tokens && a.token_index(pos).is_some_and(|t| t % 2 == 1) {
                theme.token_alternate(base)
            } else {
                base
            };
            let base = if a.defused_at(pos).is_some() {
                theme.defused(base)
            } else {
                base
            };
            let style = if Some(pos) == cursor {
                theme.cursor()
            } else {
                match search.and_then(|s| s.at(pos)) {
                    Some(true) => theme.search_current(base),
                    Some(false) => theme.search_match(base),
                    None => base,
                }
            };
            let (shown, width) = shown_char(c);
            if width == 0 && c == rtbench_engine::MARKER {
                continue;
            }
            if style != piece_style {
                flush(&mut piece, piece_style, &mut spans);
                piece_style = style;
            }
            piece.push(shown);
        }
        at = end;
        i += 1;
    }
    flush(&mut piece, piece_style, &mut spans);
    Line::from(spans)
}

/// Rows under the text for the cursor line: two in a narrow pane.
fn info_rows(area: Rect) -> u16 {
    if area.width < 58 { 2 } else { 1 }
}

/// The text area of the raw pane inside its block (the last inner rows tell about the cursor;
/// with the prompt folded, the first row says so).
pub fn text_area(area: Rect, folded: bool) -> Rect {
    let inner = Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    let banner = u16::from(folded && inner.height > info_rows(area) + 1);
    Rect::new(
        inner.x,
        inner.y + banner,
        inner.width,
        inner.height.saturating_sub(info_rows(area) + banner),
    )
}

/// Whether the raw pane shows the folded-prompt row.
pub fn shows_fold(state: &State) -> bool {
    state.analysis().is_some_and(|a| is_folded(state, a))
}

/// Where byte `at` of the document is, named as everywhere (see [`rtbench_tooling::place`]):
/// in the sample's file, and in the generation's (or prefix's) own text.
pub(crate) fn place_of(a: &Analysis, at: usize) -> Place {
    let places = Places::of_sample(&a.sample, &a.sample_name);
    let (line, col) = a.line_col(at);
    let in_generation =
        at > a.prefix_len || (at == a.prefix_len && a.prefix_len < a.document.len());
    if !in_generation {
        return places.name(Part::Prefix, line, col);
    }
    // The generation's own lines start at the prefix's end.
    let (pline, pcol) = a.line_col(a.prefix_len);
    let (gline, gcol) = if line == pline {
        (1, col + 1 - pcol)
    } else {
        (line + 1 - pline, col)
    };
    places.name(Part::Generation, gline, gcol)
}

/// The fullest of `forms` that fits in `width` cells (the last one cut to fit).
fn fitting(forms: Vec<String>, width: usize) -> String {
    let last = forms.last().cloned().unwrap_or_default();
    forms
        .into_iter()
        .find(|f| Span::raw(f.as_str()).width() <= width)
        .unwrap_or_else(|| last.chars().take(width).collect())
}

/// The lines under the text: what the cursor is on and where (the place as named everywhere,
/// then byte and code-point offsets in the document, dropped first when the pane is narrow).
fn cursor_lines(
    a: &Analysis,
    cursor: usize,
    theme: &Theme,
    rows: u16,
    width: usize,
) -> Vec<Line<'static>> {
    let cp = a.chars.chars_at(&a.document, cursor);
    let what = a.describe(cursor);
    let style = a
        .segment_index(cursor)
        .map_or(theme.dim(), |i| segment_style(a, &a.segments.at(i), theme));
    let place = place_of(a, cursor);
    let file = |f: &str| short_name(f).to_string();
    let forms = |room: usize| {
        let full = place.named(file, false);
        fitting(
            vec![
                format!("{full} · byte {cursor} · cp {cp}"),
                full,
                place.named(file, true),
                match &place.file {
                    Some((name, line, col)) => {
                        // The name gives way before the line and column do.
                        let name = short_name(name);
                        let tail = format!(":{line}:{col}");
                        let keep = room.saturating_sub(tail.len() + 1);
                        if name.chars().count() + tail.len() <= room {
                            format!("{name}{tail}")
                        } else if keep >= 3 {
                            format!("{}…{tail}", name.chars().take(keep).collect::<String>())
                        } else {
                            format!("{line}:{col}")
                        }
                    }
                    None => place.own(),
                },
            ],
            room,
        )
    };
    if rows >= 2 {
        let what = Span::styled(what, style.remove_modifier(Modifier::DIM));
        vec![Line::from(what), Line::styled(forms(width), theme.dim())]
    } else {
        let room = width.saturating_sub(Span::raw(what.as_str()).width() + 2);
        let what = Span::styled(what, style.remove_modifier(Modifier::DIM));
        vec![Line::from(vec![
            what,
            Span::styled(format!("  {}", forms(room)), theme.dim()),
        ])]
    }
}

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let mut title = Vec::new();
    if let Some(a) = state.analysis() {
        title.push(Span::raw(format!(" {} ", short_name(&a.sample_name))));
        if let Some(s) = &state.ui.search {
            title.push(Span::styled(
                format!("/{} {} ", s.query, s.position_label()),
                state.ui.theme.search_match(Style::default()),
            ));
        }
    }
    let mut block = pane_block(state, Pane::Raw, title);
    if let Some(a) = state.analysis() {
        // A legend: each field's name in its colour.
        let mut legend = vec![Span::raw(" ")];
        for (i, name) in a.field_names.iter().enumerate() {
            legend.push(Span::styled(name.clone(), state.ui.theme.body(i)));
            legend.push(Span::raw(" "));
        }
        block = block.title_bottom(Line::from(legend));
    }
    frame.render_widget(block, area);
    let Some(a) = state.analysis() else {
        let inner = Rect::new(
            area.x + 1,
            area.y + 1,
            area.width.saturating_sub(2),
            area.height.saturating_sub(2),
        );
        frame.render_widget(
            Paragraph::new(if state.session.busy {
                "parsing…"
            } else {
                "no result yet (see diagnostics)"
            })
            .style(state.ui.theme.dim()),
            inner,
        );
        return;
    };
    let text = text_area(area, is_folded(state, a));
    if text.y > area.y + 1 {
        frame.render_widget(
            Paragraph::new(fold_banner(
                fold_line(a),
                &state.ui.keys.hint(Action::Fold),
                usize::from(text.width),
            ))
            .style(state.ui.theme.before_anchor()),
            Rect::new(text.x, text.y - 1, text.width, 1),
        );
    }
    let width = usize::from(text.width);
    let mut lines = Vec::with_capacity(usize::from(text.height));
    let (mut line_no, mut row) = state.ui.raw_top;
    line_no = line_no.min(a.line_starts.len() - 1);
    let height = usize::from(text.height);
    // One wrapping per visible line.
    'lines: while lines.len() < height && line_no < a.line_starts.len() {
        let rows = rows_of_line(a, line_no, width);
        let line_end = a.line_range(line_no).end;
        for (i, r) in rows.iter().enumerate().skip(row) {
            if lines.len() >= height {
                break 'lines;
            }
            let mut line = row_spans(
                a,
                r.clone(),
                Some(state.ui.cursor),
                state.ui.search.as_ref(),
                state.ui.tokens_shown,
                &state.ui.theme,
            );
            // The cursor on a line break shows after the row's last character.
            if state.ui.cursor == line_end && i == rows.len() - 1 {
                line.spans.push(Span::styled(
                    if line_end < a.document.len() {
                        "⏎"
                    } else {
                        " "
                    },
                    state.ui.theme.cursor(),
                ));
            } else if i == rows.len() - 1
                && line_end < a.document.len()
                && a.segment_index(line_end)
                    .is_some_and(|k| a.segments.at(k).lost)
            {
                // A lost line break would be invisible: show it.
                let k = a.segment_index(line_end).unwrap_or_default();
                line.spans.push(Span::styled(
                    "⏎",
                    segment_style(a, &a.segments.at(k), &state.ui.theme),
                ));
            }
            lines.push(line);
        }
        line_no += 1;
        row = 0;
    }
    frame.render_widget(Paragraph::new(lines), text);
    let rows = info_rows(area);
    let info = Rect::new(text.x, text.y + text.height, text.width, rows);
    if area.height > 2 + rows {
        frame.render_widget(
            Paragraph::new(cursor_lines(
                a,
                state.ui.cursor,
                &state.ui.theme,
                rows,
                usize::from(text.width),
            )),
            info,
        );
    }
}

/// The row that says the prompt is folded, the fullest form that fits `width` (never cut in
/// the middle of its parenthesis).
pub(crate) fn fold_banner(lines: usize, key: &str, width: usize) -> String {
    fitting(
        vec![
            format!("▸ {lines} prompt lines folded ({key} shows them)"),
            format!("▸ {lines} prompt lines folded ({key})"),
            format!("▸ {lines} lines folded ({key})"),
            format!("▸ {lines} folded"),
        ],
        width,
    )
}

/// The first line shown when folded: the line holding the start anchor's cut (0: nothing to
/// fold).
pub(crate) fn fold_line(a: &Analysis) -> usize {
    if a.origin == 0 || a.prefix_len == 0 {
        0
    } else {
        line_of(a, a.origin.min(a.prefix_len))
    }
}

/// Whether the raw pane hides lines before [`fold_line`].
pub(crate) fn is_folded(state: &State, a: &Analysis) -> bool {
    state.ui.fold == Some(true) && fold_line(a) > 0
}

pub(crate) use crate::workbench::analysis::short_name;

#[cfg(test)]
mod tests {
    use super::fold_banner;

    /// The folded-prompt row shortens to fit, never cut inside its parenthesis.
    #[test]
    fn the_fold_row_fits_its_pane() {
        assert_eq!(
            fold_banner(13, "f", 60),
            "▸ 13 prompt lines folded (f shows them)"
        );
        assert_eq!(fold_banner(13, "f", 38), "▸ 13 prompt lines folded (f)");
        assert_eq!(fold_banner(13, "f", 22), "▸ 13 lines folded (f)");
        assert_eq!(fold_banner(13, "f", 14), "▸ 13 folded");
    }
}
