//! Throughput of `pyregex` on a 10 MB prose buffer: full and partial searches
//! for delimiter patterns that never occur (so every search scans the whole buffer).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pyregex::{Flags, Regex};
use std::hint::black_box;

/// Deterministic English-like prose with newlines and punctuation, but no `<`.
fn prose(len: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "model",
        "answer",
        "tool",
        "call",
        "function",
        "value",
        "reasoning",
        "of",
        "and",
        "a",
        "to",
        "in",
        "is",
        "that",
        "for",
        "it",
        "with",
        "as",
        "on",
        "be",
        "this",
        "channel",
        "message",
        "commentary",
        "response",
        "template",
        "parser",
        "stream",
        "delimiter",
        "naïve",
        "café",
        "über",
    ];
    let mut s = String::with_capacity(len + 64);
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    while s.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(WORDS[(x % WORDS.len() as u64) as usize]);
        s.push(match x >> 59 {
            0 => '\n',
            1 => ',',
            2 => '.',
            _ => ' ',
        });
    }
    s.truncate(len);
    while !s.is_char_boundary(s.len()) {
        s.pop();
    }
    s
}

fn bench(c: &mut Criterion) {
    let hay = prose(10 << 20);
    let patterns = [
        (
            "channel_open",
            r"<\|channel\|>commentary to=functions\.(?P<name>[^\s<]+)[^<]*(?:<\|constrain\|>[^<]*)?<\|message\|>",
        ),
        ("ws_close", r"\s*</x>"),
        ("dollar", r"$"),
        ("lookahead_lt", r"(?=<)"),
        ("literal", r"</tool_call>"),
    ];
    let mut g = c.benchmark_group("regex_10MB");
    g.throughput(Throughput::Bytes(hay.len() as u64));
    g.sample_size(10);
    for (name, p) in patterns {
        let re = Regex::new(p, Flags { dotall: true }).expect("compiles");
        g.bench_function(format!("{name}/search"), |b| {
            b.iter(|| black_box(re.search(black_box(&hay), 0).unwrap()))
        });
        g.bench_function(format!("{name}/search_partial"), |b| {
            b.iter(|| black_box(re.search_partial(black_box(&hay), 0).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
