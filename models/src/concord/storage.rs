//! Global storage (Azure Blob Storage in the paper): a linearizable key-value store behind the
//! `db` machine's link delay. Caches are write-through, so storage always holds the latest
//! value of every key the protocol has serialized.
//!
//! It also keeps the ghost count of writes applied per key, to check invariant I8 (write
//! ordering): every write must arrive knowing exactly the writes applied before it. A write
//! that arrives after a later-serialized one (the lost update of a racing E-owner write), or
//! two writes the home let run at once, break it.

use super::msg::Msg;
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Storage {
    values: BTreeMap<Key, Value>,
    /// Ghost: writes applied per key.
    applied: BTreeMap<Key, u64>,
    /// Ghost: the first I8 violation seen.
    violation: Option<String>,
}

impl Storage {
    pub fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, ()>) {
        match msg {
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
