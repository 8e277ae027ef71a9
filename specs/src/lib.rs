//! `causim-specs`: formal cross-validation. Stateright hosts the models/ state machines
//! ([`actor`]); TLA+ specs live beside this crate (`specs/<protocol>/`) and run under TLC
//! through [`tlc`].

pub mod actor;
pub mod boki_model;
pub mod causalmesh_model;
pub mod causalmesh_replay;
pub mod causalmesh_tcc_model;
pub mod causalmesh_tla;
pub mod concord_model;
pub mod faastcc_model;
pub mod mucache_model;
pub mod tlc;
pub mod trace_validation;
pub mod trace_validation_faastcc;
pub mod trace_validation_tcc;
pub mod workflow;

/// Stateright, for users of the models (the `causim` command) that do not depend on it directly.
pub use stateright;
