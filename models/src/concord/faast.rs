//! The Faa$T baseline (Romero et al., SoCC '21, as Concord's §VI compares with it): per
//! application caches kept consistent by **versions, not invalidations** (the digest §3).
//!
//! - Every key has a home, by the same consistent hashing as Concord's (`ring.rs`), which holds
//!   the key's latest value and version (the optimized variant the paper measures: versions are
//!   kept at the home, never fetched from storage; the home loads a key from storage once).
//! - **Check-then-read.** A read on any instance, even a local hit, first asks the home for the
//!   key's version: if the local copy has it, the read returns the local value; otherwise it
//!   fetches data and version from the home (a second round trip). A read linearizes at the
//!   home's answer (A16: the check and the read are not atomic, but the home's answer is the
//!   latest value or version at that instant).
//! - **Writes** go to the home, which serializes them (an atomic version increment, as the
//!   digest suggests where the paper is silent on concurrent writers), updates its copy, writes
//!   storage, and answers the writer with the new version once storage has acknowledged; the
//!   writer then keeps the value in its cache. No invalidations.
//! - Like Concord's agents, one transaction per key and instance is in flight; calls behind it
//!   wait. A message from an instance to itself (a home's own functions) costs no hop.
//!
//! Storage is Concord's (`storage.rs`): its count of applied writes of a key is the key's
//! version, and its ghost check of write ordering (I8) applies as is. The mutant
//! `no_version_check` serves local hits without asking the home (a stale read once another
//! instance writes). Crashes, loss, dropping partitions and read transactions are refused.

use super::client::Client;
use super::msg::{Msg, ReadClass, Timer, Writer};
use super::ring::Ring;
use super::storage::Storage;
use crate::catalogue::{Entry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, metrics, parse_params};
use causim_checkers::Level;
use causim_sim::config::{SimConfig, TopologyConfig};
use causim_sim::error::FieldError;
use causim_sim::history::{Key, Value};
use causim_sim::node::{Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use serde::Deserialize;
use std::collections::{BTreeMap, VecDeque};

pub const FAAST_MUTANTS: &[Mutant] = &[Mutant {
    name: "no_version_check",
    about: "a read that hits the local cache returns it without asking the home for the key's version: a copy older \
            than another instance's completed write is served (StaleRead)",
}];

/// `protocol.params` of `faast`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FaastParams {
    /// Lines each cache instance holds before it evicts (LRU). Default unlimited.
    #[serde(default)]
    pub lines_max: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Line {
    value: Option<Value>,
    version: u64,
    used: u64,
}

/// The call an instance has in flight for a key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Pending {
    /// Asking the home for the version (a local copy exists).
    Check {
        client: NodeId,
    },
    /// Fetching data and version from the home.
    Fetch {
        client: NodeId,
    },
    Write {
        client: NodeId,
        value: Value,
    },
}

/// A function's call waiting behind the key's pending one (`None`: a read).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Call {
    client: NodeId,
    write: Option<Value>,
}

/// One Faa$T cache instance with its home role.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaastAgent {
    id: NodeId,
    ring: Ring,
    storage: NodeId,
    lines_max: Option<usize>,
    version_check: bool,
    /// The OFC baseline (`ofc.rs`): no copies but the home's, which holds at most `lines_max`
    /// keys (LRU) and reads storage on a miss.
    single_copy: bool,
    lines: BTreeMap<Key, Line>,
    pending: BTreeMap<Key, Pending>,
    waiting: BTreeMap<Key, VecDeque<Call>>,
    clock: u64,
    /// Home side: the latest value and version of each loaded key homed here.
    latest: BTreeMap<Key, (Option<Value>, u64)>,
    /// When each loaded key was last used (single copy: the home's LRU).
    latest_used: BTreeMap<Key, u64>,
    /// Requests for keys being loaded from storage.
    loading: BTreeMap<Key, VecDeque<(NodeId, Msg)>>,
    /// Writers whose writes storage has not acknowledged yet, per key in order.
    storing: BTreeMap<Key, VecDeque<NodeId>>,
    loopback: VecDeque<(NodeId, Msg)>,
}

impl FaastAgent {
    fn new(id: NodeId, ring: Ring, storage: NodeId, lines_max: Option<usize>, version_check: bool, single_copy: bool) -> FaastAgent {
        FaastAgent {
            id,
            ring,
            storage,
            lines_max,
            version_check,
            single_copy,
            latest_used: BTreeMap::new(),
            lines: BTreeMap::new(),
            pending: BTreeMap::new(),
            waiting: BTreeMap::new(),
            clock: 0,
            latest: BTreeMap::new(),
            loading: BTreeMap::new(),
            storing: BTreeMap::new(),
            loopback: VecDeque::new(),
        }
    }

    fn send(&mut self, to: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        if to == self.id {
            self.loopback.push_back((self.id, msg));
        } else {
            out.send(to, msg);
        }
    }

    fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        self.handle(from, msg, out);
        while let Some((from, msg)) = self.loopback.pop_front() {
            self.handle(from, msg, out);
        }
    }

    fn handle(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match msg {
            Msg::Get { key } => self.call(key, Call { client: from, write: None }, out),
            Msg::Put { key, value } => self.call(key, Call { client: from, write: Some(value) }, out),
            Msg::FtVersion { key, version } => self.on_version(key, version, out),
            Msg::FtData { key, value, version, loaded } => {
                let Some(Pending::Fetch { client }) = self.pending.get(&key).cloned() else { unreachable!("data with no fetch") };
                let class = match (loaded, self.single_copy && self.ring.home(key) == self.id) {
                    (true, _) => ReadClass::Miss,
                    (false, true) => ReadClass::Local,
                    (false, false) => ReadClass::RemoteHit,
                };
                if !self.single_copy {
                    self.install(key, value, version, out);
                }
                out.send(client, Msg::GetReply { key, value, class });
                self.finish(key, out);
            }
            Msg::FtWriteAck { key, version } => {
                let Some(Pending::Write { client, value }) = self.pending.get(&key).cloned() else { unreachable!("ack with no write") };
                // The writer keeps what it wrote, at its version (Faa$T; OFC keeps no copy).
                if !self.single_copy {
                    self.install(key, Some(value), version, out);
                }
                out.send(client, Msg::PutReply { key });
                self.finish(key, out);
            }
            Msg::FtVersionReq { key } | Msg::FtDataReq { key } | Msg::FtWrite { key, .. } => self.home_request(from, key, msg, false, out),
            Msg::StData { key, value, applied, .. } => {
                self.latest.insert(key, (value, applied));
                for (from, msg) in self.loading.remove(&key).unwrap_or_default() {
                    self.home_request(from, key, msg, true, out);
                }
                self.evict_latest(key, out);
            }
            Msg::StAck { key, applied, .. } => {
                let queue = self.storing.get_mut(&key).expect("a write in flight");
                let writer = queue.pop_front().expect("a write in flight");
                if queue.is_empty() {
                    self.storing.remove(&key);
                }
                self.send(writer, Msg::FtWriteAck { key, version: applied }, out);
            }
            other => unreachable!("a Faa$T cache agent does not handle {other:?}"),
        }
    }

    // Cache side.

    fn call(&mut self, key: Key, call: Call, out: &mut Outbox<Msg, Timer>) {
        if self.pending.contains_key(&key) {
            self.waiting.entry(key).or_default().push_back(call);
        } else {
            self.start(key, call, out);
        }
    }

    fn start(&mut self, key: Key, call: Call, out: &mut Outbox<Msg, Timer>) {
        let home = self.ring.home(key);
        let client = call.client;
        match call.write {
            Some(value) => {
                self.pending.insert(key, Pending::Write { client, value });
                self.send(home, Msg::FtWrite { key, value }, out);
            }
            None if self.lines.contains_key(&key) && !self.version_check => {
                let value = self.touch(key);
                out.count("faast_unchecked_hit");
                out.send(client, Msg::GetReply { key, value, class: ReadClass::Local });
            }
            None if self.lines.contains_key(&key) => {
                self.pending.insert(key, Pending::Check { client });
                self.send(home, Msg::FtVersionReq { key }, out);
            }
            None => {
                self.pending.insert(key, Pending::Fetch { client });
                out.count("faast_miss");
                self.send(home, Msg::FtDataReq { key }, out);
            }
        }
    }

    fn touch(&mut self, key: Key) -> Option<Value> {
        self.clock += 1;
        let line = self.lines.get_mut(&key).expect("a line");
        line.used = self.clock;
        line.value
    }

    fn on_version(&mut self, key: Key, version: u64, out: &mut Outbox<Msg, Timer>) {
        let Some(Pending::Check { client }) = self.pending.get(&key).cloned() else { unreachable!("a version with no check") };
        if self.lines.get(&key).is_some_and(|l| l.version == version) {
            let value = self.touch(key);
            out.count("faast_check_hit");
            out.send(client, Msg::GetReply { key, value, class: ReadClass::Local });
            self.finish(key, out);
        } else {
            out.count("faast_check_stale");
            self.pending.insert(key, Pending::Fetch { client });
            let home = self.ring.home(key);
            self.send(home, Msg::FtDataReq { key }, out);
        }
    }

    fn install(&mut self, key: Key, value: Option<Value>, version: u64, out: &mut Outbox<Msg, Timer>) {
        if let Some(max) = self.lines_max
            && !self.lines.contains_key(&key)
            && self.lines.len() >= max
        {
            let victim = self.lines.iter().min_by_key(|(_, l)| l.used).map(|(k, _)| *k).expect("a full cache");
            self.lines.remove(&victim);
            out.count("faast_eviction");
        }
        self.clock += 1;
        self.lines.insert(key, Line { value, version, used: self.clock });
    }

    fn finish(&mut self, key: Key, out: &mut Outbox<Msg, Timer>) {
        self.pending.remove(&key);
        while !self.pending.contains_key(&key) {
            let Some(waiting) = self.waiting.get_mut(&key) else { break };
            let call = waiting.pop_front().expect("empty queues are removed");
            if waiting.is_empty() {
                self.waiting.remove(&key);
            }
            self.start(key, call, out);
        }
    }

    // Home side.

    /// A request at the key's home; `loaded`: it waited for the key to be loaded from storage.
    fn home_request(&mut self, from: NodeId, key: Key, msg: Msg, loaded: bool, out: &mut Outbox<Msg, Timer>) {
        assert_eq!(self.ring.home(key), self.id, "a request for key {key} reached a node that is not its home");
        self.clock += 1;
        let now = self.clock;
        if self.latest.contains_key(&key) {
            self.latest_used.insert(key, now);
        }
        let Some(&(value, version)) = self.latest.get(&key) else {
            let queue = self.loading.entry(key).or_default();
            if queue.is_empty() {
                out.send(self.storage, Msg::StGet { key, tag: 0 });
            }
            queue.push_back((from, msg));
            return;
        };
        match msg {
            Msg::FtVersionReq { .. } => self.send(from, Msg::FtVersion { key, version }, out),
            Msg::FtDataReq { .. } => self.send(from, Msg::FtData { key, value, version, loaded }, out),
            Msg::FtWrite { value, .. } => {
                // Serialize: the next version, the home's copy, then storage (FIFO, so storage
                // applies the key's writes in version order and acknowledges them in order).
                self.latest.insert(key, (Some(value), version + 1));
                self.storing.entry(key).or_default().push_back(from);
                out.send(self.storage, Msg::StPut { key, value, writer: Writer::Home(0), after: version });
            }
            other => unreachable!("not a home request: {other:?}"),
        }
    }

    /// Single copy: the home holds at most `lines_max` keys; the least recently used one with
    /// no write in flight (its reload from storage would miss that write) goes.
    fn evict_latest(&mut self, except: Key, out: &mut Outbox<Msg, Timer>) {
        let Some(max) = self.lines_max.filter(|_| self.single_copy) else { return };
        if self.latest.len() <= max {
            return;
        }
        let victim = self
            .latest
            .keys()
            .filter(|&&k| k != except && !self.storing.contains_key(&k) && !self.loading.contains_key(&k))
            .min_by_key(|&&k| self.latest_used.get(&k).copied().unwrap_or(0))
            .copied();
        if let Some(victim) = victim {
            self.latest.remove(&victim);
            self.latest_used.remove(&victim);
            out.count("ofc_eviction");
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        if self.single_copy && !self.lines.is_empty() {
            return Err(format!("single copy: {:?} holds copies of keys it does not home", self.id));
        }
        for key in self.latest.keys().chain(self.loading.keys()).chain(self.storing.keys()) {
            let home = self.ring.home(*key);
            if home != self.id {
                return Err(format!("single home: {:?} holds home state for key {key}, homed at {home:?}", self.id));
            }
        }
        for (key, line) in &self.lines {
            if let Some(&(_, latest)) = self.latest.get(key)
                && line.version > latest
            {
                return Err(format!("key {key}'s copy has version {} beyond its home's latest {latest}", line.version));
            }
        }
        for (key, w) in &self.waiting {
            if !w.is_empty() && !self.pending.contains_key(key) {
                return Err(format!("{} calls for key {key} wait behind nothing", w.len()));
            }
        }
        Ok(())
    }
}

/// Every role of the Faa$T baseline.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaastNode {
    Agent(Box<FaastAgent>),
    Storage(Box<Storage>),
    Client(Box<Client>),
}

impl Node for FaastNode {
    type Msg = Msg;
    type Timer = Timer;

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if let FaastNode::Client(c) = self {
            c.issue_next(now, out);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match self {
            FaastNode::Agent(a) => a.on_message(from, msg, out),
            FaastNode::Storage(s) => s.on_message(from, msg, out),
            FaastNode::Client(c) => c.on_message(now, msg, out),
        }
    }

    fn on_timer(&mut self, _now: Time, timer: Timer, out: &mut Outbox<Msg, Timer>) {
        match (self, timer) {
            (FaastNode::Client(c), Timer::CallTimeout) => c.on_timeout(out),
            (node, timer) => unreachable!("{timer:?} fired at {node:?}"),
        }
    }

    fn on_restart(&mut self, _now: Time, _out: &mut Outbox<Msg, Timer>) {
        unreachable!("crashes are refused when the scenario is loaded (Faast::check_run)")
    }

    fn check_invariants(&self) -> Result<(), String> {
        match self {
            FaastNode::Agent(a) => a.check_invariants(),
            FaastNode::Storage(s) => s.check_invariants(),
            FaastNode::Client(_) => Ok(()),
        }
    }
}

/// The Faa$T baseline as the engine sees it.
#[derive(Clone, Debug)]
pub struct Faast {
    agents: usize,
    params: FaastParams,
    version_check: bool,
    /// The OFC baseline (`ofc.rs`).
    pub(super) single_copy: bool,
}

/// A function waits this long for its instance (which never crashes here) before giving up.
const CALL_TIMEOUT_NS: Time = 3_600_000_000_000;

impl Protocol for Faast {
    type Node = FaastNode;
    type Context = ();

    fn fixed_nodes(&self) -> Vec<FixedNode<FaastNode>> {
        let ring = Ring::new(&(0..self.agents).map(|i| (i, NodeId::fixed(i))).collect::<Vec<_>>());
        let storage = NodeId::fixed(self.agents);
        let mut nodes: Vec<FixedNode<FaastNode>> = (0..self.agents)
            .map(|i| {
                let agent =
                    FaastAgent::new(NodeId::fixed(i), ring.clone(), storage, self.params.lines_max, self.version_check, self.single_copy);
                FixedNode { name: format!("S{i}"), machine: format!("S{i}"), hosts_workers: true, node: FaastNode::Agent(Box::new(agent)) }
            })
            .collect();
        nodes.push(FixedNode {
            name: "db".into(),
            machine: "db".into(),
            hosts_workers: false,
            node: FaastNode::Storage(Box::new(Storage::new(false))),
        });
        nodes
    }

    fn new_context(&self) {}

    fn spawn_function(&self, start: FunctionStart<'_, ()>) -> FaastNode {
        FaastNode::Client(Box::new(Client::new(start.colocated[0], start.ops, start.now, CALL_TIMEOUT_NS)))
    }

    fn finish_function(&self, _node: FaastNode) {}

    fn join_contexts(&self, _contexts: Vec<()>) {}
}

impl Model for Faast {
    const ENTRY: Entry = Entry {
        name: "faast",
        about: "Faa$T-style check-then-read caching (Concord's baseline): per-application caches ask the key's home for its version on every read; writes through the home; per-key linearizability",
        level: Level::Linearizable,
        mutants: FAAST_MUTANTS,
        profile: Profile {
            database: true,
            observations: &[metrics::READ_LOCAL_NS, metrics::READ_REMOTE_HIT_NS, metrics::READ_MISS_NS],
            ..Profile::PLAIN
        },
        faults: FaultModel::fault_free("the Faa$T baseline models no failure handling; it is compared with Concord in fault-free runs"),
        series: &[SeriesStyle { label: "Faa$T", colour: (0, 114, 178) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: FaastParams = parse_params(params)?;
        if params.lines_max == Some(0) {
            return Err(FieldError::new("params.lines_max", "must be at least 1"));
        }
        Ok(Faast { agents: topology.servers as usize, params, version_check: !mutants.contains(&"no_version_check"), single_copy: false })
    }

    fn check_run(config: &SimConfig) -> Result<(), FieldError> {
        super::refuse_read_txns(config, "the Faa$T baseline's functions read and write single keys")
    }
}
