//! Search drivers: trying the matcher at candidate start positions for `search`, `match`,
//! partial search and `finditer`.

use super::backtrack::{Matcher, Spans, Stop};
use super::error::RegexError;
use super::prefilter::Prefilter;
use super::prog::Program;

/// The work budget for one search over `len` bytes.
fn budget(len: usize) -> u64 {
    50_000_000 + 512 * (len as u64 + 1)
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
            let c = super::utf8::next_char(hay.as_bytes(), s).expect("in bounds").0;
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
pub fn search(prog: &Program, pre: &Prefilter, hay: &str, pos: usize, must_advance: bool) -> Result<Option<Spans>, RegexError> {
    search_ex(prog, pre, hay, pos, must_advance, &mut None)
}

fn search_ex(
    prog: &Program,
    pre: &Prefilter,
    hay: &str,
    pos: usize,
    must_advance: bool,
    req_pos: &mut Option<usize>,
) -> Result<Option<Spans>, RegexError> {
    let mut m = Matcher::new(prog, hay, false, budget(hay.len()));
    m.set_must_advance(pos, must_advance);
    let mut at = pos;
    while let Some(s) = pre.next(hay, at, false, req_pos) {
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
pub fn match_at(prog: &Program, hay: &str, pos: usize) -> Result<Option<Spans>, RegexError> {
    if !may_start(prog, hay, pos) {
        return Ok(None);
    }
    let mut m = Matcher::new(prog, hay, false, budget(hay.len()));
    m.try_at(pos).map_err(stop_error)
}

/// What a partial search found.
pub enum PartialOutcome {
    Complete(Spans),
    Partial(usize),
}

/// `pattern.search(hay, pos, partial=True)`.
pub fn search_partial(prog: &Program, pre: &Prefilter, hay: &str, pos: usize) -> Result<PartialOutcome, RegexError> {
    // The partial pass inherits where the complete pass last found the required string.
    let mut req_pos = None;
    if let Some(spans) = search_ex(prog, pre, hay, pos, false, &mut req_pos)? {
        return Ok(PartialOutcome::Complete(spans));
    }
    let mut m = Matcher::new(prog, hay, true, budget(hay.len()));
    let mut at = pos;
    while let Some(s) = pre.next(hay, at, true, &mut req_pos) {
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
