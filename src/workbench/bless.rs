//! Blessing from the screen (`b`): the current result of the sample on screen becomes its
//! expected section. [`propose`] reads the file and shows what would change (the structural
//! diff between the expected and the current message); only a confirmation writes it, with
//! [`write()`], atomically and only if the file is still the one that was read. Every other
//! section of the file stays byte for byte.
//!
//! Blessing every sample whose result changed (`B`): [`propose_all`] parses every sample (on
//! the tooling lane) and proposes a write for each one whose result is not what it expects;
//! the confirmation lists them, and [`write_all`] writes each one as [`write()`] does.

use std::path::{Path, PathBuf};

use crate::workbench::analysis::{Analysis, Status};
use crate::workbench::inputs::{Inputs, read_prepared};
use rtbench_engine::template::Template;
use rtbench_engine::value::Dict;
use rtbench_tooling::atomic::replace_file;
use rtbench_tooling::progress::Progress;
use rtbench_tooling::sample::{Sample, parse_sample, replace_expected};
use rtbench_tooling::testing::{Verdict, expected_section, verdict};

/// A write waiting for its confirmation.
#[derive(Clone, Debug, PartialEq)]
pub struct Proposal {
    pub path: PathBuf,
    /// The file as it was read (the write is refused if it changed since).
    pub read: Vec<u8>,
    /// The file with the new expected section.
    pub new: String,
    /// What changes, for the confirmation: one line each.
    pub changes: Vec<String>,
}

/// What blessing the sample on screen would write.
pub(crate) fn propose(a: &Analysis) -> Result<Proposal, String> {
    let changes: Vec<String> = match &a.status {
        Status::Ok => {
            return Err(format!(
                "nothing to bless: {} already expects this result",
                crate::workbench::analysis::short_name(&a.sample_name)
            ));
        }
        Status::Unreadable(e) => return Err(format!("cannot bless: {e}")),
        Status::Unknown => return Err("cannot bless: the sample is not parsed yet".into()),
        Status::Differs(lines) => lines.clone(),
        Status::NoExpected => vec!["no expected section yet: this result is added".into()],
        Status::Error(e) => vec![format!("the sample will expect the error: {e}")],
    };
    let result = match (&a.message, &a.problem) {
        (Some(m), _) => Ok(m.clone()),
        (None, Some(p)) => Err(p.error.text()),
        (None, None) => return Err("cannot bless: no result".into()),
    };
    proposal(&a.sample.path, &a.sample, &result, changes)
}

/// The write that makes `result` the expected section of the sample file `path`, which must
/// still hold `sample` (the sample the result was made from).
fn proposal(
    path: &Path,
    sample: &Sample,
    result: &Result<Dict, String>,
    changes: Vec<String>,
) -> Result<Proposal, String> {
    // The one reader: a device, a pipe or a folder is refused, as everywhere.
    let text =
        rtbench_tooling::inputs::read_input(path, "sample file").map_err(|e| e.to_string())?;
    // The result must be this file's.
    let now = parse_sample(path, &text).map_err(|e| e.to_string())?;
    if now.generation != sample.generation
        || now.prefix != sample.prefix
        || now.tools != sample.tools
    {
        return Err(format!(
            "{} changed since it was parsed: bless again once the new result shows",
            path.display()
        ));
    }
    let section = expected_section(result)?;
    let new = replace_expected(path, &text, &section).map_err(|e| e.to_string())?;
    Ok(Proposal {
        path: path.to_path_buf(),
        // What the write checks the file against: the text as read, moved, not copied.
        read: text.into_bytes(),
        new,
        changes,
    })
}

/// Every sample of `inputs` whose result under `template` is not what its expected section
/// says, as a proposed write (samples without an expected section are left alone: nothing of
/// theirs changed); and the samples that could not be proposed, with why. `None` when
/// `progress` was cancelled.
pub(crate) fn propose_all(
    template: &Template,
    inputs: &Inputs,
    progress: &Progress,
) -> Option<(Vec<Proposal>, Vec<String>)> {
    let model = inputs
        .model_dir()
        .map(|d| rtbench_tooling::model::Model::open(&d));
    let sources = inputs.sample_sources();
    progress.set_total(sources.len());
    let (mut proposals, mut refused) = (Vec::new(), Vec::new());
    for (i, source) in sources.iter().enumerate() {
        if progress.is_cancelled() {
            return None;
        }
        progress.set_done(i);
        let f = read_prepared(source, model.as_ref());
        let Ok(sample) = &f.sample else { continue };
        let audit = rtbench_tooling::model::audit_sample(template, sample, model.as_ref());
        let result = audit.result.map_err(|e| e.text());
        let Verdict::Fail(changes) = verdict(sample, &result) else {
            continue;
        };
        match proposal(&sample.path, sample, &result, changes) {
            Ok(p) => proposals.push(p),
            Err(e) => refused.push(format!("{}: {e}", f.name)),
        }
    }
    Some((proposals, refused))
}

/// Writes a confirmed proposal; returns what to tell the user.
pub(crate) fn write(p: &Proposal) -> Result<String, String> {
    let written = replace_file(&p.path, &p.read, p.new.as_bytes()).map_err(|e| e.to_string())?;
    let path = p.path.display().to_string();
    let name = crate::workbench::analysis::short_name(&path);
    let mut said = vec![format!(
        "blessed {name}: its expected section is the current result"
    )];
    // A link written through, or hard links that keep the old text.
    said.extend(written.notes(name));
    Ok(said.join("; "))
}

/// Writes confirmed proposals, each as [`write()`] does (a file changed since it was read is
/// left as it is); returns what to tell the user.
pub(crate) fn write_all(proposals: &[Proposal]) -> String {
    if let [one] = proposals {
        return write(one).unwrap_or_else(|e| e);
    }
    let (mut written, mut failed, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    for p in proposals {
        let path = p.path.display().to_string();
        let name = crate::workbench::analysis::short_name(&path).to_string();
        match replace_file(&p.path, &p.read, p.new.as_bytes()) {
            Ok(w) => {
                notes.extend(w.notes(&name));
                written.push(name);
            }
            Err(e) => failed.push(format!("{name} ({e})")),
        }
    }
    let mut said = vec![format!(
        "blessed {} sample{}: {}",
        written.len(),
        if written.len() == 1 { "" } else { "s" },
        written.join(", ")
    )];
    if !failed.is_empty() {
        said.push(format!("not written: {}", failed.join(", ")));
    }
    said.extend(notes);
    said.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workbench::analysis::analyze;
    use rtbench_engine::template::Template;
    use rtbench_tooling::sample::read_sample;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rtbench-bless-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const TEMPLATE: &str = r#"{"defaults": {"role": "assistant"}, "start_anchor": "<a>", "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "content": {}}}"#;

    fn analysed(path: &std::path::Path) -> Analysis {
        let template = Template::from_json_str(TEMPLATE).unwrap();
        let text = std::fs::read_to_string(path).unwrap();
        let sample = read_sample(path).unwrap();
        analyze(
            &template,
            &path.display().to_string(),
            std::sync::Arc::new(sample),
            &text,
        )
    }

    #[test]
    fn a_confirmed_bless_writes_only_the_expected_section() {
        let d = temp_dir("write");
        let path = d.join("a.sample");
        let original = "--- note ---\nkept as is\n--- prefix ---\n<a>\n--- generation ---\n<think>hm</think>hi\n--- expected ---\n{\"role\": \"assistant\", \"content\": \"bye\"}\n";
        std::fs::write(&path, original).unwrap();
        let a = analysed(&path);
        let p = propose(&a).unwrap();
        assert!(
            p.changes.iter().any(|c| c.contains("content")),
            "{:?}",
            p.changes
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            original,
            "nothing written yet"
        );
        write(&p).unwrap();
        let now = std::fs::read_to_string(&path).unwrap();
        assert!(now.starts_with("--- note ---\nkept as is\n--- prefix ---\n<a>\n--- generation ---\n<think>hm</think>hi\n--- expected ---\n"), "{now}");
        // The sample now passes: blessing again has nothing to do.
        let a = analysed(&path);
        assert_eq!(a.status, Status::Ok);
        assert!(propose(&a).unwrap_err().starts_with("nothing to bless"));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_file_changed_after_the_proposal_is_not_overwritten() {
        let d = temp_dir("changed");
        let path = d.join("a.sample");
        std::fs::write(&path, "--- prefix ---\n<a>\n--- generation ---\nhi\n").unwrap();
        let a = analysed(&path);
        let p = propose(&a).unwrap();
        assert_eq!(p.changes, ["no expected section yet: this result is added"]);
        let edited = "--- prefix ---\n<a>\n--- generation ---\nhi there\n";
        std::fs::write(&path, edited).unwrap();
        assert!(write(&p).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), edited);
        // And a proposal for a file edited since the parse is refused.
        let e = propose(&a).unwrap_err();
        assert!(e.contains("changed since it was parsed"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// Bless-all proposes the samples whose result is not what they expect (not those that
    /// pass, nor those without an expected section), and writes each one atomically; a file
    /// changed since it was read is left as it is and said.
    #[test]
    fn bless_all_writes_the_changed_samples_and_leaves_a_file_changed_meanwhile() {
        let d = temp_dir("all");
        std::fs::write(d.join("template.json"), TEMPLATE).unwrap();
        let sample = |expected: &str| {
            format!("--- prefix ---\n<a>\n--- generation ---\nhi\n--- expected ---\n{expected}\n")
        };
        let right = sample(r#"{"role": "assistant", "content": "hi"}"#);
        let wrong = sample(r#"{"role": "assistant", "content": "bye"}"#);
        std::fs::write(d.join("a.sample"), &right).unwrap();
        std::fs::write(d.join("b.sample"), &wrong).unwrap();
        std::fs::write(d.join("c.sample"), &wrong).unwrap();
        std::fs::write(
            d.join("d.sample"),
            "--- prefix ---\n<a>\n--- generation ---\nhi\n",
        )
        .unwrap();
        let inputs = Inputs::from_args(std::slice::from_ref(&d)).unwrap();
        let template = Template::from_json_str(TEMPLATE).unwrap();
        let (proposals, refused) = propose_all(&template, &inputs, &Progress::default()).unwrap();
        assert!(refused.is_empty(), "{refused:?}");
        let names: Vec<_> = proposals
            .iter()
            .map(|p| p.path.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["b.sample", "c.sample"]);
        // c changes after it was read: only b is written.
        let edited = wrong.replace("hi", "hello");
        std::fs::write(d.join("c.sample"), &edited).unwrap();
        let said = write_all(&proposals);
        assert!(
            said.starts_with("blessed 1 sample: b.sample; not written: c.sample ("),
            "{said}"
        );
        // Written as `rtbench test --bless` writes it: it now passes.
        let b = std::fs::read_to_string(d.join("b.sample")).unwrap();
        assert!(
            b.ends_with(
                "--- expected ---\n{\n  \"role\": \"assistant\",\n  \"content\": \"hi\"\n}\n"
            ),
            "{b}"
        );
        assert_eq!(std::fs::read_to_string(d.join("c.sample")).unwrap(), edited);
        // Cancelled: nothing proposed.
        let cancelled = Progress::default();
        cancelled.cancel();
        assert!(propose_all(&template, &inputs, &cancelled).is_none());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
