//! The Stateright adapter hosts the teaching protocol's nodes unchanged and model-checks them:
//! the correct sync-replicated register gives read-your-writes across machines; the
//! `early_ack` mutant does not, and Stateright finds the shortest counterexample.

use causim_models::register::{Register, RegisterContext, RegisterNode, RegisterParams, Replication};
use causim_sim::history::OpKind;
use causim_sim::node::NodeId;
use causim_sim::protocol::{FunctionStart, Protocol};
use causim_sim::workload::Op;
use causim_specs::actor::{Hosted, NodeActor};
use stateright::actor::{ActorModel, ActorModelAction, Network};
use stateright::{Checker, Expectation, Model};

const CLIENT: usize = 2;

/// Two replicas (S0 primary, S1 backup) and one client on S1's machine that writes x, then
/// reads x at S1.
fn model(early_ack: bool) -> ActorModel<NodeActor<RegisterNode>, (), ()> {
    let protocol = Register { servers: 2, params: RegisterParams { replication: Replication::Sync, session_guarantees: false }, early_ack };
    let replicas: Vec<NodeActor<RegisterNode>> = protocol.fixed_nodes().into_iter().map(|f| NodeActor { initial: f.node }).collect();
    let client = protocol.spawn_function(FunctionStart {
        self_id: NodeId::fixed(CLIENT),
        workflow_id: 0,
        attempt: 1,
        function: 0,
        machine: 1,
        colocated: &[NodeId::fixed(1)],
        ops: vec![Op::Write { key: 0, value: 1 }, Op::Read { key: 0 }],
        context: RegisterContext::default(),
        is_source: true,
        is_sink: true,
        remaining: 0,
        now: 0,
    });
    ActorModel::new((), ())
        .actors(replicas)
        .actor(NodeActor { initial: client })
        .init_network(Network::new_ordered([]))
        .property(Expectation::Always, "reads see the session's own writes", |_, state| reads_see_own_writes(&state.actor_states[CLIENT]))
        .property(Expectation::Sometimes, "the session completes", |_, state| state.actor_states[CLIENT].done)
}

fn reads_see_own_writes(client: &Hosted<RegisterNode>) -> bool {
    let mut written = std::collections::BTreeMap::new();
    for op in client.records.iter().flat_map(|r| &r.ops) {
        match op.kind {
            OpKind::Write => {
                written.insert(op.key, op.value);
            }
            OpKind::Read => {
                if let Some(w) = written.get(&op.key)
                    && op.value < *w
                {
                    return false;
                }
            }
        }
    }
    true
}

#[test]
fn sync_replication_gives_read_your_writes() {
    let checker = model(false).checker().spawn_bfs().join();
    checker.assert_properties();
    // Pinned so an accidental change of the protocol's state space shows up as a diff.
    assert_eq!(checker.unique_state_count(), 8);
}

#[test]
fn early_ack_is_caught_with_the_shortest_counterexample() {
    use causim_models::register::Msg::*;
    let checker = model(true).checker().spawn_bfs().join();
    // The primary acknowledges before S1 has the write; the client's read reaches S1 first.
    checker.assert_discovery(
        "reads see the session's own writes",
        vec![
            deliver(2, 1, Write { key: 0, value: 1 }),
            deliver(1, 0, Forward { key: 0, value: 1, client: NodeId::fixed(2) }),
            deliver(0, 2, WriteAck { key: 0, version: 1 }),
            deliver(2, 1, Read { key: 0 }),
            deliver(1, 2, ReadReply { key: 0, value: None, version: 0 }),
        ],
    );
}

fn deliver(src: usize, dst: usize, msg: causim_models::register::Msg) -> ActorModelAction<causim_models::register::Msg, (), ()> {
    ActorModelAction::Deliver { src: src.into(), dst: dst.into(), msg }
}
