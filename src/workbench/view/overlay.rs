//! A text overlay over the screen: the explanation of a field, or the chunking check's
//! report. Drawn like the help; Esc closes it. While the next explanation is computed, the
//! title shows a spinner.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Wrap};

use crate::workbench::protocol::OverlayLine;
use crate::workbench::state::State;

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let Some(o) = &state.modes.overlay else {
        return;
    };
    let theme = &state.ui.theme;
    let w = area.width.saturating_sub(4).min(100);
    // As tall as the wrapped text, within the screen.
    let inner_w = usize::from(w.saturating_sub(2)).max(1);
    let rows: usize = o
        .lines
        .iter()
        .map(|l| Span::raw(l.text()).width().div_ceil(inner_w).max(1))
        .sum();
    let h = (rows as u16)
        .saturating_add(2)
        .min(area.height.saturating_sub(2));
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let lines: Vec<Line<'static>> = o
        .lines
        .iter()
        .map(|l| match l {
            OverlayLine::Detail(_) => Line::raw(l.text()),
            OverlayLine::Heading(t) => Line::styled(t.clone(), theme.key()),
        })
        .collect();
    let mut title = vec![Span::styled(
        format!(" {} · Esc closes · j k scroll ", o.title),
        theme.title(true),
    )];
    // What will replace it, while it is computed (another field's explanation).
    if let Some(job) = &state.work.job {
        title.push(Span::styled(
            format!(" {} ", crate::workbench::view::status::running(job)),
            theme.key(),
        ));
    }
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((o.scroll, 0))
            .block(
                Block::bordered()
                    .border_type(BorderType::Double)
                    .border_style(theme.border(true))
                    .title(Line::from(title)),
            )
            .style(theme.text()),
        rect,
    );
}
