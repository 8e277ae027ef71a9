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
mod faults;
mod flows;
mod net;
mod replay;
mod setup;
mod summary;
mod table;
mod workflows;

use crate::config::{PartitionMode, SimConfig};
use crate::dist::DurationDist;
use crate::error::FieldError;
use crate::history::{HistoryWriter, Key, Names, OpKind, OpRecord, Outcome, SessionRef, TxnKind, TxnRecord, Value, json_string};
use crate::metrics::{Histogram, Liveness, MessageCount, NodeSummary, Summary, WorkflowCounts};
use crate::node::{Effect, Message, Node, NodeId, Outbox};
use crate::protocol::{FunctionStart, Protocol};
use crate::queue::EventQueue;
use crate::rng::{RngStream, StreamId};
use crate::time::Time;
use crate::trace::TraceWriter;
use crate::workload::{Arrival, Generator, LogOp, Op, ValueAllocator, WorkflowPlan, WorkloadConfig, compile_script};
use cpu::{Cpu, Input};
use flows::{Machine, Placer, WorkflowRun};
use net::{Held, LinkCells, Network, Partition, fifo_delivery};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use table::IdTable;

const TXN_KINDS: [TxnKind; 5] = [TxnKind::Read, TxnKind::Write, TxnKind::ReadTxn, TxnKind::WorkflowTxn, TxnKind::Txn];
const OUTCOMES: [Outcome; 3] = [Outcome::Ok, Outcome::Aborted, Outcome::Failed];

type MsgOf<P> = <<P as Protocol>::Node as Node>::Msg;
type TimerOf<P> = <<P as Protocol>::Node as Node>::Timer;

/// Room kept in the event queue for what one event schedules (see the run loop).
const PENDING_MARGIN: usize = 1 << 20;

/// Where a run writes, and what it checks as it goes.
pub struct RunOutputs {
    /// Names the scenario in the summary.
    pub scenario: String,
    /// Names the protocol in the summary and in errors (the catalogue's name).
    pub protocol: String,
    pub history: HistoryWriter,
    pub trace: Option<TraceWriter>,
    /// Call every node's `check_invariants` after each of its inputs.
    pub check_invariants: bool,
}

impl RunOutputs {
    /// No files: the history is only hashed, no trace, no invariant checks.
    pub fn hashing_only(scenario: &str, protocol: &str) -> RunOutputs {
        RunOutputs {
            scenario: scenario.to_string(),
            protocol: protocol.to_string(),
            history: HistoryWriter::hashing_only(),
            trace: None,
            check_invariants: false,
        }
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
    /// Workflows that used up their attempts, by the reason of their last abort.
    gave_up: BTreeMap<&'static str, u64>,
    workflow_latency: Histogram,
    /// Indexed by `TxnKind as usize`.
    op_latency: [Histogram; 5],
    /// Indexed by `[TxnKind as usize][Outcome as usize]`.
    transactions: [[u64; 3]; 5],
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
    /// Machines with a freed worker whose waiting functions are still to start: non-empty only
    /// while a `retire` up the stack is starting them (see `retire`).
    machines_to_fill: Vec<usize>,
    machines: Vec<Machine>,
    placer: Placer,
    network: Network<MsgOf<P>>,
    service_by_kind: BTreeMap<String, DurationDist>,
    /// What messages' sizes and function-side calls cost (`crate::cost`).
    cost: crate::cost::CostModel,
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
    protocol_name: String,
    metrics: RunMetrics,
    /// Emptied outboxes, kept for their capacity. Handlers nest (a function's `FunctionDone`
    /// starts the next function), so there is one per nesting level in use.
    spare_outboxes: Vec<Outbox<MsgOf<P>, TimerOf<P>>>,
    settling: bool,
    /// When a workflow last made progress (see `limits.stall_ns`).
    last_progress: Time,
    stopped_by: Option<String>,
    io_error: Option<String>,
    replay: Option<replay::Replay<MsgOf<P>>>,
}

impl<P: Protocol> Sim<P> {
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
            // The queue holds at most PENDING_MAX events; stop with a named limit well before
            // (one event schedules far fewer than the margin) instead of failing inside it.
            if self.queue.len() >= crate::queue::PENDING_MAX - PENDING_MARGIN {
                let reason = format!("limit: pending events ({} scheduled and not yet due)", self.queue.len());
                self.stop(&reason);
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
            if let Some(stall) = limits.stall_ns
                && time > self.last_progress.saturating_add(stall)
                && self.stalled()
            {
                self.now = self.last_progress + stall;
                self.stop(&format!("stalled: no workflow progress for {} ms", stall as f64 / 1e6));
                break;
            }
            // Events never go back in time: everything the engine schedules is at `now` or later.
            assert!(time >= self.now, "event at {time} ns scheduled before now ({} ns)", self.now);
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

    /// Workflows are running, none will start later, and nothing replays: only a running
    /// workflow's progress could move the run on.
    fn stalled(&self) -> bool {
        if self.workflows.is_empty() || self.settling || self.replay.as_ref().is_some_and(|r| r.active()) {
            return false;
        }
        match &self.workload {
            Workload::Script { plans, started } => *started == plans.len(),
            Workload::Generator { generator, clients_active, open_done, .. } => match generator.config.arrival {
                // Every active client is running a workflow (none is thinking: it would start one).
                Arrival::Closed { .. } => *clients_active as usize == self.workflows.len(),
                _ => *open_done,
            },
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
        if !self.cost.is_zero() {
            // A function instance encodes before the message leaves and decodes before its
            // handler sees it; it has its worker to itself, so this is time, not queueing.
            let bytes = msg.size_bytes();
            delay += from.is_function() as Time * self.cost.function_ns(bytes);
            delay += to.is_function() as Time * self.cost.function_ns(bytes);
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
                if cpu.queue.len() as u64 >= self.config.limits.run_queue_max {
                    let reason = format!("limit: run_queue_max ({} inputs wait at {})", cpu.queue.len(), self.fixed[node].name);
                    self.stop(&reason);
                }
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
        // A message's size is only asked for when it costs something: some protocols count it
        // by walking the whole payload.
        let (kind, decode_ns) = match &input {
            Input::Message { msg, .. } if self.cost.ns_per_kib > 0 => (msg.kind(), self.cost.size_ns(msg.size_bytes())),
            Input::Message { msg, .. } => (msg.kind(), 0),
            Input::Timer(_) => ("timer", 0),
        };
        let service = self.service_ns(node, kind) + decode_ns;
        let now = self.now;
        let mut done = self.fixed[node].cpu.occupy(core, now, service);
        let mut out = self.take_outbox();
        let n = &mut self.fixed[node].node;
        match input {
            Input::Message { from, msg } => n.on_message(now, from, msg, &mut out),
            Input::Timer(timer) => n.on_timer(now, timer, &mut out),
        }
        if self.cost.ns_per_kib > 0 {
            let sent: u64 = out.effects.iter().map(|e| if let Effect::Send { msg, .. } = e { msg.size_bytes() } else { 0 }).sum();
            done = self.fixed[node].cpu.extend(core, done, self.cost.size_ns(sent));
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
                // Saturating: a protocol's period may be as long as a scenario's time limit.
                Effect::SetTimer { timer, after_ns } => self.set_timer(source, timer, effect_ns.saturating_add(after_ns)),
                Effect::SetTimerSampled { timer, after } => {
                    let after_ns = after.sample(&mut self.rng_protocol);
                    self.set_timer(source, timer, effect_ns.saturating_add(after_ns));
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
}
