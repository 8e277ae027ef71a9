//! `causim-specs`: formal cross-validation. Stateright hosts the models/ state machines
//! ([`actor`]); TLA+ specs live beside this crate and run under TLC.

pub mod actor;
