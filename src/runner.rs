//! Builds a simulation from a loaded scenario and runs it: protocol dispatch, outputs, the
//! determinism self-check.

use crate::scenario::{LoadedScenario, ScenarioError};
use causim_models::register::Register;
use causim_models::{Model, ModelError, PROTOCOLS, check_mutants};
use causim_sim::history::HistoryWriter;
use causim_sim::metrics::Summary;
use causim_sim::trace::TraceWriter;
use causim_sim::{RunOutputs, SetupError, Sim};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// How to run a scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Write `history.jsonl`, `trace.jsonl` and `summary.json` here; `None` keeps nothing but
    /// hashes.
    pub out_dir: Option<PathBuf>,
    /// Record the trace (written to `out_dir`, or hashed only).
    pub trace: bool,
}

/// The files a run wrote.
#[derive(Clone, Debug)]
pub struct OutputFiles {
    pub history: PathBuf,
    pub trace: Option<PathBuf>,
    pub summary: PathBuf,
}

#[derive(Clone, Debug)]
pub struct RunReport {
    pub summary: Summary,
    pub files: Option<OutputFiles>,
    pub seed: u64,
}

/// Why a run could not happen.
#[derive(Debug)]
pub enum RunError {
    Scenario(ScenarioError),
    Io(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Scenario(e) => write!(f, "{e}"),
            RunError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<ScenarioError> for RunError {
    fn from(e: ScenarioError) -> Self {
        RunError::Scenario(e)
    }
}

/// Runs the scenario once.
pub fn run(loaded: &LoadedScenario, options: &RunOptions) -> Result<RunReport, RunError> {
    let name = loaded.scenario.protocol.name.as_str();
    match name {
        Register::NAME => run_model::<Register>(loaded, options),
        other => Err(loaded
            .error("protocol.name", format!("unknown protocol {other:?}; known protocols: {}", PROTOCOLS.join(", ")))
            .into()),
    }
}

/// Builds the model named by the scenario, or explains what is wrong with `protocol`.
fn build_model<M: Model>(loaded: &LoadedScenario) -> Result<M, ScenarioError> {
    let p = &loaded.scenario.protocol;
    let in_protocol = |e: ModelError| loaded.error(&format!("protocol.{}", e.path), e.message);
    let mutants = check_mutants(M::NAME, &p.mutants, M::MUTANTS).map_err(in_protocol)?;
    M::build(&p.params, &mutants, &loaded.scenario.topology).map_err(in_protocol)
}

fn run_model<M: Model>(loaded: &LoadedScenario, options: &RunOptions) -> Result<RunReport, RunError> {
    let model = build_model::<M>(loaded)?;
    let mut config = loaded.scenario.sim_config();
    if let Some(seed) = options.seed {
        config.seed = seed;
    }
    let seed = config.seed;
    let header = serde_json::json!({
        "format": "causim-history/1",
        "scenario": loaded.path.display().to_string(),
        "seed": seed,
        "protocol": M::NAME,
    });
    let (mut history, trace, files) = match &options.out_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| RunError::Io(format!("cannot create {}: {e}", dir.display())))?;
            let files = OutputFiles {
                history: dir.join("history.jsonl"),
                trace: options.trace.then(|| dir.join("trace.jsonl")),
                summary: dir.join("summary.json"),
            };
            let history = HistoryWriter::new(Box::new(BufWriter::new(create(&files.history)?)));
            let trace = match &files.trace {
                Some(p) => Some(TraceWriter::new(Box::new(BufWriter::new(create(p)?)))),
                None => None,
            };
            (history, trace, Some(files))
        }
        None => (
            HistoryWriter::hashing_only(),
            options.trace.then(|| TraceWriter::new(Box::new(std::io::sink()))),
            None,
        ),
    };
    history.header(&header).map_err(|e| RunError::Io(format!("cannot write the history: {e}")))?;
    let outputs = RunOutputs {
        scenario: loaded.path.display().to_string(),
        history,
        trace,
        check_invariants: loaded.scenario.checks.invariants,
    };
    let mut sim = Sim::new(model, config, outputs).map_err(|e: SetupError| loaded.error(&e.path, e.message))?;
    let summary = sim.run();
    if let Some(io) = sim.io_error() {
        return Err(RunError::Io(io.to_string()));
    }
    if let Some(files) = &files {
        let mut resolved = loaded.scenario.clone();
        resolved.seed = seed;
        let json = serde_json::json!({ "summary": summary, "resolved_scenario": resolved });
        std::fs::write(&files.summary, serde_json::to_string_pretty(&json).expect("summaries serialize") + "\n")
            .map_err(|e| RunError::Io(format!("cannot write {}: {e}", files.summary.display())))?;
    }
    Ok(RunReport { summary, files, seed })
}

fn create(path: &Path) -> Result<File, RunError> {
    File::create(path).map_err(|e| RunError::Io(format!("cannot create {}: {e}", path.display())))
}

/// The outcome of `--check-determinism`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeterminismCheck {
    pub first: (String, Option<String>),
    pub second: (String, Option<String>),
}

impl DeterminismCheck {
    pub fn holds(&self) -> bool {
        self.first == self.second
    }
}

/// Runs the scenario twice more, with traces, and compares the history and trace hashes.
pub fn check_determinism(loaded: &LoadedScenario, seed: Option<u64>) -> Result<DeterminismCheck, RunError> {
    let options = RunOptions { seed, out_dir: None, trace: true };
    let a = run(loaded, &options)?.summary;
    let b = run(loaded, &options)?.summary;
    Ok(DeterminismCheck { first: (a.history_hash, a.trace_hash), second: (b.history_hash, b.trace_hash) })
}
