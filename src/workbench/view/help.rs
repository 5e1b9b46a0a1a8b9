//! The help overlay: every key binding, and what the colours and marks of the raw pane mean.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph, Wrap};

use crate::workbench::keys::help_rows;
use crate::workbench::state::State;

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.ui.theme;
    let w = area.width.saturating_sub(4).min(76);
    let h = area.height.saturating_sub(2).min(32);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    let rows = help_rows(&state.ui.keys);
    let keys_w = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    let mut lines: Vec<Line<'static>> = Vec::new();
    // Descriptions wrap under themselves, not under the keys.
    let room = usize::from(w.saturating_sub(2))
        .saturating_sub(keys_w + 1)
        .max(12);
    lines.push(Line::styled(
        match &state.ui.keys.source {
            Some(file) => format!(" keys: the defaults with the changes of {file}"),
            None => " keys: the defaults (change them in ~/.config/rtbench/config.toml, or \
                     the file $RTBENCH_CONFIG names)"
                .to_string(),
        },
        theme.dim(),
    ));
    for (k, what) in &rows {
        let pad = keys_w.saturating_sub(k.chars().count());
        for (i, part) in wrap(what, room).into_iter().enumerate() {
            let key = if i == 0 {
                format!(" {k}{}", " ".repeat(pad))
            } else {
                " ".repeat(keys_w + 1)
            };
            lines.push(Line::from(vec![
                Span::styled(key, theme.key()),
                Span::raw(part),
            ]));
        }
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
        Span::styled("lost", theme.lost_mark(theme.body(0))),
        Span::raw(" lost without an error (see the diagnostics)"),
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
            .scroll((state.ui.scroll.help, 0))
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

/// `text` cut into lines of at most `width` cells at spaces (a longer word gets a line of its
/// own).
fn wrap(text: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.width() + 1 + word.width() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn descriptions_wrap_at_spaces_within_the_width() {
        assert_eq!(
            wrap("close, cancel or go back (never quits)", 16),
            ["close, cancel or", "go back (never", "quits)"]
        );
        assert_eq!(wrap("short", 16), ["short"]);
        assert_eq!(
            wrap("a verylongwordindeed b", 8),
            ["a", "verylongwordindeed", "b"]
        );
    }
}
