//! Themes: the region palette, the JSON highlighting theme and the interface colours, read from
//! TOML files (`themes/dark.toml` and `themes/light.toml` are built in). With `NO_COLOR` set,
//! every colour is dropped and distinctions are kept with modifiers (bold, underline, reverse).

use std::path::Path;
use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The built-in themes: name and TOML text.
pub(crate) const BUILTIN: [(&str, &str); 2] = [
    ("dark", include_str!("../../themes/dark.toml")),
    ("light", include_str!("../../themes/light.toml")),
];

#[derive(Deserialize)]
struct ThemeFile {
    name: String,
    syntect_theme: String,
    regions: RegionColors,
    ui: UiColors,
}

#[derive(Deserialize)]
struct RegionColors {
    palette: Vec<String>,
    delimiter_fg: String,
    capture_fg: String,
    capture_bg: String,
    held_bg: String,
    discarded: String,
    before_anchor: String,
    error_bg: String,
}

#[derive(Deserialize)]
struct UiColors {
    fg: String,
    bg: String,
    dim: String,
    border: String,
    border_focused: String,
    title: String,
    status_fg: String,
    status_bg: String,
    error: String,
    warning: String,
    ok: String,
    stale: String,
    cursor_fg: String,
    cursor_bg: String,
    selected_bg: String,
}

/// A loaded theme. Every style the views use comes from here.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    /// The theme's name (or file).
    pub name: String,
    /// Name of the syntect theme used for JSON.
    pub syntect_theme: String,
    /// No colours at all (`NO_COLOR`): only modifiers.
    pub no_color: bool,
    palette: Vec<Color>,
    delimiter_fg: Color,
    capture_fg: Color,
    capture_bg: Color,
    held_bg: Color,
    discarded: Color,
    before_anchor: Color,
    error_bg: Color,
    fg: Color,
    bg: Color,
    dim: Color,
    border: Color,
    border_focused: Color,
    title: Color,
    status_fg: Color,
    status_bg: Color,
    error: Color,
    warning: Color,
    ok: Color,
    stale: Color,
    cursor_fg: Color,
    cursor_bg: Color,
    selected_bg: Color,
}

fn color(s: &str, what: &str) -> Result<Color, String> {
    Color::from_str(s.trim()).map_err(|_| format!("{what}: '{s}' is not a colour"))
}

impl Theme {
    /// Parses a theme file's text.
    pub fn from_toml(text: &str) -> Result<Theme, String> {
        let f: ThemeFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let palette = f
            .regions
            .palette
            .iter()
            .map(|c| color(c, "regions.palette"))
            .collect::<Result<Vec<_>, _>>()?;
        if palette.is_empty() {
            return Err("regions.palette: needs at least one colour".into());
        }
        let r = &f.regions;
        let u = &f.ui;
        Ok(Theme {
            name: f.name,
            syntect_theme: f.syntect_theme,
            no_color: false,
            palette,
            delimiter_fg: color(&r.delimiter_fg, "regions.delimiter_fg")?,
            capture_fg: color(&r.capture_fg, "regions.capture_fg")?,
            capture_bg: color(&r.capture_bg, "regions.capture_bg")?,
            held_bg: color(&r.held_bg, "regions.held_bg")?,
            discarded: color(&r.discarded, "regions.discarded")?,
            before_anchor: color(&r.before_anchor, "regions.before_anchor")?,
            error_bg: color(&r.error_bg, "regions.error_bg")?,
            fg: color(&u.fg, "ui.fg")?,
            bg: color(&u.bg, "ui.bg")?,
            dim: color(&u.dim, "ui.dim")?,
            border: color(&u.border, "ui.border")?,
            border_focused: color(&u.border_focused, "ui.border_focused")?,
            title: color(&u.title, "ui.title")?,
            status_fg: color(&u.status_fg, "ui.status_fg")?,
            status_bg: color(&u.status_bg, "ui.status_bg")?,
            error: color(&u.error, "ui.error")?,
            warning: color(&u.warning, "ui.warning")?,
            ok: color(&u.ok, "ui.ok")?,
            stale: color(&u.stale, "ui.stale")?,
            cursor_fg: color(&u.cursor_fg, "ui.cursor_fg")?,
            cursor_bg: color(&u.cursor_bg, "ui.cursor_bg")?,
            selected_bg: color(&u.selected_bg, "ui.selected_bg")?,
        })
    }

    /// A built-in theme by name, or a theme file by path.
    pub fn load(name_or_path: &str) -> Result<Theme, String> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Theme::from_toml(text)
                .map_err(|e| format!("built-in theme {name_or_path}: {e}"));
        }
        let path = Path::new(name_or_path);
        let text = std::fs::read_to_string(path).map_err(|e| {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            format!(
                "theme '{name_or_path}': not a built-in theme ({}) and not a readable file: {e}",
                names.join(", ")
            )
        })?;
        Theme::from_toml(&text).map_err(|e| format!("theme file {name_or_path}: {e}"))
    }

    /// The default dark theme.
    pub fn dark() -> Theme {
        Theme::from_toml(BUILTIN[0].1).expect("the built-in dark theme is valid")
    }

    /// This theme without colours.
    pub fn without_color(mut self) -> Theme {
        self.no_color = true;
        self
    }

    /// Whether `NO_COLOR` asks for no colours (set and not empty).
    pub fn no_color_requested() -> bool {
        std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
    }

    fn fg_style(&self, c: Color) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(c)
        }
    }

    fn fg_bg(&self, fg: Color, bg: Color) -> Style {
        if self.no_color {
            Style::default()
        } else {
            Style::default().fg(fg).bg(bg)
        }
    }

    /// The colour of field `index`.
    pub fn field_color(&self, index: usize) -> Color {
        self.palette[index % self.palette.len()]
    }

    /// Text of a region body.
    pub fn body(&self, field: usize) -> Style {
        if self.no_color {
            // Alternate fields stay apart without colour.
            if field % 2 == 1 {
                Style::default().add_modifier(Modifier::ITALIC)
            } else {
                Style::default()
            }
        } else {
            Style::default().fg(self.field_color(field))
        }
    }

    /// A delimiter of field `field`.
    pub fn delimiter(&self, field: usize) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        } else {
            Style::default()
                .fg(self.delimiter_fg)
                .bg(self.field_color(field))
                .add_modifier(Modifier::BOLD)
        }
    }

    /// A named capture inside a delimiter.
    pub fn capture(&self) -> Style {
        self.fg_bg(self.capture_fg, self.capture_bg)
            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
    }

    /// Held-back text: added on top of the style of the region it finally went to.
    pub fn held(&self, base: Style) -> Style {
        let s = base.add_modifier(Modifier::UNDERLINED);
        if self.no_color {
            s.add_modifier(Modifier::SLOW_BLINK)
        } else {
            s.bg(self.held_bg)
        }
    }

    /// A control-token spelling the model wrote with ordinary tokens, which the token-id
    /// decoder defused (added on top): text, not a delimiter.
    pub fn defused(&self, base: Style) -> Style {
        if self.no_color {
            base.add_modifier(Modifier::ITALIC | Modifier::DIM)
        } else {
            base.fg(self.warning).add_modifier(Modifier::ITALIC)
        }
    }

    /// Text that went to no field.
    pub fn discarded(&self) -> Style {
        self.fg_style(self.discarded)
            .add_modifier(Modifier::CROSSED_OUT)
    }

    /// Prefix text cut away before the start anchor.
    pub fn before_anchor(&self) -> Style {
        self.fg_style(self.before_anchor)
            .add_modifier(Modifier::DIM)
    }

    /// Where a parse error points (added on top).
    pub fn error_mark(&self, base: Style) -> Style {
        if self.no_color {
            base.add_modifier(Modifier::REVERSED | Modifier::UNDERLINED)
        } else {
            base.bg(self.error_bg).add_modifier(Modifier::BOLD)
        }
    }

    /// Where a parse silently lost something (added on top): underlined, in the warning
    /// colour where the terminal can colour underlines.
    pub fn lost_mark(&self, base: Style) -> Style {
        if self.no_color {
            base.add_modifier(Modifier::UNDERLINED)
        } else {
            base.underline_color(self.warning)
                .add_modifier(Modifier::UNDERLINED)
        }
    }

    /// A match of the search (added on top).
    pub fn search_match(&self, base: Style) -> Style {
        if self.no_color {
            base.add_modifier(Modifier::REVERSED)
        } else {
            base.fg(self.status_fg).bg(self.warning)
        }
    }

    /// The current match of the search (added on top).
    pub fn search_current(&self, base: Style) -> Style {
        if self.no_color {
            base.add_modifier(Modifier::REVERSED | Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            base.fg(self.status_fg)
                .bg(self.ok)
                .add_modifier(Modifier::BOLD)
        }
    }

    /// The text cursor.
    pub fn cursor(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default().fg(self.cursor_fg).bg(self.cursor_bg)
        }
    }

    /// Ordinary text.
    pub fn text(&self) -> Style {
        self.fg_bg(self.fg, self.bg)
    }

    /// Secondary text.
    pub fn dim(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::DIM)
        } else {
            Style::default().fg(self.dim)
        }
    }

    /// A pane's border, focused or not.
    pub fn border(&self, focused: bool) -> Style {
        match (self.no_color, focused) {
            (true, true) => Style::default().add_modifier(Modifier::BOLD),
            (true, false) => Style::default(),
            (false, true) => Style::default().fg(self.border_focused),
            (false, false) => Style::default().fg(self.border),
        }
    }

    /// A pane's title, focused or not.
    pub fn title(&self, focused: bool) -> Style {
        let s = self.fg_style(self.title);
        if focused {
            s.add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        } else {
            s.add_modifier(Modifier::BOLD)
        }
    }

    /// The status bar.
    pub fn status(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default().fg(self.status_fg).bg(self.status_bg)
        }
    }

    /// A key name in hints and help.
    pub fn key(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    /// Errors.
    pub fn error(&self) -> Style {
        self.fg_style(self.error).add_modifier(Modifier::BOLD)
    }

    /// Warnings.
    pub fn warning(&self) -> Style {
        self.fg_style(self.warning).add_modifier(Modifier::BOLD)
    }

    /// Success.
    pub fn ok(&self) -> Style {
        self.fg_style(self.ok)
    }

    /// A result older than the files (marked stale).
    pub fn stale(&self) -> Style {
        self.fg_style(self.stale)
            .add_modifier(Modifier::BOLD | Modifier::REVERSED)
    }

    /// The selected row of a list.
    /// Every other model token when token boundaries are shown (added on top).
    pub fn token_alternate(&self, base: Style) -> Style {
        if self.no_color {
            base.add_modifier(Modifier::ITALIC)
        } else {
            base.bg(self.selected_bg)
        }
    }

    /// The selected line of a list.
    pub fn selected(&self) -> Style {
        if self.no_color {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
                .bg(self.selected_bg)
                .add_modifier(Modifier::BOLD)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_themes_load() {
        for (name, _) in BUILTIN {
            let t = Theme::load(name).unwrap();
            assert_eq!(t.name, name);
        }
        assert!(Theme::load("no-such-theme").is_err());
    }

    #[test]
    fn no_color_keeps_distinctions_with_modifiers() {
        let t = Theme::dark().without_color();
        assert_eq!(t.body(0).fg, None);
        assert!(t.delimiter(0).add_modifier.contains(Modifier::REVERSED));
        assert!(t.discarded().add_modifier.contains(Modifier::CROSSED_OUT));
        assert_ne!(t.body(0), t.body(1));
    }
}
