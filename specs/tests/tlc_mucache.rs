//! TLC on MuCache's spec (`specs/mucache/MuCache.tla`), for real.
//!
//! Goal: on a chain (reads through F → M → B → A, a write at B) and on
//! Fig. 4's diamond, every finished request is equivalent to a cache-free execution and every
//! cache entry equals a cache-free evaluation once nothing is in flight; each of the Rust
//! model's mutants the spec expresses breaks one of the two, with the counterexample we
//! expect; Fig. 5 read literally (a refused save tells nobody, X11) leaves a stale entry for
//! good; a witness shows hits happen. One TLC worker. Figures: `specs/mucache/README.md`.

use causim_specs::tlc::{TlcRun, Verdict, testing};

/// The configs run `MC_apps`, which extends the spec with the applications they use.
const MODULE: &str = "MC_apps";

fn tlc(config: &str) -> TlcRun {
    testing::run("mucache", MODULE, config, &testing::options())
}

fn expect_violation(config: &str, invariant: &str, actions: &[&str]) {
    testing::assert_counterexample(&tlc(config), config, invariant, actions);
}

/// r's request runs the chain down to B, which reads k and calls A; w's write lands while
/// B.get waits for A; every request returns.
const READ_WRITE_RETURN: [&str; 12] =
    ["ClientStart", "ClientStart", "Call", "Call", "Read", "Call", "Return", "Write", "Return", "Return", "Return", "Return"];

#[test]
fn mucache_keeps_every_invariant_on_the_chain_and_the_diamond() {
    // Pinned: a change in the spec's state space shows up here as a diff.
    for (config, states, depth) in [("MC_chain.cfg", 102_108, 46), ("MC_chain_one_read.cfg", 2_852, 26), ("MC_diamond.cfg", 19_307, 36)] {
        let run = tlc(config);
        assert_eq!(run.verdict, Verdict::Ok, "{config}: {}", run.output);
        assert_eq!((run.distinct_states, run.depth), (states, Some(depth)), "{config}");
    }
}

#[test]
fn mucache_mutant_visited_checks_off_hits_an_entry_that_misses_the_requests_own_write() {
    // r fills S1's cache with S3.get; u writes k through S2, then hits that entry (Fig. 4).
    let actions = [
        "ClientStart",
        "ClientStart",
        "Call",
        "Call",
        "Read",
        "Return",
        "Return",
        "Return",
        "Call",
        "Call",
        "Write",
        "Return",
        "Return",
        "CMStep",
        "CMStep",
        "Deliver",
        "Call",
        "Return",
    ];
    expect_violation("MC_visited_checks_off.cfg", "CacheFreeEquivalent", &actions);
}

#[test]
fn mucache_mutant_start_at_return_saves_a_read_the_write_invalidated() {
    // B.get's Start reaches CM_B after w's Inv(k): nothing vetoes its save (Fig. 20).
    let actions: Vec<&str> = READ_WRITE_RETURN.iter().copied().chain(["CMStep"; 7]).chain(["Deliver"; 3]).collect();
    expect_violation("MC_start_at_return.cfg", "QuiescentCoherence", &actions);
}

#[test]
fn mucache_mutant_inv_before_write_saves_a_read_between_the_inv_and_the_write() {
    // w queues Inv(k), r's B.get starts and reads the old k, then the write takes effect.
    let actions = [
        "ClientStart",
        "ClientStart",
        "Call",
        "Write",
        "Call",
        "Read",
        "Call",
        "Return",
        "Return",
        "Return",
        "Return",
        "Write",
        "Return",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "Deliver",
        "Deliver",
        "Deliver",
    ];
    expect_violation("MC_inv_before_write.cfg", "QuiescentCoherence", &actions);
}

#[test]
fn mucache_mutant_caller_side_save_lands_after_the_inv_that_should_delete_it() {
    // Fig. 6: M keeps B.get's response; the Inv overtakes it; then F's save of M.get does too.
    let actions = [
        "ClientStart",
        "ClientStart",
        "Call",
        "Call",
        "Read",
        "Call",
        "Return",
        "Return",
        "Return",
        "Return",
        "Write",
        "Return",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "LandSave",
        "LandSave",
        "Deliver",
        "CMStep",
        "LandSave",
        "Deliver",
        "CMStep",
    ];
    expect_violation("MC_caller_side_save.cfg", "QuiescentCoherence", &actions);
}

#[test]
fn mucache_mutant_non_fifo_save_lets_an_inv_overtake_the_save() {
    let actions = [
        "ClientStart",
        "ClientStart",
        "Call",
        "Call",
        "Read",
        "Call",
        "Return",
        "Return",
        "Write",
        "Return",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "CMStep",
        "Deliver",
        "Return",
        "Return",
        "CMStep",
        "CMStep",
        "Deliver",
        "CMStep",
        "Deliver",
        "Deliver",
    ];
    expect_violation("MC_non_fifo_save.cfg", "QuiescentCoherence", &actions);
}

#[test]
fn mucache_fig5_read_literally_leaves_a_stale_entry_after_a_refused_save() {
    // X11: CM_B refuses B.get's save (w wrote k while it ran) and tells nobody; CM_M saves
    // M.get, computed from that response, at F with a dependency on B.get only. (X2, the
    // other literal reading, needs two reads: `MC_fig5_inv_when_processed.cfg`, manual.)
    let actions: Vec<&str> = READ_WRITE_RETURN.iter().copied().chain(["CMStep"; 7]).chain(["Deliver"; 2]).collect();
    expect_violation("MC_fig5_refusal.cfg", "QuiescentCoherence", &actions);
}

#[test]
fn mucache_witness_a_hit_is_reachable() {
    let actions = [
        "ClientStart",
        "Call",
        "Call",
        "Read",
        "Call",
        "Return",
        "Return",
        "Return",
        "Return",
        "ClientStart",
        "CMStep",
        "CMStep",
        "Deliver",
        "Call",
    ];
    expect_violation("MC_witness_hit.cfg", "NotHit", &actions);
}
