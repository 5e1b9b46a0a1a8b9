//! Corpus mode: one template against many generations (evaluation logs, serving logs, dataset
//! exports), parsed on every core, with a report of what mis-parsed and why.
//!
//! A corpus is JSON Lines (one record a line: `prefix` or `messages` (+ `tools`, `kwargs`),
//! `generation` as text or token ids, optional `expected` and `id`; the keys are
//! [`FieldNames`]), folders of `.sample` files, or stdin. Records are streamed: at most a
//! batch of them is read and not yet reported, so memory depends on the batch size and the
//! largest record, never on the corpus size. Records are parsed in parallel on a [`rayon`]
//! pool and their outcomes handed over in corpus order, so reports and written failures do
//! not depend on the number of threads.
//!
//! For a viewer: [`Entries`] and [`LineReader`] give each record's line number and byte offset,
//! [`read_record_at`] reads one record again from its offset, and [`Outcome::group`] says which
//! cause a record falls under.
//!
//! Across processes or machines: [`run_records`] evaluates a worker's records (the same code
//! path, with their indices in the whole corpus) and [`Report::merge`] joins the partial
//! reports in corpus order into the report of one run (see the `partial` module);
//! [`count_range`] and [`range_entries`] let each worker read only its byte range of a JSON
//! Lines file, its lines numbered as in one run over the file (see the `range` module).

mod failures;
mod outcome;
mod partial;
mod range;
mod reader;
mod record;
mod report;

pub use failures::{Published, file_name, publish_staged, sample_text, write_failure};
pub use outcome::{Context, FieldMarks, Group, Outcome, Status, error_kind, evaluate};
pub use partial::run_records;
pub use range::{RangeCount, count_range, range_entries};
pub use reader::{Content, Entries, Entry, Input, Line, LineReader, MAX_LINE, read_record_at};
pub use record::{FieldNames, Location, Record, RecordError, parse_record};
pub use report::{ErrorGroup, FieldTally, LISTED, Report};

/// How a run goes.
#[derive(Clone, Debug)]
pub struct Options {
    /// The bound on the records read and not yet handed over (at least a few a thread), and
    /// how many records go between two progress reports.
    pub batch: usize,
    /// The first this many records are also streamed through the chunking check.
    pub chunk_sample: u64,
    /// Threads to parse on (`None`: rayon's default, every core or `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            batch: 1024,
            chunk_sample: 100,
            threads: None,
        }
    }
}

/// Parses every entry in parallel and calls `each` with every outcome in corpus order (on the
/// calling thread), and `progress` every [`Options::batch`] records and at the end with the
/// number of records done. An I/O error reading the inputs stops the run and is returned after
/// the outcomes before it were handed over (as is a failure to start the threads).
pub fn run<I>(
    entries: I,
    ctx: &Context,
    options: &Options,
    each: impl FnMut(&Outcome),
    progress: impl FnMut(u64),
) -> std::io::Result<()>
where
    I: Iterator<Item = std::io::Result<Entry>> + Send,
{
    // A pool of the run's own (rayon's default size unless told): its threads wait for records
    // while the corpus is read, which must not hold up other work on the global pool.
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = options.threads {
        pool = pool.num_threads(n.max(1));
    }
    let pool = pool
        .build()
        .map_err(|e| std::io::Error::other(format!("cannot start the threads: {e}")))?;
    run_on(&pool, entries, ctx, options, each, progress)
}

/// What the reader and the workers tell the calling thread.
enum Message {
    /// The outcomes of chunk `seq` (records in order).
    Done(u64, Vec<Outcome>),
    /// The reader read this many chunks and stopped: at the end, or at this error.
    End(u64, Option<std::io::Error>),
    /// Evaluating a record panicked (a bug): raised again on the calling thread, so that the
    /// run cannot wait for an outcome that will never come.
    Panicked(Box<dyn std::any::Any + Send>),
}

/// Records handed from thread to thread together. One at a time, the threads spend more time
/// waking each other than parsing (twice the time on one core); 16 at a time still cost 12%
/// over 64 on two cores (a wake-up across cores is dear on a virtual machine). Beyond 128 it
/// makes no measurable difference, and a chunk's records (about 270 KB of a typical corpus)
/// stay in a core's cache from reading to parsing, which the earlier whole-batch stages
/// (2 MB at once) did not: one core parses 15% faster so.
const MAX_CHUNK: usize = 128;

/// Reads up to `size` entries, numbering them from `index` on; stops early at the end or at a
/// read error, which it returns beside the entries before it.
fn read_chunk<I>(
    entries: &mut I,
    size: usize,
    index: &mut u64,
) -> (Vec<(u64, Entry)>, Option<std::io::Error>)
where
    I: Iterator<Item = std::io::Result<Entry>>,
{
    let mut records = Vec::with_capacity(size);
    while records.len() < size {
        match entries.next() {
            Some(Ok(e)) => {
                records.push((*index, e));
                *index += 1;
            }
            Some(Err(e)) => return (records, Some(e)),
            None => break,
        }
    }
    (records, None)
}

/// [`run`] on `pool`. A reader thread reads records ahead in small chunks, every thread of the
/// pool takes the next chunk as soon as it is free (no batch waits for its slowest record),
/// and the calling thread puts the outcomes back in corpus order and hands them over. The
/// reader takes a credit for each chunk and the calling thread gives one back for each chunk
/// handed over, so at most about [`Options::batch`] records (at least a chunk a thread) are
/// read and not yet handed over.
fn run_on<I>(
    pool: &rayon::ThreadPool,
    mut entries: I,
    ctx: &Context,
    options: &Options,
    mut each: impl FnMut(&Outcome),
    mut progress: impl FnMut(u64),
) -> std::io::Result<()>
where
    I: Iterator<Item = std::io::Result<Entry>> + Send,
{
    use std::sync::mpsc::{channel, sync_channel};
    let threads = pool.current_num_threads().max(1);
    let batch = options.batch.max(1);
    // A few chunks a thread within the batch, so that a slow record holds up little.
    let chunk = (batch / (4 * threads)).clamp(1, MAX_CHUNK);
    let window = (batch / chunk).max(threads);
    let every = batch as u64;
    std::thread::scope(|scope| {
        let (credits, returned) = sync_channel::<()>(window);
        type Chunk = (u64, Vec<(u64, Entry)>);
        let (work, to_do) = sync_channel::<Chunk>(threads);
        let (told, messages) = channel::<Message>();
        let reader_told = told.clone();
        scope.spawn(move || {
            let (mut seq, mut index) = (0, 0);
            let failed = loop {
                // Nobody takes the credits or the chunks any more: the run is over.
                if credits.send(()).is_err() {
                    return;
                }
                let (records, failed) = read_chunk(&mut entries, chunk, &mut index);
                let last = records.len() < chunk || failed.is_some();
                if !records.is_empty() {
                    if work.send((seq, records)).is_err() {
                        return;
                    }
                    seq += 1;
                }
                if last {
                    break failed;
                }
            };
            drop(work);
            let _ = reader_told.send(Message::End(seq, failed));
        });
        let to_do = std::sync::Mutex::new(to_do);
        scope.spawn(move || {
            pool.broadcast(|_| {
                loop {
                    let next = match to_do.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, records)) = next else { return };
                    let m = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        records
                            .into_iter()
                            .map(|(i, e)| evaluate(ctx, i, e, i < options.chunk_sample))
                            .collect()
                    }))
                    .map_or_else(Message::Panicked, |o| Message::Done(seq, o));
                    if told.send(m).is_err() {
                        return;
                    }
                }
            });
        });
        // Chunks that came early: slot k holds chunk `next + k`'s outcomes.
        let mut early: std::collections::VecDeque<Option<Vec<Outcome>>> = Default::default();
        let (mut next, mut done) = (0u64, 0u64);
        let mut end = None;
        while end.as_ref().is_none_or(|(chunks, _)| next < *chunks) {
            let Ok(m) = messages.recv() else {
                // Every thread is gone without saying why: nothing more will come.
                break;
            };
            match m {
                Message::Done(seq, outcomes) => {
                    let k = usize::try_from(seq - next).unwrap_or(usize::MAX);
                    if early.len() <= k {
                        early.resize_with(k + 1, || None);
                    }
                    early[k] = Some(outcomes);
                    while let Some(outcomes) = early.front_mut().and_then(Option::take) {
                        early.pop_front();
                        let before = done;
                        for o in &outcomes {
                            each(o);
                        }
                        done += outcomes.len() as u64;
                        next += 1;
                        // The reader may read one more chunk.
                        let _ = returned.recv();
                        if done / every > before / every {
                            progress(done);
                        }
                    }
                }
                Message::End(chunks, failed) => end = Some((chunks, failed)),
                Message::Panicked(payload) => std::panic::resume_unwind(payload),
            }
        }
        if done % every != 0 {
            progress(done);
        }
        match end {
            Some((_, Some(e))) => Err(e),
            _ => Ok(()),
        }
    })
}

/// Runs every entry (see [`run`]) and tallies the outcomes into a [`Report`] for the
/// context's template.
pub fn report<I>(entries: I, ctx: &Context, options: &Options) -> std::io::Result<Report>
where
    I: Iterator<Item = std::io::Result<Entry>> + Send,
{
    let mut report = Report::new(&ctx.template);
    run(entries, ctx, options, |o| report.add(o), |_| {})?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::py::json_loads;
    use rtbench_engine::template::load_template;
    use std::sync::atomic::{AtomicU64, Ordering};

    fn context() -> Context {
        let template = load_template(
            &json_loads(r#"{"start_anchor": "A:", "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "content": {}}}"#)
                .unwrap(),
        )
        .unwrap();
        Context::new(template, std::path::PathBuf::from("."), Some("A:".into()))
    }

    /// Entry `i`: a record whose generation is longer for some records than for others, so
    /// that records finish out of order on several threads.
    fn entry(i: u64) -> Entry {
        let reps = if i.is_multiple_of(7) { 4000 } else { 1 };
        let text = format!(
            "{{\"id\": \"r{i}\", \"generation\": \"<think>{}</think>{i}\"}}",
            "x".repeat(reps)
        );
        Entry {
            location: Location::Line {
                file: None,
                line: i + 1,
                offset: 0,
            },
            content: Content::Line(Ok(text)),
        }
    }

    /// Runs `n` entries (failing to read entry `fail_at`, if given) on `threads` in batches of
    /// `batch`: the ids handed over, the progress reported, the most entries read but not yet
    /// handed over at any time, and the run's result.
    fn run_entries(
        n: u64,
        fail_at: Option<u64>,
        threads: usize,
        batch: usize,
    ) -> (Vec<String>, Vec<u64>, u64, std::io::Result<()>) {
        let read = AtomicU64::new(0);
        let entries = (0..n).map(|i| {
            read.fetch_add(1, Ordering::SeqCst);
            if Some(i) == fail_at {
                Err(std::io::Error::other("disk gone"))
            } else {
                Ok(entry(i))
            }
        });
        let options = Options {
            batch,
            chunk_sample: 0,
            threads: Some(threads),
        };
        let (mut ids, mut progress, mut most) = (Vec::new(), Vec::new(), 0);
        let result = run(
            entries,
            &context(),
            &options,
            |o| {
                ids.push(o.id.clone().unwrap_or_default());
                most = most.max(read.load(Ordering::SeqCst) - ids.len() as u64);
            },
            |done| progress.push(done),
        );
        (ids, progress, most, result)
    }

    #[test]
    fn outcomes_come_in_corpus_order_on_any_number_of_threads() {
        let want: Vec<String> = (0..500).map(|i| format!("r{i}")).collect();
        for threads in [1, 2, 4] {
            for batch in [1, 7, 64, 1000] {
                let (ids, progress, most, result) = run_entries(500, None, threads, batch);
                result.unwrap();
                assert_eq!(ids, want, "{threads} threads, batches of {batch}");
                assert_eq!(progress.last(), Some(&500));
                assert!(progress.windows(2).all(|w| w[0] <= w[1]), "{progress:?}");
                // Records are held a bounded number of batches at a time, never the corpus.
                assert!(
                    most <= batch.max(threads) as u64 + 1,
                    "{most} records held with batches of {batch}"
                );
            }
        }
    }

    #[test]
    fn a_panic_handing_an_outcome_over_ends_the_run_instead_of_hanging_it() {
        let entries = (0..10_000).map(|i| Ok(entry(i)));
        let options = Options {
            batch: 4,
            chunk_sample: 0,
            threads: Some(2),
        };
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(
                entries,
                &context(),
                &options,
                |o| assert_ne!(o.index, 10, "the viewer's bug"),
                |_| {},
            )
        }));
        assert!(ended.is_err());
    }

    #[test]
    fn a_read_error_ends_the_run_after_the_records_before_it() {
        for threads in [1, 2] {
            let (ids, _, _, result) = run_entries(300, Some(123), threads, 16);
            assert_eq!(result.unwrap_err().to_string(), "disk gone");
            let want: Vec<String> = (0..123).map(|i| format!("r{i}")).collect();
            assert_eq!(ids, want, "{threads} threads");
        }
    }
}
