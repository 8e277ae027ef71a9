//! A partitioned multi-version store with transactional causal consistency, in the style of
//! Wren (Spirovska, Didona, Zwaenepoel, DSN 2018), extended with FaaSTCC's *promises* and
//! pub/sub (Lykhenko, Soares, Rodrigues, Middleware '21, §4.2 and §5). FaaSTCC's caches sit on
//! top of it (`faastcc/`).
//!
//! # The store, in the order that makes it understandable
//!
//! 1. **Timestamps** ([`Ts`]) are hybrid-clock values: a partition's clock follows simulated
//!    time (plus an optional fixed skew) and never goes backwards. Every timestamp a partition
//!    *proposes* has its partition index in the low [`PARTITION_BITS`] bits, and each
//!    partition's proposals strictly increase, so two transactions never commit at the same
//!    timestamp: the unique tie-break the digest asks for (§1.3 (f)).
//! 2. **Commit is two-phase** (Wren §IV, FaaSTCC's `PrepareState`/`CommitState`). The
//!    coordinator (the sink function's library) sends `Prepare` with its writes and a lower
//!    bound (the largest timestamp the workflow read) to each partition it writes; each answers
//!    with a proposal above its clock and the bound; the commit timestamp is the largest
//!    proposal, sent back in `Commit`. The partitions install the versions at once. So the
//!    commit timestamp is above every proposal, hence above everything the workflow read.
//! 3. **Local stable bound.** A partition's `vc` is a timestamp below which it will never
//!    install anything new: its clock when nothing is prepared, else the smallest pending
//!    proposal minus one (a prepared transaction commits at or above its proposal).
//! 4. **Stabilisation.** Every `stabilization_period_ns` each partition sends its `vc` to the
//!    others; its *local stable time* `lst` is the minimum of its own `vc` and the others' last
//!    reports. Everything at or below `lst` is installed at **every** partition.
//! 5. **Reads at a snapshot.** `Read(keys, s)` returns, per key, the newest version with
//!    timestamp ≤ s and its *promise*: the horizon up to which that version is known to be the
//!    key's latest. A snapshot `s` is always at or below the true global stable time (see the
//!    promise rule below), so every partition already holds everything at or below `s` and
//!    answers at once, even when its own `lst` view lags. The snapshot "∞" ([`TS_INF`]) means
//!    "at my `lst`".
//! 6. **Promises** (FaaSTCC §4.2, digest §1.3 (a)–(c)). For version `t` read at snapshot `s`:
//!    `p = min(t_next − 1, max(lst, s))`, where `t_next` is the key's next committed version at
//!    this partition (stable or not) if there is one. Both terms are sound: no version of the
//!    key can commit in `(t, p]`. `max(lst, s)` keeps `p ≥ s`, so a storage read always
//!    satisfies the reader's consistency condition (digest §1.3 (c): FaaSTCC needs exactly one
//!    storage round per read), and it never exceeds the global stable time, which is what
//!    makes point 5 true: every snapshot a reader ever asks for is a minimum of promises.
//! 7. **Pub/sub** (§4.2, §4.3). Caches subscribe to the keys they hold (or, with pre-warmed
//!    caches, to every key). Every `push_period_ns` (50 ms in FaaSTCC's evaluation) a partition
//!    pushes the newest *stable* version of each key that changed since the last push, with
//!    promise `lst`, to the subscribed caches. Pushing only stable versions keeps pushes
//!    atomic: a transaction's versions are all at or below `lst`, or none is (§1.3 (d)). The
//!    push also carries `lst` itself, from which caches learn a snapshot every partition can
//!    serve. Partitions push independently, in staggered phases (partition `j` of `m` first
//!    pushes `(j + 1)/m` of a period in), so caches see different keys refreshed at different
//!    times, as with asynchronous pub/sub.
//! 8. **Garbage collection.** A key keeps at most `versions_per_key_max` versions, except that
//!    the key's newest *stable* version (the newest at or below `lst`) is never collected: the
//!    oldest version goes only once its successor is stable. Versions above `lst` therefore wait
//!    (the key is collected again whenever `lst` advances). A read whose snapshot needs a
//!    collected version gets ⊥ (FaaSTCC aborts the workflow, §4.2).
//!
//! # Choices where the papers are silent (and why)
//!
//! - **The promise boundary** (digest §1.3 (b)). §4.2 says the promise is "the timestamp of
//!   the next version" *and* that future versions are "greater than promise"; both cannot
//!   hold. We take the contract "every later version has a timestamp > p", so the promise of a
//!   version that has a successor is `t_next − 1`. With integer timestamps and Eq. 1's
//!   inclusive `p ≥ s_low`, using `t_next` itself lets a cache serve a version at the very
//!   snapshot where it was replaced. The mutant `promise_off_by_one` does exactly that.
//! - **Stabilisation is all-to-all** rather than Wren's tree: the same bound, fewer moving
//!   parts; the period is a parameter (default 5 ms).
//! - **Pushes carry new versions only**, plus the sender's `lst`. Whether a cache may use that
//!   `lst` to extend the promises of unchanged keys is FaaSTCC's choice (`promise_bumps`, off
//!   by default); to make it sound, replies and pushes say whether a version was the key's
//!   newest stable one (`latest`). A storage reply for the version the cache already holds is
//!   metadata only (smaller `size_bytes`), as in the authors' code. Pushes are numbered
//!   (`seq`), so that a cache that missed one (message loss, a crash: `--faults all`) stops
//!   bumping what it held before the gap.
//! - **Storage latency** (`storage_latency_ns`) is added to every message a partition sends to
//!   a cache or a function, as CausalMesh's evaluation adds 5 ms to its database with netem.
//!   Partitions also sit on their own machines (`P0`, `P1`, …), so per-link overrides work too.
//! - **Garbage collection keeps the newest stable version** (Wren's rule: versions older than
//!   the oldest snapshot in use go, but never the newest one below it). A plain "keep the
//!   newest `versions_per_key_max`" can collect a version before it is ever stable, when newer
//!   ones commit above `lst` first. Then the push that should carry the key's newest stable
//!   version has nothing to carry, a read at `lst` gets ⊥, and, with `promise_bumps`, a cache
//!   bumps its entry past that version's timestamp (it believes nothing newer exists because
//!   the push carried nothing): a workflow could read the other half of its transaction and the
//!   key's older value (`NonMonoReadCO`; `scenarios/faastcc/regression-promise-bumps-gc.json`).
//!   So a key briefly holds more than `versions_per_key_max` versions while its newest ones are
//!   not yet stable.
//! - **No replication** of partitions and no geo-replication (Wren's remote stable time): the
//!   FaaSTCC paper uses neither.

use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use std::collections::{BTreeMap, BTreeSet};

/// A hybrid-clock timestamp; the low [`PARTITION_BITS`] bits of a commit timestamp name the
/// partition that proposed it.
pub type Ts = u64;
/// "No upper bound": the snapshot interval of a workflow that has read nothing yet.
pub const TS_INF: Ts = u64::MAX;
/// Bits of a timestamp that name the proposing partition (the unique tie-break).
pub const PARTITION_BITS: u32 = 10;
/// The most partitions a store may have.
pub const PARTITIONS_MAX: u32 = 1 << PARTITION_BITS;
/// A transaction's id in 2PC: the coordinator's node id (unique among live functions).
pub type TxId = u64;

const _: () = assert!(PARTITIONS_MAX == 1024);

/// The partition that owns `key`.
pub fn partition_of(key: Key, partitions: u32) -> usize {
    assert!(partitions > 0);
    (key % partitions as u64) as usize
}

/// How a store is configured (from the protocol's parameters).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StoreConfig {
    pub partitions: u32,
    pub push_period_ns: Time,
    pub stabilization_period_ns: Time,
    pub storage_latency_ns: Time,
    pub versions_per_key_max: u32,
    /// Partition `i`'s physical clock reads `now + i × clock_skew_ns`.
    pub clock_skew_ns: Time,
    /// Pre-warmed caches hold (and subscribe to) every key.
    pub subscribe_all: bool,
    /// Mutant: a version with a successor is promised up to the successor's timestamp itself.
    pub promise_off_by_one: bool,
}

/// One key's value at a snapshot, as a partition answers a read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Found {
    /// `None` is the key's initial (absent) state, timestamp 0.
    pub value: Option<Value>,
    pub ts: Ts,
    pub promise: Ts,
    /// The reader already holds this version: only the promise is new (metadata-only reply).
    pub same_as_cached: bool,
    /// The promise is the read's bound, not the next version's timestamp: the version was the
    /// key's newest stable one, so later pushes will carry any newer version (FaaSTCC's
    /// `promise_bumps`).
    pub latest: bool,
    /// When the version was installed (for the visibility metric only).
    pub committed_ns: Time,
}

/// A pushed version: `<key, value, t, promise>` (§4.3).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pushed {
    pub key: Key,
    pub value: Option<Value>,
    pub ts: Ts,
    pub promise: Ts,
    /// The version is the key's newest stable one (its promise is the push's `lst`).
    pub latest: bool,
    pub committed_ns: Time,
}

/// Messages to and from partitions.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StoreMsg {
    /// `TCC_ReadTX(keys, snapshot)`; with each key, the timestamp of the version the reader
    /// already holds, if any.
    Read {
        req: u64,
        snapshot: Ts,
        keys: Vec<(Key, Option<Ts>)>,
        subscribe: bool,
    },
    /// Per key in request order: the version, or `None` (⊥) when it was garbage-collected.
    ReadReply {
        req: u64,
        lst: Ts,
        entries: Vec<(Key, Option<Found>)>,
    },
    Prepare {
        tx: TxId,
        lower_bound: Ts,
        writes: Vec<(Key, Value)>,
    },
    Prepared {
        tx: TxId,
        pt: Ts,
    },
    Commit {
        tx: TxId,
        ct: Ts,
    },
    /// A partition's local stable bound, to its peers.
    Stabilize {
        vc: Ts,
    },
    /// The periodic push: the sender's `lst` and the new stable versions of subscribed keys.
    /// `seq` numbers the sender's pushes (every cache gets every push), so a cache can tell
    /// that it missed one.
    Notify {
        seq: u64,
        lst: Ts,
        entries: Vec<Pushed>,
    },
}

impl StoreMsg {
    pub fn kind(&self) -> &'static str {
        match self {
            StoreMsg::Read { .. } => "StoreRead",
            StoreMsg::ReadReply { .. } => "StoreReadReply",
            StoreMsg::Prepare { .. } => "Prepare",
            StoreMsg::Prepared { .. } => "Prepared",
            StoreMsg::Commit { .. } => "Commit",
            StoreMsg::Stabilize { .. } => "Stabilize",
            StoreMsg::Notify { .. } => "Notify",
        }
    }

    /// A one-byte tag, 8 bytes per integer, one byte per flag.
    pub fn size_bytes(&self) -> u64 {
        1 + match self {
            StoreMsg::Read { keys, .. } => read_request_body(keys.len()),
            StoreMsg::ReadReply { entries, .. } => read_reply_body(entries),
            StoreMsg::Prepare { writes, .. } => 16 + 16 * writes.len() as u64,
            StoreMsg::Prepared { .. } | StoreMsg::Commit { .. } => 16,
            StoreMsg::Stabilize { .. } => 8,
            StoreMsg::Notify { entries, .. } => 16 + 32 * entries.len() as u64,
        }
    }
}

fn read_request_body(keys: usize) -> u64 {
    17 + 9 * keys as u64
}

/// A reply carries each key's value only when the cache does not hold that version already.
fn read_reply_body(entries: &[(Key, Option<Found>)]) -> u64 {
    16 + entries
        .iter()
        .map(|(_, f)| match f {
            Some(f) if f.same_as_cached => 8 + 16,
            Some(_) => 8 + 24,
            None => 9,
        })
        .sum::<u64>()
}

/// Bytes one storage read moved, its request and its reply (`entries`), as `size_bytes`
/// counts them.
pub fn read_bytes(entries: &[(Key, Option<Found>)]) -> u64 {
    2 + read_request_body(entries.len()) + read_reply_body(entries)
}

/// A partition's timers.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StoreTimer {
    Stabilize,
    Push,
    /// Releases a reply held back by `storage_latency_ns`.
    Release(u64),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct StoredVersion {
    ts: Ts,
    value: Value,
    committed_ns: Time,
    /// The largest promise issued for this version (for the promise-soundness invariant).
    max_promise: Ts,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct KeyVersions {
    /// Sorted by timestamp, unique.
    versions: Vec<StoredVersion>,
    /// Some versions (all older than `versions[0]`) were collected; never the newest stable one.
    collected: bool,
    /// The largest promise issued for the initial version.
    initial_max_promise: Ts,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Pending {
    pt: Ts,
    writes: Vec<(Key, Value)>,
}

/// One partition of the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Partition {
    index: u32,
    /// All partitions, by index (including this one).
    partitions: Vec<NodeId>,
    /// Every cache, for pushes (each push also tells the cache the stable time).
    caches: Vec<NodeId>,
    config: StoreConfig,
    // Hybrid clock and 2PC
    clock: Ts,
    last_proposal: Ts,
    prepared: BTreeMap<TxId, Pending>,
    // Stabilisation
    peer_vc: Vec<Ts>,
    lst: Ts,
    vc_reported: Ts,
    // Data
    keys: BTreeMap<Key, KeyVersions>,
    // Pub/sub
    subscribers: BTreeMap<Key, BTreeSet<NodeId>>,
    /// Versions committed above the last push's stable time, by timestamp.
    unpushed: BTreeMap<Ts, Vec<Key>>,
    /// Pushes sent so far (the next push's `seq`).
    pushes: u64,
    /// Keys holding more than `versions_per_key_max` versions (waiting for a stable successor).
    over_limit: BTreeSet<Key>,
    // Replies held back by the storage latency
    held: BTreeMap<u64, (NodeId, StoreMsg)>,
    next_held: u64,
}

impl Partition {
    pub fn new(index: u32, partitions: Vec<NodeId>, caches: Vec<NodeId>, config: StoreConfig) -> Partition {
        assert!(config.partitions as usize == partitions.len());
        assert!(index < config.partitions && config.partitions <= PARTITIONS_MAX);
        let n = partitions.len();
        Partition {
            index,
            partitions,
            caches,
            config,
            clock: 0,
            last_proposal: 0,
            prepared: BTreeMap::new(),
            peer_vc: vec![0; n],
            lst: 0,
            vc_reported: 0,
            keys: BTreeMap::new(),
            subscribers: BTreeMap::new(),
            unpushed: BTreeMap::new(),
            pushes: 0,
            over_limit: BTreeSet::new(),
            held: BTreeMap::new(),
            next_held: 0,
        }
    }

    pub fn index(&self) -> u32 {
        self.index
    }

    /// The local stable time (this partition's view of the global one).
    pub fn lst(&self) -> Ts {
        self.lst
    }

    /// The number of versions stored (for final metrics).
    pub fn version_count(&self) -> usize {
        self.keys.values().map(|k| k.versions.len()).sum()
    }

    pub fn on_start<M: From<StoreMsg>, T: From<StoreTimer>>(&mut self, now: Time, out: &mut Outbox<M, T>) {
        self.tick(now);
        out.set_timer(StoreTimer::Stabilize.into(), self.config.stabilization_period_ns);
        // Partitions push independently: partition j first pushes (j + 1)/m of a period in.
        let m = self.config.partitions as Time;
        out.set_timer(StoreTimer::Push.into(), self.config.push_period_ns * (self.index as Time + 1) / m);
    }

    pub fn on_message<M: From<StoreMsg>, T: From<StoreTimer>>(&mut self, now: Time, from: NodeId, msg: StoreMsg, out: &mut Outbox<M, T>) {
        match msg {
            StoreMsg::Read { req, snapshot, keys, subscribe } => self.on_read(now, from, req, snapshot, keys, subscribe, out),
            StoreMsg::Prepare { tx, lower_bound, writes } => {
                let pt = self.propose(now, lower_bound);
                assert!(pt > lower_bound, "a proposal is above everything the transaction read");
                let replaced = self.prepared.insert(tx, Pending { pt, writes });
                assert!(replaced.is_none(), "transaction {tx} prepared twice");
                out.trace("Prepare", || format!("{{\"partition\":{},\"tx\":{tx},\"pt\":{pt}}}", self.index));
                self.send_out(from, StoreMsg::Prepared { tx, pt }, out);
            }
            StoreMsg::Commit { tx, ct } => self.on_commit(now, tx, ct, out),
            StoreMsg::Stabilize { vc } => {
                let j = self.partitions.iter().position(|p| *p == from).expect("stabilize from a partition");
                // FIFO links deliver a peer's reports in order, and each report is monotone.
                assert!(vc >= self.peer_vc[j], "a peer's stable bound went backwards");
                self.peer_vc[j] = vc;
                self.refresh_lst(now);
            }
            StoreMsg::ReadReply { .. } | StoreMsg::Prepared { .. } | StoreMsg::Notify { .. } => {
                unreachable!("{} is not for a partition", msg.kind())
            }
        }
    }

    pub fn on_timer<M: From<StoreMsg>, T: From<StoreTimer>>(&mut self, now: Time, timer: StoreTimer, out: &mut Outbox<M, T>) {
        match timer {
            StoreTimer::Stabilize => {
                self.tick(now);
                let vc = self.vc();
                assert!(vc >= self.vc_reported, "the local stable bound never decreases");
                self.vc_reported = vc;
                for (j, &p) in self.partitions.iter().enumerate() {
                    if j != self.index as usize {
                        out.send(p, StoreMsg::Stabilize { vc }.into());
                    }
                }
                self.refresh_lst(now);
                out.set_timer(StoreTimer::Stabilize.into(), self.config.stabilization_period_ns);
            }
            StoreTimer::Push => {
                self.push(now, out);
                out.set_timer(StoreTimer::Push.into(), self.config.push_period_ns);
            }
            StoreTimer::Release(seq) => {
                let (to, msg) = self.held.remove(&seq).expect("a held reply is released once");
                out.send(to, msg.into());
            }
        }
    }

    /// Checks the store's invariants; `Err` is one sentence.
    pub fn check_invariants(&self) -> Result<(), String> {
        if self.lst > self.vc() {
            return Err(format!("partition {}: lst {} is above its own stable bound {}", self.index, self.lst, self.vc()));
        }
        for (key, kv) in &self.keys {
            for w in kv.versions.windows(2) {
                if w[0].ts >= w[1].ts {
                    return Err(format!("key {key}: versions out of order ({} then {})", w[0].ts, w[1].ts));
                }
                if w[0].max_promise >= w[1].ts {
                    return Err(format!(
                        "key {key}: version {} was promised up to {}, but the next version has timestamp {} (promise unsound)",
                        w[0].ts, w[0].max_promise, w[1].ts
                    ));
                }
            }
            if kv.collected && kv.versions.first().is_none_or(|first| first.ts > self.lst) {
                return Err(format!("key {key}: its newest stable version (at or below lst {}) was collected", self.lst));
            }
            if let Some(first) = kv.versions.first()
                && !kv.collected
                && kv.initial_max_promise >= first.ts
            {
                return Err(format!(
                    "key {key}: the initial version was promised up to {}, but version {} exists (promise unsound)",
                    kv.initial_max_promise, first.ts
                ));
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Clock, stable bound, stable time

    fn tick(&mut self, now: Time) {
        let physical = (now + self.index as Time * self.config.clock_skew_ns) << PARTITION_BITS;
        self.clock = self.clock.max(physical);
    }

    /// The smallest timestamp above `max(clock, lower_bound)` whose low bits name us.
    fn propose(&mut self, now: Time, lower_bound: Ts) -> Ts {
        self.tick(now);
        let floor = self.clock.max(lower_bound).max(self.last_proposal);
        let aligned = ((floor >> PARTITION_BITS) << PARTITION_BITS) | self.index as Ts;
        let pt = if aligned > floor { aligned } else { aligned + (1 << PARTITION_BITS) };
        assert!(pt > self.last_proposal, "proposals strictly increase");
        self.clock = pt;
        self.last_proposal = pt;
        pt
    }

    /// Nothing will ever be installed here at or below this bound.
    fn vc(&self) -> Ts {
        match self.prepared.values().map(|p| p.pt).min() {
            Some(pt) => pt - 1,
            None => self.clock,
        }
    }

    fn refresh_lst(&mut self, now: Time) {
        self.tick(now);
        let mut lst = self.vc();
        for (j, &vc) in self.peer_vc.iter().enumerate() {
            if j != self.index as usize {
                lst = lst.min(vc);
            }
        }
        // Every component only grows, so the minimum does too.
        assert!(lst >= self.lst, "the stable time never decreases");
        self.lst = lst;
        if !self.over_limit.is_empty() {
            for key in std::mem::take(&mut self.over_limit) {
                self.collect(key);
            }
        }
    }

    /// Garbage collection: drops the oldest versions of `key` beyond `versions_per_key_max`,
    /// but only those whose successor is stable, so the newest version at or below `lst` (what
    /// a push or a read at `lst` returns) is never collected. Remembers the key if it still
    /// holds too many.
    fn collect(&mut self, key: Key) {
        let max = self.config.versions_per_key_max as usize;
        let kv = self.keys.get_mut(&key).expect("a key with versions");
        while kv.versions.len() > max && kv.versions[1].ts <= self.lst {
            kv.versions.remove(0);
            kv.collected = true;
        }
        if kv.versions.len() > max {
            self.over_limit.insert(key);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Reads

    #[allow(clippy::too_many_arguments)]
    fn on_read<M: From<StoreMsg>, T: From<StoreTimer>>(
        &mut self,
        now: Time,
        from: NodeId,
        req: u64,
        snapshot: Ts,
        keys: Vec<(Key, Option<Ts>)>,
        subscribe: bool,
        out: &mut Outbox<M, T>,
    ) {
        self.refresh_lst(now);
        let s = if snapshot == TS_INF { self.lst } else { snapshot };
        // Every finite snapshot is a minimum of promises, and no promise exceeds the global
        // stable time, which is at most our own bound: we hold everything at or below `s`.
        assert!(s <= self.vc(), "partition {}: snapshot {s} is above its stable bound {}", self.index, self.vc());
        let bound = self.lst.max(s);
        let entries = keys
            .into_iter()
            .map(|(key, cached)| {
                if subscribe && !self.config.subscribe_all {
                    self.subscribers.entry(key).or_default().insert(from);
                }
                (key, self.read_at(key, s, bound, cached))
            })
            .collect();
        self.send_out(from, StoreMsg::ReadReply { req, lst: self.lst, entries }, out);
    }

    /// The newest version of `key` at `s`, promised up to at most `bound`; `None` if collected.
    fn read_at(&mut self, key: Key, s: Ts, bound: Ts, cached: Option<Ts>) -> Option<Found> {
        let off_by_one = self.config.promise_off_by_one;
        let kv = self.keys.entry(key).or_default();
        let below = kv.versions.partition_point(|v| v.ts <= s);
        let next = kv.versions.get(below).map(|v| v.ts);
        let promise = match next {
            Some(t_next) if off_by_one => bound.min(t_next),
            Some(t_next) => bound.min(t_next - 1),
            None => bound,
        };
        let (value, ts, committed_ns) = if below == 0 {
            if kv.collected {
                return None;
            }
            kv.initial_max_promise = kv.initial_max_promise.max(promise);
            (None, 0, 0)
        } else {
            let v = &mut kv.versions[below - 1];
            v.max_promise = v.max_promise.max(promise);
            (Some(v.value), v.ts, v.committed_ns)
        };
        assert!(ts <= s && s <= promise, "a storage read satisfies the reader's interval");
        Some(Found { value, ts, promise, same_as_cached: cached == Some(ts), latest: promise == bound, committed_ns })
    }

    // -----------------------------------------------------------------------------------------
    // Commit

    fn on_commit<M: From<StoreMsg>, T: From<StoreTimer>>(&mut self, now: Time, tx: TxId, ct: Ts, out: &mut Outbox<M, T>) {
        let pending = self.prepared.remove(&tx).expect("commit of a prepared transaction");
        assert!(ct >= pending.pt, "the commit timestamp is the largest proposal");
        self.clock = self.clock.max(ct);
        for (key, value) in pending.writes {
            let kv = self.keys.entry(key).or_default();
            let at = kv.versions.partition_point(|v| v.ts < ct);
            assert!(kv.versions.get(at).is_none_or(|v| v.ts != ct), "commit timestamps are unique per key");
            kv.versions.insert(at, StoredVersion { ts: ct, value, committed_ns: now, max_promise: 0 });
            self.collect(key);
            self.unpushed.entry(ct).or_default().push(key);
        }
        out.trace("Install", || format!("{{\"partition\":{},\"tx\":{tx},\"ct\":{ct}}}", self.index));
    }

    // -----------------------------------------------------------------------------------------
    // Pub/sub

    fn push<M: From<StoreMsg>, T: From<StoreTimer>>(&mut self, now: Time, out: &mut Outbox<M, T>) {
        self.refresh_lst(now);
        let lst = self.lst;
        let later = self.unpushed.split_off(&(lst.saturating_add(1)));
        let stable = std::mem::replace(&mut self.unpushed, later);
        let changed: BTreeSet<Key> = stable.into_values().flatten().collect();
        let mut per_cache: BTreeMap<NodeId, Vec<Pushed>> = self.caches.iter().map(|&c| (c, Vec::new())).collect();
        for key in changed {
            // Collection keeps the newest stable version, so the push always has one to carry
            // (were it skipped, caches would bump the promise of the version it replaced).
            let found = self.read_at(key, lst, lst, None).expect("garbage collection keeps the newest stable version");
            let pushed = Pushed {
                key,
                value: found.value,
                ts: found.ts,
                promise: found.promise,
                latest: found.latest,
                committed_ns: found.committed_ns,
            };
            if self.config.subscribe_all {
                for list in per_cache.values_mut() {
                    list.push(pushed.clone());
                }
            } else if let Some(subs) = self.subscribers.get(&key) {
                for s in subs {
                    per_cache.entry(*s).or_default().push(pushed.clone());
                }
            }
        }
        let seq = self.pushes;
        self.pushes += 1;
        for (cache, entries) in per_cache {
            self.send_out(cache, StoreMsg::Notify { seq, lst, entries }, out);
        }
    }

    /// Sends to a cache or function, after the storage latency.
    fn send_out<M: From<StoreMsg>, T: From<StoreTimer>>(&mut self, to: NodeId, msg: StoreMsg, out: &mut Outbox<M, T>) {
        if self.config.storage_latency_ns == 0 {
            out.send(to, msg.into());
            return;
        }
        let seq = self.next_held;
        self.next_held += 1;
        self.held.insert(seq, (to, msg));
        out.set_timer(StoreTimer::Release(seq).into(), self.config.storage_latency_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::Effect;

    type Out = Outbox<StoreMsg, StoreTimer>;

    fn config(partitions: u32) -> StoreConfig {
        StoreConfig {
            partitions,
            push_period_ns: 50_000_000,
            stabilization_period_ns: 5_000_000,
            storage_latency_ns: 0,
            versions_per_key_max: 8,
            clock_skew_ns: 0,
            subscribe_all: true,
            promise_off_by_one: false,
        }
    }

    const CACHE: NodeId = NodeId(100);
    const CLIENT: NodeId = NodeId(1 << 63);

    fn one_partition() -> Partition {
        Partition::new(0, vec![NodeId::fixed(0)], vec![CACHE], config(1))
    }

    fn commit(p: &mut Partition, now: Time, tx: TxId, writes: Vec<(Key, Value)>) -> Ts {
        let mut out = Out::default();
        p.on_message(now, CLIENT, StoreMsg::Prepare { tx, lower_bound: 0, writes }, &mut out);
        let Effect::Send { msg: StoreMsg::Prepared { pt, .. }, .. } = out.effects[0] else { panic!("{out:?}") };
        p.on_message(now, CLIENT, StoreMsg::Commit { tx, ct: pt }, &mut out);
        pt
    }

    fn read(p: &mut Partition, now: Time, key: Key, snapshot: Ts) -> Option<Found> {
        let mut out = Out::default();
        p.on_message(now, CACHE, StoreMsg::Read { req: 1, snapshot, keys: vec![(key, None)], subscribe: true }, &mut out);
        let Effect::Send { msg: StoreMsg::ReadReply { entries, .. }, .. } = &out.effects[0] else { panic!("{out:?}") };
        entries[0].1.clone()
    }

    #[test]
    fn proposals_carry_the_partition_index_and_strictly_increase() {
        let mut p = Partition::new(3, (0..4).map(NodeId::fixed).collect(), vec![], config(4));
        let a = p.propose(0, 0);
        let b = p.propose(0, 0);
        let c = p.propose(0, 5_000 << PARTITION_BITS);
        assert_eq!(a % PARTITIONS_MAX as u64, 3);
        assert_eq!(b % PARTITIONS_MAX as u64, 3);
        assert!(a < b && b < c && c > 5_000 << PARTITION_BITS);
    }

    #[test]
    fn a_promise_stops_just_below_the_next_version() {
        let mut p = one_partition();
        let t1 = commit(&mut p, 1_000, 1, vec![(7, 1)]);
        let t2 = commit(&mut p, 2_000, 2, vec![(7, 2)]);
        let f = read(&mut p, 3_000, 7, t2 - 1).unwrap();
        assert_eq!((f.value, f.ts, f.promise), (Some(1), t1, t2 - 1));
        let latest = read(&mut p, 3_000, 7, TS_INF).unwrap();
        assert_eq!(latest.ts, t2);
        assert!(latest.promise >= t2, "the latest version is promised up to the stable time");
        assert_eq!(p.check_invariants(), Ok(()));
    }

    #[test]
    fn the_off_by_one_mutant_promises_the_next_version_itself_and_breaks_soundness() {
        let mut p = one_partition();
        p.config.promise_off_by_one = true;
        commit(&mut p, 1_000, 1, vec![(7, 1)]);
        let t2 = commit(&mut p, 2_000, 2, vec![(7, 2)]);
        let f = read(&mut p, 3_000, 7, t2 - 1).unwrap();
        assert_eq!(f.promise, t2);
        assert!(p.check_invariants().unwrap_err().contains("promise unsound"));
    }

    #[test]
    fn a_read_of_a_collected_version_returns_bottom() {
        let mut p = one_partition();
        p.config.versions_per_key_max = 1;
        let t1 = commit(&mut p, 1_000, 1, vec![(7, 1)]);
        commit(&mut p, 2_000, 2, vec![(7, 2)]);
        assert_eq!(read(&mut p, 3_000, 7, t1), None);
        assert_eq!(read(&mut p, 3_000, 7, 0), None, "the initial version is gone too");
    }

    #[test]
    fn garbage_collection_keeps_the_newest_stable_version_until_its_successor_is_stable() {
        // Regression (scenarios/faastcc/regression-promise-bumps-gc.json): a version collected
        // before it was ever stable left the push nothing to carry for its key.
        let ids: Vec<NodeId> = (0..2).map(NodeId::fixed).collect();
        let mut p0 = Partition::new(0, ids.clone(), vec![CACHE], StoreConfig { versions_per_key_max: 1, ..config(2) });
        let t1 = commit(&mut p0, 1_000, 1, vec![(2, 1)]);
        let mut out = Out::default();
        p0.on_message(2_000, ids[1], StoreMsg::Stabilize { vc: 2_000 << PARTITION_BITS }, &mut out);
        assert!(p0.lst() >= t1, "t1 is stable");
        let t2 = commit(&mut p0, 3_000, 2, vec![(2, 2)]);
        assert_eq!(p0.version_count(), 2, "t2 is not stable yet: t1 stays");
        assert_eq!(p0.check_invariants(), Ok(()));
        out.clear();
        p0.on_timer(3_500, StoreTimer::Push, &mut out);
        let Effect::Send { msg: StoreMsg::Notify { entries, .. }, .. } = &out.effects[0] else { panic!() };
        assert_eq!(entries.iter().map(|e| (e.key, e.ts)).collect::<Vec<_>>(), vec![(2, t1)], "the push carries t1");
        p0.on_message(4_000, ids[1], StoreMsg::Stabilize { vc: 4_000 << PARTITION_BITS }, &mut out);
        assert!(p0.lst() >= t2);
        assert_eq!(p0.version_count(), 1, "t2 is stable: t1 is collected");
        assert_eq!(read(&mut p0, 4_000, 2, t1), None);
        assert_eq!(p0.check_invariants(), Ok(()));
    }

    #[test]
    fn the_stable_time_is_the_minimum_of_the_partitions_bounds() {
        let ids: Vec<NodeId> = (0..2).map(NodeId::fixed).collect();
        let mut p0 = Partition::new(0, ids.clone(), vec![], config(2));
        let mut out = Out::default();
        p0.on_timer(10_000, StoreTimer::Stabilize, &mut out);
        assert_eq!(p0.lst(), 0, "no report from P1 yet");
        p0.on_message(10_000, ids[1], StoreMsg::Stabilize { vc: 4_000 << PARTITION_BITS }, &mut out);
        assert_eq!(p0.lst(), 4_000 << PARTITION_BITS);
        // A prepared transaction holds our own bound below its proposal.
        out.clear();
        p0.on_message(20_000, CLIENT, StoreMsg::Prepare { tx: 9, lower_bound: 0, writes: vec![(2, 1)] }, &mut out);
        let Effect::Send { msg: StoreMsg::Prepared { pt, .. }, .. } = out.effects[0] else { panic!() };
        p0.on_message(25_000, ids[1], StoreMsg::Stabilize { vc: 30_000 << PARTITION_BITS }, &mut out);
        assert_eq!(p0.lst(), pt - 1, "held just below the pending proposal");
    }

    #[test]
    fn pushes_carry_only_stable_versions_with_the_stable_time_as_promise() {
        let ids: Vec<NodeId> = (0..2).map(NodeId::fixed).collect();
        let mut p0 = Partition::new(0, ids.clone(), vec![CACHE], config(2));
        let t = commit(&mut p0, 1_000, 1, vec![(2, 1)]);
        let mut out = Out::default();
        p0.on_timer(2_000, StoreTimer::Push, &mut out);
        let Effect::Send { msg: StoreMsg::Notify { entries, .. }, .. } = &out.effects[0] else { panic!() };
        assert!(entries.is_empty(), "P1 has not reported: the version is not stable yet");
        out.clear();
        p0.on_message(3_000, ids[1], StoreMsg::Stabilize { vc: 2_500 << PARTITION_BITS }, &mut out);
        p0.on_timer(4_000, StoreTimer::Push, &mut out);
        let Effect::Send { msg: StoreMsg::Notify { lst, entries, .. }, .. } = &out.effects[0] else { panic!() };
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].ts, entries[0].promise), (t, *lst));
    }
}
