//! Replays the reference's verdicts on `python-call-list` inputs
//! (`crates/engine/tests/data/pcl/cases.json`, written by `tools/pcl/gen_cases.py`) against the
//! Rust parser: the same value, with ints and floats told apart and key order significant, or an
//! error with the same message.
//!
//! The case file is ASCII JSON whose strings may hold lone-surrogate escapes; the engine's JSON
//! reader turns them into the value type's stand-ins.

use crate::content::python_call_list::parse_python_call_list;
use crate::py::json_loads;
use crate::value::{Value, surrogate_char};

const CASES: &str = include_str!("../../tests/data/pcl/cases.json");

/// Replays `crates/engine/tests/data/pcl/cases.json`, or the case file named by `PCL_CASES` (for
/// larger runs of the generator with other seeds).
#[test]
fn reference_cases() {
    let file = match std::env::var("PCL_CASES") {
        Ok(path) => json_loads(&std::fs::read_to_string(&path).expect("PCL_CASES is readable"))
            .expect("valid JSON"),
        Err(_) => json_loads(CASES).expect("valid JSON"),
    };
    let header = file.as_dict().expect("the case file is an object");
    let cases = header["cases"].as_list().expect("cases is a list");
    let count = |key: &str| match &header[key] {
        Value::Int(n) => *n as usize,
        other => panic!("{key}: {other:?}"),
    };
    assert_eq!(cases.len(), count("hand_written") + count("random"));

    let mut failures = Vec::new();
    let (mut values, mut errors) = (0, 0);
    for case in cases {
        let case = case.as_dict().expect("a case is an object");
        let name = case["name"].as_str().expect("name");
        let text = match (case.get("text"), case.get("code_points")) {
            (Some(Value::Str(text)), None) => text.clone(),
            (None, Some(Value::List(code_points))) => code_points.iter().map(code_point).collect(),
            _ => panic!("{name}: a case has either text or code_points"),
        };
        let text = text.as_str();
        let expect = case["expect"].as_dict().expect("expect");
        let got = parse_python_call_list(text);
        let verdict = match (expect.get("value"), expect.get("error"), &got) {
            (Some(want), None, Ok(value)) if want.identical(value) => Ok(()),
            (None, Some(Value::Str(want)), Err(e)) if *want == e.to_string() => Ok(()),
            _ => Err(format!(
                "{name}: text {:?}\n  expected {expect:?}\n  got      {got:?} ({})",
                short(text),
                got.as_ref().map_or_else(|e| e.to_string(), |_| "ok".into()),
            )),
        };
        match verdict {
            Ok(()) if got.is_ok() => values += 1,
            Ok(()) => errors += 1,
            Err(failure) => failures.push(failure),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the reference:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(errors, count("errors"));
    eprintln!(
        "{} cases agree with the reference ({values} values, {errors} errors)",
        cases.len()
    );
}

/// One entry of a case's `code_points`: surrogates become the value type's stand-ins.
fn code_point(value: &Value) -> char {
    let Value::Int(cp) = *value else {
        panic!("code point {value:?}")
    };
    let cp = u32::try_from(cp).expect("code point");
    match char::from_u32(cp) {
        Some(c) => c,
        None => surrogate_char(u16::try_from(cp).expect("surrogate")),
    }
}

fn short(text: &str) -> String {
    if text.chars().count() <= 200 {
        return text.to_string();
    }
    let head: String = text.chars().take(200).collect();
    format!("{head}... ({} code points)", text.chars().count())
}
