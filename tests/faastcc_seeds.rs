//! FaaSTCC over many seeds: the correct protocol never shows a TCC anomaly or breaks an
//! invariant, however delays, placement, arrivals, aborts and garbage collection fall.
//!
//! 1000 seeds here (500 per scenario) and 250 for each of the ablation's fixed-snapshot
//! policies; `tests/hydrocache_seeds.rs` runs 1000 more for HydroCache. For a longer sweep: `CAUSIM_SEEDS=5000 cargo test --release --test faastcc_seeds`.

mod common;

fn seeds(default: u64) -> u64 {
    std::env::var("CAUSIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn sweep(file: &str, n: u64) -> (u64, u64) {
    common::seed_sweep("faastcc", file, n)
}

#[test]
fn faastcc_chains_with_writes_and_garbage_collection_stay_tcc_over_500_seeds() {
    let (aborts, workflows) = sweep("fuzz-chain.json", seeds(500));
    // Garbage collection (4 versions per key) does abort some attempts: the path is exercised.
    assert!(aborts > 0 && workflows > 0);
}

#[test]
fn faastcc_diamonds_with_fan_in_merges_stay_tcc_over_500_seeds() {
    let (aborts, _) = sweep("fuzz-diamond.json", seeds(500));
    assert!(aborts > 0, "some joins find their parents' intervals disjoint");
}

/// The ablation's read policies (Fig. 3) read at one fixed point: as safe as the full system.
#[test]
fn faastcc_fixed_snapshot_policies_stay_tcc_over_250_seeds_each() {
    let (aborts, workflows) = sweep("fuzz-chain-fixed-promise.json", seeds(250));
    assert!(aborts > 0 && workflows > 0);
    let (_, workflows) = sweep("fuzz-diamond-fixed-exact.json", seeds(250));
    assert!(workflows > 0);
}
