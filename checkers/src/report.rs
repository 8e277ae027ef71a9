//! The report: verdict, violations with their names, witnesses and explanations, and the three
//! renderings (text for people, JSON for machines, Graphviz DOT for drawing witnesses).

use crate::anomaly::Anomaly;
use crate::history::{InputFormat, Key, Outcome, Value};
use crate::level::Level;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The result of checking one history at one level.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub level: Level,
    pub level_title: &'static str,
    /// The history satisfies the level (no violation found, and the check was complete).
    pub ok: bool,
    /// Every check at this level ran to the end (false only if a work budget ran out).
    pub complete: bool,
    pub history: HistorySummary,
    /// Number of violations found (`violations` lists at most `CheckOptions::violations_max`).
    pub violation_count: u64,
    /// Violations per anomaly name.
    pub counts: BTreeMap<Anomaly, u64>,
    pub violations: Vec<Violation>,
    /// Remarks: skipped checks, budgets, what a cycle prevented.
    pub notes: Vec<String>,
    /// Where the history came from (for the text header), if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HistorySummary {
    pub format: InputFormat,
    pub transactions: usize,
    pub operations: usize,
    pub sessions: usize,
    pub keys: usize,
}

/// One violation.
#[derive(Clone, Debug, Serialize)]
pub struct Violation {
    /// Our name.
    pub anomaly: Anomaly,
    /// The POPL'17 bad pattern it corresponds to.
    pub popl17: Option<&'static str>,
    /// The Plume TAP code (`TAP-a` … `TAP-n`) and name.
    pub tap: Option<&'static str>,
    pub tap_name: Option<&'static str>,
    /// The nearest Elle / Adya name.
    pub elle: Option<&'static str>,
    /// The level checked, which this violation breaks.
    pub level: Level,
    /// Every level that forbids this anomaly.
    pub forbidden_by: Vec<Level>,
    pub meaning: &'static str,
    /// The transactions involved, labelled T1, T2, … in the order the explanation uses.
    pub transactions: Vec<TxnRef>,
    pub key: Option<Key>,
    /// The read at fault, if any.
    pub read: Option<OpRef>,
    /// The witness: edges between transactions, each with the data that justifies it.
    pub witness: Vec<WitnessEdge>,
    /// Whether the witness is a cycle.
    pub cycle: bool,
    /// For cycles, the ids of the transactions of the strongly connected component.
    pub scc: Vec<u64>,
    /// For `linearizable`, the ids of the smallest failing window of the key's operations
    /// found (by invocation time): without any one of them, the rest is linearizable.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub window: Vec<u64>,
    /// One sentence a person can follow.
    pub sentence: String,
    /// An Elle-style proof: Let …, Then …, a contradiction.
    pub explanation: Explanation,
}

#[derive(Clone, Debug, Serialize)]
pub struct TxnRef {
    pub label: String,
    pub id: u64,
    pub session: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub outcome: Outcome,
    /// The operations that matter here, e.g. `writes x=1, then reads y=2`.
    pub summary: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct OpRef {
    /// Transaction id.
    pub txn: u64,
    /// Index of the operation in its transaction.
    pub index: u32,
    pub f: crate::history::OpKind,
    pub key: Key,
    pub value: Value,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum EdgeKind {
    /// Program order: same session (or an `after` link).
    SessionOrder,
    /// The target read a value the source wrote.
    ReadsFrom,
    /// A causal path, summarized.
    CausalOrder,
    /// The source's write of the key must be ordered before the target's.
    WriteOrder,
    /// The source read a value the target's write overwrote (Adya's rw edge).
    AntiDependency,
    /// Real-time order: the source completed before the target was invoked (`linearizable`).
    Realtime,
}

/// One edge of a witness, between transactions `from` and `to` (ids), with the operations
/// that justify it: for SessionOrder the earlier and the later operation, for ReadsFrom the
/// write and the read, for WriteOrder the two writes (and `via`, the read that forces their
/// order), for AntiDependency the read and the write that overwrote what it read, for Realtime
/// the operation that completed first and the one invoked after.
#[derive(Clone, Debug, Serialize)]
pub struct WitnessEdge {
    pub from: u64,
    pub to: u64,
    pub kind: EdgeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<Key>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_op: Option<OpRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_op: Option<OpRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<OpRef>,
    pub because: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub lets: Vec<String>,
    pub steps: Vec<String>,
    pub contradiction: String,
}

impl Report {
    /// The readable report.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let src = self.source.as_deref().map(|s| format!("{s}: ")).unwrap_or_default();
        let hs = &self.history;
        let _ = writeln!(
            out,
            "{src}{} transactions, {} operations, {} sessions, {} keys ({} format)",
            hs.transactions,
            hs.operations,
            hs.sessions,
            hs.keys,
            hs.format.name()
        );
        let verdict = if self.ok {
            format!("OK: the history satisfies {} ({}).", self.level.name(), self.level_title)
        } else if self.violation_count == 0 {
            format!("UNKNOWN: no violation of {} ({}) found, but the check is incomplete.", self.level.name(), self.level_title)
        } else {
            let n = self.violation_count;
            format!("FAIL: {n} violation{} of {} ({}).", if n == 1 { "" } else { "s" }, self.level.name(), self.level_title)
        };
        let _ = writeln!(out, "{verdict}");
        if !self.counts.is_empty() && (self.counts.len() > 1 || self.violation_count as usize > self.violations.len()) {
            let parts: Vec<String> = self.counts.iter().map(|(a, n)| format!("{a} ×{n}")).collect();
            let _ = writeln!(out, "By anomaly: {}.", parts.join(", "));
        }
        for note in &self.notes {
            let _ = writeln!(out, "Note: {note}");
        }
        for (i, v) in self.violations.iter().enumerate() {
            out.push('\n');
            out.push_str(&v.render_text(i + 1));
        }
        if (self.violations.len() as u64) < self.violation_count {
            let _ = writeln!(out, "\n… and {} more (raise the limit to list them).", self.violation_count - self.violations.len() as u64);
        }
        out
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("reports serialize")
    }

    /// The witnesses as one Graphviz digraph, one cluster per violation.
    pub fn to_dot(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "digraph causim {{");
        let _ = writeln!(out, "  rankdir=LR;");
        let _ = writeln!(out, "  node [shape=box, fontname=\"monospace\", fontsize=10];");
        let _ = writeln!(out, "  edge [fontname=\"monospace\", fontsize=9];");
        let _ = writeln!(
            out,
            "  label={};",
            dot_str(&format!("{} at level {}", if self.ok { "no violation" } else { "violations" }, self.level))
        );
        for (i, v) in self.violations.iter().enumerate() {
            let n = i + 1;
            let _ = writeln!(out, "  subgraph cluster_{n} {{");
            let _ = writeln!(out, "    label={};", dot_str(&format!("#{n} {} ({})", v.anomaly, v.level)));
            for t in &v.transactions {
                let label = format!(
                    "{} (id {})\\n{}: {}{}",
                    t.label,
                    t.id,
                    t.session,
                    t.summary,
                    t.node.as_ref().map(|n| format!("\\n@{n}")).unwrap_or_default()
                );
                let _ = writeln!(out, "    v{n}_{} [label={}];", t.id, dot_str(&label).replace("\\\\n", "\\n"));
            }
            for e in &v.witness {
                let (name, style) = match e.kind {
                    EdgeKind::SessionOrder => ("so", "color=gray40"),
                    EdgeKind::ReadsFrom => ("wr", "color=blue"),
                    EdgeKind::CausalOrder => ("co", "color=gray40, style=dotted"),
                    EdgeKind::WriteOrder => ("ww", "color=darkorange"),
                    EdgeKind::AntiDependency => ("rw", "color=red, style=dashed"),
                    EdgeKind::Realtime => ("rt", "color=purple"),
                };
                let label = match &e.key {
                    Some(k) => format!("{name} {k}"),
                    None => name.to_string(),
                };
                let _ = writeln!(out, "    v{n}_{} -> v{n}_{} [label={}, {style}];", e.from, e.to, dot_str(&label));
                // A forced write order: show the read that forces it, reading the second
                // write while the first is visible to it.
                if let Some(via) = &e.via {
                    let _ = writeln!(
                        out,
                        "    v{n}_{} -> v{n}_{} [label={}, color=blue, style=dotted];",
                        e.to,
                        via.txn,
                        dot_str(&format!("wr {}", via.key))
                    );
                    let _ = writeln!(out, "    v{n}_{} -> v{n}_{} [label=\"visible\", color=gray60, style=dotted];", e.from, via.txn);
                }
            }
            let _ = writeln!(out, "  }}");
        }
        let _ = writeln!(out, "}}");
        out
    }
}

fn dot_str(s: &str) -> String {
    crate::history::json_quote(s)
}

impl Violation {
    /// The text block for one violation, numbered `n`.
    pub fn render_text(&self, n: usize) -> String {
        let mut out = String::new();
        let mut names = Vec::new();
        if let Some(p) = self.popl17 {
            names.push(format!("POPL'17 {p}"));
        }
        if let (Some(code), Some(name)) = (self.tap, self.tap_name) {
            names.push(format!("Plume {code} {name}"));
        }
        if let Some(e) = self.elle {
            names.push(format!("Elle {e}"));
        }
        if names.is_empty() {
            let _ = writeln!(out, "[{n}] {}", self.anomaly);
        } else {
            let _ = writeln!(out, "[{n}] {} ({})", self.anomaly, names.join("; "));
        }
        let ids: Vec<String> = self.transactions.iter().map(|t| t.id.to_string()).collect();
        let key = self.key.as_ref().map(|k| format!("; key {k}")).unwrap_or_default();
        let _ = writeln!(out, "    breaks {}; transactions {}{key}", self.level, ids.join(", "));
        let _ = writeln!(out, "    {}", self.sentence);
        let _ = writeln!(out, "    Let:");
        for l in &self.explanation.lets {
            let _ = writeln!(out, "      {l}");
        }
        let _ = writeln!(out, "    Then:");
        for s in &self.explanation.steps {
            let _ = writeln!(out, "      - {s}");
        }
        let _ = writeln!(out, "      - {}", self.explanation.contradiction);
        if self.window.len() > self.transactions.len() {
            let shown: Vec<String> = self.window.iter().take(20).map(u64::to_string).collect();
            let more = if self.window.len() > 20 { format!(", … ({} in all)", self.window.len()) } else { String::new() };
            let _ = writeln!(
                out,
                "    The smallest failing window found has {} operations: transactions {}{more}.",
                self.window.len(),
                shown.join(", ")
            );
        }
        if self.cycle && self.scc.len() > self.transactions.len() {
            let shown: Vec<String> = self.scc.iter().take(20).map(u64::to_string).collect();
            let more = if self.scc.len() > 20 { format!(", … ({} in all)", self.scc.len()) } else { String::new() };
            let _ = writeln!(
                out,
                "    The cycle lies in a strongly connected component of {} transactions: {}{more}.",
                self.scc.len(),
                shown.join(", ")
            );
        }
        out
    }
}
