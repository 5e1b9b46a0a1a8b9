//! `rtbench export`: write the template into a `tokenizer_config.json`, after showing the
//! change. Nothing is written without `--write`.

use std::io::Write;
use std::path::Path;

use crate::cli::{Failure, inputs, output};
use rtbench_tooling::export::export;

pub fn run(template: &Path, config: &Path, write: bool) -> Result<(), Failure> {
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
    if write {
        // A symlinked config (as in a model cache) is written where the link points, so the
        // link stays a link.
        let target = std::fs::canonicalize(config)
            .map_err(|e| Failure::usage(format!("cannot resolve {name}: {e}")))?;
        write_atomically(&target, &plan.new_text)
            .map_err(|e| Failure::usage(format!("cannot write {}: {e}", target.display())))?;
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

/// Writes through a temporary file in the same folder and renames it over the original, so a
/// crash never leaves a half-written config; the original's permissions are kept.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.rtbench-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
