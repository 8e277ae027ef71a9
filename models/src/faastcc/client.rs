//! The client library (Alg. 1) inside one function instance: it reads through its cache,
//! narrowing the workflow's snapshot interval, buffers writes, and at the sink commits the
//! workflow with two-phase commit.

use super::context::Context;
use super::interval::{ReadCase, classify, narrow};
use super::msg::{Answer, Msg, Out, Timer};
use crate::metrics;
use crate::tcc_store::{self, StoreMsg, Ts};
use crate::txn_client::TxnClient;
use causim_sim::history::{Key, OpKind, Value};
use causim_sim::node::NodeId;
use causim_sim::protocol::FunctionStart;
use causim_sim::time::Time;
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
    no_narrowing: bool,
    metadata_ns_per_kb: Time,
    /// The operations, buffered writes and this function's reads: repeated reads return the
    /// same value (Alg. 1 l. 27).
    txn: TxnClient,
    ctx: Context,
    state: State,
    next_req: u64,
    /// Some read of this function needed the store.
    used_storage: bool,
    /// The store's stable time when it reported a version collected: where a retry restarts.
    restart_lo: Ts,
}

impl Client {
    /// The library of the function `start` describes, running on the machine of its cache.
    /// Each read a call of its own (`params.one_read_per_call`).
    pub fn with_one_read_per_call(mut self, yes: bool) -> Client {
        self.txn = self.txn.one_read_per_call(yes);
        self
    }

    pub fn new(start: FunctionStart<'_, Context>, partitions: Vec<NodeId>, no_narrowing: bool, metadata_ns_per_kb: Time) -> Client {
        let mut ctx = start.context;
        ctx.txn.started_ns.get_or_insert(start.now);
        let cache = start.colocated[0];
        Client {
            id: start.self_id,
            cache,
            partitions,
            no_narrowing,
            metadata_ns_per_kb,
            txn: TxnClient::new(cache, start.function, start.is_sink, start.ops),
            ctx,
            state: State::Running,
            next_req: 0,
            used_storage: false,
            restart_lo: 0,
        }
    }

    /// The context a retry starts from: "restart the transaction from a recent snapshot"
    /// (§4.1): no older than the newest version the aborted attempt read, nor than the store's
    /// stable time if the store had collected a version it needed. From the root interval a
    /// retry reads the same cached entries and aborts the same way for ever: a never-renewed
    /// promise narrows the interval to a snapshot the store no longer keeps
    /// (`scenarios/faastcc/retry-after-gc.json`), or to one a sibling branch's newer version
    /// misses at the join (`scenarios/faastcc/retry-after-empty-join.json`).
    pub fn retry_context(&self) -> Context {
        Context { lo: self.ctx.lo.max(self.restart_lo), ..Context::root() }
    }

    /// The context the function hands on when it finishes.
    pub fn into_context(self) -> Context {
        self.ctx
    }

    pub(super) fn on_start(&mut self, now: Time, out: &mut Out) {
        let delay = self.txn.on_start(self.ctx.metadata_bytes(), self.metadata_ns_per_kb, out);
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

    /// Runs operations until one must wait.
    fn run(&mut self, now: Time, out: &mut Out) {
        while let Some(batch) = self.txn.next_batch(&mut self.ctx.txn, now) {
            let needed = self.txn.to_fetch(&self.ctx.txn, &batch);
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
        self.finish(now, out);
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
            if self.txn.read_locally(&mut self.ctx.txn, now, key) {
                continue;
            }
            match *answers.get(&key).expect("the cache answered every key we asked") {
                Answer::Collected { stable } => {
                    self.restart_lo = stable;
                    self.abort(now, "gc_collected", out);
                    return false;
                }
                Answer::Version { value, t, p } => {
                    // The cache checked Eq. 1 against the same interval; check it again here.
                    assert_eq!(
                        classify(t, p, (self.ctx.lo, self.ctx.hi)),
                        ReadCase::Consistent,
                        "the cache returned a version outside the interval"
                    );
                    if !self.no_narrowing {
                        (self.ctx.lo, self.ctx.hi) = narrow((self.ctx.lo, self.ctx.hi), t, p);
                    }
                    self.txn.read_served(&mut self.ctx.txn, now, key, value, [t, p]);
                }
            }
        }
        true
    }

    fn finish(&mut self, now: Time, out: &mut Out) {
        out.observe(metrics::FUNCTION_CACHE_ONLY, u64::from(!self.used_storage));
        if !self.txn.is_sink() {
            out.observe(metrics::METADATA_BYTES_HOP, self.ctx.metadata_bytes());
            self.state = State::Finished;
            out.function_done();
            return;
        }
        if self.ctx.txn.write_set.is_empty() {
            self.commit_record(now, None, out);
            return;
        }
        // TCC_WriteTX: prepare at every partition written, with s_low as the lower bound.
        let n = self.partitions.len() as u32;
        let mut groups: BTreeMap<usize, Vec<(Key, Value)>> = BTreeMap::new();
        for (&k, &v) in &self.ctx.txn.write_set {
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
        // Every write gets the commit timestamp; the operations stay for the invariant.
        let record = self.txn.committed(&self.ctx.txn, now, |_| ct);
        out.trace("Commit", || format!("{{\"ct\":{},\"lo\":{},\"hi\":{}}}", ct.unwrap_or(0), self.ctx.lo, self.ctx.hi));
        out.record(record);
        self.state = State::Finished;
        out.function_done();
    }

    fn abort(&mut self, now: Time, reason: &'static str, out: &mut Out) {
        let record = self.txn.aborted(&mut self.ctx.txn, now, reason);
        out.trace("Abort", || format!("{{\"reason\":\"{reason}\",\"lo\":{},\"hi\":{}}}", self.ctx.lo, self.ctx.hi));
        out.record(record);
        self.state = State::Finished;
        out.abort_workflow(reason);
    }

    /// Observation 3: the interval lies inside the validity `[t, p]` of every version read.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        let (lo, hi) = (self.ctx.lo, self.ctx.hi);
        if lo > hi {
            return Ok(()); // an empty merge: the function aborts
        }
        for op in self.ctx.txn.ops.values() {
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
