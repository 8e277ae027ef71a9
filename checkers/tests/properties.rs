//! Property tests against the oracle.
//!
//! * Histories of a serial execution pass every level.
//! * Causally consistent (non-serializable) histories pass `ccv` and `tcc`.
//! * A history with one injected anomaly (a stale or foreign value, a value from nowhere, an
//!   aborted or failed writer, reordered operations, a new `after` link) is caught at exactly
//!   the levels that forbid it: the checker's verdict equals the oracle's at every level.

mod common;

use causim_checkers::testgen::{GenParams, SplitMix64, causal_records, serial_records};
use causim_checkers::{CheckOptions, History, Key, Level, OpKind, Outcome, TxnRecord, Value, check, check_with};
use common::oracle::Oracle;
use proptest::prelude::*;

fn params(sessions: u32, txns: u32, ops: u32, keys: u64, reads: u32, seed: u64) -> GenParams {
    GenParams { sessions, txns_per_session: txns, ops_per_txn: ops, keys, read_per_mille: reads, seed }
}

fn agree(records: &[TxnRecord]) -> Result<(), TestCaseError> {
    let h = History::from_records(None, records).map_err(|e| TestCaseError::fail(format!("bad input: {e}")))?;
    let oracle = Oracle::new(records, &[]);
    for level in Level::UNTIMED {
        let report = check(&h, level);
        prop_assert!(report.complete, "the check at {level} must complete on a small history");
        prop_assert_eq!(
            report.ok,
            oracle.satisfies(level),
            "level {}: checker ok={} (first: {:?}), oracle disagrees, on\n{}",
            level,
            report.ok,
            report.violations.first().map(|v| v.anomaly),
            show(records)
        );
        // Recomputing the clocks of reads instead of storing them changes nothing.
        let lean = check_with(&h, level, &CheckOptions { clock_words_max: 0, ..CheckOptions::default() });
        prop_assert_eq!(lean.to_json(), report.to_json(), "level {}: stored vs recomputed clocks", level);
        // Whatever is reported must be forbidden by the level.
        for v in &report.violations {
            prop_assert!(level.forbids(v.anomaly), "{} reported at {level}", v.anomaly);
        }
    }
    Ok(())
}

fn show(records: &[TxnRecord]) -> String {
    let mut out = String::new();
    for r in records {
        let mark = match r.outcome {
            Outcome::Ok => "",
            Outcome::Aborted => "!",
            Outcome::Failed => "?",
        };
        let after = if r.after.is_empty() {
            String::new()
        } else {
            format!(" after {}", r.after.iter().map(u64::to_string).collect::<Vec<_>>().join(" "))
        };
        let ops: Vec<String> = r
            .ops
            .iter()
            .map(|o| {
                let f = if o.f == OpKind::Read { "r" } else { "w" };
                let v = match &o.value {
                    Value::Null => "_".to_string(),
                    v => v.to_string(),
                };
                format!("{f} {}={v}", o.key)
            })
            .collect();
        out.push_str(&format!("{}{mark}{after}: {}\n", r.session, ops.join(", ")));
    }
    out
}

/// Inject one anomaly-prone change, chosen by `rng`.
fn mutate(records: &mut [TxnRecord], rng: &mut SplitMix64) {
    let n = records.len();
    if n == 0 {
        return;
    }
    let reads: Vec<(usize, usize)> = (0..n)
        .flat_map(|t| (0..records[t].ops.len()).map(move |i| (t, i)))
        .filter(|(t, i)| records[*t].ops[*i].f == OpKind::Read)
        .collect();
    let writes: Vec<(usize, usize)> = (0..n)
        .flat_map(|t| (0..records[t].ops.len()).map(move |i| (t, i)))
        .filter(|(t, i)| records[*t].ops[*i].f == OpKind::Write)
        .collect();
    match rng.below(7) {
        // A read returns another write of its key, or the initial value.
        0 | 1 if !reads.is_empty() => {
            let (t, i) = reads[rng.below(reads.len() as u64) as usize];
            let key = records[t].ops[i].key.clone();
            let candidates: Vec<Value> =
                writes.iter().map(|(wt, wi)| &records[*wt].ops[*wi]).filter(|o| o.key == key).map(|o| o.value.clone()).collect();
            let pick = rng.below(candidates.len() as u64 + 1) as usize;
            records[t].ops[i].value = candidates.get(pick).cloned().unwrap_or(Value::Null);
        }
        // A read returns a value nobody wrote.
        2 if !reads.is_empty() => {
            let (t, i) = reads[rng.below(reads.len() as u64) as usize];
            records[t].ops[i].value = Value::Int(1_000_000);
        }
        // A transaction aborts or fails.
        3 => {
            let t = rng.below(n as u64) as usize;
            records[t].outcome = if rng.chance(500) { Outcome::Aborted } else { Outcome::Failed };
        }
        // Two operations of a transaction swap.
        4 => {
            let t = rng.below(n as u64) as usize;
            let len = records[t].ops.len();
            if len >= 2 {
                let a = rng.below(len as u64) as usize;
                let b = rng.below(len as u64) as usize;
                records[t].ops.swap(a, b);
            }
        }
        // A new program-order link from an earlier transaction.
        5 if n >= 2 => {
            let t = 1 + rng.below(n as u64 - 1) as usize;
            let a = rng.below(t as u64) as usize;
            let id = records[a].id.expect("generated records have ids");
            records[t].after.push(id);
        }
        // A read in a session sees a value from a write its session made later.
        _ if !reads.is_empty() => {
            let (t, i) = reads[rng.below(reads.len() as u64) as usize];
            let key = records[t].ops[i].key.clone();
            if let Some((wt, wi)) = writes.iter().rev().find(|(wt, wi)| *wt > t && records[*wt].ops[*wi].key == key) {
                records[t].ops[i].value = records[*wt].ops[*wi].value.clone();
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn serial_histories_pass_every_level(sessions in 1u32..5, txns in 1u32..5, ops in 1u32..4, keys in 1u64..4, reads in 0u32..1000, seed in any::<u64>()) {
        let records = serial_records(&params(sessions, txns, ops, keys, reads, seed));
        let h = History::from_records(None, &records).unwrap();
        for level in Level::UNTIMED {
            let report = check(&h, level);
            prop_assert!(report.ok, "serial history fails {}: {:?}\n{}", level, report.violations.first().map(|v| &v.sentence), show(&records));
        }
        agree(&records)?;
    }

    #[test]
    fn causal_histories_pass_ccv_and_tcc(sessions in 2u32..5, txns in 1u32..6, ops in 1u32..4, keys in 1u64..4, reads in 200u32..900, sync in 0u32..1000, seed in any::<u64>()) {
        let records = causal_records(&params(sessions, txns, ops, keys, reads, seed), sync);
        let h = History::from_records(None, &records).unwrap();
        for level in [Level::Cc, Level::Ccv, Level::Session, Level::Rc, Level::Ra, Level::Tcc] {
            let report = check(&h, level);
            prop_assert!(report.ok, "causal history fails {}: {:?}\n{}", level, report.violations.first().map(|v| &v.sentence), show(&records));
        }
        agree(&records)?;
    }

    #[test]
    fn one_injected_anomaly_is_caught_exactly_where_forbidden(sessions in 1u32..7, txns in 1u32..7, ops in 1u32..5, keys in 1u64..5, reads in 100u32..900, seed in any::<u64>(), causal in any::<bool>()) {
        let p = params(sessions, txns, ops, keys, reads, seed);
        let mut records = if causal { causal_records(&p, 400) } else { serial_records(&p) };
        let mut rng = SplitMix64::new(seed ^ 0xA5A5);
        mutate(&mut records, &mut rng);
        // A mutation may repeat a written value; such histories are invalid input, not anomalies.
        prop_assume!(History::from_records(None, &records).is_ok());
        agree(&records)?;
    }

    #[test]
    fn several_injected_anomalies_are_judged_as_the_oracle_does(sessions in 1u32..7, txns in 1u32..7, ops in 1u32..5, keys in 1u64..5, reads in 100u32..900, seed in any::<u64>(), causal in any::<bool>(), mutations in 2usize..5) {
        let p = params(sessions, txns, ops, keys, reads, seed);
        let mut records = if causal { causal_records(&p, 400) } else { serial_records(&p) };
        let mut rng = SplitMix64::new(seed ^ 0x5A5A);
        for _ in 0..mutations {
            mutate(&mut records, &mut rng);
        }
        prop_assume!(History::from_records(None, &records).is_ok());
        agree(&records)?;
    }
}

#[test]
fn integer_and_string_keys_differ() {
    // "1" and 1 are different keys: the read of key 1 sees nothing written.
    let records = vec![
        TxnRecord::new("c1", vec![causim_checkers::OpRecord::write(Key::Str("1".into()), Value::Int(5))]).with_id(0),
        TxnRecord::new("c2", vec![causim_checkers::OpRecord::read(Key::Int(1), Value::Int(5))]).with_id(1),
    ];
    let h = History::from_records(None, &records).unwrap();
    let report = check(&h, Level::WellFormed);
    assert_eq!(report.violations[0].anomaly.name(), "ThinAirRead");
}
