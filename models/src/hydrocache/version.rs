//! Versions and the shared immutable data they carry: dependency maps (see [`super::deps`]) and
//! pinned cuts, each shared (copies are references) with a short `Debug`.

use super::Seq;
pub use super::deps::Deps;
use causim_sim::history::{Key, Value};
use causim_sim::time::Time;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

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
        24 + 16 * self.deps.len() as u64
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
