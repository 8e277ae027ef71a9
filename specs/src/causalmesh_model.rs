//! CausalMesh under Stateright: the `models/` nodes, unchanged, on an ordered network.
//!
//! # What is explored
//!
//! - **Servers** `S0 … S{n-1}` are `MeshNode::Server`s, hosted as they are in the simulator.
//!   Every interleaving of message deliveries on FIFO links (`Network::new_ordered`) is
//!   explored: the chains, the client requests and the replies. A step of [`MeshModel`] is a
//!   spec action: a session's whole operation, or one message between servers (a blocked
//!   session's request and reply add no interleavings: [`MeshModel::settle`]).
//! - **Sessions** (clients, workflows) roam: each operation is one function of the workflow,
//!   run by a `MeshNode::Client` on the server the session picks, with the workflow context
//!   (`deps`, `local`) carried from function to function through `Protocol::finish_function`
//!   and `spawn_function`, as the engine does. A session either picks each operation and its
//!   server freely (Stateright's `choose_random`: like the TLA+ spec's `\E c, s, k`), or
//!   follows a fixed script (then only message interleavings vary). Free-choice sessions are
//!   interchangeable: [`MeshConfig::symmetric`] explores one state per renaming of them.
//! - **The database** is not explored. The servers flush asynchronously (`db_flush: async`), so
//!   nothing comes back from it, and without eviction it plays no part in consistency; the host
//!   drops the servers' sends to it (the TLA+ spec has no database either). A placeholder actor
//!   keeps node ids aligned with the simulator's (`db` is fixed node `n`).
//! - **Read-transaction aborts** end the session: `read_txn_attempts_max` is 1, so the client
//!   aborts the workflow at once (as the spec's `Active`), and a retry would be a new workflow.
//!
//! # Properties (named like the TLA+ invariants)
//!
//! | property | TLA+ | what |
//! |---|---|---|
//! | always "the C-cache is a causal cut" | `CCacheIsCausalCut` | every server's `check_invariants` (Definition 1) |
//! | always "a revealed write is everywhere" | `CoverageLemma` | a C-cache clock is covered, on every server, by that server's C-cache and I-cache clocks of the key |
//! | always "reads cover deps" | `ReadsCoverDeps` | the client library's own check (§5.5): no read returned a version older than a dependency |
//! | always "reads are causally consistent" | `HistoryIsCausalPlus` | the history checker (`ccv`, causal+) on the history of every state where no session is mid-operation, once per distinct history |
//! | sometimes "a remote write becomes visible" | `NotRemoteWriteVisible` (violated) | some read returns another session's write |
//!
//! The history check runs on the same history lines the simulator writes (`HistoryWriter`), so a
//! counterexample's anomaly name is the one `causim run` reports when it replays it
//! ([`crate::causalmesh_replay`]).

use crate::actor::{Hosted, actor_id, forward_outbox, node_id};
use causim_checkers::{Level, Report};
use causim_models::Model as _;
use causim_models::causalmesh::vc::Vc;
use causim_models::causalmesh::{CausalMesh, Chain, MeshContext, MeshNode, Msg};
use causim_sim::history::{HistoryHeader, HistoryWriter, Key, Names, OpKind, Outcome, SessionRef, TxnKind, TxnRecord, Value};
use causim_sim::node::{Effect, Node, NodeId, Outbox};
use causim_sim::protocol::{FunctionStart, Protocol};
use causim_sim::workload::Op;
use stateright::actor::{Actor, ActorModel, ActorModelAction, ActorModelState, Command, Id, Network, Out};
use stateright::{Model, Property};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

pub const CUT: &str = "the C-cache is a causal cut";
pub const COVERAGE: &str = "a revealed write is everywhere";
pub const COVER_DEPS: &str = "reads cover deps";
pub const CAUSAL: &str = "reads are causally consistent";
pub const REMOTE_VISIBLE: &str = "a remote write becomes visible";
pub const REACH: &str = "every write reaches every server";
pub const CONVERGE: &str = "the C-caches converge";

/// The actor model whose steps [`MeshModel`] takes: every message delivery and every choice.
pub type MeshActorModel = ActorModel<MeshActor, MeshConfig, ()>;
/// A state of the model (of both models: a [`MeshModel`] state is an actor-model state).
pub type MeshModelState = ActorModelState<MeshActor, ()>;
/// One step of the actor model: a message delivered, or a session's choice of its next
/// operation (`SelectRandom`, whose `random` is an index into [`MeshConfig::choices`]: a state
/// holds each waiting session's choices, and indexes are cheaper to copy and hash than steps).
pub type ActorStep = ActorModelAction<Msg, (), usize>;

/// An operation, before its written value is assigned.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepOp {
    Read(Key),
    Write(Key),
    ReadTxn(Vec<Key>),
}

/// One function of a session: an operation at a server.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Step {
    pub op: StepOp,
    pub server: usize,
}

/// Which properties a model checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Properties {
    /// Every invariant, the history check and the `sometimes` witness.
    All,
    /// Only what clients observed: "reads are causally consistent" (and the witness). Its
    /// counterexamples are the ones the history checker sees in a replay.
    History,
}

/// The bounds and the protocol variant of a model.
#[derive(Clone, Debug)]
pub struct MeshConfig {
    pub servers: usize,
    pub keys: usize,
    /// Sessions; with `scripts`, their number.
    pub clients: usize,
    /// Operations per session (free choice); ignored with `scripts`.
    pub ops: usize,
    pub chain: Chain,
    pub mutants: Vec<String>,
    /// Fixed operations per session; `None`: every operation and server is chosen freely.
    pub scripts: Option<Vec<Vec<Step>>>,
    pub properties: Properties,
    /// Symmetry reduction over sessions (free choice only; see [`MeshModel::representative`]).
    pub symmetry: bool,
    /// The tails disseminate revealed writes (§5.2, `params.disseminate`).
    pub disseminate: bool,
    /// Also check the `eventually` properties ("every write reaches every server", "the
    /// C-caches converge") at the terminal states.
    pub liveness: bool,
}

impl MeshConfig {
    /// Free choice: `clients` sessions of `ops` operations each, on `servers` servers and
    /// `keys` keys, every invariant checked.
    pub fn free(servers: usize, keys: usize, clients: usize, ops: usize, chain: Chain) -> MeshConfig {
        MeshConfig {
            servers,
            keys,
            clients,
            ops,
            chain,
            mutants: Vec::new(),
            scripts: None,
            properties: Properties::All,
            symmetry: false,
            disseminate: false,
            liveness: false,
        }
    }

    /// Fixed scripts, one per session.
    pub fn scripted(servers: usize, keys: usize, scripts: Vec<Vec<Step>>, chain: Chain) -> MeshConfig {
        MeshConfig {
            servers,
            keys,
            clients: scripts.len(),
            ops: scripts.iter().map(|s| s.len()).max().unwrap_or(0),
            chain,
            mutants: Vec::new(),
            scripts: Some(scripts),
            properties: Properties::All,
            symmetry: false,
            disseminate: false,
            liveness: false,
        }
    }

    pub fn mutant(mut self, mutant: &str) -> MeshConfig {
        self.mutants.push(mutant.to_string());
        self
    }

    /// The tails disseminate every revealed write to the other servers.
    pub fn disseminating(mut self) -> MeshConfig {
        self.disseminate = true;
        self
    }

    /// Checks the liveness properties too (at terminal states; no symmetry).
    pub fn with_liveness(mut self) -> MeshConfig {
        self.liveness = true;
        self
    }

    pub fn history_only(mut self) -> MeshConfig {
        self.properties = Properties::History;
        self
    }

    /// Treats sessions as interchangeable (free choice; a script names its sessions, so it
    /// stays as it is). Verdicts and depths are those of the full model; a counterexample's
    /// states are representatives, renamed from step to step, so replays come from a check
    /// without symmetry.
    pub fn symmetric(mut self) -> MeshConfig {
        self.symmetry = true;
        self
    }

    /// Operations of session `index`.
    pub fn ops_of(&self, index: usize) -> usize {
        match &self.scripts {
            Some(s) => s[index].len(),
            None => self.ops,
        }
    }

    /// The protocol as the simulator builds it from a scenario (so mutant names are checked).
    pub fn protocol(&self) -> Result<CausalMesh, String> {
        let chain = match self.chain {
            Chain::OneRound => "one_round",
            Chain::TwoRound => "two_round",
        };
        let params = serde_json::json!({"chain": chain, "db_flush": "async", "read_txn_attempts_max": 1, "disseminate": self.disseminate});
        let topology = serde_json::from_value(serde_json::json!({
            "servers": self.servers, "delay": {"dist": "constant", "ns": 1}
        }))
        .expect("a valid topology");
        let names: Vec<String> = self.mutants.clone();
        let mutants = causim_models::check_mutants(&CausalMesh::ENTRY, &names).map_err(|e| e.message)?;
        CausalMesh::build(&params, &mutants, &topology).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    /// The actor id of session `index`.
    pub fn session_actor(&self, index: usize) -> usize {
        self.servers + 1 + index
    }

    /// `S0`, `db`, or `c1` (sessions are named from 1).
    pub fn actor_name(&self, actor: usize) -> String {
        if actor < self.servers {
            format!("S{actor}")
        } else if actor == self.servers {
            "db".to_string()
        } else {
            session_name(actor - self.servers - 1)
        }
    }

    /// The operations a session may choose from (free choice).
    pub fn choices(&self) -> Vec<Step> {
        let mut steps = Vec::new();
        for server in 0..self.servers {
            for k in 0..self.keys as Key {
                steps.push(Step { op: StepOp::Read(k), server });
                steps.push(Step { op: StepOp::Write(k), server });
            }
            for set in key_sets(self.keys) {
                steps.push(Step { op: StepOp::ReadTxn(set), server });
            }
        }
        steps
    }

    /// Builds the model. Fails on an unknown mutant or a bad bound.
    pub fn into_model(self) -> Result<MeshModel, String> {
        if self.servers < 2 || self.servers > causim_models::causalmesh::vc::VC_SERVERS_MAX {
            return Err(format!("--servers must be between 2 and 16, got {}", self.servers));
        }
        if self.keys == 0 || self.keys > 8 {
            return Err(format!("--keys must be between 1 and 8, got {}", self.keys));
        }
        if self.clients == 0 || self.clients > 8 {
            return Err(format!("--clients must be between 1 and 8, got {}", self.clients));
        }
        if self.scripts.is_none() && (self.ops == 0 || self.ops > 8) {
            return Err(format!("--ops must be between 1 and 8, got {}", self.ops));
        }
        if let Some(scripts) = &self.scripts {
            if scripts.iter().all(|s| s.is_empty()) {
                return Err("--script has no step".to_string());
            }
            for (i, script) in scripts.iter().enumerate() {
                for (j, step) in script.iter().enumerate() {
                    let keys_ok = match &step.op {
                        StepOp::Read(k) | StepOp::Write(k) => (*k as usize) < self.keys,
                        StepOp::ReadTxn(ks) => !ks.is_empty() && ks.iter().all(|k| (*k as usize) < self.keys),
                    };
                    if step.server >= self.servers || !keys_ok {
                        return Err(format!("script of session {} step {j}: {step:?} is outside the bounds", i + 1));
                    }
                }
            }
        }
        let protocol = Arc::new(self.protocol()?);
        if self.liveness && self.symmetry {
            return Err("liveness is checked without symmetry".to_string());
        }
        for m in &self.mutants {
            if m == "dissemination_skips_head" && !self.disseminate {
                return Err(format!("mutant {m} needs dissemination, which this model does not do"));
            }
            if let Some((_, needs)) = UNEXPLORED_MUTANTS.iter().find(|(name, _)| name == m) {
                return Err(format!(
                    "mutant {m} needs {needs}, which the model does not explore; the model explores the mutants {}",
                    EXPLORED_MUTANTS.join(", ")
                ));
            }
        }
        let fixed = protocol.fixed_nodes();
        let mut actors: Vec<MeshActor> =
            fixed.into_iter().take(self.servers).map(|f| MeshActor::Server { node: f.node, db: protocol.db_id() }).collect();
        actors.push(MeshActor::Database);
        for index in 0..self.clients {
            actors.push(MeshActor::Session {
                index,
                protocol: protocol.clone(),
                ops: self.ops_of(index),
                script: self.scripts.as_ref().map(|s| s[index].clone()),
                choices: if self.scripts.is_some() { Vec::new() } else { self.choices() },
            });
        }
        let actors = ActorModel::new(self, ()).actors(actors).init_network(Network::new_ordered([]));
        Ok(MeshModel::new(actors))
    }
}

/// The CausalMesh mutants the model explores (every other one is refused, so that no mutant
/// passes vacuously).
pub const EXPLORED_MUTANTS: &[&str] = &[
    "no_carry_local_writes",
    "reveal_at_head",
    "nearest_deps_only",
    "read_without_integration",
    "integrate_by_vc_dominance",
    "dissemination_skips_head",
];

/// CausalMesh mutants whose bug needs something the model leaves out, and what.
pub const UNEXPLORED_MUTANTS: &[(&str, &str)] =
    &[("evict_ignores_dependents", "eviction (c_cache_keys_max)"), ("tcc_ignores_cut", "CausalMesh-TCC (the model is CausalMesh)")];

/// Every set of at least two keys (what a read transaction may ask for), keys ascending.
pub fn key_sets(keys: usize) -> Vec<Vec<Key>> {
    let mut sets = Vec::new();
    for mask in 0u32..(1 << keys) {
        if mask.count_ones() >= 2 {
            sets.push((0..keys as Key).filter(|k| mask & (1 << k) != 0).collect());
        }
    }
    sets
}

/// Session `index`'s name: `c1`, `c2`, ...
pub fn session_name(index: usize) -> String {
    format!("c{}", index + 1)
}

/// Key `k`'s name: `k1`, `k2`, ... (as in the TLA+ configs).
pub fn key_name(k: Key) -> String {
    format!("k{}", k + 1)
}

/// The value session `index` writes in its operation `op` (unique per key: per session and op).
pub fn written_value(index: usize, ops: usize, op: usize) -> Value {
    (index * ops.max(1) + op + 1) as Value
}

// ---------------------------------------------------------------------------------------------
// Steps of whole client operations

/// The Stateright model of CausalMesh: the actor model, stepped one server event at a time.
///
/// A step is what the TLA+ spec calls an action: a session's operation at a server (its choice,
/// its request delivered and handled, and the reply delivered), or one server-to-server message
/// delivered (with any reply it releases). The actor model alone would also stop between a
/// choice and its request's delivery, and between a reply's sending and its delivery; those
/// states add nothing (see [`MeshModel::settle`]) and were 5–10× the space.
pub struct MeshModel {
    pub actors: MeshActorModel,
    /// Keep each property's first counterexample (or example): see [`MeshModel::first_only`].
    first_only: bool,
    /// The properties found broken (or, for `sometimes`, found) so far, one bit each.
    found: AtomicU8,
}

impl MeshModel {
    pub fn new(actors: MeshActorModel) -> MeshModel {
        MeshModel { actors, first_only: false, found: AtomicU8::new(0) }
    }

    pub fn cfg(&self) -> &MeshConfig {
        &self.actors.cfg
    }

    /// Keeps the first counterexample found for each property. Stateright's breadth-first
    /// checker records a discovery for every state that breaks a property and keeps the last
    /// one written, which is not the shortest once a property breaks in many states; with this,
    /// a property is judged only until it is first broken, so that on one thread the discovery
    /// kept is a shortest one (and a broken property costs nothing afterwards). Not for the
    /// Explorer, which judges the states a user visits.
    pub fn first_only(mut self) -> MeshModel {
        self.first_only = true;
        self
    }

    /// An `always` property: `holds` is evaluated until the property is first broken.
    fn always(&self, bit: u8, holds: impl FnOnce() -> bool) -> bool {
        if self.first_only && self.found.load(Ordering::Relaxed) & bit != 0 {
            return true;
        }
        let ok = holds();
        if !ok {
            self.found.fetch_or(bit, Ordering::Relaxed);
        }
        ok
    }

    /// A `sometimes` property: `happens` is evaluated until it first happens.
    fn sometimes(&self, bit: u8, happens: impl FnOnce() -> bool) -> bool {
        if self.first_only && self.found.load(Ordering::Relaxed) & bit != 0 {
            return false;
        }
        let yes = happens();
        if yes {
            self.found.fetch_or(bit, Ordering::Relaxed);
        }
        yes
    }

    /// Whether an actor is a session.
    fn is_session(&self, id: Id) -> bool {
        usize::from(id) > self.cfg().servers
    }

    /// Takes `step` and the actor steps it implies, appending each actor step (with the state it
    /// was taken from) to `trail` when given.
    ///
    /// Why the implied steps lose nothing: a session is blocked between its choice and its
    /// reply, and only its own messages reach it. So (1) delivering a request sent when the
    /// session chose, at once, is the same as the session choosing later (its choice is local
    /// and nobody sees it); (2) delivering a reply at once is the same as delivering it later
    /// (the delivery changes only the session, which nothing else reads). Any interleaving of
    /// the actor model reorders into one of whole operations reaching the same servers and
    /// messages between servers; the sessions' records then differ at most by replies not yet
    /// delivered, and every property is either about the servers or stays violated once
    /// violated in the records. Messages a session sends in reply to a reply (none in
    /// CausalMesh; a retry would) stay ordinary deliveries.
    pub fn settle(
        &self,
        state: &MeshModelState,
        step: ActorStep,
        trail: Option<&mut Vec<(MeshModelState, ActorStep)>>,
    ) -> Option<MeshModelState> {
        match trail {
            Some(trail) => crate::actor::settle(&self.actors, state, step, |id| self.is_session(id), Some(trail)),
            None => self.settle_in_place(state, step),
        }
    }

    /// [`MeshModel::settle`] without a trail: the same actor steps, taken on one copy of the
    /// state. Stateright's `next_state` copies the whole state (the network's messages
    /// included) for every actor step, and an operation is three of them: a choice, its
    /// request, its reply. [`MeshModel::steps_in_place_agree`] checks that both reach the same
    /// states.
    fn settle_in_place(&self, state: &MeshModelState, step: ActorStep) -> Option<MeshModelState> {
        let chooser = crate::actor::chooser(&step);
        let mut next = state.clone();
        self.take_in_place(&mut next, step)?;
        crate::actor::deliver_requests_and_replies(
            &mut next,
            chooser,
            |id| self.is_session(id),
            |state, step| self.take_in_place(state, step),
        )?;
        Some(next)
    }

    /// One actor step taken on `state` itself, as Stateright's `ActorModel::next_state` takes
    /// it on an ordered network without history, storage or crashes (all this model uses).
    fn take_in_place(&self, state: &mut MeshModelState, step: ActorStep) -> Option<()> {
        let mut out = Out::new();
        let id = match step {
            ActorModelAction::Deliver { src, dst, msg } => {
                let index = usize::from(dst);
                let Network::Ordered(flows) = &mut state.network else { unreachable!("the model's network is ordered") };
                let flow = flows.get_mut(&(src, dst))?;
                debug_assert_eq!(flow.front(), Some(&msg), "only a flow's first message is deliverable");
                flow.pop_front();
                if flow.is_empty() {
                    flows.remove(&(src, dst));
                }
                let mut actor = Cow::Borrowed(&*state.actor_states[index]);
                self.actors.actors[index].on_msg(dst, &mut actor, src, msg, &mut out);
                if let Cow::Owned(actor) = actor {
                    state.actor_states[index] = Arc::new(actor);
                }
                dst
            }
            ActorModelAction::SelectRandom { actor: id, key, random } => {
                let index = usize::from(id);
                let mut actor = Cow::Borrowed(&*state.actor_states[index]);
                self.actors.actors[index].on_random(id, &mut actor, &random, &mut out);
                state.random_choices[index].remove(&key);
                if let Cow::Owned(actor) = actor {
                    state.actor_states[index] = Arc::new(actor);
                }
                id
            }
            other => unreachable!("the model takes no {other:?}"),
        };
        let index = usize::from(id);
        for command in out {
            match command {
                Command::Send(dst, msg) => {
                    let Network::Ordered(flows) = &mut state.network else { unreachable!("the model's network is ordered") };
                    flows.entry((id, dst)).or_insert_with(|| std::collections::VecDeque::with_capacity(1)).push_back(msg);
                }
                Command::ChooseRandom(key, random) if random.is_empty() => {
                    state.random_choices[index].remove(&key);
                }
                Command::ChooseRandom(key, random) => state.random_choices[index].insert(key, random),
                Command::SetTimer(timer, _) => {
                    state.timers_set[index].set(timer);
                }
                Command::CancelTimer(timer) => {
                    state.timers_set[index].cancel(&timer);
                }
                Command::Save(()) => unreachable!("the model's actors store nothing"),
            }
        }
        Some(())
    }

    /// Whether every step from `state`, taken in place (as the search takes it), reaches the
    /// state that the actor model's own steps reach; `Err` names the first that does not.
    pub fn steps_in_place_agree(&self, state: &MeshModelState) -> Result<(), String> {
        let mut steps = Vec::new();
        self.actors.actions(state, &mut steps);
        for step in steps {
            let stock = crate::actor::settle(&self.actors, state, step.clone(), |id| self.is_session(id), None);
            if self.settle_in_place(state, step.clone()) != stock {
                return Err(format!("stepping by {step:?} in place differs from the actor model's steps"));
            }
        }
        Ok(())
    }

    /// The representative of `state` under symmetry over sessions: the same state with its
    /// sessions sorted by what they did ([`session_signature`]), and every value each one
    /// wrote renamed after its new place (`written_value`), in the servers' caches, in the
    /// messages between servers and in the sessions' records and contexts.
    ///
    /// Why this is sound: free-choice sessions differ only in their index, which names their
    /// actor and their written values, and the protocol compares values only for equality
    /// (conflicts are resolved by clocks), so renaming sessions and their values maps runs to
    /// runs; every property is about the servers' clocks or about the history up to such a
    /// renaming. It is applied only when every session is between operations and no message
    /// involves a session (always, after a step of this model), so no node holds a session's
    /// actor id. Sessions with equal signatures keep their order: the reduction is then partial
    /// (two mirror states may both be explored), never wrong.
    pub fn representative(&self, state: MeshModelState) -> MeshModelState {
        let cfg = self.cfg();
        let first = cfg.servers + 1;
        let n = cfg.clients;
        if n < 2
            || cfg.scripts.is_some()
            || sessions(&state).any(|s| s.function.is_some())
            || state.network.iter_deliverable().any(|e| self.is_session(e.src) || self.is_session(e.dst))
        {
            return state;
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_cached_key(|&i| session_signature(cfg, i, state.actor_states[first + i].session().expect("a session")));
        if order.iter().enumerate().all(|(p, &i)| p == i) {
            return state;
        }
        let mut place = vec![0; n];
        for (p, &i) in order.iter().enumerate() {
            place[i] = p;
        }
        let ops = cfg.ops.max(1) as Value;
        let rename = |v: Value| {
            let (index, op) = ((v - 1) / ops, (v - 1) % ops);
            place.get(index as usize).map_or(v, |&p| p as Value * ops + op + 1)
        };
        let mut next = state.clone();
        for (a, actor) in state.actor_states.iter().enumerate().take(cfg.servers) {
            let mut hosted = match &**actor {
                MeshState::Server(hosted) => hosted.clone(),
                _ => unreachable!("servers come first"),
            };
            if let MeshNode::Server(server) = &mut hosted.node {
                server.map_values(&rename);
            }
            next.actor_states[a] = Arc::new(MeshState::Server(hosted));
        }
        for (p, &i) in order.iter().enumerate() {
            let mut session = state.actor_states[first + i].session().expect("a session").clone();
            session.map_values(&rename);
            next.actor_states[first + p] = Arc::new(MeshState::Session(Box::new(session)));
            next.random_choices[first + p] = state.random_choices[first + i].clone();
            next.timers_set[first + p] = state.timers_set[first + i].clone();
        }
        if let Network::Ordered(flows) = &mut next.network {
            flows.values_mut().flatten().for_each(|m| m.map_values(&rename));
        }
        next
    }

    /// The actor steps a step of this model takes, each with the state it is taken from.
    pub fn actor_steps(&self, state: &MeshModelState, step: ActorStep) -> Vec<(MeshModelState, ActorStep)> {
        let mut trail = Vec::new();
        self.settle(state, step, Some(&mut trail));
        trail
    }
}

impl Model for MeshModel {
    type State = MeshModelState;
    /// The step that starts it: a session's choice or a delivery between servers.
    type Action = ActorStep;

    fn init_states(&self) -> Vec<MeshModelState> {
        self.actors.init_states()
    }

    fn actions(&self, state: &MeshModelState, actions: &mut Vec<ActorStep>) {
        self.actors.actions(state, actions);
    }

    fn next_state(&self, state: &MeshModelState, step: ActorStep) -> Option<MeshModelState> {
        let next = self.settle(state, step, None)?;
        Some(if self.cfg().symmetry { self.representative(next) } else { next })
    }

    fn properties(&self) -> Vec<Property<Self>> {
        // TLC's order of the invariants (`causalmesh_tla::INVARIANTS`), then the witness.
        let mut properties = Vec::new();
        if self.cfg().properties == Properties::All {
            properties.push(Property::always(CUT, |m: &MeshModel, s: &MeshModelState| m.always(1, || c_cache_is_causal_cut(s))));
            properties.push(Property::always(COVERAGE, |m: &MeshModel, s: &MeshModelState| m.always(2, || coverage_lemma(m.cfg(), s))));
            properties.push(Property::always(COVER_DEPS, |m: &MeshModel, s: &MeshModelState| m.always(4, || reads_cover_deps(s))));
        }
        properties
            .push(Property::always(CAUSAL, |m: &MeshModel, s: &MeshModelState| m.always(8, || reads_are_causally_consistent(m.cfg(), s))));
        properties
            .push(Property::sometimes(REMOTE_VISIBLE, |m: &MeshModel, s: &MeshModelState| m.sometimes(16, || remote_write_visible(s))));
        if self.cfg().liveness {
            // Stateright judges `eventually` at terminal states: there the system is quiet.
            properties.push(Property::eventually(REACH, |m: &MeshModel, s: &MeshModelState| quiet(m, s) && writes_everywhere(s)));
            properties.push(Property::eventually(CONVERGE, |m: &MeshModel, s: &MeshModelState| quiet(m, s) && converged(m.cfg(), s)));
        }
        properties
    }
}

// ---------------------------------------------------------------------------------------------
// Actors

#[derive(Clone, Debug)]
pub enum MeshActor {
    Server {
        node: MeshNode,
        db: NodeId,
    },
    /// A placeholder for the database node (see the module docs).
    Database,
    Session {
        index: usize,
        protocol: Arc<CausalMesh>,
        ops: usize,
        script: Option<Vec<Step>>,
        /// [`MeshConfig::choices`] (free choice), chosen by index.
        choices: Vec<Step>,
    },
}

/// An operation in a [`session_signature`]: kind, key, and the value's class.
type OpSignature = (OpKind, Key, Value);

/// What a session did, with the values it read named by their writer's relation to it (its own
/// `j`-th write, another session's `j`-th write, the initial state), so that it does not
/// change when sessions are renamed: the order [`MeshModel::representative`] sorts sessions in.
pub fn session_signature(cfg: &MeshConfig, index: usize, session: &Session) -> impl Ord + use<> {
    let ops = cfg.ops.max(1) as Value;
    let class = |v: Option<Value>| match v {
        None => 0,
        Some(v) if (v - 1) / ops == index as Value => 1 + (v - 1) % ops,
        Some(v) => 1 + ops + (v - 1) % ops,
    };
    let records: Vec<(TxnKind, Outcome, Vec<OpSignature>)> =
        session.records.iter().map(|r| (r.kind, r.outcome, r.ops.iter().map(|op| (op.kind, op.key, class(op.value))).collect())).collect();
    (session.started, session.aborted, session.violation.is_some(), records)
}

/// A session's state: the function running now, or the context between functions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Session {
    /// The client library of the running function (one operation).
    pub function: Option<Hosted<MeshNode>>,
    /// The workflow context between functions.
    pub context: MeshContext,
    /// Functions started so far.
    pub started: usize,
    /// What the session observed, in order.
    pub records: Vec<TxnRecord>,
    /// The client's built-in check failed ("reads cover deps"), kept after the function ends.
    pub violation: Option<String>,
    /// A read transaction aborted the workflow.
    pub aborted: bool,
}

impl Session {
    /// Renames the values in the session's records and context (see `Msg::map_values`).
    fn map_values(&mut self, f: &impl Fn(Value) -> Value) {
        for op in self.records.iter_mut().flat_map(|r| r.ops.iter_mut()).chain(self.context.txn_ops.iter_mut()) {
            op.value = op.value.map(f);
        }
        self.context.local.values_mut().flatten().for_each(|v| v.map_value(f));
        self.context.read_set.values_mut().for_each(|v| v.map_value(f));
        self.context.buffer.iter_mut().for_each(|(_, v)| *v = f(*v));
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MeshState {
    Server(Hosted<MeshNode>),
    Database,
    Session(Box<Session>),
}

impl MeshState {
    pub fn server(&self) -> Option<&causim_models::causalmesh::Server> {
        match self {
            MeshState::Server(h) => match &h.node {
                MeshNode::Server(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn session(&self) -> Option<&Session> {
        match self {
            MeshState::Session(s) => Some(s),
            _ => None,
        }
    }
}

fn new_outbox() -> Outbox<Msg, ()> {
    Outbox::new(false)
}

impl MeshActor {
    /// Starts the session's next function: its client library sends the request.
    fn start_function(&self, id: Id, session: &mut Session, step: &Step, o: &mut Out<Self>) {
        let MeshActor::Session { index, protocol, ops, .. } = self else { unreachable!("sessions only") };
        let op = match &step.op {
            StepOp::Read(key) => Op::Read { key: *key },
            StepOp::Write(key) => Op::Write { key: *key, value: written_value(*index, *ops, session.started) },
            StepOp::ReadTxn(keys) => Op::ReadTxn { keys: keys.clone() },
        };
        let colocated = [NodeId::fixed(step.server)];
        let node = protocol.spawn_function(FunctionStart {
            self_id: node_id(id),
            workflow_id: *index as u64,
            attempt: 1,
            function: session.started as u32,
            machine: step.server,
            colocated: &colocated,
            ops: vec![op],
            context: std::mem::take(&mut session.context),
            is_source: session.started == 0,
            is_sink: session.started + 1 == *ops,
            remaining: 0,
            now: 0,
        });
        session.started += 1;
        let mut hosted = Hosted { node, records: Vec::new(), done: false, aborted: None };
        let mut outbox = new_outbox();
        hosted.node.on_start(0, &mut outbox);
        session.function = Some(hosted);
        self.after_client_input(session, outbox, o);
    }

    /// Carries out the client's effects; at the function's end, takes its context back and
    /// moves on to the next operation.
    fn after_client_input(&self, session: &mut Session, outbox: Outbox<Msg, ()>, o: &mut Out<Self>) {
        let MeshActor::Session { protocol, .. } = self else { unreachable!("sessions only") };
        let hosted = session.function.as_mut().expect("a running function");
        forward_outbox(hosted, outbox, o);
        session.records.append(&mut hosted.records);
        if session.violation.is_none()
            && let Err(why) = hosted.node.check_invariants()
        {
            session.violation = Some(why);
        }
        if hosted.aborted.is_some() {
            session.aborted = true;
            session.function = None;
        } else if hosted.done {
            let hosted = session.function.take().expect("checked");
            session.context = protocol.finish_function(hosted.node);
            self.next_function(session, o);
        }
    }

    /// Picks (free choice) or starts (script) the session's next function, if any.
    fn next_function(&self, session: &mut Session, o: &mut Out<Self>) {
        let MeshActor::Session { ops, script, choices, .. } = self else { unreachable!("sessions only") };
        if session.aborted || session.started >= *ops {
            return;
        }
        match script {
            Some(script) => {
                let step = script[session.started].clone();
                self.start_function_from(session, &step, o);
            }
            None => o.choose_random("op", (0..choices.len()).collect()),
        }
    }

    fn start_function_from(&self, session: &mut Session, step: &Step, o: &mut Out<Self>) {
        let MeshActor::Session { index, .. } = self else { unreachable!("sessions only") };
        // The session's actor id: servers, the database, then the sessions.
        let servers = match self {
            MeshActor::Session { protocol, .. } => protocol.servers,
            _ => unreachable!(),
        };
        let id = Id::from(servers + 1 + index);
        self.start_function(id, session, step, o);
    }
}

impl Actor for MeshActor {
    type Msg = Msg;
    type Timer = ();
    type State = MeshState;
    type Storage = ();
    type Random = usize;

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> MeshState {
        match self {
            MeshActor::Server { node, .. } => {
                let mut hosted = Hosted { node: node.clone(), records: Vec::new(), done: false, aborted: None };
                let mut outbox = new_outbox();
                hosted.node.on_start(0, &mut outbox);
                forward_outbox(&mut hosted, outbox, o);
                MeshState::Server(hosted)
            }
            MeshActor::Database => MeshState::Database,
            MeshActor::Session { .. } => {
                let mut session = Session {
                    function: None,
                    context: MeshContext::default(),
                    started: 0,
                    records: Vec::new(),
                    violation: None,
                    aborted: false,
                };
                self.next_function(&mut session, o);
                MeshState::Session(Box::new(session))
            }
        }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<MeshState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        match (self, state.to_mut()) {
            (MeshActor::Server { db, .. }, MeshState::Server(hosted)) => {
                let mut outbox = new_outbox();
                hosted.node.on_message(0, node_id(src), msg, &mut outbox);
                // The database is not explored (async flushes: nothing comes back).
                outbox.effects.retain(|e| !matches!(e, Effect::Send { to, .. } if to == db));
                forward_outbox(hosted, outbox, o);
            }
            (MeshActor::Session { .. }, MeshState::Session(session)) => {
                let Some(hosted) = session.function.as_mut() else {
                    unreachable!("a reply reaches a session only while its function runs (the client blocks)")
                };
                let mut outbox = new_outbox();
                hosted.node.on_message(0, node_id(src), msg, &mut outbox);
                self.after_client_input(session, outbox, o);
            }
            (actor, _) => unreachable!("{actor:?} receives no messages"),
        }
    }

    fn on_random(&self, id: Id, state: &mut Cow<MeshState>, random: &usize, o: &mut Out<Self>) {
        let MeshActor::Session { choices, .. } = self else { unreachable!("only sessions choose") };
        let MeshState::Session(session) = state.to_mut() else { unreachable!("only sessions choose") };
        self.start_function(id, session, &choices[*random], o);
    }
}

// ---------------------------------------------------------------------------------------------
// Properties

fn servers(state: &MeshModelState) -> impl Iterator<Item = &causim_models::causalmesh::Server> {
    state.actor_states.iter().filter_map(|s| s.server())
}

fn sessions(state: &MeshModelState) -> impl Iterator<Item = &Session> {
    state.actor_states.iter().filter_map(|s| s.session())
}

/// "the C-cache is a causal cut": every server's own invariant check (Definition 1).
pub fn c_cache_is_causal_cut(state: &MeshModelState) -> bool {
    servers(state).all(|s| s.check_invariants().is_ok())
}

/// "a revealed write is everywhere": what one server's C-cache shows of a key, every server
/// holds too, in its C-cache or its I-cache (the clocks' join covers it).
pub fn coverage_lemma(cfg: &MeshConfig, state: &MeshModelState) -> bool {
    let all: Vec<_> = servers(state).collect();
    (0..cfg.keys as Key).all(|k| {
        // What each server holds of the key, joined once (not once per server showing it), and
        // what each shows without copying its dependencies.
        let held: Vec<Vc> = all
            .iter()
            .map(|sj| {
                let mut held = Vc::zero(cfg.servers);
                for vc in sj.cache().known_vcs(k) {
                    held.merge(&vc);
                }
                held
            })
            .collect();
        all.iter().all(|si| {
            let shown = si.cache().visible_value(k).vc;
            held.iter().all(|h| shown.le(h))
        })
    })
}

/// "reads cover deps": the client library's check (§5.5) never failed.
pub fn reads_cover_deps(state: &MeshModelState) -> bool {
    sessions(state).all(|s| s.violation.is_none() && s.function.as_ref().is_none_or(|f| f.node.check_invariants().is_ok()))
}

/// Every session has finished (or aborted): its history is final.
pub fn sessions_finished(cfg: &MeshConfig, state: &MeshModelState) -> bool {
    sessions(state).enumerate().all(|(i, s)| s.function.is_none() && (s.aborted || s.started >= cfg.ops_of(i)))
}

/// Every session has finished and no message is in flight (as the TLA+ spec's `Quiet`).
fn quiet(model: &MeshModel, state: &MeshModelState) -> bool {
    sessions_finished(model.cfg(), state) && state.network.iter_deliverable().next().is_none()
}

/// "every write reaches every server": each write a session made is covered by every server's
/// clocks of its key (C-cache and I-cache).
pub fn writes_everywhere(state: &MeshModelState) -> bool {
    let all: Vec<_> = servers(state).collect();
    sessions(state).flat_map(|s| s.records.iter()).flat_map(|r| r.ops.iter()).filter(|op| op.kind == OpKind::Write).all(|op| {
        let covers = |vc: &Vc| vc.to_u64s().iter().zip(op.version.iter()).all(|(have, wrote)| wrote <= have);
        all.iter().all(|s| s.cache().known_vcs(op.key).iter().any(covers))
    })
}

/// "the C-caches converge": every server shows the same winner of every key.
pub fn converged(cfg: &MeshConfig, state: &MeshModelState) -> bool {
    let all: Vec<_> = servers(state).collect();
    (0..cfg.keys as Key).all(|k| all.windows(2).all(|p| p[0].cache().visible(k).winner == p[1].cache().visible(k).winner))
}

/// "a remote write becomes visible": some read returned another session's write.
pub fn remote_write_visible(state: &MeshModelState) -> bool {
    let all: Vec<&Session> = sessions(state).collect();
    all.iter().enumerate().any(|(i, s)| {
        s.records.iter().flat_map(|r| &r.ops).any(|op| {
            op.kind == OpKind::Read
                && op.value.is_some_and(|v| {
                    all.iter().enumerate().any(|(j, other)| {
                        j != i
                            && other
                                .records
                                .iter()
                                .flat_map(|r| &r.ops)
                                .any(|w| w.kind == OpKind::Write && w.key == op.key && w.value == Some(v))
                    })
                })
        })
    })
}

thread_local! {
    /// History hash → the checker's verdict: many states share one final history.
    static VERDICTS: RefCell<HashMap<u64, bool>> = RefCell::new(HashMap::new());
}

/// "reads are causally consistent": the history checker finds no anomaly at level `ccv` (causal+
/// consistency, which CausalMesh promises) in the history so far, in every state where no
/// session is in the middle of an operation (so every terminal state). Such a history has every
/// operation that has taken effect, and nothing half done: a write whose reply is still on its
/// way is already readable but not yet recorded, which would look like a read from thin air.
/// A violation in a prefix stays one in every extension (later operations cannot change how
/// earlier ones are ordered), so checking prefixes finds the same counterexamples, sooner, and
/// the counterexample's history is exactly what a replay records. Verdicts are memoised per
/// distinct history.
pub fn reads_are_causally_consistent(cfg: &MeshConfig, state: &MeshModelState) -> bool {
    if sessions(state).any(|s| s.function.is_some()) {
        return true;
    }
    // What the verdict depends on: the sessions' operations and outcomes. The serving node and
    // the versions attached to operations are informative (explanations, not verdicts), and
    // would split one history into many.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for s in sessions(state) {
        s.records.len().hash(&mut hasher);
        for r in &s.records {
            (r.kind, r.outcome, r.ops.len()).hash(&mut hasher);
            for op in &r.ops {
                (op.kind, op.key, op.value).hash(&mut hasher);
            }
        }
    }
    let key = hasher.finish();
    if let Some(ok) = VERDICTS.with(|v| v.borrow().get(&key).copied()) {
        return ok;
    }
    let ok = check_history(cfg, state).ok;
    VERDICTS.with(|v| {
        let mut v = v.borrow_mut();
        if v.len() > 1 << 20 {
            v.clear();
        }
        v.insert(key, ok);
    });
    ok
}

/// The history of a state, in the simulator's format (`causim-history/1`).
pub fn history_text(cfg: &MeshConfig, state: &MeshModelState) -> String {
    let buf = causim_sim::buffer::SharedBuffer::default();
    let mut writer = HistoryWriter::new(Box::new(buf.clone()));
    let mut node_names: Vec<String> = (0..cfg.servers).map(|i| format!("S{i}")).collect();
    node_names.push("db".to_string());
    let key_names: Vec<String> = (0..cfg.keys as Key).map(key_name).collect();
    let names = Names::new(&node_names, &key_names);
    let header = HistoryHeader::of_model_checker(CausalMesh::ENTRY.name);
    writer.header(&header).expect("in memory");
    let mut id = 0;
    for (index, s) in sessions(state).enumerate() {
        let name = session_name(index);
        for (function, record) in s.records.iter().enumerate() {
            let session = SessionRef {
                workflow_name: Some(&name),
                workflow_id: index as u64,
                attempt: 1,
                function: function as u32,
                per_function: false,
            };
            writer.write(id, session, &[], record, &names).expect("in memory");
            id += 1;
        }
    }
    buf.text()
}

/// The history checker's report on a state's history (level `ccv`).
///
/// The history is the text a run writes, each line read as the checker's record, then built
/// in memory: the file reader's second thread (it overlaps parsing with building) would cost
/// more than the check of a model's few transactions, thousands of times per second.
pub fn check_history(cfg: &MeshConfig, state: &MeshModelState) -> Report {
    let text = history_text(cfg, state);
    let records: Vec<causim_checkers::TxnRecord> = text
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str(line).expect("the simulator's history lines are the checker's records"))
        .collect();
    let history = causim_checkers::History::from_records(None, &records).expect("the simulator's history is well formed");
    // One thread: the model checker's threads already use every core.
    let options = causim_checkers::CheckOptions { threads: 1, ..causim_checkers::CheckOptions::default() };
    causim_checkers::check_with(&history, Level::Ccv, &options)
}

/// The anomaly names the checker reports on a state's history, sorted.
pub fn anomalies(cfg: &MeshConfig, state: &MeshModelState) -> Vec<String> {
    check_history(cfg, state).counts.keys().map(|a| a.name().to_string()).collect()
}

/// Runs a model to completion (or to the first failure of an `always` property) on `threads`
/// threads, breadth first, keeping each property's first counterexample: on one thread, a
/// shortest one.
pub fn check(model: MeshModel, threads: usize, stop_at_first_failure: bool) -> impl stateright::Checker<MeshModel> {
    use stateright::{Checker as _, HasDiscoveries};
    let mut builder = model.first_only().checker().threads(threads.max(1));
    if stop_at_first_failure {
        builder = builder.finish_when(HasDiscoveries::AnyFailures);
    }
    builder.spawn_bfs().join()
}

/// The `always` property broken first, as TLC would report it (none, or one): the one with the
/// shortest counterexample (breadth first; a step of the model is an action of the TLA+ spec),
/// ties going to the first in declaration order, which is the order TLC checks the spec's
/// invariants in. A check stopped at its first failure may have found others in the same
/// round: they break later, or at the same depth after this one in TLC's order.
pub fn failing_properties(checker: &impl stateright::Checker<MeshModel>) -> Vec<&'static str> {
    use stateright::Model as _;
    let found: Vec<(&'static str, usize)> = checker
        .model()
        .properties()
        .into_iter()
        .filter(|p| p.expectation.discovery_is_failure())
        .filter_map(|p| checker.discovery(p.name).map(|path| (p.name, path.into_actions().len())))
        .collect();
    // `min_by_key` keeps the first of equal minima.
    found.into_iter().min_by_key(|(_, steps)| *steps).map(|(name, _)| name).into_iter().collect()
}

/// The id of actor `index`, for building expected discovery paths.
pub fn id(index: usize) -> Id {
    actor_id(NodeId::fixed(index))
}

// ---------------------------------------------------------------------------------------------
// Scripts as text

/// Parses scripts: sessions separated by `;`, steps by `,`; a step is `r(k1)@S0`, `w(k2)@S1`
/// or `rt(k1+k2)@S0`. Example: `"w(k1)@S0, w(k2)@S0; r(k2)@S1, r(k1)@S1"`.
pub fn parse_scripts(text: &str) -> Result<Vec<Vec<Step>>, String> {
    let key = |s: &str| -> Result<Key, String> {
        let n: Key = s.trim().strip_prefix('k').and_then(|n| n.parse().ok()).ok_or(format!("bad key {s:?} (keys are k1, k2, ...)"))?;
        if n == 0 {
            return Err(format!("bad key {s:?} (keys are k1, k2, ...)"));
        }
        Ok(n - 1)
    };
    let mut sessions = Vec::new();
    for session in text.split(';') {
        let mut steps = Vec::new();
        for step in session.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let err = || format!("bad step {step:?}: expected r(k1)@S0, w(k1)@S0 or rt(k1+k2)@S0");
            let (op, server) = step.split_once('@').ok_or_else(err)?;
            let server: usize = server.trim().strip_prefix('S').and_then(|n| n.parse().ok()).ok_or_else(err)?;
            let (name, args) = op.trim().strip_suffix(')').and_then(|o| o.split_once('(')).ok_or_else(err)?;
            let op = match name {
                "r" => StepOp::Read(key(args)?),
                "w" => StepOp::Write(key(args)?),
                "rt" => {
                    let mut ks = args.split('+').map(key).collect::<Result<Vec<_>, _>>()?;
                    ks.sort_unstable();
                    ks.dedup();
                    StepOp::ReadTxn(ks)
                }
                _ => return Err(err()),
            };
            steps.push(Step { op, server });
        }
        sessions.push(steps);
    }
    Ok(sessions)
}

/// The text form of one step (`w(k1)@S0`).
pub fn format_step(step: &Step) -> String {
    let op = match &step.op {
        StepOp::Read(k) => format!("r({})", key_name(*k)),
        StepOp::Write(k) => format!("w({})", key_name(*k)),
        StepOp::ReadTxn(ks) => format!("rt({})", ks.iter().map(|k| key_name(*k)).collect::<Vec<_>>().join("+")),
    };
    format!("{op}@S{}", step.server)
}

/// The text form of scripts (what [`parse_scripts`] reads).
pub fn format_scripts(scripts: &[Vec<Step>]) -> String {
    scripts.iter().map(|s| s.iter().map(format_step).collect::<Vec<_>>().join(", ")).collect::<Vec<_>>().join("; ")
}
