//! MuCache (Zhang, Kallas, Pavlatos, Alur, Angel, Liu; NSDI 2024): caches in a microservice
//! call graph, kept equivalent to a cache-free execution.
//!
//! # The protocol
//!
//! Every service gets a wrapper, a cache of the responses of its calls to read-only endpoints
//! of other services, and a cache manager (CM) that processes one queue in order
//! (`service.rs`). The caller never fills its own cache: the *callee's* CM decides. When a
//! read-only request starts, its wrapper queues Start; its reads and calls form its read set;
//! when it returns, the wrapper queues End. The CM saves the result upstream (a Save to the
//! caller's CM) only if no invalidation of anything in the read set entered the queue since
//! Start, and then remembers who cached what (`saved`). A write queues Inv(k) once it took
//! effect; the CM forwards invalidations upstream for every saved call that read `k`, and those
//! CMs do the same for calls that called it. Save and Inv travel on one FIFO link, so they
//! are never reordered. Visited sets stop a request from using a cached subtree that visited a
//! service the request has already visited (the diamond of Fig. 4).
//!
//! # How a run maps onto causim (choices the paper leaves to us)
//!
//! - **Services are fixed nodes**, one per service of `params.services`, each on a machine of
//!   its name; its endpoints' handlers are scripts in the scenario (`app.rs`). Stores are in
//!   the service node and linearizable (A3); writes take `params.write_ns` to take effect.
//! - **Workflow functions are clients**: a `read` of key `k` is a request to
//!   `params.entry.read` with argument `k`, a `write` one to `params.entry.write`; the workload
//!   format is unchanged. Client functions run on the entry services' machines.
//! - **The history** has one record per client request, whose `call` field is the request's
//!   call tree: reads and writes at each service, calls, fan-outs, and cache hits with their
//!   origin (the request whose End produced the Save). `causim check --level cache-free` judges
//!   it (digest §4.3).
//! - **Exact Start/End matching** by request id (the digest's §2.7 alternative), so duplicate
//!   pending calls with the same arguments need no conservative window.
//! - **Save and Inv(calls) change the cache on arrival** (digest O7), their bookkeeping waits
//!   in the queue; the CM takes `params.cm_event_ns` per queue item.
//! - **Visited sets** follow V1–V3: a request has visited its own service, starts from its
//!   caller's set, and a hit adds the entry's set.
//! - **Baselines** are a parameter, `params.cache`: `mucache` (default), `none` (no caching:
//!   the paper's BC) and `ttl` (the caller saves on response, entries expire after
//!   `params.ttl_ns`, never when absent: TTL-∞; no CM, no visited checks).
//! - **Quiescent coherence** (§4.4) is the final metric `incoherent_entries`: cache entries at
//!   the end of the run that differ from a cache-free evaluation on the final stores (give the
//!   run `limits.settle_ns` so the last invalidations drain first). `causim fuzz` settles
//!   MuCache's cases and fails a case with a stale entry (docs/fuzzing.md).
//!
//! - **Hazard X11** (found with the cache-free checker, not in the paper or the digest): Fig. 5
//!   sends nothing upstream when a CM refuses a save, so a caller whose own End comes later
//!   saves its call, computed from the refused (stale) response, and no dependency on the key
//!   is recorded anywhere: the entry stays stale for good (`scenarios/mucache/x11-*.json`).
//!   `params.refusal_invalidates` is our fix (off by default: the paper's protocol).
//!
//! - **Sharding** (§4.1): a service spec's `shards` runs that many units (`Svc.0`, `Svc.1`, …),
//!   each with its own cache and CM, in front of one store node (`Svc.store`; an unsharded
//!   service keeps its store in its own node). A read-only call goes to the shard its call
//!   arguments hash to (hard affinity), any other call to a shard the caller spreads by its
//!   request number. A CM that processes Inv(k) of a local write sends it to the other shards'
//!   CMs (`ShardInv`), which process it like their own but send it no further (X6). Visited sets
//!   name services, not shards.
//!
//! - **Batching** (§2.9, `params.batch`): a CM's Saves and Invs for one upstream CM wait in a
//!   batch, sent when it holds `size` items or `timeout_ns` after its first (`batch.rs`). The
//!   paper cancels items at the sender ("invalidates and saves override previous invalidates
//!   and saves"); we keep the safe half only: a Save followed by an Inv drops the Save, an Inv
//!   followed by a Save keeps both (X7; the mutant `batch_drops_inv` is the sentence read
//!   literally). The CM is a sequential server: `cm_event_ns` per queue item and `cm_send_ns`
//!   per message it sends, a batch counting once (Fig. 18's cost).
//! - **Memory** (§4.1, §7.1): `cache_entries_max` bounds each cache, least recently used first
//!   (always safe); `cm_deps_max` bounds each CM's dependency index, and evicting a dependency
//!   invalidates upstream the calls saved on it, as a write would (O8; X10 is the mutant
//!   `silent_dep_eviction`). History GC is on by default (`cm_gc`); off, the history keeps every
//!   start and invalidation, for Fig. 15's comparison.
//! - **Wrapper costs** (Fig. 17): `enqueue_ns` per synchronous Start or End enqueue and
//!   `lookup_ns` per cache lookup, on the request's critical path.
//! - **Figures' observations**: `call_cache_hit` (1 or 0 per call to a read-only endpoint),
//!   `invalidation_ns` (a write taking effect to its invalidation reaching a read entry's
//!   service, Fig. 19), `revisit_hit` (1 when a hit's subtree visited a service the request had
//!   already visited, the hazard visited sets refuse; TTL caches take such hits), and final
//!   metrics of the CMs' state over time and throughput.
//!
//! # Mutants (`protocol.mutants`)
//!
//! See [`MUTANTS`].

mod app;
mod batch;
mod client;
mod msg;
mod service;
mod store;

use crate::catalogue::{Entry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, Support, metrics, parse_params};
use app::{App, EndpointRef, ServiceSpec};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::node::{Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use client::Client;
use msg::Msg;
use proptest::prelude::*;
use serde::Deserialize;
use service::{ServiceNode, Timer};
use std::sync::Arc;
use store::StoreNode;

pub use app::{CallArgs, StoreKey};

/// Scenario parameters: the application, its entry endpoints and the cache.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MuCacheParams {
    pub services: Vec<ServiceSpec>,
    pub entry: EntrySpec,
    #[serde(default)]
    pub cache: CacheMode,
    /// TTL baseline: how long an entry lives; absent means forever (TTL-∞).
    #[serde(default)]
    pub ttl_ns: Option<Time>,
    /// Time the CM takes per queue item. Default 10 µs (the paper's 13–52 µs per event).
    #[serde(default = "default_cm_event_ns")]
    pub cm_event_ns: Time,
    /// Time a store write takes to take effect. Default 0. A sharded service's store node
    /// applies writes as they arrive (the hop to it is the write's duration).
    #[serde(default)]
    pub write_ns: Time,
    /// Caller-side saves (the TTL baseline, the `caller_side_save` mutant): time from a
    /// response to its entry landing in the cache (the paper's TTL saves asynchronously). With
    /// the `non_fifo_save` mutant: how long a Save lags behind an Inv sent after it. Default 0.
    #[serde(default)]
    pub save_delay_ns: Time,
    /// Our fix for hazard X11 (not in the paper): a CM that refuses a save sends Inv of the
    /// call to the caller's CM, so the caller's pending calls that used the response are
    /// refused too, or invalidated if already saved. Default false (the paper's Fig. 5).
    #[serde(default)]
    pub refusal_invalidates: bool,
    /// Where services run: `services` (default), each on a machine of its own name, with
    /// client functions on the entry services' machines; or `numbered`, service `i` on machine
    /// `S{i mod topology.servers}`, every machine running client functions (the fuzzer's
    /// topologies name machines so).
    #[serde(default)]
    pub machines: Machines,
    /// Batching of CM-to-CM Saves and Invs (§2.9): `{"size": 20, "timeout_ns": 1000000}`, the
    /// paper's setting. Absent: each is sent at once.
    #[serde(default)]
    pub batch: Option<BatchConfig>,
    /// The CM's time per message it sends upstream (a batch is one). Default 0.
    #[serde(default)]
    pub cm_send_ns: Time,
    /// Capacity of each cache in entries, least recently used evicted first. Absent: unbounded.
    #[serde(default)]
    pub cache_entries_max: Option<usize>,
    /// The CM's memory limit in dependencies (`saved` entries), least recently saved evicted
    /// first with an invalidation upstream (§4.1; the paper keeps 100 per MB of cache).
    /// Absent: unbounded.
    #[serde(default)]
    pub cm_deps_max: Option<usize>,
    /// History garbage collection (§4.1): a call's start leaves the history at its End, and
    /// invalidations older than every running call go. Default true; false keeps everything
    /// (Fig. 15's comparison).
    #[serde(default = "yes")]
    pub cm_gc: bool,
    /// The wrapper's time on the critical path per Start or End enqueue, and per cache lookup
    /// (Fig. 17's constant overhead; the TTL baseline pays lookups only). Default 0.
    #[serde(default)]
    pub enqueue_ns: Time,
    #[serde(default)]
    pub lookup_ns: Time,
}

#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct BatchConfig {
    pub size: u32,
    pub timeout_ns: Time,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Machines {
    #[default]
    Services,
    Numbered,
}

fn default_cm_event_ns() -> Time {
    10_000
}

/// `{"read":"Frontend.home","write":"Frontend.compose"}`, or lists of entries: an operation on
/// key `k` then calls entry `k mod len` (in a script, a key's number is its order of first
/// appearance, from 0).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EntrySpec {
    pub read: OneOrMany,
    pub write: OneOrMany,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn names(&self) -> &[String] {
        match self {
            OneOrMany::One(s) => std::slice::from_ref(s),
            OneOrMany::Many(v) => v,
        }
    }

    /// Resolves every name; errors name `params.entry.<field>[i]`.
    fn resolve(&self, app: &App, field: &str) -> Result<Vec<EndpointRef>, FieldError> {
        if self.names().is_empty() {
            return Err(FieldError::new(format!("params.entry.{field}"), "at least one entry endpoint"));
        }
        self.names()
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let path =
                    if matches!(self, OneOrMany::One(_)) { format!("params.entry.{field}") } else { format!("params.entry.{field}[{i}]") };
                let e = app.resolve(n).map_err(|m| FieldError::new(path.clone(), m))?;
                if field == "read" && !app.endpoint(e).ro {
                    return Err(FieldError::new(path, format!("{n} is not read-only")));
                }
                Ok(e)
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    #[default]
    Mucache,
    None,
    Ttl,
}

/// What every service node needs to know about the run.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    pub mode: CacheMode,
    /// TTL mode only: the TTL, `u64::MAX` for ∞.
    pub ttl_ns: Option<Time>,
    pub cm_event_ns: Time,
    pub write_ns: Time,
    pub save_delay_ns: Time,
    pub visited_checks: bool,
    pub caller_side_save: bool,
    pub inv_before_write: bool,
    pub start_at_return: bool,
    pub non_fifo_save: bool,
    pub refusal_invalidates: bool,
    pub no_shard_broadcast: bool,
    pub batch: Option<BatchConfig>,
    pub cm_send_ns: Time,
    pub batch_drops_inv: bool,
    pub cache_entries_max: Option<usize>,
    pub cm_deps_max: Option<usize>,
    pub silent_dep_eviction: bool,
    pub cm_gc: bool,
    pub enqueue_ns: Time,
    pub lookup_ns: Time,
    /// The services of the read entries (the frontends of Fig. 19), a bitmask.
    pub read_entry_services: app::Services,
}

impl Config {
    pub fn mucache(&self) -> bool {
        self.mode == CacheMode::Mucache
    }
    pub fn caching(&self) -> bool {
        self.mode != CacheMode::None
    }
}

pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "visited_checks_off",
        about: "the wrapper ignores visited sets (as the authors' public code does), so a request that wrote through one branch of \
                a diamond hits a cached entry of the other branch that misses its own write (Fig. 4; a cache-free cycle)",
    },
    Mutant {
        name: "caller_side_save",
        about: "the caller caches a response when it arrives instead of waiting for the callee's CM to send Save, so an Inv that \
                overtakes a slow response leaves a stale entry nothing will invalidate (Fig. 6)",
    },
    Mutant {
        name: "inv_before_write",
        about: "the wrapper queues Inv(k) before the write takes effect (preWrite only), so a call that starts in between reads \
                the old value and is saved with no invalidation left to come (X9)",
    },
    Mutant {
        name: "start_at_return",
        about: "Start reaches the CM's queue only when the request returns (its enqueue was not awaited, Fig. 20), so an Inv of a \
                key the request already read is queued before its Start and does not veto its save (P7)",
    },
    Mutant {
        name: "non_fifo_save",
        about: "Save and Inv travel on different paths (X8): a Save lags params.save_delay_ns behind, so the Inv that should delete \
                it arrives first and the stale entry stays (the outcome of Fig. 6 again)",
    },
    Mutant {
        name: "no_shard_broadcast",
        about: "a CM does not tell the other shards of its service about a local write (X6), so a shard that saved a read-only call \
                of the written key never invalidates it upstream",
    },
    Mutant {
        name: "batch_drops_inv",
        about: "batch cancellation lets a Save override an Inv of the same call waiting before it (X7), so the caller's CM never \
                invalidates what it saved upstream from the old response",
    },
    Mutant {
        name: "silent_dep_eviction",
        about: "the CM's memory limit drops a dependency without invalidating the calls saved upstream that depended on it (X10), \
                so a later write of it invalidates nothing",
    },
];

/// One node of a MuCache run.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MuNode {
    Service(Box<ServiceNode>),
    Store(Box<StoreNode>),
    Client(Box<Client>),
}

impl Node for MuNode {
    type Msg = Msg;
    type Timer = Timer;

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if let MuNode::Client(c) = self {
            c.issue_next(now, out);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match (self, msg) {
            (MuNode::Service(s), msg) => s.on_message(now, from, msg, out),
            (MuNode::Store(s), msg) => s.on_message(from, msg, out),
            (MuNode::Client(c), Msg::Response { record, .. }) => c.on_response(now, from, &record, out),
            (MuNode::Client(_), msg) => unreachable!("a client gets only responses, not {msg:?}"),
        }
    }

    fn on_timer(&mut self, now: Time, timer: Timer, out: &mut Outbox<Msg, Timer>) {
        if let MuNode::Service(s) = self {
            s.on_timer(now, timer, out);
        }
    }
}

/// The MuCache protocol as the engine sees it.
#[derive(Clone, Debug)]
pub struct MuCache {
    pub app: Arc<App>,
    pub config: Arc<Config>,
    pub read_entries: Vec<EndpointRef>,
    pub write_entries: Vec<EndpointRef>,
    pub machines: Machines,
    pub servers: u32,
    nodes: Arc<Vec<NodeId>>,
}

impl Protocol for MuCache {
    type Node = MuNode;
    type Context = ();

    /// The units (service shards) in service order, then the store node of each sharded
    /// service (`Svc.store`).
    fn fixed_nodes(&self) -> Vec<FixedNode<MuNode>> {
        let units = (0..self.app.units.len() as u32).map(|u| {
            let s = self.app.units[u as usize].0;
            let entry = self.read_entries.iter().chain(&self.write_entries).any(|e| e.service == s);
            let node = MuNode::Service(Box::new(ServiceNode::new(u, self.app.clone(), self.config.clone(), self.nodes.clone())));
            (self.app.unit_name(u), entry, node)
        });
        let stores = self
            .app
            .services
            .iter()
            .filter(|s| s.store_node.is_some())
            .map(|s| (format!("{}.store", s.name), false, MuNode::Store(Box::default())));
        units
            .chain(stores)
            .enumerate()
            .map(|(i, (name, entry, node))| match self.machines {
                Machines::Services => FixedNode { name: name.clone(), machine: name, hosts_workers: entry, node },
                Machines::Numbered => FixedNode { name, machine: format!("S{}", i as u32 % self.servers), hosts_workers: true, node },
            })
            .collect()
    }

    fn new_context(&self) {}

    fn spawn_function(&self, start: FunctionStart<'_, ()>) -> MuNode {
        MuNode::Client(Box::new(Client {
            app: self.app.clone(),
            nodes: self.nodes.clone(),
            requests: Client::requests_of(&start.ops, &self.read_entries, &self.write_entries),
            next: 0,
            invoked_at: start.now,
        }))
    }

    fn finish_function(&self, _node: MuNode) {}

    fn join_contexts(&self, _contexts: Vec<()>) {}

    /// Quiescent coherence (digest §4.4): every cache entry against a cache-free evaluation on
    /// the final stores. Meaningful only when the run ends quiescent: a scenario that measures
    /// it lets the invalidations drain after the workload (`limits.settle_ns`).
    fn final_metrics(&self, nodes: &[&MuNode]) -> Vec<(String, f64)> {
        let services: Vec<&ServiceNode> = nodes
            .iter()
            .filter_map(|n| match n {
                MuNode::Service(s) => Some(&**s),
                _ => None,
            })
            .collect();
        let store = |s: u32, k: StoreKey| {
            let svc = &self.app.services[s as usize];
            match svc.store_node {
                Some(n) => match nodes[n as usize] {
                    MuNode::Store(st) => st.store.get(&k).copied(),
                    _ => unreachable!("a store node"),
                },
                None => services[svc.first_unit as usize].store.get(&k).copied(),
            }
        };
        let (mut entries, mut incoherent, mut cm_state) = (0usize, 0usize, 0usize);
        let (mut state_max, mut state_mean) = (0usize, 0f64);
        let busiest = services.iter().max_by_key(|s| (s.stats.events, std::cmp::Reverse(s.unit))).map(|s| &s.stats);
        let events_per_s = busiest.filter(|b| b.busy_ns > 0).map_or(0.0, |b| b.events as f64 * 1e9 / b.busy_ns as f64);
        for s in &services {
            cm_state += s.cm_state_len();
            state_max = state_max.max(s.stats.state_max);
            state_mean = state_mean.max(s.stats.state_mean());
            for (ca, e) in &s.cache {
                entries += 1;
                // A finite-TTL entry may have expired; only entries that never expire are judged.
                if e.expires.is_none() && self.app.evaluate(*ca, &store) != e.ret {
                    incoherent += 1;
                }
            }
        }
        vec![
            (metrics::CACHE_ENTRIES.into(), entries as f64),
            (metrics::INCOHERENT_ENTRIES.into(), incoherent as f64),
            (metrics::CM_STATE_ENTRIES.into(), cm_state as f64),
            (metrics::CM_STATE_MAX.into(), state_max as f64),
            (metrics::CM_STATE_MEAN.into(), state_mean),
            (metrics::CM_EVENTS_PER_S.into(), events_per_s),
        ]
    }
}

/// The application the fuzzer and the catalogue tests run: a read walks a ProxyApp-like chain
/// (Frontend → Proxy → Mid → Backend), then fans out to two more backends; a write of an even
/// key fans out to the three backends at once, one of an odd key (`update`) writes the backend
/// and then reads it back through the chain: the diamond of Fig. 4, an observer of its own
/// write that a stale entry of `Proxy.get` (or of `Mid.get` at Proxy) would contradict.
/// `Proxy.get` calls `Audit.get` after `Mid.get`, so a cached call's request stays open after
/// its first read (the window in which an invalidation must veto its save, P7). Six services,
/// so every machine the fuzzer names (`S0`–`S5`) exists. Reads always visit the chain before
/// the fan-out, and a write request reads only after its one write, so no request can order
/// two writes against each other and no history of the correct protocol has a cycle: the X1
/// leaks need a writer's program order or a store in between (`scenarios/mucache/x1*.json`).
pub const FUZZ_APP: &str = r#"[
  {"name":"Frontend","endpoints":[
    {"name":"read","ro":true,"steps":[{"call":"Proxy.get"},{"par":["Side.get","Audit.get"]}]},
    {"name":"write","steps":[{"par":["Backend.put","Side.put","Audit.put"]}]},
    {"name":"update","steps":[{"call":"Backend.put"},{"call":"Proxy.get"}]}]},
  {"name":"Proxy","endpoints":[{"name":"get","ro":true,"steps":[{"call":"Mid.get"},{"call":"Audit.get"}]}]},
  {"name":"Mid","endpoints":[{"name":"get","ro":true,"steps":[{"call":"Backend.get"}]}]},
  {"name":"Backend","endpoints":[{"name":"get","ro":true,"steps":[{"read":"v"}]},{"name":"put","steps":[{"write":"v"}]}]},
  {"name":"Side","endpoints":[{"name":"get","ro":true,"steps":[{"read":"s"}]},{"name":"put","steps":[{"write":"s"}]}]},
  {"name":"Audit","endpoints":[{"name":"get","ro":true,"steps":[{"read":"a"}]},{"name":"put","steps":[{"write":"a"}]}]}
]"#;

/// The paper assumes reliable, ordered channels between cache managers and no failures.
const FAULTS: FaultModel = FaultModel {
    drop_partition: Support::Outside(
        "the paper assumes reliable channels: a dropped Save or invalidation leaves a cache entry stale with nothing to repair it, and a dropped call leaves its caller waiting",
    ),
    loss: Support::Outside("the paper assumes reliable channels: a lost invalidation leaves a cache entry stale for good"),
    crash: Support::Outside(
        "the paper assumes no failures: a restarted cache manager has forgotten who cached its results and can never invalidate them upstream",
    ),
    restart: Support::Outside("the paper assumes no failures"),
    crashes_max: 0,
};

impl Model for MuCache {
    const ENTRY: Entry = Entry {
        name: "mucache",
        about: "MuCache (NSDI'24): per-service caches of downstream read-only calls, filled and invalidated by cache managers; \
                params.cache selects the no-cache and TTL baselines",
        level: Level::CacheFree,
        mutants: MUTANTS,
        profile: Profile {
            database: false,
            read_txn: false,
            workflow_txn: false,
            observations: &[metrics::CALL_CACHE_HIT, metrics::INVALIDATION_NS, metrics::REVISIT_HIT],
            final_metrics: &[
                metrics::CACHE_ENTRIES,
                metrics::INCOHERENT_ENTRIES,
                metrics::CM_STATE_ENTRIES,
                metrics::CM_STATE_MAX,
                metrics::CM_STATE_MEAN,
                metrics::CM_EVENTS_PER_S,
            ],
            hop_metadata: None,
            server_metadata: None,
        },
        faults: FAULTS,
        series: &[SeriesStyle { label: "MuCache", colour: (0, 158, 115) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let p: MuCacheParams = parse_params(params)?;
        let app = App::build(&p.services).map_err(|e| e.within("params"))?;
        let read_entries = p.entry.read.resolve(&app, "read")?;
        let write_entries = p.entry.write.resolve(&app, "write")?;
        if p.ttl_ns.is_some() && p.cache != CacheMode::Ttl {
            return Err(FieldError::new("params.ttl_ns", "ttl_ns applies to \"cache\": \"ttl\" only"));
        }
        if p.ttl_ns == Some(0) {
            return Err(FieldError::new("params.ttl_ns", "a TTL must be positive (use \"cache\": \"none\" for no cache)"));
        }
        if p.batch.is_some_and(|b| b.size == 0) {
            return Err(FieldError::new("params.batch.size", "a batch holds at least one item"));
        }
        if p.cache_entries_max == Some(0) {
            return Err(FieldError::new(
                "params.cache_entries_max",
                "a cache holds at least one entry (use \"cache\": \"none\" for no cache)",
            ));
        }
        if mutants.contains(&"non_fifo_save") && p.save_delay_ns == 0 {
            return Err(FieldError::new(
                "params.save_delay_ns",
                "the non_fifo_save mutant needs a positive delay to reorder Save behind Inv",
            ));
        }
        let ttl = p.cache == CacheMode::Ttl;
        let config = Config {
            mode: p.cache,
            ttl_ns: ttl.then(|| p.ttl_ns.unwrap_or(u64::MAX)),
            cm_event_ns: p.cm_event_ns,
            write_ns: p.write_ns,
            save_delay_ns: p.save_delay_ns,
            visited_checks: !ttl && !mutants.contains(&"visited_checks_off"),
            caller_side_save: mutants.contains(&"caller_side_save"),
            inv_before_write: mutants.contains(&"inv_before_write"),
            start_at_return: mutants.contains(&"start_at_return"),
            non_fifo_save: mutants.contains(&"non_fifo_save"),
            refusal_invalidates: p.refusal_invalidates,
            no_shard_broadcast: mutants.contains(&"no_shard_broadcast"),
            batch: p.batch,
            cm_send_ns: p.cm_send_ns,
            batch_drops_inv: mutants.contains(&"batch_drops_inv"),
            cache_entries_max: p.cache_entries_max,
            cm_deps_max: p.cm_deps_max,
            silent_dep_eviction: mutants.contains(&"silent_dep_eviction"),
            cm_gc: p.cm_gc,
            enqueue_ns: p.enqueue_ns,
            lookup_ns: p.lookup_ns,
            read_entry_services: read_entries.iter().fold(0, |m, e| m | 1 << e.service),
        };
        let nodes = Arc::new((0..app.nodes()).map(NodeId::fixed).collect());
        if p.machines == Machines::Numbered && topology.servers == 0 {
            return Err(FieldError::new("topology.servers", "numbered machines need at least one server machine"));
        }
        let (machines, servers) = (p.machines, topology.servers);
        Ok(MuCache { app: Arc::new(app), config: Arc::new(config), read_entries, write_entries, machines, servers, nodes })
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        let services: serde_json::Value = serde_json::from_str(FUZZ_APP).expect("the fuzz application is JSON");
        (0u64..3, 0u64..3, 0usize..3, 0usize..3, 0usize..3, 0usize..3)
            .prop_map(move |(cm, write, sharding, batched, cache_max, deps_max)| {
                let cm_event_ns: u64 = [0, 10_000, 200_000][cm as usize];
                let write_ns: u64 = [0, 50_000, 500_000][write as usize];
                // Unsharded; Backend in two shards; Proxy (a caller and a callee) in two too.
                let limits: [Option<u64>; 3] = [None, Some(2), Some(4)];
                let batches = [None, Some((3, 1_000_000)), Some((10, 5_000_000))]
                    .map(|b| b.map(|(size, timeout_ns): (u32, u64)| BatchConfig { size, timeout_ns }));
                let mut services = services.clone();
                for (name, from) in [("Backend", 1), ("Proxy", 2)] {
                    if sharding >= from {
                        let s = services.as_array_mut().expect("a list").iter_mut().find(|s| s["name"] == name).expect("in FUZZ_APP");
                        s["shards"] = 2.into();
                    }
                }
                serde_json::json!({
                    "services": services,
                    "entry": {"read": "Frontend.read", "write": ["Frontend.write", "Frontend.update"]},
                    "cm_event_ns": cm_event_ns,
                    "write_ns": write_ns,
                    "machines": "numbered",
                    "save_delay_ns": 1_000_000u64,
                    // The paper's Fig. 5 leaves stale entries for good (hazard X11), which the
                    // quiescent-coherence oracle would report in the correct protocol; fuzz our fix.
                    "refusal_invalidates": true,
                    // Batches of three or 1 ms, of ten or 5 ms; caches and CM dependency indexes of 2 or 4
                    // entries, so LRU evictions happen in a small case.
                    "batch": batches[batched],
                    "cache_entries_max": limits[cache_max],
                    "cm_deps_max": limits[deps_max],
                })
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests;
