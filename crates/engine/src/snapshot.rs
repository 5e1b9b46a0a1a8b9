//! The parser's output as a suspended state holds it: shared with the states taken before it,
//! so that the states of a long stream cost about the output once, not once per state.
//!
//! Between two states of one parser a field's value either stays as it was (shared whole), or
//! only grows (a `repeats` field's list gets items appended, a `join` field's string gets text
//! appended: the state keeps the earlier state's value and the part added since), or is
//! replaced (copied). A replay that keeps a state every thousand steps of a stream of 150,000
//! tool calls thus holds each call once, where copying the output each time held it once per
//! later state (quadratic: gigabytes for a megabyte of text).

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

/// One field's value in a state.
#[derive(Debug)]
enum Part {
    /// The whole value.
    Whole(Value),
    /// An earlier state's list, then the items appended since.
    Items {
        earlier: Arc<Part>,
        added: Vec<Value>,
    },
    /// An earlier state's string, then the text appended since.
    Text { earlier: Arc<Part>, added: String },
}

/// The end of every chain a dropped part leaves behind (see `Drop for Part`).
fn end_of_chain() -> Arc<Part> {
    static END: std::sync::OnceLock<Arc<Part>> = std::sync::OnceLock::new();
    Arc::clone(END.get_or_init(|| Arc::new(Part::Whole(Value::Null))))
}

impl Part {
    /// The earlier part this one extends, taken out (the end of the chain left in its place).
    fn take_earlier(&mut self) -> Option<Arc<Part>> {
        match self {
            Part::Whole(_) => None,
            Part::Items { earlier, .. } | Part::Text { earlier, .. } => {
                Some(std::mem::replace(earlier, end_of_chain()))
            }
        }
    }

    /// The value's length as growth is counted (list items, string bytes).
    fn grown_len(value: &Value) -> Option<usize> {
        match value {
            Value::List(items) => Some(items.len()),
            Value::Str(s) => Some(s.len()),
            _ => None,
        }
    }

    /// The value this part stands for, built without recursion (a chain can be one link per
    /// state of a long stream).
    fn value(self: &Arc<Part>) -> Value {
        let mut chain = Vec::new();
        let mut at = self;
        let base = loop {
            match &**at {
                Part::Whole(v) => break v,
                Part::Items { earlier, .. } | Part::Text { earlier, .. } => {
                    chain.push(at);
                    at = earlier;
                }
            }
        };
        let mut value = base.clone();
        for link in chain.into_iter().rev() {
            match (&mut value, &**link) {
                (Value::List(items), Part::Items { added, .. }) => {
                    items.extend(added.iter().cloned());
                }
                (Value::Str(s), Part::Text { added, .. }) => s.push_str(added),
                // A chain is only built over a value of its own kind.
                _ => {}
            }
        }
        value
    }
}

/// Drops a chain link by link: the default drop would recurse once per link, and a chain can
/// be one link per state of a long stream.
impl Drop for Part {
    fn drop(&mut self) {
        let mut next = self.take_earlier();
        while let Some(link) = next {
            next = match Arc::try_unwrap(link) {
                Ok(mut part) => part.take_earlier(),
                // Still held by a later state: that state drops it.
                Err(_) => None,
            };
        }
    }
}

/// One field of a state's output.
#[derive(Debug)]
struct Entry {
    name: String,
    revs: FieldRevs,
    /// The value's grown length (list items, string bytes) when the state was taken.
    len: Option<usize>,
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
                let len = Part::grown_len(value);
                let before = previous.and_then(|p| p.entries.iter().find(|e| e.name == name));
                let part = match before {
                    Some(e) if e.revs == revs => Arc::clone(&e.part),
                    Some(e) if revs.replaced <= previous.map_or(0, |p| p.revision) => {
                        grown(value, e)
                    }
                    _ => Arc::new(Part::Whole(value.clone())),
                };
                Entry {
                    name: name.to_owned(),
                    revs,
                    len,
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

    /// The output the state holds.
    pub(crate) fn dict(&self) -> Dict {
        self.entries
            .iter()
            .map(|e| (e.name.clone(), e.part.value()))
            .collect()
    }
}

/// A field's value that only grew since the earlier state's `e`: that state's part and what
/// was appended since.
fn grown(value: &Value, e: &Entry) -> Arc<Part> {
    let earlier = Arc::clone(&e.part);
    match (value, e.len) {
        (Value::List(items), Some(n)) if n <= items.len() => Arc::new(Part::Items {
            earlier,
            added: items[n..].to_vec(),
        }),
        (Value::Str(s), Some(n)) if s.is_char_boundary(n) && n <= s.len() => Arc::new(Part::Text {
            earlier,
            added: s[n..].to_string(),
        }),
        _ => Arc::new(Part::Whole(value.clone())),
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
    fn grown_fields_keep_only_what_was_added_and_give_the_whole_value_back() {
        let a = dict(&[
            ("role", Value::Str("assistant".into())),
            ("calls", list(2)),
            ("text", Value::Str("ab".into())),
        ]);
        let s1 = Output::take(&a, 7, 3, &revs(&[("calls", 3, 2), ("text", 3, 1)]), None);
        assert_eq!(s1.dict(), a);
        let b = dict(&[
            ("role", Value::Str("assistant".into())),
            ("calls", list(5)),
            ("text", Value::Str("ab,cd".into())),
        ]);
        let r2 = revs(&[("calls", 6, 2), ("text", 5, 1)]);
        let s2 = Output::take(&b, 7, 6, &r2, Some(&s1));
        assert_eq!(s2.dict(), b);
        assert!(matches!(&*s2.entries[1].part, Part::Items { added, .. } if added.len() == 3));
        assert!(matches!(&*s2.entries[2].part, Part::Text { added, .. } if added == ",cd"));
        assert!(Arc::ptr_eq(&s1.entries[0].part, &s2.entries[0].part));
        // Replaced since: copied whole.
        let c = dict(&[("role", Value::Str("x".into())), ("calls", list(1))]);
        let s3 = Output::take(
            &c,
            7,
            8,
            &revs(&[("role", 8, 8), ("calls", 8, 8)]),
            Some(&s2),
        );
        assert_eq!(s3.dict(), c);
        assert!(matches!(&*s3.entries[1].part, Part::Whole(_)));
        // Another parser's state lends nothing.
        let s4 = Output::take(&b, 8, 6, &r2, Some(&s1));
        assert!(
            s4.entries
                .iter()
                .all(|e| matches!(&*e.part, Part::Whole(_)))
        );
        assert_eq!(s4.dict(), b);
    }

    #[test]
    fn a_long_chain_gives_its_value_back_without_recursion() {
        let mut out = dict(&[("calls", list(0))]);
        let mut previous: Option<Output> = None;
        for n in 1..=100_000 {
            if let Some(Value::List(items)) = out.get_mut("calls") {
                items.push(Value::Int(n - 1));
            }
            let r = revs(&[("calls", n as u64, 1)]);
            previous = Some(Output::take(&out, 1, n as u64, &r, previous.as_ref()));
        }
        assert_eq!(previous.unwrap().dict(), dict(&[("calls", list(100_000))]));
        // Dropping the chain (one link per state) does not recurse.
    }
}
