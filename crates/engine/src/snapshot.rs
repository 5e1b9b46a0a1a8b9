//! The parser's output as a suspended state holds it, so that the states of a long stream
//! cost about one copy of the output, not one per state.
//!
//! Between two states of one parser a field's value either stays as it was (shared whole with
//! the earlier state), or is replaced (copied), or grows: a `repeats` field's list gets items
//! appended, a `join` field's string gets text appended. A field that has grown once only ever
//! grows (the parser sets such a value whole only while the field has no list or string), so
//! its value in a state is the start of its value at any later point of a stream that went
//! through the state: the state holds only its length, and the caller lends the later output
//! when it restores the state. A replay keeping a state every thousand steps of a stream of
//! 150,000 tool calls thus holds no call in its states, where copying the output each time
//! held each call once per later state (quadratic: gigabytes for a megabyte of text).

use std::sync::Arc;

use crate::value::{Dict, Value};

/// How a field's value changed since a revision of its parser.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FieldRevs {
    /// The revision of the field's last change of any kind.
    pub(crate) changed: u64,
    /// The revision at which the field's value was last set whole (not grown by appending).
    pub(crate) replaced: u64,
}

impl FieldRevs {
    /// The value grew since it was last set whole (and so only grows from now on).
    fn grew(self) -> bool {
        self.changed > self.replaced
    }
}

/// One field's value in a state.
#[derive(Debug)]
enum Part {
    /// The whole value.
    Whole(Value),
    /// The first items of a list, or bytes of a string, of the lender's value (see the module
    /// documentation).
    Lent(Grown),
}

/// A grown value's kind and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grown {
    /// A list of this many items.
    Items(usize),
    /// A string of this many bytes (joined strings can be empty, and the message then drops
    /// them: an empty one is not looked for in the lender).
    Text(usize),
}

/// One field of a state's output.
#[derive(Debug)]
struct Entry {
    name: String,
    revs: FieldRevs,
    part: Arc<Part>,
}

/// A parser's output as a suspended state holds it (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Output {
    /// The parser the state was taken from, and its revision then.
    parser: u64,
    revision: u64,
    entries: Vec<Entry>,
}

impl Output {
    /// The state of `output`, taken at `revision` of parser `parser`, whose fields changed at
    /// `revs` (fields absent there have not changed since the parser began). `previous`, a
    /// state of the same parser, lends what has not changed since.
    pub(crate) fn take(
        output: &Dict,
        parser: u64,
        revision: u64,
        revs: &[(String, FieldRevs)],
        previous: Option<&Output>,
    ) -> Output {
        let previous = previous.filter(|p| p.parser == parser && p.revision <= revision);
        let entries = output
            .iter()
            .map(|(name, value)| {
                let revs = revs
                    .iter()
                    .find(|(n, _)| n == name)
                    .map_or_else(FieldRevs::default, |(_, r)| *r);
                let before = previous.and_then(|p| p.entries.iter().find(|e| e.name == name));
                let part = match (before, grown_len(value)) {
                    (Some(e), _) if e.revs == revs => Arc::clone(&e.part),
                    (_, Some(grown)) if revs.grew() => Arc::new(Part::Lent(grown)),
                    _ => Arc::new(Part::Whole(value.clone())),
                };
                Entry {
                    name: name.to_owned(),
                    revs,
                    part,
                }
            })
            .collect();
        Output {
            parser,
            revision,
            entries,
        }
    }

    /// The parser the state was taken from.
    pub(crate) fn parser(&self) -> u64 {
        self.parser
    }

    /// The output the state holds; `lender` is the output at a later point of a stream that
    /// went through the state (see the module documentation).
    pub(crate) fn dict(&self, lender: &Dict) -> Dict {
        self.entries
            .iter()
            .map(|e| {
                let value = match &*e.part {
                    Part::Whole(v) => v.clone(),
                    Part::Lent(grown) => lent(lender.get(e.name.as_str()), *grown),
                };
                (e.name.clone(), value)
            })
            .collect()
    }
}

/// The value's kind and length as growth is counted (list items, string bytes).
fn grown_len(value: &Value) -> Option<Grown> {
    match value {
        Value::List(items) => Some(Grown::Items(items.len())),
        Value::Str(s) => Some(Grown::Text(s.len())),
        _ => None,
    }
}

/// The start of the lender's value that a state's grown value was. A lender that does not
/// hold it is not an output the state's stream went on to (a caller's mistake): the value is
/// then `None`.
fn lent(value: Option<&Value>, grown: Grown) -> Value {
    match (value, grown) {
        (_, Grown::Text(0)) => Value::Str(String::new()),
        (Some(Value::List(items)), Grown::Items(n)) if n <= items.len() => {
            Value::List(items[..n].to_vec())
        }
        (Some(Value::Str(s)), Grown::Text(n)) if s.is_char_boundary(n) => Value::Str(s[..n].into()),
        _ => {
            debug_assert!(false, "a lender without the state's value");
            Value::Null
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(pairs: &[(&str, Value)]) -> Dict {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect()
    }

    fn revs(pairs: &[(&str, u64, u64)]) -> Vec<(String, FieldRevs)> {
        pairs
            .iter()
            .map(|(n, c, r)| {
                (
                    (*n).to_string(),
                    FieldRevs {
                        changed: *c,
                        replaced: *r,
                    },
                )
            })
            .collect()
    }

    fn list(n: i64) -> Value {
        Value::List((0..n).map(Value::Int).collect())
    }

    #[test]
    fn grown_fields_hold_their_length_and_give_the_value_back_from_a_later_output() {
        let a = dict(&[
            ("role", Value::Str("assistant".into())),
            ("calls", list(2)),
            ("text", Value::Str("ab".into())),
            ("once", list(1)),
        ]);
        let r1 = revs(&[("calls", 3, 2), ("text", 3, 1), ("once", 3, 3)]);
        let s1 = Output::take(&a, 7, 3, &r1, None);
        let b = dict(&[
            ("role", Value::Str("assistant".into())),
            ("calls", list(5)),
            ("text", Value::Str("ab,cd".into())),
            ("once", list(1)),
        ]);
        let r2 = revs(&[("calls", 6, 2), ("text", 5, 1), ("once", 3, 3)]);
        let s2 = Output::take(&b, 7, 6, &r2, Some(&s1));
        // Restored from the end of the stream (or any later point).
        let end = dict(&[
            ("role", Value::Str("assistant".into())),
            ("calls", list(9)),
            ("text", Value::Str("ab,cd,ef".into())),
            ("once", list(1)),
        ]);
        assert_eq!(s1.dict(&end), a);
        assert_eq!(s2.dict(&end), b);
        assert_eq!(s2.dict(&b), b);
        assert!(matches!(&*s2.entries[1].part, Part::Lent(Grown::Items(5))));
        assert!(matches!(&*s2.entries[2].part, Part::Lent(Grown::Text(5))));
        // Set whole and not grown since: held whole (it may yet be replaced).
        assert!(matches!(&*s2.entries[3].part, Part::Whole(_)));
        // Unchanged since the earlier state: shared with it.
        assert!(Arc::ptr_eq(&s1.entries[0].part, &s2.entries[0].part));
        assert!(Arc::ptr_eq(&s1.entries[3].part, &s2.entries[3].part));
        // Replaced since: copied whole.
        let c = dict(&[("role", Value::Str("x".into())), ("calls", list(1))]);
        let s3 = Output::take(
            &c,
            7,
            8,
            &revs(&[("role", 8, 8), ("calls", 8, 8)]),
            Some(&s2),
        );
        assert_eq!(s3.dict(&Dict::new()), c);
        assert!(matches!(&*s3.entries[1].part, Part::Whole(_)));
        // Another parser's state shares nothing.
        let s4 = Output::take(&b, 8, 6, &r2, Some(&s1));
        assert!(
            s4.entries
                .iter()
                .zip(&s1.entries)
                .all(|(e, f)| !Arc::ptr_eq(&e.part, &f.part))
        );
        assert_eq!(s4.dict(&end), b);
    }

    #[test]
    fn many_states_of_a_growing_list_hold_no_items() {
        let mut out = dict(&[("calls", list(1))]);
        let mut states = Vec::new();
        for n in 2..=1_000 {
            if let Some(Value::List(items)) = out.get_mut("calls") {
                items.push(Value::Int(n - 1));
            }
            let r = revs(&[("calls", n as u64, 1)]);
            let s = Output::take(&out, 1, n as u64, &r, states.last());
            assert!(matches!(&*s.entries[0].part, Part::Lent(Grown::Items(l)) if *l == n as usize));
            states.push(s);
        }
        assert_eq!(states[499].dict(&out), dict(&[("calls", list(501))]));
    }

    #[test]
    fn an_empty_joined_string_needs_no_lender() {
        // Empty regions joined by an empty separator grow the string to nothing, and the
        // message drops it.
        let out = dict(&[("j", Value::Str(String::new()))]);
        let s = Output::take(&out, 1, 3, &revs(&[("j", 3, 2)]), None);
        assert_eq!(s.dict(&Dict::new()), out);
    }
}
