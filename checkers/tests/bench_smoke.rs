//! The benchmark's path in miniature (the benchmark itself runs with `cargo bench`): generate a
//! serial history, write it as JSON Lines, read it back, check it — it must pass.

use causim_checkers::testgen::{GenParams, serial, write_serial_jsonl};
use causim_checkers::{Level, check, read_history_path};

#[test]
fn generated_histories_pass_through_file_and_check() {
    let p = GenParams { sessions: 25, txns_per_session: 20, ops_per_txn: 20, keys: 500, read_per_mille: 500, seed: 42 };
    let direct = serial(&p);
    assert_eq!((direct.txn_count(), direct.op_count()), (500, 10_000));
    let path = std::env::temp_dir().join(format!("causim-bench-smoke-{}.jsonl", std::process::id()));
    write_serial_jsonl(&p, std::fs::File::create(&path).unwrap()).unwrap();
    let parsed = read_history_path(&path, None).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(parsed.records().collect::<Vec<_>>().len(), direct.txn_count());
    for level in [Level::Tcc, Level::Ccv, Level::Session] {
        for h in [&direct, &parsed] {
            let report = check(h, level);
            assert!(report.ok, "{level}: {:?}", report.violations.first().map(|v| &v.sentence));
        }
    }
}
