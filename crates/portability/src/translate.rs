//! Translation of a pattern's syntax tree (as the reference parses it) into another engine's
//! syntax. Each construct is written in the target engine's own idiom (`\w` stays `\w`, `$`
//! stays `$`), because what a runtime author would write is exactly what may mean something
//! else there; constructs the target lacks are refused with a description.
//!
//! [`Options`] can replace an idiom by the reference's exact meaning (Python's code points for
//! `\w`, an explicit class for each case-insensitive character): re-translating with one of them
//! and re-running the engine shows whether that idiom caused a divergence.

use pyregex::ast::{Assertion, Enc, GroupName, Node, RepeatKind, SetItem};
use pyregex::{Flags, Regex, Tree};

use crate::kind::EngineKind;

/// Which idioms to replace by the reference's exact meaning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `\w`, `\d`, `\s`, `\b` written as Python's code points (lookarounds for `\b`).
    pub exact_classes: bool,
    /// Case-insensitive characters written as classes of what Python's folding equates.
    pub exact_case: bool,
    /// `$` written as "end, or before a final newline" (a lookahead).
    pub exact_dollar: bool,
}

/// A pattern in an engine's syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translated {
    /// The pattern in the engine's syntax.
    pub pattern: String,
    /// Whether the whole pattern must be compiled case-insensitively (ECMAScript has no
    /// inline case flag).
    pub ignore_case: bool,
    /// For each engine group (1-based, in order), the reference's group number.
    pub groups: Vec<u32>,
}

/// A construct the engine has no way to write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotExpressible {
    /// What the engine cannot write, described for the report (e.g. "an atomic group (?>...)").
    pub construct: String,
}

/// Translates `tree` for `engine`.
pub fn translate(
    tree: &Tree,
    engine: EngineKind,
    options: Options,
) -> Result<Translated, NotExpressible> {
    let mut t = Writer {
        engine,
        options,
        ascii: tree.ascii,
        names: &tree.names,
        named: Vec::new(),
        groups: Vec::new(),
        ign: false,
        sensitive: false,
    };
    let mut out = String::new();
    t.node(&tree.node, &mut out)?;
    if engine == EngineKind::Ecmascript && t.ign && t.sensitive {
        return Err(NotExpressible {
            construct: "case-insensitive matching on part of the pattern only (no inline (?i) in ECMAScript)".into(),
        });
    }
    Ok(Translated {
        pattern: out,
        ignore_case: engine == EngineKind::Ecmascript && t.ign,
        groups: t.groups,
    })
}

/// Parses `pattern` as the reference compiles template patterns (DOTALL).
pub fn tree_of(pattern: &str) -> Result<Tree, pyregex::RegexError> {
    pyregex::parse_tree(pattern, Flags { dotall: true })
}

struct Writer<'a> {
    engine: EngineKind,
    options: Options,
    ascii: bool,
    names: &'a [(String, u32)],
    /// Names already written (a name Python lets two groups share is written once).
    named: Vec<String>,
    groups: Vec<u32>,
    /// Seen case-insensitive / case-sensitive cased items (for ECMAScript's global flag).
    ign: bool,
    sensitive: bool,
}

fn refuse<T>(construct: impl Into<String>) -> Result<T, NotExpressible> {
    Err(NotExpressible {
        construct: construct.into(),
    })
}

/// Whether `c` has other case forms (so a case flag matters for it).
fn is_cased(c: u32) -> bool {
    char::from_u32(c).is_some_and(|ch| {
        ch.to_lowercase().ne(std::iter::once(ch)) || ch.to_uppercase().ne(std::iter::once(ch))
    })
}

impl Writer<'_> {
    fn is(&self, e: EngineKind) -> bool {
        self.engine == e
    }

    fn note_case(&mut self, ign: bool, cased: bool) {
        if cased {
            if ign {
                self.ign = true;
            } else {
                self.sensitive = true;
            }
        }
    }

    /// One character, escaped for use inside or outside a class.
    fn char_text(&self, c: u32, in_class: bool, out: &mut String) -> Result<(), NotExpressible> {
        let Some(ch) = char::from_u32(c) else {
            return refuse(format!("the lone surrogate \\u{c:04x}"));
        };
        if ch.is_ascii_alphanumeric()
            || (!ch.is_ascii() && !ch.is_control() && !ch.is_whitespace())
            || (!in_class && "<>/=\"',:;!@%&~`_# ".contains(ch))
        {
            out.push(ch);
        } else if self.is(EngineKind::Ecmascript) {
            out.push_str(&format!("\\u{{{c:X}}}"));
        } else {
            out.push_str(&format!("\\x{{{c:X}}}"));
        }
        Ok(())
    }

    /// The class members (without brackets) for Python's code points of a property.
    fn ranges_text(&self, ranges: &[(u32, u32)], out: &mut String) -> Result<(), NotExpressible> {
        for &(a, b) in ranges {
            // Surrogates are not characters in any of the target engines' string models.
            if (0xD800..=0xDFFF).contains(&a) && (0xD800..=0xDFFF).contains(&b) {
                continue;
            }
            let pieces: Vec<(u32, u32)> = if a < 0xD800 && b > 0xDFFF {
                vec![(a, 0xD7FF), (0xE000, b)]
            } else if (0xD800..=0xDFFF).contains(&b) {
                vec![(a, 0xD7FF)]
            } else if (0xD800..=0xDFFF).contains(&a) {
                vec![(0xE000, b)]
            } else {
                vec![(a, b)]
            };
            for (a, b) in pieces {
                self.hex(a, out);
                if b != a {
                    out.push('-');
                    self.hex(b, out);
                }
            }
        }
        Ok(())
    }

    fn hex(&self, c: u32, out: &mut String) {
        if self.is(EngineKind::Ecmascript) {
            out.push_str(&format!("\\u{{{c:X}}}"));
        } else {
            out.push_str(&format!("\\x{{{c:X}}}"));
        }
    }

    fn ascii_enc(&self, enc: Enc) -> bool {
        match enc {
            Enc::Ascii => true,
            Enc::Unicode => false,
            Enc::Default => self.ascii,
        }
    }

    /// A property as class members (inside brackets), in the engine's idiom where it has one.
    fn prop_member(
        &self,
        key: u32,
        positive: bool,
        enc: Enc,
        out: &mut String,
    ) -> Result<(), NotExpressible> {
        let ascii = self.ascii_enc(enc);
        let name = pyregex::property_names(key);
        let escape = match name {
            Some(("WORD", "Y")) => Some('w'),
            Some(("DIGIT", "Y")) => Some('d'),
            Some(("SPACE", "Y")) => Some('s'),
            _ => None,
        };
        match escape {
            Some(e) if !ascii && !self.options.exact_classes => {
                out.push('\\');
                out.push(if positive { e } else { e.to_ascii_uppercase() });
                Ok(())
            }
            _ if positive => self.ranges_text(&pyregex::property_ranges(key, ascii), out),
            _ => {
                // A negated property inside a class: its complement's ranges.
                let ranges = complement(&pyregex::property_ranges(key, ascii));
                self.ranges_text(&ranges, out)
            }
        }
    }

    fn set_item(&mut self, item: &SetItem, out: &mut String) -> Result<(), NotExpressible> {
        match item {
            SetItem::Char(c) => self.char_text(*c, true, out),
            SetItem::Range(a, b) => {
                self.hex(*a, out);
                out.push('-');
                self.hex(*b, out);
                Ok(())
            }
            SetItem::Prop { key, positive, enc } => self.prop_member(*key, *positive, *enc, out),
            SetItem::Union(items) => {
                for i in items {
                    self.set_item(i, out)?;
                }
                Ok(())
            }
            SetItem::Nested { .. } => refuse("a VERSION1 nested set or set operation"),
        }
    }

    fn fold_class(&self, c: u32) -> Vec<u32> {
        fold_partners(c)
    }

    /// Wraps `body` in the engine's inline case-insensitive group when `ign`.
    fn cased(&self, ign: bool, body: String, out: &mut String) {
        if ign && !self.is(EngineKind::Ecmascript) {
            out.push_str("(?i:");
            out.push_str(&body);
            out.push(')');
        } else {
            out.push_str(&body);
        }
    }

    fn group_name(&mut self, index: u32) -> Option<String> {
        let name = self
            .names
            .iter()
            .find(|(_, i)| *i == index)
            .map(|(n, _)| n.clone())?;
        if self.named.contains(&name) {
            return None;
        }
        self.named.push(name.clone());
        Some(name)
    }

    /// Writes `node` in the engine's syntax, or refuses a construct the engine lacks.
    fn node(&mut self, node: &Node, out: &mut String) -> Result<(), NotExpressible> {
        match node {
            Node::Char { full: true, .. }
            | Node::Set { full: true, .. }
            | Node::SetOf { full: true, .. }
            | Node::Prop { full: true, .. }
            | Node::Backref { full: true, .. }
            | Node::Literal { full: true, .. } => {
                refuse("full case folding ((?f), or (?i) under VERSION1)")
            }
            Node::Literal { chars, ign, .. } => {
                for &c in chars {
                    self.char_node(c, true, *ign, out)?;
                }
                Ok(())
            }
            Node::Empty => Ok(()),
            Node::Seq(items) => {
                for i in items {
                    self.node(i, out)?;
                }
                Ok(())
            }
            Node::Alt(branches) => self.alternatives(branches, out),
            Node::Char {
                c, positive, ign, ..
            } => self.char_node(*c, *positive, *ign, out),
            Node::Set {
                items,
                positive,
                ign,
                ..
            } => self.set_node(items, *positive, *ign, out),
            Node::SetOf { members, .. } => self.alternatives(members, out),
            Node::Prop {
                key,
                positive,
                ign,
                enc,
                ..
            } => self.prop_node(*key, *positive, *ign, *enc, out),
            Node::AnyAll => {
                out.push_str(if self.is(EngineKind::Ecmascript) {
                    "."
                } else {
                    "(?s:.)"
                });
                Ok(())
            }
            Node::Any => {
                out.push_str("[^\\n]");
                Ok(())
            }
            Node::Group { index, node } => self.group(*index, node, out),
            Node::Repeat {
                node,
                min,
                max,
                kind,
            } => self.repeat(node, *min, *max, *kind, out),
            Node::Atomic(inner) => {
                if matches!(self.engine, EngineKind::Regex | EngineKind::Ecmascript) {
                    return refuse("an atomic group (?>...)");
                }
                out.push_str("(?>");
                self.node(inner, out)?;
                out.push(')');
                Ok(())
            }
            Node::Look {
                behind,
                positive,
                node,
            } => self.look(*behind, *positive, node, out),
            Node::Backref { group, ign, .. } => self.backref(group, *ign, out),
            Node::Assert(a) => self.assertion(*a, out),
            Node::Fail => {
                out.push_str(match self.engine {
                    EngineKind::Regex => "[a&&b]",
                    EngineKind::Ecmascript => "[]",
                    EngineKind::FancyRegex => "(?!)",
                    EngineKind::Pcre2 => "(*FAIL)",
                });
                Ok(())
            }
        }
    }

    /// Branches (or a named list's members) as a non-capturing alternation.
    fn alternatives(&mut self, branches: &[Node], out: &mut String) -> Result<(), NotExpressible> {
        out.push_str("(?:");
        for (i, b) in branches.iter().enumerate() {
            if i > 0 {
                out.push('|');
            }
            self.node(b, out)?;
        }
        out.push(')');
        Ok(())
    }

    /// One character (simple case folding): itself, negated in a class, or (with
    /// [`Options::exact_case`]) a class of what Python's folding equates with it.
    fn char_node(
        &mut self,
        c: u32,
        positive: bool,
        ign: bool,
        out: &mut String,
    ) -> Result<(), NotExpressible> {
        let cased = is_cased(c);
        if ign && cased && self.options.exact_case {
            let mut body = String::from(if positive { "[" } else { "[^" });
            for p in self.fold_class(c) {
                self.char_text(p, true, &mut body)?;
            }
            body.push(']');
            self.note_case(false, cased);
            out.push_str(&body);
            return Ok(());
        }
        self.note_case(ign, cased);
        let mut body = String::new();
        if positive {
            self.char_text(c, false, &mut body)?;
        } else {
            body.push_str("[^");
            self.char_text(c, true, &mut body)?;
            body.push(']');
        }
        self.cased(ign, body, out);
        Ok(())
    }

    /// A character class; an empty one matches nothing.
    fn set_node(
        &mut self,
        items: &[SetItem],
        positive: bool,
        ign: bool,
        out: &mut String,
    ) -> Result<(), NotExpressible> {
        self.note_case(ign, true);
        let mut body = String::from(if positive { "[" } else { "[^" });
        for i in items {
            self.set_item(i, &mut body)?;
        }
        if body.len() <= 2 && positive {
            // An empty class: matches nothing.
            return self.node(&Node::Fail, out);
        }
        body.push(']');
        self.cased(ign, body, out);
        Ok(())
    }

    /// A property: the engine's short escape where it means the same, else a class of its
    /// code points (an empty one matches nothing).
    fn prop_node(
        &mut self,
        key: u32,
        positive: bool,
        ign: bool,
        enc: Enc,
        out: &mut String,
    ) -> Result<(), NotExpressible> {
        let mut body = String::new();
        let ascii = self.ascii_enc(enc);
        let short = matches!(
            pyregex::property_names(key),
            Some(("WORD" | "DIGIT" | "SPACE", "Y"))
        ) && !ascii
            && !self.options.exact_classes;
        if short {
            self.prop_member(key, positive, enc, &mut body)?;
        } else {
            body.push('[');
            self.prop_member(key, positive, enc, &mut body)?;
            body.push(']');
            if body == "[]" {
                return self.node(&Node::Fail, out);
            }
        }
        self.cased(ign, body, out);
        Ok(())
    }

    /// A capture group, named where the engine keeps the name (a shared name is written once).
    fn group(&mut self, index: u32, node: &Node, out: &mut String) -> Result<(), NotExpressible> {
        self.groups.push(index);
        match self.group_name(index) {
            Some(name) if self.is(EngineKind::Ecmascript) => out.push_str(&format!("(?<{name}>")),
            Some(name) => out.push_str(&format!("(?P<{name}>")),
            None => out.push('('),
        }
        self.node(node, out)?;
        out.push(')');
        Ok(())
    }

    /// A lookahead or lookbehind, positive or negative.
    fn look(
        &mut self,
        behind: bool,
        positive: bool,
        node: &Node,
        out: &mut String,
    ) -> Result<(), NotExpressible> {
        let what = match (behind, positive) {
            (false, true) => ("a lookahead (?=...)", "(?="),
            (false, false) => ("a negative lookahead (?!...)", "(?!"),
            (true, true) => ("a lookbehind (?<=...)", "(?<="),
            (true, false) => ("a negative lookbehind (?<!...)", "(?<!"),
        };
        if self.is(EngineKind::Regex) {
            return refuse(what.0);
        }
        out.push_str(what.1);
        self.node(node, out)?;
        out.push(')');
        Ok(())
    }

    /// A backreference, renumbered to the engine's group of the same capture.
    fn backref(
        &mut self,
        group: &GroupName,
        ign: bool,
        out: &mut String,
    ) -> Result<(), NotExpressible> {
        if self.is(EngineKind::Regex) {
            return refuse("a backreference");
        }
        let index = match group {
            GroupName::Number(n) => *n,
            GroupName::Name(n) => match self.names.iter().find(|(m, _)| m == n) {
                Some((_, i)) => *i,
                None => return refuse("a backreference to an unknown group"),
            },
        };
        let Some(k) = self.groups.iter().position(|g| *g == index) else {
            return refuse("a backreference to a group that comes after it");
        };
        let body = match self.engine {
            EngineKind::Pcre2 => format!("\\g{{{}}}", k + 1),
            _ => format!("\\{}", k + 1),
        };
        self.note_case(ign, true);
        self.cased(ign, body, out);
        Ok(())
    }

    fn repeat(
        &mut self,
        node: &Node,
        min: u32,
        max: Option<u32>,
        kind: RepeatKind,
        out: &mut String,
    ) -> Result<(), NotExpressible> {
        let mut atom = String::new();
        self.node(node, &mut atom)?;
        let quant = match (min, max) {
            (0, None) => "*".to_string(),
            (1, None) => "+".to_string(),
            (0, Some(1)) => "?".to_string(),
            (a, None) => format!("{{{a},}}"),
            (a, Some(b)) if a == b => format!("{{{a}}}"),
            (a, Some(b)) => format!("{{{a},{b}}}"),
        };
        // A single character, class or group takes a quantifier as is.
        let single = matches!(
            node,
            Node::Set { .. } | Node::Any | Node::AnyAll | Node::Group { .. }
        ) || (matches!(
            node,
            Node::Char {
                ign: false,
                positive: true,
                ..
            } | Node::Prop { ign: false, .. }
        ) && !atom.starts_with("(?"));
        let wrapped = if single {
            format!("{atom}{quant}")
        } else {
            format!("(?:{atom}){quant}")
        };
        match kind {
            RepeatKind::Greedy => out.push_str(&wrapped),
            RepeatKind::Lazy => {
                out.push_str(&wrapped);
                out.push('?');
            }
            RepeatKind::Possessive => match self.engine {
                EngineKind::Regex | EngineKind::Ecmascript => {
                    return refuse("a possessive quantifier (*+, ++, ?+)");
                }
                // Possessive is atomic greedy; both engines have atomic groups.
                _ => out.push_str(&format!("(?>{wrapped})")),
            },
        }
        Ok(())
    }

    fn assertion(&mut self, a: Assertion, out: &mut String) -> Result<(), NotExpressible> {
        let ecma = self.is(EngineKind::Ecmascript);
        let text: String = match a {
            Assertion::StartOfString => (if ecma { "^" } else { "\\A" }).into(),
            Assertion::StartOfLine => (if ecma { "(?<![^\\n])" } else { "(?m:^)" }).into(),
            Assertion::EndOfString => (if ecma { "$" } else { "\\z" }).into(),
            // The idiom every runtime writes for Python's `$`; in most engines it is end-only.
            Assertion::EndOfStringLine if self.options.exact_dollar => match self.engine {
                EngineKind::Regex => return refuse("`$` before a final newline"),
                EngineKind::Ecmascript => "(?=\\n?$)".into(),
                _ => "(?=\\n?\\z)".into(),
            },
            Assertion::EndOfStringLine => "$".into(),
            Assertion::EndOfLine => (if ecma { "(?![^\\n])" } else { "(?m:$)" }).into(),
            Assertion::Boundary { positive, enc } => {
                if self.options.exact_classes || self.ascii_enc(enc) {
                    if self.is(EngineKind::Regex) {
                        return refuse("a word boundary with Python's word characters");
                    }
                    let mut w = String::from("[");
                    self.ranges_text(
                        &pyregex::property_ranges(word_key(), self.ascii_enc(enc)),
                        &mut w,
                    )?;
                    w.push(']');
                    if positive {
                        format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
                    } else {
                        format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
                    }
                } else {
                    (if positive { "\\b" } else { "\\B" }).into()
                }
            }
            Assertion::StartOfWord { .. } => match self.engine {
                EngineKind::Regex => "\\b{start}".into(),
                _ => "\\b(?=\\w)".into(),
            },
            Assertion::EndOfWord { .. } => match self.engine {
                EngineKind::Regex => "\\b{end}".into(),
                _ => "\\b(?<=\\w)".into(),
            },
        };
        out.push_str(&text);
        Ok(())
    }
}

/// The property key of Python's `\w`.
fn word_key() -> u32 {
    // `\w` parses to a single property node; its key is read from the parsed tree.
    match pyregex::parse_tree("\\w", Flags::default()).map(|t| t.node) {
        Ok(Node::Prop { key, .. }) => key,
        _ => 0,
    }
}

/// The complement of sorted, disjoint inclusive ranges over all code points.
fn complement(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(a, b) in ranges {
        if a > next {
            out.push((next, a - 1));
        }
        next = b.saturating_add(1);
    }
    if next <= 0x10FFFF {
        out.push((next, 0x10FFFF));
    }
    out
}

/// The characters the reference's case-insensitive matching equates with `c`, found by
/// asking the reference engine about `c`'s case forms and the characters that fold oddly.
fn fold_partners(c: u32) -> Vec<u32> {
    let Some(ch) = char::from_u32(c) else {
        return vec![c];
    };
    let mut candidates: Vec<char> = vec![ch];
    let mut push = |it: &mut dyn Iterator<Item = char>| {
        let v: Vec<char> = it.collect();
        if v.len() == 1 {
            candidates.push(v[0]);
        }
    };
    push(&mut ch.to_lowercase());
    push(&mut ch.to_uppercase());
    let forms: Vec<char> = candidates.clone();
    for f in forms {
        let mut more = Vec::new();
        let l: Vec<char> = f.to_lowercase().collect();
        let u: Vec<char> = f.to_uppercase().collect();
        if l.len() == 1 {
            more.push(l[0]);
        }
        if u.len() == 1 {
            more.push(u[0]);
        }
        candidates.extend(more);
    }
    // Characters whose simple case folding joins another letter's class.
    candidates.extend([
        '\u{17F}', '\u{212A}', '\u{212B}', '\u{1E9E}', '\u{DF}', '\u{3C2}', '\u{3C3}', '\u{3A3}',
        '\u{1FBE}', '\u{345}', '\u{3B9}', '\u{399}', '\u{3D0}', '\u{3D1}', '\u{3D5}', '\u{3D6}',
        '\u{3F0}', '\u{3F1}', '\u{3F5}', '\u{1E9B}',
    ]);
    let Ok(re) = Regex::new(
        &format!("(?i){}", pyregex::escape(&ch.to_string())),
        Flags::default(),
    ) else {
        return vec![c];
    };
    let mut out: Vec<u32> = candidates
        .into_iter()
        .filter(|d| {
            let s = d.to_string();
            matches!(re.match_at(&s, 0), Ok(Some(m)) if m.end() == s.len())
        })
        .map(|d| d as u32)
        .collect();
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        out.push(c);
    }
    out
}
