//! Token-id parsing against the reference, without Python: every case of `data/ids` (recorded
//! by `tools/conformance/id_cases.py` from transformers 5.25 and 5.24 on the bundled model
//! folders) is parsed one-shot under both versions and streamed under 5.25 with the recorded
//! id chunkings; the message or error, and every feed's events, must be the reference's.
//!
//! The variants cover control tokens generated as their ids and spelled with ordinary tokens
//! (defused by 5.25), spellings split between the prompt and the generation, U+FDD2 written by
//! the model, ids outside the vocabulary and ids that end inside a character.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rtbench_engine::event::Event;
use rtbench_engine::parser::Events;
use rtbench_engine::template::{Template, load_template};
use rtbench_engine::value::Value;
use rtbench_engine::{ParseError, Reference};
use rtbench_tokenize::ids::{IdParser, Prefix, parse_ids};
use rtbench_tooling::model::Model;

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_dict().and_then(|d| d.get(key))
}

fn ids(v: Option<&Value>) -> Option<Vec<u32>> {
    match v? {
        Value::List(items) => Some(
            items
                .iter()
                .map(|i| match i {
                    Value::Int(n) => u32::try_from(*n).expect("an id"),
                    other => panic!("not an id: {other:?}"),
                })
                .collect(),
        ),
        _ => None,
    }
}

fn events(template: &Template, evs: &[Event]) -> Value {
    Value::List(
        evs.iter()
            .filter_map(|e| e.to_value(&template.fields()[e.field].name))
            .collect(),
    )
}

/// What the engine gives for a recorded stream: the same shape as the recording.
fn stream(
    template: &Template,
    prefix: Prefix<'_>,
    tools: Option<&Value>,
    model: &Model,
    chunks: &[Vec<u32>],
) -> Value {
    let tokenizer = model.tokenizer().expect("a tokenizer");
    let control = model.control_tokens().expect("control tokens");
    let mut rec = rtbench_engine::value::Dict::new();
    let mut stage = "init";
    let result = (|| -> Result<(), ParseError> {
        let mut parser = IdParser::new(
            template,
            Some(prefix),
            tools,
            tokenizer,
            control,
            Events::Reference,
            false,
        )?;
        rec.insert("initial_events", events(template, parser.initial_events()));
        stage = "feed";
        let mut feeds = Vec::new();
        for chunk in chunks {
            let fed = parser.feed(chunk);
            match fed {
                Ok((evs, _)) => feeds.push(events(template, &evs)),
                Err(e) => {
                    rec.insert("feeds", Value::List(feeds));
                    return Err(e);
                }
            }
        }
        rec.insert("feeds", Value::List(feeds));
        stage = "finalize";
        let (message, finals, _) = parser.finalize()?;
        rec.insert("final_events", events(template, &finals));
        rec.insert("message", Value::Dict(message));
        Ok(())
    })();
    if result.is_err() {
        rec.insert("error", Value::Bool(true));
        rec.insert("error_stage", Value::from(stage));
    }
    Value::Dict(rec)
}

/// The recorded stream without what the engine does not reproduce (the error's text).
fn comparable(rec: &Value) -> Value {
    let mut d = rec.as_dict().cloned().unwrap_or_default();
    for k in ["label", "sizes", "error_text"] {
        d.shift_remove(k);
    }
    Value::Dict(d)
}

fn split(all: &[u32], sizes: &[usize]) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let (mut pos, mut i) = (0, 0);
    while pos < all.len() {
        let n = sizes[i % sizes.len()];
        out.push(all[pos..(pos + n).min(all.len())].to_vec());
        pos += n;
        i += 1;
    }
    out
}

#[test]
fn token_id_cases_match_both_reference_versions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = common::load_cases(&root.join("tests/data/ids"));
    assert!(cases.len() > 500, "only {} cases", cases.len());
    let mut models: HashMap<PathBuf, Model> = HashMap::new();
    let mut failures = Vec::new();
    let (mut parses, mut streams) = ([0usize; 2], 0usize);
    for case in &cases {
        let name = get(case, "name").and_then(Value::as_str).unwrap_or("?");
        let dir = root.join(get(case, "model").and_then(Value::as_str).unwrap());
        let model = models
            .entry(dir.clone())
            .or_insert_with(|| Model::open(&dir));
        let template = load_template(get(case, "template").unwrap()).expect("a valid template");
        let tools = get(case, "tools").filter(|t| !matches!(t, Value::Null));
        let generation = ids(get(case, "output_ids")).unwrap();
        let prefix_ids = ids(get(case, "prefix_ids"));
        let prefix = match &prefix_ids {
            Some(p) => Prefix::Ids(p),
            None => Prefix::Text(get(case, "prefix").and_then(Value::as_str).unwrap()),
        };
        let tokenizer = model.tokenizer().unwrap();
        let control = model.control_tokens().unwrap();
        for (i, reference) in Reference::ALL.into_iter().enumerate() {
            let t = template.clone().with_reference(reference);
            let expect = get(case, &format!("expect_{}", reference.name())).unwrap();
            let got = parse_ids(&t, Some(prefix), &generation, tools, tokenizer, control);
            let agree = match (&got, get(expect, "message")) {
                (Ok(m), Some(e)) => Value::Dict(m.clone()).json_eq(e),
                (Err(_), None) => true,
                _ => false,
            };
            if agree {
                parses[i] += 1;
            } else {
                failures.push(format!(
                    "{name} ({reference}): expected {}, got {:?}",
                    expect.py_repr(),
                    got.map(|m| Value::Dict(m).py_repr()).map_err(|e| e.message)
                ));
            }
        }
        let t = template.with_reference(Reference::V5_25);
        for rec in get(case, "streams").and_then(Value::as_list).unwrap_or(&[]) {
            let sizes: Vec<usize> = ids(get(rec, "sizes"))
                .unwrap()
                .into_iter()
                .map(|n| n as usize)
                .collect();
            let ours = stream(&t, prefix, tools, model, &split(&generation, &sizes));
            if ours.json_eq(&comparable(rec)) {
                streams += 1;
            } else {
                failures.push(format!(
                    "{name} stream {}: expected {}, got {}",
                    get(rec, "label").and_then(Value::as_str).unwrap_or("?"),
                    comparable(rec).py_repr(),
                    ours.py_repr()
                ));
            }
        }
    }
    let total_streams: usize = cases
        .iter()
        .map(|c| {
            get(c, "streams")
                .and_then(Value::as_list)
                .map_or(0, <[Value]>::len)
        })
        .sum();
    eprintln!(
        "ids: parse 5.24 {}/{n}, parse 5.25 {}/{n}, stream-exact 5.25 {streams}/{total_streams}",
        parses[0],
        parses[1],
        n = cases.len()
    );
    for f in failures.iter().take(20) {
        eprintln!("  FAIL {}", f.chars().take(1500).collect::<String>());
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
}

/// The workbench's replay of token ids (one id per feed through the defusing decoder, the
/// decoder's flush added by the finalize step) gives the reference's events: every recorded
/// one-id-per-feed stream, its events in order and its message (feeds whose ids released no
/// text are not steps of the replay, and have no events in the reference either).
#[test]
fn id_replays_give_the_reference_events() {
    use rtbench_tooling::chunking::Chunking;
    use rtbench_tooling::progress::Progress;
    use rtbench_tooling::replay::{Feeding, Outcome, Replay};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut models: HashMap<PathBuf, Model> = HashMap::new();
    let (mut checked, mut failures) = (0, Vec::new());
    for case in common::load_cases(&root.join("tests/data/ids")) {
        let Some(prefix_ids) = ids(get(&case, "prefix_ids")) else {
            continue;
        };
        let Some(rec) = get(&case, "streams")
            .and_then(Value::as_list)
            .and_then(|l| {
                l.iter()
                    .find(|r| get(r, "label").and_then(Value::as_str) == Some("size-1"))
            })
        else {
            continue;
        };
        let name = get(&case, "name")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let dir = root.join(get(&case, "model").and_then(Value::as_str).unwrap());
        let model = models
            .entry(dir.clone())
            .or_insert_with(|| Model::open(&dir));
        let template = load_template(get(&case, "template").unwrap())
            .unwrap()
            .with_reference(Reference::V5_25);
        let tools = get(&case, "tools").filter(|t| !matches!(t, Value::Null));
        let generation = ids(get(&case, "output_ids")).unwrap();
        let feeds = rtbench_tokenize::ids::id_feeds(
            Prefix::Ids(&prefix_ids),
            &generation,
            model.tokenizer().unwrap(),
            model.control_tokens().unwrap(),
        )
        .unwrap();
        let mut cuts = Vec::new();
        let mut at = 0;
        for p in &feeds.pieces {
            at += p.len();
            cuts.push(at);
        }
        let text = feeds.pieces.concat();
        let replay = Replay::build_with(
            template,
            &feeds.prefix,
            &text,
            tools,
            Chunking::ModelTokens(cuts),
            &Progress::default(),
            &Feeding {
                token_ids: true,
                tail: feeds.tail.clone(),
            },
        )
        .unwrap();
        let ours: Vec<Value> = (0..=replay.last_step())
            .flat_map(|s| replay.reference_events(s))
            .collect();
        let mut theirs: Vec<Value> = Vec::new();
        let mut expect_error = get(rec, "error").is_some();
        for key in ["initial_events", "feeds", "final_events"] {
            match get(rec, key) {
                Some(Value::List(items)) if key == "feeds" => {
                    for f in items {
                        theirs.extend(f.as_list().unwrap_or(&[]).iter().cloned());
                    }
                }
                Some(Value::List(items)) => theirs.extend(items.iter().cloned()),
                _ => expect_error = true,
            }
        }
        checked += 1;
        let message_ok = match (replay.outcome(), get(rec, "message")) {
            (Outcome::Message(m), Some(e)) => Value::Dict(m.clone()).json_eq(e),
            (Outcome::Failed { .. }, None) => expect_error,
            _ => false,
        };
        let events_ok =
            ours.len() == theirs.len() && ours.iter().zip(&theirs).all(|(a, b)| a.json_eq(b));
        if !(message_ok && (events_ok || expect_error)) {
            failures.push(name);
        }
    }
    eprintln!(
        "id replays: {checked} streams, {} equal",
        checked - failures.len()
    );
    assert!(checked > 300, "only {checked} replays");
    assert!(failures.is_empty(), "{failures:?}");
}
