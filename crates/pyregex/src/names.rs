//! Character names for `\N{...}`: the reference resolves them with its interpreter's
//! `unicodedata.lookup` (CPython 3.11, Unicode 14.0.0), re-expressed here over the names,
//! aliases and named sequences that `tools/regex/gen_tables.py` read from that interpreter.
//!
//! The lookup follows the interpreter's rules: a stored name is compared in upper case; a name
//! starting with `HANGUL SYLLABLE ` (exactly, in upper case) is built from upper-case jamo short
//! names; one starting with `CJK UNIFIED IDEOGRAPH-` (exactly) must end in 4 or 5 upper-case
//! hexadecimal digits naming a unified ideograph; a name longer than 256 bytes is unknown.

use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use super::unicode::in_table;
use super::unicode_tables as t;

/// What a character name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Named {
    /// One code point (a name or an alias).
    Char(u32),
    /// A named sequence of this many code points, which the reference cannot turn into one
    /// character (its `ord()` raises `TypeError`).
    Sequence(usize),
}

/// The interpreter's longest accepted name.
const NAME_MAXLEN: usize = 256;

/// `unicodedata.lookup(name)`, for a name made of ASCII letters, digits, spaces and hyphens.
pub(crate) fn lookup(name: &str) -> Option<Named> {
    if name.len() > NAME_MAXLEN || !name.is_ascii() {
        return None;
    }
    // No stored name starts with these prefixes, so the algorithmic names are the only ones.
    if let Some(rest) = name.strip_prefix("HANGUL SYLLABLE ") {
        return hangul(rest).map(Named::Char);
    }
    if let Some(rest) = name.strip_prefix("CJK UNIFIED IDEOGRAPH-") {
        return cjk(rest).map(Named::Char);
    }
    stored(&name.to_ascii_uppercase())
}

/// A Hangul syllable from its jamo short names: each part takes the longest matching entry of
/// its table (case-sensitive, no backtracking), and the three must use up the name.
fn hangul(rest: &str) -> Option<u32> {
    fn longest(s: &str, table: &[&str]) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (i, jamo) in table.iter().enumerate() {
            if best.is_none_or(|(_, len)| jamo.len() > len) && s.starts_with(jamo) {
                best = Some((i, jamo.len()));
            }
        }
        best
    }
    let (l, l_len) = longest(rest, t::HANGUL_L)?;
    let rest = &rest[l_len..];
    let (v, v_len) = longest(rest, t::HANGUL_V)?;
    let rest = &rest[v_len..];
    let (tt, t_len) = longest(rest, t::HANGUL_T)?;
    if t_len != rest.len() {
        return None;
    }
    let (vc, tc) = (t::HANGUL_V.len(), t::HANGUL_T.len());
    Some(0xAC00 + ((l * vc + v) * tc + tt) as u32)
}

fn cjk(hex: &str) -> Option<u32> {
    if !(4..=5).contains(&hex.len()) || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'F'))
    {
        return None;
    }
    let cp = u32::from_str_radix(hex, 16).ok()?;
    in_table(t::CJK_UNIFIED, cp).then_some(cp)
}

/// Reads the names blob (format in `tools/regex/gen_tables.py`). Reads past the end yield
/// zeros, so a corrupt blob finds nothing instead of panicking.
struct Reader {
    data: &'static [u8],
    pos: usize,
}

impl Reader {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn u32(&mut self) -> u32 {
        let b = [self.u8(), self.u8(), self.u8(), self.u8()];
        u32::from_le_bytes(b)
    }
    fn varint(&mut self) -> u32 {
        let mut value = 0u32;
        for shift in (0..35).step_by(7) {
            let b = self.u8();
            value |= u32::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                break;
            }
        }
        value
    }
    fn bytes(&mut self, n: usize) -> &'static [u8] {
        let start = self.pos.min(self.data.len());
        let end = (self.pos + n).min(self.data.len());
        self.pos += n;
        &self.data[start..end]
    }
}

const SEP_SPACE: u32 = 0;
const SEP_HYPHEN: u32 = 1;

/// The stored names by hash, built on the first `\N{...}` (about 0.8 MB): looking a name up is
/// then a binary search and one comparison instead of a scan of the blob.
struct Index {
    /// The blob's word list (word `n` is `words[n - 1]`).
    words: Vec<&'static [u8]>,
    /// `(hash of the name, offset of its tokens in the blob, section << 24 | value)`, sorted.
    entries: Vec<(u64, u32, u32)>,
}

static INDEX: OnceLock<Index> = OnceLock::new();

fn hash_name(name: &[u8]) -> u64 {
    // A fixed-key hasher: the index and the queries are hashed in the same process.
    let mut h = std::hash::DefaultHasher::new();
    name.hash(&mut h);
    h.finish()
}

impl Index {
    fn build() -> Index {
        let mut r = Reader {
            data: t::NAMES_BLOB,
            pos: 0,
        };
        let words: Vec<&'static [u8]> = (0..r.u32())
            .map(|_| {
                let len = usize::from(r.u8());
                r.bytes(len)
            })
            .collect();
        let mut index = Index {
            words,
            entries: Vec::new(),
        };
        let mut cp = 0u32;
        let mut name = Vec::new();
        for section in 0..3u32 {
            for _ in 0..r.u32() {
                let value = r.varint();
                if section == 0 {
                    cp = cp.saturating_add(value);
                }
                let value = if section == 0 { cp } else { value };
                let offset = r.pos as u32;
                index.decode(&mut r, value, &mut name);
                index
                    .entries
                    .push((hash_name(&name), offset, (section << 24) | value));
            }
        }
        index.entries.sort_unstable();
        index
    }

    /// Reads one entry's tokens into `name` (`value` is its code point, for the hex word).
    fn decode(&self, r: &mut Reader, value: u32, name: &mut Vec<u8>) {
        name.clear();
        loop {
            let token = r.varint();
            let (word, sep) = (token / 3, token % 3);
            match word {
                0 => name.extend_from_slice(format!("{value:04X}").as_bytes()),
                w => name.extend_from_slice(self.words.get(w as usize - 1).copied().unwrap_or(b"")),
            }
            match sep {
                SEP_SPACE => name.push(b' '),
                SEP_HYPHEN => name.push(b'-'),
                _ => break,
            }
            if r.pos >= r.data.len() {
                break;
            }
        }
    }
}

/// A stored name, alias or named sequence (`upper` is the query in upper case).
fn stored(upper: &str) -> Option<Named> {
    let index = INDEX.get_or_init(Index::build);
    let hash = hash_name(upper.as_bytes());
    let first = index.entries.partition_point(|&(h, _, _)| h < hash);
    let mut name = Vec::new();
    for &(h, offset, tagged) in &index.entries[first..] {
        if h != hash {
            break;
        }
        let (section, value) = (tagged >> 24, tagged & 0xFF_FFFF);
        let mut r = Reader {
            data: t::NAMES_BLOB,
            pos: offset as usize,
        };
        index.decode(&mut r, value, &mut name);
        if name == upper.as_bytes() {
            return Some(match section {
                2 => Named::Sequence(value as usize),
                _ => Named::Char(value),
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_the_interpreter_accepts() {
        // Expectations recorded with the reference interpreter's `unicodedata.lookup`.
        assert_eq!(lookup("LATIN SMALL LETTER A"), Some(Named::Char(0x61)));
        assert_eq!(lookup("latin small letter a"), Some(Named::Char(0x61)));
        assert_eq!(lookup("EM DASH"), Some(Named::Char(0x2014)));
        assert_eq!(lookup("BYTE ORDER MARK"), Some(Named::Char(0xFEFF)));
        assert_eq!(lookup("NULL"), Some(Named::Char(0)));
        assert_eq!(lookup("TIBETAN LETTER -A"), Some(Named::Char(0xF60)));
        assert_eq!(
            lookup("CJK COMPATIBILITY IDEOGRAPH-F900"),
            Some(Named::Char(0xF900))
        );
        assert_eq!(lookup("HANGUL SYLLABLE GA"), Some(Named::Char(0xAC00)));
        assert_eq!(lookup("HANGUL SYLLABLE GAG"), Some(Named::Char(0xAC01)));
        assert_eq!(lookup("HANGUL SYLLABLE GGAG"), Some(Named::Char(0xAE4D)));
        assert_eq!(lookup("HANGUL SYLLABLE A"), Some(Named::Char(0xC544)));
        assert_eq!(lookup("HANGUL SYLLABLE ga"), None);
        assert_eq!(lookup("hangul syllable GAG"), None);
        assert_eq!(
            lookup("CJK UNIFIED IDEOGRAPH-4E00"),
            Some(Named::Char(0x4E00))
        );
        assert_eq!(
            lookup("CJK UNIFIED IDEOGRAPH-04E00"),
            Some(Named::Char(0x4E00))
        );
        assert_eq!(lookup("CJK UNIFIED IDEOGRAPH-020000"), None);
        assert_eq!(lookup("CJK UNIFIED IDEOGRAPH-A000"), None);
        assert_eq!(lookup("cjk unified ideograph-4E00"), None);
        assert_eq!(lookup("CJK UNIFIED IDEOGRAPH-4e00"), None);
        assert_eq!(
            lookup("LATIN CAPITAL LETTER A WITH MACRON AND GRAVE"),
            Some(Named::Sequence(2))
        );
        assert_eq!(lookup("KEYCAP NUMBER SIGN"), Some(Named::Sequence(3)));
        assert_eq!(lookup("TANGUT IDEOGRAPH-17000"), None);
        assert_eq!(lookup("LATIN  SMALL LETTER A"), None);
        assert_eq!(lookup(" LATIN SMALL LETTER A"), None);
        assert_eq!(lookup(""), None);
    }

    /// Every stored entry as (section, value, name).
    fn entries() -> Vec<(u32, u32, String)> {
        let index = INDEX.get_or_init(Index::build);
        let mut name = Vec::new();
        let mut out: Vec<(u32, u32, String)> = index
            .entries
            .iter()
            .map(|&(_, offset, tagged)| {
                let (section, value) = (tagged >> 24, tagged & 0xFF_FFFF);
                let mut r = Reader {
                    data: t::NAMES_BLOB,
                    pos: offset as usize,
                };
                index.decode(&mut r, value, &mut name);
                (section, value, String::from_utf8(name.clone()).unwrap())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn stored_entries_look_up_to_themselves() {
        let all = entries();
        assert!(all.len() > 30_000);
        // Every entry, in upper or lower case.
        for (i, (section, value, name)) in all.iter().enumerate() {
            let want = match section {
                2 => Named::Sequence(*value as usize),
                _ => Named::Char(*value),
            };
            let name = if i % 2 == 0 {
                name.clone()
            } else {
                name.to_ascii_lowercase()
            };
            assert_eq!(lookup(&name), Some(want), "{name}");
        }
    }
}
