//! An application outside the coherence domain that reads and writes storage directly (§III-C3:
//! "external reads and writes"), on its own machine `ext` (present with
//! `params.external_app`). Functions a scenario runs there are its calls: each goes straight to
//! storage, whose listener reports the writes to the domain (`storage.rs`).
//!
//! Its reads bypass every cache: they are per-key linearizable with the functions' calls only
//! if storage is written no earlier than the last copy of the old value is invalidated, which
//! Concord's S-case writes (invalidations in parallel with the storage write) do not promise.
//! The scenarios use its writes.

use super::msg::{Msg, ReadClass, Tag, Timer, Writer};
use causim_sim::history::Key;
use causim_sim::node::{NodeId, Outbox};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct External {
    storage: NodeId,
    next_tag: Tag,
    /// Calls in flight: the function and the key.
    calls: BTreeMap<Tag, (NodeId, Key)>,
}

impl External {
    pub fn new(storage: NodeId) -> External {
        External { storage, next_tag: 0, calls: BTreeMap::new() }
    }

    fn call(&mut self, client: NodeId, key: Key) -> Tag {
        let tag = self.next_tag;
        self.next_tag += 1;
        self.calls.insert(tag, (client, key));
        tag
    }

    fn answer(&mut self, tag: Tag) -> (NodeId, Key) {
        self.calls.remove(&tag).unwrap_or_else(|| unreachable!("no external call {tag}"))
    }

    pub fn on_message(&mut self, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Timer>) {
        match msg {
            Msg::Get { key } => {
                let tag = self.call(from, key);
                out.send(self.storage, Msg::StGet { key, tag });
            }
            Msg::Put { key, value } => {
                let tag = self.call(from, key);
                out.count("concord_external_write");
                out.send(self.storage, Msg::StPut { key, value, writer: Writer::External(tag), after: 0 });
            }
            Msg::StData { value, tag, .. } => {
                let (client, key) = self.answer(tag);
                out.send(client, Msg::GetReply { key, value, class: ReadClass::Miss });
            }
            // Stored at once (paper-literal), or written by the key's home (strict).
            Msg::StAck { writer: Writer::External(tag), .. } | Msg::ExtAck { tag, .. } => {
                let (client, key) = self.answer(tag);
                out.send(client, Msg::PutReply { key });
            }
            other => unreachable!("the external application does not handle {other:?}"),
        }
    }
}
