//! `rtbench grammar` and the grammar compiler: the four outputs of every bundled template with
//! the tools of its samples (committed under `tests/data/grammar/`; `RTBENCH_BLESS=1` rewrites
//! them), every bundled sample that parses without a loss accepted by its grammar, located
//! approximations, and the command's exit codes.

use std::path::PathBuf;
use std::process::{Command, Output};

use rtbench_engine::Value;
use rtbench_engine::template::source::{read_source, source_from_text};
use rtbench_grammar::{Grammar, LarkOptions, Options, ToolChoice, compile};
use rtbench_tooling::sample::parse_sample;

pub(super) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(super) fn rtbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(args)
        .current_dir(root())
        .env_remove("RTBENCH_REFERENCE")
        .output()
        .expect("rtbench runs")
}

/// The bundled formats: folders of samples/ with a template.json.
pub(super) fn formats() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root().join("samples"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("template.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn samples_of(format: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("samples").join(format))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "sample"))
        .collect();
    out.sort();
    out
}

fn to_json(v: &Value) -> serde_json::Value {
    serde_json::Value::try_from(v).unwrap()
}

/// The tools of a format's samples, each name once, in the order first seen.
fn tools_of(format: &str) -> Option<Vec<serde_json::Value>> {
    let mut tools: Vec<serde_json::Value> = Vec::new();
    for path in samples_of(format) {
        let sample = parse_sample(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
        if let Some(serde_json::Value::Array(list)) = sample.tools.as_ref().map(to_json) {
            for t in list {
                let name = t.pointer("/function/name").cloned();
                if !tools
                    .iter()
                    .any(|u| u.pointer("/function/name").cloned() == name)
                {
                    tools.push(t);
                }
            }
        }
    }
    (!tools.is_empty()).then_some(tools)
}

/// The end-of-sequence token of a format's tokenizer_config.json.
fn eos_of(format: &str) -> Vec<String> {
    let path = root()
        .join("samples")
        .join(format)
        .join("tokenizer_config.json");
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let config: serde_json::Value = serde_json::from_str(&text).unwrap();
    config["eos_token"]
        .as_str()
        .map(String::from)
        .into_iter()
        .collect()
}

fn grammar_of(format: &str) -> Grammar {
    let source = read_source(&root().join("samples").join(format).join("template.json")).unwrap();
    let options = Options {
        tools: tools_of(format),
        eos: eos_of(format),
        ..Options::default()
    };
    compile(&source, &options).unwrap()
}

#[test]
fn every_bundled_template_has_its_four_outputs_committed() {
    let bless = std::env::var("RTBENCH_BLESS").is_ok_and(|v| v == "1");
    let mut stale = Vec::new();
    for format in formats() {
        let g = grammar_of(&format);
        let dir = root().join("tests/data/grammar").join(&format);
        let outputs = [
            ("grammar.lark", g.to_lark(&LarkOptions::default())),
            ("grammar.gbnf", g.to_gbnf()),
            ("grammar.ebnf", g.to_ebnf()),
            ("structural-tag.json", g.to_structural_tag() + "\n"),
        ];
        for (file, text) in outputs {
            let path = dir.join(file);
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "outputs differ from the committed ones (RTBENCH_BLESS=1 rewrites them): {stale:#?}"
    );
}

#[test]
fn every_sample_that_parses_without_loss_is_accepted() {
    let mut checked = 0;
    let mut refused = Vec::new();
    for format in formats() {
        let dir = root().join("samples").join(&format);
        let source = read_source(&dir.join("template.json")).unwrap();
        let template = source.template().unwrap();
        for path in samples_of(&format) {
            let sample = parse_sample(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
            // Conversations and token ids need the model's files: the text samples say enough.
            if sample.model.is_needed() {
                continue;
            }
            let prefix = sample.prefix.clone().unwrap_or_default();
            let audit = rtbench_engine::audit(
                &template,
                &prefix,
                &sample.generation,
                sample.tools.as_ref(),
            );
            if audit.result.is_err() || !audit.losses.is_empty() {
                continue;
            }
            let options = Options {
                tools: sample.tools.as_ref().map(|t| match to_json(t) {
                    serde_json::Value::Array(list) => list,
                    _ => Vec::new(),
                }),
                prefix: Some(prefix),
                eos: eos_of(&format),
                ..Options::default()
            };
            let g = compile(&source, &options).unwrap();
            checked += 1;
            if !g.accepts(&sample.generation) {
                refused.push(path.display().to_string());
            }
        }
    }
    assert!(checked >= 60, "only {checked} samples checked");
    assert!(refused.is_empty(), "refused by their grammar: {refused:#?}");
}

fn qwen3() -> rtbench_engine::template::TemplateSource {
    read_source(&root().join("samples/qwen3/template.json")).unwrap()
}

fn qwen3_tools() -> Vec<serde_json::Value> {
    tools_of("qwen3").unwrap()
}

#[test]
fn tool_choice_and_parallel_decide_how_many_calls() {
    let source = qwen3();
    let call = |name: &str, args: &str| {
        format!("<tool_call>\n{{\"name\": \"{name}\", \"arguments\": {args}}}\n</tool_call>")
    };
    let one = call("get_weather", r#"{"city": "Oslo"}"#);
    let two = format!(
        "{one}\n{}",
        call(
            "convert_currency",
            r#"{"amount": 3, "from": "EUR", "to": "USD"}"#
        )
    );
    let grammar = |choice: ToolChoice, parallel: bool| {
        compile(
            &source,
            &Options {
                tools: Some(qwen3_tools()),
                tool_choice: choice,
                parallel,
                prefix: None,
                eos: Vec::new(),
            },
        )
        .unwrap()
    };
    let plain = "Hello!<|im_end|>";
    let auto = grammar(ToolChoice::Auto, true);
    assert!(auto.accepts(plain));
    assert!(auto.accepts(&format!("{one}<|im_end|>")));
    assert!(auto.accepts(&format!("Let me look.\n{two}<|im_end|>")));
    // A cast-able string for an integer parameter, as the parser casts it.
    assert!(auto.accepts(&format!(
        "{}<|im_end|>",
        call("get_weather", r#"{"city": "Oslo", "days": "3"}"#)
    )));
    // Not a tool, a missing required argument, an unknown argument, a wrong type.
    for bad in [
        call("get_time", r#"{"city": "Oslo"}"#),
        call("get_weather", r#"{"days": 3}"#),
        call("get_weather", r#"{"city": "Oslo", "country": "NO"}"#),
        call("get_weather", r#"{"city": "Oslo", "days": "three"}"#),
    ] {
        assert!(!auto.accepts(&format!("{bad}<|im_end|>")), "{bad}");
    }
    // Text on both sides of a call would lose the first part: refused.
    assert!(!auto.accepts(&format!("Before.\n{one}\nAfter.<|im_end|>")));
    // Text without its close is cut off by the parser (unclosed): the close is required.
    assert!(!auto.accepts("Hello!"));

    let single = grammar(ToolChoice::Auto, false);
    assert!(single.accepts(&format!("{one}<|im_end|>")));
    assert!(!single.accepts(&format!("{two}<|im_end|>")));

    let required = grammar(ToolChoice::Required, true);
    assert!(!required.accepts(plain));
    assert!(required.accepts(&format!("{two}<|im_end|>")));

    let named = grammar(ToolChoice::Named("convert_currency".into()), true);
    assert!(!named.accepts(&format!("{one}<|im_end|>")));
    assert!(named.accepts(&format!(
        "{}<|im_end|>",
        call(
            "convert_currency",
            r#"{"amount": 3, "from": "EUR", "to": "USD"}"#
        )
    )));

    let none = grammar(ToolChoice::None, true);
    assert!(none.accepts(plain));
    assert!(!none.accepts(&format!("{one}<|im_end|>")));
    // Text that would open a call is not free text either.
    assert!(!none.accepts("Use <tool_call> tags.<|im_end|>"));
}

#[test]
fn a_lookbehind_is_reported_at_its_line_and_column() {
    let text = r#"{
  "start_anchor": "<|assistant|>",
  "fields": {
    "thinking": {"open": "<think>", "close_pattern": "(?<=\\.)</think>"},
    "content": {"close": "<|end|>"}
  }
}"#;
    let source = source_from_text("t.json".into(), text.into()).unwrap();
    let g = compile(&source, &Options::default()).unwrap();
    assert_eq!(g.approximations.len(), 1, "{:#?}", g.approximations);
    let a = &g.approximations[0];
    assert_eq!((a.line, a.col), (4, 54));
    assert_eq!(a.key_path, "fields.thinking.close_pattern");
    assert_eq!(a.feature, "a lookbehind (?<=...)");
    assert_eq!(
        a.used,
        "the pattern without it, /<\\/think>/ (what must follow is not enforced)"
    );
}

#[test]
fn lookaheads_that_are_follow_constraints_are_exact() {
    // Mistral's close is only a lookahead; Llama's open fires only at the very start.
    for format in ["mistral", "llama3.2-pythonic"] {
        assert_eq!(grammar_of(format).approximations, Vec::new(), "{format}");
    }
    let llama = grammar_of("llama3.2-pythonic");
    assert!(llama.accepts(r#"[get_weather(city="Oslo", days=1)]<|eot_id|>"#));
    // After other text a call list is text: the parser reads it so, and so does the grammar.
    assert!(llama.accepts(r#"Sure. [get_weather(city="Oslo")]<|eot_id|>"#));
    // Text after the call list would be inside it.
    assert!(!llama.accepts(r#"[get_weather(city="Oslo")] Sure.<|eot_id|>"#));
    // Text starting with "[" would open the call list.
    assert!(!llama.accepts("[1] is a citation.<|eot_id|>"));
    assert!(llama.accepts("1 is a citation.<|eot_id|>"));
    let mistral = grammar_of("mistral");
    assert!(
        mistral
            .accepts(r#"[TOOL_CALLS]get_exchange_rate[ARGS]{"base": "USD", "quote": "JPY"}</s>"#)
    );
    // After a call whose close is a lookahead, text would be read into the call.
    assert!(
        !mistral.accepts(
            r#"[TOOL_CALLS]get_exchange_rate[ARGS]{"base": "USD", "quote": "JPY"}Done.</s>"#
        )
    );
}

#[test]
fn granites_thinking_close_constrains_what_follows_it() {
    // `</think>\s*(?:<response>|(?=[^<\s]|<\|))`: the close consumes `<response>`, or needs
    // what follows to begin with a character other than `<` and whitespace, or with `<|`.
    let g = grammar_of("granite-3.3");
    assert_eq!(g.approximations, []);
    assert!(g.accepts("<think>Hm.</think>\n\nHello!<|end_of_text|>"));
    assert!(g.accepts("<think>Hm.</think> <response>Hello!</response><|end_of_text|>"));
    assert!(g.accepts(
        "<think>Hm.</think>\n<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}]<|end_of_text|>"
    ));
    assert!(g.accepts("<think>Hm.</think><|end_of_text|>"));
    // Where the lookahead fails the parser never closes the thinking (the reference, 5.24 and
    // 5.25, reads `<think>Hm.</think>` at the end as thinking "Hm.</think>"): at the very
    // end, before whitespace alone, and before a `<` that is not `<|` or `<response>`.
    for text in [
        "<think>Hm.</think>",
        "<think>Hm.</think>\n",
        "<think>Hm.</think></response>",
        "<think>Hm.</think>\n</response><|end_of_text|>",
    ] {
        assert!(!g.accepts(text), "{text:?}");
    }
    let t = rtbench_engine::Template::from_json_str(
        &std::fs::read_to_string(root().join("samples/granite-3.3/template.json")).unwrap(),
    )
    .unwrap();
    let prefix = "<|start_of_role|>assistant<|end_of_role|>";
    let m = rtbench_engine::parse_response(&t, Some(prefix), "<think>Hm.</think>", None).unwrap();
    assert_eq!(
        m.get("thinking"),
        Some(&Value::from("Hm.</think>".to_string()))
    );
}

#[test]
fn a_prefilled_open_starts_the_grammar_inside_its_region() {
    let source = read_source(&root().join("samples/deepseek-r1/template.json")).unwrap();
    let options = Options {
        prefix: Some("<｜User｜>Hi<｜Assistant｜><think>\n".into()),
        ..Options::default()
    };
    let g = compile(&source, &options).unwrap();
    assert!(g.accepts("Greeting.\n</think>\n\nHello!<｜end▁of▁sentence｜>"));
    // The thinking must end: without its close it would take the answer.
    assert!(!g.accepts("Greeting. Hello!<｜end▁of▁sentence｜>"));
    let fresh = compile(&source, &Options::default()).unwrap();
    assert!(fresh.accepts("Greeting. Hello!<｜end▁of▁sentence｜>"));
}

#[test]
fn the_command_prints_the_grammar_and_its_approximations() {
    let o = rtbench(&[
        "grammar",
        "--template",
        "samples/qwen3",
        "--tools",
        "samples/qwen3/one-tool-call.sample",
        "--format",
        "lark",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    let path = root().join("samples/qwen3/one-tool-call.sample");
    let sample = parse_sample(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    let tools = match sample.tools.as_ref().map(to_json) {
        Some(serde_json::Value::Array(list)) => list,
        other => panic!("{other:?}"),
    };
    let options = Options {
        tools: Some(tools),
        ..Options::default()
    };
    let expected = compile(&qwen3(), &options)
        .unwrap()
        .to_lark(&LarkOptions::default());
    assert_eq!(String::from_utf8_lossy(&o.stdout), expected);

    let t = lookbehind_template();
    let o = rtbench(&["grammar", "--template", &t, "--format", "gbnf"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "{t}:5:54: warning: the grammar cannot express a negative lookbehind (?<!...) (at fields.thinking.close_pattern); it uses the pattern without it, /<\\/think>/ (what must follow is not enforced)\n"
        )
    );
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("root ::= "));
}

/// A template whose thinking close has a lookbehind (no grammar can say "not after a
/// backslash" about text it does not see), written to a temporary folder; its path.
fn lookbehind_template() -> String {
    let dir = std::env::temp_dir().join(format!("rtbench-grammar-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("template.json");
    std::fs::write(
        &path,
        r#"{
  "version": 1,
  "start_anchor": "<|assistant|>",
  "fields": {
    "thinking": {"open": "<think>", "close_pattern": "(?<!\\\\)</think>"},
    "content": {"close": "<|end|>"}
  }
}
"#,
    )
    .unwrap();
    path.display().to_string()
}

#[test]
fn the_command_exit_codes() {
    let code = |args: &[&str]| rtbench(args).status.code();
    // A missing template, a bad format, a tool choice naming no tool: usage errors.
    assert_eq!(
        code(&["grammar", "--template", "nope.json", "--format", "lark"]),
        Some(2)
    );
    assert_eq!(
        code(&["grammar", "--template", "samples/qwen3", "--format", "yaml"]),
        Some(2)
    );
    assert_eq!(
        code(&[
            "grammar",
            "--template",
            "samples/qwen3",
            "--tools",
            "samples/qwen3/one-tool-call.sample",
            "--tool-choice",
            "get_time",
            "--format",
            "lark",
        ]),
        Some(2)
    );
    // An invalid template, a tools file that is not a list of tools: the inputs are wrong.
    let dir = std::env::temp_dir().join(format!("rtbench-grammar-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"start_anchor": "A", "fields": {}}"#).unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(&tools, r#"{"name": "f"}"#).unwrap();
    assert_eq!(
        code(&[
            "grammar",
            "--template",
            bad.to_str().unwrap(),
            "--format",
            "lark"
        ]),
        Some(1)
    );
    assert_eq!(
        code(&[
            "grammar",
            "--template",
            "samples/qwen3",
            "--tools",
            tools.to_str().unwrap(),
            "--format",
            "lark"
        ]),
        Some(1)
    );
    for format in ["lark", "gbnf", "ebnf", "structural-tag"] {
        assert_eq!(
            code(&[
                "grammar",
                "--template",
                "samples/smollm3",
                "--format",
                format
            ]),
            Some(0)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lax_json_and_xml_tags_follow_the_tool_schemas() {
    // Gemma's bare keys and custom string markers; GLM's typed argument tags.
    let gemma = grammar_of("gemma4");
    assert!(gemma.accepts(
        "<|tool_call>call:find_restaurants{near:<|\"|>Gare du Nord<|\"|>,limit:5}<tool_call|><|tool_response>"
    ));
    assert!(!gemma.accepts(
        "<|tool_call>call:find_restaurants{limit:<|\"|>five<|\"|>}<tool_call|><|tool_response>"
    ));
    let glm = grammar_of("glm-4.5");
    let call = |args: &str| format!("<tool_call>get_weather\n{args}</tool_call><|observation|>");
    assert!(glm.accepts(&call(
        "<arg_key>city</arg_key>\n<arg_value>杭州</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>c</arg_value>\n"
    )));
    assert!(!glm.accepts(&call(
        "<arg_key>town</arg_key>\n<arg_value>杭州</arg_value>\n"
    )));
}

#[test]
fn a_string_parameter_never_reads_back_as_another_json_value() {
    // glm-4.5 reads each value with `json` and `allow_non_json`: `123` there is the number
    // 123 for 5.24 and 5.25 alike (xml-inline values are never left as strings by the tool
    // coercion), so a string parameter may be written as text that is not JSON, or quoted.
    let glm = grammar_of("glm-4.5");
    let city = |v: &str| {
        format!(
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>{v}</arg_value>\n</tool_call><|observation|>"
        )
    };
    for ok in [
        "Oslo",
        "new york",
        "2024-05-01",
        "\"123\"",
        "01",
        "trueish",
        "",
    ] {
        assert!(glm.accepts(&city(ok)), "{ok:?}");
    }
    // Text that begins with `[` or `{` is left out whole, JSON or not (`[oops` reads as a
    // string, but telling it from an array needs more than a regular language).
    for other in [
        "123",
        " 12 ",
        "-1.5e3",
        "true",
        "null",
        "NaN",
        "-Infinity",
        "[1]",
        "{}",
        "[oops",
    ] {
        assert!(!glm.accepts(&city(other)), "{other:?}");
    }
}

#[test]
fn lint_warns_where_the_grammar_approximates() {
    let t = lookbehind_template();
    let o = rtbench(&["lint", "--template", &t]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stdout);
    assert!(
        err.starts_with(
            "warning: a grammar for constrained decoding cannot express a negative lookbehind (?<!...) exactly: it uses the pattern without it, /<\\/think>/"
        ),
        "{err}"
    );
    assert!(err.contains(&format!(" --> {t}:5:54\n")), "{err}");
    let o = rtbench(&["lint", "--deny-warnings", "--template", &t]);
    assert_eq!(o.status.code(), Some(1));
    // Granite's thinking close looks ahead, which the grammar says exactly.
    let o = rtbench(&[
        "lint",
        "--deny-warnings",
        "--template",
        "samples/granite-3.3",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A template the grammar expresses exactly has no such warning.
    let o = rtbench(&["lint", "--deny-warnings", "--template", "samples/mistral"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_tool_name_cannot_run_on_into_what_follows_it() {
    // gpt-oss: `to=functions\.(?P<name>[^\s<]+)[^<]*` reads the longest name; after the name
    // the grammar allows only what ends it.
    let g = grammar_of("gpt-oss");
    let call = |name: &str| {
        format!(
            "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{{\"location\": \"Oslo\"}}<|call|>"
        )
    };
    assert!(g.accepts(&call("get_current_weather")));
    assert!(!g.accepts(&call("get_current_weatherX")));
}

#[test]
fn a_string_value_never_holds_the_regions_close() {
    // The parser cuts the region at `</tool_call>` even inside a JSON string.
    let options = Options {
        tools: Some(qwen3_tools()),
        ..Options::default()
    };
    let g = compile(&qwen3(), &options).unwrap();
    let call = |city: &str| {
        format!(
            "<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}\n</tool_call><|im_end|>"
        )
    };
    assert!(g.accepts(&call("Paris")));
    assert!(g.accepts(&call("a </tool_cal b")));
    assert!(!g.accepts(&call("</tool_call>")));
    assert!(!g.accepts(&call("x</tool_call>y")));
    // Lark writes such strings as a terminal that excludes the close (no `%json` there), and
    // the BNF outputs as rules that track it.
    let lark = g.to_lark(&LarkOptions::default());
    assert!(!lark.contains("%json"), "{lark}");
    assert!(
        lark.contains(r"& ~/(?s:.*)(?:<\/tool_call>)(?s:.*)/"),
        "{lark}"
    );
    let gbnf = g.to_gbnf();
    assert!(gbnf.contains(r#" ::= "\"" string-"#), "{gbnf}");
}

#[test]
fn special_tokens_not_shaped_like_bars_are_written_by_id() {
    let source = source_from_text(
        "t.json".into(),
        r#"{"start_anchor": "<s>", "fields": {
            "thinking": {"open": "[THINK]", "close": "[/THINK]"},
            "content": {"close": "</s>"}}}"#
            .into(),
    )
    .unwrap();
    let g = compile(&source, &Options::default()).unwrap();
    let special_tokens = [("[THINK]", 34), ("[/THINK]", 35), ("<|end|>", 2)]
        .into_iter()
        .map(|(s, id)| (s.to_string(), id))
        .collect();
    let lark = g.to_lark(&LarkOptions { special_tokens });
    assert!(lark.contains("<[34]>"), "{lark}");
    assert!(!lark.contains("\"[THINK]\""), "{lark}");
    // Without the tokenizer's tokens, they are text.
    let plain = g.to_lark(&LarkOptions::default());
    assert!(
        plain.contains(r"\[THINK\]") && !plain.contains("<[34]>"),
        "{plain}"
    );
}
