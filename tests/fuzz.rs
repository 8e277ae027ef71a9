//! `causim fuzz` end to end: within a small budget the fuzzer finds every CausalMesh mutant by
//! its history alone (`--oracle history`), shrinks it to a small scenario that `causim run`
//! replays with an anomaly; the correct protocol survives the same budget; the first failure
//! does not depend on the number of threads; bad input gets a clear error.
//!
//! Budgets are small so this file runs in well under three minutes on two cores; the measured
//! table with bigger budgets is in docs/fuzzing.md.

use causim::fuzz::{self, FuzzOptions, FuzzOutcome};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Cases each mutant search may use (every mutant is found well within it; see the table in
/// docs/fuzzing.md) and the correct protocol must survive.
const BUDGET: u64 = 8000;

fn options(protocol: &str, mutants: &[&str]) -> FuzzOptions {
    let mut o = FuzzOptions::new(protocol, mutants).unwrap();
    o.cases_max = BUDGET;
    o.threads = 2;
    o.invariants = false;
    o.shrink_iters_max = 1500;
    o
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("causim-fuzz-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn causim(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_causim")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap()
}

/// Fuzzes a mutant, checks the failure and its shrunk scenario, and replays that with `causim run`.
fn finds(protocol: &str, mutant: &str) -> FuzzOutcome {
    let o = options(protocol, &[mutant]);
    let outcome = fuzz::fuzz(&o).unwrap();
    let f = outcome.failure.as_ref().unwrap_or_else(|| panic!("{mutant}: no failure in {} cases", outcome.cases));
    assert!(!f.original_verdict.anomalies.is_empty(), "{mutant}: the history check must convict: {}", f.original_verdict);
    assert!(!f.shrunk_verdict.anomalies.is_empty(), "{mutant}: shrinking must keep an anomaly: {}", f.shrunk_verdict);
    assert!(f.shrunk.operations() <= f.original.operations(), "{mutant}: shrinking grew the case");
    assert!(f.shrunk.operations() <= 24, "{mutant}: shrunk to {} (want a small scenario)", f.shrunk.size());
    // The written scenario replays: `causim run` reports the anomaly and meets its `expect`.
    let dir = temp_dir(mutant);
    let written = fuzz::write_failure(&o, f, &dir).unwrap();
    let out = causim(&["run", written.shrunk.to_str().unwrap(), "--out", dir.join("run").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{mutant}: causim run failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("as expected (fail)"), "{mutant}: {text}");
    let anomaly = &f.shrunk_verdict.anomalies[0];
    assert!(text.lines().any(|l| l.trim_start().starts_with("check") && l.contains(anomaly.as_str())), "{mutant}: no {anomaly} in\n{text}");
    // The regression file names the strategy and holds the case's seed.
    let reg = std::fs::read_to_string(&written.regressions).unwrap();
    assert!(reg.contains(&format!("cc {}", fuzz::hex(&f.seed))), "{reg}");
    let replay = fuzz::regression_options(&reg).unwrap();
    assert_eq!((replay.profile.protocol.as_str(), replay.mutants.as_slice()), (protocol, &[mutant.to_string()][..]));
    assert_eq!((replay.invariants, replay.fan_out), (o.invariants, o.fan_out));
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// Goal: every CausalMesh mutant is caught by the checker on a fuzzed history within the
/// budget, and shrinks to a small scenario that replays.
#[test]
fn every_causalmesh_mutant_is_found_shrunk_and_replayed() {
    let mutants = [
        ("causalmesh", "no_carry_local_writes"),
        ("causalmesh", "read_without_integration"),
        ("causalmesh", "reveal_at_head"),
        ("causalmesh", "nearest_deps_only"),
        ("causalmesh", "evict_ignores_dependents"),
        ("causalmesh", "integrate_by_vc_dominance"),
        ("causalmesh_tcc", "tcc_ignores_cut"),
    ];
    for (protocol, mutant) in mutants {
        let outcome = finds(protocol, mutant);
        let f = outcome.failure.unwrap();
        eprintln!(
            "{protocol} --mutant {mutant}: case {} ({:.2} s), shrunk in {} runs to {}: {}",
            f.index,
            outcome.search_s,
            f.shrink_iters,
            f.shrunk.size(),
            f.shrunk_verdict
        );
    }
}

/// Goal: the correct protocols pass the same budget (with the invariant checks on, too).
#[test]
fn the_correct_protocol_survives_the_same_budget() {
    // With the invariant checks on as well as the history check: stricter than the mutant runs.
    for (protocol, invariants) in [("causalmesh", true), ("causalmesh_tcc", true)] {
        let mut o = options(protocol, &[]);
        o.invariants = invariants;
        let outcome = fuzz::fuzz(&o).unwrap();
        assert!(outcome.failure.is_none(), "{protocol}: {:?}", outcome.failure.map(|f| (f.index, f.original_verdict.to_string())));
        assert_eq!(outcome.cases, BUDGET);
    }
}

/// Goal: after partitions heal, every workflow of the TCC protocols completes within the
/// scheduler's attempts (`--oracle liveness`): an aborted attempt hands its retry a read floor
/// (CausalMesh-TCC), a recent snapshot (FaaSTCC) or its dependency map (HydroCache-Opt).
#[test]
fn tcc_protocols_stay_live_under_the_same_budget() {
    for protocol in ["causalmesh_tcc", "faastcc", "hydrocache"] {
        let mut o = options(protocol, &[]);
        o.liveness = true;
        let outcome = fuzz::fuzz(&o).unwrap();
        assert!(outcome.failure.is_none(), "{protocol}: {:?}", outcome.failure.map(|f| (f.index, f.original_verdict.to_string())));
    }
}

/// Goal: same fuzz seed ⇒ same first failure and same shrunk scenario with 1 and 2 threads.
#[test]
fn the_first_failure_does_not_depend_on_the_thread_count() {
    // A mutant found after several passing cases, so the threads race past the failure.
    let mut o = options("causalmesh", &["reveal_at_head"]);
    o.cases_max = 200;
    o.shrink_iters_max = 300;
    let one = fuzz::fuzz(&FuzzOptions { threads: 1, ..o.clone() }).unwrap();
    let two = fuzz::fuzz(&FuzzOptions { threads: 2, ..o.clone() }).unwrap();
    let (a, b) = (one.failure.expect("found with 1 thread"), two.failure.expect("found with 2 threads"));
    assert!(a.index > 0, "pick a seed whose first failure is not case 0");
    assert_eq!(a.index, b.index);
    assert_eq!(a.seed, b.seed);
    assert_eq!(a.original, b.original);
    assert_eq!(a.shrunk, b.shrunk);
    assert_eq!(a.shrunk_verdict, b.shrunk_verdict);
    assert_eq!(one.cases, two.cases);
    // And a different fuzz seed explores different cases.
    let strategy = fuzz::case_strategy(&o.profile, o.faults, o.fan_out);
    let c1 = fuzz::generate(&strategy, 3, 0).unwrap();
    let c2 = fuzz::generate(&strategy, 4, 0).unwrap();
    use proptest::strategy::ValueTree;
    assert_ne!(c1.current(), c2.current());
}

/// Goal: `causim fuzz` on the command line finds a mutant, prints seeds/s and the shrunk size,
/// writes the files and exits 1; the correct protocol exits 0.
#[test]
fn the_command_reports_and_writes_the_failure() {
    let dir = temp_dir("cli");
    let out = causim(&[
        "fuzz",
        "--protocol",
        "causalmesh",
        "--mutant",
        "no_carry_local_writes",
        "--seeds",
        "200",
        "--oracle",
        "history",
        "--threads",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--no-progress",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("FAILURE at case") && text.contains("cases/s") && text.contains("shrunk in"), "{text}");
    let shrunk = dir.join("fuzz-causalmesh-no_carry_local_writes.json");
    assert!(shrunk.exists() && dir.join("fuzz-causalmesh-no_carry_local_writes-original.json").exists());
    assert!(dir.join("fuzz-causalmesh-no_carry_local_writes.proptest-regressions").exists());
    assert!(text.contains(&format!("replay with: causim run {}", shrunk.display())), "{text}");
    // The unshrunk original replays too (it failed first).
    let out = causim(&[
        "run",
        dir.join("fuzz-causalmesh-no_carry_local_writes-original.json").to_str().unwrap(),
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "the original has no `expect`, so its anomaly fails the run");
    let ok = causim(&["fuzz", "--protocol", "causalmesh", "--seeds", "100", "--out", dir.to_str().unwrap(), "--no-progress"]);
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(ok.status.success(), "{text}");
    assert!(text.contains("no failure in 100 cases"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Goal: bad input gets a clear error (exit 2), never a panic.
#[test]
fn bad_input_gets_a_clear_error() {
    for (args, want) in [
        (&["fuzz", "--protocol", "nope"][..], "unknown protocol \"nope\""),
        (&["fuzz", "--protocol", "causalmesh", "--mutant", "nope"][..], "unknown mutant \"nope\""),
        (&["fuzz", "--protocol", "faastcc", "--mutant", "reveal_at_head"][..], "unknown mutant \"reveal_at_head\""),
        (&["fuzz", "--protocol", "causalmesh", "--faults", "some"][..], "--faults \"some\": expected safe or all"),
        (&["fuzz", "--protocol", "causalmesh", "--oracle", "x"][..], "--oracle \"x\""),
        (&["fuzz", "--protocol", "causalmesh", "--time", "0"][..], "--time must be a positive"),
        (&["fuzz", "--protocol", "causalmesh", "--seeds", "0"][..], "--seeds must be at least 1"),
        (&["fuzz", "--protocol", "causalmesh", "--threads", "0"][..], "--threads must be at least 1"),
        // A file where the folder should be is found before fuzzing, not after a failure.
        (&["fuzz", "--protocol", "causalmesh", "--out", "Cargo.toml"][..], "--out Cargo.toml: cannot create the folder"),
    ] {
        let out = causim(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// Goal: every correct protocol survives fan-outs and every fault its model claims (`--faults
/// all` draws only those, so none is refused as a bad scenario), with its invariant checks on;
/// and `--time` stops the search.
#[test]
fn every_protocol_survives_its_fault_model() {
    for protocol in causim_models::PROTOCOLS.iter().map(|e| e.name) {
        for faults in [fuzz::Faults::Safe, fuzz::Faults::All] {
            let mut o = FuzzOptions::new(protocol, &[]).unwrap();
            o.faults = faults;
            o.cases_max = 150;
            o.threads = 2;
            o.shrink_iters_max = 0;
            let outcome = fuzz::fuzz(&o).unwrap_or_else(|e| panic!("{protocol} {faults:?}: {e}"));
            let failure = outcome.failure.map(|f| (f.index, f.original_verdict.to_string()));
            assert!(failure.is_none(), "{protocol} {faults:?}: {failure:?}");
        }
    }
    let mut o = FuzzOptions::new("causalmesh", &[]).unwrap();
    o.cases_max = u64::MAX;
    o.time_s_max = Some(0.5);
    o.threads = 2;
    let started = std::time::Instant::now();
    let outcome = fuzz::fuzz(&o).unwrap();
    assert!(started.elapsed().as_secs_f64() < 5.0);
    assert!(outcome.failure.is_none() && outcome.cases > 0);
}

/// Goal: where a workflow is one transaction (CausalMesh-TCC, FaaSTCC, HydroCache), fan-outs
/// write in their branches too (the history orders a transaction's functions partially), and
/// the correct protocols survive such cases with and without their fault model.
#[test]
fn tcc_protocols_survive_fan_outs_that_write_in_their_branches() {
    for protocol in ["causalmesh_tcc", "faastcc", "hydrocache"] {
        let o = FuzzOptions::new(protocol, &[]).unwrap();
        let strategy = fuzz::case_strategy(&o.profile, o.faults, o.fan_out);
        use proptest::strategy::ValueTree;
        let writing_branches = (0..40)
            .flat_map(|i| fuzz::generate(&strategy, 1, i).unwrap().current().sessions)
            .filter(|s| s.fan_out && s.dag.is_none() && s.functions.len() >= 3)
            .filter(|s| s.functions[1..s.functions.len() - 1].iter().any(|f| f.ops.iter().any(|op| op.0 == 1)))
            .count();
        assert!(writing_branches > 0, "{protocol}: no fan-out writes in a branch in 40 cases");
        for faults in [fuzz::Faults::Safe, fuzz::Faults::All] {
            let mut o = FuzzOptions::new(protocol, &[]).unwrap();
            o.faults = faults;
            o.cases_max = 600;
            o.threads = 2;
            o.shrink_iters_max = 0;
            let outcome = fuzz::fuzz(&o).unwrap();
            let failure = outcome.failure.map(|f| (f.index, f.original_verdict.to_string()));
            assert!(failure.is_none(), "{protocol} {faults:?}: {failure:?}");
        }
    }
}

/// Goal: for every protocol the strategy draws every workflow shape: several sinks (leaves),
/// several sources, joins, and functions that read a key and then write it (as the written
/// scenarios say, so `causim run` replays them); `--no-fan-out` draws only chains.
#[test]
fn the_strategy_draws_every_workflow_shape() {
    use causim_sim::workflow::Dag;
    use causim_sim::workload::{ScriptOp, WorkloadConfig};
    use proptest::strategy::ValueTree;
    for protocol in causim_models::PROTOCOLS.iter().map(|e| e.name) {
        for fan_out in [true, false] {
            let mut o = FuzzOptions::new(protocol, &[]).unwrap();
            o.fan_out = fan_out;
            let strategy = fuzz::case_strategy(&o.profile, o.faults, o.fan_out);
            let (mut sinks, mut sources, mut joins, mut read_writes) = (0, 0, 0, 0);
            for i in 0..60 {
                let scenario = fuzz::generate(&strategy, 1, i).unwrap().current().scenario(&o.profile, &[], "shapes");
                let WorkloadConfig::Script(sessions) = scenario.workload else { panic!("fuzz cases are scripts") };
                for s in sessions {
                    let edges: Vec<(u32, u32)> = (0..s.functions.len() as u32)
                        .flat_map(|f| match &s.functions[f as usize].after {
                            Some(list) => list.iter().map(|&p| (p, f)).collect(),
                            None if f > 0 => vec![(f - 1, f)],
                            None => vec![],
                        })
                        .collect();
                    let dag = Dag::new(s.functions.len() as u32, &edges).unwrap();
                    sinks += usize::from(dag.sink_count() > 1);
                    sources += usize::from(dag.source_count() > 1);
                    joins += usize::from((0..dag.len() as u32).any(|f| dag.preds(f).len() > 1));
                    assert!(fan_out || dag.is_chain(), "{protocol}: --no-fan-out drew a non-chain");
                    // A read of a key, then a write of it, in one function (by key name; the
                    // shared-log protocols read and append books of the same names).
                    read_writes += s
                        .functions
                        .iter()
                        .filter(|f| {
                            let key = |op: &ScriptOp| match op {
                                ScriptOp::Read(k) | ScriptOp::Write(k) => k.clone(),
                                other => serde_json::to_value(other).unwrap().to_string(),
                            };
                            f.ops.windows(2).any(|w| {
                                matches!(w[1], ScriptOp::Write(_)) && !matches!(w[0], ScriptOp::Write(_)) && key(&w[0]) == key(&w[1])
                            })
                        })
                        .count();
                }
            }
            if fan_out {
                assert!(sinks > 0 && sources > 0 && joins > 0, "{protocol}: sinks {sinks}, sources {sources}, joins {joins}");
            }
            if o.profile.level() != causim_checkers::Level::SharedLog {
                assert!(read_writes > 0, "{protocol}: no function reads a key and then writes it");
            }
        }
    }
}

/// Goal: `--write-case` writes a generated case that `causim run` accepts.
#[test]
fn a_generated_case_can_be_written_and_run() {
    let dir = temp_dir("case");
    let out = causim(&["fuzz", "--protocol", "faastcc", "--write-case", "7", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let path: &Path = &dir.join("fuzz-case-7.json");
    let run = causim(&["run", path.to_str().unwrap(), "--out", dir.join("r").to_str().unwrap()]);
    assert!(run.status.code() == Some(0) || run.status.code() == Some(1), "{}", String::from_utf8_lossy(&run.stderr));
    assert!(String::from_utf8_lossy(&run.stdout).contains("check           tcc"));
    let _ = std::fs::remove_dir_all(&dir);
}
