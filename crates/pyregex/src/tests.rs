//! Unit tests of the public API on hand-picked cases measured on the reference.

use super::*;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn re(p: &str) -> Regex {
    Regex::new(p, Flags { dotall: true }).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn span(p: &str, h: &str) -> Option<(usize, usize)> {
    re(p).search(h, 0).unwrap().map(|m| (m.start(), m.end()))
}

/// Partial search as (start, end, complete) with end = len for partials, like the reference.
fn partial(p: &str, h: &str) -> (usize, usize, char) {
    match re(p).search_partial(h, 0).unwrap() {
        Partial::Complete(m) => (m.start(), m.end(), 'C'),
        Partial::Partial { start } => (start, h.len(), 'P'),
    }
}

#[test]
fn basic_search() {
    assert_eq!(span("a+", "xaay"), Some((1, 3)));
    assert_eq!(span("a|ab", "ab"), Some((0, 1)));
    assert_eq!(span("(a|ab)(c|bcd)(d*)", "abcd"), Some((0, 4)));
    assert_eq!(span("x*", "ab"), Some((0, 0)));
    assert_eq!(span("$", "a\n"), Some((1, 1)));
    assert_eq!(span("\\Z", "a\n"), Some((2, 2)));
    assert_eq!(span("(?<=a)b", "ab"), Some((1, 2)));
    assert_eq!(span("é+", "xéé"), Some((1, 5)));
}

#[test]
fn brief_partial_examples() {
    let cases: &[(&str, &str, (usize, usize, char))] = &[
        ("a\\bc", "xa", (1, 2, 'P')),
        ("a\\Bc", "xa", (2, 2, 'P')),
        ("a$c", "xa", (1, 2, 'P')),
        ("a\\Zc", "xa", (1, 2, 'P')),
        ("a(?=bc)", "xab", (1, 3, 'P')),
        ("a(?=bc)", "xa", (1, 2, 'P')),
        ("a(?!bc)", "xab", (1, 2, 'C')),
        ("a(?!bc)d", "xab", (1, 3, 'P')),
        ("(?=<x>)", "ab<x", (2, 4, 'P')),
        ("(?=<x>)<x>y", "<x>q", (4, 4, 'P')),
        ("a(?=b)c", "xa", (1, 2, 'P')),
        ("a\\b", "xa", (1, 2, 'C')),
        ("a\\Z", "xa\n", (3, 3, 'P')),
        ("a$", "xa\nb", (4, 4, 'P')),
        ("(a)\\1", "xa", (1, 2, 'P')),
        ("(a)\\1", "xab", (3, 3, 'P')),
        ("(?>a+)b", "xaa", (1, 3, 'P')),
        ("a++b", "xaa", (1, 3, 'P')),
        ("ab|a", "xa", (1, 2, 'C')),
        ("abc|b", "xab", (2, 3, 'C')),
        ("x*", "ab", (0, 0, 'C')),
        ("a{2,3}b", "xaa", (1, 3, 'P')),
        ("a{0,3}?b", "xaaaa", (2, 5, 'P')),
        ("[ab]", "x", (1, 1, 'P')),
        ("a.*b|c", "a c", (2, 3, 'C')),
        ("\\w+:", "ab", (0, 2, 'P')),
        ("a\\s*b", "a  ", (0, 3, 'P')),
        ("(?i)ß", "xs", (2, 2, 'P')),
    ];
    for &(p, h, want) in cases {
        assert_eq!(partial(p, h), want, "{p:?} on {h:?}");
    }
}

#[test]
fn lazy_quirk_is_not_copied() {
    // The reference reports these as partial; no continuation can complete them.
    assert_eq!(partial("a*?b", "xac"), (3, 3, 'P'));
    assert_eq!(partial("x+?yz", "xxyq"), (4, 4, 'P'));
}

/// A partial search's answer: start, end and `C` (complete) or `P` (partial).
type Answer = (usize, usize, char);

/// The partial search streaming uses, reproducing the reference's lazy-repeat scan.
fn partial_like_reference(p: &str, h: &str, pos: usize) -> Answer {
    match re(p).search_partial_lazy_like_reference(h, pos).unwrap() {
        Partial::Complete(m) => (m.start(), m.end(), 'C'),
        Partial::Partial { start } => (start, h.len(), 'P'),
    }
}

#[test]
fn lazy_scan_before_a_one_character_tail_is_partial_at_the_last_character() {
    // Recorded on the reference: when its scan for the tail's character reaches the text's last
    // character, it reports partial before checking the repeat's maximum or set.
    let cases: &[(&str, &str, usize, Answer)] = &[
        (r"\|\][^<\n]{0,3}?>", "\"|]zz]\"", 1, (1, 7, 'P')),
        (r"\|\][^<\n]{0,3}?>", "|]aaaa", 0, (0, 6, 'P')),
        (r"\|\][^<\n]{0,3}?>", "|]aaaaa", 0, (7, 7, 'P')),
        (r"\|\][^<\n]{0,3}?>", "|]<", 0, (0, 3, 'P')),
        (r"\|\][^<\n]{0,3}?>", "|]a<", 0, (0, 4, 'P')),
        (r"\|\][^<\n]{0,3}?>", "|]a<b", 0, (5, 5, 'P')),
        (r"\|\][^<\n]{0,3}?>", "|]zzz>", 0, (0, 6, 'C')),
        ("x[^<]{0,2}?>", "xaaa", 0, (0, 4, 'P')),
        ("x[^<]{0,2}?>", "xzzzzzzzzz", 0, (10, 10, 'P')),
        ("a{1,3}?>", "aaaa", 0, (0, 4, 'P')),
        ("a{1,3}?>", "aaaaa", 0, (1, 5, 'P')),
    ];
    for &(p, h, pos, want) in cases {
        assert_eq!(partial_like_reference(p, h, pos), want, "{p:?} on {h:?}");
    }
    // The search that follows the definition still reports no start that no path can reach.
    assert_eq!(partial(r"\|\][^<\n]{0,3}?>", "|]<"), (3, 3, 'P'));
    assert_eq!(partial("a{1,3}?>", "aaaa"), (1, 4, 'P'));
}

#[test]
fn finditer_empty_rules() {
    let spans = |p: &str, h: &str| {
        re(p)
            .find_iter(h)
            .map(|m| m.map(|m| (m.start(), m.end())).unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        spans("x*", "abxd"),
        vec![(0, 0), (1, 1), (2, 3), (3, 3), (4, 4)]
    );
    assert_eq!(spans("(?=a)|a", "aa"), vec![(0, 0), (0, 1), (1, 1), (1, 2)]);
}

#[test]
fn groups_and_names() {
    let r = re("(?P<a>x)(b)?(?<c>y)");
    assert_eq!(r.names(), &[("a".to_string(), 1), ("c".to_string(), 3)]);
    let m = r.search("xy", 0).unwrap().unwrap();
    assert_eq!(m.group(1), Some(0..1));
    assert_eq!(m.group(2), None);
    assert_eq!(m.named("c"), Some(1..2));
    let m = re("(?:(a)|b)*").search("ab", 0).unwrap().unwrap();
    assert_eq!(m.group(1), Some(0..1));
    let m = re("(a|)*").search("aab", 0).unwrap().unwrap();
    assert_eq!((m.range(), m.group(1)), (0..2, Some(2..2)));
    let m = re("(?<=(a+))c").search("aac", 0).unwrap().unwrap();
    assert_eq!(m.group(1), Some(0..2));
}

#[test]
fn escape_round_trips() {
    for s in ["a.b", "<|x|>", "a b\n", "[]{}()", "é😀-#&~"] {
        let m = re(&escape(s)).search(s, 0).unwrap().unwrap();
        assert_eq!((m.start(), m.end()), (0, s.len()));
    }
}

/// One search per construct, spans (all groups, in bytes) measured on the reference.
/// Expected spans of every group (0 first), or `None` for no match.
type Spans = Option<&'static [Option<(usize, usize)>]>;

const CONSTRUCTS: &[(&str, &str, Spans)] = &[
    ("$", "a\n", Some(&[Some((1, 1))])),
    ("a$", "a\nb", None),
    ("\\Z", "a\n", Some(&[Some((2, 2))])),
    ("a++a", "aaa", None),
    ("(?>a+)a", "aaa", None),
    ("\\<\\>", "x<>", Some(&[Some((1, 3))])),
    ("[[a]", "[", Some(&[Some((0, 1))])),
    ("[a&&b]", "&", Some(&[Some((0, 1))])),
    ("[a~~b]", "~", Some(&[Some((0, 1))])),
    ("a{,3}", "aaaa", Some(&[Some((0, 3))])),
    ("{name}", "{name}", Some(&[Some((0, 6))])),
    ("a{1", "a{1", Some(&[Some((0, 3))])),
    ("a{x}", "a{x}", Some(&[Some((0, 4))])),
    ("\\101", "A", Some(&[Some((0, 1))])),
    ("\\0", "\u{0000}", Some(&[Some((0, 1))])),
    ("(?#c)a", "a", Some(&[Some((0, 1))])),
    ("\\x41\\u00e9", "Aé", Some(&[Some((0, 3))])),
    ("\\d+", "x١٢3", Some(&[Some((1, 6))])),
    ("\\w+", "é_1!", Some(&[Some((0, 4))])),
    ("\\s+", "a\u{001c} b", Some(&[Some((2, 5))])),
    ("\\W", "é!", Some(&[Some((2, 3))])),
    ("[[:alpha:]]+", "1ab2", Some(&[Some((1, 3))])),
    ("\\p{Lu}+", "aBC", Some(&[Some((1, 3))])),
    ("\\P{L}", "ab1", Some(&[Some((2, 3))])),
    ("[^a-c]", "abd", Some(&[Some((2, 3))])),
    ("[\\w-]+", "a-b c", Some(&[Some((0, 3))])),
    (".", "\n", Some(&[Some((0, 1))])),
    ("^b", "ab", None),
    ("(?m)^b", "a\nb", Some(&[Some((2, 3))])),
    ("(?m)a$", "a\nb", Some(&[Some((0, 1))])),
    ("\\bb", "ab b", Some(&[Some((3, 4))])),
    ("\\Bb", "ab b", Some(&[Some((1, 2))])),
    ("\\Aa", "ba", None),
    ("(a)(b)?", "a", Some(&[Some((0, 1)), Some((0, 1)), None])),
    ("(?P<x>a)(?P=x)", "aa", Some(&[Some((0, 2)), Some((0, 1))])),
    ("(?<y>b)\\g<y>", "bb", Some(&[Some((0, 2)), Some((0, 1))])),
    ("(a|)*", "aab", Some(&[Some((0, 2)), Some((2, 2))])),
    ("(?:(a)|b)*", "ab", Some(&[Some((0, 2)), Some((0, 1))])),
    ("a*?b", "aab", Some(&[Some((0, 3))])),
    ("a{2,3}", "aaaa", Some(&[Some((0, 3))])),
    ("a{2,3}?", "aaaa", Some(&[Some((0, 2))])),
    ("(ab){2}", "ababab", Some(&[Some((0, 4)), Some((2, 4))])),
    ("(?:a|b){3}", "abab", Some(&[Some((0, 3))])),
    ("a(?=b)", "acab", Some(&[Some((2, 3))])),
    ("a(?!b)", "abac", Some(&[Some((2, 3))])),
    ("(?<=a)b", "cbab", Some(&[Some((3, 4))])),
    ("(?<!a)b", "abcb", Some(&[Some((3, 4))])),
    ("(?<=a|bc)d", "bcd", Some(&[Some((2, 3))])),
    ("(?i)abc", "xABC", Some(&[Some((1, 4))])),
    ("(?i)[a-c]+", "ABc", Some(&[Some((0, 3))])),
    ("(?i)k", "K", Some(&[Some((0, 3))])),
    ("(?i)ß", "ẞ", Some(&[Some((0, 3))])),
    ("a(?i)b", "aB", Some(&[Some((0, 2))])),
    ("(?i:a)b", "Ab", Some(&[Some((0, 2))])),
    ("(?x) a b # c", "ab", Some(&[Some((0, 2))])),
];

#[test]
fn each_construct_matches_like_the_reference() {
    for &(p, h, want) in CONSTRUCTS {
        let got = re(p).search(h, 0).unwrap().map(|m| {
            (0..=m.group_count())
                .map(|i| m.group(i).map(|r| (r.start, r.end)))
                .collect::<Vec<_>>()
        });
        assert_eq!(got.as_deref(), want, "{p:?} on {h:?}");
    }
}

#[test]
fn syntax_errors_carry_the_reference_message_and_byte_offset() {
    let err = |p: &str| Regex::new(p, Flags::default()).unwrap_err();
    assert_eq!(
        err("(ab"),
        RegexError::Syntax {
            message: "missing )".into(),
            offset: 3,
            position: 3
        }
    );
    assert_eq!(
        err("é(ab"),
        RegexError::Syntax {
            message: "missing )".into(),
            offset: 5,
            position: 4
        }
    );
    assert_eq!(
        err("[a--b]"),
        RegexError::Syntax {
            message: "bad character range".into(),
            offset: 4,
            position: 4
        }
    );
    assert_eq!(err("a**").to_string(), "multiple repeat at position 2");
    // The message counts code points, as the reference's does; `offset` stays in bytes.
    assert_eq!(
        err("😀[").to_string(),
        "unterminated character set at position 2"
    );
    assert!(matches!(
        err("😀["),
        RegexError::Syntax {
            offset: 5,
            position: 2,
            ..
        }
    ));
    assert!(matches!(
        err("(?R)"),
        RegexError::Unsupported { offset: 0, .. }
    ));
    assert_eq!(
        err(r"é\N{NOPE}"),
        RegexError::Syntax {
            message: "undefined character name".into(),
            offset: 10,
            position: 9
        }
    );
}

#[test]
fn features_report_non_regular_constructs() {
    let f = re("a(?=b)").features();
    assert!(f.lookahead && f.lookaround() && !f.is_regular());
    assert!(re("(a)\\1").features().backrefs);
    assert!(re("a++").features().possessive);
    assert!(re("(?>a)").features().atomic);
    assert!(re("a*?").features().lazy);
    assert!(re("\\bx$").features().word_boundary);
    assert!(re("[a-z]+(?:x|y)*").features().is_regular());
}

#[test]
fn positions_are_byte_offsets_and_lookbehind_sees_before_pos() {
    let r = re("(?<=é)b|^c");
    assert_eq!(r.search("ébc", 2).unwrap().map(|m| m.range()), Some(2..3));
    // `^` matches only at 0, even when the search starts later.
    assert_eq!(r.search("xc", 1).unwrap(), None);
    // A position inside a character is moved to the next boundary.
    assert_eq!(
        re("b").search("éb", 1).unwrap().map(|m| m.range()),
        Some(2..3)
    );
    assert_eq!(
        re("x").match_at("ax", 1).unwrap().map(|m| m.range()),
        Some(1..2)
    );
    assert_eq!(re("x").match_at("ax", 0).unwrap(), None);
}

/// Characters random patterns are made of: syntax, class and property letters, digits,
/// whitespace and multi-byte text.
const PATTERN_CHARS: &str = "()[]{}?*+|^$\\.#-:=!<>PpNgLxuU01289,aAbBwWdDsSzZmM&~' \n\té😀K";
/// Characters random haystacks are made of.
const HAYSTACK_CHARS: &str = "aAbB<>/ \néK😀1_-";

/// Strings of fewer than `max` characters drawn from `pool`.
fn string_from(pool: &'static str, max: usize) -> impl Strategy<Value = String> {
    let chars: Vec<char> = pool.chars().collect();
    proptest::collection::vec(proptest::sample::select(chars), 0..max)
        .prop_map(|cs| cs.into_iter().collect())
}

proptest! {
    // A fixed seed tries the same cases on every run, and nothing is written to disk: a failure
    // prints its shrunk pattern and haystacks, and the next run fails the same way.
    #![proptest_config(ProptestConfig {
        cases: 4000,
        rng_seed: RngSeed::Fixed(0x9E37_79B9_7F4A_7C15),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn never_panics_or_hangs_on_random_patterns(
        pattern in string_from(PATTERN_CHARS, 14),
        dotall in proptest::bool::weighted(2.0 / 3.0),
        haystacks in proptest::collection::vec(string_from(HAYSTACK_CHARS, 12), 3),
    ) {
        let Ok(r) = Regex::new(&pattern, Flags { dotall }) else {
            return Ok(());
        };
        for h in &haystacks {
            for pos in 0..=h.len() + 1 {
                let _ = r.search(h, pos);
                let _ = r.match_at(h, pos);
                let _ = r.search_partial(h, pos);
            }
            for m in r.find_iter(h).take(64) {
                let _ = m;
            }
        }
    }
}

#[test]
fn catastrophic_patterns_stay_fast() {
    let long = "a".repeat(5000);
    for p in [
        "(a*)*b",
        "(a|a)*c",
        "(a+)+$",
        "((a*)*)*x",
        "(?:a|aa)+b",
        "(x+x+)+y",
        "(a*)*\\1b",
        "(?=a*b)a",
    ] {
        let r = re(p);
        let started = std::time::Instant::now();
        let _ = r.search(&long, 0);
        let _ = r.search_partial(&long, 0);
        assert!(
            started.elapsed().as_secs() < 10,
            "{p} took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn regex_is_cheap_to_share_across_threads() {
    fn assert_send_sync<T: Send + Sync + Clone + std::fmt::Debug>() {}
    assert_send_sync::<Regex>();
    let r = re("(?P<k>\\w+)=(?P<v>\\d+)");
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let r = r.clone();
            std::thread::spawn(move || {
                let h = format!("x{i}={i}");
                let m = r.search(&h, 0).unwrap().unwrap();
                (m.named("k").unwrap(), m.named("v").unwrap())
            })
        })
        .collect();
    for (i, h) in handles.into_iter().enumerate() {
        let (k, v) = h.join().unwrap();
        assert_eq!((k, v), (0..2, 3..3 + i.to_string().len()));
    }
}

#[test]
fn huge_repeat_counts_compile_without_unrolling() {
    let r = re("(?:ab){10000,}c");
    let h = "ab".repeat(10_001) + "c";
    assert_eq!(
        r.search(&h, 0).unwrap().map(|m| m.range()),
        Some(0..h.len())
    );
    assert_eq!(
        r.search(&h[2..], 0).unwrap().map(|m| m.range()),
        Some(0..h.len() - 2)
    );
    assert_eq!(r.search(&h[h.len() - 41..], 0).unwrap(), None);
    assert!(matches!(
        r.search_partial(&h[..h.len() - 1], 0).unwrap(),
        Partial::Partial { start: 0 }
    ));
    let r = re("a{4294967294}");
    assert_eq!(r.search("aaa", 0).unwrap(), None);
}

#[test]
fn trees_and_property_names_are_public() {
    let tree = crate::parse_tree(r"(?P<w>\w+)\p{Greek}", crate::Flags::default()).unwrap();
    assert_eq!(tree.group_count, 1);
    assert_eq!(tree.names, vec![("w".to_string(), 1)]);
    let mut keys = Vec::new();
    fn walk(n: &crate::ast::Node, keys: &mut Vec<u32>) {
        use crate::ast::Node;
        match n {
            Node::Seq(v) | Node::Alt(v) => v.iter().for_each(|n| walk(n, keys)),
            Node::Group { node, .. } | Node::Repeat { node, .. } => walk(node, keys),
            Node::Prop { key, .. } => keys.push(*key),
            _ => {}
        }
    }
    walk(&tree.node, &mut keys);
    let names: Vec<_> = keys.iter().map(|&k| crate::property_names(k)).collect();
    assert_eq!(names, vec![Some(("WORD", "Y")), Some(("SCRIPT", "GREEK"))]);
    let greek = crate::property_ranges(keys[1], false);
    assert!(greek.iter().any(|&(a, b)| a <= 0x3B1 && 0x3B1 <= b));
}

/// Delimiter patterns led by a greedy repeat (the bundled templates' `\s*` patterns among
/// them), and some where the resumed search must not take its shortcut (the continuation can
/// extend the run, match empty, or the repeat is lazy or bounded).
const RUN_LED: &[&str] = &[
    r"\s*<tool_call>",
    r"\s*(?:<\|im_end\|>|<\|endoftext\|>)",
    r"\s*<tool_call>(?P<name>[^\n<]+)\n",
    r"\s*<tool_call>\s*<function=(?P<name>[^>\n]+)>",
    r"(\s*)x",
    r"\s+(?=y)z",
    r"[ab]*c",
    r"(?:\s)*<",
    r"\s*\n",
    r"\s*$",
    r"\s*(?:x|\s)",
    r"\s*?<",
    r"\s{0,3}<",
    r"(\s*)\1<",
    r"\s*(?i:x)",
];

/// A text growing a character at a time, searched from where the last result leaves a
/// stream's position (the start of a partial match, the end of a complete one).
fn resumed_equals_fresh(pattern: &str, text: &str) {
    let r = re(pattern);
    let mut resume = Resume::default();
    let mut pos = 0;
    for (i, c) in text.char_indices() {
        let h = &text[..i + c.len_utf8()];
        let fresh = r.search_partial_lazy_like_reference(h, pos).unwrap();
        let resumed = r.search_partial_resuming(h, pos, &mut resume).unwrap();
        assert_eq!(resumed, fresh, "{pattern:?} on {h:?} from {pos}");
        pos = match fresh {
            Partial::Partial { start } => start.clamp(pos, h.len()),
            Partial::Complete(m) => m.end(),
        };
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(0x5EED_0000_0000_0005),
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_resumed_partial_search_equals_a_fresh_one(
        pattern in proptest::sample::select(RUN_LED),
        text in string_from(" \n\t<>/xyzab|téi_", 40),
    ) {
        resumed_equals_fresh(pattern, &text);
    }
}

#[test]
fn a_resumed_partial_search_equals_a_fresh_one_over_delimiter_texts() {
    for p in RUN_LED {
        for t in [
            "  \n <tool_call>get\n</tool_call>  <|im_end|>",
            "\n\n\n   <tool_call> <function=f>  \n",
            "   x y  z \u{3000} <",
        ] {
            resumed_equals_fresh(p, t);
        }
    }
}

/// Matcher steps of `n` partial searches of a run of spaces growing a character at a time.
fn steps_over_growing_run(r: &Regex, n: usize) -> u64 {
    let mut resume = Resume::default();
    let mut h = String::new();
    let before = steps_taken();
    for _ in 0..n {
        h.push(' ');
        assert_eq!(
            r.search_partial_resuming(&h, 0, &mut resume).unwrap(),
            Partial::Partial { start: 0 }
        );
    }
    steps_taken() - before
}

#[test]
fn resumed_partial_searches_over_a_growing_run_take_linear_work() {
    // The patterns whose repeat takes spaces and whose continuation cannot.
    for p in RUN_LED[..6].iter().chain(&RUN_LED[7..8]) {
        let r = re(p);
        let (small, large) = (
            steps_over_growing_run(&r, 1000),
            steps_over_growing_run(&r, 4000),
        );
        // Searching the whole run again each time would grow 16-fold.
        assert!(large <= 5 * small, "{p}: {small} -> {large} steps");
    }
}
