//! Concord under Stateright: the `models/` cache agents, storage and function clients,
//! unchanged, running the plans of the TLA+ spec's configs (`specs/concord/MC_plans.tla`) on an
//! ordered (FIFO) network.
//!
//! # What is explored
//!
//! - **Cache agents** `S0 … S{n-1}` and **storage** (`db`) are `ConcordNode`s, built by
//!   `Concord::build` from the same parameters and mutants a scenario gives. Every interleaving
//!   of their messages is explored.
//! - **Functions** are `Client`s with fixed calls, each on one agent's machine (a plan names
//!   the key's home or another agent, so the roles match the spec's whatever the ring's
//!   hashing). A client blocks on its call, so its reply is delivered with the step that sends
//!   it ([`crate::actor::settle`]); the delivery of its call to the agent is a step, the
//!   spec's client action.
//! - **Not explored:** the controller (no crash, departure or join: a placeholder actor keeps
//!   node ids aligned), and timers (a call's timeout only matters when a machine crashes).
//!   Silent evictions and directory evictions happen by capacity (LRU, `lines_max`,
//!   `directory_max`), not at will as in the spec.
//! - **The history** is Stateright's actor-model history: a call is invoked when its agent
//!   receives it and completes when its reply is delivered; logical times are positions in
//!   that sequence.
//!
//! # Properties (named like the TLA+ invariants)
//!
//! | property | TLA+ | what |
//! |---|---|---|
//! | always "an E line is the only copy" | `SWMR` | I1 over every agent's lines |
//! | always "every copy is tracked" | `DirectoryCoversCopies` | I2/I3: each valid line is in its home's entry; an E line is its owner |
//! | always "storage applies writes in order" | `WriteOrder` | I8: storage's own invariant (`Storage::check_invariants`) |
//! | always "calls are linearizable" | `Linearizable` | the history checker at level `linearizable`, whenever no call is in flight |

use crate::actor::{Hosted, actor_id, forward_outbox};
use causim_checkers::{Level, Report};
use causim_models::Model as _;
use causim_models::concord::{Concord, ConcordNode, Dir, Msg, Timer};
use causim_sim::history::{HistoryHeader, HistoryWriter, Key, Names, OpRecord, Outcome, SessionRef, TxnKind, TxnRecord, Value};
use causim_sim::node::{Effect, Node, NodeId, Outbox};
use causim_sim::protocol::Protocol;
use causim_sim::workload::Op;
use stateright::actor::{Actor, ActorModel, ActorModelAction, ActorModelState, Envelope, Id, Network, Out};
use stateright::{Model, Property};
use std::borrow::Cow;
use std::sync::Arc;

pub const SWMR: &str = "an E line is the only copy";
pub const TRACKED: &str = "every copy is tracked";
pub const WRITE_ORDER: &str = "storage applies writes in order";
pub const LINEARIZABLE: &str = "calls are linearizable";

/// The TLA+ invariant of each property.
pub const TLA_NAMES: [(&str, &str); 4] =
    [(SWMR, "SWMR"), (TRACKED, "DirectoryCoversCopies"), (WRITE_ORDER, "WriteOrder"), (LINEARIZABLE, "Linearizable")];

pub type ConcordActorModel = ActorModel<ConcordActor, ConcordConfig, Vec<Event>>;
pub type ConcordModelState = ActorModelState<ConcordActor, Vec<Event>>;
pub type ConcordStep = ActorModelAction<Msg, Timer, ()>;

/// The keys of the plans.
pub const X: Key = 0;
pub const Y: Key = 1;

/// Where a function runs: at the home of key x, or at the i-th other agent (in index order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Home,
    Other(usize),
}

#[derive(Clone, Debug)]
pub struct ConcordConfig {
    pub agents: usize,
    pub functions: Vec<(Place, Vec<Op>)>,
    pub params: serde_json::Value,
    pub mutants: Vec<String>,
}

fn rd(key: Key) -> Op {
    Op::Read { key }
}

fn wr(key: Key, value: Value) -> Op {
    Op::Write { key, value }
}

impl ConcordConfig {
    fn new(agents: usize, functions: Vec<(Place, Vec<Op>)>) -> ConcordConfig {
        ConcordConfig { agents, functions, params: serde_json::json!({}), mutants: Vec::new() }
    }

    /// `UpgradePlan`: c1 (another agent) reads x and writes 1, c2 (same agent) reads x, c3 (the
    /// home) reads x twice.
    pub fn upgrade() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(2, vec![(Other(0), vec![rd(X), wr(X, 1)]), (Other(0), vec![rd(X)]), (Home, vec![rd(X), rd(X)])])
    }

    /// `OwnerPlan`: c1 reads x (E) and writes 1, c2 at a second agent and c3 at the home read x.
    pub fn owner() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(3, vec![(Other(0), vec![rd(X), wr(X, 1)]), (Other(1), vec![rd(X)]), (Home, vec![rd(X)])])
    }

    /// `OwnerInvPlan`: c1 reads x, writes 1 and reads x; c2 at the home writes 2 and reads x.
    pub fn owner_inv() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(2, vec![(Other(0), vec![rd(X), wr(X, 1), rd(X)]), (Home, vec![wr(X, 2), rd(X)])])
    }

    /// `RacePlan`: c1 reads x twice, c2 at the home writes 1.
    pub fn race() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(2, vec![(Other(0), vec![rd(X), rd(X)]), (Home, vec![wr(X, 1)])])
    }

    /// A12 with a directory of one entry: c1 reads x, then y (homed with x: the home evicts
    /// x's entry), then x again; c2 at a third agent writes x. Three agents, so x and y share a
    /// home (S2).
    pub fn directory_eviction() -> ConcordConfig {
        use Place::*;
        let mut cfg = ConcordConfig::new(3, vec![(Other(0), vec![rd(X), rd(Y), rd(X)]), (Other(1), vec![wr(X, 1)])]);
        cfg.params = serde_json::json!({"directory_max": 1});
        cfg
    }

    pub fn mutant(mut self, mutant: &str) -> ConcordConfig {
        self.mutants.push(mutant.to_string());
        self
    }

    /// The paper-literal rules (`params.strict` false).
    pub fn paper_literal(mut self) -> ConcordConfig {
        self.params["strict"] = serde_json::json!(false);
        self
    }

    /// The protocol as the simulator builds it from a scenario (mutant names are checked).
    pub fn protocol(&self) -> Result<Concord, String> {
        let topology = serde_json::from_value(serde_json::json!({"servers": self.agents, "delay": {"dist": "constant", "ns": 1}}))
            .expect("a valid topology");
        let mutants = causim_models::check_mutants(&Concord::ENTRY, &self.mutants).map_err(|e| e.message)?;
        Concord::build(&self.params, &mutants, &topology).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    /// The agent index of a place.
    fn agent(&self, protocol: &Concord, place: Place) -> usize {
        let home = protocol.ring().home(X).index();
        match place {
            Place::Home => home,
            Place::Other(i) => (0..self.agents).filter(|&a| a != home).nth(i).expect("enough agents for the plan"),
        }
    }

    pub fn into_model(self) -> Result<ConcordModel, String> {
        let protocol = Arc::new(self.protocol()?);
        let mut actors: Vec<ConcordActor> =
            protocol.fixed_nodes().into_iter().take(self.agents + 1).map(|n| ConcordActor::Node(n.node)).collect();
        actors.push(ConcordActor::Placeholder);
        for (place, ops) in &self.functions {
            let agent = NodeId::fixed(self.agent(&protocol, *place));
            actors.push(ConcordActor::Node(ConcordNode::Client(Box::new(causim_models::concord::Client::new(agent, ops.clone(), 0, 1)))));
        }
        let actors = ActorModel::new(self, Vec::new()).actors(actors).init_network(Network::new_ordered([])).record_msg_in(record_call);
        Ok(ConcordModel { actors, protocol })
    }
}

// ---------------------------------------------------------------------------------------------
// Actors and the history

/// A history event: function `client` (its index in the plan) invoked a call, or got its
/// answer (a read's value).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Invoke { client: usize, key: Key, write: Option<Value> },
    Return { client: usize, value: Option<Value> },
}

/// Records calls as their agents receive them and answers as their functions do.
#[allow(clippy::ptr_arg)] // the signature `ActorModel::record_msg_in` takes
fn record_call(cfg: &ConcordConfig, history: &Vec<Event>, env: Envelope<&Msg>) -> Option<Vec<Event>> {
    let first_client = cfg.agents + 2;
    let client = |id: Id| usize::from(id).checked_sub(first_client);
    let event = match *env.msg {
        Msg::Get { key } => Event::Invoke { client: client(env.src)?, key, write: None },
        Msg::Put { key, value } => Event::Invoke { client: client(env.src)?, key, write: Some(value) },
        Msg::GetReply { value, .. } => Event::Return { client: client(env.dst)?, value },
        Msg::PutReply { .. } => Event::Return { client: client(env.dst)?, value: None },
        _ => return None,
    };
    let mut next = history.clone();
    next.push(event);
    Some(next)
}

#[derive(Clone, Debug)]
pub enum ConcordActor {
    Node(ConcordNode),
    /// Stands for the controller, which these bounds do not explore.
    Placeholder,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConcordState {
    Node(Hosted<ConcordNode>),
    Placeholder,
}

impl ConcordActor {
    /// Carries out a node's effects, without its timers (see the module docs).
    fn forward(hosted: &mut Hosted<ConcordNode>, mut outbox: Outbox<Msg, Timer>, o: &mut Out<Self>) {
        outbox.effects.retain(|e| !matches!(e, Effect::SetTimer { .. } | Effect::SetTimerSampled { .. } | Effect::CancelTimer { .. }));
        forward_outbox(hosted, outbox, o);
    }
}

impl Actor for ConcordActor {
    type Msg = Msg;
    type Timer = Timer;
    type State = ConcordState;
    type Storage = ();
    type Random = ();

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> ConcordState {
        match self {
            ConcordActor::Node(node) => {
                let mut hosted = Hosted { node: node.clone(), records: Vec::new(), done: false, aborted: None };
                let mut outbox = Outbox::new(false);
                hosted.node.on_start(0, &mut outbox);
                Self::forward(&mut hosted, outbox, o);
                ConcordState::Node(hosted)
            }
            ConcordActor::Placeholder => ConcordState::Placeholder,
        }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<ConcordState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        if let ConcordState::Node(hosted) = state.to_mut() {
            let mut outbox = Outbox::new(false);
            hosted.node.on_message(0, crate::actor::node_id(src), msg, &mut outbox);
            Self::forward(hosted, outbox, o);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The model

/// The Stateright model: the actor model, with clients' replies delivered at once.
pub struct ConcordModel {
    pub actors: ConcordActorModel,
    pub protocol: Arc<Concord>,
}

impl ConcordModel {
    pub fn cfg(&self) -> &ConcordConfig {
        &self.actors.cfg
    }

    fn is_client(&self, id: Id) -> bool {
        usize::from(id) >= self.cfg().agents + 2
    }
}

impl Model for ConcordModel {
    type State = ConcordModelState;
    type Action = ConcordStep;

    fn init_states(&self) -> Vec<ConcordModelState> {
        self.actors.init_states()
    }

    fn actions(&self, state: &ConcordModelState, actions: &mut Vec<ConcordStep>) {
        self.actors.actions(state, actions);
    }

    fn next_state(&self, state: &ConcordModelState, step: ConcordStep) -> Option<ConcordModelState> {
        crate::actor::settle(&self.actors, state, step, |id| self.is_client(id), None)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(SWMR, |m: &ConcordModel, s: &ConcordModelState| swmr(m, s)),
            Property::always(TRACKED, |m: &ConcordModel, s: &ConcordModelState| copies_tracked(m, s)),
            Property::always(WRITE_ORDER, |m: &ConcordModel, s: &ConcordModelState| {
                node(s, m.cfg().agents).is_none_or(|n| n.check_invariants().is_ok())
            }),
            Property::always(LINEARIZABLE, |m: &ConcordModel, s: &ConcordModelState| {
                calls_in_flight(s) || check_history(m.cfg(), &s.history).ok
            }),
        ]
    }
}

fn node(state: &ConcordModelState, index: usize) -> Option<&ConcordNode> {
    match &*state.actor_states[index] {
        ConcordState::Node(h) => Some(&h.node),
        ConcordState::Placeholder => None,
    }
}

fn agents<'a>(m: &ConcordModel, state: &'a ConcordModelState) -> impl Iterator<Item = (usize, &'a causim_models::concord::Agent)> {
    (0..m.cfg().agents).filter_map(move |i| match node(state, i) {
        Some(ConcordNode::Agent(a)) => Some((i, &**a)),
        _ => None,
    })
}

/// I1: an E line is the only valid copy of its key.
fn swmr(m: &ConcordModel, state: &ConcordModelState) -> bool {
    let lines: Vec<(usize, Key, bool)> =
        agents(m, state).flat_map(|(i, a)| a.lines().iter().map(move |(&k, l)| (i, k, l.exclusive))).collect();
    lines.iter().all(|&(i, k, e)| !e || lines.iter().all(|&(j, kk, _)| j == i || kk != k))
}

/// I2/I3: every valid line is in its home's entry, and an E line is the entry's owner.
fn copies_tracked(m: &ConcordModel, state: &ConcordModelState) -> bool {
    let ring = m.protocol.ring();
    let all: Vec<_> = agents(m, state).collect();
    all.iter().all(|(i, a)| {
        a.lines().iter().all(|(&k, line)| {
            let home = ring.home(k).index();
            let entry = all.iter().find(|(h, _)| *h == home).and_then(|(_, h)| h.directory().get(&k));
            let me = NodeId::fixed(*i);
            match entry {
                Some(Dir::Exclusive(o)) => *o == me,
                Some(Dir::Shared(sharers)) => !line.exclusive && sharers.contains(&me),
                None => false,
            }
        })
    })
}

/// Some function has invoked a call and not had its answer.
pub fn calls_in_flight(state: &ConcordModelState) -> bool {
    let invoked = state.history.iter().filter(|e| matches!(e, Event::Invoke { .. })).count();
    invoked > state.history.len() - invoked
}

/// The calls of the history as the simulator records them (each a one-operation transaction,
/// its times the events' positions), checked at level `linearizable`.
pub fn check_history(cfg: &ConcordConfig, history: &[Event]) -> Report {
    let mut open: Vec<Option<(u64, Key, Option<Value>)>> = vec![None; cfg.functions.len()];
    let mut records: Vec<(usize, TxnRecord)> = Vec::new();
    for (at, event) in history.iter().enumerate() {
        let at = at as u64 + 1;
        match *event {
            Event::Invoke { client, key, write } => open[client] = Some((at, key, write)),
            Event::Return { client, value } => {
                let (invoke_ns, key, write) = open[client].take().expect("an answer to a call");
                let (kind, op) = match write {
                    Some(v) => (TxnKind::Write, OpRecord::write(key, v)),
                    None => (TxnKind::Read, OpRecord::read(key, value)),
                };
                let record = TxnRecord {
                    kind,
                    node: None,
                    invoke_ns,
                    complete_ns: at,
                    outcome: Outcome::Ok,
                    ops: [op].into(),
                    note: None,
                    call: None,
                };
                records.push((client, record));
            }
        }
    }
    let buf = causim_sim::buffer::SharedBuffer::default();
    let mut writer = HistoryWriter::new(Box::new(buf.clone()));
    let mut node_names: Vec<String> = (0..cfg.agents).map(|i| format!("S{i}")).collect();
    node_names.extend(["db".to_string(), "ctl".to_string()]);
    let names = Names::new(&node_names, &["x".to_string(), "y".to_string()]);
    let header = HistoryHeader::of_model_checker(Concord::ENTRY.name);
    writer.header(&header).expect("in memory");
    for (id, (client, record)) in records.iter().enumerate() {
        let name = format!("c{}", client + 1);
        let session = SessionRef { workflow_name: Some(&name), workflow_id: *client as u64, attempt: 1, function: 0, per_function: false };
        writer.write(id as u64, session, &[], record, &names).expect("in memory");
    }
    let lines: Vec<causim_checkers::TxnRecord> = buf
        .text()
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str(line).expect("the simulator's history lines are the checker's records"))
        .collect();
    let history = causim_checkers::History::from_records(None, &lines).expect("the simulator's history is well formed");
    let options = causim_checkers::CheckOptions { threads: 1, ..causim_checkers::CheckOptions::default() };
    causim_checkers::check_with(&history, Level::Linearizable, &options)
}

/// The id of actor `index`.
pub fn id(index: usize) -> Id {
    actor_id(NodeId::fixed(index))
}
