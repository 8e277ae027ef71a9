//! The litmus catalogue: one small history per named anomaly (and the classic allowed
//! histories), each checked at every level. The table says, per level, which anomalies must be
//! reported (` + ` between several) — or `-` for silence. Every row is also checked against the
//! oracle's verdicts.

mod common;

use causim_checkers::{Anomaly, Level, check};
use common::litmus_table::{COLUMNS, catalogue};
use common::litmus_timed;
use common::oracle::Oracle;

#[test]
fn every_litmus_history_is_judged_as_the_table_says_at_every_level() {
    let mut failures = Vec::new();
    for lit in catalogue() {
        let records = common::records(lit.history);
        let h = common::history(lit.history);
        let oracle = Oracle::new(&records, &[]);
        for (i, level) in COLUMNS.iter().enumerate() {
            let report = check(&h, *level);
            // Every anomaly reported, in the order of `Anomaly::ALL`.
            let names: Vec<&str> = report.counts.keys().map(|a| a.name()).collect();
            let got = if names.is_empty() { "-".to_string() } else { names.join(" + ") };
            let want = lit.expect[i];
            if got != want {
                failures.push(format!("{} @ {}: expected {want}, got {got}", lit.name, level));
            }
            if report.ok != oracle.satisfies(*level) {
                failures.push(format!("{} @ {}: checker says ok={}, oracle says {}", lit.name, level, report.ok, oracle.satisfies(*level)));
            }
            for name in want.split(" + ").filter(|n| *n != "-") {
                let a = Anomaly::parse(name).expect("table names are anomalies");
                if !level.forbids(a) {
                    failures.push(format!("{} @ {}: {name} is reported but the level does not forbid it", lit.name, level));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_timed_litmus_history_is_judged_as_the_table_says() {
    let mut failures = Vec::new();
    for lit in litmus_timed::catalogue() {
        let records = common::records(lit.history);
        let h = common::history(lit.history);
        let oracle = Oracle::new(&records, &[]);
        for (i, level) in litmus_timed::COLUMNS.iter().enumerate() {
            let report = check(&h, *level);
            // Every anomaly reported, as in the untimed catalogue; `?` for no verdict.
            let names: Vec<&str> = report.counts.keys().map(|a| a.name()).collect();
            let got = match (names.is_empty(), report.complete) {
                (false, _) => names.join(" + "),
                (true, false) => "?".to_string(),
                (true, true) => "-".to_string(),
            };
            if got != lit.expect[i] {
                failures.push(format!("{} @ {level}: expected {}, got {got}", lit.name, lit.expect[i]));
            }
            if report.ok != oracle.satisfies(*level) {
                failures.push(format!("{} @ {level}: checker says ok={}, oracle disagrees", lit.name, report.ok));
            }
            if got == "?" && report.notes.is_empty() {
                failures.push(format!("{} @ {level}: no verdict, and no note says why", lit.name));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_named_anomaly_has_a_litmus_history() {
    let timed = litmus_timed::catalogue();
    let names: Vec<&str> = catalogue()
        .iter()
        .flat_map(|l| l.expect.to_vec())
        .chain(timed.iter().flat_map(|l| l.expect.to_vec()))
        .flat_map(|e| e.split(" + "))
        .collect();
    for a in Anomaly::ALL {
        if a == Anomaly::IncompatibleOrder {
            continue; // list-append histories only: tests/jepsen.rs
        }
        if a == Anomaly::SiblingWriteRead {
            continue; // multi-function transactions only: tests/partial_order.rs
        }
        if a == Anomaly::NotCacheFree {
            continue; // call-tree histories only: src/cache_free.rs and scenarios/mucache
        }
        if Level::Si.forbids(a) && !Level::Tcc.forbids(a) {
            continue; // snapshot isolation's own: tests/si.rs
        }
        if Level::StrictSerializable.forbids(a) && !Level::Tcc.forbids(a) {
            continue; // strict serializability's own: tests/strict_serializable.rs
        }
        assert!(names.contains(&a.name()), "no litmus history exhibits {a}");
    }
}

#[test]
fn stale_read_after_real_time_order_is_allowed() {
    // c1's write completes (t=10) before c2's read starts (t=20); causal levels allow the
    // stale read, since the sessions are unrelated.
    let text = r#"{"format":"causim-history/1"}
{"id":0,"session":"c1","invoke_ns":0,"complete_ns":10,"ops":[{"f":"w","key":"x","value":1}]}
{"id":1,"session":"c2","invoke_ns":20,"complete_ns":30,"ops":[{"f":"r","key":"x","value":null}]}
"#;
    let h = causim_checkers::read_history(text.as_bytes(), None).unwrap();
    for level in Level::UNTIMED {
        assert!(check(&h, level).ok, "{level} must allow a stale read across sessions");
    }
    // Only linearizability, which judges real time, forbids it.
    let report = check(&h, Level::Linearizable);
    assert_eq!(report.violations[0].anomaly, Anomaly::StaleRead);
}

/// The README shows the catalogue as a table; keep it current (regenerate with
/// `CAUSIM_BLESS=1 cargo test --release -p causim-checkers --test litmus`).
#[test]
fn readme_litmus_table_is_current() {
    let mut table = String::from("| history | ");
    table.push_str(&COLUMNS.iter().map(|l| l.name()).collect::<Vec<_>>().join(" | "));
    table.push_str(" |\n|---|");
    table.push_str(&":-:|".repeat(COLUMNS.len()));
    table.push('\n');
    for lit in catalogue() {
        let history = lit.history.lines().map(str::trim).collect::<Vec<_>>().join("; ");
        let cells: Vec<&str> = lit.expect.iter().map(|e| if *e == "-" { "·" } else { e }).collect();
        table.push_str(&format!("| {} <br>`{}` | {} |\n", lit.name, history, cells.join(" | ")));
    }
    common::readme_section("litmus-table", &table);
}

#[test]
fn readme_anomaly_tables_are_current() {
    common::readme_section("anomaly-table", &causim_checkers::doc_tables::anomaly_table());
    common::readme_section("forbids-matrix", &causim_checkers::doc_tables::forbids_matrix());
}

/// The README's real-time catalogue (regenerate with `CAUSIM_BLESS=1`).
#[test]
fn readme_timed_litmus_table_is_current() {
    let mut table = String::from("| history |");
    for l in litmus_timed::COLUMNS {
        table.push_str(&format!(" {} |", l.name()));
    }
    table.push_str("\n|---|");
    table.push_str(&":-:|".repeat(litmus_timed::COLUMNS.len()));
    table.push('\n');
    for lit in litmus_timed::catalogue() {
        let history = lit.history.lines().map(str::trim).collect::<Vec<_>>().join("; ");
        let cells: Vec<&str> = lit.expect.iter().map(|e| if *e == "-" { "·" } else { e }).collect();
        table.push_str(&format!("| {} <br>`{}` | {} |\n", lit.name, history, cells.join(" | ")));
    }
    common::readme_section("litmus-timed", &table);
}
