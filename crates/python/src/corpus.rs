//! Corpus runs from Python, for a worker of a distributed run: the records of a shard go
//! through the code path of `rtbench corpus` ([`rtbench_tooling::corpus::run_records`]), and
//! the partial reports merge, in corpus order, into the report one `rtbench corpus` run gives
//! (`rtbench.corpus` in Python wraps these).
//!
//! * `CorpusContext(template, reference, prefix, names)`: the template as `--template` takes it
//!   (a file, a `tokenizer_config.json` or a model folder, whose chat template and tokenizer
//!   turn conversations and token ids into text) and the record keys.
//! * `CorpusContext.run(records, chunk_sample, write_failures, outcomes)`: each record is its
//!   index in the whole corpus, its file (`None` for stdin), line number, byte offset and line
//!   text; returns the partial report and, if asked, one dict per record (its outcome).
//! * `CorpusContext.run_block(records, ...)`: `run` for a worker of a distributed run, which
//!   also returns how many failing records were written and why others could not be.
//! * `CorpusContext.run_range(path, label, start, end, first_line, first_index, ...)`: the
//!   records of a byte range of a JSON Lines file, read by the worker itself; with
//!   `count_jsonl_range(path, start, end, label)`, which counts a range's lines and records so that
//!   each range's are numbered as in one run over the file.
//! * `PartialReport`: `merge(later)`, `to_dict()` (the `--json` report's object), `summary()`
//!   (the text report), and pickling (it crosses processes).

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use rtbench_engine::py::{DumpOptions, json_dumps, json_loads};
use rtbench_tooling::corpus::{
    Content, Context, Entry, FieldNames, Location, Outcome, Report, Status, count_range,
    error_kind, range_entries, run_records, write_failure,
};
use rtbench_tooling::inputs::{Pipes, load_template_file, model_dir, template_file};

use crate::convert::to_py;
use crate::parse::reference_of;

/// What a corpus run of one template needs.
#[pyclass(module = "rtbench._native", frozen)]
pub(crate) struct CorpusContext {
    ctx: Context,
}

#[pymethods]
impl CorpusContext {
    /// Loads the template (`--template`); `names` maps record keys (`id`, `prefix`,
    /// `messages`, `tools`, `kwargs`, `generation`, `expected`) to the corpus's own.
    #[new]
    #[pyo3(signature = (template, reference="5.25", prefix=None, names=None))]
    fn new(
        template: PathBuf,
        reference: &str,
        prefix: Option<String>,
        names: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<CorpusContext> {
        let reference = reference_of(reference)?;
        let file = template_file(&template).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let (loaded, _) = load_template_file(&file, Pipes::Read).map_err(|e| match e {
            rtbench_tooling::inputs::TemplateError::Read(e) => PyOSError::new_err(e.to_string()),
            rtbench_tooling::inputs::TemplateError::Invalid(d) => {
                PyValueError::new_err(d.to_string())
            }
        })?;
        let mut ctx = Context::new(loaded.with_reference(reference), model_dir(&file), prefix);
        if let Some(names) = names {
            ctx.names = field_names(names)?;
        }
        Ok(CorpusContext { ctx })
    }

    /// Runs `records` (`(index, file, line, offset, text)` each, in corpus order); writes the
    /// failing ones into `write_failures` as `rtbench corpus --write-failures` does. Returns
    /// `(report, outcomes)`, `outcomes` a list of dicts when asked for, else `None`.
    #[pyo3(signature = (records, chunk_sample=100, write_failures=None, outcomes=false))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        records: Vec<(u64, Option<PathBuf>, u64, u64, String)>,
        chunk_sample: u64,
        write_failures: Option<PathBuf>,
        outcomes: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let entries = line_entries(records);
        let run = py.detach(|| self.run_entries(entries, chunk_sample, write_failures, outcomes));
        let run = run.map_err(|e| PyOSError::new_err(e.to_string()))?;
        if !run.problems.is_empty() {
            return Err(PyOSError::new_err(unwritten(&run.problems)));
        }
        let listed = run.listed(py, outcomes)?;
        (PartialReport { report: run.report }, listed).into_pyobject(py)
    }

    /// `run` for a worker of a distributed run: returns `(report, outcomes, written,
    /// problems)` as `run_range` does, a failing record that cannot be written being one of
    /// the problems instead of an error (the run goes on, as `rtbench corpus` does).
    #[pyo3(signature = (records, chunk_sample=100, write_failures=None, outcomes=false))]
    fn run_block<'py>(
        &self,
        py: Python<'py>,
        records: Vec<(u64, Option<PathBuf>, u64, u64, String)>,
        chunk_sample: u64,
        write_failures: Option<PathBuf>,
        outcomes: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let entries = line_entries(records);
        let run = py.detach(|| self.run_entries(entries, chunk_sample, write_failures, outcomes));
        let run = run.map_err(|e| PyOSError::new_err(e.to_string()))?;
        let listed = run.listed(py, outcomes)?;
        let report = PartialReport { report: run.report };
        (report, listed, run.written, run.problems).into_pyobject(py)
    }

    /// Runs the lines of the JSON Lines file `path` that start in bytes `start..end` (a
    /// worker's range: it reads only those bytes), naming the file `label` as the report does,
    /// the range's first line numbered `first_line` and its first record `first_index` (from
    /// the counts of the ranges before it, `count_jsonl_range`). Failing records are written
    /// into `write_failures` as `rtbench corpus --write-failures` does. Returns `(report,
    /// outcomes, written, problems)`: the outcomes' dicts when asked for (else `None`), how
    /// many failing records were written, and why the others could not be.
    #[pyo3(signature = (path, label, start, end, first_line, first_index, chunk_sample=100,
                        write_failures=None, outcomes=false))]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments
    fn run_range<'py>(
        &self,
        py: Python<'py>,
        path: PathBuf,
        label: PathBuf,
        start: u64,
        end: u64,
        first_line: u64,
        first_index: u64,
        chunk_sample: u64,
        write_failures: Option<PathBuf>,
        outcomes: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let run = py.detach(|| {
            let entries = range_entries(&path, &label, start, end, first_line)?;
            let numbered = (first_index..).zip(entries).map(|(i, e)| e.map(|e| (i, e)));
            self.run_entries(numbered, chunk_sample, write_failures, outcomes)
        });
        let run = run.map_err(|e| PyOSError::new_err(e.to_string()))?;
        let listed = run.listed(py, outcomes)?;
        let report = PartialReport { report: run.report };
        (report, listed, run.written, run.problems).into_pyobject(py)
    }
}

impl CorpusContext {
    /// Runs `entries` on the calling thread (see [`run_records`]), writing failures into
    /// `write_failures` and keeping the outcomes (without their samples) when asked; an I/O
    /// error reading the entries ends the run with it.
    fn run_entries(
        &self,
        entries: impl Iterator<Item = std::io::Result<(u64, Entry)>>,
        chunk_sample: u64,
        write_failures: Option<PathBuf>,
        outcomes: bool,
    ) -> std::io::Result<Run> {
        let mut run = Run::default();
        let mut failed = None;
        let entries = entries.map_while(|e| e.map_err(|e| failed = Some(e)).ok());
        run.report = run_records(&self.ctx, entries, chunk_sample, |o| {
            let mut written = None;
            if let Some(dir) = &write_failures
                && o.is_failure()
                && o.sample.is_some()
            {
                match write_failure(dir, o) {
                    Ok(path) => {
                        run.written += 1;
                        written = Some(path);
                    }
                    Err(e) => run.problems.push(e.to_string()),
                }
            }
            if outcomes {
                let mut o = o.clone();
                o.sample = None;
                run.kept.push((o, written));
            }
        });
        match failed {
            Some(e) => Err(e),
            None => Ok(run),
        }
    }
}

/// What a run of some records gives.
#[derive(Default)]
struct Run {
    report: Report,
    /// The outcomes (without their samples) and where each failing record was written.
    kept: Vec<(Outcome, Option<PathBuf>)>,
    written: u64,
    problems: Vec<String>,
}

impl Run {
    /// The outcomes as a list of dicts, or `None` when they were not asked for.
    fn listed<'py>(&self, py: Python<'py>, outcomes: bool) -> PyResult<Bound<'py, PyAny>> {
        if !outcomes {
            return Ok(py.None().into_bound(py));
        }
        let list = PyList::empty(py);
        for (o, written) in &self.kept {
            let d = outcome_to_py(py, o)?;
            d.set_item("written", written.as_ref().map(|w| w.display().to_string()))?;
            list.append(d)?;
        }
        Ok(list.into_any())
    }
}

/// The error of failing records that could not be written, as `rtbench corpus` says it.
fn unwritten(problems: &[String]) -> String {
    format!(
        "{} failing records not written (an existing file is never replaced):\n  {}",
        problems.len(),
        problems.join("\n  ")
    )
}

/// Counts the lines and records of the JSON Lines file `path` that start in bytes
/// `start..end`: `(lines, records)`, blank lines counting as lines but not records. Errors
/// name the file `label` (default: `path`).
#[pyfunction]
#[pyo3(signature = (path, start, end, label=None))]
pub(crate) fn count_jsonl_range(
    py: Python<'_>,
    path: PathBuf,
    start: u64,
    end: u64,
    label: Option<PathBuf>,
) -> PyResult<(u64, u64)> {
    let label = label.unwrap_or_else(|| path.clone());
    let count = py
        .detach(|| count_range(&path, &label, start, end))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    Ok((count.lines, count.records))
}

/// The record keys from a dict of overrides.
fn field_names(names: &Bound<'_, PyDict>) -> PyResult<FieldNames> {
    let mut out = FieldNames::default();
    for (key, value) in names.iter() {
        let key: String = key.extract()?;
        let value: String = value.extract()?;
        let slot = match key.as_str() {
            "id" => &mut out.id,
            "prefix" => &mut out.prefix,
            "messages" => &mut out.messages,
            "tools" => &mut out.tools,
            "kwargs" => &mut out.kwargs,
            "generation" => &mut out.generation,
            "expected" => &mut out.expected,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown record key {other:?}: the keys are id, prefix, messages, tools, kwargs, generation and expected"
                )));
            }
        };
        *slot = value;
    }
    Ok(out)
}

/// One record's outcome as a dict: `index`, `record` (as the report names it), `file`, `line`
/// and `offset` (of a JSON Lines record), `id`, `status`
/// (`parsed`, `error` or `input`), `error` (`{kind, field, message}`), `differs`,
/// `chunk_stable`, `failure` and `micros`.
fn outcome_to_py<'py>(py: Python<'py>, o: &Outcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("index", o.index)?;
    d.set_item("record", o.label())?;
    if let Location::Line { file, line, offset } = &o.location {
        // As the report names it (a str, as Parquet and JSON take it).
        d.set_item("file", file.as_ref().map(|f| f.display().to_string()))?;
        d.set_item("line", line)?;
        d.set_item("offset", offset)?;
    }
    d.set_item("id", o.id.as_deref())?;
    let (status, error) = match &o.status {
        Status::Parsed(_) => ("parsed", None),
        Status::Input(m) => ("input", Some((String::from("input"), None, m.clone()))),
        Status::Error(e) => (
            "error",
            Some((error_kind(&e.message), e.field.clone(), e.message.clone())),
        ),
    };
    d.set_item("status", status)?;
    match error {
        Some((kind, field, message)) => {
            let e = PyDict::new(py);
            e.set_item("kind", kind)?;
            e.set_item("field", field)?;
            e.set_item("message", message)?;
            d.set_item("error", e)?;
        }
        None => d.set_item("error", py.None())?,
    }
    d.set_item("differs", o.differs.clone())?;
    d.set_item("chunk_stable", o.chunk_stable)?;
    d.set_item("failure", o.is_failure())?;
    d.set_item(
        "micros",
        u64::try_from(o.elapsed.as_micros()).unwrap_or(u64::MAX),
    )?;
    Ok(d)
}

/// The report of some records of a corpus (see the module docs).
#[pyclass(module = "rtbench._native")]
pub(crate) struct PartialReport {
    report: Report,
}

#[pymethods]
impl PartialReport {
    /// Adds the report of the records after this one's in the corpus.
    fn merge(&mut self, later: PyRef<'_, PartialReport>) {
        self.report.merge(later.report.clone());
    }

    /// Records run.
    #[getter]
    fn records(&self) -> u64 {
        self.report.records
    }

    /// Records that fail (what makes `rtbench corpus` exit 1).
    #[getter]
    fn failures(&self) -> u64 {
        self.report.failures
    }

    /// The report as `rtbench corpus --json` prints it (without `seconds` and `written`, which
    /// the run adds).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.report.to_value())
    }

    /// The text report, as `rtbench corpus` prints it (before its line of totals).
    fn summary(&self) -> String {
        self.report.summary()
    }

    /// Pickling: the partial report as JSON text.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let state = json_dumps(&slf.borrow().report.to_partial(), &DumpOptions::default())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let rebuild = py.import("rtbench._native")?.getattr("_partial_report")?;
        (rebuild, (PyBytes::new(py, state.as_bytes()),)).into_pyobject(py)
    }
}

/// A partial report from its pickled state.
#[pyfunction]
pub(crate) fn _partial_report(state: &[u8]) -> PyResult<PartialReport> {
    let text = std::str::from_utf8(state).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let value = json_loads(text).map_err(|e| PyValueError::new_err(e.message))?;
    let report = Report::from_partial(&value).map_err(PyValueError::new_err)?;
    Ok(PartialReport { report })
}

/// Adds the corpus classes and functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CorpusContext>()?;
    m.add_class::<PartialReport>()?;
    m.add_function(wrap_pyfunction!(_partial_report, m)?)?;
    m.add_function(wrap_pyfunction!(count_jsonl_range, m)?)?;
    m.add_function(wrap_pyfunction!(publish_failures, m)?)?;
    Ok(())
}

/// A staged failure file's path and its new one (`None`: not moved).
type Moved = (String, Option<String>);

/// Gives the failure files a worker wrote into `staged` their names in `dir`, in name order, as
/// writing them there would have (an existing name is a problem, never replaced): returns
/// `(moved, problems)`, `moved` pairing each staged path with its new one (`None` when not
/// moved). A distributed run's blocks write into folders of their own, so that a block run
/// again (its worker lost) rewrites its own files only.
#[pyfunction]
fn publish_failures(
    py: Python<'_>,
    staged: PathBuf,
    dir: PathBuf,
) -> PyResult<(Vec<Moved>, Vec<String>)> {
    let published = py
        .detach(|| rtbench_tooling::corpus::publish_staged(&staged, &dir))
        .map_err(|e| PyOSError::new_err(format!("{}: {e}", staged.display())))?;
    let path = |p: &PathBuf| p.to_string_lossy().into_owned();
    let moved = published
        .moved
        .iter()
        .map(|(from, to)| (path(from), to.as_ref().map(path)))
        .collect();
    Ok((
        moved,
        published.errors.iter().map(|e| e.to_string()).collect(),
    ))
}

/// The corpus entries of records given as `(index, file, line, offset, text)`.
fn line_entries(
    records: Vec<(u64, Option<PathBuf>, u64, u64, String)>,
) -> impl Iterator<Item = std::io::Result<(u64, Entry)>> {
    records
        .into_iter()
        .map(|(index, file, line, offset, text)| {
            let location = Location::Line { file, line, offset };
            let content = Content::Line(Ok(text));
            Ok((index, Entry { location, content }))
        })
}
