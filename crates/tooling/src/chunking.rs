//! Chunkings of a generation and the chunking check: does any way of cutting the stream into
//! feeds change the parsed message or the sequence of regions, compared with the one-shot
//! parse? The reference's own results can depend on chunking (a complete delimiter match wins
//! over a longer partial one), so a template can be correct one-shot and wrong when streamed.

use std::borrow::Cow;

use crate::chunk_cause::{Cause, Stream};
use crate::diff::{Difference, diff, same, same_dicts};
use crate::progress::Progress;
use rtbench_engine::event::EventKind;
use rtbench_engine::parser::{Events, Parser};
use rtbench_engine::template::Template;
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::{Dict, Value};
use rtbench_tokenize::ids::{IdParser, Prefix};
use rtbench_tokenize::{ControlTokens, ModelTokenizer};

/// How a generation is cut into feeds.
#[derive(Clone, Debug, PartialEq)]
pub enum Chunking {
    /// The whole text in one feed (the one-shot parse).
    Whole,
    /// Chunks of these many code points, the list cycled.
    CodePoints(Vec<usize>),
    /// Random code-point sizes between `min` and `max`, from a seed.
    Random {
        /// The seed of the pseudo-random sizes (the same seed cuts the same way).
        seed: u64,
        /// The smallest chunk size, in code points.
        min: usize,
        /// The largest chunk size, in code points.
        max: usize,
    },
    /// Word and punctuation pieces, the way a tokenizer cuts text (a leading space stays with
    /// its word, each punctuation character is a piece, whitespace runs are pieces).
    Tokens,
    /// Chunks of this many UTF-8 bytes, each decoded on its own with U+FFFD for broken
    /// characters: what a streamer that decodes bytes naively delivers.
    Bytes(usize),
    /// Feeds that end at these byte offsets of the text.
    Cuts(Vec<usize>),
    /// The model's own tokens: one feed per token, the text an incremental detokenizer
    /// releases (feeds end at these byte offsets).
    ModelTokens(Vec<usize>),
    /// What the reference's TextStreamer prints: text released at word boundaries and line
    /// breaks (feeds end at these byte offsets).
    StreamerWords(Vec<usize>),
}

impl Chunking {
    /// A short description for reports, e.g. `size 3` or `random sizes 1-12 (seed 0)`.
    pub fn label(&self) -> String {
        match self {
            Chunking::Whole => "one feed".into(),
            Chunking::CodePoints(s) if s.len() == 1 => format!("size {}", s[0]),
            Chunking::CodePoints(s) => format!(
                "sizes {}",
                s.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            Chunking::Random { seed, min, max } => {
                format!("random sizes {min}-{max} (seed {seed})")
            }
            Chunking::Tokens => "word and punctuation tokens".into(),
            Chunking::Bytes(n) => format!("{n}-byte chunks decoded one by one"),
            Chunking::Cuts(c) => format!("{} cuts", c.len()),
            Chunking::ModelTokens(c) => format!("model tokens ({} feeds)", c.len() + 1),
            Chunking::StreamerWords(c) => format!("streamer words ({} feeds)", c.len() + 1),
        }
    }

    /// The feeds this chunking makes of `text`.
    pub fn chunks<'a>(&self, text: &'a str) -> Vec<Cow<'a, str>> {
        if let Chunking::Bytes(n) = self {
            return text
                .as_bytes()
                .chunks((*n).max(1))
                .map(|b| Cow::Owned(String::from_utf8_lossy(b).into_owned()))
                .collect();
        }
        let mut start = 0;
        let mut out = Vec::new();
        for end in self.cuts(text).into_iter().chain([text.len()]) {
            if end > start {
                out.push(Cow::Borrowed(&text[start..end]));
                start = end;
            }
        }
        out
    }

    /// Byte offsets (char boundaries, increasing, excluding 0 and the end) where feeds end.
    pub fn cuts(&self, text: &str) -> Vec<usize> {
        self.cut_points(text).collect()
    }

    /// [`Chunking::cuts`] one at a time: the size-based chunkings make them as they go, so a
    /// chunk-size-1 chunking of a long text holds no list of them.
    pub fn cut_points<'a>(&'a self, text: &'a str) -> Box<dyn Iterator<Item = usize> + 'a> {
        let bounds = text.char_indices().map(|(i, _)| i).skip(1);
        if let Some(cuts) = self.sized_cuts(bounds) {
            return cuts;
        }
        match self {
            Chunking::Tokens => Box::new(token_cuts(text).into_iter()),
            Chunking::Bytes(n) => {
                let n = (*n).max(1);
                Box::new((1..).map(move |k| k * n).take_while(|&b| b < text.len()))
            }
            Chunking::Cuts(c) | Chunking::ModelTokens(c) | Chunking::StreamerWords(c) => Box::new(
                c.iter()
                    .copied()
                    .filter(|&b| b > 0 && b < text.len() && text.is_char_boundary(b)),
            ),
            Chunking::Whole | Chunking::CodePoints(_) | Chunking::Random { .. } => {
                Box::new(std::iter::empty())
            }
        }
    }

    /// Where feeds end when the chunking cuts a sequence of `n` units that are not text (token
    /// ids): sizes count units and [`Chunking::Cuts`] holds unit indices. The chunkings that
    /// only make sense on text (words, bytes, the model's own pieces) make no cuts.
    pub fn unit_cuts(&self, n: usize) -> Vec<usize> {
        match self {
            Chunking::Cuts(c) => c.iter().copied().filter(|&i| i > 0 && i < n).collect(),
            _ => self
                .sized_cuts(1..n)
                .map_or_else(Vec::new, Iterator::collect),
        }
    }

    /// The cuts of a size-based chunking among `bounds` (the places a feed may end, in order;
    /// each one past a unit), or `None` for a chunking that is not size-based.
    fn sized_cuts<'a>(
        &'a self,
        bounds: impl Iterator<Item = usize> + 'a,
    ) -> Option<Box<dyn Iterator<Item = usize> + 'a>> {
        Some(match self {
            Chunking::Whole => Box::new(std::iter::empty()),
            Chunking::CodePoints(sizes) => {
                let size = |k: usize| sizes.get(k % sizes.len().max(1)).map_or(1, |&s| s.max(1));
                let (mut k, mut left) = (0, size(0));
                Box::new(bounds.filter(move |_| {
                    left -= 1;
                    if left == 0 {
                        k += 1;
                        left = size(k);
                        true
                    } else {
                        false
                    }
                }))
            }
            Chunking::Random { seed, min, max } => {
                let mut rng = SplitMix(*seed);
                let (min, max) = ((*min).max(1), (*max).max((*min).max(1)));
                let mut left = rng.between(min, max);
                Box::new(bounds.filter(move |_| {
                    left -= 1;
                    if left == 0 {
                        left = rng.between(min, max);
                        true
                    } else {
                        false
                    }
                }))
            }
            _ => return None,
        })
    }
}

/// Cut points of a tokenizer-like split: a word (with the single space before it), a run of
/// other whitespace, or one punctuation character make a piece each.
fn token_cuts(text: &str) -> Vec<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|&(_, c)| c);
    let mut cuts = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if word(c) || (c == ' ' && at(i + 1).is_some_and(word)) {
            i += 1;
            while at(i).is_some_and(word) {
                i += 1;
            }
        } else if c.is_whitespace() {
            i += 1;
            // A space right before a word belongs to that word.
            while at(i)
                .is_some_and(|c| c.is_whitespace() && !(c == ' ' && at(i + 1).is_some_and(word)))
            {
                i += 1;
            }
        } else {
            i += 1;
        }
        if let Some(&(b, _)) = chars.get(i) {
            cuts.push(b);
        }
    }
    cuts
}

/// A short description of a set of chunkings: `sizes 1-5, 7, random seeds 0, 3, tokens`.
pub fn summarize(chunkings: &[Chunking]) -> String {
    let mut sizes: Vec<usize> = Vec::new();
    let mut seeds: Vec<String> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    for c in chunkings {
        match c {
            Chunking::CodePoints(s) if s.len() == 1 => sizes.push(s[0]),
            Chunking::Random { seed, .. } => seeds.push(seed.to_string()),
            other => others.push(other.label()),
        }
    }
    let mut parts = Vec::new();
    if !sizes.is_empty() {
        let mut ranges: Vec<String> = Vec::new();
        let mut i = 0;
        while i < sizes.len() {
            let mut j = i;
            while j + 1 < sizes.len() && sizes[j + 1] == sizes[j] + 1 {
                j += 1;
            }
            ranges.push(if j > i {
                format!("{}-{}", sizes[i], sizes[j])
            } else {
                sizes[i].to_string()
            });
            i = j + 1;
        }
        parts.push(format!(
            "{} {}",
            if sizes.len() == 1 { "size" } else { "sizes" },
            ranges.join(", ")
        ));
    }
    if !seeds.is_empty() {
        parts.push(format!(
            "random {} {}",
            if seeds.len() == 1 { "seed" } else { "seeds" },
            seeds.join(", ")
        ));
    }
    parts.extend(others);
    parts.join("; ")
}

/// A small deterministic generator for random chunk sizes.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn between(&mut self, min: usize, max: usize) -> usize {
        min + (self.next() % (max - min + 1) as u64) as usize
    }
}

/// What a stream produced: the message (or the error), and each closed region in order.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamResult {
    /// The parsed message, or the parse error's text.
    pub message: Result<Dict, String>,
    /// `(field, value)` of every `region_close`, prefix regions included.
    pub regions: Vec<(String, Value)>,
}

impl StreamResult {
    /// The result as one value, for diffs: `{"message": ..., "regions": [[field, value], ...]}`
    /// (an error becomes `{"error": message}`).
    pub fn to_value(&self) -> Value {
        let mut d = Dict::new();
        d.insert(
            "message",
            match &self.message {
                Ok(m) => Value::Dict(m.clone()),
                Err(e) => Value::Dict(Dict::from_iter([(
                    "error".to_string(),
                    Value::from(e.as_str()),
                )])),
            },
        );
        d.insert(
            "regions",
            Value::List(
                self.regions
                    .iter()
                    .map(|(f, v)| Value::List(vec![Value::from(f.as_str()), v.clone()]))
                    .collect(),
            ),
        );
        Value::Dict(d)
    }

    /// Whether two results agree: the same message and the same regions, or the same error
    /// (the regions closed before an error depend on where the feeds were cut, not on the
    /// template: a stream that fails as the one-shot parse fails is not unstable).
    pub fn agrees_with(&self, other: &StreamResult) -> bool {
        let messages = match (&self.message, &other.message) {
            // Compared in place: building a diff (or copying both messages into values) for
            // every chunking tried was work thrown away whenever they agree.
            (Ok(a), Ok(b)) => same_dicts(a, b),
            (Err(a), Err(b)) => return a == b,
            _ => false,
        };
        messages
            && self.regions.len() == other.regions.len()
            && self
                .regions
                .iter()
                .zip(&other.regions)
                .all(|((f, v), (g, w))| f == g && same(v, w))
    }
}

/// The inputs of one generation.
#[derive(Clone)]
pub struct Generation<'a> {
    /// The response template the generation is parsed with.
    pub template: Template,
    /// The text before the generation (the prompt; empty when none was given).
    pub prefix: &'a str,
    /// The tool definitions given to the parser, if any.
    pub tools: Option<&'a Value>,
    /// The generated text the chunkings cut.
    pub text: &'a str,
    /// The generation as token ids, when it was given so: under a reference that parses ids
    /// (5.25) the chunkings cut the ids, and each stream goes through the token-id decoder.
    pub ids: Option<TokenInput<'a>>,
}

/// A generation given as token ids, with what parsing it needs.
#[derive(Clone, Copy)]
pub struct TokenInput<'a> {
    /// The generation's token ids.
    pub ids: &'a [u32],
    /// The prompt as ids, or text (encoded as the reference encodes it).
    pub prefix: Prefix<'a>,
    /// The model's tokenizer, which decodes the ids.
    pub tokenizer: &'a ModelTokenizer,
    /// The model's control tokens, which the token-id decoder defuses.
    pub control: &'a ControlTokens,
}

impl std::fmt::Debug for Generation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generation")
            .field("prefix", &self.prefix)
            .field("text", &self.text)
            .field("ids", &self.ids.map(|i| i.ids))
            .finish_non_exhaustive()
    }
}

impl Generation<'_> {
    /// The token ids the chunkings cut, when the generation is parsed as ids (the template's
    /// reference defuses control tokens); `None`: the chunkings cut the text.
    pub fn parsed_ids(&self) -> Option<&TokenInput<'_>> {
        self.ids
            .as_ref()
            .filter(|_| self.template.reference().defuses_control_tokens())
    }

    /// Where a chunking's feeds end: unit indices for ids, byte offsets for text.
    fn cuts(&self, chunking: &Chunking) -> Vec<usize> {
        match self.parsed_ids() {
            Some(t) => chunking.unit_cuts(t.ids.len()),
            None => chunking.cuts(self.text),
        }
    }
}

impl<'a> Generation<'a> {
    /// A sample's generation with its prefix (empty when it has none) and tools.
    pub fn of_sample(template: Template, sample: &'a crate::sample::Sample) -> Generation<'a> {
        Generation {
            template,
            prefix: sample.prefix.as_deref().unwrap_or(""),
            tools: sample.tools.as_ref(),
            text: &sample.generation,
            ids: None,
        }
    }
}

/// Streams the generation with a chunking.
pub fn run(generation: &Generation<'_>, chunking: &Chunking) -> StreamResult {
    let mut regions = Vec::new();
    let mut record = |template: &Template, events: &[rtbench_engine::event::Event]| {
        for e in events {
            if let EventKind::Close { value } = &e.kind {
                regions.push((template.fields()[e.field].name.clone(), value.clone()));
            }
        }
    };
    let template = &generation.template;
    if let Some(t) = generation.parsed_ids() {
        let message = (|| {
            let whole = matches!(chunking, Chunking::Whole);
            let mut p = IdParser::new(
                template,
                Some(t.prefix),
                generation.tools,
                t.tokenizer,
                t.control,
                Events::Reference,
                whole,
            )
            .map_err(|e| e.text())?;
            record(template, p.initial_events());
            let mut start = 0;
            for end in chunking
                .unit_cuts(t.ids.len())
                .into_iter()
                .chain([t.ids.len()])
            {
                let (evs, _) = p.feed(&t.ids[start..end]).map_err(|e| e.text())?;
                record(template, &evs);
                start = end;
            }
            let (message, evs, _) = p.finalize().map_err(|e| e.text())?;
            record(template, &evs);
            Ok(message)
        })();
        return StreamResult { message, regions };
    }
    let message = (|| {
        let mut p = Parser::new(template, Some(generation.prefix), generation.tools)
            .map_err(|e| e.text())?;
        record(template, p.initial_events());
        for chunk in chunking.chunks(generation.text) {
            let evs = p.feed(&chunk).map_err(|e| e.text())?;
            record(template, &evs);
        }
        let (message, evs) = p.finalize().map_err(|e| e.text())?;
        record(template, &evs);
        Ok(message)
    })();
    StreamResult { message, regions }
}

/// A chunking whose result differs from the one-shot parse.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// The chunking that was fed.
    pub chunking: Chunking,
    /// What the stream produced with it.
    pub result: StreamResult,
}

/// The outcome of [`check`].
#[derive(Clone, Debug)]
pub struct ChunkReport {
    /// The one-shot parse.
    pub baseline: StreamResult,
    /// Every chunking tried, in order.
    pub tried: Vec<Chunking>,
    /// The chunkings whose result differs from the one-shot parse, in the order tried.
    pub disagreements: Vec<Disagreement>,
    /// For the first disagreement: a smallest set of cut points (byte offsets) that still
    /// changes the result, found by removing cuts that do not matter.
    pub minimal_cuts: Option<Vec<usize>>,
    /// The result with the minimal cuts.
    pub minimal_result: Option<StreamResult>,
    /// The token ids the chunkings cut (their cuts are id indices), when the generation was
    /// parsed as ids.
    pub ids: Option<Vec<u32>>,
    /// The delimiter whose match made the minimal cuts change the result (text only), found
    /// by [`crate::chunk_cause::cause`]; [`ChunkReport::locate`] finds its key in the template.
    pub cause: Option<Cause>,
}

impl ChunkReport {
    /// Whether every chunking tried gives the one-shot parse's result.
    pub fn agrees(&self) -> bool {
        self.disagreements.is_empty()
    }

    /// The one-shot parse's error when every chunking fails with that same error: the parse
    /// fails, whatever the chunking (the template or the text is wrong, not the streaming).
    pub fn stable_error(&self) -> Option<&str> {
        self.baseline
            .message
            .as_ref()
            .err()
            .filter(|_| self.agrees())
            .map(String::as_str)
    }

    /// Finds the key of the delimiter blamed for the difference in the template's file.
    pub fn locate(&mut self, source: &TemplateSource) {
        if let Some(c) = &mut self.cause {
            c.locate(source);
        }
    }

    /// The report as text: one line when every chunking agrees (`name` is the generation's
    /// name), else which chunkings differ, the smallest, the fewest cuts that change the result
    /// (with the text around each) and the differences. `text` is the generation.
    pub fn describe(&self, name: &str, text: &str) -> String {
        let tried = format!(
            "{}{}",
            if self.ids.is_some() {
                "in token ids: "
            } else {
                ""
            },
            summarize(&self.tried)
        );
        // A parse that fails however it is cut is a failing parse, not an unstable one.
        if let Some(e) = self.stable_error() {
            return format!(
                "{e}\n  the parse of {name} fails with this error however the stream is cut: all {} chunkings fail with it, as the one-shot parse does ({tried}); `rtbench parse` shows where",
                self.tried.len()
            );
        }
        if self.agrees() {
            return format!(
                "{name}: all {} chunkings agree with the one-shot parse ({tried})",
                self.tried.len()
            );
        }
        let differing: Vec<_> = self
            .disagreements
            .iter()
            .map(|d| d.chunking.clone())
            .collect();
        let unit = if self.ids.is_some() {
            " (sizes in token ids)"
        } else {
            ""
        };
        let mut out = format!(
            "{} of {} chunkings change the result{unit}: {}\nsmallest: {}",
            differing.len(),
            self.tried.len(),
            summarize(&differing),
            differing[0].label()
        );
        if let Some(cuts) = &self.minimal_cuts {
            let n = cuts.len();
            out.push_str(&format!(
                "\nit takes {n} cut{} of the stream to change it:",
                if n == 1 { "" } else { "s" }
            ));
            for &c in cuts.iter().take(8) {
                if let Some(ids) = &self.ids {
                    let show = |s: &[u32]| {
                        let v: Vec<String> = s.iter().map(u32::to_string).collect();
                        v.join(", ")
                    };
                    out.push_str(&format!(
                        "\n  after id {c}: [{}] | [{}]",
                        show(&ids[c.saturating_sub(4)..c]),
                        show(&ids[c..(c + 4).min(ids.len())])
                    ));
                    continue;
                }
                let before: String = text[..c]
                    .chars()
                    .rev()
                    .take(16)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                let after: String = text[c..].chars().take(16).collect();
                out.push_str(&format!(
                    "\n  after code point {}: {} | {}",
                    text[..c].chars().count(),
                    Value::from(before.as_str()).py_repr(),
                    Value::from(after.as_str()).py_repr()
                ));
            }
            if n > 8 {
                out.push_str(&format!("\n  ... and {} more", n - 8));
            }
        }
        if let Some(c) = &self.cause {
            for line in c.lines() {
                out.push('\n');
                out.push_str(&line);
            }
        }
        out.push_str("\ndifference (one-shot parse -> chunked):");
        for d in self.differences().iter().take(20) {
            out.push_str(&format!("\n  {d}"));
        }
        out
    }

    /// How the first disagreeing result (with the minimal cuts when found) differs from the
    /// one-shot parse.
    pub fn differences(&self) -> Vec<Difference> {
        let Some(result) = self
            .minimal_result
            .as_ref()
            .or(self.disagreements.first().map(|d| &d.result))
        else {
            return Vec::new();
        };
        diff(&self.baseline.to_value(), &result.to_value())
    }
}

/// Which chunkings [`check`] tries.
#[derive(Clone, Debug)]
pub struct CheckPlan {
    /// Every code-point size from 1 to `max_size`.
    pub max_size: usize,
    /// This many seeded random chunkings (sizes 1 to 12).
    pub random: usize,
    /// The seed of the first random chunking (each further one adds 1).
    pub seed: u64,
    /// Also the tokenizer-like chunking.
    pub tokens: bool,
    /// The model's own chunkings of this generation (model tokens, streamer words), when its
    /// tokenizer is known.
    pub model: Vec<Chunking>,
}

impl Default for CheckPlan {
    fn default() -> CheckPlan {
        CheckPlan {
            max_size: 32,
            random: 8,
            seed: 0,
            tokens: true,
            model: Vec::new(),
        }
    }
}

impl CheckPlan {
    /// The plan for one generation: sizes past its length (in code points, or token ids when
    /// it is parsed as ids) are all one feed, so the largest size is cut to it; word pieces and
    /// the model's own text pieces (`model`, asked only for a text generation) cut text, not
    /// ids.
    pub fn fitted(
        &self,
        generation: &Generation<'_>,
        model: impl FnOnce() -> Vec<Chunking>,
    ) -> CheckPlan {
        let by_ids = generation.parsed_ids().map(|t| t.ids.len());
        let units = by_ids
            .unwrap_or_else(|| generation.text.chars().count())
            .max(1);
        CheckPlan {
            max_size: self.max_size.min(units),
            tokens: self.tokens && by_ids.is_none(),
            model: match by_ids {
                None => model(),
                Some(_) => Vec::new(),
            },
            ..self.clone()
        }
    }

    /// The chunkings to try, in order: the code-point sizes, the random ones, the
    /// tokenizer-like one and the model's own.
    pub fn chunkings(&self) -> Vec<Chunking> {
        let mut v: Vec<Chunking> = (1..=self.max_size)
            .map(|n| Chunking::CodePoints(vec![n]))
            .collect();
        v.extend((0..self.random as u64).map(|k| Chunking::Random {
            seed: self.seed.wrapping_add(k),
            min: 1,
            max: 12,
        }));
        if self.tokens {
            v.push(Chunking::Tokens);
        }
        v.extend(self.model.iter().cloned());
        v
    }
}

/// Whether every chunking of the plan gives the one-shot parse's result (stops at the first
/// that does not, without looking for the smallest disagreement as [`check`] does).
pub fn stable(generation: &Generation<'_>, plan: &CheckPlan) -> bool {
    let baseline = run(generation, &Chunking::Whole);
    if hit_budget(&baseline) {
        return true;
    }
    plan.chunkings().iter().all(|c| {
        let result = run(generation, c);
        result.agrees_with(&baseline) && !hit_budget(&result)
    })
}

/// Whether a run ended on the regex work budget. Each run has the budget of one stream, so
/// a check stops at the first such run instead of spending it again for every chunking.
fn hit_budget(result: &StreamResult) -> bool {
    matches!(&result.message, Err(m) if rtbench_engine::parser::is_budget_error(m))
}

/// Runs the generation through every chunking of the plan and compares each result with the
/// one-shot parse.
pub fn check(generation: &Generation<'_>, plan: &CheckPlan) -> ChunkReport {
    check_with(generation, plan, &Progress::default()).expect("a check nobody cancels ends")
}

/// [`check`] on another thread: `progress` counts the chunkings streamed (the search for the
/// fewest cuts that still disagree is the last unit), and the check stops (`None`) at the next
/// chunking or trial after it is cancelled.
pub fn check_with(
    generation: &Generation<'_>,
    plan: &CheckPlan,
    progress: &Progress,
) -> Option<ChunkReport> {
    let chunkings = plan.chunkings();
    progress.set_total(chunkings.len() + 2);
    let baseline = run(generation, &Chunking::Whole);
    progress.advance();
    let mut tried = Vec::new();
    let mut disagreements = Vec::new();
    if !hit_budget(&baseline) {
        for c in chunkings {
            if progress.is_cancelled() {
                return None;
            }
            let result = run(generation, &c);
            progress.advance();
            tried.push(c.clone());
            let stop = hit_budget(&result);
            if !result.agrees_with(&baseline) {
                disagreements.push(Disagreement {
                    chunking: c,
                    result,
                });
            }
            if stop {
                break;
            }
        }
    }
    let (minimal_cuts, minimal_result) = match disagreements.first() {
        Some(d) if !hit_budget(&d.result) => {
            // A cancelled search stops at once: every later trial "agrees".
            let cuts = minimize(generation.cuts(&d.chunking), |cuts| {
                !progress.is_cancelled()
                    && !run(generation, &Chunking::Cuts(cuts.to_vec())).agrees_with(&baseline)
            });
            if progress.is_cancelled() {
                return None;
            }
            let result = run(generation, &Chunking::Cuts(cuts.clone()));
            (Some(cuts), Some(result))
        }
        _ => (None, None),
    };
    // Cuts of token ids are no places in the text: only a text stream's delimiter is named.
    let cause = match (&minimal_cuts, generation.parsed_ids()) {
        (Some(cuts), None) => {
            let stream = Stream {
                template: &generation.template,
                prefix: generation.prefix,
                tools: generation.tools,
                text: generation.text,
            };
            crate::chunk_cause::cause(&stream, cuts)
        }
        _ => None,
    };
    progress.set_done(progress.counts().1);
    Some(ChunkReport {
        baseline,
        tried,
        disagreements,
        minimal_cuts,
        minimal_result,
        ids: generation.parsed_ids().map(|t| t.ids.to_vec()),
        cause,
    })
}

/// Removes cut points that the failure does not need (delta debugging on the cut list), with a
/// bounded number of trials.
fn minimize(mut cuts: Vec<usize>, fails: impl Fn(&[usize]) -> bool) -> Vec<usize> {
    let mut trials = 0;
    let mut parts = 2;
    while cuts.len() > 1 && trials < 4000 {
        let size = cuts.len().div_ceil(parts);
        let mut reduced = false;
        for start in (0..cuts.len()).step_by(size) {
            let candidate: Vec<usize> = cuts[..start]
                .iter()
                .chain(&cuts[(start + size).min(cuts.len())..])
                .copied()
                .collect();
            trials += 1;
            if fails(&candidate) {
                cuts = candidate;
                parts = (parts - 1).max(2);
                reduced = true;
                break;
            }
        }
        if !reduced {
            if size == 1 {
                break;
            }
            parts = (parts * 2).min(cuts.len());
        }
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(c: &Chunking, t: &str) -> Vec<String> {
        c.chunks(t).into_iter().map(Cow::into_owned).collect()
    }

    #[test]
    fn code_point_chunks_cycle_their_sizes() {
        assert_eq!(
            texts(&Chunking::CodePoints(vec![1, 2]), "aé😀bcd"),
            ["a", "é😀", "b", "cd"]
        );
        assert_eq!(texts(&Chunking::Whole, "abc"), ["abc"]);
        assert!(texts(&Chunking::Whole, "").is_empty());
        assert_eq!(texts(&Chunking::Cuts(vec![1, 3]), "abcd"), ["a", "bc", "d"]);
    }

    #[test]
    fn byte_chunks_break_multibyte_characters_like_a_naive_decoder() {
        assert_eq!(
            texts(&Chunking::Bytes(1), "aé"),
            ["a", "\u{fffd}", "\u{fffd}"]
        );
        assert_eq!(texts(&Chunking::Bytes(3), "aé"), ["aé"]);
    }

    #[test]
    fn token_chunks_follow_words_and_punctuation() {
        assert_eq!(
            texts(&Chunking::Tokens, "Hello world, <tool_call>{\"a\": 1}"),
            [
                "Hello",
                " world",
                ",",
                " ",
                "<",
                "tool_call",
                ">",
                "{",
                "\"",
                "a",
                "\"",
                ":",
                " 1",
                "}"
            ]
        );
    }

    #[test]
    fn random_chunkings_are_reproducible() {
        let c = Chunking::Random {
            seed: 7,
            min: 1,
            max: 4,
        };
        let t = "abcdefghijklmnopqrstuvwxyz";
        assert_eq!(texts(&c, t), texts(&c, t));
        assert_eq!(texts(&c, t).concat(), t);
        assert!(
            texts(&c, t)
                .iter()
                .all(|s| (1..=4).contains(&s.chars().count()))
        );
    }

    #[test]
    fn a_parse_that_fails_the_same_way_in_every_chunking_is_stable() {
        let template = Template::from_json_str(
            r#"{"start_anchor": "<a>", "fields": {"content": {"close": "<end>"},
                "call": {"open": "<call>", "close": "</call>", "content": "json"}}}"#,
        )
        .unwrap();
        let generation = Generation {
            template,
            prefix: "",
            tools: None,
            text: "Sure. <call>{\"name\": </call> more<end>",
            ids: None,
        };
        let report = check(&generation, &CheckPlan::default());
        assert!(report.agrees(), "{}", report.describe("g", generation.text));
        assert!(report.baseline.message.is_err());
        // The workbench's list mark says the same: no `≈` for it.
        assert!(stable(&generation, &CheckPlan::default()));
        assert_eq!(
            report.stable_error(),
            report.baseline.message.as_ref().err().map(String::as_str)
        );
        let said = report.describe("g", generation.text);
        assert!(
            said.starts_with("ValueError: json parser could not parse region as JSON.")
                && said.contains("\n  the parse of g fails with this error however the stream is cut: all 41 chunkings fail with it"),
            "{said}"
        );
    }

    #[test]
    fn minimize_keeps_only_the_cuts_that_matter() {
        let cuts: Vec<usize> = (1..100).collect();
        assert_eq!(minimize(cuts, |c| c.contains(&42)), vec![42]);
        let cuts: Vec<usize> = (1..50).collect();
        assert_eq!(
            minimize(cuts, |c| c.contains(&3) && c.contains(&40)),
            vec![3, 40]
        );
    }
}
