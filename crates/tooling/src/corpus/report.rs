//! The corpus report: counts, per-field tallies, errors grouped by kind and field (one example
//! each), chunking instability over the checked records, and the slowest records. It holds a
//! bounded amount whatever the corpus size: tallies, one example per group, a few of the rest.

use std::collections::BTreeMap;
use std::time::Duration;

use super::outcome::{Outcome, Status, error_kind};
use rtbench_engine::template::Template;
use rtbench_engine::value::{Dict, Value};

/// How many malformed lines, unstable records and slowest records the report lists.
pub const LISTED: usize = 10;

/// Per-field tallies over the parsed records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldTally {
    /// Records whose message has a value for the field.
    pub matched: u64,
    /// Records where a region of the field opened but its value was empty and dropped.
    pub empty: u64,
    /// Records where a later region replaced the field's value.
    pub overwritten: u64,
    /// Records where a region of the field never closed and took the rest of the generation.
    pub truncated: u64,
    /// Records whose parse error is in the field.
    pub errors: u64,
}

/// One group of errors: how many, and the first record that had it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorGroup {
    /// How many records had an error of the group.
    pub count: u64,
    /// The first such record, as the report names it.
    pub example: String,
    /// That record's full error message.
    pub message: String,
}

/// The aggregate of a corpus run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every entry run, input errors included.
    pub records: u64,
    /// Records that parsed into a message.
    pub parsed: u64,
    /// Records whose parse raised the reference's error.
    pub errors: u64,
    /// Records whose result is not their expected message (or error).
    pub differs: u64,
    /// Records that had an expected message to compare with.
    pub checked: u64,
    /// Lines that are not records, and records whose model inputs could not be made text.
    pub input_errors: u64,
    /// The first few of those: where, and why.
    pub input_examples: Vec<(String, String)>,
    /// Field name and tallies, in the template's order.
    pub fields: Vec<(String, FieldTally)>,
    /// Keyed by (kind, field).
    pub error_groups: BTreeMap<(String, Option<String>), ErrorGroup>,
    /// Records given the chunking check.
    pub chunk_checked: u64,
    /// Records with a chunking whose result differs from the one-shot parse.
    pub chunk_unstable: u64,
    /// Records due the chunking check but too long for it.
    pub chunk_skipped: u64,
    /// The first few of those, as the report names them.
    pub unstable_examples: Vec<String>,
    /// The slowest records, slowest first.
    pub slowest: Vec<(Duration, String)>,
    /// Sum of the records' parse times.
    pub parse_time: Duration,
    /// Records that fail: not a record, an error no expectation allowed, a difference.
    pub failures: u64,
}

impl Report {
    /// An empty report with a tally for each of the template's fields.
    pub fn new(template: &Template) -> Report {
        Report {
            fields: template
                .fields()
                .iter()
                .map(|f| (f.name.clone(), FieldTally::default()))
                .collect(),
            ..Report::default()
        }
    }

    /// Adds one record's outcome.
    pub fn add(&mut self, o: &Outcome) {
        self.records += 1;
        self.failures += u64::from(o.is_failure());
        match &o.status {
            Status::Input(m) => {
                self.input_errors += 1;
                if self.input_examples.len() < LISTED {
                    self.input_examples
                        .push((o.location.to_string(), m.clone()));
                }
                return;
            }
            Status::Parsed(_) => self.parsed += 1,
            Status::Error(e) => {
                self.errors += 1;
                let key = (error_kind(&e.message), e.field.clone());
                self.error_groups
                    .entry(key)
                    .or_insert_with(|| ErrorGroup {
                        count: 0,
                        example: o.label(),
                        message: e.message.clone(),
                    })
                    .count += 1;
            }
        }
        self.checked += u64::from(o.checked);
        self.differs += u64::from(o.differs.is_some());
        for ((_, t), m) in self.fields.iter_mut().zip(&o.fields) {
            t.matched += u64::from(m.matched);
            t.empty += u64::from(m.empty);
            t.overwritten += u64::from(m.overwritten);
            t.truncated += u64::from(m.truncated);
            t.errors += u64::from(m.error);
        }
        self.chunk_skipped += u64::from(o.chunk_skipped);
        if let Some(stable) = o.chunk_stable {
            self.chunk_checked += 1;
            if !stable {
                self.chunk_unstable += 1;
                if self.unstable_examples.len() < LISTED {
                    self.unstable_examples.push(o.label());
                }
            }
        }
        self.parse_time += o.elapsed;
        let slow_enough =
            self.slowest.len() < LISTED || self.slowest.last().is_some_and(|(d, _)| o.elapsed > *d);
        if slow_enough {
            let at = self.slowest.partition_point(|(d, _)| *d >= o.elapsed);
            self.slowest.insert(at, (o.elapsed, o.label()));
            self.slowest.truncate(LISTED);
        }
    }

    /// The report as one JSON object (`records`, `parsed`, `errors`, `differs` and `fields`
    /// first; then the rest).
    pub fn to_value(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let mut o = Dict::new();
        o.insert("records", int(self.records));
        o.insert("parsed", int(self.parsed));
        o.insert("errors", int(self.errors));
        o.insert("differs", int(self.differs));
        o.insert("checked", int(self.checked));
        o.insert("input_errors", int(self.input_errors));
        o.insert("failures", int(self.failures));
        let mut fields = Dict::new();
        for (name, t) in &self.fields {
            let mut f = Dict::new();
            f.insert("matched", int(t.matched));
            f.insert("empty", int(t.empty));
            f.insert("overwritten", int(t.overwritten));
            f.insert("truncated", int(t.truncated));
            f.insert("errors", int(t.errors));
            fields.insert(name.clone(), Value::Dict(f));
        }
        o.insert("fields", Value::Dict(fields));
        let groups = self
            .sorted_groups()
            .into_iter()
            .map(|((kind, field), g)| {
                let mut d = Dict::new();
                d.insert("kind", Value::from(kind.as_str()));
                d.insert("field", field.as_deref().map_or(Value::Null, Value::from));
                d.insert("count", int(g.count));
                d.insert("example", Value::from(g.example.as_str()));
                d.insert("message", Value::from(g.message.as_str()));
                Value::Dict(d)
            })
            .collect();
        o.insert("error_groups", Value::List(groups));
        let inputs = self
            .input_examples
            .iter()
            .map(|(at, m)| {
                let mut d = Dict::new();
                d.insert("record", Value::from(at.as_str()));
                d.insert("message", Value::from(m.as_str()));
                Value::Dict(d)
            })
            .collect();
        o.insert("input_examples", Value::List(inputs));
        let mut chunking = Dict::new();
        chunking.insert("checked", int(self.chunk_checked));
        chunking.insert("unstable", int(self.chunk_unstable));
        chunking.insert("skipped_long", int(self.chunk_skipped));
        chunking.insert("rate", Value::Float(self.unstable_rate()));
        chunking.insert(
            "examples",
            Value::List(
                self.unstable_examples
                    .iter()
                    .map(|s| Value::from(s.as_str()))
                    .collect(),
            ),
        );
        o.insert("chunking", Value::Dict(chunking));
        let slowest = self
            .slowest
            .iter()
            .map(|(d, label)| {
                let mut s = Dict::new();
                s.insert("record", Value::from(label.as_str()));
                s.insert(
                    "micros",
                    int(u64::try_from(d.as_micros()).unwrap_or(u64::MAX)),
                );
                Value::Dict(s)
            })
            .collect();
        o.insert("slowest", Value::List(slowest));
        Value::Dict(o)
    }

    /// The share of checked records whose result some chunking changes (0 when none checked).
    pub fn unstable_rate(&self) -> f64 {
        if self.chunk_checked == 0 {
            0.0
        } else {
            self.chunk_unstable as f64 / self.chunk_checked as f64
        }
    }

    /// Error groups, largest first.
    pub fn sorted_groups(&self) -> Vec<(&(String, Option<String>), &ErrorGroup)> {
        let mut v: Vec<_> = self.error_groups.iter().collect();
        v.sort_by(|a, b| b.1.count.cmp(&a.1.count).then_with(|| a.0.cmp(b.0)));
        v
    }

    /// The readable summary.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let pct = |n: u64, of: u64| {
            if of == 0 {
                0.0
            } else {
                100.0 * n as f64 / of as f64
            }
        };
        s.push_str(&format!(
            "{} records: {} parsed, {} reference errors, {} not records",
            self.records, self.parsed, self.errors, self.input_errors
        ));
        if self.checked > 0 {
            s.push_str(&format!(
                "; {} of {} with an expected message differ",
                self.differs, self.checked
            ));
        }
        s.push('\n');
        let parsed = self.parsed + self.errors;
        if !self.fields.is_empty() {
            let width = self
                .fields
                .iter()
                .map(|(n, _)| n.len())
                .max()
                .unwrap_or(5)
                .max(5);
            s.push_str(&format!(
                "\n{:width$}  {:>15}  {:>8}  {:>11}  {:>9}  {:>6}\n",
                "field", "matched", "empty", "overwritten", "truncated", "errors"
            ));
            for (name, t) in &self.fields {
                s.push_str(&format!(
                    "{:width$}  {:>8} {:>5.1}%  {:>8}  {:>11}  {:>9}  {:>6}\n",
                    name,
                    t.matched,
                    pct(t.matched, parsed),
                    t.empty,
                    t.overwritten,
                    t.truncated,
                    t.errors
                ));
            }
        }
        if !self.error_groups.is_empty() {
            s.push_str("\nerrors by kind:\n");
            for ((kind, field), g) in self.sorted_groups() {
                let field = field
                    .as_deref()
                    .map_or_else(String::new, |f| format!(" in '{f}'"));
                s.push_str(&format!(
                    "  {:>6}  {kind}{field}\n          e.g. {}\n",
                    g.count, g.example
                ));
            }
        }
        if !self.input_examples.is_empty() {
            s.push_str(&format!("\nnot records ({}):\n", self.input_errors));
            for (at, m) in &self.input_examples {
                s.push_str(&format!("  {at}: {m}\n"));
            }
            if self.input_errors > self.input_examples.len() as u64 {
                s.push_str(&format!(
                    "  ... {} more\n",
                    self.input_errors - self.input_examples.len() as u64
                ));
            }
        }
        if self.chunk_checked > 0 {
            s.push_str(&format!(
                "\nchunking: {} of {} checked records change with chunking ({:.1}%)\n",
                self.chunk_unstable,
                self.chunk_checked,
                100.0 * self.unstable_rate()
            ));
            for e in &self.unstable_examples {
                s.push_str(&format!("  {e}\n"));
            }
        }
        if self.chunk_skipped > 0 {
            s.push_str(&format!(
                "{}chunking: {} record{} over {} MiB not checked (check one with `rtbench chunks`)\n",
                if self.chunk_checked > 0 { "" } else { "\n" },
                self.chunk_skipped,
                if self.chunk_skipped == 1 { "" } else { "s" },
                super::outcome::CHUNK_CHECK_MAX >> 20
            ));
        }
        if !self.slowest.is_empty() {
            s.push_str("\nslowest records:\n");
            for (d, label) in &self.slowest {
                s.push_str(&format!("  {:>10.3} ms  {label}\n", d.as_secs_f64() * 1e3));
            }
        }
        s.trim_end().to_string()
    }
}
