//! [`InternedMap`]: a pod's labels or annotations as the cache keeps them.
//!
//! Pods of one workload carry the same keys and mostly the same values. A `BTreeMap<String, String>`
//! allocates a 544 B node for up to 11 entries, and every key and value again, per pod. Here each text is
//! stored once per process ([`internment::ArcIntern`], freed with its last holder) and a map is one boxed
//! slice of pointer pairs, sorted by key: 32 B per entry.

use std::{collections::BTreeMap, fmt};

use internment::ArcIntern;
use serde::{
    Deserialize, Deserializer, Serialize, Serializer,
    de::{MapAccess, Visitor},
};

/// A string shared by every holder of the same text.
pub type Interned = ArcIntern<str>;

/// A string-to-string map with interned keys and values, sorted by key (the order a `BTreeMap` has).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct InternedMap(Box<[(Interned, Interned)]>);

impl InternedMap {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i: usize| &*self.0[i].1)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries, sorted by key.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + Clone {
        self.0.iter().map(|(k, v)| (&**k, &**v))
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Sets `key` to `value`, as `BTreeMap::insert` does (the map is rebuilt: for tests and rare writes).
    pub fn insert(&mut self, key: String, value: String) {
        let mut entries = std::mem::take(&mut self.0).into_vec();
        let value = Interned::from(value.as_str());
        match entries.binary_search_by(|(k, _)| (**k).cmp(&key)) {
            Ok(i) => entries[i].1 = value,
            Err(i) => entries.insert(i, (Interned::from(key.as_str()), value)),
        }
        self.0 = entries.into_boxed_slice();
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Interned> {
        let mut entries = std::mem::take(&mut self.0).into_vec();
        let removed = entries
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| entries.remove(i).1);
        self.0 = entries.into_boxed_slice();
        removed
    }

    /// The entries as Kubernetes' own type; `None` when there is none (as an absent field decodes).
    pub fn to_btree_map(&self) -> Option<BTreeMap<String, String>> {
        (!self.is_empty()).then(|| self.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect())
    }
}

/// Later entries win over earlier ones with the same key, as in a `BTreeMap`.
impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for InternedMap {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        Self::from_entries(
            entries
                .into_iter()
                .map(|(k, v)| (Interned::from(k.as_ref()), Interned::from(v.as_ref())))
                .collect(),
        )
    }
}

impl InternedMap {
    /// Sorts `entries` by key; of equal keys the last one stays.
    fn from_entries(mut entries: Vec<(Interned, Interned)>) -> Self {
        entries.reverse();
        // A stable sort keeps the last of equal keys first; `dedup_by` keeps the first of each run.
        entries.sort_by(|(a, _), (b, _)| str::cmp(a, b));
        entries.dedup_by(|later, first| *later.0 == *first.0);
        Self(entries.into_boxed_slice())
    }
}

impl From<Option<BTreeMap<String, String>>> for InternedMap {
    fn from(map: Option<BTreeMap<String, String>>) -> Self {
        map.unwrap_or_default().into_iter().collect()
    }
}

impl fmt::Debug for InternedMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for InternedMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// Reads a JSON object of strings, or `null` (no entry).
impl<'de> Deserialize<'de> for InternedMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = InternedMap;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of strings to strings, or null")
            }

            fn visit_unit<E>(self) -> Result<InternedMap, E> {
                Ok(InternedMap::default())
            }

            fn visit_none<E>(self) -> Result<InternedMap, E> {
                Ok(InternedMap::default())
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<InternedMap, D::Error> {
                d.deserialize_map(self)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<InternedMap, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((Text(k), Text(v))) = map.next_entry()? {
                    entries.push((k, v));
                }
                Ok(InternedMap::from_entries(entries))
            }
        }
        d.deserialize_option(Entries)
    }
}

/// One key or value, interned straight from the decoder's text.
struct Text(Interned);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Str;
        impl Visitor<'_> for Str {
            type Value = Text;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E>(self, s: &str) -> Result<Text, E> {
                Ok(Text(Interned::from(s)))
            }
        }
        d.deserialize_str(Str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_and_writes_a_json_object_in_key_order() {
        let map: InternedMap = serde_json::from_value(json!({"b": "2", "a": "1"})).unwrap();
        assert_eq!(map.get("a"), Some("1"));
        assert_eq!(map.get("b"), Some("2"));
        assert_eq!(map.get("c"), None);
        assert_eq!(serde_json::to_string(&map).unwrap(), r#"{"a":"1","b":"2"}"#);
    }

    #[test]
    fn null_is_empty_and_a_non_string_value_is_an_error() {
        let map: InternedMap = serde_json::from_value(json!(null)).unwrap();
        assert!(map.is_empty());
        assert_eq!(map.to_btree_map(), None);
        assert!(serde_json::from_value::<InternedMap>(json!({"a": 1})).is_err());
    }

    #[test]
    fn the_last_of_equal_keys_wins_as_in_a_btree_map() {
        let map: InternedMap = [("k", "first"), ("a", "x"), ("k", "last")].into_iter().collect();
        assert_eq!(map.len(), 2);
        assert_eq!(map.get("k"), Some("last"));
        let from_json: InternedMap = serde_json::from_str(r#"{"k":"first","k":"last"}"#).unwrap();
        assert_eq!(from_json.get("k"), Some("last"));
    }

    #[test]
    fn insert_and_remove_keep_the_key_order() {
        let mut map: InternedMap = [("b", "2")].into_iter().collect();
        map.insert("c".into(), "3".into());
        map.insert("a".into(), "1".into());
        map.insert("b".into(), "two".into());
        assert_eq!(
            serde_json::to_string(&map).unwrap(),
            r#"{"a":"1","b":"two","c":"3"}"#
        );
        assert_eq!(map.remove("b").as_deref(), Some("two"));
        assert_eq!(map.remove("b"), None);
        assert_eq!(map.iter().collect::<Vec<_>>(), [("a", "1"), ("c", "3")]);
    }

    #[test]
    fn equal_texts_share_one_allocation() {
        let a: InternedMap = [("app", "web")].into_iter().collect();
        let b: InternedMap = serde_json::from_value(json!({"app": "web"})).unwrap();
        assert!(std::ptr::eq(a.get("app").unwrap(), b.get("app").unwrap()));
        assert_eq!(a, b);
    }
}
