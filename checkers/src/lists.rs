//! List-append histories — what most Jepsen tests record — in causim's write model.
//!
//! An `append k v` is a write of `k` with value `v` (appended values are unique per key); a read
//! of `k` returning the list `[v1 … vn]` is a read of `vn`, the append whose state it saw, and
//! `[]` (or `nil`) a read of the initial, empty list. Every level then applies unchanged. A list
//! says more than its last element, as Elle's list-append checker uses it: the reads of a key
//! return states of one list, so
//!
//! * **each read is a prefix of the longest read of its key**, and the longest gives the order
//!   of the appends it holds. A committed append that no read returned comes after all of them
//!   (a state holding it would show it, since every state is a prefix of the next). These are
//!   **known write orders**: `ccv`, `rc`, `ra` and `tcc` add them to the write orders that reads
//!   force, so a read that misses an append ordered before the one it saw, or causality that
//!   runs against the list's order, closes a cycle (CyclicCF, NonMonoReadCM, FracturedReadCM,
//!   ConflictCM, named by the weakest set of edges that closes it);
//! * reads that are not prefixes of one another, or a read that lists an element twice, are
//!   **IncompatibleOrder** (Elle's incompatible-order and duplicate-elements): no single order
//!   of appends explains them. Forbidden where each key has one order of writes (`ccv`, `rc`,
//!   `ra`, `tcc`, `linearizable`); `cc`, `cm` and the session guarantees let replicas order
//!   concurrent appends differently. A key with incompatible reads gets no known order;
//! * **every element**, not only the last, must come from an append of a transaction that did
//!   not abort, and not from the reader's own later append: ThinAirRead, AbortedRead and
//!   FutureRead (Elle's garbage reads, G1a and future reads) for the elements before the last.
//!
//! Reads of aborted and failed (`info`) transactions are not judged, as everywhere; appends of
//! failed transactions order nothing unless a read returns them.

use crate::anomaly::Anomaly;
use crate::finding::{Detail, Finding};
use crate::fxhash::{FxHashMap, map_with_capacity};
use crate::history::{History, NONE, Outcome, Val};
use crate::level::Level;
use crate::wf::{ReadClass, Wf};
use std::collections::BTreeMap;

/// Every element of every list read, by read op.
#[derive(Clone, Debug, Default)]
pub(crate) struct ListReads {
    /// (read op, start in `elems`, length), in op order.
    reads: Vec<(u32, u32, u32)>,
    elems: Vec<Val>,
}

impl ListReads {
    /// Record read op `o`'s list (reads must be recorded in op order).
    pub(crate) fn push(&mut self, o: u32, list: &[Val]) {
        debug_assert!(self.reads.last().is_none_or(|r| r.0 < o));
        self.reads.push((o, self.elems.len() as u32, list.len() as u32));
        self.elems.extend_from_slice(list);
    }

    /// The list read op `o` returned (empty for a read of the initial value).
    pub(crate) fn of(&self, o: u32) -> Option<&[Val]> {
        let i = self.reads.binary_search_by_key(&o, |r| r.0).ok()?;
        let (_, start, len) = self.reads[i];
        Some(&self.elems[start as usize..(start + len) as usize])
    }

    fn iter(&self) -> impl Iterator<Item = (u32, &[Val])> + '_ {
        self.reads.iter().map(|&(o, s, l)| (o, &self.elems[s as usize..(s + l) as usize]))
    }
}

/// What the lists of a history show.
pub(crate) struct ListFacts {
    /// Element anomalies (at most one per read) and IncompatibleOrder (one per key).
    pub findings: Vec<Finding>,
    /// Known write orders: (first write op, second write op, the read that shows it).
    pub order: Vec<(u32, u32, u32)>,
    /// Keys whose order was recovered.
    pub keys_ordered: usize,
}

impl ListFacts {
    /// The findings `level` forbids.
    pub(crate) fn findings_at(&self, level: Level) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| level.forbids(f.anomaly))
    }
}

/// Judge the elements of every list read and recover each key's order of appends.
pub(crate) fn analyze(h: &History, wf: &Wf, lists: &ListReads) -> ListFacts {
    // (key, value) → write op, for the keys lists mention.
    let mut writes: FxHashMap<(u32, Val), u32> = map_with_capacity(h.ops.len() / 2);
    for (o, op) in h.ops.iter().enumerate() {
        if op.is_write() {
            writes.insert((op.key, op.val()), o as u32);
        }
    }
    let judged = |o: u32| matches!(wf.class[o as usize], ReadClass::External | ReadClass::Internal | ReadClass::NonRepeatable);
    let mut findings = Vec::new();
    let mut by_key: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    // Everything a committed transaction read, judged or not: an append in it was observed.
    let mut observed: FxHashMap<(u32, Val), ()> = map_with_capacity(lists.elems.len());
    for (o, list) in lists.iter() {
        let key = h.ops[o as usize].key;
        if h.txns[h.op_txn[o as usize] as usize].outcome == Outcome::Ok {
            for v in list {
                observed.insert((key, *v), ());
            }
        }
        if !judged(o) {
            continue;
        }
        by_key.entry(key).or_default().push(o);
        let t = h.op_txn[o as usize];
        // The last element is the read's own value, judged like any read.
        let before_last = &list[..list.len().saturating_sub(1)];
        for &v in before_last {
            let w = writes.get(&(key, v)).copied();
            let anomaly = match w {
                None => Some(Anomaly::ThinAirRead),
                Some(w) => {
                    let wt = h.op_txn[w as usize];
                    if h.txns[wt as usize].outcome == Outcome::Aborted {
                        Some(Anomaly::AbortedRead)
                    } else if wt == t && w > o {
                        Some(Anomaly::FutureRead)
                    } else {
                        None
                    }
                }
            };
            if let Some(anomaly) = anomaly {
                findings.push(Finding {
                    anomaly,
                    key: Some(key),
                    read: Some(o),
                    detail: Detail::Element { write: w.unwrap_or(NONE), value: v },
                });
                break;
            }
        }
    }
    // The appends of each key lists mention, in op order.
    let mut key_writes: BTreeMap<u32, Vec<u32>> = by_key.keys().map(|k| (*k, Vec::new())).collect();
    for (o, op) in h.ops.iter().enumerate() {
        if op.is_write()
            && let Some(list) = key_writes.get_mut(&op.key)
        {
            list.push(o as u32);
        }
    }
    let mut order = Vec::new();
    let mut keys_ordered = 0;
    let mut seen: FxHashMap<Val, ()> = map_with_capacity(16);
    for (&key, reads) in &by_key {
        let list = |o: u32| lists.of(o).expect("recorded");
        // The longest read (the first of them in op order).
        let longest = reads.iter().copied().fold(reads[0], |best, o| if list(o).len() > list(best).len() { o } else { best });
        let mut incompatible = None;
        for &o in reads {
            seen.clear();
            if list(o).iter().any(|v| seen.insert(*v, ()).is_some()) {
                incompatible = Some((o, o));
                break;
            }
            if !list(longest).starts_with(list(o)) {
                incompatible = Some((o, longest));
                break;
            }
        }
        if let Some((o, first)) = incompatible {
            findings.push(Finding { anomaly: Anomaly::IncompatibleOrder, key: Some(key), read: Some(o), detail: Detail::Repeat { first } });
            continue;
        }
        let elems: Vec<u32> = list(longest)
            .iter()
            .filter_map(|v| writes.get(&(key, *v)).copied())
            .filter(|w| h.txns[h.op_txn[*w as usize] as usize].outcome != Outcome::Aborted)
            .collect();
        let Some(&last) = elems.last() else {
            continue;
        };
        keys_ordered += 1;
        for pair in elems.windows(2) {
            order.push((pair[0], pair[1], longest));
        }
        // Committed appends no read returned come after everything read.
        for &w in &key_writes[&key] {
            if !observed.contains_key(&(key, h.ops[w as usize].val())) && h.txns[h.op_txn[w as usize] as usize].outcome == Outcome::Ok {
                order.push((last, w, longest));
            }
        }
    }
    findings.sort_by_key(|f| (f.read, f.anomaly));
    ListFacts { findings, order, keys_ordered }
}

/// Why `first` precedes `second` in the list order `read` shows, for explanations:
/// `Some(true)` when the list holds both, `Some(false)` when `second` was never read (so it
/// comes after everything read), `None` when this is not a list order.
pub(crate) fn shows_order(h: &History, first: u32, second: u32, read: u32) -> Option<bool> {
    let list = h.lists.as_ref()?.of(read)?;
    let (a, b) = (h.ops[first as usize].val(), h.ops[second as usize].val());
    let pa = list.iter().position(|v| *v == a)?;
    match list.iter().position(|v| *v == b) {
        Some(pb) if pa < pb => Some(true),
        Some(_) => None,
        None => Some(false),
    }
}
