//! Replacing a file atomically, and only if nobody changed it since it was read.
//!
//! [`replace_file`] writes the new bytes to a temporary file in the same folder (created with
//! `create_new`, so it never reuses someone else's file, under a name nobody can predict),
//! syncs it, gives it the original's permissions and renames it over the target, then syncs
//! the folder (on Unix) so that the rename itself survives a crash. Readers see the old file or
//! the new one, never half of either. Before writing, the file's current bytes are compared with
//! those the caller read: when they differ (an editor saved it in between), nothing is written.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file was not replaced.
#[derive(Debug)]
pub enum AtomicError {
    /// The file's bytes are no longer those that were read: someone saved it since.
    Changed { path: PathBuf },
    /// The file could not be read to check it (deleted, or unreadable).
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Writing the temporary file, or renaming it over the target, failed.
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl AtomicError {
    /// The file that was to be replaced.
    pub fn path(&self) -> &Path {
        match self {
            AtomicError::Changed { path }
            | AtomicError::Read { path, .. }
            | AtomicError::Write { path, .. } => path,
        }
    }
}

impl std::fmt::Display for AtomicError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AtomicError::Changed { path } => write!(
                f,
                "{} changed on disk since it was read; nothing was written: re-run to work on the new version",
                path.display()
            ),
            AtomicError::Read { path, error } => write!(
                f,
                "cannot read {} to check that it is unchanged: {error}; nothing was written",
                path.display()
            ),
            AtomicError::Write { path, error } => write!(
                f,
                "cannot write {}: {error}; the file is unchanged (check the folder's permissions and free space)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for AtomicError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AtomicError::Changed { .. } => None,
            AtomicError::Read { error, .. } | AtomicError::Write { error, .. } => Some(error),
        }
    }
}

/// Distinguishes temporary files made by one process in the same nanosecond.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary name beside `path`: hidden, naming the file, unpredictable.
fn temp_name(path: &Path) -> PathBuf {
    let dir = folder_of(path);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(
        ".{name}.rtbench-{}-{nanos:x}-{count}.tmp",
        std::process::id()
    ))
}

fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes `new` to `path` atomically, unless the file's current bytes differ from `read` (the
/// bytes the caller read and computed `new` from). The file keeps its permissions. On any error
/// the temporary file is removed and `path` is left as it was.
///
/// A symbolic link is replaced by a regular file; resolve it first
/// ([`std::fs::canonicalize`]) to write where it points.
pub fn replace_file(path: &Path, read: &[u8], new: &[u8]) -> Result<(), AtomicError> {
    let current = std::fs::read(path).map_err(|error| AtomicError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    if current != read {
        return Err(AtomicError::Changed {
            path: path.to_path_buf(),
        });
    }
    let write_err = |error| AtomicError::Write {
        path: path.to_path_buf(),
        error,
    };
    let permissions = std::fs::metadata(path).map_err(write_err)?.permissions();
    let (tmp, mut file) = create_temp(path).map_err(write_err)?;
    let result = (|| {
        file.write_all(new)?;
        file.sync_all()?;
        std::fs::set_permissions(&tmp, permissions)?;
        drop(file);
        std::fs::rename(&tmp, path)
    })();
    if let Err(error) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(error));
    }
    sync_folder(folder_of(path)).map_err(write_err)
}

/// Creates a new temporary file beside `path` (retrying on the unlikely name collision).
fn create_temp(path: &Path) -> std::io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..16 {
        let tmp = temp_name(path);
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}

/// Makes the rename durable: on Unix a folder's entries are synced through the folder.
#[cfg(unix)]
fn sync_folder(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

#[cfg(not(unix))]
fn sync_folder(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!(
                "rtbench-atomic-{name}-{}-{}",
                std::process::id(),
                COUNTER.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        fn entries(&self) -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn writes_the_new_bytes_and_leaves_no_temporary_file() {
        let s = Scratch::new("write");
        let p = s.0.join("x.sample");
        std::fs::write(&p, b"old").unwrap();
        replace_file(&p, b"old", b"new\r\ntext").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\r\ntext");
        assert_eq!(s.entries(), vec!["x.sample".to_string()]);
        // Twice in a row (the counter makes a fresh name).
        replace_file(&p, b"new\r\ntext", b"again").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"again");
        assert_eq!(s.entries(), vec!["x.sample".to_string()]);
    }

    #[test]
    fn refuses_a_file_changed_since_it_was_read() {
        let s = Scratch::new("changed");
        let p = s.0.join("x.sample");
        std::fs::write(&p, b"saved by an editor").unwrap();
        let e = replace_file(&p, b"what we read", b"new").unwrap_err();
        assert!(matches!(e, AtomicError::Changed { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.contains("x.sample changed on disk since it was read"),
            "{text}"
        );
        assert!(text.contains("re-run"), "{text}");
        assert_eq!(std::fs::read(&p).unwrap(), b"saved by an editor");
        assert_eq!(s.entries(), vec!["x.sample".to_string()]);
    }

    #[test]
    fn a_missing_file_or_folder_is_an_error_that_names_it() {
        let s = Scratch::new("missing");
        let p = s.0.join("gone.sample");
        let e = replace_file(&p, b"", b"new").unwrap_err();
        assert!(matches!(e, AtomicError::Read { .. }), "{e:?}");
        assert!(e.to_string().contains("gone.sample"), "{e}");
        assert_eq!(e.path(), p);
        assert!(s.entries().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_permission_bits() {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new("perms");
        let p = s.0.join("script.sample");
        std::fs::write(&p, b"a").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        replace_file(&p, b"a", b"b").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        replace_file(&p, b"b", b"c").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
        assert_eq!(std::fs::read(&p).unwrap(), b"c");
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_write_removes_the_temporary_file_and_keeps_the_original() {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new("readonly");
        let p = s.0.join("x.sample");
        std::fs::write(&p, b"a").unwrap();
        std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o555)).unwrap();
        let result = replace_file(&p, b"a", b"b");
        std::fs::set_permissions(&s.0, std::fs::Permissions::from_mode(0o755)).unwrap();
        // Root may write anyway; otherwise the read-only folder refuses the temporary file.
        if let Err(e) = result {
            assert!(matches!(e, AtomicError::Write { .. }), "{e:?}");
            assert!(e.to_string().contains("x.sample"), "{e}");
            assert_eq!(std::fs::read(&p).unwrap(), b"a");
        }
        assert_eq!(s.entries(), vec!["x.sample".to_string()]);
    }
}
