//! The `xml-inline` parser: every match of `tag_pattern` (groups `key` and `value`) becomes one
//! dict entry, its value optionally run through a nested `value_parser` (from 5.25, chosen per
//! tag by `value_parser_by`: what another named group captured); `merge_duplicates` collects
//! repeated keys into a list.

use crate::content::{ContentError, PatternCache, arg, sub_parse};
use crate::py::ExceptionType;
use crate::value::{Dict, Value};

/// `value_parser_by`: the named group whose capture picks the parser, and the parsers by
/// capture.
struct ParserBy<'a> {
    group: &'a str,
    parsers: &'a Dict,
}

/// Reads `value_parser_by` as 5.25 does: absent or null means none; otherwise a dict with a
/// string `group` and a dict `parsers`.
fn parser_by(args: &Value) -> Result<Option<ParserBy<'_>>, ContentError> {
    let by = match arg(args, "value_parser_by")? {
        None | Some(Value::Null) => return Ok(None),
        Some(by) => by,
    };
    let Value::Dict(d) = by else {
        return Err(ContentError::new(
            ExceptionType::AttributeError,
            format!("'{}' object has no attribute 'get'", by.type_name()),
        ));
    };
    match (d.get("group"), d.get("parsers")) {
        (Some(Value::Str(group)), Some(Value::Dict(parsers))) => {
            Ok(Some(ParserBy { group, parsers }))
        }
        _ => Err(ContentError::value(format!(
            "xml-inline: 'value_parser_by' must be a dict with 'group' (a named group in tag_pattern) \
             and 'parsers' (a dict mapping what that group captures to a value parser). Got: {}",
            by.py_repr()
        ))),
    }
}

pub(crate) fn parse(
    text: &str,
    args: &Value,
    cache: &mut PatternCache,
) -> Result<Value, ContentError> {
    let pattern = match arg(args, "tag_pattern")? {
        None | Some(Value::Null) => {
            return Err(ContentError::value(
                "xml-inline: 'tag_pattern' content_arg is required",
            ));
        }
        Some(Value::Str(p)) => p,
        // `re.finditer(tag_pattern, ...)`
        Some(_) => {
            return Err(ContentError::new(
                ExceptionType::TypeError,
                "first argument must be a string or compiled pattern",
            ));
        }
    };
    let value_parser = arg(args, "value_parser")?;
    let merge = arg(args, "merge_duplicates")?.is_some_and(Value::truthy);
    let by = if cache.reference.value_parser_by() {
        parser_by(args)?
    } else {
        None
    };
    let re = cache.get(pattern, true)?;
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
            return Err(ContentError::value(format!(
                "xml-inline: tag_pattern must have a named group 'key'. Pattern: {pattern}"
            ))
            .at(m.start()));
        };
        let parser = match &by {
            None => value_parser,
            Some(by) => {
                let Some(g) = group(by.group) else {
                    return Err(ContentError::value(format!(
                        "xml-inline: value_parser_by names group '{}', which tag_pattern does not define. Pattern: {pattern}",
                        by.group
                    ))
                    .at(m.start()));
                };
                // A capture with no entry, or a group that did not take part, falls back to
                // `value_parser` (an entry that is null means no parser).
                match m.group(g).and_then(|r| by.parsers.get(&text[r])) {
                    Some(chosen) => Some(chosen),
                    None => value_parser,
                }
            }
        };
        // `groups.get("value", "")`: a missing group gives "", one that did not take part None.
        let raw: Option<&str> = match value_group {
            None => Some(""),
            Some(g) => m.group(g).map(|r| &text[r]),
        };
        let value = sub_parse(raw, parser, cache).map_err(|e| {
            let offset = value_group
                .and_then(|g| m.group(g))
                .map_or(m.start(), |r| r.start);
            let inner = e.offset.unwrap_or(0);
            e.at(offset + inner)
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
    // The dict is kept (a region's value, the message): no room beyond its entries.
    out.shrink_to_fit();
    Ok(Value::Dict(out))
}
