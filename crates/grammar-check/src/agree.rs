//! The agreement check: the grammar and the parser, compared on sample generations and on
//! random walks through the grammar.
//!
//! - A sample generation that the parser reads clean (no error, no silent loss) must be
//!   accepted by the grammar; otherwise the grammar forbids what the model may write.
//! - A walk through the grammar must parse clean, and every tool call it yields must be valid
//!   against its tool's schema; otherwise the grammar allows what the parser mis-reads.
//!
//! Each disagreement is shrunk to a short text that still shows it.

use rtbench_engine::Template;
use rtbench_engine::audit::audit;
use rtbench_engine::value::{Dict, Value};

use crate::matcher::{Acceptance, Grammar};
use crate::schema::validate;
use crate::shrink::shrink;
use crate::walk::{WalkOptions, walk};

/// A generation to check, with the prompt before it.
#[derive(Clone, Debug)]
pub struct Case {
    /// What the case is reported as (a sample's file name).
    pub name: String,
    /// The prompt the generation follows (the parser's prefix).
    pub prefix: String,
    /// The model's output: what the grammar describes.
    pub generation: String,
    /// The tools given to the parser, if any.
    pub tools: Option<Value>,
}

/// How the check runs.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// How many random walks.
    pub walks: usize,
    /// How each walk is taken.
    pub walk: WalkOptions,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            walks: 500,
            walk: WalkOptions::default(),
        }
    }
}

/// What the parser makes of a text.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// A message, with nothing lost and every tool call valid.
    Clean,
    /// The parser's error (type and message).
    Error(String),
    /// A silent loss the audit reports (its message).
    Loss(String),
    /// A tool call that is not valid against its tool's schema.
    Schema(String),
}

impl Verdict {
    fn same_kind(&self, other: &Verdict) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// The verdict in a few words, for a report line.
    pub fn describe(&self) -> String {
        match self {
            Verdict::Clean => "parses clean".to_string(),
            Verdict::Error(e) => format!("the parser fails: {e}"),
            Verdict::Loss(l) => format!("the parser loses text: {l}"),
            Verdict::Schema(s) => format!("a tool call is not valid: {s}"),
        }
    }
}

/// Which way the grammar and the parser disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The grammar accepts a text the parser errors on, loses text of, or turns into an
    /// invalid tool call.
    GrammarAcceptsParserMisreads,
    /// The parser reads a text clean that the grammar refuses.
    ParserAcceptsGrammarRejects,
}

/// One disagreement, shrunk.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// Which way.
    pub direction: Direction,
    /// Where it was found: a sample's name, or `walk N (seed S)`.
    pub origin: String,
    /// The generation it was found on (before shrinking).
    pub original: String,
    /// The shortest text found that still shows it.
    pub shrunk: String,
    /// The parser's verdict on the shrunk text.
    pub verdict: Verdict,
    /// The grammar's answer on the shrunk text.
    pub acceptance: Acceptance,
    /// The grammar's answer on the original text.
    pub original_acceptance: Acceptance,
}

/// The outcome of a check.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Samples the parser reads clean, all of which the grammar must accept.
    pub samples_clean: usize,
    /// Of those, how many the grammar accepts.
    pub samples_accepted: usize,
    /// Samples left out, each with why (the parser's verdict on it).
    pub samples_skipped: Vec<(String, Verdict)>,
    /// Walks that finished.
    pub walks: usize,
    /// Walks abandoned (too long, or a dead end).
    pub walks_abandoned: usize,
    /// Finished walks that parse clean.
    pub walks_clean: usize,
    /// Tool calls the walks yielded, each checked against its tool's schema.
    pub tool_calls_checked: usize,
    /// Every disagreement found, samples first.
    pub disagreements: Vec<Disagreement>,
}

impl Report {
    /// Whether the grammar and the parser agree on everything tried.
    pub fn agrees(&self) -> bool {
        self.disagreements.is_empty()
    }
}

/// Tools' parameter schemas, by tool name.
struct Schemas {
    tools: Vec<(String, serde_json::Value)>,
}

impl Schemas {
    fn of(tools: Option<&Value>) -> Schemas {
        let mut out = Vec::new();
        for tool in tools.and_then(Value::as_list).unwrap_or(&[]) {
            let Some(f) = tool
                .as_dict()
                .and_then(|d| d.get("function").and_then(Value::as_dict).or(Some(d)))
            else {
                continue;
            };
            let (Some(name), Some(params)) =
                (f.get("name").and_then(Value::as_str), f.get("parameters"))
            else {
                continue;
            };
            if let Ok(schema) = serde_json::Value::try_from(params) {
                out.push((name.to_string(), schema));
            }
        }
        Schemas { tools: out }
    }

    /// Checks every tool call of a message; the count checked, or what is wrong.
    fn validate(&self, message: &Dict) -> Result<usize, String> {
        if self.tools.is_empty() {
            return Ok(0);
        }
        let Some(calls) = message.get("tool_calls").and_then(Value::as_list) else {
            return Ok(0);
        };
        for (i, call) in calls.iter().enumerate() {
            let function = call
                .as_dict()
                .and_then(|d| d.get("function").and_then(Value::as_dict).or(Some(d)))
                .ok_or_else(|| format!("tool call {i} is not a dict"))?;
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("tool call {i} has no name"))?;
            let (_, schema) = self
                .tools
                .iter()
                .find(|t| t.0 == name)
                .ok_or_else(|| format!("tool call {i} names an unknown tool {name:?}"))?;
            let arguments = match function.get("arguments") {
                // Arguments kept as a JSON string are checked as the JSON they hold.
                Some(Value::Str(s)) => rtbench_engine::py::json_loads(s)
                    .map_err(|e| format!("tool call {i} ({name}): arguments are not JSON: {e}"))?,
                Some(v) => v.clone(),
                None => Value::Dict(Dict::new()),
            };
            validate(&arguments, schema).map_err(|e| format!("tool call {i} ({name}): {e}"))?;
        }
        Ok(calls.len())
    }
}

/// What the parser makes of `generation` after `prefix`: clean, or what goes wrong first.
pub fn verdict(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
) -> Verdict {
    verdict_with(template, prefix, generation, tools, &Schemas::of(tools)).0
}

fn verdict_with(
    template: &Template,
    prefix: &str,
    generation: &str,
    tools: Option<&Value>,
    schemas: &Schemas,
) -> (Verdict, usize) {
    let a = audit(template, prefix, generation, tools);
    let message = match &a.result {
        Ok(m) => m,
        Err(e) => return (Verdict::Error(e.to_string()), 0),
    };
    if let Some(loss) = a.losses.first() {
        return (Verdict::Loss(loss.message.clone()), 0);
    }
    match schemas.validate(message) {
        Ok(n) => (Verdict::Clean, n),
        Err(e) => (Verdict::Schema(e), 0),
    }
}

/// Checks `grammar` against the parser of `template`: every case, then `opts.walks` random
/// walks parsed after `walk_prefix` with `walk_tools`. `literals` are the strings walks write
/// whole (see [`crate::lark_literals`]).
pub fn check(
    template: &Template,
    grammar: &Grammar,
    literals: &[String],
    cases: &[Case],
    walk_prefix: &str,
    walk_tools: Option<&Value>,
    opts: &CheckOptions,
) -> Report {
    let mut report = Report::default();
    for case in cases {
        let schemas = Schemas::of(case.tools.as_ref());
        let tools = case.tools.as_ref();
        let (v, _) = verdict_with(template, &case.prefix, &case.generation, tools, &schemas);
        if v != Verdict::Clean {
            report.samples_skipped.push((case.name.clone(), v));
            continue;
        }
        report.samples_clean += 1;
        let original_acceptance = grammar.accepts(&case.generation);
        if original_acceptance == Acceptance::Accepted {
            report.samples_accepted += 1;
            continue;
        }
        // The shrunk text keeps the refusal where it was: refused at the same character, after
        // the same character (else shrinking drifts to another, unrelated refusal).
        let around = |s: &str, a: Acceptance| match a {
            Acceptance::StopsAt(p) => (
                s.get(..p).and_then(|h| h.chars().next_back()),
                s.get(p..).and_then(|t| t.chars().next()),
            ),
            _ => (None, None),
        };
        let original_around = around(&case.generation, original_acceptance);
        let refused = |s: &str| {
            let a = grammar.accepts(s);
            std::mem::discriminant(&a) == std::mem::discriminant(&original_acceptance)
                && around(s, a) == original_around
                && verdict_with(template, &case.prefix, s, tools, &schemas).0 == Verdict::Clean
        };
        let shrunk = shrink(&case.generation, refused);
        report.disagreements.push(Disagreement {
            direction: Direction::ParserAcceptsGrammarRejects,
            origin: case.name.clone(),
            original: case.generation.clone(),
            acceptance: grammar.accepts(&shrunk),
            verdict: Verdict::Clean,
            shrunk,
            original_acceptance,
        });
    }
    let schemas = Schemas::of(walk_tools);
    for i in 0..opts.walks as u64 {
        let Some(text) = walk(grammar, literals, i, &opts.walk) else {
            report.walks_abandoned += 1;
            continue;
        };
        report.walks += 1;
        let (v, calls) = verdict_with(template, walk_prefix, &text, walk_tools, &schemas);
        report.tool_calls_checked += calls;
        if v == Verdict::Clean {
            report.walks_clean += 1;
            continue;
        }
        let misread = |s: &str| {
            grammar.accepts(s) == Acceptance::Accepted
                && verdict_with(template, walk_prefix, s, walk_tools, &schemas)
                    .0
                    .same_kind(&v)
        };
        let shrunk = shrink(&text, misread);
        let verdict = verdict_with(template, walk_prefix, &shrunk, walk_tools, &schemas).0;
        report.disagreements.push(Disagreement {
            direction: Direction::GrammarAcceptsParserMisreads,
            origin: format!("walk {i} (seed {})", opts.walk.seed.wrapping_add(i)),
            original: text,
            shrunk,
            verdict,
            acceptance: Acceptance::Accepted,
            original_acceptance: Acceptance::Accepted,
        });
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHATML: &str = r#"{
      "start_anchor": "<|im_start|>assistant\n",
      "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {"close": "<|im_end|>"}
      }
    }"#;

    /// The answer is one lazy lexeme: free text up to its close, without the open delimiter of
    /// thinking (which would cut the answer in the parser).
    const ANSWER_AFTER_OPTIONAL_THINK: &str = "start: (\"<think>\" think)? answer\n\
        think[lazy]: /(?s:.*)<\\/think>/\n\
        answer[lazy]: ANSWER\n\
        ANSWER: /(?s:.*)<\\|im_end\\|>/ & ~/(?s:.*)<think>(?s:.*)/\n";

    #[test]
    fn free_text_that_may_hold_another_fields_open_delimiter_is_caught() {
        // Without the exclusion the answer may write `<think>`, which the parser takes as
        // thinking's open delimiter.
        let t = Template::from_json_str(CHATML).unwrap();
        let lark = "start: (\"<think>\" think)? answer\nthink[lazy]: /(?s:.*)<\\/think>/\nanswer[lazy]: /(?s:.*)<\\|im_end\\|>/\n";
        let g = Grammar::from_lark(lark).unwrap();
        let lits = crate::lark_literals(lark);
        let opts = CheckOptions {
            walks: 100,
            ..Default::default()
        };
        let r = check(&t, &g, &lits, &[], "<|im_start|>assistant\n", None, &opts);
        let d = r.disagreements.first().expect("a disagreement");
        assert_eq!(d.shrunk, "<think><|im_end|>", "{d:?}");
        assert!(matches!(d.verdict, Verdict::Loss(_)), "{d:?}");
    }

    fn cases(gens: &[&str]) -> Vec<Case> {
        gens.iter()
            .enumerate()
            .map(|(i, g)| Case {
                name: format!("s{i}"),
                prefix: "<|im_start|>assistant\n".into(),
                generation: g.to_string(),
                tools: None,
            })
            .collect()
    }

    #[test]
    fn a_grammar_that_allows_nothing_after_the_end_agrees_with_the_parser() {
        let t = Template::from_json_str(CHATML).unwrap();
        let lark = ANSWER_AFTER_OPTIONAL_THINK;
        let g = Grammar::from_lark(lark).unwrap();
        let lits = crate::lark_literals(lark);
        let opts = CheckOptions {
            walks: 60,
            ..Default::default()
        };
        let r = check(
            &t,
            &g,
            &lits,
            &cases(&["<think>Hm.</think>Hi!<|im_end|>"]),
            "<|im_start|>assistant\n",
            None,
            &opts,
        );
        assert_eq!((r.samples_clean, r.samples_accepted), (1, 1));
        assert!(r.walks >= 40, "{r:?}");
        assert!(r.agrees(), "{:#?}", r.disagreements);
    }

    #[test]
    fn a_grammar_that_allows_a_second_think_block_is_caught_and_shrunk() {
        // Thinking may repeat in this grammar, but the parser's second block overwrites the
        // first (a silent loss).
        let t = Template::from_json_str(CHATML).unwrap();
        let lark = ANSWER_AFTER_OPTIONAL_THINK.replace(")?", ")*");
        let lark = lark.as_str();
        let g = Grammar::from_lark(lark).unwrap();
        let lits = crate::lark_literals(lark);
        let opts = CheckOptions {
            walks: 200,
            ..Default::default()
        };
        let r = check(&t, &g, &lits, &[], "<|im_start|>assistant\n", None, &opts);
        let d = r.disagreements.first().expect("a disagreement");
        assert_eq!(d.direction, Direction::GrammarAcceptsParserMisreads);
        assert!(matches!(d.verdict, Verdict::Loss(_)), "{d:?}");
        assert!(
            d.shrunk.matches("<think>").count() == 2 && d.shrunk.len() < d.original.len().max(40),
            "{d:?}"
        );
    }

    #[test]
    fn a_grammar_that_refuses_a_clean_sample_is_caught_and_shrunk() {
        // This grammar insists on a think block; the parser reads an answer alone clean.
        let t = Template::from_json_str(CHATML).unwrap();
        let lark = "start: \"<think>\" think answer\nthink[lazy]: /(?s:.*)<\\/think>/\nanswer[lazy]: /(?s:.*)<\\|im_end\\|>/\n";
        let g = Grammar::from_lark(lark).unwrap();
        let r = check(
            &t,
            &g,
            &[],
            &cases(&["Just an answer.<|im_end|>"]),
            "",
            None,
            &CheckOptions {
                walks: 0,
                ..Default::default()
            },
        );
        let d = &r.disagreements[0];
        assert_eq!(d.direction, Direction::ParserAcceptsGrammarRejects);
        assert_eq!(d.original_acceptance, Acceptance::StopsAt(0));
        // The shortest answer the parser reads clean that the grammar refuses at the same
        // character, its first.
        assert_eq!(d.shrunk, "J<|im_end|>");
    }
}
