//! The cache (Alg. 2, §4.3, §4.6): one per worker machine, one entry `<key, value, t,
//! promise>` per key, filled by reads and refreshed by the store's pushes. It answers a batch
//! of reads in one round, going to the store only for the keys it cannot serve in the
//! reader's interval.

use super::interval::{Interval, ReadCase, classify};
use super::msg::{Answer, Msg, Out};
use super::read_policy::ReadPolicy;
use crate::lru::Lru;
use crate::metrics;
use crate::tcc_store::{self, Found, StoreMsg, TS_INF, Ts};
use causim_sim::history::{Key, Value};
use causim_sim::node::NodeId;
use causim_sim::time::Time;
use std::collections::BTreeMap;

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
    answers: Vec<(Key, ReadCase, Option<Answer>)>,
    partitions_left: usize,
    /// The snapshot the store reads at (`read_policy` fixed_exact knows a version there).
    snapshot: Ts,
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
    /// What the cache may know of a version (`params.read_policy`).
    read_policy: ReadPolicy,
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
    /// At most this many entries (`params.cache_capacity_keys`), the least recently used
    /// evicted first; `None` is unbounded.
    capacity: Option<usize>,
    lru: Lru,
    /// The largest stable time any partition reported: a snapshot every partition can serve.
    known_stable: Ts,
    next_req: u64,
    waiting: BTreeMap<u64, Waiting>,
}

impl Cache {
    /// A cache over `partitions`; see the module docs for `prewarm` and `promise_bumps`.
    pub fn new(partitions: Vec<NodeId>, prewarm: bool, no_narrowing: bool, promise_bumps: bool) -> Cache {
        let n = partitions.len();
        Cache {
            partitions,
            prewarm,
            no_narrowing,
            promise_bumps,
            read_policy: ReadPolicy::Interval,
            bumped: vec![0; n],
            pushes_next: vec![0; n],
            frozen: vec![Vec::new(); n],
            entries: BTreeMap::new(),
            capacity: None,
            lru: Lru::default(),
            known_stable: 0,
            next_req: 0,
            waiting: BTreeMap::new(),
        }
    }

    /// The cache of a read policy other than the full system's (`params.read_policy`).
    pub fn with_read_policy(mut self, policy: ReadPolicy) -> Cache {
        self.read_policy = policy;
        self
    }

    /// Bounds the cache to `capacity` entries with LRU replacement (FaaSTCC §6.7); 0 disables
    /// it. A bounded cache is never pre-warmed (`Params::validate` refuses both).
    pub fn with_capacity(mut self, capacity: Option<usize>) -> Cache {
        assert!(capacity.is_none() || !self.prewarm, "a bounded cache starts cold");
        self.capacity = capacity;
        self
    }

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

    /// What a read of `key` would find here, as `(t, promise)` (pre-warming and promise bumps
    /// applied), or `None` if it is not cached. A read-only view for model checkers
    /// (`specs/src/faastcc_model.rs`: "promises are kept").
    pub fn entry_view(&self, key: Key) -> Option<(Ts, Ts)> {
        self.entry(key).map(|e| (e.t, e.p))
    }

    pub(super) fn on_read(&mut self, now: Time, client: NodeId, client_req: u64, keys: Vec<Key>, interval: Interval, out: &mut Out) {
        // Pass 1: entries consistent with the incoming interval are provisionally accepted, and
        // the newest of them raises s_low. Pass 2: accepted entries promised below that are
        // refreshed instead (they would pin the snapshot to an old point), and the others lower
        // s_high to their promise. This is the authors' batched algorithm (digest §2.11).
        let interval = self.read_policy.reading_interval(interval);
        let entries: Vec<(Key, Option<Entry>)> = keys.iter().map(|&k| (k, self.entry(k))).collect();
        let mut outcomes: Vec<ReadCase> = entries
            .iter()
            .map(|(_, e)| match e {
                None => ReadCase::Miss,
                Some(e) => classify(e.t, e.p, interval),
            })
            .collect();
        let mut narrowed = interval;
        if !self.no_narrowing {
            let low = entries
                .iter()
                .zip(&outcomes)
                .filter(|(_, o)| **o == ReadCase::Consistent)
                .map(|((_, e), _)| e.expect("hit").t)
                .fold(interval.0, Ts::max);
            narrowed.0 = low;
            for ((_, e), o) in entries.iter().zip(outcomes.iter_mut()) {
                if *o == ReadCase::Consistent {
                    let e = e.expect("hit");
                    if e.p < low {
                        *o = ReadCase::Stale;
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
                    ReadCase::Consistent => metrics::CACHE_HIT,
                    ReadCase::Miss => metrics::CACHE_MISS,
                    ReadCase::Stale => metrics::CACHE_STALE,
                    ReadCase::Replaced => metrics::CACHE_REPLACED,
                },
                1,
            );
            out.observe(metrics::STORAGE_ROUNDS_PER_READ, u64::from(outcome != ReadCase::Consistent));
            if outcome == ReadCase::Consistent {
                let e = entry.expect("a hit has an entry");
                if self.capacity.is_some() {
                    self.lru.touch(key);
                }
                answers.push((key, outcome, Some(Answer::Version { value: e.value, t: e.t, p: e.p })));
            } else {
                let partition = tcc_store::partition_of(key, self.partitions.len() as u32);
                // Subscribe to keys we install (a replaced reply is not installed; a disabled
                // cache installs nothing).
                let subscribe = outcome != ReadCase::Replaced && self.capacity != Some(0);
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
        // An unbounded interval reads at the newest snapshot we know every partition holds, and
        // not below `s_low`: a retry starts from a snapshot another cache may have learned first.
        let snapshot = if interval.1 == TS_INF { self.known_stable.max(interval.0) } else { interval.1 };
        let req = self.next_req;
        self.next_req += 1;
        out.trace("CacheFetch", || format!("{{\"req\":{req},\"snapshot\":{snapshot},\"at\":{now}}}"));
        let partitions_left = fetch.len();
        for (partition, keys) in fetch {
            let subscribe = keys.iter().any(|k| k.2);
            let keys = keys.into_iter().map(|(k, cached, _)| (k, cached)).collect();
            out.send(self.partitions[partition], StoreMsg::Read { req, snapshot, keys, subscribe }.into());
        }
        self.waiting.insert(req, Waiting { client, client_req, answers, partitions_left, snapshot });
    }

    pub(super) fn on_store_reply(&mut self, now: Time, req: u64, lst: Ts, entries: Vec<(Key, Option<Found>)>, out: &mut Out) {
        self.known_stable = self.known_stable.max(lst);
        let w = self.waiting.get_mut(&req).expect("a reply to a pending read");
        let (policy, snapshot) = (self.read_policy, w.snapshot);
        let known = |f: &Found| policy.known_from_read(f.promise, snapshot);
        // Each key fetched shares its request's and reply's bytes (Fig. 7).
        let per_key = tcc_store::read_bytes(&entries).div_ceil(entries.len().max(1) as u64);
        for _ in &entries {
            out.observe(metrics::STORAGE_BYTES_PER_READ, per_key);
        }
        let mut installs = Vec::new();
        for (key, found) in entries {
            let slot = w.answers.iter_mut().find(|a| a.0 == key && a.2.is_none()).expect("a requested key");
            slot.2 = Some(match &found {
                Some(f) => Answer::Version { value: f.value, t: f.ts, p: known(f) },
                None => Answer::Collected { stable: lst },
            });
            if let Some(f) = found
                && matches!(slot.1, ReadCase::Miss | ReadCase::Stale)
            {
                installs.push((key, Found { promise: known(&f), ..f }));
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

    fn reply(&mut self, client: NodeId, req: u64, answers: Vec<(Key, ReadCase, Option<Answer>)>, out: &mut Out) {
        let storage = answers.iter().any(|a| a.1 != ReadCase::Consistent);
        let answers = answers.into_iter().map(|(k, _, a)| (k, a.expect("every key answered"))).collect();
        out.send(client, Msg::CacheReply { req, answers, storage });
    }

    pub(super) fn on_notify(&mut self, now: Time, from: NodeId, seq: u64, lst: Ts, entries: Vec<tcc_store::Pushed>, out: &mut Out) {
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
                let p = self.read_policy.known_from_push(e.ts, e.promise);
                let entry = Entry { value: e.value, t: e.ts, p, latest: e.latest, epoch: 0 };
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
            if let Some(capacity) = self.capacity {
                self.lru.touch(key);
                while self.entries.len() > capacity {
                    let victim = self.lru.pop_oldest().expect("every entry is in the use order");
                    self.entries.remove(&victim);
                    out.observe(metrics::CACHE_EVICTIONS, 1);
                }
            }
        }
    }

    pub(super) fn check_invariants(&self) -> Result<(), String> {
        for (k, e) in &self.entries {
            if e.t > e.p {
                return Err(format!("cache entry for key {k} has timestamp {} above its promise {}", e.t, e.p));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faastcc::interval::ROOT_INTERVAL;
    use causim_sim::Effect;

    // §4.5, the worked example: f_x's interval after reading <k, v, 80, 120>.
    const AFTER_FX: Interval = (80, 120);

    const CLIENT: NodeId = NodeId(1 << 63);

    fn cache_with(entries: &[(Key, Ts, Ts)]) -> Cache {
        Cache {
            partitions: vec![NodeId::fixed(1)],
            prewarm: false,
            no_narrowing: false,
            promise_bumps: false,
            read_policy: ReadPolicy::Interval,
            bumped: vec![0],
            pushes_next: vec![0],
            frozen: vec![Vec::new()],
            entries: entries.iter().map(|&(k, t, p)| (k, Entry { value: Some(k * 10), t, p, latest: false, epoch: 0 })).collect(),
            capacity: None,
            lru: Lru::default(),
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
                Answer::Collected { .. } => panic!(),
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
    fn a_bounded_cache_evicts_the_least_recently_used_entry_and_a_disabled_one_installs_nothing() {
        let mut cache = cache_with(&[]).with_capacity(Some(2));
        let mut out = Out::default();
        let p = NodeId::fixed(1);
        let found = |ts| Some(Found { value: Some(ts), ts, promise: ts + 10, same_as_cached: false, latest: false, committed_ns: 0 });
        cache.on_read(0, CLIENT, 1, vec![1, 2], ROOT_INTERVAL, &mut out);
        cache.on_store_reply(1, 0, 100, vec![(1, found(10)), (2, found(20))], &mut out);
        // A hit on key 1 makes key 2 the least recently used; installing key 3 evicts it.
        cache.on_read(2, CLIENT, 2, vec![1], (10, 15), &mut out);
        cache.on_read(3, CLIENT, 3, vec![3], (10, 15), &mut out);
        cache.on_store_reply(4, 1, 100, vec![(3, found(12))], &mut out);
        assert_eq!(cache.entries.keys().copied().collect::<Vec<_>>(), vec![1, 3]);
        assert!(out.observations.contains(&(metrics::CACHE_EVICTIONS, 1)));
        // A push of an evicted key does not bring it back.
        cache.on_notify(
            5,
            p,
            0,
            200,
            vec![tcc_store::Pushed { key: 2, value: Some(1), ts: 30, promise: 40, latest: false, committed_ns: 0 }],
            &mut out,
        );
        assert_eq!(cache.entry_count(), 2);
        // Capacity 0: every read goes to the store, unsubscribed, and nothing is installed.
        let mut off = cache_with(&[]).with_capacity(Some(0));
        out.clear();
        off.on_read(0, CLIENT, 1, vec![7], ROOT_INTERVAL, &mut out);
        assert!(matches!(out.effects.as_slice(), [Effect::Send { msg: Msg::Store(StoreMsg::Read { subscribe: false, .. }), .. }]));
        off.on_store_reply(1, 0, 100, vec![(7, found(5))], &mut out);
        assert_eq!(off.entry_count(), 0);
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
