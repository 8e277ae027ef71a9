//! Well-formedness: what can be said about each read from its own transaction alone.
//!
//! One pass over the history classifies every read. A read is judged only if its transaction
//! committed (`ok`); reads of `aborted` and `failed` transactions are never judged. The classes
//! ThinAir, Aborted, Future, NotMyOwnWrite, NotMyLastWrite and Intermediate are anomalies at
//! every level; NonRepeatable is an anomaly from read atomic up.
//!
//! A read can show two anomalies at once: after writing `x` and reading its own value, a
//! transaction that reads another transaction's `x` both ignores its own write (NotMyOwnWrite,
//! Plume's TAP-d) and reads `x` twice with different results (NonRepeatableRead, TAP-j, the
//! name Plume's checker gives it). Such reads are classed NotMyOwnWrite (or NotMyLastWrite,
//! when the value is an older own write) and listed in `also_repeats`, so that both names are
//! reported where both are forbidden.
//!
//! A multi-function transaction (`fn`, `fn_after`) is judged along its partial order
//! ([`crate::fn_order`]): a read must return the last listed write of its key among the
//! operations that precede it (NotMyOwnWrite / NotMyLastWrite otherwise), or, when none does,
//! an external value; a write of its own transaction that it precedes is a FutureRead, and one
//! made by a concurrent function (a sibling branch) is a SiblingWriteRead: no TCC protocol lets
//! a function see what a function it does not follow wrote. `also_repeats` is left out there.

use crate::fn_order::FnOrder;
use crate::history::{History, NONE, Outcome, RF_INIT, RF_NONE, WRITER_ABORTED, WRITER_OVERWRITTEN, WRITER_TXN};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum ReadClass {
    /// A write, not a read.
    NotRead,
    /// A read of an aborted or failed transaction: not judged.
    Unjudged,
    /// Reads another transaction's final write, or the initial value: judged by the levels.
    External,
    /// Reads its own transaction's latest earlier write of the key: fine.
    Internal,
    ThinAir,
    Aborted,
    Future,
    /// Reads its own transaction's write made by a concurrent function.
    Sibling,
    NotMyOwnWrite,
    NotMyLastWrite,
    Intermediate,
    /// An external read of a key the transaction already read from a different write.
    NonRepeatable,
}

impl ReadClass {
    /// The read observed another transaction's write (so it adds a reads-from edge).
    #[inline]
    pub(crate) fn observes(self) -> bool {
        matches!(self, ReadClass::External | ReadClass::Intermediate | ReadClass::NonRepeatable | ReadClass::NotMyOwnWrite)
    }
}

pub(crate) struct Wf {
    pub class: Vec<ReadClass>,
    /// For each NonRepeatable read, the earlier read of the same key it disagrees with.
    pub repeated: BTreeMap<u32, u32>,
    /// NotMyOwnWrite and NotMyLastWrite reads that also disagree with the transaction's latest earlier read of the
    /// key: that read, and whether it is the nearest earlier operation on the key (so that
    /// Plume's checker, which looks only at the nearest one, calls the read non-repeatable
    /// rather than NotMyOwnWrite).
    pub also_repeats: BTreeMap<u32, (u32, bool)>,
}

pub(crate) fn analyze(h: &History) -> Wf {
    let mut class = vec![ReadClass::NotRead; h.ops.len()];
    let mut repeated = BTreeMap::new();
    let mut also_repeats = BTreeMap::new();
    let keys = h.keys.len();
    // Per key, valid while stamp[key] == current transaction + 1: the transaction's latest own
    // write of the key, its first external read of the key and its latest read of the key.
    // (stamp, own write, first read, last read) per key, together so that one cache line
    // serves all.
    let mut slots = vec![(0u32, NONE, NONE, NONE); keys];
    let ordered = !h.orders.is_empty();
    for (t, txn) in h.txns.iter().enumerate() {
        let judged = txn.outcome == Outcome::Ok;
        let mark = t as u32 + 1;
        if ordered && let Some(order) = h.orders.get(&(t as u32)) {
            classify_ordered(h, t, order, judged, &mut slots, &mut class, &mut repeated);
            continue;
        }
        for o in txn.ops() {
            let op = h.ops[o];
            let slot = &mut slots[op.key as usize];
            if slot.0 != mark {
                *slot = (mark, NONE, NONE, NONE);
            }
            if op.is_write() {
                slot.1 = o as u32;
                continue;
            }
            if !judged {
                class[o] = ReadClass::Unjudged;
                continue;
            }
            let w = h.rf[o];
            let wt = h.rf_txn[o];
            class[o] = if w == RF_NONE {
                ReadClass::ThinAir
            } else if w != RF_INIT && (wt & WRITER_TXN) as usize == t {
                if w as usize > o {
                    ReadClass::Future
                } else if slot.1 == w {
                    ReadClass::Internal
                } else {
                    if slot.3 != NONE && h.rf[slot.3 as usize] != w && h.rf[slot.3 as usize] != RF_NONE {
                        also_repeats.insert(o as u32, (slot.3, slot.3 > slot.1));
                    }
                    ReadClass::NotMyLastWrite
                }
            } else if w != RF_INIT && wt & WRITER_ABORTED != 0 {
                ReadClass::Aborted
            } else if slot.1 != NONE {
                if slot.3 != NONE && h.rf[slot.3 as usize] != w && h.rf[slot.3 as usize] != RF_NONE {
                    also_repeats.insert(o as u32, (slot.3, slot.3 > slot.1));
                }
                ReadClass::NotMyOwnWrite
            } else if w != RF_INIT && wt & WRITER_OVERWRITTEN != 0 {
                ReadClass::Intermediate
            } else if slot.2 == NONE {
                slot.2 = o as u32;
                ReadClass::External
            } else if h.rf[slot.2 as usize] == w {
                ReadClass::External
            } else {
                repeated.insert(o as u32, slot.2);
                ReadClass::NonRepeatable
            };
            slot.3 = o as u32;
        }
    }
    Wf { class, repeated, also_repeats }
}

/// [`analyze`] for one transaction with a function order: each read against the writes that
/// precede it. Transactions are small, so each read looks back over its transaction's earlier
/// operations (a write that precedes a read is listed before it).
fn classify_ordered(
    h: &History,
    t: usize,
    order: &FnOrder,
    judged: bool,
    slots: &mut [(u32, u32, u32, u32)],
    class: &mut [ReadClass],
    repeated: &mut BTreeMap<u32, u32>,
) {
    let txn = &h.txns[t];
    let start = txn.ops_start as usize;
    let mark = t as u32 + 1;
    for o in txn.ops() {
        let op = h.ops[o];
        if op.is_write() {
            continue;
        }
        if !judged {
            class[o] = ReadClass::Unjudged;
            continue;
        }
        let own = (start..o).rev().find(|&p| h.ops[p].is_write() && h.ops[p].key == op.key && order.precedes(p - start, o - start));
        let w = h.rf[o];
        let wt = h.rf_txn[o];
        class[o] = if w == RF_NONE {
            ReadClass::ThinAir
        } else if w != RF_INIT && (wt & WRITER_TXN) as usize == t {
            if own == Some(w as usize) {
                ReadClass::Internal
            } else if order.precedes(w as usize - start, o - start) {
                ReadClass::NotMyLastWrite
            } else if order.precedes(o - start, w as usize - start) {
                ReadClass::Future
            } else {
                ReadClass::Sibling
            }
        } else if w != RF_INIT && wt & WRITER_ABORTED != 0 {
            ReadClass::Aborted
        } else if own.is_some() {
            ReadClass::NotMyOwnWrite
        } else if w != RF_INIT && wt & WRITER_OVERWRITTEN != 0 {
            ReadClass::Intermediate
        } else {
            // The first external read of the key (in list order) is the one others must agree
            // with: the transaction reads each key from one snapshot, whichever function reads.
            let slot = &mut slots[op.key as usize];
            if slot.0 != mark {
                *slot = (mark, NONE, o as u32, NONE);
                ReadClass::External
            } else if h.rf[slot.2 as usize] == w {
                ReadClass::External
            } else {
                repeated.insert(o as u32, slot.2);
                ReadClass::NonRepeatable
            }
        };
    }
}
