//! The background parser: reads the files, runs the engine on every sample and analyses the
//! selected one, off the UI thread, on the parse [`Lane`] of the runtime: only the newest
//! request is served, and a result is dropped when a newer request arrived meanwhile.
//!
//! After each report, while nothing newer is asked for, two passes over the samples follow,
//! each sending the report again with what it found: every sample parsed under the other
//! reference version (the samples whose result depends on it are marked), then the chunking
//! verdicts.

use std::sync::Arc;
use std::time::Instant;

use crate::workbench::analysis::{self, Status};
use crate::workbench::highlight;
use crate::workbench::inputs::{Inputs, SampleFile, Source, read_prepared};
use crate::workbench::runtime::{BackgroundPanic, Lane, Ticket};
use crate::workbench::state::{Report, SampleEntry, Shown, State, VersionMark};
use rtbench_engine::Reference;
use rtbench_engine::diagnostic::Diagnostic;
use rtbench_engine::template::Template;
use rtbench_engine::template::source::TemplateSource;
use rtbench_tooling::chunking::{CheckPlan, Generation, stable};
use rtbench_tooling::model::{Model, model_chunkings};
use rtbench_tooling::transform_error::{failed_content, transform_note};

/// The parse lane's name (its threads are `rtbench-parse`).
pub(crate) const LANE: &str = "parse";

/// At most this many parse threads run at once: the one parsing the newest request, and one
/// finishing a parse no longer wanted (a parse cannot be interrupted; the passes after it
/// stop at the next sample).
const MAX_THREADS: usize = 2;

/// What to parse.
#[derive(Clone, Debug)]
pub struct Request {
    /// The request's number: only the newest request's reports are shown.
    pub seq: u64,
    /// The selected sample: by name (kept when the list changes), else by position.
    pub selected_name: Option<String>,
    /// The selected sample's position, when its name is not in the list.
    pub selected_index: usize,
    /// In a corpus: the record shown (it is the only sample read).
    pub record: Option<Source>,
    /// The syntax theme the message is highlighted with.
    pub syntect_theme: String,
    /// Highlight without colours (`NO_COLOR`).
    pub no_color: bool,
    /// The reference version to parse under.
    pub reference: Reference,
    /// The last template that loaded (the one on screen): while the template file cannot be
    /// used, the selected sample is shown parsed with it, marked stale, so that the panes
    /// always show the sample selected.
    pub fallback: Option<Template>,
}

/// Parses the inputs for one request.
pub fn compute(inputs: &Inputs, req: &Request) -> Report {
    compute_and_keep(inputs, req).0
}

/// [`compute`] followed by the comparison between reference versions that the worker runs
/// after it: the report as the list shows it once that pass is done.
pub fn compute_with_versions(inputs: &Inputs, req: &Request) -> Report {
    let (report, parsed) = compute_and_keep(inputs, req);
    let Some(parsed) = parsed else {
        return report;
    };
    // Nothing newer is ever asked for.
    let ticket = Ticket::detached(req.seq, |_, _| {});
    match versions(&parsed, report.clone(), &ticket) {
        Pass::Done(r) => r,
        Pass::Interrupted => report,
    }
}

/// The template and sample files a report was made from, for the work that follows it.
struct Parsed {
    template: Template,
    files: Vec<SampleFile>,
    /// The model's own files (for the model-token chunkings of the verdict).
    model: Option<Model>,
}

/// [`compute`], also returning what it read (unless the template could not be used).
fn compute_and_keep(inputs: &Inputs, req: &Request) -> (Report, Option<Parsed>) {
    let started = Instant::now();
    let template = inputs.load_template(req.reference);
    let template_name = inputs.template.name();
    let sources = match &req.record {
        Some(r) => vec![r.clone()],
        None => inputs.sample_sources(),
    };
    // The model's own files: opened when a sample needs them (a conversation, token ids) or
    // for the replay's model-token chunkings.
    let model = inputs.model_dir().map(|d| Model::open(&d));
    let mut files: Vec<_> = sources
        .iter()
        .map(|s| read_prepared(s, model.as_ref()))
        .collect();
    let model_files = model.as_ref().map(model_file_names).unwrap_or_default();
    let selected = req
        .selected_name
        .as_ref()
        .and_then(|n| files.iter().position(|f| &f.name == n))
        .unwrap_or(req.selected_index.min(files.len().saturating_sub(1)));
    let loaded = match template {
        Err(d) => {
            // The selected sample, parsed with the last template that loaded (stale).
            let shown = match (&req.fallback, files.get_mut(selected)) {
                (Some(t), Some(f)) => f.sample.clone().ok().map(|s| {
                    let t = t.clone().with_reference(req.reference);
                    analyse_selected(&t, None, f, s, model.as_ref(), req).0
                }),
                _ => None,
            };
            let sample_error = match files.get(selected).map(|f| &f.sample) {
                Some(Err(e)) => Some(e.clone()),
                _ => None,
            };
            let report = Report {
                seq: req.seq,
                template_name,
                template_error: Some(d),
                samples: files
                    .iter()
                    .map(|f| SampleEntry::new(f.name.clone(), Status::Unknown))
                    .collect(),
                sample_error,
                shown,
                never_matched: Vec::new(),
                lint: Vec::new(),
                model_files,
                took: started.elapsed(),
            };
            return (report, None);
        }
        Ok(t) => t,
    };
    let t = &loaded.template;
    let mut samples = Vec::with_capacity(files.len());
    let mut matched = vec![false; t.fields().len()];
    let mut readable = 0;
    let mut shown = None;
    let mut sample_error = None;
    // The selected sample first: its analysis lets go of what the rest does not need.
    let mut selected_result = files.get_mut(selected).and_then(|f| {
        let s = f.sample.clone().ok()?;
        Some(analyse_selected(
            t,
            Some(&loaded.source),
            f,
            s,
            model.as_ref(),
            req,
        ))
    });
    for (i, f) in files.iter().enumerate() {
        // A sample whose only problem is its expected section is still parsed (the parse never
        // depends on it): it is shown with the section's error among its diagnostics, and
        // listed as unreadable.
        let bad_expected = f.bad_expected.as_ref();
        let (status, warnings) = match &f.sample {
            Err(e) => {
                if i == selected {
                    sample_error = Some(e.clone());
                }
                (Status::Unreadable(e.clone()), 0)
            }
            Ok(_) if i == selected => {
                readable += 1;
                let (a, status) = selected_result
                    .take()
                    .expect("the selected sample was analysed first");
                for (m, hit) in matched.iter_mut().zip(&a.analysis.matched_fields) {
                    *m |= hit;
                }
                shown = Some(a);
                status
            }
            Ok(s) => {
                readable += 1;
                let (status, warnings, hits) =
                    analysis::summary(t, Some(&loaded.source), s, &f.name, &f.text, model.as_ref());
                for (m, hit) in matched.iter_mut().zip(hits) {
                    *m |= hit;
                }
                match bad_expected {
                    Some(d) => (Status::Unreadable(d.message.clone()), warnings + 1),
                    None => (status, warnings),
                }
            }
        };
        samples.push(SampleEntry {
            warnings,
            ..SampleEntry::new(f.name.clone(), status)
        });
    }
    let never_matched = if readable > 0 {
        t.fields()
            .iter()
            .zip(&matched)
            .filter(|(_, m)| !**m)
            .map(|(f, _)| f.name.clone())
            .collect()
    } else {
        Vec::new()
    };
    // A lint warning at the place a failed transform of the sample on screen points at is said
    // by that error, with the advice the parsed value gives: not twice.
    let note = shown
        .as_ref()
        .and_then(|s| s.analysis.problem.as_ref())
        .and_then(|p| p.template_note.as_ref())
        .and_then(Diagnostic::position);
    let lint = loaded
        .lint
        .into_iter()
        .filter(|d| note.is_none() || d.position() != note)
        .collect();
    let report = Report {
        seq: req.seq,
        template_name: loaded.name,
        template_error: None,
        samples,
        sample_error,
        shown,
        never_matched,
        lint,
        model_files,
        took: started.elapsed(),
    };
    let parsed = Parsed {
        template: loaded.template,
        files,
        model,
    };
    (report, Some(parsed))
}

/// The names of the model's own files in use (chat template, tokenizer).
fn model_file_names(m: &Model) -> Vec<String> {
    m.files()
        .iter()
        .filter_map(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect()
}

/// The selected sample analysed for the screen, its message highlighted; with its list status
/// and warning count. With the template's file, a failed transform is located in it.
///
/// What the worker keeps of the file for the passes that follow is then the analysis's own
/// sample, which reads its generation in the analysis's document, and no longer the file's
/// text, unless the versions pass will place a warning in it: the text is held once while the
/// message pane's lines are made and after.
fn analyse_selected(
    t: &Template,
    source: Option<&Arc<TemplateSource>>,
    f: &mut SampleFile,
    s: Arc<rtbench_tooling::sample::Sample>,
    model: Option<&Model>,
    req: &Request,
) -> (Shown, (Status, usize)) {
    let bad_expected = f.bad_expected.clone();
    // The analysis is given the only hold on the file's text, and lets go of it before the
    // parse (a long sample's text is then held once). The versions pass, which may place a
    // warning in the file, makes it again from the text around the generation; a sample whose
    // generation is not a stretch of its file (decoded from token ids, rendered from a
    // conversation) keeps it when that pass compares it.
    let around = analysis::Around::of(&s, &f.text);
    let keeps_file = around.is_none() && compares_versions(t, &s);
    let (read, text) = if keeps_file {
        (Arc::clone(&s), Arc::clone(&f.text))
    } else {
        f.sample = Err(String::new());
        (s, std::mem::take(&mut f.text))
    };
    let mut a = analysis::analyze_with_model(t, source, &f.name, read, text, around.clone(), model);
    if !keeps_file {
        f.sample = Ok(Arc::clone(&a.sample));
        f.around = around;
    }
    if let Some(m) = model {
        let s = Arc::clone(&a.sample);
        model_views(m, &s, &f.name, &mut a);
    }
    if let Some(d) = &bad_expected {
        a.warnings.insert(0, d.clone());
        a.status = Status::Unreadable(d.message.clone());
    }
    if let (Some(source), Some(p)) = (source, a.problem.as_mut()) {
        p.template_note = transform_note(source, t, &p.error, &a.document);
        // The region pane shows what the transform was given.
        if p.template_note.is_some()
            && let Some(r) = p.region
        {
            a.regions
                .set_parsed(r, failed_content(t, &p.error, &a.document));
        }
    }
    let status = (
        a.status.clone(),
        a.findings.len() + usize::from(bad_expected.is_some()),
    );
    // The message pane's lines, highlighted once here and written from the message when
    // drawn (nothing on failure).
    let lines = match &a.message {
        Some(m) => highlight::message_lines(m.into(), &req.syntect_theme, req.no_color),
        None => highlight::MessageLines::default(),
    };
    let grammar = source.map(|src| {
        Box::new(crate::workbench::grammar::mark(
            src,
            &a.sample,
            a.prefix_len,
        ))
    });
    let shown = Shown {
        analysis: Arc::new(a),
        message_lines: Arc::new(lines),
        grammar,
    };
    (shown, status)
}

/// The one-id-per-feed decoding of a sample of token ids the analysis shows as the defusing
/// decoder read it (5.25), when it gives the same text (it does but for tokenizers whose
/// decoding of one id depends on the ids around it).
fn id_feeds(
    model: &Model,
    s: &rtbench_tooling::sample::Sample,
    a: &analysis::Analysis,
) -> Option<rtbench_tokenize::ids::IdFeeds> {
    if !a.decoded_ids {
        return None;
    }
    let t = rtbench_tooling::model::token_input(s, model)?;
    let feeds = rtbench_tokenize::ids::id_feeds(t.prefix, t.ids, t.tokenizer, t.control).ok()?;
    let shown = &a.document[a.prefix_len..];
    (feeds.prefix.len() == a.prefix_len
        && shown.strip_prefix(feeds.pieces.concat().as_str()) == Some(feeds.tail.as_str()))
    .then_some(feeds)
}

/// Generations longer than this (bytes) get no model tokens in the workbench.
const MODEL_TOKENS_LIMIT: usize = 256 * 1024;

/// What the model's own files add to a sample's analysis: the generation's tokens, the
/// model-token chunkings of the replay, and the round trip of a conversation sample.
fn model_views(
    model: &Model,
    s: &rtbench_tooling::sample::Sample,
    name: &str,
    a: &mut analysis::Analysis,
) {
    use rtbench_engine::diagnostic::Diagnostic;
    // Named chat templates that protect different control tokens (for prompts sanitized with
    // one of them).
    for (template, missing) in rtbench_tooling::injection::template_gaps(model) {
        a.warnings.push(
            Diagnostic::warning(format!(
                "chat template '{template}' does not write {}: a prompt sanitized with it encodes them in the user's strings as real tokens",
                missing.join(", ")
            ))
            .in_file(model.dir.display().to_string())
            .with_help(Some(
                "list the control tokens in tokenizer_config.json's \"chat_control_tokens\" so that every template protects them".into(),
            )),
        );
    }
    if let Some(tok) = model.tokenizer() {
        if s.generation.len() > MODEL_TOKENS_LIMIT {
            // Model tokens take time linear in the generation, but are kept per token: skipped
            // past the limit.
            a.warnings.push(
                Diagnostic::warning(format!(
                    "the generation is over {} KB: its model tokens are not computed (the replay's model-token chunkings and the token under the cursor are left out)",
                    MODEL_TOKENS_LIMIT / 1024
                ))
                .in_file(name.to_string()),
            );
        } else if let Some(feeds) = id_feeds(model, s, a) {
            // Token ids parsed by the defusing decoder: one feed per id, as the reference is
            // fed them; a token is the text its id released.
            let mut at = a.prefix_len;
            let mut cuts = Vec::new();
            a.tokens.clear();
            for (piece, id) in feeds
                .pieces
                .iter()
                .zip(s.model.generation_ids.iter().flatten())
            {
                if !piece.is_empty() {
                    a.tokens.push((*id, at..at + piece.len()));
                    at += piece.len();
                    cuts.push(at - a.prefix_len);
                }
            }
            cuts.pop();
            a.model_chunkings = vec![rtbench_tooling::chunking::Chunking::ModelTokens(cuts)];
            a.id_replay = Some(Arc::new(analysis::IdReplay {
                prefix: feeds.prefix,
                generation: feeds.pieces.concat(),
                tail: feeds.tail,
            }));
        } else {
            match model_chunkings(tok, &s.generation, s.model.generation_ids.as_deref()) {
                Ok(c) => a.model_chunkings = c,
                Err(e) => a
                    .warnings
                    .push(Diagnostic::warning(e).in_file(name.to_string())),
            }
            if let Ok(tokens) = tok.encode(&s.generation) {
                a.tokens = tokens
                    .into_iter()
                    .map(|t| {
                        (
                            t.id,
                            a.prefix_len + t.range.start..a.prefix_len + t.range.end,
                        )
                    })
                    .collect();
            }
        }
    }
    if s.model.messages.is_some()
        && s.model.roundtrip.is_none()
        && let Some(message) = &a.message
    {
        match rtbench_tooling::model::round_trip(model, s, message) {
            Ok(rt) => {
                if let Some(d) = rt.difference {
                    a.warnings.push(
                        Diagnostic::warning(format!(
                            "rendering the parsed message back with the chat template gives other text: {d}"
                        ))
                        .in_file(name.to_string())
                        .with_help(Some(
                            "if the chat template is meant to write it so, say why in a `--- roundtrip ---` section".into(),
                        )),
                    );
                }
            }
            Err(e) => a.warnings.push(
                Diagnostic::warning(format!("the round trip failed: {e}"))
                    .in_file(name.to_string()),
            ),
        }
    }
}

/// [`compute`], with a panic turned into a reported error instead of a dead thread.
fn compute_guarded(inputs: &Inputs, req: &Request) -> (Report, Option<Parsed>) {
    let started = Instant::now();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compute_and_keep(inputs, req)
    }))
    .unwrap_or_else(|payload| {
        let what = crate::workbench::runtime::panic_message(payload.as_ref());
        let report = Report {
            seq: req.seq,
            template_name: inputs.template.name(),
            template_error: None,
            samples: inputs
                .sample_sources()
                .iter()
                .map(|s| SampleEntry::new(s.name(), Status::Unknown))
                .collect(),
            sample_error: Some(format!(
                "internal error while parsing (a bug; please report it): {what}"
            )),
            shown: None,
            never_matched: Vec::new(),
            lint: Vec::new(),
            model_files: Vec::new(),
            took: started.elapsed(),
        };
        (report, None)
    })
}

/// Serves request `req` on the parse lane: the report, then (while nothing newer is asked
/// for) the report again with the other version's marks, then with the chunking verdicts.
fn serve(inputs: &Inputs, req: &Request, ticket: &Ticket<Report>) {
    highlight::warm_up();
    let (report, parsed) = compute_guarded(inputs, req);
    let Some(parsed) = parsed else {
        ticket.reply(report);
        return;
    };
    if !ticket.reply(report.clone()) {
        return;
    }
    // A panic in these passes reaches the screen through the lane; the report already sent
    // stays.
    if let Pass::Done(r) = versions(&parsed, report, ticket)
        && ticket.reply(r.clone())
        && let Pass::Done(r) = stability(&parsed, r, ticket)
    {
        ticket.reply(r);
    }
}

/// Samples longer than this get no chunking verdict in the list (`x` still checks them).
const STABILITY_LIMIT: usize = 256 * 1024;

/// The chunkings behind a sample list verdict: fewer than `x` tries, enough to catch the
/// usual culprits (delimiters split across chunks, growth tests at a chunk's edge).
fn stability_plan() -> CheckPlan {
    CheckPlan {
        max_size: 8,
        random: 4,
        seed: 0,
        tokens: true,
        model: Vec::new(),
    }
}

/// How a pass over the samples ended.
enum Pass {
    /// Every sample checked: the report with what was found.
    Done(Report),
    /// A newer request arrived (or the workbench stopped).
    Interrupted,
}

/// Streams every readable sample of `report` (read into `parsed`) with the chunkings of
/// [`stability_plan`] and marks those whose result changes, stopping as soon as a newer
/// request arrives.
fn stability(parsed: &Parsed, mut report: Report, ticket: &Ticket<Report>) -> Pass {
    for (entry, file) in report.samples.iter_mut().zip(&parsed.files) {
        if !ticket.is_wanted() {
            return Pass::Interrupted;
        }
        let Ok(sample) = &file.sample else { continue };
        if sample.generation.len() > STABILITY_LIMIT {
            continue;
        }
        let mut generation = Generation::of_sample(parsed.template.clone(), sample);
        // Token ids are cut as ids (5.25 parses them through the defusing decoder).
        generation.ids = parsed
            .model
            .as_ref()
            .and_then(|m| rtbench_tooling::model::token_input(sample, m));
        // With the model's tokenizer, its tokens and the TextStreamer's pieces are tried too.
        let plan = CheckPlan {
            model: parsed
                .model
                .as_ref()
                .and_then(Model::tokenizer)
                .and_then(|t| {
                    model_chunkings(
                        t,
                        &sample.generation,
                        sample.model.generation_ids.as_deref(),
                    )
                    .ok()
                })
                .unwrap_or_default(),
            ..stability_plan()
        };
        entry.unstable = Some(!stable(&generation, &plan));
    }
    Pass::Done(report)
}

/// Samples longer than this are not compared between versions (each comparison parses the
/// sample four times).
const VERSIONS_LIMIT: usize = 4 << 20;

/// Whether the versions pass compares `sample`'s outcome under `t`'s reference with the other
/// version's: not for a long sample, nor for one that reaches none of the places where the
/// versions differ (text parsed with neither `value_parser_by` nor tool coercion of a typed
/// field), which is not parsed again.
fn compares_versions(t: &Template, sample: &rtbench_tooling::sample::Sample) -> bool {
    let ids = sample.model.prefix_ids.is_some() || sample.model.generation_ids.is_some();
    sample.generation.len() <= VERSIONS_LIMIT
        && rtbench_tooling::versions::other(t.reference()) != t.reference()
        && (ids || t.may_differ_between_references(sample.tools.is_some()))
}

/// Parses every readable sample of `report` (read into `parsed`) under each reference version
/// and marks those whose message or events differ from the version in force, stopping as soon
/// as a newer request arrives.
fn versions(parsed: &Parsed, mut report: Report, ticket: &Ticket<Report>) -> Pass {
    let base = parsed.template.reference();
    let other = rtbench_tooling::versions::other(base);
    for (entry, file) in report.samples.iter_mut().zip(&parsed.files) {
        if !ticket.is_wanted() {
            return Pass::Interrupted;
        }
        let Ok(sample) = &file.sample else { continue };
        // One whose versions agree is found so by hashing each version's outcome as it is
        // made: comparing them whole keeps every event of both streams and four messages at
        // once, some 60 bytes per byte of a sample of small tool calls. Only a sample that
        // differs is compared whole, to say how.
        let model = parsed.model.as_ref();
        if !compares_versions(&parsed.template, sample)
            || rtbench_tooling::versions::agree(&parsed.template, sample, model, base, other)
        {
            continue;
        }
        let comparison = rtbench_tooling::versions::compare_sample(
            &parsed.template,
            sample,
            parsed.model.as_ref(),
        );
        entry.versions = comparison.divergence(base, other).map(|d| {
            Arc::new(VersionMark {
                other,
                warning: d.diagnostic(sample, &file.name, &file.file_text()),
                at: d.at.as_ref().map(|r| r.start),
            })
        });
    }
    Pass::Done(report)
}

/// A request for the state's current selection.
pub fn request_for(state: &mut State) -> Request {
    state.session.requested += 1;
    state.session.busy = true;
    Request {
        seq: state.session.requested,
        selected_name: state
            .session
            .samples
            .get(state.ui.selected_sample)
            .map(|s| s.name.clone()),
        selected_index: state.ui.selected_sample,
        record: state
            .session
            .corpus
            .as_ref()
            .and_then(crate::workbench::corpus::CorpusView::selected_record),
        syntect_theme: state.ui.theme.syntect_theme.clone(),
        no_color: state.ui.theme.no_color,
        reference: state.session.reference,
        fallback: state
            .session
            .shown
            .as_ref()
            .or(state.session.last_good.as_ref())
            .map(|s| s.analysis.template.clone()),
    }
}

/// A handle that sends requests to the parse lane.
pub struct Worker {
    lane: Lane<Report>,
    inputs: Arc<Inputs>,
}

impl Worker {
    /// Starts the parse lane: reports go to `send`, a panic outside the parse's own guard to
    /// `panicked`.
    pub fn start<F>(
        inputs: Arc<Inputs>,
        send: F,
        panicked: impl Fn(BackgroundPanic) + Send + Sync + 'static,
    ) -> Worker
    where
        F: Fn(Report) + Send + Sync + 'static,
    {
        Worker {
            lane: Lane::start(LANE, MAX_THREADS, move |_, r| send(r), panicked),
            inputs,
        }
    }

    /// Asks for `req`; it replaces every request before it.
    pub fn request(&self, req: Request) {
        let inputs = Arc::clone(&self.inputs);
        self.lane
            .submit(req.seq, move |t: &Ticket<Report>| serve(&inputs, &req, t));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_with_bad_expected_json_is_shown_itself_with_a_located_error() {
        let dir = std::env::temp_dir().join(format!("rtbench-worker-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/smollm3");
        for f in [
            "template.json",
            "think-then-answer.sample",
            "weather-tool-call.sample",
        ] {
            std::fs::copy(format!("{root}/{f}"), dir.join(f)).unwrap();
        }
        let bad = dir.join("think-then-answer.sample");
        let text = std::fs::read_to_string(&bad).unwrap();
        let at = text.find("--- expected ---").unwrap();
        let broken = format!(
            "{}{}",
            &text[..at],
            text[at..].replacen("\"role\": ", "\"role\" ", 1)
        );
        std::fs::write(&bad, &broken).unwrap();
        let inputs = Inputs::from_args(std::slice::from_ref(&dir)).unwrap();
        let name = bad.display().to_string();
        let req = Request {
            seq: 1,
            selected_name: Some(name.clone()),
            selected_index: 1,
            record: None,
            syntect_theme: "base16-ocean.dark".into(),
            no_color: true,
            reference: Reference::NEWEST,
            fallback: None,
        };
        let report = compute(&inputs, &req);
        let _ = std::fs::remove_dir_all(&dir);
        // This sample is shown (never the other one), parsed, with the error located.
        assert!(report.sample_error.is_none(), "{:?}", report.sample_error);
        let a = &report.shown.as_ref().expect("the sample is shown").analysis;
        assert_eq!(a.sample_name, name);
        assert!(a.message.is_some());
        let d = &a.warnings[0];
        assert!(
            d.message
                .starts_with("invalid JSON in the 'expected' section")
        );
        let line = broken[..broken.find("\"role\" ").unwrap()]
            .matches('\n')
            .count()
            + 1;
        assert_eq!(d.position(), Some(format!("{name}:{line}:10")));
        let entry = report.samples.iter().find(|s| s.name == name).unwrap();
        assert!(matches!(entry.status, Status::Unreadable(_)));
    }
}
