//! FaaSTCC over many seeds: the correct protocol never shows a TCC anomaly or breaks an
//! invariant, however delays, placement, arrivals, aborts and garbage collection fall.
//!
//! 1000 seeds here (500 per scenario); `tests/hydrocache_seeds.rs` runs 1000 more for
//! HydroCache. For a longer sweep: `CAUSIM_SEEDS=5000 cargo test --release --test faastcc_seeds`.

use causim::scenario::LoadedScenario;
use causim_checkers::Level;
use causim_models::Model;
use causim_models::faastcc::Faastcc;
use causim_sim::buffer::SharedBuffer;
use causim_sim::history::HistoryWriter;
use causim_sim::{RunOutputs, Sim};
use std::path::Path;

fn seeds(default: u64) -> u64 {
    std::env::var("CAUSIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Runs `file` at seeds 1..=n; returns (aborted attempts, workflows) over all of them.
fn sweep(file: &str, n: u64) -> (u64, u64) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/faastcc").join(file);
    let loaded = LoadedScenario::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let p = &loaded.scenario.protocol;
    let (mut aborts, mut workflows) = (0, 0);
    for seed in 1..=n {
        let model = Faastcc::build(&p.params, &[], &loaded.scenario.topology).unwrap();
        let mut config = loaded.scenario.sim_config();
        config.seed = seed;
        let buf = SharedBuffer::default();
        let mut history = HistoryWriter::new(Box::new(buf.clone()));
        history.header(&serde_json::json!({"format": "causim-history/1"})).unwrap();
        let outputs = RunOutputs { scenario: file.into(), history, trace: None, check_invariants: true };
        let mut sim = Sim::new(model, config, outputs).unwrap();
        let summary = sim.run();
        drop(sim);
        let repro = format!("causim run scenarios/faastcc/{file} --seed {seed}");
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
