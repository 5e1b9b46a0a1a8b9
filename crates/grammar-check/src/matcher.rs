//! A Lark grammar compiled by llguidance, over single-byte tokens: every byte of the text is
//! one token, so "where the grammar stops accepting" is a byte offset into the text, and a
//! random walk chooses bytes. The grammar engine is the one serving stacks constrain decoding
//! with, so what it accepts here is what a constrained model could write.

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv};
use llguidance::{Matcher, ParserFactory};

/// Whether a whole text is in the grammar's language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acceptance {
    /// The grammar accepts the text and may end there.
    Accepted,
    /// The grammar refuses the byte at this offset (everything before it is a valid start).
    StopsAt(usize),
    /// Every byte is accepted but the grammar cannot end there: more must follow.
    Incomplete,
}

/// A compiled grammar, ready to check texts and walk.
pub struct Grammar {
    initial: Matcher,
    eos: u32,
}

impl Grammar {
    /// Compiles Lark source (llguidance's dialect). The error is llguidance's own message,
    /// which quotes the grammar's line and column.
    pub fn from_lark(lark: &str) -> Result<Grammar, String> {
        let env: TokEnv = ApproximateTokEnv::single_byte_env();
        let eos = env.tok_trie().eos_token();
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
        factory.quiet();
        let parser = factory.create_parser(TopLevelGrammar::from_lark(lark.to_string()));
        let initial = Matcher::new(parser);
        if let Some(e) = initial.get_error() {
            return Err(e);
        }
        Ok(Grammar { initial, eos })
    }

    /// A fresh matcher at the grammar's start.
    pub(crate) fn start(&self) -> Matcher {
        self.initial.deep_clone()
    }

    /// The end-of-sequence token of the single-byte vocabulary.
    pub(crate) fn eos(&self) -> u32 {
        self.eos
    }

    /// Whether the grammar accepts `text` whole.
    pub fn accepts(&self, text: &str) -> Acceptance {
        let mut m = self.start();
        let tokens: Vec<u32> = text.bytes().map(u32::from).collect();
        match m.try_consume_tokens(&tokens) {
            Ok(n) if n < tokens.len() => Acceptance::StopsAt(n),
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
}
