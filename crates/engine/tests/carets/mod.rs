//! Assertions on rendered diagnostics, shared by the engine's rendering tests and the command
//! line's (`tests/it/diagnostic_cli.rs` includes this file).

use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::template::source::source_from_text;
use unicode_width::UnicodeWidthStr;

/// The diagnostic of a template text that fails to load.
pub(crate) fn diagnose(text: &str) -> Diagnostic {
    match source_from_text("t.json".into(), text.into()).and_then(|s| s.template()) {
        Ok(_) => panic!("template unexpectedly valid:\n{text}"),
        Err(e) => e.diagnostic().cloned().unwrap_or_else(|| panic!("{e}")),
    }
}

/// Asserts that `rendered` shows the diagnostic's line with carets starting under the culprit
/// (the caret line's display offset equals the display width of what precedes the culprit on
/// the shown line) and returns the caret run.
#[track_caller]
pub(crate) fn assert_caret_under_culprit(d: &Diagnostic, rendered: &str) -> String {
    let loc = d.location.as_ref().expect("a located diagnostic");
    let shown_text = loc.line_text.replace('\t', "    ");
    let lines: Vec<&str> = rendered.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with(&format!("{} | ", loc.line)) && l.ends_with(&shown_text))
        .unwrap_or_else(|| panic!("source line not shown:\n{rendered}"));
    let gutter = &lines[at][..lines[at].len() - shown_text.len()];
    let before = loc.line_text[..loc.line_span().start].replace('\t', "    ");
    let caret_line = lines[at + 1];
    let caret = caret_line.find('^').expect("a caret");
    assert_eq!(
        caret_line[..caret].width(),
        gutter.width() + before.width(),
        "caret not under the culprit:\n{rendered}"
    );
    caret_line[caret..].trim_end().to_string()
}
