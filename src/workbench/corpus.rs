//! A corpus in the workbench (`rtbench T data.jsonl`): the samples pane lists the corpus's
//! records grouped by what happened to them (an error of a kind in a field, a difference from
//! the expected message, a silent loss, parsed cleanly), failures first and biggest first; Enter
//! opens a group, and moving onto a record reads just that record (by its byte offset) and
//! shows it like any sample.
//!
//! A scan on the runtime's corpus lane runs the corpus through the same evaluation as
//! `rtbench corpus` on every core and sends the groups in batches while it reads, so a 1 GB
//! file opens at once and its groups fill in; only each record's place (line and offset,
//! 16 bytes) is kept, never its text.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rtbench_tooling::corpus::{self, Context, Entries, Input, Location, Options};

use crate::workbench::inputs::{Inputs, Source};
use crate::workbench::runtime::{BackgroundPanic, Lane, Ticket};

/// Where a record is: which corpus file, its 1-based line, the byte offset of the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef {
    pub file: usize,
    pub line: u64,
    pub offset: u64,
}

/// Records that fared the same way.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub label: String,
    pub failure: bool,
    pub records: Vec<RecordRef>,
}

/// What the scan thread sends: the records of one stretch, with their group labels.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The scan this belongs to (a newer scan replaces an older one's results).
    pub scan: u64,
    pub records: Vec<(String, bool, RecordRef)>,
    /// Bytes read so far, of `total`.
    pub read: u64,
    pub done: bool,
    /// Why the scan stopped early (the template does not load, a file cannot be read).
    pub error: Option<String>,
}

/// The corpus as the samples pane shows it.
#[derive(Clone, Debug, Default)]
pub struct CorpusView {
    pub files: Vec<PathBuf>,
    /// The current scan; batches of older ones are dropped.
    pub scan: u64,
    pub groups: Vec<Group>,
    /// The group shown (its records listed), if any.
    pub open: Option<usize>,
    /// The selected row: a group, or a record of the open group.
    pub selected: usize,
    pub read: u64,
    pub total: u64,
    pub done: bool,
    pub error: Option<String>,
    /// The group that was open before a new scan, opened again when it reappears.
    reopen: Option<String>,
}

impl CorpusView {
    pub fn new(files: Vec<PathBuf>) -> CorpusView {
        let total = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        CorpusView {
            files,
            total,
            ..CorpusView::default()
        }
    }

    /// Starts over for a new scan (after the template changed).
    pub fn restart(&mut self, scan: u64) {
        let open = self
            .open
            .and_then(|g| self.groups.get(g))
            .map(|g| g.label.clone());
        *self = CorpusView {
            scan,
            ..CorpusView::new(std::mem::take(&mut self.files))
        };
        self.reopen = open;
    }

    /// Takes in a batch of the current scan; keeps the open group and the selection on the
    /// same labels while the groups re-sort.
    pub fn add(&mut self, batch: Batch) {
        if batch.scan != self.scan {
            return;
        }
        let open = self
            .open
            .map(|g| self.groups[g].label.clone())
            .or(self.reopen.take());
        let selected_label = match self.open {
            None => self.groups.get(self.selected).map(|g| g.label.clone()),
            Some(_) => None,
        };
        let mut index: HashMap<String, usize> = self
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.label.clone(), i))
            .collect();
        for (label, failure, r) in batch.records {
            let i = *index.entry(label.clone()).or_insert_with(|| {
                self.groups.push(Group {
                    label,
                    failure,
                    records: Vec::new(),
                });
                self.groups.len() - 1
            });
            self.groups[i].records.push(r);
        }
        // Failures first, then the biggest groups.
        self.groups.sort_by(|a, b| {
            b.failure
                .cmp(&a.failure)
                .then(b.records.len().cmp(&a.records.len()))
                .then(a.label.cmp(&b.label))
        });
        let find = |l: &str| self.groups.iter().position(|g| g.label == l);
        match open {
            Some(l) => match find(&l) {
                Some(g) => self.open = Some(g),
                None => {
                    self.open = None;
                    self.reopen = Some(l);
                }
            },
            None => {
                if let Some(g) = selected_label.and_then(|l| find(&l)) {
                    self.selected = g;
                }
            }
        }
        self.read = batch.read;
        self.done = batch.done;
        self.error = batch.error;
    }

    /// Rows in the list shown: the groups, or the open group's records.
    pub fn rows(&self) -> usize {
        match self.open {
            Some(g) => self.groups[g].records.len(),
            None => self.groups.len(),
        }
    }

    /// The record selected, as a source the worker reads.
    pub fn selected_record(&self) -> Option<Source> {
        let g = &self.groups[self.open?];
        let r = g.records.get(self.selected)?;
        Some(Source::Record {
            path: self.files.get(r.file)?.clone(),
            line: r.line,
            offset: r.offset,
        })
    }

    /// Records scanned so far.
    pub fn records(&self) -> usize {
        self.groups.iter().map(|g| g.records.len()).sum()
    }

    /// One line of progress for the pane's title.
    pub fn progress(&self) -> String {
        let records = self.records();
        match (&self.error, self.done) {
            (Some(e), _) => format!("{records} records; stopped: {e}"),
            (None, true) => format!("{records} records"),
            (None, false) => {
                let pct = (self.read * 100).checked_div(self.total).unwrap_or(0);
                format!("{records} records, reading {pct}%")
            }
        }
    }
}

/// The corpus lane: scans run on it, a newer scan replacing an older one (which stops at its
/// next record).
pub(crate) struct Scanner {
    lane: Lane<Batch>,
    inputs: Arc<Inputs>,
}

/// The corpus lane's name (its threads are `rtbench-corpus`).
pub(crate) const LANE: &str = "corpus";

impl Scanner {
    /// Starts the corpus lane over the inputs' corpus files: batches go to `send`, a panic to
    /// `panicked`.
    pub(crate) fn new(
        inputs: Arc<Inputs>,
        send: impl Fn(Batch) + Send + Sync + 'static,
        panicked: impl Fn(BackgroundPanic) + Send + Sync + 'static,
    ) -> Scanner {
        Scanner {
            // A scan reads its records on rayon's pool; one thread drives it, and one more
            // may finish reading a record while a newer scan starts.
            lane: Lane::start(LANE, 2, move |_, b| send(b), panicked),
            inputs,
        }
    }

    /// Starts scan number `scan` with the template as it is now, parsed under `reference`.
    pub(crate) fn scan(&self, scan: u64, reference: rtbench_engine::Reference) {
        let inputs = Arc::clone(&self.inputs);
        self.lane.submit(scan, move |t: &Ticket<Batch>| {
            run_scan(&inputs, reference, t);
        });
    }
}

/// How often the scan sends what it has.
const SEND_EVERY: Duration = Duration::from_millis(200);

fn run_scan(inputs: &Inputs, reference: rtbench_engine::Reference, ticket: &Ticket<Batch>) {
    let scan = ticket.seq();
    let send = |b: Batch| ticket.reply(b);
    let failed = |e: String| {
        send(Batch {
            scan,
            records: Vec::new(),
            read: 0,
            done: true,
            error: Some(e),
        });
    };
    let template = match inputs.load_template(reference) {
        Ok(t) => t.template,
        Err(d) => {
            let first = d.to_string().lines().next().unwrap_or("").to_string();
            return failed(format!("the template does not load: {first}"));
        }
    };
    let files = inputs.corpora.clone();
    let dir = inputs.model_dir().unwrap_or_else(|| PathBuf::from("."));
    let ctx = Context::new(template.clone(), dir, None);
    let entries = Entries::new(files.iter().cloned().map(Input::Jsonl).collect());
    let counter = entries.byte_counter();
    // A newer scan (or none wanted) ends this one at the next record read.
    let entries = entries.take_while(|_| ticket.is_wanted());
    let mut pending: Vec<(String, bool, RecordRef)> = Vec::new();
    let mut last = Instant::now();
    let mut listening = true;
    let options = Options {
        chunk_sample: 0,
        ..Options::default()
    };
    let each = |o: &corpus::Outcome| {
        if !listening {
            return;
        }
        if let Location::Line {
            file: Some(f),
            line,
            offset,
        } = &o.location
        {
            let group = o.group(&template);
            let failure = o.is_failure();
            let file = files.iter().position(|p| p == f).unwrap_or(0);
            pending.push((
                group.to_string(),
                failure,
                RecordRef {
                    file,
                    line: *line,
                    offset: *offset,
                },
            ));
        }
        if last.elapsed() >= SEND_EVERY {
            last = Instant::now();
            listening = send(Batch {
                scan,
                records: std::mem::take(&mut pending),
                read: counter.load(Ordering::Relaxed),
                done: false,
                error: None,
            });
        }
    };
    let result = corpus::run(entries, &ctx, &options, each, |_| {});
    send(Batch {
        scan,
        records: pending,
        read: counter.load(Ordering::Relaxed),
        done: true,
        error: result.err().map(|e| e.to_string()),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(scan: u64, records: &[(&str, bool, u64)], done: bool) -> Batch {
        Batch {
            scan,
            records: records
                .iter()
                .map(|&(l, f, line)| {
                    (
                        l.to_string(),
                        f,
                        RecordRef {
                            file: 0,
                            line,
                            offset: line * 10,
                        },
                    )
                })
                .collect(),
            read: 10,
            done,
            error: None,
        }
    }

    #[test]
    fn groups_sort_failures_first_and_keep_the_open_group_while_they_fill_in() {
        let mut v = CorpusView::new(vec![PathBuf::from("/tmp/c.jsonl")]);
        v.restart(1);
        v.add(batch(
            1,
            &[
                ("parsed", false, 1),
                ("parsed", false, 2),
                ("error", true, 3),
            ],
            false,
        ));
        let labels: Vec<&str> = v.groups.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(labels, ["error", "parsed"]);
        v.open = Some(1);
        v.selected = 1;
        assert_eq!(
            v.selected_record(),
            Some(Source::Record {
                path: PathBuf::from("/tmp/c.jsonl"),
                line: 2,
                offset: 20
            })
        );
        // More failures of a new kind arrive: "parsed" moves down and stays open.
        v.add(batch(
            1,
            &[("differs", true, 4), ("differs", true, 5)],
            true,
        ));
        let labels: Vec<&str> = v.groups.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(labels, ["differs", "error", "parsed"]);
        assert_eq!(v.open, Some(2));
        assert_eq!(v.records(), 5);
        assert_eq!(v.progress(), "5 records");
        // A batch of an older scan is dropped.
        v.add(batch(0, &[("x", true, 9)], true));
        assert_eq!(v.records(), 5);
        // A new scan starts empty and reopens "parsed" when it reappears.
        v.restart(2);
        assert!(v.groups.is_empty());
        v.add(batch(2, &[("parsed", false, 1)], false));
        assert_eq!(v.open, Some(0));
    }
}
