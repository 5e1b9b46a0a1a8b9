//! Every validation rule of the reference, each with the file position its diagnostic points at:
//! the offending key or value (or the character inside a pattern), shown with a caret.

use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::template::source::source_from_text;

/// Loads `text` as `t.json` and returns the diagnostic (the template must be invalid).
fn diagnose(text: &str) -> Diagnostic {
    match source_from_text("t.json".into(), text.into()).and_then(|s| s.template()) {
        Ok(_) => panic!("template unexpectedly valid:\n{text}"),
        Err(e) => e.diagnostic().cloned().unwrap_or_else(|| panic!("{e}")),
    }
}

/// Asserts the diagnostic's message contains `message` and points at `line:col` with a caret of
/// `caret` characters.
#[track_caller]
fn expect(text: &str, message: &str, line: usize, col: usize, caret: usize) {
    let d = diagnose(text);
    assert!(
        d.message.contains(message),
        "message {:?} lacks {message:?}",
        d.message
    );
    let loc = d
        .location
        .as_ref()
        .unwrap_or_else(|| panic!("no location for {:?}", d.message));
    assert_eq!(
        (loc.line, loc.column, loc.caret_len),
        (line, col, caret),
        "{d}"
    );
    assert_eq!(d.position().unwrap(), format!("t.json:{line}:{col}"));
}

const HEAD: &str = "{\n  \"start_anchor\": \"<s>\",\n  \"fields\": {\n";

/// A template whose fields object holds `fields` (lines start at line 4).
fn with_fields(fields: &str) -> String {
    format!("{HEAD}{fields}\n  }}\n}}")
}

#[test]
fn json_syntax_errors_point_at_the_character() {
    expect(
        "{\n  \"fields\": {,}\n}",
        "invalid JSON: Expecting property name",
        2,
        14,
        1,
    );
    expect("{\"a\": [1, 2,]}", "Expecting value", 1, 13, 1);
}

#[test]
fn top_level_rules() {
    expect(
        "[1, 2]",
        "response_template must be a dict, got list",
        1,
        1,
        6,
    );
    expect(
        "{\"version\": 2, \"start_anchor\": \"x\", \"fields\": {\"a\": {}}}",
        "Unsupported response_template version: 2",
        1,
        13,
        1,
    );
    expect(
        "{\"start_anchor\": \"x\", \"fields\": {\"a\": {}},\n \"extra\": 1}",
        "Unknown keys in response_template: ['extra']",
        2,
        2,
        7,
    );
    expect(
        "{\"start_anchor\": \"x\", \"defaults\": [], \"fields\": {\"a\": {}}}",
        "defaults must be a dict",
        1,
        35,
        2,
    );
    expect(
        "{\"start_anchor\": \"x\", \"fields\": {}}",
        "fields must be a non-empty dict",
        1,
        33,
        2,
    );
    expect(
        "{\"start_anchor\": \"x\", \"fields\": []}",
        "fields must be a non-empty dict",
        1,
        33,
        2,
    );
    expect(
        "{\"fields\": {\"a\": {}}}",
        "must define 'start_anchor' or 'start_anchor_pattern'",
        1,
        1,
        21,
    );
    expect(
        "{\"start_anchor\": \"x\",\n \"start_anchor_pattern\": \"x\", \"fields\": {\"a\": {}}}",
        "cannot specify both 'start_anchor' and 'start_anchor_pattern'",
        2,
        2,
        22,
    );
    expect(
        "{\"start_anchor\": [], \"fields\": {\"a\": {}}}",
        "'start_anchor' list must contain at least one literal",
        1,
        18,
        2,
    );
    expect(
        "{\"start_anchor\": [\"a\", \"\"], \"fields\": {\"a\": {}}}",
        "literals cannot be empty strings",
        1,
        24,
        2,
    );
    expect(
        "{\"start_anchor\": 5, \"fields\": {\"a\": {}}}",
        "must be a string or list of strings, got int",
        1,
        18,
        1,
    );
}

#[test]
fn field_rules() {
    expect(
        &with_fields("    \"a\": 5"),
        "Field 'a' must be a dict",
        4,
        10,
        1,
    );
    expect(
        &with_fields("    \"a\": {\"opne\": \"<a>\"}"),
        "Field 'a': unknown keys ['opne']",
        4,
        11,
        6,
    );
    expect(
        &with_fields("    \"a\": {\"content\": \"yaml\"}"),
        "unknown content parser 'yaml'",
        4,
        22,
        6,
    );
    expect(
        &with_fields("    \"a\": {\"content\": \"JSON\"}"),
        "unknown content parser 'JSON'",
        4,
        22,
        6,
    );
    expect(
        &with_fields("    \"a\": {\"open\": \"<a>\", \"open_pattern\": \"<a>\"}"),
        "cannot specify both 'open' and 'open_pattern'",
        4,
        26,
        14,
    );
    expect(
        &with_fields("    \"a\": {\"open\": {\"x\": 1}}"),
        "'open' must be a string or list of strings, got dict",
        4,
        19,
        8,
    );
    expect(
        &with_fields("    \"a\": {\"open\": [\"<a>\", 3]}"),
        "'open' list must contain only strings",
        4,
        27,
        1,
    );
    expect(
        &with_fields("    \"a\": {\"close\": \"\"}"),
        "'close' literals cannot be empty strings",
        4,
        20,
        2,
    );
    expect(
        &with_fields("    \"a\": {\"open_pattern\": 7}"),
        "TypeError: first argument must be a string or compiled pattern",
        4,
        27,
        1,
    );
    expect(
        &with_fields("    \"a\": {\"open\": \"<a>\", \"join\": 1, \"repeats\": true}"),
        "'join' must be a string, got int",
        4,
        34,
        1,
    );
    expect(
        &with_fields("    \"a\": {\"open\": \"<a>\", \"join\": \"\"}"),
        "'join' requires 'repeats': true",
        4,
        26,
        6,
    );
    expect(
        &with_fields("    \"a\": {\"open\": \"<a>\", \"transform_each\": 1}"),
        "transform_each must be a bool, got int",
        4,
        44,
        1,
    );
    expect(
        &with_fields("    \"a\": {\"open\": \"<a>\", \"transform_each\": true}"),
        "transform_each is set but no transform was provided",
        4,
        26,
        16,
    );
    expect(
        &with_fields("    \"a\": {\"open\": \"<a>\", \"transform\": {\"f\": [\"x{content}\"]}}"),
        "mixes a {placeholder} with literal text",
        4,
        46,
        12,
    );
    expect(
        &with_fields("    \"a\": {\"open_pattern\": \"<a (?P<id>\\\\d+)>\"}"),
        "declares named group(s) ['id'], but the field has no 'transform'",
        4,
        27,
        18,
    );
    expect(
        &with_fields("    \"a\": {},\n    \"b\": {\"content\": \"text\"}"),
        "At most one field may omit 'open'/'open_pattern'",
        5,
        5,
        3,
    );
}

#[test]
fn bad_regexes_point_inside_the_pattern() {
    // The caret sits on the character where the pattern goes wrong, escapes accounted for.
    let d = diagnose(&with_fields("    \"a\": {\"open_pattern\": \"<a>\\\\d(\"}"));
    assert!(d.message.contains("invalid open_pattern regex"), "{d}");
    let loc = d.location.unwrap();
    assert_eq!(loc.line, 4);
    let col = loc.column;
    let line = loc.line_text;
    let at: String = line.chars().skip(col - 1).take(1).collect();
    assert!(
        at == "(" || at == "\"",
        "caret on {at:?} in {line:?} (col {col})"
    );
}

#[test]
fn tokenizer_config_positions_are_in_the_config_file() {
    let text = "{\n  \"tokenizer_class\": \"X\",\n  \"response_template\": {\n    \"start_anchor\": \"<s>\",\n    \"fields\": {\"a\": {\"close\": 3}}\n  }\n}";
    expect(
        text,
        "'close' must be a string or list of strings, got int",
        5,
        31,
        1,
    );
    let d = diagnose("{\"tokenizer_class\": \"X\", \"chat_template\": \"...\"}");
    assert!(
        d.message.contains("without a 'response_template' key"),
        "{d}"
    );
}
