//! transformers' `TextStreamer` (5.24.0): the pieces `on_finalized_text` prints as ids arrive.

use crate::ModelTokenizer;
use crate::incremental::GrowingText;
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
///
/// The reference decodes its whole cache at every id, and the cache only restarts at a
/// newline: quadratic in the length of a line. Here the cache's text is decoded
/// incrementally (see the `incremental` module: the text is exactly the whole cache's, and
/// only the ids since the last settled point are decoded again), and what the rules ask of
/// the text (its end, its last space, whether the new part has other characters) is kept up
/// to date as it grows, so a put costs what its id adds.
pub struct TextStreamer<'t> {
    tokenizer: &'t ModelTokenizer,
    token_cache: Vec<u32>,
    print_len: usize,
    /// The text of `token_cache`, once `put` has decoded it.
    text: GrowingText,
    /// Whether `text` is the text of `token_cache` (not after the cache restarted).
    current: bool,
}

impl<'t> TextStreamer<'t> {
    /// A streamer with nothing generated yet, decoding with `tokenizer`.
    pub fn new(tokenizer: &'t ModelTokenizer) -> TextStreamer<'t> {
        TextStreamer {
            tokenizer,
            token_cache: Vec::new(),
            print_len: 0,
            text: GrowingText::default(),
            current: true,
        }
    }

    /// One generated id: the text `on_finalized_text` receives.
    pub fn put(&mut self, id: u32) -> Result<String, String> {
        self.token_cache.push(id);
        self.text.update(self.tokenizer, &self.token_cache)?;
        self.current = true;
        let tail = std::mem::take(&mut self.text.tail);
        let head_chars = self.text.head.chars;
        let tail_chars = char_len(&tail);
        let total = head_chars + tail_chars;
        let last = tail.chars().next_back().or(self.text.head.last);
        let printable;
        if last == Some('\n') {
            printable = self.slice(&tail, self.print_len, total);
            let last = self.token_cache[self.token_cache.len() - 1];
            self.token_cache = vec![last];
            self.print_len = char_len(&self.tokenizer.decode(&[last])?);
            self.text.clear();
            self.current = false;
            return Ok(printable);
        }
        // Whether text[print_len:] is only letters, marks, numbers and spaces.
        let plain = || {
            !self.text.head.has_other_from(self.print_len)
                && chars_from(&tail, self.print_len.saturating_sub(head_chars))
                    .chars()
                    .all(|c| pyunicode::isspace(c) || pyunicode::is_letter_mark_or_number(c))
        };
        if last.is_some_and(is_cjk_char) || plain() {
            // The text ends with a CJK ideograph, or the new text is only letters, marks,
            // numbers and spaces: all of it is released.
            printable = self.slice(&tail, self.print_len, total);
        } else {
            // text[print_len : text.rfind(" ") + 1]
            let end = tail
                .chars()
                .enumerate()
                .filter(|&(_, c)| c == ' ')
                .last()
                .map(|(i, _)| head_chars + i)
                .or(self.text.head.last_space)
                .map_or(0, |i| i + 1);
            printable = self.slice(&tail, self.print_len, end);
        }
        self.print_len += char_len(&printable);
        self.text.tail = tail;
        Ok(printable)
    }

    /// Python's `text[start:end]` on the cache's text, the settled head followed by `tail`.
    fn slice(&mut self, tail: &str, start: usize, end: usize) -> String {
        let head = &mut self.text.head;
        let mut out = String::new();
        if start < head.chars && start < end {
            let from = head.byte_at(start);
            let to = head.byte_at(end.min(head.chars));
            out.push_str(&head.text[from..to]);
        }
        if end > head.chars {
            out.push_str(chars_between(
                tail,
                start.saturating_sub(head.chars),
                end - head.chars,
            ));
        }
        out
    }

    /// The end of generation: the text still held back (`on_finalized_text(.., stream_end=True)`).
    pub fn end(&mut self) -> Result<String, String> {
        let printable = if self.token_cache.is_empty() {
            String::new()
        } else {
            if !self.current {
                self.text.update(self.tokenizer, &self.token_cache)?;
                self.current = true;
            }
            let tail = std::mem::take(&mut self.text.tail);
            let total = self.text.head.chars + char_len(&tail);
            self.slice(&tail, self.print_len, total)
        };
        self.token_cache.clear();
        self.print_len = 0;
        self.text.clear();
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
