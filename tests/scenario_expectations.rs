//! Every scenario file that declares an `expect` meets it: the verdict at the scenario's level
//! and each named anomaly, at the scenario's own seed. One test covers the whole `scenarios/`
//! tree, so a new scenario with an expectation is checked the day it is added.
//!
//! A paper-sized generated workload that expects a pass is cut to its first
//! `PASSING_WORKFLOWS_MAX` workflows (its full length runs in `causim reproduce` and the
//! benchmarks); a scenario that expects an anomaly always runs whole, since cutting it could
//! lose the anomaly.

mod common;

use causim_pipeline::run::{self, RunOptions};
use causim_pipeline::scenario::{LoadedScenario, Verdict};
use causim_sim::workload::WorkloadConfig;
use std::path::{Path, PathBuf};

const PASSING_WORKFLOWS_MAX: u64 = 300;

/// Every scenario under `scenarios/` (sweep plans aside) that declares an expectation, sorted.
fn scenarios_with_expectations() -> Vec<LoadedScenario> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() || dir.ends_with("sweeps") {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|x| x == "json") {
                files.push(f);
            }
        }
    }
    files.sort();
    files.iter().map(|f| LoadedScenario::from_file(f).unwrap_or_else(|e| panic!("{e}"))).filter(|l| l.scenario.expect.is_some()).collect()
}

/// Checks one scenario; an error says what differs.
fn meets_expectation(loaded: &LoadedScenario) -> Result<(), String> {
    let expect = loaded.scenario.expect.clone().expect("filtered");
    let want_pass = expect.verdict == Verdict::Pass;
    let loaded = match (&loaded.scenario.workload, want_pass) {
        (WorkloadConfig::Generator(_), true) => common::shortened(loaded.clone(), PASSING_WORKFLOWS_MAX),
        _ => loaded.clone(),
    };
    let report = run::run(&loaded, &RunOptions::default()).map_err(|e| e.to_string())?;
    match expect.mismatches(&report) {
        wrong if wrong.is_empty() => Ok(()),
        wrong => Err(wrong.join("; ")),
    }
}

#[test]
fn every_scenario_meets_its_expectation() {
    let scenarios = scenarios_with_expectations();
    assert!(scenarios.len() >= 60, "found only {} scenarios with expectations", scenarios.len());
    // Two workers: the scenarios are independent, and CI has two cores.
    let failures: Vec<String> = std::thread::scope(|s| {
        let halves: Vec<_> = [0, 1]
            .into_iter()
            .map(|w| {
                let scenarios = &scenarios;
                s.spawn(move || {
                    scenarios
                        .iter()
                        .skip(w)
                        .step_by(2)
                        .filter_map(|l| meets_expectation(l).err().map(|e| format!("{}: {e}", l.path.display())))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(failures.is_empty(), "{} scenarios miss their expectation:\n{}", failures.len(), failures.join("\n"));
}
