//! The message pane: the final message dict as highlighted JSON. While the newest parse fails,
//! the last good message of the same sample stays, marked stale, under the error.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::workbench::highlight::MessageLines;
use crate::workbench::state::{Pane, State};
use crate::workbench::view::{AnyRow, inner, pane_block};

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
    // the window's lines are cloned.
    let mut lines: Vec<Line<'static>> = Vec::new();
    let none = MessageLines::default();
    let mut message: &MessageLines = &none;
    match state.session.shown.as_ref() {
        None => lines.push(Line::styled("no message yet", theme.dim())),
        Some(shown) if shown.analysis.message.is_some() => message = &shown.message_lines,
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
                message = &good.message_lines;
            }
        }
    }
    let body = inner(area);
    let (lines, top) = super::window(
        lines
            .iter()
            .map(AnyRow::Line)
            .chain(message.iter().map(AnyRow::Message)),
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
