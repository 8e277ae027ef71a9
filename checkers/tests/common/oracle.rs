//! A slow, independent oracle: each level's definition, written directly over explicit
//! relations (transitive closures on small histories), with none of the checker's code.
//!
//! * Well-formedness: the read rules of docs/history-format.md and Plume's TAP-a…f.
//! * Operation levels: CO = (po ∪ rf)⁺ over operations; CC = no CyclicCO, no WriteCORead, no
//!   WriteCOInitRead (POPL'17); CCv adds acyclic CF ∪ CO; CM adds the per-operation
//!   happens-before fixpoint (CyclicHB, WriteHBInitRead); the session guarantees are the
//!   path shapes documented on `Level`.
//! * Transaction levels: Biswas & Enea's axioms — the level holds iff CO plus the write orders
//!   its axiom forces is acyclic (with an initial transaction before everything).
//! * `rc-plume` (Plume's checker in RC mode): well-formedness where a read that follows a read
//!   of the same key with a different source is not judged by the own-write rules, acyclic CO
//!   over transactions, and no read of an initial value after a read of another key from a
//!   transaction that writes it.
//! * Linearizability: Herlihy & Wing's definition, by exhaustive search per key for an order
//!   of the key's operations that extends real time and in which every read returns the
//!   latest write.

#![allow(dead_code)]

use causim_checkers::{Key, Level, OpKind, Outcome, TxnRecord, Value};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone)]
struct Bits {
    n: usize,
    rows: Vec<Vec<u64>>,
}

impl Bits {
    fn new(n: usize) -> Bits {
        Bits { n, rows: vec![vec![0; n.div_ceil(64).max(1)]; n] }
    }
    fn get(&self, a: usize, b: usize) -> bool {
        self.rows[a][b / 64] >> (b % 64) & 1 == 1
    }
    fn set(&mut self, a: usize, b: usize) -> bool {
        let old = self.get(a, b);
        self.rows[a][b / 64] |= 1 << (b % 64);
        !old
    }
    fn close(&mut self) {
        for k in 0..self.n {
            let row_k = self.rows[k].clone();
            for i in 0..self.n {
                if self.get(i, k) {
                    for (w, x) in self.rows[i].iter_mut().zip(&row_k) {
                        *w |= x;
                    }
                }
            }
        }
    }
    fn cyclic(&self) -> bool {
        (0..self.n).any(|i| self.get(i, i))
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Src {
    Write(usize, usize),
    Init,
    Nothing,
}

pub struct Oracle {
    txns: Vec<TxnRecord>,
    /// For every op (t, i) that is a read: its source.
    src: BTreeMap<(usize, usize), Src>,
    /// Program order between transactions (transitive), over all transactions.
    po_txn: Bits,
    well_formed: bool,
    /// Well-formed as Plume's checker judges it (for `rc-plume`).
    well_formed_plume: bool,
    initial: BTreeMap<Key, Value>,
}

impl Oracle {
    pub fn new(records: &[TxnRecord], initial: &[(Key, Value)]) -> Oracle {
        let txns = records.to_vec();
        let n = txns.len();
        let mut writes: BTreeMap<(Key, Value), (usize, usize)> = BTreeMap::new();
        for (t, txn) in txns.iter().enumerate() {
            for (i, op) in txn.ops.iter().enumerate() {
                if op.f == OpKind::Write {
                    writes.insert((op.key.clone(), op.value.clone()), (t, i));
                }
            }
        }
        let init: BTreeMap<Key, Value> = initial.iter().cloned().collect();
        let mut src = BTreeMap::new();
        for (t, txn) in txns.iter().enumerate() {
            for (i, op) in txn.ops.iter().enumerate() {
                if op.f == OpKind::Read {
                    let s = match writes.get(&(op.key.clone(), op.value.clone())) {
                        Some(&(wt, wi)) => Src::Write(wt, wi),
                        None if init.get(&op.key).cloned().unwrap_or(Value::Null) == op.value => Src::Init,
                        None => Src::Nothing,
                    };
                    src.insert((t, i), s);
                }
            }
        }
        // Program order: session successor and `after` links, over all transactions.
        let ids: BTreeMap<u64, usize> = txns.iter().enumerate().map(|(t, r)| (r.id.unwrap_or(t as u64), t)).collect();
        let mut po_txn = Bits::new(n);
        let mut last: BTreeMap<&str, usize> = BTreeMap::new();
        for (t, txn) in txns.iter().enumerate() {
            if let Some(p) = last.insert(txn.session.as_str(), t) {
                po_txn.set(p, t);
            }
            for a in &txn.after {
                po_txn.set(ids[a], t);
            }
        }
        po_txn.close();
        let mut o = Oracle { txns, src, po_txn, well_formed: true, well_formed_plume: true, initial: init };
        o.well_formed = o.check_well_formed(false);
        o.well_formed_plume = o.check_well_formed(true);
        o
    }

    fn ok(&self, t: usize) -> bool {
        self.txns[t].outcome == Outcome::Ok
    }
    fn aborted(&self, t: usize) -> bool {
        self.txns[t].outcome == Outcome::Aborted
    }

    /// With `plume`, a read whose nearest earlier operation on its key is a read of another
    /// source is a repeated read, not judged by the own-write rules.
    fn check_well_formed(&self, plume: bool) -> bool {
        for (t, txn) in self.txns.iter().enumerate() {
            if !self.ok(t) {
                continue;
            }
            for (i, op) in txn.ops.iter().enumerate() {
                if op.f != OpKind::Read {
                    continue;
                }
                let mut own_last = (0..i).rev().find(|j| txn.ops[*j].f == OpKind::Write && txn.ops[*j].key == op.key);
                let nearest = (0..i).rev().find(|j| txn.ops[*j].key == op.key);
                let repeated = nearest.is_some_and(|j| txn.ops[j].f == OpKind::Read && self.src[&(t, j)] != self.src[&(t, i)]);
                if plume && repeated {
                    own_last = None;
                }
                match self.src[&(t, i)] {
                    Src::Nothing => return false,
                    Src::Write(wt, wi) if wt == t => {
                        if wi > i || (own_last.is_some() && own_last != Some(wi)) {
                            return false;
                        }
                    }
                    s => {
                        if own_last.is_some() {
                            return false;
                        }
                        if let Src::Write(wt, wi) = s {
                            if self.aborted(wt) {
                                return false;
                            }
                            let w = &self.txns[wt];
                            if w.ops[wi + 1..].iter().any(|o| o.f == OpKind::Write && o.key == op.key) {
                                return false;
                            }
                        }
                    }
                }
            }
        }
        true
    }

    pub fn satisfies(&self, level: Level) -> bool {
        if level == Level::RcPlume {
            return self.well_formed_plume && self.rc_plume();
        }
        if !self.well_formed {
            return false;
        }
        match level {
            Level::WellFormed => true,
            Level::Linearizable => self.linearizable(),
            Level::Rc | Level::Ra | Level::Tcc => self.transactional(level),
            _ => self.operational(level),
        }
    }

    // ---- linearizability ----

    /// Whether every key's history is linearizable. `failed` writes may take effect at any
    /// time after their invocation, or never; `failed` reads and `aborted` operations are left
    /// out. Without a verdict (a non-aborted transaction of several operations, or without an
    /// interval): false.
    fn linearizable(&self) -> bool {
        let mut keys: BTreeMap<Key, Vec<RegisterOp>> = BTreeMap::new();
        for txn in &self.txns {
            if txn.outcome == Outcome::Aborted || txn.ops.is_empty() {
                continue;
            }
            let (Some(inv), Some(cmp), [op]) = (txn.invoke_ns, txn.complete_ns, &txn.ops[..]) else {
                return false;
            };
            let write = op.f == OpKind::Write;
            if !write && txn.outcome != Outcome::Ok {
                continue;
            }
            keys.entry(op.key.clone()).or_default().push(RegisterOp {
                inv,
                cmp: (txn.outcome == Outcome::Ok).then_some(cmp),
                write,
                value: op.value.clone(),
            });
        }
        keys.iter().all(|(key, ops)| {
            assert!(ops.len() <= 64, "the oracle handles at most 64 operations per key");
            let start = self.initial.get(key).cloned().unwrap_or(Value::Null);
            order_exists(ops, 0, &start, &mut BTreeSet::new())
        })
    }

    // ---- operation level ----

    fn operational(&self, level: Level) -> bool {
        // Nodes: writes of non-aborted transactions, reads of committed ones.
        let mut nodes: Vec<(usize, usize)> = Vec::new();
        for (t, txn) in self.txns.iter().enumerate() {
            if self.aborted(t) {
                continue;
            }
            for (i, op) in txn.ops.iter().enumerate() {
                if op.f == OpKind::Write || self.ok(t) {
                    nodes.push((t, i));
                }
            }
        }
        let index: BTreeMap<(usize, usize), usize> = nodes.iter().enumerate().map(|(k, v)| (*v, k)).collect();
        let n = nodes.len();
        let mut po = Bits::new(n);
        for a in 0..n {
            for b in 0..n {
                let (ta, ia) = nodes[a];
                let (tb, ib) = nodes[b];
                if (ta == tb && ia < ib) || (ta != tb && self.po_txn.get(ta, tb)) {
                    po.set(a, b);
                }
            }
        }
        let is_write = |k: usize| self.txns[nodes[k].0].ops[nodes[k].1].f == OpKind::Write;
        let key = |k: usize| self.txns[nodes[k].0].ops[nodes[k].1].key.clone();
        // Source of a read node, as a node (None = initial).
        let source = |k: usize| -> Option<usize> {
            match self.src[&nodes[k]] {
                Src::Write(t, i) => Some(index[&(t, i)]),
                _ => None,
            }
        };
        let mut co = po.clone();
        for k in 0..n {
            if !is_write(k)
                && let Some(w) = source(k)
                && nodes[w].0 != nodes[k].0
            {
                co.set(w, k);
            }
        }
        co.close();
        if co.cyclic() {
            return false;
        }
        let reads: Vec<usize> = (0..n).filter(|k| !is_write(*k)).collect();
        let writes: Vec<usize> = (0..n).filter(|k| is_write(*k)).collect();
        let stale = |r: usize, v: usize| -> bool {
            match source(r) {
                None => true,
                Some(w) => v != w && co.get(w, v),
            }
        };
        match level {
            Level::Cc | Level::Ccv | Level::Cm => {
                for &r in &reads {
                    for &v in &writes {
                        if key(v) == key(r) && co.get(v, r) && stale(r, v) {
                            return false;
                        }
                    }
                }
                if level == Level::Ccv {
                    let mut cf = co.clone();
                    for &r in &reads {
                        if let Some(w) = source(r) {
                            for &v in &writes {
                                if v != w && key(v) == key(r) && co.get(v, r) {
                                    cf.set(v, w);
                                }
                            }
                        }
                    }
                    cf.close();
                    if cf.cyclic() {
                        return false;
                    }
                }
                if level == Level::Cm {
                    for o in 0..n {
                        if !self.cm_view_ok(o, n, &co, &po, &reads, &writes, &source, &key) {
                            return false;
                        }
                    }
                }
                true
            }
            _ => {
                let [ryw, mr, mw, wfr] = guarantees(level);
                for &r in &reads {
                    for &v in &writes {
                        if key(v) != key(r) || !stale(r, v) {
                            continue;
                        }
                        if ryw && po.get(v, r) {
                            return false;
                        }
                        for &beta in &reads {
                            if !po.get(beta, r) {
                                continue;
                            }
                            let Some(w2) = source(beta) else { continue };
                            if mr && key(beta) == key(r) && w2 == v {
                                return false;
                            }
                            if mw && po.get(v, w2) {
                                return false;
                            }
                            if wfr {
                                for &beta1 in &reads {
                                    if key(beta1) == key(r) && source(beta1) == Some(v) && po.get(beta1, w2) {
                                        return false;
                                    }
                                }
                            }
                        }
                    }
                }
                true
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn cm_view_ok(
        &self,
        o: usize,
        n: usize,
        co: &Bits,
        po: &Bits,
        reads: &[usize],
        writes: &[usize],
        source: &dyn Fn(usize) -> Option<usize>,
        key: &dyn Fn(usize) -> Key,
    ) -> bool {
        let in_past = |p: usize| p == o || co.get(p, o);
        let mut hb = Bits::new(n);
        for a in 0..n {
            for b in 0..n {
                if in_past(a) && in_past(b) && co.get(a, b) {
                    hb.set(a, b);
                }
            }
        }
        let po_past = |r: usize| r == o || po.get(r, o);
        loop {
            let mut changed = false;
            for &r2 in reads {
                if !in_past(r2) || !po_past(r2) {
                    continue;
                }
                let Some(w2) = source(r2) else { continue };
                for &w1 in writes {
                    if w1 != w2 && key(w1) == key(r2) && in_past(w1) && hb.get(w1, r2) && hb.set(w1, w2) {
                        changed = true;
                    }
                }
            }
            hb.close();
            if !changed {
                break;
            }
        }
        if hb.cyclic() {
            return false;
        }
        for &r in reads {
            if in_past(r) && po_past(r) && source(r).is_none() {
                for &w in writes {
                    if key(w) == key(r) && hb.get(w, r) {
                        return false;
                    }
                }
            }
        }
        true
    }

    // ---- transaction level ----

    /// Plume's RC mode: acyclic CO over transactions, and no read of an initial value of `x`
    /// after a read of another key from a transaction that writes `x`.
    fn rc_plume(&self) -> bool {
        let live: Vec<usize> = (0..self.txns.len()).filter(|t| !self.aborted(*t)).collect();
        let node: BTreeMap<usize, usize> = live.iter().enumerate().map(|(k, t)| (*t, k)).collect();
        let mut co = Bits::new(live.len());
        for &a in &live {
            for &b in &live {
                if a != b && self.po_txn.get(a, b) {
                    co.set(node[&a], node[&b]);
                }
            }
        }
        for &t in &live {
            if !self.ok(t) {
                continue;
            }
            let txn = &self.txns[t];
            for (i, op) in txn.ops.iter().enumerate() {
                match self.src.get(&(t, i)) {
                    Some(Src::Write(wt, _)) if *wt != t && !self.aborted(*wt) => {
                        co.set(node[wt], node[&t]);
                    }
                    Some(Src::Init) => {
                        let stale = (0..i).any(|j| {
                            txn.ops[j].f == OpKind::Read
                                && txn.ops[j].key != op.key
                                && matches!(self.src[&(t, j)], Src::Write(wt, _) if wt != t
                                    && self.txns[wt].ops.iter().any(|w| w.f == OpKind::Write && w.key == op.key))
                        });
                        if stale {
                            return false;
                        }
                    }
                    _ => {}
                }
            }
        }
        co.close();
        !co.cyclic()
    }

    fn transactional(&self, level: Level) -> bool {
        let live: Vec<usize> = (0..self.txns.len()).filter(|t| !self.aborted(*t)).collect();
        let n = live.len() + 1; // node 0 is the initial transaction
        let node: BTreeMap<usize, usize> = live.iter().enumerate().map(|(k, t)| (*t, k + 1)).collect();
        let mut co = Bits::new(n);
        for &a in &live {
            for &b in &live {
                if a != b && self.po_txn.get(a, b) {
                    co.set(node[&a], node[&b]);
                }
            }
        }
        // Reads-from between transactions (judged external reads).
        let mut wr: Vec<(usize, usize)> = Vec::new();
        for &t in &live {
            if !self.ok(t) {
                continue;
            }
            for i in 0..self.txns[t].ops.len() {
                if let Some(Src::Write(wt, _)) = self.src.get(&(t, i))
                    && *wt != t
                {
                    wr.push((*wt, t));
                    co.set(node[wt], node[&t]);
                }
            }
        }
        for k in 1..n {
            co.set(0, k);
        }
        co.close();
        let mut all = co.clone();
        for &t3 in &live {
            if !self.ok(t3) {
                continue;
            }
            let txn = &self.txns[t3];
            for (i, op) in txn.ops.iter().enumerate() {
                let tw = match self.src.get(&(t3, i)) {
                    Some(Src::Write(wt, _)) if *wt != t3 => node[wt],
                    Some(Src::Init) => 0,
                    _ => continue,
                };
                for &t1 in &live {
                    if t1 == t3 || node[&t1] == tw || !self.txns[t1].ops.iter().any(|o| o.f == OpKind::Write && o.key == op.key) {
                        continue;
                    }
                    let read_from_t1 = |before: Option<usize>| {
                        (0..before.unwrap_or(txn.ops.len())).any(|j| matches!(self.src.get(&(t3, j)), Some(Src::Write(wt, _)) if *wt == t1))
                    };
                    let premise = match level {
                        Level::Rc => read_from_t1(Some(i)),
                        Level::Ra => self.po_txn.get(t1, t3) || read_from_t1(None),
                        _ => co.get(node[&t1], node[&t3]),
                    };
                    if premise {
                        all.set(node[&t1], tw);
                    }
                }
            }
        }
        all.close();
        !all.cyclic()
    }
}

fn guarantees(level: Level) -> [bool; 4] {
    match level {
        Level::ReadYourWrites => [true, false, false, false],
        Level::MonotonicReads => [false, true, false, false],
        Level::MonotonicWrites => [false, false, true, false],
        Level::WritesFollowReads => [false, false, false, true],
        Level::Session => [true; 4],
        other => panic!("{other} is not a session level"),
    }
}

struct RegisterOp {
    inv: u64,
    /// None: a `failed` write, whose interval never closes.
    cmp: Option<u64>,
    write: bool,
    value: Value,
}

/// Whether the operations not in `placed` can follow, in some order extending real time, a
/// prefix that left the register at `value`. Open-ended operations may stay unplaced (they go
/// last, where a write changes nothing). `failed` holds (placed, value) states that lead nowhere.
fn order_exists(ops: &[RegisterOp], placed: u64, value: &Value, failed: &mut BTreeSet<(u64, Value)>) -> bool {
    let open = |o: usize| placed >> o & 1 == 0;
    if (0..ops.len()).all(|o| !open(o) || ops[o].cmp.is_none()) {
        return true;
    }
    if failed.contains(&(placed, value.clone())) {
        return false;
    }
    for o in (0..ops.len()).filter(|o| open(*o)) {
        // Real time: nothing still to place completed before `o` was invoked.
        if (0..ops.len()).any(|p| p != o && open(p) && ops[p].cmp.is_some_and(|c| c < ops[o].inv)) {
            continue;
        }
        let next = if ops[o].write {
            &ops[o].value
        } else if ops[o].value == *value {
            value
        } else {
            continue;
        };
        if order_exists(ops, placed | 1 << o, next, failed) {
            return true;
        }
    }
    failed.insert((placed, value.clone()));
    false
}
