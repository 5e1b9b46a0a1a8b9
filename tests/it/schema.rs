//! The JSON Schema of response templates (`schema/response-template.schema.json`, printed by
//! `rtbench schema`), checked with a draft-07 validator (the `jsonschema` crate):
//!
//! - it is a valid draft-07 schema, and so is the `tokenizer_config.json` schema built from it;
//! - it accepts every bundled template and every template the reference loads in the
//!   conformance cases, except where it flags what `rtbench lint` warns about at the same
//!   place;
//! - of the templates the reference refuses, it flags every one except those whose mistake no
//!   schema can express (a regex that does not compile, a second implicit field, nesting too
//!   deep), and at the place the engine's error names;
//! - each mistake class `check` and `lint` know and a schema can express is flagged at its key;
//! - it lists exactly the keys, parser names and parser options the engine reads.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use rtbench_engine::py::{ExceptionType, PathSeg, json_loads};
use rtbench_engine::template::load::{FIELD_KEYS, TEMPLATE_KEYS};
use rtbench_engine::value::Value;
use rtbench_engine::{ContentKind, Reference, Template};
use serde_json::Value as Json;

const SCHEMA: &str = include_str!("../../schema/response-template.schema.json");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> Json {
    serde_json::from_str(SCHEMA).expect("the schema is JSON")
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft7::new(&schema()).expect("the schema compiles")
}

/// The schema's errors on `instance`: each one's instance path (JSON pointer segments) and
/// message.
fn schema_errors(v: &jsonschema::Validator, instance: &Json) -> Vec<(Vec<String>, String)> {
    v.iter_errors(instance)
        .map(|e| {
            let pointer = e.instance_path().as_str().to_string();
            let segments = pointer
                .split('/')
                .skip(1)
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect();
            (segments, e.to_string())
        })
        .collect()
}

fn segments(path: &[PathSeg]) -> Vec<String> {
    path.iter()
        .map(|s| match s {
            PathSeg::Key(k) => k.clone(),
            PathSeg::Index(i) => i.to_string(),
        })
        .collect()
}

/// Whether two places are the same node or one holds the other.
fn related(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The places `rtbench lint` warns about in a template the engine loads, under either
/// reference version (the schema holds for both; `value_parser_by` is warned about under 5.24
/// whatever its shape).
fn lint_places(template: &Template, spec: &Value) -> Vec<Vec<String>> {
    [Reference::V5_25, Reference::V5_24]
        .into_iter()
        .flat_map(|r| {
            rtbench_tooling::lint::lint(&template.clone().with_reference(r), spec)
                .into_iter()
                .map(|e| segments(&e.path))
        })
        .collect()
}

/// Whether the engine's refusal is of a kind no JSON Schema can express: a pattern that does not
/// compile (or that rtbench cannot match exactly), more than one field without an open, or
/// nesting beyond the reference's recursion limit.
fn inexpressible(e: &rtbench_engine::TemplateError) -> bool {
    matches!(
        e.kind,
        ExceptionType::RecursionError | ExceptionType::Rtbench
    ) || e
        .message
        .starts_with("At most one field may omit 'open'/'open_pattern'")
        || (e.message.contains(": invalid ") && e.message.contains(" regex: "))
}

#[test]
fn schema_is_valid_draft_07_and_so_is_the_tokenizer_config_schema() {
    let s = schema();
    assert_eq!(s["$schema"], "http://json-schema.org/draft-07/schema#");
    if let Err(e) = jsonschema::draft7::meta::validate(&s) {
        panic!("the template schema is not valid draft-07: {e}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(["schema", "--tokenizer-config"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let config: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    if let Err(e) = jsonschema::draft7::meta::validate(&config) {
        panic!("the tokenizer_config schema is not valid draft-07: {e}");
    }
}

#[test]
fn rtbench_schema_prints_the_committed_schema() {
    let out = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .arg("schema")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), SCHEMA);
    assert!(out.stderr.is_empty());
}

/// Every template file of the repository that is meant to load: the bundled samples' and
/// example's, the scaffolds of `rtbench new`, and the test data's.
fn bundled_templates() -> Vec<(PathBuf, Value)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p
                .file_name()
                .is_some_and(|n| n == "template.json" || n == "tokenizer_config.json")
            {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for dir in ["samples", "examples", "schema/scaffolds", "tests/data"] {
        walk(&root().join(dir), &mut files);
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let value = json_loads(&text).unwrap();
        let template = if f.ends_with("tokenizer_config.json") {
            match value.as_dict().and_then(|d| d.get("response_template")) {
                Some(t) => t.clone(),
                None => continue,
            }
        } else {
            value
        };
        out.push((f, template));
    }
    out
}

#[test]
fn schema_accepts_every_bundled_template() {
    let v = validator();
    let templates = bundled_templates();
    let names: Vec<String> = templates
        .iter()
        .map(|(p, _)| p.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    // The folders this walks must hold what they held when this was written (and more).
    for expected in [
        "samples/smollm3/template.json",
        "samples/qwen3-coder/template.json",
        "samples/llama3.2-pythonic/template.json",
        "examples/qwen3-tiny/tokenizer_config.json",
        "schema/scaffolds/xml-parameters/template.json",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected} not found");
    }
    assert!(templates.len() >= 17, "{names:?}");
    for (path, template) in &templates {
        // Every bundled template loads (so the schema must accept it).
        Template::from_value(template)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
        let json = Json::try_from(template).unwrap();
        let errors = schema_errors(&v, &json);
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
}

#[test]
fn tokenizer_config_schema_checks_the_response_template_and_nothing_else() {
    let out = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(["schema", "--tokenizer-config"])
        .output()
        .unwrap();
    let schema: Json = serde_json::from_slice(&out.stdout).unwrap();
    let v = jsonschema::draft7::new(&schema).unwrap();
    let example =
        std::fs::read_to_string(root().join("examples/qwen3-tiny/tokenizer_config.json")).unwrap();
    let mut config: Json = serde_json::from_str(&example).unwrap();
    assert_eq!(schema_errors(&v, &config), vec![]);
    // Keys the template schema does not know are the config's own business.
    config["chat_template_kwargs_whatever"] = serde_json::json!([1, 2]);
    assert_eq!(schema_errors(&v, &config), vec![]);
    config["response_template"]["fields"]["content"]["repeats"] = serde_json::json!("false");
    let errors = schema_errors(&v, &config);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors[0].0,
        ["response_template", "fields", "content", "repeats"]
    );
}

/// What this test reads of a conformance case (serde skips the recorded streams, which are
/// most of the data, without building them).
#[derive(serde::Deserialize)]
struct Case {
    name: String,
    template: Json,
    check: Recorded,
}

#[derive(serde::Deserialize)]
struct Recorded {
    valid: bool,
}

/// Every template of the conformance cases, once each, with whether the reference loaded it.
/// A case whose text is not plain JSON (`NaN` in a recorded message) is read with the engine's
/// decoder, like Python's; its template is kept if plain JSON can hold it.
fn conformance_templates() -> Vec<(String, Json, bool)> {
    let dir = root().join("crates/engine/tests/data/conformance");
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut add = |text: &str| {
        let case = serde_json::from_str::<Case>(text).ok().or_else(|| {
            let v = json_loads(text).ok()?;
            let d = v.as_dict()?;
            Some(Case {
                name: d.get("name")?.as_str()?.to_string(),
                template: Json::try_from(d.get("template")?).ok()?,
                check: Recorded {
                    valid: d.get("check")?.as_dict()?.get("valid")?.truthy(),
                },
            })
        });
        let Some(case) = case else {
            panic!(
                "a conformance case this test cannot read: {}",
                &text[..text.len().min(200)]
            );
        };
        if seen.insert(case.template.to_string()) {
            out.push((case.name, case.template, case.check.valid));
        }
    };
    for sub in ["shared", "fuzz", "holdback", "budget", "v5.25"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let name = f.to_string_lossy();
            if name.ends_with(".json") {
                add(&std::fs::read_to_string(&f).unwrap());
            } else if name.ends_with(".jsonl.gz") {
                let mut text = String::new();
                std::io::Read::read_to_string(
                    &mut flate2::read::GzDecoder::new(std::fs::File::open(&f).unwrap()),
                    &mut text,
                )
                .unwrap();
                for line in text.lines().filter(|l| !l.trim().is_empty()) {
                    add(line);
                }
            }
        }
    }
    out
}

#[test]
fn schema_agrees_with_the_reference_on_every_conformance_template() {
    let v = validator();
    let templates = conformance_templates();
    assert!(templates.len() > 10_000, "{} templates", templates.len());
    let mut problems = Vec::new();
    let (mut accepted, mut flagged_lint, mut flagged_error, mut inexpressible_errors) =
        (0, 0, 0, 0);
    for (name, json, valid) in &templates {
        let errors = schema_errors(&v, json);
        if *valid && errors.is_empty() {
            // The engine loads what the reference loads: the conformance tests hold that.
            accepted += 1;
            continue;
        }
        let template = Value::try_from(json).unwrap();
        let loaded = Template::from_value(&template);
        assert_eq!(loaded.is_ok(), *valid, "{name}: the engine disagrees");
        match (loaded, errors.is_empty()) {
            (Ok(_), true) => unreachable!("counted above"),
            // Flagged though the reference loads it: only where lint warns about the same node.
            (Ok(t), false) => {
                let places = lint_places(&t, &template);
                for (at, message) in &errors {
                    if !places.iter().any(|p| related(p, at)) {
                        problems.push(format!(
                            "{name}: the schema flags /{} ({message}) where neither check nor lint does",
                            at.join("/")
                        ));
                    }
                }
                flagged_lint += 1;
            }
            (Err(e), true) => {
                if inexpressible(&e) {
                    inexpressible_errors += 1;
                } else {
                    problems.push(format!(
                        "{name}: the schema accepts a template the reference refuses: {}",
                        e.text()
                    ));
                }
            }
            (Err(e), false) => {
                let at = segments(&e.path);
                if !errors.iter().any(|(p, _)| related(p, &at)) && !inexpressible(&e) {
                    problems.push(format!(
                        "{name}: the reference refuses /{} ({}), the schema flags elsewhere: {errors:?}",
                        at.join("/"),
                        e.text()
                    ));
                }
                flagged_error += 1;
            }
        }
    }
    println!(
        "{} templates: {accepted} accepted, {flagged_error} refused and flagged, \
         {inexpressible_errors} refused for what no schema can say, {flagged_lint} loaded and \
         flagged where lint warns",
        templates.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // Every outcome is exercised, so none of the branches above is vacuous.
    assert!(accepted > 10_000 && flagged_error > 100 && flagged_lint >= 5);
    assert!(inexpressible_errors > 10);
}

/// How the product knows a mistake: `check` refuses the template, or `lint` warns.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Known {
    Check,
    Lint,
}

/// One template per mistake class, the node the schema must flag, and who else knows.
const MISTAKES: &[(&str, &str, &str, Known)] = &[
    ("not an object", r#"[]"#, "", Known::Check),
    (
        "version 2",
        r#"{"version": 2, "start_anchor": "A:", "fields": {"c": {}}}"#,
        "/version",
        Known::Check,
    ),
    (
        "unknown top-level key",
        r#"{"start_anchor": "A:", "fields": {"c": {}}, "feilds": {}}"#,
        "",
        Known::Check,
    ),
    (
        "a $schema key",
        r#"{"$schema": "./response-template.schema.json", "start_anchor": "A:", "fields": {"c": {}}}"#,
        "",
        Known::Check,
    ),
    (
        "defaults not an object",
        r#"{"start_anchor": "A:", "defaults": [], "fields": {"c": {}}}"#,
        "/defaults",
        Known::Check,
    ),
    (
        "fields missing",
        r#"{"start_anchor": "A:"}"#,
        "",
        Known::Check,
    ),
    (
        "fields empty",
        r#"{"start_anchor": "A:", "fields": {}}"#,
        "/fields",
        Known::Check,
    ),
    (
        "no start anchor",
        r#"{"fields": {"c": {}}}"#,
        "",
        Known::Check,
    ),
    (
        "both start anchors",
        r#"{"start_anchor": "A:", "start_anchor_pattern": "A:", "fields": {"c": {}}}"#,
        "",
        Known::Check,
    ),
    (
        "field not an object",
        r#"{"start_anchor": "A:", "fields": {"c": "text"}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "unknown field key",
        r#"{"start_anchor": "A:", "fields": {"c": {"opne": "<a>"}}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "unknown parser name",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "jsno"}}}"#,
        "/fields/c/content",
        Known::Check,
    ),
    (
        "parser name not a string",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": 3}}}"#,
        "/fields/c/content",
        Known::Check,
    ),
    (
        "open and open_pattern",
        r#"{"start_anchor": "A:", "fields": {"c": {"open": "<a>", "open_pattern": "<a>"}}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "close and close_pattern",
        r#"{"start_anchor": "A:", "fields": {"c": {"close": "<a>", "close_pattern": "<a>"}}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "empty literal",
        r#"{"start_anchor": "A:", "fields": {"c": {"open": ""}, "d": {}}}"#,
        "/fields/c/open",
        Known::Check,
    ),
    (
        "empty list of literals",
        r#"{"start_anchor": [], "fields": {"c": {}}}"#,
        "/start_anchor",
        Known::Check,
    ),
    (
        "empty literal in a list",
        r#"{"start_anchor": "A:", "fields": {"c": {"close": ["</c>", ""]}}}"#,
        "/fields/c/close/1",
        Known::Check,
    ),
    (
        "literal list of a number",
        r#"{"start_anchor": "A:", "fields": {"c": {"close": ["</c>", 1]}}}"#,
        "/fields/c/close/1",
        Known::Check,
    ),
    (
        "literal of the wrong type",
        r#"{"start_anchor": "A:", "fields": {"c": {"close": 5}}}"#,
        "/fields/c/close",
        Known::Check,
    ),
    (
        "pattern not a string",
        r#"{"start_anchor": "A:", "fields": {"c": {"close_pattern": ["</c>"]}}}"#,
        "/fields/c/close_pattern",
        Known::Check,
    ),
    (
        "join not a string",
        r#"{"start_anchor": "A:", "fields": {"c": {"repeats": true, "join": 1}}}"#,
        "/fields/c/join",
        Known::Check,
    ),
    (
        "join without repeats",
        r#"{"start_anchor": "A:", "fields": {"c": {"join": ""}}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "transform_each not a boolean",
        r#"{"start_anchor": "A:", "fields": {"c": {"transform": {"x": "{content}"}, "transform_each": 1}}}"#,
        "/fields/c/transform_each",
        Known::Check,
    ),
    (
        "transform_each without transform",
        r#"{"start_anchor": "A:", "fields": {"c": {"transform_each": true}}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "placeholder mixed with text",
        r#"{"start_anchor": "A:", "fields": {"c": {"transform": {"f": ["call {name}"]}}}}"#,
        "/fields/c/transform/f/0",
        Known::Check,
    ),
    (
        "named groups without transform",
        r#"{"start_anchor": "A:", "fields": {"c": {"open_pattern": "<(?P<name>\\w+)>"}, "d": {}}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "named group in a close pattern without transform",
        r#"{"start_anchor": "A:", "fields": {"c": {"close_pattern": "</(?<tag>\\w+)>"}}}"#,
        "/fields/c",
        Known::Check,
    ),
    (
        "boolean written as a string",
        r#"{"start_anchor": "A:", "fields": {"c": {"repeats": "false"}}}"#,
        "/fields/c/repeats",
        Known::Lint,
    ),
    (
        "optional null",
        r#"{"start_anchor": "A:", "fields": {"c": {"optional": null}}}"#,
        "/fields/c/optional",
        Known::Lint,
    ),
    (
        "options not an object",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "json", "content_args": []}}}"#,
        "/fields/c/content_args",
        Known::Lint,
    ),
    (
        "strip written as a string",
        r#"{"start_anchor": "A:", "fields": {"c": {"content_args": {"strip": "no"}}}}"#,
        "/fields/c/content_args/strip",
        Known::Lint,
    ),
    (
        "json option written as a number",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "json", "content_args": {"allow_non_json": 1}}}}"#,
        "/fields/c/content_args/allow_non_json",
        Known::Lint,
    ),
    (
        "unknown value_parser name",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "kv-lines", "content_args": {"value_parser": {"name": "jsn"}}}}}"#,
        "/fields/c/content_args/value_parser/name",
        Known::Lint,
    ),
    (
        "value_parser not an object",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "kv-lines", "content_args": {"value_parser": "json"}}}}"#,
        "/fields/c/content_args/value_parser",
        Known::Lint,
    ),
    (
        "nested parser options of the wrong type",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "kv-lines", "content_args": {"value_parser": {"name": "json", "args": {"unquoted_keys": "yes"}}}}}}"#,
        "/fields/c/content_args/value_parser/args/unquoted_keys",
        Known::Lint,
    ),
    (
        "xml-inline without tag_pattern",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "xml-inline", "content_args": {}}}}"#,
        "/fields/c/content_args",
        Known::Lint,
    ),
    (
        "xml-inline without options",
        r#"{"start_anchor": "A:", "fields": {"c": {"open": "<c>", "close": "</c>", "content": "xml-inline"}}}"#,
        "/fields/c",
        Known::Lint,
    ),
    (
        "tag_pattern not a string",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "xml-inline", "content_args": {"tag_pattern": 1}}}}"#,
        "/fields/c/content_args/tag_pattern",
        Known::Lint,
    ),
    (
        "tag_pattern without a key group",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "xml-inline", "content_args": {"tag_pattern": "<(?P<name>\\w+)>(?P<value>.*?)</(?P=name)>"}}}}"#,
        "/fields/c/content_args/tag_pattern",
        Known::Lint,
    ),
    (
        "empty kv_sep",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "kv-lines", "content_args": {"kv_sep": ""}}}}"#,
        "/fields/c/content_args/kv_sep",
        Known::Lint,
    ),
    (
        "line_sep not a string",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "kv-lines", "content_args": {"line_sep": 10}}}}"#,
        "/fields/c/content_args/line_sep",
        Known::Lint,
    ),
    (
        "value_parser_by without a string group",
        r#"{"start_anchor": "A:", "fields": {"c": {"content": "xml-inline", "content_args": {"tag_pattern": "<(?P<key>\\w+)>(?P<value>.*?)</(?P=key)>", "value_parser_by": {"group": 1, "parsers": {}}}}}}"#,
        "/fields/c/content_args/value_parser_by/group",
        Known::Lint,
    ),
];

#[test]
fn schema_flags_each_mistake_class_check_and_lint_know_at_its_key() {
    let v = validator();
    for (label, text, pointer, known) in MISTAKES {
        let json: Json = serde_json::from_str(text).unwrap();
        let errors = schema_errors(&v, &json);
        let want: Vec<String> = pointer.split('/').skip(1).map(String::from).collect();
        assert!(
            errors.iter().any(|(at, _)| *at == want),
            "{label}: the schema does not flag {pointer}: {errors:?}"
        );
        // The same mistake is the product's too, at the same place.
        let spec = json_loads(text).unwrap();
        match (known, Template::from_value(&spec)) {
            (Known::Check, Err(e)) => assert!(
                related(&segments(&e.path), &want),
                "{label}: check refuses it at {:?}",
                e.path
            ),
            (Known::Check, Ok(_)) => panic!("{label}: check accepts it"),
            (Known::Lint, Ok(t)) => assert!(
                lint_places(&t, &spec).iter().any(|p| related(p, &want)),
                "{label}: lint does not warn at {pointer}"
            ),
            (Known::Lint, Err(e)) => {
                panic!("{label}: check refuses it: {}", e.message)
            }
        }
    }
}

#[test]
fn named_groups_are_told_from_lookarounds_escapes_classes_and_comments() {
    let v = validator();
    // Whether a pattern declares a named group, as the engine compiles it, and whether the
    // schema asks for a transform: the same, for the ways a `(?P<` or `(?<` can appear.
    for pattern in [
        r"<(?P<name>\w+)>",
        r"<(?<name>\w+)>",
        r"(?:a|(?P<x>b))",
        r"[(]x(?P<x>y)",
        r"(?<=a)b",
        r"(?<!a)b",
        r"(?i)(?P<n>x)",
        r"\(?P<a>",
        r"\\(?P<a>x)",
        r"[(?P<a>]",
        r"[]()?P<a>]",
        r"[^]()?P<a>]",
        r"[](?P<a>)]",
        r"[^](?P<a>)]",
        r"[]x](?P<a>y)",
        r"(?#(?P<a>)x",
        r"a(?=(?P<ahead>b))",
    ] {
        let template = serde_json::json!({
            "start_anchor": "A:",
            "fields": {"c": {"open_pattern": pattern}, "d": {}}
        });
        let spec = Value::try_from(&template).unwrap();
        let groups = match Template::from_value(&spec) {
            Ok(_) => false,
            Err(e) if e.message.contains("declares named group") => true,
            Err(e) => panic!("{pattern}: {}", e.message),
        };
        let flagged = !schema_errors(&v, &template).is_empty();
        assert_eq!(flagged, groups, "{pattern}");
    }
}

#[test]
fn what_no_schema_can_say_is_left_to_check() {
    let v = validator();
    for text in [
        // A pattern that does not compile.
        r#"{"start_anchor": "A:", "fields": {"c": {"open_pattern": "(<a>"}, "d": {}}}"#,
        // Two fields without an open.
        r#"{"start_anchor": "A:", "fields": {"c": {}, "d": {}}}"#,
    ] {
        let json: Json = serde_json::from_str(text).unwrap();
        assert_eq!(schema_errors(&v, &json), vec![], "{text}");
        let e = Template::from_json_str(text).unwrap_err();
        let e = e.diagnostic().unwrap();
        assert!(e.message.starts_with("ValueError: "), "{}", e.message);
    }
}

/// The option names a content parser's source reads with `arg(args, "NAME")`.
fn options_read(file: &str) -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(root().join("crates/engine/src/content").join(file)).unwrap();
    text.split("arg(args, \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(String::from)
        .collect()
}

fn keys(object: &Json) -> BTreeSet<String> {
    object
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {object}"))
        .keys()
        .cloned()
        .collect()
}

#[test]
fn schema_lists_exactly_the_keys_parsers_and_options_the_engine_reads() {
    let s = schema();
    let d = &s["definitions"];
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(keys(&s["properties"]), set(&TEMPLATE_KEYS));
    assert_eq!(keys(&d["field"]["properties"]), set(&FIELD_KEYS));
    let names: Vec<&str> = ContentKind::NAMES.to_vec();
    let as_strs = |v: &Json| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(as_strs(&d["field"]["properties"]["content"]["enum"]), names);
    assert_eq!(
        as_strs(&d["valueParser"]["properties"]["name"]["enum"]),
        names
    );
    // One description per parser name, in the same order.
    assert_eq!(
        d["field"]["properties"]["content"]["markdownEnumDescriptions"]
            .as_array()
            .unwrap()
            .len(),
        names.len()
    );

    // Each parser's options are those its source reads (the text-stripping option through
    // `scalar::text`, which `json` and `kv-lines` call too).
    let strip = options_read("scalar.rs");
    assert_eq!(strip, set(&["strip"]));
    let with_strip =
        |file: &str| -> BTreeSet<String> { options_read(file).union(&strip).cloned().collect() };
    assert_eq!(keys(&d["scalarArgs"]["properties"]), strip);
    assert_eq!(keys(&d["jsonArgs"]["properties"]), with_strip("json.rs"));
    assert_eq!(
        keys(&d["xmlArgs"]["properties"]),
        options_read("xml_inline.rs")
    );
    assert_eq!(keys(&d["kvArgs"]["properties"]), with_strip("kv_lines.rs"));
    // And nothing else reads options by name.
    let mut all = BTreeSet::new();
    for file in std::fs::read_dir(root().join("crates/engine/src/content")).unwrap() {
        let name = file.unwrap().file_name().to_string_lossy().to_string();
        all.extend(options_read(&name));
    }
    let listed: BTreeSet<String> = ["scalarArgs", "jsonArgs", "xmlArgs", "kvArgs"]
        .iter()
        .flat_map(|k| keys(&d[k]["properties"]))
        .collect();
    assert_eq!(all, listed);

    // Every key and option carries its documentation, plain and for VS Code.
    let mut undocumented = Vec::new();
    let mut check = |at: String, node: &Json| {
        for k in ["description", "markdownDescription"] {
            if node[k].as_str().is_none_or(|t| t.len() <= 20) {
                undocumented.push(format!("{at}: {k}"));
            }
        }
    };
    for (k, node) in s["properties"].as_object().unwrap() {
        check(format!("/{k}"), node);
    }
    for def in [
        "field",
        "scalarArgs",
        "jsonArgs",
        "xmlArgs",
        "kvArgs",
        "valueParser",
        "valueParserBy",
    ] {
        for (k, node) in d[def]["properties"].as_object().unwrap() {
            let node = match node["$ref"].as_str() {
                Some(r) => &d[r.trim_start_matches("#/definitions/")],
                None => node,
            };
            check(format!("{def}/{k}"), node);
        }
    }
    assert!(undocumented.is_empty(), "{undocumented:?}");
}
