//! Malformed scenario files: each kind gets an error naming the file, line, column, field and
//! what was expected — never a panic. These messages are documented in the README.

use causim_pipeline::run::{self, RunError, RunOptions};
use causim_pipeline::scenario::LoadedScenario;
use std::path::Path;

const VALID: &str = r#"{
  "name": "errors",
  "protocol": {"name": "register", "params": {"replication": "async"}},
  "topology": {"servers": 2, "delay": {"dist": "constant", "ns": 1000}},
  "workload": {"script": [{"session": "c1", "functions": [{"on": "S0", "ops": [{"write": "x"}]}]}]}
}"#;

/// Loads and runs `text`; returns the error rendered as `causim run` prints it.
fn error_of(text: &str) -> String {
    let loaded = match LoadedScenario::from_text(Path::new("bad.json"), text.to_string()) {
        Ok(l) => l,
        Err(e) => return e.to_string(),
    };
    match run::run(&loaded, &RunOptions::default()) {
        Err(RunError::Scenario(e)) => e.to_string(),
        Err(e) => panic!("not a scenario error: {e}"),
        Ok(_) => panic!("scenario unexpectedly ran"),
    }
}

fn with(from: &str, to: &str) -> String {
    assert!(VALID.contains(from), "{from}");
    VALID.replacen(from, to, 1)
}

#[test]
fn the_valid_base_scenario_runs() {
    let loaded = LoadedScenario::from_text(Path::new("ok.json"), VALID.to_string()).unwrap();
    let report = run::run(&loaded, &RunOptions::default()).unwrap();
    assert_eq!(report.summary.workflows.completed, 1);
}

#[test]
fn invalid_json_names_line_and_column() {
    let e = error_of(&with(r#""servers": 2,"#, r#""servers": 2,,"#));
    assert_eq!(e, "bad.json:4:29: field `topology`: invalid JSON: key must be a string");
}

#[test]
fn a_truncated_file_is_reported_at_its_end() {
    let e = error_of(&VALID[..VALID.len() - 3]);
    assert!(e.starts_with("bad.json:5:"), "{e}");
    assert!(e.contains("invalid JSON: EOF while parsing"), "{e}");
}

#[test]
fn a_misspelt_field_lists_the_expected_ones() {
    let e = error_of(&with(r#""servers": 2"#, r#""server": 2"#));
    assert_eq!(
        e,
        "bad.json:4:26: field `topology.server`: unknown field `server`, expected one of `servers`, `workers_per_machine`, \
         `cores_per_node`, `service`, `service_by_kind`, `nodes`, `delay`, `local_delay`, `bandwidth_bytes_per_s`, `cost`, `links`"
    );
}

#[test]
fn a_wrong_type_names_the_field() {
    let e = error_of(&with(r#""servers": 2"#, r#""servers": "two""#));
    assert_eq!(e, "bad.json:4:27: field `topology.servers`: invalid type: string \"two\", expected u32");
}

#[test]
fn a_missing_field_names_its_parent() {
    let e = error_of(&with(r#", "delay": {"dist": "constant", "ns": 1000}"#, ""));
    assert_eq!(e, "bad.json:4:15: field `topology`: missing field `delay`");
}

#[test]
fn an_unknown_distribution_lists_the_known_ones() {
    let e = error_of(&with(r#""dist": "constant""#, r#""dist": "fixed""#));
    assert_eq!(
        e,
        "bad.json:4:48: field `topology.delay.dist`: unknown variant `fixed`, expected one of `constant`, `uniform`, \
         `exponential`, `lognormal`"
    );
}

#[test]
fn an_unknown_protocol_lists_the_known_ones() {
    let e = error_of(&with(r#""name": "register""#, r#""name": "raft""#));
    assert_eq!(
        e,
        "bad.json:3:24: field `protocol.name`: unknown protocol \"raft\"; known protocols: register, causalmesh, causalmesh_tcc, eventual, direct, faastcc, hydrocache, mucache, concord, faast, ofc, boki, boki-queue, boki-store, boki-flow"
    );
}

#[test]
fn an_unknown_mutant_lists_the_known_ones() {
    let e = error_of(&with(r#""params": {"replication": "async"}"#, r#""params": {}, "mutants": ["no_acks"]"#));
    assert_eq!(e, "bad.json:3:62: field `protocol.mutants[0]`: unknown mutant \"no_acks\" for protocol register; known mutants: early_ack");
}

#[test]
fn a_bad_protocol_parameter_names_it() {
    let e = error_of(&with(r#""async""#, r#""eventually""#));
    assert_eq!(e, "bad.json:3:62: field `protocol.params.replication`: unknown variant `eventually`, expected `async` or `sync`");
}

#[test]
fn an_impossible_parameter_says_why() {
    let e = error_of(&with(r#"{"dist": "constant", "ns": 1000}"#, r#"{"dist": "uniform", "min_ns": 9, "max_ns": 1}"#));
    assert_eq!(e, "bad.json:4:82: field `topology.delay.max_ns`: max_ns (1) must be ≥ min_ns (9)");
    let e = error_of(&with(r#""servers": 2"#, r#""servers": 0"#));
    assert_eq!(e, "bad.json:4:27: field `topology.servers`: must be between 1 and 1024, got 0");
}

#[test]
fn an_unknown_machine_lists_the_known_ones() {
    let e = error_of(&with(r#""on": "S0""#, r#""on": "S7""#));
    assert_eq!(e, "bad.json:5:66: field `workload.script[0].functions[0].on`: no machine named \"S7\"; machines are S0, S1");
    let e = error_of(&with(
        r#""ns": 1000}}"#,
        r#""ns": 1000}, "links": [{"from": "S0", "to": "S9", "delay": {"dist": "constant", "ns": 5}}]}"#,
    ));
    assert!(e.contains("field `topology.links[0].to`: no machine named \"S9\"; machines are S0, S1"), "{e}");
}

#[test]
fn a_generator_without_an_end_is_refused() {
    let generator = r#"{"generator": {"workflow": {"shape": "chain", "functions": 1}, "functions": [{"reads": 1}],
        "keys": {"count": 10}, "arrival": {"kind": "poisson", "rate_per_s": 100}}}"#;
    let text = VALID.replace(r#"{"script": [{"session": "c1", "functions": [{"on": "S0", "ops": [{"write": "x"}]}]}]}"#, generator);
    let e = error_of(&text);
    assert!(
        e.ends_with("field `workload.generator.workflows_max`: a generator needs workflows_max or duration_ns, or it would never stop"),
        "{e}"
    );
}

#[test]
fn a_bad_workflow_mix_names_the_field() {
    let script = r#"{"script": [{"session": "c1", "functions": [{"on": "S0", "ops": [{"write": "x"}]}]}]}"#;
    let generator = |mix: &str, classes: &str| {
        let g = format!(
            r#"{{"generator": {{"mix": {mix}, "keys": {{"count": 10}}, "key_classes": {classes},
            "arrival": {{"kind": "poisson", "rate_per_s": 100}}, "workflows_max": 5}}}}"#
        );
        VALID.replace(script, &g)
    };
    let kind = |weight: &str, keys: &str| {
        format!(
            r#"{{"name": "a", "weight": {weight}, "workflow": {{"shape": "chain", "functions": 1}}, "functions": [{{"reads": 1, "keys": {keys}}}]}}"#
        )
    };
    let ok = format!("[{}, {}]", kind("1", "null"), kind("3", r#""movies""#));
    assert!(
        run::run(
            &LoadedScenario::from_text(Path::new("ok.json"), generator(&ok, r#"{"movies": {"count": 4}}"#)).unwrap(),
            &RunOptions::default()
        )
        .is_ok()
    );
    let e = error_of(&generator(&format!("[{}, {}]", kind("1", "null"), kind("3", r#""users""#)), r#"{"movies": {"count": 4}}"#));
    assert!(
        e.ends_with("field `workload.generator.mix[1].functions[0].keys`: no key class named \"users\"; key classes are movies"),
        "{e}"
    );
    let e = error_of(&generator(&format!("[{}]", kind("0", "null")), "{}"));
    assert!(e.ends_with("field `workload.generator.mix[0].weight`: must be a positive number, got 0"), "{e}");
    let e = error_of(&generator(&ok, r#"{"movies": {"count": 0}}"#));
    assert!(e.contains("field `workload.generator.key_classes.movies.count`"), "{e}");
    let e = error_of(&generator(r#"[{"weight": 1, "workflow": {"shape": "chain", "functions": 1}, "functions": [], "typo": 1}]"#, "{}"));
    assert!(e.contains("field `workload.generator.mix[0].typo`: unknown field `typo`, expected one of `name`, `weight`"), "{e}");
}

#[test]
fn an_unreadable_file_is_named() {
    let e = LoadedScenario::from_file(Path::new("no/such/file.json")).unwrap_err().to_string();
    assert!(e.starts_with("no/such/file.json: cannot read the scenario:"), "{e}");
}

/// Goal: a fault outside a protocol's model (a CausalMesh server crash: the paper has no
/// recovery) is refused with the reason at the fault's field, not run and reported as an anomaly.
#[test]
fn a_fault_outside_the_protocols_model_is_refused() {
    let crash = with(
        r#""name": "register", "params": {"replication": "async"}}"#,
        r#""name": "causalmesh"}, "faults": {"crashes": [{"node": "S1", "at_ns": 5, "restart_ns": 9}]}"#,
    );
    let e = error_of(&crash);
    assert!(e.starts_with("bad.json:3:"), "{e}");
    assert!(e.contains("field `faults.crashes[0]`: causalmesh: a crash of a node is outside the protocol's fault model"), "{e}");
    assert!(e.contains("no recovery for a cache server"), "{e}");
    let loss = with(
        r#""name": "register", "params": {"replication": "async"}}"#,
        r#""name": "causalmesh_tcc"}, "faults": {"loss_probability": 0.1}"#,
    );
    assert!(error_of(&loss).contains("field `faults.loss_probability`: causalmesh_tcc: message loss is outside"));
    // A protocol that claims to survive crashes runs the same scenario.
    let register = with(r#"}},"#, r#"}}, "faults": {"crashes": [{"node": "S1", "at_ns": 5, "restart_ns": 9}]},"#);
    let loaded = LoadedScenario::from_text(Path::new("ok.json"), register).unwrap();
    assert!(run::run(&loaded, &RunOptions::default()).is_ok());
}

#[test]
fn an_unknown_cost_model_names_the_field_and_the_choices() {
    let e = error_of(&with(r#""servers": 2"#, r#""servers": 2, "cost": "fast""#));
    assert!(e.starts_with("bad.json:4:"), "{e}");
    assert!(e.contains("field `topology.cost`") && e.contains("unknown cost model `fast`"), "{e}");
}
