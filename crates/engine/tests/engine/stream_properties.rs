//! Properties of streaming that must hold for every chunking, checked on every recorded case
//! with random chunk sizes: each region's chunks are exactly its body (contiguous, in order),
//! chunk text is the document text at the chunk's span, no chunk overlaps a delimiter, and the
//! spans of a stream never go backwards.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::parser::{Events, Parser};
use rtbench_engine::template::{Template, load_template};
use rtbench_engine::value::Value;

struct Case {
    template: Template,
    prefix: String,
    tools: Option<Value>,
    output: String,
}

/// Every shared case whose template is valid and whose prefix is given.
fn corpus() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/conformance/shared");
        crate::common::load_cases(&dir)
            .into_iter()
            .filter_map(|c| {
                let d = c.as_dict()?;
                let template = load_template(d.get("template")?).ok()?;
                Some(Case {
                    template,
                    prefix: d.get("prefix")?.as_str()?.to_string(),
                    tools: d
                        .get("tools")
                        .filter(|t| !matches!(t, Value::Null))
                        .cloned(),
                    output: d.get("output")?.as_str()?.to_string(),
                })
            })
            .collect()
    })
}

/// Cuts `text` into chunks of the given code-point sizes (cycled).
fn chunk(text: &str, sizes: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut k) = (0, 0);
    while i < chars.len() {
        let n = sizes[k % sizes.len()];
        out.push(chars[i..(i + n).min(chars.len())].iter().collect());
        i += n;
        k += 1;
    }
    out
}

/// Runs a case over a chunking; `None` when the reference would raise (any stage).
fn run(case: &Case, chunks: &[String]) -> Option<Vec<Event>> {
    let mut p = Parser::with_events(
        &case.template,
        Some(&case.prefix),
        case.tools.as_ref(),
        Events::Trace,
    )
    .ok()?;
    let mut events = p.initial_events().to_vec();
    for c in chunks {
        events.extend(p.feed(c).ok()?);
    }
    events.extend(p.finalize().ok()?.1);
    Some(events)
}

fn check_events(doc: &str, events: &[Event]) -> Result<(), String> {
    let mut open: Option<(usize, usize)> = None; // (field, body start)
    let mut body = String::new();
    let mut last_end = 0;
    for ev in events {
        if ev.span.start < last_end && !matches!(ev.kind, EventKind::Close { .. }) {
            return Err(format!("span {:?} goes back before {last_end}", ev.span));
        }
        match &ev.kind {
            EventKind::Open => {
                if open.is_some() {
                    return Err("region opened inside another".into());
                }
                open = Some((ev.field, ev.span.end));
                body.clear();
                last_end = ev.span.end;
            }
            EventKind::Chunk { text, .. } => {
                let Some((field, _)) = open else {
                    return Err("chunk outside a region".into());
                };
                if field != ev.field {
                    return Err("chunk for another field".into());
                }
                if &doc[ev.span.clone()] != text {
                    return Err(format!(
                        "chunk text {text:?} is not the document at {:?}",
                        ev.span
                    ));
                }
                if ev.span.start != last_end {
                    return Err(format!(
                        "chunk at {:?} leaves a gap after {last_end}",
                        ev.span
                    ));
                }
                body.push_str(text);
                last_end = ev.span.end;
            }
            EventKind::Close { .. } => {
                let Some((field, start)) = open.take() else {
                    return Err("close without open".into());
                };
                if field != ev.field {
                    return Err("close for another field".into());
                }
                let detail = ev.detail.as_ref().ok_or("close without detail")?;
                if detail.body.start != start {
                    return Err(format!(
                        "body starts at {} but the region opened at {start}",
                        detail.body.start
                    ));
                }
                if doc[detail.body.clone()] != body {
                    return Err(format!(
                        "chunks {body:?} differ from the body {:?}",
                        &doc[detail.body.clone()]
                    ));
                }
                if ev.span.start != last_end {
                    return Err(format!(
                        "region closes at {:?}, not where its text ended ({last_end})",
                        ev.span
                    ));
                }
                last_end = ev.span.end;
            }
            EventKind::Discard { .. } => {
                last_end = ev.span.end;
            }
        }
    }
    if open.is_some() {
        return Err("region left open after finalize".into());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn chunks_are_region_bodies_and_never_delimiters(
        which in 0usize..10_000,
        sizes in proptest::collection::vec(1usize..9, 1..6),
    ) {
        let cases = corpus();
        let case = &cases[which % cases.len()];
        let doc = format!("{}{}", case.prefix, case.output);
        let Some(events) = run(case, &chunk(&case.output, &sizes)) else { return Ok(()) };
        if let Err(e) = check_events(&doc, &events) {
            prop_assert!(false, "{e}");
        }
    }
}

#[test]
fn every_case_keeps_the_properties_when_fed_one_code_point_at_a_time() {
    for case in corpus() {
        let doc = format!("{}{}", case.prefix, case.output);
        if let Some(events) = run(case, &chunk(&case.output, &[1])) {
            check_events(&doc, &events)
                .unwrap_or_else(|e| panic!("{e}\noutput: {:?}", case.output));
        }
    }
}
