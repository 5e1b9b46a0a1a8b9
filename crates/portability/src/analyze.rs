//! Replays every search a sample's parse made on each engine and finds the first divergence
//! per (engine, pattern, sample), with its cause and its effect on the message.

use std::rc::Rc;

use pyregex::hook::{self, Call, CallKind, Outcome, Override, Spans};
use pyregex::{Flags, Regex};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};
use rtbench_engine::{ParseError, parse_response};
use rtbench_tooling::progress::Progress;
use rtbench_tooling::sample::Sample;

use crate::cause;
use crate::compiled::{Slot, agrees, compile, replay};
use crate::engine::{Compiled, EngineKind};
use crate::input::{SampleInput, prefix_of};
use crate::report::{Divergence, FieldRow, MessageChange, PortabilityReport, Verdict};
use crate::sites::{Site, sites};

/// Replays at most this many searches per sample and pattern (a long sample makes many).
const MAX_CALLS: usize = 20_000;

/// Builds the whole report.
pub fn analyze(
    template: &Template,
    samples: &[SampleInput<'_>],
    engines: &[EngineKind],
) -> PortabilityReport {
    analyze_with(template, samples, engines, &Progress::default())
        .expect("an analysis nobody cancels ends")
}

/// [`analyze`] on another thread: `progress` counts the samples replayed and then the samples
/// checked without partial matching, and the analysis stops (`None`) at the next sample after
/// it is cancelled.
pub fn analyze_with(
    template: &Template,
    samples: &[SampleInput<'_>],
    engines: &[EngineKind],
    progress: &Progress,
) -> Option<PortabilityReport> {
    progress.set_total(2 * samples.len());
    let sites = sites(template);
    let mut rows: Vec<FieldRow> = Vec::new();
    // Per site and engine: the compiled pattern.
    let mut slots: Vec<Vec<Slot>> = Vec::new();
    for site in &sites {
        let compiled: Vec<Slot> = engines.iter().map(|e| compile(&site.pattern, *e)).collect();
        rows.push(FieldRow {
            field: site.field.clone(),
            key: site.key.clone(),
            path: site.path.clone(),
            pattern: site.pattern.clone(),
            verdicts: compiled
                .iter()
                .map(|s| match s {
                    Slot::Ready(_) => Verdict::Same { calls: 0 },
                    Slot::Refused(c) => Verdict::NotExpressible {
                        construct: c.clone(),
                    },
                    Slot::Unavailable => Verdict::Unavailable,
                })
                .collect(),
            translations: compiled
                .iter()
                .map(|s| match s {
                    Slot::Ready(c) => Some(c.translated.clone()),
                    _ => None,
                })
                .collect(),
        });
        slots.push(compiled);
    }
    for input in samples {
        if progress.is_cancelled() {
            return None;
        }
        let run = record(template, input.sample);
        for (si, site) in sites.iter().enumerate() {
            let calls: Vec<&Call> = run
                .calls
                .iter()
                .filter(|c| c.dotall && *c.pattern == *site.pattern)
                .take(MAX_CALLS)
                .collect();
            for (ei, engine) in engines.iter().enumerate() {
                let Slot::Ready(compiled) = &slots[si][ei] else {
                    continue;
                };
                let mut first = None;
                for call in &calls {
                    let got = replay(compiled, call);
                    if !agrees(call.kind, &call.outcome, &got) {
                        first = Some(((*call).clone(), got));
                        break;
                    }
                }
                let verdict = &mut rows[si].verdicts[ei];
                match (first, &mut *verdict) {
                    (None, Verdict::Same { calls: n }) => *n += calls.len(),
                    (None, _) => {}
                    (Some(_), Verdict::Differs { samples, .. }) => *samples += 1,
                    (Some((call, got)), v) => {
                        let d =
                            divergence(template, input, &run, site, *engine, compiled, &call, got);
                        *v = Verdict::Differs {
                            samples: 1,
                            first: Box::new(d),
                        };
                    }
                }
            }
        }
        progress.advance();
    }
    let mut partial = Vec::with_capacity(samples.len());
    for s in samples {
        if progress.is_cancelled() {
            return None;
        }
        partial.push(crate::partial::check(template, s));
        progress.advance();
    }
    Some(PortabilityReport {
        engines: engines.to_vec(),
        fields: rows,
        samples: samples.len(),
        partial,
    })
}

/// A recorded reference parse.
pub(crate) struct Run {
    pub calls: Vec<Call>,
    pub message: Result<Dict, ParseError>,
    /// The document (prefix + generation) and where the parser's text starts in it.
    pub document: String,
    pub origin: usize,
}

/// Parses the sample with the hook recording every search.
pub(crate) fn record(template: &Template, sample: &Sample) -> Run {
    let prefix = prefix_of(sample);
    let (message, calls) = hook::run(None, || {
        parse_response(
            template,
            Some(prefix),
            &sample.generation,
            sample.tools.as_ref(),
        )
    });
    let origin = template
        .start_anchor()
        .last_match_end(prefix)
        .ok()
        .flatten()
        .unwrap_or(0);
    Run {
        calls,
        message,
        document: format!("{prefix}{}", sample.generation),
        origin,
    }
}

#[allow(clippy::too_many_arguments)]
fn divergence(
    template: &Template,
    input: &SampleInput<'_>,
    run: &Run,
    site: &Site,
    engine: EngineKind,
    compiled: &Rc<Compiled>,
    call: &Call,
    got: Outcome,
) -> Divergence {
    let base = hay_base(run, &call.hay);
    let at = first_difference_at(&call.outcome, &got).unwrap_or(call.pos);
    let doc_offset = base.map(|b| b + at);
    let line_col = doc_offset.and_then(|d| sample_line_col(input, d));
    let cause = cause::find(&site.pattern, engine, call, &got);
    let message_change = message_change(template, input.sample, run, site, compiled);
    let text = |o: &Outcome| match o {
        Outcome::Match(s) => s[0]
            .and_then(|(a, b)| call.hay.get(a..b))
            .map(str::to_string),
        Outcome::All(all) => Some(
            all.iter()
                .filter_map(|s| s[0].and_then(|(a, b)| call.hay.get(a..b)))
                .collect::<Vec<_>>()
                .join(" | "),
        ),
        _ => None,
    };
    let shift = |o: &Outcome| base.map_or(o.clone(), |b| shift_outcome(o, b));
    Divergence {
        sample: input.name.clone(),
        kind: call.kind,
        pos: base.map_or(call.pos, |b| b + call.pos),
        doc_offset,
        line_col,
        texts: (text(&call.outcome), text(&got)),
        reference: shift(&call.outcome),
        engine: shift(&got),
        cause,
        message_change,
    }
}

/// Where the parser's text `hay` starts in the document.
fn hay_base(run: &Run, hay: &str) -> Option<usize> {
    let h = hay.strip_suffix('\0').unwrap_or(hay);
    if run
        .document
        .get(run.origin..)
        .is_some_and(|d| d.starts_with(h))
    {
        return Some(run.origin);
    }
    run.document.find(h)
}

fn shift_outcome(o: &Outcome, base: usize) -> Outcome {
    let sh = |s: &Spans| -> Spans {
        s.iter()
            .map(|g| g.map(|(a, b)| (a + base, b + base)))
            .collect()
    };
    match o {
        Outcome::Match(s) => Outcome::Match(sh(s)),
        Outcome::All(all) => Outcome::All(all.iter().map(sh).collect()),
        Outcome::Partial(p) => Outcome::Partial(p + base),
        other => other.clone(),
    }
}

/// The earliest position where the two answers differ (the start of the earlier match).
fn first_difference_at(a: &Outcome, b: &Outcome) -> Option<usize> {
    let starts = |o: &Outcome| -> Vec<usize> {
        match o {
            Outcome::Match(s) => s[0].map(|(x, _)| vec![x]).unwrap_or_default(),
            Outcome::All(all) => all.iter().filter_map(|s| s[0].map(|(x, _)| x)).collect(),
            _ => Vec::new(),
        }
    };
    let (sa, sb) = (starts(a), starts(b));
    if let (Outcome::All(x), Outcome::All(y)) = (a, b) {
        let i = x
            .iter()
            .zip(y)
            .position(|(p, q)| p != q)
            .unwrap_or(x.len().min(y.len()));
        return x.get(i).or(y.get(i)).and_then(|s| s[0].map(|(p, _)| p));
    }
    sa.into_iter().chain(sb).min()
}

/// Line and column (columns in characters) of a document offset in the sample's file.
fn sample_line_col(input: &SampleInput<'_>, doc_offset: usize) -> Option<(usize, usize)> {
    let text = input.file_text?;
    let r = rtbench_tooling::findings::in_file(input.sample, text, &(doc_offset..doc_offset))?;
    let before = text.get(..r.start)?;
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Some((line, col))
}

/// Answers one pattern's searches with an engine's results.
pub(crate) struct EngineAnswers {
    pub pattern: String,
    pub compiled: Rc<Compiled>,
    pub reference: Option<Regex>,
}

impl Override for EngineAnswers {
    fn answer(
        &mut self,
        pattern: &str,
        dotall: bool,
        hay: &str,
        pos: usize,
        kind: CallKind,
    ) -> Option<Outcome> {
        if !dotall || pattern != self.pattern {
            return None;
        }
        let got = match kind {
            CallKind::Search => self
                .compiled
                .search(hay, pos)
                .ok()?
                .map_or(Outcome::NoMatch, Outcome::Match),
            CallKind::Match => self
                .compiled
                .match_at(hay, pos)
                .ok()?
                .map_or(Outcome::NoMatch, Outcome::Match),
            CallKind::FindIter => Outcome::All(self.compiled.find_all(hay).ok()?),
            CallKind::SearchPartial => match self.compiled.search(hay, pos).ok()? {
                Some(s) => Outcome::Match(s),
                // No complete match: hold back what the reference would have held back.
                None => match self.reference.as_ref()?.search_partial(hay, pos).ok()? {
                    pyregex::Partial::Partial { start } => Outcome::Partial(start),
                    pyregex::Partial::Complete(_) => Outcome::Partial(hay.len()),
                },
            },
        };
        Some(got)
    }
}

fn message_change(
    template: &Template,
    sample: &Sample,
    run: &Run,
    site: &Site,
    compiled: &Rc<Compiled>,
) -> Option<MessageChange> {
    let answers = EngineAnswers {
        pattern: site.pattern.clone(),
        compiled: Rc::clone(compiled),
        reference: Regex::new(&site.pattern, Flags { dotall: true }).ok(),
    };
    let prefix = prefix_of(sample);
    let (theirs, _) = hook::run(Some(Box::new(answers)), || {
        parse_response(
            template,
            Some(prefix),
            &sample.generation,
            sample.tools.as_ref(),
        )
    });
    diff_messages(&run.message, &theirs)
}

fn short(v: &Value) -> String {
    let r = v.py_repr();
    if r.chars().count() > 60 {
        format!("{}...", r.chars().take(57).collect::<String>())
    } else {
        r
    }
}

/// The top-level differences between two parse results; `None` when they are equal.
pub(crate) fn diff_messages(
    ours: &Result<Dict, ParseError>,
    theirs: &Result<Dict, ParseError>,
) -> Option<MessageChange> {
    match (ours, theirs) {
        (Ok(a), Ok(b)) if a == b => None,
        (Ok(a), Ok(b)) => {
            let mut keys: Vec<&str> = a.keys().collect();
            keys.extend(b.keys().filter(|k| !a.contains_key(*k)));
            let missing = "(absent)".to_string();
            let keys = keys
                .into_iter()
                .filter(|k| a.get(*k) != b.get(*k))
                .map(|k| {
                    (
                        k.to_owned(),
                        a.get(k).map_or(missing.clone(), short),
                        b.get(k).map_or(missing.clone(), short),
                    )
                })
                .collect();
            Some(MessageChange { keys, error: None })
        }
        (Err(a), Err(b)) if a.message == b.message => None,
        (a, b) => {
            let text = |r: &Result<Dict, ParseError>| match r {
                Ok(d) => short(&Value::Dict(d.clone())),
                Err(e) => format!("error: {}", e.message),
            };
            Some(MessageChange {
                keys: Vec::new(),
                error: Some((text(a), text(b))),
            })
        }
    }
}
