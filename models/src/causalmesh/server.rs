//! The CausalMesh cache server: Figs. 4, 7 and 11.

use super::cache::DualCache;
use super::msg::{Msg, Writes};
use super::vc::{Deps, Vc, Version, deps_on, merge_dep};
use crate::metrics;
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The propagation chain variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Chain {
    /// The paper's chain (§5.2): head → … → tail, where the tail integrates.
    #[default]
    OneRound,
    /// The authors' later variant: a first round adds the write to every I-cache, a second
    /// round from the head again ends with the tail integrating it.
    TwoRound,
}

/// What the server does, including the mutants that live in the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ServerRules {
    pub chain: Chain,
    pub disseminate: bool,
    pub sync_flush: bool,
    pub tcc: bool,
    /// CausalMesh-TCC: the oldest or the newest version that forms a cut (`params.ring_read`).
    pub ring_read: super::RingRead,
    /// Mutant `reveal_at_head`.
    pub reveal_at_head: bool,
    /// Mutant `read_without_integration`.
    pub read_without_integration: bool,
    /// Mutant `tcc_ignores_cut`.
    pub tcc_ignores_cut: bool,
    /// Mutant `join_checks_direct_deps`.
    pub join_checks_direct_deps: bool,
    /// Mutant `dissemination_skips_head`.
    pub dissemination_skips_head: bool,
}

/// How a write whose dependencies this server no longer knows counts when deciding whether
/// it lies in another write's causal past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unknown {
    /// As in the past: the protocol's choice (an extra abort, never a fracture).
    InPast,
    /// As not in the past: the invariant's (it reports only what it can prove).
    NotInPast,
}

/// Why a join's read set is not a cut: `key` was read older than `needed`, a write of it in
/// the causal past of another write read.
struct Fracture {
    key: Key,
    needed: Vc,
    why: String,
}

/// A client write waiting for the database to acknowledge its flush.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PendingFlush {
    client: NodeId,
    reply: Msg,
    chain: Option<Msg>,
}

/// A client request (read, read transaction, TCC read) waiting for the values of cold keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Waiting {
    client: NodeId,
    request: Msg,
    keys: BTreeSet<Key>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Server {
    id: usize,
    ring: Vec<NodeId>,
    db: NodeId,
    rules: ServerRules,
    /// The global vector clock (§5.2).
    gvc: Vc,
    cache: DualCache,
    pending_flushes: BTreeMap<u64, PendingFlush>,
    /// Requests waiting for misses, and the keys being fetched.
    waiting: Vec<Waiting>,
    fetching: BTreeSet<Key>,
    next_id: u64,
    /// Ghost state for the join invariant: the read set of a validation this input accepted.
    accepted_join: Option<Deps>,
}

impl Server {
    pub fn new(id: usize, ring: Vec<NodeId>, db: NodeId, rules: ServerRules, cache: DualCache) -> Server {
        let gvc = Vc::zero(ring.len());
        Server {
            id,
            ring,
            db,
            rules,
            gvc,
            cache,
            pending_flushes: BTreeMap::new(),
            waiting: Vec::new(),
            fetching: BTreeSet::new(),
            next_id: 0,
            accepted_join: None,
        }
    }

    pub fn cache(&self) -> &DualCache {
        &self.cache
    }

    fn n(&self) -> usize {
        self.ring.len()
    }

    fn successor(&self) -> NodeId {
        self.ring[(self.id + 1) % self.n()]
    }

    /// The tail of the chain headed at `head`: the server just before it in the ring.
    fn is_tail_of(&self, head: usize) -> bool {
        (head + self.n() - 1) % self.n() == self.id
    }

    pub fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, ()>) {
        self.handle(now, from, msg, out);
        // Evict once the input's replies are computed, and not while misses are outstanding:
        // evicting what a waiting request just got back would make it wait forever.
        if !self.waiting.is_empty() {
            return;
        }
        let evicted = self.cache.evict_over_capacity();
        if !evicted.is_empty() {
            out.trace("Evict", || format!("{{\"keys\":{evicted:?}}}"));
        }
    }

    fn handle(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, ()>) {
        self.accepted_join = None;
        match msg {
            Msg::ClientRead { .. } | Msg::ClientReadTxn { .. } | Msg::ClientReadTcc { .. } => self.serve_read(now, from, msg, out),
            Msg::ClientWrite { key, value, deps, local } => self.client_write(now, from, vec![(key, value)], deps, local, out),
            Msg::ClientCommit { writes, deps } => self.client_write(now, from, writes, deps, Vec::new(), out),
            Msg::ClientValidateTcc { read_set } => self.validate_join(from, read_set, out),
            Msg::ServerWrite { head, round, writes, carried, written_at_ns } => {
                self.server_write(now, head as usize, round, writes, carried, written_at_ns, out)
            }
            Msg::Integrate { writes } => {
                // The disseminated versions are in our I-cache (the chain passed us).
                let deps: Deps = writes.into_iter().collect();
                self.reveal(now, Writes::new(), deps, None, out);
            }
            Msg::DbWriteAck { id } => {
                let p = self.pending_flushes.remove(&id).expect("an ack for a pending flush");
                out.send(p.client, p.reply);
                if let Some(chain) = p.chain {
                    out.send(self.successor(), chain);
                }
            }
            Msg::DbReadReply { key, version } => self.miss_filled(now, key, version, out),
            other => unreachable!("a server does not handle {other:?}"),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Write path (§5.2, Fig. 7)

    /// ClientWrite (one write) and, for CausalMesh-TCC, ClientCommit (a batch that must become
    /// visible atomically).
    fn client_write(
        &mut self,
        now: Time,
        client: NodeId,
        writes: Vec<(Key, u64)>,
        mut deps: Deps,
        local: Writes,
        out: &mut Outbox<Msg, ()>,
    ) {
        // Fig. 7 lines 9–12: carried local writes enter the I-cache unless already seen, and
        // the new write depends on them (session order).
        for (k, v) in &local {
            self.cache.add_inconsistent(*k, v.clone());
            merge_dep(&mut deps, *k, &v.vc);
        }
        // The write's VC dominates everything it depends on, so conflict resolution never
        // orders it before a version it causally follows (as in the authors' Dafny model;
        // Fig. 7 line 8 shows only the increment). The GVC itself keeps the paper's meaning:
        // the head's own count plus what it has integrated.
        self.gvc.set(self.id, self.gvc.get(self.id) + 1);
        let mut vc = self.gvc;
        for (_, d) in &deps {
            vc.merge(d);
        }
        vc.set(self.id, self.gvc.get(self.id));
        // A batch integrates atomically: each write depends on the others.
        let mut batch_deps = deps.clone();
        for (k, _) in &writes {
            merge_dep(&mut batch_deps, *k, &vc);
        }
        let versions: Writes = writes
            .iter()
            .map(|(k, value)| {
                let mut d = batch_deps.clone();
                d.remove(&(*k, vc));
                (*k, Version::write(*value, vc, d))
            })
            .collect();
        for (k, v) in &versions {
            self.cache.add_inconsistent(*k, v.clone());
        }
        out.trace("ClientWrite", || {
            let keys: Vec<String> = versions.iter().map(|(k, _)| k.to_string()).collect();
            format!("{{\"keys\":[{}],\"vc\":\"{vc}\",\"carried\":{}}}", keys.join(","), local.len())
        });
        if self.rules.reveal_at_head {
            self.reveal(now, versions.clone(), Deps::new(), None, out);
        }
        let reply = if self.rules.tcc {
            Msg::CommitReply { vc }
        } else {
            Msg::WriteReply { key: versions[0].0, vc, deps: versions[0].1.deps.clone() }
        };
        let carried = local;
        let chain = if self.n() == 1 {
            self.reveal(now, versions.clone(), Deps::new(), Some((now, self.id)), out);
            None
        } else {
            Some(Msg::ServerWrite { head: self.id as u32, round: 1, writes: versions.clone(), carried, written_at_ns: now })
        };
        out.observe(metrics::ICACHE_BYTES, self.cache.i_cache_bytes());
        out.observe(metrics::ICACHE_BYTES_AS_AUTHORS_COUNT, self.cache.i_cache_bytes_as_authors_count());
        if self.rules.sync_flush {
            let id = self.next_id;
            self.next_id += 1;
            self.pending_flushes.insert(id, PendingFlush { client, reply, chain });
            out.send(self.db, Msg::DbWrite { id, writes: versions, ack: true });
        } else {
            out.send(self.db, Msg::DbWrite { id: 0, writes: versions, ack: false });
            out.send(client, reply);
            if let Some(chain) = chain {
                out.send(self.successor(), chain);
            }
        }
    }

    /// ServerWrite: intermediate servers keep the write in their I-cache and forward it; the
    /// tail integrates it (round 1 of the one-round chain, round 2 of the two-round chain).
    #[allow(clippy::too_many_arguments)]
    fn server_write(
        &mut self,
        now: Time,
        head: usize,
        round: u8,
        writes: Writes,
        carried: Writes,
        written_at_ns: Time,
        out: &mut Outbox<Msg, ()>,
    ) {
        for (k, v) in carried.iter().chain(&writes) {
            self.cache.add_inconsistent(*k, v.clone());
        }
        let tail = self.is_tail_of(head);
        let last_round = match self.rules.chain {
            Chain::OneRound => 1,
            Chain::TwoRound => 2,
        };
        if tail && round == last_round {
            out.trace("TailIntegrate", || format!("{{\"head\":\"S{head}\",\"round\":{round},\"writes\":{}}}", writes.len()));
            self.reveal(now, writes, Deps::new(), Some((written_at_ns, head)), out);
            return;
        }
        let round = if tail { round + 1 } else { round };
        out.trace("Forward", || format!("{{\"head\":\"S{head}\",\"round\":{round}}}"));
        out.send(self.successor(), Msg::ServerWrite { head: head as u32, round, writes, carried, written_at_ns });
    }

    /// Makes `writes` (in our I-cache) and the versions `deps` names visible here, with
    /// everything they depend on (Fig. 7 line 24). `tail_reveal` (when the writes were written,
    /// and their head) marks a tail's reveal: it is observed for the visibility metric and
    /// disseminated if configured.
    fn reveal(&mut self, now: Time, writes: Writes, mut deps: Deps, tail_reveal: Option<(Time, usize)>, out: &mut Outbox<Msg, ()>) {
        for (k, v) in &writes {
            self.gvc.merge(&v.vc);
            self.cache.add_inconsistent(*k, v.clone());
            merge_dep(&mut deps, *k, &v.vc);
        }
        self.cache.integrate(&deps);
        if let Some((at, head)) = tail_reveal {
            out.observe(metrics::VISIBILITY_NS, now - at);
            if self.rules.disseminate {
                let versions: Vec<(Key, Vc)> = writes.iter().map(|(k, v)| (*k, v.vc)).collect();
                for (i, &s) in self.ring.iter().enumerate() {
                    if i != self.id && !(self.rules.dissemination_skips_head && i == head) {
                        out.send(s, Msg::Integrate { writes: versions.clone() });
                    }
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Read path (§5.3, §5.4, Fig. 11)

    /// ClientRead, ClientReadTxn and ClientReadTcc: integrate the request's dependencies, then
    /// answer from the C-cache — after fetching from the database what eviction removed.
    fn serve_read(&mut self, now: Time, client: NodeId, request: Msg, out: &mut Outbox<Msg, ()>) {
        let (keys, deps): (Vec<Key>, Deps) = match &request {
            Msg::ClientRead { key, deps } => (vec![*key], deps.clone()),
            Msg::ClientReadTxn { keys, deps } => (keys.clone(), deps.clone()),
            // A floor names a write in the causal past of a version some server showed, so it
            // is on every server already and may be integrated here like a dependency.
            Msg::ClientReadTcc { key, read_set, floor } => {
                let mut deps = read_set.clone();
                if let Some(f) = floor {
                    merge_dep(&mut deps, *key, f);
                }
                (vec![*key], deps)
            }
            _ => unreachable!(),
        };
        let r = if self.rules.read_without_integration { Default::default() } else { self.cache.integrate(&deps) };
        let cold: BTreeSet<Key> = keys.iter().copied().filter(|k| !self.cache.is_cached(*k)).collect();
        if !cold.is_empty() {
            self.wait_for(client, request, cold, out);
            return;
        }
        if !r.moved.is_empty() {
            out.trace("IntegrateDeps", || {
                let moved: Vec<String> = r.moved.iter().map(|(k, vc)| format!("\"{k}@{vc}\"")).collect();
                format!("{{\"moved\":[{}]}}", moved.join(","))
            });
        }
        let _ = now;
        for k in &keys {
            self.cache.touch(*k);
        }
        let reply = match request {
            Msg::ClientRead { key, .. } => Msg::ReadReply { key, version: self.cache.visible_value(key) },
            Msg::ClientReadTxn { keys, .. } => {
                Msg::ReadTxnReply { versions: keys.into_iter().map(|k| (k, self.cache.visible_value(k))).collect() }
            }
            Msg::ClientReadTcc { key, read_set, floor } => {
                // The reader needs the causal past of the write it read, not the union a merged
                // entry keeps (which grows with every write merged into it).
                match self.tcc_choose(key, &read_set, floor) {
                    Ok(v) => {
                        let deps = self.cache.write_deps(key, &v.winner).unwrap_or(&v.deps).clone();
                        let v = Version { value: v.value, vc: v.vc, winner: v.winner, deps };
                        Msg::ReadTccReply { key, version: Some(v), floor: None }
                    }
                    Err(floor) => Msg::ReadTccReply { key, version: None, floor },
                }
            }
            _ => unreachable!(),
        };
        out.send(client, reply);
    }

    /// Fig. 11 lines 17–19: the oldest visible version of `key` that forms a cut with the
    /// read set; `Err` makes the client abort the workflow, with a floor for a read key that
    /// was too old when one is known. A retried workflow's `floor` (a version of `key` an
    /// earlier attempt found it needed) is integrated with the read set and honoured whenever
    /// a version at or above it is cached: an earlier read too old for it aborts the attempt
    /// with a floor for that read, so floors rise until the reads form a cut.
    ///
    /// Versions are compared by their *writes* in the arbitration order (the lexicographic
    /// order of write VCs, which extends causality; §3.2): a ring entry's merged VC can cover a
    /// write it never merged, so it says nothing about what a read saw. Two tests, both ways
    /// round. (1) Fig. 11's: the writes `v`'s write depends on directly (its writer's reads
    /// and, for a batch, the batch's other writes) are not newer than what the transaction
    /// read of their keys, and the read writes' own deps do not need a newer `key` than `v`.
    /// (2) Further back: a write's VC dominates its whole causal past, and every write in the
    /// past of `v` or of a read was integrated here, so it is among the writes of its key this
    /// server knows (its ring's winners, its I-cache, and per key the last `RECENTLY_MERGED_MAX`
    /// writes that left its I-cache, merged or dropped as covered): none of a read key may lie in `v`'s past yet be newer than the one
    /// read, and none of `key` in a read's past may be newer than `v`. VC dominance only
    /// shortlists candidates (server-ordered VCs put every earlier write at `v`'s head below
    /// `v`); a walk over the writes' own dependencies decides, and a write whose dependencies
    /// are forgotten counts as in the past (an extra abort, never a fracture). Fig. 11 alone
    /// misses fractures one write further away.
    fn tcc_choose(&self, key: Key, read_set: &Deps, floor: Option<Vc>) -> Result<&Version, Option<(Key, Vc)>> {
        let versions = self.cache.visible_versions(key);
        if let Some(floor) = floor {
            let above: Vec<&Version> = versions.iter().filter(|v| v.winner >= floor).copied().collect();
            if !above.is_empty() {
                return self.tcc_choose_among(key, read_set, above);
            }
        }
        self.tcc_choose_among(key, read_set, versions)
    }

    /// The oldest (or, with `params.ring_read: newest`, the newest) of `versions` that forms a
    /// cut with the read set; when none does, the read key whose version read is too old for
    /// the newest of them (a floor for a retry).
    fn tcc_choose_among<'a>(&self, key: Key, read_set: &Deps, versions: Vec<&'a Version>) -> Result<&'a Version, Option<(Key, Vc)>> {
        if self.rules.tcc_ignores_cut {
            return versions.last().copied().ok_or(None);
        }
        let newer = |a: &Vc, b: &Vc| a.cmp(b) == Ordering::Greater;
        let read: BTreeMap<Key, Vc> = read_set.iter().copied().collect();
        let mut needs: Vec<Vc> = Vec::new();
        for (k, winner) in read_set {
            needs.extend(self.cache.deps_of(*k, winner).into_iter().flat_map(|deps| deps_on(deps, key)).copied());
        }
        // Writes of `key` newer than the oldest candidate: all `newer_in_past` can return.
        let oldest_winner = versions.iter().map(|v| v.winner).min().unwrap_or_default();
        let known_here = self.cache.known_writes_newer_than(key, &oldest_winner);
        let known_read: Vec<(Key, Vc, Vec<Vc>)> =
            read_set.iter().map(|(k, r)| (*k, *r, self.cache.known_writes_newer_than(*k, r))).collect();
        let too_old_read = |w: &Vc| -> Option<(Key, Vc)> {
            // The first dependency (in key order) newer than the read of its key.
            let direct = self
                .cache
                .deps_of(key, w)
                .and_then(|deps| read.iter().find_map(|(k, r)| deps_on(deps, *k).find(|d| newer(d, r)).map(|d| (*k, *d))));
            direct.or_else(|| {
                known_read.iter().find_map(|(k, r, known)| self.newer_in_past(*k, r, known, key, w, Unknown::InPast).map(|u| (*k, u)))
            })
        };
        let forms_cut = |v: &&&Version| {
            let w = &v.winner;
            needs.iter().all(|n| !newer(n, w))
                && too_old_read(w).is_none()
                && known_read.iter().all(|(k, r, _)| self.newer_in_past(key, w, &known_here, *k, r, Unknown::InPast).is_none())
        };
        let chosen = match self.rules.ring_read {
            super::RingRead::Oldest => versions.iter().find(forms_cut),
            super::RingRead::Newest => versions.iter().rev().find(forms_cut),
        };
        match chosen {
            Some(v) => Ok(v),
            None => Err(versions.last().and_then(|v| too_old_read(&v.winner))),
        }
    }

    /// A write of `b_key` newer (in the arbitration order) than `b_read` that lies in the
    /// causal past of write `a` of `a_key`: reading both `a` and `b_read` is then fractured.
    /// `known_b`: the writes of `b_key` this server knows that are newer than some floor,
    /// sorted (at least those newer than `b_read`). A write's VC dominates its past, so only
    /// writes below `a` are walked from; these come before any write above `a` in the
    /// arbitration order, so the search stops there.
    fn newer_in_past(&self, b_key: Key, b_read: &Vc, known_b: &[Vc], a_key: Key, a: &Vc, unknown: Unknown) -> Option<Vc> {
        let from = known_b.partition_point(|u| u <= b_read);
        let to = from + known_b[from..].partition_point(|u| u <= a);
        known_b[from..to].iter().copied().find(|u| {
            u.le(a)
                && u.cmp(b_read) == Ordering::Greater
                && match self.cache.in_causal_past(b_key, u, a_key, a) {
                    Some(in_past) => in_past,
                    None => unknown == Unknown::InPast,
                }
        })
    }

    /// CausalMesh-TCC's validation phase at a join (§7: "checks if the union of the read sets
    /// from these functions forms a cut"). Each branch's reads formed a cut on their own; the
    /// union must too, under the whole causal past of each write read, not only its direct
    /// dependencies: a branch that read x=2 whose past holds c=1 through x=1 cannot join one
    /// that read the initial c. The read writes are integrated first, so their pasts are known
    /// here; a write whose dependencies this server has forgotten counts as in the past (an
    /// extra abort, never a fracture).
    fn validate_join(&mut self, client: NodeId, read_set: Deps, out: &mut Outbox<Msg, ()>) {
        out.trace("ValidateJoin", || format!("{{\"keys\":{}}}", read_set.len()));
        if !self.rules.read_without_integration {
            self.cache.integrate(&read_set);
        }
        let fracture = self.join_fracture(&read_set, Unknown::InPast);
        match &fracture {
            Some(f) => out.trace("JoinFractured", || format!("{{\"why\":{:?}}}", f.why)),
            None => self.accepted_join = Some(read_set),
        }
        out.send(client, Msg::ValidateReply { fracture: fracture.map(|f| (f.key, f.needed)) });
    }

    /// Why `read_set` is not a cut, or `None`. The direct test is Fig. 11's (a write read
    /// depends on a newer version of another key read); the transitive one walks the pasts,
    /// unless the `join_checks_direct_deps` mutant is on.
    fn join_fracture(&self, read_set: &Deps, unknown: Unknown) -> Option<Fracture> {
        let read: BTreeMap<Key, Vc> = read_set.iter().copied().collect();
        let newer = |a: &Vc, b: &Vc| a.cmp(b) == Ordering::Greater;
        for (a_key, a) in &read {
            let deps = self.cache.write_deps(*a_key, a).or_else(|| self.cache.deps_of(*a_key, a));
            for &(d_key, d) in deps.into_iter().flatten() {
                if let Some(r) = read.get(&d_key).filter(|r| newer(&d, r)) {
                    let why = format!("key {a_key}@{a} depends on key {d_key}@{d}, newer than {d_key}@{r} read");
                    return Some(Fracture { key: d_key, needed: d, why });
                }
            }
        }
        if self.rules.join_checks_direct_deps && unknown == Unknown::InPast {
            return None;
        }
        for (b_key, b_read) in &read {
            let known_b = self.cache.known_writes_newer_than(*b_key, b_read);
            for (a_key, a) in read.iter().filter(|(k, _)| *k != b_key) {
                if let Some(u) = self.newer_in_past(*b_key, b_read, &known_b, *a_key, a, unknown) {
                    let why = format!("key {a_key}@{a} causally follows key {b_key}@{u}, newer than {b_key}@{b_read} read");
                    return Some(Fracture { key: *b_key, needed: u, why });
                }
            }
        }
        None
    }

    // -----------------------------------------------------------------------------------------
    // Misses (after eviction)
    //
    // Eviction drops values, not entries, so the C-cache stays a cut. A read of a cold key
    // fetches from the database the value of exactly the version the entry shows (it was
    // visible here, so showing it again is safe), and is answered once it is back. (The paper
    // sends miss results through the I-cache and the chain "as if written by a client"; with
    // entries kept that is not needed, and a version fetched straight from the database could
    // otherwise be shown before it reached every server.)

    fn wait_for(&mut self, client: NodeId, request: Msg, keys: BTreeSet<Key>, out: &mut Outbox<Msg, ()>) {
        out.trace("Miss", || format!("{{\"keys\":{keys:?}}}"));
        for &k in &keys {
            if self.fetching.insert(k) {
                let vc = self.cache.cold_winner(k).expect("a cold key has an entry");
                out.send(self.db, Msg::DbRead { key: k, vc });
            }
        }
        self.waiting.push(Waiting { client, request, keys });
    }

    fn miss_filled(&mut self, now: Time, key: Key, version: Version, out: &mut Outbox<Msg, ()>) {
        self.fetching.remove(&key);
        self.cache.warm(key, &version);
        let mut ready = Vec::new();
        for mut w in std::mem::take(&mut self.waiting) {
            w.keys.remove(&key);
            if w.keys.is_empty() { ready.push(w) } else { self.waiting.push(w) }
        }
        for w in ready {
            self.serve_read(now, w.client, w.request, out);
        }
    }

    /// Renames every value the server holds, cached or in waiting requests and replies (see
    /// `Msg::map_values`).
    pub fn map_values(&mut self, f: &impl Fn(Value) -> Value) {
        self.cache.map_values(f);
        for p in self.pending_flushes.values_mut() {
            p.reply.map_values(f);
            p.chain.iter_mut().for_each(|m| m.map_values(f));
        }
        self.waiting.iter_mut().for_each(|w| w.request.map_values(f));
    }

    /// The C-cache is a causal cut; a join this input accepted read a cut (writes whose
    /// dependencies are forgotten are given the benefit of the doubt here).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.cache.check_causal_cut()?;
        self.check_accepted_join()
    }

    /// CausalMesh-TCC: the join this input accepted, if any, read a cut.
    pub fn check_accepted_join(&self) -> Result<(), String> {
        match self.accepted_join.as_ref().and_then(|r| self.join_fracture(r, Unknown::NotInPast)) {
            Some(f) => Err(format!("a join was accepted whose read sets do not form a cut: {}", f.why)),
            None => Ok(()),
        }
    }

    /// A crash loses the caches and pending requests; the database keeps every flushed write.
    /// The head's own write count is durable (it names versions, which must stay unique).
    pub fn restart(&mut self) {
        self.cache.clear();
        let own = self.gvc.get(self.id);
        self.gvc = Vc::zero(self.ring.len());
        self.gvc.set(self.id, own);
        self.pending_flushes.clear();
        self.waiting.clear();
        self.fetching.clear();
    }
}
