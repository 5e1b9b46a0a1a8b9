//! Python-semantics parity, without Python: the cases `tools/semantics/fuzz.py` recorded from
//! transformers 5.24 and 5.25 (`tests/data/semantics/<class>.json`) replayed on the engine
//! under each version: the same message (and its text as the command line prints it), the
//! same events, or the same error (exception type and message) at the same stage (`load`,
//! `init`, `feed`, `finalize`).
//!
//! `SEMANTICS_CASES=<file>` replays one case file instead (the fuzzer uses it).

use std::path::{Path, PathBuf};

use rtbench_engine::Reference;
use rtbench_engine::event::Event;
use rtbench_engine::parser::Parser;
use rtbench_engine::py::{DumpOptions, json_dumps, json_loads};
use rtbench_engine::template::{Template, load_template};
use rtbench_engine::value::Value;

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.as_dict().and_then(|d| d.get(key))
}

fn text(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str)
}

/// What the engine does with a case: the message and events, or the error and its stage.
enum Outcome {
    Message { message: Value, events: Vec<Value> },
    Error { text: String, stage: &'static str },
}

fn events(template: &Template, evs: &[Event]) -> Vec<Value> {
    evs.iter()
        .filter_map(|e| e.to_value(&template.fields()[e.field].name))
        .collect()
}

fn run(case: &Value, reference: Reference) -> Outcome {
    let err = |text: String, stage| Outcome::Error { text, stage };
    let template = match load_template(get(case, "template").unwrap_or(&Value::Null)) {
        Ok(t) => t.with_reference(reference),
        Err(e) => return err(e.text(), "load"),
    };
    let prefix = text(get(case, "prefix"));
    let tools = get(case, "tools");
    let mut parser = match Parser::new(&template, prefix, tools) {
        Ok(p) => p,
        Err(e) => return err(e.text(), "init"),
    };
    let mut all = events(&template, parser.initial_events());
    for chunk in get(case, "chunks").and_then(Value::as_list).unwrap_or(&[]) {
        match parser.feed(chunk.as_str().unwrap_or("")) {
            Ok(evs) => all.extend(events(&template, &evs)),
            Err(e) => return err(e.text(), "feed"),
        }
    }
    match parser.finalize() {
        Ok((message, evs)) => {
            all.extend(events(&template, &evs));
            Outcome::Message {
                message: Value::Dict(message),
                events: all,
            }
        }
        Err(e) => err(e.text(), "finalize"),
    }
}

/// The difference between the engine's outcome and the reference's, if any.
fn compare(want: &Value, got: &Outcome) -> Option<String> {
    match (text(get(want, "error")), got) {
        (Some(w), Outcome::Error { text, stage }) => {
            let ws = text_or(get(want, "stage"));
            (w != text || ws != *stage)
                .then(|| format!("expected {ws}: {w:?}\n      got {stage}: {text:?}"))
        }
        (Some(w), Outcome::Message { message, .. }) => Some(format!(
            "expected error {w:?}\n      got {}",
            message.py_repr()
        )),
        (None, Outcome::Error { text, stage }) => {
            Some(format!("expected a message, got {stage}: {text:?}"))
        }
        (None, Outcome::Message { message, events }) => {
            let printed = json_dumps(message, &DumpOptions::reference_cli()).ok();
            let want_printed = text(get(want, "printed")).map(String::from);
            if printed != want_printed {
                return Some(format!(
                    "printed: expected {want_printed:?}\n      got {printed:?}"
                ));
            }
            let want_events = get(want, "events").and_then(Value::as_list).unwrap_or(&[]);
            // Compared as Python's `json.dumps` text: types, key order and NaN included.
            let dump = |v: &[Value]| json_dumps(&Value::List(v.to_vec()), &DumpOptions::default());
            if dump(want_events) != dump(events) {
                return Some(format!(
                    "events: expected {}\n      got {}",
                    Value::List(want_events.to_vec()).py_repr(),
                    Value::List(events.clone()).py_repr()
                ));
            }
            None
        }
    }
}

fn text_or(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("?")
}

/// Replays one case file; returns its summary lines and failures.
fn replay(path: &Path) -> (Vec<String>, Vec<String>) {
    let data = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = json_loads(&data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let class = text_or(get(&doc, "class")).to_string();
    let cases = get(&doc, "cases").and_then(Value::as_list).unwrap_or(&[]);
    let mut lines = Vec::new();
    let mut failures = Vec::new();
    for reference in Reference::ALL {
        let mut equal = 0;
        for case in cases {
            let want = get(case, "expect")
                .or_else(|| get(case, "expect_by_version").and_then(|v| get(v, reference.name())));
            let Some(want) = want else {
                failures.push(format!("{}: no expectation", text_or(get(case, "name"))));
                continue;
            };
            match compare(want, &run(case, reference)) {
                None => equal += 1,
                Some(diff) => failures.push(format!(
                    "[{}] {}: {diff}",
                    reference.name(),
                    text_or(get(case, "name"))
                )),
            }
        }
        lines.push(format!(
            "{class}: {} cases, {equal} equal (reference {})",
            cases.len(),
            reference.name()
        ));
    }
    (lines, failures)
}

fn case_files() -> Vec<PathBuf> {
    if let Ok(one) = std::env::var("SEMANTICS_CASES") {
        return vec![PathBuf::from(one)];
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/semantics");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn recorded_python_semantics_match_both_references() {
    let files = case_files();
    assert!(!files.is_empty(), "no case files");
    let mut failures = Vec::new();
    for file in &files {
        let (lines, f) = replay(file);
        for l in lines {
            println!("{l}");
        }
        failures.extend(f);
    }
    for f in failures.iter().take(30) {
        eprintln!("  FAIL {f}");
    }
    assert!(failures.is_empty(), "{} cases differ", failures.len());
}

/// 5.25's token-id path: `strip_markers` walks every region value, and gives up at the depths
/// `tools/semantics/measure_token_ids.py` measured (a list nested around an empty one, closed at
/// the end of the stream or in the prefix, one-shot or streamed).
#[test]
fn token_id_values_nest_as_deep_as_the_reference_strips_markers() {
    use rtbench_engine::parser::{Events, Options};
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/semantics/recursion/token_ids.json");
    let doc = json_loads(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let end = load_template(
        &json_loads(r#"{"start_anchor": "x", "fields": {"content": {"content": "json"}}}"#)
            .unwrap(),
    )
    .unwrap();
    let prefixed = load_template(
        &json_loads(
            r#"{"start_anchor": "x", "fields": {"content": {}, "v": {"open": "<v>", "close": "</v>", "content": "json"}}}"#,
        )
        .unwrap(),
    )
    .unwrap();
    let mut checked = 0;
    for (key, measured) in doc.as_dict().unwrap() {
        let deepest = match get(measured, "deepest") {
            Some(Value::Int(n)) => *n as usize,
            _ => panic!("{key}: no depth"),
        };
        let want_error = text(get(measured, "error")).unwrap();
        let whole_text = key.starts_with("parse");
        let in_prefix = key.ends_with("prefix");
        let run = |n: usize| {
            let nested = format!("{}{}", "[".repeat(n), "]".repeat(n));
            let options = Options {
                events: Events::Reference,
                whole_text,
                token_ids: true,
                values_once: false,
                lists_in_events: false,
            };
            let result = if in_prefix {
                Parser::with_options(&prefixed, Some(&format!("<v>{nested}</v>")), None, options)
                    .and_then(|mut p| p.finalize())
            } else {
                Parser::with_options(&end, Some(""), None, options).and_then(|mut p| {
                    p.feed(&nested)?;
                    p.finalize()
                })
            };
            result.map(|_| ()).map_err(|e| e.text())
        };
        assert_eq!(run(deepest), Ok(()), "{key}: depth {deepest}");
        assert_eq!(
            run(deepest + 1),
            Err(want_error.to_string()),
            "{key}: depth {}",
            deepest + 1
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
}
