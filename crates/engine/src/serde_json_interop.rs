//! Conversions between [`Value`] and [`serde_json::Value`] (the `serde` feature), for programs
//! that hand messages to serde-based code.
//!
//! A conversion either keeps the value exactly or fails, naming where: Python values JSON
//! cannot hold (NaN and the infinities, integers beyond the `i64`/`u64` range, lone surrogates)
//! are errors, never rounded, clamped or replaced. Key order is kept both ways
//! (`serde_json` is built with `preserve_order`).
//!
//! ```
//! use rtbench_engine::Value;
//!
//! let message = Value::List(vec![Value::from("hi"), Value::Float(f64::NAN)]);
//! let err = serde_json::Value::try_from(&message).unwrap_err();
//! assert_eq!(err.to_string(), "$[1]: NaN has no JSON number");
//!
//! let json = serde_json::json!({"role": "assistant", "content": "Hello", "n": 3});
//! let value = Value::try_from(&json)?;
//! assert_eq!(value.py_repr(), "{'role': 'assistant', 'content': 'Hello', 'n': 3}");
//! assert_eq!(serde_json::Value::try_from(&value)?, json);
//! # Ok::<(), rtbench_engine::LossyConversion>(())
//! ```

use num_traits::ToPrimitive;

use crate::value::{Dict, SURROGATE_BASE, Value, surrogate_of};

/// A value that cannot cross between the engine and `serde_json` without changing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LossyConversion {
    /// Where in the value, as `$`, `$.key`, `$[0]`.
    pub path: String,
    /// What cannot be represented.
    pub reason: String,
}

impl std::fmt::Display for LossyConversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

impl std::error::Error for LossyConversion {}

fn lossy(path: &str, reason: impl Into<String>) -> LossyConversion {
    LossyConversion {
        path: path.to_string(),
        reason: reason.into(),
    }
}

fn key_path(path: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_') {
        format!("{path}.{key}")
    } else {
        format!("{path}[{key:?}]")
    }
}

/// A Rust string for a Python string, unless it holds a lone surrogate.
fn json_string(s: &str, path: &str) -> Result<String, LossyConversion> {
    match s.chars().find_map(surrogate_of) {
        Some(u) => Err(lossy(
            path,
            format!("the lone surrogate \\u{u:04x} has no UTF-8 form"),
        )),
        None => Ok(s.to_string()),
    }
}

/// A Python string for a Rust string, unless it holds a code point the engine reserves for
/// lone surrogates (it would read back as one).
fn engine_string<'s>(s: &'s str, path: &str) -> Result<&'s str, LossyConversion> {
    match s.chars().find(|c| surrogate_of(*c).is_some()) {
        Some(c) => Err(lossy(
            path,
            format!(
                "U+{:X} is reserved for lone surrogates (U+{SURROGATE_BASE:X} onwards)",
                c as u32
            ),
        )),
        None => Ok(s),
    }
}

fn to_json(v: &Value, path: &str) -> Result<serde_json::Value, LossyConversion> {
    use serde_json::Value as J;
    Ok(match v {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => J::from(*i),
        Value::BigInt(b) => match b.to_u64() {
            Some(u) => J::from(u),
            None => return Err(lossy(path, format!("{b} is beyond the i64/u64 range"))),
        },
        Value::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(n) => J::Number(n),
            None if f.is_nan() => return Err(lossy(path, "NaN has no JSON number")),
            None => return Err(lossy(path, format!("{f} has no JSON number"))),
        },
        Value::Str(s) => J::String(json_string(s, path)?),
        Value::List(items) => J::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| to_json(x, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Value::Dict(d) => {
            let mut map = serde_json::Map::with_capacity(d.len());
            for (k, x) in d {
                let at = key_path(path, k);
                map.insert(json_string(k, &at)?, to_json(x, &at)?);
            }
            J::Object(map)
        }
    })
}

fn from_json(v: &serde_json::Value, path: &str) -> Result<Value, LossyConversion> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(*b),
        J::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                Value::from_bigint(u.into())
            } else {
                match n.as_f64() {
                    Some(f) => Value::Float(f),
                    None => return Err(lossy(path, format!("{n} is not a float or integer"))),
                }
            }
        }
        J::String(s) => Value::Str(engine_string(s, path)?.to_owned()),
        J::Array(items) => Value::List(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| from_json(x, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(map) => {
            let mut d = Dict::with_capacity(map.len());
            for (k, x) in map {
                let at = key_path(path, k);
                d.insert(engine_string(k, &at)?, from_json(x, &at)?);
            }
            Value::Dict(d)
        }
    })
}

impl TryFrom<&Value> for serde_json::Value {
    type Error = LossyConversion;

    /// Fails on NaN, the infinities, integers beyond `i64`/`u64` and lone surrogates.
    fn try_from(v: &Value) -> Result<Self, Self::Error> {
        to_json(v, "$")
    }
}

impl TryFrom<&serde_json::Value> for Value {
    type Error = LossyConversion;

    /// Fails only on strings holding the code points the engine reserves for lone surrogates.
    fn try_from(v: &serde_json::Value) -> Result<Self, Self::Error> {
        from_json(v, "$")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::py::json_loads;
    use crate::value::surrogate_char;

    fn to(v: &Value) -> Result<serde_json::Value, String> {
        serde_json::Value::try_from(v).map_err(|e| e.to_string())
    }

    #[test]
    fn exact_values_round_trip_with_their_key_order() {
        let text =
            r#"{"z": 1, "a": [true, null, -2.5, 1e+300, 18446744073709551615], "m": {"é": "✓"}}"#;
        let v = json_loads(text).unwrap();
        let j = to(&v).unwrap();
        assert_eq!(j.to_string(), text.replace(": ", ":").replace(", ", ","));
        let back = Value::try_from(&j).unwrap();
        assert!(back.py_eq(&v) && back.py_repr() == v.py_repr());
    }

    #[test]
    fn lossy_values_are_errors_naming_where() {
        let v = json_loads(r#"{"a": [1, {"b c": 2}]}"#).unwrap();
        let set = |leaf: Value| {
            let mut v = v.clone();
            let inner = &mut v.as_dict_mut().unwrap()["a"];
            let Value::List(items) = inner else {
                unreachable!()
            };
            items[1].as_dict_mut().unwrap()["b c"] = leaf;
            v
        };
        assert_eq!(
            to(&set(Value::Float(f64::INFINITY))).unwrap_err(),
            r#"$.a[1]["b c"]: inf has no JSON number"#
        );
        assert_eq!(
            to(&set(Value::Float(f64::NAN))).unwrap_err(),
            r#"$.a[1]["b c"]: NaN has no JSON number"#
        );
        let big = json_loads("18446744073709551616").unwrap();
        assert_eq!(
            to(&set(big)).unwrap_err(),
            r#"$.a[1]["b c"]: 18446744073709551616 is beyond the i64/u64 range"#
        );
        let negative = json_loads("-9223372036854775809").unwrap();
        assert!(
            to(&negative)
                .unwrap_err()
                .contains("beyond the i64/u64 range")
        );
        let lone = Value::Str(format!("x{}", surrogate_char(0xD800)));
        assert_eq!(
            to(&set(lone)).unwrap_err(),
            r#"$.a[1]["b c"]: the lone surrogate \ud800 has no UTF-8 form"#
        );
    }

    #[test]
    fn reserved_code_points_do_not_turn_into_surrogates() {
        let j = serde_json::json!({ "k": surrogate_char(0xDC00).to_string() });
        let err = Value::try_from(&j).unwrap_err();
        assert_eq!(err.path, "$.k");
        assert!(err.reason.contains("reserved for lone surrogates"));
    }
}
