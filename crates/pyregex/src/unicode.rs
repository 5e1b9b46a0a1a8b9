//! Lookups over the generated tables: the case equivalents the matcher uses and the two
//! string-level Python helpers the parser needs. Python's `str` character data itself
//! (`isspace`, `isalpha`, `isdigit`, `isidentifier`, decimal values) comes from `pyunicode`.

use super::unicode_tables as t;

pub use pyunicode::in_table;

/// Python `str.isdigit()` for a string: non-empty and every character a digit.
pub fn py_isdigit(s: &str) -> bool {
    !s.is_empty() && s.chars().all(pyunicode::isdigit)
}

/// Python `int(s)` for a string of `str.isdecimal()` characters; `None` when Python's `int()`
/// would raise (a digit that is not decimal, such as a superscript). Huge values saturate.
pub fn py_int(s: &str) -> Option<u64> {
    let mut value: u64 = 0;
    for c in s.chars() {
        let d = pyunicode::decimal_value(c)?;
        value = value.saturating_mul(10).saturating_add(u64::from(d));
    }
    Some(value)
}

/// The other case variants of `c` as the matcher sees them (simple case folding; the Turkic
/// dotted and dotless `i` make this relation symmetric but not transitive).
pub fn other_cases(c: u32) -> &'static [u32] {
    match t::CASES.binary_search_by_key(&c, |&(k, _)| k) {
        Ok(i) => {
            let others = &t::CASES[i].1;
            let n = others.iter().take_while(|&&o| o != 0).count();
            &others[..n]
        }
        Err(_) => &[],
    }
}

/// The other case variants of `c` under the ASCII encoding: only ASCII letters pair up.
pub fn other_cases_ascii(c: u32) -> Option<u32> {
    match c {
        0x41..=0x5A => Some(c + 0x20),
        0x61..=0x7A => Some(c - 0x20),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_string_helpers() {
        assert!(py_isdigit("12") && py_isdigit("²") && !py_isdigit("1a") && !py_isdigit(""));
        assert_eq!(py_int("12"), Some(12));
        assert_eq!(py_int("١٢"), Some(12));
        assert_eq!(py_int("²"), None);
        assert_eq!(py_int("99999999999999999999999"), Some(u64::MAX));
    }

    #[test]
    fn cases() {
        assert_eq!(other_cases('k' as u32), &['K' as u32, 0x212A]);
        assert_eq!(other_cases('1' as u32), &[] as &[u32]);
        assert!(other_cases('I' as u32).contains(&0x131));
        assert!(!other_cases('I' as u32).contains(&0x130));
        assert_eq!(other_cases_ascii('a' as u32), Some('A' as u32));
        assert_eq!(other_cases_ascii(0x212A), None);
    }
}
