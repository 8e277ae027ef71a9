//! The `linearizable` level: verdicts against the oracle's exhaustive search on thousands of
//! random register histories, minimality of the reported windows, the "no verdict" cases (no
//! intervals, multi-operation transactions, an exhausted budget), and the renderings.

mod common;

use causim_checkers::testgen::{RegisterParams, register_records};
use causim_checkers::{
    Anomaly, CheckOptions, EdgeKind, ExportFormat, History, Level, OpKind, TxnRecord, check, check_with, read_history, write_history,
};
use common::oracle::Oracle;
use common::registers;

fn lin(records: &[TxnRecord]) -> causim_checkers::Report {
    check(&History::from_records(None, records).expect("generated histories are valid"), Level::Linearizable)
}

fn show(records: &[TxnRecord]) -> String {
    records
        .iter()
        .map(|r| {
            let op = &r.ops[0];
            let f = if op.f == OpKind::Write { "w" } else { "r" };
            format!(
                "{} {:?} @{}-{}: {f} {}={}\n",
                r.session,
                r.outcome,
                r.invoke_ns.unwrap_or(0),
                r.complete_ns.unwrap_or(0),
                op.key,
                op.value
            )
        })
        .collect()
}

#[test]
fn verdicts_equal_the_oracles_on_random_register_histories() {
    let (mut passed, mut failed) = (0, 0);
    for seed in 0..4000 {
        let records = registers::small(seed, 18);
        let report = lin(&records);
        assert!(report.complete, "seed {seed}: no verdict on a small history\n{}", show(&records));
        let want = Oracle::new(&records, &[]).satisfies(Level::Linearizable);
        assert_eq!(
            report.ok,
            want,
            "seed {seed}: checker ok={} ({:?}), oracle ok={want}\n{}",
            report.ok,
            report.violations.first().map(|v| &v.sentence),
            show(&records)
        );
        for v in &report.violations {
            assert!(Level::Linearizable.forbids(v.anomaly), "{} reported", v.anomaly);
        }
        if report.ok { passed += 1 } else { failed += 1 }
    }
    // Both kinds must be well represented for the comparison to mean something.
    assert!(passed > 1000 && failed > 1000, "{passed} linearizable, {failed} not");
}

/// The window of every violation fails on its own, and without any one of its operations (and
/// the reads of a removed write's value) the rest is linearizable, by the oracle.
#[test]
fn every_reported_window_is_a_smallest_failing_one() {
    let mut checked = 0;
    for seed in 0..2000 {
        let records = registers::small(seed, 18);
        let report = lin(&records);
        for v in report.violations.iter().filter(|v| !v.window.is_empty()) {
            let sub = |skip: Option<u64>| -> Vec<TxnRecord> {
                let removed = skip.map(|id| records[id as usize].ops[0].clone());
                records
                    .iter()
                    .filter(|r| v.window.contains(&r.id.unwrap()) && Some(r.id.unwrap()) != skip)
                    .filter(|r| match &removed {
                        Some(w) if w.f == OpKind::Write => !(r.ops[0].key == w.key && r.ops[0].value == w.value),
                        _ => true,
                    })
                    .cloned()
                    .collect()
            };
            let whole = sub(None);
            assert!(!Oracle::new(&whole, &[]).satisfies(Level::Linearizable), "seed {seed}: window passes\n{}", show(&whole));
            for id in &v.window {
                let smaller = sub(Some(*id));
                assert!(
                    Oracle::new(&smaller, &[]).satisfies(Level::Linearizable),
                    "seed {seed}: the window without {id} still fails\n{}",
                    show(&whole)
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} windows");
}

#[test]
fn the_names_follow_the_shape_of_the_window() {
    for seed in 0..1500 {
        let records = registers::small(seed, 18);
        for v in lin(&records).violations {
            let edges = |k: EdgeKind| v.witness.iter().filter(|e| e.kind == k).count();
            match v.anomaly {
                Anomaly::StaleRead => {
                    assert!(v.window.len() <= 3 && edges(EdgeKind::Realtime) >= 1 && edges(EdgeKind::AntiDependency) == 1)
                }
                Anomaly::RealtimeFutureRead => assert!(v.window.len() == 2 && edges(EdgeKind::Realtime) == 1),
                Anomaly::NonLinearizable => assert!(edges(EdgeKind::Realtime) >= 1 && v.window.len() >= 3),
                _ => continue,
            }
            assert!(v.sentence.contains("at ") || v.sentence.contains("completed"), "{}", v.sentence);
        }
    }
}

#[test]
fn large_generated_histories_pass_and_survive_a_round_trip_through_the_file_format() {
    for seed in 0..4 {
        let p = RegisterParams {
            clients: 16,
            ops: 20_000,
            keys: 50,
            read_per_mille: 600,
            failed_per_mille: 20,
            duration_ns: 2_000,
            think_ns: 500,
            seed,
        };
        let mut records = register_records(&p);
        let report = lin(&records);
        assert!(report.ok, "seed {seed}: {:?} {:?}", report.notes, report.violations.first().map(|v| &v.sentence));
        // Break one read somewhere in the middle: caught, also after writing and reading the file.
        let t = (0..records.len())
            .skip(records.len() / 2)
            .find(|t| records[*t].ops[0].f == OpKind::Read && !records[*t].ops[0].value.eq(&causim_checkers::Value::Null))
            .unwrap();
        records[t].ops[0].value = causim_checkers::Value::Null;
        let h = History::from_records(None, &records).unwrap();
        let direct = check(&h, Level::Linearizable);
        assert!(!direct.ok);
        let mut file = Vec::new();
        write_history(&h, ExportFormat::Causim, &mut file).unwrap();
        let again = check(&read_history(&file[..], None).unwrap(), Level::Linearizable);
        // The same verdict and witness (the file's line numbers are one more: its header).
        let gist = |r: &causim_checkers::Report| -> Vec<(Anomaly, Vec<u64>, String)> {
            r.violations.iter().map(|v| (v.anomaly, v.window.clone(), v.sentence.clone())).collect()
        };
        assert_eq!((direct.ok, gist(&direct)), (again.ok, gist(&again)));
    }
}

#[test]
fn a_history_without_intervals_gets_no_verdict_and_says_why() {
    let h = common::history("c1: w x=1\nc2: r x=_");
    let report = check(&h, Level::Linearizable);
    assert!(!report.ok && !report.complete && report.violation_count == 0);
    assert!(report.notes[0].contains("no real-time intervals"), "{:?}", report.notes);
    assert!(report.render_text().contains("UNKNOWN"));
    // Well-formedness is still checked.
    let thin = check(&common::history("c1: r x=7"), Level::Linearizable);
    assert_eq!(thin.violations[0].anomaly, Anomaly::ThinAirRead);
}

#[test]
fn keys_of_multi_operation_transactions_are_not_checked_but_the_others_are() {
    let h = common::history("c1 @0-10: w x=1, w y=1\nc2 @20-30: r x=_\nc3 @0-10: w z=1\nc4 @20-30: r z=_");
    let report = check(&h, Level::Linearizable);
    assert!(!report.complete);
    assert_eq!(report.violation_count, 1, "z is checked: {:?}", report.violations);
    assert_eq!(report.violations[0].key, Some("z".into()));
    assert!(
        report.notes[0].contains("2 keys not checked")
            && report.notes[0].contains("x, y")
            && report.notes[0].contains("several operations"),
        "{:?}",
        report.notes
    );
}

#[test]
fn an_exhausted_budget_gives_no_verdict_for_that_key_only() {
    // Key x needs a choice between two concurrent writes; key y is a plain stale read.
    let h = common::history("a @0-10: w x=1\nb @0-10: w x=2\nc @20-30: r x=2\nd @40-50: w y=1\ne @60-70: w y=2\nf @80-90: r y=1");
    let tight = CheckOptions { lin_steps_max: 2, ..CheckOptions::default() };
    let report = check_with(&h, Level::Linearizable, &tight);
    assert!(!report.complete && !report.ok);
    assert!(report.notes.iter().any(|n| n.contains("budget") && n.contains(": x")), "{:?}", report.notes);
    // With the default budget, x is fine and only y fails.
    let full = check(&h, Level::Linearizable);
    assert!(full.complete && full.violation_count == 1);
    assert_eq!(full.violations[0].key, Some("y".into()));
}

#[test]
fn failed_writes_take_effect_late_or_never_and_failed_reads_are_not_judged() {
    let ok = [
        "c1? @0-10: w x=1\nc2 @20-30: r x=_\nc3 @40-50: r x=1",
        "c1? @0-10: w x=1\nc2 @20-30: r x=_",
        "c1 @0-10: w x=1\nc2? @20-30: r x=_",
    ];
    for text in ok {
        assert!(check(&common::history(text), Level::Linearizable).ok, "{text}");
    }
    // But once read, it has taken effect: reading the initial value afterwards is stale.
    let stale = check(&common::history("c1? @0-10: w x=1\nc2 @20-30: r x=1\nc3 @40-50: r x=_"), Level::Linearizable);
    assert_eq!(stale.violations[0].anomaly, Anomaly::NonLinearizable);
    assert!(stale.violations[0].render_text(1).contains("from 0 on"), "{}", stale.violations[0].render_text(1));
}

#[test]
fn elle_histories_carry_their_times() {
    let text = r#"[{"type":"invoke","process":0,"f":"txn","value":[["w","x",1]],"time":0},
{"type":"ok","process":0,"f":"txn","value":[["w","x",1]],"time":10},
{"type":"invoke","process":1,"f":"txn","value":[["w","x",2]],"time":20},
{"type":"ok","process":1,"f":"txn","value":[["w","x",2]],"time":30},
{"type":"invoke","process":2,"f":"txn","value":[["r","x",null]],"time":40},
{"type":"ok","process":2,"f":"txn","value":[["r","x",1]],"time":50}]"#;
    let report = check(&read_history(text.as_bytes(), None).unwrap(), Level::Linearizable);
    assert_eq!(report.violations[0].anomaly, Anomaly::StaleRead);
}

#[test]
fn stale_read_report_text_json_and_dot() {
    let h = common::history("c1 @0-10: w x=1\nc2 @20-30: w x=2\nc3 @40-50: r x=1");
    let report = check(&h, Level::Linearizable).with_source("stale.jsonl");
    common::snapshot("stale_lin_text", &report.render_text());
    common::snapshot("stale_lin_json", &report.to_json());
    common::snapshot("stale_lin_dot", &report.to_dot());
}

#[test]
fn the_level_parses_by_its_names() {
    for name in ["linearizable", "linearizability", "Linearizable"] {
        assert_eq!(name.parse::<Level>(), Ok(Level::Linearizable));
    }
    assert!(Level::Linearizable.is_timed() && !Level::Linearizable.is_transactional());
}
