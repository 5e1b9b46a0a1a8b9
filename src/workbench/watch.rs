//! Live refresh: watches the folders holding the template and the samples (a watch on a file
//! itself is lost when an editor saves by writing a temporary file and renaming it over the
//! original), debounces bursts of events, and reports only changes that concern our files.

use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

/// How long a burst of file events is gathered before one refresh.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// What the watcher tells the workbench.
#[derive(Clone, Debug, PartialEq)]
pub enum WatchEvent {
    /// One of our files (or a sample folder's content) changed.
    Changed,
    /// Watching failed: live refresh is off.
    Failed(String),
}

/// Which paths matter: files by their full path, folders by any sample file in them.
#[derive(Clone, Debug, Default)]
pub struct Filter {
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
    /// A filter for these files and sample folders.
    pub fn new(paths: &[PathBuf]) -> Filter {
        let mut f = Filter::default();
        for p in paths {
            if p.is_dir() {
                f.folders
                    .push(p.canonicalize().unwrap_or_else(|_| p.to_path_buf()));
            } else {
                f.files.push(absolute(p));
            }
        }
        f
    }

    /// The folders to watch.
    pub fn folders(&self) -> Vec<PathBuf> {
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
    pub fn matters(&self, path: &Path) -> bool {
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

/// A running watcher; dropping it stops watching.
pub struct Watcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
}

/// Starts watching `paths` (files and sample folders); `send` receives the events.
pub fn start<F>(paths: &[PathBuf], send: F) -> Result<Watcher, String>
where
    F: Fn(WatchEvent) + Send + 'static,
{
    let filter = Filter::new(paths);
    let folders = filter.folders();
    let mut debouncer =
        new_debouncer(
            DEBOUNCE,
            None,
            move |result: DebounceEventResult| match result {
                Ok(events) => {
                    // Reading a file is an event too (open, close): only changes count, or
                    // every parse would trigger the next one.
                    if events.iter().any(|e| {
                        !matches!(e.event.kind, EventKind::Access(_))
                            && e.event.paths.iter().any(|p| filter.matters(p))
                    }) {
                        send(WatchEvent::Changed);
                    }
                }
                Err(errors) => {
                    let msg = errors
                        .first()
                        .map_or_else(|| "unknown error".to_string(), |e| e.to_string());
                    send(WatchEvent::Failed(msg));
                }
            },
        )
        .map_err(|e| format!("cannot watch files: {e}"))?;
    for dir in &folders {
        debouncer
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    }
    Ok(Watcher {
        _debouncer: debouncer,
    })
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
}
