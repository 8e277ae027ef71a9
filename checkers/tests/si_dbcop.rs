//! `si` against dbcop's snapshot-isolation check on shared cases.
//!
//! dbcop (<https://github.com/rnbguy/dbcop>, commit `b4af1b7e8357a7baf784531ac63456c7ee57b428`,
//! Biswas & Enea's tool) was built here by hand (`cargo build --release -p dbcop_cli`) and run
//! on the histories of `tests/data/dbcop-si/cases/`, which the ignored test below writes in dbcop's
//! JSON format:
//!
//! ```text
//! CAUSIM_WRITE_SI_CASES=1 cargo test --release -p causim-checkers --test si_dbcop -- --ignored
//! dbcop verify --input-dir checkers/tests/data/dbcop-si/cases --consistency snapshot-isolation --json \
//!   | python3 -c 'import sys, json; [print(o["file"], "PASS" if o["ok"] else "FAIL") for o in map(json.loads, sys.stdin)]' \
//!   | sort > checkers/tests/data/dbcop-si/verdicts.txt
//! ```
//!
//! The cases: dbcop's own level-boundary histories (`crates/core/tests/consistency_hierarchy.rs`),
//! the classic SI anomalies and allowed shapes, and histories of the simulated SI store of
//! `testgen::si_records`, as generated and with one read changed to another committed value of
//! its key. The test needs neither dbcop nor the network: the verdicts are committed.

mod common;

use causim_checkers::testgen::{GenParams, SplitMix64, si_records};
use causim_checkers::{ExportFormat, History, Level, OpKind, Outcome, TxnRecord, Value, check, read_history_path, write_history};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn dir() -> PathBuf {
    [env!("CARGO_MANIFEST_DIR"), "tests", "data", "dbcop-si"].iter().collect()
}

fn cases_dir() -> PathBuf {
    dir().join("cases")
}

/// dbcop's `consistency_hierarchy.rs` boundary histories, and the classic shapes.
const LITMUS: [(&str, &str); 14] = [
    ("dbcop-below-committed-read", "c1!: w x=1\nc2: r x=1"),
    ("dbcop-committed-read-to-repeatable-read", "c1: w x=1\nc2: w x=2\nc3: r x=1, r x=2"),
    ("dbcop-repeatable-read-to-atomic-read", "c1: w x=1, w y=1\nc2: r y=1, w x=2, w z=1\nc3: r x=1, r z=1"),
    (
        "dbcop-atomic-read-to-causal",
        "c1: w x=1, w a=1\nc2: r x=1, w y=1\nc3: r y=1, w z=1\nc4: r z=1, w a=2\nc5: r a=2, w p=1\nc6: r p=1, w q=1\nc7: r q=1, r a=1",
    ),
    ("dbcop-causal-to-prefix", "c1: w x=1, w y=1\nc2: r x=1, w x=2\nc3: r y=1, w y=2\nc4: r x=2, r y=1\nc5: r y=2, r x=1"),
    ("dbcop-prefix-to-snapshot-isolation", "c1: w x=1\nc2: r x=1, w x=2\nc3: r x=1, w x=3"),
    ("dbcop-snapshot-isolation-to-serializable", "c1: w x=1, w y=1\nc2: r x=1, w y=2\nc3: r y=1, w x=2"),
    (
        "dbcop-passes-serializable",
        "c1: w x=1, w y=1, w z=1\nc2: r x=1, w y=2, r z=1, w x=2\nc3: r y=2, w z=2, r x=2, w y=3\nc4: r z=2, r x=2, r y=3",
    ),
    ("write-skew", "c1: w x=1, w y=1\nc2: r x=1, r y=1, w x=2\nc3: r x=1, r y=1, w y=2"),
    ("lost-update", "c1: w x=1\nc2: r x=1, w x=2\nc3: r x=1, w x=3"),
    ("fractured-read", "c1: w x=1, w y=1\nc2: w x=2, w y=2\nc3: r x=1, r y=1\nc4: r x=2, r y=1"),
    ("read-skew", "c1: w x=1, w y=1\nc2: r x=1, w x=2\nc3: r x=2, w y=2\nc4: r y=2, r x=1"),
    ("concurrent-writers", "c1: w x=1, w y=1, w z=1\nc2: r y=1, w y=2, w x=2\nc3: r z=1, r y=1, w x=3\nc4: r x=3, r y=2"),
    ("long-fork", "c1: w x=1, w y=1\nc2: r x=1, w x=2\nc3: r y=1, w y=2\nc4: r x=2, r y=1\nc5: r x=1, r y=2"),
];

/// Generated cases: (name, records). dbcop refuses a transaction's read of its own write (as an
/// "uncommitted write") and fails a transaction that reads one version twice (as a
/// committed-read cycle: `[w x=1] | [r x=1, r x=1]` fails its `committed-read`), and it counts
/// an uncommitted transaction's writes in its SI check (`[r x=null, w x=2] | [r x=null, w x=3]!`
/// fails `snapshot-isolation`): so internal and repeated reads and aborted transactions are left
/// out; none of them matters to SI.
fn generated() -> Vec<(String, Vec<TxnRecord>)> {
    let mut out = Vec::new();
    for seed in 0..60u64 {
        let p = GenParams {
            sessions: 3 + (seed % 3) as u32,
            txns_per_session: 5,
            ops_per_txn: 3,
            keys: 3 + seed % 3,
            read_per_mille: 450,
            seed,
        };
        let mut recs = si_records(&p);
        recs.retain(|r| r.outcome == Outcome::Ok);
        for rec in &mut recs {
            let mut touched = Vec::new();
            rec.ops.retain(|o| {
                let again = o.f == OpKind::Read && touched.contains(&o.key);
                touched.push(o.key.clone());
                !again
            });
        }
        if seed % 2 == 0 {
            out.push((format!("gen-{seed:02}"), recs));
            continue;
        }
        // Change one committed read to another value its key had (a committed write, or the initial one).
        let mut rng = SplitMix64::new(seed);
        let mut written: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for rec in recs.iter().filter(|r| r.outcome == Outcome::Ok) {
            for op in rec.ops.iter().filter(|o| o.f == OpKind::Write) {
                written.entry(op.key.to_string()).or_insert_with(|| vec![Value::Null]).push(op.value.clone());
            }
        }
        let reads: Vec<(usize, usize)> = (0..recs.len())
            .filter(|&t| recs[t].outcome == Outcome::Ok)
            .flat_map(|t| (0..recs[t].ops.len()).map(move |i| (t, i)))
            .filter(|&(t, i)| recs[t].ops[i].f == OpKind::Read && !recs[t].ops[..i].iter().any(|o| o.key == recs[t].ops[i].key))
            .collect();
        if let Some(&(t, i)) = reads.get(rng.below(reads.len().max(1) as u64) as usize) {
            let values = &written[&recs[t].ops[i].key.to_string()];
            recs[t].ops[i].value = values[rng.below(values.len() as u64) as usize].clone();
        }
        out.push((format!("mut-{seed:02}"), recs));
    }
    out
}

fn cases() -> Vec<(String, History)> {
    let mut out: Vec<(String, History)> =
        LITMUS.iter().map(|(name, text)| (name.to_string(), History::from_records(None, &common::records(text)).unwrap())).collect();
    for (name, recs) in generated() {
        out.push((name, History::from_records(None, &recs).unwrap()));
    }
    out
}

#[test]
#[ignore = "writes the fixtures; run by hand (see the module doc)"]
fn write_cases() {
    if std::env::var("CAUSIM_WRITE_SI_CASES").as_deref() != Ok("1") {
        return;
    }
    for (name, h) in cases() {
        std::fs::create_dir_all(cases_dir()).unwrap();
        let file = std::fs::File::create(cases_dir().join(format!("{name}.json"))).unwrap();
        write_history(&h, ExportFormat::Dbcop, file).unwrap();
    }
}

#[test]
fn si_agrees_with_dbcop() {
    let verdicts = std::fs::read_to_string(dir().join("verdicts.txt")).expect("tests/data/dbcop-si/verdicts.txt");
    let mut compared = 0;
    let mut disagreements = Vec::new();
    for line in verdicts.lines() {
        let (file, verdict) = line.split_once(' ').expect("`file PASS|FAIL`");
        let h = read_history_path(&cases_dir().join(file), None).unwrap_or_else(|e| panic!("{file}: {e}"));
        let r = check(&h, Level::Si);
        assert!(r.complete, "{file}: no verdict");
        if r.ok != (verdict == "PASS") {
            disagreements.push(format!("{file}: dbcop {verdict}, si {}", r.render_text()));
        }
        compared += 1;
    }
    assert_eq!(compared, LITMUS.len() + generated().len(), "every case has dbcop's verdict");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
