//! The controller (§4.5, digest §2.10–§2.11): it watches the sessions of the sequencers and
//! storage nodes (ZooKeeper's, in Boki) and, when the primary sequencer or a storage node of
//! the current term fails, seals the term and installs the next one.
//!
//! 1. **Failure.** A node's session expires when the controller has not heard from it for
//!    `session_timeout_ns`; a node that restarts opens a new session (a higher incarnation),
//!    which also ends the old one.
//! 2. **Seal.** It asks the term's sequencers to seal: each stops (the primary issues and
//!    propagates nothing more, backups accept nothing more) and answers with its copy of the
//!    metalog. With answers from a quorum (⌈(n+1)/2⌉ of the term's n sequencers) the final
//!    metalog is the longest copy among them. Every entry a subscriber applied was on a
//!    replication quorum (the primary and ⌊n/2⌋ backups), which meets every seal quorum, so
//!    the final metalog holds it.
//! 3. **New term**, after `reconfiguration_delay_ns` (the coordination writes of [C]'s
//!    freeze/finalize/new-view znodes): the primary is the first live sequencer, the others its
//!    backups, and each shard's replicas are `n_data` live storage nodes (fewer if fewer
//!    live). Every node gets the old term's final metalog and the new configuration: nodes
//!    apply the entries they missed, engines fail the appends it does not cover, storage nodes
//!    discard the records it does not cover, and the term's metalog starts empty.
//!
//! With `reconfigure_every_ns` the controller also seals each term that long after installing
//! it (the first, after starting), failure or not: Fig. 17's reconfigurations on command. With spare sequencers provisioned, each new term
//! takes `n_meta` live sequencers picked at random (Fig. 17 picks 3 of 8); nodes draw no
//! randomness, so "random" is a hash of the term and the node, the same in every run.
//!
//! A restarted node that comes back live joins the next term's configuration, and is sent every
//! term's configuration again at once (with each term's final metalog), since it may have missed
//! some while down; a failed backup alone does not start a reconfiguration (the metalog goes on
//! while a quorum lives).

use super::Timer;
use super::ids::{Entry, TERMS_MAX};
use super::msg::{Config, Msg};
use causim_sim::node::{NodeId, Outbox};
use causim_sim::time::Time;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Controller {
    pub(super) engines: Vec<NodeId>,
    pub(super) storage_nodes: Vec<NodeId>,
    /// Every provisioned sequencer; a term uses `n_meta` of them.
    pub(super) sequencers: Vec<NodeId>,
    pub(super) n_meta: usize,
    pub(super) n_data: u32,
    pub(super) session_timeout_ns: Time,
    pub(super) reconfiguration_delay_ns: Time,
    /// Seal the term this often even without a failure (0: never).
    pub(super) reconfigure_every_ns: Time,
    /// Mutant `seal_loses_entries`: the final metalog is the *shortest* copy of the quorum's.
    pub(super) seal_loses_entries: bool,
    /// The current term's configuration (its `sealed` field unused).
    pub(super) config: Config,
    /// Per watched node: its session's incarnation and when it was last heard from.
    pub(super) sessions: BTreeMap<NodeId, (u64, Time)>,
    /// The incarnations the current term was installed with.
    pub(super) installed: BTreeMap<NodeId, u64>,
    /// Every configuration installed so far (terms 1, 2, …), for restarted nodes to catch up.
    pub(super) installs: Vec<Config>,
    pub(super) phase: Phase,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    Normal,
    /// Waiting for a quorum of the term's sequencers to seal: the copies so far.
    Sealing(BTreeMap<NodeId, Vec<Entry>>),
    /// Sealed with this final metalog; the next term is installed when the delay ends.
    Installing(Vec<Entry>),
}

impl Controller {
    pub(super) fn start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        for &n in self.storage_nodes.iter().chain(&self.sequencers) {
            self.sessions.insert(n, (0, now));
            self.installed.insert(n, 0);
        }
        self.arm(out);
    }

    fn arm(&self, out: &mut Outbox<Msg, Timer>) {
        out.set_timer(Timer::Check, self.session_timeout_ns / 2);
        self.arm_reconfiguration(out);
    }

    /// The next reconfiguration on command, a period after now (a term's installation): every
    /// term lives at least that long, however long sealing takes.
    fn arm_reconfiguration(&self, out: &mut Outbox<Msg, Timer>) {
        if self.reconfigure_every_ns > 0 {
            out.set_timer(Timer::Reconfigure, self.reconfigure_every_ns);
        }
    }

    /// A restart of the controller (replicated in Boki: its state survives); its timers are gone.
    pub(super) fn resume(&mut self, out: &mut Outbox<Msg, Timer>) {
        self.arm(out);
        if matches!(self.phase, Phase::Installing(_)) {
            out.set_timer(Timer::Install, self.reconfiguration_delay_ns);
        }
    }

    pub(super) fn on_alive(&mut self, now: Time, from: NodeId, incarnation: u64, out: &mut Outbox<Msg, Timer>) {
        let s = self.sessions.entry(from).or_insert((incarnation, now));
        let restarted = incarnation > s.0;
        *s = (s.0.max(incarnation), now);
        if restarted {
            for config in &self.installs {
                out.send(from, Msg::NewTerm(Box::new(config.clone())));
            }
        }
    }

    fn live(&self, now: Time, n: NodeId) -> bool {
        self.sessions.get(&n).is_some_and(|&(_, heard)| now.saturating_sub(heard) <= self.session_timeout_ns)
    }

    /// Whether the node's session of this term has ended (expired, or replaced by a restart).
    fn failed(&self, now: Time, n: NodeId) -> bool {
        !self.live(now, n) || self.sessions.get(&n).map(|s| s.0) != self.installed.get(&n).copied()
    }

    pub(super) fn on_check(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        out.set_timer(Timer::Check, self.session_timeout_ns / 2);
        if self.phase != Phase::Normal {
            return;
        }
        let in_term = |n: &NodeId| self.config.replicas.iter().any(|r| r.contains(n));
        let failed: Vec<NodeId> = std::iter::once(self.config.primary)
            .chain(self.storage_nodes.iter().copied().filter(in_term))
            .filter(|&n| self.failed(now, n))
            .collect();
        if failed.is_empty() {
            return;
        }
        out.trace("Seal", || format!("{{\"term\":{},\"failed\":{:?}}}", self.config.term, failed.iter().map(|n| n.0).collect::<Vec<_>>()));
        self.seal(out);
    }

    /// A reconfiguration on command: seal the term unless one is under way (its installation
    /// arms the next) or the terms a seqnum can carry would run out.
    pub(super) fn on_reconfigure(&mut self, out: &mut Outbox<Msg, Timer>) {
        if self.phase != Phase::Normal || self.config.term + 2 >= TERMS_MAX {
            return;
        }
        out.trace("Seal", || format!("{{\"term\":{},\"on_command\":true}}", self.config.term));
        self.seal(out);
    }

    fn seal(&mut self, out: &mut Outbox<Msg, Timer>) {
        self.phase = Phase::Sealing(BTreeMap::new());
        for &q in std::iter::once(&self.config.primary).chain(&self.config.backups) {
            out.send(q, Msg::Seal { term: self.config.term });
        }
    }

    pub(super) fn on_sealed(&mut self, from: NodeId, term: u64, metalog: Vec<Entry>, out: &mut Outbox<Msg, Timer>) {
        let Phase::Sealing(copies) = &mut self.phase else { return };
        if term != self.config.term {
            return;
        }
        copies.insert(from, metalog);
        let group = 1 + self.config.backups.len();
        if copies.len() < group.div_ceil(2) {
            return;
        }
        let lengths = copies.values().map(Vec::len);
        let pick = if self.seal_loses_entries { lengths.min() } else { lengths.max() }.unwrap_or(0);
        let last = copies.values().find(|c| c.len() == pick).cloned().unwrap_or_default();
        out.trace("Sealed", || format!("{{\"term\":{term},\"entries\":{}}}", last.len()));
        self.phase = Phase::Installing(last);
        out.set_timer(Timer::Install, self.reconfiguration_delay_ns);
    }

    pub(super) fn on_install(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        let Phase::Installing(sealed) = std::mem::replace(&mut self.phase, Phase::Normal) else { return };
        let mut live_sequencers: Vec<NodeId> = self.sequencers.iter().copied().filter(|&n| self.live(now, n)).collect();
        let live_storage: Vec<NodeId> = self.storage_nodes.iter().copied().filter(|&n| self.live(now, n)).collect();
        if live_sequencers.is_empty() || live_storage.is_empty() {
            // Nothing to build a term from: try again once something is back.
            out.trace("InstallWaits", || "{}".to_string());
            self.phase = Phase::Installing(sealed);
            out.set_timer(Timer::Install, self.session_timeout_ns);
            return;
        }
        let term = self.config.term + 1;
        if self.sequencers.len() > self.n_meta {
            live_sequencers.sort_by_key(|n| (pick_order(term, *n), *n));
        }
        live_sequencers.truncate(self.n_meta);
        let n = (self.n_data as usize).min(live_storage.len());
        let replicas = (0..self.engines.len()).map(|j| (0..n).map(|r| live_storage[(j + r) % live_storage.len()]).collect()).collect();
        let failed = self.sequencers.iter().chain(&self.storage_nodes).copied().filter(|&n| !self.live(now, n)).collect();
        let config = Config { term, sealed, primary: live_sequencers[0], backups: live_sequencers[1..].to_vec(), replicas, failed };
        out.trace("NewTerm", || format!("{{\"term\":{},\"primary\":{}}}", config.term, config.primary.0));
        for (&n, s) in &self.sessions {
            self.installed.insert(n, s.0);
        }
        for &n in self.engines.iter().chain(&self.storage_nodes).chain(&self.sequencers) {
            out.send(n, Msg::NewTerm(Box::new(config.clone())));
        }
        self.installs.push(config.clone());
        self.config = Config { sealed: Vec::new(), ..config };
        self.arm_reconfiguration(out);
    }
}

/// The place of sequencer `n` in term `term`'s random pick (splitmix64 of both).
fn pick_order(term: u64, n: NodeId) -> u64 {
    let mut z = term.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n.0.wrapping_add(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::Effect;
    use std::collections::BTreeSet;

    const E0: NodeId = NodeId(0);
    const D: [NodeId; 3] = [NodeId(10), NodeId(11), NodeId(12)];
    const Q: [NodeId; 3] = [NodeId(20), NodeId(21), NodeId(22)];
    const MS: Time = 1_000_000;

    fn controller(seal_loses_entries: bool) -> Controller {
        Controller {
            engines: vec![E0],
            storage_nodes: D.to_vec(),
            sequencers: Q.to_vec(),
            n_meta: 3,
            n_data: 2,
            session_timeout_ns: 3 * MS,
            reconfiguration_delay_ns: 12 * MS,
            reconfigure_every_ns: 0,
            seal_loses_entries,
            config: Config {
                term: 0,
                sealed: vec![],
                primary: Q[0],
                backups: Q[1..].to_vec(),
                replicas: vec![D[..2].to_vec()],
                failed: vec![],
            },
            sessions: BTreeMap::new(),
            installed: BTreeMap::new(),
            installs: Vec::new(),
            phase: Phase::Normal,
        }
    }

    fn entry(index: u64) -> Entry {
        Entry { term: 0, index, start: vec![index], end: vec![index + 1], trims: vec![] }
    }

    fn sent(out: &Outbox<Msg, Timer>) -> Vec<(NodeId, Msg)> {
        out.effects.iter().filter_map(|e| if let Effect::Send { to, msg } = e { Some((*to, msg.clone())) } else { None }).collect()
    }

    /// The primary Q0 falls silent at 0; everyone else keeps beating until `until`.
    fn primary_expires(c: &mut Controller, out: &mut Outbox<Msg, Timer>, until: Time) {
        c.start(0, out);
        for t in (MS..=until).step_by(MS as usize) {
            for n in D.iter().chain(&Q[1..]) {
                c.on_alive(t, *n, 0, out);
            }
            c.on_check(t, out);
        }
    }

    #[test]
    fn an_expired_primary_is_sealed_at_the_longest_copy_of_a_quorum_and_replaced_after_the_delay() {
        let mut c = controller(false);
        let mut out = Outbox::new(false);
        primary_expires(&mut c, &mut out, 4 * MS);
        let seals: Vec<NodeId> = sent(&out).into_iter().filter(|(_, m)| matches!(m, Msg::Seal { term: 0 })).map(|(n, _)| n).collect();
        assert_eq!(seals, Q, "one seal round, to every sequencer of the term");
        out.clear();
        c.on_sealed(Q[2], 0, vec![entry(0)], &mut out);
        assert!(out.effects.is_empty(), "one copy is not a quorum of three");
        c.on_sealed(Q[1], 0, vec![entry(0), entry(1)], &mut out);
        assert_eq!(out.effects, [Effect::SetTimer { timer: Timer::Install, after_ns: 12 * MS }]);
        out.clear();
        for n in D.iter().chain(&Q[1..]) {
            c.on_alive(16 * MS, *n, 0, &mut out);
        }
        c.on_install(16 * MS, &mut out);
        let Some((_, Msg::NewTerm(config))) = sent(&out).into_iter().next() else { panic!("a new term") };
        assert_eq!(config.term, 1);
        assert_eq!(config.sealed, [entry(0), entry(1)], "the longest copy: entry 1 may have been applied");
        assert_eq!((config.primary, config.backups.clone(), config.failed.clone()), (Q[1], vec![Q[2]], vec![Q[0]]));
        assert_eq!(config.replicas, [vec![D[0], D[1]]]);
        assert_eq!(sent(&out).len(), 7, "to the engine, every storage node and every sequencer");
    }

    #[test]
    fn the_mutant_seals_at_the_shortest_copy() {
        let mut c = controller(true);
        let mut out = Outbox::new(false);
        primary_expires(&mut c, &mut out, 4 * MS);
        c.on_sealed(Q[2], 0, vec![entry(0)], &mut out);
        c.on_sealed(Q[1], 0, vec![entry(0), entry(1)], &mut out);
        assert_eq!(c.phase, Phase::Installing(vec![entry(0)]));
    }

    #[test]
    fn a_reconfiguration_on_command_seals_a_healthy_term_and_picks_n_meta_of_the_provisioned_sequencers() {
        let spares = [NodeId(23), NodeId(24), NodeId(25), NodeId(26), NodeId(27)];
        let mut c = controller(false);
        c.sequencers.extend(spares);
        c.reconfigure_every_ns = 100 * MS;
        let mut out = Outbox::new(false);
        c.start(0, &mut out);
        assert!(out.effects.contains(&Effect::SetTimer { timer: Timer::Reconfigure, after_ns: 100 * MS }));
        let mut groups = BTreeSet::new();
        for term in 0..6 {
            let now = (term + 1) * 100 * MS;
            for n in D.iter().chain(&Q).chain(&spares) {
                c.on_alive(now, *n, 0, &mut out);
            }
            out.clear();
            c.on_check(now, &mut out);
            assert!(sent(&out).is_empty(), "nothing failed");
            c.on_reconfigure(&mut out);
            let seals: Vec<NodeId> = sent(&out).into_iter().filter(|(_, m)| matches!(m, Msg::Seal { .. })).map(|(n, _)| n).collect();
            assert_eq!(seals.len(), 3, "the term's group is sealed, not the spares");
            for &q in &seals[..2] {
                c.on_sealed(q, term, vec![], &mut out);
            }
            out.clear();
            c.on_install(now, &mut out);
            assert!(out.effects.contains(&Effect::SetTimer { timer: Timer::Reconfigure, after_ns: 100 * MS }), "the next, a period on");
            let group: BTreeSet<NodeId> = std::iter::once(c.config.primary).chain(c.config.backups.iter().copied()).collect();
            assert_eq!((c.config.term, group.len()), (term + 1, 3), "n_meta of the 8 live sequencers");
            groups.insert(group);
        }
        assert!(groups.len() >= 4, "the pick changes from term to term: {groups:?}");
    }

    #[test]
    fn a_restarted_node_is_sent_every_installed_configuration() {
        let mut c = controller(false);
        let mut out = Outbox::new(false);
        c.installs = vec![Config { term: 1, sealed: vec![entry(0)], primary: Q[1], backups: vec![Q[2]], replicas: vec![], failed: vec![] }];
        c.start(0, &mut out);
        out.clear();
        c.on_alive(MS, D[2], 0, &mut out);
        assert!(sent(&out).is_empty(), "the same session");
        c.on_alive(2 * MS, D[2], 1, &mut out);
        assert_eq!(sent(&out), [(D[2], Msg::NewTerm(Box::new(c.installs[0].clone())))]);
    }
}
