//! Python's `str.lower()`: the full lowercase mapping of Unicode 14 with the final-sigma rule.
//!
//! Rust's `str::to_lowercase` follows a newer Unicode version (it lowercases letters added since
//! Unicode 14, which Python 3.11 leaves alone), so the mapping comes from generated tables.

use pyunicode::{is_case_ignorable, is_cased, lower_multi, lower_single};

const CAPITAL_SIGMA: char = '\u{03A3}';

/// Python 3.11 `str.lower()`.
pub(crate) fn py_lower(s: &str) -> String {
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.char_indices() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if c == CAPITAL_SIGMA {
            out.push(if is_final_sigma(s, i) {
                '\u{03C2}'
            } else {
                '\u{03C3}'
            });
        } else if let Some(low) = lower_single(c) {
            out.push(low);
        } else if let Some(low) = lower_multi(c) {
            out.extend(low);
        } else {
            out.push(c);
        }
    }
    out
}

/// The `Final_Sigma` context as CPython tests it: a cased letter before (skipping case-ignorable
/// characters) and no cased letter after (skipping them too).
fn is_final_sigma(s: &str, sigma_at: usize) -> bool {
    let before = s[..sigma_at].chars().rev().find(|&c| !is_case_ignorable(c));
    if !before.is_some_and(is_cased) {
        return false;
    }
    let after = s[sigma_at + CAPITAL_SIGMA.len_utf8()..]
        .chars()
        .find(|&c| !is_case_ignorable(c));
    !after.is_some_and(is_cased)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn final_sigma_depends_on_context() {
        assert_eq!(py_lower("ΟΔΟΣ"), "οδος");
        assert_eq!(py_lower("Σ"), "σ");
        assert_eq!(py_lower("ΑΣ'"), "ας'");
        assert_eq!(py_lower("ΑΣ'Α"), "ασ'α");
        assert_eq!(py_lower("1Σ"), "1σ");
    }

    #[test]
    fn special_and_newer_letters() {
        assert_eq!(py_lower("\u{0130}"), "i\u{0307}");
        // CYRILLIC CAPITAL LETTER TJE (Unicode 16) is unchanged in Python 3.11.
        assert_eq!(py_lower("\u{1C89}"), "\u{1C89}");
        assert_eq!(py_lower("TRUE"), "true");
        assert_eq!(py_lower("ÀÉ"), "àé");
    }
}
