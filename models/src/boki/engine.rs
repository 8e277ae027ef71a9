//! A function node's LogBook engine (§4.2–§4.4, digest §2.3): it owns the node's shard of the
//! physical log (a local id counter and the replication of new records), may hold an index
//! replica, keeps an LRU record cache, and subscribes to the metalog.
//!
//! - **Append** (§2.4): give the record the next local id, send it to the shard's storage
//!   replicas, and complete the call when a metalog entry orders it, with the seqnum every
//!   subscriber derives from that entry and the position after it.
//! - **Read** (§2.6): ask the local index if the node has one, else an index replica on
//!   another node (round robin); with `remote_read_percent`, that share of reads goes to
//!   another replica even from a node with an index (Table 8). The index answers only once its version reaches the
//!   caller's position (Fig. 5), then the record comes from the index node's cache or from a
//!   storage replica of its shard (round robin), and lands in this node's cache.
//! - **New term** (§4.5): apply the old term's final entries it missed, fail the appends they
//!   do not cover (the storage nodes discard those records), and number new records from 0
//!   under the new term's configuration; records of older terms are read from their term's
//!   replicas, avoiding those the controller found failed.

use super::Timer;
use super::ids::{Entry, Trim, seqnum, term_of};
use super::index::Index;
use super::msg::{Answer, Config, IndexRecord, Msg, NewRecord, Query};
use super::record::{Aux, Body};
use super::subscription::Subscription;
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Engine {
    pub(super) id: NodeId,
    pub(super) shard: u32,
    pub(super) shard_count: usize,
    pub(super) term: u64,
    /// Seqnums carry the term (false only under the mutant `new_term_reuses_seqnums`).
    pub(super) term_bits: bool,
    /// Storage replicas of every shard (node ids), for appends and record reads.
    pub(super) replicas: Vec<Vec<NodeId>>,
    /// The replicas of earlier terms, and the nodes the last reconfiguration found failed.
    pub(super) past_replicas: BTreeMap<u64, Vec<Vec<NodeId>>>,
    pub(super) failed: BTreeSet<NodeId>,
    pub(super) index_engines: Vec<NodeId>,
    pub(super) index: Option<Index>,
    /// Of its functions' reads, the percentage this node sends to another index replica even
    /// when it holds one (Table 8).
    pub(super) remote_read_percent: u64,
    /// Mutant `read_behind_position`: an index answers without waiting for the caller's position.
    pub(super) read_behind_position: bool,
    pub(super) next_local_id: u64,
    /// Appends waiting to be ordered: local id → (function, data, library contents).
    pub(super) pending_appends: BTreeMap<u64, (NodeId, Value, Body)>,
    /// The current term's primary sequencer (trim commands go to it).
    pub(super) primary: NodeId,
    /// Trims waiting to be in the metalog: id → function.
    pub(super) pending_trims: BTreeMap<u64, NodeId>,
    pub(super) next_trim: u64,
    pub(super) metalog: Subscription,
    /// Reads waiting for this node's index to reach their position.
    pub(super) waiting: Vec<Query>,
    /// The record cache: seqnum → the record and its auxiliary data, and the use order for LRU
    /// eviction.
    pub(super) cache: BTreeMap<u64, Cached>,
    pub(super) cache_order: BTreeSet<(u64, u64)>,
    pub(super) cache_records: usize,
    pub(super) uses: u64,
    pub(super) round_robin: u64,
    /// Reads of this node's functions not answered yet, by number.
    pub(super) next_read: u64,
    pub(super) reads: BTreeMap<u64, Query>,
    /// Reads this node's index answered below the caller's position (never, unless mutated).
    pub(super) answered_behind: u64,
    /// Messages of a later term, held until this node reaches it.
    pub(super) held: Vec<(NodeId, Msg)>,
    /// `params.aux_data_on_storage`: `logSetAuxData` also backs the value up on the record's
    /// storage nodes.
    pub(super) aux_on_storage: bool,
}

/// A cached record: its data and library contents, the auxiliary data set on this node, and
/// when it was last used.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cached {
    data: Value,
    body: Body,
    aux: Option<Aux>,
    used: u64,
}

impl Engine {
    pub(super) fn on_append(&mut self, client: NodeId, book: Key, tags: Vec<u64>, data: Value, body: Body, out: &mut Outbox<Msg, Timer>) {
        let local_id = self.next_local_id;
        self.next_local_id += 1;
        self.pending_appends.insert(local_id, (client, data, body.clone()));
        out.trace("Append", || format!("{{\"shard\":{},\"local_id\":{local_id}}}", self.shard));
        for &s in &self.replicas[self.shard as usize] {
            let record = NewRecord { term: self.term, shard: self.shard, local_id, book, tags: tags.clone(), data, body: body.clone() };
            out.send(s, Msg::Replicate(record));
        }
    }

    /// `logSetAuxData` (§3, digest §2.8): kept with the record in this node's cache only (a
    /// record not cached here keeps none); never replicated, lost on eviction. With
    /// `params.aux_data_on_storage` (§7.5, Table 9's second row) it is also sent to the
    /// record's storage nodes, which keep it beside the record and return it with reads.
    pub(super) fn on_set_aux(&mut self, seqnum: u64, aux: Aux, out: &mut Outbox<Msg, Timer>) {
        self.cache_aux(seqnum, aux);
        if self.aux_on_storage {
            // The record's shard is known to an index replica; an engine without one sends to
            // every storage node of the plan (those without the record ignore it).
            let targets = match self.index.as_ref().map(|i| i.shard_of(seqnum) as usize) {
                Some(shard) => self.holders(seqnum, shard),
                None => self.replicas.iter().flatten().copied().collect::<BTreeSet<_>>().into_iter().collect(),
            };
            for t in targets {
                out.send(t, Msg::StoreAux { seqnum, aux });
            }
        }
    }

    /// Keeps auxiliary data with the record in this node's cache, if it is cached here.
    fn cache_aux(&mut self, seqnum: u64, aux: Aux) {
        if let Some(c) = self.cache.get_mut(&seqnum) {
            c.aux = Some(aux);
        }
    }

    /// `logTrim`: a command in the metalog (§4.4), sent to the primary sequencer; it completes
    /// when this engine applies the entry that orders it.
    pub(super) fn on_trim(&mut self, client: NodeId, book: Key, until: u64, out: &mut Outbox<Msg, Timer>) {
        let id = self.next_trim;
        self.next_trim += 1;
        self.pending_trims.insert(id, client);
        out.send(self.primary, Msg::TrimCommand { term: self.term, trim: Trim { shard: self.shard, id, book, until } });
    }

    pub(super) fn on_metalog(&mut self, entry: Entry, out: &mut Outbox<Msg, Timer>) {
        self.metalog.receive(entry);
        while let Some(entry) = self.metalog.next_due(self.shard_count, "engine") {
            self.apply(&entry, out);
        }
    }

    fn apply(&mut self, entry: &Entry, out: &mut Outbox<Msg, Timer>) {
        let pos = entry.pos_after();
        for (shard, local_id, position) in entry.delta() {
            if shard != self.shard {
                continue;
            }
            if let Some((client, data, body)) = self.pending_appends.remove(&local_id) {
                let s = seqnum(if self.term_bits { self.term } else { 0 }, 0, position);
                self.cache_put(s, data, body);
                out.send(client, Msg::AppendDone { seqnum: s, pos });
            }
        }
        for t in &entry.trims {
            if t.shard == self.shard
                && let Some(client) = self.pending_trims.remove(&t.id)
            {
                out.send(client, Msg::TrimDone { pos });
            }
        }
        if let Some(index) = &mut self.index {
            index.apply_entry(entry);
        }
        self.release(out);
    }

    /// The next term (see the module essay).
    pub(super) fn on_new_term(&mut self, config: &Config, out: &mut Outbox<Msg, Timer>) {
        if config.term <= self.term {
            return;
        }
        if config.term == self.term + 1 {
            for entry in self.metalog.missed(self.term, &config.sealed) {
                self.on_metalog(entry.clone(), out);
            }
        }
        for (local_id, (client, _, _)) in std::mem::take(&mut self.pending_appends) {
            out.trace("DiscardAppend", || format!("{{\"shard\":{},\"local_id\":{local_id}}}", self.shard));
            out.send(client, Msg::AppendFailed { term: self.term });
        }
        for (_, client) in std::mem::take(&mut self.pending_trims) {
            out.send(client, Msg::TrimFailed { term: self.term });
        }
        self.primary = config.primary;
        let old = std::mem::replace(&mut self.replicas, config.replicas.clone());
        self.past_replicas.insert(self.term, old);
        self.failed = config.failed.iter().copied().collect();
        (self.term, self.next_local_id) = (config.term, 0);
        self.metalog.begin_term();
        if let Some(index) = &mut self.index {
            index.begin_term(config.term);
        }
        self.release(out);
        // A failed storage node may have taken record reads with it: send every unanswered
        // read again (the first answer wins).
        let unanswered: Vec<Query> = self.reads.values().cloned().collect();
        for q in unanswered {
            self.send_read(q, out);
        }
    }

    /// The replicas that hold seqnum `s`'s record: its term's replicas of its shard, without
    /// the failed ones, or all of them when every one was found failed: a node whose session
    /// expired may only have been slow (its records are on disk even if it crashed), and it is
    /// the only one that can answer.
    fn holders(&self, s: u64, shard: usize) -> Vec<NodeId> {
        let plan = if term_of(s) == self.term { &self.replicas } else { self.past_replicas.get(&term_of(s)).unwrap_or(&self.replicas) };
        let live: Vec<NodeId> = plan[shard].iter().copied().filter(|n| !self.failed.contains(n)).collect();
        if live.is_empty() { plan[shard].clone() } else { live }
    }

    pub(super) fn on_index_data(&mut self, term: u64, records: Vec<IndexRecord>, out: &mut Outbox<Msg, Timer>) {
        if let Some(index) = &mut self.index {
            index.receive(term, records);
            self.release(out);
        }
    }

    /// A function's read: to the local index, or to a remote one.
    pub(super) fn on_read(&mut self, mut query: Query, out: &mut Outbox<Msg, Timer>) {
        query.id = self.next_read;
        self.next_read += 1;
        self.reads.insert(query.id, query.clone());
        self.send_read(query, out);
    }

    fn send_read(&mut self, query: Query, out: &mut Outbox<Msg, Timer>) {
        let id = self.id;
        let others = || self.index_engines.iter().copied().filter(move |&n| n != id);
        let count = others().count() as u64;
        if self.index.is_some() && (count == 0 || !self.sent_away(query.id)) {
            self.on_query(query, out);
        } else {
            let target = others().nth((self.round_robin % count) as usize).expect("another index replica");
            self.round_robin += 1;
            out.send(target, Msg::IndexQuery(query));
        }
    }

    /// Whether read `n` is one of the `remote_read_percent` in a hundred sent to another index
    /// replica: spread evenly over the reads (nodes draw no randomness), and the same for a
    /// read sent again.
    fn sent_away(&self, n: u64) -> bool {
        let p = self.remote_read_percent;
        (n + 1) * p / 100 > n * p / 100
    }

    /// A read at this node's index: answered once the index has reached the caller's position.
    pub(super) fn on_query(&mut self, query: Query, out: &mut Outbox<Msg, Timer>) {
        let version = self.index.as_ref().expect("queries go to index replicas").version();
        if version < query.pos && !self.read_behind_position {
            out.trace("WaitForIndex", || format!("{{\"version\":{},\"needed\":{}}}", version.entries, query.pos.entries));
            self.waiting.push(query);
            return;
        }
        self.answer(query, out);
    }

    fn release(&mut self, out: &mut Outbox<Msg, Timer>) {
        let Some(index) = &self.index else { return };
        let version = index.version();
        if self.waiting.iter().all(|q| q.pos > version) {
            return;
        }
        let (ready, still): (Vec<Query>, Vec<Query>) = std::mem::take(&mut self.waiting).into_iter().partition(|q| q.pos <= version);
        self.waiting = still;
        for q in ready {
            self.answer(q, out);
        }
    }

    fn answer(&mut self, q: Query, out: &mut Outbox<Msg, Timer>) {
        let index = self.index.as_ref().expect("an index replica answers");
        let version = index.version();
        let found = index.lookup(q.book, q.tag, q.dir, q.bound);
        let shard = found.map(|s| index.shard_of(s) as usize);
        if version < q.pos {
            self.answered_behind += 1;
        }
        let mut answer = Answer {
            id: q.id,
            client: q.client,
            seqnum: found,
            data: None,
            body: Body::Plain,
            aux: None,
            lost: false,
            pos: version,
            index: self.id,
            cached: false,
        };
        out.trace("ServeRead", || format!("{{\"version\":{},\"seqnum\":{found:?}}}", version.entries));
        let Some(s) = found else {
            return self.reply(q.origin, answer, out);
        };
        if let Some(c) = self.cache_get(s) {
            out.count("cache_hit");
            (answer.data, answer.body, answer.aux, answer.cached) = (Some(c.data), c.body, c.aux, true);
            return self.reply(q.origin, answer, out);
        }
        out.count("cache_miss");
        let replicas = self.holders(s, shard.expect("found in the index"));
        if replicas.is_empty() {
            answer.lost = true;
            return self.reply(q.origin, answer, out);
        }
        let target = replicas[(self.round_robin % replicas.len() as u64) as usize];
        self.round_robin += 1;
        out.send(target, Msg::Fetch { seqnum: s, answer, origin: q.origin });
    }

    fn reply(&mut self, origin: NodeId, answer: Answer, out: &mut Outbox<Msg, Timer>) {
        if origin == self.id {
            self.on_answered(answer, out);
        } else {
            out.send(origin, Msg::Answered(answer));
        }
    }

    /// The answer reaches the caller's engine: cache the record, hand it to the function with
    /// the auxiliary data this node holds for it (a library sets it here), else the server's.
    pub(super) fn on_answered(&mut self, mut answer: Answer, out: &mut Outbox<Msg, Timer>) {
        if self.reads.remove(&answer.id).is_none() {
            return; // answered already: this is the answer to a re-sent copy, or the reverse
        }
        if let (Some(s), Some(d)) = (answer.seqnum, answer.data) {
            let local = self.cache.get(&s).and_then(|c| c.aux);
            self.cache_put(s, d, answer.body.clone());
            if let Some(aux) = local.or(answer.aux) {
                answer.aux = Some(aux);
                self.cache_aux(s, aux);
            }
        }
        out.send(answer.client, Msg::ReadDone(answer));
    }

    fn cache_get(&mut self, s: u64) -> Option<Cached> {
        let c = self.cache.get_mut(&s)?;
        self.cache_order.remove(&(c.used, s));
        self.uses += 1;
        c.used = self.uses;
        self.cache_order.insert((self.uses, s));
        Some(c.clone())
    }

    /// Caches a record (keeping auxiliary data already set for it).
    fn cache_put(&mut self, s: u64, data: Value, body: Body) {
        if self.cache_records == 0 {
            return;
        }
        let mut aux = None;
        if let Some(old) = self.cache.remove(&s) {
            self.cache_order.remove(&(old.used, s));
            aux = old.aux;
        }
        while self.cache.len() >= self.cache_records {
            let (_, oldest) = self.cache_order.pop_first().expect("a full cache has an oldest entry");
            self.cache.remove(&oldest);
        }
        self.uses += 1;
        self.cache.insert(s, Cached { data, body, aux, used: self.uses });
        self.cache_order.insert((self.uses, s));
    }

    pub(super) fn check(&self) -> Result<(), String> {
        self.metalog.check()?;
        if self.answered_behind > 0 {
            return Err(format!(
                "its index replica answered {} read(s) at a version behind the caller's metalog position",
                self.answered_behind
            ));
        }
        if self.cache.len() != self.cache_order.len() || self.cache.len() > self.cache_records {
            return Err("the record cache's LRU order does not match its contents".into());
        }
        Ok(())
    }
}
