//! Control tokens and sanitized prompts against the reference: for every bundled model folder
//! with a chat template, the control tokens 5.25's token-id decoder uses, and the prompt ids of
//! each recorded conversation with and without `sanitize_control_tokens=True`
//! (`data/chat_render/sanitize.json`, written by `tools/chat/sanitize_cases.py`).

use std::path::Path;

use rtbench_engine::py::json_loads;
use rtbench_engine::value::Value;
use rtbench_tooling::model::{Conversation, Model, render_ids};

fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.as_dict()
        .and_then(|d| d.get(key))
        .unwrap_or_else(|| panic!("no {key:?}"))
}

fn ids(v: &Value) -> Result<Vec<u64>, String> {
    match v {
        Value::List(items) => Ok(items
            .iter()
            .map(|i| match i {
                Value::Int(n) => *n as u64,
                other => panic!("not an id: {other:?}"),
            })
            .collect()),
        Value::Dict(d) => Err(d["error"].as_str().unwrap_or("").to_string()),
        other => panic!("neither ids nor an error: {other:?}"),
    }
}

#[test]
fn control_tokens_and_sanitized_prompts_match_the_reference() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/data/chat_render/sanitize.json")).unwrap();
    let data = json_loads(&text).unwrap();
    let mut checked = 0;
    for entry in get(&data, "models").as_list().unwrap() {
        let dir = root.join(get(entry, "model").as_str().unwrap());
        let model = Model::open(&dir);
        let expected: Vec<&str> = get(entry, "control_tokens")
            .as_list()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let got = model.control_tokens().unwrap();
        assert_eq!(got.spellings(), expected.as_slice(), "{}", dir.display());
        for case in get(entry, "cases").as_list().unwrap() {
            let name = get(case, "name").as_str().unwrap();
            let tools = Some(get(case, "tools")).filter(|t| !matches!(t, Value::Null));
            let kwargs = get(case, "kwargs");
            let conversation = Conversation {
                messages: get(case, "messages"),
                tools,
                kwargs: Some(kwargs),
                add_generation_prompt: true,
            };
            for (key, sanitize) in [("ids", false), ("sanitized", true)] {
                let want = ids(get(case, key));
                let got = render_ids(&model, &conversation, sanitize)
                    .map(|v| v.into_iter().map(u64::from).collect::<Vec<_>>())
                    .map_err(|e| e.to_string());
                match (&want, &got) {
                    (Ok(w), Ok(g)) => assert_eq!(g, w, "{} {name} {key}", dir.display()),
                    (Err(w), Err(g)) => assert!(
                        g.contains(w.as_str()) || w.starts_with(g.as_str()),
                        "{} {name} {key}: expected {w}, got {g}",
                        dir.display()
                    ),
                    _ => panic!(
                        "{} {name} {key}: expected {want:?}, got {got:?}",
                        dir.display()
                    ),
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 80, "only {checked} prompts checked");
}
