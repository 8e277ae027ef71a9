//! Boki's metalog under Stateright: the `models/` engine, storage nodes, sequencers and
//! controller, unchanged, on the bounds of the TLA+ spec's configs (`specs/boki/*.cfg`): one
//! shard (one function node), 2 storage nodes (each stores the shard), 3 sequencers, terms 0–1,
//! at most one crash of a storage node or a sequencer, seals on a failure or at will.
//!
//! # What is explored
//!
//! - **Nodes** are the `BokiNode`s `Boki::build` makes from the same parameters and mutants a
//!   scenario gives (`n_data` = 2, `n_meta` = 3, a controller). Every interleaving of their
//!   messages on a FIFO network (the spec's reliable FIFO links) is explored; their cut and
//!   progress timers fire at any time.
//! - **Appends** come from functions (`Client`s the protocol spawns), one append each; the
//!   spec's `LogAppend` is the delivery of a function's append to its engine. Functions append
//!   in a fixed order (function `c` only after `c − 1`: they are interchangeable, so the order
//!   loses no behaviour and keeps their identities out of the state space), at most
//!   `appends_per_term` per term, and only while no seal runs (as the spec's `LogAppend`).
//! - **A step is one of the spec's actions**: an append reaching its engine (`LogAppend`), a
//!   record reaching a storage node (`Store`), a progress report (`Report`, the storage node's
//!   timer), a cut (`Cut`, the primary's timer), an entry reaching a backup (`Replicate`), an
//!   entry reaching the engine (`ApplyEntry`), a seal reaching a sequencer (`Freeze`), a crash,
//!   and the controller's check and installation below. The messages that only carry a step's
//!   effect on are delivered with it ([`BokiModel::next_state`]): progress reports reaching the
//!   primary, acknowledgements of backups (so the primary propagates as soon as a quorum holds
//!   an entry, the spec's `Propagate`), a sequencer's answer to a seal, a new term's
//!   configuration (installed everywhere at once, as the spec's `Install`), answers to
//!   functions, and what storage nodes receive of the metalog and send to the index. A storage
//!   node's application of the metalog changes nothing another node sees (no reads run here),
//!   and every property of applied entries is closed under prefixes, so applying at once hides
//!   no violation a slower storage node could show.
//! - **Failure detection** is the host's, since Stateright has no clock: heartbeats are not
//!   sent, and the controller's session check is a step the model offers when the primary
//!   sequencer or one of the term's storage nodes has crashed, or (with `admin_seals`) at any
//!   time in a term that may still end, as the spec's `StartSeal`. Before the check, the host
//!   delivers a heartbeat of every live node at a time that expires the sessions of crashed
//!   nodes; a seal with nothing crashed is a false suspicion of the primary (it is not heard).
//!   The installation of the next term is a step too, offered once the seal is done and a
//!   sequencer and a storage node live (the spec's `Install`); every live node is heard first.
//! - **Crashes** are crash-stop (no recovery), of a storage node or a sequencer, while the term
//!   may still be sealed (`term < max_term`), as the spec's `Crash`.
//!
//! # Properties (named like the TLA+ invariants)
//!
//! Each is checked per term, on what the nodes hold in that term: their state while they are in
//! it, and what they held when the next term's configuration reached them (a ghost the host
//! keeps, [`Ghost`]). A subscriber's applied entries are those of the metalog messages it
//! received, up to the count it applied.
//!
//! | property | TLA+ | what |
//! |---|---|---|
//! | always "metalog copies agree on a prefix" | `PrefixAgreement` | every sequencer's copy and every subscriber's applied entries are prefixes of the primary's metalog |
//! | always "cuts chain" | `CutsChain` | each entry of the primary's metalog starts where the previous ended; no shard's cut moves back |
//! | always "durability before order" | `DurabilityBeforeOrder` | every record an entry orders is on every storage replica of its term |
//! | always "quorum before visibility" | `QuorumBeforeVisibility` | no subscriber applied an entry a majority of its term's sequencers (the primary's group) lacks; the spec counts all three, the same majority under one crash |
//! | always "seal safety" | `SealSafety` | the final metalog of a sealed term holds every entry any subscriber applied in it, and one outcome per append |
//! | always "one outcome per append" | `OneOutcome` | no append completed with a seqnum is also failed (left out of its term's final metalog, so discarded) |
//! | always "seqnums are unique" | `UniqueSeqnums` | no two completed appends share a seqnum |
//! | always "term order" | `TermOrder` | every seqnum of a later term is above every one of an earlier term |
//! | eventually "every append completes" | `AppendsComplete` | (liveness models only) at every state where nothing more can happen, every append an engine took has completed or failed |
//!
//! Stateright judges an `eventually` property on the paths that end (it finds no lasso), so
//! the predicate holds only at states without a successor: every step here consumes a message or
//! a one-shot timer, seals and crashes are bounded, so every path ends.

use crate::actor::{Hosted, actor_id, forward_outbox, node_id};
use causim_models::Model as _;
use causim_models::boki::{Boki, BokiNode, Entry, Msg, SequencerView, Timer};
use causim_sim::history::TxnRecord;
use causim_sim::node::{Effect, Node, NodeId, Outbox};
use causim_sim::protocol::{FunctionStart, Protocol};
use causim_sim::workload::{LogOp, Op};
use stateright::actor::{Actor, ActorModel, ActorModelAction, ActorModelState, Id, Network, Out};
use stateright::{Model, Property};
use std::borrow::Cow;
use std::collections::BTreeMap;

pub const PREFIX: &str = "metalog copies agree on a prefix";
pub const CUTS_CHAIN: &str = "cuts chain";
pub const DURABLE: &str = "durability before order";
pub const QUORUM: &str = "quorum before visibility";
pub const SEAL_SAFETY: &str = "seal safety";
pub const ONE_OUTCOME: &str = "one outcome per append";
pub const UNIQUE: &str = "seqnums are unique";
pub const TERM_ORDER: &str = "term order";
pub const COMPLETE: &str = "every append completes";

/// The TLA+ name of each property.
pub const TLA_NAMES: [(&str, &str); 9] = [
    (PREFIX, "PrefixAgreement"),
    (CUTS_CHAIN, "CutsChain"),
    (DURABLE, "DurabilityBeforeOrder"),
    (QUORUM, "QuorumBeforeVisibility"),
    (SEAL_SAFETY, "SealSafety"),
    (ONE_OUTCOME, "OneOutcome"),
    (UNIQUE, "UniqueSeqnums"),
    (TERM_ORDER, "TermOrder"),
    (COMPLETE, "AppendsComplete"),
];

pub type BokiActorModel = ActorModel<BokiActor, BokiConfig, ()>;
pub type BokiModelState = ActorModelState<BokiActor, ()>;
pub type BokiStep = ActorModelAction<Msg, Timer, Control>;

/// The controller's session timeout in these models: the host's session check runs at
/// `CHECK_AT` and the installation at `INSTALL_AT`, each a full timeout after the last time a
/// crashed node can have been heard.
const SESSION_TIMEOUT: u64 = 3;
const CHECK_AT: u64 = SESSION_TIMEOUT + 1;
const INSTALL_AT: u64 = 2 * CHECK_AT;

#[derive(Clone, Debug)]
pub struct BokiConfig {
    pub appends_per_term: u64,
    /// Terms are `0..=max_term` (at most `max_term` seals).
    pub max_term: u64,
    pub max_crashes: usize,
    /// A seal may start with nothing failed (the spec's `AdminSeals`).
    pub admin_seals: bool,
    /// Check `eventually` every append completes (costs a successor computation per state).
    pub liveness: bool,
    pub mutants: Vec<String>,
}

impl BokiConfig {
    /// `MC_safety.cfg`: two appends per term, one crash, seals on failure or at will.
    pub fn safety() -> BokiConfig {
        BokiConfig { appends_per_term: 2, max_term: 1, max_crashes: 1, admin_seals: true, liveness: false, mutants: Vec::new() }
    }

    /// The mutants' configs: one append per term, one crash, seals on failure or at will.
    pub fn one_append() -> BokiConfig {
        BokiConfig { appends_per_term: 1, ..BokiConfig::safety() }
    }

    /// `MC_liveness.cfg`: one append per term, one crash, seals on failure only, and the
    /// `eventually` property.
    pub fn liveness() -> BokiConfig {
        BokiConfig { admin_seals: false, liveness: true, ..BokiConfig::one_append() }
    }

    pub fn crashes(mut self, max_crashes: usize) -> BokiConfig {
        self.max_crashes = max_crashes;
        self
    }

    pub fn mutant(mut self, mutant: &str) -> BokiConfig {
        self.mutants.push(mutant.to_string());
        self
    }

    /// The protocol as the simulator builds it from a scenario (mutant names are checked).
    /// Delays only need to be positive: Stateright fires timers in any order.
    pub fn protocol(&self) -> Result<Boki, String> {
        let params = serde_json::json!({
            "storage_nodes": 2, "n_data": 2, "n_meta": 3,
            "local_cut_interval_ns": 1, "global_cut_interval_ns": 1,
            "session_timeout_ns": SESSION_TIMEOUT, "reconfiguration_delay_ns": 1,
        });
        let topology =
            serde_json::from_value(serde_json::json!({"servers": 1, "delay": {"dist": "constant", "ns": 1}})).expect("a valid topology");
        let mutants = causim_models::check_mutants(&Boki::ENTRY, &self.mutants).map_err(|e| e.message)?;
        Boki::build(&params, &mutants, &topology).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    pub fn into_model(self) -> Result<BokiModel, String> {
        let protocol = self.protocol()?;
        let fixed = protocol.fixed_nodes();
        let index = |prefix: char| -> Vec<usize> { (0..fixed.len()).filter(|&i| fixed[i].name.starts_with(prefix)).collect() };
        let roles = Roles { engines: index('S'), storage: index('D'), sequencers: index('Q'), controller: index('C')[0] };
        let first_client = fixed.len();
        let mut actors: Vec<BokiActor> = fixed.into_iter().map(|n| BokiActor { initial: n.node }).collect();
        let engine = NodeId::fixed(roles.engines[0]);
        let clients = self.appends_per_term * (self.max_term + 1);
        for c in 0..clients {
            let append = Op::Log(LogOp::Append { book: 0, tags: Vec::new(), data: c + 1 });
            let node = protocol.spawn_function(FunctionStart {
                self_id: NodeId::fixed(first_client + c as usize),
                workflow_id: c,
                attempt: 1,
                function: 0,
                machine: 0,
                colocated: &[engine],
                ops: vec![append],
                context: protocol.new_context(),
                is_source: true,
                is_sink: true,
                remaining: 0,
                now: 0,
            });
            actors.push(BokiActor { initial: node });
        }
        let max_crashes = self.max_crashes;
        let actors = ActorModel::new(self, ()).actors(actors).init_network(Network::new_ordered([])).max_crashes(max_crashes);
        Ok(BokiModel { actors, roles, first_client })
    }
}

/// The actor index of each role.
#[derive(Clone, Debug)]
pub struct Roles {
    pub engines: Vec<usize>,
    pub storage: Vec<usize>,
    pub sequencers: Vec<usize>,
    pub controller: usize,
}

// ---------------------------------------------------------------------------------------------
// Actors

/// A Boki node as a Stateright actor, with the host's ghost beside it.
#[derive(Clone, Debug)]
pub struct BokiActor {
    pub initial: BokiNode,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BokiState {
    pub hosted: Hosted<BokiNode>,
    pub ghost: Ghost,
}

/// What the host remembers of a node for the properties; it never feeds back into the node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Ghost {
    /// A subscriber: the metalog entries it received, by `(term, index)`.
    received: BTreeMap<(u64, u64), Entry>,
    /// What the node held of each term it has left, when the next configuration reached it.
    past: BTreeMap<u64, Held>,
    /// An engine: the `(term, shard, local id)` each function's append got, by actor index.
    accepted: BTreeMap<usize, (u64, u32, u64)>,
}

/// A node's state in one term, as the properties read it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Held {
    Sequencer {
        primary: bool,
        group: usize,
        metalog: Vec<Entry>,
        replicas: Vec<Vec<NodeId>>,
    },
    /// The entries applied, and (a storage node) the received prefix of each shard.
    Subscriber {
        applied: Vec<Entry>,
        progress: BTreeMap<u32, u64>,
    },
}

/// The host's steps of the controller, each with the nodes it hears from first.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Control {
    Check(Vec<usize>),
    Install(Vec<usize>),
}

impl Ghost {
    fn applied(&self, term: u64, count: u64) -> Vec<Entry> {
        self.received.range((term, 0)..(term, count)).map(|(_, e)| e.clone()).collect()
    }

    /// Before `msg` reaches `node`: note an accepted append, a received entry, or the end of
    /// the node's term.
    fn before(&mut self, node: &BokiNode, src: Id, msg: &Msg) {
        match msg {
            Msg::Append { .. } => {
                if let (Some((shard, local)), Some((term, _))) = (node.engine_next_local_id(), node.subscriber_view()) {
                    self.accepted.insert(usize::from(src), (term, shard, local));
                }
            }
            // An entry of a term the node has left is dropped unapplied.
            Msg::Metalog { entry } if node.subscriber_view().is_some_and(|(term, _)| entry.term >= term) => {
                self.received.insert((entry.term, entry.index), entry.clone());
            }
            Msg::NewTerm(_) => self.leave_term(node),
            _ => {}
        }
    }

    fn leave_term(&mut self, node: &BokiNode) {
        let held = if let Some(q) = node.sequencer_view() {
            Some((
                q.term,
                Held::Sequencer { primary: q.primary, group: q.group, metalog: q.metalog.to_vec(), replicas: q.replicas.to_vec() },
            ))
        } else {
            node.subscriber_view().map(|(term, applied)| {
                let progress = node.storage_progress().cloned().unwrap_or_default();
                (term, Held::Subscriber { applied: self.applied(term, applied), progress })
            })
        };
        // A configuration of a term the node is not in yet is held by the node (or ignored):
        // only one of its own term ends it.
        if let Some((term, held)) = held {
            self.past.entry(term).or_insert(held);
        }
    }
}

impl BokiActor {
    /// Carries out a node's effects without the failure detector's (heartbeats, and the
    /// controller's own timers): the host plays those (see the module docs).
    fn forward(hosted: &mut Hosted<BokiNode>, mut outbox: Outbox<Msg, Timer>, o: &mut Out<Self>) {
        let detector = |t: &Timer| matches!(t, Timer::Heartbeat | Timer::Check | Timer::Install);
        outbox.effects.retain(|e| match e {
            Effect::Send { msg: Msg::Alive { .. }, .. } => false,
            Effect::SetTimer { timer, .. } | Effect::CancelTimer { timer } => !detector(timer),
            _ => true,
        });
        forward_outbox(hosted, outbox, o);
    }
}

impl Actor for BokiActor {
    type Msg = Msg;
    type Timer = Timer;
    type State = BokiState;
    type Storage = ();
    type Random = Control;

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> BokiState {
        let mut hosted = Hosted { node: self.initial.clone(), records: Vec::new(), done: false, aborted: None };
        let mut outbox = Outbox::new(false);
        hosted.node.on_start(0, &mut outbox);
        Self::forward(&mut hosted, outbox, o);
        BokiState { hosted, ghost: Ghost::default() }
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<BokiState>, src: Id, msg: Msg, o: &mut Out<Self>) {
        let BokiState { hosted, ghost } = state.to_mut();
        ghost.before(&hosted.node, src, &msg);
        let mut outbox = Outbox::new(false);
        hosted.node.on_message(0, node_id(src), msg, &mut outbox);
        Self::forward(hosted, outbox, o);
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<BokiState>, timer: &Timer, o: &mut Out<Self>) {
        let hosted = &mut state.to_mut().hosted;
        let mut outbox = Outbox::new(false);
        hosted.node.on_timer(0, timer.clone(), &mut outbox);
        Self::forward(hosted, outbox, o);
    }

    /// The controller's session check or installation, after the heartbeats of `heard`.
    fn on_random(&self, _id: Id, state: &mut Cow<BokiState>, random: &Control, o: &mut Out<Self>) {
        let hosted = &mut state.to_mut().hosted;
        let (now, heard, timer) = match random {
            Control::Check(heard) => (CHECK_AT, heard, Timer::Check),
            Control::Install(heard) => (INSTALL_AT, heard, Timer::Install),
        };
        let mut outbox = Outbox::new(false);
        for &n in heard {
            hosted.node.on_message(now, NodeId::fixed(n), Msg::Alive { incarnation: 0 }, &mut outbox);
        }
        hosted.node.on_timer(now, timer, &mut outbox);
        Self::forward(hosted, outbox, o);
    }
}

// ---------------------------------------------------------------------------------------------
// The model

/// The Stateright model: the actor model, with the host's environment (appends in order,
/// crash-stop failures, the controller's failure detection) and instant deliveries.
pub struct BokiModel {
    pub actors: BokiActorModel,
    pub roles: Roles,
    /// Actors before it are nodes, from it on functions.
    pub first_client: usize,
}

/// A sequencer's copy of one term's metalog.
struct MetalogCopy<'a> {
    primary: bool,
    group: usize,
    metalog: &'a [Entry],
    replicas: &'a [Vec<NodeId>],
}

/// A completed or failed append: its function, `(term, shard, local id)`, and seqnum if ordered.
struct Outcome {
    id: (u64, u32, u64),
    seqnum: Option<u64>,
}

impl BokiModel {
    pub fn cfg(&self) -> &BokiConfig {
        &self.actors.cfg
    }

    fn node<'a>(&self, s: &'a BokiModelState, i: usize) -> &'a BokiNode {
        &s.actor_states[i].hosted.node
    }

    fn ghost<'a>(&self, s: &'a BokiModelState, i: usize) -> &'a Ghost {
        &s.actor_states[i].ghost
    }

    fn controller<'a>(&self, s: &'a BokiModelState) -> causim_models::boki::ControllerView<'a> {
        self.node(s, self.roles.controller).controller_view().expect("the controller")
    }

    fn crashed(&self, s: &BokiModelState, i: usize) -> bool {
        s.crashed[i]
    }

    fn index_of(&self, n: NodeId) -> usize {
        usize::from(actor_id(n))
    }

    /// Terms some node has reached.
    fn terms(&self, s: &BokiModelState) -> std::ops::RangeInclusive<u64> {
        0..=self.controller(s).term
    }

    fn copy_in<'a>(&self, s: &'a BokiModelState, q: usize, term: u64) -> Option<MetalogCopy<'a>> {
        let view: SequencerView<'a> = self.node(s, q).sequencer_view()?;
        if view.term == term {
            return Some(MetalogCopy { primary: view.primary, group: view.group, metalog: view.metalog, replicas: view.replicas });
        }
        match self.ghost(s, q).past.get(&term)? {
            Held::Sequencer { primary, group, metalog, replicas } => {
                Some(MetalogCopy { primary: *primary, group: *group, metalog, replicas })
            }
            Held::Subscriber { .. } => None,
        }
    }

    fn primary_in<'a>(&self, s: &'a BokiModelState, term: u64) -> Option<MetalogCopy<'a>> {
        self.roles.sequencers.iter().filter_map(|&q| self.copy_in(s, q, term)).find(|c| c.primary)
    }

    /// A subscriber's applied entries in `term`, and (a storage node) its received prefixes.
    fn applied_in(&self, s: &BokiModelState, sub: usize, term: u64) -> Option<(Vec<Entry>, BTreeMap<u32, u64>)> {
        let node = self.node(s, sub);
        let (now, applied) = node.subscriber_view()?;
        if now == term {
            return Some((self.ghost(s, sub).applied(term, applied), node.storage_progress().cloned().unwrap_or_default()));
        }
        match self.ghost(s, sub).past.get(&term)? {
            Held::Subscriber { applied, progress } => Some((applied.clone(), progress.clone())),
            Held::Sequencer { .. } => None,
        }
    }

    fn subscribers(&self) -> impl Iterator<Item = usize> + '_ {
        self.roles.engines.iter().chain(&self.roles.storage).copied()
    }

    /// The appends that completed or failed, as their functions saw them.
    fn outcomes(&self, s: &BokiModelState) -> Vec<Outcome> {
        let accepted = &self.ghost(s, self.roles.engines[0]).accepted;
        (self.first_client..s.actor_states.len())
            .filter_map(|c| {
                let record: &TxnRecord = s.actor_states[c].hosted.records.first()?;
                let seqnum = record.ops.first().and_then(|op| op.log.as_ref()).and_then(|l| l.seqnum);
                Some(Outcome { id: accepted[&c], seqnum })
            })
            .collect()
    }

    fn prefix_agreement(&self, s: &BokiModelState) -> bool {
        self.terms(s).all(|t| {
            let Some(p) = self.primary_in(s, t) else { return true };
            self.roles.sequencers.iter().filter_map(|&q| self.copy_in(s, q, t)).all(|c| p.metalog.starts_with(c.metalog))
                && self.subscribers().filter_map(|sub| self.applied_in(s, sub, t)).all(|(a, _)| p.metalog.starts_with(&a))
        })
    }

    fn cuts_chain(&self, s: &BokiModelState) -> bool {
        self.terms(s).all(|t| {
            let Some(p) = self.primary_in(s, t) else { return true };
            p.metalog.iter().enumerate().all(|(i, e)| {
                let starts = if i == 0 { e.start.iter().all(|&x| x == 0) } else { e.start == p.metalog[i - 1].end };
                starts && e.start.iter().zip(&e.end).all(|(a, b)| a <= b)
            })
        })
    }

    fn durability_before_order(&self, s: &BokiModelState) -> bool {
        self.terms(s).all(|t| {
            let Some(p) = self.primary_in(s, t) else { return true };
            p.metalog.iter().all(|e| {
                p.replicas.iter().enumerate().all(|(j, nodes)| {
                    nodes.iter().all(|&d| {
                        let progress = self.applied_in(s, self.index_of(d), t).map(|(_, p)| p).unwrap_or_default();
                        e.end[j] <= progress.get(&(j as u32)).copied().unwrap_or(0)
                    })
                })
            })
        })
    }

    fn quorum_before_visibility(&self, s: &BokiModelState) -> bool {
        self.terms(s).all(|t| {
            let Some(p) = self.primary_in(s, t) else { return true };
            let lengths: Vec<usize> =
                self.roles.sequencers.iter().filter_map(|&q| self.copy_in(s, q, t)).map(|c| c.metalog.len()).collect();
            let quorum_len =
                (0..=p.metalog.len()).filter(|&n| 2 * lengths.iter().filter(|&&l| l >= n).count() > p.group).max().unwrap_or(0);
            self.subscribers().filter_map(|sub| self.applied_in(s, sub, t)).all(|(a, _)| a.len() <= quorum_len)
        })
    }

    /// No append completed with a seqnum is left out of its term's final metalog.
    fn one_outcome(&self, s: &BokiModelState) -> bool {
        let finals = self.controller(s).finals;
        self.outcomes(s).iter().filter(|o| o.seqnum.is_some()).all(|o| {
            let (t, shard, local) = o.id;
            finals.get(t as usize).is_none_or(|f| f.last().is_some_and(|e| local < e.end[shard as usize]))
        })
    }

    fn seal_safety(&self, s: &BokiModelState) -> bool {
        let finals = self.controller(s).finals;
        let kept = finals
            .iter()
            .enumerate()
            .all(|(t, f)| self.subscribers().filter_map(|sub| self.applied_in(s, sub, t as u64)).all(|(a, _)| f.starts_with(&a)));
        kept && self.one_outcome(s)
    }

    fn ordered(&self, s: &BokiModelState) -> Vec<(u64, u64)> {
        self.outcomes(s).iter().filter_map(|o| o.seqnum.map(|n| (o.id.0, n))).collect()
    }

    fn unique_seqnums(&self, s: &BokiModelState) -> bool {
        let ordered = self.ordered(s);
        ordered.iter().enumerate().all(|(i, a)| ordered[i + 1..].iter().all(|b| a.1 != b.1))
    }

    fn term_order(&self, s: &BokiModelState) -> bool {
        let ordered = self.ordered(s);
        ordered.iter().all(|a| ordered.iter().all(|b| a.0 >= b.0 || a.1 < b.1))
    }

    /// Nothing more can happen, and every append an engine took has an outcome.
    fn all_complete_at_the_end(&self, s: &BokiModelState) -> bool {
        let accepted = self.ghost(s, self.roles.engines[0]).accepted.len();
        if self.outcomes(s).len() < accepted {
            return false;
        }
        let mut actions = Vec::new();
        self.actions(s, &mut actions);
        actions.into_iter().all(|a| self.next_state(s, a).is_none())
    }

    /// Whether a message is delivered with the step that sends it (see the module docs).
    fn instant(&self, dst: Id, msg: &Msg) -> bool {
        usize::from(dst) >= self.first_client
            || matches!(msg, Msg::Metalog { .. } if self.roles.storage.contains(&usize::from(dst)))
            || matches!(msg, Msg::IndexData { .. } | Msg::Progress { .. } | Msg::MetaAck { .. } | Msg::Sealed { .. } | Msg::NewTerm(_))
    }

    /// Function `c` may append now: every earlier function has, its engine's term has room,
    /// and no seal runs.
    fn may_append(&self, s: &BokiModelState, c: usize) -> bool {
        let engine = self.roles.engines[0];
        let (_, next) = self.node(s, engine).engine_next_local_id().expect("an engine");
        let control = self.controller(s);
        self.ghost(s, engine).accepted.len() == c - self.first_client
            && next < self.cfg().appends_per_term
            && !control.sealing
            && !control.installing
    }

    /// The controller's steps the host offers (see the module docs).
    fn control_steps(&self, s: &BokiModelState, actions: &mut Vec<BokiStep>) {
        let control = self.controller(s);
        let live = |ids: &[usize]| -> Vec<usize> { ids.iter().copied().filter(|&i| !self.crashed(s, i)).collect() };
        let watched: Vec<usize> = live(&self.roles.storage).into_iter().chain(live(&self.roles.sequencers)).collect();
        let actor = Id::from(self.roles.controller);
        if !control.sealing && !control.installing && control.term < self.cfg().max_term {
            let primary = self.index_of(control.primary);
            let failed = self.crashed(s, primary) || self.roles.storage.iter().any(|&d| self.crashed(s, d));
            if failed || self.cfg().admin_seals {
                let heard = watched.iter().copied().filter(|&n| failed || n != primary).collect();
                actions.push(ActorModelAction::SelectRandom { actor, key: "check".into(), random: Control::Check(heard) });
            }
        }
        if control.installing && !live(&self.roles.storage).is_empty() && !live(&self.roles.sequencers).is_empty() {
            actions.push(ActorModelAction::SelectRandom { actor, key: "install".into(), random: Control::Install(watched) });
        }
    }
}

impl Model for BokiModel {
    type State = BokiModelState;
    type Action = BokiStep;

    fn init_states(&self) -> Vec<BokiModelState> {
        self.actors.init_states()
    }

    fn actions(&self, s: &BokiModelState, actions: &mut Vec<BokiStep>) {
        let mut all = Vec::new();
        self.actors.actions(s, &mut all);
        let may_crash = self.controller(s).term < self.cfg().max_term;
        actions.extend(all.into_iter().filter(|a| match a {
            ActorModelAction::Deliver { src, msg: Msg::Append { .. }, .. } => self.may_append(s, usize::from(*src)),
            ActorModelAction::Crash(id) => {
                may_crash && (self.roles.storage.contains(&usize::from(*id)) || self.roles.sequencers.contains(&usize::from(*id)))
            }
            ActorModelAction::Recover(_) | ActorModelAction::SelectRandom { .. } | ActorModelAction::Drop(_) => false,
            ActorModelAction::Deliver { .. } | ActorModelAction::Timeout(..) => true,
        }));
        self.control_steps(s, actions);
    }

    /// The step, then every answer to a function and every index tag message, at once.
    fn next_state(&self, s: &BokiModelState, step: BokiStep) -> Option<BokiModelState> {
        let mut state = self.actors.next_state(s, step)?;
        while let Some(now) = state
            .network
            .iter_deliverable()
            .find(|e| !state.crashed[usize::from(e.dst)] && self.instant(e.dst, e.msg))
            .map(|e| ActorModelAction::Deliver { src: e.src, dst: e.dst, msg: e.msg.clone() })
        {
            state = self.actors.next_state(&state, now)?;
        }
        Some(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = vec![
            Property::always(PREFIX, |m: &BokiModel, s: &BokiModelState| m.prefix_agreement(s)),
            Property::always(CUTS_CHAIN, |m: &BokiModel, s: &BokiModelState| m.cuts_chain(s)),
            Property::always(DURABLE, |m: &BokiModel, s: &BokiModelState| m.durability_before_order(s)),
            Property::always(QUORUM, |m: &BokiModel, s: &BokiModelState| m.quorum_before_visibility(s)),
            Property::always(SEAL_SAFETY, |m: &BokiModel, s: &BokiModelState| m.seal_safety(s)),
            Property::always(ONE_OUTCOME, |m: &BokiModel, s: &BokiModelState| m.one_outcome(s)),
            Property::always(UNIQUE, |m: &BokiModel, s: &BokiModelState| m.unique_seqnums(s)),
            Property::always(TERM_ORDER, |m: &BokiModel, s: &BokiModelState| m.term_order(s)),
        ];
        if self.cfg().liveness {
            properties.push(Property::eventually(COMPLETE, |m: &BokiModel, s: &BokiModelState| m.all_complete_at_the_end(s)));
        }
        properties
    }
}
