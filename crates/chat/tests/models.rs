//! ModelTemplates against the reference: the fixtures under
//! crates/chat/tests/data/chat_render/models were loaded by transformers 5.24.0
//! (`PreTrainedTokenizerFast.from_pretrained`) and rendered with
//! `apply_chat_template(chat_template=NAME, tools=..., tokenize=False)`; cases.json's `models`
//! records the special tokens and every choice.

use std::path::{Path, PathBuf};

use rtbench_chat::{ModelTemplates, RenderInput};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chat_render")
}

fn load(name: &str) -> Option<ModelTemplates> {
    ModelTemplates::from_folder(&data().join("models").join(name)).expect("load model folder")
}

#[test]
fn model_folders_match_the_reference() {
    let text = std::fs::read_to_string(data().join("cases.json")).unwrap();
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    let messages = serde_json::json!([{"role": "user", "content": "hi"}]);
    let tools = serde_json::json!([{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]);
    let mut checked = 0;
    for model in all["models"].as_array().unwrap() {
        let name = model["name"].as_str().unwrap();
        let loaded = load(name);
        assert_eq!(
            loaded.is_some(),
            model["has_template"].as_bool().unwrap(),
            "{name}: has a template"
        );
        let Some(mt) = loaded else { continue };
        // Same tokens, same order.
        let want: Vec<(&String, &serde_json::Value)> = model["special_tokens"]
            .as_object()
            .unwrap()
            .iter()
            .collect();
        let got: Vec<(&String, &serde_json::Value)> = mt.special_tokens().iter().collect();
        assert_eq!(got, want, "{name}: special tokens");
        for pick in model["picks"].as_array().unwrap() {
            let template_name = pick["template"].as_str();
            let with_tools = pick["tools"].as_bool().unwrap();
            let kwargs = mt.template_kwargs(&serde_json::Map::new());
            let input = RenderInput {
                messages: &messages,
                tools: with_tools.then_some(&tools),
                add_generation_prompt: false,
                kwargs: &kwargs,
            };
            let result = mt
                .resolve(template_name, with_tools)
                .and_then(|t| t.render(&input));
            match (pick.get("expected").and_then(|e| e.as_str()), result) {
                (Some(want), Ok(got)) => assert_eq!(
                    got, want,
                    "{name}: pick {template_name:?} tools={with_tools}"
                ),
                (None, Err(_)) => {}
                (want, got) => panic!(
                    "{name}: pick {template_name:?} tools={with_tools}: want {want:?}, got {got:?}"
                ),
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} picks checked");
}

#[test]
fn jinja_file_wins_over_the_config() {
    let mt = load("jinja-wins").unwrap();
    assert!(mt.names().is_none());
    assert!(
        mt.pick(None, false)
            .unwrap()
            .name()
            .ends_with("chat_template.jinja")
    );
    let files: Vec<String> = mt
        .files()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["tokenizer_config.json", "chat_template.jinja"]);
}

#[test]
fn template_files_replace_every_config_entry() {
    let mt = load("jinja-and-additional").unwrap();
    assert_eq!(mt.names().unwrap(), ["default", "tool_use"]);
    assert!(
        mt.pick(Some("rag"), false).is_err(),
        "the config's rag template is shadowed by the files"
    );
    assert!(
        mt.pick(None, true)
            .unwrap()
            .name()
            .ends_with("additional_chat_templates/tool_use.jinja")
    );
    assert_eq!(mt.files().len(), 3);
}

#[test]
fn string_and_list_configs() {
    let single = load("string-config").unwrap();
    assert!(single.names().is_none());
    assert!(
        single.pick(None, true).is_ok(),
        "a single template serves tools too"
    );
    assert!(single.pick(Some("tool_use"), false).is_err());
    assert_eq!(
        single.special_tokens()["eos_token"],
        "</s>",
        "an AddedToken's content"
    );
    assert!(
        !single.special_tokens().contains_key("pad_token"),
        "null tokens are left out"
    );
    assert_eq!(
        single.special_tokens()["image_token"],
        "<image>",
        "model-specific tokens"
    );

    let named = load("list-config").unwrap();
    assert_eq!(named.names().unwrap(), ["default", "rag", "tool_use"]);
    assert!(
        named
            .pick(None, false)
            .unwrap()
            .name()
            .ends_with("#chat_template[default]")
    );
    assert!(
        named
            .pick(None, true)
            .unwrap()
            .name()
            .ends_with("#chat_template[tool_use]")
    );
    assert!(
        named
            .pick(Some("rag"), true)
            .unwrap()
            .name()
            .ends_with("#chat_template[rag]")
    );

    let no_default = load("list-no-default").unwrap();
    let err = no_default.pick(None, false).unwrap_err();
    assert!(err.message.contains("no default specified"), "{err}");
    assert!(no_default.pick(None, true).is_ok());

    assert!(load("no-template").is_none());
}

#[test]
fn kwargs_override_special_tokens() {
    let mt = load("string-config").unwrap();
    let mut extra = serde_json::Map::new();
    extra.insert("eos_token".into(), "<END>".into());
    extra.insert("enable_thinking".into(), false.into());
    let kwargs = mt.template_kwargs(&extra);
    assert_eq!(kwargs["eos_token"], "<END>");
    assert_eq!(kwargs["bos_token"], "<s>");
    assert_eq!(kwargs["enable_thinking"], false);
}
