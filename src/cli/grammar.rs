//! `rtbench grammar`: the template (and the request's tools) compiled into a grammar for
//! constrained decoding, printed on standard output in the chosen dialect (`lark`, `gbnf`,
//! `ebnf`, `structural-tag`). What the grammar only approximates is printed on standard error,
//! one `FILE:LINE:COL: warning: ...` line each, located at the template's key; the grammar is
//! still printed and the exit code is 0.
//!
//! Exit codes: 0 with a grammar; 1 for an invalid template or a tools file that is not JSON or
//! not a list of tools; 2 for a missing or unreadable file and bad flags (a `--tool-choice`
//! naming no tool among `--tools` included).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::cli::{Failure, inputs, output};
use rtbench_grammar::{Error, LarkOptions, Options, ToolChoice, compile};
use rtbench_tooling::sample::{self, parse_sample};

/// The dialects `rtbench grammar` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// llguidance's Lark dialect.
    Lark,
    /// llama.cpp's GBNF.
    Gbnf,
    /// XGrammar's structural tag (JSON).
    StructuralTag,
    /// XGrammar's EBNF.
    Ebnf,
}

/// `rtbench grammar`'s flags.
#[derive(Args, Debug)]
pub(crate) struct GrammarArgs {
    /// Response template JSON, a tokenizer_config.json with a `response_template` key, or a
    /// folder holding template.json or tokenizer_config.json.
    #[arg(long, value_name = "T")]
    pub template: PathBuf,
    /// The request's tools: a JSON list of OpenAI-style tools, or a .sample file (its tools
    /// section). Without it, any tool name with any JSON object of arguments.
    #[arg(long, value_name = "J")]
    pub tools: Option<PathBuf>,
    /// Which tool calls are allowed: auto, required (at least one), none, or a tool's name
    /// (at least one call, all of that tool).
    #[arg(long, value_name = "auto|required|none|NAME", default_value = "auto")]
    pub tool_choice: String,
    /// Whether more than one tool call is allowed.
    #[arg(long, value_name = "true|false", default_value_t = true, action = clap::ArgAction::Set)]
    pub parallel: bool,
    /// The output dialect (not needed with --check).
    #[arg(long, value_enum, required_unless_present = "check")]
    pub format: Option<Format>,
    /// Check that the grammar and the parser agree instead of printing the grammar: samples
    /// the parser reads clean must be accepted, and random walks through the grammar must
    /// parse clean with valid tool calls (llguidance, over the model's tokens when the
    /// template's folder has a tokenizer.json).
    #[arg(long)]
    pub check: bool,
    /// With --check: the samples (files or folders; default: the template folder's).
    #[arg(value_name = "SAMPLES", requires = "check")]
    pub samples: Vec<PathBuf>,
    /// With --check: how many random walks.
    #[arg(long, value_name = "N", default_value_t = 500, requires = "check")]
    pub walks: usize,
    /// With --check: the first walk's seed (walk i uses seed + i).
    #[arg(long, value_name = "S", default_value_t = 1, requires = "check")]
    pub seed: u64,
    /// The prompt the output follows, when it leaves a region open (a prefilled `<think>`):
    /// the grammar then starts inside that region.
    #[arg(
        long,
        value_name = "S",
        allow_hyphen_values = true,
        conflicts_with = "prefix_file"
    )]
    pub prefix: Option<String>,
    /// File holding that prompt.
    #[arg(long, value_name = "F")]
    pub prefix_file: Option<PathBuf>,
}

/// Prints the grammar; see the module docs for the exit codes.
pub(super) fn run(args: &GrammarArgs) -> Result<(), Failure> {
    let (template, source) = inputs::template(&args.template)?;
    let tools = match &args.tools {
        None => None,
        Some(path) => Some(tools_from(path)?),
    };
    let prefix = match (&args.prefix, &args.prefix_file) {
        (Some(p), _) => Some(p.clone()),
        (None, Some(f)) => Some(inputs::text_file(f, "prefix file")?),
        (None, None) => None,
    };
    let tool_choice: ToolChoice = args.tool_choice.parse().unwrap_or(ToolChoice::Auto);
    let eos = eos_token(&inputs::template_path(&args.template)?);
    let options = Options {
        tools,
        tool_choice,
        parallel: args.parallel,
        prefix,
        eos: eos.into_iter().collect(),
    };
    let grammar = compile(&source, &options).map_err(|e| match e {
        Error::Template(m) => Failure::invalid(m),
        Error::Tools(m) if m.starts_with("--tool-choice") => Failure::usage(m),
        Error::Tools(m) => Failure::invalid(m),
    })?;
    for a in &grammar.approximations {
        note!(
            "{}:{}:{}: warning: the grammar cannot express {} (at {}); it uses {}",
            source.name,
            a.line,
            a.col,
            a.feature,
            a.key_path,
            a.used
        );
    }
    if args.check {
        let template_path = inputs::template_path(&args.template)?;
        return super::grammar_check::run(&super::grammar_check::CheckArgs {
            template_path: &template_path,
            template: &template,
            source: &source,
            options: options.clone(),
            samples: &args.samples,
            walks: args.walks,
            seed: args.seed,
        });
    }
    let text = match args.format.unwrap_or(Format::Lark) {
        Format::Lark => grammar.to_lark(&LarkOptions::default()),
        Format::Gbnf => grammar.to_gbnf(),
        Format::Ebnf => grammar.to_ebnf(),
        Format::StructuralTag => grammar.to_structural_tag(),
    };
    output::print_line(text.trim_end())
}

/// The end-of-sequence token the template's folder names (`tokenizer_config.json`).
fn eos_token(template: &Path) -> Option<String> {
    rtbench_tooling::model::eos_token(template.parent()?)
}

/// The tools of a `--tools` file: a JSON list, or a sample's tools section.
fn tools_from(path: &Path) -> Result<Vec<serde_json::Value>, Failure> {
    let value = if path.extension().is_some_and(|e| e == sample::EXTENSION) {
        let text = inputs::text_file(path, "sample file")?;
        let s = parse_sample(path, &text).map_err(|e| Failure::invalid(e.to_string()))?;
        match s.tools {
            Some(t) => t,
            None => {
                return Err(Failure::invalid(format!(
                    "{}: the sample has no tools section",
                    path.display()
                )));
            }
        }
    } else {
        inputs::tools_file(path)?
    };
    let json = serde_json::Value::try_from(&value)
        .map_err(|e| Failure::invalid(format!("tools file {}: {e}", path.display())))?;
    match json {
        serde_json::Value::Array(list) => Ok(list),
        _ => Err(Failure::invalid(format!(
            "tools file {}: expected a JSON list of tools",
            path.display()
        ))),
    }
}
