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
    assert!(report.contains("| claim | paper | simulated | reproduced | why |"), "{report}");
    // The paper's number row: Fig. 1's 5.4 % at 2 nodes, beside a simulated percentage.
    let row = report
        .lines()
        .find(|l| l.starts_with("| anomaly rate with 2 nodes | 5.4 % |"))
        .unwrap_or_else(|| panic!("no paper row:\n{report}"));
    assert!(row.matches('%').count() >= 2, "{row}");
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
