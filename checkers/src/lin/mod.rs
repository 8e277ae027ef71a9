//! The `linearizable` level: each key is a read/write register, and its history must be
//! linearizable (Herlihy & Wing 1990): there is one order of its operations that respects real
//! time (an operation that completed before another was invoked comes first) in which every
//! read returns the latest write (or the initial value).
//!
//! Linearizability is local, so keys are checked one by one (P-compositionality: Horn &
//! Kroening; Porcupine partitions the same way). Each key's operations are found here, searched
//! in [`search`], and a failure is shrunk ([`shrink`]) to a smallest failing window and named
//! ([`proof`]).
//!
//! What goes in, per key:
//! * single-operation transactions with an `invoke_ns`/`complete_ns` interval (closed: two
//!   operations touching at an instant are concurrent);
//! * `ok` operations over their interval; `failed` writes from their invocation on, with no end
//!   (Jepsen's `info`: they may take effect at any later time, or never); `failed` reads are not
//!   judged; `aborted` operations have no effect;
//! * reads that are well-formedness anomalies by themselves (ThinAirRead, AbortedRead) are
//!   reported as such and left out of the search.
//!
//! A key touched by a transaction of several operations, or by a transaction without an
//! interval, is not checked (a register operation is one read or one write at one moment), and a
//! key whose search exceeds its budget gets no verdict: the report then says `complete: false`
//! and names them, never "linearizable".

pub(crate) mod explain;
mod proof;
mod search;
mod shrink;

pub(crate) use proof::Proof;

use crate::CheckOptions;
use crate::anomaly::Anomaly;
use crate::finding::{Detail, Finding, Sink};
use crate::history::{History, NONE, Outcome, RF_INIT};
use crate::wf::{ReadClass, Wf};
use search::{RegOp, Verdict};
use std::collections::BTreeSet;

/// Why a key cannot be checked, with the first transaction that shows it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Unchecked {
    MultiOp,
    NoInterval,
}

/// Check every key; report violations into `sink`. Returns whether every key got a verdict.
pub(crate) fn check(h: &History, wf: &Wf, options: &CheckOptions, sink: &mut Sink) -> bool {
    let keys = h.key_count();
    let mut unchecked: Vec<Option<(Unchecked, u32)>> = vec![None; keys];
    let mut registers: Vec<Vec<RegOp>> = vec![Vec::new(); keys];
    // The value index of each write (0 is the initial value), and the next index per key.
    let mut value_of = vec![NONE; h.ops.len()];
    let mut values = vec![1u32; keys];
    let mut reads: Vec<(u32, u64, u64)> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Aborted {
            continue;
        }
        let ops = txn.ops();
        let why = if ops.len() > 1 { Unchecked::MultiOp } else { Unchecked::NoInterval };
        let times = h.times.get(&(t as u32));
        if ops.len() > 1 || times.is_none() {
            for o in ops {
                let k = h.ops[o].key as usize;
                unchecked[k] = unchecked[k].or(Some((why, t as u32)));
            }
            continue;
        }
        let (Some(o), Some(&(inv, cmp))) = (ops.clone().next(), times) else {
            continue;
        };
        let op = h.ops[o];
        if op.is_write() {
            let k = op.key as usize;
            value_of[o] = values[k];
            let failed = txn.outcome == Outcome::Failed;
            registers[k].push(RegOp { inv, cmp: if failed { u64::MAX } else { cmp }, write: true, val: values[k], op: o as u32, failed });
            values[k] += 1;
        } else if txn.outcome == Outcome::Ok && wf.class[o] == ReadClass::External {
            reads.push((o as u32, inv, cmp));
        }
    }
    for (o, inv, cmp) in reads {
        let k = h.ops[o as usize].key as usize;
        let w = h.rf[o as usize];
        let val = if w == RF_INIT { 0 } else { value_of[w as usize] };
        // A write that is not a register operation makes the key unchecked anyway.
        if val != NONE {
            registers[k].push(RegOp { inv, cmp, write: false, val, op: o, failed: false });
        }
    }
    let mut unknown: Vec<u32> = Vec::new();
    let mut not_minimal: Vec<u32> = Vec::new();
    for k in 0..keys {
        if unchecked[k].is_some() || registers[k].is_empty() {
            continue;
        }
        let ops = std::mem::take(&mut registers[k]);
        let values = values[k] as usize;
        let mut budget = options.lin_steps_max;
        let prepared = search::prepare(&ops, values);
        match search::check(&prepared, values, &mut budget) {
            Verdict::Linearizable => {}
            Verdict::Unknown => unknown.push(k as u32),
            Verdict::Violation { chunk, start } => {
                let (finding, minimal) = explain_failure(k as u32, ops, &prepared[chunk], start, values, options.lin_steps_max);
                if !minimal {
                    not_minimal.push(k as u32);
                }
                sink.push(finding);
            }
        }
    }
    notes(h, &unchecked, &unknown, &not_minimal, options, sink);
    unknown.is_empty() && unchecked.iter().all(Option::is_none)
}

/// Shrink a failing key to a smallest window and name it. `chunk` is the part of the key the
/// search found impossible from value `start`.
fn explain_failure(key: u32, ops: Vec<RegOp>, chunk: &[RegOp], start: u32, values: usize, steps: u64) -> (Finding, bool) {
    let mut budget = steps;
    // First try the failing chunk with every operation of the values it involves (their writes,
    // and their reads anywhere): the chunk's failure depends on nothing else. Fall back on the
    // whole key if that is somehow linearizable.
    let in_chunk: BTreeSet<u32> = chunk.iter().map(|o| o.op).collect();
    let involved: BTreeSet<u32> = chunk.iter().map(|o| o.val).chain([start]).collect();
    let narrow: Vec<RegOp> = ops.iter().filter(|o| in_chunk.contains(&o.op) || involved.contains(&o.val)).copied().collect();
    let start_set = if narrow.len() < ops.len()
        && matches!(search::check(&search::prepare(&narrow, values), values, &mut budget), Verdict::Violation { .. })
    {
        narrow
    } else {
        ops
    };
    let (window, minimal) = shrink::shrink(start_set, values, &mut budget);
    let prepared = search::prepare(&window, values);
    let proof = proof::prove(&prepared);
    let anomaly = match &proof {
        Some(Proof::FutureRead { .. }) => Anomaly::RealtimeFutureRead,
        Some(Proof::Stale { .. }) => Anomaly::StaleRead,
        Some(Proof::TwoWay { .. }) | None => Anomaly::NonLinearizable,
    };
    let finding = Finding {
        anomaly,
        key: Some(key),
        read: proof.as_ref().and_then(Proof::read).map(|r| r.op),
        detail: Detail::Linear { window: prepared.iter().map(|o| o.op).collect(), proof },
    };
    (finding, minimal)
}

/// Notes on the keys without a verdict (and windows that may not be smallest).
fn notes(
    h: &History,
    unchecked: &[Option<(Unchecked, u32)>],
    unknown: &[u32],
    not_minimal: &[u32],
    options: &CheckOptions,
    sink: &mut Sink,
) {
    let some_keys = |ks: &[u32]| {
        let mut names: Vec<String> = ks.iter().take(5).map(|k| h.key(*k).to_string()).collect();
        if ks.len() > 5 {
            names.push(format!("… ({} in all)", ks.len()));
        }
        names.join(", ")
    };
    let plural = |n: usize| if n == 1 { "key" } else { "keys" };
    for why in [Unchecked::MultiOp, Unchecked::NoInterval] {
        let ks: Vec<u32> = (0..unchecked.len() as u32).filter(|k| unchecked[*k as usize].is_some_and(|(w, _)| w == why)).collect();
        let Some(first) = ks.first() else { continue };
        let t = unchecked[*first as usize].expect("listed").1 as usize;
        let txn = &h.txns[t];
        let at = format!("transaction {} (line {})", txn.id, txn.line);
        let n = ks.len();
        sink.notes.push(match why {
            Unchecked::MultiOp => format!(
                "{n} {} not checked for linearizability ({}): each is touched by a transaction of several operations, which is not a register operation (first: {at} on key {}); linearizable judges single-operation reads and writes",
                plural(n),
                some_keys(&ks),
                h.key(*first)
            ),
            Unchecked::NoInterval if h.times.is_empty() => {
                "the history records no real-time intervals (invoke_ns/complete_ns), so linearizability cannot be checked".to_string()
            }
            Unchecked::NoInterval => format!(
                "{n} {} not checked for linearizability ({}): a transaction on each has no invoke_ns/complete_ns interval (first: {at} on key {})",
                plural(n),
                some_keys(&ks),
                h.key(*first)
            ),
        });
    }
    if !unknown.is_empty() {
        let n = unknown.len();
        sink.notes.push(format!(
            "{n} {} got no linearizability verdict: the search ran out of its budget of {} steps per key (lin_steps_max; causim check --lin-steps): {}",
            plural(n),
            options.lin_steps_max,
            some_keys(unknown)
        ));
    }
    if !not_minimal.is_empty() {
        sink.notes.push(format!(
            "the failing window of {} may not be the smallest: shrinking it ran out of its budget (lin_steps_max; causim check --lin-steps)",
            some_keys(not_minimal)
        ));
    }
}
