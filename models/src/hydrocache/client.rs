//! The client library inside one function instance: it reads through its cache (Opt: from the
//! local cut, validated when the function ends; Con: from the snapshot its source installed
//! at every cache), buffers writes, and at the sink sends them to the database as one batch.

use super::context::Context;
use super::msg::{Msg, Need, Out, Timer};
use super::version::{Cut, Deps, HVersion, merge_deps};
use super::{Mode, Seq, WfKey};
use crate::metrics;
use crate::txn_client::TxnClient;
use causim_sim::history::Key;
use causim_sim::node::{Message, NodeId};
use causim_sim::protocol::FunctionStart;
use causim_sim::time::Time;
use std::collections::BTreeMap;

/// The first pair of reads that violates causality: `earlier` (key, version) read, then a
/// version of `later` whose dependencies need a newer `earlier`.
fn conflict(reads: &BTreeMap<Key, (Seq, NodeId)>, key: Key, v: &HVersion) -> Option<Key> {
    reads.iter().find(|&(&k, &(s, _))| k != key && v.deps.get(k).is_some_and(|need| need > s)).map(|(&k, _)| k)
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum State {
    Running,
    /// Con: gathering every cache's snapshot, then installing the join.
    ConGather {
        cuts: Vec<Option<Cut>>,
        left: usize,
        started_ns: Time,
    },
    ConInstall {
        left: usize,
        started_ns: Time,
    },
    AwaitCache {
        req: u64,
        batch: Vec<Key>,
    },
    AwaitWrite,
    Finished,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    cache: NodeId,
    caches: Vec<NodeId>,
    db: NodeId,
    mode: Mode,
    no_validation: bool,
    metadata_ns_per_kb: Time,
    write_behind: bool,
    wf: WfKey,
    is_source: bool,
    /// The operations, buffered writes and this function's reads (for repeated reads).
    txn: TxnClient,
    ctx: Context,
    /// This function's reads from caches, validated when it ends (Opt).
    fresh: Vec<(Key, HVersion)>,
    /// The first causal violation among this function's reads: (key read, conflicting key).
    violation: Option<(Key, Key)>,
    /// Some read of this function needed the database or another cache.
    used_remote: bool,
    state: State,
    next_req: u64,
}

impl Client {
    /// The library of the function `start` describes, running on the machine of its cache.
    /// Each read a call of its own (`params.one_read_per_call`).
    pub fn with_one_read_per_call(mut self, yes: bool) -> Client {
        self.txn = self.txn.one_read_per_call(yes);
        self
    }

    pub fn new(
        start: FunctionStart<'_, Context>,
        caches: Vec<NodeId>,
        db: NodeId,
        mode: Mode,
        no_validation: bool,
        metadata_ns_per_kb: Time,
        write_behind: bool,
    ) -> Client {
        let mut ctx = start.context;
        ctx.txn.started_ns.get_or_insert(start.now);
        let cache = start.colocated[0];
        Client {
            cache,
            caches,
            db,
            mode,
            no_validation,
            metadata_ns_per_kb,
            write_behind,
            wf: (start.workflow_id, start.attempt),
            is_source: start.is_source,
            txn: TxnClient::new(cache, start.function, start.is_sink, start.ops),
            ctx,
            fresh: Vec::new(),
            violation: None,
            used_remote: false,
            state: State::Running,
            next_req: 0,
        }
    }

    /// Opt: what a retry starts from after a causal violation. The papers say only "aborted and
    /// retried"; a retry that forgets what the aborted attempt learned reads the same stale cut
    /// and aborts the same way until a refresh comes (a join of a branch that read b, written
    /// with x=1, and one that read the initial x: `scenarios/hydrocache/retry-after-violation.json`).
    /// So the retry starts with the aborted attempt's dependency map as its floor: each key is
    /// read at least as new as a version some read of that attempt depended on, which the cut
    /// or the database serves like any dependency. Con keeps a fresh start: its retry builds a
    /// new snapshot anyway.
    pub fn retry_context(&self) -> Option<Context> {
        (self.mode == Mode::Opt).then(|| Context { deps: self.ctx.deps.clone(), ..Context::new() })
    }

    /// The batch this sink sent the database and has not seen acknowledged (nothing else of
    /// the workflow can take effect: writes are buffered until the sink sends them).
    pub fn in_flight_writes(&self) -> Vec<(Key, causim_sim::history::Value)> {
        if self.state == State::AwaitWrite { self.ctx.txn.write_set.iter().map(|(&k, &v)| (k, v)).collect() } else { Vec::new() }
    }

    /// The context the function hands on when it finishes.
    pub fn into_context(self) -> Context {
        self.ctx
    }

    pub(super) fn on_start(&mut self, now: Time, out: &mut Out) {
        let delay = self.txn.on_start(self.ctx.metadata_bytes(self.mode), self.metadata_ns_per_kb, out);
        if delay > 0 {
            out.set_timer(Timer::Start, delay);
            return;
        }
        self.begin(now, out);
    }

    pub(super) fn begin(&mut self, now: Time, out: &mut Out) {
        if self.ctx.join_violation && !self.no_validation {
            let reason = if self.mode == Mode::Con { "con_outside_snapshot" } else { "causal_violation" };
            self.abort(now, reason, out);
            return;
        }
        if self.gc_abort(now, out) {
            return;
        }
        if self.mode == Mode::Con && !self.ctx.con_ready {
            assert!(self.is_source, "HydroCache-Con prepares at the workflow's source");
            for &c in &self.caches {
                out.send(c, Msg::ConPrepare { wf: self.wf });
            }
            self.state = State::ConGather { cuts: vec![None; self.caches.len()], left: self.caches.len(), started_ns: now };
            return;
        }
        self.run(now, out);
    }

    fn run(&mut self, now: Time, out: &mut Out) {
        while let Some(batch) = self.txn.next_batch(&mut self.ctx.txn, now) {
            if self.request(&batch, out) {
                return;
            }
            self.complete_batch(now, &batch, BTreeMap::new(), out);
        }
        self.finish(now, out);
    }

    /// Asks the cache for the keys of `batch` not served locally; false if there are none.
    fn request(&mut self, batch: &[Key], out: &mut Out) -> bool {
        let keys = self.txn.to_fetch(&self.ctx.txn, batch);
        let needs: Vec<(Key, Need)> = keys
            .into_iter()
            .map(|k| match self.ctx.read_set.get(&k) {
                Some(&(seq, at)) => (k, Need::Exact(seq, at)),
                None => (k, Need::AtLeast(self.dep(k))),
            })
            .collect();
        if needs.is_empty() {
            return false;
        }
        let req = self.next_req;
        self.next_req += 1;
        out.send(self.cache, Msg::Read { req, wf: self.wf, keys: needs });
        self.state = State::AwaitCache { req, batch: batch.to_vec() };
        true
    }

    fn dep(&self, key: Key) -> Seq {
        self.ctx.deps.binary_search_by_key(&key, |e| e.0).map_or(0, |i| self.ctx.deps[i].1)
    }

    /// Returns the batch's keys in order; false if some had to be read again (see below).
    fn complete_batch(&mut self, now: Time, batch: &[Key], answers: BTreeMap<Key, (HVersion, u32, bool)>, out: &mut Out) -> bool {
        for (i, &key) in batch.iter().enumerate() {
            if self.txn.read_locally(&mut self.ctx.txn, now, key) {
                continue;
            }
            let (version, rounds, remote) = answers.get(&key).cloned().expect("the cache answered every key");
            let upstream = self.ctx.read_set.get(&key).copied();
            if upstream.is_none() && version.seq < self.dep(key) {
                // An earlier key of this batch (read from another cache or the database) depends
                // on a newer version than the one served: read the rest of the batch again.
                out.observe(metrics::BATCH_REREADS, 1);
                let asked = self.request(&batch[i..], out);
                assert!(asked, "the key itself still needs the cache");
                return false;
            }
            out.observe(metrics::STORAGE_ROUNDS_PER_READ, rounds as u64);
            self.used_remote |= rounds > 0 || remote;
            if let Some((seq, _)) = upstream {
                assert_eq!(version.seq, seq, "a key read upstream is read again at the same version");
            } else {
                self.ctx.gc_pruned_max = self.ctx.gc_pruned_max.max(version.deps.pruned_epoch());
                if self.violation.is_none()
                    && let Some(other) = conflict(&self.ctx.read_set, key, &version)
                {
                    self.violation = Some((key, other));
                }
                self.ctx.read_set.insert(key, (version.seq, self.cache));
                self.ctx.pinned_at.insert(self.cache);
                let deps = &mut self.ctx.deps;
                if !version.deps.is_empty() {
                    *deps = merge_deps(deps, &version.deps.0);
                }
                match deps.binary_search_by_key(&key, |e| e.0) {
                    Ok(at) => deps[at].1 = deps[at].1.max(version.seq),
                    Err(at) => deps.insert(at, (key, version.seq)),
                }
            }
            self.txn.read_served(&mut self.ctx.txn, now, key, version.value, [version.seq]);
            self.fresh.push((key, version));
        }
        true
    }

    fn finish(&mut self, now: Time, out: &mut Out) {
        out.observe(metrics::FUNCTION_CACHE_ONLY, u64::from(!self.used_remote));
        // Validation between functions (Opt), or the outside-snapshot corner of Con.
        if let Some((key, other)) = self.violation
            && !self.no_validation
        {
            out.trace("Violation", || format!("{{\"key\":{key},\"depends_on_newer\":{other}}}"));
            let reason = if self.mode == Mode::Con { "con_outside_snapshot" } else { "causal_violation" };
            self.abort(now, reason, out);
            return;
        }
        if self.gc_abort(now, out) {
            return;
        }
        for (k, v) in std::mem::take(&mut self.fresh) {
            self.ctx.reads_log.push((k, v.seq, v.deps));
        }
        if !self.txn.is_sink() {
            out.observe(metrics::METADATA_BYTES_HOP, self.ctx.metadata_bytes(self.mode));
            self.state = State::Finished;
            out.function_done();
            return;
        }
        if self.ctx.txn.write_set.is_empty() {
            self.commit_record(now, &[], out);
            return;
        }
        let writes = self.ctx.txn.write_set.iter().map(|(&k, &v)| (k, v)).collect();
        let ack = !self.write_behind;
        let deps = Deps::from_sorted(self.ctx.deps.clone()).pruned_at(self.ctx.gc_pruned_max);
        out.send(self.db, Msg::WriteTx { deps, writes, ack });
        if ack {
            self.state = State::AwaitWrite;
        } else {
            // Write-behind: committed once handed over; the database numbers the versions later.
            self.commit_record(now, &[], out);
        }
    }

    /// Aborts (`gc_epoch`) if garbage collection may have hidden a violation from validation.
    fn gc_abort(&mut self, now: Time, out: &mut Out) -> bool {
        if !self.ctx.gc_hazard() || self.no_validation {
            return false;
        }
        out.count(metrics::GC_EPOCH_ABORTS);
        self.abort(now, "gc_epoch", out);
        true
    }

    fn cleanup(&mut self, all: bool, out: &mut Out) {
        let targets: Vec<NodeId> =
            if all || self.mode == Mode::Con { self.caches.clone() } else { self.ctx.pinned_at.iter().copied().collect() };
        for c in targets {
            out.send(c, Msg::Cleanup { wf: self.wf });
        }
    }

    fn commit_record(&mut self, now: Time, seqs: &[(Key, Seq)], out: &mut Out) {
        let version = |k: Key| seqs.binary_search_by_key(&k, |e| e.0).ok().map(|i| seqs[i].1);
        out.record(self.txn.committed(&self.ctx.txn, now, version));
        self.cleanup(false, out);
        self.state = State::Finished;
        out.function_done();
    }

    fn abort(&mut self, now: Time, reason: &'static str, out: &mut Out) {
        out.record(self.txn.aborted(&mut self.ctx.txn, now, reason));
        self.cleanup(true, out);
        self.state = State::Finished;
        out.abort_workflow(reason);
    }

    pub(super) fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match msg {
            Msg::ConPinned { wf, cut } => {
                assert_eq!(wf, self.wf);
                let State::ConGather { cuts, left, started_ns } = &mut self.state else { unreachable!("ConPinned") };
                let i = self.caches.iter().position(|&c| c == from).expect("from a cache");
                cuts[i] = Some(cut);
                *left -= 1;
                if *left == 0 {
                    let cuts: Vec<Cut> = cuts.iter_mut().map(|c| c.take().expect("every cache answered")).collect();
                    let started_ns = *started_ns;
                    for &c in &self.caches {
                        out.send(c, Msg::ConInstall { wf, cuts: cuts.clone() });
                    }
                    self.state = State::ConInstall { left: self.caches.len(), started_ns };
                }
            }
            Msg::ConInstalled { wf } => {
                assert_eq!(wf, self.wf);
                let State::ConInstall { left, started_ns } = &mut self.state else { unreachable!("ConInstalled") };
                *left -= 1;
                if *left == 0 {
                    out.observe(metrics::CON_PREPARE_NS, now - *started_ns);
                    self.ctx.con_ready = true;
                    self.state = State::Running;
                    self.run(now, out);
                }
            }
            Msg::ReadReply { req, versions } => {
                if let Some(e) = versions.epoch {
                    self.ctx.served_under(e);
                }
                let State::AwaitCache { req: want, batch } = std::mem::replace(&mut self.state, State::Running) else {
                    unreachable!("a read reply the library did not wait for")
                };
                assert_eq!(req, want);
                let answers = versions.into_iter().map(|(k, v, r, remote)| (k, (v, r, remote))).collect();
                if self.complete_batch(now, &batch, answers, out) {
                    self.run(now, out);
                }
            }
            Msg::WriteAck { seqs } => {
                assert_eq!(self.state, State::AwaitWrite);
                self.commit_record(now, &seqs, out);
            }
            other => unreachable!("{} is not for a function", other.kind()),
        }
    }

    /// Validated reads form a causal snapshot: no read version depends on a newer version of
    /// another key read.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
        if self.ctx.join_violation && !self.no_validation {
            return Ok(()); // the join aborts
        }
        let log = &self.ctx.reads_log;
        for (k1, s1, deps) in log {
            for (k2, s2, _) in log {
                if k1 == k2 && s1 != s2 {
                    return Err(format!("the workflow read key {k1} at versions {s1} and {s2}"));
                }
                if k1 != k2
                    && let Some(need) = deps.get(*k2)
                    && need > *s2
                {
                    return Err(format!(
                        "the workflow read key {k1} version {s1}, which depends on key {k2} version {need}, and key {k2} version {s2}"
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(v: &[(Key, Seq)]) -> Deps {
        Deps::from_sorted(v.to_vec())
    }

    #[test]
    fn a_version_depending_on_a_newer_version_of_a_key_read_is_a_conflict() {
        // The workflow read kb@1 (T1's); T2 wrote ka@2 and kb@2 together.
        let read: BTreeMap<Key, (Seq, NodeId)> = [(2, (1, NodeId::fixed(0)))].into();
        let ka2 = HVersion { seq: 2, value: Some(7), deps: deps(&[(1, 2), (2, 2)]), written_ns: 0 };
        assert_eq!(conflict(&read, 1, &ka2), Some(2));
        let ka1 = HVersion { seq: 1, value: Some(6), deps: deps(&[(1, 1), (2, 1)]), written_ns: 0 };
        assert_eq!(conflict(&read, 1, &ka1), None);
    }
}
