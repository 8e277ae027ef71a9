//! The discrete-event engine: hosts a protocol's sans-IO nodes on simulated machines.
//!
//! One closed event enum drives everything, ordered by `(time, sequence)`:
//! `Deliver` (a message reaches a node), `Timer`, `CoreFree` (a busy node can take its next
//! input), workload events (`ScriptStart`, `ClientStart`, `Arrival`, `Dispatch`, `Retry`) and
//! fault events (`Crash`, `Restart`, `PartitionStart`, `PartitionHeal`). The verbs match
//! Stateright's actions and the TLA+ specs' so a trace line, a Stateright step and a TLC state
//! read alike.
//!
//! Determinism: one seed, independent streams per concern (`rng`), integer time, ties broken by
//! insertion order, ordered collections wherever order can leak into the output. The engine
//! never reads the wall clock (the caller measures wall time around `run`).
//!
//! A run stops when the workload is complete (every workflow finished and no more will arrive)
//! plus `limits.settle_ns`, when no events remain, or at a limit (`time_ns_max`, `events_max`).
//! The first invariant violation (when invariant checking is on) is recorded, and the run goes
//! on so that the history shows its consequences.

mod cpu;
mod flows;
mod net;
mod replay;
mod table;

use crate::config::{PartitionMode, SimConfig};
use crate::dist::DurationDist;
use crate::history::{HistoryWriter, Key, Names, OpKind, OpRecord, Outcome, SessionRef, TxnKind, TxnRecord, Value, json_string};
use crate::metrics::{Histogram, MessageCount, NodeSummary, Summary, WorkflowCounts};
use crate::node::{Effect, Message, Node, NodeId, Outbox};
use crate::protocol::{FunctionStart, Protocol};
use crate::queue::EventQueue;
use crate::rng::{RngStream, StreamId};
use crate::time::Time;
use crate::trace::TraceWriter;
use crate::workload::{Arrival, Generator, Op, ValueAllocator, WorkflowPlan, WorkloadConfig, compile_script};
use cpu::{Cpu, Input};
use flows::{Machine, Placer, WorkflowRun};
use net::{Held, LinkCells, Network, Partition, fifo_delivery};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use table::IdTable;

const TXN_KINDS: [TxnKind; 4] = [TxnKind::Read, TxnKind::Write, TxnKind::ReadTxn, TxnKind::WorkflowTxn];
const OUTCOMES: [Outcome; 3] = [Outcome::Ok, Outcome::Aborted, Outcome::Failed];

type MsgOf<P> = <<P as Protocol>::Node as Node>::Msg;
type TimerOf<P> = <<P as Protocol>::Node as Node>::Timer;

/// A configuration error found while building a run: a JSON path into the scenario and what
/// is wrong there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupError {
    pub path: String,
    pub message: String,
}

impl SetupError {
    fn new(path: impl Into<String>, message: impl Into<String>) -> SetupError {
        SetupError { path: path.into(), message: message.into() }
    }
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Where a run writes, and what it checks as it goes.
pub struct RunOutputs {
    /// Names the scenario in the summary.
    pub scenario: String,
    pub history: HistoryWriter,
    pub trace: Option<TraceWriter>,
    /// Call every node's `check_invariants` after each of its inputs.
    pub check_invariants: bool,
}

impl RunOutputs {
    /// No files: the history is only hashed, no trace, no invariant checks.
    pub fn hashing_only(scenario: &str) -> RunOutputs {
        RunOutputs { scenario: scenario.to_string(), history: HistoryWriter::hashing_only(), trace: None, check_invariants: false }
    }
}

enum Event<M, T> {
    Deliver {
        from: NodeId,
        to: NodeId,
        msg: M,
    },
    Timer {
        node: NodeId,
        timer: T,
        generation: u64,
    },
    CoreFree {
        node: usize,
    },
    ScriptStart {
        plan: usize,
    },
    ClientStart {
        client: u32,
    },
    Arrival,
    Dispatch {
        workflow: u64,
        attempt: u32,
        function: u32,
    },
    Retry {
        workflow: u64,
    },
    Crash {
        node: usize,
    },
    Restart {
        node: usize,
    },
    PartitionStart {
        index: usize,
    },
    PartitionHeal {
        index: usize,
    },
    SettleEnd,
    /// The next step of a replay schedule (`replay.rs`).
    ReplayStep,
}

struct FixedSlot<N: Node> {
    node: N,
    name: String,
    machine: usize,
    cpu: Cpu<N::Msg, N::Timer>,
    service_override: Option<DurationDist>,
    crashed: bool,
    timers: Vec<(N::Timer, u64)>,
}

struct FunctionSlot<N: Node> {
    node: Option<N>,
    generation: u32,
    workflow: u64,
    attempt: u32,
    function: u32,
    machine: usize,
    timers: Vec<(N::Timer, u64)>,
    link_out: LinkCells,
    link_in: LinkCells,
    /// When the instance started.
    spawned_ns: Time,
    /// Its writes that no record of its own has reported yet (in program order). If the
    /// instance is killed (a workflow abort), these may be in flight: see `kill_function`.
    unrecorded_writes: Vec<(Key, Value)>,
}

enum Workload {
    Script { plans: Vec<WorkflowPlan>, started: usize },
    Generator { generator: Box<Generator>, started: u64, clients_active: u32, open_done: bool },
}

/// Counters indexed by small enums or interned names, so the per-event path never allocates or
/// compares strings more than it must.
#[derive(Default)]
struct RunMetrics {
    workflows: WorkflowCounts,
    workflow_latency: Histogram,
    /// Indexed by `TxnKind as usize`.
    op_latency: [Histogram; 4],
    /// Indexed by `[TxnKind as usize][Outcome as usize]`.
    transactions: [[u64; 3]; 4],
    /// By message kind, in order of first use (few kinds: a scan beats a map).
    messages: Vec<(&'static str, MessageCount)>,
    messages_dropped: u64,
    observations: BTreeMap<&'static str, Histogram>,
    counters: BTreeMap<&'static str, u64>,
    completed_measured: u64,
    last_completion_ns: Time,
}

/// A simulation of one protocol under one scenario and seed.
pub struct Sim<P: Protocol> {
    protocol: P,
    config: SimConfig,
    now: Time,
    events: u64,
    queue: EventQueue<Event<MsgOf<P>, TimerOf<P>>>,
    fixed: Vec<FixedSlot<P::Node>>,
    functions: Vec<FunctionSlot<P::Node>>,
    free_function_slots: Vec<u32>,
    machines: Vec<Machine>,
    placer: Placer,
    network: Network<MsgOf<P>>,
    service_by_kind: BTreeMap<String, DurationDist>,
    rng_network: RngStream,
    rng_scheduler: RngStream,
    rng_workload: RngStream,
    rng_faults: RngStream,
    rng_service: RngStream,
    rng_protocol: RngStream,
    workload: Workload,
    workflows: IdTable<WorkflowRun<P::Context>>,
    next_workflow_id: u64,
    values: ValueAllocator,
    timer_generation: u64,
    names: Names,
    history: HistoryWriter,
    trace: Option<TraceWriter>,
    next_record_id: u64,
    check_invariants: bool,
    invariant_violation: Option<String>,
    scenario: String,
    metrics: RunMetrics,
    /// Emptied outboxes, kept for their capacity. Handlers nest (a function's `FunctionDone`
    /// starts the next function), so there is one per nesting level in use.
    spare_outboxes: Vec<Outbox<MsgOf<P>, TimerOf<P>>>,
    settling: bool,
    stopped_by: Option<String>,
    io_error: Option<String>,
    replay: Option<replay::Replay<MsgOf<P>>>,
}

impl<P: Protocol> Sim<P> {
    /// Builds a run. Every name the configuration uses (machines, nodes) is resolved here, so a
    /// run never fails on configuration once started.
    pub fn new(protocol: P, config: SimConfig, outputs: RunOutputs) -> Result<Sim<P>, SetupError> {
        config.validate().map_err(|(p, m)| SetupError::new(p, m))?;
        let fixed_nodes = protocol.fixed_nodes();
        let t = &config.topology;

        let mut machines: Vec<Machine> = Vec::new();
        let mut fixed = Vec::with_capacity(fixed_nodes.len());
        let mut names_seen = BTreeMap::new();
        for (i, f) in fixed_nodes.into_iter().enumerate() {
            assert!(names_seen.insert(f.name.clone(), i).is_none(), "protocol lists node {} twice", f.name);
            let machine = match machines.iter().position(|m| m.name == f.machine) {
                Some(m) => m,
                None => {
                    machines.push(Machine {
                        name: f.machine.clone(),
                        is_worker: false,
                        colocated: Vec::new(),
                        running: 0,
                        waiting: Default::default(),
                    });
                    machines.len() - 1
                }
            };
            machines[machine].is_worker |= f.hosts_workers;
            machines[machine].colocated.push(NodeId::fixed(i));
            let over = t.nodes.get(&f.name);
            let cores = over.and_then(|o| o.cores).unwrap_or(t.cores_per_node);
            fixed.push(FixedSlot {
                node: f.node,
                name: f.name,
                machine,
                cpu: Cpu::new(cores, t.service.clone()),
                service_override: over.and_then(|o| o.service.clone()),
                crashed: false,
                timers: Vec::new(),
            });
        }
        for name in t.nodes.keys() {
            if !names_seen.contains_key(name) {
                return Err(SetupError::new(
                    format!("topology.nodes.{name}"),
                    format!("no node named {name:?}; nodes are {}", list(fixed.iter().map(|f| &f.name))),
                ));
            }
        }
        let machine_index = |name: &str, path: String| -> Result<usize, SetupError> {
            machines.iter().position(|m| m.name == name).ok_or_else(|| {
                SetupError::new(path, format!("no machine named {name:?}; machines are {}", list(machines.iter().map(|m| &m.name))))
            })
        };

        let mut network = Network::new(machines.len(), fixed.len(), t.delay.clone(), t.local_delay.clone(), config.faults.loss_probability);
        // Later overrides win; `*` stands for every machine (pairs of different machines only).
        let all: Vec<usize> = (0..machines.len()).collect();
        for (i, l) in t.links.iter().enumerate() {
            let ends = |name: &String, field: &str| -> Result<Vec<usize>, SetupError> {
                if name == "*" { Ok(all.clone()) } else { Ok(vec![machine_index(name, format!("topology.links[{i}].{field}"))?]) }
            };
            let (froms, tos) = (ends(&l.from, "from")?, ends(&l.to, "to")?);
            for &a in &froms {
                for &b in &tos {
                    if a != b || (froms.len() == 1 && tos.len() == 1) {
                        network.set_override(a, b, l.delay.clone());
                        if l.both_ways {
                            network.set_override(b, a, l.delay.clone());
                        }
                    }
                }
            }
        }
        for (i, p) in config.faults.partitions.iter().enumerate() {
            let mut group_of = vec![None; machines.len()];
            for (g, group) in p.groups.iter().enumerate() {
                for (k, name) in group.iter().enumerate() {
                    let m = machine_index(name, format!("faults.partitions[{i}].groups[{g}][{k}]"))?;
                    if group_of[m].is_some() {
                        return Err(SetupError::new(
                            format!("faults.partitions[{i}].groups[{g}][{k}]"),
                            format!("machine {name:?} is in two groups"),
                        ));
                    }
                    group_of[m] = Some(g as u32);
                }
            }
            network.partitions.push(Partition {
                group_of,
                start_ns: p.start_ns,
                heal_ns: p.heal_ns,
                mode: p.mode,
                active: false,
                held: Vec::new(),
            });
        }
        for (i, c) in config.faults.crashes.iter().enumerate() {
            if !names_seen.contains_key(&c.node) {
                return Err(SetupError::new(
                    format!("faults.crashes[{i}].node"),
                    format!("no node named {:?}; nodes are {}", c.node, list(fixed.iter().map(|f| &f.name))),
                ));
            }
        }

        let workers: Vec<usize> = (0..machines.len()).filter(|&m| machines[m].is_worker).collect();
        if workers.is_empty() {
            return Err(SetupError::new("protocol", format!("protocol {} offers no worker machines", protocol.name())));
        }
        let (workload, key_names) = match &config.workload {
            WorkloadConfig::Script(sessions) => {
                let script = compile_script(sessions).map_err(|(p, m)| SetupError::new(format!("workload.script{p}"), m))?;
                for (s, session) in sessions.iter().enumerate() {
                    for (f, func) in session.functions.iter().enumerate() {
                        if let Some(on) = &func.on {
                            let path = format!("workload.script[{s}].functions[{f}].on");
                            let m = machine_index(on, path.clone())?;
                            if !machines[m].is_worker {
                                return Err(SetupError::new(path, format!("machine {on:?} runs no workers")));
                            }
                        }
                    }
                }
                (Workload::Script { plans: script.plans, started: 0 }, script.key_names)
            }
            WorkloadConfig::Generator(g) => {
                let generator = Generator::new(g.clone()).map_err(|(p, m)| SetupError::new(format!("workload.generator.{p}"), m))?;
                let clients = match g.arrival {
                    Arrival::Closed { clients, .. } => clients,
                    _ => 0,
                };
                (Workload::Generator { generator: Box::new(generator), started: 0, clients_active: clients, open_done: false }, Vec::new())
            }
        };

        let node_names: Vec<String> = fixed.iter().map(|f| f.name.clone()).collect();
        let replay = match &config.replay {
            Some(r) => {
                let sessions: Option<Vec<(String, usize)>> = match &config.workload {
                    WorkloadConfig::Script(s) => Some(s.iter().map(|x| (x.session.clone(), x.functions.len())).collect()),
                    WorkloadConfig::Generator(_) => None,
                };
                replay::check_names(r, &node_names, sessions.as_deref()).map_err(|(p, m)| SetupError::new(p, m))?;
                Some(replay::Replay::new(r))
            }
            None => None,
        };
        let seed = config.seed;
        let placer = Placer::new(config.scheduler.policy, config.scheduler.migrate_probability, workers);
        Ok(Sim {
            protocol,
            service_by_kind: config.topology.service_by_kind.clone(),
            config,
            now: 0,
            events: 0,
            queue: EventQueue::default(),
            fixed,
            functions: Vec::new(),
            free_function_slots: Vec::new(),
            machines,
            placer,
            network,
            rng_network: RngStream::new(seed, StreamId::Network),
            rng_scheduler: RngStream::new(seed, StreamId::Scheduler),
            rng_workload: RngStream::new(seed, StreamId::Workload),
            rng_faults: RngStream::new(seed, StreamId::Faults),
            rng_service: RngStream::new(seed, StreamId::Service),
            rng_protocol: RngStream::new(seed, StreamId::Protocol),
            workload,
            workflows: IdTable::default(),
            next_workflow_id: 0,
            values: ValueAllocator::default(),
            timer_generation: 0,
            names: Names::new(&node_names, &key_names),
            history: outputs.history,
            trace: outputs.trace,
            next_record_id: 0,
            check_invariants: outputs.check_invariants,
            invariant_violation: None,
            scenario: outputs.scenario,
            metrics: RunMetrics::default(),
            spare_outboxes: Vec::new(),
            settling: false,
            stopped_by: None,
            io_error: None,
            replay,
        })
    }

    /// Names of nodes and keys, for rendering histories and traces.
    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The fixed nodes' current states, in `NodeId` order.
    pub fn fixed_nodes(&self) -> Vec<&P::Node> {
        self.fixed.iter().map(|f| &f.node).collect()
    }

    pub fn protocol(&self) -> &P {
        &self.protocol
    }

    pub fn now(&self) -> Time {
        self.now
    }

    /// Runs to the end and returns the summary. Call once.
    pub fn run(&mut self) -> Summary {
        self.start();
        let limits = self.config.limits.clone();
        while self.stopped_by.is_none() {
            if self.events >= limits.events_max {
                self.stop("limit: events_max");
                break;
            }
            let Some((time, event)) = self.queue.pop() else {
                self.stop("no events left");
                break;
            };
            if time > limits.time_ns_max {
                self.now = limits.time_ns_max;
                self.stop("limit: time_ns_max");
                break;
            }
            debug_assert!(time >= self.now);
            self.now = time;
            self.events += 1;
            self.handle(event);
            // An invariant violation is recorded (the first one) and the run goes on, so the
            // history shows what clients observe because of it.
            if !self.settling && self.workload_complete() {
                if limits.settle_ns == 0 {
                    self.stop("workload complete");
                } else {
                    self.settling = true;
                    self.queue.push(self.now + limits.settle_ns, Event::SettleEnd);
                }
            }
        }
        self.finish()
    }

    fn stop(&mut self, reason: &str) {
        if self.stopped_by.is_none() {
            self.stopped_by = Some(reason.to_string());
        }
    }

    fn workload_complete(&self) -> bool {
        if !self.workflows.is_empty() || self.replay.as_ref().is_some_and(|r| r.active()) {
            return false;
        }
        match &self.workload {
            Workload::Script { plans, started } => *started == plans.len(),
            Workload::Generator { generator, clients_active, open_done, .. } => match generator.config.arrival {
                Arrival::Closed { .. } => *clients_active == 0,
                _ => *open_done,
            },
        }
    }

    // -----------------------------------------------------------------------------------------
    // Start-up

    fn start(&mut self) {
        for i in 0..self.fixed.len() {
            if self.trace.is_some() {
                let fields = format!("\"node\":{}", json_string(&self.fixed[i].name));
                self.trace_event("start", &fields);
            }
            let mut out = self.take_outbox();
            self.fixed[i].node.on_start(0, &mut out);
            self.after_handler(NodeId::fixed(i), out, 0);
        }
        for (i, c) in self.config.faults.crashes.clone().iter().enumerate() {
            let node = self.fixed.iter().position(|f| f.name == c.node).expect("resolved in new");
            let _ = i;
            self.queue.push(c.at_ns, Event::Crash { node });
            if let Some(r) = c.restart_ns {
                self.queue.push(r, Event::Restart { node });
            }
        }
        for index in 0..self.network.partitions.len() {
            let p = &self.network.partitions[index];
            let (start, heal) = (p.start_ns, p.heal_ns);
            self.queue.push(start, Event::PartitionStart { index });
            if let Some(h) = heal {
                self.queue.push(h, Event::PartitionHeal { index });
            }
        }
        if let Some(r) = &self.replay {
            self.queue.push(r.step_ns, Event::ReplayStep);
        }
        match &self.workload {
            Workload::Script { plans, .. } => {
                let starts: Vec<Time> = plans.iter().map(|p| p.dag.sources().map(|f| p.not_before_ns(f)).min().unwrap_or(0)).collect();
                for (plan, at) in starts.into_iter().enumerate() {
                    self.queue.push(at, Event::ScriptStart { plan });
                }
            }
            Workload::Generator { generator, .. } => match generator.config.arrival {
                Arrival::Closed { clients, .. } => {
                    for client in 0..clients {
                        self.queue.push(0, Event::ClientStart { client });
                    }
                }
                _ => {
                    let gap = generator.interarrival_ns(&mut self.rng_workload);
                    self.queue.push(gap, Event::Arrival);
                }
            },
        }
    }

    // -----------------------------------------------------------------------------------------
    // Event dispatch: the one place with control flow over event kinds.

    fn handle(&mut self, event: Event<MsgOf<P>, TimerOf<P>>) {
        match event {
            Event::Deliver { from, to, msg } => self.on_deliver(from, to, msg),
            Event::Timer { node, timer, generation } => self.on_timer(node, timer, generation),
            Event::CoreFree { node } => self.on_core_free(node),
            Event::ScriptStart { plan } => self.on_script_start(plan),
            Event::ClientStart { client } => self.on_client_start(client),
            Event::Arrival => self.on_arrival(),
            Event::Dispatch { workflow, attempt, function } => self.on_dispatch(workflow, attempt, function),
            Event::Retry { workflow } => self.launch_attempt(workflow),
            Event::Crash { node } => self.on_crash(node),
            Event::Restart { node } => self.on_restart(node),
            Event::PartitionStart { index } => self.on_partition_start(index),
            Event::PartitionHeal { index } => self.on_partition_heal(index),
            Event::SettleEnd => self.stop("settled"),
            Event::ReplayStep => self.on_replay_step(),
        }
    }

    // -----------------------------------------------------------------------------------------
    // Messages and timers

    fn machine_of(&self, id: NodeId) -> Option<usize> {
        if id.is_function() { self.live_function(id).map(|s| self.functions[s].machine) } else { Some(self.fixed[id.index()].machine) }
    }

    /// The slot of a live function instance, if `id` still names one.
    fn live_function(&self, id: NodeId) -> Option<usize> {
        let slot = id.slot();
        let f = self.functions.get(slot)?;
        (f.generation == id.generation() && f.node.is_some()).then_some(slot)
    }

    /// Sends `msg` leaving `from` at `send_ns` (≥ now: a busy node's effects leave when its
    /// service time ends).
    fn send(&mut self, from: NodeId, to: NodeId, msg: MsgOf<P>, send_ns: Time) {
        let kind = msg.kind();
        let messages = &mut self.metrics.messages;
        let i = match messages.iter().position(|(k, _)| std::ptr::eq(*k, kind) || *k == kind) {
            Some(i) => i,
            None => {
                messages.push((kind, MessageCount::default()));
                messages.len() - 1
            }
        };
        let counter = &mut messages[i].1;
        counter.count += 1;
        counter.bytes += msg.size_bytes();
        self.transmit(from, to, msg, send_ns);
    }

    fn transmit(&mut self, from: NodeId, to: NodeId, msg: MsgOf<P>, send_ns: Time) {
        let (Some(a), Some(b)) = (self.machine_of(from), self.machine_of(to)) else {
            self.drop_message(from, to, &msg, "retired");
            return;
        };
        if self.replay.as_ref().is_some_and(|r| r.active()) {
            self.hold_for_replay(from, to, msg);
            return;
        }
        if a != b && self.network.loss_probability > 0.0 && self.rng_faults.chance(self.network.loss_probability) {
            self.drop_message(from, to, &msg, "loss");
            return;
        }
        if let Some(p) = self.network.blocking_partition(a, b) {
            match self.network.partitions[p].mode {
                PartitionMode::Drop => self.drop_message(from, to, &msg, "partition"),
                PartitionMode::Hold => {
                    if self.trace.is_some() {
                        let fields = self.link_fields(from, to, msg.kind());
                        self.trace_event("hold", &fields);
                    }
                    self.network.partitions[p].held.push(Held { from, to, msg });
                }
            }
            return;
        }
        let mut delay = self.network.sample_delay(&mut self.rng_network, a, b);
        if a != b
            && let Some(bw) = self.config.topology.bandwidth_bytes_per_s
        {
            // Transmission time: the message's bytes over the link's bandwidth.
            delay += (msg.size_bytes() as u128 * 1_000_000_000 / bw as u128) as Time;
        }
        let at = match (from.is_function(), to.is_function()) {
            (false, false) => fifo_delivery(send_ns, delay, self.network.fixed_link(from, to)),
            (true, _) => {
                let slot = self.live_function(from).expect("machine_of checked it");
                fifo_delivery(send_ns, delay, self.functions[slot].link_out.cell(to))
            }
            (false, true) => {
                let slot = self.live_function(to).expect("machine_of checked it");
                fifo_delivery(send_ns, delay, self.functions[slot].link_in.cell(from))
            }
        };
        if self.trace.is_some() {
            let mut fields = self.link_fields(from, to, msg.kind());
            let _ = write!(fields, ",\"deliver_at\":{at}");
            self.trace_event("send", &fields);
        }
        self.queue.push(at, Event::Deliver { from, to, msg });
    }

    /// Replay: the message waits on its link for the schedule's step.
    fn hold_for_replay(&mut self, from: NodeId, to: NodeId, msg: MsgOf<P>) {
        if self.trace.is_some() {
            let fields = self.link_fields(from, to, msg.kind());
            self.trace_event("wait", &fields);
        }
        let link = (self.display_name(from), self.display_name(to));
        let r = self.replay.as_mut().expect("replaying");
        r.hold(replay::Waiting { from, to, link, msg });
    }

    /// Replay: deliver the message the schedule's next step names.
    fn on_replay_step(&mut self) {
        let r = self.replay.as_mut().expect("replaying");
        match r.take_next() {
            Ok(w) => self.on_deliver(w.from, w.to, w.msg),
            Err(why) => {
                if self.trace.is_some() {
                    self.trace_event("replay", &format!("\"diverged\":{}", json_string(&why)));
                }
                self.stop(&format!("replay diverged: {why}"));
                return;
            }
        }
        let r = self.replay.as_mut().expect("replaying");
        if r.active() {
            let at = self.now + r.step_ns;
            self.queue.push(at, Event::ReplayStep);
        } else {
            for w in r.release_all() {
                if self.trace.is_some() {
                    let fields = self.link_fields(w.from, w.to, w.msg.kind());
                    self.trace_event("release", &fields);
                }
                self.transmit(w.from, w.to, w.msg, self.now);
            }
        }
    }

    fn drop_message(&mut self, from: NodeId, to: NodeId, msg: &MsgOf<P>, reason: &str) {
        self.metrics.messages_dropped += 1;
        if self.trace.is_some() {
            let mut fields = self.link_fields(from, to, msg.kind());
            let _ = write!(fields, ",\"reason\":\"{reason}\"");
            self.trace_event("drop", &fields);
        }
    }

    fn on_deliver(&mut self, from: NodeId, to: NodeId, msg: MsgOf<P>) {
        if to.is_function() {
            let Some(slot) = self.live_function(to) else {
                self.drop_message(from, to, &msg, "retired");
                return;
            };
            self.trace_delivery(from, to, &msg);
            let mut out = self.take_outbox();
            let now = self.now;
            self.functions[slot].node.as_mut().expect("live").on_message(now, from, msg, &mut out);
            self.after_handler(to, out, now);
            return;
        }
        let node = to.index();
        if self.fixed[node].crashed {
            self.drop_message(from, to, &msg, "crashed");
            return;
        }
        self.trace_delivery(from, to, &msg);
        self.fixed_input(node, Input::Message { from, msg });
    }

    fn trace_delivery(&mut self, from: NodeId, to: NodeId, msg: &MsgOf<P>) {
        if self.trace.is_some() {
            let mut fields = self.link_fields(from, to, msg.kind());
            let _ = write!(fields, ",\"detail\":{}", json_string(&format!("{msg:?}")));
            self.trace_event("deliver", &fields);
        }
    }

    fn on_timer(&mut self, node: NodeId, timer: TimerOf<P>, generation: u64) {
        let timers = if node.is_function() {
            match self.live_function(node) {
                Some(slot) => &mut self.functions[slot].timers,
                None => return,
            }
        } else {
            &mut self.fixed[node.index()].timers
        };
        // A timer fires only if it is still set with this generation (not cancelled or reset).
        let Some(pos) = timers.iter().position(|(t, g)| *g == generation && *t == timer) else {
            return;
        };
        timers.swap_remove(pos);
        if self.trace.is_some() {
            let fields = format!("\"node\":{},\"timer\":{}", self.display_json(node), json_string(&format!("{timer:?}")));
            self.trace_event("timer", &fields);
        }
        if node.is_function() {
            let slot = node.slot();
            let mut out = self.take_outbox();
            let now = self.now;
            self.functions[slot].node.as_mut().expect("live").on_timer(now, timer, &mut out);
            self.after_handler(node, out, now);
        } else {
            self.fixed_input(node.index(), Input::Timer(timer));
        }
    }

    /// An input for a fixed node: run it on a free core, or queue it.
    fn fixed_input(&mut self, node: usize, input: Input<MsgOf<P>, TimerOf<P>>) {
        let now = self.now;
        let cpu = &mut self.fixed[node].cpu;
        match cpu.free_core(now) {
            Some(core) => self.run_input(node, core, input),
            None => {
                cpu.enqueue(input);
                self.schedule_wakeup(node);
            }
        }
    }

    fn schedule_wakeup(&mut self, node: usize) {
        let cpu = &mut self.fixed[node].cpu;
        if !cpu.wakeup_pending && !cpu.queue.is_empty() {
            cpu.wakeup_pending = true;
            let at = cpu.next_free().max(self.now);
            self.queue.push(at, Event::CoreFree { node });
        }
    }

    fn on_core_free(&mut self, node: usize) {
        self.fixed[node].cpu.wakeup_pending = false;
        while let Some(core) = self.fixed[node].cpu.core_free_at(self.now) {
            let Some(input) = self.fixed[node].cpu.queue.pop_front() else { break };
            self.run_input(node, core, input);
            if self.fixed[node].crashed {
                return;
            }
        }
        self.schedule_wakeup(node);
    }

    fn service_ns(&mut self, node: usize, kind: &str) -> Time {
        let slot = &self.fixed[node];
        let dist = match &slot.service_override {
            Some(d) => d,
            None => self.service_by_kind.get(kind).unwrap_or(&slot.cpu.service),
        };
        if let DurationDist::Constant { ns } = dist { *ns } else { dist.sample(&mut self.rng_service) }
    }

    fn run_input(&mut self, node: usize, core: usize, input: Input<MsgOf<P>, TimerOf<P>>) {
        let kind = match &input {
            Input::Message { msg, .. } => msg.kind(),
            Input::Timer(_) => "timer",
        };
        let service = self.service_ns(node, kind);
        let now = self.now;
        let done = self.fixed[node].cpu.occupy(core, now, service);
        let mut out = self.take_outbox();
        let n = &mut self.fixed[node].node;
        match input {
            Input::Message { from, msg } => n.on_message(now, from, msg, &mut out),
            Input::Timer(timer) => n.on_timer(now, timer, &mut out),
        }
        self.after_handler(NodeId::fixed(node), out, done);
    }

    fn take_outbox(&mut self) -> Outbox<MsgOf<P>, TimerOf<P>> {
        let tracing = self.trace.is_some();
        self.spare_outboxes.pop().unwrap_or_else(|| Outbox::new(tracing))
    }

    /// Carries out a handler's effects; they take effect at `effect_ns` (the end of its service).
    fn after_handler(&mut self, source: NodeId, mut out: Outbox<MsgOf<P>, TimerOf<P>>, effect_ns: Time) {
        if self.check_invariants && self.invariant_violation.is_none() {
            let verdict = if source.is_function() {
                self.live_function(source).map_or(Ok(()), |s| self.functions[s].node.as_ref().expect("live").check_invariants())
            } else {
                self.fixed[source.index()].node.check_invariants()
            };
            if let Err(why) = verdict {
                self.invariant_violation = Some(format!("t={} {}: {why}", self.now, self.display_name(source)));
                if self.trace.is_some() {
                    let fields = format!("\"node\":{},\"violation\":{}", self.display_json(source), json_string(&why));
                    self.trace_event("invariant", &fields);
                }
            }
        }
        // Most outputs are empty; testing first skips setting up a drain for each.
        if !out.records.is_empty() {
            for record in out.records.drain(..) {
                self.write_record(source, record);
            }
        }
        if self.trace.is_some() && !out.actions.is_empty() {
            for action in out.actions.drain(..) {
                let fields = format!(
                    "\"node\":{},\"action\":\"{}\",\"args\":{}",
                    self.display_json(source),
                    action.action,
                    if action.args.is_empty() { "{}" } else { &action.args }
                );
                self.trace_event("action", &fields);
            }
        }
        if !out.observations.is_empty() {
            for (metric, value) in out.observations.drain(..) {
                self.metrics.observations.entry(metric).or_default().record(value);
            }
        }
        if !out.counts.is_empty() {
            for metric in out.counts.drain(..) {
                *self.metrics.counters.entry(metric).or_default() += 1;
            }
        }
        for effect in out.effects.drain(..) {
            match effect {
                Effect::Send { to, msg } => self.send(source, to, msg, effect_ns),
                Effect::SetTimer { timer, after_ns } => self.set_timer(source, timer, effect_ns + after_ns),
                Effect::SetTimerSampled { timer, after } => {
                    let after_ns = after.sample(&mut self.rng_protocol);
                    self.set_timer(source, timer, effect_ns + after_ns);
                }
                Effect::CancelTimer { timer } => {
                    if let Some(timers) = self.timers_of(source) {
                        timers.retain(|(t, _)| *t != timer);
                    }
                }
                Effect::FunctionDone => self.function_done(source),
                Effect::AbortWorkflow { reason } => self.abort_workflow_of(source, reason),
            }
        }
        out.clear();
        self.spare_outboxes.push(out);
    }

    fn timers_of(&mut self, node: NodeId) -> Option<&mut Vec<(TimerOf<P>, u64)>> {
        if node.is_function() {
            let slot = self.live_function(node)?;
            Some(&mut self.functions[slot].timers)
        } else {
            Some(&mut self.fixed[node.index()].timers)
        }
    }

    fn set_timer(&mut self, node: NodeId, timer: TimerOf<P>, at: Time) {
        self.timer_generation += 1;
        let generation = self.timer_generation;
        let Some(timers) = self.timers_of(node) else { return };
        timers.retain(|(t, _)| *t != timer);
        timers.push((timer.clone(), generation));
        self.queue.push(at, Event::Timer { node, timer, generation });
    }

    // -----------------------------------------------------------------------------------------
    // Workflows

    fn on_script_start(&mut self, plan: usize) {
        let Workload::Script { plans, started } = &mut self.workload else { unreachable!() };
        *started += 1;
        let plan = plans[plan].clone();
        self.start_workflow(plan, None);
    }

    fn on_client_start(&mut self, client: u32) {
        let Workload::Generator { generator, started, clients_active, .. } = &mut self.workload else { unreachable!() };
        let c = &generator.config;
        let exhausted = c.workflows_max.is_some_and(|m| *started >= m) || c.duration_ns.is_some_and(|d| self.now >= d);
        if exhausted {
            *clients_active -= 1;
            return;
        }
        *started += 1;
        let plan = generator.plan(&mut self.rng_workload);
        self.start_workflow(plan, Some(client));
    }

    fn on_arrival(&mut self) {
        let Workload::Generator { generator, started, open_done, .. } = &mut self.workload else { unreachable!() };
        let c = &generator.config;
        if c.workflows_max.is_some_and(|m| *started >= m) || c.duration_ns.is_some_and(|d| self.now >= d) {
            *open_done = true;
            return;
        }
        *started += 1;
        let plan = generator.plan(&mut self.rng_workload);
        let gap = generator.interarrival_ns(&mut self.rng_workload);
        self.queue.push(self.now + gap, Event::Arrival);
        self.start_workflow(plan, None);
    }

    fn start_workflow(&mut self, mut plan: WorkflowPlan, client: Option<u32>) {
        if self.protocol.single_sink() && plan.dag.sink_count() > 1 {
            plan.dag = std::sync::Arc::new(plan.dag.with_join_sink());
            plan.ops.push(Vec::new());
            if !plan.pinned.is_empty() {
                plan.pinned.push(None);
            }
            if !plan.not_before_ns.is_empty() {
                plan.not_before_ns.push(0);
            }
        }
        let id = self.next_workflow_id;
        self.next_workflow_id += 1;
        self.metrics.workflows.started += 1;
        self.workflows.insert(id, WorkflowRun::new(plan, self.now, client));
        self.launch_attempt(id);
    }

    fn launch_attempt(&mut self, workflow: u64) {
        let run = &self.workflows[workflow];
        let attempt = run.attempt;
        let starts: Vec<(u32, Time)> = run.plan.dag.sources().map(|f| (f, run.plan.not_before_ns(f).max(self.now))).collect();
        for (function, at) in starts {
            self.queue.push(at, Event::Dispatch { workflow, attempt, function });
        }
    }

    fn on_dispatch(&mut self, workflow: u64, attempt: u32, function: u32) {
        let Some(run) = self.workflows.get(workflow) else { return };
        if run.attempt != attempt {
            return;
        }
        let f = function as usize;
        let machine = match run.plan.pinned(function) {
            Some(name) => self.machines.iter().position(|m| m.name == name).expect("resolved in new"),
            None => {
                let previous = run.plan.dag.preds(function).first().and_then(|&p| run.functions[p as usize].machine);
                let machines = &self.machines;
                self.placer.place(&mut self.rng_scheduler, previous, &run.plan.ops[f], workflow, function, |m| {
                    machines[m].running as u64 + machines[m].waiting.len() as u64
                })
            }
        };
        if self.machines[machine].running < self.config.topology.workers_per_machine {
            self.spawn(workflow, function, machine);
        } else {
            self.machines[machine].waiting.push_back((workflow, attempt, function));
        }
    }

    fn spawn(&mut self, workflow: u64, function: u32, machine: usize) {
        let f = function as usize;
        let run = self.workflows.get_mut(workflow).expect("dispatch checked it");
        let inbox = std::mem::take(&mut run.functions[f].inbox);
        let context = match inbox.len() {
            0 => None,
            1 => Some(inbox.into_iter().next().expect("one").1),
            _ => {
                let mut inbox = inbox;
                inbox.sort_by_key(|(p, _)| *p);
                Some(inbox.into_iter().map(|(_, c)| c).collect::<Vec<_>>()).map(|cs| self.protocol.join_contexts(cs))
            }
        };
        let context = context.unwrap_or_else(|| self.protocol.new_context());
        let run = self.workflows.get_mut(workflow).expect("dispatch checked it");
        // A chain's session order says it all; only other shapes link functions by `after`.
        if !run.plan.dag.is_chain() {
            run.functions[f].after = run.program_order_after(function);
        }
        run.functions[f].machine = Some(machine);
        let ops: Vec<Op> = run.plan.ops[f].iter().map(|spec| self.values.assign(spec)).collect();
        let is_source = run.plan.dag.preds(function).is_empty();
        let is_sink = run.plan.dag.is_sink(function);
        let remaining = run.remaining - 1;
        let attempt = run.attempt;

        let slot = match self.free_function_slots.pop() {
            Some(s) => s as usize,
            None => {
                self.functions.push(FunctionSlot {
                    node: None,
                    generation: 0,
                    workflow: 0,
                    attempt: 0,
                    function: 0,
                    machine: 0,
                    timers: Vec::new(),
                    link_out: LinkCells::default(),
                    link_in: LinkCells::default(),
                    spawned_ns: 0,
                    unrecorded_writes: Vec::new(),
                });
                self.functions.len() - 1
            }
        };
        let s = &mut self.functions[slot];
        s.generation = s.generation.wrapping_add(1) & 0x7FFF_FFFF;
        let id = NodeId::function(slot as u32, s.generation);
        s.spawned_ns = self.now;
        s.unrecorded_writes.clear();
        s.unrecorded_writes.extend(ops.iter().filter_map(|op| match op {
            Op::Write { key, value } => Some((*key, *value)),
            _ => None,
        }));
        let start = FunctionStart {
            self_id: id,
            workflow_id: workflow,
            attempt,
            function,
            machine,
            colocated: &self.machines[machine].colocated,
            workflow_ops: &self.workflows[workflow].plan.ops,
            ops,
            context,
            is_source,
            is_sink,
            remaining,
            now: self.now,
        };
        let node = self.protocol.spawn_function(start);
        let s = &mut self.functions[slot];
        s.node = Some(node);
        s.workflow = workflow;
        s.attempt = attempt;
        s.function = function;
        s.machine = machine;
        s.timers.clear();
        s.link_out.clear();
        s.link_in.clear();
        self.machines[machine].running += 1;
        self.workflows.get_mut(workflow).expect("live").running.push(id);
        if self.trace.is_some() {
            let fields = format!("\"fn\":{},\"machine\":{}", self.display_json(id), json_string(&self.machines[machine].name));
            self.trace_event("place", &fields);
        }
        let mut out = self.take_outbox();
        let now = self.now;
        self.functions[slot].node.as_mut().expect("just spawned").on_start(now, &mut out);
        self.after_handler(id, out, now);
    }

    /// Frees a function's slot and worker, starting the next waiting function on that machine.
    fn retire(&mut self, id: NodeId) -> P::Node {
        let slot = id.slot();
        let node = self.functions[slot].node.take().expect("retiring a live function");
        self.functions[slot].timers.clear();
        self.free_function_slots.push(slot as u32);
        let machine = self.functions[slot].machine;
        self.machines[machine].running -= 1;
        while self.machines[machine].running < self.config.topology.workers_per_machine {
            let Some((workflow, attempt, function)) = self.machines[machine].waiting.pop_front() else { break };
            if self.workflows.get(workflow).is_some_and(|r| r.attempt == attempt) {
                self.spawn(workflow, function, machine);
            }
        }
        node
    }

    fn function_done(&mut self, id: NodeId) {
        let Some(slot) = self.live_function(id) else { return };
        let (workflow, function) = (self.functions[slot].workflow, self.functions[slot].function);
        if self.trace.is_some() {
            let fields = format!("\"fn\":{}", self.display_json(id));
            self.trace_event("done", &fields);
        }
        let node = self.retire(id);
        let context = self.protocol.finish_function(node);
        let run = self.workflows.get_mut(workflow).expect("a live function's workflow is live");
        run.running.retain(|r| *r != id);
        run.remaining -= 1;
        let attempt = run.attempt;
        let succs = run.plan.dag.succs(function);
        // At a fan-out each successor gets its own copy of the context.
        let mut context = Some(context);
        for (i, &g) in succs.iter().enumerate() {
            let ctx = if i + 1 == succs.len() { context.take().expect("moved once, last") } else { context.clone().expect("still here") };
            let successor = &mut run.functions[g as usize];
            successor.inbox.push((function, ctx));
            successor.preds_left -= 1;
            if successor.preds_left == 0 {
                let dispatch = self.config.scheduler.dispatch.sample(&mut self.rng_scheduler);
                let at = (self.now + dispatch).max(run.plan.not_before_ns(g));
                self.queue.push(at, Event::Dispatch { workflow, attempt, function: g });
            }
        }
        if run.remaining == 0 {
            self.workflow_complete(workflow);
        }
    }

    fn workflow_complete(&mut self, workflow: u64) {
        let run = self.workflows.remove(workflow).expect("completing a live workflow");
        let latency = self.now - run.arrival_ns;
        let measured = run.arrival_ns >= self.warmup_ns();
        let m = &mut self.metrics;
        m.workflows.completed += 1;
        if measured {
            m.workflow_latency.record(latency);
            m.completed_measured += 1;
            m.last_completion_ns = self.now;
        }
        if self.trace.is_some() {
            let fields = format!("\"session\":{},\"latency_ns\":{latency}", json_string(&run.session_base(workflow)));
            self.trace_event("workflow", &fields);
        }
        self.client_continues(run.client);
    }

    fn client_continues(&mut self, client: Option<u32>) {
        let Some(client) = client else { return };
        let Workload::Generator { generator, .. } = &self.workload else { return };
        let Arrival::Closed { think, .. } = &generator.config.arrival else { return };
        let at = self.now + think.sample(&mut self.rng_workload);
        self.queue.push(at, Event::ClientStart { client });
    }

    fn warmup_ns(&self) -> Time {
        match &self.workload {
            Workload::Generator { generator, .. } => generator.config.warmup_ns,
            Workload::Script { .. } => 0,
        }
    }

    fn abort_workflow_of(&mut self, source: NodeId, reason: &'static str) {
        let Some(slot) = self.live_function(source) else { return };
        let workflow = self.functions[slot].workflow;
        let running = std::mem::take(&mut self.workflows.get_mut(workflow).expect("live").running);
        for id in running {
            if self.live_function(id).is_some() {
                self.kill_function(id);
            }
        }
        self.metrics.workflows.aborted_attempts += 1;
        let run = self.workflows.get_mut(workflow).expect("live");
        let retry = run.attempt < self.config.scheduler.attempts_max;
        if self.trace.is_some() {
            let fields = format!(
                "\"session\":{},\"reason\":{},\"retry\":{retry}",
                json_string(&self.workflows[workflow].session_base(workflow)),
                json_string(reason)
            );
            self.trace_event("abort", &fields);
        }
        let run = self.workflows.get_mut(workflow).expect("live");
        if retry {
            run.attempt += 1;
            run.reset();
            let at = self.now + self.config.scheduler.retry_backoff.sample(&mut self.rng_scheduler);
            self.queue.push(at, Event::Retry { workflow });
        } else {
            let run = self.workflows.remove(workflow).expect("live");
            self.metrics.workflows.failed += 1;
            self.client_continues(run.client);
        }
    }

    /// Retires a function instance of an aborting workflow attempt (the one that asked for the
    /// abort, and its siblings still running). Whatever it sent is still on its way and is
    /// carried out (a server applies a write whose requester is gone), so its unreported writes
    /// are recorded first. A write it had not issued yet is recorded too: the engine cannot tell
    /// the two apart, and a failed write that nobody reads changes no verdict.
    fn kill_function(&mut self, id: NodeId) {
        self.record_unreported_writes(id, "the function was killed by its workflow's abort; the write may have taken effect");
        self.retire(id);
    }

    /// Records each write function `id` has not reported as a one-write `failed` transaction
    /// (Jepsen's `info`): the server may have applied it, so a later read of it is no thin-air
    /// read; `aborted` would make that read an AbortedRead. One transaction per write, so
    /// reading the earlier of two is no intermediate read.
    fn record_unreported_writes(&mut self, id: NodeId, note: &'static str) {
        let slot = id.slot();
        let writes = std::mem::take(&mut self.functions[slot].unrecorded_writes);
        let invoke_ns = self.functions[slot].spawned_ns;
        for &(key, value) in &writes {
            let record = TxnRecord {
                kind: TxnKind::Write,
                node: None,
                invoke_ns,
                complete_ns: self.now,
                outcome: Outcome::Failed,
                ops: [OpRecord::write(key, value)].into(),
                note: Some(note),
            };
            self.write_record_measured(id, record, false);
        }
        let mut writes = writes;
        writes.clear();
        self.functions[slot].unrecorded_writes = writes;
    }

    fn write_record(&mut self, source: NodeId, record: TxnRecord) {
        self.write_record_measured(source, record, true);
    }

    /// Writes a history line; `latency` says whether the record's interval is an operation's
    /// latency for the summary.
    fn write_record_measured(&mut self, source: NodeId, record: TxnRecord, latency: bool) {
        let slot = self
            .live_function(source)
            .unwrap_or_else(|| panic!("only function instances record history; {} did", self.display_name(source)));
        let pending = &mut self.functions[slot].unrecorded_writes;
        if !pending.is_empty() {
            for op in &record.ops {
                if op.kind == OpKind::Write
                    && let Some(value) = op.value
                    && let Some(i) = pending.iter().position(|&w| w == (op.key, value))
                {
                    pending.remove(i);
                }
            }
        }
        let (workflow, function) = (self.functions[slot].workflow, self.functions[slot].function);
        let id = self.next_record_id;
        self.next_record_id += 1;
        let run = self.workflows.get_mut(workflow).expect("live");
        let f = function as usize;
        // In a chain the session order already says it; `after` links functions of a DAG.
        let per_function = !run.plan.dag.is_chain();
        let after = if run.functions[f].wrote_first || !per_function { Vec::new() } else { std::mem::take(&mut run.functions[f].after) };
        run.functions[f].wrote_first = true;
        run.functions[f].last_record = Some(id);
        let run = &self.workflows[workflow];
        let session =
            SessionRef { workflow_name: run.plan.name.as_deref(), workflow_id: workflow, attempt: run.attempt, function, per_function };
        if let Err(e) = self.history.write(id, session, &after, &record, &self.names) {
            self.io_error.get_or_insert_with(|| format!("writing the history: {e}"));
            self.stop("output error");
        }
        self.metrics.transactions[record.kind as usize][record.outcome as usize] += 1;
        if latency && record.invoke_ns >= self.warmup_ns() {
            self.metrics.op_latency[record.kind as usize].record(record.complete_ns - record.invoke_ns);
        }
        if self.trace.is_some() {
            let fields = format!("\"id\":{id},\"fn\":{}", self.display_json(source));
            self.trace_event("record", &fields);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Faults

    fn on_crash(&mut self, node: usize) {
        let now = self.now;
        let slot = &mut self.fixed[node];
        if slot.crashed {
            return;
        }
        slot.crashed = true;
        slot.timers.clear();
        let lost = slot.cpu.reset(now);
        self.metrics.messages_dropped += lost as u64;
        if self.trace.is_some() {
            let fields = format!("\"node\":{},\"queued_lost\":{lost}", json_string(&self.fixed[node].name));
            self.trace_event("crash", &fields);
        }
    }

    fn on_restart(&mut self, node: usize) {
        if !self.fixed[node].crashed {
            return;
        }
        self.fixed[node].crashed = false;
        if self.trace.is_some() {
            let fields = format!("\"node\":{}", json_string(&self.fixed[node].name));
            self.trace_event("restart", &fields);
        }
        let mut out = self.take_outbox();
        let now = self.now;
        self.fixed[node].node.on_restart(now, &mut out);
        self.after_handler(NodeId::fixed(node), out, now);
    }

    fn on_partition_start(&mut self, index: usize) {
        self.network.partitions[index].active = true;
        if self.trace.is_some() {
            self.trace_event("partition", &format!("\"index\":{index}"));
        }
    }

    fn on_partition_heal(&mut self, index: usize) {
        self.network.partitions[index].active = false;
        if self.trace.is_some() {
            self.trace_event("heal", &format!("\"index\":{index}"));
        }
        let held = std::mem::take(&mut self.network.partitions[index].held);
        for Held { from, to, msg } in held {
            if self.trace.is_some() {
                let fields = self.link_fields(from, to, msg.kind());
                self.trace_event("release", &fields);
            }
            self.transmit(from, to, msg, self.now);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Names and trace

    /// `S1`, or a function instance as `c1/f0` (`w17#2/f3` for a retry).
    fn display_name(&self, id: NodeId) -> String {
        if !id.is_function() {
            return self.fixed[id.index()].name.clone();
        }
        let slot = &self.functions[id.slot()];
        let base = match self.workflows.get(slot.workflow).and_then(|r| r.plan.name.clone()) {
            Some(name) => name,
            None => format!("w{}", slot.workflow),
        };
        // The function's own attempt: after an abort the workflow has moved on to the next.
        let attempt = if slot.attempt > 1 { format!("#{}", slot.attempt) } else { String::new() };
        format!("{base}{attempt}/f{}", slot.function)
    }

    fn display_json(&self, id: NodeId) -> String {
        json_string(&self.display_name(id))
    }

    fn link_fields(&self, from: NodeId, to: NodeId, kind: &str) -> String {
        format!("\"from\":{},\"to\":{},\"msg\":\"{kind}\"", self.display_json(from), self.display_json(to))
    }

    fn trace_event(&mut self, ev: &str, fields: &str) {
        let now = self.now;
        if let Some(trace) = &mut self.trace
            && let Err(e) = trace.event(now, ev, fields)
        {
            self.io_error.get_or_insert_with(|| format!("writing the trace: {e}"));
            self.stopped_by.get_or_insert_with(|| "output error".into());
        }
    }

    // -----------------------------------------------------------------------------------------
    // Summary

    fn finish(&mut self) -> Summary {
        // Functions still running when the run stops (a lost reply, a time limit) may have had
        // writes applied that they never reported.
        for slot in 0..self.functions.len() {
            let f = &self.functions[slot];
            if f.node.is_some() && !f.unrecorded_writes.is_empty() {
                let id = NodeId::function(slot as u32, f.generation);
                self.record_unreported_writes(id, "the run ended before the function finished; the write may have taken effect");
            }
        }
        if let Err(e) = self.history.finish() {
            self.io_error.get_or_insert_with(|| format!("writing the history: {e}"));
        }
        if let Some(t) = &mut self.trace
            && let Err(e) = t.finish()
        {
            self.io_error.get_or_insert_with(|| format!("writing the trace: {e}"));
        }
        let sim_time = self.now;
        let warmup = self.warmup_ns();
        let measured = self.metrics.last_completion_ns.saturating_sub(warmup);
        let m = &self.metrics;
        let mut workflows = m.workflows.clone();
        workflows.unfinished = self.workflows.len() as u64;
        let attempts = workflows.started + workflows.aborted_attempts;
        let nodes = self
            .fixed
            .iter()
            .map(|f| NodeSummary {
                name: f.name.clone(),
                cores: f.cpu.cores(),
                inputs: f.cpu.inputs,
                utilisation: if sim_time == 0 { 0.0 } else { f.cpu.busy_ns as f64 / (f.cpu.cores() as f64 * sim_time as f64) },
                queue_depth_max: f.cpu.queue_depth_max,
            })
            .collect();
        let messages_total = m
            .messages
            .iter()
            .map(|(_, c)| c)
            .fold(MessageCount::default(), |acc, c| MessageCount { count: acc.count + c.count, bytes: acc.bytes + c.bytes });
        let fixed: Vec<&P::Node> = self.fixed.iter().map(|f| &f.node).collect();
        let protocol_metrics = self.protocol.final_metrics(&fixed).into_iter().collect();
        let mut stopped_by = self.stopped_by.clone().unwrap_or_default();
        if let Some(e) = &self.io_error {
            stopped_by = format!("{stopped_by} ({e})");
        }
        Summary {
            scenario: self.scenario.clone(),
            protocol: self.protocol.name().to_string(),
            seed: self.config.seed,
            stopped_by,
            events: self.events,
            sim_time_ns: sim_time,
            measured_ns: measured,
            abort_rate: if attempts == 0 { 0.0 } else { workflows.aborted_attempts as f64 / attempts as f64 },
            throughput_per_s: if measured == 0 { 0.0 } else { m.completed_measured as f64 * 1e9 / measured as f64 },
            workflows,
            workflow_latency_ns: m.workflow_latency.stats(),
            op_latency_ns: TXN_KINDS
                .iter()
                .filter(|k| m.op_latency[**k as usize].count() > 0)
                .map(|k| (k.as_str().to_string(), m.op_latency[*k as usize].stats()))
                .collect(),
            transactions: TXN_KINDS
                .iter()
                .flat_map(|k| OUTCOMES.iter().map(move |o| (*k, *o)))
                .filter(|(k, o)| m.transactions[*k as usize][*o as usize] > 0)
                .map(|(k, o)| (format!("{}:{}", k.as_str(), o.as_str()), m.transactions[k as usize][o as usize]))
                .collect(),
            messages: m.messages.iter().map(|(k, c)| (k.to_string(), c.clone())).collect(),
            messages_total,
            messages_dropped: m.messages_dropped,
            nodes,
            observations: m.observations.iter().map(|(k, h)| (k.to_string(), h.stats())).collect(),
            counters: m.counters.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            protocol_metrics,
            history_records: self.history.records(),
            history_hash: format!("{:016x}", self.history.hash()),
            trace_hash: self.trace.as_ref().map(|t| format!("{:016x}", t.hash())),
            invariant_violation: self.invariant_violation.clone(),
        }
    }

    /// An I/O error that stopped the run, if any.
    pub fn io_error(&self) -> Option<&str> {
        self.io_error.as_deref()
    }
}

fn list<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.map(|s| s.as_str()).collect();
    v.join(", ")
}
