//! Unicode property names (`\p{..}`, `[[:alpha:]]`): the reference parser's name lookup, and the
//! code point sets of every value of every property, decoded from the blob that
//! `tools/regex/gen_tables.py` measured on the reference (format described there).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::ast::Enc;
use super::charset::CharSet;
use super::unicode_tables as t;

/// The outcome of looking a property up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A property value: `key` is `property id << 16 | value id`.
    Found { key: u32, positive: bool },
    /// The reference rejects the name with this message.
    Unknown(&'static str),
}

const BINARY_VALUES: [&str; 8] = ["F", "FALSE", "N", "NO", "T", "TRUE", "Y", "YES"];

fn property_id(name: &str) -> Option<u16> {
    t::PROPERTY_NAMES
        .binary_search_by(|&(n, _)| n.cmp(name))
        .ok()
        .map(|i| t::PROPERTY_NAMES[i].1)
}

fn values_of(prop: u16) -> &'static [(&'static str, u16)] {
    t::PROPERTY_VALUES
        .iter()
        .find(|&&(p, _)| p == prop)
        .map(|&(_, v)| v)
        .unwrap_or(&[])
}

fn value_id(prop: u16, value: &str) -> Option<u16> {
    let vals = values_of(prop);
    vals.binary_search_by(|&(n, _)| n.cmp(value))
        .ok()
        .map(|i| vals[i].1)
}

fn is_binary(prop: u16) -> bool {
    let vals = values_of(prop);
    vals.len() == BINARY_VALUES.len() && vals.iter().zip(BINARY_VALUES).all(|(&(n, _), b)| n == b)
}

/// The reference's `standardise_name`: numbers become a canonical rational, anything else is
/// upper-cased with `_`, `-` and spaces removed.
pub(crate) fn standardise_name(name: &str) -> String {
    if let Some(r) = numeric_to_rational(name) {
        return r;
    }
    name.chars()
        .filter(|c| !"_- ".contains(*c))
        .flat_map(char::to_uppercase)
        .collect()
}

fn numeric_to_rational(numeric: &str) -> Option<String> {
    let (sign, rest) = match numeric.strip_prefix('-') {
        Some(r) => ("-", r),
        None => ("", numeric),
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let value = match parts.as_slice() {
        [one] => py_float(one)?,
        [num, den] => {
            let d = py_float(den)?;
            if d == 0.0 {
                return None;
            }
            py_float(num)? / d
        }
        _ => return None,
    };
    if !value.is_finite() {
        return None;
    }
    let (num, den) = float_to_rational(value, 0)?;
    let result = format!("{sign}{num}/{den}");
    Some(match result.strip_suffix("/1") {
        Some(r) => r.to_string(),
        None => result,
    })
}

fn py_float(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() || s.contains("__") || s.starts_with('_') || s.ends_with('_') {
        return None;
    }
    let cleaned: String = s.chars().filter(|&c| c != '_').collect();
    let lower = cleaned.to_ascii_lowercase();
    if lower.contains("inf") || lower.contains("nan") {
        return None;
    }
    cleaned.parse::<f64>().ok()
}

fn float_to_rational(flt: f64, depth: u32) -> Option<(i128, i128)> {
    if depth > 64 || flt.abs() > 1e30 {
        return None;
    }
    let int_part = flt.trunc();
    let error = flt - int_part;
    if error.abs() < 0.0001 {
        return Some((int_part as i128, 1));
    }
    let (den, num) = float_to_rational(1.0 / error, depth + 1)?;
    Some(((int_part as i128).checked_mul(den)?.checked_add(num)?, den))
}

/// The reference's `lookup_property(property, value, positive, posix=...)`.
pub(crate) fn lookup(property: Option<&str>, value: &str, positive: bool, posix: bool) -> Lookup {
    let property = property.map(standardise_name);
    let mut value = standardise_name(value);
    let mut positive = positive;
    let mut property = property;
    if property.as_deref() == Some("GENERALCATEGORY") && value == "ASSIGNED" {
        property = Some("GENERALCATEGORY".into());
        value = "UNASSIGNED".into();
        positive = !positive;
    }
    if posix
        && property.is_none()
        && ["ALNUM", "DIGIT", "PUNCT", "XDIGIT"].contains(&value.as_str())
    {
        value = format!("POSIX{value}");
    }
    if let Some(prop_name) = property {
        let Some(prop) = property_id(&prop_name) else {
            return Lookup::Unknown("unknown property");
        };
        let Some(val) = value_id(prop, &value) else {
            return Lookup::Unknown("unknown property value");
        };
        return found((u32::from(prop) << 16) | u32::from(val), positive);
    }
    for name in ["GC", "SCRIPT", "BLOCK"] {
        let prop = property_id(name).expect("core property");
        if let Some(val) = value_id(prop, &value) {
            return found((u32::from(prop) << 16) | u32::from(val), positive);
        }
    }
    if let Some(prop) = property_id(&value) {
        if is_binary(prop) {
            return found((u32::from(prop) << 16) | 1, positive);
        }
        return found(u32::from(prop) << 16, !positive);
    }
    if let Some(rest) = value.strip_prefix("IS")
        && let Some(prop) = property_id(rest)
        && value_id(prop, "YES").is_some()
    {
        return found((u32::from(prop) << 16) | 1, positive);
    }
    for (prefix, name) in [("IS", "SCRIPT"), ("IN", "BLOCK")] {
        if let Some(rest) = value.strip_prefix(prefix) {
            let prop = property_id(name).expect("core property");
            if let Some(val) = value_id(prop, rest) {
                return found((u32::from(prop) << 16) | u32::from(val), positive);
            }
        }
    }
    Lookup::Unknown("unknown property")
}

fn found(key: u32, positive: bool) -> Lookup {
    Lookup::Found { key, positive }
}

/// Little-endian reader over the property blob. The blob is generated and checked by the
/// generator; a truncated read yields zeros so that a corrupt blob gives empty sets, not a panic.
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
    fn u16(&mut self) -> u16 {
        u16::from(self.u8()) | (u16::from(self.u8()) << 8)
    }
    fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | (u32::from(self.u16()) << 16)
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
}

/// The decoded values, by key: a pattern names the same few properties many times, and
/// decoding a large property (thousands of runs) each time would dominate compiling. Bounded by
/// the number of property values (about 1,500; 0.6 MB if every one were decoded).
static DECODED: OnceLock<Mutex<HashMap<u32, Ranges>>> = OnceLock::new();

/// A property value's code points, as sorted inclusive ranges.
type Ranges = Arc<[(u32, u32)]>;

/// `value_ranges`, decoded once per key.
fn cached_ranges(key: u32) -> Ranges {
    let cache = DECODED.get_or_init(Mutex::default);
    // A panic elsewhere while the lock was held leaves the map intact: use it anyway.
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(key)
        .or_insert_with(|| value_ranges((key >> 16) as u16, (key & 0xFFFF) as u16).into())
        .clone()
}

/// The code points whose property `prop` has value `value` (empty for an unknown property).
fn value_ranges(prop: u16, value: u16) -> Vec<(u32, u32)> {
    let mut r = Reader {
        data: t::PROPERTY_BLOB,
        pos: 0,
    };
    if prop >= r.u16() {
        return Vec::new();
    }
    r.pos = 2 + 4 * usize::from(prop);
    r.pos = r.u32() as usize;
    // Which run signatures (the value lists runs of code points have) include `value`.
    let sig_count = r.u16();
    let holds: Vec<bool> = (0..sig_count)
        .map(|_| {
            let len = r.u8();
            (0..len).fold(false, |held, _| r.u16() == value || held)
        })
        .collect();
    let run_count = r.u32();
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut start = 0u32;
    // A run ends where the next one starts; `open` is the start of the run being collected.
    let mut open: Option<u32> = None;
    for _ in 0..run_count {
        start = start.saturating_add(r.varint());
        let sig = r.varint() as usize;
        let inside = holds.get(sig).copied().unwrap_or(false);
        match (open, inside) {
            (None, true) => open = Some(start),
            (Some(s), false) if start > 0 => {
                out.push((s, start - 1));
                open = None;
            }
            _ => {}
        }
    }
    if let Some(s) = open {
        out.push((s, 0x10FFFF));
    }
    out
}

/// The code points having the property `key` (ignoring `positive`), under encoding `ascii`.
pub(crate) fn property_set(key: u32, ascii: bool) -> CharSet {
    let set = CharSet::from_ranges(cached_ranges(key).to_vec());
    if ascii {
        // Characters above U+007F are treated as the unassigned code point U+10FFFF.
        let low = set.intersect(&CharSet::range(0, 0x7F));
        if set.contains(0x10FFFF) {
            low.union(&CharSet::range(0x80, 0x10FFFF))
        } else {
            low
        }
    } else {
        set
    }
}

/// `property_set` for a node whose encoding may be the pattern default.
pub(crate) fn property_set_enc(key: u32, enc: Enc, pattern_ascii: bool) -> CharSet {
    let ascii = match enc {
        Enc::Ascii => true,
        Enc::Unicode => false,
        Enc::Default => pattern_ascii,
    };
    property_set(key, ascii)
}

/// The longest standardised names of a key's property and value.
pub(crate) fn names_of(key: u32) -> Option<(&'static str, &'static str)> {
    let prop = (key >> 16) as u16;
    let value = (key & 0xFFFF) as u16;
    let longest = |it: &mut dyn Iterator<Item = &'static str>| {
        it.max_by(|a: &&str, b: &&str| a.len().cmp(&b.len()).then(b.cmp(a)))
    };
    let pname = longest(
        &mut t::PROPERTY_NAMES
            .iter()
            .filter(|&&(_, id)| id == prop)
            .map(|&(n, _)| n),
    )?;
    if is_binary(prop) {
        return Some((pname, if value == 0 { "N" } else { "Y" }));
    }
    let vname = longest(
        &mut values_of(prop)
            .iter()
            .filter(|&&(_, id)| id == value)
            .map(|&(n, _)| n),
    )?;
    Some((pname, vname))
}

/// The key of a binary property by its standardised name (`WORD`, `DIGIT`, ...).
pub(crate) fn binary_key(name: &str) -> u32 {
    match lookup(None, name, true, false) {
        Lookup::Found { key, .. } => key,
        other => panic!("built-in property {name} missing: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_like_the_reference() {
        let Lookup::Found { key, positive } = lookup(None, "Lu", true, false) else {
            panic!()
        };
        assert!(positive);
        assert_eq!(key, t::GC_LU);
        assert!(matches!(
            lookup(None, "Latin", true, false),
            Lookup::Found { .. }
        ));
        assert!(matches!(
            lookup(None, "IsLatin", true, false),
            Lookup::Found { .. }
        ));
        assert!(matches!(
            lookup(None, "InBasic_Latin", true, false),
            Lookup::Found { .. }
        ));
        assert!(matches!(
            lookup(Some("Script"), "Greek", true, false),
            Lookup::Found { .. }
        ));
        assert!(matches!(
            lookup(None, "Alphabetic", false, false),
            Lookup::Found {
                positive: false,
                ..
            }
        ));
        assert_eq!(
            lookup(None, "NoSuchThing", true, false),
            Lookup::Unknown("unknown property")
        );
        assert_eq!(
            lookup(Some("Script"), "Nope", true, false),
            Lookup::Unknown("unknown property value")
        );
        assert_eq!(
            lookup(Some("Nope"), "x", true, false),
            Lookup::Unknown("unknown property")
        );
        let Lookup::Found { key, .. } = lookup(Some("lb"), "AL", true, false) else {
            panic!()
        };
        let al = property_set(key, false);
        assert!(al.contains('a' as u32) && !al.contains(' ' as u32));
        assert!(matches!(
            lookup(None, "alnum", true, true),
            Lookup::Found { .. }
        ));
        assert_eq!(standardise_name("1/2"), "1/2");
        assert_eq!(standardise_name("0.5"), "1/2");
        assert_eq!(standardise_name("Upper_case letter"), "UPPERCASELETTER");
    }

    #[test]
    fn escape_properties_match_the_measured_tables() {
        // `\w`, `\d`, `\s` resolve through the property lookup; the generator also measured them
        // directly on the reference.
        assert_eq!(
            property_set(binary_key("WORD"), false),
            CharSet::from_table(t::WORD)
        );
        assert_eq!(
            property_set(binary_key("DIGIT"), false),
            CharSet::from_table(t::DIGIT)
        );
        assert_eq!(
            property_set(binary_key("SPACE"), false),
            CharSet::from_table(t::SPACE)
        );
    }

    #[test]
    fn every_value_decodes_to_its_measured_size() {
        for &(key, ranges, codepoints) in t::PROPERTY_SIZES {
            let got = value_ranges((key >> 16) as u16, (key & 0xFFFF) as u16);
            let count: u32 = got.iter().map(|&(a, b)| b - a + 1).sum();
            assert_eq!(
                (got.len() as u32, count),
                (ranges, codepoints),
                "key {key:X}"
            );
        }
    }

    #[test]
    fn every_property_and_value_name_resolves() {
        for &(pname, pid) in t::PROPERTY_NAMES {
            for &(vname, vid) in values_of(pid) {
                let key = (u32::from(pid) << 16) | u32::from(vid);
                let want = if pname == "GENERALCATEGORY" && vname == "ASSIGNED" {
                    Lookup::Found {
                        key: (key & !0xFFFF) | u32::from(value_id(pid, "UNASSIGNED").unwrap()),
                        positive: false,
                    }
                } else {
                    Lookup::Found {
                        key,
                        positive: true,
                    }
                };
                assert_eq!(
                    lookup(Some(pname), vname, true, false),
                    want,
                    "{pname}={vname}"
                );
            }
        }
    }

    #[test]
    fn sets() {
        let w = property_set(binary_key("WORD"), false);
        assert!(w.contains('é' as u32) && w.contains('_' as u32) && !w.contains(' ' as u32));
        let wa = property_set(binary_key("WORD"), true);
        assert!(!wa.contains('é' as u32) && wa.contains('a' as u32));
        // Unassigned is true for everything above ASCII in ASCII mode.
        let Lookup::Found { key, .. } = lookup(None, "Cn", true, false) else {
            panic!()
        };
        assert!(property_set(key, true).contains('é' as u32));
    }
}
