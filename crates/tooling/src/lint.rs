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
//! - Transform placeholders that nothing supplies (the reference fails when a region closes).
//! - `value_parser` specs and content options the reference accepts at load time but fails on
//!   when a region is parsed: unknown parser names, non-object specs or args, a `tag_pattern`
//!   that is missing, does not compile or lacks the `key`/`value` groups, empty separators.
//! - Booleans written as other JSON types that Python truthiness silently accepts.
//! - Special tokens written in a pattern with unescaped metacharacters (`<|x|>`, `[TOKEN]`).
//! - Patterns that match the empty string in ordinary text.
//! - With the file's text ([`lint_file`]): keys repeated in one object (Python keeps the last),
//!   one warning per key however often it is repeated; and each feature a grammar for
//!   constrained decoding cannot express exactly (`rtbench_grammar`'s approximations).
//!
//! [`diagnostics`] locates the findings in the file in time linear in the file and the
//! findings (a template may repeat a key thousands of times).
//!
//! A second implicit field needs no lint: the reference refuses to load such a template.
//!
//! [`serve_vllm`] applies a serving engine's own rules (`rtbench lint --serve vllm`).

use std::collections::HashMap;
use std::ops::Range;

use rtbench_engine::ContentKind;
use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::py::PathSeg;
use rtbench_engine::template::Template;
use rtbench_engine::template::error::{JsonPath, Target, TemplateError};
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::Value;

pub mod serve_vllm;

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
    empty_patterns(template, &mut out);
    token_metachars(template, &mut out);
    for f in template.fields() {
        let base = vec![key("fields"), key(&f.name)];
        let field_spec = lookup(spec, &base);
        placeholders(f, field_spec, &mut out);
        if let Some(Value::Dict(d)) = field_spec {
            for name in ["repeats", "optional"] {
                if let Some(v) = d.get(name) {
                    boolean(&f.name, name, v, with(&base, name), &mut out);
                }
            }
            if let Some(args) = d.get("content_args") {
                let groups = content_args(
                    &f.name,
                    f.content,
                    args,
                    with(&base, "content_args"),
                    0,
                    &mut out,
                );
                if let (ContentKind::XmlInline, Value::Dict(a)) = (f.content, args) {
                    value_parser_by(
                        &f.name,
                        a,
                        &with(&base, "content_args"),
                        groups.as_deref(),
                        template.reference(),
                        &mut out,
                    );
                }
            } else if f.content == ContentKind::XmlInline {
                // No options at all: no tag pattern, which fails on every region as a missing
                // one does.
                tag_pattern(
                    &f.name,
                    &Default::default(),
                    &with(&base, "content"),
                    &mut out,
                );
            }
        }
    }
    out
}

/// Everything [`lint`] finds, plus the checks that need the file's text (keys repeated in one
/// object), ordered by position in the file.
pub fn lint_file(template: &Template, source: &TemplateSource) -> Vec<TemplateError> {
    let mut out = lint(template, source.template_value());
    duplicate_keys(source, &mut out);
    grammar_approximations(source, &mut out);
    let mut keyed: Vec<(usize, usize, TemplateError)> = out
        .into_iter()
        .enumerate()
        .map(|(i, e)| (position(source, &e), i, e))
        .collect();
    keyed.sort_by_key(|(at, i, _)| (*at, *i));
    keyed.into_iter().map(|(_, _, e)| e).collect()
}

/// The byte offset a finding points at (as the file layer locates it), for ordering.
fn position(source: &TemplateSource, e: &TemplateError) -> usize {
    let mut path: &[PathSeg] = &e.path;
    loop {
        if let Some(node) = source.node(path) {
            let exact = path.len() == e.path.len();
            return match (e.target, exact, &node.key) {
                (Target::Key, true, Some(k)) => k.start,
                _ => node.value.start + e.inner_offset.map_or(0, |o| o.min(1)),
            };
        }
        match path.split_last() {
            Some((_, parent)) => path = parent,
            None => return usize::MAX,
        }
    }
}

fn with(base: &[PathSeg], k: &str) -> JsonPath {
    let mut p = base.to_vec();
    p.push(key(k));
    p
}

/// How many earlier places of a repeated key a warning lists.
const SHOWN_REPEATS: usize = 5;

/// One warning per key written more than once in an object (however many times), located at
/// the occurrence the reference keeps (the last) and listing the first earlier ones. Places
/// are found with one index of the file's lines, so the work is linear in the file.
/// Template features a grammar for constrained decoding cannot express exactly (as
/// `rtbench grammar` compiles it, without tools): one warning each, at the key that has it.
fn grammar_approximations(source: &TemplateSource, out: &mut Vec<TemplateError>) {
    let Ok(grammar) = rtbench_grammar::compile(source, &rtbench_grammar::Options::default()) else {
        return;
    };
    for a in grammar.approximations {
        out.push(
            TemplateError::new(
                format!(
                    "a grammar for constrained decoding cannot express {} exactly: it uses {}",
                    a.feature, a.used
                ),
                a.path,
                Target::Value,
            )
            .help("serving engines that constrain the output with `rtbench grammar`'s grammar may let the model write what this template then reads differently; express the delimiter without it if you can"),
        );
    }
}

fn duplicate_keys(source: &TemplateSource, out: &mut Vec<TemplateError>) {
    let locator = Locator::new(&source.text);
    // Each key's occurrences before the last, in file order, grouped by the entry's path.
    let mut earlier: std::collections::HashMap<JsonPath, Vec<usize>> =
        std::collections::HashMap::new();
    let mut order: Vec<JsonPath> = Vec::new();
    for d in source.duplicate_keys() {
        let list = earlier.entry(d.path.clone()).or_insert_with(|| {
            order.push(d.path);
            Vec::new()
        });
        list.push(d.previous.start);
    }
    for path in order {
        let Some(mut places) = earlier.remove(&path) else {
            continue;
        };
        places.sort_unstable();
        let name = match path.last() {
            Some(PathSeg::Key(k)) => k.clone(),
            _ => rtbench_engine::template::source::CONFIG_KEY.to_string(),
        };
        let name = Value::from(name.as_str()).py_repr();
        let kept = lookup(source.template_value(), &path)
            .map(|v| format!(" ({})", short_repr(v)))
            .unwrap_or_default();
        let shown: Vec<String> = places
            .iter()
            .take(SHOWN_REPEATS)
            .map(|&at| {
                let (line, col) = locator.line_col(at);
                format!("{line}:{col}")
            })
            .collect();
        let (message, help) = if places.len() == 1 {
            (
                format!(
                    "key {name} is written twice in this object (also at line {}): the reference keeps only the last value{kept} and silently ignores the earlier one",
                    shown[0]
                ),
                format!("remove one of the two {name} entries (keep the value you mean)"),
            )
        } else {
            let more = match places.len() - shown.len() {
                0 => String::new(),
                n => format!(" and {n} more"),
            };
            (
                format!(
                    "key {name} is written {} times in this object (also at lines {}{more}): the reference keeps only the last value{kept} and silently ignores the earlier ones",
                    places.len() + 1,
                    shown.join(", ")
                ),
                format!("remove the earlier {name} entries (keep the value you mean)"),
            )
        };
        out.push(TemplateError::new(message, path, Target::Key).help(help));
    }
}

/// Lines longer than this are not shown under a warning: showing one costs its length, for
/// every warning on it (a template written on one line).
const LONG_LINE: usize = 4096;

/// The findings as warnings located in the template file, as [`TemplateSource::warn`] locates
/// them, in time linear in the file and the findings: lines and columns come from one index of
/// the file, and a warning on a line longer than 4 KB names its place
/// (`file:line:col`) without showing the line.
pub fn diagnostics(source: &TemplateSource, findings: &[TemplateError]) -> Vec<Diagnostic> {
    let locator = Locator::new(&source.text);
    findings
        .iter()
        .map(|f| {
            let diag = Diagnostic::warning(f.message.clone()).with_help(f.help.clone());
            match finding_span(source, f) {
                Place::Span(span) => locator.locate(diag, &source.name, span),
                Place::Nowhere => diag.in_file(source.name.clone()),
                // A place inside a string with escapes: the engine maps it.
                Place::InString => source.warn(f),
            }
        })
        .collect()
}

/// Where a finding points in the file.
enum Place {
    /// At this byte range.
    Span(Range<usize>),
    /// Nowhere in particular (no node of its path exists).
    Nowhere,
    /// Inside a string literal with escapes, which only the engine maps to the file.
    InString,
}

/// The byte range a finding points at, found as the engine finds it: the finding's node, else
/// its nearest ancestor that exists.
fn finding_span(source: &TemplateSource, e: &TemplateError) -> Place {
    let mut path: &[PathSeg] = &e.path;
    loop {
        if let Some(node) = source.node(path) {
            let exact = path.len() == e.path.len();
            return match (e.target, exact, &node.key, e.inner_offset) {
                (Target::Value, true, _, Some(off)) => {
                    let literal = source.text.get(node.value.clone()).unwrap_or("");
                    if !literal.starts_with('"') || literal.contains('\\') {
                        return Place::InString;
                    }
                    // Without escapes the value's bytes are the literal's; past the end is
                    // the closing quote.
                    let close = node.value.end.saturating_sub(1).max(node.value.start);
                    let at = (node.value.start + 1 + off).min(close);
                    let at = source.text.floor_char_boundary(at);
                    Place::Span(at..at + 1)
                }
                (Target::Key, true, Some(key), _) => Place::Span(key.clone()),
                _ => Place::Span(node.value.clone()),
            };
        }
        match path.split_last() {
            Some((_, parent)) => path = parent,
            None => return Place::Nowhere,
        }
    }
}

/// Lines and columns of byte offsets in one text, each found without reading the text before
/// it: the start of every line, and the characters before every [`Locator::STEP`]-th byte.
struct Locator<'t> {
    text: &'t str,
    line_starts: Vec<usize>,
    /// Characters before `floor_char_boundary(i * STEP)`, for every `i`.
    chars_before: Vec<usize>,
}

impl<'t> Locator<'t> {
    const STEP: usize = 4096;

    fn new(text: &'t str) -> Locator<'t> {
        let mut line_starts = vec![0];
        line_starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        let mut chars_before = Vec::with_capacity(text.len() / Self::STEP + 1);
        let mut count = 0;
        let mut from = 0;
        for i in 0..=text.len() / Self::STEP {
            let at = text.floor_char_boundary(i * Self::STEP);
            count += text[from..at].chars().count();
            chars_before.push(count);
            from = at;
        }
        Locator {
            text,
            line_starts,
            chars_before,
        }
    }

    /// Characters before byte `at` (a character boundary).
    fn chars_to(&self, at: usize) -> usize {
        let i = at / Self::STEP;
        let from = self.text.floor_char_boundary(i * Self::STEP);
        self.chars_before[i] + self.text[from..at].chars().count()
    }

    /// The 0-based line of byte `at`, and the line's byte range (without its line break).
    fn line_of(&self, at: usize) -> (usize, Range<usize>) {
        let i = self.line_starts.partition_point(|&s| s <= at) - 1;
        let end = self
            .line_starts
            .get(i + 1)
            .map_or(self.text.len(), |next| next - 1);
        (i, self.line_starts[i]..end)
    }

    /// The 1-based line and column (in characters) of byte `at`, as `TemplateSource::line_col`
    /// gives them.
    fn line_col(&self, at: usize) -> (usize, usize) {
        let at = self.text.floor_char_boundary(at.min(self.text.len()));
        let (line, range) = self.line_of(at);
        (line + 1, self.chars_to(at) - self.chars_to(range.start) + 1)
    }

    /// `diag` located at `span` of the file `name`, as `Diagnostic::at` locates it; on a long
    /// line, the place named without the line.
    fn locate(&self, diag: Diagnostic, name: &str, span: Range<usize>) -> Diagnostic {
        let start = self
            .text
            .floor_char_boundary(span.start.min(self.text.len()));
        let (line, range) = self.line_of(start);
        if range.len() > LONG_LINE {
            let (line, col) = self.line_col(start);
            return diag.in_file(format!("{name}:{line}:{col}"));
        }
        // Located within its line alone, which gives the same column, caret and text.
        let local = start - range.start..span.end.saturating_sub(range.start);
        let mut diag = diag.in_file(name).at(&self.text[range], local);
        if let Some(location) = &mut diag.location {
            location.line = line + 1;
            location.span = span;
        }
        diag
    }
}

fn short_repr(v: &Value) -> String {
    let r = rtbench_engine::py::json_dumps(v, &rtbench_engine::py::DumpOptions::default())
        .unwrap_or_else(|_| v.py_repr());
    if r.chars().count() > 40 {
        format!("{}...", r.chars().take(37).collect::<String>())
    } else {
        r
    }
}

/// The closest name to `wrong` among `names` (case aside; the first of equally close ones), if
/// it is close enough to be a likely typo: within a third of the longer name's characters, and
/// at least two edits. The did-you-mean of lint's names and of a transform's placeholders.
pub(crate) fn closest<'a>(
    wrong: &str,
    names: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = wrong.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for n in names {
        let d = strsim::damerau_levenshtein(&lower, &n.to_lowercase());
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, n));
        }
    }
    let (d, n) = best?;
    let limit = (wrong.chars().count().max(n.chars().count()) / 3).max(2);
    (d <= limit).then_some(n)
}

fn did_you_mean(found: Option<&str>, names: &[String]) -> String {
    let list = names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match found {
        Some(n) => format!("did you mean `{n}`? (available: {list})"),
        None if names.is_empty() => "nothing is available here".to_string(),
        None => format!("use one of: {list}"),
    }
}

// ---- transform placeholders ----

/// The whole-string placeholders (`{a}`, `{a.b}`) in a transform: (path, text, root name).
fn placeholder_roots(
    t: &Value,
    re: &pyregex::Regex,
    at: &mut JsonPath,
    depth: usize,
    out: &mut Vec<(JsonPath, String, String)>,
) {
    if depth > 200 {
        return;
    }
    match t {
        Value::Str(s) => {
            if let Ok(Some(m)) = re.match_at(s, 0)
                && let Some(g) = m.group(1)
                && let Some(path) = s.get(g)
            {
                let root = path.split('.').next().unwrap_or(path).to_string();
                out.push((at.clone(), path.to_string(), root));
            }
        }
        Value::List(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(PathSeg::Index(i));
                placeholder_roots(item, re, at, depth + 1, out);
                at.pop();
            }
        }
        Value::Dict(entries) => {
            for (k, item) in entries {
                at.push(key(k));
                placeholder_roots(item, re, at, depth + 1, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn placeholders(f: &rtbench_engine::Field, spec: Option<&Value>, out: &mut Vec<TemplateError>) {
    let Some(t) = spec.and_then(|d| lookup(d, &[key("transform")])) else {
        return;
    };
    if f.transform.is_none() {
        return;
    }
    // The reference's placeholder syntax, matched against the whole string.
    let Ok(re) = pyregex::Regex::new(r"\{(\w+(?:\.\w+)*)\}\Z", pyregex::Flags { dotall: false })
    else {
        return;
    };
    let mut names: Vec<String> = Vec::new();
    for d in [&f.open, &f.close].into_iter().flatten() {
        for n in d.capture_names() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
    }
    if f.transform_each {
        // Each element's keys join the captures; `content` is not in scope.
        match f.content {
            ContentKind::PythonCallList => {
                names.extend(["name".to_string(), "arguments".to_string()]);
            }
            // The elements' keys are not known before parsing.
            _ => return,
        }
    } else {
        names.push("content".to_string());
    }
    let mut found = Vec::new();
    let mut at = vec![key("fields"), key(&f.name), key("transform")];
    placeholder_roots(t, &re, &mut at, 0, &mut found);
    for (path, text, root) in found {
        if names.contains(&root) {
            continue;
        }
        let scope = if f.transform_each {
            "with transform_each the placeholders see the captures and each element's keys (not `content`)"
        } else {
            "placeholders see the open/close patterns' named groups and `content`"
        };
        let suggestion = closest(&root, names.iter().map(String::as_str));
        let mut help = did_you_mean(suggestion, &names);
        if !f.transform_each && suggestion.is_none() {
            // The name may be a key of each element of a parsed list.
            help.push_str(&format!(
                "; if the parsed content is a list of objects with a `{root}` key, add \"transform_each\": true to transform each of them"
            ));
        }
        out.push(
            TemplateError::new(
                format!(
                    "field '{}': transform placeholder '{{{text}}}' names nothing available ({scope}): the reference fails with \"is not defined\" whenever a region of this field closes",
                    f.name
                ),
                path,
                Target::Value,
            )
            .help(help),
        );
    }
}

// ---- booleans and content options ----

fn boolean(field: &str, name: &str, v: &Value, path: JsonPath, out: &mut Vec<TemplateError>) {
    if matches!(v, Value::Bool(_)) {
        return;
    }
    let reads = v.truthy();
    let why = match v {
        Value::Str(s) if !s.is_empty() => {
            let lower = s.trim().to_lowercase();
            if matches!(lower.as_str(), "false" | "no" | "off" | "0") {
                format!(
                    "the reference reads {} as true: any non-empty string is truthy",
                    Value::from(s.as_str()).py_repr()
                )
            } else {
                "any non-empty string is truthy".to_string()
            }
        }
        Value::Str(_) => "an empty string is falsy".to_string(),
        Value::Null => "null (None) is falsy, not the default".to_string(),
        Value::List(_) | Value::Dict(_) => format!(
            "{} {} is {}",
            if v.truthy() {
                "a non-empty"
            } else {
                "an empty"
            },
            if matches!(v, Value::List(_)) {
                "list"
            } else {
                "object"
            },
            if reads { "truthy" } else { "falsy" }
        ),
        _ => format!(
            "the number {} is {}",
            short_repr(v),
            if reads { "truthy" } else { "falsy" }
        ),
    };
    out.push(
        TemplateError::new(
            format!(
                "field '{field}': \"{name}\" is {}, not a boolean; Python truthiness makes it {reads} ({why})",
                Value::json_kind(v)
            ),
            path,
            Target::Value,
        )
        .help(format!(
            "write a JSON boolean: \"{name}\": {reads} keeps today's behaviour; \"{name}\": {} is the opposite",
            !reads
        )),
    );
}

/// The boolean options each content parser reads.
fn bool_options(kind: ContentKind) -> &'static [&'static str] {
    match kind {
        ContentKind::Text | ContentKind::Int | ContentKind::Float | ContentKind::Bool => &["strip"],
        ContentKind::KvLines => &["strip"],
        ContentKind::Json => &["unquoted_keys", "allow_non_json", "strip"],
        ContentKind::XmlInline => &["merge_duplicates"],
        ContentKind::PythonCallList => &[],
    }
}

/// Nesting bound for `value_parser` specs (they cannot be cyclic in JSON, but stay bounded).
const MAX_PARSER_NESTING: usize = 64;

/// Checks a parser's options; returns the named groups of an xml-inline `tag_pattern` that
/// compiles.
fn content_args(
    field: &str,
    kind: ContentKind,
    args: &Value,
    path: JsonPath,
    depth: usize,
    out: &mut Vec<TemplateError>,
) -> Option<Vec<String>> {
    if depth > MAX_PARSER_NESTING {
        return None;
    }
    let Value::Dict(d) = args else {
        if kind != ContentKind::PythonCallList {
            out.push(
                TemplateError::new(
                    format!(
                        "field '{field}': the options of the {} parser are {}, not an object: the reference fails when a region is parsed (it calls .get on them)",
                        kind.name(),
                        Value::json_kind(args)
                    ),
                    path,
                    Target::Value,
                )
                .help("write the options as an object, e.g. {}, or remove them"),
            );
        }
        return None;
    };
    for name in bool_options(kind) {
        if let Some(v) = d.get(*name) {
            boolean(field, name, v, with(&path, name), out);
        }
    }
    let groups = if kind == ContentKind::XmlInline {
        tag_pattern(field, d, &path, out)
    } else {
        None
    };
    if kind == ContentKind::KvLines {
        for (name, default) in [("line_sep", "\\n"), ("kv_sep", ":")] {
            match d.get(name) {
                Some(Value::Str(s)) if s.is_empty() => out.push(
                    TemplateError::new(
                        format!(
                            "field '{field}': kv-lines \"{name}\" is empty: the reference fails with \"empty separator\" when a region is parsed"
                        ),
                        with(&path, name),
                        Target::Value,
                    )
                    .help(format!("use a non-empty separator (the default is \"{default}\"), or remove the key")),
                ),
                // A null line separator is Python's `split(None)`: lines are cut at runs of
                // whitespace, which works (a null key separator fails at `in`).
                Some(Value::Null) if name == "line_sep" => {}
                Some(v @ (Value::Null | Value::Bool(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::List(_) | Value::Dict(_))) => out.push(
                    TemplateError::new(
                        format!(
                            "field '{field}': kv-lines \"{name}\" is {}, not a string: the reference fails when a region is parsed",
                            Value::json_kind(v)
                        ),
                        with(&path, name),
                        Target::Value,
                    )
                    .help(format!("write a string (the default is \"{default}\")")),
                ),
                _ => {}
            }
        }
    }
    if matches!(kind, ContentKind::XmlInline | ContentKind::KvLines)
        && let Some(vp) = d.get("value_parser")
    {
        value_parser(field, vp, with(&path, "value_parser"), depth, out);
    }
    groups
}

/// xml-inline's `value_parser_by` (5.25): a dict with a `group` that `tag_pattern` defines and
/// `parsers` by what it captures. 5.24 ignores it, which is said too.
fn value_parser_by(
    field: &str,
    args: &rtbench_engine::value::Dict,
    path: &[PathSeg],
    groups: Option<&[String]>,
    reference: rtbench_engine::Reference,
    out: &mut Vec<TemplateError>,
) {
    let Some(by) = args
        .get("value_parser_by")
        .filter(|v| !matches!(v, Value::Null))
    else {
        return;
    };
    let at = with(path, "value_parser_by");
    if !reference.value_parser_by() {
        out.push(
            TemplateError::new(
                format!(
                    "field '{field}': {} ignores \"value_parser_by\": every value is read with \"value_parser\" (or kept as text) and the tool schema casts the arguments; 5.25 picks the parser per tag and leaves the arguments as parsed",
                    reference.release()
                ),
                at,
                Target::Key,
            )
            .help("run under 5.25 (--reference 5.25), or give a value_parser that suits every tag"),
        );
        return;
    }
    let shape =
        "\"value_parser_by\": {\"group\": \"type\", \"parsers\": {\"int\": {\"name\": \"int\"}}}";
    let Value::Dict(d) = by else {
        out.push(
            TemplateError::new(
                format!(
                    "field '{field}': \"value_parser_by\" is {}, not an object: the reference fails when a region is parsed",
                    Value::json_kind(by)
                ),
                at,
                Target::Value,
            )
            .help(format!("write {shape}")),
        );
        return;
    };
    match (d.get("group"), d.get("parsers")) {
        (Some(Value::Str(group)), Some(Value::Dict(parsers))) => {
            if let Some(groups) = groups
                && !groups.iter().any(|g| g == group)
            {
                let suggestion = closest(group, groups.iter().map(String::as_str));
                out.push(
                    TemplateError::new(
                        format!(
                            "field '{field}': \"value_parser_by\" names group '{group}', which \"tag_pattern\" does not define: the reference fails whenever a tag matches"
                        ),
                        with(&at, "group"),
                        Target::Value,
                    )
                    .help(did_you_mean(suggestion, groups)),
                );
            }
            for (capture, vp) in parsers {
                value_parser(field, vp, with(&with(&at, "parsers"), capture), 0, out);
            }
        }
        _ => out.push(
            TemplateError::new(
                format!(
                    "field '{field}': \"value_parser_by\" needs a string \"group\" (a named group of tag_pattern) and an object \"parsers\": the reference fails when a region is parsed"
                ),
                at,
                Target::Value,
            )
            .help(format!("write {shape}")),
        ),
    }
}

fn value_parser(
    field: &str,
    spec: &Value,
    path: JsonPath,
    depth: usize,
    out: &mut Vec<TemplateError>,
) {
    let d = match spec {
        Value::Null => return,
        Value::Dict(d) => d,
        other => {
            let help = match other {
                Value::Str(s) if ContentKind::from_name(s).is_some() => {
                    format!("write {{\"name\": \"{s}\"}}")
                }
                _ => "write {\"name\": \"json\"} (a parser name and optional \"args\")".to_string(),
            };
            out.push(
                TemplateError::new(
                    format!(
                        "field '{field}': value_parser is {}, not an object: the reference fails when a region is parsed",
                        Value::json_kind(other)
                    ),
                    path,
                    Target::Value,
                )
                .help(help),
            );
            return;
        }
    };
    let names: Vec<String> = ContentKind::NAMES.iter().map(|n| n.to_string()).collect();
    let kind = match d.get("name") {
        None => ContentKind::Text,
        Some(Value::Str(s)) => match ContentKind::from_name(s) {
            Some(k) => k,
            None => {
                let suggestion = closest(s, ContentKind::NAMES);
                out.push(
                    TemplateError::new(
                        format!(
                            "field '{field}': unknown value_parser name {}: the reference accepts the template but fails with KeyError when a region is parsed",
                            Value::from(s.as_str()).py_repr()
                        ),
                        with(&path, "name"),
                        Target::Value,
                    )
                    .help(did_you_mean(suggestion, &names)),
                );
                return;
            }
        },
        Some(other) => {
            out.push(
                TemplateError::new(
                    format!(
                        "field '{field}': value_parser name is {}, not a string: the reference fails when a region is parsed",
                        Value::json_kind(other)
                    ),
                    with(&path, "name"),
                    Target::Value,
                )
                .help(did_you_mean(None, &names)),
            );
            return;
        }
    };
    if let Some(args) = d.get("args") {
        content_args(field, kind, args, with(&path, "args"), depth + 1, out);
    }
}

fn tag_pattern(
    field: &str,
    args: &rtbench_engine::value::Dict,
    path: &[PathSeg],
    out: &mut Vec<TemplateError>,
) -> Option<Vec<String>> {
    let example = "\"tag_pattern\": \"<(?P<key>\\\\w+)>(?P<value>.*?)</(?P=key)>\"";
    let pattern = match args.get("tag_pattern") {
        None | Some(Value::Null) => {
            out.push(
                TemplateError::new(
                    format!(
                        "field '{field}': xml-inline needs a \"tag_pattern\": the reference loads the template but fails whenever a region is parsed"
                    ),
                    path.to_vec(),
                    Target::Value,
                )
                .help(format!("add one with groups `key` and `value`, e.g. {example}")),
            );
            return None;
        }
        Some(Value::Str(s)) => s,
        Some(other) => {
            out.push(
                TemplateError::new(
                    format!(
                        "field '{field}': \"tag_pattern\" is {}, not a string: the reference fails whenever a region is parsed",
                        Value::json_kind(other)
                    ),
                    with(path, "tag_pattern"),
                    Target::Value,
                )
                .help(format!("write a regex string with groups `key` and `value`, e.g. {example}")),
            );
            return None;
        }
    };
    let at = with(path, "tag_pattern");
    let regex = match pyregex::Regex::new(pattern, pyregex::Flags { dotall: true }) {
        Ok(r) => r,
        Err(e) => {
            let (message, offset) = match &e {
                pyregex::RegexError::Syntax {
                    message, offset, ..
                } => (message.clone(), Some(*offset)),
                pyregex::RegexError::Unsupported {
                    construct, offset, ..
                } => (format!("unsupported construct {construct}"), Some(*offset)),
                other => (other.to_string(), None),
            };
            let mut err = TemplateError::new(
                format!(
                    "field '{field}': \"tag_pattern\" does not compile ({message}): the reference loads the template but fails whenever a region is parsed"
                ),
                at,
                Target::Value,
            )
            .help("fix the regex; a literal `(`, `[`, `|`, `?` or `*` needs a backslash (written \\\\ in JSON)");
            if let Some(o) = offset {
                err = err.at_offset(o);
            }
            out.push(err);
            return None;
        }
    };
    let groups: Vec<&str> = regex.names().iter().map(|(n, _)| n.as_str()).collect();
    let owned: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
    for (group, effect) in [
        ("key", "the reference fails whenever a tag matches"),
        ("value", "every value is the empty string"),
    ] {
        if groups.contains(&group) {
            continue;
        }
        let others: Vec<&str> = groups
            .iter()
            .copied()
            .filter(|g| *g != "key" && *g != "value")
            .collect();
        let single = (others.len() == 1 && groups.contains(&"key") != groups.contains(&"value"))
            .then(|| others[0]);
        let suggestion = closest(group, groups.iter().copied())
            .or(single)
            .map(|g| format!("rename the group (?P<{g}>...) to (?P<{group}>...)"))
            .unwrap_or_else(|| format!("add a named group (?P<{group}>...), e.g. {example}"));
        out.push(
            TemplateError::new(
                format!("field '{field}': \"tag_pattern\" has no named group `{group}`: {effect}"),
                at.clone(),
                Target::Value,
            )
            .help(suggestion),
        );
    }
    Some(owned)
}

// ---- patterns ----

/// Every pattern delimiter of the template with its JSON path and a description.
fn patterns(template: &Template) -> Vec<(&pyregex::Regex, &str, JsonPath, String, &'static str)> {
    let mut out = Vec::new();
    if let Delimiter::Pattern(p) = template.start_anchor() {
        out.push((
            &p.regex,
            p.source(),
            vec![key("start_anchor_pattern")],
            "start_anchor_pattern".to_string(),
            "start_anchor",
        ));
    }
    for f in template.fields() {
        for (role, d) in [(Role::Open, &f.open), (Role::Close, &f.close)] {
            if let Some(whole @ Delimiter::Pattern(p)) = d {
                out.push((
                    &p.regex,
                    p.source(),
                    delimiter_path(&f.name, role, whole),
                    format!("field '{}': {}", f.name, role.key(true)),
                    role.key(false),
                ));
            }
        }
    }
    out
}

/// Where a pattern matches the empty string in ordinary text (not at its very start or end,
/// so `^`, `$` and lookaheads for text that is not there do not count).
fn empty_match(regex: &pyregex::Regex) -> Option<(&'static str, usize)> {
    const PROBES: [&str; 2] = ["ab cd", "x\ty z"];
    for probe in PROBES {
        for pos in 1..probe.len() {
            if let Ok(Some(m)) = regex.match_at(probe, pos)
                && m.start() == m.end()
            {
                return Some((probe, pos));
            }
        }
    }
    None
}

fn empty_patterns(template: &Template, out: &mut Vec<TemplateError>) {
    let already: Vec<JsonPath> = out.iter().map(|e| e.path.clone()).collect();
    for (regex, source, path, what, _) in patterns(template) {
        if already.contains(&path) {
            continue; // the close-after-open checks said more already
        }
        let Some((probe, pos)) = empty_match(regex) else {
            continue;
        };
        let effect = if path.len() == 1 {
            "the prefix is cut after its last match, which can be at its very end, so the whole prefix may be dropped"
        } else if path.last() == Some(&key("open_pattern")) {
            "it matches between any two characters, so regions of this field open where nothing marks them"
        } else {
            "it matches between any two characters, so regions of this field close at once and stay empty"
        };
        out.push(
            TemplateError::new(
                format!(
                    "{what} {} matches the empty string (e.g. at offset {pos} of {}): {effect}",
                    Value::from(source).py_repr(),
                    Value::from(probe).py_repr()
                ),
                path,
                Target::Value,
            )
            .help("make it consume at least one character (e.g. a+ instead of a*, or put the optional parts next to a required one)"),
        );
    }
}

/// Unescaped metacharacters inside what looks like a special token (`<|x|>`, `[TOKEN]`):
/// (byte offset, length) of each such token in the pattern.
fn suspicious_tokens(pattern: &str) -> Vec<(usize, usize)> {
    let b = pattern.as_bytes();
    let escaped = |i: usize| {
        let mut n = 0;
        while i > n && b[i - n - 1] == b'\\' {
            n += 1;
        }
        n % 2 == 1
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        // `<|name|>` (either bar unescaped)
        if b[i] == b'<' && !escaped(i) {
            let bar1 = if b.get(i + 1) == Some(&b'|') {
                Some((i + 1, false))
            } else if b.get(i + 1) == Some(&b'\\') && b.get(i + 2) == Some(&b'|') {
                Some((i + 2, true))
            } else {
                None
            };
            if let Some((bar, bar1_escaped)) = bar1 {
                let mut j = bar + 1;
                while j < b.len() && !matches!(b[j], b'|' | b'<' | b'>' | b' ' | b'\n') {
                    j += 1;
                }
                if j < b.len() && b[j] == b'|' && b.get(j + 1) == Some(&b'>') && j > bar + 1 {
                    let name_ok = pattern[bar + 1..j].trim_end_matches('\\').bytes().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'/' | b'.' | b':')
                    });
                    let bar2_escaped = escaped(j);
                    if name_ok && (!bar1_escaped || !bar2_escaped) {
                        out.push((i, j + 2 - i));
                        i = j + 2;
                        continue;
                    }
                }
            }
        }
        // `[TOKEN_NAME]`: upper-case letters, digits and `_`, at least four
        if b[i] == b'[' && !escaped(i) {
            let mut j = i + 1;
            while j < b.len()
                && (b[j].is_ascii_uppercase() || b[j].is_ascii_digit() || b[j] == b'_')
            {
                j += 1;
            }
            if j < b.len() && b[j] == b']' && j - i > 4 && b[i + 1].is_ascii_uppercase() {
                out.push((i, j + 1 - i));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// `token` with its regex metacharacters escaped (backslashes already there are kept).
fn escape_token(token: &str) -> String {
    let mut out = String::new();
    let mut prev_backslash = false;
    for c in token.chars() {
        if !prev_backslash && matches!(c, '|' | '[' | ']') {
            out.push('\\');
        }
        prev_backslash = c == '\\' && !prev_backslash;
        out.push(c);
    }
    out
}

fn token_metachars(template: &Template, out: &mut Vec<TemplateError>) {
    for (_, source, path, what, literal_key) in patterns(template) {
        let tokens = suspicious_tokens(source);
        if tokens.is_empty() {
            continue;
        }
        let mut fixed = String::new();
        let mut last = 0;
        for &(at, len) in &tokens {
            fixed.push_str(&source[last..at]);
            fixed.push_str(&escape_token(&source[at..at + len]));
            last = at + len;
        }
        fixed.push_str(&source[last..]);
        let (at, len) = tokens[0];
        let token = &source[at..at + len];
        let meaning = if token.starts_with('[') {
            "`[...]` is a character class, so it matches any one of those characters"
        } else {
            "`|` is alternation, so the pattern matches a lone `<` (or `>`) among other things"
        };
        let whole_literal = tokens.len() == 1 && len == source.len();
        let json_fixed = rtbench_engine::py::json_dumps_str(&fixed);
        let help = if whole_literal {
            format!(
                "write the token as a literal: \"{literal_key}\": {}, or escape it: {json_fixed}",
                rtbench_engine::py::json_dumps_str(token)
            )
        } else {
            format!("escape the metacharacters: {json_fixed}")
        };
        out.push(
            TemplateError::new(
                format!(
                    "{what} {}: {} looks like a special token, but {meaning}",
                    Value::from(source).py_repr(),
                    Value::from(token).py_repr()
                ),
                path,
                Target::Value,
            )
            .at_offset(at)
            .help(help),
        );
    }
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
            // Each literal's first index in the template's list (a map: searching the list for
            // each of thousands of literals was quadratic).
            let mut first: HashMap<&str, usize> = HashMap::new();
            if let Some(Value::List(items)) = lookup(spec, &base) {
                for (j, item) in items.iter().enumerate() {
                    if let Some(text) = item.as_str() {
                        first.entry(text).or_insert(j);
                    }
                }
            }
            for lit in &set.literals {
                let mut path = base.clone();
                if let Some(&j) = first.get(lit.as_str()) {
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

#[cfg(test)]
thread_local! {
    /// Prefix tests the overlap check has made on this thread (a test bounds its work).
    static PREFIX_TESTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn overlapping_literals(template: &Template, spec: &Value, out: &mut Vec<TemplateError>) {
    let lits = literals(template, spec);
    // The pairs where one literal is a prefix of the other: in sorted order, the literals that
    // begin with one follow it directly, so each is compared only with those (comparing every
    // pair was quadratic in a list of thousands). Reported in the template's order.
    let mut sorted: Vec<usize> = (0..lits.len()).collect();
    sorted.sort_by(|&a, &b| lits[a].text.cmp(lits[b].text).then(a.cmp(&b)));
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (k, &i) in sorted.iter().enumerate() {
        for &j in sorted[k + 1..].iter().take_while(|&&j| {
            #[cfg(test)]
            PREFIX_TESTS.set(PREFIX_TESTS.get() + 1);
            lits[j].text.starts_with(lits[i].text)
        }) {
            pairs.push((i.min(j), i.max(j)));
        }
    }
    pairs.sort_unstable();
    for (i, j) in pairs {
        let (a, b) = (&lits[i], &lits[j]);
        {
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

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::template::source::source_from_text;

    /// Thousands of literals in one list and an open of another field equal to one of them:
    /// the overlap is reported at the list's index, and finding it takes a few prefix tests
    /// per literal (it compared every pair).
    #[test]
    fn overlaps_in_a_long_literal_list_are_found_in_linear_work() {
        let n = 10_000;
        // One literal a line: line 4 + i holds literal i.
        let list: Vec<String> = (0..n).map(|i| format!("\"<l{i}>\"")).collect();
        let text = format!(
            "{{\"start_anchor\": \"<s>\", \"fields\": {{\n\"b\": {{\"open\": \"<l4321>\", \"close\": \"</b>\"}},\n\"z\": {{\"close\": \"</z>\", \"open\": [\n{}]}}}}}}",
            list.join(",\n")
        );
        PREFIX_TESTS.set(0);
        let found = run(&text);
        let tests = PREFIX_TESTS.get();
        let overlaps: Vec<&String> = found.iter().filter(|f| f.contains("same text")).collect();
        assert_eq!(overlaps.len(), 1, "{found:?}");
        assert!(
            overlaps[0].starts_with(&format!(
                "{}:1 open '<l4321>' of 'z' is the same text as open '<l4321>' of 'b'",
                4 + 4321
            )),
            "{}",
            overlaps[0]
        );
        assert!(tests <= 3 * n, "{tests} prefix tests for {n} literals");
    }

    /// Lints `text` as a file and renders each finding as "line:col message | help".
    fn run(text: &str) -> Vec<String> {
        let source = source_from_text("t.json".into(), text.to_string()).expect("valid JSON");
        let template = source.template().expect("the reference loads it");
        let findings = lint_file(&template, &source);
        // The linear locator places every finding where the engine places it.
        assert_eq!(
            diagnostics(&source, &findings),
            findings.iter().map(|f| source.warn(f)).collect::<Vec<_>>()
        );
        findings
            .iter()
            .map(|f| {
                let d = source.warn(f);
                let at = d
                    .location
                    .as_ref()
                    .map(|l| format!("{}:{}", l.line, l.column))
                    .unwrap_or_default();
                format!(
                    "{at} {} | {}",
                    d.message,
                    d.help.clone().unwrap_or_default()
                )
            })
            .collect()
    }

    fn only(text: &str, word: &str) -> Vec<String> {
        run(text).into_iter().filter(|m| m.contains(word)).collect()
    }

    const KIMI: &str = r#"{
  "start_anchor": "<|im_assistant|>assistant<|im_middle|>",
  "fields": {
    "content": {"close": "<|im_end|>", "repeats": true, "join": ""},
    "tool_calls": {
      "open_pattern": "<|tool_call_begin|>\\s*functions\\.(?P<name>[\\w.]+):\\d+\\s*",
      "close": "<|tool_call_end|>",
      "content": "json",
      "repeats": true,
      "transform": {"type": "function", "function": {"name": "{nmae}", "arguments": "{contnet}"}}
    }
  }
}"#;

    #[test]
    fn unknown_placeholders_suggest_the_closest_name() {
        let found = only(KIMI, "placeholder");
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found[0].starts_with("10:62 "), "{}", found[0]);
        assert!(found[0].contains("'{nmae}'") && found[0].contains("did you mean `name`?"));
        assert!(found[1].starts_with("10:85 "), "{}", found[1]);
        assert!(found[1].contains("'{contnet}'") && found[1].contains("did you mean `content`?"));
    }

    #[test]
    fn a_placeholder_like_no_name_hints_at_transform_each() {
        // `{name}` of each parsed call, written without transform_each: no near name, so the
        // hint says what the placeholder probably meant.
        let t = r#"{
  "start_anchor": "A:",
  "fields": {
    "tool_calls": {"open": "<c>", "close": "</c>", "content": "json",
      "transform": {"function": {"name": "{name}", "arguments": "{content}"}}}
  }
}"#;
        let found = only(t, "placeholder");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].contains("use one of: `content`; if the parsed content is a list of objects with a `name` key, add \"transform_each\": true"),
            "{}",
            found[0]
        );
        // A near name is the likelier fix: no hint then.
        let found = only(KIMI, "placeholder");
        assert!(
            found.iter().all(|f| !f.contains("transform_each")),
            "{found:#?}"
        );
    }

    #[test]
    fn transform_each_scope_is_the_elements_keys() {
        let t = r#"{
  "start_anchor": "A:",
  "fields": {
    "tool_calls": {"open": "[", "close": "]", "content": "python-call-list",
      "transform_each": true,
      "transform": {"function": {"name": "{name}", "arguments": "{content}"}}},
    "other": {"open": "{", "close": "}", "content": "json", "transform_each": true,
      "transform": {"x": "{anything}"}}
  }
}"#;
        let found = only(t, "placeholder");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].starts_with("6:65 "), "{}", found[0]);
        assert!(found[0].contains("not `content`"));
        assert!(found[0].contains("`arguments`"));
    }

    #[test]
    fn special_tokens_with_unescaped_bars() {
        let found = only(KIMI, "special token");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].starts_with("6:24 "), "{}", found[0]);
        assert!(found[0].contains("'<|tool_call_begin|>'"));
        assert!(
            found[0].contains(r#"<\\|tool_call_begin\\|>"#),
            "{}",
            found[0]
        );
        let lone = r#"{"start_anchor": "A:", "fields": {"content": {},
  "think": {"open_pattern": "<|think|>", "close_pattern": "\\[/THINK]"},
  "calls": {"open_pattern": "[TOOL_CALLS]", "close": "</s>"}}}"#;
        let found = only(lone, "special token");
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found[0].starts_with("2:30 ") && found[0].contains(r#""open": "<|think|>""#));
        assert!(found[1].starts_with("3:30 ") && found[1].contains("character class"));
        assert!(found[1].contains(r#"\\[TOOL_CALLS\\]"#), "{}", found[1]);
    }

    #[test]
    fn value_parser_by_names_a_group_of_the_tag_pattern_and_is_a_5_25_option() {
        let t = r#"{
  "start_anchor": "<a>",
  "fields": {
    "args": {
      "open": "<call>", "close": "</call>", "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<(?P<key>\\w+) t=(?P<kind>\\w+)>(?P<value>.*?)</(?P=key)>",
        "value_parser_by": {"group": "knd", "parsers": {"i": {"name": "itn"}}}
      }
    }
  }
}"#;
        let found = run(t);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].starts_with("8:38 ") && found[0].contains("names group 'knd'"),
            "{}",
            found[0]
        );
        assert!(found[0].contains("did you mean `kind`?"), "{}", found[0]);
        assert!(
            found[1].starts_with("8:71 ") && found[1].contains("'itn'"),
            "{}",
            found[1]
        );
        // 5.24 ignores the option: said once, where it is written.
        let source = source_from_text("t.json".into(), t.to_string()).unwrap();
        let old = source
            .template()
            .unwrap()
            .with_reference(rtbench_engine::Reference::V5_24);
        let found: Vec<String> = lint_file(&old, &source)
            .iter()
            .map(|f| source.warn(f).message)
            .collect();
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].contains("5.24.0 ignores \"value_parser_by\""),
            "{}",
            found[0]
        );
    }

    #[test]
    fn value_parsers_and_tag_patterns() {
        let t = r#"{
  "start_anchor": "<|im_start|>assistant\n",
  "fields": {
    "content": {"close": "<|im_end|>"},
    "tool_calls": {
      "open": "<tool_call>", "close": "</tool_call>", "content": "xml-inline",
      "content_args": {
        "tag_pattern": "<parameter=(?P<name>\\w+)>(?P<value>.*?)</parameter>",
        "value_parser": {"name": "jsn"}
      }
    },
    "kv": {"open": "<kv>", "close": "</kv>", "content": "kv-lines",
      "content_args": {"value_parser": {"name": "xml-inline", "args": {"tag_pattern": "<(?P<key>\\w+)(>"}}}},
    "kv2": {"open": "<kv2>", "close": "</kv2>", "content": "kv-lines",
      "content_args": {"value_parser": "json", "kv_sep": ""}}
  }
}"#;
        let found = run(t);
        let vp: Vec<_> = found
            .iter()
            .filter(|m| m.contains("value_parser"))
            .collect();
        assert_eq!(vp.len(), 2, "{found:#?}");
        assert!(
            vp[0].starts_with("9:34 ") && vp[0].contains("'jsn'"),
            "{}",
            vp[0]
        );
        assert!(vp[0].contains("did you mean `json`?"));
        assert!(
            vp[1].starts_with("15:40 ") && vp[1].contains(r#"write {"name": "json"}"#),
            "{}",
            vp[1]
        );
        let tp: Vec<_> = found.iter().filter(|m| m.contains("tag_pattern")).collect();
        assert_eq!(tp.len(), 2, "{found:#?}");
        assert!(
            tp[0].starts_with("8:24 ") && tp[0].contains("no named group `key`"),
            "{}",
            tp[0]
        );
        assert!(
            tp[0].contains("rename the group (?P<name>...) to (?P<key>...)"),
            "{}",
            tp[0]
        );
        assert!(
            tp[1].starts_with("13:104 ") && tp[1].contains("does not compile"),
            "{}",
            tp[1]
        );
        assert!(
            found
                .iter()
                .any(|m| m.starts_with("15:58 ") && m.contains("\"kv_sep\" is empty")),
            "{found:#?}"
        );
    }

    #[test]
    fn separators_and_missing_options_as_the_reference_runs_them() {
        // A null line separator splits at whitespace (Python's `split(None)`) and works; a null
        // key separator fails at `in`; an xml-inline field without options has no tag pattern.
        let t = r#"{
  "start_anchor": "A:", "fields": {
    "a": {"open": "<a>", "close": "</a>", "content": "kv-lines", "content_args": {"line_sep": null}},
    "b": {"open": "<b>", "close": "</b>", "content": "kv-lines", "content_args": {"kv_sep": null}},
    "c": {"open": "<c>", "close": "</c>", "content": "xml-inline"}
  }
}"#;
        let found = run(t);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[0].starts_with("4:93 ") && found[0].contains("\"kv_sep\" is null"),
            "{found:#?}"
        );
        assert!(
            found[1].starts_with("5:54 ") && found[1].contains("needs a \"tag_pattern\""),
            "{found:#?}"
        );
    }

    #[test]
    fn booleans_of_other_types() {
        let t = r#"{"start_anchor": "A:", "fields": {
  "content": {"repeats": "false", "join": "", "close": "</s>", "content_args": {"strip": 0}},
  "think": {"open": "<think>", "close": "</think>", "optional": null}}}"#;
        let found = run(t);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert!(found[0].starts_with("2:26 "), "{}", found[0]);
        assert!(
            found[0]
                .contains(r#"the reference reads 'false' as true: any non-empty string is truthy"#)
        );
        assert!(found[0].contains(r#""repeats": true keeps today's behaviour"#));
        assert!(
            found[1].starts_with("2:90 ") && found[1].contains("\"strip\" is a number"),
            "{}",
            found[1]
        );
        assert!(
            found[2].starts_with("3:65 ") && found[2].contains("null (None) is falsy"),
            "{}",
            found[2]
        );
    }

    #[test]
    fn duplicate_keys_point_at_the_repeat() {
        let t = r#"{
  "start_anchor": "<tool_call>",
  "fields": {
    "content": {"optional": true, "close": "</s>", "optional": false}
  }
}"#;
        let source = source_from_text("t.json".into(), t.to_string()).unwrap();
        // The decoded value is Python's: last value, first position.
        assert_eq!(
            source.template_value().as_dict().unwrap()["fields"]
                .as_dict()
                .unwrap()["content"]
                .as_dict()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["optional", "close"]
        );
        let found = run(t);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].starts_with("4:52 "), "{}", found[0]);
        assert!(found[0].contains("'optional' is written twice"));
        assert!(found[0].contains("also at line 4:17") && found[0].contains("(false)"));
    }

    /// A key written thousands of times is one warning, located at the occurrence the
    /// reference keeps, listing the first earlier ones.
    #[test]
    fn a_key_repeated_many_times_is_one_warning() {
        let n = 20_000;
        let entries: Vec<&str> = std::iter::repeat_n("    \"role\": \"assistant\"", n).collect();
        let t = format!(
            "{{\n  \"defaults\": {{\n{}\n  }},\n  \"start_anchor\": \"<a>\",\n  \"fields\": {{\"content\": {{\"close\": \"<e>\"}}}}\n}}",
            entries.join(",\n")
        );
        let found = run(&t);
        assert_eq!(found.len(), 1, "{:#?}", &found[..found.len().min(3)]);
        let last_line = 2 + n;
        assert!(
            found[0].starts_with(&format!("{last_line}:5 ")),
            "{}",
            found[0]
        );
        assert!(
            found[0].contains(&format!(
                "key 'role' is written {n} times in this object (also at lines 3:5, 4:5, 5:5, 6:5, 7:5 and {} more)",
                n - 6
            )),
            "{}",
            found[0]
        );
        assert!(
            found[0].contains("remove the earlier 'role' entries"),
            "{}",
            found[0]
        );
    }

    /// The located warnings of a template written on one line hold work in proportion to the
    /// file: a long line is named (`file:line:col`), not copied under every warning (which is
    /// what made linting quadratic in the number of repeated keys).
    #[test]
    fn warnings_on_one_long_line_are_located_in_linear_work() {
        let shown = |keys: usize| {
            let entries: Vec<String> = (0..keys)
                .flat_map(|i| [format!("\"k{i}\": 1"), format!("\"k{i}\": 2")])
                .collect();
            let t = format!(
                "{{\"defaults\": {{{}}}, \"start_anchor\": \"<a>\", \"fields\": {{\"content\": {{\"close\": \"<e>\"}}}}}}",
                entries.join(", ")
            );
            let source = source_from_text("t.json".into(), t.clone()).unwrap();
            let template = source.template().unwrap();
            let findings = lint_file(&template, &source);
            assert_eq!(findings.len(), keys);
            let found = diagnostics(&source, &findings);
            for (d, f) in found.iter().zip(&findings) {
                // The place is the engine's, named in the file.
                let engine = source.warn(f).location.unwrap();
                let file = d.file.as_deref().unwrap();
                assert_eq!(file, format!("t.json:1:{}", engine.column));
                assert!(d.location.is_none());
            }
            // What each warning holds and renders: its line's text (which the renderer reads
            // whole), and the rendering.
            found
                .iter()
                .map(|d| d.location.as_ref().map_or(0, |l| l.line_text.len()) + d.to_string().len())
                .sum::<usize>()
        };
        let (small, large) = (shown(2_000), shown(4_000));
        assert!(
            large <= 2 * small + small / 10,
            "the warnings' bytes grow faster than the file: {small} -> {large}"
        );
    }

    #[test]
    fn patterns_matching_the_empty_string() {
        let t = r#"{"start_anchor_pattern": "x*", "fields": {
  "content": {},
  "calls": {"open_pattern": "a*", "close_pattern": "(?=</call>)|</call>"},
  "look": {"open": "<l>", "close_pattern": "(?=<tool>)"}}}"#;
        let found = only(t, "empty string");
        assert_eq!(found.len(), 2, "{found:#?}");
        // Lookahead closes (zero-width only before their text) are not flagged.
        assert!(!found.iter().any(|m| m.contains("(?=")));
        assert!(
            found[0].starts_with("1:26 ") && found[0].contains("whole prefix"),
            "{}",
            found[0]
        );
        assert!(
            found[1].starts_with("3:29 ") && found[1].contains("open where nothing marks them")
        );
    }

    #[test]
    fn second_implicit_field_is_a_load_error() {
        let t = r#"{"start_anchor": "A:", "fields": {"a": {}, "b": {}}}"#;
        assert!(
            source_from_text("t.json".into(), t.to_string())
                .unwrap()
                .template()
                .is_err()
        );
    }

    #[test]
    fn bundled_samples() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("template.json"))
            .filter(|p| p.exists())
            .collect();
        names.sort();
        assert!(!names.is_empty());
        let mut report = Vec::new();
        for path in names {
            let (template, source) = rtbench_engine::template::source::load_file(&path).unwrap();
            for f in lint_file(&template, &source) {
                report.push(source.warn(&f).to_string());
            }
        }
        // No bundled template trips any check (granite-3.3's lookahead in its thinking close
        // included: a grammar for constrained decoding expresses it exactly).
        assert_eq!(report, Vec::<String>::new());
    }
}
