//! The four session guarantees (Terry et al.), at operation granularity.
//!
//! Each guarantee makes some writes *visible* to a read `α` of key `x` in session `s`, through
//! a path of a fixed shape (`po` is program order: session order plus `after` links; `rf` is
//! reads-from):
//!
//! | guarantee | `v` (a write of `x`) is visible to `α` when | anomaly |
//! |---|---|---|
//! | read-your-writes | `v po α` | MissedOwnWrite |
//! | monotonic reads | `v rf β po α` for a read `β` of `x` | NonMonotonicRead |
//! | monotonic writes | `v po w' rf β po α` | NonMonotonicWrite |
//! | writes follow reads | `v rf β₁ po w' rf β po α` for a read `β₁` of `x` | MissedReadDependency |
//!
//! The read is a violation when it returns a value that causally precedes a visible `v` (or the
//! initial value while some `v` is visible). Session guarantees say nothing about writes that
//! are merely concurrent, nor about one arbitration order across sessions, so unlike `ccv` no
//! write-order cycle is reported here. Every violation found here is also a `cc` violation.

use crate::anomaly::Anomaly;
use crate::causal::{Ctx, PoClock, SessionWrites};
use crate::finding::{Detail, Finding, Hop, Sink};
use crate::graph::Gran;
use crate::history::{KIND_WRITE_FINAL, NONE, RF_INIT};
use crate::level::Level;
use crate::wf::ReadClass;
use std::collections::{BTreeMap, BTreeSet};

/// (session, bound, the read β that made the session's prefix visible).
type Visible = Vec<(u32, u32, u32)>;

fn merge(into: &mut Visible, from: &[(u32, u32, u32)]) {
    for &(s, b, beta) in from {
        match into.binary_search_by_key(&s, |e| e.0) {
            Ok(i) => {
                if into[i].1 < b {
                    into[i] = (s, b, beta);
                }
            }
            Err(i) => into.insert(i, (s, b, beta)),
        }
    }
}

pub(crate) fn check(cx: &Ctx<'_>, level: Level, sink: &mut Sink) {
    let [ryw, mr, mw, wfr] = level.guarantees();
    let h = cx.h;
    let units = cx.units;
    debug_assert_eq!(units.gran, Gran::Op);
    let clocks = cx.clocks;
    let po = PoClock::build(units);
    let checked = |o: usize| matches!(cx.wf.class[o], ReadClass::External | ReadClass::Internal | ReadClass::NonRepeatable);
    let writer = |o: usize| -> u32 {
        let w = h.rf[o];
        if w == RF_INIT { NONE } else { units.writer_unit(h, w) }
    };
    // Keys read by checked reads, and for each key the reads per session (deduplicated:
    // an entry that adds nothing over the previous one of its session is dropped).
    let mut keys = BTreeSet::new();
    let mut reads: BTreeMap<u32, Vec<(u32, u32, u32, u32)>> = BTreeMap::new();
    let mut last_kept: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for u in 0..units.n {
        let o = units.op_of(u) as usize;
        let op = &h.ops[o];
        if !op.is_read() {
            continue;
        }
        if checked(o) {
            keys.insert(op.key);
        }
        let w = writer(o);
        if w == NONE || !cx.wf.class[o].observes() && cx.wf.class[o] != ReadClass::Internal {
            continue;
        }
        let slot = (op.key, units.session[u]);
        if let Some(last) = last_kept.get(&slot)
            && clocks.before_eq(w as usize, *last as usize)
        {
            continue;
        }
        last_kept.insert(slot, w);
        reads.entry(op.key).or_default().push((units.session[u], units.spos[u], u as u32, w));
    }
    for list in reads.values_mut() {
        list.sort_unstable();
    }
    let sw = SessionWrites::build(h, units, &keys);
    let after_targets: BTreeSet<u32> = units.after_preds.values().flatten().copied().collect();
    let mut running: Vec<Visible> = vec![Vec::new(); h.sessions.len()];
    let mut snapshots: BTreeMap<u32, Visible> = BTreeMap::new();

    let reads_before = |key: u32, s: u32, bound: u32| -> &[(u32, u32, u32, u32)] {
        match reads.get(&key) {
            None => &[],
            Some(list) => {
                let lo = list.partition_point(|e| e.0 < s);
                let hi = list.partition_point(|e| (e.0, e.1) < (s, bound));
                &list[lo..hi]
            }
        }
    };
    let txn = |u: u32| units.txn[u as usize];
    let op = |u: u32| units.op_of(u as usize);
    let program = |a: u32, b: u32| Hop::Program {
        from: txn(a),
        to: txn(b),
        from_op: Some(op(a)),
        to_op: Some(op(b)),
        after: units.session[a as usize] != units.session[b as usize],
    };
    let reads_from = |w: u32, r: u32| Hop::ReadsFrom { from: txn(w), to: txn(r), write: op(w), read: op(r) };

    for u in 0..units.n {
        let s = units.session[u] as usize;
        if let Some(targets) = units.after_preds.get(&(u as u32)) {
            for a in targets {
                if let Some(snap) = snapshots.get(a) {
                    let snap = snap.clone();
                    merge(&mut running[s], &snap);
                }
            }
        }
        let o = units.op_of(u) as usize;
        if checked(o) {
            let key = h.ops[o].key;
            let uw = writer(o);
            let stale = |tv: u32| tv != uw && (uw == NONE || clocks.before(uw as usize, tv as usize));
            let mut po_sessions = vec![(units.session[u], units.spos[u])];
            po_sessions.extend(po.others(u).iter().copied());
            let mut found: Option<(Anomaly, u32, Vec<Hop>)> = None;
            if ryw {
                for &(s2, bound) in &po_sessions {
                    if let Some(tv) = sw.last_before(key, s2, bound).filter(|tv| stale(*tv)) {
                        found = Some((Anomaly::MissedOwnWrite, tv, vec![program(tv, u as u32)]));
                        break;
                    }
                }
            }
            if mr && found.is_none() {
                'mr: for &(s2, bound) in &po_sessions {
                    for e in reads_before(key, s2, bound).iter().rev() {
                        if stale(e.3) {
                            found = Some((Anomaly::NonMonotonicRead, e.3, vec![reads_from(e.3, e.2), program(e.2, u as u32)]));
                            break 'mr;
                        }
                    }
                }
            }
            if mw && found.is_none() {
                for &(s2, bound, beta) in &running[s] {
                    if let Some(tv) = sw.last_before(key, s2, bound).filter(|tv| stale(*tv)) {
                        let w2 = writer(op(beta) as usize);
                        found =
                            Some((Anomaly::NonMonotonicWrite, tv, vec![program(tv, w2), reads_from(w2, beta), program(beta, u as u32)]));
                        break;
                    }
                }
            }
            if wfr && found.is_none() {
                'wfr: for &(s2, bound, beta) in &running[s] {
                    for e in reads_before(key, s2, bound).iter().rev() {
                        if stale(e.3) {
                            let w2 = writer(op(beta) as usize);
                            found = Some((
                                Anomaly::MissedReadDependency,
                                e.3,
                                vec![reads_from(e.3, e.2), program(e.2, w2), reads_from(w2, beta), program(beta, u as u32)],
                            ));
                            break 'wfr;
                        }
                    }
                }
            }
            if let Some((anomaly, tv, to_reader)) = found {
                if sink.wants() {
                    let newer = write_op(cx, tv);
                    let to_newer = if uw == NONE { Vec::new() } else { cx_witness(cx, uw, tv) };
                    sink.push(Finding {
                        anomaly,
                        key: Some(key),
                        read: Some(o as u32),
                        detail: Detail::Shadow { newer, to_newer, to_reader },
                    });
                } else {
                    sink.count(anomaly);
                }
            }
        }
        // This read makes the program-order past of its writer visible to what follows it.
        if h.ops[o].is_read() && (cx.wf.class[o].observes() || cx.wf.class[o] == ReadClass::Internal) {
            let w = writer(o);
            if w != NONE {
                let mut contribution: Visible = vec![(units.session[w as usize], units.spos[w as usize], u as u32)];
                for &(s2, b) in po.others(w as usize) {
                    contribution.push((s2, b, u as u32));
                }
                contribution.sort_unstable();
                merge(&mut running[s], &contribution);
            }
        }
        if after_targets.contains(&(u as u32)) {
            snapshots.insert(u as u32, running[s].clone());
        }
        if units.next[u] == NONE && !after_targets.contains(&(u as u32)) {
            running[s] = Vec::new();
        }
    }
}

fn write_op(cx: &Ctx<'_>, u: u32) -> u32 {
    let o = cx.units.op_of(u as usize);
    debug_assert!(cx.h.ops[o as usize].kind == KIND_WRITE_FINAL || cx.h.ops[o as usize].is_write());
    o
}

fn cx_witness(cx: &Ctx<'_>, from: u32, to: u32) -> Vec<Hop> {
    let path = crate::graph::co_path(cx.units, cx.clocks, from as usize, to as usize);
    crate::finding::unit_hops(cx.h, cx.wf, cx.units, &path, &BTreeMap::new())
}
