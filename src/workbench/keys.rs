//! Key bindings: which key does what. The help overlay lists [`BINDINGS`], so the two cannot
//! drift apart.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Quit,
    Help,
    FocusNext,
    FocusPrev,
    Left,
    Right,
    Up,
    Down,
    PageUp,
    PageDown,
    LineStart,
    LineEnd,
    Top,
    Bottom,
    NextRegion,
    PrevRegion,
    NextSample,
    PrevSample,
    /// Show or hide pane n (0-based, in focus order).
    TogglePane(usize),
    Zoom,
    Wider,
    Narrower,
    Taller,
    Shorter,
    Reload,
    /// Esc: close the help or an overlay, cancel a check, leave the replay; never quits.
    Back,
    /// Enter or leave the stream replay.
    Replay,
    /// Space: play / pause the replay (a page down elsewhere).
    PlayPause,
    /// Next chunking kind in the replay.
    NextChunking,
    /// Type chunk sizes in the replay.
    Prompt,
    /// Explain the selected region's field (why it matched where it did, or nowhere).
    Explain,
    /// Check that no chunking changes the current sample's result.
    CheckChunkings,
}

/// Every binding as shown in the help: keys, then what they do.
pub const BINDINGS: &[(&str, &str)] = &[
    ("?", "show / hide this help"),
    ("q  Ctrl-C", "quit"),
    ("Esc", "close, cancel or go back (never quits)"),
    ("Tab  Shift-Tab", "focus the next / previous pane"),
    (
        "← → ↑ ↓  h l k j",
        "move the cursor (raw), scroll or select (others)",
    ),
    ("PgUp  PgDn", "a page up / down"),
    ("Home  End  0  $", "start / end of the line"),
    ("g  G", "top / bottom"),
    ("n  p", "cursor to the next / previous region"),
    ("]  [", "next / previous sample"),
    (
        "1 … 5",
        "show / hide raw, message, region, diagnostics, samples",
    ),
    ("z", "zoom the focused pane (again to unzoom)"),
    ("<  >", "raw pane narrower / wider"),
    ("+  -", "bottom row taller / shorter"),
    ("r", "re-read the files now"),
    (
        "e",
        "explain the selected region's field (← → other fields)",
    ),
    (
        "x",
        "check every chunking of the sample against the one-shot parse",
    ),
    ("s", "stream replay of the sample: on / off"),
    ("replay: ← → h l", "one step back / forward (PgUp PgDn: 10)"),
    ("replay: g G Home End", "first / last step"),
    ("replay: Space", "play / pause"),
    ("replay: < >", "play slower / faster"),
    ("replay: + -", "chunk size (random: seed) up / down"),
    ("replay: c", "chunking: size, sizes, random, tokens, bytes"),
    ("replay: :", "type chunk sizes, e.g. 3,5,1 (Enter)"),
    (
        "replay: ↑ ↓ j k",
        "select a timeline event (highlighted in the text)",
    ),
    (
        "click  drag",
        "focus a pane; in raw text, put the cursor there",
    ),
    ("mouse wheel", "scroll the pane under the pointer"),
];

/// The action of a key press, if any.
pub fn action(key: KeyEvent) -> Option<Action> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    Some(match key.code {
        KeyCode::Char('c') if ctrl => Action::Quit,
        KeyCode::Char('q') => Action::Quit,
        KeyCode::Esc => Action::Back,
        KeyCode::Char('?') | KeyCode::F(1) => Action::Help,
        KeyCode::Tab => Action::FocusNext,
        KeyCode::BackTab => Action::FocusPrev,
        KeyCode::Left | KeyCode::Char('h') => Action::Left,
        KeyCode::Right | KeyCode::Char('l') => Action::Right,
        KeyCode::Up | KeyCode::Char('k') => Action::Up,
        KeyCode::Down | KeyCode::Char('j') => Action::Down,
        KeyCode::PageUp => Action::PageUp,
        KeyCode::PageDown => Action::PageDown,
        KeyCode::Char(' ') => Action::PlayPause,
        KeyCode::Char('s') => Action::Replay,
        KeyCode::Char('c') => Action::NextChunking,
        KeyCode::Char(':') => Action::Prompt,
        KeyCode::Char('e') => Action::Explain,
        KeyCode::Char('x') => Action::CheckChunkings,
        KeyCode::Home | KeyCode::Char('0') => Action::LineStart,
        KeyCode::End | KeyCode::Char('$') => Action::LineEnd,
        KeyCode::Char('g') => Action::Top,
        KeyCode::Char('G') => Action::Bottom,
        KeyCode::Char('n') => Action::NextRegion,
        KeyCode::Char('p') => Action::PrevRegion,
        KeyCode::Char(']') => Action::NextSample,
        KeyCode::Char('[') => Action::PrevSample,
        KeyCode::Char(c @ '1'..='5') => Action::TogglePane(c as usize - '1' as usize),
        KeyCode::Char('z') => Action::Zoom,
        KeyCode::Char('>') => Action::Wider,
        KeyCode::Char('<') => Action::Narrower,
        KeyCode::Char('+') | KeyCode::Char('=') => Action::Taller,
        KeyCode::Char('-') => Action::Shorter,
        KeyCode::Char('r') => Action::Reload,
        _ => return None,
    })
}
