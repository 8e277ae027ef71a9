//! Snapshot tests of the explanations: the rendered text of one violation per anomaly (from the
//! litmus catalogue), and the JSON and DOT renderings of CausalMesh's Fig. 6. Wording changes
//! show up here as a diff; accept them with `CAUSIM_BLESS=1 cargo test --release -p causim-checkers --test explain`.

mod common;

use causim_checkers::{Level, check, read_history};
use common::litmus_table::{COLUMNS, catalogue};
use common::litmus_timed;

#[test]
fn one_explanation_per_anomaly() {
    let mut out = String::new();
    for lit in catalogue() {
        let h = common::history(lit.history);
        let mut seen: Vec<&str> = Vec::new();
        for (i, want) in lit.expect.iter().enumerate() {
            if *want == "-" || seen.contains(want) {
                continue;
            }
            seen.push(want);
            let report = check(&h, COLUMNS[i]);
            out.push_str(&format!("=== {} — {} at {}\n", lit.name, want, COLUMNS[i]));
            for line in lit.history.lines() {
                out.push_str(&format!("    | {line}\n"));
            }
            // The first violation of each anomaly the cell names.
            for (k, name) in want.split(" + ").enumerate() {
                let v = report.violations.iter().find(|v| v.anomaly.name() == name).expect("the cell's anomaly is reported");
                out.push_str(&v.render_text(k + 1));
            }
            out.push('\n');
        }
    }
    for lit in litmus_timed::catalogue() {
        let h = common::history(lit.history);
        for (i, want) in lit.expect.iter().enumerate() {
            let level = litmus_timed::COLUMNS[i];
            if level != Level::Linearizable || *want == "-" || *want == "?" {
                continue;
            }
            let report = check(&h, level);
            out.push_str(&format!("=== {} — {} at {}\n", lit.name, want, level));
            for line in lit.history.lines() {
                out.push_str(&format!("    | {line}\n"));
            }
            for (k, name) in want.split(" + ").enumerate() {
                let v = report.violations.iter().find(|v| v.anomaly.name() == name).expect("the cell's anomaly is reported");
                out.push_str(&v.render_text(k + 1));
            }
            out.push('\n');
        }
    }
    common::snapshot("explanations", &out);
}

const FIG6: &str = r#"{"format":"causim-history/1","scenario":"scenarios/causalmesh/fig6.json","seed":1,"protocol":"causalmesh"}
{"id":0,"session":"c1","fn":0,"kind":"write","node":"S0","invoke_ns":0,"complete_ns":20000,"outcome":"ok","ops":[{"f":"w","key":"x","value":1,"version":[1,0]}]}
{"id":1,"session":"c1","fn":1,"kind":"write","node":"S1","invoke_ns":120000,"complete_ns":140000,"outcome":"ok","ops":[{"f":"w","key":"y","value":1,"version":[0,1]}]}
{"id":2,"session":"c2","fn":0,"kind":"read","node":"S1","invoke_ns":900000,"complete_ns":910000,"outcome":"ok","ops":[{"f":"r","key":"y","value":1,"version":[0,1]}]}
{"id":3,"session":"c2","fn":0,"kind":"read","node":"S1","invoke_ns":910000,"complete_ns":920000,"outcome":"ok","ops":[{"f":"r","key":"x","value":null}]}
"#;

#[test]
fn fig6_report_text_json_and_dot() {
    let h = read_history(FIG6.as_bytes(), None).unwrap();
    let report = check(&h, Level::Ccv).with_source("fig6.jsonl");
    common::snapshot("fig6_ccv_text", &report.render_text());
    common::snapshot("fig6_ccv_json", &report.to_json());
    common::snapshot("fig6_ccv_dot", &report.to_dot());
    let ok = check(&h, Level::WellFormed).with_source("fig6.jsonl");
    common::snapshot("fig6_well_formed_text", &ok.render_text());
}
