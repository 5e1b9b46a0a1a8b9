//! Replays the reference's verdicts on `python-call-list` inputs (`tests/data/pcl/cases.json`,
//! written by `tools/pcl/gen_cases.py`) against the Rust parser: the same value, with ints and
//! floats told apart and key order significant, or an error with the same message.
//!
//! The case file is ASCII JSON whose strings may hold lone-surrogate escapes, which common JSON
//! readers reject; the small reader below turns them into the value type's stand-ins.

use rtbench::engine::content::python_call_list::parse_python_call_list;
use rtbench::engine::value::{Dict, Value, surrogate_char};

const CASES: &str = include_str!("data/pcl/cases.json");

/// Replays `tests/data/pcl/cases.json`, or the case file named by `PCL_CASES` (for larger runs
/// of the generator with other seeds).
#[test]
fn reference_cases() {
    let file = match std::env::var("PCL_CASES") {
        Ok(path) => Reader::parse(&std::fs::read_to_string(&path).expect("PCL_CASES is readable")),
        Err(_) => Reader::parse(CASES),
    };
    let header = file.as_dict().expect("the case file is an object");
    let cases = header["cases"].as_list().expect("cases is a list");
    let count = |key: &str| match &header[key] {
        Value::Int(n) => *n as usize,
        other => panic!("{key}: {other:?}"),
    };
    assert_eq!(cases.len(), count("hand_written") + count("random"));

    let mut failures = Vec::new();
    let (mut values, mut errors) = (0, 0);
    for case in cases {
        let case = case.as_dict().expect("a case is an object");
        let name = case["name"].as_str().expect("name");
        let text = match (case.get("text"), case.get("code_points")) {
            (Some(Value::Str(text)), None) => text.clone(),
            (None, Some(Value::List(code_points))) => code_points.iter().map(code_point).collect(),
            _ => panic!("{name}: a case has either text or code_points"),
        };
        let text = text.as_str();
        let expect = case["expect"].as_dict().expect("expect");
        let got = parse_python_call_list(text);
        let verdict = match (expect.get("value"), expect.get("error"), &got) {
            (Some(want), None, Ok(value)) if same(want, value) => Ok(()),
            (None, Some(Value::Str(want)), Err(e)) if *want == e.to_string() => Ok(()),
            _ => Err(format!(
                "{name}: text {:?}\n  expected {expect:?}\n  got      {got:?} ({})",
                short(text),
                got.as_ref().map_or_else(|e| e.to_string(), |_| "ok".into()),
            )),
        };
        match verdict {
            Ok(()) if got.is_ok() => values += 1,
            Ok(()) => errors += 1,
            Err(failure) => failures.push(failure),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the reference:\n{}",
        failures.len(),
        cases.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(errors, count("errors"));
    eprintln!(
        "{} cases agree with the reference ({values} values, {errors} errors)",
        cases.len()
    );
}

/// Same variant and same contents: ints and floats told apart, floats compared bit for bit,
/// dict keys in the same order.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::BigInt(x), Value::BigInt(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Dict(x), Value::Dict(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((k, v), (l, w))| k == l && same(v, w))
        }
        _ => false,
    }
}

/// One entry of a case's `code_points`: surrogates become the value type's stand-ins.
fn code_point(value: &Value) -> char {
    let Value::Int(cp) = *value else {
        panic!("code point {value:?}")
    };
    let cp = u32::try_from(cp).expect("code point");
    match char::from_u32(cp) {
        Some(c) => c,
        None => surrogate_char(u16::try_from(cp).expect("surrogate")),
    }
}

fn short(text: &str) -> String {
    if text.chars().count() <= 200 {
        return text.to_string();
    }
    let head: String = text.chars().take(200).collect();
    format!("{head}... ({} code points)", text.chars().count())
}

#[test]
fn reader_keeps_lone_surrogates_and_number_types() {
    let value =
        Reader::parse(r#"{"s": "\ud800x\ud83d\ude00\udc00", "i": -12, "f": 1.0, "e": 1e-05}"#);
    let dict = value.as_dict().unwrap();
    let expected = format!("{}x😀{}", surrogate_char(0xD800), surrogate_char(0xDC00));
    assert_eq!(dict["s"].as_str(), Some(expected.as_str()));
    assert!(same(&dict["i"], &Value::Int(-12)));
    assert!(same(&dict["f"], &Value::Float(1.0)));
    assert!(same(&dict["e"], &Value::Float(1e-5)));
}

/// A JSON reader for the case file, as written by Python's `json.dumps`: numbers with a `.` or
/// an exponent are floats, others ints; `\uXXXX` escapes pair surrogates where they can and
/// keep lone ones as stand-ins.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn parse(text: &str) -> Value {
        let mut reader = Reader {
            bytes: text.as_bytes(),
            pos: 0,
        };
        let value = reader.value();
        reader.skip_whitespace();
        assert_eq!(
            reader.pos,
            reader.bytes.len(),
            "trailing data in the case file"
        );
        value
    }

    fn skip_whitespace(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> bool {
        self.skip_whitespace();
        let found = self.bytes[self.pos..].starts_with(literal.as_bytes());
        if found {
            self.pos += literal.len();
        }
        found
    }

    fn value(&mut self) -> Value {
        self.skip_whitespace();
        let first = self.bytes[self.pos];
        match first {
            b'{' => {
                self.pos += 1;
                let mut dict = Dict::new();
                if !self.eat("}") {
                    loop {
                        self.skip_whitespace();
                        let Value::Str(key) = self.value() else {
                            panic!("non-string key at {}", self.pos)
                        };
                        assert!(self.eat(":"), "expected ':' at {}", self.pos);
                        let value = self.value();
                        dict.insert(key, value);
                        if self.eat("}") {
                            break;
                        }
                        assert!(self.eat(","), "expected ',' at {}", self.pos);
                    }
                }
                Value::Dict(dict)
            }
            b'[' => {
                self.pos += 1;
                let mut list = Vec::new();
                if !self.eat("]") {
                    loop {
                        list.push(self.value());
                        if self.eat("]") {
                            break;
                        }
                        assert!(self.eat(","), "expected ',' at {}", self.pos);
                    }
                }
                Value::List(list)
            }
            b'"' => Value::Str(self.string()),
            _ if self.eat("true") => Value::Bool(true),
            _ if self.eat("false") => Value::Bool(false),
            _ if self.eat("null") => Value::Null,
            _ => self.number(),
        }
    }

    fn number(&mut self) -> Value {
        let start = self.pos;
        while self.pos < self.bytes.len() && b"+-.eE0123456789".contains(&self.bytes[self.pos]) {
            self.pos += 1;
        }
        let literal = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap();
        if literal.contains(['.', 'e', 'E']) {
            Value::Float(
                literal
                    .parse()
                    .unwrap_or_else(|_| panic!("bad float {literal:?}")),
            )
        } else {
            Value::Int(
                literal
                    .parse()
                    .unwrap_or_else(|_| panic!("bad int {literal:?}")),
            )
        }
    }

    fn hex4(&mut self) -> u32 {
        let digits = std::str::from_utf8(&self.bytes[self.pos..self.pos + 4]).unwrap();
        self.pos += 4;
        u32::from_str_radix(digits, 16).unwrap()
    }

    fn string(&mut self) -> String {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while !matches!(self.bytes[self.pos], b'"' | b'\\') {
                self.pos += 1;
            }
            out.push_str(std::str::from_utf8(&self.bytes[start..self.pos]).unwrap());
            let b = self.bytes[self.pos];
            self.pos += 1;
            if b == b'"' {
                return out;
            }
            let escaped = self.bytes[self.pos];
            self.pos += 1;
            let c = match escaped {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let code = self.hex4();
                    let low_follows = self.bytes[self.pos..].starts_with(b"\\u");
                    if (0xD800..=0xDBFF).contains(&code) && low_follows {
                        let save = self.pos;
                        self.pos += 2;
                        let low = self.hex4();
                        if (0xDC00..=0xDFFF).contains(&low) {
                            let pair = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                            out.push(char::from_u32(pair).unwrap());
                            continue;
                        }
                        self.pos = save;
                    }
                    match char::from_u32(code) {
                        Some(c) => c,
                        None => surrogate_char(code as u16),
                    }
                }
                other => panic!("bad escape \\{}", other as char),
            };
            out.push(c);
        }
    }
}
