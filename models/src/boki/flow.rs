//! BokiFlow (§5.1, Figs. 6–7; digest §3.1): Beldi's fault-tolerant workflows with the
//! workflow log in LogBooks and the application's data in an external database.
//!
//! Every externally visible operation of a function instance is a **step**, numbered in
//! program order, whose effect is made exactly-once by the log:
//!
//! - **`write(key, value)`** (Fig. 6): append a step record tagged `hash(ID, STEP)`, read back
//!   the *first* record of that tag (`logReadNext` from 0), and write the database with the
//!   condition `Version < seqnum(first record)`, setting `Version` to it. A re-executed or
//!   duplicate instance finds the same first record, so its write fails the condition once
//!   the step took effect. Read-your-appends makes the read back see at least the instance's
//!   own record.
//! - **`read(key)`**: read the database, log the value in a step record, and use the value of
//!   the step's first record, so a re-execution sees what the first execution saw.
//! - **`invoke`** (Fig. 6, lines 14–28): a workflow edge is an invocation. Before a function
//!   hands over to its successors (its callees), it appends a pre-invoke record tagged
//!   `hash(ID, STEP, "pre")` with a fresh callee id and uses the first such record's id: a
//!   re-executed or duplicate caller invokes its callee under the same id (the callee's id is
//!   that id and its place in the workflow), whose steps then find their first records again.
//!   When the callee's steps are done it logs the post-invoke record, tagged
//!   `hash(ID, STEP, "post")` of its caller (and its place), holding its return value, and
//!   reads back the first one: that record's value is the return value the caller takes. A
//!   callee that starts by finding the post-invoke record logged (§5.1.3's shortcut: the
//!   caller checks it before invoking) takes the logged return value and runs none of its
//!   steps.
//!
//! **Locks** (Fig. 7, `params.locks`): each write step holds its key's lock. A lock is a
//! chain of records on the key's LogBook, each `{holder, prev}`: `checkLockState` reads them
//! in order, and a record extends the chain only if its `prev` is the chain's tail, so of
//! concurrent records with one `prev` the first in the log wins (Fig. 7b: a late record with
//! a stale `prev` is ignored). `tryLock` appends `{holder: ID, prev: tail}` if the tail is
//! free and then succeeds iff the tail is held by its ID (its own record, or a duplicate's or
//! an earlier execution's: the same logical instance holds it again, re-entrantly). `unlock` appends
//! `{holder: none, prev: tail}`. A step that finds the lock held by another instance tries
//! again 1 ms later (`tryLock` returns false; the paper leaves the retry to the application).
//! As in §5.4, each lock record's auxiliary data caches the chain's tail after it: a scan goes
//! back from the log's tail (`logReadPrev`) to the latest record with a cached tail, then
//! forward from there, caching the tail on each record it passes.
//!
//! **Re-execution** (Beldi's intent collector): a function that has not finished
//! `params.reexecution_timeout_ns` after it started aborts its workflow, which the engine runs
//! again (a new attempt of the same workflow, so the same instance id). A function node's crash
//! is survived that way, whatever step it interrupted: after the log append and before the
//! database write, or after the write and before the next step. **Duplicate instances**
//! (unreliable failure detection) are workflows that share an instance id:
//! `params.instances_per_flow` consecutive workflows run as instances of one flow.
//!
//! # History
//!
//! One line per step: its record's append (book: the database key, tag: the step's), the read
//! back of the step's first record, and the database's answer: a read of the value the key
//! held before the write and, if the write took effect, the write of the instance's value. A
//! read step shows the value of its first record. A successful `tryLock` and an `unlock` are
//! lines of their own: the lock record's append, whose tags name the holder and `prev`. An
//! invoke is a `pre-invoke` line (the pre record's append and first record, whose data is the
//! callee id) and a `post-invoke` line of each callee: its post record's append, tagged `5`,
//! the post tag and the callee's id, and the read back of the post tag's first record (the
//! return value the caller takes); a callee that found the post record logged shows that read
//! alone. The `exactly-once` level judges steps, invokes and locks; `lock-safety` the locks
//! alone.
//!
//! # Choices where the paper is silent
//!
//! - A step's records go to the LogBook named by its database key (data unique per book: a
//!   write step's data is the value it writes, as the workload assigns it; a read step's, bit
//!   62 and its function's identity). The workflow log of Beldi is the union of those books'
//!   records with the instance's tags.
//! - An instance writes its own value with the version of the step's first record (Beldi's
//!   functions are deterministic, so a re-execution's value equals the first; ours differ, so
//!   that the history tells effects apart).
//! - A step's tag also names its kind (write, read, invoke), so duplicate instances that a
//!   generator drew with different code do not take a read step's record for a write's.
//! - Only a new acquire (its own record the chain's tail) is a history line; a re-entrant one
//!   adds nothing to the chain.
//! - Fig. 7's locks have no leases: a lock an instance held when it was killed (a crash, a
//!   re-execution timeout, a sibling branch's abort) stays held until a re-execution of that
//!   instance passes it again. A re-execution's write step first looks for the step's record
//!   (Beldi replays a logged step's outcome, lock acquisitions included) and skips `tryLock`
//!   if it finds one, so a re-executed caller does not wait on a lock its killed callee holds
//!   (the callee runs only after the caller's steps). With short re-execution timeouts and fan-outs, waiting steps
//!   time out and strand more locks, and workflows can give up (liveness, not safety).
//! - The engine runs a workflow as a DAG, with no return edge: a caller has handed over before
//!   its callee runs. So the callee logs the post-invoke record on its caller's behalf (the
//!   paper's caller logs it when `rawInvoke` returns), and the §5.1.3 check for a logged post
//!   record runs where the engine places the callee, before any of its steps. A callee's return
//!   value is its post record's data, unique per execution (as write values are): the history
//!   then tells which execution's value the caller took. A join is the callee of its first
//!   predecessor that invoked.
//! - A callee that found its post record logged still runs its own pre-invoke step, so its
//!   successors (its callees) run under their logged ids; each of them then finds its own post
//!   record, if it completed, and runs no step.
//! - Transactions (§5.1.2, `params.transactions`) are in `flow/txn.rs`; garbage collection is
//!   not modelled.

use super::client::BokiContext;
use super::logbook::{LogBook, Reply, append_op};
use super::msg::{Answer, Dir, Msg};
use super::record::{Aux, Body};
use super::{Boki, BokiNode, Timer};
use crate::catalogue::{Entry as CatalogueEntry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, Support, metrics};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, LogCall, LogRecord, OpRecord, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use proptest::prelude::*;
use std::collections::BTreeMap;
pub use txn::Txn;

mod txn;

/// The LogBook of pre-invoke records.
const PRE_BOOK: Key = u64::MAX - 1;
/// The LogBook of post-invoke records.
const POST_BOOK: Key = u64::MAX - 2;
/// The first tag of every post-invoke record (what the `exactly-once` check finds them by).
const POST: u64 = 5;

/// SplitMix64's finaliser: a well-spread hash of two words, for instance ids and tags.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_add(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What a step does; part of its tag.
#[derive(Clone, Copy)]
enum Kind {
    Write = 0,
    Read = 1,
    Invoke = 2,
    Post = 3,
    Txn = 4,
}

/// The tag of step `step` of instance `id` (never 0, which means every record). Beldi's tag is
/// `hash(ID, STEP)`; ours also names the step's kind, so that duplicate instances a generator
/// drew with different code cannot take a read step's record for a write's.
fn step_tag(id: u64, step: u64, kind: Kind) -> u64 {
    mix(mix(id, step), kind as u64) | 1
}

/// The tag of the post-invoke record of invoke step `step` of instance `caller` for the callee
/// at `function` of the workflow: Beldi's `hash(ID, STEP, "post")`, with the callee's place, as
/// one invoke step of a fan-out hands over to several callees.
fn post_tag(caller: u64, step: u64, function: u32) -> u64 {
    mix(step_tag(caller, step, Kind::Post), u64::from(function)) | 1
}

/// What a workflow carries: its position, the callee id its last function's pre-invoke step
/// settled on, and that step (the caller's instance id and step number), whose post-invoke
/// record the callee logs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlowContext {
    pub log: BokiContext,
    pub callee: Option<u64>,
    pub invoker: Option<(u64, u64)>,
    /// The workflow's transaction (`params.transactions`), passed to callees.
    pub txn: Option<Txn>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Step {
    /// A re-execution's write step looks for the step's first record before `tryLock`.
    WriteLookup,
    /// A write step's record is being appended.
    WriteAppend,
    /// Reading back the step's first record.
    WriteFirst {
        own: (u64, (u64, u64)),
    },
    /// The conditional write is at the database.
    WriteDb {
        own: (u64, (u64, u64)),
        first: (u64, Value, (u64, u64)),
    },
    /// A read step's database read, then its record (holding the value read).
    ReadDb,
    ReadAppend {
        value: Option<Value>,
    },
    ReadFirst {
        own: (u64, (u64, u64)),
    },
    /// The pre-invoke record, then its first record.
    PreAppend,
    PreFirst {
        own: (u64, (u64, u64)),
    },
    /// A callee's start: has its invoke's post-invoke record been logged already?
    PostCheck,
    /// A callee's end: its post-invoke record (holding its return value), then the first one.
    PostAppend,
    PostFirst {
        own: (u64, (u64, u64)),
    },
    /// `checkLockState` of the step's key: back from the log's tail to a record that caches
    /// the chain's tail (`logReadPrev` at or below `max`)...
    LockBack {
        goal: LockGoal,
        max: u64,
    },
    /// ...then forward: the chain's tail so far, read forward from `min`.
    LockScan {
        goal: LockGoal,
        tail: Tail,
        min: u64,
    },
    /// A lock record (acquire or release) is being appended.
    LockAppend {
        goal: LockGoal,
        prev: Option<u64>,
    },
    /// The lock is held by another instance: `tryLock` again when the timer fires.
    LockWait,
    /// A transaction's step or its end (`txn.rs`).
    Txn(txn::Phase),
    Done,
}

/// What a lock scan is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum LockGoal {
    /// `tryLock`: before appending (`None`), or after appending its record.
    Acquire(Option<Acquired>),
    /// `unlock`, after the step's database write.
    Release,
}

/// A `tryLock`'s appended record: its seqnum, position and `prev`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Acquired {
    seqnum: u64,
    pos: (u64, u64),
    prev: Option<u64>,
}

/// The lock chain's tail: its record's seqnum and holder (`None` before any record: free).
type Tail = Option<(u64, Option<u64>)>;

/// How long a step waits before it tries a busy lock again.
const LOCK_RETRY_NS: Time = 1_000_000;

/// Every lock record of a key carries tag `LOCK` (what `checkLockState` reads); a release also
/// `RELEASE`; then its holder (`2^62 +` the holder's low bits) and `2^63 + prev` (the chain
/// record it extends; `2^64 − 1` for none), so histories show the chain.
const LOCK: u64 = 3;
const RELEASE: u64 = 4;
fn lock_tags(release: bool, holder: u64, prev: Option<u64>) -> Vec<u64> {
    let mut tags = vec![LOCK];
    if release {
        tags.push(RELEASE);
    }
    tags.push(1 << 62 | (holder & ((1 << 62) - 1)));
    tags.push(1 << 63 | prev.map_or((1 << 63) - 1, |p| p & ((1 << 63) - 1)));
    tags
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowClient {
    log: LogBook,
    db: NodeId,
    /// The instance id (Beldi's `ID`) and this function's next step.
    id: u64,
    step_no: u64,
    ops: Vec<Op>,
    next: usize,
    invoked_at: Time,
    is_sink: bool,
    /// Unique data for this function's read-step and pre-invoke records.
    data: u64,
    callee: Option<u64>,
    /// The invoke step that started this function (the caller's id and step), and whether its
    /// post-invoke record was found logged (the callee's return value is known: it does not run).
    invoker: Option<(u64, u64)>,
    function: u32,
    returned: bool,
    /// Mutant `invoke_ignores_logged_callee`.
    fresh_callee: bool,
    /// A re-execution (the workflow's attempt after the first).
    reexecuted: bool,
    reexecution_timeout_ns: Time,
    /// Each write step holds its key's lock (`params.locks`); mutant `lock_ignores_prev`.
    locks: bool,
    lock_ignores_prev: bool,
    /// The key of the lock being taken or released.
    lock_key: Key,
    /// The workflow's transaction, if any; mutant `txn_skips_locks`.
    txn: Option<Txn>,
    txn_skips_locks: bool,
    /// The engine's workflow id (which execution of a transaction decided it).
    workflow: u64,
    /// A transaction step's intent record, until its line is recorded.
    intent: Option<(u64, (u64, u64))>,
    /// The commit writes sent to the database and not yet reported in a line.
    sent: Vec<(Key, Value)>,
    /// The keys whose locks a transaction's end still has to release, and whether the
    /// function is at its transaction's end (else a step found the transaction decided).
    release: Vec<Key>,
    txn_ended: bool,
    step: Step,
}

impl FlowClient {
    fn new(start: FunctionStart<'_, FlowContext>, db: NodeId, flow: &BokiFlow) -> FlowClient {
        assert!(start.workflow_id < 1 << 38 && start.attempt < 1 << 8 && start.function < 1 << 8, "record data fields out of range");
        let data = 1 << 62 | start.workflow_id << 24 | u64::from(start.attempt) << 16 | u64::from(start.function) << 8;
        let id = match start.context.callee {
            // A callee's id is its caller's logged callee id and its place in the workflow.
            Some(callee) => mix(callee, u64::from(start.function)),
            None => mix(start.workflow_id / flow.instances_per_flow, u64::MAX),
        };
        // The root function begins the transaction: its id is derived from the root's id and
        // step 0, so re-executions and duplicate instances share it; callees get it passed.
        let txn = flow.transactions.then(|| start.context.txn.unwrap_or(Txn { id: step_tag(id, 0, Kind::Txn), aborted: false }));
        FlowClient {
            log: LogBook { engine: start.colocated[0], ctx: start.context.log },
            db,
            id,
            step_no: 0,
            ops: start.ops,
            next: 0,
            invoked_at: start.now,
            is_sink: start.is_sink,
            data,
            callee: None,
            invoker: start.context.invoker,
            function: start.function,
            returned: false,
            fresh_callee: flow.fresh_callee,
            reexecuted: start.attempt > 0,
            reexecution_timeout_ns: flow.reexecution_timeout_ns,
            locks: flow.locks,
            lock_ignores_prev: flow.lock_ignores_prev,
            lock_key: 0,
            txn,
            txn_skips_locks: flow.txn_skips_locks,
            workflow: start.workflow_id,
            intent: None,
            sent: Vec::new(),
            release: Vec::new(),
            txn_ended: false,
            step: Step::Done,
        }
    }

    fn into_context(self) -> FlowContext {
        let invoker = self.callee.map(|_| (self.id, self.step_no));
        FlowContext { log: self.log.ctx, callee: self.callee, invoker, txn: self.txn }
    }

    pub(super) fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if self.reexecution_timeout_ns > 0 {
            out.set_timer(Timer::Reexecute, self.reexecution_timeout_ns);
        }
        match self.invoker {
            // The implementation's shortcut (§5.1.3): if the invoke's post-invoke record exists,
            // the caller takes its return value and does not invoke the callee again.
            Some(_) if !self.fresh_callee => {
                self.invoked_at = now;
                self.step = Step::PostCheck;
                self.log.read(POST_BOOK, self.post_tag(), Dir::Next, 0, out);
            }
            _ => self.issue_next(now, out),
        }
    }

    /// The tag of this function's post-invoke record (it was invoked by `self.invoker`).
    fn post_tag(&self) -> u64 {
        let (caller, step) = self.invoker.expect("a callee");
        post_tag(caller, step, self.function)
    }

    /// Post-invoke records carry tag `POST`, the invoke's post tag, then the callee's id, so
    /// histories show which callee instance returned.
    fn post_tags(&self) -> Vec<u64> {
        vec![POST, self.post_tag(), self.id]
    }

    /// Beldi's intent collector: the function did not finish in time; run the workflow again.
    pub(super) fn on_timeout(&mut self, out: &mut Outbox<Msg, Timer>) {
        out.trace("Reexecute", || format!("{{\"id\":{},\"step\":{}}}", self.id, self.step_no));
        out.abort_workflow("re-executed: a function did not finish within params.reexecution_timeout_ns");
    }

    fn key(&self) -> Key {
        match self.ops[self.next] {
            Op::Write { key, .. } | Op::Read { key } => key,
            ref other => unreachable!("a BokiFlow function runs key reads and writes: {other:?}"),
        }
    }

    fn tag(&self) -> u64 {
        let kind = if matches!(self.ops[self.next], Op::Read { .. }) { Kind::Read } else { Kind::Write };
        match self.txn {
            // One transaction log holds every key's steps: the tag names the key too.
            Some(_) => mix(step_tag(self.id, self.step_no, kind), self.key()) | 1,
            None => step_tag(self.id, self.step_no, kind),
        }
    }

    /// The LogBook of the current step's records: its key's, or the transaction log's.
    fn step_book(&self) -> Key {
        if self.txn.is_some() { txn::TXN_BOOK } else { self.key() }
    }

    /// The current step's record tags: its own, and in a transaction the txn id's.
    fn step_tags(&self) -> Vec<u64> {
        match self.txn {
            Some(t) => vec![self.tag(), txn::txn_tag(t.id)],
            None => vec![self.tag()],
        }
    }

    /// Who holds the locks this function takes: its transaction, else its instance.
    fn holder(&self) -> u64 {
        self.txn.map_or(self.id, |t| t.id)
    }

    /// A read step's record, holding the value read.
    fn append_read(&mut self, value: Option<Value>, out: &mut Outbox<Msg, Timer>) {
        let body = match self.txn {
            Some(_) => Body::TxnRead { key: self.key(), value, tag: self.tag() },
            None => Body::Logged(value),
        };
        self.log.append(self.step_book(), self.step_tags(), self.read_data(), body, out);
    }

    fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.invoked_at = now;
        if let Some(&(Op::Write { key, .. } | Op::Read { key })) = self.ops.get(self.next) {
            self.lock_key = key;
        }
        match self.ops.get(self.next) {
            Some(_) if self.txn.is_some() => self.txn_step(now, out),
            None if self.txn.is_some() && self.is_sink && !self.returned => self.txn_decide(now, out),
            Some(&Op::Write { key, .. }) if self.locks && self.reexecuted => {
                self.step = Step::WriteLookup;
                self.log.read(key, self.tag(), Dir::Next, 0, out);
            }
            Some(&Op::Write { .. }) if self.locks => self.check_lock(LockGoal::Acquire(None), out),
            Some(&Op::Write { .. }) => self.write_step(out),
            Some(&Op::Read { key }) => {
                self.step = Step::ReadDb;
                out.send(self.db, Msg::DbRead { key });
            }
            Some(other) => unreachable!("a BokiFlow function runs key reads and writes: {other:?}"),
            None if self.is_sink => self.finish(out),
            None => {
                self.step = Step::PreAppend;
                self.log.append(PRE_BOOK, vec![self.pre_tag()], self.data | 0xFF, Body::Plain, out);
            }
        }
    }

    fn write_step(&mut self, out: &mut Outbox<Msg, Timer>) {
        let Op::Write { key, value } = self.ops[self.next] else { unreachable!("a write step") };
        self.step = Step::WriteAppend;
        self.log.append(key, vec![self.tag()], value, Body::Plain, out);
    }

    /// `checkLockState` of the current step's key: from the latest lock record whose auxiliary
    /// data caches the chain's tail (§5.4), or the chain's start.
    fn check_lock(&mut self, goal: LockGoal, out: &mut Outbox<Msg, Timer>) {
        self.back(goal, u64::MAX, out);
    }

    fn back(&mut self, goal: LockGoal, max: u64, out: &mut Outbox<Msg, Timer>) {
        self.step = Step::LockBack { goal, max };
        self.log.read(self.lock_key, LOCK, Dir::Prev, max, out);
    }

    /// The latest lock record at or below the backward scan's bound.
    fn on_lock_back(&mut self, goal: LockGoal, a: Answer, out: &mut Outbox<Msg, Timer>) {
        match (a.seqnum, a.aux) {
            (None, _) => self.scan(goal, None, 0, out),
            (Some(s), Some(Aux::LockTail(tail))) => self.scan(goal, tail, s + 1, out),
            (Some(0), _) => self.scan(goal, None, 0, out),
            (Some(s), _) => self.back(goal, s - 1, out),
        }
    }

    /// Reads the lock chain of the current step's key forward from `min`.
    fn scan(&mut self, goal: LockGoal, tail: Tail, min: u64, out: &mut Outbox<Msg, Timer>) {
        self.step = Step::LockScan { goal, tail, min };
        self.log.read(self.lock_key, LOCK, Dir::Next, min, out);
    }

    /// The next lock record of the scan: it extends the chain iff its `prev` is the tail
    /// (Fig. 7: of concurrent records with one `prev`, the first in the log counts).
    fn on_lock_record(&mut self, now: Time, goal: LockGoal, tail: Tail, a: Answer, out: &mut Outbox<Msg, Timer>) {
        let Some(s) = a.seqnum else { return self.on_lock_state(now, goal, tail, out) };
        let Body::Lock { holder, prev } = a.body else { unreachable!("lock tags are on lock records only: {a:?}") };
        let joins = self.lock_ignores_prev || prev == tail.map(|t| t.0);
        let tail = if joins { Some((s, holder)) } else { tail };
        if a.aux.is_none() {
            self.log.set_aux(s, Aux::LockTail(tail), out);
        }
        self.scan(goal, tail, s + 1, out);
    }

    /// `checkLockState` returned `tail`.
    fn on_lock_state(&mut self, now: Time, goal: LockGoal, tail: Tail, out: &mut Outbox<Msg, Timer>) {
        let key = self.lock_key;
        let holder = tail.and_then(|t| t.1);
        let me = self.holder();
        match goal {
            // Re-entrant: an earlier execution of this instance (or its transaction) holds it.
            LockGoal::Acquire(None) if holder == Some(me) => self.locked(now, tail, out),
            LockGoal::Acquire(None) if holder.is_none() => {
                let prev = tail.map(|t| t.0);
                self.step = Step::LockAppend { goal, prev };
                let body = Body::Lock { holder: Some(me), prev };
                self.log.append(key, lock_tags(false, me, prev), self.lock_data(0), body, out);
            }
            LockGoal::Acquire(Some(a)) if holder == Some(me) => {
                // Its own record is the tail: a new acquire. Another record of this instance's
                // (a duplicate's, a crashed execution's) is: it holds the lock already.
                if tail.map(|t| t.0) == Some(a.seqnum) {
                    let op = append_op(key, lock_tags(false, me, a.prev), self.lock_data(0), Some((a.seqnum, a.pos)));
                    self.record_line(now, TxnKind::Write, vec![op], Some("tryLock: acquired"), out);
                }
                self.locked(now, tail, out);
            }
            // No-wait: a transaction that cannot take a lock aborts (§5.1.2).
            LockGoal::Acquire(_) if self.txn.is_some() => self.txn_abort(now, out),
            // Held by another instance: try again later (aborting the workflow would kill its
            // other branches, and with them locks they hold).
            LockGoal::Acquire(_) => {
                self.step = Step::LockWait;
                out.set_timer(Timer::LockRetry, LOCK_RETRY_NS);
            }
            LockGoal::Release if holder == Some(me) => {
                let prev = tail.map(|t| t.0);
                self.step = Step::LockAppend { goal, prev };
                let body = Body::Lock { holder: None, prev };
                self.log.append(key, lock_tags(true, me, prev), self.lock_data(1), body, out);
            }
            // Not held (a duplicate instance released it already): nothing to release.
            LockGoal::Release => self.released(now, out),
        }
    }

    /// The lock is held: a write step writes; a transaction's step goes on.
    fn locked(&mut self, _now: Time, tail: Tail, out: &mut Outbox<Msg, Timer>) {
        match (self.txn, tail) {
            (Some(_), Some((acquired, _))) => self.txn_check_decided(acquired, out),
            (Some(_), None) => unreachable!("a held lock has a chain"),
            (None, _) => self.write_step(out),
        }
    }

    /// The lock is released (or was not held): the next step, or a transaction's next lock.
    fn released(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if self.txn.is_some() { self.txn_release_next(now, out) } else { self.advance(now, out) }
    }

    /// Data of this function's lock records for the current operation (`kind` 0 acquire, 1
    /// release): unique per book, apart from read-step records.
    fn lock_data(&self, kind: u64) -> Value {
        self.data | 1 << (60 - kind) | self.next as u64
    }

    /// The wait for a busy lock is over: `tryLock` again.
    pub(super) fn on_lock_retry(&mut self, out: &mut Outbox<Msg, Timer>) {
        assert_eq!(self.step, Step::LockWait, "a lock retry the function did not wait for");
        self.check_lock(LockGoal::Acquire(None), out);
    }

    /// The function's steps are done: a callee logs its post-invoke record (Fig. 6, line 26)
    /// and reads back the first one, whose return value is the one its caller takes.
    fn finish(&mut self, out: &mut Outbox<Msg, Timer>) {
        if self.invoker.is_none() || self.returned {
            return self.done(out);
        }
        self.step = Step::PostAppend;
        self.log.append(POST_BOOK, self.post_tags(), self.data | 0xFF, Body::Plain, out);
    }

    fn done(&mut self, out: &mut Outbox<Msg, Timer>) {
        self.step = Step::Done;
        out.cancel_timer(Timer::Reexecute);
        out.function_done();
    }

    pub(super) fn on_message(&mut self, now: Time, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match msg {
            Msg::DbWritten { applied, prev } => return self.on_written(now, applied, prev, out),
            Msg::DbCommitted { ours, .. } => return self.on_committed(now, ours, out),
            Msg::DbValue { value } => {
                assert_eq!(self.step, Step::ReadDb, "a database value the function did not ask for");
                self.step = Step::ReadAppend { value };
                return self.append_read(value, out);
            }
            _ => {}
        }
        match (std::mem::replace(&mut self.step, Step::Done), self.log.on_reply(msg)) {
            // A seal discarded the step's record: append it again (nothing took effect yet).
            (step @ (Step::WriteAppend | Step::ReadAppend { .. } | Step::PreAppend | Step::PostAppend), Reply::Discarded) => {
                self.step = step;
                self.append_again(out);
            }
            // The step has a record: an earlier execution of this instance appended it holding
            // the lock, and either holds it still (re-entrant) or released it after the
            // step's database write (which the version condition now rejects). Without the
            // lock, a re-executed caller cannot wait forever on a lock its killed callee holds.
            (Step::WriteLookup, Reply::Read(a)) if a.seqnum.is_some() => self.write_step(out),
            (Step::WriteLookup, Reply::Read(_)) => self.check_lock(LockGoal::Acquire(None), out),
            (Step::WriteAppend, Reply::Appended { seqnum, pos }) => {
                self.step = Step::WriteFirst { own: (seqnum, pos) };
                self.log.read(self.key(), self.tag(), Dir::Next, 0, out);
            }
            (Step::WriteFirst { own }, Reply::Read(a)) => {
                let (Some(s1), Some(v1)) = (a.seqnum, a.data) else { unreachable!("the step's own record is in the prefix: {a:?}") };
                let Op::Write { key, value } = self.ops[self.next] else { unreachable!("a write step") };
                self.step = Step::WriteDb { own, first: (s1, v1, (a.pos.term, a.pos.entries)) };
                out.send(self.db, Msg::DbWrite { key, value, version: s1 });
            }
            (Step::ReadAppend { .. }, Reply::Appended { seqnum, pos }) => {
                self.step = Step::ReadFirst { own: (seqnum, pos) };
                self.log.read(self.step_book(), self.tag(), Dir::Next, 0, out);
            }
            (Step::ReadFirst { own }, Reply::Read(a)) => {
                let (Some(s1), Some(v1), Body::Logged(read) | Body::TxnRead { value: read, .. }) = (a.seqnum, a.data, &a.body) else {
                    unreachable!("the step's first record is a logged read: {a:?}")
                };
                let book = self.step_book();
                out.observe(metrics::FLOW_READ_STEP_NS, now - self.invoked_at);
                let mut ops = vec![
                    append_op(book, self.step_tags(), self.read_data(), Some(own)),
                    first_op(book, self.tag(), (s1, v1, (a.pos.term, a.pos.entries))),
                ];
                // A transaction's reads are judged in its commit line, not here.
                if self.txn.is_none() {
                    ops.push(OpRecord::read(book, *read));
                }
                self.finish_step(now, TxnKind::Read, ops, None, out);
            }
            (Step::Txn(phase), reply) => self.on_txn_reply(now, phase, reply, out),
            (Step::PreAppend, Reply::Appended { seqnum, pos }) => {
                self.step = Step::PreFirst { own: (seqnum, pos) };
                self.log.read(PRE_BOOK, self.pre_tag(), Dir::Next, 0, out);
            }
            (Step::PostCheck, Reply::Read(a)) => match (a.seqnum, a.data) {
                (Some(s1), Some(v1)) => {
                    // The callee completed before: its logged return value stands, none of its
                    // steps runs again; it still hands its own callee id on to its successors.
                    let op = first_op(POST_BOOK, self.post_tag(), (s1, v1, (a.pos.term, a.pos.entries)));
                    let note = "the post-invoke record is logged: the caller takes its return value and does not invoke again";
                    self.record_line(now, TxnKind::Read, vec![op], Some(note), out);
                    self.returned = true;
                    self.next = self.ops.len();
                    self.step_no = self.ops.len() as u64;
                    self.issue_next(now, out);
                }
                _ => self.issue_next(now, out),
            },
            (Step::PostAppend, Reply::Appended { seqnum, pos }) if self.fresh_callee => {
                // The mutant takes its own return value, whatever was logged first.
                let op = append_op(POST_BOOK, self.post_tags(), self.data | 0xFF, Some((seqnum, pos)));
                self.record_line(now, TxnKind::Write, vec![op], Some("post-invoke"), out);
                self.done(out);
            }
            (Step::PostAppend, Reply::Appended { seqnum, pos }) => {
                self.step = Step::PostFirst { own: (seqnum, pos) };
                self.log.read(POST_BOOK, self.post_tag(), Dir::Next, 0, out);
            }
            (Step::PostFirst { own }, Reply::Read(a)) => {
                let (Some(s1), Some(v1)) = (a.seqnum, a.data) else { unreachable!("the callee's own post record is in the prefix: {a:?}") };
                let ops = vec![
                    append_op(POST_BOOK, self.post_tags(), self.data | 0xFF, Some(own)),
                    first_op(POST_BOOK, self.post_tag(), (s1, v1, (a.pos.term, a.pos.entries))),
                ];
                self.record_line(now, TxnKind::Write, ops, Some("post-invoke"), out);
                self.done(out);
            }
            (Step::LockBack { goal, .. }, Reply::Read(a)) => self.on_lock_back(goal, a, out),
            (Step::LockScan { goal, tail, .. }, Reply::Read(a)) => self.on_lock_record(now, goal, tail, a, out),
            (Step::LockAppend { goal, .. }, Reply::Discarded) => {
                // A seal discarded the lock record: decide again from the chain.
                let goal = if goal == LockGoal::Release { goal } else { LockGoal::Acquire(None) };
                self.check_lock(goal, out);
            }
            (Step::LockAppend { goal: LockGoal::Acquire(_), prev }, Reply::Appended { seqnum, pos }) => {
                self.check_lock(LockGoal::Acquire(Some(Acquired { seqnum, pos, prev })), out);
            }
            (Step::LockAppend { goal: LockGoal::Release, prev }, Reply::Appended { seqnum, pos }) => {
                let op = append_op(self.lock_key, lock_tags(true, self.holder(), prev), self.lock_data(1), Some((seqnum, pos)));
                self.record_line(now, TxnKind::Write, vec![op], Some("unlock"), out);
                self.released(now, out);
            }
            (Step::PreFirst { own }, Reply::Read(a)) => {
                out.observe(metrics::FLOW_INVOKE_STEP_NS, now - self.invoked_at);
                let (Some(s1), Some(v1)) = (a.seqnum, a.data) else {
                    unreachable!("the pre-invoke record's own record is in the prefix: {a:?}")
                };
                // The mutant invokes under its own record's id, not the first one's.
                let callee = if self.fresh_callee { self.data | 0xFF } else { v1 };
                self.callee = Some(callee);
                let ops = vec![
                    append_op(PRE_BOOK, vec![self.pre_tag()], self.data | 0xFF, Some(own)),
                    first_op(PRE_BOOK, self.pre_tag(), (s1, v1, (a.pos.term, a.pos.entries))),
                ];
                self.record_line(now, TxnKind::Write, ops, Some("pre-invoke"), out);
                self.finish(out);
            }
            (step, reply) => unreachable!("{reply:?} in {step:?}"),
        }
    }

    /// The database's answer to the step's conditional write.
    fn on_written(&mut self, now: Time, applied: bool, prev: Option<Value>, out: &mut Outbox<Msg, Timer>) {
        let Step::WriteDb { own, first } = std::mem::replace(&mut self.step, Step::Done) else {
            unreachable!("a database write the function did not issue")
        };
        let Op::Write { key, value } = self.ops[self.next] else { unreachable!("a write step") };
        let mut ops = vec![append_op(key, vec![self.tag()], value, Some(own)), first_op(key, self.tag(), first), OpRecord::read(key, prev)];
        if applied {
            ops.push(OpRecord::write(key, value));
        }
        if !self.locks {
            // With locks the step's clock restarted at its acquire.
            out.observe(metrics::FLOW_WRITE_STEP_NS, now - self.invoked_at);
        }
        let note = (!applied).then_some("the version condition rejected it: the key holds a version at or after the step's first record");
        self.record_line(now, TxnKind::Write, ops, note, out);
        if self.locks {
            self.check_lock(LockGoal::Release, out);
        } else {
            self.advance(now, out);
        }
    }

    fn pre_tag(&self) -> u64 {
        step_tag(self.id, self.step_no, Kind::Invoke)
    }

    fn append_again(&mut self, out: &mut Outbox<Msg, Timer>) {
        match (&self.step, self.ops.get(self.next)) {
            (Step::WriteAppend, Some(&Op::Write { key, value })) => self.log.append(key, vec![self.tag()], value, Body::Plain, out),
            (&Step::ReadAppend { value }, Some(&Op::Read { .. })) => self.append_read(value, out),
            (Step::PreAppend, None) => self.log.append(PRE_BOOK, vec![self.pre_tag()], self.data | 0xFF, Body::Plain, out),
            (Step::PostAppend, None) => self.log.append(POST_BOOK, self.post_tags(), self.data | 0xFF, Body::Plain, out),
            (step, op) => unreachable!("{op:?} in {step:?}"),
        }
    }

    fn read_data(&self) -> Value {
        assert!(self.next < 255, "at most 255 operations per BokiFlow function");
        self.data | self.next as u64
    }

    fn finish_step(&mut self, now: Time, kind: TxnKind, ops: Vec<OpRecord>, note: Option<&'static str>, out: &mut Outbox<Msg, Timer>) {
        self.record_line(now, kind, ops, note, out);
        self.advance(now, out);
    }

    fn record_line(&mut self, now: Time, kind: TxnKind, ops: Vec<OpRecord>, note: Option<&'static str>, out: &mut Outbox<Msg, Timer>) {
        out.record(TxnRecord {
            kind,
            node: Some(self.log.engine),
            invoke_ns: self.invoked_at,
            complete_ns: now,
            outcome: Outcome::Ok,
            ops: ops.into(),
            note,
            call: None,
        });
        self.invoked_at = now;
    }

    /// The step is done: the next operation.
    fn advance(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.next += 1;
        self.step_no += 1;
        self.issue_next(now, out);
    }
}

/// The history operation of reading back a step's first record.
fn first_op(book: Key, tag: u64, (seqnum, data, pos): (u64, Value, (u64, u64))) -> OpRecord {
    OpRecord::log(book, Some(data), LogRecord { call: LogCall::ReadNext, tags: vec![tag], bound: 0, seqnum: Some(seqnum), pos: Some(pos) })
}

/// The external database (DynamoDB in the paper): each key holds a value and the version of
/// the step that wrote it. It is a node of its own (`db`), so links to it carry their own
/// latency (the fuzzer's and the figures' storage delay).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Db {
    items: BTreeMap<Key, (Value, u64)>,
    /// Mutant `no_version_condition`: every write takes effect.
    unconditional: bool,
}

impl Db {
    pub(super) fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match msg {
            Msg::DbWrite { key, value, version } => {
                let prev = self.items.get(&key).copied();
                // Beldi's condition: the stored version is below the step's first record.
                let applied = self.unconditional || prev.is_none_or(|(_, v)| v < version);
                if applied {
                    self.items.insert(key, (value, version));
                }
                out.send(from, Msg::DbWritten { applied, prev: prev.map(|p| p.0) });
            }
            Msg::DbRead { key } => out.send(from, Msg::DbValue { value: self.items.get(&key).map(|p| p.0) }),
            Msg::DbCommit { key, value, version } => {
                let prev = self.items.get(&key).map(|p| p.1);
                let applied = self.unconditional || prev.is_none_or(|v| v < version);
                if applied {
                    self.items.insert(key, (value, version));
                }
                out.send(from, Msg::DbCommitted { applied, ours: prev == Some(version) });
            }
            other => unreachable!("{other:?} is not for the database"),
        }
    }
}

pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "no_version_condition",
        about: "the database write of a step has no condition on the stored version, so a re-executed or duplicate \
                instance's write takes effect again over the step's first effect (a double effect)",
    },
    Mutant {
        name: "invoke_ignores_logged_callee",
        about: "a re-executed or duplicate caller ignores its invoke's log records: it invokes the callee under the id of \
                its own pre-invoke record rather than the first one's, and the callee neither looks for the post-invoke \
                record nor reads back the first one, so the callee's steps run again as new steps (their effects happen \
                twice) and the caller takes a second return value",
    },
    Mutant {
        name: "txn_skips_locks",
        about: "a transaction's reads and writes take no lock (and its end releases none), so two concurrent workflows \
                read the same values and both commit writes over them: a lost update or write skew among committed \
                transactions",
    },
    Mutant {
        name: "lock_ignores_prev",
        about: "checkLockState takes every later lock record as the chain's tail, whatever its prev, so two instances \
                that append concurrently from one chain point can both see themselves as the holder",
    },
];

/// Survives function-node crashes by re-execution (its point), and Boki's crashes as the log does.
const FAULTS: FaultModel = FaultModel {
    crash: Support::Survives(
        "a crashed function node's functions time out and their workflows are re-executed (params.reexecution_timeout_ns, \
         Beldi's intent collector); each step's first record and the database's version condition keep effects \
         exactly-once; storage and sequencer crashes are sealed as for boki",
    ),
    restart: Support::Survives("a restarted function node's engine keeps its state; re-executions may run there again"),
    ..super::FAULTS
};

/// BokiFlow on Boki's shared log, with an external database.
#[derive(Clone, Debug)]
pub struct BokiFlow {
    log: Boki,
    reexecution_timeout_ns: Time,
    instances_per_flow: u64,
    unconditional: bool,
    locks: bool,
    lock_ignores_prev: bool,
    fresh_callee: bool,
    transactions: bool,
    txn_skips_locks: bool,
}

/// Whether `protocol.params` make every workflow a transaction.
fn transactional(params: &serde_json::Value) -> bool {
    params.get("transactions").and_then(serde_json::Value::as_bool).unwrap_or(false)
}

impl BokiFlow {
    fn db_id(&self) -> NodeId {
        NodeId::fixed(self.log.fixed_nodes().len())
    }
}

impl Model for BokiFlow {
    const ENTRY: CatalogueEntry = CatalogueEntry {
        name: "boki-flow",
        about: "BokiFlow: Beldi's exactly-once workflows on Boki's LogBooks, each database write conditional on the version \
                of its step's first log record; function-node crashes survived by re-execution",
        level: Level::ExactlyOnce,
        mutants: MUTANTS,
        profile: Profile {
            database: true,
            observations: &[metrics::FLOW_WRITE_STEP_NS, metrics::FLOW_READ_STEP_NS, metrics::FLOW_INVOKE_STEP_NS],
            ..Profile::PLAIN
        },
        faults: FAULTS,
        series: &[SeriesStyle { label: "BokiFlow", colour: (86, 180, 233) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        // BokiFlow's own fields; the rest are the log's.
        let mut log_params = if params.is_null() { serde_json::json!({}) } else { params.clone() };
        let mut take = |name: &str, default: u64| -> Result<u64, FieldError> {
            match log_params.as_object_mut().and_then(|o| o.remove(name)) {
                None => Ok(default),
                Some(v) => {
                    v.as_u64().ok_or_else(|| FieldError::new(format!("params.{name}"), format!("expected a non-negative integer, got {v}")))
                }
            }
        };
        let reexecution_timeout_ns = take("reexecution_timeout_ns", 0)?;
        let instances_per_flow = take("instances_per_flow", 1)?;
        let mut flag = |name: &str| match log_params.as_object_mut().and_then(|o| o.remove(name)) {
            None => Ok(false),
            Some(v) => v.as_bool().ok_or_else(|| FieldError::new(format!("params.{name}"), format!("expected true or false, got {v}"))),
        };
        let locks = flag("locks")?;
        let transactions = flag("transactions")?;
        if instances_per_flow == 0 {
            return Err(FieldError::new("params.instances_per_flow", "must be at least 1"));
        }
        Ok(BokiFlow {
            log: Boki::build(&log_params, &[], topology)?,
            reexecution_timeout_ns,
            instances_per_flow,
            unconditional: mutants.contains(&"no_version_condition"),
            locks,
            lock_ignores_prev: mutants.contains(&"lock_ignores_prev"),
            fresh_callee: mutants.contains(&"invoke_ignores_logged_callee"),
            transactions,
            txn_skips_locks: mutants.contains(&"txn_skips_locks"),
        })
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        // Transactions in a third of the cases, checked at `strict-serializable` (`level_for`),
        // with the same faults (function-node crashes among them).
        let transactions = prop::bool::weighted(1.0 / 3.0);
        (Boki::shared_fuzz_params(), prop::sample::select(vec![0u64, 20, 50]), 1u64..3, any::<bool>(), transactions)
            .prop_map(|(mut p, mut timeout_ms, instances, locks, transactions)| {
                // A transaction's end (decision, replay of its log, releases) outlasts 20 ms
                // when the log seals every few milliseconds: every attempt timed out.
                if transactions && timeout_ms == 20 {
                    timeout_ms = 50;
                }
                p["reexecution_timeout_ns"] = (timeout_ms * 1_000_000).into();
                p["instances_per_flow"] = instances.into();
                p["locks"] = locks.into();
                if transactions {
                    p["transactions"] = true.into();
                }
                p
            })
            .boxed()
    }

    /// Transactional runs promise serializability of the committed transactions (in real
    /// time: see `txn.rs`), judged from their commit lines.
    fn level_for(params: &serde_json::Value) -> Level {
        if transactional(params) { Level::StrictSerializable } else { Self::ENTRY.level }
    }
}

impl Protocol for BokiFlow {
    type Node = BokiNode;
    type Context = FlowContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<BokiNode>> {
        let mut nodes = self.log.fixed_nodes();
        let db = Db { items: BTreeMap::new(), unconditional: self.unconditional };
        nodes.push(FixedNode { name: "db".into(), machine: "db".into(), hosts_workers: false, node: BokiNode::Db(Box::new(db)) });
        nodes
    }

    fn new_context(&self) -> FlowContext {
        FlowContext::default()
    }

    fn spawn_function(&self, start: FunctionStart<'_, FlowContext>) -> BokiNode {
        BokiNode::Flow(Box::new(FlowClient::new(start, self.db_id(), self)))
    }

    fn finish_function(&self, node: BokiNode) -> FlowContext {
        match node {
            BokiNode::Flow(f) => f.into_context(),
            other => unreachable!("{other:?} is not a BokiFlow function"),
        }
    }

    fn join_contexts(&self, contexts: Vec<FlowContext>) -> FlowContext {
        let log = BokiContext { pos: contexts.iter().map(|c| c.log.pos).max().unwrap_or_default() };
        // A join is the callee of its first predecessor that invoked.
        let invoking = contexts.iter().find(|c| c.callee.is_some());
        // One transaction: aborted if any branch aborted it.
        let txn =
            contexts.iter().find_map(|c| c.txn).map(|t| Txn { aborted: contexts.iter().any(|c| c.txn.is_some_and(|t| t.aborted)), ..t });
        FlowContext { log, callee: invoking.and_then(|c| c.callee), invoker: invoking.and_then(|c| c.invoker), txn }
    }

    /// A transaction commits at the workflow's one sink, after every other function.
    fn single_sink(&self) -> bool {
        self.transactions
    }

    /// A transaction's function sends the database only its commit's writes (the sink's):
    /// nothing else of it can take effect.
    fn in_flight_writes(&self, node: &BokiNode) -> Option<Vec<(Key, Value)>> {
        match node {
            BokiNode::Flow(f) => f.txn.map(|_| f.sent.clone()),
            _ => None,
        }
    }
}
