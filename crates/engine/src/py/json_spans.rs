//! Where each node of a JSON document sits in its text: spans for diagnostics on template files.
//!
//! [`json_loads_with_spans`](super::json_loads_with_spans) returns a [`SpanMap`] beside the
//! value; a JSON path ([`PathSeg`]s) leads to the byte spans of a node and of its key. The helpers
//! here turn byte offsets into Python-style line/column pairs and map a position inside a
//! decoded string back to the source text (through escapes).

use crate::value::{Dict, Key, SURROGATE_BASE};
use std::ops::Range;

/// One step of a JSON path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PathSeg {
    /// A dict key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// The byte spans of one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSpan {
    /// The quoted key token, for an entry of an object.
    pub key: Option<Range<usize>>,
    /// The value, from its first to its last byte (quotes and brackets included).
    pub value: Range<usize>,
}

/// Spans of every node of a document, looked up by JSON path. For a repeated key the spans of
/// its last occurrence are kept, as is its value.
#[derive(Clone, Debug, Default)]
pub struct SpanMap {
    root: Option<SpanNode>,
}

/// A node's span and those of its children.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpanNode {
    pub(crate) span: NodeSpan,
    children: SpanChildren,
}

#[derive(Clone, Debug, Default)]
pub(crate) enum SpanChildren {
    #[default]
    Leaf,
    List(Vec<SpanNode>),
    /// The entries (a repeated key keeps its first position and its last spans), and the
    /// repeats: each with the key token of the repeat and of the occurrence before it.
    Dict(Dict<SpanNode>, Vec<(Key, Range<usize>, Range<usize>)>),
}

/// A key that occurs more than once in one object (Python keeps the last value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The path of the entry (its object's path, then the key).
    pub path: Vec<PathSeg>,
    /// The quoted key token of this (later) occurrence.
    pub key: Range<usize>,
    /// The quoted key token of the occurrence before it.
    pub previous: Range<usize>,
}

impl SpanChildren {
    /// Dict children from entries in document order, recording repeated keys.
    pub(crate) fn dict(entries: impl Iterator<Item = (Key, SpanNode)>) -> SpanChildren {
        let mut map: Dict<SpanNode> = Dict::new();
        let mut repeats = Vec::new();
        for (k, node) in entries {
            if let Some(prev) = map.get(&k)
                && let (Some(before), Some(now)) = (prev.span.key.clone(), node.span.key.clone())
            {
                repeats.push((k.clone(), now, before));
            }
            map.insert(k, node);
        }
        SpanChildren::Dict(map, repeats)
    }
}

impl SpanNode {
    pub(crate) fn new(span: NodeSpan, children: SpanChildren) -> SpanNode {
        SpanNode { span, children }
    }

    fn child(&self, seg: &PathSeg) -> Option<&SpanNode> {
        match (&self.children, seg) {
            (SpanChildren::List(items), PathSeg::Index(i)) => items.get(*i),
            (SpanChildren::Dict(entries, _), PathSeg::Key(k)) => entries.get(k),
            _ => None,
        }
    }
}

impl SpanMap {
    pub(crate) fn from_root(root: SpanNode) -> SpanMap {
        SpanMap { root: Some(root) }
    }

    /// The spans of the node at `path` (the empty path is the whole document).
    pub fn get(&self, path: &[PathSeg]) -> Option<&NodeSpan> {
        let mut node = self.root.as_ref()?;
        for seg in path {
            node = node.child(seg)?;
        }
        Some(&node.span)
    }

    /// Every node with its path, in document order (parents before children).
    pub fn entries(&self) -> Vec<(Vec<PathSeg>, &NodeSpan)> {
        let mut out = Vec::new();
        let mut todo: Vec<(Vec<PathSeg>, &SpanNode)> =
            self.root.iter().map(|r| (Vec::new(), r)).collect();
        while let Some((path, node)) = todo.pop() {
            let children: Vec<(PathSeg, &SpanNode)> = match &node.children {
                SpanChildren::Leaf => Vec::new(),
                SpanChildren::List(items) => items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (PathSeg::Index(i), n))
                    .collect(),
                SpanChildren::Dict(entries, _) => entries
                    .iter()
                    .map(|(k, n)| (PathSeg::Key(k.to_owned()), n))
                    .collect(),
            };
            for (seg, child) in children.into_iter().rev() {
                let mut child_path = path.clone();
                child_path.push(seg);
                todo.push((child_path, child));
            }
            out.push((path, &node.span));
        }
        out
    }

    /// Every repeated key of every object still in the document, ordered by the position of
    /// the repeat. The value of the last occurrence is the one kept (as Python does); objects
    /// that a later repeat replaced are not searched.
    pub fn duplicate_keys(&self) -> Vec<DuplicateKey> {
        let mut out = Vec::new();
        let mut todo: Vec<(Vec<PathSeg>, &SpanNode)> =
            self.root.iter().map(|r| (Vec::new(), r)).collect();
        while let Some((path, node)) = todo.pop() {
            match &node.children {
                SpanChildren::Leaf => {}
                SpanChildren::List(items) => {
                    for (i, n) in items.iter().enumerate() {
                        let mut p = path.clone();
                        p.push(PathSeg::Index(i));
                        todo.push((p, n));
                    }
                }
                SpanChildren::Dict(entries, repeats) => {
                    for (k, now, before) in repeats {
                        let mut p = path.clone();
                        p.push(PathSeg::Key(k.to_string()));
                        out.push(DuplicateKey {
                            path: p,
                            key: now.clone(),
                            previous: before.clone(),
                        });
                    }
                    for (k, n) in entries {
                        let mut p = path.clone();
                        p.push(PathSeg::Key(k.to_owned()));
                        todo.push((p, n));
                    }
                }
            }
        }
        out.sort_by_key(|d| d.key.start);
        out
    }
}

impl Drop for SpanMap {
    /// Drops the tree without recursing once per nesting level.
    fn drop(&mut self) {
        let mut todo: Vec<SpanNode> = self.root.take().into_iter().collect();
        while let Some(mut node) = todo.pop() {
            match std::mem::take(&mut node.children) {
                SpanChildren::Leaf => {}
                SpanChildren::List(items) => todo.extend(items),
                SpanChildren::Dict(entries, _) => todo.extend(entries.into_values()),
            }
        }
    }
}

/// Python's position convention for `source[..byte_offset]`: 1-based line, and 1-based column
/// counted in code points (`JSONDecodeError.lineno` / `colno`).
pub(crate) fn line_col(source: &str, byte_offset: usize) -> (usize, usize) {
    let end = source.floor_char_boundary(byte_offset);
    let before = &source.as_bytes()[..end];
    let line = 1 + memchr::memchr_iter(b'\n', before).count();
    let line_start = memchr::memrchr(b'\n', before).map_or(0, |i| i + 1);
    (line, 1 + source[line_start..end].chars().count())
}

/// Maps a byte offset in the decoded value of the string literal at `literal_span` (quotes
/// included) back to a byte offset in `source`: the start of the source character or escape
/// that produced that decoded byte. An offset at or past the end of the value maps to the
/// closing quote.
pub(crate) fn string_offset_to_source(
    source: &str,
    literal_span: Range<usize>,
    decoded_byte_offset: usize,
) -> usize {
    let b = source.as_bytes();
    let end = literal_span
        .end
        .min(b.len())
        .saturating_sub(1)
        .max(literal_span.start);
    let mut p = literal_span.start + 1;
    let mut decoded = 0usize;
    while p < end {
        let (decoded_len, source_len) = match (b[p], source.get(p..)) {
            (b'\\', _) => escape_lengths(b, p),
            (_, Some(rest)) => {
                let len = rest.chars().next().map_or(1, char::len_utf8);
                (len, len)
            }
            // Not a character boundary: the span was not a literal of `source`.
            (_, None) => (1, 1),
        };
        if decoded_byte_offset < decoded + decoded_len {
            return p;
        }
        decoded += decoded_len;
        p += source_len;
    }
    end
}

/// (decoded UTF-8 length, source length) of the valid escape at `p`.
fn escape_lengths(b: &[u8], p: usize) -> (usize, usize) {
    if b.get(p + 1) != Some(&b'u') {
        return (1, 2);
    }
    let hex = |at: usize| {
        b.get(at..at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let Some(code) = hex(p + 2) else {
        return (1, 2);
    };
    if (0xD800..=0xDBFF).contains(&code)
        && b.get(p + 6..p + 8) == Some(b"\\u")
        && hex(p + 8).is_some_and(|low| (0xDC00..=0xDFFF).contains(&low))
    {
        return (4, 12);
    }
    let decoded = char::from_u32(code)
        .or_else(|| char::from_u32(SURROGATE_BASE + (code - 0xD800)))
        .map_or(3, char::len_utf8);
    (decoded, 6)
}

#[cfg(test)]
mod tests {
    use super::super::json_decode::json_loads_with_spans;
    use super::*;

    fn key(k: &str) -> PathSeg {
        PathSeg::Key(k.to_string())
    }

    #[test]
    fn spans_of_nodes_and_keys() {
        let src = r#"{"a": [1, {"b": "x"}], "c": null}"#;
        let (_, spans) = json_loads_with_spans(src).unwrap();
        assert_eq!(spans.get(&[]).unwrap().value, 0..src.len());
        let a = spans.get(&[key("a")]).unwrap();
        assert_eq!(&src[a.key.clone().unwrap()], "\"a\"");
        assert_eq!(&src[a.value.clone()], r#"[1, {"b": "x"}]"#);
        let b = spans.get(&[key("a"), PathSeg::Index(1), key("b")]).unwrap();
        assert_eq!(&src[b.value.clone()], "\"x\"");
        assert_eq!(spans.get(&[key("a"), PathSeg::Index(2)]), None);
        assert_eq!(spans.entries().len(), 6);
    }

    #[test]
    fn repeated_key_keeps_last_spans_only() {
        let src = r#"{"a": {"x": 1}, "a": 2}"#;
        let (_, spans) = json_loads_with_spans(src).unwrap();
        let a = spans.get(&[key("a")]).unwrap();
        assert_eq!(a.key, Some(16..19));
        assert_eq!(&src[a.value.clone()], "2");
        assert_eq!(spans.get(&[key("a"), key("x")]), None);
    }

    #[test]
    fn repeated_keys_are_recorded_with_both_positions() {
        let src = r#"{"f": {"r": true, "r": false, "r": 0}, "g": [{"a": 1, "a": 2}], "f2": 1}"#;
        let (value, spans) = json_loads_with_spans(src).unwrap();
        let dups = spans.duplicate_keys();
        let shown: Vec<_> = dups
            .iter()
            .map(|d| {
                (
                    d.path.clone(),
                    &src[d.key.clone()],
                    d.key.start,
                    d.previous.start,
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                (vec![key("f"), key("r")], "\"r\"", 18, 7),
                (vec![key("f"), key("r")], "\"r\"", 30, 18),
                (vec![key("g"), PathSeg::Index(0), key("a")], "\"a\"", 54, 46),
            ]
        );
        // The values are unchanged: last value, first position.
        let f = value.as_dict().unwrap()["f"].as_dict().unwrap();
        assert_eq!(f["r"], crate::value::Value::Int(0));
        assert_eq!(spans.get(&[key("f"), key("r")]).unwrap().key, Some(30..33));
        let (_, plain) = json_loads_with_spans(r#"{"a": 1, "b": {"a": 2}}"#).unwrap();
        assert!(plain.duplicate_keys().is_empty());
    }

    #[test]
    fn decoded_offsets_map_through_escapes() {
        let src = r#"{"p": "a\\(\u00e9\ud83d\ude00z"}"#;
        let (_, spans) = json_loads_with_spans(src).unwrap();
        let lit = spans.get(&[key("p")]).unwrap().value.clone();
        // decoded: a \ ( é 😀 z  -> byte offsets 0 1 2 3 5 9
        let at = |d| string_offset_to_source(src, lit.clone(), d);
        assert_eq!(&src[at(0)..at(0) + 1], "a");
        assert_eq!(&src[at(1)..at(1) + 2], r"\\");
        assert_eq!(&src[at(2)..at(2) + 1], "(");
        assert_eq!(&src[at(3)..at(3) + 6], r"\u00e9");
        assert_eq!(at(4), at(3));
        assert_eq!(&src[at(5)..at(5) + 12], r"\ud83d\ude00");
        assert_eq!(&src[at(9)..at(9) + 1], "z");
        assert_eq!(at(10), lit.end - 1);
    }

    #[test]
    fn line_and_column_count_code_points() {
        let src = "ab\néé x";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 3), (2, 1));
        assert_eq!(line_col(src, src.len() - 1), (2, 4));
    }
}
