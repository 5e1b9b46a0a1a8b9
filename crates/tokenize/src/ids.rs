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
    /// The prompt's token ids, decoded with the generation's tokenizer.
    Ids(&'a [u32]),
    /// The prompt as text (encoded to ids first when the defusing decoder needs ids).
    Text(&'a str),
}

/// A decoding failure, as a parse error: the tokenizers library raises a plain `Exception`.
fn decode_error(message: String) -> ParseError {
    ParseError {
        kind: rtbench_engine::py::ExceptionType::Exception,
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
            Some(p) => Some(prefix_text(&mut decoder, p, tokenizer)?),
        };
        let options = Options {
            events,
            whole_text,
            token_ids: defusing,
            values_once: false,
            lists_in_events: false,
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

/// The text a one-shot parse of ids scans, as the reference decodes it: the prompt, what the
/// decoder released for the one feed of every id, and what it released when flushed at the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// `None` when no prompt was given (the parser raises the reference's error).
    pub prefix: Option<String>,
    /// The generation's text: what the decoder released for the ids, fed all at once.
    pub fed: String,
    /// What the defusing decoder released when flushed after the last id (empty without
    /// defusing).
    pub tail: String,
    /// Whether control-token spellings were defused (5.25): the parser strips the markers.
    pub defused: bool,
}

impl Decoded {
    /// The generation's text as the parser scans it (defused spellings with their markers).
    pub fn generation(&self) -> String {
        format!("{}{}", self.fed, self.tail)
    }
}

/// Decodes a prompt and a generation of ids the way the reference's one-shot parse of ids
/// does: under 5.25 through the defusing decoder (the prompt fed and flushed, then every id in
/// one feed, then the flush at the end); under 5.24 each decoded whole, as 5.24's
/// `tokenizer.parse_response` decodes them.
pub fn decode_for_parse(
    template: &Template,
    prefix: Option<Prefix<'_>>,
    ids: &[u32],
    tokenizer: &ModelTokenizer,
    control: &ControlTokens,
) -> Result<Decoded, ParseError> {
    if !template.reference().defuses_control_tokens() {
        let prefix = match prefix {
            None => None,
            Some(Prefix::Text(t)) => Some(t.to_string()),
            Some(Prefix::Ids(ids)) => Some(tokenizer.decode_lenient(ids).map_err(decode_error)?),
        };
        let fed = tokenizer.decode_lenient(ids).map_err(decode_error)?;
        return Ok(Decoded {
            prefix,
            fed,
            tail: String::new(),
            defused: false,
        });
    }
    let mut decoder = TokenIdDecoder::new(tokenizer, control);
    let prefix = match prefix {
        None => None,
        Some(p) => Some(prefix_text(&mut decoder, p, tokenizer)?),
    };
    let fed = decoder.feed(ids).map_err(decode_error)?;
    let tail = decoder.flush().map_err(decode_error)?;
    Ok(Decoded {
        prefix,
        fed,
        tail,
        defused: true,
    })
}

/// The prompt as the decoder turns it into text: ids (a text prompt encoded first) fed and
/// flushed, so that the generation decodes as a new sequence.
fn prefix_text(
    decoder: &mut TokenIdDecoder<'_>,
    prefix: Prefix<'_>,
    tokenizer: &ModelTokenizer,
) -> Result<String, ParseError> {
    let encoded;
    let ids = match prefix {
        Prefix::Ids(ids) => ids,
        Prefix::Text(text) => {
            encoded = tokenizer.encode_ids(text).map_err(decode_error)?;
            &encoded[..]
        }
    };
    let mut text = decoder.feed(ids).map_err(decode_error)?;
    text.push_str(&decoder.flush().map_err(decode_error)?);
    Ok(text)
}

/// One-shot parse of a generation of ids (the reference's `parse_response(ids, template,
/// prefix=..., tokenizer=tok)`; under 5.24 `tokenizer.parse_response(ids, ...)`, which decodes
/// the ids and parses the text).
pub fn parse_ids(
    template: &Template,
    prefix: Option<Prefix<'_>>,
    ids: &[u32],
    tools: Option<&Value>,
    tokenizer: &ModelTokenizer,
    control: &ControlTokens,
) -> Result<Dict, ParseError> {
    let d = decode_for_parse(template, prefix, ids, tokenizer, control)?;
    let options = Options {
        events: Events::None,
        whole_text: true,
        token_ids: d.defused,
        values_once: false,
        lists_in_events: false,
    };
    let mut parser = Parser::with_options(template, d.prefix.as_deref(), tools, options)?;
    parser.feed(&d.fed)?;
    let mut events = Vec::new();
    parser.finalize_with(&mut events, &d.tail)
}

/// A generation of ids fed one id at a time through the defusing decoder (5.25), as a
/// streaming client of the reference feeds them: the decoded prompt, the text each id released
/// (often empty while the decoder holds text back) and the text the flush at the end released.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdFeeds {
    /// The prompt as the decoder turns it into text (fed and flushed before the generation).
    pub prefix: String,
    /// The text each id released, one entry per id (often empty while text is held back).
    pub pieces: Vec<String>,
    /// The text the decoder's flush released after the last id.
    pub tail: String,
}

/// Feeds `ids` one at a time (see [`IdFeeds`]).
pub fn id_feeds(
    prefix: Prefix<'_>,
    ids: &[u32],
    tokenizer: &ModelTokenizer,
    control: &ControlTokens,
) -> Result<IdFeeds, ParseError> {
    let mut decoder = TokenIdDecoder::new(tokenizer, control);
    let prefix = prefix_text(&mut decoder, prefix, tokenizer)?;
    let pieces = ids
        .iter()
        .map(|&id| decoder.feed(&[id]).map_err(decode_error))
        .collect::<Result<_, _>>()?;
    let tail = decoder.flush().map_err(decode_error)?;
    Ok(IdFeeds {
        prefix,
        pieces,
        tail,
    })
}
