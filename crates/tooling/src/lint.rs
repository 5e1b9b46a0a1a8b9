//! Lint: warnings about templates the reference loads but that are likely mistakes or will not
//! port to other runtimes. Findings are located like validation errors (by JSON path), so the
//! file layer shows them with `file:line:col` and a caret.
//!
//! - Pattern constructs other regex engines cannot portably use: backreferences, atomic groups
//!   and possessive quantifiers (recursion is refused at load time already).
//! - A close delimiter that can never match after its open (a close pattern anchored at the
//!   start of the text), or that matches the empty string right after it.
//! - An implicit field with no close, which takes everything up to the end of the stream.
//! - Literal delimiters that are equal to or prefixes of each other where both are watched at
//!   the same time (opens of any field, and the implicit field's close).

use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::py::PathSeg;
use rtbench_engine::template::Template;
use rtbench_engine::template::error::{JsonPath, Target, TemplateError};
use rtbench_engine::value::Value;

/// Which delimiter of a field.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Open,
    Close,
}

impl Role {
    fn key(self, pattern: bool) -> &'static str {
        match (self, pattern) {
            (Role::Open, false) => "open",
            (Role::Open, true) => "open_pattern",
            (Role::Close, false) => "close",
            (Role::Close, true) => "close_pattern",
        }
    }
}

/// Lints a loaded template. `spec` is the template's JSON value (to locate list members).
pub fn lint(template: &Template, spec: &Value) -> Vec<TemplateError> {
    let mut out = Vec::new();
    if let Delimiter::Pattern(_) = template.start_anchor() {
        portability(
            template.start_anchor(),
            vec![key("start_anchor_pattern")],
            &mut out,
        );
    }
    for f in template.fields() {
        for (role, d) in [(Role::Open, &f.open), (Role::Close, &f.close)] {
            if let Some(d) = d {
                portability(d, delimiter_path(&f.name, role, d), &mut out);
            }
        }
        if let (Some(open), Some(close @ Delimiter::Pattern(p))) = (&f.open, &f.close) {
            let path = delimiter_path(&f.name, Role::Close, close);
            if p.regex.features().text_start_only {
                out.push(
                    TemplateError::new(
                        format!(
                            "field '{}': the close pattern can only match at the very start of the text, so it can never match after the open",
                            f.name
                        ),
                        path,
                        Target::Value,
                    )
                    .help("`^` and `\\A` mean the start of the (cut) prefix, not of the region; drop the anchor, or use (?m)^ for the start of a line"),
                );
            } else if let Delimiter::Literal(set) = open
                && set
                    .literals
                    .iter()
                    .all(|lit| always_empty_after(&p.regex, lit))
            {
                out.push(
                    TemplateError::new(
                        format!(
                            "field '{}': the close pattern matches the empty string right after the open, so every region of this field is empty",
                            f.name
                        ),
                        path,
                        Target::Value,
                    )
                    .help("make the close consume text, or put the lookaround after text it must follow"),
                );
            }
        }
    }
    if let Some(i) = template.implicit() {
        let f = &template.fields()[i];
        if f.close.is_none() {
            out.push(
                TemplateError::new(
                    format!(
                        "field '{}' takes leftover text and has no close: it runs to the end of the stream, taking any end-of-turn token the model writes",
                        f.name
                    ),
                    vec![key("fields"), key(&f.name)],
                    Target::Key,
                )
                .help("add a close, e.g. the model's end-of-turn token (\"close\": \"<|im_end|>\")"),
            );
        }
    }
    overlapping_literals(template, spec, &mut out);
    out
}

/// Whether the close pattern matches the empty string right after `open` whatever follows
/// (tried with ordinary text after it, so `$` and `\Z` do not count).
fn always_empty_after(close: &pyregex::Regex, open: &str) -> bool {
    let text = format!("{open}x y\n");
    matches!(close.match_at(&text, open.len()), Ok(Some(m)) if m.start() == m.end())
}

fn key(k: &str) -> PathSeg {
    PathSeg::Key(k.to_string())
}

fn delimiter_path(field: &str, role: Role, d: &Delimiter) -> JsonPath {
    vec![
        key("fields"),
        key(field),
        key(role.key(matches!(d, Delimiter::Pattern(_)))),
    ]
}

fn portability(d: &Delimiter, path: JsonPath, out: &mut Vec<TemplateError>) {
    let Delimiter::Pattern(p) = d else { return };
    let f = p.regex.features();
    let mut constructs = Vec::new();
    if f.backrefs {
        constructs.push("backreferences (\\1, (?P=name))");
    }
    if f.atomic {
        constructs.push("atomic groups ((?>...))");
    }
    if f.possessive {
        constructs.push("possessive quantifiers (a*+, a++)");
    }
    if constructs.is_empty() {
        return;
    }
    out.push(
        TemplateError::new(
            format!(
                "pattern {} uses {}: Python's regex module accepts them, but many other regex engines (Rust's regex, RE2, Go, JavaScript) do not, so runtimes that reimplement this template may refuse it or match differently",
                Value::from(p.source()).py_repr(),
                constructs.join(", ")
            ),
            path,
            Target::Value,
        )
        .help("rewrite without them where possible (e.g. a*+ as a* when what follows cannot match a)"),
    );
}

/// One literal delimiter and where it is watched.
struct Literal<'a> {
    text: &'a str,
    field: &'a str,
    role: Role,
    path: JsonPath,
}

fn literals<'a>(template: &'a Template, spec: &Value) -> Vec<Literal<'a>> {
    let mut out = Vec::new();
    for (i, f) in template.fields().iter().enumerate() {
        // Watched together: every open, and the close of the implicit field (outside regions).
        let candidates = [
            (Role::Open, f.open.as_ref()),
            (
                Role::Close,
                f.close.as_ref().filter(|_| template.implicit() == Some(i)),
            ),
        ];
        for (role, d) in candidates {
            let Some(Delimiter::Literal(set)) = d else {
                continue;
            };
            let base = vec![key("fields"), key(&f.name), key(role.key(false))];
            let node = lookup(spec, &base);
            for lit in &set.literals {
                let mut path = base.clone();
                if let Some(Value::List(items)) = node
                    && let Some(j) = items.iter().position(|v| v.as_str() == Some(lit.as_str()))
                {
                    path.push(PathSeg::Index(j));
                }
                out.push(Literal {
                    text: lit,
                    field: &f.name,
                    role,
                    path,
                });
            }
        }
    }
    out
}

fn lookup<'v>(v: &'v Value, path: &[PathSeg]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, seg| match (v, seg) {
        (Value::Dict(d), PathSeg::Key(k)) => d.get(k),
        (Value::List(l), PathSeg::Index(i)) => l.get(*i),
        _ => None,
    })
}

fn describe(l: &Literal<'_>) -> String {
    let role = match l.role {
        Role::Open => "open",
        Role::Close => "close",
    };
    format!("{role} {} of '{}'", Value::from(l.text).py_repr(), l.field)
}

fn overlapping_literals(template: &Template, spec: &Value, out: &mut Vec<TemplateError>) {
    let lits = literals(template, spec);
    for (i, a) in lits.iter().enumerate() {
        for b in &lits[i + 1..] {
            if a.field == b.field && a.role == b.role {
                continue; // alternatives of one delimiter
            }
            let (short, long) = if a.text.len() <= b.text.len() {
                (a, b)
            } else {
                (b, a)
            };
            if !long.text.starts_with(short.text) {
                continue;
            }
            let (message, at) = if short.text == long.text {
                let (winner, loser) = match (a.role, b.role) {
                    (Role::Open, Role::Close) => (a, b),
                    (Role::Close, Role::Open) => (b, a),
                    _ if a.field <= b.field => (a, b),
                    _ => (b, a),
                };
                let message = format!(
                    "{} is the same text as {}: where it appears the latter wins (opens beat the implicit close, then field names in alphabetical order), so this one never matches there",
                    describe(loser),
                    describe(winner)
                );
                (message, &loser.path)
            } else {
                let message = format!(
                    "{} is a prefix of {}: where the longer one appears it wins (longest match), and while streaming the shorter one is held back until the text can no longer become the longer one",
                    describe(short),
                    describe(long)
                );
                (message, &short.path)
            };
            out.push(
                TemplateError::new(message, at.clone(), Target::Value)
                    .help("make the delimiters distinct unless this is intended"),
            );
        }
    }
}
