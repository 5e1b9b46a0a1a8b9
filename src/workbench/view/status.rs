//! The status bar: mode, template, live-refresh state, parsing, a running explanation or check
//! (with a spinner), staleness, the replay's chunking and playback, and key hints.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::workbench::keys::Action;
use crate::workbench::state::{Live, Mode, PromptKind, Running, State};

/// The spinner's frames.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The spinner and label of a running job, with how far it has got when it counts its work:
/// `⠹ explaining content…`, `⠹ checking chunkings 40%…`.
pub fn running(job: &Running) -> String {
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

pub fn render(frame: &mut Frame, area: Rect, state: &State) {
    let theme = &state.theme;
    let base = theme.status();
    let bold = base.add_modifier(Modifier::BOLD);
    let mut left = vec![Span::styled(
        match state.mode {
            Mode::Inspect => " rtbench ",
            Mode::Replay => " REPLAY ",
        },
        bold,
    )];
    left.push(Span::styled(
        format!(
            " {} ",
            crate::workbench::view::raw::short_name(&state.template_name)
        ),
        base,
    ));
    match &state.live {
        Live::On => left.push(Span::styled("● live ", base)),
        Live::Off(why) => left.push(Span::styled(format!("○ live off: {why} "), base)),
    }
    if state.busy {
        left.push(Span::styled("⟳ parsing… ", bold));
    }
    if let Some(job) = &state.job {
        left.push(Span::styled(format!("{} Esc cancels ", running(job)), bold));
    }
    if state.is_stale() {
        left.push(Span::styled(" STALE ", theme.stale()));
        left.push(Span::styled(" ", base));
    }
    if let (Mode::Replay, Some(rs)) = (state.mode, &state.replay) {
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
    if let Some(p) = &state.prompt {
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
    if let Some(note) = &state.note {
        left.push(Span::styled(format!("{note} "), base));
    }
    let k = |a: Action| state.keys.hint(a);
    let hints: Vec<(String, &str)> = match state.mode {
        Mode::Inspect => vec![
            (k(Action::Help), "help"),
            (k(Action::Search), "search"),
            (k(Action::Replay), "replay"),
            (k(Action::Quit), "quit"),
        ],
        Mode::Replay => vec![
            (format!("{}{}", k(Action::Left), k(Action::Right)), "step"),
            (k(Action::PlayPause), "play"),
            (
                format!("{}{}", k(Action::Taller), k(Action::Shorter)),
                "size",
            ),
            (k(Action::NextChunking), "chunking"),
            (k(Action::Back), "back"),
        ],
    };
    let mut right = Vec::new();
    for (k, what) in hints {
        right.push(Span::styled(format!(" {k}"), bold));
        right.push(Span::styled(format!(" {what}"), base));
    }
    right.push(Span::styled(" ", base));
    let width = usize::from(area.width);
    if !state.model_files.is_empty() {
        // The model's own files in use, `+ chat_template.jinja tokenizer.json`, after the
        // template's name when there is room for them (a note matters more).
        let files = Span::styled(format!("+ {} ", state.model_files.join(" ")), base);
        let used: usize = left.iter().map(Span::width).sum();
        if used + files.width() <= width {
            left.insert(2, files);
        }
    }
    let lw: usize = left.iter().map(Span::width).sum();
    let rw: usize = right.iter().map(Span::width).sum();
    let mut spans = left;
    if lw + rw <= width {
        spans.push(Span::styled(" ".repeat(width - lw - rw), base));
        spans.extend(right);
    }
    frame.render_widget(Paragraph::new(Line::from(spans)).style(base), area);
}
