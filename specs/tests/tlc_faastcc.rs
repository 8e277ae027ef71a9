//! TLC on FaaSTCC's spec (`specs/faastcc/FaaSTCC.tla`), for real.
//!
//! Goal: with promises one below the next version, narrowing and the fan-in intersection, every
//! cached promise is kept, every branch's interval lies inside the validity of what it read,
//! and every committed workflow read one snapshot of the store (Argument 1); each of the Rust
//! model's three mutants, which the spec expresses, makes a committed workflow read two
//! snapshots, with a counterexample of the actions we expect; witnesses show an abort and a
//! read of a new version are reachable. One TLC worker. Figures: `specs/README.md`.

use causim_specs::tlc::{TlcRun, Verdict, testing};

/// The configs run `MC_plans`, which extends the spec with the workflows they use.
const MODULE: &str = "MC_plans";

fn tlc(config: &str) -> TlcRun {
    testing::run("faastcc", MODULE, config, &testing::options())
}

fn expect_violation(config: &str, invariant: &str, actions: &[&str]) {
    testing::assert_counterexample(&tlc(config), config, invariant, actions);
}

#[test]
fn faastcc_keeps_every_invariant() {
    // Pinned: a change in the spec's state space shows up here as a diff.
    for (config, states, depth) in [("MC_chain.cfg", 48, 9), ("MC_fanout.cfg", 63, 9), ("MC_promise.cfg", 4_618, 17)] {
        let run = tlc(config);
        assert_eq!(run.verdict, Verdict::Ok, "{config}: {}", run.output);
        assert_eq!((run.distinct_states, run.depth), (states, Some(depth)), "{config}");
    }
}

#[test]
fn faastcc_mutant_promise_off_by_one_serves_a_replaced_version_next_to_its_successor() {
    // t0 and t1 commit; a push brings z; t3's read of x at the snapshot of z's version, after
    // t1 replaced x, is promised up to t1's timestamp itself.
    expect_violation("MC_promise_off_by_one.cfg", "PromisesKept", &["Join", "Join", "Commit", "Push", "Read", "Commit", "Read"]);
    // What clients see: t2 reads t1's y at the other worker, then the replaced x from that
    // cache entry, inside its interval.
    let actions = ["Join", "Join", "Commit", "Push", "Read", "Commit", "Read", "Push", "Read", "Read", "Join", "Commit"];
    expect_violation("MC_promise_off_by_one_history.cfg", "TxnsReadOneSnapshot", &actions);
}

#[test]
fn faastcc_mutant_no_interval_narrowing_reads_half_a_transaction() {
    // t2 reads the initial y, t1 commits x and y, a push brings x: without narrowing, t2 takes it.
    expect_violation("MC_no_interval_narrowing.cfg", "TxnsReadOneSnapshot", &["Read", "Join", "Commit", "Push", "Read", "Join", "Commit"]);
}

#[test]
fn faastcc_mutant_no_fanin_merge_joins_incompatible_branches() {
    // One branch read the initial y, the other t1's x: the intersection is empty, but the
    // mutant starts from the first branch's interval and commits.
    expect_violation("MC_no_fanin_merge.cfg", "TxnsReadOneSnapshot", &["Read", "Join", "Commit", "Push", "Read", "Join", "Commit"]);
}

#[test]
fn faastcc_witnesses_an_abort_and_a_new_version_are_reachable() {
    expect_violation("MC_witness_abort.cfg", "NotTxnAborted", &["Read", "Join", "Commit", "Push", "Read", "Join"]);
    let run = tlc("MC_witness_new.cfg");
    assert_eq!(run.verdict, Verdict::InvariantViolated { name: "NotReadNewVersion".into() }, "{}", run.output);
}
