//! `--level si`: the classic snapshot-isolation litmus histories, each anomaly with its minimal
//! witness and explanation, with and without a declared version order.

mod common;

use causim_checkers::testgen::{GenParams, si_records};
use causim_checkers::{Anomaly, Header, History, Level, OpKind, Outcome, Report, TxnRecord, Value, check};
use common::records;
use proptest::prelude::*;

/// The history of `text`; with `declared`, its header says each key's versions are in the order
/// of their values.
fn hist(text: &str, declared: bool) -> History {
    let mut header = Header::default();
    if declared {
        header.info.insert("version_order".into(), "\"values\"".into());
    }
    History::from_records(Some(&header), &records(text)).expect("a valid litmus history")
}

fn si(text: &str, declared: bool) -> Report {
    check(&hist(text, declared), Level::Si)
}

fn names(r: &Report) -> Vec<Anomaly> {
    r.violations.iter().map(|v| v.anomaly).collect()
}

#[test]
fn write_skew_passes() {
    let text = "c1: r x=_, r y=_, w x=1\nc2: r x=_, r y=_, w y=1";
    for declared in [false, true] {
        let r = si(text, declared);
        assert!(r.ok && r.complete, "{}", r.render_text());
    }
}

#[test]
fn lost_update_fails() {
    let text = "c1: r x=_, w x=1\nc2: r x=_, w x=2";
    for declared in [false, true] {
        let r = si(text, declared);
        assert_eq!(names(&r), [Anomaly::LostUpdate], "{}", r.render_text());
        assert_eq!(r.violations[0].transactions.len(), 2);
        println!("{}", r.render_text());
    }
}

#[test]
fn fractured_read_fails() {
    let text = "c1: w x=1, w y=1\nc2: r x=1, r y=_";
    for declared in [false, true] {
        let r = si(text, declared);
        assert_eq!(names(&r), [Anomaly::FracturedReadCO], "{}", r.render_text());
        println!("{}", r.render_text());
    }
}

#[test]
fn non_repeatable_read_fails() {
    let text = "c1: w x=1\nc2: w x=2\nc3: r x=1, r x=2";
    let r = si(text, false);
    assert!(names(&r).contains(&Anomaly::NonRepeatableRead), "{}", r.render_text());
}

#[test]
fn read_skew_fails() {
    // c3 saw y=1, written by c2 after it had read x=1; yet c3 read the initial x.
    let text = "c1: w x=1\nc2: r x=1, w y=1\nc3: r y=1, r x=_";
    for declared in [false, true] {
        let r = si(text, declared);
        assert_eq!(names(&r), [Anomaly::ReadSkew], "{}", r.render_text());
        println!("{}", r.render_text());
    }
}

#[test]
fn concurrent_writers_fail() {
    // c2 did not see c1 (it read the initial y), yet its x=2 is ordered after c1's x=1.
    let text = "c1: w x=1, w y=1\nc2: r y=_, w x=2";
    let r = si(text, true);
    assert_eq!(names(&r), [Anomaly::ConcurrentWrite], "{}", r.render_text());
    println!("{}", r.render_text());
    // Without the declared order, c2 may have committed first: SI.
    assert!(si(text, false).ok);
    // A reader that sees x=2 and y=1 leaves no order.
    let text = "c1: w x=1, w y=1\nc2: r y=_, w x=2\nc3: r x=2, r y=1";
    let r = si(text, false);
    assert_eq!(names(&r), [Anomaly::ConcurrentWrite], "{}", r.render_text());
    println!("{}", r.render_text());
}

fn of_records(recs: &[TxnRecord], declared: bool) -> History {
    let mut header = Header::default();
    if declared {
        header.info.insert("version_order".into(), "\"values\"".into());
    }
    History::from_records(Some(&header), recs).expect("generated histories are valid")
}

/// The read-modify-writes of committed transactions: (transaction, index of the read), for reads
/// of a key the transaction has not written yet and writes later.
fn read_modify_writes(recs: &[TxnRecord]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (t, rec) in recs.iter().enumerate().filter(|(_, r)| r.outcome == Outcome::Ok) {
        for (i, op) in rec.ops.iter().enumerate() {
            let same = |o: &&causim_checkers::OpRecord| o.key == op.key && o.f == OpKind::Write;
            if op.f == OpKind::Read && !rec.ops[..i].iter().any(|o| same(&o)) && rec.ops[i..].iter().any(|o| same(&o)) {
                out.push((t, i));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A simulated SI store's histories pass, with and without the declared version order; make
    /// one read-modify-write read the version an earlier one of the same key read, and both
    /// checks report the lost update.
    #[test]
    fn si_store_passes_and_a_lost_update_fails(seed in 0u64..1 << 40, sessions in 2u32..8, keys in 2u64..12, pick in 0usize..1000) {
        let p = GenParams { sessions, txns_per_session: 12, ops_per_txn: 4, keys, read_per_mille: 400, seed };
        let mut recs = si_records(&p);
        for declared in [true, false] {
            let r = check(&of_records(&recs, declared), Level::Si);
            prop_assert!(r.ok, "declared {}: {}", declared, r.render_text());
        }
        let rmw = read_modify_writes(&recs);
        let pairs: Vec<((usize, usize), (usize, usize))> = rmw
            .iter()
            .flat_map(|&a| rmw.iter().map(move |&b| (a, b)))
            .filter(|&((t1, i1), (t2, i2))| t1 < t2 && recs[t1].ops[i1].key == recs[t2].ops[i2].key && recs[t1].ops[i1].value != recs[t2].ops[i2].value)
            .collect();
        prop_assume!(!pairs.is_empty());
        let ((t1, i1), (t2, i2)) = pairs[pick % pairs.len()];
        // Every read of the key before T2's write returns the older version.
        let (key, value) = (recs[t2].ops[i2].key.clone(), recs[t1].ops[i1].value.clone());
        for op in recs[t2].ops.iter_mut().take_while(|o| !(o.key == key && o.f == OpKind::Write)) {
            if op.key == key {
                op.value = value.clone();
            }
        }
        for declared in [true, false] {
            let r = check(&of_records(&recs, declared), Level::Si);
            prop_assert!(r.counts.contains_key(&Anomaly::LostUpdate), "declared {}: {}", declared, r.render_text());
        }
    }
}

#[test]
fn generated_si_store_passes() {
    for seed in 0..20 {
        let p = GenParams { sessions: 6, txns_per_session: 30, ops_per_txn: 4, keys: 8, read_per_mille: 500, seed };
        let recs = si_records(&p);
        for declared in [true, false] {
            let r = check(&of_records(&recs, declared), Level::Si);
            assert!(r.ok, "seed {seed} declared {declared}: {}", r.render_text());
        }
    }
}

/// Snapshot isolation straight from its definition (C15, BE19): some total commit order, and for
/// each transaction a prefix of it (its snapshot: everything committed before it began, its
/// session's earlier transactions included) from which each of its reads returns the last write
/// of the key (or, after its own write of the key, that write), and which holds every earlier
/// committed writer of a key the transaction writes. Every order is tried (small histories);
/// with `declared`, only those that commit each key's writes in the order of their values.
fn si_oracle(recs: &[TxnRecord], declared: bool) -> bool {
    let n = recs.len();
    let mut order: Vec<usize> = (0..n).collect();
    let final_writes = |t: usize| -> Vec<(String, Value)> {
        let mut out: Vec<(String, Value)> = Vec::new();
        for op in recs[t].ops.iter().filter(|o| o.f == OpKind::Write) {
            out.retain(|(k, _)| *k != op.key.to_string());
            out.push((op.key.to_string(), op.value.clone()));
        }
        out
    };
    let fits = |order: &[usize], pos: usize| -> bool {
        let t = order[pos];
        'prefix: for len in 0..=pos {
            let prefix = &order[..len];
            // Session order: the session's earlier transactions are in the snapshot.
            if (0..t).any(|u| recs[u].session == recs[t].session && !prefix.contains(&u)) {
                continue;
            }
            // Conflict: every earlier committer writing a key t writes is in the snapshot.
            let mine = final_writes(t);
            for &u in &order[..pos] {
                if !prefix.contains(&u) && final_writes(u).iter().any(|(k, _)| mine.iter().any(|(m, _)| m == k)) {
                    continue 'prefix;
                }
            }
            // Reads: own latest write of the key, else the snapshot's last write of it.
            for (i, op) in recs[t].ops.iter().enumerate().filter(|(_, o)| o.f == OpKind::Read) {
                let own = recs[t].ops[..i].iter().rev().find(|o| o.f == OpKind::Write && o.key == op.key);
                let expect = match own {
                    Some(w) => w.value.clone(),
                    None => prefix
                        .iter()
                        .rev()
                        .find_map(|&u| final_writes(u).into_iter().find(|(k, _)| *k == op.key.to_string()).map(|(_, v)| v))
                        .unwrap_or(Value::Null),
                };
                if expect != op.value {
                    continue 'prefix;
                }
            }
            return true;
        }
        false
    };
    // Heap's algorithm over all commit orders.
    let mut c = vec![0usize; n];
    let in_value_order = |order: &[usize]| {
        let mut last: Vec<(String, Value)> = Vec::new();
        order.iter().all(|&t| {
            final_writes(t).into_iter().all(|(k, v)| {
                let ok = last.iter().find(|(lk, _)| *lk == k).is_none_or(|(_, lv)| value_lt(lv, &v));
                last.retain(|(lk, _)| *lk != k);
                last.push((k, v));
                ok
            })
        })
    };
    let all = |order: &[usize]| (!declared || in_value_order(order)) && (0..n).all(|p| fits(order, p));
    if all(&order) {
        return true;
    }
    let mut i = 1;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                order.swap(0, i)
            } else {
                order.swap(c[i], i)
            }
            if all(&order) {
                return true;
            }
            c[i] += 1;
            i = 1;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    false
}

/// A random small history: `n` committed transactions of up to three operations over `keys`
/// keys, in two sessions or alone, each read returning a random written value of its key (or
/// the initial one).
fn random_small(seed: u64) -> Vec<TxnRecord> {
    use causim_checkers::OpRecord;
    use causim_checkers::testgen::SplitMix64;
    let mut rng = SplitMix64::new(seed);
    let n = 2 + rng.below(4) as usize;
    let keys = 1 + rng.below(3);
    let mut plan: Vec<Vec<(bool, u64, i64)>> = Vec::new();
    let mut next = 1i64;
    for _ in 0..n {
        let ops = (0..1 + rng.below(3))
            .map(|_| {
                let (w, k) = (rng.chance(450), rng.below(keys));
                next += i64::from(w);
                (w, k, next - 1)
            })
            .collect();
        plan.push(ops);
    }
    let written: Vec<(u64, i64)> = plan.iter().flatten().filter(|o| o.0).map(|o| (o.1, o.2)).collect();
    plan.iter()
        .enumerate()
        .map(|(i, ops)| {
            let ops = ops
                .iter()
                .map(|&(w, k, v)| {
                    let key = format!("k{k}");
                    if w {
                        return OpRecord::write(key.as_str(), v);
                    }
                    let values: Vec<i64> = written.iter().filter(|x| x.0 == k).map(|x| x.1).collect();
                    let pick = rng.below(values.len() as u64 + 1) as usize;
                    OpRecord::read(key.as_str(), if pick == 0 { Value::Null } else { Value::Int(values[pick - 1]) })
                })
                .collect();
            let session = if rng.chance(500) { format!("s{}", rng.below(2)) } else { format!("t{i}") };
            TxnRecord::new(session, ops)
        })
        .collect()
}

fn value_lt(a: &Value, b: &Value) -> bool {
    matches!((a, b), (Value::Int(x), Value::Int(y)) if x < y)
}

#[test]
fn verdicts_match_the_definition_on_small_random_histories() {
    for declared in [false, true] {
        let (mut passed, mut failed) = (0, 0);
        for seed in 0..6000 {
            let recs = random_small(seed);
            let r = check(&of_records(&recs, declared), Level::Si);
            assert!(r.complete, "seed {seed}: no verdict");
            let expect = si_oracle(&recs, declared);
            assert_eq!(
                r.ok,
                expect,
                "seed {seed}, declared {declared}: si says {}, the definition {expect}:\n{:#?}\n{}",
                r.ok,
                recs,
                r.render_text()
            );
            if expect { passed += 1 } else { failed += 1 }
        }
        assert!(passed > 1000 && failed > 1000, "{passed} pass, {failed} fail: both kinds are exercised");
    }
}

#[test]
fn cycles_without_anti_dependencies() {
    // The declared order puts x=1 after x=2, but c2 read x=2 and then wrote x=1 on top of it.
    let r = si("c1: w x=2\nc2: r x=2, w x=1", true);
    assert_eq!(names(&r), [Anomaly::CyclicDependency], "{}", r.render_text());
    assert!(si("c1: w x=2\nc2: r x=2, w x=1", false).ok);
    let r = si("c1: r x=1, w y=1\nc2: r y=1, w x=1", false);
    assert_eq!(names(&r), [Anomaly::CyclicCO], "{}", r.render_text());
}

#[test]
fn explanations_chain_commit_and_begin() {
    let r = si("c1: w x=1\nc2: r x=1, w y=1\nc3: r y=1, r x=_", true);
    let v = &r.violations[0];
    assert_eq!(v.witness.len(), 3, "the shortest cycle: two reads-from and one anti-dependency");
    assert_eq!(
        v.explanation.steps,
        [
            "T1 committed before T2 began, because T2 read x=1, which T1 wrote.",
            "T2 committed before T3 began, because T3 read y=1, which T2 wrote."
        ]
    );
    assert!(v.explanation.contradiction.starts_with("However, T3 began before T1 committed, because T3 read the initial x"));
}

/// SI histories listed session by session: file order is no longer the commit order, so the
/// verdict comes from the search (propagation, then depth-first), which must find an order.
#[test]
fn the_search_finds_the_order_of_a_history_not_logged_in_commit_order() {
    for seed in 0..40 {
        let p = GenParams { sessions: 4, txns_per_session: 15, ops_per_txn: 4, keys: 5, read_per_mille: 400, seed };
        let mut recs = si_records(&p);
        recs.sort_by(|a, b| a.session.cmp(&b.session));
        let r = check(&of_records(&recs, false), Level::Si);
        assert!(r.ok && r.complete, "seed {seed}: {}", r.render_text());
    }
}

/// Out of budget, the search gives no verdict (and says so) rather than a wrong one.
#[test]
fn an_exhausted_search_is_no_verdict() {
    use causim_checkers::{CheckOptions, check_with};
    let p = GenParams { sessions: 4, txns_per_session: 15, ops_per_txn: 4, keys: 5, read_per_mille: 400, seed: 3 };
    let mut recs = si_records(&p);
    recs.sort_by(|a, b| a.session.cmp(&b.session));
    let h = of_records(&recs, false);
    let r = check_with(&h, Level::Si, &CheckOptions { si_work_max: 1, ..CheckOptions::default() });
    assert!(!r.ok && !r.complete && r.violation_count == 0, "{}", r.render_text());
    assert!(r.notes.iter().any(|n| n.contains("si_work_max")), "{:?}", r.notes);
    // With the version order declared, no search and no budget.
    assert!(check_with(&of_records(&recs, true), Level::Si, &CheckOptions { si_work_max: 1, ..CheckOptions::default() }).ok);
}

#[test]
fn a_declared_order_needs_integer_values() {
    let mut header = Header::default();
    header.info.insert("version_order".into(), "\"values\"".into());
    let recs = vec![
        TxnRecord::new("c1", vec![causim_checkers::OpRecord::write("x", "a")]),
        TxnRecord::new("c2", vec![causim_checkers::OpRecord::read("x", "a"), causim_checkers::OpRecord::write("x", "b")]),
    ];
    let r = check(&History::from_records(Some(&header), &recs).unwrap(), Level::Si);
    assert!(r.ok, "{}", r.render_text());
    assert!(r.notes.iter().any(|n| n.contains("not an integer")), "{:?}", r.notes);
    header.info.insert("version_order".into(), "\"commit\"".into());
    let r = check(&History::from_records(Some(&header), &recs).unwrap(), Level::Si);
    assert!(r.ok && r.notes.iter().any(|n| n.contains("the one order si knows")), "{:?}", r.notes);
}

/// List-append histories (Jepsen's EDN): the orders the lists show are taken as given.
#[test]
fn list_append_histories() {
    let serial = r#"
{:type :ok, :f :txn, :process 0, :value [[:append 1 1] [:r 1 [1]]]}
{:type :ok, :f :txn, :process 1, :value [[:r 1 [1]] [:append 1 2] [:append 2 1]]}
{:type :ok, :f :txn, :process 0, :value [[:r 2 [1]] [:r 1 [1 2]]]}
"#;
    let h = causim_checkers::read_history(serial.as_bytes(), None).expect("valid EDN");
    assert!(check(&h, Level::Si).ok);
    // Both read [1] and appended: one of the appends missed the other.
    let lost = r#"
{:type :ok, :f :txn, :process 0, :value [[:append 1 1]]}
{:type :ok, :f :txn, :process 1, :value [[:r 1 [1]] [:append 1 2]]}
{:type :ok, :f :txn, :process 2, :value [[:r 1 [1]] [:append 1 3]]}
{:type :ok, :f :txn, :process 0, :value [[:r 1 [1 2 3]]]}
"#;
    let h = causim_checkers::read_history(lost.as_bytes(), None).expect("valid EDN");
    let r = check(&h, Level::Si);
    assert_eq!(names(&r), [Anomaly::LostUpdate], "{}", r.render_text());
}
