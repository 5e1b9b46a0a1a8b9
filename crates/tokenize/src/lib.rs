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
//!
//! A tokenizer file is untrusted: it is checked before the library reads it, the library's
//! panics become errors naming the file, and a normalizer or decoder that would make text grow
//! far past its input is stopped (see the `guard` module).

use std::ops::Range;
use std::path::Path;

mod defuse;
mod guard;
pub mod ids;
mod incremental;
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
    /// How errors name the file.
    name: String,
    /// How much its normalizer, pre-tokenizer and decoder can make text grow.
    growth: guard::Growth,
    /// How its decoder lets a growing list of ids be decoded incrementally.
    plan: incremental::Plan,
    /// How many ids it has decoded (see [`decoded_ids`](Self::decoded_ids)).
    decoded: std::sync::atomic::AtomicU64,
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
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        Self::from_json_named(&text, &name).map_err(|e| format!("{name}: {e}"))
    }

    /// Reads the text of a `tokenizer.json`.
    pub fn from_json_str(json: &str) -> Result<ModelTokenizer, String> {
        Self::from_json_named(json, "tokenizer.json")
    }

    /// Reads the text of a `tokenizer.json` that errors call `name`: its nesting is checked
    /// first, and a panic of the library becomes an error.
    fn from_json_named(json: &str, name: &str) -> Result<ModelTokenizer, String> {
        guard::check_nesting(json).map_err(|e| format!("not a usable tokenizer.json: {e}"))?;
        let mut inner: tokenizers::Tokenizer = guard::catch_panic(|| json.parse())
            .map_err(|panic| {
                format!("the tokenizers library failed reading it ({panic}): check the file")
            })?
            .map_err(|e| format!("not a tokenizer.json: {e}"))?;
        // The reference (`PreTrainedTokenizerFast`) turns the file's truncation and padding
        // off and applies only what a call asks for; its encodes here ask for neither.
        inner
            .with_truncation(None)
            .map_err(|e| format!("not a usable tokenizer.json: {e}"))?;
        inner.with_padding(None);
        let growth = guard::catch_panic(|| guard::Growth::of(&inner)).map_err(|panic| {
            format!("the tokenizers library failed reading it ({panic}): check the file")
        })?;
        let plan = incremental::Plan::of(inner.get_decoder());
        Ok(ModelTokenizer {
            inner,
            name: name.to_string(),
            growth,
            plan,
            decoded: Default::default(),
        })
    }

    /// Runs a call into the tokenizers library that tries `to` (a verb phrase: "decode [1,
    /// 2]"): its error, or a panic, becomes an error saying what failed; a panic's names the
    /// file.
    fn library<T>(&self, to: &str, f: impl FnOnce() -> tokenizers::Result<T>) -> Result<T, String> {
        match guard::catch_panic(f) {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(format!("cannot {to}: {e}")),
            Err(panic) => Err(self.panicked(to, &panic)),
        }
    }

    /// The error for a panic of the tokenizers library.
    fn panicked(&self, to: &str, panic: &str) -> String {
        format!(
            "{}: the tokenizers library failed trying to {to} ({panic}): check the file",
            self.name
        )
    }

    /// The tokens decoding `ids` starts from (ids outside the vocabulary dropped), as the
    /// library's `decode` finds them.
    fn tokens_of(&self, ids: &[u32]) -> Vec<String> {
        ids.iter()
            .filter_map(|&id| self.inner.id_to_token(id))
            .collect()
    }

    /// Decodes `ids` like the library's `decode`, within the growth budget: the library
    /// decodes them at once when the decoder's bound keeps its output within the budget;
    /// otherwise the decoder's stages run one at a time, each checked before it runs.
    fn decode_guarded(&self, ids: &[u32]) -> Result<String, String> {
        self.count_decoded(ids.len());
        let to = || format!("decode {}", shown_ids(ids));
        if self.growth.decoder <= guard::MAX_GROWTH as u64 {
            return self.library(&to(), || self.inner.decode(ids, false));
        }
        let tokens = self.tokens_of(ids);
        let base = guard::decode_base(&tokens);
        if self.growth.decodes_within(base) {
            return self.library(&to(), || self.inner.decode(ids, false));
        }
        let limit = guard::budget(base);
        match guard::catch_panic(|| guard::decode_within(self.inner.get_decoder(), tokens, limit)) {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(guard::Stop::Failed(e))) => Err(format!("cannot {}: {e}", to())),
            Ok(Err(guard::Stop::Exceeded(size))) => Err(self.too_long("decoder", base, size)),
            Err(panic) => Err(self.panicked(&to(), &panic)),
        }
    }

    /// The error for a `stage` ("normalizer", "pre-tokenizer", "decoder") that would make
    /// `from` bytes grow to `size`, past the budget.
    fn too_long(&self, stage: &str, from: usize, size: usize) -> String {
        let (input, likely) = match stage {
            "decoder" => ("the tokens' text", " (a `Replace` by a long text?)"),
            "normalizer" => ("the text", " (a `Replace` or `Prepend` of a long text?)"),
            "model" => (
                "the text",
                " (a long `unk_token`, `continuing_subword_prefix` or `end_of_word_suffix`?)",
            ),
            _ => ("the text", " (byte-level stages in a row?)"),
        };
        format!(
            "{}: its {stage} makes text grow too much{likely}: {from} bytes of {input} would \
             grow to {size} or more, past the {} rtbench allows ({} times, plus 4 KiB): fix \
             the {stage} in the file",
            self.name,
            guard::budget(from),
            guard::MAX_GROWTH
        )
    }

    /// Refuses to decode `ids` when the decoder would make their text grow past the budget
    /// (for calls into the library that decode them on their own).
    pub(crate) fn check_decode_growth(&self, ids: &[u32]) -> Result<(), String> {
        if self.growth.decoder <= guard::MAX_GROWTH as u64 {
            return Ok(());
        }
        self.decode_guarded(ids).map(drop)
    }

    /// Refuses to encode `text` when the normalizer or the pre-tokenizer would make it grow
    /// past the budget. Measured (the text split around added tokens, normalized and
    /// pre-tokenized stage by stage, as the library does it) only when their bounds alone do
    /// not keep it within.
    fn check_encode_growth(&self, text: &str) -> Result<(), String> {
        if self.growth.encodes_within(text.len()) {
            return Ok(());
        }
        let limit = guard::budget(text.len());
        let added = self.inner.get_added_vocabulary();
        let mut pieces = match self.inner.get_normalizer() {
            None => self.library("measure the text's growth", || {
                Ok(added.extract_and_normalize(None::<&guard::Measured>, text))
            })?,
            Some(normalizer) => {
                let measured = guard::Measured::new(normalizer, limit);
                let pieces = self.library("measure the normalizer's growth", || {
                    Ok(added.extract_and_normalize(Some(&measured), text))
                })?;
                if let Some(size) = measured.exceeded() {
                    return Err(self.too_long("normalizer", text.len(), size));
                }
                pieces
            }
        };
        if let Some(pre_tokenizer) = self.inner.get_pre_tokenizer() {
            self.pre_tokenize_within_budget(pre_tokenizer, &mut pieces, text.len())?;
        }
        let pieces = guard::pre_tokenized_len(&pieces);
        if !self.growth.models_within(pieces, text.len()) {
            let size = (pieces as u64).saturating_mul(self.growth.model);
            return Err(self.too_long("model", text.len(), size.try_into().unwrap_or(usize::MAX)));
        }
        Ok(())
    }

    /// Pre-tokenizes `pieces` (from `len` bytes of text) stage by stage within the budget.
    fn pre_tokenize_within_budget(
        &self,
        pre_tokenizer: &tokenizers::PreTokenizerWrapper,
        pieces: &mut tokenizers::PreTokenizedString,
        len: usize,
    ) -> Result<(), String> {
        let limit = guard::budget(len);
        match guard::catch_panic(|| guard::pre_tokenize_within(pre_tokenizer, pieces, limit)) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(guard::Stop::Failed(e))) => Err(format!("cannot encode: {e}")),
            Ok(Err(guard::Stop::Exceeded(size))) => Err(self.too_long("pre-tokenizer", len, size)),
            Err(panic) => Err(self.panicked("encode", &panic)),
        }
    }

    /// `text` normalized and pre-tokenized (the whole text at once, without splitting out
    /// added tokens), within the budget: the stages run one at a time, each checked before it
    /// runs.
    pub(crate) fn pre_tokenize_plain(
        &self,
        text: &str,
    ) -> Result<tokenizers::PreTokenizedString, String> {
        let mut normalized = tokenizers::NormalizedString::from(text);
        if let Some(normalizer) = self.inner.get_normalizer() {
            let limit = guard::budget(text.len());
            match guard::catch_panic(|| guard::normalize_within(normalizer, &mut normalized, limit))
            {
                Ok(Ok(())) => {}
                Ok(Err(guard::Stop::Failed(e))) => return Err(format!("cannot encode: {e}")),
                Ok(Err(guard::Stop::Exceeded(size))) => {
                    return Err(self.too_long("normalizer", text.len(), size));
                }
                Err(panic) => return Err(self.panicked("encode", &panic)),
            }
        }
        let mut pieces = tokenizers::PreTokenizedString::from(normalized.get());
        if let Some(pre_tokenizer) = self.inner.get_pre_tokenizer() {
            self.pre_tokenize_within_budget(pre_tokenizer, &mut pieces, text.len())?;
        }
        Ok(pieces)
    }

    /// Like the reference's `tokenizer.decode(ids)`: special tokens kept
    /// (`skip_special_tokens=False`) and no `clean_up_tokenization_spaces` (5.24.0 defaults it
    /// to false, and ignores it for BPE tokenizers anyway). Bytes that do not form a complete
    /// UTF-8 character come out as U+FFFD, one per invalid sequence, as the reference's do.
    pub fn decode(&self, ids: &[u32]) -> Result<String, String> {
        self.check_ids(ids)?;
        self.decode_lenient(ids)
    }

    /// Like [`decode`](Self::decode), but ids outside the vocabulary decode to nothing (they
    /// are dropped), as the reference's decoding of generated ids drops them.
    pub fn decode_lenient(&self, ids: &[u32]) -> Result<String, String> {
        self.decode_guarded(ids)
    }

    /// The ids among `ids` that are outside the vocabulary (decoding drops them).
    pub fn unknown_ids(&self, ids: &[u32]) -> Vec<u32> {
        ids.iter()
            .copied()
            .filter(|&id| self.inner.id_to_token(id).is_none())
            .collect()
    }

    /// Adds the special tokens the model's `tokenizer_config.json` names that are not added
    /// tokens of the file yet, as the reference's tokenizer does when it loads (each a special
    /// added token: its vocabulary id when the vocabulary has it, else the next free id), so
    /// that they are control tokens there too.
    pub fn add_named_special_tokens<'a>(
        &mut self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), String> {
        let mut known: std::collections::HashSet<String> = self
            .inner
            .get_added_tokens_decoder()
            .into_values()
            .map(|t| t.content)
            .collect();
        let new: Vec<tokenizers::AddedToken> = names
            .into_iter()
            .filter(|n| known.insert(n.to_string()))
            .map(|n| tokenizers::AddedToken::from(n.to_string(), true))
            .collect();
        if !new.is_empty() {
            let name = self.name.clone();
            self.inner
                .add_tokens(new)
                .map_err(|e| format!("{name}: cannot add the config's special tokens: {e}"))?;
        }
        Ok(())
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

    /// How many ids this tokenizer has decoded so far, every call counted (a measure of the
    /// work decoding did: streaming `n` ids should decode a number of ids proportional to `n`).
    pub fn decoded_ids(&self) -> u64 {
        self.decoded.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Counts `n` ids decoded.
    pub(crate) fn count_decoded(&self, n: usize) {
        self.decoded
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// How the decoder lets a growing list of ids be decoded incrementally.
    pub(crate) fn plan(&self) -> &incremental::Plan {
        &self.plan
    }

    /// The library's tokenizer, for the incremental decoder.
    pub(crate) fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// Encodes without adding special tokens (`add_special_tokens=False`): each token's id and
    /// the byte range of the text it covers. Added and special tokens written in the text are
    /// recognised, as the reference's encode does.
    pub fn encode(&self, text: &str) -> Result<Vec<Token>, String> {
        self.check_encode_growth(text)?;
        let encoding = self.library("encode", || self.inner.encode(text, false))?;
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

/// `ids` for an error message: the first few, and how many there are.
fn shown_ids(ids: &[u32]) -> String {
    const SHOWN: usize = 8;
    if ids.len() <= SHOWN {
        return format!("{ids:?}");
    }
    let head: Vec<String> = ids[..SHOWN].iter().map(u32::to_string).collect();
    format!("[{}, ...] ({} ids)", head.join(", "), ids.len())
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
