//! Going to places: Enter on a diagnostic moves the raw cursor to it (a template place opens
//! the editor there), and `o` asks the run loop to open the editor at the place under the
//! cursor of the focused pane (see [`crate::workbench::editor`]).

use std::path::PathBuf;

use crate::workbench::editor::Place;
use crate::workbench::keys::Action;
use crate::workbench::pane::Opens;
use crate::workbench::state::{Mode, Pane, State};
use crate::workbench::view::diagnostics::{self, Target};

use super::Cmd;
use super::motion::{cursor_moved, remember_col};

/// The selected diagnostic's target.
fn selected_target(state: &State) -> Option<Target> {
    let items = diagnostics::items(state, usize::from(state.ui.size.0));
    items.get(state.ui.diagnostic)?.target.clone()
}

/// The template file, when the template is one.
fn template_path(state: &State) -> Option<PathBuf> {
    let p = PathBuf::from(&state.session.template_name);
    p.is_file().then_some(p)
}

fn place_of_target(state: &State, target: Target) -> Result<Place, String> {
    match target {
        Target::Document { at, .. } => {
            let a = state.analysis().ok_or("nothing on screen yet")?;
            Ok(Place::Document {
                sample: a.sample.clone(),
                at,
            })
        }
        Target::File { file, line, column } => Ok(Place::File {
            file: PathBuf::from(file),
            line,
            column,
        }),
        Target::Field(field) => Ok(Place::Field {
            template: template_path(state).ok_or("the template is not a file")?,
            field,
        }),
    }
}

/// The place under the cursor of the focused pane.
fn place_under_cursor(state: &State) -> Result<Place, String> {
    if state.modes.mode == Mode::Replay {
        return Err("leave the replay (Esc) to open the editor".into());
    }
    let a = state.analysis();
    match state.ui.focus.spec().opens {
        Opens::Document => {
            let a = a.ok_or("nothing on screen yet")?;
            Ok(Place::Document {
                sample: a.sample.clone(),
                at: state.ui.cursor,
            })
        }
        Opens::Diagnostic => {
            let t = selected_target(state).ok_or("this diagnostic has no place in a file")?;
            place_of_target(state, t)
        }
        Opens::Field => {
            let a = a.ok_or("nothing on screen yet")?;
            let field = state
                .ui
                .region
                .and_then(|r| a.regions.get(r))
                .map(|g| a.field_names[g.field].clone())
                .or_else(|| a.field_names.first().cloned())
                .ok_or("the template has no fields")?;
            Ok(Place::Field {
                template: template_path(state).ok_or("the template is not a file")?,
                field,
            })
        }
        Opens::SampleFile => {
            let s = state
                .session
                .samples
                .get(state.ui.selected_sample)
                .ok_or("no sample selected")?;
            Ok(Place::File {
                file: PathBuf::from(&s.name),
                line: 1,
                column: 1,
            })
        }
    }
}

/// `o`: open the editor at the place under the cursor.
pub(super) fn open_editor(state: &mut State) -> Cmd {
    let place = place_under_cursor(state);
    open_place(state, place)
}

/// Asks the run loop to open `place` in the editor, or says why there is none.
fn open_place(state: &mut State, place: Result<Place, String>) -> Cmd {
    match place {
        Ok(place) => Cmd::OpenEditor(place),
        Err(e) => {
            state.ui.note = Some(e);
            Cmd::None
        }
    }
}

/// Enter: on a diagnostic, go to its place; on a sample, show its text.
pub(super) fn activate(state: &mut State) -> Cmd {
    match state.ui.focus {
        // In a corpus: Enter opens the selected group and shows its first record.
        Pane::Samples if let Some(view) = state.session.corpus.as_mut() => {
            if view.open.is_some() || view.groups.is_empty() {
                return Cmd::None;
            }
            view.open = Some(view.selected.min(view.groups.len() - 1));
            view.selected = 0;
            state.ui.scroll[Pane::Samples] = 0;
            Cmd::Reparse
        }
        Pane::Diagnostics => {
            let Some(target) = selected_target(state) else {
                state.ui.note = Some("this diagnostic has no place to go to".into());
                return Cmd::None;
            };
            match target {
                Target::Document { at, region } => {
                    let Some(a) = state.analysis().cloned() else {
                        return Cmd::None;
                    };
                    state.ui.cursor = at.min(a.document.len());
                    super::fold::reveal(state, &a, state.ui.cursor);
                    remember_col(state, &a);
                    state.ui.focus = Pane::Raw;
                    state.ui.visible[Pane::Raw.index()] = true;
                    cursor_moved(state);
                    if let Some(r) = region.filter(|&r| r < a.regions.len()) {
                        state.ui.region = Some(r);
                        state.ui.scroll[Pane::Region] = 0;
                    }
                    let (line, col) = a.line_col(state.ui.cursor);
                    state.ui.note = Some(format!("at {line}:{col} of the text"));
                    Cmd::None
                }
                // The template is not on screen: open it in the editor.
                t => {
                    let place = place_of_target(state, t);
                    open_place(state, place)
                }
            }
        }
        Pane::Samples => {
            state.ui.focus = Pane::Raw;
            Cmd::None
        }
        _ => {
            state.ui.note = Some(format!(
                "Enter goes to the selected diagnostic ({} focuses the diagnostics)",
                state
                    .ui
                    .keys
                    .hint(Action::FocusPane(Pane::Diagnostics.index()))
            ));
            Cmd::None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::on_action;
    use super::super::testing::loaded;
    use super::*;
    use rtbench_engine::diagnostic::Diagnostic;
    use rtbench_tooling::findings::Finding;

    /// The bundled sample with one located warning at the second tool call.
    fn with_a_located_warning() -> (State, usize) {
        let mut state = loaded(0, (120, 40));
        let shown = state.session.shown.clone().unwrap();
        let mut a = (*shown.analysis).clone();
        let at = a.document.rfind("<tool_call>").unwrap();
        let region = a.regions.iter().position(|g| g.open.start == at);
        let d = Diagnostic::warning("something was lost here");
        a.warnings.insert(0, d.clone());
        a.findings.push(Finding {
            diagnostic: d,
            kind: None,
            region,
            span: Some(at..at + 11),
        });
        state.session.shown = Some(crate::workbench::state::Shown {
            analysis: Arc::new(a),
            message_lines: shown.message_lines,
            grammar: shown.grammar,
        });
        (state, at)
    }

    #[test]
    fn enter_on_a_diagnostic_moves_the_cursor_there_and_selects_its_region() {
        let (mut state, at) = with_a_located_warning();
        on_action(&mut state, Action::FocusPane(Pane::Diagnostics.index()));
        on_action(&mut state, Action::Top);
        assert_eq!(state.ui.diagnostic, 0);
        assert_eq!(on_action(&mut state, Action::Activate), Cmd::None);
        assert_eq!(state.ui.cursor, at);
        assert_eq!(state.ui.focus, Pane::Raw);
        let a = state.analysis().unwrap();
        assert_eq!(
            a.field_names[a.regions.at(state.ui.region.unwrap()).field],
            "tool_calls"
        );
        assert!(state.ui.note.as_deref().unwrap().starts_with("at "));
    }

    #[test]
    fn o_asks_to_open_the_place_under_the_cursor_of_the_focused_pane() {
        let (mut state, at) = with_a_located_warning();
        state.ui.cursor = at;
        match on_action(&mut state, Action::OpenEditor) {
            Cmd::OpenEditor(Place::Document { at: got, sample }) => {
                assert_eq!(got, at);
                assert!(sample.path.ends_with("weather-tool-call.sample"));
            }
            other => panic!("{other:?}"),
        }
        // In the region pane: the field of the selected region, in the template.
        on_action(&mut state, Action::FocusPane(Pane::Region.index()));
        let cmd = on_action(&mut state, Action::OpenEditor);
        if template_path(&state).is_some() {
            assert!(
                matches!(cmd, Cmd::OpenEditor(Place::Field { field, .. }) if field == "tool_calls")
            );
        } else {
            // The bundled template is built in: nothing to open, and the note says why.
            assert_eq!(cmd, Cmd::None);
            assert_eq!(state.ui.note.as_deref(), Some("the template is not a file"));
        }
        // In the replay: leave it first.
        on_action(&mut state, Action::Replay);
        assert_eq!(on_action(&mut state, Action::OpenEditor), Cmd::None);
        assert!(
            state
                .ui
                .note
                .as_deref()
                .unwrap()
                .contains("leave the replay")
        );
    }
}
