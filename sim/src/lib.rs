//! `causim-sim`: the deterministic discrete-event engine of causim.
//!
//! - [`node`]: the sans-IO node interface every protocol implements;
//! - [`protocol`]: what a protocol model gives the engine (fixed nodes, function instances);
//! - [`engine`]: the event loop hosting them on machines with links, cores and faults;
//! - [`config`], [`workload`], [`workflow`]: the scenario fields the engine reads;
//! - [`history`], [`trace`], [`metrics`]: what a run records;
//! - [`rng`], [`dist`], [`queue`], [`time`]: the deterministic building blocks;
//! - [`buffer`]: an in-memory sink for the writers;
//! - [`error`]: the error for a problem at a field of the input.
//!
//! **Architecture invariant:** nothing here reads the wall clock, the environment or an
//! unseeded random source, and no output depends on `HashMap` iteration order.

pub mod buffer;
pub mod config;
pub mod cost;
pub mod dist;
pub mod engine;
pub mod error;
pub mod history;
pub mod metrics;
pub mod node;
pub mod protocol;
pub mod queue;
pub mod rng;
pub mod time;
pub mod trace;
pub mod workflow;
pub mod workload;

pub use engine::{RunOutputs, Sim};
pub use error::FieldError;
pub use node::{Effect, Message, Node, NodeId, Outbox};
pub use protocol::{FixedNode, FunctionStart, Protocol};
pub use time::Time;
