//! Deterministic, realistic generations for benchmarks (the same shape as the conformance kit's
//! `gen_input.py`): SmolLM3-style thinking, JSON tool calls and content, and gpt-oss harmony
//! channels with the function name in the header.

#![allow(dead_code)]

const WORDS: &[&str] = &[
    "the",
    "model",
    "should",
    "check",
    "weather",
    "tool",
    "call",
    "arguments",
    "city",
    "Paris",
    "London",
    "value",
    "result",
    "answer",
    "because",
    "however",
    "therefore",
    "user",
    "asked",
    "about",
    "temperature",
    "forecast",
    "tomorrow",
    "données",
    "東京",
    "ünïcode",
];

/// A small deterministic generator (64-bit LCG).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn prose(rng: &mut Rng, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 16);
    while out.len() < bytes {
        out.push_str(WORDS[rng.below(WORDS.len())]);
        match rng.below(100) {
            0..=7 => out.push_str(". "),
            8..=9 => out.push('\n'),
            _ => out.push(' '),
        }
    }
    out
}

fn call(rng: &mut Rng, i: usize) -> (String, String) {
    let city = ["Paris", "東京", "São Paulo"][rng.below(3)];
    let args = format!(
        "{{\"city\": \"{city}\", \"days\": {}, \"note\": \"{}\"}}",
        1 + rng.below(9),
        prose(rng, 60).replace('\n', " ")
    );
    (format!("tool_{}", i % 7), args)
}

/// A SmolLM3-style generation of about `size` bytes.
pub(crate) fn smollm3(size: usize) -> String {
    let mut rng = Rng(size as u64);
    let mut text = format!("<think>\n{}\n</think>\n", prose(&mut rng, size * 3 / 10));
    for i in 0..(size / 20000).max(2) {
        let (name, args) = call(&mut rng, i);
        text.push_str(&format!(
            "<tool_call>{{\"name\": \"{name}\", \"arguments\": {args}}}</tool_call>\n"
        ));
    }
    let rest = size.saturating_sub(text.len());
    text.push_str(&prose(&mut rng, rest));
    text.push_str("<|im_end|>");
    text
}

/// A gpt-oss harmony generation of about `size` bytes.
pub(crate) fn gpt_oss(size: usize) -> String {
    let mut rng = Rng(size as u64 ^ 0x5eed);
    let mut text = format!(
        "<|channel|>analysis<|message|>{}<|end|>",
        prose(&mut rng, size * 3 / 10)
    );
    for i in 0..(size / 20000).max(2) {
        let (name, args) = call(&mut rng, i);
        text.push_str(&format!(
            "<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"
        ));
    }
    let rest = size.saturating_sub(text.len());
    text.push_str("<|start|>assistant<|channel|>final<|message|>");
    text.push_str(&prose(&mut rng, rest));
    text.push_str("<|return|>");
    text
}

pub(crate) const SMOLLM3_TEMPLATE: &str = include_str!("../../samples/smollm3/template.json");
