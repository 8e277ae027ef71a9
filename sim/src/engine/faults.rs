//! Faults: machine crashes and restarts, partitions and their healing.

use super::*;

impl<P: Protocol> Sim<P> {
    pub(super) fn on_crash(&mut self, node: usize) {
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

    pub(super) fn on_restart(&mut self, node: usize) {
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

    pub(super) fn on_partition_start(&mut self, index: usize) {
        self.network.partitions[index].active = true;
        if self.trace.is_some() {
            self.trace_event("partition", &format!("\"index\":{index}"));
        }
    }

    pub(super) fn on_partition_heal(&mut self, index: usize) {
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
}
