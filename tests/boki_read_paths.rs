//! Where a Boki read was served (Table 5's ladder, `reproduce`'s boki-read-latency): the library
//! classes each read that found a record as a hit in its own engine's record cache, a miss
//! there (the own index, the record from a storage node) or a read through another engine's
//! index. The classes must follow the configuration and cost what their paths cost.

mod common;

use causim_models::metrics::{LOG_READ_HIT_NS, LOG_READ_MISS_NS, LOG_READ_REMOTE_NS};
use causim_pipeline::run::{self, RunOptions};
use causim_sim::metrics::Stats;
use causim_sim::workload::WorkloadConfig;
use std::collections::BTreeMap;

/// The read-path observations of Table 5's scenario (shortened) with these protocol params.
fn read_paths(params: serde_json::Value) -> BTreeMap<String, Stats> {
    let mut loaded = common::load_scenario("boki", "table5-read-latency.json");
    let WorkloadConfig::Generator(g) = &mut loaded.scenario.workload else { panic!("generated workload") };
    g.workflows_max = Some(1000);
    loaded.scenario.protocol.params = params;
    let r = run::run(&loaded, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(r.passed(), "the run passes its check");
    r.summary.observations.into_iter().filter(|(k, _)| k.starts_with("log_read_")).collect()
}

#[test]
fn a_cache_hit_is_faster_than_a_miss_which_is_faster_than_a_remote_index() {
    let o = read_paths(serde_json::json!({"storage_nodes": 8, "index_engines": 4}));
    let p50 = |m: &str| o.get(m).unwrap_or_else(|| panic!("no {m} reads: {o:?}")).p50;
    assert!(p50(LOG_READ_HIT_NS) < p50(LOG_READ_MISS_NS), "{o:?}");
    assert!(p50(LOG_READ_MISS_NS) < p50(LOG_READ_REMOTE_NS), "{o:?}");
}

#[test]
fn the_classes_follow_the_configuration() {
    let all_local = read_paths(serde_json::json!({"storage_nodes": 8}));
    assert!(!all_local.contains_key(LOG_READ_REMOTE_NS), "every engine holds the index: {all_local:?}");
    assert!(all_local.contains_key(LOG_READ_HIT_NS) && all_local.contains_key(LOG_READ_MISS_NS), "{all_local:?}");
    let no_cache = read_paths(serde_json::json!({"storage_nodes": 8, "cache_records": 0}));
    assert!(!no_cache.contains_key(LOG_READ_HIT_NS), "without a record cache nothing hits: {no_cache:?}");
    assert!(no_cache.contains_key(LOG_READ_MISS_NS), "{no_cache:?}");
}

#[test]
fn remote_read_percent_sends_that_share_of_reads_to_another_engines_index() {
    let count = |o: &BTreeMap<String, Stats>, m: &str| o.get(m).map_or(0, |s| s.count);
    for percent in [25u64, 75] {
        let o = read_paths(serde_json::json!({"storage_nodes": 8, "remote_read_percent": percent}));
        let (local, remote) = (count(&o, LOG_READ_HIT_NS) + count(&o, LOG_READ_MISS_NS), count(&o, LOG_READ_REMOTE_NS));
        let share = 100.0 * remote as f64 / (local + remote) as f64;
        assert!((share - percent as f64).abs() < 5.0, "{percent} % asked, {share:.1} % remote: {o:?}");
    }
}
