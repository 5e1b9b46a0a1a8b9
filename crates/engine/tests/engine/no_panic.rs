//! Robustness: random templates (well-formed, ill-typed and in between, with patterns full of
//! metacharacters) and random texts thrown at the loader and the parser, whole and chunked.
//! Errors are fine; panics and hangs are not.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use rtbench_engine::parser::Parser;
use rtbench_engine::template::load_template;
use rtbench_engine::value::{Dict, Value};

const PIECES: &[&str] = &[
    "<a>",
    "</a>",
    "<b>",
    "</b>",
    "<|x|>",
    "[",
    "]",
    "(",
    ")",
    "{",
    "}",
    "\\",
    "|",
    "*",
    "+",
    "?",
    ".",
    "^",
    "$",
    "a",
    "b",
    "é",
    "😀",
    "\n",
    " ",
    ":",
    "=",
    ",",
    "\"",
    "'",
    "(?=",
    "(?!",
    "(?<=",
    "(?P<name>",
    "(?P=name)",
    "\\w",
    "\\s",
    "\\d",
    "\\b",
    "\\Z",
    "{1,3}",
    "*?",
    "++",
    "(?i)",
    "[^<]",
    "\\x",
    "\\u12",
    "\\N{",
    "{content}",
    "{name}",
    "[1]",
    "true",
    "null",
    "1.5",
    "1e999",
];

fn piece_string() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 0..6).prop_map(|v| v.concat())
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..3).prop_map(Value::Int),
        Just(Value::Float(1.0)),
        piece_string().prop_map(Value::Str),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::List),
            proptest::collection::vec((piece_string(), inner), 0..4)
                .prop_map(|kv| Value::Dict(kv.into_iter().collect())),
        ]
    })
}

const FIELD_KEYS: &[&str] = &[
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
    "bogus",
];
const CONTENT: &[&str] = &[
    "text",
    "int",
    "float",
    "bool",
    "json",
    "xml-inline",
    "kv-lines",
    "python-call-list",
    "yaml",
];
const ARG_KEYS: &[&str] = &[
    "strip",
    "unquoted_keys",
    "string_delims",
    "allow_non_json",
    "tag_pattern",
    "value_parser",
    "merge_duplicates",
    "line_sep",
    "kv_sep",
    "name",
    "args",
];

fn field_value(key: &'static str) -> BoxedStrategy<Value> {
    match key {
        "open" | "close" => prop_oneof![
            piece_string().prop_map(Value::Str),
            proptest::collection::vec(piece_string().prop_map(Value::Str), 0..3)
                .prop_map(Value::List),
            json_value(),
        ]
        .boxed(),
        "open_pattern" | "close_pattern" => {
            prop_oneof![piece_string().prop_map(Value::Str), json_value()].boxed()
        }
        "content" => prop_oneof![
            proptest::sample::select(CONTENT).prop_map(Value::from),
            json_value()
        ]
        .boxed(),
        "content_args" => prop_oneof![
            proptest::collection::vec((proptest::sample::select(ARG_KEYS), json_value()), 0..4)
                .prop_map(|kv| Value::Dict(
                    kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
                )),
            json_value(),
        ]
        .boxed(),
        _ => json_value().boxed(),
    }
}

fn field() -> impl Strategy<Value = Value> {
    proptest::collection::vec(proptest::sample::select(FIELD_KEYS), 0..6)
        .prop_flat_map(|keys| {
            keys.into_iter()
                .map(|k| field_value(k).prop_map(move |v| (k.to_string(), v)))
                .collect::<Vec<_>>()
        })
        .prop_map(|kv| Value::Dict(kv.into_iter().collect::<Dict>()))
}

fn template() -> impl Strategy<Value = Value> {
    (
        proptest::collection::vec(
            (
                proptest::sample::select(&["content", "thinking", "tool_calls", "a"][..]),
                field(),
            ),
            1..4,
        ),
        prop_oneof![
            piece_string().prop_map(|s| ("start_anchor", Value::Str(s))),
            piece_string().prop_map(|s| ("start_anchor_pattern", Value::Str(s))),
        ],
        json_value(),
    )
        .prop_map(|(fields, (anchor_key, anchor), defaults)| {
            let mut t = Dict::new();
            t.insert(
                "fields",
                Value::Dict(
                    fields
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                ),
            );
            t.insert(anchor_key, anchor);
            if let Value::Dict(_) = defaults {
                t.insert("defaults", defaults);
            }
            Value::Dict(t)
        })
}

/// A template with the right shape (so that most of them load): literal or pattern
/// delimiters built from the same pieces, real content parsers, transforms that use captures.
fn well_formed_template() -> impl Strategy<Value = Value> {
    let delim = prop_oneof![
        piece_string()
            .prop_filter("non-empty", |s| !s.is_empty())
            .prop_map(|s| ("lit", Value::Str(s))),
        piece_string().prop_map(|s| ("pat", Value::Str(s))),
    ];
    let field = (
        proptest::option::of(delim.clone()),
        proptest::option::of(delim),
        proptest::sample::select(CONTENT),
        any::<bool>(),
    )
        .prop_map(|(open, close, content, repeats)| {
            let mut f = Dict::new();
            for (key, d) in [("open", open), ("close", close)] {
                if let Some((kind, v)) = d {
                    let k = if kind == "lit" {
                        key.to_string()
                    } else {
                        format!("{key}_pattern")
                    };
                    f.insert(k, v);
                }
            }
            f.insert("content", Value::from(content));
            f.insert("repeats", Value::Bool(repeats));
            f.insert(
                "transform",
                Value::Dict(Dict::from_iter([(
                    "v".to_string(),
                    Value::from("{content}"),
                )])),
            );
            Value::Dict(f)
        });
    proptest::collection::vec(field, 1..4).prop_map(|fields| {
        let mut t = Dict::new();
        let names = ["thinking", "tool_calls", "content", "a"];
        t.insert(
            "fields",
            Value::Dict(
                fields
                    .into_iter()
                    .enumerate()
                    .map(|(i, f)| (names[i].to_string(), f))
                    .collect(),
            ),
        );
        t.insert("start_anchor", Value::from("<s>"));
        Value::Dict(t)
    })
}

/// Feeds `text` in chunks of `sizes` code points (cycled) and finalizes; errors are fine.
fn exercise(tpl: &Value, prefix: &str, text: &str, sizes: &[usize]) -> bool {
    let Ok(template) = load_template(tpl) else {
        return false;
    };
    if let Ok(mut p) = Parser::new(&template, Some(prefix), None) {
        let chars: Vec<char> = text.chars().collect();
        let (mut i, mut k) = (0, 0);
        while i < chars.len() {
            let n = sizes[k % sizes.len()];
            let chunk: String = chars[i..(i + n).min(chars.len())].iter().collect();
            if p.feed(&chunk).is_err() {
                return true;
            }
            i += n;
            k += 1;
        }
        let _ = p.finalize();
    }
    true
}

fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece_string(), 0..8).prop_map(|v| v.concat())
}

#[test]
fn most_well_formed_templates_load() {
    // Guards the generator: a no-panic test whose templates never load would test nothing.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = well_formed_template();
    let loaded = (0..500)
        .filter(|_| load_template(&strategy.new_tree(&mut runner).unwrap().current()).is_ok())
        .count();
    assert!(
        loaded >= 150,
        "only {loaded} of 500 generated templates load"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn well_formed_templates_never_panic(
        tpl in well_formed_template(),
        prefix in piece_string(),
        text in text(),
        sizes in proptest::collection::vec(1usize..5, 1..4),
    ) {
        exercise(&tpl, &prefix, &text, &sizes);
    }

    #[test]
    fn loader_and_parser_never_panic(
        tpl in template(),
        prefix in piece_string(),
        text in text(),
        sizes in proptest::collection::vec(1usize..5, 1..4),
    ) {
        exercise(&tpl, &prefix, &text, &sizes);
    }
}
