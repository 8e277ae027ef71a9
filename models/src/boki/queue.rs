//! BokiQueue (§5.3, digest §3.3): message queues as state machine replication on LogBooks.
//!
//! A logical queue is several **shards**, each its own LogBook, and each shard has one
//! consumer (vCorfu's composable SMR: consumers do not contend). Pushes and pops are both log
//! records, and what a pop returns is decided by replaying the shard's log before the pop's
//! own record, so every function that replays reaches the same decision and the shard is a
//! FIFO linearized by log order.
//!
//! A shard's state is one seqnum, `consumed`: the next pop takes the first push at or after
//! it. Applying a pop at seqnum `p` takes the first push in `[consumed, p)` and moves
//! `consumed` past it; if there is none the pop is empty and `consumed` becomes `p` (a push
//! ordered after the pop is not its to take).
//!
//! **Push** appends `{tags: [PUSH]}` with the message as the record's data. **Pop** appends a
//! pop record (`{tags: [POP]}`), then finds `consumed` before it: back through the earlier pop
//! records (`logReadPrev(POP)`) until one whose auxiliary data caches `consumed` after it, or
//! the first; then forward, deciding each of those pops with `logReadNext(PUSH, consumed)` and
//! caching its result with `logSetAuxData`, and finally its own. With the auxiliary data of
//! the previous pop at hand, a pop costs three calls.
//!
//! # Choices where the paper is silent
//!
//! - A workload's write of key `q` is a push of its value to shard `q`; a read of `q` is a pop
//!   of shard `q`. Producers choosing shards round robin is the workload's business (scripts
//!   name the shard), and so is giving each shard one consumer: replay keeps the queue correct
//!   with several consumers, only slower.
//! - A pop record's data is unique per shard: bit 62 set, then the workflow, attempt, function
//!   and operation that issued it (pushes carry the workload's values, which are small).
//! - A non-blocking pop: an empty shard returns EMPTY at once ([C]'s blocking pop, a 1 s
//!   `READ_NEXT_B`, is not modelled). No garbage collection (trim).
//!
//! # History
//!
//! A push is its append (`f: append`, tags `[1]`, the data pushed, the seqnum). A pop is one
//! line with two operations: the pop record's append (tags `[2]`) and a read of the shard's
//! key whose value is the message popped (`null`: EMPTY). The `queue` level judges them.

use super::Timer;
use super::client::BokiContext;
use super::logbook::{LogBook, Reply, append_op};
use super::msg::{Dir, Msg};
use super::record::{Aux, Body};
use super::{Boki, BokiNode};
use crate::Model;
use crate::catalogue::{Entry as CatalogueEntry, Mutant, Profile, SeriesStyle};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, OpRecord, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::Outbox;
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use proptest::prelude::*;

/// The tag of push records in a shard's LogBook.
pub const PUSH: u64 = 1;
/// The tag of pop records.
pub const POP: u64 = 2;

/// One function's queue calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QueueClient {
    log: LogBook,
    ops: Vec<Op>,
    next: usize,
    invoked_at: Time,
    /// Pop records' data: this function's unique prefix (see the module doc).
    pop_data: u64,
    /// Mutant `pop_ignores_earlier_pops`.
    ignore_earlier_pops: bool,
    step: Step,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Step {
    /// A push or the pop record's append is on its way.
    Appending,
    /// Reading back through earlier pops: the pop's record, its position, and the earlier pop
    /// records still to decide (most recent first).
    Back { pop: u64, pos: (u64, u64), undecided: Vec<u64> },
    /// Deciding pops forward from `consumed`: the one whose `logReadNext(PUSH)` is on its way
    /// is the last of `undecided`, or the pop itself when that is empty.
    Forward { pop: u64, pos: (u64, u64), undecided: Vec<u64>, consumed: u64 },
}

impl QueueClient {
    pub(super) fn new(start: &FunctionStart<'_, BokiContext>, ctx: BokiContext, ignore_earlier_pops: bool) -> QueueClient {
        assert!(start.workflow_id < 1 << 38 && start.attempt < 1 << 8 && start.function < 1 << 8, "pop data fields out of range");
        let pop_data = 1 << 62 | start.workflow_id << 24 | u64::from(start.attempt) << 16 | u64::from(start.function) << 8;
        QueueClient {
            log: LogBook { engine: start.colocated[0], ctx },
            ops: start.ops.clone(),
            next: 0,
            invoked_at: start.now,
            pop_data,
            ignore_earlier_pops,
            step: Step::Appending,
        }
    }

    pub(super) fn ctx(&self) -> BokiContext {
        self.log.ctx
    }

    fn shard(&self) -> Key {
        match self.ops[self.next] {
            Op::Write { key, .. } | Op::Read { key } => key,
            ref other => unreachable!("a queue runs key reads (pops) and writes (pushes) only: {other:?}"),
        }
    }

    fn this_pop_data(&self) -> Value {
        assert!(self.next < 256, "at most 256 operations per queue function");
        self.pop_data | self.next as u64
    }

    pub(super) fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let Some(op) = self.ops.get(self.next) else {
            out.function_done();
            return;
        };
        self.invoked_at = now;
        self.step = Step::Appending;
        match *op {
            Op::Write { key, value } => self.log.append(key, vec![PUSH], value, Body::Push, out),
            Op::Read { key } => self.log.append(key, vec![POP], self.this_pop_data(), Body::Pop, out),
            ref other => unreachable!("a queue runs key reads (pops) and writes (pushes) only: {other:?}"),
        }
    }

    pub(super) fn on_message(&mut self, now: Time, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        let shard = self.shard();
        let reply = self.log.on_reply(msg);
        match (std::mem::replace(&mut self.step, Step::Appending), reply) {
            (Step::Appending, Reply::Discarded) => {
                let (kind, data, tag) = match self.ops[self.next] {
                    Op::Write { value, .. } => (TxnKind::Write, value, PUSH),
                    _ => (TxnKind::Read, self.this_pop_data(), POP),
                };
                let op = append_op(shard, vec![tag], data, None);
                self.finish(
                    now,
                    kind,
                    vec![op],
                    Outcome::Aborted,
                    Some("discarded: the seal of its term left it out of the final metalog"),
                    out,
                );
            }
            (Step::Appending, Reply::Appended { seqnum, pos }) => match self.ops[self.next] {
                Op::Write { value, .. } => {
                    let op = append_op(shard, vec![PUSH], value, Some((seqnum, pos)));
                    self.finish(now, TxnKind::Write, vec![op], Outcome::Ok, None, out);
                }
                _ if self.ignore_earlier_pops || seqnum == 0 => {
                    self.forward(Step::Forward { pop: seqnum, pos, undecided: Vec::new(), consumed: 0 }, out);
                }
                _ => {
                    self.step = Step::Back { pop: seqnum, pos, undecided: Vec::new() };
                    self.log.read(shard, POP, Dir::Prev, seqnum - 1, out);
                }
            },
            (Step::Back { pop, pos, mut undecided }, Reply::Read(a)) => match (a.seqnum, a.aux) {
                (None, _) => self.forward(Step::Forward { pop, pos, undecided, consumed: 0 }, out),
                (Some(_), Some(Aux::Consumed(consumed))) => self.forward(Step::Forward { pop, pos, undecided, consumed }, out),
                (Some(earlier), _) => {
                    undecided.push(earlier);
                    if earlier == 0 {
                        self.forward(Step::Forward { pop, pos, undecided, consumed: 0 }, out);
                    } else {
                        self.step = Step::Back { pop, pos, undecided };
                        self.log.read(shard, POP, Dir::Prev, earlier - 1, out);
                    }
                }
            },
            (Step::Forward { pop, pos, mut undecided, .. }, Reply::Read(a)) => {
                let target = undecided.last().copied().unwrap_or(pop);
                // The first push at or after `consumed`; it is this pop's only if ordered before it.
                let taken = a.seqnum.filter(|&s| s < target);
                let after = taken.map_or(target, |s| s + 1);
                self.log.set_aux(target, Aux::Consumed(after), out);
                if undecided.pop().is_some() {
                    return self.forward(Step::Forward { pop, pos, undecided, consumed: after }, out);
                }
                let popped = if taken.is_some() { a.data } else { None };
                let ops = vec![append_op(shard, vec![POP], self.this_pop_data(), Some((pop, pos))), OpRecord::read(shard, popped)];
                let lost = taken.is_some() && a.data.is_none();
                self.finish(
                    now,
                    TxnKind::Read,
                    ops,
                    Outcome::Ok,
                    lost.then_some("no live storage replica had the push the index named"),
                    out,
                );
            }
            (step, reply) => unreachable!("{reply:?} in {step:?}"),
        }
    }

    /// Asks for the first push at or after `consumed`, for the next pop to decide.
    fn forward(&mut self, step: Step, out: &mut Outbox<Msg, Timer>) {
        let Step::Forward { consumed, .. } = step else { unreachable!("forward from a Forward step") };
        self.log.read(self.shard(), PUSH, Dir::Next, consumed, out);
        self.step = step;
    }

    fn finish(
        &mut self,
        now: Time,
        kind: TxnKind,
        ops: Vec<OpRecord>,
        outcome: Outcome,
        note: Option<&'static str>,
        out: &mut Outbox<Msg, Timer>,
    ) {
        out.record(TxnRecord {
            kind,
            node: Some(self.log.engine),
            invoke_ns: self.invoked_at,
            complete_ns: now,
            outcome,
            ops: ops.into(),
            note,
            call: None,
        });
        self.next += 1;
        self.issue_next(now, out);
    }
}

pub const MUTANTS: &[Mutant] = &[Mutant {
    name: "pop_ignores_earlier_pops",
    about: "a pop decides its result as if no pop preceded it (consumed = 0) instead of replaying the earlier pops, so \
            it returns the shard's first push again: duplicate delivery",
}];

/// BokiQueue on Boki's shared log.
#[derive(Clone, Debug)]
pub struct BokiQueue {
    log: Boki,
    ignore_earlier_pops: bool,
}

impl Model for BokiQueue {
    const ENTRY: CatalogueEntry = CatalogueEntry {
        name: "boki-queue",
        about: "BokiQueue: sharded FIFO queues on Boki's LogBooks, each pop decided by replaying the shard's log before it",
        level: Level::Queue,
        mutants: MUTANTS,
        profile: Profile::PLAIN,
        faults: super::library_faults(
            "a function node's crash can leave a pop record in the log whose function never learns it (the message is \
             consumed and lost to the application: at-most-once delivery, §5.3); Boki's own crashes are fuzzed under boki",
        ),
        series: &[SeriesStyle { label: "BokiQueue", colour: (0, 114, 178) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        Ok(BokiQueue { log: Boki::build(params, &[], topology)?, ignore_earlier_pops: mutants.contains(&"pop_ignores_earlier_pops") })
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        Boki::shared_fuzz_params()
    }
}

impl Protocol for BokiQueue {
    type Node = BokiNode;
    type Context = BokiContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<BokiNode>> {
        self.log.fixed_nodes()
    }

    fn new_context(&self) -> BokiContext {
        BokiContext::default()
    }

    fn spawn_function(&self, start: FunctionStart<'_, BokiContext>) -> BokiNode {
        let ctx = start.context;
        BokiNode::Queue(Box::new(QueueClient::new(&start, ctx, self.ignore_earlier_pops)))
    }

    fn finish_function(&self, node: BokiNode) -> BokiContext {
        node.library_context()
    }

    fn join_contexts(&self, contexts: Vec<BokiContext>) -> BokiContext {
        self.log.join_contexts(contexts)
    }
}
