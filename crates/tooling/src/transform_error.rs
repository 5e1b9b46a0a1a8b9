//! A failed `transform`, located where the mistake is: the template's placeholder (or its
//! `transform_each` key), not the region's body, with what to do given the shape of the value
//! the content parser made (a list of objects having the key asks for `transform_each`; an
//! object having it, for `{content.key}`; a near name, for the name).
//!
//! The reference's exception (type and message) is left as it is: this is what rtbench adds
//! under it, in the workbench's diagnostics and under `rtbench parse`'s `error:` line.

use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::parser::ParseError;
use rtbench_engine::py::PathSeg;
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::template::{Field, Template};
use rtbench_engine::value::{Dict, Value};

/// What a transform error is about.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Cause {
    /// A placeholder (its path inside the braces, `name` or `content.a.b`).
    Placeholder(String),
    /// `transform_each` got a value it cannot walk.
    Each,
}

/// The cause of `message` if it is one of the transform's errors.
fn cause(message: &str) -> Option<Cause> {
    const PLACEHOLDER: &str = "transform placeholder '{";
    if let Some(at) = message.find(PLACEHOLDER) {
        let rest = &message[at + PLACEHOLDER.len()..];
        let end = rest.find("}'")?;
        return Some(Cause::Placeholder(rest[..end].to_string()));
    }
    message
        .contains("transform_each requires")
        .then_some(Cause::Each)
}

/// For a parse error of a field's transform: a note located at the placeholder that failed (or
/// the field's `transform_each`) in the template file, with advice that fits the value the
/// content parser made of the region's body (`document` is the prefix and generation the
/// error's body range points into). `None` for any other error.
pub fn transform_note(
    source: &TemplateSource,
    template: &Template,
    error: &ParseError,
    document: &str,
) -> Option<Diagnostic> {
    let name = error.field.as_deref()?;
    let field = template.fields().get(template.field_index(name)?)?;
    field.transform.as_ref()?;
    let cause = cause(&error.message)?;
    let parsed = failed_content(template, error, document);
    let base = vec![
        PathSeg::Key("fields".into()),
        PathSeg::Key(name.to_string()),
    ];
    let (message, path, help) = match &cause {
        Cause::Placeholder(path) => {
            let mut at = base.clone();
            at.push(PathSeg::Key("transform".into()));
            let spec = source
                .template_value()
                .as_dict()
                .and_then(|d| d.get("fields"))
                .and_then(Value::as_dict)
                .and_then(|d| d.get(name))
                .and_then(Value::as_dict)
                .and_then(|d| d.get("transform"));
            if let Some(inner) = spec.and_then(|t| find_string(t, &format!("{{{path}}}"))) {
                at.extend(inner);
            }
            let help = placeholder_help(field, path, parsed.as_ref());
            // A misspelt name: the nearest name in scope first.
            let root = path.split('.').next().unwrap_or(path);
            // Sorted, so that of equally close names the first alphabetically is offered.
            let mut names = available(&error.message);
            names.sort_unstable();
            let others = names.iter().map(String::as_str).filter(|n| *n != root);
            let help = match crate::lint::closest(root, others) {
                Some(near) if !help.contains("transform_each") => {
                    let fixed = path.replacen(root, near, 1);
                    format!("did you mean `{{{fixed}}}`? ({help})")
                }
                _ => help,
            };
            (
                format!("the placeholder '{{{path}}}' in the transform of field '{name}'"),
                at,
                help,
            )
        }
        Cause::Each => {
            let mut at = base.clone();
            at.push(PathSeg::Key("transform_each".into()));
            (
                format!("the transform_each of field '{name}'"),
                at,
                each_help(parsed.as_ref()),
            )
        }
    };
    Some(locate(source, Diagnostic::error(message), &path).with_help(Some(help)))
}

/// The diagnostic at the node `path` of the template (its value), or the nearest node above it
/// that the file has.
fn locate(source: &TemplateSource, d: Diagnostic, path: &[PathSeg]) -> Diagnostic {
    let d = d.in_file(source.name.clone());
    let mut path = path;
    loop {
        if let Some(node) = source.node(path) {
            return d.at(&source.text, node.value.clone());
        }
        match path.split_last() {
            Some((_, parent)) => path = parent,
            None => return d,
        }
    }
}

/// The path (inside `t`) of the first string equal to `text`, in the order the reference
/// applies a transform (keys in order, then list items).
fn find_string(t: &Value, text: &str) -> Option<Vec<PathSeg>> {
    fn go(t: &Value, text: &str, at: &mut Vec<PathSeg>, depth: usize) -> bool {
        if depth > 200 {
            return false;
        }
        match t {
            Value::Str(s) => s == text,
            Value::Dict(d) => d.iter().any(|(k, v)| {
                at.push(PathSeg::Key(k.to_owned()));
                let found = go(v, text, at, depth + 1);
                if !found {
                    at.pop();
                }
                found
            }),
            Value::List(items) => items.iter().enumerate().any(|(i, v)| {
                at.push(PathSeg::Index(i));
                let found = go(v, text, at, depth + 1);
                if !found {
                    at.pop();
                }
                found
            }),
            _ => false,
        }
    }
    let mut at = Vec::new();
    go(t, text, &mut at, 0).then_some(at)
}

/// What the content parser made of the body of the region whose transform (or anything after
/// the content parser) failed with `error`: the value the transform was given. `None` when the
/// error names no field or body, or the body does not parse.
pub fn failed_content(template: &Template, error: &ParseError, document: &str) -> Option<Value> {
    let field = template
        .fields()
        .get(template.field_index(error.field.as_deref()?)?)?;
    let body = document.get(error.body.clone()?)?;
    parsed_content(field, body, template)
}

/// What the content parser makes of the body, within a regex work budget (a `tag_pattern`
/// searches the body again).
fn parsed_content(field: &Field, body: &str, template: &Template) -> Option<Value> {
    const BASE: u64 = pyregex::REFERENCE_TEN_SECONDS;
    pyregex::Budget::new(BASE.saturating_add(1_024u64.saturating_mul(body.len() as u64)))
        .run(|| field.parsed_content(body, template.reference()))
}

/// The names in scope a `KeyError` lists: `Available: ['content', 'name']`.
fn available(message: &str) -> Vec<String> {
    let Some(at) = message.find("Available: [") else {
        return Vec::new();
    };
    let rest = &message[at + "Available: [".len()..];
    let list = rest.split(']').next().unwrap_or("");
    list.split(", ")
        .map(|n| n.trim_matches(['\'', '"']).to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

/// `` `a`, `b` and `c` `` (sorted).
fn names(keys: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let mut keys: Vec<String> = keys.into_iter().map(|k| k.as_ref().to_string()).collect();
    keys.sort();
    keys.dedup();
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    match quoted.split_last() {
        None => "none".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The keys every object of `items` has, when every item is an object.
fn list_of_objects(items: &[Value]) -> Option<Vec<&Dict>> {
    items.iter().map(Value::as_dict).collect()
}

/// What to write for a placeholder `{path}` the transform could not resolve, given the parsed
/// content.
fn placeholder_help(field: &Field, path: &str, parsed: Option<&Value>) -> String {
    let root = path.split('.').next().unwrap_or(path);
    let first_key = path.split('.').nth(1);
    match parsed {
        Some(Value::List(items)) if !field.transform_each => {
            let looked_up = if root == "content" {
                first_key
            } else {
                Some(root)
            };
            match (list_of_objects(items), looked_up) {
                (Some(objects), Some(key))
                    if !objects.is_empty() && objects.iter().all(|o| o.contains_key(key)) =>
                {
                    format!(
                        "the parsed content is a list of {} object{} with keys {}: add \"transform_each\": true to the field, so that the transform is applied to each object with its keys in scope (`{{{key}}}`)",
                        objects.len(),
                        if objects.len() == 1 { "" } else { "s" },
                        names(objects.iter().flat_map(|o| o.keys())),
                    )
                }
                _ => format!(
                    "the parsed content is a list of {} item{}: placeholders see `content` and the delimiters' named groups; `{{content}}` takes the whole list",
                    items.len(),
                    if items.len() == 1 { "" } else { "s" }
                ),
            }
        }
        Some(Value::Dict(d)) if root != "content" && d.contains_key(root) => format!(
            "the parsed content is an object with keys {}: write `{{content.{path}}}` to take its `{root}`",
            names(d.keys())
        ),
        Some(Value::Dict(d)) => format!(
            "the parsed content is an object with keys {}",
            names(d.keys())
        ),
        Some(other) => format!(
            "the parsed content is {} ({}); placeholders see `content` and the delimiters' named groups",
            article(other.type_name()),
            short(other)
        ),
        None => "placeholders see `content` (the parsed body) and the delimiters' named groups"
            .to_string(),
    }
}

/// What to write when `transform_each` met a value it cannot walk.
fn each_help(parsed: Option<&Value>) -> String {
    match parsed {
        Some(Value::List(items)) => match items.iter().find(|v| v.as_dict().is_none()) {
            Some(bad) => format!(
                "the parsed content is a list, but not of objects ({} is {}): transform_each needs a list of objects",
                short(bad),
                article(bad.type_name())
            ),
            None => "transform_each needs a list of objects".into(),
        },
        Some(Value::Dict(d)) => format!(
            "the parsed content is one object (keys {}), not a list: remove \"transform_each\" and write `{{content.key}}` placeholders, or `repeats` for one object per region",
            names(d.keys())
        ),
        Some(other) => format!(
            "the parsed content is {} ({}), not a list of objects: remove \"transform_each\"",
            article(other.type_name()),
            short(other)
        ),
        None => "transform_each needs the parsed content to be a list of objects".into(),
    }
}

/// `a str`, `an int`.
fn article(type_name: &str) -> String {
    let an = type_name.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {type_name}", if an { "an" } else { "a" })
}

/// A value's repr, cut to 40 characters.
fn short(v: &Value) -> String {
    let r = v.py_repr();
    match r.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &r[..i]),
        None => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::parser::parse_response;
    use rtbench_engine::template::source::source_from_text;

    const TEMPLATE: &str = r#"{
  "start_anchor": "<a>",
  "fields": {
    "tool_calls": {
      "open": "<|tool_call|>",
      "content": "json",
      "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}
    }
  }
}"#;

    fn failed(template: &str, generation: &str) -> Option<Diagnostic> {
        let source = source_from_text("t.json".into(), template.into()).unwrap();
        let t = source.template().unwrap();
        let e = parse_response(&t, Some("<a>"), generation, None).unwrap_err();
        transform_note(&source, &t, &e, &format!("<a>{generation}"))
    }

    #[test]
    fn a_forgotten_transform_each_is_said_at_the_placeholder() {
        let g = r#"<|tool_call|>[{"name": "f", "arguments": {}}, {"name": "g", "arguments": {"x": 1}}]"#;
        let d = failed(TEMPLATE, g).unwrap();
        assert_eq!(d.position().as_deref(), Some("t.json:7:62"));
        assert_eq!(
            d.location.as_ref().map(|l| l.caret_len),
            Some("\"{name}\"".len())
        );
        assert_eq!(
            d.help.as_deref(),
            Some(
                "the parsed content is a list of 2 objects with keys `arguments` and `name`: add \"transform_each\": true to the field, so that the transform is applied to each object with its keys in scope (`{name}`)"
            )
        );
        // With transform_each the same template parses.
        let each = TEMPLATE.replace(
            "\"content\": \"json\",",
            "\"content\": \"json\", \"transform_each\": true,",
        );
        let source = source_from_text("t.json".into(), each).unwrap();
        assert!(parse_response(&source.template().unwrap(), Some("<a>"), g, None).is_ok());
    }

    #[test]
    fn a_key_of_an_object_asks_for_content_dot_key() {
        let d = failed(TEMPLATE, r#"<|tool_call|>{"name": "f", "arguments": {}}"#).unwrap();
        assert_eq!(d.position().as_deref(), Some("t.json:7:62"));
        assert_eq!(
            d.help.as_deref(),
            Some(
                "the parsed content is an object with keys `arguments` and `name`: write `{content.name}` to take its `name`"
            )
        );
    }

    #[test]
    fn transform_each_on_an_object_points_at_the_key() {
        let each = TEMPLATE.replace(
            "\"content\": \"json\",",
            "\"content\": \"json\",\n      \"transform_each\": true,",
        );
        let d = failed(&each, r#"<|tool_call|>{"name": "f"}"#).unwrap();
        assert_eq!(d.position().as_deref(), Some("t.json:7:25"));
        assert!(
            d.help.as_deref().unwrap().starts_with(
                "the parsed content is one object (keys `name`), not a list: remove \"transform_each\""
            ),
            "{d:?}"
        );
    }

    #[test]
    fn a_misspelt_capture_name_is_corrected() {
        let typo = r#"{
  "start_anchor": "<a>",
  "fields": {
    "tool_calls": {
      "open_pattern": "<call name=(?P<name>\\w+)>",
      "close": "</call>",
      "content": "json",
      "transform": {"name": "{nmae}", "arguments": "{content}"}
    }
  }
}"#;
        let d = failed(typo, r#"<call name=f>{"x": 1}</call>"#).unwrap();
        assert_eq!(d.position().as_deref(), Some("t.json:8:29"));
        assert_eq!(
            d.help.as_deref(),
            Some("did you mean `{name}`? (the parsed content is an object with keys `x`)")
        );
    }

    #[test]
    fn other_errors_get_no_note() {
        assert!(failed(TEMPLATE, "<|tool_call|>{oops").is_none());
    }
}
