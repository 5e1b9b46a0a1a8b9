//! JSON Schema validation of a tool call's arguments, as the message holds them (Python
//! values: integers of any size, floats, dicts in their order). Only what tool schemas use is
//! read: `type` (one or a list), `enum`, `const`, `properties`, `required`,
//! `additionalProperties`, `items`, `minItems`/`maxItems`, `minLength`/`maxLength`,
//! `minimum`/`maximum` and `anyOf`/`oneOf`/`allOf`; other keywords (`pattern`, `format`, `$ref`)
//! constrain nothing here. A grammar engine's own JSON matcher is not used: it orders keys and
//! bounds integers, neither of which a schema does.

use rtbench_engine::value::Value;
use serde_json::Value as Json;

/// Whether `v` is valid under `schema`; the first problem found, with its path (`$.days`).
pub fn validate(v: &Value, schema: &Json) -> Result<(), String> {
    check(v, schema, "$")
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) | Value::BigInt(_) => "integer",
        Value::Float(_) => "number",
        Value::Str(_) => "string",
        Value::List(_) => "array",
        Value::Dict(_) => "object",
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "number" => matches!(v, Value::Int(_) | Value::BigInt(_) | Value::Float(_)),
        "integer" => {
            matches!(v, Value::Int(_) | Value::BigInt(_))
                || matches!(v, Value::Float(f) if f.is_finite() && f.fract() == 0.0)
        }
        t => type_name(v) == t,
    }
}

/// Equality of a Python value and a JSON value, as a schema's `enum`/`const` means it.
fn equals(v: &Value, j: &Json) -> bool {
    match (v, j) {
        (Value::Null, Json::Null) => true,
        (Value::Bool(a), Json::Bool(b)) => a == b,
        (Value::Str(a), Json::String(b)) => a == b,
        (Value::Int(a), Json::Number(n)) => n.as_i64() == Some(*a) || n.as_f64() == Some(*a as f64),
        (Value::Float(a), Json::Number(n)) => n.as_f64() == Some(*a),
        (Value::List(a), Json::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| equals(x, y))
        }
        (Value::Dict(a), Json::Object(b)) => {
            a.len() == b.len()
                && b.iter()
                    .all(|(k, y)| a.get(k).is_some_and(|x| equals(x, y)))
        }
        _ => false,
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

fn check(v: &Value, schema: &Json, path: &str) -> Result<(), String> {
    let Some(s) = schema.as_object() else {
        // `true` (and anything not an object) allows everything; `false` nothing.
        return if schema == &Json::Bool(false) {
            Err(format!("{path}: nothing is allowed here"))
        } else {
            Ok(())
        };
    };
    match s.get("type") {
        Some(Json::String(t)) if !has_type(v, t) => {
            return Err(format!("{path}: {} is not of type {t}", type_name(v)));
        }
        Some(Json::Array(ts))
            if !ts
                .iter()
                .any(|t| t.as_str().is_some_and(|t| has_type(v, t))) =>
        {
            return Err(format!(
                "{path}: {} is not of the types {}",
                type_name(v),
                Json::Array(ts.clone())
            ));
        }
        _ => {}
    }
    if let Some(Json::Array(options)) = s.get("enum")
        && !options.iter().any(|o| equals(v, o))
    {
        return Err(format!(
            "{path}: not one of {}",
            Json::Array(options.clone())
        ));
    }
    if let Some(c) = s.get("const")
        && !equals(v, c)
    {
        return Err(format!("{path}: not {c}"));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Json::Array(options)) = s.get(key)
            && !options.iter().any(|o| check(v, o, path).is_ok())
        {
            return Err(format!("{path}: matches none of its {key} schemas"));
        }
    }
    if let Some(Json::Array(all)) = s.get("allOf") {
        for o in all {
            check(v, o, path)?;
        }
    }
    if let Some(n) = number(v) {
        if s.get("minimum")
            .and_then(Json::as_f64)
            .is_some_and(|m| n < m)
        {
            return Err(format!("{path}: below its minimum"));
        }
        if s.get("maximum")
            .and_then(Json::as_f64)
            .is_some_and(|m| n > m)
        {
            return Err(format!("{path}: above its maximum"));
        }
    }
    let bound = |k: &str| {
        s.get(k)
            .and_then(Json::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    match v {
        Value::Str(text) => {
            let n = text.chars().count();
            if bound("minLength").is_some_and(|m| n < m)
                || bound("maxLength").is_some_and(|m| n > m)
            {
                return Err(format!(
                    "{path}: a string of {n} characters is outside its length bounds"
                ));
            }
        }
        Value::List(items) => {
            if bound("minItems").is_some_and(|m| items.len() < m)
                || bound("maxItems").is_some_and(|m| items.len() > m)
            {
                return Err(format!(
                    "{path}: {} items are outside its bounds",
                    items.len()
                ));
            }
            if let Some(item) = s.get("items") {
                for (i, x) in items.iter().enumerate() {
                    check(x, item, &format!("{path}[{i}]"))?;
                }
            }
        }
        Value::Dict(d) => {
            let props = s.get("properties").and_then(Json::as_object);
            if let Some(Json::Array(required)) = s.get("required") {
                for r in required.iter().filter_map(Json::as_str) {
                    if d.get(r).is_none() {
                        return Err(format!("{path}: the required property {r:?} is missing"));
                    }
                }
            }
            for (k, x) in d.iter() {
                let sub = format!("{path}.{k}");
                match props.and_then(|p| p.get(k)) {
                    Some(p) => check(x, p, &sub)?,
                    None => match s.get("additionalProperties") {
                        Some(Json::Bool(false)) => {
                            return Err(format!("{path}: the property {k:?} is not allowed"));
                        }
                        Some(extra) => check(x, extra, &sub)?,
                        None => {}
                    },
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(json: &str) -> Value {
        Value::try_from(&serde_json::from_str::<Json>(json).unwrap()).unwrap()
    }

    const WEATHER: &str = r#"{"type": "object", "properties": {"city": {"type": "string"},
        "days": {"type": "integer"}, "unit": {"enum": ["c", "f"]}}, "required": ["city"]}"#;

    #[test]
    fn a_schema_allows_any_key_order_and_extra_keys_unless_it_says_otherwise() {
        let s: Json = serde_json::from_str(WEATHER).unwrap();
        assert!(validate(&v(r#"{"days": 2, "city": "Oslo", "note": 1}"#), &s).is_ok());
        assert_eq!(
            validate(&v(r#"{"days": 2}"#), &s),
            Err("$: the required property \"city\" is missing".into())
        );
        assert_eq!(
            validate(&v(r#"{"city": "Oslo", "days": "2"}"#), &s),
            Err("$.days: string is not of type integer".into())
        );
        assert_eq!(
            validate(&v(r#"{"city": "Oslo", "unit": "k"}"#), &s),
            Err("$.unit: not one of [\"c\",\"f\"]".into())
        );
    }

    #[test]
    fn integers_of_any_size_are_integers() {
        let s: Json = serde_json::from_str(WEATHER).unwrap();
        let mut big = v(r#"{"city": "Oslo"}"#);
        if let Value::Dict(d) = &mut big {
            let n: Value = rtbench_engine::py::json_loads("63003265202950012028").unwrap();
            d.insert("days".into(), n);
        }
        assert!(validate(&big, &s).is_ok());
    }
}
