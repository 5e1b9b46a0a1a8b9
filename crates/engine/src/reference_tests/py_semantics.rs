//! Differential tests: the Python value semantics of `crate::py` against CPython 3.11.7.
//!
//! The cases in `crates/engine/tests/data/py/` were produced by running the reference interpreter
//! (`tools/py/gen_cases.py`, `tools/py/measure_depths.py`); see the generator for the encodings.
//! Every case must match exactly: values structurally (floats by their bits), errors by Python
//! class and message.

use crate::py::{
    self, DumpOptions, JSON_DUMP_MAX_DEPTH_CLI, JSON_MAX_DEPTH_PARSE, JSON_MAX_DEPTH_STREAM,
    JSON_MAX_DEPTH_TEMPLATE_FILE, PathSeg, json_dumps, json_loads, json_loads_depth,
    json_loads_with_spans, json_max_depth, string_offset_to_source,
};
use crate::value::{Value, surrogate_char, surrogate_of};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::RngSeed;
use std::fmt::Write;

// ------------------------------------------------------------------------------- data helpers

fn load(name: &str) -> Value {
    let path = format!("{}/py/{name}", super::DATA);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    json_loads_depth(&text, 100).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn field<'a>(v: &'a Value, key: &str) -> &'a Value {
    &v.as_dict().expect("object")[key]
}

fn list(v: &Value) -> &[Value] {
    v.as_list().expect("array")
}

fn text(v: &Value) -> &str {
    v.as_str().expect("string")
}

fn int(v: &Value) -> usize {
    match v {
        Value::Int(i) => usize::try_from(*i).expect("non-negative"),
        other => panic!("not an int: {other:?}"),
    }
}

/// UTF-8 bytes with lone-surrogate stand-ins written as surrogates (Python's `surrogatepass`).
fn enc(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match surrogate_of(c) {
            Some(u) => out.extend([
                0xE0 | (u >> 12) as u8,
                0x80 | ((u >> 6) & 0x3F) as u8,
                0x80 | (u & 0x3F) as u8,
            ]),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// The inverse of [`enc`].
fn dec(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut plain = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0xED
            && bytes.get(i + 1).is_some_and(|b| (0xA0..=0xBF).contains(b))
            && i + 2 < bytes.len()
        {
            out.push_str(std::str::from_utf8(&bytes[plain..i]).expect("utf-8"));
            let u = (u16::from(bytes[i] & 0x0F) << 12)
                | (u16::from(bytes[i + 1] & 0x3F) << 6)
                | u16::from(bytes[i + 2] & 0x3F);
            out.push(surrogate_char(u));
            i += 3;
            plain = i;
        } else {
            i += 1;
        }
    }
    out.push_str(std::str::from_utf8(&bytes[plain..]).expect("utf-8"));
    out
}

fn unhex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).expect("hex"))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn fnv(bytes: &[u8]) -> String {
    let h = bytes.iter().fold(0xCBF2_9CE4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01B3)
    });
    format!("{h:016x}")
}

/// An input: hex text or `[hex, count]` segments.
fn input(v: &Value) -> String {
    match v {
        Value::Str(h) => dec(&unhex(h)),
        Value::List(segments) => segments
            .iter()
            .map(|seg| {
                let seg = list(seg);
                dec(&unhex(text(&seg[0]))).repeat(int(&seg[1]))
            })
            .collect(),
        other => panic!("bad input {other:?}"),
    }
}

/// Whether an ASCII result matches its stored form (itself, or `#` and its hash).
fn short_matches(expected: &str, actual: &str) -> bool {
    match expected.strip_prefix('#') {
        Some(h) => fnv(actual.as_bytes()) == h,
        None => expected == actual,
    }
}

/// Whether a text result matches its stored form (hex, or `#` and its hash).
fn txt_matches(expected: &str, actual: &str) -> bool {
    let bytes = enc(actual);
    match expected.strip_prefix('#') {
        Some(h) => fnv(&bytes) == h,
        None => hex(&bytes) == expected,
    }
}

fn show(expected: &str) -> String {
    if expected.starts_with('#') {
        expected.to_string()
    } else {
        dec(&unhex(expected))
    }
}

/// The generator's canonical form of a value.
fn canon(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Value::Int(i) => {
            let _ = write!(out, "i{i};");
        }
        Value::BigInt(b) => {
            let _ = write!(out, "i{b};");
        }
        Value::Float(f) => {
            let _ = write!(out, "d{:016x};", f.to_bits());
        }
        Value::Str(s) => {
            let _ = write!(out, "s{};", hex(&enc(s)));
        }
        Value::List(items) => {
            out.push('[');
            items.iter().for_each(|x| canon(x, out));
            out.push(']');
        }
        Value::Dict(d) => {
            out.push('{');
            for (k, x) in d {
                let _ = write!(out, "s{};", hex(&enc(k)));
                canon(x, out);
            }
            out.push('}');
        }
    }
}

fn canonical(v: &Value) -> String {
    let mut s = String::new();
    canon(v, &mut s);
    s
}

/// Collects failures and reports them all at once.
struct Report {
    name: &'static str,
    checked: usize,
    failures: Vec<String>,
}

impl Report {
    fn new(name: &'static str) -> Report {
        Report {
            name,
            checked: 0,
            failures: Vec::new(),
        }
    }

    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        self.checked += 1;
        if !ok && self.failures.len() < 20 {
            let what = what();
            let cut = what.char_indices().nth(600).map_or(what.len(), |(i, _)| i);
            self.failures.push(what[..cut].to_string());
        } else if !ok {
            self.failures.push(String::new());
        }
    }

    fn finish(self, at_least: usize) {
        let shown: Vec<&String> = self.failures.iter().filter(|f| !f.is_empty()).collect();
        assert!(
            self.failures.is_empty(),
            "{}: {} of {} cases differ from Python:\n{}",
            self.name,
            self.failures.len(),
            self.checked,
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(
            self.checked >= at_least,
            "{}: only {} cases",
            self.name,
            self.checked
        );
        eprintln!("{}: {} cases match Python", self.name, self.checked);
    }
}

// ------------------------------------------------------------------------------- int / float

#[test]
fn int_matches_python() {
    let data = load("int.json");
    let mut report = Report::new("int()");
    for case in list(field(&data, "cases")) {
        let case = list(case);
        let (s, class, expected) = (input(&case[0]), text(&case[1]), text(&case[2]));
        let got = py::py_int(&s);
        let ok = match (&got, class) {
            (Ok(v), "ok") => short_matches(
                expected,
                canonical(v).trim_start_matches('i').trim_end_matches(';'),
            ),
            (Err(e), "ValueError") => txt_matches(expected, &e.message),
            _ => false,
        };
        report.check(ok, || {
            format!(
                "int({s:?}): Python {class} {}, Rust {got:?}",
                show_or_raw(class, expected)
            )
        });
    }
    report.finish(3000);
}

fn show_or_raw(class: &str, expected: &str) -> String {
    if class == "ok" {
        expected.to_string()
    } else {
        show(expected)
    }
}

#[test]
fn float_matches_python() {
    let data = load("float.json");
    let mut report = Report::new("float()");
    for case in list(field(&data, "cases")) {
        let case = list(case);
        let (s, class, expected) = (input(&case[0]), text(&case[1]), text(&case[2]));
        let got = py::py_float(&s);
        let ok = match (&got, class) {
            (Ok(f), "ok") => format!("{:016x}", f.to_bits()) == expected,
            (Err(e), "ValueError") => txt_matches(expected, &e.message),
            _ => false,
        };
        let short: String = s.chars().take(80).collect();
        report.check(ok, || {
            format!(
                "float({short:?}): Python {class} {}, Rust {got:?}",
                show_or_raw(class, expected)
            )
        });
    }
    report.finish(4000);
}

#[test]
fn float_repr_matches_python() {
    let data = load("float_repr.json");
    let mut report = Report::new("repr(float)");
    for case in list(field(&data, "cases")) {
        let case = list(case);
        let bits = u64::from_str_radix(text(&case[0]), 16).expect("bits");
        let f = f64::from_bits(bits);
        let got = py::float_repr(f);
        report.check(got == text(&case[1]), || {
            format!("repr({f:e}): Python {}, Rust {got}", text(&case[1]))
        });
    }
    report.finish(5000);
}

#[test]
fn int_from_float_is_exact() {
    let cases = [
        (0.0, "i0;"),
        (-0.0, "i0;"),
        (-2.5, "i-2;"),
        (9007199254740993.0, "i9007199254740992;"),
        (1e20, "i100000000000000000000;"),
        (-1.5e19, "i-15000000000000000000;"),
    ];
    for (f, want) in cases {
        assert_eq!(
            canonical(&py::int_from_float(f).unwrap()),
            want,
            "int({f:e})"
        );
    }
    let huge = py::int_from_float(1.7976931348623157e308).unwrap();
    assert_eq!(canonical(&huge).len(), "i;".len() + 309);
    assert!(py::int_from_float(f64::INFINITY).is_none());
}

// ------------------------------------------------------------------------------- strings

#[test]
fn string_functions_match_python_on_every_code_point() {
    let data = load("strings.json");
    let mut report = Report::new("str sweep");
    for chunk in list(field(&data, "sweep")) {
        let first = int(field(chunk, "first")) as u32;
        let len = int(field(chunk, "len")) as u32;
        let chars: Vec<char> = (first..first + len)
            .map(|cp| match cp {
                0xD800..=0xDFFF => surrogate_char(cp as u16),
                _ => char::from_u32(cp).expect("scalar"),
            })
            .collect();
        let s: String = chars.iter().collect();
        let lower_each: String = chars.iter().map(|c| py::py_lower(&c.to_string())).collect();
        let spaces: Vec<u8> = chars
            .iter()
            .map(|&c| u8::from(pyunicode::isspace(c)))
            .collect();
        let decimals: Vec<u8> = chars
            .iter()
            .map(|&c| pyunicode::decimal_value(c).unwrap_or(255))
            .collect();
        let checks = [
            ("lower", fnv(&enc(&py::py_lower(&s)))),
            ("lower_each", fnv(&enc(&lower_each))),
            ("repr", fnv(&enc(&py::py_repr_str(&s)))),
            ("space", fnv(&spaces)),
            ("decimal", fnv(&decimals)),
        ];
        for (what, got) in checks {
            let want = text(field(chunk, what));
            report.check(got == want, || {
                format!("{what} differs in the chunk from U+{first:04X}")
            });
        }
    }
    report.finish(1300);
}

#[test]
fn string_functions_match_python_on_samples() {
    let data = load("strings.json");
    let mut report = Report::new("str samples");
    for case in list(field(&data, "samples")) {
        let case = list(case);
        let s = input(&case[0]);
        let checks = [
            ("strip", py::py_strip(&s).to_string()),
            ("lower", py::py_lower(&s)),
            ("repr", py::py_repr_str(&s)),
        ];
        for (i, (what, got)) in checks.into_iter().enumerate() {
            let want = text(&case[i + 1]);
            report.check(txt_matches(want, &got), || {
                format!("{what}({s:?}): Python {:?}, Rust {got:?}", show(want))
            });
        }
    }
    report.finish(9000); // 3000 samples, three functions each
}

// ------------------------------------------------------------------------------- json

#[test]
fn json_loads_matches_python() {
    let data = load("json_loads.json");
    let max_depth = int(field(&data, "max_depth"));
    let mut report = Report::new("json.loads");
    for case in list(field(&data, "cases")) {
        let case = list(case);
        let (s, class, expected) = (input(&case[0]), text(&case[1]), text(&case[2]));
        let got = json_loads_depth(&s, max_depth);
        let ok = match (&got, class) {
            (Ok(v), "ok") => short_matches(expected, &canonical(v)),
            (Err(e), class) => e.python_class() == class && txt_matches(expected, &e.to_string()),
            _ => false,
        };
        let short: String = s.chars().take(120).collect();
        report.check(ok, || {
            let got = got
                .as_ref()
                .map(canonical)
                .map_err(|e| format!("{}: {e}", e.python_class()));
            format!(
                "json.loads({short:?}): Python {class} {}, Rust {got:?}",
                show_or_raw(class, expected)
            )
        });
    }
    report.finish(3900);
}

/// Every node's span re-decodes to the node, keys' spans to their keys, and offsets inside
/// string values map back onto the characters that produced them.
#[test]
fn json_spans_are_consistent() {
    let data = load("json_loads.json");
    let mut checked = 0;
    for case in list(field(&data, "cases")) {
        let case = list(case);
        let s = input(&case[0]);
        if s.matches(['[', '{']).count() > 100 {
            continue; // re-decoding every node of deep documents is quadratic
        }
        let Ok((value, spans)) = json_loads_with_spans(&s) else {
            continue;
        };
        assert_eq!(
            canonical(&value),
            canonical(&json_loads_depth(&s, JSON_MAX_DEPTH_TEMPLATE_FILE).unwrap())
        );
        for (path, span) in spans.entries() {
            let node = lookup(&value, &path);
            let piece =
                json_loads_depth(&s[span.value.clone()], JSON_MAX_DEPTH_TEMPLATE_FILE).unwrap();
            assert_eq!(canonical(&piece), canonical(node), "{s:?} at {path:?}");
            if let (Some(key), Some(PathSeg::Key(k))) = (&span.key, path.last()) {
                assert_eq!(json_loads(&s[key.clone()]).unwrap(), Value::Str(k.clone()));
            }
            if let Value::Str(decoded) = node {
                check_string_offsets(&s, span.value.clone(), decoded);
            }
            checked += 1;
        }
    }
    assert!(checked > 3000, "only {checked} nodes");
}

fn lookup<'a>(v: &'a Value, path: &[PathSeg]) -> &'a Value {
    path.iter().fold(v, |v, seg| match (v, seg) {
        (Value::List(items), PathSeg::Index(i)) => &items[*i],
        (Value::Dict(d), PathSeg::Key(k)) => &d[k],
        _ => panic!("bad path {path:?}"),
    })
}

fn check_string_offsets(src: &str, literal: std::ops::Range<usize>, decoded: &str) {
    let mut last = literal.start;
    for (offset, c) in decoded.char_indices() {
        let at = string_offset_to_source(src, literal.clone(), offset);
        assert!(
            at > last || offset == 0 && at > literal.start,
            "{src:?}: offsets must increase"
        );
        let token = &src[at..];
        if !token.starts_with('\\') {
            assert!(
                token.starts_with(c),
                "{src:?}: offset {offset} maps to {token:?}"
            );
        }
        // Every byte of the character maps to the same place.
        for inner in 1..c.len_utf8() {
            assert_eq!(
                string_offset_to_source(src, literal.clone(), offset + inner),
                at
            );
        }
        last = at;
    }
    assert_eq!(
        string_offset_to_source(src, literal.clone(), decoded.len()),
        literal.end - 1
    );
}

fn dump_options(name: &str, max_depth: usize) -> DumpOptions {
    let base = DumpOptions {
        max_depth: Some(max_depth),
        ..DumpOptions::default()
    };
    match name {
        "default" => base,
        "raw" => DumpOptions {
            ensure_ascii: false,
            surrogates_error: true,
            ..base
        },
        "no_nan" => DumpOptions {
            allow_nan: false,
            ..base
        },
        "indent2" => DumpOptions {
            indent: Some(2),
            ..base
        },
        "indent0" => DumpOptions {
            indent: Some(0),
            ..base
        },
        "indent1_no_nan" => DumpOptions {
            indent: Some(1),
            allow_nan: false,
            ..base
        },
        "compact" => DumpOptions {
            compact: true,
            ..base
        },
        // Python's own output written as UTF-8: a lone surrogate fails there.
        "cli" => DumpOptions {
            max_depth: Some(max_depth),
            surrogates_error: true,
            ..DumpOptions::reference_cli()
        },
        other => panic!("unknown options {other}"),
    }
}

fn check_dump(
    report: &mut Report,
    s: &str,
    value: &Value,
    name: &str,
    max_depth: usize,
    outcome: &[Value],
) {
    let (class, expected) = (text(&outcome[0]), text(&outcome[1]));
    let got = json_dumps(value, &dump_options(name, max_depth));
    let ok = match (&got, class) {
        (Ok(out), "ok") => txt_matches(expected, out),
        (Err(e), class) => e.python_class() == class && txt_matches(expected, &e.message),
        _ => false,
    };
    let short: String = s.chars().take(100).collect();
    report.check(ok, || {
        format!(
            "json.dumps[{name}]({short:?}): Python {class} {:?}, Rust {got:?}",
            show(expected)
        )
    });
}

#[test]
fn json_dumps_matches_python() {
    let data = load("json_dumps.json");
    let max_depth = int(field(&data, "max_depth"));
    let mut report = Report::new("json.dumps");
    for case in list(field(&data, "cases")) {
        let case = list(case);
        let s = input(&case[0]);
        let value = json_loads(&s).expect("source parses");
        for (name, outcome) in case[1].as_dict().expect("options") {
            check_dump(&mut report, &s, &value, name, max_depth, list(outcome));
        }
    }
    for case in list(field(&data, "deep")) {
        let case = list(case);
        let s = input(&case[0]);
        let value = json_loads_depth(&s, 2 * max_depth).expect("source parses");
        check_dump(
            &mut report,
            &s,
            &value,
            text(&case[1]),
            max_depth,
            &case[2..],
        );
    }
    report.finish(6000);
}

#[test]
fn recursion_limits_match_the_reference_command_line() {
    let depths = load("depths.json");
    let measured = |k: &str| int(field(&depths, k));
    assert_eq!(measured("parse"), JSON_MAX_DEPTH_PARSE);
    assert_eq!(measured("stream"), JSON_MAX_DEPTH_STREAM);
    assert_eq!(measured("template_file"), JSON_MAX_DEPTH_TEMPLATE_FILE);
    assert_eq!(measured("parse_dump_message"), JSON_DUMP_MAX_DEPTH_CLI);
    // The documented stack costs of each call path give the same numbers.
    assert_eq!(json_max_depth(10), JSON_MAX_DEPTH_PARSE); // <module>+1, main .. _json
    assert_eq!(json_max_depth(9), JSON_MAX_DEPTH_STREAM);
    assert_eq!(json_max_depth(12), measured("parse_prefix_region")); // + __init__ entry and frame
    assert_eq!(json_max_depth(11), measured("stream_prefix_region"));
    assert_eq!(json_max_depth(13), measured("parse_xml_value_parser"));
    assert_eq!(json_max_depth(9), measured("parse_tool_coercion"));
    assert_eq!(json_max_depth(5), JSON_MAX_DEPTH_TEMPLATE_FILE);
    // And the limit at the generator's call site agrees with its own measurement.
    let loads = load("json_loads.json");
    assert!(int(field(&loads, "max_depth")) > 900);
}

/// The JSON-ish pieces the random documents are made of.
const PIECES: &[&str] = &[
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    "\"",
    "\\",
    "\\u",
    "d800",
    "dc00",
    "00e9",
    "1",
    "-",
    "0",
    ".",
    "e",
    "+",
    "_",
    " ",
    "\n",
    "\t",
    "\x00",
    "\x1f",
    "NaN",
    "Infinity",
    "-Infinity",
    "null",
    "true",
    "é",
    "😀",
    "\u{10F800}",
    "\u{3000}",
    "\u{0663}",
    "inf",
    "nan",
    "\u{feff}",
    "x",
    "9999999999999999999",
];

proptest! {
    // A fixed seed tries the same cases on every run, and nothing is written to disk: a failure
    // prints its shrunk input, and the next run fails the same way.
    #![proptest_config(ProptestConfig {
        cases: 20_000,
        rng_seed: RngSeed::Fixed(0x9E37_79B9_7F4A_7C15),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random mixtures of JSON-ish pieces never make the functions panic.
    #[test]
    fn no_panics_on_random_input(
        pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..24),
        depth in 0usize..4,
        max_chars in 0usize..10,
        // Decoded offsets into each string literal found, used in turn.
        decoded in proptest::collection::vec(0usize..8, 1..8),
        start in any::<Index>(),
        width in any::<Index>(),
        at in any::<Index>(),
        last_decoded in 0usize..8,
    ) {
        let s = pieces.concat();
        let _ = json_loads(&s);
        let _ = json_loads_depth(&s, depth);
        let _ = py::py_int(&s);
        let _ = py::py_float(&s);
        let _ = py::py_lower(&s);
        let _ = py::py_repr_str_truncated(&s, max_chars);
        if let Ok((v, spans)) = json_loads_with_spans(&s) {
            let _ = json_dumps(&v, &DumpOptions::reference_cli());
            let _ = json_dumps(
                &v,
                &DumpOptions {
                    indent: Some(1),
                    ..DumpOptions::default()
                },
            );
            for (i, (_, span)) in spans.entries().into_iter().enumerate() {
                let _ = string_offset_to_source(&s, span.value.clone(), decoded[i % decoded.len()]);
            }
        }
        // Ranges and offsets may point past the end of the string.
        let a = start.index(s.len() + 2);
        let _ = string_offset_to_source(&s, a..a + width.index(s.len() + 2), last_decoded);
        let _ = py::line_col(&s, at.index(s.len() + 2));
    }
}

// ------------------------------------------------------------------------------- throughput

/// A multi-megabyte document shaped like tool-call bodies of a long generation.
fn typical_json(target_len: usize) -> String {
    let mut s = String::from("[");
    let mut i = 0u64;
    while s.len() < target_len {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            r#"{{"name": "search_web_{i}", "arguments": {{"query": "weather in Paris and Z\u00fcrich, day {i}", "max_results": {}, "threshold": {}.25, "tags": ["news", "weather", "caf\u00e9 \"quoted\"\n"], "nested": {{"ok": true, "none": null, "text": "{}"}}}}}}"#,
            i % 100,
            i % 7,
            "lorem ipsum dolor sit amet ".repeat((i % 5) as usize + 1)
        );
        i += 1;
    }
    s.push(']');
    s
}

/// Tool calls that write files: long strings with escapes.
fn code_json(target_len: usize) -> String {
    let line = r#"    let value = parse(\"input\", &mut state)?; // step\n"#;
    let mut s = String::from("[");
    let mut i = 0u64;
    while s.len() < target_len {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            r#"{{"name": "write_file", "arguments": {{"path": "src/module_{i}.rs", "content": "{}", "overwrite": true}}}}"#,
            line.repeat(20 + (i % 30) as usize)
        );
        i += 1;
    }
    s.push(']');
    s
}

/// Decoding throughput in MB/s (best of five), and including dropping the value.
fn throughput(doc: &str) -> (f64, f64) {
    let (mut best, mut best_total) = (0f64, 0f64);
    for _ in 0..5 {
        let start = std::time::Instant::now();
        let v = json_loads(doc).expect("valid");
        let parsing = start.elapsed().as_secs_f64();
        drop(std::hint::black_box(v));
        let total = start.elapsed().as_secs_f64();
        best = best.max(doc.len() as f64 / 1e6 / parsing);
        best_total = best_total.max(doc.len() as f64 / 1e6 / total);
    }
    (best, best_total)
}

/// `cargo test --release --test py_semantics -- --ignored --nocapture` prints the throughput.
#[test]
#[ignore]
fn json_loads_throughput() {
    let docs = [
        ("small-field tool calls", typical_json(32 << 20)),
        ("file-writing tool calls", code_json(32 << 20)),
        (
            "plain strings",
            format!(
                "[{}]",
                vec![format!("\"{}\"", "x".repeat(1000)); 20_000].join(",")
            ),
        ),
    ];
    for (name, doc) in docs {
        let (decode, with_drop) = throughput(&doc);
        eprintln!(
            "json_loads: {decode:.0} MB/s ({with_drop:.0} MB/s with dropping the value) on {:.1} MB of {name}",
            doc.len() as f64 / 1e6
        );
    }
}
