//! Tool calls: the renders of one and two calls, diffed. Where each call's name and
//! arguments land says how they are written (a JSON object holding both, a JSON array of such
//! objects, the name in a header with JSON arguments after it, one tag per argument, a
//! Python-style call list); what repeats around each call gives its own delimiters, and what
//! stands once around all of them the wrapper.

use serde_json::{Value as J, json};

use super::probes::{IdStyle, Probe, Rendered, Renderer, call};
use super::text::{common_prefix, common_suffix, escape, loose, marks};
use super::turn::Turn;
use super::{Evidence, show};

/// How a call's arguments and name are written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Shape {
    /// One JSON object per call holding the name and the arguments under these keys.
    Object {
        name: String,
        args: String,
        id: Option<String>,
    },
    /// One JSON array of such objects for all calls.
    Array {
        name: String,
        args: String,
        id: Option<String>,
    },
    /// The name in a header, the arguments as a JSON object after it.
    Header,
    /// The name in a header, one tag per argument.
    Tags {
        /// The tag pattern, with `key` and `value` groups.
        tag_pattern: String,
        /// Whether string values are JSON-quoted (so every value is JSON).
        json_values: bool,
    },
    /// A Python-style list of calls.
    Python,
}

/// The inferred tool-call field.
#[derive(Clone, Debug)]
pub(crate) struct Calls {
    /// The field, as template JSON.
    pub field: J,
    /// Text that may close the implicit content after the calls (a wrapper's close).
    pub wrapper_close: Option<String>,
    /// What the model writes after its calls when the turn does not end but a tool result
    /// follows in it (it stops there): another close of the implicit content.
    pub result_open: Option<String>,
    /// The probes and their renders, for the samples.
    pub rendered: Vec<(Probe, Rendered)>,
}

/// A JSON value found in the text, with its byte span.
struct Found {
    start: usize,
    end: usize,
    value: J,
}

/// Every outermost JSON object or array in `s`.
fn json_values(s: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut from = 0;
    for (i, c) in s.char_indices() {
        if i < from || (c != '{' && c != '[') {
            continue;
        }
        let mut stream = serde_json::Deserializer::from_str(&s[i..]).into_iter::<J>();
        if let Some(Ok(value)) = stream.next() {
            let end = i + stream.byte_offset();
            out.push(Found {
                start: i,
                end,
                value,
            });
            from = end;
        }
    }
    out
}

/// The key of `obj` whose value equals `want`.
fn key_of(obj: &serde_json::Map<String, J>, want: &J) -> Option<String> {
    obj.iter().find(|(_, v)| *v == want).map(|(k, _)| k.clone())
}

/// The (name key, arguments key, id key) of an object that is this call.
fn call_keys(v: &J, c: &J) -> Option<(String, String, Option<String>)> {
    let obj = v.as_object()?;
    let name = key_of(obj, &c["function"]["name"])?;
    let args = key_of(obj, &c["function"]["arguments"])?;
    let id = key_of(obj, &c["id"]);
    Some((name, args, id))
}

/// Where each call is: the span the parser's region covers of it, with the name's span when
/// the name is written outside the region's JSON.
struct Located {
    shape: Shape,
    /// Per call: where the part the region holds starts and ends (from the name, when it is
    /// written in a header).
    cores: Vec<(usize, usize)>,
    /// Per call: the text between the name and the region's body.
    mids: Vec<String>,
    /// The json parser's dialect options the arguments need (`unquoted_keys`,
    /// `string_delims`), when they are not plain JSON.
    dialect: Option<J>,
}

fn locate_json(s: &str, calls: &[J]) -> Option<Located> {
    let found = json_values(s);
    // All calls in one array.
    for f in &found {
        if let J::Array(items) = &f.value
            && items.len() == calls.len()
            && let Some(keys) = call_keys(&items[0], &calls[0])
            && items
                .iter()
                .zip(calls)
                .all(|(v, c)| call_keys(v, c).is_some())
        {
            let (name, args, id) = keys;
            return Some(Located {
                shape: Shape::Array { name, args, id },
                cores: vec![(f.start, f.end)],
                mids: Vec::new(),
                dialect: None,
            });
        }
    }
    // One object per call.
    let mut cores = Vec::new();
    let mut keys = None;
    for c in calls {
        let f = found.iter().find(|f| {
            f.start >= cores.last().map_or(0, |x: &(usize, usize)| x.1)
                && call_keys(&f.value, c).is_some()
        })?;
        keys.get_or_insert(call_keys(&f.value, c)?);
        cores.push((f.start, f.end));
    }
    let (name, args, id) = keys?;
    Some(Located {
        shape: Shape::Object { name, args, id },
        cores,
        mids: Vec::new(),
        dialect: None,
    })
}

fn locate_header(s: &str, calls: &[J]) -> Option<Located> {
    let found = json_values(s);
    let mut cores = Vec::new();
    let mut mids = Vec::new();
    let mut from = 0;
    for c in calls {
        let f = found
            .iter()
            .find(|f| f.start >= from && f.value == c["function"]["arguments"])?;
        let name = c["function"]["name"].as_str()?;
        let at = s[from..f.start].rfind(name)? + from;
        mids.push(s[at + name.len()..f.start].to_string());
        cores.push((at, f.end));
        from = f.end;
    }
    Some(Located {
        shape: Shape::Header,
        cores,
        mids,
        dialect: None,
    })
}

/// The string delimiters a lax-JSON template writes around string arguments: what stands
/// between the key's `:` and the first string value, and after it.
fn string_delims(s: &str, calls: &[J]) -> Option<(String, String)> {
    let args = calls[0]["function"]["arguments"].as_object()?;
    let (key, value) = args.iter().find_map(|(k, v)| v.as_str().map(|v| (k, v)))?;
    let k = s.find(key.as_str())?;
    let v = s[k..].find(value)? + k;
    let open = s[k + key.len()..v].trim_start().strip_prefix(':')?.trim();
    let close_end = s[v + value.len()..].find([',', '}'])? + v + value.len();
    let close = s[v + value.len()..close_end].trim();
    (!open.is_empty() && open != "\"" && !close.is_empty())
        .then(|| (open.to_string(), close.to_string()))
}

/// `text` as JSON: custom string delimiters made JSON strings, bare keys quoted (what the json
/// parser's `string_delims` and `unquoted_keys` options do).
fn relax(text: &str, delims: Option<&(String, String)>) -> String {
    let mut t = String::new();
    let mut rest = text;
    if let Some((open, close)) = delims {
        while let Some(i) = rest.find(open.as_str()) {
            t.push_str(&rest[..i]);
            let after = &rest[i + open.len()..];
            let Some(j) = after.find(close.as_str()) else {
                break;
            };
            t.push_str(&J::from(&after[..j]).to_string());
            rest = &after[j + close.len()..];
        }
    }
    t.push_str(rest);
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = t.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
        if c == '{' || c == ',' {
            let mut j = i + 1;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            let start = j;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            if j > start
                && j < chars.len()
                && chars[j..].iter().find(|c| !c.is_whitespace()) == Some(&':')
            {
                out.extend(&chars[i + 1..start]);
                out.push('"');
                out.extend(&chars[start..j]);
                out.push('"');
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The end of the brace-balanced text starting at `start` (a `{`), custom strings skipped.
fn balanced_end(s: &str, start: usize, delims: Option<&(String, String)>) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    while i < s.len() {
        if let Some((open, close)) = delims
            && s[i..].starts_with(open.as_str())
        {
            let after = i + open.len();
            i = after + s[after..].find(close.as_str())? + close.len();
            continue;
        }
        let c = s[i..].chars().next()?;
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
        i += c.len_utf8();
    }
    None
}

/// Name in a header, arguments in a lax JSON dialect (bare keys, custom string delimiters).
fn locate_lax(s: &str, calls: &[J]) -> Option<Located> {
    let delims = string_delims(s, calls);
    let mut cores = Vec::new();
    let mut mids = Vec::new();
    let mut from = 0;
    let mut bare_keys = false;
    for c in calls {
        let name = c["function"]["name"].as_str()?;
        let at = s[from..].find(name)? + from;
        let open = s[at + name.len()..].find('{')? + at + name.len();
        let end = balanced_end(s, open, delims.as_ref())?;
        let relaxed = relax(&s[open..end], delims.as_ref());
        let value: J = serde_json::from_str(&relaxed).ok()?;
        if value != c["function"]["arguments"] {
            return None;
        }
        bare_keys |= serde_json::from_str::<J>(&relax(&s[open..end], None)).is_err()
            || relax(&s[open..end], None) != s[open..end];
        mids.push(s[at + name.len()..open].to_string());
        cores.push((at, end));
        from = end;
    }
    let mut dialect = serde_json::Map::new();
    if bare_keys {
        dialect.insert("unquoted_keys".into(), J::Bool(true));
    }
    if let Some((open, close)) = delims {
        dialect.insert("string_delims".into(), json!([[open, close]]));
    }
    Some(Located {
        shape: Shape::Header,
        cores,
        mids,
        dialect: Some(J::Object(dialect)),
    })
}

/// How a value may be written in a tag: strings as they are or quoted, other values as JSON.
fn spellings(v: &J) -> Vec<String> {
    match v {
        J::String(s) => vec![s.clone()],
        other => {
            let compact = other.to_string();
            let spaced = python_dumps(other);
            if compact == spaced {
                vec![compact]
            } else {
                vec![spaced, compact]
            }
        }
    }
}

/// `json.dumps` with its default separators (`", "` and `": "`).
fn python_dumps(v: &J) -> String {
    match v {
        J::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python_dumps)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        J::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", J::from(k.as_str()), python_dumps(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// Each argument's (key start, key end, value start, value end) in `s` from `from`, in order.
fn argument_spans(
    s: &str,
    from: usize,
    args: &serde_json::Map<String, J>,
) -> Option<Vec<[usize; 4]>> {
    let mut out = Vec::new();
    let mut at = from;
    for (k, v) in args {
        let ks = s[at..].find(k.as_str())? + at;
        let ke = ks + k.len();
        let window = &s[ke..s.len().min(ke + 80 + v.to_string().len() * 2)];
        let (vs, len) = spellings(v)
            .into_iter()
            .filter_map(|sp| window.find(&sp).map(|i| (i, sp.len())))
            .min()?;
        out.push([ks, ke, ke + vs, ke + vs + len]);
        at = ke + vs + len;
    }
    Some(out)
}

/// Splits `between` (the text between two repeated items) into the items' close, what
/// separates them and their open, given the text before the first item and after the last.
fn junction<'t>(before: &'t str, between: &'t str, after: &'t str) -> (&'t str, &'t str, &'t str) {
    let o = common_suffix(before, between);
    let mut k = common_prefix(after, between);
    if o + k > between.len() {
        k = between.len() - o;
        while !between.is_char_boundary(k) {
            k -= 1;
        }
    }
    (
        &between[..k],
        &between[k..between.len() - o],
        &between[between.len() - o..],
    )
}

fn locate_tags(s: &str, calls: &[J]) -> Option<Located> {
    // Each call's name, then its arguments as tags.
    let mut per_call = Vec::new();
    let mut from = 0;
    for c in calls {
        let name = c["function"]["name"].as_str()?;
        let at = s[from..].find(name)? + from;
        let args = c["function"]["arguments"].as_object()?;
        let spans = argument_spans(s, at + name.len(), args)?;
        from = spans.last()?[3];
        per_call.push((at, name.len(), spans));
    }
    // The tag's parts, from the first call's arguments.
    let (at, len, spans) = &per_call[0];
    if spans.len() < 2 {
        return None;
    }
    let name_end = at + len;
    let (post, _, pre) = junction(
        &s[name_end..spans[0][0]],
        &s[spans[0][3]..spans[1][0]],
        &s[spans[spans.len() - 1][3]..],
    );
    // A non-string value shows the tag's own text between key and value.
    let typed = args_mid(s, spans, &calls[0]);
    let first_mid = &s[spans[0][1]..spans[0][2]];
    let json_values = first_mid.ends_with('"') && !typed.ends_with('"');
    let tag_pattern = format!(
        "{}(?P<key>.*?){}(?P<value>.*?){}",
        loose(pre.trim_start()),
        loose(&typed),
        loose(post.trim_end())
    );
    let mut cores = Vec::new();
    let mut mids = Vec::new();
    for (at, len, spans) in &per_call {
        let first_key = spans[0][0];
        let open_at = first_key.checked_sub(pre.trim_start().len())?;
        mids.push(s[at + len..open_at.max(at + len)].to_string());
        let last = spans.last()?[3] + post.trim_end().len();
        cores.push((*at, last.min(s.len())));
    }
    Some(Located {
        shape: Shape::Tags {
            tag_pattern,
            json_values,
        },
        cores,
        mids,
        dialect: None,
    })
}

/// The text between key and value of the first argument whose value is not a string.
fn args_mid(s: &str, spans: &[[usize; 4]], c: &J) -> String {
    let args = c["function"]["arguments"].as_object();
    let typed = args
        .into_iter()
        .flat_map(|m| m.values())
        .position(|v| !v.is_string())
        .unwrap_or(0);
    let span = spans[typed.min(spans.len() - 1)];
    s[span[1]..span[2]].to_string()
}

fn locate_python(s: &str, calls: &[J]) -> Option<Located> {
    let first = format!("[{}(", calls[0]["function"]["name"].as_str()?);
    let start = s.find(&first)?;
    let end = s.rfind(']')? + 1;
    (end > start).then(|| Located {
        shape: Shape::Python,
        cores: vec![(start, end)],
        mids: Vec::new(),
        dialect: None,
    })
}

/// The name group's pattern: the characters of a tool name, stopping at what follows it.
fn name_group(ids: IdStyle, open: &str, mid: &str) -> (String, String, String) {
    let name = "(?P<name>[\\w.\\-]+)".to_string();
    if ids == IdStyle::Indexed
        && let Some(pre) = open.strip_suffix("functions.")
        && let Some(rest) = mid.strip_prefix(':')
    {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            return (
                escape(pre),
                "(?P<id>functions\\.(?P<name>[\\w\\-]+):\\d+)".to_string(),
                rest[digits..].to_string(),
            );
        }
    }
    (escape(open), name, mid.to_string())
}

/// What replaces the end of a turn with calls when a tool result follows in the same turn: the
/// first mark where the conversation with the result departs from the one without it, unless
/// the turn had ended there with its end mark (the result is then a turn of its own).
fn result_open(r: &Renderer<'_>, ids: IdStyle, end_marks: &[&str]) -> Option<String> {
    let mut p = Probe::new(
        "a tool result after calls",
        json!({"role": "tool", "tool_call_id": call(0, ids)["id"], "name": "probe_weather",
               "content": super::probes::RESULT}),
    )
    .with_tools();
    p.before
        .push(json!({"role": "assistant", "content": "", "tool_calls": [call(0, ids)]}));
    let rendered = r.probe(&p).ok()?;
    let (without, with) = (&rendered.base, &rendered.full);
    let n = common_prefix(without, with);
    // The turn ended before the result (with its end mark): the result is a turn of its own.
    let ended = end_marks
        .iter()
        .any(|m| without[..n].trim_end().ends_with(m));
    if without[n..].trim().is_empty() && ended {
        return None;
    }
    marks(&with[n..]).first().map(|m| m.to_string())
}

/// Infers the tool-call field from the renders of one and two calls.
pub(crate) fn infer(
    r: &Renderer<'_>,
    turn: &Turn,
    implicit_content: bool,
    evidence: &mut Vec<Evidence>,
) -> Result<Option<Calls>, String> {
    for ids in [IdStyle::Plain, IdStyle::Indexed] {
        let one = Probe::new(
            "one tool call",
            json!({"role": "assistant", "content": "", "tool_calls": [call(0, ids)]}),
        )
        .with_tools();
        let two = Probe::new(
            "two tool calls",
            json!({"role": "assistant", "content": "", "tool_calls": [call(0, ids), call(1, ids)]}),
        )
        .with_tools();
        let r1 = r.probe(&one)?;
        let r2 = r.probe(&two)?;
        let body = |h: &str| turn.skip_thinking(turn.after_anchor(h)).to_string();
        let s1 = body(r1.history());
        let s2 = body(r2.history());
        if !s2.contains("probe_weather") || !s2.contains("probe_lookup") {
            continue;
        }
        let calls = [call(0, ids), call(1, ids)];
        let located = locate_json(&s2, &calls)
            .or_else(|| locate_header(&s2, &calls))
            .or_else(|| locate_python(&s2, &calls))
            .or_else(|| locate_lax(&s2, &calls))
            .or_else(|| locate_tags(&s2, &calls));
        let Some(located) = located else {
            return Err(format!(
                "the tool calls are written in a form rtbench does not recognise (neither JSON \
                 with the name and arguments, a header with JSON arguments, tags per argument \
                 nor a Python-style list): {}",
                show(&s2)
            ));
        };
        let end_marks: Vec<&str> = std::iter::once(turn.content_close.as_str())
            .chain(turn.end.iter().map(String::as_str))
            .collect();
        let strip_end = |t: &str| -> String {
            let mut ms: Vec<&str> = marks(t);
            while ms.last().is_some_and(|m| end_marks.contains(m)) {
                ms.pop();
            }
            ms.concat()
        };
        let ws = if implicit_content { "\\s*" } else { "" };
        let mut wrapper_close = None;
        let shape = located.shape.clone();
        let mut field = serde_json::Map::new();
        match &shape {
            Shape::Array { .. } | Shape::Python => {
                let (start, end) = located.cores[0];
                let open = s2[..start].trim();
                let after = marks(&s2[end..]).first().map(|m| m.to_string());
                let open_desc = if open.is_empty() {
                    field.insert(
                        "open_pattern".into(),
                        J::from(format!("\\A(?={})", escape(&s2[start..start + 1]))),
                    );
                    "the start of the message".to_string()
                } else {
                    field.insert("open".into(), J::from(open));
                    show(open)
                };
                let mut closes: Vec<String> = after.into_iter().collect();
                for m in &end_marks {
                    if !closes.iter().any(|c| c == m) {
                        closes.push(m.to_string());
                    }
                }
                field.insert(
                    "close".into(),
                    if closes.len() == 1 {
                        J::from(closes[0].clone())
                    } else {
                        J::from(closes.clone())
                    },
                );
                let (content, what) = if shape == Shape::Python {
                    ("python-call-list", "a Python-style list of calls")
                } else {
                    ("json", "one JSON array of calls")
                };
                field.insert("content".into(), J::from(content));
                field.insert("transform_each".into(), J::Bool(true));
                let (name, args, id) = match &shape {
                    Shape::Array { name, args, id } => (name.clone(), args.clone(), id.clone()),
                    _ => ("name".into(), "arguments".into(), None),
                };
                let mut t = serde_json::Map::new();
                t.insert("type".into(), J::from("function"));
                if let Some(id) = &id {
                    t.insert("id".into(), J::from(format!("{{{id}}}")));
                }
                t.insert(
                    "function".into(),
                    json!({"name": format!("{{{name}}}"), "arguments": format!("{{{args}}}")}),
                );
                field.insert("transform".into(), J::Object(t));
                evidence.push(Evidence {
                    what: "tool calls".into(),
                    chose: format!(
                        "{what} from {open_desc} to {}",
                        closes
                            .iter()
                            .map(|c| show(c))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                    because: format!("two calls render as {}", show(&s2)),
                });
            }
            _ => {
                let (c0, c1) = (located.cores[0], located.cores[1]);
                let before = &s2[..c0.0];
                let between = &s2[c0.1..c1.0];
                let after = &s2[c1.1..];
                let (close, _sep, open) = junction(before, between, after);
                let wrapper_open = before[..before.len() - open.len()].trim();
                let rest = strip_end(&after[close.len()..]);
                if !rest.is_empty() {
                    wrapper_close = Some(rest.clone());
                }
                let wrap = if wrapper_open.is_empty() {
                    String::new()
                } else {
                    format!("(?:{}\\s*)?", escape(wrapper_open))
                };
                let open_t = open.trim_start();
                let mut mid = located.mids.first().cloned().unwrap_or_default();
                let mut id_group = false;
                let pattern = match &shape {
                    Shape::Object { .. } => format!("{ws}{wrap}{}", loose(open_t.trim_end())),
                    _ => {
                        let (pre, name, m) = name_group(ids, open_t, &mid);
                        id_group = name.contains("?P<id>");
                        mid = m;
                        // Digits that differ between the calls' headers are an index.
                        let mid_p = loose(mid.trim_end());
                        format!("{ws}{wrap}{pre}{name}{mid_p}")
                    }
                };
                field.insert("open_pattern".into(), J::from(pattern));
                let close_t = close.trim();
                if close_t.is_empty() {
                    let mut alts = vec![escape(open_t.trim())];
                    alts.extend(end_marks.iter().map(|m| escape(m)));
                    if let Some(w) = &wrapper_close {
                        alts.push(escape(w));
                    }
                    field.insert(
                        "close_pattern".into(),
                        J::from(format!("(?={})", alts.join("|"))),
                    );
                } else if super::text::has_inner_space(close_t) {
                    field.insert("close_pattern".into(), J::from(loose(close_t)));
                } else {
                    field.insert("close".into(), J::from(close_t));
                }
                field.insert("repeats".into(), J::Bool(true));
                let mut t = serde_json::Map::new();
                t.insert("type".into(), J::from("function"));
                match &shape {
                    Shape::Object { name, args, id } => {
                        field.insert("content".into(), J::from("json"));
                        if let Some(id) = id {
                            t.insert("id".into(), J::from(format!("{{content.{id}}}")));
                        }
                        t.insert("function".into(), json!({"name": format!("{{content.{name}}}"), "arguments": format!("{{content.{args}}}")}));
                    }
                    Shape::Tags {
                        tag_pattern,
                        json_values,
                    } => {
                        field.insert("content".into(), J::from("xml-inline"));
                        let mut args = serde_json::Map::new();
                        args.insert("tag_pattern".into(), J::from(tag_pattern.clone()));
                        if *json_values {
                            args.insert("value_parser".into(), json!({"name": "json"}));
                        }
                        field.insert("content_args".into(), J::Object(args));
                        if id_group {
                            t.insert("id".into(), J::from("{id}"));
                        }
                        t.insert(
                            "function".into(),
                            json!({"name": "{name}", "arguments": "{content}"}),
                        );
                    }
                    _ => {
                        field.insert("content".into(), J::from("json"));
                        if let Some(d) = &located.dialect {
                            field.insert("content_args".into(), d.clone());
                        }
                        if id_group {
                            t.insert("id".into(), J::from("{id}"));
                        }
                        t.insert(
                            "function".into(),
                            json!({"name": "{name}", "arguments": "{content}"}),
                        );
                    }
                }
                field.insert("transform".into(), J::Object(t));
                let how = match &shape {
                    Shape::Object { name, args, .. } => format!(
                        "a JSON object with the name under {name:?} and the arguments under {args:?}"
                    ),
                    Shape::Tags { .. } => "the name in a header, one tag per argument".to_string(),
                    _ => {
                        "the name in a header, the arguments as a JSON object after it".to_string()
                    }
                };
                evidence.push(Evidence {
                    what: "tool calls".into(),
                    chose: format!(
                        "{how}; each call from {} to {}{}",
                        show(open_t.trim()),
                        if close_t.is_empty() { "the next call or the end of the turn".to_string() } else { show(close_t) },
                        match (wrapper_open.is_empty(), &wrapper_close) {
                            (false, Some(w)) => format!(", all of them inside {} … {}", show(wrapper_open), show(w)),
                            (false, None) => format!(", the first after {}", show(wrapper_open)),
                            _ => String::new(),
                        }
                    ),
                    because: format!(
                        "one call renders as {}; two as {}: between the calls stands {}",
                        show(&s1),
                        show(&s2),
                        show(between)
                    ),
                });
            }
        }
        let mixed = Probe::new("an answer and a tool call", json!({"role": "assistant", "content": super::probes::ANSWER, "tool_calls": [call(0, ids)]})).with_tools();
        let mut rendered = vec![(one, r1), (two, r2)];
        if let Ok(rm) = r.probe(&mixed) {
            rendered.push((mixed, rm));
        }
        let result_open = result_open(r, ids, &end_marks);
        if let Some(m) = &result_open {
            evidence.push(Evidence {
                what: "end of a turn with calls".into(),
                chose: show(m),
                because: format!(
                    "when a tool result follows the calls, the turn goes on with {} where \
                     it otherwise ends",
                    show(m)
                ),
            });
        }
        return Ok(Some(Calls {
            field: J::Object(field),
            wrapper_close,
            result_open,
            rendered,
        }));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_between_two_calls_splits_into_close_separator_and_open() {
        assert_eq!(
            junction("<w><a>", "</a>\n<a>", "</a></w>"),
            ("</a>", "\n", "<a>")
        );
        // No close of its own: the next call's open ends a call.
        assert_eq!(junction("[C]", "[C]", "</s>"), ("", "", "[C]"));
    }

    #[test]
    fn lax_arguments_read_as_the_json_dialect_reads_them() {
        let delims = ("<|\"|>".to_string(), "<|\"|>".to_string());
        let text = "{city:<|\"|>Par{is<|\"|>,days:3,tags:[<|\"|>a<|\"|>]}";
        let end = balanced_end(text, 0, Some(&delims)).unwrap();
        assert_eq!(end, text.len());
        assert_eq!(
            relax(text, Some(&delims)),
            r#"{"city":"Par{is","days":3,"tags":["a"]}"#
        );
    }

    #[test]
    fn a_json_value_is_found_with_its_span() {
        let found = json_values("x <a>{\"k\": [1, 2]}</a> [3]");
        let spans: Vec<(usize, usize)> = found.iter().map(|f| (f.start, f.end)).collect();
        assert_eq!(spans, [(5, 18), (23, 26)]);
        assert_eq!(python_dumps(&json!({"a": [1, "b"]})), r#"{"a": [1, "b"]}"#);
    }
}
