//! The regex work of a whole stream is bounded by its length: a pathological pattern fed one
//! character at a time ends (here with the budget error) after a number of matcher steps that
//! grows linearly with the text, and the error is reported once, at the feed where it happened.

use rtbench_engine::{Parser, Template};

const PATHOLOGICAL: &str = r#"{"version": 1, "start_anchor": "<s>",
  "fields": {"content": {"open_pattern": "(?=(a+)+b)a", "close": "</c>"}}}"#;

/// Streams `n` characters `a` one at a time: the matcher steps taken and the error, if any,
/// with the index of the feed that failed.
fn stream(n: usize) -> (u64, Option<(usize, String)>) {
    let template = Template::from_json_str(PATHOLOGICAL).unwrap();
    let before = pyregex::steps_taken();
    let mut parser = Parser::new(&template, Some("<s>"), None).unwrap();
    let mut failure = None;
    for i in 0..n {
        if let Err(e) = parser.feed("a")
            && failure.is_none()
        {
            failure = Some((i, e.message.clone()));
        }
    }
    if let Err(e) = parser.finalize()
        && failure.is_none()
    {
        failure = Some((n, e.message));
    }
    (pyregex::steps_taken() - before, failure)
}

#[test]
fn a_pathological_stream_ends_within_linear_work() {
    let (small, small_err) = stream(1_000);
    let (large, large_err) = stream(10_000);
    eprintln!(
        "steps: 1 KB {small}, 10 KB {large} ({:.2}x)",
        large as f64 / small as f64
    );
    assert!(
        large <= 12 * small,
        "steps grew more than linearly: {small} -> {large}"
    );
    // Far below what a per-search allowance spent on every feed would cost: the parser's
    // allowance (ten seconds of the reference's work) and a little per byte.
    assert!(large < 2 * pyregex::REFERENCE_TEN_SECONDS, "{large} steps");
    for err in [small_err, large_err] {
        let (_, message) = err.expect("the budget error");
        assert!(message.contains("backtracks catastrophically"), "{message}");
        assert!(message.contains("(?=(a+)+b)a"), "{message}");
        assert!(message.contains("from byte"), "{message}");
    }
}

#[test]
fn after_the_budget_error_later_feeds_fail_at_once() {
    let template = Template::from_json_str(PATHOLOGICAL).unwrap();
    let mut parser = Parser::new(&template, Some("<s>"), None).unwrap();
    let mut first = None;
    for i in 0..5_000 {
        if let Err(e) = parser.feed("a") {
            first = Some((i, e));
            break;
        }
    }
    let (_, error) = first.expect("the budget runs out");
    let before = pyregex::steps_taken();
    let again = parser.feed("aaaa").unwrap_err();
    assert_eq!(again, error);
    assert_eq!(
        pyregex::steps_taken(),
        before,
        "no search after the failure"
    );
}

#[test]
fn ordinary_streams_spend_a_few_steps_per_byte() {
    let template = Template::from_json_str(
        r#"{"version": 1, "start_anchor": "<s>", "fields": {
          "thinking": {"open_pattern": "<think>\\s*", "close_pattern": "\\s*</think>"},
          "content": {"close": "<end>"}}}"#,
    )
    .unwrap();
    let text = "<think>why not</think>hello world, ".repeat(300);
    let mut parser = Parser::new(&template, Some("<s>"), None).unwrap();
    let (spent_before, _) = parser.work();
    for c in text.chars() {
        parser.feed(&c.to_string()).unwrap();
    }
    parser.finalize().unwrap();
    let (spent, left) = parser.work();
    assert!(spent - spent_before < 100 * text.len() as u64, "{spent}");
    assert!(left > 0);
}

/// Streams `n` copies of `c` one character at a time with a bundled template (its folder under
/// `samples/`) after its start anchor: the matcher steps taken. The events and the message must
/// be those of one feed of the whole text.
fn stream_run(folder: &str, anchor: &str, c: char, n: usize) -> u64 {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../samples")
        .join(folder)
        .join("template.json");
    let template = Template::load(&path).unwrap();
    let text: String = std::iter::repeat_n(c, n).collect();
    let before = pyregex::steps_taken();
    let mut parser = Parser::new(&template, Some(anchor), None).unwrap();
    let mut streamed = Vec::new();
    for ch in text.chars() {
        streamed.extend(parser.feed(&ch.to_string()).unwrap());
    }
    let (message, last) = parser.finalize().unwrap();
    streamed.extend(last);
    let steps = pyregex::steps_taken() - before;
    // The held-back text comes out at the end, as from one feed of the whole text.
    let mut whole = Parser::new(&template, Some(anchor), None).unwrap();
    let mut events = whole.feed(&text).unwrap();
    let (whole_message, last) = whole.finalize().unwrap();
    events.extend(last);
    assert_eq!((&message, &streamed), (&whole_message, &events), "{folder}");
    steps
}

/// The bundled templates whose delimiters begin with `\s*` hold back whitespace, which such a
/// delimiter may still begin with, until the stream ends: re-searching all of it on every feed
/// made a stream of spaces quadratic (100,000 spaces took 46 s). The partial searches now read
/// only what each feed adds, so the work grows linearly.
#[test]
fn streaming_whitespace_with_the_bundled_templates_takes_linear_work() {
    for (folder, anchor) in [
        ("qwen3", "<|im_start|>assistant\n"),
        ("qwen3-coder", "<|im_start|>assistant\n"),
        ("glm-4.5", "<|assistant|>"),
    ] {
        for c in [' ', '\n'] {
            let small = stream_run(folder, anchor, c, 2_000);
            let large = stream_run(folder, anchor, c, 8_000);
            eprintln!("{folder} {c:?}: 2,000 chars {small} steps, 8,000 chars {large} steps");
            // Quadratic work would grow 16-fold.
            assert!(
                large <= 5 * small,
                "{folder} {c:?}: {small} -> {large} steps"
            );
        }
    }
}

/// A delimiter pattern whose backtracking needs more memory than a search may hold (a repeat
/// of 66 capture groups records each of them at every iteration): the parse stops with the
/// budget error, naming the field and the pattern, exactly as when the steps run out.
#[test]
fn a_pattern_that_needs_too_much_memory_stops_with_the_budget_error() {
    let pattern = format!("((a){})*[^a]", "()".repeat(64));
    let template = Template::from_json_str(&format!(
        r#"{{"version": 1, "start_anchor": "<s>",
          "fields": {{"content": {{"open_pattern": "{pattern}", "close": "</c>"}}}}}}"#
    ))
    .unwrap();
    let text = "a".repeat(20_000);
    // 20 KB needs over a million entries; the limit allows 200,000 (and 32 million by
    // default, what the reference holds before it runs out of memory itself).
    let result = pyregex::with_stack_limit(200_000, || {
        rtbench_engine::parse_response(&template, Some("<s>"), &text, None)
    });
    let error = result.expect_err("the memory limit stops the search");
    assert!(
        rtbench_engine::parser::is_budget_error(&error.message),
        "{}",
        error.message
    );
    assert!(error.message.contains("open_pattern"), "{}", error.message);
    assert!(error.message.contains(&pattern), "{}", error.message);
    // The generation begins after the prefix `<s>`.
    assert!(error.message.contains("from byte 3 "), "{}", error.message);
    assert_eq!(error.field.as_deref(), Some("content"));
}
