//! The message pane: the final message dict as highlighted JSON. While the newest parse fails,
//! the last good message of the same sample stays, marked stale, under the error.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::workbench::highlight::MessageLines;
use crate::workbench::state::{Pane, State};
use crate::workbench::view::{AnyRow, inner, pane_block};
use rtbench_engine::Dict;

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.ui.theme;
    let mut extra = Vec::new();
    if let Some(a) = state.analysis() {
        let label = if a.message.is_some() {
            " parsed "
        } else {
            " parse error "
        };
        extra.push(Span::raw(label));
    }
    frame.render_widget(pane_block(state, Pane::Message, extra), area);
    // A few lines of our own, then the (shared, possibly long) highlighted message: only
    // the window's lines are written.
    let mut lines: Vec<Line<'static>> = Vec::new();
    let mut message: Option<(&MessageLines, &Dict)> = None;
    match state.session.shown.as_ref() {
        None => lines.push(Line::styled("no message yet", theme.dim())),
        Some(shown) if shown.analysis.message.is_some() => {
            message = shown
                .analysis
                .message
                .as_ref()
                .map(|m| (&*shown.message_lines, m));
        }
        Some(shown) => {
            lines.push(Line::styled("no message: parsing failed", theme.error()));
            if let Some(p) = &shown.analysis.problem {
                // A multi-line message (a JSON decode error quoting the text) keeps its lines.
                let text = p.error.text();
                let mut parts = text.lines();
                lines.push(Line::styled(
                    parts.next().unwrap_or("").to_string(),
                    theme.error(),
                ));
                lines.extend(parts.map(|l| Line::styled(format!("  {l}"), theme.error())));
            }
            if let Some(good) = state
                .session
                .last_good
                .as_ref()
                .filter(|g| g.analysis.sample_name == shown.analysis.sample_name)
            {
                lines.push(Line::raw(""));
                lines.push(Line::from(vec![
                    Span::styled(" STALE ", theme.stale()),
                    Span::styled(" last good message of this sample:", theme.dim()),
                ]));
                message = good
                    .analysis
                    .message
                    .as_ref()
                    .map(|m| (&*good.message_lines, m));
            }
        }
    }
    let body = inner(area);
    let (lines, top) = window(
        &lines,
        message,
        body.width,
        body.height,
        state.ui.scroll[Pane::Message],
    );
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((top, 0)),
        body,
    );
}

/// The lines of the pane's own `lines` and then the `message`'s wrapped at `width`, scrolled
/// down by `top` rows, as [`super::window`] finds them: a window past the pane's own lines
/// starts writing the message at the checkpoint before it.
fn window(
    lines: &[Line<'static>],
    message: Option<(&MessageLines, &Dict)>,
    width: u16,
    height: u16,
    top: usize,
) -> (Vec<Line<'static>>, u16) {
    let w = usize::from(width.max(1));
    let own: usize = lines.iter().map(|l| l.width().div_ceil(w).max(1)).sum();
    match message {
        Some((m, d)) if top >= own => {
            let (first, before) = m.seek(d.into(), width, top - own);
            super::window(
                m.iter_from(d.into(), first).map(AnyRow::Message),
                width,
                height,
                top - own - before,
            )
        }
        _ => super::window(
            lines.iter().map(AnyRow::Line).chain(
                message
                    .into_iter()
                    .flat_map(|(m, d)| m.iter(d.into()))
                    .map(AnyRow::Message),
            ),
            width,
            height,
            top,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::highlight::{CHECKPOINT, MessageLine, message_lines};
    use crate::workbench::json_lines::lines_written;

    /// A message of `calls` small tool calls (nine lines each), after a long content line
    /// (cut, and wrapped at most widths) and a line of wide characters.
    fn calls(calls: usize) -> Dict {
        let call = |i: usize| {
            format!(
                r#"{{"type": "function", "function": {{"name": "f", "arguments": {{"a": {i}}}}}}}"#
            )
        };
        let text = format!(
            r#"{{"role": "assistant", "content": "{}", "thinking": "{}", "tool_calls": [{}]}}"#,
            "w".repeat(3000),
            "日本".repeat(30),
            (0..calls).map(call).collect::<Vec<_>>().join(", ")
        );
        match rtbench_engine::py::json_loads(&text) {
            Ok(rtbench_engine::Value::Dict(d)) => d,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_window_is_the_window_of_all_the_lines() {
        let message = calls(600);
        let own = [
            Line::raw("no message: parsing failed"),
            Line::raw("x".repeat(100)),
            Line::raw(""),
        ];
        for theme in ["base16-ocean.dark", "no such theme"] {
            let lines = message_lines((&message).into(), theme, false);
            assert!(lines.len() > 20 * CHECKPOINT);
            let all: Vec<_> = lines.iter((&message).into()).collect();
            for width in [1, 9, 40, 78, 4000] {
                let w = usize::from(width);
                let rows: usize = all.iter().map(|l| l.width().div_ceil(w).max(1)).sum();
                assert_eq!(lines.rows((&message).into(), width), rows);
                let own_rows: usize = own.iter().map(|l| l.width().div_ceil(w).max(1)).sum();
                let total = own_rows + rows;
                for top in [
                    0,
                    1,
                    own_rows,
                    own_rows + 1,
                    own_rows + CHECKPOINT - 1,
                    own_rows + CHECKPOINT,
                    total / 2,
                    total - 3,
                    total,
                    total + 9,
                ] {
                    let every = super::super::window(
                        own.iter()
                            .map(AnyRow::Line)
                            .chain(all.iter().cloned().map(AnyRow::Message)),
                        width,
                        7,
                        top,
                    );
                    assert_eq!(
                        window(&own, Some((&lines, &message)), width, 7, top),
                        every,
                        "{theme}, width {width}, top {top}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_window_deep_in_a_long_message_writes_the_lines_from_the_checkpoint_before_it() {
        // 450,000 lines of tool calls.
        let message = calls(50_000);
        let lines = message_lines((&message).into(), "base16-ocean.dark", false);
        assert!(lines.len() > 450_000);
        let (width, height) = (78, 20);
        // The calls' lines all fit the width: their rows are known without writing them.
        let before = lines_written();
        let rows = lines.rows((&message).into(), width);
        let measured = lines_written() - before;
        assert!(
            measured <= CHECKPOINT,
            "{measured} lines written to count the rows"
        );
        let w = usize::from(width);
        let line_rows = |l: MessageLine<'_>| l.width().div_ceil(w).max(1);
        let every: Vec<usize> = lines.iter((&message).into()).map(line_rows).collect();
        assert_eq!(rows, every.iter().sum::<usize>());
        // Line 400,000 (the long content line before it wraps).
        let top: usize = every[..400_000].iter().sum();
        assert!(top > 400_000);
        let before = lines_written();
        let (shown, inside) = window(&[], Some((&lines, &message)), width, height, top);
        let written = lines_written() - before;
        assert!(
            written <= CHECKPOINT + usize::from(height) + 1,
            "{written} lines written to draw {height} rows"
        );
        assert_eq!(inside, 0);
        let expected: Vec<Line<'static>> = lines
            .iter((&message).into())
            .skip(400_000)
            .take(shown.len())
            .map(|l| l.to_line())
            .collect();
        assert_eq!(shown, expected);
        assert_eq!(shown.len(), usize::from(height) + 1);
    }
}
