//! The anomaly and level tables of the crate's README, generated from the code so that the
//! documentation cannot drift (a test compares them with README.md).

use crate::anomaly::Anomaly;
use crate::level::Level;

/// Markdown: one row per anomaly with its names elsewhere, its meaning and the levels that
/// forbid it.
pub fn anomaly_table() -> String {
    let mut out =
        String::from("| anomaly | POPL'17 | Plume TAP | Elle / Adya (nearest) | meaning | forbidden by |\n|---|---|---|---|---|---|\n");
    for a in Anomaly::ALL {
        let al = a.aliases(false);
        let tap = match (al.tap, al.tap_name) {
            (Some(c), Some(n)) => format!("{c} {n}"),
            _ => "—".into(),
        };
        let levels: Vec<&str> = Level::every().filter(|l| l.forbids(a)).map(|l| l.name()).collect();
        let missing: Vec<&str> = Level::every().filter(|l| !l.forbids(a)).map(|l| l.name()).collect();
        let levels = if missing.is_empty() {
            "all levels".to_string()
        } else if missing.len() <= 2 && levels.len() > 2 {
            format!("all but {}", missing.join(" and "))
        } else {
            levels.join(", ")
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            a.name(),
            al.popl17.unwrap_or("—"),
            tap,
            al.elle.unwrap_or("—"),
            a.meaning(),
            levels
        ));
    }
    out
}

/// Markdown: the anomaly × level matrix.
pub fn forbids_matrix() -> String {
    let columns: Vec<Level> = Level::ALL.into_iter().chain(Level::SNAPSHOT).chain(Level::STRICT).collect();
    let mut out = String::from("| anomaly |");
    for l in &columns {
        out.push_str(&format!(" {} |", l.name()));
    }
    out.push_str("\n|---|");
    for _ in &columns {
        out.push_str(":-:|");
    }
    out.push('\n');
    // The call-tree levels (cache-free) have no column; their anomalies no row.
    for a in Anomaly::ALL.into_iter().filter(|a| columns.iter().any(|l| l.forbids(*a))) {
        out.push_str(&format!("| {} |", a.name()));
        for &l in &columns {
            out.push_str(if l.forbids(a) { " ✗ |" } else { " · |" });
        }
        out.push('\n');
    }
    out
}

/// Markdown: the shared-log anomalies (level `shared-log`), one row each with its meaning.
pub fn log_anomaly_table() -> String {
    let mut out = String::from("| anomaly | Elle / Adya (nearest) | meaning |\n|---|---|---|\n");
    for a in Anomaly::LOG {
        out.push_str(&format!("| {} | {} | {} |\n", a.name(), a.aliases(false).elle.unwrap_or("—"), a.meaning()));
    }
    out
}
