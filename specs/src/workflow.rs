//! What the Stateright models of workflow transactions share (`causalmesh_tcc_model.rs`,
//! `faastcc_model.rs`): a workflow is a DAG of functions with fixed operations; a function
//! starts from its predecessors' contexts, joined as the engine joins them, runs as the client
//! node the simulator spawns (`Protocol::spawn_function`), and hands its context on when it
//! ends; the workflows' records make a history the checker judges at level `tcc`.

use crate::actor::{Hosted, node_id};
use causim_checkers::{Level, Report};
use causim_sim::history::{HistoryHeader, HistoryWriter, Key, Names, SessionRef, TxnRecord, Value};
use causim_sim::node::{Node, NodeId, Outbox};
use causim_sim::protocol::{FunctionStart, Protocol};
use causim_sim::workload::Op;
use stateright::actor::Id;

/// One function of a workflow: its operations (write values are assigned by the model) and the
/// functions that must finish first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FunctionPlan {
    pub ops: Vec<PlanOp>,
    pub after: Vec<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlanOp {
    Read(Key),
    Write(Key),
}

impl FunctionPlan {
    pub fn new(ops: &[PlanOp], after: &[usize]) -> FunctionPlan {
        FunctionPlan { ops: ops.to_vec(), after: after.to_vec() }
    }

    pub fn reads(&self) -> bool {
        self.ops.iter().any(|op| matches!(op, PlanOp::Read(_)))
    }
}

/// Where a workflow's function is: waiting, running as a hosted node, or done with the context
/// it hands on.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Function<N, C> {
    Waiting,
    Running(Hosted<N>),
    Done(C),
}

/// The functions of a workflow (`plan`, in the state `functions`) that may start: waiting, with
/// every predecessor done.
pub fn ready<'a, N, C>(plan: &'a [FunctionPlan], functions: &'a [Function<N, C>]) -> impl Iterator<Item = usize> + 'a {
    plan.iter().enumerate().filter_map(move |(i, f)| {
        let ready = matches!(functions[i], Function::Waiting) && f.after.iter().all(|&p| matches!(functions[p], Function::Done(_)));
        ready.then_some(i)
    })
}

/// A workflow's function to start: which one, where, and what its writes write.
pub struct Start<'a, P: Protocol> {
    pub protocol: &'a P,
    /// The workflow's actor, which hosts its functions.
    pub actor: Id,
    pub workflow: usize,
    pub plan: &'a [FunctionPlan],
    pub functions: &'a [Function<P::Node, P::Context>],
    pub function: usize,
    /// The worker (server) it runs on, whose fixed node is colocated with it.
    pub machine: usize,
    pub value: Value,
}

/// What a protocol's node did: its sends, timers and records.
pub type NodeOutbox<P> = Outbox<<<P as Protocol>::Node as Node>::Msg, <<P as Protocol>::Node as Node>::Timer>;

/// Spawns and starts a function as the engine does: from a new context at a source, else from
/// its predecessors' contexts joined by the protocol. Returns it, and what it did on starting.
pub fn start<P: Protocol>(s: Start<'_, P>) -> (Hosted<P::Node>, NodeOutbox<P>) {
    let plan = &s.plan[s.function];
    let contexts: Vec<P::Context> = plan
        .after
        .iter()
        .map(|&p| match &s.functions[p] {
            Function::Done(ctx) => ctx.clone(),
            _ => unreachable!("a function starts after its predecessors"),
        })
        .collect();
    let context = if contexts.is_empty() { s.protocol.new_context() } else { s.protocol.join_contexts(contexts) };
    let ops = plan
        .ops
        .iter()
        .map(|op| match *op {
            PlanOp::Read(key) => Op::Read { key },
            PlanOp::Write(key) => Op::Write { key, value: s.value },
        })
        .collect();
    let colocated = [NodeId::fixed(s.machine)];
    let done = s.functions.iter().filter(|f| matches!(f, Function::Done(_))).count();
    let node = s.protocol.spawn_function(FunctionStart {
        self_id: node_id(s.actor),
        workflow_id: s.workflow as u64,
        attempt: 1,
        function: s.function as u32,
        machine: s.machine,
        colocated: &colocated,
        ops,
        context,
        is_source: plan.after.is_empty(),
        is_sink: s.function + 1 == s.plan.len(),
        remaining: s.plan.len() - 1 - done,
        now: 0,
    });
    let mut hosted = Hosted { node, records: Vec::new(), done: false, aborted: None };
    let mut outbox = Outbox::new(false);
    hosted.node.on_start(0, &mut outbox);
    (hosted, outbox)
}

/// The workflows' records (by workflow name) as a history of protocol `protocol`, aborted
/// attempts too, as the simulator records them, checked at level `tcc`.
pub fn check_tcc_history<'a>(
    protocol: &str,
    node_names: &[String],
    key_names: &[String],
    workflows: impl IntoIterator<Item = (&'a str, &'a [TxnRecord])>,
) -> Report {
    let buf = causim_sim::buffer::SharedBuffer::default();
    let mut writer = HistoryWriter::new(Box::new(buf.clone()));
    let names = Names::new(node_names, key_names);
    writer.header(&HistoryHeader::of_model_checker(protocol)).expect("in memory");
    let mut id = 0;
    for (index, (name, records)) in workflows.into_iter().enumerate() {
        for record in records {
            let session = SessionRef { workflow_name: Some(name), workflow_id: index as u64, attempt: 1, function: 0, per_function: false };
            writer.write(id, session, &[], record, &names).expect("in memory");
            id += 1;
        }
    }
    let history = causim_checkers::read_history(buf.text().as_bytes(), None).expect("the simulator's history is well formed");
    let options = causim_checkers::CheckOptions { threads: 1, ..causim_checkers::CheckOptions::default() };
    causim_checkers::check_with(&history, Level::Tcc, &options)
}
