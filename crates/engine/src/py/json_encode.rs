//! Python's `json.dumps`: the text the reference's command line prints for messages and events.
//!
//! Floats print as `repr(float)` (`1e-05`, `1e+16`, `-0.0`) and `NaN`/`Infinity`/`-Infinity`
//! (or fail with `allow_nan=False`), integers print in full, dict keys keep insertion order.
//! Lone-surrogate stand-ins print as the `\udXXX` escapes Python writes with `ensure_ascii`;
//! without it Python's output holds a real surrogate, which cannot be written as UTF-8 (see
//! [`DumpOptions::surrogates_error`]).

use super::num::{INT_MAX_STR_DIGITS, float_repr};
use crate::value::{Value, surrogate_of};
use std::fmt::{self, Write};

/// The options of `json.dumps` the product uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpOptions {
    /// `ensure_ascii`: escape every non-ASCII character (and DEL) as `\uXXXX`.
    pub ensure_ascii: bool,
    /// `allow_nan`: print `NaN`/`Infinity`/`-Infinity`; otherwise they are a `ValueError`.
    pub allow_nan: bool,
    /// `indent`: pretty-print with this many spaces per level (item separator `,`).
    pub indent: Option<usize>,
    /// `separators=(",", ":")` instead of the default (`", "` or `","` with an indent, and
    /// `": "`).
    pub compact: bool,
    /// With `ensure_ascii` off, fail on a lone surrogate as writing Python's output as UTF-8 does
    /// (`UnicodeEncodeError`); otherwise it is escaped as `\udXXX` (Python's output would hold
    /// the raw surrogate, which a Rust string cannot).
    pub surrogates_error: bool,
    /// Containers may nest at most this deep, as in CPython's C encoder (`RecursionError`); see
    /// `JSON_DUMP_MAX_DEPTH_CLI`. (With an indent Python uses its pure-Python encoder, whose
    /// limit differs by a level or two; that is not modelled.)
    pub max_depth: Option<usize>,
}

impl Default for DumpOptions {
    /// Python's defaults: `json.dumps(v)`.
    fn default() -> DumpOptions {
        DumpOptions {
            ensure_ascii: true,
            allow_nan: true,
            indent: None,
            compact: false,
            surrogates_error: false,
            max_depth: None,
        }
    }
}

impl DumpOptions {
    /// What the command line prints with: `json.dumps(v, ensure_ascii=False, allow_nan=False,
    /// separators=(",", ":"))`, a lone surrogate written as its `\udXXX` escape (Python's own
    /// text holds the raw surrogate, which no UTF-8 output can carry; the escape is what
    /// `ensure_ascii` would write for it, and never a reason to fail).
    pub fn reference_cli() -> DumpOptions {
        DumpOptions {
            ensure_ascii: false,
            allow_nan: false,
            indent: None,
            compact: true,
            surrogates_error: false,
            max_depth: Some(JSON_DUMP_MAX_DEPTH_CLI),
        }
    }
}

/// How deep containers may nest (the printed object included) when the command-line script
/// dumps a message or event line: `json.dumps` called from a helper of the script's `main`
/// (measured with the C encoder: 997 minus the Python stack cost, as for decoding).
pub(crate) const JSON_DUMP_MAX_DEPTH_CLI: usize = 993;

/// Which Python exception `json.dumps` (or writing its result) raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpErrorKind {
    /// `ValueError`: NaN or an infinity with `allow_nan=False`.
    OutOfRangeFloat,
    /// `ValueError`: an integer of more than 4300 digits.
    IntTooLong,
    /// `UnicodeEncodeError`: a lone surrogate in text written as UTF-8.
    Surrogate,
    /// `RecursionError`: containers nested deeper than allowed.
    Recursion,
}

/// An error from [`json_dumps`], with Python's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpError {
    /// The Python exception class.
    pub kind: DumpErrorKind,
    /// Python's exception message.
    pub message: String,
}

impl DumpError {
    /// The Python class name of the error.
    pub fn python_class(&self) -> &'static str {
        match self.kind {
            DumpErrorKind::OutOfRangeFloat | DumpErrorKind::IntTooLong => "ValueError",
            DumpErrorKind::Surrogate => "UnicodeEncodeError",
            DumpErrorKind::Recursion => "RecursionError",
        }
    }
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DumpError {}

/// Python's `json.dumps(v, ...)` with the given options.
pub fn json_dumps(v: &Value, opts: &DumpOptions) -> Result<String, DumpError> {
    let mut enc = Encoder {
        // Sized once for the whole output: a long text grown by doubling would hold its old
        // and new buffers at once, several times over.
        out: String::with_capacity(size_hint(v, opts.indent.unwrap_or(0))),
        opts,
        item_sep: match (opts.compact, opts.indent) {
            (true, _) | (false, Some(_)) => ",",
            (false, None) => ", ",
        },
        key_sep: if opts.compact { ":" } else { ": " },
        escape: match (opts.ensure_ascii, opts.surrogates_error) {
            (true, _) => Escape::NonAscii,
            (false, false) => Escape::Surrogates,
            (false, true) => Escape::Nothing,
        },
    };
    enc.value(v, 0)?;
    if opts.surrogates_error && !opts.ensure_ascii {
        check_no_surrogates(&enc.out)?;
    }
    Ok(enc.out)
}

/// Python's `json.dumps(s)` of one string (`ensure_ascii=True`).
pub fn json_dumps_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s, Escape::NonAscii);
    out
}

/// Appends `s` as Python's `json.dumps` writes a string, with `ensure_ascii` or without it
/// (then only lone-surrogate stand-ins are escaped, as `\udXXX`).
pub fn json_write_str(out: &mut String, s: &str, ensure_ascii: bool) {
    let escape = if ensure_ascii {
        Escape::NonAscii
    } else {
        Escape::Surrogates
    };
    write_string(out, s, escape);
}

struct Encoder<'a> {
    out: String,
    opts: &'a DumpOptions,
    item_sep: &'static str,
    key_sep: &'static str,
    escape: Escape,
}

impl Encoder<'_> {
    /// Writes `v`, which sits inside `depth` containers.
    fn value(&mut self, v: &Value, depth: usize) -> Result<(), DumpError> {
        match v {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                // Writing to a String cannot fail.
                let _ = write!(self.out, "{i}");
            }
            Value::BigInt(b) => {
                let text = b.to_string();
                if text.trim_start_matches('-').len() > INT_MAX_STR_DIGITS {
                    return Err(DumpError {
                        kind: DumpErrorKind::IntTooLong,
                        message: format!(
                            "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string \
                             conversion; use sys.set_int_max_str_digits() to increase the limit"
                        ),
                    });
                }
                self.out.push_str(&text);
            }
            Value::Float(f) => self.float(*f)?,
            Value::Str(s) => write_string(&mut self.out, s, self.escape),
            Value::List(items) => {
                self.enter(depth)?;
                self.container(
                    b'[',
                    items.iter().map(|v| (None, v)),
                    items.is_empty(),
                    depth,
                )?;
            }
            Value::Dict(d) => {
                self.enter(depth)?;
                let entries = d.iter().map(|(k, v)| (Some(k), v));
                self.container(b'{', entries, d.is_empty(), depth)?;
            }
        }
        Ok(())
    }

    fn enter(&self, depth: usize) -> Result<(), DumpError> {
        match self.opts.max_depth {
            Some(max) if depth >= max => Err(DumpError {
                kind: DumpErrorKind::Recursion,
                message: "maximum recursion depth exceeded while encoding a JSON object".into(),
            }),
            _ => Ok(()),
        }
    }

    fn float(&mut self, f: f64) -> Result<(), DumpError> {
        if f.is_finite() {
            self.out.push_str(&float_repr(f));
            return Ok(());
        }
        if !self.opts.allow_nan {
            let mut message = "Out of range float values are not JSON compliant".to_string();
            if self.opts.indent.is_some() {
                // The pure-Python encoder (used with an indent) names the value.
                message = format!("{message}: {}", float_repr(f));
            }
            return Err(DumpError {
                kind: DumpErrorKind::OutOfRangeFloat,
                message,
            });
        }
        self.out.push_str(if f.is_nan() {
            "NaN"
        } else if f > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        });
        Ok(())
    }

    fn container<'v>(
        &mut self,
        open: u8,
        entries: impl Iterator<Item = (Option<&'v str>, &'v Value)>,
        empty: bool,
        depth: usize,
    ) -> Result<(), DumpError> {
        let close = if open == b'[' { ']' } else { '}' };
        self.out.push(open as char);
        if empty {
            self.out.push(close);
            return Ok(());
        }
        for (i, (key, v)) in entries.enumerate() {
            if i > 0 {
                self.out.push_str(self.item_sep);
            }
            self.newline(depth + 1);
            if let Some(k) = key {
                write_string(&mut self.out, k, self.escape);
                self.out.push_str(self.key_sep);
            }
            self.value(v, depth + 1)?;
        }
        self.newline(depth);
        self.out.push(close);
        Ok(())
    }

    fn newline(&mut self, level: usize) {
        if let Some(indent) = self.opts.indent {
            self.out.push('\n');
            self.out.extend(std::iter::repeat_n(' ', indent * level));
        }
    }
}

/// Which characters other than `"`, `\` and control characters a string literal escapes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    /// `ensure_ascii`: everything outside printable ASCII.
    NonAscii,
    /// Lone-surrogate stand-ins only.
    Surrogates,
    /// Nothing (stand-ins stay, for the UTF-8 check to find).
    Nothing,
}

/// Writes `s` as a JSON string literal the way Python's encoder does.
/// The UTF-8 lead byte of the stand-ins for lone surrogates (U+10F800..=U+10FFFF).
const STAND_IN_LEAD: u8 = 0xF4;

/// Whether a byte may start something that needs escaping, per escape mode: ASCII control
/// characters, `"` and `\\` always; with `NonAscii` every non-ASCII character; with
/// `Surrogates` the stand-ins' lead byte (the character itself is then checked).
const fn attention_table(escape: Escape) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = b < 0x20
            || b == b'"' as usize
            || b == b'\\' as usize
            || match escape {
                Escape::NonAscii => b >= 0x7F,
                Escape::Surrogates => b == STAND_IN_LEAD as usize,
                Escape::Nothing => false,
            };
        b += 1;
    }
    t
}

static ATTENTION: [[bool; 256]; 3] = [
    attention_table(Escape::NonAscii),
    attention_table(Escape::Surrogates),
    attention_table(Escape::Nothing),
];

/// Whether any of the eight bytes in `w` may need escaping: a control character, `"` or `\\`,
/// or (unless nothing else is escaped) a non-ASCII byte. Bit tricks from "Bit Twiddling Hacks".
fn word_needs_attention(w: u64, escape: Escape) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let special = below_space
        | has_zero(w ^ (ONES * u64::from(b'"')))
        | has_zero(w ^ (ONES * u64::from(b'\\')));
    match escape {
        Escape::Nothing => special != 0,
        // 0x7F (escaped with ensure_ascii) and every non-ASCII byte go the slow way.
        Escape::NonAscii | Escape::Surrogates => {
            special != 0 || w & HIGH != 0 || has_zero(w ^ (ONES * 0x7F)) != 0
        }
    }
}

/// About how long the encoding of `v` is: its texts with an eighth for escapes, and a few
/// bytes per value for quotes, separators and (`indent` per level) indentation. An estimate:
/// what it misses grows the output as usual. It looks no deeper than [`HINT_DEPTH`] levels, so
/// that a value nested too deep to encode (the encoder reports that) cannot exhaust the stack
/// here first.
fn size_hint(v: &Value, indent: usize) -> usize {
    fn walk(v: &Value, indent: usize, depth: usize) -> usize {
        if depth > HINT_DEPTH {
            return 0;
        }
        let own = 4 + indent * depth;
        // An indented container's closing bracket has a line of its own.
        let close = match v {
            Value::List(items) if !items.is_empty() => indent * depth + 2,
            Value::Dict(d) if !d.is_empty() => indent * depth + 2,
            _ => 0,
        };
        own + close
            + match v {
                Value::Str(s) => s.len() + s.len() / 8,
                Value::List(items) => items.iter().map(|i| walk(i, indent, depth + 1)).sum(),
                Value::Dict(d) => d
                    .iter()
                    .map(|(k, v)| k.len() + k.len() / 8 + 4 + walk(v, indent, depth + 1))
                    .sum(),
                _ => 8,
            }
    }
    walk(v, indent, 0)
}

/// How deep [`size_hint`] looks.
const HINT_DEPTH: usize = 64;

fn write_string(out: &mut String, s: &str, escape: Escape) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let table = &ATTENTION[escape as usize];
    let mut plain_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Skip eight plain bytes at a time (most text needs no escaping).
        if let Some(word) = bytes.get(i..i + 8)
            && !word_needs_attention(
                u64::from_le_bytes(word.try_into().unwrap_or([0; 8])),
                escape,
            )
        {
            i += 8;
            continue;
        }
        if !table[usize::from(bytes[i])] {
            i += 1;
            continue;
        }
        // `i` is a char boundary: only ASCII bytes and lead bytes need attention.
        let c = s[i..].chars().next().unwrap_or('\0');
        let plain = match c {
            '"' | '\\' => false,
            c if (c as u32) < 0x20 => false,
            c => match escape {
                Escape::NonAscii => false,
                Escape::Surrogates => surrogate_of(c).is_none(),
                Escape::Nothing => true,
            },
        };
        if !plain {
            out.push_str(&s[plain_from..i]);
            push_escape(out, c);
            plain_from = i + c.len_utf8();
        }
        i += c.len_utf8();
    }
    out.push_str(&s[plain_from..]);
    out.push('"');
}

fn push_escape(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\x08' => out.push_str("\\b"),
        '\x0c' => out.push_str("\\f"),
        c if (c as u32) < 0x20 => push_u_escape(out, c as u32),
        c => {
            if let Some(s) = surrogate_of(c) {
                push_u_escape(out, u32::from(s));
            } else {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_u_escape(out, u32::from(*unit));
                }
            }
        }
    }
}

fn push_u_escape(out: &mut String, unit: u32) {
    // Writing to a String cannot fail.
    let _ = write!(out, "\\u{unit:04x}");
}

/// Writing Python's output (a `str` that may hold lone surrogates) as UTF-8 fails at the first
/// run of surrogates; Python's message names one character or the run's positions.
fn check_no_surrogates(out: &str) -> Result<(), DumpError> {
    // Stand-ins are the only characters with this UTF-8 lead byte and second byte.
    let has_stand_in = memchr::memchr_iter(STAND_IN_LEAD, out.as_bytes()).any(|i| {
        out.as_bytes().get(i + 1).is_some_and(|&b| b >= 0x8F)
            && out[i..].chars().next().and_then(surrogate_of).is_some()
    });
    if !has_stand_in {
        return Ok(());
    }
    let mut chars = out
        .chars()
        .enumerate()
        .skip_while(|(_, c)| surrogate_of(*c).is_none());
    let Some((start, first)) = chars.next() else {
        return Ok(());
    };
    let run = 1 + chars
        .take_while(|(_, c)| surrogate_of(*c).is_some())
        .count();
    let message = if run == 1 {
        let s = surrogate_of(first).unwrap_or(0xD800);
        format!(
            "'utf-8' codec can't encode character '\\u{s:04x}' in position {start}: \
             surrogates not allowed"
        )
    } else {
        format!(
            "'utf-8' codec can't encode characters in position {start}-{}: surrogates not allowed",
            start + run - 1
        )
    };
    Err(DumpError {
        kind: DumpErrorKind::Surrogate,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::py::json_loads;
    use crate::value::surrogate_char;

    fn dumps(src: &str, opts: &DumpOptions) -> String {
        json_dumps(&json_loads(src).unwrap(), opts).unwrap()
    }

    #[test]
    fn default_separators_and_numbers() {
        let opts = DumpOptions::default();
        assert_eq!(
            dumps(
                r#"{"a": [1, 2.5, null, true, false, 1e16, 1e-5, -0.0]}"#,
                &opts
            ),
            r#"{"a": [1, 2.5, null, true, false, 1e+16, 1e-05, -0.0]}"#
        );
        assert_eq!(
            dumps("[NaN, Infinity, -Infinity]", &opts),
            "[NaN, Infinity, -Infinity]"
        );
        let compact = DumpOptions {
            compact: true,
            ..DumpOptions::default()
        };
        assert_eq!(dumps(r#"{"a": [1, {}]}"#, &compact), r#"{"a":[1,{}]}"#);
    }

    #[test]
    fn indent_layout() {
        let opts = DumpOptions {
            indent: Some(2),
            ..DumpOptions::default()
        };
        let want =
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    },\n    {}\n  ],\n  \"c\": {}\n}";
        assert_eq!(dumps(r#"{"a":[1,{"b":[]},{}],"c":{}}"#, &opts), want);
        let zero = DumpOptions {
            indent: Some(0),
            ..DumpOptions::default()
        };
        assert_eq!(dumps("[1,[2]]", &zero), "[\n1,\n[\n2\n]\n]");
    }

    #[test]
    fn string_escapes() {
        let s = format!(
            "\x7f\x00\x1fé😀{}\"\\/\x08\x0c\n\r\t",
            surrogate_char(0xD800)
        );
        assert_eq!(
            json_dumps_str(&s),
            r#""\u007f\u0000\u001f\u00e9\ud83d\ude00\ud800\"\\/\b\f\n\r\t""#
        );
        let raw = DumpOptions {
            ensure_ascii: false,
            ..DumpOptions::default()
        };
        let out = json_dumps(&Value::Str(s.clone()), &raw).unwrap();
        assert_eq!(
            out,
            r#""\u0000\u001fé😀\ud800\"\\/\b\f\n\r\t""#.replace(r"\x7f", "\x7f")
        );
        // Kept raw for the UTF-8 check when the failure is to be mirrored.
        let cli = DumpOptions {
            surrogates_error: true,
            ..raw
        };
        assert_eq!(
            json_dumps(&Value::Str(s), &cli).unwrap_err().kind,
            DumpErrorKind::Surrogate
        );
    }

    #[test]
    fn errors() {
        let cli = DumpOptions::reference_cli();
        let nan = json_dumps(&Value::Float(f64::NAN), &cli).unwrap_err();
        assert_eq!(
            nan.message,
            "Out of range float values are not JSON compliant"
        );
        let lone = Value::List(vec![Value::Str(format!("ab{}", surrogate_char(0xD800)))]);
        // The command line writes the escape Python's own UTF-8 output cannot hold ...
        assert_eq!(json_dumps(&lone, &cli).unwrap(), r#"["ab\ud800"]"#);
        // ... where writing Python's text as UTF-8 fails.
        let utf8 = DumpOptions {
            surrogates_error: true,
            ..cli.clone()
        };
        let err = json_dumps(&lone, &utf8).unwrap_err();
        assert_eq!(err.kind, DumpErrorKind::Surrogate);
        assert_eq!(
            err.message,
            "'utf-8' codec can't encode character '\\ud800' in position 4: surrogates not allowed"
        );
        let deep = json_loads("[[[]]]").unwrap();
        let shallow = DumpOptions {
            max_depth: Some(2),
            ..DumpOptions::default()
        };
        assert_eq!(
            json_dumps(&deep, &shallow).unwrap_err().kind,
            DumpErrorKind::Recursion
        );
    }
}
