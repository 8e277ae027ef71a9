//! The LogBook library inside a function (§3, §4.4): it sends each call to the engine on its
//! machine and keeps the function's **metalog position**, which every read carries and every
//! completed call advances (to the position that ordered an append, or the version of the
//! index that answered a read). The position travels to the function's children in the
//! workflow context, so a child never reads a prefix older than its parent saw.

use super::Timer;
use super::ids::Pos;
use super::msg::{Answer, Dir, Msg};
use crate::metrics;
use causim_sim::history::{LogCall, LogRecord, OpRecord, Outcome, TxnKind, TxnRecord};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use causim_sim::workload::{LogOp, Op};

/// Table 5's read-latency ladder: a read that found a record, by where it was served — the
/// own engine's cache, the own engine's index with a storage read, or another engine's index.
fn observe_read_path(a: &Answer, engine: NodeId, took_ns: Time, out: &mut Outbox<Msg, Timer>) {
    if a.seqnum.is_none() || a.data.is_none() {
        return; // EMPTY (or lost): no record was read
    }
    let path = match (a.index == engine, a.cached) {
        (false, _) => metrics::LOG_READ_REMOTE_NS,
        (true, true) => metrics::LOG_READ_HIT_NS,
        (true, false) => metrics::LOG_READ_MISS_NS,
    };
    out.observe(path, took_ns);
}

/// What a workflow carries from function to function: the metalog position it has reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BokiContext {
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    pub(super) engine: NodeId,
    pub(super) ops: Vec<Op>,
    pub(super) next: usize,
    pub(super) ctx: BokiContext,
    pub(super) invoked_at: Time,
}

impl Client {
    pub(super) fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let Some(op) = self.ops.get(self.next) else {
            out.function_done();
            return;
        };
        self.invoked_at = now;
        let msg = match op {
            Op::Log(LogOp::Append { book, tags, data }) => {
                Msg::Append { book: *book, tags: tags.clone(), data: *data, body: super::record::Body::Plain }
            }
            Op::Log(LogOp::ReadNext { book, tag, min }) => {
                Msg::Read { book: *book, tag: *tag, dir: Dir::Next, bound: *min, pos: self.ctx.pos }
            }
            Op::Log(LogOp::ReadPrev { book, tag, max }) => {
                Msg::Read { book: *book, tag: *tag, dir: Dir::Prev, bound: *max, pos: self.ctx.pos }
            }
            Op::Log(LogOp::Trim { book, until }) => Msg::Trim { book: *book, until: *until },
            other => unreachable!("a shared log runs log calls only (the scenario loader checks): {other:?}"),
        };
        out.send(self.engine, msg);
    }

    pub(super) fn on_message(&mut self, now: Time, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        let mut outcome = Outcome::Ok;
        let (op, served_by) = match (&self.ops[self.next], msg) {
            (Op::Log(LogOp::Append { book, tags, data }), Msg::AppendFailed { .. }) => {
                // Discarded by a seal: definitely never ordered (the position does not move).
                outcome = Outcome::Aborted;
                let log = LogRecord { call: LogCall::Append, tags: tags.clone(), bound: 0, seqnum: None, pos: None };
                (OpRecord::log(*book, Some(*data), log), self.engine)
            }
            (Op::Log(LogOp::Append { book, tags, data }), Msg::AppendDone { seqnum, pos }) => {
                self.ctx.pos = self.ctx.pos.max(pos);
                let log = LogRecord {
                    call: LogCall::Append,
                    tags: tags.clone(),
                    bound: 0,
                    seqnum: Some(seqnum),
                    pos: Some((pos.term, pos.entries)),
                };
                (OpRecord::log(*book, Some(*data), log), self.engine)
            }
            (Op::Log(LogOp::Trim { book, until }), Msg::TrimDone { pos }) => {
                self.ctx.pos = self.ctx.pos.max(pos);
                let log = LogRecord { call: LogCall::Trim, tags: vec![], bound: *until, seqnum: None, pos: Some((pos.term, pos.entries)) };
                (OpRecord::log(*book, None, log), self.engine)
            }
            (Op::Log(LogOp::Trim { book, until }), Msg::TrimFailed { .. }) => {
                // Its term was sealed before the trim reached the metalog: it trimmed nothing.
                outcome = Outcome::Aborted;
                let log = LogRecord { call: LogCall::Trim, tags: vec![], bound: *until, seqnum: None, pos: None };
                (OpRecord::log(*book, None, log), self.engine)
            }
            (Op::Log(read), Msg::ReadDone(a)) => {
                self.ctx.pos = self.ctx.pos.max(a.pos);
                observe_read_path(&a, self.engine, now - self.invoked_at, out);
                let (book, tag, call, bound) = match *read {
                    LogOp::ReadNext { book, tag, min } => (book, tag, LogCall::ReadNext, min),
                    LogOp::ReadPrev { book, tag, max } => (book, tag, LogCall::ReadPrev, max),
                    LogOp::Append { .. } | LogOp::Trim { .. } => unreachable!("an append or a trim does not complete with ReadDone"),
                };
                let log = LogRecord { call, tags: vec![tag], bound, seqnum: a.seqnum, pos: Some((a.pos.term, a.pos.entries)) };
                (OpRecord::log(book, a.data, log), a.index)
            }
            (op, msg) => unreachable!("{msg:?} does not answer {op:?}"),
        };
        let kind = if op.log.as_ref().is_some_and(|l| l.call == LogCall::Append) { TxnKind::Write } else { TxnKind::Read };
        let lost = op.log.as_ref().is_some_and(|l| l.seqnum.is_some()) && op.value.is_none();
        out.record(TxnRecord {
            kind,
            node: Some(served_by),
            invoke_ns: self.invoked_at,
            complete_ns: now,
            outcome,
            ops: [op].into(),
            note: if outcome == Outcome::Aborted {
                Some("discarded: the seal of its term left it out of the final metalog")
            } else {
                lost.then_some("no live storage replica had the record the index named")
            },
            call: None,
        });
        self.next += 1;
        self.issue_next(now, out);
    }
}
