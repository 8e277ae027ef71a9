//! `causim reproduce` end to end on one cheap figure: the sweep runs, the figure is drawn as SVG
//! and PNG, and the report puts the paper's number beside the simulated one.

mod common;
use common::*;

#[test]
fn reproduce_quick_draws_fig1_and_reports_the_papers_numbers() {
    let out = temp_dir("reproduce", "fig1");
    let o = causim(&["reproduce", "--quick", "--only", "fig1", "--threads", "2", "--no-progress", "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "reproduce failed:\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("sweep fig1-dax"), "{stdout}");
    for f in
        ["figures/fig1.svg", "figures/fig1.png", "report.md", "sweeps/fig1-dax-quick/results.json", "sweeps/fig1-dax-quick/aggregate.csv"]
    {
        let p = out.join(f);
        let len = std::fs::metadata(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())).len();
        assert!(len > 0, "{} is empty", p.display());
    }
    let png = std::fs::read(out.join("figures/fig1.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "fig1.png is not a PNG");
    let svg = std::fs::read_to_string(out.join("figures/fig1.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("anomaly rate"), "fig1.svg lacks its axis label");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## fig1"), "{report}");
    assert!(report.contains("![fig1](figures/fig1.png)"), "{report}");
    assert!(report.contains("| claim | kind | paper | simulated | pass rule | holds | why |"), "{report}");
    // The paper's number row: Fig. 1's 5.4 % at 2 nodes, beside a simulated percentage, marked
    // calibrated by the replication lag fitted to it, with its pass rule.
    let row = report
        .lines()
        .find(|l| l.starts_with("| anomaly rate with 2 nodes | calibrated: replication lag = log-normal, mean 5 ms"))
        .unwrap_or_else(|| panic!("no paper row:\n{report}"));
    assert!(row.contains("| 5.4 % |") && row.contains("| within ± 10 % of the paper's rate |"), "{row}");
    assert!(row.matches('%').count() >= 3, "{row}");
    // Only the figure asked for.
    assert!(!report.contains("## fig17"), "{report}");
    assert!(!out.join("figures/fig17.png").exists());

    // A second run reuses the sweep's journal and redraws the same report body.
    let o = causim(&["reproduce", "--quick", "--only", "fig1", "--threads", "1", "--no-progress", "--out", out.to_str().unwrap()]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("(    0 run now)"), "{}", String::from_utf8_lossy(&o.stdout));
    let again = std::fs::read_to_string(out.join("report.md")).unwrap();
    let body = |r: &str| r.split("## fig1").nth(1).unwrap_or("").to_string();
    assert_eq!(body(&report), body(&again), "the figure's claims changed on a rerun");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn reproduce_refuses_an_unknown_figure() {
    let o = causim(&["reproduce", "--quick", "--only", "fig99", "--out", temp_dir("reproduce", "unknown").to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown figure"));
}

/// The scorecard: every claim row states a kind and a pass rule, and the headline counts as
/// reproductions only the predicted claims (here fig17's windows), reporting calibrated ones (Fig.
/// 1's and fig17's fitted constants), by-construction ones and the mutant checks apart.
#[test]
fn reproduce_headline_counts_predicted_claims_only() {
    let out = temp_dir("reproduce", "scorecard");
    let o = causim(&[
        "reproduce",
        "--quick",
        "--only",
        "fig1,fig17,delay-sweep",
        "--threads",
        "2",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "reproduce failed:\n{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    // Claim rows: the rows of the tables under a `| claim | kind | ...` header; seven cells.
    let mut rows: Vec<Vec<&str>> = Vec::new();
    let mut in_claims = false;
    for l in report.lines() {
        if l.starts_with("| claim | kind |") {
            in_claims = true;
        } else if !l.starts_with('|') {
            in_claims = false;
        } else if in_claims && !l.starts_with("|---") {
            rows.push(l.trim_matches('|').split(" | ").map(str::trim).collect());
        }
    }
    assert!(rows.len() >= 15, "{report}");
    let mut counts = std::collections::BTreeMap::new();
    for r in &rows {
        assert_eq!(r.len(), 7, "{r:?}");
        let kind = r[1].split(':').next().unwrap();
        assert!(["predicted", "calibrated", "by construction", "check"].contains(&kind), "{r:?}");
        assert!(!r[4].is_empty(), "no pass rule: {r:?}");
        assert!(["yes", "**no**", "n/a"].contains(&r[5]), "{r:?}");
        *counts.entry((kind, r[5])).or_insert(0) += 1;
    }
    let n = |kind: &str, v: &str| counts.get(&(kind, v)).copied().unwrap_or(0);
    // Fig. 1: the 1-node zero by construction, 3 calibrated; fig17: the slope calibrated, two
    // windows predicted; delay-sweep: the correct protocol and 7 mutants, all checks.
    assert_eq!(n("calibrated", "yes") + n("calibrated", "**no**"), 4, "{report}");
    assert_eq!(n("predicted", "yes") + n("predicted", "**no**"), 2, "{report}");
    assert_eq!(n("by construction", "yes"), 1, "{report}");
    assert_eq!(n("check", "yes") + n("check", "**no**"), 8, "{report}");
    let headline = format!(
        "**predicted: {} of 2 reproduced, {} not; calibrated: 4 (not scored as reproductions; {} within their rule); by construction: 1 (1 hold); checks: {} of 8 passed.**",
        n("predicted", "yes"),
        n("predicted", "**no**"),
        n("calibrated", "yes"),
        n("check", "yes"),
    );
    assert!(report.contains(&headline), "expected {headline} in\n{report}");
    assert!(stdout.contains(&format!("claims: {}", headline.trim_matches('*').trim_end_matches('.'))), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}
