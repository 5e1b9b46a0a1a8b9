//! Values between Python and the engine, built directly (no JSON text in between).
//!
//! Python to engine: `None`, `bool`, `int` (any size), `float`, `str` (lone surrogates
//! included), `list` and `dict` with `str` keys. Anything else (a tuple, a set, a custom
//! object, a dict with other keys, nesting deeper than [`MAX_DEPTH`]) is not something the
//! engine models: [`Unsupported`] tells the Python layer to hand the call to the reference.
//!
//! Engine to Python: the objects the reference builds: `int` beyond 64 bits, NaN and infinite
//! floats, dicts in the engine's insertion order, and `str` with lone surrogates (the engine
//! holds them as private-use stand-ins, see `rtbench_engine::value::SURROGATE_BASE`).

use num_bigint::BigInt;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};
use rtbench_engine::value::{Dict, Value, surrogate_char, surrogate_of};

/// How deep a Python value may nest before it is handed to the reference (deeper templates and
/// tool lists are not what a model author writes, and the conversion recurses).
pub(crate) const MAX_DEPTH: usize = 512;

/// A Python value the engine does not model; the message names its type.
#[derive(Debug)]
pub(crate) struct Unsupported(pub(crate) String);

/// Either a Python error while reading a value, or a value the engine does not model.
pub(crate) enum ReadError {
    /// Python raised while the value was read.
    Py(PyErr),
    /// See [`Unsupported`].
    Unsupported(Unsupported),
}

impl From<PyErr> for ReadError {
    fn from(e: PyErr) -> ReadError {
        ReadError::Py(e)
    }
}

/// Reads a Python `str` as the engine holds text: UTF-8, with lone surrogates as stand-ins.
pub(crate) fn read_str(s: &Bound<'_, PyString>) -> PyResult<String> {
    match s.to_str() {
        Ok(text) => Ok(text.to_string()),
        // Only lone surrogates make a str unencodable as UTF-8.
        Err(_) => {
            let bytes = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
            let bytes = bytes.cast::<PyBytes>()?.as_bytes();
            Ok(decode_surrogatepass(bytes))
        }
    }
}

/// UTF-8 in which surrogates are encoded as 3-byte sequences (Python's `surrogatepass`) to the
/// engine's text, surrogates as stand-ins.
fn decode_surrogatepass(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                // `valid_up_to` stops at a boundary, so `good` is valid UTF-8.
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                if bad.len() >= 3 && bad[0] == 0xED && (0xA0..=0xBF).contains(&bad[1]) {
                    let unit = 0xD000 | (u16::from(bad[1] & 0x3F) << 6) | u16::from(bad[2] & 0x3F);
                    out.push(surrogate_char(unit));
                    rest = &bad[3..];
                } else {
                    // Python's encoder never writes anything else; keep going all the same.
                    out.push(char::REPLACEMENT_CHARACTER);
                    rest = &bad[1..];
                }
            }
        }
    }
    out
}

/// Reads a Python value into an engine value (see the module docs).
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, ReadError> {
    if depth > MAX_DEPTH {
        return Err(ReadError::Unsupported(Unsupported(
            "a value nested deeper than rtbench converts".into(),
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        return Ok(match obj.extract::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::from_bigint(obj.extract::<BigInt>()?),
        });
    }
    if obj.is_exact_instance_of::<PyFloat>() {
        return Ok(Value::Float(obj.extract::<f64>()?));
    }
    if let Ok(s) = obj.cast::<PyString>()
        && obj.is_exact_instance_of::<PyString>()
    {
        return Ok(Value::Str(read_str(s)?));
    }
    if let Ok(list) = obj.cast::<PyList>()
        && obj.is_exact_instance_of::<PyList>()
    {
        let mut items = Vec::with_capacity(list.len());
        for item in list.iter() {
            items.push(to_value(&item, depth + 1)?);
        }
        return Ok(Value::List(items));
    }
    if let Ok(dict) = obj.cast::<PyDict>()
        && obj.is_exact_instance_of::<PyDict>()
    {
        let mut out = Dict::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let Ok(key) = k.cast::<PyString>() else {
                return Err(ReadError::Unsupported(Unsupported(format!(
                    "a dict key of type {}",
                    type_name(&k)
                ))));
            };
            out.insert(read_str(key)?, to_value(&v, depth + 1)?);
        }
        return Ok(Value::Dict(out));
    }
    Err(ReadError::Unsupported(Unsupported(format!(
        "a value of type {}",
        type_name(obj)
    ))))
}

/// `type(obj).__name__`.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// The engine's text as a Python `str` (stand-ins back to lone surrogates).
pub(crate) fn str_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    // The stand-ins are U+10F800 onwards, encoded F4 8F A0 80 ..: no F4 byte, no stand-in.
    if !text.as_bytes().contains(&0xF4) || !text.chars().any(|c| surrogate_of(c).is_some()) {
        return Ok(PyString::new(py, text).into_any());
    }
    let mut bytes = Vec::with_capacity(text.len());
    let mut buf = [0u8; 4];
    for c in text.chars() {
        match surrogate_of(c) {
            Some(unit) => bytes.extend_from_slice(&[
                0xE0 | (unit >> 12) as u8,
                0x80 | ((unit >> 6) & 0x3F) as u8,
                0x80 | (unit & 0x3F) as u8,
            ]),
            None => bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
    PyBytes::new(py, &bytes).call_method1("decode", ("utf-8", "surrogatepass"))
}

/// An engine value as the Python object the reference builds.
pub(crate) fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::BigInt(n) => n.as_ref().into_pyobject(py)?.into_any(),
        Value::Float(f) => PyFloat::new(py, *f).into_any(),
        Value::Str(s) => str_to_py(py, s)?,
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Dict(d) => dict_to_py(py, d)?.into_any(),
    })
}

/// An engine dict as a Python dict, in the engine's order.
pub(crate) fn dict_to_py<'py>(py: Python<'py>, d: &Dict) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (k, v) in d.iter() {
        out.set_item(str_to_py(py, k)?, to_py(py, v)?)?;
    }
    Ok(out)
}

/// A list of token ids (Python ints) as the tokenizer takes them.
pub(crate) fn read_ids(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    let list = obj
        .cast::<PyList>()
        .map_err(|_| PyTypeError::new_err("token ids must be a list of ints"))?;
    let mut ids = Vec::with_capacity(list.len());
    for item in list.iter() {
        ids.push(item.extract::<u32>()?);
    }
    Ok(ids)
}
