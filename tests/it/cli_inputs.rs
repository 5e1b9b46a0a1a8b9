//! The headless commands take what the workbench takes: a template folder, `.sample` files and
//! folders of samples as the generation, and `rtbench test --bless` writing samples safely.
//! Every check compares with the samples' committed expected sections.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rtbench_engine::py;
use rtbench_engine::value::Value;
use rtbench_tooling::diff::diff;
use rtbench_tooling::sample::read_sample;

fn rtbench_in(dir: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rtbench"));
    cmd.args(args);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    cmd.output().expect("rtbench runs")
}

fn rtbench(args: &[&str]) -> Output {
    rtbench_in(None, args)
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

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn smollm3() -> String {
    root()
        .join("samples/smollm3")
        .to_string_lossy()
        .into_owned()
}

const WEATHER: &str = "samples/smollm3/weather-tool-call.sample";

fn weather() -> String {
    root().join(WEATHER).to_string_lossy().into_owned()
}

/// The committed expected message of a sample.
fn expected(path: &Path) -> Value {
    read_sample(path)
        .unwrap()
        .expected
        .expect("the sample has an expected section")
}

fn assert_same(expected: &Value, got: &Value, what: &str) {
    let d = diff(expected, got);
    assert!(d.is_empty(), "{what}: {d:?}");
}

/// A scratch folder that is removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("rtbench-cli-inputs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }

    /// A copy of samples/smollm3 in `name`.
    fn smollm3(&self, name: &str) -> PathBuf {
        let to = self.0.join(name);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(root().join("samples/smollm3")).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
        }
        to
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn parse_of_a_sample_with_a_template_folder_prints_its_expected_message() {
    let o = rtbench(&["parse", "--template", &smollm3(), &weather()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let got = py::json_loads(stdout(&o).trim_end()).unwrap();
    assert_same(&expected(&root().join(WEATHER)), &got, "parse");
    // The same with the template file named.
    let t = root().join("samples/smollm3/template.json");
    let o = rtbench(&["parse", "--template", t.to_str().unwrap(), &weather()]);
    assert_eq!(py::json_loads(stdout(&o).trim_end()).unwrap(), got);
}

#[test]
fn stream_chunks_and_explain_take_a_sample() {
    let want = expected(&root().join(WEATHER));
    for sizes in ["1", "3,7", "1000"] {
        let o = rtbench(&[
            "stream",
            "--template",
            &smollm3(),
            "--chunks",
            sizes,
            &weather(),
        ]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let out = stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("{\"initial_events\":"), "{}", lines[0]);
        let last: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
        assert!(last.get("final_events").is_some());
        let message = py::json_loads(&last["message"].to_string()).unwrap();
        assert_same(&want, &message, "stream");
    }
    let o = rtbench(&["chunks", "--template", &smollm3(), &weather()]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("chunkings agree"), "{}", stdout(&o));
    let o = rtbench(&["explain", "--template", &smollm3(), &weather()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let (template, _) =
        rtbench_engine::template::source::load_file(&root().join("samples/smollm3/template.json"))
            .unwrap();
    let out = stdout(&o);
    for f in template.fields() {
        assert!(out.contains(&format!("field '{}'", f.name)), "{out}");
    }
}

#[test]
fn command_line_prefix_and_tools_override_the_samples() {
    let s = Scratch::new("override");
    // Without the sample's tools, "days": "1" stays a string.
    let tools = s.file("tools.json", "[]");
    let o = rtbench(&[
        "parse",
        "--template",
        &smollm3(),
        "--tools",
        &tools,
        &weather(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("\"days\":\"1\""), "{}", stdout(&o));
    // `--prefix ''` replaces the sample's prefix (the message still parses).
    let o = rtbench(&[
        "parse",
        "--template",
        &smollm3(),
        "--prefix",
        "",
        &weather(),
    ]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("\"thinking\""), "{}", stdout(&o));
}

#[test]
fn a_plain_text_generation_still_needs_a_prefix_and_a_sample_without_one_does_not() {
    let s = Scratch::new("prefix");
    let txt = s.file("gen.txt", "<think>hm</think>Hi!<|im_end|>");
    let o = rtbench(&["parse", "--template", &smollm3(), &txt]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).starts_with("error: a prefix is required"));
    let sample = s.file(
        "bare.sample",
        "--- generation ---\n<think>hm</think>Hi!<|im_end|>\n",
    );
    let o = rtbench(&["parse", "--template", &smollm3(), &sample]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(stderr(&o).contains("no prefix section"), "{}", stderr(&o));
    let got = py::json_loads(stdout(&o).trim_end()).unwrap();
    let want =
        py::json_loads(r#"{"role": "assistant", "thinking": "hm", "content": "Hi!"}"#).unwrap();
    assert_same(&want, &got, "bare sample");
    // A malformed sample is an input error (exit 1) that names its line.
    let bad = s.file("bad.sample", "--- generation ---\nx\n--- tools ---\n[1,]\n");
    let o = rtbench(&["parse", "--template", &smollm3(), &bad]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("bad.sample:4:"), "{}", stderr(&o));
}

#[test]
fn a_template_folder_without_a_template_is_a_usage_error() {
    let s = Scratch::new("notemplate");
    let dir = s.0.to_string_lossy().into_owned();
    for args in [
        vec!["parse", "--template", &dir, "--prefix", "", WEATHER],
        vec!["check", "--template", &dir],
        vec!["lint", "--template", &dir],
        vec!["test", "--template", &dir],
    ] {
        let o = rtbench_in(Some(&root()), &args);
        assert_eq!(code(&o), 2, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("is a folder with no template.json or tokenizer_config.json"),
            "{}",
            stderr(&o)
        );
    }
    let o = rtbench(&["check", "--template", &smollm3()]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(
        stdout(&o).contains("template.json: valid"),
        "{}",
        stdout(&o)
    );
}

/// The JSON lines of an output, each checked to be valid JSON with a path.
fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert!(v["path"].is_string(), "{l}");
            v
        })
        .collect()
}

#[test]
fn a_folder_of_samples_gives_one_json_line_per_sample() {
    let dir = smollm3();
    let files = rtbench_tooling::sample::expand(Path::new(&dir)).unwrap();
    let o = rtbench(&["parse", "--template", &dir, &dir]);
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), files.len());
    let mut errors = 0;
    for (line, file) in lines.iter().zip(&files) {
        assert_eq!(line["path"], file.display().to_string());
        let sample = read_sample(file).unwrap();
        if sample.expects_error() {
            errors += 1;
            assert!(line["error"].is_string(), "{line}");
            continue;
        }
        let got = py::json_loads(&line["message"].to_string()).unwrap();
        assert_same(
            sample.expected.as_ref().unwrap(),
            &got,
            &file.display().to_string(),
        );
    }
    // A sample that fails to parse makes the command fail, after every line is printed.
    assert_eq!(code(&o), if errors > 0 { 1 } else { 0 }, "{}", stderr(&o));
    assert!(
        errors == 0 || stderr(&o).contains(&format!("{errors} of {} samples failed", files.len()))
    );

    let o = rtbench(&["stream", "--template", &dir, "--chunks", "5", &dir]);
    let lines = json_lines(&stdout(&o));
    assert_eq!(lines.len(), files.len());
    for (line, file) in lines.iter().zip(&files) {
        let sample = read_sample(file).unwrap();
        let stream = line["stream"].as_array().unwrap();
        assert!(stream[0].get("initial_events").is_some(), "{line}");
        if sample.expects_error() {
            assert!(line["error"].is_string(), "{line}");
            continue;
        }
        let last = stream.last().unwrap();
        let got = py::json_loads(&last["message"].to_string()).unwrap();
        assert_same(
            sample.expected.as_ref().unwrap(),
            &got,
            &file.display().to_string(),
        );
    }

    let o = rtbench(&["explain", "--template", &dir, &dir]);
    for line in json_lines(&stdout(&o)) {
        if line.get("error").is_none() {
            assert!(
                line["lines"][0].as_str().unwrap().starts_with("field '"),
                "{line}"
            );
        }
    }
    let o = rtbench(&[
        "chunks",
        "--template",
        &dir,
        "--max",
        "4",
        "--random",
        "1",
        &dir,
    ]);
    for line in json_lines(&stdout(&o)) {
        assert!(
            line["agrees"].is_boolean() || line["error"].is_string(),
            "{line}"
        );
    }
    // Pretty output would break the lines.
    let o = rtbench(&["parse", "--template", &dir, "--pretty", &dir]);
    assert_eq!(code(&o), 2);
    // An empty folder has nothing to run on.
    let s = Scratch::new("emptyfolder");
    let empty = s.0.to_string_lossy().into_owned();
    let o = rtbench(&["parse", "--template", &dir, &empty]);
    assert_eq!(code(&o), 2, "{}", stderr(&o));
}

#[test]
fn bless_writes_and_says_what_changed_and_dry_run_writes_nothing() {
    let s = Scratch::new("bless");
    let dir = s.smollm3("smollm3");
    let sample = dir.join("weather-tool-call.sample");
    let original = std::fs::read_to_string(&sample).unwrap();
    // Change the expected section only (the generation also says Paris).
    let at = original.find("--- expected ---").unwrap();
    let broken = format!(
        "{}{}",
        &original[..at],
        original[at..].replacen("\"city\": \"Paris\"", "\"city\": \"Lyon\"", 1)
    );
    std::fs::write(&sample, &broken).unwrap();
    let d = dir.to_string_lossy().into_owned();

    let o = rtbench(&["test", &d, "--bless", "--dry-run"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("weather-tool-call.sample ... would bless"),
        "{out}"
    );
    assert!(
        out.contains("$.tool_calls[0].function.arguments.city: expected 'Lyon', got 'Paris'"),
        "{out}"
    );
    assert!(out.contains("dry run: nothing written"), "{out}");
    assert_eq!(std::fs::read_to_string(&sample).unwrap(), broken);

    let o = rtbench(&["test", &d, "--bless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("weather-tool-call.sample ... blessed: expected section changed"),
        "{out}"
    );
    assert!(out.contains("expected 'Lyon', got 'Paris'"), "{out}");
    assert_eq!(std::fs::read_to_string(&sample).unwrap(), original);
    // No temporary file is left behind.
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.starts_with('.'), "{name}");
    }

    // A sample without an expected section gets one, and says so.
    let cut = original[..original.find("--- expected ---").unwrap()].to_string();
    std::fs::write(&sample, &cut).unwrap();
    let o = rtbench(&["test", &d, "--bless"]);
    assert!(stdout(&o).contains("weather-tool-call.sample ... blessed: new expected section"));
    assert_same(
        &expected(&root().join(WEATHER)),
        &expected(&sample),
        "blessed",
    );

    // --dry-run needs --bless.
    assert_eq!(code(&rtbench(&["test", &d, "--dry-run"])), 2);
}

#[test]
fn bless_keeps_crlf_line_endings() {
    let s = Scratch::new("crlf");
    let dir = s.smollm3("smollm3");
    let sample = dir.join("weather-tool-call.sample");
    let original = std::fs::read_to_string(&sample).unwrap();
    let cut = &original[..original.find("--- expected ---").unwrap()];
    let crlf = cut.replace('\n', "\r\n");
    std::fs::write(&sample, &crlf).unwrap();
    let o = rtbench(&["test", sample.to_str().unwrap(), "--bless"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    let text = std::fs::read_to_string(&sample).unwrap();
    assert!(text.starts_with(&crlf), "the rest of the file is unchanged");
    assert!(text.len() > crlf.len());
    assert!(
        !text.replace("\r\n", "").contains('\n'),
        "a bare LF: {text:?}"
    );
    // The blessed section is the message of the CRLF generation: the sample passes.
    let o = rtbench(&["test", sample.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("1 passed, 0 failed"), "{}", stdout(&o));
    // Blessing again changes nothing.
    let o = rtbench(&["test", sample.to_str().unwrap(), "--bless"]);
    assert!(stdout(&o).contains("ok (unchanged)"), "{}", stdout(&o));
    assert_eq!(std::fs::read_to_string(&sample).unwrap(), text);
}

#[test]
fn test_without_paths_uses_the_template_folder_or_the_current_folder() {
    let s = Scratch::new("testpaths");
    let dir = s.smollm3("smollm3");
    let n = rtbench_tooling::sample::expand(&dir).unwrap().len();
    let summary = format!("{n} passed, 0 failed");
    let o = rtbench(&["test", "--template", dir.to_str().unwrap()]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains(&summary), "{}", stdout(&o));
    let t = dir.join("template.json");
    let o = rtbench(&["test", "--template", t.to_str().unwrap()]);
    assert!(stdout(&o).contains(&summary), "{}", stdout(&o));
    // In the samples' folder.
    let o = rtbench_in(Some(&dir), &["test"]);
    assert_eq!(code(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains(&summary), "{}", stdout(&o));
    // Above it, with no samples/ folder: the sub-folders.
    let o = rtbench_in(Some(&s.0), &["test"]);
    assert!(stdout(&o).contains(&summary), "{}", stdout(&o));
    // A folder holding samples/ (like the repository): samples/, as before.
    let repo = s.0.join("repo");
    std::fs::create_dir_all(repo.join("samples")).unwrap();
    s.smollm3("repo/samples/smollm3");
    std::fs::create_dir_all(repo.join("notes")).unwrap();
    s.file("repo/notes/other.sample", "");
    let o = rtbench_in(Some(&repo), &["test"]);
    assert!(stdout(&o).contains(&summary), "{}", stdout(&o));
    assert!(!stdout(&o).contains("other.sample"), "{}", stdout(&o));
}

#[test]
fn tools_files_are_checked_with_their_position() {
    let s = Scratch::new("tools");
    let run = |text: &str| {
        let f = s.file("tools.json", text);
        let o = rtbench(&["parse", "--template", &smollm3(), "--tools", &f, &weather()]);
        (code(&o), stderr(&o), stdout(&o))
    };
    // The message without tools: what the reference gives for tools it ignores.
    let (_, _, plain) = run("[]");
    // Shapes the reference reads past are warnings at their place; the parse goes on.
    let (c, e, out) = run("{\"type\": \"function\", \"function\": {\"name\": \"f\"}}");
    assert_eq!((c, &out), (0, &plain), "{e}");
    assert!(
        e.contains("warning: tools file ")
            && e.contains("tools.json:1:1: expected a list of tools, got an object"),
        "{e}"
    );
    let (c, e, _) = run("[\n  {\"function\": {\"name\": \"f\"}},\n  {\"type\": \"function\"}\n]");
    assert_eq!(c, 0, "{e}");
    assert!(
        e.contains("tools.json:3:3: tool 2 has no `function` object"),
        "{e}"
    );
    let (c, e, _) = run("[{\"function\": {\"name\": \"f\", \"parameters\": \"x\"}}]");
    assert_eq!(c, 0, "{e}");
    assert!(
        e.contains("tools.json:1:43: tool 1 ('f'): `parameters` is a string"),
        "{e}"
    );
    for ignored in ["[1, \"x\", null]", "\"tools\"", "[{\"function\": \"f\"}]"] {
        let (c, e, out) = run(ignored);
        assert_eq!((c, &out), (0, &plain), "{ignored}: {e}");
        assert!(e.contains("warning: tools file "), "{ignored}: {e}");
    }
    // Not JSON is an error.
    let (c, e, _) = run("[\n  {\"function\": {\"name\": \"f\",}}\n]");
    assert_eq!(c, 1);
    assert!(e.contains("tools.json:2:"), "{e}");
    assert!(e.contains("invalid JSON"), "{e}");
    // What the reference raises on stays an error, with its text.
    let (c, e, _) = run("3");
    assert_eq!(c, 1);
    assert!(
        e.contains("error: TypeError: 'int' object is not iterable"),
        "{e}"
    );
    // What the reference reads is accepted without a word: flat tools, tools without
    // parameters, null.
    for ok in [
        "null",
        "[]",
        "[{\"name\": \"get_weather\", \"parameters\": {}}]",
    ] {
        let (c, e, _) = run(ok);
        assert_eq!(c, 0, "{ok}: {e}");
        assert!(!e.contains("warning"), "{ok}: {e}");
    }
    // A missing tools file is a usage error.
    let missing = s.0.join("nope.json").to_string_lossy().into_owned();
    let o = rtbench(&[
        "parse",
        "--template",
        &smollm3(),
        "--tools",
        &missing,
        &weather(),
    ]);
    assert_eq!(code(&o), 2);
}

#[test]
fn sizes_that_cannot_be_run_are_cut_or_refused_and_devices_are_not_read() {
    let sample = "samples/smollm3/weather-tool-call.sample";
    // A size past the generation's length is the one-shot parse: N is cut to the length.
    let out = rtbench(&[
        "chunks",
        "--template",
        "samples/smollm3",
        "--max",
        "18446744073709551615",
        sample,
    ]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    let cps = rtbench_tooling::sample::read_sample(&root().join(sample))
        .unwrap()
        .generation
        .chars()
        .count();
    assert!(report.contains(&format!("sizes 1-{cps};")), "{report}");
    // Too many random chunkings is a usage error.
    let out = rtbench(&[
        "chunks",
        "--template",
        "samples/smollm3",
        "--random",
        "18446744073709551615",
        sample,
    ]);
    assert_eq!(out.status.code(), Some(2));
    // A device never ends: refused before reading.
    let out = rtbench(&[
        "parse",
        "--template",
        "samples/smollm3",
        "--prefix",
        "",
        "/dev/zero",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a device"));
}

#[test]
fn test_does_not_follow_folder_links() {
    let dir = std::env::temp_dir().join(format!("rtbench-loop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["template.json", "weather-tool-call.sample"] {
        std::fs::copy(root().join("samples/smollm3").join(f), dir.join(f)).unwrap();
    }
    std::os::unix::fs::symlink(".", dir.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("up")).unwrap();
    let out = rtbench(&["test", &dir.display().to_string()]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains("1 passed, 0 failed"),
        "the sample once: {report}"
    );
}
