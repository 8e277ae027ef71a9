//! Engine throughput: `cargo bench --bench engine`.
//!
//! Prints events per second for
//! 1. the bare event queue (pop one, push one) with 1 K and 100 K pending events;
//! 2. the teaching protocol (register) with history recording, at a moderate and a heavy load.
//!
//! Targets (DESIGN.md): ≥ 10 M events/s bare, ≥ 5 M/s with a protocol and recording, on one core.

use causim::runner::{self, RunOptions};
use causim::scenario::LoadedScenario;
use causim_sim::queue::EventQueue;
use std::path::Path;
use std::time::Instant;

fn bare_queue(pending: u64, events: u64) -> f64 {
    let mut queue = EventQueue::default();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..pending {
        queue.push(next() % 1_000_000, i);
    }
    let started = Instant::now();
    let mut checksum = 0u64;
    for _ in 0..events {
        let (t, payload) = queue.pop().expect("never empty");
        checksum = checksum.wrapping_add(payload);
        queue.push(t + 1 + next() % 1_000_000, payload);
    }
    let secs = started.elapsed().as_secs_f64();
    assert_ne!(checksum, 0);
    events as f64 / secs
}

const REGISTER: &str = include_str!("../scenarios/register/default.json");
const MICRO: &str = include_str!("../scenarios/causalmesh/micro-benchmark.json");

/// Events per second of a scenario run with history recording (hashed, not written) and no
/// trace or history check: the engine and the protocol only.
fn scenario_rate(name: &str, text: String) -> (f64, u64, u64) {
    let loaded = LoadedScenario::from_text(Path::new(name), text).expect("bench scenario parses");
    let options = RunOptions { seed: Some(1), skip_check: true, ..Default::default() };
    let started = Instant::now();
    let report = runner::run(&loaded, &options).expect("runs");
    let secs = started.elapsed().as_secs_f64();
    (report.summary.events as f64 / secs, report.summary.events, report.summary.history_records)
}

fn register(rate_per_s: u64, workflows: u64) -> (f64, u64, u64) {
    let text = REGISTER
        .replace("\"rate_per_s\": 2000", &format!("\"rate_per_s\": {rate_per_s}"))
        .replace("\"workflows_max\": 20000", &format!("\"workflows_max\": {workflows}"));
    scenario_rate("register.json", text)
}

fn main() {
    println!("causim engine benchmark (one thread)");
    for pending in [1_000u64, 100_000] {
        let best = (0..3).map(|_| bare_queue(pending, 10_000_000)).fold(0.0, f64::max);
        println!("  bare queue, {pending:>7} pending events        {:>6.2} M events/s", best / 1e6);
    }
    for rate in [2_000u64, 20_000] {
        let runs: Vec<(f64, u64, u64)> = (0..3).map(|_| register(rate, 200_000)).collect();
        let best = runs.iter().map(|r| r.0).fold(0.0, f64::max);
        println!(
            "  register protocol, {rate:>6} workflows/s ({} events, {} txns recorded)  {:>6.2} M events/s",
            runs[0].1,
            runs[0].2,
            best / 1e6
        );
    }
    let runs: Vec<(f64, u64, u64)> = (0..3).map(|_| scenario_rate("micro.json", MICRO.to_string())).collect();
    let best = runs.iter().map(|r| r.0).fold(0.0, f64::max);
    println!(
        "  CausalMesh §9.2 micro-benchmark ({} events, {} txns recorded)  {:>6.2} M events/s",
        runs[0].1,
        runs[0].2,
        best / 1e6
    );
}
