//! The sans-IO node interface: every protocol participant is a value driven by inputs.
//!
//! A cache server, a sequencer, a database, or the client library running inside one function
//! of a workflow is a plain state machine. It performs no IO, reads no clock and draws no
//! randomness of its own. A *host* feeds it inputs and carries out the effects it writes into an
//! [`Outbox`]. causim has three hosts for the same code: the discrete-event engine
//! ([`crate::engine`]), Stateright (in `causim-specs`), and tests that call the handlers directly.
//!
//! # The host contract
//!
//! - Inputs are [`Node::on_start`] (once, first), [`Node::on_message`], [`Node::on_timer`] and
//!   [`Node::on_restart`] (after a crash).
//! - `now` never decreases from one call to the next. Hosts without time (Stateright) pass 0; a
//!   node must not rely on time for safety, only for metrics and timestamps it reports.
//! - The host drains the outbox completely after each call, before the next input; effects
//!   take place in the order they were written.
//! - Timers are named by value, as in Stateright: setting a timer that is already set replaces
//!   it, cancelling an unset timer does nothing.
//! - The node never draws randomness. A choice the protocol must make is an input (for example
//!   the workload, or a placement decided by the scheduler).
//! - Node state is `Clone + Debug + Hash + Eq` so model checkers can store and compare it:
//!   ordered collections (`BTreeMap`, `BTreeSet`, `Vec`) only, never `HashMap`.

use crate::history::TxnRecord;
use crate::time::Time;
use std::fmt::Debug;
use std::hash::Hash;

/// Identifies a node within one run.
///
/// Fixed nodes (servers, databases) are numbered `0..n` in the order the protocol lists them.
/// Function instances, created and retired as workflows run, have the top bit set; their id
/// also encodes a slot and a generation so a message to a retired function is never delivered
/// to a newer one that reuses its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u64);

impl NodeId {
    const FUNCTION_BIT: u64 = 1 << 63;

    pub const fn fixed(index: usize) -> NodeId {
        NodeId(index as u64)
    }

    pub(crate) fn function(slot: u32, generation: u32) -> NodeId {
        NodeId(Self::FUNCTION_BIT | ((generation as u64 & 0x7FFF_FFFF) << 32) | slot as u64)
    }

    pub fn is_function(self) -> bool {
        self.0 & Self::FUNCTION_BIT != 0
    }

    /// The index of a fixed node.
    pub fn index(self) -> usize {
        assert!(!self.is_function(), "{self:?} is a function instance, not a fixed node");
        self.0 as usize
    }

    pub(crate) fn slot(self) -> usize {
        (self.0 & 0xFFFF_FFFF) as usize
    }

    pub(crate) fn generation(self) -> u32 {
        ((self.0 >> 32) & 0x7FFF_FFFF) as u32
    }
}

/// A protocol message.
pub trait Message: Clone + Debug + Eq + Ord + Hash {
    /// A short name for the message's type, such as `ClientRead`: used for per-kind service
    /// times, message counts and traces.
    fn kind(&self) -> &'static str;

    /// The message's size on the wire, in bytes, for the bytes-sent metric. An estimate of what
    /// a compact binary encoding would take (headers excluded).
    fn size_bytes(&self) -> u64;
}

/// A protocol participant. See the module documentation for the contract with its host.
pub trait Node: Clone + Debug + Eq + Hash {
    type Msg: Message;
    type Timer: Clone + Debug + Eq + Ord + Hash;

    fn on_start(&mut self, now: Time, out: &mut Outbox<Self::Msg, Self::Timer>);

    fn on_message(&mut self, now: Time, from: NodeId, msg: Self::Msg, out: &mut Outbox<Self::Msg, Self::Timer>);

    fn on_timer(&mut self, now: Time, timer: Self::Timer, out: &mut Outbox<Self::Msg, Self::Timer>) {
        let _ = (now, timer, out);
    }

    /// The node restarts after a crash. It must first drop what a real process would lose (its
    /// volatile state); what it keeps models its durable storage. Timers set before the crash
    /// are gone. The default keeps nothing special and starts again.
    fn on_restart(&mut self, now: Time, out: &mut Outbox<Self::Msg, Self::Timer>) {
        self.on_start(now, out)
    }

    /// Checks the node's internal invariants (for example "the C-cache is a causal cut").
    /// Hosts call it after every input when invariant checking is on. `Err` describes the
    /// violation in one sentence.
    fn check_invariants(&self) -> Result<(), String> {
        Ok(())
    }
}

/// What a node asks its host to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect<M, T> {
    Send {
        to: NodeId,
        msg: M,
    },
    SetTimer {
        timer: T,
        after_ns: Time,
    },
    /// A timer whose delay the host draws from `after` (its seeded protocol stream): how a
    /// node asks for a random delay without drawing randomness itself.
    SetTimerSampled {
        timer: T,
        after: crate::dist::DurationDist,
    },
    CancelTimer {
        timer: T,
    },
    /// A function instance finished its operations; the host retires it and hands its workflow
    /// context to the next functions.
    FunctionDone,
    /// A function instance asks for its whole workflow to be aborted and retried from the start
    /// (for example a read transaction that cannot be served from one cut).
    AbortWorkflow {
        reason: &'static str,
    },
}

/// A protocol-level step for the trace, named like the TLA+ spec's actions (`ClientWrite`,
/// `TailIntegrate`, ...). `args` is a JSON object rendered by the node.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceAction {
    pub action: &'static str,
    pub args: String,
}

/// The effects of one input, drained by the host after each call.
#[derive(Clone, Debug, PartialEq)]
pub struct Outbox<M, T> {
    pub effects: Vec<Effect<M, T>>,
    /// Transactions the node observed completing (function instances only).
    pub records: Vec<TxnRecord>,
    pub actions: Vec<TraceAction>,
    /// Named samples for the summary, such as `visibility_ns` or `metadata_bytes`.
    pub observations: Vec<(&'static str, u64)>,
    /// Named events to count, such as `cache_hit`.
    pub counts: Vec<&'static str>,
    tracing: bool,
}

impl<M, T> Default for Outbox<M, T> {
    fn default() -> Self {
        Outbox {
            effects: Vec::new(),
            records: Vec::new(),
            actions: Vec::new(),
            observations: Vec::new(),
            counts: Vec::new(),
            tracing: false,
        }
    }
}

impl<M, T> Outbox<M, T> {
    pub fn new(tracing: bool) -> Self {
        Outbox { tracing, ..Default::default() }
    }

    pub fn send(&mut self, to: NodeId, msg: M) {
        self.effects.push(Effect::Send { to, msg });
    }

    pub fn set_timer(&mut self, timer: T, after_ns: Time) {
        self.effects.push(Effect::SetTimer { timer, after_ns });
    }

    /// Sets a timer whose delay the host draws from `after`.
    pub fn set_timer_sampled(&mut self, timer: T, after: crate::dist::DurationDist) {
        self.effects.push(Effect::SetTimerSampled { timer, after });
    }

    pub fn cancel_timer(&mut self, timer: T) {
        self.effects.push(Effect::CancelTimer { timer });
    }

    pub fn function_done(&mut self) {
        self.effects.push(Effect::FunctionDone);
    }

    pub fn abort_workflow(&mut self, reason: &'static str) {
        self.effects.push(Effect::AbortWorkflow { reason });
    }

    pub fn record(&mut self, record: TxnRecord) {
        self.records.push(record);
    }

    pub fn observe(&mut self, metric: &'static str, value: u64) {
        self.observations.push((metric, value));
    }

    /// Counts one occurrence of `metric` (reported in the summary's `counters`).
    pub fn count(&mut self, metric: &'static str) {
        self.counts.push(metric);
    }

    /// True when the host records a trace; nodes render trace arguments only then.
    pub fn tracing(&self) -> bool {
        self.tracing
    }

    /// Records a protocol step in the trace. `args` is called only when tracing is on.
    pub fn trace(&mut self, action: &'static str, args: impl FnOnce() -> String) {
        if self.tracing {
            self.actions.push(TraceAction { action, args: args() });
        }
    }

    pub fn is_empty(&self) -> bool {
        self.effects.is_empty()
            && self.records.is_empty()
            && self.actions.is_empty()
            && self.observations.is_empty()
            && self.counts.is_empty()
    }

    pub fn clear(&mut self) {
        self.effects.clear();
        self.records.clear();
        self.actions.clear();
        self.observations.clear();
        self.counts.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_ids_round_trip_slot_and_generation() {
        let id = NodeId::function(12345, 77);
        assert!(id.is_function());
        assert_eq!(id.slot(), 12345);
        assert_eq!(id.generation(), 77);
        assert!(!NodeId::fixed(3).is_function());
        assert_eq!(NodeId::fixed(3).index(), 3);
        assert_ne!(NodeId::function(1, 1), NodeId::function(1, 2));
    }

    #[test]
    fn trace_arguments_are_rendered_only_when_tracing() {
        let mut quiet: Outbox<(), ()> = Outbox::new(false);
        quiet.trace("Step", || panic!("must not be rendered"));
        assert!(quiet.actions.is_empty());
        let mut loud: Outbox<(), ()> = Outbox::new(true);
        loud.trace("Step", || "{}".to_string());
        assert_eq!(loud.actions.len(), 1);
    }
}
