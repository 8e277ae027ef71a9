//! `strict-serializable`: strict serializability (Papadimitriou 1979; Herlihy & Wing's
//! linearizability with transactions as the operations) of transactions over read/write
//! registers. There must be one order of the committed transactions that respects real time (a
//! transaction that completed before another was invoked comes first) in which each transaction
//! reads, for every key it reads before writing it, the latest write of an earlier transaction
//! (or the initial value). Its own later reads are well-formedness's business.
//!
//! **How.** Transactions are atomic operations on the registers they touch, so the check is
//! the `linearizable` search ([`crate::lin`]) lifted from one register to a set of registers:
//! Wing & Gong's backtracking with Lowe's just-in-time linearization and memoisation of
//! (linearized set, register values). It is P-compositional over **components**: keys that no
//! transaction links are independent, so the keys are split into the connected components of
//! "touched by one transaction", each searched alone; within a component, at quiescent instants
//! (no transaction in flight). Written values are unique per key, which prunes as in `lin`: a
//! read-only transaction that may go next is linearized at once, and no write may overwrite a
//! value that a read still to come returns (it would be gone for good). Searching costs a step
//! per linearization attempt, bounded by `CheckOptions::lin_steps_max` per component; beyond
//! it the component gets no verdict and the report says so (`complete: false`).
//!
//! Why a search and not a check in a recorded commit order: it needs nothing from the system
//! (no commit positions in the history, so it judges histories from anywhere), it is exact, and
//! on histories whose commits are serialized — Concord's global commit lock — the just-in-time
//! rule leaves few candidates at each step.
//!
//! What goes in, as in `linearizable`: transactions with an `invoke_ns`/`complete_ns` interval;
//! `ok` ones over it; `failed` ones only if someone reads one of their writes, from their
//! invocation until the first such read completes, their reads not judged; `aborted` ones not at
//! all. Reads that are well-formedness anomalies (or read their own writes) are left out. A key
//! touched by a transaction without an interval is not checked.
//!
//! **Witness.** A failing component is shrunk greedily to a set of transactions that still has
//! no order, from which no single transaction can be dropped (a writer whose value a remaining
//! transaction reads is kept): the smallest window. It is named **RealtimeNonSerializable** when
//! the same transactions have a serial order once real time is ignored (a stale read after a
//! committed transaction), else **NonSerializable** (lost update, write skew, fractured read).
//! For up to three transactions the explanation tries every order and says what breaks each.

use crate::CheckOptions;
use crate::anomaly::Anomaly;
use crate::explain::Namer;
use crate::finding::{Detail, Finding, Sink};
use crate::fxhash::{FxHashSet, set_with_capacity};
use crate::history::{History, KIND_WRITE_FINAL, NONE, Outcome, RF_INIT};
use crate::report::{EdgeKind, WitnessEdge};
use crate::wf::{ReadClass, Wf};

/// One transaction as the search sees it. Keys are the history's key indices; values are
/// per-key indices (0: the initial value, `1..`: the key's final writes in history order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tx {
    /// Its index in the history.
    pub t: u32,
    pub inv: u64,
    pub cmp: u64,
    /// Judged reads: (key, value, op).
    pub reads: Vec<(u32, u32, u32)>,
    /// Final writes: (key, value, op).
    pub writes: Vec<(u32, u32, u32)>,
}

/// The witness: the smallest set of transactions found with no order, by invocation.
#[derive(Clone, Debug)]
pub(crate) struct Story {
    pub txs: Vec<Tx>,
    /// The set has a serial order once real time is ignored.
    pub realtime: bool,
}

enum Verdict {
    Ok,
    /// The transactions up to this index (by invocation) have no order.
    Violation(usize),
    Unknown,
}

/// Check every component; report violations into `sink`. Returns whether all got a verdict.
pub(crate) fn check(h: &History, wf: &Wf, options: &CheckOptions, sink: &mut Sink) -> bool {
    let keys = h.key_count();
    let mut untimed: Vec<Option<u32>> = vec![None; keys];
    let mut value_of = vec![NONE; h.ops.len()];
    let mut values = vec![1u32; keys];
    let mut txs: Vec<Tx> = Vec::new();
    for (t, txn) in h.txns.iter().enumerate() {
        if txn.outcome == Outcome::Aborted {
            continue;
        }
        let Some(&(inv, cmp)) = h.times.get(&(t as u32)) else {
            for o in txn.ops() {
                let k = h.ops[o].key as usize;
                untimed[k] = untimed[k].or(Some(t as u32));
            }
            continue;
        };
        let failed = txn.outcome == Outcome::Failed;
        let mut tx = Tx { t: t as u32, inv, cmp: if failed { u64::MAX } else { cmp }, reads: Vec::new(), writes: Vec::new() };
        for o in txn.ops() {
            let op = h.ops[o];
            if op.is_write() && op.kind == KIND_WRITE_FINAL {
                value_of[o] = values[op.key as usize];
                values[op.key as usize] += 1;
                tx.writes.push((op.key, value_of[o], o as u32));
            } else if op.is_read() && !failed && wf.class[o] == ReadClass::External {
                tx.reads.push((op.key, NONE, o as u32));
            }
        }
        txs.push(tx);
    }
    // Values of reads, and when each failed write must have taken effect by.
    let mut first_read_done: Vec<u64> = vec![u64::MAX; h.txns.len()];
    for tx in &mut txs {
        for r in &mut tx.reads {
            let w = h.rf[r.2 as usize];
            r.1 = if w == RF_INIT { 0 } else { value_of[w as usize] };
            if w != RF_INIT && r.1 != NONE {
                let writer = h.op_txn[w as usize] as usize;
                first_read_done[writer] = first_read_done[writer].min(tx.cmp);
            }
        }
        tx.reads.retain(|r| r.1 != NONE);
    }
    txs.retain_mut(|tx| {
        if tx.cmp == u64::MAX && h.txns[tx.t as usize].outcome == Outcome::Failed {
            let done = first_read_done[tx.t as usize];
            if done == u64::MAX {
                return false;
            }
            tx.cmp = done.max(tx.inv);
        }
        !(tx.reads.is_empty() && tx.writes.is_empty())
    });
    let mut unknown = 0usize;
    for component in components(keys, &txs) {
        if component.iter().any(|tx| keys_of(tx).any(|k| untimed[k as usize].is_some())) {
            continue;
        }
        let mut budget = options.lin_steps_max;
        match search(&component, &values, &mut budget) {
            Verdict::Ok => {}
            Verdict::Unknown => unknown += 1,
            Verdict::Violation(end) => {
                let (txs, minimal) = shrink(&failing_set(&component, end, &values, options.lin_steps_max), &values, options.lin_steps_max);
                if !minimal {
                    sink.notes.push("a strict-serializability witness may not be the smallest: shrinking it ran out of its budget (lin_steps_max; causim check --lin-steps)".into());
                }
                let untimed_txs: Vec<Tx> = txs.iter().map(|tx| Tx { inv: 0, cmp: u64::MAX, ..tx.clone() }).collect();
                let realtime = matches!(search(&untimed_txs, &values, &mut options.lin_steps_max.clone()), Verdict::Ok);
                let anomaly = if realtime { Anomaly::RealtimeNonSerializable } else { Anomaly::NonSerializable };
                let read = txs.iter().flat_map(|tx| tx.reads.iter().map(|r| r.2)).next();
                sink.push(Finding { anomaly, key: None, read, detail: Detail::Sser(Box::new(Story { txs, realtime })) });
            }
        }
    }
    let untimed_keys = untimed.iter().filter(|u| u.is_some()).count();
    if untimed_keys > 0 {
        sink.notes.push(if h.times.is_empty() {
            "the history records no real-time intervals (invoke_ns/complete_ns), so strict serializability cannot be checked".to_string()
        } else {
            format!(
                "{untimed_keys} key(s) not checked for strict serializability: a transaction on each has no invoke_ns/complete_ns interval"
            )
        });
    }
    if unknown > 0 {
        sink.notes.push(format!(
            "{unknown} group(s) of keys got no strict-serializability verdict: the search ran out of its budget of {} steps (lin_steps_max; causim check --lin-steps)",
            options.lin_steps_max
        ));
    }
    unknown == 0 && untimed_keys == 0
}

fn keys_of(tx: &Tx) -> impl Iterator<Item = u32> + '_ {
    tx.reads.iter().chain(&tx.writes).map(|a| a.0)
}

/// The transactions split by connected components of the keys they link, each sorted by
/// invocation (then completion, then history order), components in order of their first key.
fn components(keys: usize, txs: &[Tx]) -> Vec<Vec<Tx>> {
    let mut parent: Vec<u32> = (0..keys as u32).collect();
    fn root(parent: &mut [u32], mut k: u32) -> u32 {
        while parent[k as usize] != k {
            parent[k as usize] = parent[parent[k as usize] as usize];
            k = parent[k as usize];
        }
        k
    }
    for tx in txs {
        let mut ks = keys_of(tx);
        if let Some(first) = ks.next() {
            let a = root(&mut parent, first);
            for k in ks {
                let b = root(&mut parent, k);
                parent[b as usize] = a;
            }
        }
    }
    let mut by_root: std::collections::BTreeMap<u32, Vec<Tx>> = std::collections::BTreeMap::new();
    for tx in txs {
        let k = keys_of(tx).next().expect("transactions without judged operations were dropped");
        by_root.entry(root(&mut parent, k)).or_default().push(tx.clone());
    }
    by_root
        .into_values()
        .map(|mut c| {
            c.sort_unstable_by_key(|tx| (tx.inv, tx.cmp, tx.t));
            c
        })
        .collect()
}

/// Search `txs` (one component, sorted by invocation) chunk by chunk.
fn search(txs: &[Tx], values: &[u32], budget: &mut u64) -> Verdict {
    let mut s = Searcher::new(txs, values);
    let mut start = 0;
    let mut done_max = 0u64;
    for i in 0..txs.len() {
        done_max = done_max.max(txs[i].cmp);
        if i + 1 < txs.len() && done_max >= txs[i + 1].inv {
            continue;
        }
        let chunk = &txs[start..=i];
        let mut keys: Vec<u32> = chunk.iter().flat_map(keys_of).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut memo = set_with_capacity(64);
        let mut done = vec![false; chunk.len()];
        match s.dfs(chunk, &keys, &mut done, chunk.len(), &mut memo, budget) {
            Some(true) => {}
            Some(false) => return Verdict::Violation(i + 1),
            None => return Verdict::Unknown,
        }
        start = i + 1;
    }
    Verdict::Ok
}

/// States of a chunk already searched: (which transactions are linearized, the chunk's keys'
/// values).
type Memo = FxHashSet<(Vec<bool>, Vec<u32>)>;

struct Searcher {
    /// Offset of each key's values in `pending`.
    base: Vec<u32>,
    /// Reads still to linearize, per (key, value).
    pending: Vec<u32>,
    /// Current value per key.
    state: Vec<u32>,
}

impl Searcher {
    fn new(txs: &[Tx], values: &[u32]) -> Searcher {
        let mut base = Vec::with_capacity(values.len());
        let mut total = 0u32;
        for v in values {
            base.push(total);
            total += v;
        }
        let mut pending = vec![0u32; total as usize];
        for tx in txs {
            for &(k, v, _) in &tx.reads {
                pending[(base[k as usize] + v) as usize] += 1;
            }
        }
        Searcher { base, pending, state: vec![0; values.len()] }
    }

    fn slot(&self, k: u32, v: u32) -> usize {
        (self.base[k as usize] + v) as usize
    }

    /// Whether `tx` may be linearized now: its reads return the current values, and none of
    /// its writes overwrites a value another read still returns.
    fn applicable(&self, tx: &Tx) -> bool {
        tx.reads.iter().all(|&(k, v, _)| self.state[k as usize] == v)
            && tx.writes.iter().all(|&(k, _, _)| {
                let current = self.state[k as usize];
                let own = tx.reads.iter().filter(|r| r.0 == k).count() as u32;
                self.pending[self.slot(k, current)] == own
            })
    }

    /// Linearizes `tx`; returns what to restore.
    fn apply(&mut self, tx: &Tx) -> Vec<(u32, u32)> {
        for &(k, v, _) in &tx.reads {
            let s = self.slot(k, v);
            self.pending[s] -= 1;
        }
        tx.writes.iter().map(|&(k, v, _)| (k, std::mem::replace(&mut self.state[k as usize], v))).collect()
    }

    fn undo(&mut self, tx: &Tx, old: Vec<(u32, u32)>) {
        for (k, v) in old.into_iter().rev() {
            self.state[k as usize] = v;
        }
        for &(k, v, _) in &tx.reads {
            let s = self.slot(k, v);
            self.pending[s] += 1;
        }
    }

    /// Whether the chunk's remaining transactions have an order from the current state
    /// (`None`: out of budget).
    fn dfs(&mut self, chunk: &[Tx], keys: &[u32], done: &mut [bool], left: usize, memo: &mut Memo, budget: &mut u64) -> Option<bool> {
        if left == 0 {
            return Some(true);
        }
        if !memo.insert((done.to_vec(), keys.iter().map(|k| self.state[*k as usize]).collect())) {
            return Some(false);
        }
        let first_done = chunk.iter().zip(done.iter()).filter(|(_, d)| !**d).map(|(tx, _)| tx.cmp).min().unwrap_or(u64::MAX);
        for i in 0..chunk.len() {
            let tx = &chunk[i];
            if done[i] || tx.inv > first_done {
                continue;
            }
            if *budget == 0 {
                return None;
            }
            *budget -= 1;
            if !self.applicable(tx) {
                continue;
            }
            let old = self.apply(tx);
            done[i] = true;
            let found = self.dfs(chunk, keys, done, left - 1, memo, budget);
            if found == Some(true) {
                // The chunk's end state is where the next chunk starts.
                return found;
            }
            done[i] = false;
            self.undo(tx, old);
            // A read-only transaction that may go now goes now: taking it earlier only removes
            // a constraint, so no other choice can do better.
            if found.is_none() || tx.writes.is_empty() {
                return found;
            }
        }
        Some(false)
    }
}

/// Where shrinking starts: the transactions up to the failing chunk's end and the later ones
/// that read a value they wrote (or an initial value): a write in the chunk may be impossible
/// only because a later read still needs the value it would overwrite. The whole component if
/// that somehow has an order.
fn failing_set(component: &[Tx], end: usize, values: &[u32], steps: u64) -> Vec<Tx> {
    let (head, tail) = component.split_at(end);
    let written: FxHashSet<(u32, u32)> = head.iter().flat_map(|tx| tx.writes.iter().map(|w| (w.0, w.1))).collect();
    let mut set: Vec<Tx> = head.to_vec();
    set.extend(tail.iter().filter(|tx| tx.reads.iter().any(|r| r.1 == 0 || written.contains(&(r.0, r.1)))).cloned());
    let mut budget = steps;
    if matches!(search(&set, values, &mut budget), Verdict::Violation(_)) { set } else { component.to_vec() }
}

/// Shrink a failing set to one from which no transaction can be dropped (keeping the writers of
/// values the others read). Returns it and whether shrinking finished within the budget.
fn shrink(txs: &[Tx], values: &[u32], steps: u64) -> (Vec<Tx>, bool) {
    let mut set: Vec<Tx> = txs.to_vec();
    let mut minimal = true;
    let mut i = set.len();
    while i > 0 {
        i -= 1;
        let tx = &set[i];
        let read_by_others = set.iter().any(|o| o.t != tx.t && o.reads.iter().any(|r| tx.writes.iter().any(|w| w.0 == r.0 && w.1 == r.1)));
        if read_by_others {
            continue;
        }
        let mut trial = set.clone();
        trial.remove(i);
        let mut budget = steps;
        match search(&trial, values, &mut budget) {
            Verdict::Violation(_) => set = trial,
            Verdict::Ok => {}
            Verdict::Unknown => minimal = false,
        }
        i = i.min(set.len());
    }
    (set, minimal)
}

/// The explanation of a witness.
pub(crate) struct Told {
    pub sentence: String,
    pub steps: Vec<String>,
    pub contradiction: String,
    pub witness: Vec<WitnessEdge>,
}

pub(crate) fn explain(nm: &mut Namer<'_>, story: &Story) -> Told {
    let h = nm.h;
    let txs = &story.txs;
    for tx in txs {
        nm.txn(tx.t);
        for &(_, _, o) in tx.reads.iter().chain(&tx.writes) {
            nm.op(o);
        }
    }
    let lab = |tx: &Tx| nm.label(tx.t);
    let id = |tx: &Tx| h.txns[tx.t as usize].id;
    let mut steps = Vec::new();
    let mut witness = Vec::new();
    for a in txs {
        for b in txs {
            for &(k, v, r) in &b.reads {
                if let Some(&(_, _, w)) = a.writes.iter().find(|w| w.0 == k && w.1 == v)
                    && a.t != b.t
                {
                    let because = format!("{} read {}, which {} wrote", lab(b), nm.assign(r), lab(a));
                    steps.push(format!("{} < {}, because {because}.", lab(a), lab(b)));
                    witness.push(WitnessEdge {
                        from: id(a),
                        to: id(b),
                        kind: EdgeKind::ReadsFrom,
                        key: Some(h.key(k).clone()),
                        from_op: Some(nm.op_ref(w)),
                        to_op: Some(nm.op_ref(r)),
                        via: None,
                        because,
                    });
                }
            }
            if a.cmp < b.inv {
                let because = format!("{} completed at {} before {} was invoked at {}", lab(a), a.cmp, lab(b), b.inv);
                steps.push(format!("{} < {}, because {because} (real time).", lab(a), lab(b)));
                witness.push(WitnessEdge {
                    from: id(a),
                    to: id(b),
                    kind: EdgeKind::Realtime,
                    key: None,
                    from_op: None,
                    to_op: None,
                    via: None,
                    because,
                });
            }
        }
    }
    let names: Vec<String> = txs.iter().map(lab).collect();
    let all = names.join(", ");
    let respecting = if story.realtime { " that respects real time" } else { "" };
    let mut why = Vec::new();
    if txs.len() <= 3 {
        for order in orders(txs.len()) {
            let seq: Vec<&Tx> = order.iter().map(|i| &txs[*i]).collect();
            let text = seq.iter().map(|tx| lab(tx)).collect::<Vec<_>>().join(", ");
            why.push(format!("in the order {text}, {}", first_failure(nm, &seq)));
        }
    }
    let sentence = if why.is_empty() {
        format!("no serial order of {all}{respecting} has every read return the latest earlier write.")
    } else {
        format!("no serial order of {all}{respecting} has every read return the latest earlier write: {}.", why.join("; "))
    };
    let contradiction = format!("However, no order of {all}{respecting} has every read return the latest earlier write: a contradiction!");
    Told { sentence, steps, contradiction, witness }
}

/// Every permutation of `0..n`, in lexicographic order.
fn orders(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for first in 0..n {
        for rest in orders(n - 1) {
            let mut o = vec![first];
            o.extend(rest.into_iter().map(|r| if r >= first { r + 1 } else { r }));
            out.push(o);
        }
    }
    out
}

/// What goes wrong first when `seq` is taken as the serial order.
fn first_failure(nm: &Namer<'_>, seq: &[&Tx]) -> String {
    let lab = |tx: &Tx| nm.label(tx.t);
    // The latest write of each key so far: (value, op).
    let mut latest: std::collections::BTreeMap<u32, (u32, u32)> = std::collections::BTreeMap::new();
    for (i, tx) in seq.iter().enumerate() {
        if let Some(before) = seq[..i].iter().find(|b| tx.cmp < b.inv) {
            return format!("{} completed before {} began", lab(tx), lab(before));
        }
        for &(k, v, r) in &tx.reads {
            let now = latest.get(&k).copied();
            if now.map_or(0, |(cur, _)| cur) == v {
                continue;
            }
            return match now {
                Some((_, w)) => format!(
                    "{}'s read of {} misses {}'s write of {}",
                    lab(tx),
                    nm.assign(r),
                    nm.label(nm.h.op_txn[w as usize]),
                    nm.assign(w)
                ),
                None => {
                    let writer = seq[i + 1..].iter().find(|w| w.writes.iter().any(|w| w.0 == k && w.1 == v));
                    match writer {
                        Some(w) => format!("{} reads {} before {} writes it", lab(tx), nm.assign(r), lab(w)),
                        None => format!("{} reads {}, which no earlier transaction wrote", lab(tx), nm.assign(r)),
                    }
                }
            };
        }
        for &(k, v, w) in &tx.writes {
            latest.insert(k, (v, w));
        }
    }
    "every read returns the latest earlier write".to_string()
}
