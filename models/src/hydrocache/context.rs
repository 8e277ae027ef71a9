//! The workflow context: what a workflow carries from function to function, and its join at a
//! fan-in, where the branches' reads are validated together.

use super::version::{Deps, merge_deps};
use super::{Epoch, Mode, Seq};
use crate::txn_client::TxnContext;
use causim_sim::history::Key;
use causim_sim::node::NodeId;
use std::collections::{BTreeMap, BTreeSet};

/// What a workflow carries from function to function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Context {
    /// Versions read, and the cache that pinned each.
    pub read_set: BTreeMap<Key, (Seq, NodeId)>,
    /// The dependency map: the versions read and their causal past (sorted by key).
    pub deps: Vec<(Key, Seq)>,
    /// The write set, the operations so far (history bookkeeping) and the workflow's start.
    pub txn: TxnContext,
    /// Con: the snapshot is installed at every cache.
    pub con_ready: bool,
    /// Caches that pinned versions for this attempt.
    pub pinned_at: BTreeSet<NodeId>,
    /// Validated reads with their dependencies, for the invariant (bookkeeping).
    pub reads_log: Vec<(Key, Seq, Deps)>,
    /// Parallel branches read versions that are not causally consistent with each other.
    pub join_violation: bool,
    /// Garbage collection: the oldest floor epoch any read was served under (`None`: no read
    /// yet, or no collection), and the newest epoch a version read was pruned at.
    pub gc_served_min: Option<Epoch>,
    pub gc_pruned_max: Epoch,
}

impl Context {
    pub(super) fn new() -> Context {
        Context {
            read_set: BTreeMap::new(),
            deps: Vec::new(),
            txn: TxnContext::default(),
            con_ready: false,
            pinned_at: BTreeSet::new(),
            reads_log: Vec::new(),
            join_violation: false,
            gc_served_min: None,
            gc_pruned_max: 0,
        }
    }

    /// A read served under epoch `e`.
    pub(super) fn served_under(&mut self, e: Epoch) {
        self.gc_served_min = Some(self.gc_served_min.map_or(e, |m| m.min(e)));
    }

    /// Some version read was pruned at a newer epoch than an earlier (or later) read was served
    /// under: an entry it lost may name a newer version of that read's key, so validation cannot
    /// be trusted (see the module docs, "Dependency garbage collection").
    pub fn gc_hazard(&self) -> bool {
        self.gc_served_min.is_some_and(|served| self.gc_pruned_max > served)
    }

    /// The protocol metadata's size (see the module docs).
    pub fn metadata_bytes(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Con => 8 + 16 * self.read_set.len() as u64,
            Mode::Opt => 16 * self.deps.len() as u64 + 24 * self.read_set.len() as u64,
        }
    }

    pub(super) fn join(contexts: Vec<Context>) -> Context {
        let mut j = Context::new();
        j.con_ready = true;
        let mut txns = Vec::with_capacity(contexts.len());
        for c in contexts {
            for (k, (s, at)) in c.read_set {
                let e = j.read_set.entry(k).or_insert((s, at));
                // Parallel branches may have read different versions: keep the newer (the
                // write's dependencies must cover both); validation at the join catches it.
                if s > e.0 {
                    *e = (s, at);
                }
            }
            j.deps = merge_deps(&j.deps, &c.deps);
            j.con_ready &= c.con_ready;
            j.pinned_at.extend(c.pinned_at);
            for r in c.reads_log {
                if !j.reads_log.contains(&r) {
                    j.reads_log.push(r);
                }
            }
            j.join_violation |= c.join_violation;
            if let Some(e) = c.gc_served_min {
                j.served_under(e);
            }
            j.gc_pruned_max = j.gc_pruned_max.max(c.gc_pruned_max);
            txns.push(c.txn);
        }
        j.txn = TxnContext::join(txns);
        // Validation between functions, at a join: the branches' reads together must be a
        // causal snapshot (one version per key, none depending on a newer version of another).
        j.join_violation |= inconsistent(&j.reads_log);
        j
    }
}

/// Whether some key was read at two versions, or some read depends on a newer version of another
/// key read.
fn inconsistent(log: &[(Key, Seq, Deps)]) -> bool {
    log.iter().any(|(k1, s1, deps)| {
        log.iter().any(|(k2, s2, _)| (k1 == k2 && s1 != s2) || (k1 != k2 && deps.get(*k2).is_some_and(|need| need > *s2)))
    })
}
