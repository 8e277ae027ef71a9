//! The teaching protocol: a primary-backup replicated register. Read this model first.
//!
//! It is deliberately small, and shows every part a causim model has:
//!
//! - **fixed nodes**: replicas `S0 … S(n−1)`, one per machine; `S0` is the primary;
//! - **a client library** that runs inside each function of a workflow (the `Client` role),
//!   talking to the replica on its own machine;
//! - **a workflow context** carried from function to function: here the highest version the
//!   session has written or read per key;
//! - **parameters** from the scenario, and a **mutant** (a named, switchable bug);
//! - **history records** for every client operation, and **trace actions** for every protocol
//!   step.
//!
//! # The protocol
//!
//! A client writes through its local replica: the replica forwards the write to the primary,
//! which gives it the next version, applies it, replicates it to every backup over FIFO links
//! and acknowledges it to the client — at once in `async` mode, or once every backup has
//! acknowledged in `sync` mode. A client reads its local replica. A read transaction reads
//! several keys at one replica, atomically.
//!
//! Asynchronous replication lets a read on a backup return an old value, even one older than a
//! value the same session saw on another machine. With `session_guarantees` on, the client
//! library compares the version a replica returns with the context's version for that key and,
//! if the replica is behind, reads again at the primary: read-your-writes and monotonic reads
//! hold across machines. (The primary is never behind a version any client has seen, because
//! every version starts there.)
//!
//! # Mutant
//!
//! - `early_ack`: in `sync` mode the primary acknowledges a write before the backups have
//!   applied it, so a session that moves to a backup may not read its own write (without
//!   session guarantees).

use crate::catalogue::{Entry, Mutant, Profile, SeriesStyle};
use crate::{FaultModel, Model, parse_params};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, OpRecord, Ops, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::{Message, Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A per-key version number assigned by the primary (1, 2, …; 0 is the initial state).
pub type Version = u64;

/// Scenario parameters: `"params": {"replication": "async", "session_guarantees": false}`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RegisterParams {
    /// `async` (default) or `sync`.
    #[serde(default)]
    pub replication: Replication,
    /// Re-read at the primary when the local replica is behind the session. Default false.
    #[serde(default)]
    pub session_guarantees: bool,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Replication {
    #[default]
    Async,
    Sync,
}

pub const MUTANTS: &[Mutant] = &[Mutant {
    name: "early_ack",
    about: "the primary acknowledges a sync write before the backups apply it, so a session that moves \
            to a backup can miss its own write (read-your-writes violation)",
}];

impl Model for Register {
    const ENTRY: Entry = Entry {
        name: "register",
        about: "the teaching protocol: a primary-backup replicated register, sync or async, with optional session guarantees",
        // Async replication without session guarantees is stale by design; every setting the
        // fuzzer draws (sync, or session guarantees on) keeps a session's own writes.
        level: Level::ReadYourWrites,
        mutants: MUTANTS,
        profile: Profile::PLAIN,
        faults: FaultModel::STATE_KEPT,
        series: &[SeriesStyle { label: "Register", colour: (0, 114, 178) }],
    };

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: RegisterParams = parse_params(params)?;
        Ok(Register { servers: topology.servers, params, early_ack: mutants.contains(&"early_ack") })
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        (any::<bool>(), any::<bool>())
            .prop_map(|(sync, guarantees)| {
                serde_json::json!({"replication": if sync { "sync" } else { "async" }, "session_guarantees": guarantees || !sync})
            })
            .boxed()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    Read { key: Key },
    ReadReply { key: Key, value: Option<Value>, version: Version },
    ReadMany { keys: Vec<Key> },
    ReadManyReply { entries: Vec<(Key, Option<Value>, Version)> },
    Write { key: Key, value: Value },
    Forward { key: Key, value: Value, client: NodeId },
    WriteAck { key: Key, version: Version },
    Replicate { key: Key, value: Value, version: Version },
    ReplicateAck { key: Key, version: Version },
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Read { .. } => "Read",
            Msg::ReadReply { .. } => "ReadReply",
            Msg::ReadMany { .. } => "ReadMany",
            Msg::ReadManyReply { .. } => "ReadManyReply",
            Msg::Write { .. } => "Write",
            Msg::Forward { .. } => "Forward",
            Msg::WriteAck { .. } => "WriteAck",
            Msg::Replicate { .. } => "Replicate",
            Msg::ReplicateAck { .. } => "ReplicateAck",
        }
    }

    fn size_bytes(&self) -> u64 {
        // A one-byte tag plus 8 bytes per integer field.
        1 + 8 * match self {
            Msg::Read { .. } => 1,
            Msg::ReadReply { .. } | Msg::Write { .. } | Msg::WriteAck { .. } | Msg::ReplicateAck { .. } => 3,
            Msg::Forward { .. } | Msg::Replicate { .. } => 3,
            Msg::ReadMany { keys } => keys.len() as u64,
            Msg::ReadManyReply { entries } => 3 * entries.len() as u64,
        }
    }
}

/// A replica. `S0` is the primary.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Replica {
    id: NodeId,
    primary: NodeId,
    backups: Vec<NodeId>,
    replication: Replication,
    early_ack: bool,
    // Data: the latest value and version per key.
    store: BTreeMap<Key, (Value, Version)>,
    // Primary only: the next version per key, and sync writes waiting for backup acks.
    next_version: BTreeMap<Key, Version>,
    pending: BTreeMap<(Key, Version), (NodeId, usize)>,
}

impl Replica {
    fn is_primary(&self) -> bool {
        self.id == self.primary
    }

    fn lookup(&self, key: Key) -> (Option<Value>, Version) {
        match self.store.get(&key) {
            Some(&(value, version)) => (Some(value), version),
            None => (None, 0),
        }
    }

    /// The primary orders a write, applies it, replicates it, and acknowledges it when allowed.
    fn order_write(&mut self, key: Key, value: Value, client: NodeId, out: &mut Outbox<Msg, ()>) {
        assert!(self.is_primary());
        let version = {
            let v = self.next_version.entry(key).or_insert(1);
            *v += 1;
            *v - 1
        };
        self.store.insert(key, (value, version));
        out.trace("PrimaryApply", || format!("{{\"key\":{key},\"value\":{value},\"version\":{version}}}"));
        for &b in &self.backups {
            out.send(b, Msg::Replicate { key, value, version });
        }
        let wait = self.replication == Replication::Sync && !self.early_ack && !self.backups.is_empty();
        if wait {
            self.pending.insert((key, version), (client, self.backups.len()));
        } else {
            out.send(client, Msg::WriteAck { key, version });
        }
    }
}

/// The client library inside one function instance.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    replica: NodeId,
    primary: NodeId,
    session_guarantees: bool,
    ops: Vec<Op>,
    next_op: usize,
    context: RegisterContext,
    /// The operation in flight: when it was invoked, and whether it was redirected.
    invoked_at: Time,
    redirected: bool,
}

/// What a workflow carries between functions: the newest version it has seen of each key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RegisterContext {
    pub seen: BTreeMap<Key, Version>,
}

impl RegisterContext {
    fn saw(&mut self, key: Key, version: Version) {
        let v = self.seen.entry(key).or_insert(0);
        *v = (*v).max(version);
    }

    fn behind(&self, key: Key, version: Version) -> bool {
        self.seen.get(&key).is_some_and(|&seen| version < seen)
    }
}

impl Client {
    /// Sends the next operation, or reports the function done.
    fn issue_next(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        let Some(op) = self.ops.get(self.next_op) else {
            out.function_done();
            return;
        };
        self.invoked_at = now;
        self.redirected = false;
        let msg = match op {
            Op::Read { key } => Msg::Read { key: *key },
            Op::Write { key, value } => Msg::Write { key: *key, value: *value },
            Op::ReadTxn { keys } => Msg::ReadMany { keys: keys.clone() },
            Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
        };
        out.send(self.replica, msg);
    }

    fn complete(&mut self, now: Time, node: NodeId, kind: TxnKind, ops: Ops, out: &mut Outbox<Msg, ()>) {
        out.record(TxnRecord {
            kind,
            node: Some(node),
            invoke_ns: self.invoked_at,
            complete_ns: now,
            outcome: Outcome::Ok,
            ops,
            note: None,
            call: None,
        });
        self.next_op += 1;
        self.issue_next(now, out);
    }
}

/// Every role of the register protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RegisterNode {
    Replica(Replica),
    Client(Client),
}

impl Node for RegisterNode {
    type Msg = Msg;
    type Timer = ();

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        match self {
            RegisterNode::Replica(_) => {}
            RegisterNode::Client(c) => c.issue_next(now, out),
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, ()>) {
        match (self, msg) {
            (RegisterNode::Replica(r), Msg::Read { key }) => {
                let (value, version) = r.lookup(key);
                out.send(from, Msg::ReadReply { key, value, version });
            }
            (RegisterNode::Replica(r), Msg::ReadMany { keys }) => {
                let entries = keys
                    .into_iter()
                    .map(|k| {
                        let (v, ver) = r.lookup(k);
                        (k, v, ver)
                    })
                    .collect();
                out.send(from, Msg::ReadManyReply { entries });
            }
            (RegisterNode::Replica(r), Msg::Write { key, value }) => {
                if r.is_primary() {
                    r.order_write(key, value, from, out);
                } else {
                    out.send(r.primary, Msg::Forward { key, value, client: from });
                }
            }
            (RegisterNode::Replica(r), Msg::Forward { key, value, client }) => r.order_write(key, value, client, out),
            (RegisterNode::Replica(r), Msg::Replicate { key, value, version }) => {
                // FIFO links from the primary deliver versions of a key in order.
                assert!(r.lookup(key).1 < version, "replication out of order");
                r.store.insert(key, (value, version));
                out.trace("BackupApply", || format!("{{\"key\":{key},\"version\":{version}}}"));
                if r.replication == Replication::Sync {
                    out.send(from, Msg::ReplicateAck { key, version });
                }
            }
            (RegisterNode::Replica(r), Msg::ReplicateAck { key, version }) => {
                if let Some((client, left)) = r.pending.get_mut(&(key, version)) {
                    *left -= 1;
                    if *left == 0 {
                        let client = *client;
                        r.pending.remove(&(key, version));
                        out.send(client, Msg::WriteAck { key, version });
                    }
                }
            }
            (RegisterNode::Client(c), Msg::ReadReply { key, value, version }) => {
                if c.session_guarantees && c.context.behind(key, version) && !c.redirected {
                    // The local replica has not caught up with this session: ask the primary.
                    c.redirected = true;
                    out.trace("RedirectRead", || format!("{{\"key\":{key},\"version\":{version}}}"));
                    out.send(c.primary, Msg::Read { key });
                    return;
                }
                c.context.saw(key, version);
                let op = OpRecord::read(key, value).with_version([version]);
                c.complete(now, from, TxnKind::Read, [op].into(), out);
            }
            (RegisterNode::Client(c), Msg::ReadManyReply { entries }) => {
                let ops = entries
                    .into_iter()
                    .map(|(k, v, ver)| {
                        c.context.saw(k, ver);
                        OpRecord::read(k, v).with_version([ver])
                    })
                    .collect();
                c.complete(now, from, TxnKind::ReadTxn, ops, out);
            }
            (RegisterNode::Client(c), Msg::WriteAck { key, version }) => {
                c.context.saw(key, version);
                let Op::Write { value, .. } = c.ops[c.next_op] else { unreachable!("ack for a non-write") };
                let op = OpRecord::write(key, value).with_version([version]);
                let replica = c.replica;
                c.complete(now, replica, TxnKind::Write, [op].into(), out);
            }
            (node, msg) => unreachable!("{msg:?} is not for {node:?}"),
        }
    }
}

/// The register protocol as the engine sees it.
#[derive(Clone, Debug)]
pub struct Register {
    pub servers: u32,
    pub params: RegisterParams,
    pub early_ack: bool,
}

impl Protocol for Register {
    type Node = RegisterNode;
    type Context = RegisterContext;

    fn fixed_nodes(&self) -> Vec<FixedNode<RegisterNode>> {
        let ids: Vec<NodeId> = (0..self.servers as usize).map(NodeId::fixed).collect();
        ids.iter()
            .map(|&id| FixedNode {
                name: format!("S{}", id.index()),
                machine: format!("S{}", id.index()),
                hosts_workers: true,
                node: RegisterNode::Replica(Replica {
                    id,
                    primary: ids[0],
                    backups: ids[1..].to_vec(),
                    replication: self.params.replication,
                    early_ack: self.early_ack,
                    store: BTreeMap::new(),
                    next_version: BTreeMap::new(),
                    pending: BTreeMap::new(),
                }),
            })
            .collect()
    }

    fn new_context(&self) -> RegisterContext {
        RegisterContext::default()
    }

    fn spawn_function(&self, start: FunctionStart<'_, RegisterContext>) -> RegisterNode {
        RegisterNode::Client(Client {
            replica: start.colocated[0],
            primary: NodeId::fixed(0),
            session_guarantees: self.params.session_guarantees,
            ops: start.ops,
            next_op: 0,
            context: start.context,
            invoked_at: start.now,
            redirected: false,
        })
    }

    fn finish_function(&self, node: RegisterNode) -> RegisterContext {
        match node {
            RegisterNode::Client(c) => c.context,
            RegisterNode::Replica(_) => unreachable!("replicas are not functions"),
        }
    }

    fn join_contexts(&self, contexts: Vec<RegisterContext>) -> RegisterContext {
        let mut joined = RegisterContext::default();
        for c in contexts {
            for (k, v) in c.seen {
                joined.saw(k, v);
            }
        }
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replica(id: usize, servers: usize, replication: Replication) -> Replica {
        let ids: Vec<NodeId> = (0..servers).map(NodeId::fixed).collect();
        Replica {
            id: ids[id],
            primary: ids[0],
            backups: ids[1..].to_vec(),
            replication,
            early_ack: false,
            store: BTreeMap::new(),
            next_version: BTreeMap::new(),
            pending: BTreeMap::new(),
        }
    }

    const CLIENT: NodeId = NodeId(1 << 63);

    #[test]
    fn primary_orders_replicates_and_acks_an_async_write() {
        let mut primary = RegisterNode::Replica(replica(0, 3, Replication::Async));
        let mut out = Outbox::new(false);
        primary.on_message(0, CLIENT, Msg::Write { key: 7, value: 1 }, &mut out);
        assert_eq!(
            out.effects,
            vec![
                causim_sim::Effect::Send { to: NodeId::fixed(1), msg: Msg::Replicate { key: 7, value: 1, version: 1 } },
                causim_sim::Effect::Send { to: NodeId::fixed(2), msg: Msg::Replicate { key: 7, value: 1, version: 1 } },
                causim_sim::Effect::Send { to: CLIENT, msg: Msg::WriteAck { key: 7, version: 1 } },
            ]
        );
    }

    #[test]
    fn sync_write_is_acked_after_every_backup() {
        let mut primary = RegisterNode::Replica(replica(0, 3, Replication::Sync));
        let mut out = Outbox::new(false);
        primary.on_message(0, CLIENT, Msg::Write { key: 7, value: 1 }, &mut out);
        assert_eq!(out.effects.len(), 2, "only the two Replicate messages: no ack yet");
        out.clear();
        primary.on_message(1, NodeId::fixed(1), Msg::ReplicateAck { key: 7, version: 1 }, &mut out);
        assert!(out.effects.is_empty());
        primary.on_message(2, NodeId::fixed(2), Msg::ReplicateAck { key: 7, version: 1 }, &mut out);
        assert_eq!(out.effects, vec![causim_sim::Effect::Send { to: CLIENT, msg: Msg::WriteAck { key: 7, version: 1 } }]);
    }

    #[test]
    fn a_session_that_is_ahead_of_its_replica_rereads_at_the_primary() {
        let mut context = RegisterContext::default();
        context.saw(7, 3);
        let mut client = RegisterNode::Client(Client {
            replica: NodeId::fixed(1),
            primary: NodeId::fixed(0),
            session_guarantees: true,
            ops: vec![Op::Read { key: 7 }],
            next_op: 0,
            context,
            invoked_at: 0,
            redirected: false,
        });
        let mut out = Outbox::new(false);
        client.on_start(0, &mut out);
        out.clear();
        client.on_message(5, NodeId::fixed(1), Msg::ReadReply { key: 7, value: Some(1), version: 1 }, &mut out);
        assert_eq!(out.effects, vec![causim_sim::Effect::Send { to: NodeId::fixed(0), msg: Msg::Read { key: 7 } }]);
        assert!(out.records.is_empty());
        out.clear();
        client.on_message(9, NodeId::fixed(0), Msg::ReadReply { key: 7, value: Some(3), version: 3 }, &mut out);
        assert_eq!(out.records.len(), 1);
        assert_eq!(out.records[0].ops[0].value, Some(3));
        assert_eq!(out.records[0].invoke_ns, 0, "latency covers the redirect");
        assert_eq!(out.effects, vec![causim_sim::Effect::FunctionDone]);
    }
}
