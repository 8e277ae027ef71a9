//! Vector clocks, versions and dependency maps (paper §3.2).

use causim_sim::history::{Key, Value};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A vector clock: entry `i` counts the writes whose head was server `i` that are known.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vc(pub Vec<u32>);

impl Vc {
    pub fn zero(servers: usize) -> Vc {
        Vc(vec![0; servers])
    }

    /// `self ≤ other`: every entry is at most the other's (self happened before or equals).
    pub fn le(&self, other: &Vc) -> bool {
        self.0.iter().zip(&other.0).all(|(a, b)| a <= b)
    }

    /// Pointwise maximum (the paper's VC₁ ∪ VC₂).
    pub fn merge(&mut self, other: &Vc) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = (*a).max(*b);
        }
    }

    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&c| c == 0)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn to_u64s(&self) -> Vec<u64> {
        self.0.iter().map(|&c| c as u64).collect()
    }

    pub fn bytes(&self) -> u64 {
        4 * self.0.len() as u64
    }
}

impl std::fmt::Display for Vc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[")?;
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "{c}")?;
        }
        write!(f, "]")
    }
}

/// Nearest dependencies: per key, the version (VC) a write depends on (§3.2).
pub type Deps = BTreeMap<Key, Vc>;

/// Merges `from` into `into` (per key, pointwise maximum).
pub fn merge_deps(into: &mut Deps, from: &Deps) {
    for (k, vc) in from {
        merge_dep(into, *k, vc);
    }
}

pub fn merge_dep(into: &mut Deps, key: Key, vc: &Vc) {
    match into.get_mut(&key) {
        Some(v) => v.merge(vc),
        None => {
            into.insert(key, vc.clone());
        }
    }
}

pub fn deps_bytes(deps: &Deps) -> u64 {
    deps.values().map(|vc| 8 + vc.bytes()).sum()
}

/// A version of a key: its value, its VC, and the nearest dependencies of the writes merged
/// into it. `value: None` is the key's initial state.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub value: Option<Value>,
    pub vc: Vc,
    pub deps: Deps,
}

impl Version {
    pub fn initial(servers: usize) -> Version {
        Version { value: None, vc: Vc::zero(servers), deps: Deps::new() }
    }

    /// Conflict resolution (§3.2): a newer version overwrites an older one; for concurrent
    /// versions the VCs merge and the value of the lexicographically larger VC wins, so every
    /// server converges to the same value whatever the order of merges.
    pub fn merge(&mut self, other: &Version) {
        if other.vc.le(&self.vc) {
            return;
        }
        if self.vc.le(&other.vc) {
            *self = other.clone();
            return;
        }
        if other.vc.0.cmp(&self.vc.0) == Ordering::Greater {
            self.value = other.value;
        }
        self.vc.merge(&other.vc);
        merge_deps(&mut self.deps, &other.deps);
    }

    pub fn bytes(&self) -> u64 {
        8 + self.vc.bytes() + deps_bytes(&self.deps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vc(c: &[u32]) -> Vc {
        Vc(c.to_vec())
    }

    fn version(value: u64, c: &[u32]) -> Version {
        Version { value: Some(value), vc: vc(c), deps: Deps::new() }
    }

    #[test]
    fn order_and_merge() {
        assert!(vc(&[1, 2]).le(&vc(&[1, 3])));
        assert!(!vc(&[2, 0]).le(&vc(&[1, 3])));
        let mut a = vc(&[2, 0]);
        a.merge(&vc(&[1, 3]));
        assert_eq!(a, vc(&[2, 3]));
    }

    #[test]
    fn newer_versions_win_and_concurrent_ones_converge() {
        let mut x = version(1, &[1, 0]);
        x.merge(&version(2, &[2, 0]));
        assert_eq!(x.value, Some(2));
        x.merge(&version(1, &[1, 0]));
        assert_eq!(x.value, Some(2), "an older version never overwrites");

        let (a, b) = (version(10, &[1, 0]), version(20, &[0, 1]));
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        assert_eq!(ab, ba, "merge order does not matter");
        assert_eq!(ab.vc, vc(&[1, 1]));
        assert_eq!(ab.value, Some(10), "[1,0] > [0,1] lexicographically");
    }
}
