//! A model folder's own files, beside its response template: the chat template that renders
//! the prompt (`tokenizer_config.json`'s `chat_template`, or `chat_template.jinja`) and the
//! tokenizer (`tokenizer.json`). With them a sample may give the conversation instead of the
//! prefix, and token ids instead of text; the replay and the chunking check can feed the
//! generation token by token the way a serving engine releases it; and the parsed message can
//! be rendered back to see whether the chat template would write the same text (round trip).

use std::path::{Path, PathBuf};

use rtbench_chat::{ChatTemplate, ModelTemplates, RenderError, RenderInput};
use rtbench_engine::value::{Dict, Value};
use rtbench_tokenize::streamer_pieces;
pub use rtbench_tokenize::{ControlTokens, ModelTokenizer};

use crate::chunking::Chunking;
use crate::sample::{Sample, SampleWarning};

/// The chat template and tokenizer of a folder, each when present.
pub struct Model {
    /// The model folder.
    pub dir: PathBuf,
    /// `Err`: the folder has a chat template that cannot be used.
    pub chat: Result<Option<ModelTemplates>, RenderError>,
    /// `Err`: the folder has a `tokenizer.json` that cannot be loaded.
    pub tokenizer: Result<Option<ModelTokenizer>, String>,
    /// The control tokens, worked out when first needed.
    control: std::sync::OnceLock<Result<ControlTokens, String>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("dir", &self.dir)
            .field("files", &self.files())
            .finish()
    }
}

/// The tokenizer file of a model folder.
pub const TOKENIZER_FILE: &str = "tokenizer.json";

impl Model {
    /// Reads the model files of `dir` (none of them is required).
    pub fn open(dir: &Path) -> Model {
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        let tokenizer = if tokenizer_path.is_file() {
            ModelTokenizer::from_file(&tokenizer_path).and_then(|mut t| {
                t.add_named_special_tokens(config_special_tokens(dir).iter().map(String::as_str))?;
                Ok(Some(t))
            })
        } else {
            Ok(None)
        };
        Model {
            dir: dir.to_path_buf(),
            chat: ModelTemplates::from_folder(dir),
            tokenizer,
            control: std::sync::OnceLock::new(),
        }
    }

    /// The model files found (shown in the workbench's header).
    pub fn files(&self) -> Vec<PathBuf> {
        let mut out = match &self.chat {
            Ok(Some(t)) => t.files(),
            _ => Vec::new(),
        };
        if !matches!(self.tokenizer, Ok(None)) {
            out.push(self.dir.join(TOKENIZER_FILE));
        }
        out
    }

    /// The tokenizer, when the folder has a usable `tokenizer.json`.
    pub fn tokenizer(&self) -> Option<&ModelTokenizer> {
        self.tokenizer.as_ref().ok().and_then(Option::as_ref)
    }

    /// The model's control tokens, as 5.25 decides them (`_get_control_tokens` for each chat
    /// template): the special added tokens, plus the non-special added tokens that appear in
    /// a chat template's literal text (not whitespace tokens), or, when `tokenizer_config.json`
    /// sets `chat_control_tokens`, exactly the added tokens it lists. A model without a chat
    /// template has only its special tokens.
    pub fn control_tokens(&self) -> Result<&ControlTokens, String> {
        self.control
            .get_or_init(|| self.find_control_tokens())
            .as_ref()
            .map_err(Clone::clone)
    }

    fn find_control_tokens(&self) -> Result<ControlTokens, String> {
        let literal_texts: Vec<String> = match &self.chat {
            Ok(Some(t)) => t.all().iter().map(|t| t.literal_text()).collect(),
            Ok(None) => vec![String::new()],
            Err(e) => return Err(e.to_string()),
        };
        self.control_tokens_of(&literal_texts)
    }

    /// The control tokens for chat templates with these literal texts (one template's, when
    /// a prompt is sanitized with it; every template's, when generated ids are parsed).
    fn control_tokens_of(&self, literal_texts: &[String]) -> Result<ControlTokens, String> {
        let tokenizer = self.need_tokenizer()?;
        let listed = self.chat_control_tokens()?;
        let spellings = tokenizer.added_tokens().into_iter().filter_map(|t| {
            let control = t.special
                || match &listed {
                    Some(names) => names.contains(&t.content),
                    None => {
                        !t.content.chars().all(pyunicode::isspace)
                            && literal_texts.iter().any(|l| l.contains(&t.content))
                    }
                };
            control.then_some(t.content)
        });
        Ok(ControlTokens::new(tokenizer, spellings))
    }

    /// `chat_control_tokens` from `tokenizer_config.json`, when set (a list of strings).
    pub fn chat_control_tokens(&self) -> Result<Option<Vec<String>>, String> {
        let path = self.dir.join("tokenizer_config.json");
        use crate::files::{ReadErrorKind, read_input};
        let text = match read_input(&path, "tokenizer config") {
            Ok(text) => text,
            Err(e) if matches!(&e.kind, ReadErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound) =>
            {
                return Ok(None);
            }
            // A device or a pipe there is refused, not read until memory runs out.
            Err(e) => return Err(e.to_string()),
        };
        let Ok(serde_json::Value::Object(config)) = serde_json::from_str(&text) else {
            return Ok(None);
        };
        match config.get("chat_control_tokens") {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::Array(items)) => Ok(Some(
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            )),
            Some(other) => Err(format!(
                "{}: `chat_control_tokens` should be a list of strings, got {other}",
                path.display()
            )),
        }
    }

    fn chat(&self) -> Result<&ModelTemplates, String> {
        match &self.chat {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(format!(
                "{} has no chat template (tokenizer_config.json's chat_template, or chat_template.jinja)",
                self.dir.display()
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The tokenizer, or why there is none to decode token ids with.
    pub fn need_tokenizer(&self) -> Result<&ModelTokenizer, String> {
        match &self.tokenizer {
            Ok(Some(t)) => Ok(t),
            Ok(None) => Err(format!(
                "{} has no {TOKENIZER_FILE} to decode token ids with",
                self.dir.display()
            )),
            Err(e) => Err(e.clone()),
        }
    }
}

/// The special tokens `dir`'s `tokenizer_config.json` names (none when it has none or it cannot
/// be read: its errors are the chat template's to report).
fn config_special_tokens(dir: &Path) -> Vec<String> {
    use crate::files::read_input;
    let Ok(text) = read_input(&dir.join("tokenizer_config.json"), "tokenizer config") else {
        return Vec::new();
    };
    let Ok(serde_json::Value::Object(config)) = serde_json::from_str(&text) else {
        return Vec::new();
    };
    rtbench_chat::special_tokens(&config)
        .into_iter()
        .filter_map(|(_, v)| v.as_str().map(str::to_string))
        .collect()
}

/// What a render needs besides the template: the conversation, the tools, the keyword
/// arguments and whether the assistant turn is opened.
pub struct Conversation<'a> {
    /// The list of chat messages.
    pub messages: &'a Value,
    /// The tool definitions, if any.
    pub tools: Option<&'a Value>,
    /// Extra keyword arguments for the chat template (a JSON object), added to the config's
    /// special tokens.
    pub kwargs: Option<&'a Value>,
    /// Whether the rendering ends by opening the assistant turn.
    pub add_generation_prompt: bool,
}

fn to_json(v: &Value, what: &str) -> Result<serde_json::Value, String> {
    serde_json::Value::try_from(v).map_err(|e| format!("{what}: {e}"))
}

/// Why a model input could not be turned into text.
#[derive(Clone, Debug, PartialEq)]
pub enum PrepareError {
    /// The chat template failed (a syntax error, a `raise_exception`): located in it.
    Render(RenderError),
    /// Anything else: the files are missing, ids cannot be decoded.
    Other(String),
}

impl std::fmt::Display for PrepareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PrepareError::Render(e) => write!(f, "{e}"),
            PrepareError::Other(e) => f.write_str(e),
        }
    }
}

impl From<String> for PrepareError {
    fn from(e: String) -> PrepareError {
        PrepareError::Other(e)
    }
}

/// Renders a conversation with the model's chat template, as the reference's
/// `apply_chat_template(messages, tools=tools, add_generation_prompt=..., tokenize=False,
/// **kwargs)` does (the special tokens of the config are passed too).
pub fn render(model: &Model, c: &Conversation<'_>) -> Result<String, PrepareError> {
    let templates = model.chat()?;
    let template: &ChatTemplate = templates
        .pick(None, c.tools.is_some())
        .map_err(PrepareError::Render)?;
    let messages = to_json(c.messages, "messages")?;
    let tools = c.tools.map(|t| to_json(t, "tools")).transpose()?;
    let mut kwargs = templates.special_tokens().clone();
    if let Some(k) = c.kwargs {
        match to_json(k, "kwargs")? {
            serde_json::Value::Object(map) => kwargs.extend(map),
            _ => return Err("kwargs must be a JSON object".to_string().into()),
        }
    }
    template
        .render(&RenderInput {
            messages: &messages,
            tools: tools.as_ref(),
            add_generation_prompt: c.add_generation_prompt,
            kwargs: &kwargs,
        })
        .map_err(PrepareError::Render)
}

/// The prompt's token ids, as the reference's `apply_chat_template(messages, tools=...,
/// add_generation_prompt=..., tokenize=True, sanitize_control_tokens=..., **kwargs)` returns
/// them. With `sanitize`, control tokens in the user's strings (messages, tools, kwargs; not
/// dict keys) are encoded as plain text, so that only the chat template's own control tokens
/// are ids; the control tokens are those of the chat template used.
pub fn render_ids(
    model: &Model,
    c: &Conversation<'_>,
    sanitize: bool,
) -> Result<Vec<u32>, PrepareError> {
    let tokenizer = model.need_tokenizer()?;
    if !sanitize {
        return Ok(tokenizer.encode_ids(&render(model, c)?)?);
    }
    let template = model
        .chat()?
        .pick(None, c.tools.is_some())
        .map_err(PrepareError::Render)?;
    let control = model.control_tokens_of(&[template.literal_text()])?;
    let mark = |v: &Value| mark_value(v, &control);
    let messages = mark(c.messages);
    let tools = c.tools.map(mark);
    let kwargs = c.kwargs.map(mark);
    let text = render(
        model,
        &Conversation {
            messages: &messages,
            tools: tools.as_ref(),
            kwargs: kwargs.as_ref(),
            add_generation_prompt: c.add_generation_prompt,
        },
    )?;
    Ok(tokenizer.encode_marked(&text)?)
}

/// The reference's `mark_control_tokens`: every string of `v` marked (dict keys are not).
fn mark_value(v: &Value, control: &ControlTokens) -> Value {
    match v {
        Value::Str(s) => Value::Str(rtbench_tokenize::sanitize::mark(s, control)),
        Value::List(items) => Value::List(items.iter().map(|i| mark_value(i, control)).collect()),
        Value::Dict(d) => Value::Dict(d.iter().map(|(k, i)| (k, mark_value(i, control))).collect()),
        other => other.clone(),
    }
}

/// Turns a sample's model inputs into text: the conversation rendered into the prefix, token
/// ids decoded. A sample that writes its prefix and gives the conversation too keeps the
/// written prefix, with a warning when the chat template renders another.
pub fn prepare(sample: &Sample, model: Option<&Model>) -> Result<Sample, PrepareError> {
    let m = &sample.model;
    if !m.is_needed() {
        return Ok(sample.clone());
    }
    let Some(model) = model else {
        return Err("this sample needs the model's files (a chat template or a tokenizer), and the template has none beside it".to_string().into());
    };
    let mut out = sample.clone();
    // Ids outside the vocabulary decode to nothing, as in the reference: said, not refused.
    let decode = |ids: &[u32], what: &str, out: &mut Sample| -> Result<String, PrepareError> {
        let tokenizer = model.need_tokenizer()?;
        let unknown = tokenizer.unknown_ids(ids);
        if !unknown.is_empty() {
            let shown: Vec<String> = unknown.iter().take(5).map(u32::to_string).collect();
            out.warnings.push(SampleWarning::at_line(
                1,
                format!(
                    "{} id(s) of the {what} are outside the vocabulary ({}{}): they decode to \
                     nothing, as the reference drops them",
                    unknown.len(),
                    shown.join(", "),
                    if unknown.len() > 5 { ", ..." } else { "" }
                ),
            ));
        }
        Ok(tokenizer.decode_lenient(ids)?)
    };
    if let Some(ids) = &m.prefix_ids {
        out.prefix = Some(decode(ids, "prefix", &mut out)?);
    }
    if let Some(ids) = &m.generation_ids {
        out.generation = decode(ids, "generation", &mut out)?.into();
    }
    if let Some(messages) = &m.messages {
        let rendered = render(
            model,
            &Conversation {
                messages,
                tools: sample.tools.as_ref(),
                kwargs: m.kwargs.as_ref(),
                add_generation_prompt: true,
            },
        )?;
        match &out.prefix {
            None => out.prefix = Some(rendered),
            Some(written) if *written != rendered => out.warnings.push(SampleWarning::at_line(
                1,
                format!(
                    "the prefix differs from what the chat template renders from the messages: {}",
                    first_difference(written, &rendered)
                ),
            )),
            Some(_) => {}
        }
    }
    Ok(out)
}

/// Parses a prepared sample as the reference would: a generation given as token ids (a
/// `--- generation (ids) ---` section) through the token-id path, with the prompt's ids when
/// the sample gives them (5.25 defuses control-token spellings made of ordinary tokens; 5.24
/// parses the decoded text), anything else as text. A sample without a prefix opts out with an
/// empty one, as `rtbench test` does.
pub fn parse_sample(
    template: &rtbench_engine::template::Template,
    sample: &Sample,
    model: Option<&Model>,
) -> Result<Dict, rtbench_engine::ParseError> {
    if let Some(t) = model.and_then(|m| token_input(sample, m)) {
        return rtbench_tokenize::ids::parse_ids(
            template,
            Some(t.prefix),
            t.ids,
            sample.tools.as_ref(),
            t.tokenizer,
            t.control,
        );
    }
    rtbench_engine::parse_response(
        template,
        Some(sample.prefix.as_deref().unwrap_or("")),
        &sample.generation,
        sample.tools.as_ref(),
    )
}

/// The token-id input of a prepared sample whose generation is ids, for the chunking check
/// (`None` for a text sample, or when the model cannot decode ids).
pub fn token_input<'a>(
    sample: &'a Sample,
    model: &'a Model,
) -> Option<crate::chunking::TokenInput<'a>> {
    let ids = sample.model.generation_ids.as_deref()?;
    Some(crate::chunking::TokenInput {
        ids,
        prefix: match &sample.model.prefix_ids {
            Some(p) => rtbench_tokenize::ids::Prefix::Ids(p),
            None => rtbench_tokenize::ids::Prefix::Text(sample.prefix.as_deref().unwrap_or("")),
        },
        tokenizer: model.need_tokenizer().ok()?,
        control: model.control_tokens().ok()?,
    })
}

/// A prepared sample whose generation is token ids, as the parser of `template`'s reference
/// sees it: the prompt and the generation decoded by the defusing decoder (5.25; defused
/// spellings carry markers), so that the spans of its parse point into its own text. `None`
/// when nothing changes (a text sample, 5.24, or no tokenizer).
pub fn decoded_sample(
    template: &rtbench_engine::template::Template,
    sample: &Sample,
    model: Option<&Model>,
) -> Option<Sample> {
    if !template.reference().defuses_control_tokens() {
        return None;
    }
    let t = token_input(sample, model?)?;
    let d = rtbench_tokenize::ids::decode_for_parse(
        template,
        Some(t.prefix),
        t.ids,
        t.tokenizer,
        t.control,
    )
    .ok()?;
    let mut out = sample.clone();
    out.prefix = d.prefix.clone();
    out.generation = d.generation().into();
    Some(out)
}

/// The one-shot traced parse of a prepared sample, as [`parse_sample`] parses it (token ids
/// through the token-id decoder under 5.25), audited for silent losses.
pub fn audit_sample(
    template: &rtbench_engine::template::Template,
    sample: &Sample,
    model: Option<&Model>,
) -> rtbench_engine::Audit {
    let prefix = sample.prefix.as_deref().unwrap_or("");
    let tools = sample.tools.as_ref();
    let input = model.and_then(|m| token_input(sample, m));
    let Some(t) = input.filter(|_| template.reference().defuses_control_tokens()) else {
        return rtbench_engine::audit(template, prefix, &sample.generation, tools);
    };
    match rtbench_tokenize::ids::decode_for_parse(
        template,
        Some(t.prefix),
        t.ids,
        t.tokenizer,
        t.control,
    ) {
        Ok(d) => rtbench_engine::audit_decoded(
            template,
            d.prefix.as_deref().unwrap_or(""),
            &d.fed,
            &d.tail,
            tools,
            d.defused,
        ),
        Err(e) => rtbench_engine::Audit {
            result: Err(e),
            marks: rtbench_engine::Marks::new(),
            regions: rtbench_engine::Regions::new(),
            origin: 0,
            held: 0..0,
            losses: Vec::new(),
            document: format!("{prefix}{}", sample.generation),
        },
    }
}

/// Where two texts first differ, with a little context: `at 12:5: '…ant\n<think>' vs '…ant\n'`.
pub fn first_difference(a: &str, b: &str) -> String {
    let common = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i);
    let common = a.floor_char_boundary(common);
    let line = a[..common].matches('\n').count() + 1;
    let col = a[..common]
        .rsplit('\n')
        .next()
        .map_or(0, |l| l.chars().count())
        + 1;
    let before = a[..common].chars().rev().take(12).collect::<Vec<_>>();
    let before: String = before.into_iter().rev().collect();
    let tail = |s: &str| -> String { s.chars().take(24).collect() };
    format!(
        "at line {line}, column {col}, after {:?}: {:?} vs {:?}",
        before,
        tail(&a[common..]),
        tail(&b[common.min(b.len())..])
    )
}

/// The result of rendering the parsed message back.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundTrip {
    /// The conversation with the parsed message, rendered without a generation prompt.
    pub rendered: String,
    /// Prefix + generation, the text the message was parsed from.
    pub original: String,
    /// `None` when they are the same.
    pub difference: Option<String>,
}

/// Renders `messages + [message]` with `add_generation_prompt=False` and compares it with the
/// sample's prefix + generation: where the chat template would write something else (a field
/// it drops, tool-call arguments it re-serialises, whitespace) the two differ.
pub fn round_trip(
    model: &Model,
    sample: &Sample,
    message: &Dict,
) -> Result<RoundTrip, PrepareError> {
    let Some(Value::List(turns)) = &sample.model.messages else {
        return Err(
            "the round trip needs the sample's messages (a `--- messages ---` section)"
                .to_string()
                .into(),
        );
    };
    let mut all = turns.clone();
    all.push(Value::Dict(message.clone()));
    let rendered = render(
        model,
        &Conversation {
            messages: &Value::List(all),
            tools: sample.tools.as_ref(),
            kwargs: sample.model.kwargs.as_ref(),
            add_generation_prompt: false,
        },
    )?;
    let original = format!(
        "{}{}",
        sample.prefix.as_deref().unwrap_or(""),
        sample.generation
    );
    // A chat template ends a turn with a separator after the end token (ChatML's
    // `<|im_end|>\n`) that the model never generates: trailing whitespace is not a difference.
    let same = rendered
        .strip_prefix(original.as_str())
        .is_some_and(|rest| rest.trim().is_empty());
    let difference = (!same).then(|| first_difference(&original, &rendered));
    Ok(RoundTrip {
        rendered,
        original,
        difference,
    })
}

/// The model's own chunkings of `generation`: one feed per token as an incremental
/// detokenizer releases text, and the TextStreamer's word pieces. The text is encoded first
/// (or its ids are used when the sample gives them); `Err` says when decoding the ids does not
/// give the text back, so that no chunking would be faithful.
pub fn model_chunkings(
    tokenizer: &ModelTokenizer,
    generation: &str,
    ids: Option<&[u32]>,
) -> Result<Vec<Chunking>, String> {
    let ids: Vec<u32> = match ids {
        Some(ids) => ids.to_vec(),
        None => tokenizer.encode(generation)?.iter().map(|t| t.id).collect(),
    };
    let decoded = tokenizer.decode(&ids)?;
    if decoded != generation {
        return Err(format!(
            "encoding the generation and decoding it again does not give it back ({}): the model-token chunkings are left out",
            first_difference(generation, &decoded)
        ));
    }
    let cuts = |pieces: &[String]| -> Vec<usize> {
        let mut at = 0;
        let mut out = Vec::new();
        for p in pieces {
            at += p.len();
            out.push(at);
        }
        out.pop();
        out
    };
    let deltas = tokenizer.stream_deltas(&ids)?;
    let words = streamer_pieces(tokenizer, &ids)?;
    let mut out = Vec::new();
    if deltas.concat() == generation {
        out.push(Chunking::ModelTokens(cuts(&deltas)));
    }
    if words.concat() == generation {
        out.push(Chunking::StreamerWords(cuts(&words)));
    }
    Ok(out)
}

/// The model's end-of-sequence token as `tokenizer_config.json` in `dir` names it (a string,
/// or an added token's `content`), if it does.
pub fn eos_token(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("tokenizer_config.json")).ok()?;
    let config: serde_json::Value = serde_json::from_str(&text).ok()?;
    match config.get("eos_token")? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(o) => o.get("content")?.as_str().map(String::from),
        _ => None,
    }
}
