//! An eventually consistent cache cluster in the style of DynamoDB Accelerator (DAX), the
//! baseline of CausalMesh's Fig. 1 and §2.1.
//!
//! Cache nodes `S0 … S(n−1)` sit on the worker machines; `S0` is the primary. A write goes to
//! the primary, which writes it through to the database, caches it, acknowledges it, and
//! replicates it to every other node asynchronously: each replica gets it after a lag the host
//! draws from `params.replication_lag` ("eventually consistent and can take up to 1 second",
//! §2.1). A read is served by the node on the function's own machine. Caches are pre-warmed,
//! so a node that has not received a write yet still shows the older value.
//!
//! Nothing keeps a workflow's functions consistent across nodes: the paper's two-function
//! workflow (write, then read the same key) reads its own write only if the read lands on the
//! primary or the replication has arrived — a read-your-writes violation otherwise, at a rate
//! that grows with the number of nodes (Fig. 1: 0 % with one node, 14.2 % with eight).
//!
//! **Cloudburst's write path** (`params.write_path = "storage"`, FaaSTCC §6.9's baseline): a
//! function writes straight to the storage (Anna), which acknowledges it and pushes the new
//! version to every cache after the replication lag (Cloudburst's caches subscribe to what they
//! hold); reads are served by the local cache as before. No cache is on the write path.

use crate::catalogue::{Entry, Profile, SeriesStyle};
use crate::{FaultModel, Model, parse_params};
use causim_checkers::Level;
use causim_sim::config::TopologyConfig;
use causim_sim::dist::DurationDist;
use causim_sim::error::FieldError;
use causim_sim::history::{Key, OpRecord, Ops, Outcome, TxnKind, TxnRecord, Value};
use causim_sim::node::{Message, Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::workload::Op;
use proptest::prelude::*;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A version: the primary's write counter.
pub type Version = u64;

/// `protocol.params`: `{"replication_lag": {"dist":"lognormal","mean_ns":20000000,"sigma":1.5,"max_ns":1000000000}}`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EventualParams {
    /// Delay from the primary's write to a replica applying it. Default: log-normal, mean
    /// 20 ms, sigma 1.5, capped at 1 s.
    #[serde(default = "default_lag")]
    pub replication_lag: DurationDist,
    /// Where a function's write goes: `primary` (default: the DAX-like primary cache, which
    /// writes through) or `storage` (Cloudburst: the storage itself, which then replicates to
    /// every cache).
    #[serde(default)]
    pub write_path: WritePath,
}

/// `params.write_path`.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum WritePath {
    #[default]
    Primary,
    Storage,
}

fn default_lag() -> DurationDist {
    DurationDist::Lognormal { mean_ns: 20_000_000, sigma: 1.5, min_ns: 0, max_ns: Some(1_000_000_000) }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    Read { key: Key },
    ReadReply { key: Key, value: Option<Value>, version: Version },
    ReadMany { keys: Vec<Key> },
    ReadManyReply { entries: Vec<(Key, Option<Value>, Version)> },
    Write { key: Key, value: Value },
    WriteAck { key: Key, version: Version },
    Replicate { key: Key, value: Value, version: Version },
    DbWrite { id: u64, key: Key, value: Value, version: Version },
    DbAck { id: u64 },
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Read { .. } => "Read",
            Msg::ReadReply { .. } => "ReadReply",
            Msg::ReadMany { .. } => "ReadMany",
            Msg::ReadManyReply { .. } => "ReadManyReply",
            Msg::Write { .. } => "Write",
            Msg::WriteAck { .. } => "WriteAck",
            Msg::Replicate { .. } => "Replicate",
            Msg::DbWrite { .. } => "DbWrite",
            Msg::DbAck { .. } => "DbAck",
        }
    }

    fn size_bytes(&self) -> u64 {
        1 + 8 * match self {
            Msg::Read { .. } | Msg::DbAck { .. } => 1,
            Msg::ReadReply { .. } | Msg::Write { .. } | Msg::WriteAck { .. } | Msg::Replicate { .. } => 3,
            Msg::DbWrite { .. } => 4,
            Msg::ReadMany { keys } => keys.len() as u64,
            Msg::ReadManyReply { entries } => 3 * entries.len() as u64,
        }
    }
}

/// A replication waiting for its lag to pass.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Replication {
    /// The replica; the storage's own id for its push to every cache (`write_path = storage`).
    to: NodeId,
    key: Key,
    value: Value,
    version: Version,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheNode {
    id: NodeId,
    replicas: Vec<NodeId>,
    db: NodeId,
    lag: DurationDist,
    items: BTreeMap<Key, (Value, Version)>,
    // Primary only.
    next_version: Version,
    pending: BTreeMap<u64, (NodeId, Key, Value, Version)>,
    next_id: u64,
}

impl CacheNode {
    fn lookup(&self, key: Key) -> (Option<Value>, Version) {
        self.items.get(&key).map_or((None, 0), |&(v, ver)| (Some(v), ver))
    }

    fn apply(&mut self, key: Key, value: Value, version: Version) {
        if self.items.get(&key).is_none_or(|&(_, v)| v < version) {
            self.items.insert(key, (value, version));
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    node: NodeId,
    /// Where writes go: the primary cache or the storage (`params.write_path`).
    writes_to: NodeId,
    ops: Vec<Op>,
    next: usize,
    invoked: Time,
}

impl Client {
    fn issue(&mut self, now: Time, out: &mut Outbox<Msg, Replication>) {
        let Some(op) = self.ops.get(self.next) else {
            out.function_done();
            return;
        };
        self.invoked = now;
        match op {
            Op::Read { key } => out.send(self.node, Msg::Read { key: *key }),
            Op::ReadTxn { keys } => out.send(self.node, Msg::ReadMany { keys: keys.clone() }),
            Op::Write { key, value } => out.send(self.writes_to, Msg::Write { key: *key, value: *value }),
            Op::Log(_) => unreachable!("log calls go to log protocols only (the scenario loader checks)"),
        }
    }

    fn complete(&mut self, now: Time, from: NodeId, kind: TxnKind, ops: Ops, out: &mut Outbox<Msg, Replication>) {
        out.record(TxnRecord {
            kind,
            node: Some(from),
            invoke_ns: self.invoked,
            complete_ns: now,
            outcome: Outcome::Ok,
            ops,
            note: None,
            call: None,
        });
        self.next += 1;
        self.issue(now, out);
    }
}

/// The database: a versioned store (the primary orders writes, so versions only grow). With
/// `write_path = storage` it orders the writes itself and replicates them to the caches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Database {
    items: BTreeMap<Key, (Value, Version)>,
    caches: Vec<NodeId>,
    lag: DurationDist,
    next_version: Version,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventualNode {
    Cache(Box<CacheNode>),
    Database(Database),
    Client(Client),
}

impl Node for EventualNode {
    type Msg = Msg;
    type Timer = Replication;

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, Replication>) {
        if let EventualNode::Client(c) = self {
            c.issue(now, out);
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, Replication>) {
        match (self, msg) {
            (EventualNode::Cache(n), Msg::Read { key }) => {
                let (value, version) = n.lookup(key);
                out.send(from, Msg::ReadReply { key, value, version });
            }
            (EventualNode::Cache(n), Msg::ReadMany { keys }) => {
                let entries = keys.into_iter().map(|k| {
                    let (v, ver) = n.lookup(k);
                    (k, v, ver)
                });
                out.send(from, Msg::ReadManyReply { entries: entries.collect() });
            }
            (EventualNode::Cache(n), Msg::Write { key, value }) => {
                // Write-through: the database first, then the cache, then the acknowledgement.
                n.next_version += 1;
                let (id, version) = (n.next_id, n.next_version);
                n.next_id += 1;
                n.pending.insert(id, (from, key, value, version));
                out.send(n.db, Msg::DbWrite { id, key, value, version });
            }
            (EventualNode::Cache(n), Msg::DbAck { id }) => {
                let (client, key, value, version) = n.pending.remove(&id).expect("an ack for a pending write");
                n.apply(key, value, version);
                out.send(client, Msg::WriteAck { key, version });
                for &to in &n.replicas {
                    out.set_timer_sampled(Replication { to, key, value, version }, n.lag.clone());
                }
            }
            (EventualNode::Cache(n), Msg::Replicate { key, value, version }) => n.apply(key, value, version),
            (EventualNode::Database(d), Msg::Write { key, value }) => {
                d.next_version += 1;
                let version = d.next_version;
                d.items.insert(key, (value, version));
                out.send(from, Msg::WriteAck { key, version });
                // One push to every cache after the lag: one timer per write, not per cache, so
                // the storage node does not spend a service time per cache on each write.
                let to = NodeId::fixed(d.caches.len());
                out.set_timer_sampled(Replication { to, key, value, version }, d.lag.clone());
            }
            (EventualNode::Database(d), Msg::DbWrite { id, key, value, version }) => {
                if d.items.get(&key).is_none_or(|&(_, v)| v < version) {
                    d.items.insert(key, (value, version));
                }
                out.send(from, Msg::DbAck { id });
            }
            (EventualNode::Client(c), Msg::ReadReply { key, value, version }) => {
                let op = OpRecord::read(key, value).with_version([version]);
                c.complete(now, from, TxnKind::Read, [op].into(), out);
            }
            (EventualNode::Client(c), Msg::ReadManyReply { entries }) => {
                let ops = entries.into_iter().map(|(k, v, ver)| OpRecord::read(k, v).with_version([ver])).collect();
                c.complete(now, from, TxnKind::ReadTxn, ops, out);
            }
            (EventualNode::Client(c), Msg::WriteAck { key, version }) => {
                let Op::Write { value, .. } = c.ops[c.next] else { unreachable!("an ack for a non-write") };
                let op = OpRecord::write(key, value).with_version([version]);
                c.complete(now, from, TxnKind::Write, [op].into(), out);
            }
            (node, msg) => unreachable!("{msg:?} is not for {node:?}"),
        }
    }

    fn on_timer(&mut self, _now: Time, r: Replication, out: &mut Outbox<Msg, Replication>) {
        let msg = Msg::Replicate { key: r.key, value: r.value, version: r.version };
        match self {
            // The storage's push goes to every cache.
            EventualNode::Database(d) => d.caches.iter().for_each(|&to| out.send(to, msg.clone())),
            _ => out.send(r.to, msg),
        }
    }
}

/// The DAX-like baseline as the engine sees it.
#[derive(Clone, Debug)]
pub struct Eventual {
    pub nodes: usize,
    pub params: EventualParams,
}

impl Protocol for Eventual {
    type Node = EventualNode;
    type Context = ();

    fn fixed_nodes(&self) -> Vec<FixedNode<EventualNode>> {
        let ids: Vec<NodeId> = (0..self.nodes).map(NodeId::fixed).collect();
        let db = NodeId::fixed(self.nodes);
        let lag = self.params.replication_lag.clone();
        let mut nodes: Vec<FixedNode<EventualNode>> = ids
            .iter()
            .map(|&id| FixedNode {
                name: format!("S{}", id.index()),
                machine: format!("S{}", id.index()),
                hosts_workers: true,
                node: EventualNode::Cache(Box::new(CacheNode {
                    id,
                    replicas: if id.index() == 0 { ids[1..].to_vec() } else { Vec::new() },
                    db,
                    lag: lag.clone(),
                    items: BTreeMap::new(),
                    next_version: 0,
                    pending: BTreeMap::new(),
                    next_id: 0,
                })),
            })
            .collect();
        nodes.push(FixedNode {
            name: "db".into(),
            machine: "db".into(),
            hosts_workers: false,
            node: EventualNode::Database(Database { items: BTreeMap::new(), caches: ids.clone(), lag, next_version: 0 }),
        });
        nodes
    }

    fn new_context(&self) {}

    fn spawn_function(&self, start: FunctionStart<'_, ()>) -> EventualNode {
        let writes_to = match self.params.write_path {
            WritePath::Primary => NodeId::fixed(0),
            WritePath::Storage => NodeId::fixed(self.nodes),
        };
        EventualNode::Client(Client { node: start.colocated[0], writes_to, ops: start.ops, next: 0, invoked: start.now })
    }

    fn finish_function(&self, _node: EventualNode) {}

    fn join_contexts(&self, _contexts: Vec<()>) {}
}

impl Model for Eventual {
    const ENTRY: Entry = Entry {
        name: "eventual",
        about: "an eventually consistent cache cluster like DynamoDB Accelerator (the baseline of CausalMesh Fig. 1)",
        // It promises nothing but real, committed values: a session that moves off the primary
        // can miss its own write, which is what Fig. 1 counts.
        level: Level::WellFormed,
        mutants: &[],
        profile: Profile { database: true, ..Profile::PLAIN },
        faults: FaultModel::STATE_KEPT,
        series: &[SeriesStyle { label: "Eventual", colour: (120, 120, 120) }],
    };

    fn build(params: &serde_json::Value, _mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError> {
        let params: EventualParams = parse_params(params)?;
        params.replication_lag.validate().map_err(|e| e.within("params.replication_lag"))?;
        Ok(Eventual { nodes: topology.servers as usize, params })
    }

    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        (100_000u64..20_000_000, any::<bool>())
            .prop_map(|(m, storage)| {
                let mut p = serde_json::json!({"replication_lag": {"dist": "exponential", "mean_ns": m}});
                if storage {
                    p["write_path"] = serde_json::json!("storage");
                }
                p
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use causim_sim::Effect;

    /// Cloudburst's write path: the storage orders and acknowledges the write itself, then
    /// replicates it to every cache; no cache is on the way.
    #[test]
    fn a_write_to_storage_is_acknowledged_there_and_pushed_to_every_cache() {
        let params: EventualParams = parse_params(&serde_json::json!({"write_path": "storage"})).unwrap();
        let ec = Eventual { nodes: 3, params };
        let mut nodes = ec.fixed_nodes();
        let mut out = Outbox::default();
        let client = NodeId(1 << 63);
        nodes[3].node.on_message(0, client, Msg::Write { key: 7, value: 70 }, &mut out);
        let acks: Vec<_> =
            out.effects.iter().filter_map(|e| if let Effect::Send { to, msg, .. } = e { Some((*to, msg.clone())) } else { None }).collect();
        assert_eq!(acks, vec![(client, Msg::WriteAck { key: 7, version: 1 })]);
        let timers: Vec<Replication> = out
            .effects
            .iter()
            .filter_map(|e| if let Effect::SetTimerSampled { timer, .. } = e { Some(timer.clone()) } else { None })
            .collect();
        assert_eq!(timers.len(), 1, "one push per write");
        out.clear();
        nodes[3].node.on_timer(1, timers[0].clone(), &mut out);
        let pushed: Vec<NodeId> =
            out.effects.iter().filter_map(|e| if let Effect::Send { to, .. } = e { Some(*to) } else { None }).collect();
        assert_eq!(pushed, (0..3).map(NodeId::fixed).collect::<Vec<_>>());
    }
}
