//! Corpus mode: one template against many generations (evaluation logs, serving logs, dataset
//! exports), parsed on every core, with a report of what mis-parsed and why.
//!
//! A corpus is JSON Lines (one record a line: `prefix` or `messages` (+ `tools`, `kwargs`),
//! `generation` as text or token ids, optional `expected` and `id`; the keys are
//! [`FieldNames`]), folders of `.sample` files, or stdin. Records are streamed in bounded
//! batches: memory depends on the batch size and the largest record, never on the corpus size.
//! Each batch is parsed in parallel ([`rayon`]) and its outcomes are then handed over in corpus
//! order, so reports and written failures do not depend on the number of threads.
//!
//! For a viewer: [`Entries`] and [`LineReader`] give each record's line number and byte offset,
//! [`read_record_at`] reads one record again from its offset, and [`Outcome::group`] says which
//! cause a record falls under.

mod failures;
mod outcome;
mod reader;
mod record;
mod report;

pub use failures::{file_name, sample_text, write_failure};
pub use outcome::{Context, FieldMarks, Group, Outcome, Status, error_kind, evaluate};
pub use reader::{Content, Entries, Entry, Input, Line, LineReader, MAX_LINE, read_record_at};
pub use record::{FieldNames, Location, Record, RecordError, parse_record};
pub use report::{ErrorGroup, FieldTally, LISTED, Report};

use rayon::prelude::*;

/// How a run goes.
#[derive(Clone, Debug)]
pub struct Options {
    /// Records parsed together (in parallel) before their outcomes are handed over: the bound
    /// on the records held at once.
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

/// Parses every entry, batch by batch, in parallel (the next batch is read meanwhile), and calls `each` with every outcome in
/// corpus order (on the calling thread), then `progress` after each batch with the number of
/// records done. An I/O error reading the inputs stops the run and is returned after the
/// outcomes before it were handed over (as is a failure to start the threads).
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
    let pool = match options.threads {
        None => None,
        Some(n) => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| std::io::Error::other(format!("cannot start the threads: {e}")))?,
        ),
    };
    run_on(pool.as_ref(), entries, ctx, options, each, progress)
}

/// Evaluates one batch in parallel, keeping its order.
fn evaluate_batch(batch: Vec<(u64, Entry)>, ctx: &Context, options: &Options) -> Vec<Outcome> {
    batch
        .into_par_iter()
        // One record a task: records differ in size by orders of magnitude.
        .with_max_len(1)
        .map(|(i, e)| evaluate(ctx, i, e, i < options.chunk_sample))
        .collect()
}

/// One batch read ahead: its entries, the index after it, and the read error that ended it.
type Batch = (Vec<(u64, Entry)>, u64, Option<std::io::Error>);

/// Reads the next batch: up to `size` entries, stopping early at a read error.
fn read_batch<I>(entries: &mut I, size: usize, index: &mut u64) -> Batch
where
    I: Iterator<Item = std::io::Result<Entry>>,
{
    let mut batch = Vec::with_capacity(size);
    let mut failed = None;
    while batch.len() < size {
        match entries.next() {
            Some(Ok(e)) => {
                batch.push((*index, e));
                *index += 1;
            }
            Some(Err(e)) => {
                failed = Some(e);
                break;
            }
            None => break,
        }
    }
    (batch, *index, failed)
}

/// [`run`] on `pool` (`None`: the global rayon pool). A reader thread reads the next batch and
/// an evaluating thread has the workers parse the current one while the calling thread takes
/// the outcomes of the one before (the workers never wait for the report).
fn run_on<I>(
    pool: Option<&rayon::ThreadPool>,
    mut entries: I,
    ctx: &Context,
    options: &Options,
    mut each: impl FnMut(&Outcome),
    mut progress: impl FnMut(u64),
) -> std::io::Result<()>
where
    I: Iterator<Item = std::io::Result<Entry>> + Send,
{
    let batch_size = options.batch.max(1);
    std::thread::scope(|scope| {
        // Three stages at once: reading the next batch, parsing this one on the pool, and
        // handing the last one's outcomes over here. A stage waits only when the next one is a
        // batch behind, so at most five batches are held (one at each stage and one waiting
        // between each two).
        let (send, batches) = std::sync::mpsc::sync_channel::<Batch>(1);
        scope.spawn(move || {
            let mut index = 0;
            loop {
                let batch = read_batch(&mut entries, batch_size, &mut index);
                let last = batch.0.len() < batch_size || batch.2.is_some();
                if send.send(batch).is_err() || last {
                    return;
                }
            }
        });
        type Evaluated = (Vec<Outcome>, u64, Option<std::io::Error>);
        let (done, evaluated) = std::sync::mpsc::sync_channel::<Evaluated>(1);
        scope.spawn(move || {
            for (batch, index, failed) in batches {
                let outcomes = match pool {
                    Some(p) => p.install(|| evaluate_batch(batch, ctx, options)),
                    None => evaluate_batch(batch, ctx, options),
                };
                if done.send((outcomes, index, failed)).is_err() {
                    return;
                }
            }
        });
        for (outcomes, index, failed) in evaluated {
            for o in &outcomes {
                each(o);
            }
            progress(index);
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(())
    })
}

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
                    most <= 5 * batch as u64 + 2,
                    "{most} records held with batches of {batch}"
                );
            }
        }
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
