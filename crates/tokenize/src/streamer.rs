//! transformers' `TextStreamer` (5.24.0): the pieces `on_finalized_text` prints as ids arrive.

use crate::ModelTokenizer;
use crate::slices::{char_len, chars_between, chars_from};

/// `TextStreamer._is_chinese_char`: the CJK Unified Ideographs blocks (not kana nor Hangul).
pub fn is_cjk_char(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

/// The reference's `transformers.generation.TextStreamer` (5.24.0, `skip_prompt=False`, no
/// decode options), fed one id per `put`: each `put` returns what `on_finalized_text` receives.
/// After each id it decodes its cache of ids and releases
/// - everything new, when the text ends with `\n` (then the cache restarts from the last id,
///   kept as decoding context);
/// - everything new, when the text ends with a CJK ideograph;
/// - everything new, when the new text is only letters, marks, numbers and spaces
///   (`unicodedata.category(c)[0] in "LMN"` or `str.isspace()`, CPython 3.11 data);
/// - otherwise the new text up to and including the last space of the text.
///
/// `end` flushes the rest.
pub struct TextStreamer<'t> {
    tokenizer: &'t ModelTokenizer,
    token_cache: Vec<u32>,
    print_len: usize,
}

impl<'t> TextStreamer<'t> {
    /// A streamer with nothing generated yet, decoding with `tokenizer`.
    pub fn new(tokenizer: &'t ModelTokenizer) -> TextStreamer<'t> {
        TextStreamer {
            tokenizer,
            token_cache: Vec::new(),
            print_len: 0,
        }
    }

    /// One generated id: the text `on_finalized_text` receives.
    pub fn put(&mut self, id: u32) -> Result<String, String> {
        self.token_cache.push(id);
        let text = self.tokenizer.decode(&self.token_cache)?;
        let printable;
        if text.ends_with('\n') {
            printable = chars_from(&text, self.print_len).to_string();
            let last = self.token_cache[self.token_cache.len() - 1];
            self.token_cache = vec![last];
            self.print_len = char_len(&self.tokenizer.decode(&[last])?);
        } else if text.chars().next_back().is_some_and(is_cjk_char)
            || chars_from(&text, self.print_len)
                .chars()
                .all(|c| pyunicode::isspace(c) || pyunicode::is_letter_mark_or_number(c))
        {
            // The text ends with a CJK ideograph, or the new text is only letters, marks,
            // numbers and spaces: all of it is released.
            printable = chars_from(&text, self.print_len).to_string();
            self.print_len += char_len(&printable);
        } else {
            // text[print_len : text.rfind(" ") + 1]
            let end = text
                .chars()
                .enumerate()
                .filter(|&(_, c)| c == ' ')
                .last()
                .map_or(0, |(i, _)| i + 1);
            printable = chars_between(&text, self.print_len, end).to_string();
            self.print_len += char_len(&printable);
        }
        Ok(printable)
    }

    /// The end of generation: the text still held back (`on_finalized_text(.., stream_end=True)`).
    pub fn end(&mut self) -> Result<String, String> {
        let printable = if self.token_cache.is_empty() {
            String::new()
        } else {
            let text = self.tokenizer.decode(&self.token_cache)?;
            chars_from(&text, self.print_len).to_string()
        };
        self.token_cache.clear();
        self.print_len = 0;
        Ok(printable)
    }
}

/// The pieces the reference's `TextStreamer.on_finalized_text` receives when a generate loop
/// puts `ids` one at a time and then ends: one piece per id, then the final flush (so
/// `ids.len() + 1` pieces). Their concatenation is `decode(ids)` when no newline flush cut a
/// multi-byte character.
pub fn streamer_pieces(tokenizer: &ModelTokenizer, ids: &[u32]) -> Result<Vec<String>, String> {
    let mut streamer = TextStreamer::new(tokenizer);
    let mut pieces = Vec::with_capacity(ids.len() + 1);
    for &id in ids {
        pieces.push(streamer.put(id)?);
    }
    pieces.push(streamer.end()?);
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char_classes() {
        assert!(pyunicode::is_letter_mark_or_number('a'));
        assert!(pyunicode::is_letter_mark_or_number('\u{301}'));
        assert!(pyunicode::is_letter_mark_or_number('7'));
        assert!(!pyunicode::is_letter_mark_or_number('.'));
        assert!(pyunicode::isspace('\u{1f}'));
        assert!(!pyunicode::isspace('x'));
        assert!(is_cjk_char('北'));
        assert!(!is_cjk_char('お'));
    }
}
