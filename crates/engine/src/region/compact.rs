//! [`Regions`]: a stream's regions, held compactly.
//!
//! An audit keeps every region of the stream, and a sample of many small regions has many:
//! 1 MB of small tool calls has 15,646, one a call. Most hold nothing of their own (an audit
//! keeps a repeating field's values in the message only, and the parsed content as a place
//! inside them), so what one costs is its spans and indices: a 44-byte record and a 4-byte
//! entry here, the place of its parsed content held once for all of them, instead of a
//! 152-byte [`Region`]. For those calls the audit's regions take 0.8 bytes per byte of text
//! instead of 2.5 (the lists' growth included), and the audit peaks at 7.8 bytes per byte
//! instead of 10.0 (with its marks in 8 bytes: see [`crate::event::Marks`]).
//!
//! A region that holds values, one still open, and the rare region whose numbers do not fit
//! the record (offsets past `u32::MAX`, a document over 4 GiB; a field past the 65,536th) are
//! held whole, so reading one lends it and copies no value.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use super::{Ending, Region, parsed_of, transformed_of};
use crate::chunked::Chunked;
use crate::event::Step;
use crate::value::{Dict, Place, Value};

/// A stream's regions in the order they opened, each read back as a [`Region`] (see the
/// module documentation): a region that has ended and holds no value of its own is held in a
/// 44-byte record and rebuilt when read (nothing to copy: it holds no value); any other is
/// held whole and lent.
#[derive(Clone, Default)]
pub struct Regions {
    /// Where each region is held.
    entries: Vec<Entry>,
    /// The compact records, in chunks: the list grows while the parse holds everything else
    /// (see [`Chunked`]).
    slim: Chunked<Slim>,
    /// The regions held whole.
    full: Vec<Region>,
    /// The places of the compact regions' parsed content inside their values, each held once:
    /// a field's transform puts the content at the same place in every region's value.
    places: Vec<Place>,
}

/// Where a region is held, in 4 bytes: the index of its compact record, or, with [`WHOLE`]
/// set, of the region held whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry(u32);

/// The bit of an [`Entry`] that says the region is held whole.
const WHOLE: u32 = 1 << 31;

/// An [`Entry`] read: an index into [`Regions::slim`] or [`Regions::full`].
enum Held {
    Slim(usize),
    Full(usize),
}

impl Entry {
    /// The entry of compact record `i`, when `i` fits.
    fn slim(i: usize) -> Option<Entry> {
        u32::try_from(i).ok().filter(|i| i & WHOLE == 0).map(Entry)
    }

    /// The entry of region `i` of those held whole.
    fn full(i: usize) -> Entry {
        let i = u32::try_from(i)
            .ok()
            .filter(|i| i & WHOLE == 0)
            .expect("fewer than 2^31 regions held whole (152 bytes each)");
        Entry(i | WHOLE)
    }

    fn held(self) -> Held {
        if self.0 & WHOLE == 0 {
            Held::Slim(self.0 as usize)
        } else {
            Held::Full((self.0 & !WHOLE) as usize)
        }
    }
}

/// An ended region without values of its own, in 44 bytes: its value, if any, is item
/// `value_item` of the message's list under its field, its parsed content the value itself or
/// a place inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slim {
    open: [u32; 2],
    body: [u32; 2],
    close: [u32; 2],
    open_event: u32,
    /// [`NONE`] for none (a failed region has no close event).
    close_event: u32,
    /// [`NONE`] for none.
    value_item: u32,
    field: u16,
    /// The field of an [`Ending::Open`].
    ending_field: u16,
    ending: u8,
    kept: u8,
    /// Where the parsed content lies inside the value: 0 for nowhere, else its index in
    /// [`Regions::places`] plus one.
    parsed_at: u8,
}

const NONE: u32 = u32::MAX;

/// `n` as a `u32` below [`NONE`].
fn narrow(n: usize) -> Option<u32> {
    u32::try_from(n).ok().filter(|&n| n != NONE)
}

fn narrow_range(r: &Range<usize>) -> Option<[u32; 2]> {
    Some([narrow(r.start)?, narrow(r.end)?])
}

fn narrow_option(n: Option<usize>) -> Option<u32> {
    match n {
        Some(n) => narrow(n),
        None => Some(NONE),
    }
}

fn wide_option(n: u32) -> Option<usize> {
    (n != NONE).then_some(n as usize)
}

fn wide_range(r: [u32; 2]) -> Range<usize> {
    r[0] as usize..r[1] as usize
}

impl Slim {
    fn kept(&self) -> Step {
        match self.kept {
            1 => Step::Parsed,
            2 => Step::Transformed,
            _ => Step::None,
        }
    }

    fn ending(&self) -> Ending {
        match self.ending {
            0 => Ending::Close,
            1 => Ending::Open(usize::from(self.ending_field)),
            2 => Ending::EndOfStream,
            _ => Ending::Failed,
        }
    }

    /// [`Region::value_in`] of this record.
    fn value_in<'a>(&self, message: Option<&'a Dict>, field_name: &str) -> Option<&'a Value> {
        let i = wide_option(self.value_item)?;
        message?.get(field_name)?.as_list()?.get(i)
    }
}

impl Regions {
    /// No regions.
    pub fn new() -> Regions {
        Regions::default()
    }

    /// Appends `g`, the region that opened after the others.
    pub fn push(&mut self, g: Region) {
        let entry = match self.compact(&g).zip(Entry::slim(self.slim.len())) {
            Some((s, entry)) => {
                self.slim.push(s);
                entry
            }
            None => {
                self.full.push(g);
                Entry::full(self.full.len() - 1)
            }
        };
        self.entries.push(entry);
    }

    /// The compact record of `g`, when it has ended, holds nothing of its own and its numbers
    /// fit.
    fn compact(&mut self, g: &Region) -> Option<Slim> {
        if g.holds_values() {
            return None;
        }
        let (ending, ending_field) = match g.ending.as_ref()? {
            Ending::Close => (0, 0),
            Ending::Open(f) => (1, u16::try_from(*f).ok()?),
            Ending::EndOfStream => (2, 0),
            Ending::Failed => (3, 0),
        };
        let mut slim = Slim {
            open: narrow_range(&g.open)?,
            body: narrow_range(&g.body)?,
            close: narrow_range(g.close.as_ref()?)?,
            open_event: narrow(g.open_event)?,
            close_event: narrow_option(g.close_event)?,
            value_item: narrow_option(g.value_item)?,
            field: u16::try_from(g.field).ok()?,
            ending_field,
            ending,
            kept: match g.kept_as_value {
                Step::None => 0,
                Step::Parsed => 1,
                Step::Transformed => 2,
            },
            parsed_at: 0,
        };
        if let Some(place) = g.parsed_at {
            let i = match self.places.iter().rposition(|p| *p == place) {
                Some(i) => i,
                None => {
                    self.places.push(place);
                    self.places.len() - 1
                }
            };
            // More places than a record can name: not reached by a template's transforms
            // (one place a field), but the region is then held whole.
            slim.parsed_at = u8::try_from(i + 1).ok()?;
        }
        Some(slim)
    }

    /// The region of compact record `s`.
    fn region(&self, s: &Slim) -> Region {
        Region {
            field: usize::from(s.field),
            open: wide_range(s.open),
            body: wide_range(s.body),
            close: Some(wide_range(s.close)),
            ending: Some(s.ending()),
            kept_as_value: s.kept(),
            parsed_at: self.place(s),
            value_item: wide_option(s.value_item),
            open_event: s.open_event as usize,
            close_event: wide_option(s.close_event),
            held: None,
        }
    }

    /// Where the parsed content of compact record `s` lies inside its value.
    fn place(&self, s: &Slim) -> Option<Place> {
        let i = usize::from(s.parsed_at).checked_sub(1)?;
        self.places.get(i).copied()
    }

    /// The number of regions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Region `r` (a compact one rebuilt, which copies no value; one held whole, lent).
    pub fn get(&self, r: usize) -> Option<Cow<'_, Region>> {
        Some(match self.entries.get(r)?.held() {
            Held::Slim(i) => Cow::Owned(self.region(&self.slim[i])),
            Held::Full(i) => Cow::Borrowed(&self.full[i]),
        })
    }

    /// Region `r`, which must exist (as indexing a list).
    pub fn at(&self, r: usize) -> Cow<'_, Region> {
        self.get(r).expect("a region index within the regions")
    }

    /// Every region, in the order they opened.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            regions: self,
            range: 0..self.len(),
        }
    }

    /// The field of region `r`.
    pub fn field(&self, r: usize) -> Option<usize> {
        Some(match self.entries.get(r)?.held() {
            Held::Slim(i) => usize::from(self.slim[i].field),
            Held::Full(i) => self.full[i].field,
        })
    }

    /// The number of regions before the first for which `pred` is false, the regions being
    /// partitioned by it (as [`slice::partition_point`]).
    pub fn partition_point(&self, mut pred: impl FnMut(&Region) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(&self.at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// [`Region::value_in`] of region `r`.
    pub fn value_in<'a>(
        &'a self,
        r: usize,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        match self.entries.get(r)?.held() {
            Held::Slim(i) => self.slim[i].value_in(message, field_name),
            Held::Full(i) => self.full[i].value_in(message, field_name),
        }
    }

    /// [`Region::parsed_in`] of region `r`.
    pub fn parsed_in<'a>(
        &'a self,
        r: usize,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        match self.entries.get(r)?.held() {
            // A compact region's parsed content is its value, or a place inside it.
            Held::Slim(i) => {
                let s = &self.slim[i];
                parsed_of(
                    s.kept(),
                    self.place(s),
                    || s.value_in(message, field_name),
                    None,
                )
            }
            Held::Full(i) => self.full[i].parsed_in(message, field_name),
        }
    }

    /// [`Region::transformed_in`] of region `r`.
    pub fn transformed_in<'a>(
        &'a self,
        r: usize,
        message: Option<&'a Dict>,
        field_name: &str,
    ) -> Option<&'a Value> {
        match self.entries.get(r)?.held() {
            Held::Slim(i) => {
                let s = &self.slim[i];
                transformed_of(s.kept(), || s.value_in(message, field_name), None)
            }
            Held::Full(i) => self.full[i].transformed_in(message, field_name),
        }
    }

    /// Sets what the content parser made of region `r` apart from its value (a view that
    /// shows what a failed transform was given). A compact region is held whole from then on,
    /// its record left unused: for the odd region, not for every one (to change many, take
    /// the regions by value, `into_iter`, and collect them again).
    pub fn set_parsed(&mut self, r: usize, parsed: Option<Value>) {
        let Some(entry) = self.entries.get(r).copied() else {
            return;
        };
        match entry.held() {
            Held::Full(i) => self.full[i].set_own_parsed(parsed),
            Held::Slim(i) => {
                let mut g = self.region(&self.slim[i]);
                g.set_own_parsed(parsed);
                self.full.push(g);
                self.entries[r] = Entry::full(self.full.len() - 1);
            }
        }
    }

    /// Frees the room reserved for regions to come.
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        self.slim.shrink_to_fit();
        self.full.shrink_to_fit();
        self.places.shrink_to_fit();
    }

    /// Whether region `r` is held in a compact record.
    #[cfg(test)]
    pub(crate) fn is_compact(&self, r: usize) -> bool {
        self.entries
            .get(r)
            .is_some_and(|e| matches!(e.held(), Held::Slim(_)))
    }

    /// The bytes the records take (not the values held by regions held whole).
    #[cfg(test)]
    pub(crate) fn record_bytes(&self) -> usize {
        use std::mem::size_of;
        self.entries.capacity() * size_of::<Entry>()
            + self.slim.capacity() * size_of::<Slim>()
            + self.full.capacity() * size_of::<Region>()
            + self.places.capacity() * size_of::<Place>()
    }
}

impl fmt::Debug for Regions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Regions {
    fn eq(&self, other: &Regions) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl From<Vec<Region>> for Regions {
    fn from(regions: Vec<Region>) -> Regions {
        regions.into_iter().collect()
    }
}

impl FromIterator<Region> for Regions {
    fn from_iter<I: IntoIterator<Item = Region>>(regions: I) -> Regions {
        let regions = regions.into_iter();
        let mut out = Regions {
            entries: Vec::with_capacity(regions.size_hint().0),
            ..Regions::default()
        };
        for g in regions {
            out.push(g);
        }
        out
    }
}

/// The regions of a [`Regions`], in order (see [`Regions::iter`]).
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    regions: &'a Regions,
    range: Range<usize>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = Cow<'a, Region>;

    fn next(&mut self) -> Option<Cow<'a, Region>> {
        self.regions.get(self.range.next()?)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }

    fn nth(&mut self, n: usize) -> Option<Cow<'a, Region>> {
        self.regions.get(self.range.nth(n)?)
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.regions.get(self.range.next_back()?)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Regions {
    type Item = Cow<'a, Region>;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// The regions of a [`Regions`], in order and by value (see its `into_iter`).
#[derive(Debug)]
pub struct IntoIter {
    entries: std::vec::IntoIter<Entry>,
    /// The compact records and their places.
    slim: Regions,
    full: Vec<Option<Region>>,
}

impl Iterator for IntoIter {
    type Item = Region;

    fn next(&mut self) -> Option<Region> {
        Some(match self.entries.next()?.held() {
            Held::Slim(i) => self.slim.region(&self.slim.slim[i]),
            Held::Full(i) => self.full[i]
                .take()
                .expect("each region held whole is read once"),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl ExactSizeIterator for IntoIter {}

impl IntoIterator for Regions {
    type Item = Region;
    type IntoIter = IntoIter;

    /// The regions by value: those held whole are moved out, the compact ones rebuilt (to
    /// change many regions, collect them again).
    fn into_iter(self) -> IntoIter {
        IntoIter {
            entries: self.entries.into_iter(),
            full: self.full.into_iter().map(Some).collect(),
            slim: Regions {
                slim: self.slim,
                places: self.places,
                ..Regions::default()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compact_region_takes_44_bytes_and_4_to_find_it() {
        assert_eq!(std::mem::size_of::<Slim>(), 44);
        assert_eq!(std::mem::size_of::<Entry>(), 4);
    }

    #[test]
    fn every_region_reads_back_whole() {
        let mut g = Region::opened(2, 5..16, 3);
        g.body = 16..40;
        g.close = Some(40..52);
        g.ending = Some(Ending::Open(1));
        g.kept_as_value = Step::Transformed;
        g.value_item = Some(7);
        g.close_event = Some(9);
        let mut held = g.clone();
        held.set_value(Some(Value::from("x")));
        held.value_item = None;
        let mut failed = g.clone();
        failed.ending = Some(Ending::Failed);
        failed.close_event = None;
        failed.parsed_at = Place::find(&Value::List(vec![Value::Int(1)]), &Value::Int(1));
        assert!(failed.parsed_at.is_some());
        let open = Region::opened(0, 60..61, 12);
        let far = Region::opened(0, 1 << 40..(1 << 40) + 1, 13);
        let all = vec![
            g.clone(),
            held.clone(),
            failed.clone(),
            open.clone(),
            far.clone(),
        ];
        let mut regions = Regions::from(all.clone());
        let compact: Vec<bool> = (0..regions.len()).map(|r| regions.is_compact(r)).collect();
        assert_eq!(compact, [true, false, true, false, false]);
        assert!(matches!(regions.get(0), Some(Cow::Owned(_))));
        assert!(matches!(regions.get(1), Some(Cow::Borrowed(_))));
        assert_eq!(regions.iter().map(Cow::into_owned).collect::<Vec<_>>(), all);
        assert_eq!(regions.iter().next_back().as_deref(), Some(&far));
        assert_eq!(regions.field(0), Some(2));
        assert_eq!(regions.partition_point(|g| g.open_event < 12), 3);
        assert_eq!(regions.clone().into_iter().collect::<Vec<_>>(), all);
        regions.set_parsed(0, Some(Value::Int(1)));
        assert_eq!(regions.at(0).own_parsed(), Some(&Value::Int(1)));
        assert!(!regions.is_compact(0));
        assert_eq!(regions.len(), 5);
        assert_eq!(regions.get(5), None);
    }

    #[test]
    fn a_compact_regions_values_are_read_in_the_message() {
        let mut message = Dict::new();
        let call = Value::List(vec![Value::from("f"), Value::Int(3)]);
        message.insert("calls", Value::List(vec![Value::Null, call.clone()]));
        let mut g = Region::opened(0, 0..3, 0);
        g.close = Some(5..9);
        g.ending = Some(Ending::Close);
        g.value_item = Some(1);
        g.parsed_at = Place::find(&call, &Value::Int(3));
        let mut kept = g.clone();
        kept.kept_as_value = Step::Transformed;
        kept.parsed_at = None;
        let regions = Regions::from(vec![g.clone(), kept.clone()]);
        let m = Some(&message);
        for (r, whole) in [g, kept].iter().enumerate() {
            assert!(regions.is_compact(r));
            assert_eq!(regions.value_in(r, m, "calls"), whole.value_in(m, "calls"));
            assert_eq!(
                regions.parsed_in(r, m, "calls"),
                whole.parsed_in(m, "calls")
            );
            assert_eq!(
                regions.transformed_in(r, m, "calls"),
                whole.transformed_in(m, "calls")
            );
        }
        assert_eq!(regions.parsed_in(0, m, "calls"), Some(&Value::Int(3)));
        assert_eq!(regions.transformed_in(1, m, "calls"), Some(&call));
    }
}
