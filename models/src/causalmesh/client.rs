//! The client library inside each function (§6, Figs. 8 and 10; CausalMesh-TCC §7).
//!
//! CausalMesh: the workflow context carries `deps` (versions read from caches) and `local`
//! (the workflow's own writes). Reads send `deps`; writes send `deps` and `local`; a read
//! returns the newer of the cached and the local version; a read transaction aborts when the
//! cache's version of a key is older than the workflow's own write.
//!
//! CausalMesh-TCC: the workflow is one transaction. Writes are buffered; reads return the
//! oldest version that forms a cut with the read set, repeat earlier reads, and see the
//! transaction's own writes; the last function commits the buffer as one batch. At a join the
//! union of the branches' read sets must form a cut under the whole causal past of the writes
//! read, which only a server can judge: the function after the join asks its server first, and
//! the workflow aborts (and is retried) when it is not.

use super::msg::Msg;
use super::vc::{Deps, Vc, Version, merge_dep, merge_deps};
use crate::metrics;
use causim_sim::history::{Key, OpKind, OpRecord, Ops, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use std::collections::{BTreeMap, BTreeSet};

/// What a workflow carries from function to function.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MeshContext {
    // CausalMesh (Fig. 10). `local` keeps every write of the workflow, not one merged version
    // per key: other carried writes may depend on an older one exactly.
    pub deps: Deps,
    pub local: BTreeMap<Key, Vec<Version>>,
    // CausalMesh-TCC (§7).
    pub read_set: BTreeMap<Key, Version>,
    pub buffer: Vec<(Key, Value)>,
    pub txn_ops: Vec<OpRecord>,
    /// For each of `txn_ops`: the function that issued it and its position among that
    /// function's operations. A fan-out hands every branch a copy of the context, so a join
    /// sees the operations from before the fan-out once per branch; these ids let it keep them
    /// once (two branches' own operations can be equal records: same read, same server, same
    /// time).
    pub txn_op_ids: Vec<(u32, u32)>,
    pub txn_started_ns: Option<Time>,
    /// Set at a join whose branches' read sets do not form a cut.
    pub invalid: Option<&'static str>,
    /// Set at a join of branches that each read keys the other did not: the next function
    /// asks its server whether the union is a cut before it goes on (§7's validation phase).
    pub validate: bool,
    /// Versions a retried workflow must not read older than, when it can (learned from the
    /// fractures of earlier attempts' joins; see `retry_context`).
    pub read_floor: BTreeMap<Key, Vc>,
}

impl MeshContext {
    /// Bytes of metadata the context carries (what moves between functions).
    pub fn bytes(&self) -> u64 {
        super::vc::deps_bytes(&self.deps)
            + self.local.values().flatten().map(|v| 8 + v.bytes()).sum::<u64>()
            + self.read_set.values().map(|v| 8 + v.bytes()).sum::<u64>()
    }

    /// Merges a parallel branch's context into this one (fan-in).
    pub fn join(&mut self, other: MeshContext) {
        merge_deps(&mut self.deps, &other.deps);
        for (k, versions) in other.local {
            let mine = self.local.entry(k).or_default();
            for v in versions {
                if !mine.iter().any(|m| m.vc == v.vc) {
                    mine.push(v);
                }
            }
        }
        // A branch's read set was built read by read as a cut; a union needs validating only
        // when neither side's reads include the other's.
        let mine_only = self.read_set.keys().any(|k| !other.read_set.contains_key(k));
        let theirs_only = other.read_set.keys().any(|k| !self.read_set.contains_key(k));
        self.validate |= other.validate || (mine_only && theirs_only);
        for (k, f) in other.read_floor {
            raise_floor(&mut self.read_floor, k, f);
        }
        for (k, v) in other.read_set {
            match self.read_set.get(&k) {
                Some(mine) if mine.winner != v.winner => {
                    self.invalid = Some("parallel functions read different versions of a key");
                    raise_floor(&mut self.read_floor, k, mine.winner.max(v.winner));
                }
                Some(_) => {}
                None => {
                    self.read_set.insert(k, v);
                }
            }
        }
        // The operations (and buffered writes) from before the fan-out are in both contexts:
        // keep each once. Buffered writes are unique (key, value) pairs.
        for w in other.buffer {
            if !self.buffer.contains(&w) {
                self.buffer.push(w);
            }
        }
        let mut seen: BTreeSet<(u32, u32)> = self.txn_op_ids.iter().copied().collect();
        for (id, op) in other.txn_op_ids.into_iter().zip(other.txn_ops) {
            if seen.insert(id) {
                self.txn_op_ids.push(id);
                self.txn_ops.push(op);
            }
        }
        // Operations are listed by (function, index), and the buffer in the order of its writes
        // there, so the last buffered write of a key (the one that commits, and the one a later
        // read returns) is the transaction's last listed write of it. A script's functions are
        // numbered along its edges (`after` names earlier functions; the engine's empty join
        // and source have no operations), so this is one order of the DAG, the same at every
        // join (a generator's `dag` shape with an edge to a lower index would break it).
        // Appending the other context's new entries instead gave each join its own order: with
        // two sources writing x, one join read the second source's x, and the next join listed
        // the first source's x after it (NotMyLastWrite, a fuzzer finding).
        let mut listed: Vec<((u32, u32), OpRecord)> = self.txn_op_ids.drain(..).zip(self.txn_ops.drain(..)).collect();
        listed.sort_by_key(|(id, _)| *id);
        (self.txn_op_ids, self.txn_ops) = listed.into_iter().unzip();
        let rank: BTreeMap<(Key, Value), usize> = self
            .txn_ops
            .iter()
            .enumerate()
            .filter(|(_, op)| op.kind == OpKind::Write)
            .filter_map(|(i, op)| Some(((op.key, op.value?), i)))
            .collect();
        self.buffer.sort_by_key(|w| rank.get(w).copied().unwrap_or(0));
        self.txn_started_ns = match (self.txn_started_ns, other.txn_started_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.invalid = self.invalid.or(other.invalid);
        if self.invalid.is_none()
            && let Some((k, d)) = read_set_fracture(&self.read_set)
        {
            self.invalid = Some("the read sets of parallel functions do not form a cut");
            raise_floor(&mut self.read_floor, k, d);
        }
    }
}

fn raise_floor(floors: &mut BTreeMap<Key, Vc>, key: Key, vc: Vc) {
    let f = floors.entry(key).or_insert(vc);
    *f = (*f).max(vc);
}

/// A dependency of a version in the read set that is newer (in the arbitration order, as the
/// server's Fig. 11 test compares) than the write read of its key: the key, and the write a
/// retry should read at least. (VC coverage would be stricter than the server: a ring entry
/// showing a later concurrent write need not have merged the older one, and the join would
/// then refuse what every read accepted, on every retry.)
fn read_set_fracture(read_set: &BTreeMap<Key, Version>) -> Option<(Key, Vc)> {
    read_set.values().flat_map(|v| v.deps.iter()).find(|(k, d)| read_set.get(k).is_some_and(|r| *d > r.winner)).copied()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientRules {
    pub tcc: bool,
    /// Carry local writes on writes (correct); off is the `no_carry_local_writes` mutant.
    pub carry_local: bool,
    /// An aborted read transaction is retried after this long...
    pub read_txn_retry_ns: Time,
    /// ...this many times in all, before the workflow aborts.
    pub read_txn_attempts_max: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    server: NodeId,
    /// This function's index in its workflow (names its operations in `txn_op_ids`).
    function: u32,
    /// Transaction operations this function has added to the context so far.
    txn_ops_issued: u32,
    rules: ClientRules,
    ops: Vec<Op>,
    next: usize,
    ctx: MeshContext,
    /// This is the workflow's last function (CausalMesh-TCC commits here).
    last: bool,
    /// CausalMesh-TCC: this last function sent its commit (an abort before it sent nothing).
    commit_sent: bool,
    invoked_at: Time,
    /// Attempts of the current read transaction so far.
    read_txn_attempts: u32,
    /// A read that did not cover the session's dependencies (the built-in check).
    violation: Option<String>,
}

impl Client {
    pub fn new(server: NodeId, function: u32, rules: ClientRules, ops: Vec<Op>, ctx: MeshContext, last: bool, now: Time) -> Client {
        // CausalMesh-TCC reads keys one at a time; a read transaction is its reads.
        let ops = if rules.tcc {
            ops.into_iter()
                .flat_map(|op| match op {
                    Op::ReadTxn { keys } => keys.into_iter().map(|key| Op::Read { key }).collect(),
                    op => vec![op],
                })
                .collect()
        } else {
            ops
        };
        Client {
            server,
            function,
            txn_ops_issued: 0,
            rules,
            ops,
            next: 0,
            ctx,
            last,
            commit_sent: false,
            invoked_at: now,
            read_txn_attempts: 0,
            violation: None,
        }
    }

    /// CausalMesh-TCC: the batch this last function sent its server and has not seen
    /// acknowledged (the last value buffered for each key); nothing else of the workflow can
    /// take effect. `None` for CausalMesh, whose writes are sent one by one.
    pub fn in_flight_writes(&self) -> Option<Vec<(Key, Value)>> {
        if !self.rules.tcc {
            return None;
        }
        // Not "the last function ran out of operations": a join without operations of its own
        // has none from the start, and aborts at a fractured cut before it sends anything.
        let mut writes: BTreeMap<Key, Value> = BTreeMap::new();
        if self.commit_sent {
            writes.extend(self.ctx.buffer.iter().copied());
        }
        Some(writes.into_iter().collect())
    }

    pub fn into_context(self) -> MeshContext {
        self.ctx
    }

    /// What a retry of this function's aborted workflow starts from: the read floors learned.
    /// Without them a retry can repeat the same fractured join forever: each branch reads the
    /// oldest version that forms a cut with its own reads (Fig. 11), and nothing else changes.
    pub fn retry_context(&self) -> Option<MeshContext> {
        (!self.ctx.read_floor.is_empty()).then(|| MeshContext { read_floor: self.ctx.read_floor.clone(), ..MeshContext::default() })
    }

    pub fn check_invariants(&self) -> Result<(), String> {
        match &self.violation {
            Some(v) => Err(v.clone()),
            None => Ok(()),
        }
    }

    pub fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        if self.rules.tcc {
            self.ctx.txn_started_ns.get_or_insert(now);
            if let Some(reason) = self.ctx.invalid {
                self.abort_txn(now, reason, out);
                return;
            }
            if self.ctx.validate {
                let read_set = self.ctx.read_set.iter().map(|(k, v)| (*k, v.winner)).collect();
                out.observe(metrics::REQUEST_METADATA_BYTES, self.ctx.bytes());
                out.send(self.server, Msg::ClientValidateTcc { read_set });
                return;
            }
        }
        self.issue_next(now, out);
    }

    /// Sends the next operation's request, answering locally what needs no server.
    fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        loop {
            let Some(op) = self.ops.get(self.next).cloned() else {
                self.finish(now, out);
                return;
            };
            self.invoked_at = now;
            if !self.rules.tcc {
                let msg = match op {
                    Op::Read { key } => Msg::ClientRead { key, deps: self.ctx.deps.clone() },
                    Op::ReadTxn { keys } => Msg::ClientReadTxn { keys, deps: self.ctx.deps.clone() },
                    Op::Write { key, value } => {
                        let local = if self.rules.carry_local {
                            self.ctx.local.iter().flat_map(|(k, vs)| vs.iter().map(|v| (*k, v.clone()))).collect()
                        } else {
                            Vec::new()
                        };
                        Msg::ClientWrite { key, value, deps: self.ctx.deps.clone(), local }
                    }
                    Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
                };
                out.observe(metrics::REQUEST_METADATA_BYTES, self.ctx.bytes());
                out.send(self.server, msg);
                return;
            }
            match op {
                Op::Write { key, value } => {
                    self.ctx.buffer.push((key, value));
                    self.txn_op(OpRecord::write(key, value), now);
                }
                Op::Read { key } => {
                    if let Some(&(_, value)) = self.ctx.buffer.iter().rev().find(|(k, _)| *k == key) {
                        self.txn_op(OpRecord::read(key, Some(value)), now);
                    } else if let Some(v) = self.ctx.read_set.get(&key) {
                        let op = OpRecord::read(key, v.value).with_version(v.vc.to_u64s());
                        self.txn_op(op, now);
                    } else {
                        let read_set = self.ctx.read_set.iter().map(|(k, v)| (*k, v.winner)).collect();
                        out.observe(metrics::REQUEST_METADATA_BYTES, self.ctx.bytes());
                        let floor = self.ctx.read_floor.get(&key).copied();
                        out.send(self.server, Msg::ClientReadTcc { key, read_set, floor });
                        return;
                    }
                }
                Op::ReadTxn { .. } => unreachable!("expanded in `new`"),
                Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
            }
            self.next += 1;
        }
    }

    /// The read-transaction retry timer fired: send the same operation again.
    pub fn on_timer(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        self.issue_next(now, out);
    }

    fn txn_op(&mut self, mut op: OpRecord, now: Time) {
        op.node = Some(self.server);
        op.at_ns = Some(now);
        op.function = Some(self.function);
        self.ctx.txn_ops.push(op);
        self.ctx.txn_op_ids.push((self.function, self.txn_ops_issued));
        self.txn_ops_issued += 1;
    }

    fn finish(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        if self.rules.tcc && self.last {
            if self.ctx.buffer.is_empty() {
                self.record_txn(now, Outcome::Ok, None, out);
                out.function_done();
            } else {
                // The last value written to each key is the one that commits.
                let mut writes: BTreeMap<Key, Value> = BTreeMap::new();
                for (k, v) in &self.ctx.buffer {
                    writes.insert(*k, *v);
                }
                let deps = self.ctx.read_set.iter().filter(|(_, v)| v.value.is_some()).map(|(k, v)| (*k, v.winner)).collect();
                out.send(self.server, Msg::ClientCommit { writes: writes.into_iter().collect(), deps });
                self.commit_sent = true;
            }
            return;
        }
        out.observe(metrics::CONTEXT_BYTES, self.ctx.bytes());
        out.function_done();
    }

    fn record_txn(&mut self, now: Time, outcome: Outcome, note: Option<&'static str>, out: &mut Outbox<Msg, ()>) {
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.server),
            invoke_ns: self.ctx.txn_started_ns.unwrap_or(now),
            complete_ns: now,
            outcome,
            ops: std::mem::take(&mut self.ctx.txn_ops).into(),
            note,
            call: None,
        });
        self.ctx.txn_op_ids.clear();
    }

    fn abort_txn(&mut self, now: Time, reason: &'static str, out: &mut Outbox<Msg, ()>) {
        self.record_txn(now, Outcome::Aborted, Some(reason), out);
        out.abort_workflow(reason);
    }

    fn record(&mut self, now: Time, kind: TxnKind, ops: Ops, out: &mut Outbox<Msg, ()>) {
        out.record(TxnRecord {
            kind,
            node: Some(self.server),
            invoke_ns: self.invoked_at,
            complete_ns: now,
            outcome: Outcome::Ok,
            ops,
            note: None,
            call: None,
        });
    }

    /// The built-in check: a cached version must cover what the session depends on (§5.5).
    fn check_covers(&mut self, key: Key, version: &Version) {
        if self.violation.is_some() {
            return;
        }
        if let Some((_, dep)) = self.ctx.deps.iter().find(|(k, d)| *k == key && !d.le(&version.vc)) {
            self.violation = Some(format!("a read of key {key} returned version {} although the session depends on {dep}", version.vc));
        }
    }

    pub fn on_message(&mut self, now: Time, msg: Msg, out: &mut Outbox<Msg, ()>) {
        match msg {
            Msg::ReadReply { key, version } => {
                self.check_covers(key, &version);
                merge_dep(&mut self.ctx.deps, key, &version.winner);
                // Fig. 10 lines 5–7: the newer of the cached version and our own writes.
                let mut seen = version;
                for mine in self.ctx.local.get(&key).into_iter().flatten() {
                    seen.merge(mine);
                }
                let op = OpRecord::read(key, seen.value).with_version(seen.vc.to_u64s());
                self.record(now, TxnKind::Read, [op].into(), out);
            }
            Msg::ReadTxnReply { versions } => {
                let mut ops = Vec::with_capacity(versions.len());
                let mut aborted = false;
                for (key, version) in &versions {
                    ops.push(OpRecord::read(*key, version.value).with_version(version.vc.to_u64s()));
                    // Fig. 8 lines 6–8: our own write is not in the cut we read. A cut holding
                    // it shows a winning write at least as large (lexicographically) as ours, so
                    // an own write that would win against the cut's version is one it lacks.
                    // (Comparing with the cut's merged VC is unsound: a concurrent write from
                    // the same head can inflate it past our write.)
                    if self.ctx.local.get(key).into_iter().flatten().any(|mine| mine.winner > version.winner) {
                        aborted = true;
                    }
                }
                if aborted {
                    out.record(TxnRecord {
                        kind: TxnKind::ReadTxn,
                        node: Some(self.server),
                        invoke_ns: self.invoked_at,
                        complete_ns: now,
                        outcome: Outcome::Aborted,
                        ops: ops.into(),
                        note: Some("the session's own write is newer than the cut read"),
                        call: None,
                    });
                    // Fig. 8's abort is opaque to the user: retry the read transaction after a
                    // while (the write will have reached this cache), then give up on the workflow.
                    self.read_txn_attempts += 1;
                    if self.read_txn_attempts < self.rules.read_txn_attempts_max {
                        out.set_timer((), self.rules.read_txn_retry_ns);
                    } else {
                        out.abort_workflow("read transaction includes a key the session wrote");
                    }
                    return;
                }
                self.read_txn_attempts = 0;
                for (key, version) in &versions {
                    self.check_covers(*key, version);
                    merge_dep(&mut self.ctx.deps, *key, &version.winner);
                }
                self.record(now, TxnKind::ReadTxn, ops.into(), out);
            }
            Msg::WriteReply { key, vc, deps } => {
                let Op::Write { value, .. } = self.ops[self.next] else { unreachable!("write reply for a non-write") };
                self.ctx.local.entry(key).or_default().push(Version::write(value, vc, deps));
                self.record(now, TxnKind::Write, [OpRecord::write(key, value).with_version(vc.to_u64s())].into(), out);
            }
            Msg::ReadTccReply { key, version, floor } => {
                let Some(version) = version else {
                    if let Some((k, vc)) = floor {
                        raise_floor(&mut self.ctx.read_floor, k, vc);
                    }
                    self.abort_txn(now, "no cached version forms a cut with the read set", out);
                    return;
                };
                let op = OpRecord::read(key, version.value).with_version(version.vc.to_u64s());
                self.ctx.read_set.insert(key, version);
                self.txn_op(op, self.invoked_at);
            }
            Msg::ValidateReply { fracture } => {
                self.ctx.validate = false;
                if let Some((key, needed)) = fracture {
                    raise_floor(&mut self.ctx.read_floor, key, needed);
                    self.abort_txn(now, "the union of the parallel functions' read sets is not a cut", out);
                } else {
                    self.issue_next(now, out);
                }
                return;
            }
            Msg::CommitReply { vc } => {
                for op in &mut self.ctx.txn_ops {
                    if op.kind == causim_sim::history::OpKind::Write {
                        op.version = vc.to_u64s().into();
                    }
                }
                self.record_txn(now, Outcome::Ok, None, out);
                out.function_done();
                return;
            }
            other => unreachable!("a client does not handle {other:?}"),
        }
        self.next += 1;
        self.issue_next(now, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcc_rules() -> ClientRules {
        ClientRules { tcc: true, carry_local: true, read_txn_retry_ns: 1, read_txn_attempts_max: 1 }
    }

    /// Runs a TCC function whose operations need no server (writes, and reads of own writes).
    fn run(function: u32, ops: Vec<Op>, ctx: MeshContext) -> MeshContext {
        let mut c = Client::new(NodeId::fixed(0), function, tcc_rules(), ops, ctx, false, 0);
        let mut out = Outbox::new(false);
        c.on_start(0, &mut out);
        c.into_context()
    }

    #[test]
    fn a_join_keeps_the_operations_from_before_the_fan_out_once() {
        // f0 writes x; f1 and f2 both read it (identical records) and f2 writes y; f3 joins.
        let f0 = run(0, vec![Op::Write { key: 0, value: 1 }], MeshContext::default());
        let f1 = run(1, vec![Op::Read { key: 0 }], f0.clone());
        let f2 = run(2, vec![Op::Read { key: 0 }, Op::Write { key: 1, value: 1 }], f0);
        let mut joined = f1;
        joined.join(f2);
        assert_eq!(joined.buffer, vec![(0, 1), (1, 1)]);
        let ops: Vec<(OpKind, Key, Option<Value>)> = joined.txn_ops.iter().map(|o| (o.kind, o.key, o.value)).collect();
        assert_eq!(
            ops,
            vec![(OpKind::Write, 0, Some(1)), (OpKind::Read, 0, Some(1)), (OpKind::Read, 0, Some(1)), (OpKind::Write, 1, Some(1)),]
        );
        assert_eq!(joined.txn_op_ids, vec![(0, 0), (1, 0), (2, 0), (2, 1)]);
    }

    #[test]
    fn the_last_buffered_write_of_a_key_is_the_transactions_last_write_of_it() {
        // f1 overwrites f0's x; f2 does not touch x. The join must not put f0's x=1 back last.
        let f0 = run(0, vec![Op::Write { key: 0, value: 1 }], MeshContext::default());
        let f1 = run(1, vec![Op::Write { key: 0, value: 2 }], f0.clone());
        let f2 = run(2, vec![Op::Write { key: 1, value: 1 }], f0);
        let mut joined = f1;
        joined.join(f2);
        assert_eq!(joined.buffer, vec![(0, 1), (0, 2), (1, 1)]);
        let writes: Vec<(Key, Option<Value>)> = joined.txn_ops.iter().map(|o| (o.key, o.value)).collect();
        assert_eq!(writes, vec![(0, Some(1)), (0, Some(2)), (1, Some(1))]);
    }

    /// A join without operations of its own (the engine's dummy sink for a workflow with two
    /// leaves) that aborts at a fractured cut sent no commit: the writes it carried are in its
    /// aborted record only, not also reported as possibly applied (a value written twice).
    #[test]
    fn an_aborted_join_without_operations_has_nothing_in_flight() {
        let f0 = run(0, vec![Op::Write { key: 0, value: 1 }], MeshContext::default());
        let ctx = MeshContext { invalid: Some("the read sets of parallel functions do not form a cut"), ..f0.clone() };
        let mut sink = Client::new(NodeId::fixed(0), 1, tcc_rules(), vec![], ctx, true, 0);
        sink.on_start(0, &mut Outbox::new(false));
        assert_eq!(sink.in_flight_writes(), Some(vec![]));
        let mut committing = Client::new(NodeId::fixed(0), 1, tcc_rules(), vec![], f0, true, 0);
        committing.on_start(0, &mut Outbox::new(false));
        assert_eq!(committing.in_flight_writes(), Some(vec![(0, 1)]), "a sent commit may take effect");
    }

    #[test]
    fn concurrent_branches_writing_one_key_commit_the_write_the_history_lists_last() {
        // The history's rule (docs/history-format.md): of concurrent writes of a key, the one
        // listed last is the transaction's final write, and what the join function reads.
        let f0 = run(0, vec![], MeshContext::default());
        let f1 = run(1, vec![Op::Write { key: 0, value: 1 }], f0.clone());
        let f2 = run(2, vec![Op::Write { key: 0, value: 2 }], f0);
        for (first, second) in [(f1.clone(), f2.clone()), (f2, f1)] {
            let mut joined = first;
            joined.join(second);
            let listed_last = joined.txn_ops.iter().rev().find(|o| o.kind == OpKind::Write && o.key == 0).and_then(|o| o.value);
            let committed = joined.buffer.iter().rev().find(|(k, _)| *k == 0).map(|(_, v)| *v);
            assert_eq!(listed_last, committed);
            assert!(joined.txn_ops.iter().all(|o| o.function.is_some()), "every operation names its function");
            let f3 = run(3, vec![Op::Read { key: 0 }], joined);
            assert_eq!(f3.txn_ops.last().map(|o| (o.value, o.function)), Some((committed, Some(3))), "the join reads that write");
        }
    }

    #[test]
    fn every_join_lists_concurrent_writes_in_one_order() {
        // Two sources write x; f2 follows f1 and writes x; f3 follows both sources and reads
        // x; a sink joins f2 and f3. What f3 read must stay the last listed write of x among
        // the operations before it (f0's and f1's), at the sink's join too.
        let f0 = run(0, vec![Op::Write { key: 0, value: 1 }], MeshContext::default());
        let f1 = run(1, vec![Op::Write { key: 0, value: 2 }], MeshContext::default());
        let f2 = run(2, vec![Op::Write { key: 0, value: 3 }], f1.clone());
        let mut before_f3 = f0;
        before_f3.join(f1);
        let f3 = run(3, vec![Op::Read { key: 0 }], before_f3);
        let read = f3.txn_ops.last().and_then(|o| o.value);
        let mut sink = f2;
        sink.join(f3);
        let listed = sink.txn_ops.iter().rev().find(|o| o.kind == OpKind::Write && matches!(o.function, Some(0 | 1))).and_then(|o| o.value);
        assert_eq!(listed, read);
        let committed = sink.buffer.iter().rev().find(|(k, _)| *k == 0).map(|(_, v)| *v);
        let listed_last = sink.txn_ops.iter().rev().find(|o| o.kind == OpKind::Write).and_then(|o| o.value);
        assert_eq!(committed, listed_last);
    }
}
