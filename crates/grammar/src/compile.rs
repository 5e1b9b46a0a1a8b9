//! A response template (and the request's tools) compiled into a [`Grammar`] of the model's
//! whole output after the prompt: the outputs the parser reads back into a message without an
//! error or a silent loss.
//!
//! The shape, for a template with an implicit field (the text outside every explicit region):
//!
//! - the non-tool explicit fields first, in the template's order (each at most once, or any
//!   number of times when it `repeats`, at least once when `optional` is false), separated by
//!   whitespace;
//! - then the implicit field's text, free but for the delimiters the parser watches there
//!   (every open, and the implicit field's own close), and the tool calls: either the text then
//!   the calls back to back, or the calls then the text (a non-repeating implicit field
//!   reopens after each region, and the parser keeps only its last value: text on both sides
//!   of a call, or whitespace after the text, would lose the text);
//! - then the implicit field's close (one or more times: end-of-turn tokens often follow a
//!   section end); it is required after text, since text the close never ended is cut off.
//!
//! Without an implicit field, every field in the template's order with whitespace (or the start
//! anchor, as multi-message formats repeat it) between regions. Explicit regions always end
//! with their close. Tool calls follow the field's content parser and transform (see
//! [`crate::tools`]); `repeats`, the tool choice and parallel calls decide how many.
//!
//! Lookarounds become exact constraints where they are: a close that is only a lookahead for
//! literals (`(?=\[TOOL_CALLS\]|</s>)`) means the next thing must be one of them; an open
//! `\A(?=X)` opens only at the very start, so the text there must not begin with `X`. Any
//! other lookaround or assertion is read as empty and reported as an [`Approximation`].

use serde_json::{Value as Json, json};

use rtbench_engine::ContentKind;
use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::template::{JsonPath, PathSeg, TemplateSource};
use rtbench_engine::{EventKind, Events, Parser, Template};

use crate::follow;
use crate::ir::{Approximation, Grammar, Node};
use crate::plan::{Close, Open, dialect_of, regex_node, truthy, whitespace, whitespace_re};
use crate::re::{self, Re};
use crate::tools::{self, Tool, ToolShape};
use crate::{Error, Options, ToolChoice};

/// One field, read for the grammar.
#[derive(Clone, Debug)]
pub(crate) struct FieldPlan {
    pub name: String,
    pub open: Option<Open>,
    pub close: Close,
    /// Strings whose occurrence in other text would open this field.
    pub open_excludes: Vec<String>,
    /// Strings whose occurrence in this field's body would end it.
    pub close_excludes: Vec<String>,
    pub repeats: bool,
    pub optional: bool,
    /// How tool calls are written in this field, when it holds them.
    pub tool: Option<ToolShape>,
    pub content: ContentKind,
    pub content_args: Json,
}

/// The compiler's state: the template, the rules made so far and the approximations found.
pub(crate) struct Compiler<'a> {
    pub source: &'a TemplateSource,
    pub rules: Vec<(String, Node)>,
    pub approximations: Vec<Approximation>,
    pub tools: Option<Vec<Tool>>,
    pub options: &'a Options,
    /// The rule made for each field's region (and for its rest after a prefilled open).
    /// (Keyed by the field, whether the prompt opened it, and whether its open takes the
    /// whitespace before it.)
    pub region_rules: Vec<((String, bool, bool), String)>,
    /// The rule names in use.
    pub taken: std::collections::HashSet<String>,
    /// Fields whose open takes the whitespace before it (see `assemble`).
    pub lead_ws: Vec<String>,
    /// Fields whose guarded close keeps its constraint on what follows (see `assemble`).
    pub guards: Vec<String>,
}

pub(crate) fn compile(source: &TemplateSource, options: &Options) -> Result<Grammar, Error> {
    let template = source
        .template()
        .map_err(|e| Error::Template(e.to_string()))?;
    let spec = Json::try_from(source.template_value())
        .map_err(|e| Error::Template(format!("the template cannot be read as JSON: {e}")))?;
    let tools = match &options.tools {
        None => None,
        Some(list) => Some(tools::read_tools(list)?),
    };
    let tools = match (&options.tool_choice, tools) {
        (ToolChoice::Named(name), Some(list)) => {
            let chosen: Vec<Tool> = list.into_iter().filter(|t| &t.name == name).collect();
            if chosen.is_empty() {
                return Err(Error::Tools(format!(
                    "--tool-choice names '{name}', which is not among the tools"
                )));
            }
            Some(chosen)
        }
        (ToolChoice::Named(name), None) => Some(vec![Tool::any_arguments(name)]),
        (_, t) => t,
    };
    let mut c = Compiler {
        source,
        rules: Vec::new(),
        approximations: Vec::new(),
        tools,
        options,
        region_rules: Vec::new(),
        taken: std::collections::HashSet::new(),
        lead_ws: Vec::new(),
        guards: Vec::new(),
    };
    let plans: Vec<FieldPlan> = template.fields().iter().map(|f| c.plan(f, &spec)).collect();
    let started = started_in(&template, options.prefix.as_deref());
    let start = c.assemble(&template, &plans, started);
    Ok(Grammar {
        start,
        rules: c.rules,
        approximations: c.approximations,
    })
}

/// The explicit field whose region the prompt left open (a prefilled `<think>`), if any.
fn started_in(template: &Template, prefix: Option<&str>) -> Option<usize> {
    let prefix = prefix?;
    let parser = Parser::with_events(template, Some(prefix), None, Events::Reference).ok()?;
    let mut open: Option<usize> = None;
    for e in parser.initial_events() {
        match e.kind {
            EventKind::Open => open = Some(e.field),
            EventKind::Close { .. } => open = None,
            _ => {}
        }
    }
    open.filter(|f| Some(*f) != template.implicit())
}

fn dotted(path: &[PathSeg]) -> String {
    path.iter()
        .map(|s| match s {
            PathSeg::Key(k) => k.clone(),
            PathSeg::Index(i) => i.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

impl Compiler<'_> {
    /// Records an approximation located at `path` in the template file.
    pub(crate) fn approximate(&mut self, path: JsonPath, feature: String, used: String) {
        let (line, col) = locate(self.source, &path);
        let a = Approximation {
            line,
            col,
            key_path: dotted(&path),
            path,
            feature,
            used,
        };
        if !self.approximations.contains(&a) {
            self.approximations.push(a);
        }
    }

    fn plan(&mut self, field: &rtbench_engine::Field, spec: &Json) -> FieldPlan {
        let fjson = spec
            .get("fields")
            .and_then(|f| f.get(&field.name))
            .cloned()
            .unwrap_or(Json::Null);
        let base = vec![
            PathSeg::Key("fields".into()),
            PathSeg::Key(field.name.clone()),
        ];
        let key = |k: &str| {
            let mut p = base.clone();
            p.push(PathSeg::Key(k.into()));
            p
        };
        let (open, open_excludes) = match &field.open {
            None => (None, Vec::new()),
            Some(Delimiter::Literal(set)) => (
                Some(Open::Literals(set.literals.clone())),
                set.literals.clone(),
            ),
            Some(Delimiter::Pattern(p)) => {
                let (open, excludes) = self.open_pattern(p.source(), key("open_pattern"));
                (Some(open), excludes)
            }
        };
        let (close, close_excludes) = match &field.close {
            None => (Close::None, Vec::new()),
            Some(Delimiter::Literal(set)) => {
                (Close::Literals(set.literals.clone()), set.literals.clone())
            }
            Some(Delimiter::Pattern(p)) => self.close_pattern(p.source(), key("close_pattern")),
        };
        let content_args = fjson.get("content_args").cloned().unwrap_or(Json::Null);
        let mut found = Vec::new();
        let tool = tools::shape(field, &fjson, &open, &base, &mut found);
        for (path, feature, used) in found {
            self.approximate(path, feature, used);
        }
        if let Some(Open::Pattern {
            follow: Some(lit),
            path,
            re,
        }) = &open
        {
            let begins = tool.as_ref().and_then(ToolShape::first_char);
            if lit.chars().count() != 1 || begins != lit.chars().next() {
                self.approximate(
                    path.clone(),
                    "a lookahead (?=...)".into(),
                    format!(
                        "the pattern without it, /{}/ (what must follow is not enforced)",
                        re.to_regex()
                    ),
                );
            }
        }
        FieldPlan {
            name: field.name.clone(),
            open,
            close,
            open_excludes,
            close_excludes,
            repeats: field.repeats,
            optional: field.optional,
            tool,
            content: field.content,
            content_args,
        }
    }

    /// Reads a pattern, reporting what it uses that a grammar cannot say.
    fn lower(&mut self, pattern: &str, path: &JsonPath) -> Re {
        match re::lower(pattern) {
            Ok((re, issues)) => {
                for issue in issues {
                    let (feature, used) = match issue {
                        re::Issue::CaseInsensitive => (
                            "case-insensitive matching".to_string(),
                            "the letters as written (other cases are not accepted)".to_string(),
                        ),
                        re::Issue::Backref => (
                            "a backreference".to_string(),
                            "any text in its place".to_string(),
                        ),
                        re::Issue::Atomic => (
                            "an atomic group or possessive repeat".to_string(),
                            "an ordinary group or repeat (it may accept matches the pattern refuses)".to_string(),
                        ),
                        re::Issue::SetOperation => (
                            "a set operation in a character class".to_string(),
                            "the union of its members".to_string(),
                        ),
                    };
                    self.approximate(path.clone(), feature, used);
                }
                re
            }
            // The template loaded, so its patterns compile; keep going with nothing.
            Err(_) => Re::Alt(Vec::new()),
        }
    }

    fn open_pattern(&mut self, pattern: &str, path: JsonPath) -> (Open, Vec<String>) {
        let re = self.lower(pattern, &path);
        // `\A(?=X)`: opens only at the very start of the output, before an `X` it leaves to
        // the body.
        if let Re::Seq(items) = &re
            && let [
                Re::Assert("\\A" | "^"),
                Re::Look {
                    behind: false,
                    positive: true,
                    re: ahead,
                },
            ] = items.as_slice()
            && let Re::Lit(s) = ahead.as_ref()
            && s.chars().count() == 1
            && let Some(c) = s.chars().next()
        {
            return (Open::AtStart(c), Vec::new());
        }
        // A trailing lookahead for a literal (`(?=\[)`): the body must begin with it, which
        // a tool call's body does when it is a JSON list or object.
        let (re, follow) = match &re {
            Re::Seq(items) => match items.split_last() {
                Some((
                    Re::Look {
                        behind: false,
                        positive: true,
                        re: ahead,
                    },
                    rest,
                )) if matches!(ahead.as_ref(), Re::Lit(_)) => {
                    let lit = ahead.as_literals().and_then(|l| l.into_iter().next());
                    (re::simplify(Re::Seq(rest.to_vec())), lit)
                }
                _ => (re, None),
            },
            _ => (re, None),
        };
        let excludes = re.required_literals();
        let clean = self.without_zero_width(&re, &path, "the pattern");
        let excludes = match excludes {
            Some(e) => e,
            None => {
                self.approximate(
                    path.clone(),
                    "an open pattern with no literal every match contains".into(),
                    "text elsewhere is not kept from matching it (the parser would open the field there)".into(),
                );
                Vec::new()
            }
        };
        (
            Open::Pattern {
                re: clean,
                follow,
                path,
            },
            excludes,
        )
    }

    fn close_pattern(&mut self, pattern: &str, path: JsonPath) -> (Close, Vec<String>) {
        let re = self.lower(pattern, &path);
        if let Re::Look {
            behind: false,
            positive: true,
            re: ahead,
        } = &re
            && let Some(lits) = ahead.as_literals()
        {
            return (Close::Follow, lits);
        }
        let excludes = re.required_literals();
        if let Some((free, core, trail, starts)) = guarded(&re)
            && let Some(excludes) = excludes.clone()
        {
            // Whether the constraint on what follows can be kept is known once the fields
            // are placed (see `assemble`); the pattern without its lookahead is kept for when
            // it cannot.
            let mut removed = Vec::new();
            let clean = re.without_zero_width(&mut removed);
            return (
                Close::Guarded {
                    clean,
                    core,
                    trail,
                    free,
                    starts,
                    path,
                },
                excludes,
            );
        }
        let clean = self.without_zero_width(&re, &path, "the pattern");
        let excludes = match excludes {
            Some(e) => e,
            None => {
                self.approximate(
                    path,
                    "a close pattern with no literal every match contains".into(),
                    "the field's text is not kept from matching it (the parser would end the field there)".into(),
                );
                Vec::new()
            }
        };
        (Close::Pattern(clean), excludes)
    }

    fn without_zero_width(&mut self, re: &Re, path: &JsonPath, what: &str) -> Re {
        if !re.has_zero_width() {
            return re.clone();
        }
        let mut removed = Vec::new();
        let clean = re.without_zero_width(&mut removed);
        removed.dedup();
        self.approximate(
            path.clone(),
            removed.join(", "),
            format!(
                "{what} without it, /{}/ (what must follow is not enforced)",
                clean.to_regex()
            ),
        );
        clean
    }

    /// The open delimiter for one tool variant (`name`: the tool name the open's `name`
    /// capture holds).
    pub(crate) fn open_node(&self, plan: &FieldPlan, name: Option<&str>) -> Node {
        match &plan.open {
            None | Some(Open::AtStart(_)) => Node::empty(),
            Some(Open::Literals(l)) => Node::alt(l.iter().map(|s| Node::Lit(s.clone())).collect()),
            Some(Open::Pattern { re, .. }) => {
                let re = match (
                    name,
                    plan.tool.as_ref().and_then(|t| t.name_capture.as_deref()),
                ) {
                    (Some(n), Some(capture)) => name_in_capture(re, capture, n),
                    _ => re.clone(),
                };
                regex_node(re::simplify(re))
            }
        }
    }

    /// The close delimiter.
    pub(crate) fn close_node(plan: &FieldPlan) -> Node {
        match &plan.close {
            Close::None | Close::Follow => Node::empty(),
            Close::Literals(l) => Node::alt(l.iter().map(|s| Node::Lit(s.clone())).collect()),
            Close::Pattern(re) => regex_node(re.clone()),
            Close::Guarded { clean, .. } => regex_node(clean.clone()),
        }
    }

    /// The close of a region as this compiler writes it: a guarded close (see
    /// [`Close::Guarded`]) whose constraint is kept is its core; the rest of it is written
    /// after the region, where what follows is constrained (see `assemble`).
    fn region_close(&self, plan: &FieldPlan) -> Node {
        match &plan.close {
            Close::Guarded { core, .. } if self.guards.contains(&plan.name) => {
                regex_node(core.clone())
            }
            _ => Self::close_node(plan),
        }
    }

    /// The body of a region that holds no tool calls.
    fn plain_body(&mut self, plan: &FieldPlan) -> Node {
        let text = Node::TextWithout {
            excludes: plan.close_excludes.clone(),
            not_start: None,
            not_blank: false,
            not_json: false,
        };
        let pad = |n: Node| Node::seq(vec![whitespace(), n, whitespace()]);
        let digits = || Re::Repeat {
            re: Box::new(Re::Class {
                ranges: vec![('0' as u32, '9' as u32)],
                negated: false,
            }),
            min: 1,
            max: None,
        };
        let sign = || Re::Repeat {
            re: Box::new(Re::Class {
                ranges: vec![('+' as u32, '+' as u32), ('-' as u32, '-' as u32)],
                negated: false,
            }),
            min: 0,
            max: Some(1),
        };
        match plan.content {
            ContentKind::Int => pad(Node::Regex(Re::Seq(vec![sign(), digits()]))),
            ContentKind::Float => pad(Node::Regex(Re::Seq(vec![
                sign(),
                digits(),
                Re::Repeat {
                    re: Box::new(Re::Seq(vec![Re::Lit(".".into()), digits()])),
                    min: 0,
                    max: Some(1),
                },
            ]))),
            ContentKind::Json => {
                let allow_text = plan.content_args.get("allow_non_json").is_some_and(truthy);
                if allow_text {
                    text
                } else {
                    pad(Node::Json {
                        schema: json!({}),
                        dialect: dialect_of(&plan.content_args),
                        excludes: plan.close_excludes.clone(),
                    })
                }
            }
            _ => text,
        }
    }

    /// Every way to write one region of `plan`: one alternative per tool when the open names
    /// the tool. `first`: the prompt already opened it (no open delimiter).
    fn region(&mut self, plan: &FieldPlan, first: bool) -> Node {
        let close = self.region_close(plan);
        let open_for = |c: &Self, name: Option<&str>| {
            if first {
                Node::empty()
            } else {
                c.open_node(plan, name)
            }
        };
        match plan.tool.clone() {
            Some(shape) if !matches!(self.options.tool_choice, ToolChoice::None) => {
                let variants = tools::variants(
                    &mut self.rules,
                    self.tools.as_deref(),
                    self.options.parallel,
                    &plan.close_excludes,
                    &shape,
                );
                let tight_open = matches!(
                    plan.open,
                    Some(Open::Pattern {
                        follow: Some(_),
                        ..
                    })
                );
                let alts = variants
                    .into_iter()
                    .map(|(name, body)| {
                        // After an open that looks ahead, the body begins at once.
                        let body = match body {
                            Node::Seq(mut items)
                                if tight_open && items.first() == Some(&whitespace()) =>
                            {
                                items.remove(0);
                                Node::seq(items)
                            }
                            other => other,
                        };
                        let mut open = open_for(self, name.as_deref());
                        if self.lead_ws.contains(&plan.name)
                            && let Some(re) = as_re(&open)
                        {
                            open = Node::Regex(Re::Seq(vec![whitespace_re(), re]));
                        }
                        Node::seq(vec![open, body, close.clone()])
                    })
                    .collect();
                Node::alt(alts)
            }
            _ => {
                let body = self.plain_body(plan);
                let mut open = open_for(self, None);
                if self.lead_ws.contains(&plan.name)
                    && let Some(re) = as_re(&open)
                {
                    open = Node::Regex(Re::Seq(vec![whitespace_re(), re]));
                }
                Node::seq(vec![open, body, close])
            }
        }
    }

    /// A rule name not taken yet, from `base`.
    fn fresh_rule(&self, base: &str) -> String {
        // `start`/`root` are the dialects' own, `text_N` the exclusion rules' and terminals',
        // `json_*`/`def_*` the schema converter's.
        let reserved = ["text_", "json_", "def_"];
        let base =
            if ["start", "root"].contains(&base) || reserved.iter().any(|r| base.starts_with(r)) {
                format!("field_{base}")
            } else {
                base.to_string()
            };
        let base = base.as_str();
        let mut name = base.to_string();
        let mut n = 1;
        while self.taken.contains(&name) {
            n += 1;
            name = format!("{base}_{n}");
        }
        name
    }

    /// A named rule for a region (the outputs stay readable).
    fn region_rule(&mut self, plan: &FieldPlan, first: bool) -> Node {
        let lead = self.lead_ws.contains(&plan.name);
        let key = (plan.name.clone(), first, lead);
        if let Some((_, name)) = self.region_rules.iter().find(|(k, _)| *k == key) {
            return Node::Ref(name.clone());
        }
        let name = self.fresh_rule(&format!(
            "{}{}{}",
            rule_name(&plan.name),
            if first { "_rest" } else { "" },
            if lead && plan.tool.is_some() {
                "_spaced"
            } else {
                ""
            }
        ));
        self.region_rules.push((key, name.clone()));
        self.taken.insert(name.clone());
        // Reserved first, filled in once built (a region never refers to itself, but the
        // order of rules follows the order fields are met).
        let slot = self.rules.len();
        self.rules.push((name.clone(), Node::Alt(Vec::new())));
        let node = self.region(plan, first);
        self.rules[slot].1 = node;
        Node::Ref(name)
    }

    /// How many regions of `plan` the output may hold.
    fn count(&self, plan: &FieldPlan) -> (u32, Option<u32>) {
        let is_tool = plan.tool.is_some();
        let min = u32::from(!plan.optional);
        if is_tool {
            let forced = matches!(
                self.options.tool_choice,
                ToolChoice::Required | ToolChoice::Named(_)
            );
            let max = if plan.repeats && self.options.parallel {
                None
            } else {
                Some(1)
            };
            (u32::from(forced).max(min), max)
        } else {
            (min, if plan.repeats { None } else { Some(1) })
        }
    }

    fn assemble(
        &mut self,
        template: &Template,
        plans: &[FieldPlan],
        started: Option<usize>,
    ) -> Node {
        let no_tools = matches!(self.options.tool_choice, ToolChoice::None);
        let implicit = template.implicit();
        // A guarded close keeps its constraint on what follows where the field comes first in
        // the output (before the implicit field's text and the calls), the place thinking
        // takes; elsewhere it is reported and read without its lookahead.
        let guard = self.guard_of(plans, implicit, started, no_tools);
        for (i, plan) in plans.iter().enumerate() {
            if let Close::Guarded { clean, path, .. } = &plan.close {
                if Some(i) == guard {
                    self.guards.push(plan.name.clone());
                } else {
                    self.approximate(
                        path.clone(),
                        "a lookahead (?=...)".into(),
                        format!(
                            "the pattern without it, /{}/ (what must follow is not enforced)",
                            clean.to_regex()
                        ),
                    );
                }
            }
        }
        let first = started.map(|f| self.region_rule(&plans[f], true));
        let skip_first = |i: usize| started == Some(i) && !plans[i].repeats;
        let anchors: Vec<String> = match template.start_anchor() {
            Delimiter::Literal(set) => set.literals.clone(),
            Delimiter::Pattern(_) => Vec::new(),
        };
        let Some(imp) = implicit else {
            // No implicit field: text between regions goes nowhere, so only whitespace (and the
            // start anchor of a following message) may stand there.
            // Whitespace runs and anchors as separate items: one pattern for both would let
            // llguidance's lexer (longest match, no going back) read the `<` of an open as the
            // start of an anchor and refuse the open.
            let mut gap_alts = vec![Node::Regex(Re::Repeat {
                re: Box::new(Re::Class {
                    ranges: vec![(0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)],
                    negated: false,
                }),
                min: 1,
                max: None,
            })];
            gap_alts.extend(anchors.iter().map(|a| Node::Lit(a.clone())));
            let gap = Node::rep(Node::alt(gap_alts), 0, None);
            let mut seq = vec![first.unwrap_or_else(Node::empty), gap.clone()];
            for (i, plan) in plans.iter().enumerate() {
                if skip_first(i) || (plan.tool.is_some() && no_tools) {
                    continue;
                }
                let (min, max) = self.count(plan);
                let region = self.region_rule(plan, false);
                seq.push(repeated(region, &gap, min, max));
                seq.push(gap.clone());
            }
            // The end-of-sequence token may end the output (it goes nowhere either), unless it
            // would open a field.
            let opens: Vec<&String> = plans.iter().flat_map(|p| p.open_excludes.iter()).collect();
            let eos: Vec<Node> = self
                .options
                .eos
                .iter()
                .filter(|e| !e.is_empty() && !opens.iter().any(|o| e.contains(o.as_str())))
                .map(|e| Node::Lit(e.clone()))
                .collect();
            if !eos.is_empty() {
                seq.push(Node::opt(Node::alt(eos)));
            }
            return Node::seq(seq);
        };
        let imp_plan = &plans[imp];
        let mut excludes: Vec<String> = plans
            .iter()
            .flat_map(|p| p.open_excludes.iter().cloned())
            .collect();
        excludes.extend(imp_plan.close_excludes.iter().cloned());
        excludes.sort();
        excludes.dedup();
        let not_start = plans.iter().find_map(|p| match p.open {
            Some(Open::AtStart(c)) => Some(c),
            _ => None,
        });
        let text = Node::TextWithout {
            excludes: excludes.clone(),
            not_start: None,
            not_blank: false,
            not_json: false,
        };
        let end_close = Self::close_node(imp_plan);
        let (end_required, end_optional) = if end_close.is_empty() {
            (Node::empty(), Node::empty())
        } else {
            // The implicit field's close, once or more (a section end before the end of turn).
            let name = self.fresh_rule("turn_end");
            self.taken.insert(name.clone());
            self.rules
                .push((name.clone(), repeated(end_close, &Node::empty(), 1, None)));
            (Node::Ref(name.clone()), Node::opt(Node::Ref(name)))
        };
        let ws = whitespace();
        if imp_plan.repeats {
            // Every stretch of text is kept: text may stand between any two regions.
            let mut seq = vec![first.unwrap_or_else(Node::empty), text.clone()];
            for (i, plan) in plans.iter().enumerate() {
                if i == imp || skip_first(i) || (plan.tool.is_some() && no_tools) {
                    continue;
                }
                let (min, max) = self.count(plan);
                let region = self.region_rule(plan, false);
                seq.push(repeated(region, &text, min, max));
                seq.push(text.clone());
            }
            seq.push(end_optional);
            return Node::seq(seq);
        }
        // The explicit fields that are not tool calls come first, in the template's order.
        let mut pre_items = vec![first.clone().unwrap_or_else(Node::empty)];
        // With a guarded close, the guarded region is left out of the leading regions and
        // written apart: the items before it, the region (ending in its close's core), and
        // where the items after it begin.
        let mut guarded_split: Option<(Vec<Node>, Node, usize)> = None;
        if let (Some(g), Some(f)) = (guard, started)
            && g == f
            && let Some(region) = first.clone()
        {
            pre_items[0] = Node::empty();
            guarded_split = Some((Vec::new(), region, 1));
        }
        let mut at_very_start = first.is_none();
        for (i, plan) in plans.iter().enumerate() {
            if i == imp || skip_first(i) || plan.tool.is_some() {
                continue;
            }
            let (min, max) = self.count(plan);
            // The whitespace before the region is part of its open: as a lexeme of its own it
            // would lose to the text's (llguidance's lexer takes the longest match and does
            // not go back), and `\n<think>` would be refused at `<think>`.
            self.lead_ws.push(plan.name.clone());
            let region = self.region_rule(plan, false);
            if guard == Some(i) {
                guarded_split = Some((pre_items.clone(), region, pre_items.len() + 1));
                pre_items.push(Node::empty());
            } else {
                pre_items.push(repeated(region, &Node::empty(), min, max));
            }
            at_very_start = false;
        }
        pre_items.push(ws.clone());
        // Whether every output has the guarded region (the prompt opened it, or it is not
        // optional).
        let guard_required =
            guard.is_some_and(|g| started == Some(g) || self.count(&plans[g]).0 > 0);
        let pre = Node::seq(pre_items.clone());
        // Text written before anything else: when a field opens only at the very start, the
        // text there must not begin as it does.
        let lead_text = Node::TextWithout {
            excludes,
            not_start: if at_very_start { not_start } else { None },
            not_blank: false,
            not_json: false,
        };
        // Before calls that follow it directly: blank text there is the other layout's (calls,
        // then text), where whitespace may stand between the calls.
        let lead_text_before_calls = match &lead_text {
            Node::TextWithout {
                excludes,
                not_start,
                ..
            } => Node::TextWithout {
                excludes: excludes.clone(),
                not_start: *not_start,
                not_blank: true,
                not_json: false,
            },
            other => other.clone(),
        };
        let tool_plans: Vec<&FieldPlan> = if no_tools {
            Vec::new()
        } else {
            plans
                .iter()
                .enumerate()
                .filter(|(i, p)| p.tool.is_some() && !skip_first(*i) && *i != imp)
                .map(|(_, p)| p)
                .collect()
        };
        let tools_min: u32 = tool_plans
            .iter()
            .map(|p| self.count(p).0)
            .max()
            .unwrap_or(0);
        let tight = tool_plans.iter().any(|p| matches!(p.close, Close::Follow));
        // The calls, at least one (`gap` between them).
        let calls = |c: &mut Self, gap: &Node| -> Node {
            let mut alts = Vec::new();
            for (k, p) in tool_plans.iter().enumerate() {
                let (_, max) = c.count(p);
                let region = c.region_rule(p, false);
                let mut seq = vec![repeated(region, gap, 1, max)];
                // Other tool fields may follow (rare: most templates have one).
                for q in &tool_plans[k + 1..] {
                    let (_, qmax) = c.count(q);
                    let r = c.region_rule(q, false);
                    seq.push(gap.clone());
                    seq.push(repeated(r, gap, 0, qmax));
                }
                alts.push(Node::seq(seq));
            }
            Node::alt(alts)
        };
        let text_then_end = |t: Node| {
            Node::alt(vec![
                Node::seq(vec![t, end_required.clone()]),
                end_optional.clone(),
            ])
        };
        let mut layouts = Vec::new();
        let at_start = tool_plans
            .iter()
            .any(|p| matches!(p.open, Some(Open::AtStart(_))));
        if at_start && !tool_plans.is_empty() {
            // The calls open only at the very start of the output: nothing may come before
            // them, and text at the start must not begin as they do.
            let c = calls(self, &ws);
            layouts.push(Node::seq(vec![
                first.clone().unwrap_or_else(Node::empty),
                c,
                text_then_end(text.clone()),
            ]));
            if tools_min == 0 {
                layouts.push(Node::seq(vec![pre, text_then_end(lead_text)]));
            }
            return Node::alt(layouts);
        }
        if !tool_plans.is_empty() {
            if tight {
                // A close that is only a lookahead: the next thing is another call or the
                // implicit field's close, never text.
                let c = calls(self, &Node::empty());
                layouts.push(Node::seq(vec![
                    pre.clone(),
                    lead_text.clone(),
                    c,
                    end_required.clone(),
                ]));
            } else {
                let c = calls(self, &Node::empty());
                layouts.push(Node::seq(vec![
                    pre.clone(),
                    lead_text_before_calls,
                    c,
                    end_optional.clone(),
                ]));
                // The whitespace between calls belongs to the next call's open (as for the
                // leading regions: a lexeme of its own would lose to the text's).
                for p in &tool_plans {
                    if !matches!(p.open, Some(Open::AtStart(_))) {
                        self.lead_ws.push(p.name.clone());
                    }
                }
                let c = calls(self, &Node::empty());
                layouts.push(Node::seq(vec![pre.clone(), c, text_then_end(text.clone())]));
                self.lead_ws
                    .retain(|n| !tool_plans.iter().any(|p| &p.name == n));
            }
        }
        if tool_plans.is_empty() || tools_min == 0 {
            layouts.push(Node::seq(vec![pre.clone(), text_then_end(lead_text)]));
        }
        let Some((head, then, after)) = guarded_split else {
            return Node::alt(layouts);
        };
        // The guarded region closed by its lookahead: what follows it (the rest of the leading
        // regions, then each layout's tail) must begin as the lookahead says, and something
        // must follow.
        let tails: Vec<Node> = layouts
            .iter()
            .map(|l| match l {
                Node::Seq(items) => Node::seq(items[pre_len(items, &pre)..].to_vec()),
                other => other.clone(),
            })
            .collect();
        let Close::Guarded {
            trail,
            free,
            starts,
            ..
        } = &plans[guard.unwrap_or(0)].close
        else {
            return Node::alt(layouts);
        };
        let rest = Node::seq(
            pre_items[after..]
                .iter()
                .cloned()
                .chain([Node::alt(tails)])
                .collect(),
        );
        // After the close's core: its consuming alternatives, then anything the layouts allow;
        // or its trailing repeat, then only what begins as the lookahead says. (The trailing
        // repeat takes none of what the lookahead lets begin, so it is greedy either way.)
        let trail_node = trail.clone().map(Node::Regex).unwrap_or_else(Node::empty);
        let mut after_close = Vec::new();
        if let Some(free) = free {
            let consumed = match trail {
                Some(t) => Re::Seq(vec![t.clone(), free.clone()]),
                None => free.clone(),
            };
            after_close.push(Node::seq(vec![
                regex_node(re::simplify(consumed)),
                rest.clone(),
            ]));
        }
        let ahead = follow::Restricted::new(&self.rules).node(&rest, starts);
        after_close.push(Node::seq(vec![trail_node, ahead]));
        let guarded = Node::seq(
            head.into_iter()
                .chain([then, Node::alt(after_close)])
                .collect(),
        );
        if guard_required {
            guarded
        } else {
            Node::alt(layouts.into_iter().chain([guarded]).collect())
        }
    }

    /// The field whose guarded close keeps its constraint on what follows, if one can: a
    /// single region (not repeating, not tool calls) placed before the implicit field's text,
    /// which does not repeat either.
    fn guard_of(
        &self,
        plans: &[FieldPlan],
        implicit: Option<usize>,
        started: Option<usize>,
        no_tools: bool,
    ) -> Option<usize> {
        let imp = implicit?;
        if plans[imp].repeats {
            return None;
        }
        let at_start = !no_tools
            && plans
                .iter()
                .any(|p| p.tool.is_some() && matches!(p.open, Some(Open::AtStart(_))));
        if at_start {
            return None;
        }
        let guarded: Vec<usize> = (0..plans.len())
            .filter(|&i| matches!(plans[i].close, Close::Guarded { .. }))
            .collect();
        match guarded.as_slice() {
            [g] if *g != imp
                && plans[*g].tool.is_none()
                && !plans[*g].repeats
                && started.is_none_or(|f| f == *g || plans[f].tool.is_none()) =>
            {
                Some(*g)
            }
            _ => None,
        }
    }
}

/// How many items of a layout's sequence are the leading regions' (`pre`).
fn pre_len(items: &[Node], pre: &Node) -> usize {
    match pre {
        Node::Seq(p) if items.len() >= p.len() && items[..p.len()] == p[..] => p.len(),
        p if items.first() == Some(p) => 1,
        _ => 0,
    }
}

/// A guarded close read apart: its consuming alternatives, core, trailing repeat and the ways
/// its lookahead lets the next text begin (see [`Close::Guarded`]).
type Guard = (Option<Re>, Re, Option<Re>, Vec<follow::Start>);

/// A close pattern `P(?:A|(?=L))` or `P(?=L)` read as its common part `P`, its consuming
/// alternatives `A`, and the ways `L` lets the next text begin; `None` for any other shape,
/// or when `P`'s trailing repeat could take what `L` begins with (then where the close ends
/// depends on backtracking).
fn guarded(re: &Re) -> Option<Guard> {
    let Re::Seq(items) = re else {
        return None;
    };
    let (last, head) = items.split_last()?;
    let last = match last {
        Re::Group { re, .. } => re.as_ref(),
        other => other,
    };
    let unwrap = |r: &Re| -> Option<Re> {
        match r {
            Re::Look {
                behind: false,
                positive: true,
                re,
            } => Some((**re).clone()),
            _ => None,
        }
    };
    let (alts, look) = match last {
        Re::Alt(items) => {
            let looks: Vec<Re> = items.iter().filter_map(unwrap).collect();
            let rest: Vec<Re> = items
                .iter()
                .filter(|r| unwrap(r).is_none())
                .cloned()
                .collect();
            match looks.as_slice() {
                [one] => (rest, one.clone()),
                _ => return None,
            }
        }
        other => (Vec::new(), unwrap(other)?),
    };
    if alts.iter().any(|a| a.has_zero_width() || a.nullable()) {
        return None;
    }
    let starts = follow::starts_of(&look)?;
    // The core, and the repeat it ends in (`\s*`), if any.
    let (core, trail) = match head.split_last() {
        Some((last @ Re::Repeat { min: 0, .. }, before)) => {
            (re::simplify(Re::Seq(before.to_vec())), Some(last.clone()))
        }
        _ => (re::simplify(Re::Seq(head.to_vec())), None),
    };
    if core.has_zero_width() || core.nullable() || trail.as_ref().is_some_and(Re::has_zero_width) {
        return None;
    }
    if let Some(Re::Repeat { re: inner, .. }) = head.last() {
        let taken = follow::ranges_of(inner)?;
        for st in &starts {
            let first = match st {
                follow::Start::Class(r) => r.clone(),
                follow::Start::Lit(l) => {
                    let c = l.chars().next()? as u32;
                    vec![(c, c)]
                }
            };
            if first
                .iter()
                .any(|&(a, b)| taken.iter().any(|&(c, d)| a <= d && c <= b))
            {
                return None;
            }
        }
    }
    let free = (!alts.is_empty()).then(|| re::simplify(Re::Alt(alts)));
    Some((free, core, trail, starts))
}

/// A node of literals and patterns as one pattern.
fn as_re(node: &Node) -> Option<Re> {
    match node {
        Node::Lit(s) if !s.is_empty() => Some(Re::Lit(s.clone())),
        Node::Regex(re) => Some(re.clone()),
        Node::Alt(items) if !items.is_empty() => items
            .iter()
            .map(as_re)
            .collect::<Option<Vec<_>>>()
            .map(Re::Alt),
        _ => None,
    }
}

/// The open pattern with the tool's name in place of its name capture. A greedy capture
/// (`[^\s<]+`) followed by an optional run (`[^<]*`) would take the run's first characters
/// too when they fit the capture, reading a longer name: the run then must not begin with a
/// character the capture takes.
fn name_in_capture(re: &Re, capture: &str, name: &str) -> Re {
    let lit = Re::Lit(name.to_string());
    let Re::Seq(items) = re else {
        return re.substitute(capture, &lit);
    };
    let at = items
        .iter()
        .position(|r| matches!(r, Re::Group { name: Some(n), .. } if n == capture));
    let Some(at) = at else {
        return re.substitute(capture, &lit);
    };
    let mut out = items.clone();
    let taken = match re.group(capture) {
        Some(Re::Repeat {
            re: inner,
            min: 1..,
            max: None,
        }) => crate::follow::ranges_of(inner),
        _ => None,
    };
    if let (
        Some(taken),
        Some(Re::Repeat {
            re: next,
            min: 0,
            max: None,
        }),
    ) = (taken, items.get(at + 1))
        && let Some(next_ranges) = crate::follow::ranges_of(next)
    {
        let first = re::normalize(
            next_ranges
                .iter()
                .flat_map(|&(a, b)| subtract((a, b), &taken))
                .collect(),
        );
        out[at + 1] = Re::Repeat {
            re: Box::new(Re::Seq(vec![
                Re::Class {
                    ranges: first,
                    negated: false,
                },
                Re::Repeat {
                    re: next.clone(),
                    min: 0,
                    max: None,
                },
            ])),
            min: 0,
            max: Some(1),
        };
    }
    out[at] = lit;
    Re::Seq(out)
}

/// `range` without the characters of `minus` (sorted, disjoint).
fn subtract(range: (u32, u32), minus: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut start = range.0;
    for &(a, b) in minus {
        if b < start || a > range.1 {
            continue;
        }
        if a > start {
            out.push((start, a - 1));
        }
        start = start.max(b.saturating_add(1));
        if start > range.1 {
            return out;
        }
    }
    if start <= range.1 {
        out.push((start, range.1));
    }
    out
}

/// `node` repeated `min..=max` times with `gap` between repetitions.
pub(crate) fn repeated(node: Node, gap: &Node, min: u32, max: Option<u32>) -> Node {
    if max == Some(0) {
        return Node::empty();
    }
    let more = Node::rep(
        Node::seq(vec![gap.clone(), node.clone()]),
        min.saturating_sub(1),
        max.map(|m| m.saturating_sub(1)),
    );
    let some = Node::seq(vec![node, more]);
    if min == 0 { Node::opt(some) } else { some }
}

/// A rule name from a field name (letters, digits and `_`).
pub(crate) fn rule_name(field: &str) -> String {
    let mut s: String = field
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.insert_str(0, "f_");
    }
    s
}

/// The line and column of the node at `path` (its nearest existing ancestor), or (0, 0).
fn locate(source: &TemplateSource, path: &[PathSeg]) -> (usize, usize) {
    let mut p: &[PathSeg] = path;
    loop {
        if let Some(node) = source.node(p) {
            return source.line_col(node.value.start);
        }
        match p.split_last() {
            Some((_, parent)) => p = parent,
            None => return (0, 0),
        }
    }
}
