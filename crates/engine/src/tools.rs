//! Tool-argument coercion: when a region's value looks like a tool call
//! (`{"function": {"name", "arguments": {...}}}`, or a list of them) and its name matches a tool
//! schema, each string argument is cast to the parameter's declared JSON-schema type, exactly as
//! the reference casts it; a failed cast keeps the string.

use crate::py::{self, ExceptionType, JsonErrorKind};
use crate::value::{Dict, Value};

/// Parameter schemas by tool name, as the reference collects them from a `tools` list.
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolSchemas {
    params: Dict<Dict>,
}

/// A `tools` value the reference cannot even iterate, or a cast that raises: the exception
/// and its exact message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ToolsError {
    pub kind: ExceptionType,
    pub message: String,
}

impl ToolsError {
    fn not_iterable(v: &Value) -> ToolsError {
        ToolsError {
            kind: ExceptionType::TypeError,
            message: format!("'{}' object is not iterable", v.type_name()),
        }
    }
}

impl std::fmt::Display for ToolsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl ToolSchemas {
    /// Collects `name -> parameters.properties` from the tools (OpenAI style, with or without
    /// the `{"type": "function", "function": ...}` wrapper). Entries without a string name are
    /// ignored, as are non-dict tools.
    pub(crate) fn from_tools(tools: Option<&Value>) -> Result<ToolSchemas, ToolsError> {
        let mut params = Dict::new();
        let items: Vec<&Value> = match tools {
            None => Vec::new(),
            Some(v) if !v.truthy() => Vec::new(),
            Some(Value::List(items)) => items.iter().collect(),
            // Iterating a dict or a string yields strings, which are not tools.
            Some(Value::Dict(_)) | Some(Value::Str(_)) => Vec::new(),
            Some(other) => return Err(ToolsError::not_iterable(other)),
        };
        for tool in items {
            let Value::Dict(tool) = tool else { continue };
            let func = match tool.get("function") {
                Some(f) => f,
                None => {
                    // `tool.get("function", tool)`
                    if let Some(Value::Str(name)) = tool.get("name") {
                        params.insert(name.clone(), properties_of(tool));
                    }
                    continue;
                }
            };
            if let Value::Dict(f) = func
                && let Some(Value::Str(name)) = f.get("name")
            {
                params.insert(name.clone(), properties_of(f));
            }
        }
        Ok(ToolSchemas { params })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// The reference's `_coerce_tool_calls`, applied to a closed region's value. `json_depth`
    /// is how deep `json.loads` may nest at this point of the reference's call stack; `typed`
    /// (5.25, for `json` and `python-call-list` fields) leaves parameters whose schema allows
    /// `string` as the model wrote them.
    pub(crate) fn coerce(
        &self,
        value: &mut Value,
        json_depth: usize,
        typed: bool,
        budget: py::Budget,
    ) -> Result<(), ToolsError> {
        self.coerce_at(value, json_depth, typed, 1, budget)
    }

    /// [`ToolSchemas::coerce`] with `used` of the budget's frames taken by the calls around it.
    fn coerce_at(
        &self,
        value: &mut Value,
        json_depth: usize,
        typed: bool,
        used: usize,
        budget: py::Budget,
    ) -> Result<(), ToolsError> {
        let too_deep = || ToolsError {
            kind: ExceptionType::RecursionError,
            message: budget.message.to_string(),
        };
        if used > budget.frames {
            return Err(too_deep());
        }
        if let Value::List(items) = value {
            // Each list level costs the reference a recursive call and a comprehension frame.
            if used + 1 > budget.frames {
                return Err(too_deep());
            }
            for item in items {
                self.coerce_at(item, json_depth.saturating_sub(2), typed, used + 2, budget)?;
            }
            return Ok(());
        }
        let Some(Value::Dict(func)) = value.as_dict().and_then(|d| d.get("function")) else {
            return Ok(());
        };
        let (Some(Value::Str(name)), Some(Value::Dict(_))) =
            (func.get("name"), func.get("arguments"))
        else {
            return Ok(());
        };
        let Some(properties) = self.params.get(name).filter(|p| !p.is_empty()) else {
            return Ok(());
        };
        // `_schema_types` and `_coerce` each take one more frame.
        if used + 1 > budget.frames
            && let Some(Value::Dict(arguments)) = func.get("arguments")
            && arguments.keys().any(|k| properties.contains_key(k))
        {
            return Err(too_deep());
        }
        let Some(Value::Dict(func)) = value.as_dict_mut().and_then(|d| d.get_mut("function"))
        else {
            return Ok(());
        };
        let Some(Value::Dict(arguments)) = func.get_mut("arguments") else {
            return Ok(());
        };
        for (key, argument) in arguments.iter_mut() {
            let Some(schema) = properties.get(key) else {
                continue;
            };
            let types = schema_types(schema)?;
            if types.is_empty() || (typed && types.iter().any(|t| t == "string")) {
                continue;
            }
            match argument {
                Value::Str(raw) => *argument = coerce_str(raw, &types, json_depth)?,
                Value::List(items) if !types.iter().any(|t| t == "array") => {
                    for item in items.iter_mut() {
                        if let Value::Str(raw) = item {
                            *item = coerce_str(raw, &types, json_depth)?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn properties_of(func: &Dict) -> Dict {
    match func.get("parameters") {
        Some(Value::Dict(p)) => match p.get("properties") {
            Some(Value::Dict(props)) => props.clone(),
            _ => Dict::new(),
        },
        _ => Dict::new(),
    }
}

/// The reference's `_schema_types`: declared types, then `anyOf`/`oneOf` members, then `null`
/// when `nullable` is truthy.
fn schema_types(schema: &Value) -> Result<Vec<String>, ToolsError> {
    let Value::Dict(schema) = schema else {
        return Ok(Vec::new());
    };
    let mut types: Vec<String> = Vec::new();
    match schema.get("type") {
        Some(Value::Str(t)) => types.push(t.clone()),
        Some(Value::List(ts)) => {
            types.extend(ts.iter().filter_map(|t| t.as_str().map(String::from)))
        }
        _ => {}
    }
    for union in ["anyOf", "oneOf"] {
        match schema.get(union) {
            None => {}
            Some(v) if !v.truthy() => {}
            Some(Value::List(choices)) => {
                for choice in choices {
                    types.extend(schema_types(choice)?);
                }
            }
            // Iterating a dict or string yields strings, which carry no types.
            Some(Value::Dict(_)) | Some(Value::Str(_)) => {}
            Some(other) => return Err(ToolsError::not_iterable(other)),
        }
    }
    if schema.get("nullable").is_some_and(Value::truthy) && !types.iter().any(|t| t == "null") {
        types.push("null".into());
    }
    Ok(types)
}

/// The reference's `_coerce`: the first type whose cast succeeds wins.
fn coerce_str(raw: &str, types: &[String], json_depth: usize) -> Result<Value, ToolsError> {
    for t in types {
        match t.as_str() {
            "integer" => {
                if let Ok(v) = py::py_int(raw) {
                    return Ok(v);
                }
                let Ok(number) = py::py_float(raw) else {
                    continue;
                };
                if number.is_finite()
                    && number.fract() == 0.0
                    && let Some(v) = py::int_from_float(number)
                {
                    return Ok(v);
                }
            }
            "number" => {
                let Ok(number) = py::py_float(raw) else {
                    continue;
                };
                if !number.is_finite() {
                    continue;
                }
                if number.fract() == 0.0
                    && !raw.contains('.')
                    && let Some(v) = py::int_from_float(number)
                {
                    return Ok(v);
                }
                return Ok(Value::Float(number));
            }
            "boolean" => {
                let lower = py::py_lower(py::py_strip(raw));
                if matches!(lower.as_str(), "true" | "1" | "false" | "0") {
                    return Ok(Value::Bool(lower == "true" || lower == "1"));
                }
            }
            "null" => {
                if matches!(py::py_strip(raw), "null" | "None") {
                    return Ok(Value::Null);
                }
            }
            "object" | "array" => match py::json_loads_depth(raw, json_depth) {
                Ok(v @ Value::Dict(_)) if t == "object" => return Ok(v),
                Ok(v @ Value::List(_)) if t == "array" => return Ok(v),
                Ok(_) => {}
                // Decode errors and too-many-digits are ValueErrors, caught by the reference;
                // nesting too deep is not.
                Err(e) if matches!(e.kind, JsonErrorKind::Recursion) => {
                    return Err(ToolsError {
                        kind: ExceptionType::RecursionError,
                        message: e.message,
                    });
                }
                Err(_) => {}
            },
            _ => {}
        }
    }
    Ok(Value::Str(raw.to_string()))
}
