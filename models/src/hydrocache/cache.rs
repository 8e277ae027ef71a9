//! The cache: one per worker machine, keeping a causal cut. It merges refreshed versions once
//! their dependencies are covered (the chase), serves reads from the cut or Con's installed
//! snapshot, and pins what it served for the workflow's downstream functions.

use super::gc::KnownFloor;
use super::msg::{Answers, Msg, Need, Out, Timer};
use super::version::{Cut, Deps, HVersion};
use super::{Epoch, INTEGRATION_ROUNDS_MAX, Mode, Seq, WfKey};
use crate::lru::Lru;
use crate::metrics;
use causim_sim::history::Key;
use causim_sim::node::{Message, NodeId};
use causim_sim::time::Time;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Merging versions into the cut: waits for missing dependencies (the chase).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Integration {
    pending: BTreeMap<Key, HVersion>,
    rounds: u32,
    /// Bytes the fetches and their replies moved (Fig. 7).
    bytes: u64,
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
    /// The oldest floor epoch a new read (not a key read upstream) was served under.
    epoch: Option<Epoch>,
}

/// Dependency garbage collection at a cache: when it reports, the newest floor it knows, and
/// the keys whose covered version changed since its last report.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct CacheGc {
    period_ns: Time,
    phase_ns: Time,
    known: KnownFloor,
    changed: BTreeSet<Key>,
    /// Mutant `gc_untagged_reads`: replies carry no served epoch.
    untagged_reads: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cache {
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
    /// Pulls sent whose reply has not arrived (lost, or overtaken by a later one's).
    pulls_unanswered: u64,
    /// At most this many versions in the cut (`params.cache_capacity_keys`), the least
    /// recently used evicted first; `None` is unbounded.
    capacity: Option<usize>,
    lru: Lru,
    /// The version number each evicted key had: the cut still covers dependencies up to it, and
    /// takes in no older version of the key (see the module docs, "Bounded caches").
    floors: BTreeMap<Key, Seq>,
    gc: Option<CacheGc>,
}

impl Cache {
    /// Cache `id` over the database `db`, first refreshing `refresh_phase_ns` into the run.
    pub fn new(id: NodeId, db: NodeId, refresh_period_ns: Time, refresh_phase_ns: Time, mode: Mode, prewarm: bool) -> Cache {
        Cache {
            id,
            db,
            refresh_period_ns,
            refresh_phase_ns,
            mode,
            prewarm,
            cut: Cut::default(),
            next_req: 0,
            integrations: BTreeMap::new(),
            reads: BTreeMap::new(),
            remote: BTreeMap::new(),
            pins: BTreeMap::new(),
            retired: BTreeSet::new(),
            snapshots: BTreeMap::new(),
            pulls_unanswered: 0,
            capacity: None,
            lru: Lru::default(),
            floors: BTreeMap::new(),
            gc: None,
        }
    }

    /// Takes part in dependency garbage collection, reporting every `period_ns` from
    /// `phase_ns` on (`None`: no collection).
    pub fn with_gc(mut self, period_ns: Option<Time>, phase_ns: Time) -> Cache {
        self.gc = period_ns.map(|period_ns| CacheGc {
            period_ns,
            phase_ns,
            known: KnownFloor::default(),
            changed: BTreeSet::new(),
            untagged_reads: false,
        });
        self
    }

    /// Mutant `gc_untagged_reads`: reads are not told the floor epoch they were served under.
    pub fn with_untagged_reads(mut self, yes: bool) -> Cache {
        if let Some(gc) = &mut self.gc {
            gc.untagged_reads = yes;
        }
        self
    }

    /// A garbage-collection report: what the cut covers of every key changed since the last.
    pub(super) fn on_gc_report(&mut self, out: &mut Out) {
        let gc = self.gc.as_mut().expect("reports only with garbage collection on");
        let changed = std::mem::take(&mut gc.changed);
        let (epoch, period) = (gc.known.epoch(), gc.period_ns);
        let changes = changed.into_iter().map(|k| (k, self.have_seq(k))).collect();
        out.send(self.db, Msg::GcReport { epoch, changes });
        out.set_timer(Timer::GcReport, period);
    }

    /// The floor epoch this cache serves a new read of `key` at version `seq` under.
    fn served_epoch(&self, key: Key, seq: Seq) -> Option<Epoch> {
        self.gc.as_ref().filter(|gc| !gc.untagged_reads).map(|gc| gc.known.served_epoch(key, seq))
    }

    /// Bounds the cut to `capacity` versions with LRU replacement (FaaSTCC §6.7); 0 disables
    /// the cache. A bounded cache is never pre-warmed (`Params::validate` refuses both).
    pub fn with_capacity(mut self, capacity: Option<usize>) -> Cache {
        assert!(capacity.is_none() || !self.prewarm, "a bounded cache starts cold");
        self.capacity = capacity;
        self
    }

    pub(super) fn on_start(&self, out: &mut Out) {
        out.set_timer(Timer::Refresh, self.refresh_phase_ns);
        if let Some(gc) = &self.gc {
            out.set_timer(Timer::GcReport, gc.phase_ns);
        }
    }

    /// The periodic refresh: pull what changed since the last one.
    pub(super) fn on_refresh(&mut self, out: &mut Out) {
        self.pulls_unanswered += 1;
        out.send(self.db, Msg::Pull);
        out.set_timer(Timer::Refresh, self.refresh_period_ns);
    }

    /// The cut's version of `key` (the initial version when pre-warmed and absent).
    fn in_cut(&self, key: Key) -> Option<HVersion> {
        match self.cut.0.get(&key) {
            Some(v) => Some(v.clone()),
            None if self.prewarm => Some(HVersion::initial()),
            None => None,
        }
    }

    /// The version of `key` the cut covers: the one it holds, or the one it evicted.
    fn have_seq(&self, key: Key) -> Seq {
        let held = self.cut.0.get(&key).map_or(0, |v| v.seq);
        held.max(self.floors.get(&key).copied().unwrap_or(0))
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

    #[cfg(test)]
    pub(super) fn cut_version(&self, key: Key) -> Option<&HVersion> {
        self.cut.0.get(&key)
    }

    pub fn cut_len(&self) -> usize {
        self.cut.0.len()
    }

    /// Dependency entries held in the cut (HydroCache's metadata, CausalMesh §9.3).
    pub fn cut_dependency_entries(&self) -> u64 {
        self.cut.0.values().map(|v| v.deps.len() as u64).sum()
    }

    pub(super) fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        self.handle(now, from, msg, out);
        // Evict once the message is handled: a merge's reader is served from the cut first.
        if self.capacity.is_some() {
            self.evict_to_capacity(out);
        }
    }

    fn handle(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match msg {
            Msg::Read { req, wf, keys } => self.on_read(now, from, req, wf, keys, out),
            Msg::FetchReply { req, versions } => self.on_fetch_reply(now, req, versions, out),
            Msg::Notify { versions } => {
                // A bounded cache refreshes only the keys it holds: an evicted key stays out until
                // a read (or a dependency) brings it back.
                let bounded = self.capacity.is_some();
                let pending: BTreeMap<Key, HVersion> =
                    versions.into_iter().filter(|(k, v)| v.seq > self.have_seq(*k) && (!bounded || self.cut.0.contains_key(k))).collect();
                // Subscribed to every key, a pull returns every key changed since the last one:
                // with what we merged before, that is the database's whole state at the pull,
                // which is causally closed, unless an earlier pull's reply was lost (message
                // loss) or is still on its way. Then a dependency can be missing, and the
                // versions wait for it as without pre-warming (the chase). Checking costs as much
                // as every dependency of every version pulled, so only then.
                self.pulls_unanswered = self.pulls_unanswered.saturating_sub(1);
                let all_answered = self.pulls_unanswered == 0;
                let covered = || {
                    let mut all = true;
                    for v in pending.values() {
                        self.for_each_uncovered(&v.deps, |k, s| all &= pending.get(&k).is_some_and(|p| p.seq >= s));
                    }
                    all
                };
                if self.prewarm && (all_answered || covered()) {
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
            Msg::GcFloor { from: since, to, changes } => {
                if let Some(gc) = &mut self.gc
                    && gc.known.apply(since, to, &changes)
                {
                    out.trace("GcFloor", || format!("{{\"epoch\":{to},\"keys\":{}}}", changes.len()));
                }
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
        self.reads.insert(id, PendingRead { client, client_req, wf, items, waiting: keys.len(), epoch: None });
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
        let served_epoch = self.served_epoch(self.reads[&read].items[item].0, version.seq);
        let r = self.reads.get_mut(&read).expect("pending read");
        let key = r.items[item].0;
        if let (Need::AtLeast(_), Some(e)) = (r.items[item].1, served_epoch) {
            r.epoch = Some(r.epoch.map_or(e, |old| old.min(e)));
        }
        r.items[item].2 = Some(version.clone());
        r.items[item].3 = rounds;
        r.waiting -= 1;
        let done = r.waiting == 0;
        let wf = r.wf;
        if self.capacity.is_some() && self.cut.0.get(&key).is_some_and(|v| v.seq == version.seq) {
            self.lru.touch(key);
        }
        self.pins.entry(wf).or_default().insert((key, version.seq), version);
        if done {
            let r = self.reads.remove(&read).expect("present");
            let versions = r.items.into_iter().map(|(k, _, v, rounds, remote)| (k, v.expect("answered"), rounds, remote)).collect();
            out.send(r.client, Msg::ReadReply { req: r.client_req, versions: Answers { items: versions, epoch: r.epoch } });
        }
    }

    /// Starts merging `pending` (plus the database's latest `fetch`) into the cut.
    fn integrate(&mut self, now: Time, pending: BTreeMap<Key, HVersion>, fetch: Vec<Key>, read: Option<(u64, usize)>, out: &mut Out) {
        let req = self.next_req;
        self.next_req += 1;
        self.integrations.insert(req, Integration { pending, rounds: 0, bytes: 0, read });
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
        let fetch = Msg::Fetch { req, keys, subscribe: !self.prewarm && self.capacity != Some(0) };
        i.bytes += fetch.size_bytes();
        out.send(self.db, fetch);
    }

    fn on_fetch_reply(&mut self, now: Time, req: u64, versions: Vec<(Key, HVersion)>, out: &mut Out) {
        let i = self.integrations.get_mut(&req).expect("a fetch of a running integration");
        i.bytes += 1 + super::msg::fetch_reply_body(&versions);
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
        let mut missing = BTreeSet::new();
        for v in i.pending.values() {
            self.for_each_uncovered(&v.deps, |k, s| {
                if i.pending.get(&k).is_none_or(|p| p.seq < s) {
                    missing.insert(k);
                }
            });
        }
        if !missing.is_empty() {
            self.fetch(req, missing.into_iter().collect(), out);
            return;
        }
        let mut i = self.integrations.remove(&req).expect("present");
        // The read's own version, in case the cut keeps a newer one it evicted since (a bounded
        // cache takes in no version older than what it covers).
        let fetched = i.read.and_then(|(read, item)| i.pending.get(&self.reads.get(&read)?.items[item].0).cloned());
        // Every pending version's dependencies are covered by the cut plus the others: merge.
        self.merge(now, std::mem::take(&mut i.pending), out);
        match i.read {
            // The read was dropped (its attempt ended) while we fetched.
            Some((read, _)) if !self.reads.contains_key(&read) => {}
            Some((read, item)) => {
                let r = &self.reads[&read];
                let (key, need) = (r.items[item].0, r.items[item].1);
                let v = self.in_cut(key).or(fetched).expect("just merged");
                if let Need::AtLeast(s) = need {
                    assert!(v.seq >= s, "the database holds every version anything depends on");
                }
                if i.rounds > 0 {
                    out.observe(metrics::STORAGE_BYTES_PER_READ, i.bytes);
                }
                self.serve(read, item, v, i.rounds, out);
            }
            None => out.observe(metrics::REFRESH_ROUNDS, i.rounds as u64),
        }
    }

    /// Calls `f` on each dependency the cut holds an older version of (or none, counted as 0).
    /// Without garbage collection the dependency lists hold the writer's whole causal past, and
    /// random lookups of every entry were most of a long run's time, so a long list is walked
    /// side by side with the cut (both are sorted by key). A short list (collected) is looked
    /// up instead: walking would cost the cut's size, which grows with the keys touched.
    fn for_each_uncovered(&self, deps: &Deps, mut f: impl FnMut(Key, Seq)) {
        let (Some(&(first, _)), Some(&(last, _))) = (deps.0.first(), deps.0.last()) else { return };
        if deps.len() * 16 < self.cut.0.len() {
            for &(k, s) in deps.iter() {
                if self.have_seq(k) < s {
                    f(k, s);
                }
            }
            return;
        }
        let mut cut = self.cut.0.range(first..=last).peekable();
        for &(k, s) in deps.iter() {
            while cut.next_if(|&(&c, _)| c < k).is_some() {}
            let mut have = cut.peek().filter(|&&(&c, _)| c == k).map_or(0, |(_, v)| v.seq);
            if !self.floors.is_empty() {
                have = have.max(self.floors.get(&k).copied().unwrap_or(0));
            }
            if have < s {
                f(k, s);
            }
        }
    }

    /// Merges versions into the cut (newer ones only); the caller checked their dependencies.
    fn merge(&mut self, now: Time, versions: BTreeMap<Key, HVersion>, out: &mut Out) {
        if versions.is_empty() {
            return;
        }
        let cut = Arc::make_mut(&mut self.cut.0);
        for (k, v) in versions {
            let floor = self.floors.get(&k).copied().unwrap_or(0);
            if cut.get(&k).is_none_or(|old| v.seq > old.seq) && v.seq >= floor {
                if v.seq > 0 {
                    out.observe(metrics::VISIBILITY_NS, now.saturating_sub(v.written_ns));
                }
                cut.insert(k, v);
                if let Some(gc) = &mut self.gc {
                    gc.changed.insert(k);
                }
                if self.capacity.is_some() {
                    self.floors.remove(&k);
                    self.lru.touch(k);
                }
            }
        }
    }

    /// Evicts least recently used versions until the cut fits its capacity. Each leaves its
    /// version number behind as a floor, so the versions that depend on it stay covered and
    /// the cut stays closed.
    fn evict_to_capacity(&mut self, out: &mut Out) {
        let Some(capacity) = self.capacity else { return };
        if self.cut.0.len() <= capacity {
            return;
        }
        let cut = Arc::make_mut(&mut self.cut.0);
        while cut.len() > capacity {
            let victim = self.lru.pop_oldest().expect("every cut version is in the use order");
            let v = cut.remove(&victim).expect("the use order lists held keys");
            self.floors.insert(victim, v.seq);
            out.observe(metrics::CACHE_EVICTIONS, 1);
        }
    }

    /// The cut is closed: every dependency is covered by an at-least-as-new version.
    pub(super) fn check_invariants(&self) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::Effect;

    fn deps(v: &[(Key, Seq)]) -> Deps {
        Deps::from_sorted(v.to_vec())
    }

    fn cache(prewarm: bool) -> Cache {
        Cache {
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
            pulls_unanswered: 0,
            capacity: None,
            lru: Lru::default(),
            floors: BTreeMap::new(),
            gc: None,
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
    fn an_evicted_version_leaves_a_floor_that_keeps_the_cut_closed_and_its_next_read_goes_to_the_database() {
        let mut c = cache(false).with_capacity(Some(1));
        let mut out = Out::default();
        let db = NodeId::fixed(9);
        let client = NodeId(1 << 63);
        // A read of kb fetches kb@2, which depends on ka@1: the chase fetches ka, both merge, kb
        // is served, and ka (used least recently) is evicted, leaving the floor ka@1 that still
        // covers kb's dependency.
        let ka = HVersion { seq: 1, value: Some(1), deps: deps(&[(1, 1)]), written_ns: 0 };
        let kb = HVersion { seq: 2, value: Some(2), deps: deps(&[(1, 1), (2, 2)]), written_ns: 0 };
        c.on_message(0, client, Msg::Read { req: 1, wf: (1, 1), keys: vec![(2, Need::AtLeast(0))] }, &mut out);
        c.on_message(5, db, Msg::FetchReply { req: 1, versions: vec![(2, kb)] }, &mut out);
        c.on_message(10, db, Msg::FetchReply { req: 1, versions: vec![(1, ka)] }, &mut out);
        assert_eq!(fetches(&out), vec![vec![2], vec![1]]);
        assert_eq!(replies(&out), vec![(1, vec![(2, 2)])]);
        assert_eq!(c.cut.0.keys().copied().collect::<Vec<_>>(), vec![2]);
        assert_eq!(c.floors, BTreeMap::from([(1, 1)]));
        assert_eq!(c.check_invariants(), Ok(()));
        assert!(out.observations.contains(&(metrics::CACHE_EVICTIONS, 1)));
        // A refresh of the evicted key is dropped, and nothing older than the floor merges.
        out.clear();
        let ka2 = HVersion { seq: 3, value: Some(3), deps: deps(&[(1, 3)]), written_ns: 0 };
        c.on_message(20, db, Msg::Notify { versions: vec![(1, ka2.clone())] }, &mut out);
        assert_eq!(c.cut.0.keys().copied().collect::<Vec<_>>(), vec![2]);
        c.merge(20, BTreeMap::from([(1, HVersion::initial())]), &mut out);
        assert!(!c.cut.0.contains_key(&1), "below the floor");
        // Its next read misses and fetches the database's latest, merged like any other.
        c.on_message(30, client, Msg::Read { req: 2, wf: (1, 1), keys: vec![(1, Need::AtLeast(0))] }, &mut out);
        assert_eq!(fetches(&out), vec![vec![1]]);
        out.clear();
        c.on_message(40, db, Msg::FetchReply { req: 3, versions: vec![(1, ka2)] }, &mut out);
        assert_eq!(replies(&out), vec![(2, vec![(1, 3)])]);
        assert_eq!(c.cut.0.keys().copied().collect::<Vec<_>>(), vec![1], "kb@2 evicted in turn");
        assert_eq!(c.floors, BTreeMap::from([(2, 2)]));
        assert_eq!(c.check_invariants(), Ok(()));
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
            Effect::Send { msg: Msg::ReadReply { req: 5, versions }, .. } => Some(versions.items.clone()),
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
                    Some((*req, versions.items.iter().map(|(k, v, _, _)| (*k, v.seq)).collect()))
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
