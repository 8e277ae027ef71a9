//! Every abort a run had, in one count with its parts (issue 18).
//!
//! A workflow's `abort_rate` counts aborted workflow attempts only, so a protocol whose read
//! transactions abort and are retried by the client library (CausalMesh's Fig. 8) looked
//! abort-free. Here an abort is any of: a read transaction that aborted (each retry counts), a
//! workflow attempt that aborted and was retried, or a workflow that used up its attempts. A
//! read-transaction abort that also ends its workflow's attempt is counted in both parts: the
//! function saw its transaction abort and the workflow lost its attempt.

use causim_sim::metrics::Summary;

/// A run's aborts by part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aborts {
    /// Read transactions that aborted (the client retries them, then aborts the workflow).
    pub read_txn: u64,
    /// Workflow attempts that aborted and were retried.
    pub retried: u64,
    /// Workflows that used up their attempts.
    pub gave_up: u64,
}

impl Aborts {
    pub fn of(s: &Summary) -> Aborts {
        let w = &s.workflows;
        Aborts {
            read_txn: s.transactions.get("read_txn:aborted").copied().unwrap_or(0),
            retried: w.aborted_attempts.saturating_sub(w.failed),
            gave_up: w.failed,
        }
    }

    pub fn total(&self) -> u64 {
        self.read_txn + self.retried + self.gave_up
    }

    /// Aborts of every part per 100 workflows started.
    pub fn per_100_workflows(&self, started: u64) -> f64 {
        if started == 0 { 0.0 } else { self.total() as f64 * 100.0 / started as f64 }
    }

    /// `12 (read transactions 5, attempts retried 6, gave up 1)`.
    pub fn describe(&self) -> String {
        format!("{} (read transactions {}, attempts retried {}, gave up {})", self.total(), self.read_txn, self.retried, self.gave_up)
    }

    /// The sweep metrics: the total, its rate and each part.
    pub fn metrics(&self, started: u64) -> [(&'static str, f64); 5] {
        [
            ("aborts_total", self.total() as f64),
            ("aborts_per_100_workflows", self.per_100_workflows(started)),
            ("aborts_read_txn", self.read_txn as f64),
            ("aborts_retried", self.retried as f64),
            ("aborts_gave_up", self.gave_up as f64),
        ]
    }
}
