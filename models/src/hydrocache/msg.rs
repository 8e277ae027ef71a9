//! HydroCache's messages and timers: cache ↔ database, the library ↔ its cache, cache ↔ cache
//! (pinned versions), and Con's coordination rounds.

use super::version::{Cut, Deps, HVersion};
use super::{Epoch, Seq, WfKey};
use causim_sim::history::{Key, Value};
use causim_sim::node::{Message, NodeId, Outbox};
use std::fmt;

/// What a read of a key requires of the version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Need {
    /// At least this version (0: any).
    AtLeast(Seq),
    /// Exactly this version, pinned at this cache (read upstream).
    Exact(Seq, NodeId),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // cache ↔ database
    Fetch {
        req: u64,
        keys: Vec<Key>,
        subscribe: bool,
    },
    FetchReply {
        req: u64,
        versions: Vec<(Key, HVersion)>,
    },
    /// A cache's periodic refresh: what changed since its last pull.
    Pull,
    Notify {
        versions: Vec<(Key, HVersion)>,
    },
    // sink ↔ database
    WriteTx {
        deps: Deps,
        writes: Vec<(Key, Value)>,
        /// The sink waits for the versions (false: write-behind, `params.write_behind`).
        ack: bool,
    },
    WriteAck {
        seqs: Vec<(Key, Seq)>,
    },
    // library ↔ its cache
    Read {
        req: u64,
        wf: WfKey,
        keys: Vec<(Key, Need)>,
    },
    ReadReply {
        req: u64,
        versions: Answers,
    },
    // cache ↔ cache: a version pinned for a workflow upstream
    PinnedRead {
        req: u64,
        wf: WfKey,
        key: Key,
        seq: Seq,
    },
    /// `None`: the workflow attempt is over (its pins were cleaned up); the reader is gone.
    PinnedReply {
        req: u64,
        key: Key,
        version: Option<HVersion>,
    },
    // Con: the coordinator ↔ every cache
    ConPrepare {
        wf: WfKey,
    },
    ConPinned {
        wf: WfKey,
        cut: Cut,
    },
    ConInstall {
        wf: WfKey,
        cuts: Vec<Cut>,
    },
    ConInstalled {
        wf: WfKey,
    },
    /// The workflow attempt is over: drop its pins and snapshot.
    Cleanup {
        wf: WfKey,
    },
    // dependency garbage collection: cache ↔ database
    /// The version the cut covers of each key that changed since the last report, and the
    /// newest floor epoch the cache knows.
    GcReport {
        epoch: Epoch,
        changes: Vec<(Key, Seq)>,
    },
    /// The floor at epoch `to` of every key that rose after epoch `from`.
    GcFloor {
        from: Epoch,
        to: Epoch,
        changes: Vec<(Key, Seq)>,
    },
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Fetch { .. } => "Fetch",
            Msg::FetchReply { .. } => "FetchReply",
            Msg::Pull => "Pull",
            Msg::Notify { .. } => "Notify",
            Msg::WriteTx { .. } => "WriteTx",
            Msg::WriteAck { .. } => "WriteAck",
            Msg::Read { .. } => "CacheRead",
            Msg::ReadReply { .. } => "CacheReply",
            Msg::PinnedRead { .. } => "PinnedRead",
            Msg::PinnedReply { .. } => "PinnedReply",
            Msg::ConPrepare { .. } => "ConPrepare",
            Msg::ConPinned { .. } => "ConPinned",
            Msg::ConInstall { .. } => "ConInstall",
            Msg::ConInstalled { .. } => "ConInstalled",
            Msg::Cleanup { .. } => "Cleanup",
            Msg::GcReport { .. } => "GcReport",
            Msg::GcFloor { .. } => "GcFloor",
        }
    }

    fn size_bytes(&self) -> u64 {
        let versions = versions_bytes;
        1 + match self {
            Msg::Fetch { keys, .. } => 9 + 8 * keys.len() as u64,
            Msg::FetchReply { versions: v, .. } => fetch_reply_body(v),
            Msg::Pull => 0,
            Msg::Notify { versions: v } => versions(v),
            Msg::WriteTx { deps, writes, .. } => {
                16 * deps.len() as u64 + 16 * writes.len() as u64 + if deps.pruned_epoch() > 0 { 8 } else { 0 }
            }
            Msg::WriteAck { seqs } => 16 * seqs.len() as u64,
            Msg::Read { keys, .. } => 20 + 24 * keys.len() as u64,
            Msg::ReadReply { versions, .. } => {
                let epoch = if versions.epoch.is_some() { 8 } else { 0 };
                8 + versions.items.iter().map(|(_, v, _, _)| 8 + v.wire_bytes()).sum::<u64>() + epoch
            }
            Msg::PinnedRead { .. } => 36,
            Msg::PinnedReply { version, .. } => 17 + version.as_ref().map_or(0, HVersion::wire_bytes),
            Msg::ConPrepare { .. } | Msg::ConInstalled { .. } | Msg::Cleanup { .. } => 12,
            // Con pins whole cuts (see the module docs): one entry per cache stands for the read set.
            Msg::ConPinned { .. } => 28,
            Msg::ConInstall { cuts, .. } => 12 + 16 * cuts.len() as u64,
            Msg::GcReport { changes, .. } => 8 + 16 * changes.len() as u64,
            Msg::GcFloor { changes, .. } => 16 + 16 * changes.len() as u64,
        }
    }
}

/// A cache's answers to a read. Per key: the version, the storage rounds it took, and whether it
/// came from another cache; with garbage collection, also the oldest floor epoch a new read
/// (not a key read upstream) was served under. Without collection it prints as the list alone.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Answers {
    pub items: Vec<(Key, HVersion, u32, bool)>,
    pub epoch: Option<Epoch>,
}

impl fmt::Debug for Answers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.items.fmt(f)?;
        match self.epoch {
            Some(e) => write!(f, " at epoch {e}"),
            None => Ok(()),
        }
    }
}

impl IntoIterator for Answers {
    type Item = (Key, HVersion, u32, bool);
    type IntoIter = std::vec::IntoIter<Self::Item>;

    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Timer {
    Refresh,
    /// A cache reports what its cut covers; the database computes the floor (GC rounds).
    GcReport,
    GcRound,
    Release(u64),
    /// A function has deserialised its context (`metadata_ns_per_kb`).
    Start,
}

pub(super) type Out = Outbox<Msg, Timer>;

/// Bytes of versions on the wire, each with its key.
fn versions_bytes(v: &[(Key, HVersion)]) -> u64 {
    v.iter().map(|(_, v)| 8 + v.wire_bytes()).sum()
}

/// Bytes of a `FetchReply` carrying `v`, after its one-byte tag.
pub(super) fn fetch_reply_body(v: &[(Key, HVersion)]) -> u64 {
    8 + versions_bytes(v)
}
