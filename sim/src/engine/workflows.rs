//! Workflows: arrivals, dispatch of functions to machines, retries and aborts, and the history
//! records functions report.

use super::*;

impl<P: Protocol> Sim<P> {
    pub(super) fn on_script_start(&mut self, plan: usize) {
        let Workload::Script { plans, started } = &mut self.workload else { unreachable!() };
        *started += 1;
        let plan = plans[plan].clone();
        self.start_workflow(plan, None);
    }

    pub(super) fn on_client_start(&mut self, client: u32) {
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

    pub(super) fn on_arrival(&mut self) {
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

    pub(super) fn start_workflow(&mut self, mut plan: WorkflowPlan, client: Option<u32>) {
        self.last_progress = self.now;
        // The dummy functions have no operations, no pin and no start time of their own (a
        // dummy source runs when the workflow starts).
        let add_dummy = |plan: &mut crate::workload::WorkflowPlan, dag: crate::workflow::Dag| {
            plan.dag = std::sync::Arc::new(dag);
            plan.ops.push(Vec::new());
            if !plan.pinned.is_empty() {
                plan.pinned.push(None);
            }
            if !plan.not_before_ns.is_empty() {
                plan.not_before_ns.push(0);
            }
        };
        if self.protocol.single_sink() && plan.dag.sink_count() > 1 {
            let dag = plan.dag.with_join_sink();
            add_dummy(&mut plan, dag);
        }
        if self.protocol.single_source() && plan.dag.source_count() > 1 {
            let dag = plan.dag.with_source();
            add_dummy(&mut plan, dag);
        }
        let id = self.next_workflow_id;
        self.next_workflow_id += 1;
        self.metrics.workflows.started += 1;
        self.workflows.insert(id, WorkflowRun::new(plan, self.now, client));
        self.launch_attempt(id);
    }

    pub(super) fn launch_attempt(&mut self, workflow: u64) {
        let run = &self.workflows[workflow];
        let attempt = run.attempt;
        let starts: Vec<(u32, Time)> = run.plan.dag.sources().map(|f| (f, run.plan.not_before_ns(f).max(self.now))).collect();
        for (function, at) in starts {
            self.queue.push(at, Event::Dispatch { workflow, attempt, function });
        }
    }

    pub(super) fn on_dispatch(&mut self, workflow: u64, attempt: u32, function: u32) {
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

    pub(super) fn spawn(&mut self, workflow: u64, function: u32, machine: usize) {
        self.last_progress = self.now;
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
        let run = self.workflows.get_mut(workflow).expect("dispatch checked it");
        let context = context.or_else(|| run.retry_context.clone()).unwrap_or_else(|| self.protocol.new_context());
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
            // An append is a write of its data to its book: unreported, it is recorded the same way.
            Op::Log(LogOp::Append { book, data, .. }) => Some((*book, *data)),
            _ => None,
        }));
        let start = FunctionStart {
            self_id: id,
            workflow_id: workflow,
            attempt,
            function,
            machine,
            colocated: &self.machines[machine].colocated,
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
    ///
    /// A function may finish inside its own start handler (nothing to wait for), and its
    /// `retire` would then start the next waiting one, and so on: recursion as deep as the
    /// machine's queue, which overflowed the stack of a sweep thread on an overloaded run. So
    /// only the outermost `retire` starts waiting functions, in a loop; one reached from a
    /// function it started leaves its machine to that loop.
    pub(super) fn retire(&mut self, id: NodeId) -> P::Node {
        let slot = id.slot();
        let node = self.functions[slot].node.take().expect("retiring a live function");
        self.functions[slot].timers.clear();
        self.free_function_slots.push(slot as u32);
        let machine = self.functions[slot].machine;
        self.machines[machine].running -= 1;
        let nested = !self.machines_to_fill.is_empty();
        self.machines_to_fill.push(machine);
        if nested {
            return node;
        }
        let mut next = 0;
        while next < self.machines_to_fill.len() {
            let machine = self.machines_to_fill[next];
            next += 1;
            while self.machines[machine].running < self.config.topology.workers_per_machine {
                let Some((workflow, attempt, function)) = self.machines[machine].waiting.pop_front() else { break };
                if self.workflows.get(workflow).is_some_and(|r| r.attempt == attempt && !r.aborting) {
                    self.spawn(workflow, function, machine);
                }
            }
        }
        self.machines_to_fill.clear();
        node
    }

    pub(super) fn function_done(&mut self, id: NodeId) {
        self.last_progress = self.now;
        let Some(slot) = self.live_function(id) else { return };
        let (workflow, function) = (self.functions[slot].workflow, self.functions[slot].function);
        if self.trace.is_some() {
            let fields = format!("\"fn\":{}", self.display_json(id));
            self.trace_event("done", &fields);
        }
        // Writes it left to a later function to commit stay owed until a line reports them
        // (taken before `retire`, which may hand the slot to a waiting function).
        let mut owed = std::mem::take(&mut self.functions[slot].unrecorded_writes);
        let node = self.retire(id);
        let context = self.protocol.finish_function(node);
        let run = self.workflows.get_mut(workflow).expect("a live function's workflow is live");
        run.running.retain(|r| *r != id);
        run.unrecorded_writes.append(&mut owed);
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

    pub(super) fn workflow_complete(&mut self, workflow: u64) {
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

    pub(super) fn client_continues(&mut self, client: Option<u32>) {
        let Some(client) = client else { return };
        let Workload::Generator { generator, .. } = &self.workload else { return };
        let Arrival::Closed { think, .. } = &generator.config.arrival else { return };
        let at = self.now + think.sample(&mut self.rng_workload);
        self.queue.push(at, Event::ClientStart { client });
    }

    pub(super) fn warmup_ns(&self) -> Time {
        match &self.workload {
            Workload::Generator { generator, .. } => generator.config.warmup_ns,
            Workload::Script { .. } => 0,
        }
    }

    pub(super) fn abort_workflow_of(&mut self, source: NodeId, reason: &'static str) {
        self.last_progress = self.now;
        let Some(slot) = self.live_function(source) else { return };
        let workflow = self.functions[slot].workflow;
        let retry_context = self.protocol.retry_context(self.functions[slot].node.as_ref().expect("live"));
        let run = self.workflows.get_mut(workflow).expect("live");
        // Killing a function frees its worker slot, which would start a function of this very
        // attempt waiting for one: it would outlive the attempt, unknown to it.
        run.aborting = true;
        let running = std::mem::take(&mut run.running);
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
            run.retry_context = retry_context;
            let at = self.now + self.config.scheduler.retry_backoff.sample(&mut self.rng_scheduler);
            self.queue.push(at, Event::Retry { workflow });
        } else {
            let run = self.workflows.remove(workflow).expect("live");
            self.metrics.workflows.failed += 1;
            *self.metrics.gave_up.entry(reason).or_default() += 1;
            self.client_continues(run.client);
        }
    }

    /// Retires a function instance of an aborting workflow attempt (the one that asked for the
    /// abort, and its siblings still running). Whatever it sent is still on its way and is
    /// carried out (a server applies a write whose requester is gone), so its unreported writes
    /// are recorded first. A write it had not issued yet is recorded too: the engine cannot tell
    /// the two apart, and a failed write that nobody reads changes no verdict.
    pub(super) fn kill_function(&mut self, id: NodeId) {
        self.record_unreported_writes(id, "the function was killed by its workflow's abort; the write may have taken effect");
        self.retire(id);
    }

    /// Records each write function `id` has not reported as a one-write `failed` transaction
    /// (Jepsen's `info`): the server may have applied it, so a later read of it is no thin-air
    /// read; `aborted` would make that read an AbortedRead. One transaction per write, so
    /// reading the earlier of two is no intermediate read.
    /// A sink also answers for the writes its attempt's finished functions left for it to
    /// commit: that commit may be what is still on its way. (Before the sink runs they were
    /// never sent, and a retry starts without them.)
    pub(super) fn record_unreported_writes(&mut self, id: NodeId, note: &'static str) {
        let slot = id.slot();
        let mut writes = std::mem::take(&mut self.functions[slot].unrecorded_writes);
        let function = self.functions[slot].function;
        let in_flight = self.functions[slot].node.as_ref().and_then(|n| self.protocol.in_flight_writes(n));
        if let Some(sent) = in_flight {
            // The protocol knows what it sent: nothing else can take effect.
            if let Some(run) = self.workflows.get_mut(self.functions[slot].workflow) {
                run.unrecorded_writes.clear();
            }
            writes = sent;
        } else if let Some(run) = self.workflows.get_mut(self.functions[slot].workflow)
            && run.plan.dag.is_sink(function)
        {
            // The earlier functions' writes first: the session orders these records, and a
            // key the sink wrote again must end on the sink's write (the one it commits).
            let mut owed = std::mem::take(&mut run.unrecorded_writes);
            owed.append(&mut writes);
            writes = owed;
        }
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
                call: None,
            };
            self.write_record_measured(id, record, false);
        }
        writes.clear();
        self.functions[slot].unrecorded_writes = writes;
    }

    pub(super) fn write_record(&mut self, source: NodeId, record: TxnRecord) {
        self.write_record_measured(source, record, true);
    }

    /// Writes a history line; `latency` says whether the record's interval is an operation's
    /// latency for the summary.
    pub(super) fn write_record_measured(&mut self, source: NodeId, record: TxnRecord, latency: bool) {
        self.last_progress = self.now;
        let slot = self
            .live_function(source)
            .unwrap_or_else(|| panic!("only function instances record history; {} did", self.display_name(source)));
        forget_reported(&mut self.functions[slot].unrecorded_writes, &record);
        let (workflow, function) = (self.functions[slot].workflow, self.functions[slot].function);
        let id = self.next_record_id;
        self.next_record_id += 1;
        let run = self.workflows.get_mut(workflow).expect("live");
        forget_reported(&mut run.unrecorded_writes, &record);
        let f = function as usize;
        // In a chain the session order already says it; `after` links functions of a DAG.
        let per_function = !run.plan.dag.is_chain();
        let after = if run.functions[f].wrote_first || !per_function { Vec::new() } else { std::mem::take(&mut run.functions[f].after) };
        run.functions[f].wrote_first = true;
        run.functions[f].last_record = Some(id);
        let run = &self.workflows[workflow];
        let session =
            SessionRef { workflow_name: run.plan.name.as_deref(), workflow_id: workflow, attempt: run.attempt, function, per_function };
        if let Err(e) = self.history.write_in_workflow(id, session, &after, &record, &self.names, Some(&run.plan.dag)) {
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
}

/// Drops from `pending` the writes `record` reports.
fn forget_reported(pending: &mut Vec<(Key, Value)>, record: &TxnRecord) {
    if pending.is_empty() {
        return;
    }
    for op in &record.ops {
        if op.kind == OpKind::Write
            && let Some(value) = op.value
            && let Some(i) = pending.iter().position(|&w| w == (op.key, value))
        {
            pending.remove(i);
        }
    }
}
