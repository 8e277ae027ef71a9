//! The backing database (§3.1): durable, with conflict resolution by vector clock.
//!
//! Writes are merged per key with the same rule as the caches (a newer version overwrites; for
//! concurrent versions the lexicographically larger VC's value wins), so the database converges
//! with the caches. Its latency is the link delay to the `db` machine.
//!
//! When caches evict, the database also keeps every version, so a miss can be answered with
//! exactly the version that was visible (see `server.rs`, "misses").

use super::msg::Msg;
use super::vc::{Vc, Version};
use causim_sim::history::Key;
use causim_sim::node::{NodeId, Outbox};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Database {
    servers: usize,
    keep_versions: bool,
    latest: BTreeMap<Key, Version>,
    versions: BTreeMap<Key, Vec<Version>>,
}

impl Database {
    pub fn new(servers: usize, keep_versions: bool) -> Database {
        Database { servers, keep_versions, latest: BTreeMap::new(), versions: BTreeMap::new() }
    }

    pub fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, ()>) {
        match msg {
            Msg::DbWrite { id, writes, ack } => {
                for (key, version) in writes {
                    self.latest.entry(key).or_insert_with(|| Version::initial(self.servers)).merge(&version);
                    if self.keep_versions {
                        self.versions.entry(key).or_default().push(version);
                    }
                }
                if ack {
                    out.send(from, Msg::DbWriteAck { id });
                }
            }
            Msg::DbRead { key, vc } => {
                let version = self.exact(key, &vc);
                out.send(from, Msg::DbReadReply { key, version });
            }
            other => unreachable!("the database does not handle {other:?}"),
        }
    }

    /// The stored version of `key` written with VC `vc` (the initial state if there is none:
    /// a miss only asks for versions that were flushed before anyone could see them).
    fn exact(&self, key: Key, vc: &Vc) -> Version {
        self.versions.get(&key).and_then(|l| l.iter().find(|v| v.vc == *vc)).cloned().unwrap_or_else(|| Version::initial(self.servers))
    }

    pub fn latest(&self, key: Key) -> Option<&Version> {
        self.latest.get(&key)
    }
}
