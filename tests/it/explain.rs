//! `explain` on real mis-parse situations: a typo in a delimiter, a prompt that opened
//! `<think>` but was not given as the prefix, a lookahead that never matches, and a
//! non-repeating field whose last (empty) region wins. Each is checked against what the parser
//! really did, and the headless command prints the same explanation.

use std::process::Command;

use rtbench_engine::parser::parse_response;
use rtbench_engine::py::json_loads;
use rtbench_engine::template::{Template, load_template};
use rtbench_tooling::explain::{AnchorCut, Ending, Explanation, explain};
use rtbench_tooling::place::{Places, TextFile};

const SMOLLM3: &str = include_str!("../../samples/smollm3/template.json");
const PROMPT: &str = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n";
const TOOL_CALL: &str = "<think>\nNeed the weather.\n</think>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>";

fn template(json: &str) -> Template {
    // A template is engine input: read with Python json semantics, as the engine reads its files.
    load_template(&json_loads(json).unwrap()).unwrap()
}

fn explained(t: &Template, prefix: &str, generation: &str, field: &str) -> Explanation {
    explain(t, prefix, generation, None, field).unwrap()
}

/// The code-point offset of the `n`th occurrence of `needle` in prefix + generation.
fn at(doc: &str, needle: &str, n: usize) -> usize {
    doc.match_indices(needle).nth(n).unwrap().0
}

#[test]
fn typo_in_the_open_delimiter_shows_the_near_miss_and_the_orphan_close() {
    let t = template(&SMOLLM3.replace("\"<tool_call>\"", "\"<toolcall>\""));
    let e = explained(&t, PROMPT, TOOL_CALL, "tool_calls");
    assert!(
        e.regions.is_empty(),
        "the misspelt open never opened the field"
    );
    let doc = &e.document;
    let open_at = at(doc, "<tool_call>", 0);
    // `<toolcall>` and `<tool_call>` share `<tool`, then `_` does not fit.
    assert_eq!(e.nearest_open, Some(open_at..open_at + "<tool".len()));
    let close_at = at(doc, "</tool_call>", 0);
    assert_eq!(
        e.stray_closes,
        vec![close_at..close_at + "</tool_call>".len()]
    );
    let text = e.lines().join("\n");
    assert!(text.contains("'<tool' at generation 4:1"), "{text}");
    assert!(text.contains("then '_' did not fit"), "{text}");
    assert!(
        text.contains("while no region of this field was open"),
        "{text}"
    );
    // The parser really drops the tool call: the explanation is about a real mis-parse.
    let message = parse_response(&t, Some(PROMPT), TOOL_CALL, None).unwrap();
    assert!(!message.contains_key("tool_calls"));
}

#[test]
fn missing_prefix_that_opened_think_points_at_the_prefix() {
    let t = template(
        r#"{"defaults": {"role": "assistant"}, "start_anchor": "<｜Assistant｜>",
            "fields": {"thinking": {"open": "<think>", "close": "</think>"},
                       "content": {"close": "<｜end▁of▁sentence｜>"}}}"#,
    );
    let generation = "The user greets me; reply warmly.\n</think>\n\nHello!<｜end▁of▁sentence｜>";
    let e = explained(&t, "", generation, "thinking");
    assert!(e.regions.is_empty());
    assert_eq!(e.anchor, AnchorCut::EmptyPrefix);
    let close_at = at(&e.document, "</think>", 0);
    assert_eq!(e.stray_closes, vec![close_at..close_at + "</think>".len()]);
    // `</think>` begins with `<`, but a one-character near miss is not reported.
    assert_eq!(e.nearest_open, None);
    let text = e.lines().join("\n");
    assert!(text.contains("pass the prompt as the prefix"), "{text}");

    // With the prompt that opened the region, the same generation parses as intended, and
    // the explanation shows the region opened by the prefix.
    let prompt = "<｜User｜>Hi<｜Assistant｜><think>\n";
    let e = explained(&t, prompt, generation, "thinking");
    assert_eq!(e.regions.len(), 1);
    let g = &e.regions[0];
    assert_eq!(&e.document[g.open.clone()], "<think>");
    assert_eq!(g.ending, Some(Ending::Close));
    assert_eq!(
        &e.document[g.body.clone()],
        "\nThe user greets me; reply warmly.\n"
    );
    assert!(e.stray_closes.is_empty());
    assert_eq!(
        e.anchor,
        AnchorCut::Cut {
            at: prompt.find("<think>").unwrap(),
            kept: prompt.find("<think>").unwrap()..prompt.len()
        }
    );
}

#[test]
fn lookahead_that_never_matches_runs_the_region_to_the_end() {
    // The close needs a newline after `</tool_call>`; the model wrote `<|im_end|>` instead.
    let t = template(&SMOLLM3.replace(
        "\"close\": \"</tool_call>\"",
        r#""close_pattern": "</tool_call>(?=\\n)""#,
    ));
    let e = explained(&t, PROMPT, TOOL_CALL, "tool_calls");
    assert_eq!(e.regions.len(), 1);
    let g = &e.regions[0];
    assert_eq!(g.ending, Some(Ending::Failed));
    assert_eq!(
        g.body.end,
        e.document.len(),
        "the body swallowed the rest of the stream"
    );
    let close_at = at(&e.document, "</tool_call>", 0);
    assert_eq!(
        e.nearest_close,
        Some(close_at..close_at + "</tool_call>".len())
    );
    let error = e
        .parse_error
        .as_ref()
        .expect("the swallowed text is not JSON");
    assert!(
        error.message.contains("could not parse region as JSON"),
        "{}",
        error.message
    );
    let text = e.lines().join("\n");
    assert!(
        text.contains("12 characters matched, then '<' did not fit"),
        "{text}"
    );
}

#[test]
fn non_repeating_field_keeps_its_last_region() {
    // `<|im_end|>` followed by a newline reopens the implicit content, whose empty last value
    // replaces the answer (the reference does the same).
    let t = template(SMOLLM3);
    let generation = "<think>\nhm\n</think>\nThe answer.<|im_end|>\n";
    let message = parse_response(&t, Some(PROMPT), generation, None).unwrap();
    assert!(!message.contains_key("content"));
    let e = explained(&t, PROMPT, generation, "content");
    assert_eq!(e.regions.len(), 2);
    assert_eq!(e.regions[0].ending, Some(Ending::Close));
    assert_eq!(e.regions[1].ending, Some(Ending::EndOfStream));
    let text = e.lines().join("\n");
    assert!(
        text.contains("the message keeps region 2's, which is empty"),
        "{text}"
    );
}

#[test]
fn unknown_field_is_an_error_naming_the_fields() {
    let t = template(SMOLLM3);
    let err = explain(&t, PROMPT, TOOL_CALL, None, "answer").unwrap_err();
    assert!(
        err.contains("no field 'answer'") && err.contains("thinking, tool_calls, content"),
        "{err}"
    );
}

#[test]
fn headless_explain_prints_the_explanation() {
    let dir = std::env::temp_dir().join(format!("rtbench-explain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tpl = dir.join("t.json");
    std::fs::write(&tpl, SMOLLM3.replace("\"<tool_call>\"", "\"<toolcall>\"")).unwrap();
    let gen_file = dir.join("g.txt");
    std::fs::write(&gen_file, TOOL_CALL).unwrap();
    let run = |field: &str| {
        Command::new(env!("CARGO_BIN_EXE_rtbench"))
            .args([
                "explain",
                "--template",
                tpl.to_str().unwrap(),
                "--prefix",
                PROMPT,
                gen_file.to_str().unwrap(),
                field,
            ])
            .output()
            .unwrap()
    };
    let o = run("tool_calls");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let t = template(&SMOLLM3.replace("\"<tool_call>\"", "\"<toolcall>\""));
    // Places are named in the generation file (the prefix, given as --prefix, is in none).
    let places = Places {
        prefix: None,
        generation: Some(TextFile::whole(gen_file.display().to_string())),
    };
    let expected = explained(&t, PROMPT, TOOL_CALL, "tool_calls")
        .with_places(places)
        .lines()
        .join("\n")
        + "\n";
    assert_eq!(String::from_utf8_lossy(&o.stdout), expected);
    assert!(
        expected.contains(&format!("'<tool' at {}:4:1", gen_file.display())),
        "{expected}"
    );
    let o = run("answer");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no field 'answer'"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn another_regions_close_is_not_an_orphan() {
    // Both fields open with `<t>` and close with `</t>`: `a` (alphabetically first) takes the
    // region, and its `</t>` is not an orphan close of `b`.
    let t = template(
        r#"{"start_anchor": "A", "fields": {"b": {"open": "<t>", "close": "</t>"},
            "a": {"open": "<t>", "close": "</t>"}, "content": {"close": "E"}}}"#,
    );
    let e = explained(&t, "", "x<t>in</t>yE", "b");
    assert!(e.regions.is_empty());
    assert!(e.stray_closes.is_empty(), "{:?}", e.stray_closes);
    assert!(
        matches!(&e.missed_opens[..], [m] if matches!(&m.reason, rtbench_tooling::explain::Missed::Beaten { by, .. } if by == "a"))
    );
}

/// On a `.sample`, every place is named in the sample file, with the generation's (or the
/// prefix's) own line and column after it: one scheme for the workbench and the command line.
#[test]
fn headless_explain_names_places_in_the_sample_file() {
    let dir = std::env::temp_dir().join(format!("rtbench-explain-places-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tpl = dir.join("t.json");
    std::fs::write(&tpl, SMOLLM3.replace("\"<tool_call>\"", "\"<toolcall>\"")).unwrap();
    let sample = dir.join("x.sample");
    std::fs::write(
        &sample,
        format!("--- note ---\nn\n--- prefix (ends with newline) ---\n{PROMPT}--- generation ---\n{TOOL_CALL}\n"),
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args([
            "explain",
            "--template",
            tpl.to_str().unwrap(),
            sample.to_str().unwrap(),
            "tool_calls",
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{text}");
    // The generation starts on line 8 of the file; `<tool_call>` is on its 4th line.
    let name = sample.display();
    assert!(
        text.contains(&format!("'<tool' at {name}:11:1 (generation 4:1)")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "cut after the last start anchor at {name}:7:1 (prefix 4:1)"
        )),
        "{text}"
    );
}
