//! `rtbench check` prints a rendered diagnostic with the caret under the culprit (the rendering
//! itself is tested in `crates/engine/tests/diagnostic_render.rs`).

use std::process::Command;

use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::template::source::source_from_text;
use unicode_width::UnicodeWidthStr;

fn diagnose(text: &str) -> Diagnostic {
    match source_from_text("t.json".into(), text.into()).and_then(|s| s.template()) {
        Ok(_) => panic!("template unexpectedly valid:\n{text}"),
        Err(e) => e.diagnostic().cloned().unwrap_or_else(|| panic!("{e}")),
    }
}

/// Asserts that `rendered` shows the diagnostic's line with carets starting under the culprit
/// (the caret line's display offset equals the display width of what precedes the culprit on
/// the shown line) and returns the caret run.
#[track_caller]
fn assert_caret_under_culprit(d: &Diagnostic, rendered: &str) -> String {
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

#[test]
fn rtbench_check_prints_the_caret_under_the_culprit() {
    let dir = std::env::temp_dir().join(format!("rtbench-diag-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = "{\n  \"start_anchor\": \"<s>\",\n  \"fields\": {\"名前😀\": {\"open_pattern\": \"値😀(*<x)\"}}\n}";
    let file = dir.join("bad.json");
    std::fs::write(&file, text).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_rtbench"))
        .args(["check", "--template", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    let d = diagnose(text);
    assert!(err.contains("bad.json:3:"), "{err}");
    assert_caret_under_culprit(&d, &err);
    let _ = std::fs::remove_dir_all(&dir);
}
