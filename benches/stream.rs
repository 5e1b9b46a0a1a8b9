//! Streaming cost: the engine fed 1 and 16 code points at a time, on 200 KB and 2 MB
//! generations (SmolLM3 literals, gpt-oss with an open pattern). The cost must stay linear in
//! the text, whatever the chunk size.

#[path = "support/input.rs"]
mod input;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rtbench_engine::parser::Parser;
use rtbench_engine::py::json_loads;
use rtbench_engine::template::{Template, load_template};

const GPT_OSS_TEMPLATE: &str = r#"{"version": 1, "start_anchor": "<|start|>assistant", "defaults": {"role": "assistant"},
 "fields": {
  "thinking": {"open": "<|channel|>analysis<|message|>", "close": ["<|end|>", "<|return|>", "<|call|>"], "repeats": true, "join": "\n"},
  "content": {"open": "<|channel|>final<|message|>", "close": ["<|return|>", "<|end|>"]},
  "tool_calls": {"open_pattern": "<\\|channel\\|>commentary to=functions\\.(?P<name>[^\\s<]+)[^<]*(?:<\\|constrain\\|>[^<]*)?<\\|message\\|>",
   "close": ["<|call|>", "<|end|>"], "content": "json", "repeats": true,
   "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}}}}"#;

fn template(json: &str) -> Template {
    load_template(&json_loads(json).unwrap()).unwrap()
}

/// Byte offsets that cut `text` every `n` code points.
fn cuts(text: &str, n: usize) -> Vec<usize> {
    let mut v: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(n).collect();
    v.push(text.len());
    v
}

fn feed_all(t: &Template, text: &str, cuts: &[usize]) -> usize {
    let mut p = Parser::new(t, Some(""), None).unwrap();
    let mut events = 0;
    for w in cuts.windows(2) {
        events += p.feed(&text[w[0]..w[1]]).unwrap().len();
    }
    events + p.finalize().unwrap().1.len()
}

fn streaming(c: &mut Criterion) {
    let formats = [
        (
            "smollm3",
            template(input::SMOLLM3_TEMPLATE),
            input::smollm3 as fn(usize) -> String,
        ),
        (
            "gpt-oss",
            template(GPT_OSS_TEMPLATE),
            input::gpt_oss as fn(usize) -> String,
        ),
    ];
    for (name, tpl, gen_text) in &formats {
        let mut group = c.benchmark_group(format!("stream/{name}"));
        group.sample_size(10);
        for (label, size) in [("200KB", 200_000), ("2MB", 2_000_000)] {
            let text = gen_text(size);
            group.throughput(Throughput::Bytes(text.len() as u64));
            for n in [1, 16] {
                let cuts = cuts(&text, n);
                group.bench_with_input(
                    BenchmarkId::new(format!("chunk-{n}"), label),
                    &cuts,
                    |b, cuts| b.iter(|| feed_all(tpl, &text, cuts)),
                );
            }
        }
        group.finish();
    }
}

criterion_group!(benches, streaming);
criterion_main!(benches);
