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

mod defuse;
pub mod ids;
pub mod sanitize;
mod slices;
mod streamer;

pub use defuse::{ControlTokens, MARKER, TokenIdDecoder};
use slices::{char_len, chars_from};
pub use streamer::{TextStreamer, is_cjk_char, streamer_pieces};

/// One of the tokenizer's added tokens (`added_tokens` in `tokenizer.json`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddedToken {
    /// The token's id.
    pub id: u32,
    /// The token's text, as written in `tokenizer.json` (e.g. `<|im_end|>`).
    pub content: String,
    /// Marked special (a control token such as `<|im_end|>`); `<think>` often is not.
    pub special: bool,
}

/// A tokenizer read from a Hugging Face `tokenizer.json`.
pub struct ModelTokenizer {
    inner: tokenizers::Tokenizer,
}

/// One token of an encoding: its id and the byte range of the text it covers. A token holding
/// only some bytes of a multi-byte character covers that whole character (so the ranges of
/// neighbouring tokens can overlap there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// The token's id in the vocabulary.
    pub id: u32,
    /// The byte range of the encoded text the token covers.
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

    /// Like [`decode`](Self::decode), but ids outside the vocabulary decode to nothing (they
    /// are dropped), as the reference's decoding of generated ids drops them.
    pub fn decode_lenient(&self, ids: &[u32]) -> Result<String, String> {
        self.inner
            .decode(ids, false)
            .map_err(|e| format!("cannot decode {ids:?}: {e}"))
    }

    /// The ids among `ids` that are outside the vocabulary (decoding drops them).
    pub fn unknown_ids(&self, ids: &[u32]) -> Vec<u32> {
        ids.iter()
            .copied()
            .filter(|&id| self.inner.id_to_token(id).is_none())
            .collect()
    }

    /// The added tokens, by id.
    pub fn added_tokens(&self) -> Vec<AddedToken> {
        let mut out: Vec<AddedToken> = self
            .inner
            .get_added_tokens_decoder()
            .into_iter()
            .map(|(id, t)| AddedToken {
                id,
                content: t.content,
                special: t.special,
            })
            .collect();
        out.sort_by_key(|t| t.id);
        out
    }

    /// The library's tokenizer, for the incremental decoder.
    pub(crate) fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
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
    /// A decoder with no ids yet, decoding with `tokenizer`.
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
