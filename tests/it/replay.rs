//! Stream replay: every step of a replay must be what a plain streaming run produced at that
//! feed (the reference's recorded events, the parser's held-back text), the partial message a
//! client builds from the events must end as the final message, and the per-step views (held
//! delimiters, painted document, JSON preview) must say what the stream really did.

use crate::common;

use std::path::Path;
use std::time::Instant;

use rtbench_engine::event::EventKind;
use rtbench_engine::parser::{Events, Parser, parse_response};
use rtbench_engine::py::json_loads;
use rtbench_engine::template::source::load_file;
use rtbench_engine::template::{Template, load_template};
use rtbench_engine::value::Value;
use rtbench_tooling::chunking::Chunking;
use rtbench_tooling::replay::{Candidate, CandidateState, Outcome, Paint, Replay, Role, StepKind};
use rtbench_tooling::sample::{Sample, expand, read_sample};

fn get<'a>(v: &'a Value, k: &str) -> &'a Value {
    v.as_dict().and_then(|d| d.get(k)).unwrap_or(&Value::Null)
}

fn template(json: &str) -> Template {
    load_template(&json_loads(json).unwrap()).unwrap()
}

fn smollm3() -> Template {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    load_file(&root.join("samples/smollm3/template.json"))
        .unwrap()
        .0
}

/// Every bundled sample with its template.
fn samples() -> Vec<(Template, Sample)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()) {
        // Format folders (the shared tokenizer's folder is not one).
        if !dir.join("template.json").is_file() {
            continue;
        }
        let (template, _) = load_file(&dir.join("template.json")).unwrap();
        for path in expand(&dir).unwrap() {
            // Conversations and token ids become text with the folder's model files.
            out.push((
                template.clone(),
                rtbench_tooling::model::prepare(
                    &read_sample(&path).unwrap(),
                    Some(&rtbench_tooling::model::Model::open(&dir)),
                )
                .unwrap(),
            ));
        }
    }
    assert!(!out.is_empty());
    out
}

fn replay_sample(template: &Template, s: &Sample, chunking: Chunking) -> Replay {
    let prefix = s.prefix.as_deref().unwrap_or("");
    Replay::new(
        template.clone(),
        prefix,
        &s.generation,
        s.tools.as_ref(),
        chunking,
    )
}

/// A recorded conformance case whose template loads and which has a prefix.
struct Corpus {
    name: String,
    template: Template,
    prefix: String,
    tools: Option<Value>,
    output: String,
    case: Value,
}

impl Corpus {
    fn replay(&self, chunking: Chunking) -> Replay {
        Replay::new(
            self.template.clone(),
            &self.prefix,
            &self.output,
            self.tools.as_ref(),
            chunking,
        )
    }
}

fn corpus() -> Vec<Corpus> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/engine/tests/data/conformance/shared");
    common::load_cases(&dir)
        .into_iter()
        .filter_map(|case| {
            // The cases were recorded from transformers 5.24.
            let template = load_template(get(&case, "template"))
                .ok()?
                .with_reference(rtbench_engine::Reference::V5_24);
            let prefix = get(&case, "prefix").as_str()?.to_string();
            Some(Corpus {
                name: get(&case, "name").as_str().unwrap_or("?").to_string(),
                template,
                prefix,
                tools: Some(get(&case, "tools"))
                    .filter(|t| !matches!(t, Value::Null))
                    .cloned(),
                output: get(&case, "output")
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                case,
            })
        })
        .collect()
}

#[test]
fn replays_reproduce_the_references_recorded_streams_step_by_step() {
    let mut streams = 0;
    for c in corpus() {
        for stream in get(&c.case, "streams").as_list().unwrap_or(&[]) {
            let label = get(stream, "label").as_str().unwrap_or("?");
            let chunks = common::recorded_chunks(stream);
            let r = c.replay(Chunking::Cuts(common::cuts_of(&chunks)));
            let feeds = get(stream, "feeds").as_list().unwrap_or(&[]);
            let expected_error = matches!(get(stream, "message"), Value::Null);
            let at = format!("{} [{label}]", c.name);
            check_steps(&r, stream, feeds, &chunks, &at);
            match r.outcome() {
                Outcome::Message(m) => {
                    let want = get(stream, "message");
                    assert!(Value::Dict(m.clone()).json_eq(want), "{at}");
                    let partial = r.partial_message(r.last_step());
                    assert!(partial.finished && partial.live.is_none(), "{at}");
                    assert!(
                        Value::Dict(partial.settled).json_eq(want),
                        "{at}: the client's message differs from the final message"
                    );
                }
                Outcome::Failed { .. } => assert!(expected_error, "{at}: unexpected error"),
            }
            streams += 1;
        }
    }
    assert!(streams > 1000, "only {streams} recorded streams");
}

/// Steps: the prefix, one per recorded feed (up to a failure), then finalize; each with the
/// recorded events and chunk.
fn check_steps(r: &Replay, stream: &Value, feeds: &[Value], chunks: &[String], at: &str) {
    assert_eq!(r.step(0).kind, StepKind::Prefix, "{at}");
    let initial = get(stream, "initial_events").as_list().unwrap_or(&[]);
    common::assert_events(&r.reference_events(0), initial, &format!("{at} initial"));
    let fed_steps = r
        .steps()
        .filter(|s| matches!(s.kind, StepKind::Feed { .. }))
        .count();
    if matches!(r.outcome(), Outcome::Message(_)) {
        assert_eq!(fed_steps, chunks.len(), "{at}");
        assert_eq!(r.step_count(), chunks.len() + 2, "{at}");
        let last = r.last_step();
        assert_eq!(r.step(last).kind, StepKind::Finalize, "{at}");
        let finals = get(stream, "final_events").as_list().unwrap_or(&[]);
        common::assert_events(&r.reference_events(last), finals, &format!("{at} final"));
    }
    for (i, feed) in feeds.iter().enumerate().take(fed_steps) {
        let step = i + 1;
        assert_eq!(r.step(step).kind, StepKind::Feed { index: i }, "{at}");
        assert_eq!(r.chunk_text(step), chunks[i], "{at} chunk {i}");
        if r.step(step).error.is_none() {
            common::assert_events(
                &r.reference_events(step),
                feed.as_list().unwrap(),
                &format!("{at} feed {i}"),
            );
        }
    }
}

#[test]
fn every_sample_ends_in_the_one_shot_message_at_every_chunk_size_1_to_8() {
    for (template, s) in samples() {
        let prefix = s.prefix.as_deref().unwrap_or("");
        let one_shot = parse_response(&template, Some(prefix), &s.generation, s.tools.as_ref());
        for n in 1..=8 {
            let r = replay_sample(&template, &s, Chunking::CodePoints(vec![n]));
            let at = format!("{} size {n}", s.path.display());
            match (&one_shot, r.outcome()) {
                (Ok(want), Outcome::Message(got)) => {
                    assert_eq!(got, want, "{at}");
                    let partial = r.partial_message(r.last_step());
                    assert_eq!(&partial.settled, want, "{at}: client message");
                }
                (Err(want), Outcome::Failed { step, error }) => {
                    assert_eq!(error.message, want.message, "{at}");
                    assert_eq!(*step, r.last_step(), "{at}");
                }
                (want, got) => panic!("{at}: {want:?} vs {got:?}"),
            }
        }
    }
}

#[test]
fn held_text_and_timeline_are_exactly_a_plain_streaming_run() {
    for (template, s) in samples() {
        for chunking in [
            Chunking::CodePoints(vec![1]),
            Chunking::CodePoints(vec![3, 5]),
            Chunking::Tokens,
            Chunking::Bytes(2),
        ] {
            let r = replay_sample(&template, &s, chunking.clone());
            let at = format!("{} {}", s.path.display(), chunking.label());
            let prefix = s.prefix.as_deref().unwrap_or("");
            let mut p =
                Parser::with_events(&template, Some(prefix), s.tools.as_ref(), Events::Reference)
                    .unwrap();
            let mut plain: Vec<(usize, Vec<Value>)> = Vec::new();
            let named = |evs: &[rtbench_engine::event::Event]| -> Vec<Value> {
                evs.iter()
                    .filter_map(|e| e.to_value(&template.fields()[e.field].name))
                    .collect()
            };
            plain.push((0, named(p.initial_events())));
            let mut live = LiveText::default();
            live.follow(p.initial_events());
            assert_eq!(r.step(0).held, p.held(), "{at} prefix");
            for step in 1..r.step_count() {
                if r.step(step).kind == StepKind::Finalize {
                    let evs = p.finalize().map(|(_, e)| e).unwrap_or_default();
                    plain.push((step, named(&evs)));
                    continue;
                }
                match p.feed(r.chunk_text(step)) {
                    Ok(evs) => {
                        live.follow(&evs);
                        plain.push((step, named(&evs)));
                    }
                    Err(e) => {
                        assert_eq!(r.step(step).error.as_ref(), Some(&e), "{at}");
                        break;
                    }
                }
                // The open region's text is its chunks joined.
                let shown = r.partial_message(step).live.map(|l| (l.field, l.text));
                assert_eq!(shown, live.0, "{at} step {step}");
                assert_eq!(r.step(step).held, p.held(), "{at} step {step}");
                assert_eq!(r.step(step).current, p.current_field(), "{at} step {step}");
                // The client's settled values are the parser's message so far, key order too.
                let settled = r.partial_message(step).settled;
                assert!(settled.iter().eq(p.output().iter()), "{at} step {step}");
            }
            // The flat timeline holds the same events in the same order, tagged with steps.
            let flat: Vec<(usize, Value)> = r
                .timeline(0..r.timeline_len())
                .iter()
                .filter_map(|t| {
                    let name = r.field_name(t.event.field);
                    t.event.to_value(name).map(|v| (t.step, v))
                })
                .collect();
            let expected: Vec<(usize, Value)> = plain
                .into_iter()
                .flat_map(|(step, evs)| evs.into_iter().map(move |v| (step, v)))
                .collect();
            assert_eq!(flat, expected, "{at}");
        }
    }
}

#[test]
fn a_long_stream_of_growing_lists_and_strings_replays_from_its_checkpoints_exactly() {
    // Thousands of steps, so that the parser is checkpointed many times while a repeating
    // field's list and a joined string grow (empty joins included): each checkpoint holds only
    // their lengths, and the events and messages rebuilt from it must be the stream's. The
    // second generation fails late, where the stored values after the failure lend them; in
    // the third the joined string stays empty, and the message drops it.
    let t = template(
        r#"{"start_anchor": "<s>", "fields": {
            "calls": {"open": "<c>", "close": "</c>", "repeats": true, "content": "json"},
            "notes": {"open": "<n>", "close": "</n>", "repeats": true, "join": ""},
            "content": {}}}"#,
    );
    let mut generation = String::from("<n></n>");
    for i in 0..400 {
        generation.push_str(&format!(
            "<c>{{\"a\": {i}}}</c> x<n>{}</n>",
            "y".repeat(i % 3)
        ));
    }
    let failing = format!("{generation}<c>{{bad</c>tail");
    let empty = format!("<n></n><n></n>{}", "z".repeat(6000));
    let cases = [
        ("<s><n>pre</n>", generation.as_str(), false),
        ("<s><n>pre</n>", failing.as_str(), true),
        ("<s>", empty.as_str(), false),
    ];
    for (prefix, text, fails) in cases {
        let r = Replay::new(t.clone(), prefix, text, None, Chunking::CodePoints(vec![1]));
        assert_eq!(matches!(r.outcome(), Outcome::Failed { .. }), fails);
        assert!(r.step_count() > 5 * 1024, "{} steps", r.step_count());
        let mut p = Parser::new(&t, Some(prefix), None).unwrap();
        let named = |evs: &[rtbench_engine::event::Event]| -> Vec<Value> {
            evs.iter()
                .filter_map(|e| e.to_value(&t.fields()[e.field].name))
                .collect()
        };
        let mut plain = named(p.initial_events());
        for step in 1..r.step_count() {
            if r.step(step).kind == StepKind::Finalize {
                plain.extend(named(&p.finalize().unwrap().1));
                break;
            }
            match p.feed(r.chunk_text(step)) {
                Ok(evs) => plain.extend(named(&evs)),
                Err(e) => {
                    assert_eq!(r.step(step).error.as_ref(), Some(&e));
                    break;
                }
            }
            if step % 97 == 0 || step + 3 > r.step_count() {
                let settled = r.partial_message(step).settled;
                assert!(settled.iter().eq(p.output().iter()), "step {step}");
            }
        }
        // Rebuilt from the checkpoints out of order, the events are the stream's.
        let n = r.timeline_len();
        assert_eq!(n, plain.len());
        for i in shuffled(n, 11).into_iter().step_by(37) {
            let e = r.timeline_event(i).expect("an event");
            assert_eq!(
                e.event.to_value(r.field_name(e.event.field)).as_ref(),
                Some(&plain[i])
            );
        }
    }
}

/// The open region's field and text, followed through a plain run's events.
#[derive(Default)]
struct LiveText(Option<(usize, String)>);

impl LiveText {
    fn follow(&mut self, events: &[rtbench_engine::event::Event]) {
        for e in events {
            match &e.kind {
                EventKind::Open => self.0 = Some((e.field, String::new())),
                EventKind::Chunk { text, .. } => {
                    if let Some((_, live)) = &mut self.0 {
                        live.push_str(text);
                    }
                }
                EventKind::Close { .. } => self.0 = None,
                EventKind::Discard { .. } => {}
            }
        }
    }
}

/// A small deterministic shuffle (no dependency for one test).
fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut x = seed | 1;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    order
}

#[test]
fn events_rebuilt_in_any_order_are_the_ones_streamed() {
    // Long enough for many parser checkpoints: every step's events are rebuilt from the one
    // before it, whatever was asked for last.
    let (template, prefix, text) = long_generation(20_000);
    for chunking in [
        Chunking::CodePoints(vec![1]),
        Chunking::CodePoints(vec![7, 2]),
        Chunking::Bytes(3),
    ] {
        let r = Replay::new(template.clone(), &prefix, &text, None, chunking.clone());
        let at = chunking.label();
        let mut p = Parser::with_events(&template, Some(&prefix), None, Events::Trace).unwrap();
        let mut streamed = vec![p.initial_events().to_vec()];
        for step in 1..r.step_count() {
            streamed.push(match r.step_kind(step) {
                StepKind::Finalize => p.finalize().unwrap().1,
                _ => p.feed(r.chunk_text(step)).unwrap(),
            });
        }
        assert!(streamed.len() > 3 * 256, "{at}: {} steps", streamed.len());
        for step in shuffled(streamed.len(), 7) {
            let got: Vec<_> = r.events(step).into_iter().map(|t| t.event).collect();
            assert_eq!(got, streamed[step], "{at} step {step}");
        }
        let flat: Vec<(usize, _)> = streamed
            .iter()
            .enumerate()
            .flat_map(|(step, evs)| evs.iter().map(move |e| (step, e)))
            .collect();
        assert_eq!(r.timeline_len(), flat.len(), "{at}");
        for i in shuffled(flat.len(), 11).into_iter().take(2000) {
            let t = r.timeline_event(i).unwrap();
            assert_eq!((t.step, &t.event), (flat[i].0, flat[i].1), "{at} event {i}");
            assert_eq!(r.step_of_event(i), flat[i].0, "{at} event {i}");
        }
        assert_eq!(r.timeline_event(flat.len()), None);
    }
}

#[test]
fn a_delimiter_split_across_chunks_is_held_with_its_candidate() {
    let generation = "Hello <think>plan</think>done<|im_end|>";
    let cut = "Hello <th".len();
    let r = Replay::new(
        smollm3(),
        "",
        generation,
        None,
        Chunking::Cuts(vec![cut, "Hello <think>plan</thi".len()]),
    );
    // After the first feed, "<th" is held: it can only be the start of the thinking open.
    assert_eq!(r.held_text(1), "<th");
    assert_eq!(r.step(1).held, 6..9);
    let thinking = r.template().field_index("thinking").unwrap();
    let tool_calls = r.template().field_index("tool_calls").unwrap();
    let content = r.template().field_index("content").unwrap();
    let candidates = r.held_candidates(1).unwrap();
    let starting_at_6: Vec<&Candidate> = candidates.iter().filter(|c| c.start == 6).collect();
    assert_eq!(starting_at_6.len(), 1, "{candidates:?}");
    assert_eq!(
        *starting_at_6[0],
        Candidate {
            field: thinking,
            role: Role::Open,
            delimiter: "'<think>'".into(),
            start: 6,
            state: CandidateState::Partial,
        }
    );
    // `<t` could also begin `<tool_call>`; it was ruled out by the `h`.
    assert!(candidates.iter().all(|c| c.field != tool_calls));
    assert!(candidates.iter().all(|c| c.field != content));
    // After the second feed the thinking region is open and its close is half fed.
    assert_eq!(r.held_text(2), "</thi");
    let c = r.held_candidates(2).unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].field, c[0].role, c[0].delimiter.as_str()),
        (thinking, Role::Close, "'</think>'")
    );
    // The last feed resolves everything: nothing is held, no candidates.
    assert_eq!(r.held_text(3), "");
    assert!(r.held_candidates(3).unwrap().is_empty());
}

#[test]
fn a_literal_that_a_longer_one_extends_is_reported_as_a_match_that_may_grow() {
    let t = template(
        r#"{"start_anchor": "<s>", "fields": {"thinking": {"open": "<think>",
            "close": ["</think>", "</think>\n\n"]}, "content": {}}}"#,
    );
    let text = "<think>plan</think>\n\nanswer";
    let r = Replay::new(t, "", text, None, Chunking::Cuts(vec![19]));
    assert_eq!(r.held_text(1), "</think>");
    let c = r.held_candidates(1).unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].state, CandidateState::MayGrow);
}

#[test]
fn regions_and_paint_show_the_stream_as_fed_so_far() {
    let generation = "<think>plan</think>done<|im_end|>tail";
    let r = Replay::new(
        smollm3(),
        "<|im_start|>assistant\n",
        generation,
        None,
        Chunking::Cuts(vec![9, 21]),
    );
    let p = "<|im_start|>assistant\n".len();
    let thinking = r.template().field_index("thinking").unwrap();
    // Step 1 fed "<think>pl": the thinking region is open with body "pl".
    let regions = r.regions_at(1);
    assert_eq!(regions.len(), 1);
    assert_eq!(regions[0].open, p..p + 7);
    assert_eq!(regions[0].body, p + 7..p + 9);
    assert_eq!(regions[0].close, None);
    let paint = r.paint(1);
    let painted: Vec<(std::ops::Range<usize>, Paint)> =
        paint.iter().map(|s| (s.range.clone(), s.paint)).collect();
    assert_eq!(r.regions().at(0).field, thinking);
    assert_eq!(
        painted,
        vec![
            (0..p, Paint::Cut),
            (p..p + 7, Paint::Open { region: 0 }),
            (p + 7..p + 9, Paint::Body { region: 0 }),
            (p + 9..r.document().len(), Paint::Unfed),
        ]
    );
    // At the end the segments cover the document without gaps or overlaps at every step.
    for step in 0..r.step_count() {
        let segs = r.paint(step);
        assert_eq!(segs.first().unwrap().range.start, 0);
        assert_eq!(segs.last().unwrap().range.end, r.document().len());
        assert!(segs.windows(2).all(|w| w[0].range.end == w[1].range.start));
    }
    let last = r.paint(r.last_step());
    let content = r.template().field_index("content").unwrap();
    assert!(last.iter().any(
        |s| matches!(s.paint, Paint::Close { region } if r.regions().at(region).field == content)
    ));
    assert!(!last.iter().any(|s| s.held || s.paint == Paint::Unfed));
}

#[test]
fn the_partial_message_follows_the_events_with_a_json_preview() {
    let (template, s) = samples()
        .into_iter()
        .find(|(_, s)| s.path.ends_with("weather-tool-call.sample"))
        .unwrap();
    let r = replay_sample(&template, &s, Chunking::CodePoints(vec![4]));
    let paris = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par";
    let doc = r.document();
    let at = doc.find(paris).unwrap() + paris.len();
    let step = r.step_feeding(at - 1);
    let partial = r.partial_message(step);
    assert!(!partial.finished);
    assert_eq!(
        partial
            .settled
            .get("thinking")
            .and_then(Value::as_str)
            .map(|t| t.starts_with("The user")),
        Some(true)
    );
    let live = partial
        .live
        .as_ref()
        .expect("a tool call is being streamed");
    assert_eq!(live.name, "tool_calls");
    assert!(live.dirty);
    let preview = live.preview.as_ref().expect("partial JSON has a preview");
    let city = get(get(&preview.value, "arguments"), "city")
        .as_str()
        .unwrap();
    assert!(
        "Paris".starts_with(city) && city.starts_with("Par"),
        "{city}"
    );
    // The live text is exactly the region's chunks: the body fed so far.
    let (region, body_end) = r.step(step).live.unwrap();
    let body = r.regions().at(region).body.start..body_end;
    assert_eq!(live.text, &doc[body]);
    // Shown in the message: the repeating field gets the raw text as its live item.
    let shown = partial.to_value(&template);
    assert_eq!(
        get(&shown, "tool_calls").as_list().map(<[Value]>::len),
        Some(1)
    );
}

#[test]
fn byte_chunks_that_cut_a_character_are_fed_as_replacement_characters() {
    let t = template(r#"{"start_anchor": "<s>", "fields": {"content": {}}}"#);
    let r = Replay::new(t, "", "aé!", None, Chunking::Bytes(2));
    // "a\xc3" and "\xa9!": each half of "é" becomes U+FFFD.
    assert_eq!(r.chunk_text(1), "a\u{fffd}");
    assert_eq!(r.chunk_text(2), "\u{fffd}!");
    let chunks: Vec<_> = r.steps().filter_map(|s| s.chunk.clone()).collect();
    assert_eq!(chunks[0].source, 0..2);
    assert_eq!(chunks[1].source, 2..4);
    assert_eq!((chunks[0].replaced, chunks[1].replaced), (1, 1));
    assert!(chunks[0].note().unwrap().contains("U+FFFD"));
    assert_eq!(r.document(), "a\u{fffd}\u{fffd}!");
    let whole = Replay::new(smollm3(), "", "aé!", None, Chunking::Bytes(8));
    assert_eq!(whole.step(1).chunk.as_ref().unwrap().replaced, 0);
    assert_eq!(whole.step(1).chunk.unwrap().note(), None);
}

#[test]
fn a_failing_feed_ends_the_replay_at_that_step() {
    let text = "<tool_call>{oops}</tool_call>never seen";
    let r = Replay::new(smollm3(), "", text, None, Chunking::CodePoints(vec![5]));
    let Outcome::Failed { step, error } = r.outcome() else {
        panic!("expected a failure");
    };
    assert_eq!(*step, r.last_step());
    assert!(matches!(r.step(*step).kind, StepKind::Feed { .. }));
    assert_eq!(r.step(*step).error.as_ref(), Some(error));
    assert_eq!(error.field.as_deref(), Some("tool_calls"), "{error}");
    // Fed up to the failing chunk ("all>n", which completes the close); the rest was never
    // fed, and stays in the document painted as such.
    assert_eq!(r.step(*step).fed_to, 30);
    assert_eq!(r.document(), text);
    let unfed = r
        .paint(*step)
        .into_iter()
        .find(|g| g.paint == Paint::Unfed)
        .unwrap();
    assert_eq!(unfed.range, 30..text.len());
    // The partial message at the failure still shows the tool call being streamed.
    let partial = r.partial_message(*step);
    assert!(!partial.finished);
    assert_eq!(partial.live.map(|l| l.text), Some("{oops}".to_string()));
}

#[test]
fn a_failing_finalize_is_the_last_step_and_a_bad_prefix_the_first() {
    let (template, s) = samples()
        .into_iter()
        .find(|(_, s)| s.path.ends_with("truncated-tool-call.sample"))
        .unwrap();
    let r = replay_sample(&template, &s, Chunking::CodePoints(vec![7]));
    let Outcome::Failed { step, .. } = r.outcome() else {
        panic!("a truncated tool call cannot parse");
    };
    assert_eq!(r.step(*step).kind, StepKind::Finalize);
    // A prefix whose prefilled region fails to parse fails at step 0.
    let t = template_with_int();
    let r = Replay::new(t, "<n>x</n>", "1", None, Chunking::Whole);
    assert!(matches!(r.outcome(), Outcome::Failed { step: 0, .. }));
    assert_eq!(r.step_count(), 1);
    assert!(r.partial_message(0).settled.is_empty());
}

fn template_with_int() -> Template {
    template(
        r#"{"start_anchor": "<s>", "fields": {"n": {"open": "<n>", "close": "</n>", "content": "int"}}}"#,
    )
}

#[test]
fn prefix_regions_come_first_and_the_cut_part_is_never_painted_as_fed() {
    let prefix = "<|im_start|>assistant\nold<|im_end|><|im_start|>assistant\n<think>";
    let r = Replay::new(
        smollm3(),
        prefix,
        "plan</think>ok",
        None,
        Chunking::CodePoints(vec![2]),
    );
    assert_eq!(r.origin(), prefix.len() - "<think>".len());
    assert_eq!(r.step(0).kind, StepKind::Prefix);
    assert!(matches!(r.events(0)[0].event.kind, EventKind::Open));
    assert_eq!(r.paint(0)[0].paint, Paint::Cut);
    assert_eq!(r.paint(0)[0].range, 0..r.origin());
    assert_eq!(r.step_feeding(0), 0);
    assert_eq!(r.step_feeding(prefix.len()), 1);
    assert_eq!(r.step_feeding(prefix.len() + 2), 2);
    assert_eq!(r.step_feeding(usize::MAX), r.last_step());
}

/// A long generation: the SmolLM3 samples' generations repeated to about `size` bytes.
fn long_generation(size: usize) -> (Template, String, String) {
    let all = samples();
    let (template, s) = all
        .iter()
        .find(|(_, s)| s.path.ends_with("weather-tool-call.sample"))
        .unwrap();
    let body = s.generation.replace("<|im_end|>", "\n");
    let mut text = String::new();
    while text.len() < size {
        text.push_str(&body);
    }
    text.push_str("<|im_end|>");
    (template.clone(), s.prefix.clone().unwrap(), text)
}

#[test]
fn a_long_chunk_1_replay_builds_in_linear_time() {
    let (template, prefix, text) = long_generation(200_000);
    let start = Instant::now();
    let r = Replay::new(
        template,
        &prefix,
        &text,
        None,
        Chunking::CodePoints(vec![1]),
    );
    let elapsed = start.elapsed();
    eprintln!(
        "replay of {} bytes in {} steps ({} events) built in {elapsed:?}",
        text.len(),
        r.step_count(),
        r.timeline_len()
    );
    assert!(matches!(r.outcome(), Outcome::Message(_)));
    assert_eq!(r.step_count(), text.chars().count() + 2);
    // Messages rebuilt from snapshots are the parser's message at that point.
    let mut p = Parser::new(r.template(), Some(&prefix), None).unwrap();
    for step in 1..r.last_step() {
        p.feed(r.chunk_text(step)).unwrap();
        if step % 997 == 0 {
            let settled = r.partial_message(step).settled;
            assert!(settled.iter().eq(p.output().iter()), "step {step}");
        }
    }
    // Jumping anywhere is cheap: the middle step rebuilds its message from the regions.
    let mid = r.step_count() / 2;
    let start = Instant::now();
    let _ = r.partial_message(mid);
    let _ = r.paint(mid);
    eprintln!("jump to step {mid}: {:?}", start.elapsed());
}

#[test]
fn every_view_of_every_step_holds_its_invariants_on_the_whole_corpus() {
    let mut steps = 0;
    for c in corpus() {
        for chunking in [
            Chunking::Bytes(3),
            Chunking::Random {
                seed: 5,
                min: 1,
                max: 6,
            },
            Chunking::Cuts(vec![7, 3, 1_000_000]),
        ] {
            let r = c.replay(chunking);
            // A parser fed alongside: the client's settled values must be its message so far.
            let mut p = Parser::new(&c.template, Some(&c.prefix), c.tools.as_ref()).ok();
            for step in 0..r.step_count() {
                let at = format!("{} [{}] step {step}", c.name, r.chunking().label());
                check_views(&r, step, &at);
                if let Some(parser) = p.as_mut()
                    && matches!(r.step(step).kind, StepKind::Feed { .. })
                    && parser.feed(r.chunk_text(step)).is_ok()
                {
                    let settled = r.partial_message(step).settled;
                    assert!(settled.iter().eq(parser.output().iter()), "{at}");
                }
                steps += 1;
            }
        }
    }
    assert!(steps > 10_000, "{steps}");
}

/// The painted document covers it in order; held text is painted as held and explained by a
/// pending delimiter starting exactly where it starts; the partial message can be shown.
fn check_views(r: &Replay, step: usize, at: &str) {
    let s = r.step(step);
    let segs = r.paint(step);
    assert_eq!(segs.first().map_or(0, |s| s.range.start), 0, "{at}");
    assert_eq!(
        segs.last().map_or(0, |s| s.range.end),
        r.document().len(),
        "{at}"
    );
    assert!(
        segs.windows(2)
            .all(|w| w[0].range.end == w[1].range.start && w[0].range.start < w[0].range.end),
        "{at}: {segs:?}"
    );
    // (After a failed step, held text is whatever the parser had not routed when it stopped.)
    if !s.held.is_empty() && s.error.is_none() {
        let held: Vec<_> = segs
            .iter()
            .filter(|g| g.held)
            .map(|g| g.range.clone())
            .collect();
        assert!(
            held.first().map(|h| h.start) == Some(s.held.start)
                && held.last().map(|h| h.end) == Some(s.held.end)
                && held.windows(2).all(|w| w[0].end == w[1].start),
            "{at}: held {:?} not painted: {segs:?}",
            s.held
        );
        let candidates = r.held_candidates(step).unwrap();
        let earliest = candidates
            .iter()
            .filter(|c| !matches!(c.state, CandidateState::Blocked { .. }))
            .map(|c| c.start)
            .min();
        assert_eq!(
            earliest,
            Some(s.held.start),
            "{at}: held {:?} after {:?}: {candidates:?}",
            r.held_text(step),
            r.chunk_text(step)
        );
    }
    let partial = r.partial_message(step);
    let _ = partial.to_value(r.template());
    if let Some(live) = &partial.live {
        let (region, end) = s.live.unwrap();
        let body = r.regions().at(region).body.start..end;
        assert_eq!(live.text, &r.document()[body], "{at}");
    }
}

/// Build time at growing sizes, fed one code point at a time (run in release with
/// `cargo test --release --test it replay::scaling -- --ignored --nocapture`).
#[test]
#[ignore]
fn scaling() {
    for size in [100_000, 200_000, 400_000, 800_000] {
        let (template, prefix, text) = long_generation(size);
        let g = rtbench_tooling::chunking::Generation {
            template: template.clone(),
            prefix: &prefix,
            tools: None,
            text: &text,
            ids: None,
        };
        let start = Instant::now();
        let _ = rtbench_tooling::chunking::run(&g, &Chunking::CodePoints(vec![1]));
        let plain = start.elapsed();
        let start = Instant::now();
        let r = Replay::new(
            template,
            &prefix,
            &text,
            None,
            Chunking::CodePoints(vec![1]),
        );
        eprintln!(
            "{size} bytes, {} steps: replay {:?}, plain stream {plain:?}",
            r.step_count(),
            start.elapsed()
        );
    }
}

#[test]
fn text_no_region_takes_is_painted_discarded_and_a_stall_is_explained() {
    // A `$` close matches before the final newline; with no implicit field that newline goes
    // to no region.
    let t = template(
        r#"{"start_anchor": "<s>", "fields": {"t": {"open": "<t>", "close_pattern": "</t>$"}}}"#,
    );
    let r = Replay::new(t, "", "<t>a</t>\n", None, Chunking::Whole);
    let last = r.paint(r.last_step());
    assert_eq!(last.last().unwrap().range, 8..9);
    assert_eq!(last.last().unwrap().paint, Paint::Discarded);
    // A zero-width close whose region never opened stops the parser: the rest is held for
    // good, and the reason given is the stalled close, not a pending delimiter.
    let t = template(
        r#"{"start_anchor": "<s>", "fields": {"content": {"close_pattern": "(?=<)"},
            "x": {"open": "<x>", "close": "</x>"}}}"#,
    );
    let r = Replay::new(t, "", "ab<y>lost<x>also</x>", None, Chunking::Cuts(vec![5]));
    assert_eq!(r.held_text(1), "<y>");
    let c = r.held_candidates(1).unwrap();
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].role, Role::Close);
    assert_eq!(c[0].state, CandidateState::Stalled { end: 2 });
}

#[test]
fn an_implicit_close_of_a_region_that_never_opened_is_painted_unrouted() {
    let t = template(
        r#"{"start_anchor": "<s>", "fields": {"content": {"close_pattern": "\\n\\s*\\n"},
            "x": {"open": "<x>", "close": "</x>"}}}"#,
    );
    let r = Replay::new(t, "", "<x>v</x>\n\n", None, Chunking::Whole);
    let last = r.paint(r.last_step());
    assert_eq!(last.last().unwrap().range, 8..10);
    assert_eq!(last.last().unwrap().paint, Paint::Unrouted);
}

#[test]
fn discarded_text_is_painted_as_far_as_each_step_had_discarded_it() {
    // Only explicit fields: everything between them goes to no region, a byte per feed.
    let t =
        template(r#"{"start_anchor": "<s>", "fields": {"t": {"open": "<t>", "close": "</t>"}}}"#);
    // "<t" alone is held back (it may start "<t>") and then discarded.
    let text = "lost <tx words <t>kept</t> more <t lost <t>x</t> tail";
    for chunking in [
        Chunking::CodePoints(vec![1]),
        Chunking::CodePoints(vec![3, 5]),
    ] {
        let r = Replay::new(t.clone(), "", text, None, chunking.clone());
        let events = r.timeline(0..r.timeline_len());
        for step in 0..r.step_count() {
            // What the stream had discarded by this step, byte by byte.
            let mut want = vec![false; text.len()];
            for e in events.iter().filter(|e| e.step <= step) {
                if let EventKind::Discard { .. } = e.event.kind {
                    want[e.event.span.clone()].fill(true);
                }
            }
            let mut got = vec![false; text.len()];
            for seg in r.paint(step) {
                if seg.paint == Paint::Discarded {
                    got[seg.range.clone()].fill(true);
                }
            }
            assert_eq!(got, want, "{} step {step}", chunking.label());
        }
    }
}
