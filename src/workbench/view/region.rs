//! The region pane: for the selected region, its raw body, what the content parser made of it,
//! and what the transform made of that (or the stored value), side by side.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::engine::value::Value;
use crate::workbench::analysis::{Analysis, pretty_json};
use crate::workbench::highlight;
use crate::workbench::state::{Pane, State};
use crate::workbench::view::{inner, pane_block};

/// At most this much of a body is shown (the pane scrolls within it).
const MAX_BODY: usize = 64 * 1024;

fn json_lines(v: &Value, state: &State) -> Vec<Line<'static>> {
    let text = pretty_json(v);
    let text = if text.len() > MAX_BODY {
        let mut at = MAX_BODY;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        format!("{}\n…", &text[..at])
    } else {
        text
    };
    highlight::json_lines(&text, &state.theme.syntect_theme, state.theme.no_color)
}

/// The region's ordinal among its field's regions (1-based).
pub fn ordinal(a: &Analysis, region: usize) -> usize {
    let f = a.regions[region].field;
    a.regions[..region].iter().filter(|g| g.field == f).count() + 1
}

pub fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.theme;
    let selected = state
        .analysis()
        .zip(state.region)
        .filter(|(a, r)| *r < a.regions.len());
    let mut extra = Vec::new();
    if let Some((a, r)) = selected {
        let g = &a.regions[r];
        extra.push(Span::raw(format!(
            " {} #{} ",
            a.field_names[g.field],
            ordinal(a, r)
        )));
    }
    frame.render_widget(pane_block(state, Pane::Region, extra), area);
    let body_area = inner(area);
    let Some((a, r)) = selected else {
        frame.render_widget(
            Paragraph::new("move the cursor onto a region (n / p jump between regions)")
                .wrap(Wrap { trim: true })
                .style(theme.dim()),
            body_area,
        );
        return;
    };
    let g = &a.regions[r];
    // Column 1: the raw body.
    let mut body: Vec<Line<'static>> = vec![Line::styled("body", heading(state))];
    let end = g
        .body
        .end
        .min(g.body.start + MAX_BODY)
        .min(a.document.len());
    let mut cut = end;
    while !a.document.is_char_boundary(cut) {
        cut -= 1;
    }
    for l in a.document[g.body.start..cut].split('\n') {
        body.push(Line::styled(l.replace('\t', " "), theme.body(g.field)));
    }
    if !g.captures.is_empty() {
        body.push(Line::styled("captures", heading(state)));
        for (name, value, _) in &g.captures {
            body.push(Line::from(vec![
                Span::styled(format!("{name} = "), theme.capture()),
                Span::raw(value.py_repr()),
            ]));
        }
    }
    // Column 2: the content parser's output.
    let mut parsed: Vec<Line<'static>> = vec![Line::styled(
        format!("→ parsed ({})", a.content_kinds[g.field]),
        heading(state),
    )];
    match (&g.parsed, g.failed) {
        (Some(v), _) => parsed.extend(json_lines(v, state)),
        (None, true) => {
            let msg = a
                .problem
                .as_ref()
                .map_or("failed".to_string(), |p| p.error.message.clone());
            parsed.push(Line::styled(msg, theme.error()));
        }
        (None, false) => parsed.push(Line::styled("(still open)", theme.dim())),
    }
    // Column 3: the transform's output, else the stored value.
    let mut third: Vec<Line<'static>> = Vec::new();
    match (&g.transformed, &g.value) {
        (Some(t), _) => {
            third.push(Line::styled("→ transform", heading(state)));
            third.extend(json_lines(t, state));
        }
        (None, Some(v)) => {
            third.push(Line::styled("→ value", heading(state)));
            third.extend(json_lines(v, state));
        }
        (None, None) => {
            third.push(Line::styled("→ transform", heading(state)));
            third.push(Line::styled(
                if g.failed {
                    "(failed)"
                } else {
                    "(no value yet)"
                },
                theme.dim(),
            ));
        }
    }
    let w = body_area.width / 3;
    let cols = [
        Rect::new(body_area.x, body_area.y, w, body_area.height),
        Rect::new(body_area.x + w, body_area.y, w, body_area.height),
        Rect::new(
            body_area.x + 2 * w,
            body_area.y,
            body_area.width - 2 * w,
            body_area.height,
        ),
    ];
    for (i, (lines, rect)) in [body, parsed, third].into_iter().zip(cols).enumerate() {
        let mut p = Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((state.scroll.region, 0));
        if i > 0 {
            p = p.block(
                Block::new()
                    .borders(Borders::LEFT)
                    .border_style(theme.border(false)),
            );
        }
        frame.render_widget(p, rect);
    }
}

fn heading(state: &State) -> ratatui::style::Style {
    state
        .theme
        .dim()
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}
