//! `causim-pipeline`: a scenario file in, a checked run out — the one path every host of a run
//! takes (the `causim` command, its sweeps and fuzzer, the Stateright replays in `causim-specs`,
//! and the tests).
//!
//! - [`scenario`]: the typed scenario (`causim-scenario/1`) and its loader, whose errors name
//!   the file, line, column and field;
//! - [`run`]: the protocol from the catalogue (`causim_models::catalogue`), the engine, the
//!   history, trace and summary files, the history check and the determinism self-check;
//! - [`output`]: a run's output folder, replaced only as a whole and only by a run that
//!   succeeded;
//! - [`out_file`]: output files opened without following symbolic links;
//! - [`limits`]: the documented maxima of a scenario, checked when it is loaded;
//! - [`locate`]: where a JSON path sits in a file's text.
//!
//! **Architecture invariant:** no protocol is named here: a scenario's `protocol.name` reaches
//! its model only through the catalogue's visitor.

pub mod limits;
pub mod locate;
pub mod out_file;
pub mod output;
pub mod run;
pub mod scenario;

pub use run::{RunError, RunOptions, RunReport, run};
pub use scenario::{LoadedScenario, Scenario, ScenarioError};
