//! A text overlay over the screen: the explanation of a field, or the chunking check's
//! report. Drawn like the help; Esc closes it. While the next explanation is computed, the
//! title shows a spinner.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Paragraph};

use crate::workbench::protocol::OverlayLine;
use crate::workbench::state::State;

/// `text` wrapped at spaces to rows of at most `width` cells (a word longer than a row is cut
/// across rows); rows after the first start with `indent` spaces. At least one row.
fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let width = width.max(indent + 2);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    let cells = |s: &str| Span::raw(s).width();
    for word in text.split_inclusive(' ') {
        let w = cells(word);
        let trimmed = cells(word.trim_end_matches(' '));
        if used > 0 && used + trimmed > width {
            rows.push(std::mem::take(&mut row).trim_end().to_string());
            row = " ".repeat(indent);
            used = indent;
        }
        if used + trimmed <= width {
            row.push_str(word);
            used += w;
            continue;
        }
        // A word longer than a row: cut it by characters.
        for c in word.chars() {
            let cw = cells(c.encode_utf8(&mut [0u8; 4]));
            if used + cw > width && used > indent {
                rows.push(std::mem::take(&mut row));
                row = " ".repeat(indent);
                used = indent;
            }
            row.push(c);
            used += cw;
        }
    }
    rows.push(row.trim_end().to_string());
    rows
}

/// Where the overlay goes on a screen of `area`, and its lines wrapped to its width.
fn layout(state: &State, area: Rect) -> Option<(Rect, Vec<Line<'static>>)> {
    let o = state.modes.overlay.as_ref()?;
    let theme = &state.ui.theme;
    let w = area.width.saturating_sub(4).min(100);
    let inner_w = usize::from(w.saturating_sub(2)).max(1);
    // Wrapped here, so that the height fits the text exactly (every row counted).
    let mut lines: Vec<Line<'static>> = Vec::new();
    for l in &o.lines {
        let (text, style, indent) = match l {
            OverlayLine::Detail(_) => (l.text(), theme.text(), 4),
            OverlayLine::Heading(t) => (t.clone(), theme.key(), 2),
        };
        lines.extend(
            wrap(&text, inner_w, indent)
                .into_iter()
                .map(|r| Line::styled(r, style)),
        );
    }
    // As tall as the wrapped text, within the screen.
    let h = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2)
        .min(area.height.saturating_sub(2));
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Some((rect, lines))
}

/// The furthest the overlay on a screen of `size` scrolls: its rows beyond those shown.
pub(crate) fn max_scroll(state: &State) -> u16 {
    let area = Rect::new(0, 0, state.ui.size.0, state.ui.size.1);
    layout(state, area).map_or(0, |(rect, lines)| {
        let shown = usize::from(rect.height.saturating_sub(2));
        u16::try_from(lines.len().saturating_sub(shown)).unwrap_or(u16::MAX)
    })
}

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let (Some(o), Some((rect, lines))) = (&state.modes.overlay, layout(state, area)) else {
        return;
    };
    let theme = &state.ui.theme;
    let shown = usize::from(rect.height.saturating_sub(2));
    let scroll = usize::from(o.scroll).min(lines.len().saturating_sub(shown));
    let below = lines.len().saturating_sub(scroll + shown);
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
    let mut block = Block::bordered()
        .border_type(BorderType::Double)
        .border_style(theme.border(true))
        .title(Line::from(title));
    if below > 0 {
        // Said where the text is cut, so that no line is lost unseen.
        block = block.title_bottom(Line::styled(
            format!(
                " ↓ {below} more line{} (j) ",
                if below == 1 { "" } else { "s" }
            ),
            theme.key(),
        ));
    }
    let lines: Vec<Line<'static>> = lines.into_iter().skip(scroll).collect();
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block).style(theme.text()), rect);
}

#[cfg(test)]
mod tests {
    use super::wrap;
    use crate::workbench::protocol::{Overlay, OverlayLine};
    use crate::workbench::update::testing::loaded;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen(state: &crate::workbench::state::State) -> String {
        let mut t = Terminal::new(TestBackend::new(state.ui.size.0, state.ui.size.1)).unwrap();
        t.draw(|f| crate::workbench::view::draw(f, state)).unwrap();
        let buf = t.backend().buffer();
        (0..state.ui.size.1)
            .map(|y| {
                (0..state.ui.size.0)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Lines whose long words wrap early take more rows than their length says: the overlay
    /// is as tall as the rows drawn, so its last line shows, and a text taller than the screen
    /// says how much is below and scrolls to its end.
    #[test]
    fn the_last_line_shows_at_80x24() {
        let mut state = loaded(0, (80, 24));
        let word = "w".repeat(40);
        let line = |i: usize| OverlayLine::Detail(format!("{i} {word} {word} {word}"));
        let overlay = |n: usize| Overlay {
            title: "check".into(),
            lines: (0..n)
                .map(line)
                .chain([OverlayLine::Heading("the end".into())])
                .collect(),
            scroll: 0,
            field: None,
            confirm: None,
        };
        // Three rows each (the words do not share a row): 6 lines and the last fit.
        state.modes.overlay = Some(overlay(6));
        let text = screen(&state);
        assert!(text.contains("the end"), "{text}");
        assert!(!text.contains("more line"), "{text}");
        // Taller than the screen: said, and Bottom reaches the end.
        state.modes.overlay = Some(overlay(12));
        let text = screen(&state);
        assert!(!text.contains("the end"), "{text}");
        assert!(text.contains("↓ 17 more lines (j)"), "{text}");
        crate::workbench::update::on_action(&mut state, crate::workbench::keys::Action::Bottom);
        let text = screen(&state);
        assert!(
            text.contains("the end") && !text.contains("more line"),
            "{text}"
        );
    }

    #[test]
    fn lines_wrap_at_spaces_with_a_hanging_indent() {
        assert_eq!(wrap("aaa bbb ccc", 7, 2), ["aaa bbb", "  ccc"]);
        assert_eq!(wrap("abcdefghij", 4, 0), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 10, 2), [""]);
        assert_eq!(wrap("  two: x y", 6, 4), ["  two:", "    x", "    y"]);
    }
}
