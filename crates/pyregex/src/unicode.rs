//! Lookups over the generated tables: Python `str` predicates the parser relies on and the case
//! equivalents the matcher uses.

use super::unicode_tables as t;

/// Whether `c` lies in one of the sorted inclusive ranges.
pub fn in_table(table: &[(u32, u32)], c: u32) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Python `str.isspace()` for one character.
pub fn py_isspace(c: char) -> bool {
    in_table(t::PY_SPACE, c as u32)
}

/// Python `str.isalpha()` for one character.
pub fn py_isalpha(c: char) -> bool {
    in_table(t::PY_ALPHA, c as u32)
}

/// Python `str.isdigit()` for a non-empty string.
pub fn py_isdigit(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| in_table(t::PY_DIGIT, c as u32))
}

/// Python `str.isidentifier()`.
pub fn py_isidentifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) if in_table(t::PY_ID_START, first as u32) => {
            chars.all(|c| in_table(t::PY_ID_CONTINUE, c as u32))
        }
        _ => false,
    }
}

/// Python `int(s)` for a string of `str.isdecimal()` characters; `None` when Python's `int()`
/// would raise (a digit that is not decimal, such as a superscript). Huge values saturate.
pub fn py_int(s: &str) -> Option<u64> {
    let mut value: u64 = 0;
    for c in s.chars() {
        let c = c as u32;
        let i = t::PY_DECIMAL.partition_point(|&(_, hi, _)| hi < c);
        let &(lo, hi, first) = t::PY_DECIMAL.get(i)?;
        if c < lo || c > hi {
            return None;
        }
        value = value
            .saturating_mul(10)
            .saturating_add(u64::from(first + (c - lo)));
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
    fn python_predicates() {
        assert!(py_isspace(' ') && py_isspace('\x1c') && !py_isspace('a'));
        assert!(py_isidentifier("name") && py_isidentifier("_x1") && py_isidentifier("é"));
        assert!(!py_isidentifier("1x") && !py_isidentifier("") && !py_isidentifier("a-b"));
        assert!(py_isdigit("12") && py_isdigit("²") && !py_isdigit("1a") && !py_isdigit(""));
        assert_eq!(py_int("12"), Some(12));
        assert_eq!(py_int("١٢"), Some(12));
        assert_eq!(py_int("²"), None);
        assert!(py_isalpha('é') && !py_isalpha('1'));
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
