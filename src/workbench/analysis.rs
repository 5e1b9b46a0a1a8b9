//! One sample run through the engine, prepared for display: the document (prefix + generation)
//! cut into coloured segments (delimiters, captures, region bodies, held-back and discarded
//! text), the regions with how each value was made, the message, and the diagnostics.
//!
//! Everything here is computed off the UI thread and shared read-only (`Arc`) with the views.

use std::ops::Range;
use std::sync::Arc;

use rtbench_engine::delimiter::Delimiter;
use rtbench_engine::diagnostic::{Diagnostic, Location};
use rtbench_engine::event::{Mark, MarkKind, Marks};
use rtbench_engine::offsets::{CharIndex, LineStarts};
use rtbench_engine::parser::{Events, ParseError, Parser};
use rtbench_engine::py::{DumpOptions, json_dumps};
use rtbench_engine::region::{Ending, RegionBuilder, Regions, mark_owners};

use crate::workbench::compact::Segments;
use rtbench_engine::template::Template;
use rtbench_engine::template::source::TemplateSource;
use rtbench_engine::value::{Dict, Value};
use rtbench_tooling::defusing;
use rtbench_tooling::explain::explain;
use rtbench_tooling::findings::{Finding, audit_findings, places_in_file, sample_findings};
use rtbench_tooling::inputs::sample_tool_warnings;
use rtbench_tooling::model::{Model, decoded_sample};
use rtbench_tooling::paint;
use rtbench_tooling::sample::{Sample, Text};
use rtbench_tooling::testing::{Verdict, verdict};

pub(crate) use rtbench_tooling::paint::{Paint, Segment};

/// How a sample fares: the `rtbench test` verdict.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    Ok,
    /// Parsing failed (and the sample does not expect it to).
    Error(String),
    /// The message differs from the expected one (the differences).
    Differs(Vec<String>),
    /// Parsed, with nothing to compare to.
    NoExpected,
    /// The file cannot be read or is not a valid sample.
    Unreadable(String),
    /// Not parsed: the template cannot be used.
    Unknown,
}

impl Status {
    pub fn label(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error(_) => "error",
            Status::Differs(_) => "differs",
            Status::NoExpected => "no expected",
            Status::Unreadable(_) => "unreadable",
            Status::Unknown => "not parsed",
        }
    }
}

/// A parse error with its place in the document.
#[derive(Clone, Debug, PartialEq)]
pub struct ParseProblem {
    pub error: ParseError,
    /// The region (if any) the error happened in.
    pub region: Option<usize>,
    /// The position inside the region body: line, column (1-based, characters), the line and
    /// the caret width.
    pub in_region: Option<Location>,
    /// `file:line:col` of the position in the sample file, when it lies in the generation.
    pub file_position: Option<String>,
    /// Document byte offset of the position.
    pub at: Option<usize>,
    /// For a failed transform: where the mistake is in the template (the placeholder or
    /// `transform_each`), with advice from the parsed value (see
    /// [`rtbench_tooling::transform_error`]); set by the parse lane, which has the file.
    pub template_note: Option<Diagnostic>,
}

/// One sample analysed with one template.
#[derive(Clone, Debug)]
pub struct Analysis {
    pub sample_name: String,
    /// The template and sample this was made from (the stream replay runs them again).
    pub template: Template,
    pub sample: Arc<Sample>,
    /// Prefix followed by the generation. Shared with [`Analysis::sample`]'s generation when
    /// the sample is text (not token ids): the text is held once while it is shown.
    pub document: Arc<String>,
    pub prefix_len: usize,
    /// Where the start anchor cut the prefix.
    pub origin: usize,
    pub segments: Segments,
    /// The regions of the parse (the engine's region model, held compactly). A repeating
    /// field's values are held in the message only: read a region's values with
    /// [`Analysis::region_value`] and its siblings.
    pub regions: Regions,
    /// Byte offset of every line start in the document.
    pub line_starts: LineStarts,
    pub chars: CharIndex,
    pub field_names: Vec<String>,
    /// Each field's content parser name (`text`, `json`, ...).
    pub content_kinds: Vec<&'static str>,
    /// The message, or `None` when parsing failed.
    pub message: Option<Dict>,
    pub problem: Option<ParseProblem>,
    pub warnings: Vec<Diagnostic>,
    /// The silent losses and sample-file warnings (their diagnostics are in `warnings` too).
    pub findings: Vec<Finding>,
    pub status: Status,
    /// Fields that opened at least one region in this sample.
    pub matched_fields: Vec<bool>,
    /// Why fields with a literal open delimiter matched nothing here: (field, explanation
    /// lines).
    pub unmatched: Vec<(String, Vec<String>)>,
    /// The model's own chunkings of the generation (model tokens, streamer words), when the
    /// model folder has a tokenizer; see [`rtbench_tooling::model::model_chunkings`].
    pub model_chunkings: Vec<rtbench_tooling::chunking::Chunking>,
    /// The generation's tokens by the model's tokenizer: id and document byte range (empty
    /// without a tokenizer).
    pub tokens: Vec<(u32, Range<usize>)>,
    /// Control-token spellings the model wrote with ordinary tokens, which the token-id
    /// decoder defused (document ranges; their markers are drawn as nothing), with the ids
    /// that wrote each.
    pub defused: Vec<(Range<usize>, Vec<u32>)>,
    /// The model folder whose files decoded the sample (for jobs that parse it again).
    pub model_dir: Option<std::path::PathBuf>,
    /// The template's file, when known (jobs locate the template keys they name in it).
    pub template_source: Option<Arc<TemplateSource>>,
    /// A generation of token ids parsed by the defusing decoder (5.25), fed one id at a time:
    /// what the replay streams (its model-token chunking cuts where each id's text ends).
    pub id_replay: Option<Arc<IdReplay>>,
    /// The sample's generation is token ids, shown as the defusing decoder (5.25) read them.
    pub decoded_ids: bool,
}

/// The text a replay of token ids streams: the decoded prompt, the generation as the ids
/// released it one by one, and the decoder's flush at the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IdReplay {
    pub prefix: String,
    pub generation: String,
    pub tail: String,
}

/// Documents longer than this get no explanations of unmatched fields (each one parses again).
const EXPLAIN_LIMIT: usize = 1 << 20;

/// The parser's trace of a sample.
struct Trace {
    marks: Marks,
    regions: Regions,
    origin: usize,
    held: Range<usize>,
    result: Result<Dict, ParseError>,
}

/// The trace of a prefix that itself fails to parse: what the prefix up to the error made
/// (the parser is never built, so its initial events are not known otherwise), in a document of
/// `doc_len` bytes. `None` when the prefix parses.
fn prefix_failure(
    template: &Template,
    prefix: &str,
    tools: Option<&Value>,
    doc_len: usize,
) -> Option<Trace> {
    let e = Parser::with_events(template, Some(prefix), tools, Events::Trace).err()?;
    let cut = e
        .span
        .as_ref()
        .map_or(0, |s| if s.is_empty() { s.start } else { s.end });
    let cut = prefix.floor_char_boundary(cut);
    let partial = Parser::with_events(template, Some(&prefix[..cut]), tools, Events::Trace);
    let (events, origin, held) = match &partial {
        Ok(p) => (p.initial_events().to_vec(), p.origin(), p.held()),
        Err(_) => (Vec::new(), 0, 0..0),
    };
    let mut model = RegionBuilder::new(doc_len);
    for (i, ev) in events.iter().enumerate() {
        model.push(i, ev);
    }
    model.fail(template, &e);
    Some(Trace {
        marks: events.iter().map(Mark::of).collect(),
        regions: model.into_regions(),
        origin,
        held,
        result: Err(e),
    })
}

/// The coloured segments of a trace's event `marks` over a document of `len` bytes, whose start
/// anchor cut it at `origin` (painted before the document is made, so that the marks are let
/// go first: see [`marked_up`]).
fn painted(marks: &Marks, origin: usize, len: usize) -> Segments {
    let pieces = || {
        marks.iter().zip(mark_owners(marks)).map(|(ev, region)| {
            let kind = match (ev.kind(), region) {
                (MarkKind::Open, Some(region)) => Paint::Open { region },
                (MarkKind::Chunk, Some(region)) => Paint::Body { region },
                (MarkKind::Close, Some(region)) => Paint::Close { region },
                (MarkKind::Discard, _) => Paint::Discarded,
                _ => Paint::Unrouted,
            };
            (ev.span(), kind)
        })
    };
    // A stream's events come in order of where they start: painted as they are read, without
    // a list of them all beside the events (a sample of many small regions has millions).
    let in_order = marks
        .iter()
        .map(|m| m.span())
        .filter(|s| !s.is_empty() && s.end <= len)
        .map(|s| s.start)
        .is_sorted();
    if in_order {
        Segments::cover_sorted(pieces, origin, len)
    } else {
        Segments::from(paint::cover(pieces().collect(), origin, len))
    }
}

/// [`painted`] segments of `document` with its captures, held-back text and the error's place
/// marked.
fn marked_up(
    mut segments: Segments,
    document: &str,
    regions: &Regions,
    held: &Range<usize>,
    error_at: Option<usize>,
) -> Segments {
    // Locate captures inside their delimiters.
    let capture_pieces: Vec<(Range<usize>, usize, usize)> = regions
        .iter()
        .enumerate()
        .filter(|(_, g)| !g.captures().is_empty())
        .flat_map(|(ri, g)| {
            (0..g.captures().len())
                .filter_map(|ci| Some((g.capture_span(document, ci)?, ri, ci)))
                .collect::<Vec<_>>()
        })
        .collect();
    for (r, region, capture) in capture_pieces {
        segments.overlay(&r, |s| {
            if matches!(s.paint, Paint::Open { .. } | Paint::Close { .. }) {
                s.paint = Paint::Capture { region, capture };
            }
        });
    }
    if !held.is_empty() {
        segments.overlay(held, |s| s.held = true);
    }
    if let Some(p) = error_at
        && p < document.len()
    {
        let end = document[p..].chars().next().map_or(p, |c| p + c.len_utf8());
        segments.overlay(&(p..end), |s| s.error = true);
    }
    segments
}

/// The indented JSON of a value as the workbench shows it (non-ASCII kept, NaN allowed).
pub(crate) fn pretty_json(v: &Value) -> String {
    json_with_indent(v, 2)
}

/// [`pretty_json`] with `indent` spaces a level (0: line breaks only).
pub(crate) fn json_with_indent(v: &Value, indent: usize) -> String {
    let opts = DumpOptions {
        ensure_ascii: false,
        allow_nan: true,
        indent: Some(indent),
        compact: false,
        surrogates_error: false,
        max_depth: None,
    };
    json_dumps(v, &opts).unwrap_or_else(|e| format!("<cannot show as JSON: {e}>"))
}

/// The `rtbench test` verdict of a parse result as a status.
fn status_from(sample: &Sample, result: &Result<Dict, String>) -> Status {
    match (result, verdict(sample, result)) {
        (_, Verdict::Pass) => Status::Ok,
        (Err(e), _) => Status::Error(e.clone()),
        (Ok(_), Verdict::Fail(lines)) => Status::Differs(lines),
        (Ok(_), Verdict::NoExpectation) => Status::NoExpected,
    }
}

/// What the sample list shows of a sample that is not selected: its verdict, how many
/// warnings it has, and which fields open at least one region in it, from one traced parse.
pub(crate) fn summary(
    template: &Template,
    source: Option<&TemplateSource>,
    sample: &Sample,
    name: &str,
    file_text: &str,
    model: Option<&Model>,
) -> (Status, usize, Vec<bool>) {
    let (audit, findings) = findings_with_tools(template, source, sample, name, file_text, model);
    let mut matched = vec![false; template.fields().len()];
    for g in &audit.regions {
        matched[g.field] = true;
    }
    let result = audit.result.map_err(|e| e.text());
    (status_from(sample, &result), findings.len(), matched)
}

/// [`sample_findings`], and what the reference ignores in a `.sample`'s tools (the input
/// policy's [`sample_tool_warnings`]) as findings of the file.
fn findings_with_tools(
    template: &Template,
    source: Option<&TemplateSource>,
    sample: &Sample,
    name: &str,
    file_text: &str,
    model: Option<&Model>,
) -> (rtbench_engine::Audit, Vec<Finding>) {
    let (audit, mut findings) = sample_findings(template, source, sample, name, file_text, model);
    findings.extend(tool_findings(sample, name, file_text));
    (audit, findings)
}

/// What the reference ignores in a `.sample`'s tools, as findings of the file.
fn tool_findings(sample: &Sample, name: &str, file_text: &str) -> Vec<Finding> {
    sample_tool_warnings(sample, name, file_text)
        .into_iter()
        .map(|diagnostic| Finding {
            diagnostic,
            kind: None,
            region: None,
            span: None,
        })
        .collect()
}

/// A sample file's text around its generation: with the generation (which the analysis's
/// document holds), the file's text again. What lets the analysis let go of the file's text.
#[derive(Clone, Debug)]
pub(crate) struct Around {
    head: String,
    tail: String,
}

impl Around {
    /// `file`'s text around `sample`'s generation, when the generation is a stretch of that
    /// very text at its place in the file (not text decoded from token ids or rendered from a
    /// conversation).
    pub(crate) fn of(sample: &Sample, file: &Arc<String>) -> Option<Around> {
        let range = sample
            .generation
            .range_in(file)
            .filter(|r| r.start == sample.generation_offset)?;
        Some(Around {
            head: file[..range.start].to_string(),
            tail: file[range.end..].to_string(),
        })
    }

    /// The file's text, made again around `generation`.
    pub(crate) fn file_text(&self, generation: &str) -> String {
        format!("{}{generation}{}", self.head, self.tail)
    }
}

/// The sample file's text, for placing what the analysis reports in it: held, or let go of
/// before the parse and made again around the document's generation.
enum FileText {
    Held(Arc<String>),
    Around(Around),
}

impl FileText {
    /// The file's text: as read, or made again around the document's generation.
    fn text(&self, document: &str, prefix_len: usize) -> std::borrow::Cow<'_, str> {
        match self {
            FileText::Held(text) => std::borrow::Cow::Borrowed(text.as_str()),
            FileText::Around(around) => std::borrow::Cow::Owned(
                around.file_text(document.get(prefix_len..).unwrap_or_default()),
            ),
        }
    }
}

/// Line and column of a byte offset in a text (1-based; columns in characters).
pub(crate) fn line_col(line_starts: &LineStarts, text: &str, byte: usize) -> (usize, usize) {
    let line = line_starts.line_of(byte);
    let start = line_starts.at(line);
    let byte = text.floor_char_boundary(byte.max(start));
    (line + 1, text[start..byte].chars().count() + 1)
}

/// Analyses one sample: `file_text` is the sample file's text (for file positions).
#[cfg(test)]
pub(crate) fn analyze(
    template: &Template,
    name: &str,
    shared: Arc<Sample>,
    file_text: &str,
) -> Analysis {
    analyze_with_model(
        template,
        None,
        name,
        shared,
        Arc::new(file_text.to_string()),
        None,
        None,
    )
}

/// [`analyze`] with the model's files: a generation of token ids is parsed and shown as the
/// template's reference reads ids (5.25: decoded with control-token spellings made of
/// ordinary tokens defused; the text shown is the decoded text, those spellings marked).
/// With `around` (the file's text around the generation, [`Around::of`]), the analysis lets go
/// of the file's text before the parse (see below).
pub(crate) fn analyze_with_model(
    template: &Template,
    source: Option<&Arc<TemplateSource>>,
    name: &str,
    shared: Arc<Sample>,
    file_text: Arc<String>,
    around: Option<Around>,
    model: Option<&Model>,
) -> Analysis {
    let decoded = decoded_sample(template, &shared, model).map(Arc::new);
    let defused: Vec<(Range<usize>, Vec<u32>)> = decoded
        .as_deref()
        .map(|d| {
            defusing::defused(d, model)
                .into_iter()
                .map(|d| (d.span, d.ids))
                .collect()
        })
        .unwrap_or_default();
    let decoded_ids = decoded.is_some();
    let sample = decoded.as_deref().unwrap_or(&*shared);
    let prefix = sample.prefix.clone().unwrap_or_default();
    let prefix = prefix.as_str();
    let prefix_len = prefix.len();
    let doc_len = prefix_len + sample.generation.len();
    // A field whose literal open delimiter is nowhere in the text matches nothing: it is
    // explained before the parse below, so that the explanation's own parse and the records
    // the analysis keeps are not held at once.
    let explain_here = doc_len <= EXPLAIN_LIMIT;
    let absent = if explain_here {
        absent_opens(template, &format!("{prefix}{}", sample.generation))
    } else {
        vec![false; template.fields().len()]
    };
    let mut unmatched = if explain_here {
        let skip: Vec<bool> = absent.iter().map(|a| !a).collect();
        unmatched_explanations(template, sample, name, &skip)
    } else {
        Vec::new()
    };
    // One traced parse of the whole text gives the message `rtbench test` judges, the events
    // (up to an error, if any) and the silent losses; only a prompt that fails to parse runs
    // again, to show what its part before the error made. A generation read as a stretch of
    // its file's text is given to the parse as a copy of its own, and the file's text goes
    // before the parse (when the caller let go of it too): a long sample is then held once
    // while the parse holds its records, and the file's text is rebuilt around the document's
    // copy of the generation only when a finding or an error is to be placed in it.
    let (audit, found, file, base) = match around.filter(|_| !decoded_ids) {
        None => {
            let (audit, findings) = findings_with_tools(
                template,
                source.map(|s| &**s),
                &shared,
                name,
                &file_text,
                model,
            );
            (audit, Ok(findings), FileText::Held(file_text), shared)
        }
        Some(around) => {
            let tools = tool_findings(&shared, name, &file_text);
            let mut generation = String::with_capacity(prefix_len + shared.generation.len() + 1);
            generation.push_str(&shared.generation);
            let base = Arc::new(shared.with_generation(Text::default()));
            drop(shared);
            drop(file_text);
            let audit =
                rtbench_engine::audit_owned(template, prefix, generation, base.tools.as_ref());
            (audit, Err(tools), FileText::Around(around), base)
        }
    };
    let failed_prefix = match &audit.result {
        Err(_) if audit.marks.is_empty() => {
            prefix_failure(template, prefix, base.tools.as_ref(), doc_len)
        }
        _ => None,
    };
    let audit_document = audit.document;
    let losses = audit.losses;
    let mut trace = failed_prefix.unwrap_or(Trace {
        marks: audit.marks,
        regions: audit.regions,
        origin: audit.origin,
        held: audit.held,
        result: audit.result,
    });
    let regions = trace.regions;
    // The parse's own text is the document, unless the parse read another text (a generation
    // of token ids, decoded).
    let document = match (decoded.as_deref(), audit_document) {
        // The audit parsed the sample's own text: its document is the sample's.
        (None, d) => d,
        (Some(read), d)
            if d.len() == doc_len
                && d.starts_with(prefix)
                && d[prefix_len..] == *read.generation =>
        {
            d
        }
        (Some(read), _) => format!("{prefix}{}", read.generation),
    };
    let document = Arc::new(document);
    // The sample the analysis keeps reads its generation in the document.
    let kept_sample = match Text::shared(&document, prefix_len..document.len()) {
        Some(generation) if !decoded_ids => Arc::new(base.with_generation(generation)),
        _ => Arc::clone(&base),
    };
    drop(base);
    let sample: &Sample = decoded.as_deref().unwrap_or(&kept_sample);
    let error = trace.result.as_ref().err();
    let (findings, problem) = {
        // What is placed in the file's text, in it as read or as rebuilt (then let go of
        // here).
        let rebuilt = (error.is_some() || found.is_err() && places_in_file(sample, &losses))
            .then(|| file.text(&document, prefix_len));
        let file_text = rebuilt.as_deref().unwrap_or("");
        let findings = match found {
            Ok(findings) => findings,
            Err(tools) => {
                let mut findings = audit_findings(
                    template,
                    source.map(|s| &**s),
                    sample,
                    name,
                    file_text,
                    model,
                    &losses,
                );
                findings.extend(tools);
                findings
            }
        };
        let problem = error
            .map(|e| parse_problem(e, &regions, &document, sample, prefix_len, name, file_text));
        (findings, problem)
    };
    drop(losses);
    // Error positions come from the content parsers: keep them on character boundaries.
    let error_at = error
        .and_then(|e| e.span.as_ref())
        .map(|s| document.floor_char_boundary(s.start));
    // Nothing below places anything in the file: its text goes (when the caller let go of
    // it too) before the events are painted, so that it is not held beside the document, the
    // message and the painting at once.
    drop(file);
    // A repeating field's list grew by doubling as its regions closed; the analysis keeps the
    // message while the sample is on screen, so it keeps only the items (156,452 tool calls
    // kept room for 262,144: 3.4 bytes of room per 10 bytes of text). The file's text is gone
    // by now, so the shrinking copy does not add to the peak.
    if let Ok(message) = &mut trace.result {
        for v in message.values_mut() {
            if let Value::List(items) = v {
                items.shrink_to_fit();
            }
        }
    }
    // The events are painted, and their room goes to what follows.
    let painted = painted(&trace.marks, trace.origin, doc_len);
    drop(trace.marks);
    let matched_fields = matched_fields(template, &regions);
    let mut segments = marked_up(painted, &document, &regions, &trace.held, error_at);
    paint_losses(&mut segments, &document, &findings);
    let line_starts = LineStarts::of(&document);
    let field_names: Vec<String> = template.fields().iter().map(|f| f.name.clone()).collect();

    let mut warnings = sample_warnings(template, sample, name, &matched_fields);
    if explain_here {
        let skip: Vec<bool> = matched_fields
            .iter()
            .zip(&absent)
            .map(|(m, a)| m | a)
            .collect();
        unmatched.extend(unmatched_explanations(template, sample, name, &skip));
        // In template order, as the fields are.
        unmatched.sort_by_key(|(field, _)| *field);
    }
    let unmatched = unmatched.into_iter().map(|(_, e)| e).collect();
    let result = trace.result.map_err(|e| e.text());
    let status = status_from(sample, &result);
    warnings.extend(findings.iter().map(|f| f.diagnostic.clone()));
    warnings.extend(differs_warning(&status, name));

    let message = result.ok();
    Analysis {
        sample_name: name.to_string(),
        template: template.clone(),
        sample: kept_sample,
        defused,
        model_dir: model.map(|m| m.dir.clone()),
        template_source: source.cloned(),
        id_replay: None,
        decoded_ids,
        chars: CharIndex::new(&document),
        document,
        prefix_len,
        origin: trace.origin,
        segments,
        regions,
        line_starts,
        field_names,
        content_kinds: template.fields().iter().map(|f| f.content.name()).collect(),
        message,
        problem,
        warnings,
        findings,
        status,
        matched_fields,
        unmatched,
        model_chunkings: Vec::new(),
        tokens: Vec::new(),
    }
}

/// Paints the silent losses lost (a defused spelling is drawn as defused, not lost).
fn paint_losses(segments: &mut Segments, document: &str, findings: &[Finding]) {
    for f in findings.iter().filter(|f| f.kind.is_some()) {
        if let Some(span) = &f.span {
            // An empty place (where a region ended) marks the character after it.
            let end = if span.is_empty() {
                document[span.start..]
                    .chars()
                    .next()
                    .map_or(span.start, |c| span.start + c.len_utf8())
            } else {
                span.end
            };
            segments.overlay(&(span.start..end), |s| s.lost = true);
        }
    }
}

/// Where the parse failed: the failed region, the place in its body and in the sample file.
fn parse_problem(
    e: &ParseError,
    regions: &Regions,
    document: &str,
    sample: &Sample,
    prefix_len: usize,
    name: &str,
    file_text: &str,
) -> ParseProblem {
    let region = regions
        .iter()
        .rposition(|g| g.ending == Some(Ending::Failed));
    let at = e
        .span
        .as_ref()
        .map(|s| document.floor_char_boundary(s.start));
    let in_region = match (region, at) {
        (Some(r), Some(at)) => {
            let body = document.floor_char_boundary(regions.at(r).body.start.min(at));
            let end = e.span.as_ref().map_or(at, |s| s.end).min(document.len());
            let text = &document[body..];
            Some(Location::new(text, at - body..end.max(at) - body))
        }
        _ => None,
    };
    // Text decoded from token ids is not in the file.
    let file_position = at
        .filter(|&a| a >= prefix_len && sample.model.generation_ids.is_none())
        .map(|a| {
            let in_file = sample.generation_offset + (a - prefix_len);
            let loc = Location::new(file_text, in_file..in_file + 1);
            format!("{name}:{}:{}", loc.line, loc.column)
        });
    ParseProblem {
        error: e.clone(),
        region,
        in_region,
        file_position,
        at,
        template_note: None,
    }
}

/// Which fields opened a region.
fn matched_fields(template: &Template, regions: &Regions) -> Vec<bool> {
    let mut matched = vec![false; template.fields().len()];
    for f in (0..regions.len()).filter_map(|r| regions.field(r)) {
        if let Some(m) = matched.get_mut(f) {
            *m = true;
        }
    }
    matched
}

/// The sample's own warnings: no prefix, a required field missing (a start anchor not in the
/// prefix is one of the sample's findings, located at the anchor's key).
fn sample_warnings(
    template: &Template,
    sample: &Sample,
    name: &str,
    matched_fields: &[bool],
) -> Vec<Diagnostic> {
    let mut warnings = Vec::new();
    if sample.prefix.is_none() {
        warnings.push(
            Diagnostic::warning(
                "no prefix given: parsed with an empty prefix, so anything the chat template \
                 pre-wrote (such as an opening <think>) is unknown",
            )
            .in_file(name.to_string())
            .with_help(Some(
                "use a .sample file with a '--- prefix ---' section".into(),
            )),
        );
    }
    for (i, f) in template.fields().iter().enumerate() {
        if !f.optional && !matched_fields[i] {
            warnings.push(
                Diagnostic::warning(format!(
                    "required field '{}' (optional: false) is missing from this sample",
                    f.name
                ))
                .in_file(name.to_string()),
            );
        }
    }
    warnings
}

/// Which fields have a literal open delimiter found nowhere in `document` (so they match
/// nothing there).
fn absent_opens(template: &Template, document: &str) -> Vec<bool> {
    template
        .fields()
        .iter()
        .map(|f| match &f.open {
            Some(Delimiter::Literal(set)) => set.literals.iter().all(|l| !document.contains(l)),
            _ => false,
        })
        .collect()
}

/// Why each literal-delimited field not in `skip` matched nothing (pattern delimiters are left
/// out: the nearest-partial search behind an explanation is not time-bounded, and a
/// pathological pattern would stall the parse thread), with the field's index.
fn unmatched_explanations(
    template: &Template,
    sample: &Sample,
    name: &str,
    skip: &[bool],
) -> Vec<(usize, (String, Vec<String>))> {
    let prefix = sample.prefix.as_deref().unwrap_or("");
    let mut unmatched = Vec::new();
    for (i, f) in template.fields().iter().enumerate() {
        if skip[i] || f.open.as_ref().is_none_or(|o| o.is_pattern()) {
            continue;
        }
        if let Ok(e) = explain(
            template,
            prefix,
            &sample.generation,
            sample.tools.as_ref(),
            &f.name,
        ) {
            // The first line restates the delimiters; the rest says why (places named in the
            // sample file, as everywhere).
            let places = rtbench_tooling::place::Places::of_sample(sample, name);
            unmatched.push((i, (f.name.clone(), e.with_places(places).lines())));
        }
    }
    unmatched
}

/// The difference from the expected message, as a warning (the first 12 lines).
fn differs_warning(status: &Status, name: &str) -> Option<Diagnostic> {
    let Status::Differs(lines) = status else {
        return None;
    };
    let mut msg = String::from("the message differs from the expected one:");
    for l in lines.iter().take(12) {
        // A multi-line difference (a reference error message) keeps its line breaks, its
        // further lines indented under its first.
        msg.push_str("\n  ");
        msg.push_str(&l.replace('\n', "\n    "));
    }
    if lines.len() > 12 {
        msg.push_str(&format!("\n  ... {} more", lines.len() - 12));
    }
    Some(Diagnostic::warning(msg).in_file(name.to_string()))
}

impl Analysis {
    /// The value region `r` gave the message (`None` while open or when it failed).
    pub fn region_value(&self, r: usize) -> Option<&Value> {
        let name = self.region_name(r)?;
        self.regions.value_in(r, self.message.as_ref(), name)
    }

    /// What the content parser made of region `r`'s body.
    pub fn region_parsed(&self, r: usize) -> Option<&Value> {
        let name = self.region_name(r)?;
        self.regions.parsed_in(r, self.message.as_ref(), name)
    }

    /// What region `r`'s transform made (`None` without a transform).
    pub fn region_transformed(&self, r: usize) -> Option<&Value> {
        let name = self.region_name(r)?;
        self.regions.transformed_in(r, self.message.as_ref(), name)
    }

    /// The name of region `r`'s field.
    fn region_name(&self, r: usize) -> Option<&str> {
        Some(self.field_names.get(self.regions.field(r)?)?.as_str())
    }

    /// Index of the segment holding byte `at`.
    pub fn segment_index(&self, at: usize) -> Option<usize> {
        self.segments.index_of(at)
    }

    /// Line and column of a document byte offset.
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        line_col(&self.line_starts, &self.document, byte)
    }

    /// The byte range of line `line` (0-based), without its newline.
    pub fn line_range(&self, line: usize) -> Range<usize> {
        let start = self.line_starts.at(line);
        let end = self
            .line_starts
            .get(line + 1)
            .map_or(self.document.len(), |s| s - 1);
        start..end.max(start)
    }

    /// What the character at `at` is, in words (for the cursor line).
    pub fn describe(&self, at: usize) -> String {
        let Some(i) = self.segment_index(at) else {
            return "end of text".into();
        };
        let s = self.segments.at(i);
        let field = |r: usize| self.region_name(r).unwrap_or_default();
        let nth = |r: usize| {
            let f = self.regions.field(r);
            (0..r).filter(|&q| self.regions.field(q) == f).count() + 1
        };
        let mut out = match s.paint {
            Paint::Cut => "before the start anchor (not parsed)".to_string(),
            Paint::Open { region } => {
                format!("{} #{} · open delimiter", field(region), nth(region))
            }
            Paint::Close { region } => {
                format!("{} #{} · close delimiter", field(region), nth(region))
            }
            Paint::Capture { region, capture } => format!(
                "{} #{} · capture '{}'",
                field(region),
                nth(region),
                self.regions.at(region).captures()[capture].0
            ),
            Paint::Body { region } => format!("{} #{} · body", field(region), nth(region)),
            Paint::Discarded => "discarded (went to no field)".to_string(),
            Paint::Unrouted => "unrouted (went to no field)".to_string(),
            Paint::Unfed => "not fed yet".to_string(),
        };
        if at < self.prefix_len {
            out.push_str(" · prefix");
        }
        if s.held {
            out.push_str(" · held back");
        }
        if s.error {
            out.push_str(" · error here");
        }
        if s.lost {
            out.push_str(" · lost (see the diagnostics)");
        }
        if let Some((r, ids)) = self.defused_at(at) {
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            out.push_str(&format!(
                " · defused: {} written with ordinary tokens{} is text",
                Value::from(
                    self.document[r]
                        .replace(rtbench_engine::MARKER, "")
                        .as_str()
                )
                .py_repr(),
                if ids.is_empty() {
                    String::new()
                } else {
                    format!(" (ids {})", ids.join(" "))
                }
            ));
        }
        if let Some(t) = self.token_index(at) {
            let (id, r) = &self.tokens[t];
            out.push_str(&format!(" · token {} id {id} ({} B)", t + 1, r.len()));
        }
        out
    }

    /// The defused spelling covering byte `at`, if any.
    pub fn defused_at(&self, at: usize) -> Option<(Range<usize>, &[u32])> {
        let i = self.defused.partition_point(|(r, _)| r.end <= at);
        self.defused
            .get(i)
            .filter(|(r, _)| r.contains(&at))
            .map(|(r, ids)| (r.clone(), ids.as_slice()))
    }

    /// The index of the model token covering byte `at`, if any.
    pub fn token_index(&self, at: usize) -> Option<usize> {
        let t = self.tokens.partition_point(|(_, r)| r.end <= at);
        self.tokens
            .get(t)
            .filter(|(_, r)| r.contains(&at))
            .map(|_| t)
    }
}

/// A sample's file name without its folders.
pub(crate) fn short_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtbench_engine::py;
    use rtbench_engine::template::load_template;
    use std::path::Path;

    fn smollm3() -> Template {
        let t = include_str!("../../samples/smollm3/template.json");
        load_template(&py::json_loads(t).unwrap()).unwrap()
    }

    fn sample(text: &str) -> Sample {
        rtbench_tooling::sample::parse_sample(Path::new("t.sample"), text).unwrap()
    }

    /// An analysis given the only hold on the file's text (the generation a stretch of it)
    /// lets go of it before the parse and rebuilds it to place findings: what it reports is
    /// what an analysis that holds the text reports, for every bundled sample and for samples
    /// with layout warnings, losses, a failed parse and tools.
    #[test]
    fn letting_go_of_the_files_text_places_everything_as_holding_it_does() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files: Vec<(Template, String, String)> = Vec::new();
        for dir in std::fs::read_dir(root.join("samples")).unwrap().flatten() {
            let Ok(t) = std::fs::read_to_string(dir.path().join("template.json")) else {
                continue;
            };
            let Ok(t) = Template::from_json_str(&t) else {
                continue;
            };
            for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
                let path = f.path();
                if path.extension().is_some_and(|e| e == "sample") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    files.push((t.clone(), path.display().to_string(), text));
                }
            }
        }
        let t = smollm3();
        for text in [
            // A blank line the layout warns about, and text no region takes.
            "--- prefix ---\n<|im_start|>assistant\n\n--- generation ---\n<think>\nhm</think>\nok<|im_end|>\nafter\n",
            // A failed parse in a tool call.
            "--- prefix (ends with newline) ---\n<|im_start|>assistant\n\n--- generation ---\n<tool_call>\n{bad json</tool_call><|im_end|>\n",
            // Tools the reference ignores part of.
            "--- prefix (ends with newline) ---\n<|im_start|>assistant\n\n--- tools ---\n[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}, \"extra\": 1}}]\n\n--- generation ---\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"1\"}}\n</tool_call><|im_end|>\n",
        ] {
            files.push((t.clone(), "made.sample".to_string(), text.to_string()));
        }
        let mut let_go = 0;
        for (template, name, text) in files {
            let file = Arc::new(text);
            let Ok((s, _)) =
                rtbench_tooling::sample::parse_sample_lenient_shared(Path::new(&name), &file)
            else {
                continue;
            };
            let around = Around::of(&s, &file);
            let_go += usize::from(around.is_some());
            let held = analyze_with_model(
                &template,
                None,
                &name,
                Arc::new(s.clone()),
                Arc::new(file.to_string()),
                None,
                None,
            );
            let given = analyze_with_model(&template, None, &name, Arc::new(s), file, around, None);
            let shown = |a: &Analysis| {
                format!(
                    "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}",
                    a.document, a.warnings, a.problem, a.status, a.message, a.segments
                )
            };
            assert_eq!(shown(&given), shown(&held), "{name}");
            assert_eq!(
                given.sample.generation.as_str(),
                held.sample.generation.as_str()
            );
        }
        assert!(let_go > 60, "{let_go} samples let go of their file's text");
    }

    #[test]
    fn segments_cover_the_document_in_order() {
        let text = include_str!("../../samples/smollm3/weather-tool-call.sample");
        let a = analyze(&smollm3(), "w.sample", Arc::new(sample(text)), text);
        assert!(a.message.is_some());
        let mut at = 0;
        for s in a.segments.iter() {
            assert_eq!(s.range.start, at);
            assert!(s.range.end > s.range.start);
            at = s.range.end;
        }
        assert_eq!(at, a.document.len());
        assert_eq!(a.segments.at(0).paint, Paint::Cut);
        let open = a.document.find("<tool_call>").unwrap();
        assert!(matches!(
            a.segments.at(a.segment_index(open).unwrap()).paint,
            Paint::Open { .. }
        ));
        // The sample's expected section was produced by the reference.
        assert_eq!(a.status, Status::Ok);
    }

    #[test]
    fn an_erased_answer_is_a_located_warning_and_its_text_is_marked() {
        let text = include_str!("../../samples/smollm3/think-then-answer.sample").replace(
            "--- generation ---",
            "--- generation (ends with newline) ---",
        );
        let a = analyze(&smollm3(), "t.sample", Arc::new(sample(&text)), &text);
        assert_eq!(a.findings.len(), 1, "{:?}", a.findings);
        let d = &a.findings[0].diagnostic;
        assert!(
            d.message.ends_with("the message has no 'content'"),
            "{}",
            d.message
        );
        assert!(a.warnings.contains(d));
        assert_eq!(d.position().as_deref(), Some("t.sample:14:99"));
        // The newline that erased it is marked in the raw text, and only it.
        let lost: Vec<&str> = a
            .segments
            .iter()
            .filter(|s| s.lost)
            .map(|s| &a.document[s.range])
            .collect();
        assert_eq!(lost, ["\n"]);
        assert!(
            a.describe(a.document.len() - 1)
                .ends_with("lost (see the diagnostics)")
        );
        // The expected section (without content) is what the reference says for this text.
        assert!(
            a.message
                .as_ref()
                .is_some_and(|m| !m.contains_key("content"))
        );
    }

    #[test]
    fn a_parse_error_points_inside_its_region() {
        let text = include_str!("../../samples/smollm3/truncated-tool-call.sample");
        let a = analyze(&smollm3(), "t.sample", Arc::new(sample(text)), text);
        assert!(a.message.is_none());
        let p = a.problem.as_ref().unwrap();
        let r = p.region.unwrap();
        assert_eq!(a.field_names[a.regions.at(r).field], "tool_calls");
        assert!(p.in_region.is_some());
        assert!(p.file_position.as_deref().unwrap().starts_with("t.sample:"));
        // It fails as its expected section (`{"$error": ...}`) says.
        assert_eq!(a.status, Status::Ok);
    }

    #[test]
    fn a_bare_generation_warns_about_the_missing_prefix() {
        let s = Sample::bare(Path::new("x.txt"), "<think>a</think>b".into());
        let a = analyze(&smollm3(), "x.txt", Arc::new(s), "<think>a</think>b");
        assert!(a.warnings[0].message.starts_with("no prefix given"));
    }

    #[test]
    fn the_cursor_line_names_the_model_token_under_it() {
        let mut a = analyze(&smollm3(), "g", Arc::new(bare("<think>a</think>b")), "");
        a.tokens = vec![(7, 0..7), (42, 7..8), (9, 8..16)];
        assert_eq!(a.token_index(7), Some(1));
        assert_eq!(a.token_index(16), None);
        assert!(
            a.describe(7).ends_with(" · token 2 id 42 (1 B)"),
            "{}",
            a.describe(7)
        );
        assert!(!a.describe(16).contains("token"));
    }

    fn bare(generation: &str) -> Sample {
        Sample {
            prefix: Some(String::new()),
            ..Sample::bare(Path::new("g.txt"), generation.into())
        }
    }

    fn template(json: &str) -> Template {
        load_template(&py::json_loads(json).unwrap()).unwrap()
    }

    fn kind_at(a: &Analysis, text: &str) -> Segment {
        a.segments
            .at(a.segment_index(a.document.find(text).unwrap()).unwrap())
    }

    #[test]
    fn held_back_text_is_marked() {
        let a = analyze(&smollm3(), "g", Arc::new(bare("hi <tool_ca")), "");
        let s = kind_at(&a, "<tool_ca");
        assert!(s.held);
        assert!(!kind_at(&a, "hi").held);
    }

    #[test]
    fn captures_are_found_inside_their_delimiters() {
        let t = template(
            r#"{"start_anchor": "<s>", "fields": {
                "calls": {"open_pattern": "<call name=(?P<name>\\w+)>", "close": "</call>",
                          "transform": {"name": "{name}", "args": "{content}"}}}}"#,
        );
        let a = analyze(&t, "g", Arc::new(bare("x<call name=get>1</call>")), "");
        let s = kind_at(&a, "get");
        assert!(matches!(s.paint, Paint::Capture { .. }), "{:?}", s.paint);
        assert!(matches!(kind_at(&a, "<call").paint, Paint::Open { .. }));
        // No implicit field: the leading text goes nowhere.
        assert_eq!(kind_at(&a, "x").paint, Paint::Discarded);
        assert!(a.region_transformed(0).is_some());
        assert!(
            a.describe(a.document.find("get").unwrap())
                .contains("capture 'name'")
        );
    }

    #[test]
    fn unmatched_fields_are_explained_in_template_order_whether_their_open_is_in_the_text() {
        // `a`'s open is in the text (inside `c`'s body), `b`'s nowhere: `b` is explained before
        // the parse, `a` after it, and they are listed as the template orders them.
        let t = template(
            r#"{"start_anchor": "A:", "fields": {"content": {},
                "a": {"open": "<a>", "close": "</a>"}, "b": {"open": "<b>", "close": "</b>"},
                "c": {"open": "<c>", "close": "</c>"}}}"#,
        );
        let s = bare("<c>x <a> y</c>z");
        let a = analyze(&t, "g", Arc::new(s.clone()), "");
        let names: Vec<&str> = a.unmatched.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        for (field, lines) in &a.unmatched {
            let e = explain(&t, "", &s.generation, None, field).unwrap();
            let places = rtbench_tooling::place::Places::of_sample(&s, "g");
            assert_eq!(lines, &e.with_places(places).lines());
        }
    }

    #[test]
    fn a_start_anchor_missing_from_the_prefix_is_a_warning() {
        let mut s = bare("<think>a</think>b");
        s.prefix = Some("no anchor here".into());
        let a = analyze(&smollm3(), "g", Arc::new(s), "");
        assert!(
            a.warnings
                .iter()
                .any(|w| w.message.contains("not found in the prefix"))
        );
    }
}
