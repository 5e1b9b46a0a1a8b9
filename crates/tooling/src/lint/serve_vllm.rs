//! Serving compatibility with vLLM (`rtbench lint --serve vllm`): the rules vLLM's
//! `response_template` parser (`--reasoning-parser` / `--tool-call-parser response_template`)
//! enforces on a template, read in vLLM's source (`vllm/parser/response_template.py`, its
//! vendored `vllm/parser/chat_parsing`, and their tests, at [`VLLM_SOURCE`]).
//!
//! What vLLM refuses to load (each an error here, located at the key that breaks it, quoting
//! the message `vllm serve` prints):
//! - a content parser its vendored `chat_parsing` lacks (it has no `python-call-list`);
//! - a field other than `thinking`, `content` and `tool_calls`, or a `defaults` key other than
//!   `role` ("unsupported semantic fields");
//! - on `thinking` or `content`: a content parser other than `text`, a `transform` or a `join`
//!   ("semantics that cannot be streamed by the OpenAI serving adapter"). A `null` transform
//!   or join is no transform or join, as in vLLM.
//!
//! What vLLM does differently once it serves the template (notes, located): every field is
//! served as optional, and a template whose fields all have opens gets an implicit `content`
//! field (text outside every region is served as content instead of being dropped).
//!
//! What it refuses at start-up or per request (the summary): `--reasoning-parser
//! response_template` without a `thinking` field, `--tool-call-parser response_template`
//! without a `tool_calls` field, and, whenever a request has tools and a `tool_choice` other
//! than `"none"`: strict tools, `tool_choice="required"`, a named tool choice and
//! `parallel_tool_calls=false`, which a structural grammar of the tool-call format could
//! enforce (`rtbench grammar`).
//!
//! The template has already loaded under the reference when these rules run: a template the
//! reference refuses never reaches them.

use rtbench_engine::diagnostic::{Diagnostic, Severity};
use rtbench_engine::py::PathSeg;
use rtbench_engine::template::error::{JsonPath, Target, TemplateError};
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::Value;

/// The vLLM source the rules were read in.
pub const VLLM_SOURCE: &str = "vllm/parser/response_template.py at vllm-project/vllm@4ee83d19";

/// The fields vLLM's serving adapter routes (`_SUPPORTED_FIELDS`).
const SUPPORTED_FIELDS: [&str; 3] = ["content", "thinking", "tool_calls"];

/// The content parsers of vLLM's vendored `chat_parsing` (`CONTENT_PARSERS`), sorted as its
/// error message lists them.
const VLLM_PARSERS: [&str; 7] = [
    "bool",
    "float",
    "int",
    "json",
    "kv-lines",
    "text",
    "xml-inline",
];

/// The fields whose text vLLM streams as reasoning and content.
const STREAMED_FIELDS: [&str; 2] = ["thinking", "content"];

/// How vLLM prefixes a template error at start-up (`validate_tokenizer_response_template`).
const STARTUP: &str = "Invalid response_template metadata: ";

/// The tool guarantees vLLM refuses per request, as its error names them, with how a request
/// asks for them and the `rtbench grammar` option that constrains each.
const REFUSED_MODES: [(&str, &str, &str); 4] = [
    (
        "strict tools",
        "strict tools (\"strict\": true)",
        "with the tools' JSON schemas, --tools",
    ),
    (
        "required tool choice",
        "tool_choice=\"required\"",
        "--tool-choice required",
    ),
    (
        "named tool choice",
        "a named tool choice",
        "--tool-choice NAME",
    ),
    (
        "parallel_tool_calls=False",
        "parallel_tool_calls=false",
        "--parallel false",
    ),
];

/// What vLLM makes of a template.
#[derive(Debug)]
pub struct Serving {
    /// Why vLLM refuses to load the template: located like validation errors, with vLLM's
    /// message.
    pub refusals: Vec<TemplateError>,
    /// What vLLM serves differently from the reference's parse, located.
    pub notes: Vec<TemplateError>,
    /// Whether the template has a `thinking` field.
    pub thinking: bool,
    /// Whether the template has a `tool_calls` field.
    pub tool_calls: bool,
    /// Whether the template came from a `tokenizer_config.json` (where vLLM reads it).
    pub tokenizer_config: bool,
}

/// Applies vLLM's rules to a template the reference loads.
pub fn vllm(source: &TemplateSource) -> Serving {
    let spec = source.template_value();
    let empty = rtbench_engine::value::Dict::default();
    let fields = field_dict(spec, "fields").unwrap_or(&empty);
    let defaults = field_dict(spec, "defaults").unwrap_or(&empty);
    let mut refusals = Vec::new();
    let mut notes = Vec::new();

    // The vendored loader runs first (`load_response_template`): an unknown content parser.
    let mut unknown_parser = Vec::new();
    for (name, field) in fields.iter() {
        let Some(content) = field.as_dict().and_then(|f| f.get("content")) else {
            continue;
        };
        let Some(parser) = content.as_str() else {
            continue;
        };
        if !VLLM_PARSERS.contains(&parser) {
            unknown_parser.push(name);
            refusals.push(
                TemplateError::new(
                    refused(&format!(
                        "Field '{name}': unknown content parser '{parser}'. Available: {}",
                        py_list(VLLM_PARSERS.iter().copied())
                    )),
                    path(&["fields", name, "content"]),
                    Target::Value,
                )
                .help(format!(
                    "vLLM's copy of chat_parsing has no '{parser}' parser: write the format with one it has (json, xml-inline, kv-lines), or serve the model with a dedicated --tool-call-parser"
                )),
            );
        }
    }

    // Then the serving check (`validate_response_template_for_serving`): one message naming
    // every unsupported field and defaults key.
    let unsupported_fields: Vec<&str> = fields
        .keys()
        .filter(|k| !SUPPORTED_FIELDS.contains(k))
        .collect();
    let unsupported_defaults: Vec<&str> = defaults.keys().filter(|k| *k != "role").collect();
    let mut all: Vec<&str> = unsupported_fields
        .iter()
        .chain(&unsupported_defaults)
        .copied()
        .collect();
    all.sort_unstable();
    all.dedup();
    let message = refused(&format!(
        "response_template contains unsupported semantic fields: {}. Supported fields are: {}",
        py_list(all.iter().copied()),
        py_list(SUPPORTED_FIELDS.iter().copied())
    ));
    for name in unsupported_fields {
        refusals.push(
            TemplateError::new(message.clone(), path(&["fields", name]), Target::Key).help(
                format!(
                    "vLLM's OpenAI adapter serves only thinking, content and tool_calls: rename field '{name}' to one of them, or remove it"
                ),
            ),
        );
    }
    for key in unsupported_defaults {
        refusals.push(
            TemplateError::new(message.clone(), path(&["defaults", key]), Target::Key).help(
                format!("vLLM accepts only \"role\" in defaults: remove \"{key}\""),
            ),
        );
    }

    // Thinking and content stream as plain text: one message per field, at each key that
    // breaks it.
    for name in STREAMED_FIELDS {
        let Some(field) = fields.get(name).and_then(Value::as_dict) else {
            continue;
        };
        let message = refused(&format!(
            "response_template field {} uses semantics that cannot be streamed by the OpenAI serving adapter",
            Value::from(name).py_repr()
        ));
        let parser = field.get("content").and_then(Value::as_str);
        if parser.is_some_and(|p| p != "text") && !unknown_parser.contains(&name) {
            refusals.push(
                TemplateError::new(
                    message.clone(),
                    path(&["fields", name, "content"]),
                    Target::Value,
                )
                .help(format!(
                    "vLLM streams '{name}' as plain text: remove \"content\" (or write \"text\")"
                )),
            );
        }
        for (key, help) in [
            (
                "transform",
                format!("remove the transform: vLLM streams '{name}' as the text it reads"),
            ),
            (
                "join",
                format!(
                    "remove \"join\": vLLM streams each region of '{name}' as it comes, with no separator"
                ),
            ),
        ] {
            if field.get(key).is_some_and(|v| !matches!(v, Value::Null)) {
                refusals.push(
                    TemplateError::new(message.clone(), path(&["fields", name, key]), Target::Key)
                        .help(help),
                );
            }
        }
    }

    // What `_streaming_template` changes: every field optional, and an implicit content field
    // when every field has an open.
    for (name, field) in fields.iter() {
        if let Some(optional) = field.as_dict().and_then(|f| f.get("optional"))
            && !optional.truthy()
        {
            notes.push(TemplateError::new(
                format!(
                    "vLLM serves every field as optional: an output without field '{name}' is no error when served"
                ),
                path(&["fields", name, "optional"]),
                Target::Key,
            ));
        }
    }
    let has_open = |f: &Value| {
        f.as_dict()
            .is_some_and(|d| d.get("open").is_some() || d.get("open_pattern").is_some())
    };
    if fields.get("content").is_none() && fields.iter().all(|(_, f)| has_open(f)) {
        notes.push(TemplateError::new(
            "vLLM adds an implicit 'content' field when every field has an open: text outside every region is served as content (the reference drops it)".to_string(),
            path(&["fields"]),
            Target::Key,
        ));
    }

    Serving {
        refusals,
        notes,
        thinking: fields.get("thinking").is_some(),
        tool_calls: fields.get("tool_calls").is_some(),
        tokenizer_config: source.is_tokenizer_config(),
    }
}

impl Serving {
    /// Whether vLLM loads the template.
    pub fn loads(&self) -> bool {
        self.refusals.is_empty()
    }

    /// The refusals as located errors, in file order.
    pub fn errors(&self, source: &TemplateSource) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self
            .refusals
            .iter()
            .map(|e| Diagnostic {
                severity: Severity::Error,
                ..source.warn(e)
            })
            .collect();
        out.sort_by_key(|d| d.location.as_ref().map(|l| (l.line, l.column)));
        out
    }

    /// The closing summary: the notes, what vLLM refuses at start-up and per request, and what
    /// a grammar of the template would constrain.
    pub fn summary(&self, source: &TemplateSource) -> String {
        let mut text = format!("serving with vLLM (the rules of {VLLM_SOURCE}):\n");
        if self.loads() {
            text.push_str("  vLLM loads this template\n");
        } else {
            let n = self.refusals.len();
            text.push_str(&format!(
                "  vLLM refuses to load this template ({n} error{} above)\n",
                if n == 1 { "" } else { "s" }
            ));
        }
        if !self.tokenizer_config {
            text.push_str(
                "  note: vLLM reads the template from the model's tokenizer_config.json (its \"response_template\" key): `rtbench export --template T CONFIG --write` puts it there\n",
            );
        }
        for note in &self.notes {
            text.push_str(&format!(
                "  note: {}: {}\n",
                place(source, note),
                note.message
            ));
        }
        if !self.thinking {
            text.push_str("  --reasoning-parser response_template is refused: \"");
            text.push_str(
                "--reasoning-parser response_template requires a response_template with a thinking field\"\n",
            );
        }
        if !self.tool_calls {
            text.push_str("  --tool-call-parser response_template is refused: \"");
            text.push_str(
                "--tool-call-parser response_template requires a response_template with a tool_calls field\"\n",
            );
            return text;
        }
        let at = place(
            source,
            &TemplateError::new("", path(&["fields", "tool_calls"]), Target::Key),
        );
        text.push_str(&format!(
            "  requests with tools (and tool_choice other than \"none\") that vLLM refuses for field 'tool_calls' ({at}):\n"
        ));
        for (guarantee, asked, _) in REFUSED_MODES {
            text.push_str(&format!(
                "    {asked}: \"response_template parsing cannot guarantee {guarantee} without a format-compatible structural grammar\"\n"
            ));
        }
        // What the grammar compiled for each mode says: exactly, approximately (what it cannot
        // say, located), or not at all. Each mode is named once, without the request
        // spelling's own parentheses.
        // Modes with the same verdict share a line, in the order first met.
        let mut lines: Vec<(ModeGrammar, Vec<String>)> = Vec::new();
        for ((_, asked, option), grammar) in REFUSED_MODES.iter().zip(mode_grammars(source)) {
            let asked = asked.split(" (").next().unwrap_or(asked);
            let mode = format!("{asked} ({option})");
            match lines.iter_mut().find(|(g, _)| *g == grammar) {
                Some((_, modes)) => modes.push(mode),
                None => lines.push((grammar, vec![mode])),
            }
        }
        for (grammar, modes) in lines {
            let modes = join_and(&modes);
            text.push_str(&match grammar {
                ModeGrammar::Exact => format!(
                    "  `rtbench grammar --format structural-tag` can constrain {modes}\n"
                ),
                ModeGrammar::Approximate(what) => format!(
                    "  `rtbench grammar` constrains {modes} only approximately: it cannot express {}\n",
                    join_and(&what)
                ),
                ModeGrammar::Fails(e) => {
                    format!("  `rtbench grammar` cannot constrain {modes}: {e}\n")
                }
            });
        }
        text
    }
}

/// How the grammar compiled for one refused mode constrains it.
#[derive(Clone, Debug, PartialEq)]
enum ModeGrammar {
    /// Exactly: nothing approximated.
    Exact,
    /// With approximations (each feature with its place).
    Approximate(Vec<String>),
    /// Not at all: why no grammar was built.
    Fails(String),
}

/// The tool a mode's grammar is compiled for: lint has no request, and any tool with a
/// required parameter shows whether the tool-call format can be constrained by schema.
fn probe_tools() -> Vec<serde_json::Value> {
    vec![serde_json::json!({
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    })]
}

/// The grammar compiled for each of [`REFUSED_MODES`], in order: strict tools (the tools'
/// schemas), a required call, a named call, and one call at most.
fn mode_grammars(source: &TemplateSource) -> Vec<ModeGrammar> {
    use rtbench_grammar::{Options, ToolChoice};
    let with = |tool_choice: ToolChoice, parallel: bool| Options {
        tools: Some(probe_tools()),
        tool_choice,
        parallel,
        ..Options::default()
    };
    let modes = [
        with(ToolChoice::Auto, true),
        with(ToolChoice::Required, true),
        with(ToolChoice::Named("lookup".into()), true),
        with(ToolChoice::Auto, false),
    ];
    modes
        .iter()
        .map(|options| match rtbench_grammar::compile(source, options) {
            Err(e) => ModeGrammar::Fails(e.to_string()),
            Ok(g) if g.approximations.is_empty() => ModeGrammar::Exact,
            Ok(g) => {
                let mut what: Vec<String> = Vec::new();
                for a in &g.approximations {
                    let at = source
                        .warn(&TemplateError::new("", a.path.clone(), Target::Value))
                        .position()
                        .unwrap_or_else(|| a.key_path.clone());
                    let one = format!("{} ({at})", a.feature);
                    if !what.contains(&one) {
                        what.push(one);
                    }
                }
                ModeGrammar::Approximate(what)
            }
        })
        .collect()
}

/// vLLM's start-up message for a template error.
fn refused(message: &str) -> String {
    format!("vLLM refuses this template: {STARTUP}{message}")
}

/// `file:line:col` of a finding, as lint locates it.
fn place(source: &TemplateSource, e: &TemplateError) -> String {
    source.warn(e).position().unwrap_or_default()
}

fn field_dict<'v>(spec: &'v Value, key: &str) -> Option<&'v rtbench_engine::value::Dict> {
    spec.as_dict()
        .and_then(|d| d.get(key))
        .and_then(Value::as_dict)
}

fn path(keys: &[&str]) -> JsonPath {
    keys.iter()
        .map(|k| PathSeg::Key((*k).to_string()))
        .collect()
}

/// Python's `repr` of a list of strings, as vLLM's messages print `sorted(...)`.
fn py_list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    Value::List(items.map(Value::from).collect()).py_repr()
}

/// `a, b and c`.
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
