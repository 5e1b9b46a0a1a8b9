//! Python's `str.strip()`.
//!
//! The reference strips region text with `str.strip()`, whose whitespace set
//! ([`pyunicode::isspace`]) is wider than Rust's `char::is_whitespace`: it includes the
//! information separators `\x1c`..`\x1f` and excludes nothing Rust has, for 29 code points in all
//! (Unicode 14, CPython 3.11).

/// Python `str.strip()` with no argument: removes leading and trailing [`pyunicode::isspace`]
/// characters.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(pyunicode::isspace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_removes_information_separators() {
        assert_eq!(py_strip("\x1c\x1d a b \x1e\x1f"), "a b");
        assert_eq!(py_strip("\u{85}\u{3000}x\u{a0}"), "x");
        assert_eq!(py_strip("\u{200b}x"), "\u{200b}x"); // zero width space is not whitespace
        assert_eq!(py_strip(" \t\n"), "");
    }
}
