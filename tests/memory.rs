//! Bounded memory: the workbench's analysis of an N-byte sample, what the normal view keeps
//! once the sample is parsed, stays within a fixed multiple of N plus a constant. The bound
//! is the aim, 8 x N (4.6 x N measured at the peak and 3.1 x N kept for 10 MB of prose; 8.2
//! and 7.4 for 1 MB of small tool calls), so that a change that copies the text once more
//! fails. A chunk-size-1 replay (a step per character) stays within 9 x N for the prose (6.8 x N
//! measured) and 12 x N for small tool calls (10.3 x N measured), the aim about 10 x N.
//!
//! The count is conservative: a `realloc` counts its new block before it frees the old one,
//! so a string grown by doubling counts one and a half copies at its last growth even where
//! the system moves the pages without copying.
//!
//! A counting global allocator measures the PEAK of the bytes allocated at once while the
//! worker computes its report for the sample (and while that report is kept): it counts
//! allocations, not wall clock or resident pages, so the figure is the same on every machine
//! and in every profile. The counter is global: the tests of this binary run one at a time.

use alloc_count::{current, peak_since, reset_peak};
use std::sync::Mutex;
use std::time::Instant;

use rtbench::testing::Inputs;
use rtbench::testing::worker::{self, Request};
use rtbench_tooling::chunking::Chunking;
use rtbench_tooling::replay::{Outcome, Replay};

#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

/// The tests of this binary share the counter: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// A deterministic SmolLM3-style generation of about `n` bytes: a think block of random words
/// in lines, then an answer of random words, then the end of turn.
fn generation(n: usize) -> String {
    const WORDS: [&str; 16] = [
        "the",
        "model",
        "thinks",
        "about",
        "weather",
        "in",
        "Paris",
        "and",
        "answers",
        "with",
        "care",
        "so",
        "that",
        "a",
        "reader",
        "understands",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut words = |out: &mut String, bytes: usize| {
        let end = out.len() + bytes;
        let mut in_line = 0;
        while out.len() < end {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            out.push_str(WORDS[(seed >> 60) as usize]);
            in_line += 1;
            if in_line == 12 {
                out.push('\n');
                in_line = 0;
            } else {
                out.push(' ');
            }
        }
    };
    let mut g = String::with_capacity(n + 64);
    g.push_str("<think>\n");
    words(&mut g, n / 2);
    g.push_str("\n</think>\n");
    words(&mut g, n / 2);
    g.push_str("<|im_end|>");
    g
}

/// The sample file of that generation, after a one-turn SmolLM3 prompt.
fn sample_file(n: usize) -> String {
    format!(
        "--- prefix (ends with newline) ---\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n\n\
         --- generation ---\n{}\n",
        generation(n)
    )
}

const MB: f64 = 1_000_000.0;

/// The worker's request for the first sample, as the workbench sends it on start.
fn request() -> Request {
    Request {
        seq: 1,
        selected_name: None,
        selected_index: 0,
        record: None,
        syntect_theme: "base16-ocean.dark".into(),
        no_color: false,
        reference: rtbench_engine::Reference::NEWEST,
        fallback: None,
    }
}

#[test]
fn the_normal_view_of_a_10_mb_sample_peaks_within_5_bytes_per_byte() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 10_000_000;
    // The inputs are built before the measurement: what the worker reads is its own copy.
    let text: &'static str = Box::leak(sample_file(n).into_boxed_str());
    let inputs = Inputs::embedded(
        "smollm3",
        include_str!("../samples/smollm3/template.json"),
        &[("big.sample", text)],
    );
    let req = request();
    let started = Instant::now();
    let baseline = reset_peak();
    let report = worker::compute(&inputs, &req);
    let peak = peak_since(baseline);
    let kept = current().saturating_sub(baseline);
    let took = started.elapsed();
    let shown = report.shown.as_ref().expect("the sample is shown");
    assert!(
        shown.analysis.message.is_some(),
        "{:?}",
        report.sample_error
    );
    let per_byte = peak as f64 / n as f64;
    eprintln!(
        "10 MB sample: peak {:.1} MB ({per_byte:.2} bytes per byte), kept {:.1} MB ({:.2} bytes \
         per byte), in {took:.2?}",
        peak as f64 / MB,
        kept as f64 / MB,
        kept as f64 / n as f64
    );
    // Measured 4.59 x N (3.09 kept): the file's text, which the generation shares, then the
    // document the analysis keeps, the parser's copy while it parses, the message (the two
    // halves of the text) and the message pane's index. 5.59 with the worker holding the
    // file's text to the end; 5.59 and 4.09 with the analysis's sample holding the file's text
    // beside the document; 6.59 and 4.09 with the generation a copy of the file's text; 7.74
    // when the message pane's index held its longest line while it wrote the head. A copy of
    // the text more fails.
    let limit = 5 * n + (4 << 20);
    assert!(
        peak <= limit,
        "the analysis of a {:.0} MB sample peaked at {:.1} MB ({per_byte:.2} bytes per byte), \
         over 5 x N + 4 MiB = {:.1} MB",
        n as f64 / MB,
        peak as f64 / MB,
        limit as f64 / MB
    );
    drop(report);
}

#[test]
fn a_chunk_size_1_replay_of_a_10_mb_sample_peaks_within_9_bytes_per_byte() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 10_000_000;
    let template = rtbench_engine::template::Template::from_json_str(include_str!(
        "../samples/smollm3/template.json"
    ))
    .expect("the bundled template loads");
    let prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
    // The sample is held before the measurement, as the workbench holds it.
    let text = generation(n);
    let started = Instant::now();
    let baseline = reset_peak();
    let replay = Replay::new(template, prefix, &text, None, Chunking::CodePoints(vec![1]));
    let peak = peak_since(baseline);
    let took = started.elapsed();
    // Looking around the replay keeps a few rebuilt stretches, not the timeline.
    let steps = replay.step_count();
    for step in [steps / 3, steps / 2, steps - 1, 1] {
        assert!(!replay.events(step).is_empty() || replay.step(step).events.is_empty());
        let _ = replay.paint(step);
        let _ = replay.partial_message(step);
    }
    let kept = current().saturating_sub(baseline);
    assert!(matches!(replay.outcome(), Outcome::Message(_)));
    assert_eq!(steps, text.chars().count() + 2);
    let per_byte = peak as f64 / n as f64;
    eprintln!(
        "chunk-1 replay of 10 MB: {steps} steps, {} events, peak {:.1} MB ({per_byte:.2} bytes \
         per byte), kept {:.1} MB ({:.2} bytes per byte), built in {took:.2?}",
        replay.timeline_len(),
        peak as f64 / MB,
        kept as f64 / MB,
        kept as f64 / n as f64
    );
    // Measured 6.8 x N (6.4 x N kept); the aim is about 10 x N.
    assert!(
        peak <= 9 * n,
        "a chunk-size-1 replay of {:.0} MB peaked at {:.1} MB ({per_byte:.2} bytes per byte), \
         over 9 x N",
        n as f64 / MB,
        peak as f64 / MB,
    );
    drop(replay);
}

/// `n` bytes of small tool calls (Qwen3's format), each closing a region with a parsed value.
fn tool_calls(n: usize) -> String {
    let mut g = String::with_capacity(n + 64);
    let mut seed: u64 = 7;
    while g.len() < n {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        g.push_str(&format!(
            "<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"a\": {}}}}}\n</tool_call>\n",
            seed >> 54
        ));
    }
    g.push_str("<|im_end|>");
    g
}

/// The peak of a chunk-size-1 replay of `text` with Qwen3's template.
fn replay_peak(text: &str) -> usize {
    let template = rtbench_engine::template::Template::from_json_str(include_str!(
        "../samples/qwen3/template.json"
    ))
    .expect("the bundled template loads");
    let baseline = reset_peak();
    let replay = Replay::new(
        template,
        "<|im_start|>assistant\n",
        text,
        None,
        Chunking::CodePoints(vec![1]),
    );
    let peak = peak_since(baseline);
    assert!(matches!(replay.outcome(), Outcome::Message(_)));
    peak
}

#[test]
fn a_replay_of_many_small_regions_grows_linearly_with_the_text() {
    // The parser's states kept every 1024 steps used to copy the whole message each time,
    // every tool call so far: 9 GB for a megabyte of calls. They now hold a growing list's
    // length only (its items are the stream's message's), so twice the calls cost twice the
    // memory.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 200_000;
    let (small, large) = (replay_peak(&tool_calls(n)), replay_peak(&tool_calls(2 * n)));
    let ratio = large as f64 / small as f64;
    eprintln!(
        "chunk-1 replays of tool calls: {:.1} MB for {n} bytes, {:.1} MB for twice that \
         (x{ratio:.2}; {:.0} bytes per byte)",
        small as f64 / MB,
        large as f64 / MB,
        large as f64 / (2 * n) as f64
    );
    assert!(
        ratio < 2.3,
        "twice the tool calls cost {ratio:.2} times the memory"
    );
    // Measured 10.3 bytes per byte: each call's value is held once, in the message (its
    // region names the item, the parser's states its list's length, and a step's message is
    // rebuilt from the regions when shown). It was 36 when regions, states and the client's
    // snapshots each held the values too.
    assert!(
        large <= 12 * 2 * n,
        "{:.0} bytes per byte",
        large as f64 / (2 * n) as f64
    );
}

#[test]
fn the_analysis_of_many_small_regions_holds_each_value_once() {
    // A sample of small tool calls holds, per call, its region (spans) and its value once, in
    // the message: the region refers to the message's item, and the parsed content to its place
    // inside that value (before, each region held its value and its parsed content beside the
    // message's copy); the message pane writes the message's JSON from the message as it draws
    // it, and holds only its highlighted head's runs and a small index.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // RTBENCH_MEMORY_BYTES sets the sample's size (1 MB by default; the README's 10 MB figure
    // is this test at 10,000,000).
    let n: usize = std::env::var("RTBENCH_MEMORY_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let req = request();
    // Measured over idle, as the workbench is: its parse lane has analysed a sample of one
    // call (the highlighter's syntax sets, some 6 MB whatever the sample, are loaded).
    drop(worker::compute(&calls_sample(1, false), &req));
    let inputs = calls_sample(n, false);
    let baseline = reset_peak();
    let report = worker::compute(&inputs, &req);
    let peak = peak_since(baseline);
    let kept = current().saturating_sub(baseline);
    let shown = report.shown.as_ref().expect("the sample is shown");
    let a = &shown.analysis;
    let calls: Vec<usize> = (0..a.regions.len())
        .filter(|&r| a.region_transformed(r).is_some())
        .collect();
    assert!(calls.len() > 10_000, "{} tool calls", calls.len());
    eprintln!(
        "analysis of {} tool calls in {n} bytes: peak {:.1} MB ({:.2} bytes per byte), \
         kept {:.1} MB ({:.2} bytes per byte)",
        calls.len(),
        peak as f64 / MB,
        peak as f64 / n as f64,
        kept as f64 / MB,
        kept as f64 / n as f64
    );
    let message = a.message.as_ref().expect("the calls parse");
    let list = message["tool_calls"].as_list().expect("a list of calls");
    for (i, &r) in calls.iter().enumerate() {
        let g = a.regions.at(r);
        assert!(!g.holds_values(), "region {r} holds a copy of a value");
        // What the region pane shows is the message's own item and its parts.
        let value = a.region_value(r).expect("a closed call has a value");
        assert!(std::ptr::eq(value, &list[i]));
        let function = value.as_dict().and_then(|d| d.get("function"));
        assert!(std::ptr::eq(
            a.region_parsed(r).expect("the parsed call"),
            function.expect("a function")
        ));
    }
    // Measured over idle: peak 8.22 and kept 7.42 bytes per byte (7.42 and 7.04 at 10 MB).
    // The generation is copied out of the sample file's text into a string of its own, with
    // room for the prefix, and the file's text goes (what the file's findings place in it is
    // placed before, or in its text rebuilt around the document's copy of the generation when
    // there is anything to place). The parse takes that string over (1 x N) and holds the
    // message (4.4: a tool call's value is 249 bytes in five blocks, its dicts' short keys held
    // inline), the engine's compact regions (0.7: a 44-byte record, in chunks, and a 4-byte
    // entry a call) and the 8-byte marks (0.4, in chunks). Once it is done, the parser's copy,
    // the prefix put before it in place, is the document; the message's list is shrunk to its
    // items, the events are painted (12-byte segments, 0.56) and let go. The peak is as the
    // message pane's highlighted head is made (0.45 MB whatever the sample: 256 KB of JSON as
    // four-byte runs, in chunks). What is kept: the message, the document, the regions, the
    // segments, the 4-byte line starts (0.19) and that head.
    // Before: 7.92 and 7.04 at 10 MB with the file's text held through the parse; 8.00 and
    // 7.04 with the document made apart from the parser's copy and the file's text held
    // beside it until the analysis was done; 8.52 and 7.42 with the worker holding the file's text to the end and the marks
    // held while the document was made; 8.95 and 7.42 with the head's runs in one list grown by
    // doubling; 9.55 and 8.42 with the analysis's sample holding the file's text beside the
    // document, the message's list keeping its growth and 16-byte segments, 8-byte line starts;
    // 10.55 and 8.97 with the generation a copy of the file's text; 12.5 and 11.0 with the
    // message pane holding the message's JSON (2.2); 13.6 and 12.1 with `String` dict keys (the
    // message 5.4); 14.4 and 12.1 with 264-byte regions (their value, parsed content,
    // transformed value and captures unboxed) and 24-byte marks; 16.4 and 12.1 with the
    // parser's buffer doubled by a one-character probe of its growth (2 x N held to the end of
    // the parse) and the explanation's document made before its parse; 16.4 and 13.2 with the
    // message's JSON held indented; 19 and 18 with its highlighted head (some 5 MB whatever the
    // sample) held as a string per run; 21 and 17 when the head was cut out of the JSON, which
    // shrank it through a second copy; 23 and 18 with the audit holding every event and its
    // close detail at once (17.6 x N for it alone) and no idle analysis first; 38 and 25 with
    // 48-byte segments and 264-byte regions; 56 and 32 when each region held its value and its
    // parsed content beside the message's copy; 132 and 67 with `IndexMap` dicts of 72-byte
    // values; 167 and 94 with the transform's output held a second time and a styled line per
    // message line.
    //
    // The bound is the aim, 8 x N, and the head's half a megabyte whatever the sample.
    let head = 1 << 19;
    assert!(
        peak <= 8 * n + head && kept <= n * 15 / 2 + head,
        "the analysis of many small regions peaks at {:.2} and keeps {:.2} bytes per byte",
        peak as f64 / n as f64,
        kept as f64 / n as f64
    );
    drop(report);
}

#[test]
fn the_audit_of_many_small_regions_folds_its_events_as_they_come() {
    // The engine's audit of small tool calls takes each event into its regions as the parser
    // records it and keeps an 8-byte mark of it: the close values and details are never held
    // in a list of events beside the regions and the message, and a region settles into a
    // compact record once it has closed.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1_000_000;
    let template = rtbench_engine::template::Template::from_json_str(include_str!(
        "../samples/qwen3/template.json"
    ))
    .expect("the bundled template loads");
    let generation = tool_calls(n);
    let baseline = reset_peak();
    let audit = rtbench_engine::audit(&template, "<|im_start|>assistant\n", &generation, None);
    let peak = peak_since(baseline);
    let kept = current().saturating_sub(baseline);
    let calls = audit.result.as_ref().expect("the calls parse")["tool_calls"]
        .as_list()
        .map_or(0, |l| l.len());
    assert!(calls > 10_000, "{calls} tool calls");
    assert_eq!(audit.marks.len(), 3 * calls + audit.marks.len() % 3);
    eprintln!(
        "audit of {calls} tool calls in {n} bytes: peak {:.1} MB ({:.2} bytes per byte), kept \
         {:.1} MB ({:.2} bytes per byte)",
        peak as f64 / MB,
        peak as f64 / n as f64,
        kept as f64 / MB,
        kept as f64 / n as f64
    );
    // Measured: peak 6.63 and kept 6.60 bytes per byte (the message 4.4, the regions 0.7 as
    // 44-byte records and 4-byte entries, the 8-byte marks 0.4, both in chunks that never move,
    // and the parser's copy of the text, kept as the document); 6.63 and 5.60 when the copy
    // was dropped and a document made apart where one was needed; 6.76 and 5.73 with the marks in one list
    // that doubled; 7.79 and 6.76 with `String` dict keys (the message 5.4); 10.0 and 9.0 with
    // the regions held as 152-byte `Region`s (2.5) and 16-byte marks (1.1); 12.4 and 11.4 with
    // 264-byte regions (their rarely present values unboxed) and 24-byte marks; 13.4 at the
    // peak with that copy doubled by a one-character probe of the buffer's growth; 17.6 with a
    // 72-byte event per open, chunk and close (4.7 x N) and each close's 144-byte detail boxed
    // (2.3 x N), all held until the parse ended.
    assert!(
        peak <= n * 69 / 10,
        "the audit of many small regions peaks at {:.1} bytes per byte",
        peak as f64 / n as f64
    );
    drop(audit);
}

#[test]
fn a_small_tool_call_value_holds_its_entries_and_strings_only() {
    // A tool call as the message holds it: `{"type": "function", "function": {"name": "f",
    // "arguments": {"a": 137}}}` is three dicts of five 48-byte entries (a 16-byte key, its
    // text inline, and a 32-byte `Value`: 240 bytes in three blocks) and two short strings
    // ("function" and "f": 9 bytes in two): 249 bytes in five blocks, its clone the same. The
    // parsed content, `{"name": "f", "arguments": {"a": 137}}`, is three entries in two dicts
    // and "f": 145 bytes in three blocks. With `String` keys (56-byte entries, a block per key)
    // they held 315 bytes in ten blocks and 183 in six; with `IndexMap` dicts (a 72-byte
    // `Value`, a 104-byte entry with its hash, a hash table per dict, a clone reserving one
    // more entry) the call held 1,127 bytes.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(size_of::<rtbench_engine::Value>(), 32);
    let template = rtbench_engine::template::Template::from_json_str(include_str!(
        "../samples/qwen3/template.json"
    ))
    .expect("the bundled template loads");
    let message = rtbench_engine::parse_response(
        &template,
        Some("<|im_start|>assistant\n"),
        "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 137}}\n</tool_call>\n<|im_end|>",
        None,
    )
    .expect("the call parses");
    let call = &message["tool_calls"].as_list().expect("a list of calls")[0];
    let (copy, held) = held_by(|| call.clone());
    assert!(copy.py_eq(call));
    assert_eq!(
        held,
        (249, 5),
        "bytes and blocks held by a copy of {call:?}"
    );
    let (value, held) =
        held_by(|| rtbench_engine::py::json_loads(r#"{"name": "f", "arguments": {"a": 137}}"#));
    assert!(value.is_ok());
    assert_eq!(
        held,
        (145, 3),
        "bytes and blocks held by the parsed content"
    );
}

/// What `f`'s result holds once it returns: bytes and live blocks.
fn held_by<T>(f: impl FnOnce() -> T) -> (T, (usize, usize)) {
    let (bytes, blocks) = (current(), alloc_count::blocks());
    let out = f();
    (out, (current() - bytes, alloc_count::blocks() - blocks))
}

#[test]
fn the_versions_pass_over_many_small_tool_calls_holds_one_parse_at_a_time() {
    // After the analysis the worker asks whether the sample's result depends on the reference
    // version. Without tools, small tool calls reach none of the places where the versions
    // differ and are not parsed again; with tools, each version's outcome is hashed as it is
    // made, one version after the other, each call's value as its event comes (the parse's
    // list holds `None` in its place). Comparing the outcomes whole kept every event of both
    // streams and four messages at once: 71.7 bytes per byte at the peak.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let n = 1_000_000;
    let req = request();
    drop(worker::compute(&calls_sample(1, false), &req));
    for tools in [false, true] {
        let inputs = calls_sample(n, tools);
        let baseline = reset_peak();
        let report = worker::compute_with_versions(&inputs, &req);
        let peak = peak_since(baseline);
        assert!(report.shown.is_some());
        assert!(
            report.samples.iter().all(|s| s.versions.is_none()),
            "the versions agree on small tool calls"
        );
        eprintln!(
            "analysis and versions pass of {n} bytes of tool calls, tools {tools}: peak {:.2} \
             bytes per byte",
            peak as f64 / n as f64
        );
        // Measured 8.22 without tools (the analysis alone) and 9.21 with them: the analysis
        // kept (7.4) and one parse at a time (its copy of the text, and its message with a
        // `None` per call: 1.8); the file's text a warning would be placed in is made again
        // around the generation when one is. 10.21 with the file's text kept for it, 13.87
        // when each parse held its message's values.
        let bound = if tools {
            n * 95 / 10
        } else {
            8 * n + (1 << 19)
        };
        assert!(
            peak <= bound,
            "tools {tools}: peak {:.2} bytes per byte",
            peak as f64 / n as f64
        );
        drop(report);
    }
}

/// A `.sample` of `n` bytes of small tool calls after a one-turn Qwen3 prompt, with a tool
/// whose one argument is an integer when `tools`, as the workbench's inputs.
fn calls_sample(n: usize, tools: bool) -> Inputs {
    let tools = if tools {
        "--- tools ---\n[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": \
         {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}}}]\n\n"
    } else {
        ""
    };
    let text: &'static str = Box::leak(
        format!(
            "--- prefix (ends with newline) ---\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n\n{tools}--- generation ---\n{}",
            tool_calls(n)
        )
        .into_boxed_str(),
    );
    Inputs::embedded(
        "qwen3",
        include_str!("../samples/qwen3/template.json"),
        &[("calls.sample", text)],
    )
}
