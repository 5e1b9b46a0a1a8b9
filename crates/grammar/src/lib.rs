//! Grammars for constrained decoding, compiled from a response template and the request's
//! tools: the model's whole output after the prompt, exactly as the parser reads it back into
//! a message without an error or a silent loss.
//!
//! [`compile`] builds a small [`Grammar`] (see [`ir`]); its emitters write it for the serving
//! engines: [`Grammar::to_lark`] (llguidance), [`Grammar::to_gbnf`] (llama.cpp),
//! [`Grammar::to_ebnf`] (XGrammar) and [`Grammar::to_structural_tag`] (XGrammar's structural
//! tag, as vLLM and SGLang take it). The four describe the same language.
//!
//! What the grammar cannot say exactly (a lookaround it cannot turn into a follow constraint,
//! case-insensitive matching, an open pattern without a literal to keep other text from
//! matching it) is kept in [`Grammar::approximations`], located at the template's line and
//! column, with what the grammar says instead.
//!
//! Decisions a model author should know:
//!
//! - Tool arguments follow the tool's schema, and a parameter whose schema does not allow a
//!   string also accepts a JSON string the parser's tool coercion casts into its type
//!   (`"days": "3"` for an integer): the parser reads both to the same message.
//! - An object schema with `properties` and no `additionalProperties` admits only the listed
//!   properties, in their order, required ones required.
//! - Between regions only whitespace; a non-repeating implicit field's text stands either
//!   before the tool calls (which then follow one another directly) or after them, since the
//!   parser keeps only the implicit field's last value.
//! - A string value (JSON, xml-inline, Python) never holds the region's close delimiter, which
//!   the parser would cut the region at.
//! - A string a parameter's coercion casts is admitted only in the spelling the cast writes back
//!   (`"3"`, not `"03"`; `"2.5"`, not `"2.50"`; `"true"`, not `"True"`), since any other
//!   spelling is a change the parser reports.
//!
//! ```
//! use rtbench_engine::template::source::source_from_text;
//! use rtbench_grammar::{compile, Options};
//!
//! let source = source_from_text("t.json".into(), r#"{
//!   "start_anchor": "<|im_start|>assistant\n",
//!   "fields": {
//!     "thinking": {"open": "<think>", "close": "</think>"},
//!     "content": {"close": "<|im_end|>"}
//!   }
//! }"#.into())?;
//! let grammar = compile(&source, &Options::default())?;
//! assert!(grammar.approximations.is_empty());
//! let lark = grammar.to_lark(&Default::default());
//! assert!(lark.starts_with("start: "));
//! assert!(lark.contains("<think>"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compile;
mod emit;
pub mod exclude;
mod follow;
pub mod ir;
mod json_text;
mod matcher;
mod plan;
pub mod re;
pub mod schema;
mod tools;

pub use emit::LarkOptions;
pub use ir::{Approximation, Dialect, Grammar, Node};

use rtbench_engine::template::TemplateSource;

/// Which tool calls the request allows (`tool_choice`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// Any number of calls (within `parallel`), or none.
    #[default]
    Auto,
    /// At least one call.
    Required,
    /// No tool call.
    None,
    /// At least one call, all of this tool.
    Named(String),
}

impl std::str::FromStr for ToolChoice {
    type Err = std::convert::Infallible;

    /// `auto`, `required`, `none`, or a tool's name.
    fn from_str(s: &str) -> Result<ToolChoice, Self::Err> {
        Ok(match s {
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            name => ToolChoice::Named(name.to_string()),
        })
    }
}

/// What the grammar is for: the request's tools and how they may be called.
#[derive(Clone, Debug)]
pub struct Options {
    /// OpenAI-style tools (`{"type": "function", "function": {...}}`); `None`: any tool name
    /// and any JSON object of arguments.
    pub tools: Option<Vec<serde_json::Value>>,
    /// Which calls are allowed.
    pub tool_choice: ToolChoice,
    /// More than one call allowed (`parallel_tool_calls`).
    pub parallel: bool,
    /// The prompt the output follows, when it leaves a region open (a prefilled `<think>`):
    /// the output then starts inside that region. `None`: it starts right after the start
    /// anchor.
    pub prefix: Option<String>,
    /// The model's end-of-sequence token as text (`eos_token`), when the output may end with
    /// it: a template without an implicit field discards it after the last region.
    pub eos: Vec<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            tools: None,
            tool_choice: ToolChoice::Auto,
            parallel: true,
            prefix: None,
            eos: Vec::new(),
        }
    }
}

/// Why no grammar could be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The template does not load (the located diagnostic, as `check` prints it).
    Template(String),
    /// The tools are not usable, or the tool choice names no tool among them.
    Tools(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Template(m) | Error::Tools(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// Compiles the template in `source` into a grammar of the model's output (see the crate
/// docs for the shape).
pub fn compile(source: &TemplateSource, options: &Options) -> Result<Grammar, Error> {
    compile::compile(source, options)
}
