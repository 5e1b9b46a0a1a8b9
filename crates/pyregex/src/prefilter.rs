//! Candidate start positions. The reference only tries a match where its "required string" and
//! its "first set" allow one; doing the same here is both a fast prefilter (memchr/memmem) and
//! necessary for identical partial results, since a start the reference never tries can never be
//! reported as partial.

use memchr::memmem;

use super::backtrack::look_holds;
use super::charset::CharSet;
use super::prog::{LitCase, Look, Program, Required, StartTest};
use super::unicode::{Fold, full_fold, other_cases, other_cases_ascii, same_folded_turkic};
use super::utf8::{next_char, prev_char};

/// Search-local memory of the prefilter: where the required string was last found in full (the
/// reference's `req_pos`) and the last results of literal searches, so that scanning a long text
/// stays linear.
#[derive(Default)]
pub(crate) struct ScanState {
    pub req_pos: Option<usize>,
    req_cache: Option<(usize, usize, bool)>,
    lit_cache: Option<(usize, usize, bool)>,
    /// The last start the start test gave is where the text ends with a prefix of its literal
    /// (partial mode).
    pub literal_partial: bool,
}

impl ScanState {
    /// The state for the partial pass that follows a complete pass: only `req_pos` carries over.
    pub(crate) fn for_partial_pass(&self) -> ScanState {
        ScanState {
            req_pos: self.req_pos,
            req_cache: None,
            lit_cache: None,
            literal_partial: false,
        }
    }
}

/// Finds a literal from `t`, reusing the previous answer when `t` lies between the previous
/// start and the previous find (the first occurrence cannot have changed).
fn cached_find(
    scan: &ReqScan,
    cache: &mut Option<(usize, usize, bool)>,
    hay: &str,
    t: usize,
    partial: bool,
) -> Option<(usize, bool)> {
    if let Some((from, f, is_partial)) = *cache
        && from <= t
        && t <= f
    {
        return Some((f, is_partial));
    }
    let r = scan.find_ex(hay, t, partial);
    *cache = r.map(|(f, p)| (t, f, p));
    r
}

/// How to find the next possible start.
pub(crate) struct Prefilter {
    test: Test,
    required: Option<ReqScan>,
    /// The start test is the required string (see `Program::start_is_required`).
    test_is_required: bool,
    /// The required string is a string under full case folding in the pattern, which the
    /// matcher takes as matched where the search found it.
    req_shortcut: bool,
}

enum Test {
    Anywhere,
    Anchored,
    Class(FirstScan),
    Literal(ReqScan),
    At(Look),
}

impl std::fmt::Debug for Prefilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let test = match &self.test {
            Test::Anywhere => "anywhere".to_string(),
            Test::Anchored => "anchored".to_string(),
            Test::Class(c) => format!("{:?}", c.set),
            Test::Literal(r) => format!("{:?}", r.req),
            Test::At(l) => format!("{l:?}"),
        };
        f.debug_struct("Prefilter")
            .field("start_test", &test)
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
    /// The start test and required-string scan of `prog`.
    pub(crate) fn new(prog: &Program) -> Prefilter {
        let req_scan = |req: Required| {
            let finder = (req.case == LitCase::Exact && !req.text.is_empty())
                .then(|| memmem::Finder::new(req.text.as_bytes()).into_owned());
            ReqScan {
                req,
                finder,
                ascii_pattern: prog.ascii,
            }
        };
        let test = match &prog.start_test {
            StartTest::Anywhere => Test::Anywhere,
            StartTest::Anchored => Test::Anchored,
            StartTest::Class(set) => {
                let lead = set.first_bytes();
                let needles: Vec<u8> = (0..=255u8).filter(|&b| lead[b as usize]).collect();
                Test::Class(FirstScan {
                    set: set.clone(),
                    lead,
                    needles,
                })
            }
            StartTest::Literal { chars, case } => {
                let text: String = chars.iter().filter_map(|&c| char::from_u32(c)).collect();
                let text = if text.chars().count() == chars.len() {
                    text
                } else {
                    String::new()
                };
                Test::Literal(req_scan(Required {
                    chars: chars.clone(),
                    text,
                    case: *case,
                    offset: Some(0),
                }))
            }
            StartTest::At(look) => Test::At(*look),
        };
        let required = prog.required.clone().map(req_scan);
        let req_shortcut = prog
            .insts
            .iter()
            .any(|i| matches!(i, super::prog::Inst::StrFold { req: true, .. }));
        Prefilter {
            test,
            test_is_required: prog.start_is_required && required.is_some(),
            required,
            req_shortcut,
        }
    }

    /// Whether the matcher takes the required string as matched where it was found (see
    /// [`Prefilter::required_within_reach`]).
    pub(crate) fn required_taken_as_matched(&self) -> bool {
        self.req_shortcut
    }

    /// The reference's required-string check before an anchored attempt at `t` (`match`):
    /// `false` when the attempt cannot succeed; `req_pos` is where the string was found.
    pub(crate) fn required_within_reach(
        &self,
        hay: &str,
        t: usize,
        req_pos: &mut Option<usize>,
    ) -> bool {
        match &self.required {
            Some(r) => r.within_reach(hay, t, false, req_pos),
            None => true,
        }
    }

    /// Whether the start test looks for a string under full case folding: the reference then
    /// reports a partial match wherever that search runs into the end of the text, without
    /// trying a match there.
    pub(crate) fn folded_literal_test(&self) -> bool {
        matches!(&self.test, Test::Literal(r) if r.req.case == LitCase::Fold)
    }

    /// Whether jumping ahead changes which later starts are tried: only a required string with
    /// a bounded offset makes the candidates depend on where the scan started.
    pub(crate) fn skipping_is_free(&self) -> bool {
        self.required
            .as_ref()
            .is_none_or(|r| r.req.offset.is_none())
    }

    /// The next position at or after `t` where a match may start, mirroring the reference's
    /// required-string and start tests; `None` when no further start is possible.
    ///
    /// `req_pos` is where the required string was last found in full. Like the reference, the
    /// string is only looked for again once the search has reached that position, and the value
    /// carries over from a complete search to the partial search that follows it.
    pub(crate) fn next(
        &self,
        hay: &str,
        mut t: usize,
        partial: bool,
        st: &mut ScanState,
    ) -> Option<usize> {
        if let Test::Anchored = self.test {
            // An anchored pattern makes a single attempt at 0; the required string must then be
            // found within its reach (the reference's non-search check).
            if t != 0 {
                return None;
            }
            if let Some(r) = &self.required
                && st.req_pos.is_none_or(|rp| t >= rp)
                && !r.within_reach(hay, t, partial, &mut st.req_pos)
            {
                return None;
            }
            return Some(0);
        }
        if let Some(r) = &self.required
            && st.req_pos.is_none_or(|rp| t >= rp)
        {
            let (f, is_partial) = cached_find(r, &mut st.req_cache, hay, t, partial)?;
            if !is_partial {
                st.req_pos = Some(f);
            }
            if let Some(k) = r.req.offset
                && let Some(s) = back_chars(hay.as_bytes(), f, k)
                && s > t
            {
                t = s;
            }
        }
        if self.test_is_required {
            // The reference does not run a start test that is its required string: every
            // position the required string leaves is tried.
            st.literal_partial = false;
            return Some(t);
        }
        match &self.test {
            Test::Anywhere => Some(t),
            Test::Anchored => (t == 0).then_some(0),
            Test::Class(fs) => Some(fs.scan(hay, t)),
            Test::Literal(r) => {
                let found = cached_find(r, &mut st.lit_cache, hay, t, partial);
                st.literal_partial = found.is_none_or(|(_, p)| p);
                found.map(|(f, _)| f).or(Some(hay.len()))
            }
            Test::At(look) => next_at(hay.as_bytes(), *look, t),
        }
    }
}

/// The first position at or after `t` where `look` holds.
fn next_at(bytes: &[u8], look: Look, t: usize) -> Option<usize> {
    let len = bytes.len();
    match look {
        Look::EndOfString => Some(len),
        Look::EndOfStringLine => {
            if len > 0 && t < len && bytes[len - 1] == b'\n' {
                Some(len - 1)
            } else {
                Some(len)
            }
        }
        Look::EndOfLine => Some(memchr::memchr(b'\n', &bytes[t..]).map_or(len, |i| t + i)),
        Look::StartOfLine => {
            if t == 0 {
                Some(0)
            } else {
                // After a newline at or after `t - 1`.
                memchr::memchr(b'\n', &bytes[t - 1..]).map(|i| t + i)
            }
        }
        _ => {
            let mut p = t;
            loop {
                if look_holds(bytes, look, p) {
                    return Some(p);
                }
                p += next_char(bytes, p)?.1;
            }
        }
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
                3 => memchr::memchr3(
                    self.needles[0],
                    self.needles[1],
                    self.needles[2],
                    &bytes[p..],
                ),
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
        if self.req.case == LitCase::Exact {
            return false;
        }
        if self.ascii_pattern {
            other_cases_ascii(text) == Some(pattern)
        } else {
            other_cases(text).contains(&pattern)
        }
    }

    /// The reference's required-string check for a non-searching attempt at `t`: the literal
    /// is looked for only up to `offset + len` characters from `t`, and the attempt goes ahead
    /// only if that does not place the match start after `t`.
    fn within_reach(
        &self,
        hay: &str,
        t: usize,
        partial: bool,
        req_pos: &mut Option<usize>,
    ) -> bool {
        let bytes = hay.as_bytes();
        let Some(off) = self.req.offset else {
            // No bound on the offset: the literal just has to occur somewhere after `t`.
            return self.find(hay, t, partial).is_some();
        };
        // The window end, in bytes.
        let mut limit = t;
        for _ in 0..off + self.req.chars.len() {
            match next_char(bytes, limit) {
                Some((_, n)) => limit += n,
                None => break,
            }
        }
        let window = &hay[..limit];
        // The reference's folding search reports partial only at the end of the text.
        let partial = partial && (self.req.case != LitCase::Fold || limit == bytes.len());
        let Some((f, is_partial)) = self.find_ex(window, t, partial) else {
            return false;
        };
        if !is_partial {
            *req_pos = Some(f);
        }
        match back_chars(bytes, f, off) {
            Some(s) if s >= t => s == t,
            _ => true,
        }
    }

    fn find(&self, hay: &str, t: usize, partial: bool) -> Option<usize> {
        self.find_ex(hay, t, partial).map(|(p, _)| p)
    }

    /// The first position at or after `t` where the literal occurs (`false`), or (in partial
    /// mode) where the text ends with a proper prefix of it (`true`); partial mode always finds
    /// the end itself.
    fn find_ex(&self, hay: &str, t: usize, partial: bool) -> Option<(usize, bool)> {
        if self.req.case == LitCase::Fold {
            return self.find_fold(hay, t, partial);
        }
        let bytes = hay.as_bytes();
        if let Some(finder) = &self.finder {
            if let Some(i) = finder.find(&bytes[t..]) {
                return Some((t + i, false));
            }
            if !partial {
                return None;
            }
            let lit = self.req.text.as_bytes();
            let mut p = bytes.len().saturating_sub(lit.len() - 1).max(t);
            while p < bytes.len() {
                if hay.is_char_boundary(p) && lit.starts_with(&bytes[p..]) {
                    return Some((p, true));
                }
                p += 1;
            }
            return Some((bytes.len(), true));
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
                        return if partial { Some((p, true)) } else { None };
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
                return Some((p, false));
            }
            match next_char(bytes, p) {
                Some((_, n)) => p += n,
                None => break,
            }
        }
        if partial {
            Some((bytes.len(), true))
        } else {
            None
        }
    }

    /// The reference's search for a string under full case folding: from each start, the
    /// text's characters are folded and compared with the folded string (only equal characters,
    /// or Turkic I/i variants, compare equal here); a character's folding must not be cut by the
    /// string's end. Partial mode finds the first start from which the whole rest of the text
    /// spells a prefix of the string (at worst the end itself).
    fn find_fold(&self, hay: &str, t: usize, partial: bool) -> Option<(usize, bool)> {
        let bytes = hay.as_bytes();
        let values = &self.req.chars;
        let mut start = t;
        'starts: loop {
            let mut p = start;
            let mut s = 0;
            let mut fold = Fold::default();
            let mut f = 0;
            while s < values.len() || f < fold.chars().len() {
                if f >= fold.chars().len() {
                    let Some((c, _)) = next_char(bytes, p) else {
                        return partial.then_some((start, true));
                    };
                    fold = full_fold(c, self.ascii_pattern);
                    f = 0;
                }
                if s < values.len()
                    && same_folded_turkic(values[s], fold.chars()[f], self.ascii_pattern)
                {
                    s += 1;
                    f += 1;
                    if f >= fold.chars().len() {
                        p += next_char(bytes, p).expect("folded it").1;
                    }
                } else {
                    start += next_char(bytes, start).expect("a character was read").1;
                    continue 'starts;
                }
            }
            return Some((start, false));
        }
    }
}
