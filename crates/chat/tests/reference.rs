//! Replays crates/chat/tests/data/chat_render/cases.json (written by tools/chat/render_reference.py
//! with transformers 5.24.0): every case must render byte-identically, or fail with the same
//! error kind and line.

use std::path::{Path, PathBuf};

use rtbench_chat::{ChatTemplate, RenderErrorKind, RenderInput};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn kind_name(kind: RenderErrorKind) -> &'static str {
    match kind {
        RenderErrorKind::Syntax => "syntax",
        RenderErrorKind::Raised => "raised",
        RenderErrorKind::Other => "other",
        RenderErrorKind::Limit => "limit",
    }
}

/// A `.sample` file's `prefix` section, read as `rtbench-tooling`'s sample reader does: its lines
/// up to the last non-blank one, plus the line breaks its header's `ends with N newlines` asks for.
fn sample_prefix(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines: Vec<&str> = Vec::new();
    let mut newlines = 0;
    let mut inside = false;
    for line in text.split('\n') {
        if line.starts_with("--- ") && line.ends_with(" ---") {
            if inside {
                break;
            }
            if line.starts_with("--- prefix") {
                inside = true;
                if line.contains("ends with newline") {
                    newlines = 1;
                } else if let Some(rest) = line.split("ends with ").nth(1) {
                    newlines = rest.split(' ').next().unwrap().parse().unwrap();
                }
            }
            continue;
        }
        if inside {
            lines.push(line);
        }
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    lines.join("\n") + &"\n".repeat(newlines)
}

#[test]
fn reference_cases() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chat_render/cases.json");
    let text = std::fs::read_to_string(&path).expect("read cases.json");
    let data: serde_json::Value = serde_json::from_str(&text).expect("parse cases.json");
    let cases = data["cases"].as_array().expect("cases");
    let mut failures = Vec::new();
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let (source, file) = match case.get("template_file").and_then(|f| f.as_str()) {
            Some(f) => (
                std::fs::read_to_string(root().join(f)).unwrap(),
                f.to_string(),
            ),
            None => (
                case["template"].as_str().unwrap().to_string(),
                format!("{name}.jinja"),
            ),
        };
        let empty = serde_json::Map::new();
        let kwargs = case["kwargs"].as_object().unwrap_or(&empty);
        let tools = case.get("tools").filter(|t| !t.is_null());
        let input = RenderInput {
            messages: &case["messages"],
            tools,
            add_generation_prompt: case["add_generation_prompt"].as_bool().unwrap_or(false),
            kwargs,
        };
        let result = ChatTemplate::new(&source, &file).and_then(|t| t.render(&input));
        match (case.get("expected"), case.get("error"), result) {
            (Some(expected), _, Ok(got)) => {
                if let Some(sample) = case.get("sample").and_then(|s| s.as_str()) {
                    let prefix = sample_prefix(&root().join(sample));
                    if prefix != got {
                        failures.push(format!(
                            "{name}: not the prefix of {sample}:\n{prefix:?}\n{got:?}"
                        ));
                    }
                }
                if expected.as_str() != Some(got.as_str()) {
                    failures.push(format!(
                        "{name}: output differs\n--- expected\n{}\n--- got\n{got}\n---",
                        expected.as_str().unwrap()
                    ));
                }
            }
            (Some(_), _, Err(e)) => failures.push(format!("{name}: unexpected error {e}")),
            (None, Some(err), Ok(got)) => {
                failures.push(format!("{name}: expected error {err}, got output {got:?}"))
            }
            (None, Some(err), Err(e)) => {
                let want_kind = err["kind"].as_str().unwrap();
                let want_line = err["line"].as_u64().map(|l| l as usize);
                if want_kind != kind_name(e.kind) {
                    failures.push(format!(
                        "{name}: expected a {want_kind} error, got {:?}: {e}",
                        e.kind
                    ));
                } else if want_line.is_some() && want_line != e.line {
                    failures.push(format!("{name}: expected line {want_line:?}, got {e}"));
                } else if e.kind == RenderErrorKind::Raised
                    && err["message"].as_str() != Some(&e.message)
                {
                    failures.push(format!(
                        "{name}: expected message {}, got {e}",
                        err["message"]
                    ));
                }
            }
            (None, None, _) => {
                failures.push(format!("{name}: case has neither expected nor error"))
            }
        }
    }
    let passed = cases.len() - failures.len();
    eprintln!("{passed}/{} reference cases pass", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
