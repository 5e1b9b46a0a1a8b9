//! Inferring a response template from a model's own chat template.
//!
//! A chat template already says how an assistant turn is written: where it starts, how
//! reasoning is wrapped, how each tool call and its arguments are serialised, which token ends
//! it. The inference renders probe conversations (see [`probes`](self)) with rtbench's
//! renderer and diffs the renders: the generation prompt against the turn in history gives
//! the start anchor; the turn with and without reasoning, the thinking delimiters; one call
//! against two, each call's delimiters, the wrapper around all of them and how the arguments
//! are written. Every choice keeps the two renders that decided it as [`Evidence`].
//!
//! What history does not show (reasoning a template drops from earlier turns, an end token
//! history writes differently) is not guessed silently: the template keeps what can be read,
//! and a [`Note`] at the template key says what to check.
//!
//! The inferred template is then proven on the probes themselves: each probe's prompt and
//! generation, parsed with it, must give back the probe's message ([`Inference::samples`]).

mod calls;
mod probes;
mod text;
mod turn;

use rtbench_chat::ModelTemplates;
use rtbench_engine::Template;
use rtbench_engine::py::PathSeg;
use serde_json::{Value as J, json};

/// One inferred choice, with the renders that decided it.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    /// What was inferred ("start anchor", "thinking", "tool calls", ...).
    pub what: String,
    /// What was chosen.
    pub chose: String,
    /// The renders that differed and where.
    pub because: String,
}

/// Something the author should check: history and generation may differ there.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    /// The template key it is about (empty: the template as a whole).
    pub path: Vec<String>,
    /// What to check and why.
    pub message: String,
}

impl Note {
    fn at(path: &[&str], message: String) -> Note {
        Note {
            path: path.iter().map(|s| s.to_string()).collect(),
            message,
        }
    }

    fn general(message: String) -> Note {
        Note {
            path: Vec::new(),
            message,
        }
    }
}

/// A probe made into a sample: the rendered prompt, the generation, the probe's message.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSample {
    /// What the probe shows ("one tool call").
    pub name: String,
    /// The prompt (the rendered conversation with the generation prompt).
    pub prefix: String,
    /// What the model writes after it.
    pub generation: String,
    /// The conversation the prompt renders (the messages before the assistant's turn).
    pub messages: J,
    /// The template kwargs it was rendered with (an object; empty when none).
    pub kwargs: J,
    /// The tools declared, when any.
    pub tools: Option<J>,
    /// The message the generation should parse to.
    pub expected: J,
    /// Whether the generation was put together (history does not show it as generated).
    pub constructed: bool,
}

/// The result of an inference.
#[derive(Clone, Debug)]
pub struct Inference {
    /// The response template, as JSON (keys in the order they are written).
    pub template: J,
    /// The choices and the renders behind them.
    pub evidence: Vec<Evidence>,
    /// What the author should check.
    pub notes: Vec<Note>,
    /// The probes as samples.
    pub samples: Vec<ProbeSample>,
}

/// A short quoted form of rendered text for a report.
pub(crate) fn show(s: &str) -> String {
    const MAX: usize = 160;
    let quoted = format!("{s:?}");
    if quoted.chars().count() <= MAX {
        return quoted;
    }
    let head: String = quoted.chars().take(MAX - 3).collect();
    format!("{head}…\"")
}

/// Infers a response template from the model's chat template.
///
/// `special_tokens` are the model's (`eos_token` closes a turn whose end history does not
/// write). `Err` says why nothing could be inferred (a template that cannot render the
/// probes, or writes no content).
pub fn infer(chat: &ModelTemplates) -> Result<Inference, String> {
    let r = probes::Renderer { chat };
    let eos = chat
        .special_tokens()
        .get("eos_token")
        .and_then(J::as_str)
        .map(str::to_string);
    let mut evidence = Vec::new();
    let mut notes = Vec::new();
    let (turn, plain) = turn::infer(&r, &mut evidence, &mut notes, eos.as_deref())?;
    let implicit = turn.content_open.is_none();
    let calls = match calls::infer(&r, &turn, implicit, &mut evidence) {
        Ok(c) => c,
        Err(e) => {
            notes.push(Note::at(
                &["fields"],
                format!("no tool-call field is inferred: {e}"),
            ));
            None
        }
    };
    if calls.is_none() && !notes.iter().any(|n| n.message.contains("tool-call")) {
        notes.push(Note::at(
            &["fields"],
            "the chat template does not write the probe's tool calls, so no tool-call field is \
             inferred"
                .into(),
        ));
    }

    // The content's close: the end of the turn, what ends the turn when the model stops on
    // the end-of-sequence token, and the wrapper around calls.
    let mut closes = vec![turn.content_close.clone()];
    if turn.end_is_next_turn {
        closes.extend(turn.end.iter().cloned());
    }
    if let Some(e) = &eos
        && !closes.contains(e)
        && implicit
    {
        closes.push(e.clone());
    }
    for w in calls
        .iter()
        .flat_map(|c| [c.wrapper_close.clone(), c.result_open.clone()])
        .flatten()
    {
        if implicit && !closes.contains(&w) {
            closes.push(w);
        }
    }
    let mut content = serde_json::Map::new();
    if let Some(open) = &turn.content_open {
        content.insert("open".into(), J::from(open.clone()));
    }
    if implicit && calls.is_some() {
        // Whitespace between the last call and the end would otherwise open an empty content
        // that replaces the text before the calls.
        let alts: Vec<String> = closes.iter().map(|c| text::escape(c)).collect();
        content.insert(
            "close_pattern".into(),
            J::from(format!("\\s*(?:{})", alts.join("|"))),
        );
    } else if closes.len() == 1 {
        content.insert("close".into(), J::from(closes[0].clone()));
    } else {
        content.insert("close".into(), J::from(closes.clone()));
    }

    let mut fields = serde_json::Map::new();
    if let Some((open, close)) = &turn.thinking {
        fields.insert("thinking".into(), json!({"open": open, "close": close}));
    }
    let calls_field = calls.as_ref().map(|c| c.field.clone());
    if implicit {
        if let Some(f) = calls_field.clone() {
            fields.insert("tool_calls".into(), f);
        }
        fields.insert("content".into(), J::Object(content));
    } else {
        fields.insert("content".into(), J::Object(content));
        if let Some(f) = calls_field.clone() {
            fields.insert("tool_calls".into(), f);
        }
    }
    let mut template = serde_json::Map::new();
    template.insert("version".into(), J::from(1));
    template.insert("defaults".into(), json!({"role": "assistant"}));
    match &turn.anchor_tail {
        Some(tail) => {
            let alts: Vec<String> = turn.anchors.iter().map(|a| text::escape(a)).collect();
            let head = if alts.len() == 1 {
                alts[0].clone()
            } else {
                format!("(?:{})", alts.join("|"))
            };
            template.insert(
                "start_anchor_pattern".into(),
                J::from(format!("{head}(?:\\s*{})?", text::escape(tail))),
            );
        }
        None if turn.anchors.len() == 1 => {
            template.insert("start_anchor".into(), J::from(turn.anchors[0].clone()));
        }
        None => {
            template.insert("start_anchor".into(), J::from(turn.anchors.clone()));
        }
    }
    template.insert("fields".into(), J::Object(fields));
    let template = J::Object(template);

    // The probes as samples.
    let keep_ids = calls_field
        .as_ref()
        .and_then(|f| f.get("transform"))
        .is_some_and(|t| t.get("id").is_some());
    let mut samples = Vec::new();
    let mut skipped = Vec::new();
    {
        let mut add = |probe: &probes::Probe,
                       rendered: &probes::Rendered,
                       reasoning: Option<&str>| {
            let (generation, constructed) = turn.generation(rendered, reasoning);
            // A model stops at its end token: the line break history writes between turns is
            // not generated.
            let generation = generation.trim_end().to_string();
            // What the chat template leaves out of the turn (content beside tool calls, in some
            // templates) is not in the generation, so not in the message either.
            let mut expected = probe.expected(keep_ids);
            if let J::Object(m) = &mut expected {
                for (key, text) in [("content", probes::ANSWER), ("thinking", probes::REASONING)] {
                    if !generation.contains(text) && !rendered.prompt.ends_with(text) {
                        m.shift_remove(key);
                    }
                }
            }
            samples.push(ProbeSample {
                name: probe.name.clone(),
                prefix: rendered.prompt.clone(),
                generation,
                messages: J::Array(probe.before.clone()),
                kwargs: J::Object(probe.kwargs.clone()),
                tools: probe.with_tools.then(probes::tools),
                expected,
                constructed,
            });
        };
        let plain_probe = probes::Probe::new(
            "a plain answer",
            json!({"role": "assistant", "content": probes::ANSWER}),
        );
        add(&plain_probe, &plain, None);
        if turn.thinking.is_some() {
            for key in ["reasoning_content", "thinking", "reasoning"] {
                let mut t = json!({"role": "assistant", "content": probes::ANSWER});
                t[key] = J::from(probes::REASONING);
                let mut p = probes::Probe::new("thinking then an answer", t);
                p.kwargs = turn.thinking_kwargs.clone();
                if let Ok(rendered) = r.probe(&p)
                    && (rendered.history().contains(probes::REASONING) || key == "reasoning")
                {
                    // The message the parser gives holds the reasoning as `thinking`.
                    p.turn = json!({"role": "assistant", "content": probes::ANSWER,
                                "reasoning_content": probes::REASONING});
                    add(&p, &rendered, Some(probes::REASONING));
                    break;
                }
            }
        }
        if let Some(c) = &calls {
            for (probe, rendered) in &c.rendered {
                // An answer beside calls that the template writes in another form than an
                // answer alone (a preamble on another channel) is not the content.
                let history = rendered.history();
                if let (Some(open), Some(at)) = (&turn.content_open, history.find(probes::ANSWER))
                    && probe.turn.get("tool_calls").is_some()
                    && !history[..at].trim_end().ends_with(open.as_str())
                {
                    let before: String = history[..at].chars().rev().take(60).collect();
                    let before: String = before.chars().rev().collect();
                    skipped.push(Note::at(
                        &["fields", "content", "open"],
                        format!(
                            "with tool calls, the chat template writes the answer after {} \
                             rather than after {}: such text is not read as content (the \
                             probe {:?} is left out)",
                            show(&before),
                            show(open),
                            probe.name
                        ),
                    ));
                    continue;
                }
                add(probe, rendered, None);
            }
        }
    }
    notes.extend(skipped);
    Ok(Inference {
        template,
        evidence,
        notes,
        samples,
    })
}

/// The chat templates of a model folder, read without its tokenizer (`Ok(None)`: it has none).
pub fn chat_templates(dir: &std::path::Path) -> Result<Option<ModelTemplates>, String> {
    ModelTemplates::from_folder(dir).map_err(|e| e.to_string())
}

/// How one probe fared when parsed with the inferred template.
#[derive(Clone, Debug, PartialEq)]
pub struct RoundTrip {
    /// The probe's name.
    pub name: String,
    /// `None`: the parse gave the probe's message; otherwise what it gave instead (a message
    /// or an error).
    pub mismatch: Option<String>,
}

/// Parses every probe sample with `template` and compares with its message.
pub fn round_trip(template: &Template, samples: &[ProbeSample]) -> Vec<RoundTrip> {
    samples
        .iter()
        .map(|s| {
            let tools = s
                .tools
                .as_ref()
                .and_then(|t| rtbench_engine::Value::try_from(t).ok());
            let got = rtbench_engine::parse_response(
                template,
                Some(&s.prefix),
                &s.generation,
                tools.as_ref(),
            );
            let mismatch = match got {
                Ok(dict) => {
                    let got = serde_json::Value::try_from(&rtbench_engine::Value::Dict(dict))
                        .unwrap_or(J::Null);
                    (got != s.expected).then(|| got.to_string())
                }
                Err(e) => Some(format!("{:?}: {}", e.kind, e.message)),
            };
            RoundTrip {
                name: s.name.clone(),
                mismatch,
            }
        })
        .collect()
}

/// The template as the file `rtbench new --model` writes: two-space indentation, a final
/// newline.
pub fn template_text(template: &J) -> String {
    let mut text = serde_json::to_string_pretty(template).unwrap_or_default();
    text.push('\n');
    text
}

/// Where a note's key is in the written template: 1-based line and column.
pub fn note_place(text: &str, note: &Note) -> Option<(usize, usize)> {
    let source = rtbench_engine::template::source::source_from_text(
        "template.json".into(),
        text.to_string(),
    )
    .ok()?;
    let path: Vec<PathSeg> = note.path.iter().map(|k| PathSeg::Key(k.clone())).collect();
    let mut path = path.as_slice();
    loop {
        if let Some(node) = source.node(path) {
            let at = node.key.clone().map_or(node.value.start, |k| k.start);
            return Some(source.line_col(at));
        }
        if path.is_empty() {
            return None;
        }
        path = &path[..path.len() - 1];
    }
}

/// A parse's result as the reference compares messages: JSON, with dicts equal whatever their
/// key order (Python's dict equality).
pub fn message_json(result: &Result<rtbench_engine::Dict, String>) -> Result<J, String> {
    match result {
        Ok(d) => serde_json::Value::try_from(&rtbench_engine::Value::Dict(d.clone()))
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.clone()),
    }
}

/// What differs between two parses of one sample (`None`: the same message, or the same
/// error): per top-level key of the message, `a`'s value against `b`'s.
pub fn difference(
    a: &Result<J, String>,
    b: &Result<J, String>,
    names: (&str, &str),
) -> Option<String> {
    if a == b {
        return None;
    }
    let show = |r: &Result<J, String>| match r {
        Ok(v) => v.to_string(),
        Err(e) => e.clone(),
    };
    if let (Ok(J::Object(x)), Ok(J::Object(y))) = (a, b) {
        let mut keys: Vec<&String> = x.keys().collect();
        keys.extend(y.keys().filter(|k| !x.contains_key(*k)));
        let absent = || "(absent)".to_string();
        let parts: Vec<String> = keys
            .into_iter()
            .filter(|k| x.get(*k) != y.get(*k))
            .map(|k| {
                format!(
                    "{k}: {} {} vs {} {}",
                    names.0,
                    x.get(k).map_or_else(absent, |v| v.to_string()),
                    names.1,
                    y.get(k).map_or_else(absent, |v| v.to_string())
                )
            })
            .collect();
        return Some(parts.join("; "));
    }
    Some(format!(
        "{} {} vs {} {}",
        names.0,
        show(a),
        names.1,
        show(b)
    ))
}
