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
//! * `PartialReport`: `merge(later)`, `to_dict()` (the `--json` report's object), `summary()`
//!   (the text report), and pickling (it crosses processes).

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use rtbench_engine::py::{DumpOptions, json_dumps, json_loads};
use rtbench_tooling::corpus::{
    Content, Context, Entry, FieldNames, Location, Outcome, Report, Status, error_kind,
    run_records, write_failure,
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
        let entries = records
            .into_iter()
            .map(|(index, file, line, offset, text)| {
                let location = Location::Line { file, line, offset };
                let content = Content::Line(Ok(text));
                (index, Entry { location, content })
            });
        let (report, kept, problems) = py.detach(|| {
            let mut kept: Vec<Outcome> = Vec::new();
            let mut problems: Vec<String> = Vec::new();
            let report = run_records(&self.ctx, entries, chunk_sample, |o| {
                if let Some(dir) = &write_failures
                    && o.is_failure()
                    && o.sample.is_some()
                    && let Err(e) = write_failure(dir, o)
                {
                    problems.push(e.to_string());
                }
                if outcomes {
                    let mut o = o.clone();
                    o.sample = None;
                    kept.push(o);
                }
            });
            (report, kept, problems)
        });
        if !problems.is_empty() {
            return Err(PyOSError::new_err(format!(
                "{} failing records not written (an existing file is never replaced):\n  {}",
                problems.len(),
                problems.join("\n  ")
            )));
        }
        let listed = if outcomes {
            let list = PyList::empty(py);
            for o in &kept {
                list.append(outcome_to_py(py, o)?)?;
            }
            list.into_any()
        } else {
            py.None().into_bound(py)
        };
        (PartialReport { report }, listed).into_pyobject(py)
    }
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

/// One record's outcome as a dict: `index`, `record` (as the report names it), `id`, `status`
/// (`parsed`, `error` or `input`), `error` (`{kind, field, message}`), `differs`,
/// `chunk_stable`, `failure` and `micros`.
fn outcome_to_py<'py>(py: Python<'py>, o: &Outcome) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("index", o.index)?;
    d.set_item("record", o.label())?;
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
    Ok(())
}
