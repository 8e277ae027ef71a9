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
//! One failure is recovered at a time; another detected meanwhile waits its turn, and the
//! acknowledgment it can no longer send is not awaited. The suspect itself is told too (it may
//! be alive but slow): it then drops its lines and fails its functions' calls.

use super::msg::{Msg, Timer};
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
    /// The scheduled departures, by `Timer::Leave` index, with their times.
    leaves: Vec<(NodeId, Time)>,
    /// The departure in progress: the agent, the first barrier's missing acknowledgments, and
    /// whether it has been told to hand over.
    change: Option<(NodeId, BTreeSet<NodeId>, bool)>,
    /// Departures due during another.
    leave_queue: VecDeque<NodeId>,
}

impl Controller {
    pub fn new(agents: &[NodeId], storage: NodeId, heartbeat_ns: Time, timeout_ns: Time, leaves: Vec<(NodeId, Time)>) -> Controller {
        Controller {
            storage,
            heartbeat_ns,
            timeout_ns,
            heard: agents.iter().map(|&a| (a, 0)).collect(),
            recovery: None,
            applied: BTreeMap::new(),
            next: VecDeque::new(),
            leaves,
            change: None,
            leave_queue: VecDeque::new(),
        }
    }

    pub fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        for t in self.heard.values_mut() {
            *t = now;
        }
        self.heartbeat(now, out);
        for (i, &(_, at)) in self.leaves.iter().enumerate() {
            out.set_timer(Timer::Leave(i), at.saturating_sub(now));
        }
    }

    /// A scheduled departure is due.
    pub fn leave_due(&mut self, i: usize, out: &mut Outbox<Msg, Timer>) {
        self.leave_queue.push_back(self.leaves[i].0);
        self.next_leave(out);
    }

    /// Starts the next departure due, unless a domain change or a recovery is in progress.
    fn next_leave(&mut self, out: &mut Outbox<Msg, Timer>) {
        while self.change.is_none() && self.recovery.is_none() {
            let Some(node) = self.leave_queue.pop_front() else { return };
            if self.heard.contains_key(&node) {
                self.start_leave(node, out);
            } else {
                // It failed before its turn: its keys have been re-homed already.
                out.count("concord_leave_after_failure");
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
        self.change = Some((node, acks, false));
    }

    /// A heartbeat round: declare the silent agents failed, ping the others.
    pub fn heartbeat(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
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
            Msg::LeaveAck { node } => {
                if let Some((d, acks, told)) = &mut self.change
                    && *d == node
                {
                    acks.remove(&from);
                    if acks.is_empty() && !*told {
                        *told = true;
                        out.send(node, Msg::Transfer { node });
                    }
                }
            }
            Msg::LeaveDone { node, applied } => {
                self.change = None;
                self.heard.remove(&node);
                out.trace("Left", || format!("{{\"node\":{}}}", node.index()));
                for &a in self.heard.keys() {
                    out.send(a, Msg::Left { node, applied: applied.clone() });
                }
                self.next_leave(out);
            }
            other => unreachable!("the controller does not handle {other:?}"),
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
        for &a in self.heard.keys() {
            out.send(a, Msg::Recovered { node: failed, applied: applied.clone() });
        }
        if let Some(next) = self.next.pop_front() {
            self.start_recovery(next, out);
        }
        self.next_leave(out);
    }
}
