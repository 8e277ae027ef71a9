//! The dual cache (§4): the C-cache that reads see and the I-cache where writes wait.
//!
//! - The **C-cache** holds, per key, the visible version; CausalMesh-TCC keeps the last
//!   `ring_size` versions per key in a ring buffer (§7). Entries keep their dependencies as
//!   ghost state for the cut invariant (Definition 1); only CausalMesh-TCC counts them as
//!   metadata, as the paper does (§9.3).
//! - The **I-cache** holds, per key, versions not yet known to be on every server.
//! - **Integration** (Fig. 3) moves the exact versions a set of dependencies names — and,
//!   transitively, the versions those depend on — from the I-cache into the C-cache, so the
//!   C-cache stays a strict causal cut. A dependency that is not in the I-cache has been
//!   merged already if the C-cache covers it (every version anyone depends on is present on
//!   every server by then: the chains guarantee it); otherwise it is *missing*.
//! - **Eviction** (§11) drops the value of a key and of every key whose C-cache version
//!   depends on it. The entry stays, cold, with its VC and deps, so the cut never changes; a
//!   read of a cold key fetches that exact version's value from the database first.

use super::icache::ICache;
use super::recent::RecentWrites;
use super::vc::{Deps, Vc, Version};
use crate::derived::Derived;
use causim_sim::history::{Key, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How many merged versions per key are remembered: to drop copies that arrive again, and for
/// CausalMesh-TCC's read validation (see `Server::tcc_choose`).
pub const RECENTLY_MERGED_MAX: usize = 256;

static NO_DEPS: Deps = Deps::new();

/// Behaviour switches of the dual cache (the mutants that live here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheRules {
    /// Integration follows dependencies of dependencies (correct) or only the given ones.
    pub transitive: bool,
    /// Integration pulls every I-cache version whose VC is ≤ a dependency, as the authors'
    /// code and TLA+ do (the `integrate_by_vc_dominance` mutant), instead of exact versions.
    pub by_dominance: bool,
    /// Eviction also evicts dependents (correct) or only the key.
    pub evict_dependents: bool,
    /// Versions kept per key in the C-cache (1 for CausalMesh).
    pub ring_size: usize,
    /// Keys the C-cache may hold before evicting; `None` never evicts.
    pub keys_max: Option<usize>,
    /// A key never cached is at its initial state (the evaluation's pre-warmed caches).
    pub prewarmed: bool,
    /// Remember the own dependencies of each write that leaves the I-cache (CausalMesh-TCC's
    /// read validation walks them; a merged C-cache entry only keeps their union).
    pub keep_write_deps: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DualCache {
    servers: usize,
    /// The initial state of every key, for keys the C-cache has never held.
    initial: Version,
    rules: CacheRules,
    // C-cache: per key, versions oldest → newest.
    c: BTreeMap<Key, VecDeque<Version>>,
    /// I-cache: per key, versions waiting to be integrated, with their size in bytes (also as
    /// the authors' artifact counts it).
    i: ICache,
    /// Per key, the last versions that left the I-cache (merged into the C-cache, or dropped
    /// as covered), so a copy that arrives again (a carried write re-sent with each of its
    /// writer's writes) is not kept twice.
    merged: BTreeMap<Key, RecentWrites<Vc>>,
    /// With `keep_write_deps`: per key, the own dependencies of the last writes that left the
    /// I-cache (as many as `merged` remembers).
    write_deps: BTreeMap<Key, RecentWrites<(Vc, Deps)>>,
    /// Keys whose newest C-cache version was installed as it arrived, so its deps may still
    /// hold entries another of them dominates; every other newest version's deps are already
    /// pruned to their maxima, and a merge into it need only look at the incoming keys.
    unpruned: Derived<BTreeSet<Key>>,
    /// CausalMesh without eviction: per key, the keys whose visible version still has an
    /// uncovered (ghost) dependency on it (see `settle_ghost_deps`).
    ghost_waiting: BTreeMap<Key, BTreeSet<Key>>,
    // Eviction bookkeeping (only when `keys_max` is set).
    /// Keys whose value was evicted: the entry (VC, winner, deps) stays, the value must be
    /// fetched from the database before a read can show it.
    cold: BTreeSet<Key>,
    dependents: BTreeMap<Key, BTreeSet<Key>>,
    lru: BTreeSet<(u64, Key)>,
    last_use: BTreeMap<Key, u64>,
    tick: u64,
}

/// What one integration did, for traces and metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Integrated {
    /// Versions moved from the I-cache into the C-cache, as (key, VC).
    pub moved: Vec<(Key, Vc)>,
    /// Dependencies that could be found neither in the C-cache nor in the I-cache.
    pub missing: Vec<(Key, Vc)>,
    /// Keys evicted to make room.
    pub evicted: Vec<Key>,
}

impl DualCache {
    pub fn new(servers: usize, rules: CacheRules) -> DualCache {
        assert!(rules.ring_size >= 1);
        DualCache {
            servers,
            initial: Version::initial(servers),
            rules,
            c: BTreeMap::new(),
            i: ICache::default(),
            merged: BTreeMap::new(),
            write_deps: BTreeMap::new(),
            unpruned: Derived::default(),
            ghost_waiting: BTreeMap::new(),
            cold: BTreeSet::new(),
            dependents: BTreeMap::new(),
            lru: BTreeSet::new(),
            last_use: BTreeMap::new(),
            tick: 0,
        }
    }

    /// Whether a read of `key` can be answered now (else its value must come from the database).
    pub fn is_cached(&self, key: Key) -> bool {
        !self.cold.contains(&key) && (self.c.contains_key(&key) || self.rules.prewarmed)
    }

    /// The winning write whose value a read of cold `key` must fetch.
    pub fn cold_winner(&self, key: Key) -> Option<Vc> {
        if !self.cold.contains(&key) {
            return None;
        }
        self.c.get(&key).and_then(|r| r.back()).map(|v| v.winner)
    }

    /// The database answered a fetch of a cold key: the value is cached again.
    pub fn warm(&mut self, key: Key, version: &Version) {
        let newest = self.c.get(&key).and_then(|r| r.back());
        if newest.is_some_and(|v| v.winner == version.vc) {
            assert_eq!(newest.map(|v| v.value), Some(version.value), "the database returns the value evicted");
            self.cold.remove(&key);
            self.touch(key);
        }
    }

    /// The keys the C-cache holds an entry for (every other key is at its initial state).
    pub fn cached_keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.c.keys().copied()
    }

    /// The newest visible version of `key` (its initial state if it was never written).
    pub fn visible(&self, key: Key) -> Version {
        match self.c.get(&key).and_then(|v| v.back()) {
            Some(v) => v.clone(),
            None => self.initial.clone(),
        }
    }

    /// The newest visible version of `key` without its dependencies (what a read returns).
    pub fn visible_value(&self, key: Key) -> Version {
        match self.c.get(&key).and_then(|v| v.back()) {
            Some(v) => Version { value: v.value, vc: v.vc, winner: v.winner, deps: Deps::new() },
            None => self.initial.clone(),
        }
    }

    /// The visible versions of `key`, oldest first (CausalMesh-TCC's ring buffer), borrowed:
    /// a TCC read weighs each, and copying their dependencies cost more than the read.
    pub fn visible_versions(&self, key: Key) -> Vec<&Version> {
        match self.c.get(&key) {
            Some(v) => v.iter().collect(),
            None => vec![&self.initial],
        }
    }

    fn visible_vc(&self, key: Key) -> Option<&Vc> {
        self.c.get(&key).and_then(|v| v.back()).map(|v| &v.vc)
    }

    /// True when version `vc` of `key` is in the I-cache.
    fn in_icache(&self, key: Key, vc: &Vc) -> bool {
        self.i.contains(key, vc)
    }

    fn recently_merged(&self, key: Key, vc: &Vc) -> bool {
        self.merged.get(&key).is_some_and(|m| m.contains(vc))
    }

    /// True when the C-cache's version of `key` covers `vc`.
    fn covers(&self, key: Key, vc: &Vc) -> bool {
        vc.is_zero() || self.visible_vc(key).is_some_and(|c| vc.le(c))
    }

    /// Adds a write's version to the I-cache unless this exact version is already here
    /// (Fig. 7 lines 9–11). Being covered by the C-cache is not enough to drop it: what covers
    /// it may be an unrelated version of the key, and this one's dependencies must stay known.
    pub fn add_inconsistent(&mut self, key: Key, version: Version) -> bool {
        if version.vc.is_zero() || self.in_icache(key, &version.vc) || self.recently_merged(key, &version.vc) {
            return false;
        }
        self.i.push(key, version);
        true
    }

    /// Integration (Fig. 3): makes the C-cache hold every version `deps` names and,
    /// transitively (unless the `nearest_deps_only` mutant), every version those depend on.
    pub fn integrate(&mut self, deps: &Deps) -> Integrated {
        let mut result = Integrated::default();
        let mut wanted: BTreeSet<(Key, Vc)> = BTreeSet::new();
        let mut stack: Vec<(Key, Vc)> = deps.iter().cloned().collect();
        while let Some((key, vc)) = stack.pop() {
            if vc.is_zero() || wanted.contains(&(key, vc)) {
                continue;
            }
            if self.rules.by_dominance {
                // Every I-cache version of the key up to the dependency, whatever its relation.
                let dominated: Vec<(Vc, Deps)> = self
                    .i
                    .versions(key)
                    .filter(|v| v.vc.le(&vc) && !wanted.contains(&(key, v.vc)))
                    .map(|v| (v.vc, v.deps.clone()))
                    .collect();
                let found = dominated.iter().any(|(v, _)| *v == vc);
                for (v, deps) in dominated {
                    if self.rules.transitive {
                        stack.extend(deps);
                    }
                    wanted.insert((key, v));
                }
                if !found && !self.covers(key, &vc) && !wanted.iter().any(|(k, v)| *k == key && vc.le(v)) {
                    result.missing.push((key, vc));
                }
                continue;
            }
            match self.i.get(key, &vc) {
                Some(v) => {
                    if self.rules.transitive {
                        stack.extend(v.deps.iter().cloned());
                    }
                    wanted.insert((key, vc));
                }
                None if self.covers(key, &vc) => {}
                None => result.missing.push((key, vc)),
            }
        }
        // Move the wanted versions, key by key, into the C-cache.
        let mut by_key: BTreeMap<Key, Vec<Vc>> = BTreeMap::new();
        for (k, vc) in wanted {
            by_key.entry(k).or_default().push(vc);
        }
        for (key, vcs) in by_key {
            let mut merged: Option<Version> = None;
            let mut own_deps = Vec::new();
            for v in self.i.remove(key, &vcs) {
                if self.rules.keep_write_deps {
                    own_deps.push((v.vc, v.deps.clone()));
                }
                match &mut merged {
                    Some(m) => m.merge(&v),
                    None => merged = Some(v),
                }
            }
            self.remember(key, &vcs, own_deps);
            result.moved.extend(vcs.into_iter().map(|vc| (key, vc)));
            if let Some(m) = merged {
                self.install(key, &m, &mut result);
            }
            self.collect(key);
        }
        result
    }

    /// Drops I-cache versions of `key` that integrating could no longer change: the C-cache
    /// covers them and every dependency they name, their write would not win against the
    /// C-cache's, and none of their dependencies still waits in the I-cache. (The authors' "integrate every version ≤ the dependency" drains such
    /// versions as a side effect; exact integration needs this to keep the I-cache bounded.)
    fn collect(&mut self, key: Key) {
        let winner = self.c.get(&key).and_then(|r| r.back()).map(|v| v.winner);
        let verdicts = self.i.to_examine(key).into_iter().map(|(a, u)| (a, self.blocker(key, u, winner))).collect();
        let dropped = self.i.examined(key, verdicts);
        if dropped.is_empty() {
            return;
        }
        let removed = self.i.remove(key, &dropped);
        let dropped_deps = if self.rules.keep_write_deps { removed.into_iter().map(|u| (u.vc, u.deps)).collect() } else { Vec::new() };
        // A write dropped here was never shown, but it happened: CausalMesh-TCC's read
        // validation must still find it among the writes this server knows.
        self.remember(key, &dropped, dropped_deps);
    }

    /// Whether I-cache version `u` of `key` can go: merging it would change neither the VC nor
    /// the winning write `winner` (a merged VC can cover a version whose write still wins), nor
    /// pull any dependency. `None` when it can; else the key whose change could make it
    /// droppable (its own, or that of the first dependency that holds it back).
    fn blocker(&self, key: Key, u: &Version, winner: Option<Vc>) -> Option<Key> {
        if !(self.covers(key, &u.vc) && winner.is_some_and(|w| u.winner <= w)) {
            return Some(key);
        }
        u.deps.iter().find(|(dk, dv)| !self.covers(*dk, dv) || self.in_icache(*dk, dv)).map(|(dk, _)| *dk)
    }

    /// Records writes of `key` that left the I-cache (merged, or dropped as covered), with
    /// their own dependencies when `keep_write_deps`; the last `RECENTLY_MERGED_MAX` stay.
    fn remember(&mut self, key: Key, vcs: &[Vc], deps: Vec<(Vc, Deps)>) {
        self.merged.entry(key).or_default().extend_bounded(vcs.iter().copied(), RECENTLY_MERGED_MAX);
        if !deps.is_empty() {
            self.write_deps.entry(key).or_default().extend_bounded(deps, RECENTLY_MERGED_MAX);
        }
    }

    /// Puts a version into the C-cache directly (a version fetched from the database on a
    /// miss, after its dependencies were integrated).
    pub fn install_version(&mut self, key: Key, version: &Version) -> Integrated {
        let mut result = Integrated::default();
        self.install(key, version, &mut result);
        result
    }

    /// Merges `version` into the C-cache's newest version of `key`: in place for CausalMesh,
    /// as a new ring entry for CausalMesh-TCC.
    fn install(&mut self, key: Key, version: &Version, _result: &mut Integrated) {
        // Whatever changes here, I-cache versions waiting on this key's C-cache version are
        // examined again.
        self.i.wake(key);
        let servers = self.servers;
        let ring_size = self.rules.ring_size;
        let ring = self.c.entry(key).or_default();
        if ring.is_empty() {
            if ring_size > 1 {
                // The initial state is a version too: a larger ring can still serve an old cut.
                ring.push_back(Version::initial(servers));
            } else {
                ring.push_back(version.clone());
                self.unpruned.insert(key);
                self.settle_ghost_deps(key);
                self.after_install(key, true);
                return;
            }
        }
        let newest = ring.back().expect("not empty");
        if version.vc.le(&newest.vc) && version.winner <= newest.winner {
            return;
        }
        let winner_before = newest.winner;
        // A ring of several versions starts from the initial state, which has no deps, so its
        // newest version's deps are always pruned.
        if ring_size == 1 {
            let newest = ring.back_mut().expect("not empty");
            if self.unpruned.remove(&key) {
                newest.merge(version);
                prune_to_maxima(&mut newest.deps);
            } else {
                newest.merge_keeping_maxima(version);
            }
        } else {
            let mut next = newest.clone();
            next.merge_keeping_maxima(version);
            ring.push_back(next);
            while ring.len() > ring_size {
                ring.pop_front();
            }
        }
        let changed = ring.back().expect("not empty").winner != winner_before;
        self.settle_ghost_deps(key);
        self.after_install(key, changed);
    }

    /// CausalMesh's C-cache keeps deps only as ghost state for the cut invariant (the paper's
    /// C-cache has none); nothing else reads them without eviction or CausalMesh-TCC. Once the
    /// C-cache covers a dependency it stays covered (visible VCs only grow), so covered deps are
    /// dropped: after `key`'s visible version changed, from its own deps and from every version
    /// that waited on `key`. The deps left are exactly the uncovered ones, whatever the order
    /// of installs (a model checker's states stay canonical), and they no longer grow with
    /// every write merged into a hot key.
    fn settle_ghost_deps(&mut self, key: Key) {
        if self.rules.ring_size != 1 || self.rules.keep_write_deps || self.rules.keys_max.is_some() {
            return;
        }
        let waiting = self.ghost_waiting.remove(&key).unwrap_or_default();
        for k in std::iter::once(key).chain(waiting.into_iter().filter(|k| *k != key)) {
            let Some(mut deps) = self.c.get_mut(&k).and_then(|ring| ring.back_mut()).map(|v| std::mem::take(&mut v.deps)) else {
                continue;
            };
            deps.retain(|(dk, d)| !self.covers(*dk, d));
            for (dk, _) in &deps {
                self.ghost_waiting.entry(*dk).or_default().insert(k);
            }
            self.c.get_mut(&k).and_then(|ring| ring.back_mut()).expect("taken above").deps = deps;
        }
    }

    fn after_install(&mut self, key: Key, winner_changed: bool) {
        if winner_changed {
            // The value shown is the new version's: it is here, so the key is warm again.
            self.cold.remove(&key);
        }
        if self.rules.keys_max.is_some() {
            for (dep, _) in &self.c[&key].back().expect("just installed").deps {
                self.dependents.entry(*dep).or_default().insert(key);
            }
            self.touch(key);
        }
    }

    /// The dependencies of version `vc` of `key` as far as this server knows them: the exact
    /// I-cache version's, else those of the oldest C-cache version covering it (a superset).
    /// `None` when neither exists (no dependencies known).
    pub fn deps_of(&self, key: Key, vc: &Vc) -> Option<&Deps> {
        if vc.is_zero() {
            return None;
        }
        if let Some(v) = self.i.get(key, vc) {
            return Some(&v.deps);
        }
        self.c.get(&key).and_then(|ring| ring.iter().find(|v| vc.le(&v.vc))).map(|v| &v.deps)
    }

    /// The dependencies of the single write `vc` of `key`, if this server still knows them:
    /// the initial version has none; a write waiting in the I-cache, or among the last to leave
    /// it (with `keep_write_deps`), has its own. `None` when they are no longer known.
    pub fn write_deps(&self, key: Key, vc: &Vc) -> Option<&Deps> {
        if vc.is_zero() {
            return Some(&NO_DEPS);
        }
        if let Some(v) = self.i.get(key, vc) {
            return Some(&v.deps);
        }
        self.write_deps.get(&key)?.find(vc).map(|(_, d)| d)
    }

    /// Whether write `u` of `u_key` lies in the causal past of write `w` of `w_key`, following
    /// the writes' own dependencies. VCs order every causal predecessor below its successor, so
    /// the walk only enters writes whose VC is ≥ `u`'s — the recent ones. `None` when it must
    /// enter a write whose dependencies this server no longer knows.
    pub fn in_causal_past(&self, u_key: Key, u: &Vc, w_key: Key, w: &Vc) -> Option<bool> {
        if u_key == w_key && u == w {
            return Some(true);
        }
        let mut stack = vec![(w_key, *w)];
        let mut seen: BTreeSet<(Key, Vc)> = BTreeSet::new();
        while let Some((k, d)) = stack.pop() {
            for &(dk, dd) in self.write_deps(k, &d)? {
                if dk == u_key && dd == *u {
                    return Some(true);
                }
                if u.le(&dd) && seen.insert((dk, dd)) {
                    stack.push((dk, dd));
                }
            }
        }
        Some(false)
    }

    /// The VCs of every version of `key` this server knows: its ring (merged VCs and winning
    /// writes), its I-cache, and the last versions merged into its C-cache.
    pub fn known_vcs(&self, key: Key) -> Vec<Vc> {
        let mut vcs: Vec<Vc> = Vec::new();
        for v in self.c.get(&key).into_iter().flatten() {
            vcs.push(v.vc);
            vcs.push(v.winner);
        }
        vcs.extend(self.i.versions(key).map(|v| v.vc));
        vcs.extend(self.merged.get(&key).into_iter().flat_map(|m| m.iter()).copied());
        vcs.retain(|vc| !vc.is_zero());
        vcs
    }

    /// The VCs of the *writes* of `key` this server knows that are newer than `floor` in the
    /// arbitration order, sorted and without repeats: its ring's winning writes, its I-cache,
    /// and the last versions merged into its C-cache (no merged VCs, which no write carries).
    /// Callers only look for writes newer than a read, so the rest is left out before sorting.
    pub fn known_writes_newer_than(&self, key: Key, floor: &Vc) -> Vec<Vc> {
        let newer = |vc: &Vc| vc > floor && !vc.is_zero();
        let mut vcs: Vec<Vc> = self.c.get(&key).into_iter().flatten().map(|v| v.winner).filter(newer).collect();
        vcs.extend(self.i.vcs(key).filter(newer));
        if let Some(merged) = self.merged.get(&key) {
            merged.extend_above(floor, &mut vcs);
            vcs.retain(|vc| !vc.is_zero());
        }
        vcs.sort_unstable();
        vcs.dedup();
        vcs
    }

    /// Marks `key` as recently used (for LRU eviction).
    pub fn touch(&mut self, key: Key) {
        if self.rules.keys_max.is_none() || !self.c.contains_key(&key) || self.cold.contains(&key) {
            return;
        }
        self.tick += 1;
        if let Some(old) = self.last_use.insert(key, self.tick) {
            self.lru.remove(&(old, key));
        }
        self.lru.insert((self.tick, key));
    }

    /// Evicts least-recently-used keys (and their dependents) until the warm keys fit the
    /// capacity. The server calls it after each input, once its replies are computed.
    pub fn evict_over_capacity(&mut self) -> Vec<Key> {
        let mut evicted = Vec::new();
        let Some(max) = self.rules.keys_max else { return evicted };
        while self.lru.len() > max {
            let Some(&(_, victim)) = self.lru.iter().next() else { break };
            self.evict(victim, &mut evicted);
        }
        evicted
    }

    /// Evicts `key` and, with correct rules, every key whose version depends on it (§11): their
    /// values go cold. The `evict_ignores_dependents` mutant forgets the key's entry instead
    /// and keeps its dependents, so the C-cache stops being a cut.
    fn evict(&mut self, key: Key, evicted: &mut Vec<Key>) {
        let mut stack = vec![key];
        while let Some(k) = stack.pop() {
            let Some(t) = self.last_use.remove(&k) else { continue };
            self.lru.remove(&(t, k));
            evicted.push(k);
            let dependents = self.dependents.remove(&k).unwrap_or_default();
            if self.rules.evict_dependents {
                self.cold.insert(k);
                stack.extend(dependents.into_iter().filter(|d| self.visible(*d).deps.iter().any(|(dk, _)| *dk == k)));
            } else {
                self.c.remove(&k);
                self.unpruned.remove(&k);
                self.i.wake(k);
            }
        }
    }

    /// Renames every cached value (see `Msg::map_values`).
    pub fn map_values(&mut self, f: &impl Fn(Value) -> Value) {
        self.c.values_mut().flatten().for_each(|v| v.map_value(f));
        self.i.map_versions(|v| v.map_value(f));
    }

    /// Definition 1: every dependency of a visible version is covered by the visible version
    /// of its key. `Err` names the first violation.
    pub fn check_causal_cut(&self) -> Result<(), String> {
        for (key, ring) in &self.c {
            let Some(v) = ring.back() else { continue };
            for (dep_key, dep_vc) in &v.deps {
                let have = self.visible_vc(*dep_key).unwrap_or(&self.initial.vc);
                if !dep_vc.le(have) {
                    return Err(format!(
                        "the C-cache is not a causal cut: key {key} at {} depends on key {dep_key} at {dep_vc}, \
                         but the C-cache has {dep_key} at {have}",
                        v.vc
                    ));
                }
            }
        }
        Ok(())
    }

    /// Metadata bytes: the I-cache (versions with their deps), plus the C-cache's deps when it
    /// keeps several versions (CausalMesh-TCC), as the paper counts them (§9.3).
    pub fn metadata_bytes(&self) -> u64 {
        let i = self.i.bytes();
        if self.rules.ring_size > 1 {
            let c: u64 = self.c.values().flatten().map(|v| super::vc::deps_bytes(&v.deps)).sum();
            i + c
        } else {
            i
        }
    }

    pub fn i_cache_bytes(&self) -> u64 {
        self.i.bytes()
    }

    /// The I-cache's bytes as the authors' artifact counts them (see `icache.rs`).
    pub fn i_cache_bytes_as_authors_count(&self) -> u64 {
        self.i.bytes_as_authors_count()
    }

    pub fn i_cache_len(&self) -> usize {
        self.i.len()
    }

    pub fn c_cache_keys(&self) -> usize {
        self.c.len()
    }

    /// Forgets everything (a crash: caches are volatile; the database keeps the data).
    pub fn clear(&mut self) {
        *self = DualCache::new(self.servers, self.rules);
    }
}

/// Keeps, per key, only the dependencies no other dependency of that key covers. A C-cache
/// version's deps are used only for coverage (the cut invariant, eviction, TCC closures), where
/// the maximal ones decide; without pruning they would grow with every merge.
/// The set is ordered by key, so each key's dependencies are compared only among themselves:
/// linear in the set's size when few versions of a key are concurrent.
fn prune_to_maxima(deps: &mut Deps) {
    let all: Vec<(Key, Vc)> = deps.iter().copied().collect();
    let mut covered = Vec::new();
    for group in all.chunk_by(|a, b| a.0 == b.0) {
        for &(k, d) in group {
            if group.iter().any(|(_, d2)| *d2 != d && d.le(d2)) {
                covered.push((k, d));
            }
        }
    }
    for dep in &covered {
        deps.remove(dep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> CacheRules {
        CacheRules {
            transitive: true,
            by_dominance: false,
            evict_dependents: true,
            ring_size: 1,
            keys_max: None,
            prewarmed: true,
            keep_write_deps: false,
        }
    }

    fn v(value: u64, vc: &[u32], deps: &[(Key, &[u32])]) -> Version {
        Version::write(value, Vc::from_slice(vc), deps.iter().map(|(k, d)| (*k, Vc::from_slice(d))).collect())
    }

    fn deps(d: &[(Key, &[u32])]) -> Deps {
        d.iter().map(|(k, v)| (*k, Vc::from_slice(v))).collect()
    }

    const X: Key = 0;
    const Y: Key = 1;
    const Z: Key = 2;

    #[test]
    fn merging_into_pruned_deps_equals_merging_then_pruning() {
        // Every pair of small dependency sets over two keys and 2-entry VCs in 0..3: the
        // incremental merge must give exactly what merging then pruning gives.
        let vcs: Vec<[u32; 2]> = (0..3).flat_map(|a| (0..3).map(move |b| [a, b])).collect();
        let sets: Vec<Deps> = (0u32..64)
            .map(|bits| {
                (0..6).filter(|i| bits >> i & 1 == 1).map(|i| ((i % 2) as Key, Vc::from_slice(&vcs[(i * 5 + bits as usize) % 9]))).collect()
            })
            .collect();
        for a in &sets {
            let mut target = Version::write(1, Vc::from_slice(&[1, 0]), a.clone());
            prune_to_maxima(&mut target.deps);
            for b in &sets {
                let incoming = Version::write(2, Vc::from_slice(&[0, 1]), b.clone());
                let mut expected = target.clone();
                expected.merge(&incoming);
                prune_to_maxima(&mut expected.deps);
                let mut got = target.clone();
                got.merge_keeping_maxima(&incoming);
                assert_eq!(got, expected, "merging {b:?} into {:?}", target.deps);
            }
        }
    }

    #[test]
    fn integration_pulls_transitive_dependencies() {
        // x → y → z (z depends on y, y on x); a read with deps {z} must make all three visible.
        let mut cache = DualCache::new(2, rules());
        cache.add_inconsistent(X, v(1, &[1, 0], &[]));
        cache.add_inconsistent(Y, v(1, &[2, 0], &[(X, &[1, 0])]));
        cache.add_inconsistent(Z, v(1, &[3, 0], &[(Y, &[2, 0])]));
        let r = cache.integrate(&deps(&[(Z, &[3, 0])]));
        assert_eq!(r.moved.len(), 3);
        assert!(r.missing.is_empty());
        assert_eq!(cache.visible(X).value, Some(1));
        assert!(cache.check_causal_cut().is_ok());
        assert_eq!(cache.i_cache_len(), 0);
    }

    #[test]
    fn nearest_only_integration_breaks_the_cut() {
        let mut cache = DualCache::new(2, CacheRules { transitive: false, ..rules() });
        cache.add_inconsistent(X, v(1, &[1, 0], &[]));
        cache.add_inconsistent(Y, v(1, &[2, 0], &[(X, &[1, 0])]));
        cache.add_inconsistent(Z, v(1, &[3, 0], &[(Y, &[2, 0])]));
        cache.integrate(&deps(&[(Z, &[3, 0])]));
        assert_eq!(cache.visible(X).value, None, "x stayed in the I-cache");
        assert!(cache.check_causal_cut().is_err());
    }

    #[test]
    fn a_missing_dependency_is_reported() {
        let mut cache = DualCache::new(2, rules());
        cache.add_inconsistent(Y, v(1, &[0, 2], &[(X, &[1, 0])]));
        let r = cache.integrate(&deps(&[(Y, &[0, 2])]));
        assert_eq!(r.missing, vec![(X, Vc::from_slice(&[1, 0]))]);
        assert!(cache.check_causal_cut().is_err());
    }

    #[test]
    fn the_authors_count_skips_each_keys_first_waiting_version() {
        let mut cache = DualCache::new(2, rules());
        cache.add_inconsistent(X, v(1, &[1, 0], &[]));
        cache.add_inconsistent(Y, v(1, &[2, 0], &[(X, &[1, 0])]));
        assert_eq!(cache.i_cache_bytes_as_authors_count(), 0, "one waiting version per key counts nothing");
        cache.add_inconsistent(Y, v(2, &[3, 0], &[(X, &[1, 0]), (Z, &[0, 1])]));
        cache.add_inconsistent(Y, v(3, &[4, 0], &[]));
        assert_eq!(cache.i_cache_bytes_as_authors_count(), (12 + 2 * 11) + 12);
        // Integrating y's first version makes its second the first: only the third counts.
        cache.integrate(&deps(&[(Y, &[2, 0])]));
        assert_eq!(cache.i_cache_bytes_as_authors_count(), 12);
        cache.integrate(&deps(&[(Y, &[4, 0])]));
        assert_eq!(cache.i_cache_bytes_as_authors_count(), 0);
        assert!(cache.i_cache_bytes() > 0, "the full count still sees what waits");
    }

    #[test]
    fn seen_versions_are_not_added_twice() {
        let mut cache = DualCache::new(2, rules());
        assert!(cache.add_inconsistent(X, v(1, &[1, 0], &[])));
        assert!(!cache.add_inconsistent(X, v(1, &[1, 0], &[])));
        cache.integrate(&deps(&[(X, &[1, 0])]));
        assert!(!cache.add_inconsistent(X, v(1, &[1, 0], &[])), "a copy of a merged version is dropped");
        assert_eq!(cache.i_cache_len(), 0);
    }

    /// Regression: server-indexed VCs order all writes of a head, so a newer version of a key
    /// can cover an older, unrelated one without naming the older one's dependencies. The older
    /// version must stay in the I-cache (not be dropped as covered) and be integrated exactly,
    /// with its dependencies, when someone depends on it; and integrating the newer one must not
    /// drag the older one (and its dependencies) along.
    #[test]
    fn integration_is_by_exact_version_not_by_vc_dominance() {
        let mut cache = DualCache::new(2, rules());
        cache.add_inconsistent(Y, v(1, &[0, 1], &[]));
        cache.add_inconsistent(Z, v(1, &[0, 2], &[(Y, &[0, 1])]));
        cache.add_inconsistent(Z, v(2, &[1, 2], &[]));
        cache.integrate(&deps(&[(Z, &[1, 2])]));
        assert_eq!(cache.visible(Z).value, Some(2));
        assert_eq!(cache.visible(Y).value, None, "z2 does not depend on y1: nothing drags it in");
        // A reader that depends on z1 gets z1's dependency y1.
        let r = cache.integrate(&deps(&[(Z, &[0, 2])]));
        assert!(r.missing.is_empty());
        assert_eq!(cache.visible(Y).value, Some(1));
        assert!(cache.check_causal_cut().is_ok());

        // The same with z1 arriving after z2 became visible: it is kept, not dropped as covered.
        let mut late = DualCache::new(2, rules());
        late.add_inconsistent(Z, v(2, &[1, 2], &[]));
        late.integrate(&deps(&[(Z, &[1, 2])]));
        late.add_inconsistent(Y, v(1, &[0, 1], &[]));
        assert!(late.add_inconsistent(Z, v(1, &[0, 2], &[(Y, &[0, 1])])));
        late.integrate(&deps(&[(Z, &[0, 2])]));
        assert_eq!(late.visible(Y).value, Some(1));
    }

    /// A hot key's version held back by a cold key's waiting write is dropped at the hot key's
    /// next integration once that write has left the I-cache: the cold key's change wakes it.
    #[test]
    fn a_version_held_back_by_another_key_is_collected_once_that_key_changes() {
        let mut cache = DualCache::new(2, rules());
        cache.add_inconsistent(X, v(1, &[1, 0], &[]));
        cache.add_inconsistent(Y, v(1, &[2, 0], &[(X, &[1, 0])]));
        cache.add_inconsistent(Y, v(2, &[3, 0], &[]));
        cache.integrate(&deps(&[(Y, &[3, 0])]));
        assert_eq!(cache.i_cache_len(), 2, "y1 is covered, but x1 still waits");
        cache.integrate(&deps(&[(X, &[1, 0])]));
        assert_eq!(cache.i_cache_len(), 1, "y1 is collected only when y is integrated again");
        cache.add_inconsistent(Y, v(3, &[4, 0], &[]));
        cache.integrate(&deps(&[(Y, &[4, 0])]));
        assert_eq!(cache.i_cache_len(), 0);
        assert!(!cache.add_inconsistent(Y, v(1, &[2, 0], &[(X, &[1, 0])])), "y1 left as covered");
    }

    #[test]
    fn eviction_takes_dependents_along() {
        let mut cache = DualCache::new(2, CacheRules { keys_max: Some(2), ..rules() });
        cache.add_inconsistent(X, v(1, &[1, 0], &[]));
        cache.add_inconsistent(Y, v(1, &[2, 0], &[(X, &[1, 0])]));
        cache.integrate(&deps(&[(Y, &[2, 0])]));
        assert_eq!(cache.c_cache_keys(), 2);
        cache.add_inconsistent(Z, v(1, &[3, 0], &[]));
        cache.integrate(&deps(&[(Z, &[3, 0])]));
        // x was least recently used; y depends on it, so both go cold.
        assert_eq!(cache.evict_over_capacity(), vec![X, Y]);
        assert!(cache.check_causal_cut().is_ok(), "cold entries keep the cut");
        assert!(!cache.is_cached(X));
        assert!(cache.is_cached(Z));
        assert_eq!(cache.cold_winner(X), Some(Vc::from_slice(&[1, 0])));
        cache.warm(X, &v(1, &[1, 0], &[]));
        assert!(cache.is_cached(X));
    }

    #[test]
    fn eviction_without_dependents_breaks_the_cut() {
        let mut cache = DualCache::new(2, CacheRules { keys_max: Some(2), evict_dependents: false, ..rules() });
        cache.add_inconsistent(X, v(1, &[1, 0], &[]));
        cache.add_inconsistent(Y, v(1, &[2, 0], &[(X, &[1, 0])]));
        cache.integrate(&deps(&[(Y, &[2, 0])]));
        cache.add_inconsistent(Z, v(1, &[3, 0], &[]));
        cache.integrate(&deps(&[(Z, &[3, 0])]));
        assert_eq!(cache.evict_over_capacity(), vec![X]);
        assert!(cache.check_causal_cut().is_err());
        assert_eq!(cache.visible(X).value, None, "x is forgotten: a read shows its initial state");
    }

    #[test]
    fn the_tcc_ring_keeps_the_last_versions() {
        let mut cache = DualCache::new(1, CacheRules { ring_size: 2, ..rules() });
        for i in 1..=3u32 {
            cache.add_inconsistent(X, v(i as u64, &[i], &[]));
            cache.integrate(&deps(&[(X, &[i])]));
        }
        let values: Vec<_> = cache.visible_versions(X).iter().map(|v| v.value).collect();
        assert_eq!(values, vec![Some(2), Some(3)]);
        let mut fresh = DualCache::new(1, CacheRules { ring_size: 2, ..rules() });
        fresh.add_inconsistent(X, v(1, &[1], &[]));
        fresh.integrate(&deps(&[(X, &[1])]));
        let values: Vec<_> = fresh.visible_versions(X).iter().map(|v| v.value).collect();
        assert_eq!(values, vec![None, Some(1)], "the initial state stays readable");
    }

    #[test]
    fn causal_past_follows_own_dependencies_not_vc_dominance() {
        const Y: Key = 1;
        const Z: Key = 2;
        let mut cache = DualCache::new(2, CacheRules { keep_write_deps: true, ..rules() });
        // y1 ← x1 (x1 read y1); z1 is written at the same head later, so its VC dominates
        // y1's without depending on it.
        cache.add_inconsistent(Y, v(1, &[1, 0], &[]));
        cache.add_inconsistent(X, v(1, &[2, 0], &[(Y, &[1, 0])]));
        cache.add_inconsistent(Z, v(1, &[3, 0], &[]));
        cache.integrate(&deps(&[(X, &[2, 0]), (Z, &[3, 0])]));
        let y1 = Vc::from_slice(&[1, 0]);
        assert_eq!(cache.in_causal_past(Y, &y1, X, &Vc::from_slice(&[2, 0])), Some(true));
        assert_eq!(cache.in_causal_past(Y, &y1, Z, &Vc::from_slice(&[3, 0])), Some(false), "VC dominance is not causality");
        assert_eq!(cache.in_causal_past(Y, &y1, X, &Vc::from_slice(&[9, 0])), None, "an unknown write's past is unknown");
        assert_eq!(cache.in_causal_past(Y, &y1, Y, &y1), Some(true), "a write is in its own past");
    }
}
