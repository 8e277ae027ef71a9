//! The home side of a cache agent: the directory entries of the keys the ring homes here, and
//! the directory half of the coherence operations (§III-C2; the directory table of the digest
//! §2.4).
//!
//! | entry | read from r | write of v from r |
//! |---|---|---|
//! | none | storage → `Data(E)`; E(r) | storage write → `WrAck`; E(r) |
//! | S(sh) | the home's own copy, else storage → `Data(S)`; S(sh ∪ r) | `Inv` sh∖r **in parallel with** the storage write; all acks → `WrAck`; E(r) |
//! | E(o), o ≠ r | `FwdRd` o → `Data(S)`; S{o, r}; on "don't have it" storage → `Data(E)`; E(r) | `Inv` o, **then** the storage write; → `WrAck`; E(r) |
//! | E(r) (r evicted silently) | storage → `Data(E)`; E(r) | storage write → `WrAck`; E(r) |
//!
//! The directory is blocking (A15): while a key has a transaction in flight, later requests for
//! it wait in FIFO order. The paper says only that the home "processes one write operation at a
//! time"; a read miss racing a write can otherwise install stale data in E. The mutant
//! `non_blocking_directory` starts every request at once.

use super::agent::{Agent, Dir, HomeOp, HomeRequest, Step};
use super::msg::{ExtReq, Msg, Tag, Timer, Writer};
use crate::metrics;
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use std::collections::BTreeSet;

impl Agent {
    /// A read or write request reaches this home.
    pub(super) fn home_request(&mut self, key: Key, req: HomeRequest, out: &mut Outbox<Msg, Timer>) {
        let home = self.ring.home(key);
        if home != self.id && self.handed.contains(&home) {
            // Sent in an older view to the joiner's successor, which has handed the key over.
            let applied = self.applied(key);
            out.count("concord_moved_request");
            self.send(home, Msg::Moved { key, requester: req.requester, write: req.write, external: req.external, applied }, out);
            return;
        }
        if home != self.id {
            let parked = self.park_home_request(key, &req);
            assert!(parked, "{:?}: a request for key {key} reached a node that is not its home", self.id);
            return;
        }
        if self.awaits_entries(key) {
            // The key's entries are on their way from its departing home.
            self.home_parked.push_back((key, req));
            return;
        }
        if self.is_leaving() {
            self.hand_on(key, req, out);
            return;
        }
        let busy = self.active.get(&key).is_some_and(|ops| !ops.is_empty());
        if self.holds_for_joiner(key) || (busy && self.rules.blocking_directory) {
            self.queued.entry(key).or_default().push_back(req);
        } else {
            self.begin(key, req, out);
        }
    }

    /// Starts a directory transaction (or answers at once, for a read the home's own copy
    /// serves).
    fn begin(&mut self, key: Key, req: HomeRequest, out: &mut Outbox<Msg, Timer>) {
        if let (Some(ext), Some(value)) = (req.external, req.write) {
            self.begin_external(key, req.requester, value, ext, out);
            return;
        }
        let r = req.requester;
        let tag = self.next_tag;
        self.next_tag += 1;
        let now = self.tick();
        if self.directory.contains_key(&key) {
            self.directory_used.insert(key, now);
        }
        let step = match (req.write, self.directory.get(&key).cloned()) {
            (None, None) => {
                out.count("concord_read_miss");
                Step::Fetch { exclusive: true, hit: false }
            }
            (None, Some(Dir::Shared(mut sharers))) => {
                out.count("concord_remote_read_hit");
                let own = self.lines.get(&key).filter(|l| !l.exclusive).map(|l| l.value);
                if let Some(value) = own {
                    // The home's own cache instance has the data.
                    sharers.insert(r);
                    self.directory.insert(key, Dir::Shared(sharers));
                    let applied = self.applied(key);
                    self.send(r, Msg::Data { key, value, exclusive: false, hit: true, applied }, out);
                    return;
                }
                Step::Fetch { exclusive: false, hit: true }
            }
            (None, Some(Dir::Exclusive(owner))) if owner != r => {
                out.count("concord_remote_read_hit");
                self.send(owner, Msg::FwdRd { key, tag }, out);
                Step::Forward { owner }
            }
            (None, Some(Dir::Exclusive(_))) => {
                // The owner asks again: it evicted its line silently. As a "don't have it".
                out.count("concord_remote_read_hit");
                Step::Fetch { exclusive: true, hit: true }
            }
            (Some(value), dir) => {
                let acks: BTreeSet<NodeId> = match dir {
                    None => BTreeSet::new(),
                    Some(Dir::Shared(sharers)) => sharers.into_iter().filter(|&s| s != r).collect(),
                    Some(Dir::Exclusive(owner)) if owner != r => [owner].into(),
                    Some(Dir::Exclusive(_)) => BTreeSet::new(),
                };
                out.observe(metrics::INVALIDATIONS_PER_WRITE, acks.len() as u64);
                for &s in &acks {
                    out.count("concord_invalidation");
                    self.send(s, Msg::Inv { key, tag }, out);
                }
                // An owner may have a direct write in flight: its write must reach storage
                // first, so the home waits for the owner's ack before writing (§III-C2).
                let owner_case = matches!(self.directory.get(&key), Some(Dir::Exclusive(o)) if *o != r);
                let put = !(owner_case && self.rules.inv_before_put);
                if put {
                    self.put(key, value, tag, out);
                }
                Step::Write { value, acks, put, stored: false, external: None }
            }
        };
        if let Step::Fetch { .. } = step {
            out.send(self.storage, Msg::StGet { key, tag });
        }
        self.active.entry(key).or_default().push(HomeOp { tag, requester: r, step });
    }

    /// An external write reaches the home (§III-C3): every copy is invalidated (an owner's
    /// direct write in flight lands first: it defers the invalidation, A3), and the entry goes,
    /// so the next read misses and reads storage. Paper-literal, storage already holds the
    /// value (a recall of the entry); strict, the home writes it like any other write, and
    /// answers the application once storage has it and every copy is gone.
    fn begin_external(&mut self, key: Key, origin: NodeId, value: Value, ext: ExtReq, out: &mut Outbox<Msg, Timer>) {
        let tag = self.next_tag;
        self.next_tag += 1;
        self.tick();
        let acks: BTreeSet<NodeId> = match self.directory.get(&key) {
            None => BTreeSet::new(),
            Some(Dir::Shared(sharers)) => sharers.clone(),
            Some(Dir::Exclusive(owner)) => [*owner].into(),
        };
        out.trace("ExternalWrite", || format!("{{\"key\":{key},\"value\":{value},\"copies\":{}}}", acks.len()));
        for &s in &acks {
            out.count("concord_invalidation");
            self.send(s, Msg::Inv { key, tag }, out);
        }
        if ext.stored {
            if acks.is_empty() {
                self.directory.remove(&key);
                self.directory_used.remove(&key);
            } else {
                self.active.entry(key).or_default().push(HomeOp { tag, requester: self.id, step: Step::Recall { acks } });
            }
            return;
        }
        let owner_case = matches!(self.directory.get(&key), Some(Dir::Exclusive(_)));
        let put = !(owner_case && self.rules.inv_before_put);
        if put {
            self.put(key, value, tag, out);
        }
        let step = Step::Write { value, acks, put, stored: false, external: Some(ext.tag) };
        self.active.entry(key).or_default().push(HomeOp { tag, requester: origin, step });
    }

    fn put(&mut self, key: Key, value: Value, tag: Tag, out: &mut Outbox<Msg, Timer>) {
        let after = self.applied(key);
        out.trace("HomeWrite", || format!("{{\"key\":{key},\"value\":{value}}}"));
        out.send(self.storage, Msg::StPut { key, value, writer: Writer::Home(tag), after });
    }

    fn op_mut(&mut self, key: Key, tag: Tag) -> &mut HomeOp {
        let id = self.id;
        self.active
            .get_mut(&key)
            .and_then(|ops| ops.iter_mut().find(|o| o.tag == tag))
            .unwrap_or_else(|| unreachable!("{id:?}: no directory transaction {tag} for key {key}"))
    }

    /// Ends a transaction: sets the entry, answers the requester, starts the next queued
    /// request.
    fn complete(&mut self, key: Key, tag: Tag, dir: Dir, reply: Msg, out: &mut Outbox<Msg, Timer>) {
        let op = self.end(key, tag);
        // A requester that failed or left meanwhile holds no copy.
        let gone = |n: &NodeId| self.fenced.contains(n) || self.departed.contains(n);
        let dir = match dir {
            Dir::Exclusive(o) if gone(&o) => None,
            Dir::Shared(sharers) => Some(Dir::Shared(sharers.into_iter().filter(|s| !gone(s)).collect())),
            dir => Some(dir),
        }
        .filter(|d| !matches!(d, Dir::Shared(s) if s.is_empty()));
        // A requester that failed meanwhile is not answered (its next incarnation asked nothing).
        let answer = !self.orphaned.remove(&tag);
        let Some(dir) = dir else {
            if self.directory.remove(&key).is_some() {
                self.directory_used.remove(&key);
            }
            if answer {
                self.send(op.requester, reply, out);
            }
            self.start_queued(key, out);
            return;
        };
        let new = self.directory.insert(key, dir).is_none();
        let now = self.tick();
        self.directory_used.insert(key, now);
        if answer {
            self.send(op.requester, reply, out);
        }
        if new && self.rules.directory_max.is_some_and(|max| self.directory.len() > max) {
            self.evict_entry(key, out);
        }
        self.start_queued(key, out);
    }

    /// Removes a transaction from the key's active ones.
    fn end(&mut self, key: Key, tag: Tag) -> HomeOp {
        let ops = self.active.get_mut(&key).expect("active");
        let i = ops.iter().position(|o| o.tag == tag).expect("active");
        let op = ops.remove(i);
        if ops.is_empty() {
            self.active.remove(&key);
        }
        op
    }

    /// Starts the key's queued requests until one leaves a transaction in flight.
    fn start_queued(&mut self, key: Key, out: &mut Outbox<Msg, Timer>) {
        if self.is_leaving() {
            // Held for the successor; the directory is handed over once nothing is in flight.
            self.try_transfer(out);
            return;
        }
        while !self.active.contains_key(&key) && !self.holds_for_joiner(key) {
            let Some(queue) = self.queued.get_mut(&key) else { break };
            let req = queue.pop_front().expect("empty queues are removed");
            if queue.is_empty() {
                self.queued.remove(&key);
            }
            self.begin(key, req, out);
        }
        self.try_give(out);
    }

    /// The directory is over capacity: evict the least recently used idle entry other than
    /// `except`. Paper-literal, the entry just goes, leaving its copies untracked (A12: a later
    /// write misses, invalidates nothing, and the old copies keep being read). Under the strict
    /// rule `recall_on_directory_eviction` the home first invalidates them, as an inclusive
    /// directory does, and requests for the key wait meanwhile.
    fn evict_entry(&mut self, except: Key, out: &mut Outbox<Msg, Timer>) {
        let victim = self
            .directory
            .keys()
            .filter(|&&k| k != except && !self.active.contains_key(&k) && !self.queued.contains_key(&k) && !self.holds_for_joiner(k))
            .min_by_key(|&&k| self.directory_used.get(&k).copied().unwrap_or(0))
            .copied();
        let Some(victim) = victim else { return };
        out.trace("DirectoryEvict", || format!("{{\"key\":{victim}}}"));
        if !self.rules.recall_on_directory_eviction {
            out.count("concord_directory_eviction");
            self.directory.remove(&victim);
            self.directory_used.remove(&victim);
            return;
        }
        out.count("concord_directory_recall");
        let acks: BTreeSet<NodeId> = match &self.directory[&victim] {
            Dir::Shared(sharers) => sharers.clone(),
            Dir::Exclusive(owner) => [*owner].into(),
        };
        let tag = self.next_tag;
        self.next_tag += 1;
        for &s in &acks {
            out.count("concord_invalidation");
            self.send(s, Msg::Inv { key: victim, tag }, out);
        }
        self.active.entry(victim).or_default().push(HomeOp { tag, requester: self.id, step: Step::Recall { acks } });
    }

    /// Every copy of a recalled entry is gone: the entry goes, and the key's queued requests
    /// start (from NoEntry).
    fn finish_recall(&mut self, key: Key, tag: Tag, out: &mut Outbox<Msg, Timer>) {
        self.end(key, tag);
        self.directory.remove(&key);
        self.directory_used.remove(&key);
        self.start_queued(key, out);
    }

    /// Storage answered a read for a transaction.
    pub(super) fn on_storage_data(&mut self, key: Key, tag: Tag, value: Option<Value>, out: &mut Outbox<Msg, Timer>) {
        let op = self.op_mut(key, tag).clone();
        let Step::Fetch { exclusive, hit } = op.step else { unreachable!("storage data for a {:?}", op.step) };
        let r = op.requester;
        let mut dir = match (exclusive, self.directory.get(&key)) {
            (false, Some(Dir::Shared(sharers))) => Dir::Shared(sharers.iter().copied().chain([r]).collect()),
            (false, _) => Dir::Shared([r].into()),
            (true, _) => Dir::Exclusive(r),
        };
        if let Dir::Shared(sharers) = &mut dir
            && self.keep_copy(key, value, out)
        {
            sharers.insert(self.id);
        }
        let applied = self.applied(key);
        self.complete(key, tag, dir, Msg::Data { key, value, exclusive, hit, applied }, out);
    }

    /// The owner answered a forwarded read: with the data (it is now a sharer), or with "don't
    /// have it" (`None`), in which case storage serves the read and the requester gets E.
    pub(super) fn on_owner_data(&mut self, key: Key, tag: Tag, value: Option<Option<Value>>, out: &mut Outbox<Msg, Timer>) {
        let op = self.op_mut(key, tag);
        let Step::Forward { owner } = op.step else { unreachable!("owner data for a {:?}", op.step) };
        let r = op.requester;
        match value {
            Some(value) => {
                let applied = self.applied(key);
                let mut sharers: BTreeSet<NodeId> = [owner, r].into();
                if owner != self.id && self.keep_copy(key, value, out) {
                    sharers.insert(self.id);
                }
                self.complete(key, tag, Dir::Shared(sharers), Msg::Data { key, value, exclusive: false, hit: true, applied }, out);
            }
            None => {
                op.step = Step::Fetch { exclusive: true, hit: true };
                out.send(self.storage, Msg::StGet { key, tag });
            }
        }
    }

    /// With `home_keeps_copy`, the home's own instance keeps the data a remote read in S
    /// brought it (clean: storage's value, or the owner's once its writes are stored), unless
    /// its own cache side has a call in flight for the key. True if it did.
    fn keep_copy(&mut self, key: Key, value: Option<Value>, out: &mut Outbox<Msg, Timer>) -> bool {
        if !self.rules.home_keeps_copy || self.pending.contains_key(&key) || self.lines.contains_key(&key) || self.is_leaving() {
            return false;
        }
        out.count("concord_home_copy");
        self.install(key, false, value, out);
        true
    }

    pub(super) fn on_invalidate_ack(&mut self, from: NodeId, key: Key, tag: Tag, out: &mut Outbox<Msg, Timer>) {
        let op = self.op_mut(key, tag);
        match &mut op.step {
            Step::Write { value, acks, put, .. } => {
                assert!(acks.remove(&from), "an unexpected invalidation ack from {from:?}");
                if acks.is_empty() && !*put {
                    *put = true;
                    let value = *value;
                    self.put(key, value, tag, out);
                }
                self.try_finish_write(key, tag, out);
            }
            Step::Recall { acks } => {
                assert!(acks.remove(&from), "an unexpected invalidation ack from {from:?}");
                if acks.is_empty() {
                    self.finish_recall(key, tag, out);
                }
            }
            step => unreachable!("an invalidation ack for a {step:?}"),
        }
    }

    pub(super) fn on_home_write_stored(&mut self, key: Key, tag: Tag, out: &mut Outbox<Msg, Timer>) {
        let op = self.op_mut(key, tag);
        let Step::Write { stored, .. } = &mut op.step else { unreachable!("a storage ack for a {:?}", op.step) };
        *stored = true;
        self.try_finish_write(key, tag, out);
    }

    /// A write completes once every invalidation and storage have acknowledged: E(requester).
    fn try_finish_write(&mut self, key: Key, tag: Tag, out: &mut Outbox<Msg, Timer>) {
        let op = self.op_mut(key, tag);
        let Step::Write { acks, stored: true, external, .. } = &op.step else { return };
        if !acks.is_empty() {
            return;
        }
        let r = op.requester;
        if let Some(ext_tag) = *external {
            // The external write is done: no cache holds the key, so no entry either.
            self.end(key, tag);
            self.directory.remove(&key);
            self.directory_used.remove(&key);
            out.send(r, Msg::ExtAck { key, tag: ext_tag });
            self.start_queued(key, out);
            return;
        }
        let applied = self.applied(key);
        self.complete(key, tag, Dir::Exclusive(r), Msg::WrAck { key, applied }, out);
    }
}
