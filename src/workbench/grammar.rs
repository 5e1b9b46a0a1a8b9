//! The selected sample against the grammar compiled from the template (`rtbench grammar`):
//! whether a model constrained by that grammar could have written the sample's generation, and
//! where it stops being accepted. Shown beside the parse, so that a template change that makes
//! the grammar refuse what the parser reads is seen at once. Runs on the analysis thread.

use rtbench_engine::template::source::TemplateSource;
use rtbench_grammar::{LarkOptions, Options, compile};
use rtbench_grammar_check::{Acceptance, Grammar};
use rtbench_tooling::sample::Sample;

/// What the grammar says of the selected sample.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GrammarMark {
    /// The grammar accepts the whole generation.
    Accepted,
    /// The grammar refuses the generation from this document offset on (the text before it
    /// is a valid start).
    StopsAt(usize),
    /// The grammar accepts all of it but needs more at the end.
    Incomplete,
    /// No grammar could be built or compiled (why).
    Unavailable(String),
    /// Not checked: the generation is too long to check on the analysis thread.
    Skipped,
}

/// The longest generation checked: the grammar engine holds about a hundred bytes per byte it
/// reads, and the analysis must stay within a few times the text.
pub(crate) const MAX_CHECKED: usize = 64 * 1024;

/// The mark of `sample` (its tools and prompt decide the grammar), whose generation starts at
/// document offset `generation_start`.
pub(crate) fn mark(
    source: &TemplateSource,
    sample: &Sample,
    generation_start: usize,
) -> GrammarMark {
    let tools = sample
        .tools
        .as_ref()
        .and_then(|t| serde_json::Value::try_from(t).ok())
        .and_then(|v| match v {
            serde_json::Value::Array(list) => Some(list),
            _ => None,
        });
    if sample.generation.len() > MAX_CHECKED {
        return GrammarMark::Skipped;
    }
    // The folder's end-of-sequence token ends a template with no implicit field.
    let eos = std::path::Path::new(&source.name)
        .parent()
        .and_then(rtbench_tooling::model::eos_token);
    let options = Options {
        tools,
        prefix: sample.prefix.clone(),
        eos: eos.into_iter().collect(),
        ..Options::default()
    };
    let compiled = match compile(source, &options) {
        Ok(g) => g,
        Err(e) => return GrammarMark::Unavailable(format!("none could be built: {e}")),
    };
    let grammar = match Grammar::from_lark(&compiled.to_lark(&LarkOptions::default())) {
        Ok(g) => g,
        Err(e) => {
            return GrammarMark::Unavailable(format!("llguidance refuses the grammar: {e}"));
        }
    };
    match grammar.accepts(&sample.generation) {
        Acceptance::Accepted => GrammarMark::Accepted,
        Acceptance::StopsAt(b) => GrammarMark::StopsAt(generation_start + b),
        Acceptance::Incomplete => GrammarMark::Incomplete,
    }
}
