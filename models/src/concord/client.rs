//! The client library inside a function: the runtime intercepts each storage call and hands it
//! to the cache agent on the function's machine (§III-B); one call at a time, in program order.
//! Every call is recorded as a one-operation transaction with its invocation and completion
//! times, which is what the per-key linearizability check reads; a read's latency is also
//! observed under its class (local hit, remote hit, miss: `msg::ReadClass`).
//!
//! With `params.transactions` the function's calls are one transaction (§IV-A; the agent's side
//! is `txn.rs`): it begins, reads and writes speculatively, asks to commit, and counts the
//! commit's write acknowledgments; it is recorded once, as one `txn` line, when they are all in
//! (its interval from its first attempt's start). When the agent squashes it, it waits for the
//! answer to its call in flight, backs off (`txn_backoff_ns`, doubled per squash up to 64 times,
//! staggered by the function's id so that two rivals do not retry in step), and runs again.
//!
//! A call cut short by a failure (`CallFailed`), or left unanswered for `call_timeout_ns`
//! because the function's own machine crashed, aborts the workflow: the engine records an
//! unanswered write as indeterminate (it may have taken effect) and retries the workflow.

use super::msg::{Msg, ReadClass, Timer};
use crate::metrics;
use causim_sim::history::Ops;
use causim_sim::history::{OpRecord, Outcome, TxnKind, TxnRecord};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use causim_sim::workload::Op;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    agent: NodeId,
    call_timeout_ns: Time,
    ops: Vec<Op>,
    next: usize,
    invoked_at: Time,
    /// The transaction, when the function's calls are one.
    txn: Option<Box<Txn>>,
}

/// A function's transaction: its attempt's operations and where it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Txn {
    /// The function's own id (its process ID at the agent), for the back-off stagger.
    id: NodeId,
    backoff_ns: Time,
    /// When the first attempt started.
    started: Time,
    squashes: u32,
    done: Ops,
    stage: Stage,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Stage {
    /// Calls in progress (one in flight).
    Running,
    /// Asked to commit; `Some(n)`: the lock is held and `n` write acknowledgments are due.
    Committing(Option<u32>),
    /// Squashed with a call in flight: its answer is awaited, then the back-off.
    Squashed,
    /// Backing off.
    Waiting,
}

impl Client {
    pub fn new(agent: NodeId, ops: Vec<Op>, now: Time, call_timeout_ns: Time) -> Client {
        Client { agent, call_timeout_ns, ops, next: 0, invoked_at: now, txn: None }
    }

    /// The same function running its calls as one transaction.
    pub fn transactional(mut self, id: NodeId, backoff_ns: Time) -> Client {
        self.txn = Some(Box::new(Txn { id, backoff_ns, started: self.invoked_at, squashes: 0, done: Ops::new(), stage: Stage::Running }));
        self
    }

    /// Starts the function: a transaction begins first.
    pub fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if self.txn.is_some() {
            out.send(self.agent, Msg::TxBegin { priority: 0 });
        }
        self.issue_next(now, out);
    }

    /// Issues the next call, or reports the function done.
    pub fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if let Some(txn) = &mut self.txn {
            let Some(op) = self.ops.get(self.next) else {
                txn.stage = Stage::Committing(None);
                out.send(self.agent, Msg::TxCommit);
                return;
            };
            let msg = match *op {
                Op::Read { key } => Msg::TxGet { key },
                Op::Write { key, value } => Msg::TxPut { key, value },
                Op::ReadTxn { .. } | Op::Log(_) => unreachable!("refused when the scenario is loaded"),
            };
            self.invoked_at = now;
            out.send(self.agent, msg);
            return;
        }
        let Some(op) = self.ops.get(self.next) else {
            out.function_done();
            return;
        };
        self.invoked_at = now;
        let msg = match *op {
            Op::Read { key } => Msg::Get { key },
            Op::Write { key, value } => Msg::Put { key, value },
            // Refused when the scenario is loaded (`Concord::check_run`).
            Op::ReadTxn { .. } => unreachable!("Concord has no read transactions"),
            Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
        };
        out.send(self.agent, msg);
        out.set_timer(Timer::CallTimeout, self.call_timeout_ns);
    }

    /// No answer: the function's machine crashed with it.
    pub fn on_timeout(&mut self, out: &mut Outbox<Msg, Timer>) {
        out.abort_workflow("no answer from the machine's cache agent (it crashed)");
    }

    pub fn on_message(&mut self, now: Time, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        if self.txn.is_some() {
            self.on_txn_message(now, msg, out);
            return;
        }
        out.cancel_timer(Timer::CallTimeout);
        let (kind, op) = match (msg, &self.ops[self.next]) {
            (Msg::CallFailed { .. }, _) => {
                out.abort_workflow("a failure cut the call short (its outcome is unknown)");
                return;
            }
            (Msg::GetReply { key, value, class }, Op::Read { key: k }) if key == *k => {
                let metric = match class {
                    ReadClass::Local => metrics::READ_LOCAL_NS,
                    ReadClass::RemoteHit => metrics::READ_REMOTE_HIT_NS,
                    ReadClass::Miss => metrics::READ_MISS_NS,
                };
                out.observe(metric, now - self.invoked_at);
                (TxnKind::Read, OpRecord::read(key, value))
            }
            (Msg::PutReply { key }, &Op::Write { key: k, value }) if key == k => (TxnKind::Write, OpRecord::write(key, value)),
            (msg, op) => unreachable!("a function waiting for {op:?} got {msg:?}"),
        };
        out.record(TxnRecord {
            kind,
            node: Some(self.agent),
            invoke_ns: self.invoked_at,
            complete_ns: now,
            outcome: Outcome::Ok,
            ops: [op].into(),
            note: None,
            call: None,
        });
        self.next += 1;
        self.issue_next(now, out);
    }
}

impl Client {
    fn on_txn_message(&mut self, now: Time, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        let txn = self.txn.as_mut().expect("a transactional function");
        match (txn.stage, msg) {
            (Stage::Running | Stage::Committing(None), Msg::TxSquashed) => {
                if txn.stage == Stage::Running {
                    // Its call in flight is answered still; the back-off starts then.
                    txn.stage = Stage::Squashed;
                } else {
                    self.back_off(out);
                }
            }
            (Stage::Squashed, Msg::GetReply { .. } | Msg::PutReply { .. }) => self.back_off(out),
            (Stage::Running, Msg::GetReply { key, value, .. }) => {
                txn.done.push(OpRecord::read(key, value));
                self.next += 1;
                self.issue_next(now, out);
            }
            (Stage::Running, Msg::PutReply { key }) => {
                let Op::Write { value, .. } = self.ops[self.next] else { unreachable!("a write's answer to {:?}", self.ops[self.next]) };
                txn.done.push(OpRecord::write(key, value));
                self.next += 1;
                self.issue_next(now, out);
            }
            (Stage::Committing(None), Msg::TxLocked { writes }) => {
                txn.stage = Stage::Committing(Some(writes));
                if writes == 0 {
                    self.committed(now, out);
                }
            }
            (Stage::Committing(Some(n)), Msg::PutReply { .. }) => {
                txn.stage = Stage::Committing(Some(n - 1));
                if n == 1 {
                    self.committed(now, out);
                }
            }
            (stage, msg) => unreachable!("a transaction in stage {stage:?} got {msg:?}"),
        }
    }

    fn back_off(&mut self, out: &mut Outbox<Msg, Timer>) {
        let txn = self.txn.as_mut().expect("a transactional function");
        txn.squashes += 1;
        txn.stage = Stage::Waiting;
        let base = txn.backoff_ns << (txn.squashes - 1).min(6);
        let stagger = txn.backoff_ns / 8 * (txn.id.0 % 8);
        out.set_timer(Timer::Backoff, base + stagger);
    }

    /// The back-off is over: the transaction runs again from its first call.
    pub fn on_backoff(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let txn = self.txn.as_mut().expect("a transactional function");
        txn.stage = Stage::Running;
        txn.done.clear();
        self.next = 0;
        out.send(self.agent, Msg::TxBegin { priority: txn.squashes });
        self.issue_next(now, out);
    }

    fn committed(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let txn = self.txn.as_mut().expect("a transactional function");
        out.send(self.agent, Msg::TxRelease);
        if txn.squashes > 0 {
            out.observe(metrics::TXN_SQUASHES, u64::from(txn.squashes));
        }
        out.record(TxnRecord {
            kind: TxnKind::Txn,
            node: Some(self.agent),
            invoke_ns: txn.started,
            complete_ns: now,
            outcome: Outcome::Ok,
            ops: std::mem::take(&mut txn.done),
            note: None,
            call: None,
        });
        out.function_done();
    }
}
