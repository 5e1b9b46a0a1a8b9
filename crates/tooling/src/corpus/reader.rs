//! Reading a corpus as a stream: JSON Lines files line by line (each line with its number and
//! byte offset, so that a viewer can list records and read any one of them again later without
//! holding the file), folders of `.sample` files one file at a time, and stdin.
//!
//! A corpus file must be a regular file (a device or a pipe is refused, as every input is; a
//! stream goes on stdin). A stream that is not text, such as a `.jsonl.gz`, is refused from its
//! first bytes with how to decompress it: a record is found again by its byte offset in the
//! file, which compressed data cannot give, and `zcat data.jsonl.gz | rtbench corpus ... -`
//! streams it. A byte-order mark at the start is skipped.

use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::record::{FieldNames, Location, Record, RecordError, parse_record};
use crate::files::open_stream;
use crate::sample::read_sample;

/// Lines longer than this are reported as malformed and skipped without being held: one
/// runaway line must not take the memory a streamed corpus is meant to save.
pub const MAX_LINE: usize = 256 << 20;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// One line of a JSON Lines file: its 1-based number, the byte offset where it starts, and its
/// text (`Err` when it is too long or not UTF-8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The 1-based line number.
    pub number: u64,
    /// The byte offset in the stream where the line starts.
    pub offset: u64,
    /// The line's text without its line break, or why it could not be read as text.
    pub text: Result<String, RecordError>,
}

/// The lines of a JSON Lines stream. Blank lines are skipped (they are not records); a final
/// line without a line break is read like the others; a `\r` before the line break is dropped.
pub struct LineReader<R> {
    input: R,
    number: u64,
    offset: u64,
    buf: Vec<u8>,
    /// No line starting at or after this offset is read (a range of a file).
    end: u64,
    /// Whether the first line read is the stream's first (it may start with a byte-order mark).
    at_start: bool,
}

impl<R: BufRead> LineReader<R> {
    /// A reader of the lines of `input`, numbered from 1 and offset from its current position.
    pub fn new(input: R) -> LineReader<R> {
        LineReader {
            input,
            number: 0,
            offset: 0,
            buf: Vec::new(),
            end: u64::MAX,
            at_start: true,
        }
    }

    /// A reader of the lines of `input` that start before byte `end`, `input` being at byte
    /// `offset` of its stream, at the start of a line (`at_start`: the stream's first).
    pub(crate) fn range(input: R, offset: u64, end: u64, at_start: bool) -> LineReader<R> {
        LineReader {
            input,
            number: 0,
            offset,
            buf: Vec::new(),
            end,
            at_start,
        }
    }

    /// Lines read so far, blank ones included (the number of the last line read).
    pub fn lines_read(&self) -> u64 {
        self.number
    }

    /// Bytes consumed so far (for progress against the file's size).
    pub fn bytes_read(&self) -> u64 {
        self.offset
    }

    /// Refuses a stream that is not text, from its first bytes: compressed data (gzip, bzip2,
    /// xz, zstd, zip) with how to decompress it, UTF-16 text with how to convert it, and other
    /// binary data (NUL bytes), instead of reading it as thousands of malformed records.
    /// `name` is how the stream is named in what to do (`data.jsonl.gz`, or `-` for stdin).
    pub fn check_text(&mut self, name: &str) -> std::io::Result<()> {
        let head = loop {
            match self.input.fill_buf() {
                Ok(c) => break c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        };
        match not_text(head, name) {
            Some(why) => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, why)),
            None => Ok(()),
        }
    }

    /// Reads one raw line into `buf` (at most [`MAX_LINE`] bytes of it): whether a line was
    /// there and whether it was longer than that.
    fn read_raw(&mut self) -> std::io::Result<Option<(u64, bool)>> {
        self.buf.clear();
        let start = self.offset;
        let mut overlong = false;
        let mut any = false;
        loop {
            let chunk = match self.input.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !overlong {
                if self.buf.len() + take > MAX_LINE {
                    overlong = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(&chunk[..take]);
                }
            }
            self.input.consume(take);
            self.offset += take as u64;
            if done {
                break;
            }
        }
        Ok(any.then_some((start, overlong)))
    }
}

impl<R: BufRead> Iterator for LineReader<R> {
    type Item = std::io::Result<Line>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.offset >= self.end {
                return None;
            }
            let (offset, overlong) = match self.read_raw() {
                Ok(Some(x)) => x,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            self.number += 1;
            let first = self.number == 1 && self.at_start;
            let text = if overlong {
                Err(RecordError {
                    message: format!("line longer than {} MiB", MAX_LINE >> 20),
                })
            } else {
                let mut bytes = std::mem::take(&mut self.buf);
                // A byte-order mark (as some editors save UTF-8) is not part of the record.
                if first && bytes.starts_with(BOM) {
                    bytes.drain(..BOM.len());
                }
                if bytes.last() == Some(&b'\n') {
                    bytes.pop();
                    if bytes.last() == Some(&b'\r') {
                        bytes.pop();
                    }
                }
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                String::from_utf8(bytes).map_err(|e| RecordError {
                    message: format!(
                        "not valid UTF-8 (byte {} of the line)",
                        e.utf8_error().valid_up_to()
                    ),
                })
            };
            return Some(Ok(Line {
                number: self.number,
                offset,
                text,
            }));
        }
    }
}

/// Why a stream starting with `head` is not JSON Lines text, and what to do; `None` for text.
fn not_text(head: &[u8], name: &str) -> Option<String> {
    const COMPRESSED: [(&[u8], &str, &str); 5] = [
        (b"\x1f\x8b", "gzip", "zcat"),
        (b"BZh", "bzip2", "bzcat"),
        (b"\xfd7zXZ\x00", "xz", "xzcat"),
        (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"),
        (b"PK\x03\x04", "zip", "unzip -p"),
    ];
    let stdin = name == "-";
    for (magic, format, cat) in COMPRESSED {
        if head.starts_with(magic) {
            return Some(if stdin {
                format!(
                    "the input is {format}-compressed, not JSON Lines text: decompress it on the way in ({cat} FILE | rtbench corpus ... -)"
                )
            } else {
                format!(
                    "it is {format}-compressed, not JSON Lines text: decompress it first, or stream it decompressed on stdin ({cat} {name} | rtbench corpus ... -)"
                )
            });
        }
    }
    if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
        return Some(
            "it is UTF-16 text; JSON Lines is UTF-8: convert it (iconv -f UTF-16 -t UTF-8)".into(),
        );
    }
    if memchr::memchr(0, head).is_some() {
        return Some(
            "it holds NUL bytes, so it is binary data, not JSON Lines text (one JSON object per line, UTF-8)".into(),
        );
    }
    None
}

/// One entry of a corpus: where it is and its content. A line's JSON is decoded only by
/// [`Entry::record`], so that the decoding runs on the worker threads, not on the one reading.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Where the entry was read from.
    pub location: Location,
    /// The entry's line (not yet decoded) or record.
    pub content: Content,
}

/// What an entry holds: a line still to be decoded, or a record read from a sample file.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// A JSON Lines line's text, or why it could not be read.
    Line(Result<String, RecordError>),
    /// Boxed: a sample is large beside a line, and most corpora are lines.
    Record(Box<Result<Record, RecordError>>),
}

impl Entry {
    /// The record, decoding a line with `names`; or why the entry is not one.
    pub fn record(self, names: &FieldNames) -> Result<Record, RecordError> {
        match self.content {
            Content::Record(r) => *r,
            Content::Line(text) => {
                let path = sample_path(&self.location);
                text.and_then(|text| parse_record(&text, names, &path))
            }
        }
    }
}

/// The name a record's sample gets (its file and line, as the report names it).
fn sample_path(location: &Location) -> PathBuf {
    PathBuf::from(location.to_string())
}

/// Turns one line into an entry (its JSON not yet decoded).
pub(crate) fn entry_of_line(file: Option<&Path>, line: Line) -> Entry {
    Entry {
        location: Location::Line {
            file: file.map(Path::to_path_buf),
            line: line.number,
            offset: line.offset,
        },
        content: Content::Line(line.text),
    }
}

/// Reads the entry of the line starting at byte `offset` of a JSON Lines file (an offset a
/// [`Location::Line`] gave): a viewer lists a large corpus by offsets and reads a record only
/// when it is shown ([`Entry::record`]). `line` is the line number to report it under.
pub fn read_record_at(path: &Path, offset: u64, line: u64) -> std::io::Result<Entry> {
    let mut file = open_stream(path, "corpus file").map_err(read_error)?;
    file.seek(SeekFrom::Start(offset))?;
    let mut lines = LineReader::new(BufReader::new(file));
    let raw = match lines.next() {
        Some(r) => r?,
        None => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{}: no record at byte {offset}", path.display()),
            ));
        }
    };
    let raw = Line {
        number: line,
        offset: offset + raw.offset,
        text: raw.text,
    };
    Ok(entry_of_line(Some(path), raw))
}

/// An input of the corpus, as named on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A JSON Lines file.
    Jsonl(PathBuf),
    /// JSON Lines on stdin.
    Stdin,
    /// Sample files (a folder's, expanded in advance: names are small, records are not).
    Samples(Vec<PathBuf>),
}

/// Every entry of the inputs, in order, read lazily. I/O errors (an unreadable file, a read
/// that fails midway) end the stream with the error, as the last item.
pub struct Entries {
    inputs: std::vec::IntoIter<Input>,
    current: Current,
    done_bytes: u64,
    progress: Arc<AtomicU64>,
}

enum Current {
    None,
    Lines {
        file: Option<PathBuf>,
        reader: LineReader<Box<dyn BufRead + Send>>,
    },
    Samples(std::vec::IntoIter<PathBuf>),
}

impl Entries {
    /// The entries of `inputs`, read lazily in order.
    pub fn new(inputs: Vec<Input>) -> Entries {
        Entries {
            inputs: inputs.into_iter(),
            current: Current::None,
            done_bytes: 0,
            progress: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A counter of the bytes read so far that another owner can watch while the entries are
    /// consumed (a progress bar).
    pub fn byte_counter(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.progress)
    }

    /// Bytes of JSON Lines read so far, over every input (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.done_bytes
            + match &self.current {
                Current::Lines { reader, .. } => reader.bytes_read(),
                _ => 0,
            }
    }

    fn open(&mut self, input: Input) -> std::io::Result<()> {
        self.current = match input {
            Input::Jsonl(path) => {
                let file = open_stream(&path, "corpus file").map_err(read_error)?;
                let mut reader: LineReader<Box<dyn BufRead + Send>> =
                    LineReader::new(Box::new(BufReader::with_capacity(1 << 16, file)));
                reader
                    .check_text(&path.display().to_string())
                    .map_err(|e| named(&path, e))?;
                Current::Lines {
                    file: Some(path),
                    reader,
                }
            }
            Input::Stdin => {
                let mut reader: LineReader<Box<dyn BufRead + Send>> = LineReader::new(Box::new(
                    BufReader::with_capacity(1 << 16, std::io::stdin()),
                ));
                reader.check_text("-")?;
                Current::Lines { file: None, reader }
            }
            Input::Samples(files) => Current::Samples(files.into_iter()),
        };
        Ok(())
    }
}

/// A refused or unreadable input file, as an I/O error whose text names it and says why.
pub(super) fn read_error(e: crate::files::ReadError) -> std::io::Error {
    use crate::files::ReadErrorKind;
    let kind = match &e.kind {
        ReadErrorKind::Io(io) => io.kind(),
        _ => std::io::ErrorKind::InvalidInput,
    };
    let text = match &e.kind {
        // A corpus is streamed, but by offsets in a file: a stream goes on stdin.
        ReadErrorKind::Pipe => format!(
            "corpus file {} is a pipe, not a file: give the stream on stdin instead (rtbench corpus ... - < {0})",
            e.path.display()
        ),
        _ => e.to_string(),
    };
    std::io::Error::new(kind, text)
}

pub(super) fn named(path: &Path, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
}

impl Iterator for Entries {
    type Item = std::io::Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match &mut self.current {
                Current::None => {
                    let input = self.inputs.next()?;
                    if let Err(e) = self.open(input) {
                        return Some(Err(e));
                    }
                }
                Current::Lines { file, reader } => match reader.next() {
                    Some(Ok(line)) => {
                        self.progress
                            .store(self.done_bytes + reader.bytes_read(), Ordering::Relaxed);
                        return Some(Ok(entry_of_line(file.as_deref(), line)));
                    }
                    Some(Err(e)) => {
                        let e = match file {
                            Some(p) => named(p, e),
                            None => e,
                        };
                        self.current = Current::None;
                        return Some(Err(e));
                    }
                    None => {
                        self.done_bytes += reader.bytes_read();
                        self.current = Current::None;
                    }
                },
                Current::Samples(files) => match files.next() {
                    Some(path) => {
                        let record = read_sample(&path)
                            .map(|sample| Record { id: None, sample })
                            .map_err(|e| RecordError {
                                message: e.to_string(),
                            });
                        return Some(Ok(Entry {
                            location: Location::File(path),
                            content: Content::Record(Box::new(record)),
                        }));
                    }
                    None => self.current = Current::None,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_their_number_and_offset_and_blank_lines_are_skipped() {
        let text = "{\"a\": 1}\r\n\n  \n{\"b\": 2}\nlast";
        let lines: Vec<Line> = LineReader::new(text.as_bytes())
            .collect::<std::io::Result<_>>()
            .unwrap();
        let got: Vec<(u64, u64, String)> = lines
            .into_iter()
            .map(|l| (l.number, l.offset, l.text.unwrap()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, 0, "{\"a\": 1}".to_string()),
                (4, 14, "{\"b\": 2}".to_string()),
                (5, 23, "last".to_string()),
            ]
        );
        // Each offset starts its line.
        assert!(text[14..].starts_with("{\"b\""));
        assert!(text[23..].starts_with("last"));
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_of_that_line_only() {
        let bytes: &[u8] = b"{\"x\": \"\xff\"}\n{}\n";
        let lines: Vec<Line> = LineReader::new(bytes)
            .collect::<std::io::Result<_>>()
            .unwrap();
        assert!(
            lines[0]
                .text
                .as_ref()
                .unwrap_err()
                .message
                .contains("UTF-8")
        );
        assert_eq!(lines[1].text.as_deref(), Ok("{}"));
    }
}
