//! Rendered diagnostics (`Display`, as `rtbench check` prints them): the caret sits under the
//! culprit in display cells, whatever wide characters (CJK, emoji) or tabs come before it.

use crate::carets::{assert_caret_under_culprit, diagnose};
use rtbench_engine::diagnostic::Diagnostic;
use unicode_width::UnicodeWidthStr;

#[test]
fn the_caret_is_under_the_culprit_after_cjk_and_emoji() {
    // The pattern goes wrong at its `*` (nothing to repeat), after wide characters on the same
    // line.
    let text =
        "{\"start_anchor\": \"<名前😀>\", \"fields\": {\"x\": {\"open_pattern\": \"値😀(*<x)\"}}}";
    let d = diagnose(text);
    let loc = d.location.as_ref().unwrap();
    assert_eq!(&loc.line_text[loc.line_span()], "*", "{d}");
    let rendered = d.to_string();
    assert!(
        rendered.starts_with("error: ")
            && rendered.contains("invalid open_pattern regex: nothing to repeat"),
        "{rendered}"
    );
    assert!(
        rendered.contains(&format!("--> t.json:1:{}", loc.column)),
        "{rendered}"
    );
    assert_eq!(assert_caret_under_culprit(&d, &rendered), "^");
    // Characters before the culprit take 2 cells each when wide: the offset is not the
    // character count.
    let before = &loc.line_text[..loc.line_span().start];
    assert!(before.width() > before.chars().count());
}

#[test]
fn wide_culprits_and_tabs_render_aligned() {
    // A JSON syntax error after a tab and wide characters.
    let text = "{\n\t\"名前\": \"😀\", \"値\": oops\n}";
    let d = diagnose(text);
    let rendered = d.to_string();
    assert!(rendered.contains("--> t.json:2:"), "{rendered}");
    assert_caret_under_culprit(&d, &rendered);
    // A located help keeps its place after the snippet.
    let d = Diagnostic::error("bad key")
        .in_file("k.json")
        .at("{\"鍵😀\": 1}", 1..10)
        .with_help(Some("rename it".into()));
    let rendered = d.to_string();
    // `"鍵😀"`: two quotes and two double-width characters.
    assert_eq!(assert_caret_under_culprit(&d, &rendered), "^^^^^^");
    assert!(rendered.ends_with("= help: rename it"), "{rendered}");
}

#[test]
fn long_lines_are_cropped_around_the_culprit_and_stay_aligned() {
    let line = format!("{}\"oops\"{}", "名前😀".repeat(40), "値".repeat(60));
    let at = line.find("oops").unwrap();
    let d = Diagnostic::error("bad")
        .in_file("f.json")
        .at(&line, at..at + 4);
    let rendered = d.to_string();
    let lines: Vec<&str> = rendered.lines().collect();
    let shown = lines
        .iter()
        .position(|l| l.starts_with("1 | "))
        .expect(&rendered);
    assert!(lines[shown].contains("..."), "{rendered}");
    let culprit = lines[shown].find("oops").expect(&rendered);
    let caret_line = lines[shown + 1];
    let caret = caret_line.find('^').expect(&rendered);
    assert_eq!(
        caret_line[..caret].width(),
        lines[shown][..culprit].width(),
        "{rendered}"
    );
    assert_eq!(caret_line[caret..].trim_end(), "^^^^");
}
