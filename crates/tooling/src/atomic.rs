//! Replacing a file atomically, and only if nobody changed it since it was read.
//!
//! [`replace_file`] writes the new bytes to a temporary file in the same folder (created with
//! `create_new`, so it never reuses someone else's file, under a name nobody can predict),
//! syncs it, gives it the original's permissions and renames it over the target, then syncs
//! the folder (on Unix) so that the rename itself survives a crash. Readers see the old file or
//! the new one, never half of either. Before writing, the file's current bytes are compared with
//! those the caller read: when they differ (an editor saved it in between), nothing is written.
//! The new file keeps the old one's permissions and owner; a read-only file is refused unless
//! the caller allows it ([`Replace::allow_read_only`]), since a rename would otherwise replace it
//! silently (renaming needs only the folder to be writable).
//!
//! [`links_of`] says who else sees a file: other hard links, and in a Hugging Face cache the
//! other snapshots whose links point at the same blob. Replacing such a file changes what they
//! show too (or, for a rename, detaches the hard links), so callers warn first.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file was not replaced.
#[derive(Debug)]
pub enum AtomicError {
    /// The file's bytes are no longer those that were read: someone saved it since.
    Changed {
        /// The file that was to be replaced.
        path: PathBuf,
    },
    /// The file could not be read to check it (deleted, or unreadable).
    Read {
        /// The file that was to be replaced.
        path: PathBuf,
        /// Why reading it failed.
        error: std::io::Error,
    },
    /// The file is read-only (and [`Replace::allow_read_only`] was not given).
    ReadOnly {
        /// The file that was to be replaced.
        path: PathBuf,
    },
    /// The new file could not be given the old one's owner (only the superuser may give files
    /// away); writing it under another owner would lock the owner out.
    Owner {
        /// The file that was to be replaced.
        path: PathBuf,
        /// The old file's owner: (user id, group id).
        owner: (u32, u32),
        /// Why changing the new file's owner failed.
        error: std::io::Error,
    },
    /// Writing the temporary file, or renaming it over the target, failed.
    Write {
        /// The file that was to be replaced.
        path: PathBuf,
        /// Why writing or renaming failed.
        error: std::io::Error,
    },
}

impl AtomicError {
    /// The file that was to be replaced.
    pub fn path(&self) -> &Path {
        match self {
            AtomicError::Changed { path }
            | AtomicError::ReadOnly { path }
            | AtomicError::Owner { path, .. }
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
            AtomicError::ReadOnly { path } => write!(
                f,
                "{} is read-only; nothing was written: make it writable first",
                path.display()
            ),
            AtomicError::Owner {
                path,
                owner: (uid, gid),
                error,
            } => write!(
                f,
                "cannot keep the owner of {} (user {uid}, group {gid}): {error}; nothing was written: run as that user",
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
            AtomicError::Changed { .. } | AtomicError::ReadOnly { .. } => None,
            AtomicError::Read { error, .. }
            | AtomicError::Owner { error, .. }
            | AtomicError::Write { error, .. } => Some(error),
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
    Replace::default().run(path, read, new)
}

/// How [`replace_file`] may go about it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Replace {
    /// Replace a file even when its permissions say it is read-only (it stays read-only).
    pub allow_read_only: bool,
}

impl Replace {
    /// [`replace_file`] with these options.
    pub fn run(self, path: &Path, read: &[u8], new: &[u8]) -> Result<(), AtomicError> {
        replace_with(self, path, read, new)
    }
}

fn replace_with(opts: Replace, path: &Path, read: &[u8], new: &[u8]) -> Result<(), AtomicError> {
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
    let meta = std::fs::metadata(path).map_err(write_err)?;
    let permissions = meta.permissions();
    if permissions.readonly() && !opts.allow_read_only {
        return Err(AtomicError::ReadOnly {
            path: path.to_path_buf(),
        });
    }
    let (tmp, mut file) = create_temp(path).map_err(write_err)?;
    if let Err(e) = keep_owner(&meta, &file) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e(path));
    }
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

/// Gives the new file the old one's owner and group when they differ from the creator's.
#[cfg(unix)]
fn keep_owner(
    old: &std::fs::Metadata,
    new: &File,
) -> Result<(), impl FnOnce(&Path) -> AtomicError> {
    use std::os::unix::fs::MetadataExt;
    let owner = (old.uid(), old.gid());
    let current = new.metadata().map(|m| (m.uid(), m.gid()));
    if current.as_ref().is_ok_and(|&c| c == owner) {
        return Ok(());
    }
    std::os::unix::fs::fchown(new, Some(owner.0), Some(owner.1)).map_err(|error| {
        move |path: &Path| AtomicError::Owner {
            path: path.to_path_buf(),
            owner,
            error,
        }
    })
}

#[cfg(not(unix))]
fn keep_owner(
    _old: &std::fs::Metadata,
    _new: &File,
) -> Result<(), impl FnOnce(&Path) -> AtomicError> {
    Ok::<(), fn(&Path) -> AtomicError>(())
}

/// Who else sees a file's bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Links {
    /// How many other hard links the file has.
    pub other_hard_links: u64,
    /// In a Hugging Face cache (`snapshots/<rev>/..` links into `blobs/`), the snapshot paths
    /// other than the one written through that link to the same blob.
    pub other_snapshots: Vec<PathBuf>,
}

impl Links {
    /// Whether anyone else sees the file (another hard link or another snapshot), so that
    /// replacing it deserves a warning.
    pub fn is_shared(&self) -> bool {
        self.other_hard_links > 0 || !self.other_snapshots.is_empty()
    }
}

/// The other names of `path` (as given, possibly a link): see [`Links`].
pub fn links_of(path: &Path) -> Links {
    let mut links = Links::default();
    let Ok(target) = std::fs::canonicalize(path) else {
        return links;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::metadata(&target) {
            links.other_hard_links = m.nlink().saturating_sub(1);
        }
    }
    // blobs/<hash> under the model's cache folder, whose snapshots/ hold the links.
    let cache = target
        .parent()
        .filter(|d| d.file_name().is_some_and(|n| n == "blobs"))
        .and_then(Path::parent);
    if let Some(cache) = cache {
        let mine = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let mut found = Vec::new();
        snapshot_links(&cache.join("snapshots"), &target, 0, &mut found);
        found.retain(|p| *p != mine);
        found.sort();
        links.other_snapshots = found;
    }
    links
}

/// The links under `dir` (a few levels deep, not following folder links) resolving to `target`.
fn snapshot_links(dir: &Path, target: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    const DEPTH: usize = 6;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth < DEPTH {
            snapshot_links(&p, target, depth + 1, found);
        } else if kind.is_symlink() && std::fs::canonicalize(&p).is_ok_and(|t| t == target) {
            found.push(p);
        }
    }
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

    #[cfg(unix)]
    #[test]
    fn a_read_only_file_is_refused_unless_allowed_and_stays_read_only() {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new("ro");
        let p = s.0.join("tokenizer_config.json");
        std::fs::write(&p, b"{}").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o444)).unwrap();
        let e = replace_file(&p, b"{}", b"{\"a\": 1}").unwrap_err();
        assert!(matches!(e, AtomicError::ReadOnly { .. }), "{e:?}");
        assert!(e.to_string().contains("is read-only"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"{}");
        let forced = Replace {
            allow_read_only: true,
        };
        forced.run(&p, b"{}", b"{\"a\": 1}").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\": 1}");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o444);
        assert_eq!(s.entries(), vec!["tokenizer_config.json".to_string()]);
    }

    /// Only the superuser can give a file away, so this runs where the tests run as root (the
    /// project's containers); elsewhere it checks that the owner stays the caller's.
    #[cfg(unix)]
    #[test]
    fn keeps_the_owner() {
        use std::os::unix::fs::MetadataExt;
        let s = Scratch::new("owner");
        let p = s.0.join("x.sample");
        std::fs::write(&p, b"a").unwrap();
        let given = std::os::unix::fs::chown(&p, Some(65534), Some(65534)).is_ok();
        let before = std::fs::metadata(&p).unwrap();
        replace_file(&p, b"a", b"b").unwrap();
        let after = std::fs::metadata(&p).unwrap();
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
        if given {
            assert_eq!((after.uid(), after.gid()), (65534, 65534));
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"b");
    }

    #[cfg(unix)]
    #[test]
    fn finds_other_hard_links_and_snapshots_sharing_a_blob() {
        let s = Scratch::new("links");
        let plain = s.0.join("plain.json");
        std::fs::write(&plain, b"{}").unwrap();
        assert_eq!(links_of(&plain), Links::default());
        std::fs::hard_link(&plain, s.0.join("twin.json")).unwrap();
        assert_eq!(links_of(&plain).other_hard_links, 1);

        // models--org--m/blobs/<hash> linked from two snapshots.
        let cache = s.0.join("models--org--m");
        std::fs::create_dir_all(cache.join("blobs")).unwrap();
        std::fs::write(cache.join("blobs/abc123"), b"{}").unwrap();
        for rev in ["r1", "r2", "r3"] {
            let d = cache.join("snapshots").join(rev);
            std::fs::create_dir_all(&d).unwrap();
            std::os::unix::fs::symlink("../../blobs/abc123", d.join("tokenizer_config.json"))
                .unwrap();
        }
        let mine = cache.join("snapshots/r2/tokenizer_config.json");
        let links = links_of(&mine);
        assert_eq!(links.other_hard_links, 0);
        assert_eq!(
            links.other_snapshots,
            vec![
                cache.join("snapshots/r1/tokenizer_config.json"),
                cache.join("snapshots/r3/tokenizer_config.json"),
            ]
        );
        assert!(links.is_shared());
    }
}
