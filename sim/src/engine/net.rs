//! Links between machines: delays, FIFO order, partitions and loss.
//!
//! A link is FIFO per ordered pair of nodes but delayed: a message's delivery time is
//! `max(send time + sampled delay, previous delivery on that link)`. Delays depend on the pair
//! of *machines*: `local_delay` within a machine, a per-link override if the scenario gives one,
//! and `delay` otherwise.
//!
//! Faults this module injects, and why a protocol should survive them:
//! - a partition in `hold` mode delays messages sent while it is active until it heals (a
//!   congested or flapping network path: reliable FIFO links still deliver everything);
//! - a partition in `drop` mode and random loss lose messages (protocols that assume reliable
//!   links, like CausalMesh's chains, may stall but must stay safe).

use crate::config::PartitionMode;
use crate::dist::{DurationDist, Sampler};
use crate::node::NodeId;
use crate::rng::RngStream;
use crate::time::Time;

/// A message a partition holds until it heals.
#[derive(Debug)]
pub(crate) struct Held<M> {
    pub from: NodeId,
    pub to: NodeId,
    pub msg: M,
}

#[derive(Debug)]
pub(crate) struct Partition<M> {
    /// Group index per machine; `None` for machines the partition does not affect.
    pub group_of: Vec<Option<u32>>,
    pub start_ns: Time,
    pub heal_ns: Option<Time>,
    pub mode: PartitionMode,
    pub active: bool,
    pub held: Vec<Held<M>>,
}

impl<M> Partition<M> {
    fn separates(&self, a: usize, b: usize) -> bool {
        match (self.group_of[a], self.group_of[b]) {
            (Some(x), Some(y)) => x != y,
            _ => false,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Network<M> {
    machine_count: usize,
    delay: Sampler,
    local_delay: Sampler,
    overrides: Vec<Option<Sampler>>,
    fixed_count: usize,
    /// Last delivery time per ordered pair of fixed nodes.
    fixed_last: Vec<Time>,
    pub partitions: Vec<Partition<M>>,
    pub loss_probability: f64,
}

impl<M> Network<M> {
    pub fn new(
        machine_count: usize,
        fixed_count: usize,
        delay: DurationDist,
        local_delay: DurationDist,
        loss_probability: f64,
    ) -> Network<M> {
        Network {
            machine_count,
            delay: Sampler::new(delay),
            local_delay: Sampler::new(local_delay),
            overrides: vec![None; machine_count * machine_count],
            fixed_count,
            fixed_last: vec![0; fixed_count * fixed_count],
            partitions: Vec::new(),
            loss_probability,
        }
    }

    pub fn set_override(&mut self, from: usize, to: usize, delay: DurationDist) {
        self.overrides[from * self.machine_count + to] = Some(Sampler::new(delay));
    }

    pub fn sample_delay(&self, rng: &mut RngStream, from: usize, to: usize) -> Time {
        if let Some(d) = &self.overrides[from * self.machine_count + to] {
            return d.sample(rng);
        }
        if from == to { self.local_delay.sample(rng) } else { self.delay.sample(rng) }
    }

    /// The FIFO bookkeeping cell of a link between two fixed nodes.
    pub fn fixed_link(&mut self, from: NodeId, to: NodeId) -> &mut Time {
        &mut self.fixed_last[from.index() * self.fixed_count + to.index()]
    }

    /// The active partition (lowest index) that separates two machines, if any.
    pub fn blocking_partition(&self, a: usize, b: usize) -> Option<usize> {
        self.partitions.iter().position(|p| p.active && p.separates(a, b))
    }
}

/// FIFO delivery: never before the previous message on the same link.
pub(crate) fn fifo_delivery(send_ns: Time, delay_ns: Time, last: &mut Time) -> Time {
    let at = send_ns.saturating_add(delay_ns).max(*last);
    *last = at;
    at
}

/// A small map from peer to last delivery time, kept in a function instance's slot (functions
/// talk to few peers, so a vector beats a map).
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkCells(Vec<(NodeId, Time)>);

impl LinkCells {
    pub fn cell(&mut self, peer: NodeId) -> &mut Time {
        match self.0.iter().position(|(p, _)| *p == peer) {
            Some(i) => &mut self.0[i].1,
            None => {
                self.0.push((peer, 0));
                &mut self.0.last_mut().expect("just pushed").1
            }
        }
    }

    pub fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_delivery_never_overtakes() {
        let mut last = 0;
        assert_eq!(fifo_delivery(0, 100, &mut last), 100);
        // A later message with a short delay waits for the earlier one.
        assert_eq!(fifo_delivery(10, 5, &mut last), 100);
        assert_eq!(fifo_delivery(200, 5, &mut last), 205);
    }

    #[test]
    fn partitions_separate_only_listed_groups() {
        let p: Partition<()> = Partition {
            group_of: vec![Some(0), Some(1), None],
            start_ns: 0,
            heal_ns: None,
            mode: PartitionMode::Hold,
            active: true,
            held: Vec::new(),
        };
        assert!(p.separates(0, 1));
        assert!(!p.separates(0, 0));
        assert!(!p.separates(0, 2));
    }
}
