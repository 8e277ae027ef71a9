//! Boki's libraries on the shared log: BokiStore's Fig. 9 outcomes and counter test, BokiFlow's
//! re-execution, duplicate instances and lock race (S9), and each library over many seeds (BokiFlow with
//! function-node crashes, its point; BokiQueue and BokiStore refuse them, so they run generated
//! workloads without faults).
//!
//! 100 seeds per library by default; `CAUSIM_SEEDS=1000 cargo test --release --test
//! boki_libraries` for more.

mod common;

use causim_sim::config::CrashConfig;

fn seeds() -> u64 {
    std::env::var("CAUSIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(100)
}

fn run(file: &str) -> common::CheckedRun {
    common::run_checked(&common::load_scenario("boki", file), 1, &[])
}

/// The value a transaction line wrote to `key`.
fn written(t: &serde_json::Value, key: &str) -> u64 {
    t["ops"].as_array().unwrap().iter().find(|o| o["f"] == "w" && o["key"] == key).unwrap()["value"].as_u64().unwrap()
}

#[test]
fn bokistore_fig9_b_aborts_for_a_c_commits_past_the_aborted_b_and_the_write_skew_pair_commits() {
    // Goal: digest S10. TxnA's committed write of x is in TxnB's window: B aborts. B's commit
    // record writes y and precedes TxnC's, but B aborted, so C commits. skew1 and skew2 read
    // u and v and write one each: SI lets both commit.
    let r = run("s10-store-conflicts.json");
    r.assert_passes("s10-store-conflicts.json");
    let outcome = |s: &str| r.session(s)["outcome"].as_str().unwrap().to_string();
    assert_eq!(
        ["txnA", "txnB", "txnC", "skew1", "skew2"].map(outcome),
        ["ok", "aborted", "ok", "ok", "ok"].map(String::from),
        "Fig. 9 and write skew"
    );
    assert_eq!(r.session("txnB")["note"], "conflict: a committed write of an object it writes lies in its window");
    assert!(written(r.session("txnC"), "y") > written(r.session("txnB"), "y"), "C's commit record follows B's");
    assert_eq!(r.session("txnC")["ops"][0]["value"], serde_json::Value::Null, "C's snapshot has no committed y");
}

#[test]
fn bokistore_counter_test_commits_a_fraction_and_loses_no_update() {
    // Goal: digest S11 (§7.5's shape): 48 instances increment 3 of 32 counters each; the
    // paper commits 35% of the transactions it creates (52,165 of 148,216).
    let r = run("s11-counter-test.json");
    r.assert_passes("s11-counter-test.json");
    let t = &r.summary.transactions;
    let (ok, aborted) = (t["workflow_txn:ok"], t["workflow_txn:aborted"]);
    let committed = ok as f64 / (ok + aborted) as f64;
    assert!((0.1..0.6).contains(&committed), "committed fraction {committed:.3} ({ok} of {})", ok + aborted);
}

#[test]
fn bokistore_without_auxiliary_data_stays_snapshot_isolated_and_replays_more_as_the_log_grows() {
    // Goal: Table 7's ablation (params.aux_data false): decisions are a function of the log, so
    // the history still passes si; without cached decisions each function decides the commit
    // records it meets from the log, so a transaction's replay grows with the log.
    let replay_reads = |aux_data: bool, workflows: u64| {
        let mut loaded = common::load_scenario("boki", "s11-counter-test.json");
        loaded.scenario.protocol.params["aux_data"] = aux_data.into();
        let causim_sim::workload::WorkloadConfig::Generator(g) = &mut loaded.scenario.workload else { panic!("a generator") };
        g.workflows_max = Some(workflows);
        let r = common::run_checked(&loaded, 1, &[]);
        r.assert_passes(&format!("aux_data {aux_data}, {workflows} workflows"));
        assert_eq!(r.observed("store_txn_committed"), workflows, "one decision per transaction");
        r.summary.observations["store_replay_reads"].mean
    };
    let (with, short, long) = (replay_reads(true, 600), replay_reads(false, 200), replay_reads(false, 600));
    assert!(short > 1.5 * with, "without auxiliary data a replay is longer: {short:.1} vs {with:.1} reads");
    assert!(long > 1.3 * short, "and grows with the log: {long:.1} reads at 600 workflows vs {short:.1} at 200");
}

#[test]
fn bokiflow_reexecution_after_a_crash_takes_each_step_once() {
    // Goal: digest S8. S0 crashes after step 0's database write and step 1's log append; the
    // re-execution's step 0 fails the version condition, its step 1 takes effect once.
    let r = run("s8-flow-reexecution.json");
    r.assert_passes("s8-flow-reexecution.json");
    assert_eq!(r.summary.workflows.aborted_attempts, 1, "one re-execution");
    let retry: Vec<&serde_json::Value> = r.history.iter().filter(|t| t["session"] == "flow#2").collect();
    let effects = |key: &str| r.history.iter().filter(|t| t["outcome"] == "ok").filter(|t| written_any(t, key)).count();
    assert_eq!(retry[0]["note"], "the version condition rejected it: the key holds a version at or after the step's first record");
    assert_eq!((effects("x"), effects("y"), effects("z")), (1, 1, 1), "each step took effect once");
    // The re-executed step 1 read back the crashed attempt's record, ordered before its own.
    let ops = retry[1]["ops"].as_array().unwrap();
    assert!(ops[1]["seqnum"].as_u64() < ops[0]["seqnum"].as_u64());
}

#[test]
fn bokiflow_reexecution_across_an_invoke_reuses_the_callee_id_and_the_logged_return_value() {
    // Goal: Fig. 6's invoke. Function 2 (function 1's callee) is cut off after its write; the
    // re-executed workflow finds function 1's post-invoke record and does not run it again,
    // and function 2 runs under its logged id, so every step takes effect once.
    let r = run("s8-flow-invoke-reexecution.json");
    r.assert_passes("s8-flow-invoke-reexecution.json");
    assert_eq!(r.summary.workflows.aborted_attempts, 1, "one re-execution");
    let effects = |key: &str| r.history.iter().filter(|t| t["outcome"] == "ok").filter(|t| written_any(t, key)).count();
    assert_eq!((effects("x"), effects("y"), effects("z")), (1, 1, 1), "each step took effect once");
    let lines = |session: &str, f: u64| -> Vec<&serde_json::Value> {
        r.history.iter().filter(|t| t["session"] == session && t["fn"] == f).collect()
    };
    let skipped = lines("flow#2", 1);
    assert_eq!(skipped[0]["note"], "the post-invoke record is logged: the caller takes its return value and does not invoke again");
    assert!(!skipped.iter().any(|t| written_any(t, "y")), "function 1 ran no step again");
    // Each callee completed once (post records: function 1 in the first attempt, function 2 in
    // the second), and function 2's steps kept their tags across the attempts (one callee id).
    let post = |t: &serde_json::Value| t["note"] == "post-invoke";
    let ids: Vec<u64> = r.history.iter().filter(|t| post(t)).map(|t| t["ops"][0]["tags"][2].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), 2, "function 1 in the first attempt and function 2 in the second completed");
    let step_tag = |t: &serde_json::Value| t["ops"][0]["tags"][0].as_u64().unwrap();
    assert_eq!(step_tag(lines("flow", 2)[0]), step_tag(lines("flow#2", 2)[0]), "function 2 ran its read step under one id twice");
}

fn written_any(t: &serde_json::Value, key: &str) -> bool {
    t["ops"].as_array().unwrap().iter().any(|o| o["f"] == "w" && o["key"] == key)
}

#[test]
fn bokiflow_duplicate_instances_take_each_step_once_and_read_the_first_logged_value() {
    // Goal: digest S8, concurrent duplicates: both instances run every step; one effect each.
    let r = run("s8-flow-duplicate-instances.json");
    r.assert_passes("s8-flow-duplicate-instances.json");
    let effects = |key: &str| r.history.iter().filter(|t| written_any(t, key)).count();
    assert_eq!((effects("x"), effects("y")), (1, 1));
    let reads: Vec<&serde_json::Value> = r.history.iter().filter(|t| t["kind"] == "read").map(|t| &t["ops"][2]["value"]).collect();
    assert_eq!(reads.len(), 2);
    assert_eq!(reads[0], reads[1], "both instances use the read step's first logged value");
}

#[test]
fn bokistore_auxiliary_data_backed_up_on_storage_removes_the_small_cache_cliff() {
    // Goal: Table 9's second row. With a cache too small for the replays' working set, cached
    // decisions are evicted and replays go back through the log; backed up on storage nodes,
    // a decision comes back with its record.
    let replay_reads = |backup: bool| {
        let mut loaded = common::load_scenario("boki", "s11-counter-test.json");
        loaded.scenario.protocol.params["aux_data"] = true.into();
        loaded.scenario.protocol.params["cache_records"] = 112.into();
        loaded.scenario.protocol.params["aux_data_on_storage"] = backup.into();
        let causim_sim::workload::WorkloadConfig::Generator(g) = &mut loaded.scenario.workload else { panic!("a generator") };
        g.workflows_max = Some(600);
        let r = common::run_checked(&loaded, 1, &[]);
        r.assert_passes(&format!("aux_data_on_storage {backup}"));
        r.summary.observations["store_replay_reads"].mean
    };
    let (cache_only, backed_up) = (replay_reads(false), replay_reads(true));
    assert!(
        cache_only > 2.0 * backed_up,
        "with a 112-record cache: {cache_only:.1} reads per replay without the backup, {backed_up:.1} with"
    );
}

/// A lock line of a BokiFlow history: its record's seqnum, holder tag, `prev` tag, and
/// whether it is an unlock.
#[derive(Debug, PartialEq)]
struct LockLine {
    seqnum: u64,
    holder: u64,
    prev: u64,
    unlock: bool,
    session: String,
}

/// The `tryLock` and `unlock` lines of `history`, in log order (history-format: tags `3`, `4`
/// for an unlock, `2^62 +` the holder, `2^63 +` the `prev` record).
fn lock_lines(history: &[serde_json::Value]) -> Vec<LockLine> {
    let mut lines: Vec<LockLine> = history
        .iter()
        .filter(|t| t["note"] == "tryLock: acquired" || t["note"] == "unlock")
        .map(|t| {
            let op = &t["ops"][0];
            let tags: Vec<u64> = op["tags"].as_array().unwrap().iter().map(|t| t.as_u64().unwrap()).collect();
            LockLine {
                seqnum: op["seqnum"].as_u64().unwrap(),
                holder: *tags.iter().find(|&&t| t >> 62 == 1).unwrap(),
                prev: *tags.iter().find(|&&t| t >> 63 == 1).unwrap(),
                unlock: tags.contains(&4),
                session: t["session"].as_str().unwrap().to_string(),
            }
        })
        .collect();
    lines.sort_by_key(|l| l.seqnum);
    lines
}

#[test]
fn bokiflow_s9_lock_race_has_one_holder_at_a_time_and_lock_ignores_prev_has_two() {
    // Goal: digest S9 (Fig. 7b). a and b tryLock x from the chain's start at once; c soon after.
    let r = run("s9-lock-race.json");
    r.assert_passes("s9-lock-race.json");
    let lines = lock_lines(&r.history);
    assert_eq!(lines.len(), 10, "five acquires and five unlocks: {lines:#?}");
    // One chain, alternating: each acquire extends the unlock before it (the first, the start),
    // and each unlock is its holder's and extends that acquire.
    let start = u64::MAX;
    for (i, l) in lines.iter().enumerate() {
        let (prev, unlock) = (i.checked_sub(1).map_or(start, |p| 1 << 63 | lines[p].seqnum), i % 2 == 1);
        assert_eq!((l.prev, l.unlock), (prev, unlock), "line {i}: {lines:#?}");
        if unlock {
            assert_eq!(l.holder, lines[i - 1].holder, "an unlock by its acquire's holder");
        }
    }
    // Each write step's record lies inside its session's hold of the lock.
    for step in r.history.iter().filter(|t| t["note"].is_null()) {
        let s = step["ops"][0]["seqnum"].as_u64().unwrap();
        let hold = lines.iter().rposition(|l| l.seqnum < s).unwrap();
        assert!(!lines[hold].unlock && lines[hold].session == step["session"], "step {step} outside its hold: {lines:#?}");
    }
    // a and b both appended from the chain's start; a's record is first, b's is not in the
    // chain (seqnum 1), and b holds the lock only after a's release.
    let order: Vec<&str> = lines.iter().filter(|l| !l.unlock).map(|l| l.session.as_str()).collect();
    assert_eq!(order, ["a", "b", "c", "d", "f"]);
    assert_eq!(lines[0].seqnum, 0);
    assert!(r.history.iter().all(|t| t["ops"][0]["seqnum"] != 1), "b's first record (seqnum 1) joined no chain, so no line holds it");
    assert!(r.session("b")["invoke_ns"].as_u64() < r.session("a")["complete_ns"].as_u64(), "b tried while a was acquiring");
    // The lock-safety level alone judges the same history.
    let text: String = std::iter::once(r#"{"format":"causim-history/2","protocol":"boki-flow"}"#.to_string())
        .chain(r.history.iter().map(|t| t.to_string()))
        .collect::<Vec<_>>()
        .join("\n");
    let h = causim_checkers::read_history(text.as_bytes(), None).unwrap();
    assert!(causim_checkers::check(&h, causim_checkers::Level::LockSafety).ok);

    // With `lock_ignores_prev` two instances extend one chain point and both hold x's lock.
    let m = run("mutant-lock-ignores-prev.json");
    assert_eq!(m.anomalies(), ["LockConflict"], "{}", m.report.render_text());
    let acquires: Vec<LockLine> = lock_lines(&m.history).into_iter().filter(|l| !l.unlock).collect();
    assert!(
        acquires.iter().enumerate().any(|(i, a)| acquires[..i].iter().any(|b| b.prev == a.prev && b.holder != a.holder)),
        "{acquires:#?}"
    );
}

/// Each library's generated scenario over `n` seeds: no invariant broken, no anomaly.
fn sweep(file: &str, crashes: impl Fn(u64) -> Vec<CrashConfig> + Sync) -> (u64, u64) {
    let loaded = common::load_scenario("boki", file);
    let n = seeds();
    let totals: Vec<(u64, u64)> = std::thread::scope(|s| {
        let workers: Vec<_> = [0, 1]
            .into_iter()
            .map(|w| {
                let (loaded, crashes) = (&loaded, &crashes);
                s.spawn(move || {
                    let (mut retries, mut workflows) = (0, 0);
                    for seed in (1..=n).skip(w).step_by(2) {
                        let mut l = loaded.clone();
                        if !l.scenario.faults.crashes.is_empty() {
                            l.scenario.faults.crashes = crashes(seed);
                        }
                        let options = causim_pipeline::run::RunOptions { seed: Some(seed), ..Default::default() };
                        let r = causim_pipeline::run::run(&l, &options).unwrap_or_else(|e| panic!("{e}"));
                        let repro = format!("{file} seed {seed}, crashes {:?}", l.scenario.faults.crashes);
                        assert_eq!(r.summary.invariant_violation, None, "{repro}");
                        assert_eq!(r.summary.workflows.unfinished, 0, "{repro}: stopped by {}", r.summary.stopped_by);
                        let report = r.check.expect("checked");
                        assert!(report.ok, "{repro}\n{}", report.render_text());
                        retries += r.summary.workflows.aborted_attempts;
                        workflows += r.summary.workflows.started;
                    }
                    (retries, workflows)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    totals.into_iter().fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
}

#[test]
fn bokiflow_with_function_node_crashes_stays_exactly_once_over_many_seeds() {
    // One function node, S(1 + seed mod 2), crash-stops between 5 and 45 ms.
    let (retries, workflows) = sweep("flow-crashes.json", |seed| {
        vec![CrashConfig {
            node: format!("S{}", 1 + seed % 2),
            at_ns: (5 + seed.wrapping_mul(0x9E37_79B9) % 41) * 1_000_000,
            restart_ns: None,
        }]
    });
    // The crashes do interrupt workflows, which are re-executed: the path under test runs.
    assert!(retries >= seeds(), "only {retries} re-executions over {} seeds ({workflows} workflows)", seeds());
}

#[test]
fn bokiqueue_stays_fifo_over_many_seeds() {
    sweep("queue-mixed.json", |_| Vec::new());
}

#[test]
fn bokistore_stays_snapshot_isolated_over_many_seeds() {
    sweep("store-mixed.json", |_| Vec::new());
}

/// The committed (`workflow_txn`, `ok`) and aborted transaction lines of `session` (and its
/// re-executions, `session#2`, ...).
fn txn_lines<'a>(r: &'a common::CheckedRun, session: &str, outcome: &str) -> Vec<&'a serde_json::Value> {
    let of = |s: &serde_json::Value| s.as_str().is_some_and(|s| s == session || s.starts_with(&format!("{session}#")));
    r.history.iter().filter(|t| of(&t["session"]) && t["kind"] == "workflow_txn" && t["outcome"] == outcome).collect()
}

#[test]
fn bokiflow_transactions_abort_on_a_held_lock_and_commit_once_across_a_crash() {
    // Goal: §5.1.2. inc2 and skew1 find a lock held and abort; inc1, cut off by S1's crash
    // mid-transaction, is re-executed under its transaction id and commits x and y once; inc3
    // reads inc1's writes; the history is strict-serializable.
    let r = run("txn-contended.json");
    r.assert_passes("txn-contended.json");
    assert!(r.summary.workflows.aborted_attempts >= 1, "inc1 was re-executed");
    for (session, committed) in [("inc1", 1), ("inc2", 0), ("inc3", 1), ("skew1", 0), ("skew2", 1)] {
        assert_eq!(txn_lines(&r, session, "ok").len(), committed, "{session} commits");
        assert_eq!(txn_lines(&r, session, "aborted").len(), 1 - committed, "{session} aborts");
    }
    let inc1 = txn_lines(&r, "inc1", "ok")[0];
    assert!(written_any(inc1, "x") && written_any(inc1, "y"), "inc1 commits both writes: {inc1}");
    let read = |t: &serde_json::Value, key: &str| {
        t["ops"].as_array().unwrap().iter().find(|o| o["f"] == "r" && o["key"] == key).unwrap()["value"].clone()
    };
    let inc3 = txn_lines(&r, "inc3", "ok")[0];
    assert_eq!(read(inc3, "x"), serde_json::json!(written(inc1, "x")), "inc3 reads inc1's x");
    assert_eq!(read(inc3, "y"), serde_json::json!(written(inc1, "y")), "inc3 reads inc1's y");
    // One write of each key per committed transaction: the crashed attempt applied nothing twice.
    let writes = |key: &str| r.history.iter().filter(|t| t["outcome"] != "aborted").filter(|t| written_any(t, key)).count();
    assert_eq!((writes("x"), writes("y")), (2, 2), "inc1's and inc3's");
}

#[test]
fn bokiflow_transactions_without_locks_lose_updates_and_skew() {
    // Goal: the mutant txn_skips_locks is caught; the same workload passes without it.
    let loaded = common::load_scenario("boki", "mutant-txn-skips-locks.json");
    let r = common::run_checked(&loaded, 1, &[]);
    let anomalies: Vec<String> = r.report.violations.iter().map(|v| v.anomaly.name().to_string()).collect();
    assert_eq!(anomalies, ["NonSerializable", "NonSerializable"], "the lost update and the write skew");
    let mut correct = loaded.clone();
    correct.scenario.protocol.mutants.clear();
    let r = common::run_checked(&correct, 1, &[]);
    r.assert_passes("mutant-txn-skips-locks.json without the mutant");
    assert_eq!(r.summary.transactions["workflow_txn:aborted"], 2, "with locks one of each pair aborts");
}

#[test]
fn bokiflow_transactions_with_function_node_crashes_stay_strict_serializable_over_many_seeds() {
    // As the exactly-once sweep, with every workflow a transaction (flow-txn-crashes.json).
    let (retries, workflows) = sweep("flow-txn-crashes.json", |seed| {
        vec![CrashConfig {
            node: format!("S{}", 1 + seed % 2),
            at_ns: (5 + seed.wrapping_mul(0x9E37_79B9) % 41) * 1_000_000,
            restart_ns: None,
        }]
    });
    assert!(retries >= seeds(), "only {retries} re-executions over {} seeds ({workflows} workflows)", seeds());
}
