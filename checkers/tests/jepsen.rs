//! Jepsen histories: EDN as Jepsen writes it and JSON as Elle's tools do, for rw-register and
//! list-append workloads. List-append reads are reads of their last element, and the order of
//! appends the lists show joins the write-order checks (see `src/lists.rs`).

use causim_checkers::{History, InputFormat, Level, Outcome, check, read_history, read_history_path};
use std::path::Path;

fn edn(text: &str) -> History {
    read_history(text.as_bytes(), Some(InputFormat::JepsenEdn)).unwrap_or_else(|e| panic!("{e}"))
}

fn data(name: &str) -> History {
    let path = format!("{}/tests/data/jepsen/{name}", env!("CARGO_MANIFEST_DIR"));
    read_history_path(Path::new(&path), None).unwrap_or_else(|e| panic!("{e}"))
}

/// Every anomaly each level reports, `+`-joined, in `Level::ALL` order (`-`: none).
fn verdicts(h: &History) -> Vec<String> {
    Level::ALL
        .iter()
        .map(|l| {
            let names: Vec<String> = check(h, *l).counts.keys().map(|a| a.to_string()).collect();
            if names.is_empty() { "-".into() } else { names.join("+") }
        })
        .collect()
}

/// The verdicts as `level=anomalies` for the levels that report something.
fn failing(h: &History) -> String {
    Level::ALL.iter().zip(verdicts(h)).filter(|(_, v)| v != "-").map(|(l, v)| format!("{l}={v}")).collect::<Vec<_>>().join(" ")
}

const REGISTER_EDN: &str = r#"
{:type :invoke, :f :txn, :process 0, :time 10, :value [[:w :x 1] [:w :y 1]], :index 0}
{:type :invoke, :f :txn, :process 1, :time 11, :value [[:r :y nil] [:r :x nil]], :index 1}
{:type :ok, :f :txn, :process 0, :time 20, :value [[:w :x 1] [:w :y 1]], :index 2}
{:type :info, :f :start-partition, :process :nemesis, :time 21, :value :majority, :index 3}
{:type :ok, :f :txn, :process 1, :time 30, :value [[:r :y 1] [:r :x nil]], :index 4}
{:type :invoke, :f :txn, :process 2, :time 31, :value [[:w :x 2]], :index 5}
{:type :fail, :f :txn, :process 2, :time 32, :value [[:w :x 2]], :error [:aborted "conflict"], :index 6}
{:type :invoke, :f :txn, :process 3, :time 33, :value [[:w :z 3]], :index 7}
"#;

const REGISTER_JSON: &str = r#"[
  {"type":"invoke","f":"txn","process":0,"time":10,"value":[["w","x",1],["w","y",1]]},
  {"type":"invoke","f":"txn","process":1,"time":11,"value":[["r","y",null],["r","x",null]]},
  {"type":"ok","f":"txn","process":0,"time":20,"value":[["w","x",1],["w","y",1]]},
  {"type":"info","f":"start-partition","process":"nemesis","time":21,"value":"majority"},
  {"type":"ok","f":"txn","process":1,"time":30,"value":[["r","y",1],["r","x",null]]},
  {"type":"invoke","f":"txn","process":2,"time":31,"value":[["w","x",2]]},
  {"type":"fail","f":"txn","process":2,"time":32,"value":[["w","x",2]]},
  {"type":"invoke","f":"txn","process":3,"time":33,"value":[["w","z",3]]}
]"#;

#[test]
fn an_rw_register_history_reads_the_same_from_edn_and_json() {
    let e = edn(REGISTER_EDN);
    let j = read_history(REGISTER_JSON.as_bytes(), None).unwrap();
    assert_eq!(e.format(), InputFormat::JepsenEdn);
    assert_eq!(j.format(), InputFormat::Elle);
    let (re, rj): (Vec<_>, Vec<_>) = (e.records().collect(), j.records().collect());
    assert_eq!(re, rj);
    assert_eq!(re.len(), 4);
    assert_eq!(re[0].session, "p0");
    assert_eq!((re[0].invoke_ns, re[0].complete_ns), (Some(10), Some(20)));
    assert_eq!(re[2].outcome, Outcome::Aborted);
    assert_eq!(re[3].outcome, Outcome::Failed, "an invocation without completion is indeterminate");
    assert_eq!(verdicts(&e), verdicts(&j));
    // Process 1 read y=1, then the initial x, although one transaction wrote both.
    assert_eq!(check(&e, Level::Rc).violations[0].anomaly.name(), "NonMonoReadCO");
    // Detected without naming the format; also as one vector of operations.
    let wrapped = format!("[{}]", REGISTER_EDN);
    let w = read_history(wrapped.as_bytes(), None).unwrap();
    assert_eq!(w.format(), InputFormat::JepsenEdn);
    assert_eq!(w.records().collect::<Vec<_>>(), re);
}

/// A serial list-append history: two processes append and read in turn.
const SERIAL_LISTS: &str = r#"
{:type :invoke, :f :txn, :process 0, :value [[:append 1 1] [:r 1 nil]]}
{:type :ok, :f :txn, :process 0, :value [[:append 1 1] [:r 1 [1]]]}
{:type :invoke, :f :txn, :process 1, :value [[:r 1 nil] [:append 1 2] [:append 2 1]]}
{:type :ok, :f :txn, :process 1, :value [[:r 1 [1]] [:append 1 2] [:append 2 1]]}
{:type :invoke, :f :txn, :process 0, :value [[:r 2 nil] [:r 1 nil]]}
{:type :ok, :f :txn, :process 0, :value [[:r 2 [1]] [:r 1 [1 2]]]}
{:type :invoke, :f :txn, :process 1, :value [[:append 1 3]]}
{:type :info, :f :txn, :process 1, :value [[:append 1 3]], :error :timeout}
"#;

#[test]
fn list_reads_are_reads_of_their_last_element_and_a_serial_history_passes_everywhere() {
    let h = edn(SERIAL_LISTS);
    let records: Vec<_> = h.records().collect();
    assert_eq!(records.len(), 4);
    // [:r 1 [1 2]] reads the value of `append 1 2`.
    assert_eq!(records[2].ops[1].value, causim_checkers::Value::Int(2));
    assert_eq!(records[3].outcome, Outcome::Failed);
    assert!(verdicts(&h).iter().all(|v| v == "-"), "{}", failing(&h));
    let report = check(&h, Level::Tcc);
    assert!(report.notes.iter().any(|n| n.contains("list-append")), "{:?}", report.notes);
}

#[test]
fn reads_that_are_not_prefixes_of_one_another_are_incompatible_where_one_order_is_required() {
    // Two readers see the concurrent appends 1 and 2 in opposite orders.
    let h = edn(r#"
{:type :ok, :process 0, :value [[:append :x 1]]}
{:type :ok, :process 1, :value [[:append :x 2]]}
{:type :ok, :process 2, :value [[:r :x [1 2]]]}
{:type :ok, :process 3, :value [[:r :x [2 1]]]}
"#);
    assert_eq!(
        failing(&h),
        "ccv=IncompatibleOrder rc=IncompatibleOrder ra=IncompatibleOrder tcc=IncompatibleOrder linearizable=IncompatibleOrder"
    );
    let v = &check(&h, Level::Tcc).violations[0];
    assert_eq!(v.sentence, "transaction 3 (session p3) read x=[2 1], but transaction 2 read x=[1 2]: neither is a prefix of the other.");
    // A list holding an element twice.
    let h = edn("{:type :ok, :process 0, :value [[:append :x 1] [:r :x [1 1]]]}");
    assert!(failing(&h).contains("tcc=IncompatibleOrder"), "{}", failing(&h));
}

#[test]
fn the_order_the_lists_show_joins_the_write_order_checks() {
    // Process 0 appends 1, then 2; a reader sees [2 1]: the list order contradicts causality.
    let h = edn(r#"
{:type :ok, :process 0, :value [[:append :x 1]]}
{:type :ok, :process 0, :value [[:append :x 2]]}
{:type :ok, :process 1, :value [[:r :x [2 1]]]}
"#);
    assert_eq!(failing(&h), "ccv=CyclicCF rc=NonMonoReadCM ra=NonMonoReadCM tcc=NonMonoReadCM");
    let text = check(&h, Level::Tcc).render_text();
    assert!(text.contains("a list in which append(x, 2) comes before append(x, 1)"), "{text}");
    // A reader whose list misses an append it has seen through causality: process 1 reads
    // [1 2] (so appends 1 and 2 happened), then process 2, after reading y from process 1's
    // later transaction, reads x as [1] — a stale state.
    let h = edn(r#"
{:type :ok, :process 0, :value [[:append :x 1]]}
{:type :ok, :process 0, :value [[:append :x 2]]}
{:type :ok, :process 1, :value [[:r :x [1 2]]]}
{:type :ok, :process 1, :value [[:append :y 1]]}
{:type :ok, :process 2, :value [[:r :y [1]] [:r :x [1]]]}
"#);
    assert_eq!(check(&h, Level::Tcc).violations[0].anomaly.name(), "COConflictCM");
    // An append no read returned comes after everything read: a reader that has it in its
    // causal past but reads a list without it is stale, even though no read shows its place.
    let h = edn(r#"
{:type :ok, :process 0, :value [[:append :x 1]]}
{:type :ok, :process 1, :value [[:r :x [1]] [:append :x 2] [:append :y 1]]}
{:type :ok, :process 2, :value [[:r :y [1]]]}
{:type :ok, :process 2, :value [[:r :x [1]]]}
"#);
    assert_eq!(
        failing(&h),
        "monotonic-writes=NonMonotonicWrite session=NonMonotonicWrite cc=WriteCORead ccv=WriteCORead cm=WriteCORead tcc=COConflictCM"
    );
    let h = edn(r#"
{:type :ok, :process 0, :value [[:append :x 1]]}
{:type :ok, :process 1, :value [[:append :x 2]]}
{:type :ok, :process 1, :value [[:append :y 1]]}
{:type :ok, :process 2, :value [[:r :y [1]] [:r :x [1]]]}
"#);
    // Process 2 saw process 1's later transaction, so append 2 is in its causal past; its read
    // [1] is a state without 2, though 2 comes after 1 (no read shows 2: it is last). Read
    // atomic does not see through process 1's session, so only the causal levels object.
    assert_eq!(failing(&h), "ccv=CyclicCF tcc=ConflictCM");
}

#[test]
fn timed_single_append_histories_are_judged_at_linearizable() {
    // Append 2 completed (t=30) before the read began (t=40), which still saw only [1]: no
    // level ignoring real time objects, linearizable reports a stale read in list terms.
    let h = edn(r#"
{:type :invoke, :f :txn, :process 0, :time 0, :value [[:append :x 1]]}
{:type :ok, :f :txn, :process 0, :time 10, :value [[:append :x 1]]}
{:type :invoke, :f :txn, :process 1, :time 20, :value [[:append :x 2]]}
{:type :ok, :f :txn, :process 1, :time 30, :value [[:append :x 2]]}
{:type :invoke, :f :txn, :process 2, :time 40, :value [[:r :x nil]]}
{:type :ok, :f :txn, :process 2, :time 50, :value [[:r :x [1]]]}
"#);
    assert_eq!(failing(&h), "linearizable=StaleRead");
    let report = check(&h, Level::Linearizable);
    assert!(report.complete);
    assert_eq!(
        report.violations[0].sentence,
        "session p2's read of x returned [1] at [40, 50], after append(x, 2) (session p1) had completed at 30; that write was invoked at 20, after append(x, 1) had completed at 10."
    );
    // Overlapping, so either order is fine: linearizable passes.
    let h = edn(r#"
{:type :invoke, :f :txn, :process 0, :time 0, :value [[:append :x 1]]}
{:type :invoke, :f :txn, :process 1, :time 5, :value [[:append :x 2]]}
{:type :ok, :f :txn, :process 0, :time 30, :value [[:append :x 1]]}
{:type :ok, :f :txn, :process 1, :time 30, :value [[:append :x 2]]}
{:type :invoke, :f :txn, :process 2, :time 40, :value [[:r :x nil]]}
{:type :ok, :f :txn, :process 2, :time 50, :value [[:r :x [2 1]]]}
"#);
    let report = check(&h, Level::Linearizable);
    assert!(report.ok, "{}", report.render_text());
}

#[test]
fn every_element_of_a_list_must_come_from_a_committed_earlier_append() {
    let h = edn(r#"
{:type :fail, :process 0, :value [[:append :x 1]]}
{:type :ok, :process 1, :value [[:append :x 2]]}
{:type :ok, :process 2, :value [[:r :x [1 2]]]}
"#);
    assert!(verdicts(&h).iter().all(|v| v == "AbortedRead"), "{}", failing(&h));
    let h = edn(r#"
{:type :ok, :process 1, :value [[:append :x 2]]}
{:type :ok, :process 2, :value [[:r :x [7 2]]]}
"#);
    assert!(verdicts(&h).iter().all(|v| v == "ThinAirRead"), "{}", failing(&h));
    let v = &check(&h, Level::WellFormed).violations[0];
    assert_eq!(v.sentence, "session p2 read x=[7 2] in transaction 1, but no transaction appended 7 to x.");
    let h = edn(r#"
{:type :ok, :process 1, :value [[:append :x 2]]}
{:type :ok, :process 2, :value [[:r :x [2 3]] [:append :x 3]]}
"#);
    assert!(verdicts(&h).iter().all(|v| v == "FutureRead"), "{}", failing(&h));
}

#[test]
fn transcribed_histories_of_elle_and_plume() {
    // Elle's G2 example: allowed at every level here (no serializability level).
    let h = data("elle-si-without-g-single.edn");
    assert_eq!(h.txn_count(), 4);
    assert!(verdicts(&h).iter().all(|v| v == "-"), "{}", failing(&h));
    // Elle's paper example has no :process: one session, whose later transaction reads 255
    // without the 8 its earlier transaction appended.
    let h = data("elle-paper-example.edn");
    assert_eq!(h.session_count(), 1);
    assert_eq!(check(&h, Level::Tcc).violations[0].anomaly.name(), "FracturedReadCO");
    // Plume's list-append TAP cases read as their text-format twins do.
    for (tap, want) in [("b", "AbortedRead"), ("d", "NotMyOwnWrite"), ("h", "NonMonoReadCO")] {
        let h = data(&format!("plume-tap-{tap}.edn"));
        assert_eq!(check(&h, Level::Tcc).violations[0].anomaly.name(), want, "TAP-{tap}");
    }
    let h = data("plume-tap-j.edn");
    assert_eq!(verdicts(&h)[12], "NotMyOwnWrite+NonRepeatableRead");
    assert!(check(&h, Level::RcPlume).ok);
}

#[test]
fn bad_jepsen_histories_are_located_errors() {
    let cases = [
        ("{:type :ok, :process 0, :value [[:r :x [1]]]}\n{:type :ok :process 0 :value [[:w :x 1]]}", "line 2: value[0]: a rw-register"),
        (
            "{:type :ok, :process 0, :value [[:r :x [1]]]}\n{:type :done, :process 0}",
            "line 2: :type: expected :invoke, :ok, :fail or :info, found :done",
        ),
        ("{:type :ok, :process 0, :value [[:inc :x 1]]}", "line 1: :value[0]: expected :r, :w or :append, found :inc"),
        ("{:type :ok, :process 0, :value [[:append :x 1.5]]}", "line 1: :value[0]: value: the number 1.5 is not a 64-bit integer"),
        ("{:type :ok, :process 0, :value [[:append :x 1]]}\n{:type :ok, :process 0, :value [[:append :x 1]]}", "line 2: DuplicateWrite"),
        ("{:type :ok, :process 0,\n :value [[:append :x 1]", "line 2: EDN, column"),
        (
            "{:type :invoke, :process 0, :value []}\n{:type :invoke, :process 0, :value []}",
            "line 2: process 0 invokes again before its previous invocation (line 1) completed",
        ),
        ("[1 2]", "line 1: expected an operation map"),
    ];
    for (text, want) in cases {
        let e = read_history(text.as_bytes(), Some(InputFormat::JepsenEdn)).unwrap_err();
        assert!(e.to_string().starts_with(want), "{text:?}: got {e}");
    }
}
