//! `rtbench export`: write the template into a `tokenizer_config.json`, after showing the
//! change. Nothing is written without `--write`.

use std::path::Path;

use crate::cli::{Failure, inputs, output};
use rtbench_tooling::atomic::{AtomicError, Replace, links_of};
use rtbench_tooling::export::export;

/// `force` allows writing a read-only config (it stays read-only).
pub(super) fn run(template: &Path, config: &Path, write: bool, force: bool) -> Result<(), Failure> {
    let (_, source) = inputs::template(template)?;
    let old = inputs::text_file(config, "tokenizer config")?;
    let plan = export(&old, source.template_value())
        .map_err(|e| Failure::invalid(format!("cannot export into {}: {e}", config.display())))?;
    let name = config.display().to_string();
    if plan.is_unchanged() {
        return output::print_line(&format!("{name}: response_template is already up to date"));
    }
    let verb = if plan.replaced { "replace" } else { "add" };
    let past = if plan.replaced { "d" } else { "ed" };
    let mut text = plan.diff(&name, 2);
    for w in links_of(config).warnings(&name) {
        text.push_str(&format!("{w}\n"));
    }
    if write {
        // Atomically, and never over a config saved since it was read; a symlinked config (as
        // in a model cache) is written where the link points, so the link stays a link.
        let replace = Replace {
            allow_read_only: force,
        };
        let written = replace
            .run(config, old.as_bytes(), plan.new_text.as_bytes())
            .map_err(|e| match e {
                AtomicError::Changed { .. } => Failure::usage(format!(
                    "{name} changed on disk since it was read; nothing was written: re-run to export into the new version",
                )),
                AtomicError::ReadOnly { .. } => Failure::usage(format!(
                    "{name} is read-only; nothing was written: make it writable, or pass --force to write it anyway (it stays read-only)",
                )),
                e => Failure::usage(e.to_string()),
            })?;
        if written.through_link {
            text.push_str(&format!(
                "{name} is a link: wrote {}\n",
                written.target.display()
            ));
        }
        text.push_str(&format!(
            "{name}: response_template written ({verb}{past}); every other byte is unchanged"
        ));
    } else {
        text.push_str(&format!(
            "{name}: not written. This would {verb} response_template; run again with --write to apply"
        ));
    }
    output::print_line(&text)
}
