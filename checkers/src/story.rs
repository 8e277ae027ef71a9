//! A violation of a library level (`queue`, `exactly-once`) told from the transactions involved
//! and the sentences that explain it, in the shared-log level's style.

use crate::anomaly::Anomaly;
use crate::history::History;
use crate::level::Level;
use crate::report::{EdgeKind, Explanation, OpRef, TxnRef, Violation, WitnessEdge};

/// A finding before it is rendered.
pub(crate) struct Story {
    pub anomaly: Anomaly,
    pub level: Level,
    /// The book (key) in question.
    pub book: u32,
    /// The transactions, labelled T1, T2, … in this order, each with what it did.
    pub named: Vec<(u32, String)>,
    /// One sentence, about the last transaction named.
    pub sentence: String,
    pub steps: Vec<String>,
    pub contradiction: String,
    /// Witness edges between transactions, with the reason.
    pub edges: Vec<(u32, u32, EdgeKind, &'static str)>,
    pub read: Option<OpRef>,
}

/// Transaction `t` as a violation names it (the log levels' style).
pub(crate) fn txn_ref(h: &History, t: u32, label: String, summary: String) -> TxnRef {
    let txn = &h.txns[t as usize];
    TxnRef {
        label,
        id: txn.id,
        session: h.session_name(txn.session).to_string(),
        line: (txn.line > 0).then_some(u64::from(txn.line)),
        node: h.node_name(txn.node).map(str::to_string),
        outcome: txn.outcome,
        summary,
    }
}

/// The explanation's "Let" line for a transaction: `T1 = session what at node (id, line)`.
pub(crate) fn let_line(r: &TxnRef) -> String {
    let at = r.node.as_ref().map(|n| format!(" at {n}")).unwrap_or_default();
    let line = r.line.map(|l| format!(", line {l}")).unwrap_or_default();
    format!("{} = {} {}{at} (id {}{line})", r.label, r.session, r.summary, r.id)
}

pub(crate) fn render(h: &History, s: Story) -> Violation {
    let key = h.key(s.book).clone();
    let transactions: Vec<TxnRef> =
        s.named.iter().enumerate().map(|(i, (t, summary))| txn_ref(h, *t, format!("T{}", i + 1), summary.clone())).collect();
    let lets = transactions.iter().map(let_line).collect();
    let id = |t: u32| h.txns[t as usize].id;
    let witness = s
        .edges
        .into_iter()
        .map(|(a, b, kind, because)| WitnessEdge {
            from: id(a),
            to: id(b),
            kind,
            key: Some(key.clone()),
            from_op: None,
            to_op: None,
            via: None,
            because: because.to_string(),
        })
        .collect();
    let aliases = s.anomaly.aliases(false);
    Violation {
        anomaly: s.anomaly,
        popl17: aliases.popl17,
        tap: aliases.tap,
        tap_name: aliases.tap_name,
        elle: aliases.elle,
        level: s.level,
        forbidden_by: Level::LOG.iter().copied().filter(|l| l.forbids(s.anomaly)).collect(),
        meaning: s.anomaly.meaning(),
        transactions,
        key: Some(key),
        read: s.read,
        witness,
        cycle: false,
        scc: Vec::new(),
        window: Vec::new(),
        sentence: format!("T{}: {}", s.named.len(), s.sentence),
        explanation: Explanation { lets, steps: s.steps, contradiction: s.contradiction },
    }
}
