//! Vector clocks, versions and dependency maps (paper §3.2).

use causim_sim::history::{Key, Value};
use std::cmp::Ordering;
use std::collections::BTreeSet;

/// The most servers CausalMesh is modelled with (the paper evaluates 2–16): vector clocks
/// are inline arrays, so copying one never allocates.
pub const VC_SERVERS_MAX: usize = 16;

/// A vector clock: entry `i` counts the writes whose head was server `i` that are known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Vc {
    // Entries past `len` are always zero, so the derived order is the lexicographic order of
    // the entries among clocks of one run (they all have the same length).
    c: [u32; VC_SERVERS_MAX],
    len: u8,
}

impl Vc {
    pub fn zero(servers: usize) -> Vc {
        assert!(servers <= VC_SERVERS_MAX, "at most {VC_SERVERS_MAX} servers");
        Vc { c: [0; VC_SERVERS_MAX], len: servers as u8 }
    }

    pub fn from_slice(entries: &[u32]) -> Vc {
        let mut vc = Vc::zero(entries.len());
        vc.c[..entries.len()].copy_from_slice(entries);
        vc
    }

    pub fn entries(&self) -> &[u32] {
        &self.c[..self.len as usize]
    }

    pub fn get(&self, i: usize) -> u32 {
        self.entries()[i]
    }

    pub fn set(&mut self, i: usize, value: u32) {
        assert!(i < self.len as usize);
        self.c[i] = value;
    }

    /// `self ≤ other`: every entry is at most the other's (self happened before or equals).
    pub fn le(&self, other: &Vc) -> bool {
        self.entries().iter().zip(other.entries()).all(|(a, b)| a <= b)
    }

    /// Pointwise maximum (the paper's VC₁ ∪ VC₂).
    pub fn merge(&mut self, other: &Vc) {
        for (a, b) in self.c.iter_mut().zip(&other.c) {
            *a = (*a).max(*b);
        }
    }

    pub fn is_zero(&self) -> bool {
        self.c.iter().all(|&c| c == 0)
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn to_u64s(&self) -> Vec<u64> {
        self.entries().iter().map(|&c| c as u64).collect()
    }

    /// Size on the wire: 4 bytes per entry.
    pub fn bytes(&self) -> u64 {
        4 * self.len as u64
    }
}

/// Hashes the entries in use only (entries past `len` are zero, so equal clocks hash alike):
/// model checkers hash every clock of every state, and most runs use far fewer than
/// `VC_SERVERS_MAX` servers.
impl std::hash::Hash for Vc {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u8(self.len);
        for &c in self.entries() {
            state.write_u32(c);
        }
    }
}

impl std::fmt::Display for Vc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[")?;
        for (i, c) in self.entries().iter().enumerate() {
            if i > 0 {
                write!(f, ",")?;
            }
            write!(f, "{c}")?;
        }
        write!(f, "]")
    }
}

/// Dependencies: the exact versions (key, VC of the write) something depends on.
///
/// The paper keeps one merged VC per key (§3.2). We keep the exact versions instead: server-
/// indexed VCs order every write of a head, so a merged VC can make a newer, unrelated version
/// look as if it covered an older one, and integration by VC dominance then skips a version
/// that is needed or reveals one at its head too early. Fig. 3 itself integrates "this
/// version", exactly. A workflow's context is short-lived, so the sets stay small.
pub type Deps = BTreeSet<(Key, Vc)>;

/// The versions of `key` in `deps`, oldest first: a range of the set, which is ordered by key.
pub fn deps_on(deps: &Deps, key: Key) -> impl Iterator<Item = &Vc> {
    deps.range((key, Vc::default())..).take_while(move |(k, _)| *k == key).map(|(_, vc)| vc)
}

/// Adds the dependencies `from` to `into`.
pub fn merge_deps(into: &mut Deps, from: &Deps) {
    into.extend(from.iter().cloned());
}

pub fn merge_dep(into: &mut Deps, key: Key, vc: &Vc) {
    if !vc.is_zero() {
        into.insert((key, *vc));
    }
}

pub fn deps_bytes(deps: &Deps) -> u64 {
    deps.iter().map(|(_, vc)| 8 + vc.bytes()).sum()
}

/// A version of a key: its value, its VC, and the dependencies of the writes merged into it.
/// `value: None` is the key's initial state. `winner` is the VC of the write whose value is
/// shown: a read depends on that write.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub value: Option<Value>,
    pub vc: Vc,
    pub winner: Vc,
    pub deps: Deps,
}

impl Version {
    pub fn initial(servers: usize) -> Version {
        Version { value: None, vc: Vc::zero(servers), winner: Vc::zero(servers), deps: Deps::new() }
    }

    /// The version of one write.
    pub fn write(value: Value, vc: Vc, deps: Deps) -> Version {
        Version { value: Some(value), winner: vc, vc, deps }
    }

    /// Conflict resolution (§3.2): the VCs merge, and the value shown is that of the write with
    /// the lexicographically largest VC among all writes merged. Because a write's VC dominates
    /// everything it causally follows, that order extends causality (a newer version always
    /// overwrites an older one); being a maximum, it does not depend on the order of merges, so
    /// replicas converge. The comparison is between *writes*: a merged VC, inflated by
    /// concurrent versions, must not make an older value beat a write that follows it.
    pub fn merge(&mut self, other: &Version) {
        self.merge_clock_and_value(other);
        // A merged VC can cover a write it never merged (its entries come from different
        // writes), so the deps are merged even when the VC does not grow.
        merge_deps(&mut self.deps, &other.deps);
    }

    /// `merge`, for a version whose deps are pruned to their maxima (no entry ≤ another entry
    /// of its key), keeping them so: the result is that of `merge` then pruning, but the work
    /// is in the size of `other`'s deps, not of `self`'s, which grow with every key a hot
    /// key's writes ever depended on.
    pub fn merge_keeping_maxima(&mut self, other: &Version) {
        self.merge_clock_and_value(other);
        for &(key, d) in &other.deps {
            if deps_on(&self.deps, key).any(|held| d.le(held)) {
                continue; // held already, or below an entry held
            }
            let below: Vec<Vc> = deps_on(&self.deps, key).filter(|held| Vc::le(held, &d)).copied().collect();
            for held in below {
                self.deps.remove(&(key, held));
            }
            self.deps.insert((key, d));
        }
    }

    /// The VC and value part of `merge`, shared by both ways of merging the deps.
    fn merge_clock_and_value(&mut self, other: &Version) {
        if other.winner.cmp(&self.winner) == Ordering::Greater {
            self.value = other.value;
            self.winner = other.winner;
        }
        self.vc.merge(&other.vc);
    }

    pub fn bytes(&self) -> u64 {
        8 + self.vc.bytes() + deps_bytes(&self.deps)
    }

    /// Renames the value (see `Msg::map_values`); the initial state stays initial.
    pub fn map_value(&mut self, f: &impl Fn(Value) -> Value) {
        self.value = self.value.map(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vc(c: &[u32]) -> Vc {
        Vc::from_slice(c)
    }

    fn version(value: u64, c: &[u32]) -> Version {
        Version::write(value, vc(c), Deps::new())
    }

    #[test]
    fn order_and_merge() {
        assert!(vc(&[1, 2]).le(&vc(&[1, 3])));
        assert!(!vc(&[2, 0]).le(&vc(&[1, 3])));
        let mut a = vc(&[2, 0]);
        a.merge(&vc(&[1, 3]));
        assert_eq!(a, vc(&[2, 3]));
    }

    /// Regression: a merged version's VC is inflated by concurrent writes; the value must not
    /// beat a write that causally follows the merged version's winning write.
    #[test]
    fn a_causally_later_write_beats_an_inflated_merge() {
        let mut merged = version(16, &[13, 29, 0]);
        merged.merge(&version(99, &[0, 41, 17]));
        assert_eq!(merged.value, Some(16));
        let later = version(28, &[13, 29, 32]); // follows 16's write
        let mut m = merged.clone();
        m.merge(&later);
        assert_eq!(m.value, Some(28));
        let mut n = later.clone();
        n.merge(&merged);
        assert_eq!(n.value, Some(28), "whatever the order");
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
        assert_eq!(ab.winner, vc(&[1, 0]), "a read of the merge depends on the winning write");
    }
}
