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
