//! The report depends only on the history and the level: not on threads, not on the run.

use causim_checkers::testgen::{GenParams, SplitMix64, causal_records};
use causim_checkers::{CheckOptions, History, Level, OpKind, Value, check_with};

fn medium_history_with_anomalies() -> History {
    let p = GenParams { sessions: 6, txns_per_session: 600, ops_per_txn: 4, keys: 40, read_per_mille: 600, seed: 9 };
    let mut records = causal_records(&p, 300);
    // Make a few reads return the initial value: stale reads of several kinds.
    let mut rng = SplitMix64::new(3);
    for _ in 0..40 {
        let t = rng.below(records.len() as u64) as usize;
        for op in &mut records[t].ops {
            if op.f == OpKind::Read {
                op.value = Value::Null;
                break;
            }
        }
    }
    History::from_records(None, &records).unwrap()
}

#[test]
fn reports_do_not_depend_on_threads_or_runs() {
    let h = medium_history_with_anomalies();
    assert!(h.txn_count() >= 2_000, "large enough for the parallel scan");
    for level in [Level::Rc, Level::Ra, Level::Tcc, Level::Ccv, Level::Session] {
        let opts = |threads, clock_words_max| CheckOptions { threads, clock_words_max, ..CheckOptions::default() };
        let one = check_with(&h, level, &opts(1, usize::MAX)).to_json();
        let three = check_with(&h, level, &opts(3, usize::MAX)).to_json();
        let again = check_with(&h, level, &opts(3, usize::MAX)).to_json();
        let recomputed = check_with(&h, level, &opts(3, 0)).to_json();
        let some = check_with(&h, level, &opts(1, 5_000)).to_json();
        assert_eq!(one, three, "{level}: one thread vs three");
        assert_eq!(three, again, "{level}: two runs");
        assert_eq!(one, recomputed, "{level}: stored clocks vs recomputed ones");
        assert_eq!(one, some, "{level}: some clocks stored");
        if matches!(level, Level::Tcc | Level::Ccv) {
            assert!(one.contains("\"ok\": false"), "{level}: the injected stale reads are found");
        }
    }
}
