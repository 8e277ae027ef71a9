//! Background garbage collection of dependency metadata (`params.dependency_gc_period_ns`, off
//! by default): the database learns how far every cache's cut reaches, computes a global floor
//! per key, and every dependency entry at or below the floor is dropped, since every cut (and
//! the database) already covers it. See the module docs, "Dependency garbage collection".
//!
//! Three pieces: the database's [`Collector`] (what every cache covers, the floor and its
//! epochs), the cache's [`KnownFloor`] (the newest floor it has received, complete up to its
//! epoch), and [`prune`], which both use on a dependency list.

use super::version::Deps;
use super::{Epoch, Seq};
use causim_sim::history::Key;
use std::collections::{BTreeMap, BTreeSet};

/// A cache the database has never sent a version of a key (cold caches only): it holds none, and
/// any version it takes in later is at least the database's latest at that moment.
const UNCONSTRAINED: Seq = Seq::MAX;

/// The database's side: per key, a version every cache's cut covers from now on, and the floor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Collector {
    caches: usize,
    /// Pre-warmed caches hold every key from the start (at version 0).
    prewarm: bool,
    /// Per key, per cache: a version the cache's cut covers now and forever after (cuts only
    /// grow): the cache's last report, or the first version the database sent it, or
    /// `UNCONSTRAINED`. Keys absent here: 0 for every cache (pre-warmed) or unconstrained.
    covers: BTreeMap<Key, Vec<Seq>>,
    /// The floor of each key and the epoch at which it last rose (absent: 0, never).
    floor: BTreeMap<Key, (Seq, Epoch)>,
    epoch: Epoch,
    /// Keys whose floor may rise at the next round.
    dirty: BTreeSet<Key>,
    /// The keys whose floor rose at each epoch, kept while some cache may not know it.
    history: BTreeMap<Epoch, Vec<Key>>,
    /// Per cache, the newest epoch it reported knowing.
    known: Vec<Epoch>,
}

impl Collector {
    pub fn new(caches: usize, prewarm: bool) -> Collector {
        Collector {
            caches,
            prewarm,
            covers: BTreeMap::new(),
            floor: BTreeMap::new(),
            epoch: 0,
            dirty: BTreeSet::new(),
            history: BTreeMap::new(),
            known: vec![0; caches],
        }
    }

    /// The current floor of `key` (0 if it never rose).
    pub fn floor(&self, key: Key) -> Seq {
        self.floor.get(&key).map_or(0, |f| f.0)
    }

    fn covers_of(&mut self, key: Key) -> &mut Vec<Seq> {
        let (caches, initial) = (self.caches, if self.prewarm { 0 } else { UNCONSTRAINED });
        self.covers.entry(key).or_insert_with(|| vec![initial; caches])
    }

    /// Cache `cache` reports the versions its cut covers for the keys that changed since its
    /// last report, and the newest floor epoch it knows.
    pub fn report(&mut self, cache: usize, known: Epoch, changes: &[(Key, Seq)]) {
        self.known[cache] = self.known[cache].max(known);
        for &(k, s) in changes {
            let c = &mut self.covers_of(k)[cache];
            // Reports may arrive out of order: each is a lower bound, so keep the larger.
            *c = if *c == UNCONSTRAINED { s } else { (*c).max(s) };
            self.dirty.insert(k);
        }
    }

    /// The database sent `cache` version `seq` of `key`. A cold cache holds only versions it was
    /// sent, so the first one bounds everything it will ever hold.
    pub fn sent(&mut self, cache: usize, key: Key, seq: Seq) {
        if self.prewarm {
            return;
        }
        let c = &mut self.covers_of(key)[cache];
        if *c == UNCONSTRAINED {
            *c = seq;
            self.dirty.insert(key);
        }
    }

    /// A new version of `key` was stored: a key no cache was sent follows the latest version.
    pub fn written(&mut self, key: Key) {
        if !self.prewarm {
            self.dirty.insert(key);
        }
    }

    /// One round: the floor of each key that may have changed is the least version the caches
    /// cover (the database's latest, `latest`, if none was ever sent the key). Returns the new
    /// epoch.
    pub fn round(&mut self, latest: impl Fn(Key) -> Seq) -> Epoch {
        self.epoch += 1;
        let mut rose = Vec::new();
        for k in std::mem::take(&mut self.dirty) {
            let covered = match self.covers.get(&k) {
                None if self.prewarm => 0,
                None => latest(k),
                Some(c) => match c.iter().copied().filter(|&s| s != UNCONSTRAINED).min() {
                    Some(least) => least,
                    None => latest(k),
                },
            };
            // Covers only rise, and a cache first constrained is sent the latest version, at
            // least any earlier floor: the floor never falls.
            let old = self.floor(k);
            debug_assert!(covered >= old, "the floor of key {k} fell from {old} to {covered}");
            if covered > old {
                self.floor.insert(k, (covered, self.epoch));
                rose.push(k);
            }
        }
        if !rose.is_empty() {
            self.history.insert(self.epoch, rose);
        }
        // Every cache knows the epochs up to the oldest any reported: those deltas are done.
        let oldest = self.known.iter().copied().min().unwrap_or(0);
        self.history = self.history.split_off(&(oldest + 1));
        self.epoch
    }

    /// What `cache` needs to know the current floor: the epoch it reported knowing, and the
    /// current floor of every key that rose since.
    pub fn delta_for(&self, cache: usize) -> (Epoch, Vec<(Key, Seq)>) {
        let from = self.known[cache];
        let keys: BTreeSet<Key> = self.history.range(from + 1..).flat_map(|(_, ks)| ks.iter().copied()).collect();
        (from, keys.into_iter().map(|k| (k, self.floor(k))).collect())
    }

    /// Drops the entries of `deps` at or below the floor (see [`prune`]).
    pub fn prune(&self, deps: &Deps) -> Option<Deps> {
        prune(deps, |k| self.floor.get(&k).copied())
    }
}

/// Drops the entries of `deps` that `floor` (key → floor and the epoch it rose at) covers; the
/// result is marked with the newest epoch whose floor a dropped entry needed. `None` if none
/// is dropped.
pub fn prune(deps: &Deps, floor: impl Fn(Key) -> Option<(Seq, Epoch)>) -> Option<Deps> {
    let mut epoch = deps.pruned_epoch();
    let mut kept = Vec::new();
    let mut dropped = false;
    for (i, &(k, s)) in deps.iter().enumerate() {
        let (f, rose_at) = floor(k).unwrap_or((0, 0));
        if s <= f {
            if !dropped {
                kept.extend_from_slice(&deps.0[..i]);
                dropped = true;
            }
            epoch = epoch.max(rose_at);
        } else if dropped {
            kept.push((k, s));
        }
    }
    dropped.then(|| Deps::from_sorted(kept).pruned_at(epoch))
}

/// A cache's side: the newest floor it has received, complete for every epoch up to `epoch`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KnownFloor {
    epoch: Epoch,
    floor: BTreeMap<Key, Seq>,
}

impl KnownFloor {
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// Applies the database's delta from epoch `from` to `to`; false if it is stale. The
    /// database sends the floor of every key that rose after the epoch this cache reported
    /// knowing, so `from` is never newer than ours and the result is the whole floor at `to`.
    pub fn apply(&mut self, from: Epoch, to: Epoch, changes: &[(Key, Seq)]) -> bool {
        if to <= self.epoch || from > self.epoch {
            return false;
        }
        for &(k, s) in changes {
            let f = self.floor.entry(k).or_insert(0);
            *f = (*f).max(s);
        }
        self.epoch = to;
        true
    }

    /// The epoch a read of `key` at version `seq` is served under: the newest this cache knows
    /// if the version is at least its floor (always so for a version of the cut, which covers
    /// the floor), else 0 (no floor), which makes the reader abort if it also reads a version
    /// pruned at any epoch.
    pub fn served_epoch(&self, key: Key, seq: Seq) -> Epoch {
        if seq >= self.floor.get(&key).copied().unwrap_or(0) { self.epoch } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(v: &[(Key, Seq)]) -> Deps {
        Deps::from_sorted(v.to_vec())
    }

    #[test]
    fn the_floor_is_the_least_version_any_cache_covers() {
        let mut c = Collector::new(3, true);
        c.report(0, 0, &[(1, 5), (2, 3)]);
        c.report(1, 0, &[(1, 4), (2, 3)]);
        c.round(|_| 9);
        // Cache 2 never reported: a pre-warmed cache holds key 1 at version 0.
        assert_eq!((c.floor(1), c.floor(2)), (0, 0));
        c.report(2, 1, &[(1, 6), (2, 2)]);
        assert_eq!(c.round(|_| 9), 2);
        assert_eq!((c.floor(1), c.floor(2)), (4, 2));
        // A late, older report does not lower what a cache covers.
        c.report(1, 1, &[(1, 2)]);
        c.report(1, 2, &[(1, 7)]);
        c.round(|_| 9);
        assert_eq!(c.floor(1), 5);
        assert_eq!(c.floor.get(&1), Some(&(5, 3)), "rose at epoch 3");
    }

    #[test]
    fn a_key_no_cold_cache_was_sent_follows_the_latest_version_and_a_first_send_bounds_it() {
        let mut c = Collector::new(2, false);
        c.written(7);
        c.round(|_| 4);
        assert_eq!(c.floor(7), 4, "no cache holds key 7");
        // Cache 0 is sent version 5; it may merge it only after the next round.
        c.sent(0, 7, 5);
        c.written(7);
        c.round(|_| 6);
        assert_eq!(c.floor(7), 5, "the first version sent bounds cache 0, cache 1 holds none");
        c.report(0, 2, &[(7, 6)]);
        c.sent(1, 7, 6);
        c.round(|_| 6);
        assert_eq!(c.floor(7), 6);
    }

    #[test]
    fn a_cache_gets_every_key_that_rose_since_the_epoch_it_reported() {
        let mut c = Collector::new(2, true);
        c.report(0, 0, &[(1, 1)]);
        c.report(1, 0, &[(1, 1)]);
        c.round(|_| 0);
        c.report(0, 1, &[(2, 1)]);
        c.report(1, 0, &[(2, 1)]); // cache 1 missed epoch 1's delta
        c.round(|_| 0);
        assert_eq!(c.delta_for(0), (1, vec![(2, 1)]));
        assert_eq!(c.delta_for(1), (0, vec![(1, 1), (2, 1)]));
        let mut known = KnownFloor::default();
        let (from, changes) = c.delta_for(1);
        assert!(known.apply(from, 2, &changes));
        assert!(!known.apply(1, 2, &[]), "stale");
        assert_eq!(known.epoch(), 2);
        assert_eq!((known.served_epoch(1, 1), known.served_epoch(1, 0)), (2, 0));
    }

    #[test]
    fn pruning_drops_covered_entries_and_marks_the_epoch_their_floor_rose_at() {
        let floor = |k: Key| match k {
            1 => Some((3, 2)),
            2 => Some((9, 4)),
            _ => None,
        };
        let pruned = prune(&deps(&[(1, 3), (2, 10), (3, 1)]), floor).expect("drops key 1");
        assert_eq!(pruned.iter().copied().collect::<Vec<_>>(), vec![(2, 10), (3, 1)]);
        assert_eq!(pruned.pruned_epoch(), 2);
        assert_eq!(prune(&pruned, floor), None, "nothing more to drop");
        let pruned = prune(&deps(&[(1, 4), (2, 9)]).pruned_at(3), floor).expect("drops key 2");
        assert_eq!((pruned.len(), pruned.pruned_epoch()), (1, 4));
    }
}
