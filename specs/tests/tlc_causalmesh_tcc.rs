//! TLC on CausalMesh-TCC's spec (`specs/causalmesh_tcc/CausalMeshTCC.tla`), for real.
//!
//! Goal: with its cut test taken over whole causal pasts, the protocol keeps every C-cache a
//! causal cut, accepts only joins whose branches read a cut, and every committed workflow
//! reads a causal snapshot; every workflow ends under weak fairness. The join bug the fuzzer
//! found (issue 13: a join that compares direct dependencies only) is caught, as is the
//! other mutant the spec expresses, and Fig. 11's cut test taken literally (direct
//! dependencies) admits the same fracture, in a join and in a chain. Witnesses show aborts
//! and remote reads are reachable. One TLC worker, so counterexamples are the same on every
//! run. Figures: `specs/README.md`.

use causim_specs::tlc::{TlcRun, Verdict, testing};

/// The configs run `MC_plans`, which extends the spec with the workflows they use.
const MODULE: &str = "MC_plans";

fn tlc(config: &str) -> TlcRun {
    testing::run("causalmesh_tcc", MODULE, config, &testing::options())
}

fn expect_violation(config: &str, invariant: &str, actions: &[&str]) {
    testing::assert_counterexample(&tlc(config), config, invariant, actions);
}

/// t1 commits x and c, t2 reads x (t1's) and commits a newer x, each batch integrated by its
/// tail; then t3 has read the initial c (at a server t1 had not reached) and reads t2's x.
const FRACTURE_ONE_WRITE_AWAY: [&str; 9] =
    ["Read", "ChainDone", "Commit", "TailIntegrate", "Read", "ChainDone", "Commit", "TailIntegrate", "Read"];

#[test]
fn causalmesh_tcc_keeps_every_invariant_with_joins_and_chains() {
    // Pinned: a change in the spec's state space shows up here as a diff.
    for (config, states) in [("MC_join.cfg", 1_036), ("MC_join_ring2.cfg", 344), ("MC_chain.cfg", 683)] {
        let run = tlc(config);
        assert_eq!(run.verdict, Verdict::Ok, "{config}: {}", run.output);
        assert_eq!(run.distinct_states, states, "{config}");
    }
}

#[test]
fn causalmesh_tcc_workflows_end_under_fairness() {
    let run = tlc("MC_join_liveness.cfg");
    assert_eq!(run.verdict, Verdict::Ok, "{}", run.output);
    assert_eq!(run.distinct_states, 1_036);
}

#[test]
fn causalmesh_tcc_mutant_join_checks_direct_deps_accepts_a_fractured_join() {
    // The join's server compares each write read with its direct dependencies only: t2's x
    // depends on t1's x, not on t1's c, so the union {t2's x, initial c} passes.
    let mut join = FRACTURE_ONE_WRITE_AWAY.to_vec();
    join.push("ValidateJoin");
    expect_violation("MC_join_checks_direct_deps.cfg", "AcceptedJoinsAreCuts", &join);
    // And what clients see: the workflow commits a fractured snapshot.
    join.push("Commit");
    expect_violation("MC_join_checks_direct_deps_history.cfg", "TxnsReadCausalSnapshots", &join);
}

#[test]
fn causalmesh_tcc_mutant_tcc_ignores_cut_reads_a_fractured_snapshot() {
    // t3 reads the initial c, then the newest x, t1's, whose batch holds a newer c.
    expect_violation(
        "MC_tcc_ignores_cut.cfg",
        "TxnsReadCausalSnapshots",
        &["Read", "ChainDone", "Commit", "TailIntegrate", "Read", "ChainDone", "Commit"],
    );
}

#[test]
fn fig11_cut_test_taken_literally_admits_a_fracture_one_write_away() {
    // Fig. 11 line 18 checks the versions read against each other's direct dependencies: in
    // a chain, reading t2's x after the initial c passes it.
    let mut chain = FRACTURE_ONE_WRITE_AWAY.to_vec();
    chain.extend(["ChainDone", "Commit"]);
    expect_violation("MC_direct_reads.cfg", "TxnsReadCausalSnapshots", &chain);
    // At a join, the literal test is the mutant's.
    let mut join = FRACTURE_ONE_WRITE_AWAY.to_vec();
    join.push("ValidateJoin");
    expect_violation("MC_direct_join.cfg", "AcceptedJoinsAreCuts", &join);
}

#[test]
fn causalmesh_tcc_witnesses_aborts_and_remote_reads_are_reachable() {
    // A join aborts: a branch read t1's x, the other the initial c.
    expect_violation("MC_witness_abort.cfg", "NotTxnAborted", &["Read", "ChainDone", "Commit", "TailIntegrate", "Read", "ValidateJoin"]);
    let run = tlc("MC_witness_remote.cfg");
    assert_eq!(run.verdict, Verdict::InvariantViolated { name: "NotRemoteRead".into() }, "{}", run.output);
}
