//! Deeply nested patterns: refused where the reference's recursion gives up, and every depth
//! that is accepted compiles and matches on an ordinary 2 MiB thread stack.

use pyregex::{Flags, Regex, RegexError};

/// A form's name, how to nest it `n` levels, and the deepest nesting accepted.
type Form = (&'static str, fn(usize) -> String, usize);

/// Each form with the deepest nesting the reference accepts when transformers loads a template
/// (measured: one level more raises `RecursionError`).
fn forms() -> Vec<Form> {
    vec![
        (
            "capture",
            |n| format!("{}a{}", "(".repeat(n), ")".repeat(n)),
            327,
        ),
        (
            "non-capture",
            |n| format!("{}a{}", "(?:".repeat(n), ")".repeat(n)),
            196,
        ),
        (
            "flags",
            |n| format!("{}a{}", "(?i:".repeat(n), ")".repeat(n)),
            196,
        ),
        (
            "alternation",
            |n| format!("{}a{}", "(?:a|".repeat(n), ")".repeat(n)),
            196,
        ),
        (
            "lookahead",
            |n| format!("{}a{}", "(?=".repeat(n), ")".repeat(n)),
            245,
        ),
        (
            "lookbehind",
            |n| format!("{}a{}", "(?<=".repeat(n), ")".repeat(n)),
            245,
        ),
        (
            "atomic",
            |n| format!("{}a{}", "(?>".repeat(n), ")".repeat(n)),
            245,
        ),
        (
            "group chain",
            |n| format!("{}a{}", "(b".repeat(n), ")".repeat(n)),
            247,
        ),
        (
            "repeats",
            |n| format!("{}a{}", "(?:".repeat(n), ")*".repeat(n)),
            196,
        ),
        (
            "capture of non-capture",
            |n| format!("{}a{}", "((?:".repeat(n), "))".repeat(n)),
            122,
        ),
        (
            "lookahead of capture",
            |n| format!("{}a{}", "(?=(".repeat(n), "))".repeat(n)),
            140,
        ),
        (
            "named",
            |n| {
                let open: String = (0..n).map(|i| format!("(?P<g{i}>")).collect();
                format!("{open}a{}", ")".repeat(n))
            },
            245,
        ),
    ]
}

fn compile(p: &str) -> Result<Regex, RegexError> {
    Regex::new(p, Flags { dotall: true })
}

#[test]
fn nesting_is_refused_at_the_reference_depth() {
    for (name, make, max) in forms() {
        if let Err(e) = compile(&make(max)) {
            panic!("{name}: depth {max} should compile: {e}");
        }
        match compile(&make(max + 1)) {
            Err(RegexError::TooDeep { position, .. }) => {
                assert!(position < make(max + 1).chars().count(), "{name}");
            }
            other => panic!("{name}: depth {} should be refused: {other:?}", max + 1),
        }
    }
    // Far deeper nesting is refused the same way, without exhausting the stack.
    let e = compile(&format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000))).unwrap_err();
    assert!(e.to_string().contains("nested too deeply"), "{e}");
}

#[test]
fn the_deepest_accepted_patterns_run_on_a_2_mib_stack() {
    let worker = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            for (name, make, max) in forms() {
                let re = compile(&make(max)).unwrap_or_else(|e| panic!("{name}: {e}"));
                let hay = format!("{}a{}", "b".repeat(max), "b".repeat(max));
                let _ = re.search(&hay, 0).unwrap();
                let _ = re.search_partial(&hay[..hay.len() / 2], 0).unwrap();
                let _ = re.match_at(&hay, 0).unwrap();
                let _ = re.find_iter(&hay).count();
                let _ = pyregex::parse_tree(&make(max), Flags { dotall: true }).unwrap();
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
                let _ = re.stuck_at("c", 0, deadline);
                assert!(compile(&make(max + 1)).is_err());
            }
        })
        .expect("spawn");
    worker.join().expect("no stack overflow");
}
