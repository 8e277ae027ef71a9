//! Deterministic history generators, for the benchmark and the tests.
//!
//! * [`serial`]: sessions take turns running whole transactions against one store, so the
//!   history is serializable and passes every level.
//! * [`causal`]: every session works on its own causally closed view of the writes and pulls in
//!   other sessions' writes now and then; a transaction reads one snapshot and its writes become
//!   visible together, and concurrent writes are arbitrated by creation order. The history
//!   satisfies `tcc` and `ccv` but has stale reads across sessions and write skew.
//! * [`si_records`]: sessions interleave transactions against a multi-version store that gives
//!   each one the snapshot of the commits before it began and aborts the later of two
//!   concurrent writers of a key (first committer wins), so the history is snapshot isolation
//!   but has write skew; values are assigned in commit order, so each key's values increase in
//!   its version order (the header may say `"version_order": "values"`).
//! * [`register_records`]: clients issue single reads and writes with overlapping real-time
//!   intervals against one linearizable store (each operation takes effect at a random instant
//!   of its interval), so the history is linearizable; some writes may be `failed`.
//!
//! Randomness is a seeded SplitMix64, so a (parameters, seed) pair always gives the same
//! history.

use crate::fxhash::{FxHashMap, map_with_capacity};
use crate::history::{History, HistoryBuilder, KIND_READ, KIND_WRITE_FINAL, Key, NONE, OpRecord, Outcome, TxnMeta, TxnRecord, Val, Value};
use std::io::{self, Write};

/// SplitMix64: tiny, fast, and good enough to generate workloads.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "an empty range has no element");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
    /// True with probability `per_mille / 1000`.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        self.below(1000) < u64::from(per_mille)
    }
}

/// The shape of a generated workload.
#[derive(Clone, Debug)]
pub struct GenParams {
    pub sessions: u32,
    pub txns_per_session: u32,
    pub ops_per_txn: u32,
    pub keys: u64,
    /// Reads per thousand operations.
    pub read_per_mille: u32,
    pub seed: u64,
}

impl GenParams {
    pub fn txns(&self) -> u64 {
        u64::from(self.sessions) * u64::from(self.txns_per_session)
    }
}

/// One generated operation: (is_write, key, value; `None` = initial).
type GenOp = (bool, u64, Option<u64>);

/// Run the serial workload, handing each transaction (session, ops) to `emit` in order.
fn run_serial(p: &GenParams, mut emit: impl FnMut(u32, &[GenOp])) {
    let mut rng = SplitMix64::new(p.seed);
    let mut store: FxHashMap<u64, u64> = map_with_capacity((p.txns() * u64::from(p.ops_per_txn) / 2).min(1 << 24) as usize);
    let mut left: Vec<u32> = vec![p.txns_per_session; p.sessions as usize];
    let mut live: Vec<u32> = (0..p.sessions).collect();
    let mut next_value: u64 = 1;
    let mut ops: Vec<GenOp> = Vec::with_capacity(p.ops_per_txn as usize);
    while !live.is_empty() {
        let i = rng.below(live.len() as u64) as usize;
        let s = live[i];
        ops.clear();
        for _ in 0..p.ops_per_txn {
            let key = rng.below(p.keys);
            if rng.chance(p.read_per_mille) {
                ops.push((false, key, store.get(&key).copied()));
            } else {
                let v = next_value;
                next_value += 1;
                store.insert(key, v);
                ops.push((true, key, Some(v)));
            }
        }
        emit(s, &ops);
        left[s as usize] -= 1;
        if left[s as usize] == 0 {
            live.swap_remove(i);
        }
    }
}

/// A serial (hence serializable) history, built directly (no records in between).
pub fn serial(p: &GenParams) -> History {
    let mut b = HistoryBuilder::new();
    let sessions: Vec<u32> = (0..p.sessions).map(|s| b.session_index(&format!("s{s}"))).collect();
    let mut line = 1u64;
    run_serial(p, |s, ops| {
        b.begin_txn();
        for &(write, key, value) in ops {
            let k = b.key_int(key as i64);
            let v = value.map_or(Val::Null, |v| Val::Int(v as i64));
            let kind = if write { KIND_WRITE_FINAL } else { KIND_READ };
            b.push_op_node_index(kind, k, v, None).expect("generated operations are valid");
        }
        b.end_txn(TxnMeta { id: None, session: sessions[s as usize], after: &[], node: NONE, times: None, outcome: Outcome::Ok, line })
            .expect("generated transactions are valid");
        line += 1;
    });
    b.finish().expect("a generated history is valid")
}

/// The serial workload as `causim-history/1` JSON Lines.
pub fn write_serial_jsonl(p: &GenParams, w: impl Write) -> io::Result<()> {
    let mut w = io::BufWriter::with_capacity(1 << 20, w);
    writeln!(w, "{{\"format\":\"causim-history/1\",\"seed\":{}}}", p.seed)?;
    let mut id = 0u64;
    let mut result = Ok(());
    run_serial(p, |s, ops| {
        if result.is_err() {
            return;
        }
        let mut line = format!("{{\"id\":{id},\"session\":\"s{s}\",\"ops\":[");
        for (i, &(write, key, value)) in ops.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            let f = if write { 'w' } else { 'r' };
            match value {
                Some(v) => line.push_str(&format!("{{\"f\":\"{f}\",\"key\":{key},\"value\":{v}}}")),
                None => line.push_str(&format!("{{\"f\":\"{f}\",\"key\":{key},\"value\":null}}")),
            }
        }
        line.push_str("]}\n");
        result = w.write_all(line.as_bytes());
        id += 1;
    });
    result?;
    w.flush()
}

/// The serial workload as records (for small tests).
pub fn serial_records(p: &GenParams) -> Vec<TxnRecord> {
    let mut out = Vec::new();
    run_serial(p, |s, ops| out.push(record(out.len() as u64, s, ops)));
    out
}

fn record(id: u64, s: u32, ops: &[GenOp]) -> TxnRecord {
    let ops = ops
        .iter()
        .map(|&(write, key, value)| {
            let key = Key::Str(format!("k{key}").into());
            let value = value.map_or(Value::Null, |v| Value::Int(v as i64));
            if write { OpRecord::write(key, value) } else { OpRecord::read(key, value) }
        })
        .collect();
    TxnRecord::new(format!("s{s}"), ops).with_id(id)
}

/// A causally consistent, non-serializable history (see the module doc), as records.
/// `sync_per_mille` is the chance, before each transaction, that the session pulls in another
/// session's view.
pub fn causal_records(p: &GenParams, sync_per_mille: u32) -> Vec<TxnRecord> {
    let mut rng = SplitMix64::new(p.seed);
    let n = p.sessions as usize;
    // Each write: (key, value, session, causal dependencies as a set of write indices).
    let mut writes: Vec<(u64, u64)> = Vec::new();
    // A session's view: for each key, the visible writes' indices (arbitration = index order).
    // Views are causally closed: pulling a write pulls the writer's view at that time.
    let mut views: Vec<Vec<bool>> = vec![Vec::new(); n];
    let mut left: Vec<u32> = vec![p.txns_per_session; n];
    let mut live: Vec<u32> = (0..p.sessions).collect();
    let mut out = Vec::new();
    let mut next_value = 1u64;
    while !live.is_empty() {
        let i = rng.below(live.len() as u64) as usize;
        let s = live[i] as usize;
        if n > 1 && rng.chance(sync_per_mille) {
            let other = rng.below(n as u64) as usize;
            if other != s {
                let theirs = views[other].clone();
                merge_view(&mut views[s], &theirs);
            }
        }
        let snapshot = views[s].clone();
        let mut ops: Vec<GenOp> = Vec::new();
        let mut own: FxHashMap<u64, u64> = map_with_capacity(4);
        let mut new_writes: Vec<usize> = Vec::new();
        for _ in 0..p.ops_per_txn {
            let key = rng.below(p.keys);
            if rng.chance(p.read_per_mille) {
                let value = own.get(&key).copied().or_else(|| latest(&writes, &snapshot, key));
                ops.push((false, key, value));
            } else {
                let v = next_value;
                next_value += 1;
                own.insert(key, v);
                ops.push((true, key, Some(v)));
                new_writes.push(writes.len());
                writes.push((key, v));
            }
        }
        // Only each key's last write of the transaction becomes visible (others are
        // intermediate); the whole transaction becomes visible at once.
        for w in &new_writes {
            let (key, v) = writes[*w];
            if own.get(&key) == Some(&v) {
                set(&mut views[s], *w);
            }
        }
        out.push(record(out.len() as u64, s as u32, &ops));
        left[s] -= 1;
        if left[s] == 0 {
            live.swap_remove(i);
        }
    }
    out
}

fn set(view: &mut Vec<bool>, i: usize) {
    if view.len() <= i {
        view.resize(i + 1, false);
    }
    view[i] = true;
}

fn merge_view(into: &mut Vec<bool>, from: &[bool]) {
    if into.len() < from.len() {
        into.resize(from.len(), false);
    }
    for (i, v) in from.iter().enumerate() {
        if *v {
            into[i] = true;
        }
    }
}

fn latest(writes: &[(u64, u64)], view: &[bool], key: u64) -> Option<u64> {
    view.iter().enumerate().rev().find(|(i, v)| **v && writes[*i].0 == key).map(|(i, _)| writes[i].1)
}

/// The shape of a generated real-time register workload ([`register_records`]).
#[derive(Clone, Debug)]
pub struct RegisterParams {
    /// Concurrent clients (sessions), each issuing one operation at a time.
    pub clients: u32,
    /// Operations in all.
    pub ops: u64,
    pub keys: u64,
    /// Reads per thousand operations.
    pub read_per_mille: u32,
    /// Writes per thousand whose outcome is unknown (`failed`): half of them take effect, at
    /// some instant after their invocation (possibly after the client gave up), half never.
    pub failed_per_mille: u32,
    /// An operation lasts 1 to `duration_ns` ns; a client waits 0 to `think_ns` ns between two.
    pub duration_ns: u64,
    pub think_ns: u64,
    pub seed: u64,
}

/// One generated register operation, before its value is known.
struct TimedOp {
    invoke: u64,
    complete: u64,
    /// When it takes effect (None: never, for half the `failed` writes).
    effect: Option<u64>,
    client: u32,
    key: u64,
    write: bool,
    failed: bool,
}

/// An open transaction of [`si_records`]: its snapshot, its operations (`(write, key, value)`;
/// a write's value, and an own read's, filled at commit) and, per operation, the earlier own
/// write an internal read returns.
struct SiOpen {
    start: u64,
    ops: Vec<GenOp>,
    own_source: Vec<Option<usize>>,
}

/// A snapshot-isolation history (see the module doc), as records in commit order. Half the
/// writes read their key first (read-modify-write); aborted transactions are listed with the
/// values they would have written.
pub fn si_records(p: &GenParams) -> Vec<TxnRecord> {
    let mut rng = SplitMix64::new(p.seed);
    let n = p.sessions as usize;
    // Per key, its versions as (commit number, value), oldest first.
    let mut versions: FxHashMap<u64, Vec<(u64, u64)>> = map_with_capacity(1024);
    let mut commits = 0u64;
    let mut next_value = 1u64;
    let mut open: Vec<Option<SiOpen>> = (0..n).map(|_| None).collect();
    let mut left: Vec<u32> = vec![p.txns_per_session; n];
    let mut live: Vec<u32> = (0..p.sessions).filter(|_| p.txns_per_session > 0).collect();
    let mut out = Vec::new();
    let snapshot_value = |versions: &FxHashMap<u64, Vec<(u64, u64)>>, key: u64, start: u64| {
        versions.get(&key).and_then(|vs| vs.iter().rev().find(|(c, _)| *c <= start).map(|(_, v)| *v))
    };
    while !live.is_empty() {
        let i = rng.below(live.len() as u64) as usize;
        let s = live[i] as usize;
        let Some(txn) = open[s].take() else {
            // Begin: plan the operations; reads see the snapshot (or the transaction's own writes).
            let start = commits;
            let mut t = SiOpen { start, ops: Vec::new(), own_source: Vec::new() };
            let max = p.ops_per_txn as usize;
            let mut own_last: Vec<(u64, usize)> = Vec::new(); // key, index of its last own write
            while t.ops.len() < max {
                let key = rng.below(p.keys);
                let own = own_last.iter().find(|(k, _)| *k == key).map(|(_, at)| *at);
                if rng.chance(p.read_per_mille) {
                    t.ops.push((false, key, if own.is_some() { None } else { snapshot_value(&versions, key, start) }));
                    t.own_source.push(own);
                    continue;
                }
                if own.is_none() && t.ops.len() + 2 <= max && rng.chance(500) {
                    t.ops.push((false, key, snapshot_value(&versions, key, start)));
                    t.own_source.push(None);
                }
                t.ops.push((true, key, None));
                t.own_source.push(None);
                let at = t.ops.len() - 1;
                match own_last.iter_mut().find(|(k, _)| *k == key) {
                    Some(entry) => entry.1 = at,
                    None => own_last.push((key, at)),
                }
            }
            open[s] = Some(t);
            continue;
        };
        // Commit, unless a key it writes got a newer version after it began.
        let mut t = txn;
        let conflict = t.ops.iter().any(|&(w, k, _)| w && versions.get(&k).and_then(|vs| vs.last()).is_some_and(|(c, _)| *c > t.start));
        for o in 0..t.ops.len() {
            if t.ops[o].0 {
                t.ops[o].2 = Some(next_value);
                next_value += 1;
            } else if let Some(src) = t.own_source[o] {
                t.ops[o].2 = t.ops[src].2;
            }
        }
        let mut rec = record(out.len() as u64, s as u32, &t.ops);
        if conflict {
            rec.outcome = Outcome::Aborted;
        } else {
            commits += 1;
            for &(w, k, v) in &t.ops {
                if w {
                    let vs = versions.entry(k).or_default();
                    match vs.last_mut() {
                        Some(last) if last.0 == commits => last.1 = v.expect("filled above"),
                        _ => vs.push((commits, v.expect("filled above"))),
                    }
                }
            }
        }
        out.push(rec);
        left[s] -= 1;
        if left[s] == 0 {
            live.swap_remove(i);
        }
    }
    out
}

/// A linearizable history of single-operation transactions with real-time intervals: every
/// operation takes effect at a random instant of its interval, in that order, on one store.
/// Keys are `k0`, `k1`, …; values are unique; records are in invocation order.
pub fn register_records(p: &RegisterParams) -> Vec<TxnRecord> {
    let mut rng = SplitMix64::new(p.seed);
    let mut ops: Vec<TimedOp> = Vec::with_capacity(p.ops as usize);
    let mut clocks = vec![0u64; p.clients.max(1) as usize];
    for i in 0..p.ops {
        let c = (i % clocks.len() as u64) as usize;
        let invoke = clocks[c] + rng.below(p.think_ns + 1);
        let complete = invoke + 1 + rng.below(p.duration_ns.max(1));
        clocks[c] = complete + 1;
        let key = rng.below(p.keys.max(1));
        let write = !rng.chance(p.read_per_mille);
        let failed = write && rng.chance(p.failed_per_mille);
        let effect = if !failed {
            Some(invoke + rng.below(complete - invoke + 1))
        } else if rng.chance(500) {
            Some(invoke + rng.below(3 * (complete - invoke) + 1))
        } else {
            None
        };
        ops.push(TimedOp { invoke, complete, effect, client: c as u32, key, write, failed });
    }
    // Values: writes numbered in generation order; reads get what the store holds when they
    // take effect, applying the operations in effect order.
    let mut values: Vec<Option<u64>> = vec![None; ops.len()];
    let mut next_value = 1u64;
    for (i, op) in ops.iter().enumerate() {
        if op.write {
            values[i] = Some(next_value);
            next_value += 1;
        }
    }
    let mut by_effect: Vec<usize> = (0..ops.len()).filter(|i| ops[*i].effect.is_some()).collect();
    by_effect.sort_by_key(|i| (ops[*i].effect, *i));
    let mut store: FxHashMap<u64, u64> = map_with_capacity(p.keys.min(1 << 20) as usize);
    for i in by_effect {
        if ops[i].write {
            store.insert(ops[i].key, values[i].expect("writes have values"));
        } else {
            values[i] = store.get(&ops[i].key).copied();
        }
    }
    let mut order: Vec<usize> = (0..ops.len()).collect();
    order.sort_by_key(|i| (ops[*i].invoke, *i));
    order
        .into_iter()
        .enumerate()
        .map(|(id, i)| {
            let op = &ops[i];
            let key = Key::Str(format!("k{}", op.key).into());
            let value = values[i].map_or(Value::Null, |v| Value::Int(v as i64));
            let o = if op.write { OpRecord::write(key, value) } else { OpRecord::read(key, value) };
            let mut r = TxnRecord::new(format!("c{}", op.client), vec![o]).with_id(id as u64);
            r.invoke_ns = Some(op.invoke);
            r.complete_ns = Some(op.complete);
            if op.failed {
                r.outcome = Outcome::Failed;
            }
            r
        })
        .collect()
}
