//! Metrics: latency histograms, counters, and the run summary.
//!
//! Histograms are log-linear (128 sub-buckets per power of two, < 0.8 % relative error) so
//! memory stays bounded however long a run is, and percentiles are deterministic.

use crate::time::Time;
use serde::Serialize;
use std::collections::BTreeMap;

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS; // 128
const EXACT: u64 = 2 * SUB; // values below 256 have their own bucket
const BUCKETS: usize = (EXACT + (63 - SUB_BITS as u64) * SUB) as usize;

/// A histogram of non-negative integers (nanoseconds, bytes).
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram { counts: Vec::new(), count: 0, sum: 0, min: u64::MAX, max: 0 }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as u64; // ≥ 8
    let m = v >> (e - SUB_BITS as u64); // in [128, 256)
    (EXACT + (e - (SUB_BITS as u64 + 1)) * SUB + (m - SUB)) as usize
}

/// The smallest value in bucket `b` and the bucket's width.
fn bucket_range(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < EXACT {
        return (b, 1);
    }
    let e = (b - EXACT) / SUB + SUB_BITS as u64 + 1;
    let m = (b - EXACT) % SUB + SUB;
    let shift = e - SUB_BITS as u64;
    (m << shift, 1 << shift)
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        self.counts[bucket_of(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 { 0.0 } else { self.sum as f64 / self.count as f64 }
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at percentile `p` (0–100): the middle of the bucket holding the sample of that
    /// rank, clamped to the observed range. 0 when empty.
    pub fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.count as f64).ceil().clamp(1.0, self.count as f64) as u64;
        if rank == self.count {
            return self.max;
        }
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, width) = bucket_range(b);
                return (lo + width / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.count == 0 {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; BUCKETS];
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn stats(&self) -> Stats {
        Stats {
            count: self.count,
            mean: self.mean(),
            p50: self.percentile(50.0),
            p90: self.percentile(90.0),
            p99: self.percentile(99.0),
            p999: self.percentile(99.9),
            max: if self.count == 0 { 0 } else { self.max },
        }
    }
}

/// Summary statistics of a histogram.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

/// Messages of one kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MessageCount {
    pub count: u64,
    pub bytes: u64,
}

/// Per-node figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeSummary {
    pub name: String,
    pub cores: u32,
    pub inputs: u64,
    /// Busy core time / (cores × measured time).
    pub utilisation: f64,
    pub queue_depth_max: u64,
    /// It shares its machine with serverless workers (a cache next to its functions).
    pub colocated_with_workers: bool,
}

/// Workflow counts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WorkflowCounts {
    /// First attempts started.
    pub started: u64,
    pub completed: u64,
    /// Attempts aborted (each retry counts).
    pub aborted_attempts: u64,
    /// Workflows that used up their attempts.
    pub failed: u64,
    /// Still running when the run stopped.
    pub unfinished: u64,
}

/// Liveness, reported apart from safety: did every workflow that started also end?
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Liveness {
    /// True when no workflow gave up and none was still running when the run stopped.
    pub live: bool,
    /// Workflows that used up their attempts, by the reason of their last abort (a read
    /// transaction that never committed, a join that never validated, ...).
    pub gave_up: BTreeMap<String, u64>,
    /// Workflows still running when the run stopped, and their live function instances.
    pub unfinished_workflows: u64,
    pub unfinished_functions: u64,
}

impl Liveness {
    pub fn new(gave_up: BTreeMap<String, u64>, unfinished_workflows: u64, unfinished_functions: u64) -> Liveness {
        Liveness { live: gave_up.is_empty() && unfinished_workflows == 0, gave_up, unfinished_workflows, unfinished_functions }
    }

    /// One line: `pass`, or what did not end.
    pub fn describe(&self) -> String {
        if self.live {
            return "pass: every workflow completed".into();
        }
        let mut parts = Vec::new();
        for (reason, n) in &self.gave_up {
            parts.push(format!("{n} gave up ({reason})"));
        }
        if self.unfinished_workflows > 0 {
            parts.push(format!(
                "{} unfinished when the run stopped ({} function instances running)",
                self.unfinished_workflows, self.unfinished_functions
            ));
        }
        format!("FAIL: {}", parts.join(", "))
    }
}

/// The summary of one run (written as `summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub scenario: String,
    pub protocol: String,
    pub seed: u64,
    pub stopped_by: String,
    pub events: u64,
    pub sim_time_ns: Time,
    /// Measured window: from the end of warm-up to the last workflow completion.
    pub measured_ns: Time,
    pub workflows: WorkflowCounts,
    pub liveness: Liveness,
    pub abort_rate: f64,
    /// Completed workflows per simulated second over the measured window.
    pub throughput_per_s: f64,
    pub workflow_latency_ns: Stats,
    /// Per transaction kind (`read`, `write`, `read_txn`, `workflow_txn`, `txn`).
    pub op_latency_ns: BTreeMap<String, Stats>,
    pub transactions: BTreeMap<String, u64>,
    pub messages: BTreeMap<String, MessageCount>,
    pub messages_total: MessageCount,
    pub messages_dropped: u64,
    pub nodes: Vec<NodeSummary>,
    /// Samples the protocol reported (`visibility_ns`, `metadata_bytes`, ...).
    pub observations: BTreeMap<String, Stats>,
    /// Events the protocol counted (`cache_hit`, ...).
    pub counters: BTreeMap<String, u64>,
    /// Figures the protocol computed from its final state.
    pub protocol_metrics: BTreeMap<String, f64>,
    pub history_records: u64,
    pub history_hash: String,
    pub trace_hash: Option<String>,
    pub invariant_violation: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_in_order() {
        let mut prev = 0;
        for v in (0..5000u64).chain([u64::MAX / 3, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b >= prev && b < BUCKETS, "{v}");
            let (lo, w) = bucket_range(b);
            assert!(lo <= v && v - lo < w, "{v} not in bucket {b} = [{lo}, +{w})");
            prev = b;
        }
    }

    #[test]
    fn percentiles_are_within_a_percent() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for (p, want) in [(50.0, 50_000_000.0), (99.0, 99_000_000.0), (99.9, 99_900_000.0)] {
            let got = h.percentile(p) as f64;
            assert!((got - want).abs() / want < 0.01, "p{p}: {got} vs {want}");
        }
        assert_eq!(h.percentile(100.0), 100_000_000);
        assert_eq!(h.stats().count, 100_000);
        assert_eq!(Histogram::default().percentile(50.0), 0);
    }

    #[test]
    fn merging_equals_recording_everything_once() {
        let (mut a, mut b, mut all) = (Histogram::default(), Histogram::default(), Histogram::default());
        for v in 0..1000u64 {
            if v % 3 == 0 {
                a.record(v * 7)
            } else {
                b.record(v * 7)
            }
            all.record(v * 7);
        }
        a.merge(&b);
        assert_eq!(a.stats(), all.stats());
    }
}
