//! Versions and the shared immutable data they carry: dependency maps and pinned cuts, each
//! behind an `Arc` (copies are references) with a short `Debug`.

use super::{Epoch, Seq};
use causim_sim::history::{Key, Value};
use causim_sim::time::Time;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A dependency map: key → version, sorted by key. Shared: every copy is a reference. The
/// second field is the garbage-collection epoch the list was last pruned at (0: never): every
/// entry of the writer's causal past it lacks is covered by that epoch's floor (`gc.rs`).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Deps(pub(super) Arc<Vec<(Key, Seq)>>, pub(super) Epoch);

impl fmt::Debug for Deps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            0 => write!(f, "deps({})", self.0.len()),
            e => write!(f, "deps({}, pruned at epoch {e})", self.0.len()),
        }
    }
}

impl Deps {
    pub fn from_sorted(v: Vec<(Key, Seq)>) -> Deps {
        debug_assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
        Deps(Arc::new(v), 0)
    }

    /// The same list, marked as missing entries that epoch `epoch`'s floor covers.
    pub fn pruned_at(mut self, epoch: Epoch) -> Deps {
        self.1 = self.1.max(epoch);
        self
    }

    /// The newest epoch this list was pruned at (0: never pruned).
    pub fn pruned_epoch(&self) -> Epoch {
        self.1
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: Key) -> Option<Seq> {
        self.0.binary_search_by_key(&key, |e| e.0).ok().map(|i| self.0[i].1)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(Key, Seq)> {
        self.0.iter()
    }
}

/// Merges two sorted dependency lists, keeping the newer version of each key.
pub fn merge_deps(a: &[(Key, Seq)], b: &[(Key, Seq)]) -> Vec<(Key, Seq)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1.max(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// A version as the database stores it and caches hold it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HVersion {
    pub seq: Seq,
    pub value: Option<Value>,
    /// The writer's causal past and its other writes (flattened).
    pub deps: Deps,
    /// When the database stored it (for the visibility metric only).
    pub written_ns: Time,
}

impl HVersion {
    pub fn initial() -> HVersion {
        HVersion { seq: 0, value: None, deps: Deps::default(), written_ns: 0 }
    }

    pub(super) fn wire_bytes(&self) -> u64 {
        // A pruned list carries its epoch (8 bytes); one never pruned (no GC) carries none.
        24 + 16 * self.deps.len() as u64 + if self.deps.1 > 0 { 8 } else { 0 }
    }
}

/// A cache's causal cut, shared copy-on-write so that Con can pin it in O(1).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cut(pub(super) Arc<BTreeMap<Key, HVersion>>);

impl fmt::Debug for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cut({} keys)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_maps_merge_keeping_the_newer_version() {
        assert_eq!(merge_deps(&[(1, 2), (3, 1)], &[(1, 1), (2, 5), (3, 4)]), vec![(1, 2), (2, 5), (3, 4)]);
    }
}
