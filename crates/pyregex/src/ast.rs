//! The parsed form of a pattern: a tree that mirrors the reference parser's node classes closely
//! enough that its semantics (set optimisations, case flags, encodings) can be reproduced when it
//! is lowered into a program.
//!
//! Case-insensitive nodes carry two flags: `ign` (IGNORECASE) and `full` (full case folding on
//! top of it, from `(?f)` or VERSION1's default; never set without `ign`).

/// Which character tables a class-like node or a word assertion uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enc {
    /// Whatever the whole pattern ends up using (Unicode unless a top-level `(?a)` is present).
    Default,
    /// ASCII only: characters above U+007F behave as unassigned code points.
    Ascii,
    /// Unicode tables.
    Unicode,
}

/// Zero-width assertions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assertion {
    /// `\A`, or `^` without MULTILINE: position 0 only.
    StartOfString,
    /// `^` with MULTILINE: position 0 or just after a `\n`.
    StartOfLine,
    /// `\Z` / `\z`: the very end only.
    EndOfString,
    /// `$` without MULTILINE: the end, or just before a final `\n`.
    EndOfStringLine,
    /// `$` with MULTILINE: the end, or just before any `\n`.
    EndOfLine,
    /// `\b` (positive) or `\B` (negative).
    Boundary { positive: bool, enc: Enc },
    /// `\m`: the start of a word.
    StartOfWord { enc: Enc },
    /// `\M`: the end of a word.
    EndOfWord { enc: Enc },
}

/// One member of a character set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetItem {
    Char(u32),
    Range(u32, u32),
    /// A property (`\w`, `\p{..}`, `[:alpha:]`): `key` is `property id << 16 | value id`.
    Prop {
        key: u32,
        positive: bool,
        enc: Enc,
    },
    /// A nested union, as produced for `[a-\w]`; flattened when lowered.
    Union(Vec<SetItem>),
    /// A VERSION1 nested set or set operation (`[[a-z]--[aeiou]]`, `[\w&&\d]`, `[a[^b]]`):
    /// `items` combined by `op`, complemented when `!positive`. As the only item of a
    /// [`Node::Set`] it is the set itself (the set's negation flips `positive`).
    Nested {
        op: SetOp,
        items: Vec<SetItem>,
        positive: bool,
    },
}

/// How the members of a VERSION1 set combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SetOp {
    /// `[ab]`, `[a||b]`.
    Union,
    /// `[a&&b]`.
    Inter,
    /// `[a--b]`: the first member minus all the others.
    Diff,
    /// `[a~~b]`.
    SymDiff,
}

/// How a repeat backtracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepeatKind {
    Greedy,
    Lazy,
    Possessive,
}

/// A reference to a group by name or number, resolved after parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupName {
    Number(u32),
    Name(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// Matches the empty string (an empty sequence).
    Empty,
    Seq(Vec<Node>),
    Alt(Vec<Node>),
    /// A literal character (`positive == false` only arises from `[^x]`).
    Char {
        c: u32,
        positive: bool,
        ign: bool,
        full: bool,
    },
    /// A run of literal characters packed into one string by the optimiser (never produced by
    /// the parser). With `full`, text matches when its full case folding equals the string's.
    Literal {
        chars: Vec<u32>,
        ign: bool,
        full: bool,
    },
    /// A bracketed set.
    Set {
        items: Vec<SetItem>,
        positive: bool,
        ign: bool,
        full: bool,
    },
    /// Adjacent one-character alternatives merged into one set by the optimiser (members are
    /// `Char`, `Prop` or `Set` nodes; the flags are the case sensitivity they shared).
    SetOf {
        members: Vec<Node>,
        ign: bool,
        full: bool,
    },
    /// A property outside a set (`\w`, `\d`, `\p{L}`, ...).
    Prop {
        key: u32,
        positive: bool,
        ign: bool,
        full: bool,
        enc: Enc,
    },
    /// `.` with DOTALL.
    AnyAll,
    /// `.` without DOTALL (anything but `\n`).
    Any,
    /// A capture group (`index` is the public group number; names may share one).
    Group {
        index: u32,
        node: Box<Node>,
    },
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        kind: RepeatKind,
    },
    Atomic(Box<Node>),
    Look {
        behind: bool,
        positive: bool,
        node: Box<Node>,
    },
    /// A backreference. `group` is resolved to a number before lowering; `pos` is the pattern
    /// position (in characters) the reference parser reports errors at.
    Backref {
        group: GroupName,
        ign: bool,
        full: bool,
        pos: usize,
    },
    Assert(Assertion),
    /// `(*FAIL)`: never matches.
    Fail,
}

impl Node {
    /// The reference parser's `is_empty()`: true for nodes that match only the empty string in a
    /// trivial way (quantifiers applied to them are dropped).
    pub fn is_empty(&self) -> bool {
        match self {
            Node::Empty => true,
            Node::Seq(items) => items.iter().all(Node::is_empty),
            Node::Alt(branches) => branches.iter().all(Node::is_empty),
            Node::Atomic(n) => n.is_empty(),
            Node::Repeat { node, .. } => node.is_empty(),
            Node::Look { positive, node, .. } => *positive && node.is_empty(),
            _ => false,
        }
    }

    /// Whether this is a one-range set such as `[a-z]`: the reference keeps it as a `Range` node,
    /// which has no first set, no simple start and is not merged with other alternatives.
    pub fn is_range(&self) -> bool {
        fn single(items: &[SetItem]) -> bool {
            match items {
                [SetItem::Union(inner)] => single(inner),
                [SetItem::Range(..)] => true,
                _ => false,
            }
        }
        matches!(self, Node::Set { items, .. } if single(items))
    }

    /// Whether this node is a repeat (for the "multiple repeat" check).
    pub fn is_repeat(&self) -> bool {
        matches!(self, Node::Repeat { .. })
    }
}
