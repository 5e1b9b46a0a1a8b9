//! Encoding a rendered chat whose user-supplied strings were marked, as transformers'
//! `apply_chat_template(..., tokenize=True, sanitize_control_tokens=True)` does: control tokens
//! found in the user's strings are wrapped in private-use markers before rendering
//! ([`mark`]), and the rendered text is then encoded with those tokens as plain text and the
//! template's own control tokens as their ids ([`encode_marked`](ModelTokenizer::encode_marked)). A user who writes
//! `<tool_call>` into a message can then not make the prompt hold the real token.

use crate::{ControlTokens, ModelTokenizer};
use tokenizers::{Model, OffsetReferential, OffsetType};

/// Put before a marked control token.
pub const START: char = '\u{F0000}';
/// Put after a marked control token.
pub const END: char = '\u{F0001}';

/// `s` with every control-token spelling wrapped in [`START`] and [`END`], after dropping any
/// marker already in it (so that markers cannot be used to forge a marked token).
pub fn mark(s: &str, control: &ControlTokens) -> String {
    let clean: String = s.chars().filter(|&c| c != START && c != END).collect();
    let mut out = String::with_capacity(clean.len() + 8);
    let mut last = 0;
    for r in control.find_iter(&clean) {
        out.push_str(&clean[last..r.start]);
        out.push(START);
        out.push_str(&clean[r.clone()]);
        out.push(END);
        last = r.end;
    }
    out.push_str(&clean[last..]);
    out
}

/// One piece of a marked chat.
enum Piece<'a> {
    /// Text the template wrote (its control tokens encode as their ids).
    Chat(&'a str),
    /// A marked token from the user's input (encoded as plain text).
    Marked(&'a str),
}

/// Splits a rendered chat on its markers as the reference does: `START token END` (`token` any
/// added token) is a marked token; any other marker is dropped, but still separates the text on
/// either side.
fn pieces<'a>(chat: &'a str, is_added: impl Fn(&str) -> bool) -> Vec<Piece<'a>> {
    let mut out = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while let Some(off) = chat[i..].find([START, END]) {
        let at = i + off;
        out.push(Piece::Chat(&chat[from..at]));
        let after = at + chat[at..].chars().next().map_or(1, char::len_utf8);
        let marked = chat[at..]
            .starts_with(START)
            .then(|| chat[after..].find(END))
            .flatten()
            .map(|end| &chat[after..after + end])
            .filter(|token| is_added(token));
        match marked {
            Some(token) => {
                out.push(Piece::Marked(token));
                i = after + token.len() + END.len_utf8();
            }
            None => i = after,
        }
        from = i;
    }
    out.push(Piece::Chat(&chat[from..]));
    out
}

impl ModelTokenizer {
    /// Encodes `text` as plain text: without matching any added token, special or not
    /// (normalizer, pre-tokenizer and model only, as the reference's
    /// `_encode_without_added_tokens`).
    pub fn encode_plain(&self, text: &str) -> Result<Vec<u32>, String> {
        let pieces = self.pre_tokenize_plain(text)?;
        let model = self.inner().get_model();
        self.library("encode", || {
            let mut ids = Vec::new();
            for (split, _, _) in pieces.get_splits(OffsetReferential::Original, OffsetType::Byte) {
                let tokens = model.tokenize(split)?;
                ids.extend(tokens.iter().map(|t| t.id));
            }
            Ok(ids)
        })
    }

    /// Encodes a chat rendered from marked inputs (`encode_marked_chat`): marked control tokens
    /// as plain text without their markers, the rest as usual. A piece after a marker is
    /// encoded after a newline that is then removed, so that a tokenizer adding a prefix space
    /// at the start of a string does not add one there. A marked token that the tokenizer
    /// produces from plain text anyway cannot be sanitized: that is the reference's error.
    pub fn encode_marked(&self, chat: &str) -> Result<Vec<u32>, String> {
        let added: std::collections::HashSet<String> =
            self.added_tokens().into_iter().map(|t| t.content).collect();
        let newline = self.encode_ids("\n")?;
        let mut ids = Vec::new();
        for (i, piece) in pieces(chat, |t| added.contains(t)).into_iter().enumerate() {
            let (text, plain) = match piece {
                Piece::Chat(t) => (t, false),
                Piece::Marked(t) => (t, true),
            };
            if text.is_empty() {
                continue;
            }
            if i == 0 {
                ids.extend(self.encode_ids(text)?);
                continue;
            }
            let encode = |s: &str| {
                if plain {
                    self.encode_plain(s)
                } else {
                    self.encode_ids(s)
                }
            };
            let with_newline = encode(&format!("\n{text}"))?;
            let piece_ids = match with_newline.strip_prefix(newline.as_slice()) {
                Some(rest) => rest.to_vec(),
                None => encode(text)?,
            };
            if plain
                && self
                    .token_id(text)
                    .is_some_and(|id| piece_ids.contains(&id))
            {
                return Err(format!(
                    "ValueError: Can't sanitize {}: the tokenizer produces it from plain text",
                    rtbench_engine::py::py_repr_str(text)
                ));
            }
            ids.extend(piece_ids);
        }
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_splits_on_marked_tokens_and_lone_markers() {
        let is_added = |t: &str| t == "<a>";
        let chat = format!("x{START}<a>{END}y{START}zz{END}w{END}v");
        let got: Vec<String> = pieces(&chat, is_added)
            .into_iter()
            .map(|p| match p {
                Piece::Chat(t) => format!("chat:{t}"),
                Piece::Marked(t) => format!("marked:{t}"),
            })
            .collect();
        assert_eq!(
            got,
            [
                "chat:x",
                "marked:<a>",
                "chat:y",
                "chat:zz",
                "chat:w",
                "chat:v"
            ]
        );
    }
}
