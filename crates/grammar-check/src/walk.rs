//! Random walks through a grammar: seeded, so a failing walk is reproducible from its seed and
//! index. A walk picks each next byte among those the grammar allows, weighted towards the
//! bytes that give text its structure (JSON punctuation, delimiters' first bytes), and now and
//! then writes one of the grammar's own literals whole when the grammar allows it there, so
//! walks cross delimiters as often as a model does instead of drifting in free text; the longer
//! it has drawn free text, the likelier that literal is one of the delimiters that end it. It stops
//! when the grammar is complete, at random where the grammar may end, and gives up past a
//! length.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::matcher::{Choices, Grammar, SPECIAL_GROUP};

/// The group of token `t` when a walk may draw it (not the end-of-sequence token).
fn allowed_group(grammar: &Grammar, t: usize, eos: u32) -> Option<usize> {
    let id = u32::try_from(t).ok()?;
    if id == eos {
        return None;
    }
    grammar.group_of(id)
}

/// How walks are taken.
#[derive(Clone, Debug)]
pub struct WalkOptions {
    /// The seed of the first walk; walk `i` uses `seed + i`.
    pub seed: u64,
    /// A walk longer than this many bytes is abandoned (and counted).
    pub max_bytes: usize,
    /// The strings that end the grammar's free text (see [`lark_delimiters`]): the longer a
    /// walk has drawn free bytes, the likelier it writes one of them, so a template with many
    /// literals (every tool's parameter tags) still leaves its free text as a model does.
    pub delimiters: Vec<String>,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            seed: 1,
            max_bytes: 2048,
            delimiters: Vec::new(),
        }
    }
}

/// The literals of Lark source, longest first: its strings (`"..."`, JSON escapes) and the
/// literal runs of two or more characters inside its regexes (`</think>` in
/// `/(?s:.*)<\/think>/`): the delimiters a walk writes whole.
pub fn lark_literals(lark: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let bytes = lark.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            // A regex literal: skip to its closing slash, so a quote inside it is not taken
            // for a string.
            b'/' if i + 1 < bytes.len() && bytes[i + 1] != b'/' => {
                let start = i + 1;
                i += 1;
                while i < bytes.len() && bytes[i] != b'/' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                for run in regex_runs(lark.get(start..i.min(bytes.len())).unwrap_or("")) {
                    if !out.contains(&run) {
                        out.push(run);
                    }
                }
                i += 1;
            }
            b'/' => {
                // A `//` comment runs to the end of the line.
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Ok(s)) = lark
                    .get(start..=i.min(bytes.len() - 1))
                    .map(serde_json::from_str::<String>)
                    && !s.is_empty()
                    && !out.contains(&s)
                {
                    out.push(s);
                }
                i += 1;
            }
            b'%' if lark[i..].starts_with("%json") => {
                // A schema's braces hold JSON strings, not grammar literals; its keys are
                // written by the walk's byte choices.
                let mut depth = 0usize;
                while i < bytes.len() {
                    match bytes[i] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                break;
                            }
                        }
                        b'"' => {
                            i += 1;
                            while i < bytes.len() && bytes[i] != b'"' {
                                i += if bytes[i] == b'\\' { 2 } else { 1 };
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// The strings the Lark source's free text may not contain (the literal runs of its `~/.../`
/// exclusions, `</think>` in `TEXT: /(?s:.+)/ & ~/(?s:.*)<\/think>(?s:.*)/`): the delimiters
/// that end free text, longest first.
pub fn lark_delimiters(lark: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = lark;
    while let Some(i) = rest.find("~/") {
        let body = &rest[i + 2..];
        let bytes = body.as_bytes();
        let mut j = 0;
        while j < bytes.len() && bytes[j] != b'/' && bytes[j] != b'\n' {
            j += if bytes[j] == b'\\' { 2 } else { 1 };
        }
        for run in regex_runs(body.get(..j.min(bytes.len())).unwrap_or("")) {
            if !out.contains(&run) {
                out.push(run);
            }
        }
        rest = body.get(j.min(bytes.len())..).unwrap_or("");
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// The literal runs of two or more characters in a regex (escaped punctuation and `\n`, `\t`
/// as the characters they stand for; any other syntax ends a run).
fn regex_runs(regex: &str) -> Vec<String> {
    let mut runs = Vec::new();
    let mut run = String::new();
    let mut chars = regex.chars();
    let end = |run: &mut String, runs: &mut Vec<String>| {
        if run.chars().count() >= 2 {
            runs.push(std::mem::take(run));
        }
        run.clear();
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => run.push('\n'),
                Some('t') => run.push('\t'),
                Some(e) if e.is_ascii_punctuation() => run.push(e),
                Some(k @ ('x' | 'u' | 'U')) => {
                    // `\x{20}`, `\x20`, `\u0020`: a printable character stays in the run, so
                    // `<invoke\x{20}name="f">` is one literal a walk writes whole (a walk would
                    // rarely draw the space between its halves from free text); a control
                    // character ends it.
                    let digits: String = if chars.clone().next() == Some('{') {
                        chars.next();
                        chars.by_ref().take_while(|&c| c != '}').collect()
                    } else {
                        let n = match k {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        chars.by_ref().take(n).collect()
                    };
                    match u32::from_str_radix(&digits, 16)
                        .ok()
                        .and_then(char::from_u32)
                    {
                        Some(c) if !c.is_control() => run.push(c),
                        _ => end(&mut run, &mut runs),
                    }
                }
                _ => end(&mut run, &mut runs),
            },
            '[' => {
                // A character class is one character, not text.
                end(&mut run, &mut runs);
                let mut escaped = false;
                for c in chars.by_ref() {
                    match c {
                        _ if escaped => escaped = false,
                        '\\' => escaped = true,
                        ']' => break,
                        _ => {}
                    }
                }
            }
            '(' => {
                end(&mut run, &mut runs);
                // A group's flags (`(?:`, `(?s:`, `(?P<name>`) are syntax, not text.
                if chars.clone().next() == Some('?') {
                    for f in chars.by_ref() {
                        if f == ':' || f == ')' || f == '>' {
                            break;
                        }
                    }
                }
            }
            '.' | '*' | '+' | '?' | ')' | ']' | '{' | '}' | '|' | '^' | '$' => {
                end(&mut run, &mut runs)
            }
            c => run.push(c),
        }
    }
    end(&mut run, &mut runs);
    runs
}

/// How much a walk favours `byte` among those allowed: structure over prose, ASCII over the
/// rest, and non-ASCII now and then so walks meet multi-byte characters.
pub(crate) fn weight(byte: u8) -> f64 {
    match byte {
        b'{' | b'}' | b'[' | b']' | b'"' | b',' | b':' | b'<' | b'>' => 6.0,
        b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' => 1.0,
        b' ' | b'\n' => 1.5,
        0x21..=0x7e => 0.5,
        0x80..=0xff => 0.05,
        _ => 0.02,
    }
}

/// The free text, in bytes, after which a walk writes a delimiter whenever it writes a literal.
const FREE_TEXT_SPAN: f64 = 160.0;

/// Weighted draws tried before the whole mask is computed.
const REJECTION_TRIES: usize = 8;

/// How much a walk favours a group of tokens (see [`Grammar::groups`]), after `ws_run`
/// whitespace bytes in a row: whitespace grows ever less likely, or a walk through a grammar
/// that allows whitespace anywhere (JSON) drifts in it for ever.
fn group_weight(group: usize, ws_run: u32) -> f64 {
    match u8::try_from(group) {
        Ok(b) if b.is_ascii_whitespace() => weight(b) * 0.25f64.powi(ws_run.min(MAX_WS_RUN) as i32),
        Ok(b) => weight(b),
        Err(_) => 2.0,
    }
}

/// The longest whitespace run [`group_weight`] tells apart.
const MAX_WS_RUN: u32 = 20;

/// The grammar's non-empty groups with their weights after `ws_run` whitespace bytes, and
/// the weights' sum.
fn group_choices(grammar: &Grammar, ws_run: u32) -> Choices {
    let groups = grammar.groups();
    let choices: Vec<(u32, f64)> = (0..groups.len())
        .filter(|&g| !groups[g].is_empty())
        .map(|g| (g as u32, group_weight(g, ws_run)))
        .collect();
    let total = choices.iter().map(|c| c.1).sum();
    (choices, total)
}

/// [`group_choices`] for every whitespace run up to [`MAX_WS_RUN`] (longer runs weigh the
/// same), made once per grammar: a walk asks at every step.
fn all_group_choices(grammar: &Grammar) -> Vec<Choices> {
    (0..=MAX_WS_RUN)
        .map(|r| group_choices(grammar, r))
        .collect()
}

/// A token drawn from the grammar's whole vocabulary: a group of `choices` (see
/// [`group_choices`]) in proportion to its weight, then one of its tokens.
fn draw_any(rng: &mut StdRng, grammar: &Grammar, (choices, total): &Choices) -> Option<u32> {
    if choices.is_empty() {
        return None;
    }
    let g = &grammar.groups()[draw_with(rng, choices, *total) as usize];
    Some(g[rng.random_range(0..g.len())])
}

/// A token drawn from `choices` (not empty) in proportion to its weight.
fn draw(rng: &mut StdRng, choices: &[(u32, f64)]) -> u32 {
    let total: f64 = choices.iter().map(|c| c.1).sum();
    draw_with(rng, choices, total)
}

/// [`draw`] with the weights' sum known.
fn draw_with(rng: &mut StdRng, choices: &[(u32, f64)], total: f64) -> u32 {
    if !(total > 0.0 && total.is_finite()) {
        return choices[rng.random_range(0..choices.len())].0;
    }
    let mut x = rng.random_range(0.0..total);
    for &(t, w) in choices {
        if x < w {
            return t;
        }
        x -= w;
    }
    choices[choices.len() - 1].0
}

/// One walk: the text, or `None` when it ran past `max_bytes` or into a state that allows
/// nothing and cannot end.
pub fn walk(
    grammar: &Grammar,
    literals: &[String],
    index: u64,
    opts: &WalkOptions,
) -> Option<String> {
    let mut rng = StdRng::seed_from_u64(opts.seed.wrapping_add(index));
    // The model's special tokens are literals too: a grammar names them as tokens, not text.
    let specials: Vec<String> = grammar.special_spellings().collect();
    let literals: Vec<&String> = literals.iter().chain(&specials).collect();
    let mut m = grammar.start();
    let eos = grammar.eos();
    let mut out: Vec<u8> = Vec::new();
    // How eager this walk is to stop where it may, and to write literals whole: varied per
    // walk so some walks are short and plain and others long and busy.
    let stop = rng.random_range(0.05..0.4);
    let literal = rng.random_range(0.1..0.5);
    let mut ws_run = 0u32;
    // Bytes drawn since the walk last wrote a literal.
    let mut free_run = 0usize;
    loop {
        if m.is_error() || out.len() > opts.max_bytes {
            return None;
        }
        if m.is_stopped() {
            break;
        }
        if rng.random_bool(stop) && m.is_accepting().unwrap_or(false) {
            break;
        }
        // A delimiter grows likelier with the free text before it (certain-ish past
        // `FREE_TEXT_SPAN` bytes): among many literals a walk would rarely pick the one that
        // ends the text it is in, and run past its length cap.
        let delimiters = &opts.delimiters;
        let closing = !delimiters.is_empty()
            && rng.random_bool(literal * (free_run as f64 / FREE_TEXT_SPAN).min(1.0));
        let pool: Vec<&String> = if closing {
            delimiters.iter().collect()
        } else {
            literals.clone()
        };
        if !pool.is_empty() && (closing || rng.random_bool(literal)) {
            let pick = pool[rng.random_range(0..pool.len())];
            let tokens = grammar.tokenize(pick);
            if m.validate_tokens(&tokens).ok() == Some(tokens.len())
                && m.consume_tokens(&tokens).is_ok()
            {
                out.extend_from_slice(pick.as_bytes());
                free_run = 0;
                continue;
            }
        }
        // Most states allow most of the bytes a walk favours: try a few weighted draws one
        // token at a time (one lexer step each) before asking for the whole mask (a step per
        // byte of the vocabulary).
        let mut chosen = None;
        let choices = &grammar.walk_choices(all_group_choices)[ws_run.min(MAX_WS_RUN) as usize];
        for _ in 0..REJECTION_TRIES {
            let Some(t) = draw_any(&mut rng, grammar, choices) else {
                break;
            };
            if m.validate_tokens(&[t]).ok() == Some(1) {
                chosen = Some(t);
                break;
            }
        }
        let chosen = match chosen {
            Some(t) => t,
            None => {
                let Ok(mask) = m.compute_mask() else {
                    // The grammar is complete and allows nothing more (the engine reports a
                    // stopped parser as an error here), or it failed.
                    if m.is_accepting().unwrap_or(false) {
                        break;
                    }
                    return None;
                };
                // The allowed tokens by group; a group by weight, then one of its tokens (the
                // mask read twice rather than its tokens gathered: it may allow most of a
                // large vocabulary).
                let mut counts = [0usize; SPECIAL_GROUP + 1];
                mask.iter_set_entries(|t| {
                    if let Some(g) = allowed_group(grammar, t, eos) {
                        counts[g] += 1;
                    }
                });
                let choices: Vec<(u32, f64)> = (0..counts.len())
                    .filter(|&g| counts[g] > 0)
                    .map(|g| (g as u32, group_weight(g, ws_run)))
                    .collect();
                if choices.is_empty() {
                    if m.is_accepting().unwrap_or(false) {
                        break;
                    }
                    return None;
                }
                let g = draw(&mut rng, &choices) as usize;
                let k = rng.random_range(0..counts[g]);
                let mut seen = 0usize;
                let mut pick = None;
                mask.iter_set_entries(|t| {
                    if pick.is_none() && allowed_group(grammar, t, eos) == Some(g) {
                        if seen == k {
                            pick = u32::try_from(t).ok();
                        }
                        seen += 1;
                    }
                });
                pick?
            }
        };
        if m.consume_token(chosen).is_err() {
            return None;
        }
        let bytes = grammar.token_bytes(chosen);
        out.extend_from_slice(bytes);
        free_run += bytes.len();
        ws_run = if !bytes.is_empty() && bytes.iter().all(u8::is_ascii_whitespace) {
            ws_run + 1
        } else {
            0
        };
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matcher::Acceptance;

    const TOOLS: &str = r#"start: "<think>" think answer
think[lazy]: /(?s:.*)<\/think>/
answer: call* "<|im_end|>"
call: "<tool_call>" %json{"type": "object", "properties": {"name": {"const": "f"}, "arguments": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}, "required": ["name", "arguments"]} "</tool_call>"
"#;

    #[test]
    fn literals_are_the_grammars_strings_not_its_regexes_or_schemas() {
        assert_eq!(
            lark_literals(TOOLS),
            [
                "</tool_call>",
                "<tool_call>",
                "<|im_end|>",
                "</think>",
                "<think>"
            ]
        );
    }

    #[test]
    fn walks_are_in_the_language_and_repeat_with_their_seed() {
        let g = Grammar::from_lark(TOOLS).unwrap();
        let lits = lark_literals(TOOLS);
        let opts = WalkOptions::default();
        let walks: Vec<String> = (0..40).filter_map(|i| walk(&g, &lits, i, &opts)).collect();
        assert!(walks.len() >= 30, "{} of 40 walks finished", walks.len());
        for w in &walks {
            assert_eq!(g.accepts(w), Acceptance::Accepted, "{w:?}");
        }
        assert!(walks.iter().any(|w| w.contains("<tool_call>")), "{walks:?}");
        assert_eq!(walk(&g, &lits, 7, &opts), walk(&g, &lits, 7, &opts));
    }
}

#[cfg(test)]
mod model_tests {
    use super::*;
    use crate::matcher::{Acceptance, Vocabulary};

    #[test]
    fn walks_over_a_models_tokens_end_with_its_special_token() {
        let json: serde_json::Value =
            serde_json::from_str(include_str!("../../../samples/qwen3/tokenizer.json")).unwrap();
        let v = Vocabulary::from_tokenizer_json(&json).unwrap();
        let lark = "start: \"<think>\" think \"</think>\" ANSWER <|im_end|>\nthink: /[a-z ]{0,30}/\nANSWER: /[^<]{0,40}/\n";
        let g = Grammar::new(lark, &v).unwrap();
        let lits = lark_literals(lark);
        let walks: Vec<String> = (0..30)
            .filter_map(|i| walk(&g, &lits, i, &WalkOptions::default()))
            .collect();
        assert!(walks.len() >= 25, "{walks:?}");
        for w in &walks {
            assert!(
                w.starts_with("<think>") && w.ends_with("<|im_end|>"),
                "{w:?}"
            );
            assert_eq!(g.accepts(w), Acceptance::Accepted, "{w:?}");
        }
    }
}

#[cfg(test)]
mod regex_tests {
    #[test]
    fn printable_escapes_stay_in_a_run_and_exclusions_are_delimiters() {
        assert_eq!(
            super::regex_runs(r#"<invoke\x{20}name="f">\x{0}<p\u0020q>"#),
            ["<invoke name=\"f\">", "<p q>"]
        );
        assert_eq!(
            super::lark_delimiters(
                "T: /(?s:.+)/ & ~/(?s:.*)(?:<\\/invoke>|<\\/parameter>)(?s:.*)/ & ~/[\\t ]+/\nA: /<b>/\n"
            ),
            ["</parameter>", "</invoke>"]
        );
    }

    #[test]
    fn regex_runs_are_its_literal_stretches() {
        assert_eq!(
            super::regex_runs(r"\s*(?:<\|im_end\|>|<\|endoftext\|>)x"),
            ["<|im_end|>", "<|endoftext|>"]
        );
        assert_eq!(
            super::regex_runs(r"(?s:.*)<\/think>\n"),
            ["<", "</think>\n"][1..]
        );
    }
}
