//! A model's tokenizer for parsing token ids: its `tokenizer.json` (the text of the Python
//! tokenizer's `backend_tokenizer.to_str()`) read by rtbench's tokenize crate, which decodes ids
//! exactly as the reference's `DecodeStream` does, and the control-token spellings the
//! reference defuses (5.25).
//!
//! Streaming parsers borrow the tokenizer for their whole life, from Python objects that may
//! outlive any scope, so a tokenizer is kept for the life of the process. It is kept once per
//! distinct `tokenizer.json` text and set of spellings, so loading the same tokenizer again,
//! or creating many parsers, holds no more memory.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rtbench_tokenize::{ControlTokens, ModelTokenizer};

/// A loaded tokenizer and its control tokens (see the module docs).
#[pyclass(module = "rtbench._native", frozen)]
pub(crate) struct TokenizerHandle {
    model: &'static ModelTokenizer,
    control: &'static ControlTokens,
}

/// Loaded tokenizers by `tokenizer.json` text, and control tokens by text and spellings.
#[derive(Default)]
struct Kept {
    models: HashMap<String, &'static ModelTokenizer>,
    controls: HashMap<(String, Vec<String>), &'static ControlTokens>,
}

fn kept() -> &'static Mutex<Kept> {
    static KEPT: OnceLock<Mutex<Kept>> = OnceLock::new();
    KEPT.get_or_init(Default::default)
}

impl TokenizerHandle {
    /// The tokenizer and its control tokens.
    pub(crate) fn parts(&self) -> (&'static ModelTokenizer, &'static ControlTokens) {
        (self.model, self.control)
    }
}

#[pymethods]
impl TokenizerHandle {
    /// Reads a `tokenizer.json` text; `control` are the control-token spellings.
    #[new]
    fn new(py: Python<'_>, json: String, control: Vec<String>) -> PyResult<TokenizerHandle> {
        let (model, control) = py.detach(|| load(json, control))?;
        Ok(TokenizerHandle { model, control })
    }
}

/// The kept tokenizer and control tokens for `json` and `control`, loading them the first time.
fn load(
    json: String,
    mut control: Vec<String>,
) -> PyResult<(&'static ModelTokenizer, &'static ControlTokens)> {
    control.sort();
    control.dedup();
    let mut kept = kept()
        .lock()
        .map_err(|_| PyValueError::new_err("the tokenizer cache is unusable after a panic"))?;
    let model = match kept.models.get(&json) {
        Some(model) => *model,
        None => {
            let model = ModelTokenizer::from_json_str(&json).map_err(PyValueError::new_err)?;
            let model: &'static ModelTokenizer = Box::leak(Box::new(model));
            kept.models.insert(json.clone(), model);
            model
        }
    };
    let key = (json, control);
    let control = match kept.controls.get(&key) {
        Some(control) => *control,
        None => {
            let made: &'static ControlTokens =
                Box::leak(Box::new(ControlTokens::new(model, key.1.iter().cloned())));
            kept.controls.insert(key, made);
            made
        }
    };
    Ok((model, control))
}
