//! FaaSTCC scenarios, judged by the TCC history checker: the anomaly cases of the digest's §4.1,
//! the paper's §4.5 worked example, each mutant's catching scenario, and short runs of both
//! papers' workloads.
//!
//! Every test loads a scenario file from `scenarios/faastcc/`, runs it on the engine, reads
//! back the history it wrote and checks it at TCC with `causim-checkers`.

mod common;

use causim_models::Model;
use causim_models::faastcc::Faastcc;
use causim_pipeline::scenario::LoadedScenario;

use common::{CheckedRun as Run, run_checked as run_loaded};

fn load(file: &str) -> LoadedScenario {
    common::load_scenario("faastcc", file)
}

fn run(file: &str) -> Run {
    let loaded = load(file);
    run_loaded(&loaded, loaded.scenario.seed, &[])
}

fn assert_passes(file: &str, r: &Run) {
    r.assert_passes(file)
}

#[test]
fn faastcc_fractured_read_a1_the_interval_turns_a_newer_cached_version_into_a_storage_read() {
    // Goal: T3 of Fig. 1 cannot happen: d reads kb@T1 on S0 and then ka from S1's cache, which
    // holds ka@T2; the interval sends S1 to the store at s_high, which returns T1's ka.
    let r = run("fractured-read.json");
    assert_passes("fractured-read.json", &r);
    let d = &r.session("d")["ops"];
    assert_eq!((d[0]["key"].as_str(), d[0]["value"].as_u64()), (Some("kb"), Some(1)));
    assert_eq!((d[1]["key"].as_str(), d[1]["value"].as_u64()), (Some("ka"), Some(1)));
    assert_eq!(r.observed("cache_replaced"), 1);
}

#[test]
fn faastcc_cross_function_snapshot_a_stale_promise_is_refreshed_to_the_causal_past() {
    // Goal: d reads y@T2 (which causally follows T1's x) and then x on a cache that holds the
    // initial x: the entry is stale for the interval, so the store returns T1's x.
    let r = run("cross-function-snapshot.json");
    assert_passes("cross-function-snapshot.json", &r);
    let d = &r.session("d")["ops"];
    assert_eq!((d[1]["key"].as_str(), d[1]["value"].as_u64()), (Some("x"), Some(1)));
    assert_eq!(r.observed("cache_stale"), 1);
}

#[test]
fn faastcc_worked_example_4_5_the_four_cache_read_outcomes() {
    // Goal: §4.5 in simulated time. f_x's interval is [t_k, p_k]; the four k' entries are
    // stale (refreshed: same version, new promise), consistent below, consistent above, and
    // replaced (the store returns the older, here initial, version, and the cache keeps its own).
    let r = run("worked-example.json");
    assert_passes("worked-example.json", &r);
    let read = |case: &str| {
        let op = &r.session(case)["ops"][1];
        let v: Vec<u64> = op["version"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        (op["value"].as_u64(), v[0], v[1])
    };
    let k = &r.session("case1")["ops"][0]["version"];
    let (t_k, p_k) = (k[0].as_u64().unwrap(), k[1].as_u64().unwrap());
    let (v1, t1, p1) = read("case1");
    assert_eq!(v1, Some(1));
    assert!(t1 < t_k && p1 >= p_k, "case 1: the refreshed promise covers the interval");
    let (v2, t2, p2) = read("case2");
    assert!(v2 == Some(1) && t2 < t_k && t_k <= p2 && p2 < p_k, "case 2: narrows to [t_k, p']");
    let (v3, t3, p3) = read("case3");
    assert!(v3 == Some(1) && t_k < t3 && t3 <= p_k && p3 > p_k, "case 3: narrows to [t', p_k]");
    let (v4, t4, _) = read("case4");
    assert_eq!((v4, t4), (None, 0), "case 4: the version at s_high is the initial one");
    assert_eq!((r.observed("cache_stale"), r.observed("cache_replaced")), (1, 1));
}

#[test]
fn faastcc_promise_boundary_a_replaced_version_is_promised_up_to_one_below_its_successor() {
    let r = run("promise-boundary.json");
    assert_passes("promise-boundary.json", &r);
    let d2 = &r.session("d2")["ops"];
    assert_eq!((d2[0]["value"].as_u64(), d2[1]["value"].as_u64()), (Some(2), Some(2)), "d2 reads T2's kb and ka");
}

#[test]
fn faastcc_fan_in_disjoint_branch_intervals_abort_and_the_retry_commits() {
    // Goal: digest A5. The join of [T1, ~29 ms] and [T2, ~51 ms] is empty: abort, then retry.
    let r = run("fan-in-merge.json");
    assert_passes("fan-in-merge.json", &r);
    assert_eq!(r.summary.workflows.aborted_attempts, 1);
    let aborted = r.history.iter().find(|t| t["outcome"] == "aborted").expect("an aborted attempt");
    assert_eq!(aborted["note"], "empty_interval");
}

#[test]
fn faastcc_gc_a_collected_version_returns_bottom_and_the_workflow_aborts_then_commits() {
    // Goal: digest A7. With one version per key, the snapshot d's interval needs is gone.
    let r = run("gc-abort.json");
    assert_passes("gc-abort.json", &r);
    assert_eq!(r.summary.workflows.aborted_attempts, 1);
    let aborted = r.history.iter().find(|t| t["outcome"] == "aborted").expect("an aborted attempt");
    assert_eq!(aborted["note"], "gc_collected");
    let retry = &r.session("d#2")["ops"];
    assert_eq!((retry[0]["value"].as_u64(), retry[1]["value"].as_u64()), (Some(2), Some(2)));
}

#[test]
fn faastcc_mutants_are_caught_by_the_tcc_checker_and_by_the_invariants() {
    // Each mutant's catching scenario: the checker names the anomaly, the online invariant fires.
    for (file, mutant, anomaly) in [
        ("mutant-promise-off-by-one.json", "promise_off_by_one", "FracturedReadCM"),
        ("mutant-no-interval-narrowing.json", "no_interval_narrowing", "FracturedReadCM"),
        ("mutant-no-interval-narrowing-causal.json", "no_interval_narrowing", "COConflictCM"),
        ("mutant-no-fanin-merge.json", "no_fanin_merge", "FracturedReadCM"),
    ] {
        let loaded = load(file);
        assert_eq!(loaded.scenario.protocol.mutants, [mutant], "{file}");
        let r = run_loaded(&loaded, 1, &[]);
        assert!(!r.report.ok, "{file}: the checker must catch {mutant}");
        assert_eq!(r.anomalies(), [anomaly], "{file}");
        assert!(r.summary.invariant_violation.is_some(), "{file}: the online invariant must catch {mutant}");
        // The same scenario without the mutant passes.
        let mut fixed = loaded.clone();
        fixed.scenario.protocol.mutants.clear();
        let r = run_loaded(&fixed, 1, &[]);
        assert!(r.report.ok && r.summary.invariant_violation.is_none(), "{file} without {mutant}");
    }
}

fn shortened(file: &str, workflows: u64) -> LoadedScenario {
    common::shortened(load(file), workflows)
}

#[test]
fn faastcc_paper_workloads_run_clean_with_16_bytes_of_metadata_and_one_storage_round_per_read() {
    // Goal: both papers' workloads, shortened; FaaSTCC's Fig. 5 (constant 16 bytes) and Fig. 6
    // (exactly one storage round per read that misses the cache) hold by construction.
    for (file, workflows) in [
        ("causalmesh-micro.json", 400),
        ("faastcc-chain-zipf10.json", 800),
        ("faastcc-chain-zipf125.json", 800),
        ("faastcc-chain-zipf15.json", 800),
    ] {
        let loaded = shortened(file, workflows);
        let r = run_loaded(&loaded, 7, &[]);
        assert_passes(file, &r);
        let meta = &r.summary.observations["metadata_bytes"];
        assert_eq!((meta.p50, meta.max), (16, 16), "{file}");
        assert_eq!(r.summary.observations["storage_rounds_per_read"].max, 1, "{file}");
        assert_eq!(r.summary.workflows.aborted_attempts, 0, "{file}: chains never abort without garbage collection");
    }
}

#[test]
fn faastcc_runs_are_deterministic() {
    let loaded = shortened("causalmesh-micro.json", 200);
    let a = run_loaded(&loaded, 3, &[]);
    let b = run_loaded(&loaded, 3, &[]);
    assert_eq!(a.summary.history_hash, b.summary.history_hash);
    let c = run_loaded(&loaded, 4, &[]);
    assert_ne!(a.summary.history_hash, c.summary.history_hash);
}

#[test]
fn faastcc_bad_parameters_are_errors_naming_the_field() {
    let topology = load("fractured-read.json").scenario.topology;
    for (params, path, says) in [
        (serde_json::json!({"partitions": 0}), "params.partitions", "between 1 and 1024"),
        (serde_json::json!({"partitions": 2000}), "params.partitions", "between 1 and 1024"),
        (serde_json::json!({"push_period_ns": 0}), "params.push_period_ns", "positive"),
        (serde_json::json!({"versions_per_key_max": 0}), "params.versions_per_key_max", "at least 1"),
        (serde_json::json!({"push_period": 5}), "params.push_period", "unknown field `push_period`"),
        (serde_json::json!({"prewarm": "yes"}), "params.prewarm", "invalid type"),
    ] {
        let e = Faastcc::build(&params, &[], &topology).expect_err("rejected");
        assert_eq!(e.path, path, "{params}");
        assert!(e.message.contains(says), "{params}: {}", e.message);
    }
}

/// Goal: every regression scenario (`regression-*.json`: a fuzzer finding in the correct
/// protocol, shrunk and since fixed) meets its expectation, which is to pass.
#[test]
fn faastcc_every_regression_scenario_passes() {
    for (file, loaded) in common::regression_scenarios("faastcc") {
        let r = run_loaded(&loaded, loaded.scenario.seed, &[]);
        assert_passes(&file, &r);
    }
}

#[test]
fn faastcc_regression_promise_bumps_with_gc_push_the_newest_stable_version() {
    // Goal: GC no longer collects T's z before it is stable, so P1's push carries it and c2
    // reads T whole (y=1, z=1) instead of T's y with the initial z (NonMonoReadCO, once).
    let r = run("regression-promise-bumps-gc.json");
    assert_passes("regression-promise-bumps-gc.json", &r);
    let c2 = &r.session("c2")["ops"];
    assert_eq!((c2[0]["value"].as_u64(), c2[1]["value"].as_u64()), (Some(1), Some(1)));
}
