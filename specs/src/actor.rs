//! Hosts causim's sans-IO nodes as Stateright actors, unchanged.
//!
//! A node's `Outbox` maps one-to-one onto Stateright's `Out`: `Send` → `send`, `SetTimer` →
//! `set_timer` (the delay is irrelevant to the model checker: any timer may fire at any time),
//! `CancelTimer` → `cancel_timer`. Stateright has no clock, so nodes see `now = 0`.
//!
//! What Stateright cannot host directly, the actor state records instead: history records
//! (so properties can judge what clients observed), whether a function instance reported
//! `FunctionDone`, and workflow aborts. Node ids map to actor ids by index: fixed node `i` is
//! actor `i`, and the model builder places client actors after the fixed nodes.

use causim_sim::history::TxnRecord;
use causim_sim::node::{Effect, Node, NodeId, Outbox};
use stateright::actor::{Actor, ActorModel, ActorModelAction, ActorModelState, Id, Out};
use std::borrow::Cow;
use std::time::Duration;

/// A node as a Stateright actor: the value here is the node's initial state.
#[derive(Clone, Debug)]
pub struct NodeActor<N> {
    pub initial: N,
}

/// The actor state: the node, plus what the node reported to its host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hosted<N> {
    pub node: N,
    /// Transactions this node completed (function instances only), in order.
    pub records: Vec<TxnRecord>,
    pub done: bool,
    pub aborted: Option<&'static str>,
}

/// The actor id of a causim node id (fixed nodes and model clients alike are indexes).
pub fn actor_id(node: NodeId) -> Id {
    Id::from((node.0 & !(1 << 63)) as usize)
}

/// The causim node id of an actor id.
pub fn node_id(id: Id) -> NodeId {
    NodeId::fixed(usize::from(id))
}

/// Carries out a node's outbox on behalf of any actor whose messages and timers are the node's:
/// sends and timers go to Stateright's `Out`, records and the function's end or abort to
/// `hosted`. Hosts that wrap nodes in their own actor (a roaming session) use it too.
pub fn forward_outbox<N, A>(hosted: &mut Hosted<N>, mut outbox: Outbox<N::Msg, N::Timer>, o: &mut Out<A>)
where
    N: Node,
    A: Actor<Msg = N::Msg, Timer = N::Timer>,
{
    hosted.records.append(&mut outbox.records);
    for effect in outbox.effects.drain(..) {
        match effect {
            Effect::Send { to, msg } => o.send(actor_id(to), msg),
            Effect::SetTimer { timer, after_ns } => {
                let d = Duration::from_nanos(after_ns);
                o.set_timer(timer, d..d + Duration::from_nanos(1));
            }
            Effect::SetTimerSampled { timer, after } => {
                // Any delay: the model checker lets timers fire in any order anyway.
                let d = Duration::from_nanos(after.mean_ns() as u64);
                o.set_timer(timer, d..d + Duration::from_nanos(1));
            }
            Effect::CancelTimer { timer } => o.cancel_timer(timer),
            Effect::FunctionDone => hosted.done = true,
            Effect::AbortWorkflow { reason } => hosted.aborted = Some(reason),
        }
    }
}

impl<N: Node> NodeActor<N> {
    fn forward(hosted: &mut Hosted<N>, outbox: Outbox<N::Msg, N::Timer>, o: &mut Out<Self>) {
        forward_outbox(hosted, outbox, o);
    }
}

impl<N: Node> Actor for NodeActor<N> {
    type Msg = N::Msg;
    type Timer = N::Timer;
    type State = Hosted<N>;
    type Storage = ();
    type Random = ();

    fn on_start(&self, _id: Id, _storage: &Option<()>, o: &mut Out<Self>) -> Hosted<N> {
        let mut hosted = Hosted { node: self.initial.clone(), records: Vec::new(), done: false, aborted: None };
        let mut outbox = Outbox::new(false);
        hosted.node.on_start(0, &mut outbox);
        Self::forward(&mut hosted, outbox, o);
        hosted
    }

    fn on_msg(&self, _id: Id, state: &mut Cow<Hosted<N>>, src: Id, msg: N::Msg, o: &mut Out<Self>) {
        let hosted = state.to_mut();
        let mut outbox = Outbox::new(false);
        hosted.node.on_message(0, node_id(src), msg, &mut outbox);
        Self::forward(hosted, outbox, o);
    }

    fn on_timeout(&self, _id: Id, state: &mut Cow<Hosted<N>>, timer: &N::Timer, o: &mut Out<Self>) {
        let hosted = state.to_mut();
        let mut outbox = Outbox::new(false);
        hosted.node.on_timer(0, timer.clone(), &mut outbox);
        Self::forward(hosted, outbox, o);
    }
}

/// The actor steps `settle` took, each with the state it was taken from.
pub type Trail<A, H> = Vec<(ActorModelState<A, H>, ActorModelAction<<A as Actor>::Msg, <A as Actor>::Timer, <A as Actor>::Random>)>;

/// One step of a model whose clients block on their requests: `step`, then the requests the
/// client that chose (a `SelectRandom`) sent on starting, then every reply to a client
/// (`is_client`), each actor step appended with the state it was taken from to `trail` when
/// given. None of these deliveries adds an interleaving a property can tell apart: a blocked
/// client's choice and request are seen by no one else, and a reply changes only its client
/// (`causalmesh_model::MeshModel::settle` argues it in full).
pub fn settle<A, C, H>(
    actors: &ActorModel<A, C, H>,
    state: &ActorModelState<A, H>,
    step: ActorModelAction<A::Msg, A::Timer, A::Random>,
    is_client: impl Fn(Id) -> bool,
    mut trail: Option<&mut Trail<A, H>>,
) -> Option<ActorModelState<A, H>>
where
    A: Actor,
    A::Msg: Ord,
    A::Timer: Ord,
    H: Clone + std::fmt::Debug + std::hash::Hash,
{
    use stateright::Model as _;
    let chooser = chooser(&step);
    let mut record = |state: &ActorModelState<A, H>, step: &ActorModelAction<A::Msg, A::Timer, A::Random>| {
        if let Some(t) = trail.as_deref_mut() {
            t.push((state.clone(), step.clone()));
        }
    };
    record(state, &step);
    let mut state = actors.next_state(state, step)?;
    deliver_requests_and_replies(&mut state, chooser, is_client, |state, step| {
        record(state, &step);
        *state = actors.next_state(state, step)?;
        Some(())
    })?;
    Some(state)
}

/// The actor whose choice `step` is (its requests are delivered with it), if it is a choice.
pub fn chooser<M, T, R>(step: &ActorModelAction<M, T, R>) -> Option<Id> {
    match step {
        ActorModelAction::SelectRandom { actor, .. } => Some(*actor),
        _ => None,
    }
}

/// What [`settle`] delivers after its first step, each delivery taken by `take` on `state`:
/// the requests `chooser` sent on starting, then every reply to a client (`is_client`).
pub fn deliver_requests_and_replies<A, H>(
    state: &mut ActorModelState<A, H>,
    chooser: Option<Id>,
    is_client: impl Fn(Id) -> bool,
    mut take: impl FnMut(&mut ActorModelState<A, H>, ActorModelAction<A::Msg, A::Timer, A::Random>) -> Option<()>,
) -> Option<()>
where
    A: Actor,
    A::Msg: Ord,
    A::Timer: Ord,
    H: Clone + std::fmt::Debug + std::hash::Hash,
{
    if let Some(chooser) = chooser {
        let requests: Vec<_> = state
            .network
            .iter_deliverable()
            .filter(|e| e.src == chooser)
            .map(|e| ActorModelAction::Deliver { src: e.src, dst: e.dst, msg: e.msg.clone() })
            .collect();
        for request in requests {
            take(state, request)?;
        }
    }
    while let Some(reply) = state.network.iter_deliverable().find(|e| is_client(e.dst)).map(|e| ActorModelAction::Deliver {
        src: e.src,
        dst: e.dst,
        msg: e.msg.clone(),
    }) {
        take(state, reply)?;
    }
    Some(())
}
