//! What a model author writing a template for a new format trips over, checked end to end on
//! the command line and in the workbench: a start anchor no prefix contains, expected errors
//! compared by type and message, a parse that fails however it is cut, results that depend on
//! the chunking (an XML invoke format whose close takes an optional wrapper tail; the
//! reference's own streams of it are recorded in `tests/data/replay/xml-invoke-optional-tail.json`),
//! a broken template, a misspelled section header and a dry-run bless.

use crate::scratch::{Scratch, code, err, out, rtbench_in};
use rtbench::testing::{Action, Inputs, Source, State, Theme};
use rtbench::testing::{request_for, update, view, worker};

/// An XML invoke/parameter tool-call format: the close takes the wrapper's end when it follows.
const XML: &str = r#"{
  "start_anchor": "<|assistant|>\n",
  "fields": {
    "tool_calls": {
      "open_pattern": "(?:<x:tool_call>\\s*)?<invoke name=\"(?P<name>[^\"]+)\">",
      "close_pattern": "</invoke>(?:\\s*</x:tool_call>)?",
      "content": "xml-inline",
      "content_args": {"tag_pattern": "<parameter name=\"(?P<key>[^\"]+)\">(?P<value>.*?)</parameter>"},
      "repeats": true,
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
    },
    "content": {"close": "<|end|>", "repeats": true, "join": ""}
  }
}
"#;

/// A tool call wrapped in `<x:tool_call>`, after a line of text.
const CALL: &str = r#"--- prefix (ends with newline) ---
<|user|>
Weather in Oslo?<|end|>
<|assistant|>
--- generation ---
Let me check.
<x:tool_call>
<invoke name="get_weather">
<parameter name="city">Oslo</parameter>
</invoke>
</x:tool_call><|end|>
--- expected ---
{"content": "Let me check.", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}
"#;

/// The answer after the tool's result: the prompt holds an earlier turn's tool call.
const AFTER_TOOL: &str = r#"--- prefix (ends with newline) ---
<|user|>
Weather in Oslo?<|end|>
<|assistant|>
<x:tool_call>
<invoke name="get_weather">
<parameter name="city">Oslo</parameter>
</invoke>
</x:tool_call><|end|>
<|tool|>
{"temp": 3}<|end|>
<|assistant|>
--- generation ---
It is 3 degrees in Oslo.<|end|>
--- expected ---
{"content": "It is 3 degrees in Oslo."}
"#;

/// The `rtbench` binary run in `dir`.
/// The XML template with a stray line break in its start anchor.
fn stray_anchor() -> String {
    XML.replace(r#""<|assistant|>\n""#, r#""<|assistant|>\n\n""#)
}

#[test]
fn a_start_anchor_no_prefix_contains_is_a_lint_warning_at_its_key() {
    let s = Scratch::with_files(
        "anchor",
        &[
            ("template.json", &stray_anchor()),
            ("after.sample", AFTER_TOOL),
        ],
    );
    let o = rtbench_in(&s.0, &["lint", "--template", ".", "--deny-warnings", "."]);
    assert_eq!(code(&o), 1, "{}{}", out(&o), err(&o));
    assert_eq!(
        out(&o),
        r#"warning: start anchor '<|assistant|>\n\n' is not found in the prefix of ./after.sample, so the whole prefix was parsed: regions of earlier turns (a tool call, an answer) become this message's; the closest text in the prefix: '<|assistant|>\n' at ./after.sample:12:1 (prefix 11:1) (14 characters of the anchor matched, then the prefix ended)
 --> ./template.json:2:19
  |
2 |   "start_anchor": "<|assistant|>\n\n",
  |                   ^^^^^^^^^^^^^^^^^^^
  |
  = help: make the anchor match the end of the prompt the chat template writes, or fix the prefix of ./after.sample

. and 1 sample: 1 warning
"#
    );
    // `test` fails the sample with the earlier turn's tool call, and says first why.
    let o = rtbench_in(&s.0, &["test", "."]);
    assert_eq!(code(&o), 1);
    let lines: Vec<String> = out(&o).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "./after.sample ... FAILED");
    assert_eq!(
        lines[1],
        "  the start anchor is not found in the prefix, so the whole prefix was parsed: what differs may come from an earlier turn (the warning below says where)"
    );
    assert!(
        lines[3].starts_with("  $.tool_calls: unexpected ["),
        "{lines:?}"
    );
    assert!(
        lines[4].starts_with(
            "  warning: ./template.json:2:19: start anchor '<|assistant|>\\n\\n' is not found"
        ),
        "{lines:?}"
    );
    // A pattern anchor: the closest text, and the element that could not match there.
    let pattern = XML.replace(
        r#""start_anchor": "<|assistant|>\n""#,
        r#""start_anchor_pattern": "<\\|assistant\\|>\\n\\n""#,
    );
    std::fs::write(s.0.join("template.json"), pattern).unwrap();
    let o = rtbench_in(&s.0, &["lint", "--template", ".", "."]);
    assert_eq!(code(&o), 0);
    assert!(
        out(&o).contains("the closest text in the prefix: '<|assistant|>\\n' at ./after.sample:4:1 (prefix 3:1) (14 characters of the anchor matched, then '<' did not fit); the pattern's element '\\\\n' could not match there\n --> ./template.json:2:27"),
        "{}",
        out(&o)
    );
}

/// The workbench lists the warning with the sample's others, counted in the samples pane, and
/// locates it at the template's key (Enter opens the editor there).
#[test]
fn the_workbench_counts_the_anchor_warning_and_places_it_at_the_key() {
    let stray: &'static str = Box::leak(stray_anchor().into_boxed_str());
    let inputs = Inputs::embedded(
        "demo",
        stray,
        &[("after.sample", AFTER_TOOL), ("call.sample", CALL)],
    );
    let mut state = State::new(Theme::dark(), (120, 40));
    let req = request_for(&mut state);
    update::on_report(&mut state, worker::compute(&inputs, &req));
    // Both prefixes lack the anchor: one warning each, the selected sample and the other.
    let counts: Vec<usize> = state.session.samples.iter().map(|s| s.warnings).collect();
    assert_eq!(counts, [1, 1]);
    let items = view::diagnostics::items(&state, 120);
    let anchor: Vec<_> = items
        .iter()
        .filter(|i| {
            format!("{:?}", i.lines).contains("is not found in the prefix of demo/after.sample")
        })
        .collect();
    assert_eq!(anchor.len(), 1);
    assert_eq!(
        format!("{:?}", anchor[0].target),
        r#"Some(File { file: "demo/template.json", line: 2, column: 19 })"#
    );
}

#[test]
fn an_expected_error_is_compared_by_type_and_message_or_by_type_alone() {
    // `{content.nmae}`: a placeholder typo, a ValueError at the tool call.
    let typo = XML.replace(r#""name": "{name}""#, r#""name": "{content.nmae}""#);
    let sample = |expected: &str| {
        CALL.replace(
            &CALL[CALL.find("{\"content\"").unwrap()..],
            &format!("{expected}\n"),
        )
    };
    let s = Scratch::with_files(
        "errors",
        &[
            ("template.json", &typo),
            (
                "any-key-error.sample",
                &sample(r#"{"$error": "KeyError: nothing like it"}"#),
            ),
            (
                "value-error.sample",
                &sample(r#"{"$error": {"type": "ValueError"}}"#),
            ),
            (
                "key-error.sample",
                &sample(r#"{"$error": {"type": "KeyError"}}"#),
            ),
            (
                "typo.sample",
                &sample(r#"{"$error": {"type": "ValueErorr"}}"#),
            ),
        ],
    );
    let o = rtbench_in(&s.0, &["test", "."]);
    assert_eq!(code(&o), 1);
    let report = out(&o);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(
        lines,
        [
            "./any-key-error.sample ... FAILED",
            "  expected a different error:",
            "  - KeyError: nothing like it",
            "  + ValueError: transform placeholder '{content.nmae}' is missing key 'nmae'. Available: ['city']",
            "./key-error.sample ... FAILED",
            "  expected a different error:",
            "  - KeyError (any message)",
            "  + ValueError: transform placeholder '{content.nmae}' is missing key 'nmae'. Available: ['city']",
            "./typo.sample ... FAILED",
            "  ./typo.sample:13:2: the expected error cannot be read: unknown exception type 'ValueErorr': did you mean `ValueError`? (types: ValueError, KeyError, TypeError, AttributeError, RecursionError, RuntimeError, IndexError, error, Exception, rtbench)",
            "./value-error.sample ... ok",
            "1 passed, 3 failed, 0 without expected message",
        ]
    );
    // Blessing keeps the looser form that holds, and writes the exact one elsewhere.
    let o = rtbench_in(
        &s.0,
        &[
            "test",
            "--bless",
            "any-key-error.sample",
            "value-error.sample",
        ],
    );
    assert_eq!(code(&o), 0, "{}{}", out(&o), err(&o));
    assert!(
        out(&o).contains("value-error.sample ... ok (unchanged: its expected error still holds)"),
        "{}",
        out(&o)
    );
    assert!(
        s.read("value-error.sample")
            .contains(r#"{"$error": {"type": "ValueError"}}"#)
    );
    assert!(s.read("any-key-error.sample").contains(
        r#""$error": "ValueError: transform placeholder '{content.nmae}' is missing key 'nmae'. Available: ['city']""#
    ));
}

#[test]
fn a_parse_that_fails_however_it_is_cut_is_a_failing_parse_not_an_unstable_one() {
    let typo = XML.replace(r#""name": "{name}""#, r#""name": "{content.nmae}""#);
    let s = Scratch::with_files(
        "stable-error",
        &[("template.json", &typo), ("call.sample", CALL)],
    );
    let o = rtbench_in(&s.0, &["chunks", "--template", ".", "call.sample"]);
    assert_eq!(code(&o), 1);
    assert_eq!(out(&o), "");
    assert_eq!(
        err(&o),
        "error: ValueError: transform placeholder '{content.nmae}' is missing key 'nmae'. Available: ['city']
  the parse of call.sample fails with this error however the stream is cut: all 41 chunkings fail with it, as the one-shot parse does (sizes 1-32; random seeds 0, 1, 2, 3, 4, 5, 6, 7; word and punctuation tokens); `rtbench parse` shows where
"
    );
    // `lint --chunkings` and `test --chunkings` see no instability in it either.
    let o = rtbench_in(&s.0, &["lint", "--template", ".", "--chunkings", "."]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    assert!(
        out(&o).ends_with("; every sample's result is the same however the stream is cut\n"),
        "{}",
        out(&o)
    );
}

/// The optional wrapper tail of the close: the one-shot parse takes it, a stream cut inside it
/// commits the bare `</invoke>` (the reference does the same: `tests/data/replay`). `lint` and
/// `test` pass it unless asked to check chunkings; then they fail and name the close pattern
/// at its key, as `chunks` does.
#[test]
fn chunking_instability_fails_lint_and_test_with_the_delimiter_named() {
    let s = Scratch::with_files(
        "instability",
        &[("template.json", XML), ("call.sample", CALL)],
    );
    let o = rtbench_in(&s.0, &["lint", "--template", ".", "--deny-warnings", "."]);
    assert_eq!(
        (code(&o), out(&o).as_str()),
        (0, ". and 1 sample: no warnings\n")
    );
    let o = rtbench_in(&s.0, &["test", "."]);
    assert_eq!(code(&o), 0, "{}", out(&o));
    let named = "the delimiter that made the difference: the close pattern of 'tool_calls', '</invoke>(?:\\\\s*</x:tool_call>)?' (./template.json:6:24)
  chunked: it matched '</invoke>' at line 5:1
  one-shot: it matched '</invoke>\\n</x:tool_call>' at line 5:1";
    let report = format!(
        "32 of 41 chunkings change the result: sizes 1-14, 16-19, 22-23, 27-29; random seeds 0, 1, 2, 3, 4, 5, 6, 7; word and punctuation tokens
smallest: size 1
it takes 1 cut of the stream to change it:
  after code point 119: 'e>\\n</x:tool_call' | '><|end|>'
{named}
difference (one-shot parse -> chunked):
  $.message.content: expected 'Let me check.', got 'Let me check.</x:tool_call>'
  $.regions[2]: unexpected ['content', '</x:tool_call>']"
    );
    let indented =
        |text: &str, by: &str| -> String { text.lines().map(|l| format!("{by}{l}\n")).collect() };
    let o = rtbench_in(&s.0, &["lint", "--template", ".", "--chunkings", "."]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        out(&o),
        format!(
            "error: the result of ./call.sample depends on the chunking: the close pattern of 'tool_calls' matched differently (32 of 41 chunkings change it)
 --> ./template.json:6:24
  |
6 |       \"close_pattern\": \"</invoke>(?:\\\\s*</x:tool_call>)?\",
  |                        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
{}
. and 1 sample: no warnings; 1 sample's result depends on the chunking
",
            indented(&report, "  ")
        )
    );
    let o = rtbench_in(&s.0, &["test", "--chunkings", "."]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        out(&o),
        format!(
            "./call.sample ... FAILED\n  the result depends on the chunking:\n{}0 passed, 1 failed, 0 without expected message\n",
            indented(&report, "    ")
        )
    );
    // `chunks` names it the same way; the knobs are `chunks`' own.
    let o = rtbench_in(&s.0, &["chunks", "--template", ".", "call.sample"]);
    assert_eq!((code(&o), err(&o)), (1, format!("error: {report}\n")));
    let o = rtbench_in(
        &s.0,
        &["test", "--chunkings", "--max", "4", "--random", "0", "."],
    );
    assert!(
        out(&o)
            .contains("5 of 5 chunkings change the result: sizes 1-4; word and punctuation tokens"),
        "{}",
        out(&o)
    );
    let o = rtbench_in(&s.0, &["test", "--max", "4", "."]);
    assert_eq!(code(&o), 2, "--max needs --chunkings");
}

/// `x` in the workbench names the delimiter too, at its key.
#[test]
fn the_chunking_check_overlay_names_the_delimiter_at_its_key() {
    let inputs = Inputs {
        template: Source::Embedded {
            name: "demo/template.json".into(),
            text: XML,
        },
        files: vec![Source::Embedded {
            name: "demo/call.sample".into(),
            text: CALL,
        }],
        folders: Vec::new(),
        corpora: Vec::new(),
    };
    let mut state = State::new(Theme::dark(), (120, 40));
    let req = request_for(&mut state);
    update::on_report(&mut state, worker::compute(&inputs, &req));
    update::on_action(&mut state, Action::CheckChunkings);
    let o = state.modes.overlay.as_ref().expect("the overlay");
    let text = o.texts().join("\n");
    assert!(
        text.contains("the delimiter that made the difference: the close pattern of 'tool_calls', '</invoke>(?:\\\\s*</x:tool_call>)?' (demo/template.json:6:24)"),
        "{text}"
    );
}

#[test]
fn a_broken_template_is_reported_once_and_fails_each_of_its_samples() {
    let broken = XML.replacen("\"fields\": {", "\"fields\" {", 1);
    let s = Scratch::with_files(
        "broken",
        &[
            ("template.json", &broken),
            ("a.sample", CALL),
            ("b.sample", CALL),
        ],
    );
    let o = rtbench_in(&s.0, &["test", "."]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        out(&o),
        "error: invalid JSON: Expecting ':' delimiter
 --> ./template.json:3:12
  |
3 |   \"fields\" {
  |            ^
  |
  = help: fix the JSON syntax there

./a.sample ... FAILED (its template ./template.json cannot be loaded: the error above)
./b.sample ... FAILED (its template ./template.json cannot be loaded: the error above)
0 passed, 2 failed, 0 without expected message
"
    );
}

#[test]
fn a_misspelled_section_header_gets_a_did_you_mean() {
    let s = Scratch::with_files(
        "headers",
        &[
            ("template.json", XML),
            (
                "gen.sample",
                &CALL.replace("--- generation ---", "--- generaton ---"),
            ),
            (
                "exp.sample",
                &CALL.replace("--- expected ---", "--- expectd ---"),
            ),
        ],
    );
    let o = rtbench_in(&s.0, &["test", "."]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        out(&o),
        "./exp.sample ... no expected message
  warning: ./exp.sample:12:1: `--- expectd ---` is not a section header: did you mean `--- expected ---`? (it is read as text of the section above it)
  warning: ./exp.sample:11:22: this 'content' region never closed: its close '<|end|>' never came, so it took everything to the end of the stream (ending 's\": {\"city\": \"Oslo\"}}}]}')
./gen.sample ... FAILED
  ./gen.sample:5: no '--- generation ---' section: `--- generaton ---` is not a section header: did you mean `--- generation ---`?
0 passed, 1 failed, 1 without expected message; 1 with warnings (`rtbench lint --template T SAMPLE` shows them in full)
"
    );
}

#[test]
fn a_dry_run_bless_shows_the_section_it_would_write() {
    let bare = &CALL[..CALL.find("--- expected ---").unwrap()];
    let s = Scratch::with_files("dry-run", &[("template.json", XML), ("call.sample", bare)]);
    let o = rtbench_in(&s.0, &["test", "--bless", "--dry-run", "."]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    assert_eq!(
        out(&o),
        r#"./call.sample ... would bless: new expected section:
  {
    "content": "Let me check.",
    "tool_calls": [
      {
        "type": "function",
        "function": {
          "name": "get_weather",
          "arguments": {
            "city": "Oslo"
          }
        }
      }
    ]
  }
1 would be blessed (dry run: nothing written), 0 passed, 0 failed, 0 without expected message
"#
    );
    assert_eq!(s.read("call.sample"), bare);
}
