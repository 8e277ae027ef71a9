//! The controller: the paper's coordination service (ZooKeeper) with the App Controller, as one
//! node on its own machine (`ctl`) with its own link delays (§III-F, Fig. 6).
//!
//! - **Detection.** Every `heartbeat_ns` it pings every cache agent of the domain; an agent that
//!   has not answered for `heartbeat_timeout_ns` is declared failed.
//! - **Notification and fencing.** It tells every surviving agent and storage `Fail(f)`. Each
//!   fences `f` (drops whatever `f` still has on the wire) and acknowledges once it has done its
//!   part: an agent when it has evicted the lines `f` homed and drained its own direct writes to
//!   them, storage at once.
//! - **End of recovery.** With every acknowledgment in, it tells the survivors `Recovered(f)`:
//!   the ring without `f` is in force, and `f`'s keys can be read from storage again through
//!   their new homes. The paper's rule for the critical case (a home that failed with a write
//!   stored but not every copy invalidated) is this barrier: "no cache instance is allowed to
//!   read the global storage for a data item that was homed in the failed node ... until the
//!   recovery is complete".
//!
//! - **Departures** (`params.leaves`, `membership.rs`): at each scheduled time it tells every
//!   agent `Leave(d)`; with every acknowledgment in (the first barrier) it tells `d` to hand
//!   its directory over (`Transfer`), and on `LeaveDone` it tells the others `Left(d)` (the
//!   second barrier) and stops pinging `d`. One domain change at a time: a departure waits
//!   for a recovery in progress, and no failure is declared during a departure (a
//!   participant that crashes stalls it: calls then time out, but no stale value is served).
//!
//! - **Joins** (`params.joins`, a crashed agent's restart, an agent declared failed while
//!   alive; `membership.rs`): it tells the joiner `Join(j)` with the members, and on its
//!   acknowledgment every member; with every acknowledgment in (the first barrier) it tells
//!   `j`'s clockwise successor to hand over `j`'s keys (`Transfer(j)`), and on `JoinDone` it
//!   tells everyone `Joined(j)` (the second barrier) and pings `j` from then on. An agent that
//!   asks to rejoin while still counted live (it restarted before its failure was detected) is
//!   declared failed first: its recovery comes before its join.
//!
//! Departures and joins are domain changes, run one at a time in the order they are due; a
//! departure that would empty the domain, or a scheduled join of a member, is skipped.
//!
//! One failure is recovered at a time; another detected meanwhile waits its turn, and the
//! acknowledgment it can no longer send is not awaited. The suspect itself is told too (it may
//! be alive but slow): it then drops its lines and fails its functions' calls.

use super::msg::{Msg, Tag, Timer};
use super::ring::Ring;
use causim_sim::history::Key;
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Controller {
    storage: NodeId,
    heartbeat_ns: Time,
    timeout_ns: Time,
    /// The live agents and when each last answered a heartbeat.
    heard: BTreeMap<NodeId, Time>,
    /// The failure being recovered and the acknowledgments it waits for.
    recovery: Option<(NodeId, BTreeSet<NodeId>)>,
    /// Ghost (I8): the write counts the acknowledgments report (storage's at its fence, the
    /// agents' for the writes they drained), passed on at the end.
    applied: BTreeMap<Key, u64>,
    /// Failures detected during another's recovery.
    next: VecDeque<NodeId>,
    /// The scheduled departures and joins, by `Timer::Leave` / `Timer::Join` index, with
    /// their times.
    leaves: Vec<(NodeId, Time)>,
    joins: Vec<(NodeId, Time)>,
    /// The domain change in progress.
    change: Option<InProgress>,
    /// Domain changes due during another (or during a recovery).
    changes: VecDeque<Change>,
    /// Agents that asked to rejoin (they restarted, or were declared failed while alive).
    rejoining: BTreeSet<NodeId>,
    /// The time of the latest input.
    now: Time,
    /// Ghost (I8): every write count reported to it, for joiners.
    ghost: BTreeMap<Key, u64>,
    /// The global commit lock of transactions (§IV-A): its holder (agent, function, ticket) and the
    /// requests waiting for it, granted in arrival order.
    lock_holder: Option<(NodeId, NodeId, Tag)>,
    lock_queue: VecDeque<(NodeId, NodeId, Tag)>,
}

/// A domain change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Change {
    Leave(NodeId),
    Join(NodeId),
}

/// The domain change in progress: the acknowledgments its current phase waits for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InProgress {
    change: Change,
    acks: BTreeSet<NodeId>,
    phase: Phase,
    /// When it started.
    since: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    /// A join: the joiner has been told and has not acknowledged yet.
    Joiner,
    /// The first barrier: every member has been told.
    Members,
    /// The entries move: the departing agent, or the joiner's successor, has been told to hand
    /// them over.
    Transfer,
}

impl Controller {
    pub fn new(
        agents: &[NodeId],
        storage: NodeId,
        heartbeat_ns: Time,
        timeout_ns: Time,
        leaves: Vec<(NodeId, Time)>,
        joins: Vec<(NodeId, Time)>,
    ) -> Controller {
        Controller {
            storage,
            heartbeat_ns,
            timeout_ns,
            heard: agents.iter().map(|&a| (a, 0)).collect(),
            recovery: None,
            applied: BTreeMap::new(),
            next: VecDeque::new(),
            leaves,
            joins,
            change: None,
            changes: VecDeque::new(),
            rejoining: BTreeSet::new(),
            now: 0,
            ghost: BTreeMap::new(),
            lock_holder: None,
            lock_queue: VecDeque::new(),
        }
    }

    pub fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.now = now;
        for t in self.heard.values_mut() {
            *t = now;
        }
        self.heartbeat(now, out);
        for (i, &(_, at)) in self.leaves.iter().enumerate() {
            out.set_timer(Timer::Leave(i), at.saturating_sub(now));
        }
        for (i, &(_, at)) in self.joins.iter().enumerate() {
            out.set_timer(Timer::Join(i), at.saturating_sub(now));
        }
    }

    /// A scheduled departure is due.
    pub fn leave_due(&mut self, now: Time, i: usize, out: &mut Outbox<Msg, Timer>) {
        self.now = now;
        self.changes.push_back(Change::Leave(self.leaves[i].0));
        self.next_change(out);
    }

    /// A scheduled join is due.
    pub fn join_due(&mut self, now: Time, i: usize, out: &mut Outbox<Msg, Timer>) {
        self.now = now;
        self.changes.push_back(Change::Join(self.joins[i].0));
        self.next_change(out);
    }

    /// Starts the next domain change due, unless one or a recovery is in progress.
    fn next_change(&mut self, out: &mut Outbox<Msg, Timer>) {
        while self.change.is_none() && self.recovery.is_none() {
            let Some(change) = self.changes.pop_front() else { return };
            match change {
                Change::Leave(node) if self.heard.contains_key(&node) && self.heard.len() > 1 => self.start_leave(node, out),
                Change::Leave(_) => {
                    // It failed or left before its turn (its keys have moved already), or it is
                    // the last member.
                    out.count("concord_leave_skipped");
                }
                Change::Join(node) if !self.heard.contains_key(&node) => self.start_join(node, out),
                Change::Join(node) if self.rejoining.contains(&node) => {
                    // It restarted before its failure was detected: recover from it first.
                    self.changes.push_front(change);
                    self.declare_failed(node, out);
                }
                Change::Join(_) => out.count("concord_join_skipped"),
            }
        }
    }

    fn start_leave(&mut self, node: NodeId, out: &mut Outbox<Msg, Timer>) {
        out.count("concord_leave");
        out.trace("LeaveStart", || format!("{{\"node\":{}}}", node.index()));
        let acks: BTreeSet<NodeId> = self.heard.keys().copied().collect();
        for &a in &acks {
            out.send(a, Msg::Leave { node });
        }
        self.change = Some(InProgress { change: Change::Leave(node), acks, phase: Phase::Members, since: self.now });
    }

    /// Tells the joiner first: the members learn of it only once it has started afresh.
    fn start_join(&mut self, node: NodeId, out: &mut Outbox<Msg, Timer>) {
        out.count("concord_join");
        out.trace("JoinStart", || format!("{{\"node\":{}}}", node.index()));
        self.rejoining.remove(&node);
        let applied = self.ghost.iter().map(|(&k, &n)| (k, n)).collect();
        out.send(node, Msg::Join { node, members: self.heard.keys().copied().collect(), applied });
        self.change = Some(InProgress { change: Change::Join(node), acks: [node].into(), phase: Phase::Joiner, since: self.now });
    }

    /// An acknowledgment of the change in progress.
    fn change_ack(&mut self, from: NodeId, change: Change, out: &mut Outbox<Msg, Timer>) {
        let Some(mut c) = self.change.take() else { return };
        if c.change == change && c.acks.remove(&from) && c.acks.is_empty() && self.next_phase(&mut c, out) {
            self.next_change(out);
            return;
        }
        self.change = Some(c);
    }

    /// Every acknowledgment of the current phase is in: the next phase. True if the change is
    /// over.
    fn next_phase(&mut self, c: &mut InProgress, out: &mut Outbox<Msg, Timer>) -> bool {
        let change = c.change;
        match (change, c.phase) {
            (Change::Join(node), Phase::Joiner) if self.heard.is_empty() => {
                // The whole domain had failed: the joiner is the domain.
                self.heard.insert(node, self.now);
                out.send(node, Msg::Joined { node });
                return true;
            }
            (Change::Join(node), Phase::Joiner) => {
                let members: Vec<NodeId> = self.heard.keys().copied().collect();
                for &a in &members {
                    out.send(a, Msg::Join { node, members: members.clone(), applied: Vec::new() });
                }
                c.acks = members.into_iter().collect();
                c.phase = Phase::Members;
            }
            (Change::Join(node), Phase::Members) => {
                let members: Vec<NodeId> = self.heard.keys().copied().collect();
                let giver = Ring::of(&members).with(node).successor(node);
                out.send(giver, Msg::Transfer { node });
                c.phase = Phase::Transfer;
            }
            (Change::Leave(node), Phase::Members) => {
                out.send(node, Msg::Transfer { node });
                c.phase = Phase::Transfer;
            }
            (_, phase) => unreachable!("an acknowledgment of {change:?} in phase {phase:?}"),
        }
        false
    }

    /// A heartbeat round: declare the silent agents failed, ping the others.
    pub fn heartbeat(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.now = now;
        // A joiner that does not answer (it crashed again, or was never restarted) is given up:
        // nothing has changed anywhere yet.
        if let Some(c) = &self.change
            && c.phase == Phase::Joiner
            && now.saturating_sub(c.since) > self.timeout_ns
        {
            out.count("concord_join_abandoned");
            self.change = None;
            self.next_change(out);
        }
        // Failures are not declared during a departure (one domain change at a time); a
        // participant that crashed stalls it (see the module essay).
        let silent: Vec<NodeId> = match self.change {
            Some(_) => Vec::new(),
            None => self.heard.iter().filter(|&(_, &t)| now.saturating_sub(t) > self.timeout_ns).map(|(&a, _)| a).collect(),
        };
        for a in silent {
            self.declare_failed(a, out);
        }
        for &a in self.heard.keys() {
            out.send(a, Msg::Ping);
        }
        out.set_timer(Timer::Heartbeat, self.heartbeat_ns);
    }

    fn declare_failed(&mut self, failed: NodeId, out: &mut Outbox<Msg, Timer>) {
        self.heard.remove(&failed);
        out.count("concord_failure_detected");
        out.trace("FailureDetected", || format!("{{\"node\":{}}}", failed.index()));
        // The suspect is told too, in case it is alive (it stops serving).
        out.send(failed, Msg::Fail { node: failed });
        if let Some((_, acks)) = &mut self.recovery {
            acks.remove(&failed);
            self.next.push_back(failed);
            self.try_finish(out);
        } else {
            self.start_recovery(failed, out);
        }
    }

    fn start_recovery(&mut self, failed: NodeId, out: &mut Outbox<Msg, Timer>) {
        let acks: BTreeSet<NodeId> = self.heard.keys().copied().chain([self.storage]).collect();
        for &a in &acks {
            out.send(a, Msg::Fail { node: failed });
        }
        self.recovery = Some((failed, acks));
    }

    pub fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        self.now = now;
        match msg {
            Msg::Pong => {
                if let Some(t) = self.heard.get_mut(&from) {
                    *t = now;
                }
            }
            Msg::FailAck { node, applied } => {
                if let Some((failed, acks)) = &mut self.recovery
                    && *failed == node
                {
                    acks.remove(&from);
                    for (key, n) in applied {
                        let known = self.applied.entry(key).or_insert(0);
                        *known = (*known).max(n);
                    }
                    self.try_finish(out);
                }
            }
            Msg::LeaveAck { node } => self.change_ack(from, Change::Leave(node), out),
            Msg::JoinAck { node } => self.change_ack(from, Change::Join(node), out),
            Msg::LeaveDone { node, applied } => {
                self.learn(&applied);
                self.change = None;
                self.heard.remove(&node);
                out.trace("Left", || format!("{{\"node\":{}}}", node.index()));
                for &a in self.heard.keys() {
                    out.send(a, Msg::Left { node, applied: applied.clone() });
                }
                self.next_change(out);
            }
            Msg::JoinDone { node } => {
                self.change = None;
                self.heard.insert(node, now);
                out.trace("Joined", || format!("{{\"node\":{}}}", node.index()));
                for &a in self.heard.keys() {
                    out.send(a, Msg::Joined { node });
                }
                self.next_change(out);
            }
            Msg::ExtWrite { key, .. } => {
                // Storage's listener reports an external write: to the key's home in this view
                // (an agent whose view differs parks it, or hands it on, as any request).
                let home = Ring::of(&self.heard.keys().copied().collect::<Vec<_>>()).home(key);
                out.send(home, msg);
            }
            Msg::Rejoin => {
                // A restarted agent, or one declared failed while alive, asks to come back.
                out.count("concord_rejoin");
                self.rejoining.insert(from);
                self.changes.push_back(Change::Join(from));
                self.next_change(out);
            }
            Msg::LockReq { client, ticket } => {
                if self.lock_holder.is_none() {
                    self.lock_holder = Some((from, client, ticket));
                    out.send(from, Msg::LockGrant { client, ticket });
                } else {
                    self.lock_queue.push_back((from, client, ticket));
                }
            }
            Msg::LockRelease { client, ticket } => {
                let request = (from, client, ticket);
                if self.lock_holder == Some(request) {
                    self.lock_holder = self.lock_queue.pop_front();
                    if let Some((agent, client, ticket)) = self.lock_holder {
                        out.send(agent, Msg::LockGrant { client, ticket });
                    }
                } else {
                    // A squashed transaction withdraws its request before its grant.
                    let at = self.lock_queue.iter().position(|r| *r == request).expect("a release names a lock request");
                    self.lock_queue.remove(at);
                }
            }
            other => unreachable!("the controller does not handle {other:?}"),
        }
    }

    fn learn(&mut self, applied: &[(Key, u64)]) {
        for &(key, n) in applied {
            let known = self.ghost.entry(key).or_insert(0);
            *known = (*known).max(n);
        }
    }

    fn try_finish(&mut self, out: &mut Outbox<Msg, Timer>) {
        let Some((failed, acks)) = &self.recovery else { return };
        if !acks.is_empty() {
            return;
        }
        let failed = *failed;
        self.recovery = None;
        out.trace("Recovered", || format!("{{\"node\":{}}}", failed.index()));
        let applied: Vec<(Key, u64)> = std::mem::take(&mut self.applied).into_iter().collect();
        self.learn(&applied);
        for &a in self.heard.keys() {
            out.send(a, Msg::Recovered { node: failed, applied: applied.clone() });
        }
        if let Some(next) = self.next.pop_front() {
            self.start_recovery(next, out);
        }
        self.next_change(out);
    }
}
