//! The sequencers of one physical log (§4.3, digest §2.4 steps 5–8): a primary that turns the
//! storage nodes' progress vectors into metalog entries, and backups that hold copies.
//!
//! Every global cut interval the primary takes, per shard, the minimum progress over the
//! shard's storage replicas — the records stored on *all* of them — and, if some shard moved,
//! appends that cut as the next entry. It issues an entry only when the previous one is on a
//! quorum (itself and ⌊n_meta/2⌋ backups), and propagates an entry to the subscribers only
//! once it is on a quorum: at most one unreplicated entry is in flight, and nothing a
//! subscriber applies can be lost by a seal that hears from a quorum.
//!
//! The metalog lives in memory only: a restarted sequencer has lost its copy and takes no part
//! in its term any more (it neither acknowledges nor answers a seal) until the controller
//! installs the next term. A sealed sequencer does nothing more in its term.

use super::Timer;
use super::ids::{Entry, Trim};
use super::msg::{Config, Msg};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Sequencer {
    pub(super) id: NodeId,
    pub(super) term: u64,
    pub(super) primary: bool,
    pub(super) backups: Vec<NodeId>,
    /// Engines and storage nodes, which apply the metalog.
    pub(super) subscribers: Vec<NodeId>,
    /// Storage replicas (node ids) of each shard.
    pub(super) replicas: Vec<Vec<NodeId>>,
    pub(super) global_cut_interval_ns: Time,
    /// Mutant `order_before_durability`: cut at the *most* advanced replica.
    pub(super) order_before_durability: bool,
    pub(super) metalog: Vec<Entry>,
    /// Trim commands for the next entry (the primary's; lost if its term is sealed first).
    pub(super) trims: Vec<Trim>,
    /// Entries known to be on a quorum (a prefix of `metalog`).
    pub(super) replicated: u64,
    /// Each backup's metalog length, as acknowledged.
    pub(super) acks: BTreeMap<NodeId, u64>,
    /// The last progress reported per `(shard, storage node)`.
    pub(super) reported: BTreeMap<(u32, NodeId), u64>,
    /// The cut timer is set (only while a cut could order something new).
    pub(super) timer_set: bool,
    /// The term is sealed here: no more entries, acknowledgements or propagation.
    pub(super) sealed: bool,
    /// Restarted in this term: its copy of the metalog is gone.
    pub(super) amnesiac: bool,
    pub(super) session: Session,
    /// Messages of a later term, held until this node reaches it.
    pub(super) held: Vec<(NodeId, Msg)>,
}

/// A node's session with the controller (none without reconfiguration): heartbeats every
/// `every_ns`, and the incarnation, which a restart increments.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Session {
    pub(super) controller: Option<NodeId>,
    pub(super) every_ns: Time,
    pub(super) incarnation: u64,
}

impl Session {
    pub(super) fn beat(&self, out: &mut Outbox<Msg, Timer>) {
        if let Some(c) = self.controller {
            out.send(c, Msg::Alive { incarnation: self.incarnation });
            out.set_timer(Timer::Heartbeat, self.every_ns);
        }
    }
}

impl Sequencer {
    /// (Re)starts: timers set before a crash are gone.
    pub(super) fn start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.timer_set = false;
        self.session.beat(out);
        self.arm(now, out);
    }

    /// A restart: the in-memory metalog and the term's bookkeeping are gone.
    pub(super) fn restart(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.metalog.clear();
        self.acks.clear();
        self.reported.clear();
        self.trims.clear();
        self.replicated = 0;
        self.amnesiac = true;
        self.session.incarnation += 1;
        out.trace("MetalogLost", || format!("{{\"term\":{}}}", self.term));
        self.start(now, out);
    }

    fn active(&self) -> bool {
        !self.sealed && !self.amnesiac
    }

    pub(super) fn on_seal(&mut self, from: NodeId, term: u64, out: &mut Outbox<Msg, Timer>) {
        if term != self.term || self.amnesiac {
            return;
        }
        self.sealed = true;
        out.send(from, Msg::Sealed { term, metalog: self.metalog.clone() });
    }

    /// The next term: an empty metalog, and the role the configuration gives this node.
    pub(super) fn on_new_term(&mut self, now: Time, config: &Config, out: &mut Outbox<Msg, Timer>) {
        if config.term <= self.term {
            return;
        }
        self.term = config.term;
        self.primary = config.primary == self.id;
        self.backups = if self.primary { config.backups.clone() } else { Vec::new() };
        self.replicas = config.replicas.clone();
        self.metalog.clear();
        self.acks.clear();
        self.reported.clear();
        self.trims.clear();
        self.replicated = 0;
        (self.sealed, self.amnesiac) = (false, false);
        self.arm(now, out);
    }

    /// Cuts happen on the global cut interval's grid, as with a periodic timer, but the timer
    /// is set only when the next cut would order something.
    fn arm(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let news =
            !self.trims.is_empty() || self.durable_cut(self.order_before_durability).iter().zip(self.last_cut()).any(|(d, l)| *d > l);
        if self.primary && self.active() && !self.timer_set && news && self.replicated == self.metalog.len() as u64 {
            self.timer_set = true;
            out.set_timer(Timer::GlobalCut, self.global_cut_interval_ns - now % self.global_cut_interval_ns);
        }
    }

    /// An engine's trim command: ordered by the next entry.
    pub(super) fn on_trim(&mut self, now: Time, term: u64, trim: Trim, out: &mut Outbox<Msg, Timer>) {
        if term != self.term || !self.primary || !self.active() {
            return;
        }
        self.trims.push(trim);
        self.arm(now, out);
    }

    pub(super) fn on_progress(&mut self, now: Time, from: NodeId, term: u64, shards: Vec<(u32, u64)>, out: &mut Outbox<Msg, Timer>) {
        if term != self.term {
            return;
        }
        for (shard, p) in shards {
            let r = self.reported.entry((shard, from)).or_insert(0);
            *r = (*r).max(p);
        }
        self.arm(now, out);
    }

    /// The cut of the records stored on all replicas of their shard (on any one of them, under
    /// the mutant).
    fn durable_cut(&self, order_before_durability: bool) -> Vec<u64> {
        self.replicas
            .iter()
            .enumerate()
            .map(|(j, nodes)| {
                let reports = nodes.iter().map(|n| self.reported.get(&(j as u32, *n)).copied().unwrap_or(0));
                if order_before_durability { reports.max() } else { reports.min() }.unwrap_or(0)
            })
            .collect()
    }

    fn last_cut(&self) -> Vec<u64> {
        self.metalog.last().map_or_else(|| vec![0; self.replicas.len()], |e| e.end.clone())
    }

    pub(super) fn on_global_cut(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        self.timer_set = false;
        if !self.active() || self.replicated < self.metalog.len() as u64 {
            return; // the previous entry is not on a quorum yet: its acknowledgement re-arms
        }
        let start = self.last_cut();
        let end: Vec<u64> = self.durable_cut(self.order_before_durability).iter().zip(&start).map(|(c, s)| (*c).max(*s)).collect();
        if end == start && self.trims.is_empty() {
            return;
        }
        let trims = std::mem::take(&mut self.trims);
        let entry = Entry { term: self.term, index: self.metalog.len() as u64, start, end, trims };
        out.trace("AppendMetalog", || format!("{{\"index\":{},\"cut\":{:?}}}", entry.index, entry.end));
        self.metalog.push(entry.clone());
        for &b in &self.backups {
            out.send(b, Msg::MetaReplicate { entry: entry.clone() });
        }
        self.advance_replicated(out);
        self.arm(now, out);
    }

    /// A backup stores entries strictly in order and acknowledges its length.
    pub(super) fn on_meta_replicate(&mut self, from: NodeId, entry: Entry, out: &mut Outbox<Msg, Timer>) {
        if entry.term != self.term || !self.active() {
            return;
        }
        if entry.index == self.metalog.len() as u64 {
            self.metalog.push(entry);
        }
        out.send(from, Msg::MetaAck { term: self.term, entries: self.metalog.len() as u64 });
    }

    pub(super) fn on_meta_ack(&mut self, now: Time, from: NodeId, term: u64, entries: u64, out: &mut Outbox<Msg, Timer>) {
        if term != self.term || !self.active() {
            return;
        }
        let a = self.acks.entry(from).or_insert(0);
        *a = (*a).max(entries);
        self.advance_replicated(out);
        self.arm(now, out);
    }

    /// Entries held by the primary and ⌊n_meta/2⌋ backups are replicated: propagate them.
    fn advance_replicated(&mut self, out: &mut Outbox<Msg, Timer>) {
        let n_meta = self.backups.len() + 1;
        let need = n_meta / 2;
        while self.replicated < self.metalog.len() as u64 {
            let next = self.replicated + 1;
            if self.acks.values().filter(|&&a| a >= next).count() < need {
                break;
            }
            let entry = self.metalog[self.replicated as usize].clone();
            self.replicated = next;
            out.trace("PropagateMetalog", || format!("{{\"index\":{}}}", entry.index));
            for &s in &self.subscribers {
                out.send(s, Msg::Metalog { entry: entry.clone() });
            }
        }
    }

    /// The primary's invariants: at most one entry not yet on a quorum, and every cut covers
    /// only records every replica of their shard has reported (durability before order).
    pub(super) fn check(&self) -> Result<(), String> {
        if !self.primary {
            return Ok(());
        }
        if self.metalog.len() as u64 > self.replicated + 1 {
            return Err(format!(
                "the primary has {} metalog entries not on a quorum (at most one may be)",
                self.metalog.len() as u64 - self.replicated
            ));
        }
        let durable = self.durable_cut(false);
        if let Some(last) = self.metalog.last()
            && let Some(j) = (0..durable.len()).find(|&j| last.end[j] > durable[j])
        {
            return Err(format!(
                "metalog entry {} orders shard {j} up to local id {} but only {} are stored on all its replicas (order before durability)",
                last.index, last.end[j], durable[j]
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::Effect;

    const D0: NodeId = NodeId(10);
    const D1: NodeId = NodeId(11);
    const B1: NodeId = NodeId(21);
    const B2: NodeId = NodeId(22);
    const E0: NodeId = NodeId(0);

    fn primary(order_before_durability: bool) -> Sequencer {
        Sequencer {
            id: NodeId(20),
            term: 0,
            primary: true,
            backups: vec![B1, B2],
            subscribers: vec![E0],
            replicas: vec![vec![D0, D1]],
            global_cut_interval_ns: 300_000,
            order_before_durability,
            metalog: Vec::new(),
            trims: Vec::new(),
            replicated: 0,
            acks: BTreeMap::new(),
            reported: BTreeMap::new(),
            timer_set: false,
            sealed: false,
            amnesiac: false,
            session: Session::default(),
            held: Vec::new(),
        }
    }

    fn sent(out: &Outbox<Msg, Timer>) -> Vec<(NodeId, Msg)> {
        out.effects.iter().filter_map(|e| if let Effect::Send { to, msg } = e { Some((*to, msg.clone())) } else { None }).collect()
    }

    #[test]
    fn the_primary_cuts_at_the_least_replica_and_waits_for_a_quorum_before_the_next_entry() {
        let mut q = primary(false);
        let mut out = Outbox::new(false);
        q.on_progress(0, D0, 0, vec![(0, 3)], &mut out);
        q.on_progress(0, D1, 0, vec![(0, 1)], &mut out);
        assert_eq!(out.effects, [Effect::SetTimer { timer: Timer::GlobalCut, after_ns: 300_000 }], "armed once, on the grid");
        out.clear();
        q.on_global_cut(300_000, &mut out);
        let entry = Entry { term: 0, index: 0, start: vec![0], end: vec![1], trims: vec![] };
        assert_eq!(sent(&out), [(B1, Msg::MetaReplicate { entry: entry.clone() }), (B2, Msg::MetaReplicate { entry: entry.clone() })]);
        out.clear();
        q.on_progress(400_000, D1, 0, vec![(0, 3)], &mut out);
        q.on_global_cut(600_000, &mut out);
        assert!(out.effects.is_empty(), "entry 0 is not on a quorum yet: no second entry, and no timer");
        assert!(q.check().is_ok());
        q.on_meta_ack(700_000, B2, 0, 1, &mut out);
        assert_eq!(sent(&out), [(E0, Msg::Metalog { entry })], "the primary and one backup are a quorum of three");
        assert!(out.effects.contains(&Effect::SetTimer { timer: Timer::GlobalCut, after_ns: 200_000 }));
        out.clear();
        q.on_global_cut(900_000, &mut out);
        assert_eq!(sent(&out).len(), 2, "now entry 1 (local ids 1 and 2)");
        assert_eq!(q.metalog[1].end, [3]);
    }

    #[test]
    fn ordering_ahead_of_a_replica_breaks_the_durability_invariant() {
        let mut q = primary(true);
        let mut out = Outbox::new(false);
        q.on_progress(0, D0, 0, vec![(0, 2)], &mut out);
        q.on_global_cut(300_000, &mut out);
        assert_eq!(q.metalog[0].end, [2]);
        assert!(q.check().unwrap_err().contains("order before durability"));
    }
}
