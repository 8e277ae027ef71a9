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
//! **External writes** (§III-C3): an application outside the domain writes storage directly
//! (`external.rs`); storage's listener reports each to the controller, which sends it to the
//! key's home. Paper-literal, storage applies and acknowledges it at once, and the home then
//! invalidates every copy: until then caches serve the old value after the write completed
//! (A11, a finding). Under the strict rule `external_through_home` storage hands the write to
//! the home instead, which writes it like any other (invalidations, then the acknowledgment),
//! so it takes effect in the key's order at the home.
//!
//! When the agent rejoins, its greeting (`Hello`) lifts the fence: on the FIFO link, everything
//! its earlier incarnation sent arrives before it.

use super::msg::{ExtReq, Msg, Timer, Writer};
use causim_sim::history::{Key, Value};
use causim_sim::node::{NodeId, Outbox};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Storage {
    /// Whether a failed agent's reads and writes still on the wire are refused once the
    /// controller reports it (off: the mutant `no_storage_fencing`).
    fence: bool,
    /// Where the listener reports external writes (§III-C3): the controller.
    listener: Option<NodeId>,
    /// Strict rule (A11): an external write takes effect through the key's home, not here at
    /// once (see the module doc).
    external_through_home: bool,
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

    /// Storage whose listener reports external writes to `controller`.
    pub fn with_listener(mut self, controller: NodeId, external_through_home: bool) -> Storage {
        self.listener = Some(controller);
        self.external_through_home = external_through_home;
        self
    }

    pub fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        if let Msg::Hello = msg {
            // The agent rejoins: on the FIFO link, its earlier incarnation's writes came first.
            self.fenced.remove(&from);
            return;
        }
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
            Msg::StPut { key, value, writer: Writer::External(tag), .. } => {
                let listener = self.listener.expect("external writes come with a listener (params.external_app)");
                let applied = self.applied(key);
                let ext = ExtReq { tag, stored: !self.external_through_home };
                if ext.stored {
                    // Paper-literal: the write lands at once and is acknowledged; the listener
                    // tells the home afterwards, and caches serve the old value meanwhile (A11).
                    self.values.insert(key, value);
                    self.applied.insert(key, applied + 1);
                    out.trace("StorageWrite", || format!("{{\"key\":{key},\"value\":{value},\"external\":true}}"));
                    out.send(from, Msg::StAck { key, writer: Writer::External(tag), applied: applied + 1 });
                }
                out.count("concord_listener_call");
                out.send(listener, Msg::ExtWrite { key, value, origin: from, ext, applied: applied + u64::from(ext.stored) });
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
