//! `rtbench check` prints a rendered diagnostic with the caret under the culprit (the rendering
//! itself is tested in `crates/engine/tests/engine/diagnostic_render.rs`).

use std::process::Command;

use crate::carets::{assert_caret_under_culprit, diagnose};

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
