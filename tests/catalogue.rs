//! The catalogue is the one list of protocols, and everything else follows from it: each
//! protocol listed runs generated workflows (fan-outs, joins, writing branches) through the
//! run pipeline, passes the level its paper promises, reports only the metrics its entry
//! declares, survives a short fuzz, and accepts each mutant it lists. A protocol added with
//! its module and one catalogue line is covered here without another edit.

use causim::fuzz::{self, Faults, FuzzOptions, Profile};
use causim_models::catalogue::PROTOCOLS;
use causim_pipeline::run::{self, RunOptions};
use causim_pipeline::scenario::LoadedScenario;
use std::path::Path;

/// Generated cases run per protocol, and fuzz cases after them.
const CASES: u64 = 12;
const FUZZ_CASES: u64 = 60;

#[test]
fn every_protocol_runs_generated_workflows_at_its_level_and_reports_only_declared_metrics() {
    for e in PROTOCOLS {
        let profile = Profile::of(e.name).unwrap();
        assert_eq!(profile.level(), e.level, "{}: the fuzzer checks at the catalogue's level", e.name);
        let strategy = fuzz::case_strategy(&profile, Faults::Safe, true);
        let mut observed = std::collections::BTreeSet::new();
        let mut completed = 0;
        for i in 0..CASES {
            let case = fuzz::generate(&strategy, 11, i).unwrap().current();
            let scenario = case.scenario(&profile, &[], &format!("catalogue-{}-{i}", e.name));
            let loaded = LoadedScenario::from_scenario(Path::new("catalogue.json"), &scenario).unwrap_or_else(|err| panic!("{err}"));
            let report = run::run(&loaded, &RunOptions::default()).unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert_eq!(report.summary.protocol, e.name, "the summary names the protocol as the catalogue does");
            let check = report.check.as_ref().unwrap_or_else(|| panic!("{}: fuzz scenarios are checked", e.name));
            // The entry's level, unless the drawn parameters change it (Concord's transactions).
            assert_eq!(check.level, profile.level_for(&case.params), "{}: checked at its level", e.name);
            assert!(report.passed(), "{} case {i}: {:?} {:?}", e.name, report.anomalies(), report.summary.invariant_violation);
            completed += report.summary.workflows.completed;
            for name in report.summary.observations.keys().chain(report.summary.protocol_metrics.keys()) {
                assert!(e.reports(name), "{} reports {name}, which its catalogue entry does not declare", e.name);
                observed.insert(name.clone());
            }
        }
        // The workloads ran. Not every case need complete a workflow: in BokiFlow's case 5 a
        // 4 ms session timeout under slow links seals the log again and again, appends fail,
        // and every transaction's function outlasts its 50 ms re-execution timeout, attempt
        // after attempt (a liveness limit of the drawn parameters, not of the workflows'
        // shapes: a one-function chain of reads gives up too).
        assert!(completed > 0, "{}: no workflow completed in {CASES} cases", e.name);
        // A protocol that declares hop metadata reports it on these workloads.
        if let Some(hop) = e.profile.hop_metadata {
            assert!(observed.contains(hop), "{}: declared hop metadata {hop} never reported", e.name);
        }
    }
}

#[test]
fn every_correct_protocol_survives_a_short_fuzz_and_accepts_its_mutants() {
    for e in PROTOCOLS {
        let mut o = FuzzOptions::new(e.name, &[]).unwrap();
        o.cases_max = FUZZ_CASES;
        o.threads = 2;
        let outcome = fuzz::fuzz(&o).unwrap();
        assert_eq!(outcome.cases, FUZZ_CASES, "{}", e.name);
        if let Some(f) = &outcome.failure {
            panic!("{}: the correct protocol failed a fuzz case: {}", e.name, f.original_verdict);
        }
        for m in e.mutants {
            assert!(FuzzOptions::new(e.name, &[m.name]).is_ok(), "{}: mutant {} is refused", e.name, m.name);
        }
        assert!(FuzzOptions::new(e.name, &["no_such_mutant"]).is_err(), "{}: an unknown mutant is accepted", e.name);
    }
}
