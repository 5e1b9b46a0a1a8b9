//! Patterns compiled for the other engines, and their answers to a recorded reference call
//! (shared by the report and the cause analysis).

use std::rc::Rc;

use pyregex::hook::{Call, CallKind, Outcome, Spans};

use crate::engine::{Compiled, EngineKind};
use crate::translate::{Options, translate, tree_of};

/// A pattern compiled for one engine, or why it cannot be.
pub(crate) enum Slot {
    Ready(Rc<Compiled>),
    Refused(String),
    Unavailable,
}

/// Compiles `pattern` for `engine`, or says why it cannot be.
pub(crate) fn compile(pattern: &str, engine: EngineKind) -> Slot {
    if !engine.available() {
        return Slot::Unavailable;
    }
    let tree = match tree_of(pattern) {
        Ok(t) => t,
        Err(e) => return Slot::Refused(format!("the reference itself refuses it: {e}")),
    };
    compile_with(&tree, engine, Options::default())
}

pub(crate) fn compile_with(tree: &pyregex::Tree, engine: EngineKind, options: Options) -> Slot {
    match translate(tree, engine, options) {
        Err(n) => Slot::Refused(n.construct),
        Ok(t) => match Compiled::new(engine, &t, tree.group_count) {
            Ok(c) => Slot::Ready(Rc::new(c)),
            Err(e) => Slot::Refused(format!(
                "{} rejects `{}`: {}",
                engine.name(),
                t.pattern,
                first_line(&e)
            )),
        },
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
        .to_string()
}

/// What the engine answers to the same call.
pub(crate) fn replay(c: &Compiled, call: &Call) -> Outcome {
    let r = match call.kind {
        CallKind::Search | CallKind::SearchPartial => c.search(&call.hay, call.pos).map(to_outcome),
        CallKind::Match => c.match_at(&call.hay, call.pos).map(to_outcome),
        CallKind::FindIter => c.find_all(&call.hay).map(Outcome::All),
    };
    r.unwrap_or_else(Outcome::Error)
}

fn to_outcome(s: Option<Spans>) -> Outcome {
    s.map_or(Outcome::NoMatch, Outcome::Match)
}

/// Whether the engine's answer is the reference's. A partial search is compared on what an
/// engine without partial matching can answer: the complete match, or none.
pub(crate) fn agrees(kind: CallKind, reference: &Outcome, engine: &Outcome) -> bool {
    match (reference, engine) {
        // A search the reference could not finish says nothing.
        (Outcome::Error(_), _) => true,
        (Outcome::Partial(_), Outcome::NoMatch) => kind == CallKind::SearchPartial,
        (a, b) => a == b,
    }
}
