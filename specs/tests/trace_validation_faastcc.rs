//! Trace validation: a simulator run of FaaSTCC becomes a TLA+ behaviour that TLC checks against
//! `FaaSTCC.tla` through the refinement mapping of `trace_validation_faastcc` (partitioned
//! store and two-phase commits onto the spec's one store and atomic commits).
//!
//! Goal: the correct protocol's traces of shipped FaaSTCC scenarios (a chain, a fan-out and
//! fan-in with an abort and a retry, the promise boundary, the worked example) are behaviours of
//! the spec; the same runs under each of the model's mutants are rejected at the step that shows
//! the bug, or, when accepted, the mutant did not change the trace; a tampered trace is rejected
//! at the tampered step; runs outside the mapping are refused with the reason.

use causim_models::faastcc::MUTANTS;
use causim_pipeline::{LoadedScenario, RunOptions};
use causim_specs::tlc::{TlcOptions, Verdict};
use causim_specs::trace_validation_faastcc::{Behaviour, Outcome, Step, behaviour_of_scenario, out_of_scope, validate_behaviour};
use std::path::Path;
use std::time::{Duration, Instant};

fn options() -> TlcOptions {
    let mut options = TlcOptions::with_workers(1);
    options.timeout = Some(Duration::from_secs(300));
    options
}

fn load(name: &str) -> LoadedScenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/faastcc").join(name);
    LoadedScenario::from_file(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// Runs a scenario (its mutants replaced by `mutants`) and converts its trace.
fn behaviour(loaded: &LoadedScenario, mutants: Option<&[&str]>) -> Result<Behaviour, String> {
    let mut loaded = loaded.clone();
    if let Some(m) = mutants {
        loaded.scenario.protocol.mutants = m.iter().map(|s| s.to_string()).collect();
        loaded = LoadedScenario::from_scenario(Path::new("trace-validation.json"), &loaded.scenario).expect("a valid scenario");
    }
    let run = RunOptions { trace: true, keep_history: true, keep_trace: true, ..RunOptions::default() };
    let report = causim_pipeline::run(&loaded, &run).expect("the scenario runs");
    let trace = String::from_utf8(report.trace.expect("kept")).expect("UTF-8");
    let history = String::from_utf8(report.history.expect("kept")).expect("UTF-8");
    behaviour_of_scenario(&trace, &history, &loaded.scenario)
}

fn validate(name: &str, b: &Behaviour) -> Outcome {
    let started = Instant::now();
    let outcome = validate_behaviour(b, &options()).unwrap_or_else(|e| panic!("{name}: TLC: {e}"));
    eprintln!("{name}: {} steps, TLC {:?} ({:?} wall)", b.steps.len(), outcome.tlc_time, started.elapsed());
    outcome
}

fn accepted(name: &str, b: &Behaviour) {
    let outcome = validate(name, b);
    assert_eq!(
        outcome.rejected_at,
        None,
        "{name}: rejected at {:?}: {:?}; steps {:#?}",
        outcome.rejected_at.map(|i| &outcome.steps[i]),
        outcome.why,
        outcome.steps
    );
    assert_eq!(outcome.verdict, Verdict::Ok);
}

/// The shipped scenarios the mapping covers.
const IN_SCOPE: [&str; 5] =
    ["fractured-read.json", "fan-in-merge.json", "promise-boundary.json", "worked-example.json", "cross-function-snapshot.json"];

#[test]
fn shipped_scenarios_in_scope_are_behaviours_of_the_spec() {
    for name in IN_SCOPE {
        let b = behaviour(&load(name), None).unwrap_or_else(|e| panic!("{name}: {e}"));
        accepted(name, &b);
        if name == "fan-in-merge.json" {
            // The first attempt's join is empty and aborts; the retry starts from its lo.
            assert!(b.steps.iter().any(|s| matches!(s, Step::Join { ok: false, .. })), "{:#?}", b.steps);
            assert!(b.steps.iter().any(|s| matches!(s, Step::Restart { .. })), "{:#?}", b.steps);
            assert!(b.steps.iter().any(|s| matches!(s, Step::Fork { .. })), "{:#?}", b.steps);
        }
    }
}

/// Which shipped runs need the store's snapshot and promise widened (the partitioned store's
/// lagging stable time, batches read at one snapshot).
#[test]
fn explore_exact() {
    for name in IN_SCOPE {
        let mut b = behaviour(&load(name), None).unwrap_or_else(|e| panic!("{name}: {e}"));
        b.relaxed = false;
        let o = validate(&format!("{name} (exact)"), &b);
        eprintln!("  exact {name}: {:?} {:?} {:?}", o.rejected_at, o.rejected_at.map(|i| &o.steps[i]), o.why);
    }
}

#[test]
fn explore_mutants() {
    for name in IN_SCOPE {
        let correct = behaviour(&load(name), Some(&[])).unwrap_or_else(|e| panic!("{name}: {e}"));
        for m in MUTANTS {
            let b = match behaviour(&load(name), Some(&[m.name])) {
                Ok(b) => b,
                Err(e) => {
                    eprintln!("  {name} {}: refused {e}", m.name);
                    continue;
                }
            };
            if b.steps == correct.steps {
                eprintln!("  {name} {}: same trace", m.name);
                continue;
            }
            let o = validate(&format!("{name} ({})", m.name), &b);
            eprintln!("  {name} {}: {:?} {:?} {:?}", m.name, o.rejected_at, o.rejected_at.map(|i| &o.steps[i]), o.why);
        }
    }
}

fn generated(shape: serde_json::Value, functions: serde_json::Value, params: serde_json::Value, seed: u64) -> LoadedScenario {
    let scenario = serde_json::json!({
        "format": "causim-scenario/1",
        "name": "faastcc-trace-validation-generated",
        "protocol": {"name": "faastcc", "params": params},
        "seed": seed,
        "topology": {"servers": 3, "delay": {"dist": "lognormal", "mean_ns": 100000, "sigma": 0.5, "min_ns": 20000}},
        "scheduler": {"policy": "random", "attempts_max": 20, "retry_backoff": {"dist": "uniform", "min_ns": 1000000, "max_ns": 5000000}},
        "workload": {"generator": {
            "workflow": shape,
            "functions": functions,
            "keys": {"count": 12, "zipf_theta": 0.8},
            "arrival": {"kind": "poisson", "rate_per_s": 3000},
            "workflows_max": 40
        }},
        "checks": {"invariants": true, "level": "tcc"}
    });
    LoadedScenario::from_text(Path::new("generated.json"), scenario.to_string()).expect("a valid scenario")
}

#[test]
fn explore_generated() {
    let chain = generated(
        serde_json::json!({"shape": "chain", "functions": 3}),
        serde_json::json!([{"ops": 3, "mix": {"read": 0.7, "write": 0.3}}]),
        serde_json::json!({"partitions": 2, "prewarm": false, "push_period_ns": 5000000, "stabilization_period_ns": 1000000}),
        1,
    );
    let diamond = generated(
        serde_json::json!({"shape": "dag", "functions": 4, "edges": [[0, 1], [0, 2], [1, 3], [2, 3]]}),
        serde_json::json!([{"reads": 2}, {"reads": 2}, {"reads": 2}, {"writes": 2}]),
        serde_json::json!({"partitions": 3, "push_period_ns": 5000000, "stabilization_period_ns": 1000000, "clock_skew_ns": 1000000}),
        1,
    );
    let slow = |l: &LoadedScenario| {
        let text = serde_json::to_string(&l.scenario).unwrap().replace("\"rate_per_s\":3000.0", "\"rate_per_s\":300.0");
        assert!(text.contains("300.0"), "{text}");
        LoadedScenario::from_text(Path::new("generated.json"), text).unwrap()
    };
    let (chain_slow, diamond_slow) = (slow(&chain), slow(&diamond));
    for (name, loaded) in [("chain", chain), ("diamond", diamond), ("chain slow", chain_slow), ("diamond slow", diamond_slow)] {
        let mut b = match behaviour(&loaded, None) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("  {name}: refused {e}");
                continue;
            }
        };
        let o = validate(name, &b);
        eprintln!("  {name}: {:?} {:?} {:?}", o.rejected_at, o.rejected_at.map(|i| &o.steps[i]), o.why);
        b.relaxed = false;
        let o = validate(name, &b);
        eprintln!("  {name} exact: {:?} {:?} {:?}", o.rejected_at, o.rejected_at.map(|i| &o.steps[i]), o.why);
    }
}
