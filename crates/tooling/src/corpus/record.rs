//! One corpus record: a JSON object on one line of a JSON Lines file (or a `.sample` file), and
//! how it becomes a [`Sample`] so that every other tool (the model files, the audit, the
//! chunking check, `rtbench test`) reads it the way it reads a sample file.

use std::path::{Path, PathBuf};

use crate::sample::{ModelInput, Sample, token_ids};
use rtbench_engine::py;
use rtbench_engine::value::{Dict, Value};

/// The keys a record's parts are read from. Datasets name them differently (`output`,
/// `completion`, `prompt`, ...), so each can be changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldNames {
    /// The record's id, used to name it in the report.
    pub id: String,
    /// Prompt text, or a list of token ids.
    pub prefix: String,
    /// A list of chat messages, rendered into the prefix by the model's chat template.
    pub messages: String,
    /// The tool definitions, passed to the chat template and the parser.
    pub tools: String,
    /// The chat template's keyword arguments for `messages`.
    pub kwargs: String,
    /// Generated text, or a list of token ids.
    pub generation: String,
    /// The expected message, or `{"$error": ...}`.
    pub expected: String,
}

impl Default for FieldNames {
    fn default() -> FieldNames {
        FieldNames {
            id: "id".into(),
            prefix: "prefix".into(),
            messages: "messages".into(),
            tools: "tools".into(),
            kwargs: "kwargs".into(),
            generation: "generation".into(),
            expected: "expected".into(),
        }
    }
}

/// Where a record came from, so that it can be named in the report and read again.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Location {
    /// A line of a JSON Lines file: the file (`None` for stdin), its 1-based line number and
    /// the byte offset where the line starts (for [`crate::corpus::read_record_at`]).
    Line {
        /// The JSON Lines file; `None` for stdin.
        file: Option<PathBuf>,
        /// The 1-based line number.
        line: u64,
        /// The byte offset where the line starts.
        offset: u64,
    },
    /// A `.sample` (or `.txt`) file.
    File(PathBuf),
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Location::Line {
                file: Some(p),
                line,
                ..
            } => write!(f, "{}:{line}", p.display()),
            Location::Line {
                file: None, line, ..
            } => write!(f, "<stdin>:{line}"),
            Location::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A record read from the corpus: its optional id and the sample it stands for (a prefix or
/// a conversation, text or token ids, tools, the expected message).
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The record's id, when it has one.
    pub id: Option<String>,
    /// The record as a sample, as if read from a sample file.
    pub sample: Sample,
}

/// Why a line is not a record (reported with its line number; the line is skipped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordError {
    /// What is wrong with the line.
    pub message: String,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn bad(message: impl Into<String>) -> RecordError {
    RecordError {
        message: message.into(),
    }
}

/// A text field or a list of token ids.
enum TextOrIds {
    Text(String),
    Ids(Vec<u32>),
}

fn text_or_ids(v: &Value, key: &str) -> Result<TextOrIds, RecordError> {
    match v {
        Value::Str(s) => Ok(TextOrIds::Text(s.clone())),
        Value::List(_) => token_ids(v).map(TextOrIds::Ids).ok_or_else(|| {
            bad(format!(
                "'{key}' must be a string or a list of token ids (integers from 0)"
            ))
        }),
        _ => Err(bad(format!(
            "'{key}' must be a string or a list of token ids"
        ))),
    }
}

/// Parses one JSON Lines record. The JSON is read as the reference's `json.loads` reads it
/// (integers of any size, `NaN`), so values reach the parser as they reach the reference.
/// `path` names the record in the sample it becomes.
pub fn parse_record(line: &str, names: &FieldNames, path: &Path) -> Result<Record, RecordError> {
    let value = py::json_loads(line)
        .map_err(|e| bad(format!("invalid JSON: {} (column {})", e.message, e.column)))?;
    let Value::Dict(mut obj) = value else {
        return Err(bad("a record must be a JSON object"));
    };
    record_from_object(&mut obj, names, path)
}

/// The key of a generation given as token ids when the record has no generation key.
const OUTPUT_IDS: &str = "output_ids";
/// The key of the prompt's token ids when the record has no prefix key.
const PREFIX_IDS: &str = "prefix_ids";

fn record_from_object(
    obj: &mut Dict,
    names: &FieldNames,
    path: &Path,
) -> Result<Record, RecordError> {
    let id = obj.get(&names.id).map(|v| match v {
        Value::Str(s) => s.clone(),
        other => other.py_repr(),
    });
    // Logs of token ids often keep them apart from the text: `output_ids` and `prefix_ids`
    // stand in for a missing generation or prefix.
    let Some(generation) = obj.get(&names.generation).or_else(|| obj.get(OUTPUT_IDS)) else {
        return Err(bad(format!(
            "no '{}' key (nor '{OUTPUT_IDS}')",
            names.generation
        )));
    };
    let mut sample = Sample::bare(path, String::new());
    sample.model = ModelInput::default();
    match text_or_ids(generation, &names.generation)? {
        TextOrIds::Text(t) => sample.generation = t.into(),
        TextOrIds::Ids(ids) => sample.model.generation_ids = Some(ids),
    }
    if let Some(p) = obj
        .get(&names.prefix)
        .or_else(|| obj.get(PREFIX_IDS))
        .filter(|v| !matches!(v, Value::Null))
    {
        match text_or_ids(p, &names.prefix)? {
            TextOrIds::Text(t) => sample.prefix = Some(t),
            TextOrIds::Ids(ids) => {
                sample.prefix = Some(String::new());
                sample.model.prefix_ids = Some(ids);
            }
        }
    }
    if let Some(m) = obj.shift_remove(&names.messages) {
        if !matches!(m, Value::List(_)) {
            return Err(bad(format!(
                "'{}' must be a list of messages",
                names.messages
            )));
        }
        sample.model.messages = Some(m);
    }
    if let Some(k) = obj.shift_remove(&names.kwargs) {
        if !matches!(k, Value::Dict(_)) {
            return Err(bad(format!("'{}' must be a JSON object", names.kwargs)));
        }
        sample.model.kwargs = Some(k);
    }
    sample.tools = obj
        .shift_remove(&names.tools)
        .filter(|v| !matches!(v, Value::Null));
    sample.expected = obj
        .shift_remove(&names.expected)
        .filter(|v| !matches!(v, Value::Null));
    Ok(Record { id, sample })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_ids_may_come_under_output_ids_and_prefix_ids() {
        let names = FieldNames::default();
        let r = parse_record(
            r#"{"id": 7, "output_ids": [1, 2, 3], "prefix_ids": [4]}"#,
            &names,
            Path::new("c.jsonl"),
        )
        .unwrap();
        assert_eq!(r.sample.model.generation_ids, Some(vec![1, 2, 3]));
        assert_eq!(r.sample.model.prefix_ids, Some(vec![4]));
        // The named keys win over the id keys.
        let r = parse_record(
            r#"{"generation": "hi", "output_ids": [1], "prefix": "p", "prefix_ids": [4]}"#,
            &names,
            Path::new("c.jsonl"),
        )
        .unwrap();
        assert_eq!(
            (r.sample.generation.as_str(), r.sample.prefix.as_deref()),
            ("hi", Some("p"))
        );
        assert_eq!(r.sample.model.generation_ids, None);
        let e = parse_record(r#"{"text": "x"}"#, &names, Path::new("c.jsonl")).unwrap_err();
        assert!(e.message.contains("'output_ids'"), "{}", e.message);
    }
}
