//! The workbench's config file (TOML): key bindings and the editor command.
//!
//! ```toml
//! # {file}, {line} and {col} are replaced; without {file} the file is added at the end.
//! editor = "code --goto {file}:{line}:{col}"
//!
//! [keys]
//! quit = ["q", "ctrl-c"]   # an action's keys replace its defaults
//! search = "/"
//! focus_diagnostics = "d"
//! ```
//!
//! It is read from `$RTBENCH_CONFIG`, else `$XDG_CONFIG_HOME/rtbench/config.toml`, else
//! `~/.config/rtbench/config.toml`; a missing file means the defaults. A file that cannot be
//! used stops the workbench before it starts, with the file, line and column of the mistake.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::workbench::keys::{Action, Key, Keymap, action_named, actions};

/// What the config file sets.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Config {
    pub keys: Keymap,
    /// The editor command (see [`crate::workbench::editor`]); `None`: `$VISUAL`, `$EDITOR`, vi.
    pub editor: Option<String>,
    /// The most steps the replay opens with: a longer sample is first streamed in chunks of
    /// as many code points as keep it under this (smaller chunks on request).
    pub replay_max_steps: usize,
    /// `reference = "5.24"`: the reference version followed when neither `--reference` nor
    /// `RTBENCH_REFERENCE` says, with where it is written (`file:line:col`).
    pub reference: Option<(rtbench_engine::Reference, String)>,
}

/// [`Config::replay_max_steps`] by default: about a second and 50 MB of replay here.
pub(crate) const REPLAY_MAX_STEPS: usize = 4_000_000;

impl Default for Config {
    fn default() -> Config {
        Config {
            keys: Keymap::default(),
            editor: None,
            replay_max_steps: REPLAY_MAX_STEPS,
            reference: None,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    editor: Option<Spanned<String>>,
    replay_max_steps: Option<Spanned<i64>>,
    reference: Option<Spanned<String>>,
    #[serde(default)]
    keys: BTreeMap<Spanned<String>, Spanned<OneOrMany>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

/// Where the config file is looked for.
pub(crate) fn default_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RTBENCH_CONFIG") {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("rtbench").join("config.toml"))
}

/// Reads the config file at `path` (defaults when it does not exist).
pub(crate) fn load(path: &Path) -> Result<Config, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(e) => {
            return Err(format!(
                "{}: cannot read the config file: {e}",
                path.display()
            ));
        }
    };
    parse(&text, &path.display().to_string())
}

/// Reads a config file's text; `name` is how errors name the file.
pub(crate) fn parse(text: &str, name: &str) -> Result<Config, String> {
    let place = |offset: usize| {
        let at = rtbench_engine::diagnostic::Location::new(text, offset..offset);
        format!("{name}:{}:{}", at.line, at.column)
    };
    let at = |offset: usize, what: String| format!("{}: {what}", place(offset));
    let file: File = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        at(offset, e.message().trim_end().to_string())
    })?;
    let mut keys = Keymap::default();
    // The binding that left no key to quit, if one did.
    let mut lost_quit: Option<usize> = None;
    for (action, bound) in &file.keys {
        let Some(a) = action_named(action.get_ref()) else {
            let names: Vec<String> = actions().into_iter().map(|(_, n)| n).collect();
            return Err(at(
                action.span().start,
                format!(
                    "unknown action '{}'; the actions are: {}",
                    action.get_ref(),
                    names.join(", ")
                ),
            ));
        };
        let texts = match bound.get_ref() {
            OneOrMany::One(k) => vec![k.clone()],
            OneOrMany::Many(ks) => ks.clone(),
        };
        let parsed: Vec<Key> = texts
            .iter()
            .map(|k| Key::parse(k))
            .collect::<Result<_, _>>()
            .map_err(|e| at(bound.span().start, e))?;
        keys.rebind(a, &parsed);
        if keys.keys_for(Action::Quit).next().is_none() {
            lost_quit.get_or_insert(bound.span().start);
        }
    }
    if let Some(offset) = lost_quit
        && keys.keys_for(Action::Quit).next().is_none()
    {
        return Err(at(
            offset,
            "this leaves no key to quit the workbench: keep one for quit (e.g. quit = \
             [\"q\", \"ctrl-c\"]) or bind this action to another key"
                .into(),
        ));
    }
    keys.source = Some(name.to_string());
    let replay_max_steps = match file.replay_max_steps {
        None => REPLAY_MAX_STEPS,
        Some(n) => usize::try_from(*n.get_ref())
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                at(
                    n.span().start,
                    format!(
                        "replay_max_steps must be a whole number from 1 (steps a replay opens \
                         with); it is {}",
                        n.get_ref()
                    ),
                )
            })?,
    };
    let reference = match file.reference {
        None => None,
        Some(r) => {
            let version = r
                .get_ref()
                .parse::<rtbench_engine::Reference>()
                .map_err(|e| at(r.span().start, format!("reference: {e}")))?;
            Some((version, place(r.span().start)))
        }
    };
    Ok(Config {
        keys,
        editor: match file.editor {
            None => None,
            Some(e) => {
                crate::workbench::editor::check_command(e.get_ref())
                    .map_err(|why| at(e.span().start, why))?;
                Some(e.into_inner())
            }
        },
        replay_max_steps,
        reference,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::keys::Action;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    #[test]
    fn overrides_rebind_actions_and_set_the_editor() {
        let c = parse(
            "editor = \"hx {file}:{line}:{col}\"\n[keys]\nquit = [\"x\", \"ctrl-q\"]\nfocus_diagnostics = \"d\"\n",
            "config.toml",
        )
        .unwrap();
        assert_eq!(c.editor.as_deref(), Some("hx {file}:{line}:{col}"));
        let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        assert_eq!(c.keys.action(key('x')), Some(Action::Quit));
        assert_eq!(c.keys.action(key('q')), None);
        assert_eq!(c.keys.action(key('d')), Some(Action::FocusPane(3)));
        assert_eq!(c.keys.label(Action::Quit), "x  Ctrl-Q");
        assert_eq!(c.keys.source.as_deref(), Some("config.toml"));
    }

    #[test]
    fn mistakes_name_the_file_line_and_column() {
        let e = parse("[keys]\nquit = \"q\"\n  serch = \"/\"\n", "c.toml").unwrap_err();
        assert!(e.starts_with("c.toml:3:3: unknown action 'serch'"), "{e}");
        let e = parse("[keys]\nquit = \"ctrl-\"\n", "c.toml").unwrap_err();
        assert!(e.starts_with("c.toml:2:8: unknown key 'ctrl-'"), "{e}");
        let e = parse("[keys\n", "c.toml").unwrap_err();
        assert!(e.starts_with("c.toml:1:"), "{e}");
        let e = parse("colour = 1\n", "c.toml").unwrap_err();
        assert!(e.starts_with("c.toml:1:1: unknown field `colour`"), "{e}");
        let e = parse("editor = \"vi\"\nreplay_max_steps = 0\n", "c.toml").unwrap_err();
        assert!(
            e.starts_with("c.toml:2:20: replay_max_steps must be a whole number from 1"),
            "{e}"
        );
    }

    #[test]
    fn the_replay_step_limit_is_set_or_defaults() {
        let c = parse("replay_max_steps = 1000\n", "c.toml").unwrap();
        assert_eq!(c.replay_max_steps, 1000);
        assert_eq!(
            parse("", "c.toml").unwrap().replay_max_steps,
            REPLAY_MAX_STEPS
        );
    }

    #[test]
    fn the_reference_version_is_read_and_located() {
        let c = parse("reference = \"5.24\"\n", "c.toml").unwrap();
        assert_eq!(
            c.reference,
            Some((rtbench_engine::Reference::V5_24, "c.toml:1:13".to_string()))
        );
        let e = parse("editor = \"vi\"\nreference = \"5.2\"\n", "c.toml").unwrap_err();
        assert_eq!(
            e,
            "c.toml:2:13: reference: unknown reference version \"5.2\": rtbench supports 5.24 and 5.25"
        );
    }

    #[test]
    fn a_config_that_leaves_no_key_to_quit_is_refused_where_it_does() {
        let e = parse("[keys]\nquit = []\n", "c.toml").unwrap_err();
        assert!(
            e.starts_with("c.toml:2:8: this leaves no key to quit the workbench"),
            "{e}"
        );
        // The last quit key taken by another action: the mistake is that binding.
        let e = parse("[keys]\nquit = \"q\"\nsearch = \"q\"\n", "c.toml").unwrap_err();
        assert!(e.starts_with("c.toml:3:10: this leaves no key"), "{e}");
        // Taken, then given back by quit's own line: fine.
        let c = parse(
            "[keys]\nhelp = [\"q\", \"ctrl-c\"]\nquit = \"x\"\n",
            "c.toml",
        )
        .unwrap();
        assert_eq!(c.keys.label(Action::Quit), "x");
        // Taking one of two keys leaves the other.
        assert!(parse("[keys]\nsearch = \"q\"\n", "c.toml").is_ok());
    }

    #[test]
    fn an_editor_command_that_cannot_run_is_refused_before_the_screen_opens() {
        let e = parse("editor = ''\n", "c.toml").unwrap_err();
        assert!(
            e.starts_with("c.toml:1:10: the editor command is empty"),
            "{e}"
        );
        let e = parse("editor = \"vim '+{line}\"\n", "c.toml").unwrap_err();
        assert!(
            e.starts_with("c.toml:1:10: the editor command has an unterminated"),
            "{e}"
        );
        let e = parse("editor = \"vim +{ln} {file}\"\n", "c.toml").unwrap_err();
        assert!(
            e.starts_with("c.toml:1:10: unknown placeholder {ln}"),
            "{e}"
        );
    }

    #[test]
    fn a_missing_file_is_the_defaults() {
        let c = load(Path::new("/nonexistent/rtbench/config.toml")).unwrap();
        assert_eq!(c, Config::default());
    }
}
