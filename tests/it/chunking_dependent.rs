//! A template whose result depends on how the stream is chunked, proven with the reference:
//! `tests/data/replay/*.json` hold what transformers' streaming parser produced at many
//! chunkings (recorded by `tools/replay/reference_chunkings.py`). The engine must reproduce every
//! recorded stream event for event, the chunking check must flag the template with the
//! smallest chunking that differs and a single cut that explains it, and the bundled samples
//! must stay clean under a wider check than the default one.

use crate::common;

use std::path::{Path, PathBuf};

use rtbench_engine::py::json_loads;
use rtbench_engine::template::load_template;
use rtbench_engine::template::source::load_file;
use rtbench_engine::value::Value;
use rtbench_tooling::chunking::{CheckPlan, Chunking, Generation, check, run, stable};
use rtbench_tooling::replay::{Outcome, Replay, StepKind};
use rtbench_tooling::sample::{expand, read_sample};
use serde::Deserialize;

fn get<'a>(v: &'a Value, k: &str) -> &'a Value {
    v.as_dict().and_then(|d| d.get(k)).unwrap_or(&Value::Null)
}

/// The test's own bookkeeping in a recording (names, chunk texts, the reference's verdicts):
/// plain JSON, read with `serde_json`.
#[derive(Deserialize)]
struct Recording {
    name: String,
    streams: Vec<RecordedStream>,
}

#[derive(Deserialize)]
struct RecordedStream {
    label: String,
    chunks: Vec<String>,
    differs: bool,
}

fn cases() -> Vec<(PathBuf, Recording, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    let cases: Vec<(PathBuf, Recording, Value)> = paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let recording =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            // Python json: template, tools, texts feed the engine; events and messages meet Values.
            let v = json_loads(&text).unwrap();
            (p, recording, v)
        })
        .collect();
    assert!(!cases.is_empty());
    cases
}

/// The chunking a recorded stream was made with, as the engine names it.
fn chunking_of(label: &str, chunks: &[String]) -> Chunking {
    match label.strip_prefix("size-") {
        Some(n) => Chunking::CodePoints(vec![n.parse().unwrap()]),
        None if label == "tokens" => Chunking::Tokens,
        None => Chunking::Cuts(common::cuts_of(chunks)),
    }
}

struct Case {
    name: String,
    recorded: Vec<RecordedStream>,
    value: Value,
    template: rtbench_engine::template::Template,
}

impl Case {
    fn load(recording: Recording, value: Value) -> Case {
        let template = load_template(get(&value, "template")).unwrap();
        Case {
            name: recording.name,
            recorded: recording.streams,
            value,
            template,
        }
    }

    fn generation(&self) -> Generation<'_> {
        let tools = Some(get(&self.value, "tools")).filter(|t| !matches!(t, Value::Null));
        Generation {
            template: self.template.clone(),
            prefix: get(&self.value, "prefix").as_str().unwrap(),
            tools,
            text: get(&self.value, "generation").as_str().unwrap(),
            ids: None,
        }
    }

    /// Each recorded stream: its label, chunks and verdict, and its events and message.
    fn streams(&self) -> impl Iterator<Item = (&RecordedStream, &Value)> {
        let streams = get(&self.value, "streams").as_list().unwrap();
        self.recorded.iter().zip(streams)
    }
}

#[test]
fn the_reference_really_differs_by_chunking() {
    for (path, recording, v) in cases() {
        let case = Case::load(recording, v);
        let differing = case.recorded.iter().filter(|s| s.differs).count();
        let agreeing = case.recorded.len() - differing;
        assert!(
            differing > 0 && agreeing > 0,
            "{}: the recorded reference results do not depend on chunking",
            path.display()
        );
        // The flag is honest: a differing stream's message is not the one-shot message.
        let whole = get(get(&case.value, "whole"), "message");
        for (recorded, s) in case.streams() {
            let differs = !get(s, "message").json_eq(whole);
            assert_eq!(differs, recorded.differs, "{}", case.name);
        }
    }
}

#[test]
fn the_engine_reproduces_every_recorded_stream_exactly() {
    for (_, recording, v) in cases() {
        let case = Case::load(recording, v);
        let g = case.generation();
        for (recorded, s) in case.streams() {
            let label = &recorded.label;
            let at = format!("{} [{label}]", case.name);
            let chunks = &recorded.chunks;
            // The engine cuts the text the way the recording did.
            let chunking = chunking_of(label, chunks);
            let ours: Vec<String> = chunking
                .chunks(g.text)
                .into_iter()
                .map(|c| c.into_owned())
                .collect();
            assert_eq!(&ours, chunks, "{at}: chunks");
            // Event for event, feed by feed, then the message.
            let r = Replay::new(
                g.template.clone(),
                g.prefix,
                g.text,
                g.tools,
                chunking.clone(),
            );
            let feeds = get(s, "feeds").as_list().unwrap();
            assert_eq!(r.step_count(), feeds.len() + 2, "{at}");
            common::assert_events(
                &r.reference_events(0),
                get(s, "initial_events").as_list().unwrap(),
                &at,
            );
            for (i, feed) in feeds.iter().enumerate() {
                assert_eq!(r.step(i + 1).kind, StepKind::Feed { index: i });
                common::assert_events(
                    &r.reference_events(i + 1),
                    feed.as_list().unwrap(),
                    &format!("{at} feed {i}"),
                );
            }
            let last = r.last_step();
            common::assert_events(
                &r.reference_events(last),
                get(s, "final_events").as_list().unwrap(),
                &at,
            );
            let Outcome::Message(message) = r.outcome() else {
                panic!("{at}: {:?}", r.outcome());
            };
            let want = get(s, "message");
            assert!(
                Value::Dict(message.clone()).json_eq(want),
                "{at}: {message:?} vs {want:?}"
            );
            // The plain stream run agrees with the replay.
            let plain = run(&g, &chunking);
            assert_eq!(plain.message.as_ref().ok(), Some(message), "{at}");
        }
    }
}

#[test]
fn the_check_flags_the_smallest_differing_chunking_and_one_cut_that_explains_it() {
    for (_, recording, v) in cases() {
        let case = Case::load(recording, v);
        let g = case.generation();
        let plan = CheckPlan::default();
        let report = check(&g, &plan);
        assert!(!report.agrees(), "{}", case.name);
        // The sample list's quick verdict says the same, with the workbench's smaller plan.
        assert!(!stable(&g, &plan), "{}", case.name);
        let quick = CheckPlan {
            max_size: 8,
            random: 4,
            seed: 0,
            tokens: true,
            model: Vec::new(),
        };
        assert_eq!(
            stable(&g, &quick),
            check(&g, &quick).agrees(),
            "{}",
            case.name
        );
        // Every recorded chunking the plan tries gets the reference's verdict.
        let recorded: Vec<(Chunking, bool)> = case
            .recorded
            .iter()
            .map(|s| (chunking_of(&s.label, &s.chunks), s.differs))
            .collect();
        for (chunking, differs) in &recorded {
            if report.tried.contains(chunking) {
                let flagged = report.disagreements.iter().any(|d| &d.chunking == chunking);
                assert_eq!(flagged, *differs, "{} {}", case.name, chunking.label());
            }
        }
        // The first disagreement is the smallest code-point size the reference differs at.
        let smallest = recorded
            .iter()
            .filter_map(|(c, differs)| match c {
                Chunking::CodePoints(s) if *differs => Some(s[0]),
                _ => None,
            })
            .min()
            .unwrap();
        assert_eq!(
            report.disagreements[0].chunking,
            Chunking::CodePoints(vec![smallest]),
            "{}",
            case.name
        );
        // The minimal cut list is a single cut the reference was recorded at, and that cut
        // alone gives the reference's differing message.
        let cuts = report.minimal_cuts.clone().unwrap();
        let minimal = recorded
            .iter()
            .position(|(c, _)| c == &Chunking::Cuts(cuts.clone()))
            .unwrap_or_else(|| panic!("{}: minimal cuts {cuts:?} were not recorded", case.name));
        let (meta, stream) = case.streams().nth(minimal).unwrap();
        eprintln!(
            "{}: {} of {} chunkings disagree, first {}; minimal cuts {cuts:?} ({})",
            case.name,
            report.disagreements.len(),
            report.tried.len(),
            report.disagreements[0].chunking.label(),
            meta.label
        );
        assert!(meta.differs);
        let ours = report
            .minimal_result
            .as_ref()
            .unwrap()
            .message
            .clone()
            .unwrap();
        assert!(Value::Dict(ours).json_eq(get(stream, "message")));
        assert!(!report.differences().is_empty());
    }
}

#[test]
fn every_bundled_sample_passes_a_wider_check() {
    let plan = CheckPlan {
        max_size: 64,
        random: 32,
        seed: 1,
        tokens: true,
        model: Vec::new(),
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut checked = 0;
    for dir in std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()) {
        // Format folders (the shared tokenizer's folder is not one).
        if !dir.join("template.json").is_file() {
            continue;
        }
        let (template, _) = load_file(&dir.join("template.json")).unwrap();
        for path in expand(&dir).unwrap() {
            // Conversations and token ids become text with the folder's model files; token ids
            // are cut as ids (the default reference parses them through its decoder).
            let model = rtbench_tooling::model::Model::open(&dir);
            let sample =
                rtbench_tooling::model::prepare(&read_sample(&path).unwrap(), Some(&model))
                    .unwrap();
            let g = Generation {
                template: template.clone(),
                prefix: sample.prefix.as_deref().unwrap_or(""),
                tools: sample.tools.as_ref(),
                text: &sample.generation,
                ids: rtbench_tooling::model::token_input(&sample, &model),
            };
            let report = check(&g, &plan);
            assert!(
                report.agrees(),
                "{}: {:?}",
                path.display(),
                report.differences()
            );
            assert_eq!(report.tried.len(), 64 + 32 + 1);
            checked += 1;
        }
    }
    assert!(checked > 0);
}
