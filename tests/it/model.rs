//! The model's own files through the command line: `render` against the reference's own
//! renderer (transformers 5.24.0 + jinja2, outputs committed in
//! crates/chat/tests/data/chat_render), `decode` against the reference tokenizer
//! (crates/tokenize/tests/data/tokenizer), conversation and token-id samples, the round trip,
//! and the model-token chunkings of the replay and the chunking check.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use rtbench_tooling::chunking::Chunking;
use rtbench_tooling::model::{Model, model_chunkings, prepare};
use rtbench_tooling::replay::Replay;
use rtbench_tooling::sample::read_sample;
use serde_json::Value as J;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rtbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("rtbench runs")
}

fn json_file(rel: &str) -> J {
    serde_json::from_str(&std::fs::read_to_string(root().join(rel)).unwrap()).unwrap()
}

/// A scratch folder that is removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("rtbench-model-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn render_prints_what_the_reference_renders_for_every_bundled_chat_template() {
    let data = json_file("crates/chat/tests/data/chat_render/cases.json");
    let scratch = Scratch::new("render");
    let mut checked = 0;
    for case in data["cases"].as_array().unwrap() {
        // The cases of the bundled folders' own templates (inline templates are the crate's).
        let Some(file) = case["template_file"].as_str() else {
            continue;
        };
        let Some(expected) = case["expected"].as_str() else {
            continue;
        };
        let model = Path::new(file).parent().unwrap().display().to_string();
        let messages = scratch.write("messages.json", &case["messages"].to_string());
        let mut args = vec!["render", "--model", &model, "--messages", &messages];
        let tools;
        if !case["tools"].is_null() {
            tools = scratch.write("tools.json", &case["tools"].to_string());
            args.extend(["--tools", &tools]);
        }
        let kwargs = case["kwargs"].to_string();
        args.extend(["--kwargs", &kwargs]);
        if case["add_generation_prompt"] == J::Bool(false) {
            args.push("--no-generation-prompt");
        }
        let out = rtbench(&args);
        assert!(
            out.status.success(),
            "{}: {}",
            case["name"],
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            expected,
            "{}",
            case["name"]
        );
        checked += 1;
    }
    assert!(
        checked >= 60,
        "only {checked} cases of the bundled templates"
    );
}

#[test]
fn a_raised_template_error_is_located_in_the_chat_template() {
    let scratch = Scratch::new("raise");
    let messages = scratch.write("m.json", r#"[{"role": "robot", "content": "beep"}]"#);
    let out = rtbench(&[
        "render",
        "--model",
        "samples/qwen3",
        "--messages",
        &messages,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("samples/qwen3/chat_template.jinja:") && err.contains("robot"),
        "{err}"
    );
}

#[test]
fn decode_prints_what_the_reference_tokenizer_decodes() {
    let data = json_file("crates/tokenize/tests/data/tokenizer/cases.json");
    let mut checked = 0;
    for case in data["cases"].as_array().unwrap().iter().step_by(7) {
        let ids = case["ids"].to_string();
        let out = rtbench(&["decode", "--model", "samples/qwen3", "--ids", &ids]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            case["decoded"].as_str().unwrap(),
            "{}",
            case["name"]
        );
        checked += 1;
    }
    assert!(checked >= 20);
}

#[test]
fn conversation_and_id_samples_become_the_text_their_written_twins_hold() {
    // Every conversation sample has a written twin (its name without `conversation-`) whose
    // prefix the reference's renderer produces from the same messages: ours must too.
    let mut pairs: Vec<(PathBuf, PathBuf)> = vec![(
        root().join("samples/qwen3/ids-tool-call.sample"),
        root().join("samples/qwen3/one-tool-call.sample"),
    )];
    for dir in std::fs::read_dir(root().join("samples")).unwrap() {
        let dir = dir.unwrap().path();
        for f in std::fs::read_dir(&dir).into_iter().flatten() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if let Some(twin) = name.strip_prefix("conversation-") {
                let twin = match twin {
                    "tool-call.sample" => "one-tool-call.sample".to_string(),
                    "think.sample" => "think-then-answer.sample".to_string(),
                    t => t.to_string(),
                };
                pairs.push((f.clone(), dir.join(twin)));
            }
        }
    }
    assert!(pairs.len() >= 10, "{pairs:?}");
    for (conversation, written) in &pairs {
        let model = Model::open(conversation.parent().unwrap());
        let s = prepare(&read_sample(conversation).unwrap(), Some(&model)).unwrap();
        let twin = read_sample(written).unwrap();
        let c = conversation.display();
        assert_eq!(s.prefix, twin.prefix, "{c}");
        assert_eq!(s.generation, twin.generation, "{c}");
        assert_eq!(s.expected, twin.expected, "{c}");
    }
    // Through the command line too: the sample's expected (reference) message.
    let out = rtbench(&[
        "parse",
        "--template",
        "samples/qwen3",
        "samples/qwen3/ids-tool-call.sample",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: J = serde_json::from_slice(&out.stdout).unwrap();
    let expected = read_sample(&root().join("samples/qwen3/ids-tool-call.sample"))
        .unwrap()
        .expected
        .unwrap();
    assert_eq!(got, J::try_from(&expected).unwrap());
    // --messages replaces a prefix on the command line.
    let scratch = Scratch::new("messages");
    let m = scratch.write(
        "m.json",
        r#"[{"role": "user", "content": "Why is the sky blue? Two sentences."}]"#,
    );
    let out = rtbench(&[
        "parse",
        "--template",
        "samples/qwen3",
        "--messages",
        &m,
        "samples/qwen3/think-then-answer.sample",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_round_trip_reports_where_the_chat_template_writes_the_message_differently() {
    // Every difference in the bundled samples is marked expected.
    let out = rtbench(&["roundtrip", "samples/qwen3"]);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("3 differ as expected, 0 differ"),
        "{report}"
    );
    // Without its roundtrip section the same sample fails, saying where.
    let scratch = Scratch::new("roundtrip");
    for f in ["template.json", "chat_template.jinja", "tokenizer.json"] {
        std::fs::copy(root().join("samples/qwen3").join(f), scratch.0.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(root().join("samples/qwen3/conversation-tool-call.sample"))
        .unwrap();
    let cut = text.find("--- roundtrip ---").unwrap();
    let sample = scratch.write("s.sample", &text[..cut]);
    let out = rtbench(&["roundtrip", &sample]);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("writes the parsed message differently: at line 24, column 65"),
        "{report}"
    );
}

#[test]
fn model_tokens_hold_back_a_delimiter_split_across_tokens() {
    let dir = root().join("samples/qwen3-coder");
    let model = Model::open(&dir);
    let tokenizer = model.tokenizer().expect("the folder's tokenizer");
    let sample = read_sample(&dir.join("one-tool-call-typed-params.sample")).unwrap();
    let chunkings = model_chunkings(tokenizer, &sample.generation, None).unwrap();
    let Some(Chunking::ModelTokens(cuts)) = chunkings.first().cloned() else {
        panic!("{chunkings:?}");
    };
    assert!(matches!(chunkings.get(1), Some(Chunking::StreamerWords(_))));
    let (template, _) =
        rtbench_engine::template::source::load_file(&dir.join("template.json")).unwrap();
    let replay = Replay::new(
        template,
        sample.prefix.as_deref().unwrap_or(""),
        &sample.generation,
        sample.tools.as_ref(),
        Chunking::ModelTokens(cuts),
    );
    // After the token `<` of `<function=`, the open pattern might start: held back.
    let held: Vec<&str> = (0..replay.step_count())
        .map(|i| replay.held_text(i))
        .collect();
    assert!(held.contains(&"<tool_call>\n<"), "{held:?}");
    // And the chunking check agrees with the one-shot parse for the model's tokens too.
    let out = rtbench(&[
        "chunks",
        "--template",
        "samples/qwen3-coder",
        "samples/qwen3-coder/one-tool-call-typed-params.sample",
    ]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("model tokens (") && report.contains("streamer words ("),
        "{report}"
    );
}

#[test]
fn a_model_folder_as_shipped_is_a_template_with_its_chat_template_and_tokenizer() {
    // examples/qwen3-tiny: tokenizer_config.json holds the response template, the chat
    // template (a string) and the special tokens; tokenizer.json beside it.
    let out = rtbench(&["test", "examples/qwen3-tiny"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("3 passed, 0 failed"), "{report}");
    let out = rtbench(&["roundtrip", "examples/qwen3-tiny"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let model = Model::open(&root().join("examples/qwen3-tiny"));
    let names: Vec<String> = model
        .files()
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["tokenizer_config.json", "tokenizer.json"]);
}

/// `decode` drops ids outside the vocabulary, as the reference's `tokenizer.decode` does
/// (`PreTrainedTokenizerFast.from_pretrained("samples/qwen3").decode([27, 99999, 342])` gives
/// `'<tool'` on transformers 5.24 and 5.25), and says so on stderr.
#[test]
fn decode_drops_ids_outside_the_vocabulary_as_the_reference_does() {
    let out = rtbench(&[
        "decode",
        "--model",
        "samples/qwen3",
        "--ids",
        "[27, 99999, 342]",
    ]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "<tool");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("1 id(s) outside the vocabulary (99999)")
    );
}
