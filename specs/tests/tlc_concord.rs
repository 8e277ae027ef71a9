//! TLC on Concord's spec (`specs/concord/Concord.tla`), for real.
//!
//! Goal: under the strict rules the directory protocol keeps SWMR (I1), every valid copy
//! tracked by its home (I2/I3), failure fencing (I7), write ordering at storage (I8) and
//! per-key linearizability of what the functions observe, on every plan, with silent and
//! directory evictions and a crash of any agent the plan allows; it never deadlocks, and every
//! call ends under weak fairness. Each mutant of the Rust model the spec expresses breaks the
//! invariant we expect, and linearizability too, with a counterexample of the actions we
//! expect; so do the paper-literal rules (A1 S-upgrades, A12 directory eviction without recall,
//! A11 external writes applied at storage before the home invalidates, and the owner's reads of
//! its own in-flight write with a crash). One agent may leave the
//! domain instead (§III-D): the strict protocol passes through it, and the Rust model's two
//! domain-change mutants break directory coverage and linearizability. One TLC worker, so
//! counterexamples are the same on every run. Figures: `specs/README.md`.

use causim_specs::tlc::{TlcRun, Verdict, testing};

/// The configs run `MC_plans`, which extends the spec with the functions' plans.
const MODULE: &str = "MC_plans";

fn tlc(config: &str) -> TlcRun {
    testing::run("concord", MODULE, config, &testing::options())
}

fn expect_violation(config: &str, invariant: &str, actions: &[&str]) {
    testing::assert_counterexample(&tlc(config), config, invariant, actions);
}

/// Agent 1 reads x (a miss: E at 1), the first part of most counterexamples.
const MISS_AT_1: [&str; 5] = ["ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData"];

fn then(prefix: &[&'static str], rest: &[&'static str]) -> Vec<&'static str> {
    prefix.iter().chain(rest).copied().collect()
}

/// Pinned: a change in the spec's state space shows up here as a diff.
fn expect_pass(configs: &[(&str, u64, u64)]) {
    for &(config, states, depth) in configs {
        let run = tlc(config);
        assert_eq!(run.verdict, Verdict::Ok, "{config}: {}", run.output);
        assert_eq!((run.distinct_states, run.depth), (states, Some(depth)), "{config}");
    }
}

#[test]
fn concord_strict_keeps_every_invariant_without_deadlock() {
    expect_pass(&[
        ("MC_upgrade.cfg", 43_935, 40),
        ("MC_owner.cfg", 14_467, 25),
        ("MC_owner_inv.cfg", 9_041, 40),
        ("MC_two_keys.cfg", 11_253, 29),
    ]);
}

#[test]
fn concord_strict_keeps_every_invariant_through_a_crash() {
    expect_pass(&[
        ("MC_race.cfg", 12_694, 34),
        ("MC_home_crash.cfg", 6_538, 33),
        ("MC_owner_crash.cfg", 11_464, 30),
        ("MC_owner_read.cfg", 7_479, 23),
        ("MC_home_crash_write.cfg", 17_248, 28),
    ]);
}

#[test]
fn concord_strict_keeps_every_invariant_through_a_departure() {
    // MC_leave: x's home leaves (its entries move to its successor, c1's machine, which holds
    // c1's copy); MC_leave_any: any agent leaves, with directory evictions too.
    expect_pass(&[("MC_leave.cfg", 4_365, 30), ("MC_leave_any.cfg", 15_098, 30)]);
}

#[test]
#[ignore = "about a minute: run with --ignored"]
fn concord_strict_keeps_every_invariant_with_two_s_upgrades_at_once() {
    // A2: both sharers upgrade; the one serialized second is invalidated and goes on as a write
    // from I. Four functions, so the largest space here.
    expect_pass(&[("MC_conc_upgrade.cfg", 84_711, 35)]);
}

#[test]
fn concord_calls_complete_under_fairness_through_a_home_crash() {
    let run = tlc("MC_liveness.cfg");
    assert_eq!(run.verdict, Verdict::Ok, "{}", run.output);
    assert_eq!(run.distinct_states, 2_992);
}

#[test]
fn concord_calls_complete_under_fairness_through_a_departure() {
    let run = tlc("MC_liveness_leave.cfg");
    assert_eq!(run.verdict, Verdict::Ok, "{}", run.output);
    assert_eq!(run.distinct_states, 2_418);
}

/// Agent 1 reads x (E at 1, homed at 3), then agent 3 leaves and the first barrier passes.
const MISS_THEN_LEAVE: [&str; 7] = ["ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "Leave", "LeaveSync1"];

#[test]
fn concord_mutant_leave_without_migration_loses_the_entries_of_the_leavers_keys() {
    // The successor installs nothing: agent 1's E copy is tracked by no entry.
    expect_violation(
        "MC_leave_without_migration.cfg",
        "DirectoryCoversCopies",
        &then(&MISS_THEN_LEAVE, &["LeaveHandOver", "LeaveInstall"]),
    );
    // Agent 2's write then misses at the new home, invalidates nothing, and agent 1 reads the
    // initial value after it completed.
    let seen = then(
        &MISS_THEN_LEAVE,
        &["WriteReq", "LeaveHandOver", "LeaveInstall", "HomeRecv", "StoragePut", "HomeStAck", "CacheWrAck", "ReadHit"],
    );
    expect_violation("MC_leave_without_migration_history.cfg", "Linearizable", &seen);
}

#[test]
fn concord_mutant_serve_before_entries_makes_two_homes_at_once() {
    // After the first barrier the successor serves agent 1's read miss with no entry, while
    // the leaver's entries still track x: a split directory.
    let split = ["Leave", "LeaveSync1", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData"];
    expect_violation("MC_serve_before_entries.cfg", "DirectoryCoversCopies", &split);
    // Agent 1's copy came from the leaver; the successor lets agent 2's write through before
    // the entries arrive, invalidating nothing, and agent 1 reads the initial value.
    let seen = then(&MISS_THEN_LEAVE, &["WriteReq", "HomeRecv", "StoragePut", "HomeStAck", "CacheWrAck", "ReadHit"]);
    expect_violation("MC_serve_before_entries_history.cfg", "Linearizable", &seen);
}

#[test]
fn concord_mutant_no_owner_deferral_serves_a_write_storage_does_not_hold_yet() {
    // Agent 1 owns x and writes 1 directly; agent 2's read is forwarded to it and answered at
    // once with 1; then agent 3 (the home) reads storage, which still holds the initial value.
    let actions = then(
        &["ReadReq", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "OwnerWrite", "HomeRecv"],
        &["OwnerFwdRd", "HomeFwdData", "CacheData", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData"],
    );
    expect_violation("MC_no_owner_deferral.cfg", "Linearizable", &actions);
}

#[test]
fn concord_mutant_inv_parallel_with_put_lets_the_owners_write_land_last() {
    // Agent 1 owns x and writes 1 directly; agent 2's write of 2 at the home invalidates it in
    // parallel with writing storage, and storage applies 2 before 1.
    let reorder = then(
        &["ReadReq", "WriteReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData"],
        &["OwnerWrite", "HomeRecv", "StoragePut", "StoragePut"],
    );
    expect_violation("MC_inv_parallel_with_put.cfg", "WriteOrder", &reorder);
    // What clients see: agent 2 reads its 2, evicts it, and agent 1 then reads 1 from storage.
    let seen = then(
        &reorder,
        &[
            "OwnerStAck",
            "CacheInv",
            "HomeInvAck",
            "HomeStAck",
            "CacheWrAck",
            "ReadReq",
            "ReadHit",
            "HomeRecv",
            "Evict",
            "OwnerFwdRd",
            "HomeFwdData",
            "StorageGet",
            "HomeStData",
            "CacheData",
        ],
    );
    expect_violation("MC_inv_parallel_with_put_history.cfg", "Linearizable", &seen);
}

#[test]
fn concord_mutant_non_blocking_directory_installs_a_stale_read_in_e() {
    // Agent 1's read miss reads storage; agent 2's write starts at once, and ends; the read's
    // stale answer then overwrites the entry and agent 1 holds the old value in E.
    let race = ["ReadReq", "WriteReq", "HomeRecv", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "StoragePut", "HomeStAck"];
    expect_violation("MC_non_blocking_directory.cfg", "DirectoryCoversCopies", &race);
    expect_violation("MC_non_blocking_directory_history.cfg", "Linearizable", &then(&race, &["CacheWrAck", "ReadHit"]));
}

#[test]
fn concord_mutant_no_failure_eviction_keeps_copies_the_lost_directory_tracked() {
    let crash = then(&MISS_AT_1, &["Crash", "Detect", "Recover"]);
    expect_violation("MC_no_failure_eviction.cfg", "FailureFencing", &crash);
    // After recovery agent 2's write misses at the new home, invalidates nothing, and agent 1
    // still reads the initial value.
    let seen = then(&crash, &["Recover", "EndRecovery", "WriteReq", "HomeRecv", "StoragePut", "HomeStAck", "CacheWrAck", "ReadHit"]);
    expect_violation("MC_no_failure_eviction_history.cfg", "Linearizable", &seen);
}

#[test]
fn concord_mutant_no_storage_fencing_applies_a_crashed_owners_write_last() {
    let actions = then(
        &["ReadReq", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "OwnerWrite", "Crash", "Detect"],
        &["Recover", "EndRecovery", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "OwnerWrite", "StoragePut", "StoragePut"],
    );
    expect_violation("MC_no_storage_fencing.cfg", "WriteOrder", &actions);
    // Finding: no function read the lost write, so the late write is only a write that took
    // effect late: the history stays linearizable (the owner's colocated reads wait, strictly).
    let run = tlc("MC_no_storage_fencing_history.cfg");
    assert_eq!(run.verdict, Verdict::Ok, "{}", run.output);
    assert_eq!(run.distinct_states, 11_491);
}

#[test]
fn concord_paper_literal_upgrade_shows_a_value_before_it_is_serialized() {
    // A1: agent 1 (E) and agent 2 share x; c1 writes 1 at agent 1, whose line takes it at once:
    // c2 reads 1 there, then c3 reads the initial value at agent 2.
    let actions = then(
        &["ReadReq", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "HomeRecv", "OwnerFwdRd"],
        &["WriteReq", "ReadHit", "HomeFwdData", "CacheData", "ReadHit"],
    );
    expect_violation("MC_upgrade_paper.cfg", "Linearizable", &actions);
}

#[test]
fn concord_paper_literal_concurrent_upgrades_show_values_before_they_are_serialized() {
    // A2 with the paper-literal rule: c1 at agent 1 (E) and c2 at the home share x; c1's
    // upgrade shows 1 at agent 1 (c3 reads it) while the home still serves the initial value
    // (c4 reads it): the A1 pattern, found before any interleaving of the two upgrades.
    let actions = then(
        &["ReadReq", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "HomeRecv", "OwnerFwdRd"],
        &["WriteReq", "ReadHit", "HomeFwdData", "CacheData", "ReadHit"],
    );
    expect_violation("MC_conc_upgrade_paper.cfg", "Linearizable", &actions);
}

#[test]
fn concord_paper_literal_upgrade_shows_a_value_the_crashed_home_never_stored() {
    // A6: c1's S-upgrade shows 1 at agent 1 (c2 reads it); the home crashes before serializing
    // it (the write fails, its outcome unknown), and after recovery c2 reads the initial value
    // from storage: 1 appeared, then disappeared. Strictly, MC_home_crash_write passes.
    let actions = then(
        &["ReadReq", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData", "HomeRecv", "OwnerFwdRd", "WriteReq", "ReadHit"],
        &["Crash", "Detect", "Recover", "EndRecovery", "ReadReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData"],
    );
    expect_violation("MC_home_crash_write_paper.cfg", "Linearizable", &actions);
}

#[test]
fn concord_paper_literal_directory_eviction_leaves_copies_untracked() {
    // A12: the home drops agent 1's entry without recalling its copy.
    expect_violation("MC_dir_evict_paper.cfg", "DirectoryCoversCopies", &then(&MISS_AT_1, &["DirEvict"]));
    // Agent 2's write then misses, invalidates nothing, and agent 1 reads the initial value.
    let seen = then(
        &["ReadReq", "WriteReq", "HomeRecv", "StorageGet", "HomeStData", "CacheData"],
        &["DirEvict", "HomeRecv", "StoragePut", "HomeStAck", "CacheWrAck", "ReadHit"],
    );
    expect_violation("MC_dir_evict_paper_history.cfg", "Linearizable", &seen);
}

#[test]
fn concord_external_writes_through_the_home_keep_every_invariant() {
    // A11 strict (`external_through_home`): an external application's write reaches x's home
    // through storage's listener and the controller, and the home writes it like a function's
    // write, beside an E owner's direct write and a reader at the home.
    expect_pass(&[("MC_ext_write.cfg", 33_910, 30)]);
}

#[test]
fn concord_paper_literal_external_write_leaves_a_stale_copy_after_it_completed() {
    // A11 †: c1 owns x and writes 1 (stored); storage applies the external write of 2 and
    // acknowledges it at once, and c1 still reads 1 from its line before the home's
    // invalidation arrives.
    let seen = then(&MISS_AT_1, &["OwnerWrite", "StoragePut", "OwnerStAck", "ExtWrite", "ReadHit"]);
    expect_violation("MC_ext_write_paper_history.cfg", "Linearizable", &seen);
    // Storage's order too: the external write lands while the owner's direct write is on the
    // wire, which then lands after it.
    expect_violation("MC_ext_write_paper.cfg", "WriteOrder", &then(&MISS_AT_1, &["OwnerWrite", "ExtWrite", "StoragePut"]));
}

#[test]
fn concord_paper_literal_owner_reads_of_an_in_flight_write_break_with_a_crash_fenced_or_not() {
    // c2 reads c1's write 1 at the owner before storage has it; the owner crashes, storage
    // fences its write (or, unfenced, it is still on the wire), and after recovery c3 reads the
    // initial value from storage.
    let actions = then(
        &MISS_AT_1,
        &[
            "OwnerWrite",
            "ReadHit",
            "ReadReq",
            "Crash",
            "Detect",
            "Recover",
            "EndRecovery",
            "HomeRecv",
            "StorageGet",
            "HomeStData",
            "CacheData",
        ],
    );
    expect_violation("MC_owner_read_paper.cfg", "Linearizable", &actions);
    expect_violation("MC_owner_read_paper_unfenced.cfg", "Linearizable", &actions);
}
