//! The stream replay mode's state: the current sample streamed with a chosen chunking, the step
//! on screen, playback, and the timeline selection. Building the replay is the engine's
//! ([`rtbench_tooling::replay`]); this module only chooses what to build and which step to show.
//!
//! Every build runs on the runtime's replay lane and comes back as a
//! [`crate::workbench::protocol::Msg::Replay`]: even one feed of a long text, or a quadratic
//! stretch of a template's hold-back, would otherwise hold the screen. Until the first build
//! arrives the replay shows the sample's prefix; while a rebuild runs, the replay before it
//! stays on screen.

use std::sync::Arc;

use crate::workbench::analysis::Analysis;
pub use crate::workbench::protocol::ReplayBuilt;
use crate::workbench::runtime::{BackgroundPanic, Lane, Ticket};
use rtbench_engine::offsets::{CharIndex, line_starts};
use rtbench_tooling::chunking::Chunking;
use rtbench_tooling::replay::{Progress, Replay};

/// How the generation is cut into feeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkKind {
    /// Every feed `size` code points.
    CodePoints,
    /// A list of sizes in code points, cycled (typed with `:`).
    Sizes,
    /// Seeded random sizes from 1 to 12 code points.
    Random,
    /// Word and punctuation pieces, like a tokenizer's.
    Tokens,
    /// `size` UTF-8 bytes per feed, each decoded on its own (what a byte-level streamer that
    /// does not buffer split characters sends).
    Bytes,
    /// The model's own tokens, as an incremental detokenizer releases their text (only with
    /// the model's tokenizer).
    ModelTokens,
    /// The reference TextStreamer's word pieces (only with the model's tokenizer).
    StreamerWords,
}

impl ChunkKind {
    const ORDER: [ChunkKind; 7] = [
        ChunkKind::CodePoints,
        ChunkKind::Sizes,
        ChunkKind::Random,
        ChunkKind::Tokens,
        ChunkKind::Bytes,
        ChunkKind::ModelTokens,
        ChunkKind::StreamerWords,
    ];

    fn next(self) -> ChunkKind {
        let i = ChunkKind::ORDER
            .iter()
            .position(|k| *k == self)
            .unwrap_or(0);
        ChunkKind::ORDER[(i + 1) % ChunkKind::ORDER.len()]
    }
}

/// Playback speeds: milliseconds between steps.
pub(crate) const SPEEDS_MS: [u64; 7] = [1000, 500, 250, 120, 60, 30, 10];

/// Everything about the replay on screen.
#[derive(Debug)]
pub struct ReplayState {
    pub replay: Arc<Replay>,
    /// The sample it was built from (a new sample rebuilds it).
    pub sample_name: String,
    pub kind: ChunkKind,
    /// Chunk size for [`ChunkKind::CodePoints`] and [`ChunkKind::Bytes`].
    pub size: usize,
    pub sizes: Vec<usize>,
    pub seed: u64,
    pub step: usize,
    pub playing: bool,
    /// Index into [`SPEEDS_MS`].
    pub speed: usize,
    /// The timeline event selected (its text is highlighted in the raw view).
    pub selected_event: Option<usize>,
    /// Byte offset of every line start in the replay's document.
    pub line_starts: Vec<usize>,
    /// How many feed steps the replay has.
    pub feeds: usize,
    /// Code-point offsets of the replay's document, and its length in code points.
    pub chars: CharIndex,
    pub total_chars: usize,
    /// A replay being built on the replay lane, shown when it is ready.
    pending: Option<Pending>,
    /// What is shown is only the prefix, until the first replay is built.
    pub placeholder: bool,
    /// The model's chunkings of the sample (model tokens, streamer words), when it has a
    /// tokenizer.
    model: Vec<Chunking>,
    /// A generation of token ids parsed by the defusing decoder: the replay streams it one id
    /// per feed (its only chunking).
    ids: Option<Arc<crate::workbench::analysis::IdReplay>>,
    /// Where replays are built; `None` in states drawn by tests and tools, which build at
    /// once on the calling thread.
    lane: Option<Lane<ReplayBuilt>>,
}

/// The replay lane's name (its threads are `rtbench-replay`).
pub(crate) const REPLAY_LANE: &str = "replay";

/// Numbers the background builds: each replaces the builds before it on the replay lane.
static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// Starts a replay lane: every replay shares it (one build is wanted at a time). A built
/// replay goes to `built`, a panic to `panicked`.
pub fn lane(
    built: impl Fn(ReplayBuilt) + Send + Sync + 'static,
    panicked: impl Fn(BackgroundPanic) + Send + Sync + 'static,
) -> Lane<ReplayBuilt> {
    // One thread builds; one more may finish a build no longer wanted.
    Lane::start(REPLAY_LANE, 2, move |_, b| built(b), panicked)
}

/// A replay being built off the UI thread, and where to show it once built. Dropping it, for
/// whatever reason (a newer build, leaving the replay, Esc), stops the build.
#[derive(Debug)]
struct Pending {
    /// The build's number on the replay lane.
    seq: u64,
    progress: Arc<Progress>,
    fed: usize,
    at_end: bool,
    same_sample: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.progress.cancel();
    }
}

/// The chunk size (code points) a replay opens with: 1, or as many as keep a long generation
/// under `max_steps` feeds.
pub(crate) fn first_size(generation: &str, max_steps: usize) -> usize {
    if generation.len() <= max_steps {
        return 1;
    }
    generation.chars().count().div_ceil(max_steps.max(1)).max(1)
}

/// Chunk sizes as typed: `3`, `3,5,1`, `2 7` (code points, each at least 1).
pub(crate) fn parse_sizes(text: &str) -> Result<Vec<usize>, String> {
    let sizes: Vec<usize> = text
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| match s.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(format!("'{s}' is not a chunk size (a whole number from 1)")),
        })
        .collect::<Result<_, _>>()?;
    if sizes.is_empty() {
        return Err("give one or more chunk sizes, e.g. 3 or 3,5,1".into());
    }
    Ok(sizes)
}

impl ReplayState {
    /// Streams the analysed sample one code point at a time (or as many as keep the replay
    /// under `max_steps` steps) and shows the first step.
    pub fn new(a: &Analysis, max_steps: usize, lane: Option<&Lane<ReplayBuilt>>) -> ReplayState {
        let size = first_size(&a.sample.generation, max_steps);
        let background = lane.is_some();
        // Token ids parsed by the defusing decoder stream one id per feed.
        let kind = if a.id_replay.is_some() {
            ChunkKind::ModelTokens
        } else {
            ChunkKind::CodePoints
        };
        let first = match kind {
            ChunkKind::ModelTokens => a
                .model_chunkings
                .first()
                .cloned()
                .unwrap_or(Chunking::Whole),
            _ => Chunking::CodePoints(vec![size]),
        };
        let mut state = ReplayState {
            // The prefix at once, then the real replay once it has been built on the lane.
            replay: Arc::new(if background {
                placeholder(a)
            } else {
                build(a, &first)
            }),
            placeholder: background,
            sample_name: a.sample_name.clone(),
            kind,
            size,
            sizes: vec![3, 5, 1],
            seed: 1,
            step: 0,
            playing: false,
            speed: 3,
            selected_event: None,
            line_starts: Vec::new(),
            feeds: 0,
            chars: CharIndex::default(),
            total_chars: 0,
            pending: None,
            lane: lane.cloned(),
            model: a.model_chunkings.clone(),
            ids: a.id_replay.clone(),
        };
        state.refresh();
        if background {
            state.rebuild(a);
        }
        state
    }

    pub fn chunking(&self) -> Chunking {
        match self.kind {
            ChunkKind::CodePoints => Chunking::CodePoints(vec![self.size]),
            ChunkKind::Sizes => Chunking::CodePoints(self.sizes.clone()),
            ChunkKind::Random => Chunking::Random {
                seed: self.seed,
                min: 1,
                max: 12,
            },
            ChunkKind::Tokens => Chunking::Tokens,
            ChunkKind::Bytes => Chunking::Bytes(self.size),
            ChunkKind::ModelTokens => self.model_chunking(true).unwrap_or(Chunking::Tokens),
            ChunkKind::StreamerWords => self.model_chunking(false).unwrap_or(Chunking::Tokens),
        }
    }

    fn model_chunking(&self, tokens: bool) -> Option<Chunking> {
        self.model
            .iter()
            .find(|c| {
                if tokens {
                    matches!(c, Chunking::ModelTokens(_))
                } else {
                    matches!(c, Chunking::StreamerWords(_))
                }
            })
            .cloned()
    }

    /// Streams `a` again with the current chunking, staying at the same point of the text: the
    /// step that feeds what the old step had fed.
    pub fn rebuild(&mut self, a: &Analysis) {
        let fed = self.replay.step(self.step).fed_to;
        let at_end = self.step == self.replay.last_step();
        let same_sample = self.sample_name == a.sample_name;
        self.sample_name = a.sample_name.clone();
        self.model = a.model_chunkings.clone();
        self.ids = a.id_replay.clone();
        if !self.available(self.kind) {
            self.kind = if self.ids.is_some() {
                ChunkKind::ModelTokens
            } else {
                ChunkKind::CodePoints
            };
        }
        // A newer request replaces an older one, which stops.
        self.pending = None;
        let Some(lane) = &self.lane else {
            self.install(build(a, &self.chunking()), fed, at_end, same_sample);
            return;
        };
        let progress = Arc::new(Progress::default());
        let (template, sample, chunking, ids) = (
            a.template.clone(),
            Arc::clone(&a.sample),
            self.chunking(),
            a.id_replay.clone(),
        );
        let told = Arc::clone(&progress);
        let seq = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lane.submit(seq, move |ticket: &Ticket<ReplayBuilt>| {
            // A cancelled build leaves nothing; a panic reaches the screen through the lane.
            if let Some(replay) = build_from(&template, &sample, ids.as_deref(), chunking, &told) {
                ticket.reply(ReplayBuilt {
                    seq,
                    replay: Box::new(replay),
                });
            }
        });
        self.playing = false;
        self.pending = Some(Pending {
            seq,
            progress,
            fed,
            at_end,
            same_sample,
        });
    }

    /// Shows a newly built replay at the step nearest to where the old one was.
    fn install(&mut self, replay: Replay, fed: usize, at_end: bool, same_sample: bool) {
        self.placeholder = false;
        self.replay = Arc::new(replay);
        self.refresh();
        self.step = if !same_sample {
            0
        } else if at_end {
            self.replay.last_step()
        } else {
            self.step_at(fed)
        };
        self.selected_event = None;
    }

    /// Whether a replay is being built on another thread.
    pub fn is_building(&self) -> bool {
        self.pending.is_some()
    }

    /// How far the replay being built has got, as a percentage of the generation.
    pub fn building_percent(&self) -> Option<usize> {
        let p = self.pending.as_ref()?;
        Some(p.progress.percent().unwrap_or(0))
    }

    /// Stops the replay being built, if any (the replay on screen stays).
    pub fn cancel(&mut self) {
        self.pending = None;
    }

    /// Shows a replay built on the lane if it is the build awaited; true when it was (an
    /// older build, replaced or stopped, is dropped).
    pub fn built(&mut self, b: ReplayBuilt) -> bool {
        let Some(p) = self.pending.take_if(|p| p.seq == b.seq) else {
            return false;
        };
        self.install(*b.replay, p.fed, p.at_end, p.same_sample);
        true
    }

    /// Build number `seq` panicked: if it is the one awaited, the wait ends (the replay shown
    /// stays; a first build leaves only the prefix on screen). True when it was awaited.
    pub fn build_failed(&mut self, seq: u64) -> bool {
        if self.pending.as_ref().is_some_and(|p| p.seq == seq) {
            self.pending = None;
            return true;
        }
        false
    }

    /// What is derived from the replay once per build.
    fn refresh(&mut self) {
        let doc = self.replay.document();
        self.line_starts = line_starts(doc);
        self.chars = CharIndex::new(doc);
        self.total_chars = self.chars.chars_at(doc, doc.len());
        self.feeds = self.replay.feed_count();
    }

    /// The step whose fed text ends nearest to `fed` (document offset), so that switching
    /// chunkings back and forth does not drift along the text.
    fn step_at(&self, fed: usize) -> usize {
        let r = &self.replay;
        if fed <= r.step(0).fed_to {
            return 0;
        }
        let after = r.step_feeding(fed.saturating_sub(1)).min(r.last_step());
        let before = after.saturating_sub(1);
        let distance = |s: usize| r.step(s).fed_to.abs_diff(fed);
        if distance(before) < distance(after) {
            before
        } else {
            after
        }
    }

    pub fn interval(&self) -> std::time::Duration {
        std::time::Duration::from_millis(SPEEDS_MS[self.speed.min(SPEEDS_MS.len() - 1)])
    }

    /// Moves to `step` (clamped); the timeline selection follows to that step's first event.
    pub fn go(&mut self, step: isize) {
        let last = self.replay.last_step() as isize;
        self.step = step.clamp(0, last) as usize;
        let events = self.replay.step(self.step).events;
        self.selected_event = (!events.is_empty()).then_some(events.start);
        if self.step as isize == last {
            self.playing = false;
        }
    }

    pub fn forward(&mut self, n: isize) {
        self.go(self.step as isize + n);
    }

    /// One tick of the clock: while playing, the next step (stopping at the end); while a
    /// replay is built, its progress moves. True when the screen must be redrawn.
    pub fn tick(&mut self) -> bool {
        if self.is_building() {
            return true;
        }
        if self.playing {
            let before = self.step;
            self.forward(1);
            return self.step != before;
        }
        false
    }

    pub fn toggle_play(&mut self) {
        if self.step == self.replay.last_step() {
            // Playing from the end starts over.
            self.go(0);
        }
        self.playing = !self.playing;
    }

    /// `+` / `-`: the chunk size (or the random seed) up or down; `false` when nothing
    /// changed.
    pub fn adjust(&mut self, delta: isize) -> bool {
        match self.kind {
            ChunkKind::CodePoints | ChunkKind::Bytes => {
                let new = (self.size as isize + delta).clamp(1, 4096) as usize;
                let changed = new != self.size;
                self.size = new;
                changed
            }
            ChunkKind::Random => {
                self.seed = self.seed.wrapping_add_signed(delta as i64);
                true
            }
            ChunkKind::Sizes
            | ChunkKind::Tokens
            | ChunkKind::ModelTokens
            | ChunkKind::StreamerWords => false,
        }
    }

    /// The next chunking kind this sample has (the model's need its tokenizer).
    pub fn next_kind(&mut self) {
        let mut k = self.kind.next();
        while !self.available(k) {
            k = k.next();
        }
        self.kind = k;
    }

    fn available(&self, kind: ChunkKind) -> bool {
        // Token ids are fed as ids: the only chunking is one id per feed.
        if self.ids.is_some() {
            return kind == ChunkKind::ModelTokens;
        }
        match kind {
            ChunkKind::ModelTokens => self.model_chunking(true).is_some(),
            ChunkKind::StreamerWords => self.model_chunking(false).is_some(),
            _ => true,
        }
    }

    pub fn faster(&mut self, faster: bool) {
        self.speed = if faster {
            (self.speed + 1).min(SPEEDS_MS.len() - 1)
        } else {
            self.speed.saturating_sub(1)
        };
    }

    /// Selects a timeline event and shows the step that produced it.
    pub fn select_event(&mut self, i: usize) {
        let n = self.replay.timeline_len();
        if n == 0 {
            return;
        }
        let i = i.min(n - 1);
        self.step = self.replay.step_of_event(i);
        self.selected_event = Some(i);
        self.playing = false;
    }

    pub fn move_selection(&mut self, delta: isize) {
        let n = self.replay.timeline_len();
        if n == 0 {
            return;
        }
        let to = match self.selected_event {
            Some(from) => from as isize + delta,
            // Nothing selected: the step's events start at the next event, which ↓ selects
            // first; ↑ selects the one before it.
            None => {
                let next = self.replay.step(self.step).events.start as isize;
                if delta > 0 {
                    next + delta - 1
                } else {
                    next + delta
                }
            }
        };
        self.select_event(to.clamp(0, n as isize - 1) as usize);
    }

    /// A short label of the chunking (`size 3`, `sizes 3,5,1`, `random seed 2`, ...).
    pub fn label(&self) -> String {
        match self.kind {
            ChunkKind::CodePoints => format!("size {} cp", self.size),
            ChunkKind::Sizes => format!(
                "sizes {} cp",
                self.sizes
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            ChunkKind::Random => format!("random 1-12 cp, seed {}", self.seed),
            ChunkKind::Tokens => "tokens".into(),
            ChunkKind::Bytes if self.size == 1 => "1 byte".into(),
            ChunkKind::Bytes => format!("{} bytes", self.size),
            ChunkKind::ModelTokens if self.ids.is_some() => "token ids, 1 per feed".into(),
            ChunkKind::ModelTokens => "model tokens".into(),
            ChunkKind::StreamerWords => "streamer words".into(),
        }
    }
}

/// The prefix alone, streamed: what a large sample's replay shows while it is built.
fn placeholder(a: &Analysis) -> Replay {
    let s = &a.sample;
    Replay::new(
        a.template.clone(),
        s.prefix.as_deref().unwrap_or(""),
        "",
        s.tools.as_ref(),
        Chunking::Whole,
    )
}

fn build(a: &Analysis, chunking: &Chunking) -> Replay {
    let never = Progress::default();
    build_from(
        &a.template,
        &a.sample,
        a.id_replay.as_deref(),
        chunking.clone(),
        &never,
    )
    .expect("a replay nobody cancels is built")
}

/// Streams a sample: its text, or the text its token ids released one id per feed (parsed as
/// the defusing decoder's output, its flush added by the finalize step).
fn build_from(
    template: &rtbench_engine::template::Template,
    s: &rtbench_tooling::sample::Sample,
    ids: Option<&crate::workbench::analysis::IdReplay>,
    chunking: Chunking,
    progress: &Progress,
) -> Option<Replay> {
    match ids {
        Some(r) if matches!(chunking, Chunking::ModelTokens(_)) => Replay::build_with(
            template.clone(),
            &r.prefix,
            &r.generation,
            s.tools.as_ref(),
            chunking,
            progress,
            &rtbench_tooling::replay::Feeding {
                token_ids: true,
                tail: r.tail.clone(),
            },
        ),
        _ => Replay::build(
            template.clone(),
            s.prefix.as_deref().unwrap_or(""),
            &s.generation,
            s.tools.as_ref(),
            chunking,
            progress,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_whole_numbers_from_one() {
        assert_eq!(parse_sizes("3,5 1"), Ok(vec![3, 5, 1]));
        assert!(parse_sizes("3,0").unwrap_err().contains("'0'"));
        assert!(parse_sizes(" ").is_err());
        assert!(parse_sizes("x").is_err());
    }

    #[test]
    fn kinds_cycle_through_all() {
        let mut k = ChunkKind::CodePoints;
        let mut seen = vec![k];
        for _ in 0..ChunkKind::ORDER.len() - 1 {
            k = k.next();
            seen.push(k);
        }
        assert_eq!(seen, ChunkKind::ORDER.to_vec());
        assert_eq!(k.next(), ChunkKind::CodePoints);
    }
}
