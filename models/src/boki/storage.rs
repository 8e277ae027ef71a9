//! A storage node (§4.3, digest §2.3–§2.4): it holds the records of the shards assigned to it,
//! reports how far each shard has arrived contiguously (its progress vector) to the primary
//! sequencer every local cut interval, and when a metalog entry orders records it gives them
//! their seqnums, tells the index replicas their tags, and serves reads of them.
//!
//! Records are durable once received (JournalStore: flushed before they count in progress), so
//! a restart keeps them; reads of a seqnum the node has not yet seen ordered wait for the entry.
//! At a new term it applies the entries of the old term's final metalog it missed, discards
//! the records that metalog does not cover (their appends fail), and stores the shards the new
//! configuration gives it; the records it holds from older terms stay readable.

use super::Timer;
use super::ids::{Entry, position, seqnum, term_of};
use super::msg::{Answer, Config, IndexRecord, Msg, NewRecord};
use super::record::{Aux, Body};
use super::sequencer::Session;
use super::subscription::Subscription;
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use std::collections::{BTreeMap, BTreeSet};

/// A received record: its book, tags, data and library contents.
type Received = (Key, Vec<u64>, Value, Body);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Storage {
    pub(super) id: NodeId,
    pub(super) primary: NodeId,
    pub(super) index_engines: Vec<NodeId>,
    /// The shards this node stores.
    pub(super) shards: BTreeSet<u32>,
    pub(super) shard_count: usize,
    pub(super) term: u64,
    /// Seqnums carry the term (false only under the mutant `new_term_reuses_seqnums`).
    pub(super) term_bits: bool,
    pub(super) local_cut_interval_ns: Time,
    /// Received, not yet ordered: `(shard, local_id) → (book, tags, data)`.
    pub(super) pending: BTreeMap<(u32, u64), Received>,
    /// Per stored shard, the contiguous received prefix (local ids below it are all here).
    pub(super) progress: BTreeMap<u32, u64>,
    pub(super) dirty: bool,
    /// The progress report timer is set (only while there is progress to report, so an idle
    /// log schedules nothing).
    pub(super) timer_set: bool,
    pub(super) metalog: Subscription,
    /// Ordered records: `seqnum → (book, data, library contents)`.
    pub(super) live: BTreeMap<u64, (Key, Value, Body)>,
    /// Reads of seqnums not yet ordered here.
    pub(super) waiting_reads: Vec<(u64, Answer, NodeId)>,
    pub(super) session: Session,
    /// Messages of a later term, held until this node reaches it.
    pub(super) held: Vec<(NodeId, Msg)>,
    /// Auxiliary data backed up here (`params.aux_data_on_storage`), by seqnum: returned with
    /// the record on reads; kept with the records (on disk) across restarts.
    pub(super) aux: BTreeMap<u64, Aux>,
}

impl Storage {
    /// (Re)starts: timers set before a crash are gone.
    pub(super) fn start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.timer_set = false;
        self.session.beat(out);
        self.arm(now, out);
    }

    /// A restart: records and progress are on disk; reads in progress and entries that came
    /// early are gone (a new session tells the controller).
    pub(super) fn restart(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.waiting_reads.clear();
        self.metalog.forget_early();
        self.dirty = !self.progress.is_empty();
        self.session.incarnation += 1;
        self.start(now, out);
    }

    /// The next term: finish the old one with its final metalog, discard what it left
    /// unordered, and take the new term's shards.
    pub(super) fn on_new_term(&mut self, now: Time, config: &Config, out: &mut Outbox<Msg, Timer>) {
        if config.term <= self.term {
            return;
        }
        if config.term == self.term + 1 {
            for entry in self.metalog.missed(self.term, &config.sealed) {
                self.on_metalog(entry.clone(), out);
            }
        }
        let discarded = self.pending.len();
        out.trace("DiscardRecords", || format!("{{\"term\":{},\"records\":{discarded}}}", self.term));
        self.pending.clear();
        self.progress.clear();
        self.metalog.begin_term();
        (self.term, self.dirty) = (config.term, false);
        self.primary = config.primary;
        self.shards = (0..config.replicas.len() as u32).filter(|&j| config.replicas[j as usize].contains(&self.id)).collect();
        let waiting = std::mem::take(&mut self.waiting_reads);
        for (s, answer, origin) in waiting {
            self.on_fetch(s, answer, origin, out);
        }
        self.arm(now, out);
    }

    /// Reports happen on the local cut interval's grid (every multiple of it), as a periodic
    /// timer would, but the timer is set only when something is to be reported.
    fn arm(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if self.dirty && !self.timer_set {
            self.timer_set = true;
            out.set_timer(Timer::LocalCut, self.local_cut_interval_ns - now % self.local_cut_interval_ns);
        }
    }

    pub(super) fn on_replicate(&mut self, now: Time, record: NewRecord, out: &mut Outbox<Msg, Timer>) {
        let NewRecord { shard, local_id, book, tags, data, body, .. } = record;
        if !self.shards.contains(&shard) {
            return;
        }
        self.pending.insert((shard, local_id), (book, tags, data, body));
        let p = self.progress.entry(shard).or_insert(0);
        // The records of a shard that arrived contiguously count; one still on its way holds
        // back the ones behind it.
        while self.pending.contains_key(&(shard, *p)) {
            *p += 1;
            self.dirty = true;
        }
        self.arm(now, out);
    }

    pub(super) fn on_local_cut(&mut self, out: &mut Outbox<Msg, Timer>) {
        self.timer_set = false;
        if self.dirty {
            self.dirty = false;
            let shards: Vec<(u32, u64)> = self.progress.iter().map(|(&s, &p)| (s, p)).collect();
            out.trace("ReportProgress", || format!("{{\"progress\":{shards:?}}}"));
            out.send(self.primary, Msg::Progress { term: self.term, shards });
        }
    }

    pub(super) fn on_metalog(&mut self, entry: Entry, out: &mut Outbox<Msg, Timer>) {
        self.metalog.receive(entry);
        while let Some(entry) = self.metalog.next_due(self.shard_count, "storage") {
            self.apply(&entry, out);
        }
    }

    fn apply(&mut self, entry: &Entry, out: &mut Outbox<Msg, Timer>) {
        let mut index_data = Vec::new();
        for (shard, local_id, position) in entry.delta() {
            if !self.shards.contains(&shard) {
                continue;
            }
            // Without durability before order (a mutant), an entry may cover a record this
            // replica never received: it has nothing to store, and reads of it find it lost.
            if let Some((book, tags, data, body)) = self.pending.remove(&(shard, local_id)) {
                self.live.insert(seqnum(if self.term_bits { self.term } else { 0 }, 0, position), (book, data, body));
                index_data.push(IndexRecord { position, shard, book, tags });
            }
        }
        if !index_data.is_empty() {
            for &e in &self.index_engines {
                out.send(e, Msg::IndexData { term: self.term, records: index_data.clone() });
            }
        }
        let waiting = std::mem::take(&mut self.waiting_reads);
        for (s, answer, origin) in waiting {
            self.on_fetch(s, answer, origin, out);
        }
    }

    /// `logSetAuxData`'s backup: the latest value set for a record (Boki does not keep
    /// auxiliary data consistent; libraries write the same value for a record).
    pub(super) fn on_store_aux(&mut self, s: u64, aux: Aux) {
        self.aux.insert(s, aux);
    }

    pub(super) fn on_fetch(&mut self, s: u64, mut answer: Answer, origin: NodeId, out: &mut Outbox<Msg, Timer>) {
        // Not ordered here yet (a later term, or beyond the entries applied): wait. A seqnum of
        // an earlier term is here or lost.
        if term_of(s) > self.term || (term_of(s) == self.term && position(s) >= self.metalog.ordered()) {
            self.waiting_reads.push((s, answer, origin));
            return;
        }
        match self.live.get(&s) {
            Some((_, data, body)) => (answer.data, answer.body, answer.aux) = (Some(*data), body.clone(), self.aux.get(&s).copied()),
            None => answer.lost = true,
        }
        out.send(origin, Msg::Answered(answer));
    }
}
