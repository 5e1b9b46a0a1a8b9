//! The diagnostics pane: template errors with `file:line:col` and a caret under the culprit,
//! parse errors with their position inside the region, and warnings (no prefix, start anchor
//! not found, fields that never matched, required fields missing, differences from the
//! expected message, a result that differs under the other reference version).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use crate::workbench::grammar::GrammarMark;
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
    let theme = &state.ui.theme;
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
    out.extend(message.map(|l| {
        if l.starts_with(' ') {
            Line::raw(l.to_string())
        } else {
            Line::raw(format!("  {l}"))
        }
    }));
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
        Span::styled("error:", state.ui.theme.error()),
        Span::raw(format!(" {text}")),
    ])
}

/// Where a diagnostic points, for Enter and `o`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A byte offset of the document on screen (prefix + generation), and the region there.
    Document { at: usize, region: Option<usize> },
    /// A place in a file (the template, a sample), 1-based line and column.
    File {
        file: String,
        line: usize,
        column: usize,
    },
    /// A field of the template (its key in the template file).
    Field(String),
}

/// One diagnostic of the pane: its lines and where it points.
#[derive(Clone, Debug)]
pub struct Item {
    pub lines: Vec<Line<'static>>,
    pub target: Option<Target>,
    pub error: bool,
    pub warning: bool,
}

fn item(lines: Vec<Line<'static>>, target: Option<Target>) -> Item {
    Item {
        lines,
        target,
        error: false,
        warning: false,
    }
}

/// Where a located diagnostic points in its file.
fn file_target(d: &Diagnostic) -> Option<Target> {
    Some(Target::File {
        file: d.file.clone()?,
        line: d.location.as_ref()?.line,
        column: d.location.as_ref()?.column,
    })
}

/// A multi-line message: the first line after the label, the others indented under it.
fn message_lines(label: Span<'static>, message: &str) -> Vec<Line<'static>> {
    let mut parts = message.lines();
    let mut out = vec![Line::from(vec![
        label,
        Span::raw(format!(" {}", parts.next().unwrap_or(""))),
    ])];
    out.extend(parts.map(|l| Line::raw(format!("  {l}"))));
    out
}

/// The last `file:line:col` an error message names (a sample's own position, or the chat
/// template's line that failed), as a place to go to.
fn located_in_text(message: &str) -> Option<Target> {
    let first = message.lines().next()?;
    first
        .split(": ")
        .filter_map(|part| {
            let mut it = part.rsplitn(3, ':');
            let column = it.next()?.parse::<usize>().ok()?;
            let line = it.next()?.parse::<usize>().ok()?;
            let file = it.next()?;
            std::path::Path::new(file).is_file().then(|| Target::File {
                file: file.to_string(),
                line,
                column,
            })
        })
        .last()
}

/// Every diagnostic as an item, in the order shown.
pub fn items(state: &State, width: usize) -> Vec<Item> {
    let theme = &state.ui.theme;
    let mut out: Vec<Item> = Vec::new();
    let stale = || {
        Line::styled(
            "  the last good result stays on screen, marked STALE",
            theme.dim(),
        )
    };
    if let Some(d) = &state.session.template_error {
        let mut lines = diagnostic_lines(d, state, width);
        lines.push(Line::styled(
            if state.analysis().is_some() {
                format!(
                    "  the panes show the selected sample parsed with the last template that loaded, marked STALE ({} refuses until the template is fixed)",
                    state.ui.keys.hint(crate::workbench::keys::Action::Bless)
                )
            } else {
                "  nothing is parsed until the template loads".to_string()
            },
            theme.dim(),
        ));
        out.push(Item {
            error: true,
            ..item(lines, file_target(d))
        });
    }
    if let Some(e) = &state.session.sample_error {
        let mut lines = message_lines(Span::styled("error:", theme.error()), e);
        lines.push(stale());
        out.push(Item {
            error: true,
            ..item(lines, located_in_text(e))
        });
    }
    if let Some(a) = state.analysis() {
        if let Some(p) = &a.problem {
            out.push(problem_item(state, a, p, width));
        }
        for w in &a.warnings {
            // A silent loss points at its place in the text; others at their file.
            let target = a
                .findings
                .iter()
                .find(|f| f.diagnostic == *w)
                .and_then(|f| {
                    Some(Target::Document {
                        at: f.span.as_ref()?.start,
                        region: f.region,
                    })
                })
                .or_else(|| file_target(w));
            out.push(Item {
                warning: true,
                ..item(diagnostic_lines(w, state, width), target)
            });
        }
        // The sample on screen parses differently under the other reference version.
        if let Some(mark) = state
            .session
            .samples
            .get(state.ui.selected_sample)
            .filter(|e| e.name == a.sample_name)
            .and_then(|e| e.versions.as_ref())
        {
            let target = mark
                .at
                .filter(|&at| at <= a.document.len())
                .map(|at| Target::Document {
                    at,
                    region: a.regions.iter().rposition(|g| g.open.start <= at),
                })
                .or_else(|| file_target(&mark.warning));
            out.push(Item {
                warning: true,
                ..item(diagnostic_lines(&mark.warning, state, width), target)
            });
        }
        // The grammar compiled from the template refuses the generation (see `rtbench grammar`).
        if let Some(mark) = state
            .session
            .shown
            .as_ref()
            .and_then(|s| s.grammar.as_deref())
        {
            let (text, target) = match mark {
                GrammarMark::Accepted | GrammarMark::Skipped => (None, None),
                GrammarMark::StopsAt(at) => {
                    // Named as every place is (`x.sample:12:2 (generation 2:2)`).
                    let place = crate::workbench::view::raw::place_of(a, *at);
                    (
                        Some(format!(
                            "refuses the generation from {place}: a model constrained by `rtbench grammar` could not write it (`rtbench grammar --check` shows the shortest such text)"
                        )),
                        Some(Target::Document {
                            at: *at,
                            region: a.regions.iter().rposition(|g| g.open.start <= *at),
                        }),
                    )
                }
                GrammarMark::Incomplete => (
                    Some("accepts the generation so far but needs more at its end (`rtbench grammar`)".to_string()),
                    None,
                ),
                GrammarMark::Unavailable(why) => (Some(why.clone()), None),
            };
            if let Some(text) = text {
                let lines = message_lines(Span::styled("grammar:", theme.warning()), &text);
                out.push(Item {
                    warning: true,
                    ..item(lines, target)
                });
            }
        }
        for (field, why) in &a.unmatched {
            let mut lines = vec![Line::from(vec![
                Span::styled("note:", theme.key()),
                Span::raw(format!(" field '{field}' matched nothing in this sample")),
            ])];
            lines.extend(
                why.iter()
                    .skip(1)
                    .map(|l| Line::styled(l.clone(), theme.dim())),
            );
            out.push(item(lines, Some(Target::Field(field.clone()))));
        }
    }
    for d in &state.session.lint {
        out.push(Item {
            warning: true,
            ..item(diagnostic_lines(d, state, width), file_target(d))
        });
    }
    for f in &state.session.never_matched {
        let lines = vec![Line::from(vec![
            Span::styled("warning:", theme.warning()),
            Span::raw(format!(" field '{f}' matched nothing in any sample")),
        ])];
        out.push(Item {
            warning: true,
            ..item(lines, Some(Target::Field(f.clone())))
        });
    }
    out
}

/// The parse error of the sample on screen. A failed transform: the reference's error, the
/// region and its place, then the template's placeholder (where the mistake is, with a caret)
/// and what to write; it points at the template. Any other error: where first (it fits a
/// small pane), named as everywhere (`x.sample:5:14 (generation 1:14)`), the line with a
/// caret, then the parser's full message; it points at its place in the text.
fn problem_item(
    state: &State,
    a: &crate::workbench::analysis::Analysis,
    p: &crate::workbench::analysis::ParseProblem,
    width: usize,
) -> Item {
    let theme = &state.ui.theme;
    let place = p.at.map(|at| crate::workbench::view::raw::place_of(a, at));
    let named = place
        .as_ref()
        .map_or_else(|| a.sample_name.clone(), ToString::to_string);
    let region = p.region.map(|r| {
        format!(
            "region '{}' #{}",
            a.field_names[a.regions.at(r).field],
            crate::workbench::view::region::ordinal(a, r)
        )
    });
    let mut lines = Vec::new();
    if let Some(note) = &p.template_note {
        lines.extend(message_lines(
            Span::styled("error:", theme.error()),
            &p.error.text(),
        ));
        let what = region.unwrap_or_else(|| "the region".into());
        lines.push(Line::styled(format!("  in {what} at {named}"), theme.dim()));
        let mut located = diagnostic_lines(note, state, width);
        // The note's own label line: what the place is.
        located[0] = Line::from(vec![
            Span::styled("  cause:", theme.key()),
            Span::raw(format!(" {}", note.message)),
        ]);
        lines.extend(located);
        return Item {
            error: true,
            ..item(lines, file_target(note))
        };
    }
    match (&region, &p.in_region, &place, p.at) {
        (Some(region), Some(loc), Some(place), Some(at)) => {
            lines.push(error_line(
                format!("parse error in {region} at {named}"),
                state,
            ));
            // The offending line as its text has it (the generation's lines are the file's),
            // numbered with its line in the file (else in its own text).
            let number = place.file.as_ref().map_or(place.line, |f| f.1);
            let range = a.line_range(crate::workbench::view::raw::line_of(a, at));
            let start = if range.start < a.prefix_len && at >= a.prefix_len {
                a.prefix_len
            } else {
                range.start
            };
            let column = a.document[start..at].chars().count() + 1;
            lines.extend(source_lines(
                number,
                &a.document[start..range.end],
                column,
                loc.caret_len,
                width,
                theme.error(),
            ));
            lines.extend(p.error.text().lines().map(|l| Line::raw(format!("  {l}"))));
        }
        _ => {
            lines.extend(message_lines(
                Span::styled("error:", theme.error()),
                &p.error.text(),
            ));
            lines.push(Line::styled(format!("  --> {named}"), theme.dim()));
            if let Some(f) = &p.error.field {
                lines.push(Line::raw(format!("  in field '{f}'")));
            }
        }
    }
    let target = p.at.map(|at| Target::Document {
        at,
        region: p.region,
    });
    Item {
        error: true,
        ..item(lines, target)
    }
}

/// The first row of every item when the pane is `width` cells wide (rows as the pane wraps
/// them, roughly: by characters).
pub(crate) fn item_rows(items: &[Item], width: usize) -> Vec<usize> {
    let w = width.max(1);
    let mut at = 0;
    items
        .iter()
        .map(|i| {
            let start = at;
            at += i
                .lines
                .iter()
                .map(|l| l.width().div_ceil(w).max(1))
                .sum::<usize>();
            start
        })
        .collect()
}

/// All diagnostics as lines (the selected one marked when the pane has the focus), with the
/// number of errors and warnings.
pub fn lines(state: &State, width: usize) -> (Vec<Line<'static>>, usize, usize) {
    let items = items(state, width);
    let errors = items.iter().filter(|i| i.error).count();
    let warnings = items.iter().filter(|i| i.warning).count();
    let selected = (state.ui.focus == Pane::Diagnostics).then_some(state.ui.diagnostic);
    let mut out: Vec<Line<'static>> = Vec::new();
    for (n, it) in items.into_iter().enumerate() {
        let mut lines = it.lines;
        if Some(n) == selected
            && let Some(first) = lines.first_mut()
        {
            first
                .spans
                .insert(0, Span::styled("▶ ", state.ui.theme.key()));
            for l in lines.iter_mut() {
                l.style = state.ui.theme.selected();
            }
        }
        out.extend(lines);
    }
    if out.is_empty() {
        out.push(Line::styled("no problems", state.ui.theme.ok()));
    }
    if let Some(GrammarMark::Accepted) = state
        .session
        .shown
        .as_ref()
        .and_then(|s| s.grammar.as_deref())
    {
        out.push(Line::styled(
            "grammar: accepts the generation (rtbench grammar)",
            state.ui.theme.dim(),
        ));
    }
    (out, errors, warnings)
}

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let (lines, errors, warnings) = lines(state, usize::from(inner(area).width));
    let style: Style = if errors > 0 {
        state.ui.theme.error()
    } else if warnings > 0 {
        state.ui.theme.warning()
    } else {
        state.ui.theme.ok()
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
    let body = inner(area);
    let (lines, top) = super::window(
        lines.iter(),
        body.width,
        body.height,
        state.ui.scroll[Pane::Diagnostics],
    );
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((top, 0)),
        body,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_naming_a_file_position_points_there() {
        let template = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/samples/qwen3/chat_template.jinja"
        );
        let message = format!("a.sample: {template}:71:13: Unexpected role: robot");
        assert_eq!(
            located_in_text(&message),
            Some(Target::File {
                file: template.to_string(),
                line: 71,
                column: 13
            })
        );
        assert_eq!(
            located_in_text("nowhere/x.sample:3:1: bad"),
            None,
            "not a file"
        );
        assert_eq!(located_in_text("no position at all"), None);
    }

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
