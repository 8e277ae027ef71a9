//! Least-recently-used order over keys: the LRU of the caches (Redis with LRU in the paper,
//! §7.1) and of the CM's dependency index (§4.1 "Evicting an entry").

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Recency<K: Ord> {
    tick: u64,
    at: BTreeMap<K, u64>,
    order: BTreeMap<u64, K>,
}

impl<K: Ord> Default for Recency<K> {
    fn default() -> Self {
        Recency { tick: 0, at: BTreeMap::new(), order: BTreeMap::new() }
    }
}

impl<K: Ord + Copy> Recency<K> {
    /// `k` was just used.
    pub fn touch(&mut self, k: K) {
        if let Some(t) = self.at.insert(k, self.tick) {
            self.order.remove(&t);
        }
        self.order.insert(self.tick, k);
        self.tick += 1;
    }

    pub fn forget(&mut self, k: &K) {
        if let Some(t) = self.at.remove(k) {
            self.order.remove(&t);
        }
    }

    /// The least recently used key.
    pub fn oldest(&self) -> Option<K> {
        self.order.values().next().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_is_the_least_recently_touched() {
        let mut r = Recency::default();
        for k in [1, 2, 3] {
            r.touch(k);
        }
        r.touch(1);
        assert_eq!(r.oldest(), Some(2));
        r.forget(&2);
        assert_eq!(r.oldest(), Some(3));
        r.forget(&3);
        r.forget(&1);
        assert_eq!(r.oldest(), None);
    }
}
