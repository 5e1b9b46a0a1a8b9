//! Real divergences between the reference's engine and other runtimes' engines, each proven on
//! a small template and sample (the reference's answers were checked with Python's `regex`).

use std::path::Path;

use pyregex::hook::Outcome;
use rtbench_engine::template::Template;
use rtbench_portability::report::Cause;
use rtbench_portability::{EngineKind, PortabilityReport, SampleInput, Verdict, analyze, render};
use rtbench_tooling::sample::Sample;

const ENGINES: [EngineKind; 3] = [
    EngineKind::Regex,
    EngineKind::FancyRegex,
    EngineKind::Ecmascript,
];

fn report(template: &str, generation: &str) -> PortabilityReport {
    report_with(template, generation, &ENGINES)
}

fn report_with(template: &str, generation: &str, engines: &[EngineKind]) -> PortabilityReport {
    let template = Template::from_json_str(template).expect("valid template");
    let mut sample = Sample::bare(Path::new("s.txt"), generation.to_string());
    sample.prefix = Some("<A>".to_string());
    let inputs = [SampleInput {
        name: "s.txt".into(),
        sample: &sample,
        file_text: Some(generation),
    }];
    let r = analyze(&template, &inputs, engines);
    eprintln!("{}", render::table(&r));
    for f in &r.fields {
        for (e, v) in r.engines.iter().zip(&f.verdicts) {
            if let Verdict::Differs { first, .. } = v {
                eprintln!("{}", render::divergence(*e, first));
            }
            if let Verdict::NotExpressible { construct } = v {
                eprintln!("{}: {construct}", e.name());
            }
        }
        eprintln!("{:?}", f.translations);
    }
    eprintln!("{:?}", r.partial);
    r
}

fn verdict<'a>(r: &'a PortabilityReport, key: &str, engine: EngineKind) -> &'a Verdict {
    let row = r.fields.iter().find(|f| f.key == key).expect("pattern row");
    let i = r.engines.iter().position(|e| *e == engine).expect("engine");
    &row.verdicts[i]
}

fn same(v: &Verdict) -> bool {
    matches!(v, Verdict::Same { calls } if *calls > 0)
}

fn differs(v: &Verdict) -> &rtbench_portability::Divergence {
    match v {
        Verdict::Differs { first, .. } => first,
        other => panic!("expected a divergence, got {other:?}"),
    }
}

/// `\w+` on accented text: Python's `\w` is Unicode (regex.search(r'<(\w+)>', 'hi <café>body</x>')
/// spans (3, 9)), as are Rust's engines'; ECMAScript's `\w` is ASCII even with the `u` flag,
/// so the open never matches and the tag's text stays in the content (reference message:
/// {'content': 'hi', 'tag': 'body'}).
#[test]
fn word_class_on_accented_text_differs_in_ecmascript() {
    let r = report(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "tag": {"open_pattern": "<(\\w+)>", "close": "</x>", "content": "text"},
            "content": {"content": "text"}}}"#,
        "hi <café>body</x>",
    );
    assert!(same(verdict(&r, "open_pattern", EngineKind::Regex)));
    assert!(same(verdict(&r, "open_pattern", EngineKind::FancyRegex)));
    let d = differs(verdict(&r, "open_pattern", EngineKind::Ecmascript));
    // Document offsets: the prefix "<A>" comes first; "é" is two bytes.
    assert_eq!(
        d.reference,
        Outcome::Match(vec![Some((6, 13)), Some((7, 12))])
    );
    assert_eq!(d.engine, Outcome::NoMatch);
    assert_eq!(d.texts.0.as_deref(), Some("<café>"));
    assert_eq!(d.line_col, Some((1, 4)));
    assert_eq!(d.cause, Cause::UnicodeClasses);
    let change = d.message_change.as_ref().expect("the message changes");
    assert_eq!(
        change.keys,
        vec![
            (
                "content".into(),
                "'hi'".into(),
                "'hi <café>body</x>'".into()
            ),
            ("tag".into(), "'body'".into(), "(absent)".into()),
        ]
    );
    assert_eq!(r.fields[0].translations[2].as_deref(), Some(r"<(\w+)>"));
}

/// A `\n$` close on a generation ending in "\n\n": Python's `$` also matches before the final
/// newline, so the close is the first "\n" (6..7 of the generation) and the message is
/// {'content': 'Hello.'} even without stripping; in the other engines `$` is the very end, so
/// the close is the last "\n" and the content keeps one newline.
#[test]
fn dollar_before_final_newline_differs_in_rust_engines() {
    let r = report(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "content": {"close_pattern": "\\n$", "content": "text", "content_args": {"strip": false}}}}"#,
        "Hello.\n\n",
    );
    for engine in ENGINES {
        let d = differs(verdict(&r, "close_pattern", engine));
        assert_eq!(
            d.reference,
            Outcome::Match(vec![Some((9, 10))]),
            "{engine:?}"
        );
        assert_eq!(d.engine, Outcome::Match(vec![Some((10, 11))]), "{engine:?}");
        assert_eq!(d.line_col, Some((1, 7)));
        assert_eq!(d.cause, Cause::DollarBeforeFinalNewline, "{engine:?}");
        let change = d.message_change.as_ref().expect("the message changes");
        assert_eq!(
            change.keys,
            vec![("content".into(), "'Hello.'".into(), "'Hello.\\n'".into())]
        );
    }
}

/// A lookbehind: the Rust `regex` crate cannot write it; fancy-regex and ECMAScript can, and
/// agree with Python on the sample.
#[test]
fn lookbehind_is_not_expressible_in_rust_regex() {
    let r = report(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "thinking": {"open": "<think>", "close_pattern": "(?<=\\.)</think>", "content": "text"},
            "content": {"content": "text"}}}"#,
        "<think>Hm.</think>Hi",
    );
    assert_eq!(
        verdict(&r, "close_pattern", EngineKind::Regex),
        &Verdict::NotExpressible {
            construct: "a lookbehind (?<=...)".into()
        }
    );
    assert!(matches!(
        verdict(&r, "close_pattern", EngineKind::FancyRegex),
        Verdict::Same { calls } if *calls > 0
    ));
    assert!(matches!(
        verdict(&r, "close_pattern", EngineKind::Ecmascript),
        Verdict::Same { calls } if *calls > 0
    ));
    assert_eq!(r.problems(), 1);
    // Streamed one character at a time, holding back the pattern's 8 characters delays the
    // thinking text: rtbench emits "H" on the 8th feed, the hold-back strategy later; the
    // message is the same.
    let p = &r.partial[0];
    assert_eq!(p.first_difference.as_ref().map(|d| d.0), Some(8));
    assert!(!p.message_differs);
}

/// Case-insensitive `ß` against `ẞ` (U+1E9E): Python's `regex` equates them with simple case
/// folding (regex.search('(?i)<straße>', 'a <STRAẞE>b') spans (2, 10); `(?i)ss` does not match
/// 'ß': no full folding), and so do the Rust engines and ECMAScript with `u` and `i`.
#[test]
fn sharp_s_case_insensitive_is_the_same_everywhere() {
    let r = report(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "thinking": {"open_pattern": "(?i)<straße>", "close": "</x>", "content": "text"},
            "content": {"content": "text"}}}"#,
        "a <STRAẞE>b</x>c",
    );
    for engine in ENGINES {
        assert!(same(verdict(&r, "open_pattern", engine)));
    }
    let r = report(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "thinking": {"open_pattern": "(?i)<ss>", "close": "</x>", "content": "text"},
            "content": {"content": "text"}}}"#,
        "a <ß>b</x>c",
    );
    for engine in ENGINES {
        assert!(same(verdict(&r, "open_pattern", engine)));
    }
}

/// ECMAScript has no inline case flag: a pattern whose cased characters are all
/// case-insensitive gets the global `i` flag, one that mixes both cannot be written.
#[test]
fn partial_case_flag_is_not_expressible_in_ecmascript() {
    let r = report(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "thinking": {"open_pattern": "<(?i:think)>", "close_pattern": "</(?i:t)hink>", "content": "text"},
            "content": {"content": "text"}}}"#,
        "<THINK>x</Think>y",
    );
    assert!(same(verdict(&r, "open_pattern", EngineKind::Ecmascript)));
    assert_eq!(r.fields[0].translations[2].as_deref(), Some("<think>"));
    assert_eq!(
        verdict(&r, "close_pattern", EngineKind::Ecmascript),
        &Verdict::NotExpressible {
            construct: "case-insensitive matching on part of the pattern only (no inline (?i) in ECMAScript)".into()
        }
    );
    assert!(same(verdict(&r, "close_pattern", EngineKind::Regex)));
}

/// A plain template (literal delimiters and an ordinary pattern) is portable.
#[test]
fn plain_template_is_portable() {
    let r = report(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "thinking": {"open": "<think>", "close_pattern": "</think>\\s*", "content": "text"},
            "content": {"close": "<|end|>", "content": "text"}}}"#,
        "<think>Hm.</think>\n\nHello.<|end|>",
    );
    assert!(r.is_portable(), "{}", render::table(&r));
    assert_eq!(
        render::table(&r),
        "pattern                 regex  fancy-regex  ecmascript\n\
         thinking.close_pattern  same   same         same"
    );
}

/// PCRE2 in UTF mode with Unicode properties: `\w` is Unicode and `$` also matches before a
/// final newline, as in Python, so both of the cases above agree there.
#[cfg(feature = "pcre2")]
#[test]
fn pcre2_agrees_on_accents_and_dollar() {
    let r = report_with(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "tag": {"open_pattern": "<(\\w+)>", "close": "</x>", "content": "text"},
            "content": {"content": "text"}}}"#,
        "hi <café>body</x>",
        &[EngineKind::Pcre2],
    );
    assert!(same(verdict(&r, "open_pattern", EngineKind::Pcre2)));
    let r = report_with(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "content": {"close_pattern": "\\n$", "content": "text", "content_args": {"strip": false}}}}"#,
        "Hello.\n\n",
        &[EngineKind::Pcre2],
    );
    assert!(same(verdict(&r, "close_pattern", EngineKind::Pcre2)));
    let r = report_with(
        r#"{"version": 1, "start_anchor": "<A>", "fields": {
            "thinking": {"open_pattern": "(?i)<straße>", "close": "</x>", "content": "text"},
            "content": {"content": "text"}}}"#,
        "a <STRAẞE>b</x>c",
        &[EngineKind::Pcre2],
    );
    assert!(same(verdict(&r, "open_pattern", EngineKind::Pcre2)));
}

#[test]
fn an_analysis_counts_its_samples_and_stops_when_cancelled() {
    use rtbench_portability::analyze_with;
    use rtbench_tooling::progress::Progress;
    let template = Template::from_json_str(
        r#"{"start_anchor": "<A>", "fields": {"content": {"open_pattern": "<a\\s*>", "close": "</a>"}}}"#,
    )
    .expect("valid template");
    let samples: Vec<Sample> = ["<a >x</a>", "<a>y</a>", "none"]
        .iter()
        .map(|g| {
            let mut s = Sample::bare(Path::new("s.txt"), g.to_string());
            s.prefix = Some("<A>".to_string());
            s
        })
        .collect();
    let inputs: Vec<SampleInput<'_>> = samples
        .iter()
        .map(|s| SampleInput {
            name: "s.txt".into(),
            sample: s,
            file_text: None,
        })
        .collect();
    let progress = Progress::default();
    let r = analyze_with(&template, &inputs, &ENGINES, &progress).unwrap();
    assert_eq!(r.samples, 3);
    // Each sample replayed, then each checked without partial matching.
    assert_eq!(progress.counts(), (6, 6));
    let progress = Progress::default();
    progress.cancel();
    assert!(analyze_with(&template, &inputs, &ENGINES, &progress).is_none());
    assert_eq!(progress.counts(), (0, 6));
}
