//! A template's fields read for the grammar: how each region begins and ends, which strings
//! must stay out of other text, and the small helpers the compiler and the tool shapes share.

use serde_json::Value as Json;

use crate::ir::{Dialect, Node};
use crate::re::Re;

/// How a field's region begins.
#[derive(Clone, Debug)]
pub(crate) enum Open {
    /// One of these literals.
    Literals(Vec<String>),
    /// A pattern (zero-width parts removed).
    Pattern {
        /// The pattern.
        re: Re,
        /// The literal a trailing lookahead wants next, which the body must begin with.
        follow: Option<String>,
        /// Where the pattern is in the template.
        path: rtbench_engine::template::JsonPath,
    },
    /// Only at the very start of the output, where the next character is this one (its body
    /// starts with it).
    AtStart(char),
}

/// How a field's region ends.
#[derive(Clone, Debug)]
pub(crate) enum Close {
    /// It has no close: it runs to the end.
    None,
    /// One of these literals.
    Literals(Vec<String>),
    /// A pattern (zero-width parts removed).
    Pattern(Re),
    /// A lookahead for literals: the region ends where one of them comes next (they are the
    /// field's close excludes).
    Follow,
    /// A pattern that ends in a lookahead for a few ways the next text may begin
    /// (`</think>\s*(?:<response>|(?=[^<\s]|<\|))`): a core (`</think>`), the repeat it may
    /// end in (`\s*`), then either a consuming alternative (`<response>`) or nothing, where
    /// the next text begins as `starts` says.
    Guarded {
        /// The pattern with its lookahead read as empty (what is used when the grammar cannot
        /// put the constraint on what follows).
        clean: Re,
        /// The part every match begins with.
        core: Re,
        /// The repeat between the core and the choice, if any (it takes none of what the
        /// lookahead lets begin).
        trail: Option<Re>,
        /// The consuming alternatives, if any.
        free: Option<Re>,
        /// How the next text may begin after `bare`.
        starts: Vec<crate::follow::Start>,
        /// Where the pattern is in the template.
        path: rtbench_engine::template::JsonPath,
    },
}

/// Whitespace the parser leaves to nobody in particular (between regions).
pub(crate) fn whitespace() -> Node {
    Node::Regex(whitespace_re())
}

/// The pattern of [`whitespace`].
pub(crate) fn whitespace_re() -> Re {
    Re::Repeat {
        re: Box::new(Re::Class {
            ranges: vec![(0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)],
            negated: false,
        }),
        min: 0,
        max: None,
    }
}

/// A regex node, or a literal when the regex is one.
pub(crate) fn regex_node(re: Re) -> Node {
    match re {
        Re::Lit(s) => Node::Lit(s),
        Re::Empty => Node::empty(),
        Re::Alt(items) if items.iter().all(|i| matches!(i, Re::Lit(_))) && !items.is_empty() => {
            Node::alt(
                items
                    .into_iter()
                    .filter_map(|i| match i {
                        Re::Lit(s) => Some(Node::Lit(s)),
                        _ => None,
                    })
                    .collect(),
            )
        }
        re => Node::Regex(re),
    }
}

/// The JSON spelling the `json` parser's options allow.
pub(crate) fn dialect_of(args: &Json) -> Dialect {
    let unquoted_keys = args.get("unquoted_keys").is_some_and(truthy);
    let string_delims: Vec<(String, String)> = match args.get("string_delims") {
        Some(Json::Array(pairs)) => pairs
            .iter()
            .filter_map(|p| match p {
                Json::Array(two) if two.len() == 2 => {
                    Some((two[0].as_str()?.to_string(), two[1].as_str()?.to_string()))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    if unquoted_keys || !string_delims.is_empty() {
        Dialect::Lax {
            unquoted_keys,
            string_delims,
        }
    } else {
        Dialect::Json
    }
}

/// Python truthiness of a JSON value.
pub(crate) fn truthy(v: &Json) -> bool {
    match v {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Json::String(s) => !s.is_empty(),
        Json::Array(a) => !a.is_empty(),
        Json::Object(o) => !o.is_empty(),
    }
}
