//! The memory a search holds, counted by allocation: a global allocator counts the bytes each
//! thread has allocated and not freed, and their peak, so that the tests of this binary (run
//! on threads of their own) measure only their own searches.

use alloc_count::peak_of;

use super::*;

#[global_allocator]
static ALLOCATOR: alloc_count::Counting = alloc_count::Counting;

/// `((a)` + `k` empty groups + `)*` and `tail`: a repeat that records every group at every
/// iteration, so that its backtrack stack grows by about `k` entries per byte of `a`.
fn groups(k: usize, tail: &str) -> Regex {
    Regex::new(&format!("((a){})*{tail}", "()".repeat(k)), Flags::default()).unwrap()
}

#[test]
fn a_search_stops_at_its_stack_limit_with_the_budget_error() {
    let re = groups(64, "[^a]");
    let limit = 100_000u64;
    // The stack grows by whole chunks (1.5 MB) without moving; a megabyte more for the rest.
    let bound = limit as usize * STACK_ENTRY_BYTES + (5 << 20) / 2;
    // 40 KB of `a` needs over 2.6 million entries (about 67 a byte): the search stops at
    // the limit, holding no more than it.
    let long = "a".repeat(40_000);
    let (result, peak) = peak_of(|| with_stack_limit(limit, || re.search(&long, 0)));
    assert_eq!(result, Err(RegexError::Budget));
    assert!(peak <= bound, "{peak} bytes held, the limit allows {bound}");
    // The same search over 1 KB needs about 67,000 entries: within the limit, it ends.
    let short = "a".repeat(1_000);
    let (result, peak) = peak_of(|| with_stack_limit(limit, || re.search(&short, 0)));
    assert_eq!(result, Ok(None));
    assert!(peak <= bound, "{peak} bytes held");
}

#[test]
fn a_repeat_of_groups_records_one_entry_per_group_and_byte() {
    // Each iteration records the 66 groups it sets (an empty group needs no record of where
    // it began) and its choice point; 72 entries a byte are enough.
    let n = 5_000;
    let text = "a".repeat(n);
    let re = groups(64, r"\Z");
    let result = with_stack_limit(72 * n as u64, || re.search(&text, 0));
    assert_eq!(result.unwrap().map(|m| m.range()), Some(0..n));
}
