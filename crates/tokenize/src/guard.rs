//! A `tokenizer.json` is data from a model folder, and no tokenizer file may crash rtbench or
//! make it hold memory out of proportion to its input:
//!
//! - **Nesting**: the file's JSON nesting is measured before the tokenizers library reads it
//!   ([`check_nesting`]). The library's deserialiser recurses through untagged enums for every
//!   level of a `Sequence`: past serde_json's limit (128 levels, 63 nested `Sequence`s) it
//!   fails, as the reference does, and from about 100 `Sequence`s it unwraps that error (a
//!   panic) or overflows a thread's stack. A real file nests about 8 levels.
//! - **Panics**: every call into the library runs under [`catch_panic`], which turns a panic
//!   into an error naming the file.
//! - **Growth**: a normalizer, pre-tokenizer or decoder can make text longer (`Replace` of one
//!   character by thousands, `Prepend`). Each stage has a bound on its growth, read from its
//!   settings ([`Growth`]); while the product of the bounds times the input stays within the
//!   budget ([`budget`]: [`MAX_GROWTH`] times the input plus 4 KiB) the library runs as it is.
//!   Past that (only a hostile file, or an unusual chain of stages), the stages run one at a
//!   time ([`normalize_within`], [`decode_within`]): before each, the size of its output is
//!   known (the bound times the current size, or for a `Replace` its matches counted with the
//!   library's own pattern) and a stage whose output would pass the budget is not run.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use tokenizers::normalizers::{Precompiled, Replace};
use tokenizers::utils::SysRegex;
use tokenizers::{
    Decoder, DecoderWrapper, NormalizedString, Normalizer, NormalizerWrapper, OffsetReferential,
    OffsetType, PreTokenizedString, PreTokenizer, PreTokenizerWrapper,
};

/// The deepest JSON nesting accepted in a `tokenizer.json` (objects and arrays): all the
/// library can read, since serde_json, which it reads with, stops at 128. A real file nests
/// about 8 levels; 62 nested `Sequence`s (126 levels) load within 512 KiB of stack.
pub(crate) const MAX_JSON_DEPTH: usize = 127;

/// How many times its input a tokenizer's text may grow (normalized text, pre-tokenized
/// pieces, decoded text). Real tokenizers stay far below: Unicode normalization grows UTF-8
/// text at most 11 times (U+FDFA under NFKC), and ordinary text hardly at all.
pub(crate) const MAX_GROWTH: usize = 16;

/// Output every call may produce whatever its input, past [`MAX_GROWTH`] times the input.
const GROWTH_SLACK: usize = 4 << 10;

/// The most output allowed for an input of `len` bytes.
pub(crate) fn budget(len: usize) -> usize {
    GROWTH_SLACK.saturating_add(len.saturating_mul(MAX_GROWTH))
}

/// The deepest nesting of objects and arrays in a JSON text, scanned without parsing (strings
/// skipped); stops counting once past [`MAX_JSON_DEPTH`].
pub(crate) fn json_depth(text: &str) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in text.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
                if deepest > MAX_JSON_DEPTH {
                    return deepest;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Refuses a tokenizer file nested deeper than [`MAX_JSON_DEPTH`].
pub(crate) fn check_nesting(json: &str) -> Result<(), String> {
    if json_depth(json) > MAX_JSON_DEPTH {
        return Err(format!(
            "its JSON nests more than {MAX_JSON_DEPTH} levels deep (a real tokenizer.json nests \
             about 8; the tokenizers library cannot read deeper nesting, such as `Sequence` \
             decoders inside each other, and crashes on it): flatten the nested sequences"
        ));
    }
    Ok(())
}

/// Bounds on how many times a tokenizer's stages can make text grow (1: never; saturating).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Growth {
    /// The normalizer's, per byte of text.
    pub normalizer: u64,
    /// The pre-tokenizer's, per byte of normalized text.
    pub pre_tokenizer: u64,
    /// The decoder's, per byte of the tokens' text plus one per token (see [`decode_base`]).
    pub decoder: u64,
    /// The model's, per byte of pre-tokenized text: a token's text is a piece of its input,
    /// except the unknown token and the affixes the model writes on every piece.
    pub model: u64,
}

/// The bound of a model: a byte of input starts at most one token, and a token is at most its
/// piece of the input, the unknown token's text, a byte-fallback token (`<0x41>`) and the
/// prefix and suffix the model adds to each piece. Real models stay within a few bytes; a file
/// whose `unk_token` or `continuing_subword_prefix` is megabytes long copies it per token.
pub(crate) fn model_growth(model: &tokenizers::ModelWrapper) -> u64 {
    use tokenizers::ModelWrapper;
    let len = |s: &Option<String>| s.as_ref().map_or(0, |s| s.len() as u64);
    match model {
        ModelWrapper::BPE(m) => {
            let unknown = len(&m.unk_token).max(if m.byte_fallback { 6 } else { 0 });
            1 + unknown + len(&m.continuing_subword_prefix) + len(&m.end_of_word_suffix)
        }
        ModelWrapper::WordPiece(m) => {
            1 + m.unk_token.len() as u64 + m.continuing_subword_prefix.len() as u64
        }
        ModelWrapper::WordLevel(m) => 1 + m.unk_token.len() as u64,
        // Its tokens are pieces of the input, an unknown one too.
        ModelWrapper::Unigram(_) => 1,
    }
}

impl Growth {
    /// The bounds of a tokenizer's stages.
    pub(crate) fn of(tokenizer: &tokenizers::Tokenizer) -> Growth {
        Growth {
            normalizer: tokenizer.get_normalizer().map_or(1, normalizer_growth),
            pre_tokenizer: tokenizer
                .get_pre_tokenizer()
                .map_or(1, pre_tokenizer_growth),
            decoder: tokenizer.get_decoder().map_or(1, decoder_growth),
            model: model_growth(tokenizer.get_model()),
        }
    }

    /// Whether encoding `len` bytes stays within the budget by the bounds alone: the text
    /// stages' product within the budget, and the model within [`MAX_GROWTH`] of its input.
    pub(crate) fn encodes_within(&self, len: usize) -> bool {
        let bound = self.normalizer.saturating_mul(self.pre_tokenizer);
        (len as u64).saturating_mul(bound) <= budget(len) as u64 && self.model <= MAX_GROWTH as u64
    }

    /// Whether the model's tokens of `pieces` bytes of pre-tokenized text (from an input of
    /// `len` bytes) stay within bounds: the model grows its input at most [`MAX_GROWTH`] times,
    /// or its output fits the input's budget.
    pub(crate) fn models_within(&self, pieces: usize, len: usize) -> bool {
        self.model <= MAX_GROWTH as u64
            || (pieces as u64).saturating_mul(self.model) <= budget(len) as u64
    }

    /// Whether decoding tokens of `base` (see [`decode_base`]) stays within the budget by the
    /// bound alone.
    pub(crate) fn decodes_within(&self, base: usize) -> bool {
        self.decoder <= MAX_GROWTH as u64
            || (base as u64).saturating_mul(self.decoder) <= budget(base) as u64
    }
}

/// What a decoder's growth is counted against: the tokens' bytes plus one per token (a
/// decoder may add a space per token, even to an empty one).
pub(crate) fn decode_base<S: AsRef<str>>(tokens: &[S]) -> usize {
    tokens
        .iter()
        .map(|t| t.as_ref().len())
        .sum::<usize>()
        .saturating_add(tokens.len())
}

/// A `Replace`'s pattern, as the library compiles it.
enum ReplacePattern {
    /// A string, matched literally (non-overlapping, leftmost first, as the library's escaped
    /// regex matches it).
    Literal(String),
    /// A regular expression in the library's syntax.
    Regex(String),
}

/// A `Replace`'s pattern and content, read from its settings (the library keeps the pattern
/// private; its serialized form names it).
fn replace_parts(replace: &Replace) -> Option<(ReplacePattern, String)> {
    let value = serde_json::to_value(replace).ok()?;
    let pattern = value.get("pattern")?;
    let pattern = if let Some(s) = pattern.get("String").and_then(|s| s.as_str()) {
        ReplacePattern::Literal(s.to_string())
    } else {
        ReplacePattern::Regex(pattern.get("Regex")?.as_str()?.to_string())
    };
    Some((pattern, replace.content.clone()))
}

/// A `Replace`'s bound per byte: a non-empty literal is replaced at most once per its length;
/// an empty literal or a regex can match the empty string, so the content may come between
/// every two characters.
fn replace_growth(replace: &Replace) -> u64 {
    match replace_parts(replace) {
        Some((ReplacePattern::Literal(p), content)) if !p.is_empty() => {
            (content.len() as u64).div_ceil(p.len() as u64).max(1)
        }
        Some((_, content)) => content.len() as u64 + 1,
        None => u64::MAX,
    }
}

/// A `Precompiled` normalizer's bound per byte: it replaces a grapheme or a character (at
/// least a byte) by one of the strings of its charsmap, so by at most the longest of them.
fn precompiled_growth(precompiled: &Precompiled) -> u64 {
    let value = serde_json::to_value(precompiled).ok();
    let blob = value
        .as_ref()
        .and_then(|v| v.get("precompiled_charsmap"))
        .and_then(|v| v.as_str())
        .and_then(base64_decode);
    let Some(blob) = blob else { return u64::MAX };
    // The charsmap: the trie's size in bytes (little-endian u32), the trie, then the
    // replacement strings, each ended by a NUL.
    let Some(size) = blob.get(..4) else {
        return u64::MAX;
    };
    let trie = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
    let strings = blob.get(4usize.saturating_add(trie)..).unwrap_or_default();
    let longest = strings
        .split(|&b| b == 0)
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    (longest as u64).max(1)
}

/// Standard base64 (as the library writes a charsmap); `None` when malformed.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 3);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
}

/// The bound of one normalizer (a `Sequence`: the product of its stages').
pub(crate) fn normalizer_growth(normalizer: &NormalizerWrapper) -> u64 {
    match normalizer {
        NormalizerWrapper::Sequence(seq) => seq
            .as_ref()
            .iter()
            .map(normalizer_growth)
            .fold(1, u64::saturating_mul),
        NormalizerWrapper::Replace(r) => replace_growth(r),
        // Prepended to each piece of text, and a piece holds at least a byte.
        NormalizerWrapper::Prepend(p) => 1 + p.prepend.len() as u64,
        NormalizerWrapper::Precompiled(p) => precompiled_growth(p),
        // In UTF-8 bytes: canonical forms grow a character at most 3 times (U+0390 under
        // NFD), compatibility forms 11 times (U+FDFA); lowercasing 1.5 times (U+0130).
        NormalizerWrapper::NFC(_) | NormalizerWrapper::NFD(_) => 3,
        NormalizerWrapper::NFKC(_) | NormalizerWrapper::NFKD(_) => 11,
        NormalizerWrapper::Lowercase(_) => 2,
        // Spaces around CJK ideographs (5/3), accents stripped after NFD (3), lowercase (1.5).
        NormalizerWrapper::BertNormalizer(_) => 8,
        // A byte becomes a character of one or two bytes.
        NormalizerWrapper::ByteLevel(_) => 2,
        NormalizerWrapper::StripNormalizer(_)
        | NormalizerWrapper::StripAccents(_)
        | NormalizerWrapper::Nmt(_) => 1,
    }
}

/// The bound of one pre-tokenizer (a `Sequence`: the product of its stages').
fn pre_tokenizer_growth(pre_tokenizer: &PreTokenizerWrapper) -> u64 {
    match pre_tokenizer {
        PreTokenizerWrapper::Sequence(seq) => seq
            .as_ref()
            .iter()
            .map(pre_tokenizer_growth)
            .fold(1, u64::saturating_mul),
        // A byte becomes a character of one or two bytes.
        PreTokenizerWrapper::ByteLevel(_) => 2,
        // A space becomes the replacement, and each word may start with one more.
        PreTokenizerWrapper::Metaspace(m) => 1 + 2 * m.get_replacement().len_utf8() as u64,
        _ => 1,
    }
}

/// The bound of one decoder (a `Sequence`: the product of its stages'), per byte of the
/// tokens plus one per token ([`decode_base`]).
pub(crate) fn decoder_growth(decoder: &DecoderWrapper) -> u64 {
    match decoder {
        DecoderWrapper::Sequence(seq) => seq
            .get_decoders()
            .iter()
            .map(decoder_growth)
            .fold(1, u64::saturating_mul),
        // The content per match, plus the token count carried along.
        DecoderWrapper::Replace(r) => replace_growth(r).saturating_add(1),
        // A space added per token, or one between every two characters (an empty suffix or
        // word delimiter), plus the token count carried along.
        DecoderWrapper::WordPiece(_) => 2,
        DecoderWrapper::BPE(_) | DecoderWrapper::CTC(_) => 3,
        // An unpaired byte becomes U+FFFD (3 bytes) from a character of at least 2.
        DecoderWrapper::ByteLevel(_) => 2,
        DecoderWrapper::Metaspace(_)
        | DecoderWrapper::ByteFallback(_)
        | DecoderWrapper::Fuse(_)
        | DecoderWrapper::Strip(_) => 1,
    }
}

/// Why a stage-by-stage run stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// A stage would make the text grow past the limit: at least this many bytes.
    Exceeded(usize),
    /// The library failed.
    Failed(String),
}

/// The length of `text` once a `Replace` with `pattern` and `content` has run on it, counted
/// from the matches alone (the text is not built).
fn replaced_len(pattern: &ReplacePattern, content: &str, text: &str) -> Result<usize, Stop> {
    let grow = |len: usize, (start, end): (usize, usize)| {
        len.saturating_sub(end - start)
            .saturating_add(content.len())
    };
    Ok(match pattern {
        ReplacePattern::Literal(p) if !p.is_empty() => text
            .match_indices(p.as_str())
            .map(|(at, m)| (at, at + m.len()))
            .fold(text.len(), grow),
        ReplacePattern::Literal(_) => {
            // An empty pattern matches between every two characters.
            let gaps = text.chars().count() + 1;
            text.len()
                .saturating_add(gaps.saturating_mul(content.len()))
        }
        ReplacePattern::Regex(r) => {
            let regex = SysRegex::new(r).map_err(|e| Stop::Failed(e.to_string()))?;
            regex.find_iter(text).fold(text.len(), grow)
        }
    })
}

/// Runs `normalizer` on `text` one stage at a time (what the library's `normalize` does),
/// refusing a stage whose output would pass `limit` bytes before it runs. A stage's error
/// stops the run as it stops the library's `Sequence`.
pub(crate) fn normalize_within(
    normalizer: &NormalizerWrapper,
    text: &mut NormalizedString,
    limit: usize,
) -> Result<(), Stop> {
    if let NormalizerWrapper::Sequence(seq) = normalizer {
        for stage in seq.as_ref() {
            normalize_within(stage, text, limit)?;
        }
        return Ok(());
    }
    let len = text.get().len();
    let bound = (len as u64).saturating_mul(normalizer_growth(normalizer));
    if bound > limit as u64 {
        let size = match normalizer {
            NormalizerWrapper::Replace(r) => match replace_parts(r) {
                Some((pattern, content)) => replaced_len(&pattern, &content, text.get())?,
                None => usize::MAX,
            },
            NormalizerWrapper::Prepend(p) if len > 0 => len.saturating_add(p.prepend.len()),
            NormalizerWrapper::Prepend(_) => 0,
            _ => usize::try_from(bound).unwrap_or(usize::MAX),
        };
        if size > limit {
            return Err(Stop::Exceeded(size));
        }
    }
    normalizer
        .normalize(text)
        .map_err(|e| Stop::Failed(e.to_string()))
}

/// The bytes of the pieces of a pre-tokenized text.
pub(crate) fn pre_tokenized_len(text: &PreTokenizedString) -> usize {
    text.get_splits(OffsetReferential::Normalized, OffsetType::Byte)
        .iter()
        .map(|(piece, _, _)| piece.len())
        .sum()
}

/// Runs `pre_tokenizer` on `text` one stage at a time (what the library's `pre_tokenize`
/// does), refusing a stage whose output could pass `limit` bytes before it runs.
pub(crate) fn pre_tokenize_within(
    pre_tokenizer: &PreTokenizerWrapper,
    text: &mut PreTokenizedString,
    limit: usize,
) -> Result<(), Stop> {
    if let PreTokenizerWrapper::Sequence(seq) = pre_tokenizer {
        for stage in seq.as_ref() {
            pre_tokenize_within(stage, text, limit)?;
        }
        return Ok(());
    }
    let bound =
        (pre_tokenized_len(text) as u64).saturating_mul(pre_tokenizer_growth(pre_tokenizer));
    if bound > limit as u64 {
        return Err(Stop::Exceeded(usize::try_from(bound).unwrap_or(usize::MAX)));
    }
    pre_tokenizer
        .pre_tokenize(text)
        .map_err(|e| Stop::Failed(e.to_string()))
}

/// A normalizer that measures: it normalizes each piece of text the library hands it with
/// [`normalize_within`], counting the bytes it produces against one limit for all of them,
/// and stops normalizing once the limit is passed (the library ignores a normalizer's
/// errors while it splits out added tokens, so the outcome is read from [`exceeded`]).
///
/// [`exceeded`]: Measured::exceeded
pub(crate) struct Measured<'n> {
    normalizer: &'n NormalizerWrapper,
    limit: usize,
    used: AtomicUsize,
    exceeded: AtomicUsize,
    stopped: AtomicBool,
}

impl<'n> Measured<'n> {
    pub(crate) fn new(normalizer: &'n NormalizerWrapper, limit: usize) -> Measured<'n> {
        Measured {
            normalizer,
            limit,
            used: AtomicUsize::new(0),
            exceeded: AtomicUsize::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// The bytes normalized so far.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// `Some(size)` when normalizing would have passed the limit (at least `size` bytes in
    /// all).
    pub(crate) fn exceeded(&self) -> Option<usize> {
        self.stopped
            .load(Ordering::Relaxed)
            .then(|| self.exceeded.load(Ordering::Relaxed))
    }
}

impl Normalizer for Measured<'_> {
    fn normalize(&self, normalized: &mut NormalizedString) -> tokenizers::Result<()> {
        if self.stopped.load(Ordering::Relaxed) {
            return Ok(());
        }
        let used = self.used();
        match normalize_within(self.normalizer, normalized, self.limit.saturating_sub(used)) {
            Ok(()) | Err(Stop::Failed(_)) => {
                self.used.store(
                    used.saturating_add(normalized.get().len()),
                    Ordering::Relaxed,
                );
                Ok(())
            }
            Err(Stop::Exceeded(size)) => {
                self.exceeded
                    .store(used.saturating_add(size), Ordering::Relaxed);
                self.stopped.store(true, Ordering::Relaxed);
                Ok(())
            }
        }
    }
}

/// Decodes `tokens` as the library's `decode` does (the decoder's stages in turn, then the
/// pieces joined; without a decoder, the tokens joined by spaces), one stage at a time,
/// refusing a stage whose output would pass `limit` ([`decode_base`]) before it runs.
pub(crate) fn decode_within(
    decoder: Option<&DecoderWrapper>,
    tokens: Vec<String>,
    limit: usize,
) -> Result<String, Stop> {
    match decoder {
        None => Ok(tokens.join(" ")),
        Some(decoder) => Ok(chain_within(decoder, tokens, limit)?.concat()),
    }
}

fn chain_within(
    decoder: &DecoderWrapper,
    tokens: Vec<String>,
    limit: usize,
) -> Result<Vec<String>, Stop> {
    if let DecoderWrapper::Sequence(seq) = decoder {
        let mut tokens = tokens;
        for stage in seq.get_decoders() {
            tokens = chain_within(stage, tokens, limit)?;
        }
        return Ok(tokens);
    }
    let base = decode_base(&tokens);
    let bound = (base as u64).saturating_mul(decoder_growth(decoder));
    if bound > limit as u64 {
        let size = match decoder {
            DecoderWrapper::Replace(r) => match replace_parts(r) {
                Some((pattern, content)) => {
                    let mut size = tokens.len();
                    for token in &tokens {
                        size = size.saturating_add(replaced_len(&pattern, &content, token)?);
                    }
                    size
                }
                None => usize::MAX,
            },
            _ => usize::try_from(bound).unwrap_or(usize::MAX),
        };
        if size > limit {
            return Err(Stop::Exceeded(size));
        }
    }
    decoder
        .decode_chain(tokens)
        .map_err(|e| Stop::Failed(e.to_string()))
}

pub(crate) use rtbench_engine::quiet_panic::catch_panic;

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer(normalizer: &str, decoder: &str) -> tokenizers::Tokenizer {
        let json = format!(
            r#"{{"version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
                "normalizer": {normalizer}, "pre_tokenizer": null, "post_processor": null,
                "decoder": {decoder},
                "model": {{"type": "WordLevel", "vocab": {{"a": 0, "b": 1, "ab": 2}},
                           "unk_token": "a"}}}}"#
        );
        json.parse().unwrap()
    }

    #[test]
    fn depth_skips_strings() {
        assert_eq!(json_depth(r#"{"a": [1, {"b": "[[[{{"}]}"#), 3);
        assert_eq!(json_depth(r#"{"a": "\"[[[", "b": []}"#), 2);
        assert_eq!(json_depth(&"[".repeat(1000)), MAX_JSON_DEPTH + 1);
    }

    #[test]
    fn growth_bounds() {
        let t = tokenizer(
            r#"{"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}"#,
            r#"{"type": "Replace", "pattern": {"String": "ab"}, "content": "xxxxx"}"#,
        );
        let g = Growth::of(&t);
        assert_eq!(
            (g.normalizer, g.pre_tokenizer, g.decoder),
            (4 * 3, 1, 3 + 1)
        );
        let t = tokenizer(
            r#"{"type": "Replace", "pattern": {"Regex": "x*"}, "content": "abc"}"#,
            "null",
        );
        assert_eq!(Growth::of(&t).normalizer, 4);
    }

    #[test]
    fn base64_reads_what_the_library_writes() {
        assert_eq!(base64_decode("aGVsbG8="), Some(b"hello".to_vec()));
        assert_eq!(base64_decode("aGVsbG8h"), Some(b"hello!".to_vec()));
        assert_eq!(base64_decode("aGk="), Some(b"hi".to_vec()));
        assert_eq!(base64_decode("a"), None);
        assert_eq!(base64_decode("a$=="), None);
    }

    #[test]
    fn counted_replacements_match_the_library() {
        for (pattern, content, text) in [
            (r#"{"String": "a"}"#, "xyz", "banana"),
            (r#"{"String": "aa"}"#, "-", "aaaaa"),
            (r#"{"String": ""}"#, "-", "héllo"),
            (r#"{"Regex": "a+"}"#, "", "caaab aa"),
            (r#"{"Regex": "x*"}"#, "<>", "héx"),
            (r#"{"Regex": "(?<=a)b"}"#, "BB", "abab b"),
        ] {
            let stage =
                format!(r#"{{"type": "Replace", "pattern": {pattern}, "content": "{content}"}}"#);
            let t = tokenizer(&stage, &stage);
            let Some(NormalizerWrapper::Replace(r)) = t.get_normalizer() else {
                panic!("{stage}")
            };
            let (p, c) = replace_parts(r).unwrap();
            let counted = replaced_len(&p, &c, text).unwrap();
            let mut n = NormalizedString::from(text);
            r.normalize(&mut n).unwrap();
            assert_eq!(counted, n.get().len(), "{stage} on {text:?}");
            let decoded = t
                .get_decoder()
                .unwrap()
                .decode(vec![text.to_string()])
                .unwrap();
            assert_eq!(counted, decoded.len(), "{stage} on {text:?}");
        }
    }

    #[test]
    fn stages_run_in_turn_as_the_library_runs_them() {
        let t = tokenizer(
            r#"{"type": "Sequence", "normalizers": [{"type": "NFKC"},
                {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"}]},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}"#,
            r#"{"type": "Sequence", "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"}, {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}"#,
        );
        let text = "ﬁne  ﷺ day";
        let mut ours = NormalizedString::from(text);
        normalize_within(t.get_normalizer().unwrap(), &mut ours, 1 << 20).unwrap();
        let mut theirs = NormalizedString::from(text);
        t.get_normalizer().unwrap().normalize(&mut theirs).unwrap();
        assert_eq!(ours, theirs);
        let tokens: Vec<String> = ["▁a", "<0xE2>", "<0x82>", "<0xAC>", "▁b", "<0xFF>"]
            .map(String::from)
            .to_vec();
        let ours = decode_within(t.get_decoder(), tokens.clone(), 1 << 20).unwrap();
        assert_eq!(ours, t.get_decoder().unwrap().decode(tokens).unwrap());
        assert_eq!(ours, "a€ b\u{FFFD}");
    }

    #[test]
    fn a_stage_past_the_limit_does_not_run() {
        let t = tokenizer(
            r#"{"type": "Replace", "pattern": {"String": "a"}, "content": "aaaaaaaaaa"}"#,
            r#"{"type": "Replace", "pattern": {"String": "a"}, "content": "aaaaaaaaaa"}"#,
        );
        let mut text = NormalizedString::from("ab".repeat(100).as_str());
        let stop = normalize_within(t.get_normalizer().unwrap(), &mut text, 1000).unwrap_err();
        assert!(matches!(stop, Stop::Exceeded(1100)), "{stop:?}");
        assert_eq!(text.get().len(), 200, "the stage did not run");
        let tokens = vec!["a".to_string(); 100];
        let stop = decode_within(t.get_decoder(), tokens.clone(), 1000).unwrap_err();
        assert!(matches!(stop, Stop::Exceeded(1100)), "{stop:?}");
        assert_eq!(
            decode_within(t.get_decoder(), tokens, 1100).unwrap().len(),
            1000
        );
    }
}
