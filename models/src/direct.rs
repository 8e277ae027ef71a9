//! No cache: functions read and write the database directly (CausalMesh Fig. 13's dotted
//! lower bound on latency "when accessing the database directly without caches").
//!
//! The database is one node; every operation costs a round trip to it (set its latency with
//! a link override to the `db` machine). It is trivially consistent: one copy, operations
//! applied in arrival order. Worker machines `S0 … S(n−1)` host functions but no cache.

use crate::catalogue::{Entry, Profile, SeriesStyle};
use crate::{FaultModel, Model};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, OpRecord, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::{Message, Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    Read { keys: Vec<Key> },
    ReadReply { entries: Vec<(Key, Option<Value>)> },
    Write { key: Key, value: Value },
    WriteAck,
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Read { .. } => "Read",
            Msg::ReadReply { .. } => "ReadReply",
            Msg::Write { .. } => "Write",
            Msg::WriteAck => "WriteAck",
        }
    }

    fn size_bytes(&self) -> u64 {
        1 + match self {
            Msg::Read { keys } => 8 * keys.len() as u64,
            Msg::ReadReply { entries } => 16 * entries.len() as u64,
            Msg::Write { .. } => 16,
            Msg::WriteAck => 0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    db: NodeId,
    ops: Vec<Op>,
    next: usize,
    invoked: Time,
}

impl Client {
    fn issue(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        let Some(op) = self.ops.get(self.next) else {
            out.function_done();
            return;
        };
        self.invoked = now;
        let msg = match op {
            Op::Read { key } => Msg::Read { keys: vec![*key] },
            Op::ReadTxn { keys } => Msg::Read { keys: keys.clone() },
            Op::Write { key, value } => Msg::Write { key: *key, value: *value },
            Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
        };
        out.send(self.db, msg);
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DirectNode {
    Database(BTreeMap<Key, Value>),
    /// A worker machine's host: it runs functions and has no cache, so it never gets a message.
    Host,
    Client(Client),
}

impl Node for DirectNode {
    type Msg = Msg;
    type Timer = ();

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, ()>) {
        if let DirectNode::Client(c) = self {
            c.issue(now, out);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, ()>) {
        match (self, msg) {
            (DirectNode::Database(items), Msg::Read { keys }) => {
                let entries = keys.into_iter().map(|k| (k, items.get(&k).copied())).collect();
                out.send(from, Msg::ReadReply { entries });
            }
            (DirectNode::Database(items), Msg::Write { key, value }) => {
                items.insert(key, value);
                out.send(from, Msg::WriteAck);
            }
            (DirectNode::Client(c), reply) => {
                let (kind, ops) = match (&c.ops[c.next], reply) {
                    (Op::Write { key, value }, Msg::WriteAck) => (TxnKind::Write, [OpRecord::write(*key, *value)].into()),
                    (Op::Read { .. }, Msg::ReadReply { entries }) => {
                        (TxnKind::Read, entries.into_iter().map(|(k, v)| OpRecord::read(k, v)).collect())
                    }
                    (Op::ReadTxn { .. }, Msg::ReadReply { entries }) => {
                        (TxnKind::ReadTxn, entries.into_iter().map(|(k, v)| OpRecord::read(k, v)).collect())
                    }
                    (op, reply) => unreachable!("{reply:?} does not answer {op:?}"),
                };
                out.record(TxnRecord {
                    kind,
                    node: Some(from),
                    invoke_ns: c.invoked,
                    complete_ns: now,
                    outcome: Outcome::Ok,
                    ops,
                    note: None,
                    call: None,
                });
                c.next += 1;
                c.issue(now, out);
            }
            (node, msg) => unreachable!("{msg:?} is not for {node:?}"),
        }
    }
}

/// Direct database access as the engine sees it.
#[derive(Clone, Debug)]
pub struct Direct {
    pub workers: usize,
}

impl Protocol for Direct {
    type Node = DirectNode;
    type Context = ();

    /// The database, and the worker machines `S0 …` (named like the other protocols' cache
    /// servers, so scenarios compare), each with an idle host.
    fn fixed_nodes(&self) -> Vec<FixedNode<DirectNode>> {
        let mut nodes =
            vec![FixedNode { name: "db".into(), machine: "db".into(), hosts_workers: false, node: DirectNode::Database(BTreeMap::new()) }];
        nodes.extend((0..self.workers).map(|i| FixedNode {
            name: format!("S{i}"),
            machine: format!("S{i}"),
            hosts_workers: true,
            node: DirectNode::Host,
        }));
        nodes
    }

    fn new_context(&self) {}

    fn spawn_function(&self, start: FunctionStart<'_, ()>) -> DirectNode {
        DirectNode::Client(Client { db: NodeId::fixed(0), ops: start.ops, next: 0, invoked: start.now })
    }

    fn finish_function(&self, _node: DirectNode) {}

    fn join_contexts(&self, _contexts: Vec<()>) {}
}

impl Model for Direct {
    const ENTRY: Entry = Entry {
        name: "direct",
        about: "no cache: functions read and write the database directly (the latency floor of CausalMesh Fig. 13)",
        // One copy, applied in arrival order: every history is causally consistent and more.
        level: Level::Ccv,
        mutants: &[],
        profile: Profile { database: true, ..Profile::PLAIN },
        faults: FaultModel::STATE_KEPT,
        series: &[SeriesStyle { label: "Direct", colour: (40, 40, 40) }],
    };

    fn build(params: &serde_json::Value, _mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let _: Empty = crate::parse_params(params)?;
        Ok(Direct { workers: topology.servers as usize })
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}
