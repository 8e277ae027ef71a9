//! FaaSTCC: transactional causal consistency for serverless workflows with promises and
//! snapshot intervals (Lykhenko, Soares, Rodrigues, Middleware '21). Protocol name `faastcc`.
//!
//! # The protocol, in the order that makes it understandable
//!
//! A workflow (a DAG of functions) is one transaction (§3.1). Its functions run on different
//! machines, each with a cache; the caches sit on a partitioned TCC store (`tcc_store.rs`)
//! that gives every version a timestamp and a *promise*: the horizon up to which the version is
//! known to be its key's latest (§4.2).
//!
//! 1. **Cache entries** are `<key, value, t, promise>` (§4.3), one per key, filled by reads and
//!    refreshed by the store's periodic pushes of new stable versions (50 ms, §6.1).
//! 2. **The snapshot interval** `[s_low, s_high]` travels in the workflow context from function
//!    to function, with the buffered write set (§4.8, Alg. 1). The root starts at `[0, ∞]`
//!    (0 is the timestamp of every key's initial version, so it plays the role of −∞).
//! 3. **The consistency condition** (Eq. 1): a version `<t, p>` may be read in `[s_low,
//!    s_high]` iff `p ≥ s_low ∧ t ≤ s_high`. **Narrowing** (Eq. 2): after reading it, the
//!    interval becomes `[max(s_low, t), min(s_high, p)]`. Every version read is then the key's
//!    version at every point of the final interval (Observation 3), so the workflow read one
//!    snapshot of the store (Argument 1).
//! 4. **The four cache-read outcomes** (§4.6): a *hit* that satisfies Eq. 1 is served at once; a
//!    *miss* goes to the store and installs the reply; a *replaced* entry (`s_high < t`) goes to
//!    the store at `s_high` and returns the older reply without installing it; a *stale* entry
//!    (`p < s_low`) goes to the store at `s_high` and installs the reply (a newer version or a
//!    new promise). A storage reply always satisfies Eq. 1 (see the store's promise rule), so a
//!    read takes at most one storage round (Fig. 6).
//! 5. **Fan-in** (Eq. 3): a function with several parents starts from the intersection of their
//!    intervals (`max` of lows, `min` of highs) and the union of their write sets; **an empty
//!    intersection aborts** the workflow.
//! 6. **Commit at the sink**: reads-your-writes come from the context's write set (Alg. 1
//!    l. 25); the sink's library runs two-phase commit with the partitions it writes, passing
//!    `s_low` as a lower bound, so the commit timestamp is above every version the workflow read
//!    (digest §1.3 (e)). Committed values are not put in any cache (§4.7). A read-only workflow
//!    commits without contacting the store.
//! 7. **Aborts** happen only for an empty fan-in intersection (`empty_interval`) and for a read
//!    whose version the store has garbage-collected (`gc_collected`) (§4.2, §4.8, digest §2.9).
//!    The engine retries the workflow (`scheduler.attempts_max`, `retry_backoff`).
//!
//! # Choices where the paper is silent or where we deviate (and why)
//!
//! - **Batched reads.** The paper's pseudo-code reads one key per call but the implementation
//!   makes one call for all missing keys (§4.9). Consecutive read operations of a function form
//!   one batch, classified as the authors' `causal_cache_get_request_handler` does (digest
//!   §2.11): entries satisfying Eq. 1 are provisionally accepted and the newest raises `s_low`;
//!   accepted entries promised below the new `s_low` are refreshed instead (treated as stale),
//!   so one old promise does not pin the whole snapshot to the past; the rest narrow `s_high`.
//!   The keys not served go to the store in one parallel round at the narrowed `s_high`.
//!   Narrowing in key order (Alg. 1) gives the same final interval, since all the versions'
//!   validity ranges contain the point `s_high`.
//! - **A storage read at `s_high = ∞`** (nothing read yet, every key missed) is sent at the
//!   cache's *known stable time*, the largest `lst` it has heard from any partition: reading
//!   each partition at its own `lst` would give keys mutually inconsistent promises.
//! - **The replaced case does not install** the older reply (§4.6's prose; Alg. 2 l. 11 would).
//! - **Pre-warmed caches** (`params.prewarm`, default true, as in §6.1 and CausalMesh §9.1):
//!   every cache starts holding every key's initial version with promise 0 and is subscribed to
//!   every key. Without pre-warming a cache subscribes to the keys it installs.
//! - **Promises are renewed on demand** (the "stale" case), not by pushes: the paper's pushes
//!   carry new versions, and its remark on Fig. 7 (most storage requests "send only metadata to
//!   update the promise") says promises go stale. So a root whose first reads hit old entries
//!   reads an old snapshot, and nothing bounds how old (TCC does not promise freshness). The
//!   digest's switch `params.promise_bumps` (default false) lets each push's stable time extend
//!   the promise of every entry that was its key's newest stable version when promised (sound:
//!   a newer version would come in that same push, in FIFO order); it makes nearly every read a
//!   hit.
//! - **Garbage collection** keeps `versions_per_key_max` versions per key (default 1 000 000,
//!   effectively none). Because snapshots can be arbitrarily old, a small bound makes FaaSTCC
//!   abort often (`gc_collected`); the paper calls these aborts rare, so its store must keep
//!   versions long. The seed sweep (`scenarios/faastcc/fuzz-chain.json`) keeps 4 to exercise it.
//!   The store never collects a key's newest stable version (`tcc_store.rs`): otherwise a push
//!   could have nothing to carry for a changed key and `promise_bumps` would extend the promise
//!   of the version it replaced (`regression-promise-bumps-gc.json`, a fuzzer finding).
//! - **The ablation of Fig. 3** (`params.read_policy`, default `interval`, the full system):
//!   `fixed_promise` reads every batch after the first at one point, the first batch's
//!   promise; `fixed_exact` also goes without promises (`read_policy.rs`).
//! - **Bounded caches** (`params.cache_capacity_keys`, default unbounded, §6.7, Fig. 9): each
//!   cache holds at most that many entries and evicts the least recently read or installed one
//!   (`lru.rs`). Eviction needs no care for consistency: an entry is a fact the store stated
//!   (`t`, promised to `p`), and a read of an evicted key is a miss, served by the store at
//!   `s_high` like any other. Pushes update only keys the cache holds, so an evicted key stays out
//!   until a read brings it back. Capacity 0 disables the cache: nothing is installed or
//!   subscribed, every read goes to storage (Fig. 9's 0 %). The paper does not say whether its
//!   bounded caches start warm; a bounded cache here starts **cold** (pre-warming means holding
//!   every key, more than any bound), so `prewarm` must be false, and it fills as functions read.
//! - **The promise off-by-one** is settled in the store (`t_next − 1`), see `tcc_store.rs`.
//! - **Metadata costs no time** unless `params.metadata_ns_per_kb` says so: the engine has no
//!   bandwidth model, so a function may spend that long per KiB of context before it runs (a
//!   calibration knob for comparisons; FaaSTCC's context is always 16 bytes).
//! - **Online invariants** (`checks.invariants`): partitions check that no promise they issued
//!   reaches the next version of its key; a function checks Observation 3, that its interval
//!   lies inside the validity `[t, p]` of every version the workflow read.
//! - **Several sinks**: the paper assumes one sink (§3.1), which commits the workflow's
//!   transaction. A workflow with several leaves gets an empty join function from the engine
//!   (`Protocol::single_sink`), which merges the leaves' contexts as any join does and commits
//!   once (otherwise each leaf would commit its ancestors' writes again:
//!   `scenarios/faastcc/regression-several-sinks.json`).
//! - **Several sources**: each source starts from the root context (the interval `[0, ∞)`,
//!   nothing read); the sources' intervals narrow independently and meet at the join like
//!   branches of a fan-out (Eq. 3), which aborts the attempt if they no longer overlap.
//! - **Parallel branches that write the same key**: the join keeps the later predecessor's
//!   value (the paper leaves it unspecified).
//! - **History.** The sink records the whole workflow as one `workflow_txn` (every read, with
//!   version `[t, promise]`, and every write, with version `[commit timestamp]`). The reads
//!   travel in the context for this purpose only; they are not protocol metadata and are not
//!   counted in `metadata_bytes`. A function that aborts records the attempt as `aborted`.
//!
//! # Metrics (`out.observe`)
//!
//! `metadata_bytes` (per workflow: the context the sink received; always the interval's two
//! 8-byte timestamps), `metadata_bytes_hop` (per function-to-function hop), `storage_rounds_per_read`
//! (0 for a hit, 1 otherwise, per key a function asked its cache for), `function_cache_only`
//! (1 when none of a function's reads needed the store: FaaSTCC §6.3's 60 %), `cache_hit`,
//! `cache_miss`, `cache_stale`, `cache_replaced` (one sample per outcome), `visibility_ns`
//! (from a version's commit at its partition to its first installation in each cache) and
//! `commit_ns` (two-phase commit time at the sink).
//!
//! # Mutants (`protocol.mutants`)
//!
//! See [`MUTANTS`]: each removes one safeguard and names the anomaly it allows.

mod cache;
mod client;
mod context;
mod interval;
mod msg;
mod read_policy;

pub use cache::Cache;
pub use client::Client;
pub use context::Context;
pub use interval::{Interval, ROOT_INTERVAL, ReadCase, classify, merge, narrow};
pub use msg::{Answer, Msg, Timer};
pub use read_policy::ReadPolicy;

use crate::catalogue::{self, Mutant, Profile, SeriesStyle};
use crate::tcc_store::{self, Partition, StoreConfig, StoreMsg};
use crate::{FaultModel, Model, metrics, parse_params};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, Value};
use causim_sim::node::{Message, Node, NodeId};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::{MS, Time};
use msg::Out;
use proptest::prelude::*;
use serde::Deserialize;

pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "promise_off_by_one",
        about: "the store promises a replaced version up to its successor's timestamp instead of one below \
         it, so a cache serves the old version at the snapshot where a transaction replaced it, next \
         to that transaction's other writes (fractured read)",
    },
    Mutant {
        name: "no_interval_narrowing",
        about: "the client library never narrows the snapshot interval after a read (Eq. 2), so a later \
         function accepts any cached version, such as half of a transaction whose other half an \
         earlier function read before it (fractured read)",
    },
    Mutant {
        name: "no_fanin_merge",
        about: "a function with several parents starts from its first parent's snapshot interval instead \
         of intersecting all of them (Eq. 3), so branches that read incompatible snapshots commit as \
         one transaction (fractured read)",
    },
];

/// Scenario parameters (`protocol.params`), every field optional.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Storage partitions (machines `P0`, `P1`, …). Default 4; at most 1024.
    #[serde(default = "default_partitions")]
    pub partitions: u32,
    /// Period of the store's pushes of new stable versions to caches. Default 50 ms (§6.1).
    #[serde(default = "default_push_period")]
    pub push_period_ns: Time,
    /// Period of the partitions' stable-time exchange. Default 5 ms (Wren).
    #[serde(default = "default_stabilization_period")]
    pub stabilization_period_ns: Time,
    /// Added to every message a partition sends to a cache or function. Default 0
    /// (CausalMesh §9.1 uses 5 ms).
    #[serde(default)]
    pub storage_latency_ns: Time,
    /// Versions kept per key before the oldest is garbage-collected. Default 1 000 000
    /// (effectively no collection: snapshots can be arbitrarily old, see the module docs).
    #[serde(default = "default_versions_per_key_max")]
    pub versions_per_key_max: u32,
    /// Partition `i`'s clock runs `i × clock_skew_ns` ahead. Default 0.
    #[serde(default)]
    pub clock_skew_ns: Time,
    /// Caches start with every key's initial version and subscribe to every key. Default true.
    #[serde(default = "yes")]
    pub prewarm: bool,
    /// Caches extend the promise of each entry that was its key's newest stable version to the
    /// stable time of every later push from its partition (digest §2.8's switch). Default false.
    #[serde(default)]
    pub promise_bumps: bool,
    /// Time a function spends per KiB of carried metadata before it runs (serialisation), a
    /// calibration knob for comparisons (digest §5.3). Default 0.
    #[serde(default)]
    pub metadata_ns_per_kb: Time,
    /// Each read is a call to the cache of its own, as the CausalMesh authors' clients make
    /// them (one `ClientRead` RPC per key), instead of one call for the reads up to the next
    /// write. Default false.
    #[serde(default)]
    pub one_read_per_call: bool,
    /// Which cached versions a workflow may read: `interval` (the full system, default),
    /// `fixed_promise` or `fixed_exact`, the ablation of Fig. 3 (see `read_policy.rs`).
    #[serde(default)]
    pub read_policy: ReadPolicy,
    /// Entries each cache holds at most, the least recently used evicted first (§6.7, Fig. 9);
    /// 0 disables the cache (every read goes to storage). Requires `prewarm: false`. Default
    /// unbounded.
    #[serde(default)]
    pub cache_capacity_keys: Option<u32>,
}

fn default_partitions() -> u32 {
    4
}
fn default_push_period() -> Time {
    50 * MS
}
fn default_stabilization_period() -> Time {
    5 * MS
}
fn default_versions_per_key_max() -> u32 {
    1_000_000
}
fn yes() -> bool {
    true
}

impl Params {
    /// Checks values the types cannot; paths are relative to `params`.
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.partitions == 0 || self.partitions > tcc_store::PARTITIONS_MAX {
            return Err(FieldError::new(
                "partitions",
                format!("must be between 1 and {}, got {}", tcc_store::PARTITIONS_MAX, self.partitions),
            ));
        }
        if self.push_period_ns == 0 {
            return Err(FieldError::new("push_period_ns", "must be positive"));
        }
        if self.stabilization_period_ns == 0 {
            return Err(FieldError::new("stabilization_period_ns", "must be positive"));
        }
        if self.versions_per_key_max == 0 {
            return Err(FieldError::new("versions_per_key_max", "must be at least 1"));
        }
        if self.clock_skew_ns > 60_000 * MS {
            return Err(FieldError::new("clock_skew_ns", format!("at most 60 s, got {}", self.clock_skew_ns)));
        }
        if self.read_policy == ReadPolicy::FixedExact && self.promise_bumps {
            return Err(FieldError::new("promise_bumps", "must be false with read_policy fixed_exact (bumps are promises)"));
        }
        crate::lru::check_cold(self.cache_capacity_keys, self.prewarm)?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Nodes and the protocol

/// Every role of FaaSTCC.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaastccNode {
    Partition(Partition),
    Cache(Cache),
    Function(Client),
}

impl Node for FaastccNode {
    type Msg = Msg;
    type Timer = Timer;

    fn on_start(&mut self, now: Time, out: &mut Out) {
        match self {
            FaastccNode::Partition(p) => p.on_start(now, out),
            FaastccNode::Cache(_) => {}
            FaastccNode::Function(l) => l.on_start(now, out),
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match (self, msg) {
            (FaastccNode::Partition(p), Msg::Store(m)) => p.on_message(now, from, m, out),
            (FaastccNode::Cache(c), Msg::CacheRead { req, keys, lo, hi }) => c.on_read(now, from, req, keys, (lo, hi), out),
            (FaastccNode::Cache(c), Msg::Store(StoreMsg::ReadReply { req, lst, entries })) => c.on_store_reply(now, req, lst, entries, out),
            (FaastccNode::Cache(c), Msg::Store(StoreMsg::Notify { seq, lst, entries })) => c.on_notify(now, from, seq, lst, entries, out),
            (FaastccNode::Function(l), Msg::CacheReply { req, answers, storage }) => l.on_cache_reply(now, req, answers, storage, out),
            (FaastccNode::Function(l), Msg::Store(StoreMsg::Prepared { tx, pt })) => l.on_prepared(now, tx, pt, out),
            (node, msg) => unreachable!("{} is not for {node:?}", msg.kind()),
        }
    }

    fn on_timer(&mut self, now: Time, timer: Timer, out: &mut Out) {
        match (self, timer) {
            (FaastccNode::Partition(p), Timer::Store(t)) => p.on_timer(now, t, out),
            (FaastccNode::Function(l), Timer::Start) => l.begin(now, out),
            (node, timer) => unreachable!("timer {timer:?} for {node:?}"),
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        match self {
            FaastccNode::Partition(p) => p.check_invariants(),
            FaastccNode::Cache(c) => c.check_invariants(),
            FaastccNode::Function(l) => l.check_invariants(),
        }
    }
}

/// FaaSTCC as the engine sees it: caches `S0…` on the worker machines, partitions `P0…`.
#[derive(Clone, Debug)]
pub struct Faastcc {
    pub servers: u32,
    pub params: Params,
    pub promise_off_by_one: bool,
    pub no_interval_narrowing: bool,
    pub no_fanin_merge: bool,
}

impl Faastcc {
    pub fn new(servers: u32, params: Params, mutants: &[&str]) -> Faastcc {
        Faastcc {
            servers,
            params,
            promise_off_by_one: mutants.contains(&"promise_off_by_one"),
            no_interval_narrowing: mutants.contains(&"no_interval_narrowing"),
            no_fanin_merge: mutants.contains(&"no_fanin_merge"),
        }
    }

    fn cache_ids(&self) -> Vec<NodeId> {
        (0..self.servers as usize).map(NodeId::fixed).collect()
    }

    fn partition_ids(&self) -> Vec<NodeId> {
        (0..self.params.partitions as usize).map(|j| NodeId::fixed(self.servers as usize + j)).collect()
    }

    fn store_config(&self) -> StoreConfig {
        StoreConfig {
            partitions: self.params.partitions,
            push_period_ns: self.params.push_period_ns,
            stabilization_period_ns: self.params.stabilization_period_ns,
            storage_latency_ns: self.params.storage_latency_ns,
            versions_per_key_max: self.params.versions_per_key_max,
            clock_skew_ns: self.params.clock_skew_ns,
            subscribe_all: self.params.prewarm,
            promise_off_by_one: self.promise_off_by_one,
        }
    }
}

impl Protocol for Faastcc {
    type Node = FaastccNode;
    type Context = Context;

    fn fixed_nodes(&self) -> Vec<FixedNode<FaastccNode>> {
        let partitions = self.partition_ids();
        let caches = self.cache_ids();
        let mut nodes: Vec<FixedNode<FaastccNode>> = caches
            .iter()
            .map(|c| FixedNode {
                name: format!("S{}", c.index()),
                machine: format!("S{}", c.index()),
                hosts_workers: true,
                node: FaastccNode::Cache(
                    Cache::new(partitions.clone(), self.params.prewarm, self.no_interval_narrowing, self.params.promise_bumps)
                        .with_read_policy(self.params.read_policy)
                        .with_capacity(self.params.cache_capacity_keys.map(|c| c as usize)),
                ),
            })
            .collect();
        for j in 0..self.params.partitions {
            nodes.push(FixedNode {
                name: format!("P{j}"),
                machine: format!("P{j}"),
                hosts_workers: false,
                node: FaastccNode::Partition(Partition::new(j, partitions.clone(), caches.clone(), self.store_config())),
            });
        }
        nodes
    }

    fn new_context(&self) -> Context {
        Context::root()
    }

    fn spawn_function(&self, start: FunctionStart<'_, Context>) -> FaastccNode {
        FaastccNode::Function(
            Client::new(start, self.partition_ids(), self.no_interval_narrowing, self.params.metadata_ns_per_kb)
                .with_one_read_per_call(self.params.one_read_per_call),
        )
    }

    fn finish_function(&self, node: FaastccNode) -> Context {
        match node {
            FaastccNode::Function(l) => l.into_context(),
            _ => unreachable!("only functions finish"),
        }
    }

    /// Nothing: the sink records the workflow in the handler that sends its commits, and
    /// before that no partition installs a prepared write.
    fn in_flight_writes(&self, node: &FaastccNode) -> Option<Vec<(Key, Value)>> {
        match node {
            FaastccNode::Function(_) => Some(Vec::new()),
            _ => None,
        }
    }

    fn retry_context(&self, aborting: &FaastccNode) -> Option<Context> {
        match aborting {
            FaastccNode::Function(c) => Some(c.retry_context()),
            _ => None,
        }
    }

    fn join_contexts(&self, contexts: Vec<Context>) -> Context {
        Context::join(contexts, self.no_fanin_merge)
    }

    /// The workflow is one transaction that its sink commits: a workflow with several leaves
    /// gets an empty join function that commits it once.
    fn single_sink(&self) -> bool {
        true
    }

    fn final_metrics(&self, nodes: &[&FaastccNode]) -> Vec<(String, f64)> {
        let mut entries = 0usize;
        let mut versions = 0usize;
        for n in nodes {
            match n {
                FaastccNode::Cache(c) => entries += c.entry_count(),
                FaastccNode::Partition(p) => versions += p.version_count(),
                FaastccNode::Function(_) => {}
            }
        }
        vec![(metrics::CACHE_ENTRIES.into(), entries as f64), (metrics::STORE_VERSIONS.into(), versions as f64)]
    }
}

impl Model for Faastcc {
    const ENTRY: catalogue::Entry = catalogue::Entry {
        name: "faastcc",
        about: "FaaSTCC (Middleware '21): snapshot intervals and promises over a Wren-like partitioned store; one TCC transaction per workflow",
        level: Level::Tcc,
        mutants: MUTANTS,
        profile: Profile {
            database: false,
            read_txn: true,
            workflow_txn: true,
            observations: &[
                metrics::METADATA_BYTES,
                metrics::METADATA_BYTES_HOP,
                metrics::FUNCTION_CACHE_ONLY,
                metrics::STORAGE_ROUNDS_PER_READ,
                metrics::STORAGE_BYTES_PER_READ,
                metrics::COMMIT_NS,
                metrics::PUSH_GAPS,
                metrics::VISIBILITY_NS,
                metrics::CACHE_HIT,
                metrics::CACHE_MISS,
                metrics::CACHE_STALE,
                metrics::CACHE_REPLACED,
                metrics::CACHE_EVICTIONS,
            ],
            final_metrics: &[metrics::CACHE_ENTRIES, metrics::STORE_VERSIONS],
            hop_metadata: Some(metrics::METADATA_BYTES_HOP),
            server_metadata: None,
        },
        faults: FaultModel::STATE_KEPT,
        series: &[SeriesStyle { label: "FaaSTCC", colour: (230, 159, 0) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: Params = parse_params(params)?;
        params.validate().map_err(|e| e.within("params"))?;
        Ok(Faastcc::new(topology.servers, params, mutants))
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        let policy = prop::sample::select(ReadPolicy::ALL.to_vec());
        let draws = (
            1u32..4,
            any::<bool>(),
            1u64..60,
            1u64..8,
            prop::option::weighted(0.2, 2u32..8),
            any::<bool>(),
            0u64..3,
            any::<bool>(),
            policy,
        );
        (draws, crate::lru::fuzz_capacity())
            .prop_map(|((partitions, no_prewarm, push_ms, stab_ms, gc, bumps, skew_ms, one_read_per_call, policy), capacity)| {
                // Promise bumps are promises, which the ablation's policy A goes without.
                let bumps = bumps && policy != ReadPolicy::FixedExact;
                let mut p = serde_json::json!({
                    "partitions": partitions, "prewarm": !no_prewarm, "push_period_ns": push_ms * 1_000_000,
                    "stabilization_period_ns": stab_ms * 1_000_000, "promise_bumps": bumps,
                    "one_read_per_call": one_read_per_call,
                });
                if let Some(v) = gc {
                    p["versions_per_key_max"] = serde_json::json!(v);
                }
                if skew_ms > 0 {
                    p["clock_skew_ns"] = serde_json::json!(skew_ms * 1_000_000);
                }
                if policy != ReadPolicy::Interval {
                    p["read_policy"] = serde_json::json!(policy.name());
                }
                crate::lru::set_fuzz_capacity(&mut p, capacity);
                p
            })
            .boxed()
    }
}
