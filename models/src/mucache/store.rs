//! The store of a sharded service: its shards run the handlers in front of one linearizable
//! store (A3), which answers reads and applies writes one message at a time.
//!
//! An unsharded service keeps its store in its own node (no hop); a sharded one needs a place
//! all its shards reach, as the paper's shards share their service's datastore. A write's
//! reply leaves after the write took effect, so the shard's postWrite Inv(k) follows it (O2).

use super::app::StoreKey;
use super::msg::Msg;
use super::service::Timer;
use causim_sim::node::{NodeId, Outbox};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StoreNode {
    pub store: BTreeMap<StoreKey, u64>,
}

impl StoreNode {
    pub fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match msg {
            Msg::StoreRead { req, key } => {
                let value = self.store.get(&key).copied();
                out.send(from, Msg::StoreReply { req, key, value, write: false });
            }
            Msg::StoreWrite { req, key } => {
                // The key's next version: values are unique per key, in commit order.
                let value = self.store.get(&key).map_or(1, |v| v + 1);
                self.store.insert(key, value);
                out.send(from, Msg::StoreReply { req, key, value: Some(value), write: true });
            }
            other => unreachable!("a store node gets store requests only, not {other:?}"),
        }
    }
}
