//! Why an engine disagrees: the constructs of the pattern whose meaning varies between engines
//! are found in its syntax tree, and each is confirmed by re-running the engine on the same
//! search with that construct written in the reference's exact meaning. The first construct
//! whose replacement makes the engine agree is the cause.

use pyregex::ast::{Assertion, Enc, Node, RepeatKind, SetItem};
use pyregex::hook::{Call, Outcome};
use pyregex::{Flags, Regex};

use crate::compiled::{Slot, agrees, compile_with, replay};
use crate::engine::EngineKind;
use crate::report::Cause;
use crate::translate::{Options, tree_of};

/// Constructs whose meaning varies between engines.
#[derive(Default)]
struct Involved {
    classes: bool,
    dollar: bool,
    ign: bool,
    lazy: bool,
    lookbehind: bool,
    lookahead: bool,
}

fn walk(n: &Node, ascii: bool, f: &mut Involved) {
    let unicode = |enc: &Enc| match enc {
        Enc::Unicode => true,
        Enc::Ascii => false,
        Enc::Default => !ascii,
    };
    match n {
        Node::Seq(v) | Node::Alt(v) | Node::SetOf { members: v, .. } => {
            v.iter().for_each(|m| walk(m, ascii, f))
        }
        Node::Group { node, .. } | Node::Atomic(node) => walk(node, ascii, f),
        Node::Repeat { node, kind, .. } => {
            f.lazy |= *kind == RepeatKind::Lazy;
            walk(node, ascii, f)
        }
        Node::Look { behind, node, .. } => {
            if *behind {
                f.lookbehind = true;
            } else {
                f.lookahead = true;
            }
            walk(node, ascii, f)
        }
        Node::Prop { ign, enc, .. } => {
            f.classes |= unicode(enc);
            f.ign |= *ign;
        }
        Node::Set { items, ign, .. } => {
            f.ign |= *ign;
            f.classes |= items
                .iter()
                .any(|i| matches!(i, SetItem::Prop { enc, .. } if unicode(enc)));
        }
        Node::Char { ign, .. } | Node::Backref { ign, .. } => f.ign |= *ign,
        Node::Assert(Assertion::EndOfStringLine) => f.dollar = true,
        Node::Assert(Assertion::Boundary { enc, .. }) => f.classes |= unicode(enc),
        _ => {}
    }
}

/// The cause of `engine` answering `got` to `call` (whose reference answer is recorded).
pub(crate) fn find(pattern: &str, engine: EngineKind, call: &Call, got: &Outcome) -> Cause {
    if let Outcome::Error(m) = got {
        return Cause::EngineLimit(m.clone());
    }
    let Ok(tree) = tree_of(pattern) else {
        return Cause::Unexplained {
            constructs: Vec::new(),
        };
    };
    let mut inv = Involved::default();
    walk(&tree.node, tree.ascii, &mut inv);
    let agrees_with = |options: Options| -> bool {
        match compile_with(&tree, engine, options) {
            Slot::Ready(c) => agrees(call.kind, &call.outcome, &replay(&c, call)),
            _ => false,
        }
    };
    if inv.classes
        && agrees_with(Options {
            exact_classes: true,
            ..Options::default()
        })
    {
        return Cause::UnicodeClasses;
    }
    if inv.dollar && dollar_confirmed(pattern, &tree, engine, call, &agrees_with) {
        return Cause::DollarBeforeFinalNewline;
    }
    if inv.ign
        && agrees_with(Options {
            exact_case: true,
            ..Options::default()
        })
    {
        return Cause::CaseFolding;
    }
    let mut constructs = Vec::new();
    for (on, name) in [
        (inv.classes, "Unicode \\w/\\d/\\s/\\b"),
        (inv.dollar, "`$`"),
        (inv.ign, "case-insensitive matching"),
        (inv.lazy, "lazy repeats"),
        (inv.lookbehind, "lookbehind"),
        (inv.lookahead, "lookahead"),
    ] {
        if on {
            constructs.push(name.to_string());
        }
    }
    Cause::Unexplained { constructs }
}

/// `$` is confirmed as the cause when writing it as "end, or before a final newline" makes the
/// engine agree; for an engine without lookahead, when on the text without its final newline
/// (where both meanings of `$` coincide) the engine agrees with the reference.
fn dollar_confirmed(
    pattern: &str,
    tree: &pyregex::Tree,
    engine: EngineKind,
    call: &Call,
    agrees_with: &dyn Fn(Options) -> bool,
) -> bool {
    let exact = Options {
        exact_dollar: true,
        ..Options::default()
    };
    if engine != EngineKind::Regex {
        return agrees_with(exact);
    }
    let hay = call.hay.strip_suffix('\0').unwrap_or(&call.hay);
    let Some(trimmed) = hay.strip_suffix('\n') else {
        return false;
    };
    let Ok(reference) = Regex::new(pattern, Flags { dotall: true }) else {
        return false;
    };
    let Slot::Ready(c) = compile_with(tree, engine, Options::default()) else {
        return false;
    };
    let theirs = c
        .search(trimmed, call.pos.min(trimmed.len()))
        .ok()
        .flatten();
    let ours = reference
        .search(trimmed, call.pos.min(trimmed.len()))
        .ok()
        .flatten()
        .map(|m| (m.start(), m.end()));
    theirs.and_then(|s| s[0]) == ours
}
