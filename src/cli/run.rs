//! The headless commands.

use std::io::{BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use crate::cli::inputs::{self, Inputs};
use crate::cli::output;
use crate::cli::{Failure, InputArgs};
use rtbench_engine::event::{Event, EventKind};
use rtbench_engine::offsets::CharIndex;
use rtbench_engine::parser::{Events, Parser, parse_response_owned};
use rtbench_engine::template::Template;
use rtbench_engine::value::Value;

/// `rtbench check`.
pub fn check(path: &Path) -> Result<(), Failure> {
    let (template, source) = inputs::template(path)?;
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

/// `rtbench parse`.
pub fn parse(args: &InputArgs, pretty: bool) -> Result<(), Failure> {
    let inputs = inputs::read(args)?;
    let prefix = inputs
        .prefix
        .as_deref()
        .ok_or_else(inputs::missing_prefix)?;
    let message = parse_response_owned(
        &inputs.template,
        Some(prefix),
        inputs.output,
        inputs.tools.as_ref(),
    )
    .map_err(|e| Failure::invalid(e.message))?;
    output::print_line(&output::json(&Value::Dict(message), pretty)?)?;
    Ok(())
}

/// `rtbench chunks`.
pub fn chunks(args: &InputArgs, max: usize, random: usize, seed: u64) -> Result<(), Failure> {
    use rtbench_tooling::chunking::{CheckPlan, Generation, check};
    let inputs = inputs::read(args)?;
    let prefix = inputs
        .prefix
        .as_deref()
        .ok_or_else(inputs::missing_prefix)?;
    let generation = Generation {
        template: inputs.template,
        prefix,
        tools: inputs.tools.as_ref(),
        text: &inputs.output,
    };
    let plan = CheckPlan {
        max_size: max,
        random,
        seed,
        tokens: true,
    };
    let report = check(&generation, &plan);
    let text = report.describe(&args.output.display().to_string(), &inputs.output);
    if report.agrees() {
        return output::print_line(&text);
    }
    Err(Failure::invalid(text))
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
pub fn chunk_ranges(text: &str, sizes: &[usize]) -> Vec<Range<usize>> {
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

    fn finish(&mut self) -> Result<(), Failure> {
        self.line.push_str("}\n");
        self.out
            .write_all(self.line.as_bytes())
            .map_err(output::write_failure)?;
        self.line.clear();
        Ok(())
    }
}

/// `rtbench stream`.
pub fn stream(args: &InputArgs, chunks: &str, spans: bool) -> Result<(), Failure> {
    let sizes = chunk_sizes(chunks)?;
    let Inputs {
        template,
        prefix,
        tools,
        output: text,
    } = inputs::read(args)?;
    let prefix = prefix.ok_or_else(inputs::missing_prefix)?;
    let writer = spans.then(|| {
        let document = format!("{prefix}{text}");
        let index = CharIndex::new(&document);
        SpanWriter { document, index }
    });
    let stdout = std::io::stdout();
    let mut lines = LineWriter {
        out: BufWriter::with_capacity(1 << 16, stdout.lock()),
        line: String::new(),
        template: &template,
        spans: writer.as_ref(),
    };
    let result = stream_to(
        &mut lines,
        &template,
        &prefix,
        tools.as_ref(),
        &text,
        &sizes,
    );
    let flushed = lines.out.flush().map_err(output::write_failure);
    result.and(flushed)
}

fn stream_to<W: Write>(
    lines: &mut LineWriter<'_, W>,
    template: &Template,
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
        .map_err(|e| Failure::invalid(e.message))?;
    lines.line.push('{');
    lines.events("initial_events", parser.initial_events())?;
    lines.held(parser.held());
    lines.finish()?;
    for range in chunk_ranges(text, sizes) {
        let chunk = &text[range.clone()];
        let events = parser
            .feed(chunk)
            .map_err(|e| Failure::invalid(e.message))?;
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
    let (message, events) = parser.finalize().map_err(|e| Failure::invalid(e.message))?;
    lines.line.push('{');
    lines.events("final_events", &events)?;
    lines.line.push_str(",\"message\":");
    lines
        .line
        .push_str(&output::json_nested(&Value::Dict(message), false, 1)?);
    lines.finish()
}

/// The bundled sample, compiled in so that it works from any directory.
const BUNDLED_TEMPLATE: &str = include_str!("../../samples/smollm3/template.json");
const BUNDLED_SAMPLE: &str = include_str!("../../samples/smollm3/weather-tool-call.sample");

/// `rtbench` with no arguments: parse the bundled sample and print its message.
pub fn bundled_sample() -> Result<(), Failure> {
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
    let mut parser = Parser::new(&template, sample.prefix.as_deref(), sample.tools.as_ref())
        .map_err(|e| Failure::invalid(e.message))?;
    parser
        .feed(&sample.generation)
        .map_err(|e| Failure::invalid(e.message))?;
    let (message, _) = parser.finalize().map_err(|e| Failure::invalid(e.message))?;
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
