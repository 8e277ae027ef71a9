//! `causim model-check` end to end: a mutant found by Stateright becomes a scenario file that
//! `causim run` replays, and the history checker names the same anomaly; TLC agrees; bad input
//! gets a clear error.

mod common;
use common::*;

use std::path::PathBuf;

/// The anomaly names on the line `prefix <names>` of `text`.
fn names_after(text: &str, prefix: &str) -> Vec<String> {
    let line = text.lines().find_map(|l| l.trim().strip_prefix(prefix)).unwrap_or_else(|| panic!("no {prefix:?} in\n{text}"));
    line.split(", ").map(|s| s.trim().to_string()).collect()
}

/// The verdict Stateright printed for `property` ("holds", "VIOLATED (10 steps)", ...).
fn verdict_of(out: &str, property: &str) -> String {
    let quoted = format!("\"{property}\"");
    let line = out.lines().find(|l| l.contains(&quoted)).unwrap_or_else(|| panic!("no line for {quoted} in\n{out}"));
    line[line.find(&quoted).unwrap() + quoted.len()..].trim().to_string()
}

fn written_scenario(out: &str) -> PathBuf {
    let line = out.lines().find_map(|l| l.trim().strip_prefix("wrote ")).unwrap_or_else(|| panic!("no scenario written:\n{out}"));
    PathBuf::from(line.trim())
}

#[test]
fn each_mutant_becomes_a_scenario_that_causim_run_replays_with_the_same_anomaly() {
    let dominance_script = "w(k1)@S0, w(k2)@S0; w(k2)@S0, w(k2)@S1; r(k1)@S0, r(k1)@S1";
    for (mutant, script) in [
        ("no_carry_local_writes", None),
        ("reveal_at_head", None),
        ("nearest_deps_only", None),
        ("read_without_integration", None),
        ("integrate_by_vc_dominance", Some(dominance_script)),
    ] {
        let dir = temp_dir("model-check", mutant);
        let dir_s = dir.display().to_string();
        let mut args = vec!["model-check", "causalmesh", "--mutant", mutant, "--history-only", "--tlc", "--threads", "1"];
        args.extend(["--out", &dir_s]);
        if let Some(s) = script {
            args.extend(["--script", s]);
        }
        let o = causim(&args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{mutant}: a violation exits 1\n{out}\n{}", stderr(&o));
        assert!(verdict_of(&out, "reads are causally consistent").starts_with("VIOLATED"), "{mutant}:\n{out}");
        assert!(out.contains("HistoryIsCausalPlus violated"), "{mutant}: TLC\n{out}");
        assert!(out.contains("agreement: Stateright and TLC both find a violation"), "{mutant}:\n{out}");
        let model = names_after(&out, "the history checker names it: ");
        assert_eq!(model, ["WriteCOInitRead"], "{mutant}");
        // The command replays the scenario itself ...
        assert_eq!(names_after(&out, "history checker (ccv): "), model, "{mutant}");
        // ... and `causim run` on the written file does the same.
        let file = written_scenario(&out);
        assert!(file.starts_with(&dir), "{}", file.display());
        let run_out = dir.join("run");
        let o = causim(&["run", &file.display().to_string(), "--out", &run_out.display().to_string()]);
        let text = stdout(&o);
        assert!(o.status.success(), "{mutant}: causim run\n{text}\n{}", stderr(&o));
        assert!(text.contains("WriteCOInitRead"), "{mutant}:\n{text}");
        assert!(text.contains("as expected (fail)"), "{mutant}:\n{text}");
        let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(run_out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["summary"]["stopped_by"], "workload complete", "{mutant}: the replay followed its schedule");
        let names: Vec<&String> = summary["check"]["anomalies"].as_object().unwrap().keys().collect();
        assert_eq!(names, model.iter().collect::<Vec<_>>(), "{mutant}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn the_correct_protocol_passes_and_tlc_agrees() {
    let dir = temp_dir("model-check", "correct");
    let o = causim(&[
        "model-check",
        "causalmesh",
        "--servers",
        "2",
        "--keys",
        "2",
        "--clients",
        "2",
        "--ops",
        "1",
        "--tlc",
        "--threads",
        "1",
        "--out",
        &dir.display().to_string(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    for property in ["the C-cache is a causal cut", "a revealed write is everywhere", "reads cover deps", "reads are causally consistent"] {
        assert_eq!(verdict_of(&out, property), "holds", "{out}");
    }
    assert!(verdict_of(&out, "a remote write becomes visible").starts_with("found"), "{out}");
    for line in ["tlc             every invariant holds", "agreement: Stateright and TLC both pass"] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(out.contains(" states, ") && out.contains(" unique, depth "), "{out}");
    assert!(!dir.exists(), "no counterexample, no scenario written");
}

#[test]
fn a_runs_trace_validates_against_the_spec() {
    // The correct protocol's run is a behaviour of the spec; reveal_at_head's is rejected at
    // the read that sees x at its head, and the report names that step.
    let dir = temp_dir("model-check", "trace");
    let scenario = dir.join("scenario.json");
    std::fs::create_dir_all(&dir).unwrap();
    for (mutants, expect_ok) in [(serde_json::json!([]), true), (serde_json::json!(["reveal_at_head"]), false)] {
        let json = serde_json::json!({
            "format": "causim-scenario/1",
            "name": "trace-validation",
            "protocol": {"name": "causalmesh", "params": {"db_flush": "async"}, "mutants": mutants},
            "seed": 1,
            "topology": {"servers": 2, "delay": {"dist": "constant", "ns": 75000}},
            "workload": {"script": [
                {"session": "c1", "functions": [{"on": "S0", "ops": [{"write": "x"}]}]},
                {"session": "c2", "functions": [{"on": "S0", "at_ns": 2_000_000, "ops": [{"read": "x"}]}]},
            ]},
        });
        std::fs::write(&scenario, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        let run_dir = dir.join("run");
        let o = causim(&["run", &scenario.display().to_string(), "--out", &run_dir.display().to_string()]);
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        let o = causim(&["model-check", "causalmesh", "--validate-trace", &run_dir.display().to_string()]);
        let out = stdout(&o);
        if expect_ok {
            assert!(o.status.success(), "{out}\n{}", stderr(&o));
            assert!(out.contains("TLC accepts the whole trace"), "{out}");
        } else {
            assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
            assert!(out.contains("TLC rejects step 3 of 3: ClientRead: c2 reads x at S0 and gets c1's operation 1"), "{out}");
            assert!(out.contains("val |-> InitVal"), "{out}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_causalmesh_tcc_runs_trace_validates_against_its_own_spec() {
    // tcc-join-fracture.json is a behaviour of CausalMeshTCC.tla; its join_checks_direct_deps
    // mutant is rejected at the join it accepts.
    let dir = temp_dir("model-check", "trace-tcc");
    for (scenario, expect_ok) in [("tcc-join-fracture.json", true), ("tcc-join-fracture-direct-deps.json", false)] {
        let run_dir = dir.join(scenario);
        let path = format!("{}/scenarios/causalmesh/{scenario}", env!("CARGO_MANIFEST_DIR"));
        let o = causim(&["run", &path, "--out", &run_dir.display().to_string()]);
        assert!(o.status.success() || !expect_ok, "{}\n{}", stdout(&o), stderr(&o));
        let o = causim(&["model-check", "causalmesh", "--validate-trace", &run_dir.display().to_string()]);
        let out = stdout(&o);
        if expect_ok {
            assert!(o.status.success(), "{out}\n{}", stderr(&o));
            assert!(out.contains("TLC accepts the whole trace as a behaviour of CausalMeshTCC.tla"), "{out}");
        } else {
            assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
            assert!(out.contains("ValidateJoin: S0 accepts c1's join") && out.contains("ok |-> FALSE"), "{out}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_faastcc_runs_trace_validates_against_its_own_spec() {
    // fan-in-merge.json is a behaviour of FaaSTCC.tla (through the refinement mapping); its
    // no_fanin_merge mutant is rejected at the join whose intersection the spec finds empty; a
    // run that garbage-collects a version it needs is refused (exit 2).
    let dir = temp_dir("model-check", "trace-faastcc");
    for (scenario, code) in [("fan-in-merge.json", 0), ("mutant-no-fanin-merge.json", 1), ("gc-abort.json", 2)] {
        let run_dir = dir.join(scenario);
        let path = format!("{}/scenarios/faastcc/{scenario}", env!("CARGO_MANIFEST_DIR"));
        causim(&["run", &path, "--out", &run_dir.display().to_string()]);
        let o = causim(&["model-check", "faastcc", "--validate-trace", &run_dir.display().to_string()]);
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(o.status.code(), Some(code), "{scenario}: {out}\n{err}");
        match code {
            0 => assert!(out.contains("TLC accepts the whole trace as a behaviour of FaaSTCC.tla"), "{out}"),
            1 => assert!(out.contains("Join: d's sink starts in [1, 1]") && out.contains("\"aborted\""), "{out}"),
            _ => assert!(err.contains("out of scope") && err.contains("every version"), "{err}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_gets_a_clear_error_not_a_panic() {
    let cases: [(&[&str], &str); 12] = [
        (&["model-check", "causalmesh", "--ops", "0"], "--ops must be between 1 and 8, got 0"),
        (&["model-check", "causalmesh", "--mutant", "no_such_bug"], "no_such_bug"),
        (&["model-check", "causalmesh", "--servers", "1"], "--servers must be between 2 and 16, got 1"),
        (&["model-check", "causalmesh", "--keys", "0"], "--keys must be between 1 and 8, got 0"),
        (&["model-check", "causalmesh", "--chain", "three_round"], "--chain is one_round or two_round"),
        (&["model-check", "faastcc"], "model-check knows protocol causalmesh"),
        (&["model-check", "causalmesh", "--script", "w(k1)@S9"], "outside the bounds"),
        (&["model-check", "causalmesh", "--script", "x(k1)@S0"], "bad step"),
        (&["model-check", "causalmesh", "--max-depth", "0"], "--max-depth must be at least 1"),
        (&["model-check", "causalmesh", "--symmetry", "--script", "w(k1)@S0"], "--symmetry needs free choice"),
        (&["model-check", "causalmesh", "--symmetry", "--simulate"], "--symmetry is for the exhaustive search"),
        (&["model-check", "causalmesh", "--seed", "3"], "--simulate"),
    ];
    for (args, message) in cases {
        let o = causim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.starts_with("error: ") && err.contains(message), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // A mutant whose bug needs something the model does not explore (eviction) is refused,
    // rather than passing vacuously.
    let o = causim(&["model-check", "causalmesh", "--mutant", "evict_ignores_dependents"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("evict_ignores_dependents") && stderr(&o).contains("eviction"), "{}", stderr(&o));
    // Two mutants at once: Stateright can, the spec cannot; --tlc says so before any checking.
    let o = causim(&["model-check", "causalmesh", "--mutant", "reveal_at_head", "--mutant", "nearest_deps_only", "--tlc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("one Mutant at a time"), "{}", stderr(&o));
    assert!(!stdout(&o).contains("stateright "), "{}", stdout(&o));
}

#[test]
fn an_early_stop_leaves_the_other_properties_not_checked() {
    // nearest_deps_only breaks the cut at 3 steps and the history at 4: a check stopped at the
    // first violation must not call the history property "holds".
    let dir = temp_dir("model-check", "early-stop");
    let dir_s = dir.display().to_string();
    let args = ["model-check", "causalmesh", "--mutant", "nearest_deps_only", "--threads", "1", "--out", &dir_s];
    let o = causim(&args);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(verdict_of(&out, "the C-cache is a causal cut").starts_with("VIOLATED"), "{out}");
    for property in ["a revealed write is everywhere", "reads cover deps", "reads are causally consistent"] {
        assert!(verdict_of(&out, property).starts_with("not checked (the search stopped at the first violation"), "{out}");
    }
    assert!(!out.contains(" holds"), "{out}");
    // Going on gives every property its verdict.
    let o = causim(&[&args[..], &["--all-properties"]].concat());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(verdict_of(&out, "reads are causally consistent").starts_with("VIOLATED (4 steps)"), "{out}");
    assert_eq!(verdict_of(&out, "reads cover deps"), "holds", "{out}");
    assert!(!out.contains("not checked"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_counterexample_scenario_carries_its_expect() {
    // reveal_at_head breaks "a revealed write is everywhere" first, which the simulator cannot
    // see (it relates two servers): the scenario still names it, and expects the simulator's
    // checks to pass; nearest_deps_only's cut violation is one the invariant check reports.
    for (mutant, property, verdict) in
        [("reveal_at_head", "a revealed write is everywhere", "pass"), ("nearest_deps_only", "the C-cache is a causal cut", "fail")]
    {
        let dir = temp_dir("model-check", &format!("expect-{mutant}"));
        let o = causim(&["model-check", "causalmesh", "--mutant", mutant, "--threads", "1", "--out", &dir.display().to_string()]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{mutant}\n{out}\n{}", stderr(&o));
        assert!(!out.contains("does not meet the scenario's expect"), "{mutant}\n{out}");
        let file = written_scenario(&out);
        let scenario: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(scenario["expect"]["property"], property, "{mutant}");
        assert_eq!(scenario["expect"]["verdict"], verdict, "{mutant}");
        let o = causim(&["run", &file.display().to_string(), "--out", &dir.join("run").display().to_string()]);
        let text = stdout(&o);
        assert!(o.status.success(), "{mutant}\n{text}\n{}", stderr(&o));
        assert!(text.contains(&format!("as expected ({verdict})")), "{mutant}\n{text}");
        assert!(text.contains(&format!("a model-check counterexample to \"{property}\"")), "{mutant}\n{text}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn bounded_searches_say_what_they_covered() {
    let dir = temp_dir("model-check", "bounded");
    let dir_s = dir.display().to_string();
    let base = ["model-check", "causalmesh", "--threads", "1", "--out", &dir_s];
    let all = ["the C-cache is a causal cut", "a revealed write is everywhere", "reads cover deps", "reads are causally consistent"];
    // A depth limit that cuts the space: no property "holds", the search says it was bounded.
    let o = causim(&[&base[..], &["--max-depth", "4"]].concat());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    for property in all {
        assert_eq!(verdict_of(&out, property), "not violated within 4 steps", "{out}");
    }
    assert!(out.contains("no violation within 4 steps: a bounded search, not a proof"), "{out}");
    assert!(out.contains("depth 5,"), "4 steps are 5 states, as TLC counts depth:\n{out}");
    // A limit past the space's depth cuts nothing, so the verdicts are whole.
    let o = causim(&[&base[..], &["--ops", "1", "--max-depth", "30"]].concat());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    for property in all {
        assert_eq!(verdict_of(&out, property), "holds", "{out}");
    }
    // Random walks: never "holds"; a mutant's violation is found and replayed, the same one for
    // the same seed.
    let o = causim(&[&base[..], &["--simulate", "--seed", "5", "--max-states", "5000"]].concat());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(out.contains("random walks from seed 5: "), "{out}");
    for property in all {
        assert_eq!(verdict_of(&out, property), "not violated in random walks", "{out}");
    }
    let mut written = Vec::new();
    for _ in 0..2 {
        let o = causim(&[&base[..], &["--simulate", "--seed", "5", "--mutant", "no_carry_local_writes", "--history-only"]].concat());
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
        assert!(verdict_of(&out, "reads are causally consistent").starts_with("VIOLATED"), "{out}");
        assert!(out.contains("history checker (ccv): WriteCOInitRead"), "the walk's counterexample replays:\n{out}");
        written.push(std::fs::read(written_scenario(&out)).unwrap());
    }
    assert_eq!(written[0], written[1], "the same seed on one thread takes the same walks");
    // Symmetry: the violation found on representatives is searched again without it, so the
    // written counterexample replays.
    let o = causim(&[&base[..], &["--symmetry", "--mutant", "no_carry_local_writes", "--history-only"]].concat());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(out.contains("searching again without symmetry, within 4 steps"), "{out}");
    assert!(out.contains("history checker (ccv): WriteCOInitRead"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_memory_stop_keeps_what_was_found_before_it() {
    // The cut breaks within 3 steps, long before 300 MB; the budget then stops the search, and
    // the counterexample found before the stop is still rebuilt, reported and written.
    let dir = temp_dir("model-check", "memory-stop");
    let dir_s = dir.display().to_string();
    let args = [
        "model-check",
        "causalmesh",
        "--clients",
        "3",
        "--ops",
        "3",
        "--mutant",
        "nearest_deps_only",
        "--all-properties",
        "--max-memory",
        "300",
        "--threads",
        "1",
        "--out",
        &dir_s,
    ];
    let o = causim(&args);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(verdict_of(&out, "the C-cache is a causal cut"), "VIOLATED (3 steps)", "{out}");
    assert_eq!(verdict_of(&out, "reads cover deps"), "not checked (budget exhausted)", "{out}");
    assert!(written_scenario(&out).exists(), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
