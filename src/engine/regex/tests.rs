//! Unit tests of the public API on hand-picked cases measured on the reference.

use super::*;

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
