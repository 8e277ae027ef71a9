//! Causal memory (POPL'17 CM): each session's view must be consistent on its own.
//!
//! For the last operation `o` of each session, the *happens-before* relation `HB_o` starts as
//! the causal order restricted to `o`'s causal past and grows to a fixpoint: whenever a read
//! `r` in `o`'s program-order past returns write `w₂` of `x` and another write `w₁` of `x`
//! reaches `r` in `HB_o`, then `w₁` precedes `w₂` in `HB_o`. `HB_o` only grows along program
//! order, so checking the last operation of each session covers every operation.
//!
//! Bad patterns: **CyclicHB** (`HB_o` is cyclic) and **WriteHBInitRead** (a read of the initial
//! value of `x` in `o`'s program-order past has a write of `x` before it in `HB_o`). The plain
//! CC patterns are found by the CC pass; reads it found stale are skipped here.
//!
//! The added write-order edges are kept in a small list; reachability through them is a search
//! over that list, with causal order between its endpoints answered by the vector clocks. The
//! whole check is bounded by a work budget (`CheckOptions::cm_work_max`); when it runs out, the
//! report says the CM check is incomplete.

use crate::anomaly::Anomaly;
use crate::causal::{Ctx, PoClock};
use crate::finding::{Detail, Finding, Hop, Sink, unit_hops};
use crate::graph::{DenseRow, WriteIndex, co_path};
use crate::history::{NONE, RF_INIT};
use crate::wf::ReadClass;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

struct Budget {
    left: u64,
}

impl Budget {
    fn spend(&mut self, n: u64) -> bool {
        if self.left < n {
            self.left = 0;
            return false;
        }
        self.left -= n;
        true
    }
}

/// An added edge `w1 → w2` (units), forced by read `r` (unit).
#[derive(Clone, Copy)]
struct Added {
    from: u32,
    to: u32,
    read: u32,
}

/// Returns `false` if the work budget ran out.
pub(crate) fn check(cx: &Ctx<'_>, skip: &BTreeSet<u32>, work_max: u64, sink: &mut Sink) -> bool {
    let units = cx.units;
    let h = cx.h;
    let index = WriteIndex::build(h, units, cx.clocks);
    let po = PoClock::build(units);
    let mut budget = Budget { left: work_max };
    let mut seen: BTreeSet<(u8, Vec<u32>)> = BTreeSet::new();
    // Reads per session, in order.
    let mut session_reads: Vec<Vec<u32>> = vec![Vec::new(); h.sessions.len()];
    let mut last_unit = vec![NONE; h.sessions.len()];
    for u in 0..units.n {
        let o = units.op_of(u);
        last_unit[units.session[u] as usize] = u as u32;
        if matches!(cx.wf.class[o as usize], ReadClass::External | ReadClass::Internal | ReadClass::NonRepeatable) && !skip.contains(&o) {
            session_reads[units.session[u] as usize].push(u as u32);
        }
    }
    for s in 0..h.sessions.len() {
        let last = last_unit[s];
        if last == NONE {
            continue;
        }
        let mut reads: Vec<u32> = session_reads[s].clone();
        for &(s2, bound) in po.others(last as usize) {
            reads.extend(session_reads[s2 as usize].iter().copied().filter(|r| units.spos[*r as usize] < bound));
        }
        if reads.is_empty() {
            continue;
        }
        reads.sort_unstable();
        if !session_view(cx, &index, &reads, &mut budget, &mut seen, sink) {
            sink.notes.push(format!(
                "the causal-memory (cm) check stopped after its work budget of {work_max} steps, at session {}; \
                 the WriteHBInitRead/CyclicHB part is incomplete (raise CheckOptions::cm_work_max)",
                h.session_name(s as u32)
            ));
            return false;
        }
    }
    true
}

fn session_view(
    cx: &Ctx<'_>,
    index: &WriteIndex,
    reads: &[u32],
    budget: &mut Budget,
    seen: &mut BTreeSet<(u8, Vec<u32>)>,
    sink: &mut Sink,
) -> bool {
    let units = cx.units;
    let clocks = cx.clocks;
    let h = cx.h;
    let mut added: Vec<Added> = Vec::new();
    let mut reported_reads: BTreeSet<u32> = BTreeSet::new();
    let mut anchor_row = DenseRow::new(clocks.chain_count());
    let mut read_row = DenseRow::new(clocks.chain_count());
    loop {
        let mut changed = false;
        for &r in reads {
            if reported_reads.contains(&r) {
                continue;
            }
            let o = units.op_of(r as usize) as usize;
            let key = h.ops[o].key;
            let w2 = if h.rf[o] == RF_INIT { NONE } else { units.writer_unit(h, h.rf[o]) };
            // Anchors: r itself (strict past) and the sources of added edges that reach r.
            let mut anchors: Vec<(u32, bool)> = vec![(r, false)];
            let reach = reaching_edges(clocks, &added, r, budget);
            let Some(reach) = reach else { return false };
            anchors.extend(reach.iter().map(|e| (added[*e].from, true)));
            let mut candidates: Vec<u32> = Vec::new();
            // How much of each chain the write read has seen (itself included).
            if w2 != NONE {
                read_row.load(clocks, w2 as usize);
            }
            let (w2_chain, w2_cpos) = if w2 == NONE { (NONE, 0) } else { clocks.place(w2 as usize) };
            let writes = index.key(key);
            for (a, inclusive) in anchors {
                let runs = writes.run_count();
                if !budget.spend(runs as u64 + 1) {
                    return false;
                }
                anchor_row.load(clocks, a as usize);
                let (a_chain, a_cpos) = clocks.place(a as usize);
                for run in writes.runs() {
                    let c = run.0;
                    let mut bound = anchor_row.get(c);
                    if inclusive && a_chain == c {
                        bound = a_cpos + 1;
                    }
                    // Writes the one read already follows add nothing: skip the chain when
                    // all of its visible part is in the read write's causal past.
                    if w2 != NONE {
                        let seen = if c == w2_chain { w2_cpos + 1 } else { read_row.get(c) };
                        if seen >= bound {
                            continue;
                        }
                    }
                    if let Some((_, w1)) = writes.last_before(clocks, run, bound) {
                        candidates.push(w1);
                    }
                }
            }
            candidates.sort_unstable();
            candidates.dedup();
            for w1 in candidates {
                if w1 == w2 {
                    continue;
                }
                if w2 == NONE {
                    reported_reads.insert(r);
                    let Some(path) = g_path(cx, &added, w1, r, budget) else {
                        return false;
                    };
                    let txns: Vec<u32> = path.iter().flat_map(|hop| [hop.from(), hop.to()]).collect();
                    if seen.insert((0, txns)) {
                        if sink.wants() {
                            let write = units.op_of(w1 as usize);
                            sink.push(Finding {
                                anomaly: Anomaly::WriteHBInitRead,
                                key: Some(key),
                                read: Some(o as u32),
                                detail: Detail::HbInit { write, hops: path },
                            });
                        } else {
                            sink.count(Anomaly::WriteHBInitRead);
                        }
                    }
                    break;
                }
                let Some(forward) = reaches(clocks, &added, w1, w2, budget) else {
                    return false;
                };
                if forward {
                    continue;
                }
                let Some(backward) = reaches(clocks, &added, w2, w1, budget) else {
                    return false;
                };
                if backward {
                    // Adding w1 → w2 closes a cycle: w2 ⇝ w1 → w2.
                    reported_reads.insert(r);
                    let Some(mut hops) = g_path(cx, &added, w2, w1, budget) else {
                        return false;
                    };
                    hops.push(Hop::WriteOrder {
                        from: units.txn[w1 as usize],
                        to: units.txn[w2 as usize],
                        first: units.op_of(w1 as usize),
                        second: units.op_of(w2 as usize),
                        read: o as u32,
                    });
                    let mut txns: Vec<u32> = hops.iter().map(|hop| hop.from()).collect();
                    txns.sort_unstable();
                    txns.dedup();
                    if seen.insert((1, txns.clone())) {
                        if sink.wants() {
                            sink.push(Finding {
                                anomaly: Anomaly::CyclicHB,
                                key: Some(key),
                                read: Some(o as u32),
                                detail: Detail::Cycle { hops, scc: txns },
                            });
                        } else {
                            sink.count(Anomaly::CyclicHB);
                        }
                    }
                    break;
                }
                added.push(Added { from: w1, to: w2, read: r });
                changed = true;
            }
        }
        if !changed {
            return true;
        }
    }
}

/// Indices of added edges whose target reaches `r` (through causal order and added edges).
fn reaching_edges(clocks: &crate::graph::Clocks, added: &[Added], r: u32, budget: &mut Budget) -> Option<Vec<usize>> {
    if added.is_empty() {
        return Some(Vec::new());
    }
    if !budget.spend(added.len() as u64 * 2) {
        return None;
    }
    let mut mark = vec![false; added.len()];
    let mut queue: VecDeque<usize> = VecDeque::new();
    for (i, e) in added.iter().enumerate() {
        if clocks.before_eq(e.to as usize, r as usize) {
            mark[i] = true;
            queue.push_back(i);
        }
    }
    // Backward closure: e' reaches an edge already marked if e'.to ⇝ e.from.
    while let Some(i) = queue.pop_front() {
        if !budget.spend(added.len() as u64) {
            return None;
        }
        for (j, e) in added.iter().enumerate() {
            if !mark[j] && clocks.before_eq(e.to as usize, added[i].from as usize) {
                mark[j] = true;
                queue.push_back(j);
            }
        }
    }
    Some((0..added.len()).filter(|i| mark[*i]).collect())
}

/// Whether `a` reaches `b` in causal order plus added edges (`a ≠ b`).
fn reaches(clocks: &crate::graph::Clocks, added: &[Added], a: u32, b: u32, budget: &mut Budget) -> Option<bool> {
    if clocks.before(a as usize, b as usize) {
        return Some(true);
    }
    Some(edge_path(clocks, added, a, b, budget)?.is_some())
}

/// A sequence of added edges leading from `a` to `b`, if any.
fn edge_path(clocks: &crate::graph::Clocks, added: &[Added], a: u32, b: u32, budget: &mut Budget) -> Option<Option<Vec<usize>>> {
    let mut parent: BTreeMap<usize, usize> = BTreeMap::new();
    let mut queue: VecDeque<usize> = VecDeque::new();
    const ROOT: usize = usize::MAX;
    if !budget.spend(added.len() as u64 + 1) {
        return None;
    }
    for (i, e) in added.iter().enumerate() {
        if clocks.before_eq(a as usize, e.from as usize) {
            parent.insert(i, ROOT);
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        if clocks.before_eq(added[i].to as usize, b as usize) {
            let mut path = vec![i];
            let mut j = i;
            while parent[&j] != ROOT {
                j = parent[&j];
                path.push(j);
            }
            path.reverse();
            return Some(Some(path));
        }
        if !budget.spend(added.len() as u64) {
            return None;
        }
        for (j, e) in added.iter().enumerate() {
            if !parent.contains_key(&j) && clocks.before_eq(added[i].to as usize, e.from as usize) {
                parent.insert(j, i);
                queue.push_back(j);
            }
        }
    }
    Some(None)
}

/// Hops of a path from `a` to `b` in causal order plus added edges.
fn g_path(cx: &Ctx<'_>, added: &[Added], a: u32, b: u32, budget: &mut Budget) -> Option<Vec<Hop>> {
    let units = cx.units;
    let clocks = cx.clocks;
    let co = |x: u32, y: u32| -> Vec<Hop> {
        if x == y {
            return Vec::new();
        }
        let path = co_path(units, clocks, x as usize, y as usize);
        unit_hops(cx.h, cx.wf, units, &path, &BTreeMap::new())
    };
    if clocks.before_eq(a as usize, b as usize) {
        return Some(co(a, b));
    }
    let edges = edge_path(clocks, added, a, b, budget)?.unwrap_or_default();
    let mut hops = Vec::new();
    let mut at = a;
    for i in edges {
        let e = added[i];
        hops.extend(co(at, e.from));
        hops.push(Hop::WriteOrder {
            from: units.txn[e.from as usize],
            to: units.txn[e.to as usize],
            first: units.op_of(e.from as usize),
            second: units.op_of(e.to as usize),
            read: units.op_of(e.read as usize),
        });
        at = e.to;
    }
    hops.extend(co(at, b));
    Some(hops)
}
