//! The cache side of a cache agent: its machine's functions call it for every storage access,
//! and it runs the requester and sharer/owner halves of the coherence operations (§III-C2,
//! the cache-side table of the digest §2.4).
//!
//! - A read of a valid line (S or E) is a local hit. Otherwise the read goes to the home (IS_D)
//!   and installs what comes back, in S or E.
//! - A write to an E line updates it and goes straight to storage (E_W), bypassing the home;
//!   until storage acknowledges, forwarded reads and invalidations for the key wait (A3).
//! - A write to an S line is an upgrade (SE_A): the home invalidates the other sharers and
//!   writes storage, then grants E. Paper-literal, the line takes the new value at once (a local
//!   read sees it before the write is serialized: A1); under the strict rule
//!   `upgrade_applies_at_ack` the line keeps the old value until the grant.
//! - A write with no line goes to the home (IE_A) and installs the value in E on the grant
//!   (write-allocate).
//! - One transaction per key at a time: a function's call that cannot be served at once waits
//!   behind the key's pending transaction, in arrival order.
//! - Evictions are silent (the home is not told); a line with a transaction in flight, or that a
//!   running transaction read (`txn.rs`), is never evicted.

use super::agent::{Agent, Line, Pending, Request};
use super::msg::{Msg, ReadClass, Tag, Timer, Writer};
use crate::metrics;
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};

impl Agent {
    /// A function's read or write.
    pub(super) fn request(&mut self, key: Key, req: Request, out: &mut Outbox<Msg, Timer>) {
        if self.pending.contains_key(&key) {
            // A read of a valid line is served even while the key has a transaction in flight:
            // an upgrading S line (SE_A) holds the old value (strict) or the new one
            // (paper-literal), and the owner's own write (E_W) is already its value, which
            // strictly is read only once storage has it (lost with a crash otherwise).
            let owner_writing = matches!(self.pending.get(&key), Some(Pending::OwnerWrite { .. }));
            let wait_for_storage = owner_writing && self.rules.owner_reads_after_storage;
            if req.write.is_none() && self.lines.contains_key(&key) && !wait_for_storage {
                self.start(key, req, out);
            } else {
                self.waiting.entry(key).or_default().push_back(req);
            }
            return;
        }
        self.start(key, req, out);
    }

    /// Serves or starts one request; the key has no transaction in flight unless it is a hit.
    fn start(&mut self, key: Key, req: Request, out: &mut Outbox<Msg, Timer>) {
        if self.is_leaving() || self.joining {
            // The instance is being destroyed, or joining the domain (`membership.rs`): the
            // workflow is retried.
            out.count("concord_call_failed");
            out.send(req.client, Msg::CallFailed { key });
            return;
        }
        if self.must_park(key, req.write.is_some()) {
            self.parked.entry(key).or_default().push_back(req);
            return;
        }
        let now = self.tick();
        let home = self.ring.home(key);
        let applied = self.applied(key);
        match (req.write, self.lines.get_mut(&key)) {
            (None, Some(line)) => {
                line.used = now;
                let value = line.value;
                out.count("concord_local_read_hit");
                out.send(req.client, Msg::GetReply { key, value, class: ReadClass::Local });
            }
            (None, None) => {
                self.pending.insert(key, Pending::Read { client: req.client });
                self.send(home, Msg::RdReq { key, applied }, out);
            }
            (Some(value), Some(line)) if line.exclusive => {
                line.used = now;
                line.value = Some(value);
                self.pending.insert(key, Pending::OwnerWrite { client: req.client, value });
                out.count("concord_owner_write");
                // The owner's write invalidates nobody (Fig. 9 counts it).
                out.observe(metrics::INVALIDATIONS_PER_WRITE, 0);
                out.trace("OwnerWrite", || format!("{{\"key\":{key},\"value\":{value}}}"));
                out.send(self.storage, Msg::StPut { key, value, writer: Writer::Owner, after: applied });
            }
            (Some(value), Some(line)) => {
                line.used = now;
                if !self.rules.upgrade_applies_at_ack {
                    line.value = Some(value);
                }
                self.pending.insert(key, Pending::Write { client: req.client, value });
                out.trace("Upgrade", || format!("{{\"key\":{key},\"value\":{value}}}"));
                self.send(home, Msg::WrReq { key, value, applied }, out);
            }
            (Some(value), None) => {
                self.pending.insert(key, Pending::Write { client: req.client, value });
                self.send(home, Msg::WrReq { key, value, applied }, out);
            }
        }
    }

    /// Ends the key's transaction and serves the requests that waited for it, until one of them
    /// starts another.
    fn finish(&mut self, key: Key, out: &mut Outbox<Msg, Timer>) {
        self.pending.remove(&key);
        if let Some(deferred) = self.deferred.remove(&key) {
            for (from, msg) in deferred {
                self.handle(from, msg, out);
            }
        }
        while !self.pending.contains_key(&key) {
            let Some(waiting) = self.waiting.get_mut(&key) else { break };
            let req = waiting.pop_front().expect("empty queues are removed");
            if waiting.is_empty() {
                self.waiting.remove(&key);
            }
            self.start(key, req, out);
        }
        self.try_transfer(out);
    }

    /// Installs a line, evicting the least recently used idle line when the cache is full.
    pub(super) fn install(&mut self, key: Key, exclusive: bool, value: Option<Value>, out: &mut Outbox<Msg, Timer>) {
        if self.is_leaving() {
            return;
        }
        if let Some(max) = self.rules.lines_max
            && !self.lines.contains_key(&key)
            && self.lines.len() >= max
        {
            // A line a transaction read is pinned like one in flight (`txn.rs`).
            let victim = self
                .lines
                .iter()
                .filter(|(k, _)| !self.pending.contains_key(k) && !self.is_speculative(**k))
                .min_by_key(|(_, l)| l.used)
                .map(|(k, _)| *k);
            if let Some(victim) = victim {
                self.lines.remove(&victim);
                out.count("concord_eviction");
                out.trace("Evict", || format!("{{\"key\":{victim}}}"));
            }
        }
        let used = self.tick();
        self.lines.insert(key, Line { exclusive, value, used });
    }

    /// The home's answer to a read: install in S or E and answer the function.
    pub(super) fn on_data(&mut self, key: Key, value: Option<Value>, exclusive: bool, hit: bool, out: &mut Outbox<Msg, Timer>) {
        let Some(Pending::Read { client }) = self.pending.get(&key).cloned() else {
            unreachable!("{:?}: data for key {key} with no read in flight", self.id)
        };
        self.install(key, exclusive, value, out);
        let class = if hit { ReadClass::RemoteHit } else { ReadClass::Miss };
        out.send(client, Msg::GetReply { key, value, class });
        self.finish(key, out);
    }

    /// The home granted E for this agent's write: the line becomes E with the written value.
    pub(super) fn on_write_granted(&mut self, key: Key, out: &mut Outbox<Msg, Timer>) {
        let Some(Pending::Write { client, value }) = self.pending.get(&key).cloned() else {
            unreachable!("{:?}: write grant for key {key} with no write in flight", self.id)
        };
        self.install(key, true, Some(value), out);
        out.send(client, Msg::PutReply { key });
        self.finish(key, out);
    }

    /// Storage acknowledged the owner's direct write: the function is answered, then the
    /// deferred external requests are served.
    pub(super) fn on_owner_write_stored(&mut self, key: Key, out: &mut Outbox<Msg, Timer>) {
        let Some(Pending::OwnerWrite { client, .. }) = self.pending.get(&key).cloned() else {
            unreachable!("{:?}: storage ack for key {key} with no owner write in flight", self.id)
        };
        out.send(client, Msg::PutReply { key });
        // The key's home failed meanwhile: the drained line goes now (`failure.rs`).
        let drained = self.failing.contains(&self.ring.home(key));
        if (drained && self.rules.evict_on_failure) || self.is_leaving() {
            self.lines.remove(&key);
        }
        self.finish(key, out);
        if drained {
            self.try_ack_failures(out);
        }
    }

    /// True when an external request for `key` must wait for the owner's write (A3).
    fn defers(&self, key: Key) -> bool {
        self.rules.owner_defers && matches!(self.pending.get(&key), Some(Pending::OwnerWrite { .. }))
    }

    /// The home forwards a read because its directory names this agent the owner: downgrade to
    /// S and send the data, or say the line is gone (silently evicted).
    pub(super) fn on_forwarded_read(&mut self, home: NodeId, key: Key, tag: Tag, out: &mut Outbox<Msg, Timer>) {
        if self.defers(key) {
            self.deferred.entry(key).or_default().push((home, Msg::FwdRd { key, tag }));
            return;
        }
        self.tx_on_forwarded_read(key, out);
        let applied = self.applied(key);
        let reply = match self.lines.get_mut(&key) {
            Some(line) => {
                line.exclusive = false;
                Msg::FwdData { key, value: line.value, tag, applied }
            }
            None => Msg::FwdNack { key, tag, applied },
        };
        self.send(home, reply, out);
    }

    /// The home invalidates this agent's copy; an upgrade in flight (SE_A) loses its line and
    /// continues as a write from I (another writer was serialized first: A2).
    pub(super) fn on_invalidate(&mut self, home: NodeId, key: Key, tag: Tag, out: &mut Outbox<Msg, Timer>) {
        if self.defers(key) {
            self.deferred.entry(key).or_default().push((home, Msg::Inv { key, tag }));
            return;
        }
        self.tx_on_invalidate(key, out);
        if self.lines.remove(&key).is_some() {
            out.trace("Invalidate", || format!("{{\"key\":{key}}}"));
        }
        let applied = self.applied(key);
        self.send(home, Msg::InvAck { key, tag, applied }, out);
    }
}
