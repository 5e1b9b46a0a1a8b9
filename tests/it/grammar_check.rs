//! `rtbench grammar --check`: every bundled format's grammar agrees with its parser (its
//! samples accepted, seeded random walks parsed clean with valid tool calls), a disagreement is
//! shown with its shrunk text and fails the command, and the serving engines' own compilers
//! agreed with rtbench on the committed outputs (`tools/grammar/check_compilers.py`, results
//! in `tests/data/grammar/compilers.json`).

use std::path::PathBuf;

use super::grammar::{formats, root, rtbench};

/// The number in `line` after `before` (`samples: 7 read clean`).
fn count_after(line: &str, before: &str) -> usize {
    line.split(before)
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count after {before:?} in {line:?}"))
}

#[test]
fn every_bundled_format_agrees_with_its_grammar() {
    // A few walks per format here (a debug build); `bench/grammar.sh` runs 500 in release.
    for f in formats() {
        let dir = format!("samples/{f}");
        let out = rtbench(&["grammar", "--template", &dir, "--check", "--walks", "25"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Every bundled template is expressed exactly (granite-3.3's lookahead included).
        assert!(
            !stderr.contains("warning: the grammar cannot express"),
            "{f}: {stderr}"
        );
        assert!(
            out.status.success() && stdout.ends_with("the grammar and the parser agree\n"),
            "{f}: exit {:?}\n{stdout}{stderr}",
            out.status.code(),
        );
        let samples = stdout.lines().find(|l| l.starts_with("samples: ")).unwrap();
        let clean = count_after(samples, "samples: ");
        assert!(clean >= 2, "{f}: {samples}");
        assert_eq!(count_after(samples, "parser, "), clean, "{f}: {samples}");
        let walks = stdout.lines().find(|l| l.starts_with("walks: ")).unwrap();
        let finished = count_after(walks, "walks: ");
        // Walks past 2 KiB are abandoned (free text can run long): most finish, about three
        // in four of minimax-m2's.
        assert!(finished >= 10, "{f}: {walks}");
        assert_eq!(count_after(walks, "), "), finished, "{f}: {walks}");
    }
}

#[test]
fn minimax_m2_walks_reach_tool_calls() {
    // Its tool calls open with `<invoke name="f">`, one literal with a space inside, and its
    // free text ends at one of a few delimiters among many parameter tags: walks must write
    // both whole to reach the tool calls the schema half of the check validates.
    let out = rtbench(&[
        "grammar",
        "--template",
        "samples/minimax-m2",
        "--check",
        "--walks",
        "25",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let walks = stdout.lines().find(|l| l.starts_with("walks: ")).unwrap();
    assert!(count_after(walks, "walks: ") >= 15, "{walks}");
    assert!(count_after(walks, "parse clean, ") >= 5, "{walks}");
}

#[test]
fn a_disagreement_fails_with_its_shortest_text() {
    // The close is `END` unless an `x` stands before it; the grammar cannot say "unless", closes
    // at the first `END` and allows nothing after it, so it refuses what follows `xEND`, which
    // the parser reads as part of the answer. Shrunk, the text shows the same refusal after a
    // close (the parser reads a second, empty answer clean).
    let dir = tempdir().join("lookbehind");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("template.json"),
        r#"{
  "start_anchor": "A:",
  "fields": {
    "content": {"close_pattern": "(?<!x)END"}
  }
}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("one.sample"),
        "--- prefix ---\nA:\n--- generation ---\nsay xEND again END\n",
    )
    .unwrap();
    let t = dir.join("template.json");
    let out = rtbench(&[
        "grammar",
        "--template",
        t.to_str().unwrap(),
        "--check",
        "--walks",
        "0",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[1], "samples: 1 read clean by the parser, 0 accepted by the grammar",
        "{stdout}"
    );
    assert!(
        lines[3].starts_with("disagreement 1: the parser reads clean what the grammar refuses (")
            && lines[3]
                .contains("one.sample:4:9 (generation 1:9): the grammar refuses what follows)"),
        "{stdout}"
    );
    assert_eq!(lines[4], "  shortest: \"END END\"", "{stdout}");
    assert!(
        stderr.contains("warning: the grammar cannot express"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the grammar and the parser disagree: 1 disagreement(s)"),
        "{stderr}"
    );
}

fn tempdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("rtbench-grammar-check-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_serving_engines_compilers_agreed_on_the_committed_outputs() {
    let path = root().join("tests/data/grammar/compilers.json");
    let text = std::fs::read_to_string(&path).expect("run tools/grammar/check_compilers.py");
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let folders = report["folders"].as_object().unwrap();
    assert_eq!(
        folders.keys().cloned().collect::<Vec<_>>(),
        formats(),
        "every bundled format was checked"
    );
    let mut checked = 0;
    for (f, r) in folders {
        for (sample, row) in r["samples"].as_object().unwrap() {
            let verdicts: Vec<(&str, &serde_json::Value)> =
                ["lark", "structural-tag", "ebnf", "gbnf"]
                    .iter()
                    .map(|fmt| (*fmt, &row[*fmt]))
                    .collect();
            for (fmt, e) in &verdicts {
                assert_eq!(
                    e["compiled"], true,
                    "{f}/{sample}: {fmt} did not compile: {}",
                    e["error"]
                );
            }
            // Lark (llguidance), the structural tag and EBNF (XGrammar) accept the same samples.
            // GBNF is read by llguidance's GBNF front end, which lexes it as greedily as its
            // Lark and so refuses some texts llama.cpp's own character-level matcher takes: its
            // verdicts are recorded, not held equal. llama.cpp's own matcher
            // (`llama-gbnf-validator`) is the GBNF verdict that is held equal.
            let first = &verdicts[0].1["accepted"];
            for (fmt, e) in &verdicts[..3] {
                assert_eq!(
                    &e["accepted"], first,
                    "{f}/{sample}: {fmt} disagrees with lark"
                );
            }
            let llama = &row["gbnf"]["llama_cpp"];
            assert_eq!(
                llama["compiled"], true,
                "{f}/{sample}: llama.cpp refused the GBNF ({}); run \
                 tools/grammar/check_compilers.py with --llama-gbnf-validator",
                llama["error"]
            );
            assert_eq!(
                &llama["accepted"], first,
                "{f}/{sample}: llama.cpp disagrees with lark ({})",
                llama["stopped"]
            );
            // The grammar rtbench emits today is the one the compilers saw.
            let sample_path = root().join("samples").join(f).join(sample);
            let text = std::fs::read_to_string(&sample_path).unwrap();
            let s = rtbench_tooling::sample::parse_sample(&sample_path, &text).unwrap();
            let prefix_file = tempdir().join(format!("{f}-{sample}.prefix"));
            std::fs::write(&prefix_file, s.prefix.clone().unwrap_or_default()).unwrap();
            let dir = format!("samples/{f}");
            let sp = sample_path.to_string_lossy().into_owned();
            // Lark and GBNF: the outputs whose verdicts are held above (llama.cpp reads the GBNF).
            for fmt in ["lark", "gbnf"] {
                let mut args = vec![
                    "grammar",
                    "--template",
                    &dir,
                    "--format",
                    fmt,
                    "--prefix-file",
                    prefix_file.to_str().unwrap(),
                ];
                if s.tools.is_some() {
                    args.extend(["--tools", &sp]);
                }
                let out = rtbench(&args);
                assert!(
                    out.status.success(),
                    "{f}/{sample}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let digest = sha256_hex(&out.stdout);
                assert_eq!(
                    row[fmt]["sha256"].as_str(),
                    Some(digest.as_str()),
                    "{f}/{sample}: the {fmt} grammar changed since the compilers checked it: run \
                     tools/grammar/check_compilers.py"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 60, "{checked} samples");
}

/// SHA-256 of `bytes`, in hex (as Python's hashlib writes it).
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
