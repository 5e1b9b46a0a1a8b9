//! [`Place`]: where a value lies inside another, as dict entry positions and list indices.
//!
//! A traced region keeps what its content parser made beside the value it gave the message;
//! a transform usually puts that parsed content whole inside its output (`{"function":
//! "{content}"}`), so an audit marks it by its place in the value instead of holding a copy (a
//! sample of many small regions would otherwise hold each one twice).

use super::Value;

/// A place is at most this many keys or indices deep.
pub const DEPTH: usize = 3;

/// At most this many places are compared with the value looked for (a transform places the
/// content near the top of its output; the bound keeps the search linear in the value's size).
const CANDIDATES: usize = 16;

/// A place inside a value: the position of a dict entry or the index of a list item at each
/// level, `len` levels deep (never the value itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    steps: [u32; DEPTH],
    len: u8,
}

impl Place {
    /// The value at this place in `value`.
    pub fn get<'a>(&self, value: &'a Value) -> Option<&'a Value> {
        self.steps[..usize::from(self.len)]
            .iter()
            .try_fold(value, |v, &i| match v {
                Value::Dict(d) => d.get_index(i as usize).map(|(_, v)| v),
                Value::List(items) => items.get(i as usize),
                _ => None,
            })
    }

    /// The place of a value [identical](Value::identical) to `wanted` inside `value` (not
    /// `value` itself), breadth first, up to [`DEPTH`] levels, comparing at most a few
    /// candidates of the same kind and length.
    pub fn find(value: &Value, wanted: &Value) -> Option<Place> {
        let mut level = vec![(
            Place {
                steps: [0; DEPTH],
                len: 0,
            },
            value,
        )];
        let mut compared = 0;
        for depth in 0..DEPTH {
            let mut next = Vec::new();
            for (place, v) in level {
                let children: Box<dyn Iterator<Item = &Value>> = match v {
                    Value::Dict(d) => Box::new(d.values()),
                    Value::List(items) => Box::new(items.iter()),
                    _ => continue,
                };
                for (i, child) in children.enumerate() {
                    let Ok(i) = u32::try_from(i) else { break };
                    let mut here = place;
                    here.steps[depth] = i;
                    here.len += 1;
                    if alike(child, wanted) {
                        if child.identical(wanted) {
                            return Some(here);
                        }
                        compared += 1;
                        if compared == CANDIDATES {
                            return None;
                        }
                    }
                    if matches!(child, Value::Dict(_) | Value::List(_)) && next.len() < CANDIDATES {
                        next.push((here, child));
                    }
                }
            }
            level = next;
        }
        None
    }
}

/// Same variant and length: worth comparing in full.
fn alike(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Dict(x), Value::Dict(y)) => x.len() == y.len(),
        (Value::List(x), Value::List(y)) => x.len() == y.len(),
        (Value::Str(x), Value::Str(y)) => x.len() == y.len(),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::py::json_loads;

    fn v(json: &str) -> Value {
        json_loads(json).unwrap()
    }

    #[test]
    fn a_value_is_found_at_its_place_and_only_an_identical_one() {
        let value = v(r#"{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}"#);
        let parsed = v(r#"{"name": "f", "arguments": {"a": 1}}"#);
        let place = Place::find(&value, &parsed).unwrap();
        assert!(place.get(&value).unwrap().identical(&parsed));
        let inner = Place::find(&value, &v(r#"{"a": 1}"#)).unwrap();
        assert_eq!(inner.get(&value).unwrap().py_repr(), "{'a': 1}");
        // An int is not the float it equals, and a value is not inside itself.
        assert_eq!(Place::find(&v("[1.0]"), &v("1")), None);
        assert_eq!(Place::find(&parsed, &parsed), None);
    }

    #[test]
    fn the_search_compares_a_bounded_number_of_candidates() {
        let items: Vec<String> = (0..100).map(|i| format!("[{i}]")).collect();
        let value = v(&format!("[{}]", items.join(", ")));
        assert!(Place::find(&value, &v("[3]")).is_some());
        assert_eq!(Place::find(&value, &v("[50]")), None, "past the bound");
    }
}
