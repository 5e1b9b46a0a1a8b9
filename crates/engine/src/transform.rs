//! Transforms: JSON templates that reshape a region's parsed value. Every string that is exactly
//! `{name}` or `{name.key.key}` is replaced by the value it names (type preserved); any other
//! value is copied as it is. Placeholders are resolved against the region's named captures plus
//! `content` (or, with `transform_each`, each list element's keys).

use std::fmt;

use crate::py::{ExceptionType, PathSeg, py_repr_str};
use crate::value::{Dict, Key, Value};
use pyregex::is_word_char;

/// A compiled transform template.
#[derive(Clone, Debug, PartialEq)]
pub enum Transform {
    /// A value copied as it is (numbers, booleans, null, strings without a placeholder).
    Literal(Value),
    /// A whole-string placeholder: a root name and the keys to descend into.
    Placeholder {
        path: String,
        root: String,
        keys: Vec<String>,
    },
    List(Vec<Transform>),
    Dict(Vec<(Key, Transform)>),
}

/// A placeholder that cannot be resolved: the reference raises `KeyError` (an unknown root
/// name; its message is the repr of the text) or `ValueError`.
#[derive(Clone, Debug, PartialEq)]
pub struct TransformError {
    pub kind: ExceptionType,
    /// Python's `str(e)`.
    pub message: String,
}

impl fmt::Display for TransformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Where placeholders look up their root names.
pub trait Scope {
    fn get(&self, name: &str) -> Option<&Value>;
    /// All names, for the "Available: [...]" part of error messages.
    fn names(&self) -> Vec<String>;
}

/// Parses `{a.b.c}` when the whole string is one placeholder (`\{(\w+(?:\.\w+)*)\}` fullmatch).
fn whole_placeholder(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('{')?.strip_suffix('}')?;
    let ok = inner
        .split('.')
        .all(|part| !part.is_empty() && part.chars().all(is_word_char));
    ok.then_some(inner)
}

/// Whether `s` contains a placeholder anywhere (`\{(\w+(?:\.\w+)*)\}` search).
fn contains_placeholder(s: &str) -> bool {
    s.char_indices().filter(|&(_, c)| c == '{').any(|(i, _)| {
        let mut chars = s[i + 1..].chars().peekable();
        loop {
            // One run of word characters is required after `{` and after each `.`.
            let mut run = 0;
            while chars.peek().is_some_and(|&c| is_word_char(c)) {
                chars.next();
                run += 1;
            }
            if run == 0 {
                return false;
            }
            match chars.next() {
                Some('}') => return true,
                Some('.') => continue,
                _ => return false,
            }
        }
    })
}

impl Transform {
    /// Compiles a transform, or returns the first string that mixes a placeholder with other
    /// text together with its path inside the transform.
    pub fn compile(value: &Value) -> Result<Transform, (String, Vec<PathSeg>)> {
        fn go(value: &Value, at: &mut Vec<PathSeg>) -> Result<Transform, (String, Vec<PathSeg>)> {
            Ok(match value {
                Value::Dict(d) => {
                    let mut out = Vec::with_capacity(d.len());
                    for (k, v) in d {
                        at.push(PathSeg::Key(k.to_owned()));
                        out.push((Key::from(k), go(v, at)?));
                        at.pop();
                    }
                    Transform::Dict(out)
                }
                Value::List(items) => {
                    let mut out = Vec::with_capacity(items.len());
                    for (i, v) in items.iter().enumerate() {
                        at.push(PathSeg::Index(i));
                        out.push(go(v, at)?);
                        at.pop();
                    }
                    Transform::List(out)
                }
                Value::Str(s) => match whole_placeholder(s) {
                    Some(path) => {
                        let mut parts = path.split('.').map(str::to_string);
                        let root = parts.next().unwrap_or_default();
                        Transform::Placeholder {
                            path: path.to_string(),
                            root,
                            keys: parts.collect(),
                        }
                    }
                    None if contains_placeholder(s) => return Err((s.clone(), at.clone())),
                    None => Transform::Literal(value.clone()),
                },
                other => Transform::Literal(other.clone()),
            })
        }
        go(value, &mut Vec::new())
    }

    /// Applies the transform in `scope` (without a frame budget: see [`Transform::apply_within`]).
    pub fn apply(&self, scope: &dyn Scope) -> Result<Value, TransformError> {
        self.apply_at(scope, 1, usize::MAX, "")
    }

    /// Applies the transform in `scope` as the reference's recursive `_apply_transform` does,
    /// within its frame budget: one frame per call, one more for a list's or dict's
    /// comprehension; past the budget, `RecursionError` where the reference raises it (after
    /// any error met earlier in its walk).
    pub(crate) fn apply_within(
        &self,
        scope: &dyn Scope,
        budget: crate::py::Budget,
    ) -> Result<Value, TransformError> {
        self.apply_at(scope, 1, budget.frames, budget.message)
    }

    /// Where the transform's one placeholder of the whole `content` lands in its output (the
    /// entry or item index at each level), when `content` is named exactly once and whole
    /// (`{content}`, not `{content.key}`). That placeholder cannot fail and nothing else reads
    /// the content, so a caller done with the content may apply the transform to a stand-in and
    /// move the content into this place instead of copying it (see [`slot_mut`]).
    pub(crate) fn whole_content_slot(&self) -> Option<Vec<usize>> {
        fn walk(t: &Transform, at: &mut Vec<usize>, found: &mut Option<Vec<usize>>, n: &mut usize) {
            match t {
                Transform::Literal(_) => {}
                Transform::Placeholder { root, keys, .. } => {
                    if root == "content" {
                        *n += 1;
                        if keys.is_empty() {
                            *found = Some(at.clone());
                        }
                    }
                }
                Transform::List(items) => {
                    for (i, item) in items.iter().enumerate() {
                        at.push(i);
                        walk(item, at, found, n);
                        at.pop();
                    }
                }
                Transform::Dict(entries) => {
                    for (i, (_, entry)) in entries.iter().enumerate() {
                        at.push(i);
                        walk(entry, at, found, n);
                        at.pop();
                    }
                }
            }
        }
        let (mut found, mut n) = (None, 0);
        walk(self, &mut Vec::new(), &mut found, &mut n);
        found.filter(|_| n == 1)
    }

    fn apply_at(
        &self,
        scope: &dyn Scope,
        used: usize,
        frames: usize,
        message: &str,
    ) -> Result<Value, TransformError> {
        let too_deep = || TransformError {
            kind: ExceptionType::RecursionError,
            message: message.to_string(),
        };
        if used > frames {
            return Err(too_deep());
        }
        let container = matches!(self, Transform::List(_) | Transform::Dict(_));
        if container && used + 1 > frames {
            return Err(too_deep());
        }
        Ok(match self {
            Transform::Literal(v) => v.clone(),
            Transform::List(items) => Value::List(
                items
                    .iter()
                    .map(|t| t.apply_at(scope, used + 2, frames, message))
                    .collect::<Result<_, _>>()?,
            ),
            Transform::Dict(entries) => {
                let mut out = Dict::with_capacity(entries.len());
                for (k, t) in entries {
                    out.insert(k.clone(), t.apply_at(scope, used + 2, frames, message)?);
                }
                Value::Dict(out)
            }
            Transform::Placeholder { path, root, keys } => {
                let Some(mut value) = scope.get(root) else {
                    let mut names = scope.names();
                    names.sort();
                    let text = format!(
                        "transform placeholder '{{{path}}}' is not defined. Available: {}",
                        Value::List(names.into_iter().map(Value::Str).collect()).py_repr()
                    );
                    return Err(TransformError {
                        kind: ExceptionType::KeyError,
                        message: py_repr_str(&text),
                    });
                };
                for key in keys {
                    let Value::Dict(d) = value else {
                        return Err(TransformError {
                            kind: ExceptionType::ValueError,
                            message: format!(
                                "transform placeholder '{{{path}}}' cannot index into {} at '{key}'",
                                value.type_name()
                            ),
                        });
                    };
                    value = d.get(key).ok_or_else(|| {
                        let mut names: Vec<Value> = d.keys().map(Value::from).collect();
                        names.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                        TransformError {
                            kind: ExceptionType::ValueError,
                            message: format!(
                                "transform placeholder '{{{path}}}' is missing key '{key}'. Available: {}",
                                Value::List(names).py_repr()
                            ),
                        }
                    })?;
                }
                value.clone()
            }
        })
    }
}

/// The part of a transform's output at `slot` (see [`Transform::whole_content_slot`]).
pub(crate) fn slot_mut<'a>(value: &'a mut Value, slot: &[usize]) -> Option<&'a mut Value> {
    slot.iter().try_fold(value, |v, &i| match v {
        Value::List(items) => items.get_mut(i),
        Value::Dict(d) => d.values_mut().nth(i),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct S(Vec<(String, Value)>);
    impl Scope for S {
        fn get(&self, name: &str) -> Option<&Value> {
            self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
        }
        fn names(&self) -> Vec<String> {
            self.0.iter().map(|(k, _)| k.clone()).collect()
        }
    }

    fn json(s: &str) -> Value {
        crate::py::json_loads(s).unwrap()
    }

    #[test]
    fn the_content_moved_into_its_slot_is_the_transform_of_the_content() {
        let content = json(r#"{"name": "f", "arguments": {"a": [1, 2.5, null]}}"#);
        let scope = S(vec![
            ("id".into(), json(r#""c1""#)),
            ("content".into(), content.clone()),
        ]);
        let stand_in = S(vec![
            ("id".into(), json(r#""c1""#)),
            ("content".into(), Value::Null),
        ]);
        for (transform, slot) in [
            (
                r#"{"type": "function", "function": "{content}"}"#,
                Some(vec![1]),
            ),
            (
                r#"["{id}", {"x": 1, "f": ["{content}"]}]"#,
                Some(vec![1, 1, 0]),
            ),
            (r#""{content}""#, Some(vec![])),
            (r#"{"a": "{content}", "b": "{content}"}"#, None),
            (r#"{"a": "{content}", "b": "{content.name}"}"#, None),
            (r#"{"a": "{content.name}"}"#, None),
            (r#"{"a": "{id}"}"#, None),
        ] {
            let t = Transform::compile(&json(transform)).unwrap();
            assert_eq!(t.whole_content_slot(), slot, "{transform}");
            let Some(slot) = slot else { continue };
            let mut moved = t.apply(&stand_in).unwrap();
            *slot_mut(&mut moved, &slot).unwrap() = content.clone();
            assert_eq!(moved, t.apply(&scope).unwrap(), "{transform}");
        }
    }

    #[test]
    fn placeholders_are_whole_strings_only() {
        assert_eq!(whole_placeholder("{content}"), Some("content"));
        assert_eq!(whole_placeholder("{content.a.b}"), Some("content.a.b"));
        assert_eq!(whole_placeholder("{content.}"), None);
        assert_eq!(whole_placeholder("{a b}"), None);
        assert!(contains_placeholder("x {name} y"));
        assert!(contains_placeholder("{{content}}"));
        assert!(contains_placeholder("{a}{b}"));
        assert!(!contains_placeholder("{a.}"));
        assert!(!contains_placeholder("{}"));
        assert!(!contains_placeholder("{a b}"));
    }

    #[test]
    fn mixed_strings_are_rejected_with_their_path() {
        let t = json(r#"{"f": {"name": ["ok", "x{content}"]}}"#);
        let (bad, at) = Transform::compile(&t).unwrap_err();
        assert_eq!(bad, "x{content}");
        assert_eq!(
            at,
            vec![
                PathSeg::Key("f".into()),
                PathSeg::Key("name".into()),
                PathSeg::Index(1)
            ]
        );
    }

    #[test]
    fn dotted_placeholders_descend_and_fail_like_the_reference() {
        let t = Transform::compile(&json(r#"{"n": "{content.a.b}", "lit": [1, null]}"#)).unwrap();
        let scope = S(vec![("content".into(), json(r#"{"a": {"b": 7}}"#))]);
        assert_eq!(
            t.apply(&scope).unwrap(),
            json(r#"{"n": 7, "lit": [1, null]}"#)
        );
        let bad = S(vec![("content".into(), json(r#"{"a": [1]}"#))]);
        let e = t.apply(&bad).unwrap_err();
        assert_eq!(e.kind, ExceptionType::ValueError);
        assert_eq!(
            e.message,
            "transform placeholder '{content.a.b}' cannot index into list at 'b'"
        );
        let missing = S(vec![("name".into(), json("1"))]);
        let e = t.apply(&missing).unwrap_err();
        // `str(KeyError(text))` is the repr of the text.
        assert_eq!(e.kind, ExceptionType::KeyError);
        assert_eq!(
            e.message,
            "\"transform placeholder '{content.a.b}' is not defined. Available: ['name']\""
        );
    }
}
