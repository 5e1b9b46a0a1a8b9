//! Byte ranges of a JSON Lines file, for the workers of a distributed run: each worker reads
//! only its range of the file, never the whole corpus.
//!
//! A range holds the lines that *start* in it: a line crossing the range's end belongs to it,
//! one crossing its start to the range before. So ranges cut at any bytes cover every line
//! exactly once, and each line is read as [`LineReader`] reads it in one pass over the file
//! (the byte-order mark only at the file's start, blank lines skipped but numbered, a `\r`
//! dropped, an overlong or non-UTF-8 line an error of that line). A first pass
//! ([`count_range`]) counts each range's lines and records; their running sums give each
//! range its first line number and first record index, so that records are numbered and named
//! as one `rtbench corpus` run over the files names them.

use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use super::reader::{Content, Entry, LineReader, named, read_error};
use super::record::Location;
use crate::files::open_stream;

/// What a range of a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeCount {
    /// Lines that start in the range, blank ones included (line numbers advance by this).
    pub lines: u64,
    /// Records: the lines that are not blank (record indices advance by this).
    pub records: u64,
}

/// A reader of the lines of `path` that start in bytes `start..end`, numbered from 1; errors
/// name the file `label` (as it was given: a worker may open it by another path).
fn open_range(
    path: &Path,
    label: &Path,
    start: u64,
    end: u64,
) -> std::io::Result<LineReader<BufReader<std::fs::File>>> {
    let file = open_stream(path, "corpus file").map_err(|mut e| {
        e.path = label.to_path_buf();
        read_error(e)
    })?;
    let mut input = BufReader::with_capacity(1 << 16, file);
    if start == 0 {
        let mut reader = LineReader::range(input, 0, end, true);
        // Only the first range looks at the file's first bytes, as one run would.
        reader
            .check_text(&label.display().to_string())
            .map_err(|e| named(label, e))?;
        return Ok(reader);
    }
    // A line starts at `start` only if the byte before it ends a line: skip to the end of
    // the line that byte is in.
    input
        .seek(SeekFrom::Start(start - 1))
        .map_err(|e| named(label, e))?;
    let skipped = input.skip_until(b'\n').map_err(|e| named(label, e))?;
    Ok(LineReader::range(
        input,
        start - 1 + skipped as u64,
        end,
        false,
    ))
}

/// Counts the lines and records of `path` that start in bytes `start..end` (errors name the
/// file `label`).
pub fn count_range(path: &Path, label: &Path, start: u64, end: u64) -> std::io::Result<RangeCount> {
    let mut reader = open_range(path, label, start, end)?;
    let mut records = 0;
    for line in &mut reader {
        line.map_err(|e| named(label, e))?;
        records += 1;
    }
    Ok(RangeCount {
        lines: reader.lines_read(),
        records,
    })
}

/// The entries of the lines of `path` that start in bytes `start..end`, named `label` (the
/// file as the report names it) and numbered from `first_line` (the number of the range's
/// first line in the file). I/O errors, naming the file `label`, end the entries, as the
/// last item.
pub fn range_entries(
    path: &Path,
    label: &Path,
    start: u64,
    end: u64,
    first_line: u64,
) -> std::io::Result<impl Iterator<Item = std::io::Result<Entry>>> {
    let reader = open_range(path, label, start, end)?;
    let label = label.to_path_buf();
    Ok(reader.map(move |line| {
        let line = line.map_err(|e| named(&label, e))?;
        Ok(Entry {
            location: Location::Line {
                file: Some(label.clone()),
                line: first_line + line.number - 1,
                offset: line.offset,
            },
            content: Content::Line(line.text),
        })
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::{Entries, Input};

    /// Every line of `text`, read in one pass and over ranges cut at `cuts`: the same
    /// locations and texts, and counts that sum to the file's.
    fn check(text: &[u8], cuts: &[u64]) {
        let dir = std::env::temp_dir().join(format!(
            "rtbench-range-{}-{}",
            std::process::id(),
            cuts.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.jsonl");
        std::fs::write(&path, text).unwrap();
        let whole: Vec<Entry> = Entries::new(vec![Input::Jsonl(path.clone())])
            .collect::<std::io::Result<_>>()
            .unwrap();
        let mut bounds = vec![0];
        bounds.extend_from_slice(cuts);
        bounds.push(text.len() as u64 + 5);
        let (mut ranged, mut line, mut records) = (Vec::new(), 1, 0);
        for w in bounds.windows(2) {
            let count = count_range(&path, &path, w[0], w[1]).unwrap();
            let entries: Vec<Entry> = range_entries(&path, &path, w[0], w[1], line)
                .unwrap()
                .collect::<std::io::Result<_>>()
                .unwrap();
            assert_eq!(entries.len() as u64, count.records, "range {w:?}");
            ranged.extend(entries);
            line += count.lines;
            records += count.records;
        }
        assert_eq!(ranged, whole, "cut at {cuts:?}");
        assert_eq!(records, whole.len() as u64);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ranges_cut_anywhere_read_every_line_once_as_one_pass_does() {
        let text = b"\xef\xbb\xbf{\"a\": 1}\r\n\n  \n{\"b\": 2}\n\xff\n\nlast";
        for cut in 0..=text.len() as u64 + 1 {
            check(text, &[cut]);
        }
        check(text, &[3, 4, 12, 13, 14, 20]);
        check(b"", &[0]);
    }

    #[test]
    fn only_the_first_range_refuses_a_compressed_file() {
        let dir = std::env::temp_dir().join(format!("rtbench-range-gz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.jsonl.gz");
        std::fs::write(&path, b"\x1f\x8b\x08\x00rest").unwrap();
        let label = Path::new("logs/c.jsonl.gz");
        let err = count_range(&path, label, 0, 4).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read logs/c.jsonl.gz: it is gzip-compressed"),
            "{err}"
        );
        // A later range does not look at the file's first bytes.
        assert_eq!(count_range(&path, label, 1, 4).unwrap().records, 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
