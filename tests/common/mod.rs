//! Helpers shared by the tests that drive the `causim` binary as a user would.
#![allow(dead_code)] // each test file uses some of them

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs `causim ARGS` from the repository root.
pub fn causim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_causim")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("causim runs")
}

/// Runs `causim ARGS`, which must succeed, and returns its standard output.
pub fn ok(args: &[&str]) -> String {
    let o = causim(args);
    assert!(o.status.success(), "causim {args:?} failed:\n{}\n{}", stdout(&o), stderr(&o));
    stdout(&o)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty temporary directory for `test`/`name`, unique to this test process.
pub fn temp_dir(test: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("causim-{test}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The regression scenarios (`regression-*.json`: fuzzer findings in a correct protocol,
/// shrunk and since fixed) in `scenarios/<system>/`, loaded and sorted by name; at least one.
/// Each must expect a pass.
pub fn regression_scenarios(system: &str) -> Vec<(String, causim_pipeline::scenario::LoadedScenario)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(system);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("regression-") && n.ends_with(".json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no regression scenarios in {}", dir.display());
    files
        .into_iter()
        .map(|file| {
            let loaded = load_scenario(system, &file);
            let expect = loaded.scenario.expect.as_ref().unwrap_or_else(|| panic!("{file}: no expect"));
            assert_eq!(expect.verdict, causim_pipeline::scenario::Verdict::Pass, "{file}: a regression scenario expects a pass");
            (file, loaded)
        })
        .collect()
}

/// A scenario run through `causim run`'s machinery, with its history kept and checked at the
/// scenario's level (`checks.level` must be set).
pub struct CheckedRun {
    pub summary: causim_sim::metrics::Summary,
    /// The history's transactions (the header left out).
    pub history: Vec<serde_json::Value>,
    pub report: causim_checkers::Report,
}

impl CheckedRun {
    pub fn anomalies(&self) -> Vec<&'static str> {
        self.report.counts.keys().map(|a| a.name()).collect()
    }

    /// How many samples of observation `name` the protocol reported.
    pub fn observed(&self, name: &str) -> u64 {
        self.summary.observations.get(name).map_or(0, |s| s.count)
    }

    /// The first transaction of session `name`.
    pub fn session(&self, name: &str) -> &serde_json::Value {
        self.history.iter().find(|t| t["session"] == name).unwrap_or_else(|| panic!("no transaction of session {name}"))
    }

    /// A correct run: no invariant violation, no anomaly, every workflow done.
    pub fn assert_passes(&self, what: &str) {
        assert_eq!(self.summary.invariant_violation, None, "{what}");
        assert!(self.report.ok, "{what}: {}", self.report.render_text());
        assert_eq!(self.summary.workflows.unfinished + self.summary.workflows.failed, 0, "{what}");
    }
}

/// Loads `scenarios/<system>/<file>`.
pub fn load_scenario(system: &str, file: &str) -> causim_pipeline::scenario::LoadedScenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(system).join(file);
    causim_pipeline::scenario::LoadedScenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `loaded` at `seed` with `mutants` switched on besides the scenario's.
pub fn run_checked(loaded: &causim_pipeline::scenario::LoadedScenario, seed: u64, mutants: &[&str]) -> CheckedRun {
    let options = causim_pipeline::run::RunOptions {
        seed: Some(seed),
        extra_mutants: mutants.iter().map(|m| m.to_string()).collect(),
        keep_history: true,
        ..Default::default()
    };
    let r = causim_pipeline::run::run(loaded, &options).unwrap_or_else(|e| panic!("{}: {e}", loaded.path.display()));
    let text = r.history.expect("kept");
    let history = text.split(|&b| b == b'\n').skip(1).filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    let report = r.check.unwrap_or_else(|| panic!("{}: no checks.level", loaded.path.display()));
    CheckedRun { summary: r.summary, history, report }
}

/// Runs `scenarios/<system>/<file>` at seeds 1..=n, each of which must break no invariant,
/// finish every workflow and show no anomaly at the scenario's check level; returns (aborted
/// attempts, workflows started) over all of them.
pub fn seed_sweep(system: &str, file: &str, n: u64) -> (u64, u64) {
    let loaded = load_scenario(system, file);
    assert!(loaded.scenario.checks.invariants && loaded.scenario.checks.level.is_some(), "{file}: checks off");
    let (mut aborts, mut workflows) = (0, 0);
    for seed in 1..=n {
        let options = causim_pipeline::run::RunOptions { seed: Some(seed), ..Default::default() };
        let r = causim_pipeline::run::run(&loaded, &options).unwrap_or_else(|e| panic!("{e}"));
        let repro = format!("causim run scenarios/{system}/{file} --seed {seed}");
        assert_eq!(r.summary.invariant_violation, None, "{repro}");
        assert_eq!(r.summary.workflows.unfinished, 0, "{repro}");
        let report = r.check.expect("checked");
        assert!(report.ok, "{repro}\n{}", report.render_text());
        aborts += r.summary.workflows.aborted_attempts;
        workflows += r.summary.workflows.started;
    }
    (aborts, workflows)
}

/// `loaded` with its generated workload cut to its first `workflows` workflows and no warm-up,
/// so a paper-sized workload runs in a test's time.
pub fn shortened(mut loaded: causim_pipeline::scenario::LoadedScenario, workflows: u64) -> causim_pipeline::scenario::LoadedScenario {
    let causim_sim::workload::WorkloadConfig::Generator(g) = &mut loaded.scenario.workload else {
        panic!("{}: the workload is not generated", loaded.path.display())
    };
    g.workflows_max = Some(g.workflows_max.map_or(workflows, |w| w.min(workflows)));
    g.warmup_ns = 0;
    loaded
}
