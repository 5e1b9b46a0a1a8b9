//! Plain-text renderings of a [`PortabilityReport`]: the engine x pattern table and one
//! paragraph per problem. No terminal code: callers print the strings.

use crate::report::{Divergence, EngineKind, Outcome, PortabilityReport, Spans, Verdict};

/// The table: one line per pattern, one column per engine.
pub fn table(report: &PortabilityReport) -> String {
    let label = |f: &crate::report::FieldRow| match &f.field {
        Some(name) => format!("{name}.{}", f.key),
        None => f.key.clone(),
    };
    let first = report
        .fields
        .iter()
        .map(|f| label(f).chars().count())
        .max()
        .unwrap_or(0)
        .max("pattern".len());
    let widths: Vec<usize> = report
        .engines
        .iter()
        .enumerate()
        .map(|(i, e)| {
            report
                .fields
                .iter()
                .map(|f| f.verdicts[i].short().len())
                .max()
                .unwrap_or(0)
                .max(e.name().len())
        })
        .collect();
    let mut out = format!("{:first$}", "pattern");
    for (e, w) in report.engines.iter().zip(&widths) {
        out.push_str(&format!("  {:w$}", e.name()));
    }
    for f in &report.fields {
        out.push('\n');
        out.push_str(&format!("{:first$}", label(f)));
        for (v, w) in f.verdicts.iter().zip(&widths) {
            out.push_str(&format!("  {:w$}", v.short()));
        }
    }
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// A match as `[a, b) "text"` plus its named or numbered groups.
pub fn outcome(o: &Outcome) -> String {
    let spans = |s: &Spans| -> String {
        let mut t = match s.first().copied().flatten() {
            Some((a, b)) => format!("{a}..{b}"),
            None => "-".into(),
        };
        let groups: Vec<String> = s
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, g)| match g {
                Some((a, b)) => format!("{i}={a}..{b}"),
                None => format!("{i}=None"),
            })
            .collect();
        if !groups.is_empty() {
            t.push_str(&format!(" (groups {})", groups.join(", ")));
        }
        t
    };
    match o {
        Outcome::NoMatch => "no match".into(),
        Outcome::Match(s) => format!("match {}", spans(s)),
        Outcome::Partial(p) => format!("no complete match (partial from {p})"),
        Outcome::All(all) if all.is_empty() => "no matches".into(),
        Outcome::All(all) => format!(
            "matches {}",
            all.iter().map(spans).collect::<Vec<_>>().join("; ")
        ),
        Outcome::Error(e) => format!("error: {e}"),
    }
}

/// The explanation of one divergence (several lines).
pub fn divergence(engine: EngineKind, d: &Divergence) -> String {
    let at = match (d.line_col, d.doc_offset) {
        (Some((l, c)), _) => format!("{}:{l}:{c}", d.sample),
        (None, Some(o)) => format!("{} (document offset {o})", d.sample),
        (None, None) => d.sample.clone(),
    };
    let quoted = |t: &Option<String>| {
        t.as_ref()
            .map(|t| {
                format!(
                    " {}",
                    rtbench_engine::value::Value::from(t.as_str()).py_repr()
                )
            })
            .unwrap_or_default()
    };
    let mut out = format!(
        "{at}: {} from offset {} (offsets in prefix + generation)\n  python:  {}{}\n  {}: {}{}\n  cause: {}",
        d.kind.name(),
        d.pos,
        outcome(&d.reference),
        quoted(&d.texts.0),
        engine.name(),
        outcome(&d.engine),
        quoted(&d.texts.1),
        d.cause.describe(engine),
    );
    match &d.message_change {
        None => out.push_str("\n  message: unchanged"),
        Some(c) => {
            if let Some((a, b)) = &c.error {
                out.push_str(&format!(
                    "\n  message: python {a}\n           {}: {b}",
                    engine.name()
                ));
            }
            for (k, a, b) in &c.keys {
                out.push_str(&format!(
                    "\n  message[{k:?}]: python {a}, {} {b}",
                    engine.name()
                ));
            }
        }
    }
    out
}

/// One line per problem verdict's headline (for warnings located at the pattern's key).
pub fn headline(
    engine: EngineKind,
    field: &crate::report::FieldRow,
    v: &Verdict,
) -> Option<String> {
    let what = match &field.field {
        Some(name) => format!("field '{name}': {}", field.key),
        None => field.key.clone(),
    };
    match v {
        Verdict::NotExpressible { construct } => Some(format!(
            "{what} is not expressible in {}: {construct}",
            engine.name()
        )),
        Verdict::Differs { samples, .. } => Some(format!(
            "{what} matches differently in {} ({} sample{})",
            engine.name(),
            samples,
            if *samples == 1 { "" } else { "s" }
        )),
        _ => None,
    }
}

/// One problem of a report: a pattern an engine matches differently or cannot express.
pub struct Problem<'a> {
    /// The report's row of the pattern concerned.
    pub row: &'a crate::report::FieldRow,
    /// The engine that matches differently or cannot write the pattern.
    pub engine: EngineKind,
    /// See [`headline`].
    pub headline: String,
    /// For a difference: its first divergence, one line each ([`divergence`]).
    pub details: Vec<String>,
}

/// Every problem of the report, pattern by pattern, engine by engine.
pub fn problems(report: &PortabilityReport) -> Vec<Problem<'_>> {
    let mut out = Vec::new();
    for row in &report.fields {
        for (engine, verdict) in report.engines.iter().zip(&row.verdicts) {
            let Some(headline) = headline(*engine, row, verdict) else {
                continue;
            };
            let details = match verdict {
                Verdict::Differs { first, .. } => divergence(*engine, first)
                    .lines()
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            };
            out.push(Problem {
                row,
                engine: *engine,
                headline,
                details,
            });
        }
    }
    out
}

/// The partial-matching check, one line per sample (`  name: same events, same message`),
/// after a heading; empty when no sample was checked.
pub fn partial_lines(report: &PortabilityReport) -> Vec<String> {
    if report.partial.is_empty() {
        return Vec::new();
    }
    let names: Vec<&str> = report.engines.iter().map(|e| e.name()).collect();
    let mut lines = vec![format!(
        "partial matching: {} cannot match partially; a runtime must hold text back instead. \
         With complete matches only, holding back the pattern's longest match (the whole \
         region for an unbounded pattern), streamed {} code point(s) at a time:",
        names.join(", "),
        crate::partial::CHUNK
    )];
    for p in &report.partial {
        let message = if p.message_differs {
            "the message differs"
        } else {
            "same message"
        };
        lines.push(match &p.first_difference {
            None => format!("  {}: same events, {message}", p.sample),
            Some((feed, ours, theirs)) => format!(
                "  {}: events differ from feed {feed} (rtbench: {ours}; hold-back: {theirs}), {message}",
                p.sample
            ),
        });
    }
    lines
}
