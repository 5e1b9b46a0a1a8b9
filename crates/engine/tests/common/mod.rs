//! Runs conformance cases (recorded from the reference) through the engine in-process, scoring
//! them the way the conformance harness does: parse results, stream events (semantic: same
//! regions, text and values; exact: identical events feed by feed) and template validity.

#![allow(dead_code)]

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::event::Event;
use rtbench_engine::parser::Parser;
use rtbench_engine::py::json_loads;
use rtbench_engine::template::{Template, load_template};
use rtbench_engine::value::{Dict, Value};

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_dict().and_then(|d| d.get(key))
}

fn flag(v: &Value, key: &str) -> bool {
    get(v, key).is_some_and(Value::truthy)
}

/// Merges consecutive chunks of the same field and dirty flag and drops empty ones.
fn semantic(events: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for ev in events {
        if get(ev, "type").and_then(Value::as_str) == Some("region_chunk") {
            let text = get(ev, "text").and_then(Value::as_str).unwrap_or("");
            if text.is_empty() {
                continue;
            }
            if let Some(last) = out.last_mut()
                && get(last, "type").and_then(Value::as_str) == Some("region_chunk")
                && get(last, "field").map(|f| f.json_eq(get(ev, "field").unwrap_or(&Value::Null)))
                    == Some(true)
                && get(last, "dirty").map(|d| d.json_eq(get(ev, "dirty").unwrap_or(&Value::Null)))
                    == Some(true)
            {
                let merged = format!(
                    "{}{}",
                    get(last, "text").and_then(Value::as_str).unwrap_or(""),
                    text
                );
                if let Value::Dict(d) = last {
                    d.insert("text", Value::Str(merged));
                }
                continue;
            }
        }
        out.push(ev.clone());
    }
    out
}

/// What the engine produced for one stream.
struct Run {
    initial: Vec<Value>,
    feeds: Vec<Vec<Value>>,
    finals: Vec<Value>,
    message: Value,
}

fn events_to_values(template: &Template, events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| e.to_value(&template.fields()[e.field].name))
        .collect()
}

/// Runs the engine over recorded chunks. `Err` when any stage raised.
fn run_stream(
    template: &Template,
    prefix: Option<&str>,
    tools: Option<&Value>,
    chunks: &[&str],
) -> Result<Run, String> {
    let mut parser = Parser::new(template, prefix, tools).map_err(|e| e.text())?;
    let initial = events_to_values(template, parser.initial_events());
    let mut feeds = Vec::new();
    for chunk in chunks {
        let evs = parser.feed(chunk).map_err(|e| e.text())?;
        feeds.push(events_to_values(template, &evs));
    }
    let (message, finals) = parser.finalize().map_err(|e| e.text())?;
    Ok(Run {
        initial,
        finals: events_to_values(template, &finals),
        feeds,
        message: Value::Dict(message),
    })
}

/// The score of one case.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) name: String,
    pub(crate) tags: Vec<String>,
    pub(crate) check_ok: bool,
    pub(crate) parse_ok: bool,
    pub(crate) stream_total: usize,
    pub(crate) stream_semantic: usize,
    pub(crate) stream_exact: usize,
    /// Human-readable descriptions of every failure.
    pub(crate) failures: Vec<String>,
    /// Streams that agree semantically but not event for event, with whether rtbench released
    /// text earlier than the reference, never later (after every feed, what the reference had
    /// emitted is a prefix of what rtbench had).
    pub(crate) exact_only: Vec<(String, bool)>,
    /// How many reference error texts the case records (compared exactly) ...
    pub(crate) error_texts: usize,
    /// ... and those rtbench's error text differs from.
    pub(crate) text_failures: Vec<String>,
    /// Whether a delimiter pattern of the template has a lazy quantifier (with which the
    /// reference reports partial matches that no continuation can complete).
    pub(crate) lazy_delimiters: bool,
}

/// The events as one string in which a stream that released more text earlier is an
/// extension of one that held it back.
fn progress(events: &[Value]) -> String {
    let mut out = String::new();
    for ev in semantic(events) {
        let field = get(&ev, "field").and_then(Value::as_str).unwrap_or("");
        match get(&ev, "type").and_then(Value::as_str) {
            Some("region_open") => out.push_str(&format!("\u{0}open {field}\u{0}")),
            Some("region_chunk") => {
                out.push_str(get(&ev, "text").and_then(Value::as_str).unwrap_or(""))
            }
            _ => out.push_str(&format!(
                "\u{0}close {field} {}\u{0}",
                get(&ev, "value").map_or(String::new(), Value::py_repr)
            )),
        }
    }
    out
}

/// Whether, after every feed, the reference's output so far is a prefix of rtbench's.
fn released_no_later(
    want: &[&[Value]],
    got: &[Vec<Value>],
    want_initial: &[Value],
    got_initial: &[Value],
) -> bool {
    let (mut w, mut g) = (want_initial.to_vec(), got_initial.to_vec());
    if !progress(&g).starts_with(&progress(&w)) {
        return false;
    }
    for (a, b) in want.iter().zip(got) {
        w.extend_from_slice(a);
        g.extend_from_slice(b);
        if !progress(&g).starts_with(&progress(&w)) {
            return false;
        }
    }
    true
}

fn show(v: &Value) -> String {
    let s = v.py_repr();
    if s.len() > 300 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(300).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// Runs one case (a decoded case file).
/// Scores one case under the reference version `reference` (the case must have been recorded
/// from that version).
pub(crate) fn run_case(case: &Value, reference: rtbench_engine::Reference) -> Outcome {
    let name = get(case, "name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    let tags = get(case, "tags")
        .and_then(Value::as_list)
        .map(|l| {
            l.iter()
                .filter_map(|t| t.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Outcome {
        name,
        tags,
        ..Outcome::default()
    };
    let template_v = get(case, "template").cloned().unwrap_or(Value::Null);
    let prefix = get(case, "prefix").and_then(Value::as_str);
    let tools = get(case, "tools").filter(|t| !matches!(t, Value::Null));
    let output = get(case, "output").and_then(Value::as_str).unwrap_or("");

    let loaded = load_template(&template_v).map(|t| Arc::new(t.with_reference(reference)));
    if let Ok(t) = &loaded {
        out.lazy_delimiters = t
            .fields()
            .iter()
            .flat_map(|f| [&f.open, &f.close])
            .flatten()
            .any(|d| matches!(d, Delimiter::Pattern(p) if p.regex.features().lazy));
    }
    let expect_valid = get(case, "check").is_some_and(|c| flag(c, "valid"));
    out.check_ok = loaded.is_ok() == expect_valid;
    if !out.check_ok {
        out.failures.push(format!(
            "check: expected {}, got {}",
            if expect_valid { "valid" } else { "invalid" },
            match &loaded {
                Ok(_) => "valid".to_string(),
                Err(e) => format!("invalid ({})", e.message),
            }
        ));
    }

    let run = |chunks: &[&str]| match &loaded {
        Ok(t) => run_stream(t, prefix, tools, chunks),
        Err(e) => Err(e.text()),
    };
    // The reference's error texts (type and message), exactly.
    let recorded = |section: &str| {
        get(case, section)
            .and_then(|s| get(s, "error_text"))
            .and_then(Value::as_str)
            .map(String::from)
    };
    if let (Some(want), Err(e)) = (recorded("check"), &loaded) {
        out.error_texts += 1;
        if e.text() != want {
            out.text_failures
                .push(format!("check: expected {want:?}, got {:?}", e.text()));
        }
    }

    let expect = get(case, "expect").cloned().unwrap_or(Value::Null);
    let whole: Vec<&str> = if output.is_empty() {
        vec![]
    } else {
        vec![output]
    };
    match (run(&whole), flag(&expect, "error")) {
        (Err(e), true) => {
            out.parse_ok = true;
            if let Some(want) = recorded("expect") {
                out.error_texts += 1;
                if e != want {
                    out.text_failures
                        .push(format!("parse: expected {want:?}, got {e:?}"));
                }
            }
        }
        (Ok(r), true) => out.failures.push(format!(
            "parse: expected an error, got {}",
            show(&r.message)
        )),
        (Err(e), false) => out
            .failures
            .push(format!("parse: expected a message, got error: {e}")),
        (Ok(r), false) => {
            let want = get(&expect, "message").unwrap_or(&Value::Null);
            out.parse_ok = want.json_eq(&r.message);
            if !out.parse_ok {
                out.failures.push(format!(
                    "parse: expected {}, got {}",
                    show(want),
                    show(&r.message)
                ));
            }
        }
    }

    for stream in get(case, "streams").and_then(Value::as_list).unwrap_or(&[]) {
        out.stream_total += 1;
        let label = get(stream, "label").and_then(Value::as_str).unwrap_or("?");
        let chunks: Vec<&str> = get(stream, "chunks")
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .filter_map(Value::as_str)
            .collect();
        match (run(&chunks), flag(stream, "error")) {
            (Err(_), true) => {
                out.stream_semantic += 1;
                out.stream_exact += 1;
            }
            (Ok(_), true) => out
                .failures
                .push(format!("stream [{label}]: expected an error, got success")),
            (Err(e), false) => out.failures.push(format!(
                "stream [{label}]: expected success, got error: {e}"
            )),
            (Ok(r), false) => {
                let want_initial = get(stream, "initial_events")
                    .and_then(Value::as_list)
                    .unwrap_or(&[]);
                let want_feeds: Vec<&[Value]> = get(stream, "feeds")
                    .and_then(Value::as_list)
                    .unwrap_or(&[])
                    .iter()
                    .map(|f| f.as_list().unwrap_or(&[]))
                    .collect();
                let want_final = get(stream, "final_events")
                    .and_then(Value::as_list)
                    .unwrap_or(&[]);
                let want_msg = get(stream, "message").unwrap_or(&Value::Null);
                let mut want_all: Vec<Value> = want_initial.to_vec();
                want_feeds
                    .iter()
                    .for_each(|f| want_all.extend_from_slice(f));
                want_all.extend_from_slice(want_final);
                let mut got_all = r.initial.clone();
                r.feeds.iter().for_each(|f| got_all.extend_from_slice(f));
                got_all.extend_from_slice(&r.finals);
                let (ws, gs) = (semantic(&want_all), semantic(&got_all));
                let sem_ok = ws.len() == gs.len()
                    && ws.iter().zip(&gs).all(|(a, b)| a.json_eq(b))
                    && want_msg.json_eq(&r.message);
                if !sem_ok {
                    let i = ws
                        .iter()
                        .zip(&gs)
                        .position(|(a, b)| !a.json_eq(b))
                        .unwrap_or(ws.len().min(gs.len()));
                    out.failures.push(format!(
                        "stream [{label}] semantic: at event {i}: expected {}, got {} (message expected {}, got {})",
                        ws.get(i).map_or("nothing".into(), show),
                        gs.get(i).map_or("nothing".into(), show),
                        show(want_msg),
                        show(&r.message)
                    ));
                    continue;
                }
                out.stream_semantic += 1;
                let list_eq = |a: &[Value], b: &[Value]| {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.json_eq(y))
                };
                let exact = list_eq(want_initial, &r.initial)
                    && want_feeds.len() == r.feeds.len()
                    && want_feeds.iter().zip(&r.feeds).all(|(a, b)| list_eq(a, b))
                    && list_eq(want_final, &r.finals);
                if exact {
                    out.stream_exact += 1;
                } else {
                    let ahead = released_no_later(&want_feeds, &r.feeds, want_initial, &r.initial);
                    let i = want_feeds
                        .iter()
                        .zip(&r.feeds)
                        .position(|(a, b)| !list_eq(a, b));
                    out.exact_only.push((
                        format!(
                            "stream [{label}] exact: first differing feed {:?}{}",
                            i,
                            i.map_or(String::new(), |i| format!(
                                " (chunk {:?}): expected {}, got {}",
                                chunks.get(i).copied().unwrap_or(""),
                                show(&Value::List(want_feeds[i].to_vec())),
                                show(&Value::List(r.feeds[i].clone()))
                            ))
                        ),
                        ahead,
                    ));
                }
            }
        }
    }
    out
}

/// Loads every case under `dir`: `*.json` files (one case each) and `*.jsonl.gz` files (one
/// case per line).
pub(crate) fn load_cases(dir: &Path) -> Vec<Value> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    let mut cases = Vec::new();
    for p in paths {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".json") {
            let text = std::fs::read_to_string(&p).unwrap();
            cases.push(json_loads(&text).unwrap_or_else(|e| panic!("{name}: {}", e.message)));
        } else if name.ends_with(".jsonl.gz") {
            let mut text = String::new();
            flate2::read::GzDecoder::new(std::fs::File::open(&p).unwrap())
                .read_to_string(&mut text)
                .unwrap();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                cases.push(json_loads(line).unwrap_or_else(|e| panic!("{name}: {}", e.message)));
            }
        }
    }
    cases
}

/// Totals over many cases.
#[derive(Debug, Default)]
pub(crate) struct Summary {
    pub(crate) cases: usize,
    pub(crate) parse: usize,
    pub(crate) stream_total: usize,
    pub(crate) stream_semantic: usize,
    pub(crate) stream_exact: usize,
    pub(crate) check: usize,
}

impl Summary {
    pub(crate) fn add(&mut self, o: &Outcome) {
        self.cases += 1;
        self.parse += o.parse_ok as usize;
        self.check += o.check_ok as usize;
        self.stream_total += o.stream_total;
        self.stream_semantic += o.stream_semantic;
        self.stream_exact += o.stream_exact;
    }

    pub(crate) fn line(&self) -> String {
        format!(
            "conformance: parse {}/{}, stream-semantic {}/{}, stream-exact {}/{}, check {}/{}",
            self.parse,
            self.cases,
            self.stream_semantic,
            self.stream_total,
            self.stream_exact,
            self.stream_total,
            self.check,
            self.cases
        )
    }
}

#[allow(unused)]
pub(crate) fn empty_dict() -> Dict {
    Dict::new()
}

/// Asserts that our events equal the reference's recorded ones (as JSON values).
pub(crate) fn assert_events(ours: &[Value], theirs: &[Value], at: &str) {
    assert_eq!(ours.len(), theirs.len(), "{at}: {ours:?} vs {theirs:?}");
    for (a, b) in ours.iter().zip(theirs) {
        assert!(a.json_eq(b), "{at}: {a:?} vs {b:?}");
    }
}

/// The chunk texts of a recorded stream.
pub(crate) fn recorded_chunks(stream: &Value) -> Vec<String> {
    get(stream, "chunks")
        .and_then(Value::as_list)
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

/// Byte offsets where the chunks end (all but the last).
pub(crate) fn cuts_of(chunks: &[String]) -> Vec<usize> {
    let mut at = 0;
    let mut cuts = Vec::new();
    for c in &chunks[..chunks.len().saturating_sub(1)] {
        at += c.len();
        cuts.push(at);
    }
    cuts
}
