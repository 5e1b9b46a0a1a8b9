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
        Status::Unknown => ("?", theme.dim()),
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
                let name = short_name(&s.name);
                let n = name.chars().count();
                // The fullest label that fits beside the whole name; the mark says the status
                // anyway.
                let short = match s.warnings {
                    0 => s.status.label().to_string(),
                    w => format!("{} ⚠{w}", s.status.label()),
                };
                let label = [s.label(), short, s.status.label().to_string()]
                    .into_iter()
                    .find(|l| n + l.chars().count() + 3 <= width)
                    .unwrap_or_default();
                let label_style = if s.warnings > 0 || s.unstable == Some(true) {
                    theme.warning()
                } else {
                    style
                };
                let mut spans = vec![Span::styled(format!("{mark} "), style)];
                if !label.is_empty() {
                    let len = label.chars().count();
                    spans.push(Span::raw(name.to_string()));
                    spans.push(Span::raw(" ".repeat(width - n - len - 2)));
                    spans.push(Span::styled(label, label_style));
                } else if n + 2 <= width {
                    spans.push(Span::raw(name.to_string()));
                } else {
                    let kept: String = name.chars().take(width.saturating_sub(3)).collect();
                    spans.push(Span::raw(format!("{kept}…")));
                }
                let mut line = Line::from(spans);
                if i == state.selected_sample {
                    line = line.style(theme.selected());
                }
                line
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), body);
}
