//! Python's `json.loads` (CPython 3.11 with its C scanner), exactly: what it accepts, the values
//! it builds and the error it raises.
//!
//! What the reference's `json.loads` does that JSON parsers usually do not:
//! - `NaN`, `Infinity` and `-Infinity` are accepted; integers have any size up to 4300 digits
//!   (more is a `ValueError`, not a decode error); floats out of range become infinities.
//! - Strings are strict (control characters below U+0020 are errors), `\uXXXX` escapes of
//!   surrogate pairs combine, and lone surrogates are kept (as the stand-ins of
//!   [`crate::value`]).
//! - A repeated key keeps its first position and takes the last value.
//! - A text starting with U+FEFF is rejected; only ` \t\n\r` count as whitespace.
//! - Nesting deeper than the interpreter's recursion limit allows raises `RecursionError`; the
//!   limit depends on how deep the Python stack already is at the call (see [`json_max_depth`]).
//!
//! The decoder is iterative (no recursion on nesting), never panics, and scans strings eight
//! bytes at a time.

use super::json_error::{JsonError, JsonErrorKind};
use super::json_spans::{NodeSpan, SpanChildren, SpanMap, SpanNode};
use super::num::{INT_MAX_STR_DIGITS, PyValueError, int_from_ascii_digits, parse_float_text};
use crate::value::{Dict, Key, Value, surrogate_char};
use std::borrow::Cow;
use std::ops::Range;

/// How deep containers may nest, as a function of the Python stack below `json.loads`.
///
/// CPython 3.11 counts Python frames and C-level recursion against one limit of 1000. With
/// `stack_cost` = the number of Python frames on the stack when `json.loads` is called (the
/// caller's frame included), plus one for every entry into the interpreter from C below it (the
/// running script's module frame counts as one such entry; so does a Python `__init__` run by a
/// class call), containers may nest `997 - stack_cost` deep. A `NaN`, `Infinity` or `-Infinity`
/// costs one more level where it appears.
#[cfg(test)]
pub(crate) const fn json_max_depth(stack_cost: usize) -> usize {
    JSON_DEPTH_BASE.saturating_sub(stack_cost)
}

/// See [`json_max_depth`].
#[cfg(test)]
pub(crate) const JSON_DEPTH_BASE: usize = 997;

/// Nesting limit of the reference's `json` content parser for a field's own body, in the
/// one-shot `parse` command (`parse_response` -> `feed`/`finalize` -> ... -> `_json`), measured:
/// 987. Regions closed while the prefix is processed go through the parser's constructor and
/// allow two levels less (985); a `value_parser` of `xml-inline` or `kv-lines` costs three levels
/// (984); `json.loads` in tool-argument coercion allows 988, two levels less per list around the
/// tool call.
pub(crate) const JSON_MAX_DEPTH_PARSE: usize = 987;

/// As [`JSON_MAX_DEPTH_PARSE`] when `ResponseParser.feed`/`finalize` are called directly by the
/// command-line script (the `stream` command): one frame less, 988 (986 for prefix regions).
pub(crate) const JSON_MAX_DEPTH_STREAM: usize = 988;

/// Nesting limit when the command-line script reads a template or tools file with `json.load`
/// (measured: 992).
pub(crate) const JSON_MAX_DEPTH_TEMPLATE_FILE: usize = 992;

/// Python's `json.loads(s)` as the reference's `json` content parser calls it (nesting limit
/// `JSON_MAX_DEPTH_PARSE`).
pub fn json_loads(s: &str) -> Result<Value, JsonError> {
    json_loads_depth(s, JSON_MAX_DEPTH_PARSE)
}

/// Python's `json.loads(s)` with containers allowed to nest `max_depth` deep (see
/// [`json_max_depth`]). Dropping the result recurses once per level, so keep `max_depth` near
/// Python's limits.
pub(crate) fn json_loads_depth(s: &str, max_depth: usize) -> Result<Value, JsonError> {
    Decoder::<false>::new(s, max_depth)
        .document()
        .map(|(v, _)| v)
}

/// Python's `json.loads(s)` for a file the command line reads (nesting limit
/// `JSON_MAX_DEPTH_TEMPLATE_FILE`), also returning the byte spans of every node.
pub fn json_loads_with_spans(s: &str) -> Result<(Value, SpanMap), JsonError> {
    let (value, node) = Decoder::<true>::new(s, JSON_MAX_DEPTH_TEMPLATE_FILE).document()?;
    Ok((value, SpanMap::from_root(node)))
}

/// A container being filled. Its items wait on the decoder's scratch stacks (from `first`) so
/// that each container is allocated once, at its final size.
struct Frame {
    is_dict: bool,
    /// Where the container starts in the text.
    start: usize,
    /// Its first item on `items` or `entries`.
    first: usize,
    /// Its first child on `nodes` (with spans).
    first_node: usize,
    /// For a dict: the key whose value is being parsed, and its quoted token.
    key: Key,
    key_span: Range<usize>,
}

impl Frame {
    fn closer(&self) -> u8 {
        if self.is_dict { b'}' } else { b']' }
    }
}

/// The decoder; `SPANS` selects whether node spans are recorded.
struct Decoder<'a, const SPANS: bool> {
    src: &'a str,
    b: &'a [u8],
    pos: usize,
    max_depth: usize,
    /// Items of the open lists, innermost last.
    items: Vec<Value>,
    /// Entries of the open dicts, innermost last.
    entries: Vec<(Key, Value)>,
    /// With spans: the spans of the finished children of the open containers (with their keys
    /// in dicts), innermost last ...
    nodes: Vec<(Key, SpanNode)>,
    /// ... and of the value finished last.
    done: SpanNode,
}

impl<'a, const SPANS: bool> Decoder<'a, SPANS> {
    fn new(src: &'a str, max_depth: usize) -> Self {
        Decoder {
            src,
            b: src.as_bytes(),
            pos: 0,
            max_depth,
            items: Vec::new(),
            entries: Vec::new(),
            nodes: Vec::new(),
            done: SpanNode::default(),
        }
    }

    fn error(&self, kind: JsonErrorKind, message: impl Into<String>, at: usize) -> JsonError {
        JsonError::new(kind, message.into(), self.src, at)
    }

    fn decode_error(&self, message: &str, at: usize) -> JsonError {
        self.error(JsonErrorKind::Decode, message, at)
    }

    /// `json.loads`: BOM check, leading whitespace, one value, trailing whitespace, end.
    fn document(mut self) -> Result<(Value, SpanNode), JsonError> {
        if self.src.starts_with('\u{feff}') {
            return Err(self.decode_error("Unexpected UTF-8 BOM (decode using utf-8-sig)", 0));
        }
        self.skip_ws();
        let value = self.value()?;
        self.skip_ws();
        if self.pos != self.b.len() {
            return Err(self.decode_error("Extra data", self.pos));
        }
        Ok((value, std::mem::take(&mut self.done)))
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Records the span of the value that started at `start` and ends here (with spans only).
    fn finish_span(&mut self, start: usize, children: SpanChildren) {
        let span = NodeSpan {
            key: None,
            value: start..self.pos,
        };
        self.done = SpanNode::new(span, children);
    }

    /// Parses one value at `pos` (no leading whitespace), iteratively over nesting.
    fn value(&mut self) -> Result<Value, JsonError> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            let start = self.pos;
            let mut value = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    let is_dict = open == b'{';
                    self.enter(stack.len(), start, if is_dict { "object" } else { "array" })?;
                    self.pos += 1;
                    self.skip_ws();
                    let mut frame = Frame {
                        is_dict,
                        start,
                        first: if is_dict {
                            self.entries.len()
                        } else {
                            self.items.len()
                        },
                        first_node: self.nodes.len(),
                        key: Key::default(),
                        key_span: 0..0,
                    };
                    if self.peek() == Some(frame.closer()) {
                        self.pos += 1;
                        self.close(frame)
                    } else {
                        if is_dict {
                            (frame.key, frame.key_span) = self.key()?;
                        }
                        stack.push(frame);
                        continue 'value;
                    }
                }
                _ => {
                    let v = self.scalar(stack.len())?;
                    if SPANS {
                        self.finish_span(start, SpanChildren::Leaf);
                    }
                    v
                }
            };
            // Attach the finished value to its container; close containers that end here.
            loop {
                let Some(frame) = stack.last_mut() else {
                    return Ok(value);
                };
                if SPANS {
                    let mut node = std::mem::take(&mut self.done);
                    if frame.is_dict {
                        node.span.key = Some(frame.key_span.clone());
                    }
                    self.nodes.push((frame.key.clone(), node));
                }
                if frame.is_dict {
                    self.entries.push((std::mem::take(&mut frame.key), value));
                } else {
                    self.items.push(value);
                }
                let (is_dict, closer) = (frame.is_dict, frame.closer());
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_ws();
                        if is_dict {
                            let (key, key_span) = self.key()?;
                            if let Some(frame) = stack.last_mut() {
                                (frame.key, frame.key_span) = (key, key_span);
                            }
                        }
                        continue 'value;
                    }
                    Some(c) if c == closer => {
                        self.pos += 1;
                        // The stack is not empty: its top was just seen.
                        value = stack.pop().map_or(Value::Null, |frame| self.close(frame));
                    }
                    _ => return Err(self.decode_error("Expecting ',' delimiter", self.pos)),
                }
            }
        }
    }

    /// The container of `frame`, whose closing bracket was just read.
    fn close(&mut self, frame: Frame) -> Value {
        if SPANS {
            let children = self.nodes.drain(frame.first_node..);
            let children = if frame.is_dict {
                SpanChildren::dict(children)
            } else {
                SpanChildren::List(children.map(|(_, node)| node).collect())
            };
            self.finish_span(frame.start, children);
        }
        if frame.is_dict {
            Value::Dict(self.dict_from(frame.first))
        } else {
            Value::List(self.items.drain(frame.first..).collect())
        }
    }

    /// The dict of the entries from `first` on the scratch stack (a repeated key keeps its first
    /// position and takes the last value).
    fn dict_from(&mut self, first: usize) -> Dict {
        let mut map = Dict::with_capacity(self.entries.len() - first);
        for (k, v) in self.entries.drain(first..) {
            map.insert(k, v);
        }
        // A repeated key left room for an entry it did not add; a sample may hold a great
        // many of these dicts.
        if map.len() < map.capacity() {
            map.shrink_to_fit();
        }
        map
    }

    /// The recursion check CPython makes when it starts decoding a container (`depth` containers
    /// are open around it).
    fn enter(&self, depth: usize, at: usize, what: &str) -> Result<(), JsonError> {
        if depth < self.max_depth {
            return Ok(());
        }
        let message = format!(
            "maximum recursion depth exceeded while decoding a JSON {what} from a unicode string"
        );
        Err(self.error(JsonErrorKind::Recursion, message, at))
    }

    /// A dict key at `pos`, then the `:` and the whitespace after it.
    fn key(&mut self) -> Result<(Key, Range<usize>), JsonError> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return Err(
                self.decode_error("Expecting property name enclosed in double quotes", start)
            );
        }
        // Made from the text itself when it has no escape: a key of up to 15 bytes (most of
        // them) then allocates nothing.
        let key = Key::from(self.string_text()?);
        let span = start..self.pos;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.decode_error("Expecting ':' delimiter", self.pos));
        }
        self.pos += 1;
        self.skip_ws();
        Ok((key, span))
    }

    /// A string, constant or number at `pos` (`depth` containers are open around it).
    fn scalar(&mut self, depth: usize) -> Result<Value, JsonError> {
        let rest = &self.b[self.pos..];
        let constant =
            |text: &[u8], value: Value| rest.starts_with(text).then_some((text.len(), value));
        let found = match rest.first() {
            Some(b'"') => return self.string_text().map(|s| Value::Str(s.into_owned())),
            Some(b'n') => constant(b"null", Value::Null),
            Some(b't') => constant(b"true", Value::Bool(true)),
            Some(b'f') => constant(b"false", Value::Bool(false)),
            Some(b'N') => constant(b"NaN", Value::Float(f64::NAN)),
            Some(b'I') => constant(b"Infinity", Value::Float(f64::INFINITY)),
            Some(b'-') => constant(b"-Infinity", Value::Float(f64::NEG_INFINITY)),
            _ => None,
        };
        match found {
            Some((len, value)) => {
                if matches!(value, Value::Float(_)) && depth >= self.max_depth {
                    // CPython calls back into Python for these constants: one more level.
                    let message = "maximum recursion depth exceeded while calling a Python object";
                    return Err(self.error(JsonErrorKind::Recursion, message, self.pos));
                }
                self.pos += len;
                Ok(value)
            }
            None => self.number(),
        }
    }

    /// A number as the C scanner matches it: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?`
    /// (ASCII digits only; a fraction or exponent without digits is left unread).
    fn number(&mut self) -> Result<Value, JsonError> {
        let b = self.b;
        let start = self.pos;
        let digits_from = |i: usize| i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let negative = b.get(start) == Some(&b'-');
        let int_start = start + usize::from(negative);
        let mut i = match b.get(int_start) {
            Some(b'0') => int_start + 1,
            Some(b'1'..=b'9') => digits_from(int_start + 1),
            _ => return Err(self.decode_error("Expecting value", start)),
        };
        let int_end = i;
        let mut is_float = false;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            i = digits_from(i + 1);
        }
        if let Some(b'e' | b'E') = b.get(i) {
            let mut j = i + 1;
            if let Some(b'-' | b'+') = b.get(j) {
                j += 1;
            }
            let end = digits_from(j);
            if end > j {
                is_float = true;
                i = end;
            }
        }
        self.pos = i;
        if is_float {
            let x = parse_float_text(&b[start..i]).unwrap_or(f64::NAN);
            return Ok(Value::Float(x));
        }
        let digits = &b[int_start..int_end];
        if digits.len() > INT_MAX_STR_DIGITS {
            let message = PyValueError::int_digit_limit(digits.len()).message;
            return Err(self.error(JsonErrorKind::Value, message, start));
        }
        Ok(int_from_ascii_digits(negative, digits))
    }

    /// A string whose opening quote is at `pos`; leaves `pos` after the closing quote. The text
    /// is borrowed from the source unless it holds an escape.
    fn string_text(&mut self) -> Result<Cow<'a, str>, JsonError> {
        let begin = self.pos;
        let b = self.b;
        let mut chunk = begin + 1;
        let mut out: Option<String> = None;
        loop {
            let at = find_string_special(b, chunk);
            match b.get(at) {
                Some(b'"') => {
                    self.pos = at + 1;
                    let tail = &self.src[chunk..at];
                    return Ok(match out {
                        None => Cow::Borrowed(tail),
                        Some(mut s) => {
                            s.push_str(tail);
                            Cow::Owned(s)
                        }
                    });
                }
                Some(b'\\') => {
                    let s = out.get_or_insert_with(|| String::with_capacity(at - begin + 16));
                    s.push_str(&self.src[chunk..at]);
                    chunk = self.escape(at, begin, s)?;
                }
                Some(_) => return Err(self.decode_error("Invalid control character at", at)),
                None => return Err(self.decode_error("Unterminated string starting at", begin)),
            }
        }
    }

    /// Decodes the escape whose backslash is at `at` into `out`; returns where the text goes on.
    fn escape(&self, at: usize, begin: usize, out: &mut String) -> Result<usize, JsonError> {
        let b = self.b;
        let simple = match b.get(at + 1) {
            None => return Err(self.decode_error("Unterminated string starting at", begin)),
            Some(b'u') => None,
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'/') => Some('/'),
            Some(b'b') => Some('\x08'),
            Some(b'f') => Some('\x0c'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            Some(_) => return Err(self.decode_error("Invalid \\escape", at)),
        };
        if let Some(c) = simple {
            out.push(c);
            return Ok(at + 2);
        }
        // `\uXXXX`: the four digits must be followed by at least one more character.
        let u = at + 1;
        let mut end = u + 5;
        if end >= b.len() {
            return Err(self.decode_error("Invalid \\uXXXX escape", u));
        }
        let mut code = self.hex4(u)?;
        if (0xD800..=0xDBFF).contains(&code)
            && end + 6 < b.len()
            && b[end] == b'\\'
            && b[end + 1] == b'u'
        {
            let low = self.hex4(end + 1)?;
            if (0xDC00..=0xDFFF).contains(&low) {
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                end += 6;
            }
        }
        match char::from_u32(code) {
            Some(c) => out.push(c),
            None => out.push(surrogate_char(code as u16)),
        }
        Ok(end)
    }

    /// The four hex digits after the `u` at `u`.
    fn hex4(&self, u: usize) -> Result<u32, JsonError> {
        let mut code = 0u32;
        for i in u + 1..u + 5 {
            let digit = match self.b.get(i) {
                Some(&c @ b'0'..=b'9') => c - b'0',
                Some(&c @ b'a'..=b'f') => c - b'a' + 10,
                Some(&c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.decode_error("Invalid \\uXXXX escape", u)),
            };
            code = (code << 4) | u32::from(digit);
        }
        Ok(code)
    }
}

/// The index of the first byte at or after `i` that ends a plain run of string text: `"`, `\`
/// or a control character below 0x20; `b.len()` if there is none.
#[inline]
pub(crate) fn find_string_special(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(i..i + 8) {
        let Ok(bytes) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let w = u64::from_le_bytes(bytes);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        // A byte is flagged when it is zero (quote, backslash) or below 0x20. Only bytes above
        // a truly flagged one can be flagged wrongly, so the lowest flag is exact.
        let flags = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        let flags = flags & HIGH;
        if flags != 0 {
            return i + (flags.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 {
            return i;
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::surrogate_char;

    fn err(s: &str) -> String {
        json_loads(s).unwrap_err().to_string()
    }

    #[test]
    fn python_extensions_are_accepted() {
        assert!(matches!(json_loads("NaN"), Ok(Value::Float(f)) if f.is_nan()));
        assert!(
            matches!(json_loads("[-Infinity]"), Ok(Value::List(l)) if l[0] == Value::Float(f64::NEG_INFINITY))
        );
        assert!(matches!(json_loads("1e400"), Ok(Value::Float(f)) if f == f64::INFINITY));
        let big = json_loads("123456789012345678901234567890").unwrap();
        assert!(matches!(big, Value::BigInt(_)));
        assert!(matches!(json_loads("-0"), Ok(Value::Int(0))));
    }

    #[test]
    fn duplicate_keys_keep_first_position_and_last_value() {
        let v = json_loads(r#"{"a": 1, "b": 2, "a": 3}"#).unwrap();
        let d = v.as_dict().unwrap();
        assert_eq!(d.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(d["a"], Value::Int(3));
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(
            json_loads(r#""a\"\\\/\b\f\n\r\t""#).unwrap(),
            Value::from("a\"\\/\x08\x0c\n\r\t")
        );
        assert_eq!(json_loads(r#""\ud83d\ude00""#).unwrap(), Value::from("😀"));
        let lone = format!("{}A", surrogate_char(0xD800));
        assert_eq!(
            json_loads(r#""\ud800\u0041""#).unwrap(),
            Value::from(lone.as_str())
        );
        assert_eq!(
            json_loads("\"é\u{10F800}\"").unwrap(),
            Value::from("é\u{10F800}")
        );
    }

    #[test]
    fn error_messages_match_python() {
        assert_eq!(err(""), "Expecting value: line 1 column 1 (char 0)");
        assert_eq!(err("[1,]"), "Expecting value: line 1 column 4 (char 3)");
        assert_eq!(
            err("{\"a\":1,}"),
            "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)"
        );
        assert_eq!(
            err("[1 2]"),
            "Expecting ',' delimiter: line 1 column 4 (char 3)"
        );
        assert_eq!(
            err("{\"a\" 1}"),
            "Expecting ':' delimiter: line 1 column 6 (char 5)"
        );
        assert_eq!(
            err("\"abc"),
            "Unterminated string starting at: line 1 column 1 (char 0)"
        );
        assert_eq!(
            err("\"a\x01\""),
            "Invalid control character at: line 1 column 3 (char 2)"
        );
        assert_eq!(err(r#""\x""#), "Invalid \\escape: line 1 column 2 (char 1)");
        assert_eq!(
            err(r#""\u12x4""#),
            "Invalid \\uXXXX escape: line 1 column 3 (char 2)"
        );
        assert_eq!(
            err(r#""\ud800\udc00"#),
            "Invalid \\uXXXX escape: line 1 column 9 (char 8)"
        );
        assert_eq!(err("1.e5"), "Extra data: line 1 column 2 (char 1)");
        assert_eq!(err("\n\n  x"), "Expecting value: line 3 column 3 (char 4)");
        assert_eq!(
            err("\u{feff}1"),
            "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"
        );
        assert_eq!(
            err("[\"é\", x]"),
            "Expecting value: line 1 column 7 (char 6)"
        );
    }

    #[test]
    fn error_kinds() {
        let e = json_loads(&"1".repeat(4301)).unwrap_err();
        assert_eq!(e.kind, JsonErrorKind::Value);
        assert!(json_loads(&"1".repeat(4300)).is_ok());
        assert!(json_loads(&format!("-{}", "1".repeat(4300))).is_ok());
        let e = json_loads_depth("[[[]]]", 2).unwrap_err();
        assert_eq!(e.kind, JsonErrorKind::Recursion);
        assert_eq!(e.offset, 2);
        assert!(json_loads_depth("[[[]]]", 3).is_ok());
        // The float constants cost a level of their own.
        assert!(json_loads_depth("[[NaN]]", 2).is_err());
        assert!(json_loads_depth("[[1]]", 2).is_ok());
        // Errors before the depth is reached win.
        assert_eq!(
            json_loads_depth("[x[[[]]]]", 2).unwrap_err().kind,
            JsonErrorKind::Decode
        );
    }

    #[test]
    fn deep_input_does_not_overflow_the_stack() {
        let deep = "[".repeat(1_000_000);
        assert_eq!(
            json_loads(&deep).unwrap_err().kind,
            JsonErrorKind::Recursion
        );
        let ok = format!(
            "{}{}",
            "[".repeat(JSON_MAX_DEPTH_PARSE),
            "]".repeat(JSON_MAX_DEPTH_PARSE)
        );
        assert!(json_loads(&ok).is_ok());
    }

    #[test]
    fn string_scan_finds_specials_in_every_lane() {
        for len in 0..20 {
            for pos in 0..len {
                for special in [b'"', b'\\', 0x00, 0x1f] {
                    let mut v = vec![b'a'; len];
                    v[pos] = special;
                    assert_eq!(find_string_special(&v, 0), pos);
                }
            }
            assert_eq!(find_string_special(&vec![0xC3; len], 0), len);
            assert_eq!(find_string_special(&vec![b' '; len], 0), len);
        }
    }
}
