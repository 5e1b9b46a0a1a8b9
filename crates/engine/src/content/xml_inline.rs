//! The `xml-inline` parser: every match of `tag_pattern` (groups `key` and `value`) becomes one
//! dict entry, its value optionally run through a nested `value_parser`; `merge_duplicates`
//! collects repeated keys into a list.

use crate::content::{ContentError, PatternCache, arg, sub_parse};
use crate::value::{Dict, Value};

pub(crate) fn parse(
    text: &str,
    args: &Value,
    cache: &mut PatternCache,
) -> Result<Value, ContentError> {
    let pattern = match arg(args, "tag_pattern")? {
        None | Some(Value::Null) => {
            return Err(ContentError::new(
                "xml-inline: 'tag_pattern' content_arg is required",
            ));
        }
        Some(Value::Str(p)) => p,
        Some(other) => {
            return Err(ContentError::new(format!(
                "xml-inline: tag_pattern must be a string, got {}",
                other.type_name()
            )));
        }
    };
    let value_parser = arg(args, "value_parser")?;
    let merge = arg(args, "merge_duplicates")?.is_some_and(Value::truthy);
    let re = cache
        .get(pattern, true)
        .map_err(|e| ContentError::new(format!("xml-inline: invalid tag_pattern: {e}")))?;
    let group = |name: &str| re.names().iter().find(|(n, _)| n == name).map(|(_, i)| *i);
    let (key_group, value_group) = (group("key"), group("value"));

    let mut out = Dict::new();
    let mut merged: Vec<String> = Vec::new();
    for m in re.find_iter(text) {
        let m = m?;
        let Some(key) = key_group
            .and_then(|g| m.group(g))
            .map(|r| text[r].to_string())
        else {
            return Err(ContentError::new(format!(
                "xml-inline: tag_pattern must have a named group 'key'. Pattern: {pattern}"
            ))
            .at(m.start()));
        };
        // `groups.get("value", "")`: a missing group gives "", one that did not take part None.
        let raw: Option<&str> = match value_group {
            None => Some(""),
            Some(g) => m.group(g).map(|r| &text[r]),
        };
        let value = sub_parse(raw, value_parser, cache).map_err(|e| {
            let offset = value_group
                .and_then(|g| m.group(g))
                .map_or(m.start(), |r| r.start);
            let inner = e.offset.unwrap_or(0);
            ContentError::new(format!("xml-inline value for '{key}': {}", e.message))
                .at(offset + inner)
        })?;
        if merge && out.contains_key(&key) {
            if !merged.contains(&key) {
                let first = out.get(&key).cloned().unwrap_or(Value::Null);
                out.insert(key.clone(), Value::List(vec![first]));
                merged.push(key.clone());
            }
            if let Some(Value::List(items)) = out.get_mut(&key) {
                items.push(value);
            }
        } else {
            out.insert(key, value);
        }
    }
    Ok(Value::Dict(out))
}
