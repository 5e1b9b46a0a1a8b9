//! State changes: key actions, mouse events and worker reports. Each returns what the run loop
//! must do next (nothing, ask for a new parse, quit); none of them draws or does I/O.

use std::sync::Arc;

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use crate::workbench::analysis::Analysis;
use crate::workbench::keys::Action;
use crate::workbench::layout;
use crate::workbench::replay::{ReplayState, parse_sizes};
use crate::workbench::state::{Mode, Pane, Report, State};
use crate::workbench::view::raw;

/// What the run loop must do after an update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    None,
    /// Files or the selected sample changed: parse again.
    Reparse,
    Quit,
}

fn screen(state: &State) -> layout::Screen {
    layout::compute(Rect::new(0, 0, state.size.0, state.size.1), state)
}

/// Width and height of the raw pane's text area.
fn raw_geometry(state: &State) -> Option<(usize, usize)> {
    let r = screen(state).rect(Pane::Raw)?;
    let t = raw::text_area(r);
    Some((usize::from(t.width).max(2), usize::from(t.height).max(1)))
}

/// After the cursor moved: keep it on screen and select the region under it.
fn cursor_moved(state: &mut State) {
    let Some(a) = state.analysis().cloned() else {
        return;
    };
    state.cursor = a.document.floor_char_boundary(state.cursor);
    if let Some((w, h)) = raw_geometry(state) {
        state.raw_top = raw::ensure_visible(&a, w, h, state.raw_top, state.cursor);
    }
    if let Some(i) = a.segment_index(state.cursor)
        && let Some(r) = a.segments[i].paint.region()
    {
        if state.region != Some(r) {
            state.scroll.region = 0;
        }
        state.region = Some(r);
    }
}

fn remember_col(state: &mut State, a: &Analysis) {
    state.cursor = a.document.floor_char_boundary(state.cursor);
    let line = raw::line_of(a, state.cursor);
    let start = a.line_starts[line];
    state.want_col = a.document[start..state.cursor].chars().count();
}

/// Moves the cursor by whole lines, keeping the wanted column.
fn move_rows(state: &mut State, a: &Analysis, delta: isize) {
    let line = raw::line_of(a, state.cursor);
    let target_line = if delta < 0 {
        line.saturating_sub(delta.unsigned_abs())
    } else {
        (line + delta as usize).min(a.line_starts.len() - 1)
    };
    let r = a.line_range(target_line);
    let at = a.document[r.clone()]
        .char_indices()
        .nth(state.want_col)
        .map_or(r.end, |(i, _)| r.start + i);
    state.cursor = at;
}

fn move_chars(state: &mut State, a: &Analysis, delta: isize) {
    let doc = &a.document;
    if delta > 0 {
        if let Some(c) = doc[state.cursor..].chars().next() {
            state.cursor += c.len_utf8();
        }
    } else if let Some(c) = doc[..state.cursor].chars().next_back() {
        state.cursor -= c.len_utf8();
    }
    remember_col(state, a);
}

fn jump_region(state: &mut State, a: &Analysis, forward: bool) {
    let starts = a.regions.iter().map(|g| {
        if g.open.is_empty() {
            g.body.start
        } else {
            g.open.start
        }
    });
    let target = if forward {
        starts.filter(|&s| s > state.cursor).min()
    } else {
        starts.filter(|&s| s < state.cursor).max()
    };
    if let Some(t) = target {
        state.cursor = t;
        remember_col(state, a);
    }
}

fn scroll_of(state: &mut State, pane: Pane) -> Option<&mut u16> {
    match pane {
        Pane::Message => Some(&mut state.scroll.message),
        Pane::Region => Some(&mut state.scroll.region),
        Pane::Diagnostics => Some(&mut state.scroll.diagnostics),
        Pane::Samples | Pane::Raw => None,
    }
}

fn select_sample(state: &mut State, to: usize) -> Effect {
    if state.samples.is_empty() {
        return Effect::None;
    }
    let to = to.min(state.samples.len() - 1);
    if to == state.selected_sample {
        return Effect::None;
    }
    state.selected_sample = to;
    if let Some(r) = screen(state).rect(Pane::Samples) {
        let h = usize::from(r.height.saturating_sub(2)).max(1);
        let top = usize::from(state.scroll.samples);
        if to < top {
            state.scroll.samples = to as u16;
        } else if to >= top + h {
            state.scroll.samples = (to + 1 - h) as u16;
        }
    }
    Effect::Reparse
}

fn page(state: &State, pane: Pane) -> usize {
    screen(state)
        .rect(pane)
        .map_or(10, |r| usize::from(r.height.saturating_sub(3)).max(1))
}

/// Rows that `lines` take when wrapped to `width` (by characters; word wrapping may take a
/// few more, hence the slack).
fn rows_of(lines: &[ratatui::text::Line<'_>], width: u16) -> usize {
    let w = usize::from(width.max(1));
    let rows: usize = lines.iter().map(|l| l.width().div_ceil(w).max(1)).sum();
    rows + lines.len() / 4
}

/// Keeps the message and diagnostics scrolls within their text.
fn clamp_scrolls(state: &mut State) {
    let sc = screen(state);
    if let Some(r) = sc.rect(Pane::Message) {
        let inner = crate::workbench::view::inner(r);
        let rows = state
            .shown
            .as_ref()
            .map_or(1, |s| rows_of(&s.message_lines, inner.width) + 4);
        let max = rows.saturating_sub(usize::from(inner.height)) as u16;
        state.scroll.message = state.scroll.message.min(max);
    }
    if let Some(r) = sc.rect(Pane::Diagnostics) {
        let inner = crate::workbench::view::inner(r);
        let (lines, _, _) =
            crate::workbench::view::diagnostics::lines(state, usize::from(inner.width));
        let max = rows_of(&lines, inner.width).saturating_sub(usize::from(inner.height)) as u16;
        state.scroll.diagnostics = state.scroll.diagnostics.min(max);
    }
}

/// Applies a key action.
pub fn on_action(state: &mut State, action: Action) -> Effect {
    let effect = apply_action(state, action);
    clamp_scrolls(state);
    effect
}

fn apply_action(state: &mut State, action: Action) -> Effect {
    state.note = None;
    if state.help {
        match action {
            Action::Quit | Action::Help | Action::Back => state.help = false,
            Action::Down => state.scroll.help = state.scroll.help.saturating_add(1),
            Action::Up => state.scroll.help = state.scroll.help.saturating_sub(1),
            _ => {}
        }
        return Effect::None;
    }
    if state.overlay.is_some() {
        on_overlay_action(state, action);
        return Effect::None;
    }
    match action {
        Action::Explain => {
            explain_field(state, None);
            return Effect::None;
        }
        Action::CheckChunkings => {
            check_chunkings(state);
            return Effect::None;
        }
        _ => {}
    }
    if state.mode == Mode::Replay {
        return on_replay_action(state, action);
    }
    let focus = state.focus;
    match action {
        Action::Quit | Action::Back => {
            return Effect::Quit;
        }
        Action::Replay => enter_replay(state),
        Action::PlayPause => return on_motion(state, Action::PageDown),
        Action::NextChunking | Action::Prompt => {}
        Action::Help => {
            state.help = true;
            state.scroll.help = 0;
        }
        Action::FocusNext | Action::FocusPrev => {
            let n = Pane::ALL.len();
            let mut i = focus.index();
            for _ in 0..n {
                i = if action == Action::FocusNext {
                    (i + 1) % n
                } else {
                    (i + n - 1) % n
                };
                if state.visible[i] {
                    break;
                }
            }
            state.focus = Pane::ALL[i];
        }
        Action::TogglePane(i) => {
            if i < state.visible.len() {
                let shown = state.visible.iter().filter(|v| **v).count();
                if !(state.visible[i] && shown == 1) {
                    state.visible[i] = !state.visible[i];
                }
                if state.visible[i] {
                    state.focus = Pane::ALL[i];
                } else if state.focus == Pane::ALL[i] {
                    let j = state.visible.iter().position(|v| *v).unwrap_or(0);
                    state.focus = Pane::ALL[j];
                }
                cursor_moved(state);
            }
        }
        Action::Zoom => {
            state.zoom = !state.zoom;
            cursor_moved(state);
        }
        Action::Wider => {
            state.split = (state.split + 5).min(80);
            cursor_moved(state);
        }
        Action::Narrower => {
            state.split = state.split.saturating_sub(5).max(20);
            cursor_moved(state);
        }
        Action::Taller => {
            state.bottom = (state.bottom + 1).min(state.size.1);
            cursor_moved(state);
        }
        Action::Shorter => {
            state.bottom = state.bottom.saturating_sub(1).max(3);
            cursor_moved(state);
        }
        Action::Reload => {
            state.note = Some("re-reading files".into());
            return Effect::Reparse;
        }
        Action::NextSample => return select_sample(state, state.selected_sample + 1),
        Action::PrevSample => {
            return select_sample(state, state.selected_sample.saturating_sub(1));
        }
        _ => return on_motion(state, action),
    }
    Effect::None
}

/// Keys while an overlay is shown: scroll it, switch the explained field, or close it.
fn on_overlay_action(state: &mut State, action: Action) {
    let field = state.overlay.as_ref().and_then(|o| o.field);
    let fields = state.analysis().map_or(0, |a| a.field_names.len());
    let Some(o) = state.overlay.as_mut() else {
        return;
    };
    match action {
        Action::Down => o.scroll = o.scroll.saturating_add(1),
        Action::Up => o.scroll = o.scroll.saturating_sub(1),
        Action::PageDown | Action::PlayPause => o.scroll = o.scroll.saturating_add(10),
        Action::PageUp => o.scroll = o.scroll.saturating_sub(10),
        Action::Right | Action::Left if fields > 0 => {
            if let Some(f) = field {
                let next = if action == Action::Right {
                    (f + 1) % fields
                } else {
                    (f + fields - 1) % fields
                };
                explain_field(state, Some(next));
            }
        }
        Action::Quit | Action::Back | Action::Explain | Action::CheckChunkings => {
            state.overlay = None;
        }
        _ => {}
    }
}

/// Explains a field of the current sample: `field`, or the selected region's field, or the
/// first field that matched nothing.
fn explain_field(state: &mut State, field: Option<usize>) {
    let Some(a) = state.analysis().cloned() else {
        state.note = Some("nothing to explain: no sample parsed yet".into());
        return;
    };
    let field = field
        .or_else(|| state.region.and_then(|r| a.regions.get(r)).map(|g| g.field))
        .or_else(|| a.matched_fields.iter().position(|m| !m))
        .unwrap_or(0);
    let Some(name) = a.field_names.get(field) else {
        return;
    };
    let s = &a.sample;
    let lines = match rtbench_tooling::explain::explain(
        &a.template,
        s.prefix.as_deref().unwrap_or(""),
        &s.generation,
        s.tools.as_ref(),
        name,
    ) {
        Ok(e) => e.lines(),
        Err(e) => vec![e],
    };
    state.overlay = Some(crate::workbench::state::Overlay {
        title: format!(
            "explain {name} ({}/{}, ← → other fields)",
            field + 1,
            a.field_names.len()
        ),
        lines,
        scroll: 0,
        field: Some(field),
    });
}

/// Streams the current sample with every chunk size from 1 to 32, 8 random chunkings and
/// tokenizer-like pieces, and shows whether any changes the result (as `rtbench chunks`).
fn check_chunkings(state: &mut State) {
    use rtbench_tooling::chunking::{CheckPlan, Generation, check};
    let Some(a) = state.analysis().cloned() else {
        state.note = Some("nothing to check: no sample parsed yet".into());
        return;
    };
    let s = &a.sample;
    let generation = Generation {
        template: a.template.clone(),
        prefix: s.prefix.as_deref().unwrap_or(""),
        tools: s.tools.as_ref(),
        text: &s.generation,
    };
    let report = check(&generation, &CheckPlan::default());
    let agrees = report.agrees();
    let text = report.describe(&a.sample_name, &s.generation);
    let lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 || l.starts_with("  ") {
                l.to_string()
            } else {
                format!("  {l}")
            }
        })
        .collect();
    state.overlay = Some(crate::workbench::state::Overlay {
        title: if agrees {
            "chunking check: every chunking agrees".into()
        } else {
            "chunking check: the result depends on the chunking".into()
        },
        lines,
        scroll: 0,
        field: None,
    });
}

/// Starts the stream replay of the sample on screen.
fn enter_replay(state: &mut State) {
    let Some(a) = state.analysis().cloned() else {
        state.note = Some("nothing to replay: no sample parsed yet".into());
        return;
    };
    state.replay = Some(ReplayState::new(&a));
    state.mode = Mode::Replay;
}

/// Keys in replay mode: steps, playback, chunking and the timeline.
fn on_replay_action(state: &mut State, action: Action) -> Effect {
    let analysis = state.analysis().cloned();
    let Some(rs) = state.replay.as_mut() else {
        state.mode = Mode::Inspect;
        return Effect::None;
    };
    let mut rebuild = false;
    match action {
        Action::Quit => {
            return Effect::Quit;
        }
        Action::Back | Action::Replay => {
            state.mode = Mode::Inspect;
            state.replay = None;
            return Effect::None;
        }
        Action::Help => {
            state.help = true;
            state.scroll.help = 0;
        }
        Action::Right => rs.forward(1),
        Action::Left => rs.forward(-1),
        Action::PageDown => rs.forward(10),
        Action::PageUp => rs.forward(-10),
        Action::Top | Action::LineStart => rs.go(0),
        Action::Bottom | Action::LineEnd => rs.go(isize::MAX),
        Action::Down => rs.move_selection(1),
        Action::Up => rs.move_selection(-1),
        Action::PlayPause => rs.toggle_play(),
        Action::Wider => rs.faster(true),
        Action::Narrower => rs.faster(false),
        Action::Taller => rebuild = rs.adjust(1),
        Action::Shorter => rebuild = rs.adjust(-1),
        Action::NextChunking => {
            rs.next_kind();
            rebuild = true;
        }
        Action::Prompt => state.prompt = Some(String::new()),
        Action::NextSample => return select_sample(state, state.selected_sample + 1),
        Action::PrevSample => {
            return select_sample(state, state.selected_sample.saturating_sub(1));
        }
        Action::Reload => {
            state.note = Some("re-reading files".into());
            return Effect::Reparse;
        }
        _ => {}
    }
    if rebuild && let Some(a) = analysis {
        rs.rebuild(&a);
    }
    Effect::None
}

/// Mouse in replay mode: a click on a timeline row selects that event; the wheel steps the
/// stream over the text and scrolls the timeline's selection over the timeline.
fn on_replay_mouse(state: &mut State, ev: MouseEvent) {
    use crate::workbench::view::replay::{ReplayPane, layout, timeline_top};
    let main = Rect::new(0, 0, state.size.0, state.size.1.saturating_sub(1));
    let Some((pane, rect)) = layout(main, state.bottom).into_iter().find(|(_, r)| {
        ev.column >= r.x && ev.column < r.x + r.width && ev.row >= r.y && ev.row < r.y + r.height
    }) else {
        return;
    };
    let Some(rs) = state.replay.as_mut() else {
        return;
    };
    let down = match ev.kind {
        MouseEventKind::ScrollDown => Some(true),
        MouseEventKind::ScrollUp => Some(false),
        _ => None,
    };
    match (pane, ev.kind, down) {
        (ReplayPane::Timeline, MouseEventKind::Down(MouseButton::Left), _)
            if ev.row > rect.y && ev.row + 1 < rect.y + rect.height =>
        {
            let h = usize::from(rect.height.saturating_sub(2));
            let i = timeline_top(rs, h) + usize::from(ev.row - rect.y - 1);
            if i < rs.replay.timeline().len() {
                rs.select_event(i);
            }
        }
        (ReplayPane::Timeline, _, Some(d)) => rs.move_selection(if d { 3 } else { -3 }),
        (_, _, Some(d)) => rs.forward(if d { 1 } else { -1 }),
        _ => {}
    }
}

/// A key typed at the prompt (chunk sizes): Enter applies, Esc cancels.
pub fn on_prompt_key(state: &mut State, key: crossterm::event::KeyEvent) -> Effect {
    use crossterm::event::{KeyCode, KeyEventKind};
    if key.kind == KeyEventKind::Release {
        return Effect::None;
    }
    let Some(text) = state.prompt.as_mut() else {
        return Effect::None;
    };
    match key.code {
        KeyCode::Esc => state.prompt = None,
        KeyCode::Backspace => {
            text.pop();
        }
        KeyCode::Char(c) if text.len() < 200 => text.push(c),
        KeyCode::Enter => {
            let typed = state.prompt.take().unwrap_or_default();
            match parse_sizes(&typed) {
                Ok(sizes) => {
                    let analysis = state.analysis().cloned();
                    if let (Some(rs), Some(a)) = (state.replay.as_mut(), analysis) {
                        rs.sizes = sizes;
                        rs.kind = crate::workbench::replay::ChunkKind::Sizes;
                        rs.rebuild(&a);
                    }
                }
                Err(e) => state.note = Some(e),
            }
        }
        _ => {}
    }
    Effect::None
}

/// A clock tick of the replay (playback, or a replay being built in the background); true
/// when something changed on screen.
pub fn on_tick(state: &mut State) -> bool {
    state.replay.as_mut().is_some_and(|rs| rs.tick())
}

/// Cursor and scroll motions, which act on the focused pane.
fn on_motion(state: &mut State, action: Action) -> Effect {
    let focus = state.focus;
    if focus == Pane::Samples {
        let s = state.selected_sample;
        let to = match action {
            Action::Up => s.saturating_sub(1),
            Action::Down => s + 1,
            Action::PageUp => s.saturating_sub(page(state, focus)),
            Action::PageDown => s + page(state, focus),
            Action::Top => 0,
            Action::Bottom => usize::MAX,
            _ => s,
        };
        return select_sample(state, to);
    }
    if focus == Pane::Raw {
        let Some(a) = state.analysis().cloned() else {
            return Effect::None;
        };
        let pg = page(state, focus) as isize;
        match action {
            Action::Left => move_chars(state, &a, -1),
            Action::Right => move_chars(state, &a, 1),
            Action::Up => move_rows(state, &a, -1),
            Action::Down => move_rows(state, &a, 1),
            Action::PageUp => move_rows(state, &a, -pg),
            Action::PageDown => move_rows(state, &a, pg),
            Action::LineStart => {
                state.cursor = a.line_range(raw::line_of(&a, state.cursor)).start;
                remember_col(state, &a);
            }
            Action::LineEnd => {
                state.cursor = a.line_range(raw::line_of(&a, state.cursor)).end;
                remember_col(state, &a);
            }
            Action::Top => {
                state.cursor = 0;
                remember_col(state, &a);
            }
            Action::Bottom => {
                state.cursor = a.document.len();
                remember_col(state, &a);
            }
            Action::NextRegion => jump_region(state, &a, true),
            Action::PrevRegion => jump_region(state, &a, false),
            _ => {}
        }
        cursor_moved(state);
        return Effect::None;
    }
    // Region jumps work from any pane: they move the raw cursor.
    if matches!(action, Action::NextRegion | Action::PrevRegion) {
        if let Some(a) = state.analysis().cloned() {
            jump_region(state, &a, action == Action::NextRegion);
            cursor_moved(state);
        }
        return Effect::None;
    }
    let pg = page(state, focus) as u16;
    if let Some(s) = scroll_of(state, focus) {
        *s = match action {
            Action::Up => s.saturating_sub(1),
            Action::Down => s.saturating_add(1),
            Action::PageUp => s.saturating_sub(pg),
            Action::PageDown => s.saturating_add(pg),
            Action::Top => 0,
            Action::Bottom => u16::MAX / 2,
            _ => *s,
        };
    }
    Effect::None
}

/// Applies a mouse event.
pub fn on_mouse(state: &mut State, ev: MouseEvent) -> Effect {
    let effect = apply_mouse(state, ev);
    clamp_scrolls(state);
    effect
}

fn apply_mouse(state: &mut State, ev: MouseEvent) -> Effect {
    if state.help {
        if let MouseEventKind::Down(_) = ev.kind {
            state.help = false;
        }
        return Effect::None;
    }
    if state.mode == Mode::Replay {
        on_replay_mouse(state, ev);
        return Effect::None;
    }
    let sc = screen(state);
    let Some((pane, rect)) = sc.pane_at(ev.column, ev.row) else {
        return Effect::None;
    };
    match ev.kind {
        // A press, or a drag across the raw text, moves the cursor to the pointer.
        MouseEventKind::Down(MouseButton::Left) | MouseEventKind::Drag(MouseButton::Left) => {
            state.focus = pane;
            match pane {
                Pane::Raw => {
                    let t = raw::text_area(rect);
                    if let Some(a) = state.analysis().cloned()
                        && ev.column >= t.x
                        && ev.row >= t.y
                        && ev.row < t.y + t.height
                    {
                        let w = usize::from(t.width).max(2);
                        state.cursor = raw::hit(
                            &a,
                            w,
                            state.raw_top,
                            usize::from(ev.column - t.x),
                            usize::from(ev.row - t.y),
                        );
                        remember_col(state, &a);
                        cursor_moved(state);
                    }
                }
                Pane::Samples
                    if matches!(ev.kind, MouseEventKind::Down(_))
                        && ev.row > rect.y
                        && ev.row < rect.y + rect.height - 1 =>
                {
                    let i = usize::from(ev.row - rect.y - 1) + usize::from(state.scroll.samples);
                    if i < state.samples.len() {
                        return select_sample(state, i);
                    }
                }
                _ => {}
            }
        }
        MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
            let down = ev.kind == MouseEventKind::ScrollDown;
            match pane {
                Pane::Raw => {
                    if let (Some(a), Some((w, _))) =
                        (state.analysis().cloned(), raw_geometry(state))
                    {
                        state.raw_top =
                            raw::step_rows(&a, w, state.raw_top, if down { 3 } else { -3 });
                    }
                }
                Pane::Samples => {
                    let s = &mut state.scroll.samples;
                    *s = if down {
                        (*s + 1).min(state.samples.len().saturating_sub(1) as u16)
                    } else {
                        s.saturating_sub(1)
                    };
                }
                p => {
                    if let Some(s) = scroll_of(state, p) {
                        *s = if down {
                            s.saturating_add(3)
                        } else {
                            s.saturating_sub(3)
                        };
                    }
                }
            }
        }
        _ => {}
    }
    Effect::None
}

/// The terminal was resized.
pub fn on_resize(state: &mut State, width: u16, height: u16) {
    state.size = (width, height);
    cursor_moved(state);
}

/// Takes a worker report: a newer result replaces the shown one; when the files cannot be
/// used, the shown result stays and is marked stale.
pub fn on_report(state: &mut State, report: Report) {
    if report.seq < state.requested {
        // An answer to an older request: a newer one is on its way.
        return;
    }
    state.busy = false;
    state.template_name = report.template_name;
    state.template_error = report.template_error;
    state.sample_error = report.sample_error;
    // With an unusable template the statuses of the last good parse stay (stale), unless
    // there are none yet.
    if state.template_error.is_none() || state.samples.is_empty() {
        state.samples = report.samples;
        if state.template_error.is_none() {
            state.never_matched = report.never_matched;
            state.lint = report.lint;
        }
        if state.selected_sample >= state.samples.len() {
            state.selected_sample = state.samples.len().saturating_sub(1);
        }
    }
    let Some(shown) = report.shown else {
        return;
    };
    let same_sample = state
        .analysis()
        .is_some_and(|a| a.sample_name == shown.analysis.sample_name);
    if shown.analysis.message.is_some() {
        state.last_good = Some(shown.clone());
    } else if state
        .last_good
        .as_ref()
        .is_some_and(|g| g.analysis.sample_name != shown.analysis.sample_name)
    {
        state.last_good = None;
    }
    let a: Arc<Analysis> = Arc::clone(&shown.analysis);
    state.shown = Some(shown);
    clamp_scrolls(state);
    if !same_sample {
        // A new sample: start where the generation starts, or at the error.
        state.cursor = a
            .problem
            .as_ref()
            .and_then(|p| p.at)
            .unwrap_or(a.prefix_len.max(a.origin));
        // Show a little of what comes before the cursor.
        state.raw_top = match raw_geometry(state) {
            Some((w, h)) => {
                let back = (h / 3) as isize;
                let top = raw::step_rows(&a, w, raw::position_of(&a, state.cursor, w), -back);
                raw::fill_to_end(&a, w, h, top)
            }
            None => (0, 0),
        };
        state.region = None;
        state.scroll.message = 0;
        state.scroll.region = 0;
        state.scroll.diagnostics = 0;
        remember_col(state, &a);
    } else if state.region.is_some_and(|r| r >= a.regions.len()) {
        state.region = None;
    }
    cursor_moved(state);
    if let Some(rs) = state.replay.as_mut() {
        // The file or the sample changed: stream the new text with the same chunking.
        rs.rebuild(&a);
    }
    if state.region.is_none() {
        // Select the first explicit region so the region pane shows something useful.
        state.region = a
            .regions
            .iter()
            .position(|g| !g.open.is_empty())
            .or(if a.regions.is_empty() { None } else { Some(0) });
    }
}
