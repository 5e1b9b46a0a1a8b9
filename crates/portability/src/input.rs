//! What the report is built from: the samples, and the reference's own patterns.

use std::collections::HashMap;

use pyregex::{Flags, Regex};
use rtbench_tooling::sample::Sample;

/// One sample to replay: the parsed sample, its name and its file's text (for line:col).
pub struct SampleInput<'a> {
    /// The sample's name, as reports and divergences name it.
    pub name: String,
    /// The sample as parsed from its file: the text before the generation, the generation and
    /// what the reference made of it.
    pub sample: &'a Sample,
    /// The file's text, when the sample came from a file.
    pub file_text: Option<&'a str>,
}

/// The text before the generation (empty when the sample gives none).
pub(crate) fn prefix_of(sample: &Sample) -> &str {
    sample.prefix.as_deref().unwrap_or("")
}

/// A cache of reference patterns by source, for overrides that need the reference's answer.
#[derive(Default)]
pub(crate) struct ReferenceCache(HashMap<String, Option<Regex>>);

impl ReferenceCache {
    pub(crate) fn get(&mut self, pattern: &str) -> Option<&Regex> {
        self.0
            .entry(pattern.to_string())
            .or_insert_with(|| Regex::new(pattern, Flags { dotall: true }).ok())
            .as_ref()
    }
}
