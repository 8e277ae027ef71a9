//! CausalMesh-TCC under Stateright: the `models/` server and client nodes, unchanged, running
//! the workflows of the TLA+ spec's configs (`specs/causalmesh_tcc/MC_plans.tla`) on an
//! ordered network.
//!
//! # What is explored
//!
//! - **Servers** `S0 … S{n-1}` are CausalMesh-TCC `MeshNode::Server`s (one-round chains,
//!   asynchronous database flushes: the host drops their sends to the database, which a
//!   placeholder actor stands for, as in [`crate::causalmesh_model`]).
//! - **Workflows** are one actor each. A workflow is a DAG of functions with fixed operations;
//!   any function whose predecessors have finished may start, on any server (Stateright's
//!   `choose_random`, like the spec's free choice of server). A function is the client library
//!   the simulator spawns (`Protocol::spawn_function`), with its predecessors' contexts merged
//!   by `Protocol::join_contexts`, exactly as the engine does. A workflow that aborts ends: the
//!   bounds have no retries, as the spec's.
//! - **A step** is a function's start with its request delivered and the reply delivered (the
//!   client blocks, so nothing else can observe them in flight: see
//!   [`crate::causalmesh_model::MeshModel::settle`]), or one message between servers.
//!
//! # Properties (named like the TLA+ invariants)
//!
//! | property | TLA+ | what |
//! |---|---|---|
//! | always "the C-cache is a causal cut" | `CCacheIsCausalCut` | every server's cut check (Definition 1) |
//! | always "a join accepted a cut" | `AcceptedJoinsAreCuts` | the join a server just accepted read a cut (`Server::check_accepted_join`) |
//! | always "transactions read causal snapshots" | `TxnsReadCausalSnapshots` | the history checker at level `tcc` on the workflows' records, whenever no function is running |
//! | sometimes "a workflow aborts" | `NotTxnAborted` (violated) | witness |

use crate::actor::{Hosted, actor_id, forward_outbox, node_id};
use crate::workflow;
pub use crate::workflow::{FunctionPlan, PlanOp};
use causim_checkers::Report;
use causim_models::Model as _;
use causim_models::causalmesh::{CausalMeshTcc, MeshContext, MeshNode, Msg};
use causim_sim::history::{Key, Outcome, TxnRecord, Value};
use causim_sim::node::{Effect, Node, NodeId, Outbox};
use causim_sim::protocol::Protocol;
use stateright::actor::{Actor, ActorModel, ActorModelAction, ActorModelState, Id, Network, Out};
use stateright::{Model, Property};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

pub const CUT: &str = "the C-cache is a causal cut";
pub const JOIN_CUT: &str = "a join accepted a cut";
pub const SNAPSHOTS: &str = "transactions read causal snapshots";
pub const ABORTS: &str = "a workflow aborts";

pub type TccActorModel = ActorModel<TccActor, TccConfig, ()>;
pub type TccModelState = ActorModelState<TccActor, ()>;
/// A delivery, or a workflow's choice of (function × server), as an index.
pub type TccStep = ActorModelAction<Msg, (), usize>;

/// A workflow (one transaction): functions in an order where predecessors come first; the last
/// one is the sink.
pub type WorkflowPlan = Vec<FunctionPlan>;

#[derive(Clone, Debug)]
pub struct TccConfig {
    pub servers: usize,
    pub keys: usize,
    pub ring: usize,
    pub workflows: Vec<WorkflowPlan>,
    pub mutants: Vec<String>,
}

/// The keys of the spec's configs.
pub const X: Key = 0;
pub const C: Key = 1;

fn f(ops: &[PlanOp], after: &[usize]) -> FunctionPlan {
    FunctionPlan::new(ops, after)
}

impl TccConfig {
    /// `MC_plans.tla`'s workflows on 2 servers: t1 writes x and c in one batch; t2 reads x,
    /// then writes x; t3 reads x and c, in two parallel branches that join (`join`) or in one
    /// chain (`!join`).
    pub fn spec_plans(join: bool, ring: usize) -> TccConfig {
        use PlanOp::*;
        let t1 = vec![f(&[Write(X), Write(C)], &[])];
        let t2 = vec![f(&[Read(X)], &[]), f(&[Write(X)], &[0])];
        let t3 = if join {
            vec![f(&[Read(X)], &[]), f(&[Read(C)], &[]), f(&[], &[0, 1])]
        } else {
            vec![f(&[Read(C)], &[]), f(&[Read(X)], &[0])]
        };
        TccConfig { servers: 2, keys: 2, ring, workflows: vec![t1, t2, t3], mutants: Vec::new() }
    }

    pub fn mutant(mut self, mutant: &str) -> TccConfig {
        self.mutants.push(mutant.to_string());
        self
    }

    /// The protocol as the simulator builds it from a scenario (mutant names are checked).
    pub fn protocol(&self) -> Result<CausalMeshTcc, String> {
        let params = serde_json::json!({"chain": "one_round", "db_flush": "async", "ring_size": self.ring});
        let topology = serde_json::from_value(serde_json::json!({"servers": self.servers, "delay": {"dist": "constant", "ns": 1}}))
            .expect("a valid topology");
        let mutants = causim_models::check_mutants(&CausalMeshTcc::ENTRY, &self.mutants).map_err(|e| e.message)?;
        CausalMeshTcc::build(&params, &mutants, &topology).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    pub fn into_model(self) -> Result<TccModel, String> {
        let protocol = Arc::new(self.protocol()?);
        let db = NodeId::fixed(self.servers);
        let mut actors: Vec<TccActor> =
            protocol.fixed_nodes().into_iter().take(self.servers).map(|n| TccActor::Server { node: n.node, db }).collect();
        actors.push(TccActor::Database);
        for (index, plan) in self.workflows.iter().enumerate() {
            actors.push(TccActor::Workflow { index, plan: plan.clone(), servers: self.servers, protocol: protocol.clone() });
        }
        Ok(TccModel { actors: ActorModel::new(self, ()).actors(actors).init_network(Network::new_ordered([])) })
    }

    /// The value workflow `index` writes (to any key: a workflow writes a key once).
    pub fn written_value(index: usize) -> Value {
        index as Value + 1
    }
}

// ---------------------------------------------------------------------------------------------
// Actors

#[derive(Clone, Debug)]
pub enum TccActor {
    Server { node: MeshNode, db: NodeId },
    Database,
    Workflow { index: usize, plan: WorkflowPlan, servers: usize, protocol: Arc<CausalMeshTcc> },
}

/// Where a workflow's function is.
pub type Function = workflow::Function<MeshNode, MeshContext>;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Flow {
    pub functions: Vec<Function>,
    /// Per server: the running functions waiting for its replies, in request order (a server
    /// answers each request in the handler that receives it, and links are FIFO).
    pub awaiting: Vec<VecDeque<usize>>,
    pub records: Vec<TxnRecord>,
    pub aborted: bool,
}

impl Flow {
    fn running(&self) -> bool {
        self.functions.iter().any(|f| matches!(f, Function::Running(_)))
    }

    fn finished(&self) -> bool {
        self.aborted || self.functions.iter().all(|f| matches!(f, Function::Done(_)))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TccState {
    Server(Hosted<MeshNode>),
    Database,
    Workflow(Box<Flow>),
}

impl TccActor {
    /// Offers every (ready function × server) start as a choice, or none.
    fn offer(&self, flow: &Flow, o: &mut Out<Self>) {
        let TccActor::Workflow { plan, servers, .. } = self else { unreachable!("workflows only") };
        let mut choices = Vec::new();
        if !flow.aborted {
            for i in workflow::ready(plan, &flow.functions) {
                choices.extend((0..*servers).map(|s| i * servers + s));
            }
        }
        o.choose_random("start", choices);
    }

    fn start(&self, id: Id, flow: &mut Flow, function: usize, server: usize, o: &mut Out<Self>) {
        let TccActor::Workflow { index, plan, protocol, .. } = self else { unreachable!("workflows only") };
        let (hosted, outbox) = workflow::start(workflow::Start {
            protocol: &**protocol,
            actor: id,
            workflow: *index,
            plan,
            functions: &flow.functions,
            function,
            machine: server,
            value: TccConfig::written_value(*index),
        });
        flow.functions[function] = Function::Running(hosted);
        self.after_input(flow, function, server, outbox, o);
    }

    /// Carries out function `i`'s effects (it runs on `server`); at its end, keeps its context.
    fn after_input(&self, flow: &mut Flow, i: usize, server: usize, outbox: Outbox<Msg, ()>, o: &mut Out<Self>) {
        let TccActor::Workflow { protocol, .. } = self else { unreachable!("workflows only") };
        let Function::Running(hosted) = &mut flow.functions[i] else { unreachable!("a running function") };
        let requests = outbox.effects.iter().filter(|e| matches!(e, Effect::Send { .. })).count();
        forward_outbox(hosted, outbox, o);
        flow.records.append(&mut hosted.records);
        for _ in 0..requests {
            flow.awaiting[server].push_back(i);
        }
        if hosted.aborted.is_some() {
            flow.aborted = true;
        } else if hosted.done {
            let Function::Running(hosted) = std::mem::replace(&mut flow.functions[i], Function::Waiting) else { unreachable!() };
            flow.functions[i] = Function::Done(protocol.finish_function(hosted.node));
        }
        self.offer(flow, o);
    }
}

impl Actor for TccActor {
    type Msg = Msg;
    type Timer = ();
    type State = TccState;
    type Storage = ();
    type Random = usize;

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> TccState {
        match self {
            TccActor::Server { node, .. } => {
                let mut hosted = Hosted { node: node.clone(), records: Vec::new(), done: false, aborted: None };
                let mut outbox = Outbox::new(false);
                hosted.node.on_start(0, &mut outbox);
                forward_outbox(&mut hosted, outbox, o);
                TccState::Server(hosted)
            }
            TccActor::Database => TccState::Database,
            TccActor::Workflow { plan, servers, .. } => {
                let flow = Flow {
                    functions: vec![Function::Waiting; plan.len()],
                    awaiting: vec![VecDeque::new(); *servers],
                    records: Vec::new(),
                    aborted: false,
                };
                self.offer(&flow, o);
                TccState::Workflow(Box::new(flow))
            }
        }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<TccState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        match (self, state.to_mut()) {
            (TccActor::Server { db, .. }, TccState::Server(hosted)) => {
                let mut outbox = Outbox::new(false);
                hosted.node.on_message(0, node_id(src), msg, &mut outbox);
                // The database is not explored (asynchronous flushes: nothing comes back).
                outbox.effects.retain(|e| !matches!(e, Effect::Send { to, .. } if to == db));
                forward_outbox(hosted, outbox, o);
            }
            (TccActor::Workflow { .. }, TccState::Workflow(flow)) => {
                let server = usize::from(src);
                let i = flow.awaiting[server].pop_front().expect("a reply to a request");
                let Function::Running(hosted) = &mut flow.functions[i] else { unreachable!("replies reach running functions") };
                let mut outbox = Outbox::new(false);
                hosted.node.on_message(0, node_id(src), msg, &mut outbox);
                self.after_input(flow, i, server, outbox, o);
            }
            (actor, _) => unreachable!("{actor:?} receives no messages"),
        }
    }

    fn on_random(&self, id: Id, state: &mut Cow<TccState>, random: &usize, o: &mut Out<Self>) {
        let TccActor::Workflow { servers, .. } = self else { unreachable!("only workflows choose") };
        let TccState::Workflow(flow) = state.to_mut() else { unreachable!("only workflows choose") };
        self.start(id, flow, random / servers, random % servers, o);
    }
}

// ---------------------------------------------------------------------------------------------
// Steps

/// The Stateright model: the actor model, stepped one function start or server message at a
/// time (see the module docs).
pub struct TccModel {
    pub actors: TccActorModel,
}

impl TccModel {
    pub fn cfg(&self) -> &TccConfig {
        &self.actors.cfg
    }

    fn is_workflow(&self, id: Id) -> bool {
        usize::from(id) > self.cfg().servers
    }

    /// Takes `step`, then delivers the requests a started function sent and every reply to a
    /// workflow (see `MeshModel::settle` for why this loses nothing).
    fn settle(&self, state: &TccModelState, step: TccStep) -> Option<TccModelState> {
        crate::actor::settle(&self.actors, state, step, |id| self.is_workflow(id), None)
    }
}

impl Model for TccModel {
    type State = TccModelState;
    type Action = TccStep;

    fn init_states(&self) -> Vec<TccModelState> {
        self.actors.init_states()
    }

    fn actions(&self, state: &TccModelState, actions: &mut Vec<TccStep>) {
        self.actors.actions(state, actions);
    }

    fn next_state(&self, state: &TccModelState, step: TccStep) -> Option<TccModelState> {
        self.settle(state, step)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(CUT, |_: &TccModel, s: &TccModelState| servers(s).all(|v| v.cache().check_causal_cut().is_ok())),
            Property::always(JOIN_CUT, |_: &TccModel, s: &TccModelState| servers(s).all(|v| v.check_accepted_join().is_ok())),
            Property::always(SNAPSHOTS, |m: &TccModel, s: &TccModelState| flows(s).any(|f| f.running()) || check_history(m.cfg(), s).ok),
            Property::sometimes(ABORTS, |_: &TccModel, s: &TccModelState| flows(s).any(|f| f.aborted)),
        ]
    }
}

fn servers(state: &TccModelState) -> impl Iterator<Item = &causim_models::causalmesh::Server> {
    state.actor_states.iter().filter_map(|s| match &**s {
        TccState::Server(h) => match &h.node {
            MeshNode::Server(s) => Some(&**s),
            _ => None,
        },
        _ => None,
    })
}

fn flows(state: &TccModelState) -> impl Iterator<Item = &Flow> {
    state.actor_states.iter().filter_map(|s| match &**s {
        TccState::Workflow(f) => Some(&**f),
        _ => None,
    })
}

/// Every workflow has committed or aborted.
pub fn workflows_finished(state: &TccModelState) -> bool {
    flows(state).all(Flow::finished)
}

/// The workflows' records as a history, checked at level `tcc`.
pub fn check_history(cfg: &TccConfig, state: &TccModelState) -> Report {
    let mut node_names: Vec<String> = (0..cfg.servers).map(|i| format!("S{i}")).collect();
    node_names.push("db".to_string());
    let key_names: Vec<String> = (0..cfg.keys as Key).map(|k| ["x", "c", "k3", "k4"][k as usize % 4].to_string()).collect();
    let names: Vec<String> = (1..=cfg.workflows.len()).map(|i| format!("t{i}")).collect();
    let workflows = flows(state).zip(&names).map(|(f, name)| (name.as_str(), f.records.as_slice()));
    workflow::check_tcc_history(CausalMeshTcc::ENTRY.name, &node_names, &key_names, workflows)
}

/// Committed workflows, for tests.
pub fn committed(state: &TccModelState) -> usize {
    flows(state).filter(|f| !f.aborted && f.records.iter().any(|r| r.outcome == Outcome::Ok)).count()
}

/// The id of actor `index`.
pub fn id(index: usize) -> Id {
    actor_id(NodeId::fixed(index))
}
