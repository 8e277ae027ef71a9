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
//! - **One crash**, as in the spec's configs: a plan may name agents that can crash (the
//!   spec's `CrashNodes`); at most one does, at any step (`ConcordStep::Crash`). Its state is
//!   frozen and what is on the wire to it is lost (so are its functions' calls); what it sent
//!   is still delivered. The **controller** is the Rust `Controller`, unchanged, and detects
//!   the crash with its own heartbeat rule at one step (the spec's `Detect`): its heartbeat
//!   timer fires once, at a time past the timeout, with every survivor's `Pong` heard just
//!   before (a perfect detector: no survivor is suspected, and heartbeat rounds are not
//!   interleaved). Its `Fail`, the survivors' and storage's `FailAck`s and its `Recovered` are
//!   ordinary messages, so the recovery barrier runs as the engine runs it.
//! - **One departure** (§III-D), in plans that name agents that may leave (the spec's
//!   `LeaveNodes`; no crash then): at most one does, at any step at which none of its
//!   functions has a call in flight (`ConcordStep::Leave`, the spec's `Leave`; a call still on
//!   its way to the agent is not yet in flight, and the leaving agent fails it, as the Rust
//!   model does). The Rust
//!   `Controller` runs it from its scheduled departure (`params.leaves`, fired by the step); its
//!   `Leave`, the acknowledgments, `Transfer`, the leaver's `Sync` round, `DirXfer`, `Moved`,
//!   `LeaveDone` and `Left` are ordinary messages. The Rust model refuses a schedule in which
//!   every agent leaves, so a plan names at most all agents but one.
//! - **Not explored:** joins, and timers other than the detection (a call's
//!   timeout only aborts a workflow whose machine crashed: here its call stays pending).
//!   Silent evictions and directory evictions happen by capacity (LRU, `lines_max`,
//!   `directory_max`), not at will as in the spec.
//! - **The history** is Stateright's actor-model history: a call is invoked when its agent
//!   receives it and completes when its reply is delivered; logical times are positions in
//!   that sequence. A write cut short (`CallFailed`: its home failed) or left pending by its
//!   machine's crash may or may not have taken effect (`failed`, as the engine records it); such
//!   reads are left out, as in the spec.
//!
//! # Properties (named like the TLA+ invariants)
//!
//! | property | TLA+ | what |
//! |---|---|---|
//! | always "an E line is the only copy" | `SWMR` | I1 over every agent's lines |
//! | always "every copy is tracked" | `DirectoryCoversCopies` | I2/I3: each valid line is in its home's entry; an E line is its owner |
//! | always "storage applies writes in order" | `WriteOrder` | I8: storage's own invariant (`Storage::check_invariants`) |
//! | always "no survivor holds a failed home's line" | `FailureFencing` | I7: an agent that has handled the failure notice, and not yet the end of recovery, holds no line of the crashed agent's keys but one its own direct write drains |
//! | always "calls are linearizable" | `Linearizable` | the history checker at level `linearizable`, whenever no call of a live machine is in flight |
//! | sometimes "every call is answered" | (deadlock freedom, in part) | some run answers every call of every function |
//!
//! `DirectoryCoversCopies` and `SWMR` range over the live agents, and a line's home is the
//! one its holder's ring names (the spec's single `members` changes at once at the end of
//! recovery; here each agent switches on its `Recovered`): a line whose home crashed is not
//! judged, as in the spec. A key the departing agent homed is tracked, as the spec's `Holder`
//! says, by the departing agent's entry until it sends its entries, then by the entry on the
//! wire (`DirXfer`), then by its new home's.

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
pub const FAILURE_FENCING: &str = "no survivor holds a failed home's line";
pub const LINEARIZABLE: &str = "calls are linearizable";
/// A `sometimes` property: a run in which every function's every call is answered (so the
/// plan's paths, the external write's through the home included, are taken).
pub const EVERY_CALL_ANSWERED: &str = "every call is answered";

/// The TLA+ invariant of each property.
pub const TLA_NAMES: [(&str, &str); 5] = [
    (SWMR, "SWMR"),
    (TRACKED, "DirectoryCoversCopies"),
    (WRITE_ORDER, "WriteOrder"),
    (FAILURE_FENCING, "FailureFencing"),
    (LINEARIZABLE, "Linearizable"),
];

pub type ConcordActorModel = ActorModel<ConcordActor, ConcordConfig, Vec<Event>>;
pub type ConcordModelState = ActorModelState<ConcordActor, Vec<Event>>;

/// A step: an actor's (a delivery, or the controller's detection), an agent's crash, or the
/// start of the i-th scheduled departure.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConcordStep {
    Actor(ActorModelAction<Msg, Timer, ()>),
    Crash(Id),
    Leave(usize),
}

/// The keys of the plans.
pub const X: Key = 0;
pub const Y: Key = 1;

/// Where a function runs, or which agent may crash: at the home of key x, at the i-th other
/// agent (in index order), or at the i-th agent clockwise after x's home (the spec's agent
/// numbering, where x's home is the last agent and agent 1 its successor: `After(i)` is the
/// spec's agent i).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Home,
    Other(usize),
    After(usize),
    /// The external application's machine (§III-C3): its calls go to storage directly.
    External,
}

#[derive(Clone, Debug)]
pub struct ConcordConfig {
    pub agents: usize,
    pub functions: Vec<(Place, Vec<Op>)>,
    /// The agents that may crash (at most one does).
    pub crashes: Vec<Place>,
    /// The agents that may leave the domain (at most one does, and then none crashes).
    pub leaves: Vec<Place>,
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
        ConcordConfig { agents, functions, crashes: Vec::new(), leaves: Vec::new(), params: serde_json::json!({}), mutants: Vec::new() }
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

    /// `HomeCrashPlan`, three agents: c1 at x's home's successor reads x twice, c2 at the third
    /// agent writes 1; x's home may crash.
    pub fn home_crash() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(3, vec![(After(1), vec![rd(X), rd(X)]), (After(2), vec![wr(X, 1)])]).crashing(&[Home])
    }

    /// `OwnerCrashPlan`: c1 at the other agent reads x (E) and writes 1, c3 at the home reads
    /// x and writes 2; the owner's agent may crash.
    pub fn owner_crash() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(2, vec![(Other(0), vec![rd(X), wr(X, 1)]), (Home, vec![rd(X), wr(X, 2)])]).crashing(&[Other(0)])
    }

    /// `OwnerReadPlan`: c1 at the other agent reads x (E) and writes 1, c2 there reads x, c3 at
    /// the home reads x; the owner's agent may crash.
    pub fn owner_read() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(2, vec![(Other(0), vec![rd(X), wr(X, 1)]), (Other(0), vec![rd(X)]), (Home, vec![rd(X)])]).crashing(&[Other(0)])
    }

    /// `ConcUpgradePlan`: c1 at the other agent and c2 at the home read x, then write 1 and 2
    /// (two S-upgrades at once); c3 at the other agent and c4 at the home read x.
    pub fn concurrent_upgrades() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(
            2,
            vec![(Other(0), vec![rd(X), wr(X, 1)]), (Home, vec![rd(X), wr(X, 2)]), (Other(0), vec![rd(X)]), (Home, vec![rd(X)])],
        )
    }

    /// `HomeCrashWritePlan`: c1 at the other agent reads x and writes 1 (an S-upgrade once c3
    /// at the home shares x), c2 there reads x twice; x's home may crash.
    pub fn home_crash_write() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(2, vec![(Other(0), vec![rd(X), wr(X, 1)]), (Other(0), vec![rd(X), rd(X)]), (Home, vec![rd(X)])])
            .crashing(&[Home])
    }

    /// `LeavePlan` (the HomeCrash plan with a departure instead of a crash): c1 at x's home's
    /// successor reads x twice, c2 at the third agent writes 1; x's home may leave.
    pub fn leave() -> ConcordConfig {
        use Place::*;
        ConcordConfig::new(3, vec![(After(1), vec![rd(X), rd(X)]), (After(2), vec![wr(X, 1)])]).leaving(&[Home])
    }

    /// `ExtWritePlan` (A11): c1 at the other agent reads x (E), writes 1 directly and reads x;
    /// c2 at the home reads x; e1, an external application's function, writes 2 to storage.
    /// Strictly (`external_through_home`) storage hands the write to x's home through the
    /// listener and the controller; paper-literal it applies it first.
    pub fn ext_write() -> ConcordConfig {
        use Place::*;
        let mut cfg =
            ConcordConfig::new(2, vec![(Other(0), vec![rd(X), wr(X, 1), rd(X)]), (Home, vec![rd(X)]), (External, vec![wr(X, 2)])]);
        cfg.params = serde_json::json!({"external_app": true});
        cfg
    }

    /// The agents at `places` may leave the domain (at most one does).
    pub fn leaving(mut self, places: &[Place]) -> ConcordConfig {
        self.leaves = places.to_vec();
        self
    }

    /// The agents at `places` may crash (at most one does).
    pub fn crashing(mut self, places: &[Place]) -> ConcordConfig {
        self.crashes = places.to_vec();
        self
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

    /// An external application runs on its own machine (`params.external_app`).
    fn external(&self) -> bool {
        self.params.get("external_app").and_then(|v| v.as_bool()).unwrap_or(false)
    }

    /// The actor index of the first function: after the agents, storage, the controller and
    /// the external application's machine.
    fn first_client(&self) -> usize {
        self.agents + 2 + usize::from(self.external())
    }

    /// The agent index of a place (the machine `ext` for `External`).
    fn agent(&self, protocol: &Concord, place: Place) -> usize {
        let ring = protocol.ring();
        let home = ring.home(X);
        match place {
            Place::External => {
                assert!(self.external(), "an external function needs params.external_app");
                self.agents + 2
            }
            Place::Home => home.index(),
            Place::Other(i) => (0..self.agents).filter(|&a| a != home.index()).nth(i).expect("enough agents for the plan"),
            Place::After(i) => {
                assert!(i < self.agents, "enough agents for the plan");
                (0..i).fold(home, |a, _| ring.successor(a)).index()
            }
        }
    }

    pub fn into_model(mut self) -> Result<ConcordModel, String> {
        // The departures the controller may run, in the order of `ConcordStep::Leave`'s index.
        let leavers: Vec<usize> = {
            let protocol = self.protocol()?;
            self.leaves.iter().map(|&p| self.agent(&protocol, p)).collect()
        };
        if !leavers.is_empty() {
            let schedule: Vec<_> =
                leavers.iter().enumerate().map(|(i, a)| serde_json::json!({"node": format!("S{a}"), "at_ns": i + 1})).collect();
            self.params["leaves"] = serde_json::json!(schedule);
        }
        let protocol = Arc::new(self.protocol()?);
        let mut nodes = protocol.fixed_nodes().into_iter().take(self.first_client()).map(|n| n.node);
        let mut actors: Vec<ConcordActor> = nodes.by_ref().take(self.agents + 1).map(ConcordActor::Node).collect();
        let controller = nodes.next().expect("the controller follows storage");
        let detect_at = protocol.params.heartbeat_timeout_ns + 1;
        actors.push(ConcordActor::Controller { node: controller, agents: self.agents, detect_at });
        // The external application's machine `ext`, if any, follows the controller.
        actors.extend(nodes.map(ConcordActor::Node));
        let mut client_agents = Vec::new();
        for (place, ops) in &self.functions {
            let agent = self.agent(&protocol, *place);
            client_agents.push(agent);
            let client = causim_models::concord::Client::new(NodeId::fixed(agent), ops.clone(), 0, 1);
            actors.push(ConcordActor::Node(ConcordNode::Client(Box::new(client))));
        }
        let crashable = self.crashes.iter().map(|&p| id(self.agent(&protocol, p))).collect();
        let actors = ActorModel::new(self, Vec::new()).actors(actors).init_network(Network::new_ordered([])).record_msg_in(record_call);
        let leavers = leavers.into_iter().map(id).collect();
        Ok(ConcordModel { actors, protocol, client_agents, crashable, leavers })
    }
}

// ---------------------------------------------------------------------------------------------
// Actors and the history

/// A history event: function `client` (its index in the plan) invoked a call, got its
/// answer (a read's value), or was told the call failed (its outcome unknown).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    Invoke { client: usize, key: Key, write: Option<Value> },
    Return { client: usize, value: Option<Value> },
    Failed { client: usize },
}

/// Records calls as their agents receive them and answers as their functions do.
#[allow(clippy::ptr_arg)] // the signature `ActorModel::record_msg_in` takes
fn record_call(cfg: &ConcordConfig, history: &Vec<Event>, env: Envelope<&Msg>) -> Option<Vec<Event>> {
    let first_client = cfg.first_client();
    let client = |id: Id| usize::from(id).checked_sub(first_client);
    let event = match *env.msg {
        Msg::Get { key } => Event::Invoke { client: client(env.src)?, key, write: None },
        Msg::Put { key, value } => Event::Invoke { client: client(env.src)?, key, write: Some(value) },
        Msg::GetReply { value, .. } => Event::Return { client: client(env.dst)?, value },
        Msg::PutReply { .. } => Event::Return { client: client(env.dst)?, value: None },
        Msg::CallFailed { .. } => Event::Failed { client: client(env.dst)? },
        _ => return None,
    };
    let mut next = history.clone();
    next.push(event);
    Some(next)
}

#[derive(Clone, Debug)]
pub enum ConcordActor {
    Node(ConcordNode),
    /// The controller, with the number of agents and the time its detection runs at (past
    /// the heartbeat timeout).
    Controller {
        node: ConcordNode,
        agents: usize,
        detect_at: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConcordState {
    Node(Hosted<ConcordNode>),
    /// The controller, the agent that crashed (set by the crash step; its detection is the
    /// controller's heartbeat timer, which the crash sets), and the agent that leaves (set by
    /// the departure step).
    Controller(Hosted<ConcordNode>, Option<usize>, Option<usize>),
}

impl ConcordActor {
    /// Carries out a node's effects, without its timers and heartbeats (see the module docs).
    fn forward(hosted: &mut Hosted<ConcordNode>, mut outbox: Outbox<Msg, Timer>, o: &mut Out<Self>) {
        outbox.effects.retain(|e| {
            !matches!(
                e,
                Effect::SetTimer { .. } | Effect::SetTimerSampled { .. } | Effect::CancelTimer { .. } | Effect::Send { msg: Msg::Ping, .. }
            )
        });
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
        let (ConcordActor::Node(node) | ConcordActor::Controller { node, .. }) = self;
        let mut hosted = Hosted { node: node.clone(), records: Vec::new(), done: false, aborted: None };
        let mut outbox = Outbox::new(false);
        hosted.node.on_start(0, &mut outbox);
        Self::forward(&mut hosted, outbox, o);
        match self {
            ConcordActor::Node(_) => ConcordState::Node(hosted),
            ConcordActor::Controller { .. } => ConcordState::Controller(hosted, None, None),
        }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<ConcordState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        let (ConcordState::Node(hosted) | ConcordState::Controller(hosted, ..)) = state.to_mut();
        let mut outbox = Outbox::new(false);
        hosted.node.on_message(0, crate::actor::node_id(src), msg, &mut outbox);
        Self::forward(hosted, outbox, o);
    }

    /// The controller's detection (the spec's `Detect`): every survivor answered the last
    /// heartbeat, the crashed agent has been silent since the start, and the heartbeat round
    /// runs past the timeout.
    fn on_timeout(&self, _id: Id, state: &mut Cow<ConcordState>, timer: &Timer, o: &mut Out<Self>) {
        let (ConcordActor::Controller { agents, detect_at, .. }, ConcordState::Controller(_, Some(crashed), _), Timer::Heartbeat) =
            (self, &**state, timer)
        else {
            return;
        };
        let crashed = *crashed;
        let ConcordState::Controller(hosted, ..) = state.to_mut() else { unreachable!("matched above") };
        let mut outbox = Outbox::new(false);
        for agent in (0..*agents).filter(|&a| a != crashed) {
            hosted.node.on_message(*detect_at, NodeId::fixed(agent), Msg::Pong, &mut outbox);
        }
        hosted.node.on_timer(*detect_at, Timer::Heartbeat, &mut outbox);
        Self::forward(hosted, outbox, o);
    }
}

// ---------------------------------------------------------------------------------------------
// The model

/// The Stateright model: the actor model, with clients' replies delivered at once, and one
/// crash.
pub struct ConcordModel {
    pub actors: ConcordActorModel,
    pub protocol: Arc<Concord>,
    /// Each function's agent (by actor index).
    pub client_agents: Vec<usize>,
    /// The agents that may crash.
    pub crashable: Vec<Id>,
    /// The agents that may leave, by the index of their scheduled departure.
    pub leavers: Vec<Id>,
}

impl ConcordModel {
    pub fn cfg(&self) -> &ConcordConfig {
        &self.actors.cfg
    }

    fn is_client(&self, id: Id) -> bool {
        usize::from(id) >= self.cfg().first_client()
    }

    fn controller(&self) -> usize {
        self.cfg().agents + 1
    }

    /// Agent `f` crashes: its state is frozen, what is on the wire to it is lost, and the
    /// controller's heartbeat timer is armed to detect it.
    fn crash(&self, state: &ConcordModelState, f: Id) -> ConcordModelState {
        let mut next = state.clone();
        let f = usize::from(f);
        next.crashed[f] = true;
        let ctl = self.controller();
        let ConcordState::Controller(hosted, _, left) = &*next.actor_states[ctl] else { unreachable!("the controller's state") };
        next.actor_states[ctl] = Arc::new(ConcordState::Controller(hosted.clone(), Some(f), *left));
        next.timers_set[ctl].set(Timer::Heartbeat);
        drop_to_crashed(&mut next);
        next
    }

    /// The crashed agent and the departing one, if any.
    fn changes(&self, state: &ConcordModelState) -> (Option<usize>, Option<usize>) {
        let ConcordState::Controller(_, crashed, left) = &*state.actor_states[self.controller()] else {
            unreachable!("the controller's state")
        };
        (*crashed, *left)
    }

    /// The controller's i-th scheduled departure is due: it tells every agent (the first
    /// barrier starts).
    fn leave(&self, state: &ConcordModelState, i: usize) -> ConcordModelState {
        let mut next = state.clone();
        let ctl = self.controller();
        let ConcordState::Controller(hosted, crashed, _) = &*next.actor_states[ctl] else { unreachable!("the controller's state") };
        let (mut hosted, crashed) = (hosted.clone(), *crashed);
        let mut outbox = Outbox::new(false);
        hosted.node.on_timer(0, Timer::Leave(i), &mut outbox);
        hosted.records.append(&mut outbox.records);
        let Network::Ordered(flows) = &mut next.network else { unreachable!("an ordered network") };
        for effect in outbox.effects {
            if let Effect::Send { to, msg } = effect {
                flows.entry((id(ctl), actor_id(to))).or_default().push_back(msg);
            }
        }
        next.actor_states[ctl] = Arc::new(ConcordState::Controller(hosted, crashed, Some(usize::from(self.leavers[i]))));
        next
    }
}

/// Messages to a crashed agent are lost. (Flows are edited in place: Stateright 0.31's
/// `Network::iter_all` does not advance within an ordered flow of several messages.)
fn drop_to_crashed(state: &mut ConcordModelState) {
    if !state.crashed.contains(&true) {
        return;
    }
    let crashed = &state.crashed;
    if let Network::Ordered(flows) = &mut state.network {
        flows.retain(|&(_, dst), _| !crashed[usize::from(dst)]);
    }
}

impl Model for ConcordModel {
    type State = ConcordModelState;
    type Action = ConcordStep;

    fn init_states(&self) -> Vec<ConcordModelState> {
        self.actors.init_states()
    }

    fn actions(&self, state: &ConcordModelState, actions: &mut Vec<ConcordStep>) {
        let mut steps = Vec::new();
        self.actors.actions(state, &mut steps);
        // Stateright offers a crashed actor's restart: a Concord agent comes back as a join,
        // which these bounds leave out.
        actions.extend(steps.into_iter().filter(|s| !matches!(s, ActorModelAction::Recover(_))).map(ConcordStep::Actor));
        if self.changes(state) != (None, None) {
            return;
        }
        actions.extend(self.crashable.iter().map(|&f| ConcordStep::Crash(f)));
        // As the spec's `Leave`: none of the leaver's functions has a call in flight.
        let open = open_calls(&state.history, self.client_agents.len());
        for (i, &d) in self.leavers.iter().enumerate() {
            if !open.iter().zip(&self.client_agents).any(|(&open, &agent)| open && id(agent) == d) {
                actions.push(ConcordStep::Leave(i));
            }
        }
    }

    fn next_state(&self, state: &ConcordModelState, step: ConcordStep) -> Option<ConcordModelState> {
        match step {
            ConcordStep::Crash(f) => Some(self.crash(state, f)),
            ConcordStep::Leave(i) => Some(self.leave(state, i)),
            ConcordStep::Actor(step) => {
                let mut next = crate::actor::settle(&self.actors, state, step, |id| self.is_client(id), None)?;
                drop_to_crashed(&mut next);
                Some(next)
            }
        }
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(SWMR, |m: &ConcordModel, s: &ConcordModelState| swmr(m, s)),
            Property::always(TRACKED, |m: &ConcordModel, s: &ConcordModelState| copies_tracked(m, s)),
            Property::always(WRITE_ORDER, |m: &ConcordModel, s: &ConcordModelState| node(s, m.cfg().agents).check_invariants().is_ok()),
            Property::always(FAILURE_FENCING, |m: &ConcordModel, s: &ConcordModelState| failure_fencing(m, s)),
            Property::always(LINEARIZABLE, |m: &ConcordModel, s: &ConcordModelState| {
                live_calls_in_flight(m, s) || check_history(m.cfg(), &s.history).ok
            }),
            Property::sometimes(EVERY_CALL_ANSWERED, |m: &ConcordModel, s: &ConcordModelState| {
                let answers = s.history.iter().filter(|e| matches!(e, Event::Return { .. })).count();
                answers == m.cfg().functions.iter().map(|(_, ops)| ops.len()).sum::<usize>()
            }),
        ]
    }
}

fn node(state: &ConcordModelState, index: usize) -> &ConcordNode {
    let (ConcordState::Node(h) | ConcordState::Controller(h, ..)) = &*state.actor_states[index];
    &h.node
}

/// The live agents.
fn agents<'a>(m: &ConcordModel, state: &'a ConcordModelState) -> impl Iterator<Item = (usize, &'a causim_models::concord::Agent)> {
    (0..m.cfg().agents).filter(|&i| !state.crashed[i]).filter_map(move |i| match node(state, i) {
        ConcordNode::Agent(a) => Some((i, &**a)),
        _ => None,
    })
}

/// I1: an E line is the only valid copy of its key.
fn swmr(m: &ConcordModel, state: &ConcordModelState) -> bool {
    let lines: Vec<(usize, Key, bool)> =
        agents(m, state).flat_map(|(i, a)| a.lines().iter().map(move |(&k, l)| (i, k, l.exclusive))).collect();
    lines.iter().all(|&(i, k, e)| !e || lines.iter().all(|&(j, kk, _)| j == i || kk != k))
}

/// I2/I3: every valid line of a key whose home (in its holder's ring) is alive is in the
/// home's entry, and an E line is the entry's owner. A key the departing agent homed is
/// tracked by its entry until it sends its entries, then by the one on the wire.
fn copies_tracked(m: &ConcordModel, state: &ConcordModelState) -> bool {
    let all: Vec<_> = agents(m, state).collect();
    let agent = |index: usize| all.iter().find(|(h, _)| *h == index).map(|(_, a)| *a);
    let left = m.changes(state).1;
    let Network::Ordered(flows) = &state.network else { unreachable!("an ordered network") };
    all.iter().all(|(i, a)| {
        a.lines().iter().all(|(&k, line)| {
            let leaver = left.filter(|&d| m.protocol.ring().home(k).index() == d).and_then(agent);
            let in_transit = leaver.filter(|d| d.entries_sent()).and_then(|_| {
                flows.iter().filter(|&(&(src, _), _)| Some(usize::from(src)) == left).flat_map(|(_, q)| q).find_map(|msg| match msg {
                    Msg::DirXfer { entries, join: false, .. } => Some(entries.iter().find(|(key, _)| *key == k).map(|(_, d)| d)),
                    _ => None,
                })
            });
            let entry = match (leaver, in_transit) {
                (Some(d), _) if !d.entries_sent() => d.directory().get(&k),
                (_, Some(entry)) => entry,
                _ => {
                    let home = a.ring().home(k).index();
                    if state.crashed[home] {
                        return true;
                    }
                    agent(home).and_then(|h| h.directory().get(&k))
                }
            };
            let me = NodeId::fixed(*i);
            match entry {
                Some(Dir::Exclusive(o)) => *o == me,
                Some(Dir::Shared(sharers)) => !line.exclusive && sharers.contains(&me),
                None => false,
            }
        })
    })
}

/// I7 (the spec's `FailureFencing`): an agent that has handled the failure notice and not yet
/// the end of recovery holds no line of a key the crashed agent homed, but the one its own
/// direct write drains. (The agents' own I7 check is off under `no_failure_eviction`, so it is
/// judged here.)
fn failure_fencing(m: &ConcordModel, state: &ConcordModelState) -> bool {
    let Some(f) = state.crashed.iter().position(|&c| c) else { return true };
    let ctl = m.controller();
    let detected = state.timers_set[ctl].iter().next().is_none();
    let Network::Ordered(flows) = &state.network else { unreachable!("an ordered network") };
    let notice_pending = |a: usize| flows.get(&(id(ctl), id(a))).is_some_and(|q| q.iter().any(|msg| matches!(msg, Msg::Fail { .. })));
    let failed = NodeId::fixed(f);
    !detected
        || agents(m, state).all(|(i, a)| {
            notice_pending(i)
                || !a.ring().contains(failed)
                || a.lines().keys().all(|&k| {
                    a.ring().home(k) != failed || matches!(a.pending().get(&k), Some(causim_models::concord::Pending::OwnerWrite { .. }))
                })
        })
}

/// Which functions have invoked a call and not had its answer.
fn open_calls(history: &[Event], functions: usize) -> Vec<bool> {
    let mut open = vec![false; functions];
    for event in history {
        match *event {
            Event::Invoke { client, .. } => open[client] = true,
            Event::Return { client, .. } | Event::Failed { client } => open[client] = false,
        }
    }
    open
}

/// Some function on a live machine has invoked a call and not had its answer (a call of a
/// crashed machine stays pending for good).
pub fn live_calls_in_flight(m: &ConcordModel, state: &ConcordModelState) -> bool {
    let open = open_calls(&state.history, m.client_agents.len());
    open.iter().zip(&m.client_agents).any(|(&open, &agent)| open && !state.crashed[agent])
}

/// The calls of the history as the simulator records them (each a one-operation transaction,
/// its times the events' positions), checked at level `linearizable`. A write that failed, or
/// is still pending (its machine crashed), is `failed`: it may have taken effect; such reads
/// are left out.
pub fn check_history(cfg: &ConcordConfig, history: &[Event]) -> Report {
    let mut open: Vec<Option<(u64, Key, Option<Value>)>> = vec![None; cfg.functions.len()];
    let mut records: Vec<(usize, TxnRecord)> = Vec::new();
    let record = |invoke_ns: u64, complete_ns: u64, key: Key, write: Option<Value>, value: Option<Value>, outcome: Outcome| {
        let (kind, op) = match write {
            Some(v) => (TxnKind::Write, OpRecord::write(key, v)),
            None => (TxnKind::Read, OpRecord::read(key, value)),
        };
        TxnRecord { kind, node: None, invoke_ns, complete_ns, outcome, ops: [op].into(), note: None, call: None }
    };
    for (at, event) in history.iter().enumerate() {
        let at = at as u64 + 1;
        match *event {
            Event::Invoke { client, key, write } => open[client] = Some((at, key, write)),
            Event::Return { client, value } => {
                let (invoke_ns, key, write) = open[client].take().expect("an answer to a call");
                records.push((client, record(invoke_ns, at, key, write, value, Outcome::Ok)));
            }
            Event::Failed { client } => {
                let (invoke_ns, key, write) = open[client].take().expect("a failure of a call");
                if write.is_some() {
                    records.push((client, record(invoke_ns, at, key, write, None, Outcome::Failed)));
                }
            }
        }
    }
    let end = history.len() as u64 + 1;
    for (client, call) in open.iter().enumerate() {
        if let Some((invoke_ns, key, write @ Some(_))) = *call {
            records.push((client, record(invoke_ns, end, key, write, None, Outcome::Failed)));
        }
    }
    let buf = causim_sim::buffer::SharedBuffer::default();
    let mut writer = HistoryWriter::new(Box::new(buf.clone()));
    let mut node_names: Vec<String> = (0..cfg.agents).map(|i| format!("S{i}")).collect();
    node_names.extend(["db".to_string(), "ctl".to_string(), "ext".to_string()]);
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
