//! The cache manager of a service shard (Fig. 5, right): its queue processed one item at a
//! time, the validity test at End, the dependency index and its limit, and what it sends
//! upstream, alone or in batches.
//!
//! The CM is a sequential server: each queue item takes `cm_event_ns`, each message it sends
//! upstream (a Save, an Inv, a batch) `cm_send_ns` more (the paper's HTTP requests between CMs,
//! the cost batching amortises, Fig. 18).

use super::*;

impl ServiceNode {
    pub(super) fn enqueue(&mut self, now: Time, item: CmItem, out: &mut Outbox<Msg, Timer>) {
        self.queue.push_back(item);
        if !self.cm_busy {
            self.cm_busy = true;
            out.set_timer(Timer::CmStep, self.cm_free_at.saturating_sub(now) + self.config.cm_event_ns);
        }
    }

    /// The head of the queue, at the end of its `cm_event_ns`.
    pub(super) fn cm_step(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        if self.cm_free_at > now {
            // A batch sent meanwhile took the CM's time.
            out.set_timer(Timer::CmStep, self.cm_free_at - now);
            return;
        }
        if let Some(item) = self.queue.pop_front() {
            self.stats.events += 1;
            self.stats.busy_ns += self.config.cm_event_ns;
            self.process(now, item, out);
            self.stats.sample(now, self.cm_state_len());
        }
        if self.queue.is_empty() {
            self.cm_busy = false;
        } else {
            out.set_timer(Timer::CmStep, self.cm_free_at.saturating_sub(now) + self.config.cm_event_ns);
        }
    }

    fn process(&mut self, now: Time, item: CmItem, out: &mut Outbox<Msg, Timer>) {
        match item {
            CmItem::Start { cid } => self.history.push_back(Mark::Call(cid)),
            CmItem::End { cid, ca, deps, caller, ret, visited } => {
                let Some(start) = self.history.iter().position(|m| *m == Mark::Call(cid)) else {
                    unreachable!("End {cid:?} without its Start: Start is queued before the handler runs")
                };
                let stale = self.history.iter().skip(start + 1).any(|m| matches!(m, Mark::Inv(d) if deps.contains(d)));
                if self.config.cm_gc {
                    // GC (§4.1): the call is done; invalidations older than every running call
                    // can no longer veto a save.
                    self.history.remove(start);
                    while matches!(self.history.front(), Some(Mark::Inv(_))) {
                        self.history.pop_front();
                    }
                }
                if stale {
                    out.count("mucache_save_refused");
                    if self.config.refusal_invalidates {
                        // X11: the caller may save its own calls that used this response.
                        self.send_upstream(now, caller, vec![Upstream::Inv { ca, since: now }], out);
                    }
                    return;
                }
                if !self.config.caller_side_save {
                    self.send_upstream(now, caller, vec![Upstream::Save { ca, ret, visited, origin: cid }], out);
                }
                for d in deps {
                    self.saved.entry(d).or_default().entry(caller).or_default().insert(ca);
                    if self.config.cm_deps_max.is_some() {
                        self.deps_lru.touch(d);
                    }
                }
                self.evict_dependencies(now, out);
            }
            CmItem::InvKey { key, local, since } => {
                // Sharding: a local write's invalidation goes to the other shards of the
                // service too (Fig. 5 L.25); theirs and transitive ones are not sent on.
                let svc = &self.app.services[self.me as usize];
                if local && svc.shards > 1 && !self.config.no_shard_broadcast {
                    for u in svc.first_unit..svc.first_unit + svc.shards {
                        if u != self.unit {
                            out.send(self.nodes[u as usize], Msg::ShardInv { key, since });
                        }
                    }
                }
                self.invalidate(now, &[Dep::Key(key)], since, out)
            }
            CmItem::InvCalls { cas, since } => {
                let deps: Vec<Dep> = cas.into_iter().map(Dep::Call).collect();
                self.invalidate(now, &deps, since, out);
            }
        }
    }

    /// invHandler: record the invalidations for running calls, and invalidate upstream every
    /// saved call that depended on them.
    fn invalidate(&mut self, now: Time, deps: &[Dep], since: Time, out: &mut Outbox<Msg, Timer>) {
        // Without GC the history keeps every invalidation (Fig. 15's comparison).
        let record = !self.history.is_empty() || !self.config.cm_gc;
        let mut upstream: BTreeMap<u32, BTreeSet<CallArgs>> = BTreeMap::new();
        for d in deps {
            if record {
                self.history.push_back(Mark::Inv(*d));
            }
            self.deps_lru.remove(d);
            for (caller, cas) in self.saved.remove(d).unwrap_or_default() {
                upstream.entry(caller).or_default().extend(cas);
            }
        }
        for (caller, cas) in upstream {
            self.send_upstream(now, caller, cas.into_iter().map(|ca| Upstream::Inv { ca, since }).collect(), out);
        }
    }

    /// The CM's memory limit (§4.1 "Evicting an entry"): past `cm_deps_max` dependencies, the
    /// least recently saved one goes, and the calls saved upstream that depended on it are
    /// invalidated as if it had been written (O8); the X10 mutant forgets them silently.
    fn evict_dependencies(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let Some(max) = self.config.cm_deps_max else { return };
        while self.saved.len() > max {
            let d = self.deps_lru.oldest().expect("every saved dependency is in the LRU");
            self.deps_lru.remove(&d);
            out.count("mucache_dependency_evicted");
            let callers = self.saved.remove(&d).unwrap_or_default();
            if self.config.silent_dep_eviction {
                continue;
            }
            for (caller, cas) in callers {
                self.send_upstream(now, caller, cas.into_iter().map(|ca| Upstream::Inv { ca, since: now }).collect(), out);
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // CM to CM

    /// Sends Saves and Invs to the CM of unit `to`: at once (each Save alone, the Invs in one
    /// message), or into its batch.
    fn send_upstream(&mut self, now: Time, to: u32, items: Vec<Upstream>, out: &mut Outbox<Msg, Timer>) {
        let Some(b) = self.config.batch else {
            let mut invs: Vec<CallArgs> = Vec::new();
            let mut since = Time::MAX;
            for item in items {
                match item {
                    Upstream::Save { ca, ret, visited, origin } => {
                        self.send_cm(now, to, Msg::Save { ca, ret, visited, origin }, out);
                    }
                    Upstream::Inv { ca, since: s } => {
                        invs.push(ca);
                        since = since.min(s);
                    }
                }
            }
            if !invs.is_empty() {
                self.send_cm(now, to, Msg::InvCalls { cas: invs, since }, out);
            }
            return;
        };
        for item in items {
            let batch = self.batches.entry(to).or_default();
            let was_empty = batch.items.is_empty();
            batch.add(item, self.config.batch_drops_inv);
            if batch.items.len() >= b.size as usize {
                // Full: it leaves now, and its timeout (set by its first item) is moot.
                if !was_empty {
                    out.cancel_timer(Timer::BatchFlush(to));
                }
                self.flush(now, to, out);
            } else if was_empty {
                out.set_timer(Timer::BatchFlush(to), b.timeout_ns);
            }
        }
    }

    /// Sends the batch waiting for unit `to`, if any.
    pub(super) fn flush(&mut self, now: Time, to: u32, out: &mut Outbox<Msg, Timer>) {
        let items = self.batches.remove(&to).map(|b| b.items).unwrap_or_default();
        if !items.is_empty() {
            self.send_cm(now, to, Msg::Batch { items }, out);
        }
    }

    fn send_cm(&mut self, now: Time, to: u32, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        self.cm_free_at = self.cm_free_at.max(now) + self.config.cm_send_ns;
        self.stats.busy_ns += self.config.cm_send_ns;
        out.send(self.nodes[to as usize], msg);
    }

    /// Saves and Invs from a downstream CM, in the order it sent them: a Save lands in the
    /// cache at once, an Inv deletes at once and queues its bookkeeping (O7); consecutive
    /// Invs are one queue item.
    pub(super) fn receive(&mut self, now: Time, items: Vec<Upstream>, out: &mut Outbox<Msg, Timer>) {
        let mut invs: Vec<CallArgs> = Vec::new();
        let mut since = Time::MAX;
        for item in items {
            match item {
                Upstream::Save { ca, ret, visited, origin } => {
                    if !invs.is_empty() {
                        self.enqueue(now, CmItem::InvCalls { cas: std::mem::take(&mut invs), since }, out);
                        since = Time::MAX;
                    }
                    out.count("mucache_save");
                    let entry = CacheEntry { ret, visited, origin, expires: None };
                    if self.config.non_fifo_save && self.config.save_delay_ns > 0 {
                        // Mutant: the Save took a slower path than the Invs behind it (X8).
                        out.set_timer(Timer::CallerSave(ca, entry), self.config.save_delay_ns);
                    } else {
                        self.cache_put(ca, entry);
                    }
                }
                Upstream::Inv { ca, since: s } => {
                    self.cache_remove(&ca);
                    if self.config.read_entry_services & (1 << self.me) != 0 {
                        // Fig. 19: the write's invalidation reached a frontend.
                        out.observe(metrics::INVALIDATION_NS, now.saturating_sub(s));
                    }
                    invs.push(ca);
                    since = since.min(s);
                }
            }
        }
        if !invs.is_empty() {
            self.enqueue(now, CmItem::InvCalls { cas: invs, since }, out);
        }
    }

    // -----------------------------------------------------------------------------------------
    // The cache

    /// Caches `ca`; past the capacity the least recently used entry goes (always safe: a
    /// later invalidation of a missing entry is harmless, §4.1).
    pub(super) fn cache_put(&mut self, ca: CallArgs, entry: CacheEntry) {
        self.cache.insert(ca, entry);
        let Some(max) = self.config.cache_entries_max else { return };
        self.cache_lru.touch(ca);
        while self.cache.len() > max {
            let old = self.cache_lru.oldest().expect("every entry is in the LRU");
            self.cache_remove(&old);
        }
    }

    pub(super) fn cache_remove(&mut self, ca: &CallArgs) {
        self.cache.remove(ca);
        self.cache_lru.remove(ca);
    }
}
