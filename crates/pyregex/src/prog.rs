//! The compiled program the backtracking matcher runs: a graph of instructions, each naming its
//! successor(s) by index.

use super::charset::CharSet;

/// A position test for assertions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Look {
    StartOfString,
    StartOfLine,
    EndOfString,
    EndOfStringLine,
    EndOfLine,
    /// Word boundary (`positive`) or not a boundary; `ascii` selects the ASCII word class.
    Boundary {
        positive: bool,
        ascii: bool,
    },
    StartOfWord {
        ascii: bool,
    },
    EndOfWord {
        ascii: bool,
    },
}

/// The index of an instruction in [`Program::insts`].
pub(crate) type Pc = u32;

/// How a literal string compares with the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LitCase {
    /// Exactly.
    Exact,
    /// Character by character, ignoring case (simple case folding).
    Ign,
    /// The text's full case folding against the string's (the string is stored folded).
    Fold,
}

/// The reference's test for where a search may start a match attempt: the first thing the
/// pattern needs, looking past group markers and lookarounds.
#[derive(Clone, Debug)]
pub(crate) enum StartTest {
    /// Any position.
    Anywhere,
    /// Only position 0.
    Anchored,
    /// The character there must be in the set.
    Class(CharSet),
    /// The literal must occur there (or, in partial mode, the text must end with a prefix).
    Literal { chars: Vec<u32>, case: LitCase },
    /// The assertion must hold there.
    At(Look),
}

/// A pattern that begins with a string under full case folding (its very first node): the
/// reference's search finds the string and then tests what follows it before trying a match
/// there, and in partial mode reports some starts in its own way (see `search::lead_check`).
#[derive(Clone, Debug)]
pub(crate) struct FoldLead {
    /// The string, folded.
    pub chars: Vec<u32>,
    /// The test of what follows it.
    pub next: NextTest,
}

/// The reference's look-ahead test of the node after a leading string (`try_match`).
#[derive(Clone, Debug)]
pub(crate) enum NextTest {
    /// No test: a match is tried.
    Succeed,
    /// One character from the set.
    Class(CharSet),
    /// A zero-width assertion.
    Assert(Look),
    /// A string. `skipped`: the test was found past group or repeat markers, which changes
    /// where a folded string reports a partial match.
    Literal {
        chars: Vec<u32>,
        case: LitCase,
        skipped: bool,
    },
}

/// The reference's "required string": a literal every match contains, found before matching
/// is attempted. `offset` is the largest number of characters that can precede it in a match
/// (`None` when unbounded); a search never starts more than that many characters before it.
#[derive(Clone, Debug)]
pub(crate) struct Required {
    /// The literal (folded for [`LitCase::Fold`]).
    pub chars: Vec<u32>,
    /// The literal as UTF-8 (for [`LitCase::Exact`], for a fast substring search).
    pub text: String,
    pub case: LitCase,
    pub offset: Option<usize>,
}

/// One instruction. `rev` marks instructions that run right-to-left (inside lookbehinds).
#[derive(Clone, Debug)]
pub(crate) enum Inst {
    /// One exact character.
    Char {
        c: char,
        rev: bool,
        next: Pc,
    },
    /// An exact string (UTF-8 bytes in `Program::strings`).
    Str {
        s: u32,
        rev: bool,
        next: Pc,
    },
    /// A string under full case folding (folded code points in `Program::folded`): the text's
    /// characters, folded, must spell it, and the last one's folding must end with it. `req`: it
    /// is the required string, which the reference takes as matched, without comparing again,
    /// where its search found it (that search compares folded characters a little differently).
    StrFold {
        s: u32,
        req: bool,
        rev: bool,
        next: Pc,
    },
    /// One character from a set (index into `Program::sets`).
    Set {
        set: u32,
        rev: bool,
        next: Pc,
    },
    /// Any one character.
    Any {
        rev: bool,
        next: Pc,
    },
    Assert {
        look: Look,
        next: Pc,
    },
    /// Try `first`; on failure try `second`.
    Split {
        first: Pc,
        second: Pc,
    },
    /// Remember the position in private slot `slot` (a group's first edge in matching order).
    /// `undo`: backtracking must restore the slot's old value. It need not when the group's
    /// body leaves no choice point (every way back into the group then runs this mark again
    /// before the close reads the slot) and no backreference refers to the group (the memo
    /// of failed states reads the slots of those).
    Mark {
        slot: u32,
        undo: bool,
        next: Pc,
    },
    /// Set public group `group` from private slot `slot` to the current position.
    Close {
        slot: u32,
        group: u32,
        rev: bool,
        next: Pc,
    },
    /// A single-character item repeated `min..=max` times (`max == u32::MAX`: unbounded).
    RepOne {
        set: u32,
        min: u32,
        max: u32,
        greedy: bool,
        rev: bool,
        next: Pc,
    },
    /// Entry of a general repeat of `min..=max` iterations, with its count and iteration start
    /// in registers. (`min` is 0 unless the body always consumes, since the reference unrolls
    /// the minimum, which only differs when an iteration can be empty.)
    RepStart {
        rep: u32,
        min: u32,
        max: u32,
        greedy: bool,
        iter: Pc,
        exit: Pc,
    },
    /// End of one iteration of a general repeat. `guard`: see [`Inst::LoopBack`].
    RepEnd {
        rep: u32,
        min: u32,
        max: u32,
        greedy: bool,
        guard: bool,
        iter: Pc,
        exit: Pc,
    },
    /// Start of an iteration of a general repeat: records where it began.
    RepIter {
        rep: u32,
        next: Pc,
    },
    /// End of an iteration of a loop whose body always consumes: iterate again or leave.
    /// `guard`: the body starts with a character test, and (as in the reference) partial
    /// matching at the very end of the text then leaves the loop instead of reporting partial.
    LoopBack {
        body: Pc,
        exit: Pc,
        greedy: bool,
        guard: bool,
    },
    /// End of an iteration of a loop whose body may match empty: an empty iteration (progress
    /// bit `bit` clear) ends the loop, as in the reference.
    LoopEnd {
        bit: u32,
        greedy: bool,
        guard: bool,
        iter: Pc,
        exit: Pc,
    },
    /// Start of an iteration of such a loop: clears its progress bit.
    LoopIter {
        bit: u32,
        next: Pc,
    },
    /// An atomic group: run `body` to its first success, then continue without backtracking
    /// into it.
    Atomic {
        body: Pc,
        next: Pc,
    },
    /// A lookaround: run `body` (compiled right-to-left for a lookbehind) at the current position.
    Lookaround {
        body: Pc,
        positive: bool,
        next: Pc,
    },
    /// The end of an atomic or lookaround body.
    SubEnd,
    /// A backreference to public group `group` (`full`: comparing full case foldings).
    Backref {
        group: u32,
        ign: bool,
        full: bool,
        rev: bool,
        next: Pc,
    },
    Match,
    Fail,
}

impl Inst {
    /// Whether the matcher may record (instruction, position) here to avoid re-exploring.
    pub(crate) fn is_memo_point(&self) -> bool {
        matches!(
            self,
            Inst::Split { .. }
                | Inst::RepOne { .. }
                | Inst::LoopEnd { .. }
                | Inst::LoopBack { .. }
                | Inst::RepEnd { .. }
                | Inst::Atomic { .. }
                | Inst::Lookaround { .. }
        )
    }
}

/// A compiled pattern.
#[derive(Debug)]
pub(crate) struct Program {
    pub insts: Vec<Inst>,
    pub start: Pc,
    pub sets: Vec<CharSet>,
    pub strings: Vec<Box<str>>,
    /// The strings of [`Inst::StrFold`].
    pub folded: Vec<Box<[u32]>>,
    /// Number of public groups (group 0 excluded).
    pub group_count: usize,
    /// Number of private group slots.
    pub slot_count: usize,
    /// Number of general repeats (registers).
    pub rep_count: usize,
    /// Per general repeat: `(min, max)`.
    pub rep_bounds: Vec<(u32, u32)>,
    /// Per instruction: the general repeats enclosing it in its body (bit 63 stands for all
    /// repeats numbered 63 and above).
    pub rep_mask: Vec<u64>,
    /// Per instruction: the progress bits of the loops enclosing it within its body.
    pub loop_mask: Vec<u32>,
    /// Per public group: whether a backreference refers to it.
    pub referenced: Vec<bool>,
    /// Per private slot: the public group it belongs to.
    pub slot_group: Vec<u32>,
    /// Per instruction: whether a backreference may still run after it.
    pub backref_ahead: Vec<bool>,
    /// Whether the matcher state includes registers or backreferenced captures that the memo key
    /// must cover.
    pub stateful: bool,
    pub required: Option<Required>,
    pub start_test: StartTest,
    /// The start test is the required string itself (the same literal): the reference then
    /// skips it.
    pub start_is_required: bool,
    /// Set when the pattern's first node is a string under full case folding.
    pub fold_lead: Option<FoldLead>,
    /// Greedy forward [`Inst::RepOne`]s whose tail begins with a string under full case
    /// folding (through group edges), with that string (an index into `folded`): the
    /// reference gives characters back by searching backwards for the string (see
    /// `backtrack::Frame::GreedyFold`).
    pub fold_tails: Vec<(Pc, u32)>,
    /// For partial search: the characters unbounded loops can consume, and a bound on all other
    /// consumption. A partial start must reach the end of the text, so the text after it holds
    /// at most that many characters outside the set. `None` when that gives no bound.
    pub partial_reach: Option<(CharSet, u64)>,
    /// The fewest characters a match consumes: the reference skips a complete search outright
    /// when fewer remain (and then learns nothing about its required string).
    pub min_width: u64,
    /// Literals every match contains: a complete search with no occurrence of one of them after
    /// its start position cannot succeed.
    pub must_contain: Vec<String>,
    /// The reference's first set: when present, a search only starts on these characters (or at
    /// the very end).
    pub firstset: Option<CharSet>,
    /// Whether a word-boundary test uses ASCII when the pattern default applies.
    pub ascii: bool,
    /// Set (an index into `sets`) when every match begins with a greedy unbounded repeat of
    /// that set (past group marks) whose continuation must consume a character outside it
    /// (`\s*<tool_call>`), and nothing else in the program's search tests disagrees: then a
    /// partial search from a position followed only by characters of the set reports a
    /// partial match there (see `search::partial_over_run`).
    pub lead_run: Option<u32>,
}

impl Program {
    /// The folded string (an index into `folded`) that the tail of the greedy repeat at `pc`
    /// begins with, when it is one of [`Program::fold_tails`].
    pub(crate) fn fold_tail(&self, pc: Pc) -> Option<u32> {
        self.fold_tails
            .iter()
            .find(|&&(p, _)| p == pc)
            .map(|&(_, s)| s)
    }
}
