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
    Boundary {
        /// `\b` when true (at a word boundary), `\B` when false (not at one).
        positive: bool,
        /// The tables that decide what a word character is.
        enc: Enc,
    },
    /// `\m`: the start of a word.
    StartOfWord {
        /// The tables that decide what a word character is.
        enc: Enc,
    },
    /// `\M`: the end of a word.
    EndOfWord {
        /// The tables that decide what a word character is.
        enc: Enc,
    },
}

/// One member of a character set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetItem {
    /// One character, as a code point.
    Char(u32),
    /// The characters from the first code point to the second, both included (`a-z`; the
    /// first is always below the second).
    Range(u32, u32),
    /// A property (`\w`, `\p{..}`, `[:alpha:]`): `key` is `property id << 16 | value id`.
    Prop {
        /// The property and value, `property id << 16 | value id` (see
        /// [`property_names`](crate::property_names) and
        /// [`property_ranges`](crate::property_ranges)).
        key: u32,
        /// False for the complement (`\W`, `\P{..}`, `\p{^..}`, `[:^alpha:]`).
        positive: bool,
        /// The tables the property is evaluated with.
        enc: Enc,
    },
    /// A nested union, as produced for `[a-\w]`; flattened when lowered.
    Union(Vec<SetItem>),
    /// A VERSION1 nested set or set operation (`[[a-z]--[aeiou]]`, `[\w&&\d]`, `[a[^b]]`):
    /// `items` combined by `op`, complemented when `!positive`. As the only item of a
    /// [`Node::Set`] it is the set itself (the set's negation flips `positive`).
    Nested {
        /// How the members combine.
        op: SetOp,
        /// The members, in pattern order (the order matters for [`SetOp::Diff`]).
        items: Vec<SetItem>,
        /// False when the combination is complemented (`[^..]`).
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
    /// `*`, `+`, `?`, `{m,n}`: takes as many as it can, then gives back one at a time.
    Greedy,
    /// `*?`, `+?`, `??`, `{m,n}?`: takes as few as it can, then one more at a time.
    Lazy,
    /// `*+`, `++`, `?+`, `{m,n}+`: takes as many as it can and never gives any back.
    Possessive,
}

/// A reference to a group by name or number, resolved after parsing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupName {
    /// A group number, as in `\1` or `(?P=1)`.
    Number(u32),
    /// A group name, as in `(?P=name)` or `\g<name>`.
    Name(String),
}

/// One node of a pattern's syntax tree ([`Tree::node`](crate::Tree::node) is the root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// Matches the empty string (an empty sequence).
    Empty,
    /// The items matched one after the other.
    Seq(Vec<Node>),
    /// Alternatives (`a|b`), tried in order.
    Alt(Vec<Node>),
    /// A literal character (`positive == false` only arises from `[^x]`).
    Char {
        /// The character, as a code point.
        c: u32,
        /// False when it matches any character but `c`.
        positive: bool,
        /// Case-insensitive (IGNORECASE).
        ign: bool,
        /// Full case folding (only with `ign`).
        full: bool,
    },
    /// A run of literal characters packed into one string by the optimiser (never produced by
    /// the parser). With `full`, text matches when its full case folding equals the string's.
    Literal {
        /// The characters, as code points.
        chars: Vec<u32>,
        /// Case-insensitive (IGNORECASE).
        ign: bool,
        /// Full case folding (only with `ign`).
        full: bool,
    },
    /// A bracketed set.
    Set {
        /// The members; a character matches when any of them does.
        items: Vec<SetItem>,
        /// False for a negated set (`[^..]`).
        positive: bool,
        /// Case-insensitive (IGNORECASE).
        ign: bool,
        /// Full case folding (only with `ign`).
        full: bool,
    },
    /// Adjacent one-character alternatives merged into one set by the optimiser (members are
    /// `Char`, `Prop` or `Set` nodes; the flags are the case sensitivity they shared).
    SetOf {
        /// The merged alternatives; a character matches when any of them does.
        members: Vec<Node>,
        /// Case-insensitive (IGNORECASE).
        ign: bool,
        /// Full case folding (only with `ign`).
        full: bool,
    },
    /// A property outside a set (`\w`, `\d`, `\p{L}`, ...).
    Prop {
        /// The property and value, `property id << 16 | value id` (as in [`SetItem::Prop`]).
        key: u32,
        /// False for the complement (`\W`, `\D`, `\P{L}`, ...).
        positive: bool,
        /// Case-insensitive (IGNORECASE).
        ign: bool,
        /// Full case folding (only with `ign`).
        full: bool,
        /// The tables the property is evaluated with.
        enc: Enc,
    },
    /// `.` with DOTALL.
    AnyAll,
    /// `.` without DOTALL (anything but `\n`).
    Any,
    /// A capture group (`index` is the public group number; names may share one).
    Group {
        /// The group number (1 for the first group).
        index: u32,
        /// What the group matches.
        node: Box<Node>,
    },
    /// A quantified item (`x*`, `x+?`, `x{2,5}`, ...).
    Repeat {
        /// The repeated item.
        node: Box<Node>,
        /// The least number of repetitions.
        min: u32,
        /// The most, or `None` for no limit.
        max: Option<u32>,
        /// Greedy, lazy or possessive.
        kind: RepeatKind,
    },
    /// An atomic group `(?>..)`: once it has matched, it never backtracks into it.
    Atomic(Box<Node>),
    /// A lookaround: `(?=..)`, `(?!..)`, `(?<=..)` or `(?<!..)`.
    Look {
        /// A lookbehind (`(?<=..)`, `(?<!..)`) rather than a lookahead.
        behind: bool,
        /// Succeeds when the inner pattern matches (`=`) rather than when it does not (`!`).
        positive: bool,
        /// The pattern looked for.
        node: Box<Node>,
    },
    /// A backreference. `group` is resolved to a number before lowering; `pos` is the pattern
    /// position (in characters) the reference parser reports errors at.
    Backref {
        /// The group referred to.
        group: GroupName,
        /// Compares case-insensitively (IGNORECASE).
        ign: bool,
        /// Compares the full case foldings (only with `ign`).
        full: bool,
        /// Where in the pattern (in characters) the reference reports an error about it.
        pos: usize,
    },
    /// A zero-width assertion (`^`, `$`, `\b`, ...).
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
