//! `causim-specs`: formal cross-validation. Stateright hosts the models/ state machines
//! ([`actor`]); TLA+ specs live beside this crate (`specs/<protocol>/`) and run under TLC
//! through [`tlc`].

pub mod actor;
pub mod tlc;
