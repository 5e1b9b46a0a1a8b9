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
        // batch behind, so at most about three batches are held.
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
