//! HydroCache-Con and -Opt scenarios, judged by the TCC history checker: the fractured read of
//! the digest's §4.1 A1, the mutant's catching scenario, and short runs of both papers'
//! workloads, with the metadata and abort contrasts the comparison needs.
//!
//! Every test loads a scenario file from `scenarios/hydrocache/`, runs it on the engine, reads
//! back the history it wrote and checks it at TCC with `causim-checkers`.

mod common;

use causim_models::Model;
use causim_models::hydrocache::HydroCache;
use causim_pipeline::scenario::LoadedScenario;

use common::{CheckedRun as Run, run_checked as run_loaded};

fn load(file: &str) -> LoadedScenario {
    common::load_scenario("hydrocache", file)
}

fn run(file: &str) -> Run {
    let loaded = load(file);
    run_loaded(&loaded, loaded.scenario.seed, &[])
}

fn assert_passes(file: &str, r: &Run) {
    r.assert_passes(file)
}

#[test]
fn hydrocache_opt_fractured_read_validation_aborts_and_the_retry_commits() {
    // Goal: d reads kb@T1 on S1, whose cut lags, then ka@T2 on S0: ka@T2 depends on kb@T2, so
    // validation between the functions aborts; the retry, after S1's refresh, sees T2 whole.
    let r = run("opt-fractured-read.json");
    assert_passes("opt-fractured-read.json", &r);
    assert_eq!(r.summary.workflows.aborted_attempts, 1);
    let aborted = r.history.iter().find(|t| t["outcome"] == "aborted").expect("an aborted attempt");
    assert_eq!(aborted["note"], "causal_violation");
    let retry = &r.session("d#2")["ops"];
    assert_eq!((retry[0]["value"].as_u64(), retry[1]["value"].as_u64()), (Some(2), Some(2)));
}

#[test]
fn hydrocache_con_fractured_read_the_joined_snapshot_is_consistent_before_execution() {
    // Goal: Con builds the join of every cache's cut before d runs: no abort, and f0 reads
    // T2's kb on S1 although S1's own cut still holds T1's.
    let r = run("con-fractured-read.json");
    assert_passes("con-fractured-read.json", &r);
    assert_eq!(r.summary.workflows.aborted_attempts, 0);
    let d = &r.session("d")["ops"];
    assert_eq!((d[0]["value"].as_u64(), d[1]["value"].as_u64()), (Some(2), Some(2)));
    assert_eq!(r.summary.observations["con_prepare_ns"].count, 3, "two rounds with every cache, per workflow");
}

#[test]
fn hydrocache_opt_without_validation_is_caught_by_the_tcc_checker_and_the_invariant() {
    let loaded = load("mutant-opt-without-validation.json");
    assert_eq!(loaded.scenario.protocol.mutants, ["opt_without_validation"]);
    let r = run_loaded(&loaded, 1, &[]);
    assert!(!r.report.ok, "the checker must catch opt_without_validation");
    assert_eq!(r.anomalies(), ["FracturedReadCM"]);
    assert!(r.summary.invariant_violation.is_some());
    let d = &r.session("d")["ops"];
    assert_eq!((d[0]["value"].as_u64(), d[1]["value"].as_u64()), (Some(1), Some(2)), "T1's kb with T2's ka");
}

fn shortened(file: &str, workflows: u64) -> LoadedScenario {
    common::shortened(load(file), workflows)
}

#[test]
fn hydrocache_paper_workloads_run_clean_con_never_aborts_and_opt_carries_the_dependency_map() {
    // Goal: both papers' workloads, shortened. Con (static) carries only its read set and never
    // aborts with pre-warmed caches; Opt (dynamic) carries the whole dependency map, far more
    // than FaaSTCC's 16 bytes (FaaSTCC Fig. 5).
    let mut opt_meta = Vec::new();
    for z in ["10", "125", "15"] {
        let con = run_loaded(&shortened(&format!("con-chain-zipf{z}.json"), 800), 7, &[]);
        assert_passes("con", &con);
        assert_eq!(con.summary.workflows.aborted_attempts, 0, "Con, Zipf {z}");
        assert!(con.summary.observations["metadata_bytes"].max <= 8 + 16 * 12, "Con carries its read set only");
        let opt = run_loaded(&shortened(&format!("opt-chain-zipf{z}.json"), 800), 7, &[]);
        assert_passes("opt", &opt);
        opt_meta.push(opt.summary.observations["metadata_bytes"].p50);
    }
    // (The paper's trend, shrinking with skew, needs the long runs: in 800 workflows the maps
    // have not saturated yet. See the module docs of `models/src/hydrocache/mod.rs`.)
    assert!(opt_meta.iter().all(|&m| m > 16 * 16), "Opt's median dependency maps: {opt_meta:?} bytes");
    for mode in ["con", "opt"] {
        let file = format!("{mode}-causalmesh-micro.json");
        let r = run_loaded(&shortened(&file, 400), 7, &[]);
        assert_passes(&file, &r);
    }
}

#[test]
fn hydrocache_runs_are_deterministic() {
    let loaded = shortened("opt-causalmesh-micro.json", 200);
    let a = run_loaded(&loaded, 3, &[]);
    let b = run_loaded(&loaded, 3, &[]);
    assert_eq!(a.summary.history_hash, b.summary.history_hash);
}

#[test]
fn hydrocache_bad_parameters_are_errors_naming_the_field() {
    let topology = load("opt-fractured-read.json").scenario.topology;
    for (params, path, says) in [
        (serde_json::json!({}), "params", "missing field `mode`"),
        (serde_json::json!({"mode": "hybrid"}), "params.mode", "unknown variant `hybrid`"),
        (serde_json::json!({"mode": "opt", "refresh_period_ns": 0}), "params.refresh_period_ns", "positive"),
        (serde_json::json!({"mode": "con", "refresh": 1}), "params.refresh", "unknown field `refresh`"),
    ] {
        let e = HydroCache::build(&params, &[], &topology).expect_err("rejected");
        assert_eq!(e.path, path, "{params}");
        assert!(e.message.contains(says), "{params}: {}", e.message);
    }
}

/// Goal: every regression scenario (`regression-*.json`: a fuzzer finding in the correct
/// protocol, shrunk and since fixed) meets its expectation, which is to pass.
#[test]
fn hydrocache_every_regression_scenario_passes() {
    for (file, loaded) in common::regression_scenarios("hydrocache") {
        let r = run_loaded(&loaded, loaded.scenario.seed, &[]);
        // Message loss and crashes may leave a workflow unfinished (nothing is retransmitted);
        // the history must still be clean.
        let faults = &loaded.scenario.faults;
        if faults.loss_probability > 0.0 || !faults.crashes.is_empty() {
            assert_eq!(r.summary.invariant_violation, None, "{file}");
            assert!(r.report.ok, "{file}: {}", r.report.render_text());
        } else {
            assert_passes(&file, &r);
        }
    }
}

#[test]
fn hydrocache_regression_an_abort_does_not_start_its_waiting_sibling() {
    // Goal: c6/f1 aborts while its sibling c6/f2 waits for f1's worker slot. The slot f1 frees
    // must not start f2 (it used to, and f2's read then reached S1 after the attempt's Cleanup,
    // and f2 outlived its attempt); the retry commits and no read of the torn-down attempt
    // reaches a cache.
    let r = run("regression-read-after-cleanup.json");
    assert_passes("regression-read-after-cleanup.json", &r);
    assert_eq!(r.summary.workflows.aborted_attempts, 1);
    assert!(!r.summary.observations.contains_key("retired_reads"), "{:?}", r.summary.observations.get("retired_reads"));
}

#[test]
fn write_behind_under_overload_runs_on_a_small_stack() {
    // Goal: each write-behind sink finishes inside its start handler and starts the next waiting
    // function; that chain is as long as the machine's queue (thousands here) and must not
    // recurse, or a sweep thread's stack overflows.
    let r = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| run("write-behind-overload.json"))
        .expect("a thread")
        .join()
        .expect("the run finishes on a 1 MB stack");
    assert_passes("write-behind-overload.json", &r);
    assert!(r.summary.workflows.completed > 1000, "{:?}", r.summary.workflows);
}
