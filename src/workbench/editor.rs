//! Opening the user's editor at a place (`o`, and Enter on a template diagnostic): the place
//! is resolved to `file:line:col`, the command is built from the config file's `editor`, else
//! `$VISUAL`, else `$EDITOR`, else `vi`, with the line (and column where the editor takes one)
//! in the form that editor understands. The run loop suspends the screen around it; the
//! watcher then sees the save like any other.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rtbench_engine::diagnostic::Location;
use rtbench_engine::py::PathSeg;
use rtbench_engine::template::source::read_source;
use rtbench_tooling::findings::in_file;
use rtbench_tooling::sample::Sample;

/// A place to open, as the screen knows it.
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    /// A byte offset of a sample's document (prefix + generation).
    Document { sample: Arc<Sample>, at: usize },
    /// A position in a file, 1-based.
    File {
        file: PathBuf,
        line: usize,
        column: usize,
    },
    /// A field's key in the template file.
    Field { template: PathBuf, field: String },
}

/// A file and a 1-based line and column in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Position {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

/// Finds the place in its file (reads the file as it is now).
pub(crate) fn resolve(place: &Place) -> Result<Position, String> {
    match place {
        Place::File { file, line, column } => Ok(Position {
            file: file.clone(),
            line: *line,
            column: *column,
        }),
        Place::Document { sample, at } => {
            let text = std::fs::read_to_string(&sample.path)
                .map_err(|e| format!("cannot open {}: {e}", sample.path.display()))?;
            let Some(span) = in_file(sample, &text, &(*at..*at)) else {
                return Err(format!(
                    "that place is in the prefix, which {} does not hold",
                    sample.path.display()
                ));
            };
            let loc = Location::new(&text, span);
            Ok(Position {
                file: sample.path.clone(),
                line: loc.line,
                column: loc.column,
            })
        }
        Place::Field { template, field } => {
            let source = read_source(template).map_err(|e| e.to_string())?;
            let path = [PathSeg::Key("fields".into()), PathSeg::Key(field.clone())];
            let at = source
                .node(&path)
                .map(|n| n.key.as_ref().map_or(n.value.start, |k| k.start));
            let (line, column) = at.map_or((1, 1), |at| source.line_col(at));
            Ok(Position {
                file: template.clone(),
                line,
                column,
            })
        }
    }
}

/// Splits a command line at spaces, keeping 'single' and "double" quoted parts together (an
/// unterminated quote runs to the end; [`check_command`] refuses it in the config file).
fn split_words(command: &str) -> Vec<String> {
    split_checked(command).0
}

/// [`split_words`], and the quote left open at the end, if any.
fn split_checked(command: &str) -> (Vec<String>, Option<char>) {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    (out, quote)
}

/// The placeholders an editor command may hold.
const PLACEHOLDERS: [&str; 3] = ["{file}", "{line}", "{col}"];

/// Whether `command` (the config file's `editor`) can run: a program named, every quote
/// closed, and no placeholder but `{file}`, `{line}` and `{col}`. The error says what to fix.
pub(crate) fn check_command(command: &str) -> Result<(), String> {
    let (words, open) = split_checked(command);
    if let Some(q) = open {
        return Err(format!(
            "the editor command has an unterminated {q} quote: close it, e.g. \
             editor = \"code --goto {{file}}:{{line}}:{{col}}\""
        ));
    }
    if words.first().is_none_or(|w| w.is_empty()) {
        return Err(
            "the editor command is empty: give a program (e.g. editor = \"vim +{line} \
                    {file}\"), or remove the line to use $VISUAL, $EDITOR or vi"
                .into(),
        );
    }
    for w in &words {
        let mut rest = w.as_str();
        while let Some(start) = rest.find('{') {
            let tail = &rest[start..];
            let end = tail.find('}').map_or(tail.len(), |e| e + 1);
            let token = &tail[..end];
            if !PLACEHOLDERS.contains(&token) {
                return Err(format!(
                    "unknown placeholder {token} in the editor command; the placeholders are \
                     {{file}}, {{line}} and {{col}}"
                ));
            }
            rest = &tail[end..];
        }
    }
    Ok(())
}

/// The command (program and arguments) that opens `at`.
///
/// `custom` is the config file's `editor`, in which `{file}`, `{line}` and `{col}` are
/// replaced (the file is added at the end when it has no `{file}`). Otherwise `fallback` (the
/// `$VISUAL` or `$EDITOR` command line) gets the arguments its editor understands: `+line`
/// for most, `+call cursor(line,col)` for vi-likes, `+line,col` for nano, `+line:col` for
/// emacs, micro and kakoune, `file:line:col` for helix, Sublime and Zed, `--goto` for VS Code.
pub(crate) fn command(custom: Option<&str>, fallback: &str, at: &Position) -> Vec<String> {
    let file = at.file.display().to_string();
    let (line, col) = (at.line.to_string(), at.column.to_string());
    if let Some(custom) = custom {
        let mut words = split_words(custom);
        let has_file = words.iter().any(|w| w.contains("{file}"));
        for w in words.iter_mut() {
            *w = w
                .replace("{file}", &file)
                .replace("{line}", &line)
                .replace("{col}", &col);
        }
        if !has_file {
            words.push(file);
        }
        return words;
    }
    let mut words = split_words(fallback);
    if words.is_empty() {
        words.push("vi".into());
    }
    let program = Path::new(&words[0])
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (l, c) = (at.line, at.column);
    match program.as_str() {
        "vi" | "vim" | "nvim" | "gvim" | "mvim" | "view" => {
            words.extend([format!("+call cursor({l},{c})"), file])
        }
        "nano" | "pico" => words.extend([format!("+{l},{c}"), file]),
        "emacs" | "emacsclient" | "micro" | "kak" => words.extend([format!("+{l}:{c}"), file]),
        "hx" | "helix" | "subl" | "sublime_text" | "zed" | "zeditor" => {
            words.push(format!("{file}:{l}:{c}"))
        }
        "code" | "codium" | "code-insiders" | "cursor" => {
            words.extend(["--goto".into(), format!("{file}:{l}:{c}")])
        }
        _ => words.extend([format!("+{l}"), file]),
    }
    words
}

/// `$VISUAL`, else `$EDITOR`, else `vi`.
pub(crate) fn fallback_from_env() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".into())
}

/// Runs the editor and waits for it; `Err` says why it could not run or how it failed.
pub(crate) fn run(words: &[String]) -> Result<(), String> {
    let Some((program, args)) = words.split_first() else {
        return Err("the editor command is empty".into());
    };
    let status = std::process::Command::new(program)
        .args(args)
        .status()
        .map_err(|e| {
            format!("cannot run the editor '{program}': {e} (set $VISUAL, $EDITOR or `editor` in the config file)")
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the editor '{program}' exited with {status}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Position {
        Position {
            file: PathBuf::from("samples/my model/a.sample"),
            line: 12,
            column: 5,
        }
    }

    #[test]
    fn each_editor_gets_the_line_and_column_in_its_own_syntax() {
        let cases: &[(&str, &[&str])] = &[
            (
                "vim",
                &["vim", "+call cursor(12,5)", "samples/my model/a.sample"],
            ),
            (
                "/usr/bin/nvim -p",
                &[
                    "/usr/bin/nvim",
                    "-p",
                    "+call cursor(12,5)",
                    "samples/my model/a.sample",
                ],
            ),
            ("nano", &["nano", "+12,5", "samples/my model/a.sample"]),
            (
                "emacsclient -t",
                &["emacsclient", "-t", "+12:5", "samples/my model/a.sample"],
            ),
            ("hx", &["hx", "samples/my model/a.sample:12:5"]),
            (
                "code --wait",
                &["code", "--wait", "--goto", "samples/my model/a.sample:12:5"],
            ),
            ("ed", &["ed", "+12", "samples/my model/a.sample"]),
            (
                "",
                &["vi", "+call cursor(12,5)", "samples/my model/a.sample"],
            ),
        ];
        for (editor, want) in cases {
            assert_eq!(command(None, editor, &at()), *want, "{editor}");
        }
    }

    #[test]
    fn a_custom_command_gets_its_placeholders_replaced() {
        assert_eq!(
            command(Some("my-edit --at '{line} {col}' {file}"), "vim", &at()),
            ["my-edit", "--at", "12 5", "samples/my model/a.sample"]
        );
        assert_eq!(
            command(Some("\"/opt/My Editor/bin/ed\" -l {line}"), "vim", &at()),
            [
                "/opt/My Editor/bin/ed",
                "-l",
                "12",
                "samples/my model/a.sample"
            ],
            "without {{file}} the file goes last"
        );
    }

    #[test]
    fn a_command_that_cannot_run_is_refused_with_what_to_fix() {
        assert_eq!(check_command("code --goto {file}:{line}:{col}"), Ok(()));
        assert_eq!(check_command("'/opt/My Ed/ed' -l {line}"), Ok(()));
        let e = check_command("vim '+{line}").unwrap_err();
        assert!(e.contains("unterminated ' quote"), "{e}");
        for empty in ["", "   ", "''"] {
            let e = check_command(empty).unwrap_err();
            assert!(e.contains("empty") && e.contains("$EDITOR"), "{e}");
        }
        let e = check_command("vim +{row} {file}").unwrap_err();
        assert!(e.contains("unknown placeholder {row}"), "{e}");
        let e = check_command("vim {file").unwrap_err();
        assert!(e.contains("unknown placeholder {file"), "{e}");
    }

    #[test]
    fn places_resolve_to_the_file_line_and_column() {
        let dir = std::env::temp_dir().join(format!("rtbench-editor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let template = dir.join("template.json");
        std::fs::write(
            &template,
            "{\n  \"fields\": {\n    \"content\": {\"open\": \"<a>\"},\n    \"thinking\": {}\n  }\n}\n",
        )
        .unwrap();
        let p = resolve(&Place::Field {
            template: template.clone(),
            field: "thinking".into(),
        })
        .unwrap();
        assert_eq!((p.line, p.column), (4, 5));
        let sample_path = dir.join("a.sample");
        let text = "--- prefix ---\nP\n--- generation ---\nhello\nworld\n";
        std::fs::write(&sample_path, text).unwrap();
        let sample = rtbench_tooling::sample::read_sample(&sample_path).unwrap();
        let prefix_len = sample.prefix.as_ref().map_or(0, String::len);
        let at = prefix_len + "hello\nwo".len();
        let p = resolve(&Place::Document {
            sample: Arc::new(sample),
            at,
        })
        .unwrap();
        assert_eq!((p.line, p.column), (5, 3), "the 'r' of world");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
