//! Validation and compilation of a template's JSON value, rule by rule as the reference does it
//! (`load_response_template`), so that rtbench accepts and refuses exactly the same templates.

use crate::content::ContentKind;
use crate::delimiter::{Delimiter, LiteralSet, PatternDelimiter};
use crate::py::ExceptionType;
use crate::template::error::{JsonPath, PathSeg, Target, TemplateError};
use crate::template::{Field, Template};
use crate::transform::Transform;
use crate::value::{Dict, Value};
use pyregex::RegexError;

/// The keys a template object may have (the reference refuses any other, `$schema` too).
pub const TEMPLATE_KEYS: [&str; 5] = [
    "version",
    "defaults",
    "fields",
    "start_anchor",
    "start_anchor_pattern",
];

/// The keys a field may have (the reference refuses any other).
pub const FIELD_KEYS: [&str; 11] = [
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
];

fn path(keys: &[&str]) -> JsonPath {
    keys.iter().map(|k| PathSeg::Key(k.to_string())).collect()
}

fn field_path(name: &str, key: Option<&str>) -> JsonPath {
    let mut p = path(&["fields", name]);
    if let Some(k) = key {
        p.push(PathSeg::Key(k.to_string()));
    }
    p
}

/// Python's `sorted()` of a set of strings, formatted like its repr: `['a', 'b']`.
fn py_list_repr(items: &[&str]) -> String {
    let mut v: Vec<&str> = items.to_vec();
    v.sort();
    let parts: Vec<String> = v.iter().map(|s| format!("'{s}'")).collect();
    format!("[{}]", parts.join(", "))
}

/// Loads a template from its JSON value, applying every rule of the reference.
pub fn load_template(spec: &Value) -> Result<Template, TemplateError> {
    let Value::Dict(spec) = spec else {
        return Err(TemplateError::new(
            format!("response_template must be a dict, got {}", spec.type_name()),
            vec![],
            Target::Value,
        )
        .help("a response template is a JSON object with `fields` and a start anchor"));
    };
    check_shape(spec)?;
    let Some(Value::Dict(fields_raw)) = spec.get("fields") else {
        unreachable!("check_shape verified fields")
    };
    let mut fields = Vec::with_capacity(fields_raw.len());
    for (name, raw) in fields_raw {
        fields.push(build_field(name, raw)?);
    }
    let implicit: Vec<usize> = (0..fields.len())
        .filter(|&i| fields[i].open.is_none())
        .collect();
    if implicit.len() > 1 {
        let names: Vec<&str> = implicit.iter().map(|&i| fields[i].name.as_str()).collect();
        return Err(TemplateError::new(
            format!(
                "At most one field may omit 'open'/'open_pattern' (that field becomes the \
                 implicit-open / leftover sink). Found: {}",
                names.join(", ")
            ),
            field_path(names[1], None),
            Target::Key,
        )
        .help(format!(
            "give '{}' an `open` or `open_pattern`, or remove it",
            names[1]
        )));
    }
    let start_anchor = compile_delimiter(
        "response_template",
        spec,
        &[],
        "start_anchor",
        "start_anchor_pattern",
    )?
    .ok_or_else(|| {
        TemplateError::new(
            "response_template must define 'start_anchor' or 'start_anchor_pattern'.",
            vec![],
            Target::Value,
        )
        .help("add e.g. \"start_anchor\": \"<|im_start|>assistant\\n\" (the text that begins the assistant turn in the prompt)")
    })?;
    let defaults = match spec.get("defaults") {
        Some(Value::Dict(d)) => d.clone(),
        _ => Dict::new(),
    };
    // The reference deep-copies `defaults` last, recursively (the dict itself takes two frames).
    let frames = 2 + defaults
        .values()
        .map(crate::py::deepcopy_frames)
        .max()
        .unwrap_or(0);
    if frames > crate::py::DEFAULTS_BUDGET.frames {
        return Err(TemplateError::new(
            crate::py::DEFAULTS_BUDGET.message,
            path(&["defaults"]),
            Target::Value,
        )
        .kind(ExceptionType::RecursionError)
        .help("the reference cannot copy defaults nested this deeply (about 490 levels); flatten them"));
    }
    Ok(Template::new(
        defaults,
        fields,
        implicit.first().copied(),
        start_anchor,
    ))
}

/// The top-level checks of the reference's `_validate_template_shape`.
fn check_shape(spec: &Dict) -> Result<(), TemplateError> {
    if let Some(version) = spec.get("version")
        && !version.py_eq(&Value::Int(1))
    {
        return Err(TemplateError::new(
            format!(
                "Unsupported response_template version: {}",
                version.py_str()
            ),
            path(&["version"]),
            Target::Value,
        )
        .help("the only version is 1 (or leave `version` out)"));
    }
    let unknown: Vec<&str> = spec.keys().filter(|k| !TEMPLATE_KEYS.contains(k)).collect();
    if let Some(first) = unknown.first() {
        return Err(TemplateError::new(
            format!(
                "Unknown keys in response_template: {}",
                py_list_repr(&unknown)
            ),
            path(&[first]),
            Target::Key,
        )
        .help(format!("the allowed keys are {}", TEMPLATE_KEYS.join(", "))));
    }
    if let Some(d) = spec.get("defaults")
        && !matches!(d, Value::Dict(_))
    {
        return Err(TemplateError::new(
            "response_template.defaults must be a dict",
            path(&["defaults"]),
            Target::Value,
        ));
    }
    match spec.get("fields") {
        Some(Value::Dict(f)) if !f.is_empty() => Ok(()),
        Some(_) => Err(TemplateError::new(
            "response_template.fields must be a non-empty dict",
            path(&["fields"]),
            Target::Value,
        )),
        None => Err(TemplateError::new(
            "response_template.fields must be a non-empty dict",
            vec![],
            Target::Value,
        )
        .help("add a `fields` object mapping message keys to their delimiters")),
    }
}

/// The reference's `_build_field`: each check in the reference's order, so that the first
/// error it raises is the one reported.
fn build_field(name: &str, raw: &Value) -> Result<Field, TemplateError> {
    let scope = format!("Field '{name}'");
    let Value::Dict(field) = raw else {
        return Err(TemplateError::new(
            format!("{scope} must be a dict"),
            field_path(name, None),
            Target::Value,
        ));
    };
    check_field_keys(name, &scope, field)?;
    let content = field_content(name, &scope, field)?;
    let fpath = field_path(name, None);
    let open = compile_delimiter(&scope, field, &fpath, "open", "open_pattern")?;
    let close = compile_delimiter(&scope, field, &fpath, "close", "close_pattern")?;
    let join = field_join(name, &scope, field)?;
    let repeats = field.get("repeats").is_some_and(Value::truthy);
    if join.is_some() && !repeats {
        return Err(TemplateError::new(
            format!("{scope}: 'join' requires 'repeats': true"),
            field_path(name, Some("join")),
            Target::Key,
        )
        .help("add \"repeats\": true, or remove `join`"));
    }
    let transform_raw = field.get("transform").filter(|t| !matches!(t, Value::Null));
    let transform_each = field_transform_each(name, &scope, field, transform_raw.is_some())?;
    let transform = match transform_raw {
        Some(t) => Some(compile_transform(name, &scope, t)?),
        None => {
            check_no_captures(name, &scope, open.as_ref(), close.as_ref())?;
            None
        }
    };
    Ok(Field {
        name: name.to_string(),
        open,
        close,
        content,
        content_args: field
            .get("content_args")
            .cloned()
            .unwrap_or_else(|| Value::Dict(Dict::new())),
        repeats,
        join,
        optional: field.get("optional").is_none_or(Value::truthy),
        content_slot: transform.as_ref().and_then(Transform::whole_content_slot),
        transform,
        transform_each,
    })
}

/// Refuses a key a field may not have, suggesting the closest allowed one.
fn check_field_keys(name: &str, scope: &str, field: &Dict) -> Result<(), TemplateError> {
    let unknown: Vec<&str> = field.keys().filter(|k| !FIELD_KEYS.contains(k)).collect();
    let Some(first) = unknown.first() else {
        return Ok(());
    };
    let err = TemplateError::new(
        format!("{scope}: unknown keys {}", py_list_repr(&unknown)),
        field_path(name, Some(first)),
        Target::Key,
    );
    Err(match closest_key(first) {
        Some(k) => err.help(format!("did you mean '{k}'?")),
        None => err.help(format!("field keys are {}", FIELD_KEYS.join(", "))),
    })
}

/// The field's content parser (`text` when absent).
fn field_content(name: &str, scope: &str, field: &Dict) -> Result<ContentKind, TemplateError> {
    match field.get("content") {
        None => Ok(ContentKind::Text),
        Some(Value::Str(s)) => ContentKind::from_name(s).ok_or_else(|| unknown_content(name, s)),
        // `content not in CONTENT_PARSERS`: a list or dict cannot be hashed.
        Some(other @ (Value::List(_) | Value::Dict(_))) => Err(TemplateError::new(
            format!("unhashable type: '{}'", other.type_name()),
            field_path(name, Some("content")),
            Target::Value,
        )
        .kind(ExceptionType::TypeError)),
        Some(other) => Err(TemplateError::new(
            format!(
                "{scope}: unknown content parser '{}'. Available: {}",
                other.py_str(),
                py_list_repr(&ContentKind::NAMES)
            ),
            field_path(name, Some("content")),
            Target::Value,
        )),
    }
}

/// The field's `join` separator (absent or null: none).
fn field_join(name: &str, scope: &str, field: &Dict) -> Result<Option<String>, TemplateError> {
    match field.get("join") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s.clone())),
        Some(other) => Err(TemplateError::new(
            format!(
                "{scope}: 'join' must be a string, got {}",
                other.type_name()
            ),
            field_path(name, Some("join")),
            Target::Value,
        )),
    }
}

/// The field's `transform_each` flag, which must be a bool and needs a transform.
fn field_transform_each(
    name: &str,
    scope: &str,
    field: &Dict,
    has_transform: bool,
) -> Result<bool, TemplateError> {
    let transform_each = match field.get("transform_each") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(TemplateError::new(
                format!(
                    "{scope}: transform_each must be a bool, got {}",
                    other.type_name()
                ),
                field_path(name, Some("transform_each")),
                Target::Value,
            ));
        }
    };
    if transform_each && !has_transform {
        return Err(TemplateError::new(
            format!("{scope}: transform_each is set but no transform was provided"),
            field_path(name, Some("transform_each")),
            Target::Key,
        )
        .help("add a `transform` to apply to each element, or remove `transform_each`"));
    }
    Ok(transform_each)
}

/// Compiles the field's `transform`, refusing a string that mixes a placeholder with text.
fn compile_transform(name: &str, scope: &str, raw: &Value) -> Result<Transform, TemplateError> {
    Transform::compile(raw).map_err(|(bad, sub)| {
        let mut p = field_path(name, Some("transform"));
        p.extend(sub);
        TemplateError::new(
            format!(
                "{scope}: transform string {} mixes a {{placeholder}} with literal text. \
                 Use either a whole-string placeholder (e.g. \"{{content}}\") or a plain \
                 literal; string interpolation is not supported.",
                Value::Str(bad).py_repr()
            ),
            p,
            Target::Value,
        )
        .help("a placeholder must be the entire string, like \"{content}\" or \"{content.name}\"")
    })
}

/// Without a transform, named groups in the delimiters would be lost: refuses them.
fn check_no_captures(
    name: &str,
    scope: &str,
    open: Option<&Delimiter>,
    close: Option<&Delimiter>,
) -> Result<(), TemplateError> {
    let mut names: Vec<String> = Vec::new();
    for d in [open, close].into_iter().flatten() {
        for n in d.capture_names() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    if names.is_empty() {
        return Ok(());
    }
    names.sort();
    let key = if open.is_some_and(|d| !d.capture_names().is_empty()) {
        "open_pattern"
    } else {
        "close_pattern"
    };
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    Err(TemplateError::new(
        format!(
            "{scope}: open_pattern/close_pattern declares named group(s) {}, but \
             the field has no 'transform'. Named captures are only surfaced through \
             a 'transform' template (where they appear alongside 'content'). Either \
             add a 'transform' that uses the captures, or remove the named groups \
             from the pattern.",
            py_list_repr(&refs)
        ),
        field_path(name, Some(key)),
        Target::Value,
    )
    .help(format!(
        "e.g. \"transform\": {{\"{}\": \"{{{}}}\", \"content\": \"{{content}}\"}}",
        names[0], names[0]
    )))
}

fn unknown_content(field: &str, name: &str) -> TemplateError {
    let mut err = TemplateError::new(
        format!(
            "Field '{field}': unknown content parser '{name}'. Available: {}",
            py_list_repr(&ContentKind::NAMES)
        ),
        field_path(field, Some("content")),
        Target::Value,
    );
    if let Some(k) = ContentKind::NAMES
        .iter()
        .find(|k| k.eq_ignore_ascii_case(name) || k.replace('-', "_") == name)
    {
        err = err.help(format!("did you mean '{k}'?"));
    }
    err
}

/// The allowed field key closest to a misspelt one (edit distance at most 2).
fn closest_key(key: &str) -> Option<&'static str> {
    FIELD_KEYS
        .iter()
        .map(|k| (edit_distance(k, key), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push(
                (prev[j] + usize::from(ca != *cb))
                    .min(prev[j + 1] + 1)
                    .min(cur[j] + 1),
            );
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The reference's `_compile_anchor`: a literal (string or list) or a pattern, never both.
fn compile_delimiter(
    scope: &str,
    obj: &Dict,
    base: &[PathSeg],
    literal_key: &str,
    pattern_key: &str,
) -> Result<Option<Delimiter>, TemplateError> {
    let at = |key: &str| {
        let mut p = base.to_vec();
        p.push(PathSeg::Key(key.to_string()));
        p
    };
    if obj.contains_key(literal_key) && obj.contains_key(pattern_key) {
        return Err(TemplateError::new(
            format!("{scope}: cannot specify both '{literal_key}' and '{pattern_key}'"),
            at(pattern_key),
            Target::Key,
        )
        .help(format!(
            "keep either `{literal_key}` (literal text) or `{pattern_key}` (a regex)"
        )));
    }
    if let Some(raw) = obj.get(literal_key) {
        let literals: Vec<String> = match raw {
            Value::Str(s) => vec![s.clone()],
            Value::List(items) => {
                if items.is_empty() {
                    return Err(TemplateError::new(
                        format!("{scope}: '{literal_key}' list must contain at least one literal"),
                        at(literal_key),
                        Target::Value,
                    ));
                }
                let mut out: Vec<String> = Vec::new();
                // Duplicates are dropped, the first kept: a set, as a list of thousands
                // searched for each literal was quadratic.
                let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
                for (i, item) in items.iter().enumerate() {
                    let Value::Str(s) = item else {
                        let mut p = at(literal_key);
                        p.push(PathSeg::Index(i));
                        return Err(TemplateError::new(
                            format!("{scope}: '{literal_key}' list must contain only strings"),
                            p,
                            Target::Value,
                        ));
                    };
                    if seen.insert(s) {
                        out.push(s.clone());
                    }
                }
                out
            }
            other => {
                return Err(TemplateError::new(
                    format!(
                        "{scope}: '{literal_key}' must be a string or list of strings, got {}",
                        other.type_name()
                    ),
                    at(literal_key),
                    Target::Value,
                ));
            }
        };
        if literals.iter().any(String::is_empty) {
            let mut p = at(literal_key);
            if let Value::List(items) = raw
                && let Some(i) = items.iter().position(|v| v.as_str() == Some(""))
            {
                p.push(PathSeg::Index(i));
            }
            return Err(TemplateError::new(
                format!("{scope}: '{literal_key}' literals cannot be empty strings"),
                p,
                Target::Value,
            )
            .help(format!(
                "remove the empty string, or remove `{literal_key}`"
            )));
        }
        return Ok(Some(Delimiter::Literal(LiteralSet::new(literals))));
    }
    if let Some(raw) = obj.get(pattern_key) {
        // `re.compile(raw)` raises a TypeError, which the loader does not catch.
        let Value::Str(source) = raw else {
            return Err(TemplateError::new(
                "first argument must be a string or compiled pattern",
                at(pattern_key),
                Target::Value,
            )
            .kind(ExceptionType::TypeError)
            .help(format!("{pattern_key} must be a string (a regex)")));
        };
        return PatternDelimiter::new(source)
            .map(|p| Some(Delimiter::Pattern(p)))
            .map_err(|e| regex_error(scope, pattern_key, at(pattern_key), &e));
    }
    Ok(None)
}

fn regex_error(scope: &str, key: &str, path: JsonPath, e: &RegexError) -> TemplateError {
    // The reference turns the `regex` module's error into a ValueError; its RecursionError
    // escapes as it is; the rest are rtbench's own limits, not reference errors.
    let err = TemplateError::new(
        format!("{scope}: invalid {key} regex: {e}"),
        path.clone(),
        Target::Value,
    );
    match e {
        RegexError::Syntax { offset, .. } => err.at_offset(*offset),
        RegexError::Unsupported {
            offset, construct, ..
        } => err
            .kind(ExceptionType::Rtbench)
            .at_offset(*offset)
            .help(format!(
                "{construct} cannot be matched exactly by rtbench; rewrite the pattern without it"
            )),
        RegexError::TooDeep { offset, .. } => TemplateError::new(
            "maximum recursion depth exceeded",
            path,
            Target::Value,
        )
        .kind(ExceptionType::RecursionError)
        .at_offset(*offset)
        .help(format!(
            "the reference cannot compile {scope}'s {key}: its groups nest too deeply (a few \
             hundred levels); flatten the nesting"
        )),
        _ => err.kind(ExceptionType::Rtbench),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_finds_typos() {
        assert_eq!(closest_key("content_arg"), Some("content_args"));
        assert_eq!(closest_key("opne"), Some("open"));
        assert_eq!(closest_key("zzzzzzzz"), None);
    }
}
