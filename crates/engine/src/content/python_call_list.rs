//! The `python-call-list` content parser: a strict grammar for lists of keyword-argument calls
//! such as `[get_weather(city="Paris", days=3), f()]`, parsed into
//! `[{"name": ..., "arguments": {...}}]`.
//!
//! This reproduces the reference's recursive-descent grammar rule for rule, including which
//! error is reported first and where:
//!
//! ```text
//! call-list := '[' ( call ( ',' call )* )? ']'          nothing but whitespace after the ']'
//! call      := name '(' ( argument ( ',' argument )* )? ')'
//! argument  := name '=' value                           keyword arguments only
//! value     := string | number | list | dict | True | False | None | true | false | null
//! list      := '[' ( value ( ',' value )* )? ']'
//! dict      := '{' ( string ':' value ( ',' string ':' value )* )? '}'
//! name      := [A-Za-z_][A-Za-z0-9_]* ( [-.] [A-Za-z0-9_]+ )*
//! number    := '-'? ( '0' | [1-9][0-9]* ) ( '.' [0-9]+ )? ( [eE] [+-]? [0-9]+ )?
//! string    := "'" ( [^'\\\n\r] | '\\' any )* "'"  |  '"' ( [^"\\\n\r] | '\\' any )* '"'
//! ```
//!
//! Whitespace (`[ \t\n\r]*`) may appear before every token. No trailing commas; repeated
//! keyword or dict keys are an error (reported after the closing bracket, once the whole
//! argument list or dict has parsed); integers must lie within ±(2^53 − 1) and be at most 17
//! characters long; floats must be finite; lists and dicts nest at most 100 levels deep.
//! String escapes are the JSON ones plus `\'`; `\uXXXX` pairs a high surrogate with a directly
//! following low-surrogate escape, and a lone surrogate (escaped or raw) is an error.
//!
//! Positions in errors count Unicode code points, as Python does. Raw lone surrogates in the
//! text are the stand-in characters of [`crate::value`]. The parser runs in linear time
//! and its recursion is bounded by the nesting limit.
//!
//! The grammar's character classes are ASCII, as the reference's patterns are (`[A-Za-z0-9_]`,
//! `[0-9]`, `[0-9a-fA-F]`, `[ \t\n\r]`), so no Unicode property is consulted while parsing. The
//! one place Unicode data matters is the Python `repr()` quoting a repeated name or an
//! unsupported escape in an error message: that is `py::py_repr_str`, on the tables generated
//! from the reference's interpreter.

use std::fmt;

use crate::py::py_repr_str;
use crate::value::{Dict, Key, Value, surrogate_of};

/// The deepest nesting of lists and dicts the reference accepts.
const MAX_DEPTH: usize = 100;

/// The largest integer magnitude the reference accepts (2^53 − 1).
const MAX_INTEGER: i64 = (1 << 53) - 1;

/// Integer literals longer than this (sign included) are out of range before any conversion.
const MAX_INTEGER_CHARS: usize = 17;

/// Parses `text` as the reference's `python-call-list` content: a `Value::List` of
/// `Value::Dict`s with the keys `name` (a string) and `arguments` (a dict), in that order.
pub(crate) fn parse_python_call_list(text: &str) -> Result<Value, CallListError> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    parser.call_list().map_err(|failure| CallListError {
        // Byte offsets always fall on character boundaries here.
        position: text[..failure.at].chars().count(),
        kind: failure.kind,
    })
}

/// A rejected call list: what the reference objects to, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CallListError {
    pub kind: CallListErrorKind,
    /// Offset in Unicode code points from the start of the text, as the reference reports it.
    pub position: usize,
}

/// The reasons the reference's grammar rejects a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CallListErrorKind {
    /// A required punctuation character (`[`, `(`, `,` or `:`) is missing.
    Expected(char),
    /// No function name where a call should start.
    ExpectedFunctionName,
    /// No keyword name where an argument should start (a positional argument or a trailing
    /// comma).
    ExpectedKeywordArgument,
    /// A keyword name not followed by `=`.
    ExpectedEquals,
    /// Nothing that starts a value.
    ExpectedValue,
    /// A dict key that is not a quoted string.
    DictKeyNotString,
    /// A keyword argument or dict key given twice (the key).
    RepeatedName(String),
    /// An opening quote without a closing one on the same line.
    InvalidString,
    /// A raw lone surrogate inside a string.
    LoneSurrogate,
    /// A backslash escape the grammar does not know (the backslash and the character after it).
    UnsupportedEscape(String),
    /// A `\uXXXX` escape that leaves a lone surrogate.
    LoneSurrogateEscape,
    /// A list or dict nested more than 100 levels deep.
    TooDeep,
    /// An integer beyond ±(2^53 − 1) or longer than 17 characters.
    IntegerOutOfRange,
    /// A float literal that overflows to infinity.
    NumberTooLarge,
    /// Something other than whitespace after the closing `]`.
    TrailingContent,
}

impl fmt::Display for CallListErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use CallListErrorKind::*;
        match self {
            Expected(c) => write!(f, "expected {}", py_repr_str(c.encode_utf8(&mut [0; 4]))),
            ExpectedFunctionName => f.write_str("expected a function name"),
            ExpectedKeywordArgument => f.write_str(
                "expected a keyword argument (positional arguments and trailing commas are not \
                 supported)",
            ),
            ExpectedEquals => f.write_str("expected '=' (positional arguments are not supported)"),
            ExpectedValue => {
                f.write_str("expected a string, number, list, dict, True, False or None")
            }
            DictKeyNotString => f.write_str("dict keys must be strings"),
            RepeatedName(key) => write!(f, "repeated name {}", py_repr_str(key)),
            InvalidString => f.write_str("invalid string"),
            LoneSurrogate => f.write_str("lone surrogate in the string starting"),
            UnsupportedEscape(escape) => {
                write!(
                    f,
                    "unsupported escape {} in the string starting",
                    py_repr_str(escape)
                )
            }
            LoneSurrogateEscape => f.write_str("lone surrogate escape in the string starting"),
            TooDeep => write!(
                f,
                "lists and dicts nested more than {MAX_DEPTH} levels deep"
            ),
            IntegerOutOfRange => {
                f.write_str("integer outside the range of -(2^53 - 1) to 2^53 - 1")
            }
            NumberTooLarge => f.write_str("number too large"),
            TrailingContent => f.write_str("unexpected content after the closing ']'"),
        }
    }
}

impl fmt::Display for CallListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "python-call-list: {} at position {}.",
            self.kind, self.position
        )
    }
}

impl std::error::Error for CallListError {}

/// A failure while parsing, at a byte offset (converted to code points once, at the end).
struct Failure {
    kind: CallListErrorKind,
    at: usize,
}

type Parsed<T> = Result<T, Failure>;

/// The recursive-descent parser; `pos` is a byte offset into `text` and always lies on a
/// character boundary.
struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn fail<T>(&self, kind: CallListErrorKind) -> Parsed<T> {
        self.fail_at(kind, self.pos)
    }

    fn fail_at<T>(&self, kind: CallListErrorKind, at: usize) -> Parsed<T> {
        Err(Failure { kind, at })
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.bytes.get(at).copied()
    }

    /// The whole text: `[` calls `]` and nothing else but whitespace.
    fn call_list(&mut self) -> Parsed<Value> {
        self.expect(b'[')?;
        let calls = self.items(b']', Self::call)?;
        self.skip_whitespace();
        if self.pos != self.bytes.len() {
            return self.fail(CallListErrorKind::TrailingContent);
        }
        Ok(Value::List(calls))
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.byte(self.pos) {
            self.pos += 1;
        }
    }

    /// Skips whitespace (for good) and tells whether `c` comes next.
    fn at(&mut self, c: u8) -> bool {
        self.skip_whitespace();
        self.byte(self.pos) == Some(c)
    }

    fn expect(&mut self, c: u8) -> Parsed<()> {
        if !self.at(c) {
            return self.fail(CallListErrorKind::Expected(char::from(c)));
        }
        self.pos += 1;
        Ok(())
    }

    /// A comma-separated sequence of `item` up to and including `close`, without a trailing
    /// comma.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Parsed<T>,
    ) -> Parsed<Vec<T>> {
        let mut out = Vec::new();
        if self.at(close) {
            self.pos += 1;
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.at(close) {
                self.pos += 1;
                return Ok(out);
            }
            self.expect(b',')?;
        }
    }

    /// Builds a dict from parsed pairs; a repeated key fails at the current position, just
    /// after the closing bracket.
    fn unique(&self, pairs: Vec<(Key, Value)>) -> Parsed<Dict> {
        let mut out = Dict::with_capacity(pairs.len());
        for (key, value) in pairs {
            if out.contains_key(&key) {
                return self.fail(CallListErrorKind::RepeatedName(key.into()));
            }
            out.insert(key, value);
        }
        Ok(out)
    }

    /// One call: `name(` keyword arguments `)`.
    fn call(&mut self) -> Parsed<Value> {
        let name = self.name(CallListErrorKind::ExpectedFunctionName)?;
        self.expect(b'(')?;
        let arguments = self.items(b')', Self::argument)?;
        let arguments = self.unique(arguments)?;
        let mut call = Dict::with_capacity(2);
        call.insert("name", Value::Str(name.to_string()));
        call.insert("arguments", Value::Dict(arguments));
        Ok(Value::Dict(call))
    }

    /// One keyword argument: `name=value`.
    fn argument(&mut self) -> Parsed<(Key, Value)> {
        let key = self.name(CallListErrorKind::ExpectedKeywordArgument)?;
        if !self.at(b'=') {
            return self.fail(CallListErrorKind::ExpectedEquals);
        }
        self.pos += 1;
        Ok((Key::from(key), self.value(0)?))
    }

    /// A name after optional whitespace, or `missing` when there is none.
    fn name(&mut self, missing: CallListErrorKind) -> Parsed<&'a str> {
        self.skip_whitespace();
        let Some(end) = self.match_name(self.pos) else {
            return self.fail(missing);
        };
        let text: &'a str = self.text;
        let name = &text[self.pos..end];
        self.pos = end;
        Ok(name)
    }

    /// The end of the name starting at `start`, if one does: an ASCII identifier, optionally
    /// continued by `-` or `.` and more identifier characters.
    fn match_name(&self, start: usize) -> Option<usize> {
        let word = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
        let first = self.byte(start)?;
        if !(first.is_ascii_alphabetic() || first == b'_') {
            return None;
        }
        let mut end = start + 1;
        loop {
            while word(self.byte(end)) {
                end += 1;
            }
            if matches!(self.byte(end), Some(b'-' | b'.')) && word(self.byte(end + 1)) {
                end += 2;
            } else {
                return Some(end);
            }
        }
    }

    /// One value; `depth` counts the lists and dicts that enclose it.
    fn value(&mut self, depth: usize) -> Parsed<Value> {
        if self.at(b'\'') || self.at(b'"') {
            return Ok(Value::Str(self.string()?));
        }
        if self.at(b'[') || self.at(b'{') {
            if depth >= MAX_DEPTH {
                return self.fail(CallListErrorKind::TooDeep);
            }
            self.pos += 1;
            if self.bytes[self.pos - 1] == b'[' {
                let items = self.items(b']', |p| p.value(depth + 1))?;
                return Ok(Value::List(items));
            }
            let pairs = self.items(b'}', |p| p.pair(depth + 1))?;
            return Ok(Value::Dict(self.unique(pairs)?));
        }
        if let Some(number) = self.match_number(self.pos) {
            return self.number(number);
        }
        if let Some(end) = self.match_name(self.pos) {
            let constant = match &self.text[self.pos..end] {
                "True" | "true" => Some(Value::Bool(true)),
                "False" | "false" => Some(Value::Bool(false)),
                "None" | "null" => Some(Value::Null),
                _ => None,
            };
            if let Some(constant) = constant {
                self.pos = end;
                return Ok(constant);
            }
        }
        self.fail(CallListErrorKind::ExpectedValue)
    }

    /// One dict entry: `string: value`.
    fn pair(&mut self, depth: usize) -> Parsed<(Key, Value)> {
        if !(self.at(b'\'') || self.at(b'"')) {
            return self.fail(CallListErrorKind::DictKeyNotString);
        }
        let key = Key::from(self.string()?);
        self.expect(b':')?;
        Ok((key, self.value(depth)?))
    }

    /// The number literal starting at `start`, if one does (the longest match of the number
    /// rule: a `.` or exponent without digits after it is left out).
    fn match_number(&self, start: usize) -> Option<NumberMatch> {
        let digit = |at: usize| self.byte(at).is_some_and(|b| b.is_ascii_digit());
        let mut end = start;
        if self.byte(end) == Some(b'-') {
            end += 1;
        }
        match self.byte(end) {
            Some(b'0') => end += 1,
            Some(b'1'..=b'9') => {
                end += 1;
                while digit(end) {
                    end += 1;
                }
            }
            _ => return None,
        }
        let mut is_integer = true;
        if self.byte(end) == Some(b'.') && digit(end + 1) {
            end += 2;
            while digit(end) {
                end += 1;
            }
            is_integer = false;
        }
        if let Some(b'e' | b'E') = self.byte(end) {
            let mut exponent = end + 1;
            if let Some(b'+' | b'-') = self.byte(exponent) {
                exponent += 1;
            }
            if digit(exponent) {
                end = exponent + 1;
                while digit(end) {
                    end += 1;
                }
                is_integer = false;
            }
        }
        Some(NumberMatch { end, is_integer })
    }

    /// Converts the matched number literal at the current position, checking the reference's
    /// limits.
    fn number(&mut self, number: NumberMatch) -> Parsed<Value> {
        let literal = &self.text[self.pos..number.end];
        let value = if number.is_integer {
            // The length check comes first, so that only short literals are converted.
            let n = (literal.len() <= MAX_INTEGER_CHARS)
                .then(|| literal.parse::<i64>().ok())
                .flatten()
                .filter(|n| n.abs() <= MAX_INTEGER);
            match n {
                Some(n) => Value::Int(n),
                None => return self.fail(CallListErrorKind::IntegerOutOfRange),
            }
        } else {
            // The literal is valid Rust float syntax, and Rust rounds correctly like Python.
            match literal.parse::<f64>() {
                Ok(f) if f.is_finite() => Value::Float(f),
                _ => return self.fail(CallListErrorKind::NumberTooLarge),
            }
        };
        self.pos = number.end;
        Ok(value)
    }

    /// The quoted string at the current position (which holds `'` or `"`), decoded.
    fn string(&mut self) -> Parsed<String> {
        let start = self.pos;
        let quote = self.bytes[start];
        let mut end = start + 1;
        let mut has_escape = false;
        loop {
            match self.byte(end) {
                Some(b) if b == quote => break,
                // A backslash takes any one character after it, a line break included. Only
                // the first byte of that character is skipped: the others are continuation
                // bytes, which are ordinary body bytes.
                Some(b'\\') if end + 1 < self.bytes.len() => {
                    has_escape = true;
                    end += 2;
                }
                None | Some(b'\\' | b'\n' | b'\r') => {
                    return self.fail(CallListErrorKind::InvalidString);
                }
                Some(_) => end += 1,
            }
        }
        let body = &self.text[start + 1..end];
        // Stand-ins for lone surrogates are U+10F800..=U+10FFFF, all encoded starting with 0xF4.
        if memchr::memchr(0xF4, body.as_bytes()).is_some()
            && body.chars().any(|c| surrogate_of(c).is_some())
        {
            return self.fail_at(CallListErrorKind::LoneSurrogate, start);
        }
        let decoded = if has_escape {
            decode_escapes(body).map_err(|kind| Failure { kind, at: start })?
        } else {
            body.to_string()
        };
        self.pos = end + 1;
        Ok(decoded)
    }
}

/// What [`Parser::match_number`] found.
struct NumberMatch {
    /// Byte offset just past the literal.
    end: usize,
    /// Neither a fraction nor an exponent.
    is_integer: bool,
}

/// Decodes the backslash escapes of a string body (whose every backslash is followed by a
/// character), failing on the first escape the grammar rejects.
fn decode_escapes(body: &str) -> Result<String, CallListErrorKind> {
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(backslash) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(&rest[..backslash]);
        let after = &rest[backslash + 1..];
        let Some(escaped) = after.chars().next() else {
            // Unreachable for bodies matched by the string rule; kept total.
            return Err(CallListErrorKind::UnsupportedEscape("\\".to_string()));
        };
        let simple = match escaped {
            '\\' | '\'' | '"' | '/' => Some(escaped),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            rest = &after[1..];
            continue;
        }
        let Some(mut code) = (escaped == 'u').then(|| hex4(&after[1..])).flatten() else {
            return Err(CallListErrorKind::UnsupportedEscape(format!("\\{escaped}")));
        };
        rest = &after[5..];
        if (0xD800..=0xDBFF).contains(&code)
            && let Some(low) = low_surrogate_escape(rest)
        {
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
            rest = &rest[6..];
        }
        match char::from_u32(code) {
            Some(c) => out.push(c),
            None => return Err(CallListErrorKind::LoneSurrogateEscape),
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// The value of four ASCII hex digits at the start of `s`.
fn hex4(s: &str) -> Option<u32> {
    let digits = s.as_bytes().get(..4)?;
    digits
        .iter()
        .try_fold(0u32, |acc, &b| Some(acc * 16 + char::from(b).to_digit(16)?))
}

/// The value of a `\uDC00`..`\uDFFF` escape at the start of `s`.
fn low_surrogate_escape(s: &str) -> Option<u32> {
    let rest = s.strip_prefix("\\u")?;
    hex4(rest).filter(|code| (0xDC00..=0xDFFF).contains(code))
}

#[cfg(test)]
mod tests {
    use super::CallListErrorKind::*;
    use super::*;

    fn ok(text: &str) -> Value {
        match parse_python_call_list(text) {
            Ok(value) => value,
            Err(e) => panic!("{text:?} failed: {e}"),
        }
    }

    fn err(text: &str) -> CallListError {
        match parse_python_call_list(text) {
            Ok(value) => panic!("{text:?} parsed as {value:?}"),
            Err(e) => e,
        }
    }

    fn err_at(text: &str, kind: CallListErrorKind, position: usize) {
        assert_eq!(err(text), CallListError { kind, position }, "{text:?}");
    }

    /// The single argument of the single call in `text`.
    fn arg(text: &str) -> Value {
        let value = ok(&format!("[f(a={text})]"));
        let call = value.as_list().unwrap()[0].as_dict().unwrap();
        call["arguments"].as_dict().unwrap()["a"].clone()
    }

    fn assert_arg(text: &str, expected: Value) {
        let got = arg(text);
        assert!(
            got.identical(&expected),
            "{text:?}: {got:?} != {expected:?}"
        );
    }

    fn s(text: &str) -> Value {
        Value::from(text)
    }

    #[test]
    fn call_list_shape() {
        let value = ok(r#"[get_weather(city="Paris", days=3), f()]"#);
        let calls = value.as_list().unwrap();
        assert_eq!(calls.len(), 2);
        let first = calls[0].as_dict().unwrap();
        assert_eq!(first.keys().collect::<Vec<_>>(), ["name", "arguments"]);
        assert!(first["name"].identical(&s("get_weather")));
        let args = first["arguments"].as_dict().unwrap();
        assert_eq!(args.keys().collect::<Vec<_>>(), ["city", "days"]);
        assert!(args["city"].identical(&s("Paris")));
        assert!(args["days"].identical(&Value::Int(3)));
        assert!(
            calls[1].as_dict().unwrap()["arguments"]
                .as_dict()
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn empty_list_and_whitespace() {
        assert!(ok("[]").identical(&Value::List(vec![])));
        assert!(ok(" \t\r\n[ \n]\r\n ").identical(&Value::List(vec![])));
        ok(" [ f ( a = 1 , b\t=\n2 ) , g ( ) ] ");
        // Only the four ASCII whitespace characters count.
        err_at("\u{b}[]", Expected('['), 0);
        err_at("[]\u{a0}", TrailingContent, 2);
        err_at("[f(a=\u{3000}1)]", ExpectedValue, 5);
    }

    #[test]
    fn outer_brackets() {
        err_at("", Expected('['), 0);
        err_at("   ", Expected('['), 3);
        err_at("f()", Expected('['), 0);
        err_at("[", ExpectedFunctionName, 1);
        err_at("[f()", Expected(','), 4);
        err_at("[f() ", Expected(','), 5);
        err_at("[] x", TrailingContent, 3);
        err_at("[][]", TrailingContent, 2);
        err_at("[f()] \n ]", TrailingContent, 8);
    }

    #[test]
    fn calls_and_commas() {
        err_at("[f(),]", ExpectedFunctionName, 5);
        err_at("[,]", ExpectedFunctionName, 1);
        err_at("[f() g()]", Expected(','), 5);
        err_at("[f]", Expected('('), 2);
        err_at("[f(a=1,)]", ExpectedKeywordArgument, 7);
        err_at("[f(,)]", ExpectedKeywordArgument, 3);
        err_at("[f(1)]", ExpectedKeywordArgument, 3);
        err_at("[f(\"a\"=1)]", ExpectedKeywordArgument, 3);
        err_at("[f(a)]", ExpectedEquals, 4);
        err_at("[f(a b=1)]", ExpectedEquals, 5);
        err_at("[f(a=1 b=2)]", Expected(','), 7);
        err_at("[f(a=)]", ExpectedValue, 5);
    }

    #[test]
    fn names() {
        let value = ok("[a.b-c_1.d2(x-y.z=1, _=2, True=3)]");
        let call = value.as_list().unwrap()[0].as_dict().unwrap();
        assert!(call["name"].identical(&s("a.b-c_1.d2")));
        let keys: Vec<_> = call["arguments"].as_dict().unwrap().keys().collect();
        assert_eq!(keys, ["x-y.z", "_", "True"]);
        err_at("[1f()]", ExpectedFunctionName, 1);
        err_at("[-f()]", ExpectedFunctionName, 1);
        err_at("[é()]", ExpectedFunctionName, 1);
        // A dash or dot needs an identifier character after it.
        err_at("[f.()]", Expected('('), 2);
        err_at("[f-.g()]", Expected('('), 2);
        err_at("[f..g()]", Expected('('), 2);
        ok("[f.1()]");
    }

    #[test]
    fn repeated_names_fail_after_the_closing_bracket() {
        err_at("[f(a=1, a=2)]", RepeatedName("a".into()), 12);
        err_at("[f(a=1, b=2, a=3 ) ]", RepeatedName("a".into()), 18);
        err_at(
            r#"[f(a={"k": 1, 'k': 2}, b)]"#,
            RepeatedName("k".into()),
            21,
        );
        // A later syntax error inside the same argument list wins.
        err_at("[f(a=1, a=2, b)]", ExpectedEquals, 14);
        // Repeated calls are fine.
        ok("[f(a=1), f(a=1)]");
        // Keys are compared after decoding.
        err_at(
            r#"[f(a={"\u0041": 1, "A": 2})]"#,
            RepeatedName("A".into()),
            26,
        );
    }

    #[test]
    fn constants() {
        assert_arg("True", Value::Bool(true));
        assert_arg("true", Value::Bool(true));
        assert_arg("False", Value::Bool(false));
        assert_arg("false", Value::Bool(false));
        assert_arg("None", Value::Null);
        assert_arg("null", Value::Null);
        err_at("[f(a=TRUE)]", ExpectedValue, 5);
        err_at("[f(a=Truex)]", ExpectedValue, 5);
        err_at("[f(a=True.x)]", ExpectedValue, 5);
        err_at("[f(a=NaN)]", ExpectedValue, 5);
        err_at("[f(a=Infinity)]", ExpectedValue, 5);
        err_at("[f(a=True.)]", Expected(','), 9);
    }

    #[test]
    fn integers() {
        assert_arg("0", Value::Int(0));
        assert_arg("-0", Value::Int(0));
        assert_arg("42", Value::Int(42));
        assert_arg("9007199254740991", Value::Int(MAX_INTEGER));
        assert_arg("-9007199254740991", Value::Int(-MAX_INTEGER));
        err_at("[f(a=9007199254740992)]", IntegerOutOfRange, 5);
        err_at("[f(a=-9007199254740992)]", IntegerOutOfRange, 5);
        err_at("[f(a=10000000000000000)]", IntegerOutOfRange, 5);
        err_at("[f(a=99999999999999999999999999999)]", IntegerOutOfRange, 5);
        err_at("[f(a=012)]", Expected(','), 6);
        err_at("[f(a=+1)]", ExpectedValue, 5);
        err_at("[f(a=-)]", ExpectedValue, 5);
        err_at("[f(a=- 1)]", ExpectedValue, 5);
        err_at("[f(a=1_000)]", Expected(','), 6);
        err_at("[f(a=\u{ff11})]", ExpectedValue, 5);
    }

    #[test]
    fn floats() {
        assert_arg("1.5", Value::Float(1.5));
        assert_arg("-0.0", Value::Float(-0.0));
        assert_arg("1e3", Value::Float(1000.0));
        assert_arg("1E+3", Value::Float(1000.0));
        assert_arg("25e-1", Value::Float(2.5));
        assert_arg("1e-400", Value::Float(0.0));
        assert_arg("0e999999999999999999999", Value::Float(0.0));
        assert_arg("0.1", Value::Float(0.1));
        assert_arg("1.7976931348623157e308", Value::Float(f64::MAX));
        // Floats are not subject to the integer limit.
        assert_arg("9007199254740993.0", Value::Float(9007199254740992.0));
        err_at("[f(a=1e309)]", NumberTooLarge, 5);
        err_at("[f(a=-1.8e308)]", NumberTooLarge, 5);
        err_at("[f(a=1e99999999999999999999)]", NumberTooLarge, 5);
        // A dot or exponent without digits is not part of the number.
        err_at("[f(a=1.)]", Expected(','), 6);
        err_at("[f(a=1.e5)]", Expected(','), 6);
        err_at("[f(a=1e)]", Expected(','), 6);
        err_at("[f(a=1e+)]", Expected(','), 6);
        err_at("[f(a=.5)]", ExpectedValue, 5);
    }

    #[test]
    fn strings_and_quotes() {
        assert_arg("'x'", s("x"));
        assert_arg("\"x\"", s("x"));
        assert_arg("''", s(""));
        assert_arg("'say \"hi\"'", s("say \"hi\""));
        assert_arg("\"it's\"", s("it's"));
        assert_arg("'héllo 中文 😀'", s("héllo 中文 😀"));
        assert_arg("'\u{0}\u{7f}\t'", s("\u{0}\u{7f}\t"));
        err_at("[f(a='x)]", InvalidString, 5);
        err_at("[f(a='x\ny')]", InvalidString, 5);
        err_at("[f(a='x\ry')]", InvalidString, 5);
        err_at("[f(a='x\\", InvalidString, 5);
        err_at("[f(a=\"x')]", InvalidString, 5);
    }

    #[test]
    fn escapes() {
        assert_arg(
            r#""\\ \' \" \/ \b \f \n \r \t""#,
            s("\\ ' \" / \u{8} \u{c} \n \r \t"),
        );
        assert_arg(r#"'\u0041\u00e9\u4e2d'"#, s("Aé中"));
        assert_arg(r#"'\u005c'"#, s("\\"));
        assert_arg(r#"'\u005cn'"#, s("\\n"));
        assert_arg(r#"'\u0000'"#, s("\u{0}"));
        assert_arg(r#"'\uD83D\uDE00'"#, s("😀"));
        assert_arg(r#"'\ud83d\ude00x'"#, s("😀x"));
        err_at(r#"[f(a='\x41')]"#, UnsupportedEscape("\\x".into()), 5);
        err_at(r#"[f(a='\U0001F600')]"#, UnsupportedEscape("\\U".into()), 5);
        err_at(r#"[f(a='\u12')]"#, UnsupportedEscape("\\u".into()), 5);
        err_at(r#"[f(a='\u12g4')]"#, UnsupportedEscape("\\u".into()), 5);
        err_at(r#"[f(a='\é')]"#, UnsupportedEscape("\\é".into()), 5);
        err_at("[f(a='\\\n')]", UnsupportedEscape("\\\n".into()), 5);
        err_at(r#"[f(a='\0')]"#, UnsupportedEscape("\\0".into()), 5);
        // The first bad escape is the one reported.
        err_at(r#"[f(a='\ud800 \q')]"#, LoneSurrogateEscape, 5);
        err_at(r#"[f(a='\q \ud800')]"#, UnsupportedEscape("\\q".into()), 5);
    }

    #[test]
    fn surrogates() {
        let raw = |s: u16| crate::value::surrogate_char(s);
        err_at(r#"[f(a='\ud800')]"#, LoneSurrogateEscape, 5);
        err_at(r#"[f(a='\udc00')]"#, LoneSurrogateEscape, 5);
        err_at(r#"[f(a='\ud800x')]"#, LoneSurrogateEscape, 5);
        err_at(r#"[f(a='\ud800\u0041')]"#, LoneSurrogateEscape, 5);
        err_at(r#"[f(a='\ud800\ud800')]"#, LoneSurrogateEscape, 5);
        err_at(r#"[f(a='\udc00\ud800')]"#, LoneSurrogateEscape, 5);
        // A low surrogate after a complete pair is lone.
        err_at(r#"[f(a='\ud83d\ude00\ude00')]"#, LoneSurrogateEscape, 5);
        // Raw lone surrogates fail before any escape is looked at.
        err_at(&format!("[f(a='\\q{}')]", raw(0xD800)), LoneSurrogate, 5);
        err_at(&format!("[f(a=' {}')]", raw(0xDFFF)), LoneSurrogate, 5);
        // Outside strings they are just unexpected characters.
        err_at(&format!("[f(a={})]", raw(0xD800)), ExpectedValue, 5);
    }

    #[test]
    fn lists_and_dicts() {
        assert_arg("[]", Value::List(vec![]));
        assert_arg("{}", Value::Dict(Dict::new()));
        assert_arg(
            "[1, 'a', [None], {'k': 2.0}]",
            Value::List(vec![
                Value::Int(1),
                s("a"),
                Value::List(vec![Value::Null]),
                Value::Dict(Dict::from_iter([("k".to_string(), Value::Float(2.0))])),
            ]),
        );
        err_at("[f(a=[1,])]", ExpectedValue, 8);
        err_at("[f(a=[1 2])]", Expected(','), 8);
        err_at("[f(a=[1)]", Expected(','), 7);
        err_at("[f(a={1: 2})]", DictKeyNotString, 6);
        err_at("[f(a={k: 2})]", DictKeyNotString, 6);
        err_at("[f(a={'k' 2})]", Expected(':'), 10);
        err_at("[f(a={'k': 2,})]", DictKeyNotString, 13);
        err_at("[f(a={'k'})]", Expected(':'), 9);
    }

    #[test]
    fn nesting_limit() {
        let nested = |n: usize| format!("[f(a={}{})]", "[".repeat(n), "]".repeat(n));
        ok(&nested(99));
        ok(&nested(100));
        err_at(&nested(101), TooDeep, 5 + 100);
        let dicts = |n: usize| format!("[f(a={}1{})]", "{'k':".repeat(n), "}".repeat(n));
        ok(&dicts(100));
        err_at(&dicts(101), TooDeep, 5 + 100 * 5);
        // A long run of brackets stops at the limit without deep recursion.
        err_at(&nested(1_000_000), TooDeep, 105);
    }

    #[test]
    fn positions_count_code_points() {
        err_at("[f(a='é中😀', b)]", ExpectedEquals, 13);
        err_at("[f(a='😀😀😀'), 😀]", ExpectedFunctionName, 13);
    }

    #[test]
    fn messages_follow_the_reference() {
        let message = |text: &str| err(text).to_string();
        assert_eq!(
            message("[f]"),
            "python-call-list: expected '(' at position 2."
        );
        assert_eq!(
            message("[f(a=1, a=2)]"),
            "python-call-list: repeated name 'a' at position 12."
        );
        assert_eq!(
            message(r#"[f(a='\x')]"#),
            r"python-call-list: unsupported escape '\\x' in the string starting at position 5."
        );
        assert_eq!(
            message("[f(a='\\\n')]"),
            r"python-call-list: unsupported escape '\\\n' in the string starting at position 5."
        );
        // Quoted values are Python `repr()`s, escaping what `str.isprintable()` (Unicode 14)
        // rejects: unassigned code points included, combining marks not.
        assert_eq!(
            message("[f(a={'\u{378}': 1, '\u{378}': 2})]"),
            r"python-call-list: repeated name '\u0378' at position 21."
        );
        assert_eq!(
            message("[f(a={\"'\u{200b}\u{e000}\u{301}\": 1, \"'\u{200b}\u{e000}\u{301}\": 2})]"),
            "python-call-list: repeated name \"'\\u200b\\ue000\u{301}\" at position 27."
        );
        assert_eq!(
            message("[f(a='\\\u{1e030}')]"),
            r"python-call-list: unsupported escape '\\\U0001e030' in the string starting at position 5."
        );
    }

    #[test]
    fn large_inputs_parse_in_linear_time() {
        let call = r#"get_weather(city="Par\"is\u00e9", days=[1, 2.5, {"k": null}]), "#;
        let mut text = String::from("[");
        while text.len() < 4_000_000 {
            text.push_str(call);
        }
        text.push_str("f()]");
        let start = std::time::Instant::now();
        let value = ok(&text);
        assert!(value.as_list().unwrap().len() > 50_000);
        let long_string = format!("[f(a='{}')]", "x\\n".repeat(2_000_000));
        ok(&long_string);
        let long_number = format!("[f(a=1.{}e5)]", "0".repeat(3_000_000));
        assert_arg(&long_number[5..long_number.len() - 2], Value::Float(1e5));
        let long_integer = format!("[f(a={})]", "9".repeat(3_000_000));
        err_at(&long_integer, IntegerOutOfRange, 5);
        let many_keys: String = (0..200_000).map(|i| format!("k{i}=1,")).collect();
        let repeated = format!("[f({many_keys}k7=0)]");
        err_at(&repeated, RepeatedName("k7".into()), repeated.len() - 1);
        assert!(start.elapsed().as_secs() < 60, "took {:?}", start.elapsed());
    }
}
