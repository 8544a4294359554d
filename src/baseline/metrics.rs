//! A kernel's metrics in a baseline, by name: a map that holds just its
//! entries, sorted, in one allocation. A baseline of 100,000 kernels holds
//! 100,000 of these while a check compares; a `BTreeMap` of six metrics
//! takes room for eleven (2.3 KB a kernel, where six entries take 1.2 KB).
//! Written and read as the JSON object a `BTreeMap` is. The metric names
//! and units read are shared between kernels (see [`interned`]).

use super::MetricEntry;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

/// Metric name → its statistics, sorted by name.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct MetricMap(Vec<(Arc<str>, MetricEntry)>);

/// The most names and units [`interned`] keeps: a baseline has a handful;
/// a hostile one with more gets a copy of each past these.
const INTERNED_MOST: usize = 4096;

/// `text`, one copy shared by every kernel that names it: the 100,000
/// kernels of a baseline share a handful of metric names and units, which
/// one `String` each made a fifth of its memory. Per thread, as serde
/// gives no state to share while it reads.
pub(crate) fn interned(text: &str) -> Arc<str> {
    thread_local! {
        static SEEN: RefCell<HashSet<Arc<str>>> = RefCell::new(HashSet::new());
    }
    SEEN.with_borrow_mut(|seen| {
        if let Some(shared) = seen.get(text) {
            return Arc::clone(shared);
        }
        let shared: Arc<str> = Arc::from(text);
        if seen.len() < INTERNED_MOST {
            seen.insert(Arc::clone(&shared));
        }
        shared
    })
}

/// Reads a string as [`interned`] shares it.
pub(crate) fn read_interned<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Arc<str>, D::Error> {
    let text = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
    Ok(interned(&text))
}

impl MetricMap {
    fn find(&self, metric: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(name, _)| (**name).cmp(metric))
    }

    pub(crate) fn get(&self, metric: &str) -> Option<&MetricEntry> {
        self.find(metric).ok().map(|i| &self.0[i].1)
    }

    pub(crate) fn contains_key(&self, metric: &str) -> bool {
        self.find(metric).is_ok()
    }

    #[cfg(test)]
    /// Adds or replaces `metric`'s entry; the entry it replaced.
    pub(crate) fn insert(&mut self, metric: String, entry: MetricEntry) -> Option<MetricEntry> {
        match self.find(&metric) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, entry)),
            Err(i) => {
                self.0.insert(i, (interned(&metric), entry));
                None
            }
        }
    }

    /// The metric names, sorted.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(name, _)| &**name)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// From entries in any order; of two with one name, the last (as a map's insert keeps it).
    fn sorted(mut entries: Vec<(Arc<str>, MetricEntry)>) -> MetricMap {
        entries.reverse();
        // Stable: of equal names the last given is now first, and kept.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries.dedup_by(|later, first| later.0 == first.0);
        entries.shrink_to_fit();
        MetricMap(entries)
    }
}

impl FromIterator<(String, MetricEntry)> for MetricMap {
    fn from_iter<I: IntoIterator<Item = (String, MetricEntry)>>(entries: I) -> MetricMap {
        let entries = entries.into_iter();
        MetricMap::sorted(entries.map(|(name, e)| (interned(&name), e)).collect())
    }
}

impl<'a> IntoIterator for &'a MetricMap {
    type Item = (&'a str, &'a MetricEntry);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Arc<str>, MetricEntry)>,
        fn(&'a (Arc<str>, MetricEntry)) -> (&'a str, &'a MetricEntry),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(name, entry)| (&**name, entry))
    }
}

impl Serialize for MetricMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, entry) in &self.0 {
            map.serialize_entry(&**name, entry)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for MetricMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<MetricMap, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = MetricMap;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetricMap, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
                while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let entry = map.next_value::<MetricEntry>()?;
                    entries.push((interned(&name), entry));
                }
                Ok(MetricMap::sorted(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::Stats;
    use std::collections::BTreeMap;

    fn entry(unit: &str) -> MetricEntry {
        let s = Stats::of(&[1.0, 2.0]).unwrap_or_else(|| panic!("stats"));
        MetricEntry {
            unit: unit.into(),
            sum: s,
            mean: s,
            max: s,
            min: s,
        }
    }

    #[test]
    fn reads_and_writes_as_a_btreemap_does() {
        let text = r#"{"b": X, "a": Y, "c": X, "a": X}"#
            .replace(
                'X',
                &serde_json::to_string(&entry("ns")).unwrap_or_default(),
            )
            .replace(
                'Y',
                &serde_json::to_string(&entry("inst")).unwrap_or_default(),
            );
        let map: MetricMap = serde_json::from_str(&text).unwrap_or_default();
        let tree: BTreeMap<String, MetricEntry> = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(map.len(), 3);
        assert_eq!(
            serde_json::to_string_pretty(&map).ok(),
            serde_json::to_string_pretty(&tree).ok()
        );
        assert_eq!(map.get("a"), tree.get("a"));
        assert!(map.contains_key("c") && !map.contains_key("d"));
        let keys: Vec<&str> = map.keys().collect();
        assert_eq!(keys, tree.keys().map(String::as_str).collect::<Vec<_>>());
        let mut built = MetricMap::default();
        for (k, v) in &tree {
            assert!(built.insert(k.clone(), v.clone()).is_none());
        }
        assert_eq!(built, map);
        assert_eq!(built.insert("a".into(), entry("x")), tree.get("a").cloned());
    }

    #[test]
    fn kernels_read_share_one_copy_of_each_name_and_unit() {
        let text = format!(
            r#"[{{"m": {e}}}, {{"m": {e}}}]"#,
            e = serde_json::to_string(&entry("ns")).unwrap_or_default()
        );
        let maps: Vec<MetricMap> = serde_json::from_str(&text).unwrap_or_default();
        let [a, b] = &maps[..] else {
            panic!("two maps: {maps:?}")
        };
        assert!(Arc::ptr_eq(&a.0[0].0, &b.0[0].0), "one name");
        assert!(Arc::ptr_eq(&a.0[0].1.unit, &b.0[0].1.unit), "one unit");
        assert_eq!(
            serde_json::to_string(&maps).ok().as_deref(),
            Some(&*text.replace(' ', ""))
        );
    }
}
