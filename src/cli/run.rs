//! The headless commands.

use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use crate::cli::inputs::{self, Inputs};
use crate::cli::output;
use crate::cli::{Failure, InputArgs};
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::offsets::CharIndex;
use rtbench_engine::parser::{Events, ParseError, Parser, parse_response};
use rtbench_engine::template::Template;
use rtbench_engine::value::Value;
use rtbench_tokenize::ids::{IdParser, Prefix as IdPrefix, parse_ids};

/// `rtbench check`.
pub(super) fn check(path: &Path) -> Result<(), Failure> {
    let (template, source) = inputs::template(path)?;
    let path = inputs::template_path(path)?;
    let names: Vec<&str> = template.fields().iter().map(|f| f.name.as_str()).collect();
    let kind = if source.is_tokenizer_config() {
        "response template (in tokenizer config)"
    } else {
        "response template"
    };
    output::print_line(&format!(
        "{}: valid {kind}; fields: {}",
        path.display(),
        names.join(", ")
    ))?;
    Ok(())
}

/// Runs a command on every sample of a folder and prints one JSON line per sample:
/// `{"path": "...", ...}` with the fields `run` appends (each starting with a comma), and
/// `"error": "..."` when it fails. After all lines, fails with the highest exit code of the
/// failures (1 for a parse error or a disagreement, 2 for an unreadable file).
pub(crate) fn each_sample(
    job: &inputs::Job,
    mut run: impl FnMut(&Path, &mut String) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let mut failed = 0;
    let mut code = 0;
    for file in &job.files {
        let mut line = String::from("{\"path\":");
        output::push_json_str(&mut line, &file.display().to_string())?;
        if let Err(f) = run(file, &mut line) {
            failed += 1;
            code = code.max(f.code);
            let message = f.message.trim_end();
            let message = message.strip_prefix("error: ").unwrap_or(message);
            line.push_str(",\"error\":");
            output::push_json_str(&mut line, message)?;
        }
        line.push('}');
        output::print_line(&line)?;
    }
    if failed == 0 {
        return Ok(());
    }
    Err(Failure {
        message: format!("{failed} of {} samples failed", job.files.len()),
        code: code.max(1),
    })
}

/// One-shot parse of one generation (of token ids as the reference parses ids, when it was
/// given so).
fn parse_one(job: &inputs::Job, inputs: Inputs) -> Result<Value, Failure> {
    let prefix = inputs
        .prefix
        .as_deref()
        .ok_or_else(inputs::missing_prefix)?;
    let message = match &inputs.ids {
        Some(ids) => {
            let tokenizer = job.tokenizer()?;
            let control = job.model().control_tokens().map_err(Failure::invalid)?;
            let prefix = match &ids.prefix {
                Some(p) => IdPrefix::Ids(p),
                None => IdPrefix::Text(prefix),
            };
            parse_ids(
                &inputs.template,
                Some(prefix),
                &ids.generation,
                inputs.tools.as_ref(),
                tokenizer,
                control,
            )
        }
        None => parse_response(
            &inputs.template,
            Some(prefix),
            &inputs.output,
            inputs.tools.as_ref(),
        ),
    }
    .map_err(|e| Failure::parse_at(&e, prefix, &inputs.output, &job.place_of(&inputs)))?;
    Ok(Value::Dict(message))
}

/// `rtbench parse`. On a folder: `{"path": ..., "message": {...}}` per sample.
pub(super) fn parse(args: &InputArgs, pretty: bool) -> Result<(), Failure> {
    let job = inputs::job(args)?;
    if !job.folder {
        let message = parse_one(&job, job.inputs(&args.output)?)?;
        return output::print_line(&output::json(&message, pretty)?);
    }
    if pretty {
        return Err(Failure::usage(
            "--pretty cannot be used with a folder: the output is JSON Lines, one sample per line",
        ));
    }
    each_sample(&job, |file, line| {
        let message = parse_one(&job, job.inputs(file)?)?;
        line.push_str(",\"message\":");
        line.push_str(&output::json_nested(&message, false, 1)?);
        Ok(())
    })
}

/// The `chunks` report for one generation: whether every chunking agrees, and the text.
fn chunks_one(
    job: &inputs::Job,
    inputs: Inputs,
    name: &str,
    max: u64,
    random: u64,
    seed: u64,
) -> Result<(bool, String), Failure> {
    use rtbench_tooling::chunking::{CheckPlan, Generation, TokenInput, check};
    let Inputs {
        template,
        prefix,
        tools,
        output: text,
        ids,
        ..
    } = inputs;
    let prefix = prefix.ok_or_else(inputs::missing_prefix)?;
    let token_input = match &ids {
        Some(ids) => Some(TokenInput {
            ids: &ids.generation,
            prefix: match &ids.prefix {
                Some(p) => IdPrefix::Ids(p),
                None => IdPrefix::Text(&prefix),
            },
            tokenizer: job.tokenizer()?,
            control: job.model().control_tokens().map_err(Failure::invalid)?,
        }),
        None => None,
    };
    let generation = Generation {
        template,
        prefix: &prefix,
        tools: tools.as_ref(),
        text: &text,
        ids: token_input,
    };
    let plan = CheckPlan {
        max_size: usize::try_from(max).unwrap_or(usize::MAX),
        random: usize::try_from(random).unwrap_or(usize::MAX),
        seed,
        ..CheckPlan::default()
    };
    // With the model's tokenizer: its tokens and the TextStreamer's pieces too.
    let plan = plan.fitted(&generation, || {
        if let Err(e) = &job.model().tokenizer {
            note!("warning: {e}: the model-token chunkings are left out");
        }
        job.model_chunkings(&text)
    });
    let mut report = check(&generation, &plan);
    report.locate(&job.source);
    // A parse that fails whatever the chunking fails as `parse` does (exit 1), with its error.
    if report.stable_error().is_some() {
        return Err(Failure::invalid(report.describe(name, &text)));
    }
    Ok((report.agrees(), report.describe(name, &text)))
}

/// `rtbench chunks`. On a folder: `{"path": ..., "agrees": true|false, "report": "..."}` per
/// sample (a disagreement counts as a failure: exit 1).
pub(super) fn chunks(args: &InputArgs, max: u64, random: u64, seed: u64) -> Result<(), Failure> {
    let job = inputs::job(args)?;
    if !job.folder {
        let inputs = job.inputs(&args.output)?;
        let name = args.output.display().to_string();
        let (agrees, text) = chunks_one(&job, inputs, &name, max, random, seed)?;
        if agrees {
            return output::print_line(&text);
        }
        return Err(Failure::invalid(text));
    }
    each_sample(&job, |file, line| {
        let inputs = job.inputs(file)?;
        let name = file.display().to_string();
        let (agrees, text) = chunks_one(&job, inputs, &name, max, random, seed)?;
        line.push_str(if agrees {
            ",\"agrees\":true,\"report\":"
        } else {
            ",\"agrees\":false,\"report\":"
        });
        output::push_json_str(line, &text)?;
        if agrees {
            Ok(())
        } else {
            // The report is in the line already; the failure only counts.
            Err(Failure::invalid("the chunkings disagree (see the report)"))
        }
    })
}

/// Chunk sizes from `--chunks N[,N...]`.
fn chunk_sizes(spec: &str) -> Result<Vec<usize>, Failure> {
    let sizes: Vec<usize> = spec
        .split(',')
        .map(|s| s.trim().parse::<usize>().ok().filter(|&n| n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            Failure::usage(format!(
                "bad --chunks value {spec:?}: give positive integers separated by commas"
            ))
        })?;
    Ok(sizes)
}

/// Splits `text` into chunks of `sizes[0]`, `sizes[1]`, ... code points, cycling through
/// `sizes`, as byte ranges.
pub(super) fn chunk_ranges(text: &str, sizes: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().map(|(i, _)| i).chain([text.len()]);
    let mut start = chars.next().unwrap_or(0);
    for &n in sizes.iter().cycle() {
        if start >= text.len() {
            break;
        }
        let end = chars.nth(n - 1).unwrap_or(text.len());
        out.push(start..end);
        start = end;
    }
    out
}

/// Span data added by `stream --spans`.
struct SpanWriter {
    document: String,
    index: CharIndex,
}

impl SpanWriter {
    /// `{"bytes":[s,e],"chars":[s,e]}`.
    fn span(&self, r: &Range<usize>) -> String {
        let c = |b: usize| self.index.chars_at(&self.document, b);
        format!(
            "{{\"bytes\":[{},{}],\"chars\":[{},{}]}}",
            r.start,
            r.end,
            c(r.start),
            c(r.end)
        )
    }
}

/// One line of `stream` output, built in a reused buffer.
struct LineWriter<'a, W: Write> {
    out: W,
    line: String,
    template: &'a Template,
    spans: Option<&'a SpanWriter>,
}

impl<W: Write> LineWriter<'_, W> {
    /// Appends `"key":[events...]` and, with spans, `"discarded":[...]`.
    fn events(&mut self, key: &str, events: &[Event]) -> Result<(), Failure> {
        self.line.push('"');
        self.line.push_str(key);
        self.line.push_str("\":[");
        let mut first = true;
        for ev in events.iter().filter(|e| e.is_reference()) {
            if !first {
                self.line.push(',');
            }
            first = false;
            let extra = self
                .spans
                .map(|w| format!(",\"span\":{}", w.span(&ev.span)));
            output::push_event(
                &mut self.line,
                ev,
                &self.template.fields()[ev.field].name,
                extra.as_deref(),
            )?;
        }
        self.line.push(']');
        if let Some(w) = self.spans {
            self.line.push_str(",\"discarded\":[");
            let mut first = true;
            for ev in events {
                if let EventKind::Discard { text } = &ev.kind {
                    if !first {
                        self.line.push(',');
                    }
                    first = false;
                    self.line.push_str("{\"text\":");
                    output::push_json_str(&mut self.line, text)?;
                    self.line.push_str(",\"span\":");
                    self.line.push_str(&w.span(&ev.span));
                    self.line.push('}');
                }
            }
            self.line.push(']');
        }
        Ok(())
    }

    fn held(&mut self, held: Range<usize>) {
        if let Some(w) = self.spans {
            self.line.push_str(",\"held\":");
            self.line.push_str(&w.span(&held));
        }
    }

    /// The last line: `{"final_events": [...], "message": {...}}`.
    fn last(
        &mut self,
        events: &[Event],
        message: rtbench_engine::value::Dict,
    ) -> Result<(), Failure> {
        self.line.push('{');
        self.events("final_events", events)?;
        self.line.push_str(",\"message\":");
        self.line
            .push_str(&output::json_nested(&Value::Dict(message), false, 1)?);
        self.finish()
    }

    fn finish(&mut self) -> Result<(), Failure> {
        self.line.push_str("}\n");
        self.out
            .write_all(self.line.as_bytes())
            .map_err(output::write_failure)?;
        self.line.clear();
        Ok(())
    }
}

/// `rtbench stream`. On a folder: one line per sample, `{"path": ..., "stream": [...]}` whose
/// list holds the objects a single file prints as lines (`{"initial_events": ...}`, one
/// `{"chunk": ..., "events": ...}` per feed, `{"final_events": ..., "message": ...}`); a sample
/// that fails has the objects up to the failure and `"error"`.
pub(super) fn stream(args: &InputArgs, chunks: &str, spans: bool) -> Result<(), Failure> {
    let sizes = chunk_sizes(chunks)?;
    let job = inputs::job(args)?;
    if !job.folder {
        let stdout = std::io::stdout();
        let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
        let result = stream_one(&mut out, &job, job.inputs(&args.output)?, &sizes, spans);
        let flushed = out.flush().map_err(output::write_failure);
        return result.and(flushed);
    }
    each_sample(&job, |file, line| {
        let inputs = job.inputs(file)?;
        let mut buf = Vec::new();
        let result = stream_one(&mut buf, &job, inputs, &sizes, spans);
        // Every line written is one JSON object (strings escape their line breaks).
        let text = String::from_utf8(buf).map_err(|e| Failure::invalid(e.to_string()))?;
        line.push_str(",\"stream\":[");
        line.push_str(&text.trim_end_matches('\n').replace('\n', ","));
        line.push(']');
        result
    })
}

/// Streams one generation and writes its JSON Lines to `out`.
fn stream_one<W: Write>(
    out: W,
    job: &inputs::Job,
    inputs: Inputs,
    sizes: &[usize],
    spans: bool,
) -> Result<(), Failure> {
    if inputs.ids.is_some() {
        return stream_ids(out, job, inputs, sizes, spans);
    }
    let at = job.place_of(&inputs);
    let Inputs {
        template,
        prefix,
        tools,
        output: text,
        ..
    } = inputs;
    let prefix = prefix.ok_or_else(inputs::missing_prefix)?;
    let writer = spans.then(|| {
        let document = format!("{prefix}{text}");
        let index = CharIndex::new(&document);
        SpanWriter { document, index }
    });
    let mut lines = LineWriter {
        out,
        line: String::new(),
        template: &template,
        spans: writer.as_ref(),
    };
    stream_to(
        &mut lines,
        (&template, &at),
        &prefix,
        tools.as_ref(),
        &text,
        sizes,
    )
}

fn stream_to<W: Write>(
    lines: &mut LineWriter<'_, W>,
    (template, at): (&Template, &crate::failure::Where<'_>),
    prefix: &str,
    tools: Option<&Value>,
    text: &str,
    sizes: &[usize],
) -> Result<(), Failure> {
    let mode = if lines.spans.is_some() {
        Events::Trace
    } else {
        Events::Reference
    };
    let mut parser = Parser::with_events(template, Some(prefix), tools, mode)
        .map_err(|e| Failure::parse_at(&e, prefix, text, at))?;
    lines.line.push('{');
    lines.events("initial_events", parser.initial_events())?;
    lines.held(parser.held());
    lines.finish()?;
    for range in chunk_ranges(text, sizes) {
        let chunk = &text[range.clone()];
        let events = parser
            .feed(chunk)
            .map_err(|e| Failure::parse_at(&e, prefix, text, at))?;
        lines.line.push_str("{\"chunk\":");
        output::push_json_str(&mut lines.line, chunk)?;
        lines.line.push(',');
        lines.events("events", &events)?;
        if let Some(w) = lines.spans {
            let r = prefix.len() + range.start..prefix.len() + range.end;
            let span = w.span(&r);
            lines.line.push_str(",\"chunk_span\":");
            lines.line.push_str(&span);
        }
        lines.held(parser.held());
        lines.finish()?;
    }
    let (message, events) = parser
        .finalize()
        .map_err(|e| Failure::parse_at(&e, prefix, text, at))?;
    lines.last(&events, message)
}

/// Streams a generation of token ids, `sizes` ids per feed: each line's `chunk` is the list of
/// ids fed. Spans point into the decoded prompt and generation (defused spellings with their
/// markers), which is what the parser scans.
fn stream_ids<W: Write>(
    out: W,
    job: &inputs::Job,
    inputs: Inputs,
    sizes: &[usize],
    spans: bool,
) -> Result<(), Failure> {
    let Inputs {
        template,
        prefix,
        tools,
        ids,
        ..
    } = inputs;
    let Some(ids) = ids else {
        return Ok(());
    };
    let prefix = prefix.ok_or_else(inputs::missing_prefix)?;
    let tokenizer = job.tokenizer()?;
    let control = job.model().control_tokens().map_err(Failure::invalid)?;
    let id_prefix = match &ids.prefix {
        Some(p) => IdPrefix::Ids(p),
        None => IdPrefix::Text(&prefix),
    };
    let mode = if spans {
        Events::Trace
    } else {
        Events::Reference
    };
    let fail = |e: rtbench_engine::ParseError| Failure::invalid(format!("error: {}", e.text()));
    let mut parser = IdParser::new(
        &template,
        Some(id_prefix),
        tools.as_ref(),
        tokenizer,
        control,
        mode,
        false,
    )
    .map_err(fail)?;
    // Spans need the whole decoded document first: decode it once with a parser of the same
    // kind, which holds exactly the text this one will.
    let writer = if spans {
        let mut whole = IdParser::new(
            &template,
            Some(id_prefix),
            tools.as_ref(),
            tokenizer,
            control,
            Events::None,
            false,
        )
        .map_err(fail)?;
        for chunk in id_chunks(&ids.generation, sizes) {
            let _ = whole.feed(chunk);
        }
        let _ = whole.finalize();
        let document = whole.document().to_string();
        let index = CharIndex::new(&document);
        Some(SpanWriter { document, index })
    } else {
        None
    };
    let mut lines = LineWriter {
        out,
        line: String::new(),
        template: &template,
        spans: writer.as_ref(),
    };
    lines.line.push('{');
    lines.events("initial_events", parser.initial_events())?;
    lines.held(parser.parser().held());
    lines.finish()?;
    for chunk in id_chunks(&ids.generation, sizes) {
        let fed_from = parser.document().len();
        let (events, _) = parser.feed(chunk).map_err(fail)?;
        lines.line.push_str("{\"chunk\":");
        lines.line.push_str(&output::json_ids(chunk));
        lines.line.push(',');
        lines.events("events", &events)?;
        if let Some(w) = lines.spans {
            let span = w.span(&(fed_from..parser.document().len()));
            lines.line.push_str(",\"chunk_span\":");
            lines.line.push_str(&span);
        }
        lines.held(parser.parser().held());
        lines.finish()?;
    }
    let (message, events, _) = parser.finalize().map_err(fail)?;
    lines.last(&events, message)
}

/// `ids` cut into feeds of `sizes[0]`, `sizes[1]`, ... ids, cycling through `sizes`.
fn id_chunks<'a>(ids: &'a [u32], sizes: &'a [usize]) -> impl Iterator<Item = &'a [u32]> + 'a {
    let mut rest = ids;
    sizes.iter().cycle().map_while(move |&n| {
        if rest.is_empty() {
            return None;
        }
        let (chunk, next) = rest.split_at(n.min(rest.len()));
        rest = next;
        Some(chunk)
    })
}

/// The bundled sample, compiled in so that it works from any directory.
const BUNDLED_TEMPLATE: &str = include_str!("../../samples/smollm3/template.json");
const BUNDLED_SAMPLE: &str = include_str!("../../samples/smollm3/weather-tool-call.sample");

/// `rtbench` with no arguments: parse the bundled sample and print its message.
pub(super) fn bundled_sample() -> Result<(), Failure> {
    use rtbench_engine::template::source::source_from_text;
    let source = source_from_text(
        "samples/smollm3/template.json".into(),
        BUNDLED_TEMPLATE.into(),
    )
    .map_err(|e| Failure::invalid(e.to_string()))?;
    let template = rtbench_engine::template::load_template(source.template_value())
        .map_err(|e| Failure::invalid(source.diagnose(&e).to_string()))?;
    let path = Path::new("samples/smollm3/weather-tool-call.sample");
    let sample = rtbench_tooling::sample::parse_sample(path, BUNDLED_SAMPLE)
        .map_err(|e| Failure::invalid(e.to_string()))?;
    let prefix = sample.prefix.as_deref().unwrap_or("");
    let fail = |e: ParseError| Failure::parse(&e, prefix, &sample.generation);
    let mut parser =
        Parser::new(&template, sample.prefix.as_deref(), sample.tools.as_ref()).map_err(fail)?;
    parser.feed(&sample.generation).map_err(fail)?;
    let (message, _) = parser.finalize().map_err(fail)?;
    output::print_line(&format!(
        "{}:\n{}",
        path.display(),
        output::json(&Value::Dict(message), true)?
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cycle_sizes_in_code_points() {
        let text = "aé😀bcd";
        let chunks: Vec<&str> = chunk_ranges(text, &[1, 2])
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(chunks, vec!["a", "é😀", "b", "cd"]);
        assert!(chunk_ranges("", &[3]).is_empty());
        let whole: Vec<&str> = chunk_ranges(text, &[100])
            .into_iter()
            .map(|r| &text[r])
            .collect();
        assert_eq!(whole, vec![text]);
    }

    #[test]
    fn chunk_sizes_must_be_positive() {
        assert_eq!(chunk_sizes("1,2").unwrap(), vec![1, 2]);
        assert!(chunk_sizes("0").is_err());
        assert!(chunk_sizes("a").is_err());
        assert!(chunk_sizes("").is_err());
    }
}
