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

// The reference version: `--reference`, `RTBENCH_REFERENCE`, the config file, and `all` for
// `lint` and `test`. The sample below depends on it: its tool's `order_id` allows a string or an
// integer and the model writes "42"; transformers 5.25.0 keeps the string (its expected
// section), 5.24.0 casts it to 42 (both recorded with the oracles by
// `tools/samples/bless_with_reference.py --check`, see the sample's note).

const VERSIONED: &str = "string-or-integer-argument.sample";

/// rtbench with no version chosen outside the arguments (no environment variable, and a
/// config file that does not exist unless `config` gives its text).
fn rtbench_with(s: &Scratch, args: &[&str], env: Option<&str>, config: Option<&str>) -> Output {
    let config_path = s.0.join("config.toml");
    match config {
        Some(text) => std::fs::write(&config_path, text).unwrap(),
        None => {
            let _ = std::fs::remove_file(&config_path);
        }
    }
    let mut c = Command::new(env!("CARGO_BIN_EXE_rtbench"));
    c.args(args)
        .env_remove("RTBENCH_REFERENCE")
        .env("RTBENCH_CONFIG", &config_path);
    if let Some(v) = env {
        c.env("RTBENCH_REFERENCE", v);
    }
    c.output().expect("rtbench runs")
}

/// A folder with the qwen3 template, the sample that depends on the version and one that does
/// not.
fn versioned_folder(s: &Scratch) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/qwen3");
    let dir = s.0.join("qwen3");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["template.json", VERSIONED, "one-tool-call.sample"] {
        std::fs::copy(from.join(f), dir.join(f)).unwrap();
    }
    dir
}

/// The order id of the parsed message (`"42"` or `42` as compact JSON).
fn order_id(o: &Output) -> String {
    let out = stdout(o);
    let at = out
        .find("\"order_id\":")
        .unwrap_or_else(|| panic!("no order_id in {out}{}", stderr(o)));
    out[at + "\"order_id\":".len()..]
        .split('}')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn reference_is_chosen_by_flag_before_or_after_the_command_then_env_then_config() {
    let s = Scratch::new("reference");
    let dir = versioned_folder(&s);
    let (t, sample) = (
        dir.to_string_lossy().into_owned(),
        dir.join(VERSIONED).to_string_lossy().into_owned(),
    );
    let parse = |extra: &[&str], env: Option<&str>, config: Option<&str>| {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["parse", "--template", &t, &sample]);
        let o = rtbench_with(&s, &args, env, config);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        order_id(&o)
    };
    // The newest version by default, as the sample's expected section.
    assert_eq!(parse(&[], None, None), "\"42\"");
    assert_eq!(parse(&["--reference", "5.24"], None, None), "42");
    assert_eq!(parse(&["--reference=5.24.0"], None, None), "42");
    // After the command too.
    let o = rtbench_with(
        &s,
        &["parse", "--template", &t, &sample, "--reference", "5.24"],
        None,
        None,
    );
    assert_eq!(order_id(&o), "42");
    // The environment, then the config file; the flag wins over both, the environment over
    // the config file.
    assert_eq!(parse(&[], Some("5.24"), None), "42");
    assert_eq!(parse(&[], None, Some("reference = \"5.24\"\n")), "42");
    assert_eq!(
        parse(&["--reference", "5.25"], Some("5.24"), None),
        "\"42\""
    );
    assert_eq!(
        parse(&[], Some("5.25"), Some("reference = \"5.24\"\n")),
        "\"42\""
    );
    // `rtbench test` follows it too.
    let d = dir.to_string_lossy().into_owned();
    let o = rtbench_with(&s, &["test", &d], None, None);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    let o = rtbench_with(&s, &["test", "--reference", "5.24", &d], None, None);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("$.tool_calls[0].function.arguments.order_id: expected '42', got 42"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn reference_mistakes_and_all_outside_lint_and_test_are_usage_errors() {
    let s = Scratch::new("reference-usage");
    let dir = versioned_folder(&s);
    let (t, sample) = (
        dir.to_string_lossy().into_owned(),
        dir.join(VERSIONED).to_string_lossy().into_owned(),
    );
    for args in [
        vec!["--reference", "all", "parse", "--template", &t, &sample],
        vec!["parse", "--template", &t, &sample, "--reference", "all"],
        vec!["check", "--template", &t, "--reference", "all"],
    ] {
        let o = rtbench_with(&s, &args, None, None);
        assert_eq!(code(&o), 2, "{args:?}");
        assert!(
            stderr(&o)
                .starts_with("error: --reference: `all` is for `rtbench lint` and `rtbench test`"),
            "{}",
            stderr(&o)
        );
    }
    let o = rtbench_with(&s, &["check", "--template", &t], Some("all"), None);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).starts_with("error: RTBENCH_REFERENCE=\"all\": `all` is for"));
    let o = rtbench_with(
        &s,
        &["check", "--template", &t, "--reference", "5.3"],
        None,
        None,
    );
    assert_eq!(code(&o), 2);
    assert_eq!(
        stderr(&o),
        "error: --reference: unknown reference version \"5.3\": rtbench supports 5.24 and 5.25\n"
    );
    let o = rtbench_with(
        &s,
        &["check", "--template", &t],
        None,
        Some("reference = \"4.0\"\n"),
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("config.toml:1:13: reference: unknown reference version \"4.0\""));
    // Blessing writes one version's results.
    let d = dir.to_string_lossy().into_owned();
    let o = rtbench_with(
        &s,
        &["test", "--reference", "all", "--bless", &d],
        None,
        None,
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("--bless writes one version's results"),
        "{}",
        stderr(&o)
    );
}

/// Line and column (1-based, in characters) of the first `needle` after `after` in `text`.
fn line_col_of(text: &str, after: &str, needle: &str) -> (usize, usize) {
    let at = text.find(after).unwrap() + text[text.find(after).unwrap()..].find(needle).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[start..at].chars().count() + 1)
}

#[test]
fn test_with_reference_all_gives_the_verdict_under_each_and_lists_what_differs() {
    let s = Scratch::new("test-all");
    let dir = versioned_folder(&s);
    let d = dir.to_string_lossy().into_owned();
    let o = rtbench_with(&s, &["test", "--reference", "all", &d], None, None);
    let out = stdout(&o);
    // The expected section is 5.25's result: under 5.24 the sample fails.
    assert_eq!(code(&o), 1, "{out}");
    let versioned = dir.join(VERSIONED).display().to_string();
    let agreeing = dir.join("one-tool-call.sample").display().to_string();
    assert!(out.contains(&format!("{agreeing} ... ok\n")), "{out}");
    assert!(
        out.contains(&format!(
            "{versioned} ... 5.24 FAILED · 5.25 ok\n  \
             5.24: $.tool_calls[0].function.arguments.order_id: expected '42', got 42\n"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "samples whose result depends on the reference version (5.24, 5.25):\n  \
             {versioned}: under 5.24 this sample parses differently: \
             $.tool_calls[0].function.arguments.order_id: '42' under 5.25, 42 under 5.24\n"
        )),
        "{out}"
    );
    assert!(
        out.ends_with(
            "5.24: 1 passed, 1 failed, 0 without expected message; \
             5.25: 2 passed, 0 failed, 0 without expected message\n"
        ),
        "{out}"
    );
    // Without the sample that depends on the version, every version passes.
    std::fs::remove_file(dir.join(VERSIONED)).unwrap();
    let o = rtbench_with(&s, &["test", "--reference", "all", &d], None, None);
    assert_eq!(code(&o), 0, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("no sample's result depends on the reference version (5.24, 5.25)"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn lint_with_reference_all_warns_where_a_sample_parses_differently() {
    let s = Scratch::new("lint-all");
    let dir = versioned_folder(&s);
    let d = dir.to_string_lossy().into_owned();
    let o = rtbench_with(&s, &["lint", "--template", &d, &d], None, None);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(!stdout(&o).contains("parses differently"), "{}", stdout(&o));
    let o = rtbench_with(
        &s,
        &["lint", "--reference", "all", "--template", &d, &d],
        None,
        None,
    );
    let out = stdout(&o);
    assert_eq!(code(&o), 0, "{out}{}", stderr(&o));
    // Located at the call's close, the first stream event that differs.
    let versioned = dir.join(VERSIONED);
    let text = std::fs::read_to_string(&versioned).unwrap();
    let (line, col) = line_col_of(&text, "--- generation ---", "</tool_call>");
    assert!(
        out.contains(
            "warning: under 5.24 this sample parses differently: \
             $.tool_calls[0].function.arguments.order_id: '42' under 5.25, 42 under 5.24"
        ),
        "{out}"
    );
    assert!(
        out.contains(&format!("{}:{line}:{col}", versioned.display())),
        "{out}"
    );
    assert!(
        out.contains("reference versions 5.24, 5.25: 1 of 2 samples parses differently"),
        "{out}"
    );
    assert!(out.ends_with(": 1 warning\n"), "{out}");
    let o = rtbench_with(
        &s,
        &[
            "lint",
            "--template",
            &d,
            &d,
            "--deny-warnings",
            "--reference",
            "all",
        ],
        None,
        None,
    );
    assert_eq!(code(&o), 1);
}
