//! The grammar's intermediate form: a few node kinds every output dialect can say (literals,
//! text that avoids given strings, regular expressions, JSON values under a schema, sequence,
//! alternation, bounded repetition and named rules), so that one compiled template yields
//! Lark, GBNF, EBNF and a structural tag that describe the same language.

use crate::re::Re;

/// One piece of a grammar.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Exactly this text.
    Lit(String),
    /// Any text, possibly empty, in which none of `excludes` occurs; with `not_start`, it also
    /// does not begin with that character (a lookahead open that must not fire).
    TextWithout {
        /// The strings that must not occur anywhere in the text.
        excludes: Vec<String>,
        /// A character the text must not begin with.
        not_start: Option<char>,
        /// The text holds something besides whitespace. Set only where another alternative
        /// takes blank text, so the language is the same with or without it: the BNF outputs
        /// ignore it, and Lark uses it so that llguidance's lexer, which commits to a lazy
        /// lexeme as soon as it matches, does not take blank text into this alternative.
        not_blank: bool,
        /// The text does not read as a JSON value other than a string (what an `xml-inline`
        /// value parsed by `json` with `allow_non_json` turns into a number, a boolean or
        /// null): after JSON whitespace it is not a number, `true`, `false`, `null`, `NaN`
        /// or `Infinity` (with JSON whitespace after), and it does not begin with `[` or `{`
        /// (telling an array apart from other text needs more than a regular language, so
        /// such text is left out whole).
        not_json: bool,
    },
    /// A regular expression (no lookaround, no lazy or possessive repeats).
    Regex(Re),
    /// A JSON value valid under `schema`, written in `dialect`.
    Json {
        /// The JSON Schema the value follows.
        schema: serde_json::Value,
        /// How the value is spelled.
        dialect: Dialect,
        /// Strings that must not occur in the value's raw text (the region's close: the
        /// parser cuts the region there, inside a string too).
        excludes: Vec<String>,
    },
    /// A quoted string (JSON's, or Python's) whose raw text, quotes and escapes as written,
    /// holds none of `excludes`.
    StringWithout {
        /// The quote character (`"` or `'`).
        quote: char,
        /// The characters a backslash may escape (`\uXXXX` aside).
        escapes: String,
        /// Whether `\uXXXX` escapes are read.
        unicode: bool,
        /// The strings that must not occur.
        excludes: Vec<String>,
    },
    /// The items one after the other.
    Seq(Vec<Node>),
    /// Any one of the items (none: matches nothing).
    Alt(Vec<Node>),
    /// `node` repeated from `min` to `max` times (`None`: no limit).
    Repeat {
        /// What repeats.
        node: Box<Node>,
        /// The least number of times.
        min: u32,
        /// The most, or no limit.
        max: Option<u32>,
    },
    /// The rule of this name (see [`Grammar::rules`]).
    Ref(String),
}

/// How a JSON value is spelled: the content parser decides what it reads back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Standard JSON, as `json.loads` reads it.
    Json,
    /// JSON with bare identifier keys allowed and strings also written between custom markers
    /// (the `json` parser's `unquoted_keys` and `string_delims`).
    Lax {
        /// Keys may be bare identifiers.
        unquoted_keys: bool,
        /// Pairs of custom string markers.
        string_delims: Vec<(String, String)>,
    },
    /// Python literals as the `python-call-list` parser reads them (`True`, `None`, ...).
    Python,
}

/// The pattern of a quoted string: plain characters (not the quote, a backslash or a control
/// character) and escapes.
pub fn string_re(quote: char, escapes: &str, unicode: bool) -> Re {
    use crate::re::normalize;
    let plain = Re::Class {
        ranges: normalize(vec![
            (0, 0x1F),
            (quote as u32, quote as u32),
            ('\\' as u32, '\\' as u32),
        ]),
        negated: true,
    };
    let mut esc = vec![Re::Class {
        ranges: normalize(escapes.chars().map(|c| (c as u32, c as u32)).collect()),
        negated: false,
    }];
    if unicode {
        esc.push(Re::Seq(vec![
            Re::Lit("u".into()),
            Re::Repeat {
                re: Box::new(Re::Class {
                    ranges: normalize(vec![
                        ('0' as u32, '9' as u32),
                        ('a' as u32, 'f' as u32),
                        ('A' as u32, 'F' as u32),
                    ]),
                    negated: false,
                }),
                min: 4,
                max: Some(4),
            },
        ]));
    }
    let escape = Re::Seq(vec![Re::Lit("\\".into()), Re::Alt(esc)]);
    Re::Seq(vec![
        Re::Lit(quote.to_string()),
        Re::Repeat {
            re: Box::new(Re::Alt(vec![plain, escape])),
            min: 0,
            max: None,
        },
        Re::Lit(quote.to_string()),
    ])
}

impl Node {
    /// The empty text.
    pub fn empty() -> Node {
        Node::Seq(Vec::new())
    }

    /// `node` zero or one time.
    pub fn opt(node: Node) -> Node {
        Node::Repeat {
            node: Box::new(node),
            min: 0,
            max: Some(1),
        }
    }

    /// `node` repeated `min..=max` times.
    pub fn rep(node: Node, min: u32, max: Option<u32>) -> Node {
        Node::Repeat {
            node: Box::new(node),
            min,
            max,
        }
    }

    /// Whether this node matches only the empty text.
    pub fn is_empty(&self) -> bool {
        match self {
            Node::Lit(s) => s.is_empty(),
            Node::Seq(items) => items.iter().all(Node::is_empty),
            Node::Regex(re) => matches!(re, Re::Empty),
            Node::Repeat { node, max, .. } => *max == Some(0) || node.is_empty(),
            _ => false,
        }
    }

    /// A sequence with empty items dropped, nested sequences flattened and adjacent literals
    /// joined; one item stands alone.
    pub fn seq(items: Vec<Node>) -> Node {
        let mut out: Vec<Node> = Vec::new();
        for item in items {
            let flat = match item {
                Node::Seq(inner) => inner,
                other => vec![other],
            };
            for n in flat {
                if n.is_empty() {
                    continue;
                }
                match (out.last_mut(), n) {
                    (Some(Node::Lit(a)), Node::Lit(b)) => a.push_str(&b),
                    (_, n) => out.push(n),
                }
            }
        }
        if out.len() == 1 {
            out.pop().unwrap_or_else(Node::empty)
        } else {
            Node::Seq(out)
        }
    }

    /// An alternation of distinct items; one item stands alone.
    pub fn alt(items: Vec<Node>) -> Node {
        let mut out: Vec<Node> = Vec::new();
        let mut literals: std::collections::HashSet<String> = std::collections::HashSet::new();
        for item in items {
            let flat = match item {
                Node::Alt(inner) if !inner.is_empty() => inner,
                other => vec![other],
            };
            for n in flat {
                // Literals (a delimiter's thousands of alternatives) are told apart by a set;
                // comparing each with all before it would be quadratic.
                let seen = match &n {
                    Node::Lit(s) => !literals.insert(s.clone()),
                    other => out.contains(other),
                };
                if !seen {
                    out.push(n);
                }
            }
        }
        if out.len() == 1 {
            out.pop().unwrap_or_else(|| Node::Alt(Vec::new()))
        } else {
            Node::Alt(out)
        }
    }
}

/// A compiled grammar: the start node, the named rules it refers to, and what could not be said
/// exactly.
#[derive(Clone, Debug)]
pub struct Grammar {
    /// The model's whole output after the prompt.
    pub start: Node,
    /// Named rules, in the order they were made (names are unique).
    pub rules: Vec<(String, Node)>,
    /// Template features the grammar only approximates, each located in the template file.
    pub approximations: Vec<Approximation>,
}

/// A template feature the grammar cannot express exactly, and what it says instead.
#[derive(Clone, Debug, PartialEq)]
pub struct Approximation {
    /// The 1-based line of the key or pattern in the template file (0 when the template has no
    /// file positions).
    pub line: usize,
    /// The 1-based column, in code points.
    pub col: usize,
    /// The key's path in the template, dotted (`fields.thinking.close_pattern`).
    pub key_path: String,
    /// The same path as the template's JSON path, for locating it like a lint finding.
    pub path: rtbench_engine::template::JsonPath,
    /// What the grammar cannot say.
    pub feature: String,
    /// What it says instead.
    pub used: String,
}
