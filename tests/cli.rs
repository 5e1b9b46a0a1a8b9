//! The command-line contract scripts depend on: flags, stdout, and exit codes 0 (success),
//! 1 (template or parse error), 2 (usage or I/O error); and `rtbench test` on real files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rtbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .output()
        .expect("rtbench runs")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exit code")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch folder that is removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("rtbench-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const TEMPLATE: &str = r#"{"start_anchor": "<|im_start|>assistant\n", "defaults": {"role": "assistant"},
  "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "content": {"close": "<|im_end|>"}}}"#;

#[test]
fn parse_prints_the_message_and_needs_a_prefix() {
    let s = Scratch::new("parse");
    let t = s.file("t.json", TEMPLATE);
    let out = s.file("out.txt", "<think>hm</think>Hi!<|im_end|>");
    let o = rtbench(&["parse", "--template", &t, "--prefix", "", &out]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "{\"role\":\"assistant\",\"thinking\":\"hm\",\"content\":\"Hi!\"}\n"
    );
    let pretty = rtbench(&["parse", "--template", &t, "--prefix", "", "--pretty", &out]);
    assert!(stdout(&pretty).starts_with("{\n  \"role\": \"assistant\",\n"));
    // No prefix option at all is a parse error (exit 1), not a usage error.
    let o = rtbench(&["parse", "--template", &t, &out]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).starts_with("error: a prefix is required"));
    let p = s.file(
        "prefix.txt",
        "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>",
    );
    let out2 = s.file("out2.txt", "deep</think>ok<|im_end|>");
    let o = rtbench(&["parse", "--template", &t, "--prefix-file", &p, &out2]);
    assert_eq!(
        stdout(&o),
        "{\"role\":\"assistant\",\"thinking\":\"deep\",\"content\":\"ok\"}\n"
    );
}

#[test]
fn exit_codes_separate_bad_input_from_bad_usage() {
    let s = Scratch::new("codes");
    let t = s.file("t.json", TEMPLATE);
    let out = s.file("out.txt", "x");
    let missing = s.0.join("nope.txt").to_string_lossy().into_owned();
    assert_eq!(
        code(&rtbench(&[
            "parse",
            "--template",
            &t,
            "--prefix",
            "",
            &missing
        ])),
        2
    );
    assert_eq!(
        code(&rtbench(&[
            "parse",
            "--template",
            &missing,
            "--prefix",
            "",
            &out
        ])),
        2
    );
    assert_eq!(
        code(&rtbench(&["parse", "--template", &t, "--bogus", &out])),
        2
    );
    assert_eq!(
        code(&rtbench(&[
            "parse",
            "--template",
            &t,
            "--prefix",
            "",
            "--prefix-file",
            &out,
            &out
        ])),
        2
    );
    assert_eq!(
        code(&rtbench(&[
            "stream",
            "--template",
            &t,
            "--prefix",
            "",
            "--chunks",
            "0",
            &out
        ])),
        2
    );
    let bad = s.file("bad.json", "{\"fields\": {}}");
    let o = rtbench(&["parse", "--template", &bad, "--prefix", "", &out]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("bad.json:1:"), "{}", stderr(&o));
    let json_bug = s.file("b.json", r#"{"start_anchor": "<s>", "fields": {"c": {"open": "<c>", "close": "</c>", "content": "json"}}}"#);
    let body = s.file("body.txt", "<c>{oops</c>");
    assert_eq!(
        code(&rtbench(&[
            "parse",
            "--template",
            &json_bug,
            "--prefix",
            "",
            &body
        ])),
        1
    );
}

#[test]
fn check_accepts_tokenizer_configs_and_points_at_errors() {
    let s = Scratch::new("check");
    let ok = s.file(
        "tokenizer_config.json",
        &format!("{{\"tokenizer_class\": \"X\", \"response_template\": {TEMPLATE}}}"),
    );
    let o = rtbench(&["check", "--template", &ok]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let bad = s.file(
        "bad.json",
        "{\n  \"start_anchor\": \"<s>\",\n  \"fields\": {\"x\": {\"open_pattern\": \"(<x\"}}\n}",
    );
    let o = rtbench(&["check", "--template", &bad]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(
        err.contains("invalid open_pattern regex: missing )"),
        "{err}"
    );
    assert!(err.contains("bad.json:3:"), "{err}");
    assert!(
        err.contains(" |   \"fields\": {\"x\": {\"open_pattern\": \"(<x\"}}"),
        "{err}"
    );
}

#[test]
fn stream_prints_one_line_per_feed() {
    let s = Scratch::new("stream");
    let t = s.file("t.json", TEMPLATE);
    let out = s.file("out.txt", "Hi</think>");
    let o = rtbench(&[
        "stream",
        "--template",
        &t,
        "--prefix",
        "",
        "--chunks",
        "2,100",
        &out,
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "{\"initial_events\":[]}");
    assert_eq!(
        lines[1],
        "{\"chunk\":\"Hi\",\"events\":[{\"type\":\"region_open\",\"field\":\"content\"},{\"type\":\"region_chunk\",\"field\":\"content\",\"text\":\"Hi\",\"dirty\":false}]}"
    );
    assert_eq!(lines.len(), 4);
    assert!(lines[3].starts_with("{\"final_events\":[{\"type\":\"region_close\""));
    let o = rtbench(&[
        "stream",
        "--template",
        &t,
        "--prefix",
        "",
        "--chunks",
        "3",
        "--spans",
        &out,
    ]);
    let first = stdout(&o).lines().nth(1).unwrap().to_string();
    assert!(
        first.contains("\"span\":{\"bytes\":[0,0],\"chars\":[0,0]}"),
        "{first}"
    );
    assert!(
        first.contains("\"held\":{\"bytes\":[2,3],\"chars\":[2,3]}"),
        "{first}"
    );
}

/// Copies the bundled samples into a scratch folder.
fn copy_samples(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/smollm3");
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn test_command_blesses_then_catches_a_broken_sample_with_a_diff() {
    let s = Scratch::new("test");
    let dir = s.0.join("smollm3");
    copy_samples(&dir);
    let d = dir.to_string_lossy().into_owned();
    let o = rtbench(&["test", &d, "--bless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let o = rtbench(&["test", &d]);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(stdout(&o).contains("passed, 0 failed"));
    let sample = dir.join("weather-tool-call.sample");
    let text = std::fs::read_to_string(&sample).unwrap();
    std::fs::write(
        &sample,
        text.replacen("\"city\": \"Paris\"", "\"city\": \"Lyon\"", 1),
    )
    .unwrap();
    let o = rtbench(&["test", &d]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert!(out.contains("weather-tool-call.sample ... FAILED"), "{out}");
    assert!(
        out.contains("$.tool_calls[0].function.arguments.city: expected 'Paris', got 'Lyon'"),
        "{out}"
    );
}

/// Runs rtbench with its stderr a pipe nobody reads (`rtbench ... 2>&1 | head` once head has
/// gone): its exit code.
fn code_with_stderr_closed(args: &[&str]) -> Option<i32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rtbench runs");
    drop(child.stderr.take());
    child.wait().expect("rtbench ends").code()
}

#[test]
fn a_closed_stderr_keeps_the_exit_code_instead_of_a_panic() {
    let s = Scratch::new("closed-stderr");
    let corpus = s.file("logs.jsonl", "{\"generation\": 5}\nnot json\n");
    let sample = s.file("a.txt", "<think>a</think>b");
    let qwen3 = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/qwen3");
    let qwen3 = qwen3.to_str().unwrap();
    // The final error line and, with progress on, the progress lines.
    assert_eq!(
        code_with_stderr_closed(&["corpus", "--template", qwen3, &corpus]),
        Some(1)
    );
    let bad = s.file("bad.json", "{\"fields\": ");
    assert_eq!(
        code_with_stderr_closed(&["parse", "--template", &bad, "--prefix", "", &sample]),
        Some(1)
    );
}
