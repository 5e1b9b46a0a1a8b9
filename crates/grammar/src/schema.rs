//! JSON Schemas as grammar nodes, for the dialects without a JSON-schema macro (GBNF, EBNF) and
//! for the spellings `%json` cannot describe (bare keys and custom string markers, Python
//! literals). The subset tool schemas use: `object` with `properties`, `required` and
//! `additionalProperties`; `array` with `items`, `minItems`, `maxItems`; `string` with `enum`,
//! `const` and anchored `pattern`s; `integer`, `number`, `boolean`, `null`; `anyOf`/`oneOf`; type
//! lists; `$ref` into `$defs`/`definitions`. Objects follow the order of `properties`; an
//! object schema that lists properties and says nothing of `additionalProperties` admits no
//! other key (as strict tool calling does). What the subset lacks is read as "any JSON value"
//! and noted in [`Converter::notes`].
//!
//! [`admit_casts`] widens a tool's parameter schemas to the strings the parser's tool
//! coercion turns into the declared type (`"3"` for an integer), so that a grammar built from
//! them accepts what the parser accepts.

use serde_json::{Map, Value as Json};

use crate::ir::{Dialect, Node};
use crate::re::{self, Re};

/// Builds grammar nodes for schemas, collecting shared rules (any value, strings, `$defs`).
#[derive(Debug)]
pub struct Converter<'a> {
    /// The rules made so far, in order.
    pub rules: &'a mut Vec<(String, Node)>,
    /// Schema keywords read approximately (`allOf`, `not`, an unanchored `pattern`, ...).
    pub notes: Vec<String>,
    /// The schema `$ref`s resolve against.
    root: Json,
    /// Strings no string value may hold (the region's close).
    excludes: Vec<String>,
}

/// Whitespace between JSON tokens.
fn ws(dialect: &Dialect) -> Node {
    match dialect {
        Dialect::Json => Node::Regex(Re::Repeat {
            re: Box::new(class(&[' ', '\t', '\n', '\r'])),
            min: 0,
            max: None,
        }),
        // The lax parser quotes bare keys only right after `{` or `,`: no spaces there.
        Dialect::Lax { .. } => Node::empty(),
        Dialect::Python => Node::opt(Node::Lit(" ".into())),
    }
}

fn class(chars: &[char]) -> Re {
    Re::Class {
        ranges: re::normalize(chars.iter().map(|c| (*c as u32, *c as u32)).collect()),
        negated: false,
    }
}

/// A JSON string literal for `s` (as `json.dumps` writes it, non-ASCII kept).
pub fn json_quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// Items separated by `sep`, each present or (when not required) absent, in order; at least
/// the required ones.
pub fn separated(items: Vec<(Node, bool)>, sep: &Node) -> Node {
    // Which item comes first decides where separators go: one alternative per possible first
    // item (every item before it must be optional).
    let mut alts = Vec::new();
    for first in 0..items.len() {
        let mut seq = vec![items[first].0.clone()];
        for (node, required) in &items[first + 1..] {
            let with_sep = Node::seq(vec![sep.clone(), node.clone()]);
            seq.push(if *required {
                with_sep
            } else {
                Node::opt(with_sep)
            });
        }
        alts.push(Node::seq(seq));
        if items[first].1 {
            break;
        }
    }
    if items.iter().all(|(_, r)| !r) {
        alts.push(Node::empty());
    }
    Node::alt(alts)
}

impl<'a> Converter<'a> {
    /// A converter adding its rules to `rules`; `root` is the schema `$ref`s point into.
    pub fn new(rules: &'a mut Vec<(String, Node)>, root: &Json) -> Converter<'a> {
        Converter {
            rules,
            notes: Vec::new(),
            root: root.clone(),
            excludes: Vec::new(),
        }
    }

    /// The same converter, keeping every string it makes from holding any of `excludes` (the
    /// region's close, which the parser cuts at even inside a string).
    pub fn excluding(mut self, excludes: &[String]) -> Self {
        let mut ex: Vec<String> = excludes.iter().filter(|e| !e.is_empty()).cloned().collect();
        ex.sort();
        ex.dedup();
        self.excludes = ex;
        self
    }

    fn note(&mut self, what: String) {
        if !self.notes.contains(&what) {
            self.notes.push(what);
        }
    }

    /// Adds the rule `name` once (built by `make` the first time) and refers to it.
    fn rule(&mut self, name: &str, make: impl FnOnce(&mut Self) -> Node) -> Node {
        if !self.rules.iter().any(|(n, _)| n == name) {
            // Reserve the name first so that a recursive schema refers to it.
            self.rules.push((name.to_string(), Node::Alt(Vec::new())));
            let node = make(self);
            if let Some(slot) = self.rules.iter_mut().find(|(n, _)| n == name) {
                slot.1 = node;
            }
        }
        Node::Ref(name.to_string())
    }

    /// The rule-name suffix for `dialect` and this converter's exclusions (rules made for
    /// different exclusions differ).
    fn suffix(&self, dialect: &Dialect) -> String {
        let d = match dialect {
            Dialect::Json => "",
            Dialect::Lax { .. } => "_lax",
            Dialect::Python => "_py",
        };
        if self.excludes.is_empty() {
            return d.to_string();
        }
        // A short stable tag of the exclusion set (FNV-1a).
        let mut h: u32 = 0x811c_9dc5;
        for b in self.excludes.join("\u{0}").bytes() {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        format!("{d}_x{:04x}", h & 0xffff)
    }

    /// A string value.
    fn string(&mut self, dialect: &Dialect) -> Node {
        let name = format!("json_string{}", self.suffix(dialect));
        let dialect = dialect.clone();
        if !self.excludes.is_empty() {
            let ex = self.excludes.clone();
            return self.rule(&name, |_| {
                let (dq_escapes, single) = match dialect {
                    Dialect::Python => ("\"\\nrtbf", true),
                    _ => ("\"\\/nrtbf", false),
                };
                let mut alts = vec![Node::StringWithout {
                    quote: '"',
                    escapes: dq_escapes.into(),
                    unicode: !single,
                    excludes: ex.clone(),
                }];
                if single {
                    alts.push(Node::StringWithout {
                        quote: '\'',
                        escapes: "'\"\\nrtbf".into(),
                        unicode: false,
                        excludes: ex.clone(),
                    });
                }
                if let Dialect::Lax { string_delims, .. } = &dialect {
                    for (open, close) in string_delims {
                        let mut e = ex.clone();
                        e.push(close.clone());
                        e.extend(control_chars());
                        alts.push(Node::seq(vec![
                            Node::Lit(open.clone()),
                            Node::TextWithout {
                                excludes: e,
                                not_start: None,
                                not_blank: false,
                                not_json: false,
                            },
                            Node::Lit(close.clone()),
                        ]));
                    }
                }
                Node::alt(alts)
            });
        }
        self.rule(&name, |_| {
            let escapes = match dialect {
                // Python reads `\/` as two characters: leave it out.
                Dialect::Python => "\"\\nrtbf",
                _ => "\"\\/nrtbf",
            };
            let plain = Re::Class {
                ranges: re::normalize(vec![
                    (0, 0x1F),
                    ('"' as u32, '"' as u32),
                    ('\\' as u32, '\\' as u32),
                ]),
                negated: true,
            };
            let escape = Re::Seq(vec![
                Re::Lit("\\".into()),
                Re::Alt(vec![
                    class(&escapes.chars().collect::<Vec<_>>()),
                    Re::Seq(vec![
                        Re::Lit("u".into()),
                        Re::Repeat {
                            re: Box::new(Re::Class {
                                ranges: re::normalize(vec![
                                    ('0' as u32, '9' as u32),
                                    ('a' as u32, 'f' as u32),
                                    ('A' as u32, 'F' as u32),
                                ]),
                                negated: false,
                            }),
                            min: 4,
                            max: Some(4),
                        },
                    ]),
                ]),
            ]);
            let quoted = Node::Regex(Re::Seq(vec![
                Re::Lit("\"".into()),
                Re::Repeat {
                    re: Box::new(Re::Alt(vec![plain, escape])),
                    min: 0,
                    max: None,
                },
                Re::Lit("\"".into()),
            ]));
            match &dialect {
                Dialect::Python => {
                    // Python also quotes with `'`.
                    let plain = Re::Class {
                        ranges: re::normalize(vec![
                            (0, 0x1F),
                            ('\'' as u32, '\'' as u32),
                            ('\\' as u32, '\\' as u32),
                        ]),
                        negated: true,
                    };
                    let escape = Re::Seq(vec![
                        Re::Lit("\\".into()),
                        class(&['\'', '"', '\\', 'n', 'r', 't', 'b', 'f']),
                    ]);
                    let single = Node::Regex(Re::Seq(vec![
                        Re::Lit("'".into()),
                        Re::Repeat {
                            re: Box::new(Re::Alt(vec![plain, escape])),
                            min: 0,
                            max: None,
                        },
                        Re::Lit("'".into()),
                    ]));
                    Node::alt(vec![quoted, single])
                }
                Dialect::Lax { string_delims, .. } if !string_delims.is_empty() => {
                    let mut alts = vec![quoted];
                    for (open, close) in string_delims {
                        let mut excludes = vec![close.clone()];
                        excludes.extend(control_chars());
                        alts.push(Node::seq(vec![
                            Node::Lit(open.clone()),
                            Node::TextWithout {
                                excludes,
                                not_start: None,
                                not_blank: false,
                                not_json: false,
                            },
                            Node::Lit(close.clone()),
                        ]));
                    }
                    Node::alt(alts)
                }
                _ => quoted,
            }
        })
    }

    fn literal_string(&mut self, s: &str, dialect: &Dialect) -> Node {
        let mut alts = vec![Node::Lit(json_quote(s))];
        if *dialect == Dialect::Python
            && !s.contains(['\'', '\\'])
            && !s.chars().any(char::is_control)
        {
            alts.push(Node::Lit(format!("'{s}'")));
        }
        if let Dialect::Lax { string_delims, .. } = dialect {
            for (open, close) in string_delims {
                if !s.contains(close.as_str()) && !s.chars().any(char::is_control) {
                    alts.push(Node::Lit(format!("{open}{s}{close}")));
                }
            }
        }
        Node::alt(alts)
    }

    fn key(&mut self, k: &str, dialect: &Dialect) -> Node {
        let bare = k
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        match dialect {
            Dialect::Lax {
                unquoted_keys: true,
                ..
            } if bare => Node::alt(vec![Node::Lit(k.to_string()), Node::Lit(json_quote(k))]),
            _ => Node::Lit(json_quote(k)),
        }
    }

    fn integer(&mut self) -> Node {
        Node::Regex(Re::Seq(vec![
            Re::Repeat {
                re: Box::new(Re::Lit("-".into())),
                min: 0,
                max: Some(1),
            },
            Re::Alt(vec![
                Re::Lit("0".into()),
                Re::Seq(vec![
                    class(&['1', '2', '3', '4', '5', '6', '7', '8', '9']),
                    Re::Repeat {
                        re: Box::new(digit()),
                        min: 0,
                        // Python call lists hold integers within 2^53.
                        max: Some(14),
                    },
                ]),
            ]),
        ]))
    }

    fn number(&mut self) -> Node {
        let Node::Regex(int) = self.integer() else {
            return Node::Alt(Vec::new());
        };
        Node::Regex(Re::Seq(vec![
            int,
            Re::Repeat {
                re: Box::new(Re::Seq(vec![
                    Re::Lit(".".into()),
                    Re::Repeat {
                        re: Box::new(digit()),
                        min: 1,
                        max: None,
                    },
                ])),
                min: 0,
                max: Some(1),
            },
            Re::Repeat {
                re: Box::new(Re::Seq(vec![
                    class(&['e', 'E']),
                    Re::Repeat {
                        re: Box::new(class(&['+', '-'])),
                        min: 0,
                        max: Some(1),
                    },
                    Re::Repeat {
                        re: Box::new(digit()),
                        min: 1,
                        max: None,
                    },
                ])),
                min: 0,
                max: Some(1),
            },
        ]))
    }

    fn constant(&mut self, v: &Json, dialect: &Dialect) -> Node {
        match (v, dialect) {
            (Json::String(s), _) => self.literal_string(s, dialect),
            (Json::Bool(true), Dialect::Python) => {
                Node::alt(vec![Node::Lit("True".into()), Node::Lit("true".into())])
            }
            (Json::Bool(false), Dialect::Python) => {
                Node::alt(vec![Node::Lit("False".into()), Node::Lit("false".into())])
            }
            (Json::Null, Dialect::Python) => {
                Node::alt(vec![Node::Lit("None".into()), Node::Lit("null".into())])
            }
            (Json::Array(items), _) => {
                let sep = Node::seq(vec![Node::Lit(",".into()), ws(dialect)]);
                let parts: Vec<(Node, bool)> = items
                    .iter()
                    .map(|i| (self.constant(i, dialect), true))
                    .collect();
                Node::seq(vec![
                    Node::Lit("[".into()),
                    separated(parts, &sep),
                    Node::Lit("]".into()),
                ])
            }
            (Json::Object(map), _) => {
                let sep = Node::seq(vec![Node::Lit(",".into()), ws(dialect)]);
                let parts: Vec<(Node, bool)> = map
                    .iter()
                    .map(|(k, v)| {
                        let key = self.key(k, dialect);
                        let value = self.constant(v, dialect);
                        (
                            Node::seq(vec![key, Node::Lit(":".into()), ws(dialect), value]),
                            true,
                        )
                    })
                    .collect();
                Node::seq(vec![
                    Node::Lit("{".into()),
                    separated(parts, &sep),
                    Node::Lit("}".into()),
                ])
            }
            (other, _) => Node::Lit(other.to_string()),
        }
    }

    /// Any JSON value (in `dialect`).
    pub fn any_value(&mut self, dialect: &Dialect) -> Node {
        let name = format!("json_value{}", self.suffix(dialect));
        let d = dialect.clone();
        let value = Node::Ref(name.clone());
        self.rule(&name, |c| {
            let sep = Node::seq(vec![ws(&d), Node::Lit(",".into()), ws(&d)]);
            let key = match &d {
                Dialect::Lax {
                    unquoted_keys: true,
                    ..
                } => Node::alt(vec![
                    c.string(&d),
                    Node::Regex(Re::Seq(vec![
                        Re::Class {
                            ranges: re::normalize(vec![
                                ('A' as u32, 'Z' as u32),
                                ('a' as u32, 'z' as u32),
                                ('_' as u32, '_' as u32),
                            ]),
                            negated: false,
                        },
                        Re::Repeat {
                            re: Box::new(Re::Class {
                                ranges: re::normalize(vec![
                                    ('0' as u32, '9' as u32),
                                    ('A' as u32, 'Z' as u32),
                                    ('a' as u32, 'z' as u32),
                                    ('_' as u32, '_' as u32),
                                ]),
                                negated: false,
                            }),
                            min: 0,
                            max: None,
                        },
                    ])),
                ]),
                _ => c.string(&d),
            };
            let member = Node::seq(vec![
                key,
                ws(&d),
                Node::Lit(":".into()),
                ws(&d),
                value.clone(),
            ]);
            let object = Node::seq(vec![
                Node::Lit("{".into()),
                ws(&d),
                Node::opt(Node::seq(vec![
                    member.clone(),
                    Node::rep(Node::seq(vec![sep.clone(), member]), 0, None),
                ])),
                ws(&d),
                Node::Lit("}".into()),
            ]);
            let array = Node::seq(vec![
                Node::Lit("[".into()),
                ws(&d),
                Node::opt(Node::seq(vec![
                    value.clone(),
                    Node::rep(Node::seq(vec![sep, value]), 0, None),
                ])),
                ws(&d),
                Node::Lit("]".into()),
            ]);
            let (t, f, n) = match d {
                Dialect::Python => (
                    Node::alt(vec![Node::Lit("True".into()), Node::Lit("true".into())]),
                    Node::alt(vec![Node::Lit("False".into()), Node::Lit("false".into())]),
                    Node::alt(vec![Node::Lit("None".into()), Node::Lit("null".into())]),
                ),
                _ => (
                    Node::Lit("true".into()),
                    Node::Lit("false".into()),
                    Node::Lit("null".into()),
                ),
            };
            let number = c.number();
            Node::alt(vec![object, array, c.string(&d), number, t, f, n])
        })
    }

    /// The grammar of values valid under `schema`, written in `dialect`.
    pub fn value(&mut self, schema: &Json, dialect: &Dialect) -> Node {
        self.value_depth(schema, dialect, 0)
    }

    fn value_depth(&mut self, schema: &Json, dialect: &Dialect, depth: usize) -> Node {
        if depth > 64 {
            self.note("a schema nested more than 64 levels deep".into());
            return self.any_value(dialect);
        }
        let map = match schema {
            Json::Bool(true) => return self.any_value(dialect),
            Json::Bool(false) => return Node::Alt(Vec::new()),
            Json::Object(m) => m,
            _ => {
                self.note("a schema that is not an object".into());
                return self.any_value(dialect);
            }
        };
        if let Some(Json::String(r)) = map.get("$ref") {
            return self.reference(r, dialect, depth);
        }
        if let Some(c) = map.get("const") {
            return self.constant(c, dialect);
        }
        if let Some(Json::Array(options)) = map.get("enum") {
            let alts = options.iter().map(|o| self.constant(o, dialect)).collect();
            return Node::alt(alts);
        }
        for union in ["anyOf", "oneOf"] {
            if let Some(Json::Array(options)) = map.get(union) {
                let alts = options
                    .iter()
                    .map(|o| self.value_depth(o, dialect, depth + 1))
                    .collect();
                return Node::alt(alts);
            }
        }
        for unsupported in [
            "allOf",
            "not",
            "if",
            "patternProperties",
            "dependentSchemas",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "uniqueItems",
            "format",
        ] {
            if map.contains_key(unsupported) {
                self.note(format!("the schema keyword '{unsupported}' (not enforced)"));
            }
        }
        let types: Vec<String> = match map.get("type") {
            Some(Json::String(t)) => vec![t.clone()],
            Some(Json::Array(ts)) => ts
                .iter()
                .filter_map(|t| t.as_str().map(String::from))
                .collect(),
            _ => Vec::new(),
        };
        let mut types = types;
        if map.get("nullable").and_then(Json::as_bool) == Some(true)
            && !types.iter().any(|t| t == "null")
        {
            types.push("null".into());
        }
        if types.is_empty() {
            if map.contains_key("properties") {
                types.push("object".into());
            } else if map.contains_key("items") {
                types.push("array".into());
            } else {
                return self.any_value(dialect);
            }
        }
        let alts = types
            .iter()
            .map(|t| self.typed(t, map, dialect, depth))
            .collect();
        Node::alt(alts)
    }

    fn reference(&mut self, r: &str, dialect: &Dialect, depth: usize) -> Node {
        let target = r
            .strip_prefix("#/$defs/")
            .map(|n| ("$defs", n))
            .or_else(|| r.strip_prefix("#/definitions/").map(|n| ("definitions", n)));
        let Some((section, name)) = target else {
            self.note(format!(
                "the $ref '{r}' (only #/$defs/... and #/definitions/... are followed)"
            ));
            return self.any_value(dialect);
        };
        let Some(schema) = self.root.get(section).and_then(|d| d.get(name)).cloned() else {
            self.note(format!("the $ref '{r}', which the schema does not define"));
            return self.any_value(dialect);
        };
        let clean: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let rule = format!("def_{clean}{}", self.suffix(dialect));
        let d = dialect.clone();
        self.rule(&rule, move |c| c.value_depth(&schema, &d, depth + 1))
    }

    fn typed(&mut self, t: &str, map: &Map<String, Json>, dialect: &Dialect, depth: usize) -> Node {
        match (t, dialect) {
            ("string", _) => match map.get("pattern").and_then(Json::as_str) {
                Some(p) => self.pattern_string(p, dialect),
                None => self.string(dialect),
            },
            ("integer", _) => self.integer(),
            ("number", _) => self.number(),
            ("boolean", Dialect::Python) => self
                .constant(&Json::Bool(true), dialect)
                .pipe_alt(self.constant(&Json::Bool(false), dialect)),
            ("boolean", _) => Node::alt(vec![Node::Lit("true".into()), Node::Lit("false".into())]),
            ("null", _) => self.constant(&Json::Null, dialect),
            ("object", _) => self.object(map, dialect, depth),
            ("array", _) => self.array(map, dialect, depth),
            (other, _) => {
                self.note(format!("the type '{other}'"));
                self.any_value(dialect)
            }
        }
    }

    fn pattern_string(&mut self, pattern: &str, dialect: &Dialect) -> Node {
        let anchored = pattern.strip_prefix('^').and_then(|p| p.strip_suffix('$'));
        let lowered = anchored.and_then(|p| re::lower(p).ok());
        match lowered {
            Some((inner, issues))
                if issues.is_empty() && !inner.has_zero_width() && plain_chars(&inner) =>
            {
                Node::Regex(Re::Seq(vec![
                    Re::Lit("\"".into()),
                    inner,
                    Re::Lit("\"".into()),
                ]))
            }
            _ => {
                self.note(format!(
                    "the string pattern '{pattern}' (any string is allowed)"
                ));
                self.string(dialect)
            }
        }
    }

    fn object(&mut self, map: &Map<String, Json>, dialect: &Dialect, depth: usize) -> Node {
        let props = match map.get("properties") {
            Some(Json::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        let additional = map.get("additionalProperties");
        if props.is_empty() {
            return match additional {
                Some(Json::Bool(false)) => Node::seq(vec![
                    Node::Lit("{".into()),
                    ws(dialect),
                    Node::Lit("}".into()),
                ]),
                Some(schema @ Json::Object(_)) => {
                    let value = self.value_depth(schema, dialect, depth + 1);
                    let key = self.string(dialect);
                    let member = Node::seq(vec![
                        key,
                        ws(dialect),
                        Node::Lit(":".into()),
                        ws(dialect),
                        value,
                    ]);
                    let sep = Node::seq(vec![ws(dialect), Node::Lit(",".into()), ws(dialect)]);
                    Node::seq(vec![
                        Node::Lit("{".into()),
                        ws(dialect),
                        Node::opt(Node::seq(vec![
                            member.clone(),
                            Node::rep(Node::seq(vec![sep, member]), 0, None),
                        ])),
                        ws(dialect),
                        Node::Lit("}".into()),
                    ])
                }
                _ => self.any_object(dialect),
            };
        }
        if matches!(additional, Some(Json::Object(_)) | Some(Json::Bool(true))) {
            self.note(
                "additional properties beside the listed ones (only the listed ones are allowed)"
                    .into(),
            );
        }
        let required: Vec<&str> = match map.get("required") {
            Some(Json::Array(r)) => r.iter().filter_map(Json::as_str).collect(),
            _ => Vec::new(),
        };
        let mut items = Vec::new();
        for (k, v) in &props {
            let key = self.key(k, dialect);
            let value = self.value_depth(v, dialect, depth + 1);
            items.push((
                Node::seq(vec![
                    key,
                    ws(dialect),
                    Node::Lit(":".into()),
                    ws(dialect),
                    value,
                ]),
                required.contains(&k.as_str()),
            ));
        }
        let sep = Node::seq(vec![ws(dialect), Node::Lit(",".into()), ws(dialect)]);
        Node::seq(vec![
            Node::Lit("{".into()),
            ws(dialect),
            separated(items, &sep),
            ws(dialect),
            Node::Lit("}".into()),
        ])
    }

    fn any_object(&mut self, dialect: &Dialect) -> Node {
        let name = format!("json_object{}", self.suffix(dialect));
        let d = dialect.clone();
        self.rule(&name, |c| {
            let value = c.any_value(&d);
            let key = c.string(&d);
            let member = Node::seq(vec![key, ws(&d), Node::Lit(":".into()), ws(&d), value]);
            let sep = Node::seq(vec![ws(&d), Node::Lit(",".into()), ws(&d)]);
            Node::seq(vec![
                Node::Lit("{".into()),
                ws(&d),
                Node::opt(Node::seq(vec![
                    member.clone(),
                    Node::rep(Node::seq(vec![sep, member]), 0, None),
                ])),
                ws(&d),
                Node::Lit("}".into()),
            ])
        })
    }

    fn array(&mut self, map: &Map<String, Json>, dialect: &Dialect, depth: usize) -> Node {
        let item = match map.get("items") {
            Some(s @ (Json::Object(_) | Json::Bool(_))) => self.value_depth(s, dialect, depth + 1),
            Some(_) => {
                self.note("'items' that is not one schema".into());
                self.any_value(dialect)
            }
            None => self.any_value(dialect),
        };
        let min = map.get("minItems").and_then(Json::as_u64).unwrap_or(0);
        let max = map.get("maxItems").and_then(Json::as_u64);
        let min = u32::try_from(min).unwrap_or(u32::MAX);
        let max = max.map(|m| u32::try_from(m).unwrap_or(u32::MAX));
        let sep = Node::seq(vec![ws(dialect), Node::Lit(",".into()), ws(dialect)]);
        let rest = Node::rep(
            Node::seq(vec![sep, item.clone()]),
            min.saturating_sub(1),
            max.map(|m| m.saturating_sub(1)),
        );
        let items = Node::seq(vec![item, rest]);
        let body = if min == 0 { Node::opt(items) } else { items };
        let body = if max == Some(0) { Node::empty() } else { body };
        Node::seq(vec![
            Node::Lit("[".into()),
            ws(dialect),
            body,
            ws(dialect),
            Node::Lit("]".into()),
        ])
    }
}

trait PipeAlt {
    fn pipe_alt(self, other: Node) -> Node;
}

impl PipeAlt for Node {
    fn pipe_alt(self, other: Node) -> Node {
        Node::alt(vec![self, other])
    }
}

/// The control characters, one string each: text between custom string markers is copied
/// into a JSON string as it is, where a control character does not parse (and the parser
/// refuses its own sentinels, `\x01` and `\x02`, anywhere).
fn control_chars() -> impl Iterator<Item = String> {
    (0u32..0x20).filter_map(char::from_u32).map(String::from)
}

fn digit() -> Re {
    Re::Class {
        ranges: vec![('0' as u32, '9' as u32)],
        negated: false,
    }
}

/// Whether every character the expression can match stands for itself inside a JSON string
/// (no quote, backslash or control character), so that the pattern applies to the text as
/// written.
fn plain_chars(re: &Re) -> bool {
    match re {
        Re::Lit(s) => !s
            .chars()
            .any(|c| c == '"' || c == '\\' || (c as u32) < 0x20),
        Re::Class {
            ranges,
            negated: false,
        } => !ranges.iter().any(|&(a, b)| {
            a < 0x20 || (a..=b).contains(&('"' as u32)) || (a..=b).contains(&('\\' as u32))
        }),
        Re::Class { negated: true, .. } | Re::Any => false,
        Re::Seq(items) | Re::Alt(items) => items.iter().all(plain_chars),
        Re::Repeat { re, .. } | Re::Group { re, .. } => plain_chars(re),
        Re::Empty => true,
        Re::Look { .. } | Re::Assert(_) => false,
    }
}

/// The types the parser's tool coercion reads from a parameter schema (declared types, then
/// `anyOf`/`oneOf` members, then `null` when `nullable`).
pub fn schema_types(schema: &Json) -> Vec<String> {
    let Json::Object(map) = schema else {
        return Vec::new();
    };
    let mut types: Vec<String> = match map.get("type") {
        Some(Json::String(t)) => vec![t.clone()],
        Some(Json::Array(ts)) => ts
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    };
    for union in ["anyOf", "oneOf"] {
        if let Some(Json::Array(choices)) = map.get(union) {
            for c in choices {
                types.extend(schema_types(c));
            }
        }
    }
    let nullable = map
        .get("nullable")
        .is_some_and(|v| !matches!(v, Json::Null | Json::Bool(false)));
    if nullable && !types.iter().any(|t| t == "null") {
        types.push("null".into());
    }
    types
}

/// The anchored pattern of strings the coercion turns into one of `types` and that read back
/// as they were written (the value's JSON spelling is the string: `3`, `-2.5`, `true`), or
/// `None` when no type is cast from a plain string. Other spellings the coercion takes
/// (`03`, `2.50`, `1e3`, `True`, `None`, a number with more digits than a float keeps) change
/// the text, a loss the parser reports, so the grammar leaves them out.
pub(crate) fn cast_pattern(types: &[String]) -> Option<String> {
    let mut alts: Vec<&str> = Vec::new();
    for t in types {
        let alt = match t.as_str() {
            "integer" => "0|-?[1-9][0-9]*",
            // Within 15 significant digits a float keeps the digits written, and without an
            // exponent or a trailing zero its shortest spelling is the one written.
            "number" => {
                "0|-?[1-9][0-9]{0,14}|-?[1-9][0-9]{0,6}\\.(0|[0-9]{0,6}[1-9])|-?0\\.(0|0{0,3}[1-9]([0-9]{0,9}[1-9])?)"
            }
            "boolean" => "true|false",
            "null" => "null",
            _ => continue,
        };
        if !alts.contains(&alt) {
            alts.push(alt);
        }
    }
    (!alts.is_empty()).then(|| format!("^({})$", alts.join("|")))
}

/// A tool's `parameters` schema widened so that each parameter whose type is not `string`
/// also accepts a JSON string the parser's coercion casts into that type (`"days": "3"` for
/// an integer). Parameters whose schema allows a string are left alone: the parser keeps such
/// strings as they are.
pub fn admit_casts(parameters: &Json) -> Json {
    let Json::Object(map) = parameters else {
        return parameters.clone();
    };
    let mut out = map.clone();
    if let Some(Json::Object(props)) = map.get("properties") {
        let mut widened = Map::new();
        for (k, schema) in props {
            let types = schema_types(schema);
            let widened_schema = if types.iter().any(|t| t == "string") {
                schema.clone()
            } else {
                match cast_pattern(&types) {
                    Some(pattern) => serde_json::json!({
                        "anyOf": [schema, {"type": "string", "pattern": pattern}]
                    }),
                    None => schema.clone(),
                }
            };
            widened.insert(k.clone(), widened_schema);
        }
        out.insert("properties".into(), Json::Object(widened));
    }
    Json::Object(out)
}

/// A tool's parameters schema made strict: an object schema with `properties` and no word on
/// `additionalProperties` admits no other key (what strict tool calling means, and what the
/// GBNF and EBNF converters assume).
pub fn strict(parameters: &Json) -> Json {
    match parameters {
        Json::Object(map)
            if map.contains_key("properties") && !map.contains_key("additionalProperties") =>
        {
            let mut out = map.clone();
            out.insert("additionalProperties".into(), Json::Bool(false));
            Json::Object(out)
        }
        Json::Object(map) if map.is_empty() => serde_json::json!({"type": "object"}),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Grammar;
    use serde_json::json;

    fn accepts(schema: Json, dialect: Dialect, text: &str) -> bool {
        Grammar {
            start: Node::Json {
                schema,
                dialect,
                excludes: Vec::new(),
            },
            rules: Vec::new(),
            approximations: Vec::new(),
        }
        .accepts(text)
    }

    fn json(schema: Json, text: &str) -> bool {
        accepts(schema, Dialect::Json, text)
    }

    #[test]
    fn objects_follow_properties_order_and_required() {
        let s = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
            "required": ["b"],
            "additionalProperties": false
        });
        for ok in [
            r#"{"b": "x"}"#,
            r#"{"a": 1, "b": "x"}"#,
            r#"{"b":"x","c":true}"#,
            r#"{ "a": -3 , "b": "" , "c": false }"#,
        ] {
            assert!(json(s.clone(), ok), "{ok}");
        }
        for bad in [
            r#"{}"#,
            r#"{"a": 1}"#,
            r#"{"b": "x", "a": 1}"#,
            r#"{"b": "x", "d": 1}"#,
            r#"{"a": 1.5, "b": "x"}"#,
            r#"{"b": "x",}"#,
        ] {
            assert!(!json(s.clone(), bad), "{bad}");
        }
    }

    #[test]
    fn enums_consts_unions_and_type_lists() {
        assert!(json(
            json!({"enum": ["celsius", "fahrenheit"]}),
            r#""celsius""#
        ));
        assert!(!json(
            json!({"enum": ["celsius", "fahrenheit"]}),
            r#""kelvin""#
        ));
        assert!(json(
            json!({"const": {"k": [1, null]}}),
            r#"{"k":[1,null]}"#
        ));
        let u =
            json!({"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]});
        assert!(json(u.clone(), "42"));
        assert!(json(u.clone(), r#"["a", "b"]"#));
        assert!(!json(u, r#"[1]"#));
        let t = json!({"type": ["string", "null"]});
        assert!(json(t.clone(), "null"));
        assert!(json(t.clone(), r#""é\n\u00e9""#));
        assert!(!json(t, "0"));
        assert!(json(json!({"type": "number"}), "-0.5e+3"));
        assert!(!json(json!({"type": "number"}), "01"));
        assert!(json(json!({"type": "string", "nullable": true}), "null"));
    }

    #[test]
    fn arrays_bounds_refs_and_patterns() {
        let a =
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2});
        assert!(!json(a.clone(), "[]"));
        assert!(json(a.clone(), "[1]"));
        assert!(json(a.clone(), "[1, 2]"));
        assert!(!json(a, "[1, 2, 3]"));
        // A recursive $ref.
        let tree = json!({
            "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "additionalProperties": false}},
            "$ref": "#/$defs/node"
        });
        assert!(json(tree.clone(), r#"{"kids": [{"kids": []}, {}]}"#));
        assert!(!json(tree, r#"{"kids": [{"x": 1}]}"#));
        let p = json!({"type": "string", "pattern": "^[A-Z]{3}$"});
        assert!(json(p.clone(), r#""EUR""#));
        assert!(!json(p, r#""EURO""#));
        // Any object when the schema lists no properties.
        assert!(json(
            json!({"type": "object"}),
            r#"{"x": {"y": [true, null, 1.5]}}"#
        ));
    }

    #[test]
    fn casts_widen_non_string_parameters() {
        let params = json!({"type": "object", "properties": {
            "days": {"type": "integer"}, "price": {"type": "number"}, "flag": {"type": "boolean"},
            "city": {"type": "string"}, "either": {"type": ["string", "integer"]}
        }});
        let s = admit_casts(&strict(&params));
        assert!(json(
            s.clone(),
            r#"{"days": "3", "price": "2.5", "flag": "true"}"#
        ));
        // Spellings the coercion reads but writes back otherwise are left out.
        for changed in [
            r#"{"days": "03"}"#,
            r#"{"days": "-0"}"#,
            r#"{"price": "2.50"}"#,
            r#"{"price": "0E0"}"#,
            r#"{"price": "9845600165300005"}"#,
            r#"{"flag": "True"}"#,
        ] {
            assert!(!json(s.clone(), changed), "{changed}");
        }
        assert!(json(
            s.clone(),
            r#"{"days": 3, "price": 2.5, "flag": true, "city": "x", "either": "y"}"#
        ));
        assert!(!json(s.clone(), r#"{"days": "three"}"#));
        assert!(!json(s, r#"{"city": 3}"#));
    }

    #[test]
    fn python_and_lax_spellings() {
        let s = json!({"type": "object", "properties": {"ok": {"type": "boolean"}, "name": {"type": "string"}, "none": {"type": "null"}}});
        assert!(accepts(
            s.clone(),
            Dialect::Python,
            r#"{"ok": True, "name": 'x', "none": None}"#
        ));
        assert!(!accepts(s, Dialect::Python, r#"{"ok": TRUE}"#));
        let lax = Dialect::Lax {
            unquoted_keys: true,
            string_delims: vec![("<|\"|>".into(), "<|\"|>".into())],
        };
        let s = json!({"type": "object", "properties": {"near": {"type": "string"}, "limit": {"type": "integer"}}});
        assert!(accepts(
            s.clone(),
            lax.clone(),
            r#"{near:<|"|>Gare du "Nord"<|"|>,limit:5}"#
        ));
        assert!(accepts(s.clone(), lax.clone(), r#"{"near":"x"}"#));
        assert!(!accepts(s, lax, r#"{near:<|"|>x<|"|>, limit:5}"#));
    }
}
