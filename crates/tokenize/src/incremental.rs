//! Decoding a list of ids that grows by one id at a time (the reference `TextStreamer`'s token
//! cache) without decoding the whole list again at every id, yet with exactly the text that
//! decoding the whole list gives.
//!
//! The text of the ids is kept as a **settled** head, the decoded text of the first `k` ids,
//! and a tail, the text the ids after them add, decoded again at each id. The head is never
//! decoded again: ids are settled only where the decoder's structure proves that decoding
//! more ids cannot change the text of the first ones. What proves it depends on the decoder
//! ([`Plan`]); a decoder none of the proofs covers decodes the whole list at every id, as the
//! reference does.
//!
//! The proofs rest on how the tokenizers library decodes (`Tokenizer::decode`): the ids are
//! mapped to their tokens (an id outside the vocabulary is dropped), the decoder's stages
//! (a `Sequence`'s, flattened) turn the list of token strings into a list of strings in turn,
//! and the strings are joined; without a decoder, the tokens are joined with spaces.

use std::collections::HashMap;
use std::sync::OnceLock;

use tokenizers::{Decoder, DecoderWrapper};

use crate::ModelTokenizer;

/// How a tokenizer's decoder lets a growing list of ids be decoded incrementally.
#[derive(Clone, Debug)]
pub(crate) enum Plan {
    /// The decoder is `ByteLevel` (with nothing after it but `Fuse`s): the text is the tokens'
    /// bytes, concatenated, read as UTF-8 with U+FFFD for each invalid sequence. Where the
    /// bytes of the first `k` tokens end between two characters, a UTF-8 reader starts afresh
    /// on the next byte, so the text of all the ids is the text of the first `k` followed by
    /// the text of the rest, decoded on their own.
    ByteLevel,
    /// The decoder's stages are, in order: stages that change each token on its own
    /// (`Replace`, `Strip`; `Metaspace` and `WordPiece`, which also treat the first token
    /// apart), at most one `ByteFallback` (not after a stage that treats the first token
    /// apart), then at most one `Fuse` (or none: the strings are joined anyway), then `Fuse`s
    /// and `Strip`s that only strip at the start (`stop` 0), at most `strip` characters in
    /// all. No decoder at all (tokens joined with spaces) is one too.
    ///
    /// The first `k` tokens `P` settle when their last token is in the vocabulary, is not a
    /// byte token (`<0x..>`, which `ByteFallback` would join with a next one), and `P`'s text
    /// has at least `strip` characters; a context `C`, the last few tokens of `P`, whose own
    /// text has at least `strip` characters too, is kept. Then for any tokens `S` after them,
    /// decode(P + S) = decode(P) + (decode(C + S) less its start decode(C)):
    /// - the tokens of `S` are not first in `P + S` nor in `C + S`, so the per-token stages
    ///   change them alike in both;
    /// - `ByteFallback` joins runs of byte tokens, and no run crosses from `P` (or `C`) into
    ///   `S`, since their last token is not a byte token;
    /// - joining the strings keeps those of `P` (or `C`) before those of `S`;
    /// - the stripping at the start removes at most `strip` characters, all within the text
    ///   of `P` (or of `C`), which has at least that many before stripping.
    Spliced {
        /// The stages before `ByteFallback` (each changing a token on its own), when there is
        /// one: a token is a byte token for `ByteFallback` once they have run on it.
        before_byte_fallback: Option<Vec<DecoderWrapper>>,
        /// The most characters the stages after the join strip from the start.
        strip: usize,
    },
    /// Anything else: the whole list is decoded at every id.
    Whole,
}

/// The decoder's stages, `Sequence`s flattened (a `Sequence` runs its stages in turn).
fn flatten<'d>(decoder: &'d DecoderWrapper, out: &mut Vec<&'d DecoderWrapper>) {
    match decoder {
        DecoderWrapper::Sequence(seq) => {
            for stage in seq.get_decoders() {
                flatten(stage, out);
            }
        }
        stage => out.push(stage),
    }
}

impl Plan {
    /// The plan for a tokenizer's decoder.
    pub(crate) fn of(decoder: Option<&DecoderWrapper>) -> Plan {
        let Some(decoder) = decoder else {
            return Plan::Spliced {
                before_byte_fallback: None,
                strip: 0,
            };
        };
        let mut stages = Vec::new();
        flatten(decoder, &mut stages);
        if matches!(stages.first(), Some(DecoderWrapper::ByteLevel(_)))
            && stages[1..]
                .iter()
                .all(|s| matches!(s, DecoderWrapper::Fuse(_)))
        {
            return Plan::ByteLevel;
        }
        let mut at = 0;
        let mut first_apart = false;
        let mut before_byte_fallback = None;
        while let Some(stage) = stages.get(at) {
            match stage {
                DecoderWrapper::Replace(_) | DecoderWrapper::Strip(_) => {}
                DecoderWrapper::Metaspace(_) | DecoderWrapper::WordPiece(_) => first_apart = true,
                DecoderWrapper::ByteFallback(_) => {
                    if first_apart || before_byte_fallback.is_some() {
                        return Plan::Whole;
                    }
                    before_byte_fallback = Some(stages[..at].iter().map(|&s| s.clone()).collect());
                }
                _ => break,
            }
            at += 1;
        }
        if matches!(stages.get(at), Some(DecoderWrapper::Fuse(_))) {
            at += 1;
        }
        let mut strip = 0usize;
        for stage in &stages[at..] {
            match stage {
                DecoderWrapper::Fuse(_) => {}
                DecoderWrapper::Strip(s) if s.stop == 0 => strip = strip.saturating_add(s.start),
                _ => return Plan::Whole,
            }
        }
        Plan::Spliced {
            before_byte_fallback,
            strip,
        }
    }
}

/// `ByteFallback`'s test for a byte token (`<0x41>`), as the library writes it.
fn is_byte_token(token: &str) -> bool {
    token.len() == 6
        && token.starts_with("<0x")
        && token.ends_with('>')
        && token
            .get(3..5)
            .is_some_and(|hex| u8::from_str_radix(hex, 16).is_ok())
}

/// The byte-level alphabet's characters and the bytes they stand for (GPT-2's
/// `bytes_to_unicode`, as the library's `ByteLevel` builds it): printable bytes stand for
/// themselves, the others, in order, for U+0100 onwards.
fn byte_level_chars() -> &'static HashMap<char, u8> {
    static CHARS: OnceLock<HashMap<char, u8>> = OnceLock::new();
    CHARS.get_or_init(|| {
        let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        let mut next = 0x100u32;
        let mut chars = HashMap::new();
        for b in 0..=255u8 {
            let c = if printable(b) {
                char::from(b)
            } else {
                next += 1;
                char::from_u32(next - 1).unwrap_or(char::REPLACEMENT_CHARACTER)
            };
            chars.insert(c, b);
        }
        chars
    })
}

/// The bytes `ByteLevel` makes of a token: each character's byte when every character is in
/// its alphabet, else the token's own UTF-8.
fn byte_level_bytes(token: &str) -> Vec<u8> {
    let chars = byte_level_chars();
    token
        .chars()
        .map(|c| chars.get(&c).copied())
        .collect::<Option<Vec<u8>>>()
        .unwrap_or_else(|| token.as_bytes().to_vec())
}

/// Whether a byte stream whose last bytes are `last` (its last three, or all of it when
/// shorter) ends between two characters for a UTF-8 reader, not inside a sequence later bytes
/// could complete. Three bytes are enough: such a sequence starts with a leading byte within
/// the last three, and a reader starts afresh at a leading byte whatever came before it.
fn ends_between_characters(last: &[u8]) -> bool {
    let mut rest = last;
    loop {
        match std::str::from_utf8(rest) {
            Ok(_) => return true,
            Err(e) => match e.error_len() {
                None => return false,
                Some(len) => rest = &rest[e.valid_up_to() + len..],
            },
        }
    }
}

/// The decoded text of a growing list of ids: a settled head (see the module documentation)
/// and the tail decoded at the last call.
#[derive(Default)]
pub(crate) struct GrowingText {
    /// How many ids of the list are settled.
    settled: usize,
    /// The text of the settled ids.
    pub(crate) head: Head,
    /// The text the other ids add.
    pub(crate) tail: String,
    /// `Plan::Spliced`: the context (the last settled ids) and its own text.
    context: Vec<u32>,
    context_text: String,
    /// `Plan::ByteLevel`: how many ids' bytes `last_bytes` has seen, and the stream's last
    /// three bytes.
    seen: usize,
    last_bytes: Vec<u8>,
}

impl GrowingText {
    /// Forgets every id (the list starts again).
    pub(crate) fn clear(&mut self) {
        *self = GrowingText::default();
    }

    /// Decodes `ids`, the list of the last call with ids added (or a new list after
    /// [`clear`](Self::clear)): afterwards `head` followed by `tail` is `decode(ids)`.
    pub(crate) fn update(&mut self, tokenizer: &ModelTokenizer, ids: &[u32]) -> Result<(), String> {
        match tokenizer.plan() {
            Plan::Whole => {
                self.tail = tokenizer.decode(ids)?;
                Ok(())
            }
            Plan::ByteLevel => self.update_byte_level(tokenizer, ids),
            Plan::Spliced {
                before_byte_fallback,
                strip,
            } => self.update_spliced(tokenizer, ids, before_byte_fallback.as_deref(), *strip),
        }
    }

    fn update_byte_level(&mut self, tokenizer: &ModelTokenizer, ids: &[u32]) -> Result<(), String> {
        self.tail = tokenizer.decode(&ids[self.settled..])?;
        for &id in &ids[self.seen..] {
            if let Some(token) = tokenizer.token_text(id) {
                self.last_bytes.extend(byte_level_bytes(&token));
                let keep = self.last_bytes.len().saturating_sub(3);
                self.last_bytes.drain(..keep);
            }
        }
        self.seen = ids.len();
        if ends_between_characters(&self.last_bytes) {
            self.settle(ids.len());
        }
        Ok(())
    }

    fn update_spliced(
        &mut self,
        tokenizer: &ModelTokenizer,
        ids: &[u32],
        before_byte_fallback: Option<&[DecoderWrapper]>,
        strip: usize,
    ) -> Result<(), String> {
        self.tail = if self.settled == 0 {
            tokenizer.decode(ids)?
        } else {
            let window = [self.context.as_slice(), &ids[self.settled..]].concat();
            let text = tokenizer.decode(&window)?;
            match text.strip_prefix(self.context_text.as_str()) {
                Some(tail) => tail.to_string(),
                // Not reached (see `Plan::Spliced`); should it be, the whole list is decoded.
                None => {
                    let whole = tokenizer.decode(ids)?;
                    self.clear();
                    self.tail = whole;
                    return Ok(());
                }
            }
        };
        let Some(&last) = ids.last() else {
            return Ok(());
        };
        let Some(token) = tokenizer.token_text(last) else {
            return Ok(());
        };
        if let Some(stages) = before_byte_fallback {
            let mut piece = vec![token];
            for stage in stages {
                piece = tokenizer.library("decode", || stage.decode_chain(piece))?;
            }
            if piece.iter().any(|p| is_byte_token(p)) {
                return Ok(());
            }
        }
        if self.head.chars + self.tail.chars().count() < strip {
            return Ok(());
        }
        // The shortest context of known tokens whose own text is long enough to strip from.
        const MAX_CONTEXT: usize = 4;
        for len in 1..=MAX_CONTEXT.min(ids.len()) {
            let context = &ids[ids.len() - len..];
            if context.iter().any(|&id| tokenizer.token_text(id).is_none()) {
                return Ok(());
            }
            let text = tokenizer.decode(context)?;
            if text.chars().count() >= strip {
                self.settle(ids.len());
                self.context = context.to_vec();
                self.context_text = text;
                return Ok(());
            }
        }
        Ok(())
    }

    /// Moves the tail into the head: the first `count` ids are settled.
    fn settle(&mut self, count: usize) {
        let tail = std::mem::take(&mut self.tail);
        self.head.push(&tail);
        self.settled = count;
    }
}

/// Settled text, with what the streamer asks of it kept up to date as it grows.
#[derive(Default)]
pub(crate) struct Head {
    pub(crate) text: String,
    /// Its length in characters.
    pub(crate) chars: usize,
    /// Its last character.
    pub(crate) last: Option<char>,
    /// The character index of its last space (`' '`).
    pub(crate) last_space: Option<usize>,
    /// The character indices of its characters that are neither letters, marks, numbers nor
    /// spaces, in order.
    pub(crate) others: Vec<usize>,
    /// A character index and its byte offset, to find byte offsets from.
    cursor: (usize, usize),
}

impl Head {
    fn push(&mut self, s: &str) {
        for c in s.chars() {
            if c == ' ' {
                self.last_space = Some(self.chars);
            }
            if !(pyunicode::isspace(c) || pyunicode::is_letter_mark_or_number(c)) {
                self.others.push(self.chars);
            }
            self.chars += 1;
        }
        if let Some(c) = s.chars().next_back() {
            self.last = Some(c);
        }
        self.text.push_str(s);
    }

    /// The byte offset of character `at` (the end past the last): found from the cursor,
    /// which moves there (from the start when `at` is behind it).
    pub(crate) fn byte_at(&mut self, at: usize) -> usize {
        if at >= self.chars {
            return self.text.len();
        }
        if at < self.cursor.0 {
            self.cursor = (0, 0);
        }
        let (from_char, from_byte) = self.cursor;
        let byte = self.text[from_byte..]
            .char_indices()
            .nth(at - from_char)
            .map_or(self.text.len(), |(i, _)| from_byte + i);
        self.cursor = (at, byte);
        byte
    }

    /// Whether a character from index `from` on is neither a letter, mark, number nor space.
    pub(crate) fn has_other_from(&self, from: usize) -> bool {
        self.others.partition_point(|&i| i < from) < self.others.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_level_alphabet_is_the_library_s() {
        let ours: std::collections::HashSet<char> = byte_level_chars().keys().copied().collect();
        let theirs: std::collections::HashSet<char> =
            tokenizers::pre_tokenizers::byte_level::ByteLevel::alphabet()
                .into_iter()
                .collect();
        assert_eq!(ours, theirs);
        let decoder = tokenizers::decoders::byte_level::ByteLevel::default();
        let char_of: HashMap<u8, char> = byte_level_chars().iter().map(|(&c, &b)| (b, c)).collect();
        // Every byte that can start or continue a character, decoded in a valid sequence.
        let mut sequences: Vec<Vec<u8>> = (0..0x80u8).map(|b| vec![b]).collect();
        sequences.extend((0xC2..=0xDFu8).flat_map(|a| (0x80..=0xBFu8).map(move |b| vec![a, b])));
        sequences.extend((0xE1..=0xEFu8).map(|a| vec![a, 0x80, 0x80]));
        sequences.push(vec![0xE0, 0xA0, 0x80]);
        sequences.extend((0xF1..=0xF4u8).map(|a| vec![a, 0x80, 0x80, 0x80]));
        sequences.push(vec![0xF0, 0x90, 0x80, 0x80]);
        for bytes in sequences {
            let token: String = bytes.iter().map(|b| char_of[b]).collect();
            assert_eq!(byte_level_bytes(&token), bytes);
            let decoded = decoder.decode(vec![token]).unwrap();
            assert_eq!(decoded.as_bytes(), bytes.as_slice());
        }
        // A token with a character outside the alphabet is its own UTF-8.
        assert_eq!(byte_level_bytes("a b"), b"a b");
    }

    #[test]
    fn character_boundaries() {
        assert!(ends_between_characters(b""));
        assert!(ends_between_characters(b"abc"));
        assert!(ends_between_characters("é".as_bytes()));
        assert!(ends_between_characters(&"中".as_bytes()[1..]));
        assert!(!ends_between_characters(&"中".as_bytes()[..2]));
        assert!(!ends_between_characters(&[b'a', 0xF0, 0x9F]));
        assert!(!ends_between_characters(&"😀".as_bytes()[..3]));
        assert!(ends_between_characters(&"😀".as_bytes()[1..]));
        assert!(ends_between_characters(&[0xE4, 0xB8, b'a']));
        assert!(ends_between_characters(&[0xFF]));
        assert!(ends_between_characters("\u{FFFD}".as_bytes()));
    }

    #[test]
    fn byte_tokens() {
        assert!(is_byte_token("<0x0A>"));
        assert!(is_byte_token("<0xff>"));
        assert!(!is_byte_token("<0xZZ>"));
        assert!(!is_byte_token("<0x0A"));
        assert!(!is_byte_token("<0xé>"));
    }

    #[test]
    fn head_offsets() {
        let mut head = Head::default();
        head.push("hé, ");
        head.push("wörld");
        assert_eq!(
            (head.chars, head.last, head.last_space),
            (9, Some('d'), Some(3))
        );
        assert_eq!(head.others, vec![2]);
        assert!(head.has_other_from(2) && !head.has_other_from(3));
        assert_eq!(head.byte_at(5), 6);
        assert_eq!(head.byte_at(7), 9);
        assert_eq!(head.byte_at(1), 1);
        assert_eq!(head.byte_at(9), head.text.len());
    }
}
