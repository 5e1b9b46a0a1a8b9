//! A per-thread hook on the searches a pattern makes: tools that compare this engine with other
//! runtimes' regex engines record every search a parse makes (pattern, haystack, start, kind,
//! result) and can substitute another engine's answers to see how the parse would change.
//!
//! Off by default and free when off: every hooked entry point reads one thread-local
//! `Cell<bool>`. While the hook is handling a call it switches itself off, so the real search
//! (and any search an [`Override`] makes) runs unhooked.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::{Match, Partial, Regex, RegexError};

/// Which entry point a call went through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallKind {
    /// `search(hay, pos)`.
    Search,
    /// `search(hay, pos, partial=True)`.
    SearchPartial,
    /// `match(hay, pos)`.
    Match,
    /// `finditer(hay)` (all matches, collected).
    FindIter,
}

impl CallKind {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Search => "search",
            CallKind::SearchPartial => "partial search",
            CallKind::Match => "match",
            CallKind::FindIter => "finditer",
        }
    }
}

/// Group spans of one match, index 0 being the whole match.
pub type Spans = Vec<Option<(usize, usize)>>;

/// What a call returned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A search or match that found nothing.
    NoMatch,
    /// A match (for a partial search, a complete one), with its group spans.
    Match(Spans),
    /// A partial search with no complete match: the held-back start.
    Partial(usize),
    /// Every match of a `finditer`.
    All(Vec<Spans>),
    /// The search failed (for example its work budget ran out).
    Error(String),
}

/// One recorded call.
#[derive(Clone, Debug)]
pub struct Call {
    /// The pattern searched with; consecutive calls with the same pattern share it.
    pub pattern: Rc<str>,
    /// Whether the pattern was compiled with DOTALL.
    pub dotall: bool,
    /// The haystack; consecutive calls on the same text share it.
    pub hay: Rc<str>,
    /// The start position as the caller passed it (a byte offset; 0 for `finditer`).
    pub pos: usize,
    /// Which entry point was called.
    pub kind: CallKind,
    /// What the call returned (the override's answer when one was used).
    pub outcome: Outcome,
}

/// Supplies answers in place of this engine's. Returning `None` keeps this engine's answer.
/// An answer must have the kind's shape (`Match`/`NoMatch` for search and match, `Partial`
/// too for a partial search, `All` for finditer); any other shape is ignored.
pub trait Override {
    /// The answer for a call of `kind` with `pattern` (compiled with DOTALL when `dotall`) on
    /// `hay` from byte offset `pos`, or `None` to let this engine answer.
    fn answer(
        &mut self,
        pattern: &str,
        dotall: bool,
        hay: &str,
        pos: usize,
        kind: CallKind,
    ) -> Option<Outcome>;
}

#[derive(Default)]
struct State {
    calls: Option<Vec<Call>>,
    last_hay: Option<Rc<str>>,
    last_pattern: Option<Rc<str>>,
    over: Option<Box<dyn Override>>,
}

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Whether the hook is on for this thread (the entry points' one check).
#[inline]
pub(crate) fn active() -> bool {
    ACTIVE.with(Cell::get)
}

/// Turns the hook off for its lifetime and restores the previous setting (also on unwind).
struct Pause(bool);

impl Pause {
    fn new() -> Pause {
        Pause(ACTIVE.with(|a| a.replace(false)))
    }
}

impl Drop for Pause {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(self.0));
    }
}

/// Restores the state that was current before a [`run`].
struct Restore(Option<State>, bool);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            STATE.with(|st| *st.borrow_mut() = s);
        }
        ACTIVE.with(|a| a.set(self.1));
    }
}

/// Runs `f` with the hook on: every call is recorded, and `over` (if given) may answer in
/// place of this engine. Returns `f`'s result and the calls in order. Nested runs are allowed
/// (the inner one sees only its own calls).
pub fn run<R>(over: Option<Box<dyn Override>>, f: impl FnOnce() -> R) -> (R, Vec<Call>) {
    run_with(over, true, f)
}

/// [`run`] without recording (only the override is applied).
pub fn run_quiet<R>(over: Option<Box<dyn Override>>, f: impl FnOnce() -> R) -> R {
    run_with(over, false, f).0
}

fn run_with<R>(
    over: Option<Box<dyn Override>>,
    recording: bool,
    f: impl FnOnce() -> R,
) -> (R, Vec<Call>) {
    let fresh = State {
        calls: recording.then(Vec::new),
        over,
        ..State::default()
    };
    let previous = STATE.with(|st| std::mem::replace(&mut *st.borrow_mut(), fresh));
    let was = ACTIVE.with(|a| a.replace(true));
    let mut restore = Restore(Some(previous), was);
    let r = f();
    let mine = STATE
        .with(|st| std::mem::replace(&mut *st.borrow_mut(), restore.0.take().unwrap_or_default()));
    ACTIVE.with(|a| a.set(was));
    drop(restore);
    (r, mine.calls.unwrap_or_default())
}

fn ask(re: &Regex, hay: &str, pos: usize, kind: CallKind) -> Option<Outcome> {
    let mut over = STATE.with(|st| st.borrow_mut().over.take())?;
    let answer = over.answer(&re.inner.pattern, re.inner.flags.dotall, hay, pos, kind);
    STATE.with(|st| st.borrow_mut().over = Some(over));
    answer
}

fn record(re: &Regex, hay: &str, pos: usize, kind: CallKind, outcome: Outcome) {
    STATE.with(|st| {
        let st = &mut *st.borrow_mut();
        if st.calls.is_none() {
            return;
        }
        let hay = match &st.last_hay {
            Some(h) if **h == *hay => Rc::clone(h),
            _ => Rc::from(hay),
        };
        let pattern = match &st.last_pattern {
            Some(p) if **p == *re.inner.pattern => Rc::clone(p),
            _ => Rc::from(re.inner.pattern.as_str()),
        };
        st.last_hay = Some(Rc::clone(&hay));
        st.last_pattern = Some(Rc::clone(&pattern));
        if let Some(calls) = &mut st.calls {
            calls.push(Call {
                pattern,
                dotall: re.inner.flags.dotall,
                hay,
                pos,
                kind,
                outcome,
            });
        }
    });
}

/// A match built from supplied spans, shaped like this pattern's (missing groups unset).
fn make(re: &Regex, spans: &Spans) -> Option<Match> {
    let mut spans = spans.clone();
    spans.resize(re.group_count() + 1, None);
    spans.first().copied().flatten()?;
    Some(re.make_match(spans))
}

fn spans_of(m: &Match) -> Spans {
    m.spans.clone()
}

fn outcome_of(r: &Result<Option<Match>, RegexError>) -> Outcome {
    match r {
        Ok(Some(m)) => Outcome::Match(spans_of(m)),
        Ok(None) => Outcome::NoMatch,
        Err(e) => Outcome::Error(e.to_string()),
    }
}

/// `Regex::search` or `Regex::match_at` while the hook is on.
pub(crate) fn search(
    re: &Regex,
    hay: &str,
    pos: usize,
    kind: CallKind,
) -> Result<Option<Match>, RegexError> {
    let _pause = Pause::new();
    let result = match ask(re, hay, pos, kind) {
        Some(Outcome::NoMatch) => Ok(None),
        Some(Outcome::Match(s)) if make(re, &s).is_some() => Ok(make(re, &s)),
        _ if kind == CallKind::Match => re.match_at(hay, pos),
        _ => re.search(hay, pos),
    };
    record(re, hay, pos, kind, outcome_of(&result));
    result
}

/// `Regex::search_partial` while the hook is on.
pub(crate) fn search_partial(re: &Regex, hay: &str, pos: usize) -> Result<Partial, RegexError> {
    let _pause = Pause::new();
    let kind = CallKind::SearchPartial;
    let result = match ask(re, hay, pos, kind) {
        Some(Outcome::Partial(start)) if start <= hay.len() => Ok(Partial::Partial { start }),
        Some(Outcome::Match(s)) if make(re, &s).is_some() => {
            Ok(Partial::Complete(make(re, &s).expect("checked")))
        }
        _ => re.search_partial(hay, pos),
    };
    let outcome = match &result {
        Ok(Partial::Complete(m)) => Outcome::Match(spans_of(m)),
        Ok(Partial::Partial { start }) => Outcome::Partial(*start),
        Err(e) => Outcome::Error(e.to_string()),
    };
    record(re, hay, pos, kind, outcome);
    result
}

/// The iterator `Regex::find_iter` returns: the live search, or (with the hook on) the
/// matches collected up front, so that they can be recorded or replaced.
pub(crate) enum Hooked<I> {
    Live(I),
    Fixed(std::vec::IntoIter<Result<Match, RegexError>>),
}

impl<I: Iterator<Item = Result<Match, RegexError>>> Iterator for Hooked<I> {
    type Item = Result<Match, RegexError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Hooked::Live(it) => it.next(),
            Hooked::Fixed(it) => it.next(),
        }
    }
}

/// Wraps `Regex::find_iter`'s iterator.
pub(crate) fn find_iter<I: Iterator<Item = Result<Match, RegexError>>>(
    re: &Regex,
    hay: &str,
    live: I,
) -> Hooked<I> {
    if !active() {
        return Hooked::Live(live);
    }
    let _pause = Pause::new();
    let kind = CallKind::FindIter;
    let items: Vec<Result<Match, RegexError>> = match ask(re, hay, 0, kind) {
        Some(Outcome::All(all)) if all.iter().all(|s| make(re, s).is_some()) => {
            all.iter().filter_map(|s| make(re, s)).map(Ok).collect()
        }
        _ => live.collect(),
    };
    let outcome = match items.iter().find_map(|r| r.as_ref().err()) {
        Some(e) => Outcome::Error(e.to_string()),
        None => Outcome::All(items.iter().flatten().map(spans_of).collect()),
    };
    record(re, hay, 0, kind, outcome);
    Hooked::Fixed(items.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Flags;

    struct NoMatches;

    impl Override for NoMatches {
        fn answer(&mut self, p: &str, _: bool, _: &str, _: usize, k: CallKind) -> Option<Outcome> {
            (p == "b+").then_some(if k == CallKind::FindIter {
                Outcome::All(Vec::new())
            } else {
                Outcome::NoMatch
            })
        }
    }

    #[test]
    fn records_and_overrides_calls() {
        let re = Regex::new("b+", Flags::default()).unwrap();
        let other = Regex::new("a", Flags::default()).unwrap();
        let (found, calls) = run(None, || {
            (
                re.search("abba", 0).unwrap().map(|m| m.range()),
                re.find_iter("abba").count(),
            )
        });
        assert_eq!(found, (Some(1..3), 1));
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].kind, CallKind::Search);
        assert_eq!(calls[0].outcome, Outcome::Match(vec![Some((1, 3))]));
        assert_eq!(calls[1].outcome, Outcome::All(vec![vec![Some((1, 3))]]));
        let (found, calls) = run(Some(Box::new(NoMatches)), || {
            (
                re.search("abba", 0).unwrap(),
                re.find_iter("abba").count(),
                other.match_at("abba", 0).unwrap().is_some(),
            )
        });
        assert_eq!(found, (None, 0, true));
        assert_eq!(calls[2].kind, CallKind::Match);
        // Off again afterwards.
        assert!(!active());
        assert!(re.search("abba", 0).unwrap().is_some());
    }
}
