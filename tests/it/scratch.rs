//! What the modules that run `rtbench` on files share: a scratch folder removed afterwards,
//! `rtbench` run in a folder, and a finished command's exit code and output as text.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A scratch folder of its own (the tests of this binary run in parallel), removed when
/// dropped.
pub(crate) struct Scratch(pub(crate) PathBuf);

impl Scratch {
    /// An empty folder named after `name`.
    pub(crate) fn new(name: &str) -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rtbench-it-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// A folder holding `files` (name, text).
    pub(crate) fn with_files(name: &str, files: &[(&str, &str)]) -> Scratch {
        let s = Scratch::new(name);
        for (file, text) in files {
            s.file(file, text);
        }
        s
    }

    /// Writes `name` (its folders made) and gives its path as a string.
    pub(crate) fn file(&self, name: &str, bytes: impl AsRef<[u8]>) -> String {
        let p = self.0.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        p.to_string_lossy().into_owned()
    }

    /// The path of `name` in the folder, as a string.
    pub(crate) fn path(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }

    /// The text of `name` in the folder.
    pub(crate) fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.0.join(name)).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `rtbench` with `args` in the folder `dir`, as a user without a configuration file or
/// `RTBENCH_REFERENCE` runs it.
pub(crate) fn rtbench_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .current_dir(dir)
        .env_remove("RTBENCH_REFERENCE")
        .env("RTBENCH_CONFIG", dir.join("no-config.toml"))
        .output()
        .expect("rtbench runs")
}

/// The exit code (-1 when killed by a signal).
pub(crate) fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

/// Standard output as text.
pub(crate) fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub(crate) fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
