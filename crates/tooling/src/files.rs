//! Reading an input file, the same way everywhere: a regular file only (a folder, a device, a
//! socket or a named pipe is refused before anything is read: a device like `/dev/zero` and a
//! pipe like `<(cat /dev/zero)` never end, and a pipe has no length to check first), at most
//! [`MAX_INPUT`] bytes, UTF-8 (an error located in the file otherwise). [`read_input`] reads a
//! file whole; [`open_input`] opens one for a reader that streams it (a corpus). Part of the
//! input policy (the `inputs` module, which re-exports it); a module of its own so that the
//! sample reader can use it too.
//!
//! The text is read exactly: a byte-order mark stays (the formats that treat it as layout,
//! `.sample` files and corpora, skip it themselves; a generation or prefix file is text as the
//! model wrote it, and JSON files are read as Python's `json` reads them, which refuses it).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Input files larger than this are refused (every input is held in memory whole).
pub const MAX_INPUT: u64 = 1 << 30;

/// Who reads the file, for callers of [`read_text`] that say so. Every reader refuses pipes
/// and devices alike ([`read_input`]); the workbench's refusal says why it cannot use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pipes {
    /// The command line.
    Read,
    /// The workbench, which reads its inputs again on every change.
    Refuse,
}

/// Why a file could not be read.
#[derive(Debug)]
pub struct ReadError {
    /// The file that could not be read.
    pub path: PathBuf,
    /// What the file is for, as the user knows it (`prefix file`, `tools file`, ...).
    pub what: String,
    /// What is wrong with it.
    pub kind: ReadErrorKind,
}

/// What is wrong with the file.
#[derive(Debug)]
pub enum ReadErrorKind {
    /// Missing, unreadable, ...
    Io(std::io::Error),
    /// A folder, where a file was expected.
    Folder,
    /// A device or a socket: it may never end.
    Device,
    /// A named pipe (`<(...)`, `mkfifo`): it may never end, has no length to check before
    /// reading, and reads only once.
    Pipe,
    /// A pipe or a device, refused to the workbench ([`Pipes::Refuse`]).
    NotAFile,
    /// Larger than [`MAX_INPUT`].
    TooLarge,
    /// Invalid UTF-8 at `byte` (line and column of the place, 1-based; the column counts
    /// characters). `lossy` is the file's text with the invalid bytes replaced, to show.
    NotUtf8 {
        /// The byte offset of the first invalid byte.
        byte: usize,
        /// Its 1-based line.
        line: usize,
        /// Its 1-based column, in characters.
        column: usize,
        /// The file's text with the invalid bytes replaced by U+FFFD.
        lossy: String,
    },
}

impl ReadError {
    /// What is wrong, after the file's name: `is a folder: give a file`.
    fn predicate(&self) -> String {
        match &self.kind {
            ReadErrorKind::Io(e) => e.to_string(),
            ReadErrorKind::Folder => "is a folder: give a file".into(),
            ReadErrorKind::Device => {
                "is a device or socket, not a file: give a regular file (a device may never end)"
                    .into()
            }
            ReadErrorKind::Pipe => "is a pipe, not a file: save its text to a file and give \
                that (rtbench reads whole files, and a pipe may never end)"
                .into(),
            ReadErrorKind::NotAFile => "is a pipe or a device, not a file: the workbench reads \
                its files again on every change, so save it to a file"
                .into(),
            ReadErrorKind::TooLarge => format!(
                "is larger than {} GiB: rtbench reads whole files",
                MAX_INPUT >> 30
            ),
            ReadErrorKind::NotUtf8 {
                byte, line, column, ..
            } => format!(
                "is not valid UTF-8 (byte {byte}) at line {line}, column {column}: save it as \
                 UTF-8 (iconv -t UTF-8 converts it)"
            ),
        }
    }

    /// Why, for a message that names the file itself: `it is a folder: give a file` (an I/O
    /// error as the system says it).
    pub fn reason(&self) -> String {
        match &self.kind {
            ReadErrorKind::Io(e) => e.to_string(),
            _ => format!("it {}", self.predicate()),
        }
    }
}

/// The file named, what it is for, and why it cannot be read:
/// `cannot read prefix file p.txt: No such file or directory (os error 2)`,
/// `tools file t.json is a folder: give a file`.
impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, path) = (&self.what, self.path.display());
        match &self.kind {
            ReadErrorKind::Io(e) => write!(f, "cannot read {what} {path}: {e}"),
            _ => write!(f, "{what} {path} {}", self.predicate()),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads a whole UTF-8 text file exactly (no newline translation). `what` names the file's use
/// in errors. The file's type is checked before it is opened: anything but a regular file is
/// refused, and more than [`MAX_INPUT`] bytes are refused without being held.
pub fn read_input(path: &Path, what: &str) -> Result<String, ReadError> {
    let fail = |kind| ReadError {
        path: path.to_path_buf(),
        what: what.to_string(),
        kind,
    };
    let file = open_input(path, what)?;
    // The file may grow while it is read: read at most MAX_INPUT (+1 to see that it goes on).
    let mut bytes = Vec::new();
    file.take(MAX_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(ReadErrorKind::Io(e)))?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(fail(ReadErrorKind::TooLarge));
    }
    String::from_utf8(bytes).map_err(|e| fail(not_utf8(e.as_bytes(), e.utf8_error())))
}

/// [`read_input`], for a caller that says who reads: the policy is the same, and the
/// workbench's refusal of a pipe or a device says why it cannot use one.
pub fn read_text(path: &Path, what: &str, pipes: Pipes) -> Result<String, ReadError> {
    read_input(path, what).map_err(|e| match (pipes, e.kind) {
        (Pipes::Refuse, ReadErrorKind::Pipe | ReadErrorKind::Device) => ReadError {
            kind: ReadErrorKind::NotAFile,
            ..e
        },
        (_, kind) => ReadError { kind, ..e },
    })
}

/// Opens an input file to read, after checking that it is a regular file no larger than
/// [`MAX_INPUT`] (before opening it: opening a pipe with no writer would block), and again once
/// open (the path may have been replaced between the two looks).
pub fn open_input(path: &Path, what: &str) -> Result<File, ReadError> {
    open_checked(path, what, Some(MAX_INPUT))
}

/// [`open_input`] with no limit on the length: for a reader that streams the file and holds
/// only a bounded part of it at a time.
pub fn open_stream(path: &Path, what: &str) -> Result<File, ReadError> {
    open_checked(path, what, None)
}

fn open_checked(path: &Path, what: &str, limit: Option<u64>) -> Result<File, ReadError> {
    let fail = |kind| ReadError {
        path: path.to_path_buf(),
        what: what.to_string(),
        kind,
    };
    let check = |meta: &std::fs::Metadata| {
        check_type(meta)?;
        match limit {
            Some(max) if meta.len() > max => Err(ReadErrorKind::TooLarge),
            _ => Ok(()),
        }
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(ReadErrorKind::Io(e)))?;
    check(&meta).map_err(fail)?;
    let file = File::open(path).map_err(|e| fail(ReadErrorKind::Io(e)))?;
    let opened = file.metadata().map_err(|e| fail(ReadErrorKind::Io(e)))?;
    check(&opened).map_err(fail)?;
    Ok(file)
}

/// Refuses what is not a regular file.
fn check_type(meta: &std::fs::Metadata) -> Result<(), ReadErrorKind> {
    let t = meta.file_type();
    if t.is_dir() {
        return Err(ReadErrorKind::Folder);
    }
    if t.is_file() {
        return Ok(());
    }
    #[cfg(unix)]
    if std::os::unix::fs::FileTypeExt::is_fifo(&t) {
        return Err(ReadErrorKind::Pipe);
    }
    Err(ReadErrorKind::Device)
}

/// Where the UTF-8 of `bytes` breaks, as a line and column.
fn not_utf8(bytes: &[u8], e: std::str::Utf8Error) -> ReadErrorKind {
    let byte = e.valid_up_to();
    // Valid up to `byte`, so borrowed, not copied.
    let before = String::from_utf8_lossy(&bytes[..byte]);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    ReadErrorKind::NotUtf8 {
        byte,
        line,
        column,
        lossy: String::from_utf8_lossy(bytes).into_owned(),
    }
}
