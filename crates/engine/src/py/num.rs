//! Python's number conversions: `int(str)`, `float(str)`, `repr(float)` and `int(float)`.
//!
//! The reference's `int` and `float` content parsers call `int()` / `float()` on region text,
//! and tool-argument coercion converts between floats and integers, so the exact grammar
//! (Unicode digits, underscores, whitespace, `inf`/`nan`, the 4300-digit limit) decides whether
//! a region parses. Conversion follows CPython 3.11: the text is first mapped to ASCII (Unicode
//! whitespace to a space, Unicode decimal digits to ASCII digits, anything else non-ASCII ends
//! the text as an invalid character) and then parsed.

use super::repr::{py_repr_str, py_repr_str_truncated};
use crate::value::Value;
use num_bigint::BigInt;
use num_traits::FromPrimitive;
use pyunicode::{decimal_value, isspace};
use std::fmt;

/// CPython's default `sys.get_int_max_str_digits()`: decimal strings with more digits do not
/// convert to `int`.
pub(crate) const INT_MAX_STR_DIGITS: usize = 4300;

/// Python's `ValueError` from a number conversion, with Python's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PyValueError {
    pub message: String,
}

impl PyValueError {
    fn new(message: String) -> PyValueError {
        PyValueError { message }
    }

    /// The error `int()` raises for a decimal string of more than [`INT_MAX_STR_DIGITS`] digits.
    pub(crate) fn int_digit_limit(digits: usize) -> PyValueError {
        PyValueError::new(format!(
            "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
             value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
        ))
    }
}

impl fmt::Display for PyValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PyValueError {}

/// Python's `int(s)` (base 10).
///
/// Accepts surrounding whitespace, one sign, decimal digits of any script, single underscores
/// between digits and leading zeros; raises `ValueError` for anything else and for more than
/// 4300 digits (leading zeros count, underscores and the sign do not).
pub(crate) fn py_int(s: &str) -> Result<Value, PyValueError> {
    let invalid = || {
        PyValueError::new(format!(
            "invalid literal for int() with base 10: {}",
            py_repr_str_truncated(s, 200)
        ))
    };
    let b = to_ascii_numeric(s);
    let mut i = skip_ascii_space(&b, 0);
    let negative = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    if b.get(i) == Some(&b'_') {
        return Err(invalid());
    }
    let mut digits = Vec::with_capacity(b.len() - i);
    let mut prev = 0u8;
    while let Some(&c) = b.get(i) {
        if c == b'_' {
            if prev == b'_' {
                return Err(invalid());
            }
        } else if c.is_ascii_digit() {
            digits.push(c);
        } else {
            break;
        }
        prev = c;
        i += 1;
    }
    if prev == b'_' {
        return Err(invalid());
    }
    if digits.len() > INT_MAX_STR_DIGITS {
        return Err(PyValueError::int_digit_limit(digits.len()));
    }
    if digits.is_empty() || skip_ascii_space(&b, i) != b.len() {
        return Err(invalid());
    }
    Ok(int_from_ascii_digits(negative, &digits))
}

/// The integer written by `digits` (ASCII `0`-`9`, at least one), negated if `negative`.
pub(crate) fn int_from_ascii_digits(negative: bool, digits: &[u8]) -> Value {
    if digits.len() <= 18 {
        let magnitude = digits
            .iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
        return Value::Int(if negative { -magnitude } else { magnitude });
    }
    let magnitude = BigInt::parse_bytes(digits, 10).unwrap_or_default();
    Value::from_bigint(if negative { -magnitude } else { magnitude })
}

/// Python's `float(s)`.
///
/// Accepts surrounding whitespace, a sign, decimal digits of any script, underscores between
/// digits (PEP 515), `1.`, `.5`, exponents, and `inf`, `infinity`, `nan` in any case. The result
/// is correctly rounded; out-of-range values become infinities or zeros without error.
pub(crate) fn py_float(s: &str) -> Result<f64, PyValueError> {
    let invalid = || {
        PyValueError::new(format!(
            "could not convert string to float: {}",
            py_repr_str(s)
        ))
    };
    let mut b = to_ascii_numeric(s);
    if b.contains(&b'_') {
        b = remove_underscores(&b).ok_or_else(invalid)?;
    }
    let start = skip_ascii_space(&b, 0);
    let mut end = b.len();
    while end > start + 1 && is_ascii_py_space(b[end - 1]) {
        end -= 1;
    }
    if start == end {
        return Err(invalid());
    }
    parse_float_text(&b[start..end]).ok_or_else(invalid)
}

/// CPython's `PyOS_string_to_double` on an ASCII text that must be consumed entirely: a decimal
/// number (`[+-]?(digits[.digits?]|.digits)([eE][+-]?digits)?`) or `inf`/`infinity`/`nan` with
/// an optional sign, in any case.
pub(crate) fn parse_float_text(t: &[u8]) -> Option<f64> {
    match scan_decimal(t) {
        Some(n) if n.end == t.len() => Some(decimal_to_f64(t, &n)),
        Some(_) => None,
        None => parse_inf_or_nan(t),
    }
}

/// The parts of a decimal number that `scan_decimal` found.
struct DecimalScan {
    negative: bool,
    /// Range of the integer digits.
    int: (usize, usize),
    /// Range of the fraction digits (empty if none).
    frac: (usize, usize),
    /// Range of the exponent digits, with the exponent's sign (empty if no valid exponent).
    exp: (usize, usize),
    exp_negative: bool,
    end: usize,
}

/// Scans a decimal number at the start of `t` like CPython's `_Py_dg_strtod`: `None` when there
/// is no digit at all; an exponent without digits is not part of the number.
fn scan_decimal(t: &[u8]) -> Option<DecimalScan> {
    let digits_from = |i: usize| i + t[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut i = 0;
    let negative = t.first() == Some(&b'-');
    if matches!(t.first(), Some(b'-' | b'+')) {
        i = 1;
    }
    let int = (i, digits_from(i));
    i = int.1;
    let mut frac = (i, i);
    if t.get(i) == Some(&b'.') {
        frac = (i + 1, digits_from(i + 1));
        i = frac.1;
    }
    if int.0 == int.1 && frac.0 == frac.1 {
        return None;
    }
    let mut exp = (i, i);
    let mut exp_negative = false;
    if matches!(t.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        exp_negative = t.get(j) == Some(&b'-');
        if matches!(t.get(j), Some(b'-' | b'+')) {
            j += 1;
        }
        let exp_end = digits_from(j);
        if exp_end > j {
            exp = (j, exp_end);
            i = exp_end;
        }
    }
    Some(DecimalScan {
        negative,
        int,
        frac,
        exp,
        exp_negative,
        end: i,
    })
}

/// Texts up to this length go straight to Rust's (correctly rounded) parser; longer ones are
/// first reduced to their significant digits so that huge exponents combined with very many
/// digits are handled exactly (Rust saturates long exponents early).
const DIRECT_PARSE_MAX_LEN: usize = 4096;

/// Exponents beyond this magnitude are clipped, as CPython's `MAX_ABS_EXP`.
const MAX_ABS_EXP: i64 = 1_100_000_000;

fn decimal_to_f64(t: &[u8], n: &DecimalScan) -> f64 {
    let text = &t[..n.end];
    if text.len() <= DIRECT_PARSE_MAX_LEN {
        // The text is ASCII and in a grammar Rust's parser accepts.
        if let Some(x) = std::str::from_utf8(text)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
        {
            return x;
        }
    }
    let sign = if n.negative { -1.0 } else { 1.0 };
    let int = &t[n.int.0..n.int.1];
    let frac = &t[n.frac.0..n.frac.1];
    // value = 0.<significant digits> * 10^point
    let int_zeros = int.iter().take_while(|&&c| c == b'0').count();
    let (leading, mut point) = if int_zeros < int.len() {
        (int_zeros, (int.len() - int_zeros) as i64)
    } else {
        let frac_zeros = frac.iter().take_while(|&&c| c == b'0').count();
        (int.len() + frac_zeros, -(frac_zeros as i64))
    };
    let all: Vec<u8> = int.iter().chain(frac).copied().skip(leading).collect();
    let significant = &all[..all.len() - all.iter().rev().take_while(|&&c| c == b'0').count()];
    if significant.is_empty() {
        return sign * 0.0;
    }
    point += exponent_value(&t[n.exp.0..n.exp.1], n.exp_negative);
    if point > 310 {
        return sign * f64::INFINITY;
    }
    if point < -330 {
        return sign * 0.0;
    }
    let mut canonical = String::with_capacity(significant.len() + 16);
    canonical.push_str("0.");
    canonical.extend(significant.iter().map(|&c| c as char));
    canonical.push_str(&format!("e{point}"));
    sign * canonical.parse::<f64>().unwrap_or(f64::NAN)
}

/// The exponent's value, clipped to [`MAX_ABS_EXP`] like CPython.
fn exponent_value(digits: &[u8], negative: bool) -> i64 {
    let digits = &digits[digits.iter().take_while(|&&c| c == b'0').count()..];
    let magnitude = if digits.len() > 9 {
        MAX_ABS_EXP
    } else {
        let v = digits
            .iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
        v.min(MAX_ABS_EXP)
    };
    if negative { -magnitude } else { magnitude }
}

/// CPython's `_Py_parse_inf_or_nan`, requiring the whole text to be consumed.
fn parse_inf_or_nan(t: &[u8]) -> Option<f64> {
    let (negative, rest) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let value = if rest.eq_ignore_ascii_case(b"inf") || rest.eq_ignore_ascii_case(b"infinity") {
        f64::INFINITY
    } else if rest.eq_ignore_ascii_case(b"nan") {
        f64::NAN
    } else {
        return None;
    };
    Some(if negative { -value } else { value })
}

/// PEP 515 underscores as `float()` checks them: each one must sit between two digits. Returns
/// the text without them, or `None` if one is misplaced.
fn remove_underscores(b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len());
    let mut prev = 0u8;
    for &c in b {
        if c == b'_' {
            if !prev.is_ascii_digit() {
                return None;
            }
        } else {
            if prev == b'_' && !c.is_ascii_digit() {
                return None;
            }
            out.push(c);
        }
        prev = c;
    }
    (prev != b'_').then_some(out)
}

/// CPython's `_PyUnicode_TransformDecimalAndSpaceToASCII`: ASCII stays, Unicode whitespace
/// becomes a space, Unicode decimal digits become ASCII digits, and the first other character
/// becomes `?` and ends the text.
fn to_ascii_numeric(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) < 127 {
            out.push(c as u8);
        } else if isspace(c) {
            out.push(b' ');
        } else if let Some(d) = decimal_value(c) {
            out.push(b'0' + d);
        } else {
            out.push(b'?');
            break;
        }
    }
    out
}

/// C's `isspace` in the "C" locale, which CPython uses once text is ASCII.
fn is_ascii_py_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t'..=b'\r')
}

fn skip_ascii_space(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|&c| is_ascii_py_space(c)) {
        i += 1;
    }
    i
}

/// Python's `repr(float)`: the shortest text that reads back as the same float, in positional
/// notation for decimal exponents -4..16 and scientific notation (`1e-05`, `1.5e+16`) otherwise;
/// `inf`, `-inf`, `nan`.
pub(crate) fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_string();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.to_string();
    }
    let (digits, decpt) = shortest_digits(f.abs());
    let mut out = String::with_capacity(digits.len() + 8);
    if f.is_sign_negative() {
        out.push('-');
    }
    let n = digits.len() as i32;
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let exp = decpt - 1;
        out.push_str(&format!(
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        ));
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-decpt) as usize));
        out.push_str(&digits);
    } else if decpt >= n {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (decpt - n) as usize));
        out.push_str(".0");
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
    out
}

/// The shortest round-tripping decimal digits of a finite `f >= 0` and the position of the
/// decimal point (`value = 0.DIGITS * 10^decpt`); zero is `("0", 1)`.
///
/// Among the shortest candidates Python takes the one closest to `f`, and on an exact tie the
/// one with an even last digit. Rust's `{:e}` agrees except on exact ties, where it rounds up.
fn shortest_digits(f: f64) -> (String, i32) {
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let decpt = exp.parse::<i32>().unwrap_or(0) + 1;
    // A tie needs the rounding interval to hold two candidates: at least 16 digits.
    if digits.len() >= 16
        && digits.ends_with(['1', '3', '5', '7', '9'])
        && let Some(even) = tie_neighbour(f, &digits, decpt)
    {
        digits = even;
    }
    (digits, decpt)
}

/// The neighbour of `digits` (last digit one lower or higher) when `f` lies exactly halfway
/// between the two and the neighbour also reads back as `f`.
fn tie_neighbour(f: f64, digits: &str, decpt: i32) -> Option<String> {
    let d: BigInt = digits.parse().ok()?;
    let last_digit_exp = decpt - digits.len() as i32;
    for step in [-1i32, 1] {
        let neighbour = &d + step;
        let text = neighbour.to_string();
        if text.len() != digits.len() {
            continue;
        }
        let midpoint_twice = &d * 2 + step; // (d + neighbour), i.e. twice the midpoint
        if is_exactly(f, &midpoint_twice, last_digit_exp)
            && format!("{text}e{last_digit_exp}").parse::<f64>().ok() == Some(f)
        {
            return Some(text);
        }
    }
    None
}

/// Whether `f == twice * 10^exp10 / 2` exactly (`f` finite and positive).
fn is_exactly(f: f64, twice: &BigInt, exp10: i32) -> bool {
    let bits = f.to_bits();
    let biased = ((bits >> 52) & 0x7FF) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (m, e) = match biased {
        0 => (fraction, -1074),
        _ => (fraction | (1 << 52), biased - 1075),
    };
    // twice * 10^exp10 == m * 2^(e + 1), with negative powers moved to the other side.
    let mut lhs = twice.clone();
    let mut rhs = BigInt::from(m);
    let ten = BigInt::from(10);
    if exp10 >= 0 {
        lhs *= num_traits::pow(ten, exp10 as usize);
    } else {
        rhs *= num_traits::pow(ten, (-exp10) as usize);
    }
    if e + 1 >= 0 {
        rhs <<= (e + 1) as usize;
    } else {
        lhs <<= (-(e + 1)) as usize;
    }
    lhs == rhs
}

/// Python's `int(f)` for a float: truncation toward zero, exact at any magnitude; `None` for
/// infinities and NaN (where Python raises).
pub(crate) fn int_from_float(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    let t = f.trunc();
    if t.abs() < 9.0e18 {
        return Some(Value::Int(t as i64));
    }
    BigInt::from_f64(t).map(Value::from_bigint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> Option<String> {
        py_int(s).ok().map(|v| match v {
            Value::Int(i) => i.to_string(),
            Value::BigInt(b) => b.to_string(),
            other => format!("{other:?}"),
        })
    }

    #[test]
    fn int_grammar() {
        assert_eq!(int(" +1_000 ").as_deref(), Some("1000"));
        assert_eq!(int("-007").as_deref(), Some("-7"));
        assert_eq!(int("\u{0663}_\u{0663}").as_deref(), Some("33"));
        assert_eq!(int("\u{3000}5\u{85}").as_deref(), Some("5"));
        for bad in [
            "", " ", "_1", "1_", "1__0", "+-1", "1.0", "0x10", "\x1c1", "1\0", "+_1", "١é",
        ] {
            assert_eq!(int(bad), None, "{bad:?}");
        }
        assert_eq!(
            int("99999999999999999999").as_deref(),
            Some("99999999999999999999")
        );
    }

    #[test]
    fn int_digit_limit_counts_digits_only() {
        assert!(py_int(&"1".repeat(4300)).is_ok());
        assert!(py_int(&format!("-{}", "1".repeat(4300))).is_ok());
        assert!(py_int(&"1_".repeat(4300)[..8599]).is_ok());
        let err = py_int(&"0".repeat(4301)).unwrap_err();
        assert!(err.message.contains("value has 4301 digits"), "{err}");
        // The limit is checked after the digits and before trailing garbage ...
        assert!(
            py_int(&format!("{}x", "1".repeat(4301)))
                .unwrap_err()
                .message
                .contains("Exceeds")
        );
        // ... but after the underscore checks.
        assert!(
            py_int(&format!("{}_", "1".repeat(4301)))
                .unwrap_err()
                .message
                .contains("invalid")
        );
    }

    #[test]
    fn int_error_message_quotes_the_text() {
        assert_eq!(
            py_int("x'").unwrap_err().message,
            "invalid literal for int() with base 10: \"x'\""
        );
    }

    #[test]
    fn float_grammar() {
        assert_eq!(py_float("1_0.5_5e1_0"), Ok(105500000000.0));
        assert_eq!(py_float(" .5 "), Ok(0.5));
        assert_eq!(py_float("5."), Ok(5.0));
        assert_eq!(py_float("1.e5"), Ok(100000.0));
        assert_eq!(py_float("-iNfInItY"), Ok(f64::NEG_INFINITY));
        assert!(py_float("-nan").unwrap().is_sign_negative());
        assert_eq!(py_float("1e99999999999999999999"), Ok(f64::INFINITY));
        assert_eq!(py_float("١.٥"), Ok(1.5));
        for bad in [
            "", ".", "1e", "1e+", "1_e5", "1e_5", "._5", "infinit", "nan(1)", "0x1p3", "1f",
        ] {
            assert!(py_float(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            py_float("x").unwrap_err().message,
            "could not convert string to float: 'x'"
        );
    }

    #[test]
    fn long_float_texts_are_exact() {
        let tiny_then_big = format!("0.{}1e1000000", "0".repeat(999_999));
        assert_eq!(py_float(&tiny_then_big), Ok(1.0));
        let big_then_tiny = format!("1{}e-100000", "0".repeat(100_000));
        assert_eq!(py_float(&big_then_tiny), Ok(1.0));
        let long = format!("{}e-400", "1".repeat(400));
        assert_eq!(py_float(&long), Ok(0.1111111111111111));
    }

    #[test]
    fn repr_switches_notation_like_python() {
        let cases = [
            (1.0, "1.0"),
            (1e-5, "1e-05"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (123.456, "123.456"),
            (-0.0, "-0.0"),
            (1.5e300, "1.5e+300"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NAN, "nan"),
            (9007199254740993.0, "9007199254740992.0"),
            // 86597828995715.625 exactly: a tie between ...62 and ...63; Python takes the even one.
            (86597828995715.62, "86597828995715.62"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(f), want);
        }
    }

    #[test]
    fn int_from_float_is_exact() {
        assert_eq!(int_from_float(-2.9), Some(Value::Int(-2)));
        assert_eq!(int_from_float(f64::NAN), None);
        let big = int_from_float(1e20).unwrap();
        assert!(matches!(&big, Value::BigInt(b) if b.to_string() == "100000000000000000000"));
    }
}
