//! Multi-function transactions (`causim-history/2`): operations carry their function (`fn`) and
//! the transaction the order between functions (`fn_after`). Internal consistency is judged
//! along that partial order, not the listed one.

use causim_checkers::{Anomaly, ExportFormat, InputFormat, Level, check, read_history, write_history};

/// A fan-out workflow as one transaction: source 0, branches 1 and 2, join 3.
const FAN: &str = r#""fn_after":[[0,1],[0,2],[1,3],[2,3]]"#;

fn history(lines: &[String]) -> causim_checkers::History {
    let text = format!("{{\"format\":\"causim-history/2\"}}\n{}\n", lines.join("\n"));
    read_history(text.as_bytes(), Some(InputFormat::Causim)).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn txn(id: u64, session: &str, ops: &str, order: &str) -> String {
    let order = if order.is_empty() { String::new() } else { format!(",{order}") };
    format!(r#"{{"id":{id},"session":"{session}","ops":[{ops}]{order}}}"#)
}

/// Anomalies reported at `tcc`, by name.
fn anomalies(h: &causim_checkers::History) -> Vec<&'static str> {
    check(h, Level::Tcc).counts.keys().map(|a| a.name()).collect()
}

#[test]
fn a_branch_does_not_see_its_concurrent_siblings_write() {
    // Branch 1 writes x=2; branch 2, concurrent, reads the x=1 committed before: fine. Listed in
    // time order, the write comes first, which a total order would call NotMyOwnWrite.
    let ops = r#"{"f":"w","key":"x","value":2,"fn":1},{"f":"r","key":"x","value":1,"fn":2}"#;
    let h = history(&[txn(0, "a", r#"{"f":"w","key":"x","value":1}"#, ""), txn(1, "w1", ops, FAN)]);
    assert_eq!(anomalies(&h), Vec::<&str>::new());
    assert!(check(&h, Level::Tcc).ok);
    // The same line without its function order (a `/1` line) is totally ordered.
    let total = r#"{"f":"w","key":"x","value":2},{"f":"r","key":"x","value":1}"#;
    let h1 = history(&[txn(0, "a", r#"{"f":"w","key":"x","value":1}"#, ""), txn(1, "w1", total, "")]);
    assert_eq!(anomalies(&h1), ["NotMyOwnWrite"]);
}

#[test]
fn a_successor_that_misses_its_predecessors_write_is_not_my_own_write() {
    // The source wrote x=2; the join (after both branches) reads the older x=1.
    let ops = r#"{"f":"w","key":"x","value":2,"fn":0},{"f":"r","key":"y","value":null,"fn":1},{"f":"r","key":"x","value":1,"fn":3}"#;
    let h = history(&[txn(0, "a", r#"{"f":"w","key":"x","value":1}"#, ""), txn(1, "w1", ops, FAN)]);
    assert_eq!(anomalies(&h), ["NotMyOwnWrite"]);
    let report = check(&h, Level::Tcc);
    let text = report.violations[0].render_text(1);
    assert!(text.contains("the write in function 0, which the reading function 3 follows"), "{text}");
}

#[test]
fn reading_a_concurrent_siblings_write_is_a_sibling_write_read() {
    let ops = r#"{"f":"w","key":"x","value":2,"fn":1},{"f":"r","key":"x","value":2,"fn":2}"#;
    let h = history(&[txn(0, "w1", ops, FAN)]);
    for level in [Level::Rc, Level::Tcc, Level::Cc, Level::WellFormed] {
        assert_eq!(check(&h, level).counts.keys().copied().collect::<Vec<_>>(), [Anomaly::SiblingWriteRead], "{level}");
    }
    let text = check(&h, Level::Tcc).violations[0].render_text(1);
    assert!(text.contains("in function 2, a value its function 1 wrote"), "{text}");
    // Listed after the read, the sibling's write is still a sibling's, not a future one.
    let later = r#"{"f":"r","key":"x","value":2,"fn":2},{"f":"w","key":"x","value":2,"fn":1}"#;
    assert_eq!(anomalies(&history(&[txn(0, "w1", later, FAN)])), ["SiblingWriteRead"]);
    // A read that precedes the write it returns is a future read.
    let future = r#"{"f":"r","key":"x","value":2,"fn":0},{"f":"w","key":"x","value":2,"fn":1}"#;
    assert_eq!(anomalies(&history(&[txn(0, "w1", future, FAN)])), ["FutureRead"]);
}

#[test]
fn the_join_reads_and_commits_the_last_listed_of_concurrent_writes() {
    // Both branches write x; the fan-in keeps the one listed last (x=3).
    let writes = r#"{"f":"w","key":"x","value":2,"fn":1},{"f":"w","key":"x","value":3,"fn":2}"#;
    let join_reads = |v: u64| format!(r#"{writes},{{"f":"r","key":"x","value":{v},"fn":3}}"#);
    assert_eq!(anomalies(&history(&[txn(0, "w1", &join_reads(3), FAN)])), Vec::<&str>::new());
    assert_eq!(anomalies(&history(&[txn(0, "w1", &join_reads(2), FAN)])), ["NotMyLastWrite"]);
    // Each branch reads its own write.
    let own = format!(r#"{writes},{{"f":"r","key":"x","value":2,"fn":1}}"#);
    assert_eq!(anomalies(&history(&[txn(0, "w1", &own, FAN)])), Vec::<&str>::new());
    // A later transaction must read the final write, not the one the join dropped.
    let reader = |v: u64| txn(1, "r", &format!(r#"{{"f":"r","key":"x","value":{v}}}"#), "");
    assert_eq!(anomalies(&history(&[txn(0, "w1", writes, FAN), reader(3)])), Vec::<&str>::new());
    assert_eq!(anomalies(&history(&[txn(0, "w1", writes, FAN), reader(2)])), ["IntermediateRead"]);
}

#[test]
fn two_branches_reading_one_key_from_different_snapshots_is_non_repeatable() {
    let ops = r#"{"f":"r","key":"x","value":1,"fn":1},{"f":"r","key":"x","value":2,"fn":2}"#;
    let h = history(&[
        txn(0, "a", r#"{"f":"w","key":"x","value":1}"#, ""),
        txn(1, "a", r#"{"f":"w","key":"x","value":2}"#, ""),
        txn(2, "w1", ops, FAN),
    ]);
    assert!(anomalies(&h).contains(&"NonRepeatableRead"), "{:?}", anomalies(&h));
    // As if the branches ran one after the other: the function order changes nothing here.
    let total = r#"{"f":"r","key":"x","value":1},{"f":"r","key":"x","value":2}"#;
    let h1 = history(&[
        txn(0, "a", r#"{"f":"w","key":"x","value":1}"#, ""),
        txn(1, "a", r#"{"f":"w","key":"x","value":2}"#, ""),
        txn(2, "w1", total, ""),
    ]);
    assert_eq!(anomalies(&h), anomalies(&h1));
}

#[test]
fn malformed_function_orders_are_input_errors_naming_the_line() {
    let read = |text: &str| read_history(text.as_bytes(), Some(InputFormat::Causim)).map(|_| ()).unwrap_err().to_string();
    let head = "{\"format\":\"causim-history/2\"}\n";
    let cycle = read(&format!("{head}{}\n", txn(0, "w", r#"{"f":"r","key":"x","value":null,"fn":0}"#, r#""fn_after":[[0,1],[1,0]]"#)));
    assert_eq!(cycle, "line 2: fn_after: the function order has a cycle through function 0");
    let gap = read(&format!("{head}{}\n", txn(0, "w", r#"{"f":"r","key":"x","value":null,"fn":0},{"f":"r","key":"y","value":null}"#, "")));
    assert!(gap.starts_with("line 2: ops[1]: missing field `fn`"), "{gap}");
    let listing = read(&format!(
        "{head}{}\n",
        txn(0, "w", r#"{"f":"r","key":"x","value":null,"fn":3},{"f":"r","key":"y","value":null,"fn":0}"#, FAN)
    ));
    assert!(listing.starts_with("line 2: ops[1] (function 0) is listed after ops[0] (function 3)"), "{listing}");
    let shape = read(&format!("{head}{}\n", txn(0, "w", r#"{"f":"r","key":"x","value":null,"fn":0}"#, r#""fn_after":[[0]]"#)));
    assert!(shape.starts_with("line 2: fn_after[0]: expected a pair of functions"), "{shape}");
    let op_fn = read(&format!("{head}{}\n", txn(0, "w", r#"{"f":"r","key":"x","value":null,"fn":"a"}"#, "")));
    assert!(op_fn.starts_with("line 2: ops[0].fn: expected a function index"), "{op_fn}");
    let version = read("{\"format\":\"causim-history/3\"}\n");
    assert!(version.contains("expected \"causim-history/2\" (or \"causim-history/1\")"), "{version}");
}

#[test]
fn export_keeps_the_order_in_causim_and_refuses_a_total_order_that_would_change_the_verdict() {
    let sibling = r#"{"f":"w","key":"x","value":2,"fn":1},{"f":"r","key":"x","value":1,"fn":2}"#;
    let h = history(&[txn(0, "a", r#"{"f":"w","key":"x","value":1}"#, ""), txn(1, "w1", sibling, FAN)]);
    let mut out = Vec::new();
    write_history(&h, ExportFormat::Causim, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("{\"format\":\"causim-history/2\"}"), "{text}");
    assert!(text.contains(r#""fn":1"#) && text.contains(r#""fn_after":[[0,1],[0,2],[1,3],[2,3]]"#), "{text}");
    let again = read_history(text.as_bytes(), None).unwrap();
    assert_eq!(anomalies(&again), Vec::<&str>::new());
    for format in [ExportFormat::Dbcop, ExportFormat::Plume] {
        let err = write_history(&h, format, &mut Vec::new()).unwrap_err().to_string();
        assert!(err.contains("line 3: ops[0] (function 1) and ops[1] (function 2) of key x are concurrent"), "{err}");
    }
    // Branches that touch different keys linearise faithfully: exported in listed order.
    let apart = r#"{"f":"w","key":"x","value":2,"fn":1},{"f":"r","key":"y","value":null,"fn":2}"#;
    let h = history(&[txn(0, "w1", apart, FAN)]);
    let mut out = Vec::new();
    write_history(&h, ExportFormat::Plume, &mut out).unwrap();
    assert!(!out.is_empty());
}
