//! Regression verdicts for samples: a sample's parse against its expected message, and the
//! expected section `rtbench test --bless` writes. Shared by the command line and the workbench.
//!
//! A sample's template is `template.json` (or `tokenizer_config.json`) in the sample's folder,
//! unless one is named (`inputs::template_beside`).

use crate::diff::diff;
use crate::sample::{EXPECTED_ERROR_KEY, ExpectedError, Sample, expected_error};
use rtbench_engine::py::{DumpOptions, json_dumps};
use rtbench_engine::value::{Dict, Value};

/// What happened to one sample (also shown by the workbench's sample list).
pub enum Verdict {
    /// The result is the expected message, or the expected error.
    Pass,
    /// The result is not what the sample expects: how it differs, a line each.
    Fail(Vec<String>),
    /// The sample has no `expected` section: nothing to compare with.
    NoExpectation,
}

/// The `rtbench test` verdict for one sample's parse result.
pub fn verdict(sample: &Sample, result: &Result<Dict, String>) -> Verdict {
    verdict_of(sample, result.as_ref().map_err(String::as_str))
}

/// [`verdict`] for a result borrowed from wherever it is (the message, or the error's text).
pub fn verdict_of(sample: &Sample, result: Result<&Dict, &str>) -> Verdict {
    let Some(expected) = &sample.expected else {
        return Verdict::NoExpectation;
    };
    match (expected_error(expected), result) {
        // A section that expects an error it cannot say fails whatever happens (the sample
        // reader refuses it; a corpus record's expectation comes here unread).
        (Some(Err(why)), _) => {
            Verdict::Fail(vec![format!("the expected error cannot be read: {why}")])
        }
        (Some(Ok(want)), Err(e)) if want.accepts(e) => Verdict::Pass,
        (Some(Ok(want)), Err(e)) => Verdict::Fail(vec![
            "expected a different error:".to_string(),
            format!("- {}", want.show()),
            format!("+ {}", show_error(e)),
        ]),
        (Some(Ok(_)), Ok(m)) => Verdict::Fail(vec![format!(
            "expected parsing to fail, got {}",
            Value::Dict(m.clone()).py_repr()
        )]),
        (None, Err(e)) => Verdict::Fail(vec![format!("expected a message, got an error: {e}")]),
        (None, Ok(m)) => {
            let lines: Vec<String> = diff(expected, &Value::Dict(m.clone()))
                .iter()
                .map(ToString::to_string)
                .collect();
            if lines.is_empty() {
                Verdict::Pass
            } else {
                Verdict::Fail(lines)
            }
        }
    }
}

/// An error's text on one diff line (its line breaks shown as `\n`).
fn show_error(text: &str) -> String {
    text.replace('\n', "\\n")
}

/// Whether a sample's expected section deliberately leaves part of the error open (`true`, or
/// a type without a message) and `result` is such an error: blessing keeps such a section
/// rather than narrowing it to this very error.
pub fn keeps_loose_expectation(sample: &Sample, result: &Result<Dict, String>) -> bool {
    let Some(Some(Ok(want))) = sample.expected.as_ref().map(expected_error) else {
        return false;
    };
    !matches!(want, ExpectedError::Exact(_)) && result.as_ref().is_err_and(|e| want.accepts(e))
}

/// The expected section for a result: the message, or `{"$error": "<Type>: <message>"}`.
pub fn expected_section(result: &Result<Dict, String>) -> Result<String, String> {
    let value = match result {
        Ok(m) => Value::Dict(m.clone()),
        Err(e) => Value::Dict(Dict::from_iter([(
            EXPECTED_ERROR_KEY.to_string(),
            Value::from(e.as_str()),
        )])),
    };
    // NaN and infinities are written as Python's json writes them (`NaN`, `Infinity`), which
    // the expected section reads back (Python's json reads them too).
    let opts = DumpOptions {
        indent: Some(2),
        compact: false,
        allow_nan: true,
        ..DumpOptions::reference_cli()
    };
    json_dumps(&value, &opts).map_err(|e| format!("cannot write the result as JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::parse_sample;
    use std::path::Path;

    fn sample(expected: &str) -> Sample {
        let text = format!("--- generation ---\nhi\n--- expected ---\n{expected}\n");
        parse_sample(Path::new("t.sample"), &text).unwrap()
    }

    fn passes(v: Verdict) -> bool {
        matches!(v, Verdict::Pass)
    }

    #[test]
    fn an_expected_error_text_must_be_the_error() {
        let err: Result<Dict, String> = Err("ValueError: bad".into());
        assert!(passes(verdict(
            &sample(r#"{"$error": "ValueError: bad"}"#),
            &err
        )));
        let Verdict::Fail(lines) = verdict(&sample(r#"{"$error": "KeyError: 'bad'"}"#), &err)
        else {
            panic!("a different error passed");
        };
        assert_eq!(lines[1..], ["- KeyError: 'bad'", "+ ValueError: bad"]);
        // `true` accepts any error; a message never passes for an expected error.
        assert!(passes(verdict(&sample(r#"{"$error": true}"#), &err)));
        let ok: Result<Dict, String> = Ok(Dict::new());
        assert!(!passes(verdict(&sample(r#"{"$error": true}"#), &ok)));
        // What --bless writes is what is then compared.
        let nan: Result<Dict, String> = Ok(Dict::from_iter([
            ("score".to_string(), Value::Float(f64::NAN)),
            ("top".to_string(), Value::Float(f64::INFINITY)),
        ]));
        let section = expected_section(&nan).expect("NaN is written as Python's json writes it");
        assert!(
            section.contains("\"score\": NaN") && section.contains("Infinity"),
            "{section}"
        );
        assert!(passes(verdict(&sample(&section), &nan)), "{section}");
        assert!(
            expected_section(&err)
                .unwrap()
                .contains(r#""$error": "ValueError: bad""#)
        );
    }

    #[test]
    fn a_type_alone_accepts_any_message_of_that_type_and_no_other_type() {
        let err: Result<Dict, String> = Err("ValueError: bad".into());
        let key: Result<Dict, String> = Err("KeyError: 'x'".into());
        let loose = sample(r#"{"$error": {"type": "ValueError"}}"#);
        assert!(passes(verdict(&loose, &err)));
        let Verdict::Fail(lines) = verdict(&loose, &key) else {
            panic!("an error of another type passed");
        };
        assert_eq!(
            lines,
            [
                "expected a different error:",
                "- ValueError (any message)",
                "+ KeyError: 'x'"
            ]
        );
        // The full form is the exact text.
        let full = sample(r#"{"$error": {"type": "KeyError", "message": "'x'"}}"#);
        assert!(passes(verdict(&full, &key)));
        let Verdict::Fail(lines) = verdict(&full, &err) else {
            panic!("another message passed");
        };
        assert_eq!(lines[1..], ["- KeyError: 'x'", "+ ValueError: bad"]);
        // Blessing keeps a loose expectation the error meets, and narrows nothing else.
        assert!(keeps_loose_expectation(&loose, &err));
        assert!(keeps_loose_expectation(
            &sample(r#"{"$error": true}"#),
            &err
        ));
        assert!(!keeps_loose_expectation(&loose, &key));
        assert!(!keeps_loose_expectation(&full, &key));
    }

    /// An expectation that names no error it can match (a number, `false`, an unknown type)
    /// fails whatever the parse does, with what to write instead, never passes for any error.
    #[test]
    fn a_malformed_error_expectation_never_passes() {
        let err: Result<Dict, String> = Err("ValueError: bad".into());
        for (bad, says) in [
            (r#"{"$error": 42}"#, "\"$error\" is 42"),
            (r#"{"$error": false}"#, "\"$error\" is False"),
            (
                r#"{"$error": {"type": "ValueErorr"}}"#,
                "did you mean `ValueError`?",
            ),
            (
                r#"{"$error": {"kind": "ValueError"}}"#,
                "unknown key 'kind'",
            ),
            (r#"{"$error": {"message": "bad"}}"#, "\"type\" is missing"),
            (r#"{"$error": true, "role": "assistant"}"#, "alone"),
        ] {
            let expected = rtbench_engine::py::json_loads(bad).unwrap();
            let Verdict::Fail(lines) = verdict_of(
                &Sample {
                    expected: Some(expected),
                    ..Sample::bare(Path::new("r"), String::new())
                },
                Err("ValueError: bad"),
            ) else {
                panic!("{bad} passed");
            };
            assert!(lines[0].contains(says), "{bad}: {lines:?}");
            // The sample reader refuses it, at the key.
            let text = format!("--- generation ---\nhi\n--- expected ---\n{bad}\n");
            let e = parse_sample(Path::new("t.sample"), &text).unwrap_err();
            assert_eq!((e.line, e.column), (Some(4), Some(2)), "{e}");
            assert!(e.message.contains(says), "{e}");
        }
        assert!(passes(verdict(&sample(r#"{"$error": true}"#), &err)));
    }
}
