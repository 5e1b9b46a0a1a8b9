//! The message a streaming client builds from the reference's events alone: `region_chunk`
//! texts accumulate per field, and `region_close` replaces them with the parsed value (stored
//! the way the template says: replaced, appended for `repeats`, joined for `join`). The client
//! knows the template (its defaults and field options) but not the parser's internals.

use crate::partial_json::{self, Preview};
use rtbench_engine::ContentKind;
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};

use super::Replay;

/// The client's state: settled values and their size.
#[derive(Clone, Debug)]
pub(super) struct Client {
    pub settled: Dict,
    /// How many values `settled` holds, nested ones included (the cost of copying it).
    pub size: usize,
}

impl Client {
    pub(crate) fn new(template: &Template) -> Client {
        Client {
            size: template.defaults().values().map(nodes).sum(),
            settled: template.defaults().clone(),
        }
    }

    /// Applies one event; returns the work it took (0 for events that settle nothing).
    pub(crate) fn apply(&mut self, template: &Template, event: &Event) -> usize {
        let EventKind::Close { value } = &event.kind else {
            return 0;
        };
        self.settle(template, event.field, value)
    }

    /// Stores the value a region of `field` closed with; returns the work it took.
    pub(crate) fn settle(&mut self, template: &Template, field: usize, value: &Value) -> usize {
        let Some(field) = template.fields().get(field) else {
            return 0;
        };
        let name = field.name.as_str();
        let added = nodes(value);
        match (self.settled.get_mut(name), value) {
            (Some(Value::Str(prev)), Value::Str(s)) if field.join.is_some() => {
                prev.push_str(field.join.as_deref().unwrap_or(""));
                prev.push_str(s);
            }
            (Some(Value::List(items)), _) if field.repeats && field.join.is_none() => {
                items.push(value.clone());
                self.size += added;
            }
            (slot, _) => {
                let stored = if field.repeats && field.join.is_none() {
                    Value::List(vec![value.clone()])
                } else {
                    value.clone()
                };
                let old = slot.map_or(0, |old| nodes(old));
                self.size = (self.size + nodes(&stored)).saturating_sub(old);
                upsert(&mut self.settled, name, stored);
            }
        }
        added
    }
}

/// How many values a value holds, itself included.
pub(super) fn nodes(value: &Value) -> usize {
    1 + match value {
        Value::List(items) => items.iter().map(nodes).sum(),
        Value::Dict(d) => d.values().map(nodes).sum(),
        _ => 0,
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
    /// What a streaming client shows after `step`, rebuilt without the events: the nearest
    /// snapshot of settled values plus the values of the regions closed since, and the open
    /// region's text so far (its chunks are the document's text, in order and contiguous).
    pub fn partial_message(&self, step: usize) -> PartialMessage {
        let s = self.step(step);
        let upto = s.events.end;
        let at = self.snapshots.partition_point(|(i, _)| *i <= upto) - 1;
        let (from, settled) = &self.snapshots[at];
        let mut client = Client {
            settled: settled.clone(),
            size: 0,
        };
        let regions = self.regions();
        let first = regions.partition_point(|r| r.close_event.is_some_and(|c| c < *from));
        for r in regions.iter().skip(first) {
            match (r.close_event, r.value()) {
                (Some(c), Some(value)) if c < upto => {
                    if c >= *from {
                        client.settle(&self.template, r.field, value);
                    }
                }
                // Regions close in the order they open: the rest closed later or never.
                _ => break,
            }
        }
        let finished = s.error.is_none() && matches!(s.kind, super::StepKind::Finalize);
        if finished {
            let defaults = &self.template.defaults();
            client
                .settled
                .retain(|k, v| defaults.contains_key(k) || !v.is_empty_value());
        }
        let live = s.live.map(|(region, end)| self.live_region(region, end));
        PartialMessage {
            settled: client.settled,
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
