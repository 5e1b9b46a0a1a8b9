//! Reading the command line's inputs: template, prefix, tools and generation files.

use std::path::Path;

use crate::cli::{Failure, InputArgs};
use rtbench_engine::py;
use rtbench_engine::template::Template;
use rtbench_engine::template::source::{LoadError, TemplateSource, load_file};
use rtbench_engine::value::Value;

/// Everything `parse` and `stream` need.
pub struct Inputs {
    pub template: Template,
    pub prefix: Option<String>,
    pub tools: Option<Value>,
    pub output: String,
}

pub fn template(path: &Path) -> Result<(Template, TemplateSource), Failure> {
    load_file(path).map_err(|e| match e {
        LoadError::Io { .. } => Failure::usage(e.to_string()),
        LoadError::Invalid(d) => Failure::invalid(d.to_string()),
    })
}

/// Reads a UTF-8 text file exactly (no newline translation).
pub fn text_file(path: &Path, what: &str) -> Result<String, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::usage(format!("cannot read {what} {}: {e}", path.display())))?;
    // Generations can be large: validate with SIMD, and report the position only on failure.
    if simdutf8::basic::from_utf8(&bytes).is_err() {
        let at = std::str::from_utf8(&bytes).map_or_else(|e| e.valid_up_to(), |_| 0);
        return Err(Failure::usage(format!(
            "{what} {} is not valid UTF-8 (byte {at})",
            path.display()
        )));
    }
    // SAFETY: `bytes` was validated as UTF-8 just above.
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

pub fn tools_file(path: &Path) -> Result<Value, Failure> {
    let text = text_file(path, "tools file")?;
    py::json_loads(&text).map_err(|e| {
        Failure::invalid(format!(
            "tools file {}:{}:{}: invalid JSON: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })
}

pub fn read(args: &InputArgs) -> Result<Inputs, Failure> {
    let (template, _) = template(&args.template)?;
    let prefix = match (&args.prefix_file, &args.prefix) {
        (Some(f), _) => Some(text_file(f, "prefix file")?),
        (None, Some(s)) => Some(s.clone()),
        (None, None) => None,
    };
    let tools = args.tools.as_deref().map(tools_file).transpose()?;
    let output = text_file(&args.output, "output file")?;
    Ok(Inputs {
        template,
        prefix,
        tools,
        output,
    })
}

/// The error for a missing prefix (a parse error, exit 1, as in the reference).
pub fn missing_prefix() -> Failure {
    Failure::invalid(
        "a prefix is required (--prefix-file FILE or --prefix STRING; --prefix '' opts out): \
         chat templates often pre-write part of the assistant message, such as an opening \
         <think>, which the parser must see",
    )
}
