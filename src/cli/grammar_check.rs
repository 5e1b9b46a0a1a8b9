//! `rtbench grammar --check`: whether the grammar compiled from the template and the
//! template's parser agree, checked in-process with llguidance (the grammar engine serving
//! stacks constrain decoding with; see `rtbench_grammar_check`).
//!
//! - Samples (the paths given, else the template folder's): each one the parser reads clean
//!   (no error, no silent loss) must be accepted by the grammar compiled for its tools and its
//!   prompt (a prompt that opens thinking starts the grammar inside it).
//! - Random walks through the grammar (`--walks`, seeded by `--seed`) must parse clean after
//!   the walks' prompt, and every tool call they yield must be valid against its tool's schema.
//!   The walks use `--tools` (else the first sample's tools) and `--prefix` (else the first
//!   sample's prompt, else the template's literal start anchor).
//! - When the template's folder has a `tokenizer.json`, the check runs over the model's own
//!   tokens: delimiters that are special tokens are written in llguidance's `<|...|>` token
//!   syntax and must be emitted as those tokens.
//!
//! Each disagreement is printed with the shortest text found that still shows it. Exit codes:
//! 0 when they agree; 1 on a disagreement, an invalid template or a sample that cannot be read;
//! 2 for usage errors (no prompt to walk from).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cli::{Failure, output};
use rtbench_engine::Template;
use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::Value;
use rtbench_grammar::{LarkOptions, Options};
use rtbench_grammar_check::{
    Acceptance, Case, CheckOptions, Direction, Disagreement, Grammar, Report, Verdict, Vocabulary,
    WalkOptions, lark_delimiters, lark_literals,
};
use rtbench_tooling::inputs::{Overrides, model_dir, prepare_sample};
use rtbench_tooling::model::Model;
use rtbench_tooling::place::Places;
use rtbench_tooling::sample::{self, Sample, expand};

/// What `--check` needs besides the grammar's options.
pub(super) struct CheckArgs<'a> {
    pub template_path: &'a Path,
    pub template: &'a Template,
    pub source: &'a TemplateSource,
    /// The grammar's options from the command line (`tools` and `prefix` are `None` when not
    /// given: each sample's own are used).
    pub options: Options,
    pub samples: &'a [PathBuf],
    pub walks: usize,
    pub seed: u64,
}

/// A sample ready to check.
struct Ready {
    name: String,
    sample: Sample,
    places: Places,
}

/// The model's tokens, its special tokens (spelling and id), and how many tokens there are.
type ModelVocabulary = (Vocabulary, BTreeMap<String, u32>, usize);

/// Grammars built so far, by tools and prompt, with the literals and delimiters walks write
/// whole (see [`lark_literals`], [`lark_delimiters`]).
type GrammarCache = BTreeMap<(String, String), std::rc::Rc<WalkedGrammar>>;

/// A compiled grammar with its literals and delimiters.
type WalkedGrammar = (Grammar, Vec<String>, Vec<String>);

/// The model's vocabulary, and which spellings are its special tokens.
fn vocabulary(model: &Model) -> Result<Option<ModelVocabulary>, Failure> {
    let Some(tokenizer) = model.tokenizer() else {
        return Ok(None);
    };
    let path = model.dir.join("tokenizer.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::invalid(format!("{}: {e}", path.display())))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::invalid(format!("{}: {e}", path.display())))?;
    let Vocabulary::Model(mut words) = Vocabulary::from_tokenizer_json(&json)
        .map_err(|e| Failure::invalid(format!("{}: {e}", path.display())))?
    else {
        return Ok(None);
    };
    // Special as the tokenizer decides it (tokens the folder's config names are special too).
    let mut specials = BTreeMap::new();
    for t in tokenizer.added_tokens() {
        let Ok(id) = usize::try_from(t.id) else {
            continue;
        };
        if id >= words.len() {
            words.resize(id + 1, Vec::new());
        }
        let mut bytes = t.content.as_bytes().to_vec();
        if t.special {
            bytes.insert(0, 0xff);
            specials.insert(t.content.clone(), t.id);
        }
        words[id] = bytes;
    }
    let n = words.len();
    Ok(Some((Vocabulary::Model(words), specials, n)))
}

/// The samples to check: the paths given (folders expanded), else the template folder's.
fn sample_paths(args: &CheckArgs) -> Result<Vec<PathBuf>, Failure> {
    let roots: Vec<PathBuf> = if args.samples.is_empty() {
        vec![model_dir(args.template_path)]
    } else {
        args.samples.to_vec()
    };
    let mut out = Vec::new();
    for r in roots {
        let files = expand(&r).map_err(|e| Failure::invalid(format!("{}: {e}", r.display())))?;
        out.extend(files.into_iter().filter(|f| {
            f.extension().is_some_and(|e| e == sample::EXTENSION) || !args.samples.is_empty()
        }));
    }
    Ok(out)
}

fn read_samples(args: &CheckArgs, model: &Model) -> Result<Vec<Ready>, Failure> {
    let mut out = Vec::new();
    for path in sample_paths(args)? {
        let name = path.display().to_string();
        let text = crate::cli::inputs::text_file(&path, "sample file")?;
        let s =
            sample::sample_of_text(&path, &text).map_err(|e| Failure::invalid(e.to_string()))?;
        let s = prepare_sample(&s, &Overrides::default(), Some(model))
            .map_err(|e| Failure::invalid(format!("{name}: {e}")))?;
        out.push(Ready {
            places: Places::of_sample(&s, &name),
            name,
            sample: s,
        });
    }
    Ok(out)
}

fn json_tools(tools: Option<&Value>) -> Option<Vec<serde_json::Value>> {
    match tools.map(serde_json::Value::try_from) {
        Some(Ok(serde_json::Value::Array(list))) => Some(list),
        _ => None,
    }
}

fn engine_tools(tools: Option<&[serde_json::Value]>) -> Option<Value> {
    tools.and_then(|t| Value::try_from(&serde_json::Value::Array(t.to_vec())).ok())
}

/// Grammars compiled once per (tools, prompt) and shared by the samples that have them.
struct Grammars<'a> {
    args: &'a CheckArgs<'a>,
    vocabulary: Vocabulary,
    lark: LarkOptions,
    cache: GrammarCache,
}

impl Grammars<'_> {
    fn get(
        &mut self,
        tools: Option<Vec<serde_json::Value>>,
        prefix: Option<String>,
    ) -> Result<std::rc::Rc<WalkedGrammar>, Failure> {
        let key = (
            serde_json::to_string(&tools).unwrap_or_default(),
            prefix.clone().unwrap_or_default(),
        );
        if let Some(g) = self.cache.get(&key) {
            return Ok(g.clone());
        }
        let options = Options {
            tools,
            prefix,
            ..self.args.options.clone()
        };
        let compiled = rtbench_grammar::compile(self.args.source, &options)
            .map_err(|e| Failure::invalid(e.to_string()))?;
        let lark = compiled.to_lark(&self.lark);
        let grammar = Grammar::new(&lark, &self.vocabulary).map_err(|e| {
            Failure::invalid(format!(
                "{}: llguidance refuses the grammar compiled from it: {e}",
                self.args.source.name
            ))
        })?;
        let g = std::rc::Rc::new((grammar, lark_literals(&lark), lark_delimiters(&lark)));
        self.cache.insert(key, g.clone());
        Ok(g)
    }
}

/// Runs the check and prints its report; see the module docs.
pub(super) fn run(args: &CheckArgs) -> Result<(), Failure> {
    let dir = model_dir(args.template_path);
    let model = Model::open(&dir);
    let (vocabulary, specials, header) = match vocabulary(&model)? {
        Some((v, s, n)) => (
            v,
            s,
            format!(
                "over the model's {n} tokens ({})",
                dir.join("tokenizer.json").display()
            ),
        ),
        None => (Vocabulary::Bytes, BTreeMap::new(), "over bytes".to_string()),
    };
    let samples = read_samples(args, &model)?;
    let mut grammars = Grammars {
        args,
        vocabulary,
        lark: LarkOptions {
            special_tokens: specials,
        },
        cache: BTreeMap::new(),
    };
    let mut out = String::new();
    let _ = writeln!(out, "grammar check of {}: lark, {header}", args.source.name);
    // Samples: each against the grammar for its own tools and prompt.
    let mut report = Report::default();
    let mut first: Option<&Ready> = None;
    for r in &samples {
        let tools = args
            .options
            .tools
            .clone()
            .or_else(|| json_tools(r.sample.tools.as_ref()));
        let prefix = args
            .options
            .prefix
            .clone()
            .or_else(|| r.sample.prefix.clone());
        let g = grammars.get(tools.clone(), prefix.clone())?;
        let case = Case {
            name: r.name.clone(),
            prefix: prefix.unwrap_or_default(),
            generation: r.sample.generation.to_string(),
            tools: engine_tools(tools.as_deref()),
        };
        let one = rtbench_grammar_check::check(
            args.template,
            &g.0,
            &g.1,
            std::slice::from_ref(&case),
            "",
            None,
            &CheckOptions {
                walks: 0,
                walk: WalkOptions::default(),
            },
        );
        if one.samples_clean == 1
            && first.is_none_or(|f| f.sample.tools.is_none() && r.sample.tools.is_some())
        {
            first = Some(r);
        }
        report.samples_clean += one.samples_clean;
        report.samples_accepted += one.samples_accepted;
        report.samples_skipped.extend(one.samples_skipped);
        report.disagreements.extend(one.disagreements);
    }
    // Walks: after one prompt, with one set of tools.
    let walk_tools = args
        .options
        .tools
        .clone()
        .or_else(|| first.and_then(|f| json_tools(f.sample.tools.as_ref())));
    let walk_prefix = match (&args.options.prefix, first) {
        (Some(p), _) => p.clone(),
        (None, Some(f)) => f.sample.prefix.clone().unwrap_or_default(),
        (None, None) => match args.template.start_anchor() {
            Delimiter::Literal(set) if !set.literals.is_empty() => set.literals[0].clone(),
            _ if args.walks == 0 => String::new(),
            _ => {
                return Err(Failure::usage(format!(
                    "{}: no sample to take the walks' prompt from, and the start anchor is a \
                     pattern: give the prompt with --prefix",
                    args.source.name
                )));
            }
        },
    };
    let g = grammars.get(walk_tools.clone(), Some(walk_prefix.clone()))?;
    let walked = rtbench_grammar_check::check(
        args.template,
        &g.0,
        &g.1,
        &[],
        &walk_prefix,
        engine_tools(walk_tools.as_deref()).as_ref(),
        &CheckOptions {
            walks: args.walks,
            walk: WalkOptions {
                seed: args.seed,
                delimiters: g.2.clone(),
                ..WalkOptions::default()
            },
        },
    );
    report.walks = walked.walks;
    report.walks_abandoned = walked.walks_abandoned;
    report.walks_clean = walked.walks_clean;
    report.tool_calls_checked = walked.tool_calls_checked;
    report.disagreements.extend(walked.disagreements);

    let _ = writeln!(
        out,
        "samples: {} read clean by the parser, {} accepted by the grammar",
        report.samples_clean, report.samples_accepted
    );
    for (name, v) in &report.samples_skipped {
        let _ = writeln!(out, "  left out {name}: {}", v.describe());
    }
    let source = match (&args.options.tools, first) {
        (Some(_), _) => "the tools given".to_string(),
        (None, Some(f)) if f.sample.tools.is_some() => format!("the tools of {}", f.name),
        _ => "no tools".to_string(),
    };
    let _ = writeln!(
        out,
        "walks: {} of {} finished (seed {}, {source}), {} parse clean, {} tool calls valid against their schemas{}",
        report.walks,
        args.walks,
        args.seed,
        report.walks_clean,
        report.tool_calls_checked,
        if report.walks_abandoned > 0 {
            format!("; {} abandoned (too long)", report.walks_abandoned)
        } else {
            String::new()
        }
    );
    for (i, d) in report.disagreements.iter().enumerate() {
        describe(&mut out, i + 1, d, &samples);
    }
    if report.agrees() {
        let _ = writeln!(out, "the grammar and the parser agree");
        output::print_line(out.trim_end())
    } else {
        output::print_line(out.trim_end())?;
        Err(Failure::invalid(format!(
            "the grammar and the parser disagree: {} disagreement(s)",
            report.disagreements.len()
        )))
    }
}

fn describe(out: &mut String, n: usize, d: &Disagreement, samples: &[Ready]) {
    match d.direction {
        Direction::GrammarAcceptsParserMisreads => {
            let _ = writeln!(
                out,
                "disagreement {n}: the grammar accepts what the parser mis-reads ({})",
                d.origin
            );
            let _ = writeln!(out, "  shortest: {}", quote(&d.shrunk));
            let _ = writeln!(out, "  {}", d.verdict.describe());
        }
        Direction::ParserAcceptsGrammarRejects => {
            let at = samples.iter().find(|r| r.name == d.origin).map(|r| {
                let prefix = r.sample.prefix.clone().unwrap_or_default();
                let document = format!("{prefix}{}", r.sample.generation);
                let byte = match d.original_acceptance {
                    Acceptance::StopsAt(b) => b,
                    _ => r.sample.generation.len(),
                };
                r.places
                    .place(&document, prefix.len(), prefix.len() + byte)
                    .to_string()
            });
            let why = match d.original_acceptance {
                Acceptance::Incomplete => "the grammar needs more at the end",
                _ => "the grammar refuses what follows",
            };
            let _ = writeln!(
                out,
                "disagreement {n}: the parser reads clean what the grammar refuses ({}: {why})",
                at.unwrap_or_else(|| d.origin.clone())
            );
            let _ = writeln!(out, "  shortest: {}", quote(&d.shrunk));
        }
    }
    if matches!(d.verdict, Verdict::Clean) && d.direction == Direction::GrammarAcceptsParserMisreads
    {
        let _ = writeln!(
            out,
            "  (the shrunk text parses clean; the original does not)"
        );
    }
}

/// A text as a JSON string, shortened in the middle past 200 characters.
fn quote(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap_or_default();
    if q.chars().count() <= 200 {
        return q;
    }
    let head: String = q.chars().take(120).collect();
    let tail: String = q
        .chars()
        .rev()
        .take(60)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{head}…{tail} ({} characters)", s.chars().count())
}
