//! The diagnostics pane: template errors with `file:line:col` and a caret under the culprit,
//! parse errors with their position inside the region, and warnings (no prefix, start anchor
//! not found, fields that never matched, required fields missing, differences from the
//! expected message).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::engine::diagnostic::{Diagnostic, Severity};
use crate::workbench::state::{Pane, State};
use crate::workbench::view::{inner, pane_block};

/// A diagnostic's text as lines, the label and the caret coloured.
fn diagnostic_lines(d: &Diagnostic, state: &State) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let label = match d.severity {
        Severity::Error => theme.error(),
        Severity::Warning => theme.warning(),
    };
    d.to_string()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                match l.split_once(": ") {
                    Some((head, rest)) => Line::from(vec![
                        Span::styled(format!("{head}:"), label),
                        Span::raw(format!(" {rest}")),
                    ]),
                    None => Line::raw(l.to_string()),
                }
            } else if l.trim_start().starts_with("= help") {
                Line::styled(l.to_string(), theme.dim())
            } else if l.contains('^') && l.trim_start().starts_with('|') {
                Line::styled(l.to_string(), label)
            } else if l.trim_start().starts_with("-->") {
                Line::styled(l.to_string(), theme.dim())
            } else {
                Line::raw(l.to_string())
            }
        })
        .collect()
}

fn error_line(text: String, state: &State) -> Line<'static> {
    Line::from(vec![
        Span::styled("error:", state.theme.error()),
        Span::raw(format!(" {text}")),
    ])
}

/// All diagnostics as lines, with the number of errors and warnings.
pub fn lines(state: &State) -> (Vec<Line<'static>>, usize, usize) {
    let theme = &state.theme;
    let (mut errors, mut warnings) = (0, 0);
    let mut out: Vec<Line<'static>> = Vec::new();
    if let Some(d) = &state.template_error {
        errors += 1;
        out.extend(diagnostic_lines(d, state));
        out.push(Line::styled(
            "  the last good result stays on screen, marked STALE",
            theme.stale(),
        ));
    }
    if let Some(e) = &state.sample_error {
        errors += 1;
        out.push(error_line(e.clone(), state));
        out.push(Line::styled(
            "  the last good result stays on screen, marked STALE",
            theme.stale(),
        ));
    }
    if let Some(a) = state.analysis() {
        if let Some(p) = &a.problem {
            errors += 1;
            out.push(error_line(p.error.message.clone(), state));
            let place = match (&p.file_position, p.at) {
                (Some(fp), _) => fp.clone(),
                (None, Some(at)) => format!("{} (prefix byte {at})", a.sample_name),
                (None, None) => a.sample_name.clone(),
            };
            out.push(Line::styled(format!("  --> {place}"), theme.dim()));
            if let (Some(r), Some(loc)) = (p.region, &p.in_region) {
                let g = &a.regions[r];
                out.push(Line::raw(format!(
                    "  in region '{}' #{}, line {} column {} of its body:",
                    a.field_names[g.field],
                    crate::workbench::view::region::ordinal(a, r),
                    loc.line,
                    loc.column
                )));
                let num = loc.line.to_string();
                let pad = " ".repeat(num.len());
                let shown: String = loc
                    .line_text
                    .chars()
                    .map(|c| if c == '\t' { ' ' } else { c })
                    .collect();
                out.push(Line::raw(format!("{num} | {shown}")));
                out.push(Line::styled(
                    format!(
                        "{pad} | {}{}",
                        " ".repeat(loc.column - 1),
                        "^".repeat(loc.caret_len)
                    ),
                    theme.error(),
                ));
            } else if let Some(f) = &p.error.field {
                out.push(Line::raw(format!("  in field '{f}'")));
            }
        }
        for w in &a.warnings {
            warnings += 1;
            out.extend(diagnostic_lines(w, state));
        }
    }
    for f in &state.never_matched {
        warnings += 1;
        out.push(Line::from(vec![
            Span::styled("warning:", theme.warning()),
            Span::raw(format!(" field '{f}' matched nothing in any sample")),
        ]));
    }
    if out.is_empty() {
        out.push(Line::styled("no problems", theme.ok()));
    }
    (out, errors, warnings)
}

pub fn render(frame: &mut Frame, area: Rect, state: &State) {
    let (lines, errors, warnings) = lines(state);
    let style: Style = if errors > 0 {
        state.theme.error()
    } else if warnings > 0 {
        state.theme.warning()
    } else {
        state.theme.ok()
    };
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let extra = vec![Span::styled(
        format!(
            " {}, {} ",
            plural(errors, "error"),
            plural(warnings, "warning")
        ),
        style,
    )];
    frame.render_widget(pane_block(state, Pane::Diagnostics, extra), area);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((state.scroll.diagnostics, 0)),
        inner(area),
    );
}
