//! Concord checked two independent ways, with verdicts that must agree: TLC on the TLA+ spec
//! written from the paper (`specs/concord/`), and Stateright on the Rust nodes the simulator
//! runs (`src/concord_model.rs`), on the same plans of functions (same roles: the key's home and
//! the other agents), with at most one crash where the plan allows one.
//!
//! Goal: the strict protocol passes both on every plan, through a crash of any agent the plan
//! allows; each mutant both can express (`no_owner_deferral`, `inv_parallel_with_put`,
//! `non_blocking_directory`, and with a crash `no_failure_eviction`, `no_storage_fencing`)
//! breaks the same property in both (linearizability, or the structural invariant the bounds
//! show first); the paper-literal S-upgrade (A1; with two upgrades at once, A2; with the home
//! crashing mid-write, A6) and directory eviction without recall (A12) break linearizability in
//! both; and reads of an owner's in-flight write (paper-literal: the Rust model's
//! `params.strict: false`, the spec's `owner_read_in_flight`) break linearizability through the
//! owner's crash in both, while the strict rule (such a read waits for storage) passes in both.
//! One agent may leave instead of crashing: the strict protocol passes both, and the domain-change
//! mutants (`leave_without_migration`, `serve_before_entries`) break directory coverage and
//! linearizability in both. External writes (A11 †): paper-literal (storage applies them first)
//! breaks linearizability in both, strict (`external_through_home`) passes both.

use causim_specs::concord_model::{
    ConcordConfig, ConcordModel, EVERY_CALL_ANSWERED, FAILURE_FENCING, LINEARIZABLE, Place, TLA_NAMES, TRACKED, WRITE_ORDER,
};
use causim_specs::stateright::{Checker, Model};
use causim_specs::tlc::testing;

struct Stateright {
    /// `always` properties with a counterexample.
    broken: Vec<&'static str>,
    unique_states: usize,
    /// Some run answers every call.
    all_answered: bool,
}

fn stateright(cfg: ConcordConfig) -> Stateright {
    let model: ConcordModel = cfg.into_model().expect("a valid model");
    let checker = model.checker().threads(2).spawn_bfs().join();
    Stateright {
        broken: testing::broken_always_properties(&checker),
        unique_states: checker.unique_state_count(),
        all_answered: checker.discovery(EVERY_CALL_ANSWERED).is_some(),
    }
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
        (ConcordConfig::concurrent_upgrades(), "concurrent_upgrades", 102_997),
    ] {
        let sr = stateright(cfg);
        assert_eq!(sr.broken, Vec::<&str>::new(), "{name}: Stateright");
        assert_eq!(sr.unique_states, states, "{name}: Stateright");
    }
}

#[test]
fn the_strict_protocol_passes_stateright_through_a_crash() {
    // The crash plans of `tlc_concord.rs` (MC_race: either agent; MC_home_crash: x's home;
    // MC_owner_crash: the owner), with the controller's detection and the recovery barrier.
    for (cfg, name, states) in [
        (ConcordConfig::race().crashing(&[Place::Home, Place::Other(0)]), "race", 3_055),
        (ConcordConfig::home_crash(), "home_crash", 10_563),
        (ConcordConfig::owner_crash(), "owner_crash", 14_893),
        (ConcordConfig::home_crash_write(), "home_crash_write", 46_827),
    ] {
        let sr = stateright(cfg);
        assert_eq!(sr.broken, Vec::<&str>::new(), "{name}: Stateright");
        assert_eq!(sr.unique_states, states, "{name}: Stateright");
    }
}

#[test]
fn no_failure_eviction_breaks_failure_fencing_and_linearizability_in_both() {
    let sr = stateright(ConcordConfig::home_crash().mutant("no_failure_eviction"));
    assert!(sr.broken.contains(&FAILURE_FENCING) && sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_no_failure_eviction.cfg").as_deref(), Some(tla_name(FAILURE_FENCING)));
    assert_eq!(tlc("MC_no_failure_eviction_history.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn the_strict_protocol_passes_stateright_through_a_departure() {
    // The Leave plan of `tlc_concord.rs` (MC_leave: x's home leaves; MC_leave_any: any agent),
    // with the controller's two barriers, the leaver's synchronization and the migration of
    // its entries to its successor. The Rust model refuses a schedule where every agent
    // leaves, so here x's home or its successor (c1's machine) may.
    for (cfg, name, states) in [
        (ConcordConfig::leave(), "leave", 9_557),
        (ConcordConfig::leave().leaving(&[Place::Home, Place::After(1)]), "leave_home_or_successor", 18_728),
    ] {
        let sr = stateright(cfg);
        assert_eq!(sr.broken, Vec::<&str>::new(), "{name}: Stateright");
        assert!(sr.all_answered, "{name}: Stateright: some run answers every call");
        assert_eq!(sr.unique_states, states, "{name}: Stateright");
    }
}

#[test]
fn leave_without_migration_breaks_tracking_and_linearizability_in_both() {
    let sr = stateright(ConcordConfig::leave().mutant("leave_without_migration"));
    assert!(sr.broken.contains(&TRACKED) && sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_leave_without_migration.cfg").as_deref(), Some(tla_name(TRACKED)));
    assert_eq!(tlc("MC_leave_without_migration_history.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn serve_before_entries_breaks_tracking_and_linearizability_in_both() {
    let sr = stateright(ConcordConfig::leave().mutant("serve_before_entries"));
    assert!(sr.broken.contains(&TRACKED) && sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_serve_before_entries.cfg").as_deref(), Some(tla_name(TRACKED)));
    assert_eq!(tlc("MC_serve_before_entries_history.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn external_writes_break_linearizability_paper_literal_and_pass_through_the_home_in_both() {
    // A11 †: paper-literal, storage applies the external write and acknowledges it before the
    // home's invalidations reach the copies; strictly (`external_through_home`) the home writes
    // it like a function's write.
    let sr = stateright(ConcordConfig::ext_write().paper_literal());
    assert!(sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_ext_write_paper_history.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
    let sr = stateright(ConcordConfig::ext_write());
    assert_eq!(sr.broken, Vec::<&str>::new(), "Stateright, strict");
    assert!(sr.all_answered, "Stateright, strict: the external write is answered in some run");
    assert_eq!(sr.unique_states, 13_722, "Stateright, strict");
    assert_eq!(tlc("MC_ext_write.cfg"), None);
}

#[test]
fn no_storage_fencing_breaks_write_order_but_not_linearizability_in_both() {
    // Finding 2 of `specs/concord/README.md`, on the Rust nodes too: no function read the
    // crashed owner's late write, so only storage's write order shows it.
    let sr = stateright(ConcordConfig::owner_crash().mutant("no_storage_fencing"));
    assert_eq!(sr.broken, vec![WRITE_ORDER], "Stateright");
    assert_eq!(tlc("MC_no_storage_fencing.cfg").as_deref(), Some(tla_name(WRITE_ORDER)));
    assert_eq!(tlc("MC_no_storage_fencing_history.cfg"), None);
}

#[test]
fn owner_reads_of_an_in_flight_write_break_linearizability_through_the_owners_crash_in_both() {
    // Finding 1 of `specs/concord/README.md`: paper-literal, a read at the owner's machine is
    // served from the owner's line while its direct write is in flight, and the owner's crash
    // loses that write. Strictly the read waits for storage's ack (`MC_owner_read` passes in
    // `tlc_concord.rs`); Stateright found this of the Rust model's strict rules before they had it.
    let mut paper = ConcordConfig::owner_read();
    paper.params = serde_json::json!({"strict": false});
    let sr = stateright(paper);
    assert_eq!(sr.broken, vec![LINEARIZABLE], "Stateright");
    assert_eq!(tlc("MC_owner_read_paper.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
    let sr = stateright(ConcordConfig::owner_read());
    assert_eq!(sr.broken, Vec::<&str>::new(), "Stateright, strict");
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
fn paper_literal_concurrent_upgrades_break_linearizability_in_both() {
    let sr = stateright(ConcordConfig::concurrent_upgrades().paper_literal());
    assert_eq!(sr.broken, vec![LINEARIZABLE], "Stateright");
    assert_eq!(tlc("MC_conc_upgrade_paper.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn paper_literal_upgrade_with_a_home_crash_mid_write_breaks_linearizability_in_both() {
    let sr = stateright(ConcordConfig::home_crash_write().paper_literal());
    assert_eq!(sr.broken, vec![LINEARIZABLE], "Stateright");
    assert_eq!(tlc("MC_home_crash_write_paper.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}

#[test]
fn paper_literal_directory_eviction_breaks_tracking_and_linearizability_in_both() {
    let sr = stateright(ConcordConfig::directory_eviction().paper_literal());
    assert!(sr.broken.contains(&TRACKED) && sr.broken.contains(&LINEARIZABLE), "Stateright: {:?}", sr.broken);
    assert_eq!(tlc("MC_dir_evict_paper.cfg").as_deref(), Some(tla_name(TRACKED)));
    assert_eq!(tlc("MC_dir_evict_paper_history.cfg").as_deref(), Some(tla_name(LINEARIZABLE)));
}
