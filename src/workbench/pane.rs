//! The panes, declared once. Each row of [`PANES`] says what a pane is called (its title, and
//! its name in the config file: `focus_<name>`, `toggle_<name>`), where it sits on the screen
//! and how much of its place it takes, and whether it shows the parse result (so it is marked
//! stale with it). Focus order, the number keys (`1`-`5` focus, `alt-1`-`alt-5` show / hide),
//! the config names, the visibility flags and the layout all derive from this table.
//!
//! The row also says what `o` opens from the pane ([`Opens`]) and how the pane moves under the motion keys ([`Motion`]): a pane that
//! scrolls gets its scroll offset (`Ui::scroll[pane]`), the arrow and page keys, the mouse
//! wheel and the clamping to its text from that, with nothing else to write.
//!
//! Adding a pane: a variant of [`Pane`] and a row here, and its own file in `view/` with its
//! `render` function; `view/mod.rs` declares the file and names `render` in `draw_pane`'s
//! match beside the others (exhaustive, so the compiler asks for it).

/// The panes, in focus order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// The generation, coloured by region.
    Raw,
    /// The parsed message.
    Message,
    /// The region under the cursor: its raw text, value and transform.
    Region,
    /// Errors and warnings, with their places.
    Diagnostics,
    /// The samples (or a corpus's groups) and their verdicts.
    Samples,
}

/// Where a pane sits. The screen is a top row (a left column and a right column) above a
/// bottom row; panes that share a place are stacked (columns) or set side by side (bottom),
/// in the order of their `order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    TopLeft,
    TopRight,
    Bottom,
}

/// How much of its place a pane takes when another visible pane of the place follows it (the
/// last visible one takes what is left).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// This percentage of the place's length.
    Percent(u16),
    /// This percentage of the place's length, kept between `min` and `max` cells.
    Clamped { percent: u16, min: u16, max: u16 },
    /// What is left.
    Rest,
}

impl Share {
    /// The cells taken out of `length`.
    pub fn of(self, length: u16) -> u16 {
        let pct = |p: u16| (u32::from(length) * u32::from(p) / 100) as u16;
        match self {
            Share::Percent(p) => pct(p),
            Share::Clamped { percent, min, max } => pct(percent).clamp(min, max),
            Share::Rest => length,
        }
    }
}

/// How a pane answers the motion keys (arrows, pages, Home/End, the wheel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// It scrolls its text.
    Scroll,
    /// A text cursor moves through the document (the raw pane).
    Cursor,
    /// A selection moves through a list, each row a choice (the samples pane).
    List,
    /// A selection moves through items, the pane scrolling to keep it in view (the
    /// diagnostics pane).
    Items,
}

/// What `o` opens in the editor when the pane has the focus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opens {
    /// The sample file at the raw cursor.
    Document,
    /// The place of the selected diagnostic.
    Diagnostic,
    /// The template at the field of the region under the cursor (the first field without
    /// one).
    Field,
    /// The selected sample's file.
    SampleFile,
}

/// One pane's declaration.
#[derive(Clone, Copy, Debug)]
pub struct PaneSpec {
    /// The pane.
    pub pane: Pane,
    /// Its title and its name in the config file.
    pub name: &'static str,
    /// Where it sits.
    pub place: Place,
    /// Its rank in its place (top to bottom, left to right).
    pub order: u8,
    /// How much of its place it takes.
    pub share: Share,
    /// Whether it shows the parse result (marked stale while the newest parse fails).
    pub shows_result: bool,
    /// How it answers the motion keys.
    pub motion: Motion,
    /// What `o` opens from it.
    pub opens: Opens,
}

/// Every pane, in focus order.
pub(crate) const PANES: [PaneSpec; 5] = [
    PaneSpec {
        pane: Pane::Raw,
        name: "raw",
        place: Place::TopLeft,
        order: 0,
        share: Share::Rest,
        shows_result: true,
        motion: Motion::Cursor,
        opens: Opens::Document,
    },
    PaneSpec {
        pane: Pane::Message,
        name: "message",
        place: Place::TopRight,
        order: 0,
        share: Share::Percent(55),
        shows_result: true,
        motion: Motion::Scroll,
        opens: Opens::Field,
    },
    PaneSpec {
        pane: Pane::Region,
        name: "region",
        place: Place::TopRight,
        order: 1,
        share: Share::Rest,
        shows_result: true,
        motion: Motion::Scroll,
        opens: Opens::Field,
    },
    PaneSpec {
        pane: Pane::Diagnostics,
        name: "diagnostics",
        place: Place::Bottom,
        order: 1,
        share: Share::Rest,
        shows_result: false,
        motion: Motion::Items,
        opens: Opens::Diagnostic,
    },
    PaneSpec {
        pane: Pane::Samples,
        name: "samples",
        place: Place::Bottom,
        order: 0,
        share: Share::Clamped {
            percent: 30,
            min: 20,
            max: 36,
        },
        shows_result: false,
        motion: Motion::List,
        opens: Opens::SampleFile,
    },
];

/// How many panes there are.
pub(crate) const COUNT: usize = PANES.len();

impl Pane {
    /// Every pane, in focus order.
    pub const ALL: [Pane; COUNT] = {
        let mut all = [Pane::Raw; COUNT];
        let mut i = 0;
        while i < COUNT {
            all[i] = PANES[i].pane;
            i += 1;
        }
        all
    };

    /// Its place in focus order (its number key is this plus one): the variants are in
    /// `PANES`' order, which a test checks.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its declaration.
    pub fn spec(self) -> &'static PaneSpec {
        &PANES[self.index()]
    }

    /// Its title (also its name in the config file).
    pub fn title(self) -> &'static str {
        self.spec().name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pane_is_declared_once_in_its_own_row() {
        for (i, spec) in PANES.iter().enumerate() {
            assert_eq!(spec.pane.index(), i);
        }
        let mut places: Vec<_> = PANES.iter().map(|s| (s.place as u8, s.order)).collect();
        places.sort();
        places.dedup();
        assert_eq!(places.len(), COUNT, "two panes share a place and a rank");
    }

    #[test]
    fn shares_are_whole_cells_of_the_length() {
        assert_eq!(Share::Percent(55).of(40), 22);
        assert_eq!(Share::Percent(55).of(60_000), 33_000);
        let samples = Share::Clamped {
            percent: 30,
            min: 20,
            max: 36,
        };
        assert_eq!(samples.of(50), 20);
        assert_eq!(samples.of(100), 30);
        assert_eq!(samples.of(200), 36);
    }
}
