//! Least-recently-used order over keys, for caches with a bounded number of entries (FaaSTCC
//! §6.7, Fig. 9: "We use a LRU policy to replace cache entries"). Deterministic: uses are
//! numbered by a counter and kept in ordered maps, so the victim depends only on the order of
//! the calls.

use causim_sim::error::FieldError;
use causim_sim::history::Key;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The use order of the keys a cache holds (FaaSTCC's and HydroCache's bounded caches, and
/// MuCache's caches and dependency index).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lru<K: Ord = Key> {
    next_use: u64,
    /// Use number → key; the first entry is the least recently used.
    by_use: BTreeMap<u64, K>,
    last_use: BTreeMap<K, u64>,
}

impl<K: Ord> Default for Lru<K> {
    fn default() -> Self {
        Lru { next_use: 0, by_use: BTreeMap::new(), last_use: BTreeMap::new() }
    }
}

impl<K: Ord + Copy> Lru<K> {
    /// `key` was just read or installed.
    pub fn touch(&mut self, key: K) {
        if let Some(old) = self.last_use.insert(key, self.next_use) {
            self.by_use.remove(&old);
        }
        self.by_use.insert(self.next_use, key);
        self.next_use += 1;
    }

    /// `key` left the cache.
    pub fn remove(&mut self, key: &K) {
        if let Some(old) = self.last_use.remove(key) {
            self.by_use.remove(&old);
        }
    }

    /// The least recently used key.
    pub fn oldest(&self) -> Option<K> {
        self.by_use.values().next().copied()
    }

    /// Removes and returns the least recently used key.
    pub fn pop_oldest(&mut self) -> Option<K> {
        let (_, key) = self.by_use.pop_first()?;
        self.last_use.remove(&key);
        Some(key)
    }

    pub fn is_empty(&self) -> bool {
        self.last_use.is_empty()
    }
}

/// `params.cache_capacity_keys` with `params.prewarm`: a pre-warmed cache holds every key, so
/// a bounded one must start cold.
pub fn check_cold(capacity: Option<u32>, prewarm: bool) -> Result<(), FieldError> {
    match capacity {
        Some(c) if prewarm => Err(FieldError::new(
            "cache_capacity_keys",
            format!("a bounded cache ({c} keys) starts cold: set \"prewarm\": false (a pre-warmed cache holds every key)"),
        )),
        _ => Ok(()),
    }
}

/// The fuzzer's capacity draw: unbounded 70 % of the time, else 0 (cache disabled) to 5 keys
/// (its cases use 8 keys, so evictions are frequent).
pub fn fuzz_capacity() -> BoxedStrategy<Option<u32>> {
    prop::option::weighted(0.3, 0u32..6).boxed()
}

/// Applies a drawn capacity to fuzzed `params`: a bounded cache starts cold.
pub fn set_fuzz_capacity(params: &mut serde_json::Value, capacity: Option<u32>) {
    if let Some(c) = capacity {
        params["cache_capacity_keys"] = serde_json::json!(c);
        params["prewarm"] = serde_json::json!(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_victim_is_the_key_used_longest_ago() {
        let mut lru: Lru = Lru::default();
        for k in [1, 2, 3] {
            lru.touch(k);
        }
        lru.touch(1);
        assert_eq!(lru.pop_oldest(), Some(2));
        lru.remove(&3);
        assert_eq!(lru.oldest(), Some(1));
        assert_eq!(lru.pop_oldest(), Some(1));
        assert_eq!(lru.pop_oldest(), None);
        assert!(lru.is_empty());
    }
}
