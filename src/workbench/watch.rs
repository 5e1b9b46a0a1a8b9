//! Live refresh: watches the folders holding the template and the samples (a watch on a file
//! itself is lost when an editor saves by writing a temporary file and renaming it over the
//! original), debounces bursts of events, and reports only changes that concern our files.
//!
//! A watch follows a folder's inode, not its name: after `mv proj proj.old; mkdir proj` it
//! would report edits in `proj.old` and never those in the new `proj`. A keeper thread therefore
//! checks every [`RECHECK`] (and when asked, [`Watcher::recheck`]) that each watched name still
//! is the folder being watched, and that each linked file still points where it did; when one
//! changed it watches the new folder and reports a change, and when one is gone it says so
//! (live refresh is off for it) until it comes back. A template or sample that is a symbolic
//! link is watched at both ends: edits to the file it points to count too.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

/// How long a burst of file events is gathered before one refresh.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(50);

/// How often the keeper checks that the watched folders are still the ones named.
pub(crate) const RECHECK: Duration = Duration::from_secs(1);

/// What the watcher tells the workbench.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEvent {
    /// One of our files (or a sample folder's content) changed.
    Changed,
    /// Watching failed: live refresh is off.
    Failed(String),
    /// Watched folders are gone (named): their changes are not seen until they come back.
    Lost(String),
    /// Everything is watched again after a loss or a replaced folder (what happened).
    Restored(String),
}

/// Which paths matter: files by their full path (and the files their links point to), folders
/// by any sample file in them.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Filter {
    files: Vec<PathBuf>,
    folders: Vec<PathBuf>,
}

fn absolute(p: &Path) -> PathBuf {
    // Canonicalize the folder (it exists), then add the file name (which may not, mid-save).
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
    let dir = parent.unwrap_or(Path::new("."));
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    match p.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    }
}

impl Filter {
    /// A filter for these files and sample folders, as they resolve now.
    pub(crate) fn new(paths: &[PathBuf]) -> Filter {
        let mut f = Filter::default();
        for p in paths {
            if p.is_dir() {
                f.folders
                    .push(p.canonicalize().unwrap_or_else(|_| p.to_path_buf()));
            } else {
                let named = absolute(p);
                // A link: the file it points to matters as much as the link.
                if let Ok(target) = p.canonicalize()
                    && target != named
                {
                    f.files.push(target);
                }
                f.files.push(named);
            }
        }
        f
    }

    /// The folders to watch.
    pub(crate) fn folders(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .chain(self.folders.iter().cloned())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Whether a change at `path` concerns us.
    pub(crate) fn matters(&self, path: &Path) -> bool {
        if self.files.iter().any(|f| f == path) {
            return true;
        }
        let is_sample = path
            .extension()
            .is_some_and(|e| e == rtbench_tooling::sample::EXTENSION || e == "txt");
        (is_sample
            && path
                .parent()
                .is_some_and(|d| self.folders.iter().any(|f| f == d)))
            || self.folders.iter().any(|f| f == path)
    }
}

/// Which folder a path names now (device and inode), `None` when it is gone.
fn identity(dir: &Path) -> Option<(u64, u64)> {
    let m = std::fs::metadata(dir).ok()?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        Some((0, 0))
    }
}

type Debounced = Debouncer<notify::RecommendedWatcher, RecommendedCache>;

/// The watches in place: each folder with the identity it had when watched.
struct Watches {
    paths: Vec<PathBuf>,
    filter: Arc<RwLock<Filter>>,
    watched: Vec<(PathBuf, Option<(u64, u64)>)>,
    lost: Vec<PathBuf>,
}

impl Watches {
    /// Brings the watches in line with what the names resolve to now; returns the events to
    /// report.
    fn refresh(&mut self, debouncer: &mut Debounced) -> Vec<WatchEvent> {
        let filter = Filter::new(&self.paths);
        let wanted: Vec<(PathBuf, Option<(u64, u64)>)> = filter
            .folders()
            .into_iter()
            .map(|d| {
                let id = identity(&d);
                (d, id)
            })
            .collect();
        if wanted == self.watched
            && *self.filter.read().unwrap_or_else(|e| e.into_inner()) == filter
        {
            return Vec::new();
        }
        let mut replaced = Vec::new();
        for (dir, id) in &self.watched {
            if !wanted.contains(&(dir.clone(), *id)) {
                let _ = debouncer.unwatch(dir);
                if id.is_some() && wanted.iter().any(|(d, i)| d == dir && i.is_some()) {
                    replaced.push(dir.display().to_string());
                }
            }
        }
        let mut lost = Vec::new();
        for (dir, id) in &wanted {
            if self.watched.contains(&(dir.clone(), *id)) {
                continue;
            }
            if id.is_none() || debouncer.watch(dir, RecursiveMode::NonRecursive).is_err() {
                lost.push(dir.clone());
            }
        }
        // A folder that could not be watched is tried again at the next check.
        self.watched = wanted
            .into_iter()
            .filter(|(d, _)| !lost.contains(d))
            .collect();
        *self.filter.write().unwrap_or_else(|e| e.into_inner()) = filter;
        let mut events = vec![WatchEvent::Changed];
        if !lost.is_empty() {
            if lost != self.lost {
                let names: Vec<String> = lost.iter().map(|d| d.display().to_string()).collect();
                events.push(WatchEvent::Lost(format!("{} gone", names.join(", "))));
            }
        } else if !self.lost.is_empty() {
            events.push(WatchEvent::Restored("watching again".into()));
        } else if !replaced.is_empty() {
            events.push(WatchEvent::Restored(format!(
                "{} was replaced: watching the new one",
                replaced.join(", ")
            )));
        }
        self.lost = lost;
        events
    }
}

/// A running watcher; dropping it stops watching.
pub struct Watcher {
    kick: mpsc::Sender<()>,
}

impl Watcher {
    /// Checks the watched folders now (the refresh key does this) instead of at the next tick.
    pub fn recheck(&self) {
        let _ = self.kick.send(());
    }
}

/// Starts watching `paths` (files and sample folders); `send` receives the events.
pub fn start<F>(paths: &[PathBuf], send: F) -> Result<Watcher, String>
where
    F: Fn(WatchEvent) + Send + Sync + 'static,
{
    // Names as given, made absolute now: they are resolved again at every check.
    let paths: Vec<PathBuf> = paths
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let filter = Filter::new(&paths);
    let folders = filter.folders();
    let shared = Arc::new(RwLock::new(filter));
    let send = Arc::new(send);
    let (events_filter, events_send) = (Arc::clone(&shared), Arc::clone(&send));
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        match result {
            Ok(events) => {
                let filter = events_filter.read().unwrap_or_else(|e| e.into_inner());
                // Reading a file is an event too (open, close): only changes count, or every
                // parse would trigger the next one.
                if events.iter().any(|e| {
                    !matches!(e.event.kind, EventKind::Access(_))
                        && e.event.paths.iter().any(|p| filter.matters(p))
                }) {
                    events_send(WatchEvent::Changed);
                }
            }
            Err(errors) => {
                let msg = errors
                    .first()
                    .map_or_else(|| "unknown error".to_string(), |e| e.to_string());
                events_send(WatchEvent::Failed(msg));
            }
        }
    })
    .map_err(|e| format!("cannot watch files: {e}"))?;
    let mut watched = Vec::new();
    for dir in &folders {
        let id = identity(dir);
        debouncer
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
        watched.push((dir.clone(), id));
    }
    let mut watches = Watches {
        paths,
        filter: shared,
        watched,
        lost: Vec::new(),
    };
    let (kick, kicks) = mpsc::channel();
    std::thread::Builder::new()
        .name("rtbench-watch".into())
        .spawn(move || {
            // Ends (dropping the watches) when the Watcher is dropped.
            while let Ok(()) | Err(mpsc::RecvTimeoutError::Timeout) = kicks.recv_timeout(RECHECK) {
                for e in watches.refresh(&mut debouncer) {
                    send(e);
                }
            }
        })
        .map_err(|e| format!("cannot watch files: {e}"))?;
    Ok(Watcher { kick })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_keeps_our_files_and_sample_folders() {
        let dir = std::env::temp_dir().join(format!("rtbench-watch-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("s")).unwrap();
        let t = dir.join("template.json");
        std::fs::write(&t, "{}").unwrap();
        let f = Filter::new(&[t.clone(), dir.join("s")]);
        let canon = dir.canonicalize().unwrap();
        assert!(f.matters(&canon.join("template.json")));
        assert!(!f.matters(&canon.join("template.json.swp")));
        assert!(f.matters(&canon.join("s").join("new.sample")));
        assert!(!f.matters(&canon.join("s").join("notes.md")));
        assert_eq!(f.folders().len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn watching_a_missing_folder_fails_with_a_message() {
        let e = start(&[PathBuf::from("/no/such/folder/template.json")], |_| {})
            .err()
            .expect("an error");
        assert!(e.contains("/no/such/folder"), "{e}");
    }

    /// A scratch folder with a channel-fed watcher on `paths` (relative to it).
    fn watching(
        name: &str,
        setup: impl FnOnce(&Path),
        paths: &[&str],
    ) -> (PathBuf, Watcher, mpsc::Receiver<WatchEvent>) {
        let dir = std::env::temp_dir().join(format!("rtbench-watch-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        setup(&dir);
        let (tx, rx) = mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let paths: Vec<PathBuf> = paths.iter().map(|p| dir.join(p)).collect();
        let w = start(&paths, move |e| {
            let _ = tx.lock().unwrap().send(e);
        })
        .unwrap();
        (dir, w, rx)
    }

    /// Waits (at most 10 s) for an event `want` accepts; the events seen before it are dropped.
    fn wait_for(rx: &mpsc::Receiver<WatchEvent>, want: impl Fn(&WatchEvent) -> bool) -> WatchEvent {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(e) if want(&e) => return e,
                Ok(_) => {}
                Err(e) => panic!("no such event: {e}"),
            }
        }
    }

    fn drain(rx: &mpsc::Receiver<WatchEvent>) {
        std::thread::sleep(DEBOUNCE * 4);
        while rx.try_recv().is_ok() {}
    }

    #[test]
    fn a_replaced_folder_is_watched_again() {
        let (dir, w, rx) = watching(
            "replaced",
            |d| {
                std::fs::create_dir_all(d.join("proj")).unwrap();
                std::fs::write(d.join("proj/template.json"), "{}").unwrap();
            },
            &["proj/template.json"],
        );
        std::fs::write(dir.join("proj/template.json"), "{ }").unwrap();
        wait_for(&rx, |e| *e == WatchEvent::Changed);

        std::fs::rename(dir.join("proj"), dir.join("proj.old")).unwrap();
        std::fs::create_dir_all(dir.join("proj")).unwrap();
        std::fs::write(dir.join("proj/template.json"), "{}").unwrap();
        w.recheck();
        let back = wait_for(&rx, |e| matches!(e, WatchEvent::Restored(_)));
        assert!(
            matches!(&back, WatchEvent::Restored(m) if m.contains("proj was replaced") || m == "watching again"),
            "{back:?}"
        );
        drain(&rx);
        // Edits in the new folder are seen.
        std::fs::write(dir.join("proj/template.json"), "{\"version\": 1}").unwrap();
        wait_for(&rx, |e| *e == WatchEvent::Changed);
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_that_goes_away_is_reported_until_it_is_back() {
        let (dir, w, rx) = watching(
            "gone",
            |d| {
                std::fs::create_dir_all(d.join("proj")).unwrap();
                std::fs::write(d.join("proj/a.sample"), "x").unwrap();
            },
            &["proj/a.sample"],
        );
        std::fs::remove_dir_all(dir.join("proj")).unwrap();
        w.recheck();
        let lost = wait_for(&rx, |e| matches!(e, WatchEvent::Lost(_)));
        assert!(
            matches!(&lost, WatchEvent::Lost(m) if m.ends_with("proj gone")),
            "{lost:?}"
        );
        std::fs::create_dir_all(dir.join("proj")).unwrap();
        std::fs::write(dir.join("proj/a.sample"), "y").unwrap();
        w.recheck();
        assert_eq!(
            wait_for(&rx, |e| matches!(e, WatchEvent::Restored(_))),
            WatchEvent::Restored("watching again".into())
        );
        drain(&rx);
        std::fs::write(dir.join("proj/a.sample"), "z").unwrap();
        wait_for(&rx, |e| *e == WatchEvent::Changed);
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn edits_to_the_file_a_linked_template_points_to_are_seen() {
        let (dir, w, rx) = watching(
            "link",
            |d| {
                std::fs::create_dir_all(d.join("real")).unwrap();
                std::fs::create_dir_all(d.join("proj")).unwrap();
                std::fs::write(d.join("real/t.json"), "{}").unwrap();
                std::os::unix::fs::symlink("../real/t.json", d.join("proj/template.json")).unwrap();
            },
            &["proj/template.json"],
        );
        drain(&rx);
        std::fs::write(dir.join("real/t.json"), "{ }").unwrap();
        wait_for(&rx, |e| *e == WatchEvent::Changed);
        drop(w);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
