//! Boki's messages: between a function and its engine (IPC), engines and storage nodes (the
//! append path, record reads), storage nodes and the primary sequencer (progress), the
//! sequencers (metalog replication), and from the primary to every subscriber (the metalog).

use super::ids::{Entry, Pos};
use causim_sim::history::{Key, Value};
use causim_sim::node::{Message, NodeId};

/// Which way a read searches from its bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dir {
    /// `logReadNext`: the first matching seqnum ≥ the bound.
    Next,
    /// `logReadPrev` (and `logCheckTail`, with the bound `u64::MAX`): the last ≤ the bound.
    Prev,
}

/// A read as an index replica sees it: who asked, what, and the caller's metalog position,
/// which the index must have reached before it answers.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Query {
    pub client: NodeId,
    /// The engine on the caller's machine, which gets the answer and caches the record.
    pub origin: NodeId,
    pub book: Key,
    /// 0: every record of the book.
    pub tag: u64,
    pub dir: Dir,
    pub bound: u64,
    pub pos: Pos,
}

/// A read's answer on its way back to the origin engine.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Answer {
    pub client: NodeId,
    /// The record found (`None`: EMPTY).
    pub seqnum: Option<u64>,
    pub data: Option<Value>,
    /// The storage replica had no record for an ordered seqnum (possible only when ordering
    /// ran ahead of durability).
    pub lost: bool,
    /// The index version that answered.
    pub pos: Pos,
    /// The index replica that answered.
    pub index: NodeId,
}

/// A new record on its way to its shard's storage replicas.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NewRecord {
    pub shard: u32,
    pub local_id: u64,
    pub book: Key,
    pub tags: Vec<u64>,
    pub data: Value,
}

/// What an index needs of an ordered record (storage nodes send it; no data).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IndexRecord {
    pub position: u64,
    pub shard: u32,
    pub book: Key,
    pub tags: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // Function → its engine.
    Append { book: Key, tags: Vec<u64>, data: Value },
    Read { book: Key, tag: u64, dir: Dir, bound: u64, pos: Pos },
    // Engine → function.
    AppendDone { seqnum: u64, pos: Pos },
    ReadDone(Answer),
    // ① Engine → its shard's storage replicas.
    Replicate(NewRecord),
    // ② Storage → primary sequencer: the contiguous received prefix of each shard it stores.
    Progress { shards: Vec<(u32, u64)> },
    // ③ Primary → backups, and their acknowledgement (their metalog length).
    MetaReplicate { entry: Entry },
    MetaAck { entries: u64 },
    // ④ Primary → subscribers, once a quorum holds the entry.
    Metalog { entry: Entry },
    // Storage → index replicas: the tags of the records an entry ordered.
    IndexData { records: Vec<IndexRecord> },
    // Origin engine → a remote index replica.
    IndexQuery(Query),
    // Index replica → a storage replica, on a record-cache miss.
    Fetch { seqnum: u64, answer: Answer, origin: NodeId },
    // Index replica or storage → origin engine.
    Answered(Answer),
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Append { .. } => "Append",
            Msg::Read { .. } => "Read",
            Msg::AppendDone { .. } => "AppendDone",
            Msg::ReadDone(_) => "ReadDone",
            Msg::Replicate(_) => "Replicate",
            Msg::Progress { .. } => "Progress",
            Msg::MetaReplicate { .. } => "MetaReplicate",
            Msg::MetaAck { .. } => "MetaAck",
            Msg::Metalog { .. } => "Metalog",
            Msg::IndexData { .. } => "IndexData",
            Msg::IndexQuery(_) => "IndexQuery",
            Msg::Fetch { .. } => "Fetch",
            Msg::Answered(_) => "Answered",
        }
    }

    fn size_bytes(&self) -> u64 {
        // A one-byte tag, 8 bytes per integer; a record's data counts as 1 KB (the paper's
        // record size).
        const RECORD: u64 = 1024;
        1 + match self {
            Msg::Append { tags, .. } | Msg::Replicate(NewRecord { tags, .. }) => 24 + 8 * tags.len() as u64 + RECORD,
            Msg::Read { .. } | Msg::IndexQuery(_) => 56,
            Msg::AppendDone { .. } | Msg::MetaAck { .. } => 24,
            Msg::ReadDone(a) | Msg::Answered(a) | Msg::Fetch { answer: a, .. } => 48 + if a.data.is_some() { RECORD } else { 0 },
            Msg::Progress { shards } => 16 * shards.len() as u64,
            Msg::MetaReplicate { entry } | Msg::Metalog { entry } => 8 + 16 * entry.end.len() as u64,
            Msg::IndexData { records } => records.iter().map(|r| 24 + 8 * r.tags.len() as u64).sum(),
        }
    }
}
