//! String comparisons the inference is built from: common prefixes and suffixes cut where a
//! delimiter can end, the marks a delimiter text is made of, and literal text written as a
//! pattern.

/// Where a delimiter may start or end: at either end of the text, at whitespace, or after a
/// closing bracket and before an opening one. Common prefixes and suffixes are cut back to such
/// a place, so that `<|call|>` and `<|end|>` share nothing rather than `|>`.
fn is_cut(s: &str, i: usize) -> bool {
    if i == 0 || i >= s.len() {
        return true;
    }
    let before = s[..i].chars().next_back();
    let after = s[i..].chars().next();
    let closes = |c: char| c.is_whitespace() || ">])}".contains(c);
    let opens = |c: char| c.is_whitespace() || "<[({".contains(c);
    before.is_some_and(closes) || after.is_some_and(opens)
}

/// The length in bytes of the longest common prefix of `a` and `b` that ends at a cut in both.
pub(crate) fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = 0;
    for ((i, x), y) in a.char_indices().zip(b.chars()) {
        if x != y {
            break;
        }
        n = i + x.len_utf8();
    }
    while n > 0 && !(is_cut(a, n) && is_cut(b, n)) {
        n = a[..n].char_indices().next_back().map_or(0, |(i, _)| i);
    }
    n
}

/// The length in bytes of the longest common suffix of `a` and `b` that starts at a cut in
/// both.
pub(crate) fn common_suffix(a: &str, b: &str) -> usize {
    let mut n = 0;
    for (x, y) in a.chars().rev().zip(b.chars().rev()) {
        if x != y {
            break;
        }
        n += x.len_utf8();
    }
    while n > 0 && !(is_cut(a, a.len() - n) && is_cut(b, b.len() - n)) {
        let tail = &a[a.len() - n..];
        n -= tail.chars().next().map_or(n, char::len_utf8);
    }
    n
}

/// The marks a delimiter text is made of: bracketed tokens (`<|im_end|>`, `[TOOL_CALLS]`,
/// `<｜tool▁sep｜>`) and runs of other non-space text. Whitespace separates marks.
pub(crate) fn marks(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return out;
        }
        let end = match bracketed(rest) {
            Some(n) => n,
            None => rest
                .char_indices()
                .skip(1)
                .find(|&(i, c)| c.is_whitespace() || bracketed(&rest[i..]).is_some())
                .map_or(rest.len(), |(i, _)| i),
        };
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
}

/// The length of the bracketed token `s` starts with (`<...>` or `[...]`, closed before any
/// whitespace), if it starts with one.
fn bracketed(s: &str) -> Option<usize> {
    let close = match s.chars().next()? {
        '<' => '>',
        '[' => ']',
        _ => return None,
    };
    let end = s.find(|c: char| c == close || c.is_whitespace())?;
    s[end..].starts_with(close).then_some(end + 1)
}

/// A pattern matching `s` literally, written readably: metacharacters escaped, a newline as
/// `\n` and a tab as `\t`.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if "()[]{}?*+|^$\\.#".contains(c) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// A pattern for delimiter text whose whitespace the model may write differently: each run of
/// whitespace matches any whitespace (a lone newline: an optional one, so that a value's own
/// leading spaces are not taken).
pub(crate) fn loose(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            let mut run = String::from(c);
            while let Some(&n) = chars.peek() {
                if !n.is_whitespace() {
                    break;
                }
                run.push(n);
                chars.next();
            }
            out.push_str(if run == "\n" { "\\n?" } else { "\\s*" });
        } else {
            out.push_str(&escape(&c.to_string()));
        }
    }
    out
}

/// Whether `s` holds whitespace between two non-space characters.
pub(crate) fn has_inner_space(s: &str) -> bool {
    s.trim().contains(char::is_whitespace)
}

/// `s` with one trailing `suffix` removed (after trimming both), if it ends with it.
pub(crate) fn strip_mark_suffix<'a>(s: &'a str, suffix: &str) -> Option<&'a str> {
    let suffix = suffix.trim();
    if suffix.is_empty() {
        return None;
    }
    s.trim_end().strip_suffix(suffix).map(str::trim_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_parts_end_where_a_delimiter_can() {
        assert_eq!(common_suffix("x<|call|>", "y<|end|>"), 0);
        assert_eq!(
            common_prefix("<|start|>assistant", "<|start|>assistant<|channel|>"),
            "<|start|>assistant".len()
        );
        assert_eq!(
            common_prefix("<｜Assistant｜><think>", "<｜Assistant｜></think>"),
            "<｜Assistant｜>".len()
        );
        let a = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>";
        let b = "```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>f<｜tool▁sep｜>";
        assert_eq!(
            &a[a.len() - common_suffix(a, b)..],
            "<｜tool▁call▁begin｜>f<｜tool▁sep｜>"
        );
    }

    #[test]
    fn marks_split_tokens_and_words() {
        assert_eq!(
            marks("</response>\n<|im_end|>"),
            ["</response>", "<|im_end|>"]
        );
        assert_eq!(marks(" [TOOL_CALLS]x y"), ["[TOOL_CALLS]", "x", "y"]);
        assert_eq!(marks("[e~[\n]~b]user"), ["[e~[", "]~b]user"]);
    }

    #[test]
    fn patterns_escape_and_loosen() {
        assert_eq!(escape("<|im_end|>\n"), "<\\|im_end\\|>\\n");
        assert_eq!(
            loose("</function>\n</tool_call>"),
            "</function>\\n?</tool_call>"
        );
        assert_eq!(loose("a \n b"), "a\\s*b");
    }
}
