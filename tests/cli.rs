//! The `causim` binary end to end: what a user types and sees.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

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
    assert_eq!(header["format"], "causim-history/2");
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

#[test]
fn a_stalled_run_stops_after_stall_ns_with_the_history_it_would_have_had() {
    // Goal: `limits.stall_ns` cuts only the idle tail of a run whose last workflow waits for a
    // reply lost for good: it stops 2 s after the last progress instead of at the 60 s limit,
    // and its history is the full run's but for the end time of the writes still in flight
    // (HydroCache: a sink whose batch the database applied and whose ack was lost).
    let dir = temp_dir("cli", "stall");
    std::fs::create_dir_all(&dir).unwrap();
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/hydrocache/regression-lost-write-ack.json")).unwrap();
    let mut scenario: serde_json::Value = serde_json::from_str(&text).unwrap();
    scenario["limits"]["stall_ns"] = 2_000_000_000u64.into();
    let run = |scenario: &serde_json::Value, name: &str| {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, scenario.to_string()).unwrap();
        let out = dir.join(name);
        causim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-trace"]);
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let history = std::fs::read_to_string(out.join("history.jsonl")).unwrap();
        (summary["summary"].clone(), history.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect::<Vec<serde_json::Value>>())
    };
    let (stalled, cut) = run(&scenario, "stall");
    scenario["limits"].as_object_mut().unwrap().remove("stall_ns");
    let (full, whole) = run(&scenario, "full");
    assert_eq!(stalled["stopped_by"], "stalled: no workflow progress for 2000 ms", "{stalled}");
    assert_eq!(full["stopped_by"], "limit: time_ns_max", "{full}");
    let last_progress = cut.iter().filter(|r| r["note"].is_null()).map(|r| r["complete_ns"].as_u64().unwrap()).max().unwrap();
    assert!(stalled["sim_time_ns"].as_u64().unwrap() <= last_progress + 2_000_000_000, "{stalled}");
    assert!(full["events"].as_u64().unwrap() > 10 * stalled["events"].as_u64().unwrap(), "the idle tail is where the events went");
    assert_eq!(cut.len(), whole.len());
    let in_flight = cut.iter().filter(|r| !r["note"].is_null()).count();
    assert!(in_flight > 0, "the lost reply leaves writes in flight");
    for (mut a, mut b) in cut.into_iter().zip(whole) {
        if !a["note"].is_null() {
            a["complete_ns"] = 0.into();
            b["complete_ns"] = 0.into();
        }
        assert_eq!(a, b);
    }
}

/// The register default scenario with `edit` applied, written to `dir/file`.
fn scenario_file(dir: &Path, file: &str, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/register/default.json")).unwrap();
    let mut scenario: serde_json::Value = serde_json::from_str(&text).unwrap();
    scenario["workload"]["generator"]["workflows_max"] = 50.into();
    scenario["workload"]["generator"]["warmup_ns"] = 0.into();
    edit(&mut scenario);
    let path = dir.join(file);
    std::fs::write(&path, scenario.to_string()).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_name_that_is_not_one_plain_folder_name_is_refused_and_nothing_is_written() {
    let dir = temp_dir("cli", "names");
    std::fs::create_dir_all(&dir).unwrap();
    for (i, bad) in ["../escape", "/abs", "..", "", "a/b", "new\nline"].into_iter().enumerate() {
        let path = scenario_file(&dir, &format!("s{i}.json"), |s| s["name"] = bad.into());
        let o = Command::new(env!("CARGO_BIN_EXE_causim")).args(["run", &path]).current_dir(&dir).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("field `name`") && stderr(&o).contains("cannot name an output folder"), "{bad:?}: {}", stderr(&o));
    }
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(left.iter().all(|n| n.ends_with(".json")), "written: {left:?}");
    assert!(!dir.parent().unwrap().join("escape").exists());
}

#[test]
fn a_failed_run_leaves_the_previous_run_whole_and_a_foreign_folder_is_never_replaced() {
    let dir = temp_dir("cli", "replace");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("run");
    let good = scenario_file(&dir, "good.json", |_| {});
    ok(&["run", &good, "--out", out.to_str().unwrap()]);
    let history = std::fs::read_to_string(out.join("history.jsonl")).unwrap();
    // Fails when the engine validates it, after the output folder was chosen.
    let bad = scenario_file(&dir, "bad.json", |s| s["limits"] = serde_json::json!({"time_ns_max": 0}));
    let o = causim(&["run", &bad, "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("limits.time_ns_max"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(out.join("history.jsonl")).unwrap(), history, "the good run's history is intact");
    assert!(out.join("summary.json").exists() && out.join("trace.jsonl").exists());
    // A folder of the user's is refused, not replaced.
    let mine = dir.join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    let o = causim(&["run", &good, "--out", mine.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not a causim run folder"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(mine.join("notes.txt")).unwrap(), "keep");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(left.iter().all(|n| !n.starts_with('.')), "staging folders left behind: {left:?}");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // Goal: `causim … | head -1` ends like any program whose reader went away, with no panic.
    use std::io::Read;
    let mut child = Command::new(env!("CARGO_BIN_EXE_causim"))
        // 118 KB of step-by-step account: more than a pipe holds, so writing must fail.
        .args(["run", "scenarios/faastcc/fuzz-chain.json", "--account", "--out"])
        .arg(temp_dir("cli", "pipe"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 8];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(141), "{err}");
}

/// Every abort is counted, with its parts: here the read transaction the client library retries
/// ten times per attempt (Fig. 8), the 49 retried attempts and the workflow that gave up, which the
/// attempts-only abort rate does not show.
#[test]
fn run_counts_every_abort_with_its_parts() {
    let out = temp_dir("cli", "aborts");
    let o = causim(&["run", "scenarios/causalmesh/own-write-read-txn.json", "--out", out.to_str().unwrap(), "--no-trace"]);
    let text = stdout(&o);
    assert!(text.contains("50 aborted attempts, 1 failed"), "{text}\n{}", stderr(&o));
    let line = text.lines().find(|l| l.trim_start().starts_with("aborts ")).unwrap_or_else(|| panic!("no aborts line:\n{text}"));
    assert!(line.ends_with("550 (read transactions 500, attempts retried 49, gave up 1), 55000.00 per 100 workflows"), "{line}");
}
