//! `si`: snapshot isolation.
//!
//! **Definition.** A history is SI when some total commit order of its committed transactions
//! gives each one a snapshot — a prefix of that order, holding everything it read — such that of
//! two transactions writing one key, the later to commit has the earlier in its snapshot: Cerone,
//! Bernardi & Gotsman's axioms (CONCUR'15: prefix + conflict; Biswas & Enea, OOPSLA'19, §2), and
//! Adya's PL-SI. Cerone & Gotsman ("Analysing snapshot isolation", JACM'18, Thm. 10) turn it into
//! a graph property once each key's **version order** is fixed: with `D = SO ∪ WR ∪ WW` (session
//! order and `after` links, reads-from, version order) and `RW` the anti-dependencies (a read of
//! a version precedes the write that overwrote it), the history is SI iff `D ; RW?` is acyclic —
//! every cycle of the dependency graph has two *adjacent* anti-dependencies. That is why write
//! skew (a cycle of two `RW` edges) passes and serializability's checkers fail it. Reading the
//! edges in time: a `D` edge `A → B` says A committed before B began (B's snapshot holds A); an
//! `RW` edge `A → B` says A began before B committed. A cycle without two adjacent `RW` edges
//! chains into "T committed before it committed".
//!
//! The acyclicity is checked on a doubled graph (each transaction `t` as `t·0`, entered by a `D`
//! edge, and `t·1`, entered by an `RW` edge; `RW` edges leave `t·0` only), so a cycle there is
//! exactly a cycle of `D ; RW?`: linear in the edges.
//!
//! **What is decided exactly, and when.**
//! * The history declares its version order (header `"version_order": "values"`: each key's
//!   written integer values increase in commit order — a log-based store that writes the commit
//!   record's seqnum does so): one pass, polynomial, exact.
//! * Otherwise checking SI is NP-complete (Biswas & Enea, Thm. 4.4). Values are unique, so
//!   reads-from is known and only the order of each key's writers is open (list-append reads
//!   show part of it, taken as given). First what holds for every order: session order, reads-from and the anti-dependencies of reads of initial values
//!   must already be acyclic; two transactions that read one version of a key and both write it
//!   are a lost update whichever commits second; and a transaction that read a version and wrote
//!   the key wrote the next version, which fixes more edges. Then two candidate orders (file
//!   order, as histories logged in commit order have it, and chains of read-modify-writes in a
//!   topological order of what is known) are tried: if one passes, the history is SI. If not, a
//!   search as PolySI's (VLDB'23) but without a solver: each pair of writers of a key is a choice
//!   between two sets of edges; unit propagation fixes a pair when one side closes a cycle (and
//!   stops with a violation when both do) — each side tested against a topological order of what
//!   is fixed, from its backward arcs only — then the candidate again, then a depth-first search
//!   over the remaining pairs. Its work is bounded by `CheckOptions::si_work_max` (edges
//!   visited); beyond it the report is not `complete` and says so: no verdict rather than a
//!   wrong one.
//!
//! **Names.** A forbidden cycle is named by its shape, around one of its anti-dependencies `T
//! -RW(x)→ U`: **LostUpdate** when T itself writes x (it overwrote a version that was no longer
//! the latest), **ConcurrentWrite** when the cycle enters T by a version-order edge (T overwrote
//! a write its snapshot misses: Adya's G-SIa), **FracturedReadCO** when the cycle is T reading
//! part of U's writes, **ReadSkew** otherwise (Adya's G-SIb); cycles without anti-dependencies
//! are **CyclicCO** (session order and reads-from) or **CyclicDependency** (with the version
//! order: G1c). A non-repeatable read is well-formedness's NonRepeatableRead. When no order of
//! writes works but no single cycle shows it, **NoSnapshotOrder**.

use crate::anomaly::Anomaly;
use crate::explain::Namer;
use crate::finding::{Detail, Finding, Sink};
use crate::fxhash::{FxHashMap, map_with_capacity};
use crate::graph::{sccs, shortest_cycle};
use crate::history::{History, KIND_WRITE_FINAL, NONE, Outcome, RF_INIT, RF_NONE, Val};
use crate::report::{EdgeKind, WitnessEdge};
use crate::wf::{ReadClass, Wf};
use std::borrow::Cow;
use std::collections::{BTreeSet, BinaryHeap};

/// The header field that declares the version order, and its one value.
pub const VERSION_ORDER_FIELD: &str = "version_order";
pub const VERSION_ORDER_VALUES: &str = "values";

/// An edge of the dependency graph, between transactions (indices into `History::txns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Edge {
    pub from: u32,
    pub to: u32,
    pub kind: Kind,
    /// ReadsFrom: the write; Version: the earlier write; Anti: the read. Else NONE.
    pub a: u32,
    /// ReadsFrom: the read; Version and Anti: the later (overwriting) write. Else NONE.
    pub b: u32,
    pub why: Why,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Session,
    After,
    ReadsFrom,
    Version,
    Anti,
}

impl Kind {
    /// `D` edges order commits; anti-dependencies do not.
    fn is_dependency(self) -> bool {
        self != Kind::Anti
    }
}

/// Why two writes of a key are in the order an edge says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// Not a version-order fact (session order, reads-from), or a read of the initial value.
    Given,
    /// The history declares the version order (`version_order: values`).
    Declared,
    /// The opposite order closes a cycle of its own.
    Forced,
    /// The order under trial.
    Chosen,
    /// A read-modify-write: the transaction read one version and wrote the next.
    ReadModifyWrite,
    /// A list-append read lists the two appends in this order.
    ListOrder,
}

/// The witness of an SI violation.
#[derive(Clone, Debug)]
pub(crate) enum Story {
    /// A forbidden cycle, starting with a dependency edge.
    Cycle(Vec<Edge>),
    /// Two transactions read one version of a key and both overwrote it (reads, then writes).
    BothOverwrote { reads: [u32; 2], writes: [u32; 2] },
    /// Neither order of two writes of a key works: the cycle of each (`pair.0` first, then
    /// `pair.1` first).
    EitherOrder { pair: (u32, u32), first: Vec<Edge>, second: Vec<Edge> },
    /// No order of the keys' writes works (exhaustive search); the cycle of the order tried first.
    NoOrder { keys: Vec<u32>, cycle: Vec<Edge> },
}

/// What is known before any version order is chosen.
struct Facts {
    n: usize,
    /// Session order, `after` links and reads-from.
    given: Vec<Edge>,
    /// Per key, its writers' final writes (op indices), in file order.
    writers: Vec<Vec<u32>>,
    /// Judged reads of each write (op indices), and of each key's initial value.
    readers: FxHashMap<u32, Vec<u32>>,
    init_readers: Vec<Vec<u32>>,
}

/// Check `h` at `si`; false if the search budget ran out before a verdict. `lists` are the write
/// orders list-append reads show (first write, second write, the read), which the search takes
/// as given.
pub(crate) fn check(h: &History, wf: &Wf, lists: &[(u32, u32, u32)], work_max: u64, sink: &mut Sink) -> bool {
    let facts = Facts::gather(h, wf);
    let field = h.header_info().get(VERSION_ORDER_FIELD);
    let declared = field.is_some_and(|v| *v == format!("\"{VERSION_ORDER_VALUES}\""));
    if let Some(other) = field.filter(|_| !declared) {
        sink.notes.push(format!(
            "the header's \"{VERSION_ORDER_FIELD}\": {other} is not \"{VERSION_ORDER_VALUES}\", the one order si knows: the order of writes was searched for"
        ));
    }
    if declared {
        match declared_orders(h, &facts) {
            Ok(orders) => {
                let edges = facts.with_orders(h, &orders, Why::Declared);
                report_cycles(h, &facts, &edges, sink);
                return true;
            }
            Err(note) => sink.notes.push(note),
        }
    }
    search(h, &facts, lists, work_max, sink)
}

impl Facts {
    fn gather(h: &History, wf: &Wf) -> Facts {
        let n = h.txns.len();
        // A failed transaction counts when someone read its writes; an aborted one never.
        let mut included: Vec<bool> = h.txns.iter().map(|t| t.outcome == Outcome::Ok).collect();
        for (r, op) in h.ops.iter().enumerate() {
            if op.is_read() && wf.class[r].observes() && h.rf[r] != RF_INIT && h.rf[r] != RF_NONE {
                let w = h.op_txn[h.rf[r] as usize] as usize;
                if h.txns[w].outcome == Outcome::Failed {
                    included[w] = true;
                }
            }
        }
        let mut given = Vec::new();
        let mut last_of_session: Vec<u32> = vec![NONE; h.session_count()];
        let mut writers: Vec<Vec<u32>> = vec![Vec::new(); h.key_count()];
        let mut readers: FxHashMap<u32, Vec<u32>> = map_with_capacity(h.ops.len() / 4);
        let mut init_readers: Vec<Vec<u32>> = vec![Vec::new(); h.key_count()];
        let session = |from: u32, to: u32, kind: Kind| Edge { from, to, kind, a: NONE, b: NONE, why: Why::Given };
        for (t, txn) in h.txns.iter().enumerate() {
            if !included[t] {
                continue;
            }
            let t32 = t as u32;
            let last = &mut last_of_session[txn.session as usize];
            if *last != NONE {
                given.push(session(*last, t32, Kind::Session));
            }
            *last = t32;
            for p in h.after_of(t) {
                if included[p] && p != t {
                    given.push(session(p as u32, t32, Kind::After));
                }
            }
            for o in txn.ops() {
                let op = &h.ops[o];
                if op.kind == KIND_WRITE_FINAL {
                    writers[op.key as usize].push(o as u32);
                    continue;
                }
                if !op.is_read() || txn.outcome != Outcome::Ok {
                    continue;
                }
                let w = h.rf[o];
                if wf.class[o].observes() && w != RF_INIT && w != RF_NONE && h.op_txn[w as usize] != t32 {
                    given.push(Edge { from: h.op_txn[w as usize], to: t32, kind: Kind::ReadsFrom, a: w, b: o as u32, why: Why::Given });
                }
                if wf.class[o] == ReadClass::External {
                    if w == RF_INIT {
                        init_readers[op.key as usize].push(o as u32);
                    } else {
                        readers.entry(w).or_default().push(o as u32);
                    }
                }
            }
        }
        Facts { n, given, writers, readers, init_readers }
    }

    fn readers_of(&self, w: u32) -> &[u32] {
        self.readers.get(&w).map_or(&[], Vec::as_slice)
    }

    /// The edges of `given` plus, for one order of each key's writers, its version-order edges
    /// and the anti-dependencies of the reads of each version (to the next version).
    fn with_orders(&self, h: &History, orders: &[Vec<u32>], why: Why) -> Vec<Edge> {
        let mut edges = self.given.clone();
        for (k, order) in orders.iter().enumerate() {
            let txn = |o: u32| h.op_txn[o as usize];
            if let Some(&first) = order.first() {
                for &r in &self.init_readers[k] {
                    if txn(r) != txn(first) {
                        edges.push(Edge { from: txn(r), to: txn(first), kind: Kind::Anti, a: r, b: first, why: Why::Given });
                    }
                }
            }
            for pair in order.windows(2) {
                let (v, next) = (pair[0], pair[1]);
                edges.push(Edge { from: txn(v), to: txn(next), kind: Kind::Version, a: v, b: next, why });
                for &r in self.readers_of(v) {
                    if txn(r) != txn(next) {
                        edges.push(Edge { from: txn(r), to: txn(next), kind: Kind::Anti, a: r, b: next, why });
                    }
                }
            }
        }
        edges
    }

    /// The edges choosing "write `a` before write `b`" adds (same key): the version order and
    /// the anti-dependencies of `a`'s readers.
    fn pair_edges(&self, h: &History, a: u32, b: u32, why: Why, out: &mut Vec<Edge>) {
        let txn = |o: u32| h.op_txn[o as usize];
        out.push(Edge { from: txn(a), to: txn(b), kind: Kind::Version, a, b, why });
        for &r in self.readers_of(a) {
            if txn(r) != txn(b) {
                out.push(Edge { from: txn(r), to: txn(b), kind: Kind::Anti, a: r, b, why });
            }
        }
    }
}

/// Each key's writers ordered by their integer values, or why that is impossible.
fn declared_orders(h: &History, facts: &Facts) -> Result<Vec<Vec<u32>>, String> {
    let mut orders = facts.writers.clone();
    for order in &mut orders {
        for &o in order.iter() {
            if !matches!(h.ops[o as usize].val(), Val::Int(_)) {
                return Err(format!(
                    "the header declares \"{VERSION_ORDER_FIELD}\": \"{VERSION_ORDER_VALUES}\", but key {} has a written value that is not an integer ({}): the order of writes was searched for instead",
                    h.key(h.ops[o as usize].key),
                    h.op_value(o as usize)
                ));
            }
        }
        order.sort_by_key(|&o| match h.ops[o as usize].val() {
            Val::Int(i) => i,
            _ => unreachable!("checked above"),
        });
    }
    Ok(orders)
}

// ---------------------------------------------------------------------------------------------
// The doubled graph

/// Edges grouped by source transaction, for the doubled graph (`2t`: entered by a dependency,
/// `2t + 1`: entered by an anti-dependency, which only dependencies leave).
struct Graph<'e> {
    edges: Cow<'e, [Edge]>,
    start: Vec<u32>,
    order: Vec<u32>,
}

impl<'e> Graph<'e> {
    fn new(n: usize, edges: impl Into<Cow<'e, [Edge]>>) -> Graph<'e> {
        let edges = edges.into();
        let mut start = vec![0u32; n + 1];
        for e in edges.iter() {
            start[e.from as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut order = vec![0u32; edges.len()];
        for (i, e) in edges.iter().enumerate() {
            order[fill[e.from as usize] as usize] = i as u32;
            fill[e.from as usize] += 1;
        }
        Graph { edges, start, order }
    }

    fn out(&self, t: usize) -> impl Iterator<Item = &Edge> + '_ {
        self.order[self.start[t] as usize..self.start[t + 1] as usize].iter().map(|&i| &self.edges[i as usize])
    }

    /// Successors of a node of the doubled graph.
    fn succs(&self, node: usize, out: &mut Vec<u32>) {
        let (t, entered_by_anti) = (node / 2, node & 1 == 1);
        for e in self.out(t) {
            if e.kind.is_dependency() {
                out.push(e.to * 2);
            } else if !entered_by_anti {
                out.push(e.to * 2 + 1);
            }
        }
    }

    /// Kahn's algorithm on the doubled graph, with an extra edge `2t → 2t+1` (harmless: `2t+1`
    /// leaves by fewer edges), smallest node first. Returns each node's position (that of `2t+1`
    /// is a commit order: a dependency path from t to u puts t first), or the edges visited if
    /// some node is on a cycle.
    fn topo(&self, n: usize) -> Result<Vec<u32>, u64> {
        let mut indeg = vec![0u32; 2 * n];
        let mut buf = Vec::new();
        let mut work = 0u64;
        for node in 0..2 * n {
            buf.clear();
            self.succs(node, &mut buf);
            for &s in &buf {
                indeg[s as usize] += 1;
            }
            if node & 1 == 0 {
                indeg[node + 1] += 1;
            }
        }
        let mut heap: BinaryHeap<std::cmp::Reverse<u32>> =
            (0..2 * n as u32).filter(|&v| indeg[v as usize] == 0).map(std::cmp::Reverse).collect();
        let mut pos = vec![NONE; 2 * n];
        let mut placed = 0usize;
        while let Some(std::cmp::Reverse(v)) = heap.pop() {
            let v = v as usize;
            pos[v] = placed as u32;
            placed += 1;
            buf.clear();
            self.succs(v, &mut buf);
            if v & 1 == 0 {
                buf.push(v as u32 + 1);
            }
            work += buf.len() as u64;
            for &s in &buf {
                indeg[s as usize] -= 1;
                if indeg[s as usize] == 0 {
                    heap.push(std::cmp::Reverse(s));
                }
            }
        }
        if placed == 2 * n { Ok(pos) } else { Err(work) }
    }

    /// Whether adding `extra` closes a cycle, given `pos`, a topological order of this graph's
    /// nodes. The node of a cycle placed last leaves it by an arc that goes back in `pos`, which
    /// must be a new one: so only the new backward arcs are searched from, and only among the
    /// nodes placed before their source.
    fn closes_cycle(&self, pos: &[u32], extra: &[Edge], work: &mut u64) -> bool {
        let mut arcs: Vec<(u32, u32)> = Vec::with_capacity(2 * extra.len());
        for e in extra {
            if e.kind.is_dependency() {
                arcs.extend([(2 * e.from, 2 * e.to), (2 * e.from + 1, 2 * e.to)]);
            } else {
                arcs.push((2 * e.from, 2 * e.to + 1));
            }
        }
        let mut extra_out: FxHashMap<u32, Vec<u32>> = map_with_capacity(arcs.len());
        for &(u, v) in &arcs {
            extra_out.entry(u).or_default().push(v);
        }
        let mut buf = Vec::new();
        for &(u, v) in &arcs {
            if pos[v as usize] > pos[u as usize] {
                continue;
            }
            let bound = pos[u as usize];
            let mut seen: BTreeSet<u32> = BTreeSet::from([v]);
            let mut queue = vec![v];
            while let Some(x) = queue.pop() {
                if x == u {
                    return true;
                }
                buf.clear();
                self.succs(x as usize, &mut buf);
                buf.extend(extra_out.get(&x).into_iter().flatten());
                *work += buf.len() as u64 + 1;
                for &y in &buf {
                    if pos[y as usize] <= bound && seen.insert(y) {
                        queue.push(y);
                    }
                }
            }
        }
        false
    }

    /// Whether the doubled graph is acyclic (Kahn's algorithm, no ordering), and the edges visited.
    fn acyclic(&self, n: usize) -> (bool, u64) {
        let mut indeg = vec![0u32; 2 * n];
        let mut buf = Vec::new();
        for node in 0..2 * n {
            buf.clear();
            self.succs(node, &mut buf);
            for &s in &buf {
                indeg[s as usize] += 1;
            }
        }
        let mut stack: Vec<u32> = (0..2 * n as u32).filter(|&v| indeg[v as usize] == 0).collect();
        let (mut placed, mut work) = (0usize, 0u64);
        while let Some(v) = stack.pop() {
            placed += 1;
            buf.clear();
            self.succs(v as usize, &mut buf);
            work += buf.len() as u64;
            for &s in &buf {
                indeg[s as usize] -= 1;
                if indeg[s as usize] == 0 {
                    stack.push(s);
                }
            }
        }
        (placed == 2 * n, work + 2 * n as u64)
    }

    /// The shortest cycle of each strongly connected component, as edges, rotated to start with
    /// a dependency edge.
    fn cycles(&self, n: usize) -> Vec<Vec<Edge>> {
        let keep = vec![true; 2 * n];
        let succs = |v: usize, out: &mut Vec<u32>| self.succs(v, out);
        let mut out = Vec::new();
        for comp in sccs(2 * n, &keep, &succs) {
            let nodes = shortest_cycle(&comp, &succs, 64);
            let mut edges: Vec<Edge> = Vec::new();
            for i in 0..nodes.len() {
                let (u, v) = (nodes[i] as usize, nodes[(i + 1) % nodes.len()] as usize);
                let want_anti = v & 1 == 1;
                let e = self
                    .out(u / 2)
                    .filter(|e| e.to as usize == v / 2 && (e.kind == Kind::Anti) == want_anti)
                    .min_by_key(|e| edge_rank(e))
                    .expect("a cycle's step is an edge");
                edges.push(*e);
            }
            if let Some(i) = edges.iter().position(|e| e.kind.is_dependency()) {
                edges.rotate_left(i);
            }
            out.push(edges);
        }
        out
    }
}

/// Among parallel edges, show the plainest: session order, reads-from, then the rest.
fn edge_rank(e: &Edge) -> (u8, u32, u32) {
    let k = match e.kind {
        Kind::Session => 0,
        Kind::After => 1,
        Kind::ReadsFrom => 2,
        Kind::Version => 3,
        Kind::Anti => 4,
    };
    (k, e.a, e.b)
}

/// Report each forbidden cycle of `edges` (one per strongly connected component).
fn report_cycles(h: &History, facts: &Facts, edges: &[Edge], sink: &mut Sink) -> bool {
    let g = Graph::new(facts.n, edges);
    if g.acyclic(facts.n).0 {
        return false;
    }
    for cycle in g.cycles(facts.n) {
        sink.push(Finding {
            anomaly: classify(h, &cycle),
            key: cycle_key(h, &cycle),
            read: None,
            detail: Detail::Si(Box::new(Story::Cycle(cycle))),
        });
    }
    true
}

/// The anomaly a forbidden cycle shows (see the module doc).
fn classify(h: &History, cycle: &[Edge]) -> Anomaly {
    let antis: Vec<usize> = (0..cycle.len()).filter(|&i| cycle[i].kind == Kind::Anti).collect();
    if antis.is_empty() {
        return if cycle.iter().any(|e| e.kind == Kind::Version) { Anomaly::CyclicDependency } else { Anomaly::CyclicCO };
    }
    if antis.iter().any(|&i| own_write(h, cycle[i].a).is_some()) {
        return Anomaly::LostUpdate;
    }
    let before = |i: usize| &cycle[(i + cycle.len() - 1) % cycle.len()];
    if antis.iter().any(|&i| before(i).kind == Kind::Version) {
        return Anomaly::ConcurrentWrite;
    }
    if cycle.len() == 2 && cycle.iter().any(|e| e.kind == Kind::ReadsFrom) {
        return Anomaly::FracturedReadCO;
    }
    Anomaly::ReadSkew
}

/// The final write, by the reader's own transaction, of the key read by `r`.
fn own_write(h: &History, r: u32) -> Option<u32> {
    let t = h.op_txn[r as usize];
    let key = h.ops[r as usize].key;
    h.txns[t as usize].ops().find(|&o| h.ops[o].kind == KIND_WRITE_FINAL && h.ops[o].key == key).map(|o| o as u32)
}

/// The key of the cycle's first anti-dependency (else of its first write order).
fn cycle_key(h: &History, cycle: &[Edge]) -> Option<u32> {
    let e = cycle.iter().find(|e| e.kind == Kind::Anti).or_else(|| cycle.iter().find(|e| e.kind == Kind::Version))?;
    Some(h.ops[e.b as usize].key)
}

// ---------------------------------------------------------------------------------------------
// Without a declared version order

/// Spends the search budget; `false` once it is gone.
struct Budget {
    left: u64,
}

impl Budget {
    fn spend(&mut self, work: u64) -> bool {
        self.left = self.left.saturating_sub(work);
        self.left > 0
    }
}

fn search(h: &History, facts: &Facts, lists: &[(u32, u32, u32)], work_max: u64, sink: &mut Sink) -> bool {
    let n = facts.n;
    // 1. What every order has: the given edges and the reads of initial values.
    let mut fixed = facts.given.clone();
    let txn = |o: u32| h.op_txn[o as usize];
    for (k, ws) in facts.writers.iter().enumerate() {
        for &r in &facts.init_readers[k] {
            for &w in ws {
                if txn(r) != txn(w) {
                    fixed.push(Edge { from: txn(r), to: txn(w), kind: Kind::Anti, a: r, b: w, why: Why::Given });
                }
            }
        }
    }
    // A list read shows the order of the appends it holds.
    let writer: BTreeSet<u32> = facts.writers.iter().flatten().copied().collect();
    for &(a, b, _) in lists.iter().filter(|(a, b, _)| writer.contains(a) && writer.contains(b) && txn(*a) != txn(*b)) {
        facts.pair_edges(h, a, b, Why::ListOrder, &mut fixed);
    }
    if report_cycles(h, facts, &fixed, sink) {
        sink.notes.push("si: session order, reads-from and the reads of initial values already close a cycle, whatever the order of writes: that order was not searched".into());
        return true;
    }
    if lost_updates(h, facts, sink) {
        sink.notes.push("si: two transactions read one version of a key and both wrote it, a lost update whatever the order of writes: that order was not searched".into());
        return true;
    }
    // Read-modify-writes fix orders: a transaction that read version v of x and wrote x wrote
    // the version right after v (the only one: no lost update), so every other reader of v
    // precedes it by an anti-dependency; one that read the initial x wrote x's first version.
    let mut next_of: FxHashMap<u32, u32> = map_with_capacity(facts.readers.len());
    for (k, ws) in facts.writers.iter().enumerate() {
        for &v in ws {
            let Some(next) = facts.readers_of(v).iter().find_map(|&r| own_write(h, r)) else { continue };
            next_of.insert(v, next);
            for &r in facts.readers_of(v).iter().filter(|&&r| txn(r) != txn(next)) {
                fixed.push(Edge { from: txn(r), to: txn(next), kind: Kind::Anti, a: r, b: next, why: Why::ReadModifyWrite });
            }
        }
        if let Some(first) = facts.init_readers[k].iter().find_map(|&r| own_write(h, r)) {
            for &w in ws.iter().filter(|&&w| w != first) {
                fixed.push(Edge { from: txn(first), to: txn(w), kind: Kind::Version, a: first, b: w, why: Why::ReadModifyWrite });
            }
        }
    }
    if report_cycles(h, facts, &fixed, sink) {
        sink.notes.push("si: what every order of writes has already closes a cycle: that order was not searched".into());
        return true;
    }
    let mut budget = Budget { left: work_max.max(1) };
    // 2. Two candidates: writers in file order (histories logged in commit order), then chains
    //    of read-modify-writes in a commit order of what is known (ties in file order).
    let pos = Graph::new(n, &fixed).topo(n).expect("the fixed edges were found acyclic");
    let by_rank: Vec<Vec<u32>> =
        facts.writers.iter().map(|ws| chains_by_rank(ws, &next_of, &|o| (pos[2 * txn(o) as usize + 1], o))).collect();
    for candidate in [&facts.writers, &by_rank] {
        let edges = facts.with_orders(h, candidate, Why::Chosen);
        let (ok, work) = Graph::new(n, &edges).acyclic(n);
        budget.spend(work);
        if ok {
            return true;
        }
    }
    // 3. The search over pairs of writers of each key.
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for ws in facts.writers.iter().filter(|ws| ws.len() > 1) {
        for i in 0..ws.len() {
            for j in i + 1..ws.len() {
                pairs.push((ws[i], ws[j]));
            }
        }
    }
    let mut open: Vec<(u32, u32)> = pairs;
    let mut trial = Vec::new();
    // Unit propagation: a pair one of whose orders closes a cycle takes the other.
    let mut g = Graph::new(n, fixed);
    let mut pos = g.topo(n).expect("the fixed edges were found acyclic");
    loop {
        let mut changed = false;
        let mut still = Vec::new();
        for &(a, b) in &open {
            let mut closes = [false; 2];
            let mut work = 0u64;
            for (side, (x, y)) in [(a, b), (b, a)].into_iter().enumerate() {
                trial.clear();
                facts.pair_edges(h, x, y, Why::Chosen, &mut trial);
                closes[side] = g.closes_cycle(&pos, &trial, &mut work);
            }
            if !budget.spend(work) {
                return out_of_budget(sink);
            }
            let force = |x: u32, y: u32, g: Graph<'_>| {
                let mut edges = g.edges.into_owned();
                facts.pair_edges(h, x, y, Why::Forced, &mut edges);
                let g = Graph::new(n, edges);
                let pos = g.topo(n).expect("the forced order closes no cycle");
                (g, pos)
            };
            match closes {
                [true, true] => {
                    let cycle_of = |x: u32, y: u32| {
                        let mut e = g.edges.to_vec();
                        facts.pair_edges(h, x, y, Why::Chosen, &mut e);
                        Graph::new(n, e).cycles(n).into_iter().next().unwrap_or_default()
                    };
                    let (first, second) = (cycle_of(a, b), cycle_of(b, a));
                    let anomaly = classify(h, &first);
                    let key = Some(h.ops[a as usize].key);
                    sink.push(Finding {
                        anomaly,
                        key,
                        read: None,
                        detail: Detail::Si(Box::new(Story::EitherOrder { pair: (a, b), first, second })),
                    });
                    return true;
                }
                [true, false] | [false, true] => {
                    let (x, y) = if closes[0] { (b, a) } else { (a, b) };
                    (g, pos) = force(x, y, g);
                    changed = true;
                    if !budget.spend(g.edges.len() as u64) {
                        return out_of_budget(sink);
                    }
                }
                [false, false] => still.push((a, b)),
            }
        }
        open = still;
        if !changed {
            break;
        }
    }
    // What propagation fixed may make the candidate of step 2 work now.
    let by_rank: Vec<Vec<u32>> =
        facts.writers.iter().map(|ws| chains_by_rank(ws, &next_of, &|o| (pos[2 * txn(o) as usize + 1], o))).collect();
    let mut edges = g.edges.into_owned();
    let fixed_len = edges.len();
    for order in &by_rank {
        for pair in order.windows(2) {
            facts.pair_edges(h, pair[0], pair[1], Why::Chosen, &mut edges);
        }
    }
    let (ok, work) = Graph::new(n, &edges).acyclic(n);
    budget.spend(work);
    if ok {
        return true;
    }
    edges.truncate(fixed_len);
    // Depth-first search over the rest.
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (pair index, choice), with edges appended
    let mut marks: Vec<usize> = Vec::new();
    let mut i = 0usize;
    let mut choice = 0usize;
    loop {
        if i == open.len() {
            return true;
        }
        if choice < 2 {
            let (a, b) = open[i];
            let (x, y) = if choice == 0 { (a, b) } else { (b, a) };
            marks.push(edges.len());
            facts.pair_edges(h, x, y, Why::Chosen, &mut edges);
            let (ok, work) = Graph::new(n, &edges).acyclic(n);
            if !budget.spend(work) {
                return out_of_budget(sink);
            }
            if ok {
                stack.push((i, choice));
                i += 1;
                choice = 0;
            } else {
                edges.truncate(marks.pop().expect("just pushed"));
                choice += 1;
            }
            continue;
        }
        // Both choices of pair i failed: backtrack.
        let Some((j, c)) = stack.pop() else {
            let mut keys: BTreeSet<u32> = BTreeSet::new();
            for &(a, _) in &open {
                keys.insert(h.ops[a as usize].key);
            }
            let cycle = Graph::new(n, facts.with_orders(h, &facts.writers, Why::Chosen)).cycles(n).into_iter().next().unwrap_or_default();
            sink.push(Finding {
                anomaly: Anomaly::NoSnapshotOrder,
                key: keys.first().copied(),
                read: None,
                detail: Detail::Si(Box::new(Story::NoOrder { keys: keys.into_iter().collect(), cycle })),
            });
            return true;
        };
        edges.truncate(marks.pop().expect("one mark per choice"));
        i = j;
        choice = c + 1;
    }
}

/// The writers `ws` of a key as chains of read-modify-writes (each followed by the write that
/// overwrote it after reading it), the chains in the order of their heads' `rank`.
fn chains_by_rank(ws: &[u32], next_of: &FxHashMap<u32, u32>, rank: &dyn Fn(u32) -> (u32, u32)) -> Vec<u32> {
    let mut heads: Vec<u32> = ws.to_vec();
    let followers: BTreeSet<u32> = ws.iter().filter_map(|w| next_of.get(w).copied()).collect();
    heads.retain(|w| !followers.contains(w));
    heads.sort_by_key(|&w| rank(w));
    let mut out = Vec::with_capacity(ws.len());
    for head in heads {
        let mut w = head;
        out.push(w);
        while let Some(&next) = next_of.get(&w) {
            if out.len() >= ws.len() {
                break;
            }
            out.push(next);
            w = next;
        }
    }
    // Writers on a cycle of read-modify-writes (a history the cycle check rejects) go last.
    let placed: BTreeSet<u32> = out.iter().copied().collect();
    out.extend(ws.iter().filter(|w| !placed.contains(w)));
    out
}

fn out_of_budget(sink: &mut Sink) -> bool {
    sink.notes.push(
        "si: the search for an order of writes ran out of its budget (si_work_max): no verdict (give the history's version order with the header field \"version_order\": \"values\", or raise the budget)"
            .into(),
    );
    false
}

/// Pairs of transactions that read one version of a key and both wrote it; true if any.
fn lost_updates(h: &History, facts: &Facts, sink: &mut Sink) -> bool {
    let mut found = false;
    let mut versions: Vec<&[u32]> = facts.init_readers.iter().map(Vec::as_slice).collect();
    for ws in &facts.writers {
        for &w in ws {
            versions.push(facts.readers_of(w));
        }
    }
    for reads in versions {
        let mut rmw: Vec<(u32, u32)> = reads.iter().filter_map(|&r| own_write(h, r).map(|w| (r, w))).collect();
        // A transaction that read the version twice is one overwriter.
        rmw.dedup_by_key(|(_, w)| h.op_txn[*w as usize]);
        for pair in rmw.windows(2) {
            let ((r1, w1), (r2, w2)) = (pair[0], pair[1]);
            found = true;
            let key = Some(h.ops[r1 as usize].key);
            let story = Story::BothOverwrote { reads: [r1, r2], writes: [w1, w2] };
            sink.push(Finding { anomaly: Anomaly::LostUpdate, key, read: Some(r2), detail: Detail::Si(Box::new(story)) });
        }
    }
    found
}

// ---------------------------------------------------------------------------------------------
// Explanations

/// Sentence, steps, contradiction and witness of a violation.
pub(crate) struct Told {
    pub sentence: String,
    pub steps: Vec<String>,
    pub contradiction: String,
    pub witness: Vec<WitnessEdge>,
}

pub(crate) fn explain(nm: &mut Namer<'_>, anomaly: Anomaly, story: &Story) -> Told {
    let h = nm.h;
    match story {
        Story::Cycle(cycle) => {
            name_cycle(nm, cycle);
            let (mut steps, witness) = cycle_steps(nm, cycle);
            let last = steps.pop().unwrap_or_default();
            Told { sentence: cycle_sentence(nm, anomaly, cycle), steps, contradiction: closing(nm, cycle, &last), witness }
        }
        Story::BothOverwrote { reads, writes } => {
            for (r, w) in reads.iter().zip(writes) {
                nm.op(*r);
                nm.op(*w);
            }
            let (t1, t2) = (h.op_txn[reads[0] as usize], h.op_txn[reads[1] as usize]);
            let (l1, l2) = (nm.label(t1), nm.label(t2));
            let read = |r: u32| version_text(nm, r);
            let key = h.key(h.ops[reads[0] as usize].key);
            let id = |t: u32| h.txns[t as usize].id;
            let steps = vec![
                format!("{l1} read {}, then wrote {}.", read(reads[0]), nm.assign(writes[0])),
                format!("{l2} read {}, then wrote {}.", read(reads[1]), nm.assign(writes[1])),
                format!(
                    "Whichever of {l1} and {l2} committed second overwrote {key} without the other's write in its snapshot, though that write committed in its window."
                ),
            ];
            let witness = vec![anti_edge(nm, reads[0], writes[1]), anti_edge(nm, reads[1], writes[0])];
            Told {
                sentence: format!(
                    "transactions {} and {} both read {} and both wrote {key}: whichever committed second overwrote a version that was no longer the latest, so the other's update is lost.",
                    id(t1),
                    id(t2),
                    read(reads[0])
                ),
                steps,
                contradiction: format!(
                    "However, under snapshot isolation of two transactions writing {key} the later to commit has the earlier in its snapshot, so it cannot have read {}: a contradiction!",
                    read(reads[0])
                ),
                witness,
            }
        }
        Story::EitherOrder { pair: (a, b), first, second } => {
            nm.op(*a);
            nm.op(*b);
            name_cycle(nm, first);
            name_cycle(nm, second);
            let (mut steps, mut witness) = (Vec::new(), Vec::new());
            for (x, y, cycle) in [(*a, *b, first), (*b, *a, second)] {
                let (tx, ty) = (h.op_txn[x as usize], h.op_txn[y as usize]);
                steps.push(format!("Suppose {}'s {} comes before {}'s {}:", nm.label(tx), nm.assign(x), nm.label(ty), nm.assign(y)));
                let (s, w) = cycle_steps(nm, cycle);
                steps.extend(s);
                witness.extend(w);
            }
            let key = h.key(h.ops[*a as usize].key);
            let id = |o: u32| h.txns[h.op_txn[o as usize] as usize].id;
            Told {
                sentence: format!(
                    "the writes {} (transaction {}) and {} (transaction {}) cannot be ordered: either order closes a cycle that snapshot isolation forbids (in the first, {})",
                    nm.assign(*a),
                    id(*a),
                    nm.assign(*b),
                    id(*b),
                    cycle_sentence(nm, anomaly, first)
                ),
                steps,
                contradiction: format!(
                    "However, the writes of {key} are in some order, and either way the chain makes a transaction commit before it committed: a contradiction!"
                ),
                witness,
            }
        }
        Story::NoOrder { keys, cycle } => {
            name_cycle(nm, cycle);
            let (steps, witness) = cycle_steps(nm, cycle);
            let keys: Vec<String> = keys.iter().map(|k| h.key(*k).to_string()).collect();
            Told {
                sentence: format!(
                    "no order of the writes of {} gives every transaction a snapshot: every order was tried, and each closes a cycle; the order tried first closes the one below.",
                    keys.join(", ")
                ),
                steps,
                contradiction: "However, every order of those writes closes some such cycle: a contradiction!".into(),
                witness,
            }
        }
    }
}

/// `x=1`, or `the initial x`.
fn version_text(nm: &Namer<'_>, r: u32) -> String {
    let h = nm.h;
    if h.rf[r as usize] == RF_INIT && !h.initial.contains_key(&h.ops[r as usize].key) {
        format!("the initial {}", h.key(h.ops[r as usize].key))
    } else {
        nm.assign(r)
    }
}

fn name_cycle(nm: &mut Namer<'_>, cycle: &[Edge]) {
    for e in cycle {
        nm.txn(e.from);
        if e.a != NONE {
            nm.op(e.a);
        }
        if e.b != NONE {
            nm.op(e.b);
        }
        nm.txn(e.to);
    }
}

fn cycle_steps(nm: &Namer<'_>, cycle: &[Edge]) -> (Vec<String>, Vec<WitnessEdge>) {
    cycle.iter().map(|e| step(nm, e)).unzip()
}

fn closing(nm: &Namer<'_>, cycle: &[Edge], last: &str) -> String {
    let l0 = cycle.first().map(|e| nm.label(e.from)).unwrap_or_default();
    format!(
        "However, {}: following the chain (a transaction begins before it commits), {l0} committed before it committed — a contradiction!",
        last.trim_end_matches('.')
    )
}

fn anti_edge(nm: &Namer<'_>, r: u32, w: u32) -> WitnessEdge {
    let h = nm.h;
    let (tr, tw) = (h.op_txn[r as usize], h.op_txn[w as usize]);
    let e = Edge { from: tr, to: tw, kind: Kind::Anti, a: r, b: w, why: Why::Given };
    step(nm, &e).1
}

/// "T1 committed before T2 began, because …" and the witness edge for one edge.
fn step(nm: &Namer<'_>, e: &Edge) -> (String, WitnessEdge) {
    let h = nm.h;
    let (la, lb) = (nm.label(e.from), nm.label(e.to));
    let why = |kind_text: &str| match e.why {
        Why::Given => String::new(),
        Why::Declared => format!(" ({kind_text} the history declares: versions in the order of their values)"),
        Why::Forced => format!(" ({kind_text} forced: the opposite order closes a cycle of its own)"),
        Why::Chosen => format!(" ({kind_text} under trial)"),
        Why::ListOrder => format!(" ({kind_text} a list read shows)"),
        Why::ReadModifyWrite => {
            format!(" ({kind_text} a read-modify-write fixes: a transaction that read a version and wrote the key wrote the next one)")
        }
    };
    let (kind, because, time) = match e.kind {
        Kind::Session => (EdgeKind::SessionOrder, format!("session {} ran {la} before {lb}", nm.session(e.from)), "committed before"),
        Kind::After => {
            (EdgeKind::SessionOrder, format!("{lb} follows {la} in program order (an `after` link of its workflow)"), "committed before")
        }
        Kind::ReadsFrom => (EdgeKind::ReadsFrom, format!("{lb} read {}, which {la} wrote", nm.assign(e.b)), "committed before"),
        Kind::Version => (
            EdgeKind::WriteOrder,
            format!(
                "{lb}'s {} overwrote {la}'s {}{}, and a transaction overwrites only a version its snapshot holds",
                nm.assign(e.b),
                nm.assign(e.a),
                why("the order")
            ),
            "committed before",
        ),
        Kind::Anti => (
            EdgeKind::AntiDependency,
            format!("{la} read {}, which {lb}'s {} overwrote{}", version_text(nm, e.a), nm.assign(e.b), why("an order")),
            "began before",
        ),
    };
    let key = (e.a != NONE).then(|| h.key(h.ops[e.a as usize].key).clone());
    let text = if e.kind == Kind::Anti {
        format!("{la} {time} {lb} committed, because {because}.")
    } else {
        format!("{la} {time} {lb} began, because {because}.")
    };
    let edge = WitnessEdge {
        from: h.txns[e.from as usize].id,
        to: h.txns[e.to as usize].id,
        kind,
        key,
        from_op: (e.a != NONE).then(|| nm.op_ref(e.a)),
        to_op: (e.b != NONE).then(|| nm.op_ref(e.b)),
        via: None,
        because,
    };
    (text, edge)
}

fn cycle_sentence(nm: &Namer<'_>, anomaly: Anomaly, cycle: &[Edge]) -> String {
    let h = nm.h;
    let id = |t: u32| h.txns[t as usize].id;
    let session = |t: u32| nm.session(t).to_string();
    let anti = |pred: &dyn Fn(&Edge, usize) -> bool| {
        (0..cycle.len()).find(|&i| cycle[i].kind == Kind::Anti && pred(&cycle[i], i)).map(|i| (i, cycle[i]))
    };
    let mut ids: Vec<u64> = cycle.iter().map(|e| id(e.from)).collect();
    ids.dedup();
    let list = ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    match anomaly {
        Anomaly::LostUpdate => {
            let Some((_, e)) = anti(&|e, _| own_write(h, e.a).is_some()) else { return format!("transactions {list} lose an update.") };
            let own = own_write(h, e.a).expect("found above");
            format!(
                "transaction {} (session {}) read {} and wrote {}, but transaction {}'s {} came in between: that update is lost.",
                id(e.from),
                session(e.from),
                version_text(nm, e.a),
                nm.assign(own),
                id(e.to),
                nm.assign(e.b)
            )
        }
        Anomaly::ConcurrentWrite => {
            let n = cycle.len();
            let Some((i, e)) = anti(&|_, i| cycle[(i + n - 1) % n].kind == Kind::Version) else {
                return format!("transactions {list} overwrite each other concurrently.");
            };
            let ww = cycle[(i + n - 1) % n];
            format!(
                "transaction {} (session {}) overwrote transaction {}'s {} with {} although its snapshot did not hold transaction {} (it read {}, which transaction {}'s {} overwrote): two concurrent writers of {} both committed.",
                id(e.from),
                session(e.from),
                id(ww.from),
                nm.assign(ww.a),
                nm.assign(ww.b),
                id(ww.from),
                version_text(nm, e.a),
                id(e.to),
                nm.assign(e.b),
                h.key(h.ops[ww.a as usize].key)
            )
        }
        Anomaly::FracturedReadCO => {
            let Some((_, e)) = anti(&|_, _| true) else { return format!("transactions {list} read fractured snapshots.") };
            let wr = cycle.iter().find(|x| x.kind == Kind::ReadsFrom).copied().unwrap_or(e);
            format!(
                "transaction {} (session {}) read {} from transaction {} but {}, although that transaction also wrote {}.",
                id(e.from),
                session(e.from),
                nm.assign(wr.b),
                id(e.to),
                version_text(nm, e.a),
                nm.assign(e.b)
            )
        }
        Anomaly::ReadSkew => {
            let Some((_, e)) = anti(&|_, _| true) else { return format!("transactions {list} read skewed snapshots.") };
            let via: Vec<String> = ids.iter().filter(|&&i| i != id(e.from) && i != id(e.to)).map(u64::to_string).collect();
            let via = match via.len() {
                0 => String::new(),
                1 => format!(" through transaction {}", via[0]),
                _ => format!(" through transactions {}", via.join(", ")),
            };
            format!(
                "transaction {} (session {}) read {}, which transaction {}'s {} overwrote, yet its snapshot holds transaction {}{via}: its reads come from no single snapshot.",
                id(e.from),
                session(e.from),
                version_text(nm, e.a),
                id(e.to),
                nm.assign(e.b),
                id(e.to)
            )
        }
        Anomaly::CyclicCO => format!(
            "transactions {list} form a cycle of session order and reads-from: each one observes the next, so some value was read before it was written."
        ),
        _ => format!("transactions {list} form a cycle of the order of writes, reads-from and session order: each depends on the next."),
    }
}
