//! Trace validation: a simulator run of CausalMesh becomes a TLA+ behaviour that TLC checks
//! against `CausalMesh.tla` (the correct protocol).
//!
//! Goal: the correct protocol's trace is a behaviour of the spec, step by step and with what
//! each step showed (clocks, values read); a mutant's trace is rejected at the first step the
//! spec does not allow, and the outcome names that step and what the spec would have shown.

use causim_pipeline::{LoadedScenario, RunOptions};
use causim_specs::tlc::{TlcOptions, Verdict};
use causim_specs::trace_validation::{Behaviour, Outcome, Step, behaviour_of_scenario, validate_behaviour};
use serde_json::{Value, json};
use std::time::Duration;

/// Fig. 6 on two servers: c1 writes x at S0, then y at S1 (carrying x); later c2 reads y at S0
/// (the tail of y's chain), then x and y together at S1, then x at S0 again.
fn scenario(mutants: &[&str], chain: &str) -> Value {
    sessions(
        mutants,
        chain,
        json!([{"on": "S0", "ops": [{"write": "x"}]}, {"on": "S1", "ops": [{"write": "y"}]}]),
        json!([
            {"on": "S0", "at_ns": 2_000_000, "ops": [{"read": "y"}]},
            {"on": "S1", "ops": [{"read_txn": ["x", "y"]}]},
            {"on": "S0", "ops": [{"read": "x"}]},
        ]),
    )
}

/// c1 runs the functions `writer`, c2 the functions `reader`.
fn sessions(mutants: &[&str], chain: &str, writer: Value, reader: Value) -> Value {
    json!({
        "format": "causim-scenario/1",
        "name": "trace-validation",
        "protocol": {"name": "causalmesh", "params": {"db_flush": "async", "chain": chain}, "mutants": mutants},
        "seed": 7,
        "topology": {"servers": 2, "delay": {"dist": "constant", "ns": 75000}},
        "workload": {"script": [
            {"session": "c1", "functions": writer},
            {"session": "c2", "functions": reader},
        ]},
        "checks": {"invariants": true, "level": "ccv"},
    })
}

fn options() -> TlcOptions {
    let mut options = TlcOptions::with_workers(1);
    options.timeout = Some(Duration::from_secs(300));
    options
}

fn run(mutants: &[&str], chain: &str) -> (Behaviour, Outcome) {
    validate(scenario(mutants, chain))
}

fn validate(scenario: Value) -> (Behaviour, Outcome) {
    let loaded = LoadedScenario::from_text(std::path::Path::new("trace-validation.json"), scenario.to_string()).expect("a valid scenario");
    let run = RunOptions { trace: true, keep_history: true, keep_trace: true, ..RunOptions::default() };
    let report = causim_pipeline::run(&loaded, &run).expect("the scenario runs");
    assert_eq!(report.summary.stopped_by, "workload complete");
    let text = |bytes: Option<Vec<u8>>| String::from_utf8(bytes.expect("kept")).expect("UTF-8");
    let (trace, history) = (text(report.trace), text(report.history));
    let b = behaviour_of_scenario(&trace, &history, &loaded.scenario).expect("the trace converts");
    let outcome = validate_behaviour(&b, &options()).unwrap_or_else(|e| panic!("TLC: {e}"));
    (b, outcome)
}

fn actions(b: &Behaviour) -> Vec<String> {
    b.steps
        .iter()
        .map(|s| match s {
            Step::Write { .. } => "ClientWrite".to_string(),
            Step::Read { .. } => "ClientRead".to_string(),
            Step::ReadTxn { .. } => "ClientReadTxn".to_string(),
            Step::Chain { action, .. } => action.to_string(),
            Step::Flushed { .. } => "Flushed".to_string(),
            Step::Disseminated { .. } => "Disseminated".to_string(),
        })
        .collect()
}

#[test]
fn the_correct_protocols_trace_is_a_behaviour_of_the_spec() {
    for (chain, expected) in [
        ("one_round", vec!["ClientWrite", "ClientWrite", "TailIntegrate", "TailIntegrate", "ClientRead", "ClientReadTxn", "ClientRead"]),
        (
            "two_round",
            vec![
                "ClientWrite",
                "ClientWrite",
                "TailForward",
                "TailForward",
                "Forward",
                "Forward",
                "TailIntegrate",
                "TailIntegrate",
                "ClientRead",
                "ClientReadTxn",
                "ClientRead",
            ],
        ),
    ] {
        let (b, outcome) = run(&[], chain);
        assert_eq!(actions(&b), expected, "{chain}");
        assert_eq!(outcome.rejected_at, None, "{chain}: {:?} {:?}", outcome.steps, outcome.why);
        assert_eq!(outcome.verdict, Verdict::Ok);
        // The reads saw the writes: the trace is not trivially accepted.
        assert!(
            outcome.steps.iter().any(|s| s.starts_with("ClientRead: c2 reads y at S0 and gets c1's operation 2")),
            "{:?}",
            outcome.steps
        );
    }
}

#[test]
fn a_mutants_trace_is_rejected_at_the_first_step_the_spec_does_not_allow() {
    // no_carry_local_writes: y is stamped without x's version, so the spec's ClientWrite
    // (which carries x) shows another clock at step 2.
    let (_, outcome) = run(&["no_carry_local_writes"], "one_round");
    assert_eq!(outcome.rejected_at, Some(1), "{:?}", outcome.steps);
    assert_eq!(outcome.steps[1], "ClientWrite: c1 writes y at S1, stamped [0,1]");
    let why = outcome.why.unwrap();
    assert!(why.contains("the spec can take this step, but shows") && why.contains("vc |-> [1,1]"), "{why}");

    // reveal_at_head: c1 writes x at S0; c2 reads x at S0 long after (x has reached S1, its
    // tail, by then). The mutant's head S0 shows x at once, so c2 gets x; the spec's head shows
    // x only once a client's deps ask for it, so it shows the initial x. The earlier steps are
    // allowed; the correct protocol's run of the same script is accepted whole.
    let writer = json!([{"on": "S0", "ops": [{"write": "x"}]}]);
    let reader = json!([{"on": "S0", "at_ns": 2_000_000, "ops": [{"read": "x"}]}]);
    for (mutants, rejected) in [(vec![], None), (vec!["reveal_at_head"], Some(2))] {
        let (b, outcome) = validate(sessions(&mutants, "one_round", writer.clone(), reader.clone()));
        assert_eq!(actions(&b), ["ClientWrite", "TailIntegrate", "ClientRead"], "{mutants:?}");
        assert_eq!(outcome.rejected_at, rejected, "{mutants:?}: {:?} {:?}", outcome.steps, outcome.why);
    }
    let (_, outcome) = validate(sessions(&["reveal_at_head"], "one_round", writer, reader));
    assert_eq!(outcome.steps[2], "ClientRead: c2 reads x at S0 and gets c1's operation 1 at [1,0]");
    let why = outcome.why.unwrap();
    assert!(why.contains("val |-> InitVal"), "{why}");
}

#[test]
fn synchronous_flushes_dissemination_and_queued_handlers_are_behaviours_of_the_spec() {
    // Fig. 6's run with synchronous flushes (the chain starts at the database's ack: a
    // `Flushed` step), dissemination (each tail asks the other server to integrate: a
    // `Disseminated` step) and 60 µs per handler, so messages wait for busy servers and
    // handlers run after later deliveries elsewhere.
    let mut s = scenario(&[], "one_round");
    s["protocol"]["params"] = json!({"db_flush": "sync", "chain": "one_round", "disseminate": true});
    s["topology"]["service"] = json!({"dist": "constant", "ns": 60000});
    let (b, outcome) = validate(s);
    let a = actions(&b);
    assert_eq!(a.iter().filter(|x| *x == "Flushed").count(), 2, "{a:?}");
    assert_eq!(a.iter().filter(|x| *x == "Disseminated").count(), 2, "{a:?}");
    assert_eq!(outcome.rejected_at, None, "{:?} {:?}", outcome.steps, outcome.why);
    assert_eq!(outcome.verdict, Verdict::Ok);
    // And a mutant's run under the same conditions is still rejected.
    let mut s = scenario(&["no_carry_local_writes"], "one_round");
    s["protocol"]["params"] = json!({"db_flush": "sync", "chain": "one_round", "disseminate": true});
    s["topology"]["service"] = json!({"dist": "constant", "ns": 60000});
    let (_, outcome) = validate(s);
    assert!(outcome.rejected_at.is_some(), "{:?}", outcome.steps);
}

#[test]
fn under_the_same_mutant_the_spec_takes_every_step_and_its_step_local_invariants_fail() {
    // The spec running the mutant too allows each step; what must catch the bug are the
    // invariants, now checked where each step changed the state. no_carry_local_writes: c1's
    // y, which follows its x, is stamped [0,1], below x's [1,0] in the arbitration order
    // (section 3.2's lexicographic order of clocks): the arbitration no longer extends
    // causality, so c2's later reads of y and the initial x are not causal+ under it.
    let (mut b, _) = run(&["no_carry_local_writes"], "one_round");
    b.spec_mutant = "no_carry_local_writes".into();
    let outcome = validate_behaviour(&b, &options()).expect("TLC gives a verdict");
    assert_eq!(outcome.verdict, Verdict::InvariantViolated { name: "ReadsAreCausalPlus".into() }, "{:?}", outcome.why);
    assert_eq!(outcome.steps[outcome.rejected_at.unwrap()], "ClientWrite: c1 writes y at S1, stamped [0,1]");

    // read_without_integration: c2 has read y at S0; S1 answers its transaction without
    // integrating that dependency (y waits in S1's I-cache): the initial y, after y=1.
    let (mut b, _) = run(&["read_without_integration"], "one_round");
    b.spec_mutant = "read_without_integration".into();
    let outcome = validate_behaviour(&b, &options()).expect("TLC gives a verdict");
    assert_eq!(outcome.verdict, Verdict::InvariantViolated { name: "ReadsAreCausalPlus".into() }, "{:?}", outcome.why);
    assert_eq!(
        outcome.steps[outcome.rejected_at.unwrap()],
        "ClientReadTxn: c2 reads x+y at S1; x = c1's operation 1 at [1,0]; y = its initial value at [0,0]"
    );

    // reveal_at_head: x is in S0's C-cache before S1 (its tail) holds it anywhere: the
    // coverage lemma fails at the write itself.
    let writer = json!([{"on": "S0", "ops": [{"write": "x"}]}]);
    let reader = json!([{"on": "S0", "at_ns": 2_000_000, "ops": [{"read": "x"}]}]);
    let (mut b, _) = validate(sessions(&["reveal_at_head"], "one_round", writer, reader));
    b.spec_mutant = "reveal_at_head".into();
    let outcome = validate_behaviour(&b, &options()).expect("TLC gives a verdict");
    assert_eq!(outcome.verdict, Verdict::InvariantViolated { name: "CoverageLemmaAtEachStep".into() }, "{:?}", outcome.why);
    assert_eq!(outcome.rejected_at, Some(0), "{:?}", outcome.steps);
}
