//! The status bar: mode, the reference version in force, template, live-refresh state,
//! parsing, a running explanation or check (with a spinner), staleness, the replay's chunking
//! and playback, and key hints.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::workbench::keys::Action;
use crate::workbench::state::{Live, Mode, PromptKind, Running, State};

/// The spinner's frames.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The spinner and label of a running job, with how far it has got when it counts its work:
/// `⠹ explaining content…`, `⠹ checking chunkings 40%…`.
pub(crate) fn running(job: &Running) -> String {
    let percent = job
        .progress
        .percent()
        .map_or(String::new(), |p| format!(" {p}%"));
    format!(
        "{} {}{percent}…",
        SPINNER[job.spin % SPINNER.len()],
        job.kind.label()
    )
}

/// Draws the status bar: what is going on at the left, key hints at the right (the least
/// needed hints give way on a narrow screen).
pub(crate) fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.ui.theme;
    let base = theme.status();
    let bold = base.add_modifier(Modifier::BOLD);
    let mut left = left_spans(state, base, bold);
    let mut hints = hints(state);
    let right_of = |hints: &[(String, &str, u8)]| right_spans(hints, base, bold);
    let width = usize::from(area.width);
    if !state.session.model_files.is_empty() {
        // The model's own files in use, `+ chat_template.jinja tokenizer.json`, after the
        // template's name when there is room for them (a note matters more).
        let files = Span::styled(format!("+ {} ", state.session.model_files.join(" ")), base);
        let used: usize = left.iter().map(Span::width).sum();
        if used + files.width() <= width {
            left.insert(3, files);
        }
    }
    // Too long for the screen (a long note, a narrow terminal): the version and the live
    // state shrink to their marks before the end of the line is cut off.
    let used = |left: &[Span]| left.iter().map(Span::width).sum::<usize>();
    if used(&left) > width {
        left[1] = Span::styled(format!(" {} ", state.session.reference), base);
    }
    if used(&left) > width && state.session.live == Live::On {
        left[3] = Span::styled("● ", base);
    }
    let lw: usize = left.iter().map(Span::width).sum();
    let mut right = right_of(&hints);
    while lw + used(&right) > width && hints.len() > 1 {
        // The least needed hint gives way, the others keep their order.
        if let Some(last) = (0..hints.len()).max_by_key(|&i| hints[i].2) {
            hints.remove(last);
        }
        right = right_of(&hints);
    }
    let rw: usize = right.iter().map(Span::width).sum();
    let mut spans = left;
    if lw + rw <= width {
        spans.push(Span::styled(" ".repeat(width - lw - rw), base));
        spans.extend(right);
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(base), area);
}

/// The left part: the mode, the version, the template, the live state, what runs, the
/// replay's state, the prompt and the note.
fn left_spans(state: &State, base: Style, bold: Style) -> Vec<Span<'static>> {
    let theme = &state.ui.theme;
    let mut left = vec![Span::styled(
        match state.modes.mode {
            Mode::Inspect => " rtbench ",
            Mode::Replay => " REPLAY ",
        },
        bold,
    )];
    // The version right after the mode, where a long note or template name never pushes it
    // off a narrow screen.
    left.push(Span::styled(
        format!(" ref {} ", state.session.reference),
        base,
    ));
    left.push(Span::styled(
        format!(
            "{} ",
            crate::workbench::view::raw::short_name(&state.session.template_name)
        ),
        base,
    ));
    match &state.session.live {
        Live::On => left.push(Span::styled("● live ", base)),
        Live::Off(why) => left.push(Span::styled(format!("○ live off: {why} "), base)),
    }
    if state.session.busy {
        left.push(Span::styled("⟳ parsing… ", bold));
    }
    if let Some(job) = &state.work.job {
        left.push(Span::styled(format!("{} Esc cancels ", running(job)), bold));
    }
    if state.is_stale() {
        left.push(Span::styled(" STALE ", theme.stale()));
        left.push(Span::styled(" ", base));
    }
    if let (Mode::Replay, Some(rs)) = (state.modes.mode, &state.modes.replay) {
        let play = if rs.playing {
            format!(
                "▶ {} ms/step ",
                crate::workbench::replay::SPEEDS_MS[rs.speed]
            )
        } else {
            "⏸ ".to_string()
        };
        left.push(Span::styled(format!("{} · {play}", rs.label()), bold));
        if let Some(percent) = rs.building_percent() {
            left.push(Span::styled(
                format!("⟳ streaming {percent}% · Esc stops "),
                bold,
            ));
        }
    }
    if let Some(p) = &state.modes.prompt {
        let (label, hint) = match p.kind {
            PromptKind::ChunkSizes => ("sizes:", "Enter / Esc"),
            PromptKind::Search { regex: false } => ("/", "Tab regex · Enter / Esc"),
            PromptKind::Search { regex: true } => ("regex /", "Tab literal · Enter / Esc"),
        };
        left.push(Span::styled(
            format!(" {label}{}▏ {hint} ", p.text),
            theme.selected(),
        ));
        if let Some(e) = &p.error {
            left.push(Span::styled(format!(" {e} "), theme.error()));
        }
    }
    if let Some(note) = &state.ui.note {
        left.push(Span::styled(format!("{note} "), base));
    }
    left
}

/// The key hints of the mode, each with its rank (where the line is short, the highest ranks
/// go first).
fn hints(state: &State) -> Vec<(String, &'static str, u8)> {
    let k = |a: Action| state.ui.keys.hint(a);
    match state.modes.mode {
        Mode::Inspect => vec![
            (k(Action::Help), "help", 1),
            (k(Action::Search), "search", 2),
            (k(Action::Replay), "replay", 3),
            (k(Action::Quit), "quit", 0),
        ],
        Mode::Replay => vec![
            (
                format!("{}{}", k(Action::Left), k(Action::Right)),
                "step",
                1,
            ),
            (k(Action::PlayPause), "play", 2),
            (
                format!("{}{}", k(Action::Taller), k(Action::Shorter)),
                "size",
                4,
            ),
            (k(Action::NextChunking), "chunking", 3),
            (k(Action::Back), "back", 0),
        ],
    }
}

/// The right part: the hints, each key in bold.
fn right_spans(hints: &[(String, &str, u8)], base: Style, bold: Style) -> Vec<Span<'static>> {
    let mut right = Vec::new();
    for (k, what, _) in hints {
        right.push(Span::styled(format!(" {k}"), bold));
        right.push(Span::styled(format!(" {what}"), base));
    }
    right.push(Span::styled(" ", base));
    right
}
