//! BokiFlow transactions (§5.1.2, as in Beldi; digest §3.1), `params.transactions`: each
//! workflow is one transaction spanning its functions.
//!
//! - **Id and log.** The root function begins the transaction under an id derived from its
//!   instance id and step 0 (so re-executions and duplicate instances share it), passed to
//!   callees in the workflow context. Its transaction log is the records tagged with the id in
//!   one LogBook ([`TXN_BOOK`]).
//! - **Steps.** A read or write step first appends an intent record naming its key, then takes
//!   the key's lock (Fig. 7's lock, held by the transaction id, so every function and execution
//!   of the transaction holds it re-entrantly). Taking a lock is non-blocking: a lock held by
//!   another transaction aborts this one. A write is buffered: its intent record is the write.
//!   A read reads the database under the lock and logs the value in a record tagged with its
//!   step (and key), whose first record re-executions and duplicates use.
//! - **End.** The workflow's one sink (`Protocol::single_sink`) appends a decision record,
//!   commit unless a step aborted, and reads back the first one, which stands. The workflow
//!   whose execution appended it finishes the transaction: it replays the transaction log,
//!   takes the reads and writes the deciding execution logged before the decision, applies
//!   the writes (commit) with the decision record's seqnum as the version (the database's
//!   condition makes a re-executed commit's writes fail once they took effect), records the
//!   transaction's line, then releases every lock an intent record names. An abort applies
//!   nothing and releases the same locks.
//!
//! # History
//!
//! A step's line holds its log records only (the intent's append; a read's record and the read
//! back of its first record); a failed `tryLock` is a line noting the abort. A committed
//! transaction is one `workflow_txn` line: its reads (the first record of each read step)
//! before its writes, from the first decision's proposal to the end of its writes. An aborted
//! one is an `aborted` line with its reads and the writes it did not apply. Runs are checked at
//! `strict-serializable` (`Model::level_for`): locks are held from each step until every write
//! is applied, so each committed transaction takes effect at an instant inside its line (any
//! instant between its decision and its first release: its reads are still current and no one
//! sees its writes before the release), and real-time order holds, not only serializability. An
//! aborted line's write that anyone reads is an `AbortedRead` (well-formedness, at every level).
//!
//! # Choices where the paper is silent
//!
//! - **A lock that cannot be taken aborts the transaction, which is reported, not retried**:
//!   the workflow's remaining transaction steps do nothing and its sink records the abort.
//!   Beldi leaves a retry to the application; retrying under a fresh id would need a new
//!   transaction per attempt, which the id's derivation (shared by re-executions) excludes.
//! - **Intent before lock**: the intent record goes first so that whoever finishes the
//!   transaction finds every lock it may hold, even one taken by an execution killed before its
//!   step's record.
//! - **Commit at the sink**: the engine runs a workflow as a DAG without return edges, so the
//!   transaction's end is at its one sink (the engine adds an empty join to a workflow with
//!   several leaves), after every function; Beldi's `EndTxn` runs in the function that began it
//!   when its callees return.
//! - **Only the deciding workflow finishes**: a duplicate instance whose decision record was
//!   not first applies and releases nothing, so that no lock is released before the writes
//!   are applied. The content of the transaction is what the deciding execution logged before
//!   the decision (a duplicate drawn with other code, or a straggler's late steps, add
//!   nothing).
//! - **A lock taken after the decision is released by its taker**: a straggling duplicate, or a
//!   re-execution after the end, may take a lock the finishing workflow already released; each
//!   step, once it holds its lock, reads the first decision, and if the lock's chain record is
//!   later than the decision, it releases the lock and does nothing more (the finisher had
//!   applied every write before its first release, so releasing is safe). Without this, such
//!   locks stay held for ever and every later transaction on the key aborts.
//! - **Commit values**: as plain write steps do, a commit writes values of its own (unique per
//!   committing execution) so that the history tells a crashed commit's effects from its
//!   re-execution's; Beldi's deterministic functions would write the logged values. Of a
//!   re-executed commit, the line reports the writes that did not find the key already at the
//!   decision's version (an earlier execution applied those; killed, it reported them as
//!   `failed` lines through `in_flight_writes`). A write that finds a later version is reported
//!   too: it committed and was lost (only a broken isolation does that).
//! - **Reads see the database under the lock**, not the transaction's own buffered writes
//!   (Beldi reads its shadow copy first): a read after a write of the same key in one
//!   transaction sees the value before the transaction.
//! - No garbage collection of transaction logs, and no lock leases (a transaction whose
//!   deciding workflow gives up keeps its locks: liveness, not safety).

use super::super::logbook::{Reply, append_op};
use super::super::msg::{Answer, Dir, Msg};
use super::super::record::Body;
use super::{FlowClient, Kind, LockGoal, Step, Timer, first_op, mix, step_tag};
use causim_sim::history::{Key, OpRecord, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::Outbox;
use causim_sim::time::Time;
use causim_sim::workload::Op;
use std::collections::{BTreeMap, BTreeSet};

/// The LogBook of every transaction log.
pub(in crate::boki) const TXN_BOOK: Key = u64::MAX - 3;

/// A workflow's transaction, as the context carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Txn {
    pub id: u64,
    /// A step could not take a lock: the workflow's end decides abort.
    pub aborted: bool,
}

/// The tag of a transaction's log records.
pub(super) fn txn_tag(id: u64) -> u64 {
    mix(id, 1) | 1
}

/// The tag of a transaction's decision records.
fn decision_tag(id: u64) -> u64 {
    step_tag(id, u64::MAX, Kind::Txn)
}

/// Which execution (workflow id and attempt) appended a record, from its data (bits 16–55:
/// the bits above hold the record's kind, so workflow ids stay below 2^32 here).
fn execution(data: Value) -> u64 {
    (data >> 16) & ((1 << 40) - 1)
}

/// What a transaction's step or end is doing.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(in crate::boki) enum Phase {
    /// A step's intent record is being appended.
    Intent,
    /// The sink's decision record is being appended, then its first one read back.
    Decide,
    DecideFirst {
        own: (u64, (u64, u64)),
    },
    /// A step holds its lock since the chain record `acquired`: is the transaction decided?
    Decided {
        acquired: u64,
    },
    /// Replaying the transaction log, then applying its writes one at a time.
    Replay(Box<Replay>),
    Apply(Box<Replay>),
}

/// What the replay of a transaction log found.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(in crate::boki) struct Replay {
    /// The first decision: its seqnum (the commit's version), verdict, proposal time, execution.
    decision: u64,
    commit: bool,
    at: Time,
    decider: u64,
    /// The next seqnum to read.
    min: u64,
    /// The keys the deciding execution wrote, in log order.
    writes: Vec<Key>,
    /// The deciding execution's read steps (tag, key), and each read step's first value.
    read_steps: Vec<(u64, Key)>,
    firsts: BTreeMap<u64, Option<Value>>,
    /// Every key an intent names: the locks to release.
    release: BTreeSet<Key>,
    /// Writes applied so far, and those the line reports.
    applied: usize,
    reported: Vec<(Key, Value)>,
}

impl FlowClient {
    fn txn(&self) -> super::Txn {
        self.txn.expect("a transaction's function")
    }

    fn intent_data(&self) -> Value {
        self.data | 1 << 58 | self.next as u64
    }

    /// The value a commit (or abort) of this execution writes to its `rank`th key.
    fn commit_value(&self, rank: usize) -> Value {
        assert!(rank < 256, "at most 256 keys written per BokiFlow transaction");
        self.data | 1 << 56 | rank as u64
    }

    /// A transaction's read or write step: its intent record first.
    pub(super) fn txn_step(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let t = self.txn();
        assert!(self.workflow < 1 << 32, "a transaction's records name its workflow in 32 bits");
        if t.aborted {
            // The transaction aborted: its remaining steps do nothing.
            self.next = self.ops.len();
            self.step_no = self.ops.len() as u64;
            return self.issue_next(now, out);
        }
        let (key, write) = match self.ops[self.next] {
            Op::Write { key, .. } => (key, true),
            Op::Read { key } => (key, false),
            ref other => unreachable!("a BokiFlow function runs key reads and writes: {other:?}"),
        };
        self.step = Step::Txn(Phase::Intent);
        self.log.append(TXN_BOOK, vec![txn_tag(t.id)], self.intent_data(), Body::TxnIntent { key, write }, out);
    }

    /// The history operation of the step's intent append, if it has not been recorded.
    fn intent_op(&mut self) -> Vec<OpRecord> {
        let tag = txn_tag(self.txn().id);
        self.intent.take().map(|own| append_op(TXN_BOOK, vec![tag], self.intent_data(), Some(own))).into_iter().collect()
    }

    /// The step holds its key's lock (since chain record `acquired`): first, is the transaction
    /// decided already?
    pub(super) fn txn_check_decided(&mut self, acquired: u64, out: &mut Outbox<Msg, Timer>) {
        self.step = Step::Txn(Phase::Decided { acquired });
        self.log.read(TXN_BOOK, decision_tag(self.txn().id), Dir::Next, 0, out);
    }

    /// The step holds its key's lock: a write is buffered (done); a read reads the database.
    pub(super) fn txn_locked(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let ops = self.intent_op();
        match self.ops[self.next] {
            Op::Write { .. } => self.finish_step(now, TxnKind::Write, ops, Some("transaction write: buffered in the transaction log"), out),
            Op::Read { key } => {
                self.record_line(now, TxnKind::Read, ops, Some("transaction read: its key is locked"), out);
                self.step = Step::ReadDb;
                out.send(self.db, Msg::DbRead { key });
            }
            ref other => unreachable!("a BokiFlow function runs key reads and writes: {other:?}"),
        }
    }

    /// Another transaction holds the step's lock: this one aborts (no-wait).
    pub(super) fn txn_abort(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if let Some(t) = &mut self.txn {
            t.aborted = true;
        }
        out.trace("TxnAbort", || format!("{{\"txn\":{},\"key\":{}}}", self.txn().id, self.lock_key));
        let kind = if matches!(self.ops[self.next], Op::Read { .. }) { TxnKind::Read } else { TxnKind::Write };
        let ops = self.intent_op();
        let note = "tryLock failed: another transaction holds the key, so this one aborts (no-wait)";
        self.record_line(now, kind, ops, Some(note), out);
        self.txn_step(now, out);
    }

    /// The sink's end of the transaction: propose the decision.
    pub(super) fn txn_decide(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let t = self.txn();
        self.step = Step::Txn(Phase::Decide);
        let body = Body::TxnDecision { commit: !t.aborted, at: now };
        self.log.append(TXN_BOOK, vec![decision_tag(t.id)], self.data | 1 << 57 | 0xFE, body, out);
    }

    pub(super) fn on_txn_reply(&mut self, now: Time, phase: Phase, reply: Reply, out: &mut Outbox<Msg, Timer>) {
        let t = self.txn();
        match (phase, reply) {
            // A seal discarded the record: append it again (nothing depends on it yet).
            (Phase::Intent, Reply::Discarded) => self.txn_step(now, out),
            (Phase::Decide, Reply::Discarded) => self.txn_decide(now, out),
            (Phase::Intent, Reply::Appended { seqnum, pos }) => {
                self.intent = Some((seqnum, pos));
                if self.txn_skips_locks { self.txn_locked(now, out) } else { self.check_lock(LockGoal::Acquire(None), out) }
            }
            (Phase::Decide, Reply::Appended { seqnum, pos }) => {
                self.step = Step::Txn(Phase::DecideFirst { own: (seqnum, pos) });
                self.log.read(TXN_BOOK, decision_tag(t.id), Dir::Next, 0, out);
            }
            (Phase::DecideFirst { own }, Reply::Read(a)) => self.on_decision(now, own, a, out),
            (Phase::Decided { acquired }, Reply::Read(a)) => match a.seqnum {
                // Decided before this lock was taken (a straggling duplicate, or a re-execution
                // after the end): whoever finished the transaction had applied its writes and
                // released this key, so the step releases it again and does nothing more.
                Some(decision) if decision < acquired => {
                    let ops = self.intent_op();
                    let note = "the transaction was decided before this lock was taken: the step releases it and does nothing";
                    self.record_line(now, TxnKind::Write, ops, Some(note), out);
                    if let Some(t) = &mut self.txn {
                        t.aborted = true;
                    }
                    self.release = vec![self.lock_key];
                    self.txn_release_next(now, out);
                }
                _ => self.txn_locked(now, out),
            },
            (Phase::Replay(r), Reply::Read(a)) => self.on_replayed(now, r, a, out),
            (phase, reply) => unreachable!("{reply:?} in {phase:?}"),
        }
    }

    /// The first decision record stands; the workflow that appended it finishes the transaction.
    fn on_decision(&mut self, now: Time, own: (u64, (u64, u64)), a: Answer, out: &mut Outbox<Msg, Timer>) {
        let t = self.txn();
        let (Some(s1), Some(d1), Body::TxnDecision { commit, at }) = (a.seqnum, a.data, &a.body) else {
            unreachable!("the sink's own decision record is in the prefix: {a:?}")
        };
        let ops = vec![
            append_op(TXN_BOOK, vec![decision_tag(t.id)], self.data | 1 << 57 | 0xFE, Some(own)),
            first_op(TXN_BOOK, decision_tag(t.id), (s1, d1, (a.pos.term, a.pos.entries))),
        ];
        let decider = execution(d1);
        self.txn_ended = true;
        if decider >> 8 != self.workflow {
            self.record_line(now, TxnKind::Read, ops, Some("a duplicate instance decided the transaction and finishes it"), out);
            return self.finish(out);
        }
        let note = if *commit { "transaction decision: commit" } else { "transaction decision: abort" };
        self.record_line(now, TxnKind::Write, ops, Some(note), out);
        let r = Replay {
            decision: s1,
            commit: *commit,
            at: *at,
            decider,
            min: 0,
            writes: Vec::new(),
            read_steps: Vec::new(),
            firsts: BTreeMap::new(),
            release: BTreeSet::new(),
            applied: 0,
            reported: Vec::new(),
        };
        self.replay(Box::new(r), out);
    }

    fn replay(&mut self, r: Box<Replay>, out: &mut Outbox<Msg, Timer>) {
        let (tag, min) = (txn_tag(self.txn().id), r.min);
        self.step = Step::Txn(Phase::Replay(r));
        self.log.read(TXN_BOOK, tag, Dir::Next, min, out);
    }

    /// The transaction log's next record.
    fn on_replayed(&mut self, now: Time, mut r: Box<Replay>, a: Answer, out: &mut Outbox<Msg, Timer>) {
        let Some(s) = a.seqnum else { return self.txn_replayed(now, r, out) };
        let deciding = s < r.decision && a.data.is_some_and(|d| execution(d) == r.decider);
        match a.body {
            Body::TxnIntent { key, write } => {
                r.release.insert(key);
                if deciding && write && !r.writes.contains(&key) {
                    r.writes.push(key);
                }
            }
            Body::TxnRead { key, value, tag } => {
                r.release.insert(key);
                r.firsts.entry(tag).or_insert(value);
                if deciding {
                    r.read_steps.push((tag, key));
                }
            }
            ref other => unreachable!("a transaction log holds intents and reads: {other:?}"),
        }
        r.min = s + 1;
        self.replay(r, out);
    }

    /// The deciding execution's reads: each read step's first value, once per key and value.
    fn txn_reads(r: &Replay) -> Vec<OpRecord> {
        let mut reads: Vec<(Key, Option<Value>)> = Vec::new();
        for (tag, key) in &r.read_steps {
            let read = (*key, r.firsts[tag]);
            if !reads.contains(&read) {
                reads.push(read);
            }
        }
        reads.into_iter().map(|(k, v)| OpRecord::read(k, v)).collect()
    }

    fn txn_replayed(&mut self, now: Time, r: Box<Replay>, out: &mut Outbox<Msg, Timer>) {
        if r.commit {
            return self.txn_apply_next(now, r, out);
        }
        let mut ops = Self::txn_reads(&r);
        ops.extend(r.writes.iter().enumerate().map(|(i, &k)| OpRecord::write(k, self.commit_value(i))));
        self.txn_line(now, r.at, Outcome::Aborted, ops, "transaction aborted: its writes were never applied", out);
        self.release = r.release.into_iter().collect();
        self.txn_release_next(now, out);
    }

    /// The commit's next write, or its line once all are applied.
    fn txn_apply_next(&mut self, now: Time, r: Box<Replay>, out: &mut Outbox<Msg, Timer>) {
        if let Some(&key) = r.writes.get(r.applied) {
            let value = self.commit_value(r.applied);
            self.sent.push((key, value));
            out.send(self.db, Msg::DbCommit { key, value, version: r.decision });
            self.step = Step::Txn(Phase::Apply(r));
            return;
        }
        // A re-executed commit whose writes all took effect before adds no line (its earlier
        // execution's line, or `failed` lines, report them).
        if !r.reported.is_empty() || r.writes.is_empty() {
            let mut ops = Self::txn_reads(&r);
            ops.extend(r.reported.iter().map(|&(k, v)| OpRecord::write(k, v)));
            self.txn_line(now, r.at, Outcome::Ok, ops, "transaction committed: its writes are applied, its locks still held", out);
        }
        self.sent.clear();
        self.release = r.release.into_iter().collect();
        self.txn_release_next(now, out);
    }

    /// The database's answer to a commit write.
    pub(super) fn on_committed(&mut self, now: Time, ours: bool, out: &mut Outbox<Msg, Timer>) {
        let Step::Txn(Phase::Apply(mut r)) = std::mem::replace(&mut self.step, Step::Done) else {
            unreachable!("a commit write the function did not send")
        };
        if !ours {
            r.reported.push((r.writes[r.applied], self.commit_value(r.applied)));
        }
        r.applied += 1;
        self.txn_apply_next(now, r, out);
    }

    /// A transaction's line: from the first decision's proposal to now.
    fn txn_line(&mut self, now: Time, at: Time, outcome: Outcome, ops: Vec<OpRecord>, note: &'static str, out: &mut Outbox<Msg, Timer>) {
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.log.engine),
            invoke_ns: at,
            complete_ns: now,
            outcome,
            ops: ops.into(),
            note: Some(note),
            call: None,
        });
        self.invoked_at = now;
    }

    /// Releases the transaction's next lock; then the function is done (at the transaction's
    /// end) or skips its remaining steps (a step that found the transaction decided).
    pub(super) fn txn_release_next(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        match self.release.pop() {
            Some(key) if !self.txn_skips_locks => {
                self.lock_key = key;
                self.check_lock(LockGoal::Release, out);
            }
            _ if self.txn_ended => {
                self.release.clear();
                self.finish(out);
            }
            // A step that found the transaction decided: its remaining steps do nothing.
            _ => {
                self.release.clear();
                self.txn_step(now, out);
            }
        }
    }
}
