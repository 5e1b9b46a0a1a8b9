//! Corpus runs split across processes or machines: each worker evaluates its records with
//! [`run_records`] (the code path of [`run`](super::run): [`evaluate`] on each record, with
//! its index in the whole corpus), and the partial [`Report`]s are merged in corpus order with
//! [`Report::merge`] into the report one `rtbench corpus` run gives (the same counts, tallies,
//! groups, examples and slowest records; only times differ, being measured on other machines).
//!
//! A partial report crosses processes as a JSON value ([`Report::to_partial`],
//! [`Report::from_partial`]) that keeps everything merging needs, times in nanoseconds.

use std::collections::BTreeMap;
use std::time::Duration;

use super::outcome::{Context, Outcome, evaluate};
use super::reader::Entry;
use super::report::{ErrorGroup, FieldTally, LISTED, Report};
use rtbench_engine::value::{Dict, Value};

/// Evaluates `records` (each with its index in the whole corpus, in corpus order) on the
/// calling thread as [`run`](super::run) does, calling `each` with every outcome; returns
/// their report. Records whose index is below `chunk_sample` get the chunking check, as in a
/// whole run.
pub fn run_records(
    ctx: &Context,
    records: impl IntoIterator<Item = (u64, Entry)>,
    chunk_sample: u64,
    mut each: impl FnMut(&Outcome),
) -> Report {
    let mut report = Report::new(&ctx.template);
    for (index, entry) in records {
        let outcome = evaluate(ctx, index, entry, index < chunk_sample);
        report.add(&outcome);
        each(&outcome);
    }
    report
}

impl Report {
    /// Adds the report of the records that come after this report's in the corpus: the
    /// result is the report of both runs' records added in corpus order.
    pub fn merge(&mut self, later: Report) {
        self.records += later.records;
        self.parsed += later.parsed;
        self.errors += later.errors;
        self.differs += later.differs;
        self.checked += later.checked;
        self.input_errors += later.input_errors;
        self.failures += later.failures;
        self.chunk_checked += later.chunk_checked;
        self.chunk_unstable += later.chunk_unstable;
        self.chunk_skipped += later.chunk_skipped;
        self.parse_time += later.parse_time;
        self.input_examples.extend(later.input_examples);
        self.input_examples.truncate(LISTED);
        self.unstable_examples.extend(later.unstable_examples);
        self.unstable_examples.truncate(LISTED);
        for ((name, t), (later_name, l)) in self.fields.iter_mut().zip(later.fields) {
            debug_assert_eq!(*name, later_name, "reports of different templates");
            t.matched += l.matched;
            t.empty += l.empty;
            t.overwritten += l.overwritten;
            t.truncated += l.truncated;
            t.errors += l.errors;
        }
        for (key, group) in later.error_groups {
            match self.error_groups.get_mut(&key) {
                // The earlier report's first record stays the example.
                Some(g) => g.count += group.count,
                None => {
                    self.error_groups.insert(key, group);
                }
            }
        }
        // As `add` would insert them: after the earlier records of the same time.
        for (elapsed, label) in later.slowest {
            let at = self.slowest.partition_point(|(d, _)| *d >= elapsed);
            self.slowest.insert(at, (elapsed, label));
        }
        self.slowest.truncate(LISTED);
    }

    /// Everything [`Report::merge`] needs, as a JSON value (see [`Report::from_partial`]).
    pub fn to_partial(&self) -> Value {
        let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
        let nanos = |d: Duration| int(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        let s = |text: &str| Value::from(text);
        let mut o = Dict::new();
        for (key, n) in [
            ("records", self.records),
            ("parsed", self.parsed),
            ("errors", self.errors),
            ("differs", self.differs),
            ("checked", self.checked),
            ("input_errors", self.input_errors),
            ("failures", self.failures),
            ("chunk_checked", self.chunk_checked),
            ("chunk_unstable", self.chunk_unstable),
            ("chunk_skipped", self.chunk_skipped),
        ] {
            o.insert(key, int(n));
        }
        o.insert("parse_time", nanos(self.parse_time));
        let pairs = |v: &[(String, String)]| {
            Value::List(
                v.iter()
                    .map(|(a, b)| Value::List(vec![s(a), s(b)]))
                    .collect(),
            )
        };
        o.insert("input_examples", pairs(&self.input_examples));
        o.insert(
            "unstable_examples",
            Value::List(self.unstable_examples.iter().map(|e| s(e)).collect()),
        );
        o.insert(
            "fields",
            Value::List(
                self.fields
                    .iter()
                    .map(|(name, t)| {
                        Value::List(vec![
                            s(name),
                            int(t.matched),
                            int(t.empty),
                            int(t.overwritten),
                            int(t.truncated),
                            int(t.errors),
                        ])
                    })
                    .collect(),
            ),
        );
        o.insert(
            "error_groups",
            Value::List(
                self.error_groups
                    .iter()
                    .map(|((kind, field), g)| {
                        Value::List(vec![
                            s(kind),
                            field.as_deref().map_or(Value::Null, s),
                            int(g.count),
                            s(&g.example),
                            s(&g.message),
                        ])
                    })
                    .collect(),
            ),
        );
        o.insert(
            "slowest",
            Value::List(
                self.slowest
                    .iter()
                    .map(|(d, label)| Value::List(vec![nanos(*d), s(label)]))
                    .collect(),
            ),
        );
        Value::Dict(o)
    }

    /// A partial report from [`Report::to_partial`]'s value; the error says what is missing.
    pub fn from_partial(value: &Value) -> Result<Report, String> {
        let o = value.as_dict().ok_or("a partial report is a JSON object")?;
        let get = |key: &str| o.get(key).ok_or(format!("a partial report has no '{key}'"));
        let int = |v: &Value, what: &str| match v {
            Value::Int(n) => u64::try_from(*n).map_err(|_| format!("'{what}' is negative")),
            _ => Err(format!("'{what}' is not an integer")),
        };
        let count = |key: &str| get(key).and_then(|v| int(v, key));
        let text = |v: &Value, what: &str| {
            v.as_str()
                .map(String::from)
                .ok_or(format!("'{what}' holds a non-string"))
        };
        let list = |key: &str| get(key)?.as_list().ok_or(format!("'{key}' is not a list"));
        let items = |v: &Value, n: usize, what: &str| -> Result<Vec<Value>, String> {
            match v.as_list() {
                Some(l) if l.len() == n => Ok(l.to_vec()),
                _ => Err(format!("'{what}' holds an item that is not a list of {n}")),
            }
        };
        let mut report = Report {
            records: count("records")?,
            parsed: count("parsed")?,
            errors: count("errors")?,
            differs: count("differs")?,
            checked: count("checked")?,
            input_errors: count("input_errors")?,
            failures: count("failures")?,
            chunk_checked: count("chunk_checked")?,
            chunk_unstable: count("chunk_unstable")?,
            chunk_skipped: count("chunk_skipped")?,
            parse_time: Duration::from_nanos(count("parse_time")?),
            ..Report::default()
        };
        for item in list("input_examples")? {
            let pair = items(item, 2, "input_examples")?;
            report.input_examples.push((
                text(&pair[0], "input_examples")?,
                text(&pair[1], "input_examples")?,
            ));
        }
        for item in list("unstable_examples")? {
            report
                .unstable_examples
                .push(text(item, "unstable_examples")?);
        }
        for item in list("fields")? {
            let f = items(item, 6, "fields")?;
            let tally = FieldTally {
                matched: int(&f[1], "fields")?,
                empty: int(&f[2], "fields")?,
                overwritten: int(&f[3], "fields")?,
                truncated: int(&f[4], "fields")?,
                errors: int(&f[5], "fields")?,
            };
            report.fields.push((text(&f[0], "fields")?, tally));
        }
        let mut groups = BTreeMap::new();
        for item in list("error_groups")? {
            let g = items(item, 5, "error_groups")?;
            let field = match &g[1] {
                Value::Null => None,
                v => Some(text(v, "error_groups")?),
            };
            groups.insert(
                (text(&g[0], "error_groups")?, field),
                ErrorGroup {
                    count: int(&g[2], "error_groups")?,
                    example: text(&g[3], "error_groups")?,
                    message: text(&g[4], "error_groups")?,
                },
            );
        }
        report.error_groups = groups;
        for item in list("slowest")? {
            let s = items(item, 2, "slowest")?;
            report.slowest.push((
                Duration::from_nanos(int(&s[0], "slowest")?),
                text(&s[1], "slowest")?,
            ));
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::reader::Content;
    use crate::corpus::record::Location;
    use rtbench_engine::py::json_loads;
    use rtbench_engine::template::load_template;

    fn context() -> Context {
        let template = load_template(
            &json_loads(
                r#"{"start_anchor": "A:", "fields": {"thinking": {"open": "<think>", "close": "</think>"}, "n": {"open": "<n>", "close": "</n>", "content": "int"}, "content": {}}}"#,
            )
            .unwrap(),
        )
        .unwrap();
        Context::new(template, std::path::PathBuf::from("."), Some("A:".into()))
    }

    /// Record `i`: parsed, a reference error, a line that is not a record, or a difference
    /// from its expected message, in turn.
    fn entry(i: u64) -> Entry {
        let text = match i % 4 {
            0 => format!(r#"{{"id": "r{i}", "generation": "<think>t</think>{i}"}}"#),
            1 => format!(r#"{{"id": "r{i}", "generation": "<n>x{i}</n>"}}"#),
            2 => format!("not json {i}"),
            _ => format!(r#"{{"id": "r{i}", "generation": "a", "expected": {{"content": "b"}}}}"#),
        };
        Entry {
            location: Location::Line {
                file: Some("c.jsonl".into()),
                line: i + 1,
                offset: i * 10,
            },
            content: Content::Line(Ok(text)),
        }
    }

    /// The report without its times, which differ from run to run.
    fn timeless(r: &Report) -> Value {
        let mut v = r.to_partial();
        if let Value::Dict(d) = &mut v {
            d.shift_remove("parse_time");
            d.shift_remove("slowest");
        }
        v
    }

    #[test]
    fn merged_partial_reports_equal_the_whole_run() {
        let ctx = context();
        let whole = run_records(&ctx, (0..103).map(|i| (i, entry(i))), 30, |_| {});
        for cut in [1, 17, 50, 102] {
            let mut first = run_records(&ctx, (0..cut).map(|i| (i, entry(i))), 30, |_| {});
            let second = run_records(&ctx, (cut..103).map(|i| (i, entry(i))), 30, |_| {});
            // Through the partial value, as a worker process hands it over.
            let second = Report::from_partial(&second.to_partial()).unwrap();
            first.merge(second);
            assert!(timeless(&first).json_eq(&timeless(&whole)), "cut at {cut}");
            assert_eq!(
                first.summary().lines().take(8).collect::<Vec<_>>(),
                whole.summary().lines().take(8).collect::<Vec<_>>()
            );
            assert_eq!(first.slowest.len(), LISTED);
        }
        // 26 parsed as expected, 25 parsed but not as expected, 26 errors, 26 not records;
        // the 23 records among the first 30 had the chunking check.
        assert_eq!(
            (
                whole.records,
                whole.parsed,
                whole.differs,
                whole.errors,
                whole.input_errors
            ),
            (103, 51, 25, 26, 26)
        );
        assert_eq!((whole.chunk_checked, whole.failures), (23, 77));
    }

    #[test]
    fn the_whole_run_is_run_records_on_every_record() {
        let ctx = context();
        let entries = (0..40).map(|i| Ok(entry(i)));
        let options = crate::corpus::Options {
            batch: 8,
            chunk_sample: 30,
            threads: Some(2),
        };
        let parallel = crate::corpus::report(entries, &ctx, &options).unwrap();
        let serial = run_records(&ctx, (0..40).map(|i| (i, entry(i))), 30, |_| {});
        assert!(timeless(&parallel).json_eq(&timeless(&serial)));
    }

    #[test]
    fn a_partial_report_names_what_it_lacks() {
        let err = Report::from_partial(&json_loads(r#"{"records": 1}"#).unwrap()).unwrap_err();
        assert_eq!(err, "a partial report has no 'parsed'");
    }
}
