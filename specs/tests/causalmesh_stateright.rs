//! Stateright on CausalMesh: the `models/` nodes, unchanged, explored on an ordered network.
//!
//! Goal: the correct protocol (exact-version integration) satisfies every property with both
//! chains, at pinned state counts; each expressible mutant is caught, by the property its TLA+
//! counterpart reports first, along a pinned shortest path; judged by the history alone, each
//! mutant's counterexample is an anomaly the history checker names. Paths are found with one
//! thread (breadth first), so they are the same on every run.

use causim_models::causalmesh::Chain;
use causim_specs::causalmesh_model::{
    CAUSAL, COVER_DEPS, COVERAGE, CUT, MeshConfig, REMOTE_VISIBLE, anomalies, check, failing_properties, parse_scripts,
};
use causim_specs::causalmesh_replay::replay;
use stateright::Checker;

/// Checks `cfg` and returns (unique states, the failing `always` properties).
fn explore(cfg: &MeshConfig, threads: usize) -> (usize, Vec<&'static str>, impl Checker<causim_specs::causalmesh_model::MeshModel>) {
    let checker = check(cfg.clone().into_model().unwrap(), threads, true);
    let failing = failing_properties(&checker);
    (checker.unique_state_count(), failing, checker)
}

/// The counterexample (or example) to `property`, in words, and the anomalies the history
/// checker finds in its last state.
fn path(
    cfg: &MeshConfig,
    checker: &impl Checker<causim_specs::causalmesh_model::MeshModel>,
    property: &'static str,
) -> (Vec<String>, Vec<String>) {
    let p = checker.discovery(property).unwrap_or_else(|| panic!("no discovery for {property:?}"));
    let last = p.last_state().clone();
    (replay(cfg, "test", property, p).steps, anomalies(cfg, &last))
}

fn free(chain: Chain) -> MeshConfig {
    MeshConfig::free(2, 2, 2, 2, chain)
}

// ---------------------------------------------------------------------------------------------
// The protocol.

#[test]
fn causalmesh_two_round_chain_satisfies_every_property_with_an_intermediate_hop() {
    // Goal: 3 servers (every chain has an intermediate hop), 2 keys, 2 clients × 1 op, with the
    // two-round chain. The CI bounds of both chains with 2 servers (one-round: 2 keys,
    // 2 clients × 2 ops; two-round: 1 key) run in `agreement_causalmesh.rs`, next to TLC on
    // the same bounds. Two-round with 2 keys, 2 clients × 2 ops (about 2.7 M states) is a
    // manual run (`causim model-check causalmesh --chain two_round`).
    let cfg = MeshConfig::free(3, 2, 2, 1, Chain::TwoRound);
    let (unique, failing, checker) = explore(&cfg, 2);
    assert_eq!(failing, Vec::<&str>::new());
    assert!(checker.discovery(REMOTE_VISIBLE).is_some());
    // Pinned: a change of the protocol's state space shows up here as a diff.
    assert_eq!(unique, 2_620);
}

#[test]
fn causalmesh_a_remote_write_becomes_visible_once_its_tail_reveals_it() {
    // Goal: guard against vacuity, with the shortest example: c1 writes at S0, whose chain
    // ends at S1; S1 reveals it and c2 reads it there.
    let cfg = MeshConfig::free(2, 1, 2, 1, Chain::OneRound);
    let (_, _, checker) = explore(&cfg, 1);
    let (steps, _) = path(&cfg, &checker, REMOTE_VISIBLE);
    assert_eq!(
        steps,
        [
            "c1 picks w(k1)@S0",
            "c1/f0 → S0: ClientWrite k1=1 carrying 0 write(s)",
            "S0 → c1/f0: WriteReply k1 [1,0]",
            "S0 → S1: ServerWrite (head S0, round 1) k1@[1,0] carrying 0 write(s)",
            "c2 picks r(k1)@S1",
            "c2/f0 → S1: ClientRead k1",
            "S1 → c2/f0: ReadReply k1=1 [1,0]",
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Mutants, every property checked: the first property broken is the invariant TLC reports
// first for the same mutant (one-round chain, 2 servers, 2 keys, 2 clients × 2 ops), after as
// many steps as TLC's counterexample has actions (`tests/tlc_causalmesh.rs`): a step of the
// model is a whole client operation or one message between servers, as an action of the spec.

#[test]
fn causalmesh_mutants_break_the_property_their_tla_counterpart_breaks_first() {
    for (mutant, property, tla_actions) in [
        ("no_carry_local_writes", CAUSAL, 4),
        ("reveal_at_head", COVERAGE, 1),
        ("nearest_deps_only", CUT, 3),
        ("read_without_integration", COVER_DEPS, 4),
        ("integrate_by_vc_dominance", COVERAGE, 5),
    ] {
        let cfg = free(Chain::OneRound).mutant(mutant);
        let (_, failing, checker) = explore(&cfg, 1);
        assert_eq!(failing, [property], "{mutant}");
        assert_eq!(checker.discovery(property).unwrap().into_actions().len(), tla_actions, "{mutant}");
    }
}

// ---------------------------------------------------------------------------------------------
// Symmetry over sessions: the same verdicts, fewer states.

#[test]
fn causalmesh_symmetry_over_sessions_keeps_every_verdict_and_halves_the_states() {
    // Goal: the correct protocol passes and every mutant breaks the same property first, at
    // the same depth, with and without symmetry; on the CI bounds the symmetric model has
    // about half the states (two sessions: mirror states are one).
    let cfg = free(Chain::OneRound);
    let (plain, _, _) = explore(&cfg, 1);
    let symmetric = cfg.clone().symmetric();
    let (unique, failing, checker) = explore(&symmetric, 1);
    assert_eq!(failing, Vec::<&str>::new());
    assert!(checker.discovery(REMOTE_VISIBLE).is_some());
    assert_eq!((plain, unique), (104_185, 53_067));
    for mutant in ["no_carry_local_writes", "reveal_at_head", "nearest_deps_only", "read_without_integration", "integrate_by_vc_dominance"]
    {
        for cfg in [free(Chain::OneRound).mutant(mutant), free(Chain::OneRound).mutant(mutant).history_only()] {
            let (_, failing, checker) = explore(&cfg, 1);
            let symmetric = cfg.clone().symmetric();
            let (_, failing_sym, checker_sym) = explore(&symmetric, 1);
            assert_eq!(failing, failing_sym, "{mutant}");
            for property in failing {
                let steps =
                    |c: &dyn Checker<causim_specs::causalmesh_model::MeshModel>| c.discovery(property).unwrap().into_actions().len();
                assert_eq!(steps(&checker), steps(&checker_sym), "{mutant}: {property}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Mutants judged by the history alone: the counterexamples the history checker sees.

fn history_counterexample(mutant: &str) -> (Vec<String>, Vec<String>) {
    let cfg = free(Chain::OneRound).mutant(mutant).history_only();
    let (_, failing, checker) = explore(&cfg, 1);
    assert_eq!(failing, [CAUSAL], "{mutant}");
    path(&cfg, &checker, CAUSAL)
}

#[test]
fn causalmesh_mutant_no_carry_local_writes_reads_y_without_x() {
    // Goal: Fig. 6. y does not depend on x without the carried write, so S0 reveals y while
    // x is still on its way to S1 (its tail): a read transaction at S0 sees y and the initial x.
    let (steps, anomalies) = history_counterexample("no_carry_local_writes");
    assert_eq!(
        steps,
        [
            "c1 picks w(k2)@S0",
            "c1/f0 → S0: ClientWrite k2=1 carrying 0 write(s)",
            "S0 → c1/f0: WriteReply k2 [1,0]",
            "c1 picks w(k1)@S1",
            "c1/f1 → S1: ClientWrite k1=2 carrying 0 write(s)",
            "S1 → c1/f1: WriteReply k1 [0,1]",
            "S1 → S0: ServerWrite (head S1, round 1) k1@[0,1] carrying 0 write(s)",
            "c2 picks rt(k1+k2)@S0",
            "c2/f0 → S0: ClientReadTxn k1+k2",
            "S0 → c2/f0: ReadTxnReply k1=2 k2=initial",
        ]
    );
    assert_eq!(anomalies, ["WriteCOInitRead"]);
}

#[test]
fn causalmesh_mutant_reveal_at_head_loses_a_read_write_when_the_reader_moves() {
    // Goal: c2 reads c1's write at its head S0, moves to S1, which has not got it yet.
    let (steps, anomalies) = history_counterexample("reveal_at_head");
    assert_eq!(
        steps,
        [
            "c1 picks w(k1)@S0",
            "c1/f0 → S0: ClientWrite k1=1 carrying 0 write(s)",
            "S0 → c1/f0: WriteReply k1 [1,0]",
            "c2 picks r(k1)@S0",
            "c2/f0 → S0: ClientRead k1",
            "S0 → c2/f0: ReadReply k1=1 [1,0]",
            "c2 picks r(k1)@S1",
            "c2/f1 → S1: ClientRead k1",
            "S1 → c2/f1: ReadReply k1=initial [0,0]",
        ]
    );
    assert_eq!(anomalies, ["WriteCOInitRead"]);
}

#[test]
fn causalmesh_mutant_nearest_deps_only_reveals_y_without_the_x_it_carries() {
    // Goal: y carries x, but y's tail integrates y alone: a read transaction sees y without x.
    let (steps, anomalies) = history_counterexample("nearest_deps_only");
    assert_eq!(
        steps,
        [
            "c1 picks w(k2)@S0",
            "c1/f0 → S0: ClientWrite k2=1 carrying 0 write(s)",
            "S0 → c1/f0: WriteReply k2 [1,0]",
            "c1 picks w(k1)@S1",
            "c1/f1 → S1: ClientWrite k1=2 carrying 1 write(s)",
            "S1 → c1/f1: WriteReply k1 [1,1]",
            "S1 → S0: ServerWrite (head S1, round 1) k1@[1,1] carrying 1 write(s)",
            "c2 picks rt(k1+k2)@S0",
            "c2/f0 → S0: ClientReadTxn k1+k2",
            "S0 → c2/f0: ReadTxnReply k1=2 k2=initial",
        ]
    );
    assert_eq!(anomalies, ["WriteCOInitRead"]);
}

#[test]
fn causalmesh_mutant_read_without_integration_serves_an_older_version_after_a_move() {
    // Goal: c2 reads c1's write at its tail S1, moves to S0 (the head, where the write waits in
    // the I-cache) and reads without integrating its deps: the initial value.
    let (steps, anomalies) = history_counterexample("read_without_integration");
    assert_eq!(
        steps,
        [
            "c1 picks w(k1)@S0",
            "c1/f0 → S0: ClientWrite k1=1 carrying 0 write(s)",
            "S0 → c1/f0: WriteReply k1 [1,0]",
            "S0 → S1: ServerWrite (head S0, round 1) k1@[1,0] carrying 0 write(s)",
            "c2 picks r(k1)@S1",
            "c2/f0 → S1: ClientRead k1",
            "S1 → c2/f0: ReadReply k1=1 [1,0]",
            "c2 picks r(k1)@S0",
            "c2/f1 → S0: ClientRead k1",
            "S0 → c2/f1: ReadReply k1=initial [0,0]",
        ]
    );
    assert_eq!(anomalies, ["WriteCOInitRead"]);
}

/// The script under which integration by VC dominance shows in a history: c1 writes x then y
/// at S0; c2 writes z (y's key) at S0 and z' at S1, carrying z; c3 reads x at S0, then at S1.
pub const DOMINANCE_SCRIPT: &str = "w(k1)@S0, w(k2)@S0; w(k2)@S0, w(k2)@S1; r(k1)@S0, r(k1)@S1";

#[test]
fn causalmesh_integration_by_vc_dominance_shows_a_stale_read_to_a_third_client() {
    // Goal: with free choice, 2 clients × 2 ops are too few for a client to see the early
    // reveal (it breaks "a revealed write is everywhere"; TLC agrees on the same bounds). With
    // three scripted sessions it shows: z''s tail S0 integrates "every version of y's key up
    // to z", which pulls c1's y and, through y's deps, x, while x is still on its way to S1;
    // c3 reads x at S0, then the initial x at S1.
    let scripts = parse_scripts(DOMINANCE_SCRIPT).unwrap();
    let cfg = MeshConfig::scripted(2, 2, scripts.clone(), Chain::OneRound).mutant("integrate_by_vc_dominance").history_only();
    let (unique, failing, checker) = explore(&cfg, 1);
    assert_eq!(failing, [CAUSAL]);
    let (steps, anomalies) = path(&cfg, &checker, CAUSAL);
    assert_eq!(
        steps,
        [
            "c1/f0 → S0: ClientWrite k1=1 carrying 0 write(s)",
            "S0 → c1/f0: WriteReply k1 [1,0]",
            "c1/f1 → S0: ClientWrite k2=2 carrying 1 write(s)",
            "S0 → c1/f1: WriteReply k2 [2,0]",
            "c2/f0 → S0: ClientWrite k2=3 carrying 0 write(s)",
            "S0 → c2/f0: WriteReply k2 [3,0]",
            "c2/f1 → S1: ClientWrite k2=4 carrying 1 write(s)",
            "S1 → c2/f1: WriteReply k2 [3,1]",
            "S1 → S0: ServerWrite (head S1, round 1) k2@[3,1] carrying 1 write(s)",
            "c3/f0 → S0: ClientRead k1",
            "S0 → c3/f0: ReadReply k1=1 [1,0]",
            "c3/f1 → S1: ClientRead k1",
            "S1 → c3/f1: ReadReply k1=initial [0,0]",
        ]
    );
    assert_eq!(anomalies, ["WriteCOInitRead"]);
    assert_eq!(unique, 350);

    // The same script with exact versions, and with the two-round chain: no anomaly.
    for (chain, mutants, pinned) in
        [(Chain::OneRound, vec![], 335), (Chain::TwoRound, vec![], 2_403), (Chain::TwoRound, vec!["integrate_by_vc_dominance"], 2_415)]
    {
        let mut cfg = MeshConfig::scripted(2, 2, scripts.clone(), chain);
        for m in &mutants {
            cfg = cfg.mutant(m);
        }
        let (unique, failing, _) = explore(&cfg, 1);
        assert_eq!(failing, Vec::<&str>::new(), "{chain:?} {mutants:?}");
        assert_eq!(unique, pinned, "{chain:?} {mutants:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The search's own stepping.

#[test]
fn causalmesh_steps_taken_in_place_are_the_actor_models_steps() {
    // Goal: the search takes each step on one copy of the state instead of Stateright's copy
    // per actor step; from every reachable state of the CI bounds (both chains) every step
    // reaches exactly the state the actor model's own steps reach.
    use stateright::Model as _;
    use std::collections::{HashSet, VecDeque};
    use std::hash::{BuildHasher, RandomState};
    for (cfg, pinned) in [(free(Chain::OneRound), 104_185), (MeshConfig::free(2, 1, 2, 2, Chain::TwoRound), 24_857)] {
        let model = cfg.into_model().unwrap();
        let hasher = RandomState::new();
        let mut seen = HashSet::new();
        let mut queue: VecDeque<_> = model.init_states().into();
        let mut actions = Vec::new();
        while let Some(state) = queue.pop_front() {
            if !seen.insert(hasher.hash_one(&state)) {
                continue;
            }
            if let Err(why) = model.steps_in_place_agree(&state) {
                panic!("{why}\nfrom {state:?}");
            }
            model.actions(&state, &mut actions);
            queue.extend(actions.drain(..).filter_map(|a| model.next_state(&state, a)));
        }
        assert_eq!(seen.len(), pinned);
    }
}
