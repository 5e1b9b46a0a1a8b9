//! `rtbench export`: write the template into a `tokenizer_config.json`, after showing the
//! change. Nothing is written without `--write`.

use std::path::Path;

use crate::cli::{Failure, inputs, output};
use rtbench_tooling::atomic::{AtomicError, Links, Replace, links_of};
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
    text.push_str(&sharing_warning(&name, &links_of(config)));
    if write {
        // A symlinked config (as in a model cache) is written where the link points, so the
        // link stays a link.
        let target = std::fs::canonicalize(config)
            .map_err(|e| Failure::usage(format!("cannot resolve {name}: {e}")))?;
        // Atomically, and never over a config saved since it was read.
        let replace = Replace {
            allow_read_only: force,
        };
        replace
            .run(&target, old.as_bytes(), plan.new_text.as_bytes())
            .map_err(|e| match e {
                AtomicError::Changed { .. } => Failure::usage(format!(
                    "{} changed on disk since it was read; nothing was written: re-run to export into the new version",
                    target.display()
                )),
                AtomicError::ReadOnly { .. } => Failure::usage(format!(
                    "{} is read-only; nothing was written: make it writable, or pass --force to write it anyway (it stays read-only)",
                    target.display()
                )),
                e => Failure::usage(e.to_string()),
            })?;
        if std::fs::symlink_metadata(config).is_ok_and(|m| m.file_type().is_symlink()) {
            text.push_str(&format!("{name} is a link: wrote {}\n", target.display()));
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

/// What else a write changes (or leaves behind), said before anything is written.
fn sharing_warning(name: &str, links: &Links) -> String {
    let mut text = String::new();
    if !links.other_snapshots.is_empty() {
        let n = links.other_snapshots.len();
        text.push_str(&format!(
            "warning: {name} is a cache blob that {n} other snapshot{} link{} to; writing it changes them too:\n",
            if n == 1 { "" } else { "s" },
            if n == 1 { "s" } else { "" },
        ));
        for p in &links.other_snapshots {
            text.push_str(&format!("  {}\n", p.display()));
        }
        text.push_str(&format!(
            "  to change only this snapshot, replace the link by a copy first: cp --remove-destination \"$(readlink -f {name})\" {name}\n"
        ));
    }
    if links.other_hard_links > 0 {
        let n = links.other_hard_links;
        text.push_str(&format!(
            "warning: {name} has {n} other hard link{}; the write replaces the file, so {} keep{} the old text\n",
            if n == 1 { "" } else { "s" },
            if n == 1 { "that name" } else { "those names" },
            if n == 1 { "s" } else { "" },
        ));
    }
    text
}
