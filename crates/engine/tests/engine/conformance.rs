//! Conformance with the reference, without Python: every case recorded from the reference
//! (hand-written ones under `data/conformance/shared`, differential fuzz cases under
//! `data/conformance/fuzz`) must give the same message or error, the same validity, and the
//! same stream (semantically always; event for event except where the difference is one of
//! hold-back only, explained below), under each supported reference version: the cases were
//! recorded from 5.24, and `data/conformance/v5.25` holds the ones 5.25 records differently.
//!
//! Known difference: with a lazy quantifier in a delimiter pattern, the reference's partial
//! matcher can report partial matches that no continuation can complete, so it holds back text
//! it need not hold. rtbench reproduces this where the repeat is followed by one character
//! (`a[^<]{0,3}?>`), and may release the text earlier in other shapes. Such a stream is
//! accepted only when it agrees semantically and, after every feed, everything the reference had
//! emitted is a prefix of what rtbench had (earlier, never different). Any other event-for-event
//! difference fails the test: there is no list of tolerated exceptions.

use std::collections::HashMap;
use std::path::Path;

use crate::common::{Summary, load_cases, run_case};
use rtbench_engine::Reference;
use rtbench_engine::template::load_template;
use rtbench_engine::value::Value;

fn run_dir(sub: &str, reference: Reference) -> usize {
    run_path(sub, &data_dir(sub), false, reference)
}

fn data_dir(sub: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/conformance")
        .join(sub)
}

/// The cases under `dir` as `reference` records them: the 5.24 recordings, with the cases
/// whose result changed in a later version replaced by that version's recording (every file
/// of `data/conformance/v<version>/`, written by `tools/conformance/rerecord.py`).
fn cases_for(dir: &Path, reference: Reference) -> Vec<Value> {
    let mut cases = load_cases(dir);
    let overlay = data_dir(&format!("v{}", reference.name()));
    if reference == Reference::V5_24 || !overlay.is_dir() {
        return cases;
    }
    let name = |c: &Value| {
        c.as_dict()
            .and_then(|d| d.get("name"))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let changed: HashMap<String, Value> = load_cases(&overlay)
        .into_iter()
        .filter_map(|c| Some((name(&c)?, c)))
        .collect();
    for case in &mut cases {
        if let Some(new) = name(case).and_then(|n| changed.get(&n)) {
            *case = new.clone();
        }
    }
    cases
}

/// Runs the cases under `dir` under `reference`; with `exact`, every stream must equal the
/// reference's event for event, feed by feed (no hold-back difference is tolerated). Every
/// error text the cases record (`expect.error_text`, `check.error_text`) must be rtbench's:
/// the same exception type with the same message. Returns how many error texts there were.
fn run_path(sub: &str, dir: &Path, exact: bool, reference: Reference) -> usize {
    let cases = cases_for(dir, reference);
    assert!(!cases.is_empty(), "no cases in {}", dir.display());
    let mut summary = Summary::default();
    let mut failures = Vec::new();
    let mut unexplained = Vec::new();
    let mut lazy_ahead = 0;
    let mut equal = 0;
    let (mut texts, mut text_failures) = (0, Vec::new());
    for case in &cases {
        let o = run_case(case, reference);
        summary.add(&o);
        texts += o.error_texts;
        text_failures.extend(o.text_failures.iter().map(|f| format!("{}: {f}", o.name)));
        equal += (o.failures.is_empty() && o.exact_only.is_empty()) as usize;
        for f in &o.failures {
            failures.push(format!("{}: {f}", o.name));
        }
        for (e, ahead) in &o.exact_only {
            if *ahead && o.lazy_delimiters && !exact {
                lazy_ahead += 1;
            } else {
                unexplained.push(format!("{}: {e}", o.name));
            }
        }
    }
    eprintln!("{sub} ({reference}): {}", summary.line());
    eprintln!("{sub} ({reference}): {} cases, {equal} equal", cases.len());
    eprintln!(
        "{sub} ({reference}): {lazy_ahead} streams release text earlier than the reference (lazy-quantifier partial matches)"
    );
    // RTBENCH_SHOW_ALL=1 lists every difference instead of the first ones.
    let shown = if std::env::var("RTBENCH_SHOW_ALL").is_ok_and(|v| v == "1") {
        usize::MAX
    } else {
        40
    };
    for f in failures.iter().take(shown) {
        eprintln!("  FAIL {f}");
    }
    for e in unexplained.iter().take(shown) {
        eprintln!("  EXACT {e}");
    }
    eprintln!(
        "{sub} ({reference}): {texts} error texts, {} equal",
        texts - text_failures.len()
    );
    for f in text_failures.iter().take(shown) {
        eprintln!("  TEXT {f}");
    }
    assert!(
        failures.is_empty(),
        "{} failures (first ones above)",
        failures.len()
    );
    assert!(
        unexplained.is_empty(),
        "{} unexplained exact differences",
        unexplained.len()
    );
    assert!(
        text_failures.is_empty(),
        "{} error texts differ",
        text_failures.len()
    );
    texts
}

#[test]
fn every_case_the_references_record_differently_is_one_its_template_says_may_differ() {
    // `Template::may_differ_between_references` lets callers skip comparing the versions on
    // a sample: it must say "may differ" for every case whose 5.25 recording differs from its
    // 5.24 one (the overlay), and it is no use if it says so for every case.
    let overlay = load_cases(&data_dir("v5.25"));
    assert!(overlay.len() >= 13, "{} cases differ", overlay.len());
    let get = |c: &Value, k: &str| c.as_dict().and_then(|d| d.get(k)).cloned();
    let mut loaded = 0;
    for case in &overlay {
        let name = get(case, "name").unwrap_or(Value::Null);
        // A template that does not load fails the same way under both versions.
        let Ok(t) = load_template(&get(case, "template").unwrap_or(Value::Null)) else {
            continue;
        };
        loaded += 1;
        let tools = get(case, "tools").is_some_and(|t| !matches!(t, Value::Null));
        assert!(
            t.may_differ_between_references(tools),
            "{name:?} differs between the versions, but its template says it cannot"
        );
    }
    assert!(loaded >= 13, "only {loaded} templates load");
    let same = ["shared", "fuzz"]
        .iter()
        .flat_map(|sub| load_cases(&data_dir(sub)))
        .filter(|c| {
            let tools = get(c, "tools").is_some_and(|t| !matches!(t, Value::Null));
            load_template(&get(c, "template").unwrap_or(Value::Null))
                .is_ok_and(|t| !t.may_differ_between_references(tools))
        })
        .count();
    assert!(same > 1000, "only {same} cases are known to agree");
}

#[test]
fn shared_cases_match_the_5_24_reference() {
    let texts = run_dir("shared", Reference::V5_24);
    assert!(texts > 100, "only {texts} error texts recorded");
}

#[test]
fn shared_cases_match_the_5_25_reference() {
    let texts = run_dir("shared", Reference::V5_25);
    assert!(texts > 100, "only {texts} error texts recorded");
}

#[test]
fn fuzz_cases_match_the_5_24_reference() {
    let texts = run_dir("fuzz", Reference::V5_24);
    assert!(texts > 1000, "only {texts} error texts recorded");
}

#[test]
fn fuzz_cases_match_the_5_25_reference() {
    let texts = run_dir("fuzz", Reference::V5_25);
    assert!(texts > 1000, "only {texts} error texts recorded");
}

/// Pattern delimiters at the buffer edge (case folding of special characters, optional tails,
/// lookarounds, `$`, `\Z`, `\b`, possessive, atomic and lazy constructs): what is held back
/// after every feed must be exactly the reference's (`tools/regex/fuzz_holdback.py`).
#[test]
fn holdback_cases_match_the_reference_exactly() {
    // 5.24 and 5.25 record these cases alike.
    for reference in Reference::ALL {
        run_path("holdback", &data_dir("holdback"), true, reference);
    }
}

/// More cases from a directory named by `RTBENCH_CASES` (`*.json` or packed `*.jsonl.gz`), for
/// larger differential runs than CI carries: `RTBENCH_CASES=/tmp/fuzz cargo test --release
/// -p rtbench-engine --test engine conformance:: -- --ignored`.
#[test]
#[ignore = "needs RTBENCH_CASES"]
fn cases_from_environment_match_the_reference() {
    let dir = std::env::var("RTBENCH_CASES").expect("set RTBENCH_CASES to a case directory");
    let exact = std::env::var("RTBENCH_EXACT").is_ok_and(|v| v == "1");
    let reference = std::env::var("RTBENCH_REFERENCE")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(Reference::V5_24);
    run_path("RTBENCH_CASES", Path::new(&dir), exact, reference);
}

/// Seconds within which a result of the reference must never become rtbench's work-budget
/// error.
const REFERENCE_FINISHES: f64 = 10.0;

/// Slow-but-finite and pathological patterns timed on the reference
/// (`tools/regex/budget_cases.py`): where the reference gave its result within ten seconds,
/// rtbench gives the same; where it took longer, rtbench gives the same result or stops with
/// its work-budget error, never another error.
#[test]
fn budget_never_fails_where_the_reference_finishes() {
    let cases = load_cases(&data_dir("budget"));
    assert!(!cases.is_empty());
    let mut problems = Vec::new();
    let mut equal = 0;
    let mut slowest: Option<(String, f64, f64)> = None;
    for case in &cases {
        let seconds = match case.as_dict().and_then(|d| d.get("reference_seconds")) {
            Some(Value::Float(s)) => Some(*s),
            Some(Value::Int(s)) => Some(*s as f64),
            _ => None,
        };
        let started = std::time::Instant::now();
        // 5.24 and 5.25 record these cases alike.
        let o = run_case(case, Reference::NEWEST);
        let took = started.elapsed().as_secs_f64();
        eprintln!(
            "  {}: reference {}, rtbench {took:.2} s{}",
            o.name,
            seconds.map_or("did not finish".into(), |s| format!("{s:.2} s")),
            if o.failures.is_empty() {
                String::new()
            } else {
                format!(" ({})", o.failures[0].chars().take(160).collect::<String>())
            }
        );
        if let Some(s) = seconds
            && s <= REFERENCE_FINISHES
            && slowest.as_ref().is_none_or(|(_, t, _)| s > *t)
        {
            slowest = Some((o.name.clone(), s, took));
        }
        if o.failures.is_empty() {
            equal += 1;
            continue;
        }
        let within = seconds.is_some_and(|s| s <= REFERENCE_FINISHES);
        let budget_stop = o
            .failures
            .iter()
            .all(|f| rtbench_engine::parser::is_budget_error(f));
        if within || !budget_stop {
            problems.push(format!("{}: {}", o.name, o.failures[0]));
        }
    }
    eprintln!("budget: {} cases, {equal} equal", cases.len());
    if let Some((name, s, took)) = slowest {
        eprintln!(
            "budget: slowest case the reference finishes within {REFERENCE_FINISHES} s: {name} ({s:.2} s; rtbench {took:.2} s)"
        );
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
