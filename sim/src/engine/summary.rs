//! The end of a run: writes no function reported, and the summary of what happened.

use super::*;

impl<P: Protocol> Sim<P> {
    pub(super) fn finish(&mut self) -> Summary {
        // Functions still running when the run stops (a lost reply, a time limit) may have had
        // writes applied that they never reported.
        for slot in 0..self.functions.len() {
            let f = &self.functions[slot];
            let owed_by_workflow =
                self.workflows.get(f.workflow).is_some_and(|run| run.plan.dag.is_sink(f.function) && !run.unrecorded_writes.is_empty());
            if f.node.is_some() && (!f.unrecorded_writes.is_empty() || owed_by_workflow) {
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
        let liveness = Liveness::new(
            m.gave_up.iter().map(|(r, n)| (r.to_string(), *n)).collect(),
            workflows.unfinished,
            self.functions.iter().filter(|f| f.node.is_some()).count() as u64,
        );
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
                colocated_with_workers: self.machines[f.machine].is_worker,
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
            protocol: self.protocol_name.clone(),
            seed: self.config.seed,
            stopped_by,
            events: self.events,
            sim_time_ns: sim_time,
            measured_ns: measured,
            abort_rate: if attempts == 0 { 0.0 } else { workflows.aborted_attempts as f64 / attempts as f64 },
            throughput_per_s: if measured == 0 { 0.0 } else { m.completed_measured as f64 * 1e9 / measured as f64 },
            workflows,
            liveness,
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
