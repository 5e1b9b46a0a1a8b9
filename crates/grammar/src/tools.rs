//! Tool calls inside their delimiters: which fields hold them, and how each content parser
//! spells one call.
//!
//! A field holds tool calls when its transform builds `{"function": ...}` (the shape the
//! parser's tool coercion looks for). The transform is read backwards to find where the
//! tool's name and arguments come from: a capture of the open pattern (`{name}`), a key of the
//! parsed body (`{content.name}`; Qwen3's `"function": "{content}"` means the body is
//! `{"name": ..., "arguments": ...}`), or with `transform_each` a key of each element of a
//! JSON list. Then:
//!
//! - `json`: the body is one JSON value whose schema nests the tool's name (a `const`) and
//!   its parameters at those keys; one schema per tool, so the name decides the arguments;
//! - `xml-inline`: the `tag_pattern` with each parameter's name in its `key` group and a value
//!   of the parameter's type in its `value` group, in the schema's order, required ones
//!   required;
//! - `python-call-list`: `[name(key=value, ...)]` with Python literals of the parameters'
//!   types.
//!
//! Parameters are those of the tool's schema, widened to the strings the parser's coercion
//! casts (`schema::admit_casts`); an object schema without `additionalProperties` admits only
//! its listed properties (`schema::strict`). Without tools, any name and any JSON object of
//! arguments.

use serde_json::{Value as Json, json};

use rtbench_engine::ContentKind;
use rtbench_engine::template::{JsonPath, PathSeg};

use crate::Error;
use crate::ir::{Dialect, Node};
use crate::plan::{Open, dialect_of, regex_node, whitespace};
use crate::re::{self, Re};
use crate::schema::Converter;
use crate::schema::{admit_casts, schema_types, separated, strict};

/// One tool of the request.
#[derive(Clone, Debug)]
pub(crate) struct Tool {
    pub name: String,
    /// Its `parameters` schema as given.
    pub parameters: Json,
}

impl Tool {
    /// A tool known only by name: any object of arguments.
    pub(crate) fn any_arguments(name: &str) -> Tool {
        Tool {
            name: name.to_string(),
            parameters: json!({"type": "object"}),
        }
    }
}

/// Reads OpenAI-style tools (`{"type": "function", "function": {"name", "parameters"}}`, or
/// the function object itself).
pub(crate) fn read_tools(list: &[Json]) -> Result<Vec<Tool>, Error> {
    let mut out = Vec::new();
    for (i, t) in list.iter().enumerate() {
        let func = t.get("function").unwrap_or(t);
        let Some(name) = func.get("name").and_then(Json::as_str) else {
            return Err(Error::Tools(format!(
                "tool {i} has no function name (expected {{\"type\": \"function\", \"function\": {{\"name\": ..., \"parameters\": ...}}}})"
            )));
        };
        let parameters = func
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"}));
        out.push(Tool {
            name: name.to_string(),
            parameters,
        });
    }
    Ok(out)
}

/// Where a transform placeholder takes its value from.
#[derive(Clone, Debug, PartialEq)]
enum Source {
    /// A capture of the open pattern.
    Capture(String),
    /// A path into the parsed body (with `transform_each`: into each element).
    Body(Vec<String>),
}

/// How a field writes tool calls.
#[derive(Clone, Debug)]
pub(crate) struct ToolShape {
    /// The open pattern's capture that holds the tool's name, if the name is there.
    pub name_capture: Option<String>,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Json {
        each: bool,
        /// Where the name goes in the body (None: in the capture).
        name: Option<Vec<String>>,
        args: Vec<String>,
        /// Other body paths the transform reads (they must exist).
        extra: Vec<Vec<String>>,
        /// Body paths in the order the transform names them (a body's keys are written in
        /// that order).
        order: Vec<Vec<String>>,
        dialect: Dialect,
    },
    XmlInline {
        /// The tag pattern split around its `key` and `value` groups.
        prefix: Re,
        key: Re,
        middle: Re,
        suffix: Re,
        /// Values are read by the `json` parser with `allow_non_json`: text that is JSON
        /// reads as what it spells, other text as a string.
        json_values: bool,
    },
    PythonCallList,
}

impl ToolShape {
    /// The character every body of this shape begins with (after no whitespace), if one.
    pub(crate) fn first_char(&self) -> Option<char> {
        match &self.kind {
            Kind::Json { each: true, .. } | Kind::PythonCallList => Some('['),
            Kind::Json { .. } => Some('{'),
            Kind::XmlInline { .. } => None,
        }
    }
}

/// The placeholders of a transform value, with their paths in the transform.
fn placeholders(v: &Json) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Json::String(s) => {
            if let Some(inner) = s.strip_prefix('{').and_then(|s| s.strip_suffix('}'))
                && !inner.is_empty()
                && !inner.contains(['{', '}'])
            {
                out.push(inner.to_string());
            }
        }
        Json::Array(a) => a.iter().for_each(|x| out.extend(placeholders(x))),
        Json::Object(o) => o.values().for_each(|x| out.extend(placeholders(x))),
        _ => {}
    }
    out
}

fn resolve(placeholder: &str, captures: &[String], each: bool) -> Option<Source> {
    let parts: Vec<String> = placeholder.split('.').map(String::from).collect();
    let root = parts.first()?.clone();
    if captures.contains(&root) {
        return (parts.len() == 1).then_some(Source::Capture(root));
    }
    if root == "content" {
        return (!each).then(|| Source::Body(parts[1..].to_vec()));
    }
    each.then_some(Source::Body(parts))
}

/// The tool-call shape of `field`, when its transform builds tool calls.
/// What cannot be followed is pushed to `found` as (where, what, what is used instead).
pub(crate) fn shape(
    field: &rtbench_engine::Field,
    fjson: &Json,
    open: &Option<Open>,
    base: &JsonPath,
    found: &mut Vec<(JsonPath, String, String)>,
) -> Option<ToolShape> {
    let transform = fjson.get("transform")?;
    let function = transform.get("function")?;
    let each = field.transform_each;
    let captures: Vec<String> = match open {
        Some(Open::Pattern { re, .. }) => group_names(re),
        _ => Vec::new(),
    };
    let mut path = base.clone();
    path.push(PathSeg::Key("transform".into()));
    let unsupported = |found: &mut Vec<(JsonPath, String, String)>, why: &str| {
        found.push((
            path.clone(),
            format!("tool calls built by this transform ({why})"),
            "any text in the region (tool calls are not constrained)".into(),
        ));
        None
    };
    // A `{...}` that names nothing available is lint's own finding (the reference fails when
    // the region closes): such a field is read as holding no tool calls, without a word here.
    let (name, args) = match function {
        Json::String(s) => {
            let p = placeholders(&Json::String(s.clone())).pop()?;
            match resolve(&p, &captures, each)? {
                Source::Body(path) => {
                    let mut n = path.clone();
                    n.push("name".into());
                    let mut a = path;
                    a.push("arguments".into());
                    (Source::Body(n), Source::Body(a))
                }
                Source::Capture(_) => {
                    return unsupported(found, "the function object comes from a capture");
                }
            }
        }
        Json::Object(o) => {
            let get = |k: &str| {
                o.get(k)
                    .and_then(|v| placeholders(v).pop())
                    .and_then(|p| resolve(&p, &captures, each))
            };
            (get("name")?, get("arguments")?)
        }
        _ => return None,
    };
    let name_capture = match &name {
        Source::Capture(cap) => Some(cap.clone()),
        Source::Body(_) => None,
    };
    let kind = match field.content {
        ContentKind::Json => {
            let Source::Body(args) = args else {
                return unsupported(found, "the arguments come from a capture");
            };
            let used = [name.clone(), Source::Body(args.clone())];
            // Placeholders on the way to the name or the arguments (`{content}` holding both)
            // are not extra requirements.
            let on_the_way = |s: &Source| {
                used.iter().any(|u| match (s, u) {
                    (Source::Body(p), Source::Body(q)) => q.starts_with(p),
                    (a, b) => a == b,
                })
            };
            let extra = placeholders(transform)
                .iter()
                .filter_map(|p| resolve(p, &captures, each))
                .filter(|s| !on_the_way(s))
                .filter_map(|s| match s {
                    Source::Body(p) => Some(p),
                    Source::Capture(_) => None,
                })
                .collect();
            let order = placeholders(transform)
                .iter()
                .filter_map(|p| match resolve(p, &captures, each) {
                    Some(Source::Body(path)) => Some(path),
                    _ => None,
                })
                .collect();
            let args_json = fjson.get("content_args").cloned().unwrap_or(Json::Null);
            Kind::Json {
                each,
                name: match name {
                    Source::Body(p) => Some(p),
                    Source::Capture(_) => None,
                },
                args,
                extra,
                order,
                dialect: dialect_of(&args_json),
            }
        }
        ContentKind::XmlInline => {
            if name_capture.is_none() || args != Source::Body(Vec::new()) {
                return unsupported(
                    found,
                    "xml-inline tool calls need the name in a capture and the arguments as {content}",
                );
            }
            let mut tag_path = base.clone();
            tag_path.extend([
                PathSeg::Key("content_args".into()),
                PathSeg::Key("tag_pattern".into()),
            ]);
            let tag = fjson
                .get("content_args")
                .and_then(|a| a.get("tag_pattern"))
                .and_then(Json::as_str)
                .and_then(|p| re::lower(p).ok());
            let split = tag.and_then(|(re, _)| split_tag(&re));
            let value_parser = fjson
                .get("content_args")
                .and_then(|a| a.get("value_parser"));
            let json_values = value_parser
                .and_then(|v| v.get("name"))
                .and_then(Json::as_str)
                == Some("json");
            if json_values
                && !value_parser
                    .and_then(|v| v.get("args"))
                    .and_then(|a| a.get("allow_non_json"))
                    .is_some_and(crate::plan::truthy)
            {
                let mut path = base.clone();
                path.extend([
                    PathSeg::Key("content_args".into()),
                    PathSeg::Key("value_parser".into()),
                ]);
                found.push((
                    path,
                    "a json value parser without allow_non_json".into(),
                    "text values as with allow_non_json (a value that is not JSON fails to parse)"
                        .into(),
                ));
            }
            match split {
                Some((prefix, key, middle, suffix)) => Kind::XmlInline {
                    prefix,
                    key,
                    middle,
                    suffix,
                    json_values,
                },
                None => {
                    found.push((
                        tag_path,
                        "a tag pattern whose key and value groups are not plain parts of it".into(),
                        "any text in the region (the parameters are not constrained)".into(),
                    ));
                    return None;
                }
            }
        }
        ContentKind::PythonCallList => {
            let expected = (
                Source::Body(vec!["name".into()]),
                Source::Body(vec!["arguments".into()]),
            );
            if !each || (name.clone(), args.clone()) != expected {
                return unsupported(
                    found,
                    "python-call-list tool calls need transform_each with {name} and {arguments}",
                );
            }
            Kind::PythonCallList
        }
        _ => return unsupported(found, "the content parser does not produce JSON values"),
    };
    Some(ToolShape { name_capture, kind })
}

fn group_names(re: &Re) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(re: &Re, out: &mut Vec<String>) {
        match re {
            Re::Group { name, re } => {
                if let Some(n) = name {
                    out.push(n.clone());
                }
                walk(re, out);
            }
            Re::Seq(items) | Re::Alt(items) => items.iter().for_each(|r| walk(r, out)),
            Re::Repeat { re, .. } | Re::Look { re, .. } => walk(re, out),
            _ => {}
        }
    }
    walk(re, &mut out);
    out
}

/// Splits a tag pattern `PREFIX (?P<key>..) MIDDLE (?P<value>..) SUFFIX` at its groups.
fn split_tag(re: &Re) -> Option<(Re, Re, Re, Re)> {
    let Re::Seq(items) = re else { return None };
    let is = |r: &Re, n: &str| matches!(r, Re::Group { name: Some(x), .. } if x == n);
    let k = items.iter().position(|r| is(r, "key"))?;
    let v = items.iter().position(|r| is(r, "value"))?;
    if v < k {
        return None;
    }
    let key = match &items[k] {
        Re::Group { re, .. } => (**re).clone(),
        _ => return None,
    };
    let part = |range: &[Re]| re::simplify(Re::Seq(range.to_vec()));
    let (prefix, middle, suffix) = (
        part(&items[..k]),
        part(&items[k + 1..v]),
        part(&items[v + 1..]),
    );
    if [&prefix, &middle, &suffix, &key]
        .iter()
        .any(|r| r.has_zero_width())
    {
        return None;
    }
    Some((prefix, key, middle, suffix))
}

/// A JSON Schema with `schema` at `path` inside objects (every key on the way required).
fn nest(reqs: &[(Vec<String>, Json)]) -> Json {
    if let Some((_, s)) = reqs.iter().find(|(p, _)| p.is_empty()) {
        return s.clone();
    }
    let mut keys: Vec<String> = Vec::new();
    for (p, _) in reqs {
        if !keys.contains(&p[0]) {
            keys.push(p[0].clone());
        }
    }
    let mut props = serde_json::Map::new();
    for k in &keys {
        let inner: Vec<(Vec<String>, Json)> = reqs
            .iter()
            .filter(|(p, _)| &p[0] == k)
            .map(|(p, s)| (p[1..].to_vec(), s.clone()))
            .collect();
        props.insert(k.clone(), nest(&inner));
    }
    json!({
        "type": "object",
        "properties": props,
        "required": keys,
        "additionalProperties": false,
    })
}

/// The values an xml-inline parameter limited to given strings (`enum`, `const`) may take, as
/// written between its tags: the string itself, or quoted where the text would read as some
/// other JSON value (`"1"`, `"true"`).
fn string_choices(schema: &Json) -> Option<Node> {
    let choices: Vec<&Json> = match (schema.get("const"), schema.get("enum")) {
        (Some(c), _) => vec![c],
        (None, Some(Json::Array(e))) => e.iter().collect(),
        _ => return None,
    };
    let lits = choices
        .iter()
        .map(|c| {
            let s = c.as_str()?;
            let reads_as_other = serde_json::from_str::<Json>(s).is_ok_and(|v| !v.is_string());
            let plain = !reads_as_other && s.trim() == s && !s.is_empty();
            Some(Node::Lit(if plain {
                s.to_string()
            } else {
                serde_json::to_string(s).unwrap_or_default()
            }))
        })
        .collect::<Option<Vec<Node>>>()?;
    Some(Node::alt(lits))
}

/// The value of an xml-inline parameter whose types are all scalars (integer, number,
/// boolean, null): its text is cast by the tool coercion, so only the spellings the cast
/// writes back unchanged (see `schema::admit_casts`).
fn scalar_value(schema: &Json) -> Option<Node> {
    let types = schema_types(schema);
    let scalar = ["integer", "number", "boolean", "null"];
    if types.is_empty() || !types.iter().all(|t| scalar.contains(&t.as_str())) {
        return None;
    }
    let pattern = crate::schema::cast_pattern(&types)?;
    let inner = pattern.strip_prefix('^')?.strip_suffix('$')?;
    let (re, _) = re::lower(inner).ok()?;
    Some(regex_node(re::simplify(re)))
}

/// The parameters a grammar allows for `tool`: as declared, strict, with cast-able strings.
fn arguments(tool: &Tool) -> Json {
    admit_casts(&strict(&tool.parameters))
}

/// Every way to write the body of one region: (the name the open's capture holds, the body).
pub(crate) fn variants(
    rules: &mut Vec<(String, Node)>,
    tools: Option<&[Tool]>,
    parallel: bool,
    close_excludes: &[String],
    shape: &ToolShape,
) -> Vec<(Option<String>, Node)> {
    match &shape.kind {
        Kind::Json {
            each,
            name,
            args,
            extra,
            order,
            dialect,
        } => {
            let extras: Vec<(Vec<String>, Json)> = extra
                .iter()
                .map(|p| (p.clone(), json!({"type": ["string", "integer"]})))
                .collect();
            let body = |schema: Json| -> Node {
                let schema = if *each {
                    let mut a = json!({"type": "array", "items": schema, "minItems": 1});
                    if !parallel {
                        a["maxItems"] = json!(1);
                    }
                    a
                } else {
                    schema
                };
                Node::seq(vec![
                    whitespace(),
                    Node::Json {
                        schema,
                        dialect: dialect.clone(),
                        excludes: close_excludes.to_vec(),
                    },
                    whitespace(),
                ])
            };
            let call = |tool_name: Option<&str>, params: Json| -> Json {
                let mut reqs = vec![(args.clone(), params)];
                if let Some(name_path) = name {
                    let name_schema = match tool_name {
                        Some(n) => json!({"const": n}),
                        None => json!({"type": "string"}),
                    };
                    reqs.insert(0, (name_path.clone(), name_schema));
                }
                reqs.extend(extras.iter().cloned());
                // Keys in the order the transform names them (`{content}` names both).
                let rank =
                    |p: &Vec<String>| order.iter().position(|o| o == p).unwrap_or(usize::MAX);
                reqs.sort_by_key(|(p, _)| rank(p));
                nest(&reqs)
            };
            match (tools, name) {
                (None, _) => vec![(None, body(call(None, json!({"type": "object"}))))],
                (Some(list), Some(_)) => {
                    let options: Vec<Json> = list
                        .iter()
                        .map(|t| call(Some(&t.name), arguments(t)))
                        .collect();
                    let schema = if options.len() == 1 {
                        options.into_iter().next().unwrap_or(Json::Bool(true))
                    } else {
                        json!({"anyOf": options})
                    };
                    vec![(None, body(schema))]
                }
                (Some(list), None) => list
                    .iter()
                    .map(|t| (Some(t.name.clone()), body(call(None, arguments(t)))))
                    .collect(),
            }
        }
        Kind::XmlInline {
            prefix,
            key,
            middle,
            suffix,
            json_values,
        } => {
            let mut value_excludes = suffix.required_literals().unwrap_or_default();
            value_excludes.extend(close_excludes.iter().cloned());
            let text_value = Node::TextWithout {
                excludes: value_excludes.clone(),
                not_start: None,
                not_blank: false,
                not_json: false,
            };
            let tag = |k: Node, v: Node| {
                Node::seq(vec![
                    regex_node(prefix.clone()),
                    k,
                    regex_node(middle.clone()),
                    v,
                    regex_node(suffix.clone()),
                ])
            };
            match tools {
                None => {
                    let one = tag(regex_node(key.clone()), text_value);
                    let body = Node::seq(vec![
                        whitespace(),
                        Node::rep(Node::seq(vec![one, whitespace()]), 0, None),
                    ]);
                    vec![(None, body)]
                }
                Some(list) => list
                    .iter()
                    .map(|t| {
                        let params = strict(&t.parameters);
                        let required: Vec<String> = params
                            .get("required")
                            .and_then(Json::as_array)
                            .map(|r| {
                                r.iter()
                                    .filter_map(|x| x.as_str().map(String::from))
                                    .collect()
                            })
                            .unwrap_or_default();
                        let mut seq = vec![whitespace()];
                        if let Some(Json::Object(props)) = params.get("properties") {
                            for (k, s) in props {
                                let value = if let Some(choices) = string_choices(s) {
                                    choices
                                } else if let Some(scalar) = scalar_value(s) {
                                    scalar
                                } else if schema_types(s).iter().any(|t| t == "string") {
                                    // Read as JSON where it is JSON, a string parameter's
                                    // text must not spell a number, a boolean or null.
                                    match &text_value {
                                        Node::TextWithout {
                                            excludes,
                                            not_start,
                                            not_blank,
                                            ..
                                        } => Node::TextWithout {
                                            excludes: excludes.clone(),
                                            not_start: *not_start,
                                            not_blank: *not_blank,
                                            not_json: *json_values,
                                        },
                                        other => other.clone(),
                                    }
                                } else if schema_types(s).is_empty() {
                                    text_value.clone()
                                } else {
                                    Node::Json {
                                        schema: strict(s),
                                        dialect: Dialect::Json,
                                        excludes: value_excludes.clone(),
                                    }
                                };
                                let one =
                                    Node::seq(vec![tag(Node::Lit(k.clone()), value), whitespace()]);
                                seq.push(if required.contains(k) {
                                    one
                                } else {
                                    Node::opt(one)
                                });
                            }
                        }
                        (Some(t.name.clone()), Node::seq(seq))
                    })
                    .collect(),
            }
        }
        Kind::PythonCallList => {
            let root = json!({});
            let mut conv = Converter::new(rules, &root).excluding(close_excludes);
            let sep = Node::seq(vec![
                Node::Lit(",".into()),
                Node::opt(Node::Lit(" ".into())),
            ]);
            let ident = Node::Regex(Re::Seq(vec![
                Re::Class {
                    ranges: vec![
                        ('A' as u32, 'Z' as u32),
                        ('_' as u32, '_' as u32),
                        ('a' as u32, 'z' as u32),
                    ],
                    negated: false,
                },
                Re::Repeat {
                    re: Box::new(Re::Class {
                        ranges: vec![
                            ('0' as u32, '9' as u32),
                            ('A' as u32, 'Z' as u32),
                            ('_' as u32, '_' as u32),
                            ('a' as u32, 'z' as u32),
                        ],
                        negated: false,
                    }),
                    min: 0,
                    max: None,
                },
            ]));
            let call = match tools {
                None => {
                    let any = conv.any_value(&Dialect::Python);
                    let kw = Node::seq(vec![ident.clone(), Node::Lit("=".into()), any]);
                    let args = Node::opt(Node::seq(vec![
                        kw.clone(),
                        Node::rep(Node::seq(vec![sep.clone(), kw]), 0, None),
                    ]));
                    Node::seq(vec![
                        ident,
                        Node::Lit("(".into()),
                        args,
                        Node::Lit(")".into()),
                    ])
                }
                Some(list) => {
                    let mut alts = Vec::new();
                    for t in list {
                        let params = arguments(t);
                        let conv_root = params.clone();
                        let mut inner =
                            Converter::new(conv.rules, &conv_root).excluding(close_excludes);
                        let required: Vec<String> = params
                            .get("required")
                            .and_then(Json::as_array)
                            .map(|r| {
                                r.iter()
                                    .filter_map(|x| x.as_str().map(String::from))
                                    .collect()
                            })
                            .unwrap_or_default();
                        let mut items = Vec::new();
                        if let Some(Json::Object(props)) = params.get("properties") {
                            for (k, s) in props {
                                let v = inner.value(s, &Dialect::Python);
                                items.push((
                                    Node::seq(vec![Node::Lit(format!("{k}=")), v]),
                                    required.contains(k),
                                ));
                            }
                        }
                        conv.notes.extend(inner.notes);
                        alts.push(Node::seq(vec![
                            Node::Lit(format!("{}(", t.name)),
                            separated(items, &sep),
                            Node::Lit(")".into()),
                        ]));
                    }
                    Node::alt(alts)
                }
            };
            let calls = if parallel {
                Node::seq(vec![
                    call.clone(),
                    Node::rep(Node::seq(vec![sep, call]), 0, None),
                ])
            } else {
                call
            };
            let body = Node::seq(vec![
                Node::Lit("[".into()),
                calls,
                Node::Lit("]".into()),
                whitespace(),
            ]);
            vec![(None, body)]
        }
    }
}
