//! The `causim` binary end to end: what a user types and sees.

mod common;
use common::*;
use std::path::Path;

#[test]
fn every_command_has_help() {
    for args in [vec!["--help"], vec!["run", "--help"], vec!["check", "--help"], vec!["protocols", "--help"]] {
        let o = causim(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).contains("Usage:"), "{args:?}");
    }
}

#[test]
fn run_writes_history_trace_and_summary_and_checks_determinism() {
    let out = temp_dir("cli", "run");
    let o = causim(&["run", "scenarios/register/stale-read.json", "--out", out.to_str().unwrap(), "--seed", "5", "--check-determinism"]);
    let text = stdout(&o);
    assert!(o.status.success(), "{text}\n{}", stderr(&o));
    assert!(text.contains("causim run scenarios/register/stale-read.json  seed=5"), "{text}");
    assert!(text.contains("determinism     ok"), "{text}");
    let history = std::fs::read_to_string(out.join("history.jsonl")).unwrap();
    let header: serde_json::Value = serde_json::from_str(history.lines().next().unwrap()).unwrap();
    assert_eq!(header["format"], "causim-history/1");
    assert_eq!(header["seed"], 5);
    assert!(std::fs::read_to_string(out.join("trace.jsonl")).unwrap().contains("\"ev\":\"deliver\""));
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["summary"]["seed"], 5);
    assert_eq!(summary["resolved_scenario"]["scheduler"]["attempts_max"], 10, "defaults are written out");
}

#[test]
fn the_default_scenario_runs_without_arguments() {
    let out = temp_dir("cli", "default");
    let o = causim(&["run", "--out", out.to_str().unwrap(), "--no-trace"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("workload complete"));
    assert!(!out.join("trace.jsonl").exists());
}

#[test]
fn a_bad_scenario_exits_2_with_its_location() {
    let dir = temp_dir("cli", "bad");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    std::fs::write(&path, "{\"name\": 3}").unwrap();
    let o = causim(&["run", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.json:1:10: field `name`: invalid type: integer `3`, expected a string"), "{}", stderr(&o));
}

#[test]
fn protocols_lists_mutants() {
    let o = causim(&["protocols"]);
    let out = stdout(&o);
    assert!(out.contains("register: ") && out.contains("\n  mutant early_ack: "), "{out}");
    assert!(out.contains("causalmesh_tcc: ") && out.contains("  histories must pass: tcc\n"), "{out}");
}

#[test]
fn an_overloaded_node_stops_the_run_at_its_run_queue_limit() {
    // Goal: offered load beyond a node's capacity stops the run with a named limit instead of
    // growing its queue (and memory) without bound.
    let dir = temp_dir("cli", "overload");
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/register/default.json")).unwrap();
    let mut scenario: serde_json::Value = serde_json::from_str(&text).unwrap();
    scenario["name"] = "overload".into();
    scenario["topology"]["service"] = serde_json::json!({"dist": "constant", "ns": 5_000_000});
    scenario["limits"] = serde_json::json!({"run_queue_max": 40});
    let path = dir.join("overload.json");
    std::fs::write(&path, scenario.to_string()).unwrap();
    let out = dir.join("out");
    let o = causim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-trace"]);
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let stopped = summary["summary"]["stopped_by"].as_str().unwrap_or_default().to_string();
    assert!(stopped.starts_with("limit: run_queue_max (40 inputs wait at "), "stopped by {stopped:?}; {}", stderr(&o));
}
