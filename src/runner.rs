//! Builds a simulation from a loaded scenario and runs it: protocol dispatch, outputs, the
//! determinism self-check.

use crate::scenario::{LoadedScenario, ScenarioError};
use causim_models::causalmesh::{CausalMesh, CausalMeshTcc};
use causim_models::direct::Direct;
use causim_models::eventual::Eventual;
use causim_models::faastcc::Faastcc;
use causim_models::hydrocache::HydroCache;
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
    /// Mutants to switch on besides the scenario's.
    pub extra_mutants: Vec<String>,
    /// Skip the scenario's history check (hash-only runs, benchmarks).
    pub skip_check: bool,
    /// Return the history's bytes in the report (`RunReport::history`).
    pub keep_history: bool,
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
    /// The history check, when the scenario asks for one (`checks.level`).
    pub check: Option<causim_checkers::Report>,
    /// The history as written (JSON Lines, header first), with `RunOptions::keep_history`.
    pub history: Option<Vec<u8>>,
}

impl RunReport {
    /// Pass: no invariant violation and, if the history was checked, no anomaly.
    pub fn passed(&self) -> bool {
        self.summary.invariant_violation.is_none() && self.check.as_ref().is_none_or(|c| c.ok)
    }

    /// Anomaly names the history check found.
    pub fn anomalies(&self) -> Vec<String> {
        self.check.as_ref().map_or_else(Vec::new, |c| c.counts.keys().map(|a| a.name().to_string()).collect())
    }
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
        CausalMesh::NAME => run_model::<CausalMesh>(loaded, options),
        CausalMeshTcc::NAME => run_model::<CausalMeshTcc>(loaded, options),
        Eventual::NAME => run_model::<Eventual>(loaded, options),
        Direct::NAME => run_model::<Direct>(loaded, options),
        Faastcc::NAME => run_model::<Faastcc>(loaded, options),
        HydroCache::NAME => run_model::<HydroCache>(loaded, options),
        other => {
            Err(loaded.error("protocol.name", format!("unknown protocol {other:?}; known protocols: {}", PROTOCOLS.join(", "))).into())
        }
    }
}

/// Builds the model named by the scenario, or explains what is wrong with `protocol`.
fn build_model<M: Model>(loaded: &LoadedScenario, extra_mutants: &[String]) -> Result<M, ScenarioError> {
    let p = &loaded.scenario.protocol;
    let in_protocol = |e: ModelError| {
        // Paths outside `protocol` (a model may object to the topology) are kept as they are.
        let path = if e.path.starts_with("topology") { e.path.clone() } else { format!("protocol.{}", e.path) };
        loaded.error(&path, e.message)
    };
    let mut all = p.mutants.clone();
    for m in extra_mutants {
        if !all.contains(m) {
            all.push(m.clone());
        }
    }
    let mutants = check_mutants(M::NAME, &all, M::MUTANTS).map_err(in_protocol)?;
    M::build(&p.params, &mutants, &loaded.scenario.topology).map_err(in_protocol)
}

fn run_model<M: Model>(loaded: &LoadedScenario, options: &RunOptions) -> Result<RunReport, RunError> {
    let model = build_model::<M>(loaded, &options.extra_mutants)?;
    let level = match (&loaded.scenario.checks.level, options.skip_check) {
        (Some(l), false) => Some(causim_checkers::Level::parse(l).expect("validated when loaded")),
        _ => None,
    };
    // Without an output folder, a history that must be checked is kept in memory.
    let memory = causim_sim::buffer::SharedBuffer::default();
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
            if level.is_some() || options.keep_history {
                HistoryWriter::new(Box::new(memory.clone()))
            } else {
                HistoryWriter::hashing_only()
            },
            options.trace.then(|| TraceWriter::new(Box::new(std::io::sink()))),
            None,
        ),
    };
    history.header(&header).map_err(|e| RunError::Io(format!("cannot write the history: {e}")))?;
    let outputs =
        RunOutputs { scenario: loaded.path.display().to_string(), history, trace, check_invariants: loaded.scenario.checks.invariants };
    let mut sim = Sim::new(model, config, outputs).map_err(|e: SetupError| loaded.error(&e.path, e.message))?;
    let summary = sim.run();
    if let Some(io) = sim.io_error() {
        return Err(RunError::Io(io.to_string()));
    }
    drop(sim);
    let text = if level.is_some() || options.keep_history {
        Some(match &files {
            Some(f) => std::fs::read(&f.history).map_err(|e| RunError::Io(format!("cannot read {}: {e}", f.history.display())))?,
            None => memory.take(),
        })
    } else {
        None
    };
    let check = match (level, &text) {
        (Some(level), Some(text)) => {
            let history = causim_checkers::read_history(&text[..], None)
                .map_err(|e| RunError::Io(format!("the history this run wrote does not parse: {e}")))?;
            Some(causim_checkers::check(&history, level))
        }
        _ => None,
    };
    if let (Some(files), Some(report)) = (&files, &check) {
        let path = files.summary.with_file_name("check.txt");
        std::fs::write(&path, report.render_text()).map_err(|e| RunError::Io(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(files) = &files {
        let mut resolved = loaded.scenario.clone();
        resolved.seed = seed;
        resolved.protocol.mutants = mutant_list(&resolved.protocol.mutants, &options.extra_mutants);
        let check_json = check.as_ref().map(|c| {
            serde_json::json!({
                "level": c.level.name(), "ok": c.ok, "violations": c.violation_count,
                "anomalies": c.counts.iter().map(|(a, n)| (a.name().to_string(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
            })
        });
        let json = serde_json::json!({ "summary": summary, "check": check_json, "resolved_scenario": resolved });
        std::fs::write(&files.summary, serde_json::to_string_pretty(&json).expect("summaries serialize") + "\n")
            .map_err(|e| RunError::Io(format!("cannot write {}: {e}", files.summary.display())))?;
    }
    let history = if options.keep_history { text } else { None };
    Ok(RunReport { summary, files, seed, check, history })
}

fn mutant_list(scenario: &[String], extra: &[String]) -> Vec<String> {
    let mut all = scenario.to_vec();
    all.extend(extra.iter().filter(|m| !scenario.contains(m)).cloned());
    all
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
pub fn check_determinism(loaded: &LoadedScenario, seed: Option<u64>, extra_mutants: &[String]) -> Result<DeterminismCheck, RunError> {
    let options = RunOptions { seed, trace: true, extra_mutants: extra_mutants.to_vec(), skip_check: true, ..Default::default() };
    let a = run(loaded, &options)?.summary;
    let b = run(loaded, &options)?.summary;
    Ok(DeterminismCheck { first: (a.history_hash, a.trace_hash), second: (b.history_hash, b.trace_hash) })
}
