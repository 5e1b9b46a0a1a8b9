//! The chunking check of one prepared sample, as `rtbench lint --chunkings` and `rtbench test
//! --chunkings` run it on every sample: the generation streamed with the plan's chunkings and
//! compared with the one-shot parse, token ids cut as ids where the reference parses them
//! (5.25), and with the model's own chunkings (its tokens, the TextStreamer's words) when the
//! model's tokenizer is known, as `rtbench chunks` does.

use crate::chunking::{CheckPlan, ChunkReport, Generation, check};
use crate::model::{Model, model_chunkings, token_input};
use crate::sample::Sample;
use rtbench_engine::template::Template;

/// Runs the chunking check of `plan` on a prepared sample (its prefix and generation are
/// text, or its generation token ids with `model`'s tokenizer). Sizes past the generation's
/// length are all one feed, so the plan's largest size is cut to it.
pub fn check_sample(
    template: &Template,
    sample: &Sample,
    model: Option<&Model>,
    plan: &CheckPlan,
) -> ChunkReport {
    let mut generation = Generation::of_sample(template.clone(), sample);
    generation.ids = model.and_then(|m| token_input(sample, m));
    let plan = plan.fitted(&generation, || {
        model
            .and_then(Model::tokenizer)
            .and_then(|tokenizer| {
                model_chunkings(
                    tokenizer,
                    &sample.generation,
                    sample.model.generation_ids.as_deref(),
                )
                .ok()
            })
            .unwrap_or_default()
    });
    check(&generation, &plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_sample_is_checked_with_the_plan_cut_to_its_length() {
        let template = Template::from_json_str(
            r#"{"start_anchor": "<a>", "fields": {
                "thinking": {"open": "<think>", "close": ["</think>", "</think>\n\n"]},
                "content": {"content_args": {"strip": false}}}}"#,
        )
        .unwrap();
        let stable = Sample::bare(Path::new("s.txt"), "<think>plan</think> answer".into());
        let report = check_sample(&template, &stable, None, &CheckPlan::default());
        assert!(report.agrees());
        // 26 sizes (the generation's length), 8 random chunkings, the word pieces.
        assert_eq!(report.tried.len(), 26 + 8 + 1);
        let unstable = Sample::bare(Path::new("s.txt"), "<think>plan</think>\n\nanswer".into());
        let report = check_sample(&template, &unstable, None, &CheckPlan::default());
        assert!(!report.agrees());
        assert_eq!(
            report.cause.map(|c| c.name()).as_deref(),
            Some("the close of 'thinking'")
        );
    }
}
