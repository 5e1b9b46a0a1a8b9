//! Python's notion of whitespace: `str.isspace()` and `str.strip()`.
//!
//! The reference strips region text with `str.strip()`, whose whitespace set is wider than
//! Rust's `char::is_whitespace`: it includes the information separators `\x1c`..`\x1f` and
//! excludes nothing Rust has, for 29 code points in all (Unicode 14, CPython 3.11).

/// Python 3.11 `str.isspace()` for one character.
pub(crate) fn is_py_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\x1c'..='\x20'
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python `str.strip()` with no argument: removes leading and trailing [`is_py_space`]
/// characters.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_set_has_29_code_points() {
        let n = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| is_py_space(c))
            .count();
        assert_eq!(n, 29);
    }

    #[test]
    fn strip_removes_information_separators() {
        assert_eq!(py_strip("\x1c\x1d a b \x1e\x1f"), "a b");
        assert_eq!(py_strip("\u{85}\u{3000}x\u{a0}"), "x");
        assert_eq!(py_strip("\u{200b}x"), "\u{200b}x"); // zero width space is not whitespace
        assert_eq!(py_strip(" \t\n"), "");
    }
}
