//! Character properties as the reference's Python sees them (Unicode 14), looked up in the
//! generated [`unicode_tables`](super::unicode_tables).

use super::unicode_tables::{
    CASE_IGNORABLE, CASED, DECIMAL_ZEROS, LOWER_MULTI, LOWER_SINGLE, PRINTABLE,
};

/// The value of `c` as a decimal digit (`unicodedata.decimal`), for the digits that `int()` and
/// `float()` accept: ASCII `0`-`9` and every other Unicode decimal digit (category `Nd`).
pub(crate) fn decimal_value(c: char) -> Option<u8> {
    if c.is_ascii_digit() {
        return Some(c as u8 - b'0');
    }
    let cp = c as u32;
    if cp < 0x80 {
        return None;
    }
    let i = DECIMAL_ZEROS.partition_point(|&zero| zero <= cp);
    let zero = *DECIMAL_ZEROS.get(i.checked_sub(1)?)?;
    (cp - zero < 10).then(|| (cp - zero) as u8)
}

/// Python's `str.isprintable()` for one character (what `repr()` leaves unescaped).
pub(crate) fn is_printable(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    in_ranges(PRINTABLE, c as u32)
}

/// Whether the final-sigma rule of `str.lower()` skips `c` (Unicode `Case_Ignorable`).
pub(crate) fn is_case_ignorable(c: char) -> bool {
    in_ranges(CASE_IGNORABLE, c as u32)
}

/// Whether `c` is `Cased` (only meaningful for characters that are not case-ignorable).
pub(crate) fn is_cased(c: char) -> bool {
    in_ranges(CASED, c as u32)
}

/// The lowercase of `c` under `str.lower()` when it is one character other than `c` (capital
/// sigma excluded).
pub(crate) fn lower_single(c: char) -> Option<char> {
    let cp = c as u32;
    let i = LOWER_SINGLE
        .binary_search_by_key(&cp, |&(from, _)| from)
        .ok()?;
    char::from_u32(LOWER_SINGLE[i].1)
}

/// The lowercase of `c` under `str.lower()` when it is several characters.
pub(crate) fn lower_multi(c: char) -> Option<&'static [u32]> {
    let cp = c as u32;
    LOWER_MULTI
        .iter()
        .find(|&&(from, _)| from == cp)
        .map(|&(_, to)| to)
}

fn in_ranges(table: &[(u32, u32)], cp: u32) -> bool {
    let i = table.partition_point(|&(start, _)| start <= cp);
    i > 0 && cp <= table[i - 1].1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits_of_other_scripts() {
        assert_eq!(decimal_value('7'), Some(7));
        assert_eq!(decimal_value('\u{0663}'), Some(3)); // ARABIC-INDIC DIGIT THREE
        assert_eq!(decimal_value('\u{FF19}'), Some(9)); // FULLWIDTH DIGIT NINE
        assert_eq!(decimal_value('\u{00B2}'), None); // SUPERSCRIPT TWO is not decimal
        assert_eq!(decimal_value('a'), None);
        assert_eq!(decimal_value('\u{1D7CE}'), Some(0)); // MATHEMATICAL BOLD DIGIT ZERO
    }

    #[test]
    fn printable_follows_python() {
        assert!(is_printable('a'));
        assert!(is_printable('\u{e9}'));
        assert!(!is_printable('\x7f'));
        assert!(!is_printable('\u{a0}')); // NO-BREAK SPACE is escaped by repr()
        assert!(!is_printable('\u{200b}'));
    }

    #[test]
    fn lowercase_lookups() {
        assert_eq!(lower_single('A'), Some('a'));
        assert_eq!(lower_single('\u{0130}'), None);
        assert_eq!(lower_multi('\u{0130}'), Some(&[0x69, 0x307][..]));
        assert!(is_case_ignorable('\''));
        assert!(is_cased('a'));
        assert!(!is_cased('1'));
    }
}
