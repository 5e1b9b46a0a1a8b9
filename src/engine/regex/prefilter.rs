//! Candidate start positions. The reference only tries a match where its "required string" and
//! its "first set" allow one; doing the same here is both a fast prefilter (memchr/memmem) and
//! necessary for identical partial results, since a start the reference never tries can never be
//! reported as partial.

use memchr::memmem;

use super::charset::CharSet;
use super::prog::{Program, Required};
use super::unicode::{other_cases, other_cases_ascii};
use super::utf8::{next_char, prev_char};

/// How to find the next possible start.
pub struct Prefilter {
    first: Option<FirstScan>,
    required: Option<ReqScan>,
}

impl std::fmt::Debug for Prefilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefilter")
            .field("first_set", &self.first.as_ref().map(|s| &s.set))
            .field("required", &self.required.as_ref().map(|r| &r.req))
            .finish()
    }
}

struct FirstScan {
    set: CharSet,
    /// UTF-8 lead bytes of the members.
    lead: [bool; 256],
    /// When the lead bytes are at most three, they are found with `memchr`.
    needles: Vec<u8>,
}

struct ReqScan {
    req: Required,
    finder: Option<memmem::Finder<'static>>,
    ascii_pattern: bool,
}

impl Prefilter {
    pub fn new(prog: &Program) -> Prefilter {
        let first = prog.firstset.as_ref().map(|set| {
            let lead = set.first_bytes();
            let needles: Vec<u8> = (0..=255u8).filter(|&b| lead[b as usize]).collect();
            FirstScan { set: set.clone(), lead, needles }
        });
        let required = prog.required.clone().map(|req| {
            let finder = (!req.ign && !req.text.is_empty()).then(|| memmem::Finder::new(req.text.as_bytes()).into_owned());
            ReqScan { req, finder, ascii_pattern: prog.ascii }
        });
        Prefilter { first, required }
    }

    /// The next position at or after `t` where a match may start, mirroring the reference's
    /// required-string and first-set checks; `None` when no further start is possible.
    pub fn next(&self, hay: &str, mut t: usize, partial: bool) -> Option<usize> {
        if let Some(r) = &self.required {
            let f = r.find(hay, t, partial)?;
            if let Some(k) = r.req.offset {
                if let Some(s) = back_chars(hay.as_bytes(), f, k) {
                    if s > t {
                        t = s;
                    }
                }
            }
        }
        if let Some(fs) = &self.first {
            return Some(fs.scan(hay, t));
        }
        Some(t)
    }
}

/// `pos` moved back `k` characters, if there are that many.
fn back_chars(bytes: &[u8], mut pos: usize, k: usize) -> Option<usize> {
    for _ in 0..k {
        pos -= prev_char(bytes, pos)?.1;
    }
    Some(pos)
}

impl FirstScan {
    /// The first position at or after `t` whose character is in the set, or the end.
    fn scan(&self, hay: &str, t: usize) -> usize {
        let bytes = hay.as_bytes();
        let mut p = t;
        loop {
            let found = match self.needles.len() {
                0 => None,
                1 => memchr::memchr(self.needles[0], &bytes[p..]),
                2 => memchr::memchr2(self.needles[0], self.needles[1], &bytes[p..]),
                3 => memchr::memchr3(self.needles[0], self.needles[1], self.needles[2], &bytes[p..]),
                _ => bytes[p..].iter().position(|&b| self.lead[b as usize]),
            };
            let Some(i) = found else { return bytes.len() };
            p += i;
            // `p` is on a lead byte, hence a character boundary.
            let (c, n) = next_char(bytes, p).expect("in bounds");
            if self.set.contains(c) {
                return p;
            }
            p += n;
        }
    }
}

impl ReqScan {
    fn same(&self, pattern: u32, text: u32) -> bool {
        if pattern == text {
            return true;
        }
        if !self.req.ign {
            return false;
        }
        if self.ascii_pattern { other_cases_ascii(text) == Some(pattern) } else { other_cases(text).contains(&pattern) }
    }

    /// The first position at or after `t` where the literal occurs, or (in partial mode) where
    /// the text ends with a proper prefix of it; partial mode always finds the end itself.
    fn find(&self, hay: &str, t: usize, partial: bool) -> Option<usize> {
        let bytes = hay.as_bytes();
        if let Some(finder) = &self.finder {
            if let Some(i) = finder.find(&bytes[t..]) {
                return Some(t + i);
            }
            if !partial {
                return None;
            }
            let lit = self.req.text.as_bytes();
            let mut p = bytes.len().saturating_sub(lit.len() - 1).max(t);
            while p < bytes.len() {
                if hay.is_char_boundary(p) && lit.starts_with(&bytes[p..]) {
                    return Some(p);
                }
                p += 1;
            }
            return Some(bytes.len());
        }
        // Case-insensitive (or surrogate-containing) literal: scan.
        let mut p = t;
        while p <= bytes.len() {
            let mut q = p;
            let mut ok = true;
            for &pc in &self.req.chars {
                match next_char(bytes, q) {
                    None => {
                        // Ran off the end with everything so far matching.
                        return if partial { Some(p) } else { None };
                    }
                    Some((c, n)) => {
                        if !self.same(pc, c) {
                            ok = false;
                            break;
                        }
                        q += n;
                    }
                }
            }
            if ok {
                return Some(p);
            }
            match next_char(bytes, p) {
                Some((_, n)) => p += n,
                None => break,
            }
        }
        if partial { Some(bytes.len()) } else { None }
    }
}
