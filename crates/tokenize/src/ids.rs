//! Parsing a generation given as token ids, as the reference's `ResponseParser(template,
//! prefix=ids, tokenizer=tok)` does from 5.25 on: the ids go through a [`TokenIdDecoder`]
//! (control-token spellings made of ordinary tokens are defused) and the engine's parser strips
//! the defusing markers from chunks and values. Under 5.24 ids are decoded and parsed as text:
//! [`parse_ids`] decodes them whole, as 5.24's `tokenizer.parse_response` does, and a stream
//! decodes them the way a client would, with nothing defused.

use rtbench_engine::event::Event;
use rtbench_engine::parser::{Events, Options, ParseError, Parser};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};

use crate::{ControlTokens, ModelTokenizer, TokenIdDecoder};

/// The prompt before a generation of ids: ids, or text (encoded first, as the reference
/// encodes a text prefix when it parses ids).
#[derive(Clone, Copy, Debug)]
pub enum Prefix<'a> {
    Ids(&'a [u32]),
    Text(&'a str),
}

/// A decoding failure, as a parse error.
fn decode_error(message: String) -> ParseError {
    ParseError {
        message,
        field: None,
        span: None,
        body: None,
    }
}

/// A streaming parser fed token ids.
pub struct IdParser<'t> {
    decoder: TokenIdDecoder<'t>,
    parser: Parser,
    /// The decoded prompt (from the start anchor's cut on, as the parser has it) and
    /// generation: the text every event's span points into.
    document: String,
}

/// The control tokens a parser of `template` defuses with: the model's under 5.25, none before
/// (5.24 parses the decoded text).
fn control_for<'t>(template: &Template, control: &'t ControlTokens) -> &'t ControlTokens {
    static NONE: std::sync::OnceLock<ControlTokens> = std::sync::OnceLock::new();
    if template.reference().defuses_control_tokens() {
        control
    } else {
        NONE.get_or_init(ControlTokens::default)
    }
}

impl<'t> IdParser<'t> {
    /// A parser for a generation of ids after `prefix` (required, as in the reference: an
    /// empty one opts out). `whole_text` when every id comes in one feed, as `parse_response`
    /// feeds them.
    pub fn new(
        template: &Template,
        prefix: Option<Prefix<'_>>,
        tools: Option<&Value>,
        tokenizer: &'t ModelTokenizer,
        control: &'t ControlTokens,
        events: Events,
        whole_text: bool,
    ) -> Result<IdParser<'t>, ParseError> {
        let defusing = template.reference().defuses_control_tokens();
        let mut decoder = TokenIdDecoder::new(tokenizer, control_for(template, control));
        let prefix_text = match prefix {
            // The parser raises the reference's error for a missing prefix.
            None => None,
            Some(p) => {
                let encoded;
                let ids = match p {
                    Prefix::Ids(ids) => ids,
                    Prefix::Text(text) => {
                        encoded = tokenizer.encode_ids(text).map_err(decode_error)?;
                        &encoded[..]
                    }
                };
                let mut text = decoder.feed(ids).map_err(decode_error)?;
                text.push_str(&decoder.flush().map_err(decode_error)?);
                Some(text)
            }
        };
        let options = Options {
            events,
            whole_text,
            token_ids: defusing,
        };
        let parser = Parser::with_options(template, prefix_text.as_deref(), tools, options)?;
        let document = prefix_text.unwrap_or_default();
        Ok(IdParser {
            decoder,
            parser,
            document,
        })
    }

    /// Feeds the next ids; returns the events and the text they added (empty while the decoder
    /// holds text back).
    pub fn feed(&mut self, ids: &[u32]) -> Result<(Vec<Event>, String), ParseError> {
        let text = self.decoder.feed(ids).map_err(decode_error)?;
        self.document.push_str(&text);
        let events = self.parser.feed(&text)?;
        Ok((events, text))
    }

    /// Ends the stream: the decoder's held text goes to the parser, which finalizes. Returns
    /// the message, the final events and that last text.
    pub fn finalize(&mut self) -> Result<(Dict, Vec<Event>, String), ParseError> {
        let tail = self.decoder.flush().map_err(decode_error)?;
        self.document.push_str(&tail);
        let mut events = Vec::new();
        let message = self.parser.finalize_with(&mut events, &tail)?;
        Ok((message, events, tail))
    }

    /// The events of the prompt.
    pub fn initial_events(&self) -> &[Event] {
        self.parser.initial_events()
    }

    /// The decoded prompt and generation so far (defused spellings carry their markers).
    pub fn document(&self) -> &str {
        &self.document
    }

    /// The engine's parser (held text, origin, output so far).
    pub fn parser(&self) -> &Parser {
        &self.parser
    }
}

/// One-shot parse of a generation of ids (the reference's `parse_response(ids, template,
/// prefix=..., tokenizer=tok)`): under 5.25 through the defusing decoder in one feed; under
/// 5.24 the ids decoded whole and parsed as text, as 5.24's `tokenizer.parse_response` does.
pub fn parse_ids(
    template: &Template,
    prefix: Option<Prefix<'_>>,
    ids: &[u32],
    tools: Option<&Value>,
    tokenizer: &ModelTokenizer,
    control: &ControlTokens,
) -> Result<Dict, ParseError> {
    if !template.reference().defuses_control_tokens() {
        let prefix = match prefix {
            None => None,
            Some(Prefix::Text(t)) => Some(t.to_string()),
            Some(Prefix::Ids(ids)) => Some(tokenizer.decode_lenient(ids).map_err(decode_error)?),
        };
        let text = tokenizer.decode_lenient(ids).map_err(decode_error)?;
        return rtbench_engine::parse_response_owned(template, prefix.as_deref(), text, tools);
    }
    let mut parser = IdParser::new(
        template,
        prefix,
        tools,
        tokenizer,
        control,
        Events::None,
        true,
    )?;
    parser.feed(ids)?;
    Ok(parser.finalize()?.0)
}
