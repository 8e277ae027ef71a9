//! The `strict-serializable` level: the litmus histories (lost update, write skew, a stale read
//! after a committed transaction, a fractured read) with their names and witnesses, agreement
//! with a brute-force oracle (every order of every transaction) on random small transactional
//! histories, agreement with `linearizable` on single-operation histories, and the "no verdict"
//! cases.

use causim_checkers::{Anomaly, CheckOptions, History, Level, OpRecord, TxnRecord, check, check_with, read_history};

fn history(lines: &str) -> History {
    let text: String = lines.lines().map(str::trim).filter(|l| !l.is_empty()).map(|l| format!("{l}\n")).collect();
    read_history(text.as_bytes(), None).expect("valid history")
}

fn verdict(lines: &str) -> causim_checkers::Report {
    check(&history(lines), Level::StrictSerializable)
}

const LOST_UPDATE: &str = r#"
    {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"ops":[{"f":"r","key":"x","value":null},{"f":"w","key":"x","value":1}]}
    {"id":1,"session":"b","invoke_ns":0,"complete_ns":10,"ops":[{"f":"r","key":"x","value":null},{"f":"w","key":"x","value":2}]}
"#;

const WRITE_SKEW: &str = r#"
    {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"ops":[{"f":"r","key":"x","value":null},{"f":"r","key":"y","value":null},{"f":"w","key":"x","value":1}]}
    {"id":1,"session":"b","invoke_ns":0,"complete_ns":10,"ops":[{"f":"r","key":"x","value":null},{"f":"r","key":"y","value":null},{"f":"w","key":"y","value":1}]}
"#;

const STALE_AFTER_COMMIT: &str = r#"
    {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"ops":[{"f":"w","key":"x","value":1},{"f":"w","key":"y","value":1}]}
    {"id":1,"session":"b","invoke_ns":20,"complete_ns":30,"ops":[{"f":"r","key":"x","value":null}]}
"#;

const FRACTURED: &str = r#"
    {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"ops":[{"f":"w","key":"x","value":1},{"f":"w","key":"y","value":1}]}
    {"id":1,"session":"b","invoke_ns":0,"complete_ns":10,"ops":[{"f":"r","key":"x","value":1},{"f":"r","key":"y","value":null}]}
"#;

#[test]
fn the_litmus_histories_fail_with_their_names_and_smallest_witnesses() {
    for (name, lines, anomaly) in [
        ("lost update", LOST_UPDATE, Anomaly::NonSerializable),
        ("write skew", WRITE_SKEW, Anomaly::NonSerializable),
        ("stale read after a committed transaction", STALE_AFTER_COMMIT, Anomaly::RealtimeNonSerializable),
        ("fractured read", FRACTURED, Anomaly::NonSerializable),
    ] {
        let report = verdict(lines);
        assert!(!report.ok && report.complete, "{name}: {}", report.render_text());
        assert_eq!(report.violations.len(), 1, "{name}");
        let v = &report.violations[0];
        assert_eq!(v.anomaly, anomaly, "{name}");
        assert_eq!(v.transactions.len(), 2, "{name}: both transactions, no more");
        assert!(v.sentence.contains("in the order T1, T2") && v.sentence.contains("in the order T2, T1"), "{name}: {}", v.sentence);
    }
    // The stale read says why its serial order is not allowed: real time.
    let stale = verdict(STALE_AFTER_COMMIT);
    assert!(stale.violations[0].sentence.contains("completed before"), "{}", stale.violations[0].sentence);
}

#[test]
fn write_skew_passes_snapshot_isolation_but_not_strict_serializability() {
    assert!(check(&history(WRITE_SKEW), Level::Si).ok);
    assert!(!verdict(WRITE_SKEW).ok);
    // A lost update fails both.
    assert!(!check(&history(LOST_UPDATE), Level::Si).ok);
}

#[test]
fn overlapping_transactions_with_a_serial_order_pass() {
    let report = verdict(
        r#"
        {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"ops":[{"f":"r","key":"x","value":null},{"f":"w","key":"x","value":1}]}
        {"id":1,"session":"b","invoke_ns":5,"complete_ns":20,"ops":[{"f":"r","key":"x","value":1},{"f":"w","key":"x","value":2},{"f":"w","key":"y","value":1}]}
        {"id":2,"session":"c","invoke_ns":6,"complete_ns":8,"ops":[{"f":"r","key":"x","value":null},{"f":"r","key":"y","value":null}]}
        {"id":3,"session":"a","invoke_ns":21,"complete_ns":30,"ops":[{"f":"r","key":"y","value":1},{"f":"r","key":"x","value":2}]}
    "#,
    );
    assert!(report.ok && report.complete, "{}", report.render_text());
}

#[test]
fn a_failed_transaction_counts_only_if_its_writes_are_read() {
    // The failed write of x=1 is read: it took effect, atomically with y=1, so the later
    // reader of y=⊥ is stale.
    let report = verdict(
        r#"
        {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"outcome":"failed","ops":[{"f":"w","key":"x","value":1},{"f":"w","key":"y","value":1}]}
        {"id":1,"session":"b","invoke_ns":20,"complete_ns":30,"ops":[{"f":"r","key":"x","value":1}]}
        {"id":2,"session":"c","invoke_ns":40,"complete_ns":50,"ops":[{"f":"r","key":"y","value":null}]}
    "#,
    );
    assert_eq!(report.violations[0].anomaly, Anomaly::RealtimeNonSerializable);
    // Nobody reads it: it may never have happened.
    let report = verdict(
        r#"
        {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"outcome":"failed","ops":[{"f":"w","key":"x","value":1},{"f":"w","key":"y","value":1}]}
        {"id":1,"session":"c","invoke_ns":40,"complete_ns":50,"ops":[{"f":"r","key":"y","value":null}]}
    "#,
    );
    assert!(report.ok, "{}", report.render_text());
}

#[test]
fn no_intervals_or_no_budget_give_no_verdict() {
    let report = verdict(r#"{"id":0,"session":"a","ops":[{"f":"w","key":"x","value":1}]}"#);
    assert!(!report.complete && report.notes.iter().any(|n| n.contains("no real-time intervals")), "{:?}", report.notes);
    let options = CheckOptions { lin_steps_max: 1, ..CheckOptions::default() };
    let report = check_with(&history(WRITE_SKEW), Level::StrictSerializable, &options);
    assert!(report.violations.is_empty() && !report.complete, "{}", report.render_text());
    assert!(report.notes.iter().any(|n| n.contains("ran out of its budget")), "{:?}", report.notes);
}

// ---------------------------------------------------------------------------------------------
// Random histories against an oracle

/// A small deterministic generator (xorshift), so the test needs no dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A transaction of the generator: reads (key, value; 0 the initial value) before writes, at
/// most one of each per key, over an interval.
#[derive(Clone, Debug)]
struct Gen {
    inv: u64,
    cmp: u64,
    reads: Vec<(u64, u64)>,
    writes: Vec<(u64, u64)>,
}

fn random_history(rng: &mut Rng) -> Vec<Gen> {
    let n = 2 + rng.below(5) as usize;
    let keys = 1 + rng.below(3);
    let mut next = vec![1u64; keys as usize];
    let mut txs: Vec<Gen> = (0..n)
        .map(|_| {
            let inv = rng.below(40);
            let mut g = Gen { inv, cmp: inv + 1 + rng.below(20), reads: Vec::new(), writes: Vec::new() };
            for k in 0..keys {
                match rng.below(4) {
                    0 => g.reads.push((k, 0)),
                    1 => {
                        g.writes.push((k, next[k as usize]));
                        next[k as usize] += 1;
                    }
                    2 => {
                        g.reads.push((k, 0));
                        g.writes.push((k, next[k as usize]));
                        next[k as usize] += 1;
                    }
                    _ => {}
                }
            }
            g
        })
        .collect();
    // Each read returns the initial value or another transaction's write of its key.
    let writes: Vec<(usize, u64, u64)> = txs.iter().enumerate().flat_map(|(i, t)| t.writes.iter().map(move |w| (i, w.0, w.1))).collect();
    for (i, tx) in txs.iter_mut().enumerate() {
        for read in &mut tx.reads {
            let k = read.0;
            let options: Vec<u64> = writes.iter().filter(|w| w.0 != i && w.1 == k).map(|w| w.2).collect();
            let pick = rng.below(options.len() as u64 + 1) as usize;
            read.1 = if pick == options.len() { 0 } else { options[pick] };
        }
    }
    txs
}

fn records(txs: &[Gen]) -> Vec<TxnRecord> {
    txs.iter()
        .enumerate()
        .map(|(i, g)| {
            let value = |v: u64| if v == 0 { None } else { Some(v as i64) };
            let ops = g
                .reads
                .iter()
                .map(|&(k, v)| OpRecord::read(k as i64, value(v)))
                .chain(g.writes.iter().map(|&(k, v)| OpRecord::write(k as i64, v as i64)))
                .collect();
            let mut r = TxnRecord::new(format!("s{i}"), ops).with_id(i as u64);
            r.invoke_ns = Some(g.inv);
            r.complete_ns = Some(g.cmp);
            r
        })
        .collect()
}

/// Every order of every transaction: one that respects real time and has each read return the
/// latest earlier write.
fn oracle(txs: &[Gen]) -> bool {
    fn extend(txs: &[Gen], used: &mut Vec<bool>, state: &mut Vec<u64>) -> bool {
        if used.iter().all(|u| *u) {
            return true;
        }
        for i in 0..txs.len() {
            if used[i] || (0..txs.len()).any(|j| !used[j] && j != i && txs[j].cmp < txs[i].inv) {
                continue;
            }
            if txs[i].reads.iter().any(|&(k, v)| state[k as usize] != v) {
                continue;
            }
            let old = state.clone();
            for &(k, v) in &txs[i].writes {
                state[k as usize] = v;
            }
            used[i] = true;
            if extend(txs, used, state) {
                return true;
            }
            used[i] = false;
            *state = old;
        }
        false
    }
    extend(txs, &mut vec![false; txs.len()], &mut vec![0; 3])
}

#[test]
fn verdicts_equal_the_oracles_on_random_transactional_histories() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut passed, mut failed) = (0, 0);
    for case in 0..3000 {
        let txs = random_history(&mut rng);
        let h = History::from_records(None, &records(&txs)).expect("valid");
        let report = check(&h, Level::StrictSerializable);
        assert!(report.complete, "case {case}");
        assert_eq!(report.ok, oracle(&txs), "case {case}: {txs:?}\n{}", report.render_text());
        if report.ok {
            passed += 1;
        } else {
            failed += 1;
            // The witness is a subset that fails on its own.
            let ids: Vec<u64> = report.violations[0].transactions.iter().map(|t| t.id).collect();
            let subset: Vec<Gen> = ids.iter().map(|id| txs[*id as usize].clone()).collect();
            assert!(!oracle(&subset), "case {case}: the witness {ids:?} has an order");
        }
    }
    assert!(passed > 300 && failed > 300, "both verdicts exercised: {passed} passed, {failed} failed");
}

#[test]
fn single_operation_histories_get_linearizabilitys_verdict() {
    let mut rng = Rng(7);
    for case in 0..2000 {
        let mut txs = random_history(&mut rng);
        for t in &mut txs {
            if !t.writes.is_empty() {
                t.reads.clear();
                t.writes.truncate(1);
            } else {
                t.reads.truncate(1);
            }
        }
        txs.retain(|t| !t.reads.is_empty() || !t.writes.is_empty());
        let h = History::from_records(None, &records(&txs)).expect("valid");
        let (a, b) = (check(&h, Level::StrictSerializable), check(&h, Level::Linearizable));
        assert_eq!(a.ok, b.ok, "case {case}: {txs:?}");
    }
}

#[test]
fn a_read_of_an_aborted_transactions_write_is_an_aborted_read() {
    // BokiFlow's transactions promise that an aborted transaction's writes are never observed:
    // its `aborted` line carries the writes it did not apply, and a committed read of one fails.
    let lines = r#"
        {"id":0,"session":"a","invoke_ns":0,"complete_ns":10,"outcome":"aborted","ops":[{"f":"r","key":"x","value":null},{"f":"w","key":"x","value":1}]}
        {"id":1,"session":"b","invoke_ns":20,"complete_ns":30,"ops":[{"f":"r","key":"x","value":1},{"f":"w","key":"y","value":1}]}
    "#;
    let report = verdict(lines);
    assert!(!report.ok, "{}", report.render_text());
    assert!(report.violations.iter().any(|v| v.anomaly == Anomaly::AbortedRead), "{}", report.render_text());
    // Without the read of the aborted write, the same history passes.
    assert!(verdict(&lines.replace(r#""value":1},{"f":"w","key":"y""#, r#""value":null},{"f":"w","key":"y""#)).ok);
}
