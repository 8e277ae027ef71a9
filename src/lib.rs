//! `causim`: the library behind the command-line tool. It reads scenario files, builds a
//! simulation from `causim-sim` and `causim-models`, runs it, and reports.

pub mod account;
pub mod chart;
pub mod fuzz;
pub mod locate;
pub mod plot;
pub mod progress;
pub mod report;
pub mod reproduce;
pub mod runner;
pub mod scenario;
pub mod sweep;
