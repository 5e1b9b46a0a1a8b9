//! Failing records as `.sample` files, so that `rtbench test` and the workbench open each one
//! like any other sample. A file is created only if no file of that name exists: a folder of
//! earlier results, or of hand-written samples, is never overwritten. Each is written whole
//! into a temporary file beside it first and then given its name, so that a run stopped while
//! writing leaves no file holding part of a record.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::outcome::{Outcome, Status};
use crate::sample::{Sample, json_section, parse_sample, text_section};

/// The `.sample` text of a record: its prefix and generation as text (a conversation rendered,
/// token ids decoded), its tools and expected message, and a note saying where it came from and
/// how it failed.
pub fn sample_text(outcome: &Outcome, sample: &Sample) -> String {
    let mut out = String::new();
    text_section("prefix", sample.prefix.as_deref().unwrap_or(""), &mut out);
    text_section("generation", &sample.generation, &mut out);
    if let Some(t) = &sample.tools {
        json_section("tools", t, &mut out);
    }
    if let Some(e) = &sample.expected {
        json_section("expected", e, &mut out);
    }
    let mut note = format!("From the corpus record {}.", outcome.label());
    match &outcome.status {
        Status::Error(e) => note.push_str(&format!("\nError: {}", e.message)),
        Status::Input(m) => note.push_str(&format!("\nNot parsed: {m}")),
        Status::Parsed(_) => {}
    }
    if let Some(d) = &outcome.differs {
        note.push_str("\nDiffers from the expected message:");
        for l in d.iter().take(20) {
            note.push_str(&format!("\n  {l}"));
        }
    }
    // A text whose last line is blank but not empty cannot be written as a section exactly.
    if let Ok(back) = parse_sample(Path::new("check.sample"), &format!("{out}--- note ---\n"))
        && (back.generation != sample.generation
            || back.prefix.as_deref() != Some(sample.prefix.as_deref().unwrap_or("")))
    {
        note.push_str(
            "\nThe record's text ends in a way a sample section cannot hold (blank characters \
             on its last line): this file's text is not exactly the record's.",
        );
    }
    // A note line that looks like a section header would start a section.
    let note = note.replace("\n--- ", "\n  --- ");
    out.push_str(&format!("--- note ---\n{note}\n"));
    out
}

/// A file name for the record: its position and a short form of its id.
pub fn file_name(outcome: &Outcome) -> String {
    let slug: String = outcome
        .id
        .as_deref()
        .unwrap_or("")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let slug = slug.trim_matches('_');
    if slug.is_empty() {
        format!("record-{:06}.sample", outcome.index + 1)
    } else {
        format!("record-{:06}-{slug}.sample", outcome.index + 1)
    }
}

/// Writes the failing record into `dir` as a new file; an existing file of that name is an
/// error (never replaced).
pub fn write_failure(dir: &Path, outcome: &Outcome) -> std::io::Result<PathBuf> {
    let Some(sample) = &outcome.sample else {
        return Err(std::io::Error::other("the record has no text to write"));
    };
    let path = dir.join(file_name(outcome));
    let located = |e| at(&path, e);
    let mut file = tempfile::Builder::new()
        .prefix(".rtbench-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(located)?;
    file.write_all(sample_text(outcome, sample).as_bytes())
        .map_err(located)?;
    file.as_file().sync_all().map_err(located)?;
    // The temporary file is removed if the name is taken.
    file.persist_noclobber(&path)
        .map_err(|e| located(e.error))?;
    Ok(path)
}

/// What [`publish_staged`] did.
#[derive(Debug, Default)]
pub struct Published {
    /// Each staged file and its new path (`None`: not moved, see `errors`), in name order.
    pub moved: Vec<(PathBuf, Option<PathBuf>)>,
    /// Why files were not moved, each naming its path.
    pub errors: Vec<std::io::Error>,
}

/// Gives the failure files written into `staged` (by [`write_failure`]) their names in `dir`,
/// in name order, as writing them there would have: a name `dir` already has is an error
/// (never replaced) and its file stays in `staged`.
pub fn publish_staged(staged: &Path, dir: &Path) -> std::io::Result<Published> {
    let mut names: Vec<_> = std::fs::read_dir(staged)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    let mut out = Published::default();
    for name in names {
        let (from, to) = (staged.join(&name), dir.join(&name));
        // A link fails on a name that exists, where a rename would replace its file.
        match std::fs::hard_link(&from, &to).and_then(|()| std::fs::remove_file(&from)) {
            Ok(()) => out.moved.push((from, Some(to))),
            Err(e) => {
                out.errors.push(at(&to, e));
                out.moved.push((from, None));
            }
        }
    }
    Ok(out)
}

/// `e`, its message naming `path`.
fn at(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}
