//! Sample files: a generation with the prompt prefix it followed, and optionally the tools and
//! the expected message, in one plain-text file that is pleasant to edit by hand.
//!
//! ```text
//! --- prefix ---
//! <|im_start|>user
//! Hi!<|im_end|>
//! <|im_start|>assistant
//!
//! --- generation ---
//! <think>
//! Greet back.
//! </think>
//! Hello!<|im_end|>
//! --- tools ---
//! [{"type": "function", "function": {"name": "greet", "parameters": {}}}]
//! --- expected ---
//! {"role": "assistant", "thinking": "Greet back.", "content": "Hello!"}
//! ```
//!
//! A section runs from the line after its header to the line break before the next header
//! (that line break belongs to the header), so text is taken verbatim: to end a section with a
//! newline, leave an empty line before the next header. Sections: `prefix`, `generation`
//! (required), `tools` (JSON), `expected` (JSON) and `note` (free text). A file with another
//! extension than `.sample` (e.g. `.txt`) is a bare generation with no prefix.

use std::ops::Range;
use std::path::{Path, PathBuf};

use rtbench_engine::py;
use rtbench_engine::value::Value;

/// The file extension of sectioned sample files.
pub const EXTENSION: &str = "sample";

/// One sample generation.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub path: PathBuf,
    /// `None` when the sample gives no prefix (a bare `.txt` generation).
    pub prefix: Option<String>,
    pub generation: String,
    pub tools: Option<Value>,
    pub expected: Option<Value>,
    pub note: Option<String>,
    /// Byte offset of the generation section in the file (for positions in diagnostics).
    pub generation_offset: usize,
}

impl Sample {
    /// Whether the sample is expected to fail: its expected section is `{"$error": ...}`.
    pub fn expects_error(&self) -> bool {
        self.expected
            .as_ref()
            .and_then(Value::as_dict)
            .is_some_and(|d| d.contains_key(EXPECTED_ERROR_KEY))
    }
}

/// An expected section `{"$error": true}` (or an explanation string) says that parsing the
/// sample must fail.
pub const EXPECTED_ERROR_KEY: &str = "$error";

/// The sample file's text with its `expected` section replaced by `expected` (added at the end
/// when there is none); everything else stays byte for byte.
pub fn replace_expected(path: &Path, text: &str, expected: &str) -> Result<String, SampleError> {
    let sections = sections(path, text)?;
    let body = if expected.ends_with('\n') {
        expected.to_string()
    } else {
        format!("{expected}\n")
    };
    Ok(match sections.iter().find(|s| s.name == "expected") {
        Some(s) => {
            // Keep the line break that separates this section from the next header.
            let next_header = sections.iter().any(|n| n.line > s.line);
            let body = if next_header {
                body.trim_end_matches('\n').to_string()
            } else {
                body
            };
            format!("{}{}{}", &text[..s.body.start], body, &text[s.body.end..])
        }
        None => {
            // The line break before the new header must be a new one: the text's own last line
            // break (if any) belongs to the last section.
            let sep = if text.is_empty() { "" } else { "\n" };
            format!("{text}{sep}--- expected ---\n{body}")
        }
    })
}

/// A sample file that cannot be read.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for SampleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

const SECTIONS: [&str; 5] = ["prefix", "generation", "tools", "expected", "note"];

/// The section name if `line` is a header (`--- name ---`).
fn header(line: &str) -> Option<&str> {
    let name = line.strip_prefix("--- ")?.strip_suffix(" ---")?;
    SECTIONS.contains(&name).then_some(name)
}

/// One section of a sample file: its name, the 1-based line of its header, and the byte range
/// of its body.
#[derive(Clone, Debug, PartialEq)]
struct Section<'a> {
    name: &'a str,
    line: usize,
    body: Range<usize>,
}

/// Splits a `.sample` file into its sections.
fn sections<'a>(path: &Path, text: &'a str) -> Result<Vec<Section<'a>>, SampleError> {
    let err = |line: Option<usize>, message: String| SampleError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut sections: Vec<Section<'a>> = Vec::new();
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.strip_suffix('\n').unwrap_or(line);
        let bare = bare.strip_suffix('\r').unwrap_or(bare);
        if let Some(name) = header(bare) {
            // The line break before a header belongs to the header.
            let brk = if text[..offset].ends_with("\r\n") {
                2
            } else {
                usize::from(text[..offset].ends_with('\n'))
            };
            if let Some(last) = sections.last_mut() {
                last.body.end = (offset - brk).max(last.body.start);
            } else if !text[..offset].trim().is_empty() {
                return Err(err(Some(1), "text before the first section header".into()));
            }
            if sections.iter().any(|s| s.name == name) {
                return Err(err(Some(i + 1), format!("section '{name}' appears twice")));
            }
            sections.push(Section {
                name,
                line: i + 1,
                body: offset + line.len()..text.len(),
            });
        }
        offset += line.len();
    }
    Ok(sections)
}

/// Parses the text of a `.sample` file.
pub fn parse_sample(path: &Path, text: &str) -> Result<Sample, SampleError> {
    let err = |line: Option<usize>, message: String| SampleError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let sections: Vec<(&str, usize, usize, usize)> = sections(path, text)?
        .into_iter()
        .map(|s| (s.name, s.line, s.body.start, s.body.end))
        .collect();
    let section = |name: &str| sections.iter().find(|s| s.0 == name);
    let Some(&(_, _, gen_start, gen_end)) = section("generation") else {
        return Err(err(
            None,
            "no '--- generation ---' section (a .sample file needs one; see the README)".into(),
        ));
    };
    let json = |name: &str| -> Result<Option<Value>, SampleError> {
        let Some(&(_, line, start, end)) = section(name) else {
            return Ok(None);
        };
        let body = &text[start..end];
        if body.trim().is_empty() {
            return Ok(None);
        }
        py::json_loads(body).map(Some).map_err(|e| {
            err(
                Some(line + e.line),
                format!("invalid JSON in the '{name}' section: {}", e.message),
            )
        })
    };
    Ok(Sample {
        path: path.to_path_buf(),
        prefix: section("prefix").map(|s| text[s.2..s.3].to_string()),
        generation: text[gen_start..gen_end].to_string(),
        tools: json("tools")?,
        expected: json("expected")?,
        note: section("note").map(|s| text[s.2..s.3].trim().to_string()),
        generation_offset: gen_start,
    })
}

/// Reads one sample file: a `.sample` file, or any other text file as a bare generation.
pub fn read_sample(path: &Path) -> Result<Sample, SampleError> {
    let bytes = std::fs::read(path).map_err(|e| SampleError {
        path: path.to_path_buf(),
        line: None,
        message: format!("cannot read: {e}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| SampleError {
        path: path.to_path_buf(),
        line: None,
        message: format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
    })?;
    if path.extension().is_some_and(|e| e == EXTENSION) {
        parse_sample(path, &text)
    } else {
        Ok(Sample {
            path: path.to_path_buf(),
            prefix: None,
            generation: text,
            tools: None,
            expected: None,
            note: None,
            generation_offset: 0,
        })
    }
}

/// The sample files a command-line argument stands for: the file itself, or every `.sample`
/// and `.txt` file in a folder (sorted by name).
pub fn expand(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(path)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == EXTENSION || e == "txt"))
        .collect();
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Sample {
        parse_sample(Path::new("t.sample"), text).unwrap()
    }

    #[test]
    fn sections_are_verbatim_without_the_break_before_a_header() {
        let s = parse(
            "--- prefix ---\nP\n\n--- generation ---\n<think>a</think>\nb\n--- expected ---\n{\"x\": 1}\n",
        );
        assert_eq!(s.prefix.as_deref(), Some("P\n"));
        assert_eq!(s.generation, "<think>a</think>\nb");
        assert_eq!(s.expected, py::json_loads("{\"x\": 1}").ok());
    }

    #[test]
    fn last_section_keeps_its_trailing_text() {
        let s = parse("--- generation ---\nabc\n");
        assert_eq!(s.generation, "abc\n");
        assert_eq!(s.prefix, None);
        let s = parse("--- prefix ---\n--- generation ---\nx");
        assert_eq!(s.prefix.as_deref(), Some(""));
        assert_eq!(s.generation, "x");
    }

    #[test]
    fn replacing_the_expected_section_keeps_everything_else() {
        let p = Path::new("t.sample");
        let text = "--- generation ---\nx\n\n--- expected ---\n{}\n--- note ---\nn\n";
        let out = replace_expected(p, text, "{\"a\": 1}").unwrap();
        assert_eq!(
            out,
            "--- generation ---\nx\n\n--- expected ---\n{\"a\": 1}\n--- note ---\nn\n"
        );
        assert_eq!(parse_sample(p, &out).unwrap().generation, "x\n");
        let last =
            replace_expected(p, "--- generation ---\nx\n--- expected ---\nold", "{}").unwrap();
        assert_eq!(last, "--- generation ---\nx\n--- expected ---\n{}\n");
        let added = replace_expected(p, "--- generation ---\nx", "{}").unwrap();
        assert_eq!(added, "--- generation ---\nx\n--- expected ---\n{}\n");
        assert_eq!(parse_sample(p, &added).unwrap().generation, "x");
        // A generation that ends with a line break keeps it.
        let added = replace_expected(p, "--- generation ---\nx\n", "{}").unwrap();
        assert_eq!(parse_sample(p, &added).unwrap().generation, "x\n");
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse_sample(
            Path::new("t.sample"),
            "--- generation ---\nx\n--- tools ---\n[1,]\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4));
        assert!(parse_sample(Path::new("t.sample"), "--- prefix ---\nx\n").is_err());
        assert!(parse_sample(Path::new("t.sample"), "junk\n--- generation ---\nx").is_err());
    }
}
