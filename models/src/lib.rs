//! `causim-models`: protocol state machines, one module per system.
//!
//! Each model is a set of sans-IO nodes (see `causim_sim::node`) plus a [`Model`] impl that
//! builds it from a scenario's `protocol` object. The same nodes run in the engine, under
//! Stateright (`causim-specs`) and in unit tests.
//!
//! **Architecture invariant:** models read no clock, no RNG and no environment, hold no
//! `HashMap` in node state, and use nothing from `causim_sim` but its node interface and
//! data types.
//!
//! Start with [`register`], the teaching protocol, and [`catalogue`], the list of protocols
//! (it says how to add one).

pub mod boki;
pub mod catalogue;
pub mod causalmesh;
pub mod concord;
pub mod derived;
pub mod direct;
pub mod eventual;
pub mod faastcc;
pub mod fault_model;
pub mod hydrocache;
pub mod lru;
pub mod metrics;
pub mod mucache;
pub mod register;
pub mod tcc_store;
pub mod txn_client;

use causim_checkers::Level;
use causim_sim::config::{SimConfig, TopologyConfig};
use causim_sim::error::FieldError;
use causim_sim::protocol::Protocol;
use proptest::strategy::{BoxedStrategy, Just, Strategy};
use serde::de::DeserializeOwned;

pub use catalogue::{Entry, Mutant, PROTOCOLS};
pub use fault_model::{Fault, FaultModel, Support};

/// A protocol model that scenarios can name, listed in the [`catalogue`].
pub trait Model: Protocol + Sized {
    /// The model's catalogue entry: name, level, mutants, profile.
    const ENTRY: Entry;

    /// Builds the model from `protocol.params` (JSON, possibly `null`), the mutants switched on
    /// (already checked against the entry's mutants) and the topology. Errors name a path
    /// relative to the `protocol` object (`params.ring_size`), or start with `topology`.
    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, FieldError>;

    /// Protocol parameters worth varying when fuzzing, as `protocol.params` JSON. They must keep
    /// the protocol correct (the fuzzer checks the history at the entry's level).
    fn fuzz_params() -> BoxedStrategy<serde_json::Value> {
        Just(serde_json::json!({})).boxed()
    }

    /// The level a run with these `protocol.params` (valid ones) is checked at: the entry's,
    /// unless a parameter changes what the protocol promises (Concord's `transactions`). The
    /// fuzzer checks each case at the level of the parameters it drew.
    fn level_for(params: &serde_json::Value) -> Level {
        let _ = params;
        Self::ENTRY.level
    }

    /// The faults a run with these `protocol.params` survives: the entry's fault model, unless
    /// a parameter narrows it. A scenario is refused faults outside it; the fuzzer draws only
    /// faults inside it.
    fn faults_for(params: &serde_json::Value) -> FaultModel {
        let _ = params;
        Self::ENTRY.faults
    }

    /// True when each key's written values increase in commit order in every history the model
    /// writes (a log-based store writing commit seqnums): the header then declares
    /// `"version_order": "values"` and `si` is decided in one pass.
    const VERSION_ORDER_VALUES: bool = false;

    /// Refuses what the model cannot run faithfully (faults it does not handle, operations it
    /// does not have), with an error naming the scenario field (`faults.crashes`, ...).
    fn check_run(config: &SimConfig) -> Result<(), FieldError> {
        let _ = config;
        Ok(())
    }
}

/// Deserializes `params` (treating `null` as `{}`), naming the failing field.
pub fn parse_params<T: DeserializeOwned>(params: &serde_json::Value) -> Result<T, FieldError> {
    let value = if params.is_null() { serde_json::json!({}) } else { params.clone() };
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner == "." { "params".to_string() } else { format!("params.{inner}") };
        FieldError::new(path, e.into_inner().to_string())
    })
}

/// Checks mutant names against a protocol's catalogue entry; errors name `mutants[i]`.
pub fn check_mutants<'a>(entry: &Entry, mutants: &'a [String]) -> Result<Vec<&'a str>, FieldError> {
    let mut seen = Vec::new();
    for (i, m) in mutants.iter().enumerate() {
        if entry.mutant(m).is_none() {
            let names: Vec<&str> = entry.mutants.iter().map(|m| m.name).collect();
            let expected = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return Err(FieldError::new(
                format!("mutants[{i}]"),
                format!("unknown mutant {m:?} for protocol {}; known mutants: {expected}", entry.name),
            ));
        }
        if seen.contains(&m.as_str()) {
            return Err(FieldError::new(format!("mutants[{i}]"), format!("mutant {m:?} is listed twice")));
        }
        seen.push(m.as_str());
    }
    Ok(seen)
}
