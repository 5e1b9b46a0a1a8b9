//! Decoding generated token ids for response parsing the way 5.25 does it (`TokenIdDecoder`):
//! a control token generated as its id keeps its spelling and can act as a delimiter, while
//! the same spelling made of ordinary tokens is **defused** with [`MARKER`]s between its
//! characters, so that no delimiter matches it. Text that could still become a control-token
//! spelling, and ids that end inside a UTF-8 character, are held back until later ids decide;
//! [`TokenIdDecoder::flush`] releases the rest and starts a new sequence.
//!
//! Lengths here are counted in characters, as the reference's Python slicing counts them.

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, MatchKind};

use crate::ModelTokenizer;
use crate::slices::char_len;

/// The character put between the characters of a defused spelling: a Unicode noncharacter,
/// which model output does not contain. The engine strips it from every value it parses from
/// token ids (`rtbench_engine::MARKER`).
pub const MARKER: char = '\u{FDD2}';

/// A model's control tokens: the spellings that act as delimiters only when generated as their
/// own ids. Which added tokens they are is the model folder's business (its chat template and
/// config decide); this holds their ids and the matcher for their spellings.
#[derive(Clone, Debug, Default)]
pub struct ControlTokens {
    /// The spellings, sorted.
    spellings: Vec<String>,
    /// The added tokens' ids whose content is a control-token spelling.
    by_id: HashMap<u32, String>,
    /// Leftmost-longest search over the spellings: the reference's alternation of the escaped
    /// spellings, longest first, finds the same matches.
    matcher: Option<AhoCorasick>,
    /// Every proper prefix of a spelling (`<`, `<|`, ... for `<|end|>`).
    prefixes: HashSet<String>,
    /// The longest of those prefixes, in characters.
    longest_prefix: usize,
}

impl ControlTokens {
    /// The control tokens spelled as `spellings`, with the ids the tokenizer's added tokens give
    /// them (an added token whose content is one of the spellings).
    pub fn new(
        tokenizer: &ModelTokenizer,
        spellings: impl IntoIterator<Item = String>,
    ) -> ControlTokens {
        let mut spellings: Vec<String> = spellings.into_iter().filter(|s| !s.is_empty()).collect();
        spellings.sort();
        spellings.dedup();
        let set: HashSet<&str> = spellings.iter().map(String::as_str).collect();
        let by_id = tokenizer
            .added_tokens()
            .into_iter()
            .filter(|t| set.contains(t.content.as_str()))
            .map(|t| (t.id, t.content))
            .collect();
        let prefixes: HashSet<String> = spellings
            .iter()
            .flat_map(|s| {
                s.char_indices()
                    .skip(1)
                    .map(move |(i, _)| s[..i].to_string())
            })
            .collect();
        let longest_prefix = prefixes.iter().map(|p| char_len(p)).max().unwrap_or(0);
        let matcher = (!spellings.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&spellings)
                .expect("literal spellings always build a matcher")
        });
        ControlTokens {
            spellings,
            by_id,
            matcher,
            prefixes,
            longest_prefix,
        }
    }

    /// The spellings, sorted.
    pub fn spellings(&self) -> &[String] {
        &self.spellings
    }

    /// The spelling of `id` when it is a control token.
    pub fn spelling(&self, id: u32) -> Option<&str> {
        self.by_id.get(&id).map(String::as_str)
    }

    /// Whether there are none (nothing is ever defused).
    pub fn is_empty(&self) -> bool {
        self.spellings.is_empty()
    }

    /// Byte ranges of the control-token spellings in `text`, leftmost first, not overlapping.
    pub fn find_iter<'a>(
        &'a self,
        text: &'a str,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
        self.matcher
            .iter()
            .flat_map(move |m| m.find_iter(text).map(|m| m.range()))
    }

    /// `text` with every control-token spelling defused (markers between its characters).
    pub fn defuse(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for r in self.find_iter(text) {
            out.push_str(&text[last..r.start]);
            for (i, c) in text[r.clone()].chars().enumerate() {
                if i > 0 {
                    out.push(MARKER);
                }
                out.push(c);
            }
            last = r.end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// How many characters at the end of `text` could still become a control-token spelling
    /// (the longest suffix that is a proper prefix of one).
    fn held_suffix(&self, text: &str) -> usize {
        let n = char_len(text);
        (1..=self.longest_prefix.min(n))
            .rev()
            .find(|&len| {
                let start = text
                    .char_indices()
                    .nth(n - len)
                    .map_or(text.len(), |(i, _)| i);
                self.prefixes.contains(&text[start..])
            })
            .unwrap_or(0)
    }
}

/// The tokenizers library's incremental decoder state (`DecodeStream`): the ids still needed
/// to decode the next piece, and the text they decoded to.
#[derive(Clone, Debug, Default)]
struct Stream {
    ids: Vec<u32>,
    prefix: String,
    prefix_index: usize,
}

/// Turns generated ids into the text the parser scans, defusing control-token spellings made
/// of ordinary tokens (see the module documentation).
pub struct TokenIdDecoder<'t> {
    tokenizer: &'t ModelTokenizer,
    control: &'t ControlTokens,
    stream: Stream,
    /// Ids the stream holds back as an incomplete character.
    pending: Vec<u32>,
    /// Text held back as a possible control-token spelling.
    tail: String,
}

impl<'t> TokenIdDecoder<'t> {
    /// A decoder at the start of a sequence.
    pub fn new(tokenizer: &'t ModelTokenizer, control: &'t ControlTokens) -> TokenIdDecoder<'t> {
        TokenIdDecoder {
            tokenizer,
            control,
            stream: Stream::default(),
            pending: Vec::new(),
            tail: String::new(),
        }
    }

    /// Decodes the next ids and returns the text they add (empty while text is held back).
    /// Ids outside the vocabulary decode to nothing, as in the reference.
    pub fn feed(&mut self, ids: &[u32]) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = ids;
        while let Some(&first) = rest.first() {
            let control = self.control.spelling(first).is_some();
            let run_len = rest
                .iter()
                .position(|&id| self.control.spelling(id).is_some() != control)
                .unwrap_or(rest.len());
            let (run, next) = rest.split_at(run_len);
            rest = next;
            if control {
                for &id in run {
                    let spelling = self.control.spelling(id).unwrap_or_default();
                    // Decoding a control token also releases an incomplete character held
                    // before it.
                    let decoded = self.step(&[id])?.unwrap_or_default();
                    let before = decoded.strip_suffix(spelling).unwrap_or(&decoded);
                    out.push_str(&self.defuse(before, true));
                    out.push_str(spelling);
                }
                self.pending.clear();
                continue;
            }
            match self.step(run)? {
                // The run ends in the middle of a multi-byte character.
                None => self.pending.extend_from_slice(run),
                Some(decoded) => {
                    self.pending.clear();
                    out.push_str(&self.defuse(&decoded, false));
                }
            }
        }
        Ok(out)
    }

    /// Releases everything held back and starts a new sequence: the next ids decode as
    /// `decode` decodes a generation without its prompt (without the space a Metaspace decoder
    /// strips at the start, for one).
    pub fn flush(&mut self) -> Result<String, String> {
        let text = if self.pending.is_empty() {
            String::new()
        } else {
            self.tokenizer.decode_lenient(&self.pending)?
        };
        self.stream = Stream::default();
        self.pending.clear();
        Ok(self.defuse(&text, true))
    }

    /// The text held back so far: ids of an incomplete character, and a possible spelling.
    pub fn held(&self) -> (&[u32], &str) {
        (&self.pending, &self.tail)
    }

    /// One step of the library's `DecodeStream` with `ids` (what the reference's
    /// `DecodeStream.step` does with a list): `None` while the ids end inside a character.
    fn step(&mut self, ids: &[u32]) -> Result<Option<String>, String> {
        let Stream {
            ids: window,
            prefix,
            prefix_index,
        } = &mut self.stream;
        // The library decodes the window with the new ids.
        self.tokenizer.count_decoded(window.len() + ids.len());
        self.tokenizer
            .check_decode_growth(&[window.as_slice(), ids].concat())?;
        self.tokenizer
            .library(&format!("decode {}", crate::shown_ids(ids)), || {
                tokenizers::step_decode_stream(
                    self.tokenizer.inner(),
                    ids.to_vec(),
                    false,
                    window,
                    prefix,
                    prefix_index,
                )
            })
    }

    /// Defuses the spellings in the held tail plus `text`; unless `last`, holds back a new tail
    /// that could still become a spelling (never cutting through a complete one).
    fn defuse(&mut self, text: &str, last: bool) -> String {
        let mut text = std::mem::take(&mut self.tail) + text;
        if !last {
            let held = self.control.held_suffix(&text);
            if held > 0 {
                let n = char_len(&text);
                let byte_of = |chars: usize| {
                    text.char_indices()
                        .nth(chars)
                        .map_or(text.len(), |(i, _)| i)
                };
                let mut cut = byte_of(n - held);
                let from = byte_of((n - held).saturating_sub(self.control.longest_prefix));
                // A complete spelling that the cut would split is held back whole, so that it
                // is defused whole once the tail resolves.
                if let Some(r) = self
                    .control
                    .find_iter(&text[from..])
                    .map(|r| r.start + from..r.end + from)
                    .find(|r| r.start < cut && cut < r.end)
                {
                    cut = r.start;
                }
                self.tail = text.split_off(cut);
            }
        }
        self.control.defuse(&text)
    }
}
