//! Transactions (§IV-A; digest §2.11), at the cache agent: speculative lines, conflict
//! detection, commit under a global lock, squash. The function's side (attempts, back-off) is
//! in `client.rs`, the lock in `controller.rs`.
//!
//! - **Speculative state.** Each local function's transaction (the process ID is the function)
//!   has a read set (the keys it read: their lines are Speculatively Read) and a write buffer
//!   (Speculatively Written values, not sent to storage). A read of a key it wrote returns the
//!   buffered value; any other read is an ordinary coherence read.
//! - **Conflicts; the requester wins.** Locally, on access to the shared instance: a write of a
//!   key another transaction read or wrote, or a read of a key another wrote, squashes the other.
//!   Remotely, through coherence: an invalidation of a key a transaction read or wrote, or a
//!   forwarded read of a key it wrote, squashes it. A line a transaction read is not evicted
//!   while it runs (a choice: hardware TM squashes on such an eviction instead, but a transaction
//!   that reads more keys than the cache holds would then squash itself forever; here the cache
//!   overflows `lines_max` meanwhile, as it does for lines with a call in flight).
//! - **Commit.** The agent takes the global lock (the controller's), then writes every buffered
//!   value through the ordinary write path (invalidations, then storage; the function counts
//!   the acknowledgments), then releases the lock. From the grant on the transaction cannot be
//!   squashed: no other commit runs, so nothing invalidates what it read; a local transaction
//!   that touches a key the commit writes is squashed instead (it is the one that would see the
//!   commit in part).
//! - **Squash.** The speculative state is dropped and the function is told; it backs off and
//!   runs the transaction again (`client.rs`).
//! - **Progress** (the paper's "exponential back-off on conflict and priority increases after
//!   multiple squashes"): the function backs off exponentially, and each attempt carries its
//!   priority, the number of times the function was squashed before. A local conflict squashes
//!   the side with the lower priority; at equal priority the requester wins, so a first attempt
//!   follows the paper's rule exactly. Without it, 300 contended transactions over 8 keys
//!   (`scenarios/concord/txn-contended.json`) livelock: every newcomer squashes the
//!   transactions waiting for the lock, which run again and squash the next ones.
//!
//! Choices where the paper is silent, and one departure:
//! - **Priority is the squash count, and remote conflicts ignore it.** An invalidation comes
//!   from a commit, which holds the lock and cannot wait, and what the transaction read is
//!   stale: it is squashed whatever its priority; a forwarded read squashes a writer as the
//!   paper says (its message carries no priority). A requester that loses is squashed, and its
//!   call is still answered (as an ordinary read or a dropped buffered write), which the
//!   function ignores before its back-off.
//! - **A squashed attempt withdraws its lock request.** Each request carries a ticket; the
//!   squash sends the controller a release of it, which takes it out of the queue (or, if the
//!   grant is already on its way, releases the lock, and the agent drops that grant). Before
//!   this, a dead request was granted and handed back, a round trip to the controller with the
//!   lock idle; under contention they piled up faster than that (1.8 million grants for 18
//!   commits in the contended scenario's first version) and the lock's queue never drained.
//!   The paper says nothing about the lock's implementation.
//! - **The back-off** starts at `txn_backoff_ns` (1 ms), doubles per squash up to 64 times, and
//!   is staggered by the function's id so that rivals do not retry in step (nodes draw no
//!   random numbers).
//! - The paper also locks the directory entries of every accessed key during the commit
//!   (step 2). Here the per-key blocking directory and the global lock do that job: a
//!   transaction that reads a key while a commit writes it is invalidated by that write before
//!   it can take the lock, so no committed transaction sees a commit in part (a fractured read);
//!   the strict-serializability check of every transactional run holds that up.
//! - Each function's calls are one transaction ("a whole function", one of the paper's
//!   scopes); a transaction spanning functions is the paper's open question of tracking
//!   speculative state across machines, and is not modelled.
//! - The mutant `commit_without_global_lock` commits at once, without the lock: two commits
//!   then run together and neither squashes the other (write skew, lost update).

use super::agent::{Agent, Request};
use super::msg::{Msg, ReadClass, Tag, Timer};
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use std::collections::{BTreeMap, BTreeSet};

/// Where a transaction is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Running its calls.
    #[default]
    Running,
    /// Waiting for the global lock (still squashable).
    Locking,
    /// Holding the lock, writing its buffer (no longer squashable).
    Committing,
}

/// A transaction's speculative state at its machine's agent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Spec {
    pub reads: BTreeSet<Key>,
    pub writes: BTreeMap<Key, Value>,
    pub phase: Phase,
    /// The squashes of the function's earlier attempts: a local conflict squashes the side
    /// with the lower priority (the requester at a tie).
    pub priority: u32,
    /// Its request for the global lock, from `Locking` on.
    pub ticket: Tag,
}

/// Which of a transaction's sets a conflict looks at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Touch {
    Written,
    Either,
}

impl Spec {
    fn touches(&self, key: Key, touch: Touch) -> bool {
        match touch {
            Touch::Written => self.writes.contains_key(&key),
            Touch::Either => self.reads.contains(&key) || self.writes.contains_key(&key),
        }
    }
}

impl Agent {
    pub(super) fn tx_begin(&mut self, client: NodeId, priority: u32) {
        self.txns.insert(client, Spec { priority, ..Spec::default() });
    }

    /// A speculative read: the buffered value of a key the transaction wrote, else an ordinary
    /// read whose line is marked as read.
    pub(super) fn tx_get(&mut self, client: NodeId, key: Key, out: &mut Outbox<Msg, Timer>) {
        if let Some(value) = self.txns.get(&client).and_then(|s| s.writes.get(&key)).copied() {
            out.send(client, Msg::GetReply { key, value: Some(value), class: ReadClass::Local });
            return;
        }
        self.local_conflicts(client, key, false, out);
        if let Some(spec) = self.txns.get_mut(&client) {
            spec.reads.insert(key);
        }
        self.request(key, Request { client, write: None }, out);
    }

    /// A speculative write: buffered here, answered at once.
    pub(super) fn tx_put(&mut self, client: NodeId, key: Key, value: Value, out: &mut Outbox<Msg, Timer>) {
        self.local_conflicts(client, key, true, out);
        if let Some(spec) = self.txns.get_mut(&client) {
            spec.writes.insert(key, value);
        }
        out.send(client, Msg::PutReply { key });
    }

    /// Conflicts with the other local transactions when `client` reads or writes `key`. The
    /// requester wins (§IV-A), unless its rival has been squashed more often (the paper's
    /// priority increase; at equal priority the requester wins) or is committing and the
    /// requester reads what the commit writes: then the requester is squashed instead, and its
    /// call is still answered as an ordinary one.
    fn local_conflicts(&mut self, client: NodeId, key: Key, write: bool, out: &mut Outbox<Msg, Timer>) {
        let touch = if write { Touch::Either } else { Touch::Written };
        let priority = self.txns.get(&client).map_or(0, |s| s.priority);
        let rivals: Vec<(NodeId, Phase, u32)> =
            self.txns.iter().filter(|(d, s)| **d != client && s.touches(key, touch)).map(|(d, s)| (*d, s.phase, s.priority)).collect();
        let loses = rivals.iter().any(|&(_, phase, p)| match phase {
            // Reading a key a commit is writing: the reader might see it in part.
            Phase::Committing => !write,
            Phase::Running | Phase::Locking => p > priority,
        });
        if loses {
            out.count("concord_txn_requester_lost");
            self.squash(client, out);
            return;
        }
        for (rival, phase, _) in rivals {
            if phase != Phase::Committing {
                self.squash(rival, out);
            }
        }
    }

    /// A coherence message or an eviction touches `key`: squash the transactions it conflicts
    /// with (not a committing one: see the module doc).
    fn squash_touching(&mut self, key: Key, touch: Touch, except: Option<NodeId>, out: &mut Outbox<Msg, Timer>) {
        let hit: Vec<NodeId> = self
            .txns
            .iter()
            .filter(|(d, s)| Some(**d) != except && s.phase != Phase::Committing && s.touches(key, touch))
            .map(|(d, _)| *d)
            .collect();
        for d in hit {
            self.squash(d, out);
        }
    }

    /// An invalidation reached `key`'s line (§IV-A: a speculatively read or written line
    /// receives an external invalidation).
    pub(super) fn tx_on_invalidate(&mut self, key: Key, out: &mut Outbox<Msg, Timer>) {
        if self.rules.remote_squash {
            self.squash_touching(key, Touch::Either, None, out);
        }
    }

    /// A forwarded read reached `key`'s line (a speculatively written line receives an external
    /// read).
    pub(super) fn tx_on_forwarded_read(&mut self, key: Key, out: &mut Outbox<Msg, Timer>) {
        if self.rules.remote_squash {
            self.squash_touching(key, Touch::Written, None, out);
        }
    }

    /// Whether a transaction read `key`: its line is pinned (an eviction would hide the
    /// transaction's conflicts on it).
    pub(super) fn is_speculative(&self, key: Key) -> bool {
        self.txns.values().any(|s| s.reads.contains(&key))
    }

    fn squash(&mut self, client: NodeId, out: &mut Outbox<Msg, Timer>) {
        let Some(spec) = self.txns.remove(&client) else { return };
        if spec.phase == Phase::Locking {
            // Withdraw its request for the lock (or hand the lock back, if the grant is on its
            // way): a squashed attempt must not hold up the commits queued behind it.
            let controller = self.controller.expect("Concord agents know their controller");
            out.send(controller, Msg::LockRelease { client, ticket: spec.ticket });
        }
        out.count("concord_txn_squash");
        out.trace("Squash", || format!("{{\"client\":{}}}", client.0));
        out.send(client, Msg::TxSquashed);
    }

    /// The function finished its calls: take the global lock (or, mutant, commit at once).
    pub(super) fn tx_commit(&mut self, client: NodeId, out: &mut Outbox<Msg, Timer>) {
        // A squashed transaction has been told already.
        let ticket = self.next_tag;
        let Some(spec) = self.txns.get_mut(&client) else { return };
        if self.rules.global_commit_lock {
            spec.phase = Phase::Locking;
            spec.ticket = ticket;
            self.next_tag += 1;
            let controller = self.controller.expect("Concord agents know their controller");
            out.send(controller, Msg::LockReq { client, ticket });
        } else {
            self.commit(client, out);
        }
    }

    pub(super) fn on_lock_grant(&mut self, client: NodeId, ticket: Tag, out: &mut Outbox<Msg, Timer>) {
        // The grant of a squashed attempt's request: the squash gave the lock back already.
        if self.txns.get(&client).is_none_or(|s| s.phase != Phase::Locking || s.ticket != ticket) {
            out.count("concord_txn_stale_grant");
            return;
        }
        self.commit(client, out);
    }

    /// Writes the buffer through the ordinary write path; the function counts the answers.
    fn commit(&mut self, client: NodeId, out: &mut Outbox<Msg, Timer>) {
        let spec = self.txns.get_mut(&client).expect("committing a live transaction");
        spec.phase = Phase::Committing;
        let writes: Vec<(Key, Value)> = spec.writes.iter().map(|(k, v)| (*k, *v)).collect();
        out.count("concord_txn_commit");
        out.send(client, Msg::TxLocked { writes: writes.len() as u32 });
        for (key, value) in writes {
            self.squash_touching(key, Touch::Either, Some(client), out);
            self.request(key, Request { client, write: Some(value) }, out);
        }
    }

    /// Every commit write is acknowledged: the transaction is over; release the lock.
    pub(super) fn tx_release(&mut self, client: NodeId, out: &mut Outbox<Msg, Timer>) {
        let Some(spec) = self.txns.remove(&client) else { return };
        if self.rules.global_commit_lock {
            let controller = self.controller.expect("Concord agents know their controller");
            out.send(controller, Msg::LockRelease { client, ticket: spec.ticket });
        }
    }
}
