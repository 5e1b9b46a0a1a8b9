//! The help overlay: every key binding, and what the colours and marks of the raw pane mean.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Wrap};

use crate::workbench::keys::BINDINGS;
use crate::workbench::state::State;

pub fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.theme;
    let w = area.width.saturating_sub(4).min(76);
    let h = area.height.saturating_sub(2).min(32);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let keys_w = BINDINGS
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (k, what) in BINDINGS {
        let pad = keys_w.saturating_sub(k.chars().count());
        lines.push(Line::from(vec![
            Span::styled(format!(" {k}{}", " ".repeat(pad)), theme.key()),
            Span::raw((*what).to_string()),
        ]));
    }
    lines.push(Line::from(vec![
        Span::styled(" raw: ", theme.key()),
        Span::styled("<open>", theme.delimiter(0)),
        Span::raw(" delimiter  "),
        Span::styled("body", theme.body(0)),
        Span::raw(" region body  "),
        Span::styled("name", theme.capture()),
        Span::raw(" capture  "),
        Span::styled("x", theme.error_mark(theme.body(1))),
        Span::raw(" parse error"),
    ]));
    lines.push(Line::from(vec![
        Span::raw("      "),
        Span::styled("held", theme.held(theme.body(0))),
        Span::raw(" held back  "),
        Span::styled("dropped", theme.discarded()),
        Span::raw(" to no field  "),
        Span::styled("prompt", theme.before_anchor()),
        Span::raw(" before anchor"),
    ]));
    lines.push(Line::styled(
        "      Prefix text is dimmed. Under the text: what the cursor is on.",
        theme.dim(),
    ));
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((state.scroll.help, 0))
            .block(
                Block::bordered()
                    .border_type(BorderType::Double)
                    .border_style(theme.border(true))
                    .title(Span::styled(
                        " help · ? or Esc closes · j k scroll ",
                        theme.title(true),
                    )),
            )
            .style(theme.text()),
        rect,
    );
}
