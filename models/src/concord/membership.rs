//! A cache agent leaving the coherence domain (§III-D, the digest §2.8): the paper's "two-phase
//! commit" between two synchronizations, with the departing agent's directory entries migrated
//! to its clockwise successor, so the other agents' copies of its keys stay valid.
//!
//! The controller (`controller.rs`) drives it, as the coordination service:
//!
//! 1. `Leave(d)` to every agent. The departing agent `d` stops caching: it drops its lines (an
//!    own direct write drains first), installs nothing more, and fails its functions' new
//!    calls (the instance is being destroyed; their workflows are retried elsewhere). Its
//!    directory keeps serving the transactions it has started, and holds new requests. Every
//!    other agent switches to the ring without `d` and acknowledges: the first barrier. The
//!    successor `s` holds requests for `d`'s keys until their entries arrive.
//! 2. `Transfer(d)` once every agent has acknowledged. When `d` has no directory transaction
//!    and no call of its own in flight, it synchronizes with every other agent (`Sync`, an
//!    answer from each: on FIFO links, a grant `d` sent is then delivered, so the new home's
//!    forwarded reads and invalidations cannot overtake it; the fuzzer found that race), and
//!    sends its entries (its own copies gone from them) to
//!    `s` with `DirXfer`, then hands on every held request, and any that still reaches it
//!    later (sent in an older view), as `Moved`. Channels are FIFO, so `s` installs the entries
//!    before it serves a handed-on request. `s` acknowledges.
//! 3. `LeaveDone(d)` to the controller, which tells the others `Left(d)`: the second barrier.
//!    Each removes `d` from its directory entries (`d` holds nothing any more).
//!
//! At every instant at most one agent serves a key's directory (I6): `d` until it sends its
//! entries, `s` once it has them. An agent whose view is older sends to `d`, which hands the
//! request on; one whose view is newer than the successor's reaches `s` first, which holds it
//! until its own view catches up (`park_home_request`). A departed agent still answers
//! invalidations and forwarded reads ("don't have it"), since requests sent before the second
//! barrier may still reach it.
//!
//! Choices where the paper is silent: `d` finishes the directory transactions it has started
//! instead of cancelling them (A8: a read forwarded to `d` is served or handed on, never lost);
//! `d` drains its direct writes before it hands over (A9, leave); `d`'s functions are failed,
//! not served uncached (a storage read next to cached copies would not be linearizable).
//!
//! Joining (`params.joins`, restarts): the reverse, between the same two barriers, with the
//! joiner's clockwise successor in the departing agent's part (it keeps serving the joiner's
//! keys until it hands them over; the joiner holds requests for them until then); see the
//! module essay in `mod.rs`.

use super::agent::{Agent, Dir, HomeRequest, Pending};
use super::msg::{Msg, Timer};
use super::ring::Ring;
use causim_sim::history::Key;
use causim_sim::node::{NodeId, Outbox};
use std::collections::BTreeSet;

/// The progress of a joiner's successor handing the joiner its keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Giving {
    pub joiner: NodeId,
    /// The ring with the joiner, in force here once the entries are sent.
    pub ring: Ring,
    /// The first barrier has passed (`Transfer`).
    pub transfer: bool,
    /// The synchronization before the hand-over (`None`: not started).
    pub syncs: Option<BTreeSet<NodeId>>,
    /// The entries have been sent.
    pub sent: bool,
}

/// The departing agent's progress.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Leaving {
    pub controller: NodeId,
    pub successor: NodeId,
    /// The first barrier has passed (`Transfer`).
    pub transfer: bool,
    /// The synchronization before the hand-over: the agents whose `SyncAck` is awaited
    /// (`None`: not started).
    pub syncs: Option<BTreeSet<NodeId>>,
    /// The entries have been sent.
    pub sent: bool,
}

impl Agent {
    /// `Leave(node)` from the controller.
    pub(super) fn on_leave(&mut self, controller: NodeId, node: NodeId, out: &mut Outbox<Msg, Timer>) {
        out.trace("Leave", || format!("{{\"node\":{}}}", node.index()));
        if node == self.id {
            self.start_leaving(controller, out);
        } else {
            self.apply_leave(node);
            self.replay_home_parked(out);
        }
        out.send(controller, Msg::LeaveAck { node });
    }

    /// Switches to the ring without `node`; its successor waits for its entries.
    fn apply_leave(&mut self, node: NodeId) {
        if !self.ring.contains(node) {
            return;
        }
        let before = self.ring.clone();
        self.ring = self.ring.without(node);
        if before.successor(node) == self.id && !self.received.contains(&node) {
            self.incoming.insert(node, before);
        }
    }

    fn start_leaving(&mut self, controller: NodeId, out: &mut Outbox<Msg, Timer>) {
        let successor = self.ring.successor(self.id);
        self.leaving = Some(Leaving { controller, successor, transfer: false, syncs: None, sent: false });
        let before = self.lines.len();
        self.lines.retain(|k, _| matches!(self.pending.get(k), Some(Pending::OwnerWrite { .. })));
        for _ in self.lines.len()..before {
            out.count("concord_leave_dropped_line");
        }
        // Calls waiting behind a transaction fail when it ends (`start`).
    }

    /// True when this agent is leaving: it caches nothing and starts no call.
    pub(super) fn is_leaving(&self) -> bool {
        self.leaving.is_some()
    }

    /// True once this departing agent has sent its directory entries to its successor (they
    /// are on the wire, or installed there). For checkers that judge which entry tracks a copy.
    pub fn entries_sent(&self) -> bool {
        self.leaving.as_ref().is_some_and(|l| l.sent)
    }

    /// `Transfer(d)`: every agent has switched rings.
    pub(super) fn on_transfer(&mut self, out: &mut Outbox<Msg, Timer>) {
        if let Some(l) = &mut self.leaving {
            l.transfer = true;
        }
        self.try_transfer(out);
    }

    /// Once nothing is in flight here, synchronizes with every other agent (FIFO links: the
    /// grants this home sent are delivered first, so the new home's forwarded reads and
    /// invalidations cannot overtake them), then hands the directory over.
    pub(super) fn try_transfer(&mut self, out: &mut Outbox<Msg, Timer>) {
        let Some(l) = &self.leaving else { return };
        if !l.transfer || l.syncs.is_some() {
            return;
        }
        self.fail_own_held_calls(out);
        if !self.active.is_empty() || !self.pending.is_empty() {
            return;
        }
        let others: BTreeSet<NodeId> = self.ring.members().into_iter().filter(|&a| a != self.id).collect();
        for &a in &others {
            out.send(a, Msg::Sync);
        }
        self.leaving.as_mut().expect("leaving").syncs = Some(others);
        self.hand_over(out);
    }

    /// This agent's own calls held at its own directory (its requests wait for the hand-over,
    /// which waits for its calls) fail, as its new calls do: their workflows retry elsewhere.
    fn fail_own_held_calls(&mut self, out: &mut Outbox<Msg, Timer>) {
        let id = self.id;
        let own: Vec<Key> = self.queued.iter().filter(|(_, q)| q.iter().any(|r| r.requester == id)).map(|(&k, _)| k).collect();
        for key in own {
            let queue = self.queued.get_mut(&key).expect("listed");
            queue.retain(|r| r.requester != id);
            if queue.is_empty() {
                self.queued.remove(&key);
            }
            let mut clients: Vec<NodeId> = self.waiting.remove(&key).into_iter().flatten().map(|r| r.client).collect();
            if let Some(Pending::Read { client } | Pending::Write { client, .. }) = self.pending.get(&key).cloned() {
                self.pending.remove(&key);
                clients.insert(0, client);
            }
            for client in clients {
                out.count("concord_call_failed");
                out.send(client, Msg::CallFailed { key });
            }
        }
    }

    pub(super) fn on_sync_ack(&mut self, from: NodeId, out: &mut Outbox<Msg, Timer>) {
        if let Some(Leaving { syncs: Some(s), .. }) = &mut self.leaving {
            s.remove(&from);
        }
        self.hand_over(out);
    }

    /// Every other agent has answered the synchronization: the entries go to the successor.
    fn hand_over(&mut self, out: &mut Outbox<Msg, Timer>) {
        let Some(l) = &self.leaving else { return };
        if l.sent || !l.syncs.as_ref().is_some_and(|s| s.is_empty()) {
            return;
        }
        let successor = l.successor;
        self.leaving.as_mut().expect("leaving").sent = true;
        let id = self.id;
        let mut entries: Vec<(Key, Dir)> = std::mem::take(&mut self.directory)
            .into_iter()
            .filter_map(|(k, d)| {
                let d = match d {
                    Dir::Shared(mut s) => {
                        s.remove(&id);
                        (!s.is_empty()).then_some(Dir::Shared(s))
                    }
                    Dir::Exclusive(o) => (o != id).then_some(Dir::Exclusive(o)),
                };
                d.map(|d| (k, d))
            })
            .collect();
        self.directory_used.clear();
        if !self.rules.migrate_entries {
            entries.clear();
        }
        let applied = self.known.iter().filter(|&(&k, _)| self.ring.home(k) == id).map(|(&k, &n)| (k, n)).collect();
        out.trace("DirXfer", || format!("{{\"to\":{},\"entries\":{}}}", successor.index(), entries.len()));
        for _ in &entries {
            out.count("concord_migrated_entry");
        }
        out.send(successor, Msg::DirXfer { entries, applied, join: false });
        for (key, queue) in std::mem::take(&mut self.queued) {
            for req in queue {
                self.hand_on(key, req, out);
            }
        }
    }

    /// A directory request reaches a departing agent after (or while) it hands over.
    pub(super) fn hand_on(&mut self, key: Key, req: HomeRequest, out: &mut Outbox<Msg, Timer>) {
        let l = self.leaving.as_ref().expect("leaving");
        if !l.sent {
            self.queued.entry(key).or_default().push_back(req);
            return;
        }
        let applied = self.applied(key);
        out.count("concord_moved_request");
        out.send(l.successor, Msg::Moved { key, requester: req.requester, write: req.write, external: req.external, applied });
    }

    /// `DirXfer` at the successor (the departing agent's entries) or at a joiner (the entries
    /// of the keys it now homes, from its successor).
    pub(super) fn on_dir_xfer(
        &mut self,
        from: NodeId,
        entries: Vec<(Key, Dir)>,
        applied: Vec<(Key, u64)>,
        join: bool,
        out: &mut Outbox<Msg, Timer>,
    ) {
        if !join {
            self.received.insert(from);
            self.apply_leave(from);
        }
        self.incoming.remove(&from);
        for (key, n) in applied {
            self.learn(key, n);
        }
        for (key, dir) in entries {
            let now = self.tick();
            self.directory.insert(key, dir);
            self.directory_used.insert(key, now);
        }
        out.send(from, Msg::DirXferAck);
        self.replay_home_parked(out);
    }

    /// `DirXferAck` at the departing agent: its part is done.
    pub(super) fn on_dir_xfer_ack(&mut self, out: &mut Outbox<Msg, Timer>) {
        let l = self.leaving.as_ref().expect("leaving");
        let applied = self.known.iter().map(|(&k, &n)| (k, n)).collect();
        out.send(l.controller, Msg::LeaveDone { node: self.id, applied });
    }

    /// `Left(d)`: the second barrier. No entry names `d` any more.
    pub(super) fn on_left(&mut self, node: NodeId, applied: Vec<(Key, u64)>, out: &mut Outbox<Msg, Timer>) {
        self.apply_leave(node);
        for (key, n) in applied {
            self.learn(key, n);
        }
        self.departed.insert(node);
        let keys: Vec<Key> = self.directory.keys().copied().collect();
        for key in keys {
            let keep = match self.directory.get_mut(&key).expect("listed") {
                Dir::Shared(sharers) => {
                    sharers.remove(&node);
                    !sharers.is_empty()
                }
                Dir::Exclusive(owner) => *owner != node,
            };
            if !keep {
                self.directory.remove(&key);
                self.directory_used.remove(&key);
            }
        }
        self.replay_home_parked(out);
    }

    // Joining.

    /// `Join(node)` from the controller: to the joiner first, then to every member.
    pub(super) fn on_join(
        &mut self,
        controller: NodeId,
        node: NodeId,
        members: Vec<NodeId>,
        applied: Vec<(Key, u64)>,
        out: &mut Outbox<Msg, Timer>,
    ) {
        out.trace("Join", || format!("{{\"node\":{}}}", node.index()));
        if node == self.id {
            self.start_joining(&members, out);
            for (key, n) in applied {
                self.learn(key, n);
            }
        } else {
            self.apply_join(node, out);
        }
        out.send(controller, Msg::JoinAck { node });
    }

    /// The joiner starts afresh in the ring with itself, waits for its successor's entries for
    /// the keys it now homes, and greets every member and storage before anything else.
    fn start_joining(&mut self, members: &[NodeId], out: &mut Outbox<Msg, Timer>) {
        let members: Vec<NodeId> = members.iter().copied().filter(|&m| m != self.id).collect();
        let ring = Ring::of(&[members.as_slice(), &[self.id]].concat());
        *self = self.fresh(ring.clone());
        self.joining = true;
        self.unwelcomed = members.iter().copied().collect();
        if !members.is_empty() {
            // Otherwise the whole domain failed: no entry survives, and it starts alone.
            self.incoming.insert(ring.successor(self.id), Ring::of(&members));
        }
        for &m in &members {
            out.send(m, Msg::Hello);
        }
        out.send(self.storage, Msg::Hello);
    }

    /// A member learns of a joiner: it is back (not departed), and its clockwise successor
    /// keeps serving the joiner's keys until it hands them over; the others send them to the
    /// joiner from now on (it holds them until the entries arrive).
    fn apply_join(&mut self, node: NodeId, out: &mut Outbox<Msg, Timer>) {
        self.departed.remove(&node);
        self.received.remove(&node);
        self.handed.remove(&node);
        if self.fenced.contains(&node) {
            // Fenced until its greeting arrives (everything its earlier incarnation sent first).
            self.welcomed.insert(node);
        }
        // First of anything sent to the joiner's new incarnation.
        out.send(node, Msg::Welcome);
        if self.ring.contains(node) {
            return;
        }
        let after = self.ring.with(node);
        if after.successor(node) == self.id {
            self.giving = Some(Giving { joiner: node, ring: after, transfer: false, syncs: None, sent: false });
        } else {
            self.ring = after;
        }
    }

    /// `Joined(node)`: the second barrier. The joiner serves its functions from now on.
    pub(super) fn on_joined(&mut self, node: NodeId, out: &mut Outbox<Msg, Timer>) {
        out.trace("Joined", || format!("{{\"node\":{}}}", node.index()));
        if node == self.id {
            self.joining = false;
        }
    }

    /// True when this agent (the joiner's successor) holds new requests for `key`: it is one
    /// of the joiner's and the hand-over has begun.
    pub(super) fn holds_for_joiner(&self, key: Key) -> bool {
        self.giving.as_ref().is_some_and(|g| g.transfer && !g.sent && g.ring.home(key) == g.joiner)
    }

    /// `Transfer(joiner)` at the joiner's successor: every member knows of the joiner.
    pub(super) fn on_give(&mut self, joiner: NodeId, out: &mut Outbox<Msg, Timer>) {
        if let Some(g) = &mut self.giving
            && g.joiner == joiner
        {
            g.transfer = true;
        }
        self.try_give(out);
    }

    /// Once no directory transaction of the joiner's keys is in flight here, synchronizes with
    /// every other agent (its grants are then delivered, so the joiner's messages cannot
    /// overtake them), then hands the entries over.
    pub(super) fn try_give(&mut self, out: &mut Outbox<Msg, Timer>) {
        let Some(g) = &self.giving else { return };
        if !g.transfer || g.syncs.is_some() || self.active.keys().any(|&k| g.ring.home(k) == g.joiner) {
            return;
        }
        let others: BTreeSet<NodeId> = g.ring.members().into_iter().filter(|&a| a != self.id).collect();
        for &a in &others {
            out.send(a, Msg::Sync);
        }
        self.giving.as_mut().expect("giving").syncs = Some(others);
        self.give(out);
    }

    pub(super) fn on_give_sync_ack(&mut self, from: NodeId, out: &mut Outbox<Msg, Timer>) {
        if let Some(Giving { syncs: Some(s), .. }) = &mut self.giving {
            s.remove(&from);
        }
        self.give(out);
    }

    /// Every other agent has answered: the joiner's entries (this agent's own copies stay
    /// valid, recorded in them) and the requests held for them go to the joiner, and this
    /// agent switches to the ring with it.
    fn give(&mut self, out: &mut Outbox<Msg, Timer>) {
        let Some(g) = &self.giving else { return };
        if g.sent || !g.syncs.as_ref().is_some_and(|s| s.is_empty()) {
            return;
        }
        let (joiner, ring) = (g.joiner, g.ring.clone());
        self.giving.as_mut().expect("giving").sent = true;
        let moving: Vec<Key> = self.directory.keys().copied().filter(|&k| ring.home(k) == joiner).collect();
        let entries: Vec<(Key, Dir)> = moving
            .iter()
            .map(|k| {
                self.directory_used.remove(k);
                (*k, self.directory.remove(k).expect("listed"))
            })
            .collect();
        let applied = self.known.iter().filter(|&(&k, _)| ring.home(k) == joiner).map(|(&k, &n)| (k, n)).collect();
        self.ring = ring;
        self.handed.insert(joiner);
        out.trace("DirXfer", || format!("{{\"to\":{},\"entries\":{}}}", joiner.index(), entries.len()));
        for _ in &entries {
            out.count("concord_migrated_entry");
        }
        out.send(joiner, Msg::DirXfer { entries, applied, join: true });
        let held: Vec<Key> = self.queued.keys().copied().filter(|&k| self.ring.home(k) == joiner).collect();
        for key in held {
            for req in self.queued.remove(&key).expect("listed") {
                let applied = self.applied(key);
                out.count("concord_moved_request");
                out.send(joiner, Msg::Moved { key, requester: req.requester, write: req.write, external: req.external, applied });
            }
        }
    }

    /// The joiner has its entries: this agent's part is done.
    pub(super) fn on_given(&mut self, out: &mut Outbox<Msg, Timer>) {
        let g = self.giving.take().expect("giving");
        if let Some(c) = self.controller {
            out.send(c, Msg::JoinDone { node: g.joiner });
        }
    }

    /// True when `key`'s entries are still on their way here from a departing agent.
    pub(super) fn awaits_entries(&self, key: Key) -> bool {
        self.rules.await_entries && self.incoming.iter().any(|(&d, before): (&NodeId, &Ring)| before.home(key) == d)
    }

    /// Retries the directory requests held here for a view or entries that had not arrived.
    pub(super) fn replay_home_parked(&mut self, out: &mut Outbox<Msg, Timer>) {
        for (key, req) in std::mem::take(&mut self.home_parked) {
            self.home_request(key, req, out);
        }
    }

    /// The membership part of the agent's invariants: a departing agent that has handed over
    /// holds no line, entry or transaction; no entry names an agent that has left; an agent
    /// waiting for entries holds none of those keys' entries.
    pub(super) fn check_membership_invariants(&self) -> Result<(), String> {
        if let Some(l) = &self.leaving {
            let held = self.lines.keys().find(|k| !matches!(self.pending.get(k), Some(Pending::OwnerWrite { .. })));
            if let Some(key) = held {
                return Err(format!("leave: departing {:?} still caches key {key}", self.id));
            }
            if l.sent && !(self.directory.is_empty() && self.active.is_empty() && self.queued.is_empty() && self.pending.is_empty()) {
                return Err(format!("leave: {:?} handed its directory over but still holds directory state or calls", self.id));
            }
        }
        for d in &self.departed {
            if let Some((key, _)) = self.directory.iter().find(|(_, e)| match e {
                Dir::Shared(s) => s.contains(d),
                Dir::Exclusive(o) => o == d,
            }) {
                return Err(format!("leave: {:?}'s entry for key {key} names departed {d:?}", self.id));
            }
        }
        if let Some(key) = self.directory.keys().find(|&&k| self.awaits_entries(k)) {
            return Err(format!("I6 single home: {:?} holds an entry for key {key} before its migration arrived", self.id));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Concord, Model};
    use super::*;
    use causim_sim::Effect;
    use causim_sim::config::TopologyConfig;

    fn agent(c: &Concord, i: usize) -> Agent {
        Agent::new(NodeId::fixed(i), c.ring(), c.storage_id(), c.rules.clone())
    }

    fn sends(out: &mut Outbox<Msg, Timer>) -> Vec<(NodeId, Msg)> {
        let s = out
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect();
        out.clear();
        s
    }

    /// With 3 agents, keys 0 and 1 are homed at S2, whose successor is S0.
    #[test]
    fn a_departing_home_migrates_its_entries_and_hands_later_requests_on_to_its_successor() {
        let topology = TopologyConfig::new(3, causim_sim::dist::DurationDist::constant(1));
        let c = Concord::build(&serde_json::json!({}), &[], &topology).unwrap();
        let (s0, s1, s2, ctl) = (NodeId::fixed(0), NodeId::fixed(1), NodeId::fixed(2), c.controller_id());
        let mut home = agent(&c, 2);
        let mut succ = agent(&c, 0);
        let mut out = Outbox::new(false);
        // S1 reads key 0 at S2: a miss, E(S1).
        home.on_message(s1, Msg::RdReq { key: 0, applied: 0 }, &mut out);
        home.on_message(c.storage_id(), Msg::StData { key: 0, value: Some(5), tag: 0, applied: 1 }, &mut out);
        sends(&mut out);
        // The successor switches rings first, and a request for key 0 waits for the entries.
        succ.on_message(ctl, Msg::Leave { node: s2 }, &mut out);
        assert_eq!(sends(&mut out), vec![(ctl, Msg::LeaveAck { node: s2 })]);
        succ.on_message(s1, Msg::WrReq { key: 0, value: 7, applied: 1 }, &mut out);
        assert!(sends(&mut out).is_empty(), "held until the entries arrive");
        succ.check_invariants().unwrap();
        // The departing home holds a request, then migrates on Transfer and hands it on.
        home.on_message(ctl, Msg::Leave { node: s2 }, &mut out);
        sends(&mut out);
        home.on_message(s0, Msg::RdReq { key: 1, applied: 0 }, &mut out);
        assert!(sends(&mut out).is_empty());
        home.on_message(ctl, Msg::Transfer { node: s2 }, &mut out);
        assert_eq!(sends(&mut out), vec![(s0, Msg::Sync), (s1, Msg::Sync)]);
        home.on_message(s1, Msg::SyncAck, &mut out);
        assert!(sends(&mut out).is_empty(), "S0 has not answered");
        home.on_message(s0, Msg::SyncAck, &mut out);
        let handed = sends(&mut out);
        assert_eq!(
            handed,
            vec![
                (s0, Msg::DirXfer { entries: vec![(0, Dir::Exclusive(s1))], applied: vec![(0, 1), (1, 0)], join: false }),
                (s0, Msg::Moved { key: 1, requester: s0, write: None, external: None, applied: 0 }),
            ]
        );
        home.check_invariants().unwrap();
        // The successor installs the entry, then serves the held write: from the owner S1
        // itself, so storage is written at once.
        let (_, xfer) = handed[0].clone();
        succ.on_message(s2, xfer, &mut out);
        let after = sends(&mut out);
        assert!(after.contains(&(s2, Msg::DirXferAck)), "{after:?}");
        assert!(
            after.iter().any(|(to, m)| *to == c.storage_id() && matches!(m, Msg::StPut { key: 0, value: 7, after: 1, .. })),
            "{after:?}"
        );
        assert_eq!(succ.directory().keys().copied().collect::<BTreeSet<_>>(), [0].into());
        succ.check_invariants().unwrap();
        // A departed agent still answers a late invalidation.
        home.on_message(s1, Msg::Inv { key: 3, tag: 9 }, &mut out);
        assert_eq!(sends(&mut out), vec![(s1, Msg::InvAck { key: 3, tag: 9, applied: 0 })]);
    }

    /// With S2 out of the domain, its keys (0 and 1) are homed at S0; when it joins again, S0
    /// hands it their entries after the first barrier and a synchronization, and requests that
    /// still reach S0 are handed on; the joiner holds requests until the entries arrive, and
    /// drops what a member sent before welcoming it.
    #[test]
    fn a_joiner_takes_its_keys_entries_from_its_successor() {
        let topology = TopologyConfig::new(3, causim_sim::dist::DurationDist::constant(1));
        let c = Concord::build(&serde_json::json!({}), &[], &topology).unwrap();
        let (s0, s1, s2, ctl, db) = (NodeId::fixed(0), NodeId::fixed(1), NodeId::fixed(2), c.controller_id(), c.storage_id());
        let without = Ring::of(&[s0, s1]);
        let mut giver = Agent::new(s0, without.clone(), db, c.rules.clone());
        let mut joiner = Agent::new(s2, without, db, c.rules.clone());
        let mut out = Outbox::new(false);
        // S1 reads key 0 at its home S0: a miss, E(S1).
        giver.on_message(s1, Msg::RdReq { key: 0, applied: 0 }, &mut out);
        giver.on_message(db, Msg::StData { key: 0, value: Some(5), tag: 0, applied: 1 }, &mut out);
        sends(&mut out);
        // The joiner first: it starts afresh and greets the members and storage.
        joiner.on_message(ctl, Msg::Join { node: s2, members: vec![s0, s1], applied: vec![] }, &mut out);
        assert_eq!(sends(&mut out), vec![(s0, Msg::Hello), (s1, Msg::Hello), (db, Msg::Hello), (ctl, Msg::JoinAck { node: s2 })]);
        // A request S1 sent its earlier incarnation is dropped; S1's welcome comes first of
        // anything new, and a request for key 0 waits for the entries.
        joiner.on_message(s1, Msg::RdReq { key: 3, applied: 0 }, &mut out);
        joiner.on_message(s1, Msg::Welcome, &mut out);
        joiner.on_message(s0, Msg::Welcome, &mut out);
        joiner.on_message(s0, Msg::RdReq { key: 0, applied: 0 }, &mut out);
        assert!(sends(&mut out).is_empty(), "held until the entries arrive");
        joiner.check_invariants().unwrap();
        // The giver keeps serving key 0 until the hand-over.
        giver.on_message(ctl, Msg::Join { node: s2, members: vec![s0, s1], applied: vec![] }, &mut out);
        assert_eq!(sends(&mut out), vec![(s2, Msg::Welcome), (ctl, Msg::JoinAck { node: s2 })]);
        giver.check_invariants().unwrap();
        giver.on_message(ctl, Msg::Transfer { node: s2 }, &mut out);
        assert_eq!(sends(&mut out), vec![(s1, Msg::Sync), (s2, Msg::Sync)]);
        giver.on_message(s1, Msg::RdReq { key: 1, applied: 0 }, &mut out);
        assert!(sends(&mut out).is_empty(), "held for the joiner");
        giver.on_message(s1, Msg::SyncAck, &mut out);
        giver.on_message(s2, Msg::SyncAck, &mut out);
        let handed = sends(&mut out);
        assert_eq!(
            handed,
            vec![
                (s2, Msg::DirXfer { entries: vec![(0, Dir::Exclusive(s1))], applied: vec![(0, 1), (1, 0)], join: true }),
                (s2, Msg::Moved { key: 1, requester: s1, write: None, external: None, applied: 0 }),
            ]
        );
        assert!(giver.directory().is_empty());
        giver.check_invariants().unwrap();
        // The joiner installs the entry and serves the held read: forwarded to the owner S1.
        joiner.on_message(s0, handed[0].1.clone(), &mut out);
        let after = sends(&mut out);
        assert_eq!(after, vec![(s0, Msg::DirXferAck), (s1, Msg::FwdRd { key: 0, tag: 0 })]);
        joiner.check_invariants().unwrap();
        giver.on_message(s2, Msg::DirXferAck, &mut out);
        assert!(sends(&mut out).is_empty(), "the controller is not known to this bare agent");
    }

    /// A departing home's own call held at its own directory (behind a write) would wait for
    /// the hand-over, which waits for its calls: it fails instead (found by the churn figure,
    /// where such a departure never finished).
    #[test]
    fn a_departing_homes_own_held_call_fails_and_the_hand_over_goes_on() {
        let topology = TopologyConfig::new(3, causim_sim::dist::DurationDist::constant(1));
        let c = Concord::build(&serde_json::json!({}), &[], &topology).unwrap();
        let (s0, s1, s2, ctl, db) = (NodeId::fixed(0), NodeId::fixed(1), NodeId::fixed(2), c.controller_id(), c.storage_id());
        let f = NodeId(1 << 63);
        let mut home = agent(&c, 2);
        let mut out = Outbox::new(false);
        home.on_message(s1, Msg::WrReq { key: 0, value: 7, applied: 0 }, &mut out);
        home.on_message(f, Msg::Get { key: 0 }, &mut out);
        sends(&mut out);
        home.on_message(ctl, Msg::Leave { node: s2 }, &mut out);
        home.on_message(ctl, Msg::Transfer { node: s2 }, &mut out);
        assert_eq!(sends(&mut out), vec![(ctl, Msg::LeaveAck { node: s2 }), (f, Msg::CallFailed { key: 0 })]);
        home.check_invariants().unwrap();
        home.on_message(db, Msg::StAck { key: 0, writer: super::super::msg::Writer::Home(0), applied: 1 }, &mut out);
        assert_eq!(sends(&mut out), vec![(s1, Msg::WrAck { key: 0, applied: 1 }), (s0, Msg::Sync), (s1, Msg::Sync)]);
    }
}
