//! Template patterns as small regular-expression trees: read from the syntax tree the reference
//! parser builds (`pyregex::parse_tree`, compiled with DOTALL as templates are), so that `\s`,
//! `\w` and `.` mean what they mean to the parser, then written in the syntax each dialect takes
//! (Rust `regex` for Lark and XGrammar's regex format; character classes and sequences for GBNF
//! and EBNF). Lookarounds and other zero-width assertions stay in the tree as [`Re::Look`] and
//! [`Re::Assert`] so that the compiler can turn the ones it understands into follow
//! constraints and report the others.

use pyregex::ast::{Assertion, Node as Ast, SetItem};

/// The highest Unicode scalar value.
const MAX: u32 = 0x10FFFF;

/// A regular expression over Unicode scalar values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Re {
    /// The empty text.
    Empty,
    /// This exact text.
    Lit(String),
    /// One character in `ranges` (inclusive, sorted, disjoint, no surrogates), or with
    /// `negated` one character outside them.
    Class {
        /// The ranges of code points.
        ranges: Vec<(u32, u32)>,
        /// The class is the complement of the ranges.
        negated: bool,
    },
    /// Any one character.
    Any,
    /// One after the other.
    Seq(Vec<Re>),
    /// Any one of them.
    Alt(Vec<Re>),
    /// Repeated `min..=max` times.
    Repeat {
        /// What repeats.
        re: Box<Re>,
        /// The least number of times.
        min: u32,
        /// The most (`None`: no limit).
        max: Option<u32>,
    },
    /// A capture group (its name, if it has one).
    Group {
        /// The group's name.
        name: Option<String>,
        /// What it matches.
        re: Box<Re>,
    },
    /// A lookaround, kept for the compiler to interpret.
    Look {
        /// Looks behind rather than ahead.
        behind: bool,
        /// Succeeds when the inner pattern matches (`(?=`, `(?<=`).
        positive: bool,
        /// The inner pattern.
        re: Box<Re>,
    },
    /// A zero-width assertion, as the pattern spells it (`\A`, `\Z`, `$`, `\b`, ...).
    Assert(&'static str),
}

/// Something a pattern uses that a grammar can only approximate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Issue {
    /// Case-insensitive matching (`(?i)`).
    CaseInsensitive,
    /// A backreference (`\1`, `(?P=name)`).
    Backref,
    /// An atomic group or a possessive repeat (they forbid some matches).
    Atomic,
    /// A VERSION1 set operation.
    SetOperation,
}

/// Reads `pattern` as the reference parses it (with DOTALL). Errors are the pattern's syntax
/// error, which loading the template already reports.
pub fn lower(pattern: &str) -> Result<(Re, Vec<Issue>), String> {
    let tree =
        pyregex::parse_tree(pattern, pyregex::Flags { dotall: true }).map_err(|e| e.to_string())?;
    let mut names = std::collections::HashMap::new();
    for (name, index) in &tree.names {
        names.entry(*index).or_insert_with(|| name.clone());
    }
    let mut issues = Vec::new();
    let re = Lowering {
        names: &names,
        ascii: tree.ascii,
        issues: &mut issues,
    }
    .node(&tree.node);
    Ok((simplify(re), issues))
}

struct Lowering<'a> {
    names: &'a std::collections::HashMap<u32, String>,
    ascii: bool,
    issues: &'a mut Vec<Issue>,
}

impl Lowering<'_> {
    fn flag(&mut self, issue: Issue) {
        if !self.issues.contains(&issue) {
            self.issues.push(issue);
        }
    }

    fn node(&mut self, node: &Ast) -> Re {
        match node {
            Ast::Empty => Re::Empty,
            Ast::Seq(items) => Re::Seq(items.iter().map(|n| self.node(n)).collect()),
            Ast::Alt(items) => Re::Alt(items.iter().map(|n| self.node(n)).collect()),
            Ast::Char {
                c, positive, ign, ..
            } => {
                if *ign {
                    self.flag(Issue::CaseInsensitive);
                }
                let ranges = single(*c);
                if *positive {
                    class_or_lit(ranges)
                } else {
                    Re::Class {
                        ranges,
                        negated: true,
                    }
                }
            }
            Ast::Literal { chars, ign, .. } => {
                if *ign {
                    self.flag(Issue::CaseInsensitive);
                }
                Re::Lit(chars.iter().filter_map(|c| char::from_u32(*c)).collect())
            }
            Ast::Set {
                items,
                positive,
                ign,
                ..
            } => {
                if *ign {
                    self.flag(Issue::CaseInsensitive);
                }
                let mut ranges = Vec::new();
                for item in items {
                    self.set_item(item, &mut ranges);
                }
                let ranges = normalize(ranges);
                if *positive {
                    class_or_lit(ranges)
                } else {
                    Re::Class {
                        ranges,
                        negated: true,
                    }
                }
            }
            Ast::SetOf { members, ign, .. } => {
                if *ign {
                    self.flag(Issue::CaseInsensitive);
                }
                let mut ranges = Vec::new();
                for m in members {
                    match self.node(m) {
                        Re::Lit(s) => ranges.extend(s.chars().map(|c| (c as u32, c as u32))),
                        Re::Class {
                            ranges: r,
                            negated: false,
                        } => ranges.extend(r),
                        Re::Class {
                            ranges: r,
                            negated: true,
                        } => ranges.extend(complement(&r)),
                        Re::Any => ranges.push((0, MAX)),
                        _ => {}
                    }
                }
                class_or_lit(normalize(ranges))
            }
            Ast::Prop {
                key, positive, ign, ..
            } => {
                if *ign {
                    self.flag(Issue::CaseInsensitive);
                }
                Re::Class {
                    ranges: normalize(pyregex::property_ranges(*key, self.ascii)),
                    negated: !*positive,
                }
            }
            Ast::AnyAll => Re::Any,
            Ast::Any => Re::Class {
                ranges: vec![(0x0A, 0x0A)],
                negated: true,
            },
            Ast::Group { index, node } => Re::Group {
                name: self.names.get(index).cloned(),
                re: Box::new(self.node(node)),
            },
            Ast::Repeat {
                node,
                min,
                max,
                kind,
            } => {
                if matches!(kind, pyregex::ast::RepeatKind::Possessive) {
                    self.flag(Issue::Atomic);
                }
                Re::Repeat {
                    re: Box::new(self.node(node)),
                    min: *min,
                    max: *max,
                }
            }
            Ast::Atomic(node) => {
                self.flag(Issue::Atomic);
                self.node(node)
            }
            Ast::Look {
                behind,
                positive,
                node,
            } => Re::Look {
                behind: *behind,
                positive: *positive,
                re: Box::new(self.node(node)),
            },
            Ast::Backref { .. } => {
                self.flag(Issue::Backref);
                Re::Repeat {
                    re: Box::new(Re::Any),
                    min: 0,
                    max: None,
                }
            }
            Ast::Assert(a) => Re::Assert(match a {
                Assertion::StartOfString => "\\A",
                Assertion::StartOfLine => "^",
                Assertion::EndOfString => "\\Z",
                Assertion::EndOfStringLine => "$",
                Assertion::EndOfLine => "$",
                Assertion::Boundary { positive: true, .. } => "\\b",
                Assertion::Boundary { .. } => "\\B",
                Assertion::StartOfWord { .. } => "\\m",
                Assertion::EndOfWord { .. } => "\\M",
            }),
            Ast::Fail => Re::Alt(Vec::new()),
        }
    }

    fn set_item(&mut self, item: &SetItem, out: &mut Vec<(u32, u32)>) {
        match item {
            SetItem::Char(c) => out.push((*c, *c)),
            SetItem::Range(a, b) => out.push((*a, *b)),
            SetItem::Prop { key, positive, enc } => {
                let ascii = matches!(enc, pyregex::ast::Enc::Ascii) || self.ascii;
                let ranges = normalize(pyregex::property_ranges(*key, ascii));
                if *positive {
                    out.extend(ranges);
                } else {
                    out.extend(complement(&ranges));
                }
            }
            SetItem::Union(items) => {
                for i in items {
                    self.set_item(i, out);
                }
            }
            SetItem::Nested {
                items, positive, ..
            } => {
                // Set operations other than a union are rare in templates: read as a union.
                self.flag(Issue::SetOperation);
                let mut inner = Vec::new();
                for i in items {
                    self.set_item(i, &mut inner);
                }
                let inner = normalize(inner);
                if *positive {
                    out.extend(inner);
                } else {
                    out.extend(complement(&inner));
                }
            }
        }
    }
}

fn single(c: u32) -> Vec<(u32, u32)> {
    normalize(vec![(c, c)])
}

/// One character stays a literal; anything else is a class.
fn class_or_lit(ranges: Vec<(u32, u32)>) -> Re {
    match ranges.as_slice() {
        [(a, b)] if a == b => {
            char::from_u32(*a).map_or(Re::Alt(Vec::new()), |c| Re::Lit(c.to_string()))
        }
        _ => Re::Class {
            ranges,
            negated: false,
        },
    }
}

/// Sorted, merged ranges without the surrogates (no text holds them).
pub fn normalize(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    let mut split = Vec::with_capacity(ranges.len());
    for (a, b) in ranges.drain(..) {
        let (a, b) = (a.min(MAX), b.min(MAX));
        if a > b {
            continue;
        }
        if a < 0xD800 && b > 0xDFFF {
            split.push((a, 0xD7FF));
            split.push((0xE000, b));
        } else if (0xD800..=0xDFFF).contains(&a) && (0xD800..=0xDFFF).contains(&b) {
        } else if (0xD800..=0xDFFF).contains(&a) {
            split.push((0xE000, b));
        } else if (0xD800..=0xDFFF).contains(&b) {
            split.push((a, 0xD7FF));
        } else {
            split.push((a, b));
        }
    }
    split.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(split.len());
    for (a, b) in split {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// The code points (no surrogates) outside `ranges` (which must be normalized).
pub fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(a, b) in ranges {
        if a > next {
            out.push((next, a - 1));
        }
        next = b + 1;
    }
    if next <= MAX {
        out.push((next, MAX));
    }
    normalize(out)
}

/// Flattens sequences and alternations, drops empty items and joins adjacent literals.
pub fn simplify(re: Re) -> Re {
    match re {
        Re::Seq(items) => {
            let mut out: Vec<Re> = Vec::new();
            for item in items.into_iter().map(simplify) {
                let flat = match item {
                    Re::Seq(inner) => inner,
                    Re::Empty => continue,
                    other => vec![other],
                };
                for r in flat {
                    match (out.last_mut(), r) {
                        (Some(Re::Lit(a)), Re::Lit(b)) => a.push_str(&b),
                        (_, r) => out.push(r),
                    }
                }
            }
            match out.len() {
                0 => Re::Empty,
                1 => out.pop().unwrap_or(Re::Empty),
                _ => Re::Seq(out),
            }
        }
        Re::Alt(items) => {
            let mut out: Vec<Re> = Vec::new();
            for item in items.into_iter().map(simplify) {
                let flat = match item {
                    Re::Alt(inner) if !inner.is_empty() => inner,
                    other => vec![other],
                };
                for r in flat {
                    if !out.contains(&r) {
                        out.push(r);
                    }
                }
            }
            // `a|` is `a?`: the empty alternative becomes an optional.
            if out.len() > 1 && out.contains(&Re::Empty) {
                out.retain(|r| *r != Re::Empty);
                let rest = if out.len() == 1 {
                    out.pop().unwrap_or(Re::Empty)
                } else {
                    Re::Alt(out)
                };
                return simplify(Re::Repeat {
                    re: Box::new(rest),
                    min: 0,
                    max: Some(1),
                });
            }
            if out.len() == 1 {
                out.pop().unwrap_or(Re::Empty)
            } else {
                Re::Alt(out)
            }
        }
        Re::Repeat { re, min, max } => {
            let inner = simplify(*re);
            if inner == Re::Empty || max == Some(0) {
                return Re::Empty;
            }
            if min == 1 && max == Some(1) {
                return inner;
            }
            Re::Repeat {
                re: Box::new(inner),
                min,
                max,
            }
        }
        Re::Group { name, re } => Re::Group {
            name,
            re: Box::new(simplify(*re)),
        },
        Re::Look {
            behind,
            positive,
            re,
        } => Re::Look {
            behind,
            positive,
            re: Box::new(simplify(*re)),
        },
        other => other,
    }
}

impl Re {
    /// Whether the expression can match the empty text (assertions count as empty).
    pub fn nullable(&self) -> bool {
        match self {
            Re::Empty | Re::Look { .. } | Re::Assert(_) => true,
            Re::Lit(s) => s.is_empty(),
            Re::Class { .. } | Re::Any => false,
            Re::Seq(items) => items.iter().all(Re::nullable),
            Re::Alt(items) => items.iter().any(Re::nullable),
            Re::Repeat { re, min, .. } => *min == 0 || re.nullable(),
            Re::Group { re, .. } => re.nullable(),
        }
    }

    /// Literals of which every match contains one: the first part of the pattern that cannot
    /// be skipped, when it is a literal or an alternation of literals (with the literals that
    /// follow it joined on). `None` when no such literal exists.
    pub fn required_literals(&self) -> Option<Vec<String>> {
        match self {
            Re::Lit(s) if !s.is_empty() => Some(vec![s.clone()]),
            Re::Group { re, .. } => re.required_literals(),
            Re::Alt(items) if !items.is_empty() => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(i.required_literals()?);
                }
                Some(out)
            }
            Re::Repeat { re, min, .. } if *min >= 1 => re.required_literals(),
            Re::Seq(items) => {
                let first = items.iter().position(|r| !r.nullable())?;
                let mut lits = items[first].required_literals()?;
                // Join the literal that follows, so that the excluded strings are as specific
                // as the pattern allows.
                if let Some(Re::Lit(next)) = items.get(first + 1)
                    && matches!(items[first], Re::Lit(_))
                {
                    for l in &mut lits {
                        l.push_str(next);
                    }
                }
                Some(lits)
            }
            _ => None,
        }
    }

    /// The same expression with the group called `name` replaced by `with`.
    pub fn substitute(&self, name: &str, with: &Re) -> Re {
        let sub = |r: &Re| r.substitute(name, with);
        match self {
            Re::Group { name: Some(n), .. } if n == name => with.clone(),
            Re::Group { name: n, re } => Re::Group {
                name: n.clone(),
                re: Box::new(sub(re)),
            },
            Re::Seq(items) => Re::Seq(items.iter().map(sub).collect()),
            Re::Alt(items) => Re::Alt(items.iter().map(sub).collect()),
            Re::Repeat { re, min, max } => Re::Repeat {
                re: Box::new(sub(re)),
                min: *min,
                max: *max,
            },
            Re::Look {
                behind,
                positive,
                re,
            } => Re::Look {
                behind: *behind,
                positive: *positive,
                re: Box::new(sub(re)),
            },
            other => other.clone(),
        }
    }

    /// The sub-expression of the group called `name`.
    pub fn group(&self, name: &str) -> Option<&Re> {
        match self {
            Re::Group { name: Some(n), re } if n == name => Some(re),
            Re::Group { re, .. } | Re::Repeat { re, .. } | Re::Look { re, .. } => re.group(name),
            Re::Seq(items) | Re::Alt(items) => items.iter().find_map(|r| r.group(name)),
            _ => None,
        }
    }

    /// Whether the expression has lookarounds or assertions.
    pub fn has_zero_width(&self) -> bool {
        match self {
            Re::Look { .. } | Re::Assert(_) => true,
            Re::Group { re, .. } | Re::Repeat { re, .. } => re.has_zero_width(),
            Re::Seq(items) | Re::Alt(items) => items.iter().any(Re::has_zero_width),
            _ => false,
        }
    }

    /// The expression with every lookaround and assertion read as the empty text; each one
    /// removed is described in `removed`.
    pub fn without_zero_width(&self, removed: &mut Vec<String>) -> Re {
        let mut go = |r: &Re| r.without_zero_width(removed);
        let out = match self {
            Re::Look {
                behind, positive, ..
            } => {
                removed.push(
                    match (behind, positive) {
                        (false, true) => "a lookahead (?=...)",
                        (false, false) => "a negative lookahead (?!...)",
                        (true, true) => "a lookbehind (?<=...)",
                        (true, false) => "a negative lookbehind (?<!...)",
                    }
                    .to_string(),
                );
                Re::Empty
            }
            Re::Assert(a) => {
                removed.push(format!("the assertion {a}"));
                Re::Empty
            }
            Re::Group { name, re } => Re::Group {
                name: name.clone(),
                re: Box::new(go(re)),
            },
            Re::Seq(items) => Re::Seq(items.iter().map(&mut go).collect()),
            Re::Alt(items) => Re::Alt(items.iter().map(&mut go).collect()),
            Re::Repeat { re, min, max } => Re::Repeat {
                re: Box::new(go(re)),
                min: *min,
                max: *max,
            },
            other => other.clone(),
        };
        simplify(out)
    }

    /// The literal strings this expression matches, when it is a literal or an alternation of
    /// literals.
    pub fn as_literals(&self) -> Option<Vec<String>> {
        match self {
            Re::Lit(s) => Some(vec![s.clone()]),
            Re::Group { re, .. } => re.as_literals(),
            Re::Alt(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(i.as_literals()?);
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// The expression in Rust `regex` syntax (also read by llguidance and XGrammar). Groups
    /// become non-capturing; zero-width items must have been removed.
    pub fn to_regex(&self) -> String {
        let mut out = String::new();
        self.write_regex(&mut out, 0);
        out
    }

    /// Writes the expression; `prec` is the binding of the context (0 alternation, 1 sequence,
    /// 2 repetition operand).
    fn write_regex(&self, out: &mut String, prec: u8) {
        match self {
            Re::Empty | Re::Look { .. } | Re::Assert(_) => out.push_str("(?:)"),
            Re::Lit(s) => {
                let wrap = prec >= 2 && s.chars().count() != 1;
                if wrap {
                    out.push_str("(?:");
                }
                for c in s.chars() {
                    push_regex_char(out, c, false);
                }
                if wrap {
                    out.push(')');
                }
            }
            Re::Class { ranges, negated } => write_class(out, ranges, *negated),
            Re::Any => out.push_str("(?s:.)"),
            Re::Seq(items) => {
                let wrap = prec >= 2;
                if wrap {
                    out.push_str("(?:");
                }
                for i in items {
                    i.write_regex(out, 1);
                }
                if wrap {
                    out.push(')');
                }
            }
            Re::Alt(items) => {
                if items.is_empty() {
                    // Matches nothing.
                    out.push_str("[^\\x{0}-\\x{10FFFF}]");
                    return;
                }
                let wrap = prec >= 1;
                if wrap {
                    out.push_str("(?:");
                }
                for (k, i) in items.iter().enumerate() {
                    if k > 0 {
                        out.push('|');
                    }
                    i.write_regex(out, 0);
                }
                if wrap {
                    out.push(')');
                }
            }
            Re::Repeat { re, min, max } => {
                re.write_regex(out, 2);
                match (min, max) {
                    (0, None) => out.push('*'),
                    (1, None) => out.push('+'),
                    (0, Some(1)) => out.push('?'),
                    (m, None) => out.push_str(&format!("{{{m},}}")),
                    (m, Some(n)) if m == n => out.push_str(&format!("{{{m}}}")),
                    (m, Some(n)) => out.push_str(&format!("{{{m},{n}}}")),
                }
            }
            Re::Group { re, .. } => re.write_regex(out, prec),
        }
    }
}

/// Writes one character of a regex, escaped as needed (`in_class`: inside brackets).
fn push_regex_char(out: &mut String, c: char, in_class: bool) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x20 || c as u32 == 0x7F => {
            out.push_str(&format!("\\x{{{:X}}}", c as u32));
        }
        c if !in_class && "\\.+*?()|[]{}^$#&-~/".contains(c) => {
            out.push('\\');
            out.push(c);
        }
        c if in_class && "\\[]^-&~/".contains(c) => {
            out.push('\\');
            out.push(c);
        }
        c if c.is_whitespace() || (0x80..0xA0).contains(&(c as u32)) => {
            out.push_str(&format!("\\x{{{:X}}}", c as u32));
        }
        c => out.push(c),
    }
}

fn push_class_point(out: &mut String, cp: u32) {
    match char::from_u32(cp) {
        Some(c) => push_regex_char(out, c, true),
        None => out.push_str(&format!("\\x{{{cp:X}}}")),
    }
}

fn write_class(out: &mut String, ranges: &[(u32, u32)], negated: bool) {
    if ranges.is_empty() {
        if negated {
            out.push_str("(?s:.)");
        } else {
            out.push_str("[^\\x{0}-\\x{10FFFF}]");
        }
        return;
    }
    out.push('[');
    if negated {
        out.push('^');
    }
    for &(a, b) in ranges {
        push_class_point(out, a);
        if b > a {
            if b > a + 1 {
                out.push('-');
            }
            push_class_point(out, b);
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(p: &str) -> String {
        lower(p).unwrap().0.to_regex()
    }

    #[test]
    fn patterns_read_as_the_reference_parses_them() {
        // `\s` is the regex module's Unicode whitespace (not str.isspace's wider set).
        assert_eq!(
            rx(r"\s*<tool_call>"),
            r"[\t-\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}]*<tool_call>"
        );
        assert_eq!(
            rx(r"<\|tool_call>call:(?P<name>[^\n<]+)"),
            r"<\|tool_call>call:[^\n<]+"
        );
        assert_eq!(rx("a.b"), "a(?s:.)b");
        assert_eq!(rx("(?:ab)?c"), "(?:ab)?c");
        assert_eq!(rx("x|yz"), "x|yz");
        assert_eq!(rx("</think>(?:<r>|)"), r"<\/think>(?:<r>)?");
    }

    #[test]
    fn required_literals_skip_optional_parts() {
        let (re, _) = lower(r"\s*(?:<m>\s*)?<invoke name=(?P<n>[^>]+)>").unwrap();
        assert_eq!(
            re.required_literals(),
            Some(vec!["<invoke name=".to_string()])
        );
        let (re, _) = lower(r"\s*(?:<\|im_end\|>|<\|endoftext\|>)").unwrap();
        assert_eq!(
            re.required_literals(),
            Some(vec!["<|im_end|>".to_string(), "<|endoftext|>".to_string()])
        );
        let (re, _) = lower(r"\w+:").unwrap();
        assert_eq!(re.required_literals(), None);
    }

    #[test]
    fn groups_are_substituted_by_name() {
        let (re, _) = lower(r"<f=(?P<id>x\.(?P<name>[^:]+):[0-9]+)>").unwrap();
        let named = re.substitute("name", &Re::Lit("get_weather".into()));
        assert_eq!(simplify(named).to_regex(), r"<f=x\.get_weather:[0-9]+>");
        assert_eq!(re.group("name").map(Re::to_regex).as_deref(), Some("[^:]+"));
    }
}
