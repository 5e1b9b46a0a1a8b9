//! Search drivers: trying the matcher at candidate start positions for `search`, `match`,
//! partial search and `finditer`.

use super::backtrack::{Matcher, Spans, Stop, look_holds};
use super::error::RegexError;
use super::prefilter::{Prefilter, ScanState};
use super::prog::{FoldLead, LitCase, NextTest, Program};
use super::unicode::{Fold, full_fold, other_cases, other_cases_ascii};
use super::utf8::next_char;

/// The work budget for one search over `len` bytes with `prog`: whatever the reference does in
/// ten seconds ([`crate::REFERENCE_TEN_SECONDS`]), and more for long texts (a few steps per
/// byte and instruction, so that any search linear in the text completes). Within a
/// [`crate::Budget`], also no more than the job has left.
fn budget(prog: &Program, len: usize) -> u64 {
    super::budget::limit(
        super::budget::REFERENCE_TEN_SECONDS + (len as u64 + 1) * steps_per_byte(prog),
    )
}

/// The steps per byte of text a search with `prog` is allowed.
pub(crate) fn steps_per_byte(prog: &Program) -> u64 {
    64 + 4 * prog.insts.len() as u64
}

/// Refuses a text longer than the matcher can hold positions of.
fn check_len(hay: &str) -> Result<(), RegexError> {
    if hay.len() > super::backtrack::MAX_TEXT {
        return Err(RegexError::TextTooLong { len: hay.len() });
    }
    Ok(())
}

fn stop_error(s: Stop) -> RegexError {
    match s {
        Stop::Budget => RegexError::Budget,
        Stop::Partial => unreachable!("partial stops only happen in partial mode"),
    }
}

/// Whether a search may try a match starting at `s`: the reference never starts where the
/// character is outside the pattern's first set.
#[inline]
fn may_start(prog: &Program, hay: &str, s: usize) -> bool {
    match &prog.firstset {
        Some(fs) if s < hay.len() => {
            let c = super::utf8::next_char(hay.as_bytes(), s)
                .expect("in bounds")
                .0;
            fs.contains(c)
        }
        _ => true,
    }
}

fn next_boundary(hay: &str, pos: usize) -> usize {
    let mut p = pos + 1;
    while p < hay.len() && !hay.is_char_boundary(p) {
        p += 1;
    }
    p
}

/// `pattern.search(hay, pos)`, optionally refusing an empty match at `pos` (finditer).
pub(crate) fn search(
    prog: &Program,
    pre: &Prefilter,
    hay: &str,
    pos: usize,
    must_advance: bool,
) -> Result<Option<Spans>, RegexError> {
    search_ex(prog, pre, hay, pos, must_advance, &mut ScanState::default())
}

fn search_ex(
    prog: &Program,
    pre: &Prefilter,
    hay: &str,
    pos: usize,
    must_advance: bool,
    st: &mut ScanState,
) -> Result<Option<Spans>, RegexError> {
    check_len(hay)?;
    // Like the reference, give up at once when fewer characters remain than any match needs.
    if prog.min_width > 0
        && hay[pos..]
            .chars()
            .take(prog.min_width.min(usize::MAX as u64) as usize)
            .count()
            < prog.min_width as usize
    {
        return Ok(None);
    }
    let rest = &hay.as_bytes()[pos..];
    if prog
        .must_contain
        .iter()
        .any(|lit| memchr::memmem::find(rest, lit.as_bytes()).is_none())
    {
        return Ok(None);
    }
    let mut m = Matcher::new(prog, hay, false, budget(prog, hay.len()));
    m.set_must_advance(pos, must_advance);
    let mut at = pos;
    while let Some(s) = pre.next(hay, at, false, st) {
        let mut lead_end = None;
        if let Some(lead) = &prog.fold_lead
            && s < hay.len()
        {
            match lead_check(prog, lead, hay, s) {
                // What follows the string needs more text: no match starts here.
                Lead::Partial(_) | Lead::Fail => {
                    at = next_boundary(hay, s);
                    if at >= hay.len() {
                        break;
                    }
                    continue;
                }
                Lead::Try(end) => lead_end = end,
            }
        }
        m.set_req_pos(st.req_pos);
        m.set_lead(lead_end.map(|e| (s, e)));
        if let Some(spans) = m.try_at(s).map_err(stop_error)? {
            return Ok(Some(spans));
        }
        if s >= hay.len() {
            break;
        }
        at = next_boundary(hay, s);
    }
    Ok(None)
}

/// `pattern.match(hay, pos)`.
pub(crate) fn match_at(
    prog: &Program,
    pre: &Prefilter,
    hay: &str,
    pos: usize,
) -> Result<Option<Spans>, RegexError> {
    check_len(hay)?;
    if !may_start(prog, hay, pos) {
        return Ok(None);
    }
    let mut m = Matcher::new(prog, hay, false, budget(prog, hay.len()));
    if pre.required_taken_as_matched() {
        // The reference looks for the required string first (within reach of `pos`), and a
        // folded required string is then taken as matched where it was found.
        let mut req_pos = None;
        if !pre.required_within_reach(hay, pos, &mut req_pos) {
            return Ok(None);
        }
        m.set_req_pos(req_pos);
    }
    m.try_at(pos).map_err(stop_error)
}

/// What a partial search found.
pub(crate) enum PartialOutcome {
    Complete(Spans),
    Partial(usize),
}

/// The smallest start from which a path could consume everything to the end of `hay`.
/// The scan stops at `from`: nothing before it is tried anyway.
fn partial_floor(prog: &Program, hay: &str, from: usize) -> usize {
    let Some((loops, bound)) = &prog.partial_reach else {
        return 0;
    };
    let bytes = hay.as_bytes();
    let mut pos = bytes.len();
    let mut others = 0u64;
    // When the loops take every character but a few ASCII ones, count those with memrchr.
    let outside = loops.complement();
    if outside.ranges().last().is_some_and(|&(_, hi)| hi < 0x80) && outside.len() <= 3 {
        let needles: Vec<u8> = outside
            .ranges()
            .iter()
            .flat_map(|&(a, b)| a..=b)
            .map(|c| c as u8)
            .collect();
        loop {
            let window = &bytes[from..pos];
            let hit = match needles.as_slice() {
                [a] => memchr::memrchr(*a, window),
                [a, b] => memchr::memrchr2(*a, *b, window),
                [a, b, c] => memchr::memrchr3(*a, *b, *c, window),
                _ => return 0,
            };
            let Some(i) = hit.map(|i| from + i) else {
                return 0;
            };
            others += 1;
            if others > *bound {
                return i + 1;
            }
            pos = i;
        }
    }
    while pos > from {
        let Some((c, n)) = super::utf8::prev_char(bytes, pos) else {
            break;
        };
        if !loops.contains(c) {
            others += 1;
            if others > *bound {
                return pos;
            }
        }
        pos -= n;
    }
    0
}

/// What a partial search learnt about the text after its start position, kept for the next
/// partial search of the same text grown at its end (see [`partial_over_run`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunSeen {
    /// The start position, and where the run of the pattern's leading repeat from there ends
    /// (at the end of the text then, or at a character outside the run).
    pub at: Option<(usize, usize)>,
}

/// A partial search's answer for a pattern whose matches all begin with a greedy run of a set
/// that what follows cannot continue (`Program::lead_run`), when every character from `pos` to
/// the end of `hay` is in that set: no complete match can start there or later (the
/// continuation would need a character outside the run where the run's characters, or the
/// end, are), the search offers `pos` as its first start, and the run reaches the end there,
/// so the answer is a partial match at `pos` (returned). `seen` carries how far the run was
/// found to reach, so that searching the same text grown at its end (a stream re-scanning the
/// text it holds back) reads only the new text. `None` when the shortcut does not apply.
pub(crate) fn partial_over_run(
    prog: &Program,
    hay: &str,
    pos: usize,
    seen: &mut RunSeen,
) -> Option<usize> {
    let set = &prog.sets[prog.lead_run? as usize];
    // A longer text is refused by the full search.
    if pos >= hay.len() || hay.len() > super::backtrack::MAX_TEXT {
        return None;
    }
    // Out of budget: the full search reports it.
    if super::budget::limit(1) == 0 {
        return None;
    }
    let from = match seen.at {
        Some((p, end)) if p == pos && pos <= end && end <= hay.len() => end,
        _ => pos,
    };
    let bytes = hay.as_bytes();
    let mut end = from;
    while let Some((c, n)) = next_char(bytes, end) {
        if !set.contains(c) {
            break;
        }
        end += n;
    }
    seen.at = Some((pos, end));
    // Charged like the repeat's own run: an eighth of a step a character.
    super::budget::spend(1 + (end - from) as u64 / 8);
    (end == hay.len()).then_some(pos)
}

/// `pattern.search(hay, pos, partial=True)`.
pub(crate) fn search_partial(
    prog: &Program,
    pre: &Prefilter,
    hay: &str,
    pos: usize,
    lazy_like_reference: bool,
) -> Result<PartialOutcome, RegexError> {
    // The partial pass inherits where the complete pass last found the required string.
    let mut complete = ScanState::default();
    if let Some(spans) = search_ex(prog, pre, hay, pos, false, &mut complete)? {
        return Ok(PartialOutcome::Complete(spans));
    }
    let mut st = complete.for_partial_pass();
    let floor = partial_floor(prog, hay, pos);
    let mut at = pos;
    if floor > at && pre.skipping_is_free() {
        at = floor;
    }
    let mut m = Matcher::new(prog, hay, true, budget(prog, hay.len()));
    m.set_lazy_like_reference(lazy_like_reference);
    let folded_test = pre.folded_literal_test();
    while let Some(s) = pre.next(hay, at, true, &mut st) {
        let mut lead_end = None;
        if folded_test && st.literal_partial {
            // The reference's search for the string ran into the end: it reports partial there
            // without trying a match (which may have failed before the string).
            return Ok(PartialOutcome::Partial(s));
        }
        if let Some(lead) = &prog.fold_lead
            && s < hay.len()
        {
            match lead_check(prog, lead, hay, s) {
                Lead::Partial(p) => return Ok(PartialOutcome::Partial(p)),
                Lead::Fail => {
                    at = next_boundary(hay, s);
                    if at >= hay.len() {
                        // The reference reports the search's own start position here.
                        return Ok(PartialOutcome::Partial(pos));
                    }
                    continue;
                }
                Lead::Try(end) => lead_end = end,
            }
        }
        if s < floor {
            // No path from here can reach the end: skip the attempt, not the bookkeeping.
            at = next_boundary(hay, s);
            continue;
        }
        m.set_req_pos(st.req_pos);
        m.set_lead(lead_end.map(|e| (s, e)));
        match m.try_at(s) {
            Err(Stop::Partial) => return Ok(PartialOutcome::Partial(s)),
            Err(Stop::Budget) => return Err(RegexError::Budget),
            // No complete match exists, so partial mode cannot find one either.
            Ok(Some(_)) | Ok(None) => {}
        }
        if s >= hay.len() {
            break;
        }
        at = next_boundary(hay, s);
    }
    Ok(PartialOutcome::Partial(hay.len()))
}

/// What the reference's search does at a start where a pattern's leading string under full case
/// folding is found (partial mode).
enum Lead {
    /// It reports a partial match starting there.
    Partial(usize),
    /// What follows the string cannot match: the search moves on.
    Fail,
    /// A match is tried, from after the string when it ends where given (the reference's
    /// search compared it itself).
    Try(Option<usize>),
}

/// The reference's search for a pattern whose first node is a string under full case folding:
/// having found the string at `s`, it tests the node after it (`try_match`) before trying a
/// match. Where that test needs more text, the reference reports a partial match without trying
/// one: a string test reports where it began (or, for a folded string found past group or
/// repeat markers, where the text ran out), and a character test leaves the start position unset
/// and the reference reports the second character of the text (a read of an uninitialised
/// position in its search, measured to be 1 in every case).
fn lead_check(prog: &Program, lead: &FoldLead, hay: &str, s: usize) -> Lead {
    let bytes = hay.as_bytes();
    let ascii = prog.ascii;
    // Where the string ends (the prefilter found it at `s`, in full or up to the end).
    let Some(new_pos) = fold_prefix(bytes, s, &lead.chars, ascii, true) else {
        return Lead::Try(None);
    };
    let go = Lead::Try(Some(new_pos));
    match &lead.next {
        NextTest::Succeed => go,
        NextTest::Class(set) => match next_char(bytes, new_pos) {
            None => Lead::Partial(next_char(bytes, 0).map_or(hay.len(), |(_, n)| n)),
            Some((c, _)) if set.contains(c) => go,
            Some(_) => Lead::Fail,
        },
        NextTest::Assert(look) => {
            if look_holds(bytes, *look, new_pos) {
                go
            } else {
                Lead::Fail
            }
        }
        NextTest::Literal {
            chars,
            case,
            skipped,
        } => {
            let same = |value: u32, text: u32| {
                value == text
                    || if ascii {
                        other_cases_ascii(text) == Some(value)
                    } else {
                        other_cases(text).contains(&value)
                    }
            };
            match case {
                LitCase::Exact | LitCase::Ign => {
                    let mut p = new_pos;
                    for &v in chars {
                        match next_char(bytes, p) {
                            None => return Lead::Partial(new_pos),
                            Some((c, n)) => {
                                let ok = if *case == LitCase::Exact {
                                    c == v
                                } else {
                                    same(v, c)
                                };
                                if !ok {
                                    return Lead::Fail;
                                }
                                p += n;
                            }
                        }
                    }
                    go
                }
                LitCase::Fold => {
                    let simple = |value: u32, folded: u32| {
                        value == folded
                            || if ascii {
                                other_cases_ascii(value) == Some(folded)
                            } else {
                                other_cases(value).contains(&folded)
                            }
                    };
                    let mut p = new_pos;
                    let mut fold = Fold::default();
                    let mut f = 0;
                    for &v in chars {
                        if f >= fold.chars().len() {
                            match next_char(bytes, p) {
                                None => {
                                    return Lead::Partial(if *skipped { new_pos } else { p });
                                }
                                Some((c, _)) => {
                                    fold = full_fold(c, ascii);
                                    f = 0;
                                }
                            }
                        }
                        if !simple(v, fold.chars()[f]) {
                            return Lead::Fail;
                        }
                        f += 1;
                        if f >= fold.chars().len() {
                            p += next_char(bytes, p).expect("folded it").1;
                        }
                    }
                    if f < fold.chars().len() {
                        return Lead::Fail;
                    }
                    go
                }
            }
        }
    }
}

/// Where the folded string `chars` ends when the text from `s` spells it (the reference's
/// string search compares folded characters for equality, Turkic I/i variants aside); `None`
/// when the text ends first or differs.
pub(crate) fn fold_prefix(
    bytes: &[u8],
    s: usize,
    chars: &[u32],
    ascii: bool,
    turkic: bool,
) -> Option<usize> {
    let mut p = s;
    let mut fold = Fold::default();
    let mut f = 0;
    let mut i = 0;
    while i < chars.len() || f < fold.chars().len() {
        if f >= fold.chars().len() {
            let (c, _) = next_char(bytes, p)?;
            fold = full_fold(c, ascii);
            f = 0;
        }
        let same = if turkic {
            super::unicode::same_folded_turkic(chars.get(i).copied()?, fold.chars()[f], ascii)
        } else {
            chars.get(i).copied()? == fold.chars()[f]
        };
        if !same {
            return None;
        }
        i += 1;
        f += 1;
        if f >= fold.chars().len() {
            p += next_char(bytes, p)?.1;
        }
    }
    Some(p)
}
