//! BokiStore (§5.2, §5.4, Figs. 8–10; digest §3.2): durable objects Tango-style, whose state
//! is the replay of a LogBook, with snapshot-isolated transactions decided by the log.
//!
//! Every update is a log record tagged with the objects it writes; reading an object replays
//! its records. A workflow is one transaction (the shared transactional client, `txn_client`,
//! keeps its cursor, write set and local reads):
//!
//! 1. **Start.** The first function appends a `txn_start` record; the transaction's snapshot
//!    is the log before it. A workflow with several sources gets an empty first function
//!    from the engine (`Protocol::single_source`), so it starts once (each source used to
//!    append its own `txn_start` and read its own snapshot: a fuzzer finding,
//!    `scenarios/boki/store-several-sources.json`). A workflow of one function that writes
//!    nothing is a **read-only transaction**: no records, its snapshot the log up to the tail
//!    it finds with `logCheckTail` ([C]: the tail + 1).
//! 2. **Reads** of an object return the last *committed* write of it in the snapshot: back
//!    through the object's records (`logReadPrev(tag)`) until one whose commit is decided
//!    committed. Writes are buffered.
//! 3. **Commit.** The sink appends a speculative `txn_commit` record carrying the write set
//!    and tagged with every object written. It commits iff no commit record *that itself
//!    committed* wrote one of its objects inside its **window** `(txn_start, txn_commit)`
//!    (Fig. 9: TxnB aborts for TxnA's write; TxnC commits although TxnB's record lies in its
//!    window, because TxnB aborted). Deciding is recursive, and every function that replays
//!    reaches the same decision, because it depends only on the log before the record.
//! 4. **Auxiliary data** (§5.4) caches each decision beside its commit record
//!    (`logSetAuxData`), so a later replay stops at the first decided record instead of
//!    deciding the whole chain again.
//!
//! Only write-write conflicts are checked: this is snapshot isolation, which allows write
//! skew (digest §3.2); its histories are checked at `si`.
//!
//! # Choices where the paper is silent
//!
//! - A workload's write of object `x` is `Inc(x)` (the counter test's operation, §7.5): the
//!   transaction reads `x` from its snapshot first (recorded, unless it already read or wrote
//!   `x`), then writes it. An object's value in the history is not a counter but the identity
//!   of the write: `2^61 + 256·(2^32·term + position) + rank`, from the commit record's seqnum and the write's rank
//!   among the transaction's writes of the object. Values then increase in commit order, and
//!   the history declares `"version_order": "values"` (the commit seqnum is the version order).
//! - Every transactional record lives in one LogBook (`BOOK`); object `x` has tag `x + 1`.
//! - An aborted transaction is not retried (the counter test counts created and committed
//!   transactions). A `txn_start` a seal discarded is appended again; a discarded commit
//!   aborts the transaction (its writes are left out of its history line).
//! - A function remembers the decisions it made (as any replayer would within one call)
//!   besides caching them as auxiliary data. No non-transactional writes, no GC.
//! - `params.aux_data` false is Table 7's ablation: no decision is cached or read as
//!   auxiliary data, so every function decides the commit records it meets from the log, and a
//!   replay grows with the log (the `bokistore-replay` figure).

use super::Timer;
use super::client::BokiContext;
use super::logbook::{LogBook, Reply};
use super::msg::{Answer, Dir, Msg};
use super::record::{Aux, Body};
use super::{Boki, BokiNode};
use crate::catalogue::{Entry as CatalogueEntry, Mutant, Profile, SeriesStyle};
use crate::txn_client::{TxnClient, TxnContext};
use crate::{Model, metrics};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, OpKind, OpRecord, Value};
use causim_sim::node::Outbox;
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// The LogBook of every transactional record.
const BOOK: Key = u64::MAX;
/// Values of committed writes start here (workload values stay below it).
const COMMITTED: Value = 1 << 61;

fn tag(object: Key) -> u64 {
    object + 1
}

/// The value of the `rank`-th write of an object by the transaction committed at `seqnum`:
/// its term and position packed below `COMMITTED` (order kept: the term first).
fn value_of(seqnum: u64, rank: u8) -> Value {
    let (term, position) = (super::term_of(seqnum), super::position(seqnum));
    assert!(term < 1 << 21, "term too large for a value");
    COMMITTED | (term << 32 | position) << 8 | u64::from(rank)
}

/// What a workflow carries: its position, its transaction, and the snapshot it reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StoreContext {
    pub log: BokiContext,
    pub txn: TxnContext,
    /// The transaction's `txn_start` seqnum (none for a read-only transaction).
    pub start: Option<u64>,
    /// Records below this seqnum form the snapshot.
    pub snapshot: Option<u64>,
}

/// A replay goal, on a stack: each may need another decided first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Frame {
    /// The last committed write of `key` below seqnum `below`; `waiting` is the commit record
    /// (and the write's rank) being decided.
    Value { key: Key, below: u64, waiting: Option<(u64, u8)> },
    /// Whether the commit at `commit` (started at `start`) committed: scanning object
    /// `writes[obj]` back from `below`; `waiting` is the window's commit record being decided.
    Decide { commit: u64, start: u64, writes: Vec<Key>, obj: usize, below: u64, waiting: Option<u64> },
}

impl Frame {
    /// A frame deciding the commit record at `commit`, from its first object down.
    fn deciding(commit: u64, start: u64, writes: &[(Key, u8)]) -> Frame {
        Frame::Decide { commit, start, writes: writes.iter().map(|w| w.0).collect(), obj: 0, below: commit, waiting: None }
    }
}

/// What a finished frame found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    Value(Option<(u64, u8)>),
    Decided(bool),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// The `txn_start` append or the read-only transaction's `logCheckTail` is on its way.
    Starting,
    /// Replaying the values of `fetch` for `batch`.
    Reading {
        batch: Vec<Key>,
        fetch: Vec<Key>,
        values: BTreeMap<Key, Option<(u64, u8)>>,
    },
    /// The commit record's append is on its way.
    Appending,
    /// Deciding the commit record at `commit`.
    Deciding {
        commit: u64,
    },
    Done,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StoreClient {
    log: LogBook,
    txn: TxnClient,
    ctx: StoreContext,
    read_only: bool,
    /// Records' data: this function's unique prefix (as queue pops'); + 0 start, + 1 commit.
    data: Value,
    no_conflict_check: bool,
    aux_claims_commit: bool,
    /// §5.4's replay optimisation: decisions cached and read as auxiliary data (false: Table
    /// 7's ablation, every function replays from the log alone).
    aux_data: bool,
    /// Log reads this function made to replay.
    replay_reads: u64,
    /// Decisions this function made.
    decided: BTreeMap<u64, bool>,
    frames: Vec<Frame>,
    phase: Phase,
}

/// Each write of an object not touched before in the function becomes a read, then the
/// write (`Inc`).
fn increments(ops: Vec<Op>) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::with_capacity(ops.len() * 2);
    for op in ops {
        if let Op::Write { key, .. } = op
            && !out.iter().any(|o| matches!(*o, Op::Read { key: k } | Op::Write { key: k, .. } if k == key))
        {
            out.push(Op::Read { key });
        }
        out.push(op);
    }
    out
}

impl StoreClient {
    fn new(start: FunctionStart<'_, StoreContext>, store: &BokiStore) -> StoreClient {
        assert!(start.workflow_id < 1 << 38 && start.attempt < 1 << 8 && start.function < 1 << 8, "record data fields out of range");
        let data = 1 << 62 | start.workflow_id << 24 | u64::from(start.attempt) << 16 | u64::from(start.function) << 8;
        let read_only = start.is_source && start.is_sink && !start.ops.iter().any(|o| matches!(o, Op::Write { .. }));
        let mut ctx = start.context;
        if ctx.txn.started_ns.is_none() {
            ctx.txn.started_ns = Some(start.now);
        }
        let node = start.colocated[0];
        StoreClient {
            log: LogBook { engine: node, ctx: ctx.log },
            txn: TxnClient::new(node, start.function, start.is_sink, increments(start.ops)),
            ctx,
            read_only,
            data,
            no_conflict_check: store.no_conflict_check,
            aux_claims_commit: store.aux_claims_commit,
            aux_data: store.aux_data,
            replay_reads: 0,
            decided: BTreeMap::new(),
            frames: Vec::new(),
            phase: Phase::Starting,
        }
    }

    fn into_context(self) -> StoreContext {
        StoreContext { log: self.log.ctx, ..self.ctx }
    }

    pub(super) fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if self.ctx.snapshot.is_some() {
            return self.run(now, out);
        }
        self.phase = Phase::Starting;
        if self.read_only {
            self.log.read(BOOK, 0, Dir::Prev, u64::MAX, out);
        } else {
            self.log.append(BOOK, vec![], self.data, Body::TxnStart, out);
        }
    }

    pub(super) fn on_message(&mut self, now: Time, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        let reply = self.log.on_reply(msg);
        match (&self.phase, reply) {
            (Phase::Starting, Reply::Appended { seqnum, .. }) => {
                (self.ctx.start, self.ctx.snapshot) = (Some(seqnum), Some(seqnum));
                self.run(now, out);
            }
            (Phase::Starting, Reply::Read(a)) => {
                self.ctx.snapshot = Some(a.seqnum.map_or(0, |s| s + 1));
                self.run(now, out);
            }
            (Phase::Starting, Reply::Discarded) => self.log.append(BOOK, vec![], self.data, Body::TxnStart, out),
            (Phase::Appending, Reply::Appended { seqnum, .. }) => {
                self.phase = Phase::Deciding { commit: seqnum };
                let start = self.ctx.start.expect("a read-write transaction has a start record");
                let writes = self.ctx.txn.write_set.keys().copied().collect();
                self.frames.push(Frame::Decide { commit: seqnum, start, writes, obj: 0, below: seqnum, waiting: None });
                self.drive(now, out);
            }
            (Phase::Appending, Reply::Discarded) => self.finish_commit(now, None, out),
            (Phase::Reading { .. } | Phase::Deciding { .. }, Reply::Read(a)) => self.on_read(now, a, out),
            (phase, reply) => unreachable!("{reply:?} in {phase:?}"),
        }
    }

    /// Runs the transaction's operations until one needs the log.
    fn run(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        while let Some(batch) = self.txn.next_batch(&mut self.ctx.txn, now) {
            let fetch = self.txn.to_fetch(&self.ctx.txn, &batch);
            if fetch.is_empty() {
                self.complete_batch(now, &batch, &BTreeMap::new());
                continue;
            }
            let below = self.ctx.snapshot.expect("a started transaction has a snapshot");
            self.frames.push(Frame::Value { key: fetch[0], below, waiting: None });
            self.phase = Phase::Reading { batch, fetch, values: BTreeMap::new() };
            self.drive(now, out);
            return;
        }
        if !self.txn.is_sink() {
            self.done(out);
        } else if self.ctx.txn.write_set.is_empty() {
            self.record(now, Ended::Committed(None), out);
        } else {
            // Each object's last write: its rank among the transaction's writes of it.
            let mut ranks: BTreeMap<Key, u8> = BTreeMap::new();
            for op in self.ctx.txn.ops.values().filter(|o| o.kind == OpKind::Write) {
                let next = ranks.get(&op.key).map_or(0, |r| r + 1);
                ranks.insert(op.key, next);
            }
            let start = self.ctx.start.expect("a read-write transaction has a start record");
            let tags = ranks.keys().map(|&k| tag(k)).collect();
            self.phase = Phase::Appending;
            self.log.append(BOOK, tags, self.data | 1, Body::Commit { start, writes: ranks.into_iter().collect() }, out);
        }
    }

    fn complete_batch(&mut self, now: Time, batch: &[Key], values: &BTreeMap<Key, Option<(u64, u8)>>) {
        for &key in batch {
            if self.txn.read_locally(&mut self.ctx.txn, now, key) {
                continue;
            }
            let found = values.get(&key).copied().expect("every fetched key was replayed");
            let version: Vec<u64> = found.map(|(s, _)| s).into_iter().collect();
            self.txn.read_served(&mut self.ctx.txn, now, key, found.map(|(s, r)| value_of(s, r)), version);
        }
    }

    /// Works on the top frame until it needs a read, or the stack is empty.
    fn drive(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        loop {
            let found = match self.frames.last_mut() {
                None => unreachable!("driving an empty replay"),
                Some(Frame::Value { below: 0, .. }) => Found::Value(None),
                Some(&mut Frame::Value { key, below, .. }) => {
                    self.replay_reads += 1;
                    self.log.read(BOOK, tag(key), Dir::Prev, below - 1, out);
                    return;
                }
                Some(Frame::Decide { commit, start, writes, obj, below, .. }) => {
                    if self.no_conflict_check {
                        Found::Decided(true)
                    } else if let Some(&b) = self.decided.get(commit) {
                        Found::Decided(b)
                    } else if *obj == writes.len() {
                        Found::Decided(true)
                    } else if *below <= *start + 1 {
                        (*obj, *below) = (*obj + 1, *commit);
                        continue;
                    } else {
                        self.replay_reads += 1;
                        self.log.read(BOOK, tag(writes[*obj]), Dir::Prev, *below - 1, out);
                        return;
                    }
                }
            };
            if !self.complete(now, found, out) {
                return;
            }
        }
    }

    /// Pops the finished top frame and hands what it found to the one below (or to the
    /// transaction); true if the new top frame must be driven.
    fn complete(&mut self, now: Time, found: Found, out: &mut Outbox<Msg, Timer>) -> bool {
        let frame = self.frames.pop().expect("a frame finished");
        if let (Frame::Decide { commit, .. }, Found::Decided(b)) = (&frame, found) {
            self.decided.insert(*commit, b);
            // The mutant caches its own commit as committed whatever replay decided.
            let own = self.phase == Phase::Deciding { commit: *commit };
            if self.aux_data {
                self.log.set_aux(*commit, Aux::Decided(b || (own && self.aux_claims_commit)), out);
            }
        }
        match (self.frames.last_mut(), found) {
            (Some(Frame::Value { below, waiting, .. }), Found::Decided(b)) => {
                let (r, rank) = waiting.take().expect("a value frame waits for the decision it asked for");
                if b {
                    return self.complete(now, Found::Value(Some((r, rank))), out);
                }
                *below = r;
                true
            }
            (Some(Frame::Decide { below, waiting, .. }), Found::Decided(b)) => {
                let r = waiting.take().expect("a decide frame waits for the decision it asked for");
                if b {
                    return self.complete(now, Found::Decided(false), out);
                }
                *below = r;
                true
            }
            (Some(frame), found) => unreachable!("{found:?} for {frame:?}"),
            (None, found) => {
                self.on_found(now, found, out);
                false
            }
        }
    }

    /// A log read for the top frame.
    fn on_read(&mut self, now: Time, a: Answer, out: &mut Outbox<Msg, Timer>) {
        let aux_data = self.aux_data;
        let known = |s: u64, a: &Answer, decided: &BTreeMap<u64, bool>| match a.aux {
            Some(Aux::Decided(b)) if aux_data => Some(b),
            _ => decided.get(&s).copied(),
        };
        let found = match (self.frames.last_mut().expect("a read for a frame"), a.seqnum) {
            (Frame::Value { .. }, None) => Some(Found::Value(None)),
            (Frame::Value { key, below, waiting }, Some(r)) => {
                let Body::Commit { start, writes } = &a.body else { unreachable!("object tags are on commit records only: {a:?}") };
                let rank = writes.iter().find(|w| w.0 == *key).expect("tagged with the object it writes").1;
                match known(r, &a, &self.decided) {
                    Some(true) => Some(Found::Value(Some((r, rank)))),
                    Some(false) => {
                        *below = r;
                        None
                    }
                    None => {
                        *waiting = Some((r, rank));
                        self.frames.push(Frame::deciding(r, *start, writes));
                        None
                    }
                }
            }
            (Frame::Decide { commit, start, obj, below, .. }, found) if found.is_none_or(|r| r <= *start) => {
                // The object has no commit record left in the window: the next object.
                (*obj, *below) = (*obj + 1, *commit);
                None
            }
            (Frame::Decide { below, waiting, .. }, Some(r)) => {
                let Body::Commit { start, writes } = &a.body else { unreachable!("object tags are on commit records only: {a:?}") };
                match known(r, &a, &self.decided) {
                    Some(true) => Some(Found::Decided(false)),
                    Some(false) => {
                        *below = r;
                        None
                    }
                    None => {
                        *waiting = Some(r);
                        self.frames.push(Frame::deciding(r, *start, writes));
                        None
                    }
                }
            }
            (Frame::Decide { .. }, None) => unreachable!("handled by the window guard"),
        };
        if let Some(found) = found
            && !self.complete(now, found, out)
        {
            return;
        }
        self.drive(now, out);
    }

    /// The replay stack emptied with `found`.
    fn on_found(&mut self, now: Time, found: Found, out: &mut Outbox<Msg, Timer>) {
        match (std::mem::replace(&mut self.phase, Phase::Done), found) {
            (Phase::Reading { batch, fetch, mut values }, Found::Value(v)) => {
                values.insert(fetch[values.len()], v);
                if values.len() < fetch.len() {
                    let below = self.ctx.snapshot.expect("a started transaction has a snapshot");
                    self.frames.push(Frame::Value { key: fetch[values.len()], below, waiting: None });
                    self.phase = Phase::Reading { batch, fetch, values };
                    self.drive(now, out);
                    return;
                }
                self.complete_batch(now, &batch, &values);
                self.run(now, out);
            }
            (Phase::Deciding { commit }, Found::Decided(b)) => self.finish_commit(now, Some((commit, b)), out),
            (phase, found) => unreachable!("{found:?} in {phase:?}"),
        }
    }

    /// The commit record was decided (`Some((seqnum, committed))`) or discarded by a seal.
    fn finish_commit(&mut self, now: Time, decision: Option<(u64, bool)>, out: &mut Outbox<Msg, Timer>) {
        out.observe(metrics::STORE_TXN_COMMITTED, u64::from(decision.is_some_and(|d| d.1)));
        if let (Some((commit, _)), Some(start)) = (decision, self.ctx.start)
            && super::term_of(commit) == super::term_of(start)
        {
            out.observe(metrics::STORE_WINDOW_RECORDS, super::position(commit) - super::position(start) - 1);
        }
        match decision {
            Some((commit, true)) => self.record(now, Ended::Committed(Some(commit)), out),
            Some((commit, false)) => {
                self.record(now, Ended::Aborted(Some(commit), "conflict: a committed write of an object it writes lies in its window"), out)
            }
            None => self.record(now, Ended::Aborted(None, "discarded: the seal of its term left its commit record out"), out),
        }
    }

    fn record(&mut self, now: Time, ended: Ended, out: &mut Outbox<Msg, Timer>) {
        let (mut record, commit) = match ended {
            Ended::Committed(commit) => (self.txn.committed(&self.ctx.txn, now, |_| commit), commit),
            Ended::Aborted(commit, reason) => (self.txn.aborted(&mut self.ctx.txn, now, reason), commit),
        };
        record.ops = renumber(std::mem::take(&mut record.ops).into_vec(), commit).into();
        out.record(record);
        self.done(out);
    }

    fn done(&mut self, out: &mut Outbox<Msg, Timer>) {
        out.observe(metrics::STORE_REPLAY_READS, self.replay_reads);
        self.phase = Phase::Done;
        out.function_done();
    }
}

/// How a transaction ended: committed (at its commit record's seqnum; `None`: read-only, it
/// appended nothing) or aborted (with its commit record's seqnum if one was ordered).
enum Ended {
    Committed(Option<u64>),
    Aborted(Option<u64>, &'static str),
}

/// The history's values for a transaction's writes (see the module doc): each write gets the
/// value of its rank among the transaction's writes of its object, and a read of its own write
/// the value of that write. Without a commit record, writes and the reads of them are left out.
fn renumber(ops: Vec<OpRecord>, commit: Option<u64>) -> Vec<OpRecord> {
    let mut ranks: BTreeMap<Key, u8> = BTreeMap::new();
    let mut own: BTreeMap<(Key, Value), Value> = BTreeMap::new();
    let mut ops: Vec<OpRecord> = ops;
    for op in ops.iter_mut().filter(|o| o.kind == OpKind::Write) {
        let rank = ranks.entry(op.key).or_insert(0);
        if let (Some(c), Some(v)) = (commit, op.value) {
            let new = value_of(c, *rank);
            own.insert((op.key, v), new);
            op.value = Some(new);
        }
        *rank += 1;
    }
    let local = |o: &OpRecord| o.kind == OpKind::Read && o.value.is_some_and(|v| v < COMMITTED);
    if commit.is_none() {
        ops.retain(|o| o.kind != OpKind::Write && !local(o));
        return ops;
    }
    for op in ops.iter_mut().filter(|o| local(o)) {
        op.value = Some(*own.get(&(op.key, op.value.expect("local"))).expect("a local read returns the transaction's own write"));
    }
    ops
}

pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "no_window_conflict_check",
        about: "a commit record is decided committed without looking at its window, so two transactions that read one \
                version of an object and both wrote it commit (lost update)",
    },
    Mutant {
        name: "aux_claims_commit",
        about: "the committing function caches its own commit record as committed in its node's auxiliary data whatever \
                replay decided, so readers on its node trust a decision replay contradicts and read an aborted write",
    },
];

/// BokiStore on Boki's shared log.
#[derive(Clone, Debug)]
pub struct BokiStore {
    log: Boki,
    no_conflict_check: bool,
    aux_claims_commit: bool,
    aux_data: bool,
}

impl Model for BokiStore {
    const ENTRY: CatalogueEntry = CatalogueEntry {
        name: "boki-store",
        about: "BokiStore: objects replayed from Boki's LogBooks, one snapshot-isolated transaction per workflow whose \
                commit the log decides (conflicts in the commit window), decisions cached as auxiliary data",
        level: Level::Si,
        mutants: MUTANTS,
        profile: Profile {
            workflow_txn: true,
            observations: &[metrics::STORE_TXN_COMMITTED, metrics::STORE_WINDOW_RECORDS, metrics::STORE_REPLAY_READS],
            ..Profile::PLAIN
        },
        faults: super::library_faults(
            "a function node's crash can leave a commit record in the log whose function never records the transaction: \
             other transactions then read its writes (the paper claims no survival of function crashes for BokiStore); \
             Boki's own crashes are fuzzed under boki",
        ),
        series: &[SeriesStyle { label: "BokiStore", colour: (213, 94, 0) }],
    };

    const VERSION_ORDER_VALUES: bool = true;

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        // BokiStore's own field (`aux_data`, default true); the rest are the log's.
        let mut log_params = if params.is_null() { serde_json::json!({}) } else { params.clone() };
        let aux_data = match log_params.as_object_mut().and_then(|o| o.remove("aux_data")) {
            None => true,
            Some(v) => v.as_bool().ok_or_else(|| FieldError::new("params.aux_data", format!("expected true or false, got {v}")))?,
        };
        Ok(BokiStore {
            log: Boki::build(&log_params, &[], topology)?,
            no_conflict_check: mutants.contains(&"no_window_conflict_check"),
            aux_claims_commit: mutants.contains(&"aux_claims_commit"),
            aux_data,
        })
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        (Boki::shared_fuzz_params(), any::<bool>())
            .prop_map(|(mut p, aux_data)| {
                p["aux_data"] = aux_data.into();
                p
            })
            .boxed()
    }
}

impl Protocol for BokiStore {
    type Node = BokiNode;
    type Context = StoreContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<BokiNode>> {
        self.log.fixed_nodes()
    }

    fn new_context(&self) -> StoreContext {
        StoreContext::default()
    }

    fn spawn_function(&self, start: FunctionStart<'_, StoreContext>) -> BokiNode {
        BokiNode::Store(Box::new(StoreClient::new(start, self)))
    }

    fn finish_function(&self, node: BokiNode) -> StoreContext {
        match node {
            BokiNode::Store(s) => s.into_context(),
            other => unreachable!("{other:?} is not a BokiStore function"),
        }
    }

    fn join_contexts(&self, contexts: Vec<StoreContext>) -> StoreContext {
        let log = BokiContext { pos: contexts.iter().map(|c| c.log.pos).max().unwrap_or_default() };
        let (start, snapshot) = (contexts.iter().find_map(|c| c.start), contexts.iter().find_map(|c| c.snapshot));
        StoreContext { log, txn: TxnContext::join(contexts.into_iter().map(|c| c.txn)), start, snapshot }
    }

    fn single_sink(&self) -> bool {
        true
    }

    /// The transaction's snapshot is fixed where it starts: once per workflow.
    fn single_source(&self) -> bool {
        true
    }
}
