//! `rtbench lint --serve vllm`: vLLM's rules for serving a response template, each refusal
//! located at the key that breaks it with vLLM's own message, the bundled templates' verdicts,
//! the closing summary, and the option's usage errors.

use rtbench_engine::diagnostic::Severity;
use rtbench_engine::template::load_template;
use rtbench_engine::template::source::{read_source, source_from_text};
use rtbench_tooling::lint::serve_vllm::{Serving, vllm};

use crate::scratch::{Scratch, code, err, out, rtbench_in};

/// vLLM's message for an unsupported field or defaults key, listing `names`.
fn unsupported(names: &str) -> String {
    format!(
        "vLLM refuses this template: Invalid response_template metadata: response_template contains unsupported semantic fields: {names}. Supported fields are: ['content', 'thinking', 'tool_calls']"
    )
}

/// vLLM's message for a thinking or content field it cannot stream.
fn not_streamable(field: &str) -> String {
    format!(
        "vLLM refuses this template: Invalid response_template metadata: response_template field '{field}' uses semantics that cannot be streamed by the OpenAI serving adapter"
    )
}

/// The 1-based (line, column) of the first occurrence of `needle` in `text`.
fn position(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).expect("needle in text");
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (
        text[..at].matches('\n').count() + 1,
        text[line_start..at].chars().count() + 1,
    )
}

/// Applies the rules to template text (which the reference must load); the refusals as
/// (line, column, message), in file order.
fn refusals(text: &str) -> (Serving, Vec<(usize, usize, String)>) {
    let source = source_from_text("t.json".into(), text.into()).unwrap();
    load_template(source.template_value()).expect("the reference loads it");
    let serving = vllm(&source);
    let errors = serving
        .errors(&source)
        .into_iter()
        .map(|d| {
            assert_eq!(d.severity, Severity::Error);
            let at = d.location.expect("located");
            (at.line, at.column, d.message)
        })
        .collect();
    (serving, errors)
}

#[test]
fn bundled_templates_pass_except_gpt_oss_and_llama_pythonic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let folder = entry.unwrap().path();
        {
            let path = folder.join("template.json");
            if !path.exists() {
                continue;
            }
            let source = read_source(&path).unwrap();
            let serving = vllm(&source);
            let name = folder.file_name().unwrap().to_string_lossy().into_owned();
            let got: Vec<String> = serving
                .errors(&source)
                .into_iter()
                .map(|d| d.message)
                .collect();
            let want: Vec<String> = match name.as_str() {
                // Its reasoning is one region per analysis message, joined with "\n".
                "gpt-oss" => vec![not_streamable("thinking")],
                // vLLM's copy of chat_parsing predates the python-call-list parser.
                "llama3.2-pythonic" => vec![
                    "vLLM refuses this template: Invalid response_template metadata: Field 'tool_calls': unknown content parser 'python-call-list'. Available: ['bool', 'float', 'int', 'json', 'kv-lines', 'text', 'xml-inline']".to_string(),
                ],
                _ => vec![],
            };
            assert_eq!(got, want, "{}", path.display());
            assert!(!serving.tokenizer_config);
            // Every bundled template has a tool_calls field; these three have no reasoning.
            assert!(serving.tool_calls, "{name}");
            assert_eq!(
                serving.thinking,
                !["kimi-k2", "llama3.2-pythonic", "qwen3-coder"].contains(&name.as_str()),
                "{name}"
            );
            assert_eq!(serving.notes.len(), 0, "{name}: {:?}", serving.notes);
            seen.push(name);
        }
    }
    assert!(seen.len() >= 15, "only {} bundled templates", seen.len());
}

#[test]
fn each_refused_feature_is_located_at_its_key() {
    let text = r#"{
  "start_anchor": "A",
  "defaults": {"role": "assistant", "lang": "en"},
  "fields": {
    "thinking": {"open": "<think>", "close": "</think>", "repeats": true, "join": ""},
    "content": {"close": "E", "content": "json"},
    "citations": {"open": "<cite>", "close": "</cite>"},
    "tool_calls": {"open": "<tc>", "close": "</tc>", "content": "python-call-list"}
  }
}"#;
    let (serving, got) = refusals(text);
    let fields = unsupported("['citations', 'lang']");
    let at = |needle: &str| position(text, needle);
    assert_eq!(
        got,
        vec![
            (at("\"lang\"").0, at("\"lang\"").1, fields.clone()),
            (at("\"join\"").0, at("\"join\"").1, not_streamable("thinking")),
            (at("\"json\"").0, at("\"json\"").1, not_streamable("content")),
            (at("\"citations\"").0, at("\"citations\"").1, fields),
            (
                at("\"python-call-list\"").0,
                at("\"python-call-list\"").1,
                "vLLM refuses this template: Invalid response_template metadata: Field 'tool_calls': unknown content parser 'python-call-list'. Available: ['bool', 'float', 'int', 'json', 'kv-lines', 'text', 'xml-inline']".to_string()
            ),
        ]
    );
    assert!(!serving.loads());
}

#[test]
fn a_transform_on_thinking_is_refused_and_a_null_one_is_not() {
    let text = "{\"start_anchor\": \"A\", \"fields\": {\n  \"thinking\": {\"open\": \"<think>\", \"close\": \"</think>\",\n    \"transform\": \"{content}\"},\n  \"content\": {\"close\": \"E\", \"transform\": null, \"content\": \"text\"}}}";
    let (_, got) = refusals(text);
    let (line, col) = position(text, "\"transform\": \"{");
    assert_eq!(got, vec![(line, col, not_streamable("thinking"))]);
}

#[test]
fn a_python_call_list_on_content_is_refused_once_by_the_loader() {
    let text = "{\"start_anchor\": \"A\", \"fields\": {\n  \"content\": {\"content\": \"python-call-list\"}}}";
    let (_, got) = refusals(text);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0]
            .2
            .contains("unknown content parser 'python-call-list'")
    );
    assert_eq!((got[0].0, got[0].1), position(text, "\"python-call-list\""));
}

#[test]
fn what_vllm_serves_differently_is_a_note() {
    let text = "{\"start_anchor\": \"A\", \"fields\": {\n  \"thinking\": {\"open\": \"<think>\", \"close\": \"</think>\", \"optional\": false}}}";
    let source = source_from_text("t.json".into(), text.into()).unwrap();
    let serving = vllm(&source);
    assert!(serving.loads());
    let (line, col) = position(text, "\"optional\"");
    let summary = serving.summary(&source);
    assert!(
        summary.contains(&format!(
            "  note: t.json:{line}:{col}: vLLM serves every field as optional: an output without field 'thinking' is no error when served\n"
        )),
        "{summary}"
    );
    assert!(
        summary.contains("  note: t.json:1:23: vLLM adds an implicit 'content' field when every field has an open: text outside every region is served as content (the reference drops it)\n"),
        "{summary}"
    );
    // Without a tool_calls field the tool parser cannot start, so no request mode applies.
    assert!(summary.ends_with(
        "  --tool-call-parser response_template is refused: \"--tool-call-parser response_template requires a response_template with a tool_calls field\"\n"
    ), "{summary}");
}

#[test]
fn cli_refusal_exits_1_with_the_located_error_and_the_summary() {
    let s = Scratch::with_files(
        "serve",
        &[(
            "t.json",
            "{\"start_anchor\": \"A\", \"fields\": {\n  \"thinking\": {\"open\": \"<think>\", \"close\": \"</think>\"},\n  \"tool_calls\": {\"open\": \"<tc>\", \"close\": \"</tc>\", \"content\": \"json\"},\n  \"answer\": {\"close\": \"E\"}}}",
        )],
    );
    let o = rtbench_in(&s.0, &["lint", "--serve", "vllm", "--template", "t.json"]);
    assert_eq!(code(&o), 1, "{}", err(&o));
    assert_eq!(
        out(&o),
        format!(
            "error: {}
 --> t.json:4:3
  |
4 |   \"answer\": {{\"close\": \"E\"}}}}}}
  |   ^^^^^^^^
  |
  = help: vLLM's OpenAI adapter serves only thinking, content and tool_calls: rename field 'answer' to one of them, or remove it

serving with vLLM (the rules of vllm/parser/response_template.py at vllm-project/vllm@4ee83d19):
  vLLM refuses to load this template (1 error above)
  note: vLLM reads the template from the model's tokenizer_config.json (its \"response_template\" key): `rtbench export --template T CONFIG --write` puts it there
  requests with tools (and tool_choice other than \"none\") that vLLM refuses for field 'tool_calls' (t.json:3:3):
    strict tools (\"strict\": true): \"response_template parsing cannot guarantee strict tools without a format-compatible structural grammar\"
    tool_choice=\"required\": \"response_template parsing cannot guarantee required tool choice without a format-compatible structural grammar\"
    a named tool choice: \"response_template parsing cannot guarantee named tool choice without a format-compatible structural grammar\"
    parallel_tool_calls=false: \"response_template parsing cannot guarantee parallel_tool_calls=False without a format-compatible structural grammar\"
  `rtbench grammar --format structural-tag` can constrain strict tools (with the tools' JSON schemas, --tools), tool_choice=\"required\" (--tool-choice required), a named tool choice (--tool-choice NAME) and parallel_tool_calls=false (--parallel false)
t.json: no warnings; vLLM refuses to load it (1 error)
",
            unsupported("['answer']")
        )
    );
    // Without --serve the same template lints clean: the rules are vLLM's, not the reference's.
    let o = rtbench_in(&s.0, &["lint", "--template", "t.json"]);
    assert_eq!(
        (code(&o), out(&o)),
        (0, "t.json: no warnings\n".to_string())
    );
}

#[test]
fn the_modes_a_grammar_can_constrain_are_the_ones_it_compiles_exactly() {
    // xml-inline calls whose name is not a capture: the grammar cannot constrain them, and
    // says so for every mode, located at the transform.
    let s = Scratch::with_files(
        "serve-modes",
        &[(
            "t.json",
            "{\"start_anchor\": \"A\", \"fields\": {\n  \"tool_calls\": {\"open\": \"<tc>\", \"close\": \"</tc>\", \"content\": \"xml-inline\", \"content_args\": {\"tag_pattern\": \"<(?P<key>\\\\w+)>(?P<value>.*?)</\\\\w+>\"},\n    \"transform\": {\"function\": {\"name\": \"{content.name}\", \"arguments\": \"{content}\"}}},\n  \"content\": {\"close\": \"E\"}}}",
        )],
    );
    let o = rtbench_in(&s.0, &["lint", "--serve", "vllm", "--template", "t.json"]);
    assert_eq!(code(&o), 0, "{}", err(&o));
    let summary = out(&o);
    let modes = "strict tools (with the tools' JSON schemas, --tools), tool_choice=\"required\" (--tool-choice required), a named tool choice (--tool-choice NAME) and parallel_tool_calls=false (--parallel false)";
    assert!(
        summary.contains(&format!(
            "\n  `rtbench grammar` constrains {modes} only approximately: it cannot express tool calls built by this transform (xml-inline tool calls need the name in a capture and the arguments as {{content}}) (t.json:3:18)\nt.json: 1 warning\n"
        )),
        "{summary}"
    );
    assert!(!summary.contains("can constrain"), "{summary}");
}

#[test]
fn cli_unknown_server_is_a_usage_error_naming_the_accepted_values() {
    let s = Scratch::with_files("serve-usage", &[("t.json", "{}")]);
    let o = rtbench_in(&s.0, &["lint", "--serve", "sglang", "--template", "t.json"]);
    assert_eq!(code(&o), 2);
    assert!(out(&o).is_empty());
    assert!(
        err(&o).starts_with(
            "error: invalid value 'sglang' for '--serve <SERVER>'\n  [possible values: vllm]\n"
        ),
        "{}",
        err(&o)
    );
}
