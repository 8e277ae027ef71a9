//! `causim`: the library behind the command-line tool: the user's loop around runs (sweeps,
//! figures, the reproduction report, the fuzzer) and the console reports. A single run is
//! `causim_pipeline`'s.

pub mod aborts;
pub mod account;
pub mod chart;
pub mod claim;
pub mod fuzz;
pub mod model_budget;
pub mod plot;
pub mod progress;
pub mod report;
pub mod reproduce;
pub mod sweep;
pub mod sweep_dir;
pub mod view;
