//! Engine throughput: `cargo bench --bench engine`.
//!
//! Prints events per second for
//! 1. the bare event queue (pop one, push one) with 1 K and 100 K pending events;
//! 2. the teaching protocol (register) with history recording, at a moderate and a heavy load.
//!
//! Targets (DESIGN.md): ≥ 10 M events/s bare, ≥ 5 M/s with a protocol and recording, on one core.

use causim_pipeline::run::{self, RunOptions};
use causim_pipeline::scenario::LoadedScenario;
use causim_sim::queue::EventQueue;
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The system allocator, counting allocations so the bench can report them per event.
struct CountingAlloc;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call forwards to the system allocator with the caller's arguments unchanged; the
// counter is the only addition.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

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
/// Returns events/s, events, history records, and heap allocations per event.
fn scenario_rate(name: &str, text: String) -> (f64, u64, u64, f64) {
    let loaded = LoadedScenario::from_text(Path::new(name), text).expect("bench scenario parses");
    let options = RunOptions { seed: Some(1), skip_check: true, ..Default::default() };
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let started = Instant::now();
    let report = run::run(&loaded, &options).expect("runs");
    let secs = started.elapsed().as_secs_f64();
    let events = report.summary.events;
    let per_event = (ALLOCATIONS.load(Ordering::Relaxed) - allocations) as f64 / events as f64;
    (events as f64 / secs, events, report.summary.history_records, per_event)
}

fn register(rate_per_s: u64, workflows: u64) -> (f64, u64, u64, f64) {
    let text = REGISTER
        .replace("\"rate_per_s\": 2000", &format!("\"rate_per_s\": {rate_per_s}"))
        .replace("\"workflows_max\": 20000", &format!("\"workflows_max\": {workflows}"));
    scenario_rate("register.json", text)
}

fn main() {
    // `cargo bench --bench engine -- register-2000 --workflows=20000` runs one part, smaller.
    // Parts: bare, register-2000, register-20000, micro; `register` names both register parts.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let wanted = |part: &str| filter.is_empty() || filter.iter().any(|f| part == f.as_str() || part.starts_with(&format!("{f}-")));
    let workflows: u64 =
        args.iter().find_map(|a| a.strip_prefix("--workflows=")).map_or(200_000, |n| n.parse().expect("--workflows=N takes a number"));
    println!("causim engine benchmark (one thread)");
    for pending in [1_000u64, 100_000] {
        if !wanted("bare") {
            continue;
        }
        let best = (0..3).map(|_| bare_queue(pending, 10_000_000)).fold(0.0, f64::max);
        println!("  bare queue, {pending:>7} pending events        {:>6.2} M events/s", best / 1e6);
    }
    for rate in [2_000u64, 20_000] {
        if !wanted(&format!("register-{rate}")) {
            continue;
        }
        let runs: Vec<_> = (0..3).map(|_| register(rate, workflows)).collect();
        let best = runs.iter().map(|r| r.0).fold(0.0, f64::max);
        println!(
            "  register protocol, {rate:>6} workflows/s ({} events, {} txns recorded, {:.2} allocations/event)  {:>6.2} M events/s",
            runs[0].1,
            runs[0].2,
            runs[0].3,
            best / 1e6
        );
    }
    if !wanted("micro") {
        return;
    }
    let runs: Vec<_> = (0..3).map(|_| scenario_rate("micro.json", MICRO.to_string())).collect();
    let best = runs.iter().map(|r| r.0).fold(0.0, f64::max);
    println!(
        "  CausalMesh §9.2 micro-benchmark ({} events, {} txns recorded, {:.2} allocations/event)  {:>6.2} M events/s",
        runs[0].1,
        runs[0].2,
        runs[0].3,
        best / 1e6
    );
}
