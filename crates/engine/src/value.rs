//! Python-like values: what templates, parsed regions and messages are made of.
//!
//! The reference works on Python objects, so the engine needs their semantics where they leak
//! into results: integers of any size, floats that may be NaN or infinite, dicts that keep
//! insertion order (a repeated key keeps its first position and takes the last value), and
//! Python truthiness for template options.
//!
//! Strings are Rust strings. Python strings may also hold lone surrogates (JSON escapes such as
//! `"\ud800"` produce them); those are stored as the code points of [`SURROGATE_BASE`] onwards so
//! that equality and concatenation behave as in Python, and serializers turn them back into
//! surrogates (see [`surrogate_of`]).

use num_bigint::BigInt;

pub mod dict;
pub mod place;

/// An ordered dict with string keys, as produced by Python's `json.loads` (see [`dict`]).
pub use dict::{Dict, Key};
pub use place::Place;

/// A Python value restricted to what JSON-described templates and parsers can produce.
#[derive(Clone, Debug)]
pub enum Value {
    /// `None`.
    Null,
    /// `True` / `False`.
    Bool(bool),
    /// An integer that fits in `i64`.
    Int(i64),
    /// An integer outside the `i64` range (never used for values that fit).
    BigInt(Box<BigInt>),
    /// A Python float.
    Float(f64),
    /// A Python str.
    Str(String),
    /// A Python list.
    List(Vec<Value>),
    /// A Python dict (insertion-ordered).
    Dict(Dict),
}

/// Lone surrogate U+D800 + k is stored as the code point `SURROGATE_BASE + k` (a private-use
/// code point in plane 16 that real model output does not use).
pub const SURROGATE_BASE: u32 = 0x10_F800;

/// The lone surrogate (0xD800..=0xDFFF) that `c` stands for, if it is one of the reserved
/// stand-in code points.
pub fn surrogate_of(c: char) -> Option<u16> {
    let cp = c as u32;
    (SURROGATE_BASE..SURROGATE_BASE + 0x800)
        .contains(&cp)
        .then(|| (0xD800 + (cp - SURROGATE_BASE)) as u16)
}

/// The stand-in character for the lone surrogate `s` (0xD800..=0xDFFF).
pub fn surrogate_char(s: u16) -> char {
    debug_assert!((0xD800..=0xDFFF).contains(&s));
    char::from_u32(SURROGATE_BASE + (s as u32 - 0xD800)).expect("private-use code point")
}

impl Value {
    /// Builds an integer value, normalizing to `Int` when it fits.
    pub fn from_bigint(n: BigInt) -> Value {
        match i64::try_from(&n) {
            Ok(small) => Value::Int(small),
            Err(_) => Value::BigInt(Box::new(n)),
        }
    }

    /// Python's type name, for error messages (`dict`, `list`, `str`, `int`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Dict(_) => "dict",
        }
    }

    /// The JSON kind with its article, for messages about JSON files (`an object`, `a list`,
    /// `a number`, ...).
    pub fn json_kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::BigInt(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::List(_) => "a list",
            Value::Dict(_) => "an object",
        }
    }

    /// Python truthiness (`bool(value)`).
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::BigInt(_) => true,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Dict(d) => !d.is_empty(),
        }
    }

    /// The reference's "empty" test for dropping keys at the end: `None`, `""`, `[]` or `{}`.
    pub fn is_empty_value(&self) -> bool {
        match self {
            Value::Null => true,
            Value::Str(s) => s.is_empty(),
            Value::List(l) => l.is_empty(),
            Value::Dict(d) => d.is_empty(),
            _ => false,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The dict, if this is one.
    pub fn as_dict(&self) -> Option<&Dict> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// The dict, mutably, if this is one.
    pub fn as_dict_mut(&mut self) -> Option<&mut Dict> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// The list, if this is one.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// Python `==` between two values (`1 == 1.0 == True`, NaN unequal to itself, dicts equal
    /// regardless of key order).
    pub fn py_eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self.as_number(), other.as_number()) {
            (Some(a), Some(b)) => return a.py_eq(&b),
            (Some(_), None) | (None, Some(_)) => return false,
            (None, None) => {}
        }
        match (self, other) {
            (Null, Null) => true,
            (Str(a), Str(b)) => a == b,
            (List(a), List(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.py_eq(y)),
            (Dict(a), Dict(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v.py_eq(w)))
            }
            _ => false,
        }
    }

    /// Equality as JSON data: Python's `==`, except that a boolean is never equal to a number
    /// (`True == 1` in Python, but `true` and `1` are different JSON), at any depth.
    pub fn json_eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Bool(x), Bool(y)) => x == y,
            (Bool(_), _) | (_, Bool(_)) => false,
            (List(x), List(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.json_eq(q)),
            (Dict(x), Dict(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .all(|(k, v)| y.get(k).is_some_and(|w| v.json_eq(w)))
            }
            _ => self.py_eq(other),
        }
    }

    /// Same variant and contents: ints and floats told apart, floats bit for bit, dict key
    /// order significant (what a value recorded from the reference must reproduce, and what
    /// two values must be for one to stand for the other).
    pub fn identical(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(x), Bool(y)) => x == y,
            (Int(x), Int(y)) => x == y,
            (BigInt(x), BigInt(y)) => x == y,
            (Float(x), Float(y)) => x.to_bits() == y.to_bits(),
            (Str(x), Str(y)) => x == y,
            (List(x), List(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.identical(q))
            }
            (Dict(x), Dict(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((k, v), (l, w))| k == l && v.identical(w))
            }
            _ => false,
        }
    }

    fn as_number(&self) -> Option<Number<'_>> {
        match self {
            Value::Bool(b) => Some(Number::Int(*b as i64)),
            Value::Int(i) => Some(Number::Int(*i)),
            Value::BigInt(b) => Some(Number::Big(b)),
            Value::Float(f) => Some(Number::Float(*f)),
            _ => None,
        }
    }
}

/// A numeric view used for Python's cross-type equality.
enum Number<'a> {
    Int(i64),
    Big(&'a BigInt),
    Float(f64),
}

impl Number<'_> {
    fn py_eq(&self, other: &Number<'_>) -> bool {
        use Number::*;
        match (self, other) {
            (Int(a), Int(b)) => a == b,
            (Big(a), Big(b)) => a == b,
            (Int(_), Big(_)) | (Big(_), Int(_)) => false, // normalized: a BigInt never fits i64
            (Float(a), Float(b)) => a == b,
            (Int(i), Float(f)) | (Float(f), Int(i)) => int_eq_float(&BigInt::from(*i), *f),
            (Big(b), Float(f)) | (Float(f), Big(b)) => int_eq_float(b, *f),
        }
    }
}

/// Exact comparison of an integer with a float, as Python does it (no rounding of the integer).
fn int_eq_float(i: &BigInt, f: f64) -> bool {
    if !f.is_finite() || f.fract() != 0.0 {
        return false;
    }
    // `f` is integral and finite, so the conversion is exact.
    use num_traits::FromPrimitive;
    BigInt::from_f64(f).is_some_and(|g| &g == i)
}

impl PartialEq for Value {
    /// Structural equality with Python semantics (see [`Value::py_eq`]).
    fn eq(&self, other: &Value) -> bool {
        self.py_eq(other)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthiness_follows_python() {
        assert!(!Value::Null.truthy());
        assert!(!Value::Int(0).truthy());
        assert!(Value::Int(-1).truthy());
        assert!(!Value::Float(0.0).truthy());
        assert!(Value::Float(f64::NAN).truthy());
        assert!(Value::from("false").truthy());
        assert!(!Value::from("").truthy());
        assert!(!Value::List(vec![]).truthy());
        assert!(Value::List(vec![Value::Null]).truthy());
    }

    #[test]
    fn numbers_compare_across_types() {
        assert!(Value::Int(1).py_eq(&Value::Float(1.0)));
        assert!(Value::Bool(true).py_eq(&Value::Int(1)));
        assert!(!Value::Int(1).py_eq(&Value::Float(1.5)));
        assert!(!Value::Float(f64::NAN).py_eq(&Value::Float(f64::NAN)));
        assert!(!Value::from("1").py_eq(&Value::Int(1)));
        let big = Value::from_bigint(BigInt::from(1u64 << 63) * 4);
        assert!(big.py_eq(&Value::Float(2f64.powi(65))));
        assert!(!big.py_eq(&Value::Float(2f64.powi(65) + 2f64.powi(13))));
    }

    #[test]
    fn surrogate_stand_ins_round_trip() {
        for s in [0xD800u16, 0xDBFF, 0xDC00, 0xDFFF] {
            assert_eq!(surrogate_of(surrogate_char(s)), Some(s));
        }
        assert_eq!(surrogate_of('a'), None);
        assert_eq!(surrogate_of('\u{10F7FF}'), None);
    }
}
