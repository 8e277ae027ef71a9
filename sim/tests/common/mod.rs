//! A probe protocol for engine tests: servers that log what reaches them and echo requests,
//! and clients that send each operation to their co-located server.

#![allow(dead_code)]

use causim_sim::config::SimConfig;
use causim_sim::history::{HistoryWriter, OpRecord, Outcome, TxnKind, TxnRecord};
use causim_sim::metrics::Summary;
use causim_sim::node::{Message, Node, NodeId, Outbox};
use causim_sim::protocol::{FixedNode, FunctionStart, Protocol};
use causim_sim::time::Time;
use causim_sim::trace::TraceWriter;
use causim_sim::workload::Op;
use causim_sim::{RunOutputs, Sim};

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    /// A numbered probe between servers.
    Seq(u64),
    Request(u64),
    Reply(u64),
}

impl Message for Msg {
    fn kind(&self) -> &'static str {
        match self {
            Msg::Seq(_) => "Seq",
            Msg::Request(_) => "Request",
            Msg::Reply(_) => "Reply",
        }
    }
    fn size_bytes(&self) -> u64 {
        9
    }
}

/// What a server sends on start or on a timer: (target, first seq, count) at a given time.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Burst {
    pub at_ns: Time,
    pub to: usize,
    pub first: u64,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Server {
    pub bursts: Vec<Burst>,
    /// (from, seq, time) of every Seq received.
    pub received: Vec<(NodeId, u64, Time)>,
    /// Volatile: lost on a crash.
    pub volatile_count: u64,
    /// Durable: kept across a crash.
    pub durable_count: u64,
    pub restarts: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    server: NodeId,
    ops: Vec<Op>,
    next: usize,
    invoked: Time,
    /// The workflow context: each function adds one; a join sums its inputs.
    context: u32,
    attempt: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ProbeNode {
    Server(Server),
    Client(Client),
}

impl ProbeNode {
    pub fn server(&self) -> &Server {
        match self {
            ProbeNode::Server(s) => s,
            ProbeNode::Client(_) => panic!("not a server"),
        }
    }
}

impl Client {
    fn next_op(&mut self, now: Time, out: &mut Outbox<Msg, usize>) {
        match self.ops.get(self.next) {
            None => out.function_done(),
            Some(Op::ReadTxn { .. }) if self.attempt == 1 => out.abort_workflow("probe: first attempts abort read transactions"),
            Some(op) => {
                self.invoked = now;
                let key = match op {
                    Op::Read { key } | Op::Write { key, .. } => *key,
                    Op::ReadTxn { keys } => keys[0],
                    Op::Log(l) => l.book(),
                };
                out.send(self.server, Msg::Request(key));
            }
        }
    }
}

impl Node for ProbeNode {
    type Msg = Msg;
    type Timer = usize; // index of the burst to send

    fn on_start(&mut self, now: Time, out: &mut Outbox<Msg, usize>) {
        match self {
            ProbeNode::Server(s) => {
                for (i, b) in s.bursts.iter().enumerate() {
                    out.set_timer(i, b.at_ns - now);
                }
            }
            ProbeNode::Client(c) => c.next_op(now, out),
        }
    }

    fn on_message(&mut self, now: Time, from: NodeId, msg: Msg, out: &mut Outbox<Msg, usize>) {
        match (self, msg) {
            (ProbeNode::Server(s), Msg::Seq(seq)) => {
                s.received.push((from, seq, now));
                s.volatile_count += 1;
                s.durable_count += 1;
                out.trace("Receive", || format!("{{\"seq\":{seq}}}"));
            }
            (ProbeNode::Server(_), Msg::Request(k)) => out.send(from, Msg::Reply(k)),
            (ProbeNode::Client(c), Msg::Reply(k)) => {
                let op = match &c.ops[c.next] {
                    Op::Write { key, value } => OpRecord::write(*key, *value),
                    _ => OpRecord::read(k, None),
                };
                out.record(TxnRecord {
                    kind: if matches!(c.ops[c.next], Op::Write { .. }) { TxnKind::Write } else { TxnKind::Read },
                    node: Some(c.server),
                    invoke_ns: c.invoked,
                    complete_ns: now,
                    outcome: Outcome::Ok,
                    ops: [op.with_version([c.context as u64])].into(),
                    note: None,
                    call: None,
                });
                c.next += 1;
                c.next_op(now, out);
            }
            (node, msg) => panic!("unexpected {msg:?} at {node:?}"),
        }
    }

    fn on_timer(&mut self, _now: Time, timer: usize, out: &mut Outbox<Msg, usize>) {
        let ProbeNode::Server(s) = self else { return };
        let b = s.bursts[timer].clone();
        for seq in b.first..b.first + b.count {
            out.send(NodeId::fixed(b.to), Msg::Seq(seq));
        }
    }

    fn on_restart(&mut self, _now: Time, _out: &mut Outbox<Msg, usize>) {
        if let ProbeNode::Server(s) = self {
            s.volatile_count = 0;
            s.restarts += 1;
        }
    }
}

#[derive(Clone, Debug)]
pub struct Probe {
    pub servers: usize,
    pub bursts: Vec<Vec<Burst>>,
}

impl Probe {
    pub fn new(servers: usize) -> Probe {
        Probe { servers, bursts: vec![Vec::new(); servers] }
    }
}

impl Protocol for Probe {
    type Node = ProbeNode;
    type Context = u32;

    fn fixed_nodes(&self) -> Vec<FixedNode<ProbeNode>> {
        (0..self.servers)
            .map(|i| FixedNode {
                name: format!("S{i}"),
                machine: format!("S{i}"),
                hosts_workers: true,
                node: ProbeNode::Server(Server {
                    bursts: self.bursts[i].clone(),
                    received: Vec::new(),
                    volatile_count: 0,
                    durable_count: 0,
                    restarts: 0,
                }),
            })
            .collect()
    }

    fn new_context(&self) -> u32 {
        0
    }

    fn spawn_function(&self, start: FunctionStart<'_, u32>) -> ProbeNode {
        ProbeNode::Client(Client {
            server: start.colocated[0],
            ops: start.ops,
            next: 0,
            invoked: start.now,
            context: start.context,
            attempt: start.attempt,
        })
    }

    fn finish_function(&self, node: ProbeNode) -> u32 {
        match node {
            ProbeNode::Client(c) => c.context + 1,
            ProbeNode::Server(_) => unreachable!(),
        }
    }

    fn join_contexts(&self, contexts: Vec<u32>) -> u32 {
        contexts.into_iter().sum()
    }
}

pub use causim_sim::buffer::SharedBuffer as SharedBuf;

/// Parses a `SimConfig` from JSON text.
pub fn config(json: &str) -> SimConfig {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("bad test config: {e}\n{json}"))
}

pub struct Finished {
    pub summary: Summary,
    pub servers: Vec<Server>,
    pub history: String,
    pub trace: String,
}

/// Runs `protocol` under `config` with history and trace captured.
pub fn run(protocol: Probe, config: SimConfig) -> Finished {
    let history = SharedBuf::default();
    let trace = SharedBuf::default();
    let outputs = RunOutputs {
        scenario: "test".into(),
        protocol: "probe".into(),
        history: HistoryWriter::new(Box::new(history.clone())),
        trace: Some(TraceWriter::new(Box::new(trace.clone()))),
        check_invariants: true,
    };
    let mut sim = Sim::new(protocol, config, outputs).expect("valid test setup");
    let summary = sim.run();
    let servers = sim.fixed_nodes().into_iter().map(|n| n.server().clone()).collect();
    Finished { summary, servers, history: history.text(), trace: trace.text() }
}

/// A config with `servers` machines, the given delay JSON, no workload, and a settle time so
/// server-to-server traffic runs to completion.
pub fn network_config(servers: u32, delay: &str, extra_topology: &str, faults: &str) -> SimConfig {
    config(&format!(
        r#"{{"seed": 3,
            "topology": {{"servers": {servers}, "delay": {delay} {extra_topology}}},
            "workload": {{"script": []}},
            "faults": {faults},
            "limits": {{"settle_ns": 60000000000}}}}"#
    ))
}
