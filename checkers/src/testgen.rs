//! Deterministic history generators, for the benchmark and the tests.
//!
//! * [`serial`]: sessions take turns running whole transactions against one store, so the
//!   history is serializable and passes every level.
//! * [`causal`]: every session works on its own causally closed view of the writes and pulls in
//!   other sessions' writes now and then; a transaction reads one snapshot and its writes become
//!   visible together, and concurrent writes are arbitrated by creation order. The history
//!   satisfies `tcc` and `ccv` but has stale reads across sessions and write skew.
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
