//! The chunking check against the reference: on every recorded case where the reference's own
//! result depends on the chunking, the check must find a disagreement, and for every chunking
//! the reference recorded, the check's verdict (agrees with the one-shot parse or not) must be
//! the reference's. Every bundled sample must pass the check.

use crate::common;

use std::path::Path;

use rtbench_engine::template::load_template;
use rtbench_engine::template::source::load_file;
use rtbench_engine::value::Value;
use rtbench_tooling::chunking::{CheckPlan, Chunking, Generation, check, check_with, run};
use rtbench_tooling::progress::Progress;
use rtbench_tooling::sample::{expand, read_sample};

fn get<'a>(v: &'a Value, k: &str) -> &'a Value {
    v.as_dict().and_then(|d| d.get(k)).unwrap_or(&Value::Null)
}

#[test]
fn verdicts_match_the_reference_on_chunking_dependent_cases() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/engine/tests/data/conformance/shared");
    let mut dependent = 0;
    // `load_cases` keeps `json_loads`: cases hold templates, and messages compared with Values.
    for case in common::load_cases(&dir) {
        let tags = get(&case, "tags").as_list().unwrap_or(&[]).to_vec();
        if !tags
            .iter()
            .any(|t| t.as_str() == Some("chunking-dependent"))
        {
            continue;
        }
        dependent += 1;
        let name = get(&case, "name").as_str().unwrap().to_string();
        let template = load_template(get(&case, "template")).unwrap();
        let tools = Some(get(&case, "tools")).filter(|t| !matches!(t, Value::Null));
        let generation = Generation {
            template,
            prefix: get(&case, "prefix").as_str().unwrap(),
            tools,
            text: get(&case, "output").as_str().unwrap(),
            ids: None,
        };
        let report = check(&generation, &CheckPlan::default());
        assert!(
            !report.agrees(),
            "{name}: the check found no chunking that changes the result"
        );
        // The reference's verdict for each recorded chunking: did its message differ from the
        // one-shot message?
        let one_shot = get(get(&case, "expect"), "message");
        for stream in get(&case, "streams").as_list().unwrap() {
            let cuts = common::cuts_of(&common::recorded_chunks(stream));
            let reference_differs = !one_shot.json_eq(get(stream, "message"));
            let ours = run(&generation, &Chunking::Cuts(cuts));
            let ours_differs = !one_shot.json_eq(&Value::Dict(ours.message.clone().unwrap()));
            let label = get(stream, "label").as_str().unwrap();
            assert_eq!(ours_differs, reference_differs, "{name} [{label}]");
        }
    }
    assert!(
        dependent >= 3,
        "expected the corpus to hold chunking-dependent cases, found {dependent}"
    );
}

#[test]
fn every_bundled_sample_passes_the_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut checked = 0;
    for dir in std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        // Format folders (the shared tokenizer's folder is not one).
        .filter(|p| p.join("template.json").is_file())
    {
        let (template, _) = load_file(&dir.join("template.json")).unwrap();
        for path in expand(&dir).unwrap() {
            // Conversations and token ids become text with the folder's model files; token ids
            // are cut as ids (the default reference parses them through its decoder).
            let model = rtbench_tooling::model::Model::open(&dir);
            let sample =
                rtbench_tooling::model::prepare(&read_sample(&path).unwrap(), Some(&model))
                    .unwrap();
            let generation = Generation {
                template: template.clone(),
                prefix: sample.prefix.as_deref().unwrap_or(""),
                tools: sample.tools.as_ref(),
                text: &sample.generation,
                ids: rtbench_tooling::model::token_input(&sample, &model),
            };
            let report = check(&generation, &CheckPlan::default());
            assert!(
                report.agrees(),
                "{}: {:?}",
                path.display(),
                report.differences()
            );
            checked += 1;
        }
    }
    assert!(checked > 0);
}

#[test]
fn a_check_counts_its_chunkings_and_stops_when_cancelled() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/smollm3");
    let (template, _) = load_file(&dir.join("template.json")).unwrap();
    let sample = read_sample(&dir.join("think-then-answer.sample")).unwrap();
    let generation = Generation {
        template,
        prefix: sample.prefix.as_deref().unwrap_or(""),
        tools: sample.tools.as_ref(),
        text: &sample.generation,
        ids: None,
    };
    let plan = CheckPlan::default();
    let progress = Progress::default();
    let report = check_with(&generation, &plan, &progress).unwrap();
    assert_eq!(
        report.describe("s", generation.text),
        check(&generation, &plan).describe("s", generation.text)
    );
    // Every chunking, the one-shot parse and the search for fewest cuts.
    let total = plan.chunkings().len() + 2;
    assert_eq!(progress.counts(), (total, total));
    assert_eq!(report.tried.len(), plan.chunkings().len());
    // Cancelled: nothing streamed after the one-shot parse.
    let progress = Progress::default();
    progress.cancel();
    assert!(check_with(&generation, &plan, &progress).is_none());
    assert_eq!(progress.counts(), (1, total));
}
