//! The bundled sample library (`samples/`): every sample's expected message was produced by the
//! reference (tools/samples/bless_with_reference.py), so `rtbench test samples/` passing means the
//! engine agrees with the reference on every bundled format. Also checks that a sample whose
//! expected section was edited fails with a diff that names the changed key.
//!
//! `tests/it/cli.rs` covers `rtbench test --bless` on a scratch copy; these tests never bless.

use crate::scratch::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rtbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .output()
        .expect("rtbench runs")
}

fn samples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// The format folders of the library (each holds a template.json and its samples; the shared
/// tokenizer's folder is not one).
fn format_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(samples_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("tokenizer"))
        .collect();
    dirs.sort();
    dirs
}

fn sample_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sample"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_library_covers_the_bundled_formats() {
    let names: Vec<String> = format_dirs()
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for required in [
        "smollm3",
        "qwen3",
        "qwen3-coder",
        "gpt-oss",
        "command-a",
        "deepseek-r1",
        "gemma4",
        "glm-4.5",
        "llama3.2-pythonic",
        "mistral",
        "ernie-4.5",
        "kimi-k2",
        "deepseek-v3.1",
        "minimax-m2",
        "granite-3.3",
    ] {
        assert!(
            names.iter().any(|n| n == required),
            "no samples/{required}/ in {names:?}"
        );
    }
    for dir in format_dirs() {
        assert!(
            dir.join("template.json").is_file(),
            "{} has no template.json",
            dir.display()
        );
        let files = sample_files(&dir);
        assert!(
            files.len() >= 5,
            "{} has only {} samples",
            dir.display(),
            files.len()
        );
        for f in files {
            let s = rtbench_tooling::sample::read_sample(&f).unwrap();
            // The prefix is written, or rendered from the conversation, or decoded from ids.
            let prefix =
                s.prefix.is_some() || s.model.messages.is_some() || s.model.prefix_ids.is_some();
            assert!(
                s.note.is_some() && prefix && s.expected.is_some(),
                "{} lacks a note, prefix (or messages) or expected section",
                f.display()
            );
            assert_eq!(s.warnings, [], "{}", f.display());
        }
    }
}

#[test]
fn every_bundled_sample_matches_its_reference_message() {
    let dir = samples_dir();
    let o = rtbench(&["test", dir.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    let mut total = 0;
    for fmt in format_dirs() {
        for f in sample_files(&fmt) {
            total += 1;
            let line = format!("{} ... ok\n", f.display());
            assert!(out.contains(&line), "{} did not pass:\n{out}", f.display());
        }
    }
    assert!(
        out.contains(&format!(
            "{total} passed, 0 failed, 0 without expected message"
        )),
        "{out}"
    );
}

#[test]
fn an_edited_expected_section_fails_with_a_diff_naming_the_key() {
    let s = Scratch::new("broken");
    let dir = s.0.join("command-a");
    std::fs::create_dir_all(&dir).unwrap();
    for f in [
        "template.json",
        "thinking-and-parallel-actions.sample",
        "plain-response.sample",
    ] {
        std::fs::copy(samples_dir().join("command-a").join(f), dir.join(f)).unwrap();
    }
    let sample = dir.join("thinking-and-parallel-actions.sample");
    let text = std::fs::read_to_string(&sample).unwrap();
    // Edit only the expected section (the generation holds the same key as a string).
    let at = text
        .find("--- expected ---\n")
        .expect("an expected section");
    let (head, expected) = text.split_at(at);
    assert!(expected.contains("\"priority\": 1"), "{expected}");
    std::fs::write(
        &sample,
        format!(
            "{head}{}",
            expected.replacen("\"priority\": 1", "\"priority\": 4", 1)
        ),
    )
    .unwrap();

    let o = rtbench(&["test", dir.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("thinking-and-parallel-actions.sample ... FAILED"),
        "{out}"
    );
    assert!(
        out.contains("$.tool_calls[1].function.arguments.priority: expected 4, got 1"),
        "{out}"
    );
    assert!(out.contains("plain-response.sample ... ok"), "{out}");
    assert!(out.contains("1 passed, 1 failed"), "{out}");
}
