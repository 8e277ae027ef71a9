//! CausalMesh and CausalMesh-TCC end to end: the paper's scenarios replay as described, the
//! correct protocol shows no anomaly over many seeds with roaming workflows, and every mutant
//! is caught.

use causim_pipeline::run::{self, RunOptions, RunReport};
use causim_pipeline::scenario::LoadedScenario;
use std::path::{Path, PathBuf};

fn load(path: &str) -> LoadedScenario {
    LoadedScenario::from_file(Path::new(path)).unwrap_or_else(|e| panic!("{e}"))
}

fn run(loaded: &LoadedScenario, seed: Option<u64>, mutants: &[&str]) -> RunReport {
    let options = RunOptions { seed, extra_mutants: mutants.iter().map(|m| m.to_string()).collect(), ..Default::default() };
    run::run(loaded, &options).unwrap_or_else(|e| panic!("{}: {e}", loaded.path.display()))
}

fn run_to_dir(path: &str, name: &str) -> (RunReport, PathBuf) {
    let dir = std::env::temp_dir().join(format!("causim-cm-{name}-{}", std::process::id()));
    let options = RunOptions { out_dir: Some(dir.clone()), trace: true, ..Default::default() };
    (run::run(&load(path), &options).unwrap(), dir)
}

fn reads_of(history: &str, session: &str) -> Vec<(String, serde_json::Value)> {
    history
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["session"] == session)
        .flat_map(|v| v["ops"].as_array().cloned().unwrap_or_default())
        .filter(|op| op["f"] == "r")
        .map(|op| (op["key"].as_str().unwrap().to_string(), op["value"].clone()))
        .collect()
}

/// Goal: Fig. 6 — with carried local writes c2 sees y and x at S1; without them (the mutant)
/// it sees y but not x, and the checker names it WriteCOInitRead.
#[test]
fn fig6_carried_writes_make_x_visible_with_y() {
    let (ok, dir) = run_to_dir("scenarios/causalmesh/fig6.json", "fig6");
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    assert_eq!(reads_of(&history, "c2"), [("y".into(), 1.into()), ("y".into(), 1.into()), ("x".into(), 1.into())]);
    assert!(ok.passed());

    let (bad, dir) = run_to_dir("scenarios/causalmesh/fig6-no-carry.json", "fig6-no-carry");
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    assert_eq!(reads_of(&history, "c2").last().unwrap(), &("x".to_string(), serde_json::Value::Null));
    assert_eq!(bad.anomalies(), ["WriteCOInitRead"]);
    let text = causim::report::render_check(bad.check.as_ref().unwrap());
    assert!(text.contains("T4 < T1, because T4 read the initial x, which T1's x=1 overwrote: a contradiction!"), "{text}");
}

/// Goal: Fig. 9 — c2 reads y at S2 and migrates to S1, which integrates x and y from its
/// I-cache; c1 reads its own x at S0 through its local map.
#[test]
fn fig9_migration_integrates_x_and_y_at_s1() {
    let (report, dir) = run_to_dir("scenarios/causalmesh/fig9.json", "fig9");
    assert!(report.passed());
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    assert_eq!(reads_of(&history, "c2"), [("y".into(), 1.into()), ("x".into(), 1.into())]);
    assert_eq!(reads_of(&history, "c1"), [("x".into(), 1.into())]);
    let trace = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let integrate_at_s1 = trace
        .lines()
        .find(|l| l.contains("\"node\":\"S1\"") && l.contains("\"action\":\"IntegrateDeps\""))
        .expect("S1 integrates c2's deps");
    assert!(integrate_at_s1.contains("\"0@[1,0,0]\"") && integrate_at_s1.contains("\"1@[2,0,0]\""), "{integrate_at_s1}");
}

/// Goal: CausalMesh-TCC's ring buffer — with one version per key the reader aborts and is
/// retried; with two it reads the old cut; ignoring the cut gives a fractured read.
#[test]
fn tcc_ring_buffer_aborts_or_serves_an_old_cut() {
    let one = run(&load("scenarios/causalmesh/tcc-ring-abort.json"), None, &[]);
    assert!(one.passed());
    assert_eq!(one.summary.workflows.aborted_attempts, 1);
    let two = run(&load("scenarios/causalmesh/tcc-ring-2.json"), None, &[]);
    assert!(two.passed());
    assert_eq!(two.summary.workflows.aborted_attempts, 0);
    let bad = run(&load("scenarios/causalmesh/tcc-ignores-cut.json"), None, &[]);
    assert_eq!(bad.anomalies(), ["FracturedReadCO"]);
}

/// A roaming workload on a small, contended key space with heavy-tailed delays and one slow
/// link, so that chains, carried writes and integration are exercised hard.
fn roaming_scenario(protocol: &str, functions: &str, level: &str, extra_params: &str) -> LoadedScenario {
    let text = format!(
        r#"{{
  "name": "roaming",
  "protocol": {{"name": "{protocol}", "params": {{"db_flush": "async" {extra_params}}}}},
  "topology": {{
    "servers": 3,
    "delay": {{"dist": "lognormal", "mean_ns": 150000, "sigma": 1.2, "min_ns": 20000}},
    "local_delay": {{"dist": "constant", "ns": 5000}},
    "links": [{{"from": "*", "to": "db", "delay": {{"dist": "constant", "ns": 1000000}}, "both_ways": true}},
              {{"from": "S0", "to": "S1", "delay": {{"dist": "exponential", "mean_ns": 3000000}}}}]
  }},
  "scheduler": {{"policy": "random", "dispatch": {{"dist": "exponential", "mean_ns": 200000}}}},
  "workload": {{"generator": {{
    "workflow": {{"shape": "chain", "functions": 3}},
    "functions": {functions},
    "keys": {{"count": 30, "zipf_theta": 1.0}},
    "arrival": {{"kind": "closed", "clients": 6}},
    "workflows_max": 40}}}},
  "checks": {{"invariants": true, "level": "{level}"}}
}}"#
    );
    LoadedScenario::from_text(Path::new("roaming.json"), text).unwrap()
}

const MICRO: &str = r#"[{"reads": 3}, {"reads": 3}, {"writes": 1}]"#;

/// Seed counts scale with `CAUSIM_SEED_FACTOR` (default 1) for long confidence runs.
fn seeds(n: u64) -> u64 {
    n * std::env::var("CAUSIM_SEED_FACTOR").ok().and_then(|f| f.parse().ok()).unwrap_or(1)
}
const MIXED: &str = r#"[{"ops": 3, "mix": {"read": 0.4, "write": 0.4, "read_txn": 0.2}}]"#;

/// Goal: the correct protocol shows zero anomalies (and no invariant violation) over 1000
/// seeds of the micro-benchmark's shape with roaming, and over 300 seeds of a mixed workload.
#[test]
fn correct_causalmesh_has_no_anomaly_over_many_seeds() {
    for (functions, seeds) in [(MICRO, seeds(1000)), (MIXED, seeds(300))] {
        let scenario = roaming_scenario("causalmesh", functions, "ccv", "");
        for seed in 0..seeds {
            let r = run(&scenario, Some(seed), &[]);
            assert!(r.passed(), "seed {seed} ({functions}): {:?} {:?}", r.anomalies(), r.summary.invariant_violation);
            let w = &r.summary.workflows;
            assert_eq!(w.completed + w.failed, 40, "seed {seed}: every workflow finishes");
        }
    }
}

#[test]
fn correct_causalmesh_tcc_has_no_anomaly_over_many_seeds() {
    // A ring of one version, and of four (older versions widen the choice, and stress the
    // check that a read's cut holds with writes this server dropped unshown).
    for ring in ["", r#", "ring_size": 4"#] {
        for (functions, seeds) in [(MICRO, seeds(300)), (MIXED, seeds(300))] {
            let scenario = roaming_scenario("causalmesh_tcc", functions, "tcc", ring);
            for seed in 0..seeds {
                let r = run(&scenario, Some(seed), &[]);
                assert!(r.passed(), "seed {seed} ({functions}{ring}): {:?} {:?}", r.anomalies(), r.summary.invariant_violation);
            }
        }
    }
}

/// The first seed (of `seeds`) at which the mutant fails the run, if any.
fn first_catch(scenario: &LoadedScenario, mutant: &str, seeds: u64) -> Option<(u64, Vec<String>)> {
    (0..seeds).find_map(|seed| {
        let r = run(scenario, Some(seed), &[mutant]);
        (!r.passed()).then(|| (seed, r.anomalies()))
    })
}

/// Goal: every mutant is caught on the roaming workload within a bounded number of seeds
/// (evict_ignores_dependents needs a small C-cache, so its scenario sets one).
#[test]
fn every_mutant_is_caught_within_300_seeds() {
    let mixed = roaming_scenario("causalmesh", MIXED, "ccv", "");
    for mutant in ["no_carry_local_writes", "read_without_integration", "reveal_at_head", "nearest_deps_only", "integrate_by_vc_dominance"]
    {
        let caught = first_catch(&mixed, mutant, 300);
        assert!(caught.is_some(), "{mutant} survived 300 seeds");
    }
    let evicting =
        LoadedScenario::from_text(Path::new("evicting.json"), roaming_text_with(r#""db_flush": "sync", "c_cache_keys_max": 15"#)).unwrap();
    assert!(first_catch(&evicting, "evict_ignores_dependents", 300).is_some(), "evict_ignores_dependents survived");
    for seed in 0..seeds(300) {
        let r = run(&evicting, Some(seed), &[]);
        assert!(r.passed(), "correct eviction, seed {seed}: {:?} {:?}", r.anomalies(), r.summary.invariant_violation);
    }
    let tcc = roaming_scenario("causalmesh_tcc", MIXED, "tcc", "");
    assert!(first_catch(&tcc, "tcc_ignores_cut", 300).is_some(), "tcc_ignores_cut survived 300 seeds");
}

/// Goal: causal+ convergence (§5.2 with dissemination): once the chains drain, every server
/// shows the same winner of every key (`diverged_keys` 0), over the roaming workload's seeds
/// and in `disseminate-converges.json`; the mutant `dissemination_skips_head` leaves the heads
/// behind (`diverged_keys` > 0), which no history check sees.
#[test]
fn dissemination_makes_the_caches_converge() {
    let diverged = |r: &RunReport| r.summary.protocol_metrics["diverged_keys"];
    let converges = load("scenarios/causalmesh/disseminate-converges.json");
    assert_eq!(diverged(&run(&converges, None, &[])), 0.0);
    let skips = run(&load("scenarios/causalmesh/mutant-dissemination-skips-head.json"), None, &[]);
    assert!(skips.passed(), "the history passes: {:?}", skips.anomalies());
    assert_eq!(diverged(&skips), 1.0);
    let text = roaming_text_with(r#""db_flush": "async", "disseminate": true "#)
        .replace(r#""checks""#, r#""limits": {"settle_ns": 1000000000}, "checks""#);
    let roaming = LoadedScenario::from_text(Path::new("roaming-disseminate.json"), text).unwrap();
    for seed in 0..seeds(100) {
        let r = run(&roaming, Some(seed), &[]);
        assert!(r.passed(), "seed {seed}: {:?}", r.anomalies());
        assert_eq!(diverged(&r), 0.0, "seed {seed}");
    }
    let caught = (0..seeds(100)).find(|&seed| diverged(&run(&roaming, Some(seed), &["dissemination_skips_head"])) > 0.0);
    assert!(caught.is_some(), "dissemination_skips_head left no key diverged in 100 seeds");
}

fn roaming_text_with(params: &str) -> String {
    let s = roaming_scenario("causalmesh", MIXED, "ccv", "");
    s.text.replace(r#""db_flush": "async" "#, params)
}

/// Goal: Fig. 17 — with 0.15 ms RTT the inconsistency window (write → visible at the tail)
/// grows linearly with the number of servers, by a marginal within the paper's 300–450 µs.
#[test]
fn fig17_inconsistency_window_grows_linearly_with_servers() {
    let base = load("scenarios/causalmesh/fig17-visibility.json");
    let windows: Vec<f64> = (3..=8)
        .map(|n| {
            let text = base.text.replace("\"servers\": 3", &format!("\"servers\": {n}"));
            let loaded = LoadedScenario::from_text(Path::new("fig17.json"), text).unwrap();
            let r = run(&loaded, None, &[]);
            assert!(r.passed());
            r.summary.observations["visibility_ns"].p50 as f64
        })
        .collect();
    let marginals: Vec<f64> = windows.windows(2).map(|w| w[1] - w[0]).collect();
    for m in &marginals {
        assert!((300_000.0..=450_000.0).contains(m), "marginal {m} ns; windows {windows:?}");
    }
    // Least-squares line through (n, window): R² close to 1.
    let xs: Vec<f64> = (3..=8).map(|n| n as f64).collect();
    let (mx, my) = (xs.iter().sum::<f64>() / 6.0, windows.iter().sum::<f64>() / 6.0);
    let slope = xs.iter().zip(&windows).map(|(x, y)| (x - mx) * (y - my)).sum::<f64>() / xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>();
    let ss_res: f64 = xs.iter().zip(&windows).map(|(x, y)| (y - (my + slope * (x - mx))).powi(2)).sum();
    let ss_tot: f64 = windows.iter().map(|y| (y - my).powi(2)).sum();
    assert!(1.0 - ss_res / ss_tot > 0.99, "not linear: {windows:?}");
}

/// Goal: a write that a function killed by its workflow's abort had in flight is in the history
/// as a `failed` one-write transaction, and a later committed read of it is judged against it
/// (it was once recorded nowhere: a ThinAirRead). Regression: scenarios/causalmesh/killed-branch-write.json.
#[test]
fn a_killed_branchs_in_flight_write_is_recorded_as_failed_and_read_from() {
    let (report, dir) = run_to_dir("scenarios/causalmesh/killed-branch-write.json", "killed-branch");
    assert!(report.passed(), "{:?}", report.anomalies());
    let history = std::fs::read_to_string(dir.join("history.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> =
        history.lines().map(|l| serde_json::from_str(l).unwrap()).filter(|v: &serde_json::Value| v.get("format").is_none()).collect();
    let failed: Vec<&serde_json::Value> = lines.iter().filter(|v| v["outcome"] == "failed").collect();
    assert!(!failed.is_empty(), "no failed write recorded");
    for f in &failed {
        assert_eq!(f["kind"], "write");
        assert_eq!(f["ops"].as_array().unwrap().len(), 1, "one write per failed transaction: {f}");
        assert!(f["session"].as_str().unwrap().ends_with("/f2"), "only the killed branch f2 wrote: {f}");
    }
    // Some committed read returns a value that only a failed write wrote.
    let failed_values: Vec<&serde_json::Value> = failed.iter().map(|f| &f["ops"][0]["value"]).collect();
    let read_of_failed = lines
        .iter()
        .filter(|v| v["outcome"] == "ok")
        .flat_map(|v| v["ops"].as_array().unwrap().iter())
        .any(|op| op["f"] == "r" && op["key"] == "x" && failed_values.contains(&&op["value"]));
    assert!(read_of_failed, "expected a committed read of a killed branch's write");
    let _ = std::fs::remove_dir_all(dir);
}

/// Goal: CausalMesh-TCC fan-outs whose branches write (distinct keys) after a write before the
/// fan-out: each write appears once in the workflow's transaction (the join once listed the
/// source's writes once per branch: DuplicateWrite), over many seeds, with the checker passing.
#[test]
fn causalmesh_tcc_fan_out_with_writes_lists_each_write_once() {
    let mut loaded = load("scenarios/causalmesh/tcc-join-fan-out-write.json");
    let w = |k: &str| serde_json::json!({ "write": k });
    let r = |k: &str| serde_json::json!({ "read": k });
    let script = serde_json::json!([{
        "session": "c1",
        "functions": [
            { "ops": [w("x"), w("y")] },
            { "after": [0], "ops": [r("x"), w("a")] },
            { "after": [0], "ops": [r("y"), w("b")] },
            { "after": [1], "ops": [r("a"), w("c")] },
            { "after": [3, 2], "ops": [r("x"), r("a"), r("b"), r("c")] }
        ]
    }, {
        "session": "c2",
        "functions": [ { "ops": [r("x"), r("a"), r("b"), r("c")], "at_ns": 2000000 } ]
    }]);
    let mut raw: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&loaded.path).unwrap()).unwrap();
    raw["workload"]["script"] = script;
    let tmp = std::env::temp_dir().join(format!("causim-cm-tcc-fan-out-{}.json", std::process::id()));
    std::fs::write(&tmp, serde_json::to_string_pretty(&raw).unwrap()).unwrap();
    loaded = load(tmp.to_str().unwrap());
    for seed in 0..50 {
        let report = run(&loaded, Some(seed), &[]);
        assert!(report.passed(), "seed {seed}: {:?} {:?}", report.anomalies(), report.summary.invariant_violation);
    }
    let _ = std::fs::remove_file(tmp);
}

/// Goal: CausalMesh-TCC on the §9.2 micro-benchmark aborts some workflows but not most (the
/// read validation follows writes' own dependencies, not VC dominance, which aborted half), and
/// a workflow carries the deps of the writes it read, not ever-growing merged unions.
#[test]
fn tcc_micro_benchmark_aborts_a_minority_and_carries_a_small_context() {
    let r = run(&load("scenarios/causalmesh/tcc-micro-benchmark.json"), None, &[]);
    assert!(r.passed(), "{:?}", r.anomalies());
    let rate = r.summary.abort_rate;
    assert!((0.03..0.25).contains(&rate), "abort rate {rate}");
    let context = &r.summary.observations["context_bytes"];
    assert!(context.p99 < 1024, "context p99 {} bytes", context.p99);
}
