//! Concord's messages: the function's storage calls, the coherence traffic between cache agents
//! (named after the steps of §III-C2; the paper names steps, not messages), and storage.
//!
//! Fields named `applied` and `after` are ghost state for invariant I8 (write ordering): how many
//! writes of the key the sender knows storage has applied. They cost nothing on the wire.

use super::agent::Dir;
use causim_sim::history::{Key, Value};
use causim_sim::node::{Message, NodeId};

/// Names one directory transaction at its home, so answers find it (and so a non-blocking
/// directory, a mutant, can run several per key).
pub type Tag = u64;

/// Who a storage write belongs to: a directory transaction at the home, or the E owner's direct
/// write (at most one per key and agent: the owner defers everything else until its ack).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Writer {
    Home(Tag),
    Owner,
    /// An application outside the domain writing storage directly (§III-C3), with its tag.
    External(Tag),
}

/// An external write on its way from storage's listener to the key's home (§III-C3): the tag
/// the external application gave it, and whether storage already holds it (paper-literal) or
/// hands it to the home to write (strict).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExtReq {
    pub tag: Tag,
    pub stored: bool,
}

/// How a read was served, in the paper's classes (§VI-B, Table III): from the machine's own
/// cache instance (`Local`), through the home with a directory entry (`RemoteHit`, which may
/// still read storage), or with no entry (`Miss`: storage). The function measures its latency
/// by class (`metrics::READ_LOCAL_NS`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadClass {
    Local,
    RemoteHit,
    Miss,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // A function → its machine's cache agent (the runtime intercepts storage calls).
    Get {
        key: Key,
    },
    Put {
        key: Key,
        value: Value,
    },
    // Cache agent → function.
    GetReply {
        key: Key,
        value: Option<Value>,
        class: ReadClass,
    },
    PutReply {
        key: Key,
    },

    // Requester → home.
    RdReq {
        key: Key,
        applied: u64,
    },
    WrReq {
        key: Key,
        value: Value,
        applied: u64,
    },
    // Home → requester: the data with the state granted (E or S), or the grant of E for a write.
    Data {
        key: Key,
        value: Option<Value>,
        exclusive: bool,
        /// The directory had an entry for the key (a remote hit in the paper's terms, even
        /// when storage served the data); false: a read miss.
        hit: bool,
        applied: u64,
    },
    WrAck {
        key: Key,
        applied: u64,
    },

    // Home → owner (a read when the directory says E), and the owner's answers.
    FwdRd {
        key: Key,
        tag: Tag,
    },
    FwdData {
        key: Key,
        value: Option<Value>,
        tag: Tag,
        applied: u64,
    },
    /// The owner has silently evicted the line ("don't have it").
    FwdNack {
        key: Key,
        tag: Tag,
        applied: u64,
    },
    // Home → sharer, and the acknowledgment (always sent, even for a line already gone).
    Inv {
        key: Key,
        tag: Tag,
    },
    InvAck {
        key: Key,
        tag: Tag,
        applied: u64,
    },

    // Cache agent ↔ storage (write-through; storage is linearizable).
    StGet {
        key: Key,
        tag: Tag,
    },
    StData {
        key: Key,
        value: Option<Value>,
        tag: Tag,
        applied: u64,
    },
    StPut {
        key: Key,
        value: Value,
        writer: Writer,
        after: u64,
    },
    StAck {
        key: Key,
        writer: Writer,
        applied: u64,
    },

    // Failure handling (§III-F): the controller's heartbeats, its failure notification to the
    // survivors and storage (who fence the failed agent and acknowledge), and the end of
    // recovery (the new ring is in force).
    Ping,
    Pong,
    Fail {
        node: NodeId,
    },
    /// `applied`: ghost write counts, storage's once it has fenced `node`, an agent's for
    /// `node`'s keys once it has drained its writes to them.
    FailAck {
        node: NodeId,
        applied: Vec<(Key, u64)>,
    },
    /// `applied`: storage's ghost counts, so the new homes serialize after what was applied.
    Recovered {
        node: NodeId,
        applied: Vec<(Key, u64)>,
    },
    // Membership (§III-D, `membership.rs`): an agent leaves the domain. The controller tells
    // every agent (`Leave`); each switches to the ring without it and acknowledges (the first
    // barrier); the departing agent then hands its directory entries to its successor
    // (`DirXfer`, acknowledged) and requests that still reach it on (`Moved`); once the
    // successor has them it reports `LeaveDone`, and the controller tells the others `Left`
    // (the second barrier): no entry names it any more.
    Leave {
        node: NodeId,
    },
    LeaveAck {
        node: NodeId,
    },
    Transfer {
        node: NodeId,
    },
    /// `applied`: ghost write counts of the moved keys (I8). `join`: the entries move to a
    /// joining agent (from its successor), not from a departing one.
    DirXfer {
        entries: Vec<(Key, Dir)>,
        applied: Vec<(Key, u64)>,
        join: bool,
    },
    DirXferAck,
    /// Departing agent → every other agent, and the answer: on FIFO links, everything the
    /// departing home sent before (a `Data` grant still on the wire) has arrived, so the new
    /// home's messages cannot overtake it.
    Sync,
    SyncAck,
    Moved {
        key: Key,
        requester: NodeId,
        write: Option<Value>,
        external: Option<ExtReq>,
        applied: u64,
    },
    /// `applied`: the departing agent's ghost write counts (I8), for the keys it owned: the
    /// homes drop their entries naming it, so their answers will not bring the counts.
    LeaveDone {
        node: NodeId,
        applied: Vec<(Key, u64)>,
    },
    Left {
        node: NodeId,
        applied: Vec<(Key, u64)>,
    },
    // Joining (`membership.rs`): the controller tells the joiner first (`Join`, with the
    // members), which starts afresh and greets every member and storage (`Hello`: on FIFO
    // links, whatever an earlier incarnation of it still had on the wire arrives first, so
    // they can stop fencing it); then every member (the first barrier); then the joiner's
    // successor, which hands over the entries of the keys the joiner now homes (`Transfer`,
    // `DirXfer` with `join`) and reports `JoinDone`; `Joined` to all ends it (the second
    // barrier), and the joiner serves its functions from then on. A crashed agent that restarts,
    // or one declared failed while alive, asks to come back (`Rejoin`).
    /// `applied`: the controller's ghost write counts (I8), for a joiner that finds nobody to
    /// learn them from (the whole domain failed).
    Join {
        node: NodeId,
        members: Vec<NodeId>,
        applied: Vec<(Key, u64)>,
    },
    JoinAck {
        node: NodeId,
    },
    Hello,
    /// A member → the joiner, first of anything it sends the joiner's new incarnation: what it
    /// had sent the earlier one (held by a partition, or slow) arrives before it and is dropped.
    Welcome,
    JoinDone {
        node: NodeId,
    },
    Joined {
        node: NodeId,
    },
    Rejoin,
    // External writes (§III-C3): storage's listener → the controller → the key's home
    // (`origin`: the external application, `applied`: storage's ghost count of the key's
    // writes, I8); and, strict, the home → the application once the write is done.
    ExtWrite {
        key: Key,
        value: Value,
        origin: NodeId,
        ext: ExtReq,
        applied: u64,
    },
    ExtAck {
        key: Key,
        tag: Tag,
    },
    /// Cache agent → function: the call was cut short by a failure (its home failed with the
    /// write in flight, or this agent was removed from the domain); a write's outcome is
    /// unknown.
    CallFailed {
        key: Key,
    },

    // Transactions (§2.11, `txn.rs`): a function in a transaction → its agent.
    /// A transaction (attempt) starts, with its priority: the squashes of its earlier attempts.
    TxBegin {
        priority: u32,
    },
    /// A speculative read (answered with `GetReply`).
    TxGet {
        key: Key,
    },
    /// A speculative write, buffered at the agent (answered with `PutReply`).
    TxPut {
        key: Key,
        value: Value,
    },
    /// The transaction's last call is done: commit it.
    TxCommit,
    /// Agent → function: the commit holds the global lock; its `writes` writes are on their
    /// way (each answered with `PutReply`).
    TxLocked {
        writes: u32,
    },
    /// Agent → function: a conflict squashed the transaction; its speculative state is gone.
    TxSquashed,
    /// Function → agent: every commit write is acknowledged; release the lock.
    TxRelease,
    /// Agent ↔ controller: the global commit lock, for one function's transaction; `ticket`
    /// names the request (unique at its agent). A release of a request not granted yet
    /// withdraws it from the queue (its transaction was squashed while waiting).
    LockReq {
        client: NodeId,
        ticket: u64,
    },
    LockGrant {
        client: NodeId,
        ticket: u64,
    },
    LockRelease {
        client: NodeId,
        ticket: u64,
    },

    // The Faa$T baseline (`faast.rs`): a cache asks the key's home for its version on every
    // read, fetches the data when its own copy is older, and sends writes to the home.
    FtVersionReq {
        key: Key,
    },
    FtVersion {
        key: Key,
        version: u64,
    },
    FtDataReq {
        key: Key,
    },
    FtData {
        key: Key,
        value: Option<Value>,
        version: u64,
        /// The home loaded the key from storage for this request (a miss).
        loaded: bool,
    },
    FtWrite {
        key: Key,
        value: Value,
    },
    FtWriteAck {
        key: Key,
        version: u64,
    },
}

/// Timers: the controller's heartbeat round and its scheduled departures and joins
/// (`params.leaves`, `params.joins`, by index), a function's wait for its agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    Heartbeat,
    Leave(usize),
    Join(usize),
    CallTimeout,
    /// A squashed transaction's back-off before it runs again.
    Backoff,
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Get { .. } => "Get",
            Msg::Put { .. } => "Put",
            Msg::GetReply { .. } => "GetReply",
            Msg::PutReply { .. } => "PutReply",
            Msg::RdReq { .. } => "RdReq",
            Msg::WrReq { .. } => "WrReq",
            Msg::Data { .. } => "Data",
            Msg::WrAck { .. } => "WrAck",
            Msg::FwdRd { .. } => "FwdRd",
            Msg::FwdData { .. } => "FwdData",
            Msg::FwdNack { .. } => "FwdNack",
            Msg::Inv { .. } => "Inv",
            Msg::InvAck { .. } => "InvAck",
            Msg::StGet { .. } => "StGet",
            Msg::StData { .. } => "StData",
            Msg::StPut { .. } => "StPut",
            Msg::StAck { .. } => "StAck",
            Msg::Ping => "Ping",
            Msg::Pong => "Pong",
            Msg::Fail { .. } => "Fail",
            Msg::FailAck { .. } => "FailAck",
            Msg::Recovered { .. } => "Recovered",
            Msg::Leave { .. } => "Leave",
            Msg::LeaveAck { .. } => "LeaveAck",
            Msg::Transfer { .. } => "Transfer",
            Msg::DirXfer { .. } => "DirXfer",
            Msg::DirXferAck => "DirXferAck",
            Msg::Sync => "Sync",
            Msg::SyncAck => "SyncAck",
            Msg::Moved { .. } => "Moved",
            Msg::LeaveDone { .. } => "LeaveDone",
            Msg::Left { .. } => "Left",
            Msg::Join { .. } => "Join",
            Msg::JoinAck { .. } => "JoinAck",
            Msg::Hello => "Hello",
            Msg::Welcome => "Welcome",
            Msg::JoinDone { .. } => "JoinDone",
            Msg::Joined { .. } => "Joined",
            Msg::Rejoin => "Rejoin",
            Msg::ExtWrite { .. } => "ExtWrite",
            Msg::ExtAck { .. } => "ExtAck",
            Msg::CallFailed { .. } => "CallFailed",
            Msg::TxBegin { .. } => "TxBegin",
            Msg::TxGet { .. } => "TxGet",
            Msg::TxPut { .. } => "TxPut",
            Msg::TxCommit => "TxCommit",
            Msg::TxLocked { .. } => "TxLocked",
            Msg::TxSquashed => "TxSquashed",
            Msg::TxRelease => "TxRelease",
            Msg::LockReq { .. } => "LockReq",
            Msg::LockGrant { .. } => "LockGrant",
            Msg::LockRelease { .. } => "LockRelease",
            Msg::FtVersionReq { .. } => "FtVersionReq",
            Msg::FtVersion { .. } => "FtVersion",
            Msg::FtDataReq { .. } => "FtDataReq",
            Msg::FtData { .. } => "FtData",
            Msg::FtWrite { .. } => "FtWrite",
            Msg::FtWriteAck { .. } => "FtWriteAck",
        }
    }

    fn size_bytes(&self) -> u64 {
        // A one-byte tag, an 8-byte key or node name, 8 bytes per value and per transaction tag
        // or state flag; ghost fields are free.
        1 + match self {
            Msg::TxCommit | Msg::TxSquashed | Msg::TxRelease => 0,
            Msg::TxBegin { .. } | Msg::TxGet { .. } | Msg::TxLocked { .. } => 8,
            Msg::LockReq { .. } | Msg::LockGrant { .. } | Msg::LockRelease { .. } => 16,
            Msg::TxPut { .. } => 16,
            Msg::Ping | Msg::Pong | Msg::DirXferAck | Msg::Sync | Msg::SyncAck | Msg::Hello | Msg::Welcome | Msg::Rejoin => 0,
            Msg::JoinAck { .. } | Msg::JoinDone { .. } | Msg::Joined { .. } => 8,
            Msg::Join { members, .. } => 8 + 8 * members.len() as u64,
            Msg::Leave { .. } | Msg::LeaveAck { .. } | Msg::Transfer { .. } | Msg::LeaveDone { .. } | Msg::Left { .. } => 8,
            // Per entry: the key, a state flag and up to a few node names.
            Msg::DirXfer { entries, .. } => 24 * entries.len() as u64,
            Msg::Moved { .. } => 32,
            Msg::ExtWrite { .. } => 32,
            Msg::ExtAck { .. } => 16,
            Msg::Get { .. } | Msg::PutReply { .. } | Msg::RdReq { .. } | Msg::WrAck { .. } | Msg::CallFailed { .. } => 8,
            Msg::Fail { .. } | Msg::FailAck { .. } | Msg::Recovered { .. } | Msg::FtVersionReq { .. } | Msg::FtDataReq { .. } => 8,
            Msg::FtVersion { .. } | Msg::FtWrite { .. } | Msg::FtWriteAck { .. } => 16,
            Msg::FtData { .. } => 24,
            Msg::Put { .. } | Msg::GetReply { .. } | Msg::WrReq { .. } => 16,
            Msg::FwdRd { .. } | Msg::FwdNack { .. } | Msg::Inv { .. } | Msg::InvAck { .. } | Msg::StGet { .. } | Msg::StAck { .. } => 16,
            Msg::Data { .. } | Msg::FwdData { .. } | Msg::StData { .. } | Msg::StPut { .. } => 24,
        }
    }
}
