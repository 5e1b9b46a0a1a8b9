//! The sample list: every sample with its status (ok, error, differs from expected, no
//! expected message, unreadable) and its marks (warnings, unstable under chunking, parses
//! differently under the other reference version); the selected one is highlighted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::workbench::analysis::Status;
use crate::workbench::state::{Pane, SampleEntry, State};
use crate::workbench::theme::Theme;
use crate::workbench::view::raw::short_name;
use crate::workbench::view::{inner, pane_block};

/// The marker and style of a status.
pub(crate) fn marker(status: &Status, theme: &Theme) -> (&'static str, Style) {
    match status {
        Status::Ok => ("✓", theme.ok()),
        Status::Error(_) => ("✗", theme.error()),
        Status::Differs(_) => ("≠", theme.warning()),
        Status::NoExpected => ("·", theme.dim()),
        Status::Unreadable(_) => ("!", theme.error()),
        Status::Unknown => ("?", theme.dim()),
    }
}

/// What the selected sample's marks mean, under the list: its whole label (`error · 1
/// warning · unstable under chunking`) when it fits in `width` cells, else each mark with its
/// meaning (`⚠1 warning ≈ unstable`, or shorter: `⚠1 warn ≈ unstable`), cut to fit. `None`
/// without marks.
pub(crate) fn legend(e: &SampleEntry, width: usize) -> Option<String> {
    if e.marks(false).is_empty() {
        return None;
    }
    let full = e.label();
    if full.chars().count() <= width {
        return Some(full);
    }
    let parts = |long: bool| {
        let mut parts = Vec::new();
        if e.warnings > 0 {
            parts.push(match (long, e.warnings) {
                (true, 1) => "⚠1 warning".to_string(),
                (true, n) => format!("⚠{n} warnings"),
                (false, n) => format!("⚠{n} warn"),
            });
        }
        if e.unstable == Some(true) {
            parts.push("≈ unstable".to_string());
        }
        if let Some(v) = &e.versions {
            parts.push(if long {
                format!("{} differs", v.label())
            } else {
                v.label()
            });
        }
        parts.join(" ")
    };
    let long = parts(true);
    Some(if long.chars().count() <= width {
        long
    } else {
        parts(false).chars().take(width).collect()
    })
}

/// A corpus: its groups (count and cause, failures first), or the open group's records.
fn render_corpus(
    frame: &mut Frame,
    area: Rect,
    state: &State,
    view: &crate::workbench::corpus::CorpusView,
) {
    let theme = &state.ui.theme;
    let extra = vec![Span::raw(format!(" {} ", view.progress()))];
    frame.render_widget(pane_block(state, Pane::Samples, extra), area);
    let body = inner(area);
    let width = usize::from(body.width);
    let cut = |s: String| s.chars().take(width).collect::<String>();
    // Only the rows the pane shows are formatted: an open group can hold every record of a
    // large corpus, and this runs every frame.
    let (skip, take) = (state.ui.scroll[Pane::Samples], usize::from(body.height));
    let lines: Vec<Line<'static>> = match view.open {
        None if view.groups.is_empty() => {
            let reading = Line::styled("reading the corpus…", theme.dim());
            std::iter::once(reading).skip(skip).collect()
        }
        None => view
            .groups
            .iter()
            .enumerate()
            .skip(skip)
            .take(take)
            .map(|(i, g)| {
                let style = if g.failure { theme.error() } else { theme.ok() };
                let row = cut(format!("{:>6}  {}", g.records.len(), g.label));
                let style = if i == view.selected {
                    style.add_modifier(ratatui::style::Modifier::REVERSED)
                } else {
                    style
                };
                Line::styled(row, style)
            })
            .collect(),
        Some(o) => {
            let g = &view.groups[o];
            let head = Line::styled(
                cut(format!("◂ {} ({}) · Esc: groups", g.label, g.records.len())),
                theme.dim(),
            );
            // The head is the first row: the records start one row later.
            let head = (skip == 0).then_some(head);
            let records = g.records.iter().enumerate().skip(skip.saturating_sub(1));
            let records = records.map(|(i, r)| {
                let file = view.files.get(r.file).map_or_else(String::new, |f| {
                    short_name(&f.display().to_string()).to_string()
                });
                let row = cut(format!("  {file}:{}", r.line));
                let style = if i == view.selected {
                    Style::default().add_modifier(ratatui::style::Modifier::REVERSED)
                } else {
                    Style::default()
                };
                Line::styled(row, style)
            });
            head.into_iter().chain(records).take(take).collect()
        }
    };
    frame.render_widget(Paragraph::new(lines), body);
}

pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    if let Some(view) = &state.session.corpus {
        return render_corpus(frame, area, state, view);
    }
    let theme = &state.ui.theme;
    let n = state.session.samples.len();
    let extra = vec![Span::raw(if n == 0 {
        " none ".to_string()
    } else {
        format!(" {}/{n} ", state.ui.selected_sample.min(n - 1) + 1)
    })];
    let mut block = pane_block(state, Pane::Samples, extra);
    if let Some(legend) = state
        .session
        .samples
        .get(state.ui.selected_sample)
        .and_then(|e| legend(e, usize::from(area.width.saturating_sub(4))))
    {
        block = block.title_bottom(Line::styled(format!(" {legend} "), theme.dim()));
    }
    frame.render_widget(block, area);
    let body = inner(area);
    let width = usize::from(body.width);
    let lines: Vec<Line<'static>> = if n == 0 {
        vec![Line::styled("no samples (.sample or .txt)", theme.dim())]
    } else {
        state
            .session
            .samples
            .iter()
            .enumerate()
            .skip(state.ui.scroll[Pane::Samples])
            // Only the rows the pane shows are labelled (a frame's work, not the list's).
            .take(usize::from(body.height))
            .map(|(i, s)| {
                let (mark, style) = marker(&s.status, theme);
                let name = short_name(&s.name);
                let n = name.chars().count();
                // The fullest label that fits beside the whole name; then the name gives way
                // to the label. The status word stays (it says what the mark means), and
                // warnings, instability and a version difference are never dropped: their
                // marks shrink to one character each, and only last does the word go.
                let compact = s.marks(false);
                let tiny = s.marks(true);
                let status = s.status.label();
                let with = |marks: &String| {
                    if marks.is_empty() {
                        status.to_string()
                    } else {
                        format!("{status} {marks}")
                    }
                };
                let beside = [s.label(), with(&compact), with(&tiny)];
                let label = beside
                    .iter()
                    .find(|l| n + l.chars().count() + 3 <= width)
                    .cloned()
                    .unwrap_or_default();
                let label_style = if compact.is_empty() {
                    style
                } else {
                    theme.warning()
                };
                let mut spans = vec![Span::styled(format!("{mark} "), style)];
                let room = width.saturating_sub(2);
                let gives_way = [with(&compact), with(&tiny), compact.clone(), tiny.clone()]
                    .into_iter()
                    .filter(|l| !l.is_empty())
                    .find(|l| room >= l.chars().count() + 8);
                let (shown, label) = if !label.is_empty() {
                    (name.to_string(), label)
                } else if let Some(label) = gives_way {
                    // The name gives way to the status (or the marks).
                    let keep = room.saturating_sub(label.chars().count() + 2);
                    let kept: String = name.chars().take(keep).collect();
                    (format!("{kept}…"), label)
                } else if n <= room {
                    (name.to_string(), String::new())
                } else {
                    let kept: String = name.chars().take(room.saturating_sub(1)).collect();
                    (format!("{kept}…"), String::new())
                };
                let used = shown.chars().count() + label.chars().count();
                spans.push(Span::raw(shown));
                if !label.is_empty() {
                    spans.push(Span::raw(" ".repeat(room.saturating_sub(used).max(1))));
                    spans.push(Span::styled(label, label_style));
                }
                let mut line = Line::from(spans);
                if i == state.ui.selected_sample {
                    line = line.style(theme.selected());
                }
                line
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), body);
}
