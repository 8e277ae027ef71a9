//! `causim check` end to end: verdicts, exit codes, report formats, DOT, bad input, export.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn causim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_causim")).args(args).output().expect("causim runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("causim-check-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const FIG6: &str = r#"{"format":"causim-history/1","scenario":"scenarios/causalmesh/fig6.json","seed":1,"protocol":"causalmesh"}
{"id":0,"session":"c1","node":"S0","ops":[{"f":"w","key":"x","value":1}]}
{"id":1,"session":"c1","node":"S1","ops":[{"f":"w","key":"y","value":1}]}
{"id":2,"session":"c2","node":"S1","ops":[{"f":"r","key":"y","value":1}]}
{"id":3,"session":"c2","node":"S1","ops":[{"f":"r","key":"x","value":null}]}
"#;

fn fig6(d: &Path) -> String {
    let p = d.join("fig6.jsonl");
    std::fs::write(&p, FIG6).unwrap();
    p.display().to_string()
}

#[test]
fn a_violation_exits_1_with_an_explanation() {
    let d = dir("violation");
    let h = fig6(&d);
    let o = causim(&["check", &h, "--level", "causal+"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("FAIL: 1 violation of ccv"), "{out}");
    assert!(out.contains("WriteCOInitRead"), "{out}");
    assert!(out.contains("session c2 read the initial x after it had observed y=1 (written by c1)"), "{out}");
    assert!(out.contains("a contradiction!"), "{out}");
}

#[test]
fn a_satisfied_level_exits_0() {
    let d = dir("ok");
    let h = fig6(&d);
    for level in ["well-formed", "read-your-writes", "monotonic-reads", "rc", "ra"] {
        let o = causim(&["check", &h, "--level", level]);
        assert_eq!(o.status.code(), Some(0), "{level}: {}", text(&o.stdout));
        assert!(text(&o.stdout).contains("OK: the history satisfies"), "{level}");
    }
}

#[test]
fn json_report_and_dot_file() {
    let d = dir("json");
    let h = fig6(&d);
    let dot = d.join("witness.dot");
    let o = causim(&["check", &h, "--level", "tcc", "--format", "json", "--dot", &dot.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("the report is JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(v["level"], "tcc");
    assert_eq!(v["violations"][0]["anomaly"], "COConflictCM");
    assert_eq!(v["violations"][0]["tap"], "TAP-m");
    assert_eq!(v["violations"][0]["popl17"], "WriteCOInitRead");
    let kinds: Vec<&str> = v["violations"][0]["witness"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["SessionOrder", "ReadsFrom", "SessionOrder", "AntiDependency"]);
    let dot = std::fs::read_to_string(dot).unwrap();
    assert!(dot.starts_with("digraph causim {"), "{dot}");
    assert!(dot.contains("-> v1_0 [label=\"rw x\""), "{dot}");
}

#[test]
fn bad_input_exits_2_naming_file_line_and_problem() {
    let d = dir("bad");
    let p = d.join("bad.jsonl");
    std::fs::write(&p, "{\"session\":\"c1\",\"ops\":[]}\n{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":\"x\",\"value\":null}]}\n")
        .unwrap();
    let o = causim(&["check", &p.display().to_string(), "--level", "cc"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains(&format!("{}:2: ops[0].value: a write's value must not be null", p.display())), "{err}");
    let o = causim(&["check", "/nonexistent/history.jsonl", "--level", "cc"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("/nonexistent/history.jsonl: cannot open"), "{}", text(&o.stderr));
}

#[test]
fn usage_errors_exit_2() {
    let d = dir("usage");
    let h = fig6(&d);
    let o = causim(&["check", &h, "--level", "serializable"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("unknown level"), "{}", text(&o.stderr));
    let o = causim(&["check", &h]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--level is required"), "{}", text(&o.stderr));
    let o = causim(&["check", &h, "--export", "elle", "x.json"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn export_to_dbcop_and_plume_keeps_the_verdict() {
    let d = dir("export");
    let h = fig6(&d);
    for (format, expect) in [("dbcop", "dbcop"), ("plume", "plume")] {
        let out = d.join(format!("fig6.{format}"));
        let o = causim(&["check", &h, "--export", format, &out.display().to_string()]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let o = causim(&["check", &out.display().to_string(), "--level", "ccv", "--input-format", expect]);
        assert_eq!(o.status.code(), Some(1), "{format}: {}", text(&o.stdout));
        assert!(text(&o.stdout).contains(&format!("({expect} format)")), "{}", text(&o.stdout));
        assert!(text(&o.stdout).contains("WriteCOInitRead"), "{}", text(&o.stdout));
    }
}

#[test]
fn reads_standard_input() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_causim"))
        .args(["check", "-", "--level", "mw"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(FIG6.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("NonMonotonicWrite"), "{}", text(&o.stdout));
}

/// Plume's TAP cases as the test data holds them (`checkers/tests/data/`).
fn data(path: &str) -> String {
    format!("{}/checkers/tests/data/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// Anomaly names of a JSON report (sorted), and its input format.
fn names_and_format(o: &Output) -> (String, String) {
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("a JSON report");
    let mut names: Vec<&str> = report["counts"].as_object().unwrap().keys().map(String::as_str).collect();
    names.sort_unstable();
    (names.join("+"), report["history"]["format"].as_str().unwrap().to_string())
}

#[test]
fn plumes_tap_j_in_every_format_names_both_anomalies_and_rc_plume_passes_it() {
    for (path, format) in [
        ("plume-taps/tap-j.txt", "plume"),
        ("plume-taps/dbcop/tap-j.bincode", "dbcop-bincode"),
        ("plume-taps/cobra/tap-j", "cobra"),
        ("jepsen/plume-tap-j.edn", "jepsen-edn"),
    ] {
        let h = data(path);
        for (level, exit, want) in [
            ("ra", 1, "NonRepeatableRead+NotMyOwnWrite"),
            ("tcc", 1, "NonRepeatableRead+NotMyOwnWrite"),
            ("rc", 1, "NotMyOwnWrite"),
            ("rc-plume", 0, ""),
            ("plume-rc", 0, ""),
        ] {
            let o = causim(&["check", &h, "--level", level, "--format", "json"]);
            assert_eq!(o.status.code(), Some(exit), "{path} @ {level}: {}", text(&o.stderr));
            assert_eq!(names_and_format(&o), (want.to_string(), format.to_string()), "{path} @ {level}");
            // Named explicitly, the format reads the same.
            let o = causim(&["check", &h, "--level", level, "--format", "json", "--input-format", format]);
            assert_eq!(o.status.code(), Some(exit), "{path} @ {level}: {}", text(&o.stderr));
        }
    }
}

#[test]
fn rc_and_rc_plume_differ_on_tap_h_and_plumes_aborted_transactions_are_aborted() {
    let o = causim(&["check", &data("plume-taps/tap-h.txt"), "--level", "rc"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("Plume TAP-h NonMonoReadCO"), "{}", text(&o.stdout));
    let o = causim(&["check", &data("plume-taps/tap-h.txt"), "--level", "rc-plume"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    // TAP-b: transaction -1 is aborted, and reading its write is AbortedRead at every level.
    for level in ["well-formed", "rc-plume", "tcc"] {
        let o = causim(&["check", &data("plume-taps/tap-b.txt"), "--level", level, "--format", "json"]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        assert_eq!(names_and_format(&o).0, "AbortedRead");
    }
}

#[test]
fn export_to_dbcop_bincode_keeps_the_verdict_and_a_list_history_is_refused_without_a_file() {
    let d = dir("bincode");
    let out = d.join("tap-b.bincode").display().to_string();
    let o = causim(&["check", &data("plume-taps/tap-b.txt"), "--export", "dbcop-bincode", &out]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = causim(&["check", &out, "--level", "ra", "--format", "json"]);
    assert_eq!(names_and_format(&o), ("AbortedRead".to_string(), "dbcop-bincode".to_string()));

    let out = d.join("list.txt");
    let o = causim(&["check", &data("jepsen/plume-tap-j.edn"), "--export", "plume", &out.display().to_string()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot export a list-append history as plume"), "{}", text(&o.stderr));
    assert!(!out.exists(), "a refused export leaves no file behind");
}

#[test]
fn linearizable_judges_real_time_and_says_when_it_cannot() {
    let d = dir("linearizable");
    // x=2 completed at 30 before the read began at 40, which still returned x=1: a stale read
    // that no level ignoring real time reports.
    let stale = d.join("stale.jsonl");
    std::fs::write(
        &stale,
        r#"{"id":0,"session":"c1","invoke_ns":0,"complete_ns":10,"ops":[{"f":"w","key":"x","value":1}]}
{"id":1,"session":"c2","invoke_ns":20,"complete_ns":30,"ops":[{"f":"w","key":"x","value":2}]}
{"id":2,"session":"c3","invoke_ns":40,"complete_ns":50,"ops":[{"f":"r","key":"x","value":1}]}
"#,
    )
    .unwrap();
    let stale = stale.display().to_string();
    let o = causim(&["check", &stale, "--level", "linearizable"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("StaleRead") && out.contains("after the write of x=2 (session c2) had completed at 30"), "{out}");
    assert_eq!(causim(&["check", &stale, "--level", "causal+"]).status.code(), Some(0));
    // A linearizable history passes (by the alias too); with a budget of one step it gets no
    // verdict: exit 2, and the note names the key and the option.
    let fine = d.join("fine.jsonl");
    std::fs::write(
        &fine,
        r#"{"id":0,"session":"c1","invoke_ns":0,"complete_ns":10,"ops":[{"f":"w","key":"x","value":1}]}
{"id":1,"session":"c2","invoke_ns":5,"complete_ns":30,"ops":[{"f":"r","key":"x","value":null}]}
{"id":2,"session":"c3","invoke_ns":40,"complete_ns":50,"ops":[{"f":"r","key":"x","value":1}]}
"#,
    )
    .unwrap();
    let fine = fine.display().to_string();
    let o = causim(&["check", &fine, "--level", "linearizability"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let o = causim(&["check", &fine, "--level", "linearizable", "--lin-steps", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(out.contains("got no linearizability verdict") && out.contains("--lin-steps): x"), "{out}");
    // Without intervals there is nothing to judge: exit 2, not a pass.
    let o = causim(&["check", &fig6(&d), "--level", "linearizable"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("no real-time intervals"), "{}", text(&o.stdout));
}

#[test]
fn help_lists_every_level_input_format_and_export_format_and_the_linearizable_budget() {
    let o = causim(&["check", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let help = text(&o.stdout);
    // "Levels: a, b (alias), …, z (a note, with commas).": each item's name.
    let list = help.split("Levels: ").nth(1).and_then(|l| l.split(".\n").next()).expect("a level list");
    let mut depth = 0;
    let plain: String = list
        .chars()
        .filter(|c| {
            depth += (*c == '(') as i32 - (*c == ')') as i32;
            depth == 0 && *c != ')'
        })
        .collect();
    let listed: Vec<&str> = plain.split(", ").filter_map(|item| item.split_whitespace().next()).collect();
    use causim_checkers::Level;
    let names: Vec<&str> = Level::ALL
        .iter()
        .chain(&Level::SNAPSHOT)
        .chain(&Level::STRICT)
        .chain(&[Level::CacheFree])
        .chain(&Level::LOG)
        .map(|l| l.name())
        .collect();
    assert_eq!(listed, names, "{help}");
    for format in ["causim", "dbcop", "dbcop-bincode", "plume", "elle", "jepsen-edn", "cobra"] {
        assert!(causim_checkers::InputFormat::parse(format).is_some());
        assert!(help.contains(&format!(" {format},")) || help.contains(&format!(" {format}]")), "input format {format} missing:\n{help}");
    }
    for format in ["dbcop", "plume", "dbcop-bincode", "causim"] {
        assert!(causim_checkers::ExportFormat::parse(format).is_some());
        assert!(help.contains(&format!("`--export {format} FILE`")), "export format {format} missing:\n{help}");
    }
    assert!(help.contains("--lin-steps <N>"), "{help}");
}
