//! Interop: reading dbcop JSON, Plume text and Elle/Jepsen JSON; writing dbcop and Plume;
//! round trips that keep every verdict.

mod common;

use causim_checkers::testgen::{GenParams, causal_records, serial_records};
use causim_checkers::{ExportFormat, History, InputFormat, Level, Outcome, check, detect_format, read_history, write_history};
use common::litmus_table::catalogue;

fn export(h: &History, format: ExportFormat) -> Vec<u8> {
    let mut out = Vec::new();
    write_history(h, format, &mut out).unwrap();
    out
}

fn verdicts(h: &History) -> Vec<(Level, bool, Vec<String>)> {
    Level::ALL
        .iter()
        .map(|l| {
            let r = check(h, *l);
            (*l, r.ok, r.counts.iter().map(|(a, n)| format!("{a}x{n}")).collect())
        })
        .collect()
}

/// Histories every format can carry: committed transactions only, no `after` links.
fn portable_histories() -> Vec<(String, History)> {
    let mut out = Vec::new();
    for lit in catalogue() {
        let records = common::records(lit.history);
        if records.iter().any(|r| r.outcome != Outcome::Ok || !r.after.is_empty()) {
            continue;
        }
        out.push((lit.name.to_string(), History::from_records(None, &records).unwrap()));
    }
    for seed in 0..6 {
        let p = GenParams { sessions: 3, txns_per_session: 6, ops_per_txn: 3, keys: 3, read_per_mille: 500, seed };
        out.push((format!("serial {seed}"), History::from_records(None, &serial_records(&p)).unwrap()));
        out.push((format!("causal {seed}"), History::from_records(None, &causal_records(&p, 300)).unwrap()));
    }
    out
}

#[test]
fn dbcop_round_trip_keeps_every_verdict() {
    for (name, h) in portable_histories() {
        if !check(&h, Level::WellFormed).counts.keys().all(|a| a.name() != "ThinAirRead") {
            continue; // dbcop has no way to say "a value nobody wrote": it is invalid input there
        }
        let bytes = export(&h, ExportFormat::Dbcop);
        assert_eq!(detect_format(&bytes), Some(InputFormat::Dbcop), "{name}");
        let back = read_history(&bytes[..], None).unwrap_or_else(|e| panic!("{name}: {e}\n{}", String::from_utf8_lossy(&bytes)));
        assert_eq!(back.txn_count(), h.txn_count(), "{name}");
        assert_eq!(back.op_count(), h.op_count(), "{name}");
        assert_eq!(verdicts(&back), verdicts(&h), "{name}");
        // And once more: the export of the re-read history is identical.
        assert_eq!(export(&back, ExportFormat::Dbcop), bytes, "{name}");
    }
}

#[test]
fn plume_round_trip_keeps_every_verdict() {
    for (name, h) in portable_histories() {
        let bytes = export(&h, ExportFormat::Plume);
        if bytes.is_empty() {
            continue;
        }
        assert_eq!(detect_format(&bytes), Some(InputFormat::Plume), "{name}");
        let back = read_history(&bytes[..], None).unwrap_or_else(|e| panic!("{name}: {e}\n{}", String::from_utf8_lossy(&bytes)));
        assert_eq!(back.op_count(), h.op_count(), "{name}");
        assert_eq!(verdicts(&back), verdicts(&h), "{name}");
        assert_eq!(export(&back, ExportFormat::Plume), bytes, "{name}");
    }
}

#[test]
fn dbcop_bincode_round_trip_keeps_every_verdict_and_outcome() {
    for (name, h) in portable_histories() {
        let bytes = export(&h, ExportFormat::DbcopBincode);
        assert_eq!(detect_format(&bytes), Some(InputFormat::DbcopBincode), "{name}");
        let back = read_history(&bytes[..], None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.txn_count(), h.txn_count(), "{name}");
        assert_eq!(back.op_count(), h.op_count(), "{name}");
        assert_eq!(verdicts(&back), verdicts(&h), "{name}");
        assert_eq!(export(&back, ExportFormat::DbcopBincode), bytes, "{name}");
    }
    // Aborted transactions keep their outcome (success: false).
    let h = common::history("c1!: w x=1\nc2: r x=1");
    let back = read_history(&export(&h, ExportFormat::DbcopBincode)[..], None).unwrap();
    assert_eq!(back.records().next().unwrap().outcome, Outcome::Aborted);
    assert_eq!(verdicts(&back), verdicts(&h));
}

#[test]
fn plume_round_trip_keeps_aborted_transactions() {
    // Aborted transactions are written with Plume's id -1 and read back as aborted.
    let h = common::history("c1!: w x=1, w y=1\nc2: r x=1\nc1: w x=2");
    let bytes = export(&h, ExportFormat::Plume);
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.starts_with("w(0,1,0,-1)\nw(1,1,0,-1)\n"), "{text}");
    let back = read_history(&bytes[..], None).unwrap();
    let outcomes: Vec<Outcome> = back.records().map(|r| r.outcome).collect();
    assert_eq!(outcomes, [Outcome::Aborted, Outcome::Ok, Outcome::Ok]);
    assert_eq!(verdicts(&back), verdicts(&h));
    assert_eq!(export(&back, ExportFormat::Plume), bytes);
}

#[test]
fn list_append_histories_are_not_exported() {
    let h = read_history("{:type :ok, :process 0, :value [[:append :x 1] [:r :x [1]]]}".as_bytes(), None).unwrap();
    let mut out = Vec::new();
    let e = write_history(&h, ExportFormat::Plume, &mut out).unwrap_err();
    assert!(e.to_string().starts_with("cannot export a list-append history as plume"), "{e}");
    assert!(out.is_empty());
}

#[test]
fn causim_round_trip_is_exact() {
    for lit in catalogue() {
        let h = common::history(lit.history);
        let bytes = export(&h, ExportFormat::Causim);
        let back = read_history(&bytes[..], None).unwrap();
        let a: Vec<_> = h.records().collect();
        let b: Vec<_> = back.records().collect();
        assert_eq!(a, b, "{}", lit.name);
        assert_eq!(verdicts(&back), verdicts(&h), "{}", lit.name);
    }
}

#[test]
fn dbcop_examples_from_its_documentation() {
    // Two sessions: the second reads what the first wrote.
    let raw = r#"[[{"events":[{"Write":{"variable":0,"version":1}}],"committed":true}],
                  [{"events":[{"Read":{"variable":0,"version":1}}],"committed":true}]]"#;
    let h = read_history(raw.as_bytes(), None).unwrap();
    assert_eq!(h.format(), InputFormat::Dbcop);
    assert!(check(&h, Level::Tcc).ok);
    // Write skew, wrapped as `dbcop generate` writes it: allowed under TCC.
    let wrapped = r#"{"params":{"id":0,"n_node":2,"n_variable":2,"n_transaction":2,"n_event":2},"info":"generated",
        "start":"2025-01-01T00:00:00+00:00","end":"2025-01-01T00:00:01+00:00","data":[
        [{"events":[{"Write":{"variable":0,"version":1}},{"Write":{"variable":1,"version":2}}],"committed":true},
         {"events":[{"Read":{"variable":1,"version":2}},{"Write":{"variable":0,"version":3}}],"committed":true}],
        [{"events":[{"Read":{"variable":0,"version":1}},{"Write":{"variable":1,"version":4}}],"committed":true}]]}"#;
    let h = read_history(wrapped.as_bytes(), None).unwrap();
    assert_eq!(h.session_count(), 2);
    for level in Level::UNTIMED {
        assert!(check(&h, level).ok, "{level}");
    }
}

#[test]
fn dbcop_initial_versions_and_unwritten_reads() {
    // Version 0 and null both read the initial state when nobody writes version 0.
    let h = read_history(
        r#"[[{"events":[{"Read":{"variable":0,"version":0}},{"Read":{"variable":1,"version":null}}],"committed":true}]]"#.as_bytes(),
        None,
    )
    .unwrap();
    assert!(check(&h, Level::Tcc).ok);
    // A read of a version nobody wrote is invalid input for dbcop (and so for us, in this format).
    let e = read_history(r#"[[{"events":[{"Read":{"variable":0,"version":7}}],"committed":true}]]"#.as_bytes(), None).unwrap_err();
    assert!(e.problem.contains("session 1, transaction 1, event 1: reads a version that no transaction writes"), "{e}");
    // An uncommitted transaction is aborted: reading it is AbortedRead.
    let h = read_history(
        r#"[[{"events":[{"Write":{"variable":0,"version":1}}],"committed":false}],[{"events":[{"Read":{"variable":0,"version":1}}],"committed":true}]]"#.as_bytes(),
        None,
    )
    .unwrap();
    assert_eq!(check(&h, Level::WellFormed).violations[0].anomaly.name(), "AbortedRead");
    // Bad JSON names the line.
    let e = read_history("[[\n{\"events\":[{\"Reed\":{}}],\"committed\":true}]]".as_bytes(), Some(InputFormat::Dbcop)).unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
}

#[test]
fn plume_text_reads_with_initial_zero_and_thin_air() {
    let text = "w(1,5,0,10)\nw(2,6,0,10)\nr(1,5,1,11)\nr(2,0,1,11)\n";
    let h = read_history(text.as_bytes(), None).unwrap();
    assert_eq!(h.format(), InputFormat::Plume);
    assert_eq!((h.txn_count(), h.session_count()), (2, 2));
    // Reading 2=0 (initial) after reading 1=5 of the transaction that wrote 2=6 as well.
    assert_eq!(check(&h, Level::Rc).violations[0].anomaly.name(), "NonMonoReadCO");
    assert!(check(&h, Level::Cc).ok);
    // Converted to the causim format, the initial 0s become declared initial values.
    let mut causim_text = Vec::new();
    write_history(&h, ExportFormat::Causim, &mut causim_text).unwrap();
    let back = read_history(&causim_text[..], None).unwrap();
    assert_eq!(verdicts(&back), verdicts(&h));
    assert!(
        String::from_utf8_lossy(&causim_text).starts_with("{\"format\":\"causim-history/1\",\"initial\":[[2,0]]}"),
        "{}",
        String::from_utf8_lossy(&causim_text)
    );
    // An unwritten non-zero value is ThinAirRead, as in Plume.
    let h = read_history("r(1,9,0,1)\n".as_bytes(), None).unwrap();
    assert_eq!(check(&h, Level::WellFormed).violations[0].anomaly.name(), "ThinAirRead");
    // Errors name the line.
    let e = read_history("w(1,5,0,10)\nw(1,x,0,10)\n".as_bytes(), None).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.problem.contains("value: expected a non-negative integer"), "{e}");
    let e = read_history("w(1,5,0,10)\nw(2,6,0,11)\nw(3,7,0,10)\n".as_bytes(), None).unwrap_err();
    assert!(e.problem.contains("transaction 10 continues here after other transactions' lines"), "{e}");
}

#[test]
fn elle_rw_register_histories() {
    // Array form with invoke/completion pairs, keywords with colons, a nemesis op, a failed
    // and an indeterminate transaction.
    let array = r#"[
      {"type":"invoke","f":"txn","process":0,"time":10,"value":[["w","x",1],["w","y",1]]},
      {"type":"invoke","f":"txn","process":1,"time":11,"value":[["r","y",null],["r","x",null]]},
      {"type":":ok","f":":txn","process":0,"time":20,"value":[[":w","x",1],[":w","y",1]]},
      {"type":"info","f":"start-partition","process":"nemesis","time":21,"value":null},
      {"type":"ok","f":"txn","process":1,"time":30,"value":[["r","y",1],["r","x",null]]},
      {"type":"invoke","f":"txn","process":2,"time":31,"value":[["w","x",2]]},
      {"type":"fail","f":"txn","process":2,"time":32,"value":[["w","x",2]]},
      {"type":"invoke","f":"txn","process":3,"time":33,"value":[["w","z",3]]}
    ]"#;
    let h = read_history(array.as_bytes(), None).unwrap();
    assert_eq!(h.format(), InputFormat::Elle);
    let records: Vec<_> = h.records().collect();
    assert_eq!(records.len(), 4);
    assert_eq!((records[0].session.as_str(), records[0].invoke_ns, records[0].complete_ns), ("p0", Some(10), Some(20)));
    assert_eq!(records[2].outcome, Outcome::Aborted);
    assert_eq!(records[3].outcome, Outcome::Failed);
    // Process 1 read y=1, then the initial x, although one transaction wrote both.
    assert_eq!(check(&h, Level::Rc).violations[0].anomaly.name(), "NonMonoReadCO");
    // The same, one op per line.
    let lines = array.trim().trim_start_matches('[').trim_end_matches(']').replace("},\n", "}\n");
    let h2 = read_history(lines.as_bytes(), None).unwrap();
    assert_eq!(h2.records().collect::<Vec<_>>().len(), 4);
    // A history mixing rw-register and list-append micro-operations is refused, located.
    let e = read_history(
        r#"[{"type":"ok","process":0,"value":[["append","x",1]]},{"type":"ok","process":0,"value":[["w","y",2]]}]"#.as_bytes(),
        None,
    )
    .unwrap_err();
    assert!(e.problem.starts_with("operation #1: value[0]"), "{e}");
    assert!(e.problem.contains("mixing the two are not supported"), "{e}");
}

#[test]
fn format_detection() {
    assert_eq!(detect_format(b"{\"format\":\"causim-history/1\"}\n"), Some(InputFormat::Causim));
    assert_eq!(detect_format(b"{\"session\":\"c\",\"ops\":[]}"), Some(InputFormat::Causim));
    assert_eq!(detect_format(b"  [[{\"events\":[]}]]"), Some(InputFormat::Dbcop));
    assert_eq!(detect_format(b"{\n  \"params\": {},\n  \"data\": []\n}"), Some(InputFormat::Dbcop));
    assert_eq!(detect_format(b"[{\"type\":\"ok\"}]"), Some(InputFormat::Elle));
    assert_eq!(detect_format(b"{\"type\":\"invoke\",\"process\":0}\n"), Some(InputFormat::Elle));
    assert_eq!(detect_format(b"r(1,2,3,4)\n"), Some(InputFormat::Plume));
    assert_eq!(detect_format(b"{:type :invoke, :f :txn, :value [[:append 1 2]]}\n"), Some(InputFormat::JepsenEdn));
    assert_eq!(detect_format(b"[{:index 0 :type :ok}]"), Some(InputFormat::JepsenEdn));
    assert_eq!(detect_format(b"; T1\n{:index 10}"), Some(InputFormat::JepsenEdn));
    assert_eq!(detect_format(b"#jepsen.history.Op{:index 0}"), Some(InputFormat::JepsenEdn));
    assert_eq!(detect_format(b""), Some(InputFormat::Causim));
    assert_eq!(detect_format(b"hello"), None);
}
