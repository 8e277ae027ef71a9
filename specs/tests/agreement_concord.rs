//! Concord checked two independent ways, with verdicts that must agree: TLC on the TLA+ spec
//! written from the paper (`specs/concord/`), and Stateright on the Rust nodes the simulator
//! runs (`src/concord_model.rs`), on the same plans of functions (same roles: the key's home and
//! the other agents) with no crash.
//!
//! Goal: the strict protocol passes both on every crash-free plan; each mutant both can express
//! without a crash (`no_owner_deferral`, `inv_parallel_with_put`, `non_blocking_directory`)
//! breaks linearizability in both, and the same structural invariant where the bounds show one;
//! the paper-literal S-upgrade (A1) and directory eviction without recall (A12) break
//! linearizability in both.

use causim_specs::concord_model::{ConcordConfig, ConcordModel, LINEARIZABLE, TLA_NAMES, TRACKED, WRITE_ORDER};
use causim_specs::stateright::{Checker, Model};
use causim_specs::tlc::testing;

struct Stateright {
    /// `always` properties with a counterexample.
    broken: Vec<&'static str>,
    unique_states: usize,
}

fn stateright(cfg: ConcordConfig) -> Stateright {
    let model: ConcordModel = cfg.into_model().expect("a valid model");
    let checker = model.checker().threads(2).spawn_bfs().join();
    Stateright { broken: testing::broken_always_properties(&checker), unique_states: checker.unique_state_count() }
}

/// TLC's verdict on a config: `None` when every invariant holds, else the one it reports.
fn tlc(config: &str) -> Option<String> {
    testing::violated_invariant("concord", "MC_plans", config)
}

fn tla_name(property: &str) -> &'static str {
    TLA_NAMES.iter().find(|(p, _)| *p == property).map(|(_, t)| *t).expect("a mapped property")
}

#[test]
fn the_strict_protocol_passes_stateright_on_the_plans_tlc_passes() {
    // Unique states pinned: a change in the Rust nodes' state space shows up here. They are not
    // the spec's distinct states: the spec also crashes agents and evicts at will, the nodes
    // evict only by capacity and keep more (tags, LRU clocks, ghost write counts, records).
    // TLC's verdicts on the same plans (with crashes and evictions) are in `tlc_concord.rs`.
    for (cfg, name, states) in [
        (ConcordConfig::upgrade(), "upgrade", 2_557),
        (ConcordConfig::owner(), "owner", 5_233),
        (ConcordConfig::owner_inv(), "owner_inv", 550),
        (ConcordConfig::race(), "race", 90),
        (ConcordConfig::directory_eviction(), "directory_eviction", 1_293),
    ] {
        let sr = stateright(cfg);
        assert_eq!(sr.broken, Vec::<&str>::new(), "{name}: Stateright");
        assert_eq!(sr.unique_states, states, "{name}: Stateright");
    }
}

#[test]
fn no_owner_deferral_breaks_linearizability_in_both() {
    let sr = stateright(ConcordConfig::owner().mutant("no_owner_deferral"));
    assert!(sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_no_owner_deferral.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn inv_parallel_with_put_breaks_write_order_in_both() {
    let sr = stateright(ConcordConfig::owner_inv().mutant("inv_parallel_with_put"));
    assert!(sr.broken.contains(&WRITE_ORDER), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_inv_parallel_with_put.cfg").as_deref(), Some(tla_name(WRITE_ORDER)));
}

#[test]
fn non_blocking_directory_breaks_tracking_and_linearizability_in_both() {
    let sr = stateright(ConcordConfig::race().mutant("non_blocking_directory"));
    assert!(sr.broken.contains(&TRACKED) && sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_non_blocking_directory.cfg").as_deref(), Some(tla_name(TRACKED)));
    assert_eq!(tlc("MC_non_blocking_directory_history.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn paper_literal_upgrade_breaks_linearizability_in_both() {
    let sr = stateright(ConcordConfig::upgrade().paper_literal());
    assert_eq!(sr.broken, vec![LINEARIZABLE], "Stateright");
    assert_eq!(tlc("MC_upgrade_paper.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn paper_literal_directory_eviction_breaks_tracking_and_linearizability_in_both() {
    let sr = stateright(ConcordConfig::directory_eviction().paper_literal());
    assert!(sr.broken.contains(&TRACKED) && sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_dir_evict_paper.cfg").as_deref(), Some(tla_name(TRACKED)));
    assert_eq!(tlc("MC_dir_evict_paper_history.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}
