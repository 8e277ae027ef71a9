//! CausalMesh and CausalMesh-TCC (Zhang, Angel, Mu, Liu; VLDB 2025).
//!
//! # The protocol, in the order that makes it understandable
//!
//! Serverless workflows roam: consecutive functions may run on different machines, each with
//! its own cache server. CausalMesh gives a workflow causal+ consistency across caches without
//! coordination or aborts.
//!
//! 1. **Versions** (§3.2). Every write gets a vector clock (VC) from the server that receives
//!    it (its *head*); deps map keys to the versions a write depends on (nearest deps only).
//!    Concurrent versions converge: VCs merge, the lexicographically larger VC's value wins.
//! 2. **The dual cache** (§4, `cache.rs`). Reads are served from the C-cache, which is always a
//!    strict causal cut (Definition 1). New versions wait in the I-cache. *Integration* (Fig. 3)
//!    moves the versions a dependency map needs, transitively, from the I-cache to the C-cache.
//! 3. **Writes** (§5.2, Fig. 7, `server.rs`). The head adds the write to its I-cache, flushes it
//!    to the database, acknowledges it, and sends it along its *propagation chain*: every
//!    server heads one chain `S_i → S_{i+1} → … → S_{i−1}` and is the tail of another (Fig. 5).
//!    Intermediate servers put the write in their I-cache; the tail integrates it into its
//!    C-cache (and may *disseminate* it: tell the others to integrate it). A write is visible
//!    to other clients only once it reached the tail, so every server already holds it.
//! 4. **Carried local writes** (Fig. 6). A workflow's own writes travel in its context
//!    (`local`) and go with each new write, so a server never holds a write without the
//!    writer's earlier writes it depends on.
//! 5. **Reads** (§5.3). The client sends its deps; the server integrates them and answers from
//!    the C-cache. A read transaction (§5.4) reads several keys from the same cut; it aborts if
//!    the workflow's own write of a key is newer than that cut (Fig. 8).
//! 6. **The client library** (§6, Fig. 10, `client.rs`): `deps` and `local`, carried from
//!    function to function by the scheduler, merged at joins.
//! 7. **CausalMesh-TCC** (§7). A workflow is a transaction: writes are buffered and sent as one
//!    batch at the end, integrated atomically; the C-cache keeps a ring buffer of versions per
//!    key, and a read returns the oldest version that forms a cut with the read set, or aborts
//!    the workflow; parallel branches' read sets are validated at the join.
//!
//! # Choices where the paper is silent or where we deviate (and why)
//!
//! - **Write VCs** dominate the write's deps and carried writes (`gvc ⊔ deps ⊔ local`, then
//!   the head's entry is incremented), as in the authors' Dafny model. Fig. 7 shows only the
//!   increment; without the join, conflict resolution could order a write before a version it
//!   causally follows.
//! - **Chain messages carry the writer's carried writes** (Fig. 7 lines 29–30 read `local` in
//!   ServerWrite), so every server holds them before the write can be revealed. We do this in
//!   the two-round chain too (the authors' later variant, `params.chain = "two_round"`, does
//!   not): its second round only trails a carried write on the servers after that write's head.
//! - **Exact dependencies.** Deps are sets of exact versions, `local` keeps every write of the
//!   workflow, and integration pulls exactly the versions named (Fig. 3 says "this version").
//!   The paper's prose and the authors' code merge deps per key into one VC and integrate "every
//!   I-cache version ≤ the dependency". But a head's VCs order all its writes, so VC dominance
//!   is not causality: merged deps can (a) skip an older version whose dependencies were never
//!   pulled, and (b) pull an unrelated version at its head before it reached the other servers;
//!   merging `local` per key drops an older own write that a carried write depends on exactly.
//!   Our seed sweeps found all three as checker-visible anomalies (tests/causalmesh.rs); with
//!   exact versions the correct protocol passes them. A workflow's context is short-lived, so
//!   the sets stay small.
//! - **Pre-warmed caches** (§9.1): a key never cached is at its initial state. Misses happen
//!   only after eviction; a miss fetches from the database exactly the version the request
//!   depends on (or the one evicted), installs it after its dependencies, and never routes
//!   it through the chain — a version fetched straight from the database could otherwise be
//!   shown before it reached every server (see `server.rs`). Eviction needs synchronous
//!   database flushes so every visible version is durable.
//! - **Database flush** (`params.db_flush`): `sync` (default, §5.2) acknowledges a write and
//!   starts its chain after the database acknowledges the flush; `async` (the option the
//!   paper mentions) does both at once.
//! - **Read-transaction aborts** (§5.4) are "handled by the client library by notifying the
//!   scheduler". We retry the read transaction itself after `params.read_txn_retry_ns`, up to
//!   `params.read_txn_attempts_max` times, and only then abort the workflow: re-running the
//!   whole workflow would re-execute its write, whose new value is again newer than the cut,
//!   so "write x, then read x in a transaction" would never succeed.
//! - **CausalMesh-TCC batches** carry one VC for all their writes, and each write depends on
//!   the others, so integration always takes the whole batch. A workflow with several leaves
//!   gets a dummy join sink (§7), which the engine adds.
//! - **The C-cache keeps deps** as ghost state so the cut invariant can be checked; they count
//!   as metadata only for CausalMesh-TCC, as the paper counts them (§9.3).
//!
//! # Mutants (`protocol.mutants`)
//!
//! See [`MUTANTS`]: each removes one safeguard and names the anomaly it allows.

mod cache;
mod client;
mod db;
mod icache;
mod msg;
mod recent;
mod server;
pub mod vc;

pub use cache::{CacheRules, DualCache};
pub use client::{Client, ClientRules, MeshContext};
pub use db::Database;
pub use msg::Msg;
pub use server::{Chain, Server, ServerRules};

use crate::catalogue::{Entry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, Support, metrics, parse_params};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, Value};
use causim_sim::node::{Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use proptest::prelude::*;
use serde::Deserialize;

/// Named bugs (the scenario's `protocol.mutants`). CausalMesh-TCC has no read without
/// integration (its reads always integrate), and only CausalMesh-TCC checks cuts.
pub const MUTANTS: &[Mutant] = &[
    NO_CARRY_LOCAL_WRITES,
    READ_WITHOUT_INTEGRATION,
    REVEAL_AT_HEAD,
    NEAREST_DEPS_ONLY,
    EVICT_IGNORES_DEPENDENTS,
    INTEGRATE_BY_VC_DOMINANCE,
    DISSEMINATION_SKIPS_HEAD,
];

/// CausalMesh-TCC's named bugs.
pub const TCC_MUTANTS: &[Mutant] = &[
    NO_CARRY_LOCAL_WRITES,
    REVEAL_AT_HEAD,
    NEAREST_DEPS_ONLY,
    EVICT_IGNORES_DEPENDENTS,
    INTEGRATE_BY_VC_DOMINANCE,
    TCC_IGNORES_CUT,
    JOIN_CHECKS_DIRECT_DEPS,
    DISSEMINATION_SKIPS_HEAD,
];

const NO_CARRY_LOCAL_WRITES: Mutant = Mutant {
    name: "no_carry_local_writes",
    about: "the client does not carry its local writes, so a write can be revealed at a server that \
         lacks the writer's earlier write it depends on (Fig. 6: y is visible without x; \
         WriteCOInitRead)",
};

const READ_WITHOUT_INTEGRATION: Mutant = Mutant {
    name: "read_without_integration",
    about: "ClientRead answers from the C-cache without integrating the request's deps, so a \
         session that moved can read a version older than one it already depends on \
         (monotonic reads / WriteCORead)",
};

const REVEAL_AT_HEAD: Mutant = Mutant {
    name: "reveal_at_head",
    about: "the head makes a write visible at once instead of at the tail, so a reader who moves to \
         another server cannot find it (stale read after a causally later one; WriteCORead)",
};

const NEAREST_DEPS_ONLY: Mutant = Mutant {
    name: "nearest_deps_only",
    about: "integration pulls only the nearest deps, not theirs, so the C-cache can show z without \
         the x that z's dep y needs (the C-cache is not a cut; WriteCOInitRead)",
};

const EVICT_IGNORES_DEPENDENTS: Mutant = Mutant {
    name: "evict_ignores_dependents",
    about: "eviction removes a key but keeps the keys that depend on it, so the C-cache stops \
         being a cut and a later read returns a dependency's older version (WriteCORead)",
};

const INTEGRATE_BY_VC_DOMINANCE: Mutant = Mutant {
    name: "integrate_by_vc_dominance",
    about: "integration pulls every I-cache version whose VC is ≤ a dependency (the authors' code and \
         TLA+ spec) instead of the exact versions depended on: a head's VCs order all its writes, so \
         a tail can reveal an unrelated earlier write of that head before it reached the other \
         servers (the one-round chain then shows stale reads: WriteCOInitRead)",
};

const DISSEMINATION_SKIPS_HEAD: Mutant = Mutant {
    name: "dissemination_skips_head",
    about: "with params.disseminate, the tail asks every server but the write's head to integrate it (the \
         head holds it already, but only in its I-cache), so once the run is quiet the head's C-cache \
         still shows an older version than the others' (no convergence: diverged_keys > 0)",
};

const TCC_IGNORES_CUT: Mutant = Mutant {
    name: "tcc_ignores_cut",
    about: "CausalMesh-TCC reads return the newest version without checking that it forms a cut \
         with the read set (fractured read: FracturedReadCO)",
};

const JOIN_CHECKS_DIRECT_DEPS: Mutant = Mutant {
    name: "join_checks_direct_deps",
    about: "CausalMesh-TCC's validation at a join checks only the direct dependencies of the writes \
         read, so a branch that read x=2 (whose past holds c=1 through x=1) joins one that read the \
         initial c (COConflictCM)",
};

/// `protocol.params` for `causalmesh` and `causalmesh_tcc`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CausalMeshParams {
    /// `one_round` (default) or `two_round`.
    #[serde(default)]
    pub chain: Chain,
    /// The tail tells every server to integrate a write it revealed. Default false.
    #[serde(default)]
    pub disseminate: bool,
    /// `sync` (default) or `async`.
    #[serde(default)]
    pub db_flush: DbFlush,
    /// CausalMesh-TCC: versions kept per key in the C-cache. Default 1 (the evaluation's).
    #[serde(default = "one")]
    pub ring_size: usize,
    /// CausalMesh-TCC: which version of the ring a read takes among those that form a cut with
    /// the read set: `oldest` (default; Fig. 11 line 18 as written) or `newest` (§7's intent,
    /// a larger ring giving a read more chances to find a cut; docs/fidelity.md).
    #[serde(default)]
    pub ring_read: RingRead,
    /// Keys each C-cache may hold before it evicts; default unlimited.
    #[serde(default)]
    pub c_cache_keys_max: Option<usize>,
    /// CausalMesh: wait before retrying an aborted read transaction. Default 1 ms.
    #[serde(default = "default_read_txn_retry_ns")]
    pub read_txn_retry_ns: Time,
    /// CausalMesh: attempts of one read transaction before the workflow aborts. Default 10.
    #[serde(default = "default_read_txn_attempts_max")]
    pub read_txn_attempts_max: u32,
}

fn default_read_txn_retry_ns() -> Time {
    1_000_000
}

fn default_read_txn_attempts_max() -> u32 {
    10
}

fn one() -> usize {
    1
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum RingRead {
    #[default]
    Oldest,
    Newest,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum DbFlush {
    #[default]
    Sync,
    Async,
}

/// Every role of CausalMesh.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MeshNode {
    Server(Box<Server>),
    Database(Box<Database>),
    Client(Box<Client>),
}

impl Node for MeshNode {
    type Msg = Msg;
    type Timer = ();

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        if let MeshNode::Client(c) = self {
            c.on_start(now, out);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, ()>) {
        match self {
            MeshNode::Server(s) => s.on_message(now, from, msg, out),
            MeshNode::Database(d) => d.on_message(from, msg, out),
            MeshNode::Client(c) => c.on_message(now, msg, out),
        }
    }

    fn on_timer(&mut self, now: Time, _timer: (), out: &mut Outbox<Msg, ()>) {
        if let MeshNode::Client(c) = self {
            c.on_timer(now, out);
        }
    }

    fn on_restart(&mut self, _now: Time, _out: &mut Outbox<Msg, ()>) {
        if let MeshNode::Server(s) = self {
            s.restart();
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        match self {
            MeshNode::Server(s) => s.check_invariants(),
            MeshNode::Client(c) => c.check_invariants(),
            MeshNode::Database(_) => Ok(()),
        }
    }
}

/// CausalMesh (or CausalMesh-TCC) as the engine sees it.
#[derive(Clone, Debug)]
pub struct CausalMesh {
    pub servers: usize,
    pub params: CausalMeshParams,
    pub tcc: bool,
    pub mutants: Vec<String>,
}

impl CausalMesh {
    fn has(&self, mutant: &str) -> bool {
        self.mutants.iter().any(|m| m == mutant)
    }

    pub fn db_id(&self) -> NodeId {
        NodeId::fixed(self.servers)
    }

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig, tcc: bool) -> Result<Self, FieldError> {
        let params: CausalMeshParams = parse_params(params)?;
        let err = |path: &str, message: String| FieldError::new(path, message);
        if params.ring_size == 0 || params.ring_size > 1024 {
            return Err(err("params.ring_size", format!("must be between 1 and 1024, got {}", params.ring_size)));
        }
        if params.read_txn_attempts_max == 0 {
            return Err(err("params.read_txn_attempts_max", "must be at least 1".into()));
        }
        if params.ring_size > 1 && !tcc {
            return Err(err("params.ring_size", "only CausalMesh-TCC keeps several versions (use causalmesh_tcc)".into()));
        }
        if params.ring_read != RingRead::Oldest && !tcc {
            return Err(err("params.ring_read", "only CausalMesh-TCC reads from a ring of versions (use causalmesh_tcc)".into()));
        }
        if let Some(max) = params.c_cache_keys_max {
            if max < 4 {
                return Err(err("params.c_cache_keys_max", format!("must be at least 4, got {max}")));
            }
            if params.db_flush == DbFlush::Async {
                return Err(err(
                    "params.c_cache_keys_max",
                    "eviction needs db_flush \"sync\": a miss must find every visible version in the database".into(),
                ));
            }
        }
        if topology.servers as usize > vc::VC_SERVERS_MAX {
            return Err(err(
                "topology.servers",
                format!("CausalMesh is modelled with up to {} servers, got {}", vc::VC_SERVERS_MAX, topology.servers),
            ));
        }
        Ok(CausalMesh { servers: topology.servers as usize, params, tcc, mutants: mutants.iter().map(|m| m.to_string()).collect() })
    }

    fn server_rules(&self) -> ServerRules {
        ServerRules {
            chain: self.params.chain,
            disseminate: self.params.disseminate,
            sync_flush: self.params.db_flush == DbFlush::Sync,
            tcc: self.tcc,
            ring_read: self.params.ring_read,
            reveal_at_head: self.has("reveal_at_head"),
            read_without_integration: self.has("read_without_integration"),
            tcc_ignores_cut: self.has("tcc_ignores_cut"),
            join_checks_direct_deps: self.has("join_checks_direct_deps"),
            dissemination_skips_head: self.has("dissemination_skips_head"),
        }
    }

    fn cache_rules(&self) -> CacheRules {
        CacheRules {
            transitive: !self.has("nearest_deps_only"),
            by_dominance: self.has("integrate_by_vc_dominance"),
            evict_dependents: !self.has("evict_ignores_dependents"),
            ring_size: if self.tcc { self.params.ring_size } else { 1 },
            keys_max: self.params.c_cache_keys_max,
            prewarmed: true,
            keep_write_deps: self.tcc,
        }
    }
}

impl Protocol for CausalMesh {
    type Node = MeshNode;
    type Context = MeshContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<MeshNode>> {
        let ring: Vec<NodeId> = (0..self.servers).map(NodeId::fixed).collect();
        let mut nodes: Vec<FixedNode<MeshNode>> = (0..self.servers)
            .map(|i| FixedNode {
                name: format!("S{i}"),
                machine: format!("S{i}"),
                hosts_workers: true,
                node: MeshNode::Server(Box::new(Server::new(
                    i,
                    ring.clone(),
                    self.db_id(),
                    self.server_rules(),
                    DualCache::new(self.servers, self.cache_rules()),
                ))),
            })
            .collect();
        nodes.push(FixedNode {
            name: "db".into(),
            machine: "db".into(),
            hosts_workers: false,
            node: MeshNode::Database(Box::new(Database::new(self.servers, self.params.c_cache_keys_max.is_some()))),
        });
        nodes
    }

    fn new_context(&self) -> MeshContext {
        MeshContext::default()
    }

    fn spawn_function(&self, start: FunctionStart<'_, MeshContext>) -> MeshNode {
        let rules = ClientRules {
            tcc: self.tcc,
            carry_local: !self.has("no_carry_local_writes"),
            read_txn_retry_ns: self.params.read_txn_retry_ns,
            read_txn_attempts_max: self.params.read_txn_attempts_max,
        };
        let last = start.is_sink && start.remaining == 0;
        MeshNode::Client(Box::new(Client::new(start.colocated[0], start.function, rules, start.ops, start.context, last, start.now)))
    }

    fn finish_function(&self, node: MeshNode) -> MeshContext {
        match node {
            MeshNode::Client(c) => c.into_context(),
            _ => unreachable!("only clients finish"),
        }
    }

    fn in_flight_writes(&self, node: &MeshNode) -> Option<Vec<(Key, Value)>> {
        match node {
            MeshNode::Client(c) => c.in_flight_writes(),
            _ => None,
        }
    }

    fn retry_context(&self, aborting: &MeshNode) -> Option<MeshContext> {
        match aborting {
            MeshNode::Client(c) => c.retry_context(),
            _ => None,
        }
    }

    fn join_contexts(&self, contexts: Vec<MeshContext>) -> MeshContext {
        let mut it = contexts.into_iter();
        let mut joined = it.next().unwrap_or_default();
        for c in it {
            joined.join(c);
        }
        joined
    }

    fn single_sink(&self) -> bool {
        self.tcc
    }

    fn final_metrics(&self, nodes: &[&MeshNode]) -> Vec<(String, f64)> {
        let mut metadata = 0u64;
        let mut icache = 0usize;
        for n in nodes {
            if let MeshNode::Server(s) = n {
                metadata += s.cache().metadata_bytes();
                icache += s.cache().i_cache_len();
            }
        }
        let mut finals =
            vec![(metrics::METADATA_BYTES_FINAL.into(), metadata as f64), (metrics::ICACHE_VERSIONS_FINAL.into(), icache as f64)];
        if self.params.disseminate {
            finals.push((metrics::DIVERGED_KEYS.into(), diverged_keys(nodes) as f64));
        }
        finals
    }
}

/// Keys whose visible version differs between servers: causal+ convergence (with
/// dissemination, once the run is quiet, every C-cache shows the same winner of every key).
fn diverged_keys(nodes: &[&MeshNode]) -> usize {
    let servers: Vec<&Server> = nodes
        .iter()
        .filter_map(|n| match n {
            MeshNode::Server(s) => Some(&**s),
            _ => None,
        })
        .collect();
    let keys: std::collections::BTreeSet<causim_sim::history::Key> = servers.iter().flat_map(|s| s.cache().cached_keys()).collect();
    keys.into_iter()
        .filter(|&k| servers.windows(2).any(|pair| pair[0].cache().visible(k).winner != pair[1].cache().visible(k).winner))
        .count()
}

/// What both CausalMesh variants report.
const PROFILE: Profile = Profile {
    database: true,
    read_txn: true,
    workflow_txn: false,
    observations: &[
        metrics::CONTEXT_BYTES,
        metrics::REQUEST_METADATA_BYTES,
        metrics::ICACHE_BYTES,
        metrics::ICACHE_BYTES_AS_AUTHORS_COUNT,
        metrics::VISIBILITY_NS,
    ],
    final_metrics: &[metrics::METADATA_BYTES_FINAL, metrics::ICACHE_VERSIONS_FINAL, metrics::DIVERGED_KEYS],
    hop_metadata: Some(metrics::CONTEXT_BYTES),
    server_metadata: Some(metrics::METADATA_BYTES_FINAL),
};

/// Parameters worth fuzzing; shrinks towards async flushes, no eviction, one-round chains, no
/// dissemination. Both variants draw the same values (the ring size too), so a committed fuzz
/// regression of either regenerates the same case.
fn fuzz_params(tcc: bool) -> BoxedStrategy<serde_json::Value> {
    (any::<bool>(), prop::option::weighted(0.3, 4usize..8), any::<bool>(), any::<bool>(), 1usize..4)
        .prop_map(move |(sync, evict, two_round, disseminate, ring)| {
            let mut p = serde_json::json!({"db_flush": if sync || evict.is_some() { "sync" } else { "async" }});
            if two_round {
                p["chain"] = serde_json::json!("two_round");
            }
            if disseminate {
                p["disseminate"] = serde_json::json!(true);
            }
            if let Some(n) = evict {
                p["c_cache_keys_max"] = serde_json::json!(n);
            }
            if tcc {
                p["ring_size"] = serde_json::json!(ring);
                // Both read rules, without a draw of their own (which would regenerate every
                // committed regression differently): a ring of 2 reads the newest version that
                // forms a cut, a ring of 3 the oldest (with one version they agree).
                if ring == 2 {
                    p["ring_read"] = serde_json::json!("newest");
                }
            }
            p
        })
        .boxed()
}

/// The paper's channels are FIFO and delay but never lose messages, and it gives no recovery
/// for a cache server.
const FAULTS: FaultModel = FaultModel {
    drop_partition: Support::Outside(
        "the paper assumes channels that delay but never lose messages: a dropped chain message leaves a write in the I-caches forever",
    ),
    loss: Support::Outside(
        "the paper assumes channels that delay but never lose messages: a lost chain message leaves a write in the I-caches forever",
    ),
    crash: Support::Outside(
        "the paper gives no recovery for a cache server: a restarted server has lost its caches and clock, so later reads can go back in time",
    ),
    restart: Support::Outside("the paper gives no recovery for a cache server"),
    crashes_max: 0,
};

/// `causalmesh`: causal+ consistency.
impl Model for CausalMesh {
    const ENTRY: Entry = Entry {
        name: "causalmesh",
        about: "CausalMesh (VLDB '25): dual C-/I-cache servers with propagation chains; causal+ consistency for roaming workflows",
        level: Level::Ccv,
        mutants: MUTANTS,
        profile: PROFILE,
        faults: FAULTS,
        series: &[SeriesStyle { label: "CausalMesh", colour: (0, 114, 178) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        CausalMesh::build(params, mutants, topology, false)
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        fuzz_params(false)
    }
}

/// `causalmesh_tcc`: transactional causal consistency, one transaction per workflow.
#[derive(Clone, Debug)]
pub struct CausalMeshTcc(pub CausalMesh);

impl Protocol for CausalMeshTcc {
    type Node = MeshNode;
    type Context = MeshContext;
    fn fixed_nodes(&self) -> Vec<FixedNode<MeshNode>> {
        self.0.fixed_nodes()
    }
    fn new_context(&self) -> MeshContext {
        self.0.new_context()
    }
    fn spawn_function(&self, start: FunctionStart<'_, MeshContext>) -> MeshNode {
        self.0.spawn_function(start)
    }
    fn finish_function(&self, node: MeshNode) -> MeshContext {
        self.0.finish_function(node)
    }
    fn retry_context(&self, aborting: &MeshNode) -> Option<MeshContext> {
        self.0.retry_context(aborting)
    }
    fn in_flight_writes(&self, node: &MeshNode) -> Option<Vec<(Key, Value)>> {
        self.0.in_flight_writes(node)
    }
    fn join_contexts(&self, contexts: Vec<MeshContext>) -> MeshContext {
        self.0.join_contexts(contexts)
    }
    fn single_sink(&self) -> bool {
        true
    }
    fn final_metrics(&self, nodes: &[&MeshNode]) -> Vec<(String, f64)> {
        self.0.final_metrics(nodes)
    }
}

impl Model for CausalMeshTcc {
    const ENTRY: Entry = Entry {
        name: "causalmesh_tcc",
        about: "CausalMesh-TCC (VLDB '25 §7): CausalMesh with multi-version C-caches; one causally consistent transaction per workflow",
        level: Level::Tcc,
        mutants: TCC_MUTANTS,
        profile: Profile { workflow_txn: true, ..PROFILE },
        faults: FAULTS,
        series: &[SeriesStyle { label: "CausalMesh-TCC", colour: (86, 180, 233) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        Ok(CausalMeshTcc(CausalMesh::build(params, mutants, topology, true)?))
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        fuzz_params(true)
    }
}
