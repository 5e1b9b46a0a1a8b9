//! Corpus mode against the reference: tests/data/corpus/<format>.jsonl.gz holds, for every
//! bundled format, records mutated from its samples (tools/corpus/make_corpus.py), each with the
//! reference's result under `reference` (transformers 5.24.0 `parse_response`: the message, or
//! `{"$error": ...}`). Every record's outcome must be the reference's (the same message, key
//! order included, or an error), and `rtbench corpus --json` must count what the reference
//! counts. Lines without a `reference` are the generator's malformed lines: each must be
//! reported and skipped.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use rtbench_engine::py::{DumpOptions, json_dumps, json_loads};
use rtbench_engine::template::source::load_file;
use rtbench_engine::value::Value;
use rtbench_tooling::corpus::{
    self, Context, Entries, FieldNames, Input, Location, Options, Status, read_record_at,
};
use rtbench_tooling::sample::read_sample;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Each format's corpus, decompressed into a scratch file: (format, file, its lines).
fn corpora(scratch: &Path) -> Vec<(String, PathBuf, Vec<String>)> {
    let dir = root().join("tests/data/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/data/corpus")
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".jsonl.gz"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "a corpus per bundled format");
    files
        .into_iter()
        .map(|gz| {
            let name = gz.file_name().unwrap().to_string_lossy().to_string();
            let format = name.trim_end_matches(".jsonl.gz").to_string();
            let mut text = String::new();
            flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
                .read_to_string(&mut text)
                .unwrap();
            let path = scratch.join(format!("{format}.jsonl"));
            std::fs::write(&path, &text).unwrap();
            let lines = text.lines().map(str::to_string).collect();
            (format, path, lines)
        })
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rtbench-corpus-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dump(v: &Value) -> String {
    json_dumps(v, &DumpOptions::reference_cli()).unwrap()
}

/// The reference's result of a line, when the line is a record.
fn reference_of(line: &str) -> Option<Value> {
    json_loads(line).ok()?.as_dict()?.get("reference").cloned()
}

fn is_error(v: &Value) -> bool {
    v.as_dict().is_some_and(|d| d.contains_key("$error"))
}

/// The counts the reference's results give: records, parsed, errors, differs, not records.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    records: i64,
    parsed: i64,
    errors: i64,
    differs: i64,
    input_errors: i64,
}

fn reference_counts(lines: &[String]) -> Counts {
    let mut c = Counts::default();
    for line in lines.iter().filter(|l| !l.trim().is_empty()) {
        c.records += 1;
        let Some(result) = reference_of(line) else {
            c.input_errors += 1;
            continue;
        };
        if is_error(&result) {
            c.errors += 1;
        } else {
            c.parsed += 1;
        }
        let record = json_loads(line).unwrap();
        if let Some(expected) = record.as_dict().unwrap().get("expected") {
            // Python's `!=`, as the reference would compare; an expected error's text, when
            // it gives one, must be the error's (`{"$error": true}` matches any).
            let error_text = |v: &Value| {
                v.as_dict()
                    .and_then(|d| d.get("$error"))
                    .and_then(Value::as_str)
                    .map(String::from)
            };
            let differ = match (is_error(expected), is_error(&result)) {
                (true, true) => {
                    error_text(expected).is_some_and(|w| Some(w) != error_text(&result))
                }
                (false, false) => !expected.py_eq(&result),
                _ => true,
            };
            c.differs += i64::from(differ);
        }
    }
    c
}

#[test]
fn every_record_gets_the_reference_result() {
    let dir = scratch("library");
    let mut total = 0;
    for (format, path, lines) in corpora(&dir) {
        let (template, _) = load_file(&root().join("samples").join(&format).join("template.json"))
            .expect("the format's template");
        let ctx = Context::new(template, root().join("samples").join(&format), None);
        let entries = Entries::new(vec![Input::Jsonl(path.clone())]);
        let mut seen = 0;
        let options = Options {
            chunk_sample: 0,
            batch: 97,
            threads: None,
        };
        corpus::run(
            entries,
            &ctx,
            &options,
            |o| {
                let Location::Line { line, offset, .. } = &o.location else {
                    panic!("a JSON Lines location")
                };
                let text = &lines[usize::try_from(*line).unwrap() - 1];
                seen += 1;
                // The offset reads the same record again.
                let again = read_record_at(&path, *offset, *line).unwrap();
                assert_eq!(again.location, o.location);
                let record = again.record(&FieldNames::default());
                assert_eq!(record.is_err(), matches!(o.status, Status::Input(_)));
                if let Ok(r) = record {
                    assert_eq!(r.id, o.id);
                }
                match (reference_of(text), &o.status) {
                    (None, Status::Input(_)) => {}
                    (Some(r), Status::Error(e)) if is_error(&r) => {
                        assert!(!e.message.is_empty());
                    }
                    (Some(r), Status::Parsed(m)) if !is_error(&r) => {
                        assert_eq!(
                            dump(&Value::Dict(m.clone())),
                            dump(&r),
                            "{format} line {line}"
                        );
                    }
                    (r, s) => panic!(
                        "{format} line {line}: the reference gives {:?}, rtbench {s:?}",
                        r.map(|r| dump(&r))
                    ),
                }
            },
            |_| {},
        )
        .unwrap();
        assert_eq!(seen, lines.iter().filter(|l| !l.trim().is_empty()).count());
        total += seen;
    }
    assert!(total >= 10_000, "{total} records");
    let _ = std::fs::remove_dir_all(&dir);
}

fn corpus_json(args: &[&str]) -> (Option<i32>, serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .arg("corpus")
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let json = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code(), json, stderr)
}

#[test]
fn the_command_counts_what_the_reference_counts() {
    let dir = scratch("cli");
    for (format, path, lines) in corpora(&dir) {
        let template = root().join("samples").join(&format);
        let (code, json, stderr) = corpus_json(&[
            "--json",
            "--quiet",
            "--chunk-sample",
            "3",
            "--template",
            template.to_str().unwrap(),
            path.to_str().unwrap(),
        ]);
        let want = reference_counts(&lines);
        let got = Counts {
            records: json["records"].as_i64().unwrap(),
            parsed: json["parsed"].as_i64().unwrap(),
            errors: json["errors"].as_i64().unwrap(),
            differs: json["differs"].as_i64().unwrap(),
            input_errors: json["input_errors"].as_i64().unwrap(),
        };
        assert_eq!(got, want, "{format}: {stderr}");
        assert!(json["fields"].is_object());
        assert_eq!(json["chunking"]["checked"].as_i64(), Some(3));
        // Any failing record (a malformed line, an unexpected error, a difference) exits 1.
        let fails = json["failures"].as_i64().unwrap();
        assert_eq!(code, Some(if fails > 0 { 1 } else { 0 }), "{format}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn failures_become_samples_and_are_never_overwritten() {
    let dir = scratch("failures");
    let (_, path, lines) = corpora(&dir)
        .into_iter()
        .find(|(f, ..)| f == "qwen3")
        .unwrap();
    let out = dir.join("failed");
    let template = root().join("samples/qwen3");
    let args = [
        "--json",
        "--quiet",
        "--chunk-sample",
        "0",
        "--write-failures",
        out.to_str().unwrap(),
        "--template",
        template.to_str().unwrap(),
        path.to_str().unwrap(),
    ];
    let (code, json, _) = corpus_json(&args);
    assert_eq!(code, Some(1));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    // Malformed lines have no sample; every other failure is written.
    let written = json["written"].as_i64().unwrap();
    assert_eq!(files.len() as i64, written);
    assert_eq!(
        written,
        json["failures"].as_i64().unwrap() - json["input_errors"].as_i64().unwrap()
    );
    // Each file holds its record's generation (the record's line is in the file's name).
    for f in files.iter().take(50) {
        let sample = read_sample(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let n: usize = name["record-".len()..]
            .split('-')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let record = json_loads(&lines[n - 1]).unwrap();
        let generation = record.as_dict().unwrap()["generation"].as_str().unwrap();
        let note = sample.note.clone().unwrap_or_default();
        if !note.contains("not exactly the record's") {
            assert_eq!(sample.generation, generation, "{name}");
        }
    }
    // A second run into the same folder leaves every file as it was, and says so (exit 2).
    let before: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    let (code, ..) = corpus_json(&args);
    assert_eq!(code, Some(2));
    let after: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
    assert_eq!(before, after);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn samples_folders_and_stdin_are_corpora_too() {
    // The bundled samples (conversations and token ids among them) all agree with their
    // expected messages, which the reference wrote.
    for format in ["qwen3", "smollm3", "glm-4.5", "deepseek-r1"] {
        let dir = root().join("samples").join(format);
        let (code, json, stderr) = corpus_json(&[
            "--json",
            "--quiet",
            "--chunk-sample",
            "2",
            "--template",
            dir.to_str().unwrap(),
            dir.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{format}: {stderr}");
        assert_eq!(json["differs"], 0, "{format}");
        assert_eq!(json["input_errors"], 0, "{format}");
        assert!(json["records"].as_i64().unwrap() >= 3);
    }
    // A conversation in a JSON Lines record is rendered by the folder's chat template.
    let sample = read_sample(&root().join("samples/qwen3/conversation-think.sample")).unwrap();
    let mut record = rtbench_engine::value::Dict::new();
    record.insert("messages", sample.model.messages.clone().unwrap());
    record.insert("generation", Value::from(sample.generation.as_str()));
    record.insert("expected", sample.expected.clone().unwrap());
    let dir = scratch("messages");
    let file = dir.join("conversation.jsonl");
    std::fs::write(&file, format!("{}\n", dump(&Value::Dict(record)))).unwrap();
    let qwen3 = root().join("samples/qwen3");
    let (code, json, stderr) = corpus_json(&[
        "--json",
        "--quiet",
        "--template",
        qwen3.to_str().unwrap(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        (json["parsed"].as_i64(), json["differs"].as_i64()),
        (Some(1), Some(0))
    );
    let _ = std::fs::remove_dir_all(&dir);
    let template = root().join("samples/smollm3");
    // Stdin, with renamed keys and a malformed line in the middle.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args([
            "corpus",
            "--json",
            "--quiet",
            "--generation-field",
            "out",
            "--prefix",
            "",
            "--template",
            template.to_str().unwrap(),
            "-",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(b"{\"out\": \"hi<|im_end|>\"}\n{oops\n\n{\"out\": \"<think>a</think>b\"}\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["records"], 3);
    assert_eq!(json["input_errors"], 1);
    assert_eq!(json["input_examples"][0]["record"], "<stdin>:2");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_record_too_long_for_the_chunking_check_is_counted_not_streamed() {
    // A record past a megabyte would be streamed dozens of times, some a character per feed
    // (a 50 MB record took 79 s and 3.3 GB): it is parsed, and counted as not checked.
    let dir = scratch("long-record");
    let long = "word ".repeat(250_000);
    let lines = [
        serde_json::json!({"prefix": "<|im_start|>assistant\n", "generation": format!("{long}<|im_end|>")}),
        serde_json::json!({"prefix": "<|im_start|>assistant\n", "generation": "short<|im_end|>"}),
    ];
    let path = dir.join("long.jsonl");
    std::fs::write(
        &path,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let template = root().join("samples").join("smollm3");
    let args = [
        "--template",
        template.to_str().unwrap(),
        path.to_str().unwrap(),
    ];
    let (code, json, stderr) = corpus_json(&[&["--json", "--quiet"][..], &args].concat());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(json["parsed"].as_i64(), Some(2));
    assert_eq!(json["chunking"]["checked"].as_i64(), Some(1));
    assert_eq!(json["chunking"]["skipped_long"].as_i64(), Some(1));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args([&["corpus"][..], &args].concat())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "chunking: 1 record over 1 MiB not checked (check one with `rtbench chunks`)"
        ),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
