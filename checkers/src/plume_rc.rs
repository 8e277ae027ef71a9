//! `rc-plume`: read committed as Plume's checker decides it.
//!
//! Plume's paper characterises read committed as "no TAP-a…i", which is Biswas & Enea's axiom
//! (`rc` here). Its checker, in RC mode, stops after the causal phase: it never builds the
//! commit order, so it decides a weaker property, which users comparing verdicts with Plume
//! need by name. A history satisfies `rc-plume` when
//!
//! * it is well-formed, except that a read following the transaction's own *read* of the key
//!   is judged as a repeated read (allowed) even if an own write of the key came before — Plume
//!   compares a read only with the nearest earlier operation on its key (TAP-j rather than
//!   TAP-d);
//! * session order and reads-from are acyclic (TAP-g, checked with the other levels);
//! * no transaction reads the initial value of `x` after reading another key from a transaction
//!   that writes `x` (TAP-h for initial values: Plume's `initReadMono`).
//!
//! Reads of written values are never compared with the commit order, so the TAP-h and TAP-i
//! shapes with written values pass.

use crate::anomaly::Anomaly;
use crate::finding::{Detail, Finding, Hop, Sink};
use crate::history::{History, KIND_WRITE_FINAL, Outcome, RF_INIT};
use crate::wf::{ReadClass, Wf};

/// Report the reads of initial values that Plume's RC mode rejects (NonMonoReadCO).
pub(crate) fn check(h: &History, wf: &Wf, sink: &mut Sink) {
    // (writer transaction, the read that observed it, its key), per transaction.
    let mut seen: Vec<(u32, u32, u32)> = Vec::new();
    for (t3, txn) in h.txns.iter().enumerate() {
        if txn.outcome != Outcome::Ok {
            continue;
        }
        seen.clear();
        for o in txn.ops() {
            let op = h.ops[o];
            if op.is_write() {
                continue;
            }
            let class = wf.class[o];
            if h.rf[o] != RF_INIT {
                if class.observes() {
                    seen.push((h.op_txn[h.rf[o] as usize], o as u32, op.key));
                }
                continue;
            }
            // Judged reads of the initial value, including those Plume sees as repeated reads
            // (the nearest earlier operation on the key is a read) after an own write.
            let repeated = wf.also_repeats.get(&(o as u32)).is_some_and(|a| a.1);
            if !matches!(class, ReadClass::External | ReadClass::NonRepeatable) && !repeated {
                continue;
            }
            let shown = seen.iter().find_map(|&(tb, b, key)| {
                if key == op.key {
                    return None;
                }
                final_write(h, tb, op.key).map(|newer| (tb, b, newer))
            });
            if let Some((tb, b, newer)) = shown {
                sink.push(Finding {
                    anomaly: Anomaly::NonMonoReadCO,
                    key: Some(op.key),
                    read: Some(o as u32),
                    detail: Detail::Shadow {
                        newer,
                        to_newer: Vec::new(),
                        to_reader: vec![Hop::ReadsFrom { from: tb, to: t3 as u32, write: h.rf[b as usize], read: b }],
                    },
                });
            }
        }
    }
}

/// The final write op of `key` in transaction `t`, if it writes the key.
fn final_write(h: &History, t: u32, key: u32) -> Option<u32> {
    h.txns[t as usize].ops().rev().find(|o| h.ops[*o].kind == KIND_WRITE_FINAL && h.ops[*o].key == key).map(|o| o as u32)
}
