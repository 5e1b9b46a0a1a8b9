//! The backtracking matcher. It explores alternatives in the reference's priority order, keeps an
//! undo log so captures and repeat registers are restored exactly on backtracking, and (for
//! programs where it is sound) remembers failed states so that no state is explored twice.
//!
//! In partial mode, any instruction that needs a character beyond the end of the haystack stops
//! the whole search with [`Stop::Partial`]; assertions at the end are evaluated as if the text
//! ended there.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::prog::{Inst, Look, Pc, Program};
use super::unicode::{other_cases, other_cases_ascii};
use super::unicode_tables as t;
use super::utf8::{next_char, prev_char};

const NONE: usize = usize::MAX;

fn is_word(c: u32, ascii: bool) -> bool {
    if c < 128 {
        c as u8 == b'_' || (c as u8).is_ascii_alphanumeric()
    } else {
        !ascii && super::unicode::in_table(t::WORD, c)
    }
}

/// Whether assertion `look` holds at byte `pos` of `bytes` (the end of the text counts as the
/// end: nothing follows it).
pub fn look_holds(bytes: &[u8], look: Look, pos: usize) -> bool {
    let len = bytes.len();
    let word_before = |ascii| prev_char(bytes, pos).is_some_and(|(c, _)| is_word(c, ascii));
    let word_after = |ascii| next_char(bytes, pos).is_some_and(|(c, _)| is_word(c, ascii));
    match look {
        Look::StartOfString => pos == 0,
        Look::StartOfLine => pos == 0 || bytes[pos - 1] == b'\n',
        Look::EndOfString => pos == len,
        Look::EndOfStringLine => pos == len || (pos + 1 == len && bytes[pos] == b'\n'),
        Look::EndOfLine => pos == len || bytes[pos] == b'\n',
        Look::Boundary { positive, ascii } => (word_before(ascii) != word_after(ascii)) == positive,
        Look::StartOfWord { ascii } => !word_before(ascii) && word_after(ascii),
        Look::EndOfWord { ascii } => word_before(ascii) && !word_after(ascii),
    }
}

/// When set, every matcher remembers failed states from its first step instead of after a
/// threshold (results never depend on it; tests use it to exercise the memo).
pub static FORCE_MEMO: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Why a search stopped without a plain answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Partial mode: a path needed text beyond the end.
    Partial,
    /// The work budget ran out.
    Budget,
}

#[derive(Clone, Copy, Debug)]
struct RepState {
    count: u32,
    start: usize,
    cc: u64,
}

#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Resume at `pc` with this position and progress bits.
    Alt { pc: Pc, pos: usize, bits: u32 },
    /// Undo: restore a public group.
    Cap {
        group: u32,
        start: usize,
        end: usize,
    },
    /// Undo: restore a private slot.
    Slot { slot: u32, old: usize },
    /// Undo: restore a repeat register.
    Rep { rep: u32, old: RepState },
    /// Undo: restore the capture-change counter.
    Cc { old: u64 },
    /// A greedy single-character repeat that can give back characters down to `min_pos`.
    Greedy {
        next: Pc,
        start: usize,
        min_pos: usize,
        pos: usize,
        bits: u32,
        rev: bool,
    },
    /// A lazy single-character repeat that can take more characters.
    Lazy {
        pc: Pc,
        start: usize,
        pos: usize,
        count: u32,
        bits: u32,
    },
    /// Backtracking past this frame means every continuation of the state failed.
    Done { key: MemoKey },
    /// Backtracking past this frame means a greedy repeat at `pc` failed for every count from
    /// `from` up to the end of its run at `to`.
    RunDone { pc: Pc, from: usize, to: usize },
}

impl Frame {
    fn is_undo(&self) -> bool {
        matches!(
            self,
            Frame::Cap { .. } | Frame::Slot { .. } | Frame::Rep { .. } | Frame::Cc { .. }
        )
    }
}

#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A matcher state whose continuations can be remembered: instruction, progress bits, position
/// and a digest of the registers that steer matching.
type MemoKey = (Pc, u32, usize, u64);
type MemoSet = HashSet<MemoKey, BuildHasherDefault<KeyHasher>>;

/// One search over one haystack. Reusable across start positions: failed states remembered for
/// one start stay valid for the next.
pub struct Matcher<'a> {
    prog: &'a Program,
    bytes: &'a [u8],
    partial: bool,
    /// Reproduce the reference's lazy fast path at the end of the text (for diagnostics only).
    lazy_like_reference: bool,
    caps: Vec<(usize, usize)>,
    slots: Vec<usize>,
    reps: Vec<RepState>,
    cc: u64,
    stack: Vec<Frame>,
    steps: u64,
    budget: u64,
    memo_on: bool,
    memo_threshold: u64,
    /// States all of whose continuations failed (valid in any context, since a state's
    /// continuations are fixed by the program).
    failed: MemoSet,
    /// Per greedy single-character repeat: a range of start positions known to fail.
    run_failed: Vec<(usize, usize)>,
    anchor: usize,
    must_advance: bool,
}

/// The spans of a successful match: index 0 is the whole match.
pub type Spans = Vec<Option<(usize, usize)>>;

impl<'a> Matcher<'a> {
    pub fn new(prog: &'a Program, hay: &'a str, partial: bool, budget: u64) -> Matcher<'a> {
        Matcher {
            prog,
            bytes: hay.as_bytes(),
            partial,
            lazy_like_reference: false,
            caps: vec![(NONE, NONE); prog.group_count + 1],
            slots: vec![NONE; prog.slot_count],
            reps: vec![
                RepState {
                    count: 0,
                    start: 0,
                    cc: 0
                };
                prog.rep_count
            ],
            cc: 0,
            stack: Vec::new(),
            steps: 0,
            budget,
            memo_on: FORCE_MEMO.load(std::sync::atomic::Ordering::Relaxed),
            memo_threshold: 20_000 + 8 * hay.len() as u64,
            failed: MemoSet::default(),
            run_failed: vec![(usize::MAX, 0); prog.insts.len()],
            anchor: 0,
            must_advance: false,
        }
    }

    /// Makes a lazy single-character repeat that reached the end of the text by taking more
    /// characters fail there instead of reporting partial, as the reference's fast path does.
    pub fn set_lazy_like_reference(&mut self, on: bool) {
        self.lazy_like_reference = on;
    }

    /// Rejects empty matches ending at `anchor` (the `finditer` rule after an empty match).
    pub fn set_must_advance(&mut self, anchor: usize, must_advance: bool) {
        self.anchor = anchor;
        self.must_advance = must_advance;
    }

    /// Tries a match anchored at `start`. `Ok(Some(spans))` on success.
    pub fn try_at(&mut self, start: usize) -> Result<Option<Spans>, Stop> {
        debug_assert!(self.stack.is_empty());
        let r = self.exec(self.prog.start, start, 0, 0);
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                self.unwind(0);
                return Err(e);
            }
        };
        let out = r.map(|end| {
            let mut spans = Vec::with_capacity(self.caps.len());
            spans.push(Some((start, end)));
            for &(s, e) in &self.caps[1..] {
                spans.push(if s == NONE { None } else { Some((s, e)) });
            }
            spans
        });
        self.unwind(0);
        Ok(out)
    }

    /// Pops and undoes every frame above `base`.
    fn unwind(&mut self, base: usize) {
        while self.stack.len() > base {
            let f = self.stack.pop().expect("non-empty");
            self.undo(f);
        }
    }

    #[inline]
    fn undo(&mut self, f: Frame) {
        match f {
            Frame::Cap { group, start, end } => self.caps[group as usize] = (start, end),
            Frame::Slot { slot, old } => self.slots[slot as usize] = old,
            Frame::Rep { rep, old } => self.reps[rep as usize] = old,
            Frame::Cc { old } => self.cc = old,
            _ => {}
        }
    }

    /// Drops the choice points above `base`, keeping the undo records (the body of an atomic
    /// group or a positive lookaround committed to its first success).
    fn cut(&mut self, base: usize) {
        let mut w = base;
        for r in base..self.stack.len() {
            let f = self.stack[r];
            if f.is_undo() {
                self.stack[w] = f;
                w += 1;
            }
        }
        self.stack.truncate(w);
    }

    #[inline]
    fn char_fwd(&self, pos: usize) -> Option<(u32, usize)> {
        next_char(self.bytes, pos)
    }

    #[inline]
    fn char_back(&self, pos: usize) -> Option<(u32, usize)> {
        prev_char(self.bytes, pos)
    }

    #[inline]
    fn check(&self, look: Look, pos: usize) -> bool {
        look_holds(self.bytes, look, pos)
    }

    fn same_char_ign(&self, a: u32, b: u32) -> bool {
        if a == b {
            return true;
        }
        if self.prog.ascii {
            other_cases_ascii(a) == Some(b)
        } else {
            other_cases(a).contains(&b)
        }
    }

    /// Runs from `pc` until a `Match`/`SubEnd` (returns the end position) or until backtracking
    /// exhausts every choice above `base` (returns `None`).
    fn exec(
        &mut self,
        mut pc: Pc,
        mut pos: usize,
        mut bits: u32,
        base: usize,
    ) -> Result<Option<usize>, Stop> {
        let prog = self.prog;
        let len = self.bytes.len();
        'run: loop {
            self.steps += 1;
            if self.steps > self.budget {
                return Err(Stop::Budget);
            }
            let inst = &prog.insts[pc as usize];
            if self.memo_on && inst.is_memo_point() {
                let state = if prog.stateful {
                    self.state_hash(pc, pos)
                } else {
                    0
                };
                let key = (pc, bits & prog.loop_mask[pc as usize], pos, state);
                if self.failed.contains(&key) {
                    match self.backtrack(base)? {
                        Some((p, q, b)) => {
                            pc = p;
                            pos = q;
                            bits = b;
                            continue 'run;
                        }
                        None => return Ok(None),
                    }
                }
                self.stack.push(Frame::Done { key });
            } else if !self.memo_on && self.steps > self.memo_threshold {
                self.memo_on = true;
            }
            let ok: bool = match *inst {
                Inst::Char { c, rev, next } => {
                    if !rev {
                        match self.char_fwd(pos) {
                            Some((x, n)) if x == c as u32 => {
                                pos += n;
                                bits = !0;
                                pc = next;
                                true
                            }
                            None if self.partial => return Err(Stop::Partial),
                            _ => false,
                        }
                    } else {
                        match self.char_back(pos) {
                            Some((x, n)) if x == c as u32 => {
                                pos -= n;
                                bits = !0;
                                pc = next;
                                true
                            }
                            _ => false,
                        }
                    }
                }
                Inst::Str { s, rev, next } => {
                    let lit = prog.strings[s as usize].as_bytes();
                    if !rev {
                        let avail = &self.bytes[pos..];
                        if avail.len() >= lit.len() {
                            if &avail[..lit.len()] == lit {
                                pos += lit.len();
                                bits = !0;
                                pc = next;
                                true
                            } else {
                                false
                            }
                        } else if self.partial && lit.starts_with(avail) {
                            return Err(Stop::Partial);
                        } else {
                            false
                        }
                    } else if pos >= lit.len() && &self.bytes[pos - lit.len()..pos] == lit {
                        pos -= lit.len();
                        bits = !0;
                        pc = next;
                        true
                    } else {
                        false
                    }
                }
                Inst::Set { set, rev, next } => {
                    let set = &prog.sets[set as usize];
                    let ch = if rev {
                        self.char_back(pos)
                    } else {
                        self.char_fwd(pos)
                    };
                    match ch {
                        Some((x, n)) if set.contains(x) => {
                            if rev {
                                pos -= n;
                            } else {
                                pos += n;
                            }
                            bits = !0;
                            pc = next;
                            true
                        }
                        None if !rev && self.partial => return Err(Stop::Partial),
                        _ => false,
                    }
                }
                Inst::Any { rev, next } => {
                    let ch = if rev {
                        self.char_back(pos)
                    } else {
                        self.char_fwd(pos)
                    };
                    match ch {
                        Some((_, n)) => {
                            if rev {
                                pos -= n;
                            } else {
                                pos += n;
                            }
                            bits = !0;
                            pc = next;
                            true
                        }
                        None if !rev && self.partial => return Err(Stop::Partial),
                        None => false,
                    }
                }
                Inst::Assert { look, next } => {
                    if self.check(look, pos) {
                        pc = next;
                        true
                    } else {
                        false
                    }
                }
                Inst::Split { first, second } => {
                    self.stack.push(Frame::Alt {
                        pc: second,
                        pos,
                        bits,
                    });
                    pc = first;
                    true
                }
                Inst::Mark { slot, next } => {
                    let old = self.slots[slot as usize];
                    self.stack.push(Frame::Slot { slot, old });
                    self.slots[slot as usize] = pos;
                    pc = next;
                    true
                }
                Inst::Close {
                    slot,
                    group,
                    rev,
                    next,
                } => {
                    let mark = self.slots[slot as usize];
                    let span = if rev { (pos, mark) } else { (mark, pos) };
                    let old = self.caps[group as usize];
                    self.stack.push(Frame::Cap {
                        group,
                        start: old.0,
                        end: old.1,
                    });
                    if prog.referenced[group as usize] && old != span {
                        self.stack.push(Frame::Cc { old: self.cc });
                        self.cc += 1;
                    }
                    self.caps[group as usize] = span;
                    pc = next;
                    true
                }
                Inst::RepOne {
                    set,
                    min,
                    max,
                    greedy,
                    rev,
                    next,
                } => {
                    let set = &prog.sets[set as usize];
                    let start = pos;
                    if greedy {
                        // A greedy unbounded repeat that failed from `from` fails from any later
                        // start within the same run (its continuations are a subset), when the
                        // progress bits do not tell the two apart.
                        let run_ok = self.memo_on
                            && max == u32::MAX
                            && !rev
                            && !prog.stateful
                            && (bits | !prog.loop_mask[next as usize]) == !0;
                        if run_ok {
                            let (from, to) = self.run_failed[pc as usize];
                            if from < pos && pos <= to {
                                match self.backtrack(base)? {
                                    Some((p, q, b)) => {
                                        pc = p;
                                        pos = q;
                                        bits = b;
                                        continue 'run;
                                    }
                                    None => return Ok(None),
                                }
                            }
                        }
                        let mut count = 0u32;
                        let mut p = pos;
                        let mut min_pos = pos;
                        loop {
                            if count == min {
                                min_pos = p;
                            }
                            if count == max {
                                break;
                            }
                            let ch = if rev {
                                self.char_back(p)
                            } else {
                                self.char_fwd(p)
                            };
                            match ch {
                                Some((x, n)) if set.contains(x) => {
                                    count += 1;
                                    if rev {
                                        p -= n;
                                    } else {
                                        p += n;
                                    }
                                }
                                None if !rev && self.partial => return Err(Stop::Partial),
                                _ => break,
                            }
                        }
                        self.steps += u64::from(count) / 8;
                        if count < min {
                            false
                        } else {
                            if run_ok && p > pos {
                                self.stack.push(Frame::RunDone {
                                    pc,
                                    from: pos,
                                    to: p,
                                });
                            }
                            if p != min_pos {
                                self.stack.push(Frame::Greedy {
                                    next,
                                    start,
                                    min_pos,
                                    pos: p,
                                    bits,
                                    rev,
                                });
                            }
                            if p != start {
                                bits = !0;
                            }
                            pos = p;
                            pc = next;
                            true
                        }
                    } else {
                        let mut count = 0u32;
                        let mut p = pos;
                        let mut ok = true;
                        while count < min {
                            let ch = if rev {
                                self.char_back(p)
                            } else {
                                self.char_fwd(p)
                            };
                            match ch {
                                Some((x, n)) if set.contains(x) => {
                                    count += 1;
                                    if rev {
                                        p -= n;
                                    } else {
                                        p += n;
                                    }
                                }
                                None if !rev && self.partial => return Err(Stop::Partial),
                                _ => {
                                    ok = false;
                                    break;
                                }
                            }
                        }
                        if ok {
                            if count < max {
                                self.stack.push(Frame::Lazy {
                                    pc,
                                    start,
                                    pos: p,
                                    count,
                                    bits,
                                });
                            }
                            if p != start {
                                bits = !0;
                            }
                            pos = p;
                            pc = next;
                        }
                        ok
                    }
                }
                Inst::RepStart {
                    rep,
                    min,
                    max,
                    greedy,
                    iter,
                    exit,
                } => {
                    let old = self.reps[rep as usize];
                    self.stack.push(Frame::Rep { rep, old });
                    self.reps[rep as usize] = RepState {
                        count: 0,
                        start: pos,
                        cc: self.cc,
                    };
                    self.dispatch(greedy, max > 0, min == 0, iter, exit, &mut pc, pos, bits)
                }
                Inst::RepEnd {
                    rep,
                    min,
                    max,
                    greedy,
                    guard,
                    iter,
                    exit,
                } => {
                    let old = self.reps[rep as usize];
                    self.stack.push(Frame::Rep { rep, old });
                    let r = &mut self.reps[rep as usize];
                    r.count = r.count.saturating_add(1);
                    let changed = pos != r.start || r.cc != self.cc;
                    let try_tail = !changed || r.count >= min;
                    let blocked = guard && try_tail && self.partial && pos == len;
                    let try_body = changed && (r.count < max || max == u32::MAX) && !blocked;
                    self.dispatch(greedy, try_body, try_tail, iter, exit, &mut pc, pos, bits)
                }
                Inst::RepIter { rep, next } => {
                    let old = self.reps[rep as usize];
                    self.stack.push(Frame::Rep { rep, old });
                    let r = &mut self.reps[rep as usize];
                    r.start = pos;
                    r.cc = self.cc;
                    pc = next;
                    true
                }
                Inst::LoopBack {
                    body,
                    exit,
                    greedy,
                    guard,
                } => {
                    let blocked = guard && self.partial && pos == len;
                    self.dispatch(greedy, !blocked, true, body, exit, &mut pc, pos, bits)
                }
                Inst::LoopIter { bit, next } => {
                    bits &= !(1 << bit);
                    pc = next;
                    true
                }
                Inst::LoopEnd {
                    bit,
                    greedy,
                    guard,
                    iter,
                    exit,
                } => {
                    let changed = bits & (1 << bit) != 0;
                    let blocked = guard && self.partial && pos == len;
                    self.dispatch(
                        greedy,
                        changed && !blocked,
                        true,
                        iter,
                        exit,
                        &mut pc,
                        pos,
                        bits,
                    )
                }
                Inst::Atomic { body, next } => {
                    let sub_base = self.stack.len();
                    match self.exec(body, pos, 0, sub_base)? {
                        Some(end) => {
                            self.cut(sub_base);
                            if end != pos {
                                bits = !0;
                            }
                            pos = end;
                            pc = next;
                            true
                        }
                        None => false,
                    }
                }
                Inst::Lookaround {
                    body,
                    positive,
                    next,
                } => {
                    let sub_base = self.stack.len();
                    let r = self.exec(body, pos, 0, sub_base)?;
                    match (r.is_some(), positive) {
                        (true, true) => {
                            self.cut(sub_base);
                            pc = next;
                            true
                        }
                        (true, false) => {
                            self.unwind(sub_base);
                            false
                        }
                        (false, true) => false,
                        (false, false) => {
                            pc = next;
                            true
                        }
                    }
                }
                Inst::SubEnd => return Ok(Some(pos)),
                Inst::Backref {
                    group,
                    ign,
                    rev,
                    next,
                } => {
                    let (s, e) = self.caps[group as usize];
                    if s == NONE {
                        false
                    } else {
                        match self.backref(s, e, pos, ign, rev)? {
                            Some(p) => {
                                if p != pos {
                                    bits = !0;
                                }
                                pos = p;
                                pc = next;
                                true
                            }
                            None => false,
                        }
                    }
                }
                Inst::Match => {
                    if self.must_advance && pos == self.anchor {
                        false
                    } else {
                        return Ok(Some(pos));
                    }
                }
                Inst::Fail => false,
            };
            if ok {
                continue 'run;
            }
            match self.backtrack(base)? {
                Some((p, q, b)) => {
                    pc = p;
                    pos = q;
                    bits = b;
                }
                None => return Ok(None),
            }
        }
    }

    /// A digest of the registers and backreferenced captures that steer future matching.
    fn state_hash(&self, pc: Pc, pos: usize) -> u64 {
        let mut h = KeyHasher(0x9E37_79B9_7F4A_7C15);
        let mask = self.prog.rep_mask[pc as usize];
        for (i, r) in self.reps.iter().enumerate() {
            // Only the repeats around `pc` can still read their registers, and only through
            // "count vs. bounds", "has the iteration moved" and "has a referenced group changed".
            if mask & (1u64 << i.min(63)) == 0 {
                continue;
            }
            let (min, max) = self.prog.rep_bounds[i];
            let count = if max == u32::MAX {
                r.count.min(min)
            } else {
                r.count.min(max)
            };
            h.write_u64(u64::from(count));
            h.write_u64(u64::from(r.start == pos));
            h.write_u64(u64::from(r.cc == self.cc));
        }
        if self.prog.backref_ahead[pc as usize] {
            for (g, &(s, e)) in self.caps.iter().enumerate() {
                if self.prog.referenced[g] {
                    // A backreference only sees the captured text, so equal texts behave alike.
                    if s == NONE {
                        h.write_u64(u64::MAX);
                    } else {
                        let (lo, hi) = if s <= e { (s, e) } else { (e, s) };
                        h.write_usize(hi - lo);
                        h.write(&self.bytes[lo..hi]);
                    }
                }
            }
            for (slot, &v) in self.slots.iter().enumerate() {
                if self.prog.referenced[self.prog.slot_group[slot] as usize] {
                    h.write_usize(v);
                }
            }
        }
        h.finish()
    }

    /// Chooses between a repeat's body and its tail as the reference does.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn dispatch(
        &mut self,
        greedy: bool,
        try_body: bool,
        try_tail: bool,
        iter: Pc,
        exit: Pc,
        pc: &mut Pc,
        pos: usize,
        bits: u32,
    ) -> bool {
        match (try_body, try_tail) {
            (true, true) => {
                if greedy {
                    self.stack.push(Frame::Alt {
                        pc: exit,
                        pos,
                        bits,
                    });
                    *pc = iter;
                } else {
                    self.stack.push(Frame::Alt {
                        pc: iter,
                        pos,
                        bits,
                    });
                    *pc = exit;
                }
                true
            }
            (true, false) => {
                *pc = iter;
                true
            }
            (false, true) => {
                *pc = exit;
                true
            }
            (false, false) => false,
        }
    }

    /// Matches the text of a group at `pos`; `Ok(None)` on mismatch.
    fn backref(
        &self,
        s: usize,
        e: usize,
        pos: usize,
        ign: bool,
        rev: bool,
    ) -> Result<Option<usize>, Stop> {
        let group = &self.bytes[s..e];
        let mut p = pos;
        if !rev {
            let mut g = 0;
            while g < group.len() {
                let (gc, gn) = next_char(group, g).expect("valid utf-8");
                match self.char_fwd(p) {
                    None => {
                        return if self.partial {
                            Err(Stop::Partial)
                        } else {
                            Ok(None)
                        };
                    }
                    Some((tc, tn)) => {
                        let same = if ign {
                            self.same_char_ign(gc, tc)
                        } else {
                            gc == tc
                        };
                        if !same {
                            return Ok(None);
                        }
                        p += tn;
                    }
                }
                g += gn;
            }
        } else {
            let mut g = group.len();
            while g > 0 {
                let (gc, gn) = prev_char(group, g).expect("valid utf-8");
                match self.char_back(p) {
                    None => return Ok(None),
                    Some((tc, tn)) => {
                        let same = if ign {
                            self.same_char_ign(gc, tc)
                        } else {
                            gc == tc
                        };
                        if !same {
                            return Ok(None);
                        }
                        p -= tn;
                    }
                }
                g -= gn;
            }
        }
        Ok(Some(p))
    }

    /// Pops frames until a choice point above `base` yields a state to resume.
    fn backtrack(&mut self, base: usize) -> Result<Option<(Pc, usize, u32)>, Stop> {
        while self.stack.len() > base {
            let f = self.stack.pop().expect("non-empty");
            match f {
                Frame::Alt { pc, pos, bits } => return Ok(Some((pc, pos, bits))),
                Frame::Greedy {
                    next,
                    start,
                    min_pos,
                    pos,
                    bits,
                    rev,
                } => {
                    let p = if rev {
                        pos + self.char_fwd(pos).expect("gave back a consumed char").1
                    } else {
                        pos - self.char_back(pos).expect("gave back a consumed char").1
                    };
                    if p != min_pos {
                        self.stack.push(Frame::Greedy {
                            next,
                            start,
                            min_pos,
                            pos: p,
                            bits,
                            rev,
                        });
                    }
                    let b = if p != start { !0 } else { bits };
                    return Ok(Some((next, p, b)));
                }
                Frame::Lazy {
                    pc,
                    start,
                    pos,
                    count,
                    bits,
                } => {
                    let Inst::RepOne {
                        set,
                        max,
                        rev,
                        next,
                        ..
                    } = self.prog.insts[pc as usize]
                    else {
                        unreachable!("lazy frames come from RepOne")
                    };
                    let set = &self.prog.sets[set as usize];
                    let ch = if rev {
                        self.char_back(pos)
                    } else {
                        self.char_fwd(pos)
                    };
                    match ch {
                        Some((x, n)) if set.contains(x) => {
                            let p = if rev { pos - n } else { pos + n };
                            if count + 1 < max {
                                self.stack.push(Frame::Lazy {
                                    pc,
                                    start,
                                    pos: p,
                                    count: count + 1,
                                    bits,
                                });
                            }
                            let _ = start;
                            return Ok(Some((next, p, !0)));
                        }
                        // Taking one more character needs text beyond the end: partial. (The
                        // reference's lazy fast path sometimes gives up here instead, which can
                        // leave a continuable delimiter unreported; this follows the definition.)
                        None if !rev && self.partial => {
                            let Inst::RepOne { min, .. } = self.prog.insts[pc as usize] else {
                                unreachable!("lazy frames come from RepOne")
                            };
                            if !self.lazy_like_reference || count == min {
                                return Err(Stop::Partial);
                            }
                        }
                        _ => {}
                    }
                }
                Frame::Done { key } => {
                    self.failed.insert(key);
                }
                Frame::RunDone { pc, from, to } => {
                    self.run_failed[pc as usize] = (from, to);
                }
                undo => self.undo(undo),
            }
        }
        Ok(None)
    }
}
