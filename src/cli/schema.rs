//! `rtbench schema`: the JSON Schema of response templates, for the JSON language servers of
//! editors (VS Code's built-in one, and `vscode-json-language-server` in Helix and Neovim):
//! completion of every key, its type, default and documentation on hover, and the mistakes a
//! schema can express flagged as you type.
//!
//! The schema is `schema/response-template.schema.json`, compiled into the binary so that it
//! is always the one of the version installed. It is draft-07, the draft those servers
//! support fully; VS Code's extensions (`markdownDescription`, `errorMessage`,
//! `defaultSnippets`) are ignored by other validators. `--tokenizer-config` prints a schema
//! for a whole `tokenizer_config.json` whose `response_template` is checked by the same rules
//! (built from the template schema here, so the two cannot drift apart).
//!
//! A template cannot name its schema with a `$schema` key: the reference refuses any key it
//! does not know (`Unknown keys in response_template: ['$schema']`), so editors associate the
//! schema by file name instead (the README's editor set-up).

use clap::Args;
use rtbench_engine::py::{self, DumpOptions};
use rtbench_engine::value::{Dict, Value};

use crate::cli::{Failure, output};

/// The schema of a response template, as committed.
pub(crate) const RESPONSE_TEMPLATE: &str =
    include_str!("../../schema/response-template.schema.json");

/// `rtbench schema [--tokenizer-config]`.
#[derive(Args, Debug)]
pub(crate) struct SchemaArgs {
    /// Print the schema of a tokenizer_config.json instead: its `response_template` is checked
    /// like a template file, its other keys are left alone.
    #[arg(long)]
    pub tokenizer_config: bool,
}

/// Prints the schema asked for.
pub(crate) fn run(args: &SchemaArgs) -> Result<(), Failure> {
    if args.tokenizer_config {
        output::print_line(&tokenizer_config_schema()?)
    } else {
        output::print_line(RESPONSE_TEMPLATE.trim_end())
    }
}

/// The schema of a `tokenizer_config.json`: any keys, `response_template` validated by the
/// template schema. Self-contained (the template schema's definitions are carried over and
/// the template's own rules become one more definition), so that an editor needs one file.
pub(crate) fn tokenizer_config_schema() -> Result<String, Failure> {
    let broken = |what: &str| Failure::invalid(format!("the built-in schema is broken: {what}"));
    let template = py::json_loads(RESPONSE_TEMPLATE).map_err(|e| broken(&e.to_string()))?;
    let Value::Dict(mut template) = template else {
        return Err(broken("not an object"));
    };
    let mut definitions = match template.shift_remove("definitions") {
        Some(Value::Dict(d)) => d,
        _ => return Err(broken("no definitions")),
    };
    let draft = template
        .shift_remove("$schema")
        .unwrap_or_else(|| Value::from("http://json-schema.org/draft-07/schema#"));
    definitions.insert("responseTemplate", Value::Dict(template));

    let text = |s: &str| Value::from(s);
    let mut reference = Dict::new();
    reference.insert("$ref", text("#/definitions/responseTemplate"));
    let mut properties = Dict::new();
    properties.insert("response_template", Value::Dict(reference));
    let about = "A model's tokenizer_config.json: its response_template is checked like a \
                 response template file; the other keys are not checked.";
    let mut schema = Dict::new();
    schema.insert("$schema", draft);
    schema.insert("title", text("tokenizer_config.json"));
    schema.insert("description", text(about));
    schema.insert("markdownDescription", text(about));
    schema.insert("type", text("object"));
    schema.insert("properties", Value::Dict(properties));
    schema.insert("definitions", Value::Dict(definitions));
    let opts = DumpOptions {
        ensure_ascii: false,
        indent: Some(2),
        ..DumpOptions::default()
    };
    py::json_dumps(&Value::Dict(schema), &opts).map_err(|e| broken(&e.message))
}
