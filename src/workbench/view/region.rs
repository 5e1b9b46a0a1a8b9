//! The region pane: for the selected region, its raw body, what the content parser made of it,
//! and what the transform made of that (or the stored value), side by side.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use crate::workbench::analysis::{Analysis, pretty_json};
use crate::workbench::highlight;
use crate::workbench::state::{Pane, State};
use crate::workbench::view::{inner, pane_block};
use rtbench_engine::region::Ending;
use rtbench_engine::value::Value;

/// The start of `text` that can show in `budget` characters (a column never shows more: each
/// character takes at least one cell), marked when cut.
fn visible_part(text: &str, budget: usize) -> String {
    match text.char_indices().nth(budget) {
        Some((at, _)) => format!("{}\n…", &text[..at]),
        None => text.to_string(),
    }
}

fn json_lines(v: &Value, state: &State, budget: usize) -> Vec<Line<'static>> {
    let shown = within(v, budget);
    let text = visible_part(&pretty_json(shown.as_ref().unwrap_or(v)), budget);
    highlight::json_lines(
        &text,
        &state.ui.theme.syntect_theme,
        state.ui.theme.no_color,
    )
}

/// `v` cut to what its JSON can show in `budget` characters (`None` when it is short enough
/// whole): strings to `budget` characters, lists and dicts to `budget` entries. Each character
/// or entry kept writes at least one character, so the JSON of the cut value starts with the
/// same `budget` characters as the JSON of the whole, without writing a long value whole at
/// every frame.
fn within(v: &Value, budget: usize) -> Option<Value> {
    match v {
        Value::Str(s) => {
            let (at, _) = s.char_indices().nth(budget)?;
            Some(Value::from(&s[..at]))
        }
        Value::List(items) => {
            let cut: Vec<Option<Value>> = items
                .iter()
                .take(budget)
                .map(|i| within(i, budget))
                .collect();
            if items.len() <= budget && cut.iter().all(Option::is_none) {
                return None;
            }
            Some(Value::List(
                items
                    .iter()
                    .zip(cut)
                    .map(|(i, c)| c.unwrap_or_else(|| i.clone()))
                    .collect(),
            ))
        }
        Value::Dict(d) => {
            let cut: Vec<Option<Value>> =
                d.values().take(budget).map(|i| within(i, budget)).collect();
            if d.len() <= budget && cut.iter().all(Option::is_none) {
                return None;
            }
            Some(Value::Dict(
                d.iter()
                    .zip(cut)
                    .map(|((k, i), c)| (k.to_string(), c.unwrap_or_else(|| i.clone())))
                    .collect(),
            ))
        }
        _ => None,
    }
}

/// The region's ordinal among its field's regions (1-based).
pub(crate) fn ordinal(a: &Analysis, region: usize) -> usize {
    let f = a.regions.field(region);
    (0..region).filter(|&r| a.regions.field(r) == f).count() + 1
}

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.ui.theme;
    let selected = state
        .analysis()
        .zip(state.ui.region)
        .filter(|(a, r)| *r < a.regions.len());
    let mut extra = Vec::new();
    if let Some((a, r)) = selected {
        let g = a.regions.at(r);
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
    let g = a.regions.at(r);
    // Column 1: the raw body.
    let mut body: Vec<Line<'static>> = vec![Line::styled("body", heading(state))];
    // Only what the columns can show (a long body would make every frame slow).
    let budget = (state.ui.scroll[Pane::Region] + usize::from(body_area.height) + 1)
        * (usize::from(body_area.width / 3) + 1);
    let end = g.body.end.min(a.document.len());
    let shown = visible_part(&a.document[g.body.start.min(end)..end], budget);
    for l in shown.split('\n') {
        // Drawn as the raw pane draws it (invisible and zero-width characters as `·`).
        let l: String = l
            .chars()
            .filter(|&c| c != rtbench_engine::MARKER)
            .map(|c| super::raw::shown_char(c).0)
            .collect();
        body.push(Line::styled(l, theme.body(g.field)));
    }
    if !g.captures().is_empty() {
        body.push(Line::styled("captures", heading(state)));
        for (name, value) in g.captures() {
            body.push(Line::from(vec![
                Span::styled(format!("{name} = "), theme.capture()),
                Span::raw(value.py_repr()),
            ]));
        }
    }
    let parsed = parsed_column(state, a, r, budget);
    let third = value_column(state, a, r, budget);
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
        // The columns after the first have a left border.
        let width = rect.width.saturating_sub(u16::from(i > 0));
        let (lines, top) = super::window(
            lines.iter(),
            width,
            rect.height,
            state.ui.scroll[Pane::Region],
        );
        let mut p = Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((top, 0));
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

/// Column 2: the content parser's output.
fn parsed_column(state: &State, a: &Analysis, r: usize, budget: usize) -> Vec<Line<'static>> {
    let theme = &state.ui.theme;
    let g = a.regions.at(r);
    let mut parsed: Vec<Line<'static>> = vec![Line::styled(
        format!("→ parsed ({})", a.content_kinds[g.field]),
        heading(state),
    )];
    let failed = g.ending == Some(Ending::Failed);
    match (a.region_parsed(r), failed) {
        (Some(v), _) => parsed.extend(json_lines(v, state, budget)),
        (None, true) => {
            let msg = a
                .problem
                .as_ref()
                .map_or("failed".to_string(), |p| p.error.text());
            // A message of several lines (a JSON error and its `Content:`) keeps them.
            parsed.extend(
                msg.lines()
                    .map(|l| Line::styled(l.to_string(), theme.error())),
            );
        }
        (None, false) => parsed.push(Line::styled("(still open)", theme.dim())),
    }
    parsed
}

/// Column 3: the transform's output, else the stored value; for a region whose transform
/// failed (its parsed value is known), the error.
fn value_column(state: &State, a: &Analysis, r: usize, budget: usize) -> Vec<Line<'static>> {
    let theme = &state.ui.theme;
    let g = a.regions.at(r);
    let failed = g.ending == Some(Ending::Failed);
    let mut third: Vec<Line<'static>> = Vec::new();
    match (a.region_transformed(r), a.region_value(r)) {
        (Some(t), value) => {
            third.push(Line::styled("→ transform", heading(state)));
            third.extend(json_lines(t, state, budget));
            if let Some(v) = value.filter(|v| !v.py_eq(t)) {
                third.push(Line::styled("→ tool arguments cast", heading(state)));
                third.extend(json_lines(v, state, budget));
            }
        }
        (None, Some(v)) => {
            third.push(Line::styled("→ value", heading(state)));
            third.extend(json_lines(v, state, budget));
        }
        (None, None) => {
            third.push(Line::styled("→ transform", heading(state)));
            match a
                .problem
                .as_ref()
                .filter(|_| failed && a.region_parsed(r).is_some())
            {
                Some(p) => third.extend(
                    p.error
                        .text()
                        .lines()
                        .map(|l| Line::styled(l.to_string(), theme.error())),
                ),
                None => third.push(Line::styled(
                    if failed { "(failed)" } else { "(no value yet)" },
                    theme.dim(),
                )),
            }
        }
    }
    third
}

fn heading(state: &State) -> ratatui::style::Style {
    state
        .ui
        .theme
        .dim()
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::py::json_loads;

    #[test]
    fn a_value_cut_to_the_budget_shows_what_the_whole_value_shows() {
        let long = |unit: &str, n: usize| unit.repeat(n);
        let values = [
            Value::from(long("a\"\n\u{200d}é漢👍", 500).as_str()),
            json_loads(&format!("[{}1]", "[], ".repeat(300))).unwrap(),
            json_loads(&format!(
                r#"{{"function": {{"name": "f", "arguments": {{"text": "{}", "n": [1, 2, 3]}}}}}}"#,
                long("xy ", 400)
            ))
            .unwrap(),
            json_loads(&format!(
                "{{{}\"last\": 1}}",
                (0..300)
                    .map(|i| format!("\"k{i}\": {i}, "))
                    .collect::<String>()
            ))
            .unwrap(),
            Value::from("short"),
            Value::Int(7),
        ];
        for v in &values {
            for budget in [0, 1, 2, 5, 17, 64, 299, 1000, 5000] {
                let whole = visible_part(&pretty_json(v), budget);
                let cut = within(v, budget);
                let shown = visible_part(&pretty_json(cut.as_ref().unwrap_or(v)), budget);
                assert_eq!(shown, whole, "budget {budget}: {v:?}");
            }
        }
        // Short values are not copied.
        assert!(within(&values[4], 100).is_none());
        assert!(within(&values[0], 100).is_some());
    }
}
