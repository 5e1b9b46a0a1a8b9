//! Lookups over the generated tables: the case equivalents the matcher uses and the two
//! string-level Python helpers the parser needs. Python's `str` character data itself
//! (`isspace`, `isalpha`, `isdigit`, `isidentifier`, decimal values) comes from `pyunicode`.

use super::unicode_tables as t;

pub(crate) use pyunicode::in_table;

/// Python `str.isdigit()` for a string: non-empty and every character a digit.
pub(crate) fn py_isdigit(s: &str) -> bool {
    !s.is_empty() && s.chars().all(pyunicode::isdigit)
}

/// Python `int(s)` for a string of `str.isdecimal()` characters; `None` when Python's `int()`
/// would raise (a digit that is not decimal, such as a superscript). Huge values saturate.
pub(crate) fn py_int(s: &str) -> Option<u64> {
    let mut value: u64 = 0;
    for c in s.chars() {
        let d = pyunicode::decimal_value(c)?;
        value = value.saturating_mul(10).saturating_add(u64::from(d));
    }
    Some(value)
}

/// The other case variants of `c` as the matcher sees them (simple case folding; the Turkic
/// dotted and dotless `i` make this relation symmetric but not transitive).
pub(crate) fn other_cases(c: u32) -> &'static [u32] {
    match t::CASES.binary_search_by_key(&c, |&(k, _)| k) {
        Ok(i) => {
            let others = &t::CASES[i].1;
            let n = others.iter().take_while(|&&o| o != 0).count();
            &others[..n]
        }
        Err(_) => &[],
    }
}

/// The full case folding of `c` as the reference's matcher applies it to text (one to three code
/// points; the Turkic I/i variants fold to themselves). Under the ASCII encoding only ASCII
/// capitals fold.
pub(crate) fn full_fold(c: u32, ascii: bool) -> Fold {
    if ascii {
        let f = if (0x41..=0x5A).contains(&c) {
            c ^ 0x20
        } else {
            c
        };
        return Fold([f, 0, 0], 1);
    }
    match t::FULL_FOLDS.binary_search_by_key(&c, |&(k, _)| k) {
        Ok(i) => {
            let f = t::FULL_FOLDS[i].1;
            let n = f.iter().take_while(|&&o| o != 0).count();
            Fold(f, n as u8)
        }
        Err(_) => Fold([c, 0, 0], 1),
    }
}

/// A full case folding: up to three code points.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fold([u32; 3], u8);

impl Fold {
    pub(crate) fn chars(&self) -> &[u32] {
        &self.0[..self.1 as usize]
    }
}

/// Whether `c` folds to more than one code point (full case folding, Unicode encoding).
pub(crate) fn expands(c: u32) -> bool {
    full_fold(c, false).chars().len() > 1
}

/// Whether the reference's string search (for a required string or a start test under full case
/// folding) takes folded text character `text` for the pattern's folded `pattern`: only the same
/// character, or (Unicode encoding) two of the Turkic variants `I`, `i`, `İ`, `ı`.
pub(crate) fn same_folded_turkic(pattern: u32, text: u32, ascii: bool) -> bool {
    let turkic = |c: u32| matches!(c, 0x49 | 0x69 | 0x130 | 0x131);
    pattern == text || (!ascii && turkic(pattern) && turkic(text))
}

/// The other case variants of `c` under the ASCII encoding: only ASCII letters pair up.
pub(crate) fn other_cases_ascii(c: u32) -> Option<u32> {
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

    #[test]
    fn full_folding() {
        assert_eq!(full_fold(0xDF, false).chars(), &[0x73, 0x73]);
        assert_eq!(full_fold(0xFB03, false).chars(), &[0x66, 0x66, 0x69]);
        assert_eq!(full_fold('A' as u32, false).chars(), &['a' as u32]);
        assert_eq!(full_fold('A' as u32, true).chars(), &['a' as u32]);
        assert_eq!(full_fold(0xDF, true).chars(), &[0xDF]);
        // The Turkic variants pass through unchanged, as in the reference.
        assert_eq!(full_fold(0x130, false).chars(), &[0x130]);
        assert_eq!(full_fold('I' as u32, false).chars(), &['I' as u32]);
        assert!(expands(0x390) && !expands('a' as u32) && !expands(0x130));
        assert_eq!(t::EXPAND_ON_FOLDING.len(), 105);
        assert!(same_folded_turkic('i' as u32, 0x131, false));
        assert!(!same_folded_turkic('i' as u32, 0x131, true));
    }
}
