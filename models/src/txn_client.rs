//! The shared part of a transactional client library, for protocols whose workflow is one
//! transaction: FaaSTCC and HydroCache today, BokiFlow and MuCache's wrapper next.
//!
//! A function instance runs its operations in program order. Writes are buffered in the
//! workflow's write set and sent only at the commit; consecutive reads form one *batch*, so the
//! protocol asks its cache once for every key the batch needs. A read the workflow can answer
//! itself never leaves the function: a key it wrote returns the buffered write (read your
//! writes), and a key this function read before returns the same value (repeatable reads).
//! Every operation is recorded for the history with its function, keyed by (time, function,
//! index), so parallel branches' operations interleave in time order when their contexts join;
//! the sink records the whole workflow as one `workflow_txn`, and a function that aborts records
//! the attempt. The engine adds the workflow's DAG as the line's function order (`fn_after`), so
//! the checker orders concurrent branches' operations partially; the join's pick among
//! concurrent writes of a key (the last in that order) is the write the history lists last.
//!
//! What this module owns:
//! - [`TxnContext`], the part of the workflow context every such protocol carries (the write
//!   set, the operations so far, when the workflow started), and its join at a fan-in, which
//!   keeps each key's last write;
//! - [`TxnClient`], one function's cursor over its operations and its own reads, and the
//!   committed or aborted [`TxnRecord`].
//!
//! What stays with each protocol: which version a read may return and how it is fetched
//! (FaaSTCC's snapshot interval, HydroCache's dependency map and pins), its messages, its
//! validation and commit (two-phase commit, one write batch to the database), and its metrics.
//! These helpers emit no effect but the start metric ([`TxnClient::on_start`]): they update
//! the context and build records, and the protocol sends, traces and records in its own
//! order.

use crate::metrics;
use causim_sim::history::{Key, OpKind, OpRecord, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use std::collections::BTreeMap;

/// Orders a workflow's operations: (time, function, index within the function).
pub type OpKey = (Time, u32, u32);

/// What a workflow carries from function to function for its transaction.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TxnContext {
    /// The buffered writes, committed by the sink.
    pub write_set: BTreeMap<Key, Value>,
    /// History bookkeeping (not protocol metadata): the operations so far.
    pub ops: BTreeMap<OpKey, OpRecord>,
    /// When the workflow's first function started (the transaction's invocation).
    pub started_ns: Option<Time>,
}

impl TxnContext {
    /// A fan-in: the union of the parents' write sets and operations, started at the earliest
    /// parent's start, each key set to its last write in operation order. Every branch carries
    /// a copy of the writes made before the fan-out, so taking the branches' write sets in turn
    /// could let a copy undo a sibling's later write.
    pub fn join(contexts: impl IntoIterator<Item = TxnContext>) -> TxnContext {
        let mut joined = TxnContext::default();
        for c in contexts {
            joined.write_set.extend(c.write_set);
            joined.ops.extend(c.ops);
            joined.started_ns = match (joined.started_ns, c.started_ns) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        for op in joined.ops.values() {
            if op.kind == OpKind::Write
                && let (Some(slot), Some(value)) = (joined.write_set.get_mut(&op.key), op.value)
            {
                *slot = value;
            }
        }
        joined
    }
}

/// One function instance's progress through its operations.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TxnClient {
    /// Where the function runs (its cache): the node its operations are recorded at.
    node: NodeId,
    function: u32,
    is_sink: bool,
    ops: Vec<Op>,
    next_op: usize,
    /// Operations recorded so far by this function (the last part of their [`OpKey`]).
    recorded: u32,
    /// This function's reads served by the protocol: repeated reads return the same value.
    reads: BTreeMap<Key, Option<Value>>,
    /// Each read is a call of its own, as the CausalMesh authors' clients make them, instead of
    /// one call for the reads up to the next write ([`TxnClient::one_read_per_call`]).
    one_read_per_call: bool,
}

impl TxnClient {
    pub fn new(node: NodeId, function: u32, is_sink: bool, ops: Vec<Op>) -> TxnClient {
        TxnClient { node, function, is_sink, ops, next_op: 0, recorded: 0, reads: BTreeMap::new(), one_read_per_call: false }
    }

    /// Every read (not read transaction) goes to the protocol alone, in program order.
    pub fn one_read_per_call(mut self, yes: bool) -> TxnClient {
        self.one_read_per_call = yes;
        self
    }

    pub fn is_sink(&self) -> bool {
        self.is_sink
    }

    /// At the function's start: the sink reports the context it received (`metadata_bytes`),
    /// and every function spends `ns_per_kb` per KiB of it deserialising the context before
    /// it runs. Returns that delay (0: run at once).
    pub fn on_start<M, T>(&self, metadata_bytes: u64, ns_per_kb: Time, out: &mut Outbox<M, T>) -> Time {
        if self.is_sink {
            out.observe(metrics::METADATA_BYTES, metadata_bytes);
        }
        ns_per_kb * metadata_bytes / 1024
    }

    /// Buffers and records the writes up to the next read, then returns the reads up to the
    /// next write as one batch (keys in program order, repeats kept); `None` when the function
    /// has run all its operations.
    pub fn next_batch(&mut self, ctx: &mut TxnContext, now: Time) -> Option<Vec<Key>> {
        while let Some(&Op::Write { key, value }) = self.ops.get(self.next_op) {
            ctx.write_set.insert(key, value);
            self.record(ctx, now, OpRecord::write(key, value));
            self.next_op += 1;
        }
        if self.next_op == self.ops.len() {
            return None;
        }
        let mut batch = Vec::new();
        while let Some(op) = self.ops.get(self.next_op) {
            match op {
                Op::Read { key } => batch.push(*key),
                Op::ReadTxn { keys } => batch.extend(keys.iter().copied()),
                Op::Write { .. } => break,
                Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
            }
            self.next_op += 1;
            if self.one_read_per_call {
                break;
            }
        }
        Some(batch)
    }

    /// Whether a read of `key` is served without the protocol (see [`TxnClient::read_locally`]).
    pub fn is_local(&self, ctx: &TxnContext, key: Key) -> bool {
        ctx.write_set.contains_key(&key) || self.reads.contains_key(&key)
    }

    /// The keys of `batch` the protocol must serve: each once, in batch order, without those
    /// served locally.
    pub fn to_fetch(&self, ctx: &TxnContext, batch: &[Key]) -> Vec<Key> {
        let mut keys: Vec<Key> = Vec::new();
        for &k in batch {
            if !self.is_local(ctx, k) && !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys
    }

    /// Serves a read of `key` from the write set or this function's earlier read of it, and
    /// records it; false (and nothing recorded) if the protocol must serve it.
    pub fn read_locally(&mut self, ctx: &mut TxnContext, now: Time, key: Key) -> bool {
        let value = match (ctx.write_set.get(&key), self.reads.get(&key)) {
            (Some(&v), _) => Some(v),
            (None, Some(&v)) => v,
            (None, None) => return false,
        };
        self.record(ctx, now, OpRecord::read(key, value));
        true
    }

    /// Records a read the protocol served, with the version it returned; this function's later
    /// reads of `key` return the same value.
    pub fn read_served(&mut self, ctx: &mut TxnContext, now: Time, key: Key, value: Option<Value>, version: impl IntoIterator<Item = u64>) {
        self.reads.insert(key, value);
        self.record(ctx, now, OpRecord::read(key, value).with_version(version));
    }

    fn record(&mut self, ctx: &mut TxnContext, now: Time, mut op: OpRecord) {
        op.node = Some(self.node);
        op.at_ns = Some(now);
        op.function = Some(self.function);
        ctx.ops.insert((now, self.function, self.recorded), op);
        self.recorded += 1;
    }

    /// The committed workflow: every operation in order, each write with the version
    /// `write_version` gives its key (`None` leaves it without one). The operations stay in
    /// the context, for the invariants checked after the handler.
    pub fn committed(&self, ctx: &TxnContext, now: Time, write_version: impl Fn(Key) -> Option<u64>) -> TxnRecord {
        let mut ops: Vec<OpRecord> = ctx.ops.values().cloned().collect();
        for op in ops.iter_mut().filter(|o| o.kind == OpKind::Write) {
            if let Some(v) = write_version(op.key) {
                op.version = [v].into_iter().collect();
            }
        }
        self.txn_record(ctx, now, Outcome::Ok, ops, None)
    }

    /// The aborted attempt: its operations so far, taken from the context, and the reason.
    pub fn aborted(&self, ctx: &mut TxnContext, now: Time, reason: &'static str) -> TxnRecord {
        let ops = std::mem::take(&mut ctx.ops).into_values().collect();
        self.txn_record(ctx, now, Outcome::Aborted, ops, Some(reason))
    }

    fn txn_record(&self, ctx: &TxnContext, now: Time, outcome: Outcome, ops: Vec<OpRecord>, note: Option<&'static str>) -> TxnRecord {
        TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.node),
            invoke_ns: ctx.started_ns.unwrap_or(now),
            complete_ns: now,
            outcome,
            ops: ops.into(),
            note,
            call: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fan_in_keeps_each_keys_last_write_whichever_branch_comes_first() {
        // The source wrote y=1 before the fan-out; branch 1 then wrote y=2; branch 2 still
        // carries its copy of y=1.
        const Y: Key = 7;
        let mut source = TxnContext { started_ns: Some(10), ..TxnContext::default() };
        source.write_set.insert(Y, 1);
        source.ops.insert((10, 0, 0), OpRecord::write(Y, 1));
        let mut branch1 = source.clone();
        branch1.write_set.insert(Y, 2);
        branch1.ops.insert((20, 1, 0), OpRecord::write(Y, 2));
        let branch2 = source;
        for order in [vec![branch1.clone(), branch2.clone()], vec![branch2, branch1]] {
            let joined = TxnContext::join(order);
            assert_eq!(joined.write_set.get(&Y), Some(&2));
            assert_eq!(joined.ops.len(), 2, "the source's write is listed once");
            assert_eq!(joined.started_ns, Some(10));
        }
    }

    #[test]
    fn concurrent_branches_writing_one_key_commit_the_write_the_history_lists_last() {
        // Branch 2 writes y at 15, branch 1 at 20: the history lists them in that order, and
        // the join keeps (and the sink commits) the one listed last, as the format says.
        const Y: Key = 7;
        let cache = NodeId::fixed(0);
        let source = TxnContext { started_ns: Some(10), ..TxnContext::default() };
        let branch = |f: u32, at: Time, value: Value| {
            let mut ctx = source.clone();
            let mut client = TxnClient::new(cache, f, false, vec![Op::Write { key: Y, value }]);
            assert_eq!(client.next_batch(&mut ctx, at), None);
            ctx
        };
        let joined = TxnContext::join([branch(1, 20, 2), branch(2, 15, 3)]);
        let sink = TxnClient::new(cache, 3, true, vec![]);
        let record = sink.committed(&joined, 30, |_| None);
        let listed: Vec<(Option<Value>, Option<u32>)> = record.ops.iter().map(|o| (o.value, o.function)).collect();
        assert_eq!(listed, vec![(Some(3), Some(2)), (Some(2), Some(1))]);
        assert_eq!(joined.write_set.get(&Y), Some(&2), "the last listed write commits");
    }

    #[test]
    fn reads_between_writes_form_batches_served_locally_where_the_workflow_can() {
        const X: Key = 1;
        const Y: Key = 2;
        let cache = NodeId::fixed(0);
        let ops = vec![
            Op::Write { key: X, value: 5 },
            Op::Read { key: X },
            Op::ReadTxn { keys: vec![Y, X, Y] },
            Op::Write { key: Y, value: 6 },
            Op::Read { key: Y },
        ];
        let mut ctx = TxnContext::default();
        let mut client = TxnClient::new(cache, 3, true, ops);
        let batch = client.next_batch(&mut ctx, 100).expect("reads follow the write");
        assert_eq!(batch, vec![X, Y, X, Y]);
        assert_eq!(client.to_fetch(&ctx, &batch), vec![Y], "x was written; y is asked once");
        assert!(client.read_locally(&mut ctx, 100, X));
        assert!(!client.read_locally(&mut ctx, 100, Y));
        client.read_served(&mut ctx, 100, Y, None, [4]);
        assert!(client.read_locally(&mut ctx, 100, X));
        assert!(client.read_locally(&mut ctx, 100, Y), "a repeated read returns the same value");
        assert_eq!(client.next_batch(&mut ctx, 200), Some(vec![Y]));
        assert!(client.to_fetch(&ctx, &[Y]).is_empty(), "the workflow's own write");
        assert!(client.read_locally(&mut ctx, 200, Y));
        assert_eq!(client.next_batch(&mut ctx, 200), None);
        let values: Vec<(OpKey, OpKind, Key, Option<Value>)> = ctx.ops.iter().map(|(&k, o)| (k, o.kind, o.key, o.value)).collect();
        assert_eq!(
            values,
            vec![
                ((100, 3, 0), OpKind::Write, X, Some(5)),
                ((100, 3, 1), OpKind::Read, X, Some(5)),
                ((100, 3, 2), OpKind::Read, Y, None),
                ((100, 3, 3), OpKind::Read, X, Some(5)),
                ((100, 3, 4), OpKind::Read, Y, None),
                ((200, 3, 5), OpKind::Write, Y, Some(6)),
                ((200, 3, 6), OpKind::Read, Y, Some(6)),
            ]
        );
        assert!(ctx.ops.values().all(|o| o.node == Some(cache) && o.function == Some(3)));
        let committed = client.committed(&ctx, 300, |k| (k == Y).then_some(9));
        assert_eq!(committed.ops[5].version.as_slice(), &[9], "y's write gets its version");
        assert!(committed.ops[0].version.is_empty(), "x's write is left without one");
        assert_eq!(committed.ops[2].version.as_slice(), &[4], "reads keep theirs");
        assert_eq!(ctx.ops.len(), 7, "a commit leaves the operations in the context");
        let aborted = client.aborted(&mut ctx, 300, "test");
        assert_eq!((aborted.outcome, aborted.note, aborted.ops.len()), (Outcome::Aborted, Some("test"), 7));
        assert!(ctx.ops.is_empty());
    }
}
