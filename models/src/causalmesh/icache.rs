//! The I-cache's storage (§4): per key, the versions waiting to be integrated, in arrival order,
//! found by VC, and an index that says which of them could have become droppable.
//!
//! A hot key collects versions that wait on writes of cold keys nobody reads (each such version
//! stays until someone integrates it or the cold write leaves the I-cache). Walking them all on
//! every write and integration made a run's cost grow with the square of its length. Here a
//! lookup by VC is logarithmic, and the droppability check (`DualCache::collect`) re-examines
//! only the versions whose answer may have changed since they were last examined:
//!
//! - a version found not droppable keeps a **witness**, the key one of its failing conditions
//!   is about (its own key: the C-cache does not cover it or its write would win; a dependency's
//!   key: the C-cache does not cover that dependency or it still waits in the I-cache);
//! - those conditions can only turn true when the witness key's C-cache version changes or a
//!   version of it leaves the I-cache; both call [`ICache::wake`], which sends the versions
//!   witnessed by that key back to be examined at their key's next collection.
//!
//! The index is derived data: it never changes an answer, only how much is walked to find it.
//! So equality, hashing and `Debug` see the waiting versions alone, in arrival order, exactly as
//! a plain list per key did: a model checker's states and a run's history are unchanged.

use super::vc::{Vc, Version};
use causim_sim::history::Key;
use std::collections::{BTreeMap, BTreeSet};

/// Per key, the versions waiting to be integrated, and their size (see `DualCache`).
#[derive(Clone, Default)]
pub struct ICache {
    keys: BTreeMap<Key, Waiting>,
    len: usize,
    bytes: u64,
    bytes_as_authors_count: u64,
    /// (witness key, key, arrival number): the versions a change of the witness key may make
    /// droppable. One set for all witnesses: most are cold keys that witness one version.
    watchers: BTreeSet<(Key, Key, u64)>,
}

/// The versions of one key. Most keys have one or two, hot ones some dozens: a vector sorted by
/// VC (found by binary search) costs less memory and time than maps at those sizes.
#[derive(Clone, Default)]
struct Waiting {
    by_vc: Vec<Entry>,
    /// Arrival numbers are never reused while the key waits.
    next_arrival: u64,
    /// How many versions have no witness (examined at the key's next collection).
    unexamined: usize,
}

#[derive(Clone)]
struct Entry {
    version: Version,
    arrival: u64,
    /// `None` until examined (and again when woken).
    witness: Option<Key>,
}

impl Waiting {
    fn find(&self, vc: &Vc) -> Result<usize, usize> {
        self.by_vc.binary_search_by(|e| e.version.vc.cmp(vc))
    }

    /// The entries in arrival order.
    fn in_arrival_order(&self) -> Vec<&Entry> {
        let mut entries: Vec<&Entry> = self.by_vc.iter().collect();
        entries.sort_unstable_by_key(|e| e.arrival);
        entries
    }

    /// This key's share of the authors' count: every version but the first to arrive.
    fn authors_count(&self) -> u64 {
        let all: u64 = self.by_vc.iter().map(|e| bytes_as_authors_count(&e.version)).sum();
        let first = self.by_vc.iter().min_by_key(|e| e.arrival).map_or(0, |e| bytes_as_authors_count(&e.version));
        all - first
    }
}

impl ICache {
    pub fn contains(&self, key: Key, vc: &Vc) -> bool {
        self.keys.get(&key).is_some_and(|w| w.find(vc).is_ok())
    }

    /// The waiting version of `key` with VC `vc`.
    pub fn get(&self, key: Key, vc: &Vc) -> Option<&Version> {
        let w = self.keys.get(&key)?;
        w.find(vc).ok().map(|i| &w.by_vc[i].version)
    }

    /// The waiting versions of `key`, in arrival order.
    pub fn versions(&self, key: Key) -> impl Iterator<Item = &Version> {
        self.keys.get(&key).map(|w| w.in_arrival_order()).unwrap_or_default().into_iter().map(|e| &e.version)
    }

    /// The VCs of the waiting versions of `key`, in VC order (no arrival sort).
    pub fn vcs(&self, key: Key) -> impl Iterator<Item = Vc> + '_ {
        self.keys.get(&key).into_iter().flat_map(|w| w.by_vc.iter().map(|e| e.version.vc))
    }

    /// Adds a version of `key` not already waiting; it will be examined at the next collection.
    pub fn push(&mut self, key: Key, version: Version) {
        let w = self.keys.entry(key).or_default();
        let at = w.find(&version.vc).expect_err("a version waits once");
        if !w.by_vc.is_empty() {
            self.bytes_as_authors_count += bytes_as_authors_count(&version);
        }
        self.bytes += version.bytes();
        self.len += 1;
        w.by_vc.insert(at, Entry { version, arrival: w.next_arrival, witness: None });
        w.next_arrival += 1;
        w.unexamined += 1;
    }

    /// Takes the waiting versions of `key` whose VCs are in `vcs` out of the I-cache; returns
    /// them in arrival order. Versions witnessed by `key` are examined again.
    pub fn remove(&mut self, key: Key, vcs: &[Vc]) -> Vec<Version> {
        let Some(w) = self.keys.get_mut(&key) else { return Vec::new() };
        let before = w.authors_count();
        let mut removed = Vec::with_capacity(vcs.len());
        for vc in vcs {
            let Ok(i) = w.find(vc) else { continue };
            let entry = w.by_vc.remove(i);
            match entry.witness {
                Some(witness) => {
                    self.watchers.remove(&(witness, key, entry.arrival));
                }
                None => w.unexamined -= 1,
            }
            self.bytes -= entry.version.bytes();
            self.len -= 1;
            removed.push(entry);
        }
        self.bytes_as_authors_count -= before - w.authors_count();
        if w.by_vc.is_empty() {
            self.keys.remove(&key);
        }
        if !removed.is_empty() {
            self.wake(key);
        }
        removed.sort_unstable_by_key(|e| e.arrival);
        removed.into_iter().map(|e| e.version).collect()
    }

    /// Something about `key` changed (its C-cache version, or a version of it left the
    /// I-cache): every version witnessed by `key` must be examined again.
    pub fn wake(&mut self, key: Key) {
        let woken: Vec<(Key, Key, u64)> = self.watchers.range((key, 0, 0)..=(key, Key::MAX, u64::MAX)).copied().collect();
        for t @ (_, k, arrival) in woken {
            self.watchers.remove(&t);
            let w = self.keys.get_mut(&k).expect("watched versions wait");
            let entry = w.by_vc.iter_mut().find(|e| e.arrival == arrival).expect("watched versions wait");
            entry.witness = None;
            w.unexamined += 1;
        }
    }

    /// The versions of `key` that may have become droppable since they were last examined,
    /// in arrival order, with their arrival numbers (for [`ICache::examined`]).
    pub fn to_examine(&self, key: Key) -> Vec<(u64, &Version)> {
        let Some(w) = self.keys.get(&key).filter(|w| w.unexamined > 0) else { return Vec::new() };
        w.in_arrival_order().into_iter().filter(|e| e.witness.is_none()).map(|e| (e.arrival, &e.version)).collect()
    }

    /// Records what examining versions of `key` found: `None` when droppable, else the witness
    /// key of a failing condition. Returns the droppable versions' VCs in the order given;
    /// they stay unexamined until they leave.
    pub fn examined(&mut self, key: Key, verdicts: Vec<(u64, Option<Key>)>) -> Vec<Vc> {
        let Some(w) = self.keys.get_mut(&key) else { return Vec::new() };
        let mut droppable = Vec::new();
        for (arrival, verdict) in verdicts {
            let entry = w.by_vc.iter_mut().find(|e| e.arrival == arrival).expect("examined versions wait");
            match verdict {
                None => droppable.push(entry.version.vc),
                Some(witness) => {
                    entry.witness = Some(witness);
                    w.unexamined -= 1;
                    self.watchers.insert((witness, key, arrival));
                }
            }
        }
        droppable
    }

    /// Renames every waiting value (see `Msg::map_values`).
    pub fn map_versions(&mut self, f: impl Fn(&mut Version)) {
        self.keys.values_mut().flat_map(|w| w.by_vc.iter_mut()).for_each(|e| f(&mut e.version));
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    pub fn bytes_as_authors_count(&self) -> u64 {
        self.bytes_as_authors_count
    }

    /// Per key, the waiting versions in arrival order: what equality, hashing and `Debug` see.
    fn lists(&self) -> impl Iterator<Item = (&Key, Vec<&Version>)> {
        self.keys.iter().map(|(k, w)| (k, w.in_arrival_order().into_iter().map(|e| &e.version).collect()))
    }
}

impl PartialEq for ICache {
    fn eq(&self, other: &ICache) -> bool {
        self.len == other.len && self.keys.len() == other.keys.len() && self.lists().zip(other.lists()).all(|(a, b)| a == b)
    }
}

impl Eq for ICache {}

/// Hashes as the map of lists it stands for (`BTreeMap<Key, Vec<Version>>`).
impl std::hash::Hash for ICache {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_usize(self.keys.len());
        for (k, list) in self.lists() {
            k.hash(state);
            list.hash(state);
        }
    }
}

impl std::fmt::Debug for ICache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.lists()).finish()
    }
}

/// The bytes of an I-cache version as the only metadata measurement in the authors' artifact
/// counts it (eniac/causalmesh 65a192d, `ccmesh/ccmesh/src/service.rs`, commented out in
/// `client_write`): 12 B per version plus 11 B per dependency, and only for a key's versions
/// after its first. A key with one waiting version counts nothing.
fn bytes_as_authors_count(v: &Version) -> u64 {
    12 + 11 * v.deps.len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{DefaultHasher, Hash, Hasher};

    fn v(value: u64, vc: &[u32]) -> Version {
        Version::write(value, Vc::from_slice(vc), Default::default())
    }

    fn hash(i: &ICache) -> u64 {
        let mut h = DefaultHasher::new();
        i.hash(&mut h);
        h.finish()
    }

    /// The index is derived: two I-caches with the same versions in the same arrival order are
    /// equal and hash alike whatever was examined, so a model checker's state count does not
    /// change; arrival order is state (the authors' count depends on the first version).
    #[test]
    fn equality_sees_the_versions_in_arrival_order_only() {
        let mut a = ICache::default();
        a.push(7, v(1, &[2, 0]));
        a.push(7, v(2, &[1, 0]));
        let mut b = a.clone();
        let verdicts = b.to_examine(7).into_iter().map(|(arrival, _)| (arrival, Some(3))).collect();
        assert!(b.examined(7, verdicts).is_empty());
        assert!(b.to_examine(7).is_empty(), "witnessed versions wait until key 3 changes");
        assert_eq!(a, b);
        assert_eq!(hash(&a), hash(&b));
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        b.wake(3);
        assert_eq!(b.to_examine(7).len(), 2);

        let mut c = ICache::default();
        c.push(7, v(2, &[1, 0]));
        c.push(7, v(1, &[2, 0]));
        assert_ne!(a, c);
        let arrivals: Vec<_> = a.versions(7).map(|v| v.value).collect();
        assert_eq!(arrivals, vec![Some(1), Some(2)]);
    }
}
