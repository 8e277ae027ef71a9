//! Boki's metalog checked two independent ways, with verdicts that must agree: TLC on the TLA+
//! spec written from the paper (`specs/boki/BokiMetalog.tla`), and Stateright on the Rust nodes
//! the simulator runs (`src/boki_model.rs`), on the same bounds (one shard, 2 storage nodes, 3
//! sequencers, terms 0–1, one append per term, at most one crash, seals on failure or at will).
//!
//! Goal: the protocol passes both, and every append completes in both under the fault model
//! (one crash, seals on failure); with two crashes (outside it) an append never completes in
//! both; each mutant the spec can express breaks the same property in both:
//! `order_before_durability` durability before order, `seal_loses_entries` seal safety and one
//! outcome per append, `new_term_reuses_seqnums` unique seqnums (and term order in Stateright's
//! state, which TLC reports second: it names the first invariant of the config it finds broken).
//! Stateright stops at its first violation, as TLC does. Figures: `specs/README.md`.

use causim_specs::boki_model::{BokiConfig, BokiModel, COMPLETE, DURABLE, ONE_OUTCOME, SEAL_SAFETY, TERM_ORDER, TLA_NAMES, UNIQUE};
use causim_specs::stateright::{Checker, HasDiscoveries, Model};
use causim_specs::tlc::{Verdict, testing};

struct Stateright {
    /// Properties with a counterexample, in declaration order.
    broken: Vec<&'static str>,
    unique_states: usize,
}

/// One thread, so the first violation found (and where the check stops) is the same on every run.
fn stateright(cfg: BokiConfig, stop_at_first_violation: bool) -> Stateright {
    let model: BokiModel = cfg.into_model().expect("a valid model");
    let mut checker = model.checker().threads(1);
    if stop_at_first_violation {
        checker = checker.finish_when(HasDiscoveries::AnyFailures);
    }
    let checker = checker.spawn_bfs().join();
    Stateright { broken: testing::broken_always_properties(&checker), unique_states: checker.unique_state_count() }
}

/// TLC's verdict on a config (a run ends quietly once every append is done: no deadlock check).
fn tlc(config: &str) -> Verdict {
    let mut options = testing::options();
    options.check_deadlock = false;
    let run = testing::run("boki", "BokiMetalog", config, &options);
    run.verdict
}

fn tla_name(property: &str) -> &'static str {
    TLA_NAMES.iter().find(|(p, _)| *p == property).map(|(_, t)| *t).expect("a mapped property")
}

fn violated(property: &str) -> Verdict {
    Verdict::InvariantViolated { name: tla_name(property).to_string() }
}

#[test]
fn the_protocol_keeps_every_invariant_in_both() {
    // Unique states pinned: a change in the Rust nodes' state space shows up here. They are
    // not the spec's distinct states: the nodes keep more (progress timers, acknowledgements,
    // held messages), and the spec's symmetry over storage nodes has no counterpart here.
    let sr = stateright(BokiConfig::one_append(), false);
    assert_eq!((sr.broken, sr.unique_states), (Vec::<&str>::new(), 15_710), "Stateright");
    assert_eq!(tlc("MC_safety_one_append.cfg"), Verdict::Ok, "TLC");
}

#[test]
fn appends_complete_in_both_with_one_crash_and_not_with_two() {
    let sr = stateright(BokiConfig::liveness(), false);
    assert_eq!((sr.broken, sr.unique_states), (Vec::<&str>::new(), 4_082), "Stateright");
    assert_eq!(tlc("MC_liveness.cfg"), Verdict::Ok, "TLC");
    // Two crashes (outside the fault model): a seal that never ends, or no quorum for the
    // metalog; either way an append stays pending at a state nothing follows.
    let sr = stateright(BokiConfig::liveness().crashes(2), true);
    assert_eq!(sr.broken, vec![COMPLETE], "Stateright");
    assert_eq!(tlc("MC_liveness_two_crashes.cfg"), Verdict::TemporalPropertyViolated, "TLC");
}

#[test]
fn order_before_durability_breaks_durability_before_order_in_both() {
    let sr = stateright(BokiConfig::one_append().mutant("order_before_durability"), true);
    assert_eq!(sr.broken, vec![DURABLE], "Stateright");
    assert_eq!(tlc("MC_order_before_durability.cfg"), violated(DURABLE), "TLC");
}

#[test]
fn seal_loses_entries_breaks_seal_safety_and_one_outcome_in_both() {
    let sr = stateright(BokiConfig::one_append().mutant("seal_loses_entries"), true);
    assert_eq!(sr.broken, vec![SEAL_SAFETY, ONE_OUTCOME], "Stateright");
    assert_eq!(tlc("MC_seal_loses_entries.cfg"), violated(SEAL_SAFETY), "TLC");
    assert_eq!(tlc("MC_seal_loses_entries_outcome.cfg"), violated(ONE_OUTCOME), "TLC");
}

#[test]
fn new_term_reuses_seqnums_breaks_unique_seqnums_in_both() {
    let sr = stateright(BokiConfig::one_append().mutant("new_term_reuses_seqnums"), true);
    assert_eq!(sr.broken, vec![UNIQUE, TERM_ORDER], "Stateright");
    assert_eq!(tlc("MC_new_term_reuses_seqnums.cfg"), violated(UNIQUE), "TLC");
}

/// The spec's own bounds, `MC_safety.cfg` (two appends per term): about 3 minutes on one core,
/// so run by hand (`cargo test --release --test agreement_boki -- --ignored`); TLC's verdict on
/// it is in `tlc_boki.rs`.
#[test]
#[ignore]
fn the_protocol_keeps_every_invariant_with_two_appends_per_term() {
    let sr = stateright(BokiConfig::safety(), false);
    assert_eq!((sr.broken, sr.unique_states), (Vec::<&str>::new(), 1_124_105), "Stateright");
}
