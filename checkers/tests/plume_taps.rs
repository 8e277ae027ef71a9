//! Plume's fourteen TAP test cases (`tests/data/plume-taps/`, transcribed from Plume's public
//! artifact) at every level: the anomalies each level reports, and the verdicts Plume's checker
//! gives in its RC, RA and TCC modes. `rc-plume` must agree with Plume's RC mode on every case,
//! `ra` and `tcc` with its RA and TCC modes; `rc` (Biswas & Enea's axioms) differs on TAP-h and
//! TAP-j, as the level table of `checkers/README.md` explains.

use causim_checkers::{Level, check, read_history_path};
use std::path::Path;

/// Columns in `Level::ALL` order: well-formed, read-your-writes, monotonic-reads,
/// monotonic-writes, writes-follow-reads, session, cc, ccv, cm, rc, rc-plume, ra, tcc,
/// linearizable. Each cell lists every anomaly reported (joined by `+`), `-` for none, or `?`
/// for no verdict: the cases record no real-time intervals (and most have transactions of several
/// operations), so `linearizable` judges only their well-formedness.
#[rustfmt::skip]
const TABLE: [(&str, [&str; 14]); 14] = [
    ("a", ["ThinAirRead"; 14]),
    ("b", ["AbortedRead"; 14]),
    ("c", ["FutureRead"; 14]),
    ("d", ["NotMyOwnWrite"; 14]),
    ("e", ["NotMyLastWrite"; 14]),
    ("f", ["IntermediateRead"; 14]),
    ("g", ["-", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "CyclicCO", "?"]),
    ("h", ["-", "-", "-", "NonMonotonicWrite", "-", "NonMonotonicWrite", "WriteCORead", "WriteCORead", "WriteCORead", "NonMonoReadCO", "-", "NonMonoReadCO", "NonMonoReadCO", "?"]),
    ("i", ["-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "FracturedReadCM", "FracturedReadCM", "?"]),
    ("j", ["NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "NotMyOwnWrite", "-", "NotMyOwnWrite+NonRepeatableRead", "NotMyOwnWrite+NonRepeatableRead", "NotMyOwnWrite"]),
    ("k", ["-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "FracturedReadCO", "FracturedReadCO", "?"]),
    ("l", ["-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "FracturedReadCM", "FracturedReadCM", "?"]),
    ("m", ["-", "-", "-", "NonMonotonicWrite", "-", "NonMonotonicWrite", "WriteCORead", "WriteCORead", "WriteCORead", "-", "-", "-", "COConflictCM", "?"]),
    ("n", ["-", "-", "-", "NonMonotonicWrite", "-", "NonMonotonicWrite", "WriteCORead", "WriteCORead", "WriteCORead", "-", "-", "-", "COConflictCM", "?"]),
];

/// What Plume's checker reports on each case in its RC, RA and TCC modes: the TAP codes of its
/// count map (`+`-joined letters; empty = passes). Recorded by running the checker of Plume's
/// public artifact (built with Maven from `Plume/`): `java -jar Plume-1.0-SNAPSHOT-shaded.jar
/// -i=RC|RA|TCC -t=PLUME tap-X.txt`. In RC mode it stops after its causal phase, so only
/// TAP-a…g (and TAP-h on initial values) fail there; it compares a read with the nearest earlier
/// operation on its key only, so TAP-j's case is NonRepeatableRead to it, which RC allows.
const PLUME: [(&str, [&str; 3]); 14] = [
    ("a", ["a", "a", "a"]),
    ("b", ["b", "b", "b"]),
    ("c", ["c", "c", "c"]),
    ("d", ["d", "d", "d"]),
    ("e", ["e", "e", "e"]),
    ("f", ["f", "f", "f"]),
    ("g", ["g", "g", "g"]),
    ("h", ["", "h", "h"]),
    ("i", ["", "i+l", "i+l"]),
    ("j", ["", "j", "j"]),
    ("k", ["", "k", "k"]),
    ("l", ["", "i+l", "i+l"]),
    ("m", ["", "", "m"]),
    ("n", ["", "", "m+n"]),
];

/// A table cell: every anomaly reported, `+`-joined; `-` for none; `?` for no verdict.
fn cell(report: &causim_checkers::Report) -> String {
    let names: Vec<String> = report.counts.keys().map(|a| a.to_string()).collect();
    match (names.is_empty(), report.complete) {
        (false, _) => names.join("+"),
        (true, true) => "-".to_string(),
        (true, false) => "?".to_string(),
    }
}

fn load(tap: &str) -> causim_checkers::History {
    let path = format!("{}/tests/data/plume-taps/tap-{tap}.txt", env!("CARGO_MANIFEST_DIR"));
    read_history_path(Path::new(&path), None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_tap_case_is_reported_as_the_table_says_at_every_level() {
    let mut failures = Vec::new();
    for (tap, want) in TABLE {
        let h = load(tap);
        for (i, level) in Level::ALL.iter().enumerate() {
            let report = check(&h, *level);
            let got = cell(&report);
            if got != want[i] {
                failures.push(format!("TAP-{tap} @ {level}: expected {}, got {got}", want[i]));
            }
            assert_eq!(report.ok, got == "-", "TAP-{tap} @ {level}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn rc_plume_ra_and_tcc_agree_with_plume_and_rc_differs_only_on_tap_h_and_j() {
    for (tap, plume) in PLUME {
        let h = load(tap);
        let fails = |l: Level| !check(&h, l).ok;
        let [rc, ra, tcc] = plume.map(|codes| !codes.is_empty());
        assert_eq!(fails(Level::RcPlume), rc, "TAP-{tap} at rc-plume");
        assert_eq!(fails(Level::Ra), ra, "TAP-{tap} at ra");
        assert_eq!(fails(Level::Tcc), tcc, "TAP-{tap} at tcc");
        let differs = fails(Level::Rc) != rc;
        assert_eq!(differs, matches!(tap, "h" | "j"), "TAP-{tap}: rc and Plume's RC");
    }
}

/// Every anomaly reported at `rc-plume`, `ra` and `tcc` is one Plume reports too (by TAP code),
/// except the NotMyOwnWrite reported beside TAP-j's NonRepeatableRead, on purpose: the axioms
/// (INT) name that read NotMyOwnWrite. Plume may name more: it reports both triangles of the
/// TAP-i and TAP-l cycles, and TAP-n's stale read also as TAP-m; one report per read here.
#[test]
fn the_anomalies_named_are_among_those_plume_names() {
    for (tap, plume) in PLUME {
        let h = load(tap);
        for (level, codes) in [Level::RcPlume, Level::Ra, Level::Tcc].into_iter().zip(plume) {
            let plume_codes: Vec<String> = codes.split('+').filter(|c| !c.is_empty()).map(|c| format!("TAP-{c}")).collect();
            for v in check(&h, level).violations {
                let code = v.tap.unwrap_or("-");
                let extra = tap == "j" && v.anomaly.name() == "NotMyOwnWrite";
                assert!(plume_codes.iter().any(|c| c == code) || extra, "TAP-{tap} @ {level}: {} ({code}) not in {codes:?}", v.anomaly);
            }
        }
    }
}

#[test]
fn the_dbcop_bincode_cases_are_judged_as_the_text_cases() {
    for (tap, want) in TABLE {
        let path = format!("{}/tests/data/plume-taps/dbcop/tap-{tap}.bincode", env!("CARGO_MANIFEST_DIR"));
        let h = read_history_path(Path::new(&path), None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(h.format(), causim_checkers::InputFormat::DbcopBincode);
        for (i, level) in Level::ALL.iter().enumerate() {
            let got = cell(&check(&h, *level));
            // The binary TAP-b case has no aborted transaction: it reads a value nobody wrote.
            let want = if tap == "b" { "ThinAirRead" } else { want[i] };
            assert_eq!(got, want, "TAP-{tap} (bincode) @ {level}");
        }
    }
}

#[test]
fn the_cobra_log_cases_are_judged_as_the_text_cases() {
    for (tap, want) in TABLE.iter().skip(2) {
        let dir = format!("{}/tests/data/plume-taps/cobra/tap-{tap}", env!("CARGO_MANIFEST_DIR"));
        let h = read_history_path(Path::new(&dir), None).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(h.format(), causim_checkers::InputFormat::Cobra);
        for (i, level) in Level::ALL.iter().enumerate() {
            let got = cell(&check(&h, *level));
            // The Cobra TAP-e log holds no read at all (and no intervals: no verdict at linearizable).
            let want = match (*tap, level) {
                ("e", Level::Linearizable) => "?",
                ("e", _) => "-",
                _ => want[i],
            };
            assert_eq!(got, want, "TAP-{tap} (Cobra) @ {level}");
        }
    }
    // One client's log read on its own, and a truncated one.
    let one = format!("{}/tests/data/plume-taps/cobra/tap-d/T1.log", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&one).unwrap();
    let h = causim_checkers::read_history(&bytes[..], None).unwrap();
    assert_eq!((h.format(), h.txn_count(), h.op_count()), (causim_checkers::InputFormat::Cobra, 1, 2));
    let e = causim_checkers::read_history(&bytes[..bytes.len() - 4], None).unwrap_err();
    assert_eq!(e.problem, "Cobra log, byte 68: the file ends inside a record (is it truncated?)");
}

#[test]
fn the_aborted_transaction_of_tap_b_is_read_as_aborted() {
    let h = load("b");
    assert_eq!(h.txn_count(), 2);
    let records: Vec<_> = h.records().collect();
    assert_eq!(records[0].outcome, causim_checkers::Outcome::Aborted);
    assert_eq!(records[0].ops.len(), 2);
    assert_eq!(records[1].outcome, causim_checkers::Outcome::Ok);
}
