//! Concord's mutants are found by the fuzzer, and the strict protocol survives the same budget.
//!
//! `inv_parallel_with_put` and `non_blocking_directory` are convicted by the history alone
//! (`--oracle history`). `no_owner_deferral` is not: the fuzzer draws one constant storage
//! delay, and with it storage applies writes and serves reads in the order they were sent, so
//! an owner that answers early is never observed (its write was sent to storage before anything
//! its early answer lets happen). It takes a storage latency that varies
//! (`scenarios/concord/mutant-no-owner-deferral*.json` use a slow link from the owner) for a
//! client to see it; here the agent's E_W invariant convicts it (`--oracle all`).

use causim::fuzz::{self, Faults, FuzzOptions};
use causim_pipeline::run::{self, RunOptions};
use causim_pipeline::scenario::LoadedScenario;
use proptest::strategy::ValueTree;
use std::path::Path;

/// Cases each search may use; the correct protocol must survive it.
const BUDGET: u64 = 3000;

fn options(mutants: &[&str], invariants: bool) -> FuzzOptions {
    protocol_options("concord", mutants, invariants)
}

fn protocol_options(protocol: &str, mutants: &[&str], invariants: bool) -> FuzzOptions {
    let mut o = FuzzOptions::new(protocol, mutants).unwrap();
    o.cases_max = BUDGET;
    o.threads = 2;
    o.invariants = invariants;
    o.shrink_iters_max = 500;
    o
}

#[test]
fn every_concord_mutant_is_found_by_the_fuzzer() {
    let cases = [
        ("inv_parallel_with_put", true, Faults::Safe),
        ("non_blocking_directory", true, Faults::Safe),
        ("no_owner_deferral", false, Faults::Safe),
        // It needs a crash: `--faults all` draws one crash-stop of a cache agent.
        ("no_failure_eviction", true, Faults::All),
        // The fuzzer draws a departure (`params.leaves`) in a quarter of Concord's cases.
        ("leave_without_migration", true, Faults::Safe),
        ("serve_before_entries", true, Faults::Safe),
        // A third of Concord's cases run transactions (`params.transactions`), checked at
        // `strict-serializable`: write skew and lost updates convict both.
        ("commit_without_global_lock", true, Faults::Safe),
        ("no_remote_squash", true, Faults::Safe),
    ];
    for (mutant, by_history, faults) in cases {
        let mut o = options(&[mutant], !by_history);
        o.faults = faults;
        let outcome = fuzz::fuzz(&o).unwrap();
        let f = outcome.failure.unwrap_or_else(|| panic!("{mutant}: no failure in {} cases", outcome.cases));
        if by_history {
            assert!(!f.shrunk_verdict.anomalies.is_empty(), "{mutant}: the history check must convict: {}", f.shrunk_verdict);
        }
        eprintln!(
            "concord --mutant {mutant}: case {} ({:.2} s), shrunk to {}: {}",
            f.index,
            outcome.search_s,
            f.shrunk.size(),
            f.shrunk_verdict
        );
    }
}

#[test]
fn the_strict_protocol_survives_the_same_budget_with_its_invariants() {
    // `Faults::All`: one crash-stop of a cache agent in some cases.
    for faults in [Faults::Safe, Faults::All] {
        let mut o = options(&[], true);
        o.faults = faults;
        let outcome = fuzz::fuzz(&o).unwrap();
        assert!(outcome.failure.is_none(), "{faults:?}: {:?}", outcome.failure.map(|f| (f.index, f.original_verdict.to_string())));
        assert_eq!(outcome.cases, BUDGET);
    }
}

/// Goal (issue 17, transactions): every fuzzed case that draws transactions (a third of
/// Concord's) completes, judged with the liveness oracle (`--oracle liveness`: every workflow
/// completes, every invariant holds, the history is strictly serializable), with the faults
/// transactions survive (`--faults all` draws no crash for them). The oracle cannot run on all
/// of Concord's cases: it convicts the limits the model states outside transactions (a function
/// pinned to an instance that left the domain gives up; a call on a crashed machine waits out
/// the 10 s call timeout, past the fuzzer's 2 s stall limit). `CONCORD_TXN_CASES` and
/// `CONCORD_FUZZ_SEED` change the budget (3 000 cases) and the fuzz seed (1).
#[test]
fn every_fuzzed_case_with_transactions_completes() {
    let cases: u64 = std::env::var("CONCORD_TXN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(BUDGET);
    let fuzz_seed: u64 = std::env::var("CONCORD_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let profile = fuzz::Profile::of("concord").unwrap();
    let strategy = fuzz::case_strategy(&profile, Faults::All, true);
    let started = std::time::Instant::now();
    let mut judged = 0;
    for i in 0..cases {
        let case = fuzz::generate(&strategy, fuzz_seed, i).unwrap().current();
        if case.params.get("transactions") != Some(&serde_json::Value::Bool(true)) {
            continue;
        }
        assert!(case.crashes.is_empty(), "case {i}: a crash drawn with transactions");
        let verdict = fuzz::judge(&case.scenario(&profile, &[], "concord-txn-liveness"), true).unwrap();
        assert_eq!(verdict, fuzz::Verdict::Pass, "fuzz seed {fuzz_seed}, case {i}");
        judged += 1;
    }
    eprintln!("{judged} transactional cases of {cases} (fuzz seed {fuzz_seed}) complete, {:.1} s", started.elapsed().as_secs_f64());
    assert!(judged > cases / 4, "only {judged} of {cases} cases drew transactions");
}

/// The OFC baseline (one copy, at the home) survives the same budget.
#[test]
fn the_ofc_baseline_survives() {
    let outcome = fuzz::fuzz(&protocol_options("ofc", &[], true)).unwrap();
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure.map(|f| (f.index, f.original_verdict.to_string())));
    assert_eq!(outcome.cases, BUDGET);
}

/// The Faa$T baseline (check-then-read) survives the same budget, and its mutant (local hits
/// without the version check) is found by the history alone.
#[test]
fn the_faast_baseline_survives_and_its_mutant_is_found() {
    let outcome = fuzz::fuzz(&protocol_options("faast", &[], true)).unwrap();
    assert!(outcome.failure.is_none(), "{:?}", outcome.failure.map(|f| (f.index, f.original_verdict.to_string())));
    let outcome = fuzz::fuzz(&protocol_options("faast", &["no_version_check"], false)).unwrap();
    let f = outcome.failure.expect("no_version_check: no failure");
    assert!(!f.shrunk_verdict.anomalies.is_empty(), "the history check must convict: {}", f.shrunk_verdict);
    eprintln!("faast --mutant no_version_check: case {}, shrunk to {}: {}", f.index, f.shrunk.size(), f.shrunk_verdict);
}

#[test]
fn a_join_of_an_instance_still_in_the_domain_is_refused_with_the_file_line_and_field() {
    let text = r#"{
  "format": "causim-scenario/1", "name": "concord-join", "seed": 1,
  "protocol": {"name": "concord", "params": {"leaves": [{"node": "S2", "at_ns": 50}],
    "joins": [{"node": "S1", "at_ns": 90}]}},
  "topology": {"servers": 3, "delay": {"dist": "constant", "ns": 1000}},
  "workload": {"script": [{"session": "c1", "functions": [{"on": "S0", "ops": [{"write": "x"}]}]}]}
}"#;
    // Loaded (the scenario is well formed), refused when the model is built, located in the file.
    let loaded = LoadedScenario::from_text(Path::new("join.json"), text.to_string()).unwrap();
    let err = run::run(&loaded, &RunOptions::default()).unwrap_err().to_string();
    assert!(
        err.contains("join.json:4") && err.contains("protocol.params.joins[0].node") && err.contains("S1 joins while still in the domain"),
        "{err}"
    );
}

/// Runs `loaded` over `seeds` on two threads, with `vary` adjusting the scenario per seed;
/// returns the seeds that fail, with why.
fn failing_seeds(path: &Path, base: &serde_json::Value, seeds: u64, vary: impl Fn(u64, &mut serde_json::Value) + Sync) -> Vec<String> {
    seeds_failing(path, base, seeds, false, vary)
}

/// As `failing_seeds`; with `live`, a seed with a workflow that did not complete fails too.
fn seeds_failing(
    path: &Path,
    base: &serde_json::Value,
    seeds: u64,
    live: bool,
    vary: impl Fn(u64, &mut serde_json::Value) + Sync,
) -> Vec<String> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2u64)
            .map(|w| {
                let vary = &vary;
                scope.spawn(move || {
                    (1..=seeds)
                        .filter(|seed| seed % 2 == w)
                        .filter_map(|seed| {
                            let mut s = base.clone();
                            vary(seed, &mut s);
                            let loaded = LoadedScenario::from_text(path, s.to_string()).unwrap();
                            let report = run::run(&loaded, &RunOptions { seed: Some(seed), ..RunOptions::default() }).unwrap();
                            let live_enough = !live || report.summary.liveness.live;
                            (!report.passed() || !live_enough).then(|| {
                                format!(
                                    "seed {seed}: {:?} {:?} {}",
                                    report.anomalies(),
                                    report.summary.invariant_violation,
                                    report.summary.liveness.describe()
                                )
                            })
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

fn zipf_workload() -> (std::path::PathBuf, serde_json::Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/concord/zipf-workload.json");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, s)
}

/// Goal: the strict protocol under load, over many seeds, with small caches and directories so
/// evictions, "don't have it" answers and recalls are common: no anomaly, no invariant broken.
#[test]
fn a_thousand_seeds_of_a_contended_workload_pass() {
    let (path, mut s) = zipf_workload();
    s["workload"]["generator"]["workflows_max"] = 200.into();
    s["workload"]["generator"]["keys"]["count"] = 50.into();
    s["protocol"]["params"] = serde_json::json!({"strict": true, "lines_max": 8, "directory_max": 6});
    let failures = failing_seeds(&path, &s, 1000, |_, _| {});
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Goal: the strict protocol survives a crash. Each seed crashes one of the 8 instances at a
/// different time while 200 workflows run on the Zipf workload (small caches and directories,
/// so the crashed agent homes, owns and shares keys in every state): every key's history is
/// linearizable, and every invariant (I7 failure fencing among them) holds throughout, with the
/// crashed instance's keys re-homed and its functions' workflows retried elsewhere.
#[test]
fn three_hundred_seeds_with_one_crash_each_pass() {
    let (path, mut s) = zipf_workload();
    s["workload"]["generator"]["workflows_max"] = 200.into();
    s["workload"]["generator"]["keys"]["count"] = 50.into();
    s["protocol"]["params"] = serde_json::json!({"strict": true, "lines_max": 8, "directory_max": 6, "call_timeout_ns": 1_000_000_000u64});
    let failures = failing_seeds(&path, &s, 300, one_crash);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Seed `seed`'s crash: one of the 8 instances, at a time within the run (200 workflows at
/// 50/s take about 4 s: between 0.2 s and 3.8 s).
fn one_crash(seed: u64, s: &mut serde_json::Value) {
    let at_ns = 200_000_000 + (seed * 7_919_000_000) % 3_600_000_000;
    s["faults"] = serde_json::json!({"crashes": [{"node": format!("S{}", seed % 8), "at_ns": at_ns}]});
}

/// The failure mutants on a generated workload with one crash (the fuzzer finds
/// `no_failure_eviction` too, above). `no_failure_eviction` shows within a few seeds.
/// `no_storage_fencing` needs a crashed owner's write to reach storage
/// after the fence, a storage link slower than failure detection, which this workload never
/// draws: `scenarios/concord/mutant-no-storage-fencing.json` convicts it.
#[test]
fn no_failure_eviction_is_caught_on_the_crash_workload() {
    let (path, mut s) = zipf_workload();
    s["workload"]["generator"]["workflows_max"] = 200.into();
    s["workload"]["generator"]["keys"]["count"] = 50.into();
    s["protocol"]["params"] = serde_json::json!({"strict": true, "lines_max": 8, "directory_max": 6, "call_timeout_ns": 1_000_000_000u64});
    s["protocol"]["mutants"] = serde_json::json!(["no_failure_eviction"]);
    s["checks"]["invariants"] = false.into();
    let failures = failing_seeds(&path, &s, 20, one_crash);
    eprintln!("no_failure_eviction: {} of 20 seeds convicted by the history alone", failures.len());
    assert!(!failures.is_empty(), "no seed of 20 convicts no_failure_eviction");
}

/// Goal (issue 17, membership): the strict protocol survives crashes, restarts and domain
/// changes together. Each seed crashes one of the 8 instances (in half the seeds its machine
/// restarts 50 ms to 1.5 s later, before or after the failure is detected, and the instance
/// rejoins), and another instance leaves and joins again, on the Zipf workload with small caches
/// and directories: every key's history is linearizable and every node invariant holds. The
/// default seed count suits CI; `CONCORD_SEEDS=1000` runs the issue's thousand (recorded in
/// docs/fuzzing.md). In about one seed in eight the crash lands during the domain change, which
/// then stalls (a known liveness limit, see the module essay): calls time out and workflows give
/// up, but nothing stale is served, which is what this test checks.
#[test]
fn seeds_with_a_crash_a_restart_and_domain_changes_pass() {
    let seeds: u64 = std::env::var("CONCORD_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let (path, mut s) = zipf_workload();
    s["workload"]["generator"]["workflows_max"] = 200.into();
    s["workload"]["generator"]["keys"]["count"] = 50.into();
    s["protocol"]["params"] = serde_json::json!({"strict": true, "lines_max": 8, "directory_max": 6, "call_timeout_ns": 1_000_000_000u64});
    let failures = failing_seeds(&path, &s, seeds, |seed, s| {
        one_crash(seed, s);
        if seed % 2 == 0 {
            let at = s["faults"]["crashes"][0]["at_ns"].as_u64().unwrap();
            s["faults"]["crashes"][0]["restart_ns"] = (at + 50_000_000 + (seed * 104_729_000) % 1_450_000_000).into();
        }
        let (node, leave_ns) = ((seed + 3) % 8, 100_000_000 + (seed * 6_700_417_000) % 3_000_000_000);
        let join_ns = leave_ns + 100_000_000 + (seed * 15_485_863) % 900_000_000;
        s["protocol"]["params"]["leaves"] = serde_json::json!([{"node": format!("S{node}"), "at_ns": leave_ns}]);
        s["protocol"]["params"]["joins"] = serde_json::json!([{"node": format!("S{node}"), "at_ns": join_ns}]);
        if seed % 2 == 0 {
            s["protocol"]["params"]["home_keeps_copy"] = true.into();
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Goal (issue 17, transactions): contended transactions make progress. Each seed runs
/// `scenarios/concord/txn-contended.json` (300 transactions of 3 calls over 8 Zipf keys on 4
/// agents): every transaction commits and the history is strictly serializable. Before the
/// squash priority and the withdrawal of dead lock requests, 18 of 300 committed. The default
/// seed count suits CI; `CONCORD_SEEDS=1000` runs a thousand (recorded in docs/fuzzing.md).
#[test]
fn contended_transactions_all_commit_strictly_serializably_over_many_seeds() {
    let seeds: u64 = std::env::var("CONCORD_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/concord/txn-contended.json");
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let failures = seeds_failing(&path, &s, seeds, true, |_, _| {});
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
