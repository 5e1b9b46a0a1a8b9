//! The diagnostics pane: template errors with `file:line:col` and a caret under the culprit,
//! parse errors with their position inside the region, and warnings (no prefix, start anchor
//! not found, fields that never matched, required fields missing, differences from the
//! expected message).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::workbench::state::{Pane, State};
use crate::workbench::view::{inner, pane_block};
use rtbench_engine::diagnostic::{Diagnostic, Severity};

/// The display width of a character in terminal cells (control characters take none).
fn cells(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// The offending line and the caret under the culprit, cropped around the caret to fit
/// `width` columns. Positions are measured in display cells, so the caret stays under the
/// culprit after wide characters (CJK, emoji); tabs are shown as one space.
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
    if chars.iter().map(|&c| cells(c)).sum::<usize>() > room {
        // About a third of the room before the culprit, the rest after it; a line that ends
        // first is shown to its end.
        let mut used = 0;
        from = col;
        while from > 0 && used + cells(chars[from - 1]) <= room / 3 {
            from -= 1;
            used += cells(chars[from]);
        }
        to = from;
        used = 0;
        while to < chars.len() && used + cells(chars[to]) <= room {
            used += cells(chars[to]);
            to += 1;
        }
        while to == chars.len() && from > 0 && used + cells(chars[from - 1]) <= room {
            from -= 1;
            used += cells(chars[from]);
        }
    }
    // The ellipses take the place of the first and last characters shown, so a character of
    // the line stays at the same index of `shown`.
    let mut shown: Vec<char> = chars[from..to].to_vec();
    if from > 0 {
        shown[0] = '…';
    }
    if to < chars.len() {
        *shown.last_mut().expect("a cropped line shows something") = '…';
    }
    // Measured as the terminal draws it: ratatui skips control characters.
    let drawn = |cs: &[char]| {
        cs.iter()
            .filter(|c| !c.is_control())
            .collect::<String>()
            .width()
    };
    let at = col - from;
    let end = col.saturating_add(caret_len).min(to).max(col) - from;
    let mut caret_at = drawn(&shown[..at]);
    let caret_len = drawn(&shown[at..end]).max(1);
    let shown: String = shown.into_iter().collect();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The two lines as text, and the display offset of the caret and of `culprit` in the
    /// shown line (both from the start of the line, gutter included).
    fn render(
        text: &str,
        column: usize,
        caret_len: usize,
        width: usize,
        culprit: &str,
    ) -> (String, String, usize, usize) {
        let [shown, caret] = source_lines(7, text, column, caret_len, width, Style::default());
        let (shown, caret) = (shown.to_string(), caret.to_string());
        let at = shown
            .find(culprit)
            .unwrap_or_else(|| panic!("{culprit:?} in {shown:?}"));
        let culprit_cells = shown[..at].width();
        let caret_cells = caret[..caret.find('^').expect("a caret")].width();
        (shown, caret, culprit_cells, caret_cells)
    }

    #[test]
    fn ascii_lines_keep_their_layout() {
        let (shown, caret, ..) = render("{\"a\": [1, 2]}", 7, 6, 80, "[");
        assert_eq!(shown, "7 | {\"a\": [1, 2]}");
        assert_eq!(caret, "  |       ^^^^^^");
        // Cropped: a third of the room before the caret, ellipses at both ends.
        let long = format!("{}X{}", "a".repeat(50), "b".repeat(50));
        let (shown, caret, at, caret_at) = render(&long, 51, 1, 24, "X");
        assert_eq!(shown, format!("7 | …{}X{}…", "a".repeat(5), "b".repeat(12)));
        assert_eq!((at, caret_at), (10, 10), "{caret}");
    }

    #[test]
    fn the_caret_is_under_the_culprit_after_wide_characters() {
        let line = "{\"名前\": \"😀\", \"値\":\toops}";
        let col = line.chars().position(|c| c == 'o').unwrap() + 1;
        let (shown, caret, at, caret_at) = render(line, col, 4, 80, "oops");
        assert_eq!(shown, "7 | {\"名前\": \"😀\", \"値\": oops}");
        assert_eq!(caret_at, at, "{shown}\n{caret}");
        assert!(caret.ends_with(" ^^^^"), "{caret}");
        // A wide culprit is underlined across its cells.
        let (_, caret, at, caret_at) = render("key = 名前", 7, 2, 80, "名");
        assert_eq!((caret_at, caret.matches('^').count()), (at, 4), "{caret}");
    }

    #[test]
    fn cropped_wide_lines_fit_the_pane_and_keep_the_caret_aligned() {
        let line = format!("{}\"oops\"{}", "名前😀".repeat(30), "値".repeat(40));
        let col = line.chars().position(|c| c == 'o').unwrap() + 1;
        for width in [20, 21, 33, 60] {
            let (shown, caret, at, caret_at) = render(&line, col, 4, width, "oops");
            assert!(shown.width() <= width.max(12), "{width}: {shown}");
            assert!(shown.contains('…'), "{width}: {shown}");
            assert_eq!(caret_at, at, "{width}:\n{shown}\n{caret}");
            assert!(caret.ends_with(" ^^^^"), "{width}: {caret}");
        }
        // The caret past the end of a long line of wide characters.
        let line = "値".repeat(40);
        let [shown, caret] = source_lines(7, &line, 41, 1, 30, Style::default());
        let (shown, caret) = (shown.to_string(), caret.to_string());
        assert!(shown.width() <= 30, "{shown}");
        assert_eq!(
            caret.find('^').map(|i| caret[..i].width()),
            Some(shown.width())
        );
    }
}
