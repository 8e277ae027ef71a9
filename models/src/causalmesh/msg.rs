//! CausalMesh's messages: the server API of Fig. 4, the chain, dissemination, the database.

use super::vc::{Deps, Vc, Version, deps_bytes};
use causim_sim::history::{Key, Value};
use causim_sim::node::Message;
use causim_sim::time::Time;

/// Writes carried by a client, or written by one request: (key, version).
pub type Writes = Vec<(Key, Version)>;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    // Client → server (Fig. 4).
    ClientRead {
        key: Key,
        deps: Deps,
    },
    ClientReadTxn {
        keys: Vec<Key>,
        deps: Deps,
    },
    ClientWrite {
        key: Key,
        value: Value,
        deps: Deps,
        local: Writes,
    },
    /// CausalMesh-TCC: read `key` consistently with the transaction's read set (Fig. 11):
    /// `read_set` names the write read so far of each key (to integrate them, and to choose a
    /// version consistent with them).
    ClientReadTcc {
        key: Key,
        read_set: Deps,
        /// A retried workflow's lower bound for `key`: the version a failed join needed.
        floor: Option<Vc>,
    },
    /// CausalMesh-TCC's validation phase at a join (§7): does the union of the parallel
    /// functions' read sets (the write read of each key) form a cut?
    ClientValidateTcc {
        read_set: Deps,
    },
    /// CausalMesh-TCC: the workflow's buffered writes, sent once at its end (§7).
    ClientCommit {
        writes: Vec<(Key, Value)>,
        deps: Deps,
    },

    // Server → client.
    ReadReply {
        key: Key,
        version: Version,
    },
    ReadTxnReply {
        versions: Vec<(Key, Version)>,
    },
    WriteReply {
        key: Key,
        vc: Vc,
        deps: Deps,
    },
    /// `version: None` when no cached version forms a cut with the read set; `floor` then
    /// names a key read too old for the newest version, and the version a retry should read.
    ReadTccReply {
        key: Key,
        version: Option<Version>,
        floor: Option<(Key, Vc)>,
    },
    CommitReply {
        vc: Vc,
    },
    /// `fracture`: `None` when the read set is a cut; otherwise a key read too old, and the
    /// write of it that the union's causal past holds.
    ValidateReply {
        fracture: Option<(Key, Vc)>,
    },

    // Server → server.
    /// A write travelling its chain (Fig. 5). `carried`: the writer's carried local writes
    /// (one-round chain, Fig. 7 lines 29–30). `written_at_ns` is ghost state for the
    /// inconsistency-window metric and not counted in the size.
    ServerWrite {
        head: u32,
        round: u8,
        writes: Writes,
        carried: Writes,
        written_at_ns: Time,
    },
    /// Dissemination from the tail: integrate these versions (§5.2, optional).
    Integrate {
        writes: Vec<(Key, Vc)>,
    },

    // Server ↔ database.
    DbWrite {
        id: u64,
        writes: Writes,
        ack: bool,
    },
    DbWriteAck {
        id: u64,
    },
    /// A cache miss after eviction: the stored version of `key` written with VC `vc`.
    DbRead {
        key: Key,
        vc: Vc,
    },
    DbReadReply {
        key: Key,
        version: Version,
    },
}

impl Msg {
    /// Renames every written value the message holds (`f` must be a bijection on the values a
    /// run writes). The protocol never orders values, only compares them for equality, so a
    /// renamed run is a run: model checkers use this to treat interchangeable clients as one.
    pub fn map_values(&mut self, f: &impl Fn(Value) -> Value) {
        let writes = |w: &mut Writes| w.iter_mut().for_each(|(_, v)| v.map_value(f));
        match self {
            Msg::ClientWrite { value, local, .. } => {
                *value = f(*value);
                writes(local);
            }
            Msg::ClientCommit { writes: w, .. } => w.iter_mut().for_each(|(_, v)| *v = f(*v)),
            Msg::ReadReply { version, .. } | Msg::DbReadReply { version, .. } => version.map_value(f),
            Msg::ReadTccReply { version, .. } => version.iter_mut().for_each(|v| v.map_value(f)),
            Msg::ReadTxnReply { versions } => writes(versions),
            Msg::ServerWrite { writes: w, carried, .. } => {
                writes(w);
                writes(carried);
            }
            Msg::DbWrite { writes: w, .. } => writes(w),
            Msg::ClientRead { .. }
            | Msg::ClientReadTxn { .. }
            | Msg::ClientReadTcc { .. }
            | Msg::ClientValidateTcc { .. }
            | Msg::WriteReply { .. }
            | Msg::CommitReply { .. }
            | Msg::ValidateReply { .. }
            | Msg::Integrate { .. }
            | Msg::DbWriteAck { .. }
            | Msg::DbRead { .. } => {}
        }
    }
}

fn writes_bytes(w: &Writes) -> u64 {
    w.iter().map(|(_, v)| 8 + v.bytes()).sum()
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::ClientRead { .. } => "ClientRead",
            Msg::ClientReadTxn { .. } => "ClientReadTxn",
            Msg::ClientWrite { .. } => "ClientWrite",
            Msg::ClientReadTcc { .. } => "ClientReadTcc",
            Msg::ClientValidateTcc { .. } => "ClientValidateTcc",
            Msg::ClientCommit { .. } => "ClientCommit",
            Msg::ReadReply { .. } => "ReadReply",
            Msg::ReadTxnReply { .. } => "ReadTxnReply",
            Msg::WriteReply { .. } => "WriteReply",
            Msg::ReadTccReply { .. } => "ReadTccReply",
            Msg::CommitReply { .. } => "CommitReply",
            Msg::ValidateReply { .. } => "ValidateReply",
            Msg::ServerWrite { .. } => "ServerWrite",
            Msg::Integrate { .. } => "Integrate",
            Msg::DbWrite { .. } => "DbWrite",
            Msg::DbWriteAck { .. } => "DbWriteAck",
            Msg::DbRead { .. } => "DbRead",
            Msg::DbReadReply { .. } => "DbReadReply",
        }
    }

    /// A one-byte tag, 8 bytes per key or value, 4 per vector-clock entry.
    fn size_bytes(&self) -> u64 {
        1 + match self {
            Msg::ClientRead { deps, .. } => 8 + deps_bytes(deps),
            Msg::ClientReadTxn { keys, deps } => 8 * keys.len() as u64 + deps_bytes(deps),
            Msg::ClientWrite { deps, local, .. } => 16 + deps_bytes(deps) + writes_bytes(local),
            Msg::ClientReadTcc { read_set, floor, .. } => 8 + deps_bytes(read_set) + floor.map_or(0, |f| f.bytes()),
            Msg::ClientValidateTcc { read_set } => deps_bytes(read_set),
            Msg::ClientCommit { writes, deps } => 16 * writes.len() as u64 + deps_bytes(deps),
            Msg::ReadReply { version, .. } => 8 + version.bytes(),
            Msg::ReadTxnReply { versions } => writes_bytes(versions),
            Msg::WriteReply { vc, deps, .. } => 8 + vc.bytes() + deps_bytes(deps),
            Msg::ReadTccReply { version, floor, .. } => {
                8 + version.as_ref().map_or(0, |v| v.bytes()) + floor.map_or(0, |(_, vc)| 8 + vc.bytes())
            }
            Msg::CommitReply { vc } => vc.bytes(),
            Msg::ValidateReply { fracture } => fracture.map_or(0, |(_, vc)| 8 + vc.bytes()),
            Msg::ServerWrite { writes, carried, .. } => 5 + writes_bytes(writes) + writes_bytes(carried),
            Msg::Integrate { writes } => writes.iter().map(|(_, vc)| 8 + vc.bytes()).sum(),
            Msg::DbWrite { writes, .. } => 9 + writes_bytes(writes),
            Msg::DbWriteAck { .. } => 8,
            Msg::DbRead { vc, .. } => 8 + vc.bytes(),
            Msg::DbReadReply { version, .. } => 8 + version.bytes(),
        }
    }
}
