//! MuCache under Stateright: the `models/` service and client nodes, unchanged, running the
//! applications and clients of the TLA+ spec's configs (`specs/mucache/MC_apps.tla`) on an
//! ordered network.
//!
//! # What is explored
//!
//! - **Services** are MuCache `MuNode::Service`s built from a scenario's `params` (the chain
//!   F → M → B, or Fig. 4's diamond S1..S4), unsharded, without batching or memory limits.
//!   Their CM steps, late saves and delayed writes are timers, which Stateright fires in any
//!   order: the CM processes its queue's head whenever, as the spec's `CMStep`.
//! - **Clients** are the client nodes the simulator spawns (`Protocol::spawn_function`), one
//!   per spec client, issuing their requests one after the other.
//! - **A step** is one message delivered or one timer fired; replies to clients are delivered
//!   at once (`crate::actor::settle`: a reply changes only its client). The network is FIFO
//!   per pair of nodes, so CM-to-CM links are FIFO (Fig. 6), and an RPC response and a Save
//!   from the same callee share that order (the spec's links are separate from its RPCs).
//!
//! # Properties (named like the TLA+ invariants)
//!
//! | property | TLA+ | what |
//! |---|---|---|
//! | always "every finished request is cache-free equivalent" | `CacheFreeEquivalent` | the history checker at level `cache-free` on the clients' records, whenever no request runs |
//! | always "quiescent caches are coherent" | `QuiescentCoherence` | with nothing in flight (no message, no timer), the simulator's `incoherent_entries` is 0 |
//! | sometimes "a call hits the cache" | `NotHit` (violated) | witness |

use crate::actor::{Hosted, NodeActor, actor_id};
use causim_checkers::{Level, Report};
use causim_models::Model as _;
use causim_models::metrics;
use causim_models::mucache::{MuCache, MuNode};
use causim_sim::history::{HistoryHeader, HistoryWriter, Key, Names, SessionRef, TxnRecord};
use causim_sim::node::{Node, NodeId};
use causim_sim::protocol::{FunctionStart, Protocol};
use causim_sim::workload::Op;
use stateright::actor::{ActorModel, ActorModelAction, ActorModelState, Id, Network};
use stateright::{Model, Property};

pub const CACHE_FREE: &str = "every finished request is cache-free equivalent";
pub const COHERENT: &str = "quiescent caches are coherent";
pub const HIT: &str = "a call hits the cache";

pub type MuActor = NodeActor<MuNode>;
pub type MuActorModel = ActorModel<MuActor, MuConfig, ()>;
pub type MuModelState = ActorModelState<MuActor, ()>;
pub type MuStep = ActorModelAction<<MuNode as Node>::Msg, <MuNode as Node>::Timer, ()>;

/// The key every request carries (the spec's `k`; the applications read and write key `k` of
/// the request's argument).
const K: Key = 0;

/// F.read → M.get → B.get (reads k, then calls A.get, which has no steps); B.put writes k.
/// The spec's `Chain*`.
const CHAIN: &str = r#"[
  {"name":"F","endpoints":[{"name":"read","ro":true,"steps":[{"call":"M.get"}]}]},
  {"name":"M","endpoints":[{"name":"get","ro":true,"steps":[{"call":"B.get"}]}]},
  {"name":"B","endpoints":[{"name":"get","ro":true,"steps":[{"read":"k"},{"call":"A.get"}]},{"name":"put","steps":[{"write":"k"}]}]},
  {"name":"A","endpoints":[{"name":"get","ro":true,"steps":[]}]}
]"#;

/// Fig. 4: S1.upd calls S2.upd (S4.put writes k), then S3.get (S4.get reads k); S1.read calls
/// S3.get. The spec's `Diamond*`.
const DIAMOND: &str = r#"[
  {"name":"S1","endpoints":[
    {"name":"read","ro":true,"steps":[{"call":"S3.get"}]},
    {"name":"upd","steps":[{"call":"S2.upd"},{"call":"S3.get"}]}]},
  {"name":"S2","endpoints":[{"name":"upd","steps":[{"call":"S4.put"}]}]},
  {"name":"S3","endpoints":[{"name":"get","ro":true,"steps":[{"call":"S4.get"}]}]},
  {"name":"S4","endpoints":[{"name":"get","ro":true,"steps":[{"read":"k"}]},{"name":"put","steps":[{"write":"k"}]}]}
]"#;

#[derive(Clone, Debug)]
pub struct MuConfig {
    /// The `params.services` of a scenario.
    pub services: &'static str,
    pub read: &'static str,
    pub write: &'static str,
    /// Each client's requests, in order: `true` a write (the write entry), `false` a read.
    pub clients: Vec<Vec<bool>>,
    /// Our fix of X11 (`params.refusal_invalidates`); false is Fig. 5 literally.
    pub refusal_invalidates: bool,
    pub mutants: Vec<String>,
}

impl MuConfig {
    /// `MC_chain.cfg`: client r reads twice in a row, w writes once.
    pub fn chain_two_reads() -> MuConfig {
        MuConfig {
            services: CHAIN,
            read: "F.read",
            write: "B.put",
            clients: vec![vec![false, false], vec![true]],
            refusal_invalidates: true,
            mutants: Vec::new(),
        }
    }

    /// The mutants' chain configs: r reads once, w writes once.
    pub fn chain_one_read() -> MuConfig {
        MuConfig { clients: vec![vec![false], vec![true]], ..MuConfig::chain_two_reads() }
    }

    /// `MC_diamond.cfg`: r reads S3.get through S1, u writes k through S2 and then reads it
    /// back through S3.
    pub fn diamond() -> MuConfig {
        MuConfig { services: DIAMOND, read: "S1.read", write: "S1.upd", ..MuConfig::chain_one_read() }
    }

    pub fn mutant(mut self, mutant: &str) -> MuConfig {
        self.mutants.push(mutant.to_string());
        self
    }

    /// Fig. 5 literally: a refused save sends nothing upstream (X11).
    pub fn literal_refusal(mut self) -> MuConfig {
        self.refusal_invalidates = false;
        self
    }

    /// The protocol as the simulator builds it from a scenario (mutant names are checked).
    /// Delays only need to be positive: Stateright fires timers in any order. A write takes
    /// effect in a later step only for `inv_before_write` (the spec's split write), and saves
    /// land late only for the mutants that need it.
    pub fn protocol(&self) -> Result<MuCache, String> {
        let services: serde_json::Value = serde_json::from_str(self.services).expect("the applications are JSON");
        let has = |m: &str| self.mutants.iter().any(|x| x == m);
        let params = serde_json::json!({
            "services": services,
            "entry": {"read": self.read, "write": self.write},
            "refusal_invalidates": self.refusal_invalidates,
            "write_ns": u64::from(has("inv_before_write")),
            "save_delay_ns": u64::from(has("caller_side_save") || has("non_fifo_save")),
        });
        let topology =
            serde_json::from_value(serde_json::json!({"servers": 1, "delay": {"dist": "constant", "ns": 1}})).expect("a valid topology");
        let mutants = causim_models::check_mutants(&MuCache::ENTRY, &self.mutants).map_err(|e| e.message)?;
        MuCache::build(&params, &mutants, &topology).map_err(|e| format!("{}: {}", e.path, e.message))
    }

    pub fn into_model(self) -> Result<MuModel, String> {
        let protocol = self.protocol()?;
        let services: Vec<MuActor> = protocol.fixed_nodes().into_iter().map(|n| NodeActor { initial: n.node }).collect();
        let first_client = services.len();
        let mut actors = services;
        for (c, requests) in self.clients.iter().enumerate() {
            let ops = requests
                .iter()
                .enumerate()
                .map(|(i, &write)| if write { Op::Write { key: K, value: i as u64 + 1 } } else { Op::Read { key: K } })
                .collect();
            let node = protocol.spawn_function(FunctionStart {
                self_id: NodeId::fixed(first_client + c),
                workflow_id: c as u64,
                attempt: 1,
                function: 0,
                machine: 0,
                colocated: &[],
                ops,
                context: (),
                is_source: true,
                is_sink: true,
                remaining: 0,
                now: 0,
            });
            actors.push(NodeActor { initial: node });
        }
        let actors = ActorModel::new(self, ()).actors(actors).init_network(Network::new_ordered([]));
        Ok(MuModel { actors, protocol, first_client })
    }
}

/// The Stateright model: the actor model, with replies to clients delivered at once.
pub struct MuModel {
    pub actors: MuActorModel,
    pub protocol: MuCache,
    /// Actors before it are services, from it on clients.
    pub first_client: usize,
}

impl MuModel {
    pub fn cfg(&self) -> &MuConfig {
        &self.actors.cfg
    }

    fn is_client(&self, id: Id) -> bool {
        usize::from(id) >= self.first_client
    }

    fn services<'a>(&self, state: &'a MuModelState) -> Vec<&'a MuNode> {
        state.actor_states[..self.first_client].iter().map(|h| &h.node).collect()
    }

    fn clients<'a>(&self, state: &'a MuModelState) -> impl Iterator<Item = &'a Hosted<MuNode>> {
        state.actor_states[self.first_client..].iter().map(|h| &**h)
    }

    /// No request runs: every client's current request, if any, is still in the network (a
    /// client has one message in flight at most, so it is deliverable; Stateright 0.31's
    /// `iter_all` loops forever on an ordered network with two messages on one link).
    pub fn idle(&self, state: &MuModelState) -> bool {
        self.clients(state).enumerate().all(|(c, h)| {
            let sent = h.records.len() < self.cfg().clients[c].len();
            !sent || state.network.iter_deliverable().any(|e| e.src == actor_id(NodeId::fixed(self.first_client + c)))
        })
    }

    /// Nothing is in flight: no message, no timer (a CM step, a late save, a write).
    pub fn quiescent(&self, state: &MuModelState) -> bool {
        state.network.len() == 0 && state.timers_set.iter().all(|t| t.iter().next().is_none())
    }

    /// The simulator's quiescent-coherence metric on the services' caches and stores.
    pub fn incoherent_entries(&self, state: &MuModelState) -> f64 {
        let metrics = self.protocol.final_metrics(&self.services(state));
        metrics.iter().find(|(name, _)| name == metrics::INCOHERENT_ENTRIES).map(|(_, v)| *v).expect("MuCache reports it")
    }

    /// The clients' records as a history, checked at level `cache-free`.
    pub fn check_history(&self, state: &MuModelState) -> Report {
        let buf = causim_sim::buffer::SharedBuffer::default();
        let mut writer = HistoryWriter::new(Box::new(buf.clone()));
        let node_names: Vec<String> = (0..state.actor_states.len()).map(|i| format!("n{i}")).collect();
        let names = Names::new(&node_names, &["k".to_string()]);
        let header = HistoryHeader::of_model_checker(MuCache::ENTRY.name);
        writer.header(&header).expect("in memory");
        let mut id = 0;
        for (c, client) in self.clients(state).enumerate() {
            let name = format!("c{c}");
            for record in &client.records {
                let session =
                    SessionRef { workflow_name: Some(&name), workflow_id: c as u64, attempt: 1, function: 0, per_function: false };
                writer.write(id, session, &[], record, &names).expect("in memory");
                id += 1;
            }
        }
        // Read as a file would be: call trees are a field of the line the record type omits.
        let history = causim_checkers::read_history(buf.text().as_bytes(), None).expect("the simulator's history is well formed");
        let options = causim_checkers::CheckOptions { threads: 1, ..causim_checkers::CheckOptions::default() };
        causim_checkers::check_with(&history, Level::CacheFree, &options)
    }

    fn any_hit(&self, state: &MuModelState) -> bool {
        self.clients(state).flat_map(|h| &h.records).any(|r: &TxnRecord| r.call.as_deref().is_some_and(|c| c.contains("\"hit\"")))
    }
}

impl Model for MuModel {
    type State = MuModelState;
    type Action = MuStep;

    fn init_states(&self) -> Vec<MuModelState> {
        self.actors.init_states()
    }

    fn actions(&self, state: &MuModelState, actions: &mut Vec<MuStep>) {
        self.actors.actions(state, actions);
    }

    fn next_state(&self, state: &MuModelState, step: MuStep) -> Option<MuModelState> {
        crate::actor::settle(&self.actors, state, step, |id| self.is_client(id), None)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always(CACHE_FREE, |m: &MuModel, s: &MuModelState| !m.idle(s) || m.check_history(s).ok),
            Property::always(COHERENT, |m: &MuModel, s: &MuModelState| !m.quiescent(s) || m.incoherent_entries(s) == 0.0),
            Property::sometimes(HIT, |m: &MuModel, s: &MuModelState| m.any_hit(s)),
        ]
    }
}
