//! The message a streaming client builds from the reference's events alone: `region_chunk`
//! texts accumulate per field, and `region_close` replaces them with the parsed value (stored
//! the way the template says: replaced, appended for `repeats`, joined for `join`). The client
//! knows the template (its defaults and field options) but not the parser's internals.

use crate::partial_json::{self, Preview};
use rtbench_engine::ContentKind;
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};

use super::Replay;

/// Stores in a client's `settled` values the value a region of `field` closed with.
fn settle(settled: &mut Dict, template: &Template, field: usize, value: &Value) {
    let Some(field) = template.fields().get(field) else {
        return;
    };
    let name = field.name.as_str();
    match (settled.get_mut(name), value) {
        (Some(Value::Str(prev)), Value::Str(s)) if field.join.is_some() => {
            prev.push_str(field.join.as_deref().unwrap_or(""));
            prev.push_str(s);
        }
        (Some(Value::List(items)), _) if field.repeats && field.join.is_none() => {
            items.push(value.clone());
        }
        _ => {
            let stored = if field.repeats && field.join.is_none() {
                Value::List(vec![value.clone()])
            } else {
                value.clone()
            };
            upsert(settled, name, stored);
        }
    }
}

/// Sets a key, keeping its position when it exists (a Python dict assignment).
fn upsert(dict: &mut Dict, key: &str, value: Value) {
    match dict.get_mut(key) {
        Some(slot) => *slot = value,
        None => {
            dict.insert(key.to_string(), value);
        }
    }
}

/// The message a client would show after a step.
#[derive(Clone, Debug, PartialEq)]
pub struct PartialMessage {
    /// Values from closed regions (and the template's defaults), in the message's key order.
    /// After a successful finalize, empty values are dropped as the reference does.
    pub settled: Dict,
    /// The region still receiving text.
    pub live: Option<LiveRegion>,
    /// The stream has ended successfully (the settled values are the final message).
    pub finished: bool,
}

/// A region that is still open: its raw text so far.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveRegion {
    /// The region's field, as an index into the template's fields.
    pub field: usize,
    /// The field's name.
    pub name: String,
    /// The region's `region_chunk` texts joined.
    pub text: String,
    /// The chunks are raw text of a structured parser, only parsed when the region closes.
    pub dirty: bool,
    /// For `json` regions: a best-effort completion of the text so far. A guess about text that
    /// has not arrived, and before the template's transform: never the region's value.
    pub preview: Option<Preview>,
}

impl PartialMessage {
    /// The message as one value, with the live region's raw text where its value will go
    /// (replacing, appended to the list of a repeating field, or joined).
    pub fn to_value(&self, template: &Template) -> Value {
        let mut message = self.settled.clone();
        if let Some(live) = &self.live
            && let Some(field) = template.fields().get(live.field)
        {
            let text = Value::Str(live.text.clone());
            let name = live.name.as_str();
            let shown = match (&field.join, message.get(name), field.repeats) {
                (Some(sep), Some(Value::Str(prev)), _) => {
                    Value::Str(format!("{prev}{sep}{}", live.text))
                }
                (None, Some(Value::List(items)), true) => {
                    let mut items = items.clone();
                    items.push(text);
                    Value::List(items)
                }
                (None, _, true) => Value::List(vec![text]),
                _ => text,
            };
            upsert(&mut message, name, shown);
        }
        Value::Dict(message)
    }
}

impl Replay {
    /// What a streaming client shows after `step`, rebuilt without the events: the template's
    /// defaults, the values of the regions closed by then, and the open region's text so far
    /// (its chunks are the document's text, in order and contiguous).
    pub fn partial_message(&self, step: usize) -> PartialMessage {
        let s = self.step(step);
        let upto = s.events.end;
        let mut settled = self.template.defaults().clone();
        let stored = self.stored();
        for region in self.regions.iter() {
            // Regions close in the order they open: the rest closed later or never.
            if region.close_event.is_none_or(|c| c >= upto) {
                break;
            }
            let name = self.field_name(region.field);
            if let Some(value) = region.value_in(Some(stored), name) {
                settle(&mut settled, &self.template, region.field, value);
            }
        }
        let finished = s.error.is_none() && matches!(s.kind, super::StepKind::Finalize);
        if finished {
            let defaults = &self.template.defaults();
            settled.retain(|k, v| defaults.contains_key(k) || !v.is_empty_value());
        }
        let live = s.live.map(|(region, end)| self.live_region(region, end));
        PartialMessage {
            settled,
            live,
            finished,
        }
    }

    /// The open region's text, from its body's start to `end`.
    fn live_region(&self, region: usize, end: usize) -> LiveRegion {
        let r = self.regions().at(region);
        let field = &self.template.fields()[r.field];
        let text = self
            .document()
            .get(r.body.start..end)
            .unwrap_or_default()
            .to_string();
        let preview = (field.content == ContentKind::Json)
            .then(|| partial_json::preview(&text))
            .flatten();
        LiveRegion {
            field: r.field,
            name: field.name.clone(),
            text,
            dirty: field.dirty(),
            preview,
        }
    }
}
