//! Runs a loaded scenario: the protocol from the catalogue, the engine, the outputs (history,
//! trace, summary), the history check, and the determinism self-check.

use crate::output::{OutputError, Staged};
use crate::scenario::{LoadedScenario, ScenarioError};
use causim_models::catalogue::{self, Visitor};
use causim_models::{Model, check_mutants};
use causim_sim::buffer::SharedBuffer;
use causim_sim::history::{HistoryHeader, HistoryWriter};
use causim_sim::metrics::Summary;
use causim_sim::trace::TraceWriter;
use causim_sim::{RunOutputs, Sim};
use std::cell::RefCell;
use std::fs::File;
use std::io::{BufWriter, Write};
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
    /// Mutants to switch on besides the scenario's (`--mutant`).
    pub extra_mutants: Vec<String>,
    /// Skip the scenario's history check (hash-only runs, benchmarks).
    pub skip_check: bool,
    /// Return the history's bytes in the report (`RunReport::history`).
    pub keep_history: bool,
    /// Return the trace's bytes in the report (`RunReport::trace`), when `trace` is on.
    pub keep_trace: bool,
}

/// The files a run wrote.
#[derive(Clone, Debug)]
pub struct OutputFiles {
    pub history: PathBuf,
    pub trace: Option<PathBuf>,
    pub summary: PathBuf,
}

impl OutputFiles {
    fn in_dir(dir: &Path, trace: bool) -> OutputFiles {
        OutputFiles { history: dir.join("history.jsonl"), trace: trace.then(|| dir.join("trace.jsonl")), summary: dir.join("summary.json") }
    }
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
    /// The trace as written, with `RunOptions::keep_trace`.
    pub trace: Option<Vec<u8>>,
}

impl RunReport {
    /// Pass: no invariant violation and, if the history was checked, no anomaly.
    pub fn passed(&self) -> bool {
        self.summary.invariant_violation.is_none() && self.check.as_ref().is_none_or(|c| c.ok)
    }

    /// Anomaly names the history check found, sorted.
    pub fn anomalies(&self) -> Vec<String> {
        self.check.as_ref().map_or_else(Vec::new, |c| c.counts.keys().map(|a| a.name().to_string()).collect())
    }
}

/// Why a run could not happen.
#[derive(Debug)]
pub enum RunError {
    /// The scenario is wrong (located in its file).
    Scenario(ScenarioError),
    /// A command-line option is wrong (`--mutant nope`): the option and what is wrong.
    Option { option: String, message: String },
    /// Reading or writing a file failed.
    Io { what: String, source: std::io::Error },
    /// The output folder exists and is not a run folder (it is kept as it is).
    Output(OutputError),
}

impl RunError {
    fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunError {
        let what = what.into();
        move |source| RunError::Io { what, source }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Scenario(e) => write!(f, "{e}"),
            RunError::Option { option, message } => write!(f, "{option}: {message}"),
            RunError::Io { what, source } => write!(f, "{what}: {source}"),
            RunError::Output(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::Scenario(e) => Some(e),
            RunError::Option { .. } | RunError::Output(_) => None,
            RunError::Io { source, .. } => Some(source),
        }
    }
}

impl From<OutputError> for RunError {
    fn from(e: OutputError) -> Self {
        match e {
            OutputError::Io(what, source) => RunError::Io { what, source },
            e => RunError::Output(e),
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
    struct RunModel<'a> {
        loaded: &'a LoadedScenario,
        options: &'a RunOptions,
    }
    impl Visitor for RunModel<'_> {
        type Output = Result<RunReport, RunError>;
        fn visit<M: Model>(self) -> Self::Output {
            run_model::<M>(self.loaded, self.options)
        }
    }
    let name = &loaded.scenario.protocol.name;
    catalogue::visit(name, RunModel { loaded, options }).expect("the protocol is checked when the scenario is loaded")
}

/// The mutants a run switches on: the scenario's, then `--mutant`'s that it does not list.
pub fn mutant_list(scenario: &[String], extra: &[String]) -> Vec<String> {
    let mut all = scenario.to_vec();
    all.extend(extra.iter().filter(|m| !scenario.contains(m)).cloned());
    all
}

/// Builds the model named by the scenario, or explains what is wrong with `protocol` (or with
/// a `--mutant` option).
fn build_model<M: Model>(loaded: &LoadedScenario, extra_mutants: &[String]) -> Result<M, RunError> {
    let p = &loaded.scenario.protocol;
    for m in extra_mutants {
        if M::ENTRY.mutant(m).is_none() {
            let known: Vec<&str> = M::ENTRY.mutants.iter().map(|m| m.name).collect();
            let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            let message = format!("unknown mutant {m:?} for protocol {}; known mutants: {known}", M::ENTRY.name);
            return Err(RunError::Option { option: "--mutant".into(), message });
        }
    }
    let all = mutant_list(&p.mutants, extra_mutants);
    let mutants = check_mutants(&M::ENTRY, &all).map_err(|e| loaded.field_error(e.within("protocol")))?;
    // A model may refuse faults or operations it does not model; its paths name the scenario's
    // own fields (`faults.crashes`).
    M::check_run(&loaded.scenario.sim_config()).map_err(|e| loaded.field_error(e))?;
    // Parameters may narrow the entry's fault model (checked when the scenario was loaded).
    M::faults_for(&p.params).check(M::ENTRY.name, &loaded.scenario.faults).map_err(|e| loaded.field_error(e))?;
    // Paths outside `protocol` (a model may object to the topology) are kept as they are.
    M::build(&p.params, &mutants, &loaded.scenario.topology)
        .map_err(|e| loaded.field_error(if e.path.starts_with("topology") { e } else { e.within("protocol") }).into())
}

thread_local! {
    /// The run in progress on this thread, for the panic hook's replay line.
    static CURRENT: RefCell<Option<RunInProgress>> = const { RefCell::new(None) };
}

/// A run that has started and not yet finished on this thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInProgress {
    pub scenario: PathBuf,
    pub seed: u64,
    pub mutants: Vec<String>,
}

impl RunInProgress {
    /// The command that replays this run.
    pub fn replay_command(&self) -> String {
        let mutants: String = self.mutants.iter().map(|m| format!(" --mutant {m}")).collect();
        format!("causim run {} --seed {}{mutants}", self.scenario.display(), self.seed)
    }
}

/// The run in progress on this thread, if any (a panic hook names it).
pub fn run_in_progress() -> Option<RunInProgress> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Marks a run as in progress on this thread until dropped.
struct InProgress;

impl InProgress {
    fn start(run: RunInProgress) -> InProgress {
        CURRENT.with(|c| *c.borrow_mut() = Some(run));
        InProgress
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        CURRENT.with(|c| *c.borrow_mut() = None);
    }
}

fn run_model<M: Model>(loaded: &LoadedScenario, options: &RunOptions) -> Result<RunReport, RunError> {
    let model = build_model::<M>(loaded, &options.extra_mutants)?;
    let level = match (&loaded.scenario.checks.level, options.skip_check) {
        (Some(l), false) => Some(causim_checkers::Level::parse(l).expect("validated when loaded")),
        _ => None,
    };
    let mut config = loaded.scenario.sim_config();
    if let Some(seed) = options.seed {
        config.seed = seed;
    }
    let seed = config.seed;
    let _in_progress = InProgress::start(RunInProgress { scenario: loaded.path.clone(), seed, mutants: options.extra_mutants.clone() });
    // Named by the scenario's own name, not its file's path: the history's bytes (and hash)
    // must not depend on where the file lies or how its path was written.
    let mut header = HistoryHeader::of_run(M::ENTRY.name, &loaded.scenario.name, seed);
    if M::VERSION_ORDER_VALUES {
        header.version_order = Some(causim_checkers::VERSION_ORDER_VALUES);
    }
    // Without an output folder, a history that must be checked is kept in memory.
    let (history_memory, trace_memory) = (SharedBuffer::default(), SharedBuffer::default());
    let keep_history = level.is_some() || options.keep_history;
    // Outputs go to a fresh folder that replaces `out_dir` only when the run succeeded.
    let staged = options.out_dir.as_deref().map(Staged::begin).transpose()?;
    let (mut history, trace, files) = match &staged {
        Some(staged) => {
            let files = OutputFiles::in_dir(staged.dir(), options.trace);
            let history = HistoryWriter::new(Box::new(BufWriter::new(create(&files.history)?)));
            let trace = match &files.trace {
                Some(p) => Some(TraceWriter::new(Box::new(BufWriter::new(create(p)?)))),
                None => None,
            };
            (history, trace, Some(files))
        }
        None => (
            if keep_history { HistoryWriter::new(Box::new(history_memory.clone())) } else { HistoryWriter::hashing_only() },
            options.trace.then(|| {
                if options.keep_trace {
                    TraceWriter::new(Box::new(trace_memory.clone()))
                } else {
                    TraceWriter::new(Box::new(std::io::sink()))
                }
            }),
            None,
        ),
    };
    history.header(&header).map_err(RunError::io("cannot write the history"))?;
    let outputs = RunOutputs {
        // The summary names the file as given, for the reader.
        scenario: loaded.path.display().to_string(),
        protocol: M::ENTRY.name.to_string(),
        history,
        trace,
        check_invariants: loaded.scenario.checks.invariants,
    };
    let mut sim = Sim::new(model, config, outputs).map_err(|e| loaded.field_error(e))?;
    let summary = sim.run();
    if let Some(io) = sim.io_error() {
        return Err(RunError::Io { what: "cannot write the run's outputs".into(), source: std::io::Error::other(io.to_string()) });
    }
    drop(sim);
    let read_back = |path: &Path| std::fs::read(path).map_err(RunError::io(format!("cannot read {}", path.display())));
    let history_bytes = match (&files, keep_history) {
        (_, false) => None,
        (Some(f), true) => Some(read_back(&f.history)?),
        (None, true) => Some(history_memory.take()),
    };
    let trace_bytes = match (&files, options.keep_trace && options.trace) {
        (_, false) => None,
        (Some(f), true) => Some(read_back(f.trace.as_ref().expect("the trace is on"))?),
        (None, true) => Some(trace_memory.take()),
    };
    let check = match (level, &history_bytes) {
        (Some(level), Some(text)) => {
            let history = causim_checkers::read_history(&text[..], None).map_err(|e| RunError::Io {
                what: "the history this run wrote does not parse".into(),
                source: std::io::Error::other(e.to_string()),
            })?;
            Some(causim_checkers::check(&history, level))
        }
        _ => None,
    };
    let files = match (files, staged) {
        (Some(files), Some(staged)) => {
            write_summary(loaded, options, &files, &summary, seed, check.as_ref())?;
            let target = staged.target().to_path_buf();
            staged.commit()?;
            Some(OutputFiles::in_dir(&target, options.trace))
        }
        _ => None,
    };
    let history = if options.keep_history { history_bytes } else { None };
    Ok(RunReport { summary, files, seed, check, history, trace: trace_bytes })
}

/// Writes `check.txt` (when the history was checked) and `summary.json`: the summary, the
/// check's outcome and the scenario with every default filled in.
fn write_summary(
    loaded: &LoadedScenario,
    options: &RunOptions,
    files: &OutputFiles,
    summary: &Summary,
    seed: u64,
    check: Option<&causim_checkers::Report>,
) -> Result<(), RunError> {
    if let Some(report) = check {
        let path = files.summary.with_file_name("check.txt");
        crate::out_file::write(&path, report.render_text()).map_err(RunError::io(format!("cannot write {}", path.display())))?;
    }
    let mut resolved = loaded.scenario.clone();
    resolved.seed = seed;
    resolved.protocol.mutants = mutant_list(&resolved.protocol.mutants, &options.extra_mutants);
    let check_json = check.map(|c| {
        serde_json::json!({
            "level": c.level.name(), "ok": c.ok, "violations": c.violation_count,
            "anomalies": c.counts.iter().map(|(a, n)| (a.name().to_string(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
        })
    });
    // Streamed: the resolved scenario goes straight to the file rather than through a
    // `serde_json::Value` tree (a 41 MB script's tree took about 500 MB). The summary and the
    // check stay `Value`s, their keys sorted; the scenario's keys come in the scenario's order.
    #[derive(serde::Serialize)]
    struct SummaryFile<'a> {
        check: Option<serde_json::Value>,
        resolved_scenario: &'a crate::scenario::Scenario,
        summary: serde_json::Value,
    }
    let file = SummaryFile {
        check: check_json,
        resolved_scenario: &resolved,
        summary: serde_json::to_value(summary).expect("summaries serialize"),
    };
    let write = || -> std::io::Result<()> {
        let mut out = std::io::BufWriter::new(crate::out_file::create(&files.summary)?);
        serde_json::to_writer_pretty(&mut out, &file).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
        out.flush()
    };
    write().map_err(RunError::io(format!("cannot write {}", files.summary.display())))
}

fn create(path: &Path) -> Result<File, RunError> {
    crate::out_file::create(path).map_err(RunError::io(format!("cannot create {}", path.display())))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_in_progress_names_its_replay_command_until_it_ends() {
        assert_eq!(run_in_progress(), None);
        let run = RunInProgress { scenario: "scenarios/x.json".into(), seed: 7, mutants: vec!["a".into(), "b".into()] };
        {
            let _guard = InProgress::start(run.clone());
            assert_eq!(run_in_progress(), Some(run.clone()));
            assert_eq!(run.replay_command(), "causim run scenarios/x.json --seed 7 --mutant a --mutant b");
        }
        assert_eq!(run_in_progress(), None, "the guard clears it, also when a run fails early");
    }
}
