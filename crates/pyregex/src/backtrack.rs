//! The backtracking matcher. It explores alternatives in the reference's priority order, keeps an
//! undo log so captures and repeat registers are restored exactly on backtracking, and (for
//! programs where it is sound) remembers failed states so that no state is explored twice.
//!
//! In partial mode, any instruction that needs a character beyond the end of the haystack stops
//! the whole search with [`Stop::Partial`]; assertions at the end are evaluated as if the text
//! ended there.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use super::frames::ChunkStack;
use super::prog::{Inst, Look, Pc, Program};
use super::unicode::{Fold, full_fold, other_cases, other_cases_ascii};
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
pub(crate) fn look_holds(bytes: &[u8], look: Look, pos: usize) -> bool {
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

/// Room kept free on the backtrack stack before each step: more than a step pushes.
const STACK_SPARE: usize = 8;

/// States the memo of failed states may hold beyond four per byte of text: a few tens of
/// megabytes.
const MEMO_CAP: usize = 1_000_000;

/// Steps charged for a state the memo fails without exploring it (see `memo_enter`).
const MEMO_HIT_STEPS: u64 = 64;

/// When set, every matcher remembers failed states from its first step instead of after a
/// threshold (results never depend on it; tests use it to exercise the memo).
pub(crate) static FORCE_MEMO: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Why a search stopped without a plain answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Partial mode: a path needed text beyond the end.
    Partial,
    /// The work budget ran out.
    Budget,
}

/// Where a path of the matcher stands: the instruction to run next, the position in the
/// haystack and the loops' progress bits (a set bit: that loop's iteration has consumed).
#[derive(Clone, Copy, Debug)]
struct Cursor {
    pc: Pc,
    pos: usize,
    bits: u32,
}

impl Cursor {
    /// Consumed text up to `pos` (at least one character, or a literal): every loop has
    /// progressed. Continues at `next`.
    #[inline(always)]
    fn consume(&mut self, pos: usize, next: Pc) {
        self.pos = pos;
        self.bits = !0;
        self.pc = next;
    }

    /// Moved from the current position to `pos`, which may be the same place: the loops have
    /// progressed only if it is not. Continues at `next`.
    #[inline(always)]
    fn move_to(&mut self, pos: usize, next: Pc) {
        if pos != self.pos {
            self.bits = !0;
        }
        self.pos = pos;
        self.pc = next;
    }
}

/// The outcome of one step of the matcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Carry on from the updated [`Cursor`].
    Continue,
    /// This path failed: resume the most recent choice point.
    Fail,
    /// The (sub)program succeeded, ending at this position.
    Match(usize),
}

#[derive(Clone, Copy, Debug)]
struct RepState {
    count: u32,
    start: usize,
    cc: u64,
}

/// A text position as the backtrack stack stores it, in four bytes: searches refuse texts of
/// `u32::MAX` bytes or more, and `u32::MAX` stands for [`NONE`].
type At = u32;

/// A position to store in a frame.
#[inline(always)]
fn at(pos: usize) -> At {
    if pos == NONE { At::MAX } else { pos as At }
}

/// A position stored in a frame.
#[inline(always)]
fn pos_of(a: At) -> usize {
    if a == At::MAX { NONE } else { a as usize }
}

/// The longest text a search accepts, in bytes: positions must fit an [`At`].
pub(crate) const MAX_TEXT: usize = At::MAX as usize - 1;

/// One entry of the backtrack stack: a choice point to resume, an undo record, or a marker.
/// Positions are stored as [`At`], so that an entry takes 24 bytes: a search's memory is
/// mostly this stack (a repeat of capture groups records every group it sets), and its size
/// is bounded (see [`super::budget::stack_limit`]).
#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Resume at `pc` with this position and progress bits.
    Alt { pc: Pc, pos: At, bits: u32 },
    /// Undo: restore a public group.
    Cap { group: u32, start: At, end: At },
    /// Undo: restore a private slot.
    Slot { slot: u32, old: At },
    /// Undo: restore a repeat register.
    Rep {
        rep: u32,
        count: u32,
        start: At,
        cc: u64,
    },
    /// Undo: restore the capture-change counter.
    Cc { old: u64 },
    /// A greedy single-character repeat that can give back characters down to `min_pos`.
    Greedy {
        next: Pc,
        start: At,
        min_pos: At,
        pos: At,
        bits: u32,
        rev: bool,
    },
    /// The greedy single-character repeat at `pc`, followed by a string under full case
    /// folding, which has taken `count` characters from `start` (see
    /// [`Matcher::give_back_fold`]).
    GreedyFold {
        pc: Pc,
        start: At,
        count: u32,
        bits: u32,
        /// Tells this frame's counts apart from another entry of the same repeat.
        entry: u32,
    },
    /// A lazy single-character repeat that can take more characters.
    Lazy {
        pc: Pc,
        start: At,
        pos: At,
        count: u32,
        bits: u32,
    },
    /// Backtracking past this frame means every continuation of the state (a [`MemoKey`])
    /// failed.
    Done {
        pc: Pc,
        bits: u32,
        pos: At,
        state: u64,
    },
    /// Backtracking past this frame means a greedy repeat at `pc` failed for every count from
    /// `from` up to the end of its run at `to`.
    RunDone { pc: Pc, from: At, to: At },
}

/// Bytes a backtrack stack entry takes.
pub(crate) const FRAME_BYTES: usize = std::mem::size_of::<Frame>();
const _: () = assert!(FRAME_BYTES <= 24);

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
pub(crate) struct Matcher<'a> {
    prog: &'a Program,
    bytes: &'a [u8],
    partial: bool,
    /// Reproduce the reference's lazy fast path at the end of the text (for diagnostics only).
    lazy_like_reference: bool,
    caps: Vec<(usize, usize)>,
    slots: Vec<usize>,
    reps: Vec<RepState>,
    cc: u64,
    stack: ChunkStack<Frame>,
    /// The most frames the stack may hold (see [`super::budget::stack_limit`]).
    stack_limit: usize,
    steps: u64,
    budget: u64,
    memo_on: bool,
    memo_threshold: u64,
    /// The memo was found not to pay (see [`Matcher::remember_failed`]) and stays off.
    memo_off: bool,
    /// How many states the memo may hold (bounds its memory).
    memo_cap: usize,
    /// Times the memo failed a state without exploring it.
    memo_hits: u64,
    /// States all of whose continuations failed (valid in any context, since a state's
    /// continuations are fixed by the program).
    failed: MemoSet,
    /// Per greedy single-character repeat: a range of start positions known to fail.
    run_failed: Vec<(usize, usize)>,
    anchor: usize,
    must_advance: bool,
    /// Where the search last found the required string in full (the reference's `req_pos`).
    req_pos: Option<usize>,
    /// Where the search verified the pattern's leading folded string itself (start, end): the
    /// reference then matches from after it, so the string is taken as matched there.
    lead: Option<(usize, usize)>,
    /// The counts each [`Frame::GreedyFold`] has given back to (by generation): the
    /// reference's backward search can lead back to a count it already tried, and then it
    /// loops for ever.
    fold_seen: HashSet<(u32, u32)>,
    fold_gen: u32,
    /// The reference's tail guards for those repeats: `(repeat, position)` where the tail
    /// failed, skipped from then on in this search (it keeps them across start positions).
    tail_guards: HashSet<(Pc, usize)>,
}

/// Every search's steps count towards the thread's total and its job's budget, whichever way
/// the search ends.
impl Drop for Matcher<'_> {
    fn drop(&mut self) {
        super::budget::spend(self.steps);
    }
}

/// The spans of a successful match: index 0 is the whole match.
pub(crate) type Spans = Vec<Option<(usize, usize)>>;

impl<'a> Matcher<'a> {
    /// A matcher for `prog` over `hay` that may take `budget` steps in all; with `partial`, a
    /// path that reaches the end of the text needing more reports a partial match.
    pub(crate) fn new(prog: &'a Program, hay: &'a str, partial: bool, budget: u64) -> Matcher<'a> {
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
            stack: ChunkStack::new(),
            stack_limit: super::budget::stack_limit(hay.len()),
            steps: 0,
            budget,
            memo_on: FORCE_MEMO.load(std::sync::atomic::Ordering::Relaxed),
            memo_threshold: 20_000 + 8 * hay.len() as u64,
            memo_off: false,
            memo_cap: MEMO_CAP + 4 * hay.len(),
            memo_hits: 0,
            failed: MemoSet::default(),
            run_failed: vec![(usize::MAX, 0); prog.insts.len()],
            anchor: 0,
            must_advance: false,
            req_pos: None,
            lead: None,
            fold_seen: HashSet::new(),
            fold_gen: 0,
            tail_guards: HashSet::new(),
        }
    }

    /// Makes a lazy single-character repeat that reached the end of the text by taking more
    /// characters fail there instead of reporting partial, as the reference's fast path does.
    pub(crate) fn set_lazy_like_reference(&mut self, on: bool) {
        self.lazy_like_reference = on;
    }

    /// Where the search last found the required string in full.
    pub(crate) fn set_req_pos(&mut self, req_pos: Option<usize>) {
        self.req_pos = req_pos;
    }

    /// Where the search verified the pattern's leading folded string (see [`Matcher::lead`]),
    /// for the next attempt.
    pub(crate) fn set_lead(&mut self, lead: Option<(usize, usize)>) {
        self.lead = lead;
    }

    /// Where the required string found at `pos` ends, as the reference's search found it
    /// (folded characters compared for equality under full case folding; otherwise one text
    /// character for each of the string's).
    fn required_end(&self, pos: usize) -> Option<usize> {
        let req = self.prog.required.as_ref()?;
        match req.case {
            super::prog::LitCase::Fold => {
                super::search::fold_prefix(self.bytes, pos, &req.chars, self.prog.ascii, true)
            }
            _ => self.chars_fwd(pos, req.chars.len() as u32),
        }
    }

    /// Rejects empty matches ending at `anchor` (the `finditer` rule after an empty match).
    pub(crate) fn set_must_advance(&mut self, anchor: usize, must_advance: bool) {
        self.anchor = anchor;
        self.must_advance = must_advance;
    }

    /// Tries a match anchored at `start`. `Ok(Some(spans))` on success.
    pub(crate) fn try_at(&mut self, start: usize) -> Result<Option<Spans>, Stop> {
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
        for _ in base..self.stack.len() {
            let f = self.stack.pop().expect("non-empty");
            self.undo(f);
        }
    }

    #[inline]
    fn undo(&mut self, f: Frame) {
        match f {
            Frame::Cap { group, start, end } => {
                self.caps[group as usize] = (pos_of(start), pos_of(end));
            }
            Frame::Slot { slot, old } => self.slots[slot as usize] = pos_of(old),
            Frame::Rep {
                rep,
                count,
                start,
                cc,
            } => {
                self.reps[rep as usize] = RepState {
                    count,
                    start: pos_of(start),
                    cc,
                };
            }
            Frame::Cc { old } => self.cc = old,
            _ => {}
        }
    }

    /// Drops the choice points above `base`, keeping the undo records (the body of an atomic
    /// group or a positive lookaround committed to its first success).
    fn cut(&mut self, base: usize) {
        self.stack.retain_from(base, Frame::is_undo);
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
    fn exec(&mut self, pc: Pc, pos: usize, bits: u32, base: usize) -> Result<Option<usize>, Stop> {
        let prog = self.prog;
        let mut cur = Cursor { pc, pos, bits };
        loop {
            self.tick()?;
            let inst = &prog.insts[cur.pc as usize];
            let step = if self.memo_enter(inst, &cur) == Step::Fail {
                Step::Fail
            } else {
                let c = &mut cur;
                match *inst {
                    Inst::Char { c: ch, rev, next } => self.step_char(c, ch, rev, next)?,
                    Inst::Str { s, rev, next } => self.step_str(c, s, rev, next)?,
                    Inst::StrFold { s, req, rev, next } => {
                        self.step_str_fold(c, s, req, rev, next)?
                    }
                    Inst::Set { set, rev, next } => self.step_set(c, set, rev, next)?,
                    Inst::Any { rev, next } => self.step_any(c, rev, next)?,
                    Inst::Assert { look, next } => self.step_assert(c, look, next),
                    Inst::Split { first, second } => self.step_split(c, first, second),
                    Inst::Mark { slot, undo, next } => self.step_mark(c, slot, undo, next),
                    Inst::Close {
                        slot,
                        group,
                        rev,
                        next,
                    } => self.step_close(c, slot, group, rev, next),
                    Inst::RepOne {
                        set,
                        min,
                        max,
                        greedy: true,
                        rev,
                        next,
                    } => self.step_rep_one_greedy(c, set, min, max, rev, next)?,
                    Inst::RepOne {
                        set,
                        min,
                        max,
                        greedy: false,
                        rev,
                        next,
                    } => self.step_rep_one_lazy(c, set, min, max, rev, next)?,
                    Inst::RepStart {
                        rep,
                        min,
                        max,
                        greedy,
                        iter,
                        exit,
                    } => self.step_rep_start(c, rep, min, max, greedy, iter, exit),
                    Inst::RepEnd {
                        rep,
                        min,
                        max,
                        greedy,
                        guard,
                        iter,
                        exit,
                    } => self.step_rep_end(c, rep, min, max, greedy, guard, iter, exit),
                    Inst::RepIter { rep, next } => self.step_rep_iter(c, rep, next),
                    Inst::LoopBack {
                        body,
                        exit,
                        greedy,
                        guard,
                    } => self.step_loop_back(c, body, exit, greedy, guard),
                    Inst::LoopIter { bit, next } => Self::step_loop_iter(c, bit, next),
                    Inst::LoopEnd {
                        bit,
                        greedy,
                        guard,
                        iter,
                        exit,
                    } => self.step_loop_end(c, bit, greedy, guard, iter, exit),
                    Inst::Atomic { body, next } => self.step_atomic(c, body, next)?,
                    Inst::Lookaround {
                        body,
                        positive,
                        next,
                    } => self.step_lookaround(c, body, positive, next)?,
                    Inst::SubEnd => Step::Match(c.pos),
                    Inst::Backref {
                        group,
                        ign,
                        full,
                        rev,
                        next,
                    } => self.step_backref(c, group, ign, full, rev, next)?,
                    Inst::Match => self.step_match(c),
                    Inst::Fail => Step::Fail,
                }
            };
            match step {
                Step::Continue => {}
                Step::Match(end) => return Ok(Some(end)),
                Step::Fail => {
                    if !self.resume(&mut cur, base)? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    /// Counts one step against the work budget.
    #[inline(always)]
    fn tick(&mut self) -> Result<(), Stop> {
        self.steps += 1;
        if self.steps > self.budget {
            return Err(Stop::Budget);
        }
        // A step pushes at most a few frames: make room for them first, so that the stack
        // never grows past its limit, nor by an allocation that could fail and abort.
        if self.stack.free() < STACK_SPARE && !self.stack.make_room(STACK_SPARE, self.stack_limit) {
            // The limit reached, or the memory refused: the search stops as it does when its
            // steps run out.
            return Err(Stop::Budget);
        }
        Ok(())
    }

    /// Before running `inst` at `cur`: with the memo on, fails a state already known to fail,
    /// and otherwise pushes the frame that records the state as failed if backtracking ever
    /// passes it; with the memo off, turns it on once the search has done enough work.
    #[inline(always)]
    fn memo_enter(&mut self, inst: &Inst, cur: &Cursor) -> Step {
        let prog = self.prog;
        if self.memo_on && inst.is_memo_point() {
            let state = if prog.stateful {
                self.state_hash(cur.pc, cur.pos)
            } else {
                0
            };
            let key = (
                cur.pc,
                cur.bits & prog.loop_mask[cur.pc as usize],
                cur.pos,
                state,
            );
            if self.failed.contains(&key) {
                self.memo_hits += 1;
                // The reference has no such memo: it explores the failed state again. A hit is
                // charged as a small exploration, so that a pattern the reference takes far
                // longer than ten seconds on (exponential backtracking inside a lookaround,
                // where its repeat guards do not help) still exhausts the budget.
                self.steps += MEMO_HIT_STEPS;
                return Step::Fail;
            }
            self.stack.push(Frame::Done {
                pc: key.0,
                bits: key.1,
                pos: at(key.2),
                state: key.3,
            });
        } else if !self.memo_on && !self.memo_off && self.steps > self.memo_threshold {
            self.memo_on = true;
        }
        Step::Continue
    }

    /// Records a state all of whose continuations failed. The memo holds at most `memo_cap`
    /// states, so that its memory stays bounded however long the search may run. Full, it
    /// keeps answering from what it holds, unless it has hardly ever answered: then the states
    /// never repeat (a backreferenced capture that differs at every start, say), the memo
    /// costs many times the work it saves, and it is dropped for the rest of the search.
    #[inline]
    fn remember_failed(&mut self, key: MemoKey) {
        if self.memo_off {
            return;
        }
        if self.failed.len() < self.memo_cap {
            // Memory refused: the memo keeps answering from what it holds.
            if self.failed.try_reserve(1).is_ok() {
                self.failed.insert(key);
            }
        } else if self.memo_hits < (self.failed.len() / 64) as u64 {
            self.memo_on = false;
            self.memo_off = true;
            self.failed = MemoSet::default();
        }
    }

    /// The character the tail at `pc` must begin with when it begins with a literal (through
    /// group edges, which consume nothing and are undone when the literal fails), and whether
    /// that literal is a single character (the reference scans differently for one).
    #[inline]
    fn tail_literal(&self, mut pc: Pc) -> Option<(u32, bool)> {
        for _ in 0..8 {
            match &self.prog.insts[pc as usize] {
                Inst::Char { c, rev: false, .. } => return Some((*c as u32, true)),
                Inst::Str { s, rev: false, .. } => {
                    return self.prog.strings[*s as usize]
                        .chars()
                        .next()
                        .map(|c| (c as u32, false));
                }
                Inst::Mark { next, .. }
                | Inst::Close {
                    rev: false, next, ..
                } => pc = *next,
                _ => return None,
            }
        }
        None
    }

    /// A lazy repeat followed by a literal (`.*?</`): from `p`, where the repeat has taken
    /// `count` characters, takes every character at which the tail would fail at once (its
    /// literal's first character is not there), as the reference scans for the tail's literal
    /// instead of trying it at every position. `None` when the tail fails at the last position
    /// reached and the repeat can take no more there (nothing is left to try from this frame).
    /// With `partial_at_last` (the reference's scan for a one-character tail during a partial
    /// search), reaching the text's last character without the literal there is partial before
    /// anything else is checked: the reference asks whether more text is needed before whether
    /// the repeat may take that character at all (its set, its maximum), so it reports starts
    /// no continuation completes. Skipped characters cost an eighth of a step each, like a
    /// greedy run's: what the reference's scan costs next to a full attempt.
    #[inline]
    fn skip_lazy(
        &mut self,
        set: &super::charset::CharSet,
        lit: u32,
        p: &mut usize,
        count: &mut u32,
        max: u32,
        partial_at_last: bool,
    ) -> Result<Option<()>, Stop> {
        let from = *count;
        // Any character may be skipped: jump to the literal's next occurrence (counting the
        // characters passed over, which the repeat's maximum bounds).
        if lit < 0x80 && max == u32::MAX && set.is_full() {
            let rest = &self.bytes[*p..];
            let to = memchr::memchr(lit as u8, rest).unwrap_or(rest.len());
            let chars = rest[..to].iter().filter(|&&b| (b as i8) >= -0x40).count();
            *p += to;
            *count = count.saturating_add(chars.min(u32::MAX as usize) as u32);
            self.steps += chars as u64 / 8;
            return Ok(Some(()));
        }
        let out = loop {
            match self.char_fwd(*p) {
                Some((x, n)) if x != lit => {
                    if partial_at_last && *p + n == self.bytes.len() {
                        break Err(Stop::Partial);
                    }
                    if *count < max && set.contains(x) {
                        *p += n;
                        *count += 1;
                    } else {
                        break Ok(None);
                    }
                }
                // The literal may start here, or the text ends: try the tail.
                _ => break Ok(Some(())),
            }
        };
        self.steps += u64::from(*count - from) / 8;
        out
    }

    /// After a failure: pops the backtrack stack down to the next choice point above `base`
    /// and moves `cur` there. `false` when every choice is exhausted.
    #[inline(always)]
    fn resume(&mut self, cur: &mut Cursor, base: usize) -> Result<bool, Stop> {
        match self.backtrack(base)? {
            Some((pc, pos, bits)) => {
                *cur = Cursor { pc, pos, bits };
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The character after `pos` (`rev`: before it) and its length in bytes.
    #[inline(always)]
    fn char_dir(&self, pos: usize, rev: bool) -> Option<(u32, usize)> {
        if rev {
            self.char_back(pos)
        } else {
            self.char_fwd(pos)
        }
    }

    /// `Inst::Char`: one exact character.
    #[inline(always)]
    fn step_char(&self, cur: &mut Cursor, c: char, rev: bool, next: Pc) -> Result<Step, Stop> {
        if !rev {
            match self.char_fwd(cur.pos) {
                Some((x, n)) if x == c as u32 => {
                    cur.consume(cur.pos + n, next);
                    Ok(Step::Continue)
                }
                None if self.partial => Err(Stop::Partial),
                _ => Ok(Step::Fail),
            }
        } else {
            match self.char_back(cur.pos) {
                Some((x, n)) if x == c as u32 => {
                    cur.consume(cur.pos - n, next);
                    Ok(Step::Continue)
                }
                _ => Ok(Step::Fail),
            }
        }
    }

    /// `Inst::Str`: an exact string. Forwards, text that ends inside it is partial.
    #[inline(always)]
    fn step_str(&self, cur: &mut Cursor, s: u32, rev: bool, next: Pc) -> Result<Step, Stop> {
        let lit = self.prog.strings[s as usize].as_bytes();
        let pos = cur.pos;
        if !rev {
            let avail = &self.bytes[pos..];
            if avail.len() >= lit.len() {
                if &avail[..lit.len()] == lit {
                    cur.consume(pos + lit.len(), next);
                    Ok(Step::Continue)
                } else {
                    Ok(Step::Fail)
                }
            } else if self.partial && lit.starts_with(avail) {
                Err(Stop::Partial)
            } else {
                Ok(Step::Fail)
            }
        } else if pos >= lit.len() && &self.bytes[pos - lit.len()..pos] == lit {
            cur.consume(pos - lit.len(), next);
            Ok(Step::Continue)
        } else {
            Ok(Step::Fail)
        }
    }

    /// The full case folding of the character after `pos` (`rev`: before it) and its length in
    /// bytes, with the pattern's encoding.
    #[inline]
    fn fold_at(&self, pos: usize, rev: bool) -> Option<(Fold, usize)> {
        self.char_dir(pos, rev)
            .map(|(c, n)| (full_fold(c, self.prog.ascii), n))
    }

    /// `Inst::StrFold`: the text's characters, fully case-folded, must spell the (folded)
    /// string, and the last character's folding must end with it. Forwards, text that ends
    /// before the string does is partial.
    fn step_str_fold(
        &self,
        cur: &mut Cursor,
        s: u32,
        req: bool,
        rev: bool,
        next: Pc,
    ) -> Result<Step, Stop> {
        if !rev
            && let Some((start, end)) = self.lead
            && start == cur.pos
        {
            // Only the leading string can start where the attempt starts: the reference's
            // search verified it (its own comparison) and matches from after it.
            cur.move_to(end, next);
            return Ok(Step::Continue);
        }
        if req
            && self.req_pos == Some(cur.pos)
            && let Some(end) = self.required_end(cur.pos)
        {
            // Where the search found the required string, the reference takes it as matched.
            cur.move_to(end, next);
            return Ok(Step::Continue);
        }
        let values = &self.prog.folded[s as usize];
        let mut p = cur.pos;
        let mut fold = Fold::default();
        // Forwards: folded characters of `fold` used; backwards: those left.
        let mut f = 0;
        let mut n = 0;
        if !rev {
            for &v in values.iter() {
                if f >= fold.chars().len() {
                    match self.fold_at(p, false) {
                        Some((folded, len)) => (fold, n, f) = (folded, len, 0),
                        None if self.partial => return Err(Stop::Partial),
                        None => return Ok(Step::Fail),
                    }
                }
                if !self.same_char_ign(v, fold.chars()[f]) {
                    return Ok(Step::Fail);
                }
                f += 1;
                if f >= fold.chars().len() {
                    p += n;
                }
            }
            if f < fold.chars().len() {
                // The string ends inside a character's folding.
                return Ok(Step::Fail);
            }
        } else {
            for &v in values.iter().rev() {
                if f == 0 {
                    match self.fold_at(p, true) {
                        Some((folded, len)) => (fold, n, f) = (folded, len, folded.chars().len()),
                        None => return Ok(Step::Fail),
                    }
                }
                if !self.same_char_ign(v, fold.chars()[f - 1]) {
                    return Ok(Step::Fail);
                }
                f -= 1;
                if f == 0 {
                    p -= n;
                }
            }
            if f > 0 {
                return Ok(Step::Fail);
            }
        }
        cur.move_to(p, next);
        Ok(Step::Continue)
    }

    /// `Inst::Set`: one character from a set.
    #[inline(always)]
    fn step_set(&self, cur: &mut Cursor, set: u32, rev: bool, next: Pc) -> Result<Step, Stop> {
        let set = &self.prog.sets[set as usize];
        match self.char_dir(cur.pos, rev) {
            Some((x, n)) if set.contains(x) => {
                let pos = if rev { cur.pos - n } else { cur.pos + n };
                cur.consume(pos, next);
                Ok(Step::Continue)
            }
            None if !rev && self.partial => Err(Stop::Partial),
            _ => Ok(Step::Fail),
        }
    }

    /// `Inst::Any`: any one character.
    #[inline(always)]
    fn step_any(&self, cur: &mut Cursor, rev: bool, next: Pc) -> Result<Step, Stop> {
        match self.char_dir(cur.pos, rev) {
            Some((_, n)) => {
                let pos = if rev { cur.pos - n } else { cur.pos + n };
                cur.consume(pos, next);
                Ok(Step::Continue)
            }
            None if !rev && self.partial => Err(Stop::Partial),
            None => Ok(Step::Fail),
        }
    }

    /// `Inst::Assert`: an anchor or word-boundary test at the current position.
    #[inline(always)]
    fn step_assert(&self, cur: &mut Cursor, look: Look, next: Pc) -> Step {
        if self.check(look, cur.pos) {
            cur.pc = next;
            Step::Continue
        } else {
            Step::Fail
        }
    }

    /// `Inst::Split`: tries `first`, leaving a choice point to resume at `second`.
    #[inline(always)]
    fn step_split(&mut self, cur: &mut Cursor, first: Pc, second: Pc) -> Step {
        self.stack.push(Frame::Alt {
            pc: second,
            pos: at(cur.pos),
            bits: cur.bits,
        });
        cur.pc = first;
        Step::Continue
    }

    /// `Inst::Mark`: remembers the current position in a private slot (undoably, unless the
    /// old value can never be read again: see [`Inst::Mark`]).
    #[inline(always)]
    fn step_mark(&mut self, cur: &mut Cursor, slot: u32, undo: bool, next: Pc) -> Step {
        if undo {
            let old = self.slots[slot as usize];
            self.stack.push(Frame::Slot { slot, old: at(old) });
        }
        self.slots[slot as usize] = cur.pos;
        cur.pc = next;
        Step::Continue
    }

    /// `Inst::Close`: sets a public group from its slot to the current position (undoably),
    /// bumping the capture-change counter when a backreferenced group changes.
    #[inline(always)]
    fn step_close(&mut self, cur: &mut Cursor, slot: u32, group: u32, rev: bool, next: Pc) -> Step {
        let pos = cur.pos;
        let mark = self.slots[slot as usize];
        let span = if rev { (pos, mark) } else { (mark, pos) };
        let old = self.caps[group as usize];
        self.stack.push(Frame::Cap {
            group,
            start: at(old.0),
            end: at(old.1),
        });
        if self.prog.referenced[group as usize] && old != span {
            self.stack.push(Frame::Cc { old: self.cc });
            self.cc += 1;
        }
        self.caps[group as usize] = span;
        cur.pc = next;
        Step::Continue
    }

    /// `Inst::RepOne`, greedy: takes as many characters of the set as allowed, leaving a
    /// [`Frame::Greedy`] to give them back one by one down to the minimum.
    #[inline(always)]
    fn step_rep_one_greedy(
        &mut self,
        cur: &mut Cursor,
        set: u32,
        min: u32,
        max: u32,
        rev: bool,
        next: Pc,
    ) -> Result<Step, Stop> {
        let prog = self.prog;
        let set = &prog.sets[set as usize];
        let Cursor { pc, pos, bits } = *cur;
        let start = pos;
        // A greedy unbounded repeat that failed from `from` fails from any later start within
        // the same run (its continuations are a subset), when the progress bits do not tell the
        // two apart.
        let fold_tail = if rev { None } else { prog.fold_tail(pc) };
        let run_ok = self.memo_on
            && max == u32::MAX
            && !rev
            && !prog.stateful
            && fold_tail.is_none()
            && (bits | !prog.loop_mask[next as usize]) == !0;
        if run_ok {
            let (from, to) = self.run_failed[pc as usize];
            if from < pos && pos <= to {
                return Ok(Step::Fail);
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
            match self.char_dir(p, rev) {
                Some((x, n)) if set.contains(x) => {
                    count += 1;
                    if rev {
                        p -= n;
                    } else {
                        p += n;
                    }
                }
                None if !rev && self.partial => {
                    // The run read up to the end is work too (a stream holding back a long
                    // run searches it again on every feed).
                    self.steps += u64::from(count) / 8;
                    return Err(Stop::Partial);
                }
                _ => break,
            }
        }
        self.steps += u64::from(count) / 8;
        if count < min {
            return Ok(Step::Fail);
        }
        if fold_tail.is_some() && self.fold_guards_on() {
            // The reference gives back characters while its tail guard covers the end.
            while self.tail_guards.contains(&(pc, p)) {
                if count == min || count == 0 {
                    return Ok(Step::Fail);
                }
                count -= 1;
                p -= self.char_back(p).expect("took it").1;
            }
        }
        if run_ok && p > pos {
            self.stack.push(Frame::RunDone {
                pc,
                from: at(pos),
                to: at(p),
            });
        }
        if fold_tail.is_some() {
            if count > min {
                self.fold_gen = self.fold_gen.wrapping_add(1);
                self.stack.push(Frame::GreedyFold {
                    pc,
                    start: at(start),
                    count,
                    bits,
                    entry: self.fold_gen,
                });
            }
        } else if p != min_pos {
            self.stack.push(Frame::Greedy {
                next,
                start: at(start),
                min_pos: at(min_pos),
                pos: at(p),
                bits,
                rev,
            });
        }
        cur.move_to(p, next);
        Ok(Step::Continue)
    }

    /// `n` characters forward from `pos` (`None` past the end).
    fn chars_fwd(&self, mut pos: usize, n: u32) -> Option<usize> {
        for _ in 0..n {
            pos += self.char_fwd(pos)?.1;
        }
        Some(pos)
    }

    /// `n` characters back from `pos` (`None` before the start).
    fn chars_back(&self, mut pos: usize, n: u32) -> Option<usize> {
        for _ in 0..n {
            pos -= self.char_back(pos)?.1;
        }
        Some(pos)
    }

    /// The characters between two positions.
    fn chars_between(&self, a: usize, b: usize) -> u32 {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        self.bytes[lo..hi]
            .iter()
            .filter(|&&b| (b as i8) >= -0x40)
            .count() as u32
    }

    /// Whether the reference keeps tail guards for repeats followed by a folded string: unless a
    /// backreference follows (then it never does).
    fn fold_guards_on(&self) -> bool {
        !self.prog.referenced.iter().any(|&r| r)
    }

    /// Backtracking a greedy repeat whose tail is a string under full case folding, as the
    /// reference does it: instead of giving back one character, it searches backwards for the
    /// string (its folded characters compared for equality), never past the point where the
    /// string's length in folded characters would reach beyond the end of the text, and assumes
    /// the string found spans that many characters. So it never reports a partial match there,
    /// and where folding changed the length it tries the tail where the string does not start
    /// (even before the repeat). Returns where to resume and the repeat's new count, or `None`.
    fn give_back_fold(
        &mut self,
        pc: Pc,
        start: usize,
        min: u32,
        count: u32,
        fold: u32,
    ) -> Option<(usize, u32)> {
        let values = &self.prog.folded[fold as usize];
        let ascii = self.prog.ascii;
        let folded_len: u32 = values
            .iter()
            .map(|&v| full_fold(v, ascii).chars().len() as u32)
            .sum();
        let guards = self.fold_guards_on();
        let cur = self.chars_fwd(start, count)?;
        if guards {
            // The tail failed where the repeat ended.
            self.tail_guards.insert((pc, cur));
        }
        let limit = self.chars_fwd(start, min)?;
        if cur == limit {
            return None;
        }
        // The last position the string could start at without running off the end.
        let last = self.chars_back(self.bytes.len(), folded_len)?;
        let mut pos = (cur - self.char_back(cur)?.1).min(last);
        loop {
            if pos < limit {
                return None;
            }
            let end = self.chars_fwd(pos, folded_len)?;
            let found = self.search_fold_back(values, end, limit)?;
            pos = self.chars_back(found, folded_len)?;
            if !(guards && self.tail_guards.contains(&(pc, pos))) {
                break;
            }
            pos -= self.char_back(pos)?.1;
        }
        let new_count = self.chars_between(pos, start);
        Some((pos, new_count))
    }

    /// The reference's backward search for a folded string ending at or before `end` and
    /// beginning after `limit`: where it ends.
    fn search_fold_back(&self, values: &[u32], end: usize, limit: usize) -> Option<usize> {
        let ascii = self.prog.ascii;
        let mut start_pos = end;
        'ends: loop {
            let mut p = start_pos;
            let mut s = 0usize;
            let mut fold = Fold::default();
            let mut f = 0usize;
            while s < values.len() || f < fold.chars().len() {
                if f >= fold.chars().len() {
                    if p <= limit {
                        return None;
                    }
                    fold = full_fold(self.char_back(p)?.0, ascii);
                    f = 0;
                }
                let n = fold.chars().len();
                if s < values.len()
                    && super::unicode::same_folded_turkic(
                        values[values.len() - s - 1],
                        fold.chars()[n - f - 1],
                        ascii,
                    )
                {
                    s += 1;
                    f += 1;
                    if f >= n {
                        p -= self.char_back(p)?.1;
                    }
                } else {
                    start_pos -= self.char_back(start_pos)?.1;
                    continue 'ends;
                }
            }
            return Some(start_pos);
        }
    }

    /// `Inst::RepOne`, lazy: takes the minimum number of characters of the set, leaving a
    /// [`Frame::Lazy`] to take more one by one up to the maximum.
    #[inline(always)]
    fn step_rep_one_lazy(
        &mut self,
        cur: &mut Cursor,
        set: u32,
        min: u32,
        max: u32,
        rev: bool,
        next: Pc,
    ) -> Result<Step, Stop> {
        let set = &self.prog.sets[set as usize];
        let Cursor { pc, pos, bits } = *cur;
        let start = pos;
        let mut count = 0u32;
        let mut p = pos;
        while count < min {
            match self.char_dir(p, rev) {
                Some((x, n)) if set.contains(x) => {
                    count += 1;
                    if rev {
                        p -= n;
                    } else {
                        p += n;
                    }
                }
                None if !rev && self.partial => return Err(Stop::Partial),
                _ => return Ok(Step::Fail),
            }
        }
        if count < max {
            self.stack.push(Frame::Lazy {
                pc,
                start: at(start),
                pos: at(p),
                count,
                bits,
            });
        }
        cur.move_to(p, next);
        Ok(Step::Continue)
    }

    /// Records a repeat register's value, to be restored on backtracking.
    #[inline(always)]
    fn save_rep(&mut self, rep: u32) {
        let old = self.reps[rep as usize];
        self.stack.push(Frame::Rep {
            rep,
            count: old.count,
            start: at(old.start),
            cc: old.cc,
        });
    }

    /// `Inst::RepStart`: enters a general repeat, resetting its register (undoably), then
    /// chooses between a first iteration and the tail.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn step_rep_start(
        &mut self,
        cur: &mut Cursor,
        rep: u32,
        min: u32,
        max: u32,
        greedy: bool,
        iter: Pc,
        exit: Pc,
    ) -> Step {
        self.save_rep(rep);
        self.reps[rep as usize] = RepState {
            count: 0,
            start: cur.pos,
            cc: self.cc,
        };
        self.branch_repeat(cur, greedy, max > 0, min == 0, iter, exit)
    }

    /// `Inst::RepEnd`: counts a finished iteration of a general repeat (undoably), then
    /// chooses between another iteration and the tail. An iteration that changed nothing may
    /// not repeat, and one that still needs more iterations may not leave.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn step_rep_end(
        &mut self,
        cur: &mut Cursor,
        rep: u32,
        min: u32,
        max: u32,
        greedy: bool,
        guard: bool,
        iter: Pc,
        exit: Pc,
    ) -> Step {
        let pos = cur.pos;
        self.save_rep(rep);
        let r = &mut self.reps[rep as usize];
        r.count = r.count.saturating_add(1);
        let changed = pos != r.start || r.cc != self.cc;
        let try_tail = !changed || r.count >= min;
        let blocked = guard && try_tail && self.partial && pos == self.bytes.len();
        let try_body = changed && (r.count < max || max == u32::MAX) && !blocked;
        self.branch_repeat(cur, greedy, try_body, try_tail, iter, exit)
    }

    /// `Inst::RepIter`: records where an iteration of a general repeat begins (undoably).
    #[inline(always)]
    fn step_rep_iter(&mut self, cur: &mut Cursor, rep: u32, next: Pc) -> Step {
        self.save_rep(rep);
        let r = &mut self.reps[rep as usize];
        r.start = cur.pos;
        r.cc = self.cc;
        cur.pc = next;
        Step::Continue
    }

    /// `Inst::LoopBack`: after an iteration of an always-consuming loop, chooses between
    /// another iteration and the exit (only the exit at the end of the text under `guard`).
    #[inline(always)]
    fn step_loop_back(
        &mut self,
        cur: &mut Cursor,
        body: Pc,
        exit: Pc,
        greedy: bool,
        guard: bool,
    ) -> Step {
        let blocked = guard && self.partial && cur.pos == self.bytes.len();
        self.branch_repeat(cur, greedy, !blocked, true, body, exit)
    }

    /// `Inst::LoopIter`: starts an iteration of a loop that may match empty by clearing its
    /// progress bit.
    #[inline(always)]
    fn step_loop_iter(cur: &mut Cursor, bit: u32, next: Pc) -> Step {
        cur.bits &= !(1 << bit);
        cur.pc = next;
        Step::Continue
    }

    /// `Inst::LoopEnd`: after an iteration of a loop that may match empty, chooses between
    /// another iteration (only if this one consumed) and the exit.
    #[inline(always)]
    fn step_loop_end(
        &mut self,
        cur: &mut Cursor,
        bit: u32,
        greedy: bool,
        guard: bool,
        iter: Pc,
        exit: Pc,
    ) -> Step {
        let changed = cur.bits & (1 << bit) != 0;
        let blocked = guard && self.partial && cur.pos == self.bytes.len();
        self.branch_repeat(cur, greedy, changed && !blocked, true, iter, exit)
    }

    /// `Inst::Atomic`: runs the body to its first success, then drops its choice points
    /// (keeping its undo records) and continues after it.
    #[inline(always)]
    fn step_atomic(&mut self, cur: &mut Cursor, body: Pc, next: Pc) -> Result<Step, Stop> {
        let sub_base = self.stack.len();
        match self.exec(body, cur.pos, 0, sub_base)? {
            Some(end) => {
                self.cut(sub_base);
                cur.move_to(end, next);
                Ok(Step::Continue)
            }
            None => Ok(Step::Fail),
        }
    }

    /// `Inst::Lookaround`: runs the body at the current position without moving. A positive
    /// lookaround keeps the captures of its first success; a negative one keeps none.
    #[inline(always)]
    fn step_lookaround(
        &mut self,
        cur: &mut Cursor,
        body: Pc,
        positive: bool,
        next: Pc,
    ) -> Result<Step, Stop> {
        let sub_base = self.stack.len();
        let r = self.exec(body, cur.pos, 0, sub_base)?;
        Ok(match (r.is_some(), positive) {
            (true, true) => {
                self.cut(sub_base);
                cur.pc = next;
                Step::Continue
            }
            (true, false) => {
                self.unwind(sub_base);
                Step::Fail
            }
            (false, true) => Step::Fail,
            (false, false) => {
                cur.pc = next;
                Step::Continue
            }
        })
    }

    /// `Inst::Backref`: matches the text of a group; an unset group fails.
    #[inline(always)]
    fn step_backref(
        &self,
        cur: &mut Cursor,
        group: u32,
        ign: bool,
        full: bool,
        rev: bool,
        next: Pc,
    ) -> Result<Step, Stop> {
        let (s, e) = self.caps[group as usize];
        if s == NONE {
            return Ok(Step::Fail);
        }
        let found = if full {
            self.backref_fold(s, e, cur.pos, rev)?
        } else {
            self.backref(s, e, cur.pos, ign, rev)?
        };
        Ok(match found {
            Some(p) => {
                cur.move_to(p, next);
                Step::Continue
            }
            None => Step::Fail,
        })
    }

    /// `Inst::Match`: succeeds, unless this is an empty match the `finditer` rule rejects.
    #[inline(always)]
    fn step_match(&self, cur: &Cursor) -> Step {
        if self.must_advance && cur.pos == self.anchor {
            Step::Fail
        } else {
            Step::Match(cur.pos)
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

    /// Chooses between a repeat's body (`iter`) and its tail (`exit`) as the reference does:
    /// when both are allowed, takes the preferred one and leaves a choice point for the other.
    #[inline(always)]
    fn branch_repeat(
        &mut self,
        cur: &mut Cursor,
        greedy: bool,
        try_body: bool,
        try_tail: bool,
        iter: Pc,
        exit: Pc,
    ) -> Step {
        let (pos, bits) = (at(cur.pos), cur.bits);
        match (try_body, try_tail) {
            (true, true) => {
                if greedy {
                    self.stack.push(Frame::Alt {
                        pc: exit,
                        pos,
                        bits,
                    });
                    cur.pc = iter;
                } else {
                    self.stack.push(Frame::Alt {
                        pc: iter,
                        pos,
                        bits,
                    });
                    cur.pc = exit;
                }
                Step::Continue
            }
            (true, false) => {
                cur.pc = iter;
                Step::Continue
            }
            (false, true) => {
                cur.pc = exit;
                Step::Continue
            }
            (false, false) => Step::Fail,
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

    /// Matches the text of a group at `pos` under full case folding: the foldings of the group's
    /// characters and of the text's must be the same sequence, ending together. `Ok(None)` on
    /// mismatch; forwards, text that ends first is partial.
    fn backref_fold(
        &self,
        s: usize,
        e: usize,
        pos: usize,
        rev: bool,
    ) -> Result<Option<usize>, Stop> {
        let (mut p, mut g) = (pos, if rev { e } else { s });
        let (mut tbuf, mut gbuf) = (Fold::default(), Fold::default());
        let (mut tf, mut gf) = (0usize, 0usize);
        let (mut tn, mut gn) = (0usize, 0usize);
        // Forwards `tf`/`gf` count the folded characters used; backwards, those left.
        let mut t_len = 0usize;
        let mut g_len = 0usize;
        if !rev {
            while g < e {
                if tf >= t_len {
                    match self.fold_at(p, false) {
                        Some((f, n)) => (tbuf, tn, t_len) = (f, n, f.chars().len()),
                        None if self.partial => return Err(Stop::Partial),
                        None => return Ok(None),
                    }
                    tf = 0;
                }
                if gf >= g_len {
                    let (f, n) = self.fold_at(g, false).expect("inside the group");
                    (gbuf, gn, g_len) = (f, n, f.chars().len());
                    gf = 0;
                }
                if !self.same_char_ign(gbuf.chars()[gf], tbuf.chars()[tf]) {
                    return Ok(None);
                }
                tf += 1;
                gf += 1;
                if tf >= t_len {
                    p += tn;
                }
                if gf >= g_len {
                    g += gn;
                }
            }
            if tf < t_len || gf < g_len {
                return Ok(None);
            }
        } else {
            while g > s {
                if tf == 0 {
                    match self.fold_at(p, true) {
                        Some((f, n)) => (tbuf, tn, t_len) = (f, n, f.chars().len()),
                        None => return Ok(None),
                    }
                    tf = t_len;
                }
                if gf == 0 {
                    let (f, n) = self.fold_at(g, true).expect("inside the group");
                    (gbuf, gn, g_len) = (f, n, f.chars().len());
                    gf = g_len;
                }
                if !self.same_char_ign(gbuf.chars()[gf - 1], tbuf.chars()[tf - 1]) {
                    return Ok(None);
                }
                tf -= 1;
                gf -= 1;
                if tf == 0 {
                    p -= tn;
                }
                if gf == 0 {
                    g -= gn;
                }
            }
            if tf > 0 || gf > 0 {
                return Ok(None);
            }
        }
        let _ = (t_len, g_len);
        Ok(Some(p))
    }

    /// Pops frames until a choice point above `base` yields a state to resume.
    fn backtrack(&mut self, base: usize) -> Result<Option<(Pc, usize, u32)>, Stop> {
        // Each frame popped without resuming pushes nothing back.
        for _ in base..self.stack.len() {
            let f = self.stack.pop().expect("non-empty");
            let resumed = match f {
                Frame::Alt { pc, pos, bits } => Some((pc, pos_of(pos), bits)),
                f @ Frame::Greedy { .. } => Some(self.retry_greedy(f)),
                f @ Frame::GreedyFold { .. } => self.retry_greedy_fold(f)?,
                f @ Frame::Lazy { .. } => self.retry_lazy(f)?,
                Frame::Done {
                    pc,
                    bits,
                    pos,
                    state,
                } => {
                    self.remember_failed((pc, bits, pos_of(pos), state));
                    None
                }
                Frame::RunDone { pc, from, to } => {
                    self.run_failed[pc as usize] = (pos_of(from), pos_of(to));
                    None
                }
                undo => {
                    self.undo(undo);
                    None
                }
            };
            if resumed.is_some() {
                return Ok(resumed);
            }
        }
        Ok(None)
    }

    /// A [`Frame::Greedy`] gives back one character: the state after it, keeping the frame
    /// while it can give back more.
    #[inline]
    fn retry_greedy(&mut self, frame: Frame) -> (Pc, usize, u32) {
        let Frame::Greedy {
            next,
            start,
            min_pos,
            pos,
            bits,
            rev,
        } = frame
        else {
            unreachable!("called with a greedy frame")
        };
        let (start, min_pos, pos) = (pos_of(start), pos_of(min_pos), pos_of(pos));
        let p = if rev {
            pos + self.char_fwd(pos).expect("gave back a consumed char").1
        } else {
            pos - self.char_back(pos).expect("gave back a consumed char").1
        };
        if p != min_pos {
            self.stack.push(Frame::Greedy {
                next,
                start: at(start),
                min_pos: at(min_pos),
                pos: at(p),
                bits,
                rev,
            });
        }
        let b = if p != start { !0 } else { bits };
        (next, p, b)
    }

    /// A [`Frame::GreedyFold`] gives back to the next count whose tail can start: the state
    /// there, or `None` when it has nothing left to give back.
    #[inline]
    fn retry_greedy_fold(&mut self, frame: Frame) -> Result<Option<(Pc, usize, u32)>, Stop> {
        let Frame::GreedyFold {
            pc,
            start,
            count,
            bits,
            entry,
        } = frame
        else {
            unreachable!("called with a greedy fold frame")
        };
        let Inst::RepOne { min, next, .. } = self.prog.insts[pc as usize] else {
            unreachable!("greedy fold frames come from RepOne")
        };
        let fold = self
            .prog
            .fold_tail(pc)
            .expect("a repeat with a folded tail");
        let start = pos_of(start);
        self.steps += u64::from(count);
        let Some((p, new_count)) = self.give_back_fold(pc, start, min, count, fold) else {
            return Ok(None);
        };
        if !self.fold_seen.insert((entry, new_count)) {
            // The reference would give back to this count again and again.
            return Err(Stop::Budget);
        }
        if new_count > min {
            self.stack.push(Frame::GreedyFold {
                pc,
                start: at(start),
                count: new_count,
                bits,
                entry,
            });
        } else if new_count < min {
            return Ok(None);
        }
        let b = if p != start { !0 } else { bits };
        Ok(Some((next, p, b)))
    }

    /// A [`Frame::Lazy`] takes one more character (and, before a literal tail, every character
    /// the tail cannot start at): the state after them, or `None` when the repeat cannot go on.
    #[inline]
    fn retry_lazy(&mut self, frame: Frame) -> Result<Option<(Pc, usize, u32)>, Stop> {
        let Frame::Lazy {
            pc,
            start,
            pos,
            count,
            bits,
        } = frame
        else {
            unreachable!("called with a lazy frame")
        };
        let pos = pos_of(pos);
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
        let tail = if rev { None } else { self.tail_literal(next) };
        // The reference's scan for a one-character tail, in a partial search, first asks whether
        // the character the tail failed at is the text's last (or the text has ended): then it
        // reports partial, whether or not the repeat could take that character.
        let partial_at_last =
            self.partial && self.lazy_like_reference && matches!(tail, Some((_, true)));
        let ch = if rev {
            self.char_back(pos)
        } else {
            self.char_fwd(pos)
        };
        if partial_at_last && ch.is_none_or(|(_, n)| pos + n == self.bytes.len()) {
            return Err(Stop::Partial);
        }
        match ch {
            Some((x, n)) if set.contains(x) => {
                let mut p = if rev { pos - n } else { pos + n };
                let mut count = count + 1;
                if let Some((lit, _)) = tail {
                    match self.skip_lazy(set, lit, &mut p, &mut count, max, partial_at_last)? {
                        Some(()) => {}
                        // The tail fails at `p` and the repeat cannot go on.
                        None => return Ok(None),
                    }
                }
                if count < max {
                    self.stack.push(Frame::Lazy {
                        pc,
                        start,
                        pos: at(p),
                        count,
                        bits,
                    });
                }
                Ok(Some((next, p, !0)))
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
                Ok(None)
            }
            _ => Ok(None),
        }
    }
}
