//! HydroCache-Con and -Opt over many seeds: the correct protocols never show a TCC anomaly or
//! break an invariant, however delays, placement, arrivals, misses and aborts fall.
//!
//! 1000 seeds here (250 per scenario), next to FaaSTCC's 1000 in `tests/faastcc_seeds.rs`. For a
//! longer sweep: `CAUSIM_SEEDS=5000 cargo test --release --test hydrocache_seeds`.

use causim::scenario::LoadedScenario;
use causim_checkers::Level;
use causim_models::Model;
use causim_models::hydrocache::HydroCache;
use causim_sim::buffer::SharedBuffer;
use causim_sim::history::HistoryWriter;
use causim_sim::{RunOutputs, Sim};
use std::path::Path;

fn seeds(default: u64) -> u64 {
    std::env::var("CAUSIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Runs `file` at seeds 1..=n; returns (aborted attempts, workflows) over all of them.
fn sweep(file: &str, n: u64) -> (u64, u64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/hydrocache").join(file);
    let loaded = LoadedScenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let p = &loaded.scenario.protocol;
    let (mut aborts, mut workflows) = (0, 0);
    for seed in 1..=n {
        let model = HydroCache::build(&p.params, &[], &loaded.scenario.topology).unwrap();
        let mut config = loaded.scenario.sim_config();
        config.seed = seed;
        let buf = SharedBuffer::default();
        let mut history = HistoryWriter::new(Box::new(buf.clone()));
        history.header(&serde_json::json!({"format": "causim-history/1"})).unwrap();
        let outputs = RunOutputs { scenario: file.into(), history, trace: None, check_invariants: true };
        let mut sim = Sim::new(model, config, outputs).unwrap();
        let summary = sim.run();
        drop(sim);
        let repro = format!("causim run scenarios/hydrocache/{file} --seed {seed}");
        assert_eq!(summary.invariant_violation, None, "{repro}");
        assert_eq!(summary.workflows.unfinished, 0, "{repro}");
        let text = buf.take();
        let history = causim_checkers::read_history(&text[..], None).unwrap();
        let report = causim_checkers::check(&history, Level::Tcc);
        assert!(report.ok, "{repro}\n{}", report.render_text());
        aborts += summary.workflows.aborted_attempts;
        workflows += summary.workflows.started;
    }
    (aborts, workflows)
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
