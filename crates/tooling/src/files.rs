//! Reading an input file whole, the same way everywhere: at most [`MAX_INPUT`] bytes, UTF-8
//! (an error located in the file otherwise), a folder, a device or (for [`Pipes::Refuse`]) a
//! pipe refused before anything is read. Part of the input policy (the `inputs` module, which
//! re-exports it); a module of its own so that the sample reader can use it too.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Input files larger than this are refused (a device like `/dev/zero` never ends, and every
/// input is held in memory whole).
pub const MAX_INPUT: u64 = 1 << 30;

/// Whether a named pipe (`<(...)`) is read like a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pipes {
    /// Read it once (the command line).
    Read,
    /// Refuse it: the reader reads its inputs again on every change (the workbench), and a
    /// pipe reads once, or never ends.
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
    /// A device or a socket ([`Pipes::Read`]): it may never end.
    Device,
    /// A pipe or a device ([`Pipes::Refuse`]).
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
                "is a device or socket, not a file: give a file (a pipe such as <(...) works too)"
                    .into()
            }
            ReadErrorKind::NotAFile => "is a pipe or a device, not a file: the workbench reads \
                its files again on every change, so save it to a file (rtbench parse reads pipes)"
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
/// in errors. The file's type is checked before it is opened: a folder and a device are
/// refused, and a pipe unless `pipes` is [`Pipes::Read`]; more than [`MAX_INPUT`] bytes are
/// refused without being held.
pub fn read_text(path: &Path, what: &str, pipes: Pipes) -> Result<String, ReadError> {
    let fail = |kind| ReadError {
        path: path.to_path_buf(),
        what: what.to_string(),
        kind,
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(ReadErrorKind::Io(e)))?;
    check_type(&meta, pipes).map_err(fail)?;
    if meta.is_file() && meta.len() > MAX_INPUT {
        return Err(fail(ReadErrorKind::TooLarge));
    }
    let mut file = std::fs::File::open(path).map_err(|e| fail(ReadErrorKind::Io(e)))?;
    // The path may have been replaced between the two looks: check what was opened.
    let opened = file.metadata().map_err(|e| fail(ReadErrorKind::Io(e)))?;
    check_type(&opened, pipes).map_err(fail)?;
    // A pipe has no length: read at most MAX_INPUT (+1 to see that it goes on).
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(ReadErrorKind::Io(e)))?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err(fail(ReadErrorKind::TooLarge));
    }
    String::from_utf8(bytes).map_err(|e| fail(not_utf8(e.as_bytes(), e.utf8_error())))
}

/// Refuses what is not a regular file (a pipe too, unless pipes are read).
fn check_type(meta: &std::fs::Metadata, pipes: Pipes) -> Result<(), ReadErrorKind> {
    let t = meta.file_type();
    if t.is_dir() {
        return Err(ReadErrorKind::Folder);
    }
    if t.is_file() {
        return Ok(());
    }
    #[cfg(unix)]
    let pipe = std::os::unix::fs::FileTypeExt::is_fifo(&t);
    #[cfg(not(unix))]
    let pipe = false;
    match pipes {
        Pipes::Read if pipe => Ok(()),
        Pipes::Read => Err(ReadErrorKind::Device),
        Pipes::Refuse => Err(ReadErrorKind::NotAFile),
    }
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
