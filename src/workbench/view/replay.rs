//! The stream replay screen: the text coloured as the stream stood after the current step
//! (the chunk just fed underlined, held-back text marked, unfed text dimmed), what the step did
//! (chunk, events, held text and the delimiters it might start), the message a streaming
//! client would show, and the timeline of every event.
//!
//! ```text
//! +-- raw (step 12/340) ----------+-- step -----------------------+
//! |                               |                               |
//! |                               +-- client message -------------+
//! |                               |                               |
//! +-- timeline -----------------------------------------------------+
//! status bar
//! ```

use std::ops::Range;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use crate::workbench::highlight;
use crate::workbench::replay::ReplayState;
use crate::workbench::state::State;
use crate::workbench::theme::Theme;
use crate::workbench::view::raw::{paint_style, shown_char, wrap_rows};
use rtbench_engine::event::EventKind;
use rtbench_engine::py::py_repr_str;
use rtbench_engine::value::Value;
use rtbench_tooling::replay::{CandidateState, Outcome, Replay, Role, StepKind};

/// `text` as a Python string literal, cut to `max` characters with an ellipsis after the quote.
fn quoted(text: &str, max: usize) -> String {
    match text.char_indices().nth(max.max(1)) {
        Some((cut, _)) => format!("{}…", py_repr_str(&text[..cut])),
        None => py_repr_str(text),
    }
}

/// The replay screen's panes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplayPane {
    Raw,
    Step,
    Message,
    Timeline,
}

/// Where the replay panes go in `main` (the screen without the status bar).
pub(crate) fn layout(main: Rect, bottom: u16) -> Vec<(ReplayPane, Rect)> {
    let timeline_h = if main.height < 23 {
        bottom.min(main.height / 3)
    } else {
        bottom
    }
    .clamp(3, main.height.saturating_sub(6).max(3));
    let top_h = main.height.saturating_sub(timeline_h);
    let raw_w = if main.width >= 100 {
        main.width * 55 / 100
    } else {
        main.width / 2
    };
    let right_w = main.width - raw_w;
    let step_h = top_h * 11 / 20;
    vec![
        (ReplayPane::Raw, Rect::new(main.x, main.y, raw_w, top_h)),
        (
            ReplayPane::Step,
            Rect::new(main.x + raw_w, main.y, right_w, step_h),
        ),
        (
            ReplayPane::Message,
            Rect::new(main.x + raw_w, main.y + step_h, right_w, top_h - step_h),
        ),
        (
            ReplayPane::Timeline,
            Rect::new(main.x, main.y + top_h, main.width, timeline_h),
        ),
    ]
}

fn block(theme: &Theme, title: Vec<Span<'static>>, focused: bool) -> Block<'static> {
    let block = Block::bordered()
        .border_style(theme.border(focused))
        .title(Line::from(title));
    if focused {
        block.border_type(BorderType::Thick)
    } else {
        block
    }
}

fn inner(r: Rect) -> Rect {
    crate::workbench::view::inner(r)
}

/// Draws the replay screen into `main`.
pub(crate) fn draw(frame: &mut Frame, main: Rect, state: &State) {
    let Some(rs) = &state.modes.replay else {
        return;
    };
    for (pane, rect) in layout(main, state.ui.bottom) {
        if rect.width < 3 || rect.height < 3 {
            continue;
        }
        match pane {
            ReplayPane::Raw => raw(frame, rect, state, rs),
            ReplayPane::Step => step(frame, rect, state, rs),
            ReplayPane::Message => message(frame, rect, state, rs),
            ReplayPane::Timeline => timeline(frame, rect, state, rs),
        }
    }
}

/// The document rows to show: the row holding `focus` about two thirds down.
fn visible_rows(rs: &ReplayState, width: usize, height: usize, focus: usize) -> Vec<Range<usize>> {
    rows_around(rs.replay.document(), &rs.line_starts, width, height, focus)
}

/// A contiguous run of the wrapped rows of `doc` (lines starting at `starts`, wrapped to
/// `width`) that holds the row of `focus`, about two thirds down, and fills `height` rows
/// (all of them when the text has fewer). Rows are counted one way only: every row is a
/// wrapped row of one line, walked up and down from the focus row.
fn rows_around(
    doc: &str,
    starts: &[usize],
    width: usize,
    height: usize,
    focus: usize,
) -> Vec<Range<usize>> {
    if height == 0 || starts.is_empty() {
        return Vec::new();
    }
    let line_range = |l: usize| {
        let start = starts[l];
        let end = starts.get(l + 1).map_or(doc.len(), |s| s - 1);
        start..end.max(start)
    };
    let focus = focus.min(doc.len());
    let focus_line = starts.partition_point(|&s| s <= focus).saturating_sub(1);
    let rows = wrap_rows(doc, line_range(focus_line), width);
    // A position at the end of a row that is not the line's last belongs to the next row.
    let k = rows.iter().rposition(|r| r.start <= focus).unwrap_or(0);
    let focus_row = rows[k].clone();
    // The rows above the focus row, nearest first, and the rows below it, wrapping one line
    // at a time as they are needed.
    let (mut up_line, mut up_buf) = (focus_line, rows[..k].to_vec());
    let mut up = std::iter::from_fn(|| {
        loop {
            if let Some(r) = up_buf.pop() {
                return Some(r);
            }
            if up_line == 0 {
                return None;
            }
            up_line -= 1;
            up_buf = wrap_rows(doc, line_range(up_line), width);
        }
    });
    let (mut down_line, mut down_buf) = (
        focus_line,
        rows[k + 1..]
            .iter()
            .cloned()
            .collect::<std::collections::VecDeque<_>>(),
    );
    let down = std::iter::from_fn(|| {
        loop {
            if let Some(r) = down_buf.pop_front() {
                return Some(r);
            }
            if down_line + 1 >= starts.len() {
                return None;
            }
            down_line += 1;
            down_buf = wrap_rows(doc, line_range(down_line), width).into();
        }
    });
    let want_above = (height * 2 / 3).max(1) - 1;
    let mut above: Vec<Range<usize>> = up.by_ref().take(want_above).collect();
    let below: Vec<Range<usize>> = down.take(height - 1 - above.len()).collect();
    // Near the end of the text: more rows above fill the pane.
    let missing = height - 1 - above.len() - below.len();
    above.extend(up.take(missing));
    above.reverse();
    above.push(focus_row);
    above.extend(below);
    above
}

fn raw(frame: &mut Frame, area: Rect, state: &State, rs: &ReplayState) {
    let theme = &state.ui.theme;
    let r = &rs.replay;
    let s = r.step(rs.step);
    let fed_cp = rs.chars.chars_at(r.document(), s.fed_to);
    let total_cp = rs.total_chars;
    let title = vec![
        Span::styled("raw", theme.title(true)),
        Span::styled(
            format!(
                " step {}/{} · fed {fed_cp}/{total_cp} cp ",
                rs.step,
                r.last_step()
            ),
            theme.dim(),
        ),
    ];
    let inner = inner(area);
    frame.render_widget(block(theme, title, true), area);
    let selected = rs
        .selected_event
        .and_then(|i| r.timeline_event(i))
        .map(|e| e.event.span)
        .filter(|sp| !sp.is_empty());
    let focus = selected.as_ref().map_or(s.fed_to, |sp| sp.start);
    let rows = visible_rows(
        rs,
        usize::from(inner.width),
        usize::from(inner.height),
        focus,
    );
    let segments = r.paint(rs.step);
    let chunk = s.chunk.as_ref().map(|c| c.range.clone());
    let style_at = |at: usize, seg: usize| {
        let mut style = paint_style(theme, &segments[seg], r.prefix_len(), |i| {
            r.regions().at(i).field
        });
        if chunk.as_ref().is_some_and(|c| c.contains(&at)) {
            style = style.add_modifier(Modifier::UNDERLINED | Modifier::BOLD);
        }
        if selected.as_ref().is_some_and(|sp| sp.contains(&at)) {
            style = style.add_modifier(Modifier::REVERSED);
        }
        style
    };
    let doc = r.document();
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut seg = segments.partition_point(|g| g.range.end <= row.start);
        let mut piece = String::new();
        let mut current: Option<Style> = None;
        for (i, c) in doc[row.clone()].char_indices() {
            let at = row.start + i;
            while seg + 1 < segments.len() && segments[seg].range.end <= at {
                seg += 1;
            }
            let style = style_at(at, seg.min(segments.len().saturating_sub(1)));
            if current != Some(style) {
                if let Some(st) = current.take()
                    && !piece.is_empty()
                {
                    spans.push(Span::styled(std::mem::take(&mut piece), st));
                }
                current = Some(style);
            }
            if c != rtbench_engine::MARKER {
                piece.push(shown_char(c).0);
            }
        }
        if let Some(st) = current
            && !piece.is_empty()
        {
            spans.push(Span::styled(piece, st));
        }
        lines.push(Line::from(spans));
    }
    frame.render_widget(Paragraph::new(lines).style(theme.text()), inner);
}

fn event_text(r: &Replay, ev: &rtbench_engine::event::Event, width: usize) -> (String, String) {
    let field = r.field_name(ev.field).to_string();
    let max = width.max(8);
    match &ev.kind {
        EventKind::Open => ("open".into(), field),
        EventKind::Chunk { text, dirty } => (
            if *dirty { "chunk*" } else { "chunk" }.into(),
            format!("{field} {}", quoted(text, max)),
        ),
        EventKind::Close { value } => {
            // A long text value is cut before it is quoted, not after.
            let v = match value {
                Value::Str(text) => quoted(text, max),
                other => {
                    let v = other.py_repr();
                    match v.char_indices().nth(max) {
                        Some((cut, _)) => format!("{}…", &v[..cut]),
                        None => v,
                    }
                }
            };
            ("close".into(), format!("{field} = {v}"))
        }
        EventKind::Discard { text } => (
            "discard".into(),
            format!("(no field) {}", quoted(text, max)),
        ),
    }
}

fn step(frame: &mut Frame, area: Rect, state: &State, rs: &ReplayState) {
    let theme = &state.ui.theme;
    let r = &rs.replay;
    let s = r.step(rs.step);
    let inner = inner(area);
    let width = usize::from(inner.width);
    let what = match s.kind {
        StepKind::Prefix => "the prefix (initial events)".to_string(),
        StepKind::Feed { index } => {
            format!("feed {} of {}", index + 1, rs.feeds)
        }
        StepKind::Finalize => "finalize (end of stream)".to_string(),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("step {}: ", rs.step), theme.key()),
        Span::raw(what),
    ])];
    if let Some(c) = &s.chunk {
        let cp = |b: usize| rs.chars.chars_at(r.document(), b);
        lines.push(Line::from(vec![
            Span::styled("chunk ", theme.key()),
            Span::styled(
                quoted(r.chunk_text(rs.step), width.saturating_sub(20).max(8)),
                theme
                    .text()
                    .add_modifier(Modifier::UNDERLINED | Modifier::BOLD),
            ),
            Span::styled(
                format!(" cp {}-{}", cp(c.range.start), cp(c.range.end)),
                theme.dim(),
            ),
        ]));
        if let Some(note) = c.note() {
            lines.push(Line::styled(note, theme.warning()));
        }
    }
    let range = s.events.clone();
    if range.is_empty() {
        lines.push(Line::styled("no events", theme.dim()));
    }
    // Only what fits is rebuilt and formatted: a whole-text feed can hold every event of the
    // stream.
    let room = usize::from(inner.height).saturating_sub(lines.len());
    let shown = if range.len() > room {
        room.saturating_sub(1)
    } else {
        range.len()
    };
    for e in &r.timeline(range.start..range.start + shown) {
        let (kind, text) = event_text(r, &e.event, width.saturating_sub(16));
        let style = match &e.event.kind {
            EventKind::Open | EventKind::Close { .. } => theme.delimiter(e.event.field),
            EventKind::Chunk { .. } => theme.body(e.event.field),
            EventKind::Discard { .. } => theme.discarded(),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{kind:<7} "), style),
            Span::raw(text),
        ]));
    }
    if shown < range.len() {
        lines.push(Line::styled(
            format!("… {} more events (timeline below)", range.len() - shown),
            theme.dim(),
        ));
    }
    lines.extend(held_lines(state, rs, width));
    if let Some(e) = &s.error {
        for (i, l) in e.text().lines().enumerate() {
            let l = if i == 0 {
                format!("error: {l}")
            } else {
                format!("  {l}")
            };
            lines.push(Line::styled(l, theme.error()));
        }
        if let Some(f) = &e.field {
            lines.push(Line::styled(format!("  in field '{f}'"), theme.dim()));
        }
    }
    frame.render_widget(
        block(theme, vec![Span::styled("step", theme.title(false))], false),
        area,
    );
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .style(theme.text()),
        inner,
    );
}

/// What the step holds back, and for each delimiter that could still claim it, how.
fn held_lines(state: &State, rs: &ReplayState, width: usize) -> Vec<Line<'static>> {
    let theme = &state.ui.theme;
    let r = &rs.replay;
    let held = r.held_text(rs.step);
    if held.is_empty() {
        return vec![Line::styled("held back: nothing", theme.dim())];
    }
    let mut lines = vec![Line::from(vec![
        Span::styled("held back ", theme.key()),
        Span::styled(
            quoted(held, width.saturating_sub(12).max(8)),
            theme.held(theme.text()),
        ),
    ])];
    match r.held_candidates(rs.step) {
        Ok(cands) => {
            for c in cands {
                let role = match c.role {
                    Role::Open => "open",
                    Role::Close => "close",
                };
                let how = match c.state {
                    CandidateState::Partial => "might start here".to_string(),
                    CandidateState::MayGrow => "matched, may still grow".to_string(),
                    CandidateState::Blocked { .. } => {
                        "matched, waits for an earlier pending match".to_string()
                    }
                    CandidateState::Stalled { .. } => {
                        "zero-width close of an unopened region: stalls".to_string()
                    }
                };
                lines.push(Line::from(vec![
                    Span::raw("  "),
                    Span::styled(format!("{role} {}", c.delimiter), theme.delimiter(c.field)),
                    Span::styled(format!(" of {}: {how}", r.field_name(c.field)), theme.dim()),
                ]));
            }
        }
        Err(e) => lines.push(Line::styled(
            format!("  (cannot tell: {e})"),
            theme.warning(),
        )),
    }
    lines
}

fn message(frame: &mut Frame, area: Rect, state: &State, rs: &ReplayState) {
    let theme = &state.ui.theme;
    let r = &rs.replay;
    let pm = r.partial_message(rs.step);
    let inner = inner(area);
    let status = if pm.finished {
        Span::styled(" final ", theme.ok())
    } else if matches!(r.outcome(), Outcome::Failed { step, .. } if *step <= rs.step) {
        Span::styled(" failed ", theme.error())
    } else {
        Span::styled(" so far ", theme.dim())
    };
    let title = vec![Span::styled("client message", theme.title(false)), status];
    frame.render_widget(block(theme, title, false), area);
    let json = crate::workbench::analysis::pretty_json(&pm.to_value(r.template()));
    // The pane does not scroll: highlight only the lines it can show.
    let visible = json
        .match_indices('\n')
        .nth(usize::from(inner.height))
        .map_or(json.as_str(), |(i, _)| &json[..i]);
    let mut lines = highlight::json_lines(visible, &theme.syntect_theme, theme.no_color);
    let failed = matches!(r.outcome(), Outcome::Failed { step, .. } if *step <= rs.step);
    if let Some(live) = pm.live.as_ref().filter(|_| !failed) {
        let how = if live.dirty {
            "raw text until it closes"
        } else {
            "streaming text"
        };
        lines.push(Line::from(vec![
            Span::styled("live ", theme.key()),
            Span::styled(live.name.clone(), theme.body(live.field)),
            Span::styled(format!(": {how}"), theme.dim()),
        ]));
        if let Some(p) = &live.preview {
            let v = rtbench_engine::py::json_dumps(&p.value, &Default::default())
                .unwrap_or_else(|_| Value::Null.py_repr());
            lines.push(Line::from(vec![
                Span::styled("preview ", theme.key()),
                Span::raw(v),
            ]));
            lines.push(Line::styled(
                "  (a guess that closes the JSON so far; not the value)",
                theme.dim(),
            ));
        }
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .style(theme.text()),
        inner,
    );
}

/// The first timeline row shown for a pane `height` rows high, keeping the selected event (or
/// the step's first event) in view.
pub(crate) fn timeline_top(rs: &ReplayState, height: usize) -> usize {
    let r = &rs.replay;
    let n = r.timeline_len();
    let focus = rs
        .selected_event
        .unwrap_or_else(|| r.step(rs.step).events.start.min(n.saturating_sub(1)));
    focus
        .saturating_sub(height / 2)
        .min(n.saturating_sub(height))
}

fn timeline(frame: &mut Frame, area: Rect, state: &State, rs: &ReplayState) {
    let theme = &state.ui.theme;
    let r = &rs.replay;
    let inner = inner(area);
    let h = usize::from(inner.height);
    let top = timeline_top(rs, h);
    let total = r.timeline_len();
    let events = r.timeline(top..top + h);
    let current = r.step(rs.step).events;
    let title = vec![
        Span::styled("timeline", theme.title(false)),
        Span::styled(format!(" {total} events · ↑↓ select · click "), theme.dim()),
    ];
    frame.render_widget(block(theme, title, false), area);
    let width = usize::from(inner.width);
    let mut lines = Vec::new();
    for (i, e) in (top..).zip(&events) {
        let (kind, text) = event_text(r, &e.event, width.saturating_sub(22));
        let mut base = if current.contains(&i) {
            theme.text().add_modifier(Modifier::BOLD)
        } else {
            theme.text()
        };
        if rs.selected_event == Some(i) {
            base = theme.selected();
        }
        let step = match r.step_kind(e.step) {
            StepKind::Prefix => "prefix".to_string(),
            StepKind::Finalize => "final".to_string(),
            StepKind::Feed { .. } => format!("{}", e.step),
        };
        let kind_style = match &e.event.kind {
            EventKind::Open | EventKind::Close { .. } => theme.delimiter(e.event.field),
            EventKind::Chunk { .. } => theme.body(e.event.field),
            EventKind::Discard { .. } => theme.discarded(),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{step:>6} "), base.patch(theme.dim())),
            Span::styled(
                format!("{kind:<7} "),
                if rs.selected_event == Some(i) {
                    base
                } else {
                    kind_style
                },
            ),
            Span::styled(text, base),
        ]));
    }
    frame.render_widget(Paragraph::new(lines).style(theme.text()), inner);
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::offsets::line_starts;

    /// Every wrapped row of the text, in order.
    fn all_rows(doc: &str, starts: &[usize], width: usize) -> Vec<Range<usize>> {
        (0..starts.len())
            .flat_map(|l| {
                let end = starts.get(l + 1).map_or(doc.len(), |s| s - 1);
                wrap_rows(doc, starts[l]..end.max(starts[l]), width)
            })
            .collect()
    }

    #[test]
    fn the_rows_shown_are_a_contiguous_run_holding_the_focus_that_fills_the_pane() {
        let long = "[AVAILABLE_TOOLS][{\"type\": \"function\", \"name\": \"get_exchange_rate\", \
                    \"description\": \"Current exchange rate between two currencies.\"}]";
        let doc = format!(
            "<s>[SYSTEM_PROMPT]short\n{long}{long}\n\n1 € is worth about **0.94 CHF** 日本語の\
             テキストも折り返す{long}\nx\n{long}</s>"
        );
        let starts = line_starts(&doc);
        let focuses: Vec<usize> = (0..=doc.len())
            .filter(|&b| doc.is_char_boundary(b))
            .collect();
        for width in [2, 3, 7, 13, 27, 28, 40, 79, 200] {
            let every = all_rows(&doc, &starts, width);
            for height in [1, 2, 3, 5, 8, 11, 13, 20, 60] {
                for &focus in &focuses {
                    let rows = rows_around(&doc, &starts, width, height, focus);
                    let first = every
                        .iter()
                        .position(|r| *r == rows[0])
                        .unwrap_or_else(|| panic!("{:?} is no row", rows[0]));
                    // Contiguous and without repeats: the run of every row from the first.
                    assert_eq!(
                        rows[..],
                        every[first..first + rows.len()],
                        "width {width} height {height} focus {focus}"
                    );
                    assert_eq!(rows.len(), height.min(every.len()));
                    // The focus row is on screen (a position at the end of a row that is not
                    // its line's last belongs to the next row).
                    let at = rows
                        .iter()
                        .position(|r| r.start <= focus && (focus < r.end || r.end == focus))
                        .unwrap_or_else(|| {
                            panic!("width {width} height {height}: focus {focus} not shown")
                        });
                    // About two thirds down, unless the text starts or ends near it.
                    let want = (height * 2 / 3).max(1) - 1;
                    assert!(at <= want || first + rows.len() == every.len());
                }
            }
        }
    }
}
