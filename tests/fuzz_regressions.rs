//! The fuzzer's committed regressions (scenarios/fuzz/): every `cc <seed>` entry of every
//! `*.proptest-regressions` file replays through proptest's own `TestRunner` and file
//! persistence (the case is regenerated from the seed by the strategy the header names) and
//! still fails; the same cases pass with the mutant off; and every shrunk scenario file there
//! meets its `expect` when run.

use causim::fuzz::{self, Verdict};
use causim_pipeline::run::{self, RunOptions};
use causim_pipeline::scenario::{LoadedScenario, Verdict as Expected};
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestError, TestRunner};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/fuzz")
}

fn files(ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fuzz_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().is_some_and(|s| s.ends_with(ext)))
        .collect();
    v.sort();
    v
}

/// Goal: each committed regression entry replays through proptest and still fails.
#[test]
fn proptest_replays_every_regression_entry() {
    let regressions = files(".proptest-regressions");
    assert!(regressions.len() >= 7, "expected a regression file per CausalMesh mutant, found {}", regressions.len());
    for path in regressions {
        let text = std::fs::read_to_string(&path).unwrap();
        let options = fuzz::regression_options(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let seeds = fuzz::regression_seeds(&text);
        assert!(!seeds.is_empty(), "{}: no cc entries", path.display());
        // proptest reads (and may append to) its persistence file: give it a copy.
        let copy =
            std::env::temp_dir().join(format!("causim-fuzz-reg-{}-{}", std::process::id(), path.file_name().unwrap().to_str().unwrap()));
        std::fs::copy(&path, &copy).unwrap();
        let copy: &'static str = Box::leak(copy.to_str().unwrap().to_string().into_boxed_str());
        let config = Config {
            // No new cases: only the persisted ones run.
            cases: 0,
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(copy))),
            max_shrink_iters: 50,
            ..Config::default()
        };
        let mut runner = TestRunner::new(config);
        let strategy = fuzz::case_strategy(&options.profile, options.faults, options.fan_out);
        let result = runner.run(&strategy, |case| {
            let scenario = case.scenario_with(&options.profile, &options.mutants, "regression", options.invariants);
            match fuzz::judge(&scenario, options.liveness).map_err(TestCaseError::fail)? {
                Verdict::Pass => Ok(()),
                Verdict::Fail(f) => Err(TestCaseError::fail(f.to_string())),
            }
        });
        match result {
            Err(TestError::Fail(why, _)) => eprintln!("{}: replays: {why}", path.display()),
            other => panic!("{}: the regression entry no longer fails: {other:?}", path.display()),
        }
        let _ = std::fs::remove_file(copy);
        // With the mutants off, the same cases pass: the entry convicts the mutant, not the
        // protocol.
        let mut correct = options.clone();
        correct.mutants.clear();
        for seed in &seeds {
            let case = fuzz::generate_from_seed(&strategy, seed).unwrap().current();
            let verdict = fuzz::judge(&case.scenario(&correct.profile, &[], "regression-correct"), false).unwrap();
            assert_eq!(verdict, Verdict::Pass, "{}: cc {} fails without the mutant", path.display(), fuzz::hex(seed));
        }
    }
}

/// Goal: every committed shrunk scenario replays with the anomaly it declares.
#[test]
fn every_shrunk_scenario_meets_its_expectation() {
    let scenarios = files(".json");
    assert!(scenarios.len() >= 7);
    for path in scenarios {
        let loaded = LoadedScenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let expect = loaded.scenario.expect.clone().unwrap_or_else(|| panic!("{}: no expect", path.display()));
        assert_eq!(expect.verdict, Expected::Fail, "{}", path.display());
        assert!(!expect.anomalies.is_empty(), "{}: a shrunk scenario names its anomaly", path.display());
        let report = run::run(&loaded, &RunOptions::default()).unwrap();
        assert!(!report.passed(), "{}", path.display());
        for a in &expect.anomalies {
            assert!(report.anomalies().contains(a), "{}: expected {a}, found {:?}", path.display(), report.anomalies());
        }
        // Without its mutants the scenario passes.
        let mut correct = loaded.clone();
        correct.scenario.protocol.mutants.clear();
        let report = run::run(&correct, &RunOptions::default()).unwrap();
        assert!(report.passed(), "{}: fails without the mutant: {:?}", path.display(), report.anomalies());
    }
}
