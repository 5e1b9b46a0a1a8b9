//! `rtbench new --model`: the response template inferred from a model folder's chat template,
//! against the reference's recorded results (`tools/infer/check_reference.py`, which renders the
//! probes with transformers' `apply_chat_template` and parses with its `parse_response`, under
//! 5.24 and 5.25): for every bundled folder the reference recorded,
//! - the inferred template is the one recorded, and every probe sample written beside it
//!   passes `rtbench test` (rtbench's render is the prompt, its parse the probe's message),
//!   while the reference renders the same prompt and parses the same message;
//! - `--check` lists exactly the folder samples whose message differs between the folder's
//!   own template and the inferred one under the reference.

use std::path::{Path, PathBuf};

use serde_json::Value as J;

use crate::scratch::{Scratch, code, err, out, rtbench_in};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recorded(version: &str) -> serde_json::Map<String, J> {
    let path = root().join(format!("tests/data/infer/reference-{version}.json"));
    match serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap() {
        J::Object(m) => m,
        _ => panic!("the recording is an object"),
    }
}

/// A copy of the folder's model files (chat template, tokenizer config and tokenizer), without
/// its response template or samples.
fn model_copy(scratch: &Scratch, folder: &str) -> PathBuf {
    let from = root().join("samples").join(folder);
    let to = scratch.0.join(folder);
    std::fs::create_dir_all(&to).unwrap();
    for f in [
        "chat_template.jinja",
        "tokenizer_config.json",
        "tokenizer.json",
    ] {
        if from.join(f).is_file() {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
    }
    to
}

fn check_version(version: &str) {
    let data = recorded(version);
    assert!(data.len() >= 6, "{} folders recorded", data.len());
    for (folder, rec) in &data {
        let scratch = Scratch::new("infer");
        let dir = model_copy(&scratch, folder);
        let d = dir.display().to_string();
        let o = rtbench_in(&scratch.0, &["--reference", version, "new", "--model", &d]);
        assert_eq!(code(&o), 0, "{folder}: {}", err(&o));
        let written: J =
            serde_json::from_str(&std::fs::read_to_string(dir.join("template.json")).unwrap())
                .unwrap();
        assert_eq!(
            written, rec["template"],
            "{folder}: the inferred template changed"
        );
        let report = out(&o);
        let probes = rec["probes"].as_object().unwrap();
        assert!(
            report.contains(&format!(
                "probes: {n}/{n} parse back to the probe's message",
                n = probes.len()
            )),
            "{folder}: {report}"
        );
        // rtbench renders the prompt and parses the message; the reference did too.
        let t = rtbench_in(
            &scratch.0,
            &[
                "--reference",
                version,
                "test",
                "--template",
                &format!("{d}/template.json"),
                &format!("{d}/probes"),
            ],
        );
        assert_eq!(code(&t), 0, "{folder}: {}{}", out(&t), err(&t));
        assert!(
            !out(&t).contains("differs from what the chat template renders"),
            "{}",
            out(&t)
        );
        for (name, p) in probes {
            assert_eq!(
                p["prefix_matches"],
                J::Bool(true),
                "{folder}/{name}: render"
            );
            let sample =
                std::fs::read_to_string(dir.join("probes").join(format!("{name}.sample"))).unwrap();
            let expected = sample.split("--- expected ---\n").nth(1).unwrap();
            let expected: J = serde_json::from_str(expected).unwrap();
            assert_eq!(
                p["message"], expected,
                "{folder}/{name}: the reference's parse"
            );
        }
        // --check names exactly the samples the reference parses differently.
        let c = rtbench_in(
            &root(),
            &[
                "--reference",
                version,
                "new",
                "--model",
                &format!("samples/{folder}"),
                "--check",
            ],
        );
        let differing: Vec<&String> = rec["samples"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, v)| v["equal"] == J::Bool(false))
            .map(|(k, _)| k)
            .collect();
        let text = out(&c);
        for name in &differing {
            assert!(
                text.contains(&format!("samples/{folder}/{name}: ")),
                "{folder}: --check does not name {name}: {text}"
            );
        }
        let named = text
            .lines()
            .filter(|l| l.starts_with(&format!("  samples/{folder}/")))
            .count();
        assert_eq!(named, differing.len(), "{folder}: {text}");
        assert_eq!(
            code(&c),
            if differing.is_empty() { 0 } else { 1 },
            "{folder}: {text}"
        );
    }
}

#[test]
fn the_inferred_templates_agree_with_the_reference_under_5_25() {
    check_version("5.25");
}

#[test]
fn the_inferred_templates_agree_with_the_reference_under_5_24() {
    check_version("5.24");
}

#[test]
fn an_existing_template_is_never_replaced_and_a_folder_without_chat_template_is_refused() {
    let scratch = Scratch::new("infer-refuse");
    let dir = model_copy(&scratch, "qwen3");
    let d = dir.display().to_string();
    std::fs::write(dir.join("template.json"), "{}").unwrap();
    let o = rtbench_in(&scratch.0, &["new", "--model", &d]);
    assert_eq!(code(&o), 2);
    assert!(
        err(&o).contains("already exists: rtbench new never replaces a file"),
        "{}",
        err(&o)
    );
    assert!(err(&o).contains("--check"), "{}", err(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("template.json")).unwrap(),
        "{}"
    );
    assert!(!dir.join("probes").exists());
    let empty = scratch.0.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = rtbench_in(&scratch.0, &["new", "--model", "empty"]);
    assert_eq!(code(&o), 2);
    assert!(err(&o).contains("has no chat template"), "{}", err(&o));
    let _ = Path::new(&d);
}
