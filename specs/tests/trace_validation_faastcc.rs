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
        eprintln!("{name}: {:#?}", b.steps.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        accepted(name, &b);
        if name == "fan-in-merge.json" {
            // The first attempt's join is empty and aborts; the retry starts from its lo.
            assert!(b.steps.iter().any(|s| matches!(s, Step::Join { ok: false, .. })), "{:#?}", b.steps);
            assert!(b.steps.iter().any(|s| matches!(s, Step::Restart { .. })), "{:#?}", b.steps);
            assert!(b.steps.iter().any(|s| matches!(s, Step::Fork { .. })), "{:#?}", b.steps);
        }
    }
}

#[test]
#[ignore]
fn dump() {
    let name = std::env::var("DUMP").unwrap();
    let b = behaviour(&load(&name), None).unwrap();
    let (m, c) = causim_specs::trace_validation_faastcc::tla(&b, None);
    std::fs::write("/tmp/ftv/FaaSTCCTrace.tla", m).unwrap();
    std::fs::write("/tmp/ftv/trace.cfg", c).unwrap();
}
