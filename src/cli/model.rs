//! The commands on a model folder's own files: `render` (the chat template), `decode` (the
//! tokenizer) and `roundtrip` (the parsed message rendered back).

use std::io::Write;
use std::path::Path;

use crate::cli::Failure;
use crate::cli::inputs::{
    self, ids_from, json_file, kwargs_arg, prepare_failure, text_file, tools_file,
};
use rtbench_engine::value::Value;
use rtbench_tooling::inputs::{Overrides, model_dir, prepare_sample, template_beside};
use rtbench_tooling::model::{Conversation, Model, render as render_with, round_trip};
use rtbench_tooling::sample::{expand, read_sample};

/// A model folder that exists.
pub(super) fn open_model(dir: &Path) -> Result<Model, Failure> {
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "{}: no such folder (--model takes a model folder)",
            dir.display()
        )));
    }
    Ok(Model::open(dir))
}

/// Prints text exactly (no line break added).
fn print_exact(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        // A closed pipe (`| head`) just ends the output.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::usage(format!("cannot write: {e}"))),
    }
}

/// `rtbench render`.
/// How `render` prints the prompt.
pub(super) struct RenderAs {
    pub add_generation_prompt: bool,
    /// Token ids instead of text.
    pub ids: bool,
    /// With `ids`: control tokens in the user's strings encoded as plain text.
    pub sanitize: bool,
}

pub(super) fn render(
    model: &Path,
    messages: &Path,
    tools: Option<&Path>,
    kwargs: Option<&str>,
    how: RenderAs,
) -> Result<(), Failure> {
    let model = open_model(model)?;
    let messages = json_file(messages, "the messages file")?;
    if !matches!(messages, Value::List(_)) {
        return Err(Failure::invalid(
            "the messages file must hold a JSON list of messages ({\"role\": ..., \"content\": ...})",
        ));
    }
    let tools = tools.map(tools_file).transpose()?;
    let kwargs = kwargs.map(kwargs_arg).transpose()?;
    let conversation = Conversation {
        messages: &messages,
        tools: tools.as_ref(),
        kwargs: kwargs.as_ref(),
        add_generation_prompt: how.add_generation_prompt,
    };
    if how.ids {
        let ids = rtbench_tooling::model::render_ids(&model, &conversation, how.sanitize)
            .map_err(prepare_failure)?;
        return crate::cli::output::print_line(&crate::cli::output::json_ids(&ids));
    }
    let text = render_with(&model, &conversation).map_err(prepare_failure)?;
    print_exact(&text)
}

/// `rtbench decode`.
pub(super) fn decode(model: &Path, ids: Option<&str>, file: Option<&Path>) -> Result<(), Failure> {
    let model = open_model(model)?;
    let ids = match (ids, file) {
        (Some(text), _) => ids_from(text, "--ids")?,
        (None, Some(f)) => ids_from(&text_file(f, "ids file")?, &f.display().to_string())?,
        (None, None) => return Err(Failure::usage("give --ids JSON or a FILE holding the ids")),
    };
    let tokenizer = model
        .tokenizer
        .as_ref()
        .map_err(|e| Failure::invalid(e.clone()))?;
    let Some(tokenizer) = tokenizer else {
        return Err(Failure::usage(format!(
            "{} has no tokenizer.json",
            model.dir.display()
        )));
    };
    // Ids outside the vocabulary decode to nothing, as the reference's decode drops them.
    let unknown = tokenizer.unknown_ids(&ids);
    if !unknown.is_empty() {
        let shown: Vec<String> = unknown.iter().take(5).map(u32::to_string).collect();
        note!(
            "warning: {} id(s) outside the vocabulary ({}{}) decode to nothing, as the reference drops them",
            unknown.len(),
            shown.join(", "),
            if unknown.len() > 5 { ", ..." } else { "" }
        );
    }
    let text = tokenizer.decode_lenient(&ids).map_err(Failure::invalid)?;
    print_exact(&text)
}

/// `rtbench roundtrip`.
pub(super) fn roundtrip(
    template: Option<&Path>,
    paths: &[std::path::PathBuf],
) -> Result<(), Failure> {
    let mut files = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(Failure::usage(format!(
                "{}: no such file or folder",
                p.display()
            )));
        }
        files.extend(
            expand(p).map_err(|e| Failure::usage(format!("cannot read {}: {e}", p.display())))?,
        );
    }
    let (mut same, mut expected, mut differs, mut skipped) = (0, 0, 0, 0);
    let mut report = String::new();
    for file in &files {
        let dir = file.parent().unwrap_or(Path::new("."));
        let template_path = match template {
            Some(t) => inputs::template_path(t)?,
            None => template_beside(dir).ok_or_else(|| {
                Failure::usage(format!(
                    "{}: no template.json or tokenizer_config.json beside it (give --template)",
                    file.display()
                ))
            })?,
        };
        let (t, _) = inputs::template(&template_path)?;
        let model = Model::open(&model_dir(&template_path));
        let sample = read_sample(file).map_err(|e| Failure::invalid(e.to_string()))?;
        if sample.model.messages.is_none() {
            skipped += 1;
            report.push_str(&format!(
                "{}: skipped (no messages section)\n",
                file.display()
            ));
            continue;
        }
        let sample = prepare_sample(&sample, &Overrides::default(), Some(&model))
            .map_err(prepare_failure)?;
        let message = rtbench_tooling::model::parse_sample(&t, &sample, Some(&model))
            .map_err(|e| Failure::invalid(format!("{}: {e}", file.display())))?;
        let rt = round_trip(&model, &sample, &message)
            .map_err(|e| Failure::invalid(format!("{}: {e}", file.display())))?;
        let name = file.display();
        match (&rt.difference, &sample.model.roundtrip) {
            (None, _) => {
                same += 1;
                report.push_str(&format!("{name}: same text\n"));
            }
            (Some(d), Some(why)) => {
                expected += 1;
                let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
                report.push_str(&format!("{name}: differs, as expected ({why}): {d}\n"));
            }
            (Some(d), None) => {
                differs += 1;
                report.push_str(&format!(
                    "{name}: the chat template writes the parsed message differently: {d}\n"
                ));
            }
        }
    }
    report.push_str(&format!(
        "{same} same, {expected} differ as expected, {differs} differ, {skipped} without messages\n"
    ));
    print_exact(&report)?;
    if differs > 0 {
        Err(Failure::invalid(""))
    } else {
        Ok(())
    }
}
