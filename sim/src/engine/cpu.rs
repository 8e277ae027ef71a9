//! Cores and service times: why load produces queueing, saturation and tail latency.
//!
//! A fixed node has `cores` cores and a FIFO run queue. An input (message or timer) starts on a
//! free core at once, or waits. The handler runs when the input starts; its effects leave the
//! node when its service time has elapsed. This is a FIFO multi-server queue (G/G/c), the model
//! behind latency-versus-throughput curves.

use crate::dist::DurationDist;
use crate::node::NodeId;
use crate::time::Time;
use std::collections::VecDeque;

/// An input waiting for a core.
#[derive(Debug)]
pub(crate) enum Input<M, T> {
    Message { from: NodeId, msg: M },
    Timer(T),
}

#[derive(Debug)]
pub(crate) struct Cpu<M, T> {
    /// When each core becomes free.
    free_at: Vec<Time>,
    pub queue: VecDeque<Input<M, T>>,
    /// A `CoreFree` event is scheduled.
    pub wakeup_pending: bool,
    pub service: DurationDist,
    pub busy_ns: u128,
    pub inputs: u64,
    pub queue_depth_max: u64,
}

impl<M, T> Cpu<M, T> {
    pub fn new(cores: u32, service: DurationDist) -> Cpu<M, T> {
        Cpu {
            free_at: vec![0; cores as usize],
            queue: VecDeque::new(),
            wakeup_pending: false,
            service,
            busy_ns: 0,
            inputs: 0,
            queue_depth_max: 0,
        }
    }

    pub fn cores(&self) -> u32 {
        self.free_at.len() as u32
    }

    /// A core that is free at `now`, if the run queue is empty (FIFO: waiting inputs go first).
    pub fn free_core(&self, now: Time) -> Option<usize> {
        if !self.queue.is_empty() {
            return None;
        }
        self.core_free_at(now)
    }

    /// A core that is free at `now`, ignoring the queue.
    pub fn core_free_at(&self, now: Time) -> Option<usize> {
        self.free_at.iter().position(|&t| t <= now)
    }

    /// When the next core becomes free.
    pub fn next_free(&self) -> Time {
        *self.free_at.iter().min().expect("a node has at least one core")
    }

    /// Occupies `core` from `now` for `service_ns`; returns when the input completes.
    pub fn occupy(&mut self, core: usize, now: Time, service_ns: Time) -> Time {
        let done = now + service_ns;
        self.free_at[core] = done;
        self.busy_ns += service_ns as u128;
        self.inputs += 1;
        done
    }

    /// Keeps `core` busy `extra_ns` past `done` (the work an input's handler turned out to
    /// need, such as encoding what it sent); returns the new end.
    pub fn extend(&mut self, core: usize, done: Time, extra_ns: Time) -> Time {
        self.free_at[core] = done + extra_ns;
        self.busy_ns += extra_ns as u128;
        done + extra_ns
    }

    pub fn enqueue(&mut self, input: Input<M, T>) {
        self.queue.push_back(input);
        self.queue_depth_max = self.queue_depth_max.max(self.queue.len() as u64);
    }

    /// A crash: the queue is lost and the cores are free again.
    pub fn reset(&mut self, now: Time) -> usize {
        let lost = self.queue.len();
        self.queue.clear();
        for t in &mut self.free_at {
            *t = (*t).min(now);
        }
        lost
    }
}
