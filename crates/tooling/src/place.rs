//! Places for people: where a byte of a parsed document (a prompt prefix followed by a
//! generation) lies, named the one way every view names it (the workbench's cursor line,
//! diagnostics and explanations, and the command line's `explain`, `parse` errors, `lint` and
//! `test`):
//!
//! - `file:line:col` of the file the text lives in: the `.sample` file for a sample's sections,
//!   the generation file or the `--prefix-file` for text given so;
//! - then, when the file holds more than that text, the text's own `line:col` in parentheses:
//!   `x.sample:23:27 (generation 6:20)`, `x.sample:3:5 (prefix 2:5)`;
//! - text that lives in no file (a prefix given as `--prefix S` or rendered from a
//!   conversation, a generation decoded from token ids) by its own position alone:
//!   `generation 6:20`, `prefix 1:3`;
//! - a corpus record's text, a JSON string inside one line of the corpus (its lines and columns
//!   are not the file's), by the record and its own position: `logs.jsonl:49 (generation 4:88)`.
//!
//! Lines are 1-based and columns count characters from 1; the token-id decoder's defusing
//! markers, which take no cell on screen, are not counted.

use std::fmt;

use crate::sample::{EXTENSION, Sample};
use rtbench_engine::parser::MARKER;

/// Where a text (a prefix or a generation) lies in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextFile {
    /// The file, as the user named it.
    pub name: String,
    /// The 1-based line of the file the text starts on (at column 1).
    pub line: usize,
    /// Whether the file holds this text alone (its own position then adds nothing).
    pub whole: bool,
    /// The text is a string inside one line of the file (a corpus record, `name` is
    /// `file:line`): the text's lines are not the file's.
    pub record: bool,
}

impl TextFile {
    /// A file that holds the text alone (a generation `.txt`, a `--prefix-file`).
    pub fn whole(name: impl Into<String>) -> TextFile {
        TextFile {
            name: name.into(),
            line: 1,
            whole: true,
            record: false,
        }
    }
}

/// The files a document's prefix and generation live in (`None`: in no file).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Places {
    /// Where the prefix's text is written.
    pub prefix: Option<TextFile>,
    /// Where the generation's text is written.
    pub generation: Option<TextFile>,
}

/// The two texts a document is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The prompt prefix.
    Prefix,
    /// The generation.
    Generation,
}

impl Part {
    /// `prefix`, `generation`.
    pub fn name(self) -> &'static str {
        match self {
            Part::Prefix => "prefix",
            Part::Generation => "generation",
        }
    }
}

/// One place, named both ways: in its file (when it has one) and in its own text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The text the place is in.
    pub part: Part,
    /// 1-based line in that text.
    pub line: usize,
    /// 1-based column in that text (characters).
    pub column: usize,
    /// The file, its 1-based line and column, when the text lives in a file.
    pub file: Option<(String, usize, usize)>,
    /// The corpus record (`file:line`) the text is a string of, when it is one.
    pub record: Option<String>,
    /// Whether the file holds this text alone.
    whole: bool,
}

impl Place {
    /// `x.sample:23:27`, when the text lives in a file.
    pub fn in_file(&self) -> Option<String> {
        self.file
            .as_ref()
            .map(|(name, line, column)| format!("{name}:{line}:{column}"))
    }

    /// The position in the text itself: `generation 6:20`.
    pub fn own(&self) -> String {
        format!("{} {}:{}", self.part.name(), self.line, self.column)
    }

    /// The place with the file named by `name` in place of its full name (a view that shows
    /// file names shortened), `gen` for `generation` when `short`: `x.sample:23:27 (gen 6:20)`.
    pub fn named(&self, name: impl Fn(&str) -> String, short: bool) -> String {
        let own = if short {
            let part = match self.part {
                Part::Prefix => "prefix",
                Part::Generation => "gen",
            };
            format!("{part} {}:{}", self.line, self.column)
        } else {
            self.own()
        };
        match (&self.file, &self.record) {
            (Some((file, line, column)), _) if self.whole => {
                format!("{}:{line}:{column}", name(file))
            }
            (Some((file, line, column)), _) => format!("{}:{line}:{column} ({own})", name(file)),
            (None, Some(record)) => format!("{} ({own})", name(record)),
            (None, None) => own,
        }
    }
}

/// `x.sample:23:27 (generation 6:20)`, `gen.txt:6:20`, or `generation 6:20`.
impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.named(str::to_string, false))
    }
}

impl Places {
    /// Where a sample's texts live: its file's sections (a `.sample`), or the whole file (a
    /// bare generation). A prefix decoded from token ids or rendered from a conversation (a
    /// sample without a prefix section), and a generation decoded from token ids, live in no
    /// file.
    pub fn of_sample(sample: &Sample, name: &str) -> Places {
        let is_sample = sample.path.extension().is_some_and(|e| e == EXTENSION);
        // A corpus record is named `file:line` (its line of the corpus).
        let record = !is_sample
            && name
                .rsplit_once(':')
                .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let generation = sample.model.generation_ids.is_none().then(|| TextFile {
            name: name.to_string(),
            line: sample.generation_line,
            whole: !is_sample,
            record,
        });
        let prefix = sample
            .prefix_line
            .filter(|_| sample.model.prefix_ids.is_none())
            .map(|line| TextFile {
                name: name.to_string(),
                line,
                whole: false,
                record: false,
            });
        Places { prefix, generation }
    }

    /// The place of byte `byte` of `document`, whose first `prefix_len` bytes are the prefix
    /// (a byte at the prefix's end belongs to the generation, unless the generation is empty).
    pub fn place(&self, document: &str, prefix_len: usize, byte: usize) -> Place {
        let byte = document.floor_char_boundary(byte.min(document.len()));
        let prefix_len = prefix_len.min(document.len());
        let (part, text) =
            if byte >= prefix_len && (byte > prefix_len || prefix_len < document.len()) {
                (Part::Generation, &document[prefix_len..byte])
            } else {
                (Part::Prefix, &document[..byte])
            };
        self.end_of(part, text)
    }

    /// The place just after `before`, the start of `part`'s own text up to it.
    pub fn end_of(&self, part: Part, before: &str) -> Place {
        let (line, column) = line_col(before);
        self.name(part, line, column)
    }

    /// The place at `line`:`column` of `part`'s own text.
    pub fn name(&self, part: Part, line: usize, column: usize) -> Place {
        let file = match part {
            Part::Prefix => self.prefix.as_ref(),
            Part::Generation => self.generation.as_ref(),
        };
        let record = file.filter(|f| f.record);
        Place {
            part,
            line,
            column,
            whole: file.is_some_and(|f| f.whole),
            record: record.map(|f| f.name.clone()),
            file: file
                .filter(|f| !f.record)
                .map(|f| (f.name.clone(), f.line + line - 1, column)),
        }
    }
}

/// The 1-based line and column just after `before` (the start of a text up to a place), as
/// every place counts them: columns in characters, the decoder's markers not counted.
pub fn line_col(before: &str) -> (usize, usize) {
    let line = memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1;
    let from = memchr::memrchr(b'\n', before.as_bytes()).map_or(0, |i| i + 1);
    let column = before[from..].chars().filter(|&c| c != MARKER).count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::parse_sample;
    use std::path::Path;

    #[test]
    fn a_sample_names_its_file_and_the_texts_own_position() {
        let text = "--- note ---\nn\n--- prefix ---\nuser: hi\nassistant:\n--- generation ---\nab\ncdé<x>\n";
        let s = parse_sample(Path::new("x.sample"), text).unwrap();
        assert_eq!((s.prefix_line, s.generation_line), (Some(4), 7));
        let places = Places::of_sample(&s, "dir/x.sample");
        let doc = format!("{}{}", s.prefix.as_deref().unwrap(), s.generation);
        let prefix_len = s.prefix.as_deref().unwrap().len();
        let at = doc.find("<x>").unwrap();
        let p = places.place(&doc, prefix_len, at);
        assert_eq!(p.to_string(), "dir/x.sample:8:4 (generation 2:4)");
        assert_eq!(p.in_file().as_deref(), Some("dir/x.sample:8:4"));
        assert_eq!(
            p.named(|f| f.rsplit('/').next().unwrap().to_string(), true),
            "x.sample:8:4 (gen 2:4)"
        );
        // The generation's first character, and a place in the prefix.
        assert_eq!(
            places.place(&doc, prefix_len, prefix_len).to_string(),
            "dir/x.sample:7:1 (generation 1:1)"
        );
        let hi = doc.find("hi").unwrap();
        assert_eq!(
            places.place(&doc, prefix_len, hi).to_string(),
            "dir/x.sample:4:7 (prefix 1:7)"
        );
    }

    #[test]
    fn text_in_no_file_is_named_by_its_own_position_and_a_whole_file_by_the_file() {
        let places = Places {
            prefix: None,
            generation: Some(TextFile::whole("gen.txt")),
        };
        let doc = "P\nQ<a>\nxy";
        assert_eq!(places.place(doc, 5, 8).to_string(), "gen.txt:2:2");
        assert_eq!(places.place(doc, 5, 2).to_string(), "prefix 2:1");
        assert_eq!(
            Places::default().place(doc, 5, 8).to_string(),
            "generation 2:2"
        );
        // The decoder's markers take no column.
        let marked = format!("<{MARKER}t>x");
        assert_eq!(
            Places::default()
                .place(&marked, 0, marked.find('x').unwrap())
                .own(),
            "generation 1:4"
        );
    }

    #[test]
    fn a_corpus_record_is_named_with_the_texts_own_position() {
        let s = Sample::bare(std::path::Path::new("logs.jsonl:49"), "a\nbc".into());
        let places = Places::of_sample(&s, "logs.jsonl:49");
        assert_eq!(
            places.place("a\nbc", 0, 3).to_string(),
            "logs.jsonl:49 (generation 2:2)"
        );
    }

    #[test]
    fn token_ids_live_in_no_file() {
        let text = "--- prefix (ids) ---\n[2]\n--- generation (ids) ---\n[1]\n";
        let s = parse_sample(Path::new("x.sample"), text).unwrap();
        assert_eq!(Places::of_sample(&s, "x.sample"), Places::default());
        // A conversation's written prefix is the one parsed: it is in the file.
        let text = "--- messages ---\n[]\n--- prefix ---\nP\n--- generation (ids) ---\n[1]\n";
        let s = parse_sample(Path::new("x.sample"), text).unwrap();
        let places = Places::of_sample(&s, "x.sample");
        assert_eq!(places.generation, None);
        assert_eq!(places.prefix.map(|p| p.line), Some(4));
    }
}
