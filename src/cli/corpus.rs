//! `rtbench corpus`: one template against a corpus of generations (JSON Lines, folders of
//! samples, or stdin), parsed on every core, with a report: counts, per-field tallies of the
//! silent losses, errors grouped by kind and field, chunking instability over a sample of
//! records, and the slowest records. The work is in [`rtbench_tooling::corpus`]; this file reads
//! the flags, shows progress on stderr and prints the report.
//!
//! Exit codes follow the rule of the command line: 0 when every record parses as expected
//! (a record without an expected message passes when it parses); 1 when a record fails (a
//! line that is not a record, an error no expectation allowed, a difference from the expected
//! message), or the template is invalid; 2 for usage and I/O errors (a missing input, a
//! failure that cannot be written).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use clap::Args;

use crate::cli::{Failure, inputs, output};
use rtbench_engine::value::Value;
use rtbench_tooling::corpus::{self, Context, Entries, FieldNames, Input, Options, Report};
use rtbench_tooling::sample::expand;

/// The flags of `rtbench corpus`.
#[derive(Args, Debug)]
pub(crate) struct CorpusArgs {
    /// Response template JSON, a tokenizer_config.json with a `response_template` key, or a
    /// folder holding template.json (else tokenizer_config.json); its folder's chat template
    /// and tokenizer turn records' messages and token ids into text.
    #[arg(long, value_name = "T")]
    pub template: PathBuf,
    /// JSON Lines files (one record a line), folders of .sample files (searched recursively),
    /// or `-` for JSON Lines on stdin.
    #[arg(value_name = "DATA", required = true)]
    pub data: Vec<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Write every failing record into DIR as a .sample file (never over an existing file).
    #[arg(long, value_name = "DIR")]
    pub write_failures: Option<PathBuf>,
    /// Stream this many records (the first ones) through the chunking check.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub chunk_sample: u64,
    /// Parse on N threads (default: every core; also RAYON_NUM_THREADS).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub jobs: Option<u64>,
    /// Records read ahead at most; memory grows with it, not with the corpus.
    #[arg(long, value_name = "N", default_value_t = 1024,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub batch: u64,
    /// The prefix of records with neither a prefix nor messages (`''` opts out).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub prefix: Option<String>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// The record key of its id.
    #[arg(long, value_name = "KEY", default_value = "id")]
    pub id_field: String,
    /// The record key of the prompt text (or token ids).
    #[arg(long, value_name = "KEY", default_value = "prefix")]
    pub prefix_field: String,
    /// The record key of the conversation rendered into the prefix.
    #[arg(long, value_name = "KEY", default_value = "messages")]
    pub messages_field: String,
    /// The record key of the tool schemas.
    #[arg(long, value_name = "KEY", default_value = "tools")]
    pub tools_field: String,
    /// The record key of the chat template's keyword arguments.
    #[arg(long, value_name = "KEY", default_value = "kwargs")]
    pub kwargs_field: String,
    /// The record key of the generated text (or token ids).
    #[arg(long, value_name = "KEY", default_value = "generation")]
    pub generation_field: String,
    /// The record key of the expected message (or `{"$error": ...}`).
    #[arg(long, value_name = "KEY", default_value = "expected")]
    pub expected_field: String,
}

impl CorpusArgs {
    fn names(&self) -> FieldNames {
        FieldNames {
            id: self.id_field.clone(),
            prefix: self.prefix_field.clone(),
            messages: self.messages_field.clone(),
            tools: self.tools_field.clone(),
            kwargs: self.kwargs_field.clone(),
            generation: self.generation_field.clone(),
            expected: self.expected_field.clone(),
        }
    }
}

/// Sample files under a folder and its sub-folders, sorted (links to folders not followed).
fn collect_samples(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Failure> {
    let io = |e: std::io::Error| Failure::usage(format!("cannot read {}: {e}", dir.display()));
    out.extend(expand(dir).map_err(io)?);
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for d in subdirs {
        collect_samples(&d, out)?;
    }
    Ok(())
}

/// The inputs and the total bytes of their JSON Lines files (for the progress bar; `None`
/// when stdin is one of them).
fn inputs_of(data: &[PathBuf]) -> Result<(Vec<Input>, Option<u64>), Failure> {
    let mut out = Vec::new();
    let mut total = Some(0u64);
    for p in data {
        if p.as_os_str() == "-" {
            out.push(Input::Stdin);
            total = None;
        } else if p.is_dir() {
            let mut files = Vec::new();
            collect_samples(p, &mut files)?;
            if files.is_empty() {
                return Err(Failure::usage(format!(
                    "{}: no sample files found (.sample or .txt)",
                    p.display()
                )));
            }
            out.push(Input::Samples(files));
        } else {
            let meta = std::fs::metadata(p)
                .map_err(|e| Failure::usage(format!("cannot read {}: {e}", p.display())))?;
            total = total.map(|t| t + meta.len());
            out.push(Input::Jsonl(p.clone()));
        }
    }
    Ok((out, total))
}

/// Progress on stderr: a bar on a terminal, a plain line every few seconds otherwise.
enum Progress {
    Off,
    Bar(indicatif::ProgressBar),
    Lines { last: Instant, total: Option<u64> },
}

impl Progress {
    fn new(quiet: bool, total: Option<u64>) -> Progress {
        if quiet {
            return Progress::Off;
        }
        if std::io::stderr().is_terminal() {
            let bar = match total {
                Some(t) => indicatif::ProgressBar::new(t),
                None => indicatif::ProgressBar::new_spinner(),
            };
            let style = match total {
                Some(_) => "{wide_bar} {bytes}/{total_bytes} {msg} ({eta})",
                None => "{spinner} {bytes} {msg}",
            };
            if let Ok(s) = indicatif::ProgressStyle::with_template(style) {
                bar.set_style(s);
            }
            bar.enable_steady_tick(Duration::from_millis(200));
            Progress::Bar(bar)
        } else {
            Progress::Lines {
                last: Instant::now(),
                total,
            }
        }
    }

    fn update(&mut self, records: u64, bytes: u64) {
        match self {
            Progress::Off => {}
            Progress::Bar(bar) => {
                bar.set_position(bytes);
                bar.set_message(format!("{records} records"));
            }
            Progress::Lines { last, total } => {
                if last.elapsed() < Duration::from_secs(2) {
                    return;
                }
                *last = Instant::now();
                match total {
                    Some(t) if *t > 0 => note!(
                        "corpus: {records} records, {:.0}% of the input",
                        100.0 * bytes as f64 / *t as f64
                    ),
                    _ => note!("corpus: {records} records"),
                }
            }
        }
    }

    fn finish(&self, records: u64, elapsed: Duration) {
        match self {
            Progress::Off => {}
            Progress::Bar(bar) => bar.finish_and_clear(),
            Progress::Lines { .. } => note!(
                "corpus: {records} records in {:.2} s",
                elapsed.as_secs_f64()
            ),
        }
    }
}

/// Writes failing records into the folder, counting what could not be written.
struct FailureWriter {
    dir: PathBuf,
    written: u64,
    problems: Vec<String>,
    unwritten: u64,
}

impl FailureWriter {
    fn write(&mut self, o: &corpus::Outcome) {
        if o.sample.is_none() {
            // A line that is not a record has no sample to write; the report lists it.
            return;
        }
        match corpus::write_failure(&self.dir, o) {
            Ok(_) => self.written += 1,
            Err(e) => {
                self.unwritten += 1;
                if self.problems.len() < 5 {
                    self.problems.push(e.to_string());
                }
            }
        }
    }
}

/// `rtbench corpus`.
pub(super) fn run(args: &CorpusArgs) -> Result<(), Failure> {
    let (template, _) = inputs::template(&args.template)?;
    let template_file = inputs::template_path(&args.template)?;
    let model_dir = rtbench_tooling::inputs::model_dir(&template_file);
    let (inputs, total) = inputs_of(&args.data)?;
    let mut writer = match &args.write_failures {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::usage(format!("cannot create {}: {e}", dir.display())))?;
            Some(FailureWriter {
                dir: dir.clone(),
                written: 0,
                problems: Vec::new(),
                unwritten: 0,
            })
        }
        None => None,
    };
    let mut ctx = Context::new(template.clone(), model_dir, args.prefix.clone());
    ctx.names = args.names();
    let options = Options {
        batch: usize::try_from(args.batch).unwrap_or(usize::MAX),
        chunk_sample: args.chunk_sample,
        threads: args.jobs.and_then(|n| usize::try_from(n).ok()),
    };
    let entries = Entries::new(inputs);
    let bytes = entries.byte_counter();
    let mut progress = Progress::new(args.quiet, total);
    let mut report = Report::new(&template);
    let started = Instant::now();
    let result = corpus::run(
        entries,
        &ctx,
        &options,
        |o| {
            report.add(o);
            if let Some(w) = writer.as_mut()
                && o.is_failure()
            {
                w.write(o);
            }
        },
        |done| progress.update(done, bytes.load(Ordering::Relaxed)),
    );
    let elapsed = started.elapsed();
    progress.finish(report.records, elapsed);
    result.map_err(|e| Failure::usage(e.to_string()))?;
    if args.json {
        let mut value = report.to_value();
        if let Value::Dict(d) = &mut value {
            d.insert("seconds", Value::Float(elapsed.as_secs_f64()));
            if let Some(w) = &writer {
                d.insert(
                    "written",
                    Value::Int(i64::try_from(w.written).unwrap_or(i64::MAX)),
                );
            }
        }
        output::print_line(&output::json(&value, false)?)?;
    } else {
        let mut text = report.summary();
        text.push_str(&format!(
            "\n\n{} records in {:.2} s ({:.0} records/s)",
            report.records,
            elapsed.as_secs_f64(),
            report.records as f64 / elapsed.as_secs_f64().max(1e-9)
        ));
        if let Some(w) = &writer {
            text.push_str(&format!(
                "\n{} failing records written to {}",
                w.written,
                w.dir.display()
            ));
        }
        output::print_line(&text)?;
    }
    if let Some(w) = &writer
        && w.unwritten > 0
    {
        return Err(Failure::usage(format!(
            "{} failing records not written (an existing file is never replaced):\n  {}",
            w.unwritten,
            w.problems.join("\n  ")
        )));
    }
    if report.failures > 0 {
        return Err(Failure::invalid(format!(
            "{} of {} records failed",
            report.failures, report.records
        )));
    }
    Ok(())
}
