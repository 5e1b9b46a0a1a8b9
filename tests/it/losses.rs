//! Silent losses: each one the reference accepts without a word is reported on a real-looking
//! sample, located at the right line and column of the sample file, and a clean sample reports
//! nothing. `rtbench lint --deny-warnings` fails on them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rtbench_engine::audit::LossKind;
use rtbench_engine::template::Template;
use rtbench_engine::value::Value;
use rtbench_tooling::findings::sample_findings;
use rtbench_tooling::sample::parse_sample;

const CHATML: &str = r#"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "thinking": {"open": "<think>", "close": "</think>"},
    "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": true,
                   "transform": {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}},
    "content": {"close": "<|im_end|>"}
  }
}"#;

const PREFIX: &str = "--- prefix (ends with newline) ---\n<|im_start|>user\nWeather in Oslo?<|im_end|>\n<|im_start|>assistant\n";

/// (kind, line, column, message) of every finding of a sample file's text.
fn findings(template: &str, file: &str) -> Vec<(Option<LossKind>, usize, usize, String)> {
    let template = Template::from_json_str(template).unwrap();
    let sample = parse_sample(Path::new("s.sample"), file).unwrap();
    let (audit, found) = sample_findings(&template, None, &sample, "s.sample", file, None);
    assert!(audit.result.is_ok(), "{:?}", audit.result);
    found
        .into_iter()
        .map(|f| {
            let loc = f.diagnostic.location.clone().expect("located in the file");
            (f.kind, loc.line, loc.column, f.diagnostic.message)
        })
        .collect()
}

/// The 1-based (line, column) of the first occurrence of `needle` in `text`.
fn position(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).expect("needle in text");
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (
        text[..at].matches('\n').count() + 1,
        text[line_start..at].chars().count() + 1,
    )
}

#[test]
fn a_clean_sample_reports_nothing() {
    let file = format!(
        "{PREFIX}--- generation ---\n<think>Look it up.</think>\n<tool_call>\n{{\"name\": \"weather\", \"arguments\": {{\"city\": \"Oslo\"}}}}\n</tool_call><|im_end|>\n"
    );
    assert_eq!(findings(CHATML, &file), vec![]);
}

#[test]
fn text_before_a_tool_call_overwritten_by_text_after_it() {
    let file = format!(
        "{PREFIX}--- generation ---\nLet me check.\n<tool_call>\n{{\"name\": \"weather\", \"arguments\": {{}}}}\n</tool_call>\nDone.<|im_end|>\n"
    );
    let found = findings(CHATML, &file);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (kind, line, col, msg) = &found[0];
    assert_eq!(*kind, Some(LossKind::Overwritten));
    assert_eq!((*line, *col), position(&file, "Let me check."));
    assert_eq!(
        msg,
        "'content' is not repeating, so this value 'Let me check.' was overwritten by a later region: the message keeps 'Done.'"
    );
}

#[test]
fn a_trailing_newline_that_erases_the_answer() {
    let file = format!(
        "{PREFIX}--- generation (ends with newline) ---\n<think>Easy.</think>It is sunny.<|im_end|>\n"
    );
    let found = findings(CHATML, &file);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (kind, line, col, msg) = &found[0];
    assert_eq!(*kind, Some(LossKind::EmptyReplaced));
    // At the newline after the end-of-turn token.
    let (l, c) = position(&file, "sunny.<|im_end|>");
    assert_eq!((*line, *col), (l, c + "sunny.<|im_end|>".len()));
    assert!(
        msg.starts_with(
            "a whitespace-only region ('\\n') of 'content' replaced its value 'It is sunny.'"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("the message has no 'content'"), "{msg}");
}

#[test]
fn a_region_whose_close_never_came_unless_the_sample_says_truncated() {
    let text = "<think>Checking the forecast for Oslo tomorrow";
    let file = format!("{PREFIX}--- generation ---\n{text}\n");
    let found = findings(CHATML, &file);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (kind, line, col, msg) = &found[0];
    assert_eq!(*kind, Some(LossKind::Unclosed));
    assert_eq!((*line, *col), position(&file, "<think>"));
    assert_eq!(
        msg,
        "this 'thinking' region never closed: its close '</think>' never came, so it took everything to the end of the stream (ending 'recast for Oslo tomorrow')"
    );
    let truncated = file.replace("--- generation ---", "--- generation (truncated) ---");
    assert_eq!(findings(CHATML, &truncated), vec![]);
}

#[test]
fn text_that_went_to_no_field() {
    // No implicit field: text outside the channels is dropped.
    let template = r#"{"start_anchor": "<|start|>assistant", "fields": {
        "thinking": {"open": "<|channel|>analysis<|message|>", "close": "<|end|>"},
        "content": {"open": "<|channel|>final<|message|>", "close": "<|return|>"}}}"#;
    let file = "--- prefix ---\n<|start|>assistant\n--- generation ---\n<|channel|>analysis<|message|>Hm.<|end|><|start|>assistant Oops, stray words.<|channel|>final<|message|>Hi<|return|>\n";
    let found = findings(template, file);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (kind, line, col, msg) = &found[0];
    assert_eq!(*kind, Some(LossKind::Discarded));
    assert_eq!((*line, *col), position(file, "<|start|>assistant Oops"));
    assert!(
        msg.starts_with("'<|start|>assistant Oops, stray words.' went to no field"),
        "{msg}"
    );
    // Only the format's own tokens and role names between the channels: nothing to report.
    let quiet = file.replace(" Oops, stray words.", "");
    assert_eq!(findings(template, &quiet), vec![]);
}

#[test]
fn a_transform_that_leaves_out_a_capture_and_the_text() {
    let template = r#"{"start_anchor": "<|assistant|>", "fields": {
        "tool_calls": {"open_pattern": "<call id=(?P<id>\\d+) name=(?P<name>\\w+)>", "close": "</call>", "repeats": true,
                       "transform": {"function": {"name": "{name}"}}},
        "content": {}}}"#;
    let file = "--- prefix ---\n<|assistant|>\n--- generation ---\n<call id=7 name=lookup>{\"q\": \"Oslo\"}</call>\n";
    let found = findings(template, file);
    let got: Vec<(Option<LossKind>, (usize, usize))> =
        found.iter().map(|f| (f.0, (f.1, f.2))).collect();
    assert_eq!(
        got,
        [
            (Some(LossKind::Unused), position(file, "7 name")),
            (Some(LossKind::Unused), position(file, "{\"q\"")),
        ],
        "{found:#?}"
    );
    assert_eq!(
        found[0].3,
        "the capture 'id' = '7' of 'tool_calls' is not used by its transform, so it is not in the message"
    );
    assert!(
        found[1].3.contains("does not use {content}"),
        "{}",
        found[1].3
    );
}

#[test]
fn tool_coercion_that_changes_more_than_the_type() {
    let tools = r#"[{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {"days": {"type": "integer"}, "metres": {"type": "number"}}}}}]"#;
    let file = format!(
        "{PREFIX}--- generation ---\n<tool_call>\n{{\"name\": \"weather\", \"arguments\": {{\"days\": \"3\", \"metres\": \"1e3\"}}}}\n</tool_call><|im_end|>\n--- tools ---\n{tools}\n"
    );
    let found = findings(CHATML, &file);
    assert_eq!(found.len(), 1, "{found:#?}");
    let (kind, line, _, msg) = &found[0];
    assert_eq!(*kind, Some(LossKind::Coerced));
    assert_eq!(*line, position(&file, "<tool_call>").0);
    // "3" -> 3 says what the text says; "1e3" -> 1000 does not.
    assert_eq!(
        msg,
        "tool coercion changed function.arguments.metres of 'tool_calls' from '1e3' to 1000: the tool schema's type made it so"
    );
    // The message is the reference's.
    let template = Template::from_json_str(CHATML).unwrap();
    let sample = parse_sample(Path::new("s.sample"), &file).unwrap();
    let m = rtbench_engine::parse_response(
        &template,
        sample.prefix.as_deref(),
        &sample.generation,
        sample.tools.as_ref(),
    )
    .unwrap();
    let call = &m["tool_calls"].as_list().unwrap()[0];
    let metres = call.as_dict().and_then(|c| {
        c.get("function")?
            .as_dict()?
            .get("arguments")?
            .as_dict()?
            .get("metres")
    });
    assert_eq!(metres, Some(&Value::Int(1000)));
}

fn rtbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

#[test]
fn lint_with_samples_denies_losses_and_names_the_field() {
    let ok = rtbench(&[
        "lint",
        "--template",
        "samples/smollm3/template.json",
        "--deny-warnings",
        "samples/smollm3",
    ]);
    let out = String::from_utf8_lossy(&ok.stdout);
    // The bundled samples lose nothing; the folder's token-id sample is warned about on
    // purpose (its model spells <think> and </think> with ordinary tokens, defused by 5.25).
    assert_eq!(ok.status.code(), Some(1), "{out}");
    assert!(out.ends_with("and 10 samples: 2 warnings\n"), "{out}");
    assert_eq!(out.matches("warning: ").count(), 2, "{out}");
    assert_eq!(
        out.matches("warning: parsed from text, this '").count(),
        2,
        "{out}"
    );

    // The answer erased by the newline after <|im_end|>, as the sample once was.
    let dir = std::env::temp_dir().join(format!("rtbench-losses-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let original = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/smollm3/think-then-answer.sample"),
    )
    .unwrap();
    let old = original.replace(
        "--- generation ---",
        "--- generation (ends with newline) ---",
    );
    let path = dir.join("think-then-answer.sample");
    std::fs::write(&path, old).unwrap();
    let bad = rtbench(&[
        "lint",
        "--template",
        "samples/smollm3/template.json",
        "--deny-warnings",
        path.to_str().unwrap(),
    ]);
    let out = String::from_utf8_lossy(&bad.stdout);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(bad.status.code(), Some(1), "{out}");
    assert!(out.contains("the message has no 'content'"), "{out}");
    assert!(out.contains("think-then-answer.sample:14:99"), "{out}");
}
