//! The client library inside a function: the runtime intercepts each storage call and hands it
//! to the cache agent on the function's machine (§III-B); one call at a time, in program order.
//! Every call is recorded as a one-operation transaction with its invocation and completion
//! times, which is what the per-key linearizability check reads; a read's latency is also
//! observed under its class (local hit, remote hit, miss: `msg::ReadClass`).
//!
//! A call cut short by a failure (`CallFailed`), or left unanswered for `call_timeout_ns`
//! because the function's own machine crashed, aborts the workflow: the engine records an
//! unanswered write as indeterminate (it may have taken effect) and retries the workflow.

use super::msg::{Msg, ReadClass, Timer};
use crate::metrics;
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
}

impl Client {
    pub fn new(agent: NodeId, ops: Vec<Op>, now: Time, call_timeout_ns: Time) -> Client {
        Client { agent, call_timeout_ns, ops, next: 0, invoked_at: now }
    }

    /// Issues the next call, or reports the function done.
    pub fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
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
