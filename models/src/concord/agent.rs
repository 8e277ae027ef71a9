//! The cache agent (CA): one per function-instance machine, colocated with the workers. It has
//! two roles, in two files: the cache side (`cache.rs`: the machine's lines, the functions'
//! requests, the E owner's direct writes) and the home side (`home.rs`: the directory entries
//! of the keys the ring homes here). This file holds the state they share, the dispatch, and
//! the agent's invariants.
//!
//! A message from an agent to itself (the home's own cache asking its own directory, the home
//! invalidating its own copy) costs no network hop in the paper (§VII: writes to keys "homed
//! locally" go straight to storage); here it goes through a loopback queue drained within the
//! same input, in FIFO order like a link.

use super::Rules;
use super::membership::{Giving, Leaving};
use super::msg::{ExtReq, Msg, Tag, Timer, Writer};
use super::ring::Ring;
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// A valid line: E (`exclusive`, the owner) or S. Absent means I. Both are clean: equal to
/// storage, except the owner's between its local update and storage's ack, and (paper-literal
/// only) an S-upgrader's before its grant.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Line {
    pub exclusive: bool,
    pub value: Option<Value>,
    /// When the line was last used (the agent's LRU clock).
    pub used: u64,
}

/// The coherence transaction a cache agent has in flight for a key (one at a time per key).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Pending {
    /// IS_D: a read sent to the home.
    Read { client: NodeId },
    /// IE_A (no line) or SE_A (an S line being upgraded): a write sent to the home.
    Write { client: NodeId, value: Value },
    /// E_W: the owner's write, sent straight to storage; external requests wait for its ack.
    OwnerWrite { client: NodeId, value: Value },
}

/// A function's storage call waiting behind the key's pending transaction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    pub client: NodeId,
    /// `None` for a read.
    pub write: Option<Value>,
}

/// A directory entry: S with its sharers (a superset of the real holders, since evictions are
/// silent), or E with its owner. No entry means NoEntry.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    Shared(BTreeSet<NodeId>),
    Exclusive(NodeId),
}

/// A directory transaction in flight at the home.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HomeOp {
    pub tag: Tag,
    pub requester: NodeId,
    pub step: Step,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Reading storage; the requester gets the value in E (`exclusive`) or joins the sharers.
    /// `hit`: the directory had an entry (a remote hit, not a miss, in the paper's terms).
    Fetch { exclusive: bool, hit: bool },
    /// Asking the owner for the data.
    Forward { owner: NodeId },
    /// Recalling the entry before evicting it: invalidations not yet acknowledged.
    Recall { acks: BTreeSet<NodeId> },
    /// A write: invalidations not yet acknowledged, whether storage has been written (`put`:
    /// sent; `stored`: acknowledged). `external`: an external write's tag (strict: the home
    /// writes it for the external application, and no cache holds it afterwards).
    Write { value: Value, acks: BTreeSet<NodeId>, put: bool, stored: bool, external: Option<Tag> },
}

/// A request queued at the home while the key's entry is busy (the blocking directory, A15).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HomeRequest {
    pub requester: NodeId,
    pub write: Option<Value>,
    /// An external write reported by storage's listener (the requester is the external
    /// application).
    pub external: Option<ExtReq>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Agent {
    pub(super) id: NodeId,
    pub(super) ring: Ring,
    pub(super) storage: NodeId,
    pub(super) rules: Rules,
    // Cache side.
    pub(super) lines: BTreeMap<Key, Line>,
    pub(super) pending: BTreeMap<Key, Pending>,
    pub(super) waiting: BTreeMap<Key, VecDeque<Request>>,
    /// FwdRd/Inv an owner defers until its direct write is acknowledged (A3).
    pub(super) deferred: BTreeMap<Key, Vec<(NodeId, Msg)>>,
    pub(super) clock: u64,
    // Home side.
    pub(super) directory: BTreeMap<Key, Dir>,
    /// When each directory entry was last used (the agent's LRU clock).
    pub(super) directory_used: BTreeMap<Key, u64>,
    pub(super) active: BTreeMap<Key, Vec<HomeOp>>,
    pub(super) queued: BTreeMap<Key, VecDeque<HomeRequest>>,
    pub(super) next_tag: Tag,
    /// Ghost (invariant I8): per key, how many writes this agent knows storage has applied.
    pub(super) known: BTreeMap<Key, u64>,
    loopback: VecDeque<(NodeId, Msg)>,
    // Failure handling (`failure.rs`).
    /// Failed agents whose messages are dropped from their notification on (I7).
    pub(super) fenced: BTreeSet<NodeId>,
    /// Failed agents whose recovery has not ended: their keys have no home yet.
    pub(super) failing: BTreeSet<NodeId>,
    /// Failures not acknowledged yet (this agent still drains its direct writes to their keys),
    /// with the controller to tell.
    pub(super) unacked: BTreeMap<NodeId, NodeId>,
    /// Functions' calls for keys with no home yet, in arrival order, started when it ends.
    pub(super) parked: BTreeMap<Key, VecDeque<Request>>,
    /// Directory requests for keys this agent homes once a recovery it has not seen end yet
    /// ends (a requester saw the end first).
    pub(super) home_parked: VecDeque<(Key, HomeRequest)>,
    /// This agent was declared failed while alive (a slow link): it serves nothing any more.
    pub(super) removed: bool,
    // Membership (`membership.rs`).
    /// This agent is leaving the domain.
    pub(super) leaving: Option<Leaving>,
    /// Departing agents whose entries this agent (their successor) waits for, with the ring
    /// they left.
    pub(super) incoming: BTreeMap<NodeId, Ring>,
    /// Departing agents whose entries have arrived here.
    pub(super) received: BTreeSet<NodeId>,
    /// Agents that have left the domain (the second barrier has passed here).
    pub(super) departed: BTreeSet<NodeId>,
    /// The controller (to ask to rejoin after a restart), when known.
    pub(super) controller: Option<NodeId>,
    /// This agent is handing the keys of a joining agent over to it.
    pub(super) giving: Option<Giving>,
    /// Joiners this agent has handed keys to: a request for them that still reaches it (sent
    /// in an older view) is handed on.
    pub(super) handed: BTreeSet<NodeId>,
    /// This agent is joining: its functions' calls fail until the second barrier (`Joined`).
    pub(super) joining: bool,
    /// This agent restarted or was removed since the run began: answers meant for its earlier
    /// incarnation may still arrive.
    pub(super) reborn: bool,
    /// Agents whose failure this agent has recovered from: their late answers are dropped.
    pub(super) ever_failed: BTreeSet<NodeId>,
    /// Agents that joined again while still fenced here (their greeting has not arrived).
    pub(super) welcomed: BTreeSet<NodeId>,
    /// Directory transactions whose requester failed: they finish, but answer nobody.
    pub(super) orphaned: BTreeSet<Tag>,
    /// A joiner: the members whose `Welcome` has not arrived yet; what they send before it was
    /// meant for this agent's earlier incarnation.
    pub(super) unwelcomed: BTreeSet<NodeId>,
    // Transactions (`txn.rs`).
    /// The speculative state of each local function's transaction in flight.
    pub(super) txns: BTreeMap<NodeId, super::txn::Spec>,
}

impl Agent {
    pub fn new(id: NodeId, ring: Ring, storage: NodeId, rules: Rules) -> Agent {
        Agent {
            id,
            ring,
            storage,
            rules,
            lines: BTreeMap::new(),
            pending: BTreeMap::new(),
            waiting: BTreeMap::new(),
            deferred: BTreeMap::new(),
            clock: 0,
            directory: BTreeMap::new(),
            directory_used: BTreeMap::new(),
            active: BTreeMap::new(),
            queued: BTreeMap::new(),
            next_tag: 0,
            known: BTreeMap::new(),
            loopback: VecDeque::new(),
            fenced: BTreeSet::new(),
            failing: BTreeSet::new(),
            unacked: BTreeMap::new(),
            parked: BTreeMap::new(),
            home_parked: VecDeque::new(),
            removed: false,
            leaving: None,
            incoming: BTreeMap::new(),
            received: BTreeSet::new(),
            departed: BTreeSet::new(),
            controller: None,
            giving: None,
            handed: BTreeSet::new(),
            joining: false,
            reborn: false,
            ever_failed: BTreeSet::new(),
            welcomed: BTreeSet::new(),
            orphaned: BTreeSet::new(),
            unwelcomed: BTreeSet::new(),
            txns: BTreeMap::new(),
        }
    }

    pub fn with_controller(mut self, controller: NodeId) -> Agent {
        self.controller = Some(controller);
        self
    }

    /// The same agent with nothing but its identity, its links and its rules: what a restart,
    /// a removal or a join starts from. Its transaction tags keep counting, so an answer meant for an earlier incarnation never
    /// names one of the new one's transactions.
    pub(super) fn fresh(&self, ring: Ring) -> Agent {
        let mut a = Agent::new(self.id, ring, self.storage, self.rules.clone());
        a.controller = self.controller;
        a.next_tag = self.next_tag;
        a.reborn = true;
        a
    }

    /// An answer meant for an earlier incarnation, of this agent (it restarted or was removed)
    /// or of the sender (whose failure was recovered from here): no transaction awaits it, and
    /// it is dropped, as a restarted process's new connections would lose it.
    fn is_stale(&self, from: NodeId, msg: &Msg) -> bool {
        let awaits = |key: &Key, tag: &Tag, step: &dyn Fn(&Step) -> bool| {
            self.active.get(key).is_some_and(|ops| ops.iter().any(|o| o.tag == *tag && step(&o.step)))
        };
        let late = self.reborn || self.ever_failed.contains(&from);
        match msg {
            Msg::Data { key, .. } => self.reborn && !matches!(self.pending.get(key), Some(Pending::Read { .. })),
            Msg::WrAck { key, .. } => self.reborn && !matches!(self.pending.get(key), Some(Pending::Write { .. })),
            Msg::StAck { key, writer: Writer::Owner, .. } => {
                self.reborn && !matches!(self.pending.get(key), Some(Pending::OwnerWrite { .. }))
            }
            Msg::StData { key, tag, .. } | Msg::StAck { key, writer: Writer::Home(tag), .. } => self.reborn && !awaits(key, tag, &|_| true),
            Msg::FwdData { key, tag, .. } | Msg::FwdNack { key, tag, .. } => {
                late && !awaits(key, tag, &|s| matches!(s, Step::Forward { owner } if *owner == from))
            }
            Msg::InvAck { key, tag, .. } => {
                late && !awaits(key, tag, &|s| matches!(s, Step::Write { acks, .. } | Step::Recall { acks } if acks.contains(&from)))
            }
            _ => false,
        }
    }

    pub fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        self.handle(from, msg, out);
        while let Some((from, msg)) = self.loopback.pop_front() {
            self.handle(from, msg, out);
        }
    }

    pub(super) fn handle(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        if self.removed {
            self.handle_removed(from, msg, out);
            return;
        }
        if let Msg::Hello = msg {
            // A joiner's first message: what an earlier incarnation had on the wire came first.
            self.fenced.remove(&from);
            self.welcomed.remove(&from);
            return;
        }
        if self.fenced.contains(&from) {
            out.count("concord_fenced_message");
            return;
        }
        if self.unwelcomed.contains(&from) {
            match msg {
                Msg::Welcome => {
                    self.unwelcomed.remove(&from);
                    return;
                }
                // Meant for the earlier incarnation: still answered (there is nothing to give up
                // and the sender may wait for the answer), as a departed agent answers them.
                Msg::Inv { .. } | Msg::FwdRd { .. } => {}
                _ => {
                    out.count("concord_stale_message");
                    return;
                }
            }
        }
        if self.is_stale(from, &msg) {
            out.count("concord_stale_message");
            return;
        }
        match msg {
            Msg::Ping => out.send(from, Msg::Pong),
            Msg::Fail { node } if node == self.id => self.on_removed(out),
            Msg::Fail { node } => self.on_fail(from, node, out),
            Msg::Recovered { node, applied } => self.on_recovered(node, applied, out),
            Msg::Leave { node } => self.on_leave(from, node, out),
            Msg::Transfer { node } if node == self.id => self.on_transfer(out),
            Msg::Transfer { node } => self.on_give(node, out),
            Msg::DirXfer { entries, applied, join } => self.on_dir_xfer(from, entries, applied, join, out),
            Msg::DirXferAck if self.giving.is_some() => self.on_given(out),
            Msg::DirXferAck => self.on_dir_xfer_ack(out),
            Msg::Sync => out.send(from, Msg::SyncAck),
            Msg::SyncAck if self.giving.is_some() => self.on_give_sync_ack(from, out),
            Msg::SyncAck => self.on_sync_ack(from, out),
            Msg::Join { node, members, applied } => self.on_join(from, node, members, applied, out),
            Msg::Joined { node } => self.on_joined(node, out),
            Msg::Hello => unreachable!("handled above"),
            // From a member that welcomed this agent before it left again, or restarted: no
            // longer needed.
            Msg::Welcome => {}
            Msg::Left { node, applied } => self.on_left(node, applied, out),
            Msg::Moved { key, requester, write, external, applied } => {
                self.learn(key, applied);
                self.home_request(key, HomeRequest { requester, write, external }, out);
            }
            Msg::ExtWrite { key, value, origin, ext, applied } => {
                self.learn(key, applied);
                self.home_request(key, HomeRequest { requester: origin, write: Some(value), external: Some(ext) }, out);
            }
            Msg::TxBegin { priority } => self.tx_begin(from, priority),
            Msg::TxGet { key } => self.tx_get(from, key, out),
            Msg::TxPut { key, value } => self.tx_put(from, key, value, out),
            Msg::TxCommit => self.tx_commit(from, out),
            Msg::TxRelease => self.tx_release(from, out),
            Msg::LockGrant { client, ticket } => self.on_lock_grant(client, ticket, out),
            Msg::Get { key } => self.request(key, Request { client: from, write: None }, out),
            Msg::Put { key, value } => self.request(key, Request { client: from, write: Some(value) }, out),
            Msg::RdReq { key, applied } => {
                self.learn(key, applied);
                self.home_request(key, HomeRequest { requester: from, write: None, external: None }, out);
            }
            Msg::WrReq { key, value, applied } => {
                self.learn(key, applied);
                self.home_request(key, HomeRequest { requester: from, write: Some(value), external: None }, out);
            }
            Msg::Data { key, value, exclusive, hit, applied } => {
                self.learn(key, applied);
                self.on_data(key, value, exclusive, hit, out);
            }
            Msg::WrAck { key, applied } => {
                self.learn(key, applied);
                self.on_write_granted(key, out);
            }
            Msg::FwdRd { key, tag } => self.on_forwarded_read(from, key, tag, out),
            Msg::Inv { key, tag } => self.on_invalidate(from, key, tag, out),
            Msg::FwdData { key, value, tag, applied } => {
                self.learn(key, applied);
                self.on_owner_data(key, tag, Some(value), out);
            }
            Msg::FwdNack { key, tag, applied } => {
                self.learn(key, applied);
                self.on_owner_data(key, tag, None, out);
            }
            Msg::InvAck { key, tag, applied } => {
                self.learn(key, applied);
                self.on_invalidate_ack(from, key, tag, out);
            }
            Msg::StData { key, value, tag, applied } => {
                self.learn(key, applied);
                self.on_storage_data(key, tag, value, out);
            }
            Msg::StAck { key, writer, applied } => {
                self.learn(key, applied);
                match writer {
                    super::msg::Writer::Owner => self.on_owner_write_stored(key, out),
                    super::msg::Writer::Home(tag) => self.on_home_write_stored(key, tag, out),
                    super::msg::Writer::External(_) => unreachable!("storage answers external writes to their application"),
                }
            }
            other @ (Msg::GetReply { .. }
            | Msg::PutReply { .. }
            | Msg::StGet { .. }
            | Msg::StPut { .. }
            | Msg::Pong
            | Msg::FailAck { .. }
            | Msg::LeaveAck { .. }
            | Msg::LeaveDone { .. }
            | Msg::JoinAck { .. }
            | Msg::JoinDone { .. }
            | Msg::Rejoin
            | Msg::ExtAck { .. }
            | Msg::CallFailed { .. }
            | Msg::TxLocked { .. }
            | Msg::TxSquashed
            | Msg::LockReq { .. }
            | Msg::LockRelease { .. }
            | Msg::FtVersionReq { .. }
            | Msg::FtVersion { .. }
            | Msg::FtDataReq { .. }
            | Msg::FtData { .. }
            | Msg::FtWrite { .. }
            | Msg::FtWriteAck { .. }) => {
                unreachable!("a cache agent does not handle {other:?}")
            }
        }
    }

    /// Sends `msg`, through the loopback when it is for this agent.
    pub(super) fn send(&mut self, to: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        if to == self.id {
            self.loopback.push_back((self.id, msg));
        } else {
            out.send(to, msg);
        }
    }

    /// Ghost: storage has applied at least `applied` writes of `key`.
    pub(super) fn learn(&mut self, key: Key, applied: u64) {
        let k = self.known.entry(key).or_insert(0);
        *k = (*k).max(applied);
    }

    pub(super) fn applied(&self, key: Key) -> u64 {
        self.known.get(&key).copied().unwrap_or(0)
    }

    pub(super) fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    pub fn lines(&self) -> &BTreeMap<Key, Line> {
        &self.lines
    }

    pub fn directory(&self) -> &BTreeMap<Key, Dir> {
        &self.directory
    }

    /// The coherence transactions this agent has in flight, by key.
    pub fn pending(&self) -> &BTreeMap<Key, Pending> {
        &self.pending
    }

    /// The ring this agent has in force (it changes at the end of a recovery it takes part in).
    pub fn ring(&self) -> &Ring {
        &self.ring
    }

    /// The agent's own invariants (the parts of §5.2 one agent can see):
    /// - I6, single home: every directory entry and directory request here is for a key the
    ///   ring homes here;
    /// - an E_W line is pinned: the owner with a direct write in flight holds the line in E with
    ///   the value it writes (eviction in E_W would let a reader see storage's older value);
    /// - deferred external requests exist only while such a write is in flight (A3);
    /// - an S-upgrade starts from S, and under the strict rules its new value is not visible
    ///   before the grant (A1);
    /// - no function waits for nothing: a waiting request always sits behind a pending one.
    pub fn check_invariants(&self) -> Result<(), String> {
        for key in self.directory.keys().chain(self.active.keys()).chain(self.queued.keys()) {
            let home = self.ring.home(*key);
            if home != self.id {
                return Err(format!("I6 single home: {:?} holds directory state for key {key}, homed at {home:?}", self.id));
            }
        }
        if !self.directory.keys().eq(self.directory_used.keys()) {
            return Err("the directory's LRU clock does not cover exactly its entries".into());
        }
        for (key, dir) in &self.directory {
            if let Dir::Shared(sharers) = dir
                && sharers.is_empty()
            {
                return Err(format!("directory entry for key {key} is S with no sharers"));
            }
        }
        for (key, p) in &self.pending {
            let line = self.lines.get(key);
            match p {
                Pending::OwnerWrite { value, .. } => {
                    if !line.is_some_and(|l| l.exclusive && l.value == Some(*value)) {
                        return Err(format!("E_W: the owner's line of key {key} is {line:?} while it writes {value}"));
                    }
                }
                Pending::Write { value, .. } => {
                    if let Some(l) = line {
                        if l.exclusive {
                            return Err(format!("SE_A: key {key} is upgraded from E"));
                        }
                        if self.rules.upgrade_applies_at_ack && l.value == Some(*value) {
                            return Err(format!("A1: key {key}'s upgrade value {value} is visible before the grant"));
                        }
                    }
                }
                Pending::Read { .. } => {}
            }
        }
        for key in self.deferred.keys() {
            if !matches!(self.pending.get(key), Some(Pending::OwnerWrite { .. })) {
                return Err(format!("requests for key {key} are deferred with no owner write in flight"));
            }
        }
        for (key, w) in &self.waiting {
            if !w.is_empty() && !self.pending.contains_key(key) {
                return Err(format!("{} requests for key {key} wait behind no pending transaction", w.len()));
            }
        }
        if !self.loopback.is_empty() {
            return Err("messages left in the loopback queue".into());
        }
        self.check_failure_invariants()?;
        self.check_membership_invariants()
    }
}
