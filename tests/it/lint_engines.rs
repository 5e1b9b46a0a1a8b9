//! `rtbench lint --engines`: the portability replay on the command line (exit codes, the
//! warnings at the pattern's key, the first divergence, and no change without the option).

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .output()
        .unwrap()
}

const ACCENTS: &str = "tests/data/portability/accents";
const DOLLAR: &str = "tests/data/portability/dollar";

#[test]
fn accented_word_differs_in_ecmascript() {
    let o = run(&["lint", "--engines", "--template", ACCENTS, ACCENTS]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    for expected in [
        "pattern           regex  fancy-regex  ecmascript\n\
         tag.open_pattern  same   same         differs (1 sample)\n",
        "warning: field 'tag': open_pattern matches differently in ecmascript (1 sample)\n \
         --> tests/data/portability/accents/template.json:5:13\n",
        "  tests/data/portability/accents/accented.sample:4:4: partial search from offset 3 (offsets in prefix + generation)\n    \
         python:  match 6..13 (groups 1=7..12) '<café>'\n    \
         ecmascript: no match\n    \
         cause: \\w, \\d, \\s or \\b match other characters in ecmascript than in Python",
        "    message[\"content\"]: python 'hi', ecmascript 'hi <café>body</x>'\n    \
         message[\"tag\"]: python 'body', ecmascript (absent)\n",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in\n{out}");
    }
    assert!(out.ends_with("and 1 sample: 2 warnings\n"), "{out}");
    let o = run(&[
        "lint",
        "--engines=regex,ecmascript",
        "--template",
        ACCENTS,
        ACCENTS,
        "--deny-warnings",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("pattern           regex  ecmascript\n"),
        "{out}"
    );
}

#[test]
fn dollar_close_differs_in_every_engine_without_python_dollar() {
    let o = run(&[
        "lint",
        "--engines",
        "regex,fancy-regex",
        "--template",
        DOLLAR,
        DOLLAR,
        "--deny-warnings",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    for engine in ["regex", "fancy-regex"] {
        let expected = format!(
            "    python:  match 9..10 '\\n'\n    {engine}: match 10..11 '\\n'\n    \
             cause: `$` in Python also matches before a final newline; in {engine} it matches only at the very end"
        );
        assert!(out.contains(&expected), "missing {expected:?} in\n{out}");
        let message = format!("message[\"content\"]: python 'Hello.', {engine} 'Hello.\\n'");
        assert!(out.contains(&message), "{out}");
    }
}

#[test]
fn without_engines_lint_is_unchanged_and_bad_names_are_usage_errors() {
    let plain = run(&["lint", "--template", ACCENTS, ACCENTS]);
    let out = String::from_utf8_lossy(&plain.stdout);
    assert!(!out.contains("portability: the template"), "{out}");
    assert!(out.ends_with("and 1 sample: 1 warning\n"), "{out}");
    let o = run(&["lint", "--template", ACCENTS, "--engines", "perl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown engine 'perl'"));
}

#[test]
fn bundled_plain_template_is_portable() {
    // The text samples (the folder's token-id sample is warned about on purpose: it shows
    // a defused `<think>`).
    let o = run(&[
        "lint",
        "--engines",
        "--template",
        "samples/smollm3",
        "samples/smollm3/think-then-answer.sample",
        "samples/smollm3/weather-tool-call.sample",
        "samples/smollm3/multi-turn-accents.sample",
        "--deny-warnings",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("no patterns (only literal delimiters): portable"),
        "{out}"
    );
}
