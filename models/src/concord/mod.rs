//! Concord (Stojkovic et al., "Rethinking Distributed Coherence for Software Caches in
//! Serverless Environments"): directory-based coherence for per-application function caches,
//! checked for per-key linearizability.
//!
//! # The protocol
//!
//! Every machine that runs the application's functions has a cache instance managed by a cache
//! agent (`agent.rs`); the functions on that machine call it for every storage access
//! (`client.rs`). Lines are E (exclusive, the owner), S or I, and always clean: caches are
//! write-through to global storage (`storage.rs`). Each key has a home agent, chosen by
//! consistent hashing over the live agents (`ring.rs`), which keeps the key's directory entry:
//! its sharers, or its owner. The six coherence operations (local and remote read hit, read
//! miss, local and remote write hit, write miss; evictions are silent) are split between the
//! requester's side (`cache.rs`) and the home's (`home.rs`), following the paper's §III-C2 and
//! the transition tables of the digest (`design/protocols/concord.md` §2.4).
//!
//! # Fidelity: choices where the paper is silent, and findings where it is wrong
//!
//! - **Nodes.** One cache agent per worker machine (`S0 … S(n−1)`), one application,
//!   storage on the `db` machine and the controller on `ctl`. Channels are reliable and FIFO
//!   per pair (gRPC over TCP), so an invalidation never overtakes the data it follows (A5) and
//!   no IS_D_I state is needed.
//! - **The E-owner deferral guard (A3)** is the paper's: the owner defers forwarded reads and
//!   invalidations until storage acknowledges its direct write, and the home invalidates an
//!   owner *before* writing storage. Removing either loses updates (mutants below).
//! - **A blocking directory (A15).** The paper says the home "processes one write operation at
//!   a time"; we queue every request per key (reads too) while one is in flight, since a read
//!   miss racing a write otherwise installs stale data in E.
//! - **Gaps filled as the digest recommends:** an owner re-requesting a line it evicted is
//!   served from storage in E; an S-upgrade invalidated by an earlier-serialized write goes on
//!   as a write from I (A2); a line with a transaction in flight is never evicted; one
//!   transaction per key per agent, with later calls of the machine's functions waiting behind
//!   it (a read of a valid line is served at once).
//! - **Strict rules** (`params.strict`, default true) replace paper-literal rules that break
//!   linearizability; each is a finding about the paper (the † cases of the digest §5.3):
//!   - `upgrade_applies_at_ack` (A1, A2): paper-literal, a write to an S line "updates the
//!     local cache" before the home serializes it, so a function on that machine (or a remote
//!     read the home serves from its own copy) reads the new value while another sharer still
//!     serves the old one: a read of v2 followed by a read of v1. Strictly, the line keeps the
//!     old value until the home's grant. `scenarios/concord/a1-*.json`, `a2-*.json`.
//!   - `owner_reads_after_storage`: paper-literal, a function on the owner's machine reads
//!     the owner's direct write as soon as the line holds it (a local read hit), before storage
//!     has it; if the owner then crashes, storage never gets the write (it is fenced), and a
//!     later read elsewhere returns the older value: a read of v2 followed by a read of v1.
//!     Strictly, such a read waits for storage's ack. Found by TLC and Stateright on the
//!     `OwnerRead` plan (specs/concord/README.md, finding 1).
//!   - `recall_on_directory_eviction` (A12): the paper lets a shrinking cache evict "data items
//!     and possibly directory entries" without saying what happens to the copies the entry
//!     tracked. Paper-literal they stay, untracked: a later write misses at the home,
//!     invalidates nothing, and the old copies keep being read. Strictly, the home invalidates
//!     them first (the entry stays busy meanwhile). `scenarios/concord/a12-*.json`.
//! - **Ghost state for invariant I8** (write ordering): every storage write carries the number
//!   of writes of its key its serializer knows were applied, and storage checks that it is
//!   exactly its own count. The knowledge travels with grants, acks and forwarded data.
//! - **Invariants.** With `checks.invariants`, each node checks its own after every input: I6
//!   and the local rules at each agent (`Agent::check_invariants`), I8 at storage. The
//!   cross-node ones need every node at once: `explore.rs` (tests) runs small systems under
//!   random schedules and checks I1 SWMR, I2 directory superset, I3 no untracked copies and
//!   I4 clean copies after every step, and that every call finishes. I4 as the digest states it
//!   is false of the paper's own protocol (the home writes storage in parallel with
//!   invalidating sharers, which hold the old value meanwhile); it holds with that exception.
//! - **A finding about A3:** with one constant storage latency, an owner that answers early
//!   (`no_owner_deferral`) is never observed by clients: storage applies writes and serves reads
//!   in the order they were sent, and the owner's write was sent before anything its early
//!   answer lets happen. The guard matters because storage latency varies; the mutant's
//!   scenarios use a slow link from the owner to storage.
//!
//! # Failures (§III-F, §III-H): `controller.rs`, `failure.rs`
//!
//! A controller node (ZooKeeper and the App Controller, on its own `ctl` machine with its own
//! link delays) pings every agent each `heartbeat_ns` and declares one failed after
//! `heartbeat_timeout_ns` of silence. It tells the survivors and storage; each fences the failed
//! agent (drops what it still has on the wire), the survivors evict every line it homed (its
//! directory is lost; storage is current, caches being write-through), cancel and later reissue
//! the reads they had in flight to it, fail the writes (indeterminate: the function's workflow
//! is retried with fresh values), and drain their own direct writes to its keys before they
//! acknowledge. With every acknowledgment in, the controller ends the recovery: the ring
//! without the failed agent is in force (its keys go to its clockwise successor, which starts
//! with no entries: "the directory is not rebuilt"), and homes treat its missing answers as
//! "gone". Until then nobody can read its keys from storage: the paper's rule for the critical
//! case, a home that failed after storing a write but before invalidating every copy
//! (`scenarios/concord/a6-home-crash-after-store.json`). Choices where the paper is silent:
//!
//! - **Storage fences the failed agent.** A crashed owner's direct write still on the wire
//!   would otherwise land after the survivors wrote the key again (A9; the mutant
//!   `no_storage_fencing`). The paper only says storage is always up to date.
//! - **Recovery is a barrier**, as the paper's rule requires ("until the recovery is
//!   complete"): the new home serves the failed agent's keys only once every survivor has
//!   evicted them. A survivor's own direct write to such a key is drained first.
//! - **A function on the crashed machine** gets no answer: after `call_timeout_ns` it aborts its
//!   workflow, which the engine retries (its unanswered write recorded as indeterminate).
//! - **Homes are not reconstructed from the survivors' lines**: they are evicted instead, as
//!   the paper does; entries come back through misses.
//! - **A6 † (home crash mid-write).** The paper's recovery protects the other caches from a
//!   half-done write, not the writer: paper-literal, an S-upgrade shows its value at once (A1),
//!   so a function on the writer's machine reads a value that, when the home dies before
//!   storing it, never existed: it appears, then disappears
//!   (`a6-home-crash-mid-write-paper.json` fails; the strict rule `upgrade_applies_at_ack`
//!   passes, `a6-home-crash-mid-write-strict.json`).
//! - **Ghost state across recovery.** Storage's write counts at its fence, and the agents' for
//!   the writes they drained, travel with the acknowledgments and the end of recovery, so the
//!   new homes serialize after every write applied (I8). The random-schedule exploration
//!   (`explore.rs`) found the drained writes missing from a first version of this.
//! - **Invariant I7** (failure fencing) is checked at each agent: during a recovery it holds no
//!   line of the failed agent's keys but a draining E_W one and no call in flight to it; after,
//!   the failed agent is out of its ring and its entries. `explore.rs` crashes an agent at a
//!   random step of random schedules and checks I1–I4 and I7 throughout, and that every
//!   surviving call finishes.
//!
//! A **restart** is a join (§III-D): the restarted agent comes back empty and asks the controller
//! to rejoin; if its failure has not been detected yet, the controller declares it now and
//! recovers from it first, then runs the join (below). An agent declared failed while alive
//! asks to rejoin the same way. `scenarios/concord/crash-restart-rejoin.json`.
//!
//! Refused (`Concord::check_run`): more than one crash per run (concurrent recoveries are not
//! modelled), crashing storage or the controller (assumed reliable), message loss and dropping partitions
//! (the requester-timeout path of §III-H), and partitions that cut the controller off (A7: a
//! partitioned but alive agent declared failed keeps serving its lines; self-fencing is not
//! modelled). An agent declared failed while alive (only slow) is told, and stops serving;
//! until that notice reaches it, it may still serve local hits after the recovery ended (A7
//! again), which the default 300 ms timeout makes unlikely but does not exclude.
//!
//! Scenarios: `a6-home-crash-after-store` (the critical case), `a6-home-crash-mid-write-*`,
//! `a9-owner-crash-mid-write`, `a10-ack-from-failed-sharer` (a home waiting for a failed
//! sharer's ack treats it as received at the end of recovery), and the two mutants'.
//!
//! # Membership (§III-D): `membership.rs`
//!
//! `params.leaves` schedules departures (`{"node": "S2", "at_ns": …}`): the controller runs
//! the paper's two synchronizations around the migration of the departing agent's directory
//! entries to its clockwise successor, so the other agents' copies stay valid. Choices where
//! the paper is silent: the departing agent stops caching at once, finishes the directory
//! transactions it has started (A8), drains its direct writes, holds new requests and hands
//! them on to the successor after its entries; the successor holds requests for the moved
//! keys until the entries arrive (A13: one home per key at every instant, even with ring
//! views out of sync); the departing agent's functions are failed (their workflows retry).
//! One domain change at a time: a departure waits for a recovery, and no failure is declared
//! during a departure (a participant that crashes then stalls it: calls time out, no stale
//! value is served). Scenarios: `a8-home-leaves-with-forwarded-read`,
//! `a13-leave-views-out-of-sync`, and the mutants `leave_without_migration` and
//! `serve_before_entries` on them.
//!
//! `params.joins` schedules an agent's return after its departure (a crashed agent's restart
//! and an agent declared failed while alive join the same way). The controller tells the
//! joiner first, which starts afresh in the ring with itself and greets every member and
//! storage (`Hello`: on FIFO links whatever an earlier incarnation still had on the wire
//! arrives first, so they lift its fence); then every member (the first barrier): each
//! switches to the ring with the joiner, except the joiner's clockwise successor, which keeps
//! serving the joiner's keys; the joiner holds requests for them. Then the successor finishes
//! its transactions on those keys (holding new ones), synchronizes with every agent as a
//! departing one does, switches rings and hands the joiner those entries (its own copies stay
//! valid, recorded in them) and the held requests; `Joined` to all is the second barrier, after
//! which the joiner serves its functions (before, their calls fail and their workflows retry:
//! a member that still counted the joiner as departed would drop it from its entries).
//! Choices where the paper is silent ("similar steps" to a departure): the members learn of a
//! joiner only after it has started afresh; the entries move from the successor, not from all.
//! `scenarios/concord/rejoin-after-leave.json`. A crash during a domain change still stalls
//! that change (calls time out and workflows give up; no stale value is served).
//!
//! **Incarnations.** What was sent to or by an agent before it restarted (or was removed) must
//! not reach its next incarnation as if meant for it: the survivors fence it until its
//! greeting (`Hello`, first of anything the new incarnation sends); each member sends a joiner
//! `Welcome` first of anything it sends the new incarnation, and the joiner drops what arrives
//! before it (`restart-stale-request.json`: a read held by a partition reached the new
//! incarnation, which answered it; found by the fuzzer); homes answer no requester that failed
//! meanwhile; transaction tags keep counting across incarnations, so a late answer never names
//! a new transaction and is dropped.
//!
//! # External writes (§III-C3): `external.rs`, `storage.rs`
//!
//! With `params.external_app` an application outside the domain runs on its own machine `ext`
//! and reads and writes storage directly; storage's listener (a function, modelled as the
//! `db`→`ctl` link) reports each external write to the controller, which sends it to the key's
//! home. The home invalidates every copy (an owner's direct write in flight lands first: it
//! defers the invalidation) and drops the entry, so the next read misses and reads storage;
//! whether the home keeps the new value, the paper does not say (it does not).
//!
//! - **A11 † (the external-write window).** Paper-literal, storage applies and acknowledges the
//!   write at once and the invalidations follow: a cache serves the old value after the write
//!   completed (`a11-external-write-paper.json` fails). Under the strict rule
//!   `external_through_home` (`params.strict`) storage hands the write to the home, which
//!   writes it like any other write (invalidations, the storage write, then the answer), so it
//!   takes effect in the key's order at the home (`a11-external-write-strict.json` passes).
//! - **External reads** bypass the caches and are not linearizable with the functions' calls
//!   even under the strict rules (`a11-external-read-strict.json` fails, a finding): the home
//!   writes storage in parallel with invalidating the sharers (§III-C2), so storage can serve
//!   the new value while a sharer still serves the old one. Closing it would cost the write the
//!   overlap the paper relies on; generated workloads therefore do not use `ext` (the fuzzer
//!   never sets `external_app`).
//!
//! # Transactions (§IV-A): `txn.rs`, `client.rs`, the lock in `controller.rs`
//!
//! With `params.transactions` each function's calls are one transaction: its agent tags the
//! lines it reads and buffers its writes (speculative lines), conflicts squash it (the requester
//! wins; locally on access to the shared instance, remotely when an invalidation or a forwarded
//! read reaches a speculative line, a line it read is pinned meanwhile), and it commits by taking
//! the controller's global lock and writing its buffer through the ordinary write path. A
//! squashed transaction backs off exponentially and runs again. Its history line (kind `txn`)
//! holds every read and write of the attempt that committed, over the interval from the first
//! attempt's start to the last commit write's acknowledgment; `strict-serializable` judges them.
//! Progress under contention is the paper's software-TM recipe: exponential back-off and a
//! priority that grows with each squash (a local conflict squashes the side squashed less
//! often), and a squashed attempt withdraws its request for the lock. Choices where the paper is
//! silent (and why the directory locks of its commit step are left to the blocking directory)
//! are in `txn.rs`. Not modelled with transactions, and refused by `build`: domain changes and
//! external writes (what happens to speculative lines when a home moves, the paper does not
//! say), and a bounded directory (`directory_max`: a recall squashes the transactions that read
//! the recalled copies, so a transaction reading more of one home's keys than its directory
//! holds squashed itself forever; the fuzzer found it). Crashes are refused too
//! (`Model::faults_for`): the paper does not handle a crash during a commit (digest A14,
//! "commit-lock holder crash": the holder would keep the lock, its commit half done); and the
//! failure detector is off, since an agent that is only slow would otherwise be declared
//! failed, with the same unmodelled recovery (the fuzzer found one). Runs with transactions
//! are checked at `strict-serializable` (`Model::level_for`; the fuzzer draws transactions in a
//! third of its cases). Scenarios:
//! `txn-write-skew` (a conflicting race that the lock and the invalidation settle),
//! `txn-contended` (300 transactions over 8 Zipf keys: every one commits), and the mutants
//! `commit_without_global_lock` and `no_remote_squash` on the race.
//!
//! # Mutants (`protocol.mutants`)
//!
//! See [`MUTANTS`]: each removes one safeguard and names the anomaly it allows.
//!
//! # Not modelled yet
//!
//! Cache resizing (capacities are fixed here: `lines_max`, `directory_max`),
//! transactions spanning functions (§2.11's open question), communication-aware placement (§2.12; coherence-aware scheduling is
//! the engine's `hash_of_input` placement). TLA+ and Stateright: `specs/concord/`, `specs/src/concord_model.rs`. The Faa$T baseline is `faast.rs` (its own catalogue entry,
//! `faast`), sharing the ring, storage and client; the OFC baseline (`ofc`, `ofc.rs`) is Faa$T's
//! homes with no copies outside them. A scenario with read transactions is refused with
//! an error naming the field. Partitions that hold messages until they heal (and do not
//! involve the controller) only delay them, which Concord's reliable channels allow.

mod agent;
mod cache;
mod client;
mod controller;
#[cfg(test)]
mod explore;
mod external;
mod faast;
mod failure;
mod home;
mod membership;
mod msg;
mod ofc;
mod ring;
mod storage;
mod txn;

pub use agent::{Agent, Dir, Line, Pending};
pub use client::Client;
pub use controller::Controller;
pub use external::External;
pub use faast::{Faast, FaastAgent, FaastNode};
pub use msg::{Msg, Timer};
pub use ofc::Ofc;
pub use ring::Ring;
pub use storage::Storage;

use crate::catalogue::{Entry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, Support, parse_params};
use causim_checkers::Level;
use causim_sim::config::{SimConfig, TopologyConfig};
use causim_sim::error::FieldError;
use causim_sim::node::{Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::workload::{ScriptOp, WorkloadConfig};
use proptest::prelude::*;
use serde::Deserialize;

/// Named bugs (the scenario's `protocol.mutants`).
pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "no_owner_deferral",
        about: "the E owner answers forwarded reads and invalidations while its direct write to storage is \
                in flight (A3 without the guard): the home then writes storage before the owner's write lands, \
                or serves a reader from storage's older value (lost update, stale read: NonLinearizable); clients see it \
                only when storage latency varies",
    },
    Mutant {
        name: "inv_parallel_with_put",
        about: "a write at the home to a key owned in E sends the invalidation and the storage write in \
                parallel, as in the S case: the owner's in-flight direct write can land after it (lost update, \
                then stale reads: NonLinearizable)",
    },
    Mutant {
        name: "non_blocking_directory",
        about: "the home starts every request at once instead of queueing it behind the key's transaction in \
                flight (A15): a read miss racing a write installs the value it read before the write in E, \
                after the write completed (StaleRead)",
    },
    Mutant {
        name: "no_failure_eviction",
        about: "on a failure notification the survivors keep their copies of the keys the failed agent homed (I7): \
                the new home, with no entry for them, lets a write through without invalidating those copies, \
                and they keep serving the old value after the write completed (NonLinearizable)",
    },
    Mutant {
        name: "leave_without_migration",
        about: "a departing agent drops its directory entries instead of handing them to its successor (§III-D): \
                the new home starts with no entry, lets a write through without invalidating the copies the \
                entries tracked, and they keep serving the old value (StaleRead)",
    },
    Mutant {
        name: "serve_before_entries",
        about: "a successor serves a departing agent's keys as soon as it switches rings, before their entries \
                arrive (A13: two homes at once, a split directory): a write there invalidates nothing the \
                departing home tracked, and its copies keep serving the old value (StaleRead)",
    },
    Mutant {
        name: "commit_without_global_lock",
        about: "a transaction commits as soon as its calls are done, without the global commit lock (§IV-A): two \
                commits run together, neither can be squashed any more, and each misses the other's writes \
                (write skew, lost update: NonSerializable at strict-serializable)",
    },
    Mutant {
        name: "no_remote_squash",
        about: "an invalidation or forwarded read of a speculatively read or written line does not squash its \
                transaction (§IV-A's remote conflict detection): a transaction commits after another overwrote what \
                it read (write skew, lost update: NonSerializable at strict-serializable)",
    },
    Mutant {
        name: "no_storage_fencing",
        about: "storage still applies a failed agent's writes that reach it after the failure notification (A9): \
                a crashed owner's slow direct write lands after the survivors wrote the key again, breaking \
                storage's write order (I8); with the strict rules no function read that write, so the \
                history stays linearizable (paper-literal, a value read before the crash comes back)",
    },
];

/// `protocol.params`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ConcordParams {
    /// The strict rules where the paper-literal ones break linearizability (see the module
    /// essay). Default true.
    #[serde(default = "yes")]
    pub strict: bool,
    /// Lines each cache instance holds before it evicts (LRU, silently). Default unlimited.
    #[serde(default)]
    pub lines_max: Option<usize>,
    /// Directory entries each home holds before it evicts one (LRU, among entries with no
    /// transaction in flight). Default unlimited.
    #[serde(default)]
    pub directory_max: Option<usize>,
    /// The controller pings every cache agent this often. Default 100 ms.
    #[serde(default = "heartbeat_ns")]
    pub heartbeat_ns: Time,
    /// An agent silent this long is declared failed. Default 300 ms (three heartbeats).
    #[serde(default = "heartbeat_timeout_ns")]
    pub heartbeat_timeout_ns: Time,
    /// A function whose call gets no answer for this long aborts its workflow (its machine
    /// crashed). Default 10 s.
    #[serde(default = "call_timeout_ns")]
    pub call_timeout_ns: Time,
    /// The home keeps a copy of the data a remote read brings it (from storage, or forwarded
    /// by the owner) in its own cache instance, which joins the sharers, so later remote reads
    /// of the key are served from it instead of storage. The paper is silent (the home serves
    /// "from its own cache instance if present"); its 3.1 ms average remote hit implies the home
    /// usually has the data. Default false.
    #[serde(default)]
    pub home_keeps_copy: bool,
    /// Cache instances that leave the coherence domain (§III-D), one at a time, in the
    /// order they are due. Default none.
    #[serde(default)]
    pub leaves: Vec<LeaveParam>,
    /// An application outside the domain on its own machine `ext` (`external.rs`): functions a
    /// script runs there read and write storage directly, and storage's listener reports their
    /// writes to the key's home (§III-C3). A generated workload places functions there too,
    /// whose reads are not linearizable with the caches' (see the module essay). Default false.
    #[serde(default)]
    pub external_app: bool,
    /// Cache instances that (re)join the domain after leaving it (§III-D), in the same order
    /// as the departures: a join waits for the changes due before it. Default none.
    #[serde(default)]
    pub joins: Vec<LeaveParam>,
    /// Each function's calls are one transaction (§IV-A, `txn.rs`): speculative reads and
    /// writes, conflicts squash, commits under a global lock. Check its runs at
    /// `strict-serializable`. Default false.
    #[serde(default)]
    pub transactions: bool,
    /// A squashed transaction waits this long before running again, doubled per squash (up to
    /// 64 times). Default 1 ms.
    #[serde(default = "txn_backoff_ns")]
    pub txn_backoff_ns: Time,
}

/// One departure or join: the agent (`S<i>`) and when the controller starts it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct LeaveParam {
    pub node: String,
    pub at_ns: Time,
}

fn yes() -> bool {
    true
}

fn heartbeat_ns() -> Time {
    100_000_000
}

fn heartbeat_timeout_ns() -> Time {
    300_000_000
}

fn txn_backoff_ns() -> Time {
    1_000_000
}

fn call_timeout_ns() -> Time {
    10_000_000_000
}

/// The rules an agent follows: the strict ones, the mutants, the capacity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Strict rule (A1, A2): an S-upgrade's value becomes visible at the home's grant.
    pub upgrade_applies_at_ack: bool,
    /// Strict rule: a read at the owner's machine waits for storage's ack of the owner's
    /// direct write (paper-literal, it reads the write while it is still in flight).
    pub owner_reads_after_storage: bool,
    /// A3: the owner defers external requests during its direct write (off: `no_owner_deferral`).
    pub owner_defers: bool,
    /// The home invalidates an E owner before writing storage (off: `inv_parallel_with_put`).
    pub inv_before_put: bool,
    /// A15 (off: `non_blocking_directory`).
    pub blocking_directory: bool,
    pub lines_max: Option<usize>,
    /// Strict rule (A12): a home recalls (invalidates) a directory entry's copies before
    /// evicting it.
    pub recall_on_directory_eviction: bool,
    pub directory_max: Option<usize>,
    /// I7: survivors evict the failed agent's keys (off: `no_failure_eviction`).
    pub evict_on_failure: bool,
    /// A departing agent hands its entries to its successor (off: `leave_without_migration`).
    pub migrate_entries: bool,
    /// A successor holds requests for a departing agent's keys until their entries arrive
    /// (off: `serve_before_entries`).
    pub await_entries: bool,
    /// The home keeps a copy of what it serves from storage or the owner (`params`).
    pub home_keeps_copy: bool,
    /// Transactions commit under the global lock (off: `commit_without_global_lock`).
    pub global_commit_lock: bool,
    /// Invalidations and forwarded reads squash the transactions they conflict with (off:
    /// `no_remote_squash`).
    pub remote_squash: bool,
}

/// Every role of Concord.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConcordNode {
    Agent(Box<Agent>),
    Storage(Box<Storage>),
    Controller(Box<Controller>),
    External(Box<External>),
    Client(Box<Client>),
}

impl Node for ConcordNode {
    type Msg = Msg;
    type Timer = Timer;

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Timer>) {
        match self {
            ConcordNode::Client(c) => c.on_start(now, out),
            ConcordNode::Controller(c) => c.on_start(now, out),
            ConcordNode::Agent(_) | ConcordNode::Storage(_) | ConcordNode::External(_) => {}
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match self {
            ConcordNode::Agent(a) => a.on_message(from, msg, out),
            ConcordNode::Storage(s) => s.on_message(from, msg, out),
            ConcordNode::Controller(c) => c.on_message(now, from, msg, out),
            ConcordNode::External(e) => e.on_message(from, msg, out),
            ConcordNode::Client(c) => c.on_message(now, msg, out),
        }
    }

    fn on_timer(&mut self, now: Time, timer: Timer, out: &mut Outbox<Msg, Timer>) {
        match (self, timer) {
            (ConcordNode::Controller(c), Timer::Heartbeat) => c.heartbeat(now, out),
            (ConcordNode::Controller(c), Timer::Leave(i)) => c.leave_due(now, i, out),
            (ConcordNode::Controller(c), Timer::Join(i)) => c.join_due(now, i, out),
            (ConcordNode::Client(c), Timer::CallTimeout) => c.on_timeout(out),
            (ConcordNode::Client(c), Timer::Backoff) => c.on_backoff(now, out),
            (node, timer) => unreachable!("{timer:?} fired at {node:?}"),
        }
    }

    fn on_restart(&mut self, _now: Time, out: &mut Outbox<Msg, Timer>) {
        match self {
            // Its keys are being (or have been) re-homed: it comes back empty, as a join.
            ConcordNode::Agent(a) => a.on_restart(out),
            other => unreachable!("only cache agents crash (Concord::check_run): {other:?}"),
        }
    }

    fn check_invariants(&self) -> Result<(), String> {
        match self {
            ConcordNode::Agent(a) => a.check_invariants(),
            ConcordNode::Storage(s) => s.check_invariants(),
            ConcordNode::Controller(_) | ConcordNode::External(_) | ConcordNode::Client(_) => Ok(()),
        }
    }
}

/// Concord as the engine sees it.
#[derive(Clone, Debug)]
pub struct Concord {
    pub agents: usize,
    pub params: ConcordParams,
    pub rules: Rules,
    /// Storage fences failed agents (off: `no_storage_fencing`).
    pub storage_fencing: bool,
}

impl Concord {
    pub fn storage_id(&self) -> NodeId {
        NodeId::fixed(self.agents)
    }

    pub fn controller_id(&self) -> NodeId {
        NodeId::fixed(self.agents + 1)
    }

    pub fn ring(&self) -> Ring {
        Ring::new(&(0..self.agents).map(|i| (i, NodeId::fixed(i))).collect::<Vec<_>>())
    }
}

impl Protocol for Concord {
    type Node = ConcordNode;
    type Context = ();

    fn fixed_nodes(&self) -> Vec<FixedNode<ConcordNode>> {
        let ring = self.ring();
        let mut nodes: Vec<FixedNode<ConcordNode>> = (0..self.agents)
            .map(|i| FixedNode {
                name: format!("S{i}"),
                machine: format!("S{i}"),
                hosts_workers: true,
                node: ConcordNode::Agent(Box::new(
                    Agent::new(NodeId::fixed(i), ring.clone(), self.storage_id(), self.rules.clone()).with_controller(self.controller_id()),
                )),
            })
            .collect();
        // Strict (A11): an external write takes effect through the key's home.
        let storage = Storage::new(self.storage_fencing).with_listener(self.controller_id(), self.params.strict);
        nodes.push(FixedNode {
            name: "db".into(),
            machine: "db".into(),
            hosts_workers: false,
            node: ConcordNode::Storage(Box::new(storage)),
        });
        let agents: Vec<NodeId> = (0..self.agents).map(NodeId::fixed).collect();
        let p = &self.params;
        let schedule =
            |l: &[LeaveParam]| l.iter().map(|l| (NodeId::fixed(agent_index(&l.node).expect("checked by build")), l.at_ns)).collect();
        // With transactions nothing crashes (`faults_for`), and the failure detector is off: a
        // slow agent declared failed would need the recovery of transactional state that is
        // not modelled (the fuzzer found one, its pongs held up on a slow link).
        let timeout_ns = if p.transactions { Time::MAX } else { p.heartbeat_timeout_ns };
        let controller = Controller::new(&agents, self.storage_id(), p.heartbeat_ns, timeout_ns, schedule(&p.leaves), schedule(&p.joins));
        nodes.push(FixedNode {
            name: "ctl".into(),
            machine: "ctl".into(),
            hosts_workers: false,
            node: ConcordNode::Controller(Box::new(controller)),
        });
        if p.external_app {
            nodes.push(FixedNode {
                name: "ext".into(),
                machine: "ext".into(),
                hosts_workers: true,
                node: ConcordNode::External(Box::new(External::new(self.storage_id()))),
            });
        }
        nodes
    }

    fn new_context(&self) {}

    fn spawn_function(&self, start: FunctionStart<'_, ()>) -> ConcordNode {
        let client = Client::new(start.colocated[0], start.ops, start.now, self.params.call_timeout_ns);
        if self.params.transactions {
            ConcordNode::Client(Box::new(client.transactional(start.self_id, self.params.txn_backoff_ns)))
        } else {
            ConcordNode::Client(Box::new(client))
        }
    }

    fn finish_function(&self, _node: ConcordNode) {}

    fn join_contexts(&self, _contexts: Vec<()>) {}
}

/// What the model recovers from (§2.9); the limits inside a crash (which nodes, enough
/// survivors) and partitions that cut the controller off are refused by `check_run`.
const FAULTS: FaultModel = FaultModel {
    drop_partition: Support::Outside(
        "a dropping partition needs the requester-timeout path of §III-H, which is not modelled; use \"hold\"",
    ),
    loss: Support::Outside("Concord assumes reliable channels and its message-loss path (requester timeouts, §III-H) is not modelled"),
    crash: Support::Survives(
        "a crashed function instance is detected by heartbeat at the controller, fenced, and the keys it homed are evicted and re-homed (§2.9)",
    ),
    restart: Support::Survives(
        "a restarted function instance comes back empty and rejoins the domain (§III-D): its failure is recovered from first, then it takes its keys back from its successor",
    ),
    crashes_max: 1,
};

/// With `params.transactions`: no crashes (digest A14's open questions; the paper is silent on
/// both). A crashed commit-lock holder would keep the lock, and one that crashed mid-commit
/// would leave its commit half done; and the lines a transaction read lose their conflict
/// detection when their home fails and they are evicted.
const TXN_FAULTS: FaultModel =
    FaultModel { crash: Support::Outside(TXN_NO_CRASH), restart: Support::Outside(TXN_NO_CRASH), crashes_max: 0, ..FAULTS };

const TXN_NO_CRASH: &str = "with params.transactions, crashes are not modelled: the paper does not say what happens when the \
                            commit-lock holder crashes (mid-commit, its writes half done) or the home of a speculatively read line fails";

/// Whether `protocol.params` turn transactions on.
fn transactional(params: &serde_json::Value) -> bool {
    params.get("transactions").and_then(serde_json::Value::as_bool).unwrap_or(false)
}

impl Model for Concord {
    const ENTRY: Entry = Entry {
        name: "concord",
        about: "Concord (directory-based ESI coherence for per-application function caches, write-through to storage); per-key linearizability",
        level: Level::Linearizable,
        mutants: MUTANTS,
        profile: Profile {
            database: true,
            observations: &[
                crate::metrics::READ_LOCAL_NS,
                crate::metrics::READ_REMOTE_HIT_NS,
                crate::metrics::READ_MISS_NS,
                crate::metrics::INVALIDATIONS_PER_WRITE,
                crate::metrics::TXN_SQUASHES,
            ],
            ..Profile::PLAIN
        },
        faults: FAULTS,
        series: &[SeriesStyle { label: "Concord", colour: (213, 94, 0) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: ConcordParams = parse_params(params)?;
        if params.lines_max == Some(0) {
            return Err(FieldError::new("params.lines_max", "must be at least 1"));
        }
        if params.directory_max == Some(0) {
            return Err(FieldError::new("params.directory_max", "must be at least 1"));
        }
        if params.heartbeat_ns == 0 {
            return Err(FieldError::new("params.heartbeat_ns", "must be at least 1"));
        }
        if params.heartbeat_timeout_ns < params.heartbeat_ns {
            return Err(FieldError::new("params.heartbeat_timeout_ns", "must be at least params.heartbeat_ns (one heartbeat)"));
        }
        if params.call_timeout_ns <= params.heartbeat_timeout_ns {
            return Err(FieldError::new(
                "params.call_timeout_ns",
                "must exceed params.heartbeat_timeout_ns (a call waits for a failure to be detected and recovered from)",
            ));
        }
        check_domain_changes(&params, topology.servers as usize)?;
        if params.transactions {
            if params.txn_backoff_ns == 0 {
                return Err(FieldError::new("params.txn_backoff_ns", "must be at least 1"));
            }
            let refused = [
                (!params.leaves.is_empty(), "params.leaves"),
                (!params.joins.is_empty(), "params.joins"),
                (params.external_app, "params.external_app"),
            ];
            if let Some((_, field)) = refused.iter().find(|(on, _)| *on) {
                return Err(FieldError::new(
                    *field,
                    "transactions (params.transactions) are modelled without domain changes or external writes: the paper does not say what happens to speculative state when a home moves",
                ));
            }
            if params.directory_max.is_some() {
                return Err(FieldError::new(
                    "params.directory_max",
                    "transactions (params.transactions) are modelled with unbounded directories: a directory eviction recalls the copies, \
                     which squashes the transactions that read them, so a transaction reading more of one home's keys than its directory \
                     holds would squash itself forever (the paper does not say how directory evictions meet speculative lines)",
                ));
            }
        }
        let rules = Rules {
            upgrade_applies_at_ack: params.strict,
            owner_reads_after_storage: params.strict,
            owner_defers: !mutants.contains(&"no_owner_deferral"),
            inv_before_put: !mutants.contains(&"inv_parallel_with_put"),
            blocking_directory: !mutants.contains(&"non_blocking_directory"),
            lines_max: params.lines_max,
            recall_on_directory_eviction: params.strict,
            directory_max: params.directory_max,
            evict_on_failure: !mutants.contains(&"no_failure_eviction"),
            migrate_entries: !mutants.contains(&"leave_without_migration"),
            await_entries: !mutants.contains(&"serve_before_entries"),
            home_keeps_copy: params.home_keeps_copy,
            global_commit_lock: !mutants.contains(&"commit_without_global_lock"),
            remote_squash: !mutants.contains(&"no_remote_squash"),
        };
        let storage_fencing = !mutants.contains(&"no_storage_fencing");
        Ok(Concord { agents: topology.servers as usize, params, rules, storage_fencing })
    }

    fn check_run(config: &SimConfig) -> Result<(), FieldError> {
        let f = &config.faults;
        if let Some(c) = f.crashes.first() {
            let agent = c.node.strip_prefix('S').and_then(|i| i.parse::<u32>().ok()).filter(|&i| i < config.topology.servers);
            if agent.is_none() {
                return Err(FieldError::new(
                    "faults.crashes[0].node",
                    format!(
                        "Concord crashes function instances (S0..S{}); storage and the controller are assumed reliable",
                        config.topology.servers.saturating_sub(1)
                    ),
                ));
            }
            if config.topology.servers < 2 {
                return Err(FieldError::new("faults.crashes[0].node", "a crash needs a surviving cache agent: use at least 2 servers"));
            }
        }
        for (i, p) in f.partitions.iter().enumerate() {
            if p.groups.iter().flatten().any(|m| m == "ctl") {
                return Err(FieldError::new(
                    format!("faults.partitions[{i}].groups"),
                    "cutting the controller off makes live agents look crashed while they still serve their lines \
                     (A7, a partitioned but alive node), which needs self-fencing, not modelled yet",
                ));
            }
        }
        refuse_read_txns(config, "Concord has no read transactions; its transactions are whole functions (params.transactions)")
    }

    fn level_for(params: &serde_json::Value) -> Level {
        if transactional(params) { Level::StrictSerializable } else { Self::ENTRY.level }
    }

    fn faults_for(params: &serde_json::Value) -> FaultModel {
        if transactional(params) { TXN_FAULTS } else { FAULTS }
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        // The strict protocol only (the fuzzer checks at the parameters' level); small caches
        // make silent evictions, owner "don't have it" answers and re-requests common, and small
        // directories make recalls common.
        // A departure of S0 or S1 (every case has at least two servers) in a quarter of the cases;
        // homes that keep copies of what they serve in half.
        // Half of the departures are followed by the agent's join, 0–40 ms later.
        // Transactions in a third of the cases, checked at `strict-serializable` and without
        // crashes (`level_for`, `faults_for`), and without domain changes or a bounded
        // directory (refused by `build`).
        let leave = prop::option::weighted(0.25, (0u32..2, 0u64..40_000_000, prop::option::of(0u64..40_000_000)));
        let transactions = prop::bool::weighted(1.0 / 3.0);
        (prop::option::weighted(0.4, 1usize..4), prop::option::weighted(0.3, 1usize..3), leave, any::<bool>(), transactions)
            .prop_map(|(lines_max, mut directory_max, leave, home_keeps_copy, transactions)| {
                if transactions {
                    directory_max = None;
                }
                let mut p = serde_json::json!({});
                if home_keeps_copy {
                    p["home_keeps_copy"] = serde_json::json!(true);
                }
                if transactions {
                    p["transactions"] = serde_json::json!(true);
                } else if let Some((node, at_ns, rejoin)) = leave {
                    p["leaves"] = serde_json::json!([{"node": format!("S{node}"), "at_ns": at_ns}]);
                    if let Some(after) = rejoin {
                        p["joins"] = serde_json::json!([{"node": format!("S{node}"), "at_ns": at_ns + after}]);
                    }
                }
                if let Some(n) = lines_max {
                    p["lines_max"] = serde_json::json!(n);
                }
                if let Some(n) = directory_max {
                    p["directory_max"] = serde_json::json!(n);
                }
                p
            })
            .boxed()
    }
}

/// Checks `params.leaves` and `params.joins`: each names a cache instance, and each instance
/// alternates, in the order the changes are due, between leaving and joining again (it starts
/// in the domain); at least one instance never leaves for good.
fn check_domain_changes(params: &ConcordParams, servers: usize) -> Result<(), FieldError> {
    let mut changes: Vec<(Time, bool, usize, usize)> = Vec::new();
    for (list, join) in [(&params.leaves, false), (&params.joins, true)] {
        let field = if join { "joins" } else { "leaves" };
        for (i, c) in list.iter().enumerate() {
            let Some(a) = agent_index(&c.node).filter(|&a| a < servers) else {
                return Err(FieldError::new(
                    format!("params.{field}[{i}].node"),
                    format!(
                        "a cache instance S0..S{} {}, not {:?}",
                        servers.saturating_sub(1),
                        if join { "joins" } else { "leaves" },
                        c.node
                    ),
                ));
            };
            changes.push((c.at_ns, join, a, i));
        }
    }
    // Due in time order; at equal times a departure before a join, as the controller runs them.
    changes.sort();
    let mut member = vec![true; servers];
    for (_, join, a, i) in changes {
        if member[a] == join {
            let (field, what) =
                if join { ("joins", "joins while still in the domain") } else { ("leaves", "leaves twice without joining in between") };
            return Err(FieldError::new(format!("params.{field}[{i}].node"), format!("S{a} {what}")));
        }
        member[a] = join;
    }
    if !params.leaves.is_empty() && member.iter().all(|m| !m) {
        return Err(FieldError::new("params.leaves", "at least one cache instance must stay in the domain"));
    }
    Ok(())
}

/// The agent index of a machine name `S<i>`.
fn agent_index(name: &str) -> Option<usize> {
    name.strip_prefix('S').and_then(|i| i.parse().ok())
}

/// Refuses read transactions, which Concord and its baselines do not have.
fn refuse_read_txns(config: &SimConfig, why: &str) -> Result<(), FieldError> {
    match &config.workload {
        WorkloadConfig::Script(sessions) => {
            for (s, session) in sessions.iter().enumerate() {
                for (fi, function) in session.functions.iter().enumerate() {
                    if let Some(o) = function.ops.iter().position(|o| matches!(o, ScriptOp::ReadTxn(_))) {
                        return Err(FieldError::new(format!("workload.script[{s}].functions[{fi}].ops[{o}]"), why));
                    }
                }
            }
        }
        WorkloadConfig::Generator(g) => {
            for (at, f) in g.function_gens() {
                if f.read_txns > 0 || f.mix.as_ref().is_some_and(|m| m.read_txn > 0.0) {
                    return Err(FieldError::new(format!("workload.generator.{at}"), why));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::msg::{ReadClass, Writer};
    use super::*;
    use causim_sim::Effect;

    fn concord(agents: usize, params: serde_json::Value, mutants: &[&str]) -> Concord {
        let topology = TopologyConfig::new(agents as u32, causim_sim::dist::DurationDist::constant(1));
        Concord::build(&params, mutants, &topology).unwrap()
    }

    fn agent(c: &Concord, i: usize) -> Agent {
        Agent::new(NodeId::fixed(i), c.ring(), c.storage_id(), c.rules.clone())
    }

    fn sends(out: &Outbox<Msg, Timer>) -> Vec<(NodeId, Msg)> {
        out.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Send { to, msg } => Some((*to, msg.clone())),
                _ => None,
            })
            .collect()
    }

    const F: NodeId = NodeId(1 << 63);

    #[test]
    fn the_scenarios_homes_are_pinned() {
        // scenarios/concord/*.json say "x (key 0) and y (key 1) are homed at S2" with 3 agents.
        let ring = concord(3, serde_json::json!({}), &[]).ring();
        assert_eq!((ring.home(0), ring.home(1)), (NodeId::fixed(2), NodeId::fixed(2)));
        // The departure scenarios (a8-*, a13-*) say S2's successor is S0.
        assert_eq!(ring.successor(NodeId::fixed(2)), NodeId::fixed(0));
    }

    #[test]
    fn a_read_miss_at_the_home_grants_e_and_a_second_reader_is_forwarded_to_the_owner() {
        let c = concord(3, serde_json::json!({}), &[]);
        let mut home = agent(&c, 2);
        let mut out = Outbox::new(false);
        home.on_message(NodeId::fixed(0), Msg::RdReq { key: 0, applied: 0 }, &mut out);
        assert_eq!(sends(&out), vec![(c.storage_id(), Msg::StGet { key: 0, tag: 0 })]);
        out.clear();
        // A second read waits: the directory is blocking.
        home.on_message(NodeId::fixed(1), Msg::RdReq { key: 0, applied: 0 }, &mut out);
        assert!(sends(&out).is_empty());
        home.on_message(c.storage_id(), Msg::StData { key: 0, value: None, tag: 0, applied: 0 }, &mut out);
        assert_eq!(
            sends(&out),
            vec![
                (NodeId::fixed(0), Msg::Data { key: 0, value: None, exclusive: true, hit: false, applied: 0 }),
                (NodeId::fixed(0), Msg::FwdRd { key: 0, tag: 1 }),
            ]
        );
        out.clear();
        home.on_message(NodeId::fixed(0), Msg::FwdData { key: 0, value: None, tag: 1, applied: 0 }, &mut out);
        assert_eq!(sends(&out), vec![(NodeId::fixed(1), Msg::Data { key: 0, value: None, exclusive: false, hit: true, applied: 0 })]);
        assert_eq!(home.directory().get(&0), Some(&Dir::Shared([NodeId::fixed(0), NodeId::fixed(1)].into())));
        home.check_invariants().unwrap();
    }

    #[test]
    fn an_owner_defers_an_invalidation_until_its_direct_write_is_stored() {
        let c = concord(3, serde_json::json!({}), &[]);
        let mut owner = agent(&c, 0);
        let home = NodeId::fixed(2);
        let mut out = Outbox::new(false);
        owner.on_message(F, Msg::Get { key: 0 }, &mut out);
        owner.on_message(home, Msg::Data { key: 0, value: None, exclusive: true, hit: false, applied: 0 }, &mut out);
        out.clear();
        owner.on_message(F, Msg::Put { key: 0, value: 7 }, &mut out);
        assert_eq!(sends(&out), vec![(c.storage_id(), Msg::StPut { key: 0, value: 7, writer: Writer::Owner, after: 0 })]);
        out.clear();
        owner.on_message(home, Msg::Inv { key: 0, tag: 3 }, &mut out);
        assert!(sends(&out).is_empty(), "deferred");
        owner.check_invariants().unwrap();
        owner.on_message(c.storage_id(), Msg::StAck { key: 0, writer: Writer::Owner, applied: 1 }, &mut out);
        assert_eq!(sends(&out), vec![(F, Msg::PutReply { key: 0 }), (home, Msg::InvAck { key: 0, tag: 3, applied: 1 })]);
        assert!(owner.lines().is_empty());
    }

    #[test]
    fn a_home_invalidates_an_owner_before_writing_storage_unless_the_mutant_is_on() {
        for (mutants, put_at_once) in [(&[][..], false), (&["inv_parallel_with_put"][..], true)] {
            let c = concord(3, serde_json::json!({}), mutants);
            let mut home = agent(&c, 2);
            let mut out = Outbox::new(false);
            home.on_message(NodeId::fixed(0), Msg::WrReq { key: 0, value: 1, applied: 0 }, &mut out);
            home.on_message(c.storage_id(), Msg::StAck { key: 0, writer: Writer::Home(0), applied: 1 }, &mut out);
            out.clear();
            home.on_message(NodeId::fixed(1), Msg::WrReq { key: 0, value: 2, applied: 0 }, &mut out);
            let puts = sends(&out).iter().filter(|(_, m)| matches!(m, Msg::StPut { .. })).count();
            assert_eq!(puts == 1, put_at_once, "{mutants:?}");
        }
    }

    #[test]
    fn strict_upgrades_keep_the_old_value_until_the_grant_and_paper_literal_ones_do_not() {
        for (strict, seen) in [(true, Some(1)), (false, Some(2))] {
            let c = concord(3, serde_json::json!({"strict": strict}), &[]);
            let mut a = agent(&c, 0);
            let mut out = Outbox::new(false);
            a.on_message(F, Msg::Get { key: 0 }, &mut out);
            a.on_message(NodeId::fixed(2), Msg::Data { key: 0, value: Some(1), exclusive: false, hit: true, applied: 1 }, &mut out);
            a.on_message(F, Msg::Put { key: 0, value: 2 }, &mut out);
            out.clear();
            a.on_message(F, Msg::Get { key: 0 }, &mut out);
            assert_eq!(sends(&out), vec![(F, Msg::GetReply { key: 0, value: seen, class: ReadClass::Local })], "strict {strict}");
            a.check_invariants().unwrap();
        }
    }

    /// An agent that knows its controller (a commit takes the controller's lock).
    fn txn_agent(c: &Concord, i: usize) -> Agent {
        agent(c, i).with_controller(c.controller_id())
    }

    /// The functions told that their transaction was squashed.
    fn squashed(out: &Outbox<Msg, Timer>) -> Vec<NodeId> {
        sends(out).into_iter().filter(|(_, m)| *m == Msg::TxSquashed).map(|(to, _)| to).collect()
    }

    #[test]
    fn a_local_conflict_squashes_the_side_squashed_less_often_and_the_requester_wins_ties() {
        let c = concord(3, serde_json::json!({"transactions": true}), &[]);
        let g = NodeId(F.0 + 1);
        for (writer_priority, loser) in [(0, F), (1, F), (2, g)] {
            let mut a = txn_agent(&c, 0);
            let mut out = Outbox::new(false);
            // F wrote key 0 speculatively; g (priority 1) then reads it.
            a.on_message(F, Msg::TxBegin { priority: writer_priority }, &mut out);
            a.on_message(F, Msg::TxPut { key: 0, value: 7 }, &mut out);
            a.on_message(g, Msg::TxBegin { priority: 1 }, &mut out);
            out.clear();
            a.on_message(g, Msg::TxGet { key: 0 }, &mut out);
            assert_eq!(squashed(&out), vec![loser], "writer priority {writer_priority}");
        }
    }

    #[test]
    fn a_squashed_attempt_withdraws_its_lock_request_and_its_late_grant_is_dropped() {
        let c = concord(3, serde_json::json!({"transactions": true}), &[]);
        let ctl = c.controller_id();
        let mut a = txn_agent(&c, 0);
        let mut out = Outbox::new(false);
        a.on_message(F, Msg::TxBegin { priority: 0 }, &mut out);
        a.on_message(F, Msg::TxPut { key: 0, value: 7 }, &mut out);
        out.clear();
        a.on_message(F, Msg::TxCommit, &mut out);
        let [(to, Msg::LockReq { client, ticket })] = sends(&out)[..] else { panic!("{:?}", sends(&out)) };
        assert_eq!((to, client), (ctl, F));
        out.clear();
        // A rival reads the key: F, waiting for the lock, is squashed and withdraws.
        a.on_message(NodeId(F.0 + 1), Msg::TxBegin { priority: 0 }, &mut out);
        a.on_message(NodeId(F.0 + 1), Msg::TxGet { key: 0 }, &mut out);
        assert!(sends(&out).contains(&(ctl, Msg::LockRelease { client: F, ticket })));
        // The controller had granted it already: the grant is dropped, the lock not released twice.
        out.clear();
        a.on_message(ctl, Msg::LockGrant { client: F, ticket }, &mut out);
        assert!(sends(&out).is_empty(), "{:?}", sends(&out));
    }

    #[test]
    fn the_commit_lock_grants_in_order_and_a_withdrawn_request_is_never_granted() {
        let (s0, s1) = (NodeId::fixed(0), NodeId::fixed(1));
        let mut ctl = Controller::new(&[s0, s1], NodeId::fixed(2), 100, 300, vec![], vec![]);
        let mut out = Outbox::new(false);
        ctl.on_message(0, s0, Msg::LockReq { client: F, ticket: 1 }, &mut out);
        ctl.on_message(0, s1, Msg::LockReq { client: F, ticket: 1 }, &mut out);
        ctl.on_message(0, s0, Msg::LockReq { client: NodeId(F.0 + 1), ticket: 2 }, &mut out);
        assert_eq!(sends(&out), vec![(s0, Msg::LockGrant { client: F, ticket: 1 })]);
        out.clear();
        // S1's request is withdrawn while S0 holds the lock; S0's release grants the next one.
        ctl.on_message(0, s1, Msg::LockRelease { client: F, ticket: 1 }, &mut out);
        assert!(sends(&out).is_empty());
        ctl.on_message(0, s0, Msg::LockRelease { client: F, ticket: 1 }, &mut out);
        assert_eq!(sends(&out), vec![(s0, Msg::LockGrant { client: NodeId(F.0 + 1), ticket: 2 })]);
    }

    #[test]
    fn crashes_are_refused_with_transactions_and_such_runs_are_checked_strictly_serializable() {
        let config: SimConfig = serde_json::from_value(serde_json::json!({
            "seed": 1, "topology": {"servers": 2, "delay": {"dist": "constant", "ns": 1}},
            "workload": {"script": [{"session": "c", "functions": [{"ops": [{"read": "x"}]}]}]},
            "faults": {"crashes": [{"node": "S0", "at_ns": 5}]}
        }))
        .unwrap();
        let txn = serde_json::json!({"transactions": true});
        let err = Concord::faults_for(&txn).check("concord", &config.faults).unwrap_err();
        assert_eq!(err.path, "faults.crashes[0]");
        assert!(err.message.contains("params.transactions"), "{}", err.message);
        assert!(Concord::faults_for(&serde_json::json!({})).check("concord", &config.faults).is_ok());
        assert_eq!(Concord::level_for(&txn), Level::StrictSerializable);
        let topology = TopologyConfig::new(2, causim_sim::dist::DurationDist::constant(1));
        let bounded = serde_json::json!({"transactions": true, "directory_max": 2});
        assert_eq!(Concord::build(&bounded, &[], &topology).unwrap_err().path, "params.directory_max");
        assert_eq!(Concord::level_for(&serde_json::json!({"lines_max": 2})), Level::Linearizable);
    }

    #[test]
    fn faults_and_read_transactions_it_does_not_model_are_refused_with_their_field() {
        let base = serde_json::json!({
            "seed": 1, "topology": {"servers": 2, "delay": {"dist": "constant", "ns": 1}},
            "workload": {"script": [{"session": "c", "functions": [{"ops": [{"write": "x"}, {"read_txn": ["x", "y"]}]}]}]}
        });
        let config: SimConfig = serde_json::from_value(base.clone()).unwrap();
        assert_eq!(Concord::check_run(&config).unwrap_err().path, "workload.script[0].functions[0].ops[1]");
        let mut plain = base;
        plain["workload"]["script"][0]["functions"][0]["ops"] = serde_json::json!([{"read": "x"}]);
        let with_faults = |faults: serde_json::Value| {
            let mut s = plain.clone();
            s["faults"] = faults;
            let config: SimConfig = serde_json::from_value(s).unwrap();
            // The generic refusals (the entry's fault model), then Concord's own limits.
            Concord::ENTRY.faults.check("concord", &config.faults).and_then(|()| Concord::check_run(&config)).err().map(|e| e.path)
        };
        assert_eq!(with_faults(serde_json::json!({"crashes": [{"node": "S0", "at_ns": 5}]})), None);
        assert_eq!(with_faults(serde_json::json!({"crashes": [{"node": "S1", "at_ns": 5, "restart_ns": 9}]})), None);
        let refused = [
            (serde_json::json!({"crashes": [{"node": "S0", "at_ns": 5}, {"node": "S1", "at_ns": 9}]}), "faults.crashes[1]"),
            (serde_json::json!({"crashes": [{"node": "db", "at_ns": 5}]}), "faults.crashes[0].node"),
            (serde_json::json!({"loss_probability": 0.1}), "faults.loss_probability"),
            (serde_json::json!({"partitions": [{"groups": [["S0"], ["S1"]], "start_ns": 1, "mode": "drop"}]}), "faults.partitions[0].mode"),
            (serde_json::json!({"partitions": [{"groups": [["S0"], ["ctl"]], "start_ns": 1}]}), "faults.partitions[0].groups"),
        ];
        for (faults, path) in refused {
            assert_eq!(with_faults(faults.clone()).as_deref(), Some(path), "{faults}");
        }
    }
}
