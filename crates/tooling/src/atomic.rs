//! Replacing a file atomically, and only if nobody changed it since it was read.
//!
//! [`replace_file`] writes the new bytes to a temporary file in the same folder (created with
//! `create_new`, so it never reuses someone else's file, under a name nobody can predict),
//! syncs it, gives it the original's permissions and renames it over the target, then syncs
//! the folder (on Unix) so that the rename itself survives a crash. Readers see the old file or
//! the new one, never half of either.
//!
//! Nothing is written over a change nobody has seen. The file's bytes are compared with those
//! the caller read before anything is written, and its identity (device, inode, length,
//! modification time) and bytes are compared again immediately before the rename, after the
//! slow part (writing and syncing the temporary file): an editor's save meanwhile is found and
//! nothing is written. Two rtbench writers of one file are serialised by an advisory lock on
//! it (`flock`, held from the first comparison to the rename), so of two writes computed from
//! the same bytes the second always finds the first and is refused, whatever the timing; an
//! editor takes no such lock, which is why the second comparison is there too. (A lock alone
//! misses editors; the comparison alone leaves a window between it and the rename that two
//! rtbench writers can both pass.)
//!
//! A symbolic link is written through: the file it points to is replaced and the link stays a
//! link. The new file keeps the old one's permissions and owner; a read-only file is refused
//! unless the caller allows it ([`Replace::allow_read_only`]), since a rename would otherwise
//! replace it silently (renaming needs only the folder to be writable).
//!
//! [`links_of`] says who else sees a file: other hard links, and in a Hugging Face cache the
//! other snapshots whose links point at the same blob. Replacing such a file changes what they
//! show too (or, for a rename, detaches the hard links): [`Links::warnings`] says so, and every
//! replacement reports the file's links as they were ([`Written::links`]).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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
    /// Another program holds the file's lock (another rtbench writing it) for longer than
    /// [`LOCK_WAIT`].
    Busy {
        /// The file that was to be replaced.
        path: PathBuf,
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
            | AtomicError::Busy { path }
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
            AtomicError::Busy { path } => write!(
                f,
                "{} is being written by another program (it holds the file's lock); nothing was written: try again once it is done",
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
            AtomicError::Changed { .. }
            | AtomicError::Busy { .. }
            | AtomicError::ReadOnly { .. } => None,
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

/// How long a writer waits for another rtbench writing the same file to finish.
pub const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Writes `new` to `path` atomically, unless the file's current bytes differ from `read` (the
/// bytes the caller read and computed `new` from), before the write or just before the rename.
/// The file keeps its permissions. A symbolic link is written through (the file it points to is
/// replaced). On any error the temporary file is removed and the file is left as it was.
pub fn replace_file(path: &Path, read: &[u8], new: &[u8]) -> Result<Written, AtomicError> {
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
    pub fn run(self, path: &Path, read: &[u8], new: &[u8]) -> Result<Written, AtomicError> {
        replace_with(self, path, read, new, &mut || {})
    }
}

/// What a replacement wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// The file replaced: the path given, or the file its symbolic link points to.
    pub target: PathBuf,
    /// Whether the path given was a symbolic link (it still is one).
    pub through_link: bool,
    /// Who else saw the file before it was replaced (hard links now keep the old text).
    pub links: Links,
}

impl Written {
    /// What the user should know about the write, a line each, naming the file as `name`:
    /// the file a link pointed to, and the other names that kept or shared the old text.
    pub fn notes(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        if self.through_link {
            out.push(format!(
                "{name} is a link: wrote {} (the link stays)",
                self.target.display()
            ));
        }
        out.extend(self.links.warnings(name));
        out
    }
}

/// The file and its state, as a lock holder saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Identity {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Identity {
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        Identity {
            device,
            inode,
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// The file a path names for writing: the path, or where its symbolic link points.
fn resolve(path: &Path) -> std::io::Result<(PathBuf, bool)> {
    let link = std::fs::symlink_metadata(path)?.file_type().is_symlink();
    if link {
        Ok((std::fs::canonicalize(path)?, true))
    } else {
        Ok((path.to_path_buf(), false))
    }
}

/// Takes the file's advisory lock, waiting up to [`LOCK_WAIT`] for another holder. A file
/// system without locks is written without one (the comparison before the rename remains).
fn lock(file: &File, path: &Path) -> Result<(), AtomicError> {
    let deadline = Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(TryLockError::WouldBlock) => {
                return Err(AtomicError::Busy {
                    path: path.to_path_buf(),
                });
            }
            Err(TryLockError::Error(_)) => return Ok(()),
        }
    }
}

/// Whether the file at `path` is still the locked one, unchanged since `seen`, holding `read`.
fn unchanged(
    file: &mut File,
    path: &Path,
    seen: &Identity,
    read: &[u8],
) -> Result<bool, AtomicError> {
    let err = |error| AtomicError::Read {
        path: path.to_path_buf(),
        error,
    };
    let now = std::fs::metadata(path).map_err(err)?;
    if Identity::of(&now) != *seen {
        return Ok(false);
    }
    same_bytes(file, read).map_err(err)
}

/// Whether the open file holds exactly `read` (read from its start; no more than that is held).
fn same_bytes(file: &mut File, read: &[u8]) -> std::io::Result<bool> {
    file.seek(SeekFrom::Start(0))?;
    let mut current = Vec::with_capacity(read.len().min(1 << 20));
    file.take(read.len() as u64 + 1).read_to_end(&mut current)?;
    Ok(current == read)
}

fn replace_with(
    opts: Replace,
    path: &Path,
    read: &[u8],
    new: &[u8],
    before_rename: &mut dyn FnMut(),
) -> Result<Written, AtomicError> {
    let read_err = |error| AtomicError::Read {
        path: path.to_path_buf(),
        error,
    };
    let (target, through_link) = resolve(path).map_err(read_err)?;
    let links = links_of(path);
    let changed = || AtomicError::Changed {
        path: path.to_path_buf(),
    };
    // Only a regular file is replaced (checked before opening: opening a pipe would block).
    let not_a_file = || read_err(std::io::Error::other("not a regular file"));
    if !std::fs::metadata(&target).map_err(read_err)?.is_file() {
        return Err(not_a_file());
    }
    let mut held = File::open(&target).map_err(read_err)?;
    let meta = held.metadata().map_err(read_err)?;
    if !meta.is_file() {
        return Err(not_a_file());
    }
    lock(&held, path)?;
    // Checked once the lock is held: a writer that held it before may have replaced the file.
    let seen = Identity::of(&held.metadata().map_err(read_err)?);
    if !unchanged(&mut held, &target, &seen, read)? {
        return Err(changed());
    }
    let write_err = |error| AtomicError::Write {
        path: path.to_path_buf(),
        error,
    };
    let permissions = meta.permissions();
    if permissions.readonly() && !opts.allow_read_only {
        return Err(AtomicError::ReadOnly {
            path: path.to_path_buf(),
        });
    }
    let (tmp, mut file) = create_temp(&target).map_err(write_err)?;
    if let Err(e) = keep_owner(&meta, &file) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e(path));
    }
    let written = (|| {
        file.write_all(new)?;
        file.sync_all()?;
        std::fs::set_permissions(&tmp, permissions)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(error));
    }
    drop(file);
    before_rename();
    // Writing and syncing took time: an editor may have saved the file meanwhile.
    match unchanged(&mut held, &target, &seen, read) {
        Ok(true) => {}
        Ok(false) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(changed());
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    }
    if let Err(error) = std::fs::rename(&tmp, &target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_err(error));
    }
    sync_folder(folder_of(&target)).map_err(write_err)?;
    // The lock goes with the old file's handle, once the new file is in place.
    drop(held);
    Ok(Written {
        target,
        through_link,
        links,
    })
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

    /// What else replacing the file changes (or leaves behind), naming it as `name`: a warning
    /// each (the first line starts with `warning: `; a list of snapshots follows it, indented).
    pub fn warnings(&self, name: &str) -> Vec<String> {
        let mut out = Vec::new();
        if !self.other_snapshots.is_empty() {
            let n = self.other_snapshots.len();
            let mut text = format!(
                "warning: {name} is a cache blob that {n} other snapshot{} link{} to; writing it changes them too:",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" },
            );
            for p in &self.other_snapshots {
                text.push_str(&format!("\n  {}", p.display()));
            }
            text.push_str(&format!(
                "\n  to change only this snapshot, replace the link by a copy first: cp --remove-destination \"$(readlink -f {name})\" {name}"
            ));
            out.push(text);
        }
        if self.other_hard_links > 0 {
            let n = self.other_hard_links;
            out.push(format!(
                "warning: {name} has {n} other hard link{}; the write replaces the file, so {} keep{} the old text",
                if n == 1 { "" } else { "s" },
                if n == 1 { "that name" } else { "those names" },
                if n == 1 { "s" } else { "" },
            ));
        }
        out
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

        /// The file `name` in the scratch folder, written with `bytes`.
        fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
            let p = self.0.join(name);
            std::fs::write(&p, bytes).unwrap();
            p
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

    /// The permission bits of `p`.
    #[cfg(unix)]
    fn mode(p: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn writes_the_new_bytes_and_leaves_no_temporary_file() {
        let s = Scratch::new("write");
        let p = s.file("x.sample", b"old");
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
        let p = s.file("x.sample", b"saved by an editor");
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
        let p = s.file("script.sample", b"a");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        replace_file(&p, b"a", b"b").unwrap();
        assert_eq!(mode(&p), 0o640);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        replace_file(&p, b"b", b"c").unwrap();
        assert_eq!(mode(&p), 0o755);
        assert_eq!(std::fs::read(&p).unwrap(), b"c");
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_write_removes_the_temporary_file_and_keeps_the_original() {
        use std::os::unix::fs::PermissionsExt;
        let s = Scratch::new("readonly");
        let p = s.file("x.sample", b"a");
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
        let p = s.file("tokenizer_config.json", b"{}");
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
        assert_eq!(mode(&p), 0o444);
        assert_eq!(s.entries(), vec!["tokenizer_config.json".to_string()]);
    }

    /// Only the superuser can give a file away, so this runs where the tests run as root (the
    /// project's containers); elsewhere it checks that the owner stays the caller's.
    #[cfg(unix)]
    #[test]
    fn keeps_the_owner() {
        use std::os::unix::fs::MetadataExt;
        let s = Scratch::new("owner");
        let p = s.file("x.sample", b"a");
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

    /// Two writers computed their new text from the same bytes at the same time: one writes,
    /// the other finds the file changed; the file is the winner's whole text, never a mix, and
    /// never the loser's over the winner's (a lost write). Repeated, as the race is timing's.
    #[test]
    fn of_two_concurrent_writes_from_the_same_read_exactly_one_succeeds() {
        let s = Scratch::new("race");
        let p = s.0.join("x.sample");
        for round in 0..25 {
            std::fs::write(&p, b"original").unwrap();
            let start = std::sync::Arc::new(std::sync::Barrier::new(2));
            let writers: Vec<_> = [b'A', b'B']
                .into_iter()
                .map(|who| {
                    let (p, start) = (p.clone(), std::sync::Arc::clone(&start));
                    std::thread::spawn(move || {
                        let new = vec![who; 4096];
                        start.wait();
                        (new.clone(), replace_file(&p, b"original", &new))
                    })
                })
                .collect();
            let results: Vec<_> = writers.into_iter().map(|w| w.join().unwrap()).collect();
            let won: Vec<&Vec<u8>> = results
                .iter()
                .filter(|(_, r)| r.is_ok())
                .map(|(new, _)| new)
                .collect();
            assert_eq!(won.len(), 1, "round {round}: {results:?}");
            for (_, r) in &results {
                if let Err(e) = r {
                    assert!(matches!(e, AtomicError::Changed { .. }), "{e:?}");
                }
            }
            assert_eq!(&std::fs::read(&p).unwrap(), won[0], "round {round}");
            assert_eq!(s.entries(), vec!["x.sample".to_string()]);
        }
    }

    /// An editor saves while the new text is being written and synced (the slow part): the
    /// save is found just before the rename and kept, whether the editor writes the file in
    /// place (even to the same length) or saves a new file over it.
    #[test]
    fn a_save_during_the_write_is_found_before_the_rename() {
        let s = Scratch::new("editor");
        let p = s.0.join("x.sample");
        let in_place = |p: &Path| std::fs::write(p, b"edited!!").unwrap();
        let renamed = |p: &Path| {
            let other = p.with_extension("swp");
            std::fs::write(&other, b"saved").unwrap();
            std::fs::rename(&other, p).unwrap();
        };
        for (save, saved) in [
            (&in_place as &dyn Fn(&Path), &b"edited!!"[..]),
            (&renamed, &b"saved"[..]),
        ] {
            std::fs::write(&p, b"original").unwrap();
            let e = replace_with(Replace::default(), &p, b"original", b"new", &mut || {
                save(&p)
            })
            .unwrap_err();
            assert!(matches!(e, AtomicError::Changed { .. }), "{e:?}");
            assert_eq!(std::fs::read(&p).unwrap(), saved);
            assert_eq!(s.entries(), vec!["x.sample".to_string()]);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through_and_stays_a_link() {
        let s = Scratch::new("symlink");
        std::fs::create_dir_all(s.0.join("real")).unwrap();
        let target = s.file("real/x.sample", b"old");
        let link = s.0.join("x.sample");
        std::os::unix::fs::symlink("real/x.sample", &link).unwrap();
        let written = replace_file(&link, b"old", b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert!(written.through_link);
        assert_eq!(written.target, std::fs::canonicalize(&target).unwrap());
        let notes = written.notes("x.sample");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("x.sample is a link: wrote "),
            "{notes:?}"
        );
        // No temporary file beside the link or the target.
        assert_eq!(
            s.entries(),
            vec!["real".to_string(), "x.sample".to_string()]
        );
        assert_eq!(std::fs::read_dir(s.0.join("real")).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn other_hard_links_are_reported_and_keep_the_old_text() {
        let s = Scratch::new("hardlink");
        let p = s.file("x.sample", b"old");
        std::fs::hard_link(&p, s.0.join("twin.sample")).unwrap();
        let written = replace_file(&p, b"old", b"new").unwrap();
        assert_eq!(written.links.other_hard_links, 1);
        assert!(!written.through_link);
        assert_eq!(
            written.notes("x.sample"),
            vec![
                "warning: x.sample has 1 other hard link; the write replaces the file, so that name keeps the old text"
                    .to_string()
            ]
        );
        assert_eq!(std::fs::read(s.0.join("twin.sample")).unwrap(), b"old");
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_or_a_device_is_never_replaced() {
        let s = Scratch::new("fifo");
        let fifo = s.0.join("x.sample");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|st| st.success()) {
            // Refused before it is opened (opening a pipe with no writer would block).
            let e = replace_file(&fifo, b"", b"new").unwrap_err();
            assert!(matches!(e, AtomicError::Read { .. }), "{e:?}");
            assert!(e.to_string().contains("not a regular file"), "{e}");
            let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
            assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind));
            assert_eq!(s.entries(), vec!["x.sample".to_string()]);
        }
        let e = replace_file(Path::new("/dev/null"), b"", b"new").unwrap_err();
        assert!(matches!(e, AtomicError::Read { .. }), "{e:?}");
    }

    #[cfg(unix)]
    #[test]
    fn finds_other_hard_links_and_snapshots_sharing_a_blob() {
        let s = Scratch::new("links");
        let plain = s.file("plain.json", b"{}");
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
