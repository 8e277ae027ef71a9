//! The database: eventually consistent, one latest version per key, ordered by arrival. It
//! stamps each write batch with its dependency map and answers fetches and the caches'
//! periodic pulls. With garbage collection it also computes the floor every round and prunes
//! the dependency lists it stores and serves (`gc.rs`).

use super::gc::Collector;
use super::msg::{Msg, Out, Timer};
use super::version::{Deps, HVersion, merge_deps};
use super::{Epoch, Seq};
use crate::metrics;
use causim_sim::history::Key;
use causim_sim::node::{Message, NodeId};
use causim_sim::time::Time;
use std::collections::{BTreeMap, BTreeSet};

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
    /// Dependency garbage collection (`params.dependency_gc_period_ns`): its period and state.
    gc: Option<(Time, Collector)>,
    /// Keys whose stored version still has dependency entries: each round prunes them.
    unpruned: BTreeSet<Key>,
}

impl Db {
    /// The database of `cache_count` caches; it holds each message it sends for `latency_ns`.
    pub fn new(cache_count: usize, latency_ns: Time, subscribe_all: bool) -> Db {
        Db {
            cache_count,
            latency_ns,
            subscribe_all,
            latest: BTreeMap::new(),
            subscribers: BTreeMap::new(),
            log: Vec::new(),
            log_base: 0,
            pulled: BTreeMap::new(),
            held: BTreeMap::new(),
            next_held: 0,
            gc: None,
            unpruned: BTreeSet::new(),
        }
    }

    /// Collects dependency metadata every `period_ns` (`None`: never, as CausalMesh runs it).
    pub fn with_gc(mut self, period_ns: Option<Time>) -> Db {
        self.gc = period_ns.map(|p| (p, Collector::new(self.cache_count, self.subscribe_all)));
        self
    }

    pub(super) fn on_start(&self, out: &mut Out) {
        if let Some((period, _)) = &self.gc {
            out.set_timer(Timer::GcRound, *period);
        }
    }

    /// The latest version of `key` as sent to cache `to`, the send noted (a cold cache's first
    /// version bounds what it holds).
    fn serve(&mut self, key: Key, to: NodeId) -> HVersion {
        let version = self.latest(key);
        if let Some((_, gc)) = &mut self.gc {
            gc.sent(to.index(), key, version.seq);
        }
        version
    }

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

    pub(super) fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Out) {
        match msg {
            Msg::Fetch { req, keys, subscribe } => {
                let versions = keys
                    .into_iter()
                    .map(|k| {
                        if subscribe && !self.subscribe_all {
                            self.subscribers.entry(k).or_default().insert(from);
                        }
                        (k, self.serve(k, from))
                    })
                    .collect();
                self.send_out(from, Msg::FetchReply { req, versions }, out);
            }
            Msg::WriteTx { deps, writes, ack } => {
                // The batch's versions depend on the writer's causal past and on each other.
                let mut seqs: Vec<(Key, Seq)> = writes.iter().map(|&(k, _)| (k, self.latest(k).seq + 1)).collect();
                seqs.sort_unstable();
                seqs.dedup_by_key(|e| e.0);
                let mut all = Deps::from_sorted(merge_deps(&deps.0, &seqs)).pruned_at(deps.pruned_epoch());
                if let Some((_, gc)) = &mut self.gc {
                    all = gc.prune(&all).unwrap_or(all);
                    for &(k, _) in &seqs {
                        gc.written(k);
                        if !all.is_empty() {
                            self.unpruned.insert(k);
                        }
                    }
                }
                out.observe(metrics::DEPENDENCY_ENTRIES, all.len() as u64);
                for &(k, v) in &writes {
                    let seq = seqs[seqs.binary_search_by_key(&k, |e| e.0).expect("assigned")].1;
                    self.latest.insert(k, HVersion { seq, value: Some(v), deps: all.clone(), written_ns: now });
                    self.log.push(k);
                }
                out.trace("DbWrite", || format!("{{\"keys\":{},\"deps\":{}}}", seqs.len(), all.len()));
                if ack {
                    self.send_out(from, Msg::WriteAck { seqs }, out);
                }
            }
            Msg::Pull => {
                // The newest version of every subscribed key written since this cache's last pull.
                let from_pos = self.pulled.get(&from).copied().unwrap_or(self.log_base);
                let keys: BTreeSet<Key> = self.log[from_pos - self.log_base..].iter().copied().collect();
                let subscribed = |k: &Key| self.subscribe_all || self.subscribers.get(k).is_some_and(|s| s.contains(&from));
                let keys: Vec<Key> = keys.into_iter().filter(subscribed).collect();
                let versions: Vec<(Key, HVersion)> = keys.into_iter().map(|k| (k, self.serve(k, from))).collect();
                self.pulled.insert(from, self.log_base + self.log.len());
                let oldest = self.pulled.values().copied().min().unwrap_or(self.log_base);
                if self.pulled.len() == self.cache_count && oldest > self.log_base {
                    self.log.drain(..oldest - self.log_base);
                    self.log_base = oldest;
                }
                self.send_out(from, Msg::Notify { versions }, out);
            }
            Msg::GcReport { epoch, changes } => {
                let (_, gc) = self.gc.as_mut().expect("caches report only with garbage collection on");
                gc.report(from.index(), epoch, &changes);
            }
            other => unreachable!("{} is not for the database", other.kind()),
        }
    }

    /// A garbage-collection round: the new floor, and to each cache what it lacks of it.
    fn gc_round(&mut self, out: &mut Out) {
        let Some((period, gc)) = &mut self.gc else { unreachable!("a GC round without GC") };
        let period = *period;
        let latest = &self.latest;
        let to = gc.round(|k| latest.get(&k).map_or(0, |v| v.seq));
        // Prune every stored list that still has entries against the new floor: each list is
        // pruned a few rounds after its write, until it is empty.
        let latest = &mut self.latest;
        self.unpruned.retain(|k| {
            let stored = latest.get_mut(k).expect("an unpruned key is stored");
            if let Some(deps) = gc.prune(&stored.deps) {
                stored.deps = deps;
            }
            !stored.deps.is_empty()
        });
        let deltas: Vec<(Epoch, Vec<(Key, Seq)>)> = (0..self.cache_count).map(|c| gc.delta_for(c)).collect();
        for (c, (from, changes)) in deltas.into_iter().enumerate() {
            self.send_out(NodeId::fixed(c), Msg::GcFloor { from, to, changes }, out);
        }
        out.set_timer(Timer::GcRound, period);
    }

    pub(super) fn on_timer(&mut self, timer: Timer, out: &mut Out) {
        match timer {
            Timer::Release(seq) => {
                let (to, msg) = self.held.remove(&seq).expect("released once");
                out.send(to, msg);
            }
            Timer::GcRound => self.gc_round(out),
            Timer::Refresh | Timer::Start | Timer::GcReport => unreachable!("{timer:?} is not for the database"),
        }
    }
}
