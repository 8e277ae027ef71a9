//! Malformed or inconsistent histories are input errors that name the line and the problem —
//! never a panic. A read of a value nobody wrote is not an input error in the causim format:
//! it is the anomaly ThinAirRead.

use causim_checkers::{InputFormat, Level, check, read_history};

const HEADER: &str = r#"{"format":"causim-history/1"}"#;

/// (what, history text, expected line, expected fragment of the problem)
const CASES: &[(&str, &str, u64, &str)] = &[
    (
        "truncated line",
        "{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":\"x\",\"value\":1}]}\n{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":\"x\",\"va",
        2,
        "is the line truncated?",
    ),
    ("not JSON", "{\"session\":\"c1\",\"ops\":[]}\nhello\n", 2, "malformed JSON at column 1"),
    ("not an object", "[1,2]", 1, "expected a transaction object, found an array"),
    ("session not a string", "{\"session\":5,\"ops\":[]}", 1, "session: expected a string, found the number 5"),
    ("missing session", "{\"ops\":[]}", 1, "missing field `session`"),
    ("missing ops", "{\"session\":\"c1\"}", 1, "missing field `ops`"),
    ("ops not an array", "{\"session\":\"c1\",\"ops\":{}}", 1, "ops: expected an array of operations, found an object"),
    (
        "bad op kind",
        "{\"session\":\"c1\",\"ops\":[{\"f\":\"x\",\"key\":\"k\",\"value\":1}]}",
        1,
        "ops[0].f: expected \"r\" or \"w\", found the string \"x\"",
    ),
    (
        "float key",
        "{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":1.5,\"value\":1}]}",
        1,
        "ops[0].key: expected a string or a 64-bit integer key, found 1.5",
    ),
    (
        "boolean value",
        "{\"session\":\"c1\",\"ops\":[{\"f\":\"r\",\"key\":\"k\",\"value\":true}]}",
        1,
        "ops[0].value: expected an integer, a string or null, found true",
    ),
    ("missing value", "{\"session\":\"c1\",\"ops\":[{\"f\":\"r\",\"key\":\"k\"}]}", 1, "ops[0]: missing field `value`"),
    (
        "write of null",
        "{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":\"k\",\"value\":null}]}",
        1,
        "ops[0].value: a write's value must not be null",
    ),
    ("negative id", "{\"id\":-1,\"session\":\"c1\",\"ops\":[]}", 1, "id: expected a non-negative integer, found the number -1"),
    (
        "bad outcome",
        "{\"session\":\"c1\",\"outcome\":\"maybe\",\"ops\":[]}",
        1,
        "outcome: expected \"ok\", \"aborted\" or \"failed\", found the string \"maybe\"",
    ),
    (
        "repeated written value",
        "{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":\"x\",\"value\":1}]}\n{\"session\":\"c2\",\"ops\":[{\"f\":\"w\",\"key\":\"x\",\"value\":1}]}",
        2,
        "DuplicateWrite: x=1 is written twice (also at line 1)",
    ),
    (
        "repeated id",
        "{\"id\":4,\"session\":\"c1\",\"ops\":[]}\n{\"id\":4,\"session\":\"c2\",\"ops\":[]}",
        2,
        "transaction id 4 is also used at line 1",
    ),
    (
        "after a later id",
        "{\"id\":0,\"session\":\"c1\",\"after\":[1],\"ops\":[]}\n{\"id\":1,\"session\":\"c2\",\"ops\":[]}",
        1,
        "after: id 1 does not refer to an earlier transaction line",
    ),
    ("after not ids", "{\"session\":\"c1\",\"after\":[\"a\"],\"ops\":[]}", 1, "after[0]: expected a transaction id"),
    ("half an interval", "{\"session\":\"c1\",\"invoke_ns\":5,\"ops\":[]}", 1, "invoke_ns and complete_ns must be given together"),
    (
        "interval backwards",
        "{\"session\":\"c1\",\"invoke_ns\":9,\"complete_ns\":5,\"ops\":[]}",
        1,
        "invoke_ns 9 is later than complete_ns 5",
    ),
    (
        "late header",
        "{\"session\":\"c1\",\"ops\":[]}\n{\"format\":\"causim-history/1\"}",
        2,
        "a header (a line with `format`) may only be the first line",
    ),
    ("unknown format", "{\"format\":\"causim-history/9\"}", 1, "format: unsupported history format \"causim-history/9\""),
    (
        "bad initial",
        "{\"format\":\"causim-history/1\",\"initial\":{\"x\":[1]}}",
        1,
        "initial.x: expected an integer, a string or null, found an array",
    ),
    (
        "written initial value",
        "{\"format\":\"causim-history/1\",\"initial\":{\"x\":0}}\n{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":\"x\",\"value\":0}]}",
        2,
        "DuplicateWrite: x=0 is written, but it is also the initial value declared at line 1",
    ),
    (
        "huge integer",
        "{\"session\":\"c1\",\"ops\":[{\"f\":\"w\",\"key\":\"x\",\"value\":18446744073709551615}]}",
        1,
        "ops[0].value: expected an integer, a string or null, found 18446744073709551615",
    ),
];

#[test]
fn each_bad_history_is_an_error_naming_its_line_and_problem() {
    let mut failures = Vec::new();
    for (what, text, line, fragment) in CASES {
        match read_history(text.as_bytes(), Some(InputFormat::Causim)) {
            Ok(_) => failures.push(format!("{what}: accepted")),
            Err(e) => {
                if e.line != Some(*line) || !e.problem.contains(fragment) {
                    failures.push(format!("{what}: got {e:?}, expected line {line} and {fragment:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn file_errors_name_the_file() {
    let path = std::env::temp_dir().join("causim-bad-input-test.jsonl");
    std::fs::write(&path, "{\"session\":\"c1\",\"ops\":[]}\n{\"session\":").unwrap();
    let e = causim_checkers::read_history_path(&path, None).unwrap_err();
    let shown = e.to_string();
    assert!(shown.starts_with(&format!("{}:2: ", path.display())), "{shown}");
    let missing = causim_checkers::read_history_path(std::path::Path::new("/nonexistent/h.jsonl"), None).unwrap_err();
    assert!(missing.to_string().starts_with("/nonexistent/h.jsonl: cannot open"), "{missing}");
}

#[test]
fn a_read_of_an_unwritten_value_is_an_anomaly_not_an_error() {
    let text = format!("{HEADER}\n{{\"session\":\"c1\",\"ops\":[{{\"f\":\"r\",\"key\":\"x\",\"value\":3}}]}}\n");
    let h = read_history(text.as_bytes(), None).expect("valid input");
    let report = check(&h, Level::WellFormed);
    assert_eq!(report.violations[0].anomaly.name(), "ThinAirRead");
    // A read of null is the initial state; with a declared initial value, that value is.
    let text = "{\"format\":\"causim-history/1\",\"initial\":[[\"x\",0],[7,\"a\"]]}\n{\"session\":\"c1\",\"ops\":[{\"f\":\"r\",\"key\":\"x\",\"value\":0},{\"f\":\"r\",\"key\":7,\"value\":\"a\"},{\"f\":\"r\",\"key\":\"y\",\"value\":null}]}\n";
    let h = read_history(text.as_bytes(), None).expect("valid input");
    assert!(check(&h, Level::Tcc).ok);
}

#[test]
fn blank_lines_and_unknown_fields_are_fine() {
    let text = format!(
        "{HEADER}\n\n{{\"session\":\"c1\",\"extra\":{{\"a\":[1]}},\"ops\":[{{\"f\":\"w\",\"key\":\"x\",\"value\":1,\"version\":{{\"vc\":[1,2]}},\"node\":\"S0\"}}]}}\n   \n"
    );
    let h = read_history(text.as_bytes(), None).expect("valid input");
    assert_eq!(h.txn_count(), 1);
}

#[test]
fn random_bytes_never_panic() {
    // Mangle a valid history in many ways: every outcome is Ok or an error, never a panic.
    let base = format!(
        "{HEADER}\n{}\n{}\n",
        r#"{"id":0,"session":"c1","after":[],"invoke_ns":1,"complete_ns":2,"ops":[{"f":"w","key":"x","value":1},{"f":"r","key":"y","value":null}]}"#,
        r#"{"id":1,"session":"c2","after":[0],"outcome":"failed","ops":[{"f":"r","key":"x","value":1},{"f":"w","key":7,"value":"s"}]}"#
    );
    let bytes = base.as_bytes();
    let mut rng = causim_checkers::testgen::SplitMix64::new(5);
    for _ in 0..3000 {
        let mut b = bytes.to_vec();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(b.len() as u64) as usize;
            match rng.below(3) {
                0 => b[i] = b"{}[]\",:0123456789nulltrefas-\n\\"[rng.below(29) as usize],
                1 => {
                    b.remove(i);
                }
                _ => b.truncate(i),
            }
            if b.is_empty() {
                break;
            }
        }
        for format in [None, Some(InputFormat::Causim), Some(InputFormat::Dbcop), Some(InputFormat::Plume), Some(InputFormat::Elle)] {
            if let Ok(h) = read_history(&b[..], format) {
                for level in Level::ALL {
                    let _ = check(&h, level).render_text();
                }
            }
        }
    }
}

#[test]
fn mangled_jepsen_dbcop_bincode_and_cobra_histories_never_panic() {
    let edn = "{:type :invoke, :f :txn, :process 0, :time 1, :value [[:append 1 1] [:r 2 nil]]}\n\
               {:type :ok, :f :txn, :process 0, :time 2, :value [[:append 1 1] [:r 2 [3]]]}\n\
               {:type :ok, :f :txn, :process 1, :value [[:append 2 3] [:r 1 [1]] [:append 1 2]]}\n\
               {:type :fail, :f :txn, :process 2, :value [[:append 1 9]]}\n\
               {:type :ok, :f :txn, :process 3, :value [[:r 1 [1 2]] [:r 1 [1 2]]]}\n";
    let bincode = std::fs::read(format!("{}/tests/data/plume-taps/dbcop/tap-h.bincode", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let cobra = std::fs::read(format!("{}/tests/data/plume-taps/cobra/tap-h/T2.log", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let mut rng = causim_checkers::testgen::SplitMix64::new(11);
    for base in [edn.as_bytes(), &bincode[..], &cobra[..]] {
        for _ in 0..1500 {
            let mut b = base.to_vec();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len() as u64) as usize;
                match rng.below(3) {
                    0 => b[i] = b"{}[]:# \\\"0123456789nil\x00\x01\xff-\n;"[rng.below(25) as usize],
                    1 => {
                        b.remove(i);
                    }
                    _ => b.truncate(i),
                }
                if b.is_empty() {
                    break;
                }
            }
            for format in
                [None, Some(InputFormat::JepsenEdn), Some(InputFormat::DbcopBincode), Some(InputFormat::Elle), Some(InputFormat::Cobra)]
            {
                if let Ok(h) = read_history(&b[..], format) {
                    for level in Level::ALL {
                        let _ = check(&h, level).render_text();
                    }
                }
            }
        }
    }
}

#[test]
fn dbcop_bincode_errors_name_the_byte_and_the_place() {
    let bytes = std::fs::read(format!("{}/tests/data/plume-taps/dbcop/tap-h.bincode", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let e = read_history(&bytes[..bytes.len() - 3], Some(InputFormat::DbcopBincode)).unwrap_err();
    assert!(e.problem.starts_with("dbcop bincode, byte"), "{e}");
    assert!(e.problem.contains("truncated"), "{e}");
    let mut huge = bytes.clone();
    huge[40..48].copy_from_slice(&u64::MAX.to_le_bytes()); // the info text's length
    let e = read_history(&huge[..], Some(InputFormat::DbcopBincode)).unwrap_err();
    assert!(e.problem.contains("info: a length of 18446744073709551615 does not fit"), "{e}");
    let e = read_history(b"r(1,2,3,4)".as_slice(), Some(InputFormat::DbcopBincode)).unwrap_err();
    assert!(e.problem.starts_with("dbcop bincode, byte 8: params.n_node: the file ends here"), "{e}");
}
