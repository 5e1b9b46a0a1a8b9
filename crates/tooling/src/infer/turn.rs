//! The assistant's turn around its text: the start anchor (from the generation prompt and the
//! turn in history), the thinking delimiters (from the turn with and without reasoning), an
//! explicit content delimiter, and the token that ends the turn.

use serde_json::{Value as J, json};

use super::probes::{ANSWER, Probe, REASONING, RESULT, Rendered, Renderer};
use super::text::{common_prefix, marks};
use super::{Evidence, Note, show};

/// What the turn's inference found.
#[derive(Clone, Debug, Default)]
pub(crate) struct Turn {
    /// The start anchor's alternatives (one literal, or several).
    pub anchors: Vec<String>,
    /// What the generation prompt adds after the anchor (a pre-opened thinking block, an
    /// empty one that switches thinking off), by kwargs.
    pub prefill: String,
    /// The thinking field's open and close, when the template writes reasoning.
    pub thinking: Option<(String, String)>,
    /// The kwargs of a generation prompt that opens thinking when the default one does not
    /// (`thinking=True`), for the probe with reasoning.
    pub thinking_kwargs: serde_json::Map<String, J>,
    /// A thinking close some generation prompt writes right after the anchor (thinking
    /// switched off by closing an empty block): the anchor takes it too.
    pub anchor_tail: Option<String>,
    /// The content field's own open, when the template writes one.
    pub content_open: Option<String>,
    /// What closes the content: the first mark after it in the plain answer.
    pub content_close: String,
    /// The end-of-turn marks after the content close (dropped when the content has an open).
    pub end: Vec<String>,
    /// Whether the content close and `end` are the next turns' headers (history writes no
    /// end token): then each is a close of its own.
    pub end_is_next_turn: bool,
}

impl Turn {
    /// `text` with the anchor removed from its start (the first anchor that starts it).
    pub(crate) fn after_anchor<'t>(&self, text: &'t str) -> &'t str {
        self.anchors
            .iter()
            .find_map(|a| text.strip_prefix(a.as_str()))
            .unwrap_or(text)
    }

    /// `text` with a leading thinking block removed, when it holds one (an empty block some
    /// templates write in every last turn), or a leading lone thinking close (the block a
    /// prompt closed to switch thinking off).
    pub(crate) fn skip_thinking<'t>(&self, text: &'t str) -> &'t str {
        let Some((open, close)) = &self.thinking else {
            return text;
        };
        let t = text.trim_start();
        if let Some(rest) = t.strip_prefix(open.as_str())
            && let Some(i) = rest.find(close.as_str())
            && rest[..i].trim().is_empty()
        {
            return rest[i + close.len()..].trim_start();
        }
        t.strip_prefix(close.as_str()).map_or(text, str::trim_start)
    }

    /// The generation a model writes for a probe rendered as `r`: the turn in history after
    /// the prompt, or, when the prompt opens thinking that history leaves out, the reasoning
    /// and the close put back before it.
    pub(crate) fn generation(&self, r: &Rendered, reasoning: Option<&str>) -> (String, bool) {
        let gp = r.generation_prompt();
        let hist = r.history();
        if let Some(rest) = hist.strip_prefix(gp) {
            return (rest.to_string(), false);
        }
        let rest = self.after_anchor(hist);
        let prefill = self.after_anchor(gp).trim_start();
        if let Some((open, close)) = &self.thinking
            && prefill.starts_with(open.as_str())
            && !prefill.contains(close.as_str())
        {
            if let Some(inside) = rest.trim_start().strip_prefix(open.as_str()) {
                return (inside.to_string(), false);
            }
            let body = reasoning.unwrap_or("");
            let rest = self.skip_thinking(rest);
            return (format!("{body}\n{close}\n\n{rest}"), true);
        }
        (rest.to_string(), true)
    }
}

/// The text after the last occurrence of `needle` in `text`.
fn after_last<'t>(text: &'t str, needle: &str) -> Option<&'t str> {
    text.rfind(needle).map(|i| &text[i + needle.len()..])
}

/// An open tag's close by its name: `<think>` → `</think>`, `[THINK]` → `[/THINK]`.
fn close_of(open: &str) -> Option<String> {
    let open = open.trim();
    if let Some(name) = open.strip_prefix('<').and_then(|s| s.strip_suffix('>'))
        && !name.starts_with('/')
    {
        return Some(format!("</{name}>"));
    }
    if let Some(name) = open.strip_prefix('[').and_then(|s| s.strip_suffix(']'))
        && !name.starts_with('/')
    {
        return Some(format!("[/{name}]"));
    }
    None
}

/// The first mark after the answer when a user's turn or a tool result follows it, with who
/// speaks next.
fn next_headers(r: &Renderer<'_>) -> Vec<(String, &'static str)> {
    let answer = json!({"role": "assistant", "content": ANSWER});
    let user = json!({"role": "user", "content": "PROBE-USER-NEXT"});
    let tool = json!({"role": "tool", "tool_call_id": "call_probe_1", "name": "probe_weather",
                      "content": RESULT});
    let mut out: Vec<(String, &'static str)> = Vec::new();
    for (next, marker, who) in [
        (user, "PROBE-USER-NEXT", "a user"),
        (tool, RESULT, "a tool result"),
    ] {
        let mut p = Probe::new("the turn after an answer", next);
        p.before.push(answer.clone());
        p.with_tools = who == "a tool result";
        let Ok(rendered) = r.probe(&p) else { continue };
        let full = &rendered.full;
        let (Some(a), Some(m)) = (full.rfind(ANSWER), full.rfind(marker)) else {
            continue;
        };
        if m < a {
            continue;
        }
        if let Some(first) = marks(&full[a + ANSWER.len()..m]).first()
            && !out.iter().any(|(x, _)| x == first)
        {
            out.push((first.to_string(), who));
        }
    }
    out
}

/// Infers the turn's shape.
pub(crate) fn infer(
    r: &Renderer<'_>,
    evidence: &mut Vec<Evidence>,
    notes: &mut Vec<Note>,
    eos: Option<&str>,
) -> Result<(Turn, Rendered), String> {
    let mut turn = Turn::default();
    let plain = r.probe(&Probe::new(
        "a plain answer",
        json!({"role": "assistant", "content": ANSWER}),
    ))?;
    let gp = plain.generation_prompt();
    let hist = plain.history();
    let Some(at_answer) = hist.find(ANSWER) else {
        return Err(format!(
            "the chat template does not write an assistant message's content in history (the \
             turn renders as {}), so nothing can be inferred from it",
            show(hist)
        ));
    };

    // The generation prompts the thinking kwargs give, where they differ from the default.
    let mut variants: Vec<(serde_json::Map<String, J>, String)> = Vec::new();
    for kw in [
        json!({"enable_thinking": true}),
        json!({"enable_thinking": false}),
        json!({"thinking": true}),
        json!({"thinking": false}),
    ] {
        let mut p = Probe::new(
            "a thinking prompt",
            json!({"role": "assistant", "content": ANSWER}),
        );
        p.kwargs = kw.as_object().cloned().unwrap_or_default();
        if let Ok(v) = r.probe(&p) {
            let vgp = v.generation_prompt().to_string();
            if vgp != gp && !variants.iter().any(|(_, x)| *x == vgp) {
                variants.push((p.kwargs, vgp));
            }
        }
    }

    // The start anchor.
    if gp.trim().is_empty() {
        // No header: the turn starts where the user's turn ends.
        let base = &plain.base;
        let closer = after_last(base, super::probes::USER)
            .and_then(|t| marks(t).last().copied())
            .unwrap_or("");
        if closer.is_empty() {
            return Err(
                "the generation prompt is empty and nothing follows the user's message, so no \
                 start anchor can be read from the renders"
                    .into(),
            );
        }
        turn.anchors.push(closer.to_string());
        evidence.push(Evidence {
            what: "start anchor".into(),
            chose: show(closer),
            because: format!(
                "the generation prompt adds nothing, and the user's turn ends with {} (the \
                 prompt rendered with and without add_generation_prompt is the same)",
                show(closer)
            ),
        });
    } else {
        let mut n = common_prefix(gp, hist);
        // The anchor is what every generation prompt shares (thinking on or off).
        for (_, v) in &variants {
            n = n.min(common_prefix(&gp[..n], v));
        }
        let anchor = if n == 0 { gp } else { &gp[..n] };
        turn.anchors.push(anchor.to_string());
        turn.prefill = gp[anchor.len()..].to_string();
        evidence.push(Evidence {
            what: "start anchor".into(),
            chose: show(anchor),
            because: if n == gp.len() {
                format!(
                    "add_generation_prompt adds {}, which also starts the assistant's turn in \
                     history",
                    show(gp)
                )
            } else {
                format!(
                    "add_generation_prompt adds {} and history writes the turn as {}: they \
                     share {}",
                    show(gp),
                    show(&hist[..hist.len().min(n + 40)]),
                    show(anchor)
                )
            },
        });
    }

    // The turn after a tool result may continue without a new header.
    let mut after_tool = Probe::new(
        "an answer after a tool result",
        json!({"role": "assistant", "content": ANSWER}),
    )
    .with_tools();
    after_tool
        .before
        .push(json!({"role": "assistant", "content": "",
        "tool_calls": [super::probes::call(0, super::probes::IdStyle::Plain)]}));
    after_tool
        .before
        .push(json!({"role": "tool", "tool_call_id": "call_probe_1",
        "name": "probe_weather", "content": RESULT}));
    match r.probe(&after_tool) {
        Ok(t) => {
            let tgp = t.generation_prompt();
            let covered = turn.anchors.iter().any(|a| tgp.contains(a.as_str()));
            if !covered && let Some(closer) = after_last(&t.prompt, RESULT) {
                // The last mark: what closes the tool result, not the result's own quoting.
                let closer = marks(closer).last().copied().unwrap_or("");
                if !closer.is_empty() && !turn.anchors.iter().any(|a| a == closer) {
                    turn.anchors.push(closer.to_string());
                    evidence.push(Evidence {
                        what: "start anchor after a tool result".into(),
                        chose: show(closer),
                        because: format!(
                            "after a tool result the prompt ends with {} and no {}: the \
                             model continues there",
                            show(closer),
                            show(&turn.anchors[0])
                        ),
                    });
                }
            }
        }
        Err(e) => notes.push(Note::general(format!(
            "the turn after a tool result could not be rendered, so the anchor is only checked \
             after a user turn: {e}"
        ))),
    }

    // Thinking.
    let think_turn = |key: &str| {
        let mut t = json!({"role": "assistant", "content": ANSWER});
        t[key] = J::from(REASONING);
        t
    };
    let mut seen = None;
    for key in ["reasoning_content", "thinking", "reasoning"] {
        let rendered = r.probe(&Probe::new("thinking then an answer", think_turn(key)))?;
        let h = rendered.history();
        if let (Some(i_r), Some(i_c)) = (h.find(REASONING), h.rfind(ANSWER))
            && i_r < i_c
        {
            seen = Some((key, rendered, i_r, i_c));
            break;
        }
    }
    let content_lead = hist[..at_answer].to_string();
    if let Some((key, rendered, i_r, i_c)) = seen {
        let h = rendered.history();
        let open = turn.after_anchor(&h[..i_r]).trim().to_string();
        let mut between = h[i_r + REASONING.len()..i_c].to_string();
        // What stands before the content in a plain answer also stands before it here.
        let plain_lead = turn.after_anchor(&content_lead).trim().to_string();
        for tail in [plain_lead.as_str()]
            .into_iter()
            .chain(turn.anchors.iter().map(String::as_str))
        {
            if let Some(rest) = super::text::strip_mark_suffix(&between, tail) {
                between = rest.to_string();
            }
        }
        let close = between.trim().to_string();
        if open.is_empty() || close.is_empty() {
            notes.push(Note::at(
                &["fields"],
                format!(
                    "the chat template writes reasoning ({key}) without delimiters around it \
                     ({}), so no thinking field is inferred",
                    show(h)
                ),
            ));
        } else {
            evidence.push(Evidence {
                what: "thinking".into(),
                chose: format!("{} … {}", show(&open), show(&close)),
                because: format!(
                    "the turn with {key} renders {} around the reasoning; without it, {}",
                    show(&h[..h.len().min(i_c)]),
                    show(&hist[..at_answer])
                ),
            });
            turn.thinking = Some((open, close));
        }
    } else {
        // Reasoning left out of history: the prompt may still open it.
        let mut prefills = vec![(
            serde_json::Map::new(),
            String::from("no kwargs"),
            turn.prefill.clone(),
        )];
        for (kw, v) in &variants {
            let pre = turn.after_anchor(v).to_string();
            prefills.push((kw.clone(), J::Object(kw.clone()).to_string(), pre));
        }
        for (kwargs, kw, pre) in &prefills {
            let Some(first) = marks(pre).first().map(|m| m.to_string()) else {
                continue;
            };
            if let Some(close) = close_of(&first) {
                turn.thinking_kwargs = kwargs.clone();
                evidence.push(Evidence {
                    what: "thinking".into(),
                    chose: format!("{} … {}", show(&first), show(&close)),
                    because: format!(
                        "history leaves reasoning out, but the generation prompt ({kw}) ends \
                         with {}: it opens the model's reasoning",
                        show(pre)
                    ),
                });
                notes.push(Note::at(
                    &["fields", "thinking", "close"],
                    format!(
                        "the chat template drops reasoning from history, so the thinking close \
                         {} is inferred from the open tag {}, not read from a rendering: check \
                         it against a real generation",
                        show(&close),
                        show(&first)
                    ),
                ));
                turn.thinking = Some((first, close));
                break;
            }
        }
    }
    if turn.thinking.is_none() {
        notes.push(Note::at(
            &["fields"],
            "the chat template writes no reasoning in history (with reasoning_content, thinking \
             or reasoning on the message) and no generation prompt opens it (with \
             enable_thinking or thinking set): if the model reasons, add a thinking field"
                .into(),
        ));
    }
    if let Some((_, close)) = &turn.thinking {
        let lone = std::iter::once(turn.prefill.clone())
            .chain(
                variants
                    .iter()
                    .map(|(_, v)| turn.after_anchor(v).to_string()),
            )
            .find(|p| p.trim() == close.as_str());
        if let Some(p) = lone {
            turn.anchor_tail = Some(close.clone());
            evidence.push(Evidence {
                what: "start anchor".into(),
                chose: format!("{} and an optional {}", show(&turn.anchors[0]), show(close)),
                because: format!(
                    "a generation prompt closes an empty thinking block right after the \
                     anchor ({}): the anchor takes it, so that it is not read as the answer",
                    show(&p)
                ),
            });
        }
    }
    if let Some((open, _)) = &turn.thinking
        && turn.prefill.trim_start().starts_with(open.as_str())
        && !turn.prefill.trim_start()[open.len()..]
            .contains(turn.thinking.as_ref().map_or("", |t| t.1.as_str()))
    {
        evidence.push(Evidence {
            what: "thinking opened by the prompt".into(),
            chose: "yes".into(),
            because: format!(
                "the generation prompt ends with {}: a generation starts inside the reasoning",
                show(&turn.prefill)
            ),
        });
    }

    // An explicit content open, and what closes the content.
    let lead = turn.skip_thinking(turn.after_anchor(&content_lead)).trim();
    if !lead.is_empty() {
        turn.content_open = Some(lead.to_string());
        evidence.push(Evidence {
            what: "content open".into(),
            chose: show(lead),
            because: format!(
                "a plain answer is written {} in history",
                show(&hist[..hist.len().min(at_answer + ANSWER.len() + 30)])
            ),
        });
    }
    let tail = &hist[at_answer + ANSWER.len()..];
    let mut tail_marks: Vec<String> = marks(tail).into_iter().map(str::to_string).collect();
    if tail_marks.is_empty() {
        // History ends the turn with the next turn's header: what follows the answer when a
        // user or a tool speaks next.
        let next = next_headers(r);
        if next.is_empty() {
            return Err(format!(
                "nothing follows the assistant's content in history ({}), not even when \
                 another turn follows, and the model folder names no eos_token, so the end \
                 of a turn cannot be inferred",
                show(hist)
            ));
        }
        evidence.push(Evidence {
            what: "content close".into(),
            chose: next
                .iter()
                .map(|(m, _)| show(m))
                .collect::<Vec<_>>()
                .join(" or "),
            because: format!(
                "history writes nothing after the answer ({}); the next turn starts with {}",
                show(hist),
                next.iter()
                    .map(|(m, who)| format!("{} ({who})", show(m)))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        });
        if eos.is_none() {
            notes.push(Note::at(
                &["fields", "content", "close"],
                format!(
                    "history writes no end token after an assistant turn and the folder sets no \
                     eos_token, so the content ends at the next turn's header ({}): if the \
                     model stops on an end-of-sequence token, add it here",
                    next.iter()
                        .map(|(m, _)| show(m))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
        let mut it = next.into_iter().map(|(m, _)| m);
        turn.content_close = it.next().unwrap_or_default();
        turn.end = it.collect();
        turn.end_is_next_turn = true;
    } else {
        turn.content_close = tail_marks.remove(0);
        turn.end = tail_marks;
        evidence.push(Evidence {
            what: "content close".into(),
            chose: show(&turn.content_close),
            because: format!("after a plain answer, history writes {}", show(tail)),
        });
    }
    Ok((turn, plain))
}
