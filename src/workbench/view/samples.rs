//! The sample list: every sample with its status (ok, error, differs from expected, no
//! expected message, unreadable); the selected one is highlighted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::workbench::analysis::Status;
use crate::workbench::state::{Pane, State};
use crate::workbench::theme::Theme;
use crate::workbench::view::raw::short_name;
use crate::workbench::view::{inner, pane_block};

/// The marker and style of a status.
pub fn marker(status: &Status, theme: &Theme) -> (&'static str, Style) {
    match status {
        Status::Ok => ("✓", theme.ok()),
        Status::Error(_) => ("✗", theme.error()),
        Status::Differs(_) => ("≠", theme.warning()),
        Status::NoExpected => ("·", theme.dim()),
        Status::Unreadable(_) => ("!", theme.error()),
    }
}

pub fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.theme;
    let n = state.samples.len();
    let extra = vec![Span::raw(if n == 0 {
        " none ".to_string()
    } else {
        format!(" {}/{n} ", state.selected_sample.min(n - 1) + 1)
    })];
    frame.render_widget(pane_block(state, Pane::Samples, extra), area);
    let body = inner(area);
    let width = usize::from(body.width);
    let lines: Vec<Line<'static>> = if n == 0 {
        vec![Line::styled("no samples (.sample or .txt)", theme.dim())]
    } else {
        state
            .samples
            .iter()
            .enumerate()
            .skip(usize::from(state.scroll.samples))
            .map(|(i, s)| {
                let (mark, style) = marker(&s.status, theme);
                let label = s.status.label();
                let name = short_name(&s.name);
                let room = width.saturating_sub(label.len() + 3);
                let name: String = if name.chars().count() > room {
                    let kept: String = name.chars().take(room.saturating_sub(1)).collect();
                    format!("{kept}…")
                } else {
                    name.to_string()
                };
                let pad = width.saturating_sub(name.chars().count() + label.len() + 3);
                let mut line = Line::from(vec![
                    Span::styled(format!("{mark} "), style),
                    Span::raw(name),
                    Span::raw(" ".repeat(pad + 1)),
                    Span::styled(label, style),
                ]);
                if i == state.selected_sample {
                    line = line.style(theme.selected());
                }
                line
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), body);
}
