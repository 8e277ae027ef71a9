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
//!    transaction"). Nothing ever removes an entry: the metadata grows without garbage
//!    collection (CausalMesh §9.3, §11).
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
//! - **The read set is not known in advance in our engine**: a function learns its operations
//!   when it starts. HydroCache-Con therefore pins and installs *whole cuts* (as shared,
//!   copy-on-write maps) instead of the read set's versions: the same two rounds with every
//!   cache, and the same reads, but its message sizes are counted as one 16-byte entry per
//!   cache (the bytes of the read set's versions are not known when the messages are sent).
//!   A key that no snapshot holds (possible only without pre-warming) is fetched from the
//!   database and validated like an Opt read; that corner can abort (`con_outside_snapshot`).
//!   With the engine change described in the report (the workflow's reads given to its first
//!   function), Con would gather exactly the read set.
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
//! - **Storage latency** (`storage_latency_ns`) is added to every message the database sends;
//!   it also sits on its own machine `db`, so link overrides work too.
//! - **One source function** per workflow for Con (its coordinator).
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
//!   `scenarios/hydrocache/regression-read-after-cleanup.json`). This assumes one sink per
//!   workflow (every workflow the fuzzer and the generators build has one): with several,
//!   the first sink's `Cleanup` would retire the attempt under the others.
//! - **Metadata costs no time** unless `params.metadata_ns_per_kb` says so: the engine has no
//!   bandwidth model, so a function may spend that long per KiB of context before it runs (a
//!   calibration knob; FaaSTCC §6.3 attributes much of HydroCache's dynamic-mode latency to
//!   its metadata).
//! - **Online invariants** (`checks.invariants`): a cache's cut is closed under dependencies;
//!   a workflow's validated reads form a causal snapshot.
//!
//! # Metrics (`out.observe`)
//!
//! `metadata_bytes` (per workflow, the context the sink received), `metadata_bytes_hop`,
//! `function_cache_only` (1 when a function needed neither the database nor another cache),
//! `storage_rounds_per_read` (storage round trips per key read through a cache),
//! `remote_reads` (cache-to-cache reads of pinned versions), `refresh_rounds` (rounds to merge
//! one refresh), `visibility_ns` (write at the database → merged into a cache's cut),
//! `con_prepare_ns` (Con's two coordination rounds), `dependency_entries` (size of a written
//! version's dependency map).
//!
//! # Mutants (`protocol.mutants`)
//!
//! See [`MUTANTS`].

use crate::catalogue::{Entry, Mutant, Profile, SeriesStyle};
use crate::{Model, metrics, parse_params};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, OpKind, OpRecord, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::{Message, Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::{MS, Time};
use causim_sim::workload::Op;
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::Arc;

pub const MUTANTS: &[Mutant] = &[Mutant {
    name: "opt_without_validation",
    about: "HydroCache-Opt never checks a function's reads against what the workflow read before, so a \
     function can read a version whose dependencies include a newer version of a key an earlier \
     function read, such as the other half of a transaction (fractured read)",
}];

/// A version of a key: its position in the key's order at the database (0 = initial).
pub type Seq = u64;
/// A workflow attempt: (workflow id, attempt).
pub type WfKey = (u64, u32);

/// Guards against a dependency chase that never settles (a bug, not a pathology: every round
/// fetches versions already in the database, whose dependencies are older).
pub const INTEGRATION_ROUNDS_MAX: u32 = 10_000;

// ---------------------------------------------------------------------------------------------
// Shared immutable data (dependency maps, pinned cuts) with a short Debug

/// A dependency map: key → version, sorted by key. Shared: every copy is a reference.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Deps(Arc<Vec<(Key, Seq)>>);

impl fmt::Debug for Deps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "deps({})", self.0.len())
    }
}

impl Deps {
    pub fn from_sorted(v: Vec<(Key, Seq)>) -> Deps {
        debug_assert!(v.windows(2).all(|w| w[0].0 < w[1].0));
        Deps(Arc::new(v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: Key) -> Option<Seq> {
        self.0.binary_search_by_key(&key, |e| e.0).ok().map(|i| self.0[i].1)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(Key, Seq)> {
        self.0.iter()
    }
}

/// Merges two sorted dependency lists, keeping the newer version of each key.
pub fn merge_deps(a: &[(Key, Seq)], b: &[(Key, Seq)]) -> Vec<(Key, Seq)> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1.max(b[j].1)));
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// A version as the database stores it and caches hold it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HVersion {
    pub seq: Seq,
    pub value: Option<Value>,
    /// The writer's causal past and its other writes (flattened).
    pub deps: Deps,
    /// When the database stored it (for the visibility metric only).
    pub written_ns: Time,
}

impl HVersion {
    pub fn initial() -> HVersion {
        HVersion { seq: 0, value: None, deps: Deps::default(), written_ns: 0 }
    }

    fn wire_bytes(&self) -> u64 {
        24 + 16 * self.deps.len() as u64
    }
}

/// A cache's causal cut, shared copy-on-write so that Con can pin it in O(1).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cut(Arc<BTreeMap<Key, HVersion>>);

impl fmt::Debug for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cut({} keys)", self.0.len())
    }
}

// ---------------------------------------------------------------------------------------------
// Parameters

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
pub struct HydroParams {
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
}

fn default_refresh_period() -> Time {
    100 * MS
}
fn yes() -> bool {
    true
}

impl HydroParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.refresh_period_ns == 0 {
            return Err(FieldError::new("refresh_period_ns", "must be positive"));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Messages

/// What a read of a key requires of the version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Need {
    /// At least this version (0: any).
    AtLeast(Seq),
    /// Exactly this version, pinned at this cache (read upstream).
    Exact(Seq, NodeId),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // cache ↔ database
    Fetch {
        req: u64,
        keys: Vec<Key>,
        subscribe: bool,
    },
    FetchReply {
        req: u64,
        versions: Vec<(Key, HVersion)>,
    },
    /// A cache's periodic refresh: what changed since its last pull.
    Pull,
    Notify {
        versions: Vec<(Key, HVersion)>,
    },
    // sink ↔ database
    WriteTx {
        deps: Deps,
        writes: Vec<(Key, Value)>,
    },
    WriteAck {
        seqs: Vec<(Key, Seq)>,
    },
    // library ↔ its cache
    Read {
        req: u64,
        wf: WfKey,
        keys: Vec<(Key, Need)>,
    },
    /// Per key: the version, the storage rounds it took, and whether it came from another cache.
    ReadReply {
        req: u64,
        versions: Vec<(Key, HVersion, u32, bool)>,
    },
    // cache ↔ cache: a version pinned for a workflow upstream
    PinnedRead {
        req: u64,
        wf: WfKey,
        key: Key,
        seq: Seq,
    },
    /// `None`: the workflow attempt is over (its pins were cleaned up); the reader is gone.
    PinnedReply {
        req: u64,
        key: Key,
        version: Option<HVersion>,
    },
    // Con: the coordinator ↔ every cache
    ConPrepare {
        wf: WfKey,
    },
    ConPinned {
        wf: WfKey,
        cut: Cut,
    },
    ConInstall {
        wf: WfKey,
        cuts: Vec<Cut>,
    },
    ConInstalled {
        wf: WfKey,
    },
    /// The workflow attempt is over: drop its pins and snapshot.
    Cleanup {
        wf: WfKey,
    },
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Fetch { .. } => "Fetch",
            Msg::FetchReply { .. } => "FetchReply",
            Msg::Pull => "Pull",
            Msg::Notify { .. } => "Notify",
            Msg::WriteTx { .. } => "WriteTx",
            Msg::WriteAck { .. } => "WriteAck",
            Msg::Read { .. } => "CacheRead",
            Msg::ReadReply { .. } => "CacheReply",
            Msg::PinnedRead { .. } => "PinnedRead",
            Msg::PinnedReply { .. } => "PinnedReply",
            Msg::ConPrepare { .. } => "ConPrepare",
            Msg::ConPinned { .. } => "ConPinned",
            Msg::ConInstall { .. } => "ConInstall",
            Msg::ConInstalled { .. } => "ConInstalled",
            Msg::Cleanup { .. } => "Cleanup",
        }
    }

    fn size_bytes(&self) -> u64 {
        let versions = |v: &[(Key, HVersion)]| v.iter().map(|(_, v)| 8 + v.wire_bytes()).sum::<u64>();
        1 + match self {
            Msg::Fetch { keys, .. } => 9 + 8 * keys.len() as u64,
            Msg::FetchReply { versions: v, .. } => 8 + versions(v),
            Msg::Pull => 0,
            Msg::Notify { versions: v } => versions(v),
            Msg::WriteTx { deps, writes } => 16 * deps.len() as u64 + 16 * writes.len() as u64,
            Msg::WriteAck { seqs } => 16 * seqs.len() as u64,
            Msg::Read { keys, .. } => 20 + 24 * keys.len() as u64,
            Msg::ReadReply { versions, .. } => 8 + versions.iter().map(|(_, v, _, _)| 8 + v.wire_bytes()).sum::<u64>(),
            Msg::PinnedRead { .. } => 36,
            Msg::PinnedReply { version, .. } => 17 + version.as_ref().map_or(0, HVersion::wire_bytes),
            Msg::ConPrepare { .. } | Msg::ConInstalled { .. } | Msg::Cleanup { .. } => 12,
            // See the module docs: the read set's bytes are not known; one entry per cache.
            Msg::ConPinned { .. } => 28,
            Msg::ConInstall { cuts, .. } => 12 + 16 * cuts.len() as u64,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    Refresh,
    Release(u64),
    /// A function has deserialised its context (`metadata_ns_per_kb`).
    Start,
}

type Out = Outbox<Msg, Timer>;

// ---------------------------------------------------------------------------------------------
// The database: eventually consistent, one latest version per key

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Db {
    /// How many caches pull (the log prefix all of them have pulled is dropped).
    cache_count: usize,
    latency_ns: Time,
    subscribe_all: bool,
    latest: BTreeMap<Key, HVersion>,
    subscribers: BTreeMap<Key, BTreeSet<NodeId>>,
    /// Keys in write order, from `log_base` on (the prefix every cache pulled is dropped).
    log: Vec<Key>,
    log_base: usize,
    /// Per cache, the log position its last pull reached.
    pulled: BTreeMap<NodeId, usize>,
    held: BTreeMap<u64, (NodeId, Msg)>,
    next_held: u64,
}

impl Db {
    fn latest(&self, key: Key) -> HVersion {
        self.latest.get(&key).cloned().unwrap_or_else(HVersion::initial)
    }

    fn send_out(&mut self, to: NodeId, msg: Msg, out: &mut Out) {
        if self.latency_ns == 0 {
            out.send(to, msg);
            return;
        }
        let seq = self.next_held;
        self.next_held += 1;
        self.held.insert(seq, (to, msg));
        out.set_timer(Timer::Release(seq), self.latency_ns);
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match msg {
            Msg::Fetch { req, keys, subscribe } => {
                let versions = keys
                    .into_iter()
                    .map(|k| {
                        if subscribe && !self.subscribe_all {
                            self.subscribers.entry(k).or_default().insert(from);
                        }
                        (k, self.latest(k))
                    })
                    .collect();
                self.send_out(from, Msg::FetchReply { req, versions }, out);
            }
            Msg::WriteTx { deps, writes } => {
                // The batch's versions depend on the writer's causal past and on each other.
                let mut seqs: Vec<(Key, Seq)> = writes.iter().map(|&(k, _)| (k, self.latest(k).seq + 1)).collect();
                seqs.sort_unstable();
                seqs.dedup_by_key(|e| e.0);
                let all = Deps::from_sorted(merge_deps(&deps.0, &seqs));
                out.observe(metrics::DEPENDENCY_ENTRIES, all.len() as u64);
                for &(k, v) in &writes {
                    let seq = seqs[seqs.binary_search_by_key(&k, |e| e.0).expect("assigned")].1;
                    self.latest.insert(k, HVersion { seq, value: Some(v), deps: all.clone(), written_ns: now });
                    self.log.push(k);
                }
                out.trace("DbWrite", || format!("{{\"keys\":{},\"deps\":{}}}", seqs.len(), all.len()));
                self.send_out(from, Msg::WriteAck { seqs }, out);
            }
            Msg::Pull => {
                // The newest version of every subscribed key written since this cache's last pull.
                let from_pos = self.pulled.get(&from).copied().unwrap_or(self.log_base);
                let keys: BTreeSet<Key> = self.log[from_pos - self.log_base..].iter().copied().collect();
                let subscribed = |k: &Key| self.subscribe_all || self.subscribers.get(k).is_some_and(|s| s.contains(&from));
                let versions: Vec<(Key, HVersion)> = keys.into_iter().filter(subscribed).map(|k| (k, self.latest(k))).collect();
                self.pulled.insert(from, self.log_base + self.log.len());
                let oldest = self.pulled.values().copied().min().unwrap_or(self.log_base);
                if self.pulled.len() == self.cache_count && oldest > self.log_base {
                    self.log.drain(..oldest - self.log_base);
                    self.log_base = oldest;
                }
                self.send_out(from, Msg::Notify { versions }, out);
            }
            other => unreachable!("{} is not for the database", other.kind()),
        }
    }

    fn on_timer(&mut self, timer: Timer, out: &mut Out) {
        match timer {
            Timer::Release(seq) => {
                let (to, msg) = self.held.remove(&seq).expect("released once");
                out.send(to, msg);
            }
            Timer::Refresh | Timer::Start => unreachable!("{timer:?} is not for the database"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The cache

/// Merging versions into the cut: waits for missing dependencies (the chase).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Integration {
    pending: BTreeMap<Key, HVersion>,
    rounds: u32,
    /// A read waiting for this merge, or a refresh.
    read: Option<(u64, usize)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PendingRead {
    client: NodeId,
    client_req: u64,
    wf: WfKey,
    /// Per key: what it needs, the answer, storage rounds, from another cache.
    items: Vec<(Key, Need, Option<HVersion>, u32, bool)>,
    waiting: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HCache {
    id: NodeId,
    db: NodeId,
    /// Refresh period and this cache's phase within it (caches refresh independently).
    refresh_period_ns: Time,
    refresh_phase_ns: Time,
    mode: Mode,
    prewarm: bool,
    cut: Cut,
    next_req: u64,
    integrations: BTreeMap<u64, Integration>,
    reads: BTreeMap<u64, PendingRead>,
    /// Remote pinned reads in flight: our request id → (read, item).
    remote: BTreeMap<u64, (u64, usize)>,
    /// Versions served to each running workflow attempt, so downstream functions read them
    /// again; by (key, version), since parallel branches may read different versions of a key.
    pins: BTreeMap<WfKey, BTreeMap<(Key, Seq), HVersion>>,
    /// Workflow attempts this cache cleaned up: their reads come from killed functions.
    retired: BTreeSet<WfKey>,
    /// Con: the snapshots installed for each running workflow attempt.
    snapshots: BTreeMap<WfKey, Vec<Cut>>,
}

impl HCache {
    /// The cut's version of `key` (the initial version when pre-warmed and absent).
    fn in_cut(&self, key: Key) -> Option<HVersion> {
        match self.cut.0.get(&key) {
            Some(v) => Some(v.clone()),
            None if self.prewarm => Some(HVersion::initial()),
            None => None,
        }
    }

    fn have_seq(&self, key: Key) -> Seq {
        self.cut.0.get(&key).map_or(0, |v| v.seq)
    }

    /// Where a read looks first: Con's installed snapshot (the join of every cache's cut), or
    /// the local cut.
    fn candidate(&self, wf: WfKey, key: Key) -> Option<HVersion> {
        match (self.mode, self.snapshots.get(&wf)) {
            (Mode::Con, Some(cuts)) => {
                let best = cuts.iter().filter_map(|c| c.0.get(&key)).max_by_key(|v| v.seq).cloned();
                best.or_else(|| self.prewarm.then(HVersion::initial))
            }
            _ => self.in_cut(key),
        }
    }

    pub fn cut_len(&self) -> usize {
        self.cut.0.len()
    }

    /// Dependency entries held in the cut (HydroCache's metadata, CausalMesh §9.3).
    pub fn cut_dependency_entries(&self) -> u64 {
        self.cut.0.values().map(|v| v.deps.len() as u64).sum()
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match msg {
            Msg::Read { req, wf, keys } => self.on_read(now, from, req, wf, keys, out),
            Msg::FetchReply { req, versions } => self.on_fetch_reply(now, req, versions, out),
            Msg::Notify { versions } => {
                let pending: BTreeMap<Key, HVersion> = versions.into_iter().filter(|(k, v)| v.seq > self.have_seq(*k)).collect();
                if self.prewarm {
                    // Subscribed to every key, a pull returns every key changed since the last
                    // one: with what we merged before, that is the database's whole state at
                    // the pull, which is causally closed. Nothing to check (the cut invariant,
                    // when checked, confirms it).
                    self.merge(now, pending, out);
                    out.observe(metrics::REFRESH_ROUNDS, 0);
                } else if !pending.is_empty() {
                    self.integrate(now, pending, Vec::new(), None, out);
                }
            }
            Msg::PinnedRead { req, wf, key, seq } => {
                // Pins live until the attempt commits or aborts; a read from a function of an
                // aborted attempt may still be in flight.
                let version = self.pins.get(&wf).and_then(|p| p.get(&(key, seq))).cloned();
                out.send(from, Msg::PinnedReply { req, key, version });
            }
            Msg::PinnedReply { req, key, version } => {
                // A read dropped because its attempt ended may still have other replies coming.
                let Some((read, item)) = self.remote.remove(&req) else { return };
                let Some(version) = version else {
                    // The reader's attempt is over: drop its read.
                    self.reads.remove(&read);
                    self.remote.retain(|_, (r, _)| *r != read);
                    return;
                };
                let r = self.reads.get_mut(&read).expect("its read is pending");
                assert_eq!(r.items[item].0, key);
                r.items[item].4 = true;
                self.serve(read, item, version, 0, out);
            }
            Msg::ConPrepare { wf } => out.send(from, Msg::ConPinned { wf, cut: self.cut.clone() }),
            Msg::ConInstall { wf, cuts } => {
                self.snapshots.insert(wf, cuts);
                out.send(from, Msg::ConInstalled { wf });
            }
            Msg::Cleanup { wf } => {
                self.pins.remove(&wf);
                self.snapshots.remove(&wf);
                // The attempt is over: its functions are done or killed. Drop their pending
                // reads (an integration or a remote read still in flight then finds none) and
                // any read that arrives later.
                self.retired.insert(wf);
                self.reads.retain(|_, r| r.wf != wf);
                let reads = &self.reads;
                self.remote.retain(|_, (read, _)| reads.contains_key(read));
            }
            other => unreachable!("{} is not for a cache", other.kind()),
        }
    }

    fn on_read(&mut self, now: Time, client: NodeId, client_req: u64, wf: WfKey, keys: Vec<(Key, Need)>, out: &mut Out) {
        if self.retired.contains(&wf) {
            // Sent by a function of an attempt that is over (killed by an abort): its pins are
            // gone, and so is the reader.
            out.observe(metrics::RETIRED_READS, 1);
            return;
        }
        let id = self.next_req;
        self.next_req += 1;
        let items = keys.iter().map(|&(k, need)| (k, need, None, 0, false)).collect();
        self.reads.insert(id, PendingRead { client, client_req, wf, items, waiting: keys.len() });
        for (item, (key, need)) in keys.into_iter().enumerate() {
            let candidate = self.candidate(wf, key);
            match need {
                Need::Exact(seq, at) => {
                    let pinned = self.pins.get(&wf).and_then(|p| p.get(&(key, seq))).cloned();
                    match candidate.filter(|v| v.seq == seq).or(pinned) {
                        Some(v) => self.serve(id, item, v, 0, out),
                        None => {
                            assert_ne!(at, self.id, "we pinned every version we served");
                            out.observe(metrics::REMOTE_READS, 1);
                            let req = self.next_req;
                            self.next_req += 1;
                            self.remote.insert(req, (id, item));
                            out.send(at, Msg::PinnedRead { req, wf, key, seq });
                        }
                    }
                }
                Need::AtLeast(seq) => match candidate {
                    Some(v) if v.seq >= seq => self.serve(id, item, v, 0, out),
                    // Missing, or older than the workflow's dependencies: fetch and merge first.
                    _ => self.integrate(now, BTreeMap::new(), vec![key], Some((id, item)), out),
                },
            }
        }
    }

    /// One key of a read is answered; the read completes with its last key.
    fn serve(&mut self, read: u64, item: usize, version: HVersion, rounds: u32, out: &mut Out) {
        let r = self.reads.get_mut(&read).expect("pending read");
        let key = r.items[item].0;
        r.items[item].2 = Some(version.clone());
        r.items[item].3 = rounds;
        r.waiting -= 1;
        let done = r.waiting == 0;
        let wf = r.wf;
        self.pins.entry(wf).or_default().insert((key, version.seq), version);
        if done {
            let r = self.reads.remove(&read).expect("present");
            let versions = r.items.into_iter().map(|(k, _, v, rounds, remote)| (k, v.expect("answered"), rounds, remote)).collect();
            out.send(r.client, Msg::ReadReply { req: r.client_req, versions });
        }
    }

    /// Starts merging `pending` (plus the database's latest `fetch`) into the cut.
    fn integrate(&mut self, now: Time, pending: BTreeMap<Key, HVersion>, fetch: Vec<Key>, read: Option<(u64, usize)>, out: &mut Out) {
        let req = self.next_req;
        self.next_req += 1;
        self.integrations.insert(req, Integration { pending, rounds: 0, read });
        if fetch.is_empty() {
            self.step(now, req, out);
        } else {
            self.fetch(req, fetch, out);
        }
    }

    fn fetch(&mut self, req: u64, keys: Vec<Key>, out: &mut Out) {
        let i = self.integrations.get_mut(&req).expect("integration");
        i.rounds += 1;
        assert!(i.rounds <= INTEGRATION_ROUNDS_MAX, "dependency chase did not settle");
        out.send(self.db, Msg::Fetch { req, keys, subscribe: !self.prewarm });
    }

    fn on_fetch_reply(&mut self, now: Time, req: u64, versions: Vec<(Key, HVersion)>, out: &mut Out) {
        let i = self.integrations.get_mut(&req).expect("a fetch of a running integration");
        for (k, v) in versions {
            let newer = i.pending.get(&k).is_none_or(|p| v.seq > p.seq);
            if newer {
                i.pending.insert(k, v);
            }
        }
        self.step(now, req, out);
    }

    /// Fetches the dependencies the pending versions need and the cut lacks, or merges.
    fn step(&mut self, now: Time, req: u64, out: &mut Out) {
        let i = &self.integrations[&req];
        let have = |k: Key| i.pending.get(&k).map_or(0, |v| v.seq).max(self.have_seq(k));
        let mut missing = BTreeSet::new();
        for v in i.pending.values() {
            for &(k, s) in v.deps.iter() {
                if have(k) < s {
                    missing.insert(k);
                }
            }
        }
        if !missing.is_empty() {
            self.fetch(req, missing.into_iter().collect(), out);
            return;
        }
        let mut i = self.integrations.remove(&req).expect("present");
        // Every pending version's dependencies are covered by the cut plus the others: merge.
        self.merge(now, std::mem::take(&mut i.pending), out);
        match i.read {
            // The read was dropped (its attempt ended) while we fetched.
            Some((read, _)) if !self.reads.contains_key(&read) => {}
            Some((read, item)) => {
                let r = &self.reads[&read];
                let (key, need) = (r.items[item].0, r.items[item].1);
                let v = self.in_cut(key).expect("just merged");
                if let Need::AtLeast(s) = need {
                    assert!(v.seq >= s, "the database holds every version anything depends on");
                }
                self.serve(read, item, v, i.rounds, out);
            }
            None => out.observe(metrics::REFRESH_ROUNDS, i.rounds as u64),
        }
    }

    /// Merges versions into the cut (newer ones only); the caller checked their dependencies.
    fn merge(&mut self, now: Time, versions: BTreeMap<Key, HVersion>, out: &mut Out) {
        if versions.is_empty() {
            return;
        }
        let cut = Arc::make_mut(&mut self.cut.0);
        for (k, v) in versions {
            if cut.get(&k).is_none_or(|old| v.seq > old.seq) {
                if v.seq > 0 {
                    out.observe(metrics::VISIBILITY_NS, now.saturating_sub(v.written_ns));
                }
                cut.insert(k, v);
            }
        }
    }

    /// The cut is closed: every dependency is covered by an at-least-as-new version.
    fn check_invariants(&self) -> Result<(), String> {
        for (k, v) in self.cut.0.iter() {
            for &(d, s) in v.deps.iter() {
                if self.have_seq(d) < s {
                    return Err(format!(
                        "the cut holds key {k} version {} which depends on key {d} version {s}, but the cut has version {}",
                        v.seq,
                        self.have_seq(d)
                    ));
                }
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The workflow context and the client library

/// What a workflow carries from function to function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HydroContext {
    /// Versions read, and the cache that pinned each.
    pub read_set: BTreeMap<Key, (Seq, NodeId)>,
    /// The dependency map: the versions read and their causal past (sorted by key).
    pub deps: Vec<(Key, Seq)>,
    pub write_set: BTreeMap<Key, Value>,
    /// Con: the snapshot is installed at every cache.
    pub con_ready: bool,
    /// Caches that pinned versions for this attempt.
    pub pinned_at: BTreeSet<NodeId>,
    /// History bookkeeping (not protocol metadata).
    pub ops: BTreeMap<(Time, u32, u32), OpRecord>,
    /// Validated reads with their dependencies, for the invariant (bookkeeping).
    pub reads_log: Vec<(Key, Seq, Deps)>,
    pub started_ns: Option<Time>,
    /// Parallel branches read versions that are not causally consistent with each other.
    pub join_violation: bool,
}

impl HydroContext {
    fn new() -> HydroContext {
        HydroContext {
            read_set: BTreeMap::new(),
            deps: Vec::new(),
            write_set: BTreeMap::new(),
            con_ready: false,
            pinned_at: BTreeSet::new(),
            ops: BTreeMap::new(),
            reads_log: Vec::new(),
            started_ns: None,
            join_violation: false,
        }
    }

    /// The protocol metadata's size (see the module docs).
    pub fn metadata_bytes(&self, mode: Mode) -> u64 {
        match mode {
            Mode::Con => 8 + 16 * self.read_set.len() as u64,
            Mode::Opt => 16 * self.deps.len() as u64 + 24 * self.read_set.len() as u64,
        }
    }

    fn join(contexts: Vec<HydroContext>) -> HydroContext {
        let mut j = HydroContext::new();
        j.con_ready = true;
        for c in contexts {
            for (k, (s, at)) in c.read_set {
                let e = j.read_set.entry(k).or_insert((s, at));
                // Parallel branches may have read different versions: keep the newer (the
                // write's dependencies must cover both); validation at the join catches it.
                if s > e.0 {
                    *e = (s, at);
                }
            }
            j.deps = merge_deps(&j.deps, &c.deps);
            j.write_set.extend(c.write_set);
            j.con_ready &= c.con_ready;
            j.pinned_at.extend(c.pinned_at);
            j.ops.extend(c.ops);
            for r in c.reads_log {
                if !j.reads_log.contains(&r) {
                    j.reads_log.push(r);
                }
            }
            j.started_ns = match (j.started_ns, c.started_ns) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            j.join_violation |= c.join_violation;
        }
        crate::faastcc::keep_last_writes(&mut j.write_set, &j.ops);
        // Validation between functions, at a join: the branches' reads together must be a
        // causal snapshot (one version per key, none depending on a newer version of another).
        j.join_violation |= inconsistent(&j.reads_log);
        j
    }
}

/// Whether some key was read at two versions, or some read depends on a newer version of another
/// key read.
fn inconsistent(log: &[(Key, Seq, Deps)]) -> bool {
    log.iter().any(|(k1, s1, deps)| {
        log.iter().any(|(k2, s2, _)| (k1 == k2 && s1 != s2) || (k1 != k2 && deps.get(*k2).is_some_and(|need| need > *s2)))
    })
}

/// The first pair of reads that violates causality: `earlier` (key, version) read, then a
/// version of `later` whose dependencies need a newer `earlier`.
fn conflict(reads: &BTreeMap<Key, (Seq, NodeId)>, key: Key, v: &HVersion) -> Option<Key> {
    reads.iter().find(|&(&k, &(s, _))| k != key && v.deps.get(k).is_some_and(|need| need > s)).map(|(&k, _)| k)
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum HState {
    Running,
    /// Con: gathering every cache's snapshot, then installing the join.
    ConGather {
        cuts: Vec<Option<Cut>>,
        left: usize,
        started_ns: Time,
    },
    ConInstall {
        left: usize,
        started_ns: Time,
    },
    AwaitCache {
        req: u64,
        batch: Vec<Key>,
    },
    AwaitWrite,
    Finished,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HLib {
    cache: NodeId,
    caches: Vec<NodeId>,
    db: NodeId,
    mode: Mode,
    no_validation: bool,
    metadata_ns_per_kb: Time,
    wf: WfKey,
    function: u32,
    is_source: bool,
    is_sink: bool,
    ops: Vec<Op>,
    next_op: usize,
    ctx: HydroContext,
    /// This function's reads, for repeated reads.
    fn_reads: BTreeMap<Key, Option<Value>>,
    /// This function's reads from caches, validated when it ends (Opt).
    fresh: Vec<(Key, HVersion)>,
    /// The first causal violation among this function's reads: (key read, conflicting key).
    violation: Option<(Key, Key)>,
    /// Some read of this function needed the database or another cache.
    used_remote: bool,
    state: HState,
    next_req: u64,
    op_index: u32,
}

impl HLib {
    fn on_start(&mut self, now: Time, out: &mut Out) {
        if self.is_sink {
            out.observe(metrics::METADATA_BYTES, self.ctx.metadata_bytes(self.mode));
        }
        let delay = self.metadata_ns_per_kb * self.ctx.metadata_bytes(self.mode) / 1024;
        if delay > 0 {
            out.set_timer(Timer::Start, delay);
            return;
        }
        self.begin(now, out);
    }

    fn begin(&mut self, now: Time, out: &mut Out) {
        if self.ctx.join_violation && !self.no_validation {
            let reason = if self.mode == Mode::Con { "con_outside_snapshot" } else { "causal_violation" };
            self.abort(now, reason, out);
            return;
        }
        if self.mode == Mode::Con && !self.ctx.con_ready {
            assert!(self.is_source, "HydroCache-Con prepares at the workflow's source");
            for &c in &self.caches {
                out.send(c, Msg::ConPrepare { wf: self.wf });
            }
            self.state = HState::ConGather { cuts: vec![None; self.caches.len()], left: self.caches.len(), started_ns: now };
            return;
        }
        self.run(now, out);
    }

    fn record_op(&mut self, now: Time, op: OpRecord) {
        let mut op = op;
        op.node = Some(self.cache);
        op.at_ns = Some(now);
        self.ctx.ops.insert((now, self.function, self.op_index), op);
        self.op_index += 1;
    }

    fn run(&mut self, now: Time, out: &mut Out) {
        loop {
            let Some(op) = self.ops.get(self.next_op).cloned() else {
                self.finish(now, out);
                return;
            };
            match op {
                Op::Write { key, value } => {
                    self.ctx.write_set.insert(key, value);
                    self.record_op(now, OpRecord::write(key, value));
                    self.next_op += 1;
                }
                Op::Read { .. } | Op::ReadTxn { .. } => {
                    let mut batch = Vec::new();
                    while let Some(op) = self.ops.get(self.next_op) {
                        match op {
                            Op::Read { key } => batch.push(*key),
                            Op::ReadTxn { keys } => batch.extend(keys.iter().copied()),
                            Op::Write { .. } => break,
                        }
                        self.next_op += 1;
                    }
                    if self.request(&batch, out) {
                        return;
                    }
                    self.complete_batch(now, &batch, BTreeMap::new(), out);
                }
            }
        }
    }

    /// Asks the cache for the keys of `batch` not served locally; false if there are none.
    fn request(&mut self, batch: &[Key], out: &mut Out) -> bool {
        let mut needs: Vec<(Key, Need)> = Vec::new();
        for &k in batch {
            if self.ctx.write_set.contains_key(&k) || self.fn_reads.contains_key(&k) || needs.iter().any(|n| n.0 == k) {
                continue;
            }
            let need = match self.ctx.read_set.get(&k) {
                Some(&(seq, at)) => Need::Exact(seq, at),
                None => Need::AtLeast(self.dep(k)),
            };
            needs.push((k, need));
        }
        if needs.is_empty() {
            return false;
        }
        let req = self.next_req;
        self.next_req += 1;
        out.send(self.cache, Msg::Read { req, wf: self.wf, keys: needs });
        self.state = HState::AwaitCache { req, batch: batch.to_vec() };
        true
    }

    fn dep(&self, key: Key) -> Seq {
        self.ctx.deps.binary_search_by_key(&key, |e| e.0).map_or(0, |i| self.ctx.deps[i].1)
    }

    /// Returns the batch's keys in order; false if some had to be read again (see below).
    fn complete_batch(&mut self, now: Time, batch: &[Key], answers: BTreeMap<Key, (HVersion, u32, bool)>, out: &mut Out) -> bool {
        for (i, &key) in batch.iter().enumerate() {
            if let Some(&v) = self.ctx.write_set.get(&key) {
                self.record_op(now, OpRecord::read(key, Some(v)));
                continue;
            }
            if let Some(&v) = self.fn_reads.get(&key) {
                self.record_op(now, OpRecord::read(key, v));
                continue;
            }
            let (version, rounds, remote) = answers.get(&key).cloned().expect("the cache answered every key");
            let upstream = self.ctx.read_set.get(&key).copied();
            if upstream.is_none() && version.seq < self.dep(key) {
                // An earlier key of this batch (read from another cache or the database) depends
                // on a newer version than the one served: read the rest of the batch again.
                out.observe(metrics::BATCH_REREADS, 1);
                let asked = self.request(&batch[i..], out);
                assert!(asked, "the key itself still needs the cache");
                return false;
            }
            out.observe(metrics::STORAGE_ROUNDS_PER_READ, rounds as u64);
            self.used_remote |= rounds > 0 || remote;
            if let Some((seq, _)) = upstream {
                assert_eq!(version.seq, seq, "a key read upstream is read again at the same version");
            } else {
                if self.violation.is_none()
                    && let Some(other) = conflict(&self.ctx.read_set, key, &version)
                {
                    self.violation = Some((key, other));
                }
                self.ctx.read_set.insert(key, (version.seq, self.cache));
                self.ctx.pinned_at.insert(self.cache);
                let deps = &mut self.ctx.deps;
                if !version.deps.is_empty() {
                    *deps = merge_deps(deps, &version.deps.0);
                }
                match deps.binary_search_by_key(&key, |e| e.0) {
                    Ok(at) => deps[at].1 = deps[at].1.max(version.seq),
                    Err(at) => deps.insert(at, (key, version.seq)),
                }
            }
            self.fn_reads.insert(key, version.value);
            self.record_op(now, OpRecord::read(key, version.value).with_version([version.seq]));
            self.fresh.push((key, version));
        }
        true
    }

    fn finish(&mut self, now: Time, out: &mut Out) {
        out.observe(metrics::FUNCTION_CACHE_ONLY, u64::from(!self.used_remote));
        // Validation between functions (Opt), or the outside-snapshot corner of Con.
        if let Some((key, other)) = self.violation
            && !self.no_validation
        {
            out.trace("Violation", || format!("{{\"key\":{key},\"depends_on_newer\":{other}}}"));
            let reason = if self.mode == Mode::Con { "con_outside_snapshot" } else { "causal_violation" };
            self.abort(now, reason, out);
            return;
        }
        for (k, v) in std::mem::take(&mut self.fresh) {
            self.ctx.reads_log.push((k, v.seq, v.deps));
        }
        if !self.is_sink {
            out.observe(metrics::METADATA_BYTES_HOP, self.ctx.metadata_bytes(self.mode));
            self.state = HState::Finished;
            out.function_done();
            return;
        }
        if self.ctx.write_set.is_empty() {
            self.commit_record(now, &[], out);
            return;
        }
        let writes = self.ctx.write_set.iter().map(|(&k, &v)| (k, v)).collect();
        out.send(self.db, Msg::WriteTx { deps: Deps::from_sorted(self.ctx.deps.clone()), writes });
        self.state = HState::AwaitWrite;
    }

    fn cleanup(&mut self, all: bool, out: &mut Out) {
        let targets: Vec<NodeId> =
            if all || self.mode == Mode::Con { self.caches.clone() } else { self.ctx.pinned_at.iter().copied().collect() };
        for c in targets {
            out.send(c, Msg::Cleanup { wf: self.wf });
        }
    }

    fn commit_record(&mut self, now: Time, seqs: &[(Key, Seq)], out: &mut Out) {
        let mut ops: Vec<OpRecord> = std::mem::take(&mut self.ctx.ops).into_values().collect();
        for op in ops.iter_mut().filter(|o| o.kind == OpKind::Write) {
            if let Ok(i) = seqs.binary_search_by_key(&op.key, |e| e.0) {
                op.version = [seqs[i].1].into_iter().collect();
            }
        }
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.cache),
            invoke_ns: self.ctx.started_ns.unwrap_or(now),
            complete_ns: now,
            outcome: Outcome::Ok,
            ops: ops.into(),
            note: None,
        });
        self.cleanup(false, out);
        self.state = HState::Finished;
        out.function_done();
    }

    fn abort(&mut self, now: Time, reason: &'static str, out: &mut Out) {
        let ops = std::mem::take(&mut self.ctx.ops).into_values().collect();
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.cache),
            invoke_ns: self.ctx.started_ns.unwrap_or(now),
            complete_ns: now,
            outcome: Outcome::Aborted,
            ops,
            note: Some(reason),
        });
        self.cleanup(true, out);
        self.state = HState::Finished;
        out.abort_workflow(reason);
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match msg {
            Msg::ConPinned { wf, cut } => {
                assert_eq!(wf, self.wf);
                let HState::ConGather { cuts, left, started_ns } = &mut self.state else { unreachable!("ConPinned") };
                let i = self.caches.iter().position(|&c| c == from).expect("from a cache");
                cuts[i] = Some(cut);
                *left -= 1;
                if *left == 0 {
                    let cuts: Vec<Cut> = cuts.iter_mut().map(|c| c.take().expect("every cache answered")).collect();
                    let started_ns = *started_ns;
                    for &c in &self.caches {
                        out.send(c, Msg::ConInstall { wf, cuts: cuts.clone() });
                    }
                    self.state = HState::ConInstall { left: self.caches.len(), started_ns };
                }
            }
            Msg::ConInstalled { wf } => {
                assert_eq!(wf, self.wf);
                let HState::ConInstall { left, started_ns } = &mut self.state else { unreachable!("ConInstalled") };
                *left -= 1;
                if *left == 0 {
                    out.observe(metrics::CON_PREPARE_NS, now - *started_ns);
                    self.ctx.con_ready = true;
                    self.state = HState::Running;
                    self.run(now, out);
                }
            }
            Msg::ReadReply { req, versions } => {
                let HState::AwaitCache { req: want, batch } = std::mem::replace(&mut self.state, HState::Running) else {
                    unreachable!("a read reply the library did not wait for")
                };
                assert_eq!(req, want);
                let answers = versions.into_iter().map(|(k, v, r, remote)| (k, (v, r, remote))).collect();
                if self.complete_batch(now, &batch, answers, out) {
                    self.run(now, out);
                }
            }
            Msg::WriteAck { seqs } => {
                assert_eq!(self.state, HState::AwaitWrite);
                self.commit_record(now, &seqs, out);
            }
            other => unreachable!("{} is not for a function", other.kind()),
        }
    }

    /// Validated reads form a causal snapshot: no read version depends on a newer version of
    /// another key read.
    fn check_invariants(&self) -> Result<(), String> {
        if self.ctx.join_violation && !self.no_validation {
            return Ok(()); // the join aborts
        }
        let log = &self.ctx.reads_log;
        for (k1, s1, deps) in log {
            for (k2, s2, _) in log {
                if k1 == k2 && s1 != s2 {
                    return Err(format!("the workflow read key {k1} at versions {s1} and {s2}"));
                }
                if k1 != k2
                    && let Some(need) = deps.get(*k2)
                    && need > *s2
                {
                    return Err(format!(
                        "the workflow read key {k1} version {s1}, which depends on key {k2} version {need}, and key {k2} version {s2}"
                    ));
                }
            }
        }
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
    Cache(HCache),
    Function(HLib),
}

impl Node for HydroNode {
    type Msg = Msg;
    type Timer = Timer;

    fn on_start(&mut self, now: Time, out: &mut Out) {
        match self {
            HydroNode::Db(_) => {}
            HydroNode::Cache(c) => out.set_timer(Timer::Refresh, c.refresh_phase_ns),
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
            (HydroNode::Cache(c), Timer::Refresh) => {
                out.send(c.db, Msg::Pull);
                out.set_timer(Timer::Refresh, c.refresh_period_ns);
            }
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
    pub params: HydroParams,
    pub opt_without_validation: bool,
}

impl HydroCache {
    pub fn new(servers: u32, params: HydroParams, mutants: &[&str]) -> HydroCache {
        HydroCache { servers, params, opt_without_validation: mutants.contains(&"opt_without_validation") }
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
    type Context = HydroContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<HydroNode>> {
        let mut nodes: Vec<FixedNode<HydroNode>> = self
            .caches()
            .into_iter()
            .map(|id| FixedNode {
                name: format!("S{}", id.index()),
                machine: format!("S{}", id.index()),
                hosts_workers: true,
                node: HydroNode::Cache(HCache {
                    id,
                    db: self.db(),
                    refresh_period_ns: self.params.refresh_period_ns,
                    // Staggered phases: cache i first refreshes (i + 1)/N of a period in.
                    refresh_phase_ns: self.params.refresh_period_ns * (id.index() as Time + 1) / self.servers as Time,
                    mode: self.params.mode,
                    prewarm: self.params.prewarm,
                    cut: Cut::default(),
                    next_req: 0,
                    integrations: BTreeMap::new(),
                    reads: BTreeMap::new(),
                    remote: BTreeMap::new(),
                    pins: BTreeMap::new(),
                    retired: BTreeSet::new(),
                    snapshots: BTreeMap::new(),
                }),
            })
            .collect();
        nodes.push(FixedNode {
            name: "db".into(),
            machine: "db".into(),
            hosts_workers: false,
            node: HydroNode::Db(Db {
                cache_count: self.servers as usize,
                latency_ns: self.params.storage_latency_ns,
                subscribe_all: self.params.prewarm,
                latest: BTreeMap::new(),
                subscribers: BTreeMap::new(),
                log: Vec::new(),
                log_base: 0,
                pulled: BTreeMap::new(),
                held: BTreeMap::new(),
                next_held: 0,
            }),
        });
        nodes
    }

    fn new_context(&self) -> HydroContext {
        HydroContext::new()
    }

    fn spawn_function(&self, start: FunctionStart<'_, HydroContext>) -> HydroNode {
        let mut ctx = start.context;
        if ctx.started_ns.is_none() {
            ctx.started_ns = Some(start.now);
        }
        HydroNode::Function(HLib {
            cache: start.colocated[0],
            caches: self.caches(),
            db: self.db(),
            mode: self.params.mode,
            no_validation: self.opt_without_validation,
            metadata_ns_per_kb: self.params.metadata_ns_per_kb,
            wf: (start.workflow_id, start.attempt),
            function: start.function,
            is_source: start.is_source,
            is_sink: start.is_sink,
            ops: start.ops,
            next_op: 0,
            ctx,
            fn_reads: BTreeMap::new(),
            fresh: Vec::new(),
            violation: None,
            used_remote: false,
            state: HState::Running,
            next_req: 0,
            op_index: 0,
        })
    }

    fn finish_function(&self, node: HydroNode) -> HydroContext {
        match node {
            HydroNode::Function(l) => l.ctx,
            _ => unreachable!("only functions finish"),
        }
    }

    fn join_contexts(&self, contexts: Vec<HydroContext>) -> HydroContext {
        HydroContext::join(contexts)
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
                metrics::FUNCTION_CACHE_ONLY,
                metrics::CON_PREPARE_NS,
            ],
            final_metrics: &[metrics::CACHE_ENTRIES, metrics::CACHE_METADATA_BYTES],
            hop_metadata: Some(metrics::METADATA_BYTES_HOP),
            server_metadata: Some(metrics::CACHE_METADATA_BYTES),
        },
        series: &[
            SeriesStyle { label: "HydroCache-Con", colour: (0, 158, 115) },
            SeriesStyle { label: "HydroCache-Opt", colour: (204, 121, 167) },
        ],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: HydroParams = parse_params(params)?;
        params.validate().map_err(|e| e.within("params"))?;
        Ok(HydroCache::new(topology.servers, params, mutants))
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        (any::<bool>(), 1u64..120, any::<bool>())
            .prop_map(|(opt, refresh_ms, no_prewarm)| {
                serde_json::json!({"mode": if opt { "opt" } else { "con" }, "refresh_period_ns": refresh_ms * 1_000_000, "prewarm": !no_prewarm})
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::Effect;

    fn deps(v: &[(Key, Seq)]) -> Deps {
        Deps::from_sorted(v.to_vec())
    }

    #[test]
    fn dependency_maps_merge_keeping_the_newer_version() {
        assert_eq!(merge_deps(&[(1, 2), (3, 1)], &[(1, 1), (2, 5), (3, 4)]), vec![(1, 2), (2, 5), (3, 4)]);
    }

    #[test]
    fn a_version_depending_on_a_newer_version_of_a_key_read_is_a_conflict() {
        // The workflow read kb@1 (T1's); T2 wrote ka@2 and kb@2 together.
        let read: BTreeMap<Key, (Seq, NodeId)> = [(2, (1, NodeId::fixed(0)))].into();
        let ka2 = HVersion { seq: 2, value: Some(7), deps: deps(&[(1, 2), (2, 2)]), written_ns: 0 };
        assert_eq!(conflict(&read, 1, &ka2), Some(2));
        let ka1 = HVersion { seq: 1, value: Some(6), deps: deps(&[(1, 1), (2, 1)]), written_ns: 0 };
        assert_eq!(conflict(&read, 1, &ka1), None);
    }

    fn cache(prewarm: bool) -> HCache {
        HCache {
            id: NodeId::fixed(0),
            db: NodeId::fixed(9),
            refresh_period_ns: 100,
            refresh_phase_ns: 100,
            mode: Mode::Opt,
            prewarm,
            cut: Cut::default(),
            next_req: 0,
            integrations: BTreeMap::new(),
            reads: BTreeMap::new(),
            remote: BTreeMap::new(),
            pins: BTreeMap::new(),
            retired: BTreeSet::new(),
            snapshots: BTreeMap::new(),
        }
    }

    fn fetches(out: &Out) -> Vec<Vec<Key>> {
        out.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { msg: Msg::Fetch { keys, .. }, .. } => Some(keys.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_refresh_waits_for_dependencies_fetched_round_by_round() {
        // ka@2 depends on kb@2; kb@2 (fetched) depends on kc@1: two rounds, then one merge.
        // (A cache subscribed to only some keys must check; a pre-warmed one merges pulls whole.)
        let mut c = cache(false);
        let mut out = Out::default();
        let ka = HVersion { seq: 2, value: Some(1), deps: deps(&[(1, 2), (2, 2)]), written_ns: 0 };
        c.on_message(10, NodeId::fixed(9), Msg::Notify { versions: vec![(1, ka)] }, &mut out);
        assert_eq!(fetches(&out), vec![vec![2]]);
        assert!(c.cut.0.is_empty(), "nothing merges before its dependencies");
        out.clear();
        let kb = HVersion { seq: 2, value: Some(2), deps: deps(&[(2, 2), (3, 1)]), written_ns: 0 };
        c.on_message(20, NodeId::fixed(9), Msg::FetchReply { req: 0, versions: vec![(2, kb)] }, &mut out);
        assert_eq!(fetches(&out), vec![vec![3]]);
        out.clear();
        let kc = HVersion { seq: 1, value: Some(3), deps: deps(&[(3, 1)]), written_ns: 0 };
        c.on_message(30, NodeId::fixed(9), Msg::FetchReply { req: 0, versions: vec![(3, kc)] }, &mut out);
        assert_eq!(c.cut.0.len(), 3);
        assert_eq!(c.check_invariants(), Ok(()));
        assert!(out.observations.contains(&("refresh_rounds", 2)));
    }

    #[test]
    fn a_read_older_than_the_dependency_map_requires_is_fetched_and_merged_first() {
        let mut c = cache(true);
        let mut out = Out::default();
        let client = NodeId(1 << 63);
        c.on_message(0, client, Msg::Read { req: 5, wf: (1, 1), keys: vec![(4, Need::AtLeast(3))] }, &mut out);
        assert_eq!(fetches(&out), vec![vec![4]]);
        out.clear();
        let k4 = HVersion { seq: 3, value: Some(9), deps: deps(&[(4, 3)]), written_ns: 0 };
        c.on_message(5, NodeId::fixed(9), Msg::FetchReply { req: 1, versions: vec![(4, k4.clone())] }, &mut out);
        let reply = out.effects.iter().find_map(|e| match e {
            Effect::Send { msg: Msg::ReadReply { req: 5, versions }, .. } => Some(versions.clone()),
            _ => None,
        });
        assert_eq!(reply, Some(vec![(4, k4, 1, false)]));
        assert_eq!(c.pins[&(1, 1)][&(4, 3)].seq, 3, "served versions are pinned for downstream functions");
    }

    fn replies(out: &Out) -> Vec<(u64, Vec<(Key, Seq)>)> {
        out.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { msg: Msg::ReadReply { req, versions }, .. } => {
                    Some((*req, versions.iter().map(|(k, v, _, _)| (*k, v.seq)).collect()))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_read_of_a_cleaned_up_attempt_is_dropped() {
        // Regression (scenarios/hydrocache/regression-read-after-cleanup.json): a function killed
        // by its attempt's abort had sent a read of a version this cache pinned; the abort's
        // Cleanup arrived first, and the read found no pin ("we pinned every version we served").
        let mut c = cache(true);
        let mut out = Out::default();
        let client = NodeId(1 << 63);
        c.on_message(0, client, Msg::Read { req: 1, wf: (7, 1), keys: vec![(4, Need::AtLeast(0))] }, &mut out);
        assert_eq!(replies(&out), vec![(1, vec![(4, 0)])]);
        c.on_message(1, client, Msg::Cleanup { wf: (7, 1) }, &mut out);
        out.clear();
        c.on_message(2, client, Msg::Read { req: 2, wf: (7, 1), keys: vec![(4, Need::Exact(0, c.id))] }, &mut out);
        assert!(out.effects.is_empty(), "dropped: {out:?}");
        assert!(c.pins.is_empty() && c.reads.is_empty());
        // A pending read of the attempt is dropped at the Cleanup; its fetch's reply finds none.
        c.on_message(3, client, Msg::Read { req: 3, wf: (8, 1), keys: vec![(5, Need::AtLeast(2))] }, &mut out);
        assert_eq!(fetches(&out), vec![vec![5]]);
        c.on_message(4, client, Msg::Cleanup { wf: (8, 1) }, &mut out);
        out.clear();
        let k5 = HVersion { seq: 2, value: Some(1), deps: deps(&[(5, 2)]), written_ns: 0 };
        c.on_message(5, NodeId::fixed(9), Msg::FetchReply { req: 2, versions: vec![(5, k5)] }, &mut out);
        assert!(replies(&out).is_empty());
        assert!(c.pins.is_empty());
    }

    #[test]
    fn parallel_branches_that_read_different_versions_at_one_cache_each_find_their_own_pin() {
        let mut c = cache(true);
        let mut out = Out::default();
        let client = NodeId(1 << 63);
        c.on_message(0, client, Msg::Read { req: 1, wf: (1, 1), keys: vec![(4, Need::AtLeast(0))] }, &mut out);
        let k4 = HVersion { seq: 1, value: Some(9), deps: deps(&[(4, 1)]), written_ns: 0 };
        c.on_message(1, NodeId::fixed(9), Msg::Notify { versions: vec![(4, k4)] }, &mut out);
        c.on_message(2, client, Msg::Read { req: 2, wf: (1, 1), keys: vec![(4, Need::AtLeast(0))] }, &mut out);
        out.clear();
        // The first branch's next function reads its version again, at this cache.
        c.on_message(3, client, Msg::Read { req: 3, wf: (1, 1), keys: vec![(4, Need::Exact(0, c.id))] }, &mut out);
        assert_eq!(replies(&out), vec![(3, vec![(4, 0)])]);
    }
}
