//! Key bindings: which key does what. The defaults follow the terminal tools people know
//! (gitui, lazygit, yazi): `q` quits, `Esc` goes back and never quits, number keys focus
//! panes, `/` searches, `o` opens the editor. A config file may rebind any action by name (see
//! [`crate::workbench::config`]); the help overlay lists the bindings in force, from the same
//! [`Keymap`] the run loop reads, so the two cannot drift apart.

use crate::workbench::pane::{COUNT, PANES};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Leave the workbench.
    Quit,
    /// Stop the workbench as a shell job (the shell's `fg` brings it back).
    Suspend,
    /// Show or hide the help.
    Help,
    /// Focus the next pane.
    FocusNext,
    /// Focus the previous pane.
    FocusPrev,
    /// Cursor or selection left (in the replay: a step back).
    Left,
    /// Cursor or selection right (in the replay: a step on).
    Right,
    /// Cursor or selection up.
    Up,
    /// Cursor or selection down.
    Down,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// The start of the line.
    LineStart,
    /// The end of the line.
    LineEnd,
    /// The top of the document or list.
    Top,
    /// The bottom of the document or list.
    Bottom,
    /// The next region (with a search: the next match).
    NextRegion,
    /// The previous region (with a search: the previous match).
    PrevRegion,
    /// The next sample.
    NextSample,
    /// The previous sample.
    PrevSample,
    /// Focus pane n (0-based, in focus order), showing it if it is hidden.
    FocusPane(usize),
    /// Show or hide pane n.
    TogglePane(usize),
    /// Hide the focused pane.
    HidePane,
    /// Show only the focused pane, or every pane again.
    Zoom,
    /// The raw pane wider (in the replay: faster).
    Wider,
    /// The raw pane narrower (in the replay: slower).
    Narrower,
    /// The bottom row taller (in the replay: larger chunks).
    Taller,
    /// The bottom row shorter (in the replay: smaller chunks).
    Shorter,
    /// Read the files again and parse.
    Reload,
    /// Esc: close the help or an overlay, cancel a check, leave the replay; never quits.
    Back,
    /// Enter: go to the selected diagnostic's place, or open the selected sample or corpus group.
    Activate,
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
    /// Search the raw text.
    Search,
    /// The previous match of the search.
    SearchPrev,
    /// Fold or unfold the prefix before the start anchor.
    Fold,
    /// Open the editor at the place under the cursor.
    OpenEditor,
    /// Write the current message into the sample's expected section (after a confirmation).
    Bless,
    /// Write the current result into the expected section of every sample whose result
    /// changed (after a confirmation that lists them).
    BlessAll,
    /// Release the mouse (so the terminal can select text) or capture it again.
    ToggleMouse,
    /// Show or hide the model's token boundaries in the raw text.
    ToggleTokens,
    /// Run the template's patterns in other runtimes' regex engines on the samples.
    Portability,
    /// Parse everything again under the other reference version.
    SwitchReference,
}

/// Every action with the name a config file uses for it.
pub(crate) fn actions() -> Vec<(Action, String)> {
    use Action::*;
    let mut out: Vec<(Action, String)> = [
        (Quit, "quit"),
        (Suspend, "suspend"),
        (Help, "help"),
        (Back, "back"),
        (Activate, "activate"),
        (FocusNext, "focus_next"),
        (FocusPrev, "focus_prev"),
        (Left, "left"),
        (Right, "right"),
        (Up, "up"),
        (Down, "down"),
        (PageUp, "page_up"),
        (PageDown, "page_down"),
        (LineStart, "line_start"),
        (LineEnd, "line_end"),
        (Top, "top"),
        (Bottom, "bottom"),
        (NextRegion, "next_region"),
        (PrevRegion, "prev_region"),
        (NextSample, "next_sample"),
        (PrevSample, "prev_sample"),
        (HidePane, "hide_pane"),
        (Zoom, "zoom"),
        (Wider, "wider"),
        (Narrower, "narrower"),
        (Taller, "taller"),
        (Shorter, "shorter"),
        (Reload, "reload"),
        (Replay, "replay"),
        (PlayPause, "play_pause"),
        (NextChunking, "next_chunking"),
        (Prompt, "chunk_sizes"),
        (Explain, "explain"),
        (CheckChunkings, "check_chunkings"),
        (Search, "search"),
        (SearchPrev, "search_prev"),
        (Fold, "fold"),
        (OpenEditor, "open_editor"),
        (Bless, "bless"),
        (BlessAll, "bless_all"),
        (ToggleMouse, "toggle_mouse"),
        (ToggleTokens, "toggle_tokens"),
        (Portability, "portability"),
        (SwitchReference, "switch_reference"),
    ]
    .into_iter()
    .map(|(a, n)| (a, n.to_string()))
    .collect();
    for (i, p) in PANES.iter().enumerate() {
        out.push((FocusPane(i), format!("focus_{}", p.name)));
        out.push((TogglePane(i), format!("toggle_{}", p.name)));
    }
    out
}

/// The panes' keys: `1`..`N` focus pane N (in [`PANES`]' order), `alt-1`..`alt-N` show or
/// hide it.
fn pane_keys() -> impl Iterator<Item = (Key, Action)> {
    (0..COUNT).flat_map(|i| {
        let digit = (i + 1).to_string();
        [
            (Key::parse(&digit), Action::FocusPane(i)),
            (Key::parse(&format!("alt-{digit}")), Action::TogglePane(i)),
        ]
        .map(|(k, a)| (k.expect("pane keys parse"), a))
    })
}

/// Focusing each pane, in focus order (for the help).
const FOCUS_PANES: [Action; COUNT] = each_pane(false);

/// Showing or hiding each pane, in focus order (for the help).
const TOGGLE_PANES: [Action; COUNT] = each_pane(true);

/// Every pane's focus action, or (`toggle`) every pane's show / hide action.
const fn each_pane(toggle: bool) -> [Action; COUNT] {
    let mut all = [Action::FocusPane(0); COUNT];
    let mut i = 0;
    while i < COUNT {
        all[i] = if toggle {
            Action::TogglePane(i)
        } else {
            Action::FocusPane(i)
        };
        i += 1;
    }
    all
}

/// The default bindings: (key, action), besides the panes' ([`pane_keys`]). Several keys may
/// do the same thing.
const DEFAULTS: &[(&str, Action)] = {
    use Action::*;
    &[
        ("?", Help),
        ("f1", Help),
        ("q", Quit),
        ("ctrl-c", Quit),
        ("ctrl-z", Suspend),
        ("esc", Back),
        ("enter", Activate),
        ("tab", FocusNext),
        ("backtab", FocusPrev),
        ("left", Left),
        ("h", Left),
        ("right", Right),
        ("l", Right),
        ("up", Up),
        ("k", Up),
        ("down", Down),
        ("j", Down),
        ("pageup", PageUp),
        ("pagedown", PageDown),
        ("home", LineStart),
        ("0", LineStart),
        ("end", LineEnd),
        ("$", LineEnd),
        ("g", Top),
        ("G", Bottom),
        ("n", NextRegion),
        ("p", PrevRegion),
        ("]", NextSample),
        ("[", PrevSample),
        ("H", HidePane),
        ("z", Zoom),
        (">", Wider),
        ("<", Narrower),
        ("+", Taller),
        ("=", Taller),
        ("-", Shorter),
        ("r", Reload),
        ("s", Replay),
        ("space", PlayPause),
        ("c", NextChunking),
        (":", Prompt),
        ("e", Explain),
        ("x", CheckChunkings),
        ("P", Portability),
        ("V", SwitchReference),
        ("/", Search),
        ("N", SearchPrev),
        ("f", Fold),
        ("o", OpenEditor),
        ("b", Bless),
        ("B", BlessAll),
        ("m", ToggleMouse),
        ("t", ToggleTokens),
    ]
};

/// One key with its modifiers. Letters carry their case (`G` is Shift-g), so Shift is only
/// kept for keys without a character.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl Key {
    fn normalized(code: KeyCode, modifiers: KeyModifiers) -> Key {
        let mut m = modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT);
        if matches!(code, KeyCode::Char(_) | KeyCode::BackTab) {
            m.remove(KeyModifiers::SHIFT);
        }
        let code = match code {
            // Ctrl-letters arrive in either case depending on the terminal.
            KeyCode::Char(c) if m.contains(KeyModifiers::CONTROL) => {
                KeyCode::Char(c.to_ascii_lowercase())
            }
            c => c,
        };
        Key { code, modifiers: m }
    }

    /// The key of a key press.
    pub fn of(event: KeyEvent) -> Key {
        Key::normalized(event.code, event.modifiers)
    }

    /// Reads `ctrl-c`, `alt-1`, `G`, `/`, `esc`, `enter`, `tab`, `backtab`, `space`, `left`,
    /// `pageup`, `f1`, ...
    pub fn parse(text: &str) -> Result<Key, String> {
        let mut rest = text;
        let mut m = KeyModifiers::NONE;
        loop {
            let lower = rest.to_ascii_lowercase();
            let (name, flag) = if lower.starts_with("ctrl-") {
                ("ctrl-", KeyModifiers::CONTROL)
            } else if lower.starts_with("alt-") {
                ("alt-", KeyModifiers::ALT)
            } else if lower.starts_with("shift-") {
                ("shift-", KeyModifiers::SHIFT)
            } else {
                break;
            };
            if rest.len() == name.len() {
                break;
            }
            m |= flag;
            rest = &rest[name.len()..];
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            (Some(c), None) => KeyCode::Char(c),
            _ => match rest.to_ascii_lowercase().as_str() {
                "esc" | "escape" => KeyCode::Esc,
                "enter" | "return" => KeyCode::Enter,
                "tab" => KeyCode::Tab,
                "backtab" => KeyCode::BackTab,
                "backspace" => KeyCode::Backspace,
                "delete" | "del" => KeyCode::Delete,
                "insert" => KeyCode::Insert,
                "space" => KeyCode::Char(' '),
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "pageup" | "pgup" => KeyCode::PageUp,
                "pagedown" | "pgdn" => KeyCode::PageDown,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                f if f.starts_with('f')
                    && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) =>
                {
                    KeyCode::F(f[1..].parse().unwrap_or(1))
                }
                _ => {
                    return Err(format!(
                        "unknown key '{text}': use a character (q, G, /), a name (esc, enter, \
                         tab, backtab, space, backspace, left, right, up, down, pageup, \
                         pagedown, home, end, f1 … f12), with ctrl-, alt- or shift- before it"
                    ));
                }
            },
        };
        if code == KeyCode::Tab && m.contains(KeyModifiers::SHIFT) {
            return Ok(Key::normalized(KeyCode::BackTab, KeyModifiers::NONE));
        }
        Ok(Key::normalized(code, m))
    }

    /// The key as the help shows it: `Ctrl-C`, `Alt-1`, `←`, `PgUp`, `G`.
    pub fn label(&self) -> String {
        let mut out = String::new();
        if self.modifiers.contains(KeyModifiers::CONTROL) {
            out.push_str("Ctrl-");
        }
        if self.modifiers.contains(KeyModifiers::ALT) {
            out.push_str("Alt-");
        }
        if self.modifiers.contains(KeyModifiers::SHIFT) {
            out.push_str("Shift-");
        }
        let name = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) if self.modifiers.contains(KeyModifiers::CONTROL) => {
                c.to_ascii_uppercase().to_string()
            }
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "Shift-Tab".into(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Delete => "Del".into(),
            KeyCode::Insert => "Ins".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        out.push_str(&name);
        out
    }
}

/// The bindings in force: the defaults, with a config file's overrides applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Keymap {
    bindings: Vec<(Key, Action)>,
    /// Where overrides came from (shown in the help), if anywhere.
    pub source: Option<String>,
}

impl Default for Keymap {
    fn default() -> Keymap {
        Keymap {
            bindings: DEFAULTS
                .iter()
                .map(|(k, a)| (Key::parse(k).expect("default keys parse"), *a))
                .chain(pane_keys())
                .collect(),
            source: None,
        }
    }
}

impl Keymap {
    /// The action of a key press, if any.
    pub fn action(&self, event: KeyEvent) -> Option<Action> {
        if event.kind == KeyEventKind::Release {
            return None;
        }
        let key = Key::of(event);
        self.bindings
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| *a)
    }

    /// The keys bound to `action`, in binding order.
    pub fn keys_for(&self, action: Action) -> impl Iterator<Item = Key> + '_ {
        self.bindings
            .iter()
            .filter(move |(_, a)| *a == action)
            .map(|(k, _)| *k)
    }

    /// The keys of `action` as the help and notes show them (`q  Ctrl-C`), or `unbound`.
    pub fn label(&self, action: Action) -> String {
        let keys: Vec<String> = self.keys_for(action).map(|k| k.label()).collect();
        if keys.is_empty() {
            "unbound".into()
        } else {
            keys.join("  ")
        }
    }

    /// The first key of `action`, for hints (`q`), or `unbound`.
    pub fn hint(&self, action: Action) -> String {
        self.keys_for(action)
            .next()
            .map_or_else(|| "unbound".into(), |k| k.label())
    }

    /// Binds `keys` to `action` in place of its defaults; a key bound elsewhere moves here.
    pub fn rebind(&mut self, action: Action, keys: &[Key]) {
        self.bindings
            .retain(|(k, a)| *a != action && !keys.contains(k));
        self.bindings.extend(keys.iter().map(|k| (*k, action)));
    }
}

/// The action called `name` in a config file.
pub(crate) fn action_named(name: &str) -> Option<Action> {
    actions()
        .into_iter()
        .find(|(_, n)| n == name)
        .map(|(a, _)| a)
}

/// One row of the help: the actions whose keys it lists, and what they do.
pub(crate) struct HelpRow {
    pub actions: &'static [Action],
    pub what: &'static str,
    /// Only in the stream replay.
    pub replay: bool,
}

/// Rows whose keys are a series (the pane numbers): shown as `first … last`.
fn is_series(actions: &[Action]) -> bool {
    actions.len() > 2
        && actions
            .iter()
            .all(|a| matches!(a, Action::FocusPane(_) | Action::TogglePane(_)))
}

const fn row(actions: &'static [Action], what: &'static str) -> HelpRow {
    HelpRow {
        actions,
        what,
        replay: false,
    }
}

const fn replay_row(actions: &'static [Action], what: &'static str) -> HelpRow {
    HelpRow {
        actions,
        what,
        replay: true,
    }
}

/// The help's rows, in the order shown.
pub(crate) const HELP: &[HelpRow] = {
    use Action::*;
    &[
        row(&[Help], "show / hide this help"),
        row(&[Quit], "quit"),
        row(&[Suspend], "suspend to the shell (fg to come back)"),
        row(&[Back], "close, cancel or go back (never quits)"),
        row(&[FocusNext, FocusPrev], "focus the next / previous pane"),
        row(&FOCUS_PANES, "focus {panes} (shows a hidden one)"),
        row(&TOGGLE_PANES, "show / hide {panes}"),
        row(&[HidePane], "hide the focused pane"),
        row(&[Zoom], "zoom the focused pane (again to unzoom)"),
        row(
            &[Left, Right, Up, Down],
            "move the cursor (raw), scroll or select (others)",
        ),
        row(&[PageUp, PageDown], "a page up / down"),
        row(&[LineStart, LineEnd], "start / end of the line"),
        row(&[Top, Bottom], "top / bottom"),
        row(
            &[NextRegion, PrevRegion],
            "cursor to the next / previous region (with a search: next match)",
        ),
        row(&[NextSample, PrevSample], "next / previous sample"),
        row(
            &[Activate],
            "go to the selected diagnostic, sample or corpus group",
        ),
        row(&[Search], "search the raw text (Tab at the prompt: regex)"),
        row(&[SearchPrev], "previous match of the search"),
        row(&[Fold], "fold / unfold the prompt before the start anchor"),
        row(
            &[OpenEditor],
            "open $VISUAL / $EDITOR at the place under the cursor",
        ),
        row(
            &[Bless],
            "bless: write the current message as the sample's expected one (asks first)",
        ),
        row(&[Narrower, Wider], "raw pane narrower / wider"),
        row(&[Taller, Shorter], "bottom row taller / shorter"),
        row(&[Reload], "re-read the files now"),
        row(
            &[Explain],
            "explain the selected region's field (← → other fields)",
        ),
        row(
            &[CheckChunkings],
            "check every chunking of the sample against the one-shot parse",
        ),
        row(
            &[Portability],
            "run the patterns in other runtimes' regex engines on the samples",
        ),
        row(
            &[ToggleMouse],
            "release the mouse to select text (again to capture)",
        ),
        row(
            &[SwitchReference],
            "parse under the other reference version (5.24 / 5.25)",
        ),
        row(
            &[BlessAll],
            "bless every changed sample (lists them, asks first)",
        ),
        row(&[Replay], "stream replay of the sample: on / off"),
        replay_row(&[Left, Right], "one step back / forward (PgUp PgDn: 10)"),
        replay_row(&[Top, Bottom], "first / last step"),
        replay_row(&[PlayPause], "play / pause"),
        replay_row(&[Narrower, Wider], "play slower / faster"),
        replay_row(&[Taller, Shorter], "chunk size (random: seed) up / down"),
        replay_row(
            &[NextChunking],
            "chunking: size, sizes, random, tokens, bytes",
        ),
        replay_row(&[Prompt], "type chunk sizes, e.g. 3,5,1 (Enter)"),
        replay_row(
            &[Up, Down],
            "select a timeline event (highlighted in the text)",
        ),
    ]
};

/// The help rows with the keys in force: (keys, what). `{panes}` in a row's text is the panes'
/// names in focus order, from the pane registry.
pub(crate) fn help_rows(keymap: &Keymap) -> Vec<(String, String)> {
    let panes = PANES.map(|p| p.name).join(", ");
    let mut rows: Vec<(String, String)> = HELP
        .iter()
        .map(|r| {
            let keys: Vec<String> = r
                .actions
                .iter()
                .flat_map(|a| keymap.keys_for(*a))
                .map(|k| k.label())
                .collect();
            let keys = if keys.is_empty() {
                "unbound".into()
            } else if is_series(r.actions) && keys.len() == r.actions.len() {
                format!("{} … {}", keys[0], keys[keys.len() - 1])
            } else {
                keys.join(" ")
            };
            let keys = if r.replay {
                format!("replay: {keys}")
            } else {
                keys
            };
            (keys, r.what.replace("{panes}", &panes))
        })
        .collect();
    rows.push((
        "click  drag".into(),
        "focus a pane; in raw text, put the cursor there".into(),
    ));
    rows.push((
        "mouse wheel".into(),
        "scroll the pane under the pointer".into(),
    ));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_the_panes_as_they_are_declared() {
        let names: Vec<&str> = PANES.iter().map(|p| p.name).collect();
        let listed = names.join(", ");
        let rows: Vec<_> = help_rows(&Keymap::default())
            .into_iter()
            .filter(|(_, what)| what.contains("focus r") || what.contains("show / hide r"))
            .collect();
        assert_eq!(rows.len(), 2);
        for (_, what) in rows {
            assert!(what.contains(&listed), "{what}");
        }
        let k = Keymap::default();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(k.label(Action::FocusPane(i)), (i + 1).to_string(), "{name}");
        }
    }

    fn press(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn defaults_follow_the_usual_conventions() {
        let k = Keymap::default();
        let act = |c, m| k.action(press(c, m));
        assert_eq!(
            act(KeyCode::Char('q'), KeyModifiers::NONE),
            Some(Action::Quit)
        );
        assert_eq!(
            act(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Action::Quit)
        );
        assert_eq!(
            act(KeyCode::Char('C'), KeyModifiers::CONTROL),
            Some(Action::Quit)
        );
        assert_eq!(act(KeyCode::Esc, KeyModifiers::NONE), Some(Action::Back));
        assert_eq!(
            act(KeyCode::Char('3'), KeyModifiers::NONE),
            Some(Action::FocusPane(2))
        );
        assert_eq!(
            act(KeyCode::Char('3'), KeyModifiers::ALT),
            Some(Action::TogglePane(2))
        );
        // A capital arrives with Shift set by some terminals and without by others.
        assert_eq!(
            act(KeyCode::Char('G'), KeyModifiers::SHIFT),
            Some(Action::Bottom)
        );
        assert_eq!(
            act(KeyCode::Char('G'), KeyModifiers::NONE),
            Some(Action::Bottom)
        );
        assert_eq!(
            act(KeyCode::BackTab, KeyModifiers::SHIFT),
            Some(Action::FocusPrev)
        );
        assert_eq!(
            act(KeyCode::Char('/'), KeyModifiers::NONE),
            Some(Action::Search)
        );
        let mut release = press(KeyCode::Char('q'), KeyModifiers::NONE);
        release.kind = KeyEventKind::Release;
        assert_eq!(k.action(release), None);
    }

    #[test]
    fn every_action_has_a_unique_name_and_a_default_key() {
        let all = actions();
        let mut names: Vec<&str> = all.iter().map(|(_, n)| n.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        let k = Keymap::default();
        for (a, n) in &all {
            assert_eq!(action_named(n), Some(*a));
            assert_ne!(k.label(*a), "unbound", "{n} has no default key");
        }
        // No key is bound twice.
        let mut keys: Vec<Key> = k.bindings.iter().map(|(k, _)| *k).collect();
        let before = keys.len();
        keys.sort_by_key(|k| format!("{k:?}"));
        keys.dedup();
        assert_eq!(keys.len(), before);
    }

    #[test]
    fn keys_parse_and_print() {
        for (text, label) in [
            ("ctrl-c", "Ctrl-C"),
            ("Ctrl-X", "Ctrl-X"),
            ("alt-1", "Alt-1"),
            ("G", "G"),
            ("shift-tab", "Shift-Tab"),
            ("pgdn", "PgDn"),
            ("left", "←"),
            ("f5", "F5"),
            ("space", "Space"),
            ("-", "-"),
            ("ctrl--", "Ctrl--"),
        ] {
            assert_eq!(
                Key::parse(text).map(|k| k.label()),
                Ok(label.into()),
                "{text}"
            );
        }
        for bad in ["", "ctrl-", "foo", "f13", "alt-esc-x"] {
            let e = Key::parse(bad).unwrap_err();
            assert!(e.contains("unknown key"), "{bad}: {e}");
        }
    }

    #[test]
    fn rebinding_replaces_the_defaults_and_takes_the_key_from_others() {
        let mut k = Keymap::default();
        k.rebind(Action::Quit, &[Key::parse("x").unwrap()]);
        assert_eq!(k.label(Action::Quit), "x");
        assert_eq!(k.label(Action::CheckChunkings), "unbound");
        assert_eq!(
            k.action(press(KeyCode::Char('x'), KeyModifiers::NONE)),
            Some(Action::Quit)
        );
        assert_eq!(
            k.action(press(KeyCode::Char('q'), KeyModifiers::NONE)),
            None
        );
        let rows = help_rows(&k);
        assert!(rows.contains(&("x".into(), "quit".into())));
        assert!(
            rows.iter()
                .any(|(keys, what)| keys == "unbound" && what.starts_with("check every"))
        );
    }
}
