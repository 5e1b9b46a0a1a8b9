//! Character names for `\N{...}`: the reference resolves them with its interpreter's
//! `unicodedata.lookup` (CPython 3.11, Unicode 14.0.0), re-expressed here over the names,
//! aliases and named sequences that `tools/regex/gen_tables.py` read from that interpreter.
//!
//! The lookup follows the interpreter's rules: a stored name is compared in upper case; a name
//! starting with `HANGUL SYLLABLE ` (exactly, in upper case) is built from upper-case jamo short
//! names; one starting with `CJK UNIFIED IDEOGRAPH-` (exactly) must end in 4 or 5 upper-case
//! hexadecimal digits naming a unified ideograph; a name longer than 256 bytes is unknown.

use super::unicode::in_table;
use super::unicode_tables as t;

/// What a character name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// One code point (a name or an alias).
    Char(u32),
    /// A named sequence of this many code points, which the reference cannot turn into one
    /// character (its `ord()` raises `TypeError`).
    Sequence(usize),
}

/// The interpreter's longest accepted name.
const NAME_MAXLEN: usize = 256;

/// `unicodedata.lookup(name)`, for a name made of ASCII letters, digits, spaces and hyphens.
pub fn lookup(name: &str) -> Option<Named> {
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
const SEP_END: u32 = 2;

/// A stored name, alias or named sequence, by scanning the blob: the query is split into
/// words, each word mapped to its number in the blob's word list, and entries are compared word
/// by word (word 0 is the entry's code point in hexadecimal).
fn stored(upper: &str) -> Option<Named> {
    let mut r = Reader {
        data: t::NAMES_BLOB,
        pos: 0,
    };
    // The query as (word, separator after it).
    let mut query: Vec<(&str, u32)> = Vec::new();
    let mut word_start = 0;
    for (i, b) in upper.bytes().enumerate() {
        if b == b' ' || b == b'-' {
            let sep = if b == b' ' { SEP_SPACE } else { SEP_HYPHEN };
            query.push((&upper[word_start..i], sep));
            word_start = i + 1;
        }
    }
    query.push((&upper[word_start..], SEP_END));
    let word_count = r.u32();
    // Each query word's number in the word list (0: not a stored word).
    let mut ids = vec![0u32; query.len()];
    for id in 1..=word_count {
        let len = usize::from(r.u8());
        let word = r.bytes(len);
        for (slot, (w, _)) in ids.iter_mut().zip(&query) {
            if w.as_bytes() == word {
                *slot = id;
            }
        }
    }
    let mut cp = 0u32;
    for section in 0..3 {
        let count = r.u32();
        for _ in 0..count {
            let value = r.varint();
            if section == 0 {
                cp = cp.saturating_add(value);
            }
            // Compare token by token, reading the entry to its end either way.
            let mut equal = true;
            let mut i = 0;
            loop {
                let token = r.varint();
                let (word, sep) = (token / 3, token % 3);
                if equal {
                    equal = match query.get(i) {
                        Some(&(w, qsep)) if qsep == sep => {
                            if word == 0 {
                                section == 0 && w == format!("{cp:04X}")
                            } else {
                                ids[i] == word
                            }
                        }
                        _ => false,
                    };
                }
                i += 1;
                if sep == SEP_END || r.pos >= r.data.len() {
                    break;
                }
            }
            if equal && i == query.len() {
                return Some(match section {
                    0 => Named::Char(cp),
                    1 => Named::Char(value),
                    _ => Named::Sequence(value as usize),
                });
            }
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
        let mut r = Reader {
            data: t::NAMES_BLOB,
            pos: 0,
        };
        let words: Vec<String> = (0..r.u32())
            .map(|_| {
                let len = usize::from(r.u8());
                String::from_utf8(r.bytes(len).to_vec()).unwrap()
            })
            .collect();
        let mut out = Vec::new();
        let mut cp = 0;
        for section in 0..3 {
            for _ in 0..r.u32() {
                let value = r.varint();
                if section == 0 {
                    cp += value;
                }
                let mut name = String::new();
                loop {
                    let token = r.varint();
                    let (word, sep) = (token / 3, token % 3);
                    if word == 0 {
                        name.push_str(&format!("{cp:04X}"));
                    } else {
                        name.push_str(&words[word as usize - 1]);
                    }
                    match sep {
                        SEP_SPACE => name.push(' '),
                        SEP_HYPHEN => name.push('-'),
                        _ => break,
                    }
                }
                out.push((section, if section == 0 { cp } else { value }, name));
            }
        }
        out
    }

    #[test]
    fn stored_entries_look_up_to_themselves() {
        let all = entries();
        assert!(all.len() > 30_000);
        // A sample (each lookup scans the blob), in upper and lower case.
        for (i, (section, value, name)) in all.iter().enumerate().step_by(101) {
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
