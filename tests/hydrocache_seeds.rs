//! HydroCache-Con and -Opt over many seeds: the correct protocols never show a TCC anomaly or
//! break an invariant, however delays, placement, arrivals, misses and aborts fall.
//!
//! 1000 seeds here (250 per scenario), next to FaaSTCC's 1000 in `tests/faastcc_seeds.rs`. For a
//! longer sweep: `CAUSIM_SEEDS=5000 cargo test --release --test hydrocache_seeds`.

mod common;

fn seeds(default: u64) -> u64 {
    std::env::var("CAUSIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn sweep(file: &str, n: u64) -> (u64, u64) {
    common::seed_sweep("hydrocache", file, n)
}

#[test]
fn hydrocache_opt_chains_with_misses_and_dependency_chases_stay_tcc_over_250_seeds() {
    let (aborts, _) = sweep("fuzz-opt-chain.json", seeds(250));
    assert!(aborts > 0, "validation aborts some attempts");
}

#[test]
fn hydrocache_opt_diamonds_validated_at_the_join_stay_tcc_over_250_seeds() {
    sweep("fuzz-opt-diamond.json", seeds(250));
}

#[test]
fn hydrocache_con_chains_stay_tcc_over_250_seeds() {
    sweep("fuzz-con-chain.json", seeds(250));
}

#[test]
fn hydrocache_con_diamonds_with_pre_warmed_caches_never_abort_over_250_seeds() {
    let (aborts, _) = sweep("fuzz-con-diamond.json", seeds(250));
    assert_eq!(aborts, 0, "HydroCache-Con with pre-warmed caches is abort-free");
}
