//! A cache agent's part in recovering from another agent's failure (§III-F, §III-H), between
//! the controller's `Fail(f)` and its `Recovered(f)` (`controller.rs`).
//!
//! On `Fail(f)`:
//! - **Fencing (I7).** Whatever `f` still has on the wire is dropped from now on.
//! - **Evicting `f`'s keys.** `f`'s directory is lost, so every line of a key homed at `f` goes
//!   (paper: "the cache agents in the domain evict from their caches all the data items homed in
//!   the failed cache instance"). A read in flight to `f` is cancelled and reissued when the
//!   recovery ends (paper, case (b)); a write in flight to `f` may or may not have reached
//!   storage, so its function is told the call failed (its workflow retries with fresh values,
//!   and the history records the write as indeterminate). A direct write of this agent (E_W)
//!   to a key `f` homed is drained first: the acknowledgment to the controller waits for
//!   storage's, so no such write can land after a new home has started serving the key.
//! - Calls for `f`'s keys wait (`parked`) until the recovery ends; a read of a line still held
//!   (only an E_W line, the agent's own write) is served.
//!
//! On `Recovered(f)` (every survivor has done the above and storage has fenced `f`):
//! - the ring without `f` is in force: `f`'s keys move to its clockwise successor, which starts
//!   with no entries for them ("the directory is not rebuilt": entries come back through misses,
//!   and no copy of those keys is left to track);
//! - as a home, the agent drops `f` from its entries, treats `f`'s missing invalidation acks as
//!   received and its missing forwarded-read answers as "don't have it" (storage then serves the
//!   read, and `f`'s own direct write, if any, has landed or been fenced by now);
//! - parked calls start, through the new homes.
//!
//! An agent told that it failed itself (it was only slow) drops everything and fails its
//! functions' calls from then on: the controller has reassigned its keys.

use super::agent::{Agent, Dir, HomeRequest, Pending, Request, Step};
use super::msg::{Msg, Timer};
use causim_sim::history::Key;
use causim_sim::node::{NodeId, Outbox};
use std::collections::BTreeSet;

impl Agent {
    pub(super) fn on_fail(&mut self, controller: NodeId, failed: NodeId, out: &mut Outbox<Msg, Timer>) {
        out.trace("Fail", || format!("{{\"node\":{}}}", failed.index()));
        self.fenced.insert(failed);
        self.failing.insert(failed);
        self.ever_failed.insert(failed);
        self.welcomed.remove(&failed);
        // Home side: transactions `failed` asked for finish, but their answers would reach its
        // next incarnation.
        for ops in self.active.values() {
            self.orphaned.extend(ops.iter().filter(|o| o.requester == failed).map(|o| o.tag));
        }
        // Cache side: the lines and calls of `failed`'s keys.
        let keys: BTreeSet<Key> = self.lines.keys().chain(self.pending.keys()).copied().filter(|&k| self.ring.home(k) == failed).collect();
        for key in keys {
            match self.pending.get(&key).cloned() {
                Some(Pending::OwnerWrite { .. }) => {
                    // Drained: the line stays until storage acknowledges. What `failed` asked
                    // of it as the home is void.
                    self.deferred.remove(&key);
                    continue;
                }
                Some(Pending::Read { client }) => {
                    self.pending.remove(&key);
                    self.parked.entry(key).or_default().push_back(Request { client, write: None });
                }
                Some(Pending::Write { client, .. }) => {
                    self.pending.remove(&key);
                    out.count("concord_call_failed");
                    out.send(client, Msg::CallFailed { key });
                }
                None => {}
            }
            if self.rules.evict_on_failure && self.lines.remove(&key).is_some() {
                out.count("concord_failure_eviction");
            }
            if let Some(waiting) = self.waiting.remove(&key) {
                self.parked.entry(key).or_default().extend(waiting);
            }
        }
        // Home side: `failed`'s queued requests are void.
        self.queued.retain(|_, q| {
            q.retain(|r| r.requester != failed);
            !q.is_empty()
        });
        self.unacked.insert(failed, controller);
        self.try_ack_failures(out);
    }

    /// Acknowledges each failure whose keys this agent no longer writes directly.
    pub(super) fn try_ack_failures(&mut self, out: &mut Outbox<Msg, Timer>) {
        let done: Vec<NodeId> = self
            .unacked
            .keys()
            .copied()
            .filter(|&f| !self.pending.iter().any(|(&k, p)| matches!(p, Pending::OwnerWrite { .. }) && self.ring.home(k) == f))
            .collect();
        for f in done {
            let controller = self.unacked.remove(&f).expect("listed");
            // Ghost (I8): what this agent knows of `f`'s keys, its drained writes included.
            let applied = self.known.iter().filter(|&(&k, _)| self.ring.home(k) == f).map(|(&k, &n)| (k, n)).collect();
            out.send(controller, Msg::FailAck { node: f, applied });
        }
    }

    /// True when a call for `key` must wait for the end of a recovery: its home failed and
    /// the call needs the home (a read of a line still held does not).
    pub(super) fn must_park(&self, key: Key, write: bool) -> bool {
        self.failing.contains(&self.ring.home(key)) && (write || !self.lines.contains_key(&key))
    }

    pub(super) fn on_recovered(&mut self, failed: NodeId, applied: Vec<(Key, u64)>, out: &mut Outbox<Msg, Timer>) {
        if !self.failing.remove(&failed) {
            return;
        }
        for (key, n) in applied {
            self.learn(key, n);
        }
        out.trace("Recovered", || format!("{{\"node\":{}}}", failed.index()));
        self.ring = self.ring.without(failed);
        // Home side: entries and transactions that name `failed`.
        let keys: Vec<Key> = self.directory.keys().copied().collect();
        for key in keys {
            let keep = match self.directory.get_mut(&key).expect("listed") {
                Dir::Shared(sharers) => {
                    sharers.remove(&failed);
                    !sharers.is_empty()
                }
                Dir::Exclusive(owner) => *owner != failed,
            };
            if !keep {
                self.directory.remove(&key);
                self.directory_used.remove(&key);
            }
        }
        let waiting_on_failed: Vec<(Key, u64, bool)> = self
            .active
            .iter()
            .flat_map(|(&k, ops)| ops.iter().map(move |o| (k, o)))
            .filter_map(|(k, o)| match &o.step {
                Step::Forward { owner } if *owner == failed => Some((k, o.tag, true)),
                Step::Write { acks, .. } | Step::Recall { acks } if acks.contains(&failed) => Some((k, o.tag, false)),
                _ => None,
            })
            .collect();
        for (key, tag, forward) in waiting_on_failed {
            if forward {
                self.on_owner_data(key, tag, None, out);
            } else {
                self.on_invalidate_ack(failed, key, tag, out);
            }
        }
        self.replay_home_parked(out);
        // Cache side: the calls that waited.
        for (key, reqs) in std::mem::take(&mut self.parked) {
            for req in reqs {
                self.request(key, req, out);
            }
        }
    }

    /// A directory request for a key not homed here: a requester saw the end of a recovery, or
    /// a departure (`membership.rs`), that this agent has not seen yet, after which the key is
    /// homed here. True if it was parked.
    pub(super) fn park_home_request(&mut self, key: Key, req: &HomeRequest) -> bool {
        let home = self.ring.home(key);
        let comes_here = self.ring.agents() > 1 && self.ring.without(home).home(key) == self.id;
        if comes_here {
            self.home_parked.push_back((key, req.clone()));
        }
        comes_here
    }

    /// This agent was declared failed: it drops its lines and directory, and every call of its
    /// functions fails from now on.
    pub(super) fn on_removed(&mut self, out: &mut Outbox<Msg, Timer>) {
        out.count("concord_removed_alive");
        self.removed = true;
        let mut clients: Vec<(Key, NodeId)> = Vec::new();
        for (&key, p) in &self.pending {
            let (Pending::Read { client } | Pending::Write { client, .. } | Pending::OwnerWrite { client, .. }) = p;
            clients.push((key, *client));
        }
        for (&key, reqs) in self.waiting.iter().chain(self.parked.iter()) {
            clients.extend(reqs.iter().map(|r| (key, r.client)));
        }
        for (key, client) in clients {
            out.send(client, Msg::CallFailed { key });
        }
        *self = self.fresh(self.ring.clone());
        self.removed = true;
        // It is alive: it comes back as a join.
        if let Some(c) = self.controller {
            out.send(c, Msg::Rejoin);
        }
    }

    /// The machine restarted after a crash: the agent lost everything, and the domain has
    /// removed it (or will, its failure recovered from first); it asks to come back as a join.
    pub fn on_restart(&mut self, out: &mut Outbox<Msg, Timer>) {
        out.trace("Restart", || format!("{{\"node\":{}}}", self.id.index()));
        *self = self.fresh(self.ring.clone());
        self.removed = true;
        if let Some(c) = self.controller {
            out.send(c, Msg::Rejoin);
        }
    }

    /// Outside the domain (declared failed, or restarted): calls fail, and nothing but a join
    /// of this agent is heeded.
    pub(super) fn handle_removed(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match msg {
            Msg::Get { key } | Msg::Put { key, .. } => out.send(from, Msg::CallFailed { key }),
            Msg::Join { node, members, applied } if node == self.id => self.on_join(from, node, members, applied, out),
            _ => out.count("concord_fenced_message"),
        }
    }

    /// I7 failure fencing, as one agent sees it: during a recovery, no line of a failed agent's
    /// key is held but the one an own direct write drains, and no call for such a key is in
    /// flight; after it, the failed agent has left the ring and no entry names it.
    pub(super) fn check_failure_invariants(&self) -> Result<(), String> {
        for (key, line) in &self.lines {
            let home = self.ring.home(*key);
            if self.failing.contains(&home)
                && self.rules.evict_on_failure
                && !matches!(self.pending.get(key), Some(Pending::OwnerWrite { .. }))
            {
                return Err(format!("I7 failure fencing: {:?} holds key {key} ({line:?}) homed at failed {home:?}", self.id));
            }
        }
        for (key, p) in &self.pending {
            let home = self.ring.home(*key);
            if self.failing.contains(&home) && !matches!(p, Pending::OwnerWrite { .. }) {
                return Err(format!("I7 failure fencing: {:?} has {p:?} for key {key} in flight to failed {home:?}", self.id));
            }
        }
        for f in self.fenced.difference(&self.failing).filter(|f| !self.welcomed.contains(f)) {
            if self.ring.contains(*f) {
                return Err(format!("I7 failure fencing: {f:?} recovered but still in {:?}'s ring", self.id));
            }
            if let Some((key, _)) = self.directory.iter().find(|(_, d)| match d {
                Dir::Shared(s) => s.contains(f),
                Dir::Exclusive(o) => o == f,
            }) {
                return Err(format!("I7 failure fencing: {:?}'s entry for key {key} names recovered-from {f:?}", self.id));
            }
        }
        // (Directory requests may wait here for a departure this agent has not seen yet.)
        if self.failing.is_empty() && !self.parked.is_empty() {
            return Err(format!("{:?} has parked calls with no recovery in progress", self.id));
        }
        Ok(())
    }
}
