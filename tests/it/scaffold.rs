//! `rtbench new`: each scaffold works end to end as written (the template loads, the schema
//! accepts it, its sample passes `rtbench test` under both reference versions with the message
//! the reference recorded, `lint --deny-warnings` and the chunking check are clean), the report
//! says what was written and what to do next, and no existing file is ever replaced.

use crate::scratch::{Scratch, rtbench_in};
use std::path::Path;
use std::process::Output;

/// `rtbench` in `dir` with `args`, which must exit 0 (else the output, under `what`, is the
/// failure's message).
fn succeeds(dir: &Path, what: &str, args: &[&str]) -> Output {
    let o = rtbench_in(dir, args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: {}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    o
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scaffold(format: &str, file: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema/scaffolds")
        .join(format)
        .join(file);
    std::fs::read_to_string(p).unwrap()
}

/// What `rtbench new` prints after writing `template` and `sample`.
fn report(template: &str, sample: &str, shape: &str, test: &str) -> String {
    format!(
        "wrote {template}: a response template ({shape})
wrote {sample}: a prompt, a generation in that shape and the message it parses to

next:
  rtbench {template}
      open the workbench; put your model's tokens in the template and a real prompt
      and reply in the sample, and watch the message as you save
  {test}
      check the samples (--bless writes the current messages as expected)
  rtbench schema > response-template.schema.json
      completion and docs in your editor (README: \"Editor support\")
"
    )
}

#[test]
fn every_scaffold_works_end_to_end() {
    for (format, shape) in [
        (
            "json-in-tags",
            "thinking in <think>, tool calls as JSON in <tool_call> tags",
        ),
        (
            "xml-parameters",
            "thinking in <think>, tool calls as <function=NAME> with <parameter=KEY> tags",
        ),
        (
            "python-calls",
            "tool calls as a Python-style list [name(key=value)]",
        ),
    ] {
        let s = Scratch::new(format);
        let out = rtbench_in(&s.0, &["new", "my-model", "--format", format]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(
            text(&out.stdout),
            report(
                "my-model/template.json",
                "my-model/example.sample",
                shape,
                "rtbench test my-model"
            )
        );
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
        let dir = s.0.join("my-model");
        assert_eq!(
            std::fs::read_to_string(dir.join("template.json")).unwrap(),
            scaffold(format, "template.json")
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("example.sample")).unwrap(),
            scaffold(format, "example.sample")
        );
        // No temporary file is left behind.
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["example.sample", "template.json"]);

        succeeds(&s.0, format, &["check", "--template", "my-model"]);
        // The expected message is the reference's (5.25, and 5.24 gives the same).
        let test = succeeds(&s.0, format, &["test", "--reference", "all", "my-model"]);
        assert!(
            text(&test.stdout).contains("my-model/example.sample ... ok"),
            "{format}: {}",
            text(&test.stdout)
        );
        succeeds(
            &s.0,
            format,
            &[
                "lint",
                "--deny-warnings",
                "--template",
                "my-model",
                "my-model",
            ],
        );
        succeeds(
            &s.0,
            format,
            &[
                "chunks",
                "--template",
                "my-model",
                "my-model/example.sample",
            ],
        );
    }
}

#[test]
fn new_writes_into_the_current_folder_by_default_and_takes_a_template_file_name() {
    let s = Scratch::new("default");
    let out = rtbench_in(&s.0, &["new"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        report(
            "template.json",
            "example.sample",
            "thinking in <think>, tool calls as JSON in <tool_call> tags",
            "rtbench test ."
        )
    );
    assert!(s.0.join("template.json").is_file() && s.0.join("example.sample").is_file());

    let s = Scratch::new("file-name");
    std::fs::create_dir(s.0.join("models")).unwrap();
    let out = rtbench_in(
        &s.0,
        &["new", "models/my model.json", "--format", "python-calls"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        report(
            "models/my model.json",
            "models/example.sample",
            "tool calls as a Python-style list [name(key=value)]",
            "rtbench test --template 'models/my model.json' models/example.sample"
        )
        .replace(
            "  rtbench models/my model.json\n",
            "  rtbench 'models/my model.json'\n"
        )
    );
    // The commands it suggests work as printed.
    let test = rtbench_in(
        &s.0,
        &[
            "test",
            "--template",
            "models/my model.json",
            "models/example.sample",
        ],
    );
    assert_eq!(test.status.code(), Some(0), "{}", text(&test.stdout));
}

#[test]
fn new_never_replaces_a_file() {
    for existing in ["template.json", "example.sample"] {
        let s = Scratch::new(&format!("exists-{existing}"));
        let dir = s.0.join("m");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(existing), "mine\n").unwrap();
        let out = rtbench_in(&s.0, &["new", "m"]);
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            text(&out.stderr),
            format!(
                "error: m/{existing} already exists: rtbench new never replaces a file (give \
                 another folder or file name, or move it away)\n"
            )
        );
        assert!(out.stdout.is_empty());
        // Nothing was written: the file is as it was, and the other one was not created.
        assert_eq!(
            std::fs::read_to_string(dir.join(existing)).unwrap(),
            "mine\n"
        );
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
    // A path that is an existing file of another kind is refused too.
    let s = Scratch::new("not-a-folder");
    std::fs::write(s.0.join("notes.txt"), "x").unwrap();
    let out = rtbench_in(&s.0, &["new", "notes.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: notes.txt is a file: give a folder, or the template's file name ending in .json\n"
    );
    assert_eq!(std::fs::read_to_string(s.0.join("notes.txt")).unwrap(), "x");
}
