//! Findings: what the checks produce, before they are turned into reported violations.

use crate::anomaly::Anomaly;
use crate::graph::{Gran, Units};
use crate::history::History;
use crate::wf::Wf;
use std::collections::BTreeMap;

/// One step of a witness, between transactions (indices into `History::txns`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Hop {
    /// Program order: the same session ran `from` before `to` (or `to` lists `from`, or a
    /// predecessor of it, in `after`). At operation granularity the ops are given.
    Program { from: u32, to: u32, from_op: Option<u32>, to_op: Option<u32>, after: bool },
    /// Op `read` (in transaction `to`) read the value op `write` (in `from`) wrote.
    ReadsFrom { from: u32, to: u32, write: u32, read: u32 },
    /// Write op `first` (in `from`) must precede write op `second` (in `to`) of the same key,
    /// because op `read` read `second` although `first` is visible to it.
    WriteOrder { from: u32, to: u32, first: u32, second: u32, read: u32 },
}

impl Hop {
    pub(crate) fn from(&self) -> u32 {
        match self {
            Hop::Program { from, .. } | Hop::ReadsFrom { from, .. } | Hop::WriteOrder { from, .. } => *from,
        }
    }
    pub(crate) fn to(&self) -> u32 {
        match self {
            Hop::Program { to, .. } | Hop::ReadsFrom { to, .. } | Hop::WriteOrder { to, .. } => *to,
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Detail {
    /// A read that is wrong by itself (well-formedness).
    Read,
    /// NonRepeatableRead: `first` is the earlier read of the same key.
    Repeat { first: u32 },
    /// The read returned a value older than `newer` (a write op of the same key) although
    /// `newer` is visible to it through `to_reader`; `to_newer` shows the old value's write
    /// precedes `newer` (empty when the old value is the initial one).
    Shadow { newer: u32, to_newer: Vec<Hop>, to_reader: Vec<Hop> },
    /// A list read holds an element (before its last) that op `write` appended (NONE: no
    /// append wrote `value`).
    Element { write: u32, value: crate::history::Val },
    /// A cycle; `scc` is the strongly connected component (transactions) it lies in.
    Cycle { hops: Vec<Hop>, scc: Vec<u32> },
    /// WriteHBInitRead: the write `write` precedes the initial-value read in the session's
    /// view, through `hops`.
    HbInit { write: u32, hops: Vec<Hop> },
    /// A key with no linearization: the smallest failing window found (op indices, by
    /// invocation) and why it fails (None only if the window defies the characterization).
    Linear { window: Vec<u32>, proof: Option<crate::lin::Proof> },
    /// NotCacheFree: a cycle through the expanded call trees, or a hit nothing backs.
    CacheFree(Box<crate::cache_free::Story>),
    /// A snapshot-isolation violation: a forbidden cycle, or the orders that all close one.
    Si(Box<crate::si::Story>),
    /// Transactions with no serial order (that respects real time): the smallest set found.
    Sser(Box<crate::sser::Story>),
}

#[derive(Clone, Debug)]
pub(crate) struct Finding {
    pub anomaly: Anomaly,
    pub key: Option<u32>,
    /// The read at fault (op index), if any.
    pub read: Option<u32>,
    pub detail: Detail,
}

/// Collects findings: counts all, keeps the first `max` in full.
pub(crate) struct Sink {
    pub max: usize,
    pub kept: Vec<Finding>,
    pub counts: BTreeMap<Anomaly, u64>,
    pub total: u64,
    pub notes: Vec<String>,
}

impl Sink {
    pub(crate) fn new(max: usize) -> Sink {
        Sink { max, kept: Vec::new(), counts: BTreeMap::new(), total: 0, notes: Vec::new() }
    }
    /// Whether the next finding will be kept (so its witness is worth computing).
    pub(crate) fn wants(&self) -> bool {
        self.kept.len() < self.max
    }
    pub(crate) fn count(&mut self, a: Anomaly) {
        *self.counts.entry(a).or_insert(0) += 1;
        self.total += 1;
    }
    pub(crate) fn push(&mut self, f: Finding) {
        self.count(f.anomaly);
        if self.wants() {
            self.kept.push(f);
        }
    }
}

/// Turn a path of units into hops between transactions. `forced` labels extra edges.
pub(crate) fn unit_hops(h: &History, wf: &Wf, units: &Units, path: &[u32], forced: &BTreeMap<(u32, u32), (u32, u32, u32)>) -> Vec<Hop> {
    let mut hops = Vec::new();
    for pair in path.windows(2) {
        hops.push(unit_hop(h, wf, units, pair[0], pair[1], forced));
    }
    hops
}

/// The hop for one edge `a → b` of units. `forced` maps (a, b) to (first write, second write,
/// read) for forced write-order edges.
pub(crate) fn unit_hop(h: &History, wf: &Wf, units: &Units, a: u32, b: u32, forced: &BTreeMap<(u32, u32), (u32, u32, u32)>) -> Hop {
    let (ta, tb) = (units.txn[a as usize], units.txn[b as usize]);
    let ops = |u: u32| {
        if units.gran == Gran::Op { Some(units.op_of(u as usize)) } else { None }
    };
    if units.next[a as usize] == b {
        return Hop::Program { from: ta, to: tb, from_op: ops(a), to_op: ops(b), after: false };
    }
    // Reads-from: find a read of b that read a write of a.
    let reads: Vec<u32> = match units.gran {
        Gran::Op => vec![units.op_of(b as usize)],
        Gran::Txn => h.txns[tb as usize].ops().map(|o| o as u32).collect(),
    };
    for r in reads {
        let r = r as usize;
        if wf.class[r].observes() && h.rf[r] != crate::history::RF_INIT {
            let w = h.rf[r];
            if units.writer_unit(h, w) == a {
                return Hop::ReadsFrom { from: ta, to: tb, write: w, read: r as u32 };
            }
        }
    }
    if let Some((first, second, read)) = forced.get(&(a, b)) {
        return Hop::WriteOrder { from: ta, to: tb, first: *first, second: *second, read: *read };
    }
    Hop::Program { from: ta, to: tb, from_op: ops(a), to_op: ops(b), after: true }
}
