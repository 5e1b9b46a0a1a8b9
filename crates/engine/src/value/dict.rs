//! [`Dict`]: an insertion-ordered map with string keys, as Python's `dict` behaves for the
//! values the engine builds (a repeated key keeps its first position and takes the last value;
//! removal keeps the order of the rest).
//!
//! Most dicts a model writes are tiny (a tool call's `{"name", "arguments"}`), and a sample can
//! hold hundreds of thousands of them, each several times (a region's value, its parsed content,
//! the message). So a dict is its entries in one exact-size vector, looked up by a linear scan,
//! and nothing else; only a dict that grows past [`INDEXED_FROM`] entries gets a hash index
//! (positions in a table keyed by a randomly seeded SipHash of the key), so that an object with
//! 100,000 keys from untrusted text is still built and searched in linear time, and keys chosen
//! to collide cannot make it quadratic.
//!
//! For the same reason a key is a [`Key`], not a `String`: 16 bytes, holding a key of up to
//! 15 bytes inline (almost every key a model writes) and a longer one in a heap block that its
//! clones share. An entry is then 48 bytes (the key and a 32-byte [`Value`]) where a `String`
//! key made it 56 and added a heap block of its own: a small tool call,
//! `{"type": "function", "function": {"name": "f", "arguments": {"a": 137}}}`, is 249 bytes in
//! five blocks (its three dicts' entries and its two string values) instead of 315 in ten, and
//! a message of such calls 4.4 bytes per byte of the text they come from instead of 5.4.
//!
//! The API is the part of `indexmap::IndexMap`'s the crates use, with the same meaning
//! (including `Debug` output and order-insensitive `==`), except that keys are lent as `&str`
//! and [`Dict::insert`] takes anything a [`Key`] is made from (`&str`, `String`, a `Key`).

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::ops::Deref;

use ecow::EcoString;
use hashbrown::HashTable;

use super::Value;

/// The number of entries from which a dict keeps a hash index beside its entries. Below it a
/// lookup compares at most this many short keys, which costs less than hashing one.
pub const INDEXED_FROM: usize = 16;

/// A dict key: a string of 16 bytes, holding up to 15 bytes of text inline and a longer text
/// in a heap block its clones share (see the module documentation). It reads as a `&str`
/// (through `Deref`, `AsRef` and `Borrow`), and is made from a `&str`, a `String` or a
/// `Cow<str>`, which a text of up to 15 bytes does without allocating.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(EcoString);

impl Key {
    /// The key's text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl Deref for Key {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Debug for Key {
    /// As a string: `"key"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key(EcoString::from(s))
    }
}

impl From<&String> for Key {
    fn from(s: &String) -> Key {
        Key(EcoString::from(s.as_str()))
    }
}

impl From<String> for Key {
    /// Copies a text of more than 15 bytes into a block of the key's own (and frees the
    /// string's).
    fn from(s: String) -> Key {
        Key(EcoString::from(s.as_str()))
    }
}

impl From<Cow<'_, str>> for Key {
    fn from(s: Cow<'_, str>) -> Key {
        Key(EcoString::from(&*s))
    }
}

impl From<&Key> for Key {
    fn from(k: &Key) -> Key {
        k.clone()
    }
}

impl From<Key> for String {
    fn from(k: Key) -> String {
        k.as_str().to_owned()
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Key {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Key {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

/// An insertion-ordered map from strings to `V` (by default a [`Value`]): Python's `dict` with
/// string keys (see the module documentation).
#[derive(Clone)]
pub struct Dict<V = Value> {
    entries: Vec<(Key, V)>,
    /// Present once the dict has held [`INDEXED_FROM`] entries.
    index: Option<Box<Index>>,
}

/// The hash index of a large dict: entry positions, hashed by their key.
#[derive(Clone)]
struct Index {
    table: HashTable<usize>,
    hasher: RandomState,
}

impl Index {
    fn hash(&self, key: &str) -> u64 {
        self.hasher.hash_one(key)
    }

    /// An index of `entries`, with room for `capacity` of them.
    fn of<V>(entries: &[(Key, V)], capacity: usize) -> Index {
        let mut index = Index {
            table: HashTable::with_capacity(capacity.max(entries.len())),
            hasher: RandomState::new(),
        };
        for (i, (k, _)) in entries.iter().enumerate() {
            let hash = index.hash(k);
            // Room was reserved above, so the rehash closure is never called.
            index.table.insert_unique(hash, i, |_| hash);
        }
        index
    }
}

/// Iterator types, named so that they can appear in trait implementations.
type Pair<V> = (Key, V);
/// The entries, by reference.
pub type Iter<'a, V = Value> =
    std::iter::Map<std::slice::Iter<'a, Pair<V>>, fn(&'a Pair<V>) -> (&'a str, &'a V)>;
/// The entries, with their values mutable.
pub type IterMut<'a, V = Value> =
    std::iter::Map<std::slice::IterMut<'a, Pair<V>>, fn(&'a mut Pair<V>) -> (&'a str, &'a mut V)>;
/// The keys.
pub type Keys<'a, V = Value> =
    std::iter::Map<std::slice::Iter<'a, Pair<V>>, fn(&'a Pair<V>) -> &'a str>;
/// The values.
pub type Values<'a, V = Value> =
    std::iter::Map<std::slice::Iter<'a, Pair<V>>, fn(&'a Pair<V>) -> &'a V>;
/// The values, mutable.
pub type ValuesMut<'a, V = Value> =
    std::iter::Map<std::slice::IterMut<'a, Pair<V>>, fn(&'a mut Pair<V>) -> &'a mut V>;

impl<V> Dict<V> {
    /// An empty dict (allocates nothing).
    pub const fn new() -> Dict<V> {
        Dict {
            entries: Vec::new(),
            index: None,
        }
    }

    /// An empty dict with room for `capacity` entries.
    pub fn with_capacity(capacity: usize) -> Dict<V> {
        Dict {
            entries: Vec::with_capacity(capacity),
            index: None,
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many entries fit before the entries are reallocated.
    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Frees the room reserved beyond the entries.
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        if let Some(index) = &mut self.index {
            let entries = &self.entries;
            index
                .table
                .shrink_to_fit(|&i| index.hasher.hash_one(entries[i].0.as_str()));
        }
    }

    /// The position of `key` among the entries.
    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            None => self.entries.iter().position(|(k, _)| k.as_str() == key),
            Some(index) => index
                .table
                .find(index.hash(key), |&i| self.entries[i].0.as_str() == key)
                .copied(),
        }
    }

    /// The entry at `index` in insertion order.
    pub fn get_index(&self, index: usize) -> Option<(&str, &V)> {
        self.entries.get(index).map(|(k, v)| (k.as_str(), v))
    }

    /// The value of `key`.
    pub fn get<Q: ?Sized + Borrow<str>>(&self, key: &Q) -> Option<&V> {
        let i = self.position(key.borrow())?;
        Some(&self.entries[i].1)
    }

    /// The value of `key`, mutable.
    pub fn get_mut<Q: ?Sized + Borrow<str>>(&mut self, key: &Q) -> Option<&mut V> {
        let i = self.position(key.borrow())?;
        Some(&mut self.entries[i].1)
    }

    /// Whether `key` has an entry.
    pub fn contains_key<Q: ?Sized + Borrow<str>>(&self, key: &Q) -> bool {
        self.position(key.borrow()).is_some()
    }

    /// Sets `key` to `value`: a new key goes last; an existing one keeps its position and its
    /// old value is returned.
    pub fn insert(&mut self, key: impl Into<Key>, value: V) -> Option<V> {
        self.insert_key(key.into(), value)
    }

    fn insert_key(&mut self, key: Key, value: V) -> Option<V> {
        let Some(index) = &mut self.index else {
            if let Some(i) = self.entries.iter().position(|(k, _)| *k == key) {
                return Some(std::mem::replace(&mut self.entries[i].1, value));
            }
            self.entries.push((key, value));
            if self.entries.len() >= INDEXED_FROM {
                self.index = Some(Box::new(Index::of(&self.entries, self.entries.capacity())));
            }
            return None;
        };
        // The key is hashed once, for the lookup and the insertion.
        let hash = index.hash(&key);
        let entries = &mut self.entries;
        if let Some(&i) = index.table.find(hash, |&i| entries[i].0 == key) {
            return Some(std::mem::replace(&mut entries[i].1, value));
        }
        entries.push((key, value));
        let hasher = &index.hasher;
        index.table.insert_unique(hash, entries.len() - 1, |&i| {
            hasher.hash_one(entries[i].0.as_str())
        });
        None
    }

    /// Removes `key`, keeping the order of the other entries (Python's `del d[key]`), and
    /// returns its value. Linear in the number of entries, like `IndexMap::shift_remove`.
    pub fn shift_remove<Q: ?Sized + Borrow<str>>(&mut self, key: &Q) -> Option<V> {
        let key = key.borrow();
        let i = self.position(key)?;
        if let Some(index) = &mut self.index {
            let hash = index.hash(key);
            if let Ok(found) = index.table.find_entry(hash, |&j| j == i) {
                found.remove();
            }
            // The entries after it move down by one.
            index
                .table
                .iter_mut()
                .filter(|j| **j > i)
                .for_each(|j| *j -= 1);
        }
        Some(self.entries.remove(i).1)
    }

    /// Keeps only the entries for which `keep` returns true, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &mut V) -> bool) {
        let before = self.entries.len();
        self.entries.retain_mut(|(k, v)| keep(k, v));
        if self.entries.len() != before && self.index.is_some() {
            self.index = (self.entries.len() >= INDEXED_FROM)
                .then(|| Box::new(Index::of(&self.entries, self.entries.len())));
        }
    }

    /// The entries in order.
    pub fn iter(&self) -> Iter<'_, V> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The entries in order, with mutable values.
    pub fn iter_mut(&mut self) -> IterMut<'_, V> {
        self.entries.iter_mut().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> Keys<'_, V> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The values in order.
    pub fn values(&self) -> Values<'_, V> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// The values in order, mutable.
    pub fn values_mut(&mut self) -> ValuesMut<'_, V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// The values in order, owned.
    pub fn into_values(self) -> impl DoubleEndedIterator<Item = V> + ExactSizeIterator {
        self.entries.into_iter().map(|(_, v)| v)
    }
}

impl<V> Default for Dict<V> {
    fn default() -> Dict<V> {
        Dict::new()
    }
}

impl<V: fmt::Debug> fmt::Debug for Dict<V> {
    /// As a map: `{"key": value, ...}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: PartialEq> PartialEq for Dict<V> {
    /// The same keys with equal values, in any order (as Python compares dicts).
    fn eq(&self, other: &Dict<V>) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(k, v)| other.get(k).is_some_and(|w| v == w))
    }
}

impl<V, Q: ?Sized + Borrow<str>> std::ops::Index<&Q> for Dict<V> {
    type Output = V;

    /// The value of `key`; panics if there is none (use [`Dict::get`] on untrusted data).
    fn index(&self, key: &Q) -> &V {
        self.get(key).expect("Dict: key not found")
    }
}

impl<V, Q: ?Sized + Borrow<str>> std::ops::IndexMut<&Q> for Dict<V> {
    /// The value of `key`, mutable; panics if there is none.
    fn index_mut(&mut self, key: &Q) -> &mut V {
        self.get_mut(key).expect("Dict: key not found")
    }
}

impl<K: Into<Key>, V> Extend<(K, V)> for Dict<V> {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, items: I) {
        let items = items.into_iter();
        self.entries.reserve(items.size_hint().0);
        for (k, v) in items {
            self.insert_key(k.into(), v);
        }
    }
}

impl<K: Into<Key>, V> FromIterator<(K, V)> for Dict<V> {
    /// The dict of `items` in order (a repeated key keeps its first position and takes the
    /// last value).
    fn from_iter<I: IntoIterator<Item = (K, V)>>(items: I) -> Dict<V> {
        let mut dict = Dict::new();
        dict.extend(items);
        dict.shrink_to_fit();
        dict
    }
}

impl<K: Into<Key>, V, const N: usize> From<[(K, V); N]> for Dict<V> {
    fn from(items: [(K, V); N]) -> Dict<V> {
        Dict::from_iter(items)
    }
}

impl<V> IntoIterator for Dict<V> {
    type Item = (Key, V);
    type IntoIter = std::vec::IntoIter<(Key, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, V> IntoIterator for &'a Dict<V> {
    type Item = (&'a str, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, V> IntoIterator for &'a mut Dict<V> {
    type Item = (&'a str, &'a mut V);
    type IntoIter = IterMut<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(d: &Dict<i64>) -> Vec<&str> {
        d.keys().collect()
    }

    /// Both representations: a small dict (scanned) and one past the index threshold.
    fn sizes() -> [usize; 2] {
        [3, INDEXED_FROM * 4]
    }

    #[test]
    fn a_repeated_key_keeps_its_first_position_and_takes_the_last_value() {
        for n in sizes() {
            let mut d: Dict<i64> = (0..n as i64).map(|i| (format!("k{i}"), i)).collect();
            assert_eq!(d.insert("k1", 100), Some(1));
            assert_eq!(d.len(), n);
            assert_eq!(keys(&d)[1], "k1");
            assert_eq!(d["k1"], 100);
            assert_eq!(d.insert("new", 7), None);
            assert_eq!(keys(&d).last(), Some(&"new"));
            assert_eq!(d.get("new"), Some(&7));
            assert_eq!(d.get("absent"), None);
        }
    }

    #[test]
    fn removal_keeps_the_order_and_the_lookups_of_the_rest() {
        for n in sizes() {
            let mut d: Dict<i64> = (0..n as i64).map(|i| (format!("k{i}"), i)).collect();
            assert_eq!(d.shift_remove("k0"), Some(0));
            assert_eq!(d.shift_remove("k0"), None);
            assert_eq!(keys(&d)[0], "k1");
            for i in 1..n as i64 {
                assert_eq!(d.get(&format!("k{i}")), Some(&i), "k{i} of {n}");
            }
            d.retain(|_, v| *v % 2 == 1);
            assert!(d.values().all(|v| v % 2 == 1));
            for i in (1..n as i64).step_by(2) {
                assert_eq!(d[&format!("k{i}")], i);
            }
            d.insert("k0", 0);
            assert_eq!(keys(&d).last(), Some(&"k0"));
        }
    }

    #[test]
    fn equality_ignores_order_and_debug_prints_a_map() {
        let a: Dict<i64> = [("x", 1), ("y", 2)].into();
        let b: Dict<i64> = [("y", 2), ("x", 1)].into();
        assert_eq!(a, b);
        assert_ne!(a, Dict::from([("x", 1)]));
        assert_eq!(format!("{a:?}"), r#"{"x": 1, "y": 2}"#);
    }

    #[test]
    fn a_large_dict_is_built_in_linear_time() {
        // 200,000 distinct keys, then each once more: quadratic lookups would take minutes.
        let n = 200_000;
        let mut d: Dict<usize> = (0..n).map(|i| (i.to_string(), i)).collect();
        for i in 0..n {
            d.insert(i.to_string(), i + 1);
        }
        assert_eq!(d.len(), n);
        assert_eq!(d.keys().next(), Some("0"));
        assert_eq!(d["199999"], n);
    }

    #[test]
    fn a_small_dict_and_its_clone_hold_exactly_their_entries() {
        let d: Dict<i64> = (0..3).map(|i| (i.to_string(), i)).collect();
        assert_eq!(d.capacity(), 3);
        assert!(d.index.is_none());
        assert_eq!(d.clone().capacity(), 3);
    }

    #[test]
    fn an_entry_is_a_16_byte_key_and_its_value() {
        assert_eq!(size_of::<Key>(), 16);
        assert_eq!(size_of::<(Key, Value)>(), 48);
        // Keys made from a `&str`, a `String` or another key are the same key.
        let mut d: Dict<i64> = Dict::new();
        d.insert("a key longer than fifteen bytes", 1);
        d.insert(String::from("a key longer than fifteen bytes"), 2);
        d.insert(Key::from("short"), 3);
        assert_eq!(keys(&d), ["a key longer than fifteen bytes", "short"]);
        assert_eq!(d["a key longer than fifteen bytes"], 2);
        let (k, v) = d.into_iter().next().expect("an entry");
        assert_eq!(
            (String::from(k), v),
            ("a key longer than fifteen bytes".to_string(), 2)
        );
    }
}
