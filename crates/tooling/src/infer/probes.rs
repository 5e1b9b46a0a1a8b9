//! The probe conversations, and rendering them with the model's chat template.
//!
//! Every probe value is distinctive text that no chat template writes itself, so that where it
//! lands in a rendering says what the template wrapped around it. The tools take arguments of
//! every JSON type, so that the rendering shows how each is written.

use rtbench_chat::{ModelTemplates, RenderError, RenderInput};
use serde_json::{Value as J, json};

/// The user's question.
pub(crate) const USER: &str = "PROBE-USER-QUESTION";
/// The assistant's answer.
pub(crate) const ANSWER: &str = "PROBE-ANSWER-TEXT";
/// The assistant's reasoning.
pub(crate) const REASONING: &str = "PROBE-REASONING-TEXT";
/// A tool's result.
pub(crate) const RESULT: &str = "PROBE-TOOL-RESULT";

/// The two tools the calls use, with parameters of every JSON type.
pub(crate) fn tools() -> J {
    json!([
        {"type": "function", "function": {
            "name": "probe_weather",
            "description": "A probe tool.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer"},
                "ratio": {"type": "number"},
                "metric": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "extra": {"type": "object"}
            }, "required": ["city"]}}},
        {"type": "function", "function": {
            "name": "probe_lookup",
            "description": "Another probe tool.",
            "parameters": {"type": "object", "properties": {
                "query": {"type": "string"}
            }, "required": ["query"]}}}
    ])
}

/// How the probe calls are identified: a plain id, or the `functions.NAME:INDEX` form some
/// templates write in place of the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdStyle {
    /// `call_probe_1`.
    Plain,
    /// `functions.probe_weather:0`.
    Indexed,
}

/// The `i`th probe call (0 or 1).
pub(crate) fn call(i: usize, ids: IdStyle) -> J {
    let (name, arguments) = if i == 0 {
        (
            "probe_weather",
            json!({"city": "Paris", "days": 3, "ratio": 0.5, "metric": true,
                   "tags": ["north", "south"], "extra": {"note": "windy"}}),
        )
    } else {
        ("probe_lookup", json!({"query": "PROBE-QUERY"}))
    };
    let id = match ids {
        IdStyle::Plain => format!("call_probe_{}", i + 1),
        IdStyle::Indexed => format!("functions.{name}:{i}"),
    };
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// One probe: the conversation before the assistant's turn, the turn, and the template
/// kwargs it is rendered with.
#[derive(Clone, Debug)]
pub(crate) struct Probe {
    /// What the probe shows, e.g. "one tool call".
    pub name: String,
    /// The messages before the assistant's turn.
    pub before: Vec<J>,
    /// The assistant's message.
    pub turn: J,
    /// Whether tools are declared.
    pub with_tools: bool,
    /// Template kwargs (`enable_thinking`, ...).
    pub kwargs: serde_json::Map<String, J>,
}

impl Probe {
    pub(crate) fn new(name: &str, turn: J) -> Probe {
        Probe {
            name: name.to_string(),
            before: vec![json!({"role": "user", "content": USER})],
            turn,
            with_tools: false,
            kwargs: serde_json::Map::new(),
        }
    }

    pub(crate) fn with_tools(mut self) -> Probe {
        self.with_tools = true;
        self
    }

    /// The message the parser should give for this turn.
    pub(crate) fn expected(&self, keep_ids: bool) -> J {
        let mut out = serde_json::Map::new();
        out.insert("role".into(), J::from("assistant"));
        let turn = &self.turn;
        if let Some(r) = turn.get("reasoning_content").and_then(J::as_str) {
            out.insert("thinking".into(), J::from(r));
        }
        if let Some(c) = turn.get("content").and_then(J::as_str)
            && !c.is_empty()
        {
            out.insert("content".into(), J::from(c));
        }
        if let Some(J::Array(calls)) = turn.get("tool_calls") {
            let calls = calls
                .iter()
                .map(|c| {
                    let mut call = serde_json::Map::new();
                    call.insert("type".into(), J::from("function"));
                    if keep_ids {
                        call.insert("id".into(), c["id"].clone());
                    }
                    call.insert("function".into(), c["function"].clone());
                    J::Object(call)
                })
                .collect();
            out.insert("tool_calls".into(), J::Array(calls));
        }
        J::Object(out)
    }
}

/// The three renderings of a probe a comparison needs.
#[derive(Clone, Debug)]
pub(crate) struct Rendered {
    /// The conversation before the turn, without a generation prompt.
    pub base: String,
    /// The conversation before the turn with the generation prompt: the prompt the model
    /// continues.
    pub prompt: String,
    /// The conversation with the turn, as history.
    pub full: String,
}

impl Rendered {
    /// What `add_generation_prompt` adds.
    pub(crate) fn generation_prompt(&self) -> &str {
        self.prompt.get(self.base.len()..).unwrap_or("")
    }

    /// The assistant's turn as the template writes it in history.
    pub(crate) fn history(&self) -> &str {
        self.full.get(self.base.len()..).unwrap_or("")
    }
}

/// Renders probes with one model's chat template.
pub(crate) struct Renderer<'a> {
    pub chat: &'a ModelTemplates,
}

impl Renderer<'_> {
    fn render(
        &self,
        messages: &[J],
        probe: &Probe,
        add_generation_prompt: bool,
    ) -> Result<String, RenderError> {
        let tools = probe.with_tools.then(tools);
        let template = self.chat.pick(None, tools.is_some())?;
        let messages = J::Array(messages.to_vec());
        let kwargs = self.chat.template_kwargs(&probe.kwargs);
        template.render(&RenderInput {
            messages: &messages,
            tools: tools.as_ref(),
            add_generation_prompt,
            kwargs: &kwargs,
        })
    }

    /// The probe's three renderings; `Err` names the rendering that failed or that does not
    /// extend the one before it.
    pub(crate) fn probe(&self, probe: &Probe) -> Result<Rendered, String> {
        let fail = |what: &str, e: RenderError| format!("rendering {what} ({}): {e}", probe.name);
        let base = self
            .render(&probe.before, probe, false)
            .map_err(|e| fail("the conversation before the turn", e))?;
        let prompt = self
            .render(&probe.before, probe, true)
            .map_err(|e| fail("the generation prompt", e))?;
        let mut all = probe.before.clone();
        all.push(probe.turn.clone());
        let full = self
            .render(&all, probe, false)
            .map_err(|e| fail("the assistant's turn", e))?;
        for (what, text) in [
            ("the generation prompt", &prompt),
            ("the assistant's turn", &full),
        ] {
            if !text.starts_with(&base) {
                return Err(format!(
                    "{what} ({}) rewrites the conversation before it: the renders differ at {}",
                    probe.name,
                    crate::model::first_difference(&base, text)
                ));
            }
        }
        Ok(Rendered { base, prompt, full })
    }
}
