//! Causal checks: a read must not return a value overwritten by a write it can see.
//!
//! For a read of key `x` from write `w` (or of the initial value) in unit `u`, every other
//! write `v` of `x` *visible* to `u` must be ordered before `w`. Visibility depends on the
//! level: the causal past for `cc`, `ccv`, `cm` and `tcc`; direct session order and reads-from
//! for `ra`; the writers of the transaction's earlier reads for `rc` (Biswas & Enea's axioms,
//! which Plume's TAPs characterise). Two things can go wrong:
//!
//! * `w` causally precedes `v` (or `w` is the initial value): the read is stale by causality
//!   alone — WriteCORead / WriteCOInitRead, or the TAPs NonMonoReadCO, FracturedReadCO,
//!   COConflictCM, named by the weakest visibility under which `v` is seen;
//! * otherwise `v` must be arbitrated before `w`: a *forced* write-order edge. If CO plus the
//!   forced edges is cyclic, no single order of writes explains all reads — CyclicCF, or the
//!   TAPs NonMonoReadCM, FracturedReadCM, ConflictCM.
//!
//! Per read, only the last write of `x` of each chain inside the visible past is examined: the
//! earlier ones precede it causally, so they add nothing. That makes the check O(n·k) for `k`
//! chains (AWDIT's bound), with a binary search per chain.

use crate::anomaly::Anomaly;
use crate::finding::{Detail, Finding, Hop, Sink, unit_hop, unit_hops};
use crate::graph::{Clocks, DenseRow, Extra, Gran, Units, WriteIndex, co_path, sccs, shortest_cycle};
use crate::history::{History, KIND_WRITE_FINAL, NONE, RF_INIT};
use crate::level::Level;
use crate::wf::{ReadClass, Wf};
use std::collections::{BTreeMap, BTreeSet};

/// A stale read: (read op, unit of the write it read or NONE for the initial value, the unit
/// of a visible newer write).
type Stale = (u32, u32, u32);
/// A forced write order: (unit of the write that must come first, unit of the write read, the
/// read op that forces it).
type Forced = (u32, u32, u32);

/// Whether a read of this class is judged against the writes its unit can see: at operation
/// level (`cc`, `ccv`, `cm`) every read of another's or its own final write, at transaction level
/// (`rc`, `ra`, `tcc`) reads of other transactions (a non-repeatable one only where that is not
/// already an anomaly of its own).
pub(crate) fn judged(level: Level, class: ReadClass) -> bool {
    if level.is_transactional() {
        class == ReadClass::External || (class == ReadClass::NonRepeatable && !level.forbids(Anomaly::NonRepeatableRead))
    } else {
        matches!(class, ReadClass::External | ReadClass::Internal | ReadClass::NonRepeatable)
    }
}

/// What the check needs from the history and the causal order.
pub(crate) struct Ctx<'a> {
    pub h: &'a History,
    pub wf: &'a Wf,
    pub units: &'a Units,
    pub succ: &'a (Vec<u32>, Vec<u32>),
    pub clocks: &'a Clocks,
    /// Threads for the read scan (the result does not depend on it).
    pub threads: usize,
    /// Write orders the history shows directly (list-append version orders), as forced edges
    /// that every tier of the write-order cycle check includes.
    pub known: &'a [Forced],
}

/// The outcome of scanning one read against the writes its unit can see.
enum Scan {
    Fine,
    /// The read is stale: this visible write is causally newer than the value read.
    Stale(u32),
}

impl Ctx<'_> {
    /// The writer unit of a read (NONE for the initial value).
    fn writer(&self, o: usize) -> u32 {
        if self.h.rf[o] == RF_INIT { NONE } else { self.units.writer_unit_of_read(self.h, o) }
    }

    /// Examine the last write of `key` of each chain in `row`'s past; push forced edges.
    fn scan(&self, index: &WriteIndex, row: &DenseRow, key: u32, uw: u32, o: u32, forced: &mut Vec<(u32, u32, u32)>) -> Scan {
        let clocks = self.clocks;
        let writes = index.key(key);
        for run in writes.runs() {
            let c = run.0;
            let bound = row.get(c);
            if bound == 0 {
                continue;
            }
            if uw != NONE {
                // How much of chain c the write read has seen (itself included): when that
                // covers what the reader sees, the reader's last write of the key in c is no
                // newer than the write read. This is the common case and needs no search.
                let seen = clocks.bound_incl(uw as usize, c);
                if seen >= bound {
                    continue;
                }
                let Some(tv_cpos) = writes.last_pos_before(run, bound) else {
                    continue;
                };
                if tv_cpos < seen {
                    continue;
                }
                let tv = clocks.units_of_chain(c)[tv_cpos as usize];
                // tv is not in the past of uw: either uw precedes tv (stale) or they are
                // concurrent (tv must be ordered first).
                if clocks.before(uw as usize, tv as usize) {
                    return Scan::Stale(tv);
                }
                forced.push((tv, uw, o));
            } else if let Some((_, tv)) = writes.last_before(clocks, run, bound) {
                return Scan::Stale(tv);
            }
        }
        Scan::Fine
    }

    /// The write op of `key` in unit `u` (its transaction's final write of the key).
    fn write_op(&self, u: u32, key: u32) -> u32 {
        match self.units.gran {
            Gran::Op => self.units.op_of(u as usize),
            Gran::Txn => {
                let txn = &self.h.txns[self.units.txn[u as usize] as usize];
                txn.ops()
                    .rev()
                    .find(|o| self.h.ops[*o].kind == KIND_WRITE_FINAL && self.h.ops[*o].key == key)
                    .expect("the write index only lists units that write the key") as u32
            }
        }
    }

    fn path_hops(&self, from: u32, to: u32) -> Vec<Hop> {
        let path = co_path(self.units, self.clocks, from as usize, to as usize);
        unit_hops(self.h, self.wf, self.units, &path, &BTreeMap::new())
    }

    /// A direct witness from `from` to `to` when one edge (or session order) suffices,
    /// else the shortest causal path.
    fn witness(&self, from: u32, to: u32) -> Vec<Hop> {
        let units = self.units;
        let (f, t) = (from as usize, to as usize);
        if units.session[f] == units.session[t] && units.spos[f] < units.spos[t] {
            return vec![Hop::Program {
                from: units.txn[f],
                to: units.txn[t],
                from_op: (units.gran == Gran::Op).then(|| units.op_of(f)),
                to_op: (units.gran == Gran::Op).then(|| units.op_of(t)),
                after: false,
            }];
        }
        if units.preds(t).contains(&from) {
            return vec![unit_hop(self.h, self.wf, units, from, to, &BTreeMap::new())];
        }
        self.path_hops(from, to)
    }

    fn shadow(&self, anomaly: Anomaly, o: u32, uw: u32, tv: u32, to_reader: Vec<Hop>) -> Finding {
        let key = self.h.ops[o as usize].key;
        let newer = self.write_op(tv, key);
        let to_newer = if uw == NONE { Vec::new() } else { self.witness(uw, tv) };
        Finding { anomaly, key: Some(key), read: Some(o), detail: Detail::Shadow { newer, to_newer, to_reader } }
    }
}

// ---------------------------------------------------------------------------------------------
// Operation level: cc, ccv, cm

/// CC (WriteCORead, WriteCOInitRead) and, with `convergence`, CCv's CyclicCF. Returns the reads
/// found stale (so the CM pass can skip them).
pub(crate) fn check_ops(cx: &Ctx<'_>, convergence: bool, sink: &mut Sink) -> BTreeSet<u32> {
    let units = cx.units;
    let index = WriteIndex::build(cx.h, units, cx.clocks);
    let checked = |class: ReadClass| judged(Level::Cc, class);
    let (found, forced) = parallel_scan(cx, &index, &checked);
    let mut stale = BTreeSet::new();
    for (o, uw, tv) in found {
        stale.insert(o);
        let anomaly = if uw == NONE { Anomaly::WriteCOInitRead } else { Anomaly::WriteCORead };
        if sink.wants() {
            let u = units.unit_of(o as usize);
            let to_reader = cx.witness(tv, u);
            sink.push(cx.shadow(anomaly, o, uw, tv, to_reader));
        } else {
            sink.count(anomaly);
        }
    }
    if convergence {
        let mut forced = forced;
        forced.extend_from_slice(cx.known);
        let edges = dedup_forced(forced);
        report_forced_cycles(cx, &[(Anomaly::CyclicCF, &edges)], sink);
    }
    stale
}

/// Scan every checked read against the writes its unit can see, on a few threads (the work is
/// read-only; results are merged in unit order, so the outcome does not depend on threads).
/// Returns the stale reads (read, writer unit, newer unit) and the forced edges.
fn parallel_scan(cx: &Ctx<'_>, index: &WriteIndex, checked: &(dyn Fn(ReadClass) -> bool + Sync)) -> (Vec<Stale>, Vec<Forced>) {
    let n = cx.units.n;
    let h = cx.h;
    // The checked reads of one unit: (read, key, writer unit).
    let reads_of = |u: usize, reads: &mut Vec<(u32, u32, u32)>| {
        reads.clear();
        for o in cx.units.ops_of(h, u) {
            if checked(cx.wf.class[o]) {
                reads.push((o as u32, h.ops[o].key, cx.writer(o)));
            }
        }
    };
    let scan_unit = |row: &DenseRow, reads: &[(u32, u32, u32)], stale: &mut Vec<(u32, u32, u32)>, forced: &mut Vec<(u32, u32, u32)>| {
        for &(o, key, uw) in reads {
            if let Scan::Stale(tv) = cx.scan(index, row, key, uw, o, forced) {
                stale.push((o, uw, tv));
            }
        }
    };
    if !cx.clocks.all_stored() {
        // Some clocks are recomputed on the way: one pass in topological order.
        let (mut stale, mut forced) = (Vec::new(), Vec::new());
        let mut reads = Vec::new();
        let want = |u: usize| cx.units.ops_of(h, u).any(|o| checked(cx.wf.class[o]));
        cx.clocks.walk(cx.units, &want, &mut |u, row| {
            reads_of(u, &mut reads);
            scan_unit(row, &reads, &mut stale, &mut forced);
        });
        stale.sort_unstable();
        return (stale, forced);
    }
    let threads = if n < 2_000 { 1 } else { cx.threads.max(1) };
    let chunk = n.div_ceil(threads).max(1);
    // Start fetching what reads will need, in two waves (the addresses of the second depend
    // on the first), one unit ahead, so that cache misses overlap instead of queueing.
    let wave1 = |reads: &[(u32, u32, u32)]| {
        for &(_, key, uw) in reads {
            index.prefetch_offset(key);
            if uw != NONE {
                cx.clocks.prefetch_info(uw as usize);
            }
        }
    };
    let wave2 = |reads: &[(u32, u32, u32)]| {
        for &(_, key, uw) in reads {
            index.prefetch_block(key);
            if uw != NONE {
                cx.clocks.prefetch_row(uw as usize);
            }
        }
    };
    let work = |range: std::ops::Range<usize>| {
        let mut row = DenseRow::new(cx.clocks.chain_count());
        let mut forced = Vec::new();
        let mut stale = Vec::new();
        let mut reads: Vec<(u32, u32, u32)> = Vec::new();
        let mut next: Vec<(u32, u32, u32)> = Vec::new();
        let end = range.end;
        if range.start < end {
            reads_of(range.start, &mut reads);
            wave1(&reads);
        }
        for u in range {
            if u + 1 < end {
                reads_of(u + 1, &mut next);
                wave1(&next);
            }
            if !reads.is_empty() {
                wave2(&reads);
                row.load(cx.clocks, u);
                scan_unit(&row, &reads, &mut stale, &mut forced);
            }
            std::mem::swap(&mut reads, &mut next);
        }
        (stale, forced)
    };
    if threads == 1 {
        return work(0..n);
    }
    let parts: Vec<(Vec<Stale>, Vec<Forced>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let work = &work;
                scope.spawn(move || work(i * chunk..((i + 1) * chunk).min(n)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a scan thread panicked")).collect()
    });
    let mut stale = Vec::new();
    let mut forced = Vec::new();
    for (s, f) in parts {
        stale.extend(s);
        forced.extend(f);
    }
    (stale, forced)
}

fn dedup_forced(mut forced: Vec<(u32, u32, u32)>) -> Vec<(u32, u32, u32)> {
    forced.sort_unstable();
    forced.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    forced
}

// ---------------------------------------------------------------------------------------------
// Transaction level: rc, ra, tcc

/// Which level's visibility a stale read or a forced edge needs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Vis {
    Rc,
    Ra,
    Tcc,
}

impl Vis {
    fn allowed_at(self, level: Level) -> bool {
        match level {
            Level::Rc => self == Vis::Rc,
            Level::Ra => self <= Vis::Ra,
            _ => true,
        }
    }
}

/// Per-session write lists (for "the last write of x earlier in my session").
pub(crate) struct SessionWrites {
    /// key → (session, spos, unit) sorted by (session, spos).
    by_key: BTreeMap<u32, Vec<(u32, u32, u32)>>,
}

impl SessionWrites {
    pub(crate) fn build(h: &History, units: &Units, keys: &BTreeSet<u32>) -> SessionWrites {
        let mut by_key: BTreeMap<u32, Vec<(u32, u32, u32)>> = keys.iter().map(|k| (*k, Vec::new())).collect();
        for u in 0..units.n {
            let mut push = |k: u32| {
                if let Some(list) = by_key.get_mut(&k)
                    && list.last().map(|e| e.2) != Some(u as u32)
                {
                    list.push((units.session[u], units.spos[u], u as u32));
                }
            };
            match units.gran {
                Gran::Op => {
                    let op = &h.ops[units.op_of(u) as usize];
                    if op.is_write() {
                        push(op.key);
                    }
                }
                Gran::Txn => {
                    for o in h.txns[units.txn[u] as usize].ops() {
                        if h.ops[o].kind == KIND_WRITE_FINAL {
                            push(h.ops[o].key);
                        }
                    }
                }
            }
        }
        for list in by_key.values_mut() {
            list.sort_unstable();
        }
        SessionWrites { by_key }
    }

    /// The last unit of session `s` writing `key` at session position `< bound`.
    pub(crate) fn last_before(&self, key: u32, s: u32, bound: u32) -> Option<u32> {
        let list = self.by_key.get(&key)?;
        let i = list.partition_point(|e| (e.0, e.1) < (s, bound));
        (i > 0 && list[i - 1].0 == s).then(|| list[i - 1].2)
    }
}

/// Program-order clocks: for each unit, the other sessions in its program-order past (through
/// `after` links) and how many of their units. Own-session order is implicit.
pub(crate) struct PoClock {
    src: Vec<u32>,
    maps: BTreeMap<u32, Vec<(u32, u32)>>,
}

impl PoClock {
    pub(crate) fn build(units: &Units) -> PoClock {
        let mut src = vec![NONE; units.n];
        let mut maps: BTreeMap<u32, Vec<(u32, u32)>> = BTreeMap::new();
        if !units.has_after {
            return PoClock { src, maps };
        }
        for u in 0..units.n {
            let prev = units.prev[u];
            let inherited = if prev == NONE { NONE } else { src[prev as usize] };
            match units.after_preds.get(&(u as u32)) {
                None => src[u] = inherited,
                Some(targets) => {
                    let mut m: BTreeMap<u32, u32> = BTreeMap::new();
                    let mut merge = |s: u32, b: u32| {
                        let e = m.entry(s).or_insert(0);
                        *e = (*e).max(b);
                    };
                    if inherited != NONE {
                        for (s, b) in &maps[&inherited] {
                            merge(*s, *b);
                        }
                    }
                    for &a in targets {
                        let a = a as usize;
                        merge(units.session[a], units.spos[a] + 1);
                        if src[a] != NONE {
                            for (s, b) in &maps[&src[a]] {
                                merge(*s, *b);
                            }
                        }
                    }
                    m.remove(&units.session[u]);
                    maps.insert(u as u32, m.into_iter().collect());
                    src[u] = u as u32;
                }
            }
        }
        PoClock { src, maps }
    }

    /// Sessions (other than its own) in the program-order past of `u`, with bounds.
    pub(crate) fn others(&self, u: usize) -> &[(u32, u32)] {
        match self.src.get(u) {
            Some(s) if *s != NONE => &self.maps[s],
            _ => &[],
        }
    }
}

struct TxnCheck<'a, 'b> {
    cx: &'a Ctx<'b>,
    level: Level,
    po: PoClock,
    session_writes: Option<SessionWrites>,
}

impl TxnCheck<'_, '_> {
    /// The final write op of `key` in transaction `t`, if any.
    fn writes_key(&self, t: u32, key: u32) -> Option<u32> {
        let h = self.cx.h;
        h.txns[t as usize].ops().rev().find(|o| h.ops[*o].kind == KIND_WRITE_FINAL && h.ops[*o].key == key).map(|o| o as u32)
    }

    /// Reads of unit `u` checked at this level.
    fn checked(&self, class: ReadClass) -> bool {
        judged(self.level, class)
    }

    /// Visible writes of `o`'s key at RC and RA visibility (not the full causal past):
    /// (visibility, unit, hop from it to the reader).
    fn near_visible(&self, o: u32) -> Vec<(Vis, u32, Hop)> {
        let cx = self.cx;
        let h = cx.h;
        let units = cx.units;
        let t3 = h.op_txn[o as usize];
        let u3 = units.unit_of_txn[t3 as usize];
        let key = h.ops[o as usize].key;
        let mut out = Vec::new();
        for b in h.txns[t3 as usize].ops() {
            if b as u32 == o || !cx.wf.class[b].observes() || h.rf[b] == RF_INIT {
                continue;
            }
            let w = h.rf[b];
            let tb = h.op_txn[w as usize];
            let ub = units.unit_of_txn[tb as usize];
            if ub == NONE || self.writes_key(tb, key).is_none() {
                continue;
            }
            let vis = if (b as u32) < o { Vis::Rc } else { Vis::Ra };
            out.push((vis, ub, Hop::ReadsFrom { from: tb, to: t3, write: w, read: b as u32 }));
        }
        // Earlier transactions in program order.
        let sw = self.session_writes.as_ref().expect("built before use");
        let mut sessions = vec![(units.session[u3 as usize], units.spos[u3 as usize])];
        sessions.extend(self.po.others(u3 as usize).iter().copied());
        for (s, bound) in sessions {
            if let Some(v) = sw.last_before(key, s, bound) {
                let hop = Hop::Program {
                    from: units.txn[v as usize],
                    to: t3,
                    from_op: None,
                    to_op: None,
                    after: s != units.session[u3 as usize],
                };
                out.push((Vis::Ra, v, hop));
            }
        }
        out
    }

    /// Name a stale read by the weakest visibility under which a causally newer write is seen.
    fn classify_stale(&self, o: u32, uw: u32, tv: u32) -> (Vis, u32, Option<Hop>) {
        let clocks = self.cx.clocks;
        let mut best: Option<(Vis, u32, Hop)> = None;
        for (vis, v, hop) in self.near_visible(o) {
            if v == uw {
                continue;
            }
            let stale = uw == NONE || clocks.before(uw as usize, v as usize);
            if stale && best.as_ref().is_none_or(|b| vis < b.0) {
                best = Some((vis, v, hop));
            }
        }
        match best {
            Some((vis, v, hop)) => (vis, v, Some(hop)),
            None => (Vis::Tcc, tv, None),
        }
    }

    /// Forced edges under RC and RA visibility (for naming cycles), with their visibility.
    fn near_forced(&self) -> Vec<(Vis, u32, u32, u32)> {
        let cx = self.cx;
        let clocks = cx.clocks;
        let mut out = Vec::new();
        for u in 0..cx.units.n {
            let t = cx.units.txn[u];
            for o in cx.h.txns[t as usize].ops() {
                if !self.checked(cx.wf.class[o]) {
                    continue;
                }
                let uw = cx.writer(o);
                if uw == NONE {
                    continue;
                }
                for (vis, v, _) in self.near_visible(o as u32) {
                    if v == uw || clocks.before(uw as usize, v as usize) || clocks.before(v as usize, uw as usize) {
                        continue;
                    }
                    out.push((vis, v, uw, o as u32));
                }
            }
        }
        out.sort_unstable();
        out.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1 && a.2 == b.2);
        out
    }
}

pub(crate) fn check_txns(cx: &Ctx<'_>, level: Level, sink: &mut Sink) {
    let units = cx.units;
    let h = cx.h;
    let t0 = std::time::Instant::now();
    let index = WriteIndex::build(h, units, cx.clocks);
    if std::env::var_os("CAUSIM_CHECK_TIMING").is_some() {
        eprintln!("  write index: {:.3} s", t0.elapsed().as_secs_f64());
    }
    let mut tc = TxnCheck { cx, level, po: PoClock { src: Vec::new(), maps: BTreeMap::new() }, session_writes: None };
    let checked = |class: ReadClass| tc.checked(class);
    let t1 = (std::time::Instant::now(), crate::cpu_seconds());
    let (stale, forced) = parallel_scan(cx, &index, &checked);
    if std::env::var_os("CAUSIM_CHECK_TIMING").is_some() {
        eprintln!("  scan: {:.3} s wall, {:.2} s cpu", t1.0.elapsed().as_secs_f64(), crate::cpu_seconds() - t1.1);
    }
    if std::env::var_os("CAUSIM_CHECK_TIMING").is_some() {
        eprintln!("  scan done: {} stale reads, {} forced edges (before dedup)", stale.len(), forced.len());
    }
    let mut forced = forced;
    forced.extend_from_slice(cx.known);
    let forced = dedup_forced(forced);
    if std::env::var_os("CAUSIM_CHECK_TIMING").is_some() {
        eprintln!("  {} forced edges after dedup", forced.len());
    }
    if stale.is_empty() && forced.is_empty() {
        return;
    }
    // Slow path: name what was found by the weakest visibility that exhibits it.
    if !stale.is_empty() {
        tc.po = PoClock::build(units);
        let keys: BTreeSet<u32> = stale.iter().map(|s| h.ops[s.0 as usize].key).collect();
        tc.session_writes = Some(SessionWrites::build(h, units, &keys));
    }
    let any_stale = !stale.is_empty();
    for (o, uw, tv) in stale {
        let (vis, v, hop) = tc.classify_stale(o, uw, tv);
        if !vis.allowed_at(level) {
            continue;
        }
        let t3 = h.op_txn[o as usize];
        let anomaly = match vis {
            Vis::Rc => Anomaly::NonMonoReadCO,
            Vis::Ra => Anomaly::FracturedReadCO,
            Vis::Tcc => Anomaly::COConflictCM,
        };
        if !sink.wants() {
            sink.count(anomaly);
            continue;
        }
        let u3 = units.unit_of_txn[t3 as usize];
        let to_reader = match hop {
            Some(hop) => vec![hop],
            None => cx.witness(v, u3),
        };
        sink.push(cx.shadow(anomaly, o, uw, v, to_reader));
    }
    // Without stale reads, every RC or RA forced edge is implied by CO and the causal-past
    // forced edges, so those alone decide whether any write-order cycle exists. A stale read's
    // forced edges were not collected (its scan stopped), so below TCC they must be recomputed.
    if level == Level::Tcc || !any_stale {
        if forced.is_empty() {
            return;
        }
        let pairs: Vec<(u32, u32)> = forced.iter().map(|f| (f.0, f.1)).collect();
        if crate::graph::topo_order(units, cx.succ, Some(&Extra { edges: &pairs })).is_ok() {
            return;
        }
    }
    let all_keys: BTreeSet<u32> =
        (0..units.n).flat_map(|u| h.txns[units.txn[u] as usize].ops()).filter(|o| h.ops[*o].is_read()).map(|o| h.ops[o].key).collect();
    if !any_stale {
        tc.po = PoClock::build(units);
    }
    tc.session_writes = Some(SessionWrites::build(h, units, &all_keys));
    let near = tc.near_forced();
    let rc: Vec<(u32, u32, u32)> =
        near.iter().filter(|e| e.0 == Vis::Rc).map(|e| (e.1, e.2, e.3)).chain(cx.known.iter().copied()).collect();
    let ra: Vec<(u32, u32, u32)> =
        near.iter().filter(|e| e.0 <= Vis::Ra).map(|e| (e.1, e.2, e.3)).chain(cx.known.iter().copied()).collect();
    let mut tiers: Vec<(Anomaly, &[Forced])> = vec![(Anomaly::NonMonoReadCM, &rc)];
    if level != Level::Rc {
        tiers.push((Anomaly::FracturedReadCM, &ra));
    }
    if level == Level::Tcc {
        tiers.push((Anomaly::ConflictCM, &forced));
    }
    report_forced_cycles(cx, &tiers, sink);
}

/// Report the cycles of CO plus the forced edges of all `tiers`, each cycle named by the first
/// tier whose edges already make a cycle inside its strongly connected component.
fn report_forced_cycles(cx: &Ctx<'_>, tiers: &[(Anomaly, &[Forced])], sink: &mut Sink) {
    let units = cx.units;
    let n = units.n;
    let adjacency = |edges: &[(u32, u32, u32)]| -> BTreeMap<u32, Vec<u32>> {
        let mut m: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for e in edges {
            m.entry(e.0).or_default().push(e.1);
        }
        m
    };
    let labels = |edges: &[(u32, u32, u32)]| -> BTreeMap<(u32, u32), (u32, u32, u32)> {
        let h = cx.h;
        edges
            .iter()
            .map(|e| {
                let key = h.ops[e.2 as usize].key;
                let first = write_op_of(cx, e.0, key);
                let second = write_op_of(cx, e.1, key);
                ((e.0, e.1), (first, second, e.2))
            })
            .collect()
    };
    let co_succs = |u: usize, out: &mut Vec<u32>| {
        if units.next[u] != NONE {
            out.push(units.next[u]);
        }
        out.extend_from_slice(&cx.succ.1[cx.succ.0[u] as usize..cx.succ.0[u + 1] as usize]);
    };
    let union: Vec<(u32, u32, u32)> = tiers.iter().flat_map(|t| t.1.iter().copied()).collect();
    let all = adjacency(&union);
    let succs_all = |u: usize, out: &mut Vec<u32>| {
        co_succs(u, out);
        if let Some(v) = all.get(&(u as u32)) {
            out.extend_from_slice(v);
        }
    };
    let pairs: Vec<(u32, u32)> = union.iter().map(|f| (f.0, f.1)).collect();
    let left = match crate::graph::topo_order(units, cx.succ, Some(&Extra { edges: &pairs })) {
        Ok(_) => return,
        Err(left) => left,
    };
    let comps = sccs(n, &left, &succs_all);
    for comp in comps {
        let mut in_comp = vec![false; n];
        for u in &comp {
            in_comp[*u as usize] = true;
        }
        for (anomaly, edges) in tiers {
            let adj = adjacency(edges);
            let succs = |u: usize, out: &mut Vec<u32>| {
                co_succs(u, out);
                if let Some(v) = adj.get(&(u as u32)) {
                    out.extend_from_slice(v);
                }
            };
            let sub = sccs(n, &in_comp, &succs);
            if sub.is_empty() {
                continue;
            }
            for part in sub {
                if !sink.wants() {
                    sink.count(*anomaly);
                    continue;
                }
                let sources = if part.len() <= 256 { part.len() } else { 16 };
                let cycle = shortest_cycle(&part, &succs, sources);
                let mut closed = cycle.clone();
                closed.push(cycle[0]);
                let hops = unit_hops(cx.h, cx.wf, units, &closed, &labels(edges));
                let key = hops.iter().find_map(|hop| match hop {
                    Hop::WriteOrder { first, .. } => Some(cx.h.ops[*first as usize].key),
                    _ => None,
                });
                let scc = txns_of(units, &part);
                sink.push(Finding { anomaly: *anomaly, key, read: None, detail: Detail::Cycle { hops, scc } });
            }
            break;
        }
    }
}

fn write_op_of(cx: &Ctx<'_>, u: u32, key: u32) -> u32 {
    cx.write_op(u, key)
}

/// The distinct transactions of some units, sorted.
pub(crate) fn txns_of(units: &Units, us: &[u32]) -> Vec<u32> {
    let mut t: Vec<u32> = us.iter().map(|u| units.txn[*u as usize]).collect();
    t.sort_unstable();
    t.dedup();
    t
}

/// CyclicCO: report the cycles among the units a topological sort left over.
pub(crate) fn report_co_cycles(h: &History, wf: &Wf, units: &Units, succ: &(Vec<u32>, Vec<u32>), left: &[bool], sink: &mut Sink) {
    let succs = |u: usize, out: &mut Vec<u32>| {
        if units.next[u] != NONE {
            out.push(units.next[u]);
        }
        out.extend_from_slice(&succ.1[succ.0[u] as usize..succ.0[u + 1] as usize]);
    };
    for comp in sccs(units.n, left, &succs) {
        if !sink.wants() {
            sink.count(Anomaly::CyclicCO);
            continue;
        }
        let sources = if comp.len() <= 256 { comp.len() } else { 16 };
        let cycle = shortest_cycle(&comp, &succs, sources);
        let mut closed = cycle.clone();
        closed.push(cycle[0]);
        let hops = unit_hops(h, wf, units, &closed, &BTreeMap::new());
        let key = hops.iter().find_map(|hop| match hop {
            Hop::ReadsFrom { read, .. } => Some(h.ops[*read as usize].key),
            _ => None,
        });
        let scc = txns_of(units, &comp);
        sink.push(Finding { anomaly: Anomaly::CyclicCO, key, read: None, detail: Detail::Cycle { hops, scc } });
    }
}
