//! The causal order, computed with vector clocks over chains of writing units.
//!
//! The checker works on **units**: transactions for the transactional levels, single
//! operations (transactions flattened into program order) for the others. Units are linked by
//! session order (`prev`/`next`), by `after` links and by reads-from. Their transitive closure is
//! the causal order CO = (SO ∪ WR)⁺.
//!
//! Instead of a transitive closure, each unit gets a vector clock, as in AWDIT's O(n·k)
//! algorithm. Every question the checks ask is "is this *write* in the causal past of that
//! unit?", so only writing units are placed on clock dimensions, and the dimensions are
//! **chains** — sequences of writing units totally ordered by CO — rather than sessions. A
//! session's writes form a chain, and a new session whose causal past already contains the
//! whole of some chain continues that chain instead of opening a new dimension. In causim,
//! where every workflow attempt is a session and most of them start by reading, this keeps the
//! dimension near the number of concurrently writing sessions rather than the total. Clocks are
//! stored densely or sparsely, whichever is smaller.
//!
//! `bound(u, c)` is the number of chain-`c` units in the strict causal past of `u`; since chains
//! are CO-ordered and pasts are downward closed, those units are a prefix of the chain.

use crate::history::{History, NONE, RF_INIT};
use crate::wf::{ReadClass, Wf};
use std::collections::VecDeque;

/// How many units ahead the walks over all units hint at the memory they will need.
pub(crate) const AHEAD: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Gran {
    Txn,
    Op,
}

pub(crate) struct Units {
    pub gran: Gran,
    pub n: usize,
    /// Unit → transaction.
    pub txn: Vec<u32>,
    /// Op granularity: unit → op (empty for transaction granularity, and when `identity`).
    op: Vec<u32>,
    /// Op granularity: op → unit or NONE (empty for transaction granularity, and when `identity`).
    unit_of_op: Vec<u32>,
    /// Op granularity where every operation is a unit, in history order (no aborted
    /// transaction, no read left out): unit and operation numbers coincide, so the two tables
    /// above are not built and a read's writer unit is found without a random access.
    identity: bool,
    /// Transaction granularity: txn → unit or NONE. Op granularity: txn → first unit or NONE.
    pub unit_of_txn: Vec<u32>,
    pub session: Vec<u32>,
    /// Position of the unit among its session's units.
    pub spos: Vec<u32>,
    pub prev: Vec<u32>,
    pub next: Vec<u32>,
    /// Other predecessors (after links and reads-from), sorted, without `prev`.
    pub pred_off: Vec<u32>,
    pub pred: Vec<u32>,
    /// Whether any `after` link exists (program order is then not just session order).
    pub has_after: bool,
    /// Whether the unit writes (only writing units are placed on clock chains).
    pub writes: Vec<bool>,
    /// Units whose first position in their transaction carries `after` links: unit → targets.
    pub after_preds: std::collections::BTreeMap<u32, Vec<u32>>,
    pub session_len: Vec<u32>,
}

impl Units {
    pub(crate) fn preds(&self, u: usize) -> &[u32] {
        &self.pred[self.pred_off[u] as usize..self.pred_off[u + 1] as usize]
    }

    /// Op granularity: the operation of unit `u`.
    #[inline]
    pub(crate) fn op_of(&self, u: usize) -> u32 {
        if self.identity { u as u32 } else { self.op[u] }
    }

    /// Op granularity: the unit of operation `o`, or NONE.
    #[inline]
    pub(crate) fn unit_of(&self, o: usize) -> u32 {
        if self.identity { o as u32 } else { self.unit_of_op[o] }
    }

    /// The operations of unit `u`.
    #[inline]
    pub(crate) fn ops_of(&self, h: &History, u: usize) -> std::ops::Range<usize> {
        match self.gran {
            Gran::Txn => h.txns[self.txn[u] as usize].ops(),
            Gran::Op => {
                let o = self.op_of(u) as usize;
                o..o + 1
            }
        }
    }

    /// The unit holding write op `w` (NONE for aborted writes).
    #[inline]
    pub(crate) fn writer_unit(&self, h: &History, w: u32) -> u32 {
        match self.gran {
            Gran::Op => self.unit_of(w as usize),
            Gran::Txn => self.unit_of_txn[h.op_txn[w as usize] as usize],
        }
    }

    /// Op granularity: a hint to start fetching the unit of the write op `o` read, if it read
    /// one (a read's writer is usually far back in the history: the walks over all units hint
    /// [`AHEAD`] units ahead, so that the cache misses overlap). Nothing to fetch when units
    /// are operations (`identity`) or transactions: the table is empty.
    #[inline]
    pub(crate) fn hint_writer_unit(&self, h: &History, o: usize) {
        if let Some(unit) = self.unit_of_op.get(h.rf[o] as usize) {
            prefetch(unit);
        }
    }

    /// The unit holding the write that read op `o` read (which must read a write).
    #[inline]
    pub(crate) fn writer_unit_of_read(&self, h: &History, o: usize) -> u32 {
        match self.gran {
            Gran::Op => self.unit_of(h.rf[o] as usize),
            Gran::Txn => {
                let t = h.rf_txn[o] & crate::history::WRITER_TXN;
                // Without aborted transactions, units are numbered like transactions.
                if self.n == h.txns.len() { t } else { self.unit_of_txn[t as usize] }
            }
        }
    }

    pub(crate) fn build(h: &History, wf: &Wf, gran: Gran) -> Units {
        let ntx = h.txns.len();
        let identity = gran == Gran::Op && every_op_a_unit(h, wf);
        let cap = match gran {
            Gran::Txn => ntx,
            Gran::Op => h.ops.len(),
        };
        let mut u = Units {
            gran,
            n: 0,
            txn: Vec::with_capacity(cap),
            op: Vec::new(),
            unit_of_op: if gran == Gran::Op && !identity { vec![NONE; h.ops.len()] } else { Vec::new() },
            identity,
            unit_of_txn: vec![NONE; ntx],
            session: Vec::with_capacity(cap),
            spos: Vec::with_capacity(cap),
            prev: Vec::with_capacity(cap),
            next: Vec::with_capacity(cap),
            pred_off: Vec::with_capacity(cap + 1),
            pred: Vec::new(),
            has_after: false,
            writes: Vec::with_capacity(cap),
            after_preds: Default::default(),
            session_len: vec![0; h.sessions.len()],
        };
        // Pass 1: the units, in history order, with session order and `after` links.
        let mut last = vec![NONE; h.sessions.len()];
        // The last unit at or before each transaction in its session (target of `after`), and,
        // for transactions without units of their own, the `after` targets they pass on.
        let mut anchor = vec![NONE; ntx];
        let mut anchor_more: std::collections::BTreeMap<usize, Vec<u32>> = std::collections::BTreeMap::new();
        // `after` targets waiting for the next unit of their session.
        let mut carry: Vec<Vec<u32>> = vec![Vec::new(); h.sessions.len()];
        for (t, txn) in h.txns.iter().enumerate() {
            let s = txn.session as usize;
            for a in h.after_of(t) {
                if anchor[a] != NONE {
                    carry[s].push(anchor[a]);
                }
                if let Some(more) = anchor_more.get(&a) {
                    carry[s].extend(more.iter().copied());
                }
            }
            if txn.outcome != crate::history::Outcome::Aborted {
                match gran {
                    Gran::Txn => {
                        let id = u.push_unit(t as u32, s, &mut last, &mut carry);
                        u.unit_of_txn[t] = id;
                        u.writes.push(txn.ops().any(|o| h.ops[o].is_write()));
                    }
                    Gran::Op => {
                        for o in txn.ops() {
                            if !is_unit(wf.class[o]) {
                                continue;
                            }
                            let id = u.push_unit(t as u32, s, &mut last, &mut carry);
                            u.writes.push(h.ops[o].is_write());
                            if identity {
                                debug_assert_eq!(id as usize, o);
                            } else {
                                u.op.push(o as u32);
                                u.unit_of_op[o] = id;
                            }
                            if u.unit_of_txn[t] == NONE {
                                u.unit_of_txn[t] = id;
                            }
                        }
                    }
                }
            }
            anchor[t] = last[s];
            if !carry[s].is_empty() {
                anchor_more.insert(t, carry[s].clone());
            }
        }
        // Pass 2: predecessors other than the session predecessor: `after` and reads-from.
        u.pred_off.push(0);
        let mut preds: Vec<u32> = Vec::new();
        for id in 0..u.n {
            if gran == Gran::Op && id + AHEAD < u.n {
                u.hint_writer_unit(h, u.op_of(id + AHEAD) as usize);
            }
            preds.clear();
            if let Some(targets) = u.after_preds.get(&(id as u32)) {
                preds.extend(targets.iter().copied());
            }
            let t = u.txn[id] as usize;
            let ops = match gran {
                Gran::Txn => h.txns[t].ops(),
                Gran::Op => {
                    let o = u.op_of(id) as usize;
                    o..o + 1
                }
            };
            for o in ops {
                if wf.class[o].observes() && h.rf[o] != RF_INIT && (h.rf_txn[o] & crate::history::WRITER_TXN) as usize != t {
                    let wu = u.writer_unit_of_read(h, o);
                    if wu != NONE {
                        preds.push(wu);
                    }
                }
            }
            let prev = u.prev[id];
            preds.sort_unstable();
            preds.dedup();
            preds.retain(|p| *p != prev && *p != id as u32);
            u.pred.extend(preds.iter().copied());
            u.pred_off.push(u.pred.len() as u32);
        }
        u
    }

    fn push_unit(&mut self, t: u32, s: usize, last: &mut [u32], carry: &mut [Vec<u32>]) -> u32 {
        let id = self.n as u32;
        self.n += 1;
        let prev = last[s];
        if !carry[s].is_empty() {
            self.has_after = true;
            let mut targets = std::mem::take(&mut carry[s]);
            targets.sort_unstable();
            targets.dedup();
            self.after_preds.insert(id, targets);
        }
        self.txn.push(t);
        self.session.push(s as u32);
        self.spos.push(self.session_len[s]);
        self.session_len[s] += 1;
        self.prev.push(prev);
        self.next.push(NONE);
        if prev != NONE {
            self.next[prev as usize] = id;
        }
        last[s] = id;
        id
    }

    /// Successor lists (reverse of `pred`), as CSR.
    pub(crate) fn successors(&self) -> (Vec<u32>, Vec<u32>) {
        let mut count = vec![0u32; self.n + 1];
        for p in &self.pred {
            count[*p as usize + 1] += 1;
        }
        for i in 0..self.n {
            count[i + 1] += count[i];
        }
        // Fill each list from its start, moving the start to the list's end; the ends are the
        // next lists' starts, shifted back by one below (no second table).
        let mut succ = vec![0u32; self.pred.len()];
        for u in 0..self.n {
            if u + AHEAD < self.n {
                for p in self.preds(u + AHEAD) {
                    prefetch(&count[*p as usize]);
                }
            }
            for p in self.preds(u) {
                let slot = &mut count[*p as usize];
                succ[*slot as usize] = u as u32;
                *slot += 1;
            }
        }
        count.copy_within(0..self.n, 1);
        count[0] = 0;
        (count, succ)
    }
}

/// Whether an operation of this class is a unit at op granularity (the others are judged by
/// well-formedness alone).
fn is_unit(class: ReadClass) -> bool {
    matches!(
        class,
        ReadClass::NotRead
            | ReadClass::External
            | ReadClass::Internal
            | ReadClass::Intermediate
            | ReadClass::NonRepeatable
            | ReadClass::NotMyOwnWrite
    )
}

/// Whether, at op granularity, every operation is a unit and units are numbered like
/// operations: no transaction aborted, every operation a unit, and transactions' operations
/// in history order without gaps.
fn every_op_a_unit(h: &History, wf: &Wf) -> bool {
    let mut next = 0usize;
    for txn in &h.txns {
        if txn.outcome == crate::history::Outcome::Aborted || txn.ops().start != next {
            return false;
        }
        next = txn.ops().end;
    }
    next == h.ops.len() && wf.class.iter().all(|c| is_unit(*c))
}

/// Extra edges added on top of CO (forced write orders), as (from, to) unit pairs.
pub(crate) struct Extra<'a> {
    pub edges: &'a [(u32, u32)],
}

/// A topological order of CO (plus extra edges), or the units left over by a cycle.
pub(crate) fn topo_order(units: &Units, succ: &(Vec<u32>, Vec<u32>), extra: Option<&Extra<'_>>) -> Result<Vec<u32>, Vec<bool>> {
    let n = units.n;
    let mut indeg: Vec<u32> = (0..n).map(|u| u32::from(units.prev[u] != NONE) + (units.pred_off[u + 1] - units.pred_off[u])).collect();
    let mut extra_succ: Vec<Vec<u32>> = Vec::new();
    if let Some(x) = extra {
        extra_succ = vec![Vec::new(); n];
        for (a, b) in x.edges {
            indeg[*b as usize] += 1;
            extra_succ[*a as usize].push(*b);
        }
    }
    let mut queue: VecDeque<u32> = (0..n as u32).filter(|u| indeg[*u as usize] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(u) = queue.pop_front() {
        order.push(u);
        let u = u as usize;
        let mut release = |v: u32, queue: &mut VecDeque<u32>| {
            let d = &mut indeg[v as usize];
            *d -= 1;
            if *d == 0 {
                queue.push_back(v);
            }
        };
        if units.next[u] != NONE {
            release(units.next[u], &mut queue);
        }
        for v in &succ.1[succ.0[u] as usize..succ.0[u + 1] as usize] {
            release(*v, &mut queue);
        }
        if !extra_succ.is_empty() {
            for v in &extra_succ[u] {
                release(*v, &mut queue);
            }
        }
    }
    if order.len() == n {
        Ok(order)
    } else {
        let mut left = vec![true; n];
        for u in order {
            left[u as usize] = false;
        }
        Err(left)
    }
}

/// Vector clocks over chains (see the module doc).
pub(crate) struct Clocks {
    /// Per unit: its chain, its position in the chain, and where its clock row is stored.
    info: Vec<UnitClock>,
    /// Per unit: its position in the topological order.
    pos: Vec<u32>,
    /// Whether every unit's row is stored.
    all_stored: bool,
    pub chain_len: Vec<u32>,
    /// Units of each chain in order: `chain_units[chain_off[c]..chain_off[c+1]]`.
    pub chain_off: Vec<u32>,
    pub chain_units: Vec<u32>,
    /// Clock rows, each stored densely (values for chains `0..len`) when at least half its
    /// entries are non-zero, else as sorted `(chain, value)` pairs.
    data: Vec<u32>,
}

/// Everything about one unit's clock, in one cache line's quarter.
#[derive(Clone, Copy, Default)]
struct UnitClock {
    off: u64,
    chain: u32,
    cpos: u32,
    /// Row length (dense: chains; sparse: pairs), with `DENSE` set for dense rows.
    meta: u32,
}

const DENSE: u32 = 1 << 31;
/// `meta` flag of a unit whose row is not stored.
const NOT_STORED: u32 = 1 << 30;

/// Rows of units whose rows are not stored, kept only until their successors have used them.
struct Transient {
    rows: crate::fxhash::FxHashMap<u32, Vec<(u32, u32)>>,
    /// Per unit: how many successors (session successor and `after` successors) still need it.
    pending: Vec<u32>,
}

impl Transient {
    fn new(units: &Units) -> Transient {
        let mut pending: Vec<u32> = units.next.iter().map(|n| u32::from(*n != NONE)).collect();
        for targets in units.after_preds.values() {
            for t in targets {
                pending[*t as usize] += 1;
            }
        }
        Transient { rows: crate::fxhash::map_with_capacity(64), pending }
    }

    /// `u` has been computed: release the rows of its predecessors it was the last to need.
    fn release_preds(&mut self, units: &Units, u: usize) {
        let prev = units.prev[u];
        let mut release = |p: u32| {
            let left = &mut self.pending[p as usize];
            if *left > 0 {
                *left -= 1;
                if *left == 0 {
                    self.rows.remove(&p);
                }
            }
        };
        if prev != NONE {
            release(prev);
        }
        if let Some(targets) = units.after_preds.get(&(u as u32)) {
            for t in targets {
                release(*t);
            }
        }
    }
}

/// The accumulator in which a unit's clock is computed from its predecessors'.
struct Join {
    acc: Vec<u32>,
    touched: Vec<u32>,
}

impl Join {
    fn bump(&mut self, c: u32, v: u32) {
        let slot = &mut self.acc[c as usize];
        if *slot == 0 {
            self.touched.push(c);
        }
        if *slot < v {
            *slot = v;
        }
    }

    /// Join the clocks of `u`'s predecessors, each including the predecessor itself.
    fn join(&mut self, units: &Units, clocks: &Clocks, transient: &Transient, u: usize) {
        self.touched.clear();
        let prev = units.prev[u];
        let preds = std::iter::once(prev).filter(|p| *p != NONE).chain(units.preds(u).iter().copied());
        for (i, p) in preds.enumerate() {
            let pi = clocks.info[p as usize];
            if i > 0 && pi.chain != NONE && self.acc[pi.chain as usize] > pi.cpos {
                continue; // already in the past, with its whole past
            }
            if pi.meta & NOT_STORED == 0 {
                clocks.for_each_in_row(p as usize, |c, v| self.bump(c, v));
            } else {
                let row = transient.rows.get(&p).expect("an unstored row is kept until its successors are computed");
                for &(c, v) in row {
                    self.bump(c, v);
                }
            }
            if pi.chain != NONE {
                self.bump(pi.chain, pi.cpos + 1);
            }
        }
    }

    /// The joined clock as sorted entries, and reset.
    fn take(&mut self, entries: &mut Vec<(u32, u32)>) {
        self.touched.sort_unstable();
        entries.clear();
        for &c in &self.touched {
            entries.push((c, self.acc[c as usize]));
            self.acc[c as usize] = 0;
        }
        self.touched.clear();
    }
}

impl Clocks {
    /// Compute clocks along a topological order of CO. Fails (with the units left over) if CO
    /// is cyclic. Rows of non-writing units are kept only while they fit in `reader_words_max`
    /// words (see [`Clocks::walk`]); rows of writing units are always kept.
    pub(crate) fn compute(units: &Units, succ: &(Vec<u32>, Vec<u32>), reader_words_max: usize) -> Result<Clocks, Vec<bool>> {
        let order = topo_order(units, succ, None)?;
        let n = units.n;
        let mut clocks = Clocks {
            info: vec![UnitClock { off: 0, chain: NONE, cpos: 0, meta: NOT_STORED }; n],
            pos: vec![0; n],
            chain_len: Vec::new(),
            chain_off: Vec::new(),
            chain_units: Vec::new(),
            data: Vec::with_capacity(n * 4),
            all_stored: true,
        };
        let mut join = Join { acc: Vec::new(), touched: Vec::new() };
        let mut transient = Transient::new(units);
        let mut entries: Vec<(u32, u32)> = Vec::new();
        let mut last_write = vec![NONE; units.session_len.len()];
        let mut reader_words = 0usize;
        for (step, &u) in order.iter().enumerate() {
            let u = u as usize;
            clocks.pos[u] = step as u32;
            join.join(units, &clocks, &transient, u);
            // Only writing units are placed on chains (see the module doc), and only if they
            // are in someone's past (read, or followed in their session). Continue the chain of
            // the session's last writing unit, or of a writing predecessor, or any chain whose
            // tail is in the past; else open a new chain.
            let followed = units.next[u] != NONE || succ.0[u] != succ.0[u + 1];
            let (chain, cpos) = if units.writes[u] && followed {
                let acc = &join.acc;
                let is_tail = |p: u32| -> bool {
                    p != NONE && {
                        let pi = clocks.info[p as usize];
                        pi.chain != NONE && pi.cpos + 1 == clocks.chain_len[pi.chain as usize] && acc[pi.chain as usize] == pi.cpos + 1
                    }
                };
                let own = last_write[units.session[u] as usize];
                let c = if is_tail(own) {
                    clocks.info[own as usize].chain
                } else if let Some(p) = units.preds(u).iter().copied().find(|p| is_tail(*p)) {
                    clocks.info[p as usize].chain
                } else if let Some(c) = join.touched.iter().copied().find(|c| acc[*c as usize] == clocks.chain_len[*c as usize]) {
                    c
                } else {
                    clocks.chain_len.push(0);
                    join.acc.push(0);
                    (clocks.chain_len.len() - 1) as u32
                };
                let cpos = clocks.chain_len[c as usize];
                clocks.chain_len[c as usize] += 1;
                debug_assert_eq!(join.acc[c as usize], cpos);
                last_write[units.session[u] as usize] = u as u32;
                (c, cpos)
            } else {
                (NONE, 0)
            };
            join.take(&mut entries);
            let store = chain != NONE || reader_words < reader_words_max;
            if store {
                let before = clocks.data.len();
                let (off, meta) = clocks.push_row(&entries);
                if chain == NONE {
                    reader_words += clocks.data.len() - before;
                }
                clocks.info[u] = UnitClock { off, chain, cpos, meta };
            } else {
                clocks.all_stored = false;
                clocks.info[u] = UnitClock { off: 0, chain, cpos, meta: NOT_STORED };
                if transient.pending[u] > 0 {
                    transient.rows.insert(u as u32, entries.clone());
                }
            }
            transient.release_preds(units, u);
        }
        let chains = clocks.chain_len.len();
        clocks.chain_off = vec![0u32; chains + 1];
        for c in 0..chains {
            clocks.chain_off[c + 1] = clocks.chain_off[c] + clocks.chain_len[c];
        }
        clocks.chain_units = vec![0u32; clocks.chain_off[chains] as usize];
        for u in 0..n {
            let i = clocks.info[u];
            if i.chain != NONE {
                clocks.chain_units[(clocks.chain_off[i.chain as usize] + i.cpos) as usize] = u as u32;
            }
        }
        clocks.data.shrink_to_fit();
        Ok(clocks)
    }

    /// Whether every unit's row is stored (then any unit's clock can be read directly).
    pub(crate) fn all_stored(&self) -> bool {
        self.all_stored
    }

    /// Whether `u`'s row is stored.
    #[inline]
    pub(crate) fn has_row(&self, u: usize) -> bool {
        self.info[u].meta & NOT_STORED == 0
    }

    /// Position of `u` in the topological order the clocks were computed in.
    #[inline]
    pub(crate) fn topo_pos(&self, u: usize) -> u32 {
        self.pos[u]
    }

    /// Visit the units for which `want` holds, each with its clock as a dense row, in a
    /// topological order; rows that are not stored are recomputed on the way (and dropped as
    /// soon as their successors no longer need them).
    pub(crate) fn walk(&self, units: &Units, want: &dyn Fn(usize) -> bool, f: &mut dyn FnMut(usize, &DenseRow)) {
        let mut order: Vec<u32> = (0..units.n as u32).collect();
        order.sort_unstable_by_key(|u| self.pos[*u as usize]);
        let mut join = Join { acc: vec![0; self.chain_count()], touched: Vec::new() };
        let mut transient = Transient::new(units);
        let mut row = DenseRow::new(self.chain_count());
        let mut entries: Vec<(u32, u32)> = Vec::new();
        for u in order {
            let u = u as usize;
            if self.has_row(u) {
                if want(u) {
                    row.load(self, u);
                    f(u, &row);
                }
            } else {
                join.join(units, self, &transient, u);
                join.take(&mut entries);
                if want(u) {
                    row.set(u, &entries);
                    f(u, &row);
                }
                if transient.pending[u] > 0 {
                    transient.rows.insert(u as u32, entries.clone());
                }
            }
            transient.release_preds(units, u);
        }
    }

    /// Append a row (`entries` sorted by chain, values non-zero); returns (offset, meta).
    fn push_row(&mut self, entries: &[(u32, u32)]) -> (u64, u32) {
        let off = self.data.len() as u64;
        let len = entries.last().map_or(0, |e| e.0 as usize + 1);
        if len <= 2 * entries.len() {
            let start = self.data.len();
            self.data.resize(start + len, 0);
            for &(c, v) in entries {
                self.data[start + c as usize] = v;
            }
            (off, len as u32 | DENSE)
        } else {
            for &(c, v) in entries {
                self.data.push(c);
                self.data.push(v);
            }
            (off, entries.len() as u32)
        }
    }

    /// (chain, position) of a unit.
    #[inline]
    pub(crate) fn place(&self, u: usize) -> (u32, u32) {
        let i = self.info[u];
        (i.chain, i.cpos)
    }

    /// Number of chain-`c` units in the strict causal past of `u`.
    #[inline]
    pub(crate) fn bound(&self, u: usize, c: u32) -> u32 {
        let i = self.info[u];
        let off = i.off as usize;
        assert!(i.meta & NOT_STORED == 0, "the clock of a unit whose clock is not stored");
        let len = (i.meta & !DENSE) as usize;
        if i.meta & DENSE != 0 {
            if (c as usize) < len { self.data[off + c as usize] } else { 0 }
        } else {
            let (mut lo, mut hi) = (0usize, len);
            while lo < hi {
                let mid = (lo + hi) / 2;
                let cm = self.data[off + 2 * mid];
                if cm == c {
                    return self.data[off + 2 * mid + 1];
                }
                if cm < c {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            0
        }
    }

    /// Ask the CPU to start fetching `u`'s clock header, without waiting for it.
    #[inline]
    pub(crate) fn prefetch_info(&self, u: usize) {
        prefetch(&self.info[u]);
    }

    /// Ask the CPU to start fetching `u`'s clock row (its header should be at hand).
    #[inline]
    pub(crate) fn prefetch_row(&self, u: usize) {
        if let Some(w) = self.data.get(self.info[u].off as usize) {
            prefetch(w);
        }
    }

    /// Number of chain-`c` units in the causal past of `u` or equal to it.
    #[inline]
    pub(crate) fn bound_incl(&self, u: usize, c: u32) -> u32 {
        let i = self.info[u];
        if i.chain == c { i.cpos + 1 } else { self.bound(u, c) }
    }

    /// Call `f(chain, count)` for each chain in the strict causal past of `u`, in chain order.
    #[inline]
    pub(crate) fn for_each_in_row(&self, u: usize, mut f: impl FnMut(u32, u32)) {
        let i = self.info[u];
        assert!(i.meta & NOT_STORED == 0, "the clock of a unit whose clock is not stored");
        let off = i.off as usize;
        let len = (i.meta & !DENSE) as usize;
        if i.meta & DENSE != 0 {
            for (c, v) in self.data[off..off + len].iter().enumerate() {
                if *v != 0 {
                    f(c as u32, *v);
                }
            }
        } else {
            for pair in self.data[off..off + 2 * len].chunks_exact(2) {
                f(pair[0], pair[1]);
            }
        }
    }

    /// `a` (a writing unit) strictly causally precedes `b` (any unit).
    #[inline]
    pub(crate) fn before(&self, a: usize, b: usize) -> bool {
        let (ca, pa) = self.place(a);
        assert!(ca != NONE, "causal-order queries start from a writing unit");
        let (cb, pb) = self.place(b);
        if ca == cb {
            return pa < pb;
        }
        self.bound(b, ca) > pa
    }

    /// `a` causally precedes or equals `b`.
    #[inline]
    pub(crate) fn before_eq(&self, a: usize, b: usize) -> bool {
        a == b || self.before(a, b)
    }

    pub(crate) fn chain_count(&self) -> usize {
        self.chain_len.len()
    }

    /// Clock words stored (for diagnostics).
    pub(crate) fn entries(&self) -> usize {
        self.data.len()
    }

    pub(crate) fn units_of_chain(&self, c: u32) -> &[u32] {
        &self.chain_units[self.chain_off[c as usize] as usize..self.chain_off[c as usize + 1] as usize]
    }
}

/// A dense copy of one unit's clock, for many lookups against the same unit.
pub(crate) struct DenseRow {
    val: Vec<u32>,
    touched: Vec<u32>,
    pub unit: u32,
}

impl DenseRow {
    pub(crate) fn new(chains: usize) -> DenseRow {
        DenseRow { val: vec![0; chains], touched: Vec::new(), unit: NONE }
    }
    pub(crate) fn load(&mut self, clocks: &Clocks, u: usize) {
        if self.unit == u as u32 {
            return;
        }
        for c in self.touched.drain(..) {
            self.val[c as usize] = 0;
        }
        let (val, touched) = (&mut self.val, &mut self.touched);
        clocks.for_each_in_row(u, |c, v| {
            val[c as usize] = v;
            touched.push(c);
        });
        self.unit = u as u32;
    }
    /// Set to the given entries (for unit `u`).
    pub(crate) fn set(&mut self, u: usize, entries: &[(u32, u32)]) {
        for c in self.touched.drain(..) {
            self.val[c as usize] = 0;
        }
        for &(c, v) in entries {
            self.val[c as usize] = v;
            self.touched.push(c);
        }
        self.unit = u as u32;
    }

    #[inline]
    pub(crate) fn get(&self, c: u32) -> u32 {
        self.val[c as usize]
    }
}

/// For each key, the units writing it, grouped by chain, ordered by chain position.
///
/// One contiguous block per key, so a lookup touches one or two cache lines:
/// `[runs, chain₀, end₀, chain₁, end₁, …, cpos₀, cpos₁, …]` where `endᵢ` is the end (exclusive)
/// of run i among the key's positions. A writer is found from its (chain, position) through
/// [`Clocks::units_of_chain`].
pub(crate) struct WriteIndex {
    key_off: Vec<u64>,
    blocks: Vec<u32>,
}

/// A run of one key's writers in one chain: (chain, index of its first entry, end).
pub(crate) type Run = (u32, u32, u32);

impl WriteIndex {
    pub(crate) fn build(h: &History, units: &Units, clocks: &Clocks) -> WriteIndex {
        let keys = h.keys.len();
        let mut count = vec![0u64; keys + 1];
        let mut scratch: Vec<u32> = Vec::new();
        let unit_keys = |u: usize, scratch: &mut Vec<u32>| {
            scratch.clear();
            match units.gran {
                Gran::Op => {
                    let op = &h.ops[units.op_of(u) as usize];
                    if op.is_write() {
                        scratch.push(op.key);
                    }
                }
                Gran::Txn => {
                    let txn = &h.txns[units.txn[u] as usize];
                    for o in txn.ops() {
                        let op = &h.ops[o];
                        if op.kind == crate::history::KIND_WRITE_FINAL {
                            scratch.push(op.key);
                        }
                    }
                }
            }
        };
        for u in 0..units.n {
            if clocks.place(u).0 == NONE {
                continue; // a write in no one's past: never visible to a read
            }
            unit_keys(u, &mut scratch);
            for k in &scratch {
                count[*k as usize + 1] += 1;
            }
        }
        for k in 0..keys {
            count[k + 1] += count[k];
        }
        let mut fill = count.clone();
        // (chain, position) of each write, bucketed by key.
        let mut all = vec![(0u32, 0u32); count[keys] as usize];
        for u in 0..units.n {
            let place = clocks.place(u);
            if place.0 == NONE {
                continue;
            }
            unit_keys(u, &mut scratch);
            for k in &scratch {
                let slot = &mut fill[*k as usize];
                all[*slot as usize] = place;
                *slot += 1;
            }
        }
        drop(fill);
        let mut key_off = vec![0u64; keys + 1];
        let mut blocks: Vec<u32> = Vec::with_capacity(all.len() * 2 + keys);
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for k in 0..keys {
            let bucket = &mut all[count[k] as usize..count[k + 1] as usize];
            if bucket.len() > 1 {
                bucket.sort_unstable();
            }
            runs.clear();
            for (i, (c, _)) in bucket.iter().enumerate() {
                match runs.last_mut() {
                    Some(r) if r.0 == *c => r.1 = i as u32 + 1,
                    _ => runs.push((*c, i as u32 + 1)),
                }
            }
            key_off[k] = blocks.len() as u64;
            blocks.push(runs.len() as u32);
            for r in &runs {
                blocks.push(r.0);
                blocks.push(r.1);
            }
            blocks.extend(bucket.iter().map(|(_, p)| *p));
        }
        key_off[keys] = blocks.len() as u64;
        WriteIndex { key_off, blocks }
    }

    /// The runs of key `k`, each (chain, first entry, end), and the key's positions.
    #[inline]
    pub(crate) fn key(&self, k: u32) -> KeyWrites<'_> {
        let off = self.key_off[k as usize] as usize;
        let runs = self.blocks[off] as usize;
        let end = self.key_off[k as usize + 1] as usize;
        KeyWrites { runs: &self.blocks[off + 1..off + 1 + 2 * runs], cpos: &self.blocks[off + 1 + 2 * runs..end] }
    }

    /// Ask the CPU to start fetching the offset of key `k`'s block.
    #[inline]
    pub(crate) fn prefetch_offset(&self, k: u32) {
        prefetch(&self.key_off[k as usize]);
    }

    /// Ask the CPU to start fetching key `k`'s block (its offset should be at hand).
    #[inline]
    pub(crate) fn prefetch_block(&self, k: u32) {
        if let Some(w) = self.blocks.get(self.key_off[k as usize] as usize) {
            prefetch(w);
        }
    }
}

/// The writers of one key.
pub(crate) struct KeyWrites<'a> {
    runs: &'a [u32],
    cpos: &'a [u32],
}

impl KeyWrites<'_> {
    /// Number of chains writing the key.
    #[inline]
    pub(crate) fn run_count(&self) -> usize {
        self.runs.len() / 2
    }

    #[inline]
    pub(crate) fn runs(&self) -> impl Iterator<Item = Run> + '_ {
        let mut start = 0u32;
        self.runs.chunks_exact(2).map(move |r| {
            let run = (r[0], start, r[1]);
            start = r[1];
            run
        })
    }

    /// The chain position of the run's last entry with position `< bound`.
    #[inline]
    pub(crate) fn last_pos_before(&self, run: Run, bound: u32) -> Option<u32> {
        let slice = &self.cpos[run.1 as usize..run.2 as usize];
        let i = slice.partition_point(|p| *p < bound);
        (i > 0).then(|| slice[i - 1])
    }

    /// The last entry of the run with chain position `< bound`, as (position, unit).
    #[inline]
    pub(crate) fn last_before(&self, clocks: &Clocks, run: Run, bound: u32) -> Option<(u32, u32)> {
        self.last_pos_before(run, bound).map(|p| (p, clocks.units_of_chain(run.0)[p as usize]))
    }
}

/// Strongly connected components (of size > 1 or with a self-loop) of the subgraph induced by
/// `keep`, in order of their smallest unit. Iterative Tarjan.
pub(crate) fn sccs(n: usize, keep: &[bool], succs: &dyn Fn(usize, &mut Vec<u32>)) -> Vec<Vec<u32>> {
    let mut index = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut out: Vec<Vec<u32>> = Vec::new();
    let mut next_index = 0u32;
    let mut frames: Vec<(u32, Vec<u32>, usize)> = Vec::new();
    let mut buf = Vec::new();
    for root in 0..n {
        if !keep[root] || index[root] != NONE {
            continue;
        }
        buf.clear();
        succs(root, &mut buf);
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        frames.push((root as u32, buf.iter().copied().filter(|v| keep[*v as usize]).collect(), 0));
        while let Some(frame) = frames.last_mut() {
            let v = frame.0 as usize;
            if frame.2 < frame.1.len() {
                let w = frame.1[frame.2] as usize;
                frame.2 += 1;
                if index[w] == NONE {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    buf.clear();
                    succs(w, &mut buf);
                    let list = buf.iter().copied().filter(|x| keep[*x as usize]).collect();
                    frames.push((w as u32, list, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                let self_loop = frame.1.contains(&(v as u32));
                frames.pop();
                if let Some(parent) = frames.last() {
                    let p = parent.0 as usize;
                    low[p] = low[p].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    loop {
                        let w = stack.pop().expect("the component's root is on the stack");
                        on_stack[w as usize] = false;
                        comp.push(w);
                        if w as usize == v {
                            break;
                        }
                    }
                    if comp.len() > 1 || self_loop {
                        comp.sort_unstable();
                        out.push(comp);
                    }
                }
            }
        }
    }
    out.sort_by_key(|c| c[0]);
    out
}

/// The shortest cycle inside a strongly connected component (as a list of units, the first
/// repeated implicitly at the end). Breadth-first search from up to `sources_max` members.
pub(crate) fn shortest_cycle(comp: &[u32], succs: &dyn Fn(usize, &mut Vec<u32>), sources_max: usize) -> Vec<u32> {
    let member: std::collections::BTreeSet<u32> = comp.iter().copied().collect();
    let mut best: Option<Vec<u32>> = None;
    let mut buf = Vec::new();
    for &s in comp.iter().take(sources_max) {
        // BFS from s until we come back to s.
        let mut parent: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
        let mut queue = VecDeque::new();
        queue.push_back(s);
        let mut found: Option<u32> = None;
        'bfs: while let Some(v) = queue.pop_front() {
            buf.clear();
            succs(v as usize, &mut buf);
            let next: Vec<u32> = buf.iter().copied().filter(|w| member.contains(w)).collect();
            for w in next {
                if w == s {
                    found = Some(v);
                    break 'bfs;
                }
                if let std::collections::btree_map::Entry::Vacant(e) = parent.entry(w) {
                    e.insert(v);
                    queue.push_back(w);
                }
            }
            if let Some(b) = &best {
                // No shorter cycle through s can be found past this depth.
                let depth = path_len(&parent, v, s);
                if depth + 1 >= b.len() {
                    break;
                }
            }
        }
        if let Some(last) = found {
            let mut cycle = vec![last];
            let mut v = last;
            while v != s {
                v = parent[&v];
                cycle.push(v);
            }
            cycle.reverse();
            if best.as_ref().is_none_or(|b| cycle.len() < b.len()) {
                best = Some(cycle);
            }
        }
        if best.as_ref().is_some_and(|b| b.len() <= 2) {
            break;
        }
    }
    best.unwrap_or_else(|| comp.to_vec())
}

fn path_len(parent: &std::collections::BTreeMap<u32, u32>, mut v: u32, s: u32) -> usize {
    let mut n = 0;
    while v != s {
        v = parent[&v];
        n += 1;
    }
    n
}

/// Shortest CO path from `from` to `to` (both units, `from` CO-before `to`), as a unit list.
/// Only units that `from` precedes are explored.
pub(crate) fn co_path(units: &Units, clocks: &Clocks, from: usize, to: usize) -> Vec<u32> {
    // Search backwards from `to` over predecessors.
    let mut parent: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
    let mut queue = VecDeque::new();
    queue.push_back(to as u32);
    while let Some(v) = queue.pop_front() {
        let v = v as usize;
        let mut visit = |p: u32, queue: &mut VecDeque<u32>| -> bool {
            if p == NONE {
                return false;
            }
            if p as usize == from {
                parent.insert(p, v as u32);
                return true;
            }
            // Only units `from` may precede: by clock when the row is stored, else by position
            // in the topological order.
            let ahead = if clocks.has_row(p as usize) {
                clocks.before(from, p as usize)
            } else {
                clocks.topo_pos(p as usize) > clocks.topo_pos(from)
            };
            if parent.contains_key(&p) || !ahead {
                return false;
            }
            parent.insert(p, v as u32);
            queue.push_back(p);
            false
        };
        if visit(units.prev[v], &mut queue) {
            break;
        }
        let mut done = false;
        for &p in units.preds(v) {
            if visit(p, &mut queue) {
                done = true;
                break;
            }
        }
        if done {
            break;
        }
    }
    let mut path = vec![from as u32];
    let mut v = from as u32;
    while v as usize != to {
        match parent.get(&v) {
            Some(n) => {
                v = *n;
                path.push(v);
            }
            None => break,
        }
    }
    path
}

/// A hint that `*p` will be read soon. It changes no result: it only lets the cache misses of
/// the next few reads overlap.
#[inline(always)]
pub(crate) fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no effect beyond the cache; `p` is a valid
    // reference anyway.
    #[allow(unsafe_code)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>((p as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
