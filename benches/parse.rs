//! One-shot parsing throughput: whole SmolLM3-style generations of 1 MB and 10 MB (the cost
//! must grow linearly).

#[path = "support/input.rs"]
mod input;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rtbench_engine::parser::parse_response;
use rtbench_engine::py::json_loads;
use rtbench_engine::template::load_template;

fn one_shot(c: &mut Criterion) {
    let template = load_template(&json_loads(input::SMOLLM3_TEMPLATE).unwrap()).unwrap();
    let mut group = c.benchmark_group("parse/smollm3");
    group.sample_size(10);
    for (label, size) in [("1MB", 1_000_000), ("10MB", 10_000_000)] {
        let text = input::smollm3(size);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(label, |b| {
            b.iter(|| parse_response(&template, Some(""), &text, None).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, one_shot);
criterion_main!(benches);
