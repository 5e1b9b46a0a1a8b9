//! The replay's steps, a few bytes each: where each step's fed text, generation bytes and
//! events end, how much text it left held back, the open field and where the open region's
//! body ends. A chunk-size-1 replay has one step per character of the generation, so a step
//! costs one byte in the common case (a short chunk, a few events, little held back, the same
//! field as before), and otherwise a byte saying which numbers differ from that case followed
//! by those numbers only (a delimiter being held back as it arrives costs two bytes a step).
//! Every [`MARK_EVERY`] steps a mark records where the encoding stands, so any step is decoded
//! from the mark before it. The encoding grows by fixed chunks: a long replay never holds an
//! old and a new copy of it while it grows.

use rtbench_engine::chunked::Chunked;

/// Steps between two marks: a step is decoded in at most this many steps' work.
const MARK_EVERY: usize = 512;

/// What the index knows about one step: the ends of its ranges (whose starts are the previous
/// step's ends) and the parser's state after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Entry {
    /// End of the fed document.
    pub fed_to: usize,
    /// End of the generation bytes consumed.
    pub source_end: usize,
    /// End of the step's events in the timeline.
    pub events_end: usize,
    /// Where the text held back after the step starts (it ends at `fed_to`).
    pub held_start: usize,
    /// The field receiving text.
    pub current: Option<usize>,
    /// Where the open region's body ends (`held_start` when no region is open).
    pub live_end: usize,
    /// Broken characters replaced in this step's chunk (byte chunkings only).
    pub replaced: usize,
}

#[derive(Clone, Copy, Debug)]
struct Mark {
    /// Where the step after `before` starts in the encoding.
    offset: usize,
    /// The entry of the step before the mark (all zero before step 0).
    before: Entry,
}

/// The steps of a replay, encoded.
#[derive(Clone, Debug, Default)]
pub(super) struct StepIndex {
    bytes: Chunked<u8>,
    marks: Vec<Mark>,
    len: usize,
    last: Entry,
}

/// A step in one byte: a chunk of 1 to 4 bytes (the generation's own), up to 7 events, up to 3
/// bytes held back, the same field and no gap between the open body and the held text.
/// Otherwise the first byte is `FULL` with a bit for each of the [`Field`]s written after it,
/// the others taking their usual values.
const FULL: u8 = 0x80;

/// The numbers of a step not in one byte, in the order they are written, each with its bit in
/// the step's first byte.
#[derive(Clone, Copy)]
enum Field {
    /// Bytes fed (else 1).
    Fed = 1,
    /// Generation bytes consumed (else as many as were fed).
    Source = 2,
    /// Events (else none).
    Events = 4,
    /// Bytes held back (else none).
    Held = 8,
    /// The field receiving text, plus one (0 for none; else the same as before).
    Current = 16,
    /// The gap between the held text and the open body's end, zigzagged (else none).
    Gap = 32,
    /// Broken characters replaced (else none).
    Replaced = 64,
}

impl StepIndex {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The last step's entry (all zero before any step).
    pub(crate) fn last(&self) -> Entry {
        self.last
    }

    pub(crate) fn push(&mut self, entry: Entry) {
        if self.len.is_multiple_of(MARK_EVERY) {
            self.marks.push(Mark {
                offset: self.bytes.len(),
                before: self.last,
            });
        }
        let prev = self.last;
        let fed = entry.fed_to - prev.fed_to;
        let events = entry.events_end - prev.events_end;
        let held = entry.fed_to - entry.held_start;
        let gap = zigzag(entry.held_start as i64 - entry.live_end as i64);
        let compact = (1..=4).contains(&fed)
            && entry.source_end - prev.source_end == fed
            && events <= 7
            && held <= 3
            && entry.current == prev.current
            && gap == 0
            && entry.replaced == 0;
        if compact {
            self.bytes
                .push((fed - 1) as u8 | (events as u8) << 2 | (held as u8) << 5);
        } else {
            let source = entry.source_end - prev.source_end;
            let written = [
                (Field::Fed, fed as u64, fed != 1),
                (Field::Source, source as u64, source != fed),
                (Field::Events, events as u64, events != 0),
                (Field::Held, held as u64, held != 0),
                (
                    Field::Current,
                    entry.current.map_or(0, |c| c as u64 + 1),
                    entry.current != prev.current,
                ),
                (Field::Gap, gap, gap != 0),
                (Field::Replaced, entry.replaced as u64, entry.replaced != 0),
            ];
            let mask = written
                .iter()
                .filter(|w| w.2)
                .fold(0, |m, (f, ..)| m | *f as u8);
            self.bytes.push(FULL | mask);
            for (_, n, _) in written.iter().filter(|w| w.2) {
                write_varint(&mut self.bytes, *n);
            }
        }
        self.len += 1;
        self.last = entry;
    }

    /// Frees what the encoding reserved beyond its length (once every step is pushed).
    pub(crate) fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
        self.marks.shrink_to_fit();
    }

    /// The entries of the step before `step` and of `step`; panics when out of range, like
    /// indexing.
    pub(crate) fn pair(&self, step: usize) -> (Entry, Entry) {
        assert!(step < self.len, "step {step} of {}", self.len);
        self.pairs_from(step).next().expect("a step in range")
    }

    /// From `step` on, each step's entry with the one before it, decoded one after the other
    /// (a walk over many steps decodes each once).
    pub(crate) fn pairs_from(&self, step: usize) -> impl Iterator<Item = (Entry, Entry)> + '_ {
        let mark = step / MARK_EVERY;
        let mut d = self.decoder(mark);
        let mut at = mark * MARK_EVERY;
        while at < step.min(self.len) {
            d.next(&self.bytes);
            at += 1;
        }
        (at..self.len).map(move |_| {
            let before = d.entry;
            d.next(&self.bytes);
            (before, d.entry)
        })
    }

    pub(crate) fn get(&self, step: usize) -> Entry {
        self.pair(step).1
    }

    /// The first step whose entry satisfies `reached`, a condition that once true stays true
    /// for every later step (like `partition_point`); `len()` when none does.
    pub(crate) fn first(&self, reached: impl Fn(&Entry) -> bool) -> usize {
        let mark = self.marks.partition_point(|m| !reached(&m.before));
        let Some(mark) = mark.checked_sub(1) else {
            return 0;
        };
        let mut d = self.decoder(mark);
        let mut step = mark * MARK_EVERY;
        while step < self.len {
            d.next(&self.bytes);
            if reached(&d.entry) {
                return step;
            }
            step += 1;
        }
        self.len
    }

    fn decoder(&self, mark: usize) -> Decoder {
        self.marks
            .get(mark)
            .map_or_else(Decoder::default, |m| Decoder {
                offset: m.offset,
                entry: m.before,
            })
    }
}

#[derive(Default)]
struct Decoder {
    offset: usize,
    entry: Entry,
}

impl Decoder {
    /// Decodes the next step over `entry`.
    fn next(&mut self, bytes: &Chunked<u8>) {
        let e = &mut self.entry;
        let tag = bytes[self.offset];
        self.offset += 1;
        if tag & FULL == 0 {
            let fed = usize::from(tag & 3) + 1;
            e.fed_to += fed;
            e.source_end += fed;
            e.events_end += usize::from(tag >> 2 & 7);
            e.held_start = e.fed_to - usize::from(tag >> 5 & 3);
            e.live_end = e.held_start;
            e.replaced = 0;
            return;
        }
        let offset = &mut self.offset;
        let mut read = |f: Field, usual: u64| {
            if tag & f as u8 == 0 {
                usual
            } else {
                read_varint(bytes, offset)
            }
        };
        let fed = read(Field::Fed, 1) as usize;
        e.fed_to += fed;
        e.source_end += read(Field::Source, fed as u64) as usize;
        e.events_end += read(Field::Events, 0) as usize;
        e.held_start = e.fed_to - read(Field::Held, 0) as usize;
        let current = e.current.map_or(0, |c| c as u64 + 1);
        e.current = (read(Field::Current, current) as usize).checked_sub(1);
        e.live_end = (e.held_start as i64 - unzigzag(read(Field::Gap, 0))) as usize;
        e.replaced = read(Field::Replaced, 0) as usize;
    }
}

fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    (n >> 1) as i64 ^ -((n & 1) as i64)
}

/// LEB128: seven bits a byte, low bits first.
fn write_varint(out: &mut Chunked<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn read_varint(bytes: &Chunked<u8>, offset: &mut usize) -> u64 {
    let mut n = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*offset];
        *offset += 1;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return n;
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries of every shape: compact and full steps, a mark boundary crossed many times.
    fn entries() -> Vec<Entry> {
        let mut out = Vec::new();
        let mut e = Entry::default();
        for i in 0..1000usize {
            let fed = [1, 2, 4, 0, 7, 300, 1, 3][i % 8];
            e.fed_to += fed;
            e.source_end += if i % 13 == 0 { fed + 1 } else { fed };
            e.events_end += [0, 1, 2, 9, 1][i % 5];
            e.held_start = e.fed_to - [0, 1, 3, 4, 0, 200][i % 6].min(e.fed_to);
            e.current = [None, Some(0), Some(0), Some(3)][i / 7 % 4];
            e.live_end = if i % 11 == 0 {
                e.held_start.saturating_sub(5)
            } else if i % 17 == 0 {
                e.held_start + 2
            } else {
                e.held_start
            };
            e.replaced = usize::from(i % 19 == 0);
            out.push(e);
        }
        out
    }

    fn indexed(entries: &[Entry]) -> StepIndex {
        let mut index = StepIndex::default();
        for e in entries {
            index.push(*e);
        }
        index
    }

    #[test]
    fn every_step_decodes_to_what_was_pushed() {
        let entries = entries();
        let index = indexed(&entries);
        assert_eq!(index.len(), entries.len());
        let all: Vec<Entry> = index.pairs_from(0).map(|(_, after)| after).collect();
        assert_eq!(all, entries);
        for (i, e) in entries.iter().enumerate() {
            let before = i.checked_sub(1).map_or(Entry::default(), |p| entries[p]);
            assert_eq!(index.pair(i), (before, *e), "step {i}");
            let walked: Vec<Entry> = index.pairs_from(i).map(|(_, after)| after).collect();
            assert_eq!(walked, entries[i..], "from step {i}");
        }
    }

    #[test]
    fn a_short_step_costs_one_byte() {
        let mut index = StepIndex::default();
        let mut e = Entry::default();
        for i in 0..1000 {
            e.fed_to += 1 + i % 4;
            e.source_end = e.fed_to;
            e.events_end += i % 3;
            e.held_start = e.fed_to - i % 2;
            e.live_end = e.held_start;
            index.push(e);
        }
        assert_eq!(index.bytes.len(), 1000);
        assert_eq!(index.get(999), e);
    }

    #[test]
    fn a_step_holding_back_a_long_delimiter_costs_two_bytes() {
        let mut index = StepIndex::default();
        let mut e = Entry::default();
        for held in 0..100 {
            e.fed_to += 1;
            e.source_end = e.fed_to;
            e.held_start = e.fed_to - held.min(e.fed_to);
            e.live_end = e.held_start;
            index.push(e);
        }
        // Steps 0 to 3 hold back at most 3 bytes: one byte each.
        assert_eq!(index.bytes.len(), 4 + 96 * 2);
        assert_eq!(index.get(99), e);
    }

    #[test]
    fn first_finds_the_step_a_monotone_condition_starts_at() {
        let entries = entries();
        let index = indexed(&entries);
        for target in [
            0,
            1,
            5,
            500,
            10_000,
            entries.last().unwrap().fed_to,
            usize::MAX,
        ] {
            let expected = entries.partition_point(|e| e.fed_to <= target);
            assert_eq!(index.first(|e| e.fed_to > target), expected, "{target}");
        }
    }
}
