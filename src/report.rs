//! The readable summary `causim run` prints.

use causim_sim::metrics::{Stats, Summary};
use causim_sim::time::format_duration;
use std::fmt::Write as _;

fn latency_line(label: &str, s: &Stats) -> String {
    format!(
        "  {label:<16}p50 {:>9}  p90 {:>9}  p99 {:>9}  p99.9 {:>9}  max {:>9}  (n={})\n",
        format_duration(s.p50),
        format_duration(s.p90),
        format_duration(s.p99),
        format_duration(s.p999),
        format_duration(s.max),
        s.count
    )
}

fn bytes(n: u64) -> String {
    match n {
        n if n < 10_000 => format!("{n} B"),
        n if n < 10_000_000 => format!("{:.1} KB", n as f64 / 1e3),
        n => format!("{:.1} MB", n as f64 / 1e6),
    }
}

/// A table of the run's figures, one line per topic.
pub fn render(s: &Summary) -> String {
    let mut out = String::new();
    let w = &s.workflows;
    let _ = writeln!(out, "  {:<16}{} at {} after {} events", "stopped by", s.stopped_by, format_duration(s.sim_time_ns), s.events);
    let _ = writeln!(
        out,
        "  {:<16}{} started, {} completed, {} aborted attempts, {} failed, {} unfinished (abort rate {:.2}%)",
        "workflows",
        w.started,
        w.completed,
        w.aborted_attempts,
        w.failed,
        w.unfinished,
        100.0 * s.abort_rate
    );
    let aborts = crate::aborts::Aborts::of(s);
    let _ = writeln!(out, "  {:<16}{}, {:.2} per 100 workflows", "aborts", aborts.describe(), aborts.per_100_workflows(w.started));
    let _ = writeln!(out, "  {:<16}{}", "liveness", s.liveness.describe());
    let _ = writeln!(out, "  {:<16}{:.1} workflows/s over {}", "throughput", s.throughput_per_s, format_duration(s.measured_ns));
    out.push_str(&latency_line("workflow", &s.workflow_latency_ns));
    for (kind, stats) in &s.op_latency_ns {
        out.push_str(&latency_line(kind, stats));
    }
    let txns: Vec<String> = s.transactions.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(out, "  {:<16}{}", "transactions", txns.join(", "));
    let kinds: Vec<String> = s.messages.iter().map(|(k, c)| format!("{k} {}", c.count)).collect();
    let _ = writeln!(
        out,
        "  {:<16}{} ({}), {} dropped: {}",
        "messages",
        s.messages_total.count,
        bytes(s.messages_total.bytes),
        s.messages_dropped,
        kinds.join(", ")
    );
    let nodes: Vec<String> =
        s.nodes.iter().map(|n| format!("{} {:.1}% (queue ≤ {})", n.name, 100.0 * n.utilisation, n.queue_depth_max)).collect();
    let _ = writeln!(out, "  {:<16}{}", "utilisation", nodes.join(", "));
    for (name, stats) in &s.observations {
        let _ = writeln!(
            out,
            "  {:<16}{name}: p50 {}  p99 {}  max {}  mean {:.1}  (n={})",
            "observed", stats.p50, stats.p99, stats.max, stats.mean, stats.count
        );
    }
    if !s.counters.is_empty() {
        let counts: Vec<String> = s.counters.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(out, "  {:<16}{}", "counted", counts.join(", "));
    }
    for (name, v) in &s.protocol_metrics {
        let _ = writeln!(out, "  {:<16}{name}: {v}", "final");
    }
    let _ = writeln!(out, "  {:<16}{} transactions, hash {}", "history", s.history_records, s.history_hash);
    if let Some(h) = &s.trace_hash {
        let _ = writeln!(out, "  {:<16}hash {h}", "trace");
    }
    if let Some(v) = &s.invariant_violation {
        let _ = writeln!(out, "  {:<16}{v}", "INVARIANT");
    }
    out
}

/// The history check: its verdict, anomaly counts, and the first violations explained.
pub fn render_check(c: &causim_checkers::Report) -> String {
    let mut out = String::new();
    if c.ok {
        let _ = writeln!(out, "  {:<16}{}: no anomaly in {} transactions", "check", c.level.name(), c.history.transactions);
        return out;
    }
    let counts: Vec<String> = c.counts.iter().map(|(a, n)| format!("{} ×{n}", a.name())).collect();
    let _ = writeln!(out, "  {:<16}{}: {} violation(s): {}", "check", c.level.name(), c.violation_count, counts.join(", "));
    for (n, v) in c.violations.iter().take(3).enumerate() {
        out.push('\n');
        for line in v.render_text(n + 1).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    if c.violations.len() > 3 {
        let _ = writeln!(out, "\n  ... {} more in check.txt", c.violations.len() - 3);
    }
    out
}
