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
//! - **Unbounded caches** (no LRU eviction): the evaluations we reproduce use unbounded caches.
//! - **The promise off-by-one** is settled in the store (`t_next − 1`), see `tcc_store.rs`.
//! - **Metadata costs no time** unless `params.metadata_ns_per_kb` says so: the engine has no
//!   bandwidth model, so a function may spend that long per KiB of context before it runs (a
//!   calibration knob for comparisons; FaaSTCC's context is always 16 bytes).
//! - **Online invariants** (`checks.invariants`): partitions check that no promise they issued
//!   reaches the next version of its key; a function checks Observation 3, that its interval
//!   lies inside the validity `[t, p]` of every version the workflow read.
//! - **Several sinks**: the paper assumes one sink (§3.1). Here each sink commits and records
//!   the operations of its own ancestors; a workflow should have one sink.
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

use crate::catalogue::{self, Mutant, Profile, SeriesStyle};
use crate::tcc_store::{self, Found, Partition, StoreConfig, StoreMsg, StoreTimer, TS_INF, Ts};
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
use std::collections::BTreeMap;

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
pub struct FaastccParams {
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

impl FaastccParams {
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
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The snapshot interval (§4.5, §4.8): pure functions, the heart of the protocol.

/// `[s_low, s_high]`.
pub type Interval = (Ts, Ts);

/// The root's interval: every version is acceptable.
pub const ROOT_INTERVAL: Interval = (0, TS_INF);

/// What a cache does with an entry `<t, p>` for a reader in `interval` (§4.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome4 {
    /// Eq. 1 holds: serve it.
    Consistent,
    /// `s_high < t`: the reader needs an older version; read the store, do not install.
    Replaced,
    /// `p < s_low`: the entry may be stale; read the store and install.
    Stale,
    /// Not cached.
    Miss,
}

/// Eq. 1 and the §4.6 classification of a cached `<t, p>`.
pub fn classify(t: Ts, p: Ts, (lo, hi): Interval) -> Outcome4 {
    if p >= lo && t <= hi {
        Outcome4::Consistent
    } else if hi < t {
        Outcome4::Replaced
    } else {
        // t ≤ p and lo ≤ hi, so `p < lo` and `t > hi` cannot both hold.
        Outcome4::Stale
    }
}

/// Eq. 2: the interval after reading `<t, p>`.
pub fn narrow((lo, hi): Interval, t: Ts, p: Ts) -> Interval {
    (lo.max(t), hi.min(p))
}

/// Eq. 3: the interval of a function with several parents (empty when `low > high`).
pub fn merge(intervals: impl IntoIterator<Item = Interval>) -> Interval {
    intervals.into_iter().fold(ROOT_INTERVAL, |(lo, hi), (l, h)| (lo.max(l), hi.min(h)))
}

// ---------------------------------------------------------------------------------------------
// Messages and timers

/// A cache's answer for one key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Answer {
    Version {
        value: Option<Value>,
        t: Ts,
        p: Ts,
    },
    /// The store collected the version the interval needs (⊥).
    Collected,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    Store(StoreMsg),
    /// Library → its cache: `CACHE_READ_TX(keys, [lo, hi])`.
    CacheRead {
        req: u64,
        keys: Vec<Key>,
        lo: Ts,
        hi: Ts,
    },
    /// `storage`: some key needed a storage round.
    CacheReply {
        req: u64,
        answers: Vec<(Key, Answer)>,
        storage: bool,
    },
}

impl From<StoreMsg> for Msg {
    fn from(m: StoreMsg) -> Msg {
        Msg::Store(m)
    }
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Store(m) => m.kind(),
            Msg::CacheRead { .. } => "CacheRead",
            Msg::CacheReply { .. } => "CacheReply",
        }
    }

    fn size_bytes(&self) -> u64 {
        match self {
            Msg::Store(m) => m.size_bytes(),
            Msg::CacheRead { keys, .. } => 1 + 24 + 8 * keys.len() as u64,
            Msg::CacheReply { answers, .. } => 2 + 8 + 33 * answers.len() as u64,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    Store(StoreTimer),
    /// A function has deserialised its context (`metadata_ns_per_kb`).
    Start,
}

impl From<StoreTimer> for Timer {
    fn from(t: StoreTimer) -> Timer {
        Timer::Store(t)
    }
}

type Out = Outbox<Msg, Timer>;

// ---------------------------------------------------------------------------------------------
// The cache (Alg. 2, §4.3, §4.6)

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Entry {
    value: Option<Value>,
    t: Ts,
    p: Ts,
    /// The version was its key's newest stable one when promised (see `promise_bumps`).
    latest: bool,
    /// Its partition's push epoch when installed (see `Cache::frozen`).
    epoch: u32,
}

/// A cache read waiting for the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Waiting {
    client: NodeId,
    client_req: u64,
    /// Per requested key, in order: the answer once known, and how the cache classified it.
    answers: Vec<(Key, Outcome4, Option<Answer>)>,
    partitions_left: usize,
}

/// One cache per worker machine.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cache {
    partitions: Vec<NodeId>,
    prewarm: bool,
    /// Mutant `no_interval_narrowing`: do not narrow within a batch either.
    no_narrowing: bool,
    /// Extend the promise of a `latest` entry to each push's stable time.
    promise_bumps: bool,
    /// Per partition, the stable time of its last push (promise bumps).
    bumped: Vec<Ts>,
    /// Per partition, the `seq` of the next push we expect.
    pushes_next: Vec<u64>,
    /// Per partition, the bump each earlier *epoch* ended at. An epoch ends when we find that
    /// we missed a push (it may have carried a newer version of any key we hold): entries
    /// installed before are bumped no further than the last push before the gap. The current
    /// epoch is `frozen[j].len()`.
    frozen: Vec<Vec<Ts>>,
    entries: BTreeMap<Key, Entry>,
    /// The largest stable time any partition reported: a snapshot every partition can serve.
    known_stable: Ts,
    next_req: u64,
    waiting: BTreeMap<u64, Waiting>,
}

impl Cache {
    /// The entry for `key`, with its promise extended by the pushes since (lazily: bumps only
    /// grow, and a newer version would have arrived in the push that carried the bump).
    fn entry(&self, key: Key) -> Option<Entry> {
        let j = tcc_store::partition_of(key, self.bumped.len() as u32);
        let bump = |epoch: u32| match self.frozen[j].get(epoch as usize) {
            _ if !self.promise_bumps => 0,
            Some(&end) => end,
            None => self.bumped[j],
        };
        match self.entries.get(&key) {
            Some(e) if e.latest => Some(Entry { p: e.p.max(bump(e.epoch)), ..*e }),
            Some(e) => Some(*e),
            // A pre-warmed cache holds the initial version, promised at the start (time 0), or
            // up to the last push when promises are bumped (every newer version is pushed).
            None if self.prewarm => Some(Entry { value: None, t: 0, p: bump(0), latest: true, epoch: 0 }),
            None => None,
        }
    }

    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    fn on_read(&mut self, now: Time, client: NodeId, client_req: u64, keys: Vec<Key>, interval: Interval, out: &mut Out) {
        // Pass 1: entries consistent with the incoming interval are provisionally accepted, and
        // the newest of them raises s_low. Pass 2: accepted entries promised below that are
        // refreshed instead (they would pin the snapshot to an old point), and the others lower
        // s_high to their promise. This is the authors' batched algorithm (digest §2.11).
        let entries: Vec<(Key, Option<Entry>)> = keys.iter().map(|&k| (k, self.entry(k))).collect();
        let mut outcomes: Vec<Outcome4> = entries
            .iter()
            .map(|(_, e)| match e {
                None => Outcome4::Miss,
                Some(e) => classify(e.t, e.p, interval),
            })
            .collect();
        let mut narrowed = interval;
        if !self.no_narrowing {
            let low = entries
                .iter()
                .zip(&outcomes)
                .filter(|(_, o)| **o == Outcome4::Consistent)
                .map(|((_, e), _)| e.expect("hit").t)
                .fold(interval.0, Ts::max);
            narrowed.0 = low;
            for ((_, e), o) in entries.iter().zip(outcomes.iter_mut()) {
                if *o == Outcome4::Consistent {
                    let e = e.expect("hit");
                    if e.p < low {
                        *o = Outcome4::Stale;
                    } else {
                        narrowed.1 = narrowed.1.min(e.p);
                    }
                }
            }
        }
        let mut answers = Vec::with_capacity(keys.len());
        let mut fetch: BTreeMap<usize, Vec<(Key, Option<Ts>, bool)>> = BTreeMap::new();
        for ((key, entry), outcome) in entries.into_iter().zip(outcomes) {
            out.observe(
                match outcome {
                    Outcome4::Consistent => metrics::CACHE_HIT,
                    Outcome4::Miss => metrics::CACHE_MISS,
                    Outcome4::Stale => metrics::CACHE_STALE,
                    Outcome4::Replaced => metrics::CACHE_REPLACED,
                },
                1,
            );
            out.observe(metrics::STORAGE_ROUNDS_PER_READ, u64::from(outcome != Outcome4::Consistent));
            if outcome == Outcome4::Consistent {
                let e = entry.expect("a hit has an entry");
                answers.push((key, outcome, Some(Answer::Version { value: e.value, t: e.t, p: e.p })));
            } else {
                let partition = tcc_store::partition_of(key, self.partitions.len() as u32);
                // Subscribe to keys we install (a replaced reply is not installed).
                let subscribe = outcome != Outcome4::Replaced;
                fetch.entry(partition).or_default().push((key, entry.map(|e| e.t), subscribe));
                answers.push((key, outcome, None));
            }
        }
        let interval = narrowed;
        if fetch.is_empty() {
            self.reply(client, client_req, answers, out);
            return;
        }
        // After the hits, every store reply at `s_high` satisfies Eq. 1 in the narrowed interval.
        let snapshot = if interval.1 == TS_INF { self.known_stable } else { interval.1 };
        let req = self.next_req;
        self.next_req += 1;
        out.trace("CacheFetch", || format!("{{\"req\":{req},\"snapshot\":{snapshot},\"at\":{now}}}"));
        let partitions_left = fetch.len();
        for (partition, keys) in fetch {
            let subscribe = keys.iter().any(|k| k.2);
            let keys = keys.into_iter().map(|(k, cached, _)| (k, cached)).collect();
            out.send(self.partitions[partition], StoreMsg::Read { req, snapshot, keys, subscribe }.into());
        }
        self.waiting.insert(req, Waiting { client, client_req, answers, partitions_left });
    }

    fn on_store_reply(&mut self, now: Time, req: u64, lst: Ts, entries: Vec<(Key, Option<Found>)>, out: &mut Out) {
        self.known_stable = self.known_stable.max(lst);
        let w = self.waiting.get_mut(&req).expect("a reply to a pending read");
        let mut installs = Vec::new();
        for (key, found) in entries {
            let slot = w.answers.iter_mut().find(|a| a.0 == key && a.2.is_none()).expect("a requested key");
            slot.2 = Some(match &found {
                Some(f) => Answer::Version { value: f.value, t: f.ts, p: f.promise },
                None => Answer::Collected,
            });
            if let Some(f) = found
                && matches!(slot.1, Outcome4::Miss | Outcome4::Stale)
            {
                installs.push((key, f));
            }
        }
        w.partitions_left -= 1;
        let done = w.partitions_left == 0;
        for (key, f) in installs {
            let entry = Entry { value: f.value, t: f.ts, p: f.promise, latest: f.latest, epoch: 0 };
            self.install(now, key, entry, f.committed_ns, out);
        }
        if done {
            let w = self.waiting.remove(&req).expect("present");
            self.reply(w.client, w.client_req, w.answers, out);
        }
    }

    fn reply(&mut self, client: NodeId, req: u64, answers: Vec<(Key, Outcome4, Option<Answer>)>, out: &mut Out) {
        let storage = answers.iter().any(|a| a.1 != Outcome4::Consistent);
        let answers = answers.into_iter().map(|(k, _, a)| (k, a.expect("every key answered"))).collect();
        out.send(client, Msg::CacheReply { req, answers, storage });
    }

    fn on_notify(&mut self, now: Time, from: NodeId, seq: u64, lst: Ts, entries: Vec<tcc_store::Pushed>, out: &mut Out) {
        self.known_stable = self.known_stable.max(lst);
        let j = self.partitions.iter().position(|&p| p == from).expect("a push from a partition");
        if seq != self.pushes_next[j] {
            // We missed a push (lost, or we were down): what we hold from this partition is its
            // key's newest version only up to the last push we saw. A new epoch starts.
            out.observe(metrics::PUSH_GAPS, 1);
            let end = self.bumped[j];
            self.frozen[j].push(end);
        }
        self.pushes_next[j] = seq + 1;
        for e in entries {
            if self.prewarm || self.entries.contains_key(&e.key) {
                let entry = Entry { value: e.value, t: e.ts, p: e.promise, latest: e.latest, epoch: 0 };
                self.install(now, e.key, entry, e.committed_ns, out);
            }
        }
        // After the new versions: every `latest` entry of this partition's current epoch is
        // still its key's newest version at `lst`.
        self.bumped[j] = self.bumped[j].max(lst);
    }

    /// Applies a version if it is fresher than the entry: a newer version, or a longer promise
    /// for the same one (§4.3: updates can arrive late and out of order).
    fn install(&mut self, now: Time, key: Key, new: Entry, committed_ns: Time, out: &mut Out) {
        assert!(new.t <= new.p, "a version is valid at its own timestamp");
        let j = tcc_store::partition_of(key, self.bumped.len() as u32);
        let new = Entry { epoch: self.frozen[j].len() as u32, ..new };
        let old = self.entry(key);
        let newer = old.is_none_or(|o| new.t > o.t);
        if newer || old.is_some_and(|o| new.t == o.t && new.p > o.p) {
            if newer && new.t > 0 {
                out.observe(metrics::VISIBILITY_NS, now.saturating_sub(committed_ns));
            }
            self.entries.insert(key, new);
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        for (k, e) in &self.entries {
            if e.t > e.p {
                return Err(format!("cache entry for key {k} has timestamp {} above its promise {}", e.t, e.p));
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The workflow context and the client library (Alg. 1)

/// What a workflow carries from function to function (§4.8): the snapshot interval and the
/// write set; plus, for the history only, the operations so far.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FaastccContext {
    pub lo: Ts,
    pub hi: Ts,
    pub write_set: BTreeMap<Key, Value>,
    /// History bookkeeping (not protocol metadata): operations keyed by (time, function, index).
    pub ops: BTreeMap<(Time, u32, u32), OpRecord>,
    pub started_ns: Option<Time>,
}

impl FaastccContext {
    pub fn root() -> FaastccContext {
        FaastccContext { lo: ROOT_INTERVAL.0, hi: ROOT_INTERVAL.1, write_set: BTreeMap::new(), ops: BTreeMap::new(), started_ns: None }
    }

    /// The protocol metadata's size on the wire: two 8-byte timestamps (§6.4, Fig. 5).
    pub fn metadata_bytes(&self) -> u64 {
        16
    }

    /// Eq. 3 and the union of write sets; `first_only` is the mutant `no_fanin_merge`.
    pub fn join(contexts: Vec<FaastccContext>, first_only: bool) -> FaastccContext {
        let interval = if first_only { (contexts[0].lo, contexts[0].hi) } else { merge(contexts.iter().map(|c| (c.lo, c.hi))) };
        let mut joined = FaastccContext::root();
        (joined.lo, joined.hi) = interval;
        for c in contexts {
            joined.write_set.extend(c.write_set);
            joined.ops.extend(c.ops);
            joined.started_ns = match (joined.started_ns, c.started_ns) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        keep_last_writes(&mut joined.write_set, &joined.ops);
        joined
    }
}

/// After a join, sets each key of `write_set` to its last write in operation order (`ops` is
/// keyed by time, function and index). Every branch carries a copy of the writes made before
/// the fan-out, so taking the branches' write sets in turn could let a copy undo a sibling's
/// later write. Shared by HydroCache's join.
pub fn keep_last_writes(write_set: &mut BTreeMap<Key, Value>, ops: &BTreeMap<(Time, u32, u32), OpRecord>) {
    for op in ops.values() {
        if op.kind == OpKind::Write
            && let (Some(slot), Some(value)) = (write_set.get_mut(&op.key), op.value)
        {
            *slot = value;
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum LibState {
    Running,
    /// A batch of reads (keys in program order) waits for the cache.
    AwaitCache {
        req: u64,
        batch: Vec<Key>,
    },
    /// Two-phase commit: the largest proposal so far and the partitions still to answer.
    AwaitPrepared {
        ct: Ts,
        involved: Vec<usize>,
        left: usize,
        started_ns: Time,
    },
    Finished,
}

/// The client library inside one function instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Library {
    id: NodeId,
    cache: NodeId,
    partitions: Vec<NodeId>,
    function: u32,
    is_sink: bool,
    no_narrowing: bool,
    metadata_ns_per_kb: Time,
    ops: Vec<Op>,
    next_op: usize,
    ctx: FaastccContext,
    /// This function's reads: repeated reads return the same value (Alg. 1 l. 27).
    read_set: BTreeMap<Key, Option<Value>>,
    state: LibState,
    next_req: u64,
    op_index: u32,
    /// Some read of this function needed the store.
    used_storage: bool,
}

impl Library {
    fn on_start(&mut self, now: Time, out: &mut Out) {
        if self.is_sink {
            out.observe(metrics::METADATA_BYTES, self.ctx.metadata_bytes());
        }
        let delay = self.metadata_ns_per_kb * self.ctx.metadata_bytes() / 1024;
        if delay > 0 {
            out.set_timer(Timer::Start, delay);
            return;
        }
        self.begin(now, out);
    }

    fn begin(&mut self, now: Time, out: &mut Out) {
        if self.ctx.lo > self.ctx.hi {
            // Eq. 3: the parents read from snapshots with no common point.
            self.abort(now, "empty_interval", out);
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

    /// Runs operations until one must wait.
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
                    let mut needed: Vec<Key> = Vec::new();
                    for &k in &batch {
                        if !self.ctx.write_set.contains_key(&k) && !self.read_set.contains_key(&k) && !needed.contains(&k) {
                            needed.push(k);
                        }
                    }
                    if needed.is_empty() {
                        if !self.complete_batch(now, &batch, BTreeMap::new(), out) {
                            return;
                        }
                        continue;
                    }
                    let req = self.next_req;
                    self.next_req += 1;
                    out.send(self.cache, Msg::CacheRead { req, keys: needed, lo: self.ctx.lo, hi: self.ctx.hi });
                    self.state = LibState::AwaitCache { req, batch };
                    return;
                }
            }
        }
    }

    /// Returns each key of the batch, in order, narrowing the interval; false if it aborted.
    fn complete_batch(&mut self, now: Time, batch: &[Key], answers: BTreeMap<Key, Answer>, out: &mut Out) -> bool {
        for &key in batch {
            if let Some(&v) = self.ctx.write_set.get(&key) {
                self.record_op(now, OpRecord::read(key, Some(v)));
                continue;
            }
            if let Some(&v) = self.read_set.get(&key) {
                self.record_op(now, OpRecord::read(key, v));
                continue;
            }
            match answers.get(&key).expect("the cache answered every key we asked") {
                Answer::Collected => {
                    self.abort(now, "gc_collected", out);
                    return false;
                }
                &Answer::Version { value, t, p } => {
                    // The cache checked Eq. 1 against the same interval; check it again here.
                    assert_eq!(
                        classify(t, p, (self.ctx.lo, self.ctx.hi)),
                        Outcome4::Consistent,
                        "the cache returned a version outside the interval"
                    );
                    if !self.no_narrowing {
                        (self.ctx.lo, self.ctx.hi) = narrow((self.ctx.lo, self.ctx.hi), t, p);
                    }
                    self.read_set.insert(key, value);
                    self.record_op(now, OpRecord::read(key, value).with_version([t, p]));
                }
            }
        }
        true
    }

    fn finish(&mut self, now: Time, out: &mut Out) {
        out.observe(metrics::FUNCTION_CACHE_ONLY, u64::from(!self.used_storage));
        if !self.is_sink {
            out.observe(metrics::METADATA_BYTES_HOP, self.ctx.metadata_bytes());
            self.state = LibState::Finished;
            out.function_done();
            return;
        }
        if self.ctx.write_set.is_empty() {
            self.commit_record(now, None, out);
            return;
        }
        // TCC_WriteTX: prepare at every partition written, with s_low as the lower bound.
        let n = self.partitions.len() as u32;
        let mut groups: BTreeMap<usize, Vec<(Key, Value)>> = BTreeMap::new();
        for (&k, &v) in &self.ctx.write_set {
            groups.entry(tcc_store::partition_of(k, n)).or_default().push((k, v));
        }
        let tx = self.id.0;
        let involved: Vec<usize> = groups.keys().copied().collect();
        for (p, writes) in groups {
            out.send(self.partitions[p], StoreMsg::Prepare { tx, lower_bound: self.ctx.lo, writes }.into());
        }
        self.state = LibState::AwaitPrepared { ct: 0, left: involved.len(), involved, started_ns: now };
    }

    fn on_prepared(&mut self, now: Time, tx: u64, pt: Ts, out: &mut Out) {
        assert_eq!(tx, self.id.0);
        let LibState::AwaitPrepared { ct, involved, left, started_ns } = &mut self.state else {
            unreachable!("Prepared outside two-phase commit")
        };
        *ct = (*ct).max(pt);
        *left -= 1;
        if *left > 0 {
            return;
        }
        let (ct, involved, started_ns) = (*ct, std::mem::take(involved), *started_ns);
        // Writes follow reads: the commit is above every version the workflow read.
        assert!(ct > self.ctx.lo, "commit timestamp {ct} not above s_low {}", self.ctx.lo);
        for p in involved {
            out.send(self.partitions[p], StoreMsg::Commit { tx, ct }.into());
        }
        out.observe(metrics::COMMIT_NS, now - started_ns);
        self.commit_record(now, Some(ct), out);
    }

    fn commit_record(&mut self, now: Time, ct: Option<Ts>, out: &mut Out) {
        // Cloned, not taken: the invariant still sees the reads after this handler.
        let mut ops: Vec<OpRecord> = self.ctx.ops.values().cloned().collect();
        if let Some(ct) = ct {
            for op in ops.iter_mut().filter(|o| o.kind == OpKind::Write) {
                op.version = [ct].into_iter().collect();
            }
        }
        out.trace("Commit", || format!("{{\"ct\":{},\"lo\":{},\"hi\":{}}}", ct.unwrap_or(0), self.ctx.lo, self.ctx.hi));
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.cache),
            invoke_ns: self.ctx.started_ns.unwrap_or(now),
            complete_ns: now,
            outcome: Outcome::Ok,
            ops: ops.into(),
            note: None,
        });
        self.state = LibState::Finished;
        out.function_done();
    }

    fn abort(&mut self, now: Time, reason: &'static str, out: &mut Out) {
        let ops = std::mem::take(&mut self.ctx.ops).into_values().collect();
        out.trace("Abort", || format!("{{\"reason\":\"{reason}\",\"lo\":{},\"hi\":{}}}", self.ctx.lo, self.ctx.hi));
        out.record(TxnRecord {
            kind: TxnKind::WorkflowTxn,
            node: Some(self.cache),
            invoke_ns: self.ctx.started_ns.unwrap_or(now),
            complete_ns: now,
            outcome: Outcome::Aborted,
            ops,
            note: Some(reason),
        });
        self.state = LibState::Finished;
        out.abort_workflow(reason);
    }

    /// Observation 3: the interval lies inside the validity `[t, p]` of every version read.
    fn check_invariants(&self) -> Result<(), String> {
        let (lo, hi) = (self.ctx.lo, self.ctx.hi);
        if lo > hi {
            return Ok(()); // an empty merge: the function aborts
        }
        for op in self.ctx.ops.values() {
            if let (OpKind::Read, [t, p]) = (op.kind, op.version.as_slice())
                && !(*t <= lo && hi <= *p)
            {
                return Err(format!(
                    "the snapshot interval [{lo}, {hi}] is not inside [{t}, {p}], the validity of the version of key {} read",
                    op.key
                ));
            }
        }
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
    Function(Library),
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
            (FaastccNode::Function(l), Msg::CacheReply { req, answers, storage }) => {
                l.used_storage |= storage;
                let LibState::AwaitCache { req: want, batch } = std::mem::replace(&mut l.state, LibState::Running) else {
                    unreachable!("a cache reply the library did not wait for")
                };
                assert_eq!(req, want);
                if l.complete_batch(now, &batch, answers.into_iter().collect(), out) {
                    l.run(now, out);
                }
            }
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
    pub params: FaastccParams,
    pub promise_off_by_one: bool,
    pub no_interval_narrowing: bool,
    pub no_fanin_merge: bool,
}

impl Faastcc {
    pub fn new(servers: u32, params: FaastccParams, mutants: &[&str]) -> Faastcc {
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
    type Context = FaastccContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<FaastccNode>> {
        let partitions = self.partition_ids();
        let caches = self.cache_ids();
        let mut nodes: Vec<FixedNode<FaastccNode>> = caches
            .iter()
            .map(|c| FixedNode {
                name: format!("S{}", c.index()),
                machine: format!("S{}", c.index()),
                hosts_workers: true,
                node: FaastccNode::Cache(Cache {
                    partitions: partitions.clone(),
                    prewarm: self.params.prewarm,
                    no_narrowing: self.no_interval_narrowing,
                    promise_bumps: self.params.promise_bumps,
                    bumped: vec![0; self.params.partitions as usize],
                    pushes_next: vec![0; self.params.partitions as usize],
                    frozen: vec![Vec::new(); self.params.partitions as usize],
                    entries: BTreeMap::new(),
                    known_stable: 0,
                    next_req: 0,
                    waiting: BTreeMap::new(),
                }),
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

    fn new_context(&self) -> FaastccContext {
        FaastccContext::root()
    }

    fn spawn_function(&self, start: FunctionStart<'_, FaastccContext>) -> FaastccNode {
        let mut ctx = start.context;
        if ctx.started_ns.is_none() {
            ctx.started_ns = Some(start.now);
        }
        FaastccNode::Function(Library {
            id: start.self_id,
            cache: start.colocated[0],
            partitions: self.partition_ids(),
            function: start.function,
            is_sink: start.is_sink,
            no_narrowing: self.no_interval_narrowing,
            metadata_ns_per_kb: self.params.metadata_ns_per_kb,
            ops: start.ops,
            next_op: 0,
            ctx,
            read_set: BTreeMap::new(),
            state: LibState::Running,
            next_req: 0,
            op_index: 0,
            used_storage: false,
        })
    }

    fn finish_function(&self, node: FaastccNode) -> FaastccContext {
        match node {
            FaastccNode::Function(l) => l.ctx,
            _ => unreachable!("only functions finish"),
        }
    }

    fn join_contexts(&self, contexts: Vec<FaastccContext>) -> FaastccContext {
        FaastccContext::join(contexts, self.no_fanin_merge)
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
                metrics::COMMIT_NS,
                metrics::PUSH_GAPS,
                metrics::VISIBILITY_NS,
                metrics::CACHE_HIT,
                metrics::CACHE_MISS,
                metrics::CACHE_STALE,
                metrics::CACHE_REPLACED,
            ],
            final_metrics: &[metrics::CACHE_ENTRIES, metrics::STORE_VERSIONS],
            hop_metadata: Some(metrics::METADATA_BYTES_HOP),
            server_metadata: None,
        },
        series: &[SeriesStyle { label: "FaaSTCC", colour: (230, 159, 0) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: FaastccParams = parse_params(params)?;
        params.validate().map_err(|e| e.within("params"))?;
        Ok(Faastcc::new(topology.servers, params, mutants))
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        (1u32..4, any::<bool>(), 1u64..60, 1u64..8, prop::option::weighted(0.2, 2u32..8), any::<bool>(), 0u64..3)
            .prop_map(|(partitions, no_prewarm, push_ms, stab_ms, gc, bumps, skew_ms)| {
                let mut p = serde_json::json!({
                    "partitions": partitions, "prewarm": !no_prewarm, "push_period_ns": push_ms * 1_000_000,
                    "stabilization_period_ns": stab_ms * 1_000_000, "promise_bumps": bumps,
                });
                if let Some(v) = gc {
                    p["versions_per_key_max"] = serde_json::json!(v);
                }
                if skew_ms > 0 {
                    p["clock_skew_ns"] = serde_json::json!(skew_ms * 1_000_000);
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

    // §4.5, the worked example: f_x read <k, v, 80, 120> from its cache, so its interval is
    // [80, 120]; f_y, on another worker, finds k' in its own cache in one of four states.
    const AFTER_FX: Interval = (80, 120);

    #[test]
    fn worked_example_fx_narrows_the_root_interval_to_its_version_and_promise() {
        assert_eq!(narrow(ROOT_INTERVAL, 80, 120), AFTER_FX);
    }

    #[test]
    fn worked_example_case_1_a_promise_below_s_low_is_stale() {
        // <k', v', 50, 60>: a version of k' in ]60, 80[ may be in the past of k@80.
        assert_eq!(classify(50, 60, AFTER_FX), Outcome4::Stale);
    }

    #[test]
    fn worked_example_case_2_is_consistent_and_narrows_to_80_90() {
        // <k', v', 50, 90>: no version of k' in ]80, 90[; like one read at t = 85.
        assert_eq!(classify(50, 90, AFTER_FX), Outcome4::Consistent);
        assert_eq!(narrow(AFTER_FX, 50, 90), (80, 90));
    }

    #[test]
    fn worked_example_case_3_is_consistent_and_narrows_to_90_120() {
        // <k', v', 90, 130>: k's promise says no version of k in ]90, 120[; like a read at 100.
        assert_eq!(classify(90, 130, AFTER_FX), Outcome4::Consistent);
        assert_eq!(narrow(AFTER_FX, 90, 130), (90, 120));
    }

    #[test]
    fn worked_example_case_4_a_version_above_s_high_was_replaced() {
        // <k', v', 130, 140>: a version of k above 120 may precede k'@130.
        assert_eq!(classify(130, 140, AFTER_FX), Outcome4::Replaced);
    }

    #[test]
    fn worked_example_a_single_snapshot_would_reject_a_consistent_case() {
        // Why an interval: snapshot 80 rejects case 3, snapshot 120 rejects case 2.
        assert_eq!(classify(90, 130, (80, 80)), Outcome4::Replaced);
        assert_eq!(classify(50, 90, (120, 120)), Outcome4::Stale);
    }

    #[test]
    fn fan_in_intersects_intervals_and_an_empty_intersection_is_detected() {
        // Digest A5: branch 1 read k@[80, 120], branch 2 read k'@[130, 140].
        let (lo, hi) = merge([(80, 120), (130, 140)]);
        assert!(lo > hi);
        assert_eq!(merge([(80, 120), (90, 130)]), (90, 120));
        let a = FaastccContext { lo: 80, hi: 120, ..FaastccContext::root() };
        let b = FaastccContext { lo: 130, hi: 140, ..FaastccContext::root() };
        let joined = FaastccContext::join(vec![a.clone(), b.clone()], false);
        assert!(joined.lo > joined.hi);
        let mutant = FaastccContext::join(vec![a, b], true);
        assert_eq!((mutant.lo, mutant.hi), (80, 120), "no_fanin_merge keeps the first parent's interval");
    }

    #[test]
    fn fan_in_keeps_each_keys_last_write_whichever_branch_comes_first() {
        // The source wrote y=1 before the fan-out; branch 1 then wrote y=2; branch 2 still
        // carries its copy of y=1.
        const Y: Key = 7;
        let mut source = FaastccContext::root();
        source.write_set.insert(Y, 1);
        source.ops.insert((10, 0, 0), OpRecord::write(Y, 1));
        let mut branch1 = source.clone();
        branch1.write_set.insert(Y, 2);
        branch1.ops.insert((20, 1, 0), OpRecord::write(Y, 2));
        let branch2 = source;
        for order in [vec![branch1.clone(), branch2.clone()], vec![branch2, branch1]] {
            let joined = FaastccContext::join(order, false);
            assert_eq!(joined.write_set.get(&Y), Some(&2));
            assert_eq!(joined.ops.len(), 2, "the source's write is listed once");
        }
    }

    const CLIENT: NodeId = NodeId(1 << 63);

    fn cache_with(entries: &[(Key, Ts, Ts)]) -> Cache {
        Cache {
            partitions: vec![NodeId::fixed(1)],
            prewarm: false,
            no_narrowing: false,
            promise_bumps: false,
            bumped: vec![0],
            pushes_next: vec![0],
            frozen: vec![Vec::new()],
            entries: entries.iter().map(|&(k, t, p)| (k, Entry { value: Some(k * 10), t, p, latest: false, epoch: 0 })).collect(),
            known_stable: 0,
            next_req: 0,
            waiting: BTreeMap::new(),
        }
    }

    /// Each store read the outbox holds: (snapshot time, keys with the version each asks for).
    type StoreRead = (Ts, Vec<(Key, Option<Ts>)>);

    fn store_reads(out: &Out) -> Vec<StoreRead> {
        out.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { msg: Msg::Store(StoreMsg::Read { snapshot, keys, .. }), .. } => Some((*snapshot, keys.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_cache_serves_cases_2_and_3_and_sends_1_4_and_a_miss_to_the_store_at_s_high() {
        // Keys 2 and 3 hit (and narrow the interval to [90, 90]); 1 is stale, 4 replaced, 5 missing.
        let mut cache = cache_with(&[(1, 50, 60), (2, 50, 90), (3, 90, 130), (4, 130, 140)]);
        let mut out = Out::default();
        cache.on_read(0, CLIENT, 7, vec![2, 3, 1, 4, 5], AFTER_FX, &mut out);
        assert_eq!(store_reads(&out), vec![(90, vec![(1, Some(50)), (4, Some(130)), (5, None)])]);
        out.clear();
        let found = |value, ts, promise| Some(Found { value, ts, promise, same_as_cached: false, latest: false, committed_ns: 0 });
        let entries = vec![(1, found(Some(11), 70, 95)), (4, found(Some(41), 85, 129)), (5, found(None, 0, 100))];
        cache.on_store_reply(1, 0, 100, entries, &mut out);
        let [Effect::Send { to, msg: Msg::CacheReply { req: 7, answers, storage: true } }] = out.effects.as_slice() else {
            panic!("{out:?}")
        };
        assert_eq!(*to, CLIENT);
        let ts: Vec<(Key, Ts, Ts)> = answers
            .iter()
            .map(|(k, a)| match a {
                Answer::Version { t, p, .. } => (*k, *t, *p),
                Answer::Collected => panic!(),
            })
            .collect();
        assert_eq!(ts, vec![(2, 50, 90), (3, 90, 130), (1, 70, 95), (4, 85, 129), (5, 0, 100)]);
        // Stale and miss install their reply; the replaced entry keeps the newer version.
        assert_eq!(cache.entries[&1].t, 70);
        assert_eq!(cache.entries[&5].t, 0);
        assert_eq!(cache.entries[&4].t, 130);
        assert_eq!(cache.known_stable, 100);
    }

    #[test]
    fn a_read_with_no_upper_bound_goes_to_the_store_at_the_known_stable_time() {
        let mut cache = cache_with(&[]);
        cache.known_stable = 4242;
        let mut out = Out::default();
        cache.on_read(0, CLIENT, 1, vec![9], ROOT_INTERVAL, &mut out);
        assert_eq!(store_reads(&out), vec![(4242, vec![(9, None)])]);
    }

    #[test]
    fn pushes_install_newer_versions_and_longer_promises_only() {
        let mut cache = cache_with(&[(1, 50, 60)]);
        let mut out = Out::default();
        let pushed = |ts, promise| tcc_store::Pushed { key: 1, value: Some(ts), ts, promise, latest: false, committed_ns: 0 };
        let p = NodeId::fixed(1);
        cache.on_notify(0, p, 0, 200, vec![pushed(40, 45)], &mut out);
        assert_eq!((cache.entries[&1].t, cache.entries[&1].p), (50, 60), "an older version is discarded");
        cache.on_notify(0, p, 1, 200, vec![pushed(50, 70)], &mut out);
        assert_eq!(cache.entries[&1].p, 70, "the same version with a longer promise");
        cache.on_notify(0, p, 2, 200, vec![pushed(80, 90)], &mut out);
        assert_eq!(cache.entries[&1].t, 80);
    }

    #[test]
    fn a_missed_push_stops_the_bumps_of_what_the_cache_held_before_it() {
        // With promise bumps, a lost push (--faults all) may have carried a newer version of any
        // key: entries held before the gap are bumped no further than the last push seen.
        let mut cache = cache_with(&[]);
        cache.prewarm = true;
        cache.promise_bumps = true;
        let mut out = Out::default();
        let p = NodeId::fixed(1);
        let pushed = |key, ts, promise| tcc_store::Pushed { key, value: Some(ts), ts, promise, latest: true, committed_ns: 0 };
        cache.on_notify(0, p, 0, 100, vec![], &mut out);
        assert_eq!(cache.entry(1).unwrap().p, 100, "the initial version is bumped");
        // Push 1 (lst 200) carried key 1's version 150 and was lost; push 2 carries key 2's.
        cache.on_notify(0, p, 2, 300, vec![pushed(2, 250, 300)], &mut out);
        assert_eq!((cache.entry(1).unwrap().t, cache.entry(1).unwrap().p), (0, 100), "frozen at the last push seen");
        assert_eq!(cache.entry(2).unwrap().p, 300);
        cache.on_notify(0, p, 3, 400, vec![pushed(1, 150, 400)], &mut out);
        assert_eq!(cache.entry(1).unwrap().p, 400, "a version pushed after the gap is bumped again");
        cache.on_notify(0, p, 4, 500, vec![], &mut out);
        assert_eq!((cache.entry(1).unwrap().p, cache.entry(2).unwrap().p), (500, 500));
        assert_eq!(cache.entry(3).unwrap().p, 100, "an untouched initial version stays frozen");
    }
}
