//! Drawing: a pure function of the state. One file per screen region; this one lays them out,
//! dispatches on the mode and draws the shared pane frame.

pub(crate) mod diagnostics;
pub(crate) mod help;
pub(crate) mod message;
pub(crate) mod overlay;
pub(crate) mod raw;
pub(crate) mod region;
pub(crate) mod replay;
pub(crate) mod samples;
pub(crate) mod status;

use ratatui::Frame;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph, Wrap};

use crate::workbench::layout::{self, MIN_HEIGHT, MIN_WIDTH};
use crate::workbench::state::{Mode, Pane, State};

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, state: &State) {
    let area = frame.area();
    let screen = layout::compute(area, state);
    if screen.too_small {
        let msg = format!(
            "terminal too small ({}x{}): rtbench needs at least {MIN_WIDTH}x{MIN_HEIGHT}",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(msg)
                .wrap(Wrap { trim: true })
                .style(state.ui.theme.warning()),
            area,
        );
        return;
    }
    match state.modes.mode {
        Mode::Inspect => {
            for (pane, rect) in &screen.panes {
                draw_pane(frame, *pane, *rect, state);
            }
        }
        Mode::Replay => {
            let main = Rect::new(area.x, area.y, area.width, area.height.saturating_sub(1));
            replay::draw(frame, main, state);
        }
    }
    status::render(frame, screen.status, state);
    overlay::render(frame, area, state);
    if state.modes.help {
        help::render(frame, area, state);
    }
}

fn draw_pane(frame: &mut Frame, pane: Pane, rect: Rect, state: &State) {
    if rect.width < 3 || rect.height < 3 {
        return;
    }
    match pane {
        Pane::Raw => raw::render(frame, rect, state),
        Pane::Message => message::render(frame, rect, state),
        Pane::Region => region::render(frame, rect, state),
        Pane::Diagnostics => diagnostics::render(frame, rect, state),
        Pane::Samples => samples::render(frame, rect, state),
    }
}

/// The frame of a pane: its number and name, extra title spans, and a stale marker.
pub(crate) fn pane_block(state: &State, pane: Pane, extra: Vec<Span<'static>>) -> Block<'static> {
    let focused = state.ui.focus == pane;
    let theme = &state.ui.theme;
    let mut title = vec![Span::styled(
        format!("{} {}", pane.index() + 1, pane.title()),
        theme.title(focused),
    )];
    for s in extra {
        let style = if s.style == Style::default() {
            theme.dim()
        } else {
            s.style
        };
        title.push(Span::styled(s.content, style));
    }
    if state.is_stale() && pane.spec().shows_result {
        title.push(Span::raw(" "));
        title.push(Span::styled(" STALE ", theme.stale()));
    }
    let mut block = Block::bordered()
        .border_style(theme.border(focused))
        .title(Line::from(title));
    if focused {
        block = block.border_type(BorderType::Thick);
    }
    block.title_alignment(Alignment::Left)
}

/// A line of text a pane wraps: its width in cells, and the line to draw.
pub(crate) trait Rows {
    fn width(&self) -> usize;
    fn to_line(&self) -> ratatui::text::Line<'static>;
}

impl Rows for &ratatui::text::Line<'static> {
    fn width(&self) -> usize {
        ratatui::text::Line::width(self)
    }
    fn to_line(&self) -> ratatui::text::Line<'static> {
        (*self).clone()
    }
}

impl Rows for crate::workbench::highlight::MessageLine<'_> {
    fn width(&self) -> usize {
        crate::workbench::highlight::MessageLine::width(self)
    }
    fn to_line(&self) -> ratatui::text::Line<'static> {
        crate::workbench::highlight::MessageLine::to_line(self)
    }
}

/// Either kind of line, for a pane that shows some of each.
pub(crate) enum AnyRow<'a> {
    Line(&'a ratatui::text::Line<'static>),
    Message(crate::workbench::highlight::MessageLine<'a>),
}

impl Rows for AnyRow<'_> {
    fn width(&self) -> usize {
        match self {
            AnyRow::Line(l) => l.width(),
            AnyRow::Message(m) => m.width(),
        }
    }
    fn to_line(&self) -> ratatui::text::Line<'static> {
        match self {
            AnyRow::Line(l) => (*l).clone(),
            AnyRow::Message(m) => m.to_line(),
        }
    }
}

/// The lines of a wrapped text scrolled down by `top` rows, for a widget that scrolls by at
/// most 65,535 rows: whole lines before the window are dropped (counting rows by character
/// width, as the scroll limits do) and only what fits on `height` rows is kept. Returns those
/// lines and the rows still to scroll inside the first of them.
pub(crate) fn window<R: Rows>(
    lines: impl Iterator<Item = R>,
    width: u16,
    height: u16,
    top: usize,
) -> (Vec<ratatui::text::Line<'static>>, u16) {
    let w = usize::from(width.max(1));
    let mut skipped = 0;
    let mut out = Vec::new();
    let mut lines = lines.peekable();
    while let Some(l) = lines.peek() {
        let rows = l.width().div_ceil(w).max(1);
        if skipped + rows > top {
            break;
        }
        skipped += rows;
        lines.next();
    }
    // Every line takes at least one row.
    out.extend(lines.take(usize::from(height) + 1).map(|l| l.to_line()));
    let inside = (top - skipped).min(usize::from(u16::MAX));
    (out, inside as u16)
}

/// The inside of a pane's frame.
pub(crate) fn inner(area: Rect) -> Rect {
    Rect::new(
        area.x + 1,
        area.y + 1,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    )
}
