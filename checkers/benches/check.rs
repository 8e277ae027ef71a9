//! Checker benchmark: generated (seeded, serial) histories of 10 K, 100 K and 1 M
//! transactions of 20 operations, checked at `tcc`; plus `ccv` on a one-operation-per-
//! transaction history and the cost of reading the history from a `causim-history/1` file.
//!
//! Run: `cargo bench -p causim-checkers` (add `-- --quick` for the 10 K and 100 K rows only).
//! Each measurement runs in a fresh child process so that its peak memory (VmHWM from
//! /proc/self/status) is its own.

use causim_checkers::testgen::{GenParams, serial, write_serial_jsonl};
use causim_checkers::{Level, check, read_history_path};
use std::process::Command;
use std::time::Instant;

struct Case {
    name: &'static str,
    level: Level,
    txns: u64,
    ops: u32,
    from_file: bool,
    /// Key space; 0 means "about ten writes per key" (contended).
    keys: u64,
}

const SESSIONS: u32 = 25;

fn params(c: &Case) -> GenParams {
    GenParams {
        sessions: SESSIONS,
        txns_per_session: (c.txns / u64::from(SESSIONS)) as u32,
        ops_per_txn: c.ops,
        // By default about ten writes per key over the whole history: readers mostly see
        // recent writes of other sessions, so every read meets several chains. Plume's own
        // benchmark uses 10^9 keys instead, where almost every read sees the initial value.
        keys: if c.keys > 0 { c.keys } else { (c.txns * u64::from(c.ops) / 20).max(1) },
        read_per_mille: 500,
        seed: 42,
    }
}

fn cases(quick: bool) -> Vec<Case> {
    let case = |name, level, txns, ops, from_file, keys| Case { name, level, txns, ops, from_file, keys };
    let mut v = vec![case("tcc 10K x 20", Level::Tcc, 10_000, 20, false, 0), case("tcc 100K x 20", Level::Tcc, 100_000, 20, false, 0)];
    if !quick {
        v.push(case("tcc 1M x 20", Level::Tcc, 1_000_000, 20, false, 0));
        v.push(case("tcc 1M x 20 1e9 keys", Level::Tcc, 1_000_000, 20, false, 1_000_000_000));
        v.push(case("ccv 1M x 1", Level::Ccv, 1_000_000, 1, false, 0));
        v.push(case("file+tcc 1M x 20", Level::Tcc, 1_000_000, 20, true, 0));
    } else {
        v.push(case("file+tcc 100K x 20", Level::Tcc, 100_000, 20, true, 0));
    }
    v
}

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn child(index: usize, quick: bool) {
    let case = &cases(quick)[index];
    let p = params(case);
    let (history, load_s, file_mb) = if case.from_file {
        let path = std::env::temp_dir().join(format!("causim-bench-{}-{}-{}.jsonl", case.txns, case.ops, p.keys));
        if !path.exists() {
            let f = std::fs::File::create(&path).expect("create the bench file");
            write_serial_jsonl(&p, f).expect("write the bench file");
        }
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / 1e6;
        let start = Instant::now();
        let h = read_history_path(&path, None).expect("the generated file parses");
        (h, start.elapsed().as_secs_f64(), size)
    } else {
        let start = Instant::now();
        let h = serial(&p);
        (h, start.elapsed().as_secs_f64(), 0.0)
    };
    let rss_before = status_kb("VmRSS:");
    let start = Instant::now();
    let cpu = causim_checkers::cpu_seconds();
    let report = check(&history, case.level);
    let check_s = start.elapsed().as_secs_f64();
    let check_cpu = causim_checkers::cpu_seconds() - cpu;
    assert!(report.ok, "a serial history must pass {}", case.level);
    let hwm = status_kb("VmHWM:");
    let ops = history.op_count() as f64;
    println!(
        "{:<22} {:>9} {:>10} {:>8.2} {:>8.2} {:>8.2} {:>11.0} {:>8.0} {:>8.0} {:>8.0}",
        case.name,
        history.txn_count(),
        history.op_count(),
        load_s,
        check_s,
        check_cpu,
        ops / check_s,
        rss_before as f64 / 1024.0,
        hwm as f64 / 1024.0,
        file_mb
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    if let Ok(i) = std::env::var("CAUSIM_BENCH_CHILD") {
        child(i.parse().expect("a case index"), quick);
        return;
    }
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("causim-checkers benchmark: {cores} cores, {cpu}; serial histories, {SESSIONS} sessions, seed 42, 50% reads");
    println!("(load = generate in memory, or parse the JSONL file for file+ rows; check = the level's check alone,");
    println!(" wall and CPU seconds (all threads); RSS before the check; peak = process peak, including the load)");
    println!(
        "{:<22} {:>9} {:>10} {:>8} {:>8} {:>8} {:>11} {:>8} {:>8} {:>8}",
        "case", "txns", "ops", "load s", "check s", "cpu s", "ops/s", "RSS MB", "peak MB", "file MB"
    );
    let exe = std::env::current_exe().expect("the bench binary knows its path");
    for i in 0..cases(quick).len() {
        let mut cmd = Command::new(&exe);
        cmd.env("CAUSIM_BENCH_CHILD", i.to_string());
        if quick {
            cmd.arg("--quick");
        }
        let status = cmd.status().expect("run a benchmark case");
        assert!(status.success(), "benchmark case {i} failed");
    }
}
