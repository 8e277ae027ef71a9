//! FaaSTCC under Stateright: the `models/` cache, store-partition and client nodes, unchanged,
//! running the workflows of the TLA+ spec's configs (`specs/faastcc/MC_plans.tla`) on an ordered
//! network.
//!
//! # What is explored
//!
//! - **Caches** `S0 … S{n-1}` are FaaSTCC `FaastccNode::Cache`s, pre-warmed (every key's initial
//!   version, promise 0), without promise bumps: the spec's caches.
//! - **The store** is one `FaastccNode::Partition` (`P0`), as the spec's one partition: its clock
//!   moves only by proposals (Stateright has no time, so nodes see `now = 0`), and with no peer
//!   its stable time is its clock (below a prepared proposal), the spec's `clock`.
//! - **The partition's timers**: a push fires at any time, as Stateright's timers do, but only
//!   if it carries a version or a stable time above the last push's (otherwise it would only
//!   advance the push numbers, which matter to caches only after a lost push, and this network
//!   loses nothing). So a push reaches each cache as one delivery, like the spec's `Push(w)`,
//!   though it carries what was stable when the partition sent it, not when it arrives. The
//!   stabilisation round never fires: with one partition it sends nothing, and every use of
//!   the stable time (a read, a push) refreshes it first, so it could only add states that no
//!   node can tell apart (with it, `promise_off_by_one` on `MC_promise` had 901,483 unique states
//!   instead of 188,325).
//! - **Workflows** are one actor each, like `crate::causalmesh_tcc_model`: a DAG of functions
//!   with fixed operations; a function whose predecessors have finished may start on any
//!   worker (Stateright's `choose_random`, like the spec's free choice of worker per read). A
//!   spec branch of reads is a chain of functions reading one key each, so that every read picks
//!   its worker (a Rust function batches its consecutive reads at one cache); the writes go in
//!   the branch's last function, or in the join function after several branches. A function
//!   that reads nothing never talks to its cache, so it runs on `S0` (its choice of worker would
//!   only copy states). A function is the client library the simulator spawns
//!   (`Protocol::spawn_function`), with its predecessors' contexts merged by
//!   `Protocol::join_contexts`, exactly as the engine does. A workflow that aborts ends: the
//!   bounds have no retries, as the spec's.
//! - **Routing.** A workflow's functions share its actor, so the host tags each cache read's
//!   request number with the function that sent it (and strips the tag from the reply), as a
//!   worker's runtime routes a reply to its function instance; the store's answers to a
//!   workflow (two-phase commit) go to its sink.
//! - **A step** is a function's start with its request delivered and any reply delivered
//!   (`crate::actor::settle`), one message to a cache or the partition, or a partition's timer.
//!
//! # Properties (named like the TLA+ invariants)
//!
//! The store's versions are the committed workflows' writes, each at its commit timestamp (the
//! sink records its commit as it sends it; until the partition installs it, it holds the
//! proposal prepared, so no read or push can promise past it either way).
//!
//! | property | TLA+ | what |
//! |---|---|---|
//! | always "promises are kept" | `PromisesKept` | no committed version of a key lies in `(t, p]` of any cache's entry for it (`Cache::entry_view`) |
//! | always "an interval lies inside every validity" | `ReadsAtEveryPoint` | the interval of every finished function that reads (a spec branch's), when not empty, has each version its workflow read as its key's version at `lo` and at `min(hi, clock)` |
//! | always "transactions read one snapshot" | `TxnsReadOneSnapshot` | every committed workflow read, of each key, the version at one common timestamp |
//! | always "the history is TCC" | (implied by `TxnsReadOneSnapshot`) | the history checker at level `tcc` on the workflows' records, whenever no function is running |
//! | sometimes "a workflow aborts" | `NotTxnAborted` (violated) | witness |
//! | sometimes "a committed workflow reads a new version" | `NotReadNewVersion` (violated) | witness |
//!
//! `TypeOK` has no counterpart: its one protocol clause, `t ≤ p` of a cache entry, is an
//! assertion in the Rust cache (a state breaking it panics). Intervals are checked on finished
//! functions only; in these plans a function ends in the step that delivers its one read.

use crate::actor::{Hosted, forward_outbox, node_id};
use crate::workflow::{self, FunctionPlan, PlanOp};
use causim_checkers::Report;
use causim_models::Model as _;
use causim_models::faastcc::{Context, Faastcc, FaastccNode, Msg, Timer};
use causim_models::tcc_store::{StoreMsg, StoreTimer, Ts};
use causim_sim::history::{Key, OpKind, Outcome, TxnRecord, Value};
use causim_sim::node::{Effect, Node, Outbox};
use causim_sim::protocol::Protocol;
use stateright::actor::{Actor, ActorModel, ActorModelAction, ActorModelState, Id, Network, Out};
use stateright::{Model, Property};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub const PROMISES: &str = "promises are kept";
pub const POINTS: &str = "an interval lies inside every validity";
pub const ONE_SNAPSHOT: &str = "transactions read one snapshot";
pub const HISTORY: &str = "the history is TCC";
pub const ABORTS: &str = "a workflow aborts";
pub const NEW_VERSION: &str = "a committed workflow reads a new version";

/// The TLA+ invariant each `always` property stands for (the history checker's TCC is implied
/// by `TxnsReadOneSnapshot`, so it answers to it too).
pub const TLA_NAMES: [(&str, &str); 4] =
    [(PROMISES, "PromisesKept"), (POINTS, "ReadsAtEveryPoint"), (ONE_SNAPSHOT, "TxnsReadOneSnapshot"), (HISTORY, "TxnsReadOneSnapshot")];

pub type FaActorModel = ActorModel<FaActor, FaConfig, ()>;
pub type FaModelState = ActorModelState<FaActor, ()>;
/// A delivery, a partition's timer, or a workflow's choice of (function × worker), as an index.
pub type FaStep = ActorModelAction<Msg, Timer, usize>;

/// The keys of the spec's configs (all on the one partition).
pub const X: Key = 0;
pub const Y: Key = 1;
pub const Z: Key = 2;
const KEY_NAMES: [&str; 3] = ["x", "y", "z"];

/// A workflow (one transaction): its name and its functions, predecessors first; the last one
/// is the sink.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkflowPlan {
    pub name: &'static str,
    pub functions: Vec<FunctionPlan>,
}

impl WorkflowPlan {
    /// A spec workflow (`Plan[t]`, `WritesOf[t]`): each branch a chain of one-read functions,
    /// the writes after the reads (in the branch's last function, or in a join function after
    /// several branches).
    pub fn from_spec(name: &'static str, branches: &[&[Key]], writes: &[Key]) -> WorkflowPlan {
        let mut functions: Vec<FunctionPlan> = Vec::new();
        let mut tails = Vec::new();
        for branch in branches {
            let mut previous: Option<usize> = None;
            for &key in *branch {
                functions.push(FunctionPlan::new(&[PlanOp::Read(key)], previous.as_slice()));
                previous = Some(functions.len() - 1);
            }
            tails.extend(previous);
        }
        let writes: Vec<PlanOp> = writes.iter().map(|&k| PlanOp::Write(k)).collect();
        match (branches.len(), tails.last()) {
            (1, Some(&last)) => functions[last].ops.extend(writes),
            _ => functions.push(FunctionPlan { ops: writes, after: tails }),
        }
        WorkflowPlan { name, functions }
    }
}

#[derive(Clone, Debug)]
pub struct FaConfig {
    pub workers: usize,
    pub workflows: Vec<WorkflowPlan>,
    pub mutants: Vec<String>,
}

impl FaConfig {
    fn with(workflows: Vec<WorkflowPlan>) -> FaConfig {
        FaConfig { workers: 2, workflows, mutants: Vec::new() }
    }

    fn t1() -> WorkflowPlan {
        WorkflowPlan::from_spec("t1", &[&[]], &[X, Y])
    }

    fn t2_chain() -> WorkflowPlan {
        WorkflowPlan::from_spec("t2", &[&[Y, X]], &[])
    }

    /// `MC_chain.cfg`: t1 writes x and y; t2 reads y, then x (`ChainPlan`). Two workers.
    pub fn chain() -> FaConfig {
        FaConfig::with(vec![FaConfig::t1(), FaConfig::t2_chain()])
    }

    /// `MC_fanout.cfg`: t2 reads y and x in two branches that join (`FanOutPlan`).
    pub fn fanout() -> FaConfig {
        FaConfig::with(vec![FaConfig::t1(), WorkflowPlan::from_spec("t2", &[&[Y], &[X]], &[])])
    }

    /// `MC_promise.cfg`: t0 writes z, t1 as above, t2 the chain, t3 reads z, then x
    /// (`PromisePlan`).
    pub fn promise() -> FaConfig {
        FaConfig::with(vec![
            WorkflowPlan::from_spec("t0", &[&[]], &[Z]),
            FaConfig::t1(),
            FaConfig::t2_chain(),
            WorkflowPlan::from_spec("t3", &[&[Z, X]], &[]),
        ])
    }

    pub fn mutant(mut self, mutant: &str) -> FaConfig {
        self.mutants.push(mutant.to_string());
        self
    }

    /// The protocol as the simulator builds it from a scenario (mutant names are checked): one
    /// partition, pre-warmed caches, no promise bumps, no garbage collection (the defaults).
    pub fn protocol(&self) -> Result<Faastcc, String> {
        let params = serde_json::json!({"partitions": 1, "prewarm": true, "promise_bumps": false});
        let topology = serde_json::from_value(serde_json::json!({"servers": self.workers, "delay": {"dist": "constant", "ns": 1}}))
            .expect("a valid topology");
        let mutants = causim_models::check_mutants(&Faastcc::ENTRY, &self.mutants).map_err(|e| e.message)?;
        Faastcc::build(&params, &mutants, &topology).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    pub fn into_model(self) -> Result<FaModel, String> {
        let protocol = Arc::new(self.protocol()?);
        let mut actors: Vec<FaActor> = protocol.fixed_nodes().into_iter().map(|n| FaActor::Fixed(Box::new(n.node))).collect();
        assert_eq!(actors.len(), self.workers + 1, "the caches, then one partition");
        for (index, plan) in self.workflows.iter().enumerate() {
            actors.push(FaActor::Workflow { index, plan: plan.clone(), workers: self.workers, protocol: protocol.clone() });
        }
        Ok(FaModel { actors: ActorModel::new(self, ()).actors(actors).init_network(Network::new_ordered([])) })
    }

    /// The value workflow `index` writes (to any key: a workflow writes a key once).
    pub fn written_value(index: usize) -> Value {
        index as Value + 1
    }
}

// ---------------------------------------------------------------------------------------------
// Actors

#[derive(Clone, Debug)]
pub enum FaActor {
    /// A cache or the partition, from its initial state.
    Fixed(Box<FaastccNode>),
    Workflow {
        index: usize,
        plan: WorkflowPlan,
        workers: usize,
        protocol: Arc<Faastcc>,
    },
}

/// Where a workflow's function is.
pub type Function = workflow::Function<FaastccNode, Context>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Flow {
    pub functions: Vec<Function>,
    pub records: Vec<TxnRecord>,
    pub aborted: bool,
}

impl Flow {
    fn running(&self) -> bool {
        !self.aborted && self.functions.iter().any(|f| matches!(f, Function::Running(_)))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaState {
    /// A cache or the partition; `pushed` is the stable time of the partition's last push.
    Fixed {
        hosted: Box<Hosted<FaastccNode>>,
        pushed: Ts,
    },
    Workflow(Box<Flow>),
}

/// What firing `timer` on `node` would do, and whether the host lets it: not a stabilisation
/// round, nor a push carrying no version and no stable time above `pushed`, nor anything that
/// changes nothing (see the module docs). Returns the node after it, its effects and the
/// stable time it pushed.
fn fire(node: &FaastccNode, pushed: Ts, timer: &Timer) -> Option<(FaastccNode, Outbox<Msg, Timer>, Ts)> {
    if matches!(timer, Timer::Store(StoreTimer::Stabilize)) {
        return None;
    }
    let mut after = node.clone();
    let mut outbox = Outbox::new(false);
    after.on_timer(0, timer.clone(), &mut outbox);
    let push = outbox.effects.iter().find_map(|e| match e {
        Effect::Send { msg: Msg::Store(StoreMsg::Notify { lst, entries, .. }), .. } => Some((*lst, !entries.is_empty())),
        _ => None,
    });
    match push {
        Some((lst, carries)) if carries || lst > pushed => Some((after, outbox, lst)),
        Some(_) => None,
        None if after != *node => Some((after, outbox, pushed)),
        None => None,
    }
}

impl FaActor {
    fn plan(&self) -> &WorkflowPlan {
        match self {
            FaActor::Workflow { plan, .. } => plan,
            FaActor::Fixed(_) => unreachable!("workflows only"),
        }
    }

    /// Offers every (ready function × worker) start as a choice, or none.
    fn offer(&self, flow: &Flow, o: &mut Out<Self>) {
        let FaActor::Workflow { plan, workers, .. } = self else { unreachable!("workflows only") };
        let mut choices = Vec::new();
        if !flow.aborted {
            for i in workflow::ready(&plan.functions, &flow.functions) {
                let on = if plan.functions[i].reads() { *workers } else { 1 };
                choices.extend((0..on).map(|w| i * workers + w));
            }
        }
        o.choose_random("start", choices);
    }

    fn start(&self, id: Id, flow: &mut Flow, function: usize, worker: usize, o: &mut Out<Self>) {
        let FaActor::Workflow { index, plan, protocol, .. } = self else { unreachable!("workflows only") };
        let (hosted, outbox) = workflow::start(workflow::Start {
            protocol: &**protocol,
            actor: id,
            workflow: *index,
            plan: &plan.functions,
            functions: &flow.functions,
            function,
            machine: worker,
            value: FaConfig::written_value(*index),
        });
        flow.functions[function] = Function::Running(hosted);
        self.after_input(flow, function, outbox, o);
    }

    /// Carries out function `i`'s effects, its cache reads tagged with `i`; at its end, keeps
    /// its context.
    fn after_input(&self, flow: &mut Flow, i: usize, mut outbox: Outbox<Msg, Timer>, o: &mut Out<Self>) {
        let FaActor::Workflow { protocol, .. } = self else { unreachable!("workflows only") };
        let functions = self.plan().functions.len() as u64;
        for effect in &mut outbox.effects {
            if let Effect::Send { msg: Msg::CacheRead { req, .. }, .. } = effect {
                *req = *req * functions + i as u64;
            }
        }
        let Function::Running(hosted) = &mut flow.functions[i] else { unreachable!("a running function") };
        forward_outbox(hosted, outbox, o);
        flow.records.append(&mut hosted.records);
        if hosted.aborted.is_some() {
            flow.aborted = true;
        } else if hosted.done {
            let Function::Running(hosted) = std::mem::replace(&mut flow.functions[i], Function::Waiting) else { unreachable!() };
            flow.functions[i] = Function::Done(protocol.finish_function(hosted.node));
        }
        self.offer(flow, o);
    }
}

impl Actor for FaActor {
    type Msg = Msg;
    type Timer = Timer;
    type State = FaState;
    type Storage = ();
    type Random = usize;

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> FaState {
        match self {
            FaActor::Fixed(node) => {
                let mut hosted = Box::new(Hosted { node: (**node).clone(), records: Vec::new(), done: false, aborted: None });
                let mut outbox = Outbox::new(false);
                hosted.node.on_start(0, &mut outbox);
                forward_outbox(&mut hosted, outbox, o);
                FaState::Fixed { hosted, pushed: 0 }
            }
            FaActor::Workflow { plan, .. } => {
                let flow = Flow { functions: vec![Function::Waiting; plan.functions.len()], records: Vec::new(), aborted: false };
                self.offer(&flow, o);
                FaState::Workflow(Box::new(flow))
            }
        }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<FaState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        match (self, state.to_mut()) {
            (FaActor::Fixed(_), FaState::Fixed { hosted, .. }) => {
                let mut outbox = Outbox::new(false);
                hosted.node.on_message(0, node_id(src), msg, &mut outbox);
                forward_outbox(hosted, outbox, o);
            }
            (FaActor::Workflow { .. }, FaState::Workflow(flow)) => {
                let functions = self.plan().functions.len();
                // A cache's reply goes to the function its tag names, the store's to the sink.
                let (i, msg) = match msg {
                    Msg::CacheReply { req, answers, storage } => {
                        ((req % functions as u64) as usize, Msg::CacheReply { req: req / functions as u64, answers, storage })
                    }
                    msg => (functions - 1, msg),
                };
                let Function::Running(hosted) = &mut flow.functions[i] else { unreachable!("replies reach running functions") };
                let mut outbox = Outbox::new(false);
                hosted.node.on_message(0, node_id(src), msg, &mut outbox);
                self.after_input(flow, i, outbox, o);
            }
            (actor, _) => unreachable!("{actor:?} does not hold this state"),
        }
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<FaState>, timer: &Timer, o: &mut Out<Self>) {
        let FaState::Fixed { hosted, pushed } = &**state else { unreachable!("only the partition sets timers") };
        let Some((node, outbox, lst)) = fire(&hosted.node, *pushed, timer) else {
            // Leave the state alone and keep the timer: Stateright drops the step as a no-op.
            o.set_timer(timer.clone(), Duration::ZERO..Duration::from_nanos(1));
            return;
        };
        let FaState::Fixed { hosted, pushed } = state.to_mut() else { unreachable!() };
        hosted.node = node;
        *pushed = lst;
        forward_outbox(hosted, outbox, o);
    }

    fn on_random(&self, id: Id, state: &mut Cow<FaState>, random: &usize, o: &mut Out<Self>) {
        let FaActor::Workflow { workers, .. } = self else { unreachable!("only workflows choose") };
        let FaState::Workflow(flow) = state.to_mut() else { unreachable!("only workflows choose") };
        self.start(id, flow, random / workers, random % workers, o);
    }
}

// ---------------------------------------------------------------------------------------------
// Steps

/// The Stateright model: the actor model, stepped one function start, message or timer at a
/// time (see the module docs).
pub struct FaModel {
    pub actors: FaActorModel,
}

impl FaModel {
    pub fn cfg(&self) -> &FaConfig {
        &self.actors.cfg
    }

    /// Workflows come after the caches and the partition.
    fn is_workflow(&self, id: Id) -> bool {
        usize::from(id) > self.cfg().workers
    }
}

impl Model for FaModel {
    type State = FaModelState;
    type Action = FaStep;

    fn init_states(&self) -> Vec<FaModelState> {
        self.actors.init_states()
    }

    fn actions(&self, state: &FaModelState, actions: &mut Vec<FaStep>) {
        self.actors.actions(state, actions);
    }

    fn next_state(&self, state: &FaModelState, step: FaStep) -> Option<FaModelState> {
        crate::actor::settle(&self.actors, state, step, |id| self.is_workflow(id), None)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(PROMISES, |_: &FaModel, s: &FaModelState| promises_kept(s)),
            Property::always(POINTS, |m: &FaModel, s: &FaModelState| reads_at_every_point(m.cfg(), s)),
            Property::always(ONE_SNAPSHOT, |_: &FaModel, s: &FaModelState| txns_read_one_snapshot(s)),
            Property::always(HISTORY, |m: &FaModel, s: &FaModelState| flows(s).any(Flow::running) || check_history(m.cfg(), s).ok),
            Property::sometimes(ABORTS, |_: &FaModel, s: &FaModelState| flows(s).any(|f| f.aborted)),
            Property::sometimes(NEW_VERSION, |_: &FaModel, s: &FaModelState| committed(s).flat_map(reads).any(|(_, t, _)| t > 0)),
        ]
    }
}

// ---------------------------------------------------------------------------------------------
// What the properties read

fn caches(state: &FaModelState) -> impl Iterator<Item = &causim_models::faastcc::Cache> {
    state.actor_states.iter().filter_map(|s| match &**s {
        FaState::Fixed { hosted, .. } => match &hosted.node {
            FaastccNode::Cache(c) => Some(c),
            _ => None,
        },
        _ => None,
    })
}

fn flows(state: &FaModelState) -> impl Iterator<Item = &Flow> {
    state.actor_states.iter().filter_map(|s| match &**s {
        FaState::Workflow(f) => Some(&**f),
        _ => None,
    })
}

/// The committed workflows' records.
fn committed(state: &FaModelState) -> impl Iterator<Item = &TxnRecord> {
    flows(state).flat_map(|f| &f.records).filter(|r| r.outcome == Outcome::Ok)
}

/// A record's reads the protocol served: (key, version, promise).
fn reads(record: &TxnRecord) -> impl Iterator<Item = (Key, Ts, Ts)> + '_ {
    record.ops.iter().filter(|op| op.kind == OpKind::Read).filter_map(|op| match op.version.as_slice() {
        [t, p] => Some((op.key, *t, *p)),
        _ => None,
    })
}

/// The store's versions: each key's initial one (0) and every committed write's timestamp.
fn versions(state: &FaModelState) -> BTreeMap<Key, Vec<Ts>> {
    let mut versions: BTreeMap<Key, Vec<Ts>> = (0..KEY_NAMES.len() as Key).map(|k| (k, vec![0])).collect();
    for record in committed(state) {
        for op in record.ops.iter().filter(|op| op.kind == OpKind::Write) {
            versions.entry(op.key).or_default().push(op.version[0]);
        }
    }
    versions
}

/// The spec's `At(k, x).ts`: the newest version of `key` at or below `x`.
fn at(versions: &BTreeMap<Key, Vec<Ts>>, key: Key, x: Ts) -> Ts {
    versions[&key].iter().copied().filter(|&v| v <= x).max().expect("the initial version is at 0")
}

fn promises_kept(state: &FaModelState) -> bool {
    let versions = versions(state);
    caches(state).all(|c| {
        versions.iter().all(|(&key, vs)| match c.entry_view(key) {
            Some((t, p)) => !vs.iter().any(|&u| t < u && u <= p),
            None => true,
        })
    })
}

/// Per branch, as the spec states it: on the functions that read (a join function's merged
/// interval is no branch's).
fn reads_at_every_point(cfg: &FaConfig, state: &FaModelState) -> bool {
    let versions = versions(state);
    let clock = versions.values().flatten().copied().max().unwrap_or(0);
    let mut functions =
        flows(state).zip(&cfg.workflows).flat_map(|(f, plan)| f.functions.iter().enumerate().filter(|(i, _)| plan.functions[*i].reads()));
    functions.all(|(_, f)| {
        let Function::Done(ctx) = f else { return true };
        if ctx.lo > ctx.hi {
            return true;
        }
        ctx.txn.ops.values().filter(|op| op.kind == OpKind::Read).all(|op| match op.version.as_slice() {
            [t, _] => [ctx.lo, ctx.hi.min(clock)].iter().all(|&x| at(&versions, op.key, x) == *t),
            _ => true,
        })
    })
}

fn txns_read_one_snapshot(state: &FaModelState) -> bool {
    let versions = versions(state);
    // `At` changes only at a version's timestamp, so these points stand for every timestamp.
    let points: Vec<Ts> = versions.values().flatten().copied().collect();
    committed(state).all(|record| points.iter().any(|&x| reads(record).all(|(key, t, _)| at(&versions, key, x) == t)))
}

/// The workflows' records as a history, checked at level `tcc`.
pub fn check_history(cfg: &FaConfig, state: &FaModelState) -> Report {
    let mut node_names: Vec<String> = (0..cfg.workers).map(|i| format!("S{i}")).collect();
    node_names.push("P0".to_string());
    let key_names: Vec<String> = KEY_NAMES.iter().map(|k| k.to_string()).collect();
    let workflows = flows(state).zip(&cfg.workflows).map(|(f, plan)| (plan.name, f.records.as_slice()));
    workflow::check_tcc_history(Faastcc::ENTRY.name, &node_names, &key_names, workflows)
}
