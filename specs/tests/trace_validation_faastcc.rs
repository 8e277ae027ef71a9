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

/// Each is accepted as the spec states it (no widened choice: the runs are sequential enough
/// for one stable time and atomic cache reads).
#[test]
fn shipped_scenarios_in_scope_are_behaviours_of_the_spec() {
    for name in IN_SCOPE {
        let mut b = behaviour(&load(name), None).unwrap_or_else(|e| panic!("{name}: {e}"));
        b.relaxed = false;
        accepted(name, &b);
        if name == "fan-in-merge.json" {
            // The first attempt's join is empty and aborts; the retry starts from its lo.
            assert!(b.steps.iter().any(|s| matches!(s, Step::Join { ok: false, .. })), "{:#?}", b.steps);
            assert!(b.steps.iter().any(|s| matches!(s, Step::Restart { .. })), "{:#?}", b.steps);
            assert!(b.steps.iter().any(|s| matches!(s, Step::Fork { .. })), "{:#?}", b.steps);
        }
    }
}

/// What each mutant changes in the shipped runs: where the trace differs, TLC rejects it at the
/// step that shows the bug; where it is accepted, the mutant produced the correct run's trace.
#[test]
fn every_mutant_is_rejected_where_it_changes_a_run() {
    let mut rejected = 0;
    for name in IN_SCOPE {
        let correct = behaviour(&load(name), Some(&[])).unwrap_or_else(|e| panic!("{name}: {e}"));
        for m in MUTANTS {
            let b = behaviour(&load(name), Some(&[m.name])).unwrap_or_else(|e| panic!("{name} with {}: {e}", m.name));
            if b.steps == correct.steps {
                eprintln!("{name} with {}: the mutant does not change the trace", m.name);
                continue;
            }
            let label = format!("{name} with {}", m.name);
            let outcome = validate(&label, &b);
            let at = outcome.rejected_at.unwrap_or_else(|| panic!("{label}: accepted although the trace differs: {:#?}", outcome.steps));
            let step = &b.steps[at];
            eprintln!("  rejected at step {} of {}: {step}: {:?}", at + 1, b.steps.len(), outcome.why);
            match m.name {
                // A store answer promised up to the next version itself.
                "promise_off_by_one" => {
                    assert!(matches!(step, Step::Read { served: false, .. }), "{label}: {step}");
                    assert!(outcome.why.as_deref().unwrap_or("").contains("answers"), "{label}: {:?}", outcome.why);
                }
                // The first sink whose interval did not narrow after its reads.
                "no_interval_narrowing" => assert!(matches!(step, Step::Join { ok: true, lo: 0, hi: u64::MAX, .. }), "{label}: {step}"),
                // The join that keeps its first branch's interval: the spec's intersection is empty.
                "no_fanin_merge" => {
                    assert!(matches!(step, Step::Join { ok: true, .. }), "{label}: {step}");
                    assert!(outcome.why.as_deref().unwrap_or("").contains("aborted"), "{label}: {:?}", outcome.why);
                }
                other => panic!("a mutant this test does not know: {other}"),
            }
            rejected += 1;
        }
    }
    // Each mutant changes at least one of the runs.
    assert!(rejected >= MUTANTS.len(), "{rejected} rejections");
}

/// The mutants' own scenarios (the same scripts, with the mutant on) are rejected too.
#[test]
fn the_mutant_scenarios_are_rejected() {
    for (name, kind) in [
        ("mutant-promise-off-by-one.json", "Read"),
        ("mutant-no-interval-narrowing.json", "Join"),
        ("mutant-no-interval-narrowing-causal.json", "Join"),
        ("mutant-no-fanin-merge.json", "Join"),
    ] {
        let b = behaviour(&load(name), None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let outcome = validate(name, &b);
        let at = outcome.rejected_at.unwrap_or_else(|| panic!("{name}: accepted: {:#?}", outcome.steps));
        assert!(outcome.steps[at].starts_with(kind), "{name}: rejected at {}", outcome.steps[at]);
    }
}

/// A tampered trace: a read's version is changed to the newer one.
#[test]
fn a_tampered_trace_is_rejected_at_the_tampered_step() {
    let mut b = behaviour(&load("fractured-read.json"), None).expect("the trace converts");
    // d's second read gets t1's ka (ts 1) from the store; claim it got t2's (ts 2).
    let at = b.steps.iter().rposition(|s| matches!(s, Step::Read { txn, .. } if txn == "d")).expect("d reads");
    if let Step::Read { ts, writer, .. } = &mut b.steps[at] {
        assert_eq!((*ts, writer.as_deref()), (1, Some("t1")));
        *ts = 2;
        *writer = Some("t2".into());
    }
    let outcome = validate("fractured-read (tampered)", &b);
    assert_eq!(outcome.rejected_at, Some(at), "{:#?}", outcome.steps);
    // A commit's timestamp changed: rejected at that commit.
    let mut b = behaviour(&load("promise-boundary.json"), None).expect("the trace converts");
    let at = b.steps.iter().position(|s| matches!(s, Step::Commit { ts: Some(_), .. })).expect("a commit");
    if let Step::Commit { ts: Some(ts), .. } = &mut b.steps[at] {
        *ts += 1;
    }
    let outcome = validate("promise-boundary (tampered commit)", &b);
    assert_eq!(outcome.rejected_at, Some(at), "{:#?}", outcome.steps);
}

/// Runs outside the mapping are refused with the reason, never validated.
#[test]
fn runs_outside_the_mapping_are_refused_with_the_reason() {
    for (name, why) in [
        ("regression-promise-bumps-gc.json", "promise_bumps"),
        ("fuzz-diamond.json", "promise_bumps"),
        ("lost-reply-stall.json", "no faults"),
        ("regression-push-loss-bumps.json", "promise_bumps"),
    ] {
        let refused = out_of_scope(&load(name).scenario).unwrap_or_else(|| panic!("{name} is refused"));
        assert!(refused.contains(why), "{name}: {refused}");
    }
    // Garbage-collection aborts, found in the trace.
    for name in ["gc-abort.json", "retry-after-gc.json", "abort-with-a-branch-waiting.json"] {
        assert_eq!(out_of_scope(&load(name).scenario), None, "{name}: its parameters are in scope");
        let err = behaviour(&load(name), None).expect_err("refused");
        assert!(err.starts_with("out of scope: ") && err.contains("every version"), "{name}: {err}");
    }
    // Reads after a join (the diamond's join reads one key), with promise bumps off.
    let mut diamond = load("fuzz-diamond.json");
    diamond.scenario.protocol.params["promise_bumps"] = serde_json::json!(false);
    let err = behaviour(&diamond, None).expect_err("refused");
    assert!(err.contains("after its join"), "{err}");
    // A CausalMesh run is not a FaaSTCC run.
    let cm = LoadedScenario::from_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/causalmesh/fig6.json")).expect("fig6");
    assert!(out_of_scope(&cm.scenario).expect("refused").contains("faastcc runs"));
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

/// Generated workloads: a chain of three functions (reads and writes, caches that start empty,
/// two partitions) and a diamond (fan-out, fan-in, pre-warmed caches, three partitions with
/// clock skew), 40 workflows each. They are behaviours of the spec with its three widened
/// choices, and leave the spec's own choices only at a read: a cache fetching what it could
/// serve (a concurrent request is fetching it) or a store answer promised less than the spec's
/// (a partition's stable time lags).
#[test]
fn generated_workloads_are_behaviours_of_the_relaxed_spec_and_depart_only_at_reads() {
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
    for (name, loaded) in [("generated chain", chain), ("generated diamond", diamond)] {
        let mut b = behaviour(&loaded, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let commits = b.steps.iter().filter(|s| matches!(s, Step::Commit { ts: Some(_), .. })).count();
        let fetched = b.steps.iter().filter(|s| matches!(s, Step::Read { served: false, .. })).count();
        let pushes = b.steps.iter().filter(|s| matches!(s, Step::Push { versions, .. } if !versions.is_empty())).count();
        assert!(commits >= 20 && fetched >= 20 && pushes >= 5, "{name}: {commits} commits, {fetched} fetches, {pushes} pushes");
        accepted(name, &b);
        b.relaxed = false;
        let exact = validate(&format!("{name} (the spec's own choices)"), &b);
        let at = exact.rejected_at.unwrap_or_else(|| panic!("{name}: accepted exactly"));
        assert!(matches!(b.steps[at], Step::Read { .. }), "{name}: rejected at {}", exact.steps[at]);
        eprintln!("  rejected at step {} of {}: {}: {:?}", at + 1, b.steps.len(), exact.steps[at], exact.why);
    }
}
