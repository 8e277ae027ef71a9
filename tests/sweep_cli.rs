//! `causim sweep` end to end: a sweep's results do not depend on the thread count, on a split
//! into shards joined with `causim sweep merge`, or on a resumption from the journal.

mod common;
use common::*;

use std::path::Path;

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()))
}

/// The files a sweep's result is made of (the journal is in finishing order, so not compared).
const RESULT_FILES: [&str; 3] = ["runs.csv", "aggregate.csv", "results.json"];

fn assert_same(a: &Path, b: &Path, what: &str) {
    for f in RESULT_FILES {
        let (x, y) = (read(a, f), read(b, f));
        assert!(x == y, "{what}: {f} differs between {} and {}", a.display(), b.display());
    }
}

/// Runs `sweep` (a file under scenarios/sweeps/, `--quick`) with 1 and 2 threads, as 2 and 3
/// shards merged, and resumed from a half journal; every result must be byte-identical.
fn check_sweep(sweep: &str) {
    check_sweep_file(sweep, &format!("scenarios/sweeps/{sweep}.json"));
}

fn check_sweep_file(sweep: &str, file: &str) {
    let root = temp_dir("sweep", sweep);
    let one = root.join("t1");
    let two = root.join("t2");
    ok(&["sweep", file, "--quick", "--no-progress", "--threads", "1", "--out", one.to_str().unwrap()]);
    ok(&["sweep", file, "--quick", "--no-progress", "--threads", "2", "--out", two.to_str().unwrap()]);
    assert_same(&one, &two, &format!("{sweep}: 1 vs 2 threads"));
    let rows = read(&one, "runs.csv").lines().count() - 1;
    assert!(rows > 0, "{sweep}: no runs");

    for n in [2usize, 3] {
        let mut shards = Vec::new();
        for i in 0..n {
            let d = root.join(format!("shard-{i}-of-{n}"));
            let shard = format!("{i}/{n}");
            ok(&["sweep", file, "--quick", "--no-progress", "--threads", "1", "--shard", &shard, "--out", d.to_str().unwrap()]);
            shards.push(d);
        }
        let merged = root.join(format!("merged-{n}"));
        // Both spellings: `causim sweep merge` and `causim merge`.
        let mut args = if n == 2 { vec!["sweep", "merge"] } else { vec!["merge"] };
        args.extend(shards.iter().map(|d| d.to_str().unwrap()));
        args.extend(["--out", merged.to_str().unwrap()]);
        let out = ok(&args);
        assert!(out.contains(&format!("merged {rows} runs")), "{sweep}: merge of {n} shards: {out}");
        assert_same(&one, &merged, &format!("{sweep}: {n} shards merged vs one run"));
    }

    // Resumption: keep half the journal, run again; the runs kept are not done again.
    let resumed = root.join("resumed");
    ok(&["sweep", file, "--quick", "--no-progress", "--threads", "2", "--out", resumed.to_str().unwrap()]);
    let journal = read(&resumed, "runs.jsonl");
    let lines: Vec<&str> = journal.lines().collect();
    let kept = lines.len() / 2;
    std::fs::write(resumed.join("runs.jsonl"), lines[..kept].iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let out = ok(&["sweep", file, "--quick", "--no-progress", "--threads", "2", "--out", resumed.to_str().unwrap()]);
    assert!(out.contains(&format!("skipped {kept} already done")), "{sweep}: resumption: {out}");
    assert_same(&one, &resumed, &format!("{sweep}: resumed vs one run"));

    // A journal written by another build of causim (other models) is not resumed.
    std::fs::write(resumed.join("build.txt"), "another build\n").unwrap();
    let out = ok(&["sweep", file, "--quick", "--no-progress", "--threads", "2", "--out", resumed.to_str().unwrap()]);
    assert!(out.contains("skipped 0 already done"), "{sweep}: another build's journal was resumed: {out}");
    assert_same(&one, &resumed, &format!("{sweep}: rerun after a build change vs one run"));
    let _ = std::fs::remove_dir_all(&root);
}

/// A grid sweep with several seeds (CausalMesh Fig. 1).
#[test]
fn grid_sweep_is_identical_across_threads_shards_and_resumption() {
    check_sweep("fig1-dax");
}

/// Series (one per mutant) times a grid, history checks on.
#[test]
fn series_sweep_is_identical_across_threads_shards_and_resumption() {
    check_sweep("delay-mutants");
}

/// `until` (a series stops past saturation, per seed) and `multiply` (load per server), on a
/// small version of the scale-servers sweep: two systems, short runs, loads that saturate.
#[test]
fn until_sweep_is_identical_across_threads_shards_and_resumption() {
    let dir = temp_dir("sweep", "until-file");
    std::fs::create_dir_all(&dir).unwrap();
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/causalmesh/micro-benchmark.json");
    let sweep = serde_json::json!({
        "format": "causim-sweep/1",
        "name": "until-small",
        "base": base,
        "set": {"workload.generator.duration_ns": 300000000u64, "workload.generator.warmup_ns": 100000000u64,
                "scheduler.attempts_max": 100, "expect": null, "checks.level": null},
        "series": [
            {"label": "CausalMesh", "set": {}},
            {"label": "CausalMesh-TCC", "set": {"protocol": {"name": "causalmesh_tcc", "params": {"chain": "one_round", "db_flush": "sync", "ring_size": 1}}}}
        ],
        "grid": [
            {"param": "topology.servers", "values": [2, 3]},
            {"param": "workload.generator.arrival.rate_per_s", "values": [200, 1500, 2500, 4000]}
        ],
        "multiply": {"workload.generator.arrival.rate_per_s": "topology.servers"},
        "until": {"metric": "latency_p99_ms", "above": 9},
        "seeds": {"first": 1, "count": 2}
    });
    let file = dir.join("until-small.json");
    std::fs::write(&file, serde_json::to_string_pretty(&sweep).unwrap()).unwrap();
    // `until` must have cut some walks short, or this test would not test it.
    let probe = dir.join("probe");
    ok(&["sweep", file.to_str().unwrap(), "--no-progress", "--threads", "2", "--out", probe.to_str().unwrap()]);
    let runs = read(&probe, "runs.csv").lines().count() - 1;
    assert!(runs < 2 * 2 * 4 * 2, "until stopped no walk ({runs} runs)");
    assert!(read(&probe, "runs.csv").contains("workload.generator.arrival.rate_per_s×topology.servers"));
    check_sweep_file("until-small", file.to_str().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_shard_is_refused() {
    let o = causim(&["sweep", "scenarios/sweeps/fig1-dax.json", "--quick", "--shard", "2/2", "--out", "/nonexistent"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("need 0 ≤ I < N"));
}
