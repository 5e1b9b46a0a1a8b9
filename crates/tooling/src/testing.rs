//! Regression verdicts for samples: a sample's parse against its expected message, and the
//! expected section `rtbench test --bless` writes. Shared by the command line and the workbench.
//!
//! A sample's template is `template.json` (or `tokenizer_config.json`) in the sample's folder,
//! unless one is named (`inputs::template_beside`).

use crate::diff::diff;
use crate::sample::{EXPECTED_ERROR_KEY, Sample};
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
    match (sample.expects_error(), result) {
        // `{"$error": "<Type>: <message>"}` must be that very error; `{"$error": true}` any.
        (true, Err(e)) => match sample.expected_error_text() {
            Some(want) if want != e => Verdict::Fail(vec![
                "expected a different error:".to_string(),
                format!("- {}", show_error(want)),
                format!("+ {}", show_error(e)),
            ]),
            _ => Verdict::Pass,
        },
        (true, Ok(m)) => Verdict::Fail(vec![format!(
            "expected parsing to fail, got {}",
            Value::Dict(m.clone()).py_repr()
        )]),
        (false, Err(e)) => Verdict::Fail(vec![format!("expected a message, got an error: {e}")]),
        (false, Ok(m)) => {
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
}
