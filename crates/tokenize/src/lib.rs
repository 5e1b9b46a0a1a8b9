//! The model's tokenizer, for rtbench: decode token ids exactly like the reference
//! (transformers 5.24.0 on a `tokenizer.json`), encode text, release text id by id the way
//! serving engines do (TGI's and vLLM's prefix/read offsets), and the reference `TextStreamer`'s
//! word chunking.
//!
//! Built on the `tokenizers` crate (the library under the reference's `PreTrainedTokenizerFast`)
//! without its C dependencies (onig, esaxx): its pure Rust `fancy-regex` backend only.
//!
//! Lengths and positions in the streaming algorithms are counted in characters (code points),
//! as the Python reference's `len` and slicing count them.

use std::ops::Range;
use std::path::Path;

mod pychars;

/// A tokenizer read from a Hugging Face `tokenizer.json`.
pub struct ModelTokenizer {
    inner: tokenizers::Tokenizer,
}

/// One token of an encoding: its id and the byte range of the text it covers. A token holding
/// only some bytes of a multi-byte character covers that whole character (so the ranges of
/// neighbouring tokens can overlap there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub id: u32,
    pub range: Range<usize>,
}

impl ModelTokenizer {
    /// Reads a `tokenizer.json`. Errors name the file.
    pub fn from_file(path: &Path) -> Result<ModelTokenizer, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::from_json_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads the text of a `tokenizer.json`.
    pub fn from_json_str(json: &str) -> Result<ModelTokenizer, String> {
        let inner: tokenizers::Tokenizer = json
            .parse()
            .map_err(|e| format!("not a tokenizer.json: {e}"))?;
        Ok(ModelTokenizer { inner })
    }

    /// Like the reference's `tokenizer.decode(ids)`: special tokens kept
    /// (`skip_special_tokens=False`) and no `clean_up_tokenization_spaces` (5.24.0 defaults it
    /// to false, and ignores it for BPE tokenizers anyway). Bytes that do not form a complete
    /// UTF-8 character come out as U+FFFD, one per invalid sequence, as the reference's do.
    pub fn decode(&self, ids: &[u32]) -> Result<String, String> {
        self.check_ids(ids)?;
        self.inner
            .decode(ids, false)
            .map_err(|e| format!("cannot decode {ids:?}: {e}"))
    }

    /// Encodes without adding special tokens (`add_special_tokens=False`): each token's id and
    /// the byte range of the text it covers. Added and special tokens written in the text are
    /// recognised, as the reference's encode does.
    pub fn encode(&self, text: &str) -> Result<Vec<Token>, String> {
        let encoding = self
            .inner
            .encode(text, false)
            .map_err(|e| format!("cannot encode: {e}"))?;
        Ok(encoding
            .get_ids()
            .iter()
            .zip(encoding.get_offsets())
            .map(|(&id, &(start, end))| Token {
                id,
                range: start..end,
            })
            .collect())
    }

    /// The ids of [`encode`](Self::encode).
    pub fn encode_ids(&self, text: &str) -> Result<Vec<u32>, String> {
        Ok(self.encode(text)?.into_iter().map(|t| t.id).collect())
    }

    /// Incremental detokenization as serving engines do it: one text delta per id, by the
    /// prefix_offset/read_offset algorithm of TGI and vLLM (see [`StreamDecoder`]). The deltas'
    /// concatenation equals `decode(ids)` when the ids end on a complete character; otherwise
    /// the incomplete tail is held back.
    pub fn stream_deltas(&self, ids: &[u32]) -> Result<Vec<String>, String> {
        let mut stream = StreamDecoder::new(self);
        ids.iter().map(|&id| stream.step(id)).collect()
    }

    /// The token as the vocabulary spells it (byte-level tokens in their printable alphabet,
    /// `Ġ` for a space), for display. `None` for an id outside the vocabulary.
    pub fn token_text(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The id of a token spelled as the vocabulary spells it (an added token by its content).
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// Whether the id is one of the added tokens marked special (control tokens such as
    /// `<|im_end|>`); added tokens like `<think>` are not special.
    pub fn is_special(&self, id: u32) -> bool {
        self.inner
            .get_added_tokens_decoder()
            .get(&id)
            .is_some_and(|t| t.special)
    }

    /// The number of ids, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    fn check_ids(&self, ids: &[u32]) -> Result<(), String> {
        let size = self.vocab_size();
        match ids.iter().find(|&&id| id as usize >= size) {
            Some(id) => Err(format!(
                "token id {id} is outside the vocabulary ({size} ids)"
            )),
            None => Ok(()),
        }
    }
}

fn char_len(s: &str) -> usize {
    s.chars().count()
}

/// The text of `s` from its `start`-th character (Python's `s[start:]`).
fn chars_from(s: &str, start: usize) -> &str {
    match s.char_indices().nth(start) {
        Some((i, _)) => &s[i..],
        None => "",
    }
}

/// Python's `s[start:end]` on characters (empty when `end <= start`).
fn chars_between(s: &str, start: usize, end: usize) -> &str {
    if end <= start {
        return "";
    }
    let tail = chars_from(s, start);
    match tail.char_indices().nth(end - start) {
        Some((i, _)) => &tail[..i],
        None => tail,
    }
}

/// Incremental detokenization, one id at a time, as TGI (`decode_token`) and vLLM do it:
/// decode the window `ids[prefix_offset..read_offset]` and `ids[prefix_offset..]`; when the
/// second is longer and does not end in U+FFFD (an incomplete UTF-8 sequence), release its
/// extra text and move the window (`prefix_offset = read_offset`, `read_offset = len`);
/// otherwise release nothing and keep the text back for the next id.
pub struct StreamDecoder<'t> {
    tokenizer: &'t ModelTokenizer,
    ids: Vec<u32>,
    prefix_offset: usize,
    read_offset: usize,
}

impl<'t> StreamDecoder<'t> {
    pub fn new(tokenizer: &'t ModelTokenizer) -> StreamDecoder<'t> {
        StreamDecoder {
            tokenizer,
            ids: Vec::new(),
            prefix_offset: 0,
            read_offset: 0,
        }
    }

    /// Adds one id; returns the text it releases (often empty while a character is split).
    pub fn step(&mut self, id: u32) -> Result<String, String> {
        self.ids.push(id);
        let window = &self.ids[self.prefix_offset..];
        let prefix_text = self
            .tokenizer
            .decode(&self.ids[self.prefix_offset..self.read_offset])?;
        let new_text = self.tokenizer.decode(window)?;
        let prefix_len = char_len(&prefix_text);
        if char_len(&new_text) > prefix_len && !new_text.ends_with('\u{FFFD}') {
            let delta = chars_from(&new_text, prefix_len).to_string();
            self.prefix_offset = self.read_offset;
            self.read_offset = self.ids.len();
            Ok(delta)
        } else {
            Ok(String::new())
        }
    }

    /// The ids added so far.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }
}

/// Whether `c` is in one of the inclusive code point ranges of a sorted table.
fn in_ranges(table: &[(u32, u32)], c: char) -> bool {
    let cp = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

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
                .all(|c| in_ranges(pychars::SPACE, c) || in_ranges(pychars::LMN, c))
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
    fn python_slices() {
        assert_eq!(chars_from("héllo", 1), "éllo");
        assert_eq!(chars_from("hé", 5), "");
        assert_eq!(chars_between("héllo", 1, 3), "él");
        assert_eq!(chars_between("héllo", 3, 1), "");
        assert_eq!(chars_between("hé", 1, 9), "é");
    }

    #[test]
    fn char_classes() {
        assert!(in_ranges(pychars::LMN, 'a'));
        assert!(in_ranges(pychars::LMN, '\u{301}'));
        assert!(in_ranges(pychars::LMN, '7'));
        assert!(!in_ranges(pychars::LMN, '.'));
        assert!(in_ranges(pychars::SPACE, '\u{1f}'));
        assert!(!in_ranges(pychars::SPACE, 'x'));
        assert!(is_cjk_char('北'));
        assert!(!is_cjk_char('お'));
    }
}
