//! A fast proof that a history satisfies `cc`, `ccv` or `tcc`: exhibit the write order.
//!
//! `ccv` and `tcc` hold exactly when some total order of the units that extends the causal
//! order CO makes every judged read return, of the writes of its key in its causal past, the
//! last one in that order (POPL'17's arbitration for causal convergence; Biswas and Enea's
//! commit order for transactional causal consistency). Systems record roughly in the order they
//! arbitrate, so the history order — or the topological order of CO closest to it — is the
//! first guess. Under a guess, a read of `x` in unit `u` that returned write `w` is fine unless
//! some write of `x` placed strictly between `w` and `u` (or, for the initial value, before
//! `u`) is in the causal past of `u`. Those writes are few, and [`Reach`] tells whether they
//! are in the past without vector clocks, so the cost grows with the history, not with the
//! number of sessions or chains.
//!
//! A write found in the past that `w` causally precedes makes the read stale: no order can
//! help, and the exact check (vector clocks, `causal.rs`) takes over to name it. A write merely
//! concurrent with `w` must be ordered before it: the guess is redone with those edges, a few
//! rounds at most, before the exact check takes over. `cc` asks for no order, only for the
//! absence of stale reads, so concurrent writes are fine there.
//!
//! "Proved" is exact: the exact check would report nothing. "Not proved" says nothing; the
//! exact check decides.

use crate::causal::judged;
use crate::graph::{AHEAD, Gran, Units, prefetch};
use crate::history::{History, KIND_WRITE_FINAL, NONE, RF_INIT};
use crate::level::Level;
use crate::reach::Reach;
use crate::wf::Wf;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Guesses tried before the exact check takes over.
const ROUNDS_MAX: usize = 6;

/// What a proof attempt found (for `CAUSIM_CHECK_TIMING`).
#[derive(Default, Debug)]
pub(crate) struct Attempt {
    pub proved: bool,
    pub rounds: usize,
    /// Writes examined (placed between a read's write and the read).
    pub candidates: u64,
    /// Of those, writes found in the read's past (ordering edges, or a stale read).
    pub in_past: u64,
    pub search_visits: u64,
}

/// Try to prove that the history satisfies `level` (`cc`, `ccv` or `tcc`). `known` are write
/// orders the history shows directly (list-append version orders: first unit, second unit,
/// the read that shows it), which `ccv` and `tcc` must respect.
pub(crate) fn prove(h: &History, wf: &Wf, units: &Units, succ: &(Vec<u32>, Vec<u32>), known: &[(u32, u32, u32)], level: Level) -> Attempt {
    debug_assert!(matches!(level, Level::Cc | Level::Ccv | Level::Tcc));
    let mut attempt = Attempt::default();
    let n = units.n;
    // Searches may enter every unit a few times over before the clocks are cheaper.
    let visits_max = 64 * n as u64 + (1 << 20);
    let mut reach: Option<Reach<'_>> = None;
    let Some(mut pos) = first_guess(h, units, succ) else {
        return attempt; // CO is cyclic
    };
    let mut extra: Vec<(u32, u32)> = Vec::new();
    if level != Level::Cc && !known.is_empty() {
        extra.extend(known.iter().map(|k| (k.0, k.1)));
        extra.sort_unstable();
        extra.dedup();
        let Some(next) = topological(units, succ, &extra, &pos) else {
            return attempt; // the known orders contradict CO
        };
        pos = next;
    }
    for round in 1..=ROUNDS_MAX {
        attempt.rounds = round;
        if round > 1 {
            // The ordering edges found so far, and otherwise the previous guess's order.
            let Some(next) = topological(units, succ, &extra, &pos) else {
                return attempt; // they close a cycle
            };
            pos = next;
        }
        if let Some(reach) = &mut reach {
            reach.new_order();
        }
        // Built when a first read needs it (most histories need none).
        let mut writes: Option<KeyWrites> = None;
        let mut edges: Vec<(u32, u32)> = Vec::new();
        // Units in the order of the guess; `last[x]` is the position (plus one) of the last write
        // of `x` placed so far, so that a read of the last write before it needs no search.
        let mut last = vec![0u32; h.keys.len()];
        let order = by_position(&pos);
        let unit_at = |i: usize| order.as_ref().map_or(i, |order| order[i] as usize);
        for i in 0..n {
            let u = unit_at(i);
            if units.gran == Gran::Op {
                // Reads' writers are far back: fetch a writer's unit 2 × AHEAD units ahead, and
                // its position AHEAD ahead, so that the misses overlap.
                if i + 2 * AHEAD < n {
                    units.hint_writer_unit(h, units.op_of(unit_at(i + 2 * AHEAD)) as usize);
                }
                if i + AHEAD < n {
                    let o = units.op_of(unit_at(i + AHEAD)) as usize;
                    if h.rf[o] < RF_INIT {
                        let uw = units.unit_of(h.rf[o] as usize);
                        if uw != NONE {
                            prefetch(&pos[uw as usize]);
                        }
                    }
                }
            }
            for o in units.ops_of(h, u) {
                if !judged(level, wf.class[o]) {
                    continue;
                }
                let key = h.ops[o].key;
                let uw = if h.rf[o] == RF_INIT { NONE } else { units.writer_unit_of_read(h, o) };
                let after = if uw == NONE { 0 } else { pos[uw as usize] + 1 };
                if last[key as usize] <= after {
                    continue; // nothing of `key` placed between the write read and the read
                }
                let list = writes.get_or_insert_with(|| KeyWrites::build(h, units, succ, &pos)).of(key);
                let from = list.partition_point(|e| e.0 < after);
                for &(p, v) in &list[from..] {
                    if p >= pos[u] {
                        break;
                    }
                    attempt.candidates += 1;
                    let reach = reach.get_or_insert_with(|| Reach::build(units, succ));
                    if !reach.precedes(v as usize, u, &pos) {
                        continue;
                    }
                    attempt.in_past += 1;
                    if uw == NONE || reach.precedes(uw as usize, v as usize, &pos) {
                        attempt.search_visits = reach.visits;
                        return attempt; // a stale read
                    }
                    if level != Level::Cc {
                        edges.push((v, uw));
                    }
                }
                if reach.as_ref().is_some_and(|r| r.visits > visits_max) {
                    attempt.search_visits = reach.as_ref().map_or(0, |r| r.visits);
                    return attempt;
                }
            }
            if units.writes[u] && visible(units, succ, u) {
                written_keys(h, units, u, &mut |k| last[k as usize] = pos[u] + 1);
            }
        }
        attempt.search_visits = reach.as_ref().map_or(0, |r| r.visits);
        if edges.is_empty() {
            attempt.proved = true;
            return attempt;
        }
        extra.extend(edges);
        extra.sort_unstable();
        extra.dedup();
    }
    attempt
}

/// The first guess, as positions by unit: the history order if it extends CO (histories are
/// mostly recorded in the order things happened), else the order of transaction ids if that
/// does (files written session by session, as Plume's are, with ids counted globally), else
/// the topological order that takes, among the units ready, the one furthest behind in its
/// session, as if sessions had advanced at even speeds. `None` if CO is cyclic.
fn first_guess(h: &History, units: &Units, succ: &(Vec<u32>, Vec<u32>)) -> Option<Vec<u32>> {
    let n = units.n;
    let extends_co = |pos: &[u32]| {
        (0..n).all(|u| {
            (units.prev[u] == NONE || pos[units.prev[u] as usize] < pos[u]) && units.preds(u).iter().all(|p| pos[*p as usize] < pos[u])
        })
    };
    // The history order, checked without building it: every predecessor comes earlier.
    if (0..n).all(|u| (units.prev[u] == NONE || (units.prev[u] as usize) < u) && units.preds(u).iter().all(|p| (*p as usize) < u)) {
        return Some((0..n as u32).collect());
    }
    // Transactions by id; a transaction's units stay together, in program order.
    let mut txns: Vec<u32> = (0..h.txns.len() as u32).filter(|t| units.unit_of_txn[*t as usize] != NONE).collect();
    txns.sort_unstable_by_key(|t| h.txns[*t as usize].id);
    let mut by_id = vec![0u32; n];
    let mut next = 0u32;
    for t in txns {
        let mut u = units.unit_of_txn[t as usize] as usize;
        while u < n && units.txn[u] == t {
            by_id[u] = next;
            next += 1;
            u += 1;
        }
    }
    if extends_co(&by_id) {
        return Some(by_id);
    }
    let progress: Vec<u64> = (0..n)
        .map(|u| {
            let len = u64::from(units.session_len[units.session[u] as usize]);
            (u64::from(units.spos[u]) << 32) / len
        })
        .collect();
    topological(units, succ, &[], &progress)
}

/// The topological order of CO plus `extra` edges that takes, among the units ready, the one
/// with the least `priority` (then the least index), as positions by unit; `None` if there is
/// a cycle.
fn topological<P: Ord + Copy>(units: &Units, succ: &(Vec<u32>, Vec<u32>), extra: &[(u32, u32)], priority: &[P]) -> Option<Vec<u32>> {
    let n = units.n;
    let mut indeg: Vec<u32> = (0..n).map(|u| u32::from(units.prev[u] != NONE) + (units.pred_off[u + 1] - units.pred_off[u])).collect();
    let mut extra_off = vec![0u32; n + 1];
    for (a, b) in extra {
        indeg[*b as usize] += 1;
        extra_off[*a as usize + 1] += 1;
    }
    for u in 0..n {
        extra_off[u + 1] += extra_off[u];
    }
    let mut extra_to = vec![0u32; extra.len()];
    let mut fill = extra_off.clone();
    for (a, b) in extra {
        extra_to[fill[*a as usize] as usize] = *b;
        fill[*a as usize] += 1;
    }
    let mut ready: BinaryHeap<Reverse<(P, u32)>> =
        (0..n as u32).filter(|u| indeg[*u as usize] == 0).map(|u| Reverse((priority[u as usize], u))).collect();
    let mut pos = vec![NONE; n];
    let mut next_pos = 0u32;
    while let Some(Reverse((_, u))) = ready.pop() {
        let u = u as usize;
        pos[u] = next_pos;
        next_pos += 1;
        let mut release = |v: u32| {
            let d = &mut indeg[v as usize];
            *d -= 1;
            if *d == 0 {
                ready.push(Reverse((priority[v as usize], v)));
            }
        };
        if units.next[u] != NONE {
            release(units.next[u]);
        }
        for v in &succ.1[succ.0[u] as usize..succ.0[u + 1] as usize] {
            release(*v);
        }
        for v in &extra_to[extra_off[u] as usize..extra_off[u + 1] as usize] {
            release(*v);
        }
    }
    (next_pos as usize == n).then_some(pos)
}

/// Whether anyone can see `u`'s writes (it has a successor).
#[inline]
fn visible(units: &Units, succ: &(Vec<u32>, Vec<u32>), u: usize) -> bool {
    units.next[u] != NONE || succ.0[u] != succ.0[u + 1]
}

/// The keys unit `u` writes, as values others may read.
#[inline]
fn written_keys(h: &History, units: &Units, u: usize, f: &mut dyn FnMut(u32)) {
    match units.gran {
        Gran::Op => {
            let op = &h.ops[units.op_of(u) as usize];
            if op.is_write() {
                f(op.key);
            }
        }
        Gran::Txn => {
            for o in h.txns[units.txn[u] as usize].ops() {
                if h.ops[o].kind == KIND_WRITE_FINAL {
                    f(h.ops[o].key);
                }
            }
        }
    }
}

/// The units by position (`pos` inverted); `None` when every unit is at its own index (the
/// usual first guess), which needs no table.
fn by_position(pos: &[u32]) -> Option<Vec<u32>> {
    if pos.iter().enumerate().all(|(u, p)| *p as usize == u) {
        return None;
    }
    let mut order = vec![0u32; pos.len()];
    for (u, p) in pos.iter().enumerate() {
        order[*p as usize] = u as u32;
    }
    Some(order)
}

/// For each key, the units writing it that someone can see, as (position, unit) in the order
/// of the guess.
struct KeyWrites {
    off: Vec<u32>,
    entries: Vec<(u32, u32)>,
}

impl KeyWrites {
    fn build(h: &History, units: &Units, succ: &(Vec<u32>, Vec<u32>), pos: &[u32]) -> KeyWrites {
        let keys = h.keys.len();
        let placed = |u: usize| units.writes[u] && visible(units, succ, u);
        let mut off = vec![0u32; keys + 1];
        for u in (0..units.n).filter(|u| placed(*u)) {
            written_keys(h, units, u, &mut |k| off[k as usize + 1] += 1);
        }
        for k in 0..keys {
            off[k + 1] += off[k];
        }
        let mut fill = off.clone();
        let mut entries = vec![(0u32, 0u32); off[keys] as usize];
        let order = by_position(pos);
        for i in 0..units.n {
            let u = order.as_ref().map_or(i, |order| order[i] as usize);
            if placed(u) {
                written_keys(h, units, u, &mut |k| {
                    entries[fill[k as usize] as usize] = (pos[u], u as u32);
                    fill[k as usize] += 1;
                });
            }
        }
        KeyWrites { off, entries }
    }

    #[inline]
    fn of(&self, key: u32) -> &[(u32, u32)] {
        &self.entries[self.off[key as usize] as usize..self.off[key as usize + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{OpRecord, TxnRecord};
    use crate::testgen::{GenParams, causal_records, serial_records};

    fn attempt(records: &[TxnRecord], level: Level) -> Attempt {
        let h = History::from_records(None, records).expect("a valid history");
        let wf = crate::wf::analyze(&h);
        let gran = if level.is_transactional() { Gran::Txn } else { Gran::Op };
        let units = Units::build(&h, &wf, gran);
        let succ = units.successors();
        prove(&h, &wf, &units, &succ, &[], level)
    }

    fn txn(session: &str, ops: Vec<OpRecord>) -> TxnRecord {
        TxnRecord::new(session, ops)
    }
    fn w(key: &str, v: i64) -> OpRecord {
        OpRecord::write(key, v)
    }
    fn r(key: &str, v: Option<i64>) -> OpRecord {
        OpRecord::read(key, v)
    }

    #[test]
    fn generated_histories_are_proved_in_one_guess() {
        for seed in 0..20 {
            let p = GenParams { sessions: 1 + (seed % 6) as u32, txns_per_session: 30, ops_per_txn: 4, keys: 8, read_per_mille: 500, seed };
            for level in [Level::Cc, Level::Ccv, Level::Tcc] {
                let a = attempt(&serial_records(&p), level);
                assert!(a.proved && a.rounds == 1, "serial, seed {seed}, {level:?}: {a:?}");
                let a = attempt(&causal_records(&p, 200), level);
                assert!(a.proved, "causal, seed {seed}, {level:?}: {a:?}");
            }
        }
    }

    #[test]
    fn a_write_read_after_a_concurrent_one_is_ordered_first_in_a_second_guess() {
        // c3 sees x=2 (through c2's y=1) and then reads x=1: x=2 must be ordered before x=1,
        // against the history order.
        let h = [
            txn("c1", vec![w("x", 1)]),
            txn("c2", vec![w("x", 2)]),
            txn("c2", vec![w("y", 1)]),
            txn("c3", vec![r("y", Some(1))]),
            txn("c3", vec![r("x", Some(1))]),
        ];
        for level in [Level::Ccv, Level::Tcc] {
            let a = attempt(&h, level);
            assert!(a.proved && a.rounds == 2 && a.in_past == 1, "{level:?}: {a:?}");
        }
        // `cc` needs no order: one guess.
        let a = attempt(&h, Level::Cc);
        assert!(a.proved && a.rounds == 1, "{a:?}");
    }

    #[test]
    fn stale_reads_and_cyclic_orders_are_left_to_the_exact_check() {
        let stale =
            [txn("c1", vec![w("x", 1)]), txn("c1", vec![w("x", 2)]), txn("c2", vec![r("x", Some(2))]), txn("c2", vec![r("x", Some(1))])];
        let stale_initial = [txn("c1", vec![w("x", 1)]), txn("c2", vec![r("x", Some(1))]), txn("c2", vec![r("x", None)])];
        for level in [Level::Cc, Level::Ccv, Level::Tcc] {
            assert!(!attempt(&stale, level).proved, "{level:?}");
            assert!(!attempt(&stale_initial, level).proved, "{level:?}");
        }
        // Two sessions see two concurrent writes in opposite orders: cc, not ccv.
        let cyclic_cf = [
            txn("c1", vec![w("x", 1)]),
            txn("c2", vec![w("x", 2)]),
            txn("c3", vec![r("x", Some(1))]),
            txn("c3", vec![r("x", Some(2))]),
            txn("c4", vec![r("x", Some(2))]),
            txn("c4", vec![r("x", Some(1))]),
        ];
        assert!(attempt(&cyclic_cf, Level::Cc).proved);
        assert!(!attempt(&cyclic_cf, Level::Ccv).proved);
        assert!(!attempt(&cyclic_cf, Level::Tcc).proved);
    }

    #[test]
    fn a_history_not_in_causal_order_is_ordered_first() {
        // The read is listed before the write it reads, in another session; ids agree with the
        // listing, so neither order extends the causal order.
        let h = [
            txn("c2", vec![r("x", Some(1))]).with_id(0),
            txn("c2", vec![w("y", 1)]).with_id(1),
            txn("c1", vec![w("x", 1)]).with_id(2),
            txn("c1", vec![r("y", None)]).with_id(3),
        ];
        for level in [Level::Cc, Level::Ccv, Level::Tcc] {
            let a = attempt(&h, level);
            assert!(a.proved && a.rounds == 1, "{level:?}: {a:?}");
        }
        // Ids in causal order are used as the guess.
        let by_id = [txn("c2", vec![r("x", Some(1))]).with_id(5), txn("c1", vec![w("x", 1)]).with_id(4)];
        assert!(attempt(&by_id, Level::Ccv).proved);
    }
}
