//! The diagnostics pane: template errors with `file:line:col` and a caret under the culprit,
//! parse errors with their position inside the region, and warnings (no prefix, start anchor
//! not found, fields that never matched, required fields missing, differences from the
//! expected message).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::workbench::state::{Pane, State};
use crate::workbench::view::{inner, pane_block};
use rtbench_engine::diagnostic::{Diagnostic, Severity};

/// The offending line and the caret under the culprit, cropped around the caret to fit
/// `width` columns.
fn source_lines(
    line: usize,
    text: &str,
    column: usize,
    caret_len: usize,
    width: usize,
    caret_style: Style,
) -> [Line<'static>; 2] {
    let num = line.to_string();
    let gutter = num.len() + 3;
    let room = width.saturating_sub(gutter).max(8);
    let chars: Vec<char> = text
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    let col = column.saturating_sub(1).min(chars.len());
    let (mut from, mut to) = (0, chars.len());
    if chars.len() > room {
        from = col.saturating_sub(room / 3);
        to = (from + room).min(chars.len());
        if to - from < room {
            from = to.saturating_sub(room);
        }
    }
    let mut shown: String = chars[from..to].iter().collect();
    let mut caret_at = col - from;
    if from > 0 {
        shown = format!("…{}", shown.chars().skip(1).collect::<String>());
    }
    if to < chars.len() {
        shown.pop();
        shown.push('…');
    }
    let caret_len = caret_len.min(to.saturating_sub(col)).max(1);
    if caret_at >= room {
        caret_at = room.saturating_sub(1);
    }
    [
        Line::raw(format!("{num} | {shown}")),
        Line::styled(
            format!(
                "{} | {}{}",
                " ".repeat(num.len()),
                " ".repeat(caret_at),
                "^".repeat(caret_len)
            ),
            caret_style,
        ),
    ]
}

/// A diagnostic as lines: the message, where, the offending line with a caret, and help.
fn diagnostic_lines(d: &Diagnostic, state: &State, width: usize) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let (label, style) = match d.severity {
        Severity::Error => ("error:", theme.error()),
        Severity::Warning => ("warning:", theme.warning()),
    };
    let mut out = Vec::new();
    let mut message = d.message.lines();
    out.push(Line::from(vec![
        Span::styled(label, style),
        Span::raw(format!(" {}", message.next().unwrap_or(""))),
    ]));
    out.extend(message.map(|l| Line::raw(l.to_string())));
    if let Some(pos) = d.position() {
        out.push(Line::styled(format!("  --> {pos}"), theme.dim()));
    }
    if let Some(loc) = &d.location {
        out.extend(source_lines(
            loc.line,
            &loc.line_text,
            loc.column,
            loc.caret_len,
            width,
            style,
        ));
    }
    if let Some(help) = &d.help {
        out.push(Line::styled(format!("  = help: {help}"), theme.dim()));
    }
    out
}

fn error_line(text: String, state: &State) -> Line<'static> {
    Line::from(vec![
        Span::styled("error:", state.theme.error()),
        Span::raw(format!(" {text}")),
    ])
}

/// All diagnostics as lines, with the number of errors and warnings.
pub fn lines(state: &State, width: usize) -> (Vec<Line<'static>>, usize, usize) {
    let theme = &state.theme;
    let (mut errors, mut warnings) = (0, 0);
    let mut out: Vec<Line<'static>> = Vec::new();
    if let Some(d) = &state.template_error {
        errors += 1;
        out.extend(diagnostic_lines(d, state, width));
        out.push(Line::styled(
            "  the last good result stays on screen, marked STALE",
            theme.dim(),
        ));
    }
    if let Some(e) = &state.sample_error {
        errors += 1;
        out.push(error_line(e.clone(), state));
        out.push(Line::styled(
            "  the last good result stays on screen, marked STALE",
            theme.dim(),
        ));
    }
    if let Some(a) = state.analysis() {
        if let Some(p) = &a.problem {
            errors += 1;
            let place = match (&p.file_position, p.at) {
                (Some(fp), _) => fp.clone(),
                (None, Some(at)) => format!("{} (prefix byte {at})", a.sample_name),
                (None, None) => a.sample_name.clone(),
            };
            match (p.region, &p.in_region) {
                (Some(r), Some(loc)) => {
                    // Where first (it fits a small pane), then the parser's full message.
                    let g = &a.regions[r];
                    out.push(error_line(
                        format!(
                            "parse error in region '{}' #{} (line {}, column {} of its body)",
                            a.field_names[g.field],
                            crate::workbench::view::region::ordinal(a, r),
                            loc.line,
                            loc.column
                        ),
                        state,
                    ));
                    out.push(Line::styled(format!("  --> {place}"), theme.dim()));
                    out.extend(source_lines(
                        loc.line,
                        &loc.line_text,
                        loc.column,
                        loc.caret_len,
                        width,
                        theme.error(),
                    ));
                    out.push(Line::raw(format!("  {}", p.error.message)));
                }
                _ => {
                    out.push(error_line(p.error.message.clone(), state));
                    out.push(Line::styled(format!("  --> {place}"), theme.dim()));
                    if let Some(f) = &p.error.field {
                        out.push(Line::raw(format!("  in field '{f}'")));
                    }
                }
            }
        }
        for w in &a.warnings {
            warnings += 1;
            out.extend(diagnostic_lines(w, state, width));
        }
        for (field, why) in &a.unmatched {
            out.push(Line::from(vec![
                Span::styled("note:", theme.key()),
                Span::raw(format!(" field '{field}' matched nothing in this sample")),
            ]));
            out.extend(
                why.iter()
                    .skip(1)
                    .map(|l| Line::styled(l.clone(), theme.dim())),
            );
        }
    }
    for d in &state.lint {
        warnings += 1;
        out.extend(diagnostic_lines(d, state, width));
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
    let (lines, errors, warnings) = lines(state, usize::from(inner(area).width));
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
