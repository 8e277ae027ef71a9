//! What a protocol model gives the engine: its fixed nodes, and the client library that runs
//! inside each function of a workflow.

use crate::history::{Key, Value};
use crate::node::{Node, NodeId};
use crate::time::Time;
use crate::workload::Op;
use std::fmt::Debug;

/// A fixed node (server, database, sequencer) and where it runs.
#[derive(Clone, Debug)]
pub struct FixedNode<N> {
    /// Unique name, used in scenarios, histories and traces (`S0`, `db`).
    pub name: String,
    /// The machine it runs on. Links, delays and partitions are between machines.
    pub machine: String,
    /// True when its machine also runs serverless workers (functions are placed there).
    pub hosts_workers: bool,
    pub node: N,
}

/// Everything a new function instance is told when the scheduler starts it.
#[derive(Clone, Debug)]
pub struct FunctionStart<'a, C> {
    pub self_id: NodeId,
    pub workflow_id: u64,
    pub attempt: u32,
    pub function: u32,
    /// The worker machine it runs on (an index into the run's machine list).
    pub machine: usize,
    /// The fixed nodes on that machine, in fixed-node order (usually its cache server).
    pub colocated: &'a [NodeId],
    /// Its operations, with written values assigned.
    pub ops: Vec<Op>,
    /// The workflow context its predecessors produced (merged at a join).
    pub context: C,
    pub is_source: bool,
    pub is_sink: bool,
    /// The workflow's other functions that have not finished yet, excluding this one (a sink
    /// with `remaining == 0` is the workflow's last function).
    pub remaining: usize,
    pub now: Time,
}

/// A protocol model: a factory for its nodes and the contract for workflow contexts.
pub trait Protocol {
    /// One type for every role (servers and function instances), usually an enum.
    type Node: Node;
    /// The client metadata a workflow carries from function to function.
    type Context: Clone + Debug;

    /// The fixed nodes, in `NodeId` order.
    fn fixed_nodes(&self) -> Vec<FixedNode<Self::Node>>;

    /// The context of a workflow attempt before its first function runs.
    fn new_context(&self) -> Self::Context;

    /// A function instance that runs `start.ops` with `start.context`.
    fn spawn_function(&self, start: FunctionStart<'_, Self::Context>) -> Self::Node;

    /// Takes back the context of a function instance that reported `FunctionDone`.
    fn finish_function(&self, node: Self::Node) -> Self::Context;

    /// The context a retried attempt starts from, given the function instance that aborted
    /// the workflow: what the failed attempt learned (e.g. versions the retry must not read
    /// older than). `None`, the default, starts afresh from `new_context`.
    fn retry_context(&self, aborting: &Self::Node) -> Option<Self::Context> {
        let _ = aborting;
        None
    }

    /// The writes a function instance has sent to be committed and not seen answered: what
    /// may have taken effect though no history line reports it, when the instance is killed or
    /// the run ends. `None`, the default: the protocol does not say, and the engine counts
    /// every write the instance (and, for a sink, its finished predecessors) left unreported.
    /// A protocol that buffers a transaction's writes says exactly which it sent: only those
    /// can take effect, one per key, where the engine's guess lists every intermediate write
    /// in an order the protocol's join need not share.
    fn in_flight_writes(&self, node: &Self::Node) -> Option<Vec<(Key, Value)>> {
        let _ = node;
        None
    }

    /// Merges the contexts of a join's predecessors (in predecessor order).
    fn join_contexts(&self, contexts: Vec<Self::Context>) -> Self::Context;

    /// True when a workflow must end in exactly one function (a transaction that commits at
    /// the end, like CausalMesh-TCC's). The engine then gives a workflow with several leaves a
    /// dummy join function with no operations.
    fn single_sink(&self) -> bool {
        false
    }

    /// True when a workflow must start in exactly one function (a transaction whose start
    /// fixes its snapshot, like BokiStore's `txn_start`, or a coordinator that prepares it, like
    /// HydroCache-Con's). The engine then gives a workflow with several sources a dummy source
    /// function with no operations, before them all.
    fn single_source(&self) -> bool {
        false
    }

    /// Extra summary figures computed from the fixed nodes' final states (e.g. metadata bytes).
    fn final_metrics(&self, nodes: &[&Self::Node]) -> Vec<(String, f64)> {
        let _ = nodes;
        Vec::new()
    }
}
