//! Global storage (Azure Blob Storage in the paper): a linearizable key-value store behind the
//! `db` machine's link delay. Caches are write-through, so storage always holds the latest
//! value of every key the protocol has serialized.
//!
//! It also keeps the ghost count of writes applied per key, to check invariant I8 (write
//! ordering): every write must arrive knowing exactly the writes applied before it. A write
//! that arrives after a later-serialized one (the lost update of a racing E-owner write), or
//! two writes the home let run at once, break it.
//!
//! When the controller reports an agent failed, storage fences it: whatever it still has on the
//! wire (a direct write of an owner that crashed, A9) is dropped from then on, so it cannot land
//! after the survivors have started writing its keys again. The paper does not say how a dead
//! owner's in-flight write is kept from landing late; this is the smallest rule that does it.

use super::msg::{Msg, Timer};
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Storage {
    /// Whether a failed agent's reads and writes still on the wire are refused once the
    /// controller reports it (off: the mutant `no_storage_fencing`).
    fence: bool,
    fenced: BTreeSet<NodeId>,
    values: BTreeMap<Key, Value>,
    /// Ghost: writes applied per key.
    applied: BTreeMap<Key, u64>,
    /// Ghost: the first I8 violation seen.
    violation: Option<String>,
}

impl Storage {
    pub fn new(fence: bool) -> Storage {
        Storage { fence, ..Storage::default() }
    }

    pub fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        if self.fenced.contains(&from) {
            // A failed agent's direct write that arrives after the fence never lands: the
            // agents that recover its keys may already have written them.
            out.count("concord_fenced_message");
            return;
        }
        match msg {
            Msg::Fail { node } => {
                if self.fence {
                    self.fenced.insert(node);
                }
                let applied = self.applied.iter().map(|(&k, &n)| (k, n)).collect();
                out.send(from, Msg::FailAck { node, applied });
            }
            Msg::StGet { key, tag } => {
                let applied = self.applied(key);
                out.send(from, Msg::StData { key, value: self.values.get(&key).copied(), tag, applied });
            }
            Msg::StPut { key, value, writer, after } => {
                let applied = self.applied(key);
                if after != applied && self.violation.is_none() {
                    self.violation = Some(format!(
                        "I8 write ordering: the write of key {key} = {value} was serialized after {after} writes of the key, \
                         but storage had applied {applied}"
                    ));
                }
                self.values.insert(key, value);
                self.applied.insert(key, applied + 1);
                out.trace("StorageWrite", || format!("{{\"key\":{key},\"value\":{value}}}"));
                out.send(from, Msg::StAck { key, writer, applied: applied + 1 });
            }
            other => unreachable!("storage does not handle {other:?}"),
        }
    }

    /// The stored value of `key` (`None`: never written).
    pub fn value(&self, key: Key) -> Option<Value> {
        self.values.get(&key).copied()
    }

    fn applied(&self, key: Key) -> u64 {
        self.applied.get(&key).copied().unwrap_or(0)
    }

    pub fn check_invariants(&self) -> Result<(), String> {
        self.violation.clone().map_or(Ok(()), Err)
    }
}
