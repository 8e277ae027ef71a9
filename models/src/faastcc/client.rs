//! The client library (Alg. 1) inside one function instance: it reads through its cache,
//! narrowing the workflow's snapshot interval, buffers writes, and at the sink commits the
//! workflow with two-phase commit.

use super::context::Context;
use super::interval::{ReadCase, classify, narrow};
use super::msg::{Answer, Msg, Out, Timer};
use crate::metrics;
use crate::tcc_store::{self, StoreMsg, Ts};
use causim_sim::history::{Key, OpKind, OpRecord, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::NodeId;
use causim_sim::protocol::FunctionStart;
use causim_sim::time::Time;
use causim_sim::workload::Op;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum State {
    Running,
    /// A batch of reads (keys in program order) waits for the cache.
    AwaitCache {
        req: u64,
        batch: Vec<Key>,
    },
    /// Two-phase commit: the largest proposal so far and the partitions still to answer.
    AwaitPrepared {
        ct: Ts,
        involved: Vec<usize>,
        left: usize,
        started_ns: Time,
    },
    Finished,
}

/// The client library inside one function instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    id: NodeId,
    cache: NodeId,
    partitions: Vec<NodeId>,
    function: u32,
    is_sink: bool,
    no_narrowing: bool,
    metadata_ns_per_kb: Time,
    ops: Vec<Op>,
    next_op: usize,
    ctx: Context,
    /// This function's reads: repeated reads return the same value (Alg. 1 l. 27).
    read_set: BTreeMap<Key, Option<Value>>,
    state: State,
    next_req: u64,
    op_index: u32,
    /// Some read of this function needed the store.
    used_storage: bool,
}

impl Client {
    /// The library of the function `start` describes, running on the machine of its cache.
    pub fn new(start: FunctionStart<'_, Context>, partitions: Vec<NodeId>, no_narrowing: bool, metadata_ns_per_kb: Time) -> Client {
        let mut ctx = start.context;
        if ctx.started_ns.is_none() {
            ctx.started_ns = Some(start.now);
        }
        Client {
            id: start.self_id,
            cache: start.colocated[0],
            partitions,
            function: start.function,
            is_sink: start.is_sink,
            no_narrowing,
            metadata_ns_per_kb,
            ops: start.ops,
            next_op: 0,
            ctx,
            read_set: BTreeMap::new(),
            state: State::Running,
            next_req: 0,
            op_index: 0,
            used_storage: false,
        }
    }

    /// The context the function hands on when it finishes.
    pub fn into_context(self) -> Context {
        self.ctx
    }

    pub(super) fn on_start(&mut self, now: Time, out: &mut Out) {
        if self.is_sink {
            out.observe(metrics::METADATA_BYTES, self.ctx.metadata_bytes());
        }
        let delay = self.metadata_ns_per_kb * self.ctx.metadata_bytes() / 1024;
        if delay > 0 {
            out.set_timer(Timer::Start, delay);
            return;
        }
        self.begin(now, out);
    }

    pub(super) fn begin(&mut self, now: Time, out: &mut Out) {
        if self.ctx.lo > self.ctx.hi {
            // Eq. 3: the parents read from snapshots with no common point.
            self.abort(now, "empty_interval", out);
            return;
        }
        self.run(now, out);
    }

    fn record_op(&mut self, now: Time, op: OpRecord) {
        let mut op = op;
        op.node = Some(self.cache);
        op.at_ns = Some(now);
        self.ctx.ops.insert((now, self.function, self.op_index), op);
        self.op_index += 1;
    }

    /// Runs operations until one must wait.
    fn run(&mut self, now: Time, out: &mut Out) {
        loop {
            let Some(op) = self.ops.get(self.next_op).cloned() else {
                self.finish(now, out);
                return;
            };
            match op {
                Op::Write { key, value } => {
                    self.ctx.write_set.insert(key, value);
                    self.record_op(now, OpRecord::write(key, value));
                    self.next_op += 1;
                }
                Op::Read { .. } | Op::ReadTxn { .. } => {
                    let mut batch = Vec::new();
                    while let Some(op) = self.ops.get(self.next_op) {
                        match op {
                            Op::Read { key } => batch.push(*key),
                            Op::ReadTxn { keys } => batch.extend(keys.iter().copied()),
                            Op::Write { .. } => break,
                        }
                        self.next_op += 1;
                    }
                    let mut needed: Vec<Key> = Vec::new();
                    for &k in &batch {
                        if !self.ctx.write_set.contains_key(&k) && !self.read_set.contains_key(&k) && !needed.contains(&k) {
                            needed.push(k);
                        }
                    }
                    if needed.is_empty() {
                        if !self.complete_batch(now, &batch, BTreeMap::new(), out) {
                            return;
                        }
                        continue;
                    }
                    let req = self.next_req;
                    self.next_req += 1;
                    out.send(self.cache, Msg::CacheRead { req, keys: needed, lo: self.ctx.lo, hi: self.ctx.hi });
                    self.state = State::AwaitCache { req, batch };
                    return;
                }
            }
        }
    }

    pub(super) fn on_cache_reply(&mut self, now: Time, req: u64, answers: Vec<(Key, Answer)>, storage: bool, out: &mut Out) {
        self.used_storage |= storage;
        let State::AwaitCache { req: want, batch } = std::mem::replace(&mut self.state, State::Running) else {
            unreachable!("a cache reply the library did not wait for")
        };
        assert_eq!(req, want);
        if self.complete_batch(now, &batch, answers.into_iter().collect(), out) {
            self.run(now, out);
        }
    }

    /// Returns each key of the batch, in order, narrowing the interval; false if it aborted.
    fn complete_batch(&mut self, now: Time, batch: &[Key], answers: BTreeMap<Key, Answer>, out: &mut Out) -> bool {
        for &key in batch {
            if let Some(&v) = self.ctx.write_set.get(&key) {
                self.record_op(now, OpRecord::read(key, Some(v)));
                continue;
            }
            if let Some(&v) = self.read_set.get(&key) {
                self.record_op(now, OpRecord::read(key, v));
                continue;
            }
            match answers.get(&key).expect("the cache answered every key we asked") {
                Answer::Collected => {
                    self.abort(now, "gc_collected", out);
                    return false;
                }
                &Answer::Version { value, t, p } => {
                    // The cache checked Eq. 1 against the same interval; check it again here.
                    assert_eq!(
                        classify(t, p, (self.ctx.lo, self.ctx.hi)),
                        ReadCase::Consistent,
                        "the cache returned a version outside the interval"
                    );
                    if !self.no_narrowing {
                        (self.ctx.lo, self.ctx.hi) = narrow((self.ctx.lo, self.ctx.hi), t, p);
                    }
                    self.read_set.insert(key, value);
                    self.record_op(now, OpRecord::read(key, value).with_version([t, p]));
                }
            }
        }
        true
    }

    fn finish(&mut self, now: Time, out: &mut Out) {
        out.observe(metrics::FUNCTION_CACHE_ONLY, u64::from(!self.used_storage));
        if !self.is_sink {
            out.observe(metrics::METADATA_BYTES_HOP, self.ctx.metadata_bytes());
            self.state = State::Finished;
            out.function_done();
            return;
        }
        if self.ctx.write_set.is_empty() {
            self.commit_record(now, None, out);
            return;
        }
        // TCC_WriteTX: prepare at every partition written, with s_low as the lower bound.
        let n = self.partitions.len() as u32;
        let mut groups: BTreeMap<usize, Vec<(Key, Value)>> = BTreeMap::new();
        for (&k, &v) in &self.ctx.write_set {
            groups.entry(tcc_store::partition_of(k, n)).or_default().push((k, v));
        }
        let tx = self.id.0;
        let involved: Vec<usize> = groups.keys().copied().collect();
        for (p, writes) in groups {
            out.send(self.partitions[p], StoreMsg::Prepare { tx, lower_bound: self.ctx.lo, writes }.into());
        }
        self.state = State::AwaitPrepared { ct: 0, left: involved.len(), involved, started_ns: now };
    }

    pub(super) fn on_prepared(&mut self, now: Time, tx: u64, pt: Ts, out: &mut Out) {
        assert_eq!(tx, self.id.0);
        let State::AwaitPrepared { ct, involved, left, started_ns } = &mut self.state else {
            unreachable!("Prepared outside two-phase commit")
        };
        *ct = (*ct).max(pt);
        *left -= 1;
        if *left > 0 {
            return;
        }
        let (ct, involved, started_ns) = (*ct, std::mem::take(involved), *started_ns);
        // Writes follow reads: the commit is above every version the workflow read.
        assert!(ct > self.ctx.lo, "commit timestamp {ct} not above s_low {}", self.ctx.lo);
        for p in involved {
            out.send(self.partitions[p], StoreMsg::Commit { tx, ct }.into());
        }
        out.observe(metrics::COMMIT_NS, now - started_ns);
        self.commit_record(now, Some(ct), out);
    }

    fn commit_record(&mut self, now: Time, ct: Option<Ts>, out: &mut Out) {
        // Cloned, not taken: the invariant still sees the reads after this handler.
        let mut ops: Vec<OpRecord> = self.ctx.ops.values().cloned().collect();
        if let Some(ct) = ct {
            for op in ops.iter_mut().filter(|o| o.kind == OpKind::Write) {
                op.version = [ct].into_iter().collect();
            }
        }
        out.trace("Commit", || format!("{{\"ct\":{},\"lo\":{},\"hi\":{}}}", ct.unwrap_or(0), self.ctx.lo, self.ctx.hi));
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.cache),
            invoke_ns: self.ctx.started_ns.unwrap_or(now),
            complete_ns: now,
            outcome: Outcome::Ok,
            ops: ops.into(),
            note: None,
        });
        self.state = State::Finished;
        out.function_done();
    }

    fn abort(&mut self, now: Time, reason: &'static str, out: &mut Out) {
        let ops = std::mem::take(&mut self.ctx.ops).into_values().collect();
        out.trace("Abort", || format!("{{\"reason\":\"{reason}\",\"lo\":{},\"hi\":{}}}", self.ctx.lo, self.ctx.hi));
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.cache),
            invoke_ns: self.ctx.started_ns.unwrap_or(now),
            complete_ns: now,
            outcome: Outcome::Aborted,
            ops,
            note: Some(reason),
        });
        self.state = State::Finished;
        out.abort_workflow(reason);
    }

    /// Observation 3: the interval lies inside the validity `[t, p]` of every version read.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        let (lo, hi) = (self.ctx.lo, self.ctx.hi);
        if lo > hi {
            return Ok(()); // an empty merge: the function aborts
        }
        for op in self.ctx.ops.values() {
            if let (OpKind::Read, [t, p]) = (op.kind, op.version.as_slice())
                && !(*t <= lo && hi <= *p)
            {
                return Err(format!(
                    "the snapshot interval [{lo}, {hi}] is not inside [{t}, {p}], the validity of the version of key {} read",
                    op.key
                ));
            }
        }
        Ok(())
    }
}
