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
//! Start with [`register`], the teaching protocol.

pub mod causalmesh;
pub mod direct;
pub mod eventual;
pub mod faastcc;
pub mod hydrocache;
pub mod register;
pub mod tcc_store;

use causim_sim::config::TopologyConfig;
use causim_sim::protocol::Protocol;
use serde::de::DeserializeOwned;

/// A scenario problem in the `protocol` object: a path relative to it (`params.replication`,
/// `mutants[1]`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError {
    pub path: String,
    pub message: String,
}

/// A protocol model that scenarios can name.
pub trait Model: Protocol + Sized {
    /// The scenario's `protocol.name`.
    const NAME: &'static str;
    /// Named bugs: `(name, one sentence: the safeguard it removes and the anomaly it allows)`.
    const MUTANTS: &'static [(&'static str, &'static str)];

    /// Builds the model from `protocol.params` (JSON, possibly `null`), the mutants switched on
    /// (already checked against [`Model::MUTANTS`]) and the topology.
    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, ModelError>;
}

/// The protocol names a scenario may use.
pub const PROTOCOLS: &[&str] = &[
    register::Register::NAME,
    causalmesh::CausalMesh::NAME,
    causalmesh::CausalMeshTcc::NAME,
    eventual::Eventual::NAME,
    direct::Direct::NAME,
    faastcc::Faastcc::NAME,
    hydrocache::HydroCache::NAME,
];

/// Deserializes `params` (treating `null` as `{}`), naming the failing field.
pub fn parse_params<T: DeserializeOwned>(params: &serde_json::Value) -> Result<T, ModelError> {
    let value = if params.is_null() { serde_json::json!({}) } else { params.clone() };
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let path = if inner == "." { "params".to_string() } else { format!("params.{inner}") };
        ModelError { path, message: e.into_inner().to_string() }
    })
}

/// Checks mutant names against a model's catalogue.
pub fn check_mutants<'a>(model: &str, mutants: &'a [String], known: &[(&str, &str)]) -> Result<Vec<&'a str>, ModelError> {
    let mut seen = Vec::new();
    for (i, m) in mutants.iter().enumerate() {
        if !known.iter().any(|(name, _)| name == m) {
            let names: Vec<&str> = known.iter().map(|(n, _)| *n).collect();
            let expected = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return Err(ModelError {
                path: format!("mutants[{i}]"),
                message: format!("unknown mutant {m:?} for protocol {model}; known mutants: {expected}"),
            });
        }
        if seen.contains(&m.as_str()) {
            return Err(ModelError { path: format!("mutants[{i}]"), message: format!("mutant {m:?} is listed twice") });
        }
        seen.push(m.as_str());
    }
    Ok(seen)
}

impl Model for register::Register {
    const NAME: &'static str = "register";
    const MUTANTS: &'static [(&'static str, &'static str)] = register::MUTANTS;

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, ModelError> {
        let params: register::RegisterParams = parse_params(params)?;
        Ok(register::Register { servers: topology.servers, params, early_ack: mutants.contains(&"early_ack") })
    }
}

impl Model for faastcc::Faastcc {
    const NAME: &'static str = "faastcc";
    const MUTANTS: &'static [(&'static str, &'static str)] = faastcc::MUTANTS;

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, ModelError> {
        let params: faastcc::FaastccParams = parse_params(params)?;
        params.validate().map_err(|(field, message)| ModelError { path: format!("params.{field}"), message })?;
        Ok(faastcc::Faastcc::new(topology.servers, params, mutants))
    }
}

impl Model for hydrocache::HydroCache {
    const NAME: &'static str = "hydrocache";
    const MUTANTS: &'static [(&'static str, &'static str)] = hydrocache::MUTANTS;

    fn build(params: &serde_json::Value, mutants: &[&str], topology: &TopologyConfig) -> Result<Self, ModelError> {
        let params: hydrocache::HydroParams = parse_params(params)?;
        params.validate().map_err(|(field, message)| ModelError { path: format!("params.{field}"), message })?;
        Ok(hydrocache::HydroCache::new(topology.servers, params, mutants))
    }
}
