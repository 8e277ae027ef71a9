//! Workflow runs, worker machines and placement.
//!
//! A workflow attempt tracks which functions still wait for predecessors, the contexts their
//! predecessors produced, and the history ids that order its sessions. The scheduler places a
//! ready function on a worker machine (see [`PlacementPolicy`]); a machine runs at most
//! `workers_per_machine` functions at once and queues the rest in FIFO order.

use crate::config::PlacementPolicy;
use crate::history::{Key, Value};
use crate::node::NodeId;
use crate::rng::{RngStream, splitmix64};
use crate::time::Time;
use crate::workload::{OpSpec, WorkflowPlan};
use smallvec::SmallVec;
use std::collections::VecDeque;

/// A machine: links and partitions are between machines; workers run on some of them.
#[derive(Debug)]
pub(crate) struct Machine {
    pub name: String,
    pub is_worker: bool,
    /// Fixed nodes on this machine, in fixed-node order.
    pub colocated: Vec<NodeId>,
    pub running: u32,
    /// Functions waiting for a worker slot: (workflow, attempt, function).
    pub waiting: VecDeque<(u64, u32, u32)>,
}

/// One attempt of one workflow.
#[derive(Debug)]
pub(crate) struct WorkflowRun<C> {
    pub attempt: u32,
    pub plan: WorkflowPlan,
    /// When the first attempt arrived (latency is measured from here, retries included).
    pub arrival_ns: Time,
    /// The closed-loop client that started it.
    pub client: Option<u32>,
    /// Per function of the plan (one allocation per workflow, reused by retries).
    pub functions: Vec<FunctionState<C>>,
    /// Its live function instances, in spawn order (inline: chains run one at a time).
    pub running: SmallVec<[NodeId; 2]>,
    pub remaining: usize,
    /// What the last aborted attempt hands the next one (`Protocol::retry_context`).
    pub retry_context: Option<C>,
    /// Writes of this attempt's finished functions that no history line has reported yet
    /// (where a workflow is one transaction, its sink commits and records them).
    pub unrecorded_writes: Vec<(Key, Value)>,
    /// The attempt is being torn down: freed worker slots must not start its waiting functions.
    pub aborting: bool,
}

/// What one attempt knows about one of its functions.
#[derive(Debug)]
pub(crate) struct FunctionState<C> {
    pub preds_left: u32,
    /// Contexts handed over by finished predecessors: (predecessor, context).
    pub inbox: SmallVec<[(u32, C); 1]>,
    /// Where it ran.
    pub machine: Option<usize>,
    /// The id of the last history line it wrote.
    pub last_record: Option<u64>,
    /// Program-order predecessors (history ids) of its first line (non-chain workflows).
    pub after: Vec<u64>,
    pub wrote_first: bool,
}

impl<C> WorkflowRun<C> {
    pub fn new(plan: WorkflowPlan, arrival_ns: Time, client: Option<u32>) -> WorkflowRun<C> {
        let n = plan.dag.len();
        let mut run = WorkflowRun {
            attempt: 1,
            plan,
            arrival_ns,
            client,
            functions: Vec::with_capacity(n),
            running: SmallVec::new(),
            remaining: n,
            retry_context: None,
            unrecorded_writes: Vec::new(),
            aborting: false,
        };
        run.reset();
        run
    }

    /// Clears the per-attempt state (for the first attempt and for retries).
    pub fn reset(&mut self) {
        let dag = &self.plan.dag;
        let n = dag.len();
        self.functions.clear();
        self.functions.extend((0..n as u32).map(|f| FunctionState {
            preds_left: dag.preds(f).len() as u32,
            inbox: SmallVec::new(),
            machine: None,
            last_record: None,
            after: Vec::new(),
            wrote_first: false,
        }));
        self.running.clear();
        self.remaining = n;
        self.unrecorded_writes.clear();
        self.aborting = false;
    }

    /// The history ids that must precede function `f`'s first line: for each predecessor, its
    /// last line, or (if it wrote none) what its own first line would have followed.
    pub fn program_order_after(&self, f: u32) -> Vec<u64> {
        let mut after = Vec::new();
        for &p in self.plan.dag.preds(f) {
            let p = &self.functions[p as usize];
            match p.last_record {
                Some(id) => after.push(id),
                None => after.extend_from_slice(&p.after),
            }
        }
        after.sort_unstable();
        after.dedup();
        after
    }

    /// The session name's base (`c1`, `w17#2`), without the per-function suffix.
    pub fn session_base(&self, workflow_id: u64) -> String {
        let mut s = match &self.plan.name {
            Some(n) => n.clone(),
            None => format!("w{workflow_id}"),
        };
        if self.attempt > 1 {
            s.push('#');
            s.push_str(&self.attempt.to_string());
        }
        s
    }
}

/// Picks worker machines for functions.
#[derive(Debug)]
pub(crate) struct Placer {
    pub policy: PlacementPolicy,
    pub migrate_probability: Option<f64>,
    pub workers: Vec<usize>,
    round_robin: usize,
}

impl Placer {
    pub fn new(policy: PlacementPolicy, migrate_probability: Option<f64>, workers: Vec<usize>) -> Placer {
        assert!(!workers.is_empty(), "a run needs at least one worker machine");
        Placer { policy, migrate_probability, workers, round_robin: 0 }
    }

    /// The machine for a function whose predecessor ran on `previous` (if any). `load` gives a
    /// machine's running plus waiting functions.
    pub fn place(
        &mut self,
        rng: &mut RngStream,
        previous: Option<usize>,
        ops: &[OpSpec],
        workflow_id: u64,
        function: u32,
        load: impl Fn(usize) -> u64,
    ) -> usize {
        // A migrating function may go anywhere but where its predecessor ran.
        let others: Vec<usize>;
        let mut candidates: &[usize] = &self.workers;
        if let (Some(p), Some(prev)) = (self.migrate_probability, previous) {
            if !rng.chance(p) {
                return prev;
            }
            others = self.workers.iter().copied().filter(|&m| m != prev).collect();
            if others.is_empty() {
                return prev;
            }
            candidates = &others;
        }
        match self.policy {
            PlacementPolicy::Random => candidates[rng.below(candidates.len() as u64) as usize],
            PlacementPolicy::RoundRobin => {
                let m = candidates[self.round_robin % candidates.len()];
                self.round_robin += 1;
                m
            }
            PlacementPolicy::Sticky => match previous {
                Some(prev) if candidates.contains(&prev) => prev,
                _ => candidates[rng.below(candidates.len() as u64) as usize],
            },
            PlacementPolicy::LeastLoaded => *candidates.iter().min_by_key(|&&m| (load(m), m)).expect("candidates are not empty"),
            PlacementPolicy::HashOfInput => {
                let mut h = match ops.first() {
                    Some(OpSpec::Read(k) | OpSpec::Write(k)) => *k,
                    Some(OpSpec::ReadTxn(keys)) => keys.first().copied().unwrap_or(0),
                    Some(OpSpec::Log(op)) => op.book(),
                    None => workflow_id.wrapping_mul(31).wrapping_add(function as u64),
                };
                let hash = splitmix64(&mut h);
                candidates[(hash % candidates.len() as u64) as usize]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamId;

    fn rng() -> RngStream {
        RngStream::new(5, StreamId::Scheduler)
    }

    #[test]
    fn round_robin_cycles_and_least_loaded_picks_the_idlest() {
        let mut p = Placer::new(PlacementPolicy::RoundRobin, None, vec![0, 1, 2]);
        let got: Vec<usize> = (0..6).map(|_| p.place(&mut rng(), None, &[], 0, 0, |_| 0)).collect();
        assert_eq!(got, [0, 1, 2, 0, 1, 2]);
        let mut p = Placer::new(PlacementPolicy::LeastLoaded, None, vec![0, 1, 2]);
        assert_eq!(p.place(&mut rng(), None, &[], 0, 0, |m| [5, 1, 1][m]), 1);
    }

    #[test]
    fn sticky_stays_and_migration_moves_with_the_given_probability() {
        let mut r = rng();
        let mut sticky = Placer::new(PlacementPolicy::Sticky, None, vec![0, 1, 2, 3]);
        assert!((0..100).all(|_| sticky.place(&mut r, Some(2), &[], 0, 1, |_| 0) == 2));
        let mut migrating = Placer::new(PlacementPolicy::Random, Some(0.25), vec![0, 1, 2, 3]);
        let moved = (0..40_000).filter(|_| migrating.place(&mut r, Some(2), &[], 0, 1, |_| 0) != 2).count();
        assert!((9_400..10_600).contains(&moved), "{moved}");
    }

    #[test]
    fn hash_of_input_is_a_function_of_the_first_key() {
        let mut p = Placer::new(PlacementPolicy::HashOfInput, None, vec![0, 1, 2, 3, 4]);
        let a = p.place(&mut rng(), None, &[OpSpec::Read(77)], 1, 0, |_| 0);
        let b = p.place(&mut rng(), None, &[OpSpec::Write(77)], 9, 2, |_| 0);
        assert_eq!(a, b);
    }
}
