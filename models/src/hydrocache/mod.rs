//! HydroCache (Wu, Sreekanti, Hellerstein, SIGMOD 2020) as CausalMesh (§8–9, Fig. 12) and
//! FaaSTCC (§2, §4.1, §6) describe and configure it: transactional causal consistency for
//! serverless workflows through causally consistent caches over an eventually consistent
//! store. Protocol name `hydrocache`, with `params.mode` = `con` (HydroCache-Con, the
//! conservative protocol) or `opt` (HydroCache-Opt, the optimistic one).
//!
//! # The protocol, in the order that makes it understandable
//!
//! 1. **Versions carry their causal past.** A workflow's writes go to the database as one
//!    batch with the workflow's *dependency map*: key → version for everything in its causal
//!    past (the versions it read and, transitively, their dependencies) and the batch's other
//!    writes (FaaSTCC §2: "the versions of the objects that are in the causal past of that
//!    transaction, together with the version of the other objects written by the
//!    transaction"). By default nothing ever removes an entry, as the CausalMesh comparison runs
//!    HydroCache (§9.3: "absent a separate garbage collection protocol, HydroCache's metadata will
//!    grow infinitely"). With `params.dependency_gc_period_ns`, a background round collects every
//!    entry all caches already cover (§11: HydroCache "implements periodic garbage collection
//!    (GC) using a background consensus protocol"; see "Dependency garbage collection" below).
//! 2. **Each cache keeps a causal cut**: a version is in the cut only with every dependency
//!    covered by an at-least-as-new version in the cut. Every `refresh_period_ns` (100 ms,
//!    CausalMesh §9.1), in its own phase, each cache's background refresh pulls the new
//!    versions of the keys it holds; the cache merges them once their dependencies are
//!    covered, fetching missing dependencies from the database, whose answers may need further
//!    dependencies: the multi-round "chase" of FaaSTCC §4.1 (`storage_rounds_per_read`,
//!    `refresh_rounds`).
//! 3. **A read** of key `k` by a workflow that carries read set `R` (key → version read, and
//!    which cache pinned it) and dependency map `D`:
//!    - a key the workflow wrote returns the buffered write; a key this function read returns
//!      the same value;
//!    - a key read upstream must return the same version: from the local cut if it holds it,
//!      else from the upstream cache that pinned it (one cache-to-cache round trip);
//!    - any other key needs a version at least as new as `D[k]`: the cut's version if it is,
//!      else the database's latest, merged into the cut first (storage rounds).
//! 4. **HydroCache-Opt** (CausalMesh §8: "the scheduler checks for causal violations between
//!    two serverless functions during execution. If a violation is detected, the entire
//!    workflow is aborted and retried"): a function reads from its local cut, then, before its
//!    context goes downstream, its reads are validated: a version whose dependencies name a
//!    *newer* version of a key the workflow already read is a causal violation, and the
//!    workflow aborts (`causal_violation`). At a join, the branches' reads are validated
//!    together (one version per key, none depending on a newer version of another).
//!    Coordination costs 0 RTT in the common case and cache-to-cache or storage rounds
//!    otherwise (Fig. 12: "0 RTT ∼ 2N RTT").
//! 5. **HydroCache-Con** (CausalMesh §8: "prior to execution, a centralized scheduler
//!    distributes the read set to all candidate cache servers and blocks until it has received
//!    their responses with their respective snapshots of the read set. The scheduler then uses
//!    these responses to construct a consistent causal cut and send it back to all cache
//!    servers"): before the workflow's first function runs, its coordinator asks every cache
//!    for a snapshot (each pins its current cut), builds the join of the snapshots (the
//!    newest version of each key among them, which is again a causal cut), and installs it at
//!    every cache: 2 RTTs (Fig. 12). Every function then reads that cut locally. It never
//!    aborts with pre-warmed caches.
//! 6. **Visibility**: a write is visible in a cache once it is merged into its cut, after a
//!    refresh period plus the dependency rounds (Fig. 12: "refresh period").
//!
//! # Choices where the papers are silent or where we deviate (and why)
//!
//! - **Version order.** The database is a single node that orders the versions of each key by
//!   arrival (a per-key sequence number, last writer wins), as CausalMesh's re-implementation
//!   over Redis "with a custom conflict resolution layer" does; a version covers a dependency
//!   when its sequence number is at least the dependency's. Arrival order agrees with
//!   causality because a version can only be read after it reached the database. We do not
//!   model Anna's vector-clock lattices and concurrent-value sets: reads return one value.
//! - **Dependency maps are flattened** (the whole causal past, not nearest dependencies), so a
//!   version's dependencies can be checked without walking the version graph; with last-writer-
//!   wins, nearest dependencies would not be enough (a concurrent newer version of a
//!   dependency does not carry the older one's dependencies). Each entry costs 16 bytes
//!   (key + version), which is what `metadata_bytes` counts.
//! - **Con pins whole cuts**, not only the read set's versions. The engine knows the
//!   workflow's plan, so the coordinator could ask every cache for just the versions of the
//!   keys the workflow reads; each cache pins its whole cut instead (in O(1): cuts are shared
//!   copy-on-write maps), and a function reads the newest version of its key among the
//!   installed cuts. That is the version the join of the read set's snapshots holds, so the
//!   reads, the rounds and the whole run are the same; only the sizes of `ConPinned` and
//!   `ConInstall` are approximate (one 16-byte entry per cache, not the read set's versions).
//!   A key that no snapshot holds (possible only without pre-warming) is fetched from the
//!   database and validated like an Opt read; that corner can abort (`con_outside_snapshot`).
//! - **Static-mode metadata** (FaaSTCC §6.3: HydroCache "optimizes the metadata transferred
//!   from function to function" when the read set is known): Con's `metadata_bytes` counts the
//!   snapshot id (8 bytes) and the versions read (16 bytes each); Opt's counts the dependency
//!   map (16 bytes per entry) and the read set with its pin locations (24 bytes per entry).
//!   The write set travels in both and is not metadata.
//! - **Validation timing.** Opt validates each function's reads when the function ends,
//!   before its context is passed on; function bodies have no effects besides reads and
//!   buffered writes, so this equals validating between functions.
//! - **A version older than the dependency map requires** is refreshed from the database
//!   rather than aborting (HydroCache fetches from storage or an upstream cache; FaaSTCC §2:
//!   "the worker may need to contact the storage multiple times").
//! - **Pre-warmed caches** (`params.prewarm`, default true, CausalMesh §9.1): every cache
//!   holds every key's initial version and is subscribed to every key. A pull then returns
//!   every key written since the cache's previous pull, which together with what the cache
//!   merged before is the database's whole state at the pull, a causal cut: it is merged at
//!   once, without the dependency check (the cut invariant, when checked, confirms it). So
//!   with pre-warmed caches the chase happens only on the read path, when a workflow's
//!   dependency map needs a newer version than the local cut holds.
//! - **Refresh phases** are staggered (cache `i` of `N` first pulls `(i + 1)/N` of a period
//!   in), so different caches hold different cuts, as with independent background threads.
//!   The database answers a pull atomically; real pub/sub is less tidy, so our caches diverge
//!   less than HydroCache's may.
//! - **A batch whose earlier key came from another cache or the database** may need a newer
//!   version of a later key than the local cut served: the rest of the batch is read again
//!   with the updated dependency map (`batch_rereads`).
//! - **Write-behind** (`params.write_behind`, default off): the sink commits as soon as it has
//!   sent its batch, as the CausalMesh authors' HydroCache does (a Redis writer task); the
//!   papers' commit waits for storage. Nothing else changes: the batch reaches the database
//!   later and is pulled like any other, and no later function of the workflow reads it.
//! - **Storage latency** (`storage_latency_ns`) is added to every message the database sends;
//!   it also sits on its own machine `db`, so link overrides work too.
//! - **One source function** per workflow for Con (its coordinator): a workflow with several
//!   sources gets an empty source function from the engine (`Protocol::single_source`), which
//!   prepares the snapshot once for them all. Opt needs none: each source reads from its
//!   local cut, and the joins (and the sink) validate what the branches read together.
//! - **One sink**: the workflow is one transaction, committed by its sink; a workflow with
//!   several leaves gets an empty join function from the engine (`Protocol::single_sink`),
//!   which commits once (each leaf used to commit its ancestors' writes:
//!   `scenarios/hydrocache/regression-several-sinks.json`).
//! - **Pins** (HydroCache's `version_store`): a cache keeps the versions it served to a running
//!   workflow attempt, so a downstream function can read the same version; the sink (or the
//!   function that aborts) tells the caches to drop them (`Cleanup`). Pins are keyed by key
//!   *and* version: parallel branches may read different versions of a key at one cache (the
//!   join's validation aborts the attempt), and until the join each branch's downstream
//!   functions must find their own version. A cache remembers the attempts it cleaned up
//!   (*retired*): an abort kills the attempt's other functions, but a read one of them sent
//!   just before may still arrive after the `Cleanup`; such a read, and any read of a retired
//!   attempt still pending at the `Cleanup`, is dropped (its reader is gone), as is a pinned
//!   read answered "over" by another cache. Without this, a killed function's read of a version
//!   this cache had pinned found no pin (a fuzzer finding:
//!   `scenarios/hydrocache/regression-read-after-cleanup.json`). This needs one sink per
//!   workflow (above): with several, the first sink's `Cleanup` would retire the attempt
//!   under the others.
//! - **Metadata costs no time** unless `params.metadata_ns_per_kb` says so: the engine has no
//!   bandwidth model, so a function may spend that long per KiB of context before it runs (a
//!   calibration knob; FaaSTCC §6.3 attributes much of HydroCache's dynamic-mode latency to
//!   its metadata).
//! - **Bounded caches** (`params.cache_capacity_keys`, default unbounded; FaaSTCC §6.7, Fig. 9,
//!   which bounds HydroCache's cache too but says nothing of how eviction keeps it causal): a
//!   cut holds at most that many versions and evicts the least recently read or merged one
//!   (`lru.rs`) after each message. Dropping a version that others in the cut depend on would
//!   break the cut's closure, and evicting its dependents too would empty the cache (flattened
//!   dependency maps name every hot key). So an evicted key leaves its version number behind
//!   (a *floor*, 16 bytes, not counted as a cached key): the cut covers dependencies up to
//!   the floor and takes in no older version of the key, so it stays a causal cut. The
//!   evicted key's next read misses and goes to the database for its latest version (at least
//!   the floor), merged through the normal dependency check (the chase). Refreshes update only
//!   keys the cut holds. Con's snapshot carries the cuts' versions, not their floors: the join
//!   of bounded cuts can pair a version with an older version of a key it depends on, and the
//!   reader's validation then aborts the workflow (`con_outside_snapshot`), as the paper's
//!   bounded HydroCache aborts when storage no longer holds the version it needs. Capacity 0
//!   disables the cache: every read goes to the database and nothing is subscribed. The paper
//!   does not say whether bounded caches start warm; ours start **cold** (pre-warming means
//!   holding every key), so `prewarm` must be false.
//! - **Dependency garbage collection** (`params.dependency_gc_period_ns`, default off; the
//!   HydroCache paper's protocol is not available here, so this design is ours, `gc.rs`). Every
//!   period, each cache in turn reports to the database the version its cut covers (held or
//!   evicted floor) of each key that changed since its last report, and the newest floor epoch
//!   it knows; at the end of the period the database computes, for each key, the **floor**: the
//!   least version any cache covers, where a cache that never reported a key covers version 0
//!   if pre-warmed, and otherwise the first version the database sent it (a cold cache holds
//!   only versions it was sent, and the database always sends its latest), or nothing if it was
//!   never sent one; a key no cache was sent gets the database's latest version. Cuts only grow
//!   (an eviction leaves its version as a floor), so from that round on every cut covers the
//!   floor, and the floor never falls. The round is epoch `e`; the database sends each cache the
//!   floor of every key that rose since the epoch the cache last reported knowing (so a lost or
//!   late delta is repaired by the next). A dependency entry `(k, s)` with `s` at most the
//!   floor of `k` is then dropped: the database prunes a written version's list when it
//!   stores it and, every round, each stored list that still has entries (a few rounds after
//!   its write it is empty); a pruned list records the epoch at which the floor of a dropped key
//!   last rose. Caches keep the copies they were sent (pruning them too, every round in every
//!   cache, cost 40 times the database's work and 50 % more CPU for 20 % less memory), so
//!   workflows' dependency maps, built from served lists, stay short.
//!   The hazard is Opt's (and Con's) validation, which compares a version's dependencies with
//!   the workflow's other reads: a dropped entry may name a newer version of a key the workflow
//!   read at a cache whose cut was older. So each cache tells a read the newest epoch it knows
//!   (0 if the version served is below that epoch's floor, e.g. a snapshot older than the floor),
//!   and a workflow aborts (`gc_epoch`, counted as `gc_epoch_aborts`) when some version it read
//!   was pruned at a newer epoch than some read was served under, at a function's end or at a
//!   join. Otherwise every dropped entry `(k, s)` has `s ≤ floor_p[k] ≤ floor_e[k] ≤` the
//!   version of `k` the workflow read (served under `e ≥ p`), so it hides no conflict; a
//!   written version inherits the newest pruning epoch of what its workflow read. A cache that
//!   stops reporting (crashed, partitioned) holds every floor back; a lost report only delays
//!   collection. Rounds cost messages (`GcReport`, `GcFloor`, 16 bytes per key) and an epoch
//!   (8 bytes) on pruned versions and on read replies. The database's per-cache reports grow
//!   with the keys the caches hold (data, not metadata).
//! - **Online invariants** (`checks.invariants`): a cache's cut is closed under dependencies
//!   (counting floors); a workflow's validated reads form a causal snapshot.
//!
//! # Metrics (`out.observe`)
//!
//! `metadata_bytes` (per workflow, the context the sink received), `metadata_bytes_hop`,
//! `function_cache_only` (1 when a function needed neither the database nor another cache),
//! `storage_rounds_per_read` (storage round trips per key read through a cache),
//! `remote_reads` (cache-to-cache reads of pinned versions), `refresh_rounds` (rounds to merge
//! one refresh), `visibility_ns` (write at the database → merged into a cache's cut),
//! `con_prepare_ns` (Con's two coordination rounds), `dependency_entries` (size of a written
//! version's dependency map, after collection), `gc_epoch_aborts` (a counter: attempts aborted
//! by the garbage-collection epoch rule).
//!
//! # Mutants (`protocol.mutants`)
//!
//! See [`MUTANTS`].

mod cache;
mod client;
mod context;
mod db;
mod gc;
mod msg;
mod version;

pub use cache::Cache;
pub use client::Client;
pub use context::Context;
pub use db::Db;
pub use msg::{Msg, Need, Timer};
pub use version::{Cut, Deps, HVersion, merge_deps};

use crate::catalogue::{Entry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, metrics, parse_params};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, Value};
use causim_sim::node::{Node, NodeId};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::{MS, Time};
use msg::Out;
use proptest::prelude::*;
use serde::Deserialize;

pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "opt_without_validation",
        about: "HydroCache-Opt never checks a function's reads against what the workflow read before, so a \
     function can read a version whose dependencies include a newer version of a key an earlier \
     function read, such as the other half of a transaction (fractured read)",
    },
    Mutant {
        name: "gc_untagged_reads",
        about: "With dependency garbage collection, caches do not tell a read which floor epoch it was served \
     under, so a workflow that read an old version of a key and then a version whose dependency on a \
     newer one was collected passes validation (fractured read)",
    },
];

/// A version of a key: its position in the key's order at the database (0 = initial).
pub type Seq = u64;
/// A workflow attempt: (workflow id, attempt).
pub type WfKey = (u64, u32);
/// A garbage-collection round's number (0: before the first, whose floor is 0 everywhere).
pub type Epoch = u64;

/// Guards against a dependency chase that never settles (a bug, not a pathology: every round
/// fetches versions already in the database, whose dependencies are older).
pub const INTEGRATION_ROUNDS_MAX: u32 = 10_000;

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// HydroCache-Con: a consistent cut over all caches is built before execution.
    Con,
    /// HydroCache-Opt: read locally, validate between functions, abort on a violation.
    Opt,
}

/// Scenario parameters (`protocol.params`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `con` or `opt` (required).
    pub mode: Mode,
    /// How often the database pushes new versions to caches. Default 100 ms (CausalMesh §9.1).
    #[serde(default = "default_refresh_period")]
    pub refresh_period_ns: Time,
    /// Added to every message the database sends. Default 0 (CausalMesh §9.1 uses 5 ms).
    #[serde(default)]
    pub storage_latency_ns: Time,
    /// Caches start with every key's initial version, subscribed to every key. Default true.
    #[serde(default = "yes")]
    pub prewarm: bool,
    /// Time a function spends per KiB of carried metadata before it runs (serialisation), a
    /// calibration knob for comparisons (digest §5.3). Default 0.
    #[serde(default)]
    pub metadata_ns_per_kb: Time,
    /// The sink commits once it has sent the write batch, without waiting for the database
    /// (the CausalMesh authors' re-implementation hands each write to a Redis writer task and
    /// answers at once). Default false: the commit waits for the database's acknowledgement.
    #[serde(default)]
    pub write_behind: bool,
    /// Each read is a call to the cache of its own, as the CausalMesh authors' clients make
    /// them (one `ClientRead` RPC per key), instead of one call for the reads up to the next
    /// write. Default false.
    #[serde(default)]
    pub one_read_per_call: bool,
    /// Versions each cache's cut holds at most, the least recently used evicted first
    /// (FaaSTCC §6.7, Fig. 9); 0 disables the cache. Requires `prewarm: false`. Default
    /// unbounded.
    #[serde(default)]
    pub cache_capacity_keys: Option<u32>,
    /// Background garbage collection of dependency metadata every this many nanoseconds (see
    /// "Dependency garbage collection" above). Default off, as CausalMesh §9.3 runs HydroCache.
    #[serde(default)]
    pub dependency_gc_period_ns: Option<Time>,
}

fn default_refresh_period() -> Time {
    100 * MS
}
fn yes() -> bool {
    true
}

impl Params {
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.refresh_period_ns == 0 {
            return Err(FieldError::new("refresh_period_ns", "must be positive"));
        }
        if self.dependency_gc_period_ns == Some(0) {
            return Err(FieldError::new("dependency_gc_period_ns", "must be positive (leave it out for no collection)"));
        }
        crate::lru::check_cold(self.cache_capacity_keys, self.prewarm)?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Nodes and the protocol

/// One type for every role, as the engine hosts one node type per protocol.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HydroNode {
    Db(Db),
    Cache(Cache),
    Function(Client),
}

impl Node for HydroNode {
    type Msg = Msg;
    type Timer = Timer;

    fn on_start(&mut self, now: Time, out: &mut Out) {
        match self {
            HydroNode::Db(d) => d.on_start(out),
            HydroNode::Cache(c) => c.on_start(out),
            HydroNode::Function(l) => l.on_start(now, out),
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match self {
            HydroNode::Db(d) => d.on_message(now, from, msg, out),
            HydroNode::Cache(c) => c.on_message(now, from, msg, out),
            HydroNode::Function(l) => l.on_message(now, from, msg, out),
        }
    }

    fn on_timer(&mut self, now: Time, timer: Timer, out: &mut Out) {
        match (self, timer) {
            (HydroNode::Db(d), timer) => d.on_timer(timer, out),
            (HydroNode::Function(l), Timer::Start) => l.begin(now, out),
            (HydroNode::Cache(c), Timer::Refresh) => c.on_refresh(out),
            (HydroNode::Cache(c), Timer::GcReport) => c.on_gc_report(out),
            (node, timer) => unreachable!("timer {timer:?} for {node:?}"),
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        match self {
            HydroNode::Db(_) => Ok(()),
            HydroNode::Cache(c) => c.check_invariants(),
            HydroNode::Function(l) => l.check_invariants(),
        }
    }
}

/// HydroCache as the engine sees it: caches `S0…` on the worker machines, the database `db`.
#[derive(Clone, Debug)]
pub struct HydroCache {
    pub servers: u32,
    pub params: Params,
    pub opt_without_validation: bool,
    pub gc_untagged_reads: bool,
}

impl HydroCache {
    pub fn new(servers: u32, params: Params, mutants: &[&str]) -> HydroCache {
        HydroCache {
            servers,
            params,
            opt_without_validation: mutants.contains(&"opt_without_validation"),
            gc_untagged_reads: mutants.contains(&"gc_untagged_reads"),
        }
    }

    fn caches(&self) -> Vec<NodeId> {
        (0..self.servers as usize).map(NodeId::fixed).collect()
    }

    fn db(&self) -> NodeId {
        NodeId::fixed(self.servers as usize)
    }
}

impl Protocol for HydroCache {
    type Node = HydroNode;
    type Context = Context;

    fn fixed_nodes(&self) -> Vec<FixedNode<HydroNode>> {
        let mut nodes: Vec<FixedNode<HydroNode>> = self
            .caches()
            .into_iter()
            .map(|id| FixedNode {
                name: format!("S{}", id.index()),
                machine: format!("S{}", id.index()),
                hosts_workers: true,
                node: HydroNode::Cache(
                    Cache::new(
                        id,
                        self.db(),
                        self.params.refresh_period_ns,
                        // Staggered phases: cache i first refreshes (i + 1)/N of a period in.
                        self.params.refresh_period_ns * (id.index() as Time + 1) / self.servers as Time,
                        self.params.mode,
                        self.params.prewarm,
                    )
                    .with_capacity(self.params.cache_capacity_keys.map(|c| c as usize))
                    .with_gc(
                        self.params.dependency_gc_period_ns,
                        // Caches report in turn within each period; the database's round ends it.
                        self.params.dependency_gc_period_ns.unwrap_or(0) * (id.index() as Time + 1) / (self.servers as Time + 1),
                    )
                    .with_untagged_reads(self.gc_untagged_reads),
                ),
            })
            .collect();
        nodes.push(FixedNode {
            name: "db".into(),
            machine: "db".into(),
            hosts_workers: false,
            node: HydroNode::Db(
                Db::new(self.servers as usize, self.params.storage_latency_ns, self.params.prewarm)
                    .with_gc(self.params.dependency_gc_period_ns),
            ),
        });
        nodes
    }

    fn new_context(&self) -> Context {
        Context::new()
    }

    fn spawn_function(&self, start: FunctionStart<'_, Context>) -> HydroNode {
        HydroNode::Function(
            Client::new(
                start,
                self.caches(),
                self.db(),
                self.params.mode,
                self.opt_without_validation,
                self.params.metadata_ns_per_kb,
                self.params.write_behind,
            )
            .with_one_read_per_call(self.params.one_read_per_call),
        )
    }

    fn finish_function(&self, node: HydroNode) -> Context {
        match node {
            HydroNode::Function(l) => l.into_context(),
            _ => unreachable!("only functions finish"),
        }
    }

    fn in_flight_writes(&self, node: &HydroNode) -> Option<Vec<(Key, Value)>> {
        match node {
            HydroNode::Function(c) => Some(c.in_flight_writes()),
            _ => None,
        }
    }

    fn retry_context(&self, aborting: &HydroNode) -> Option<Context> {
        match aborting {
            HydroNode::Function(l) => l.retry_context(),
            _ => None,
        }
    }

    fn join_contexts(&self, contexts: Vec<Context>) -> Context {
        Context::join(contexts)
    }

    /// The workflow is one transaction that its sink commits and cleans up after: a workflow
    /// with several leaves gets an empty join function that does both once.
    fn single_sink(&self) -> bool {
        true
    }

    /// Con's coordinator prepares the snapshot once, at the workflow's one source.
    fn single_source(&self) -> bool {
        self.params.mode == Mode::Con
    }

    fn final_metrics(&self, nodes: &[&HydroNode]) -> Vec<(String, f64)> {
        let mut keys = 0usize;
        let mut deps = 0u64;
        for n in nodes {
            if let HydroNode::Cache(c) = n {
                keys += c.cut_len();
                deps += c.cut_dependency_entries();
            }
        }
        vec![(metrics::CACHE_ENTRIES.into(), keys as f64), (metrics::CACHE_METADATA_BYTES.into(), (16 * deps) as f64)]
    }
}

impl Model for HydroCache {
    const ENTRY: Entry = Entry {
        name: "hydrocache",
        about: "HydroCache (SIGMOD '20), -Con and -Opt: dependency-tracking caches; one TCC transaction per workflow",
        level: Level::Tcc,
        mutants: MUTANTS,
        profile: Profile {
            database: true,
            read_txn: true,
            workflow_txn: true,
            observations: &[
                metrics::DEPENDENCY_ENTRIES,
                metrics::REFRESH_ROUNDS,
                metrics::RETIRED_READS,
                metrics::REMOTE_READS,
                metrics::VISIBILITY_NS,
                metrics::METADATA_BYTES,
                metrics::METADATA_BYTES_HOP,
                metrics::BATCH_REREADS,
                metrics::STORAGE_ROUNDS_PER_READ,
                metrics::STORAGE_BYTES_PER_READ,
                metrics::FUNCTION_CACHE_ONLY,
                metrics::CON_PREPARE_NS,
                metrics::CACHE_EVICTIONS,
                metrics::GC_EPOCH_ABORTS,
            ],
            final_metrics: &[metrics::CACHE_ENTRIES, metrics::CACHE_METADATA_BYTES],
            hop_metadata: Some(metrics::METADATA_BYTES_HOP),
            server_metadata: Some(metrics::CACHE_METADATA_BYTES),
        },
        faults: FaultModel::STATE_KEPT,
        series: &[
            SeriesStyle { label: "HydroCache-Con", colour: (0, 158, 115) },
            SeriesStyle { label: "HydroCache-Opt", colour: (204, 121, 167) },
        ],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: Params = parse_params(params)?;
        params.validate().map_err(|e| e.within("params"))?;
        Ok(HydroCache::new(topology.servers, params, mutants))
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        // The collection period is the last draw, so the cases drawn before it are unchanged; short
        // periods put rounds inside the fuzzer's workflows (milliseconds each).
        let gc_ms = prop::option::weighted(0.6, 1u64..30);
        (any::<bool>(), 1u64..120, any::<bool>(), any::<bool>(), any::<bool>(), crate::lru::fuzz_capacity(), gc_ms)
            .prop_map(|(opt, refresh_ms, no_prewarm, write_behind, one_read_per_call, capacity, gc_ms)| {
                let mut p = serde_json::json!({
                    "mode": if opt { "opt" } else { "con" },
                    "refresh_period_ns": refresh_ms * 1_000_000,
                    "prewarm": !no_prewarm,
                    "write_behind": write_behind,
                    "one_read_per_call": one_read_per_call,
                });
                crate::lru::set_fuzz_capacity(&mut p, capacity);
                if let Some(ms) = gc_ms {
                    p["dependency_gc_period_ns"] = serde_json::json!(ms * 1_000_000);
                }
                p
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::Effect;
    use causim_sim::workload::Op;

    const X: Key = 1;
    const Y: Key = 2;
    const CLIENT: NodeId = NodeId(1 << 63);

    /// Two pre-warmed caches and the database, hand-driven: every message is delivered at once,
    /// timers fire only when a step fires them.
    struct Harness {
        nodes: Vec<HydroNode>,
        protocol: HydroCache,
        /// The function running, if any.
        function: Option<HydroNode>,
        /// What the function asked of the engine: done, or aborted with a reason.
        ended: Vec<Result<(), &'static str>>,
    }

    impl Harness {
        fn new(gc: bool) -> Harness {
            let params = Params {
                mode: Mode::Opt,
                refresh_period_ns: 100 * MS,
                storage_latency_ns: 0,
                prewarm: true,
                metadata_ns_per_kb: 0,
                write_behind: false,
                one_read_per_call: false,
                cache_capacity_keys: None,
                dependency_gc_period_ns: gc.then_some(100 * MS),
            };
            let protocol = HydroCache::new(2, params, &[]);
            let nodes = protocol.fixed_nodes().into_iter().map(|f| f.node).collect();
            Harness { nodes, protocol, function: None, ended: Vec::new() }
        }

        /// Hands `msg` from `from` to `to`, then everything it causes, in order.
        fn deliver(&mut self, from: NodeId, to: NodeId, msg: Msg) {
            let mut queue = std::collections::VecDeque::from([(from, to, msg)]);
            while let Some((from, to, msg)) = queue.pop_front() {
                let mut out = Out::default();
                let node = if to.is_function() { self.function.as_mut().expect("a function runs") } else { &mut self.nodes[to.index()] };
                node.on_message(0, from, msg, &mut out);
                queue.extend(self.effects(to, out));
            }
        }

        fn effects(&mut self, from: NodeId, out: Out) -> Vec<(NodeId, NodeId, Msg)> {
            let mut sends = Vec::new();
            for e in out.effects {
                match e {
                    Effect::Send { to, msg } => sends.push((from, to, msg)),
                    Effect::FunctionDone => self.ended.push(Ok(())),
                    Effect::AbortWorkflow { reason } => self.ended.push(Err(reason)),
                    _ => {}
                }
            }
            sends
        }

        fn fire(&mut self, node: usize, timer: Timer) {
            let mut out = Out::default();
            self.nodes[node].on_timer(0, timer, &mut out);
            for (from, to, msg) in self.effects(NodeId::fixed(node), out) {
                self.deliver(from, to, msg);
            }
        }

        /// A transaction that read `deps` writes `key` (sent to the database directly).
        fn write(&mut self, key: Key, deps: &[(Key, Seq)]) {
            let msg = Msg::WriteTx { deps: Deps::from_sorted(deps.to_vec()), writes: vec![(key, 1)], ack: false };
            self.deliver(CLIENT, self.protocol.db(), msg);
        }

        /// Runs one function of workflow 1 on cache `cache`, reading `key`; returns its context.
        fn read(&mut self, cache: usize, key: Key, context: Context, sink: bool) -> Context {
            let colocated = [NodeId::fixed(cache)];
            let start = FunctionStart {
                self_id: CLIENT,
                workflow_id: 1,
                attempt: 1,
                function: u32::from(sink),
                machine: cache,
                colocated: &colocated,
                ops: vec![Op::Read { key }],
                context,
                is_source: !sink,
                is_sink: sink,
                remaining: 0,
                now: 0,
            };
            self.function = Some(self.protocol.spawn_function(start));
            let mut out = Out::default();
            self.function.as_mut().expect("spawned").on_start(0, &mut out);
            for (from, to, msg) in self.effects(CLIENT, out) {
                self.deliver(from, to, msg);
            }
            self.protocol.finish_function(self.function.take().expect("ran"))
        }
    }

    /// The hazard garbage collection brings (module docs, "Dependency garbage collection"): W
    /// reads x at S1 before S1 has T2's x; T3 read T2's x and wrote y. Once every cache covers
    /// T2's x, the database prunes y's dependency on it, so S0 holds y without it, and W's
    /// validation at S0 cannot see that y needs a newer x than W read. The epoch rule aborts W.
    fn hazard(gc: bool) -> (Vec<Result<(), &'static str>>, Option<Seq>) {
        let mut h = Harness::new(gc);
        h.write(X, &[]); // T2: x@1
        h.fire(0, Timer::Refresh); // S0 merges x@1
        h.write(Y, &[(X, 1)]); // T3 read x@1: y@1 depends on it
        let ctx = h.read(1, X, Context::new(), false); // W reads x@0 at S1 (stale)
        assert_eq!(ctx.read_set[&X].0, 0);
        h.fire(1, Timer::Refresh); // S1 merges x@1 and y@1
        if gc {
            h.fire(0, Timer::GcReport);
            h.fire(1, Timer::GcReport);
            h.fire(2, Timer::GcRound); // floor x = 1 at epoch 1
        }
        h.fire(0, Timer::Refresh); // S0 merges y@1, pruned of x@1 if collected
        let HydroNode::Cache(s0) = &h.nodes[0] else { unreachable!() };
        let y_depends_on_x = s0.cut_version(Y).expect("merged").deps.get(X);
        h.read(0, Y, ctx, true); // W's sink reads y at S0
        (h.ended, y_depends_on_x)
    }

    #[test]
    fn a_read_pruned_at_a_newer_epoch_than_an_earlier_read_aborts_the_workflow() {
        // Without collection, validation sees y's dependency on x@1 and aborts.
        assert_eq!(hazard(false), (vec![Ok(()), Err("causal_violation")], Some(1)));
        // With it, y arrives without that dependency; only the epoch rule stands between W and a
        // fractured read (x@0 with y@1).
        assert_eq!(hazard(true), (vec![Ok(()), Err("gc_epoch")], None));
    }
}
