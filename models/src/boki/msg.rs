//! Boki's messages: between a function and its engine (IPC), engines and storage nodes (the
//! append path, record reads), storage nodes and the primary sequencer (progress), the
//! sequencers (metalog replication), from the primary to every subscriber (the metalog), and
//! between the controller and the nodes it watches (sessions, seal, new term).

use super::ids::{Entry, Pos, Trim};
use super::record::{Aux, Body};
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
    /// The origin engine's number for the read (answers to a read already answered are
    /// dropped: a read is re-sent when a new term may have lost it).
    pub id: u64,
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
    pub id: u64,
    pub client: NodeId,
    /// The record found (`None`: EMPTY).
    pub seqnum: Option<u64>,
    pub data: Option<Value>,
    /// The library contents of the record found ([`Body::Plain`] for EMPTY).
    pub body: Body,
    /// The auxiliary data cached beside it on the node that served it or the caller's, if any.
    pub aux: Option<Aux>,
    /// The storage replica had no record for an ordered seqnum (possible only when ordering
    /// ran ahead of durability).
    pub lost: bool,
    /// The index version that answered.
    pub pos: Pos,
    /// The index replica that answered.
    pub index: NodeId,
    /// The record came from that replica's record cache (no storage read).
    pub cached: bool,
}

/// A new record on its way to its shard's storage replicas.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NewRecord {
    pub term: u64,
    pub shard: u32,
    pub local_id: u64,
    pub book: Key,
    pub tags: Vec<u64>,
    pub data: Value,
    pub body: Body,
}

/// What an index needs of an ordered record (storage nodes send it; no data).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IndexRecord {
    pub position: u64,
    pub shard: u32,
    pub book: Key,
    pub tags: Vec<u64>,
}

/// A term's configuration, installed by the controller after the previous term's seal.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Config {
    pub term: u64,
    /// The previous term's final metalog (every entry any subscriber can have applied).
    pub sealed: Vec<Entry>,
    pub primary: NodeId,
    pub backups: Vec<NodeId>,
    /// Storage replicas of each shard in this term.
    pub replicas: Vec<Vec<NodeId>>,
    /// Nodes the controller found failed (record reads avoid them).
    pub failed: Vec<NodeId>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // Function → its engine.
    Append {
        book: Key,
        tags: Vec<u64>,
        data: Value,
        body: Body,
    },
    /// `logSetAuxData(seqnum, aux)`: cached on the caller's node only; no answer.
    SetAux {
        seqnum: u64,
        aux: Aux,
    },
    /// With `params.aux_data_on_storage`: the engine backs a record's auxiliary data up on its
    /// storage nodes; no answer.
    StoreAux {
        seqnum: u64,
        aux: Aux,
    },
    Read {
        book: Key,
        tag: u64,
        dir: Dir,
        bound: u64,
        pos: Pos,
    },
    /// `logTrim(until)` of `book`.
    Trim {
        book: Key,
        until: u64,
    },
    // BokiFlow's function ↔ the external database.
    /// `rawDBWrite(key, value)` if the stored version is below `version` (Beldi's condition).
    DbWrite {
        key: Key,
        value: Value,
        version: u64,
    },
    /// Whether the write took effect, and the value the key held before it.
    DbWritten {
        applied: bool,
        prev: Option<Value>,
    },
    DbRead {
        key: Key,
    },
    /// A BokiFlow transaction's commit: `rawDBWrite(key, value)` if the stored version is
    /// below `version` (the transaction's decision record).
    DbCommit {
        key: Key,
        value: Value,
        version: u64,
    },
    /// Whether the commit write took effect, and whether the key already held `version` (an
    /// earlier execution of the same commit applied it).
    DbCommitted {
        applied: bool,
        ours: bool,
    },
    DbValue {
        value: Option<Value>,
    },
    // Engine → function.
    /// The trim is in the metalog, ordered at `pos`.
    TrimDone {
        pos: Pos,
    },
    /// The trim was not in its term's final metalog: it trimmed nothing.
    TrimFailed {
        term: u64,
    },
    AppendDone {
        seqnum: u64,
        pos: Pos,
    },
    /// The append was not covered by its term's final metalog: discarded by the seal.
    AppendFailed {
        term: u64,
    },
    ReadDone(Answer),
    // ① Engine → its shard's storage replicas.
    Replicate(NewRecord),
    // Engine → primary sequencer: a trim command for the next metalog entry.
    TrimCommand {
        term: u64,
        trim: Trim,
    },
    // ② Storage → primary sequencer: the contiguous received prefix of each shard it stores.
    Progress {
        term: u64,
        shards: Vec<(u32, u64)>,
    },
    // ③ Primary → backups, and their acknowledgement (their metalog length).
    MetaReplicate {
        entry: Entry,
    },
    MetaAck {
        term: u64,
        entries: u64,
    },
    // ④ Primary → subscribers, once a quorum holds the entry.
    Metalog {
        entry: Entry,
    },
    // Storage → index replicas: the tags of the records an entry ordered.
    IndexData {
        term: u64,
        records: Vec<IndexRecord>,
    },
    // Origin engine → a remote index replica.
    IndexQuery(Query),
    // Index replica → a storage replica, on a record-cache miss.
    Fetch {
        seqnum: u64,
        answer: Answer,
        origin: NodeId,
    },
    // Index replica or storage → origin engine.
    Answered(Answer),
    // Sequencers and storage nodes → controller: their session (a restart starts a new one).
    Alive {
        incarnation: u64,
    },
    // Controller → sequencers: stop the term's metalog; a sequencer answers with its copy.
    Seal {
        term: u64,
    },
    Sealed {
        term: u64,
        metalog: Vec<Entry>,
    },
    // Controller → every node: the next term.
    NewTerm(Box<Config>),
}

impl Msg {
    /// The term a message belongs to, for the ones a node must hold until it is in that term
    /// (or ignore once it has left it).
    pub fn term(&self) -> Option<u64> {
        match self {
            Msg::Replicate(r) => Some(r.term),
            Msg::Progress { term, .. } | Msg::MetaAck { term, .. } | Msg::IndexData { term, .. } | Msg::TrimCommand { term, .. } => {
                Some(*term)
            }
            Msg::MetaReplicate { entry } | Msg::Metalog { entry } => Some(entry.term),
            // A configuration belongs to the term it ends: a node takes the terms in order.
            Msg::NewTerm(c) => Some(c.term - 1),
            _ => None,
        }
    }
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Append { .. } => "Append",
            Msg::SetAux { .. } => "SetAux",
            Msg::StoreAux { .. } => "StoreAux",
            Msg::DbWrite { .. } => "DbWrite",
            Msg::DbWritten { .. } => "DbWritten",
            Msg::DbRead { .. } => "DbRead",
            Msg::DbCommit { .. } => "DbCommit",
            Msg::DbCommitted { .. } => "DbCommitted",
            Msg::DbValue { .. } => "DbValue",
            Msg::Read { .. } => "Read",
            Msg::AppendDone { .. } => "AppendDone",
            Msg::AppendFailed { .. } => "AppendFailed",
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
            Msg::Alive { .. } => "Alive",
            Msg::Seal { .. } => "Seal",
            Msg::Sealed { .. } => "Sealed",
            Msg::NewTerm(_) => "NewTerm",
            Msg::Trim { .. } => "Trim",
            Msg::TrimDone { .. } => "TrimDone",
            Msg::TrimFailed { .. } => "TrimFailed",
            Msg::TrimCommand { .. } => "TrimCommand",
        }
    }

    fn size_bytes(&self) -> u64 {
        // A one-byte tag, 8 bytes per integer; a record's data counts as 1 KB (the paper's
        // record size).
        const RECORD: u64 = 1024;
        1 + match self {
            Msg::Append { tags, .. } | Msg::Replicate(NewRecord { tags, .. }) => 24 + 8 * tags.len() as u64 + RECORD,
            Msg::Read { .. } | Msg::IndexQuery(_) => 56,
            Msg::AppendDone { .. } | Msg::MetaAck { .. } | Msg::Trim { .. } | Msg::TrimDone { .. } => 24,
            Msg::TrimFailed { .. } => 8,
            Msg::TrimCommand { .. } => 40,
            Msg::AppendFailed { .. } | Msg::Alive { .. } | Msg::Seal { .. } => 8,
            Msg::SetAux { .. } | Msg::StoreAux { .. } => 24,
            Msg::DbWrite { .. } | Msg::DbCommit { .. } => 24 + RECORD,
            Msg::DbCommitted { .. } => 2,
            Msg::DbWritten { .. } => 9 + RECORD,
            Msg::DbRead { .. } => 8,
            Msg::DbValue { .. } => 1 + RECORD,
            Msg::ReadDone(a) | Msg::Answered(a) | Msg::Fetch { answer: a, .. } => 48 + if a.data.is_some() { RECORD } else { 0 },
            Msg::Progress { shards, .. } => 16 * shards.len() as u64,
            Msg::MetaReplicate { entry } | Msg::Metalog { entry } => 8 + 16 * entry.end.len() as u64 + 24 * entry.trims.len() as u64,
            Msg::IndexData { records, .. } => records.iter().map(|r| 24 + 8 * r.tags.len() as u64).sum(),
            Msg::Sealed { metalog, .. } => 8 + metalog.iter().map(|e| 8 + 16 * e.end.len() as u64).sum::<u64>(),
            Msg::NewTerm(c) => {
                24 + c.sealed.iter().map(|e| 8 + 16 * e.end.len() as u64).sum::<u64>()
                    + 8 * (c.backups.len() + c.failed.len() + c.replicas.iter().map(Vec::len).sum::<usize>()) as u64
            }
        }
    }
}
