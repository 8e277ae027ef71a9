//! A service: its handler runner with the wrapper hooks, its store, its cache and its cache
//! manager (CM), one node (digest §2.1–§2.8).
//!
//! The wrapper hooks run inline with the handler: preReqStart enqueues Start before the first
//! step (the enqueue is synchronous, as B.1 requires), preRead and preCall add to the request's
//! read set, preCall looks the cache up when the callee is read-only and its entry's visited
//! set is disjoint from the request's, postWrite enqueues Inv(k) once the write took effect,
//! and preReturn enqueues End. The CM drains its queue one item every `cm_event_ns`, in queue
//! order (O3), so its history and the validity test at End see exactly the queue's order.
//!
//! Save and Inv of calls change the cache when they arrive, in link order, and enter the queue
//! for the bookkeeping (digest O7: a request whose Start is queued behind an Inv must not hit
//! the entry that Inv removes). Start and End carry the request's id, so End matches its own
//! Start exactly (the §2.7 alternative), and the history is trimmed up to the oldest call
//! still running.

mod cm;

use super::Config;
use super::app::{App, CallArgs, EndpointRef, Services, Step, StoreKey};
use super::batch::{Batch, Upstream};
use super::msg::{CallRecord, CallTag, Event, Msg, ReqId};
use crate::lru::Lru;
use crate::metrics;
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// What a read set holds and an invalidation names: a store key or a downstream call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dep {
    Key(StoreKey),
    Call(CallArgs),
}

/// An item of the CM's queue.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CmItem {
    Start {
        cid: ReqId,
    },
    End {
        cid: ReqId,
        ca: CallArgs,
        deps: BTreeSet<Dep>,
        caller: u32,
        ret: u64,
        visited: Services,
    },
    /// A write changed the key: at this shard (`local`), or at a sibling shard that broadcast it.
    /// `since`: when the write took effect (metadata, carried up with the invalidations).
    InvKey {
        key: StoreKey,
        local: bool,
        since: Time,
    },
    InvCalls {
        cas: Vec<CallArgs>,
        since: Time,
    },
}

/// An entry of the CM's history: a running call's start, or an invalidation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Mark {
    Call(ReqId),
    Inv(Dep),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheEntry {
    pub ret: u64,
    /// The services the cached call's subtree visited (`vs(ca)`), stored with the value.
    pub visited: Services,
    pub origin: ReqId,
    /// TTL baseline: when the entry expires.
    pub expires: Option<Time>,
}

/// The timers of a service.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    /// The CM processes the head of its queue.
    CmStep,
    /// A write of this request takes effect.
    WriteDone(ReqId),
    /// A late save lands in the cache: caller-side (TTL baseline, `caller_side_save` mutant) or
    /// overtaken by an Inv (`non_fifo_save` mutant).
    CallerSave(CallArgs, CacheEntry),
    /// The wrapper's work on the critical path (a Start or End enqueue, a lookup) is done.
    Resume(ReqId),
    /// The batch for this upstream unit is due (its timeout).
    BatchFlush(u32),
}

/// What the CM did, for the figures: its work and the size of its state over time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CmStats {
    /// Queue items processed.
    pub events: u64,
    /// Time spent on them and on sending upstream.
    pub busy_ns: u64,
    pub state_max: usize,
    /// The state's size integrated over time (entries × ns) since the CM first worked.
    state_area: u128,
    state_from: Option<Time>,
    state_last: usize,
    state_at: Time,
}

impl CmStats {
    /// The state's size averaged over the time since the CM first worked.
    pub fn state_mean(&self) -> f64 {
        match self.state_from {
            Some(from) if self.state_at > from => self.state_area as f64 / (self.state_at - from) as f64,
            _ => self.state_last as f64,
        }
    }

    fn sample(&mut self, now: Time, len: usize) {
        if self.state_from.is_none() {
            self.state_from = Some(now);
            self.state_at = now;
        }
        self.state_area += self.state_last as u128 * (now - self.state_at) as u128;
        self.state_at = now;
        self.state_last = len;
        self.state_max = self.state_max.max(len);
    }
}

/// A request this service is running.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Running {
    ca: CallArgs,
    /// The calling unit, `None` for a client request.
    caller: Option<u32>,
    reply: (NodeId, CallTag),
    ro: bool,
    next_step: usize,
    /// The step whose wrapper cost (`enqueue_ns`, `lookup_ns`) is paid; `steps.len()` stands
    /// for the return.
    paid_step: Option<usize>,
    /// Inherited and accumulated visited services (checked before a lookup; V1–V3).
    visited_in: Services,
    /// The services this request's own subtree visited (returned and stored with a Save).
    visited_sub: Services,
    ret: u64,
    deps: BTreeSet<Dep>,
    events: Vec<Event>,
    /// The outstanding fan-out: one slot per branch.
    branches: Vec<Option<Event>>,
    branch_rets: Vec<u64>,
    outstanding: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ServiceNode {
    /// The service this node runs a shard of, and the unit (node) it is.
    pub me: u32,
    pub unit: u32,
    pub app: Arc<App>,
    pub config: Arc<Config>,
    /// Every fixed node (units, then store nodes), by index.
    pub nodes: Arc<Vec<NodeId>>,
    /// The store of an unsharded service (a sharded one's lives in its store node).
    pub store: BTreeMap<StoreKey, u64>,
    pub cache: BTreeMap<CallArgs, CacheEntry>,
    next_req: u64,
    running: BTreeMap<ReqId, Running>,
    queue: VecDeque<CmItem>,
    cm_busy: bool,
    history: VecDeque<Mark>,
    /// `saved[dep][caller]`: the calls of this shard the caller (a unit) has cached that depend
    /// on dep.
    saved: BTreeMap<Dep, BTreeMap<u32, BTreeSet<CallArgs>>>,
    /// LRU order of the cache (kept when it has a capacity) and of `saved` (with a limit).
    cache_lru: Lru<CallArgs>,
    deps_lru: Lru<Dep>,
    /// Saves and Invs waiting for each upstream unit (with batching).
    batches: BTreeMap<u32, Batch>,
    /// When the CM is next free: its sends upstream take its time too.
    cm_free_at: Time,
    pub stats: CmStats,
}

impl ServiceNode {
    pub fn new(unit: u32, app: Arc<App>, config: Arc<Config>, nodes: Arc<Vec<NodeId>>) -> ServiceNode {
        ServiceNode {
            me: app.units[unit as usize].0,
            unit,
            app,
            config,
            nodes,
            store: BTreeMap::new(),
            cache: BTreeMap::new(),
            next_req: 0,
            running: BTreeMap::new(),
            queue: VecDeque::new(),
            cm_busy: false,
            history: VecDeque::new(),
            saved: BTreeMap::new(),
            cache_lru: Lru::default(),
            deps_lru: Lru::default(),
            batches: BTreeMap::new(),
            cm_free_at: 0,
            stats: CmStats::default(),
        }
    }

    /// Entries of the CM's history and dependency index (its state, Fig. 15).
    pub fn cm_state_len(&self) -> usize {
        self.history.len() + self.saved.values().flat_map(|m| m.values()).map(|s| s.len()).sum::<usize>()
    }

    pub fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match msg {
            Msg::Request { tag, ca, caller, visited } => self.start_request(now, from, tag, ca, caller, visited, out),
            Msg::Response { tag, ret, visited, record } => self.on_response(now, tag, ret, visited, record, out),
            // saveHandler and invHandler's deletion: applied on arrival, in link order (O7).
            Msg::Save { ca, ret, visited, origin } => self.receive(now, vec![Upstream::Save { ca, ret, visited, origin }], out),
            Msg::InvCalls { cas, since } => self.receive(now, cas.into_iter().map(|ca| Upstream::Inv { ca, since }).collect(), out),
            Msg::Batch { items } => self.receive(now, items, out),
            Msg::ShardInv { key, since } => self.enqueue(now, CmItem::InvKey { key, local: false, since }, out),
            Msg::StoreReply { req, key, value, write } => self.on_store_reply(now, req, key, value, write, out),
            Msg::StoreRead { .. } | Msg::StoreWrite { .. } => unreachable!("store requests go to store nodes"),
        }
    }

    pub fn on_timer(&mut self, now: Time, timer: Timer, out: &mut Outbox<Msg, Timer>) {
        match timer {
            Timer::CmStep => self.cm_step(now, out),
            Timer::CallerSave(ca, entry) => self.cache_put(ca, entry),
            Timer::Resume(id) => self.advance(now, id, out),
            Timer::BatchFlush(unit) => self.flush(now, unit, out),
            Timer::WriteDone(id) => {
                let key = self.apply_write(id);
                if !self.config.inv_before_write {
                    self.post_write(now, key, out);
                }
                self.running.get_mut(&id).expect("a write's request is running").next_step += 1;
                self.advance(now, id, out);
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // The wrapper and the handler

    #[allow(clippy::too_many_arguments)]
    fn start_request(
        &mut self,
        now: Time,
        from: NodeId,
        tag: CallTag,
        ca: CallArgs,
        caller: Option<u32>,
        visited: Services,
        out: &mut Outbox<Msg, Timer>,
    ) {
        self.next_req += 1;
        let id = ReqId::new(self.unit, self.next_req);
        let ro = self.app.endpoint(ca.to).ro;
        let me = 1 << self.me;
        // V1 and V2: the request has visited its own service and starts from its caller's set.
        let visited_in = if self.config.visited_checks { visited | me } else { me };
        let running = Running {
            ca,
            caller,
            reply: (from, tag),
            ro,
            next_step: 0,
            paid_step: None,
            visited_in,
            visited_sub: me,
            ret: super::app::seed(ca),
            deps: BTreeSet::new(),
            events: Vec::new(),
            branches: Vec::new(),
            branch_rets: Vec::new(),
            outstanding: 0,
        };
        self.running.insert(id, running);
        // preReqStart: Start is in the queue before the handler's first step (O1).
        if ro && caller.is_some() && self.config.mucache() && !self.config.start_at_return {
            self.enqueue(now, CmItem::Start { cid: id }, out);
        }
        self.advance(now, id, out);
    }

    /// Runs the request's steps until it waits (a call, a slow write) or returns.
    fn advance(&mut self, now: Time, id: ReqId, out: &mut Outbox<Msg, Timer>) {
        let store_node = self.store_node();
        loop {
            let cost = self.wrapper_cost(id);
            let r = self.running.get_mut(&id).expect("running");
            if cost > 0 && r.paid_step != Some(r.next_step) {
                r.paid_step = Some(r.next_step);
                out.set_timer(Timer::Resume(id), cost);
                return;
            }
            let steps = &self.app.endpoint(r.ca.to).steps;
            let Some(step) = steps.get(r.next_step) else {
                self.finish(now, id, out);
                return;
            };
            let arg = step.arg(r.ca.arg);
            match step {
                &Step::Read { name, .. } => {
                    let key = StoreKey { name, arg };
                    if r.ro {
                        r.deps.insert(Dep::Key(key));
                    }
                    if let Some(store) = store_node {
                        out.send(store, Msg::StoreRead { req: id, key });
                        return;
                    }
                    let value = self.store.get(&key).copied();
                    r.ret = super::app::mix(r.ret, value.unwrap_or(0));
                    r.events.push(Event::Read { key, value });
                    r.next_step += 1;
                }
                &Step::Write { name, .. } => {
                    let key = StoreKey { name, arg };
                    if self.config.inv_before_write {
                        // Mutant: Inv(k) before the write takes effect (X9).
                        self.enqueue(now, CmItem::InvKey { key, local: true, since: now }, out);
                    }
                    if let Some(store) = store_node {
                        out.send(store, Msg::StoreWrite { req: id, key });
                        return;
                    }
                    if self.config.write_ns > 0 {
                        out.set_timer(Timer::WriteDone(id), self.config.write_ns);
                        return;
                    }
                    let key = self.apply_write(id);
                    if !self.config.inv_before_write {
                        self.post_write(now, key, out);
                    }
                    self.running.get_mut(&id).expect("running").next_step += 1;
                }
                Step::Call { targets, .. } => {
                    let targets = targets.clone();
                    if self.issue_calls(now, id, &targets, arg, out) {
                        return;
                    }
                }
            }
        }
    }

    /// The write of request `id`'s current step takes effect; its value is the key's next
    /// version, so values are unique per key and ordered as the store committed them.
    fn apply_write(&mut self, id: ReqId) -> StoreKey {
        let r = self.running.get_mut(&id).expect("running");
        let step = &self.app.endpoint(r.ca.to).steps[r.next_step];
        let Step::Write { name, .. } = *step else { unreachable!("the current step is a write") };
        let key = StoreKey { name, arg: step.arg(r.ca.arg) };
        let value = self.store.get(&key).map_or(1, |v| v + 1);
        self.store.insert(key, value);
        r.ret = super::app::mix(r.ret, value);
        r.events.push(Event::Write { key, value });
        key
    }

    /// postWrite: Inv(k) once the write took effect (O2).
    fn post_write(&mut self, now: Time, key: StoreKey, out: &mut Outbox<Msg, Timer>) {
        if self.config.mucache() {
            self.enqueue(now, CmItem::InvKey { key, local: true, since: now }, out);
        }
    }

    /// The wrapper's time on the critical path before request `id`'s current step (or its
    /// return): a synchronous Start enqueue before the first step and an End enqueue before
    /// returning (`enqueue_ns` each, read-only requests with a caller), and a cache lookup
    /// before a call to a read-only endpoint (`lookup_ns`). Fig. 17's constant overhead.
    fn wrapper_cost(&self, id: ReqId) -> Time {
        let c = &self.config;
        let r = &self.running[&id];
        let steps = &self.app.endpoint(r.ca.to).steps;
        let start_end = r.ro && r.caller.is_some() && c.mucache();
        let mut cost = 0;
        if start_end {
            // Before the first step (Start) and before returning (End): both for no steps.
            cost += c.enqueue_ns * (u64::from(r.next_step == 0) + u64::from(r.next_step == steps.len()));
        }
        if let Some(Step::Call { targets, .. }) = steps.get(r.next_step)
            && c.caching()
            && targets.iter().any(|t| self.app.endpoint(*t).ro)
        {
            cost += c.lookup_ns;
        }
        cost
    }

    /// A sharded service's store node; `None` when the store is this node's own.
    fn store_node(&self) -> Option<NodeId> {
        self.app.services[self.me as usize].store_node.map(|n| self.nodes[n as usize])
    }

    /// The store node answered the current step's read or write: it took effect there.
    fn on_store_reply(&mut self, now: Time, id: ReqId, key: StoreKey, value: Option<u64>, write: bool, out: &mut Outbox<Msg, Timer>) {
        let r = self.running.get_mut(&id).expect("a store reply answers a running request");
        r.ret = super::app::mix(r.ret, value.unwrap_or(0));
        if write {
            r.events.push(Event::Write { key, value: value.expect("a write has a version") });
        } else {
            r.events.push(Event::Read { key, value });
        }
        r.next_step += 1;
        if write && !self.config.inv_before_write {
            self.post_write(now, key, out);
        }
        self.advance(now, id, out);
    }

    /// preCall for each branch: a hit answers at once, a miss sends the call. Returns true
    /// when the request now waits for responses.
    fn issue_calls(&mut self, now: Time, id: ReqId, targets: &[EndpointRef], arg: u64, out: &mut Outbox<Msg, Timer>) -> bool {
        let r = self.running.get_mut(&id).expect("running");
        r.branches = vec![None; targets.len()];
        r.branch_rets = vec![0; targets.len()];
        r.outstanding = 0;
        // Every branch looks the cache up with the visited set from before the fan-out.
        let visited_at_call = r.visited_in;
        for (b, &to) in targets.iter().enumerate() {
            let ca = CallArgs { to, arg };
            if r.ro {
                r.deps.insert(Dep::Call(ca));
            }
            let callee_ro = self.app.endpoint(to).ro;
            let hit = self.cache.get(&ca).filter(|e| {
                callee_ro
                    && self.config.caching()
                    && e.expires.is_none_or(|t| now < t)
                    && (!self.config.visited_checks || e.visited & visited_at_call == 0)
            });
            match hit {
                Some(e) => {
                    out.count("mucache_hit");
                    out.observe(metrics::CALL_CACHE_HIT, 1);
                    out.observe(metrics::REVISIT_HIT, u64::from(e.visited & visited_at_call != 0));
                    if self.config.cache_entries_max.is_some() {
                        self.cache_lru.touch(ca);
                    }
                    r.branches[b] = Some(Event::Hit { ca, ret: e.ret, origin: e.origin });
                    r.branch_rets[b] = e.ret;
                    // V3: a hit visits the services its entry's subtree visited.
                    r.visited_in |= e.visited;
                    r.visited_sub |= e.visited;
                }
                None => {
                    if callee_ro && self.config.caching() {
                        out.count("mucache_miss");
                        out.observe(metrics::CALL_CACHE_HIT, 0);
                    }
                    r.outstanding += 1;
                    let tag = CallTag { parent: id, branch: b as u32 };
                    let visited = visited_at_call;
                    let unit = self.app.route(ca, id.number() + b as u64);
                    out.send(self.nodes[unit as usize], Msg::Request { tag, ca, caller: Some(self.unit), visited });
                }
            }
        }
        if r.outstanding > 0 {
            return true;
        }
        self.join_branches(id);
        false
    }

    /// Every branch of the current call step answered: fold them in and go on.
    fn join_branches(&mut self, id: ReqId) {
        let r = self.running.get_mut(&id).expect("running");
        for ret in std::mem::take(&mut r.branch_rets) {
            r.ret = super::app::mix(r.ret, ret);
        }
        let mut branches: Vec<Event> = std::mem::take(&mut r.branches).into_iter().map(|b| b.expect("every branch answered")).collect();
        if branches.len() == 1 {
            r.events.push(branches.pop().expect("one"));
        } else {
            r.events.push(Event::Par(branches));
        }
        r.next_step += 1;
    }

    fn on_response(&mut self, now: Time, tag: CallTag, ret: u64, visited: Services, record: Box<CallRecord>, out: &mut Outbox<Msg, Timer>) {
        let id = tag.parent;
        let ca = record.ca;
        let callee_ro = self.app.endpoint(ca.to).ro;
        // The TTL baseline, and the caller-side-save mutant (Fig. 6), save at the caller.
        if callee_ro && (self.config.ttl_ns.is_some() || self.config.caller_side_save) {
            let delay = self.config.save_delay_ns;
            let expires = self.config.ttl_ns.and_then(|ttl| (ttl != u64::MAX).then_some(now.saturating_add(delay).saturating_add(ttl)));
            let entry = CacheEntry { ret, visited, origin: record.req, expires };
            if delay == 0 {
                self.cache_put(ca, entry);
            } else {
                // Saved asynchronously (as the paper's TTL baseline does): a response still
                // being saved when an invalidation arrives is the race of Fig. 6.
                out.set_timer(Timer::CallerSave(ca, entry), delay);
            }
        }
        let r = self.running.get_mut(&id).expect("a response answers a running request");
        r.visited_in |= visited;
        r.visited_sub |= visited;
        r.branch_rets[tag.branch as usize] = ret;
        r.branches[tag.branch as usize] = Some(Event::Call(record));
        r.outstanding -= 1;
        if r.outstanding == 0 {
            self.join_branches(id);
            self.advance(now, id, out);
        }
    }

    /// preReturn: End to the CM for a read-only call, then the response.
    fn finish(&mut self, now: Time, id: ReqId, out: &mut Outbox<Msg, Timer>) {
        let r = self.running.remove(&id).expect("running");
        if r.ro
            && self.config.mucache()
            && let Some(caller) = r.caller
        {
            if self.config.start_at_return {
                // Mutant: the Start enqueue lands only now (Fig. 20).
                self.enqueue(now, CmItem::Start { cid: id }, out);
            }
            let end = CmItem::End { cid: id, ca: r.ca, deps: r.deps, caller, ret: r.ret, visited: r.visited_sub };
            self.enqueue(now, end, out);
        }
        let record = Box::new(CallRecord { req: id, ca: r.ca, ret: r.ret, events: r.events });
        let (to, tag) = r.reply;
        out.send(to, Msg::Response { tag, ret: r.ret, visited: r.visited_sub, record });
    }
}
