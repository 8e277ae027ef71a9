//! What Boki's S5 and S14 scenarios are for, beyond their verdicts (`tests/scenario_expectations.rs`
//! checks those): seals on command really cut appends in flight, and auxiliary data lost to
//! eviction really lengthens replays while decisions stay right.

mod common;

#[test]
fn s5_seals_during_appends_fail_the_uncovered_appends_and_the_log_stays_consistent() {
    let r = common::run_checked(&common::load_scenario("boki", "s5-seal-during-appends.json"), 1, &[]);
    r.assert_passes("s5-seal-during-appends.json");
    let discarded = r.summary.transactions.get("write:aborted").copied().unwrap_or(0);
    let ordered = r.summary.transactions["write:ok"];
    assert!(discarded > 0 && ordered > discarded, "some appends in flight at a seal fail, most are ordered: {discarded} vs {ordered}");
    // Each new term goes to 4 engines, 3 storage nodes and 5 sequencers.
    let terms = r.summary.messages["NewTerm"].count / 12;
    assert!(terms >= 4, "a seal 20 ms after each installation, all through the run: {terms} new terms");
}

#[test]
fn s14_auxiliary_data_lost_to_eviction_only_lengthens_replays() {
    let replay = |cache_records: Option<u64>| {
        let mut loaded = common::load_scenario("boki", "s14-auxdata-loss.json");
        if let Some(c) = cache_records {
            loaded.scenario.protocol.params["cache_records"] = c.into();
        }
        let r = common::run_checked(&loaded, 1, &[]);
        r.assert_passes(&format!("s14 with cache_records {cache_records:?}"));
        r.summary.observations["store_replay_reads"].mean
    };
    let (small, large) = (replay(None), replay(Some(1_000_000)));
    assert!(small > 3.0 * large, "evicted decisions are made again from the log: {small:.0} vs {large:.0} reads per transaction");
}
