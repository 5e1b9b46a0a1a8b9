//! The `json` parser with the reference's dialect options: `string_delims` (custom string
//! markers, cut out before parsing and put back as JSON strings), `unquoted_keys` (bare
//! identifier keys after `{` or `,` get quoted, never inside quoted strings) and
//! `allow_non_json` (fall back to the stripped text when decoding fails).
//!
//! The dialect rewrites run the reference's own regular expressions through the Python-pattern
//! engine, so that every corner (empty markers, escapes, Unicode word characters) behaves alike.

use crate::content::{ContentError, PatternCache, arg, scalar};
use crate::py::{self, ExceptionType, JsonErrorKind};
use crate::value::Value;
use pyregex::{Regex, escape};

/// Sentinels the reference uses to stand in for extracted strings.
const LAX_OPEN: char = '\x01';
const LAX_CLOSE: char = '\x02';

/// The reference's bare-key rewrite: quoted strings are matched first and kept as they are.
const UNQUOTED_KEYS: &str = r#""(?:\\.|[^"\\])*"|(?<=[{,])(\s*)(\w+)(\s*):"#;

pub(crate) fn parse(
    text: &str,
    args: &Value,
    cache: &mut PatternCache,
) -> Result<Value, ContentError> {
    let string_delims = arg(args, "string_delims")?;
    let unquoted_keys = arg(args, "unquoted_keys")?.is_some_and(Value::truthy);
    let delims_truthy = string_delims.is_some_and(Value::truthy);
    if delims_truthy && (text.contains(LAX_OPEN) || text.contains(LAX_CLOSE)) {
        return Err(ContentError::value(
            "json: input contains reserved sentinel characters (\\x01/\\x02); cannot parse safely.",
        ));
    }
    let mut working = text.to_string();
    let mut captured: Vec<String> = Vec::new();
    for (open, close) in delimiter_pairs(string_delims)? {
        let pattern = format!("{}(.*?){}", escape(&open), escape(&close));
        let re = cache.get(&pattern, true)?;
        working = replace_all(&re, &working, |hay, m| {
            let inner = m.group(1).map_or("", |r| &hay[r]);
            captured.push(inner.to_string());
            format!("{LAX_OPEN}{}{LAX_CLOSE}", captured.len() - 1)
        })?;
    }
    if unquoted_keys {
        let re = cache.get(UNQUOTED_KEYS, false)?;
        working = replace_all(&re, &working, |hay, m| match m.group(2) {
            None => hay[m.start()..m.end()].to_string(),
            Some(key) => format!(
                "{}\"{}\"{}:",
                m.group(1).map_or("", |r| &hay[r]),
                &hay[key],
                m.group(3).map_or("", |r| &hay[r])
            ),
        })?;
    }
    if !captured.is_empty() {
        working = restore_strings(&working, &captured);
    }
    match py::json_loads_depth(&working, cache.json_depth) {
        Ok(v) => Ok(v),
        Err(e) if matches!(e.kind, JsonErrorKind::Decode) => {
            if arg(args, "allow_non_json")?.is_some_and(Value::truthy) {
                return Ok(scalar::text(Some(text), args)?.map_or(Value::Null, Value::Str));
            }
            if working == text {
                Err(ContentError::value(format!(
                    "json parser could not parse region as JSON.\nContent: {}\nError: {}",
                    Value::from(text).py_repr(),
                    e
                ))
                .at(e.offset))
            } else {
                Err(ContentError::value(format!(
                    "json: could not parse after dialect transforms.\nOriginal: {}\nTransformed: {}\nError: {}",
                    Value::from(text).py_repr(),
                    Value::Str(working).py_repr(),
                    e
                )))
            }
        }
        // Not a decode error (too many digits, nesting too deep): `allow_non_json` does not
        // catch it in the reference either.
        Err(e) => Err(ContentError::from(e)),
    }
}

/// Python's `for open_d, close_d in string_delims`, with its unpacking rules: a pair may be a
/// two-item list, a two-character string or a two-key dict; a dict iterates its keys.
fn delimiter_pairs(delims: Option<&Value>) -> Result<Vec<(String, String)>, ContentError> {
    let items: Vec<Value> = match delims {
        None => return Ok(Vec::new()),
        Some(Value::List(items)) => items.clone(),
        Some(Value::Dict(d)) => d.keys().map(Value::from).collect(),
        Some(Value::Str(s)) => s.chars().map(|c| Value::Str(c.to_string())).collect(),
        Some(other) => {
            return Err(ContentError::new(
                ExceptionType::TypeError,
                format!("'{}' object is not iterable", other.type_name()),
            ));
        }
    };
    items.iter().map(unpack_pair).collect()
}

fn unpack_pair(item: &Value) -> Result<(String, String), ContentError> {
    let parts: Vec<Value> = match item {
        Value::List(l) => l.clone(),
        Value::Str(s) => s.chars().map(|c| Value::Str(c.to_string())).collect(),
        Value::Dict(d) => d.keys().map(Value::from).collect(),
        other => {
            return Err(ContentError::new(
                ExceptionType::TypeError,
                format!("cannot unpack non-iterable {} object", other.type_name()),
            ));
        }
    };
    match parts.len() {
        2 => {}
        n if n > 2 => {
            return Err(ContentError::value(
                "too many values to unpack (expected 2)",
            ));
        }
        n => {
            return Err(ContentError::value(format!(
                "not enough values to unpack (expected 2, got {n})"
            )));
        }
    }
    // `re.escape(marker)`: a number or None is not iterable.
    let as_str = |v: &Value| match v {
        Value::Str(s) => Ok(s.clone()),
        other => Err(ContentError::new(
            ExceptionType::TypeError,
            format!("'{}' object is not iterable", other.type_name()),
        )),
    };
    Ok((as_str(&parts[0])?, as_str(&parts[1])?))
}

/// Python's `re.sub(pattern, function, text)`.
fn replace_all(
    re: &Regex,
    hay: &str,
    mut replace: impl FnMut(&str, &pyregex::Match) -> String,
) -> Result<String, ContentError> {
    let mut out = String::with_capacity(hay.len());
    let mut last = 0;
    for m in re.find_iter(hay) {
        let m = m?;
        out.push_str(&hay[last..m.start()]);
        out.push_str(&replace(hay, &m));
        last = m.end();
    }
    out.push_str(&hay[last..]);
    Ok(out)
}

/// Puts each captured string back, JSON-quoted, where its placeholder stands: the reference
/// replaces the placeholders one after another (`str.replace` for each index), which is one
/// pass here, since neither a placeholder nor a JSON-quoted string can contain the other's
/// sentinels (input holding them is refused, and `json.dumps` escapes them).
fn restore_strings(working: &str, captured: &[String]) -> String {
    let mut out = String::with_capacity(working.len());
    let mut rest = working;
    while let Some(i) = rest.find(LAX_OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + LAX_OPEN.len_utf8()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        let index = after[..digits].parse::<usize>().ok();
        match (
            index.and_then(|n| captured.get(n)),
            after[digits..].starts_with(LAX_CLOSE),
        ) {
            (Some(s), true) if digits > 0 && (digits == 1 || !after.starts_with('0')) => {
                out.push_str(&py::json_dumps_str(s));
                rest = &after[digits + LAX_CLOSE.len_utf8()..];
            }
            _ => {
                out.push(LAX_OPEN);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One pass puts the strings back as the reference's replacement one index after another.
    #[test]
    fn strings_are_restored_as_one_replacement_after_another() {
        let captured: Vec<String> = (0..12).map(|i| format!("s{i} \"q\" \u{1}")).collect();
        let mut working = String::from("{");
        for i in [11, 0, 1, 10, 3] {
            working.push_str(&format!("{LAX_OPEN}{i}{LAX_CLOSE}, "));
        }
        working.push_str(&format!(
            "{LAX_OPEN}01{LAX_CLOSE} {LAX_OPEN}x {LAX_OPEN}99{LAX_CLOSE}}}"
        ));
        let mut sequential = working.clone();
        for (i, s) in captured.iter().enumerate() {
            sequential =
                sequential.replace(&format!("{LAX_OPEN}{i}{LAX_CLOSE}"), &py::json_dumps_str(s));
        }
        assert_eq!(restore_strings(&working, &captured), sequential);
    }
}
