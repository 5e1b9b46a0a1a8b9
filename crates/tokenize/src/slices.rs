//! Python's `len` and slicing on characters, which the streaming algorithms count in.

pub(crate) fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// The text of `s` from its `start`-th character (Python's `s[start:]`).
pub(crate) fn chars_from(s: &str, start: usize) -> &str {
    match s.char_indices().nth(start) {
        Some((i, _)) => &s[i..],
        None => "",
    }
}

/// Python's `s[start:end]` on characters (empty when `end <= start`).
pub(crate) fn chars_between(s: &str, start: usize, end: usize) -> &str {
    if end <= start {
        return "";
    }
    let tail = chars_from(s, start);
    match tail.char_indices().nth(end - start) {
        Some((i, _)) => &tail[..i],
        None => tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_slices() {
        assert_eq!(chars_from("héllo", 1), "éllo");
        assert_eq!(chars_from("hé", 5), "");
        assert_eq!(chars_between("héllo", 1, 3), "él");
        assert_eq!(chars_between("héllo", 3, 1), "");
        assert_eq!(chars_between("hé", 1, 9), "é");
    }
}
