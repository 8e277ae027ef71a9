//! Cross-check of `linearizable` against an independent checker, Porcupine (Athalye; the Go
//! module `github.com/anishathalye/porcupine`, with a key-partitioned register model): thousands
//! of seeded random register histories — linearizable ones from a simulated store with
//! overlapping intervals and `failed` writes, and mutated ones that mostly are not — plus the
//! real-time litmus catalogue and a few large histories must get the same verdict from both.
//!
//! The test builds the helper in `tests/porcupine/` with `go build` (fetching the module through
//! the Go module proxy on first use), so it needs Go 1.19 or later on the PATH. Porcupine's own
//! test data (etcd and key-value logs) cannot be used: their values repeat and they use
//! compare-and-set and append, while causim histories are registers with unique written values.

mod common;

use causim_checkers::testgen::{RegisterParams, SplitMix64, register_records};
use causim_checkers::{History, Level, OpKind, Outcome, TxnRecord, Value, check};
use common::{litmus_timed, registers};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Build the helper once per test run; its path.
fn porcupine_helper() -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/porcupine");
    let binary = Path::new(env!("CARGO_TARGET_TMPDIR")).join("porcupine-check");
    let built = Command::new("go").args(["build", "-buildvcs=false", "-o"]).arg(&binary).arg(".").current_dir(&source).output();
    match built {
        Err(e) => panic!(
            "cannot run `go` ({e}): the Porcupine cross-check needs Go 1.19 or later (https://go.dev/dl/, or Debian's golang-go) on the PATH to build {}",
            source.display()
        ),
        Ok(out) if !out.status.success() => panic!(
            "`go build` of {} failed (it fetches github.com/anishathalye/porcupine through the Go module proxy):\n{}",
            source.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
        Ok(_) => binary,
    }
}

/// The history in the helper's format: aborted operations and failed reads left out (they have
/// no effect and are not judged), failed writes open-ended, the initial value as 0.
fn porcupine_text(name: &str, records: &[TxnRecord], out: &mut String) {
    let _ = writeln!(out, "# history {name}");
    for r in records {
        let op = &r.ops[0];
        let write = op.f == OpKind::Write;
        if r.outcome == Outcome::Aborted || (!write && r.outcome == Outcome::Failed) {
            continue;
        }
        let value = match op.value {
            Value::Null => 0,
            Value::Int(v) => v,
            Value::Str(_) => unreachable!("generated values are integers"),
        };
        let complete = if r.outcome == Outcome::Failed { "inf".to_string() } else { r.complete_ns.expect("timed").to_string() };
        let f = if write { "w" } else { "r" };
        let _ = writeln!(out, "{} {f} {value} {} {complete}", op.key, r.invoke_ns.expect("timed"));
    }
}

fn histories() -> Vec<(String, Vec<TxnRecord>)> {
    let mut out = Vec::new();
    for seed in 0..3000 {
        out.push((format!("small-{seed}"), registers::small(seed, 24)));
    }
    for seed in 0..300 {
        out.push((format!("medium-{seed}"), registers::small(1_000_000 + seed, 80)));
    }
    for lit in litmus_timed::catalogue() {
        let records = common::records(lit.history);
        let checkable = records.iter().all(|r| r.ops.len() == 1 && r.invoke_ns.is_some());
        if checkable {
            out.push((format!("litmus-{}", out.len()), records));
        }
    }
    for seed in 0..6 {
        let p = RegisterParams {
            clients: 16,
            ops: 3_000,
            keys: 20,
            read_per_mille: 600,
            failed_per_mille: 30,
            duration_ns: 400,
            think_ns: 100,
            seed,
        };
        let mut records = register_records(&p);
        let mut rng = SplitMix64::new(seed);
        for _ in 0..seed {
            registers::mutate(&mut records, &mut rng);
        }
        out.push((format!("large-{seed}"), records));
    }
    out
}

#[test]
fn porcupine_and_the_checker_agree_on_every_history() {
    let helper = porcupine_helper();
    let histories = histories();
    let mut input = String::new();
    for (name, records) in &histories {
        porcupine_text(name, records, &mut input);
    }
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("porcupine-histories.txt");
    std::fs::write(&path, &input).expect("write the histories");
    let out = Command::new(&helper).arg(&path).output().expect("run the Porcupine helper");
    assert!(out.status.success(), "porcupine-check failed: {}", String::from_utf8_lossy(&out.stderr));
    let verdicts: Vec<(String, String)> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| {
            let (name, verdict) = l.rsplit_once(' ').expect("NAME VERDICT");
            (name.to_string(), verdict.to_string())
        })
        .collect();
    assert_eq!(verdicts.len(), histories.len(), "one verdict per history");
    let mut mismatches = Vec::new();
    let (mut ok, mut illegal) = (0, 0);
    for ((name, records), (their_name, theirs)) in histories.iter().zip(&verdicts) {
        assert_eq!(name, their_name);
        assert_ne!(theirs, "unknown", "Porcupine timed out on {name}");
        let report = check(&History::from_records(None, records).expect("valid"), Level::Linearizable);
        assert!(report.complete, "{name}: no verdict ({:?})", report.notes);
        if report.ok != (theirs == "ok") {
            mismatches.push(format!("{name}: checker ok={}, Porcupine {theirs}", report.ok));
        }
        if theirs == "ok" { ok += 1 } else { illegal += 1 }
    }
    assert!(mismatches.is_empty(), "{} disagreements:\n{}", mismatches.len(), mismatches.join("\n"));
    assert!(ok > 1000 && illegal > 1000, "{ok} linearizable and {illegal} not: too lopsided to mean much");
    eprintln!("{} histories: {ok} linearizable and {illegal} not, by both checkers", histories.len());
}
