//! `causim`: the library behind the command-line tool. It reads scenario files, builds a
//! simulation from `causim-sim` and `causim-models`, runs it, and reports.

pub mod account;
pub mod locate;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod progress;
pub mod sweep;
pub mod chart;
pub mod plot;
pub mod reproduce;
pub mod fuzz;
pub mod view;
