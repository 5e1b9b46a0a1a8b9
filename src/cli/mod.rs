//! The command line: the headless commands (`parse`, `stream`, `check`, ...) whose flags, output
//! and exit codes scripts depend on, and the entry into the workbench.
//!
//! Exit codes, the same for every command:
//!
//! - 0: success (for `chunks`, every chunking agrees and the parse succeeds; for `test`,
//!   every sample passes; for `lint`, also with warnings unless `--deny-warnings`).
//! - 1: the inputs were read but are wrong, or the result is a failure: an invalid template; a
//!   parse error; no prefix option for a plain-text generation (`--prefix ''` opts out); a
//!   `--tools` file that is not JSON or not a list of tool schemas; a `.sample` file whose
//!   sections are malformed; chunkings that disagree (`chunks`, and `lint`/`test` with
//!   `--chunkings`), or a parse that fails however it is cut (`chunks`); a failing sample
//!   (`test`); warnings with `--deny-warnings` (`lint`); a config `export` cannot write into;
//!   on a folder of samples, any sample that fails this way.
//! - 2: usage and I/O errors: bad flags or flag values (clap's errors, `--chunks 0`,
//!   `--dry-run` without `--bless`, `--pretty` on a folder), a file or folder that is missing,
//!   unreadable or not UTF-8, a `--template` folder with neither template.json nor
//!   tokenizer_config.json, a folder with no samples, an unknown FIELD for `explain`, a file
//!   that cannot be written; on a folder of samples, a sample that fails this way (the highest
//!   code wins).

/// `eprintln!` that never panics: see [`output::note`].
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::cli::output::note(format_args!($($arg)*))
    };
}

mod corpus;
mod explain;
mod export;
mod grammar;
mod grammar_check;
mod infer;
mod inputs;
mod lint;
mod model;
mod new;
mod output;
mod run;
mod schema;
mod test_samples;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

/// A workbench for response templates: write, watch, parse and stream-debug them.
#[derive(Parser, Debug)]
#[command(name = "rtbench", version, about, long_about = None, subcommand_negates_reqs = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Without a command: open the workbench on TEMPLATE (a response template, a
    /// tokenizer_config.json, or a folder holding template.json), then SAMPLE files or folders
    /// (default: the samples beside the template; no paths at all: a bundled sample).
    #[arg(value_name = "TEMPLATE [SAMPLE]")]
    pub paths: Vec<PathBuf>,
    /// Workbench colours: a built-in theme (dark, light) or a theme file (TOML).
    #[arg(long, value_name = "NAME|PATH")]
    pub theme: Option<String>,
    /// Workbench config file (key bindings, editor command); default: $RTBENCH_CONFIG, else
    /// ~/.config/rtbench/config.toml.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The reference version to follow: 5.24 or 5.25 (default: $RTBENCH_REFERENCE, else the
    /// config file's `reference`, else the newest, 5.25); `lint` and `test` also take `all`.
    #[arg(long, global = true, value_name = "5.24|5.25")]
    pub reference: Option<String>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Parse a whole generation and print the message as JSON.
    Parse {
        #[command(flatten)]
        input: InputArgs,
        /// Pretty-print the message (indented JSON).
        #[arg(long)]
        pretty: bool,
    },
    /// Feed a generation in chunks and print the events of every feed as JSON Lines.
    Stream {
        #[command(flatten)]
        input: InputArgs,
        /// Chunk sizes in Unicode code points (in token ids with `--ids`), cycled: `1`, `3,5`, ...
        #[arg(long, value_name = "N[,N...]")]
        chunks: String,
        /// Add spans (byte and code-point offsets into prefix + generation), held-back text
        /// and discarded text to every line.
        #[arg(long)]
        spans: bool,
    },
    /// Check that no chunking changes the result: stream the generation with every chunk size
    /// from 1 to N, K seeded random chunkings and tokenizer-like pieces, and compare each with
    /// the one-shot parse. Exit 0 when all agree, 1 with the smallest disagreement, the
    /// delimiter that made the difference and a diff (1 also for a parse that fails with the
    /// same error however it is cut: it fails, as `parse` does).
    Chunks {
        #[command(flatten)]
        input: InputArgs,
        /// Try every chunk size from 1 to N code points (sizes past the generation's length
        /// are all the one-shot parse, so N is cut to it).
        #[arg(long, value_name = "N", default_value_t = 32)]
        max: u64,
        /// Also try K random chunkings (sizes 1 to 12 code points; at most 100000).
        #[arg(long, value_name = "K", default_value_t = 8,
              value_parser = clap::value_parser!(u64).range(0..=100_000))]
        random: u64,
        /// Seed of the random chunkings.
        #[arg(long, value_name = "S", default_value_t = 0)]
        seed: u64,
    },
    /// Regression-test templates: parse every sample that has an expected message and report
    /// pass/fail with a structural diff (exit 1 on any failure). A sample's template is the
    /// template.json (or tokenizer_config.json) beside it.
    Test {
        /// Sample files or folders (searched recursively). Default: the folder of --template;
        /// without it, the current folder and its sub-folders when the current folder holds
        /// samples, else samples/.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Use this template for every sample (a file, or a folder holding template.json or
        /// tokenizer_config.json).
        #[arg(long, value_name = "T")]
        template: Option<PathBuf>,
        /// Write the current results into the samples' `expected` sections (atomically, and
        /// never over a file saved since it was read), printing what changes in each.
        #[arg(long)]
        bless: bool,
        /// With --bless: print what would be blessed, write nothing.
        #[arg(long, requires = "bless")]
        dry_run: bool,
        #[command(flatten)]
        chunkings: ChunkingArgs,
    },
    /// Explain a field: where its regions opened and ended and why, and when it matched
    /// nowhere, the closest the text came to its delimiter, the delimiter that won instead and
    /// how the start anchor cut the prefix.
    Explain {
        #[command(flatten)]
        input: InputArgs,
        /// The field to explain (e.g. `thinking`, `tool_calls`); default: every field.
        #[arg(value_name = "FIELD")]
        field: Option<String>,
        /// Also list where the delimiters appear in the prefix before the start anchor (text
        /// the parser never sees).
        #[arg(long)]
        prefix_details: bool,
    },
    /// Warn about likely mistakes the reference accepts: patterns other runtimes cannot use,
    /// closes that can never match, an implicit field without a close, delimiters that are
    /// prefixes of each other; with samples, what each parse loses without an error (a value
    /// overwritten, text that went to no field, a region that never closed, a start anchor
    /// the prefix lacks). Exit 0 (1 with --deny-warnings when there are warnings, and with
    /// --chunkings when a sample's result depends on the chunking).
    Lint {
        /// Response template JSON, a tokenizer_config.json with a `response_template` key, or a
        /// folder holding template.json or tokenizer_config.json.
        #[arg(long, value_name = "T")]
        template: PathBuf,
        /// Sample files or folders to parse with the template.
        #[arg(value_name = "SAMPLE")]
        samples: Vec<PathBuf>,
        /// Exit 1 when there is any warning (for CI).
        #[arg(long)]
        deny_warnings: bool,
        /// Also replay every pattern in other runtimes' regex engines on the samples and
        /// report where they differ: a comma-separated LIST of regex, fancy-regex, ecmascript,
        /// pcre2 (pcre2 only in builds with the `rtbench-portability/pcre2` feature); bare
        /// `--engines` (before --template or another option) means every built-in engine.
        #[arg(long, value_name = "LIST", num_args = 0..=1, default_missing_value = "all")]
        engines: Option<String>,
        /// Also apply the rules a serving engine enforces on response templates (vllm: the
        /// fields and parsers vLLM's response_template parser refuses to load, each an error,
        /// and the request modes it refuses); may be repeated.
        #[arg(long, value_name = "SERVER", value_parser = ["vllm"])]
        serve: Vec<String>,
        #[command(flatten)]
        chunkings: ChunkingArgs,
    },
    /// Write the template into a tokenizer_config.json under `response_template`, keeping every
    /// other byte of the file. Shows the change; writes only with --write.
    Export {
        /// The response template to export (or a tokenizer_config.json holding one, or a folder
        /// holding template.json or tokenizer_config.json).
        #[arg(long, value_name = "T")]
        template: PathBuf,
        /// The tokenizer_config.json to write into.
        #[arg(value_name = "CONFIG")]
        config: PathBuf,
        /// Apply the change (without it, only the diff is shown).
        #[arg(long)]
        write: bool,
        /// With --write: write the config even if it is read-only (it stays read-only).
        #[arg(long, requires = "write")]
        force: bool,
    },
    /// Validate a template: exit 0 when the reference would load it, 1 with diagnostics if not.
    Check {
        /// Response template JSON, a tokenizer_config.json with a `response_template` key, or a
        /// folder holding template.json or tokenizer_config.json.
        #[arg(long, value_name = "T")]
        template: PathBuf,
    },
    /// Render a conversation with a model folder's chat template and print the text, as the
    /// reference's apply_chat_template(messages, tools=..., add_generation_prompt=True,
    /// tokenize=False, **kwargs) returns it.
    Render {
        /// The model folder (tokenizer_config.json's chat_template, or chat_template.jinja).
        #[arg(long, value_name = "DIR")]
        model: PathBuf,
        /// JSON list of messages.
        #[arg(long, value_name = "F")]
        messages: PathBuf,
        /// JSON list of tool schemas.
        #[arg(long, value_name = "F")]
        tools: Option<PathBuf>,
        /// The chat template's keyword arguments as a JSON object, e.g. '{"enable_thinking": false}'.
        #[arg(long, value_name = "JSON")]
        kwargs: Option<String>,
        /// Do not open the assistant turn (add_generation_prompt=False).
        #[arg(long)]
        no_generation_prompt: bool,
        /// Print the prompt's token ids (a JSON list) instead of its text, as
        /// apply_chat_template(..., tokenize=True) returns them.
        #[arg(long)]
        ids: bool,
        /// With --ids: encode control tokens found in the user's strings (messages, tools,
        /// kwargs) as plain text, as apply_chat_template(..., sanitize_control_tokens=True) does,
        /// so that only the chat template's own control tokens are ids.
        #[arg(long, requires = "ids")]
        sanitize_control_tokens: bool,
    },
    /// Decode token ids with a model folder's tokenizer.json and print the text, as the
    /// reference's tokenizer.decode(ids) returns it.
    Decode {
        /// The model folder (its tokenizer.json).
        #[arg(long, value_name = "DIR")]
        model: PathBuf,
        /// The ids as a JSON list; without it, FILE holds the list.
        #[arg(long, value_name = "JSON", conflicts_with = "file")]
        ids: Option<String>,
        #[arg(value_name = "FILE", required_unless_present = "ids")]
        file: Option<PathBuf>,
    },
    /// Parse a corpus of generations (JSON Lines records, folders of samples, or `-` for
    /// stdin) with one template on every core and report: counts, what each field lost,
    /// errors grouped by kind and field, chunking instability over a sample, the slowest
    /// records. Exit 1 when a record fails (not a record, an unexpected error, a difference
    /// from its expected message).
    Corpus(corpus::CorpusArgs),
    /// Render each sample's messages with the parsed message appended (no generation prompt)
    /// and compare with its prefix + generation: where the chat template would write the turn
    /// differently. Exit 1 when one differs and its sample does not say a difference is
    /// expected (a `--- roundtrip ---` section saying why).
    Roundtrip {
        /// The template (or model folder); default: the one beside each sample.
        #[arg(long, value_name = "T")]
        template: Option<PathBuf>,
        /// Sample files or folders.
        #[arg(value_name = "SAMPLE", required = true)]
        samples: Vec<PathBuf>,
    },
    /// Print the JSON Schema of response templates, for editors' JSON language servers
    /// (completion, docs on hover, mistakes flagged as you type; README: "Editor support").
    Schema(schema::SchemaArgs),
    /// Compile the template (and the request's tools) into a grammar for constrained decoding
    /// of the model's whole output: lark (llguidance), gbnf (llama.cpp), ebnf (XGrammar) or
    /// structural-tag (XGrammar's, as vLLM and SGLang take it). What the grammar only
    /// approximates is a `FILE:LINE:COL: warning:` line on stderr. Exit 0 (1 for an invalid
    /// template or tools file, 2 for usage and I/O errors).
    Grammar(grammar::GrammarArgs),
    /// Write a scaffold for a new model: a template.json and an example.sample that parses
    /// with it, then say how to go on. Never replaces a file.
    New(new::NewArgs),
}

/// `--chunkings` of `lint` and `test`, with `chunks`' knobs.
#[derive(Args, Debug, Clone, Copy)]
pub(crate) struct ChunkingArgs {
    /// Also stream every sample with every chunk size from 1 to --max, --random seeded random
    /// chunkings and tokenizer-like pieces (as `rtbench chunks`), and fail (exit 1) on a sample
    /// whose result depends on the chunking, naming the delimiter that made the difference.
    #[arg(long)]
    pub chunkings: bool,
    /// With --chunkings: try every chunk size from 1 to N code points.
    #[arg(long, value_name = "N", default_value_t = 32, requires = "chunkings")]
    pub max: u64,
    /// With --chunkings: also try K random chunkings (sizes 1 to 12 code points).
    #[arg(long, value_name = "K", default_value_t = 8, requires = "chunkings",
          value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub random: u64,
    /// With --chunkings: the seed of the random chunkings.
    #[arg(long, value_name = "S", default_value_t = 0, requires = "chunkings")]
    pub seed: u64,
}

impl ChunkingArgs {
    /// The chunking check asked for, if any.
    pub(crate) fn plan(self) -> Option<rtbench_tooling::chunking::CheckPlan> {
        self.chunkings
            .then(|| rtbench_tooling::chunking::CheckPlan {
                max_size: usize::try_from(self.max).unwrap_or(usize::MAX),
                random: usize::try_from(self.random).unwrap_or(usize::MAX),
                seed: self.seed,
                ..rtbench_tooling::chunking::CheckPlan::default()
            })
    }
}

/// Inputs shared by `parse`, `stream`, `chunks` and `explain`.
#[derive(Args, Debug)]
pub(crate) struct InputArgs {
    /// Response template JSON, a tokenizer_config.json with a `response_template` key, or a
    /// folder holding template.json (else tokenizer_config.json).
    #[arg(long, value_name = "T")]
    pub template: PathBuf,
    /// File holding the prompt sent to the model before the generation (overrides a .sample's
    /// prefix).
    #[arg(long, value_name = "F", conflicts_with = "prefix")]
    pub prefix_file: Option<PathBuf>,
    /// The prompt as a string; `--prefix ''` opts out of prefix handling (overrides a .sample's
    /// prefix).
    #[arg(long, value_name = "S", allow_hyphen_values = true)]
    pub prefix: Option<String>,
    /// JSON list of tool schemas used to cast tool-call arguments (overrides a .sample's
    /// tools).
    #[arg(long, value_name = "F")]
    pub tools: Option<PathBuf>,
    /// The model folder whose chat template renders `--messages` and whose tokenizer decodes
    /// `--ids` and a sample's id sections (default: the template's folder).
    #[arg(long, value_name = "DIR")]
    pub model: Option<PathBuf>,
    /// JSON list of messages: the prefix is the model's chat template rendering them (with
    /// the generation prompt), in place of --prefix.
    #[arg(long, value_name = "F", conflicts_with_all = ["prefix", "prefix_file"])]
    pub messages: Option<PathBuf>,
    /// The chat template's keyword arguments for --messages, as a JSON object.
    #[arg(long, value_name = "JSON", requires = "messages")]
    pub kwargs: Option<String>,
    /// OUTPUT_FILE holds a JSON list of token ids, parsed as the reference parses ids with the
    /// model's tokenizer (5.25: control tokens only act as delimiters when generated as their
    /// ids; 5.24: the ids are decoded and parsed as text). With `stream`, `--chunks` counts ids.
    #[arg(long)]
    pub ids: bool,
    /// File holding the prompt's token ids (a JSON list of ints), for `--ids`.
    #[arg(long, value_name = "PFILE", requires = "ids",
          conflicts_with_all = ["prefix", "prefix_file", "messages"])]
    pub prefix_ids: Option<PathBuf>,
    /// The generation: a text file (the generated text exactly; a prefix option is then
    /// required), a .sample file (its generation, prefix and tools; a sample without a prefix
    /// section is parsed with an empty prefix, as the workbench does, with a warning), or a
    /// folder of .sample/.txt files (one JSON line per sample, `{"path": ..., ...}`, sorted by
    /// name; exit 1 if any fails, after all are printed).
    #[arg(value_name = "OUTPUT_FILE")]
    pub output: PathBuf,
}

pub(crate) use crate::failure::Failure;

use crate::reference::Selection;
use rtbench_engine::Reference;

/// The reference version(s) this run follows, resolved once at start (see
/// [`crate::reference`]).
static SELECTION: std::sync::OnceLock<Selection> = std::sync::OnceLock::new();

/// The reference version the commands follow (the newest where `all` was given).
pub(crate) fn reference() -> Reference {
    selection().single()
}

/// What `--reference` (or its environment variable or config file) selected.
pub(crate) fn selection() -> Selection {
    *SELECTION.get_or_init(|| Selection::One(Reference::NEWEST))
}

/// Resolves `--reference`, `RTBENCH_REFERENCE` and the config file's `reference`.
fn select_reference(cli: &Cli) -> Result<Selection, Failure> {
    let all_allowed = matches!(
        cli.command,
        Some(Command::Lint { .. } | Command::Test { .. })
    );
    let env = std::env::var(crate::reference::ENV).ok();
    let config = if cli.reference.is_none() && env.as_deref().is_none_or(|e| e.trim().is_empty()) {
        match cli
            .config
            .clone()
            .or_else(crate::workbench::config::default_path)
        {
            Some(p) => {
                crate::workbench::config::load(&p)
                    .map_err(Failure::usage)?
                    .reference
            }
            None => None,
        }
    } else {
        None
    };
    crate::reference::resolve(
        cli.reference.as_deref(),
        env.as_deref(),
        config,
        all_allowed,
    )
    .map(|(s, _)| s)
    .map_err(Failure::usage)
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = select_reference(&cli).and_then(|s| {
        let _ = SELECTION.set(s);
        run_command(cli)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) if f.code == 0 => ExitCode::SUCCESS,
        Err(f) => {
            let msg = crate::failure::printable(f.message.trim_end());
            let msg = msg.as_ref();
            if msg.is_empty() {
                // The command already reported (e.g. warnings denied).
            } else if msg.starts_with("error:") {
                note!("{msg}");
            } else {
                note!("error: {msg}");
            }
            ExitCode::from(f.code)
        }
    }
}

/// Runs the command (or the workbench) the command line names.
fn run_command(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Some(Command::Parse { input, pretty }) => run::parse(&input, pretty),
        Some(Command::Stream {
            input,
            chunks,
            spans,
        }) => run::stream(&input, &chunks, spans),
        Some(Command::Check { template }) => run::check(&template),
        Some(Command::Render {
            model,
            messages,
            tools,
            kwargs,
            no_generation_prompt,
            ids,
            sanitize_control_tokens,
        }) => model::render(
            &model,
            &messages,
            tools.as_deref(),
            kwargs.as_deref(),
            model::RenderAs {
                add_generation_prompt: !no_generation_prompt,
                ids,
                sanitize: sanitize_control_tokens,
            },
        ),
        Some(Command::Decode { model, ids, file }) => {
            model::decode(&model, ids.as_deref(), file.as_deref())
        }
        Some(Command::Roundtrip { template, samples }) => {
            model::roundtrip(template.as_deref(), &samples)
        }
        Some(Command::Corpus(args)) => corpus::run(&args),
        Some(Command::Test {
            paths,
            template,
            bless,
            dry_run,
            chunkings,
        }) => test_samples::run(
            &paths,
            template.as_deref(),
            test_samples::Mode {
                bless,
                dry_run,
                chunkings: chunkings.plan(),
            },
        ),
        Some(Command::Chunks {
            input,
            max,
            random,
            seed,
        }) => run::chunks(&input, max, random, seed),
        Some(Command::Explain {
            input,
            field,
            prefix_details,
        }) => explain::run(&input, field.as_deref(), prefix_details),
        Some(Command::Lint {
            template,
            samples,
            deny_warnings,
            engines,
            serve,
            chunkings,
        }) => lint::run(
            &template,
            &samples,
            lint::Checks {
                deny: deny_warnings,
                engines: engines.as_deref(),
                vllm: serve.iter().any(|s| s == "vllm"),
                chunkings: chunkings.plan(),
            },
        ),
        Some(Command::Export {
            template,
            config,
            write,
            force,
        }) => export::run(&template, &config, write, force),
        Some(Command::Schema(args)) => schema::run(&args),
        Some(Command::New(args)) => new::run(&args),
        Some(Command::Grammar(args)) => grammar::run(&args),
        // Without a terminal and without inputs, print the bundled sample's parse.
        None if cli.paths.is_empty()
            && cli.theme.is_none()
            && cli.config.is_none()
            && !std::io::IsTerminal::is_terminal(&std::io::stdout()) =>
        {
            run::bundled_sample()
        }
        None => crate::workbench::run(&crate::workbench::Options {
            paths: cli.paths,
            theme: cli.theme,
            config: cli.config,
            reference: reference(),
        }),
    }
}
