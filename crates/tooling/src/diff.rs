//! Structural differences between two values, as readable lines (`$.tool_calls[1].function.name:
//! expected 'f', got 'g'`), and [`same`], the one comparison of results (NaN equals NaN). Used
//! to explain why a chunking or a sample disagrees.

use rtbench_engine::value::{Dict, Value};

/// One difference at a path.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// JSONPath-like location (`$`, `$.a`, `$.a[2]`, `$['key with spaces']`).
    pub path: String,
    /// The expected value there; `None` when only the other value has the path.
    pub expected: Option<Value>,
    /// The value found there; `None` when it is missing.
    pub got: Option<Value>,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Value>| v.as_ref().map_or("nothing".to_string(), short);
        match (&self.expected, &self.got) {
            (Some(_), None) => write!(
                f,
                "{}: missing (expected {})",
                self.path,
                show(&self.expected)
            ),
            (None, Some(_)) => write!(f, "{}: unexpected {}", self.path, show(&self.got)),
            _ => write!(
                f,
                "{}: expected {}, got {}",
                self.path,
                show(&self.expected),
                show(&self.got)
            ),
        }
    }
}

fn short(v: &Value) -> String {
    let s = v.py_repr();
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

fn key_path(path: &str, key: &str) -> String {
    let simple = !key.is_empty()
        && key.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if simple {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::from(key).py_repr())
    }
}

/// Every difference between `expected` and `got`, in document order. Numbers compare by
/// value (`1 == 1.0`), booleans never equal numbers, dict key order is ignored, and NaN equals
/// NaN (see [`same`]).
pub fn diff(expected: &Value, got: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk("$".to_string(), expected, got, &mut out);
    out
}

/// Whether two results are the same: [`diff`] finds no difference between them (without
/// building one). This is how results are compared everywhere (a sample's expected message,
/// chunkings, reference versions, corpus records). It is Python's `==` on the values, except
/// that a boolean never equals a number and that NaN equals NaN: a parse that gives NaN twice
/// gave the same result (Python's own `==` says `nan != nan`, so comparing two runs with it
/// would report every message holding NaN as changed).
pub fn same(expected: &Value, got: &Value) -> bool {
    match (expected, got) {
        (Value::Dict(x), Value::Dict(y)) => same_dicts(x, y),
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => same_leaf(expected, got),
    }
}

/// [`same`] for two dicts (two messages), without wrapping them in values.
pub fn same_dicts(x: &Dict, y: &Dict) -> bool {
    x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
}

/// Two values that are not both dicts or both lists: the same kind, and equal as Python
/// compares them, or both NaN.
fn same_leaf(a: &Value, b: &Value) -> bool {
    let nan = |v: &Value| matches!(v, Value::Float(f) if f.is_nan());
    same_kind(a, b) && (a.py_eq(b) || (nan(a) && nan(b)))
}

fn same_kind(a: &Value, b: &Value) -> bool {
    use Value::*;
    matches!(
        (a, b),
        (Null, Null)
            | (Bool(_), Bool(_))
            | (Int(_) | BigInt(_) | Float(_), Int(_) | BigInt(_) | Float(_))
            | (Str(_), Str(_))
            | (List(_), List(_))
            | (Dict(_), Dict(_))
    )
}

fn walk(path: String, a: &Value, b: &Value, out: &mut Vec<Difference>) {
    match (a, b) {
        (Value::Dict(x), Value::Dict(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) => walk(key_path(&path, k), v, w, out),
                    None => out.push(Difference {
                        path: key_path(&path, k),
                        expected: Some(v.clone()),
                        got: None,
                    }),
                }
            }
            for (k, w) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                out.push(Difference {
                    path: key_path(&path, k),
                    expected: None,
                    got: Some(w.clone()),
                });
            }
        }
        (Value::List(x), Value::List(y)) => {
            for i in 0..x.len().max(y.len()) {
                let p = format!("{path}[{i}]");
                match (x.get(i), y.get(i)) {
                    (Some(v), Some(w)) => walk(p, v, w, out),
                    (v, w) => out.push(Difference {
                        path: p,
                        expected: v.cloned(),
                        got: w.cloned(),
                    }),
                }
            }
        }
        _ if same_leaf(a, b) => {}
        _ => out.push(Difference {
            path,
            expected: Some(a.clone()),
            got: Some(b.clone()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::py::json_loads;

    fn d(a: &str, b: &str) -> Vec<String> {
        diff(&json_loads(a).unwrap(), &json_loads(b).unwrap())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// NaN is the same result as NaN (Python's `==` says otherwise, which would make every
    /// message holding NaN differ from itself); everything else compares as before.
    #[test]
    fn nan_is_the_same_as_nan_and_nothing_else() {
        let nan = r#"{"score": NaN, "l": [NaN, 1], "d": {"x": NaN}}"#;
        assert!(d(nan, nan).is_empty());
        let v = json_loads(nan).unwrap();
        assert!(same(&v, &v.clone()));
        assert!(!v.py_eq(&v), "Python's == on NaN");
        assert_eq!(
            d(r#"{"a": NaN}"#, r#"{"a": 1.0}"#),
            ["$.a: expected nan, got 1.0"]
        );
        assert_eq!(
            d(r#"{"a": NaN}"#, r#"{"a": "nan"}"#),
            ["$.a: expected nan, got 'nan'"]
        );
        assert!(d(r#"{"a": Infinity}"#, r#"{"a": Infinity}"#).is_empty());
        // `same` agrees with `diff` on every pair.
        let values = [
            nan,
            r#"{"a": 1}"#,
            r#"{"a": 1.0}"#,
            r#"{"a": true}"#,
            r#"{"a": [1, 2]}"#,
            r#"{"a": [2, 1]}"#,
            r#"{"a": NaN}"#,
            r#"{"b": 1}"#,
            r#"{"a": 1, "b": 1}"#,
            "[NaN]",
        ];
        for a in values {
            for b in values {
                let (x, y) = (json_loads(a).unwrap(), json_loads(b).unwrap());
                assert_eq!(same(&x, &y), diff(&x, &y).is_empty(), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn reports_paths_of_changed_missing_and_extra_values() {
        assert!(d(r#"{"a": 1, "b": [1, 2.0]}"#, r#"{"b": [1, 2], "a": 1.0}"#).is_empty());
        assert_eq!(
            d(
                r#"{"a": {"x": 1}, "l": [1, 2], "k k": true}"#,
                r#"{"a": {"x": 2}, "l": [1], "k k": 1, "z": null}"#
            ),
            vec![
                "$.a.x: expected 1, got 2",
                "$.l[1]: missing (expected 2)",
                "$['k k']: expected True, got 1",
                "$.z: unexpected None",
            ]
        );
    }
}
