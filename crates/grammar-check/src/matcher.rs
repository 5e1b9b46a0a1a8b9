//! A Lark grammar compiled by llguidance over a vocabulary: single bytes (every byte of the
//! text one token, so "where the grammar stops accepting" is a byte offset), or a model's own
//! tokens read from its `tokenizer.json`, special tokens included, so that a grammar naming
//! `<|im_end|>` as a special token is checked on the token a model really emits. The grammar
//! engine is the one serving stacks constrain decoding with: what it accepts here is what a
//! constrained model could write.

use std::sync::Arc;

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv, TokRxInfo, TokTrie};
use llguidance::{Matcher, ParserFactory};

/// Whether a whole text is in the grammar's language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acceptance {
    /// The grammar accepts the text and may end there.
    Accepted,
    /// The grammar refuses the token that starts at this byte offset (everything before it is
    /// a valid start).
    StopsAt(usize),
    /// Every token is accepted but the grammar cannot end there: more must follow.
    Incomplete,
}

/// The tokens a grammar is checked over.
#[derive(Clone, Debug)]
pub enum Vocabulary {
    /// One token per byte.
    Bytes,
    /// A model's tokens: each token's bytes, special tokens marked by a leading 0xFF (as
    /// llguidance reads them from a `tokenizer.json`).
    Model(Vec<Vec<u8>>),
}

impl Vocabulary {
    /// A model's vocabulary from its `tokenizer.json` (byte-level or byte-fallback BPE).
    pub fn from_tokenizer_json(json: &serde_json::Value) -> Result<Vocabulary, String> {
        // The reader asserts on malformed vocabularies: a file it cannot read is an error
        // here, not a crash.
        let words = std::panic::catch_unwind(|| llguidance::token_bytes_from_tokenizer_json(json))
            .map_err(|_| "the tokenizer's vocabulary could not be read".to_string())?
            .map_err(|e| e.to_string())?;
        Ok(Vocabulary::Model(words))
    }
}

/// A compiled grammar, ready to check texts and walk.
pub struct Grammar {
    initial: Matcher,
    env: TokEnv,
    eos: u32,
    /// Special tokens' spellings and ids, longest first (to find them in a text).
    specials: Vec<(Vec<u8>, u32)>,
    /// The bytes a special token's spelling starts with.
    special_starts: [bool; 256],
    /// One token per byte (token `b` is byte `b`).
    bytes: bool,
    /// The tokens by their first byte (group 256: the model's special tokens), so that a walk
    /// draws a first byte as a byte-level walk would and then one of its tokens: a large
    /// vocabulary does not drown structure in its thousands of word pieces.
    groups: Vec<Vec<u32>>,
    /// The groups a walk draws from with their weights, by whitespace run (made on the first
    /// walk; see `walk::all_group_choices`).
    walk_choices: std::sync::OnceLock<Vec<Choices>>,
}

/// Groups of tokens (see [`Grammar::groups`]) with a walk's weights for them, and the
/// weights' sum.
pub(crate) type Choices = (Vec<(u32, f64)>, f64);

/// The group of the model's special tokens in [`Grammar::groups`].
pub(crate) const SPECIAL_GROUP: usize = 256;

/// The end-of-sequence token added after a model's vocabulary: the grammar's own end, apart
/// from whatever the model's end-of-turn tokens mean in the template.
const END: &[u8] = b"\xff<|rtbench-grammar-end|>";

impl Grammar {
    /// Compiles Lark source (llguidance's dialect) over single bytes. The error is
    /// llguidance's own message, which quotes the grammar's line and column.
    pub fn from_lark(lark: &str) -> Result<Grammar, String> {
        Grammar::new(lark, &Vocabulary::Bytes)
    }

    /// Compiles Lark source over a vocabulary.
    pub fn new(lark: &str, vocabulary: &Vocabulary) -> Result<Grammar, String> {
        let env: TokEnv = match vocabulary {
            Vocabulary::Bytes => ApproximateTokEnv::single_byte_env(),
            Vocabulary::Model(words) => {
                let mut words = words.clone();
                // Ids the file leaves unused get a special spelling of their own, so no two
                // tokens are empty.
                for (i, w) in words.iter_mut().enumerate() {
                    if w.is_empty() {
                        *w = format!("\u{ff}<|rtbench-unused-{i}|>").into_bytes();
                        w[0] = TokTrie::SPECIAL_TOKEN_MARKER;
                        w.remove(1);
                    }
                }
                words.push(END.to_vec());
                let n = u32::try_from(words.len()).map_err(|_| "too many tokens".to_string())?;
                let info = TokRxInfo::new(n, n - 1);
                Arc::new(ApproximateTokEnv::new(TokTrie::from(&info, &words)))
            }
        };
        let trie = env.tok_trie();
        let eos = trie.eos_token();
        let mut specials: Vec<(Vec<u8>, u32)> = (0..trie.vocab_size() as u32)
            .filter(|&t| t != eos)
            .filter_map(|t| {
                let b = trie.token(t);
                (b.len() > 1 && b[0] == TokTrie::SPECIAL_TOKEN_MARKER).then(|| (b[1..].to_vec(), t))
            })
            .collect();
        if matches!(vocabulary, Vocabulary::Bytes) {
            // The single-byte vocabulary's own sample special tokens are not the model's.
            specials.clear();
        }
        specials.sort_by_key(|s| std::cmp::Reverse(s.0.len()));
        let bytes = matches!(vocabulary, Vocabulary::Bytes);
        let mut special_starts = [false; 256];
        for (s, _) in &specials {
            if let Some(&b) = s.first() {
                special_starts[usize::from(b)] = true;
            }
        }
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); SPECIAL_GROUP + 1];
        for t in 0..trie.vocab_size() as u32 {
            let b = trie.token(t);
            match b.first() {
                _ if t == eos => {}
                // The single-byte vocabulary's sample special tokens are never drawn.
                Some(&TokTrie::SPECIAL_TOKEN_MARKER) if b.len() > 1 && bytes => {}
                Some(&TokTrie::SPECIAL_TOKEN_MARKER) if b.len() > 1 => {
                    groups[SPECIAL_GROUP].push(t)
                }
                Some(&first) => groups[usize::from(first)].push(t),
                None => {}
            }
        }
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
        factory.quiet();
        let parser = factory.create_parser(TopLevelGrammar::from_lark(lark.to_string()));
        let initial = Matcher::new(parser);
        if let Some(e) = initial.get_error() {
            return Err(e);
        }
        Ok(Grammar {
            initial,
            env,
            eos,
            special_starts,
            specials,
            bytes,
            groups,
            walk_choices: std::sync::OnceLock::new(),
        })
    }

    /// A fresh matcher at the grammar's start. It shares the grammar's lexer (and so the
    /// lexer states built so far) with every other matcher started here: each walk and each
    /// text checked would otherwise build the same automaton states again, which is most of
    /// the time a check takes over a large vocabulary. (The parse state is its own.)
    pub(crate) fn start(&self) -> Matcher {
        self.initial.clone()
    }

    /// The end-of-sequence token.
    pub(crate) fn eos(&self) -> u32 {
        self.eos
    }

    /// The tokens by their first byte, the special tokens last (see [`SPECIAL_GROUP`]).
    pub(crate) fn groups(&self) -> &[Vec<u32>] {
        &self.groups
    }

    /// The groups a walk draws from, by whitespace run, made by `make` the first time.
    pub(crate) fn walk_choices(&self, make: impl FnOnce(&Grammar) -> Vec<Choices>) -> &[Choices] {
        self.walk_choices.get_or_init(|| make(self))
    }

    /// The group a token is in.
    pub(crate) fn group_of(&self, t: u32) -> Option<usize> {
        let b = self.env.tok_trie().token(t);
        match b.first() {
            _ if t == self.eos => None,
            Some(&TokTrie::SPECIAL_TOKEN_MARKER) if b.len() > 1 => {
                (!self.bytes).then_some(SPECIAL_GROUP)
            }
            Some(&first) => Some(usize::from(first)),
            None => None,
        }
    }

    /// A token's text (a special token's spelling without its marker).
    pub(crate) fn token_bytes(&self, t: u32) -> &[u8] {
        let b = self.env.tok_trie().token(t);
        match b.first() {
            Some(&TokTrie::SPECIAL_TOKEN_MARKER) if b.len() > 1 && !self.bytes => &b[1..],
            _ => b,
        }
    }

    /// The model's special tokens' spellings (none over bytes).
    pub(crate) fn special_spellings(&self) -> impl Iterator<Item = String> + '_ {
        self.specials
            .iter()
            .map(|(b, _)| String::from_utf8_lossy(b).into_owned())
    }

    /// Whether a token is one of the model's special tokens.
    pub fn is_special(&self, t: u32) -> bool {
        self.specials.iter().any(|s| s.1 == t)
    }

    /// `text` as tokens: special tokens' spellings as those tokens, the rest greedily (the
    /// grammar engine accepts any tokenization of the text it allows).
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let bytes = text.as_bytes();
        if self.bytes {
            return bytes.iter().map(|&b| u32::from(b)).collect();
        }
        let trie = self.env.tok_trie();
        let mut out = Vec::new();
        let (mut i, mut plain) = (0, 0);
        while i < bytes.len() {
            // Only bytes that start a special token's spelling need the list searched.
            let special = if self.special_starts[usize::from(bytes[i])] {
                self.specials.iter().find(|s| bytes[i..].starts_with(&s.0))
            } else {
                None
            };
            if let Some((s, t)) = special {
                out.extend(trie.greedy_tokenize(&bytes[plain..i]));
                out.push(*t);
                i += s.len();
                plain = i;
            } else {
                i += 1;
            }
        }
        out.extend(trie.greedy_tokenize(&bytes[plain..]));
        out
    }

    /// Whether the grammar accepts `text` whole.
    pub fn accepts(&self, text: &str) -> Acceptance {
        let mut m = self.start();
        let tokens = self.tokenize(text);
        match m.try_consume_tokens(&tokens) {
            Ok(n) if n < tokens.len() => {
                Acceptance::StopsAt(tokens[..n].iter().map(|&t| self.token_bytes(t).len()).sum())
            }
            Ok(_) if m.is_accepting().unwrap_or(false) => Acceptance::Accepted,
            Ok(_) => Acceptance::Incomplete,
            Err(_) => Acceptance::StopsAt(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THINK: &str = "start: \"<think>\" think answer\nthink[lazy]: /(?s:.*)<\\/think>/\nanswer[lazy]: /(?s:.*)<\\|im_end\\|>/\n";

    #[test]
    fn a_lazy_text_ends_at_its_first_close() {
        let g = Grammar::from_lark(THINK).unwrap();
        assert_eq!(
            g.accepts("<think>a</thin</think>b<|im_end|>"),
            Acceptance::Accepted
        );
        // The answer ends at its first close: nothing may follow it.
        assert_eq!(
            g.accepts("<think>a</think>b<|im_end|>x"),
            Acceptance::StopsAt(27)
        );
        assert_eq!(g.accepts("<think>a</think>b"), Acceptance::Incomplete);
        assert_eq!(g.accepts("<thonk>"), Acceptance::StopsAt(3));
    }

    #[test]
    fn a_bad_grammar_is_refused_with_llguidances_message() {
        let e = Grammar::from_lark("start: text\ntext: /a/ & /b/\n")
            .err()
            .unwrap();
        assert!(e.contains("& is only supported for tokens"), "{e}");
    }

    #[test]
    fn a_special_token_in_the_grammar_is_the_models_token_not_its_spelling() {
        let json: serde_json::Value =
            serde_json::from_str(include_str!("../../../samples/qwen3/tokenizer.json")).unwrap();
        let v = Vocabulary::from_tokenizer_json(&json).unwrap();
        let g = Grammar::new("start: /[a-z ]*/ <|im_end|>\n", &v).unwrap();
        assert_eq!(g.accepts("hello there<|im_end|>"), Acceptance::Accepted);
        let tokens = g.tokenize("hi<|im_end|>");
        assert!(g.is_special(*tokens.last().unwrap()));
        // The same spelling as plain text is not the special token.
        let plain = Grammar::new("start: /[a-z ]*/ \"<|im_end|>\"\n", &v).unwrap();
        assert_eq!(plain.accepts("hello<|im_end|>"), Acceptance::StopsAt(5));
    }
}
