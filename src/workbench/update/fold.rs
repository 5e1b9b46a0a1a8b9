//! Folding the prompt (`f`): the lines of the prefix before the start anchor, text the parser
//! never sees, leave the raw pane so the generation starts at the top. Folded by default when
//! they would take more than a third of the pane; a search match or a diagnostic in them
//! unfolds them.

use crate::workbench::analysis::Analysis;
use crate::workbench::state::State;
use crate::workbench::view::raw::{self, fold_line, is_folded};

/// Decides the fold for a new sample: folded when the prompt lines before the anchor take
/// more than a third of a pane of `width` x `height`.
pub(super) fn decide(state: &mut State, a: &Analysis, width: usize, height: usize) {
    if state.ui.fold.is_some() {
        return;
    }
    let k = fold_line(a);
    let mut rows = 0;
    for line in 0..k {
        rows += raw::rows_of_line(a, line, width).len();
        if rows * 3 > height {
            break;
        }
    }
    state.ui.fold = Some(rows * 3 > height);
}

/// Unfolds when byte `at` is in the folded lines.
pub(super) fn reveal(state: &mut State, a: &Analysis, at: usize) {
    if is_folded(state, a) && at < a.line_starts.at(fold_line(a)) {
        state.ui.fold = Some(false);
    }
}

/// Keeps the cursor and the first row out of the folded lines.
pub(super) fn clamp(state: &mut State, a: &Analysis) {
    if !is_folded(state, a) {
        return;
    }
    let k = fold_line(a);
    state.ui.cursor = state.ui.cursor.max(a.line_starts.at(k));
    if state.ui.raw_top.0 < k {
        state.ui.raw_top = (k, 0);
    }
}

/// `f`: fold or unfold (the caller then keeps the cursor on screen).
pub(super) fn toggle(state: &mut State) {
    let Some(a) = state.analysis().cloned() else {
        return;
    };
    let k = fold_line(&a);
    if k == 0 {
        state.ui.note = Some("nothing to fold: no prompt before the start anchor".into());
        return;
    }
    let folded = !is_folded(state, &a);
    state.ui.fold = Some(folded);
    state.ui.note = Some(if folded {
        format!("{k} prompt lines folded (f unfolds)")
    } else {
        "prompt unfolded".into()
    });
    if !folded && state.ui.raw_top.0 == k && state.ui.raw_top.1 == 0 {
        // Show the prompt that just came back.
        state.ui.raw_top = (0, 0);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::on_action;
    use super::super::testing::loaded;
    use super::*;
    use crate::workbench::keys::Action;

    #[test]
    fn f_hides_the_prompt_lines_and_keeps_the_cursor_out_of_them() {
        let mut state = loaded(0, (120, 40));
        let a = Arc::clone(state.analysis().unwrap());
        let k = fold_line(&a);
        assert!(k > 0, "the bundled sample has a prompt before its anchor");
        state.ui.fold = Some(false);
        on_action(&mut state, Action::Top);
        assert_eq!(state.ui.cursor, 0);
        on_action(&mut state, Action::Fold);
        assert!(is_folded(&state, &a));
        assert_eq!(state.ui.cursor, a.line_starts.at(k));
        assert_eq!(state.ui.raw_top, (k, 0));
        on_action(&mut state, Action::Top);
        assert_eq!(state.ui.cursor, a.line_starts.at(k), "g stops at the fold");
        on_action(&mut state, Action::Up);
        assert_eq!(state.ui.raw_top.0, k);
        on_action(&mut state, Action::Fold);
        assert!(!is_folded(&state, &a));
        assert_eq!(state.ui.raw_top, (0, 0), "the prompt shows again");
    }

    #[test]
    fn the_fold_is_on_by_default_only_when_the_prompt_takes_over_a_third_of_the_pane() {
        let state = loaded(0, (120, 40));
        let a = Arc::clone(state.analysis().unwrap());
        let k = fold_line(&a);
        let rows: usize = (0..k).map(|l| raw::rows_of_line(&a, l, 200).len()).sum();
        let mut s = state;
        s.ui.fold = None;
        decide(&mut s, &a, 200, rows * 3 + 3);
        assert_eq!(s.ui.fold, Some(false), "a third or less: shown");
        s.ui.fold = None;
        decide(&mut s, &a, 200, rows * 3 - 1);
        assert_eq!(s.ui.fold, Some(true), "more than a third: folded");
    }
}
